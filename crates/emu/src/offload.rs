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

use rantcp_wire::{Packet, ParseError, TcpFlags, Transport};

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

/// The header we put before every packet we write: no GSO, checksums valid.
pub const WRITE_HDR: [u8; VNET_HDR_LEN] = [F_DATA_VALID, GSO_NONE, 0, 0, 0, 0, 0, 0, 0, 0];

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
}
