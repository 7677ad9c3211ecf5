//! Segmentation offload on the TUN devices (Linux `IFF_VNET_HDR`, the virtio-net header of the
//! virtio 1.x spec §5.1.6): a host's stack hands the device TCP "super-segments" of up to 64 KB
//! (TSO, `VIRTIO_NET_HDR_GSO_TCPV4`) with the checksum left to the device (`NEEDS_CSUM`), and
//! [`segment`] cuts them into the MSS-sized segments a NIC would put on the wire, which is
//! what the model carries. One read per super-segment instead of one per packet, and the
//! sender's stack runs once per super-segment: the fast path the real-time bench needs.
//!
//! Cutting follows what a NIC does for TSO (Linux `tcp_gso_segment`, Intel/virtio TSO): every
//! segment gets the headers of the super-segment with its own sequence number (seq + offset)
//! and IPv4 identification (id + index); FIN and PSH stay on the last segment only, CWR on the
//! first only (RFC 3168 §6.1.2: set on one segment).
//!
//! The other way, [`Coalescer`] is receive offload (GRO, Linux `tcp_gro_receive`): consecutive
//! in-order segments of one connection that the model delivers to a host in the same turn are
//! written as one super-segment (`GSO_TCPV4`, checksum `NEEDS_CSUM`), so the receiving stack
//! runs once per batch, as behind a NIC with GRO. Only what GRO would merge is merged: same
//! addresses, ports, TOS/ECN and TTL, same ACK, window and options (timestamps included), ACK
//! alone set (PSH allowed on the last), every segment but the last of the first one's size.

use rantcp_wire::{Packet, ParseError, TcpFlags, Transport, IPV4_HEADER_LEN};

/// Bytes of the virtio-net header before each packet (the device's default size).
pub const VNET_HDR_LEN: usize = 10;
pub const GSO_NONE: u8 = 0;
pub const GSO_TCPV4: u8 = 1;
/// Flag for packets we write: the checksums are valid (the host's stack need not verify).
pub const F_DATA_VALID: u8 = 2;

/// The fields of a virtio-net header that matter here (little-endian on x86, as the device
/// has no VNET_LE/BE setting and this host is little-endian).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VnetHdr {
    pub flags: u8,
    pub gso_type: u8,
    pub gso_size: u16,
}

impl VnetHdr {
    pub fn parse(b: &[u8]) -> Option<VnetHdr> {
        (b.len() >= VNET_HDR_LEN).then(|| VnetHdr {
            flags: b[0],
            gso_type: b[1] & 0x7f, // without the ECN bit
            gso_size: u16::from_le_bytes([b[4], b[5]]),
        })
    }
}

/// The header we put before every packet we write whole: no GSO, checksums valid.
pub const WRITE_HDR: [u8; VNET_HDR_LEN] = [F_DATA_VALID, GSO_NONE, 0, 0, 0, 0, 0, 0, 0, 0];
/// Flag: the transport checksum is to be completed from `csum_start` (it holds the
/// pseudo-header sum).
pub const F_NEEDS_CSUM: u8 = 1;

/// The virtio-net header of a TCP packet whose checksum is left to the receiver
/// (`NEEDS_CSUM` at the TCP checksum field), as one segment or, with `gso_size`, a
/// super-segment of that segment size.
pub fn write_hdr_tcp(header_len: u16, gso_size: Option<u16>) -> [u8; VNET_HDR_LEN] {
    let mut h = [0u8; VNET_HDR_LEN];
    h[0] = F_NEEDS_CSUM;
    h[1] = if gso_size.is_some() {
        GSO_TCPV4
    } else {
        GSO_NONE
    };
    h[2..4].copy_from_slice(&header_len.to_le_bytes());
    h[4..6].copy_from_slice(&gso_size.unwrap_or(0).to_le_bytes());
    h[6..8].copy_from_slice(&(IPV4_HEADER_LEN as u16).to_le_bytes()); // csum_start
    h[8..10].copy_from_slice(&16u16.to_le_bytes()); // csum_offset: tcphdr.check
    h
}

/// The largest IPv4 datagram a super-segment may grow to.
const MAX_SUPER: usize = 65_535;

/// Receive offload for the packets written to one device: see the module docs.
pub struct Coalescer {
    /// First segment of the batch: the super-segment's headers; `None` when empty.
    head: Option<Packet>,
    /// Destination (the caller's index of the device).
    dest: usize,
    /// Payload bytes of the batch, in sequence order.
    payload: Vec<u8>,
    segs: u32,
    /// No further segment may join (the last was short, had PSH, or the head cannot merge).
    closed: bool,
    /// PSH on the last segment joined.
    psh: bool,
}

