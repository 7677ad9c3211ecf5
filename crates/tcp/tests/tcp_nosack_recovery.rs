//! Fast recovery without SACK, exact segments at exact times: the Linux stack counts duplicate
//! ACKs as SACKed segments (Linux `tcp_add_reno_sack`, `tcp_remove_reno_sacks`) and sets the
//! window by PRR (`tcp_cwnd_reduction`, RFC 6937); the RFC stack inflates cwnd (RFC 6582 §3.2).
//!
//! The script: MSS 1000, IW 20 segments sent at 40 ms, every ACK scripted. Linux's reno
//! ssthresh is cwnd / 2 = 10 000 (`tcp_reno_ssthresh`); RFC 5681 eq. 4 gives FlightSize / 2 =
//! 10 000 too.

mod common;
use common::*;
use rantcp_core::Time;
use rantcp_tcp::{Endpoint, TcpConfig};

fn ack(c: &mut Endpoint, t: Time, off: u32) {
    let (ip, h) = server_ack(off, W, &[]);
    c.handle_segment(t, &ip, &h, 0);
}

fn offs(v: &[rantcp_wire::Packet]) -> Vec<u32> {
    v.iter().map(coff).collect()
}

const W: u16 = 62500; // 1 MB >> 4

/// A stack profile with the test's round numbers and SACK off.
fn nosack(profile: TcpConfig) -> TcpConfig {
    TcpConfig {
        mss: MSS,
        rcv_buf_bytes: 1_000_000,
        snd_buf_bytes: 1_000_000,
        sack: false,
        timestamps: false,
        initial_cwnd_segments: 20,
        ..profile
    }
}

/// 20 segments (offsets 0..19 000) in flight from 40 ms.
fn twenty_out(profile: TcpConfig) -> Endpoint {
    let (mut c, _s) = established(nosack(profile), cfg(false));
    ack(&mut c, ms(30), 0);
    c.send(100_000);
    assert_eq!(drain(&mut c, ms(40)).len(), 20);
    c
}

#[test]
fn test_linux_nosack_recovery_window_follows_prr_not_inflation() {
    // Segment 0 lost; a duplicate ACK for each later segment, one per ms from 60 ms.
    let mut c = twenty_out(TcpConfig::linux());
    let mut t = 60;
    let mut dup = |c: &mut Endpoint| {
        ack(c, ms(t), 0);
        let v = offs(&drain(c, ms(t)));
        t += 1;
        v
    };
    // Duplicate ACKs 1 and 2: each counts as a delivered segment, so the flight
    // (tcp_packets_in_flight) falls below cwnd and a new segment goes.
    assert_eq!(dup(&mut c), vec![20_000]);
    assert_eq!(dup(&mut c), vec![21_000]);
    assert!(!c.info().in_recovery);
    // The 3rd: the head is lost (tcp_newreno_mark_lost), recovery with ssthresh 10 000; PRR
    // lets out the retransmission (RecoverFS = 22 000 outstanding − 2 000 reported before).
    assert_eq!(dup(&mut c), vec![0]);
    let i = c.info();
    assert!(i.in_recovery);
    assert_eq!(i.ssthresh, 10_000);
    // In flight: 22 out − 3 reported − 1 lost + 1 resent.
    assert_eq!((i.bytes_in_flight, i.cwnd), (19_000, 19_000));
    // Duplicate ACKs 4..21: while the flight is above ssthresh PRR sends ⌈prr_delivered ·
    // 10 000 / 20 000⌉ − prr_out, one new segment per two ACKs (at 5, 7, .., 17); at 19 the
    // flight is down to ssthresh (19 000 − 16 000 + 7 000) and the reduction bound,
    // min(ssthresh − flight, max(prr_delivered − prr_out, DeliveredData)), lets one segment
    // out per ACK from 20 on.
    let mut sent = Vec::new();
    for k in 4..=21 {
        let v = dup(&mut c);
        let i = c.info();
        assert!(i.cwnd <= 19_000, "dupack {k}: cwnd {} inflated", i.cwnd);
        assert_eq!(
            i.cwnd, i.bytes_in_flight,
            "dupack {k}: PRR's cwnd is the flight"
        );
        if !v.is_empty() {
            sent.push(k);
        }
        assert!(v.len() <= 1);
    }
    assert_eq!(sent, vec![5, 7, 9, 11, 13, 15, 17, 20, 21]);
    // prr_out = 10 segments = ⌈19 delivered · ssthresh / RecoverFS⌉; the flight is ssthresh.
    assert_eq!(c.info().bytes_in_flight, 10_000);
    assert_eq!(c.stats().retrans_segments, 1);

    // The RFC stack on the same ACKs: nothing on duplicate ACKs 1-2, cwnd = ssthresh + 3 SMSS
    // at the third, + 1 SMSS per further duplicate ACK (RFC 6582 §3.2 steps 3-4).
    let mut r = twenty_out(TcpConfig::rfc());
    for (k, t) in (60..63).enumerate() {
        ack(&mut r, ms(t), 0);
        let v = offs(&drain(&mut r, ms(t)));
        assert_eq!(v, if k == 2 { vec![0] } else { vec![] });
    }
    assert_eq!((r.info().ssthresh, r.info().cwnd), (10_000, 13_000));
    for t in 63..81 {
        ack(&mut r, ms(t), 0);
        drain(&mut r, ms(t));
    }
    assert_eq!(r.info().cwnd, 31_000, "10 000 + 3 000 + 18 duplicate ACKs");
}

