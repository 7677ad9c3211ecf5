//! `impair`: drop — or hold for a fixed time — the packets that match a filter at one point,
//! with a probability or every Nth, optionally only within a time window. A controlled
//! impairment, not a model of a mechanism: it forces losses where and when an experiment needs
//! them, e.g. radio losses around one instant (the dissertation's Figure 47), and it is the
//! contract's end-to-end check (drop, consume, emit, timers, samples, reports).
//!
//! A packet *matches* when it is inside the window `[start, stop)`, its protocol and ports
//! pass the filter and, if `flow` or `direction` is set, it belongs to the named flow (or any
//! flow) in the chosen direction. Each matching packet is dropped when it is the Nth, 2Nth, …
//! matching packet (`every = N`), or with probability `loss` (a Bernoulli draw from the
//! function's own stream, `nf/impair/<site>`); a matching packet that survives is held for
//! `delay` if set (order kept: every held packet waits the same time).

use crate::{BuildEnv, FunctionConfig};
use rantcp_config::reads::{FieldUse, Unreads};
use rantcp_config::units::Dur;
use rantcp_config::{check, ConfigError};
use rantcp_core::{Duration, Rng, Time};
use rantcp_nf::{
    Attach, Ctx, Entry, FlowKey, NetworkFunction, Outbox, Output, Points, RanView, SampleSink,
    SampleValue, Site, Verdict,
};
use rantcp_wire::{Packet, Transport};
use rustc_hash::FxHashSet;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

/// Where the impairment sits.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum ImpairPoint {
    /// Packets that `node` forwards (after the TTL decrement).
    #[default]
    Forward,
    /// Packets addressed to `node`, before TCP/UDP demultiplexing.
    Host,
    /// Base station: downlink packets from the core, before PDCP.
    DlIngress,
    /// Downlink packets delivered in order by the UE's RLC, before the UE's IP layer.
    DlEgress,
    /// Base station: uplink packets out of RLC, before the core.
    UlEgress,
}

impl ImpairPoint {
    fn points(self) -> Points {
        match self {
            ImpairPoint::Forward => Points::FORWARD,
            ImpairPoint::Host => Points::HOST,
            ImpairPoint::DlIngress => Points::DL_INGRESS,
            ImpairPoint::DlEgress => Points::DL_EGRESS,
            ImpairPoint::UlEgress => Points::UL_EGRESS,
        }
    }
    /// Where a held packet goes back in: past the point it was taken at (at DlEgress, the UE).
    fn entry(self) -> Entry {
        match self {
            ImpairPoint::DlEgress => Entry::Ue,
            _ => Entry::Bearer,
        }
    }
    fn at_node(self) -> bool {
        matches!(self, ImpairPoint::Forward | ImpairPoint::Host)
    }
    fn name(self) -> &'static str {
        match self {
            ImpairPoint::Forward => "forward",
            ImpairPoint::Host => "host",
            ImpairPoint::DlIngress => "dl-ingress",
            ImpairPoint::DlEgress => "dl-egress",
            ImpairPoint::UlEgress => "ul-egress",
        }
    }
}

/// Transport protocol filter.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ProtoFilter {
    #[default]
    Any,
    Tcp,
    Udp,
}

/// Direction filter, relative to the scenario's flows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum DirectionFilter {
    /// Every packet (of `flow`, when set).
    #[default]
    Any,
    /// Packets from a flow's data source towards its destination (TCP data segments, UDP).
    Data,
    /// Packets the other way (a TCP flow's ACKs).
    Ack,
}

/// `[functions.impair]`. Off unless `loss`, `every` or `delay` is set.
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ImpairConfig {
    /// "forward" or "host" at `node`; or a radio point: "dl-ingress", "dl-egress",
    /// "ul-egress".
    #[serde(default)]
    pub point: ImpairPoint,
    /// The node of a "forward" or "host" point (the built-in scenarios name their router/core).
    #[serde(default)]
    pub node: Option<String>,
    /// Probability that a matching packet is dropped, in [0, 1).
    #[serde(default)]
    #[schemars(range(min = 0.0), extend("exclusiveMaximum" = 1.0))]
    pub loss: f64,
    /// Drop every Nth matching packet (0: off). Exclusive with `loss`.
    #[serde(default)]
    pub every: u64,
    /// Hold each matching packet that is not dropped this long ("0s": off).
    #[serde(default = "d_zero")]
    pub delay: Dur,
    /// Impair only packets from this time on.
    #[serde(default = "d_zero")]
    pub start: Dur,
    /// ... and before this time (absent: to the end of the run).
    #[serde(default)]
    pub stop: Option<Dur>,
    /// "any", "tcp" or "udp".
    #[serde(default)]
    pub proto: ProtoFilter,
    /// "any", "data" (from a flow's source) or "ack" (towards it).
    #[serde(default)]
    pub direction: DirectionFilter,
    /// Only the packets of this flow (a name from summary.json's flows, e.g. "flow0", "ue3").
    #[serde(default)]
    pub flow: Option<String>,
    /// Only packets with this source / destination port.
    #[serde(default)]
    pub src_port: Option<u16>,
    #[serde(default)]
    pub dst_port: Option<u16>,
}