/// A batch ready to write: the device index, the bytes (virtio-net header, IPv4 and TCP
/// headers), and the payload.
pub struct Batch<'a> {
    pub dest: usize,
    pub header: &'a [u8],
    pub payload: &'a [u8],
    /// Segments in it.
    pub segs: u32,
}

impl Default for Coalescer {
    fn default() -> Self {
        Coalescer {
            head: None,
            dest: 0,
            payload: Vec::with_capacity(MAX_SUPER),
            segs: 0,
            closed: true,
            psh: false,
        }
    }
}

/// Whether a segment may start or continue a batch (GRO's rule: ACK, PSH allowed on the
/// last one only; no SYN, FIN, RST, URG, ECE, CWR).
fn mergeable_flags(f: TcpFlags) -> bool {
    f.0 & !TcpFlags::PSH.0 == TcpFlags::ACK.0
}

impl Coalescer {
    /// Add a TCP segment with data for device `dest`; returns false (and takes nothing) when it
    /// cannot join the current batch: [`Coalescer::flush`] and add it again.
    pub fn add(&mut self, dest: usize, p: &Packet, payload: &[u8]) -> bool {
        let Transport::Tcp(t) = p.transport else {
            return false;
        };
        let Some(head) = &self.head else {
            self.head = Some(*p);
            self.dest = dest;
            self.payload.clear();
            self.payload.extend_from_slice(payload);
            self.segs = 1;
            self.psh = t.flags.0 & TcpFlags::PSH.0 != 0;
            self.closed = payload.is_empty() || self.psh || !mergeable_flags(t.flags);
            return true;
        };
        let Transport::Tcp(h) = head.transport else {
            return false;
        };
        let mss = head.payload_len as usize;
        let ok = !self.closed
            && dest == self.dest
            && mergeable_flags(t.flags)
            && !payload.is_empty()
            && payload.len() <= mss
            && p.ip.src == head.ip.src
            && p.ip.dst == head.ip.dst
            && p.ip.dscp_ecn == head.ip.dscp_ecn
            && p.ip.ttl == head.ip.ttl
            && t.src_port == h.src_port
            && t.dst_port == h.dst_port
            && t.seq == h.seq.wrapping_add(self.payload.len() as u32)
            && t.ack == h.ack
            && t.window == h.window
            && t.options == h.options
            && head.header_len() as usize + self.payload.len() + payload.len() <= MAX_SUPER;
        if !ok {
            return false;
        }
        self.payload.extend_from_slice(payload);
        self.segs += 1;
        self.psh = t.flags.0 & TcpFlags::PSH.0 != 0;
        self.closed = payload.len() < mss || self.psh;
        true
    }

    /// Whether a batch is waiting.
    pub fn is_empty(&self) -> bool {
        self.head.is_none()
    }

    /// The waiting batch as bytes to write (headers built into `hdr`), and empty again.
    pub fn flush<'a>(&'a mut self, hdr: &'a mut Vec<u8>) -> Option<Batch<'a>> {
        let mut p = self.head.take()?;
        let mss = p.payload_len as u16;
        p.payload_len = self.payload.len() as u32;
        if let Transport::Tcp(t) = &mut p.transport {
            if self.psh {
                t.flags = TcpFlags(t.flags.0 | TcpFlags::PSH.0);
            }
        }
        hdr.clear();
        let gso = (self.segs > 1).then_some(mss);
        hdr.extend_from_slice(&write_hdr_tcp(p.header_len() as u16, gso));
        p.write_headers_partial_csum(hdr);
        self.closed = true;
        Some(Batch {
            dest: self.dest,
            header: hdr,
            payload: &self.payload,
            segs: self.segs,
        })
    }
}

