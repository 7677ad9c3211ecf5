//! Header structs: IPv4 (RFC 791 §3.1), TCP (RFC 9293 §3.1) with the options of RFC 9293 §3.2
//! (MSS), RFC 7323 §2–3 (window scale, timestamps), RFC 2018 §2–3 (SACK-permitted, SACK) and
//! the AS-TCP experimental option (RFC 6994 shared use of kind 253, ExID [`AS_TCP_EXID`]), UDP
//! (RFC 768) and ICMP (RFC 792). Plain `Copy` data, no heap: packets move through the simulator
//! by value. The byte layout lives in `serial.rs`.

use std::net::Ipv4Addr;

/// IP protocol numbers (IANA).
pub const PROTO_TCP: u8 = 6;
pub const PROTO_UDP: u8 = 17;
pub const PROTO_ICMP: u8 = 1;

/// Length of an IPv4 header without options, bytes.
pub const IPV4_HEADER_LEN: u32 = 20;
/// Length of a UDP header, bytes.
pub const UDP_HEADER_LEN: u32 = 8;
/// Length of an ICMP header (type, code, checksum, rest of header), bytes (RFC 792).
pub const ICMP_HEADER_LEN: u32 = 8;
/// Length of a TCP header without options, bytes.
pub const TCP_HEADER_LEN: u32 = 20;
/// Largest TCP option space, bytes: the 4-bit data offset allows a 60-byte header
/// (RFC 9293 §3.1).
pub const MAX_OPTIONS_LEN: u32 = 40;
/// Largest IPv4 packet, bytes: the 16-bit total length field (RFC 791 §3.1).
pub const IPV4_MAX_LEN: u32 = 65_535;

/// IPv4 header fields (RFC 791 §3.1). Options are not modelled; IHL is always 5.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ipv4Header {
    pub src: Ipv4Addr,
    pub dst: Ipv4Addr,
    /// DSCP (6 bits) and ECN (2 bits), the former TOS octet.
    pub dscp_ecn: u8,
    pub identification: u16,
    /// Don't Fragment flag.
    pub dont_fragment: bool,
    pub ttl: u8,
}

impl Ipv4Header {
    pub fn new(src: Ipv4Addr, dst: Ipv4Addr) -> Self {
        Ipv4Header {
            src,
            dst,
            dscp_ecn: 0,
            identification: 0,
            dont_fragment: true,
            ttl: 64,
        }
    }
}

/// TCP control bits (RFC 9293 §3.1, RFC 3168 for ECE/CWR).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct TcpFlags(pub u8);

impl TcpFlags {
    pub const FIN: TcpFlags = TcpFlags(0x01);
    pub const SYN: TcpFlags = TcpFlags(0x02);
    pub const RST: TcpFlags = TcpFlags(0x04);
    pub const PSH: TcpFlags = TcpFlags(0x08);
    pub const ACK: TcpFlags = TcpFlags(0x10);
    pub const URG: TcpFlags = TcpFlags(0x20);
    pub const ECE: TcpFlags = TcpFlags(0x40);
    pub const CWR: TcpFlags = TcpFlags(0x80);
    pub const NONE: TcpFlags = TcpFlags(0);
    #[inline]
    pub fn contains(self, o: TcpFlags) -> bool {
        self.0 & o.0 == o.0
    }
    #[inline]
    pub fn fin(self) -> bool {
        self.0 & 0x01 != 0
    }
    #[inline]
    pub fn syn(self) -> bool {
        self.0 & 0x02 != 0
    }
    #[inline]
    pub fn rst(self) -> bool {
        self.0 & 0x04 != 0
    }
    #[inline]
    pub fn psh(self) -> bool {
        self.0 & 0x08 != 0
    }
    #[inline]
    pub fn ack(self) -> bool {
        self.0 & 0x10 != 0
    }
    #[inline]
    pub fn urg(self) -> bool {
        self.0 & 0x20 != 0
    }
    #[inline]
    pub fn ece(self) -> bool {
        self.0 & 0x40 != 0
    }
    #[inline]
    pub fn cwr(self) -> bool {
        self.0 & 0x80 != 0
    }
}

