//! D-SACK (RFC 2883), the undo of fast recoveries (Linux `tcp_try_undo_recovery`,
//! `tcp_try_undo_partial`, `tcp_try_undo_dsack`), F-RTO (RFC 5682) and RACK's reordering-window
//! adaptation (RFC 8985 §6.2 Step 4), each on a scripted path between two real endpoints, each
//! beside a control with the rule off that shows the rule is what makes the difference.
//!
//! Each was also seen to fail with its rule alone removed from the code (2026-11-27): F-RTO
//! (`frto_on_ack` a no-op) → the three `test_frto_*`; the partial undo → `test_partial_*`; the
//! D-SACK undo in Open → `test_dsack_of_every_*`; the full undo → `test_recovery_is_undone_*`;
//! `update_reo_wnd` → `test_rack_widens_*`; the dubious-D-SACK check →
//! `test_dsack_of_a_segment_never_*`; the receiver's out-of-order D-SACK →
//! `test_receiver_reports_an_out_of_order_*`.

mod common;
use common::*;
use rantcp_core::Time;
use rantcp_tcp::cc::CcKind;
use rantcp_tcp::{Endpoint, TcpConfig};
use rantcp_wire::{Packet, SackBlock};

/// The Linux profile with the fixtures' round numbers, NewReno, timestamps as given.
fn lx(ts: bool) -> TcpConfig {
    TcpConfig {
        mss: MSS,
        rcv_buf_bytes: 1_000_000,
        snd_buf_bytes: 1_000_000,
        cc: CcKind::NewReno,
        timestamps: ts,
        ..TcpConfig::linux()
    }
}

fn data(v: &[Packet]) -> Vec<Packet> {
    v.iter().filter(|p| p.payload_len > 0).copied().collect()
}

/// Run `e`'s timers from `from` to `until`, collecting what it sends, with no input.
fn run_until(e: &mut Endpoint, from: Time, until: Time) -> Vec<Packet> {
    let mut out = Vec::new();
    let mut now = from;
    loop {
        out.extend(drain(e, now));
        match e.poll_timeout() {
            Some(t) if t <= until => {
                now = t.max(now);
                e.handle_timeout(now);
            }
            _ => return out,
        }
    }
}

fn blk(l: u32, r: u32) -> SackBlock {
    SackBlock {
        left: CISS + 1 + l,
        right: CISS + 1 + r,
    }
}

// ------------------------------------------------------------------ receiver (RFC 2883 §4)

#[test]
fn test_receiver_reports_an_old_duplicate_as_the_first_sack_block() {
    for dsack in [true, false] {
        let cfg = TcpConfig { dsack, ..lx(true) };
        let (mut c, mut s) = established(cfg.clone(), cfg);
        c.send(3 * MSS as u64);
        let pk = data(&drain(&mut c, ms(40)));
        assert_eq!(pk.len(), 3);
        for p in &pk {
            deliver(&mut s, ms(50), p);
        }
        drain(&mut s, ms(50));
        deliver(&mut s, ms(60), &pk[1]); // a duplicate, below RCV.NXT
        let acks = drain(&mut s, ms(60));
        assert_eq!(acks.len(), 1, "an old duplicate is ACKed at once");
        let blocks = tcp(&acks[0]).options.sack_blocks().to_vec();
        if dsack {
            assert_eq!(blocks, vec![blk(1000, 2000)], "RFC 2883 §4 (1)");
            assert_eq!(s.stats().dsacks_sent, 1);
        } else {
            assert!(blocks.is_empty());
        }
        // Reported once: the next ACK carries none.
        deliver(&mut s, ms(70), &pk[2]);
        let again = drain(&mut s, ms(70));
        if dsack {
            assert_eq!(
                tcp(&again[0]).options.sack_blocks(),
                &[blk(2000, 3000)],
                "a new duplicate, a new D-SACK; the old one is not repeated"
            );
        }
    }
}

