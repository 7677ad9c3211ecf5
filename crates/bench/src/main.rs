//! `make bench`: wall time and events/s of the standard scenarios (simulation only: no files
//! written). Each scenario runs `REPEAT` times; the best wall time is reported, as is usual for
//! benchmarks on a shared machine. Benchmarks report; they are not timed tests.
//!
//! `RANTCP_BENCH_REPEAT=1 valgrind --tool=callgrind target/release/rantcp-bench "ackf none"`
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
    // Seed 001's mmPEP (issue 12 target: mmPEP on within 20 % of the wall time without). The
    // proxy carries about twice the traffic here (86 vs 47 Mbit/s: it delivers the NLOS
    // backlog), so its run has 1.9x the events; compare events/s, which the proxy should not
    // lower (it reads only the RLC queue per packet: RanView::rlc_queue_bytes).
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

fn main() {
    // `rantcp-bench SUBSTRING` runs only the cases whose name contains it.
    let only = std::env::args().nth(1);
    let repeat = std::env::var("RANTCP_BENCH_REPEAT")
        .ok()
        .and_then(|v| v.parse::<usize>().ok())
        .filter(|&n| n > 0)
        .unwrap_or(REPEAT);
    println!(
        "{:<36} {:>12} {:>10} {:>12}",
        "scenario", "events", "wall s", "events/s"
    );
    for c in CASES.iter().filter(|c| only.as_ref().is_none_or(|o| c.name.contains(o.as_str()))) {
        let ov: Vec<(String, String)> = c
            .overrides
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let mut best = f64::INFINITY;
        let mut events = 0;
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
        }
        if best.is_finite() {
            println!(
                "{:<36} {:>12} {:>10.4} {:>12.3e}",
                c.name,
                events,
                best,
                events as f64 / best
            );
            if c.name.starts_with("lte-m2m") && sim_s > 0.0 {
                println!("{:<36} {:>36.4}", "  wall s per simulated s", best / sim_s);
            }
        }
    }
    if only.is_none() {
        println!();
        phy::print();
    }
}
