//! The [`NetworkFunction`] trait and what flows in and out of it.

use crate::Point;
use crate::{FlowKey, Points, RanView, Rnti, SampleSink, Site, UlBuffer};
use rantcp_core::{Duration, Time};
use rantcp_wire::Packet;
use std::collections::VecDeque;

/// What a function decided about a packet handed to [`NetworkFunction::handle_packet`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// The packet continues (possibly modified in place).
    Pass,
    /// The packet is discarded; the reason is counted by the owner.
    Drop(&'static str),
    /// The function keeps the packet (it may emit it or others later).
    Consume,
}

/// An input at a point. `ran` is present at [`Site::Ran`] points.
pub struct Ctx<'a> {
    pub now: Time,
    pub point: Point,
    /// The UE the packet belongs to, at radio points.
    pub rnti: Option<Rnti>,
    /// The radio access network's state, at radio points.
    pub ran: Option<&'a dyn RanView>,
}

/// An event of the UE's uplink IP buffer ([`Point::UeUlBuffer`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BufferEvent {
    /// Packet `id` was just appended.
    Arrival { id: u64 },
    /// An uplink grant gives this bearer `bytes` of a transport block; the buffer is about to
    /// be drained FIFO into it. Each IP packet costs `overhead_bytes` of PDCP/RLC/MAC headers
    /// on top of its IP length. `rlc_bytes` are already waiting in RLC (retransmissions and
    /// segments) and go first. `n_prb` are the PRBs of the whole transport block the grant
    /// belongs to (for what a function reports as spent on the packets it lets through).
    Grant {
        bytes: u32,
        overhead_bytes: u32,
        rlc_bytes: u64,
        n_prb: u16,
    },
}

/// A packet a function puts into the data path at its site. The destination address decides
/// the direction: at a [`Site::Ran`], a packet for a UE goes down to that UE ([`Entry`] says
/// where it enters), anything else goes up to the core; at a [`Site::Node`], the node routes
/// it (`entry` does not matter there).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Emit {
    pub packet: Packet,
    pub entry: Entry,
}

/// Where a downlink packet emitted at a [`Site::Ran`] enters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Entry {
    /// The UE's bearer at the tail, between IP and PDCP (it does not pass
    /// [`Point::DlIngress`](crate::Point::DlIngress) again).
    #[default]
    Bearer,
    /// The UE's bearer ahead of every packet it holds that RLC has not begun to send (seed
    /// 001's batch retransmissions go before new data).
    BearerFront,
    /// The UE itself, as if its RLC had just delivered the packet, after the
    /// [`Point::DlEgress`](crate::Point::DlEgress) functions: how a function that holds packets
    /// at DlEgress lets them go.
    Ue,
}

/// Information from the radio access network for a TCP sender (seed 002's loose coupling).
/// The simulator hands it to the sending endpoint's congestion controller.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Feedback {
    /// When the base station sampled it.
    pub sampled_at: Time,
    /// Achievable data rate R(t) predicted for the UE, bit/s.
    pub rate_bps: Option<f64>,
    /// Layer-2 (RLC) queue Q(t) of the UE's bearer, bytes.
    pub queue_bytes: Option<u64>,
}

/// Something a function asks its owner to do.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Action {
    /// Discard the downlink packets of `flow` that UE `rnti`'s bearer holds and RLC has not
    /// begun to send (the RST tracker's purge, dissertation §4.5).
    PurgeDl { rnti: Rnti, flow: FlowKey },
    /// Deliver `fb` after `delay` to the TCP endpoint that sends `flow` (`flow.src` is the
    /// sender). At a [`Site::Ran`] the RAN device passes it to the simulator.
    Feedback {
        flow: FlowKey,
        fb: Feedback,
        delay: Duration,
    },
}

/// What the owner removed when it carried out an [`Action::PurgeDl`], handed back to the
/// function that asked ([`NetworkFunction::handle_purged`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Purged {
    /// IP packets removed.
    pub packets: u64,
    /// Their IP bytes.
    pub ip_bytes: u64,
    /// Their transport payload bytes (TCP/UDP data).
    pub payload_bytes: u64,
    /// The RLC SDU (PDCP PDU) bytes removed from RLC's queue: IP bytes plus PDCP headers.
    pub sdu_bytes: u64,
}

/// An output of a function, drained by its owner with [`NetworkFunction::poll_output`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Output {
    Emit(Emit),
    Action(Action),
}

/// A queue of outputs, what most functions keep to implement `poll_output`.
#[derive(Clone, Debug, Default)]
pub struct Outbox(VecDeque<Output>);

