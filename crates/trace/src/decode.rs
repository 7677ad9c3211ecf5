//! From a captured frame to the TCP fields the analysis needs: link layer (Ethernet II with
//! 802.1Q/802.1ad VLAN tags, Linux cooked SLL and SLL2, BSD loopback, raw IP), IPv4 (RFC 791
//! §3.1) or IPv6 with extension headers (RFC 8200 §4), and the TCP header with its options
//! (RFC 9293 §3.1–3.2; window scale and timestamps RFC 7323 §2–3; SACK RFC 2018 §3). Header
//! slicing is `etherparse`'s lax mode, which accepts frames cut short by the snapshot length.
//!
//! Lengths (the dissertation's "invalid frame sizes", §5.3.1): the TCP payload length comes from
//! the IP header, as on the wire, not from the bytes captured — a snapshot-length-truncated
//! frame still counts its full payload. The IP length is *repaired* (and the segment marked)
//! when it cannot be right: zero (a TSO/GSO super-frame captured before segmentation), shorter
//! than its own headers, or longer than the frame on the wire (the record's original length);
//! the repaired length is the one the frame itself implies.

use etherparse::{ether_type, EtherType, LaxNetSlice, LaxSlicedPacket, TcpOptionElement, TransportSlice};

use crate::reader::linktype;

/// TCP flag bits (RFC 9293 §3.1; ECE/CWR RFC 3168 §23.2).
pub mod tcp_flags {
    pub const FIN: u8 = 0x01;
    pub const SYN: u8 = 0x02;
    pub const RST: u8 = 0x04;
    pub const PSH: u8 = 0x08;
    pub const ACK: u8 = 0x10;
}

/// The TCP options the analysis uses.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TcpOpts {
    pub mss: Option<u16>,
    /// Window scale shift count (RFC 7323 §2.2).
    pub wscale: Option<u8>,
    pub sack_permitted: bool,
    /// (TSval, TSecr) (RFC 7323 §3).
    pub timestamps: Option<(u32, u32)>,
    /// Number of SACK blocks (RFC 2018 §3).
    pub sack_blocks: u8,
}

/// One decoded TCP segment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Segment {
    /// 4 or 6.
    pub ip_version: u8,
    /// Addresses; IPv4 in the first four bytes, the rest zero.
    pub src: [u8; 16],
    pub dst: [u8; 16],
    pub sport: u16,
    pub dport: u16,
    pub seq: u32,
    pub ack: u32,
    pub flags: u8,
    /// The raw 16-bit window field.
    pub window: u16,
    /// IP packet length (header + payload), bytes, after repair.
    pub ip_len: u32,
    /// TCP payload length, bytes, after repair.
    pub payload_len: u32,
    /// The IP length field was repaired (see the module doc).
    pub repaired: bool,
    pub opts: TcpOpts,
}

/// Why a frame yields no TCP segment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Skip {
    /// A well-formed frame that is not TCP over IP (ARP, UDP, ICMP, an IP fragment after the
    /// first…), or of a link type we do not decode.
    NotTcp,
    /// Headers that cannot be parsed: zero-length frame, IPv4 IHL < 5, a TCP data offset below 5
    /// or beyond the captured bytes, a header cut by the snapshot length.
    Malformed,
}

/// Decode one frame of link type `linktype` with original (wire) length `orig_len`.
pub fn decode(linktype: u32, data: &[u8], orig_len: u32) -> Result<Segment, Skip> {
    if data.is_empty() {
        return Err(Skip::Malformed);
    }
    // Bytes of link-layer header before the network layer, for the wire length of the IP packet.
    let (sliced, link_len) = match linktype {
        linktype::ETHERNET => match LaxSlicedPacket::from_ethernet(data) {
            Ok(p) => {
                let l = link_header_len(data, &p);
                (p, l)
            }
            Err(_) => return Err(Skip::Malformed),
        },
        linktype::RAW | linktype::RAW_BSD12 | linktype::RAW_BSD14 | linktype::IPV4 | linktype::IPV6 => {
            match LaxSlicedPacket::from_ip(data) {
                Ok(p) => (p, 0),
                Err(_) => return Err(Skip::Malformed),
            }
        }
        linktype::LINUX_SLL => {
            // 16-byte header, protocol type at bytes 14..16 (tcpdump.org LINKTYPE_LINUX_SLL).
            if data.len() < 16 {
                return Err(Skip::Malformed);
            }
            let proto = u16::from_be_bytes([data[14], data[15]]);
            (LaxSlicedPacket::from_ether_type(EtherType(proto), &data[16..]), 16)
        }
        linktype::LINUX_SLL2 => {
            // 20-byte header, protocol type at bytes 0..2 (tcpdump.org LINKTYPE_LINUX_SLL2).
            if data.len() < 20 {
                return Err(Skip::Malformed);
            }
            let proto = u16::from_be_bytes([data[0], data[1]]);
            (LaxSlicedPacket::from_ether_type(EtherType(proto), &data[20..]), 20)
        }
        linktype::NULL | linktype::LOOP => {
            if data.len() < 4 {
                return Err(Skip::Malformed);
            }
            // Address family 2 is IPv4; IPv6 is 24, 28 or 30 depending on the OS; the byte order
            // is the capturing host's, so look at the IP version nibble instead.
            match data.get(4).map(|b| b >> 4) {
                Some(4) => (LaxSlicedPacket::from_ether_type(ether_type::IPV4, &data[4..]), 4),
                Some(6) => (LaxSlicedPacket::from_ether_type(ether_type::IPV6, &data[4..]), 4),
                _ => return Err(Skip::NotTcp),
            }
        }
        _ => return Err(Skip::NotTcp),
    };
    let frame_ip_len = orig_len.max(data.len() as u32).saturating_sub(link_len as u32);
    segment(&sliced, data, frame_ip_len)
}

