//! Hand-built captures for tests, docs and the fuzzer's seed corpus: a classic pcap writer
//! (draft-ietf-opsawg-pcap §4–5, little-endian, nanosecond magic), pcapng blocks
//! (draft-ietf-opsawg-pcapng) and builders for IPv4/IPv6 TCP segments (RFC 791 §3.1, RFC 8200
//! §3, RFC 9293 §3.1) with zero payload bytes. Checksums are left zero: neither this crate nor
//! tshark's default profile checks them.

use crate::decode::tcp_flags::*;
use crate::reader::linktype;

/// A TCP segment to build.
#[derive(Clone, Copy, Debug)]
pub struct Seg {
    pub src: [u8; 4],
    pub dst: [u8; 4],
    pub sport: u16,
    pub dport: u16,
    pub seq: u32,
    pub ack: u32,
    pub flags: u8,
    pub window: u16,
    pub payload: u32,
    /// Window scale option (SYNs).
    pub wscale: Option<u8>,
    /// Timestamps option (TSval, TSecr).
    pub ts: Option<(u32, u32)>,
}

pub const CLIENT: [u8; 4] = [10, 0, 0, 1];
pub const SERVER: [u8; 4] = [10, 0, 0, 2];

impl Seg {
    /// Client (10.0.0.1:40000) → server (10.0.0.2:80).
    pub fn c2s(seq: u32, ack: u32, flags: u8, payload: u32) -> Seg {
        Seg {
            src: CLIENT,
            dst: SERVER,
            sport: 40000,
            dport: 80,
            seq,
            ack,
            flags,
            window: 65535,
            payload,
            wscale: None,
            ts: None,
        }
    }
    /// Server → client.
    pub fn s2c(seq: u32, ack: u32, flags: u8, payload: u32) -> Seg {
        Seg {
            src: SERVER,
            dst: CLIENT,
            sport: 80,
            dport: 40000,
            seq,
            ack,
            flags,
            window: 65535,
            payload,
            wscale: None,
            ts: None,
        }
    }
    pub fn ports(mut self, sport: u16, dport: u16) -> Seg {
        self.sport = sport;
        self.dport = dport;
        self
    }

    fn tcp_header(&self) -> Vec<u8> {
        let mut opts = Vec::new();
        if let Some(w) = self.wscale {
            opts.extend_from_slice(&[1, 3, 3, w]);
        }
        if let Some((v, e)) = self.ts {
            opts.extend_from_slice(&[1, 1, 8, 10]);
            opts.extend_from_slice(&v.to_be_bytes());
            opts.extend_from_slice(&e.to_be_bytes());
        }
        let hl = 20 + opts.len();
        let mut h = Vec::with_capacity(hl);
        h.extend_from_slice(&self.sport.to_be_bytes());
        h.extend_from_slice(&self.dport.to_be_bytes());
        h.extend_from_slice(&self.seq.to_be_bytes());
        h.extend_from_slice(&self.ack.to_be_bytes());
        h.push(((hl / 4) as u8) << 4);
        h.push(self.flags);
        h.extend_from_slice(&self.window.to_be_bytes());
        h.extend_from_slice(&[0, 0, 0, 0]); // checksum, urgent pointer
        h.extend_from_slice(&opts);
        h
    }

    /// The whole IPv4 packet (payload bytes zero).
    pub fn ipv4(&self) -> Vec<u8> {
        let tcp = self.tcp_header();
        let total = 20 + tcp.len() + self.payload as usize;
        let mut p = Vec::with_capacity(total);
        p.extend_from_slice(&[0x45, 0]);
        p.extend_from_slice(&(total as u16).to_be_bytes());
        p.extend_from_slice(&[0, 0, 0x40, 0, 64, 6, 0, 0]);
        p.extend_from_slice(&self.src);
        p.extend_from_slice(&self.dst);
        p.extend_from_slice(&tcp);
        p.resize(total, 0);
        p
    }