/// Segments 0 and 3 lost: duplicate ACKs for 1, 2, 4 (the third enters recovery and resends 0),
/// then the partial ACK for 0..2 at 70 ms.
fn partial_ack(profile: TcpConfig) -> (Endpoint, Vec<u32>) {
    let mut c = twenty_out(profile);
    for t in 60..63 {
        ack(&mut c, ms(t), 0);
        drain(&mut c, ms(t));
    }
    assert!(c.info().in_recovery);
    ack(&mut c, ms(70), 3000);
    let v = offs(&drain(&mut c, ms(70)));
    (c, v)
}

#[test]
fn test_linux_nosack_partial_ack_marks_the_next_hole_lost_and_prr_times_its_resend() {
    let (mut c, v) = partial_ack(TcpConfig::linux());
    // tcp_remove_reno_sacks: 3 segments acked, one filled the hole, two had been reported by
    // duplicate ACKs: 1 of 3 reported remains. tcp_newreno_mark_lost: 3000 is lost. PRR:
    // prr_delivered = 2 000, ⌈2 000 · 10 000 / 20 000⌉ − prr_out 1 000 = 0: nothing yet
    // (tcp_xmit_retransmit_queue is limited by cwnd); the flight is 19 out − 1 − 1 lost.
    assert_eq!(v, Vec::<u32>::new());
    let i = c.info();
    assert!(i.in_recovery);
    assert_eq!((i.bytes_in_flight, i.cwnd), (17_000, 17_000));
    // The next duplicate ACK (for segment 5) makes PRR's share one segment: the resend of the
    // lost 3000, not new data.
    ack(&mut c, ms(71), 3000);
    assert_eq!(offs(&drain(&mut c, ms(71))), vec![3000]);
    assert_eq!(c.stats().retrans_segments, 2);
    assert_eq!(c.stats().fast_retransmits, 1, "one recovery");

    // RFC 6582 §3.2 step 5: the partial ACK resends the first unacknowledged segment at once.
    let (_, v) = partial_ack(TcpConfig::rfc());
    assert_eq!(v, vec![3000]);
}

#[test]
fn test_linux_nosack_recovery_ends_above_the_recovery_point() {
    // Segment 0 lost; duplicate ACKs for 1..19 (the first two send 20 and 21, the third resends
    // 0, then PRR sends new data), then the ACK of everything up to the recovery point
    // (SND.NXT at entry = 22 000) — not the new segments sent in recovery.
    for (profile, held) in [(TcpConfig::linux(), true), (TcpConfig::rfc(), false)] {
        let mut c = twenty_out(profile);
        for t in 60..79 {
            ack(&mut c, ms(t), 0);
            drain(&mut c, ms(t));
        }
        assert!(c.info().in_recovery);
        let ssthresh = c.info().ssthresh;
        ack(&mut c, ms(90), 22_000);
        drain(&mut c, ms(90));
        // Linux tcp_is_non_sack_preventing_reopen holds recovery until something above the
        // recovery point is acknowledged; RFC 6582 §3.2 step 6 ends it on the full ACK.
        assert_eq!(c.info().in_recovery, held, "held: {held}");
        if held {
            // Duplicate ACKs at the recovery point count for nothing and start no recovery.
            for t in 91..95 {
                ack(&mut c, ms(t), 22_000);
                drain(&mut c, ms(t));
            }
            assert_eq!(c.stats().fast_retransmits, 1);
            ack(&mut c, ms(100), 23_000);
            drain(&mut c, ms(100));
            let i = c.info();
            assert!(!i.in_recovery);
            // tcp_end_cwnd_reduction: cwnd = ssthresh.
            assert_eq!((i.cwnd, i.ssthresh), (ssthresh, ssthresh));
        } else {
            assert_eq!(c.info().cwnd, ssthresh, "RFC 6582 §3.2 step 6: deflate");
        }
    }
}