/// Link header length of an Ethernet frame: where the IP header starts.
fn link_header_len(data: &[u8], p: &LaxSlicedPacket<'_>) -> usize {
    match &p.net {
        Some(LaxNetSlice::Ipv4(ip)) => ip.header().slice().as_ptr() as usize - data.as_ptr() as usize,
        Some(LaxNetSlice::Ipv6(ip)) => ip.header().slice().as_ptr() as usize - data.as_ptr() as usize,
        _ => 14,
    }
}

fn segment(p: &LaxSlicedPacket<'_>, data: &[u8], frame_ip_len: u32) -> Result<Segment, Skip> {
    let mut src = [0u8; 16];
    let mut dst = [0u8; 16];
    // (version, header bytes before TCP, IP length from the header)
    let (ip_version, ip_hdr_len, hdr_ip_len, payload) = match &p.net {
        Some(LaxNetSlice::Ipv4(ip)) => {
            let h = ip.header();
            src[..4].copy_from_slice(&h.source());
            dst[..4].copy_from_slice(&h.destination());
            let payload = ip.payload();
            let hdr_len = (payload.payload.as_ptr() as usize - h.slice().as_ptr() as usize) as u32;
            (4u8, hdr_len, h.total_len() as u32, payload)
        }
        Some(LaxNetSlice::Ipv6(ip)) => {
            let h = ip.header();
            src = h.source();
            dst = h.destination();
            let payload = ip.payload();
            let hdr_len = (payload.payload.as_ptr() as usize - h.slice().as_ptr() as usize) as u32;
            (6u8, hdr_len, 40 + h.payload_length() as u32, payload)
        }
        Some(_) => return Err(Skip::NotTcp),
        None => {
            return Err(if p.stop_err.is_some() { Skip::Malformed } else { Skip::NotTcp });
        }
    };
    let _ = data;
    let tcp = match &p.transport {
        Some(TransportSlice::Tcp(t)) => t,
        Some(_) => return Err(Skip::NotTcp),
        None => {
            if payload.ip_number != etherparse::ip_number::TCP || payload.fragmented {
                return Err(Skip::NotTcp);
            }
            return Err(Skip::Malformed);
        }
    };
    let tcp_hdr_len = tcp.data_offset() as u32 * 4;
    let min_len = ip_hdr_len + tcp_hdr_len;
    let (ip_len, repaired) = if hdr_ip_len < min_len || hdr_ip_len > frame_ip_len {
        (frame_ip_len.max(min_len), true)
    } else {
        (hdr_ip_len, false)
    };
    let mut opts = TcpOpts::default();
    for o in tcp.options_iterator() {
        match o {
            Ok(TcpOptionElement::MaximumSegmentSize(m)) => opts.mss = Some(m),
            Ok(TcpOptionElement::WindowScale(w)) => opts.wscale = Some(w),
            Ok(TcpOptionElement::SelectiveAcknowledgementPermitted) => opts.sack_permitted = true,
            Ok(TcpOptionElement::SelectiveAcknowledgement(_, rest)) => {
                opts.sack_blocks = 1 + rest.iter().filter(|b| b.is_some()).count() as u8
            }
            Ok(TcpOptionElement::Timestamp(v, e)) => opts.timestamps = Some((v, e)),
            Ok(_) => {}
            Err(_) => break,
        }
    }
    let flags = tcp.slice()[13];
    Ok(Segment {
        ip_version,
        src,
        dst,
        sport: tcp.source_port(),
        dport: tcp.destination_port(),
        seq: tcp.sequence_number(),
        ack: tcp.acknowledgment_number(),
        flags,
        window: tcp.window_size(),
        ip_len,
        payload_len: ip_len - min_len,
        repaired,
        opts,
    })
}