fn d_zero() -> Dur {
    Dur::ms(0)
}

impl ImpairConfig {
    fn check_start(&self, p: &str, env: &BuildEnv) -> Result<(), ConfigError> {
        check(
            self.start.0 < env.end - Time::ZERO,
            &format!("{p}.start"),
            "must be before the end of the run",
        )
    }
}

/// `loss`, `every` and `delay` switch the function on; the rest is read only when it is.
impl FieldUse for ImpairConfig {
    const ALWAYS: &'static [&'static str] = &["loss", "every", "delay"];
    const CONDITIONAL: &'static [&'static str] = &[
        "point",
        "node",
        "start",
        "stop",
        "proto",
        "direction",
        "flow",
        "src_port",
        "dst_port",
    ];
}

impl FunctionConfig for ImpairConfig {
    const KIND: &'static str = "impair";

    fn enabled(&self) -> bool {
        self.loss > 0.0 || self.every > 0 || self.delay.0 > Duration::ZERO
    }

    fn off_because(&self, p: &str) -> String {
        format!("{p} is off (loss = 0, every = 0 and delay = \"0s\")")
    }

    fn unread(&self, p: &str, out: &mut Unreads) {
        out.unless(self.enabled(), p, Self::CONDITIONAL, || self.off_because(p));
        // `build`: only a "forward" or "host" point sits at a node.
        out.unless(
            !self.enabled() || self.point.at_node(),
            p,
            &["node"],
            || format!("{p}.point = {:?} (a radio point)", self.point.name()),
        );
    }

    fn off_needs_network(&self) -> bool {
        self.node.is_some() || self.flow.is_some() || self.start.0 > Duration::ZERO
    }

    fn check_off(&self, p: &str, env: &BuildEnv) -> Result<(), ConfigError> {
        if let Some(n) = &self.node {
            env.node(&format!("{p}.node"), n)?;
        }
        if let Some(f) = &self.flow {
            env.flow(&format!("{p}.flow"), f)?;
        }
        self.check_start(p, env)
    }

    fn validate(&self, p: &str) -> Result<(), ConfigError> {
        check(
            (0.0..1.0).contains(&self.loss),
            &format!("{p}.loss"),
            "must be a probability in [0, 1)",
        )?;
        check(
            self.every == 0 || self.loss == 0.0,
            &format!("{p}.every"),
            "set either loss or every, not both",
        )?;
        check(
            self.delay.0 <= Duration::from_secs(60),
            &format!("{p}.delay"),
            "must be between 0s and 60s",
        )?;
        check(
            self.stop.is_none_or(|s| s.0 > self.start.0),
            &format!("{p}.stop"),
            "must be later than start",
        )?;
        if self.enabled() && self.point.at_node() {
            check(
                self.node.is_some(),
                &format!("{p}.node"),
                format!(
                    "required at point {:?}: the node whose packets to impair",
                    self.point.name()
                ),
            )?;
        }
        Ok(())
    }