    /// The whole IPv6 packet, addresses `fd00::<v4 address>`.
    pub fn ipv6(&self) -> Vec<u8> {
        let tcp = self.tcp_header();
        let plen = tcp.len() + self.payload as usize;
        let mut p = Vec::with_capacity(40 + plen);
        p.extend_from_slice(&[0x60, 0, 0, 0]);
        p.extend_from_slice(&(plen as u16).to_be_bytes());
        p.extend_from_slice(&[6, 64]);
        for a in [self.src, self.dst] {
            p.extend_from_slice(&[0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
            p.extend_from_slice(&a);
        }
        p.extend_from_slice(&tcp);
        p.resize(40 + plen, 0);
        p
    }
}

/// Ethernet II header (+ one 802.1Q tag when `vlan` is set) in front of an IP packet.
pub fn ethernet(ip: &[u8], vlan: Option<u16>) -> Vec<u8> {
    let mut f = vec![2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1];
    if let Some(id) = vlan {
        f.extend_from_slice(&[0x81, 0x00]);
        f.extend_from_slice(&id.to_be_bytes());
    }
    let et: u16 = if ip[0] >> 4 == 6 { 0x86dd } else { 0x0800 };
    f.extend_from_slice(&et.to_be_bytes());
    f.extend_from_slice(ip);
    f
}

/// Linux cooked v1 header (16 bytes) in front of an IP packet.
pub fn sll(ip: &[u8]) -> Vec<u8> {
    let et: u16 = if ip[0] >> 4 == 6 { 0x86dd } else { 0x0800 };
    let mut f = vec![0, 0, 0, 1, 0, 6, 2, 0, 0, 0, 0, 1, 0, 0];
    f.extend_from_slice(&et.to_be_bytes());
    f.extend_from_slice(ip);
    f
}

/// Linux cooked v2 header (20 bytes) in front of an IP packet.
pub fn sll2(ip: &[u8]) -> Vec<u8> {
    let et: u16 = if ip[0] >> 4 == 6 { 0x86dd } else { 0x0800 };
    let mut f = et.to_be_bytes().to_vec();
    f.extend_from_slice(&[0, 0, 0, 0, 0, 2, 0, 1, 0, 0, 6, 2, 0, 0, 0, 0, 1, 0]);
    f.extend_from_slice(ip);
    f
}

/// A classic pcap file being built in memory.
pub struct Pcap {
    pub bytes: Vec<u8>,
    snaplen: u32,
}

impl Pcap {
    pub fn new(linktype: u32, snaplen: u32) -> Pcap {
        let mut b = Vec::new();
        b.extend_from_slice(&0xa1b2_3c4du32.to_le_bytes());
        b.extend_from_slice(&2u16.to_le_bytes());
        b.extend_from_slice(&4u16.to_le_bytes());
        b.extend_from_slice(&[0; 8]);
        b.extend_from_slice(&snaplen.to_le_bytes());
        b.extend_from_slice(&linktype.to_le_bytes());
        Pcap { bytes: b, snaplen }
    }

    /// A record of `frame` at `ts_ns`, cut to the snapshot length; `orig_len` defaults to the
    /// frame's length.
    pub fn record(&mut self, ts_ns: i64, frame: &[u8], orig_len: Option<u32>) -> &mut Self {
        let incl = frame.len().min(self.snaplen as usize);
        self.bytes
            .extend_from_slice(&((ts_ns / 1_000_000_000) as u32).to_le_bytes());
        self.bytes
            .extend_from_slice(&((ts_ns % 1_000_000_000) as u32).to_le_bytes());
        self.bytes.extend_from_slice(&(incl as u32).to_le_bytes());
        self.bytes
            .extend_from_slice(&orig_len.unwrap_or(frame.len() as u32).to_le_bytes());
        self.bytes.extend_from_slice(&frame[..incl]);
        self
    }

    /// Raw-IP records of segments at the given times (ms).
    pub fn raw_segments(segs: &[(i64, Seg)]) -> Vec<u8> {
        let mut p = Pcap::new(linktype::RAW, 65535);
        for (ms, s) in segs {
            p.record(ms * 1_000_000, &s.ipv4(), None);
        }
        p.bytes
    }
}

/// A pcapng block, little-endian (draft-ietf-opsawg-pcapng §3.1): type, total length, the body
/// padded to 32 bits, total length again.
pub fn pcapng_block(kind: u32, body: &[u8]) -> Vec<u8> {
    let pad = (4 - body.len() % 4) % 4;
    let len = (12 + body.len() + pad) as u32;
    let mut b = kind.to_le_bytes().to_vec();
    b.extend_from_slice(&len.to_le_bytes());
    b.extend_from_slice(body);
    b.extend(std::iter::repeat_n(0u8, pad));
    b.extend_from_slice(&len.to_le_bytes());
    b
}

/// A pcapng section header block (§4.1): byte-order magic, version 1.0, section length
/// unknown, no options.
pub fn pcapng_section_header() -> Vec<u8> {
    let mut shb = 0x1a2b_3c4du32.to_le_bytes().to_vec();
    shb.extend_from_slice(&[1, 0, 0, 0]);
    shb.extend_from_slice(&(-1i64).to_le_bytes());
    pcapng_block(0x0a0d_0d0a, &shb)
}

/// A pcapng interface description block (§4.2): `linktype`, snaplen 65536, then `options`
/// as given (already encoded, end-of-options included if wanted).
pub fn pcapng_interface(linktype: u16, options: &[u8]) -> Vec<u8> {
    let mut idb = linktype.to_le_bytes().to_vec();
    idb.extend_from_slice(&[0, 0, 0, 0, 1, 0]);
    idb.extend_from_slice(options);
    pcapng_block(1, &idb)
}

/// A pcapng enhanced packet block (§4.3) of `frame` on interface `iface` at timestamp `ts`
/// (in the interface's units), captured whole.
pub fn pcapng_packet(iface: u32, ts: u64, frame: &[u8]) -> Vec<u8> {
    let mut b = iface.to_le_bytes().to_vec();
    b.extend_from_slice(&((ts >> 32) as u32).to_le_bytes());
    b.extend_from_slice(&(ts as u32).to_le_bytes());
    b.extend_from_slice(&(frame.len() as u32).to_le_bytes());
    b.extend_from_slice(&(frame.len() as u32).to_le_bytes());
    b.extend_from_slice(frame);
    b.extend(std::iter::repeat_n(0u8, (4 - frame.len() % 4) % 4));
    pcapng_block(6, &b)
}

/// Handshake, 1000 bytes of server data in one segment, its ACK: five packets, one session.
pub fn handshake_and_data() -> Vec<u8> {
    Pcap::raw_segments(&[
        (0, Seg::c2s(100, 0, SYN, 0)),
        (10, Seg::s2c(5000, 101, SYN | ACK, 0)),
        (20, Seg::c2s(101, 5001, ACK, 0)),
        (21, Seg::s2c(5001, 101, ACK | PSH, 1000)),
        (31, Seg::c2s(101, 6001, ACK, 0)),
    ])
}

/// A synthetic Ethernet capture of `packets` frames for benchmarks, written to `out`: 64
/// interleaved bulk downloads (1448-byte segments, an ACK every second segment, 10 ms RTT), one
/// segment in 100 lost after the capture point, ACKed three times (two duplicate ACKs) and
/// fast-retransmitted. Frames
/// are cut to a 96-byte snapshot length (headers only), as field captures usually are.
/// Deterministic: the same `packets` gives the same bytes.
pub fn write_synthetic<W: std::io::Write>(mut out: W, packets: u64) -> std::io::Result<()> {
    const FLOWS: u32 = 64;
    const MSS: u32 = 1448;
    const SNAP: usize = 96;
    let mut hdr = Pcap::new(linktype::ETHERNET, SNAP as u32);
    out.write_all(&hdr.bytes)?;
    hdr.bytes.clear();
    struct Flow {
        seq: u32,
        acked: u32,
        n: u64,
        pending_retx: Option<u32>,
    }
    let mut flows: Vec<Flow> = (0..FLOWS)
        .map(|_| Flow {
            seq: 1,
            acked: 1,
            n: 0,
            pending_retx: None,
        })
        .collect();
    let mut buf = Vec::with_capacity(1 << 20);
    let mut written = 0u64;
    let mut t_ns: i64 = 1_700_000_000_000_000_000;
    let mut i = 0u64;
    while written < packets {
        let fi = (i % FLOWS as u64) as usize;
        i += 1;
        t_ns += 1_000;
        let f = &mut flows[fi];
        let port = 40000 + fi as u16;
        let emit = |s: Seg, buf: &mut Vec<u8>| {
            let ip = s.ipv4();
            let frame = ethernet(&ip, None);
            let incl = frame.len().min(SNAP);
            buf.extend_from_slice(&((t_ns / 1_000_000_000) as u32).to_le_bytes());
            buf.extend_from_slice(&((t_ns % 1_000_000_000) as u32).to_le_bytes());
            buf.extend_from_slice(&(incl as u32).to_le_bytes());
            buf.extend_from_slice(&(frame.len() as u32).to_le_bytes());
            buf.extend_from_slice(&frame[..incl]);
        };
        let isn = 1_000_000 * fi as u32;
        if f.n == 0 {
            emit(Seg::c2s(77, 0, SYN, 0).ports(port, 80), &mut buf);
            emit(Seg::s2c(isn, 78, SYN | ACK, 0).ports(80, port), &mut buf);
            emit(Seg::c2s(78, isn + 1, ACK, 0).ports(port, 80), &mut buf);
            written += 3;
        } else if let Some(lost) = f.pending_retx.take() {
            emit(Seg::s2c(isn + lost, 78, ACK, MSS).ports(80, port), &mut buf);
            f.acked = f.seq;
            emit(
                Seg::c2s(78, isn + f.acked, ACK, 0).ports(port, 80),
                &mut buf,
            );
            written += 2;
        } else {
            let s = f.seq;
            f.seq += MSS;
            emit(Seg::s2c(isn + s, 78, ACK, MSS).ports(80, port), &mut buf);
            written += 1;
            if f.n % 100 == 50 {
                // Lost after the capture point: the receiver ACKs the hole three times.
                for _ in 0..3 {
                    emit(Seg::c2s(78, isn + s, ACK, 0).ports(port, 80), &mut buf);
                }
                written += 3;
                f.pending_retx = Some(s);
            } else if f.n.is_multiple_of(2) {
                f.acked = f.seq;
                emit(
                    Seg::c2s(78, isn + f.acked, ACK, 0).ports(port, 80),
                    &mut buf,
                );
                written += 1;
            }
        }
        f.n += 1;
        if buf.len() > (1 << 20) - 4096 {
            out.write_all(&buf)?;
            buf.clear();
        }
    }
    out.write_all(&buf)?;
    out.flush()
}
