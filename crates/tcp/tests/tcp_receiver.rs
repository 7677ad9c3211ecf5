//! Receiver behaviour with exact ACKs at exact times: delayed ACK (RFC 1122 §4.2.3.2,
//! RFC 5681 §4.2) with the ACK policies (every Nth segment, Linux quick-ACK), SACK generation (RFC 2018 §4), receive window and window updates
//! (RFC 9293 §3.8.6.2.2), zero-window probe answers (RFC 9293 §3.10.7.4).

mod common;
use common::*;
use rantcp_tcp::Endpoint;
use rantcp_wire::{SackBlock, TcpFlags};

fn data(s: &mut Endpoint, t: rantcp_core::Time, off: u32, len: u32) {
    let (ip, h, l) = client_data(off, len);
    s.handle_segment(t, &ip, &h, l);
}

fn sacks(p: &rantcp_wire::Packet) -> Vec<(u32, u32)> {
    tcp(p)
        .options
        .sack_blocks()
        .iter()
        .map(|b: &SackBlock| (b.left - CISS - 1, b.right - CISS - 1))
        .collect()
}

#[test]
fn test_established_one_full_segment_acked_at_delack_timeout() {
    let (_c, mut s) = established(cfg(true), cfg(true));
    data(&mut s, ms(50), 0, 1000);
    none(&mut s, ms(50));
    assert_eq!(s.poll_timeout(), Some(ms(90)), "delack_timeout = 40 ms");
    s.handle_timeout(ms(89));
    none(&mut s, ms(89));
    s.handle_timeout(ms(90));
    let a = one(&mut s, ms(90));
    assert_eq!(
        (tcp(&a).seq, sack_off(&a), tcp(&a).flags),
        (SISS + 1, 1000, TcpFlags::ACK)
    );
    assert_eq!(
        tcp(&a).window,
        ((1_000_000 - 1000) >> 4) as u16,
        "unread data shrinks the offer"
    );
    assert_eq!(s.poll_timeout(), None);
    // A stale wake-up is harmless.
    s.handle_timeout(ms(95));
    none(&mut s, ms(95));
}

#[test]
fn test_established_two_full_segments_acked_immediately() {
    let (_c, mut s) = established(cfg(true), cfg(true));
    data(&mut s, ms(50), 0, 1000);
    none(&mut s, ms(50));
    data(&mut s, ms(51), 1000, 1000);
    let a = one(&mut s, ms(51));
    assert_eq!(sack_off(&a), 2000);
    assert_eq!(
        s.poll_timeout(),
        None,
        "the delack timer is cancelled by the ACK"
    );
    assert_eq!(s.readable(), 2000);
    assert_eq!(s.recv(5000), 2000);
}

#[test]
fn test_established_delayed_ack_off_acks_every_segment() {
    let mut scfg = cfg(true);
    scfg.delayed_ack = false;
    let (_c, mut s) = established(cfg(true), scfg);
    for i in 0..3 {
        data(&mut s, ms(50 + i), i as u32 * 1000, 1000);
        let a = one(&mut s, ms(50 + i));
        assert_eq!(sack_off(&a), (i as u32 + 1) * 1000);
    }
}

#[test]
fn test_established_out_of_order_sack_blocks_and_hole_fill() {
    let (_c, mut s) = established(cfg(true), cfg(true));
    // Segment 0 is missing: immediate duplicate ACK with a SACK block.
    data(&mut s, ms(50), 1000, 1000);
    let a = one(&mut s, ms(50));
    assert_eq!((sack_off(&a), sacks(&a)), (0, vec![(1000, 2000)]));
    data(&mut s, ms(51), 3000, 1000);
    let a = one(&mut s, ms(51));
    assert_eq!(
        sacks(&a),
        vec![(3000, 4000), (1000, 2000)],
        "most recent block first (RFC 2018 §4)"
    );
    data(&mut s, ms(52), 5000, 1000);
    data(&mut s, ms(52), 7000, 1000);
    data(&mut s, ms(52), 9000, 1000);
    let a = drain(&mut s, ms(52));
    assert_eq!(a.len(), 1, "one ACK per drain");
    assert_eq!(
        sacks(&a[0]),
        vec![(9000, 10000), (7000, 8000), (5000, 6000), (3000, 4000)],
        "4 blocks without timestamps"
    );
    // Fill 2000..3000: merges (1000..4000) and that block goes first.
    data(&mut s, ms(53), 2000, 1000);
    let a = one(&mut s, ms(53));
    assert_eq!(
        sacks(&a),
        vec![(1000, 4000), (9000, 10000), (7000, 8000), (5000, 6000)]
    );
    // Filling the first hole: immediate cumulative ACK.
    data(&mut s, ms(54), 0, 1000);
    let a = one(&mut s, ms(54));
    assert_eq!(
        (sack_off(&a), sacks(&a)),
        (4000, vec![(9000, 10000), (7000, 8000), (5000, 6000)])
    );
    assert_eq!(s.readable(), 4000);
    // Old duplicate: immediate ACK.
    data(&mut s, ms(55), 0, 1000);
    let a = one(&mut s, ms(55));
    assert_eq!(sack_off(&a), 4000);
}

