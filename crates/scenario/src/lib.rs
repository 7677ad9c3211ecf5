//! rantcp-scenario: the config schema, validation, built-in scenarios, metrics and outputs.
//!
//! [`load`] turns TOML text plus `--set` overrides into a validated [`ScenarioConfig`];
//! [`Run::new`] builds its network; [`Run::step`] advances it, cutting the time series into
//! batches ([`Run::take_batches`]) so a long run's caller can write them as it goes;
//! [`Run::finish`] returns the summary (the content of `summary.json`) and the rows not yet
//! taken. Parquet files and plots are written by the Python front from these tables.

pub mod cc_compare;
pub mod common;
pub use rantcp_config as config;
mod output;
pub mod p2p_bulk;
pub mod ran_common;
pub mod scenario;
pub mod split_tcp;
pub mod video;
pub use rantcp_config::units;
pub mod work;

pub use config::ConfigError;
pub use output::{merge, Column, Table};
pub use scenario::{config_schema, load, Common, Network, Scenario, ScenarioConfig, ScenarioKind};

use rantcp_core::Time;
use rantcp_net::Sim;
use scenario::{kind, Kind};
use std::path::Path;

/// A built-in scenario: adding one is one entry here (and its TOML file; a new kind of
/// scenario also implements [`ScenarioKind`]).
#[derive(Clone, Copy)]
pub struct Builtin {
    pub name: &'static str,
    pub description: &'static str,
    /// Its default config, as TOML.
    pub toml: &'static str,
    /// The type its config is read into.
    pub kind: Kind,
}

const P2P: Kind = kind::<p2p_bulk::P2pBulk>();
const CC: Kind = kind::<cc_compare::CcCompare>();
const RAN: Kind = kind::<ran_common::RanScenario>();
const SPLIT: Kind = kind::<split_tcp::SplitTcp>();

/// The built-in scenarios, in display order.
pub const BUILTINS: &[Builtin] = &[
    Builtin {
        name: "p2p-bulk",
        description: "One bulk TCP flow over a 50 Mbit/s, 20 ms, 1-BDP drop-tail bottleneck for 30 s",
        toml: include_str!("../scenarios/p2p-bulk.toml"),
        kind: P2P,
    },
    Builtin {
        name: "cc-compare",
        description: "NewReno, CUBIC, HighSpeed, BBR and a UDP saturation reference, each alone on the same bottleneck",
        toml: include_str!("../scenarios/cc-compare.toml"),
        kind: CC,
    },
    Builtin {
        name: "lte-cell",
        description: "LTE 20 MHz FDD cell, proportional fair, N UEs at random positions downloading full-buffer TCP (or UDP saturation) from a server 20 ms beyond the core",
        toml: include_str!("../scenarios/lte-cell.toml"),
        kind: RAN,
    },
    Builtin {
        name: "lte-7cell",
        description: "7 sites x 3 sectors LTE layout, 10-60 UEs in the centre cell, full-buffer TCP with delayed ACKs; per-UE average DL TBS and UL ACK count (seed 000)",
        toml: include_str!("../scenarios/lte-7cell.toml"),
        kind: RAN,
    },
    Builtin {
        name: "lte-m2m",
        description: "Seed 003 §3.4: 2-190 UEs of M2M telemetry (50 B down, 1,000 B up per transaction over TCP) in one LTE 20 MHz cell with the TS 36.321 BSR timers and the BSR enhancement as options",
        toml: include_str!("../scenarios/lte-m2m.toml"),
        kind: RAN,
    },
    Builtin {
        name: "mmwave-blockage",
        description: "28 GHz / 1 GHz TDD CCDDUUUU gNB, one UE alternating LOS/NLOS, NewReno from a 100 Mbit/s-capped server with 6 MB rwin (seed 001)",
        toml: include_str!("../scenarios/mmwave-blockage.toml"),
        kind: RAN,
    },
    Builtin {
        name: "mmwave-urban",
        description: "Seed 004's urban route past trees and a building at 28 GHz / 1 GHz, server at 1 Gbit/s over a 10 ms link, 20 MB RLC buffer, any congestion control",
        toml: include_str!("../scenarios/mmwave-urban.toml"),
        kind: RAN,
    },
    Builtin {
        name: "radio-aware",
        description: "Seed 002's LTE 20 MHz TM2 cell (43 dBm, PF, Cost231, 60 km/h fading, RLC AM, 45 KB L2 buffer), 4 UEs; radio-aware TCP (loose coupling) with functions.radio_feedback",
        toml: include_str!("../scenarios/radio-aware.toml"),
        kind: RAN,
    },
    Builtin {
        name: "split-tcp",
        description: "Dissertation ch. 5 Table 5: a file download to one LTE 10 MHz UE at fixed MCS through a split-TCP host (I-TCP, ES-TCP, AS-TCP) at the PGW, and the same run without it",
        toml: include_str!("../scenarios/split-tcp.toml"),
        kind: SPLIT,
    },
];

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

