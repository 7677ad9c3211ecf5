//! Built-in scenario `p2p-bulk`:
//!
//! ```text
//!  sender --(access: 1Gbps, 1us)-- router --(bottleneck: 50Mbps, 20ms, ~1 BDP queue)-- receiver
//!  10.0.0.1                         10.0.0.254 / 10.0.1.254                             10.0.1.1
//! ```
//! `flow.count` TCP flows (or a UDP CBR flow) from sender to receiver. The bottleneck's random
//! loss applies to the data direction (router → receiver) only, as in the Padhye et al. model.

use crate::common::{AppKind, FlowConfig};
use crate::config::reads::{FieldUse, Unreads};
use crate::config::{check, ConfigError};
use crate::scenario::{
    attach_functions, build_env, check_flow_start, check_link, check_mtu, flow_ip_packet, Common,
    Network, Scenario, ScenarioKind,
};
use crate::units::{Bytes, Dur, Queue, Rate};
use rantcp_core::Time;
use rantcp_net::{ErrorUnit, FlowKind, FlowSpec, LinkParams, QueueLimit, Sim};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::net::Ipv4Addr;

/// The largest IP packet a flow of `f` sends, bytes: a full TCP segment with a 20-byte IP
/// header and up to 40 bytes of TCP header with options (RFC 9293 §3.1), or its UDP packet.
pub fn max_packet_bytes(f: &FlowConfig) -> u64 {
    match f.app {
        AppKind::UdpCbr => f.udp_packet.0,
        _ => f.mss as u64 + 60,
    }
}

/// A queue limit must hold at least one of the largest packets the flows send.
pub fn check_queue(q: Queue, path: &str, f: &FlowConfig) -> Result<(), ConfigError> {
    let pkt = max_packet_bytes(f);
    match q {
        Queue::Bytes(b) => check(
            b >= pkt,
            path,
            format!("must hold at least one packet: >= {pkt} bytes with these flow settings, or a number of packets such as \"100packets\""),
        ),
        Queue::Packets(_) | Queue::Bdp(_) => Ok(()),
    }
}
fn d_access_rate() -> Rate {
    Rate(1_000_000_000)
}
fn d_access_delay() -> Dur {
    Dur(rantcp_core::Duration::from_micros(1))
}
fn d_access_queue() -> Queue {
    Queue::Packets(1000)
}
fn d_bn_rate() -> Rate {
    Rate(50_000_000)
}
fn d_bn_delay() -> Dur {
    Dur::ms(20)
}
fn d_bn_queue() -> Queue {
    Queue::Bdp(1.0)
}
fn d_mtu() -> Bytes {
    Bytes(1500)
}
fn d_unit() -> LossUnit {
    LossUnit::Packet
}

/// Unit of the bottleneck's random error model.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum LossUnit {
    Packet,
    Byte,
    Bit,
}

/// The sender's access link (both directions).
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Access {
    /// Line rate.
    #[serde(default = "d_access_rate")]
    pub rate: Rate,
    /// One-way propagation delay.
    #[serde(default = "d_access_delay")]
    pub delay: Dur,
    /// Transmit queue limit.
    #[serde(default = "d_access_queue")]
    pub queue: Queue,
    /// IP MTU, bytes (Ethernet: 1500).
    #[serde(default = "d_mtu")]
    #[schemars(range(min = 68, max = 65535))]
    pub mtu: Bytes,
}

impl Default for Access {
    fn default() -> Self {
        Access {
            rate: d_access_rate(),
            delay: d_access_delay(),
            queue: d_access_queue(),
            mtu: d_mtu(),
        }
    }
}

/// The bottleneck link (both directions; loss on the data direction).
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Bottleneck {
    /// Line rate.
    #[serde(default = "d_bn_rate")]
    pub rate: Rate,
    /// One-way propagation delay.
    #[serde(default = "d_bn_delay")]
    pub delay: Dur,
    /// Drop-tail queue limit: "1bdp" (of the path's round-trip propagation delay),
    /// "100packets" or a size such as "250kB".
    #[serde(default = "d_bn_queue")]
    pub queue: Queue,
    /// Random loss probability per `loss_unit` on the data direction, in [0, 1).
    #[serde(default)]
    #[schemars(range(min = 0.0), extend("exclusiveMaximum" = 1.0))]
    pub loss: f64,
    /// "packet", "byte" or "bit".
    #[serde(default = "d_unit")]
    pub loss_unit: LossUnit,
    /// IP MTU, bytes (Ethernet: 1500).
    #[serde(default = "d_mtu")]
    #[schemars(range(min = 68, max = 65535))]
    pub mtu: Bytes,
}

