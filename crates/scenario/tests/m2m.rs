//! The built-in `lte-m2m` (seed 003 §3.4): M2M telemetry transactions over TCP with the
//! TS 36.321 §5.4.5 BSR procedure, its metrics (application upload response time, uplink LTE
//! packet delay, PDCCH use per subframe) and its config checks. Run in release mode:
//! `cargo test --release -p rantcp-scenario --test m2m`.

use rantcp_scenario::{run_quiet, Column, RunOutput};

fn run(o: &[(&str, &str)]) -> RunOutput {
    let v: Vec<(String, String)> = o
        .iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect();
    run_quiet("builtin:lte-m2m", &v, None).unwrap()
}

fn err(o: &[(&str, &str)]) -> String {
    let v: Vec<(String, String)> = o
        .iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect();
    run_quiet("builtin:lte-m2m", &v, None)
        .err()
        .expect("must be refused")
}

fn f64s(out: &RunOutput, table: &str, col: &str) -> Vec<f64> {
    let t = out
        .tables
        .iter()
        .find(|t| t.name == table)
        .unwrap_or_else(|| panic!("no table {table}"));
    match &t.columns.iter().find(|c| c.0 == col).unwrap().1 {
        Column::F64(v) => v.clone(),
        Column::I64(v) => v.iter().map(|&x| x as f64).collect(),
        _ => panic!("{col} is not numeric"),
    }
}

fn sum_ues(out: &RunOutput, key: &str) -> f64 {
    out.summary["radio"]["ues"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| u[key].as_f64().unwrap_or(0.0))
        .sum()
}

#[test]
fn test_m2m_transactions_and_metrics() {
    let out = run(&[("ues", "10"), ("duration", "8s"), ("m2m.think", "1s")]);
    let flows = out.summary["flows"].as_array().unwrap();
    assert_eq!(flows.len(), 10);
    for f in flows {
        assert_eq!(f["app"], "m2m");
        let started = f["m2m_started"].as_u64().unwrap();
        let done = f["m2m_completed"].as_u64().unwrap();
        // Think time 1 s mean over 8 s: several transactions each, all but the last complete.
        assert!(started >= 2 && done + 1 >= started, "{f}");
        // Downlink: 50 B over 20 ms + core + radio; upload: the UE's SR/BSR/grant round trips
        // plus the 20 ms server path and back.
        assert!(f["down_response_p50_s"].as_f64().unwrap() > 0.02, "{f}");
        assert!(f["upload_response_p50_s"].as_f64().unwrap() > 0.04, "{f}");
    }
    // One m2m row per completed transaction; every delivered uplink packet has a delay row.
    let up = f64s(&out, "m2m", "upload_response_s");
    let done: u64 = flows
        .iter()
        .map(|f| f["m2m_completed"].as_u64().unwrap())
        .sum();
    assert_eq!(up.len() as u64, done);
    let delays = f64s(&out, "ul_delay", "delay_s");
    assert_eq!(delays.len() as f64, sum_ues(&out, "ul_delay_packets"));
    assert_eq!(
        delays.len() as f64,
        sum_ues(&out, "ul_packets"),
        "error-free: every UL packet arrives"
    );
    // A packet waits at least for an SR occasion and a grant k2 = 4 subframes later.
    assert!(
        delays.iter().all(|&d| d >= 0.004),
        "{:?}",
        delays.iter().cloned().fold(f64::MAX, f64::min)
    );
    // PDCCH: one row per subframe up to the last one run, in order; the summary histogram
    // covers every subframe of the run (8000), the rows' DCIs match it.
    let dcis = f64s(&out, "pdcch", "dcis");
    let cell = &out.summary["radio"]["cells"][0];
    let hist: Vec<u64> = cell["pdcch_histogram"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_u64().unwrap())
        .collect();
    assert_eq!(hist.len(), 11);
    assert_eq!(hist.iter().sum::<u64>(), 8000);
    assert_eq!(
        dcis.iter().sum::<f64>() as u64,
        cell["dcis"].as_u64().unwrap()
    );
    let t = f64s(&out, "pdcch", "time_s");
    assert!(t.windows(2).all(|w| (w[1] - w[0] - 0.001).abs() < 1e-9) && t[0] == 0.0);
    assert!(t.len() <= 8000 && t.len() >= 7000, "{}", t.len());
    for k in 1..hist.len() {
        assert_eq!(
            dcis.iter().filter(|&&d| d as usize == k).count() as u64,
            hist[k],
            "{k} DCIs"
        );
    }
}

#[test]
fn test_m2m_is_deterministic() {
    let a = run(&[("ues", "6"), ("duration", "3s")]);
    let b = run(&[("ues", "6"), ("duration", "3s")]);
    assert_eq!(a.summary["flows"], b.summary["flows"]);
    assert_eq!(a.summary["radio"], b.summary["radio"]);
    for t in ["m2m", "ul_delay", "pdcch"] {
        assert_eq!(
            format!(
                "{:?}",
                a.tables.iter().find(|x| x.name == t).unwrap().columns
            ),
            format!(
                "{:?}",
                b.tables.iter().find(|x| x.name == t).unwrap().columns
            )
        );
    }
}

#[test]
fn test_bsr_timers_take_ts36331_values_only() {
    let e = err(&[("mac.periodic_bsr_timer", "7ms")]);
    assert!(
        e.contains("mac.periodic_bsr_timer")
            && e.contains("periodicBSR-Timer")
            && e.contains("2560ms"),
        "{e}"
    );
    let e = err(&[("mac.retx_bsr_timer", "2040ms")]);
    assert!(
        e.contains("mac.retx_bsr_timer") && e.contains("retxBSR-Timer") && e.contains("10240ms"),
        "{e}"
    );
    assert!(!e.contains('\n'), "one line: {e}");
    let e = err(&[("mac.bsr", "ideal"), ("mac.bsr_enhancement", "true")]);
    assert!(e.contains("mac.bsr_enhancement"), "{e}");
    // Infinity (0s) and every listed value are accepted.
    for (p, r) in [("0s", "320ms"), ("320ms", "10240ms")] {
        run(&[
            ("ues", "2"),
            ("duration", "1s"),
            ("mac.periodic_bsr_timer", p),
            ("mac.retx_bsr_timer", r),
        ]);
    }
}
