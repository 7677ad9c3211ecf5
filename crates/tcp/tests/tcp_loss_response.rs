//! The sender's congestion response at the endpoint, with exact values: an RTO that fires during
//! fast recovery (RFC 5681 §3.1, Linux `tcp_enter_loss`), repeated RTOs of one timeout episode
//! (RFC 5681 §3.1: a segment already retransmitted by the timer holds ssthresh), and window
//! growth only while the window limits the sender (RFC 7661, RFC 9438 §5.8, Linux
//! `tcp_is_cwnd_limited`), for every controller.

mod common;
use common::*;
use rantcp_core::Time;
use rantcp_tcp::cc::{CcKind, Feedback};
use rantcp_tcp::{CwndRules, Endpoint, TcpConfig};

fn ack(c: &mut Endpoint, t: Time, off: u32, win: u16, sack: &[(u32, u32)]) {
    let (ip, h) = server_ack(off, win, sack);
    c.handle_segment(t, &ip, &h, 0);
}

const W: u16 = 62500; // 1 MB >> 4

/// 20 segments in flight from 40 ms, segment 0 lost; SACKs for 1..=3 at 60..62 ms enter
/// recovery (RFC 6675 IsLost). Returns the endpoint and ssthresh set on entry.
fn in_sack_recovery(cc: CcKind) -> (Endpoint, u64) {
    let mut ccfg = cfg(true);
    ccfg.cc = cc;
    ccfg.initial_cwnd_segments = 20;
    let (mut c, _s) = established(ccfg, cfg(true));
    ack(&mut c, ms(30), 0, W, &[]);
    c.send(100_000);
    assert_eq!(drain(&mut c, ms(40)).len(), 20);
    for (t, hi) in [(60u64, 2000u32), (61, 3000), (62, 4000)] {
        ack(&mut c, ms(t), 0, W, &[(1000, hi)]);
        drain(&mut c, ms(t));
    }
    let i = c.info();
    assert!(i.in_recovery, "{cc:?}");
    (c, i.ssthresh)
}

#[test]
fn test_rto_during_sack_recovery_keeps_ssthresh_newreno() {
    let (mut c, ssthresh) = in_sack_recovery(CcKind::NewReno);
    // FlightSize at entry: 20 + 2 new segments the first two SACKs let out (each shrank pipe by
    // one segment; duplicate ACKs do not grow cwnd) = 22 000; eq. 4: 11 000.
    assert_eq!(ssthresh, 11_000);
    // No more ACKs: the RTO (started at 40 ms, 200 ms) fires during recovery.
    let t = c.poll_timeout().unwrap();
    assert_eq!(t, ms(240));
    c.handle_timeout(t);
    let i = c.info();
    assert_eq!(c.stats().rtos, 1);
    assert!(!i.in_recovery);
    // RFC 5681 §3.1 eq. 4 uses FlightSize (22 000 outstanding: 11 000 again, no lower) and
    // Linux tcp_enter_loss does not recompute ssthresh in Recovery: ssthresh stays, cwnd = LW.
    assert_eq!((i.cwnd, i.ssthresh), (1000, 11_000));
}

#[test]
fn test_rto_during_sack_recovery_keeps_ssthresh_cubic() {
    let (mut c, ssthresh) = in_sack_recovery(CcKind::Cubic);
    // CUBIC (RFC 9438 §4.6): cwnd at entry 20 000 · 0.7.
    assert_eq!(ssthresh, 14_000);
    let t = c.poll_timeout().unwrap();
    c.handle_timeout(t);
    let i = c.info();
    assert_eq!((i.cwnd, i.ssthresh), (1000, 14_000), "no second β cut");
}

