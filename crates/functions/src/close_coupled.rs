//! `close_coupled`: seed 002's close-coupled radio-aware TCP (3GPP RAN3 contribution §3.2,
//! Figure 7 "Close coupled solution for downlink TCP transmission"): the base station keeps an
//! IP-layer buffer per UE between IP and PDCP, and layer 2 requests data from it only when the
//! MAC scheduler has granted the UE a transport block — "the packet data in the layer 2 will be
//! stored only when the low layer has opportunity to transmit". The scheduler sees the IP
//! buffer as the UE's backlog ([`NetworkFunction::dl_backlog`]); at each new downlink transport
//! block the MAC pulls packets in arrival order until the block's room (its size less what RLC
//! already holds) is covered ([`NetworkFunction::pull_dl`]; the last packet may overshoot, RLC
//! segments it and sends the rest in the next block).
//!
//! What feeds the buffer: the seed's TCP sender sits with the RAN (a cache at the base station,
//! "co-located deployment of TCP/IP and L2 by RAN caching") and "sends data to IP layer without
//! following original TCP congestion control". rantcp composes that from two functions: a
//! `split` host (I-TCP) at the core, 1 ms of S1-U from the eNB, terminates the server's
//! connection (the wired leg keeps ordinary TCP) and runs the radio leg with `ran_cc = "none"`
//! ([`rantcp_tcp::cc::none`]: the window is the UE's receive window), and this buffer holds
//! that leg's segments until the grants pull them. Without the split host the buffer is fed by
//! the flow's end-to-end sender, whose own congestion control then still decides what reaches
//! it. The buffer is unbounded by default; a `buffer` limit drops arrivals beyond it (tail
//! drop, counted).
//!
//! Series `close_coupled`: per UE, the IP buffer's bytes and packets at each sample.

use crate::{BuildEnv, FunctionConfig};
use rantcp_config::reads::FieldUse;
use rantcp_config::units::Bytes;
use rantcp_config::{check, ConfigError};
use rantcp_core::Time;
use rantcp_nf::{
    Attach, Ctx, FlowKey, NetworkFunction, Points, RanView, Rnti, SampleSink, SampleValue, Site,
    Verdict,
};
use rantcp_wire::Packet;
use rustc_hash::FxHashSet;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

/// `[functions.close_coupled]`.
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CloseCoupledConfig {
    /// Hold the downlink TCP packets of the flows to UEs in an IP buffer at the base station,
    /// from which each MAC grant pulls exactly what it has room for.
    #[serde(default)]
    pub enabled: bool,
    /// Only this flow (a name from summary.json's flows); absent: every TCP flow to a UE.
    #[serde(default)]
    pub flow: Option<String>,
    /// IP buffer per UE (absent: unbounded, nothing is dropped).
    #[serde(default)]
    pub buffer: Option<Bytes>,
}

impl FieldUse for CloseCoupledConfig {
    const ALWAYS: &'static [&'static str] = &["enabled"];
    const CONDITIONAL: &'static [&'static str] = &["flow", "buffer"];
}

impl FunctionConfig for CloseCoupledConfig {
    const KIND: &'static str = "close_coupled";

    fn enabled(&self) -> bool {
        self.enabled
    }

    fn off_because(&self, p: &str) -> String {
        format!("{p}.enabled = false")
    }

    fn tcp_flow(&self) -> Option<&str> {
        self.flow.as_deref()
    }

    fn validate(&self, p: &str) -> Result<(), ConfigError> {
        check(
            self.buffer.is_none_or(|b| b.0 >= 1500),
            &format!("{p}.buffer"),
            "must be at least 1500B (one packet)",
        )
    }

    fn build(&self, p: &str, env: &BuildEnv) -> Result<Vec<Attach>, ConfigError> {
        if !self.enabled {
            return Ok(vec![]);
        }
        env.require_radio(&format!("{p}.enabled"))?;
        let flows = env.tcp_flows(&format!("{p}.flow"), self.tcp_flow())?;
        Ok(vec![Attach {
            site: Site::Ran,
            function: Box::new(CloseCoupled::new(flows, self.buffer.map(|b| b.0))),
        }])
    }
}

