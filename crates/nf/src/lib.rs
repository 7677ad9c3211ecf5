//! rantcp-nf: the network-function contract (design.md §5).
//!
//! Every RAN-side TCP enhancement rantcp models — seed 000's ACK filter, seed 001's mmPEP and
//! plain PEP, seed 002's radio-aware TCP, the dissertation's RST tracker and split-TCP hosts —
//! is a [`NetworkFunction`]: a sans-IO entity that the data path calls at named
//! attachment [`Point`]s and that answers with a [`Verdict`], queued [`Output`]s (packets to
//! emit, [`Action`]s for its host to carry out) and timers. This crate holds only the contract
//! and the types both sides share; the functions themselves live in `rantcp-functions`, the
//! radio side that calls them in `rantcp-ran`, the wired side in `rantcp-net`.
//!
//! # Where functions sit
//! A function instance lives at one [`Site`]: the radio access network ([`Site::Ran`], owned
//! by the RAN device) or a node of the wired network ([`Site::Node`], owned by the simulator).
//! It tells its owner which [`Points`] of that site it wants; a point nobody wants costs one
//! bit test per packet and no call.
//!
//! | point | where | input |
//! |---|---|---|
//! | [`Point::UeUlBuffer`] | UE, per-bearer IP buffer before PDCP | [`BufferEvent`] with the [`UlBuffer`] |
//! | [`Point::DlIngress`] | base station, between IP (from the core) and PDCP | the packet |
//! | [`Point::DlEgress`] | a downlink packet delivered in order by RLC to the UE | the packet |
//! | [`Point::UlEgress`] | base station, an uplink packet out of RLC, before the core | the packet |
//! | [`Point::Forward`] | a node forwarding a packet (after TTL decrement) | the packet |
//! | [`Point::Host`] | a host, a packet addressed to it before TCP/UDP demultiplexing | the packet |
//! | [`Point::HostOut`] | a host, a packet its own TCP/UDP sends, before routing | the packet |
//!
//! # Calling order (the owner's side of the contract)
//! 1. For each input, call the functions that want the point, in attachment order:
//!    [`NetworkFunction::handle_packet`] (stop at the first `Drop` or `Consume`) or
//!    [`NetworkFunction::handle_ul_buffer`].
//! 2. After every input and every timeout, drain [`NetworkFunction::poll_output`] until
//!    `None`: emitted packets enter the data path at the function's site ([`Emit`]), actions
//!    are carried out ([`Action`]); after an [`Action::PurgeDl`], tell the function that asked
//!    what was removed ([`NetworkFunction::handle_purged`], [`Chain::last_output_from`]).
//! 3. Keep a timer at the earliest [`NetworkFunction::poll_timeout`]; call
//!    [`NetworkFunction::handle_timeout`] when it passes (early or stale calls are harmless).
//! 4. At every time-series sample call [`NetworkFunction::sample`]; at the end of the run put
//!    [`NetworkFunction::report`] into `summary.json` under `functions.<kind>`.
//!
//! [`Chain`] implements this bookkeeping for an ordered list of functions.
//!
//! # What functions get
//! * full packets ([`rantcp_wire::Packet`]: every IPv4/TCP header field and option);
//! * a [`RanView`] at RAN sites: per-UE [`UeReport`] (achievable rate from CQI and load, RLC
//!   queue, HARQ feedback delay, packets per slot, average DL TBS, …), read when needed;
//! * their own RNG stream, given at construction by their factory
//!   (`Rng::for_entity(seed, "nf/<kind>/…")`), so switching a function on never perturbs
//!   another entity's draws.

mod chain;
mod device;
mod flow;
mod function;
mod ran;
mod sample;
mod ulbuf;

pub use chain::Chain;
pub use device::Device;
pub use flow::FlowKey;
pub use function::{
    Action, Attach, BufferEvent, Ctx, Emit, Entry, Feedback, NetworkFunction, Outbox, Output,
    Purged, Verdict,
};
pub use ran::{RanView, UeReport};
pub use sample::{SampleSink, SampleValue, Series, SeriesColumn};
pub use ulbuf::{UlBuffer, UlBufferCounters, UlEntry};