/// A run in progress: one or more independent networks advanced in lockstep (a comparison
/// scenario runs one network per variant, each labelled).
pub struct Run {
    cfg: ScenarioConfig,
    sims: Vec<(String, Sim)>,
    end: Time,
    /// Batches may be cut at sample instants only: every `cut_every` from `next_cut`.
    cut_every: rantcp_core::Duration,
    next_cut: Time,
    /// Batches of time-series rows cut and not yet taken.
    ready: Vec<Vec<Table>>,
}

/// A batch of time-series rows is cut once this many are waiting: about 2 MB in the core, and
/// a few MB as the Python lists they are handed over in, whatever the run's length.
pub const BATCH_ROWS: usize = 8192;

/// What a finished run produced.
pub struct RunOutput {
    /// The content of summary.json.
    pub summary: serde_json::Value,
    /// Time-series tables, e.g. "flows": the rows not taken with [`Run::take_batches`].
    pub tables: Vec<Table>,
}

impl Run {
    /// Build the networks. With `out_dir`, pcap files go to `out_dir/pcap/`.
    pub fn new(cfg: ScenarioConfig, out_dir: Option<&Path>) -> Result<Run, String> {
        let mut sims: Vec<(String, Sim)> = cfg
            .build()
            .map_err(|e| e.to_string())?
            .into_iter()
            .map(|n| (n.label, n.sim))
            .collect();
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
                .ok_or("output.pcap: needs an output folder (--out)")?
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
                        sim.capture(&n, &d, out.pcap_snaplen.bytes())?;
                    }
                }
            }
        }
        let end = Time::ZERO + cfg.duration();
        let cut_every = out.sample_interval.d();
        Ok(Run {
            cfg,
            sims,
            end,
            cut_every,
            next_cut: Time::ZERO + cut_every,
            ready: Vec::new(),
        })
    }

    pub fn config(&self) -> &ScenarioConfig {
        &self.cfg
    }
    /// The run's estimated work ([`work::estimate`]).
    pub fn work(&self) -> work::Work {
        work::estimate(&self.sims, self.end.as_secs_f64())
    }
    /// Refuse a run whose estimated work is above [`work::WORK_LIMIT`], in one line that
    /// names its largest part and how to go ahead anyway (`--force`).
    pub fn check_work(&self) -> Result<(), ConfigError> {
        let w = self.work();
        if w.total <= work::WORK_LIMIT {
            return Ok(());
        }
        Err(ConfigError::new(
            "duration",
            format!(
                "this run is too large to start: about {:.1e} packets and radio UE-slots over its {} s \
                 (the bound is {:.0e}: minutes to hours of wall time), {:.1e} of them from the {}; \
                 shorten duration or lower that rate, or pass --force (Python: force=True) to run it anyway",
                w.total,
                self.end.as_secs_f64(),
                work::WORK_LIMIT,
                w.largest.1,
                w.largest.0,
            ),
        ))
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
    ///
    /// Batches of time-series rows are cut at sample instants once [`BATCH_ROWS`] rows wait,
    /// so where they fall, and with them the row order of a comparison's tables (network by
    /// network within a batch), does not depend on how the caller chunks the run.
    pub fn step(&mut self, until: Time) -> Result<Time, String> {
        let until = until.min(self.end);
        while self.next_cut <= until {
            let cut = self.next_cut;
            for (_, sim) in &mut self.sims {
                sim.run_until(cut)?;
            }
            if output::pending_rows(&self.sims) >= BATCH_ROWS {
                self.ready.push(output::drain(&mut self.sims));
            }
            self.next_cut = cut + self.cut_every;
        }
        for (_, sim) in &mut self.sims {
            sim.run_until(until)?;
        }
        Ok(until)
    }
    /// The batches of time-series rows cut so far and not yet taken, oldest first (each a set
    /// of tables; a table may be missing from a batch that has no row of it).
    pub fn take_batches(&mut self) -> Vec<Vec<Table>> {
        std::mem::take(&mut self.ready)
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
        let mut tables = Vec::new();
        for batch in self.take_batches() {
            merge(&mut tables, batch);
        }
        merge(&mut tables, output::drain(&mut self.sims));
        let summary = output::collect(&self.cfg, &self.sims, self.end, wall_seconds);
        Ok(RunOutput { summary, tables })
    }
    /// The networks, to change before the run (the real-time emulator makes hosts external).
    pub fn sims_mut(&mut self) -> &mut [(String, Sim)] {
        &mut self.sims
    }
    /// End the run at `t` instead (not later than the configured end): an emulation stopped
    /// before its scenario's duration reports over the time it ran.
    pub fn set_end(&mut self, t: Time) {
        self.end = t.min(self.end);
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
