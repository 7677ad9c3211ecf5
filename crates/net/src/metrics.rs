//! What a run measures: per-flow results (bytes delivered to the application, download
//! times, UDP counts, RAN feedback received), per-flow time series sampled every interval
//! (goodput, and the sender's RFC 9293/RFC 6298 state: cwnd, ssthresh, SRTT, RTO, bytes in
//! flight, peer window, pacing rate, BBR/CUBIC internals), link counters, and the network
//! functions' reports and time series.

use crate::app::FlowId;
use crate::topology::Egress;
use crate::{NodeId, Sim};
use rantcp_core::Time;
use rantcp_tcp::cc::CcTrace;
use rantcp_tcp::{State, TcpInfo, TcpStats};

/// Per-flow results.
#[derive(Clone, Debug, Default)]
pub struct FlowResult {
    /// In-order bytes delivered to the receiving application.
    pub delivered_bytes: u64,
    /// When the first/last byte reached the receiving application.
    pub first_delivery: Option<Time>,
    pub last_delivery: Option<Time>,
    /// Download: when the request was written, and when the last byte arrived.
    pub request_at: Option<Time>,
    pub completed_at: Option<Time>,
    /// UDP: packets and payload bytes sent / received.
    pub udp_sent_packets: u64,
    pub udp_received_packets: u64,
    pub udp_sent_bytes: u64,
    /// Network-function feedback handed to the flow's TCP sender, and when the last arrived.
    pub feedback_received: u64,
    pub last_feedback_at: Option<Time>,
    /// Paced bulk (`AppWrite`): writes the application made, and those the send buffer refused.
    pub app_writes: u64,
    pub app_writes_refused: u64,
    /// Bursty application ([`crate::Bursts`]): every burst so far, in arrival order.
    pub bursts: Vec<crate::BurstRecord>,
    /// The first burst not yet (wholly) sent / delivered.
    pub(crate) bursts_sent: usize,
    pub(crate) bursts_delivered: usize,
    /// M2M telemetry ([`crate::M2m`]): every transaction so far, in order; the first whose
    /// upload is not yet acknowledged; whether the server's think time runs; its random stream.
    pub m2m: Vec<crate::M2mRecord>,
    pub(crate) m2m_acked: usize,
    pub(crate) m2m_reported: usize,
    pub(crate) m2m_thinking: bool,
    pub(crate) m2m_rng: Option<rantcp_core::Rng>,
    /// Video application ([`crate::video`]).
    pub video: crate::video::VideoStats,
}

impl FlowResult {
    /// TCP has sent `sent` stream bytes: stamp the bursts that began going out.
    pub(crate) fn note_bursts_sent(&mut self, now: Time, sent: u64) {
        while let Some(b) = self.bursts.get_mut(self.bursts_sent) {
            if sent <= b.start {
                break;
            }
            b.first_sent = Some(now);
            self.bursts_sent += 1;
        }
    }
    /// The receiving application has `delivered_bytes`: stamp the bursts now complete.
    pub(crate) fn note_bursts_delivered(&mut self, now: Time) {
        while let Some(b) = self.bursts.get_mut(self.bursts_delivered) {
            if self.delivered_bytes < b.end {
                break;
            }
            b.delivered = Some(now);
            self.bursts_delivered += 1;
        }
    }
}

/// Sampled time series of one flow (columns of equal length).
#[derive(Clone, Debug, Default)]
pub struct FlowSeries {
    pub time_s: Vec<f64>,
    /// Goodput over the last sampling interval, bit/s.
    pub goodput_bps: Vec<f64>,
    pub delivered_bytes: Vec<u64>,
    pub cwnd_bytes: Vec<u64>,
    /// None until the sender first sets ssthresh (RFC 5681 §3.1: it starts "arbitrarily
    /// high", u64::MAX here) and for flows with no TCP sender.
    pub ssthresh_bytes: Vec<Option<u64>>,
    pub srtt_ms: Vec<f64>,
    pub rto_ms: Vec<f64>,
    pub in_flight_bytes: Vec<u64>,
    pub rwin_bytes: Vec<u64>,
    pub pacing_rate_bps: Vec<f64>,
    /// BBR's state machine mode (None for other congestion controls and for UDP).
    pub bbr_mode: Vec<Option<i64>>,
    pub bbr_btl_bw_bps: Vec<f64>,
    pub bbr_min_rtt_ms: Vec<f64>,
    pub cubic_w_max_bytes: Vec<f64>,
    pub cubic_k_s: Vec<f64>,
}

