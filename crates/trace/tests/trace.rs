//! rantcp-trace on hand-built captures with exact expected results: link types, IPv6, VLAN,
//! truncation and repair, malformed headers, pcapng, session splitting (port reuse, new ISN,
//! idle gap, mid-connection) and the per-packet flags of a loss-recovery episode.

use rantcp_trace::decode::{decode, tcp_flags::*, Skip};
use rantcp_trace::reader::linktype;
use rantcp_trace::testing::{
    ethernet, pcapng_interface, pcapng_packet, pcapng_section_header, sll, sll2, Pcap, Seg,
};
use rantcp_trace::{analyze, flag, Analysis, Options, PacketColumns};

fn run(bytes: &[u8], opts: Options) -> (Analysis, PacketColumns) {
    let mut all = PacketColumns::default();
    let a = analyze(bytes, opts, 3, |c| {
        for i in 0..c.len() {
            all.session.push(c.session[i]);
            all.frame.push(c.frame[i]);
            all.ts_ns.push(c.ts_ns[i]);
            all.analysis.push(c.analysis[i]);
            all.payload_len.push(c.payload_len[i]);
            all.ip_len.push(c.ip_len[i]);
            all.seq.push(c.seq[i]);
            all.ack.push(c.ack[i]);
            all.rtt_us.push(c.rtt_us[i]);
            all.in_flight.push(c.in_flight[i]);
            all.dir.push(c.dir[i]);
            all.win.push(c.win[i]);
        }
    })
    .unwrap();
    (a, all)
}

fn flags_of(c: &PacketColumns, frame: u32) -> u16 {
    c.analysis[c.frame.iter().position(|&f| f == frame).unwrap()]
}

// ------------------------------------------------------------------ decoding

#[test]
fn decode_every_link_type_and_ipv6() {
    let s = Seg::s2c(5000, 101, ACK, 1000);
    let v4 = s.ipv4();
    let v6 = s.ipv6();
    for (lt, frame, version) in [
        (linktype::RAW, v4.clone(), 4),
        (linktype::RAW, v6.clone(), 6),
        (linktype::IPV4, v4.clone(), 4),
        (linktype::ETHERNET, ethernet(&v4, None), 4),
        (linktype::ETHERNET, ethernet(&v6, Some(42)), 6),
        (linktype::LINUX_SLL, sll(&v4), 4),
        (linktype::LINUX_SLL2, sll2(&v6), 6),
    ] {
        let seg = decode(lt, &frame, frame.len() as u32).unwrap();
        assert_eq!(
            (seg.sport, seg.dport, seg.seq, seg.ack),
            (80, 40000, 5000, 101),
            "linktype {lt}"
        );
        assert_eq!(
            (seg.ip_version, seg.payload_len, seg.repaired),
            (version, 1000, false),
            "linktype {lt}"
        );
    }
    let seg = decode(linktype::RAW, &v6, v6.len() as u32).unwrap();
    assert_eq!(seg.ip_version, 6);
    assert_eq!(&seg.src[..2], &[0xfd, 0]);
}

#[test]
fn decode_agrees_with_etherparse_on_fields() {
    let mut s = Seg::c2s(7, 9, SYN, 0);
    s.wscale = Some(7);
    s.ts = Some((111, 0));
    for frame in [ethernet(&s.ipv4(), Some(7)), ethernet(&s.ipv6(), None)] {
        let ours = decode(linktype::ETHERNET, &frame, frame.len() as u32).unwrap();
        let theirs = etherparse::SlicedPacket::from_ethernet(&frame).unwrap();
        let Some(etherparse::TransportSlice::Tcp(t)) = theirs.transport else {
            panic!("no tcp")
        };
        assert_eq!(ours.seq, t.sequence_number());
        assert_eq!(ours.ack, t.acknowledgment_number());
        assert_eq!(ours.window, t.window_size());
        assert_eq!(ours.opts.wscale, Some(7));
        assert_eq!(ours.opts.timestamps, Some((111, 0)));
        assert_eq!(ours.payload_len as usize, t.payload().len());
    }
}

#[test]
fn snaplen_truncated_frame_counts_its_full_payload() {
    let ip = Seg::s2c(1, 1, ACK, 1448).ipv4();
    let frame = ethernet(&ip, None);
    let seg = decode(linktype::ETHERNET, &frame[..96], frame.len() as u32).unwrap();
    assert_eq!(
        (seg.payload_len, seg.ip_len, seg.repaired),
        (1448, 1488, false)
    );
}