impl Outbox {
    /// Emit `packet` at the tail of the bearer (downlink) or routed normally.
    #[inline]
    pub fn emit(&mut self, packet: Packet) {
        self.emit_at(packet, Entry::Bearer);
    }
    /// Emit a downlink `packet` ahead of the bearer's queued packets.
    #[inline]
    pub fn emit_front(&mut self, packet: Packet) {
        self.emit_at(packet, Entry::BearerFront);
    }
    /// Emit `packet` entering at `entry` (downlink at a RAN site; elsewhere routed normally).
    #[inline]
    pub fn emit_at(&mut self, packet: Packet, entry: Entry) {
        self.0.push_back(Output::Emit(Emit { packet, entry }));
    }
    #[inline]
    pub fn action(&mut self, a: Action) {
        self.0.push_back(Output::Action(a));
    }
    #[inline]
    pub fn pop(&mut self) -> Option<Output> {
        self.0.pop_front()
    }
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// A network function (design.md §5): a sans-IO entity called at attachment points.
///
/// Inputs are `handle_*`, outputs are `poll_output` and `poll_timeout`; a function never
/// touches the event queue. Every method but [`NetworkFunction::kind`] and
/// [`NetworkFunction::points`] has a default that does nothing, so a function implements only
/// the powers it uses. Counters go into [`NetworkFunction::report`].
pub trait NetworkFunction: Send {
    /// The function's kind, its key under `functions` in summary.json (e.g. "ack_filter").
    fn kind(&self) -> &'static str;
    /// The points of its site it wants to be called at.
    fn points(&self) -> Points;
    /// A packet at a packet point ([`Point::DlIngress`], [`Point::DlEgress`],
    /// [`Point::UlEgress`], [`Point::Forward`], [`Point::Host`], [`Point::HostOut`]). The
    /// function may modify it.
    fn handle_packet(&mut self, _cx: &Ctx, _p: &mut Packet) -> Verdict {
        Verdict::Pass
    }
    /// An event of UE `cx.rnti`'s uplink buffer. The function may discard packets from `q`
    /// ([`UlBuffer::discard`]); the owner sends what remains FIFO.
    fn handle_ul_buffer(&mut self, _cx: &Ctx, _ev: BufferEvent, _q: &mut UlBuffer) {}
    /// Bytes the function holds for UE `rnti` that the MAC should see as downlink backlog
    /// ([`Points::DL_PULL`] only).
    fn dl_backlog(&self, _rnti: Rnti) -> u64 {
        0
    }
    /// The MAC grants UE `rnti` room for about `bytes` of IP packets: append the packets to
    /// send, in order ([`Points::DL_PULL`] only). The last one may overshoot; RLC segments it.
    fn pull_dl(&mut self, _cx: &Ctx, _bytes: u64, _out: &mut Vec<Packet>) {}
    /// The owner carried out this function's [`Action::PurgeDl`] for UE `rnti` and `flow`:
    /// what it removed (all zero when nothing of the flow was queued).
    fn handle_purged(&mut self, _now: Time, _rnti: Rnti, _flow: FlowKey, _purged: Purged) {}
    /// The function's timer passed (early or stale calls must be harmless).
    fn handle_timeout(&mut self, _now: Time, _ran: Option<&dyn RanView>) {}
    /// When the function next wants [`NetworkFunction::handle_timeout`].
    fn poll_timeout(&self) -> Option<Time> {
        None
    }
    /// The next queued output. Outputs answer inputs: a function that answered `None` has
    /// none until one of its `handle_*`, `pull_dl` or `sample` is called again ([`Chain`]
    /// does not ask it before).
    ///
    /// [`Chain`]: crate::Chain
    fn poll_output(&mut self) -> Option<Output> {
        None
    }
    /// After [`NetworkFunction::handle_packet`]: may [`NetworkFunction::poll_output`] answer
    /// anything? `false` lets the owner skip polling after an input that produced nothing
    /// (a function that answers `false` must answer `None` to a poll). The default, `true`,
    /// is always safe.
    fn may_have_output(&self) -> bool {
        true
    }
    /// A time-series sample (called every `output.sample_interval`).
    fn sample(&mut self, _now: Time, _ran: Option<&dyn RanView>, _out: &mut SampleSink) {}
    /// Counters and figures for summary.json (a JSON object).
    fn report(&self) -> serde_json::Value {
        serde_json::Value::Object(Default::default())
    }
}

/// Where a function must be attached, with the function (what factories build).
pub struct Attach {
    pub site: Site,
    pub function: Box<dyn NetworkFunction>,
}
