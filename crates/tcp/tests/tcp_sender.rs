//! Sender behaviour with exact segments at exact times: NewReno fast retransmit / fast
//! recovery (RFC 6582), SACK recovery (RFC 6675), RTO backoff (RFC 6298 §5), go-back-N after an
//! RTO, zero-window persist (RFC 9293 §3.8.6.1), pacing.

mod common;
use common::*;
use rantcp_core::Time;
use rantcp_tcp::{CwndRules, Endpoint, State, TcpConfig};
use rantcp_wire::TcpFlags;

fn ack(c: &mut Endpoint, t: Time, off: u32, win: u16, sack: &[(u32, u32)]) {
    let (ip, h) = server_ack(off, win, sack);
    c.handle_segment(t, &ip, &h, 0);
}

fn offs(v: &[rantcp_wire::Packet]) -> Vec<u32> {
    v.iter().map(coff).collect()
}

const W: u16 = 62500; // 1 MB >> 4

#[test]
fn test_established_fast_retransmit_on_third_dupack_newreno() {
    let (mut c, _s) = established(cfg(false), cfg(false));
    assert_eq!(c.send(100_000), 100_000);
    let v = drain(&mut c, ms(40));
    assert_eq!(
        offs(&v),
        (0..10).map(|i| i * 1000).collect::<Vec<_>>(),
        "IW = 10 segments"
    );
    assert_eq!(c.info().cwnd, 10_000);
    // Delayed ACK for segments 0-1: slow start by 2 SMSS (ABC L = 2), 4 new segments.
    ack(&mut c, ms(60), 2000, W, &[]);
    assert_eq!(c.info().cwnd, 12_000);
    assert_eq!(
        offs(&drain(&mut c, ms(60))),
        vec![10_000, 11_000, 12_000, 13_000]
    );
    // Segments 2000 and 5000 are lost: duplicate ACKs for 3000, 4000.
    ack(&mut c, ms(70), 2000, W, &[]);
    none(&mut c, ms(70));
    ack(&mut c, ms(71), 2000, W, &[]);
    none(&mut c, ms(71));
    assert_eq!(
        c.stats().fast_retransmits,
        0,
        "not at the 2nd duplicate ACK"
    );
    ack(&mut c, ms(72), 2000, W, &[]);
    let r = one(&mut c, ms(72));
    assert_eq!(
        (coff(&r), r.payload_len),
        (2000, 1000),
        "fast retransmit at the 3rd duplicate ACK"
    );
    // RFC 6582 §3.2: ssthresh = max(FlightSize/2, 2 SMSS) = 12000/2; cwnd = ssthresh + 3 SMSS.
    let i = c.info();
    assert_eq!((i.ssthresh, i.cwnd, i.in_recovery), (6000, 9000, true));
    assert_eq!(c.stats().fast_retransmits, 1);
    assert_eq!(c.stats().retrans_segments, 1);
    // Duplicate ACKs 4..6 inflate cwnd to 12000 = pipe: nothing new yet.
    for k in 4..=6u64 {
        ack(&mut c, ms(69 + k), 2000, W, &[]);
        none(&mut c, ms(69 + k));
        assert_eq!(c.info().cwnd, 6000 + k * 1000);
    }
    // Duplicate ACKs 7..10: one new segment each.
    for k in 7..=10u32 {
        ack(&mut c, ms(69 + k as u64), 2000, W, &[]);
        let p = one(&mut c, ms(69 + k as u64));
        assert_eq!(coff(&p), 14_000 + (k - 7) * 1000);
    }
    assert_eq!(c.stats().dup_acks_received, 10);
    // Partial ACK (the retransmission filled 2000, 5000 still missing): retransmit 5000 at
    // once, deflate by 3000 acked and add back one SMSS: cwnd = 6000 + 10000 - 3000 + 1000.
    ack(&mut c, ms(100), 5000, W, &[]);
    let v = drain(&mut c, ms(100));
    assert_eq!(offs(&v), vec![5000, 18_000]);
    assert_eq!(c.info().cwnd, 14_000);
    assert!(c.info().in_recovery);
    assert_eq!(c.stats().retrans_segments, 2);
    assert_eq!(c.stats().fast_retransmits, 1);
    // Full ACK: leave recovery with cwnd = ssthresh.
    ack(&mut c, ms(110), 19_000, W, &[]);
    let i = c.info();
    assert_eq!((i.cwnd, i.ssthresh, i.in_recovery), (6000, 6000, false));
    assert_eq!(
        offs(&drain(&mut c, ms(110))),
        (19..25).map(|i| i * 1000).collect::<Vec<_>>()
    );
    assert_eq!(c.stats().rtos, 0);
}