#[test]
fn snaplen_cut_inside_the_tcp_options_still_decodes() {
    // tcpdump -s 54 / -s 64 on Ethernet keeps the fixed TCP header but cuts the options of a
    // segment with timestamps (32-byte TCP header): tshark still reads seq, ack and tcp.len
    // (found by fuzzing: every such frame was counted malformed).
    let mut s = Seg::s2c(7, 9, ACK, 1448);
    s.ts = Some((5, 6));
    let frame = ethernet(&s.ipv4(), None);
    for snap in [54, 64] {
        let seg = decode(linktype::ETHERNET, &frame[..snap], frame.len() as u32)
            .unwrap_or_else(|e| panic!("snaplen {snap}: {e:?}"));
        assert_eq!(
            (seg.seq, seg.ack, seg.payload_len),
            (7, 9, 1448),
            "snaplen {snap}"
        );
        assert_eq!(seg.opts.timestamps, None, "the cut option is not read");
    }
    let seg = decode(linktype::ETHERNET, &frame[..66], frame.len() as u32).unwrap();
    assert_eq!(seg.opts.timestamps, Some((5, 6)));
    // Less than the fixed 20 bytes of TCP header: malformed.
    assert_eq!(
        decode(linktype::ETHERNET, &frame[..53], frame.len() as u32),
        Err(Skip::Malformed)
    );
    // A whole capture at snaplen 54 gives the same sessions as the full one.
    let mut full = Pcap::new(linktype::ETHERNET, 65535);
    let mut cut = Pcap::new(linktype::ETHERNET, 54);
    for (i, seg) in [
        Seg::c2s(100, 0, SYN, 0),
        Seg::s2c(5000, 101, SYN | ACK, 0),
        Seg::c2s(101, 5001, ACK, 0),
        Seg::s2c(5001, 101, ACK, 1448),
        Seg::s2c(6449, 101, ACK, 1448),
        Seg::c2s(101, 7897, ACK, 0),
    ]
    .into_iter()
    .enumerate()
    {
        let mut seg = seg;
        seg.ts = Some((i as u32, i as u32));
        let f = ethernet(&seg.ipv4(), None);
        full.record(i as i64 * 1_000_000, &f, None);
        cut.record(i as i64 * 1_000_000, &f, None);
    }
    let (a_full, _) = run(&full.bytes, Options::default());
    let (a_cut, _) = run(&cut.bytes, Options::default());
    assert_eq!((a_cut.frames.tcp, a_cut.frames.malformed), (6, 0));
    assert_eq!(
        a_cut.sessions[0].dirs[1].unique_bytes,
        a_full.sessions[0].dirs[1].unique_bytes
    );
}

#[test]
fn a_syn_whose_options_the_snaplen_cut_has_an_unknown_window_scale() {
    // tcpdump -s 54 on Ethernet keeps no TCP option: whether the SYNs carried a window scale
    // is unknown, so the windows are raw fields, not bytes (tshark: scaling factor -1). They
    // were read as "negotiated off", i.e. bytes at scale 0 (128x too small here).
    let handshake = |wscale: Option<u8>| {
        let (mut syn, mut synack) = (Seg::c2s(100, 0, SYN, 0), Seg::s2c(5000, 101, SYN | ACK, 0));
        syn.wscale = wscale;
        synack.wscale = wscale;
        let mut ack = Seg::c2s(101, 5001 + 1448, ACK, 0);
        ack.window = 1000;
        [syn, synack, Seg::s2c(5001, 101, ACK, 1448), ack]
    };
    let capture = |segs: [Seg; 4], snap: u32| {
        let mut p = Pcap::new(linktype::ETHERNET, snap);
        for (i, seg) in segs.iter().enumerate() {
            p.record(i as i64 * 1_000_000, &ethernet(&seg.ipv4(), None), None);
        }
        run(&p.bytes, Options::default())
    };
    let (full, full_rows) = capture(handshake(Some(7)), 65535);
    let (cut, cut_rows) = capture(handshake(Some(7)), 54);
    let (off, _) = capture(handshake(None), 54);
    let client = |a: &Analysis| a.sessions[0].dirs[0].clone();
    // Whole options: scale 7, the client's window 1000 is 128,000 bytes.
    assert_eq!(
        (client(&full).wscale, client(&full).wscale_known),
        (Some(7), true)
    );
    assert_eq!(
        (client(&full).rwin_max, client(&full).rwin_unscaled),
        (128_000, false)
    );
    // Cut options: unknown, and the windows are marked raw.
    assert_eq!(
        (client(&cut).wscale, client(&cut).wscale_known),
        (None, false)
    );
    assert_eq!(
        (client(&cut).rwin_max, client(&cut).rwin_unscaled),
        (1000, true)
    );
    assert_eq!(
        cut.sessions[0].analyzer.dirs[0].win_scale,
        rantcp_trace::analysis::WinScale::Unknown
    );
    let last = |c: &PacketColumns| c.win[c.win.len() - 1];
    assert_eq!((last(&full_rows), last(&cut_rows)), (128_000, 1000));
    // SYNs without the option, cut at the same length (54 bytes hold a 20-byte TCP header
    // whole): negotiated off, known, the windows are bytes.
    assert_eq!(
        (client(&off).wscale, client(&off).wscale_known),
        (None, true)
    );
    assert_eq!(
        (client(&off).rwin_max, client(&off).rwin_unscaled),
        (1000, false)
    );
}