#[test]
fn test_receiver_reports_an_out_of_order_duplicate_then_its_block() {
    for dsack in [true, false] {
        let cfg = TcpConfig { dsack, ..lx(true) };
        let (mut c, mut s) = established(cfg.clone(), cfg);
        c.send(3 * MSS as u64);
        let pk = data(&drain(&mut c, ms(40)));
        deliver(&mut s, ms(50), &pk[1]); // the first is late
        deliver(&mut s, ms(50), &pk[2]);
        drain(&mut s, ms(50));
        deliver(&mut s, ms(60), &pk[2]); // a duplicate above RCV.NXT
        let acks = drain(&mut s, ms(60));
        let blocks = tcp(&acks[0]).options.sack_blocks().to_vec();
        if dsack {
            // RFC 2883 §4 (2): the duplicate first, then the block that holds it.
            assert_eq!(blocks, vec![blk(2000, 3000), blk(1000, 3000)]);
        } else {
            assert_eq!(blocks, vec![blk(1000, 3000)]);
        }
    }
}

// ------------------------------------------------------------------ fast-recovery undo

/// Ten segments at 40 ms; the path delivers `early` at 50 ms (the first segment is late), the
/// ACKs reach the client at 60 ms, RACK marks the first lost and fast recovery resends it.
/// Returns (client, server, the ten originals, the retransmission).
fn reordered(
    cfg: TcpConfig,
    early: std::ops::Range<usize>,
) -> (Endpoint, Endpoint, Vec<Packet>, Packet) {
    let (mut c, mut s) = established(cfg.clone(), cfg);
    c.send(10 * MSS as u64);
    let pk = data(&drain(&mut c, ms(40)));
    assert_eq!(pk.len(), 10);
    let (_, sent) = deliver_and_ack(&mut c, &mut s, ms(50), &pk[early]);
    assert_eq!(
        c.stats().fast_retransmits,
        1,
        "RACK found the first segment lost"
    );
    let rtx = data(&sent);
    assert!(
        !rtx.is_empty() && coff(&rtx[0]) == 0,
        "fast retransmission of offset 0"
    );
    assert!(c.info().in_recovery);
    (c, s, pk, rtx[0])
}

#[test]
fn test_recovery_is_undone_when_the_timestamps_show_the_original_arrived() {
    // Linux tcp_try_undo_recovery via tcp_packet_delayed: the full ACK echoes the original's
    // TSval (40 ms), older than the retransmission (60 ms).
    for undo in [true, false] {
        let cfg = TcpConfig {
            recovery_undo: undo,
            ..lx(true)
        };
        let (mut c, mut s, pk, _) = reordered(cfg, 1..10);
        let cwnd_in_recovery = c.info().cwnd;
        deliver_and_ack(&mut c, &mut s, ms(70), &pk[0..1]);
        assert!(!c.info().in_recovery);
        if undo {
            assert_eq!(c.stats().full_undos, 1);
            assert!(c.info().cwnd >= 10 * MSS as u64, "cwnd {}", c.info().cwnd);
            assert!(
                c.info().ssthresh > 10 * MSS as u64,
                "ssthresh back from before"
            );
        } else {
            assert_eq!(c.stats().full_undos, 0);
            assert!(c.info().cwnd <= cwnd_in_recovery.max(7 * MSS as u64));
        }
    }
}

#[test]
fn test_partial_ack_of_a_delayed_original_undoes_the_recovery() {
    // Linux tcp_try_undo_partial: the two last segments are still on their way when the late
    // original fills the hole; the ACK (partial: below the recovery point) echoes the original's
    // timestamp and no retransmission is in flight any more.
    for undo in [true, false] {
        let cfg = TcpConfig {
            recovery_undo: undo,
            ..lx(true)
        };
        let (mut c, mut s, pk, _) = reordered(cfg, 1..8);
        deliver_and_ack(&mut c, &mut s, ms(70), &pk[0..1]);
        if undo {
            assert_eq!(c.stats().partial_undos, 1);
            assert!(!c.info().in_recovery, "back to Open");
            assert!(c.info().cwnd >= 10 * MSS as u64, "cwnd {}", c.info().cwnd);
        } else {
            assert_eq!(c.stats().partial_undos, 0);
            assert!(c.info().in_recovery, "the recovery goes on");
        }
    }
}