#[test]
fn test_established_three_sack_blocks_with_timestamps() {
    let mut c = cfg(true);
    c.timestamps = true;
    let (_c, mut s) = established(c.clone(), c);
    for off in [1000u32, 3000, 5000, 7000] {
        let (ip, mut h, l) = client_data(off, 1000);
        h.options.timestamps = Some((50, 20));
        s.handle_segment(ms(50), &ip, &h, l);
    }
    let a = one(&mut s, ms(50));
    assert_eq!(sacks(&a), vec![(7000, 8000), (5000, 6000), (3000, 4000)]);
    assert_eq!(
        tcp(&a).options.timestamps,
        Some((50, 20)),
        "TSecr = TS.Recent from the in-sequence segment"
    );
}

#[test]
fn test_established_zero_window_probe_answer_and_window_update() {
    let mut scfg = cfg(true);
    scfg.rcv_buf_bytes = 4000;
    let (_c, mut s) = established(cfg(true), scfg);
    data(&mut s, ms(50), 0, 1000);
    data(&mut s, ms(50), 1000, 1000);
    let a = one(&mut s, ms(50));
    assert_eq!((sack_off(&a), tcp(&a).window), (2000, 2000));
    data(&mut s, ms(51), 2000, 1000);
    data(&mut s, ms(51), 3000, 1000);
    let a = one(&mut s, ms(51));
    assert_eq!((sack_off(&a), tcp(&a).window), (4000, 0));
    // Beyond the window: dropped and answered with an ACK.
    data(&mut s, ms(52), 4000, 1000);
    let a = one(&mut s, ms(52));
    assert_eq!((sack_off(&a), tcp(&a).window), (4000, 0));
    assert_eq!(s.readable(), 4000);
    // Zero-window probe (SEQ = RCV.NXT - 1, no data) is answered with the current window.
    data(&mut s, ms(60), 3999, 0);
    let a = one(&mut s, ms(60));
    assert_eq!((sack_off(&a), tcp(&a).window), (4000, 0));
    // Reading 500 bytes is not enough to reopen (SWS avoidance: min(rcv_buf/2, MSS) = 1000).
    assert_eq!(s.recv(500), 500);
    none(&mut s, ms(70));
    // Reading another 500 opens 1000 bytes: a window update goes out.
    assert_eq!(s.recv(500), 500);
    let a = one(&mut s, ms(71));
    assert_eq!((sack_off(&a), tcp(&a).window), (4000, 1000));
    assert_eq!(s.info().rwin, 1000);
}

#[test]
fn test_established_data_piggybacks_pending_ack() {
    let (_c, mut s) = established(cfg(true), cfg(true));
    data(&mut s, ms(50), 0, 1000);
    none(&mut s, ms(50));
    assert_eq!(s.poll_timeout(), Some(ms(90)));
    s.send(500);
    let d = one(&mut s, ms(60));
    assert_eq!(
        (d.payload_len, sack_off(&d)),
        (500, 1000),
        "data carries the ACK"
    );
    assert!(tcp(&d).flags.psh());
    assert_eq!(
        s.poll_timeout(),
        Some(ms(260)),
        "delack cancelled; only the RTO remains"
    );
}