    fn build(&self, p: &str, env: &BuildEnv) -> Result<Vec<Attach>, ConfigError> {
        if !self.enabled() {
            return Ok(vec![]);
        }
        let (site, instance) = if self.point.at_node() {
            let name = self.node.as_deref().unwrap_or_default();
            (
                Site::Node(env.node(&format!("{p}.node"), name)?),
                name.to_string(),
            )
        } else {
            check(
                env.radio.is_some(),
                &format!("{p}.point"),
                format!(
                    "{:?} is a radio point and this scenario has no radio (allowed: \"forward\", \"host\")",
                    self.point.name()
                ),
            )?;
            (Site::Ran, self.point.name().to_string())
        };
        self.check_start(p, env)?;
        let flows: Vec<FlowKey> = match &self.flow {
            Some(name) => vec![env.flow(&format!("{p}.flow"), name)?],
            None => env.flows.iter().map(|f| f.1).collect(),
        };
        let f = Impair {
            points: self.point.points(),
            point: self.point.name(),
            entry: self.point.entry(),
            filter: Filter {
                start: Time::ZERO + self.start.d(),
                stop: self.stop.map_or(Time(u64::MAX), |s| Time::ZERO + s.d()),
                proto: self.proto,
                direction: self.direction,
                by_flow: self.flow.is_some() || self.direction != DirectionFilter::Any,
                data_keys: flows.into_iter().collect(),
                src_port: self.src_port,
                dst_port: self.dst_port,
            },
            loss: self.loss,
            every: self.every,
            delay: self.delay.d(),
            rng: env.rng(Self::KIND, &instance),
            held: VecDeque::new(),
            out: Outbox::default(),
            counters: Counters::default(),
        };
        Ok(vec![Attach {
            site,
            function: Box::new(f),
        }])
    }
}

/// Which packets are impaired.
struct Filter {
    start: Time,
    stop: Time,
    proto: ProtoFilter,
    direction: DirectionFilter,
    /// Match against `data_keys` at all (a flow or a direction was asked for).
    by_flow: bool,
    /// The 5-tuples of the flows considered, in their data direction.
    data_keys: FxHashSet<FlowKey>,
    src_port: Option<u16>,
    dst_port: Option<u16>,
}

impl Filter {
    fn matches(&self, now: Time, p: &Packet) -> bool {
        if now < self.start || now >= self.stop {
            return false;
        }
        let (sp, dp) = match (&p.transport, self.proto) {
            (Transport::Tcp(t), ProtoFilter::Any | ProtoFilter::Tcp) => (t.src_port, t.dst_port),
            (Transport::Udp(u), ProtoFilter::Any | ProtoFilter::Udp) => (u.src_port, u.dst_port),
            _ => return false,
        };
        if self.src_port.is_some_and(|x| x != sp) || self.dst_port.is_some_and(|x| x != dp) {
            return false;
        }
        if !self.by_flow {
            return true;
        }
        let k = FlowKey::of(p);
        match self.direction {
            DirectionFilter::Any => {
                self.data_keys.contains(&k) || self.data_keys.contains(&k.reversed())
            }
            DirectionFilter::Data => self.data_keys.contains(&k),
            DirectionFilter::Ack => self.data_keys.contains(&k.reversed()),
        }
    }
}

#[derive(Clone, Copy, Debug, Default)]
struct Counters {
    matched: u64,
    dropped: u64,
    delayed: u64,
}

/// The function. See the module docs.
pub struct Impair {
    points: Points,
    point: &'static str,
    /// Where held packets re-enter.
    entry: Entry,
    filter: Filter,
    loss: f64,
    every: u64,
    delay: Duration,
    rng: Rng,
    /// Held packets and when they leave, in arrival order.
    held: VecDeque<(Time, Packet)>,
    out: Outbox,
    counters: Counters,
}