#[test]
fn test_rto_during_newreno_recovery_keeps_ssthresh() {
    // Without SACK: RFC 6582 recovery entered at the third duplicate ACK.
    let mut ccfg = cfg(false);
    ccfg.initial_cwnd_segments = 20;
    let (mut c, _s) = established(ccfg, cfg(false));
    ack(&mut c, ms(30), 0, W, &[]);
    c.send(100_000);
    assert_eq!(drain(&mut c, ms(40)).len(), 20);
    for t in [60u64, 61, 62] {
        ack(&mut c, ms(t), 0, W, &[]);
        drain(&mut c, ms(t));
    }
    let i = c.info();
    assert!(i.in_recovery);
    assert_eq!(i.ssthresh, 10_000);
    c.handle_timeout(ms(240));
    let i = c.info();
    assert_eq!((i.cwnd, i.ssthresh), (1000, 10_000));
}

#[test]
fn test_repeated_timeouts_hold_or_reduce_from_the_retransmitted_flight() {
    // RFC 5681 §3.1: "when a TCP sender detects segment loss using the retransmission timer and
    // the given segment has already been retransmitted by way of the retransmission timer at
    // least once, the value of ssthresh is held constant". Once an ACK has moved SND.UNA on, a
    // new timeout is a new congestion event, but within the timeout's go-back-N FlightSize is
    // the data retransmitted since (BSD's snd_nxt − snd_una), not SND.MAX − SND.UNA, which
    // still spans the whole pre-timeout window and would restart the RTO cascade.
    let mut ccfg = cfg(true);
    ccfg.initial_cwnd_segments = 20;
    let (mut c, _s) = established(ccfg, cfg(true));
    ack(&mut c, ms(30), 0, W, &[]);
    c.send(20_000);
    assert_eq!(drain(&mut c, ms(40)).len(), 20);
    c.handle_timeout(ms(240));
    assert_eq!(
        (c.info().cwnd, c.info().ssthresh),
        (1000, 10_000),
        "20 000 / 2"
    );
    assert_eq!(offs(&drain(&mut c, ms(240))), vec![0]);
    // The same segment times out again (backed off to 400 ms): ssthresh held.
    c.handle_timeout(ms(640));
    assert_eq!(c.stats().rtos, 2);
    assert_eq!((c.info().cwnd, c.info().ssthresh), (1000, 10_000));
    assert_eq!(offs(&drain(&mut c, ms(640))), vec![0]);
    // Its retransmission is acknowledged (no RTT sample: Karn); go-back-N goes on.
    ack(&mut c, ms(660), 1000, W, &[]);
    assert_eq!(offs(&drain(&mut c, ms(660))), vec![1000, 2000]);
    // Both are lost: the next timeout (still backed off, 800 ms) is a new congestion event whose
    // FlightSize is the 2 000 retransmitted bytes: max(2000 / 2, 2 SMSS); not 19 000 / 2.
    let t = c.poll_timeout().unwrap();
    assert_eq!(t, ms(1460));
    c.handle_timeout(t);
    assert_eq!(c.stats().rtos, 3);
    assert_eq!((c.info().cwnd, c.info().ssthresh), (1000, 2000));
    // Once everything outstanding at the timeouts is acknowledged, FlightSize is SND.NXT −
    // SND.UNA again.
    ack(&mut c, ms(1500), 20_000, W, &[]);
    c.send(8000);
    let v = drain(&mut c, ms(1500));
    assert_eq!(
        offs(&v),
        vec![20_000, 21_000],
        "cwnd 1000 + 1000: the ACK came in the slow start after a timeout (RFC 3465 §2.3 L = 1)"
    );
    let t = c.poll_timeout().unwrap();
    c.handle_timeout(t);
    assert_eq!(c.stats().rtos, 4);
    assert_eq!(c.info().ssthresh, 2000, "max(2000 / 2, 2 SMSS)");
}

fn offs(v: &[rantcp_wire::Packet]) -> Vec<u32> {
    v.iter().map(coff).collect()
}

/// A pair at 10 Mbit/s, 10 ms one way, with the receiver's buffer `rcv_buf` bytes.
fn rwin_limited_pair(cc: CcKind, rcv_buf: u64) -> Pair {
    let mut ccfg: TcpConfig = cfg(true);
    ccfg.cc = cc;
    ccfg.snd_buf_bytes = 64 << 20;
    let mut scfg = cfg(true);
    scfg.rcv_buf_bytes = rcv_buf;
    let mut p = Pair::new(ccfg, scfg, dms(10), 10_000_000, Loss::None);
    p.keep_log = false;
    p
}