#[test]
fn test_ack_every_segment_every_nth_and_quickack() {
    // ack_every = 1: every full segment is ACKed at once, even with delayed ACKs on.
    let mut scfg = cfg(true);
    scfg.ack_every = 1;
    let (_c, mut s) = established(cfg(true), scfg);
    for k in 0..3u32 {
        data(&mut s, ms(50 + k as u64), 1000 * k, 1000);
        assert_eq!(sack_off(&one(&mut s, ms(50 + k as u64))), 1000 * (k + 1));
    }
    // ack_every = 3 (stretch ACKs): every third full segment; a lone remainder waits for the
    // delayed-ACK timer.
    let mut scfg = cfg(true);
    scfg.ack_every = 3;
    let (_c, mut s) = established(cfg(true), scfg);
    let mut acks = Vec::new();
    for k in 0..7u32 {
        let t = ms(50 + k as u64);
        data(&mut s, t, 1000 * k, 1000);
        acks.extend(drain(&mut s, t).iter().map(sack_off));
    }
    assert_eq!(acks, vec![3000, 6000]);
    assert_eq!(
        s.poll_timeout(),
        Some(ms(96)),
        "the 7th segment (56 ms) + 40 ms"
    );
    // Quick-ACK at start (Linux): the first 16 data segments are each ACKed at once, then
    // every second one.
    let mut scfg = cfg(true);
    scfg.quickack_segments = 16;
    let (_c, mut s) = established(cfg(true), scfg);
    let mut acks = Vec::new();
    for k in 0..20u32 {
        let t = ms(50 + k as u64);
        data(&mut s, t, 1000 * k, 1000);
        acks.extend(drain(&mut s, t).iter().map(sack_off));
    }
    let mut want: Vec<u32> = (1..=16).map(|k| 1000 * k).collect();
    want.extend([18_000, 20_000]);
    assert_eq!(acks, want);
    // The quick-ACK count is capped by the receive buffer: rcv_buf / (2 · MSS), at least 2.
    let mut scfg = cfg(true);
    scfg.quickack_segments = 16;
    scfg.rcv_buf_bytes = 5000;
    let (_c, mut s) = established(cfg(true), scfg);
    let mut acks = Vec::new();
    for k in 0..4u32 {
        let t = ms(50 + k as u64);
        data(&mut s, t, 1000 * k, 1000);
        acks.extend(drain(&mut s, t).iter().map(sack_off));
        s.recv(1000);
    }
    assert_eq!(acks, vec![1000, 2000, 4000]);
}

#[test]
fn test_ack_when_read_one_ack_per_instant_burst() {
    // Linux (`__tcp_ack_snd_check`, `tcp_cleanup_rbuf`): the second full segment is ACKed when
    // the application reads, after every segment that arrived at the same instant.
    let mut scfg = cfg(true);
    scfg.ack_when_read = true;
    let (_c, mut s) = established(cfg(true), scfg);
    // A burst of three segments at 50 ms (one transport block): no ACK while it arrives.
    for k in 0..3u32 {
        data(&mut s, ms(50), 1000 * k, 1000);
        none(&mut s, ms(50));
    }
    assert_eq!(
        s.poll_timeout(),
        Some(ms(50)),
        "the read after the burst, not +40 ms"
    );
    s.handle_timeout(ms(50));
    let a = one(&mut s, ms(50));
    assert_eq!(sack_off(&a), 3000, "one ACK for the whole burst");
    assert_eq!(s.poll_timeout(), None);
    // A lone segment waits (one MSS unacknowledged) and is ACKed with the next burst's.
    data(&mut s, ms(51), 3000, 1000);
    none(&mut s, ms(51));
    assert_eq!(s.poll_timeout(), Some(ms(91)), "delack_timeout = 40 ms");
    data(&mut s, ms(52), 4000, 1000);
    data(&mut s, ms(52), 5000, 1000);
    none(&mut s, ms(52));
    s.handle_timeout(ms(52));
    assert_eq!(sack_off(&one(&mut s, ms(52))), 6000);
    // Segments at distinct instants: every second one, as without the option.
    let mut acks = Vec::new();
    for k in 6..10u32 {
        let t = ms(60 + k as u64);
        data(&mut s, t, 1000 * k, 1000);
        s.handle_timeout(t);
        acks.extend(drain(&mut s, t).iter().map(sack_off));
    }
    assert_eq!(acks, vec![8000, 10_000]);
    // Out-of-order data is still answered at once (RFC 5681 §4.2), and so is the hole's fill.
    data(&mut s, ms(80), 11_000, 1000);
    let d = one(&mut s, ms(80));
    assert_eq!(sack_off(&d), 10_000);
    data(&mut s, ms(80), 10_000, 1000);
    assert_eq!(sack_off(&one(&mut s, ms(80))), 12_000);
}

