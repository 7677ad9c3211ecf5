//! The work estimate checked before a run starts (issue 20): every built-in scenario at its
//! defaults is far below the bound; the runs a new user found taking minutes for a simulated
//! second are refused in one line that names their largest part and `--force`.

mod common;

use common::ov;
use rantcp_scenario::work::WORK_LIMIT;
use rantcp_scenario::{load, resolve_source, Run, BUILTINS};

fn run(spec: &str, pairs: &[(&str, &str)]) -> Run {
    let (src, text) = resolve_source(spec).unwrap();
    Run::new(load(&text, &src, &ov(pairs), None).unwrap(), None).unwrap()
}

#[test]
fn every_builtin_is_far_below_the_bound() {
    for b in BUILTINS {
        let r = run(&format!("builtin:{}", b.name), &[]);
        let w = r.work();
        assert!(
            w.total > 1e4 && w.total < WORK_LIMIT / 10.0,
            "{}: {w:?}",
            b.name
        );
        r.check_work().unwrap();
    }
}

#[test]
fn p2p_bulk_estimate_by_hand() {
    // 30 s; sender-router 1 Gbit/s and router-receiver 50 Mbit/s, both directions, each
    // counted as full of 1500-byte packets: (2 x 1e9 + 2 x 50e6) / 12000 x 30.
    let w = run("builtin:p2p-bulk", &[]).work();
    assert_eq!(w.total.round(), ((2e9 + 1e8) / 12000.0 * 30.0_f64).round());
    assert_eq!(w.largest.1.round(), (1e9 / 12000.0 * 30.0_f64).round());
    assert!(w.largest.0.contains("at 1 Gbit/s"), "{:?}", w.largest);
}

#[test]
fn absurd_runs_are_refused_in_one_line() {
    for (spec, pairs, part) in [
        // cc-compare's UDP reference follows the bottleneck rate (30 s at 10 Tbit/s).
        (
            "builtin:cc-compare",
            vec![("bottleneck.rate", "10 Tbps")],
            "UDP flow flow0 at 10 Tbit/s of udp",
        ),
        (
            "builtin:cc-compare",
            vec![("bottleneck.rate", "9223372036854775807bit/s")],
            "UDP flow",
        ),
        (
            "builtin:p2p-bulk",
            vec![
                ("flow.app", "udp-cbr"),
                ("flow.udp_rate", "100 Tbps"),
                ("duration", "3s"),
            ],
            "UDP flow flow0 at 100 Tbit/s",
        ),
        (
            "builtin:p2p-bulk",
            vec![
                ("access.rate", "10Gbps"),
                ("bottleneck.rate", "10Gbps"),
                ("duration", "1200s"),
            ],
            "at 10 Gbit/s",
        ),
    ] {
        let r = run(spec, &pairs);
        let e = r.check_work().unwrap_err().to_string();
        assert!(
            e.starts_with("duration: this run is too large to start: about "),
            "{e}"
        );
        assert!(e.contains(part) && e.contains("--force"), "{e}");
        assert!(!e.contains('\n'), "{e}");
    }
}

#[test]
fn links_count_at_most_what_the_sources_can_send() {
    // A 100 Tbit/s bottleneck behind the sender's 1 Gbit/s access link carries at most
    // 1 Gbit/s: the same estimate as a 1 Gbit/s bottleneck.
    let fast = run(
        "builtin:p2p-bulk",
        &[("bottleneck.rate", "100Tbps"), ("duration", "1s")],
    );
    let gig = run(
        "builtin:p2p-bulk",
        &[("bottleneck.rate", "1Gbps"), ("duration", "1s")],
    );
    assert_eq!(fast.work().total, gig.work().total);
    assert_eq!(fast.work().total, 4e9 / 12000.0);
    fast.check_work().unwrap();
}

#[test]
fn a_large_but_sane_run_is_allowed() {
    // 10 Gbit/s access and bottleneck for a minute: 2e8, a minute or two of wall time.
    let r = run(
        "builtin:p2p-bulk",
        &[
            ("access.rate", "10Gbps"),
            ("bottleneck.rate", "10Gbps"),
            ("duration", "60s"),
        ],
    );
    assert_eq!(r.work().total.round(), (4e10 / 12000.0 * 60.0_f64).round());
    r.check_work().unwrap();
}
