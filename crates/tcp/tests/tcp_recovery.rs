//! Loss recovery at the endpoint with exact segments at exact times: Proportional Rate
//! Reduction (RFC 6937 / RFC 9937) on RFC 6937's own examples, and RACK-TLP (RFC 8985): the
//! reordering window, a lost retransmission detected without an RTO, and the tail loss probe.

mod common;
use common::*;
use rantcp_core::Time;
use rantcp_tcp::{CwndRules, Endpoint};
use rantcp_wire::Packet;

fn ack(c: &mut Endpoint, t: Time, off: u32, sack: &[(u32, u32)]) {
    let (ip, h) = server_ack(off, W, sack);
    c.handle_segment(t, &ip, &h, 0);
}

fn offs(v: &[Packet]) -> Vec<u32> {
    v.iter().map(coff).collect()
}

const W: u16 = 62500; // 1 MB >> 4

/// RFC 6937 §3.1's set-up: cwnd = FlightSize = pipe = 20 segments (MSS 1000), ssthresh 10 at
/// recovery (Linux's cwnd-based rule gives exactly cwnd / 2), PRR on, RFC 6675 loss detection.
fn prr_sender() -> Endpoint {
    let mut ccfg = cfg(true);
    ccfg.initial_cwnd_segments = 20;
    ccfg.prr = true;
    ccfg.cwnd_rules = CwndRules::Linux;
    let (mut c, _s) = established(ccfg, cfg(true));
    ack(&mut c, ms(30), 0, &[]);
    c.send(100_000);
    assert_eq!(drain(&mut c, ms(40)).len(), 20);
    c
}

#[test]
fn test_prr_single_loss_sends_one_segment_per_two_acks() {
    // Segment 0 is lost; the SACKs for segments 1..19 arrive at 61..79 ms.
    let mut c = prr_sender();
    let mut sent = Vec::new();
    for k in 1..=19u32 {
        let t = ms(60 + k as u64);
        ack(&mut c, t, 0, &[(1000, 1000 * (k + 1))]);
        let v = drain(&mut c, t);
        assert!(v.len() <= 1, "ACK {k}: {:?}", offs(&v));
        sent.push(v.first().map(coff));
        if k == 3 {
            // RFC 6937 §3: ssthresh = 10 segments, RecoverFS = SND.NXT − SND.UNA less what was
            // SACKed before this ACK = 22 − 2 (RFC 9937 §6.1).
            let i = c.info();
            assert_eq!((i.ssthresh, i.in_recovery), (10_000, true));
        }
    }
    // ACKs 1-2: a SACKed segment leaves pipe, one new segment each (Limited Transmit in
    // effect). ACK 3: fast retransmission. Then PRR: ⌈prr_delivered · 10 / 20⌉ − prr_out, one
    // new segment on every second ACK, the last at ACK 17; pipe ends at ssthresh.
    let n = |o: u32| Some(o);
    assert_eq!(
        sent,
        vec![
            n(20_000),
            n(21_000),
            n(0),
            None,
            n(22_000),
            None,
            n(23_000),
            None,
            n(24_000),
            None,
            n(25_000),
            None,
            n(26_000),
            None,
            n(27_000),
            None,
            n(28_000),
            None,
            None
        ]
    );
    assert_eq!(c.info().bytes_in_flight, 10_000);
    assert_eq!(c.stats().retrans_segments, 1);
    // The retransmission and everything after it arrive: recovery ends, cwnd = ssthresh.
    ack(&mut c, ms(100), 29_000, &[]);
    let i = c.info();
    assert_eq!((i.in_recovery, i.cwnd, i.ssthresh), (false, 10_000, 10_000));
    assert_eq!(drain(&mut c, ms(100)).len(), 10);
}

#[test]
fn test_prr_burst_loss_reduction_bound_rebuilds_pipe() {
    // Segments 0..14 lost; SACKs for 15..19 arrive. ACKs 1-2 (segments 15, 16) let out one new
    // segment each; ACK 3 marks all 15 lost: pipe = 22 − 3 − 15 = 4 ≤ ssthresh, so PRR's
    // reduction bound applies: max(prr_delivered − prr_out, DeliveredData), + 1 segment on a
    // safe ACK (RFC 9937; duplicate ACKs are not). One retransmission per ACK (RFC 6937's
    // PRR-CRB column: R R R), in order from segment 0.
    let mut c = prr_sender();
    let mut sent = Vec::new();
    for (i, k) in (15..=19u32).enumerate() {
        let t = ms(61 + i as u64);
        ack(&mut c, t, 0, &[(15_000, 1000 * (k + 1))]);
        sent.push(offs(&drain(&mut c, t)));
    }
    assert_eq!(
        sent,
        vec![vec![20_000], vec![21_000], vec![0], vec![1000], vec![2000]]
    );
    // The retransmission of segment 0 is acknowledged: a safe ACK (SND.UNA advances, no new
    // loss): limit = max(prr_delivered − prr_out, DeliveredData) + 1 segment = 2.
    ack(&mut c, ms(85), 1000, &[(15_000, 20_000)]);
    assert_eq!(offs(&drain(&mut c, ms(85))), vec![3000, 4000]);
}

