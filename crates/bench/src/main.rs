//! `make bench`: wall time and events/s of the standard scenarios (simulation only: no files
//! written). Each scenario runs `REPEAT` times; the best wall time is reported, as is usual for
//! benchmarks on a shared machine. Benchmarks report; they are not timed tests.
//!
//! `RANTCP_BENCH_REPEAT=1 valgrind --tool=callgrind target/release/rantcp-bench "lte-7cell 40 UEs 10s ackf none"`
//! counts the instructions of one run, which a shared machine does not blur as it blurs wall
//! time (how the attached-but-off ACK filter's cost was measured, issue 19).

mod phy;

use std::time::Instant;

const REPEAT: usize = 3;

struct Case {
    name: &'static str,
    spec: &'static str,
    overrides: &'static [(&'static str, &'static str)],
}

const CASES: &[Case] = &[
    Case {
        name: "p2p-bulk newreno 50Mbps 30s",
        spec: "builtin:p2p-bulk",
        overrides: &[],
    },
    Case {
        name: "p2p-bulk bbr 50Mbps 30s",
        spec: "builtin:p2p-bulk",
        overrides: &[("flow.cc", "bbr")],
    },
    // Radio (issue 5 targets: <= 0.2 s, <= 1 s, <= 10 s).
    Case {
        name: "lte-cell 1 UE 10s",
        spec: "builtin:lte-cell",
        overrides: &[("ues", "1"), ("duration", "10s")],
    },
    Case {
        name: "lte-cell 40 UEs 10s",
        spec: "builtin:lte-cell",
        overrides: &[("ues", "40"), ("duration", "10s")],
    },
    Case {
        name: "lte-7cell 60 UEs 10s",
        spec: "builtin:lte-7cell",
        overrides: &[("ues", "60"), ("duration", "10s")],
    },
    // Seed 000's ACK filter (issue 19 targets: present but "none" within 3 % of absent,
    // hybrid-opt within 10 %).
    Case {
        name: "lte-7cell 40 UEs 10s no ackf",
        spec: "builtin:lte-7cell",
        overrides: &[("ues", "40"), ("duration", "10s")],
    },
    Case {
        name: "lte-7cell 40 UEs 10s ackf none",
        spec: "builtin:lte-7cell",
        overrides: &[
            ("ues", "40"),
            ("duration", "10s"),
            ("functions.ack_filter.mode", "none"),
        ],
    },
    Case {
        name: "lte-7cell 40 UEs 10s ackf hybrid-opt",
        spec: "builtin:lte-7cell",
        overrides: &[
            ("ues", "40"),
            ("duration", "10s"),
            ("functions.ack_filter.mode", "hybrid-opt"),
        ],
    },
    // Seed 001's mmPEP (issue 12 target: mmPEP on within 20 % of the wall time without). With
    // blockage the two runs do different work: the proxy delivers what plain TCP loses in NLOS
    // (86 vs 47 Mbit/s), so its run has about twice the events. The same pair held in LOS (no
    // blockage: both reach the 100 Mbit/s server cap) compares the proxy's cost on equal work.
    // After each mmPEP case the bench prints its ratios to the run without a proxy: wall, events
    // and wall per delivered MB.
    Case {
        name: "mmwave-blockage 20s no proxy",
        spec: "builtin:mmwave-blockage",
        overrides: &[("duration", "20s")],
    },
    Case {
        name: "mmwave-blockage 20s proxy none",
        spec: "builtin:mmwave-blockage",
        overrides: &[("duration", "20s"), ("functions.proxy.mode", "none")],
    },
    Case {
        name: "mmwave-blockage 20s mmpep",
        spec: "builtin:mmwave-blockage",
        overrides: &[
            ("duration", "20s"),
            ("functions.proxy.mode", "mmpep"),
            ("functions.proxy.alpha", "1.12"),
        ],
    },
    Case {
        name: "mmwave-blockage 20s LOS no proxy",
        spec: "builtin:mmwave-blockage",
        overrides: &[
            ("duration", "20s"),
            ("ue.los_duration", "1000s"),
            ("ue.nlos_duration", "0s"),
        ],
    },
    Case {
        name: "mmwave-blockage 20s LOS mmpep",
        spec: "builtin:mmwave-blockage",
        overrides: &[
            ("duration", "20s"),
            ("ue.los_duration", "1000s"),
            ("ue.nlos_duration", "0s"),
            ("functions.proxy.mode", "mmpep"),
            ("functions.proxy.alpha", "1.12"),
        ],
    },
    // Dissertation ch. 5 (issue 15): 10 MB at 60:60 ms, MCS 25, ES-TCP beside its e2e run.
    Case {
        name: "split-tcp es-tcp 10MB 60:60 mcs25",
        spec: "builtin:split-tcp",
        overrides: &[
            ("flow.bytes", "10MB"),
            ("radio.fixed_mcs", "25"),
            ("functions.split.mode", "es-tcp"),
            ("duration", "20s"),
        ],
    },
    // Seed 002 (issue 13): loose coupling (radio feedback every 10 ms) and close coupling.
    Case {
        name: "radio-aware 4 UEs 20s cubic",
        spec: "builtin:radio-aware",
        overrides: &[],
    },
    Case {
        name: "radio-aware 4 UEs 20s loose",
        spec: "builtin:radio-aware",
        overrides: &[
            ("flow.cc", "radio-aware"),
            ("functions.radio_feedback.enabled", "true"),
        ],
    },
    Case {
        name: "radio-aware 4 UEs 20s close",
        spec: "builtin:radio-aware",
        overrides: &[("functions.close_coupled.enabled", "true")],
    },
    Case {
        name: "mmwave-urban newreno 60s route",
        spec: "builtin:mmwave-urban",
        overrides: &[("flow.cc", "newreno")],
    },
    // Dissertation ch. 3 (issue 14): M2M at the largest load of Figure 12 (also reported as
    // wall time per simulated second).
    Case {
        name: "lte-m2m 190 UEs 10s",
        spec: "builtin:lte-m2m",
        overrides: &[("ues", "190"), ("duration", "10s")],
    },
];

