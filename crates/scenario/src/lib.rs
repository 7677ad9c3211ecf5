//! rantcp-scenario: the config schema, validation, built-in scenarios, metrics and outputs.
//!
//! [`load`] turns TOML text plus `--set` overrides into a validated [`ScenarioConfig`];
//! [`Run::new`] builds its network; [`Run::step`] advances it; [`Run::finish`] returns the
//! summary (the content of `summary.json`) and the time-series tables. Parquet files and plots
//! are written by the Python front from these tables.

pub mod cc_compare;
pub mod common;
pub use rantcp_config as config;
mod output;
pub mod p2p_bulk;
pub mod ran_common;
pub use rantcp_config::units;

pub use config::ConfigError;
pub use output::{Column, Table};

use rantcp_core::Time;
use rantcp_net::Sim;
use schemars::JsonSchema;
use serde::Serialize;
use std::path::Path;

/// A built-in scenario.
#[derive(Clone, Copy, Debug)]
pub struct Builtin {
    pub name: &'static str,
    pub description: &'static str,
    /// Its default config, as TOML.
    pub toml: &'static str,
}

/// The built-in scenarios, in display order.
pub const BUILTINS: &[Builtin] = &[
    Builtin {
        name: "p2p-bulk",
        description: "One bulk TCP flow over a 50 Mbit/s, 20 ms, 1-BDP drop-tail bottleneck for 30 s",
        toml: include_str!("../scenarios/p2p-bulk.toml"),
    },
    Builtin {
        name: "cc-compare",
        description: "NewReno, CUBIC, HighSpeed, BBR and a UDP saturation reference, each alone on the same bottleneck",
        toml: include_str!("../scenarios/cc-compare.toml"),
    },
    Builtin {
        name: "lte-cell",
        description: "LTE 20 MHz FDD cell, proportional fair, N UEs at random positions downloading full-buffer TCP (or UDP saturation) from a server 20 ms beyond the core",
        toml: include_str!("../scenarios/lte-cell.toml"),
    },
    Builtin {
        name: "lte-7cell",
        description: "7 sites x 3 sectors LTE layout, 10-60 UEs in the centre cell, full-buffer TCP with delayed ACKs; per-UE average DL TBS and UL ACK count (seed 000)",
        toml: include_str!("../scenarios/lte-7cell.toml"),
    },
    Builtin {
        name: "mmwave-blockage",
        description: "28 GHz / 1 GHz TDD CCDDUUUU gNB, one UE alternating LOS/NLOS, NewReno from a 100 Mbit/s-capped server with 6 MB rwin (seed 001)",
        toml: include_str!("../scenarios/mmwave-blockage.toml"),
    },
    Builtin {
        name: "mmwave-urban",
        description: "Seed 004's urban route past trees and a building at 28 GHz / 1 GHz, server at 1 Gbit/s over a 10 ms link, 20 MB RLC buffer, any congestion control",
        toml: include_str!("../scenarios/mmwave-urban.toml"),
    },
];

/// Every scenario kind's typed config.
#[derive(Clone, Debug, PartialEq, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum ScenarioConfig {
    P2pBulk(p2p_bulk::P2pBulk),
    CcCompare(cc_compare::CcCompare),
    /// The radio scenarios (lte-cell, lte-7cell, mmwave-blockage, mmwave-urban).
    Ran(ran_common::RanScenario),
}

impl ScenarioConfig {
    pub fn name(&self) -> &'static str {
        match self {
            ScenarioConfig::P2pBulk(_) => "p2p-bulk",
            ScenarioConfig::CcCompare(_) => "cc-compare",
            ScenarioConfig::Ran(c) => ran_common::RAN_SCENARIOS
                .iter()
                .find(|n| **n == c.scenario)
                .copied()
                .unwrap_or("lte-cell"),
        }
    }
    pub fn seed(&self) -> u64 {
        match self {
            ScenarioConfig::P2pBulk(c) => c.seed,
            ScenarioConfig::CcCompare(c) => c.base.seed,
            ScenarioConfig::Ran(c) => c.seed,
        }
    }
    pub fn duration(&self) -> rantcp_core::Duration {
        match self {
            ScenarioConfig::P2pBulk(c) => c.duration.d(),
            ScenarioConfig::CcCompare(c) => c.base.duration.d(),
            ScenarioConfig::Ran(c) => c.duration.d(),
        }
    }
    fn output(&self) -> &common::OutputConfig {
        match self {
            ScenarioConfig::P2pBulk(c) => &c.output,
            ScenarioConfig::CcCompare(c) => &c.base.output,
            ScenarioConfig::Ran(c) => &c.output,
        }
    }
    /// The effective config as JSON (units written back as strings), echoed in summary.json.
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::to_value(self).expect("config serialises")
    }
}

