//! The flow key: a packet's IPv4 5-tuple (RFC 791 addresses and protocol, RFC 9293 / RFC 768
//! ports).

use rantcp_wire::{Packet, Transport, PROTO_TCP, PROTO_UDP};
use std::net::Ipv4Addr;

/// The 5-tuple of a packet, direction included: `FlowKey::of(data)` and
/// `FlowKey::of(ack).reversed()` are equal for the two directions of one TCP connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FlowKey {
    pub src: Ipv4Addr,
    pub dst: Ipv4Addr,
    pub src_port: u16,
    pub dst_port: u16,
    /// IP protocol number (6 TCP, 17 UDP).
    pub proto: u8,
}

impl FlowKey {
    /// The 5-tuple of `p`.
    #[inline]
    pub fn of(p: &Packet) -> FlowKey {
        let (src_port, dst_port, proto) = match &p.transport {
            Transport::Tcp(t) => (t.src_port, t.dst_port, PROTO_TCP),
            Transport::Udp(u) => (u.src_port, u.dst_port, PROTO_UDP),
            Transport::Icmp(_) => (0, 0, rantcp_wire::PROTO_ICMP),
        };
        FlowKey {
            src: p.ip.src,
            dst: p.ip.dst,
            src_port,
            dst_port,
            proto,
        }
    }

    /// The same connection seen in the other direction.
    #[inline]
    pub fn reversed(self) -> FlowKey {
        FlowKey {
            src: self.dst,
            dst: self.src,
            src_port: self.dst_port,
            dst_port: self.src_port,
            proto: self.proto,
        }
    }

    /// A TCP key from its parts.
    pub fn tcp(src: (Ipv4Addr, u16), dst: (Ipv4Addr, u16)) -> FlowKey {
        FlowKey {
            src: src.0,
            dst: dst.0,
            src_port: src.1,
            dst_port: dst.1,
            proto: PROTO_TCP,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rantcp_wire::{Ipv4Header, TcpFlags, TcpHeader, TcpOptions};

    fn seg(src: (Ipv4Addr, u16), dst: (Ipv4Addr, u16)) -> Packet {
        Packet::tcp(
            Ipv4Header::new(src.0, dst.0),
            TcpHeader {
                src_port: src.1,
                dst_port: dst.1,
                seq: 0,
                ack: 0,
                flags: TcpFlags::ACK,
                window: 0,
                urgent: 0,
                options: TcpOptions::default(),
            },
            0,
        )
    }

    #[test]
    fn keys_that_an_xor_hash_confused_are_distinct() {
        // The former XOR flow key of the UE uplink buffer gave these two flows one key.
        let ue = Ipv4Addr::new(10, 1, 0, 1);
        let a = FlowKey::of(&seg((ue, 49152), (Ipv4Addr::new(10, 0, 0, 1), 5201)));
        let b = FlowKey::of(&seg((ue, 49152), (Ipv4Addr::new(10, 0, 1, 1), 5200)));
        assert_ne!(a, b);
    }

    #[test]
    fn reversed_matches_the_other_direction() {
        let s = (Ipv4Addr::new(10, 0, 0, 1), 5201);
        let c = (Ipv4Addr::new(10, 1, 0, 1), 49152);
        assert_eq!(FlowKey::of(&seg(s, c)), FlowKey::of(&seg(c, s)).reversed());
        assert_eq!(FlowKey::of(&seg(s, c)), FlowKey::tcp(s, c));
    }
}