#[test]
fn test_cwnd_does_not_grow_when_receive_window_limited() {
    // The receiver offers 16 segments; the path holds 25 (10 Mbit/s x 20 ms). RFC 7661 /
    // RFC 9438 §5.8 / Linux tcp_is_cwnd_limited: cwnd grows only while it limits the sender,
    // and in slow start up to twice what was in flight. Every controller, BBR included (its
    // target is twice the measured BDP, and the rwin-limited rate is what it measures).
    for cc in CcKind::ALL {
        let mut p = rwin_limited_pair(cc, 16_000);
        p.run_until(ms(30));
        p.c.send(100_000_000);
        p.run_until(ms(20_000));
        let cwnd = p.c.info().cwnd;
        assert!(
            p.delivered_to_server_app > 14_000_000,
            "{cc:?}: delivered {}",
            p.delivered_to_server_app
        );
        // Slow start's allowance: twice the data in flight (+ the segments of one ACK). BBR's
        // target is cwnd_gain (2) x its BDP estimate, which the receive window caps at 16 000,
        // plus its quantization budget (3-5 segments) and ACK-aggregation bonus.
        let bound = if cc == CcKind::Bbr {
            3 * 16_000
        } else {
            2 * 16_000 + 2000
        };
        assert!(
            cwnd <= bound,
            "{cc:?}: cwnd {cwnd} with a 16 000-byte receive window"
        );
    }
}

#[test]
fn test_cwnd_does_not_grow_when_application_limited() {
    // The application writes 5 segments every 100 ms: at most 5 in flight; cwnd must stay near
    // twice that (slow start's allowance) instead of growing by every ACK.
    for cc in CcKind::ALL {
        let mut p = rwin_limited_pair(cc, 1_000_000);
        p.run_until(ms(30));
        for k in 0..100u64 {
            p.c.send(5000);
            p.run_until(ms(30 + 100 * (k + 1)));
        }
        assert_eq!(p.delivered_to_server_app, 500_000, "{cc:?}");
        let cwnd = p.c.info().cwnd;
        assert!(
            cwnd <= 20_000,
            "{cc:?}: cwnd {cwnd} while never more than 5 000 in flight"
        );
    }
}

#[test]
fn test_cwnd_grows_in_congestion_avoidance_while_timeout_retransmissions_fill_it() {
    // After a timeout the sender resends the lost window by go-back-N; when cwnd is what holds
    // the next retransmission back, the sender is cwnd-limited (RFC 7661 §4.1; Linux
    // tcp_write_xmit marks it so whenever packets in flight reach cwnd, new data or not), so
    // congestion avoidance must grow cwnd. Before the fix only new data updated the record: a
    // sender whose last new data had been application-limited stayed at ssthresh (2 segments
    // here) for the whole go-back-N (seed 001's Figure 6: 40 s at 3 segments).
    let mut ccfg = cfg(true);
    ccfg.initial_cwnd_segments = 30;
    let (mut c, _s) = established(ccfg, cfg(true));
    ack(&mut c, ms(30), 0, W, &[]);
    c.send(20_000);
    assert_eq!(
        drain(&mut c, ms(40)).len(),
        20,
        "20 of 30: application-limited"
    );
    // Three timeouts as in the test above leave ssthresh at 2 SMSS, 1000 acknowledged.
    c.handle_timeout(ms(240));
    drain(&mut c, ms(240));
    c.handle_timeout(ms(640));
    drain(&mut c, ms(640));
    ack(&mut c, ms(660), 1000, W, &[]);
    assert_eq!(offs(&drain(&mut c, ms(660))), vec![1000, 2000]);
    let t = c.poll_timeout().unwrap();
    c.handle_timeout(t);
    assert_eq!((c.info().cwnd, c.info().ssthresh), (1000, 2000));
    assert_eq!(offs(&drain(&mut c, t)), vec![1000]);
    // Each retransmission is acknowledged one by one, 1 ms apart: slow start to 2000 on the
    // first ACK, then congestion avoidance (RFC 3465: one SMSS per cwnd of bytes acknowledged).
    let mut cwnds = Vec::new();
    for k in 0..12u32 {
        ack(&mut c, ms(1500 + k as u64), 2000 + 1000 * k, W, &[]);
        drain(&mut c, ms(1500 + k as u64));
        cwnds.push(c.info().cwnd);
    }
    assert_eq!(
        cwnds,
        vec![2000, 2000, 3000, 3000, 3000, 4000, 4000, 4000, 4000, 5000, 5000, 5000]
    );
}

