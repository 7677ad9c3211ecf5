//! From a captured frame to the TCP fields the analysis needs: link layer (Ethernet II with
//! 802.1Q/802.1ad VLAN tags, Linux cooked SLL and SLL2, BSD loopback, raw IP), IPv4 (RFC 791
//! §3.1) or IPv6 with extension headers (RFC 8200 §4), and the TCP header with its options
//! (RFC 9293 §3.1–3.2; window scale and timestamps RFC 7323 §2–3; SACK RFC 2018 §3). Header
//! walk accepts frames cut short by the snapshot length as long as the fixed 20-byte TCP header
//! is there (options are read as far as they were captured).
//!
//! Lengths (the dissertation's "invalid frame sizes", §5.3.1): the TCP payload length comes from
//! the IP header, as on the wire, not from the bytes captured — a snapshot-length-truncated
//! frame still counts its full payload. The IP length is *repaired* (and the segment marked)
//! when it cannot be right: zero (a TSO/GSO super-frame captured before segmentation), shorter
//! than its own headers, or longer than the frame on the wire (the record's original length);
//! the repaired length is the one the frame itself implies.

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
    /// The snapshot length cut the option list: an option missing here may have been on the
    /// wire (a SYN's window scale is then unknown, not absent).
    pub cut: bool,
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
    /// or beyond the packet on the wire, fewer than the fixed 20 TCP header bytes captured.
    Malformed,
}

/// The link types [`decode`] reads, with tcpdump.org's names.
pub const SUPPORTED_LINKTYPES: [(u32, &str); 10] = [
    (linktype::NULL, "NULL"),
    (linktype::ETHERNET, "ETHERNET"),
    (linktype::RAW_BSD12, "RAW"),
    (linktype::RAW_BSD14, "RAW"),
    (linktype::RAW, "RAW"),
    (linktype::LOOP, "LOOP"),
    (linktype::LINUX_SLL, "LINUX_SLL"),
    (linktype::IPV4, "IPV4"),
    (linktype::IPV6, "IPV6"),
    (linktype::LINUX_SLL2, "LINUX_SLL2"),
];

/// Whether [`decode`] reads frames of this link type (others are counted as not TCP).
pub fn linktype_supported(linktype: u32) -> bool {
    SUPPORTED_LINKTYPES.iter().any(|&(l, _)| l == linktype)
}

/// One line naming link types that were not decoded and the ones that are, e.g. "link type 127
/// is not decoded (supported: 0 NULL, 1 ETHERNET, …)".
pub fn unsupported_note(linktypes: &[u32]) -> String {
    let which: Vec<String> = linktypes.iter().map(|l| l.to_string()).collect();
    let supported: Vec<String> = SUPPORTED_LINKTYPES
        .iter()
        .map(|(l, n)| format!("{l} {n}"))
        .collect();
    format!(
        "link type{} {} {} not decoded (supported: {})",
        if which.len() > 1 { "s" } else { "" },
        which.join(", "),
        if which.len() > 1 { "are" } else { "is" },
        supported.join(", ")
    )
}

const ETH_IPV4: u16 = 0x0800;
const ETH_IPV6: u16 = 0x86dd;
/// 802.1Q, 802.1ad and the pre-standard QinQ tag (IEEE 802.1Q §9.6).
const ETH_VLAN: [u16; 3] = [0x8100, 0x88a8, 0x9100];

#[inline]
fn be16(d: &[u8], i: usize) -> u16 {
    u16::from_be_bytes([d[i], d[i + 1]])
}
#[inline]
fn be32(d: &[u8], i: usize) -> u32 {
    u32::from_be_bytes([d[i], d[i + 1], d[i + 2], d[i + 3]])
}