#[test]
fn test_established_sack_recovery_exact_scoreboard() {
    let (mut c, _s) = established(cfg(true), cfg(true));
    // Window update with the scaled window first (the SYN-ACK's window is unscaled).
    ack(&mut c, ms(30), 0, W, &[]);
    c.send(100_000);
    assert_eq!(drain(&mut c, ms(40)).len(), 10);
    // Segment 0 lost. A duplicate ACK with new SACK information does not grow cwnd (RFC 5681
    // §3.1: only ACKs that cumulatively acknowledge new data do), but the SACKed segment leaves
    // pipe, so one new segment goes (RFC 6675 NextSeg rule 2, in effect Limited Transmit).
    ack(&mut c, ms(60), 0, W, &[(1000, 2000)]);
    assert_eq!(c.info().cwnd, 10_000);
    assert_eq!(offs(&drain(&mut c, ms(60))), vec![10_000]);
    ack(&mut c, ms(61), 0, W, &[(1000, 3000)]);
    assert_eq!(offs(&drain(&mut c, ms(61))), vec![11_000]);
    assert_eq!(
        c.info().bytes_in_flight,
        10_000,
        "pipe excludes SACKed segments (RFC 6675 §4)"
    );
    assert!(!c.info().in_recovery);
    // Third SACKed segment: IsLost(0) and DupAcks = 3: enter recovery and retransmit 0.
    ack(&mut c, ms(62), 0, W, &[(1000, 4000)]);
    let i = c.info();
    assert_eq!(
        (i.ssthresh, i.cwnd, i.in_recovery),
        (6000, 6000, true),
        "FlightSize 12000 / 2"
    );
    let r = one(&mut c, ms(62));
    assert_eq!(coff(&r), 0);
    // pipe = 8 unSACKed originals (4000..11999) + 1 retransmission.
    assert_eq!(c.info().bytes_in_flight, 9000);
    for (t, hi) in [(63u64, 5000u32), (64, 6000), (65, 7000)] {
        ack(&mut c, ms(t), 0, W, &[(1000, hi)]);
        none(&mut c, ms(t));
    }
    // cwnd − pipe ≥ SMSS again: one new segment per SACKed segment.
    ack(&mut c, ms(66), 0, W, &[(1000, 8000)]);
    assert_eq!(offs(&drain(&mut c, ms(66))), vec![12_000]);
    ack(&mut c, ms(67), 0, W, &[(1000, 9000)]);
    assert_eq!(offs(&drain(&mut c, ms(67))), vec![13_000]);
    assert_eq!(c.info().cwnd, 6000, "no growth in recovery");
    // Cumulative ACK up to the recovery point exits recovery.
    ack(&mut c, ms(90), 14_000, W, &[]);
    assert!(!c.info().in_recovery);
    assert_eq!(c.info().cwnd, 6000);
    assert_eq!(c.stats().retrans_segments, 1);
    assert_eq!(c.stats().fast_retransmits, 1);
}

#[test]
fn test_sack_recovery_three_holes_one_episode_no_rto() {
    let mut ccfg = cfg(true);
    ccfg.initial_cwnd_segments = 20;
    let mut p = Pair::new(
        ccfg,
        cfg(true),
        dms(10),
        1_000_000_000,
        Loss::FirstTx(vec![2000, 7000, 12_000]),
    );
    p.run_until(ms(30));
    assert_eq!(p.c.state(), State::Established);
    p.c.send(20_000);
    p.run_until(ms(2000));
    assert_eq!(p.delivered_to_server_app, 20_000);
    let rtx: Vec<u32> = p
        .log
        .iter()
        .filter(|(_, to_s, pk, _)| *to_s && pk.payload_len > 0)
        .map(|(_, _, pk, _)| coff(pk))
        .fold(Vec::new(), |mut seen: Vec<u32>, o| {
            seen.push(o);
            seen
        });
    let mut counts = std::collections::BTreeMap::new();
    for o in rtx {
        *counts.entry(o).or_insert(0) += 1;
    }
    for (o, n) in &counts {
        let want = if [2000, 7000, 12_000].contains(o) {
            2
        } else {
            1
        };
        assert_eq!(*n, want, "segment {o} sent {n} times");
    }
    let st = p.c.stats();
    assert_eq!(
        (st.retrans_segments, st.fast_retransmits, st.rtos),
        (3, 1, 0)
    );
}