/// Summary of one link direction for outputs.
#[derive(Clone, Debug)]
pub struct LinkReport {
    pub iface: String,
    /// The node that sends on this direction.
    pub node: NodeId,
    /// Line rate of this direction, bit/s.
    pub rate_bps: u64,
    pub stats: crate::link::LinkStats,
}

/// The report of one network function at a node, for outputs.
#[derive(Clone, Debug, PartialEq)]
pub struct FunctionReport {
    pub node: NodeId,
    /// The function's kind (its key under `functions` in summary.json).
    pub kind: &'static str,
    /// Its counters (a JSON object; the chain adds `dropped` and `consumed`).
    pub report: serde_json::Value,
}

impl Sim {
    /// Sample flow time series (and network functions) every `interval`.
    pub fn set_sample_interval(&mut self, interval: rantcp_core::Duration) {
        if self.sample_interval.is_none() {
            self.q
                .schedule(Time::ZERO + interval, crate::sim::Ev::Sample);
        }
        self.sample_interval = Some(interval);
    }

    pub(crate) fn on_sample(&mut self, now: Time) {
        let Some(iv) = self.sample_interval else {
            return;
        };
        for slot in &mut self.devices {
            slot.dev.sample(now);
        }
        for n in &mut self.nodes {
            if !n.chain.is_empty() {
                n.chain.sample(now, None, &mut self.fn_samples);
            }
        }
        for f in 0..self.flows.len() {
            let info = self.flows[f].sender.map(|c| self.conns[c].ep.info());
            let flow = &mut self.flows[f];
            let d = flow.result.delivered_bytes;
            let s = &mut flow.series;
            s.time_s.push(now.as_secs_f64());
            s.goodput_bps
                .push((d - flow.last_sample_delivered) as f64 * 8.0 / iv.as_secs_f64());
            s.delivered_bytes.push(d);
            flow.last_sample_delivered = d;
            let i = info.unwrap_or_default();
            let cc: CcTrace = i.cc;
            s.cwnd_bytes.push(i.cwnd);
            s.ssthresh_bytes
                .push(info.and_then(|i| (i.ssthresh < i64::MAX as u64).then_some(i.ssthresh)));
            s.srtt_ms.push(i.srtt.as_secs_f64() * 1e3);
            s.rto_ms.push(i.rto.as_secs_f64() * 1e3);
            s.in_flight_bytes.push(i.bytes_in_flight);
            s.rwin_bytes.push(i.peer_rwin);
            s.pacing_rate_bps
                .push(i.pacing_rate_bps.unwrap_or(f64::NAN));
            s.bbr_mode.push(cc.bbr_mode.map(|m| m as i64));
            s.bbr_btl_bw_bps.push(cc.bbr_btl_bw_bps.unwrap_or(f64::NAN));
            s.bbr_min_rtt_ms
                .push(cc.bbr_min_rtt.map_or(f64::NAN, |d| d.as_secs_f64() * 1e3));
            s.cubic_w_max_bytes.push(cc.cubic_w_max.unwrap_or(f64::NAN));
            s.cubic_k_s.push(cc.cubic_k_s.unwrap_or(f64::NAN));
        }
        self.q.schedule(now + iv, crate::sim::Ev::Sample);
    }