#[test]
fn test_dsack_of_every_retransmission_undoes_the_recovery() {
    // No timestamps, so only D-SACK can tell: the original ends the recovery (no undo: the ACK
    // cannot say which copy arrived), then the retransmission arrives and is D-SACKed, which
    // shows every retransmission of the episode unnecessary (Linux undo_retrans = 0,
    // tcp_try_undo_dsack in the Open state).
    for dsack in [true, false] {
        let cfg = TcpConfig { dsack, ..lx(false) };
        let (mut c, mut s, pk, rtx) = reordered(cfg, 1..10);
        deliver_and_ack(&mut c, &mut s, ms(70), &pk[0..1]);
        assert_eq!(
            c.stats().full_undos,
            0,
            "no timestamps: nothing shows it yet"
        );
        let cwnd_after = c.info().cwnd;
        assert!(cwnd_after < 10 * MSS as u64);
        let (acks, _) = deliver_and_ack(&mut c, &mut s, ms(75), &[rtx]);
        if dsack {
            assert_eq!(tcp(&acks[0]).options.sack_blocks(), &[blk(0, 1000)]);
            assert_eq!(c.stats().dsacks_received, 1);
            assert_eq!(c.stats().dsack_undos, 1);
            assert!(c.info().cwnd >= 10 * MSS as u64, "cwnd {}", c.info().cwnd);
        } else {
            assert_eq!(c.stats().dsack_undos, 0);
            assert_eq!(c.info().cwnd, cwnd_after);
        }
    }
}

#[test]
fn test_dsack_of_a_segment_never_retransmitted_is_ignored() {
    // A D-SACK that reports more duplicates than were retransmitted is dubious and ignored
    // (Linux tcp_dsack_seen: dsack_dups > total_retrans).
    let (mut c, mut s) = established(lx(false), lx(false));
    c.send(3 * MSS as u64);
    let pk = data(&drain(&mut c, ms(40)));
    for p in &pk {
        deliver(&mut s, ms(50), p);
    }
    drain(&mut s, ms(50));
    // A network duplicate the sender never retransmitted.
    let (acks, _) = deliver_and_ack(&mut c, &mut s, ms(60), &pk[0..1]);
    assert_eq!(tcp(&acks[0]).options.sack_blocks(), &[blk(0, 1000)]);
    assert_eq!(c.stats().retrans_segments, 0);
    assert_eq!(
        c.stats().dsacks_received,
        0,
        "dubious: nothing was retransmitted"
    );
}

// ------------------------------------------------------------------ F-RTO (RFC 5682)

/// No timestamps (so the Eifel undo cannot act): twenty segments queued, the first ten sent at
/// 40 ms and held until after the timeout; the timer's retransmission of offset 0 then arrives
/// and its ACK reaches the client. Returns (client, server, held originals 1..9, what the
/// client sent on that ACK).
fn timed_out(frto: bool) -> (Endpoint, Endpoint, Vec<Packet>, Vec<Packet>) {
    let cfg = TcpConfig { frto, ..lx(false) };
    let (mut c, mut s) = established(cfg.clone(), cfg);
    c.send(20 * MSS as u64);
    let held = data(&run_until(&mut c, ms(40), ms(400)));
    assert_eq!(c.stats().rtos, 1, "one timeout by 400 ms");
    let rtx0 = *held.iter().rev().find(|p| coff(p) == 0).unwrap();
    let originals: Vec<Packet> = held[1..10].to_vec();
    assert!(originals
        .iter()
        .enumerate()
        .all(|(i, p)| coff(p) == (i as u32 + 1) * MSS));
    let (_, sent) = deliver_and_ack(&mut c, &mut s, ms(400), &[rtx0]);
    (c, s, originals, data(&sent))
}