fn data_psh(s: &mut Endpoint, t: rantcp_core::Time, off: u32, len: u32) {
    let (ip, mut h, l) = client_data(off, len);
    h.flags = TcpFlags(TcpFlags::ACK.0 | TcpFlags::PSH.0);
    s.handle_segment(t, &ip, &h, l);
}

#[test]
fn test_ack_when_read_acks_a_lone_pushed_or_short_segment_at_the_read() {
    // Linux tcp_measure_rcv_mss sets ICSK_ACK_PUSHED for a segment shorter than rcv_mss and
    // (6.6+, commit 4720852ed9af) for a full-sized one with PSH; tcp_cleanup_rbuf then ACKs at
    // the read that empties the queue although only one segment is unacknowledged.
    let mut scfg = cfg(true);
    scfg.ack_when_read = true;
    let (_c, mut s) = established(cfg(true), scfg.clone());
    // A full segment without PSH waits for the delayed-ACK timer (unchanged).
    data(&mut s, ms(50), 0, 1000);
    none(&mut s, ms(50));
    assert_eq!(s.poll_timeout(), Some(ms(90)));
    s.handle_timeout(ms(90));
    assert_eq!(sack_off(&one(&mut s, ms(90))), 1000);
    // A full segment with PSH: ACKed at the read, i.e. after the instant's other arrivals.
    data_psh(&mut s, ms(100), 1000, 1000);
    none(&mut s, ms(100));
    assert_eq!(s.poll_timeout(), Some(ms(100)), "the read, not +40 ms");
    s.handle_timeout(ms(100));
    assert_eq!(sack_off(&one(&mut s, ms(100))), 2000);
    // The flag goes with that ACK: the next lone full segment waits again.
    data(&mut s, ms(110), 2000, 1000);
    none(&mut s, ms(110));
    assert_eq!(s.poll_timeout(), Some(ms(150)));
    s.handle_timeout(ms(150));
    assert_eq!(sack_off(&one(&mut s, ms(150))), 3000);
    // A short segment (a write's tail) without PSH: also at the read.
    data(&mut s, ms(200), 3000, 300);
    none(&mut s, ms(200));
    assert_eq!(s.poll_timeout(), Some(ms(200)));
    s.handle_timeout(ms(200));
    assert_eq!(sack_off(&one(&mut s, ms(200))), 3300);
    // A burst ending in a PSH segment still gets one ACK, after its last segment.
    data(&mut s, ms(300), 3300, 1000);
    data_psh(&mut s, ms(300), 4300, 1000);
    data(&mut s, ms(300), 5300, 1000);
    none(&mut s, ms(300));
    s.handle_timeout(ms(300));
    assert_eq!(
        drain(&mut s, ms(300))
            .iter()
            .map(sack_off)
            .collect::<Vec<_>>(),
        vec![6300]
    );

    // Without the option (the rfc profile): a lone PSH or short segment waits 40 ms.
    let (_c, mut r) = established(cfg(true), cfg(true));
    data_psh(&mut r, ms(50), 0, 1000);
    none(&mut r, ms(50));
    assert_eq!(r.poll_timeout(), Some(ms(90)));
    r.handle_timeout(ms(90));
    assert_eq!(sack_off(&one(&mut r, ms(90))), 1000);
    data(&mut r, ms(100), 1000, 300);
    none(&mut r, ms(100));
    assert_eq!(r.poll_timeout(), Some(ms(140)));
}