#[test]
fn test_radio_aware_rto_with_fresh_feedback_resends_one_segment_then_slow_starts() {
    // Seed 002's radio-aware controller sets cwnd from RAN feedback, and the seed does not say
    // what a timeout does. As Linux's tcp_enter_loss does for every module (BBR included), the
    // sender then uses the RFC 5681 §3.1 loss window and slow-starts until everything
    // outstanding at the timeout is acknowledged; only then does the radio window come back.
    // Before, go-back-N resent the whole 60-segment radio window at once (without SACK, into a
    // radio buffer that may hold a fraction of it: functions_integrity's 9 cases that never
    // finished on `builtin:radio-aware`).
    let mut ccfg = cfg(false);
    ccfg.cc = CcKind::RadioAware;
    ccfg.radio_aware.stale_after = dms(10_000);
    let (mut c, _s) = established(ccfg, cfg(false));
    // 16 Mbit/s × 20 ms (the handshake's RTT) + 30 000 − 10 000 = 60 000 bytes.
    c.handle_feedback(
        ms(30),
        &Feedback {
            sampled_at: ms(30),
            rate_bps: Some(16e6),
            queue_bytes: Some(10_000),
        },
    );
    c.send(1_000_000);
    assert_eq!(drain(&mut c, ms(30)).len(), 10, "the fallback's IW");
    ack(&mut c, ms(50), 1000, W, &[]);
    assert_eq!(c.info().cwnd, 60_000);
    assert_eq!(
        drain(&mut c, ms(50)).len(),
        51,
        "up to 60 segments in flight"
    );
    // Nothing more is acknowledged: the timeout.
    let t = c.poll_timeout().unwrap();
    c.handle_timeout(t);
    assert_eq!(c.stats().rtos, 1);
    assert_eq!(c.info().cwnd, 1000, "RFC 5681 §3.1 LW");
    assert_eq!(offs(&drain(&mut c, t)), vec![1000]);
    // Slow start, one SMSS per cumulative ACK (RFC 5681 eq. 2), go-back-N from SND.UNA. The
    // second ACK covers 2000 bytes and adds 1000.
    let t1 = t + dms(20);
    ack(&mut c, t1, 2000, W, &[]);
    assert_eq!(c.info().cwnd, 2000);
    assert_eq!(offs(&drain(&mut c, t1)), vec![2000, 3000]);
    let t2 = t1 + dms(20);
    ack(&mut c, t2, 4000, W, &[]);
    assert_eq!(c.info().cwnd, 3000);
    assert_eq!(offs(&drain(&mut c, t2)), vec![4000, 5000, 6000]);
    // A retransmission that fills the only hole: everything up to 30 000 had arrived. The
    // stretch ACK adds one segment, not 26: four segments go, not a burst of 29.
    let t2b = t2 + dms(20);
    ack(&mut c, t2b, 30_000, W, &[]);
    assert_eq!(c.info().cwnd, 4000);
    assert_eq!(
        offs(&drain(&mut c, t2b)),
        vec![30_000, 31_000, 32_000, 33_000]
    );
    // The recovery point (61 000, SND.NXT at the timeout) acknowledged: the radio window again,
    // 60 segments beyond SND.UNA.
    let t3 = t2b + dms(20);
    ack(&mut c, t3, 61_000, W, &[]);
    assert_eq!(c.info().cwnd, 60_000);
    assert_eq!(drain(&mut c, t3).len(), 60);
}

