//! A retransmission timeout that the timestamps show was spurious is undone (Linux
//! `tcp_process_loss` → `tcp_try_undo_loss` with `tcp_packet_delayed`; RFC 3522 §3.2), and BBR
//! stays in its Loss state until the endpoint leaves it (`bbr_set_cwnd_to_recover_or_restore`
//! reads `icsk_ca_state`).
//!
//! The path is scripted: a window goes out and is held (a radio blockage), the timer fires, and
//! then either the held originals arrive (the timeout was spurious: the data was delayed, not
//! lost) or only the timer's retransmission does (the originals were lost).

mod common;
use common::*;
use rantcp_core::Time;
use rantcp_tcp::cc::CcKind;
use rantcp_tcp::{Endpoint, TcpConfig};
use rantcp_wire::Packet;

/// The Linux profile with the fixtures' round numbers (MSS 1000, 1 MB buffers) and timestamps;
/// `rto_undo` = false turns every undo off (F-RTO and the D-SACK undo too, as in the rfc
/// profile), so that the control shows the go-back-N.
fn lcfg(cc: CcKind, rto_undo: bool) -> TcpConfig {
    TcpConfig {
        mss: MSS,
        rcv_buf_bytes: 1_000_000,
        snd_buf_bytes: 1_000_000,
        cc,
        rto_undo,
        frto: rto_undo,
        dsack: rto_undo,
        recovery_undo: rto_undo,
        ..TcpConfig::linux()
    }
}

/// Run `e`'s timers from `from` to `until` (inclusive), collecting what it sends, with no input.
fn run_until(e: &mut Endpoint, from: Time, until: Time) -> Vec<(Time, Packet)> {
    let mut out = Vec::new();
    let mut now = from;
    loop {
        out.extend(drain(e, now).into_iter().map(|p| (now, p)));
        match e.poll_timeout() {
            Some(t) if t <= until => {
                now = t.max(now);
                e.handle_timeout(now);
            }
            _ => return out,
        }
    }
}

/// Handshake, then the client's first flight at 40 ms and what its timers send until `until`, all
/// held by the path. Returns (client, server, held packets).
fn blocked(cc: CcKind, rto_undo: bool, until: Time) -> (Endpoint, Endpoint, Vec<(Time, Packet)>) {
    let (mut c, s) = established(lcfg(cc, rto_undo), lcfg(cc, rto_undo));
    c.send(200_000);
    let held = run_until(&mut c, ms(40), until);
    assert!(c.stats().rtos >= 1, "{cc:?}: the timer fired");
    (c, s, held)
}

/// The last transmission of the segment at offset 0 the blocked link held: the timer's
/// retransmission of it.
fn last_copy_of_offset_0(held: &[(Time, Packet)]) -> Packet {
    held.iter()
        .filter(|(_, p)| is_data(p) && coff(p) == 0)
        .map(|(_, p)| *p)
        .next_back()
        .expect("the timer retransmitted offset 0")
}

fn is_data(p: &Packet) -> bool {
    p.payload_len > 0
}

#[test]
fn test_spurious_rto_is_undone_when_the_held_originals_arrive() {
    for cc in CcKind::ALL {
        let (mut c, mut s, held) = blocked(cc, true, ms(600));
        let originals: Vec<Packet> = held
            .iter()
            .filter(|(_, p)| is_data(p))
            .map(|(_, p)| *p)
            .collect();
        // The first transmission of each offset, in order (the timer's copies of offset 0 stay
        // held behind them).
        let mut seen = std::collections::BTreeMap::new();
        for p in &originals {
            seen.entry(coff(p)).or_insert(*p);
        }
        let first: Vec<Packet> = seen.values().copied().collect();
        let top = first.iter().map(|p| coff(p) + p.payload_len).max().unwrap();
        let rtx_before = c.stats().retrans_segments;
        assert!(rtx_before >= 1, "{cc:?}");
        let cwnd_before_rto = 10 * MSS as u64;

        let (_, sent) = deliver_and_ack(&mut c, &mut s, ms(600), &first);
        let st = c.stats();
        assert_eq!(
            st.rto_undos, 1,
            "{cc:?}: the echoed timestamps predate the retransmission"
        );
        // Nothing is resent as lost: everything sent in reply is new data.
        assert_eq!(
            st.retrans_segments, rtx_before,
            "{cc:?}: no go-back-N after the undo"
        );
        assert!(
            sent.iter().filter(|p| is_data(p)).all(|p| coff(p) >= top),
            "{cc:?}: only new data follows the undo"
        );
        // The window from before the timeout is back (Linux tcp_undo_cwnd_reduction; BBR
        // restores its saved cwnd on leaving the Loss state).
        assert!(
            c.info().cwnd >= cwnd_before_rto,
            "{cc:?}: cwnd {}",
            c.info().cwnd
        );
    }
}

#[test]
fn test_without_undo_the_timeout_goes_back_n_over_delivered_data() {
    // The control: the same path with the undo off (the rfc profile's behaviour) resends the
    // held window although it arrives, as rantcp did before.
    let (mut c, mut s, held) = blocked(CcKind::NewReno, false, ms(600));
    let mut seen = std::collections::BTreeMap::new();
    for (_, p) in held.iter().filter(|(_, p)| is_data(p)) {
        seen.entry(coff(p)).or_insert(*p);
    }
    let first: Vec<Packet> = seen.values().copied().collect();
    let rtx_before = c.stats().retrans_segments;
    deliver_and_ack(&mut c, &mut s, ms(600), &first);
    assert_eq!(c.stats().rto_undos, 0);
    assert!(c.stats().retrans_segments > rtx_before);
}

#[test]
fn test_real_loss_is_not_undone() {
    // The originals are lost; only the timer's retransmission of offset 0 arrives. Its ACK
    // echoes the retransmission's own timestamp: no undo, the timeout's recovery goes on.
    for cc in CcKind::ALL {
        let (mut c, mut s, held) = blocked(cc, true, ms(600));
        let rtx0 = last_copy_of_offset_0(&held);
        deliver_and_ack(&mut c, &mut s, ms(600), &[rtx0]);
        assert_eq!(c.stats().rto_undos, 0, "{cc:?}");
    }
}

#[test]
fn test_bbr_keeps_its_loss_state_until_the_timeouts_recovery_ends() {
    // Two timeouts of one episode (the second retransmits offset 0 again, cwnd 1 segment), the
    // originals lost; the second retransmission arrives and is ACKed while nine segments of the
    // timed-out flight are still to be repaired. Linux BBR is still in TCP_CA_Loss: it slow-starts
    // from its one-segment window (bbr_set_cwnd, floored at bbr_cwnd_min_target = 4) and gets
    // its saved cwnd back only when the recovery point is acknowledged. (rantcp's BBR used to
    // guess the end of the Loss state from what was in flight at the last timeout, one segment
    // after a repeated timeout, and restored the whole window here, into a go-back-N.)
    let (mut c, mut s, held) = blocked(CcKind::Bbr, true, ms(1000));
    assert_eq!(c.stats().rtos, 2, "two timeouts by 1 s");
    let rtx0 = last_copy_of_offset_0(&held);
    deliver_and_ack(&mut c, &mut s, ms(1000), &[rtx0]);
    assert_eq!(c.stats().rto_undos, 0);
    assert_eq!(
        c.info().cwnd,
        4 * MSS as u64,
        "slow start from the loss window, not the saved cwnd"
    );
}