#[test]
fn test_sack_compression_holds_dupacks_after_the_third() {
    // Linux __tcp_ack_snd_check (4.19+): at one RCV.NXT the first three duplicate ACKs leave at
    // once, later ones wait min(RTT / 20, 1 ms) and go as one; 44 held go at once.
    let mut scfg = cfg(true);
    scfg.sack_compression = true;
    let (_c, mut s) = established(cfg(true), scfg.clone()); // handshake RTT 20 ms: 1 ms delay
    for (k, t) in [(1u32, 50u64), (3, 51), (5, 52)] {
        data(&mut s, ms(t), 1000 * k, 1000);
        assert_eq!(
            sack_off(&one(&mut s, ms(t))),
            0,
            "duplicate ACK {k} at once"
        );
    }
    data(&mut s, ms(53), 7000, 1000);
    none(&mut s, ms(53));
    data(&mut s, ms(53), 9000, 1000);
    none(&mut s, ms(53));
    assert_eq!(
        s.poll_timeout(),
        Some(ms(54)),
        "min(20 ms / 20, 1 ms) after the first held"
    );
    s.handle_timeout(ms(54));
    let a = one(&mut s, ms(54));
    assert_eq!(sack_off(&a), 0);
    assert_eq!(sacks(&a)[0], (9000, 10_000), "one ACK carries both");
    // Still the same RCV.NXT: the next one is held too.
    data(&mut s, ms(60), 11_000, 1000);
    none(&mut s, ms(60));
    assert_eq!(s.poll_timeout(), Some(ms(61)));
    // Filling the hole moves RCV.NXT: ACKed at once (RFC 5681 §4.2), and the count restarts.
    data(&mut s, ms(60), 0, 1000);
    assert_eq!(sack_off(&one(&mut s, ms(60))), 2000);
    data(&mut s, ms(62), 13_000, 1000);
    assert_eq!(
        sack_off(&one(&mut s, ms(62))),
        2000,
        "first duplicate at the new RCV.NXT"
    );

    // The 45th held duplicate goes at once with all of them.
    let (_c, mut s) = established(cfg(true), scfg);
    let mut sent = Vec::new();
    for k in 1..=48u32 {
        data(&mut s, ms(50), 2000 * k, 1000);
        sent.push(drain(&mut s, ms(50)).len());
    }
    assert_eq!(&sent[..3], &[1, 1, 1]);
    assert!(sent[3..47].iter().all(|&n| n == 0), "{sent:?}");
    assert_eq!(sent[47], 1);

    // In quick-ACK mode (here the connection's first segments) nothing is held.
    let mut qcfg = cfg(true);
    qcfg.sack_compression = true;
    qcfg.quickack_segments = 16;
    let (_c, mut q) = established(cfg(true), qcfg);
    for k in 1..=6u32 {
        data(&mut q, ms(50), 2000 * k, 1000);
        assert_eq!(
            drain(&mut q, ms(50)).len(),
            1,
            "quick-ACK mode: duplicate {k} at once"
        );
    }

    // Off (the rfc profile, and cfg's default): every out-of-order segment at once.
    assert!(rantcp_tcp::TcpConfig::linux().sack_compression);
    assert!(!rantcp_tcp::TcpConfig::rfc().sack_compression);
    let (_c, mut r) = established(cfg(true), cfg(true));
    for k in 1..=6u32 {
        data(&mut r, ms(50), 2000 * k, 1000);
        assert_eq!(drain(&mut r, ms(50)).len(), 1);
    }
}

#[test]
fn test_ack_when_read_is_the_linux_profile_only() {
    assert!(rantcp_tcp::TcpConfig::linux().ack_when_read);
    assert!(!rantcp_tcp::TcpConfig::rfc().ack_when_read);
    assert!(!rantcp_tcp::TcpConfig::default().ack_when_read);
}