#[test]
fn invalid_ip_lengths_are_repaired_from_the_frame() {
    let mut ip = Seg::s2c(1, 1, ACK, 1000).ipv4();
    // TSO super-frame: total length 0.
    ip[2] = 0;
    ip[3] = 0;
    let seg = decode(linktype::RAW, &ip, ip.len() as u32).unwrap();
    assert_eq!((seg.payload_len, seg.repaired), (1000, true));
    // Total length larger than the frame on the wire: capped by the frame.
    ip[2..4].copy_from_slice(&9000u16.to_be_bytes());
    let seg = decode(linktype::RAW, &ip, ip.len() as u32).unwrap();
    assert_eq!((seg.payload_len, seg.repaired), (1000, true));
    // Ethernet padding (frame longer than the IP packet) is not a repair.
    let mut frame = ethernet(&Seg::c2s(1, 1, ACK, 0).ipv4(), None);
    frame.resize(60, 0);
    let seg = decode(linktype::ETHERNET, &frame, 60).unwrap();
    assert_eq!((seg.payload_len, seg.ip_len, seg.repaired), (0, 40, false));
}

#[test]
fn malformed_headers_are_skipped_not_fatal() {
    let ip = Seg::s2c(1, 1, ACK, 10).ipv4();
    assert_eq!(
        decode(linktype::RAW, &[], 0),
        Err(Skip::Malformed),
        "zero-length frame"
    );
    let mut bad_ihl = ip.clone();
    bad_ihl[0] = 0x44; // IHL 4 words = 16 bytes < 20
    assert_eq!(
        decode(linktype::RAW, &bad_ihl, ip.len() as u32),
        Err(Skip::Malformed)
    );
    let mut bad_off = ip.clone();
    bad_off[20 + 12] = 0xf0; // data offset 60 bytes, beyond the 30 captured after IP
    assert_eq!(
        decode(linktype::RAW, &bad_off[..50], ip.len() as u32),
        Err(Skip::Malformed)
    );
    let mut small_off = ip.clone();
    small_off[20 + 12] = 0x30; // data offset 12 bytes < 20
    assert_eq!(
        decode(linktype::RAW, &small_off, ip.len() as u32),
        Err(Skip::Malformed)
    );
    let mut udp = ip.clone();
    udp[9] = 17;
    assert_eq!(
        decode(linktype::RAW, &udp, ip.len() as u32),
        Err(Skip::NotTcp)
    );
    assert_eq!(
        decode(147, &ip, ip.len() as u32),
        Err(Skip::NotTcp),
        "unknown link type"
    );

    // In a capture: counted, and the good packets around them analysed.
    let mut p = Pcap::new(linktype::RAW, 65535);
    p.record(1_000_000, &Seg::c2s(100, 0, SYN, 0).ipv4(), None);
    p.record(2_000_000, &[], Some(0));
    p.record(3_000_000, &bad_ihl, None);
    p.record(4_000_000, &bad_off[..50], Some(ip.len() as u32));
    p.record(5_000_000, &udp, None);
    p.record(6_000_000, &Seg::s2c(500, 101, SYN | ACK, 0).ipv4(), None);
    let (a, c) = run(&p.bytes, Options::default());
    assert_eq!(
        (
            a.frames.frames,
            a.frames.tcp,
            a.frames.malformed,
            a.frames.not_tcp
        ),
        (6, 2, 3, 1)
    );
    assert_eq!(c.frame, vec![1, 6]);
    assert_eq!(a.sessions.len(), 1);
}

