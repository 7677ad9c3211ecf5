//! rantcp-wire: the packet model (design.md §3 "Packets").
//!
//! A [`Packet`] carries every field of the real IPv4 header (RFC 791) and TCP header (RFC 9293
//! §3.1) or UDP header (RFC 768), TCP options included (MSS, window scale and timestamps from
//! RFC 7323, SACK-permitted and SACK blocks from RFC 2018, and the AS-TCP option), plus the
//! payload *length*: payload bytes are not stored. Any packet serialises to valid wire bytes
//! with correct checksums ([`Packet::to_bytes`]) and parses back ([`Packet::parse`]), so pcap
//! files ([`pcap`]) open cleanly in Wireshark. Checksums follow RFC 1071 ([`checksum`]).
//!
//! ```
//! use std::net::Ipv4Addr;
//! use rantcp_wire::*;
//!
//! let ip = Ipv4Header::new(Ipv4Addr::new(10, 0, 0, 1), Ipv4Addr::new(10, 0, 0, 2));
//! let options = TcpOptions { mss: Some(1460), sack_permitted: true, ..Default::default() };
//! let syn = TcpHeader {
//!     src_port: 40000, dst_port: 5201, seq: 0, ack: 0, flags: TcpFlags::SYN,
//!     window: 65535, urgent: 0, options,
//! };
//! let p = Packet::tcp(ip, syn, 0);
//! let bytes = p.to_bytes();
//! assert_eq!(bytes.len() as u32, p.len());
//! assert_eq!(Packet::parse(&bytes), Ok(p));
//!
//! let mut w = pcap::PcapWriter::new(Vec::new(), 0).unwrap();
//! w.write_packet(1_500_000, &p).unwrap(); // at t = 1.5 ms
//! let file: Vec<u8> = w.finish().unwrap();
//! assert_eq!(pcap::read(&file).unwrap().count(), 1);
//! ```

#![forbid(unsafe_code)]

pub mod checksum;
mod packet;
pub mod pcap;
mod serial;

pub use packet::*;
pub use serial::{ParseError, MAX_HEADER_LEN};