#[test]
fn test_established_rto_backoff_doubles_up_to_max() {
    let mut ccfg = cfg(true);
    ccfg.max_rto = dms(2000);
    let (mut c, _s) = established(ccfg, cfg(true));
    c.send(1000);
    let d = one(&mut c, ms(40));
    assert_eq!(coff(&d), 0);
    // SRTT 20 ms, RTTVAR 10 ms: RTO = max(200 ms, 20 + 4*10) = 200 ms.
    assert_eq!(c.info().rto, dms(200));
    let mut t = ms(40);
    for (k, rto) in [200u64, 400, 800, 1600, 2000, 2000].into_iter().enumerate() {
        t += dms(rto);
        assert_eq!(c.poll_timeout(), Some(t), "RTO #{}", k + 1);
        c.handle_timeout(t - dms(1)); // stale wake-up: harmless
        none(&mut c, t - dms(1));
        c.handle_timeout(t);
        let r = one(&mut c, t);
        assert_eq!((coff(&r), r.payload_len), (0, 1000));
        assert_eq!(c.stats().rtos, k as u64 + 1);
    }
    assert_eq!(
        c.stats().rto_sum_ns,
        [200u128, 400, 800, 1600, 2000, 2000].iter().sum::<u128>() * 1_000_000
    );
    assert_eq!(c.stats().retrans_segments, 6);
    // RFC 5681 §3.1: loss window after the RTO, ssthresh = max(FlightSize/2, 2 SMSS).
    assert_eq!((c.info().cwnd, c.info().ssthresh), (1000, 2000));
    // The ACK of a retransmitted segment gives no RTT sample (Karn): RTO stays backed off.
    ack(&mut c, t + dms(20), 1000, W, &[]);
    assert_eq!(c.poll_timeout(), None);
    assert_eq!(c.stats().rtt_samples, 1);
    c.send(1000);
    one(&mut c, t + dms(20));
    assert_eq!(c.poll_timeout(), Some(t + dms(20) + dms(2000)));
}

#[test]
fn test_established_go_back_n_after_rto() {
    let (mut c, _s) = established(cfg(false), cfg(false));
    c.send(10_000);
    assert_eq!(drain(&mut c, ms(40)).len(), 10);
    c.handle_timeout(ms(240));
    assert_eq!(offs(&drain(&mut c, ms(240))), vec![0], "cwnd = 1 SMSS");
    assert_eq!(c.info().bytes_in_flight, 1000);
    ack(&mut c, ms(260), 1000, W, &[]);
    assert_eq!(c.info().cwnd, 2000);
    assert_eq!(offs(&drain(&mut c, ms(260))), vec![1000, 2000]);
    // Two segments acknowledged, one SMSS more: slow start after a timeout (RFC 3465 §2.3).
    ack(&mut c, ms(280), 3000, W, &[]);
    assert_eq!(c.info().cwnd, 3000);
    assert_eq!(offs(&drain(&mut c, ms(280))), vec![3000, 4000, 5000]);
    // The receiver had everything else: the ACK jumps, no more retransmissions.
    ack(&mut c, ms(300), 10_000, W, &[]);
    none(&mut c, ms(300));
    assert_eq!(c.stats().retrans_segments, 6);
    assert_eq!(c.poll_timeout(), None);
}

