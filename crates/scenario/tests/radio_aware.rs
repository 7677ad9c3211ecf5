//! Seed 002's loose coupling end to end on builtin:radio-aware: the base station's reports
//! reach radio-aware senders (and are counted), stale feedback hands the window back to the
//! loss-based controller, bad settings are refused; and the bursty traffic models from config.

mod common;

use common::ov;
use rantcp_scenario::{run_quiet, RunOutput};
use serde_json::Value;

fn run(set: &[(&str, &str)]) -> RunOutput {
    run_quiet("builtin:radio-aware", &ov(set), None).unwrap()
}

fn flows(out: &RunOutput) -> &Vec<Value> {
    out.summary["flows"].as_array().unwrap()
}

#[test]
fn reports_reach_radio_aware_senders_every_period() {
    let out = run(&[
        ("duration", "3s"),
        ("ues", "2"),
        ("flow.cc", "radio-aware"),
        ("functions.radio_feedback.enabled", "true"),
    ]);
    let fb = &out.summary["functions"]["radio_feedback"];
    // Every 10 ms from 10 ms to 3 s inclusive for each of the 2 flows: 2 × 300 reports of 44 bytes.
    assert_eq!(fb["reports"], 600);
    assert_eq!(fb["bytes_sent"], 600 * 44);
    for f in flows(&out) {
        // Those sampled up to 2.99 s have arrived (10 ms delay).
        assert_eq!(f["feedback_received"], 299, "{}", f["name"]);
        // All but the reports before the first CQI (no rate) were used.
        let used = f["radio_reports_used"].as_u64().unwrap();
        assert!((290..=299).contains(&used), "{used}");
        assert_eq!(f["radio_fallbacks"], 0);
        assert!(f["goodput_mbps"].as_f64().unwrap() > 1.0);
    }
    // The series of reports.
    assert!(out.tables.iter().any(|t| t.name == "radio_feedback"));
}

#[test]
fn stale_feedback_falls_back_to_the_loss_based_controller() {
    let base = [
        ("duration", "3s"),
        ("ues", "1"),
        ("flow.cc", "radio-aware"),
        ("functions.radio_feedback.enabled", "true"),
    ];
    let mut set = base.to_vec();
    set.push(("functions.radio_feedback.stop", "1s"));
    let out = run(&set);
    let f = &flows(&out)[0];
    assert_eq!(f["feedback_received"], 99);
    assert_eq!(
        f["radio_fallbacks"], 1,
        "once, 100 ms after the last report"
    );
    // Without feedback at all the controller never leaves the fallback: the run is the
    // fallback's (CUBIC, the Linux stack's), byte for byte.
    let none = run(&[("duration", "3s"), ("ues", "1"), ("flow.cc", "radio-aware")]);
    let cubic = run(&[("duration", "3s"), ("ues", "1"), ("flow.cc", "cubic")]);
    let (a, b) = (&flows(&none)[0], &flows(&cubic)[0]);
    assert_eq!(a["radio_reports_used"], 0);
    assert_eq!(a["bytes_delivered"], b["bytes_delivered"]);
    assert_eq!(a["retransmitted_segments"], b["retransmitted_segments"]);
}

#[test]
fn radio_aware_settings_are_checked() {
    for (path, value, needle) in [
        (
            "flow.radio_aware.fallback",
            "radio-aware",
            "flow.radio_aware.fallback",
        ),
        (
            "flow.radio_aware.stale_after",
            "0s",
            "flow.radio_aware.stale_after",
        ),
        ("flow.radio_aware.variant", "queue", "variant"),
        (
            "functions.radio_feedback.period",
            "0s",
            "functions.radio_feedback.period",
        ),
        ("radio.tx_diversity", "3", "radio.tx_diversity"),
        ("flow.burst_count", "0", "flow.burst_count"),
    ] {
        let mut set = vec![(path, value)];
        if path == "flow.burst_count" {
            set.push(("flow.app", "bursts"));
        }
        let e = run_quiet("builtin:radio-aware", &ov(&set), None)
            .err()
            .unwrap();
        assert!(e.to_string().contains(needle), "{path}: {e}");
    }
}

#[test]
fn a_single_short_burst_is_timed_from_config() {
    let out = run(&[
        ("duration", "4s"),
        ("ues", "1"),
        ("flow.app", "bursts"),
        ("flow.burst_size", "0.5MB"),
        ("flow.burst_count", "1"),
    ]);
    let f = &flows(&out)[0];
    assert_eq!(f["app"], "bursts");
    assert_eq!(f["bursts_arrived"], 1);
    assert_eq!(f["bursts_delivered"], 1);
    assert_eq!(f["bytes_delivered"], 500_000);
    let lat = f["burst_latency_mean_s"].as_f64().unwrap();
    assert_eq!(f["burst_latency_max_s"].as_f64().unwrap(), lat);
    // 4 Mbit over a 20 MHz cell: well under the run, and longer than at the PHY peak.
    assert!(lat > 4e6 / 75e6 && lat < 3.0, "{lat}");
    let tput = f["burst_tput_mean"].as_f64().unwrap();
    assert!((tput - 4.0 / lat).abs() < 1e-3, "{tput}");
}

