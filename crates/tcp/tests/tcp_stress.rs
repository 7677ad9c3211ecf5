//! Randomised end-to-end runs (seeded, deterministic): random configs, loss in both
//! directions, reordering, bidirectional data, slow readers and closes. Every run must deliver
//! every byte in order and end with both sides closed; the endpoint's debug-build scoreboard
//! invariants are checked on every ACK.

mod common;
use common::*;
use rantcp_core::{Duration, Rng, Time};
use rantcp_tcp::cc::{CcKind, Hystart};
use rantcp_tcp::{CwndRules, State, TcpConfig};

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
    c.rack_tlp = r.bernoulli(0.5);
    c.prr = r.bernoulli(0.5);
    c.cwnd_rules = [CwndRules::Rfc, CwndRules::Linux][r.below(2) as usize];
    c.hystart = Hystart::ALL[r.below(3) as usize];
    c.ack_every = 1 + r.below(4) as u32;
    c.quickack_segments = [0, 16][r.below(2) as usize];
    c.ack_when_read = r.bernoulli(0.5);
    c.rto_undo = r.bernoulli(0.5);
    c.dsack = r.bernoulli(0.5);
    c.recovery_undo = r.bernoulli(0.5);
    c.frto = r.bernoulli(0.5);
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
        let l = if loss > 0.0 {
            Loss::Random(Rng::new(seed, 7), loss)
        } else {
            Loss::None
        };
        let mut p = Pair::new(ccfg.clone(), scfg.clone(), delay, rate, l);
        let jitter = if r.bernoulli(0.4) {
            Duration::from_millis(1 + r.below(20))
        } else {
            Duration::ZERO
        };
        if jitter.0 > 0 {
            p.jitter = Some((Rng::new(seed, 8), jitter));
        }
        p.keep_log = false;
        p.server_reads = false;
        let detect = r.bernoulli(0.5);
        p.c.set_lost_retransmit_detection(detect);
        p.s.set_lost_retransmit_detection(detect);
        let up = 1 + r.below(600_000);
        let down = if r.bernoulli(0.5) {
            r.below(300_000)
        } else {
            0
        };
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
            if sent_up == up
                && !closed_c
                && matches!(p.c.state(), State::Established | State::CloseWait)
            {
                p.c.close();
                closed_c = true;
            }
            if sent_down == down && p.s.peer_closed() && !closed_s {
                p.s.close();
                closed_s = true;
            }
            // Wake the endpoints after app calls.
            p.run_until(t);
            let done = matches!(p.c.state(), State::TimeWait | State::Closed)
                && p.s.state() == State::Closed;
            if done {
                break;
            }
            assert!(
                t < Time::from_secs(3000),
                "stalled: {ctx}\n c {:?} s {:?} got {got_up}/{up} {got_down}/{down}",
                p.c.state(),
                p.s.state()
            );
        }
        got_up += p.s.recv(u64::MAX);
        got_down += p.c.recv(u64::MAX);
        assert_eq!((got_up, got_down), (up, down), "{ctx}");
        if std::env::var("STRESS_VERBOSE").is_ok() {
            let st = p.c.stats();
            eprintln!(
                "seed {seed}: t {t} rtx {} rto {} fr {} | {ctx}",
                st.retrans_segments, st.rtos, st.fast_retransmits
            );
        }
        assert!(!p.c.was_reset() && !p.s.was_reset(), "{ctx}");
    }
}

