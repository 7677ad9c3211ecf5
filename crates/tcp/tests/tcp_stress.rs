//! Randomised end-to-end runs (seeded, deterministic): random configs, loss in both
//! directions, reordering, bidirectional data, slow readers and closes. Every run must deliver
//! every byte in order and end with both sides closed; the endpoint's debug-build scoreboard
//! invariants are checked on every ACK.

mod common;
use common::*;
use rantcp_core::{Duration, Rng, Time};
use rantcp_tcp::{cc::CcKind, State, TcpConfig};

fn random_cfg(r: &mut Rng) -> TcpConfig {
    let mut c = cfg(r.bernoulli(0.5));
    c.mss = [536, 1000, 1448][r.below(3) as usize];
    c.timestamps = r.bernoulli(0.5);
    c.window_scaling = r.bernoulli(0.7);
    c.rcv_buf_bytes = [8_000, 64_000, 300_000, 4_000_000][r.below(4) as usize];
    c.snd_buf_bytes = [16_000, 200_000, 4_000_000][r.below(3) as usize];
    c.delayed_ack = r.bernoulli(0.7);
    c.delack_timeout = Duration::from_millis([40, 200][r.below(2) as usize]);
    c.min_rto = Duration::from_millis([200, 1000][r.below(2) as usize]);
    c.cc = CcKind::ALL[r.below(4) as usize];
    c.pacing = r.bernoulli(0.3);
    c.initial_cwnd_segments = [1, 4, 10][r.below(3) as usize];
    c
}

#[test]
fn stress_random_runs_complete() {
    for seed in 0..60u64 {
        let mut r = Rng::new(seed, 99);
        let ccfg = random_cfg(&mut r);
        let mut scfg = random_cfg(&mut r);
        scfg.sack = ccfg.sack || r.bernoulli(0.5);
        let loss = [0.0, 0.005, 0.02, 0.08][r.below(4) as usize];
        let delay = Duration::from_millis(1 + r.below(60));
        let rate = [2_000_000u64, 20_000_000, 200_000_000][r.below(3) as usize];
        let l = if loss > 0.0 { Loss::Random(Rng::new(seed, 7), loss) } else { Loss::None };
        let mut p = Pair::new(ccfg.clone(), scfg.clone(), delay, rate, l);
        let jitter = if r.bernoulli(0.4) { Duration::from_millis(1 + r.below(20)) } else { Duration::ZERO };
        if jitter.0 > 0 {
            p.jitter = Some((Rng::new(seed, 8), jitter));
        }
        p.keep_log = false;
        p.server_reads = false;
        let up = 1 + r.below(600_000);
        let down = if r.bernoulli(0.5) { r.below(300_000) } else { 0 };
        let read_chunk = [1_000u64, 50_000, u64::MAX][r.below(3) as usize];
        let (mut sent_up, mut sent_down, mut got_up, mut got_down) = (0u64, 0u64, 0u64, 0u64);
        let mut t = Time::ZERO;
        let mut closed_c = false;
        let mut closed_s = false;
        let ctx = format!("seed {seed}: loss {loss} jitter {jitter} delay {delay} rate {rate} up {up} down {down} c {ccfg:?} s {scfg:?}");
        loop {
            t += Duration::from_millis(10);
            p.run_until(t);
            if matches!(p.c.state(), State::Established | State::CloseWait) && sent_up < up {
                sent_up += p.c.send(up - sent_up);
            }
            if matches!(p.s.state(), State::Established | State::CloseWait) && sent_down < down {
                sent_down += p.s.send(down - sent_down);
            }
            got_up += p.s.recv(read_chunk);
            got_down += p.c.recv(read_chunk);
            if sent_up == up && !closed_c && p.c.state() == State::Established || (sent_up == up && !closed_c && p.c.state() == State::CloseWait) {
                p.c.close();
                closed_c = true;
            }
            if sent_down == down && p.s.peer_closed() && !closed_s {
                p.s.close();
                closed_s = true;
            }
            // Wake the endpoints after app calls.
            p.run_until(t);
            let done = matches!(p.c.state(), State::TimeWait | State::Closed) && p.s.state() == State::Closed;
            if done {
                break;
            }
            assert!(t < Time::from_secs(3000), "stalled: {ctx}\n c {:?} s {:?} got {got_up}/{up} {got_down}/{down}", p.c.state(), p.s.state());
        }
        got_up += p.s.recv(u64::MAX);
        got_down += p.c.recv(u64::MAX);
        assert_eq!((got_up, got_down), (up, down), "{ctx}");
        if std::env::var("STRESS_VERBOSE").is_ok() {
            let st = p.c.stats();
            eprintln!("seed {seed}: t {t} rtx {} rto {} fr {} | {ctx}", st.retrans_segments, st.rtos, st.fast_retransmits);
        }
        assert!(!p.c.was_reset() && !p.s.was_reset(), "{ctx}");
    }
}