    pub fn flow_count(&self) -> usize {
        self.flows.len()
    }
    pub fn flow_spec(&self, f: FlowId) -> &crate::FlowSpec {
        &self.flows[f].spec
    }
    pub fn flow_result(&self, f: FlowId) -> &FlowResult {
        &self.flows[f].result
    }
    /// Samples of flow `f` taken since the last [`Sim::take_flow_series`].
    pub fn flow_series(&self, f: FlowId) -> &FlowSeries {
        &self.flows[f].series
    }
    /// Take every flow's samples so far (by flow), leaving the series empty: a long run hands
    /// its rows out in batches so memory stays flat with run length.
    pub fn take_flow_series(&mut self) -> Vec<FlowSeries> {
        self.flows
            .iter_mut()
            .map(|f| std::mem::take(&mut f.series))
            .collect()
    }
    /// TCP counters of the data sender and receiver of a TCP flow.
    pub fn flow_tcp(&self, f: FlowId) -> (Option<&TcpStats>, Option<&TcpStats>) {
        let fl = &self.flows[f];
        (
            fl.sender.map(|c| self.conns[c].ep.stats()),
            fl.receiver.map(|c| self.conns[c].ep.stats()),
        )
    }
    pub fn flow_sender_info(&self, f: FlowId) -> Option<TcpInfo> {
        self.flows[f].sender.map(|c| self.conns[c].ep.info())
    }
    /// The congestion controller of the data sender of flow `f`.
    pub fn flow_sender_cc(&self, f: FlowId) -> Option<&rantcp_tcp::cc::Cc> {
        self.flows[f].sender.map(|c| self.conns[c].ep.cc())
    }
    pub fn flow_sender_state(&self, f: FlowId) -> Option<State> {
        self.flows[f].sender.map(|c| self.conns[c].ep.state())
    }
    /// TCP state of the data receiver of flow `f` (the UE's end of a download).
    pub fn flow_receiver_state(&self, f: FlowId) -> Option<State> {
        self.flows[f].receiver.map(|c| self.conns[c].ep.state())
    }
    /// Whether a RST from the peer closed the data sender's and the data receiver's connection
    /// of flow `f` (each `false` when the flow has no such endpoint).
    pub fn flow_reset(&self, f: FlowId) -> (bool, bool) {
        let reset = |c: Option<usize>| c.is_some_and(|c| self.conns[c].ep.was_reset());
        (reset(self.flows[f].sender), reset(self.flows[f].receiver))
    }
    pub fn link_reports(&self) -> Vec<LinkReport> {
        self.ifaces
            .iter()
            .filter_map(|i| match i.egress {
                Egress::Link(l) => Some(LinkReport {
                    iface: i.name.clone(),
                    node: i.node,
                    rate_bps: self.links[l].link.params.rate_bps,
                    stats: self.links[l].link.stats.clone(),
                }),
                Egress::Device(_) => None,
            })
            .collect()
    }

    /// UDP packets of flow `f` still travelling (sent, neither received nor dropped).
    pub fn udp_in_flight_packets(&self, f: FlowId) -> u64 {
        let spec = &self.flows[f].spec;
        let (dst, port) = (self.nodes[spec.dst].addr, spec.dst_port);
        self.links
            .iter()
            .flat_map(|l| l.in_flight.iter())
            .filter(|(_, _, p)| p.ip.dst == dst && p.as_udp().is_some_and(|u| u.dst_port == port))
            .count() as u64
    }

    /// Reports of the network functions at nodes, by node then attachment order.
    pub fn function_reports(&self) -> Vec<FunctionReport> {
        self.nodes
            .iter()
            .enumerate()
            .flat_map(|(node, n)| {
                n.chain
                    .reports()
                    .into_iter()
                    .map(move |(kind, report)| FunctionReport { node, kind, report })
            })
            .collect()
    }

    /// Time series the network functions at nodes wrote ([`rantcp_nf::SampleSink`] tables).
    pub fn function_series(&self) -> &[rantcp_nf::Series] {
        self.fn_samples.tables()
    }
    /// Take the network functions' rows so far (see [`Sim::take_flow_series`]).
    pub fn take_function_series(&mut self) -> Vec<rantcp_nf::Series> {
        self.fn_samples.take()
    }

    /// Actions of functions that the simulator cannot carry out (a downlink purge asked for
    /// at a node, which has no radio bearers), and feedback for a flow with no TCP sender.
    pub fn function_actions_dropped(&self) -> u64 {
        self.fn_actions_dropped
    }
}