#[derive(Clone, Debug, Default)]
struct Queue {
    q: VecDeque<Packet>,
    bytes: u64,
}

/// The function (see the module docs).
pub struct CloseCoupled {
    /// The flows held, in their data direction.
    flows: FxHashSet<FlowKey>,
    limit: Option<u64>,
    /// IP buffer per UE, indexed by RNTI.
    queues: Vec<Queue>,
    /// Packets and bytes taken in, pulled out and dropped (over the limit).
    pub held_packets: u64,
    pub held_bytes: u64,
    pub pulled_packets: u64,
    pub pulled_bytes: u64,
    pub dropped_packets: u64,
    /// Grants that pulled, and the room they offered (bytes).
    pub pulls: u64,
    pub room_bytes: u64,
    max_bytes: u64,
}

impl CloseCoupled {
    pub fn new(flows: Vec<FlowKey>, limit: Option<u64>) -> Self {
        CloseCoupled {
            flows: flows.into_iter().collect(),
            limit,
            queues: Vec::new(),
            held_packets: 0,
            held_bytes: 0,
            pulled_packets: 0,
            pulled_bytes: 0,
            dropped_packets: 0,
            pulls: 0,
            room_bytes: 0,
            max_bytes: 0,
        }
    }

    fn queue(&mut self, rnti: Rnti) -> &mut Queue {
        let i = rnti as usize;
        if self.queues.len() <= i {
            self.queues.resize_with(i + 1, Queue::default);
        }
        &mut self.queues[i]
    }
}

