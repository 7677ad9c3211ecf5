//! End-to-end integrity of the network functions (README "Network functions"), alone and in
//! pairs, across the radio scenarios, both stacks, SACK and timestamps on/off, random loss at a
//! random point (between server and core either way, the gNB's dl-ingress and dl-egress, the
//! uplink ACKs out of RLC) and blockage: a seeded property test, each case a function of its
//! number alone (25 function sets × 7 scenarios, all combinations reached in 2000 cases).
//!
//! Oracle for a finite download (`flow.bytes`, 30 s on LTE, 40 s on mmWave): every flow's
//! receiver reads exactly the file in order; the server's TCP has the whole file acknowledged
//! and never more than it sent; both ends end past the FIN exchange; no RST (none of these
//! functions is meant to send one in a download; a RST from a closed receiver answering a late
//! duplicate is allowed, see `check_sets`); no panic. A split host (`functions.split`) ends the
//! server's connection itself: what it promises is what `semantics[]` checks (I-TCP: none, so
//! only the byte stream is asserted; ES-TCP and AS-TCP: "holds", the session complete). On
//! lte-m2m (connections the devices open) every device completes at least 90 % of the
//! transactions it completes without the function, lossless (the half-open bug completed none).
//! A failing case is run again without its functions, to tell the function's fault from the
//! path's.
//!
//! Run in release mode: `cargo test --release -p rantcp-scenario --test functions_integrity`.
//! `INTEGRITY_CASES=N` runs N cases, `INTEGRITY_CASE=K` only case K, and `INTEGRITY_PCAP=DIR`
//! writes its captures (to replay and look at a failure).

use rantcp_core::Rng;
use rantcp_scenario::{load, resolve_source, Run, RunOutput};
use rantcp_tcp::State;
use serde_json::Value;
use std::time::Instant;

/// Cases in `cargo test`: 2000 take 10-16 s in release mode on this (loaded) machine.
const CASES: u64 = 2000;

/// Cases that fail for a cause found and not fixed: the test checks they still fail (so the
/// list stays true) and that every other case holds. Before case 1417, the last were 9 cases of
/// radio-aware TCP without SACK on `radio-aware` (45 KB RLC buffer), which did not finish in
/// 30 s: on an RTO the controller kept its radio window while feedback was fresh, so go-back-N
/// resent up to the whole window (250 KB in case 1705) into the RLC buffer, which dropped most
/// of it, and without SACK each loss waited for the next, backed-off RTO. The controller now
/// uses the RFC 5681 §3.1 loss window after a timeout (crates/tcp/src/cc/radio_aware.rs).
const KNOWN: [(u64, &str); 1] = [(
    1417,
    "es-tcp without SACK or timestamps, 1.18 % loss: the split host's FIN to ue1 (10.78 s) is \
     lost and goes again only at 37.9 s, its timer backed off by three timeouts with no RTT \
     sample since (RFC 6298 §5.5, Karn: every ACK covered retransmitted data); the run ends at \
     30 s. Fails since the slow start after a timeout counts 1 SMSS per ACK (RFC 3465 §2.3), \
     which moved the losses.",
)];