#[test]
fn test_no_rtt_sample_from_an_ack_that_also_covers_retransmitted_data() {
    // Go-back-N after an RTO resends 0..7000; the receiver had 7000..10000 (sent at 40 ms) all
    // along, so the ACK of 10000 at 300 ms covers both. 7000..10000 were never resent, but the
    // ACK left when the retransmissions filled the hole: 260 ms would be the repair time, not
    // an RTT. Karn (RFC 6298 §3) as Linux applies it (FLAG_RETRANS_DATA_ACKED): no sample.
    let linux = |sack| TcpConfig {
        cwnd_rules: CwndRules::Linux,
        ..cfg(sack)
    };
    let (mut c, _s) = established(linux(false), linux(false));
    c.send(10_000);
    assert_eq!(drain(&mut c, ms(40)).len(), 10);
    let t = c.poll_timeout().unwrap(); // Linux RTO: SRTT + rttvar (at least 200 ms)
    c.handle_timeout(t);
    assert_eq!(offs(&drain(&mut c, t)), vec![0]);
    ack(&mut c, t + dms(20), 1000, W, &[]);
    assert_eq!(offs(&drain(&mut c, t + dms(20))), vec![1000, 2000]);
    ack(&mut c, t + dms(40), 3000, W, &[]);
    assert_eq!(
        offs(&drain(&mut c, t + dms(40))),
        vec![3000, 4000, 5000, 6000]
    );
    assert_eq!(c.stats().rtt_samples, 1, "the handshake's only");
    ack(&mut c, t + dms(60), 10_000, W, &[]);
    assert_eq!(
        c.stats().rtt_samples,
        1,
        "no sample from segments acked with resent ones"
    );
    assert_eq!(c.stats().rtt_max, Some(dms(20)));
    assert_eq!(c.info().srtt, dms(20));
    // New data, never resent, acknowledged alone: a sample again.
    c.send(1000);
    let t = t + dms(60);
    one(&mut c, t);
    ack(&mut c, t + dms(30), 11_000, W, &[]);
    assert_eq!(c.stats().rtt_samples, 2);
    assert_eq!(c.stats().rtt_max, Some(dms(30)));

    // The RFC rules keep RFC 6298 §3's letter: 7000..10000 were never resent, so 260 ms.
    let (mut c, _s) = established(cfg(false), cfg(false));
    c.send(10_000);
    drain(&mut c, ms(40));
    c.handle_timeout(ms(240));
    drain(&mut c, ms(240));
    ack(&mut c, ms(260), 1000, W, &[]);
    drain(&mut c, ms(260));
    ack(&mut c, ms(280), 3000, W, &[]);
    drain(&mut c, ms(280));
    ack(&mut c, ms(300), 10_000, W, &[]);
    assert_eq!(c.stats().rtt_samples, 2);
    assert_eq!(c.stats().rtt_max, Some(dms(260)));
}

#[test]
fn test_established_persist_probe_on_zero_window() {
    let (mut c, _s) = established(cfg(true), cfg(true));
    c.send(1000);
    one(&mut c, ms(40));
    ack(&mut c, ms(60), 1000, 0, &[]);
    assert_eq!(c.info().peer_rwin, 0);
    c.send(5000);
    none(&mut c, ms(60));
    assert_eq!(
        c.poll_timeout(),
        Some(ms(260)),
        "persist timer = RTO (200 ms)"
    );
    c.handle_timeout(ms(259));
    none(&mut c, ms(259));
    c.handle_timeout(ms(260));
    let p = one(&mut c, ms(260));
    assert_eq!(
        (tcp(&p).seq, p.payload_len, tcp(&p).flags),
        (CISS + 1000, 0, TcpFlags::ACK),
        "probe with SEQ = SND.UNA - 1"
    );
    assert_eq!(c.stats().persist_probes, 1);
    assert_eq!(c.poll_timeout(), Some(ms(660)), "backoff: 400 ms");
    ack(&mut c, ms(280), 1000, 0, &[]);
    none(&mut c, ms(280));
    c.handle_timeout(ms(660));
    one(&mut c, ms(660));
    assert_eq!(c.poll_timeout(), Some(ms(1460)), "backoff: 800 ms");
    // Window update: data resumes at once.
    ack(&mut c, ms(700), 1000, W, &[]);
    let v = drain(&mut c, ms(700));
    assert_eq!(offs(&v), vec![1000, 2000, 3000, 4000, 5000]);
    assert_eq!(c.poll_timeout(), Some(ms(900)));
    assert_eq!(c.stats().persist_probes, 2);
    assert_eq!(c.stats().retrans_segments, 0);
}