impl NetworkFunction for CloseCoupled {
    fn kind(&self) -> &'static str {
        CloseCoupledConfig::KIND
    }
    fn points(&self) -> Points {
        Points::DL_INGRESS | Points::DL_PULL
    }
    fn handle_packet(&mut self, cx: &Ctx, p: &mut Packet) -> Verdict {
        let Some(rnti) = cx.rnti else {
            return Verdict::Pass;
        };
        if !self.flows.contains(&FlowKey::of(p)) {
            return Verdict::Pass;
        }
        let len = p.len() as u64;
        let limit = self.limit;
        let q = self.queue(rnti);
        if limit.is_some_and(|l| q.bytes + len > l) {
            self.dropped_packets += 1;
            return Verdict::Drop("close_coupled: IP buffer full");
        }
        q.q.push_back(*p);
        q.bytes += len;
        let b = q.bytes;
        self.max_bytes = self.max_bytes.max(b);
        self.held_packets += 1;
        self.held_bytes += len;
        Verdict::Consume
    }
    fn dl_backlog(&self, rnti: Rnti) -> u64 {
        self.queues.get(rnti as usize).map_or(0, |q| q.bytes)
    }
    fn pull_dl(&mut self, cx: &Ctx, bytes: u64, out: &mut Vec<Packet>) {
        let Some(rnti) = cx.rnti else { return };
        if self.dl_backlog(rnti) == 0 {
            return;
        }
        self.pulls += 1;
        self.room_bytes += bytes;
        let q = self.queue(rnti);
        let mut got = 0u64;
        let mut n = 0u64;
        while got < bytes {
            let Some(p) = q.q.pop_front() else { break };
            let len = p.len() as u64;
            q.bytes -= len;
            got += len;
            n += 1;
            out.push(p);
        }
        self.pulled_packets += n;
        self.pulled_bytes += got;
    }
    fn sample(&mut self, now: Time, ran: Option<&dyn RanView>, out: &mut SampleSink) {
        let Some(ran) = ran else { return };
        for &rnti in ran.rntis() {
            let (bytes, packets) = self
                .queues
                .get(rnti as usize)
                .map_or((0, 0), |q| (q.bytes, q.q.len()));
            out.push(
                "close_coupled",
                &[
                    ("time_s", SampleValue::F64(now.as_secs_f64())),
                    ("rnti", SampleValue::I64(rnti as i64)),
                    ("ip_buffer_bytes", SampleValue::I64(bytes as i64)),
                    ("ip_buffer_packets", SampleValue::I64(packets as i64)),
                ],
            );
        }
    }
    fn report(&self) -> serde_json::Value {
        serde_json::json!({
            "held_packets": self.held_packets,
            "held_bytes": self.held_bytes,
            "pulled_packets": self.pulled_packets,
            "pulled_bytes": self.pulled_bytes,
            "ip_buffer_drops": self.dropped_packets,
            "pulls": self.pulls,
            "pull_room_bytes": self.room_bytes,
            "ip_buffer_max_bytes": self.max_bytes,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rantcp_nf::Point;
    use rantcp_wire::{Ipv4Header, TcpFlags, TcpHeader, TcpOptions};
    use std::net::Ipv4Addr;

    const S: Ipv4Addr = Ipv4Addr::new(10, 0, 0, 1);
    fn ue(k: u8) -> Ipv4Addr {
        Ipv4Addr::new(10, 1, 0, k)
    }
    fn seg(k: u8, seq: u32, payload: u32) -> Packet {
        Packet::tcp(
            Ipv4Header::new(S, ue(k)),
            TcpHeader {
                src_port: 5201,
                dst_port: 49152,
                seq,
                ack: 0,
                flags: TcpFlags::ACK,
                window: 1000,
                urgent: 0,
                options: TcpOptions::default(),
            },
            payload,
        )
    }
    fn cx(rnti: Rnti) -> Ctx<'static> {
        Ctx {
            now: Time::ZERO,
            point: Point::DlIngress,
            rnti: Some(rnti),
            ran: None,
        }
    }

    #[test]
    fn grants_pull_in_order_exactly_what_covers_their_room() {
        let f1 = FlowKey::of(&seg(1, 0, 0));
        let mut f = CloseCoupled::new(vec![f1], None);
        // Ten 1000-byte segments (1040 bytes each on IP) for UE 1; another UE's flow passes.
        for k in 0..10 {
            assert_eq!(
                f.handle_packet(&cx(1), &mut seg(1, k * 1000, 1000)),
                Verdict::Consume
            );
        }
        assert_eq!(f.handle_packet(&cx(2), &mut seg(2, 0, 1000)), Verdict::Pass);
        assert_eq!((f.dl_backlog(1), f.dl_backlog(2)), (10_400, 0));
        // A 3000-byte room takes three packets (3120 bytes: the third overshoots, RLC segments).
        let mut out = Vec::new();
        f.pull_dl(&cx(1), 3000, &mut out);
        assert_eq!(out.len(), 3);
        // A room of exactly two packets takes two.
        f.pull_dl(&cx(1), 2080, &mut out);
        assert_eq!(out.len(), 5);
        // A room larger than the rest takes the rest.
        f.pull_dl(&cx(1), 1_000_000, &mut out);
        assert_eq!(out.len(), 10);
        assert_eq!(f.dl_backlog(1), 0);
        // In arrival order, nothing lost.
        let seqs: Vec<u32> = out.iter().map(|p| p.as_tcp().unwrap().seq).collect();
        assert_eq!(seqs, (0..10).map(|k| k * 1000).collect::<Vec<_>>());
        assert_eq!((f.pulled_packets, f.pulled_bytes), (10, 10_400));
        assert_eq!(f.pulled_bytes, f.held_bytes);
        assert_eq!(f.dropped_packets, 0);
        // An empty buffer is not a pull.
        f.pull_dl(&cx(1), 5000, &mut out);
        assert_eq!((out.len(), f.pulls), (10, 3));
    }

    #[test]
    fn a_bounded_buffer_drops_what_does_not_fit() {
        let f1 = FlowKey::of(&seg(1, 0, 0));
        let mut f = CloseCoupled::new(vec![f1], Some(2500));
        assert_eq!(
            f.handle_packet(&cx(1), &mut seg(1, 0, 1000)),
            Verdict::Consume
        );
        assert_eq!(
            f.handle_packet(&cx(1), &mut seg(1, 1000, 1000)),
            Verdict::Consume
        );
        assert!(matches!(
            f.handle_packet(&cx(1), &mut seg(1, 2000, 1000)),
            Verdict::Drop(_)
        ));
        assert_eq!((f.dl_backlog(1), f.dropped_packets), (2080, 1));
    }
}
