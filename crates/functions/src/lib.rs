//! rantcp-functions: the network functions (design.md §5), one file each, and their configs.
//!
//! Each kind has a config struct, the `[functions.<kind>]` table of every scenario (serde,
//! unknown fields refused, JSON Schema), that is also its factory, as quinn's controller
//! configs are: [`FunctionConfig::build`] turns it into the function instances and the site
//! each goes to ([`rantcp_nf::Attach`]). Every kind is off by default; a kind whose table
//! leaves it off builds nothing, so a run without functions pays nothing for them.
//!
//! Adding a function: write `src/<kind>.rs` (the function, its config, its tests), add a field
//! to [`FunctionsConfig`] and a line to [`FunctionsConfig::kinds`].
//!
//! | kind | what | points |
//! |---|---|---|
//! | [`ack_filter`] | seed 000's TCP ACK filtering in the UE uplink buffer (Passive, Active, Hybrid, Hybrid(opt)) | UE uplink buffer |
//! | [`impair`] | drop (or hold) packets matching a filter, with a probability or every Nth, in a time window | any packet point |
//! | [`proxy`] | seed 001's mmPEP and an RFC 3135-style PEP at the base station: early ACKs from a cache, batch retransmission | DL ingress, UL egress, DL egress |
//! | [`radio_feedback`] | seed 002's loose coupling: R(t) and Q(t) per UE to the TCP senders every period, after a delay | timer (RAN view) |
//! | [`close_coupled`] | seed 002's close coupling: an IP buffer per UE at the base station from which each MAC grant pulls what it has room for | DL ingress + DL pull |
//! | [`rst_tracker`] | the dissertation's TCP RST tracker (ch. 4): a UE's uplink RST purges the flow's queued downlink packets and drops its arrivals for a hold time | UL egress, DL ingress |
//! | [`split`] | split-TCP host: I-TCP, ES-TCP, AS-TCP (dissertation ch. 5), with the AS-TCP far-host agent | forward (host), host + host-out (far host) |

pub mod ack_filter;
pub mod close_coupled;
pub mod impair;
pub mod proxy;
pub mod radio_feedback;
pub mod rst_tracker;
pub mod split;

use rantcp_config::reads::{FieldUse, Unreads};
use rantcp_config::ConfigError;
use rantcp_core::{Duration, Rng, Time};
use rantcp_nf::{Attach, FlowKey, NodeId};
use rantcp_tcp::TcpConfig;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::net::Ipv4Addr;

/// What a function's factory knows about the network it is built for.
#[derive(Clone, Debug, Default)]
pub struct BuildEnv {
    /// The run's seed: each function draws from its own stream ([`BuildEnv::rng`]).
    pub seed: u64,
    /// Simulated end of the run.
    pub end: Time,
    /// The network's nodes by name.
    pub nodes: Vec<(String, NodeId)>,
    /// The network's flows: name and 5-tuple in the data direction (from the data source).
    pub flows: Vec<(String, FlowKey)>,
    /// The radio access network, when the scenario has one.
    pub radio: Option<RadioFacts>,
    /// The nodes' addresses, by node id (empty: unknown).
    pub addrs: Vec<Ipv4Addr>,
    /// The flows' TCP settings (data sender, data receiver), parallel to `flows` (empty:
    /// unknown; functions that run TCP then use the defaults).
    pub flow_tcp: Vec<(TcpConfig, TcpConfig)>,
}

/// Facts about the radio access network that functions size themselves by.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RadioFacts {
    /// Slot (TTI) length.
    pub slot: Duration,
    /// Data-to-HARQ-feedback delay, slots (β of seed 001).
    pub harq_feedback_slots: u32,
    /// Downlink RLC transmission-buffer limit per bearer, bytes (0: unknown).
    pub rlc_buffer_bytes: u64,
}