/// What one case measured: best wall time, events, bytes the flows' receivers got.
#[derive(Clone, Copy)]
struct Measured {
    wall: f64,
    events: u64,
    delivered: u64,
}

impl Measured {
    /// Wall seconds per delivered MB (10^6 bytes).
    fn wall_per_mb(&self) -> f64 {
        self.wall / (self.delivered as f64 / 1e6)
    }
}

/// The case without a proxy that an mmPEP case is judged against (its name with "mmpep"
/// replaced by "no proxy").
fn proxy_baseline(name: &str) -> Option<String> {
    name.contains("mmpep")
        .then(|| name.replace("mmpep", "no proxy"))
}

fn main() {
    // `rantcp-bench SUBSTRING` runs only the cases whose name contains it (and, for an mmPEP
    // case, the run without a proxy it is compared with); a whole case name runs that case
    // alone (for `valgrind --tool=callgrind`).
    let only = std::env::args().nth(1);
    let repeat = std::env::var("RANTCP_BENCH_REPEAT")
        .ok()
        .and_then(|v| v.parse::<usize>().ok())
        .filter(|&n| n > 0)
        .unwrap_or(REPEAT);
    println!(
        "{:<36} {:>12} {:>10} {:>12} {:>12} {:>11}",
        "scenario", "events", "wall s", "events/s", "delivered MB", "wall ms/MB"
    );
    let wanted = |name: &str| match &only {
        None => true,
        Some(o) if CASES.iter().any(|c| c.name == o.as_str()) => name == o.as_str(),
        Some(o) => {
            name.contains(o.as_str())
                || CASES.iter().any(|c| {
                    c.name.contains(o.as_str()) && proxy_baseline(c.name).as_deref() == Some(name)
                })
        }
    };
    let mut done: Vec<(&str, Measured)> = Vec::new();
    for c in CASES.iter().filter(|c| wanted(c.name)) {
        let ov: Vec<(String, String)> = c
            .overrides
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let mut best = f64::INFINITY;
        let mut events = 0;
        let mut delivered = 0;
        let mut sim_s = 0.0;
        for _ in 0..repeat {
            let t0 = Instant::now();
            let out = match rantcp_scenario::run_quiet(c.spec, &ov, None) {
                Ok(o) => o,
                Err(e) => {
                    println!("{:<36} failed: {e}", c.name);
                    break;
                }
            };
            let wall = t0.elapsed().as_secs_f64();
            best = best.min(wall);
            events = out.summary["events"].as_u64().unwrap_or(0);
            sim_s = out.summary["duration_s"].as_f64().unwrap_or(0.0);
            delivered = out.summary["flows"].as_array().map_or(0, |fs| {
                fs.iter()
                    .filter_map(|f| f["bytes_delivered"].as_u64())
                    .sum()
            });
        }
        if !best.is_finite() {
            continue;
        }
        let m = Measured {
            wall: best,
            events,
            delivered,
        };
        let per_mb = if delivered > 0 {
            format!("{:>11.3}", 1e3 * m.wall_per_mb())
        } else {
            format!("{:>11}", "-")
        };
        println!(
            "{:<36} {:>12} {:>10.4} {:>12.3e} {:>12.1} {per_mb}",
            c.name,
            events,
            best,
            events as f64 / best,
            delivered as f64 / 1e6
        );
        if c.name.starts_with("lte-m2m") && sim_s > 0.0 {
            println!("{:<36} {:>36.4}", "  wall s per simulated s", best / sim_s);
        }
        if let Some((_, b)) =
            proxy_baseline(c.name).and_then(|n| done.iter().find(|(d, _)| *d == n))
        {
            if b.delivered > 0 && m.delivered > 0 {
                println!(
                    "  mmPEP / no proxy: wall {:.2}x (target <= 1.20x), events {:.2}x, \
                     delivered {:.2}x, wall per MB {:.2}x, events/s {:.2}x",
                    m.wall / b.wall,
                    m.events as f64 / b.events as f64,
                    m.delivered as f64 / b.delivered as f64,
                    m.wall_per_mb() / b.wall_per_mb(),
                    (m.events as f64 / m.wall) / (b.events as f64 / b.wall)
                );
            }
        }
        done.push((c.name, m));
    }
    if only.is_none() {
        println!();
        phy::print();
    }
}