// ------------------------------------------------------------------ reading

#[test]
fn truncated_file_keeps_the_records_before_the_cut() {
    let full = rantcp_trace::testing::handshake_and_data();
    let cut = &full[..full.len() - 30];
    let (a, c) = run(cut, Options::default());
    assert!(a.read.truncated);
    assert_eq!(
        a.read.stop_reason.as_deref(),
        Some("file ends inside record 5 at byte 1248 (26 of its bytes present)")
    );
    assert_eq!((a.frames.frames, c.len()), (4, 4));
    // The hash covers the whole file, cut tail included.
    assert_eq!(a.read.bytes, cut.len() as u64);
    assert_eq!(a.read.blake3, blake3::hash(cut).to_hex().to_string());
}

#[test]
fn wrong_magic_and_garbage_are_refused() {
    let mut f = rantcp_trace::testing::handshake_and_data();
    f[0] ^= 0xff;
    let e = analyze(&f[..], Options::default(), 10, |_| {})
        .err()
        .unwrap();
    assert_eq!(
        e.to_string(),
        "not a pcap or pcapng file (unknown magic number)"
    );
    let e = analyze(&b"\x0a\x0d\x0d\x0a"[..], Options::default(), 10, |_| {})
        .err()
        .unwrap();
    assert!(
        e.to_string().starts_with("not a pcap or pcapng file"),
        "{e}"
    );
}

#[test]
fn pcapng_with_two_interfaces_and_nanosecond_resolution() {
    let mut f = pcapng_section_header();
    // Interface 0: Ethernet, microseconds (default). Interface 1: raw IP, if_tsresol = 9.
    f.extend(pcapng_interface(1, &[]));
    // if_tsresol=9, end of options
    f.extend(pcapng_interface(101, &[9, 0, 1, 0, 9, 0, 0, 0, 0, 0, 0, 0]));
    f.extend(pcapng_packet(
        0,
        1_000_000,
        &ethernet(&Seg::c2s(100, 0, SYN, 0).ipv4(), None),
    ));
    f.extend(pcapng_packet(
        1,
        1_010_000_123,
        &Seg::s2c(500, 101, SYN | ACK, 0).ipv4(),
    ));
    f.extend(pcapng_packet(7, 5, &[1, 2, 3])); // undescribed interface: skipped
    let mut ts = Vec::new();
    let a =
        rantcp_trace::reader::read_frames(&f[..], |fr| ts.push((fr.number, fr.ts_ns, fr.linktype)))
            .unwrap();
    assert_eq!(a.format, Some(rantcp_trace::Format::PcapNg));
    assert_eq!(ts, vec![(1, 1_000_000_000, 1), (2, 1_010_000_123, 101)]);
    assert_eq!(a.skipped_blocks, 1);
    let (an, _) = run(&f, Options::default());
    assert_eq!(an.sessions.len(), 1);
    assert_eq!(
        an.sessions[0].synack_ts.unwrap() - an.sessions[0].syn_ts.unwrap(),
        10_000_123
    );
}

// ------------------------------------------------------------------ sessions

fn session_summary(a: &Analysis) -> Vec<(u64, &'static str, bool, u64)> {
    a.sessions
        .iter()
        .map(|s| {
            (
                s.first_frame,
                s.start.name(),
                s.mid_connection,
                s.dirs[0].packets + s.dirs[1].packets,
            )
        })
        .collect()
}

