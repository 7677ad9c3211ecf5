//! Wire bytes of a [`Packet`] and parsing back: the IPv4 header (RFC 791 §3.1, header checksum
//! per RFC 1071), the TCP header (RFC 9293 §3.1: data offset, control bits, checksum over the
//! pseudo-header) with its options (RFC 9293 §3.2 and §3.7.1 MSS, RFC 7323 §2.2 window scale and
//! §3.2 timestamps, RFC 2018 §2 SACK-permitted and §3 SACK, RFC 6994 shared use of experimental
//! kind 253 for AS-TCP) laid out as [`crate::TcpOptions::wire_len`] documents, the UDP header
//! (RFC 768) and the ICMP header (RFC 792: checksum over the whole message, no pseudo-header).
//!
//! Payload bytes are not modelled: they are emitted as zeros, which add nothing to a one's
//! complement sum, so a checksum only ever sums the headers and the pseudo-header. A caller
//! that keeps a packet's real payload (the real-time emulator) writes it with
//! [`Packet::write_bytes_with_payload`], which adds the payload to the checksum. Parsing
//! follows RFC 9293 §3.2's option rules: END ends the list, NOP is one byte, every other kind
//! carries a length octet; unknown kinds are skipped by their length, and a length that is
//! below 2, overruns the header or is wrong for a known kind is rejected. [`Packet::parse`]
//! never panics, whatever the input.

use std::fmt;
use std::net::Ipv4Addr;

use crate::checksum::{internet_checksum, Checksum};
use crate::packet::*;

/// Why bytes did not parse as a packet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ParseError {
    /// Fewer bytes than the headers or the IPv4 total length call for.
    Truncated,
    /// A field is inconsistent or out of range (the text says which).
    Malformed(&'static str),
    /// A checksum does not verify (the text says which).
    BadChecksum(&'static str),
    /// Valid IPv4 that rantcp does not model: IP options, fragments, other protocols.
    Unsupported(&'static str),
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParseError::Truncated => write!(f, "truncated packet"),
            ParseError::Malformed(what) => write!(f, "malformed packet: {what}"),
            ParseError::BadChecksum(what) => write!(f, "bad {what} checksum"),
            ParseError::Unsupported(what) => write!(f, "unsupported: {what}"),
        }
    }
}

impl std::error::Error for ParseError {}

/// Largest header stack rantcp emits, bytes: IPv4 (20) + TCP with full option space (60).
pub const MAX_HEADER_LEN: usize = (IPV4_HEADER_LEN + TCP_HEADER_LEN + MAX_OPTIONS_LEN) as usize;

/// IPv4 flags/fragment-offset word (RFC 791 §3.1).
const IP_FLAG_RESERVED: u16 = 0x8000;
const IP_FLAG_DF: u16 = 0x4000;
const IP_FLAG_MF: u16 = 0x2000;
const IP_FRAG_OFFSET_MASK: u16 = 0x1fff;

