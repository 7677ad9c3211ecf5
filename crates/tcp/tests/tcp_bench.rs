//! Throughput of the endpoint pair (run with `cargo test --release -p rantcp-tcp --test
//! tcp_bench -- --ignored --nocapture`). Not a correctness test.

mod common;
use common::*;
use rantcp_core::{Rng, Time};

#[test]
#[ignore]
fn bench_bulk_transfer_events_per_second() {
    for (sack, loss) in [(true, 0.0), (true, 0.001), (false, 0.001)] {
        let mut c = cfg(sack);
        c.mss = 1448;
        c.rcv_buf_bytes = 8 << 20;
        c.snd_buf_bytes = 8 << 20;
        let l = if loss > 0.0 {
            Loss::Random(Rng::new(5, 1), loss)
        } else {
            Loss::None
        };
        let mut p = Pair::new(c.clone(), c, dms(10), 1_000_000_000, l);
        p.keep_log = false;
        p.run_until(ms(50));
        let total: u64 = 500_000_000;
        let mut queued = 0;
        let mut t = p.now;
        let wall = std::time::Instant::now();
        while p.delivered_to_server_app < total {
            queued += p.c.send(total - queued);
            t += dms(50);
            p.run_until(t);
            assert!(t < Time::from_secs(3600));
        }
        let secs = wall.elapsed().as_secs_f64();
        eprintln!(
            "sack={sack} loss={loss}: {} events in {:.3} s wall = {:.1} M events/s; sim {} ; rtx {} rto {}",
            p.events,
            secs,
            p.events as f64 / secs / 1e6,
            p.now,
            p.c.stats().retrans_segments,
            p.c.stats().rtos
        );
    }
}