#[test]
fn port_reuse_after_fin_is_a_new_session() {
    let bytes = Pcap::raw_segments(&[
        (0, Seg::c2s(100, 0, SYN, 0)),
        (10, Seg::s2c(5000, 101, SYN | ACK, 0)),
        (20, Seg::c2s(101, 5001, ACK, 0)),
        (21, Seg::s2c(5001, 101, ACK, 1000)),
        (30, Seg::c2s(101, 6001, ACK | FIN, 0)),
        (40, Seg::s2c(6001, 102, ACK | FIN, 0)),
        (50, Seg::c2s(102, 6002, ACK, 0)),
        // Same 4-tuple, same ISN even (a careless test client): after FIN it is a new session.
        (60, Seg::c2s(100, 0, SYN, 0)),
        (70, Seg::s2c(9000, 101, SYN | ACK, 0)),
        (80, Seg::c2s(101, 9001, ACK, 0)),
        (81, Seg::s2c(9001, 101, ACK, 500)),
        (90, Seg::c2s(101, 9501, ACK, 0)),
    ]);
    let (a, c) = run(&bytes, Options::default());
    assert_eq!(
        session_summary(&a),
        vec![(1, "new", false, 7), (8, "syn_after_close", false, 5)]
    );
    assert_eq!(c.session, vec![0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1]);
    assert_eq!(
        (
            a.sessions[0].dirs[1].unique_bytes,
            a.sessions[1].dirs[1].unique_bytes
        ),
        (1000, 500)
    );
    // The second session's sequence numbers are relative to its own ISNs.
    assert_eq!((c.seq[10], c.ack[11]), (1, 501));
    // Nothing of the first connection is flagged in the second.
    assert!(c.analysis.iter().all(|&f| f == 0), "{:?}", c.analysis);
}

#[test]
fn new_isn_splits_but_a_retransmitted_syn_does_not() {
    let bytes = Pcap::raw_segments(&[
        (0, Seg::c2s(100, 0, SYN, 0)),
        (1000, Seg::c2s(100, 0, SYN, 0)), // SYN retransmitted after 1 s: same connection
        (1010, Seg::s2c(5000, 101, SYN | ACK, 0)),
        (1020, Seg::c2s(101, 5001, ACK, 0)),
        (1030, Seg::c2s(777, 0, SYN, 0)), // a new ISN without FIN/RST: new connection
        (1040, Seg::s2c(8000, 778, SYN | ACK, 0)),
    ]);
    let (a, c) = run(&bytes, Options::default());
    assert_eq!(
        session_summary(&a),
        vec![(1, "new", false, 4), (5, "syn_new_isn", false, 2)]
    );
    assert_eq!(
        flags_of(&c, 2),
        flag::RETRANSMISSION,
        "the second SYN is a retransmission"
    );
}

#[test]
fn idle_gap_and_mid_connection_start() {
    let bytes = Pcap::raw_segments(&[
        // The capture starts mid-connection: no SYN.
        (0, Seg::s2c(5001, 101, ACK, 1000)),
        (10, Seg::c2s(101, 6001, ACK, 0)),
        (20, Seg::s2c(6001, 101, ACK, 1000)),
        // 400 s later, on the same 4-tuple.
        (400_020, Seg::s2c(90001, 101, ACK, 1000)),
        (400_030, Seg::c2s(101, 91001, ACK, 0)),
    ]);
    let (a, c) = run(
        &bytes,
        Options {
            idle_split_ns: 300_000_000_000,
        },
    );
    assert_eq!(
        session_summary(&a),
        vec![(1, "new", true, 3), (4, "idle_gap", true, 2)]
    );
    // Mid-connection: the client is the endpoint with the higher (ephemeral) port.
    assert_eq!(a.sessions[0].client.1, 40000);
    // Relative numbers start at 1 without a SYN, as in Wireshark.
    assert_eq!((c.seq[0], c.ack[1], c.seq[2]), (1, 1001, 1001));
    let (a, _) = run(
        &bytes,
        Options {
            idle_split_ns: 500_000_000_000,
        },
    );
    assert_eq!(
        a.sessions.len(),
        1,
        "a longer idle threshold keeps one session"
    );
}

// ------------------------------------------------------------------ per-packet analysis