/// Decode one frame of link type `linktype` with original (wire) length `orig_len`.
///
/// Our own header walk rather than a general packet library: it reads only the fields the
/// analysis needs, without building a description of every layer, which made the library the
/// largest cost of the whole pass (the tests cross-check it against `etherparse`).
pub fn decode(linktype: u32, data: &[u8], orig_len: u32) -> Result<Segment, Skip> {
    if data.is_empty() {
        return Err(Skip::Malformed);
    }
    let (ethertype, link_len) = match linktype {
        linktype::ETHERNET => {
            if data.len() < 14 {
                return Err(Skip::Malformed);
            }
            let mut et = be16(data, 12);
            let mut off = 14;
            while ETH_VLAN.contains(&et) {
                if data.len() < off + 4 {
                    return Err(Skip::Malformed);
                }
                et = be16(data, off + 2);
                off += 4;
            }
            (et, off)
        }
        linktype::RAW
        | linktype::RAW_BSD12
        | linktype::RAW_BSD14
        | linktype::IPV4
        | linktype::IPV6 => match data[0] >> 4 {
            4 => (ETH_IPV4, 0),
            6 => (ETH_IPV6, 0),
            _ => return Err(Skip::Malformed),
        },
        linktype::LINUX_SLL => {
            // 16-byte header, protocol type at bytes 14..16 (tcpdump.org LINKTYPE_LINUX_SLL).
            if data.len() < 16 {
                return Err(Skip::Malformed);
            }
            (be16(data, 14), 16)
        }
        linktype::LINUX_SLL2 => {
            // 20-byte header, protocol type at bytes 0..2 (tcpdump.org LINKTYPE_LINUX_SLL2).
            if data.len() < 20 {
                return Err(Skip::Malformed);
            }
            (be16(data, 0), 20)
        }
        linktype::NULL | linktype::LOOP => {
            // The address family is in the capturing host's byte order and IPv6 has several
            // values (24, 28, 30): the IP version nibble says more.
            match data.get(4).map(|b| b >> 4) {
                Some(4) => (ETH_IPV4, 4),
                Some(6) => (ETH_IPV6, 4),
                Some(_) => return Err(Skip::NotTcp),
                None => return Err(Skip::Malformed),
            }
        }
        _ => return Err(Skip::NotTcp),
    };
    let ip = &data[link_len..];
    let frame_ip_len = orig_len
        .max(data.len() as u32)
        .saturating_sub(link_len as u32);
    let mut src = [0u8; 16];
    let mut dst = [0u8; 16];
    // (version, bytes before the TCP header, IP length from the header)
    let (ip_version, ip_hdr_len, hdr_ip_len) = match ethertype {
        ETH_IPV4 => {
            // RFC 791 §3.1.
            if ip.len() < 20 || ip[0] >> 4 != 4 {
                return Err(Skip::Malformed);
            }
            let ihl = (ip[0] & 0x0f) as usize * 4;
            if ihl < 20 || ip.len() < ihl {
                return Err(Skip::Malformed);
            }
            if ip[9] != 6 {
                return Err(Skip::NotTcp);
            }
            // A fragment other than the first carries no TCP header (RFC 791 §3.2).
            if be16(ip, 6) & 0x1fff != 0 {
                return Err(Skip::NotTcp);
            }
            src[..4].copy_from_slice(&ip[12..16]);
            dst[..4].copy_from_slice(&ip[16..20]);
            (4u8, ihl, be16(ip, 2) as u32)
        }
        ETH_IPV6 => {
            // RFC 8200 §3 and §4 (extension header chain).
            if ip.len() < 40 || ip[0] >> 4 != 6 {
                return Err(Skip::Malformed);
            }
            src.copy_from_slice(&ip[8..24]);
            dst.copy_from_slice(&ip[24..40]);
            let mut next = ip[6];
            let mut off = 40usize;
            loop {
                match next {
                    6 => break,
                    // Hop-by-hop, routing, destination options: length in 8-octet units.
                    0 | 43 | 60 => {
                        if ip.len() < off + 2 {
                            return Err(Skip::Malformed);
                        }
                        next = ip[off];
                        off += (ip[off + 1] as usize + 1) * 8;
                    }
                    // Fragment header: only the first fragment has the TCP header.
                    44 => {
                        if ip.len() < off + 8 {
                            return Err(Skip::Malformed);
                        }
                        if be16(ip, off + 2) & 0xfff8 != 0 {
                            return Err(Skip::NotTcp);
                        }
                        next = ip[off];
                        off += 8;
                    }
                    // Authentication header (RFC 4302 §2.2): length in 4-octet units, minus 2.
                    51 => {
                        if ip.len() < off + 2 {
                            return Err(Skip::Malformed);
                        }
                        next = ip[off];
                        off += (ip[off + 1] as usize + 2) * 4;
                    }
                    _ => return Err(Skip::NotTcp),
                }
            }
            if ip.len() < off {
                return Err(Skip::Malformed);
            }
            (6u8, off, 40 + be16(ip, 4) as u32)
        }
        _ => return Err(Skip::NotTcp),
    };
    // TCP header, RFC 9293 §3.1.
    let tcp = &ip[ip_hdr_len..];
    if tcp.len() < 20 {
        return Err(Skip::Malformed);
    }
    let tcp_hdr_len = (tcp[12] >> 4) as usize * 4;
    let min_len = (ip_hdr_len + tcp_hdr_len) as u32;
    // A data offset below 5 words, or beyond the packet on the wire, is damage. One beyond the
    // captured bytes but within the wire length is the snapshot length cutting the options
    // (tcpdump -s 54/64 with timestamps): the fixed header is enough, the options are read as
    // far as they were captured — as tshark does (found by fuzzing).
    if tcp_hdr_len < 20 || min_len > frame_ip_len {
        return Err(Skip::Malformed);
    }
    let (ip_len, repaired) = if hdr_ip_len < min_len || hdr_ip_len > frame_ip_len {
        (frame_ip_len.max(min_len), true)
    } else {
        (hdr_ip_len, false)
    };
    Ok(Segment {
        ip_version,
        src,
        dst,
        sport: be16(tcp, 0),
        dport: be16(tcp, 2),
        seq: be32(tcp, 4),
        ack: be32(tcp, 8),
        flags: tcp[13],
        window: be16(tcp, 14),
        ip_len,
        payload_len: ip_len - min_len,
        repaired,
        opts: TcpOpts {
            cut: tcp_hdr_len > tcp.len(),
            ..parse_options(&tcp[20..tcp_hdr_len.min(tcp.len())])
        },
    })
}

/// TCP options (RFC 9293 §3.2: kind 0 ends the list, kind 1 is one byte of padding, every
/// other kind has a length byte). A malformed option ends the walk; what was read stays.
fn parse_options(mut o: &[u8]) -> TcpOpts {
    let mut opts = TcpOpts::default();
    while let Some(&kind) = o.first() {
        match kind {
            0 => break,
            1 => {
                o = &o[1..];
                continue;
            }
            _ => {}
        }
        let Some(&len) = o.get(1) else { break };
        let len = len as usize;
        if len < 2 || len > o.len() {
            break;
        }
        let v = &o[2..len];
        match (kind, len) {
            (2, 4) => opts.mss = Some(be16(v, 0)),
            (3, 3) => opts.wscale = Some(v[0]),
            (4, 2) => opts.sack_permitted = true,
            (5, _) => opts.sack_blocks = ((len - 2) / 8) as u8,
            (8, 10) => opts.timestamps = Some((be32(v, 0), be32(v, 4))),
            _ => {}
        }
        o = &o[len..];
    }
    opts
}