impl BuildEnv {
    /// The random stream of one function instance: `nf/<kind>/<instance>`.
    pub fn rng(&self, kind: &str, instance: &str) -> Rng {
        Rng::for_entity(self.seed, &format!("nf/{kind}/{instance}"))
    }
    /// The node named `name`, or an error at `path` naming the nodes there are.
    pub fn node(&self, path: &str, name: &str) -> Result<NodeId, ConfigError> {
        self.nodes
            .iter()
            .find(|(n, _)| n == name)
            .map(|x| x.1)
            .ok_or_else(|| {
                ConfigError::new(
                    path,
                    format!("no node named {name:?} (allowed: {})", self.node_names()),
                )
            })
    }
    /// The node whose address is `addr`.
    pub fn node_of(&self, addr: Ipv4Addr) -> Option<NodeId> {
        self.addrs.iter().position(|a| *a == addr)
    }
    /// The flow named `name` (at `path`), or every TCP flow of the network when `name` is
    /// absent (functions that act on the TCP flows to UEs start from these).
    pub fn tcp_flows(&self, path: &str, name: Option<&str>) -> Result<Vec<FlowKey>, ConfigError> {
        let all = match name {
            Some(n) => vec![self.flow(path, n)?],
            None => self.flows.iter().map(|f| f.1).collect(),
        };
        Ok(all
            .into_iter()
            .filter(|k| k.proto == rantcp_wire::PROTO_TCP)
            .collect())
    }
    /// The radio facts, or an error at `path` for a function that only sits in a radio access
    /// network.
    pub fn require_radio(&self, path: &str) -> Result<RadioFacts, ConfigError> {
        self.radio
            .ok_or_else(|| ConfigError::new(path, "needs a scenario with a radio access network"))
    }
    fn node_names(&self) -> String {
        let names: Vec<&str> = self.nodes.iter().map(|(n, _)| n.as_str()).collect();
        names.join(", ")
    }
    /// The flow named `name`, or an error at `path` naming the flows there are.
    pub fn flow(&self, path: &str, name: &str) -> Result<FlowKey, ConfigError> {
        self.flows
            .iter()
            .find(|(n, _)| n == name)
            .map(|x| x.1)
            .ok_or_else(|| {
                let names: Vec<&str> = self.flows.iter().map(|(n, _)| n.as_str()).collect();
                ConfigError::new(
                    path,
                    format!("no flow named {name:?} (allowed: {})", names.join(", ")),
                )
            })
    }
}

/// A function kind's config: checked on its own at load time, built against a network.
/// Its [`FieldUse`] says which fields are read only under a condition: `ALWAYS` are the
/// switches (what [`FunctionConfig::enabled`] reads), `CONDITIONAL` the rest.
pub trait FunctionConfig: FieldUse {
    /// The kind's name: its table under `functions` and its key in summary.json.
    const KIND: &'static str;
    /// Whether the table switches the function on.
    fn enabled(&self) -> bool;
    /// The switch as a condition, for warnings: `functions.proxy.mode = "off"`.
    fn off_because(&self, path: &str) -> String;
    /// Range checks that need no network, made whether the function is on or off; `path` is
    /// the table's (`functions.<kind>`).
    fn validate(&self, path: &str) -> Result<(), ConfigError>;
    /// The fields this config does not read: every `CONDITIONAL` one when off; the kinds whose
    /// fields depend on a mode say more.
    fn unread(&self, path: &str, out: &mut Unreads) {
        out.unless(self.enabled(), path, Self::CONDITIONAL, || {
            self.off_because(path)
        });
    }
    /// The flow named in the kind's `flow` field, for the kinds that act on that one TCP flow
    /// or, absent, on every TCP flow ([`BuildEnv::tcp_flows`]). The default off-checks below
    /// check it; a kind with other names or times to check writes its own.
    fn tcp_flow(&self) -> Option<&str> {
        None
    }
    /// Whether the function, off, holds a value only the network can check (a node or flow
    /// name other than the default, a time against the run's end): [`FunctionConfig::check_off`].
    fn off_needs_network(&self) -> bool {
        self.tcp_flow().is_some()
    }
    /// The checks `build` makes of names and times, for a function that is off (a misspelt
    /// node is refused whether or not the function is on).
    fn check_off(&self, path: &str, env: &BuildEnv) -> Result<(), ConfigError> {
        match self.tcp_flow() {
            Some(name) => env
                .tcp_flows(&format!("{path}.flow"), Some(name))
                .map(|_| ()),
            None => Ok(()),
        }
    }
    /// The function instances and their sites (nothing when off). Names of nodes and flows
    /// are resolved here; errors name the field under `path`.
    fn build(&self, path: &str, env: &BuildEnv) -> Result<Vec<Attach>, ConfigError>;
}

