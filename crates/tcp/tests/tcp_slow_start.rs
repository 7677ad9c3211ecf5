//! Slow start at the endpoint on p2p-bulk's path (50 Mbit/s, 20 ms one way, a 1-BDP drop-tail
//! queue of 250 000 bytes): where each slow-start variant leaves slow start, and what that costs
//! in queue drops (issue 10 defect 3).

mod common;
use common::*;
use rantcp_core::Time;
use rantcp_tcp::cc::{CcKind, Hystart};
use rantcp_tcp::TcpConfig;

/// Run CUBIC over the path until slow start ends (ssthresh set) or `until`; returns
/// (exit time, cwnd at exit in segments, queue drops up to then).
fn slow_start_exit(ccfg: TcpConfig, until: Time) -> Option<(Time, u64, u64)> {
    let mk_rx = TcpConfig {
        rcv_buf_bytes: 6 << 20,
        ..cfg(true)
    };
    let mut p = Pair::new(ccfg, mk_rx, dms(20), 50_000_000, Loss::None);
    p.keep_log = false;
    p.queue_limit_bytes = Some(250_000);
    p.run_until(ms(100));
    p.c.send(64 << 20);
    let mut t = p.now;
    while t < until {
        t += dms(1);
        p.run_until(t);
        let i = p.c.info();
        if i.ssthresh != u64::MAX {
            return Some((t, i.ssthresh / 1448, p.queue_drops));
        }
    }
    None
}

fn cubic(hystart: Hystart) -> TcpConfig {
    TcpConfig {
        mss: 1448,
        cc: CcKind::Cubic,
        snd_buf_bytes: 64 << 20,
        rcv_buf_bytes: 6 << 20,
        hystart,
        ..TcpConfig::linux()
    }
}

#[test]
fn test_linux_hystart_exits_before_the_queue_overflows() {
    // Linux's default CUBIC slow start (HyStart, tcp_cubic.c: ACK train + delay) leaves slow
    // start before the 1-BDP queue (172 segments) fills; the path's BDP is 172 segments too.
    let (t, cwnd, drops) =
        slow_start_exit(cubic(Hystart::Classic), Time::from_secs(5)).expect("slow start ends");
    assert_eq!(
        drops, 0,
        "slow start overflowed the queue (exit at cwnd {cwnd} at {t})"
    );
    assert!((86..344).contains(&cwnd), "exit at cwnd {cwnd}");
}

#[test]
fn test_standard_slow_start_and_hystart_plus_plus_overflow_a_one_bdp_queue() {
    // Without HyStart the first loss ends slow start. HyStart++ (RFC 9406 §4.2, as specified)
    // enters CSS below the BDP, but on this unpaced ACK-clocked path CSS's slower growth lets the
    // queue drain between bursts, so the next round's minimum RTT falls below the CSS baseline
    // and the spurious-exit rule resumes slow start; it alternates until the queue overflows.
    // Its delay signal comes from the previous round's packets; Linux's ACK-train test does not
    // need a queue to build.
    for h in [Hystart::Off, Hystart::PlusPlus] {
        let (_, cwnd, drops) = slow_start_exit(cubic(h), Time::from_secs(5)).expect("exit");
        assert!(drops > 100, "{h:?}: {drops} drops, exit at cwnd {cwnd}");
        assert!(cwnd > 172, "{h:?}: exit at cwnd {cwnd}");
    }
}