/// Arbitrary segments (random flags, sequence/ACK numbers near and far from the expected
/// ones, windows, SACK blocks, timestamps) and arbitrary application calls and timer firings
/// must never panic (debug build: overflow checks and scoreboard invariants on).
#[test]
fn fuzz_random_inputs_never_panic() {
    use rantcp_wire::{SackBlock, TcpFlags, TcpHeader, TcpOptions};
    let n: u64 = std::env::var("FUZZ_SEEDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(300);
    for seed in 0..n {
        let mut r = Rng::new(seed, 1234);
        let mut rc = random_cfg(&mut r);
        rc.initial_cwnd_segments = 10;
        let (mut c, mut s) = established(rc.clone(), rc.clone());
        c.set_lost_retransmit_detection(r.bernoulli(0.5));
        let mut now = ms(40);
        let mut sent_by_c: Vec<u32> = Vec::new();
        for _ in 0..400 {
            now += Duration::from_micros(r.below(20_000));
            match r.below(10) {
                0 => {
                    c.send(r.below(20_000));
                }
                1 => {
                    s.recv(r.below(20_000));
                }
                2 => c.handle_timeout(now),
                3 => {
                    if r.bernoulli(0.05) {
                        c.close();
                    } else if r.bernoulli(0.02) {
                        s.close();
                    } else if r.bernoulli(0.005) {
                        c.abort();
                    }
                }
                4 => {
                    // Arbitrary data/FIN/RST segment to the server (receiver paths).
                    let mut o = TcpOptions::default();
                    if r.bernoulli(0.5) {
                        o.timestamps = Some((r.next_u64() as u32, r.next_u64() as u32));
                    }
                    let mut flags = TcpFlags::ACK;
                    if r.bernoulli(0.1) {
                        flags |= TcpFlags::FIN;
                    }
                    if r.bernoulli(0.03) {
                        flags = TcpFlags(r.below(256) as u8);
                    }
                    let off = r.below(300_000) as u32;
                    let h = TcpHeader {
                        src_port: CLIENT.1,
                        dst_port: SERVER.1,
                        seq: CISS.wrapping_add(1).wrapping_add(off).wrapping_sub(2000),
                        ack: SISS.wrapping_add(1).wrapping_add(r.below(3) as u32),
                        flags,
                        window: r.below(65536) as u16,
                        urgent: 0,
                        options: o,
                    };
                    let len = r.below(3000) as u32;
                    s.handle_segment(
                        now,
                        &rantcp_wire::Ipv4Header::new(CLIENT.0, SERVER.0),
                        &h,
                        len,
                    );
                    s.handle_timeout(now);
                }
                _ => {
                    // A segment to the client, near its send sequence space.
                    let base = CISS.wrapping_add(1);
                    let near = |r: &mut Rng| -> u32 {
                        match r.below(4) {
                            0 => r.next_u64() as u32,
                            _ => base
                                .wrapping_add(r.below(200_000) as u32)
                                .wrapping_sub(1000),
                        }
                    };
                    let mut o = TcpOptions::default();
                    for _ in 0..r.below(5) {
                        let a = near(&mut r);
                        let b = if r.bernoulli(0.8) {
                            a.wrapping_add(r.below(10_000) as u32)
                        } else {
                            near(&mut r)
                        };
                        o.push_sack(SackBlock { left: a, right: b });
                    }
                    if r.bernoulli(0.5) {
                        o.timestamps = Some((r.next_u64() as u32, r.next_u64() as u32));
                    }
                    let mut flags = TcpFlags::ACK;
                    if r.bernoulli(0.03) {
                        flags = TcpFlags(r.below(256) as u8);
                    }
                    let ack = if let (true, Some(&x)) = (r.bernoulli(0.5), sent_by_c.last()) {
                        x
                    } else {
                        near(&mut r)
                    };
                    let h = TcpHeader {
                        src_port: SERVER.1,
                        dst_port: CLIENT.1,
                        seq: SISS
                            .wrapping_add(1)
                            .wrapping_add(r.below(3000) as u32)
                            .wrapping_sub(1500),
                        ack,
                        flags,
                        window: r.below(65536) as u16,
                        urgent: 0,
                        options: o,
                    };
                    let len = if r.bernoulli(0.2) {
                        r.below(3000) as u32
                    } else {
                        0
                    };
                    c.handle_segment(
                        now,
                        &rantcp_wire::Ipv4Header::new(SERVER.0, CLIENT.0),
                        &h,
                        len,
                    );
                }
            }
            while let Some(p) = c.poll_transmit(now) {
                let t = tcp(&p);
                sent_by_c.push(t.seq.wrapping_add(p.payload_len));
                if r.bernoulli(0.5) {
                    s.handle_segment(now, &p.ip, t, p.payload_len);
                }
            }
            while let Some(p) = s.poll_transmit(now) {
                if r.bernoulli(0.5) {
                    deliver(&mut c, now, &p);
                }
            }
            let _ = c.poll_timeout();
            let _ = c.info();
            if let Some(t) = s.poll_timeout() {
                if t <= now {
                    s.handle_timeout(now);
                }
            }
        }
    }
}