/// RACK-TLP on, everything else as [`cfg`]: SRTT = min RTT = 20 ms after the handshake, 10
/// segments (IW 10, MSS 1000) sent at 40 ms.
fn rack_sender() -> Endpoint {
    let mut ccfg = cfg(true);
    ccfg.rack_tlp = true;
    let (mut c, _s) = established(ccfg, cfg(true));
    ack(&mut c, ms(30), 0, &[]);
    c.send(10_000);
    assert_eq!(drain(&mut c, ms(40)).len(), 10);
    c
}

#[test]
fn test_rack_reordering_window_waits_then_marks_the_hole_lost() {
    // Segment 1 is SACKed at 60 ms, segment 0 not: segment 0 was sent before the most recently
    // delivered one, but only RACK.rtt (20 ms) + reo_wnd (min RTT / 4 = 5 ms, fewer than
    // DupThresh segments SACKed) after its transmission (40 ms) may it be deemed lost: 65 ms.
    let mut c = rack_sender();
    ack(&mut c, ms(60), 0, &[(1000, 2000)]);
    none(&mut c, ms(60));
    assert!(!c.info().in_recovery);
    assert_eq!(c.poll_timeout(), Some(ms(65)), "the RACK reordering timer");
    c.handle_timeout(ms(64));
    none(&mut c, ms(64));
    c.handle_timeout(ms(65));
    // Lost: fast recovery (RFC 8985 starts it on a RACK-detected loss), retransmit at once.
    assert!(c.info().in_recovery);
    assert_eq!(c.info().ssthresh, 5000, "FlightSize 10 000 / 2");
    assert_eq!(offs(&drain(&mut c, ms(65))), vec![0]);
    assert_eq!((c.stats().retrans_segments, c.stats().rtos), (1, 0));
}

#[test]
fn test_rack_reordered_segment_arriving_in_the_window_is_not_retransmitted() {
    let mut c = rack_sender();
    ack(&mut c, ms(60), 0, &[(1000, 2000)]);
    none(&mut c, ms(60));
    // Segment 0 was only reordered: it arrives within the window.
    ack(&mut c, ms(63), 2000, &[]);
    c.handle_timeout(ms(65));
    none(&mut c, ms(65));
    assert!(!c.info().in_recovery);
    assert_eq!(c.stats().retrans_segments, 0);
    // Reordering has now been seen (a never-retransmitted segment delivered below RACK.fack):
    // from now on even DupThresh SACKed segments do not shrink the window to 0 (§6.2 Step 4).
    for (t, hi) in [(70u64, 4000u32), (71, 5000), (72, 6000)] {
        ack(&mut c, ms(t), 2000, &[(3000, hi)]);
        none(&mut c, ms(t));
    }
    assert!(
        !c.info().in_recovery,
        "3 SACKed segments, but reordering was seen"
    );
    assert_eq!(c.poll_timeout(), Some(ms(77)), "40 + RACK.rtt 32 + 5");
}

#[test]
fn test_rack_dupthresh_sacked_segments_mark_the_hole_at_once() {
    // With DupThresh (3) segments SACKed and no reordering seen, reo_wnd is 0: segment 0 is lost
    // on the third SACK, as RFC 6675's rule would also say.
    let mut c = rack_sender();
    for (t, hi) in [(60u64, 2000u32), (61, 3000)] {
        ack(&mut c, ms(t), 0, &[(1000, hi)]);
        none(&mut c, ms(t));
    }
    ack(&mut c, ms(62), 0, &[(1000, 4000)]);
    assert!(c.info().in_recovery);
    assert_eq!(offs(&drain(&mut c, ms(62))), vec![0]);
}

