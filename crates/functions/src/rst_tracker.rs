//! `rst_tracker`: the dissertation's TCP RST tracker at the base station (seed 003, §4.5,
//! Figures 26–27). An uplink TCP segment with RST from a UE tells the base station that the
//! client abandoned that connection (RFC 9293 §3.10.7.1: a host answers every segment for a
//! connection it no longer has with a RST). The tracker then
//! 1. purges the flow's downlink packets the UE's bearer still holds in PDCP/RLC
//!    ([`Action::PurgeDl`]: SDUs no byte of which RLC has sent; a partly sent SDU finishes), and
//! 2. drops the flow's downlink packets arriving from the core for `hold` after the RST
//!    (§4.5: "This monitoring may continue for a few seconds because some packets may still be
//!    coming to the base station"); every further RST of the flow restarts the hold.
//!
//! The RST itself goes on to the server: the end-to-end connection is not touched (§4.6,
//! advantage 1). Every downlink packet the tracker keeps off the air is one the UE would have
//! answered with another RST (RFC 9293 §3.10.7.1), so those RSTs are counted as no longer
//! needed (§4.6, advantage 2: "the proposed mechanism can also eliminate the TCP RST packet
//! that would have been sent by the mobile station").
//!
//! Where the RST is seen: at [`Point::UlEgress`], after RLC reassembly of the uplink SDU. The
//! dissertation looks at the first MAC PDU when it carries the 5-tuple and the RST flag; rantcp's
//! RLC hands complete SDUs up, and a 40-byte RST almost always travels in one transport block, so
//! the first MAC PDU and the reassembled SDU arrive in the same slot; only a RST split across
//! transport blocks is seen later here (by the slots its other segments wait).
//!
//! A new connection with the same 5-tuple (an uplink SYN without ACK from the UE, RFC 9293
//! §3.5) ends the hold at once, so a client that reuses its port is not harmed (a choice: the
//! dissertation is silent on port reuse).
//!
//! Counters (summary.json `functions.rst_tracker`): `rsts_seen`, `purges`, `purged_packets`,
//! `purged_bytes` (IP), `purged_payload_bytes`, `dropped_packets`, `dropped_bytes` (IP, on
//! arrival during a hold), `dropped_payload_bytes`, `rsts_avoided` (purged or dropped packets
//! without RST, each of which the UE would have answered with a RST), `holds_released_by_syn`,
//! `flows_held` (distinct holds started).

use crate::{BuildEnv, FunctionConfig};
use rantcp_config::reads::FieldUse;
use rantcp_config::units::Dur;
use rantcp_config::{check, ConfigError};
use rantcp_core::{Duration, Time};
use rantcp_nf::{
    Action, Attach, Ctx, FlowKey, NetworkFunction, Outbox, Output, Point, Points, Purged, RanView,
    Rnti, Site, Verdict,
};
use rantcp_wire::{Packet, Transport};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

fn d_hold() -> Dur {
    Dur::ms(2000)
}

/// `[functions.rst_tracker]`.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RstTrackerConfig {
    /// Watch uplink TCP RSTs from the UEs at the base station; purge and drop the reset
    /// flow's downlink packets (dissertation §4.5).
    #[serde(default)]
    pub enabled: bool,
    /// How long after a UE's RST the flow's arriving downlink packets are dropped ("a few
    /// seconds", §4.5); each further RST of the flow restarts it. 0s: purge only.
    #[serde(default = "d_hold")]
    pub hold: Dur,
}

impl Default for RstTrackerConfig {
    fn default() -> Self {
        RstTrackerConfig {
            enabled: false,
            hold: d_hold(),
        }
    }
}

impl FieldUse for RstTrackerConfig {
    const ALWAYS: &'static [&'static str] = &["enabled"];
    const CONDITIONAL: &'static [&'static str] = &["hold"];
}

impl FunctionConfig for RstTrackerConfig {
    const KIND: &'static str = "rst_tracker";

