//! Built-in scenario `cc-compare` (seed 004's comparison on a wired bottleneck): the same
//! p2p-bulk network run once per congestion controller, plus once with a UDP constant-bit-rate
//! flow at the bottleneck rate (the "UDP saturation" reference). Each variant is an independent
//! network with the same seed, so every variant meets the same random loss process.
//!
//! ```text
//!  for cc in controllers:  sender --(access)-- router --(bottleneck)-- receiver   (bulk TCP, cc)
//!  udp reference:          sender --(access)-- router --(bottleneck)-- receiver   (UDP CBR)
//! ```

use crate::common::{AppKind, CcName};
use crate::config::reads::{FieldUse, Unreads};
use crate::config::{check, from_table, ConfigError};
use crate::p2p_bulk::P2pBulk;
use crate::scenario::{Common, Network, Scenario, ScenarioKind};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

fn d_controllers() -> Vec<CcName> {
    vec![
        CcName::Newreno,
        CcName::Cubic,
        CcName::Highspeed,
        CcName::Bbr,
    ]
}
fn d_true() -> bool {
    true
}

/// `cc-compare`: every p2p-bulk field, plus the list of controllers and the UDP reference.
#[derive(Clone, Debug, PartialEq, Serialize, JsonSchema)]
pub struct CcCompare {
    #[serde(flatten)]
    pub base: P2pBulk,
    /// Controllers to compare, each in its own run of the network.
    #[serde(default = "d_controllers")]
    pub controllers: Vec<CcName>,
    /// Also run a UDP CBR flow at the bottleneck rate (`flow.udp_rate` overrides the rate).
    #[serde(default = "d_true")]
    pub udp_reference: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Extra {
    #[serde(default = "d_controllers")]
    controllers: Vec<CcName>,
    #[serde(default = "d_true")]
    udp_reference: bool,
}

impl ScenarioKind for CcCompare {
    /// Split the table into this scenario's own keys and the p2p-bulk keys.
    fn from_table(mut table: toml::Table) -> Result<Self, ConfigError> {
        let mut extra = toml::Table::new();
        for k in ["controllers", "udp_reference"] {
            if let Some(v) = table.remove(k) {
                extra.insert(k.into(), v);
            }
        }
        let e: Extra = from_table(extra)?;
        let base: P2pBulk = from_table(table)?;
        Ok(CcCompare {
            base,
            controllers: e.controllers,
            udp_reference: e.udp_reference,
        })
    }
}

impl FieldUse for CcCompare {
    const ALWAYS: &'static [&'static str] = &[
        "access",
        "bottleneck",
        "flow",
        "controllers",
        "udp_reference",
    ];
    const CONDITIONAL: &'static [&'static str] = &[];
}

impl Scenario for CcCompare {
    fn unread(&self, _common: &Common, out: &mut Unreads) {
        self.base.unread_fields(out);
        // `build`: each variant sets its own controller; the UDP reference reads the UDP
        // fields (the base flow is "bulk").
        out.unless(false, "flow", &["cc"], || {
            "cc-compare runs each of `controllers` in turn".into()
        });
        if self.udp_reference {
            out.read_after_all("flow.udp_rate");
            out.read_after_all("flow.udp_packet");
        } else {
            out.unless(false, "flow", &["udp_rate", "udp_packet"], || {
                "udp_reference = false".into()
            });
        }
    }

    fn validate(&self, common: &Common) -> Result<(), ConfigError> {
        check(
            !self.controllers.is_empty() || self.udp_reference,
            "controllers",
            "must name at least one controller (or keep udp_reference)",
        )?;
        check(
            self.base.flow.app == AppKind::Bulk,
            "flow.app",
            "must be \"bulk\" in cc-compare (the UDP reference is added by udp_reference)",
        )?;
        self.base.validate(common)
    }

    /// One labelled network per variant, each with its own instances of the functions.
    fn build(&self, common: &Common) -> Result<Vec<Network>, ConfigError> {
        let mut out = Vec::new();
        for cc in &self.controllers {
            let mut c = self.base.clone();
            c.flow.cc = *cc;
            let label = serde_json::to_value(cc)
                .unwrap()
                .as_str()
                .unwrap()
                .to_string();
            out.push(Network {
                label,
                sim: c.build_sim(common)?,
            });
        }
        if self.udp_reference {
            let mut c = self.base.clone();
            c.flow.app = AppKind::UdpCbr;
            c.flow.count = 1;
            out.push(Network {
                label: "udp".to_string(),
                sim: c.build_sim(common)?,
            });
        }
        Ok(out)
    }

    fn to_json(&self) -> serde_json::Value {
        serde_json::to_value(self).expect("config serialises")
    }
}
