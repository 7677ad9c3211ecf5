//! Built-in scenario `split-tcp` (dissertation §5.6, Table 5): a file download from a far host
//! (the server) to one LTE UE through a split-TCP host at the PGW ("core"), run twice on the
//! same seed — once end to end without the host (network "e2e") and once with it (network
//! named by `functions.split.mode`) — so that each run reports the split's gain over its own
//! unsplit baseline.
//!
//! ```text
//!  server --(WAN: wan_rtt / 2)-- core [split host] --(S1: ran_rtt / 2 − 5 ms)-- eNB ))) UE
//! ```
//! `ran_rtt` and `wan_rtt` set the two delays: the WAN link gets half of `wan_rtt` one way; the
//! S1 link half of `ran_rtt` minus 5 ms, the one-way share of the LTE radio's own round trip
//! (HARQ n+4, 1 ms processing at each end, scheduling: about 10 ms), so that TCP_RAN's RTT
//! is close to `ran_rtt`.

use crate::config::reads::{concat, FieldUse, Unreads};
use crate::config::{check, ConfigError};
use crate::ran_common::RanScenario;
use crate::scenario::{Common, Network, Scenario, ScenarioKind};
use crate::units::Dur;
use rantcp_core::Duration;
use rantcp_functions::split::SplitMode;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The radio's one-way share of TCP_RAN's round trip, subtracted from the S1 delay.
pub const RADIO_ONE_WAY: Duration = Duration::from_millis(5);

fn d_true() -> bool {
    true
}
fn d_ran() -> Dur {
    Dur::ms(60)
}
fn d_wan() -> Dur {
    Dur::ms(60)
}

/// `split-tcp`: every radio-scenario field, plus the RTT split and the baseline switch.
#[derive(Clone, Debug, PartialEq, Serialize, JsonSchema)]
pub struct SplitTcp {
    #[serde(flatten)]
    pub base: RanScenario,
    /// Round-trip time of TCP_RAN (split host ↔ UE), Table 5's first number.
    pub ran_rtt: Dur,
    /// Round-trip time of TCP_WAN (server ↔ split host), Table 5's second number.
    pub wan_rtt: Dur,
    /// Also run the network without the split host (network "e2e"), the gain's baseline.
    pub baseline: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Extra {
    #[serde(default = "d_ran")]
    ran_rtt: Dur,
    #[serde(default = "d_wan")]
    wan_rtt: Dur,
    #[serde(default = "d_true")]
    baseline: bool,
}

impl ScenarioKind for SplitTcp {
    fn from_table(mut table: toml::Table) -> Result<Self, ConfigError> {
        let mut extra = toml::Table::new();
        for k in ["ran_rtt", "wan_rtt", "baseline"] {
            if let Some(v) = table.remove(k) {
                extra.insert(k.into(), v);
            }
        }
        let e: Extra = crate::config::from_table(extra)?;
        let mut base: RanScenario = crate::config::from_table(table)?;
        base.core.server_delay = Dur(Duration(e.wan_rtt.d().0 / 2));
        base.core.s1_delay = Dur(Duration(
            (e.ran_rtt.d().0 / 2)
                .saturating_sub(RADIO_ONE_WAY.0)
                .max(Duration::from_micros(100).0),
        ));
        Ok(SplitTcp {
            base,
            ran_rtt: e.ran_rtt,
            wan_rtt: e.wan_rtt,
            baseline: e.baseline,
        })
    }
}

impl FieldUse for SplitTcp {
    // The radio scenario's fields (flattened into this table) and the split's own.
    const ALWAYS: &'static [&'static str] = &concat::<{ RanScenario::ALWAYS.len() + 3 }>(&[
        RanScenario::ALWAYS,
        &["ran_rtt", "wan_rtt", "baseline"],
    ]);
    const CONDITIONAL: &'static [&'static str] = RanScenario::CONDITIONAL;
}

impl Scenario for SplitTcp {
    fn max_duration(&self) -> Duration {
        self.base.max_duration()
    }

    fn unread(&self, _common: &Common, out: &mut Unreads) {
        self.base.unread_fields(out);
        // `from_table`: the two delays come from the round-trip times.
        out.unless(false, "core", &["server_delay", "s1_delay"], || {
            "split-tcp sets it from wan_rtt and ran_rtt".into()
        });
    }

    fn validate(&self, common: &Common) -> Result<(), ConfigError> {
        check(
            self.ran_rtt.d() >= Duration::from_millis(12)
                && self.ran_rtt.d() <= Duration::from_secs(2),
            "ran_rtt",
            "must be between 12ms (the radio's own round trip and more) and 2s",
        )?;
        check(
            self.wan_rtt.d() > Duration::ZERO && self.wan_rtt.d() <= Duration::from_secs(2),
            "wan_rtt",
            "must be between 0s (exclusive) and 2s",
        )?;
        check(
            self.base.ues == 1,
            "ues",
            "must be 1 in split-tcp (one download, as in Table 5)",
        )?;
        check(
            self.base.flow.bytes.is_some(),
            "flow.bytes",
            "must be set in split-tcp: the file size (Table 5: 0.5 MB to 20 MB)",
        )?;
        self.base.validate(common)
    }

    fn build(&self, common: &Common) -> Result<Vec<Network>, ConfigError> {
        let mode = common.functions.split.mode;
        let mut out = Vec::new();
        if self.baseline || mode == SplitMode::Off {
            let mut c = common.clone();
            c.functions.split.mode = SplitMode::Off;
            out.push(Network {
                label: "e2e".into(),
                sim: self.base.build_sim(&c)?,
            });
        }
        if mode != SplitMode::Off {
            out.push(Network {
                label: mode.name().into(),
                sim: self.base.build_sim(common)?,
            });
        }
        Ok(out)
    }

    fn to_json(&self) -> serde_json::Value {
        serde_json::to_value(self).expect("config serialises")
    }
}