/// Index of a node of the simulated network.
pub type NodeId = usize;
/// Radio network temporary identifier of a UE (TS 36.321 §7.1).
pub type Rnti = u16;

/// Where in the data path a function is called. See the crate docs for each point.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Point {
    /// The UE's per-bearer uplink IP buffer, before PDCP: packet arrival and uplink grants.
    UeUlBuffer,
    /// Base station: a downlink IP packet from the core, before PDCP.
    DlIngress,
    /// A downlink IP packet delivered in order by the UE's RLC, before the UE's IP layer.
    DlEgress,
    /// Base station: an uplink IP packet reassembled by RLC, before it leaves for the core.
    UlEgress,
    /// A node forwarding a packet that is not addressed to it.
    Forward(NodeId),
    /// A host receiving a packet addressed to it, before TCP/UDP demultiplexing.
    Host(NodeId),
    /// A host sending a packet of its own (TCP/UDP output), before routing: a function there
    /// extends the host's stack (the AS-TCP far host, dissertation §5.5.1).
    HostOut(NodeId),
}

impl Point {
    /// The subscription bit of this point.
    #[inline]
    pub const fn bit(self) -> Points {
        match self {
            Point::UeUlBuffer => Points::UE_UL_BUFFER,
            Point::DlIngress => Points::DL_INGRESS,
            Point::DlEgress => Points::DL_EGRESS,
            Point::UlEgress => Points::UL_EGRESS,
            Point::Forward(_) => Points::FORWARD,
            Point::Host(_) => Points::HOST,
            Point::HostOut(_) => Points::HOST_OUT,
        }
    }
}

/// A set of attachment points (bit flags), what a function subscribes to.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Points(pub u16);

impl Points {
    pub const NONE: Points = Points(0);
    pub const UE_UL_BUFFER: Points = Points(1 << 0);
    pub const DL_INGRESS: Points = Points(1 << 1);
    pub const DL_EGRESS: Points = Points(1 << 2);
    pub const UL_EGRESS: Points = Points(1 << 3);
    pub const FORWARD: Points = Points(1 << 4);
    pub const HOST: Points = Points(1 << 5);
    /// The function holds downlink data the MAC pulls at each grant
    /// ([`NetworkFunction::dl_backlog`], [`NetworkFunction::pull_dl`]; seed 002's close
    /// coupling).
    pub const DL_PULL: Points = Points(1 << 6);
    /// The function looks the UE uplink buffer's packets up by flow
    /// ([`UlBuffer::flow_iter`]): the owner keeps the buffer's per-flow index (without it
    /// `flow_iter` scans the queue, same results, slower for long queues). Only with
    /// [`Points::UE_UL_BUFFER`].
    pub const UL_FLOW_INDEX: Points = Points(1 << 7);
    /// Packets a host's own stack sends ([`Point::HostOut`]).
    pub const HOST_OUT: Points = Points(1 << 8);
    #[inline]
    pub const fn contains(self, o: Points) -> bool {
        self.0 & o.0 == o.0 && o.0 != 0
    }
    #[inline]
    pub const fn intersects(self, o: Points) -> bool {
        self.0 & o.0 != 0
    }
}

impl std::ops::BitOr for Points {
    type Output = Points;
    #[inline]
    fn bitor(self, o: Points) -> Points {
        Points(self.0 | o.0)
    }
}
impl std::ops::BitOrAssign for Points {
    #[inline]
    fn bitor_assign(&mut self, o: Points) {
        self.0 |= o.0
    }
}

/// Where a function instance lives (and so which points it can see).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Site {
    /// The radio access network: points `UeUlBuffer`, `DlIngress`, `DlEgress`, `UlEgress`.
    Ran,
    /// A node of the wired network: points `Forward(node)`, `Host(node)`, `HostOut(node)`.
    Node(NodeId),
}