impl std::ops::BitOr for TcpFlags {
    type Output = TcpFlags;
    #[inline]
    fn bitor(self, o: TcpFlags) -> TcpFlags {
        TcpFlags(self.0 | o.0)
    }
}
impl std::ops::BitOrAssign for TcpFlags {
    #[inline]
    fn bitor_assign(&mut self, o: TcpFlags) {
        self.0 |= o.0
    }
}

/// One SACK block: `[left, right)` in sequence space (RFC 2018 §3).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SackBlock {
    pub left: u32,
    pub right: u32,
}

/// Maximum SACK blocks in one segment. Four fit in 40 option bytes without timestamps,
/// three with timestamps (RFC 2018 §3).
pub const MAX_SACK_BLOCKS: usize = 4;

/// TCP option kind numbers (IANA "TCP Option Kind Numbers").
pub mod option_kind {
    pub const END: u8 = 0;
    pub const NOP: u8 = 1;
    pub const MSS: u8 = 2;
    pub const WINDOW_SCALE: u8 = 3;
    pub const SACK_PERMITTED: u8 = 4;
    pub const SACK: u8 = 5;
    pub const TIMESTAMPS: u8 = 8;
    /// AS-TCP "MH ack" option (dissertation §5.5, Figure 39): RFC 4727's experimental kind
    /// 253 in RFC 6994's shared-use form — kind, length 8, the 16-bit ExID
    /// [`super::AS_TCP_EXID`], then the 4-byte MH ack in the far connection's sequence space.
    pub const AS_TCP: u8 = 253;
}

/// RFC 6994 §3 experiment identifier of the AS-TCP option: 0x4153 ("AS"), a 16-bit ExID not
/// registered with IANA (RFC 6994 §3.1 allows unregistered ExIDs; a collision only makes a
/// receiver ignore the option). Figure 39's option is 6 bytes (kind, length, MH ack): RFC 6994
/// needs 2 more for the ExID, and the 8-byte form costs the same header space as Figure 39's
/// 6 bytes after the two NOPs that align it.
pub const AS_TCP_EXID: u16 = 0x4153;
/// Length octet of the AS-TCP option: kind + length + ExID + MH ack.
pub const AS_TCP_OPTION_LEN: u8 = 8;

/// The TCP options rantcp models.
///
/// Equality compares only the valid SACK blocks (`sack[..sack_len]`): stale entries past
/// `sack_len` are not part of the value.
#[derive(Clone, Copy, Debug, Default)]
pub struct TcpOptions {
    /// Maximum segment size (RFC 9293 §3.7.1), SYN only.
    pub mss: Option<u16>,
    /// Window scale shift count (RFC 7323 §2), SYN only.
    pub window_scale: Option<u8>,
    /// SACK permitted (RFC 2018 §2), SYN only.
    pub sack_permitted: bool,
    /// SACK blocks (RFC 2018 §3); the first `sack_len` entries are valid.
    pub sack: [SackBlock; MAX_SACK_BLOCKS],
    pub sack_len: u8,
    /// Timestamps: (TSval, TSecr) (RFC 7323 §3).
    pub timestamps: Option<(u32, u32)>,
    /// AS-TCP MH ack (dissertation §5.5): the acknowledgement the mobile host sent its split
    /// host, mapped into this connection's sequence space. On a SYN it is the capability
    /// request / answer (value 0, §5.5.2 packets #1 and #2).
    pub as_tcp_ack: Option<u32>,
}

impl PartialEq for TcpOptions {
    fn eq(&self, o: &Self) -> bool {
        let n = (self.sack_len as usize).min(MAX_SACK_BLOCKS);
        self.mss == o.mss
            && self.window_scale == o.window_scale
            && self.sack_permitted == o.sack_permitted
            && self.sack_len == o.sack_len
            && self.sack[..n] == o.sack[..n]
            && self.timestamps == o.timestamps
            && self.as_tcp_ack == o.as_tcp_ack
    }
}
impl Eq for TcpOptions {}