#[test]
fn test_frto_sends_new_data_after_the_first_ack_of_a_timeout() {
    // RFC 5682 §3.1 step 2.b: the ACK advances SND.UNA below the recovery point, so new data
    // goes instead of the retransmissions of what the timeout marked lost.
    let (_, _, _, sent) = timed_out(true);
    assert!(!sent.is_empty());
    assert!(
        sent.iter().all(|p| coff(p) >= 10 * MSS),
        "new data only: {:?}",
        sent.iter().map(coff).collect::<Vec<_>>()
    );
    let (_, _, _, sent) = timed_out(false);
    assert!(!sent.is_empty());
    assert_eq!(
        coff(&sent[0]),
        MSS,
        "without F-RTO the go-back-N resends offset 1000"
    );
}

#[test]
fn test_frto_undoes_a_timeout_when_never_retransmitted_data_is_acked() {
    // Step 3.b: the held originals arrive after the new data went; their ACK covers data never
    // retransmitted, sent before the timeout: spurious (Linux TCPSpuriousRTOs + TCPLossUndo).
    for frto in [true, false] {
        let (mut c, mut s, originals, _) = timed_out(frto);
        let cwnd_rto = c.info().cwnd;
        let rtx_before = c.stats().retrans_segments;
        deliver_and_ack(&mut c, &mut s, ms(420), &originals);
        let st = c.stats().clone();
        if frto {
            assert_eq!((st.spurious_rtos, st.rto_undos), (1, 1));
            assert!(c.info().cwnd >= 10 * MSS as u64, "cwnd {}", c.info().cwnd);
            assert_eq!(st.retrans_segments, rtx_before, "nothing more resent");
        } else {
            assert_eq!((st.spurious_rtos, st.rto_undos), (0, 0));
            assert!(c.info().cwnd < 10 * MSS as u64 && cwnd_rto < 10 * MSS as u64);
        }
    }
}

#[test]
fn test_frto_keeps_a_real_loss() {
    // Step 3.a: the originals were lost; the new data arrives and the receiver SACKs it above
    // the hole: the loss was real, the conventional recovery resends the lost segments.
    let (mut c, mut s, _, sent) = timed_out(true);
    let (_, again) = deliver_and_ack(&mut c, &mut s, ms(420), &sent);
    assert_eq!(c.stats().spurious_rtos, 0);
    assert_eq!(c.stats().rto_undos, 0);
    let again = data(&again);
    assert!(
        !again.is_empty() && coff(&again[0]) == MSS,
        "offset 1000 is resent"
    );
}

// ------------------------------------------------------------------ RACK reo_wnd_mult

/// Ten segments delivered with the second and third swapped (reordering seen, RFC 8985 §6.2
/// Step 3) or in order; then ten more held past a timeout and delivered together with the
/// timer's retransmission, which comes back D-SACKed; then ten more delivered in order.
fn reo_wnd_after_dsack(swap: bool) -> u32 {
    let (mut c, mut s) = established(lx(true), lx(true));
    c.send(10 * MSS as u64);
    let mut pk = data(&drain(&mut c, ms(40)));
    if swap {
        pk.swap(1, 2);
    }
    deliver_and_ack(&mut c, &mut s, ms(50), &pk);
    assert_eq!(c.stats().retrans_segments, 0);
    c.send(10 * MSS as u64);
    let held = data(&run_until(&mut c, ms(60), ms(450)));
    assert!(c.stats().rtos >= 1);
    deliver_and_ack(&mut c, &mut s, ms(450), &held);
    assert!(
        c.stats().dsacks_received >= 1,
        "the timer's copy was D-SACKed"
    );
    c.send(10 * MSS as u64);
    let more = data(&drain(&mut c, ms(470)));
    deliver_and_ack(&mut c, &mut s, ms(480), &more);
    c.rack_reo_wnd_mult()
}

#[test]
fn test_rack_widens_its_reordering_window_after_a_dsack_once_reordering_was_seen() {
    assert_eq!(
        reo_wnd_after_dsack(true),
        2,
        "RFC 8985 §6.2 Step 4: reo_wnd_mult 2"
    );
    assert_eq!(
        reo_wnd_after_dsack(false),
        1,
        "no reordering seen: D-SACKs do not widen it"
    );
}