/// Cut `bytes` (an IPv4 packet as the host's stack gave it, after the virtio-net header `h`)
/// into wire-sized packets; `f` gets each packet with its payload bytes. The transport
/// checksum is not verified (left to offload: it holds the pseudo-header sum only).
pub fn segment(
    h: VnetHdr,
    bytes: &[u8],
    mut f: impl FnMut(Packet, &[u8]),
) -> Result<(), ParseError> {
    let p = if h.flags & 1 != 0 || h.gso_type != GSO_NONE {
        Packet::parse_unverified(bytes)?
    } else {
        Packet::parse(bytes)?
    };
    let hl = p.header_len() as usize;
    let payload = &bytes[hl..hl + p.payload_len as usize];
    let mss = h.gso_size as usize;
    let Transport::Tcp(t) = p.transport else {
        f(p, payload);
        return Ok(());
    };
    if h.gso_type != GSO_TCPV4 || mss == 0 || payload.len() <= mss {
        f(p, payload);
        return Ok(());
    }
    let n = payload.len().div_ceil(mss);
    for (i, chunk) in payload.chunks(mss).enumerate() {
        let mut q = p;
        let mut tq = t;
        tq.seq = t.seq.wrapping_add((i * mss) as u32);
        let mut fl = t.flags.0;
        if i + 1 < n {
            fl &= !(TcpFlags::FIN.0 | TcpFlags::PSH.0);
        }
        if i > 0 {
            fl &= !TcpFlags::CWR.0;
        }
        tq.flags = TcpFlags(fl);
        q.transport = Transport::Tcp(tq);
        q.ip.identification = p.ip.identification.wrapping_add(i as u16);
        q.payload_len = chunk.len() as u32;
        f(q, chunk);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use rantcp_wire::{Ipv4Header, TcpHeader, TcpOptions};
    use std::net::Ipv4Addr;

    fn super_segment(payload: &[u8], flags: TcpFlags) -> Vec<u8> {
        let p = Packet::tcp(
            Ipv4Header {
                identification: 0xfffe,
                ..Ipv4Header::new(Ipv4Addr::new(10, 0, 0, 1), Ipv4Addr::new(10, 0, 1, 1))
            },
            TcpHeader {
                src_port: 1,
                dst_port: 2,
                seq: u32::MAX - 1000,
                ack: 7,
                flags,
                window: 100,
                urgent: 0,
                options: TcpOptions {
                    timestamps: Some((1, 2)),
                    ..Default::default()
                },
            },
            payload.len() as u32,
        );
        let mut b = Vec::new();
        p.write_bytes_with_payload(payload, &mut b);
        b[36] ^= 0x55; // a partial checksum, as offload leaves it
        b
    }

    #[test]
    fn tso_super_segment_is_cut_like_a_nic() {
        let data: Vec<u8> = (0..3000u32).map(|i| i as u8).collect();
        let b = super_segment(
            &data,
            TcpFlags::ACK | TcpFlags::PSH | TcpFlags::CWR | TcpFlags::FIN,
        );
        let h = VnetHdr {
            flags: 1,
            gso_type: GSO_TCPV4,
            gso_size: 1448,
        };
        let mut got = Vec::new();
        segment(h, &b, |p, pl| got.push((p, pl.to_vec()))).unwrap();
        assert_eq!(got.len(), 3);
        let lens: Vec<u32> = got.iter().map(|(p, _)| p.payload_len).collect();
        assert_eq!(lens, [1448, 1448, 104]);
        let seqs: Vec<u32> = got.iter().map(|(p, _)| p.as_tcp().unwrap().seq).collect();
        assert_eq!(seqs, [u32::MAX - 1000, 447, 1895], "wraps");
        let ids: Vec<u16> = got.iter().map(|(p, _)| p.ip.identification).collect();
        assert_eq!(ids, [0xfffe, 0xffff, 0]);
        let flags: Vec<u8> = got
            .iter()
            .map(|(p, _)| p.as_tcp().unwrap().flags.0)
            .collect();
        assert_eq!(flags, [0x10 | 0x80, 0x10, 0x10 | 0x08 | 0x01]);
        let joined: Vec<u8> = got.iter().flat_map(|(_, pl)| pl.clone()).collect();
        assert_eq!(joined, data);
        // Each rebuilt segment is a valid packet (fresh checksums).
        for (p, pl) in &got {
            let mut w = Vec::new();
            p.write_bytes_with_payload(pl, &mut w);
            assert_eq!(Packet::parse(&w), Ok(*p));
        }
    }

    #[test]
    fn plain_packets_are_verified_and_passed_whole() {
        let data = [9u8; 100];
        let b = super_segment(&data, TcpFlags::ACK);
        let none = VnetHdr {
            flags: 0,
            gso_type: GSO_NONE,
            gso_size: 0,
        };
        // No offload claimed: the (broken) checksum is checked.
        assert!(segment(none, &b, |_, _| {}).is_err());
        let partial = VnetHdr { flags: 1, ..none };
        let mut n = 0;
        segment(partial, &b, |p, pl| {
            n += 1;
            assert_eq!((p.payload_len, pl), (100, &data[..]));
        })
        .unwrap();
        assert_eq!(n, 1);
    }

    fn seg(seq: u32, len: usize, flags: TcpFlags) -> (Packet, Vec<u8>) {
        let p = Packet::tcp(
            Ipv4Header::new(Ipv4Addr::new(10, 0, 0, 1), Ipv4Addr::new(10, 0, 1, 1)),
            TcpHeader {
                src_port: 5201,
                dst_port: 40000,
                seq,
                ack: 1,
                flags,
                window: 500,
                urgent: 0,
                options: TcpOptions {
                    timestamps: Some((77, 5)),
                    ..Default::default()
                },
            },
            len as u32,
        );
        (p, (0..len).map(|i| (seq as usize + i) as u8).collect())
    }

    #[test]
    fn in_order_segments_become_one_super_segment() {
        let mut c = Coalescer::default();
        let (a, pa) = seg(1000, 1448, TcpFlags::ACK);
        let (b, pb) = seg(2448, 1448, TcpFlags::ACK);
        let (d, pd) = seg(3896, 100, TcpFlags::ACK | TcpFlags::PSH);
        assert!(c.add(3, &a, &pa));
        assert!(c.add(3, &b, &pb));
        assert!(c.add(3, &d, &pd));
        let (e, pe) = seg(3996, 1448, TcpFlags::ACK);
        assert!(
            !c.add(3, &e, &pe),
            "nothing joins after a short segment with PSH"
        );
        let mut hdr = Vec::new();
        let batch = c.flush(&mut hdr).unwrap();
        assert_eq!((batch.dest, batch.segs), (3, 3));
        let joined: Vec<u8> = [pa, pb, pd].concat();
        assert_eq!(batch.payload, &joined[..]);
        let h = batch.header;
        let hl = a.header_len() as u16;
        // virtio-net header: NEEDS_CSUM, GSO_TCPV4, hdr_len, gso_size 1448, csum at 20 + 16.
        assert_eq!(h[..VNET_HDR_LEN], write_hdr_tcp(hl, Some(1448)));
        assert_eq!(
            (h[0], h[1], u16::from_le_bytes([h[4], h[5]])),
            (F_NEEDS_CSUM, GSO_TCPV4, 1448)
        );
        // The headers are the first segment's with the whole length and PSH; completing the
        // checksum over the payload (what the receiver does with NEEDS_CSUM) makes it valid.
        let mut wire = h[VNET_HDR_LEN..].to_vec();
        wire.extend_from_slice(&joined);
        let mut sum = rantcp_wire::checksum::Checksum::new();
        sum.add_bytes(&wire[20..]);
        let csum = sum.finish();
        wire[36..38].copy_from_slice(&csum.to_be_bytes());
        let q = Packet::parse(&wire).unwrap();
        assert_eq!(q.payload_len, 1448 * 2 + 100);
        let t = q.as_tcp().unwrap();
        assert_eq!((t.seq, t.flags.0), (1000, 0x10 | 0x08));
        assert!(c.is_empty());
    }

    #[test]
    fn gro_rules_keep_apart_what_must_stay_apart() {
        let mut hdr = Vec::new();
        let (a, pa) = seg(1000, 1448, TcpFlags::ACK);
        let cases: Vec<(&str, usize, Packet, Vec<u8>)> = vec![
            (
                "another device",
                4,
                seg(2448, 1448, TcpFlags::ACK).0,
                seg(2448, 1448, TcpFlags::ACK).1,
            ),
            (
                "a gap",
                3,
                seg(2449, 1448, TcpFlags::ACK).0,
                seg(2449, 1448, TcpFlags::ACK).1,
            ),
            (
                "FIN",
                3,
                seg(2448, 1448, TcpFlags::ACK | TcpFlags::FIN).0,
                vec![0; 1448],
            ),
            (
                "longer than the first",
                3,
                seg(2448, 1449, TcpFlags::ACK).0,
                vec![0; 1449],
            ),
            ("a pure ACK", 3, seg(2448, 0, TcpFlags::ACK).0, vec![]),
            (
                "another ACK number",
                3,
                {
                    let (mut p, _) = seg(2448, 1448, TcpFlags::ACK);
                    if let Transport::Tcp(t) = &mut p.transport {
                        t.ack = 2
                    }
                    p
                },
                vec![0; 1448],
            ),
            (
                "another timestamp",
                3,
                {
                    let (mut p, _) = seg(2448, 1448, TcpFlags::ACK);
                    if let Transport::Tcp(t) = &mut p.transport {
                        t.options.timestamps = Some((78, 5))
                    }
                    p
                },
                vec![0; 1448],
            ),
            (
                "CE-marked",
                3,
                {
                    let (mut p, _) = seg(2448, 1448, TcpFlags::ACK);
                    p.ip.dscp_ecn = 3;
                    p
                },
                vec![0; 1448],
            ),
        ];
        for (why, dest, p, pl) in cases {
            let mut c = Coalescer::default();
            assert!(c.add(3, &a, &pa));
            assert!(!c.add(dest, &p, &pl), "{why}");
            let b = c.flush(&mut hdr).unwrap();
            assert_eq!(b.segs, 1, "{why}");
            // A lone segment: no GSO, checksum still left to the receiver.
            assert_eq!(
                (b.header[0], b.header[1]),
                (F_NEEDS_CSUM, GSO_NONE),
                "{why}"
            );
        }
        // Nothing joins a head that cannot merge (a SYN-ACK).
        let mut c = Coalescer::default();
        let (s, _) = seg(999, 0, TcpFlags::SYN | TcpFlags::ACK);
        assert!(c.add(3, &s, &[]));
        assert!(!c.add(3, &a, &pa));
    }
}
