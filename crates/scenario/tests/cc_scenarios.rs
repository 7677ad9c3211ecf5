//! Congestion controllers end to end on p2p-bulk (issue: CUBIC, HighSpeed and BBR).
//!
//! * BBR on a 100 Mbit/s path with a 40 ms RTT and a 2·BDP drop-tail buffer: steady-state
//!   goodput ≥ 90% of the link's payload rate with mean RTT ≤ 1.3 × the minimum RTT.
//! * With 1% random loss BBR keeps ≥ 80% of the link while NewReno and CUBIC fall below 30%.
//! * PROBE_RTT recurs about every 10 s.

mod common;

use common::{f64s, goodput_between, ov};
use rantcp_scenario::run_quiet;

/// 100 Mbit/s, 20 ms one way (40 ms RTT), `queue` of drop-tail buffer.
fn path(cc: &str, queue: &str, loss: &str, duration: &str) -> Vec<(String, String)> {
    ov(&[
        ("bottleneck.rate", "100Mbps"),
        ("bottleneck.delay", "20ms"),
        ("bottleneck.queue", queue),
        ("bottleneck.loss", loss),
        ("flow.cc", cc),
        ("duration", duration),
    ])
}

const PAYLOAD_100M: f64 = 100e6 * 1448.0 / 1500.0;

#[test]
fn bbr_fills_the_pipe_without_filling_the_buffer() {
    let out = run_quiet(
        "builtin:p2p-bulk",
        &path("bbr", "2bdp", "0", "40s"),
        Some(1),
    )
    .unwrap();
    let g = goodput_between(&out, 10.0, 40.0);
    let f = &out.summary["flows"][0];
    let mean = f["rtt_mean_ms"].as_f64().unwrap();
    let min = f["rtt_min_ms"].as_f64().unwrap();
    eprintln!("BBR: goodput {:.2} Mbit/s ({:.1}% of payload rate), RTT mean {mean:.1} ms / min {min:.1} ms", g / 1e6, 100.0 * g / PAYLOAD_100M);
    assert!(g >= 0.90 * PAYLOAD_100M, "goodput {g}");
    assert!(mean <= 1.3 * min, "mean RTT {mean} vs min {min}");
}

#[test]
fn under_one_percent_loss_bbr_keeps_the_link_and_loss_based_controllers_do_not() {
    let mut results = Vec::new();
    for cc in ["bbr", "newreno", "cubic"] {
        let out = run_quiet(
            "builtin:p2p-bulk",
            &path(cc, "2bdp", "0.01", "30s"),
            Some(1),
        )
        .unwrap();
        let g = goodput_between(&out, 5.0, 30.0);
        eprintln!(
            "{cc} at 1% loss: {:.2} Mbit/s ({:.1}% of the link)",
            g / 1e6,
            100.0 * g / PAYLOAD_100M
        );
        results.push((cc, g));
    }
    assert!(results[0].1 >= 0.80 * PAYLOAD_100M, "bbr {}", results[0].1);
    assert!(
        results[1].1 < 0.30 * PAYLOAD_100M,
        "newreno {}",
        results[1].1
    );
    assert!(results[2].1 < 0.30 * PAYLOAD_100M, "cubic {}", results[2].1);
}

#[test]
fn bbr_probe_rtt_recurs_about_every_ten_seconds() {
    let mut o = path("bbr", "2bdp", "0", "60s");
    o.push(("output.sample_interval".into(), "10ms".into()));
    let out = run_quiet("builtin:p2p-bulk", &o, Some(1)).unwrap();
    let t = f64s(&out, "time_s");
    let mode = f64s(&out, "bbr_mode");
    // Entry times into PROBE_RTT (mode 3).
    let mut entries = Vec::new();
    for i in 1..mode.len() {
        if mode[i] == 3.0 && mode[i - 1] != 3.0 {
            entries.push(t[i]);
        }
    }
    eprintln!("PROBE_RTT entries: {entries:?}");
    assert!(entries.len() >= 4, "{entries:?}");
    for w in entries.windows(2) {
        let gap = w[1] - w[0];
        assert!((9.0..=12.0).contains(&gap), "gap {gap} in {entries:?}");
    }
}
