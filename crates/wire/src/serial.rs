//! Serialisation to wire bytes and parsing back. (To be completed: see the wire helper.)

use crate::Packet;

/// Why bytes did not parse as a packet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ParseError {
    Truncated,
    Malformed(&'static str),
}

impl Packet {
    /// Wire bytes of the whole IPv4 packet, checksums filled in, payload as zeros.
    pub fn to_bytes(&self) -> Vec<u8> {
        unimplemented!()
    }
    /// Parse an IPv4 packet; checksums are verified.
    pub fn parse(_bytes: &[u8]) -> Result<Packet, ParseError> {
        unimplemented!()
    }
}