impl NetworkFunction for Impair {
    fn kind(&self) -> &'static str {
        ImpairConfig::KIND
    }
    fn points(&self) -> Points {
        self.points
    }
    fn handle_packet(&mut self, cx: &Ctx, p: &mut Packet) -> Verdict {
        if !self.filter.matches(cx.now, p) {
            return Verdict::Pass;
        }
        self.counters.matched += 1;
        let drop = if self.every > 0 {
            self.counters.matched.is_multiple_of(self.every)
        } else {
            self.loss > 0.0 && self.rng.bernoulli(self.loss)
        };
        if drop {
            self.counters.dropped += 1;
            return Verdict::Drop("impair");
        }
        if self.delay > Duration::ZERO {
            self.counters.delayed += 1;
            self.held.push_back((cx.now + self.delay, *p));
            return Verdict::Consume;
        }
        Verdict::Pass
    }
    fn poll_timeout(&self) -> Option<Time> {
        self.held.front().map(|x| x.0)
    }
    fn handle_timeout(&mut self, now: Time, _ran: Option<&dyn RanView>) {
        while self.held.front().is_some_and(|x| x.0 <= now) {
            let (_, p) = self.held.pop_front().expect("front checked");
            self.out.emit_at(p, self.entry);
        }
    }
    fn poll_output(&mut self) -> Option<Output> {
        self.out.pop()
    }
    fn sample(&mut self, now: Time, _ran: Option<&dyn RanView>, out: &mut SampleSink) {
        let c = self.counters;
        out.push(
            "impair",
            &[
                ("time_s", SampleValue::F64(now.as_secs_f64())),
                ("matched", SampleValue::I64(c.matched as i64)),
                ("dropped", SampleValue::I64(c.dropped as i64)),
                ("held", SampleValue::I64(self.held.len() as i64)),
            ],
        );
    }
    fn report(&self) -> serde_json::Value {
        serde_json::json!({
            "point": self.point,
            "matched": self.counters.matched,
            "delayed": self.counters.delayed,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rantcp_nf::Point;
    use rantcp_wire::{Ipv4Header, TcpFlags, TcpHeader, TcpOptions, UdpHeader};
    use std::net::Ipv4Addr;

    const S: Ipv4Addr = Ipv4Addr::new(10, 0, 0, 1);
    const U: Ipv4Addr = Ipv4Addr::new(10, 1, 0, 1);

    fn tcp(src: (Ipv4Addr, u16), dst: (Ipv4Addr, u16), len: u32) -> Packet {
        Packet::tcp(
            Ipv4Header::new(src.0, dst.0),
            TcpHeader {
                src_port: src.1,
                dst_port: dst.1,
                seq: 1,
                ack: 1,
                flags: TcpFlags::ACK,
                window: 100,
                urgent: 0,
                options: TcpOptions::default(),
            },
            len,
        )
    }
    fn data() -> Packet {
        tcp((S, 5201), (U, 49152), 1448)
    }
    fn ack() -> Packet {
        tcp((U, 49152), (S, 5201), 0)
    }
    fn udp() -> Packet {
        Packet::udp(
            Ipv4Header::new(S, U),
            UdpHeader {
                src_port: 9,
                dst_port: 9,
            },
            100,
        )
    }

    fn env() -> BuildEnv {
        BuildEnv {
            seed: 1,
            end: Time::from_secs(10),
            nodes: vec![("server".into(), 0), ("core".into(), 1)],
            flows: vec![("ue1".into(), FlowKey::of(&data()))],
            radio: None,
            ..Default::default()
        }
    }

    fn build(toml_text: &str) -> Result<Box<dyn NetworkFunction>, ConfigError> {
        let c: ImpairConfig = toml::from_str(toml_text).unwrap();
        c.validate("functions.impair")?;
        let mut v = c.build("functions.impair", &env())?;
        assert_eq!(v.len(), 1);
        assert_eq!(v[0].site, Site::Node(1));
        Ok(v.pop().unwrap().function)
    }

    fn at(ms: u64) -> Ctx<'static> {
        Ctx {
            now: Time::from_millis(ms),
            point: Point::Forward(1),
            rnti: None,
            ran: None,
        }
    }

    #[test]
    fn every_nth_matching_packet_in_the_window_is_dropped() {
        let mut f =
            build("node = 'core'\nevery = 3\nstart = '10ms'\nstop = '20ms'\ndirection = 'data'")
                .unwrap();
        let mut verdicts = Vec::new();
        for ms in [5, 10, 11, 12, 13, 14, 15, 19, 20, 25] {
            // An ACK at each instant too: never matches direction "data".
            assert_eq!(f.handle_packet(&at(ms), &mut ack()), Verdict::Pass);
            verdicts.push(f.handle_packet(&at(ms), &mut data()));
        }
        let d = Verdict::Drop("impair");
        let p = Verdict::Pass;
        // Matching: 10, 11, 12, 13, 14, 15, 19 (the 3rd and 6th are dropped).
        assert_eq!(verdicts, vec![p, p, p, d, p, p, d, p, p, p]);
        let r = f.report();
        assert_eq!(
            (r["matched"].as_u64(), r["point"].as_str()),
            (Some(7), Some("forward"))
        );
    }

    #[test]
    fn filters_by_protocol_port_flow_and_direction() {
        let drop = Verdict::Drop("impair");
        let mut f = build("node = 'core'\nevery = 1\nproto = 'udp'").unwrap();
        assert_eq!(f.handle_packet(&at(0), &mut data()), Verdict::Pass);
        assert_eq!(f.handle_packet(&at(0), &mut udp()), drop);
        let mut f = build("node = 'core'\nevery = 1\ndst_port = 5201").unwrap();
        assert_eq!(f.handle_packet(&at(0), &mut data()), Verdict::Pass);
        assert_eq!(f.handle_packet(&at(0), &mut ack()), drop);
        let mut f = build("node = 'core'\nevery = 1\nflow = 'ue1'").unwrap();
        assert_eq!(f.handle_packet(&at(0), &mut data()), drop);
        assert_eq!(f.handle_packet(&at(0), &mut ack()), drop);
        assert_eq!(
            f.handle_packet(&at(0), &mut udp()),
            Verdict::Pass,
            "not that flow"
        );
        let mut f = build("node = 'core'\nevery = 1\ndirection = 'ack'").unwrap();
        assert_eq!(f.handle_packet(&at(0), &mut data()), Verdict::Pass);
        assert_eq!(f.handle_packet(&at(0), &mut ack()), drop);
    }

    #[test]
    fn loss_draws_from_its_own_stream() {
        let run = || {
            let mut f = build("node = 'core'\nloss = 0.25").unwrap();
            (0..4000)
                .map(|_| f.handle_packet(&at(0), &mut data()) != Verdict::Pass)
                .collect::<Vec<bool>>()
        };
        let a = run();
        assert_eq!(a, run(), "same seed, same drops");
        let n = a.iter().filter(|&&x| x).count();
        // Binomial(4000, 0.25): mean 1000, sd 27.
        assert!((900..1100).contains(&n), "{n}");
    }

    #[test]
    fn delayed_packets_leave_in_order_after_the_delay() {
        let mut f = build("node = 'core'\ndelay = '5ms'").unwrap();
        assert_eq!(f.handle_packet(&at(1), &mut data()), Verdict::Consume);
        assert_eq!(f.handle_packet(&at(2), &mut ack()), Verdict::Consume);
        assert_eq!(f.poll_timeout(), Some(Time::from_millis(6)));
        f.handle_timeout(Time::from_millis(5), None);
        assert!(f.poll_output().is_none(), "early call is harmless");
        f.handle_timeout(Time::from_millis(6), None);
        match f.poll_output() {
            Some(Output::Emit(e)) => assert_eq!(e.packet, data()),
            o => panic!("{o:?}"),
        }
        assert!(f.poll_output().is_none());
        assert_eq!(f.poll_timeout(), Some(Time::from_millis(7)));
        f.handle_timeout(Time::from_millis(7), None);
        assert!(matches!(f.poll_output(), Some(Output::Emit(e)) if e.packet == ack()));
        assert_eq!(f.poll_timeout(), None);
    }

    #[test]
    fn config_errors_name_the_field() {
        let e = |t: &str| build(t).err().map(|e| e.to_string());
        assert_eq!(
            e("node = 'core'\nloss = 1.0"),
            Some("functions.impair.loss: must be a probability in [0, 1)".into())
        );
        assert_eq!(
            e("node = 'core'\nloss = 0.1\nevery = 2"),
            Some("functions.impair.every: set either loss or every, not both".into())
        );
        assert_eq!(
            e("every = 2"),
            Some("functions.impair.node: required at point \"forward\": the node whose packets to impair".into())
        );
        assert_eq!(
            e("node = 'router'\nevery = 2"),
            Some("functions.impair.node: no node named \"router\" (allowed: server, core)".into())
        );
        assert_eq!(
            e("node = 'core'\nevery = 2\nflow = 'ue9'"),
            Some("functions.impair.flow: no flow named \"ue9\" (allowed: ue1)".into())
        );
        assert_eq!(
            e("node = 'core'\nevery = 2\nstart = '2s'\nstop = '1s'"),
            Some("functions.impair.stop: must be later than start".into())
        );
        assert_eq!(
            e("node = 'core'\nevery = 2\nstart = '10s'"),
            Some("functions.impair.start: must be before the end of the run".into())
        );
        let c: ImpairConfig = toml::from_str("point = 'dl-ingress'\nevery = 2").unwrap();
        assert_eq!(
            c.build("functions.impair", &env()).err().unwrap().to_string(),
            "functions.impair.point: \"dl-ingress\" is a radio point and this scenario has no radio (allowed: \"forward\", \"host\")"
        );
        let c: ImpairConfig = toml::from_str("point = 'dl-ingress'\nevery = 2").unwrap();
        let mut env = env();
        env.radio = Some(crate::RadioFacts {
            slot: Duration::from_millis(1),
            harq_feedback_slots: 4,
            rlc_buffer_bytes: 0,
        });
        assert_eq!(
            c.build("functions.impair", &env).unwrap()[0].site,
            Site::Ran
        );
    }

    #[test]
    fn off_by_default_builds_nothing() {
        let c = ImpairConfig::default();
        assert!(!c.enabled());
        c.validate("functions.impair").unwrap();
        assert!(c.build("functions.impair", &env()).unwrap().is_empty());
    }
}