/// Resolve a scenario argument: `builtin:NAME` or a path to a TOML file.
/// Returns (display name for errors, TOML text).
pub fn resolve_source(spec: &str) -> Result<(String, String), ConfigError> {
    if let Some(name) = spec.strip_prefix("builtin:") {
        let b = BUILTINS.iter().find(|b| b.name == name).ok_or_else(|| {
            let names: Vec<&str> = BUILTINS.iter().map(|b| b.name).collect();
            ConfigError::new(
                "",
                format!(
                    "unknown built-in scenario {name:?}; allowed: {}",
                    names.join(", ")
                ),
            )
        })?;
        return Ok((spec.to_string(), b.toml.to_string()));
    }
    let text = std::fs::read_to_string(spec)
        .map_err(|e| ConfigError::new("", format!("cannot read scenario file {spec:?}: {e}")))?;
    Ok((spec.to_string(), text))
}

/// Parse, override and validate a config. `overrides` are (dotted path, value text) pairs;
/// `seed` replaces the config's seed.
pub fn load(
    text: &str,
    source: &str,
    overrides: &[(String, String)],
    seed: Option<u64>,
) -> Result<ScenarioConfig, ConfigError> {
    let mut table = config::parse_toml(text, source)?;
    for (path, value) in overrides {
        config::set_path(&mut table, path, config::override_value(value))?;
    }
    if let Some(s) = seed {
        // TOML integers are i64: seeds span 0..=2^63-1 everywhere (sweeps derive them so too).
        let s = i64::try_from(s).map_err(|_| {
            ConfigError::new("seed", format!("{s} is out of range (allowed: 0 to {})", i64::MAX))
        })?;
        table.insert("seed".into(), toml::Value::Integer(s));
    }
    let names: Vec<&str> = BUILTINS.iter().map(|b| b.name).collect();
    let kind = match table.get("scenario") {
        Some(toml::Value::String(s)) => s.clone(),
        Some(_) => {
            return Err(ConfigError::new(
                "scenario",
                format!("must be a string; allowed: {}", names.join(", ")),
            ))
        }
        None => {
            return Err(ConfigError::new(
                "scenario",
                format!("missing; allowed: {}", names.join(", ")),
            ))
        }
    };
    let cfg = match kind.as_str() {
        "p2p-bulk" => {
            let c: p2p_bulk::P2pBulk = config::from_table(table)?;
            c.validate()?;
            ScenarioConfig::P2pBulk(c)
        }
        "cc-compare" => {
            let c: cc_compare::CcCompare = cc_compare::CcCompare::from_table(table)?;
            c.validate()?;
            ScenarioConfig::CcCompare(c)
        }
        k if ran_common::RAN_SCENARIOS.contains(&k) => {
            // The built-in file is the default: the user's table is merged over it.
            let b = BUILTINS.iter().find(|b| b.name == k).expect("registered");
            let mut base = config::parse_toml(b.toml, &format!("builtin:{k}"))?;
            ran_common::merge_tables(&mut base, table);
            let c: ran_common::RanScenario = config::from_table(base)?;
            c.validate()?;
            ScenarioConfig::Ran(c)
        }
        other => {
            return Err(ConfigError::new(
                "scenario",
                format!("unknown scenario {other:?}; allowed: {}", names.join(", ")),
            ))
        }
    };
    Ok(cfg)
}

/// The JSON Schema of every scenario config, generated from the types.
pub fn config_schema() -> serde_json::Value {
    let schema = schemars::schema_for!(ScenarioConfig);
    serde_json::to_value(schema).expect("schema serialises")
}

/// A run in progress: one or more independent networks advanced in lockstep (a comparison
/// scenario runs one network per variant, each labelled).
pub struct Run {
    cfg: ScenarioConfig,
    sims: Vec<(String, Sim)>,
    end: Time,
}

