//! rantcp-net: the wired network and the simulator loop (design.md §2–4).
//!
//! * [`link`]: point-to-point links with rate, propagation delay, drop-tail queues and error
//!   models.
//! * [`topology`]: nodes, interfaces, longest-prefix routes, shared-medium devices, pcap.
//! * [`host`]: forwarding and the hashed TCP/UDP demultiplexer of each host.
//! * [`app`]: applications over flows (bulk send, file download, UDP constant bit rate) and
//!   their TCP connections.
//! * [`functions`]: network functions at nodes (rantcp-nf's contract, node side) and feedback
//!   to TCP senders.
//! * [`external`]: nodes whose hosts are outside the model (the real-time emulator's).
//! * [`metrics`]: per-flow results and time series, link counters, function reports.
//! * [`sim`]: the event loop. One run is single-threaded and deterministic.

pub mod app;
pub mod external;
pub mod functions;
pub mod host;
pub mod link;
pub mod metrics;
mod pcapsink;
pub mod sim;
pub mod topology;
pub mod video;

pub use app::{
    AppWrite, Arrivals, BurstRecord, Bursts, FlowId, FlowKind, FlowSpec, M2m, M2mRecord,
};
pub use link::{ErrorUnit, LinkParams, LinkStats, QueueLimit};
pub use metrics::{FlowResult, FlowSeries, FunctionReport, LinkReport};
pub use rantcp_nf::{Device, NodeId};
pub use sim::Sim;
pub use topology::IfaceId;
pub use video::{Abandon, Player, Video, VideoStats};
