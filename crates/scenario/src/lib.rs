//! rantcp-scenario: the config schema, validation, built-in scenarios, metrics and outputs.
//!
//! [`load`] turns TOML text plus `--set` overrides into a validated [`ScenarioConfig`];
//! [`Run::new`] builds its network; [`Run::step`] advances it; [`Run::finish`] returns the
//! summary (the content of `summary.json`) and the time-series tables. Parquet files and plots
//! are written by the Python front from these tables.

pub mod common;
pub mod config;
mod output;
pub mod p2p_bulk;
pub mod units;

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
pub const BUILTINS: &[Builtin] = &[Builtin {
    name: "p2p-bulk",
    description: "One bulk TCP flow over a 50 Mbit/s, 20 ms, 1-BDP drop-tail bottleneck for 30 s",
    toml: include_str!("../scenarios/p2p-bulk.toml"),
}];

/// Every scenario kind's typed config.
#[derive(Clone, Debug, PartialEq, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum ScenarioConfig {
    P2pBulk(p2p_bulk::P2pBulk),
}

impl ScenarioConfig {
    pub fn name(&self) -> &'static str {
        match self {
            ScenarioConfig::P2pBulk(_) => "p2p-bulk",
        }
    }
    pub fn seed(&self) -> u64 {
        match self {
            ScenarioConfig::P2pBulk(c) => c.seed,
        }
    }
    pub fn duration(&self) -> rantcp_core::Duration {
        match self {
            ScenarioConfig::P2pBulk(c) => c.duration.d(),
        }
    }
    fn output(&self) -> &common::OutputConfig {
        match self {
            ScenarioConfig::P2pBulk(c) => &c.output,
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
            ConfigError::new("", format!("unknown built-in scenario {name:?}; allowed: {}", names.join(", ")))
        })?;
        return Ok((spec.to_string(), b.toml.to_string()));
    }
    let text = std::fs::read_to_string(spec).map_err(|e| ConfigError::new("", format!("cannot read scenario file {spec:?}: {e}")))?;
    Ok((spec.to_string(), text))
}

/// Parse, override and validate a config. `overrides` are (dotted path, value text) pairs;
/// `seed` replaces the config's seed.
pub fn load(text: &str, source: &str, overrides: &[(String, String)], seed: Option<u64>) -> Result<ScenarioConfig, ConfigError> {
    let mut table = config::parse_toml(text, source)?;
    for (path, value) in overrides {
        config::set_path(&mut table, path, config::override_value(value))?;
    }
    if let Some(s) = seed {
        table.insert("seed".into(), toml::Value::Integer(s as i64));
    }
    let names: Vec<&str> = BUILTINS.iter().map(|b| b.name).collect();
    let kind = match table.get("scenario") {
        Some(toml::Value::String(s)) => s.clone(),
        Some(_) => return Err(ConfigError::new("scenario", format!("must be a string; allowed: {}", names.join(", ")))),
        None => return Err(ConfigError::new("scenario", format!("missing; allowed: {}", names.join(", ")))),
    };
    let cfg = match kind.as_str() {
        "p2p-bulk" => {
            let c: p2p_bulk::P2pBulk = config::from_table(table)?;
            c.validate()?;
            ScenarioConfig::P2pBulk(c)
        }
        other => return Err(ConfigError::new("scenario", format!("unknown scenario {other:?}; allowed: {}", names.join(", ")))),
    };
    Ok(cfg)
}

/// The JSON Schema of every scenario config, generated from the types.
pub fn config_schema() -> serde_json::Value {
    let schema = schemars::schema_for!(ScenarioConfig);
    serde_json::to_value(schema).expect("schema serialises")
}

/// A run in progress.
pub struct Run {
    cfg: ScenarioConfig,
    sim: Sim,
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
    /// Build the network. With `out_dir`, pcap files go to `out_dir/pcap/`.
    pub fn new(cfg: ScenarioConfig, out_dir: Option<&Path>) -> Result<Run, String> {
        let mut sim = match &cfg {
            ScenarioConfig::P2pBulk(c) => c.build(c.seed),
        };
        let out = cfg.output();
        sim.set_sample_interval(out.sample_interval.d());
        let wanted: Vec<String> = match &out.pcap {
            common::PcapSelection::All(false) => vec![],
            common::PcapSelection::All(true) => sim.iface_names(),
            common::PcapSelection::Some(list) => {
                let all = sim.iface_names();
                for n in list {
                    if !all.contains(n) {
                        return Err(format!("output.pcap: no interface named {n:?}; allowed: {}", all.join(", ")));
                    }
                }
                list.clone()
            }
        };
        if !wanted.is_empty() {
            let dir = out_dir.ok_or("output.pcap needs an output folder (--out)")?.join("pcap");
            std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
            for n in &wanted {
                sim.capture(n, &dir)?;
            }
        }
        let end = Time::ZERO + cfg.duration();
        Ok(Run { cfg, sim, end })
    }

    pub fn config(&self) -> &ScenarioConfig {
        &self.cfg
    }
    /// Simulated end time.
    pub fn end(&self) -> Time {
        self.end
    }
    pub fn now(&self) -> Time {
        self.sim.now()
    }
    pub fn events(&self) -> u64 {
        self.sim.events_executed()
    }
    /// Advance to `until` (clamped to the end). Returns the time reached.
    pub fn step(&mut self, until: Time) -> Result<Time, String> {
        self.sim.run_until(until.min(self.end))
    }
    /// Run to the end.
    pub fn run_to_end(&mut self) -> Result<(), String> {
        self.step(self.end).map(|_| ())
    }
    /// Close captures and compute outputs. `wall_seconds` goes under the `wall` key only.
    pub fn finish(mut self, wall_seconds: f64) -> Result<RunOutput, String> {
        self.sim.finish()?;
        Ok(output::collect(&self.cfg, &self.sim, self.end, wall_seconds))
    }
    /// The simulator, for tests that inspect it.
    pub fn sim(&self) -> &Sim {
        &self.sim
    }
}

/// Load and run a scenario to the end with no files written (tests, benches).
pub fn run_quiet(spec: &str, overrides: &[(String, String)], seed: Option<u64>) -> Result<RunOutput, String> {
    let (src, text) = resolve_source(spec).map_err(|e| e.to_string())?;
    let cfg = load(&text, &src, overrides, seed).map_err(|e| e.to_string())?;
    let mut run = Run::new(cfg, None)?;
    run.run_to_end()?;
    run.finish(0.0)
}