#[test]
fn test_established_pacing_spaces_segments() {
    let mut ccfg = cfg(true);
    ccfg.pacing = true;
    let (mut c, _s) = established(ccfg, cfg(true));
    c.send(3000);
    // cwnd 10000 B, SRTT 20 ms, slow start ratio 2: 8 Mbit/s; 1000 B of payload = 1 ms
    // (Linux paces payload bytes).
    assert_eq!(c.info().pacing_rate_bps, Some(8e6));
    let v = drain(&mut c, ms(40));
    assert_eq!(offs(&v), vec![0]);
    let t1 = ms(40) + rantcp_core::Duration::from_micros(1000);
    assert_eq!(c.poll_timeout(), Some(t1));
    none(&mut c, t1 - rantcp_core::Duration(1));
    c.handle_timeout(t1);
    assert_eq!(offs(&drain(&mut c, t1)), vec![1000]);
}

#[test]
fn test_send_buffer_limits_send() {
    let mut ccfg = cfg(true);
    ccfg.snd_buf_bytes = 5000;
    let (mut c, _s) = established(ccfg, cfg(true));
    assert_eq!(c.send(8000), 5000);
    assert_eq!(c.send_buffer_free(), 0);
    drain(&mut c, ms(40));
    ack(&mut c, ms(60), 2000, W, &[]);
    assert_eq!(c.send_backlog(), 3000);
    assert_eq!(c.send(8000), 2000);
}

#[test]
fn test_established_ack_inside_a_segment_trims_it() {
    // An ACK that stops inside a segment (e.g. an ES-TCP split host withholding 2 bytes).
    let (mut c, _s) = established(cfg(true), cfg(true));
    c.send(3000);
    assert_eq!(drain(&mut c, ms(40)).len(), 3);
    ack(&mut c, ms(60), 1498, W, &[]);
    assert_eq!(c.info().bytes_in_flight, 1502);
    assert_eq!(c.send_backlog(), 1502);
    assert_eq!(c.stats().bytes_acked, 1498);
    // RTO: the trimmed remainder is resent from SND.UNA.
    let t = ms(60) + c.info().rto;
    assert_eq!(c.poll_timeout(), Some(t));
    c.handle_timeout(t);
    let r = one(&mut c, t);
    assert_eq!((coff(&r), r.payload_len), (1498, 502));
    ack(&mut c, t + dms(20), 3000, W, &[]);
    assert_eq!(c.info().bytes_in_flight, 0);
    assert_eq!(c.stats().bytes_acked, 3000);
    assert!(c.all_acked());
}

#[test]
fn test_established_sack_rule3_resends_tail_hole_without_rto() {
    // Holes at 2000 and 8000 in a 10-segment flight with no more data to send. The tail hole
    // has only one SACKed segment above it, so IsLost() stays false; RFC 6675 NextSeg rule 3
    // resends it once cwnd allows instead of waiting for the RTO.
    let (mut c, _s) = established(cfg(true), cfg(true));
    ack(&mut c, ms(30), 0, W, &[]);
    c.send(10_000);
    assert_eq!(drain(&mut c, ms(40)).len(), 10);
    ack(&mut c, ms(60), 2000, W, &[]);
    none(&mut c, ms(60));
    ack(&mut c, ms(61), 2000, W, &[(3000, 4000)]);
    ack(&mut c, ms(62), 2000, W, &[(3000, 5000)]);
    none(&mut c, ms(62));
    ack(&mut c, ms(63), 2000, W, &[(3000, 6000)]);
    assert_eq!(offs(&drain(&mut c, ms(63))), vec![2000]);
    // ssthresh = cwnd = 8000/2 = 4000; pipe = 4 originals + 1 rtx = 5000.
    assert_eq!(c.info().bytes_in_flight, 5000);
    ack(&mut c, ms(64), 2000, W, &[(3000, 7000)]);
    ack(&mut c, ms(65), 2000, W, &[(3000, 8000)]);
    none(&mut c, ms(65));
    // 9000 SACKed: pipe = 1000 (rtx of 2000) + 1000 (hole 8000, not lost) <= cwnd 4000 - SMSS:
    // rule 3 resends 8000.
    ack(&mut c, ms(66), 2000, W, &[(9000, 10_000), (3000, 8000)]);
    assert_eq!(offs(&drain(&mut c, ms(66))), vec![8000]);
    ack(&mut c, ms(80), 8000, W, &[(9000, 10_000)]);
    none(&mut c, ms(80));
    ack(&mut c, ms(86), 10_000, W, &[]);
    assert!(!c.info().in_recovery);
    assert_eq!((c.stats().retrans_segments, c.stats().rtos), (2, 0));
}