#[test]
fn ftp_model_1_from_config() {
    let out = run(&[
        ("duration", "5s"),
        ("ues", "2"),
        ("flow.app", "ftp1"),
        ("flow.burst_size", "100KB"),
        ("flow.burst_rate", "4"),
    ]);
    for f in flows(&out) {
        assert_eq!(f["app"], "ftp1");
        let n = f["bursts_arrived"].as_u64().unwrap();
        // 1 + Poisson(20) arrivals.
        assert!((6..=40).contains(&n), "{n}");
        assert!(f["bursts_delivered"].as_u64().unwrap() + 2 >= n);
        let (p50, p95) = (
            f["burst_latency_p50_s"].as_f64().unwrap(),
            f["burst_latency_p95_s"].as_f64().unwrap(),
        );
        assert!(p50 <= p95 && p95 <= f["burst_latency_max_s"].as_f64().unwrap());
    }
}

#[test]
fn close_coupling_pulls_what_is_granted_without_drops_and_in_order() {
    let set = [
        ("duration", "5s"),
        ("ues", "1"),
        ("functions.close_coupled.enabled", "true"),
    ];
    let out = run(&set);
    let cc = &out.summary["functions"]["close_coupled"];
    let n = |k: &str| cc[k].as_u64().unwrap();
    // Nothing dropped anywhere below IP, and TCP never had to retransmit: the bytes the MAC
    // pulled went out in the order they arrived.
    assert_eq!(n("ip_buffer_drops"), 0);
    let ue = &out.summary["radio"]["ues"][0];
    assert_eq!(ue["rlc_dl_sdus_dropped"], 0);
    let f = &flows(&out)[0];
    assert_eq!(f["retransmitted_segments"], 0);
    // Every grant's pull covers its room and overshoots it by less than one packet (RLC
    // segments the overshoot into the next block): room ≤ pulled < room + pulls × 1500.
    let (room, pulled, pulls) = (n("pull_room_bytes"), n("pulled_bytes"), n("pulls"));
    assert!(pulled >= room, "{pulled} < {room}");
    assert!(
        pulled < room + pulls * 1500,
        "{pulled} vs {room} + {pulls} packets"
    );
    // What was pulled is what the UE's RLC received from above, and it was delivered but for
    // the blocks in flight at the end.
    assert_eq!(ue["dl_nf_emitted"].as_u64().unwrap(), n("pulled_packets"));
    assert_eq!(ue["dl_packets_in"], 0, "nothing bypassed the IP buffer");
    let delivered = ue["dl_packets_delivered"].as_u64().unwrap();
    assert!(delivered <= n("pulled_packets") && delivered + 100 >= n("pulled_packets"));
    // Held = pulled + still in the buffer at the end.
    assert!(n("held_packets") >= n("pulled_packets"));
    // Full-buffer goodput within a few % of the air link's rate on the same drop.
    let udp = run(&[
        ("duration", "5s"),
        ("ues", "1"),
        ("traffic", "udp-saturation"),
    ]);
    let (tcp, link) = (
        f["goodput_mbps"].as_f64().unwrap(),
        flows(&udp)[0]["goodput_mbps"].as_f64().unwrap(),
    );
    assert!(tcp > 0.9 * link && tcp <= link * 1.01, "{tcp} of {link}");
}

/// Seed 002 §3.2's co-located sender: an I-TCP host at the core whose radio leg runs without
/// congestion control ("none"), feeding the eNB's IP buffer from which the MAC grants pull.
fn co_located(extra: &[(&'static str, &'static str)]) -> RunOutput {
    let mut set = vec![
        ("ues", "1"),
        ("functions.close_coupled.enabled", "true"),
        ("functions.split.mode", "i-tcp"),
        ("functions.split.at", "core"),
        ("functions.split.ran_cc", "none"),
        ("functions.split.buffer", "16MB"),
    ];
    set.extend_from_slice(extra);
    run(&set)
}

#[test]
fn co_located_sender_fills_the_ip_buffer_and_the_grants_drain_it_without_drops() {
    let out = co_located(&[("duration", "5s")]);
    let cc = &out.summary["functions"]["close_coupled"];
    let n = |k: &str| cc[k].as_u64().unwrap();
    assert_eq!(n("ip_buffer_drops"), 0);
    let ue = &out.summary["radio"]["ues"][0];
    assert_eq!(ue["rlc_dl_sdus_dropped"], 0);
    assert_eq!(ue["dl_packets_in"], 0, "nothing bypassed the IP buffer");
    // Without a congestion window the radio leg sends what the UE's window admits: the IP
    // buffer holds far more than the 45 KB RLC buffer ever could.
    assert!(
        n("ip_buffer_max_bytes") > 1_000_000,
        "{}",
        n("ip_buffer_max_bytes")
    );
    let (room, pulled, pulls) = (n("pull_room_bytes"), n("pulled_bytes"), n("pulls"));
    assert!(pulled >= room && pulled < room + pulls * 1500);
    // The air link carries the flow.
    let udp = run(&[
        ("duration", "5s"),
        ("ues", "1"),
        ("traffic", "udp-saturation"),
    ]);
    let (tcp, link) = (
        flows(&out)[0]["goodput_mbps"].as_f64().unwrap(),
        flows(&udp)[0]["goodput_mbps"].as_f64().unwrap(),
    );
    assert!(tcp > 0.9 * link && tcp <= link * 1.01, "{tcp} of {link}");
}

#[test]
fn split_ran_cc_names_the_allowed_controllers() {
    let Err(e) = run_quiet(
        "builtin:radio-aware",
        &ov(&[
            ("functions.split.mode", "i-tcp"),
            ("functions.split.ran_cc", "vegas"),
        ]),
        None,
    ) else {
        panic!("ran_cc = \"vegas\" was accepted");
    };
    let err = e.to_string();
    assert!(err.contains("functions.split.ran_cc"), "{err}");
    assert!(err.contains("none"), "{err}");
}