#[inline]
fn put16(out: &mut [u8], at: usize, v: u16) {
    out[at..at + 2].copy_from_slice(&v.to_be_bytes());
}
#[inline]
fn put32(out: &mut [u8], at: usize, v: u32) {
    out[at..at + 4].copy_from_slice(&v.to_be_bytes());
}
#[inline]
fn get16(b: &[u8], at: usize) -> u16 {
    u16::from_be_bytes([b[at], b[at + 1]])
}
#[inline]
fn get32(b: &[u8], at: usize) -> u32 {
    u32::from_be_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

/// Sum of the TCP/UDP pseudo-header (RFC 9293 §3.1, RFC 768): source, destination, zero,
/// protocol, transport length.
#[inline]
fn pseudo_header(src: Ipv4Addr, dst: Ipv4Addr, proto: u8, len: u16) -> Checksum {
    let mut c = Checksum::new();
    c.add_u32(u32::from(src));
    c.add_u32(u32::from(dst));
    c.add_u16(proto as u16);
    c.add_u16(len);
    c
}

/// Write the options of `o` into `out` (exactly `o.wire_len()` bytes) in the documented layout.
fn emit_options(o: &TcpOptions, out: &mut [u8]) -> usize {
    use option_kind::*;
    let mut i = 0;
    if let Some(mss) = o.mss {
        out[i..i + 2].copy_from_slice(&[MSS, 4]);
        put16(out, i + 2, mss);
        i += 4;
    }
    match (o.sack_permitted, o.timestamps) {
        (true, Some((tsval, tsecr))) => {
            // Linux's SYN layout: SACK-permitted fills the two bytes NOPs would take.
            out[i..i + 4].copy_from_slice(&[SACK_PERMITTED, 2, TIMESTAMPS, 10]);
            put32(out, i + 4, tsval);
            put32(out, i + 8, tsecr);
            i += 12;
        }
        (sack_permitted, ts) => {
            if sack_permitted {
                out[i..i + 4].copy_from_slice(&[NOP, NOP, SACK_PERMITTED, 2]);
                i += 4;
            }
            if let Some((tsval, tsecr)) = ts {
                out[i..i + 4].copy_from_slice(&[NOP, NOP, TIMESTAMPS, 10]);
                put32(out, i + 4, tsval);
                put32(out, i + 8, tsecr);
                i += 12;
            }
        }
    }
    if let Some(shift) = o.window_scale {
        out[i..i + 4].copy_from_slice(&[NOP, WINDOW_SCALE, 3, shift]);
        i += 4;
    }
    let n = o.emitted_sack_len();
    if n > 0 {
        out[i..i + 4].copy_from_slice(&[NOP, NOP, SACK, 2 + 8 * n as u8]);
        i += 4;
        for b in &o.sack[..n] {
            put32(out, i, b.left);
            put32(out, i + 4, b.right);
            i += 8;
        }
    }
    if let Some(ack) = o.as_tcp_ack {
        // RFC 6994 §3: kind, length, 16-bit ExID, then the experiment's data.
        out[i..i + 2].copy_from_slice(&[AS_TCP, AS_TCP_OPTION_LEN]);
        put16(out, i + 2, AS_TCP_EXID);
        put32(out, i + 4, ack);
        i += 8;
    }
    // Every element above is 4-byte aligned, so no END/NOP padding is needed (RFC 9293 §3.1:
    // the header must end on a 32-bit boundary).
    debug_assert_eq!(i % 4, 0);
    debug_assert_eq!(i as u32, o.wire_len());
    i
}

/// Parse the option list of a TCP header (RFC 9293 §3.2).
fn parse_options(mut opts: &[u8]) -> Result<TcpOptions, ParseError> {
    use option_kind::*;
    let mut o = TcpOptions::default();
    while let Some((&kind, rest)) = opts.split_first() {
        match kind {
            END => break,
            NOP => {
                opts = rest;
                continue;
            }
            _ => {}
        }
        let Some(&len) = rest.first() else {
            return Err(ParseError::Malformed("TCP option without a length"));
        };
        let len = len as usize;
        if len < 2 {
            return Err(ParseError::Malformed("TCP option length < 2"));
        }
        if len > opts.len() {
            return Err(ParseError::Malformed("TCP option overruns the header"));
        }
        let body = &opts[2..len];
        match kind {
            MSS => {
                if len != 4 {
                    return Err(ParseError::Malformed("MSS option length != 4"));
                }
                o.mss = Some(get16(body, 0));
            }
            WINDOW_SCALE => {
                if len != 3 {
                    return Err(ParseError::Malformed("window scale option length != 3"));
                }
                o.window_scale = Some(body[0]);
            }
            SACK_PERMITTED => {
                if len != 2 {
                    return Err(ParseError::Malformed("SACK-permitted option length != 2"));
                }
                o.sack_permitted = true;
            }
            SACK => {
                // RFC 2018 §3: length 8n + 2; n <= 4 always holds within 40 option bytes.
                let n = (len - 2) / 8;
                if len < 10 || (len - 2) & 7 != 0 || n > MAX_SACK_BLOCKS {
                    return Err(ParseError::Malformed(
                        "SACK option length not 8n+2, 1<=n<=4",
                    ));
                }
                o.sack = [SackBlock::default(); MAX_SACK_BLOCKS];
                for (k, blk) in body.chunks_exact(8).enumerate() {
                    o.sack[k] = SackBlock {
                        left: get32(blk, 0),
                        right: get32(blk, 4),
                    };
                }
                o.sack_len = n as u8;
            }
            TIMESTAMPS => {
                if len != 10 {
                    return Err(ParseError::Malformed("timestamps option length != 10"));
                }
                o.timestamps = Some((get32(body, 0), get32(body, 4)));
            }
            // Kind 253 is shared by all experiments (RFC 4727, RFC 6994 §3): only length 8
            // with AS-TCP's ExID is ours; any other ExID or length is someone else's
            // experiment and is skipped (RFC 6994 §3: ignore an unrecognised ExID).
            AS_TCP if len == AS_TCP_OPTION_LEN as usize && get16(body, 0) == AS_TCP_EXID => {
                o.as_tcp_ack = Some(get32(body, 2))
            }
            _ => {} // Unknown kind: skipped by its length (RFC 9293 §3.2, RFC 1122 §4.2.2.5).
        }
        opts = &opts[len..];
    }
    Ok(o)
}

impl Packet {
    /// IPv4 + transport header bytes, without payload.
    #[inline]
    pub fn header_len(&self) -> u32 {
        self.len() - self.payload_len
    }

    /// Write the IPv4 and transport headers into `out`, checksums computed for an all-zero
    /// payload of `payload_len` bytes. Returns the number of header bytes written.
    ///
    /// # Panics
    /// If `self.len()` exceeds [`IPV4_MAX_LEN`] (the 16-bit total length cannot hold it).
    pub(crate) fn emit_headers(&self, out: &mut [u8; MAX_HEADER_LEN]) -> usize {
        self.emit_headers_sum(out, Checksum::new())
    }

    /// [`Packet::emit_headers`] for a payload whose one's complement sum is `payload`.
    fn emit_headers_sum(&self, out: &mut [u8; MAX_HEADER_LEN], payload: Checksum) -> usize {
        let total = self.len();
        assert!(
            total <= IPV4_MAX_LEN,
            "packet of {total} bytes exceeds the IPv4 maximum of {IPV4_MAX_LEN}"
        );
        let ip = &self.ip;
        let proto = self.proto();
        // IPv4 header, RFC 791 §3.1.
        out[0] = 0x45; // version 4, IHL 5 (no options)
        out[1] = ip.dscp_ecn;
        put16(out, 2, total as u16);
        put16(out, 4, ip.identification);
        put16(out, 6, if ip.dont_fragment { IP_FLAG_DF } else { 0 });
        out[8] = ip.ttl;
        out[9] = proto;
        put16(out, 10, 0);
        out[12..16].copy_from_slice(&ip.src.octets());
        out[16..20].copy_from_slice(&ip.dst.octets());
        let csum = internet_checksum(&out[..20]);
        put16(out, 10, csum);

        let h = IPV4_HEADER_LEN as usize;
        let transport_len = (total - IPV4_HEADER_LEN) as u16;
        let mut c = pseudo_header(ip.src, ip.dst, proto, transport_len);
        c.add_checksum(payload);
        match &self.transport {
            Transport::Tcp(t) => {
                // TCP header, RFC 9293 §3.1.
                let opt_len = emit_options(&t.options, &mut out[h + 20..]);
                let th = 20 + opt_len;
                put16(out, h, t.src_port);
                put16(out, h + 2, t.dst_port);
                put32(out, h + 4, t.seq);
                put32(out, h + 8, t.ack);
                out[h + 12] = ((th / 4) as u8) << 4; // data offset; reserved bits zero
                out[h + 13] = t.flags.0;
                put16(out, h + 14, t.window);
                put16(out, h + 16, 0);
                put16(out, h + 18, t.urgent);
                c.add_bytes(&out[h..h + th]);
                put16(out, h + 16, c.finish());
                h + th
            }
            Transport::Udp(u) => {
                // UDP header, RFC 768.
                put16(out, h, u.src_port);
                put16(out, h + 2, u.dst_port);
                put16(out, h + 4, transport_len);
                put16(out, h + 6, 0);
                c.add_bytes(&out[h..h + 8]);
                // A computed zero is sent as all ones; zero means "no checksum" (RFC 768).
                let csum = match c.finish() {
                    0 => 0xffff,
                    x => x,
                };
                put16(out, h + 6, csum);
                h + 8
            }
            Transport::Icmp(m) => {
                // ICMP header, RFC 792: the checksum covers the message only.
                let mut c = payload;
                out[h] = m.icmp_type;
                out[h + 1] = m.code;
                put16(out, h + 2, 0);
                put32(out, h + 4, m.rest);
                c.add_bytes(&out[h..h + 8]);
                put16(out, h + 2, c.finish());
                h + 8
            }
        }
    }

    /// Append the complete wire bytes of this IPv4 packet to `buf` (payload as zeros): exactly
    /// `self.len()` bytes. Reuse one buffer (`buf.clear()` between packets) to avoid
    /// allocating per packet.
    ///
    /// # Panics
    /// If `self.len()` exceeds [`IPV4_MAX_LEN`].
    pub fn write_bytes(&self, buf: &mut Vec<u8>) {
        let mut hdr = [0u8; MAX_HEADER_LEN];
        let n = self.emit_headers(&mut hdr);
        buf.reserve(n + self.payload_len as usize);
        buf.extend_from_slice(&hdr[..n]);
        buf.resize(buf.len() + self.payload_len as usize, 0);
    }

    /// Append the wire bytes of this packet with `payload` as its payload, checksums covering
    /// it: what a real host must receive (the emulator rebuilds every packet it delivers from
    /// the model's header fields, so a field the model changed — TTL, a rewritten window — is
    /// on the wire with correct checksums).
    ///
    /// # Panics
    /// If `payload.len() != self.payload_len` or `self.len()` exceeds [`IPV4_MAX_LEN`].
    pub fn write_bytes_with_payload(&self, payload: &[u8], buf: &mut Vec<u8>) {
        assert_eq!(payload.len(), self.payload_len as usize, "payload length");
        let mut sum = Checksum::new();
        sum.add_bytes(payload);
        let mut hdr = [0u8; MAX_HEADER_LEN];
        let n = self.emit_headers_sum(&mut hdr, sum);
        buf.reserve(n + payload.len());
        buf.extend_from_slice(&hdr[..n]);
        buf.extend_from_slice(payload);
    }

    /// Append this packet's IPv4 and transport headers (no payload) with the TCP or UDP
    /// checksum left to offload: the field holds the pseudo-header sum, not complemented, as
    /// Linux `CHECKSUM_PARTIAL` and the virtio-net `NEEDS_CSUM` flag expect (the device, or a
    /// local receiver that trusts it, fills in the rest). The IPv4 header checksum is complete.
    /// Returns the header length. ICMP, which has no pseudo-header, gets its full checksum
    /// over zeros (callers offload TCP only).
    pub fn write_headers_partial_csum(&self, buf: &mut Vec<u8>) -> usize {
        let mut hdr = [0u8; MAX_HEADER_LEN];
        let n = self.emit_headers(&mut hdr);
        let h = IPV4_HEADER_LEN as usize;
        let transport_len = (self.len() - IPV4_HEADER_LEN) as u16;
        let pseudo = pseudo_header(self.ip.src, self.ip.dst, self.proto(), transport_len).sum();
        match self.transport {
            Transport::Tcp(_) => put16(&mut hdr, h + 16, pseudo),
            Transport::Udp(_) => put16(&mut hdr, h + 6, pseudo),
            Transport::Icmp(_) => {}
        }
        buf.extend_from_slice(&hdr[..n]);
        n
    }

    /// Wire bytes of the whole IPv4 packet, checksums filled in, payload as zeros.
    ///
    /// # Panics
    /// If `self.len()` exceeds [`IPV4_MAX_LEN`].
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut v = Vec::with_capacity(self.len() as usize);
        self.write_bytes(&mut v);
        v
    }

    /// Parse an IPv4 packet carrying TCP or UDP; the IPv4 header checksum and the transport
    /// checksum are verified (a UDP checksum of zero means none, RFC 768). Bytes past the
    /// IPv4 total length (link-layer padding) are ignored. `payload_len` is derived from the
    /// lengths; the payload's content only enters the checksum.
    ///
    /// `Packet::parse(&p.to_bytes()) == Ok(p)` for every packet whose SACK blocks fit
    /// (`sack_len <= options.sack_capacity()`); blocks that do not fit are not emitted.
    pub fn parse(bytes: &[u8]) -> Result<Packet, ParseError> {
        Self::parse_inner(bytes, true)
    }

    /// Parse like [`Packet::parse`] without verifying the transport checksum (the IPv4 header
    /// checksum is still verified): for packets a local stack hands over with the checksum
    /// left to offload (Linux `CHECKSUM_PARTIAL`, virtio-net `NEEDS_CSUM`), whose checksum
    /// field holds only the pseudo-header sum. The payload starts at `p.header_len()`.
    pub fn parse_unverified(bytes: &[u8]) -> Result<Packet, ParseError> {
        Self::parse_inner(bytes, false)
    }

    fn parse_inner(bytes: &[u8], verify: bool) -> Result<Packet, ParseError> {
        // IPv4 header, RFC 791 §3.1.
        if bytes.len() < IPV4_HEADER_LEN as usize {
            return Err(ParseError::Truncated);
        }
        if bytes[0] >> 4 != 4 {
            return Err(ParseError::Malformed("IP version is not 4"));
        }
        let ihl = (bytes[0] & 0x0f) as usize * 4;
        if ihl < IPV4_HEADER_LEN as usize {
            return Err(ParseError::Malformed("IPv4 IHL < 5"));
        }
        if ihl > IPV4_HEADER_LEN as usize {
            return Err(ParseError::Unsupported("IPv4 options"));
        }
        let total = get16(bytes, 2) as usize;
        if total < ihl {
            return Err(ParseError::Malformed("IPv4 total length < header length"));
        }
        if bytes.len() < total {
            return Err(ParseError::Truncated);
        }
        if internet_checksum(&bytes[..ihl]) != 0 {
            return Err(ParseError::BadChecksum("IPv4 header"));
        }
        let frag = get16(bytes, 6);
        if frag & IP_FLAG_RESERVED != 0 {
            return Err(ParseError::Malformed("IPv4 reserved flag set"));
        }
        if frag & (IP_FLAG_MF | IP_FRAG_OFFSET_MASK) != 0 {
            return Err(ParseError::Unsupported("IPv4 fragment"));
        }
        let ip = Ipv4Header {
            src: Ipv4Addr::new(bytes[12], bytes[13], bytes[14], bytes[15]),
            dst: Ipv4Addr::new(bytes[16], bytes[17], bytes[18], bytes[19]),
            dscp_ecn: bytes[1],
            identification: get16(bytes, 4),
            dont_fragment: frag & IP_FLAG_DF != 0,
            ttl: bytes[8],
        };
        let proto = bytes[9];
        let seg = &bytes[ihl..total];
        let csum = || {
            let mut c = pseudo_header(ip.src, ip.dst, proto, seg.len() as u16);
            c.add_bytes(seg);
            c.finish()
        };
        match proto {
            PROTO_TCP => {
                // TCP header, RFC 9293 §3.1.
                if seg.len() < TCP_HEADER_LEN as usize {
                    return Err(ParseError::Malformed(
                        "IPv4 payload shorter than a TCP header",
                    ));
                }
                let doff = (seg[12] >> 4) as usize * 4;
                if doff < TCP_HEADER_LEN as usize {
                    return Err(ParseError::Malformed("TCP data offset < 5"));
                }
                if doff > seg.len() {
                    return Err(ParseError::Malformed("TCP data offset beyond the segment"));
                }
                if verify && csum() != 0 {
                    return Err(ParseError::BadChecksum("TCP"));
                }
                let options = parse_options(&seg[TCP_HEADER_LEN as usize..doff])?;
                let tcp = TcpHeader {
                    src_port: get16(seg, 0),
                    dst_port: get16(seg, 2),
                    seq: get32(seg, 4),
                    ack: get32(seg, 8),
                    flags: TcpFlags(seg[13]),
                    window: get16(seg, 14),
                    urgent: get16(seg, 18),
                    options,
                };
                Ok(Packet::tcp(ip, tcp, (seg.len() - doff) as u32))
            }
            PROTO_UDP => {
                // UDP header, RFC 768.
                if seg.len() < UDP_HEADER_LEN as usize {
                    return Err(ParseError::Malformed(
                        "IPv4 payload shorter than a UDP header",
                    ));
                }
                if get16(seg, 4) as usize != seg.len() {
                    return Err(ParseError::Malformed("UDP length != IPv4 payload length"));
                }
                if verify && get16(seg, 6) != 0 && csum() != 0 {
                    return Err(ParseError::BadChecksum("UDP"));
                }
                let udp = UdpHeader {
                    src_port: get16(seg, 0),
                    dst_port: get16(seg, 2),
                };
                Ok(Packet::udp(
                    ip,
                    udp,
                    (seg.len() - UDP_HEADER_LEN as usize) as u32,
                ))
            }
            PROTO_ICMP => {
                // ICMP header, RFC 792: the checksum covers the message.
                if seg.len() < ICMP_HEADER_LEN as usize {
                    return Err(ParseError::Malformed(
                        "IPv4 payload shorter than an ICMP header",
                    ));
                }
                if verify && internet_checksum(seg) != 0 {
                    return Err(ParseError::BadChecksum("ICMP"));
                }
                let icmp = IcmpHeader {
                    icmp_type: seg[0],
                    code: seg[1],
                    rest: get32(seg, 4),
                };
                Ok(Packet::icmp(
                    ip,
                    icmp,
                    (seg.len() - ICMP_HEADER_LEN as usize) as u32,
                ))
            }
            _ => Err(ParseError::Unsupported(
                "IP protocol other than TCP, UDP or ICMP",
            )),
        }
    }
}