    fn enabled(&self) -> bool {
        self.enabled
    }

    fn off_because(&self, p: &str) -> String {
        format!("{p}.enabled = false")
    }

    fn validate(&self, p: &str) -> Result<(), ConfigError> {
        check(
            self.hold.0 <= Duration::from_secs(60),
            &format!("{p}.hold"),
            "must be between 0s and 60s",
        )
    }

    fn build(&self, p: &str, env: &BuildEnv) -> Result<Vec<Attach>, ConfigError> {
        if !self.enabled {
            return Ok(vec![]);
        }
        env.require_radio(&format!("{p}.enabled"))?;
        Ok(vec![Attach {
            site: Site::Ran,
            function: Box::new(RstTracker::new(self.hold.d())),
        }])
    }
}

/// The function (see the module docs).
pub struct RstTracker {
    hold: Duration,
    /// Downlink flows (server → UE) on hold, until when.
    held: BTreeMap<FlowKey, Time>,
    out: Outbox,
    pub rsts_seen: u64,
    pub purges: u64,
    pub purged: Purged,
    pub dropped_packets: u64,
    pub dropped_bytes: u64,
    pub dropped_payload_bytes: u64,
    pub rsts_avoided: u64,
    pub holds_released_by_syn: u64,
    pub flows_held: u64,
}

impl RstTracker {
    pub fn new(hold: Duration) -> Self {
        RstTracker {
            hold,
            held: BTreeMap::new(),
            out: Outbox::default(),
            rsts_seen: 0,
            purges: 0,
            purged: Purged::default(),
            dropped_packets: 0,
            dropped_bytes: 0,
            dropped_payload_bytes: 0,
            rsts_avoided: 0,
            holds_released_by_syn: 0,
            flows_held: 0,
        }
    }

    /// Is `flow` (downlink direction) on hold at `now`?
    pub fn holds(&self, flow: &FlowKey, now: Time) -> bool {
        self.held.get(flow).is_some_and(|&t| now < t)
    }

    /// An uplink segment from UE `rnti`.
    fn uplink(&mut self, now: Time, rnti: Rnti, p: &Packet) {
        let Transport::Tcp(t) = &p.transport else {
            return;
        };
        let dl = FlowKey::of(p).reversed();
        if t.flags.rst() {
            self.rsts_seen += 1;
            if !self.holds(&dl, now) {
                self.flows_held += 1;
            }
            // §4.5: discard the session's packets buffered for the UE, then watch arrivals.
            self.held.insert(dl, now + self.hold);
            self.purges += 1;
            self.out.action(Action::PurgeDl { rnti, flow: dl });
        } else if t.flags.syn() && !t.flags.ack() && self.held.remove(&dl).is_some() {
            // RFC 9293 §3.5: a SYN opens a new incarnation of the 5-tuple; stop dropping.
            self.holds_released_by_syn += 1;
        }
    }
}

/// Does the UE answer `p` with a RST once it has no connection for it (RFC 9293 §3.10.7.1:
/// anything but a RST)?
fn answered_with_rst(p: &Packet) -> bool {
    !p.as_tcp().is_some_and(|t| t.flags.rst())
}