#[test]
fn test_rack_detects_a_lost_retransmission_without_rto() {
    // Segment 0 is lost twice. The SACK of data sent after its retransmission (62 ms) shows
    // the retransmission lost: it was sent before the newly delivered segment (66 ms) and
    // RACK.rtt has passed since (RFC 8985 §6.2 Step 5; reo_wnd is 0 in recovery).
    let mut ccfg = cfg(true);
    ccfg.rack_tlp = true;
    let (mut c, _s) = established(ccfg, cfg(true));
    ack(&mut c, ms(30), 0, &[]);
    c.send(30_000);
    assert_eq!(drain(&mut c, ms(40)).len(), 10);
    // Each of the first two SACKs takes a segment out of pipe: one new segment each.
    for (t, hi, new) in [(60u64, 2000u32, 10_000u32), (61, 3000, 11_000)] {
        ack(&mut c, ms(t), 0, &[(1000, hi)]);
        assert_eq!(offs(&drain(&mut c, ms(t))), vec![new]);
    }
    ack(&mut c, ms(62), 0, &[(1000, 4000)]);
    assert_eq!(c.info().ssthresh, 6000, "FlightSize 12 000 / 2");
    assert_eq!(offs(&drain(&mut c, ms(62))), vec![0]);
    // pipe = 8 outstanding originals + 1 retransmission; SACKs of 4..7 bring it to cwnd − 1 SMSS.
    let mut sent = Vec::new();
    for (t, hi) in [
        (63u64, 5000u32),
        (64, 6000),
        (65, 7000),
        (66, 8000),
        (67, 9000),
    ] {
        ack(&mut c, ms(t), 0, &[(1000, hi)]);
        sent.extend(offs(&drain(&mut c, ms(t))));
    }
    assert_eq!(sent, vec![12_000, 13_000], "new data at 66 and 67 ms");
    // 86 ms: segment 12 000 (sent at 66 ms) is SACKed; the retransmission of 0 (62 ms) is not.
    ack(&mut c, ms(86), 0, &[(12_000, 13_000), (1000, 12_000)]);
    assert_eq!(
        offs(&drain(&mut c, ms(86)))[0],
        0,
        "third transmission of segment 0"
    );
    assert_eq!((c.stats().retrans_segments, c.stats().rtos), (2, 0));
}

#[test]
fn test_tlp_probe_two_srtt_after_a_tail_loss() {
    // The last two segments (8, 9) are lost. After the ACK of 0..7 at 60 ms the sender has
    // nothing new to send; the PTO is 2·SRTT = 40 ms (two segments in flight, so no delayed-ACK
    // allowance), before the RTO (60 + 200 ms).
    let mut c = rack_sender();
    ack(&mut c, ms(60), 8000, &[]);
    none(&mut c, ms(60));
    assert_eq!(c.info().srtt, dms(20));
    assert_eq!(c.poll_timeout(), Some(ms(100)), "PTO = 2 · SRTT");
    c.handle_timeout(ms(100));
    // The probe: no new data, so the highest-sequence segment again (RFC 8985 §7.3).
    let p = one(&mut c, ms(100));
    assert_eq!((coff(&p), p.payload_len), (9000, 1000));
    assert_eq!(c.stats().tlp_probes, 1);
    assert_eq!(
        c.poll_timeout(),
        Some(ms(300)),
        "the RTO is re-armed from the probe"
    );
    // Its SACK reveals segment 8 lost to RACK (sent at 40 ms, before the probe; 40 + 20 + 5
    // elapsed): fast recovery and its retransmission at 120 ms, no RTO.
    ack(&mut c, ms(120), 8000, &[(9000, 10_000)]);
    assert!(c.info().in_recovery);
    assert_eq!(offs(&drain(&mut c, ms(120))), vec![8000]);
    ack(&mut c, ms(140), 10_000, &[]);
    assert!(!c.info().in_recovery);
    assert_eq!(c.stats().rtos, 0);
}

#[test]
fn test_tlp_probe_sends_new_data_when_there_is_some() {
    // The receive window stops new data at 10 segments; it opens again without new ACKs of
    // data (a window update) — then the probe is a new segment, not a retransmission.
    let mut c = rack_sender();
    c.send(20_000);
    ack(&mut c, ms(60), 8000, &[]);
    // cwnd 10 + 2 (ABC L = 2) segments, pipe 2: ten new segments fill it.
    let v = drain(&mut c, ms(60));
    assert_eq!(offs(&v), (10..20).map(|i| i * 1000).collect::<Vec<_>>());
    let t = c.poll_timeout().unwrap();
    assert_eq!(t, ms(100), "PTO = 2 · SRTT after the last new data");
    c.handle_timeout(t);
    let p = one(&mut c, t);
    assert_eq!(coff(&p), 20_000, "a new segment, beyond cwnd");
    assert_eq!(c.info().bytes_in_flight, 13_000);
    assert_eq!((c.stats().retrans_segments, c.stats().tlp_probes), (0, 1));
}