#[test]
fn test_window_is_the_payload_share_of_the_buffer() {
    // Linux tcp_win_from_space: a buffer of rcv_buf bytes offers rcv_buf × rcv_win_ratio of
    // window; what is held (unread) comes off that, and the SWS threshold is min(space/2, MSS).
    let mut scfg = cfg(true);
    scfg.rcv_buf_bytes = 8000;
    scfg.rcv_win_ratio = 0.625;
    let (c, mut s) = established(cfg(true), scfg.clone());
    assert_eq!(s.info().rwin, 5000, "the SYN-ACK offered 5/8 of 8000");
    data(&mut s, ms(50), 0, 1000);
    data(&mut s, ms(50), 1000, 1000);
    let a = one(&mut s, ms(50));
    assert_eq!((sack_off(&a), tcp(&a).window), (2000, 3000));
    data(&mut s, ms(51), 2000, 1000);
    data(&mut s, ms(51), 3000, 1000);
    let _ = one(&mut s, ms(51));
    data(&mut s, ms(52), 4000, 1000);
    // Beyond the 5000-byte window: dropped although 3000 bytes of rcv_buf are "free", and
    // answered at once with the ACK of both, window 0.
    data(&mut s, ms(53), 5000, 1000);
    let a = one(&mut s, ms(53));
    assert_eq!((sack_off(&a), tcp(&a).window), (5000, 0));
    assert_eq!(s.readable(), 5000);
    assert_eq!(s.recv(1000), 1000);
    let a = one(&mut s, ms(60));
    assert_eq!((sack_off(&a), tcp(&a).window), (5000, 1000));
    drop(c);

    // Ratio 1 (the RFC profile): the whole buffer.
    scfg.rcv_win_ratio = 1.0;
    let (_c, s) = established(cfg(true), scfg);
    assert_eq!(s.info().rwin, 8000);
    // The Linux profile: 6 MiB of tcp_rmem give the 3.75 MiB the kernel offered (2716
    // segments of 1448 bytes in flight in the emulation).
    let linux = rantcp_tcp::TcpConfig {
        rcv_buf_bytes: 6 << 20,
        ..rantcp_tcp::TcpConfig::linux()
    };
    assert_eq!(linux.rcv_space(), 3_932_160);
    assert_eq!(rantcp_tcp::TcpConfig::rfc().rcv_space(), 6 << 20);
}

/// Send in-order segments `from..to` (1000 bytes each), one per millisecond from `t0`, and
/// return the ACK offsets sent.
fn in_order_acks(s: &mut Endpoint, t0: u64, from: u32, to: u32) -> Vec<u32> {
    let mut acks = Vec::new();
    for k in from..to {
        let t = ms(t0 + (k - from) as u64);
        data(s, t, 1000 * k, 1000);
        acks.extend(drain(s, t).iter().map(sack_off));
    }
    acks
}

/// A receiver with Linux's quick-ACK (16) that has used it up: 20 segments at 50..69 ms,
/// ACKed 1..16 one by one, then 18 and 20 (everything ACKed, RCV.NXT = 20000).
fn quickack_used_up() -> Endpoint {
    let mut scfg = cfg(true);
    scfg.quickack_segments = 16;
    let (_c, mut s) = established(cfg(true), scfg);
    let mut want: Vec<u32> = (1..=16).map(|k| 1000 * k).collect();
    want.extend([18_000, 20_000]);
    assert_eq!(in_order_acks(&mut s, 50, 0, 20), want);
    s
}

#[test]
fn test_linux_old_duplicate_enters_quickack_mode() {
    // Linux tcp_send_dupack: data wholly below RCV.NXT (and below the RCV.NXT of the last ACK,
    // rcv_wup) is ACKed at once and enters quick-ACK mode with min(rcv_wnd / (2·MSS), 16) =
    // 16; that ACK is sent directly (not scheduled), so all 16 are left for the data after.
    let mut s = quickack_used_up();
    data(&mut s, ms(80), 0, 1000);
    assert_eq!(sack_off(&one(&mut s, ms(80))), 20_000);
    let mut want: Vec<u32> = (21..=36).map(|k| 1000 * k).collect();
    want.extend([38_000, 40_000]);
    assert_eq!(in_order_acks(&mut s, 81, 20, 40), want);

    // The same duplicate without quick-ACK (the RFC and default profiles): one ACK, then
    // every second segment.
    let (_c, mut s) = established(cfg(true), cfg(true));
    let acks = in_order_acks(&mut s, 50, 0, 20);
    assert_eq!(acks.last(), Some(&20_000));
    data(&mut s, ms(80), 0, 1000);
    assert_eq!(sack_off(&one(&mut s, ms(80))), 20_000);
    let want: Vec<u32> = (11..=20).map(|k| 2000 * k).collect();
    assert_eq!(in_order_acks(&mut s, 81, 20, 40), want);
}

