//! rantcp-tcp: a sans-IO TCP endpoint (RFC 9293) with SACK (RFC 2018, RFC 6675), RACK-TLP
//! (RFC 8985), PRR (RFC 6937), NewReno (RFC 6582), RTO (RFC 6298), window scaling and timestamps
//! (RFC 7323), delayed ACK (RFC 1122 §4.2.3.2, RFC 5681 §4.2; every Nth segment, Linux
//! quick-ACK), zero-window probing (RFC 9293 §3.8.6.1), delivery-rate sampling
//! (draft-cheng-iccrg-delivery-rate-estimation) and pacing, with pluggable congestion control
//! ([`cc`]). [`TcpConfig::linux`] and [`TcpConfig::rfc`] are the two stack profiles.
//!
//! # Contract (design.md §3 "Sans-IO entities")
//! The endpoint never touches an event queue or a clock. Its owner:
//! 1. feeds inputs: [`Endpoint::handle_segment`], [`Endpoint::handle_timeout`],
//!    [`Endpoint::handle_feedback`] (external path signals such as RAN feedback), and the
//!    application calls [`Endpoint::send`], [`Endpoint::recv`], [`Endpoint::close`];
//! 2. after *any* input, drains [`Endpoint::poll_transmit`] until it returns `None`;
//! 3. then (re)arms one timer at [`Endpoint::poll_timeout`] and calls
//!    [`Endpoint::handle_timeout`] when it fires (a stale wake-up is harmless).
//!
//! Payload bytes are not stored: the application hands over and reads byte *counts*.

pub mod cc;
mod endpoint;

pub use endpoint::*;