impl TcpOptions {
    /// The valid SACK blocks.
    #[inline]
    pub fn sack_blocks(&self) -> &[SackBlock] {
        &self.sack[..self.sack_len as usize]
    }
    /// Append a SACK block; returns false when full.
    pub fn push_sack(&mut self, b: SackBlock) -> bool {
        if (self.sack_len as usize) < MAX_SACK_BLOCKS {
            self.sack[self.sack_len as usize] = b;
            self.sack_len += 1;
            true
        } else {
            false
        }
    }
    /// Bytes of every option except SACK blocks, in the layout [`crate::Packet::to_bytes`]
    /// emits. At most 28 (MSS 4 + SACK-permitted/timestamps 12 + window scale 4 + AS-TCP 8),
    /// so these options always fit in [`MAX_OPTIONS_LEN`].
    #[inline]
    fn fixed_wire_len(&self) -> u32 {
        let mut n = 0u32;
        if self.mss.is_some() {
            n += 4; // MSS(4)
        }
        if self.sack_permitted && self.timestamps.is_some() {
            n += 2 + 10; // SACK-permitted(2) + timestamps(10), no NOPs needed (as Linux)
        } else {
            if self.sack_permitted {
                n += 4; // NOP NOP SACK-permitted(2)
            }
            if self.timestamps.is_some() {
                n += 12; // NOP NOP timestamps(10)
            }
        }
        if self.window_scale.is_some() {
            n += 4; // NOP WS(3)
        }
        if self.as_tcp_ack.is_some() {
            n += 8; // AS-TCP(8): kind, length, ExID, MH ack
        }
        n
    }

    /// How many SACK blocks fit in the option space left by the other options present:
    /// 4 alone, 3 with timestamps (RFC 2018 §3), fewer with MSS/window scale/AS-TCP too
    /// (never less than 1). A TCP sender should put at most this many blocks in
    /// [`TcpOptions::sack`]; any further blocks are not emitted (as Linux trims them).
    #[inline]
    pub fn sack_capacity(&self) -> usize {
        // Each SACK option costs NOP NOP kind len (4 bytes) + 8 per block.
        let room = MAX_OPTIONS_LEN - self.fixed_wire_len();
        (room.saturating_sub(4) / 8).min(MAX_SACK_BLOCKS as u32) as usize
    }

    /// Number of SACK blocks that go on the wire: `min(sack_len, sack_capacity())`.
    #[inline]
    pub fn emitted_sack_len(&self) -> usize {
        (self.sack_len as usize).min(self.sack_capacity())
    }

    /// Bytes the options occupy on the wire, a multiple of 4 and at most
    /// [`MAX_OPTIONS_LEN`]. Exactly the length [`crate::Packet::to_bytes`] emits, in this
    /// order and layout (Linux-like NOP alignment, so no END padding is ever needed):
    ///
    /// ```text
    /// MSS                     02 04 mm mm                              (4, if mss)
    /// SACK-perm + timestamps  04 02 08 0a vv vv vv vv ee ee ee ee      (12, if both)
    ///   or SACK-perm alone    01 01 04 02                              (4)
    ///   or timestamps alone   01 01 08 0a vv vv vv vv ee ee ee ee      (12)
    /// window scale            01 03 03 ss                              (4, if window_scale)
    /// SACK blocks             01 01 05 (2+8n) {left right}*n           (4+8n, if n > 0)
    /// AS-TCP MH ack           fd 08 41 53 aa aa aa aa                  (8, if as_tcp_ack)
    /// ```
    ///
    /// `n` is [`TcpOptions::emitted_sack_len`]: SACK blocks that do not fit are dropped.
    pub fn wire_len(&self) -> u32 {
        let n = self.emitted_sack_len() as u32;
        let len = self.fixed_wire_len() + if n > 0 { 4 + 8 * n } else { 0 };
        debug_assert!(len & 3 == 0 && len <= MAX_OPTIONS_LEN);
        len
    }
}

/// TCP header (RFC 9293 §3.1). The data offset and checksum are derived when serialising.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TcpHeader {
    pub src_port: u16,
    pub dst_port: u16,
    pub seq: u32,
    pub ack: u32,
    pub flags: TcpFlags,
    /// The 16-bit window field as sent (already scaled down by the sender's shift).
    pub window: u16,
    pub urgent: u16,
    pub options: TcpOptions,
}