/// The `[functions]` table of every scenario: one table per kind, all off by default.
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FunctionsConfig {
    /// Drop or hold packets that match a filter (`[functions.impair]`).
    #[serde(default)]
    pub impair: impair::ImpairConfig,
    /// TCP ACK filtering in the UE uplink buffer, seed 000 (`[functions.ack_filter]`).
    #[serde(default)]
    pub ack_filter: ack_filter::AckFilterConfig,
    /// A split-TCP host: I-TCP, ES-TCP or AS-TCP (`[functions.split]`).
    #[serde(default)]
    pub split: split::SplitConfig,
    /// Seed 001's mmPEP or a plain PEP at the base station (`[functions.proxy]`).
    #[serde(default)]
    pub proxy: proxy::ProxyConfig,
    /// Radio feedback (R(t), Q(t)) to radio-aware TCP senders, seed 002
    /// (`[functions.radio_feedback]`).
    #[serde(default)]
    pub radio_feedback: radio_feedback::RadioFeedbackConfig,
    /// The MAC grant pulls downlink packets from an IP buffer at the base station, seed 002
    /// (`[functions.close_coupled]`).
    #[serde(default)]
    pub close_coupled: close_coupled::CloseCoupledConfig,
    /// The TCP RST tracker at the base station, dissertation ch. 4 (`[functions.rst_tracker]`).
    #[serde(default)]
    pub rst_tracker: rst_tracker::RstTrackerConfig,
}