#[test]
fn loss_episode_flags_rtt_and_metrics() {
    let m = 1000;
    let bytes = Pcap::raw_segments(&[
        (0, Seg::c2s(100, 0, SYN, 0)),           // 1
        (10, Seg::s2c(5000, 101, SYN | ACK, 0)), // 2
        (20, Seg::c2s(101, 5001, ACK, 0)),       // 3  handshake RTT 20 ms
        (21, Seg::s2c(5001, 101, ACK, m)),       // 4
        (22, Seg::s2c(6001, 101, ACK, m)),       // 5  lost after the capture point
        (23, Seg::s2c(7001, 101, ACK, m)),       // 6
        (24, Seg::s2c(8001, 101, ACK, m)),       // 7
        (25, Seg::s2c(9001, 101, ACK, m)),       // 8
        (31, Seg::c2s(101, 6001, ACK, 0)),       // 9  ACKs 4: RTT 10 ms
        (33, Seg::c2s(101, 6001, ACK, 0)),       // 10 dup ACK 1
        (34, Seg::c2s(101, 6001, ACK, 0)),       // 11 dup ACK 2
        (35, Seg::c2s(101, 6001, ACK, 0)),       // 12 dup ACK 3
        (36, Seg::s2c(6001, 101, ACK, m)),       // 13 fast retransmission
        (46, Seg::c2s(101, 10001, ACK, 0)),      // 14 cumulative ACK (ambiguous: no RTT)
        (47, Seg::s2c(6001, 101, ACK, m)),       // 15 spurious retransmission
        (48, Seg::s2c(10001, 101, ACK, m)),      // 16
        (58, Seg::c2s(101, 11001, ACK, 0)),      // 17 RTT 10 ms
    ]);
    let (a, c) = run(&bytes, Options::default());
    let f = |n| flags_of(&c, n);
    assert_eq!(f(9), 0);
    for n in [10, 11, 12] {
        assert_eq!(f(n), flag::DUP_ACK, "frame {n}");
    }
    assert_eq!(f(13), flag::RETRANSMISSION | flag::FAST_RETRANSMISSION);
    assert_eq!(f(15), flag::RETRANSMISSION | flag::SPURIOUS_RETRANSMISSION);
    let rtt: Vec<(u32, u32)> = c
        .frame
        .iter()
        .zip(&c.rtt_us)
        .filter(|(_, &r)| r > 0)
        .map(|(&f, &r)| (f, r))
        .collect();
    // The SYN-ACK samples the SYN and the client's ACK the SYN-ACK: handshake samples count.
    assert_eq!(
        rtt,
        vec![(2, 10_000), (3, 10_000), (9, 10_000), (17, 10_000)]
    );
    // In flight after frame 8: five segments sent, none ACKed (the last ACK is the handshake's).
    assert_eq!(
        c.in_flight[c.frame.iter().position(|&x| x == 8).unwrap()],
        5 * m
    );

    let s = &a.sessions[0];
    assert_eq!(s.data_dir(), 1);
    let d = &s.dirs[1];
    assert_eq!(
        (
            d.unique_bytes,
            d.payload_bytes,
            d.retx_packets,
            d.retx_bytes
        ),
        (6 * m as u64, 8 * m as u64, 2, 2 * m as u64)
    );
    assert_eq!((d.fast_retx, d.spurious_retx), (1, 1));
    assert_eq!(s.dirs[0].dup_acks, 3);
    assert_eq!(s.dirs[0].pure_acks, 7);
    // Download time: first data (21 ms) to the ACK of the last byte (58 ms).
    assert_eq!(s.download_time_ns(), Some(37_000_000));
    assert!(s.download_acked());
    assert_eq!(d.rtt_ns, vec![10_000_000; 3]);
}

#[test]
fn out_of_order_within_the_handshake_rtt() {
    let bytes = Pcap::raw_segments(&[
        (0, Seg::c2s(100, 0, SYN, 0)),
        (10, Seg::s2c(5000, 101, SYN | ACK, 0)),
        (20, Seg::c2s(101, 5001, ACK, 0)), // iRTT 20 ms
        (21, Seg::s2c(6001, 101, ACK, 1000)),
        (22, Seg::s2c(5001, 101, ACK, 1000)), // 1 ms after the highest: out-of-order
        (23, Seg::s2c(7001, 101, ACK, 1000)),
        (60, Seg::s2c(7001, 101, ACK, 1000)), // 37 ms later: a retransmission
    ]);
    let (_, c) = run(&bytes, Options::default());
    assert_eq!(
        flags_of(&c, 4),
        flag::LOST_SEGMENT,
        "a hole: previous segment not captured"
    );
    assert_eq!(flags_of(&c, 5), flag::OUT_OF_ORDER);
    assert_eq!(flags_of(&c, 7), flag::RETRANSMISSION);
}

