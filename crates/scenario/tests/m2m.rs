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

/// One lte-m2m UE at a fixed `distance_m` for 5 s, with `extra` overrides.
fn static_ue(distance_m: &str, extra: &[(&str, &str)]) -> RunOutput {
    let mut o = vec![
        ("ues", "1"),
        ("ue.placement", "fixed"),
        ("ue.distance_m", distance_m),
        ("duration", "5s"),
    ];
    o.extend_from_slice(extra);
    run(&o)
}

/// Radio link monitoring out of the way (Qout −30 dB), for tests of what happens at SINRs
/// below the default Qout before a monitoring failure would end the link.
const NO_RLM: [(&str, &str); 2] = [("mac.rlm_qout_db", "-30"), ("mac.rlm_qin_db", "-29")];

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
    for (k, &n) in hist.iter().enumerate().skip(1) {
        assert_eq!(
            dcis.iter().filter(|&&d| d as usize == k).count() as u64,
            n,
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

/// The uplink livelock of power-limited UEs (README, seed 003 chapter 3): with 8 dB shadowing,
/// a UE far out (ue6, 491 m) was power-limited to 4-byte grants (1 PRB at MCS 2), which carry
/// a BSR or nothing and no RLC PDU, and was granted in 86 % of subframes (8570 grants in 10 s)
/// without one uplink packet delivered. Now every grant carries at least the smallest useful
/// block (7 bytes) and a UE granted that often delivers its uplink.
#[test]
fn test_power_limited_ue_is_not_granted_in_vain() {
    let out = run(&[
        ("radio.shadowing", "true"),
        ("ues", "50"),
        ("duration", "10s"),
    ]);
    let mut far = 0;
    for u in out.summary["radio"]["ues"].as_array().unwrap() {
        let grants = u["ul_grants"].as_f64().unwrap();
        if grants == 0.0 {
            continue;
        }
        let tbs = u["ul_avg_tbs_bytes"].as_f64().unwrap();
        assert!(
            tbs >= 7.0,
            "{}: mean UL grant {tbs} B over {grants} grants",
            u["ue"]
        );
        let delivered = u["ul_delay_packets"].as_f64().unwrap();
        let sent = u["ul_packets"].as_f64().unwrap();
        if grants > 1000.0 {
            // Granted in over 10 % of the subframes: the backlog drains.
            assert!(
                delivered >= 0.8 * sent && delivered >= 10.0,
                "{}: {delivered} of {sent} UL packets in {grants} grants",
                u["ue"]
            );
        }
        far += (tbs < 10.0) as u32;
    }
    // The scenario still has a power-limited UE (else the test tests nothing).
    assert!(far >= 1, "no UE at the minimum grant");
}

/// A UE out of uplink coverage — not even the most robust 7-byte block reaches its threshold
/// with the HARQ budget (4 transmissions, +6 dB) — stops being granted: at a static 2000 m
/// the eNB hears its SRs and grants nothing (before: 2423 2-byte grants in 5 s, every one
/// useless, the PDCCH never idle). It no longer sends SRs for ever (before: 500 in 5 s): after
/// dsr-TransMax (64) it gives up (TS 36.321 §5.4.4) and runs random access, whose preambles
/// at P_CMAX stay below the eNB's detection threshold; after preambleTransMax attempts the
/// radio link fails (TS 36.331 §5.3.11.3) and re-establishment attempts follow (5 s: 64 SRs,
/// 13 random access procedures, 128 preambles, 1 RLF, 4.36 s without uplink). Radio link
/// monitoring is set out of the way here (Qout −30 dB): at 2000 m the downlink is below the
/// default Qout, whose RLF would come first (see `test_far_ue_below_qout_declares_rlf`).
#[test]
fn test_ue_out_of_uplink_coverage_is_not_granted() {
    let out = static_ue("2000", &NO_RLM);
    let u = &out.summary["radio"]["ues"][0];
    assert_eq!(u["ul_grants"].as_u64(), Some(0), "{u}");
    assert_eq!(u["sr_sent"].as_u64(), Some(64), "{u}");
    assert_eq!(u["sr_give_ups"].as_u64(), Some(1), "{u}");
    assert_eq!(u["ra_successes"].as_u64(), Some(0), "{u}");
    assert!(u["ra_preambles"].as_u64().unwrap() >= 10, "{u}");
    assert_eq!(u["rlf"].as_u64(), Some(1), "{u}");
    assert_eq!(u["reestablishments"].as_u64(), Some(0), "{u}");
    assert!(u["ul_outage_s"].as_f64().unwrap() > 4.0, "{u}");
    assert!(u["ul_packets"].as_u64().unwrap() >= 1, "{u}");
    // With dsr_trans_max = 0 (the model before the fallback) the SRs go on to the end.
    let out = static_ue("2000", &[("mac.dsr_trans_max", "0"), NO_RLM[0], NO_RLM[1]]);
    let u = &out.summary["radio"]["ues"][0];
    assert!(u["sr_sent"].as_u64().unwrap() > 450, "{u}");
    assert_eq!(u["rlf"].as_u64(), Some(0), "{u}");
    // A little closer (1500 m) the same UE is power-limited but in coverage: 7-byte grants,
    // and its TCP handshake and uploads get through (its downlink, −6.7 dB, is between the
    // default Qout and Qin: monitoring leaves it connected).
    let out = static_ue("1500", &[]);
    let u = &out.summary["radio"]["ues"][0];
    assert!(u["ul_avg_tbs_bytes"].as_f64().unwrap() >= 7.0, "{u}");
    assert!(
        out.summary["flows"][0]["m2m_completed"].as_u64().unwrap() >= 1,
        "{u}"
    );
}

/// The downlink coverage floor. A static UE at 1600-1800 m has a large-scale downlink SINR of
/// −7.7 to −9.5 dB (COST 231-Hata 145-147 dB, 46 dBm over 20 MHz, NF 9 dB, no interference):
/// below CQI 1's 10 %-BLER threshold (−7.2 dB), so every report is CQI 0, yet within HARQ
/// reach of MCS 0 (−7.3 dB − 6 dB for 4 transmissions). Before the floor the eNB never
/// scheduled it in the downlink while granting its uplink: at 1700 m 386 uplink grants in 5 s
/// (3 SYNs and the RLC polls that no STATUS PDU ever answered), 0 downlink blocks, the
/// SYN-ACK never delivered, no transaction. Now it gets MCS 0 and its transactions complete.
/// (Radio link monitoring set out of the way, Qout −30 dB: 1800 m's −9.5 dB is below the
/// default Qout, −8 dB, see `test_far_ue_below_qout_declares_rlf`.)
#[test]
fn test_ue_below_cqi1_is_served_at_mcs0() {
    for d in ["1600", "1800"] {
        let out = static_ue(d, &NO_RLM);
        let u = &out.summary["radio"]["ues"][0];
        let sinr = u["mean_sinr_db"].as_f64().unwrap();
        assert!((-10.0..-7.3).contains(&sinr), "{d} m: {u}");
        assert!(u["dl_tb_new"].as_u64().unwrap() > 0, "{d} m: {u}");
        let (dl_in, dl_out) = (
            u["dl_packets_in"].as_u64().unwrap(),
            u["dl_packets_delivered"].as_u64().unwrap(),
        );
        assert!(dl_out >= 5 && dl_out + 1 >= dl_in, "{d} m: {u}");
        assert_eq!(u["rlf"].as_u64(), Some(0), "{d} m: {u}");
        let f = &out.summary["flows"][0];
        assert!(f["m2m_completed"].as_u64().unwrap() >= 1, "{d} m: {f}");
    }
}

/// Radio link monitoring at the cell edge: a static UE at 1700-1800 m (downlink −8.6 to
/// −9.5 dB) is below Qout (−8 dB, the 10 %-BLER level of a hypothetical PDCCH): out of sync
/// once the first 200 ms are evaluated, T310 (200 ms) expires, radio link failure at 0.4 s
/// (TS 36.331 §5.3.11.3), as a real UE with that downlink would declare. Its re-establishment
/// random access then fails: its preambles are not detected at that path loss (the PRACH
/// reaches less far than the 7-byte PUSCH block with 4 HARQ transmissions), so no transaction
/// completes. With a Qout below its SINR (−10 dB) it stays connected.
#[test]
fn test_far_ue_below_qout_declares_rlf() {
    for d in ["1700", "1800"] {
        let out = static_ue(d, &[]);
        let u = &out.summary["radio"]["ues"][0];
        assert_eq!(u["rlf"].as_u64(), Some(1), "{d} m: {u}");
        assert_eq!(u["rlf_rlm"].as_u64(), Some(1), "{d} m: {u}");
        assert_eq!(u["reestablishments"].as_u64(), Some(0), "{d} m: {u}");
        assert_eq!(out.summary["radio"]["uplink"]["rlf_rlm"].as_u64(), Some(1));
        let out = static_ue(d, &[("mac.rlm_qout_db", "-10"), ("mac.rlm_qin_db", "-9.9")]);
        let u = &out.summary["radio"]["ues"][0];
        assert_eq!(u["rlf"].as_u64(), Some(0), "{d} m: {u}");
    }
}

#[test]
fn test_pdcch_shares_of_a_cell_busy_to_the_end_stay_within_one() {
    // A UE out of uplink coverage that sends an SR every occasion to the last instant (no
    // dsr-TransMax fallback) keeps the device busy, so it also runs the subframe that starts at
    // the run's end: 5001 subframes counted in 5 s.
    let out = static_ue("2000", &[("mac.dsr_trans_max", "0")]);
    let cell = &out.summary["radio"]["cells"][0];
    let hist: u64 = cell["pdcch_histogram"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_u64().unwrap())
        .sum();
    let idle = cell["pdcch_idle_share"].as_f64().unwrap();
    let full = cell["pdcch_full_share"].as_f64().unwrap();
    assert!(hist >= 5000, "{hist}");
    assert!(idle <= 1.0 && idle + full <= 1.0, "idle {idle} full {full}");
    let all = out.summary["radio"]["pdcch"]["idle_share"]
        .as_f64()
        .unwrap();
    assert!(all <= 1.0, "{all}");
}