/// What a finished run produced.
pub struct RunOutput {
    /// The content of summary.json.
    pub summary: serde_json::Value,
    /// Time-series tables, e.g. "flows".
    pub tables: Vec<Table>,
}

impl Run {
    /// Build the networks. With `out_dir`, pcap files go to `out_dir/pcap/`.
    pub fn new(cfg: ScenarioConfig, out_dir: Option<&Path>) -> Result<Run, String> {
        let mut sims: Vec<(String, Sim)> = match &cfg {
            ScenarioConfig::P2pBulk(c) => vec![(String::new(), c.build(c.seed))],
            ScenarioConfig::CcCompare(c) => c.build(),
            ScenarioConfig::Ran(c) => vec![(String::new(), c.build(c.seed))],
        };
        let out = cfg.output();
        for (_, sim) in &mut sims {
            sim.set_sample_interval(out.sample_interval.d());
        }
        let prefixed = |label: &str, n: &str| {
            if label.is_empty() {
                n.to_string()
            } else {
                format!("{label}/{n}")
            }
        };
        let all: Vec<String> = sims
            .iter()
            .flat_map(|(l, s)| s.iface_names().into_iter().map(move |n| prefixed(l, &n)))
            .collect();
        let wanted: Vec<String> = match &out.pcap {
            common::PcapSelection::All(false) => vec![],
            common::PcapSelection::All(true) => all.clone(),
            common::PcapSelection::Some(list) => {
                for n in list {
                    if !all.contains(n) {
                        return Err(format!(
                            "output.pcap: no interface named {n:?}; allowed: {}",
                            all.join(", ")
                        ));
                    }
                }
                list.clone()
            }
        };
        if !wanted.is_empty() {
            let dir = out_dir
                .ok_or("output.pcap needs an output folder (--out)")?
                .join("pcap");
            for (label, sim) in &mut sims {
                let d = if label.is_empty() {
                    dir.clone()
                } else {
                    dir.join(&*label)
                };
                for n in sim.iface_names() {
                    if wanted.contains(&prefixed(label, &n)) {
                        std::fs::create_dir_all(&d)
                            .map_err(|e| format!("cannot create {}: {e}", d.display()))?;
                        sim.capture(&n, &d)?;
                    }
                }
            }
        }
        let end = Time::ZERO + cfg.duration();
        Ok(Run { cfg, sims, end })
    }

    pub fn config(&self) -> &ScenarioConfig {
        &self.cfg
    }
    /// Simulated end time.
    pub fn end(&self) -> Time {
        self.end
    }
    pub fn now(&self) -> Time {
        self.sims
            .iter()
            .map(|(_, s)| s.now())
            .min()
            .unwrap_or(Time::ZERO)
    }
    pub fn events(&self) -> u64 {
        self.sims.iter().map(|(_, s)| s.events_executed()).sum()
    }
    /// Advance to `until` (clamped to the end). Returns the time reached.
    pub fn step(&mut self, until: Time) -> Result<Time, String> {
        let until = until.min(self.end);
        for (_, sim) in &mut self.sims {
            sim.run_until(until)?;
        }
        Ok(until)
    }
    /// Run to the end.
    pub fn run_to_end(&mut self) -> Result<(), String> {
        self.step(self.end).map(|_| ())
    }
    /// Close captures and compute outputs. `wall_seconds` goes under the `wall` key only.
    pub fn finish(mut self, wall_seconds: f64) -> Result<RunOutput, String> {
        for (_, sim) in &mut self.sims {
            sim.finish()?;
        }
        Ok(output::collect(
            &self.cfg,
            &self.sims,
            self.end,
            wall_seconds,
        ))
    }
    /// The networks, for tests that inspect them.
    pub fn sims(&self) -> &[(String, Sim)] {
        &self.sims
    }
}

/// Load and run a scenario to the end with no files written (tests, benches).
pub fn run_quiet(
    spec: &str,
    overrides: &[(String, String)],
    seed: Option<u64>,
) -> Result<RunOutput, String> {
    let (src, text) = resolve_source(spec).map_err(|e| e.to_string())?;
    let cfg = load(&text, &src, overrides, seed).map_err(|e| e.to_string())?;
    let mut run = Run::new(cfg, None)?;
    run.run_to_end()?;
    run.finish(0.0)
}
