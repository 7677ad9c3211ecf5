//! rantcp-wire: the packet model (design.md §3 "Packets").
//!
//! A [`Packet`] carries every field of the real IPv4 header (RFC 791) and TCP header (RFC 9293
//! §3.1) or UDP header (RFC 768), TCP options included (MSS, window scale and timestamps from
//! RFC 7323, SACK-permitted and SACK blocks from RFC 2018, and the AS-TCP option), plus the
//! payload *length*: payload bytes are not stored. Any packet serialises to valid wire bytes
//! with correct checksums ([`Packet::to_bytes`]) and parses back ([`Packet::parse`]), so pcap
//! files ([`pcap`]) open cleanly in Wireshark. Checksums follow RFC 1071 ([`checksum`]).

#![forbid(unsafe_code)]

pub mod checksum;
mod packet;
pub mod pcap;
mod serial;

pub use packet::*;
pub use serial::{ParseError, MAX_HEADER_LEN};