impl NetworkFunction for RstTracker {
    fn kind(&self) -> &'static str {
        RstTrackerConfig::KIND
    }
    fn points(&self) -> Points {
        Points::UL_EGRESS | Points::DL_INGRESS
    }
    fn handle_packet(&mut self, cx: &Ctx, p: &mut Packet) -> Verdict {
        match cx.point {
            Point::UlEgress => {
                if let Some(rnti) = cx.rnti {
                    self.uplink(cx.now, rnti, p);
                }
                Verdict::Pass
            }
            Point::DlIngress if !self.held.is_empty() => {
                let key = FlowKey::of(p);
                match self.held.get(&key) {
                    Some(&until) if cx.now < until => {
                        self.dropped_packets += 1;
                        self.dropped_bytes += p.len() as u64;
                        self.dropped_payload_bytes += p.payload_len as u64;
                        self.rsts_avoided += answered_with_rst(p) as u64;
                        Verdict::Drop("rst_tracker_hold")
                    }
                    Some(_) => {
                        self.held.remove(&key);
                        Verdict::Pass
                    }
                    None => Verdict::Pass,
                }
            }
            _ => Verdict::Pass,
        }
    }
    fn handle_purged(&mut self, _now: Time, _rnti: Rnti, _flow: FlowKey, p: Purged) {
        self.purged.packets += p.packets;
        self.purged.ip_bytes += p.ip_bytes;
        self.purged.payload_bytes += p.payload_bytes;
        self.purged.sdu_bytes += p.sdu_bytes;
        // Purged downlink packets of a reset flow are data or FIN, never RST (the server does
        // not reset towards a UE in these models); each would have drawn a RST.
        self.rsts_avoided += p.packets;
    }
    fn handle_timeout(&mut self, now: Time, _ran: Option<&dyn RanView>) {
        self.held.retain(|_, &mut until| now < until);
    }
    fn poll_timeout(&self) -> Option<Time> {
        self.held.values().min().copied()
    }
    fn poll_output(&mut self) -> Option<Output> {
        self.out.pop()
    }
    fn report(&self) -> serde_json::Value {
        serde_json::json!({
            "hold_s": self.hold.as_secs_f64(),
            "rsts_seen": self.rsts_seen,
            "flows_held": self.flows_held,
            "purges": self.purges,
            "purged_packets": self.purged.packets,
            "purged_bytes": self.purged.ip_bytes,
            "purged_payload_bytes": self.purged.payload_bytes,
            "purged_rlc_sdu_bytes": self.purged.sdu_bytes,
            "dropped_packets": self.dropped_packets,
            "dropped_bytes": self.dropped_bytes,
            "dropped_payload_bytes": self.dropped_payload_bytes,
            "rsts_avoided": self.rsts_avoided,
            "holds_released_by_syn": self.holds_released_by_syn,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rantcp_wire::{Ipv4Header, TcpFlags, TcpHeader, TcpOptions};
    use std::net::Ipv4Addr;

    const S: Ipv4Addr = Ipv4Addr::new(10, 0, 0, 1);
    const UE: Ipv4Addr = Ipv4Addr::new(10, 1, 0, 1);

    fn seg(src: (Ipv4Addr, u16), dst: (Ipv4Addr, u16), flags: TcpFlags, payload: u32) -> Packet {
        Packet::tcp(
            Ipv4Header::new(src.0, dst.0),
            TcpHeader {
                src_port: src.1,
                dst_port: dst.1,
                seq: 0,
                ack: 0,
                flags,
                window: 1000,
                urgent: 0,
                options: TcpOptions::default(),
            },
            payload,
        )
    }
    fn data(port: u16) -> Packet {
        seg((S, 80), (UE, port), TcpFlags::ACK, 1000)
    }
    fn rst(port: u16) -> Packet {
        seg((UE, port), (S, 80), TcpFlags::RST, 0)
    }
    fn at(ms: u64, point: Point) -> Ctx<'static> {
        Ctx {
            now: Time::ZERO + Duration::from_millis(ms),
            point,
            rnti: Some(1),
            ran: None,
        }
    }

    #[test]
    fn a_rst_purges_its_flow_and_holds_it_for_the_hold_time() {
        let mut f = RstTracker::new(Duration::from_millis(500));
        assert_eq!(
            f.handle_packet(&at(0, Point::DlIngress), &mut data(1000)),
            Verdict::Pass
        );
        assert_eq!(
            f.handle_packet(&at(10, Point::UlEgress), &mut rst(1000)),
            Verdict::Pass
        );
        let flow = FlowKey::of(&data(1000));
        assert_eq!(
            f.poll_output(),
            Some(Output::Action(Action::PurgeDl { rnti: 1, flow }))
        );
        assert_eq!(f.poll_output(), None);
        f.handle_purged(
            Time::ZERO,
            1,
            flow,
            Purged {
                packets: 3,
                ip_bytes: 3120,
                payload_bytes: 3000,
                sdu_bytes: 3126,
            },
        );
        // Within the hold: the flow's arrivals are dropped, another port's pass.
        assert!(matches!(
            f.handle_packet(&at(200, Point::DlIngress), &mut data(1000)),
            Verdict::Drop(_)
        ));
        assert_eq!(
            f.handle_packet(&at(200, Point::DlIngress), &mut data(1001)),
            Verdict::Pass
        );
        assert!(matches!(
            f.handle_packet(&at(509, Point::DlIngress), &mut data(1000)),
            Verdict::Drop(_)
        ));
        // The hold ends at 510 ms: the flow passes again.
        assert_eq!(
            f.poll_timeout(),
            Some(Time::ZERO + Duration::from_millis(510))
        );
        assert_eq!(
            f.handle_packet(&at(510, Point::DlIngress), &mut data(1000)),
            Verdict::Pass
        );
        assert_eq!(f.poll_timeout(), None);
        assert_eq!(
            (
                f.rsts_seen,
                f.purges,
                f.dropped_packets,
                f.dropped_bytes,
                f.dropped_payload_bytes
            ),
            (1, 1, 2, 2080, 2000)
        );
        assert_eq!(
            (f.purged.packets, f.purged.ip_bytes, f.rsts_avoided),
            (3, 3120, 5)
        );
    }

    #[test]
    fn each_rst_restarts_the_hold_and_a_syn_ends_it() {
        let mut f = RstTracker::new(Duration::from_millis(100));
        f.handle_packet(&at(0, Point::UlEgress), &mut rst(7));
        f.handle_packet(&at(80, Point::UlEgress), &mut rst(7));
        assert_eq!(f.flows_held, 1, "the second RST extends the same hold");
        assert!(matches!(
            f.handle_packet(&at(150, Point::DlIngress), &mut data(7)),
            Verdict::Drop(_)
        ));
        // A new connection from the same port: SYN from the UE ends the hold at once.
        let mut syn = seg((UE, 7), (S, 80), TcpFlags::SYN, 0);
        f.handle_packet(&at(160, Point::UlEgress), &mut syn);
        let mut synack = seg((S, 80), (UE, 7), TcpFlags::SYN | TcpFlags::ACK, 0);
        assert_eq!(
            f.handle_packet(&at(170, Point::DlIngress), &mut synack),
            Verdict::Pass
        );
        assert_eq!((f.holds_released_by_syn, f.rsts_seen, f.purges), (1, 2, 2));
        // A RST going down (server to UE) is not one the UE would answer.
        f.handle_packet(&at(200, Point::UlEgress), &mut rst(7));
        let mut down_rst = seg((S, 80), (UE, 7), TcpFlags::RST, 0);
        let before = f.rsts_avoided;
        assert!(matches!(
            f.handle_packet(&at(210, Point::DlIngress), &mut down_rst),
            Verdict::Drop(_)
        ));
        assert_eq!(f.rsts_avoided, before);
    }

    #[test]
    fn config_errors_name_the_field() {
        let c = RstTrackerConfig {
            enabled: true,
            hold: Dur(Duration::from_secs(61)),
        };
        let e = c.validate("functions.rst_tracker").unwrap_err();
        assert!(e.to_string().contains("functions.rst_tracker.hold"), "{e}");
        let Err(e) = c.build("functions.rst_tracker", &BuildEnv::default()) else {
            panic!("built without a radio access network")
        };
        assert!(
            e.to_string().contains("functions.rst_tracker.enabled"),
            "{e}"
        );
    }
}
