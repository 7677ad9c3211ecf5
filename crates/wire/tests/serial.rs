//! Wire bytes and parsing: exact layouts, round trips over generated packets, rejection of
//! malformed input, and parse() never panicking.

mod common;

use common::*;
use rantcp_core::Rng;
use rantcp_wire::checksum::internet_checksum;
use rantcp_wire::*;

fn hex(s: &str) -> Vec<u8> {
    let s: String = s.chars().filter(|c| !c.is_whitespace()).collect();
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

/// Verify both checksums independently of the parser.
fn assert_checksums_ok(b: &[u8]) {
    assert_eq!(internet_checksum(&b[..20]), 0, "IPv4 header checksum");
    let mut pseudo = Vec::from(&b[12..20]);
    pseudo.extend_from_slice(&[0, b[9]]);
    pseudo.extend_from_slice(&((b.len() - 20) as u16).to_be_bytes());
    pseudo.extend_from_slice(&b[20..]);
    assert_eq!(internet_checksum(&pseudo), 0, "transport checksum");
}

#[test]
fn test_syn_exact_bytes() {
    // The Linux SYN option layout: MSS, SACK-permitted + timestamps, NOP window scale.
    let opts = TcpOptions {
        mss: Some(1460),
        window_scale: Some(7),
        sack_permitted: true,
        timestamps: Some((0x01020304, 0)),
        ..Default::default()
    };
    let mut ipb = ip([192, 168, 0, 1], [192, 168, 0, 199]);
    ipb.identification = 0x1c46;
    let p = Packet::tcp(ipb, tcp(TcpFlags::SYN, 0xaabbccdd, 0, opts), 0);
    let b = p.to_bytes();
    assert_eq!(b.len(), 60);
    assert_eq!(p.len(), 60);
    assert_eq!(p.header_len(), 60);
    let expect = hex("4500 003c 1c46 4000 4006 0000 c0a8 0001 c0a8 00c7
         9c40 1451 aabbccdd 00000000 a002 01f6 0000 0000
         0204 05b4 0402 080a 01020304 00000000 0103 0307");
    // Compare everything but the two checksums, then check those independently.
    let mut masked = b.clone();
    masked[10..12].copy_from_slice(&[0, 0]);
    masked[36..38].copy_from_slice(&[0, 0]);
    assert_eq!(masked, expect);
    assert_checksums_ok(&b);
    // IPv4 header checksum computed by hand for this header: sum of words
    // 4500+003c+1c46+4000+4006+c0a8+0001+c0a8+00c7 = 0x2_63a0 -> 0x63a2 -> ~ = 0x9c5d.
    assert_eq!(&b[10..12], &[0x9c, 0x5d]);
    assert_eq!(Packet::parse(&b), Ok(p));
}

#[test]
fn test_option_layouts_exact() {
    let base = tcp(TcpFlags::ACK, 1, 2, TcpOptions::default());
    let cases: Vec<(TcpOptions, &str)> = vec![
        (TcpOptions::default(), ""),
        (
            TcpOptions {
                sack_permitted: true,
                ..Default::default()
            },
            "0101 0402",
        ),
        (
            TcpOptions {
                timestamps: Some((5, 6)),
                ..Default::default()
            },
            "0101 080a 00000005 00000006",
        ),
        (
            TcpOptions {
                window_scale: Some(14),
                ..Default::default()
            },
            "0103 030e",
        ),
        (
            TcpOptions {
                mss: Some(536),
                ..Default::default()
            },
            "0204 0218",
        ),
        (
            TcpOptions {
                as_tcp_ack: Some(0xdeadbeef),
                ..Default::default()
            },
            "fd08 4153 deadbeef",
        ),
        (
            {
                let mut o = TcpOptions {
                    timestamps: Some((7, 8)),
                    ..Default::default()
                };
                o.push_sack(SackBlock {
                    left: 100,
                    right: 200,
                });
                o.push_sack(SackBlock {
                    left: 300,
                    right: 400,
                });
                o
            },
            "0101 080a 00000007 00000008 0101 0512 00000064 000000c8 0000012c 00000190",
        ),
    ];
    for (o, want) in cases {
        let p = Packet::tcp(
            ip([1, 2, 3, 4], [5, 6, 7, 8]),
            TcpHeader { options: o, ..base },
            10,
        );
        let b = p.to_bytes();
        let want = hex(want);
        assert_eq!(o.wire_len() as usize, want.len());
        assert_eq!(&b[40..40 + want.len()], &want[..], "{o:?}");
        assert_eq!(b[32] >> 4, (5 + want.len() / 4) as u8, "data offset");
        assert_eq!(b.len(), p.len() as usize);
        assert!(
            b[40 + want.len()..].iter().all(|&x| x == 0),
            "payload zeros"
        );
        assert_checksums_ok(&b);
        assert_eq!(Packet::parse(&b), Ok(p));
    }
}

#[test]
fn test_udp_exact_bytes_and_zero_checksum() {
    let p = Packet::udp(
        ip([10, 0, 0, 1], [10, 0, 0, 2]),
        UdpHeader {
            src_port: 53,
            dst_port: 1024,
        },
        4,
    );
    let b = p.to_bytes();
    assert_eq!(b.len(), 32);
    assert_eq!(b[9], 17);
    assert_eq!(&b[20..26], &hex("0035 0400 000c"));
    assert_checksums_ok(&b);
    assert_eq!(Packet::parse(&b), Ok(p));
    // A UDP checksum field of zero means "no checksum" (RFC 768): accepted.
    let mut nock = b.clone();
    nock[26..28].copy_from_slice(&[0, 0]);
    assert_eq!(Packet::parse(&nock), Ok(p));
    // Search for a packet whose computed checksum is 0: it must go out as 0xffff.
    let mut found = false;
    for port in 0..=u16::MAX {
        let p = Packet::udp(
            ip([10, 0, 0, 1], [10, 0, 0, 2]),
            UdpHeader {
                src_port: port,
                dst_port: 1024,
            },
            4,
        );
        let b = p.to_bytes();
        assert_ne!(&b[26..28], &[0, 0]);
        if b[26..28] == [0xff, 0xff] {
            found = true;
            assert_checksums_ok(&b);
            assert_eq!(Packet::parse(&b), Ok(p));
        }
    }
    assert!(found, "some source port yields a computed zero checksum");
}

#[test]
fn test_sack_blocks_trimmed_to_capacity() {
    let mut o = TcpOptions::default();
    assert_eq!(o.sack_capacity(), 4);
    o.timestamps = Some((1, 2));
    assert_eq!(o.sack_capacity(), 3); // RFC 2018 §3
    o.as_tcp_ack = Some(3);
    assert_eq!(o.sack_capacity(), 2);
    o.mss = Some(1);
    o.window_scale = Some(1);
    o.sack_permitted = true;
    assert_eq!(o.sack_capacity(), 1);
    for k in 0..4 {
        o.push_sack(SackBlock {
            left: k,
            right: k + 1,
        });
    }
    assert_eq!(o.emitted_sack_len(), 1);
    assert_eq!(o.wire_len(), MAX_OPTIONS_LEN);
    let p = Packet::tcp(
        ip([1, 1, 1, 1], [2, 2, 2, 2]),
        tcp(TcpFlags::ACK, 0, 0, o),
        0,
    );
    let b = p.to_bytes();
    assert_eq!(b.len(), 80);
    let q = Packet::parse(&b).unwrap();
    let qo = q.as_tcp().unwrap().options;
    assert_eq!(qo.sack_blocks(), &[SackBlock { left: 0, right: 1 }]);
}

#[test]
fn test_equality_ignores_stale_sack_entries() {
    let mut a = TcpOptions::default();
    a.push_sack(SackBlock { left: 1, right: 2 });
    a.push_sack(SackBlock { left: 3, right: 4 });
    a.sack_len = 1;
    let mut b = TcpOptions::default();
    b.push_sack(SackBlock { left: 1, right: 2 });
    assert_eq!(a, b);
    b.sack[0].right = 9;
    assert_ne!(a, b);
}

#[test]
fn test_round_trip_random_packets() {
    let mut rng = Rng::for_entity(1, "wire/roundtrip");
    let mut buf = Vec::new();
    for i in 0..20_000 {
        let p = random_packet(&mut rng);
        buf.clear();
        p.write_bytes(&mut buf);
        assert_eq!(buf.len(), p.len() as usize, "packet {i}: {p:?}");
        assert_eq!(buf, p.to_bytes());
        if i % 16 == 0 {
            assert_checksums_ok(&buf);
        }
        assert_eq!(Packet::parse(&buf), Ok(p), "packet {i}");
        // Link-layer padding after the IPv4 total length is ignored.
        if i % 64 == 0 {
            buf.extend_from_slice(&[0xaa; 6]);
            assert_eq!(Packet::parse(&buf), Ok(p));
        }
    }
}

#[test]
fn test_write_bytes_appends() {
    let mut rng = Rng::for_entity(2, "wire/append");
    let a = random_packet(&mut rng);
    let b = random_packet(&mut rng);
    let mut buf = vec![9, 9];
    a.write_bytes(&mut buf);
    b.write_bytes(&mut buf);
    assert_eq!(&buf[..2], &[9, 9]);
    assert_eq!(&buf[2..2 + a.len() as usize], &a.to_bytes()[..]);
    assert_eq!(&buf[2 + a.len() as usize..], &b.to_bytes()[..]);
}

#[test]
#[should_panic(expected = "exceeds the IPv4 maximum")]
fn test_oversized_packet_panics() {
    let p = Packet::udp(
        ip([1, 1, 1, 1], [2, 2, 2, 2]),
        UdpHeader {
            src_port: 1,
            dst_port: 2,
        },
        65_535 - 27,
    );
    let _ = p.to_bytes();
}

#[test]
fn test_largest_packet() {
    let p = Packet::udp(
        ip([1, 1, 1, 1], [2, 2, 2, 2]),
        UdpHeader {
            src_port: 1,
            dst_port: 2,
        },
        65_535 - 28,
    );
    assert_eq!(Packet::parse(&p.to_bytes()), Ok(p));
}

/// Rebuild checksums after editing bytes, so tests can reach the checks behind them.
fn fix_checksums(b: &mut [u8]) {
    b[10..12].copy_from_slice(&[0, 0]);
    let c = internet_checksum(&b[..20]);
    b[10..12].copy_from_slice(&c.to_be_bytes());
    let total = (u16::from_be_bytes([b[2], b[3]]) as usize).min(b.len());
    if total < 20 {
        return;
    }
    let at = match b[9] {
        6 if total >= 40 => 36,
        17 if total >= 28 => 26,
        _ => return,
    };
    b[at..at + 2].copy_from_slice(&[0, 0]);
    let mut pseudo = Vec::from(&b[12..20]);
    pseudo.extend_from_slice(&[0, b[9]]);
    pseudo.extend_from_slice(&((total - 20) as u16).to_be_bytes());
    pseudo.extend_from_slice(&b[20..total]);
    let c = internet_checksum(&pseudo);
    b[at..at + 2].copy_from_slice(&c.to_be_bytes());
}

fn syn_bytes() -> Vec<u8> {
    let (_, p) = sample_flow()[0];
    p.to_bytes()
}

#[test]
fn test_parse_rejects() {
    use ParseError::*;
    let good = syn_bytes();
    assert_eq!(good.len(), 60);
    let edit = |f: &dyn Fn(&mut Vec<u8>), fix: bool| {
        let mut b = good.clone();
        f(&mut b);
        if fix {
            fix_checksums(&mut b);
        }
        Packet::parse(&b)
    };
    assert_eq!(Packet::parse(&[]), Err(Truncated));
    assert_eq!(Packet::parse(&good[..19]), Err(Truncated));
    assert_eq!(Packet::parse(&good[..59]), Err(Truncated));
    assert_eq!(
        edit(&|b| b[0] = 0x65, true),
        Err(Malformed("IP version is not 4"))
    );
    assert_eq!(edit(&|b| b[0] = 0x44, true), Err(Malformed("IPv4 IHL < 5")));
    assert_eq!(
        edit(&|b| b[0] = 0x46, true),
        Err(Unsupported("IPv4 options"))
    );
    assert_eq!(
        edit(&|b| b[3] = 19, true),
        Err(Malformed("IPv4 total length < header length"))
    );
    assert_eq!(edit(&|b| b[8] ^= 1, false), Err(BadChecksum("IPv4 header")));
    assert_eq!(
        edit(&|b| b[6] |= 0x80, true),
        Err(Malformed("IPv4 reserved flag set"))
    );
    assert_eq!(
        edit(&|b| b[6] |= 0x20, true),
        Err(Unsupported("IPv4 fragment"))
    );
    assert_eq!(edit(&|b| b[7] = 1, true), Err(Unsupported("IPv4 fragment")));
    assert_eq!(
        edit(&|b| b[9] = 47, true),
        Err(Unsupported("IP protocol other than TCP, UDP or ICMP"))
    );
    assert_eq!(
        edit(&|b| b[3] = 39, true),
        Err(Malformed("IPv4 payload shorter than a TCP header"))
    );
    assert_eq!(
        edit(&|b| b[32] = 0x40, true),
        Err(Malformed("TCP data offset < 5"))
    );
    assert_eq!(
        edit(&|b| b[32] = 0xf0, true),
        Err(Malformed("TCP data offset beyond the segment"))
    );
    assert_eq!(edit(&|b| b[24] ^= 1, false), Err(BadChecksum("TCP")));
    // Options: 40..44 MSS, 44..56 SACK-perm + TS, 56..60 NOP WS.
    assert_eq!(
        edit(&|b| b[41] = 5, true),
        Err(Malformed("MSS option length != 4"))
    );
    assert_eq!(
        edit(&|b| b[41] = 1, true),
        Err(Malformed("TCP option length < 2"))
    );
    assert_eq!(
        edit(&|b| b[41] = 21, true),
        Err(Malformed("TCP option overruns the header"))
    );
    assert_eq!(
        edit(&|b| b[45] = 3, true),
        Err(Malformed("SACK-permitted option length != 2"))
    );
    assert_eq!(
        edit(&|b| b[47] = 9, true),
        Err(Malformed("timestamps option length != 10"))
    );
    assert_eq!(
        edit(&|b| b[58] = 2, true),
        Err(Malformed("window scale option length != 3"))
    );
    assert_eq!(
        edit(&|b| b[58] = 4, true),
        Err(Malformed("TCP option overruns the header"))
    );
    assert_eq!(
        edit(&|b| b[58] = 0, true),
        Err(Malformed("TCP option length < 2"))
    );
    // NOP WS -> kind WS at the last byte, no room for its length.
    assert_eq!(
        edit(&|b| b[56..60].copy_from_slice(&[1, 1, 1, 3]), true),
        Err(Malformed("TCP option without a length"))
    );
    assert_eq!(
        edit(
            &|b| b[44..56].copy_from_slice(&[5, 12, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1]),
            true
        ),
        Err(Malformed("SACK option length not 8n+2, 1<=n<=4"))
    );
    assert_eq!(
        edit(
            &|b| b[44..56].copy_from_slice(&[5, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1]),
            true
        ),
        Err(Malformed("SACK option length not 8n+2, 1<=n<=4"))
    );
}

#[test]
fn test_parse_options_lenient_cases() {
    let good = syn_bytes();
    let p = Packet::parse(&good).unwrap();
    let opts = |b: &[u8]| Packet::parse(b).map(|q| q.as_tcp().unwrap().options);
    // Unknown option kinds are skipped by their length.
    let mut b = good.clone();
    b[56..60].copy_from_slice(&[0x1e, 4, 0xab, 0xcd]); // kind 30 (MPTCP-ish), len 4
    fix_checksums(&mut b);
    let o = opts(&b).unwrap();
    assert_eq!(o.window_scale, None);
    assert_eq!(o.mss, p.as_tcp().unwrap().options.mss);
    // Kind 253 with another length is another experiment: skipped, not AS-TCP.
    b[56..60].copy_from_slice(&[253, 4, 0xab, 0xcd]);
    fix_checksums(&mut b);
    assert_eq!(opts(&b).unwrap().as_tcp_ack, None);
    // Kind 253 length 8 with another ExID (RFC 6994 §3) is not AS-TCP; ours is.
    let mut e = good.clone();
    e[40..60].copy_from_slice(&hex("020405dc 01030306 01010101 fd084154 00000bb8"));
    fix_checksums(&mut e);
    assert_eq!(opts(&e).unwrap().as_tcp_ack, None);
    e[40..60].copy_from_slice(&hex("020405dc 01030306 01010101 fd084153 00000bb8"));
    fix_checksums(&mut e);
    assert_eq!(opts(&e).unwrap().as_tcp_ack, Some(3000));
    // Figure 39's 6-byte form carries no ExID: it is not recognised (RFC 6994 §3).
    e[40..60].copy_from_slice(&hex("020405dc 01030306 01010101 0101fd06 00000bb8"));
    fix_checksums(&mut e);
    assert_eq!(opts(&e).unwrap().as_tcp_ack, None);
    // END stops option processing; what follows is ignored.
    b[56..60].copy_from_slice(&[0, 0xff, 0xff, 0xff]);
    fix_checksums(&mut b);
    assert_eq!(opts(&b).unwrap().window_scale, None);
    // A compact layout without NOPs parses too.
    b[40..60].copy_from_slice(&hex("030306 020405dc 080a 00000001 00000002 000000"));
    fix_checksums(&mut b);
    let o = opts(&b).unwrap();
    assert_eq!(
        (o.window_scale, o.mss, o.timestamps, o.sack_permitted),
        (Some(6), Some(1500), Some((1, 2)), false)
    );
}

#[test]
fn test_parse_never_panics_on_mutations() {
    let mut rng = Rng::for_entity(3, "wire/mutate");
    let mut seeds: Vec<Vec<u8>> = sample_flow().iter().map(|(_, p)| p.to_bytes()).collect();
    for _ in 0..64 {
        let mut p = random_packet(&mut rng);
        p.payload_len %= 64;
        seeds.push(p.to_bytes());
    }
    let mut accepted = 0u32;
    for round in 0..100_000u32 {
        let mut b = seeds[rng.below(seeds.len() as u64) as usize].clone();
        match rng.below(4) {
            0 => {
                let n = rng.below(b.len() as u64 + 1) as usize;
                b.truncate(n);
            }
            1 => {
                for _ in 0..=rng.below(4) {
                    let i = rng.below(b.len() as u64) as usize;
                    b[i] ^= 1 << rng.below(8);
                }
            }
            _ => {
                // Random bytes in the header area, then checksums fixed so the deeper
                // length/option checks run.
                for _ in 0..=rng.below(8) {
                    let i = rng.below(b.len().min(80) as u64) as usize;
                    b[i] = rng.next_u64() as u8;
                }
                if round % 2 == 0 {
                    b[0] = 0x45;
                }
                fix_checksums(&mut b);
            }
        }
        if let Ok(p) = Packet::parse(&b) {
            accepted += 1;
            // Whatever parsed re-serialises to something that parses to the same packet,
            // as long as our layout can hold it.
            let o = p.as_tcp().map(|t| t.options).unwrap_or_default();
            if p.len() <= IPV4_MAX_LEN && o.sack_len as usize <= o.sack_capacity() {
                assert_eq!(Packet::parse(&p.to_bytes()), Ok(p));
            }
        }
    }
    assert!(
        accepted > 1000,
        "mutations should sometimes stay valid ({accepted})"
    );
}

#[test]
fn test_parse_never_panics_on_random_bytes() {
    let mut rng = Rng::for_entity(4, "wire/random-bytes");
    for _ in 0..100_000 {
        let n = rng.below(120) as usize;
        let mut b: Vec<u8> = (0..n).map(|_| rng.next_u64() as u8).collect();
        if n > 0 && rng.bernoulli(0.5) {
            b[0] = 0x45;
        }
        if n >= 20 && rng.bernoulli(0.5) {
            b[2..4].copy_from_slice(&(n as u16).to_be_bytes());
            b[9] = if rng.bernoulli(0.5) { 6 } else { 17 };
            fix_checksums(&mut b);
        }
        let _ = Packet::parse(&b);
    }
}

#[test]
fn test_icmp_echo_exact_bytes() {
    // RFC 792 p. 14: type 8, code 0, checksum, identifier 0x1234, sequence 1, then the data.
    let p = Packet::icmp(
        ip([10, 0, 0, 1], [10, 0, 1, 1]),
        IcmpHeader {
            icmp_type: IcmpHeader::ECHO_REQUEST,
            code: 0,
            rest: 0x1234_0001,
        },
        4,
    );
    assert_eq!(p.len(), 32);
    assert_eq!(p.proto(), PROTO_ICMP);
    let b = p.to_bytes();
    assert_eq!(b[9], 1);
    // Checksum over the message only (no pseudo-header): ~(0x0800 + 0x1234 + 0x0001) = 0xe5ca.
    assert_eq!(&b[20..28], &hex("0800 e5ca 1234 0001"));
    assert_eq!(internet_checksum(&b[20..]), 0);
    assert_eq!(Packet::parse(&b), Ok(p));
    let mut bad = b.clone();
    bad[24] ^= 1;
    assert_eq!(Packet::parse(&bad), Err(ParseError::BadChecksum("ICMP")));
    assert!(
        Packet::parse(&b[..27]).is_err(),
        "shorter than an ICMP header"
    );
}

#[test]
fn test_write_with_payload_checksums_cover_it() {
    // Odd and even payload lengths, TCP, UDP and ICMP: the checksums cover the real bytes.
    let payload: Vec<u8> = (0..1001u32).map(|i| (i * 7 + 3) as u8).collect();
    for n in [0usize, 1, 2, 999, 1000, 1001] {
        let data = &payload[..n];
        let opts = TcpOptions {
            timestamps: Some((5, 6)),
            ..Default::default()
        };
        let packets = [
            Packet::tcp(
                ip([10, 0, 0, 1], [10, 0, 1, 1]),
                tcp(TcpFlags::ACK, 9, 10, opts),
                n as u32,
            ),
            Packet::udp(
                ip([10, 0, 0, 1], [10, 0, 1, 1]),
                UdpHeader {
                    src_port: 5,
                    dst_port: 6,
                },
                n as u32,
            ),
            Packet::icmp(
                ip([10, 0, 0, 1], [10, 0, 1, 1]),
                IcmpHeader {
                    icmp_type: 0,
                    code: 0,
                    rest: 77,
                },
                n as u32,
            ),
        ];
        for p in packets {
            let mut b = vec![0xee];
            p.write_bytes_with_payload(data, &mut b);
            let b = &b[1..];
            assert_eq!(b.len(), p.len() as usize);
            assert_eq!(&b[p.header_len() as usize..], data);
            if p.proto() == PROTO_ICMP {
                assert_eq!(internet_checksum(&b[..20]), 0);
                assert_eq!(internet_checksum(&b[20..]), 0);
            } else {
                assert_checksums_ok(b);
            }
            assert_eq!(Packet::parse(b), Ok(p), "payload {n}");
            if n > 0 {
                // The same header with a zero payload has another checksum: the payload counts.
                let mut z = b.to_vec();
                z[p.header_len() as usize..].fill(0);
                if data.iter().any(|&x| x != 0) {
                    assert!(Packet::parse(&z).is_err());
                    // parse_unverified skips the transport checksum (offload), not the IP one.
                    assert_eq!(Packet::parse_unverified(&z), Ok(p));
                    z[10] ^= 1;
                    assert_eq!(
                        Packet::parse_unverified(&z),
                        Err(ParseError::BadChecksum("IPv4 header"))
                    );
                }
            }
        }
    }
}