impl TcpHeader {
    /// Header length including options, bytes.
    #[inline]
    pub fn header_len(&self) -> u32 {
        TCP_HEADER_LEN + self.options.wire_len()
    }
}

/// UDP header (RFC 768). Length and checksum are derived when serialising.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UdpHeader {
    pub src_port: u16,
    pub dst_port: u16,
}

/// ICMP header (RFC 792): the 8 bytes every message starts with. The message body (an echo's
/// data, an error's quoted datagram) is the packet's payload. The checksum is derived when
/// serialising.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IcmpHeader {
    /// Message type (0 echo reply, 3 destination unreachable, 8 echo request, 11 time exceeded…).
    pub icmp_type: u8,
    pub code: u8,
    /// The "rest of header" word, big-endian as on the wire (an echo's identifier and sequence
    /// number, RFC 792 p. 14).
    pub rest: u32,
}

impl IcmpHeader {
    /// Echo request type (RFC 792 p. 14).
    pub const ECHO_REQUEST: u8 = 8;
    /// Echo reply type (RFC 792 p. 14).
    pub const ECHO_REPLY: u8 = 0;
}

/// The transport part of a packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Transport {
    Tcp(TcpHeader),
    Udp(UdpHeader),
    Icmp(IcmpHeader),
}

/// An IPv4 packet: real header fields plus the payload length (payload bytes are zeros on the
/// wire).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Packet {
    pub ip: Ipv4Header,
    pub transport: Transport,
    /// Transport payload length, bytes.
    pub payload_len: u32,
    /// Handle of this packet's payload bytes in a store outside the model (the real-time
    /// emulator's, which keeps the bytes of packets from real sockets); 0 when the bytes are not
    /// kept (every packet the model makes itself: zeros on the wire). The model never reads it
    /// and carries it unchanged wherever the packet goes, copies included.
    pub payload_id: u32,
}

impl Packet {
    pub fn tcp(ip: Ipv4Header, tcp: TcpHeader, payload_len: u32) -> Self {
        Packet {
            ip,
            transport: Transport::Tcp(tcp),
            payload_len,
            payload_id: 0,
        }
    }
    pub fn udp(ip: Ipv4Header, udp: UdpHeader, payload_len: u32) -> Self {
        Packet {
            ip,
            transport: Transport::Udp(udp),
            payload_len,
            payload_id: 0,
        }
    }
    pub fn icmp(ip: Ipv4Header, icmp: IcmpHeader, payload_len: u32) -> Self {
        Packet {
            ip,
            transport: Transport::Icmp(icmp),
            payload_len,
            payload_id: 0,
        }
    }
    /// Total IPv4 length (header + transport header + payload), bytes: what a link carries.
    #[inline]
    pub fn len(&self) -> u32 {
        IPV4_HEADER_LEN
            + match &self.transport {
                Transport::Tcp(t) => t.header_len(),
                Transport::Udp(_) => UDP_HEADER_LEN,
                Transport::Icmp(_) => ICMP_HEADER_LEN,
            }
            + self.payload_len
    }
    #[inline]
    pub fn is_empty(&self) -> bool {
        false
    }
    #[inline]
    pub fn as_tcp(&self) -> Option<&TcpHeader> {
        match &self.transport {
            Transport::Tcp(t) => Some(t),
            _ => None,
        }
    }
    #[inline]
    pub fn as_tcp_mut(&mut self) -> Option<&mut TcpHeader> {
        match &mut self.transport {
            Transport::Tcp(t) => Some(t),
            _ => None,
        }
    }
    /// The IP protocol number of the transport.
    #[inline]
    pub fn proto(&self) -> u8 {
        match &self.transport {
            Transport::Tcp(_) => PROTO_TCP,
            Transport::Udp(_) => PROTO_UDP,
            Transport::Icmp(_) => PROTO_ICMP,
        }
    }
    #[inline]
    pub fn as_udp(&self) -> Option<&UdpHeader> {
        match &self.transport {
            Transport::Udp(u) => Some(u),
            _ => None,
        }
    }
}