/// A network function, or a pair of them, as `--set` overrides.
#[derive(Clone, Copy, Debug)]
enum Fun {
    None,
    Proxy(&'static str),
    AckFilter(&'static str),
    Split(&'static str),
    RstTracker,
    CloseCoupled,
    RadioFeedback,
    /// Seed 002's close coupling fed by a co-located sender without congestion control.
    CloseCoupledSplit,
}

impl Fun {
    fn sets(self) -> Vec<(&'static str, String)> {
        match self {
            Fun::None => vec![],
            Fun::Proxy(m) => vec![("functions.proxy.mode", m.into())],
            Fun::AckFilter(m) => {
                let mut v = vec![("functions.ack_filter.mode", m.into())];
                match m {
                    "passive" => v.push(("functions.ack_filter.ratio", "0.5".into())),
                    "active" | "hybrid" => v.push(("functions.ack_filter.threshold", "3".into())),
                    _ => {}
                }
                v
            }
            Fun::Split(m) => vec![("functions.split.mode", m.into())],
            Fun::RstTracker => vec![("functions.rst_tracker.enabled", "true".into())],
            Fun::CloseCoupled => vec![("functions.close_coupled.enabled", "true".into())],
            Fun::RadioFeedback => vec![
                ("functions.radio_feedback.enabled", "true".into()),
                ("flow.cc", "radio-aware".into()),
            ],
            Fun::CloseCoupledSplit => vec![
                ("functions.close_coupled.enabled", "true".into()),
                ("functions.split.mode", "i-tcp".into()),
                ("functions.split.ran_cc", "none".into()),
            ],
        }
    }
    fn split(self) -> Option<&'static str> {
        match self {
            Fun::Split(m) => Some(m),
            Fun::CloseCoupledSplit => Some("i-tcp"),
            _ => None,
        }
    }
}

const SINGLES: [Fun; 16] = [
    Fun::None,
    Fun::Proxy("pep"),
    Fun::Proxy("mmpep"),
    Fun::AckFilter("hybrid-opt"),
    Fun::AckFilter("granted"),
    Fun::AckFilter("highest"),
    Fun::AckFilter("passive"),
    Fun::AckFilter("active"),
    Fun::AckFilter("hybrid"),
    Fun::Split("i-tcp"),
    Fun::Split("es-tcp"),
    Fun::Split("as-tcp"),
    Fun::RstTracker,
    Fun::CloseCoupled,
    Fun::RadioFeedback,
    Fun::CloseCoupledSplit,
];

/// Pairs that act on different parts of the path: a downlink function at the base station or
/// the core with the UE's uplink ACK filter, the RST tracker, the radio feedback.
const PAIRS: [(Fun, Fun); 9] = [
    (Fun::Proxy("mmpep"), Fun::AckFilter("hybrid-opt")),
    (Fun::Proxy("pep"), Fun::RstTracker),
    (Fun::Proxy("pep"), Fun::RadioFeedback),
    (Fun::Split("es-tcp"), Fun::AckFilter("granted")),
    (Fun::Split("as-tcp"), Fun::RstTracker),
    (Fun::Split("i-tcp"), Fun::Proxy("mmpep")),
    (Fun::CloseCoupled, Fun::AckFilter("highest")),
    (Fun::RadioFeedback, Fun::AckFilter("hybrid-opt")),
    (Fun::RstTracker, Fun::AckFilter("active")),
];

const SCENARIOS: [&str; 7] = [
    "lte-cell",
    "lte-7cell",
    "mmwave-blockage",
    "mmwave-urban",
    "radio-aware",
    "split-tcp",
    "lte-m2m",
];

struct Case {
    scenario: &'static str,
    funs: Vec<Fun>,
    sets: Vec<(&'static str, String)>,
    /// Bytes per download (0 on lte-m2m).
    file: u64,
    seed: u64,
}

impl Case {
    fn describe(&self) -> String {
        let s: Vec<String> = self.sets.iter().map(|(k, v)| format!("{k}={v}")).collect();
        format!("{} seed {}: {}", self.scenario, self.seed, s.join(" "))
    }
    fn split(&self) -> Option<&'static str> {
        self.funs.iter().find_map(|f| f.split())
    }
}

fn case(k: u64) -> Case {
    let mut rng = Rng::for_entity(k, "test/functions-integrity");
    let pick = |rng: &mut Rng, n: usize| rng.below(n as u64) as usize;
    let scenario = SCENARIOS[pick(&mut rng, SCENARIOS.len())];
    let funs = if rng.uniform() < 0.6 {
        vec![SINGLES[pick(&mut rng, SINGLES.len())]]
    } else {
        let (a, b) = PAIRS[pick(&mut rng, PAIRS.len())];
        vec![a, b]
    };
    let mmwave = scenario.starts_with("mmwave");
    let m2m = scenario == "lte-m2m";
    let mut sets: Vec<(&'static str, String)> = Vec::new();
    let (duration, file) = if m2m {
        ("3s", 0)
    } else if mmwave {
        ("40s", 2_000_000 + 500_000 * rng.below(9))
    } else {
        ("30s", 300_000 + 100_000 * rng.below(13))
    };
    sets.push(("duration", duration.into()));
    if m2m {
        sets.push(("ues", "5".into()));
    } else {
        sets.push(("flow.bytes", format!("{file}B")));
        let ues = match scenario {
            "lte-cell" | "lte-7cell" | "radio-aware" => 1 + rng.below(3),
            _ => 1,
        };
        sets.push(("ues", ues.to_string()));
    }
    if matches!(scenario, "lte-cell" | "radio-aware") {
        // Excluded: UEs dropped out to the 500 m cell edge. There a UE can sit at −12 dB mean
        // SINR (8 kbit/s of downlink, 20 of 21 packets lost in 30 s in one case), and whether
        // a file finishes is the draw's luck, not the functions' integrity.
        sets.push(("ue.cell_radius_m", "250".into()));
    }
    if scenario == "split-tcp" {
        // The split network only (no "e2e" twin); without a split function, plain TCP.
        sets.push(("baseline", "false".into()));
        if !funs.iter().any(|f| f.split().is_some()) {
            sets.push(("functions.split.mode", "off".into()));
        }
    }
    sets.push(("flow.stack", ["linux", "rfc"][pick(&mut rng, 2)].into()));
    sets.push(("flow.sack", ["true", "false"][pick(&mut rng, 2)].into()));
    sets.push((
        "flow.timestamps",
        ["true", "false"][pick(&mut rng, 2)].into(),
    ));
    for f in &funs {
        sets.extend(f.sets());
    }
    // Random loss at a random point (none on lte-m2m: its oracle compares with a lossless run
    // without the function).
    let loss = 0.002 + 0.018 * rng.uniform();
    let point = if m2m { 0 } else { pick(&mut rng, 6) };
    match point {
        0 => sets.push(("functions.impair.loss", "0".into())),
        1 => {
            // Between the server and the core, either direction.
            sets.push(("functions.impair.point", "forward".into()));
            sets.push(("functions.impair.node", "core".into()));
            sets.push(("functions.impair.direction", "data".into()));
        }
        2 => {
            sets.push(("functions.impair.point", "dl-ingress".into()));
            sets.push(("functions.impair.direction", "data".into()));
        }
        3 => {
            sets.push(("functions.impair.point", "dl-egress".into()));
            sets.push(("functions.impair.direction", "data".into()));
        }
        4 => {
            // The uplink ACKs, out of the base station's RLC.
            sets.push(("functions.impair.point", "ul-egress".into()));
            sets.push(("functions.impair.direction", "ack".into()));
        }
        _ => {
            // The uplink ACKs between the core and the server.
            sets.push(("functions.impair.point", "forward".into()));
            sets.push(("functions.impair.node", "core".into()));
            sets.push(("functions.impair.direction", "ack".into()));
        }
    }
    if point > 0 {
        sets.push(("functions.impair.loss", format!("{loss:.4}")));
    }
    if scenario == "mmwave-blockage" {
        sets.push(("ue.los_duration", format!("{}ms", 300 + rng.below(700))));
        sets.push(("ue.nlos_duration", format!("{}ms", 200 + rng.below(600))));
    }
    Case {
        scenario,
        funs,
        sets,
        file,
        seed: 1 + rng.below(1000),
    }
}

/// What a run ended with: the summary and, per flow, the sender's and receiver's TCP state
/// and whether a RST closed either.
struct Ran {
    out: RunOutput,
    ends: Vec<Ends>,
}

struct Ends {
    tx: Option<State>,
    rx: Option<State>,
    reset: (bool, bool),
    /// The sender's payload bytes sent once (retransmissions not counted).
    sent: u64,
}

fn run(scenario: &str, sets: &[(&'static str, String)], seed: u64) -> Result<Ran, String> {
    let o: Vec<(String, String)> = sets
        .iter()
        .map(|(a, b)| (a.to_string(), b.clone()))
        .collect();
    let (src, text) = resolve_source(&format!("builtin:{scenario}")).map_err(|e| e.to_string())?;
    // INTEGRITY_PCAP=DIR: captures of every interface (to look at a failing case; the run
    // without the functions is then skipped, it would overwrite them).
    let pcap = std::env::var("INTEGRITY_PCAP").ok();
    let mut o = o;
    if pcap.is_some() {
        o.push(("output.pcap".into(), "true".into()));
    }
    let cfg = load(&text, &src, &o, Some(seed)).map_err(|e| e.to_string())?;
    let mut run = Run::new(cfg, pcap.as_deref().map(std::path::Path::new))?;
    run.run_to_end()?;
    let mut ends = Vec::new();
    for (_, sim) in run.sims() {
        for f in 0..sim.flow_count() {
            let sent = sim
                .flow_tcp(f)
                .0
                .map_or(0, |t| t.bytes_sent - t.retrans_bytes);
            ends.push(Ends {
                tx: sim.flow_sender_state(f),
                rx: sim.flow_receiver_state(f),
                reset: sim.flow_reset(f),
                sent,
            });
        }
    }
    Ok(Ran {
        out: run.finish(0.0)?,
        ends,
    })
}

fn m2m_completed(out: &RunOutput) -> Vec<u64> {
    out.summary["flows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["m2m_completed"].as_u64().unwrap())
        .collect()
}

/// The case's overrides without its network functions (the impairment and the rest kept).
fn without_functions(c: &Case) -> Vec<(&'static str, String)> {
    let mut v: Vec<(&'static str, String)> = c
        .sets
        .iter()
        .filter(|(k, _)| {
            (!k.starts_with("functions.") || k.starts_with("functions.impair.")) && *k != "flow.cc"
        })
        .cloned()
        .collect();
    if c.scenario == "split-tcp" {
        v.push(("functions.split.mode", "off".into()));
    }
    v
}

/// The oracle: an empty list when the case holds, else what failed.
fn check(c: &Case) -> Vec<String> {
    let bad = check_sets(c, &c.sets, true);
    if bad.is_empty() || c.scenario == "lte-m2m" || std::env::var("INTEGRITY_PCAP").is_ok() {
        return bad;
    }
    // Tell a function's failure from the path's: the same case without the functions.
    let base = without_functions(c);
    let mut b = check_sets(c, &base, false);
    b.retain(|x| !x.starts_with("semantics"));
    let mut bad = bad;
    bad.push(if b.is_empty() {
        "without the functions: holds".into()
    } else {
        format!("without the functions too: {}", b.join("; "))
    });
    bad
}

fn check_sets(c: &Case, sets: &[(&'static str, String)], with_split: bool) -> Vec<String> {
    let mut bad = Vec::new();
    let r = match run(c.scenario, sets, c.seed) {
        Ok(r) => r,
        Err(e) => return vec![format!("run failed: {e}")],
    };
    let s = &r.out.summary;
    if c.scenario == "lte-m2m" {
        let base = run(c.scenario, &without_functions(c), c.seed).expect("baseline runs");
        let (got, want) = (m2m_completed(&r.out), m2m_completed(&base.out));
        if want.iter().any(|&n| n == 0) {
            bad.push(format!("baseline completes nothing: {want:?}"));
        }
        // A function may shift the devices' timing by a transaction or two in 3 s (a split
        // host answers sooner), never stop them: the half-open bug completed none.
        if got.iter().zip(&want).any(|(&g, &w)| 10 * g < 9 * w) {
            bad.push(format!(
                "m2m transactions {got:?}, without the function {want:?}"
            ));
        }
        return bad;
    }
    let flows = s["flows"].as_array().unwrap();
    for (i, f) in flows.iter().enumerate() {
        let name = f["name"].as_str().unwrap_or("?");
        let delivered = f["bytes_delivered"].as_u64().unwrap();
        let acked = f["sender_acked_bytes"].as_u64().unwrap_or(0);
        if delivered != c.file {
            bad.push(format!("{name}: delivered {delivered} B of {}", c.file));
        }
        if acked != c.file {
            bad.push(format!("{name}: sender acked {acked} B of {}", c.file));
        }
        let Ends {
            tx,
            rx,
            reset: (tx_rst, rx_rst),
            sent,
        } = r.ends[i];
        if acked > sent {
            bad.push(format!("{name}: sender acked {acked} B, sent {sent} B"));
        }
        if !matches!(tx, Some(State::TimeWait | State::Closed)) {
            bad.push(format!("{name}: sender ends in {tx:?}"));
        }
        if !matches!(rx, Some(State::TimeWait | State::Closed)) {
            bad.push(format!("{name}: receiver ends in {rx:?}"));
        }
        // A RST the sender gets after the whole exchange is TCP doing its job: the receiver
        // closed (its FIN acknowledged, LAST-ACK -> CLOSED) and answers a late duplicate ACK
        // of the sender's (in TIME-WAIT) with a RST (RFC 9293 §3.10.7.1, "If the state is
        // CLOSED ... a reset is sent in response to any incoming segment except another
        // reset"). Any other RST fails the case.
        let late = tx_rst
            && !rx_rst
            && rx == Some(State::Closed)
            && acked == c.file
            && delivered == c.file;
        if (tx_rst && !late) || rx_rst {
            bad.push(format!(
                "{name}: reset (sender {tx_rst}, receiver {rx_rst})"
            ));
        }
    }
    if let Some(mode) = c.split().filter(|_| with_split) {
        let sem = s["semantics"].as_array().cloned().unwrap_or_default();
        if sem.len() != flows.len() {
            bad.push(format!(
                "semantics[] has {} of {} flows",
                sem.len(),
                flows.len()
            ));
        }
        let want = if mode == "i-tcp" { "none" } else { "holds" };
        for x in &sem {
            if x["verdict"] != want
                || x["fh_session_complete"] != Value::Bool(true)
                || x["mh_received"].as_u64() != Some(c.file)
            {
                bad.push(format!("semantics {x}"));
            }
        }
    }
    bad
}

#[test]
fn test_functions_keep_the_byte_stream_intact() {
    let n: u64 = std::env::var("INTEGRITY_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(CASES);
    let only: Option<u64> = std::env::var("INTEGRITY_CASE")
        .ok()
        .and_then(|v| v.parse().ok());
    let t0 = Instant::now();
    let mut failures = Vec::new();
    let ks: Vec<u64> = match only {
        Some(k) => vec![k],
        None => (0..n).collect(),
    };
    for k in ks {
        let c = case(k);
        let t = Instant::now();
        let bad = match std::panic::catch_unwind(|| check(&c)) {
            Ok(b) => b,
            Err(e) => vec![format!(
                "panic: {}",
                e.downcast_ref::<String>()
                    .cloned()
                    .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
                    .unwrap_or_default()
            )],
        };
        println!(
            "case {k} ({:.2} s): {:?} {}{}",
            t.elapsed().as_secs_f64(),
            c.funs,
            c.describe(),
            if bad.is_empty() { "" } else { "  FAILED" }
        );
        for b in &bad {
            println!("    {b}");
        }
        let known = KNOWN.iter().find(|(n, _)| *n == k);
        match (known, bad.is_empty()) {
            (None, false) => {
                failures.push(format!("case {k}: {} -> {}", c.describe(), bad.join("; ")))
            }
            (Some((_, why)), true) => {
                failures.push(format!("case {k} holds now: take it off KNOWN ({why})"))
            }
            (Some((_, why)), false) => println!("    known: {why}"),
            (None, true) => {}
        }
    }
    println!("{n} cases in {:.1} s", t0.elapsed().as_secs_f64());
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
