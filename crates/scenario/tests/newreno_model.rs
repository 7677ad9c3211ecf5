//! NewReno against theory on p2p-bulk (issue: foundation).
//!
//! * With delayed ACKs off, steady-state goodput under random loss agrees with the Padhye et
//!   al. (SIGCOMM 1998) full model, timeouts included, with b = 1 and T0 = the run's mean RTO,
//!   within ±25% at p = 1e-3 and 1e-2.
//! * At p = 0 the flow is link-limited: goodput ≥ 95% of the bottleneck's payload rate.

mod common;

use common::{goodput_between, ov};
use rantcp_scenario::run_quiet;

/// Padhye et al. 1998, eq. (32): packets per second.
fn padhye_pps(p: f64, rtt: f64, t0: f64, b: f64, w_max: f64) -> f64 {
    let denom = rtt * (2.0 * b * p / 3.0).sqrt()
        + t0 * (3.0 * (3.0 * b * p / 8.0).sqrt()).min(1.0) * p * (1.0 + 32.0 * p * p);
    (w_max / rtt).min(1.0 / denom)
}

fn check_padhye(p: f64, duration_s: u32) -> (f64, f64) {
    let p_s = format!("{p}");
    let dur = format!("{duration_s}s");
    let out = run_quiet(
        "builtin:p2p-bulk",
        &ov(&[
            ("bottleneck.loss", &p_s),
            ("flow.delayed_ack", "false"),
            ("duration", &dur),
            ("output.sample_interval", "1s"),
        ]),
        Some(1),
    )
    .unwrap();
    let f = &out.summary["flows"][0];
    let rtt = f["rtt_mean_ms"].as_f64().unwrap() / 1e3;
    // T0: the run's mean RTO; if no RTO fired, the model's timeout term is still evaluated with
    // the RTO the sender ended with (it matters little at these p).
    let t0 = f["mean_rto_ms"].as_f64().unwrap_or(200.0) / 1e3;
    let mss = 1448.0;
    let w_max = (6u64 << 20) as f64 / mss;
    let model_bps = padhye_pps(p, rtt, t0, 1.0, w_max) * mss * 8.0;
    let measured = goodput_between(&out, 10.0, duration_s as f64);
    eprintln!(
        "p={p}: goodput {:.3} Mbit/s, Padhye {:.3} Mbit/s (RTT {:.1} ms, T0 {:.0} ms, RTOs {}, fast retransmits {})",
        measured / 1e6,
        model_bps / 1e6,
        rtt * 1e3,
        t0 * 1e3,
        f["rtos"],
        f["fast_retransmits"]
    );
    (measured, model_bps)
}

#[test]
fn padhye_p_1e3() {
    let (m, model) = check_padhye(1e-3, 300);
    let ratio = m / model;
    assert!((0.75..=1.25).contains(&ratio), "goodput/model = {ratio:.3}");
}

#[test]
fn padhye_p_1e2() {
    let (m, model) = check_padhye(1e-2, 300);
    let ratio = m / model;
    assert!((0.75..=1.25).contains(&ratio), "goodput/model = {ratio:.3}");
}

#[test]
fn lossless_is_link_limited() {
    let out = run_quiet(
        "builtin:p2p-bulk",
        &ov(&[("flow.delayed_ack", "false")]),
        Some(1),
    )
    .unwrap();
    // Payload rate of a 50 Mbit/s link with 1448-byte segments in 1500-byte packets
    // (20 IP + 32 TCP header bytes with timestamps).
    let payload_rate = 50e6 * 1448.0 / 1500.0;
    let g = goodput_between(&out, 5.0, 30.0);
    eprintln!(
        "lossless steady goodput {:.3} Mbit/s of payload rate {:.3}",
        g / 1e6,
        payload_rate / 1e6
    );
    assert!(g >= 0.95 * payload_rate, "{g}");
    // And over the whole run including slow start (summary figure).
    let whole = out.summary["flows"][0]["goodput_bps"].as_f64().unwrap();
    assert!(whole >= 0.90 * payload_rate, "{whole}");
}
