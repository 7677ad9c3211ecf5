//! `summary.json` → `flows[].slow_start_exit_*`: the end of the first slow start, what ended it
//! and the cwnd then (the figures `_emu_fidelity --repeats` sets beside the kernel's
//! `TcpExtTCPHystart*` counters), on p2p-bulk (50 Mbit/s, 40 ms RTT, a 1-BDP drop-tail queue:
//! BDP ≈ 173 segments of 1448 bytes) with the Linux stack profile.
//!
//! Checked against what each controller must do there and against the flows time series
//! (`ssthresh_bytes` is null until the sender first sets ssthresh): the first sample with an
//! ssthresh is the first at or after the exit.

mod common;

use common::{f64s, ov};
use rantcp_scenario::{run_quiet, RunOutput};

const MSS: f64 = 1448.0;
const BDP_SEGMENTS: f64 = 50e6 / 8.0 * 0.040 / MSS;

fn run(cc: &str, extra: &[(&str, &str)], duration: &str) -> RunOutput {
    let mut pairs = vec![
        ("flow.stack", "linux"),
        ("flow.cc", cc),
        ("duration", duration),
        ("output.sample_interval", "10ms"),
    ];
    pairs.extend_from_slice(extra);
    run_quiet("builtin:p2p-bulk", &ov(&pairs), Some(1)).unwrap()
}

/// (cause, cwnd in segments, seconds after the flow's start).
fn exit(out: &RunOutput) -> (Option<String>, Option<f64>, Option<f64>) {
    let f = &out.summary["flows"][0];
    (
        f["slow_start_exit_cause"].as_str().map(str::to_owned),
        f["slow_start_exit_cwnd_segments"].as_f64(),
        f["slow_start_exit_s"].as_f64(),
    )
}

/// Time of the first sample with an ssthresh, and that ssthresh in segments.
fn first_ssthresh(out: &RunOutput) -> (f64, f64) {
    let t = f64s(out, "time_s");
    let ss = f64s(out, "ssthresh_bytes");
    let i = ss
        .iter()
        .position(|x| !x.is_nan())
        .expect("ssthresh never set");
    (t[i], ss[i] / MSS)
}

#[test]
fn cubic_leaves_by_hystart_before_the_queue_overflows() {
    let out = run("cubic", &[], "3s");
    let (cause, cwnd, at) = exit(&out);
    let (cwnd, at) = (cwnd.unwrap(), at.unwrap());
    let cause = cause.unwrap();
    eprintln!("cubic: {cause} at cwnd {cwnd:.1} segments, {at:.3} s");
    assert!(
        cause == "hystart-train" || cause == "hystart-delay",
        "{cause}"
    );
    // HyStart only runs from 16 segments (tcp_cubic.c hystart_low_window); the queue overflows
    // at about 2 BDP in flight.
    assert!((16.0..2.0 * BDP_SEGMENTS).contains(&cwnd), "{cwnd}");
    // HyStart sets ssthresh = cwnd and cwnd stays: the first sampled ssthresh is that cwnd.
    let (t_ss, ss) = first_ssthresh(&out);
    assert!(
        t_ss >= at - 1e-9 && t_ss < at + 0.010 + 1e-9,
        "ssthresh first sampled at {t_ss}, exit at {at}"
    );
    assert!(
        (ss - cwnd).abs() < 1e-6,
        "ssthresh {ss} vs exit cwnd {cwnd}"
    );
}

#[test]
fn newreno_and_cubic_without_hystart_leave_on_the_first_loss() {
    for (cc, extra) in [
        ("newreno", &[][..]),
        ("cubic", &[("flow.hystart", "off")][..]),
    ] {
        let out = run(cc, extra, "3s");
        let (cause, cwnd, at) = exit(&out);
        let (cwnd, at) = (cwnd.unwrap(), at.unwrap());
        eprintln!("{cc} {extra:?}: {cause:?} at cwnd {cwnd:.1} segments, {at:.3} s");
        assert_eq!(cause.as_deref(), Some("loss"));
        // Slow start overflows the 1-BDP queue: the window is past the BDP by then.
        assert!(cwnd > BDP_SEGMENTS, "{cwnd}");
        let rtx = out.summary["flows"][0]["retransmitted_segments"]
            .as_u64()
            .unwrap();
        assert!(rtx > 0);
        // A loss halves the window (Linux tcp_reno_ssthresh; CUBIC β 0.7): the first sampled
        // ssthresh is below the exit cwnd.
        let (t_ss, ss) = first_ssthresh(&out);
        assert!(
            t_ss >= at - 1e-9 && ss < cwnd,
            "ssthresh {ss} at {t_ss}, exit {cwnd} at {at}"
        );
    }
}

#[test]
fn bbr_leaves_startup_when_the_pipe_is_full() {
    let out = run("bbr", &[], "3s");
    let (cause, cwnd, at) = exit(&out);
    eprintln!("bbr: {cause:?} at cwnd {cwnd:?} segments, {at:?} s");
    assert_eq!(cause.as_deref(), Some("bbr-full-bw"));
    // STARTUP doubles the rate per round and needs 3 rounds without 25 % growth after the
    // pipe fills (RFC draft §4.3.2.2): within 1.5 s of 40 ms rounds.
    assert!(at.unwrap() < 1.5, "{at:?}");
    assert!(cwnd.unwrap() > BDP_SEGMENTS, "{cwnd:?}");
}

#[test]
fn still_in_slow_start_the_fields_are_null() {
    // 150 ms: about three rounds, cwnd ≈ 80 segments, below the BDP.
    let out = run("newreno", &[], "150ms");
    assert_eq!(exit(&out), (None, None, None));
    let f = &out.summary["flows"][0];
    for k in [
        "slow_start_exit_cause",
        "slow_start_exit_cwnd_segments",
        "slow_start_exit_s",
    ] {
        assert!(f[k].is_null(), "{k}: {}", f[k]);
    }
}