impl FunctionsConfig {
    /// Is any function switched on?
    pub fn any_enabled(&self) -> bool {
        self.impair.enabled()
            || self.ack_filter.enabled()
            || self.split.enabled()
            || self.proxy.enabled()
            || self.radio_feedback.enabled()
            || self.close_coupled.enabled()
            || self.rst_tracker.enabled()
    }
    /// Does a kind that is off hold a value only the network can check?
    pub fn off_needs_network(&self) -> bool {
        self.impair.off_needs_network()
            || self.split.off_needs_network()
            || self.radio_feedback.off_needs_network()
            || self.close_coupled.off_needs_network()
    }
    /// The fields of every kind's table the run does not read (`prefix` is `functions`).
    pub fn unread(&self, prefix: &str, out: &mut Unreads) {
        let p = |k: &str| format!("{prefix}.{k}");
        self.impair.unread(&p(impair::ImpairConfig::KIND), out);
        self.ack_filter
            .unread(&p(ack_filter::AckFilterConfig::KIND), out);
        self.split.unread(&p(split::SplitConfig::KIND), out);
        self.proxy.unread(&p(proxy::ProxyConfig::KIND), out);
        self.radio_feedback
            .unread(&p(radio_feedback::RadioFeedbackConfig::KIND), out);
        self.close_coupled
            .unread(&p(close_coupled::CloseCoupledConfig::KIND), out);
        self.rst_tracker
            .unread(&p(rst_tracker::RstTrackerConfig::KIND), out);
    }
    /// Check every kind's table (`prefix` is `functions`).
    pub fn validate(&self, prefix: &str) -> Result<(), ConfigError> {
        self.impair
            .validate(&format!("{prefix}.{}", impair::ImpairConfig::KIND))?;
        self.ack_filter
            .validate(&format!("{prefix}.{}", ack_filter::AckFilterConfig::KIND))?;
        self.split
            .validate(&format!("{prefix}.{}", split::SplitConfig::KIND))?;
        self.proxy
            .validate(&format!("{prefix}.{}", proxy::ProxyConfig::KIND))?;
        self.radio_feedback.validate(&format!(
            "{prefix}.{}",
            radio_feedback::RadioFeedbackConfig::KIND
        ))?;
        self.close_coupled.validate(&format!(
            "{prefix}.{}",
            close_coupled::CloseCoupledConfig::KIND
        ))?;
        self.rst_tracker
            .validate(&format!("{prefix}.{}", rst_tracker::RstTrackerConfig::KIND))
    }
    /// Build every enabled function, kinds in declaration order; check the names and times of
    /// the kinds that are off against the network ([`FunctionConfig::check_off`]).
    pub fn build(&self, prefix: &str, env: &BuildEnv) -> Result<Vec<Attach>, ConfigError> {
        fn one<C: FunctionConfig>(
            c: &C,
            prefix: &str,
            env: &BuildEnv,
            out: &mut Vec<Attach>,
        ) -> Result<(), ConfigError> {
            let p = format!("{prefix}.{}", C::KIND);
            if c.enabled() {
                out.extend(c.build(&p, env)?);
                Ok(())
            } else {
                c.check_off(&p, env)
            }
        }
        let mut out = Vec::new();
        one(&self.impair, prefix, env, &mut out)?;
        one(&self.ack_filter, prefix, env, &mut out)?;
        one(&self.split, prefix, env, &mut out)?;
        one(&self.proxy, prefix, env, &mut out)?;
        one(&self.radio_feedback, prefix, env, &mut out)?;
        one(&self.close_coupled, prefix, env, &mut out)?;
        one(&self.rst_tracker, prefix, env, &mut out)?;
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rantcp_config::reads::classified;

    #[test]
    fn every_field_of_every_kind_is_a_switch_or_conditional() {
        for r in [
            classified::<impair::ImpairConfig>(),
            classified::<ack_filter::AckFilterConfig>(),
            classified::<split::SplitConfig>(),
            classified::<proxy::ProxyConfig>(),
            classified::<radio_feedback::RadioFeedbackConfig>(),
            classified::<close_coupled::CloseCoupledConfig>(),
            classified::<rst_tracker::RstTrackerConfig>(),
        ] {
            r.unwrap();
        }
    }

    /// A kind's defaults are the same whether its table is absent or written empty (or with
    /// only some keys): `Default` agrees with the fields' serde defaults, so an echoed config
    /// means what it says.
    #[test]
    fn an_absent_table_and_an_empty_one_have_the_same_defaults() {
        let absent = serde_json::to_value(FunctionsConfig::default()).unwrap();
        let names: Vec<String> = absent.as_object().unwrap().keys().cloned().collect();
        let text: String = names.iter().map(|k| format!("[{k}]\n")).collect();
        let empty: FunctionsConfig = toml::from_str(&text).unwrap();
        assert_eq!(serde_json::to_value(empty).unwrap(), absent);
    }

    #[test]
    fn a_kind_that_is_off_reads_none_of_its_parameters() {
        let mut u = Unreads::default();
        FunctionsConfig::default().unread("functions", &mut u);
        let n = impair::ImpairConfig::CONDITIONAL.len()
            + ack_filter::AckFilterConfig::CONDITIONAL.len()
            + split::SplitConfig::CONDITIONAL.len()
            + proxy::ProxyConfig::CONDITIONAL.len()
            + radio_feedback::RadioFeedbackConfig::CONDITIONAL.len()
            + close_coupled::CloseCoupledConfig::CONDITIONAL.len()
            + rst_tracker::RstTrackerConfig::CONDITIONAL.len();
        assert_eq!(u.0.len(), n);
        assert!(u
            .0
            .iter()
            .any(|u| u.path == "functions.proxy.cache"
                && u.because == "functions.proxy.mode = \"off\""));
    }
}