#[test]
fn zero_window_and_window_full() {
    let mut syn = Seg::c2s(100, 0, SYN, 0);
    syn.wscale = Some(0);
    let mut synack = Seg::s2c(5000, 101, SYN | ACK, 0);
    synack.wscale = Some(0);
    let mut ack = Seg::c2s(101, 5001, ACK, 0);
    ack.window = 2000;
    let mut zero = Seg::c2s(101, 7001, ACK, 0);
    zero.window = 0;
    let bytes = Pcap::raw_segments(&[
        (0, syn),
        (10, synack),
        (20, ack),
        (21, Seg::s2c(5001, 101, ACK, 1000)),
        (22, Seg::s2c(6001, 101, ACK, 1000)), // reaches ACK 5001 + window 2000
        (31, zero),
    ]);
    let (a, c) = run(&bytes, Options::default());
    assert_eq!(flags_of(&c, 4), 0);
    assert_eq!(flags_of(&c, 5), flag::WINDOW_FULL);
    assert_eq!(flags_of(&c, 6), flag::ZERO_WINDOW);
    assert_eq!(a.sessions[0].dirs[0].zero_window, 1);
}

#[test]
fn synthetic_capture_is_deterministic_and_analysable() {
    let mut a = Vec::new();
    rantcp_trace::testing::write_synthetic(&mut a, 20_000).unwrap();
    let mut b = Vec::new();
    rantcp_trace::testing::write_synthetic(&mut b, 20_000).unwrap();
    assert_eq!(a, b);
    let (an, c) = run(&a, Options::default());
    assert_eq!(an.frames.malformed, 0);
    assert_eq!(an.sessions.len(), 64);
    assert!(c.len() >= 20_000);
    // Every lost segment is ACKed three times (the first acknowledges the segment before it, the
    // other two are duplicates) and fast-retransmitted.
    let fast = c
        .analysis
        .iter()
        .filter(|&&f| f & flag::FAST_RETRANSMISSION != 0)
        .count();
    let dup = c
        .analysis
        .iter()
        .filter(|&&f| f & flag::DUP_ACK != 0)
        .count();
    assert!(fast > 0);
    assert_eq!(dup, 2 * fast);
}

#[test]
fn records_larger_than_the_initial_buffer_are_read() {
    // A 60 KB TSO-style segment cut at 600 000 captured bytes: the record (600 KB) is larger
    // than the reader's first buffer and must still be read whole.
    let mut p = Pcap::new(linktype::RAW, 1 << 20);
    let mut big = Seg::s2c(1, 1, ACK, 0).ipv4();
    big.resize(600_000, 0);
    p.record(1_000_000, &Seg::c2s(1, 0, SYN, 0).ipv4(), None);
    p.record(2_000_000, &big, None);
    p.record(3_000_000, &Seg::c2s(2, 2, ACK, 0).ipv4(), None);
    let (a, c) = run(&p.bytes, Options::default());
    assert!(!a.read.truncated, "{:?}", a.read.stop_reason);
    assert_eq!(c.frame, vec![1, 2, 3]);
    // The IP length field (40) is shorter than the frame: the frame is padding, not payload.
    assert_eq!(c.payload_len[1], 0);
}

#[test]
fn pcapng_block_shorter_than_its_header_stops_cleanly() {
    // Found by the fuzzer: an editcap section header, then a "process information" block whose
    // length (4) is below the 12-byte minimum (pcap-parser 0.17 underflows on it).
    let crash = [
        10u8, 13, 13, 10, 108, 0, 0, 0, 77, 60, 43, 26, 1, 0, 0, 0, 255, 255, 255, 255, 255, 255,
        255, 255, 4, 0, 69, 0, 69, 100, 105, 116, 99, 97, 112, 32, 50, 87, 105, 114, 101, 115, 104,
        97, 114, 107, 41, 32, 52, 46, 48, 46, 49, 55, 32, 40, 71, 105, 116, 32, 118, 52, 46, 48,
        46, 49, 55, 36, 112, 97, 99, 107, 97, 103, 101, 100, 32, 97, 115, 32, 52, 46, 48, 46, 49,
        55, 45, 48, 43, 100, 101, 98, 49, 50, 117, 51, 41, 0, 0, 0, 0, 0, 0, 0, 108, 0, 0, 0, 1, 0,
        0, 128, 4, 0, 0, 0, 101, 0, 0, 0, 255, 255, 0, 0, 20, 0, 0, 0, 10, 0, 182, 0, 15, 0, 0, 0,
        0, 6, 0, 0, 0, 72, 0, 0, 0, 0,
    ];
    let (a, c) = run(&crash, Options::default());
    assert!(a.read.truncated);
    assert_eq!(
        a.read.stop_reason.as_deref(),
        Some("the block at byte 108 (after record 0): malformed block (length 4 < 12)")
    );
    assert_eq!(c.len(), 0);
}
