//! Applications on p2p-bulk: limited bulk transfer, file download, UDP constant bit rate,
//! several flows sharing the bottleneck.

mod common;

use common::ov;
use rantcp_scenario::run_quiet;

#[test]
fn limited_bulk_delivers_exactly_n_bytes() {
    let out = run_quiet(
        "builtin:p2p-bulk",
        &ov(&[("flow.bytes", "3MB"), ("duration", "5s")]),
        Some(1),
    )
    .unwrap();
    assert_eq!(
        out.summary["flows"][0]["bytes_delivered"].as_u64(),
        Some(3_000_000)
    );
}

#[test]
fn download_reports_its_time() {
    // 1 MB at 50 Mbit/s with a 40 ms RTT: at least the serialisation time (0.16 s) plus one
    // RTT for the request/response, and well under a second on a clean path.
    let out = run_quiet(
        "builtin:p2p-bulk",
        &ov(&[
            ("flow.app", "download"),
            ("flow.bytes", "1MB"),
            ("duration", "5s"),
        ]),
        Some(1),
    )
    .unwrap();
    let f = &out.summary["flows"][0];
    assert_eq!(f["bytes_delivered"].as_u64(), Some(1_000_000));
    let t = f["download_time_s"].as_f64().unwrap();
    assert!(t > 0.16 + 0.04 && t < 1.0, "download time {t}");
}

#[test]
fn udp_cbr_at_link_rate_gets_the_link() {
    let out = run_quiet(
        "builtin:p2p-bulk",
        &ov(&[("flow.app", "udp-cbr"), ("duration", "5s")]),
        Some(1),
    )
    .unwrap();
    let f = &out.summary["flows"][0];
    // Payload rate of 1500-byte IP packets: 1472 / 1500 of 50 Mbit/s, minus the first 20 ms
    // in flight.
    let g = f["goodput_bps"].as_f64().unwrap();
    let expect = 50e6 * 1472.0 / 1500.0 * (5.0 - 0.02) / 5.0;
    assert!((g / expect - 1.0).abs() < 0.01, "{g} vs {expect}");
    assert_eq!(f["udp_loss_ratio"].as_f64(), Some(0.0));
}

#[test]
fn udp_cbr_above_link_rate_loses_the_excess() {
    let out = run_quiet(
        "builtin:p2p-bulk",
        &ov(&[
            ("flow.app", "udp-cbr"),
            ("flow.udp_rate", "100Mbps"),
            ("duration", "5s"),
        ]),
        Some(1),
    )
    .unwrap();
    let loss = out.summary["flows"][0]["udp_loss_ratio"].as_f64().unwrap();
    assert!((loss - 0.5).abs() < 0.02, "{loss}");
}

#[test]
fn parallel_flows_share_the_bottleneck() {
    let out = run_quiet(
        "builtin:p2p-bulk",
        &ov(&[("flow.count", "4"), ("duration", "30s")]),
        Some(1),
    )
    .unwrap();
    let g: Vec<f64> = out.summary["flows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["goodput_bps"].as_f64().unwrap())
        .collect();
    let total: f64 = g.iter().sum();
    assert!(total > 0.9 * 50e6 * 1448.0 / 1500.0, "total {total}");
    // Jain's fairness index over the four flows.
    let jain = total * total / (g.len() as f64 * g.iter().map(|x| x * x).sum::<f64>());
    assert!(jain > 0.8, "Jain {jain}: {g:?}");
}

#[test]
fn an_application_rate_below_the_bottleneck_sets_the_goodput() {
    // 20 Mbit/s of 1448-byte writes over the 50 Mbit/s bottleneck: the application, not TCP or
    // the link, is the limit, and the bottleneck queue stays empty (RTT = the 40 ms path).
    let out = run_quiet(
        "builtin:p2p-bulk",
        &ov(&[("flow.app_rate", "20Mbps"), ("duration", "10s")]),
        Some(1),
    )
    .unwrap();
    let f = &out.summary["flows"][0];
    let g = f["goodput_bps"].as_f64().unwrap();
    assert!(g > 19.5e6 && g <= 20.0e6, "goodput {g}");
    assert_eq!(f["app_writes_refused"].as_u64(), Some(0));
    let rtt = (
        f["rtt_mean_ms"].as_f64().unwrap(),
        f["rtt_max_ms"].as_f64().unwrap(),
    );
    assert!(rtt.0 < 42.0, "rtt {rtt:?}");
    // Without an application rate the same run fills the bottleneck.
    let full = run_quiet("builtin:p2p-bulk", &ov(&[("duration", "10s")]), Some(1)).unwrap();
    assert!(full.summary["flows"][0].get("app_writes").is_none());
    assert!(full.summary["flows"][0]["goodput_bps"].as_f64().unwrap() > 40e6);
}