#[test]
fn test_established_small_window_sws_then_persist_forces_send() {
    // The peer offers 592 bytes (< MSS and < half the largest window it offered): sender SWS
    // avoidance holds the data; the persist timer then forces out what fits
    // (RFC 9293 §3.8.6.2.1 (d)).
    let (mut c, _s) = established(cfg(true), cfg(true));
    c.send(1000);
    one(&mut c, ms(40));
    ack(&mut c, ms(60), 1000, 37, &[]); // 37 << 4 = 592 bytes
    assert_eq!(c.info().peer_rwin, 592);
    c.send(5000);
    none(&mut c, ms(60));
    assert_eq!(c.poll_timeout(), Some(ms(260)));
    c.handle_timeout(ms(260));
    let p = one(&mut c, ms(260));
    assert_eq!((coff(&p), p.payload_len), (1000, 592));
    assert_eq!(
        c.stats().persist_probes,
        0,
        "a forced data segment is not a probe"
    );
    assert_eq!(c.poll_timeout(), Some(ms(460)), "RTO now covers the data");
}

#[test]
fn test_established_timestamps_end_rto_backoff_after_retransmission() {
    // With timestamps, the ACK of a retransmitted segment echoes the retransmission's TSval:
    // a valid sample (RFC 7323 §4.1) that ends the backoff, where Karn's rule alone gives none.
    let mut c = cfg(true);
    c.timestamps = true;
    let (mut c, _s) = established(c.clone(), c);
    c.send(1000);
    one(&mut c, ms(40));
    c.handle_timeout(ms(240));
    let r = one(&mut c, ms(240));
    assert_eq!(tcp(&r).options.timestamps.unwrap().0, 240);
    assert_eq!(c.info().rto, dms(400), "backed off");
    let (ip, mut h) = server_ack(1000, W, &[]);
    h.options.timestamps = Some((100, 240));
    c.handle_segment(ms(260), &ip, &h, 0);
    // Sample 20 ms: SRTT 20, RTTVAR 3/4*10 + 1/4*0 = 7.5 -> RTO max(200, 50) = 200, no backoff.
    assert_eq!(c.info().rto, dms(200));
    assert_eq!(
        c.stats().rtt_samples,
        1,
        "coarse samples are not in the statistics"
    );
}

#[test]
fn test_lost_retransmission_detected_without_rto_by_rack_or_when_enabled() {
    // The segment at 5000 is lost twice (original and first retransmission). Plain RFC 6675
    // waits for the RTO; with the pre-RACK lost-retransmission detection, or with RACK
    // (RFC 8985 §6.2: sent before a segment delivered later), SACKs for data sent after the
    // retransmission reveal the loss and the segment goes a third time without a timeout.
    for (detect, rack) in [(false, false), (true, false), (false, true)] {
        let mut ccfg = cfg(true);
        ccfg.initial_cwnd_segments = 20;
        ccfg.rack_tlp = rack;
        let mut p = Pair::new(
            ccfg,
            cfg(true),
            dms(10),
            100_000_000,
            Loss::Times(vec![(5000, 2)]),
        );
        p.c.set_lost_retransmit_detection(detect);
        p.run_until(ms(30));
        p.c.send(200_000);
        p.run_until(ms(3000));
        assert_eq!(p.delivered_to_server_app, 200_000);
        let tx = p
            .log
            .iter()
            .filter(|(_, to_s, pk, _)| *to_s && pk.payload_len > 0 && coff(pk) == 5000)
            .count();
        assert_eq!(tx, 3, "detect {detect} rack {rack}");
        let st = p.c.stats();
        if detect || rack {
            assert_eq!(
                (st.rtos, st.retrans_segments, st.fast_retransmits),
                (0, 2, 1),
                "detect {detect} rack {rack}"
            );
        } else {
            assert_eq!(st.rtos, 1);
        }
    }
}