/// 20 segments in flight from 40 ms under `rules` with `cc`; none of their ACKs arrives, so the
/// RTO fires (cwnd 1 SMSS, ssthresh 10 000 or more) and segment 0 goes again.
fn after_rto(rules: CwndRules, cc: CcKind) -> Endpoint {
    let mut ccfg = cfg(true);
    ccfg.cc = cc;
    ccfg.cwnd_rules = rules;
    // F-RTO (Linux profile) would call the timeout spurious on the first ACK below: it
    // acknowledges never-retransmitted segments (RFC 5682 §3.1 step 3.b). Not what is tested.
    ccfg.frto = false;
    ccfg.initial_cwnd_segments = 20;
    let (mut c, _s) = established(ccfg, cfg(true));
    ack(&mut c, ms(30), 0, W, &[]);
    c.send(100_000);
    assert_eq!(drain(&mut c, ms(40)).len(), 20);
    let t = c.poll_timeout().unwrap();
    c.handle_timeout(t);
    assert_eq!(c.stats().rtos, 1);
    assert_eq!(c.info().cwnd, 1000, "{cc:?}");
    assert!(c.info().ssthresh >= 10_000, "{cc:?}: {}", c.info().ssthresh);
    assert_eq!(offs(&drain(&mut c, t)), vec![0]);
    c
}

#[test]
fn test_rfc_slow_start_after_a_timeout_counts_one_segment_for_the_ack_that_fills_the_hole() {
    // RFC 3465 §2.3: L = 1 SMSS in the slow start that follows a retransmission timeout. The
    // receiver held segments 1..19; the retransmission of 0 fills the hole and its ACK covers
    // 20 000 bytes and ends the timeout's recovery. With L = 2 (RFC 3465 §2.2) cwnd would go
    // to 3 000 and release 3 segments at once; Linux counts all (`tcp_slow_start`, up to
    // ssthresh).
    for cc in [CcKind::NewReno, CcKind::Cubic, CcKind::HighSpeed] {
        let mut c = after_rto(CwndRules::Rfc, cc);
        ack(&mut c, ms(260), 20_000, W, &[]);
        assert_eq!(c.info().cwnd, 2000, "{cc:?} rfc");
        let mut c = after_rto(CwndRules::Linux, cc);
        ack(&mut c, ms(260), 20_000, W, &[]);
        assert!(c.info().cwnd >= 10_000, "{cc:?} linux: {}", c.info().cwnd);
    }
}

#[test]
fn test_rfc_slow_start_counts_one_segment_per_ack_until_the_timeouts_data_is_acknowledged() {
    // Two holes (segments 0 and 5): each ACK of a retransmission that fills one grows cwnd by
    // one SMSS however much it covers (RFC 3465 §2.3), SACKed data included; once everything
    // outstanding at the timeout is acknowledged, L = 2 SMSS again (§2.2).
    let mut c = after_rto(CwndRules::Rfc, CcKind::NewReno);
    ack(&mut c, ms(260), 5000, W, &[(6000, 20_000)]);
    assert_eq!(
        c.info().cwnd,
        2000,
        "5 000 acknowledged, 14 000 SACKed: + 1 SMSS"
    );
    assert_eq!(offs(&drain(&mut c, ms(260))), vec![5000, 20_000]);
    ack(&mut c, ms(280), 20_000, W, &[]);
    assert_eq!(
        c.info().cwnd,
        3000,
        "the timeout's data all acknowledged: + 1 SMSS"
    );
    assert_eq!(offs(&drain(&mut c, ms(280))), vec![21_000, 22_000]);
    ack(&mut c, ms(300), 22_000, W, &[]);
    assert_eq!(c.info().cwnd, 5000, "new data: L = 2 SMSS again");
}