impl Default for Bottleneck {
    fn default() -> Self {
        Bottleneck {
            rate: d_bn_rate(),
            delay: d_bn_delay(),
            queue: d_bn_queue(),
            loss: 0.0,
            loss_unit: d_unit(),
            mtu: d_mtu(),
        }
    }
}

/// `p2p-bulk`: one bottleneck between a sender and a receiver.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct P2pBulk {
    #[serde(default)]
    pub access: Access,
    #[serde(default)]
    pub bottleneck: Bottleneck,
    #[serde(default)]
    pub flow: FlowConfig,
}

impl ScenarioKind for P2pBulk {
    fn from_table(t: toml::Table) -> Result<Self, ConfigError> {
        crate::config::from_table(t)
    }
}

/// The bottleneck's loss unit is read only when there is random loss.
impl FieldUse for Bottleneck {
    const ALWAYS: &'static [&'static str] = &["rate", "delay", "queue", "loss", "mtu"];
    const CONDITIONAL: &'static [&'static str] = &["loss_unit"];
}
impl FieldUse for Access {
    const ALWAYS: &'static [&'static str] = &["rate", "delay", "queue", "mtu"];
    const CONDITIONAL: &'static [&'static str] = &[];
}
impl FieldUse for P2pBulk {
    const ALWAYS: &'static [&'static str] = &["access", "bottleneck", "flow"];
    const CONDITIONAL: &'static [&'static str] = &[];
}

impl P2pBulk {
    /// What [`Scenario::unread`] says of a p2p network.
    pub fn unread_fields(&self, out: &mut Unreads) {
        out.unless(
            self.bottleneck.loss > 0.0,
            "bottleneck",
            Bottleneck::CONDITIONAL,
            || "bottleneck.loss = 0".into(),
        );
        self.flow.unread("flow", false, out);
        // `flow.video.ues` splits the UEs of a radio scenario; p2p has one receiver.
        out.unless(
            self.flow.app != AppKind::Video,
            "flow.video",
            &["ues"],
            || "this scenario has no UEs (flow.video.ues is for the radio scenarios)".into(),
        );
    }
}

impl Scenario for P2pBulk {
    fn unread(&self, _common: &Common, out: &mut Unreads) {
        self.unread_fields(out);
    }

    fn validate(&self, common: &Common) -> Result<(), ConfigError> {
        check(
            (0.0..1.0).contains(&self.bottleneck.loss),
            "bottleneck.loss",
            "must be a probability in [0, 1)",
        )?;
        self.flow.validate("flow")?;
        check_flow_start(&self.flow, common)?;
        check_queue(self.access.queue, "access.queue", &self.flow)?;
        check_queue(self.bottleneck.queue, "bottleneck.queue", &self.flow)?;
        for (mtu, path) in [
            (self.access.mtu.0, "access.mtu"),
            (self.bottleneck.mtu.0, "bottleneck.mtu"),
        ] {
            check(
                (68..=65535).contains(&mtu),
                path,
                "must be between 68 and 65535 bytes",
            )?;
            let udp = (self.flow.app == AppKind::UdpCbr).then_some(self.flow.udp_packet.0);
            let field = if udp.is_some() {
                "flow.udp_packet"
            } else {
                "flow.mss"
            };
            check_mtu(mtu, path, flow_ip_packet(&self.flow, udp), field)?;
        }
        let pkt = max_packet_bytes(&self.flow);
        check_link(
            self.access.rate.bps(),
            self.access.delay.d(),
            "access.",
            pkt,
            common,
        )?;
        check_link(
            self.bottleneck.rate.bps(),
            self.bottleneck.delay.d(),
            "bottleneck.",
            pkt,
            common,
        )
    }
    fn build(&self, common: &Common) -> Result<Vec<Network>, ConfigError> {
        Ok(Network::single(self.build_sim(common)?))
    }
    fn to_json(&self) -> serde_json::Value {
        serde_json::to_value(self).expect("config serialises")
    }
}

