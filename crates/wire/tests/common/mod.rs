//! Random packet generation for the wire tests, from seeded `rantcp_core::Rng` streams.

#![allow(dead_code)]

use std::net::Ipv4Addr;

use rantcp_core::Rng;
use rantcp_wire::*;

fn opt<T>(rng: &mut Rng, f: impl FnOnce(&mut Rng) -> T) -> Option<T> {
    if rng.bernoulli(0.5) {
        Some(f(rng))
    } else {
        None
    }
}

/// Random options; SACK blocks limited to what fits, so the packet round-trips.
pub fn random_options(rng: &mut Rng) -> TcpOptions {
    let mut o = TcpOptions {
        mss: opt(rng, |r| r.next_u64() as u16),
        window_scale: opt(rng, |r| r.below(15) as u8),
        sack_permitted: rng.bernoulli(0.5),
        timestamps: opt(rng, |r| (r.next_u64() as u32, r.next_u64() as u32)),
        as_tcp_ack: opt(rng, |r| r.next_u64() as u32),
        ..Default::default()
    };
    let n = rng.below(o.sack_capacity() as u64 + 1);
    for _ in 0..n {
        let left = rng.next_u64() as u32;
        o.push_sack(SackBlock {
            left,
            right: left.wrapping_add(rng.below(100_000) as u32),
        });
    }
    o
}

pub fn random_ip(rng: &mut Rng) -> Ipv4Header {
    Ipv4Header {
        src: Ipv4Addr::from(rng.next_u64() as u32),
        dst: Ipv4Addr::from(rng.next_u64() as u32),
        dscp_ecn: rng.next_u64() as u8,
        identification: rng.next_u64() as u16,
        dont_fragment: rng.bernoulli(0.5),
        ttl: rng.next_u64() as u8,
    }
}

/// A random valid packet (TCP 3/4 of the time), total length within the IPv4 maximum.
pub fn random_packet(rng: &mut Rng) -> Packet {
    let ip = random_ip(rng);
    let payload_len = match rng.below(4) {
        0 => 0,
        1 => rng.below(1500) as u32,
        2 => rng.below(16) as u32,
        _ => rng.below(65_535 - 100) as u32,
    };
    if rng.below(4) == 0 {
        let udp = UdpHeader {
            src_port: rng.next_u64() as u16,
            dst_port: rng.next_u64() as u16,
        };
        Packet::udp(ip, udp, payload_len)
    } else {
        let tcp = TcpHeader {
            src_port: rng.next_u64() as u16,
            dst_port: rng.next_u64() as u16,
            seq: rng.next_u64() as u32,
            ack: rng.next_u64() as u32,
            flags: TcpFlags(rng.next_u64() as u8),
            window: rng.next_u64() as u16,
            urgent: rng.next_u64() as u16,
            options: random_options(rng),
        };
        Packet::tcp(ip, tcp, payload_len)
    }
}

pub fn ip(a: [u8; 4], b: [u8; 4]) -> Ipv4Header {
    Ipv4Header::new(Ipv4Addr::from(a), Ipv4Addr::from(b))
}

pub fn tcp(flags: TcpFlags, seq: u32, ack: u32, options: TcpOptions) -> TcpHeader {
    TcpHeader {
        src_port: 40000,
        dst_port: 5201,
        seq,
        ack,
        flags,
        window: 502,
        urgent: 0,
        options,
    }
}

/// A small flow exercising every option: SYN, SYN-ACK, data with timestamps, a SACK ACK, an
/// AS-TCP ACK, a FIN, and UDP.
pub fn sample_flow() -> Vec<(u64, Packet)> {
    let c = [10, 0, 0, 1];
    let s = [10, 0, 1, 2];
    let syn_opts = TcpOptions {
        mss: Some(1460),
        window_scale: Some(7),
        sack_permitted: true,
        timestamps: Some((1000, 0)),
        ..Default::default()
    };
    let synack_opts = TcpOptions {
        timestamps: Some((5000, 1000)),
        ..syn_opts
    };
    let ts = |a, b| TcpOptions {
        timestamps: Some((a, b)),
        ..Default::default()
    };
    let mut sack_opts = ts(1010, 5005);
    sack_opts.push_sack(SackBlock {
        left: 1 + 2 * 1448,
        right: 1 + 4 * 1448,
    });
    sack_opts.push_sack(SackBlock {
        left: 1 + 6 * 1448,
        right: 1 + 8 * 1448,
    });
    sack_opts.push_sack(SackBlock {
        left: 1 + 9 * 1448,
        right: 1 + 10 * 1448,
    });
    let mut as_opts = ts(1011, 5006);
    as_opts.as_tcp_ack = Some(0x1234_5678);
    let mut udp = Packet::udp(
        ip(c, s),
        UdpHeader {
            src_port: 50000,
            dst_port: 50001,
        },
        100,
    );
    udp.ip.identification = 7;
    let ms = 1_000_000u64;
    let syn = TcpFlags::SYN;
    let ack = TcpFlags::ACK;
    let mut v = vec![
        (0, Packet::tcp(ip(c, s), tcp(syn, 0, 0, syn_opts), 0)),
        (
            20 * ms,
            Packet::tcp(
                ip(s, c),
                TcpHeader {
                    src_port: 5201,
                    dst_port: 40000,
                    ..tcp(syn | ack, 1000, 1, synack_opts)
                },
                0,
            ),
        ),
        (
            40 * ms,
            Packet::tcp(ip(c, s), tcp(ack, 1, 1001, ts(1002, 5000)), 0),
        ),
    ];
    for k in 0..10u32 {
        if k == 1 || k == 4 || k == 5 || k == 8 {
            continue; // "lost"
        }
        v.push((
            41 * ms + k as u64 * 10_000,
            Packet::tcp(
                ip(c, s),
                tcp(ack | TcpFlags::PSH, 1 + k * 1448, 1001, ts(1003, 5000)),
                1448,
            ),
        ));
    }
    let rev = |mut t: TcpHeader| {
        t.src_port = 5201;
        t.dst_port = 40000;
        t
    };
    v.push((
        61 * ms,
        Packet::tcp(ip(s, c), rev(tcp(ack, 1001, 1 + 1448, sack_opts)), 0),
    ));
    v.push((
        62 * ms,
        Packet::tcp(ip(s, c), rev(tcp(ack, 1001, 1 + 1448, as_opts)), 0),
    ));
    v.push((
        63 * ms,
        Packet::tcp(
            ip(c, s),
            tcp(ack | TcpFlags::FIN, 1 + 10 * 1448, 1001, ts(1020, 5006)),
            0,
        ),
    ));
    v.push((64 * ms, udp));
    v
}