#[test]
fn test_linux_duplicate_above_last_ack_uses_one_quickack() {
    // Linux tcp_data_queue: a duplicate ending at or above rcv_wup (RCV.NXT of our last ACK:
    // here a delayed ACK is pending) enters quick-ACK mode too; its ACK is sent while a data
    // ACK is scheduled (the pending segment's, and its own), so it counts
    // (tcp_dec_quickack_mode): 15 are left.
    let mut s = quickack_used_up();
    data(&mut s, ms(70), 20_000, 1000);
    none(&mut s, ms(70));
    data(&mut s, ms(71), 20_000, 1000);
    assert_eq!(sack_off(&one(&mut s, ms(71))), 21_000);
    let mut want: Vec<u32> = (22..=36).map(|k| 1000 * k).collect();
    want.extend([38_000, 40_000]);
    assert_eq!(in_order_acks(&mut s, 72, 21, 40), want);
}

#[test]
fn test_linux_data_at_the_window_edge_enters_quickack_mode() {
    // 1 MB buffer, nothing read: the right edge stays at offset 1_000_000 (the first ACK
    // offered 999000 after 1000 bytes; the later offers are smaller, so the edge never
    // moves). Data starting exactly at the edge passes Linux's tcp_sequence and is dropped
    // by tcp_data_queue's `out_of_window`: quick-ACK mode and an immediate ACK.
    let mut s = quickack_used_up();
    data(&mut s, ms(80), 1_000_000, 1000);
    assert_eq!(sack_off(&one(&mut s, ms(80))), 20_000);
    let mut want: Vec<u32> = (21..=35).map(|k| 1000 * k).collect();
    want.extend([37_000, 39_000]);
    assert_eq!(
        in_order_acks(&mut s, 81, 20, 39),
        want,
        "15 left: that ACK was scheduled"
    );

    // Data beyond the edge fails tcp_sequence: tcp_send_dupack only ACKs (its data is not
    // below RCV.NXT), no quick-ACK mode.
    let mut s = quickack_used_up();
    data(&mut s, ms(80), 1_001_000, 1000);
    assert_eq!(sack_off(&one(&mut s, ms(80))), 20_000);
    let want: Vec<u32> = (11..=20).map(|k| 2000 * k).collect();
    assert_eq!(in_order_acks(&mut s, 81, 20, 40), want);
}

#[test]
fn test_linux_receive_gap_longer_than_rto_enters_quickack_mode() {
    // Linux tcp_event_data_recv: in-sequence data after a gap longer than the RTO (here
    // ~200 ms: the handshake's 20 ms RTT under the 200 ms minimum) raises the quick-ACK count
    // (tcp_incr_quickack, 16), so the sender's restart is not held back by delayed ACKs.
    let mut s = quickack_used_up();
    // 150 ms after the last data (< RTO): the usual delayed ACK.
    data(&mut s, ms(219), 20_000, 1000);
    none(&mut s, ms(219));
    assert_eq!(s.poll_timeout(), Some(ms(259)));
    s.handle_timeout(ms(259));
    assert_eq!(sack_off(&one(&mut s, ms(259))), 21_000);
    // 500 ms after it (> RTO): 16 segments ACKed one by one, then every second.
    let mut want: Vec<u32> = (22..=37).map(|k| 1000 * k).collect();
    want.extend([39_000, 41_000]);
    assert_eq!(in_order_acks(&mut s, 719, 21, 41), want);
}

#[test]
fn test_linux_out_of_order_acks_use_up_quickacks() {
    // Linux tcp_dec_quickack_mode: every ACK sent for data that asked for one counts, the
    // immediate duplicate ACKs for out-of-order data and the hole's fill included.
    let mut s = quickack_used_up();
    data(&mut s, ms(80), 0, 1000); // retransmission: 16 quick ACKs
    assert_eq!(sack_off(&one(&mut s, ms(80))), 20_000);
    for k in 0..3u64 {
        data(&mut s, ms(81 + k), 21_000 + 1000 * k as u32, 1000);
        assert_eq!(sack_off(&one(&mut s, ms(81 + k))), 20_000, "dupack");
    }
    data(&mut s, ms(84), 20_000, 1000); // fills the hole
    assert_eq!(sack_off(&one(&mut s, ms(84))), 24_000);
    // 16 - 4 = 12 left.
    let mut want: Vec<u32> = (25..=36).map(|k| 1000 * k).collect();
    want.extend([38_000, 40_000]);
    assert_eq!(in_order_acks(&mut s, 85, 24, 40), want);
}