impl P2pBulk {
    /// Round-trip propagation delay of the path.
    fn rtt(&self) -> rantcp_core::Duration {
        (self.access.delay.d() + self.bottleneck.delay.d()).saturating_mul(2)
    }

    fn queue_limit(&self, q: Queue, rate: Rate) -> QueueLimit {
        match q {
            Queue::Packets(p) => QueueLimit::Packets(p),
            Queue::Bytes(b) => QueueLimit::Bytes(b),
            Queue::Bdp(k) => {
                let bdp = rate.bps() as f64 / 8.0 * self.rtt().as_secs_f64();
                QueueLimit::Bytes(((bdp * k).round() as u64).max(1500))
            }
        }
    }

    /// The network, its flows and functions.
    pub fn build_sim(&self, common: &Common) -> Result<Sim, ConfigError> {
        let mut sim = Sim::new(common.seed);
        let sender = sim.add_node("sender", Ipv4Addr::new(10, 0, 0, 1));
        let router = sim.add_node("router", Ipv4Addr::new(10, 0, 0, 254));
        let receiver = sim.add_node("receiver", Ipv4Addr::new(10, 0, 1, 1));
        let access = LinkParams {
            rate_bps: self.access.rate.bps(),
            delay: self.access.delay.d(),
            queue: self.queue_limit(self.access.queue, self.access.rate),
            error_rate: 0.0,
            error_unit: ErrorUnit::Packet,
        };
        let bn = &self.bottleneck;
        let bn_fwd = LinkParams {
            rate_bps: bn.rate.bps(),
            delay: bn.delay.d(),
            queue: self.queue_limit(bn.queue, bn.rate),
            error_rate: bn.loss,
            error_unit: match bn.loss_unit {
                LossUnit::Packet => ErrorUnit::Packet,
                LossUnit::Byte => ErrorUnit::Byte,
                LossUnit::Bit => ErrorUnit::Bit,
            },
        };
        let bn_rev = LinkParams {
            error_rate: 0.0,
            ..bn_fwd
        };
        let (s0, r0) = sim.connect(sender, router, access, access);
        let (r1, d0) = sim.connect(router, receiver, bn_fwd, bn_rev);
        sim.add_route(sender, Ipv4Addr::UNSPECIFIED, 0, s0);
        sim.add_route(receiver, Ipv4Addr::UNSPECIFIED, 0, d0);
        sim.add_route(router, Ipv4Addr::new(10, 0, 0, 0), 24, r0);
        sim.add_route(router, Ipv4Addr::new(10, 0, 1, 0), 24, r1);
        let f = &self.flow;
        let mut specs = Vec::new();
        for i in 0..f.count {
            let kind = match f.app {
                AppKind::Bulk | AppKind::Ftp1 | AppKind::Bursts | AppKind::Video => {
                    f.tcp_source().expect("a TCP source app")
                }
                AppKind::Download => FlowKind::Download {
                    request_bytes: f.request.0,
                    bytes: f.bytes.map_or(10_000_000, |b| b.0),
                },
                AppKind::UdpCbr => FlowKind::UdpCbr {
                    rate_bps: f.udp_rate.unwrap_or(bn.rate).bps(),
                    packet_bytes: f.udp_packet.0 as u32,
                },
            };
            // The connecting side uses an ephemeral port, the serving side 5201.
            let eph = 49152 + i as u16;
            let (src_port, dst_port) = if f.app == AppKind::Download {
                (5201, eph)
            } else {
                (eph, 5201)
            };
            specs.push(FlowSpec {
                name: format!("flow{i}"),
                kind,
                src: sender,
                dst: receiver,
                src_port,
                dst_port,
                start: Time::ZERO + f.start.d(),
                tcp_sender: f.tcp_sender(),
                tcp_receiver: f.tcp_receiver(),
            });
        }
        for s in &specs {
            sim.add_flow(s.clone());
        }
        let env = build_env(&sim, common, &specs, None);
        let ran = attach_functions(&mut sim, common, &env)?;
        debug_assert!(
            ran.is_empty(),
            "no radio: the factories refuse radio points"
        );
        Ok(sim)
    }
}
