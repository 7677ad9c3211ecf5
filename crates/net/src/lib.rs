//! rantcp-net: the wired network and the simulator loop (design.md §2–4).
//!
//! * [`link`]: point-to-point links with rate, propagation delay, drop-tail queues and error
//!   models.
//! * [`sim`]: nodes with IPv4 forwarding by routes, hosts that own sans-IO TCP endpoints and
//!   applications (bulk send, file download, UDP constant bit rate), per-flow metrics and time
//!   series, and per-interface pcap capture. One run is single-threaded and deterministic.

pub mod link;
mod pcapsink;
pub mod sim;

pub use link::{ErrorUnit, LinkParams, LinkStats, QueueLimit};
pub use sim::*;
