//! Seed 000's ACK filter end to end in a radio cell: with every mode a finite bulk download
//! completes with the same bytes and no RTO (a discarded ACK that the sender needed would show as
//! one), the filter's counters agree with the radio cell's own, and its report and series are
//! in the outputs.

mod common;

use common::ov;
use rantcp_scenario::{run_quiet, RunOutput};
use serde_json::Value;

const BYTES: u64 = 3_000_000;

/// Three UEs 60 m from the eNB, each downloading `BYTES` (CUBIC, delayed ACKs, 536-byte
/// segments as seed 000), with `mode` switched on (and its parameter). The UEs ACK every second
/// segment at once, as seed 000 assumes (its N_ack formula, and its `rfc` stack in
/// lte-7cell), not once per transport block as Linux's receiver does (`flow.ack_when_read`).
fn run(extra: &[(&str, &str)]) -> RunOutput {
    let mut set = vec![
        ("ues", "3"),
        ("flow.ack_when_read", "false"),
        ("duration", "8s"),
        ("ue.placement", "fixed"),
        ("ue.distance_m", "60"),
        ("flow.bytes", "3000000B"),
        ("flow.mss", "536"),
    ];
    set.extend_from_slice(extra);
    run_quiet("builtin:lte-cell", &ov(&set), None).unwrap()
}

fn flows(out: &RunOutput) -> &Vec<Value> {
    out.summary["flows"].as_array().unwrap()
}

fn ues(out: &RunOutput) -> &Vec<Value> {
    out.summary["radio"]["ues"].as_array().unwrap()
}

#[test]
fn every_mode_completes_the_transfer_without_an_rto() {
    let modes: &[&[(&str, &str)]] = &[
        &[("functions.ack_filter.mode", "none")],
        &[("functions.ack_filter.mode", "granted")],
        &[
            ("functions.ack_filter.mode", "passive"),
            ("functions.ack_filter.ratio", "0.5"),
        ],
        &[
            ("functions.ack_filter.mode", "active"),
            ("functions.ack_filter.threshold", "3"),
        ],
        &[("functions.ack_filter.mode", "highest")],
        &[
            ("functions.ack_filter.mode", "hybrid"),
            ("functions.ack_filter.threshold", "6"),
        ],
        &[("functions.ack_filter.mode", "hybrid-opt")],
    ];
    for set in modes {
        let mode = set[0].1;
        let out = run(set);
        for f in flows(&out) {
            assert_eq!(f["bytes_delivered"], BYTES, "{mode}: {f}");
            assert_eq!(f["rtos"], 0, "{mode}: {f}");
        }
        let a = &out.summary["functions"]["ack_filter"];
        assert_eq!(a["mode"], mode);
        let discarded = a["acks_discarded"].as_u64().unwrap();
        if mode == "none" {
            assert_eq!(discarded, 0);
        } else {
            assert!(discarded > 100, "{mode}: the filter must have acted ({a})");
        }
        // The filter's counts against the radio cell's: every ACK into the uplink buffer is
        // seen; what the filter predicts is handed to PDCP is what reaches the eNB (the
        // transfers end long before the run, so nothing is in flight). The filter also counts
        // the UE's FIN-ACK (an ACK it never discards), the cell only pure ACKs.
        let per_ue = a["ues"].as_array().unwrap();
        assert_eq!(per_ue.len(), 3, "{mode}");
        let n = |v: &Value| v.as_u64().unwrap();
        for (u, r) in per_ue.iter().zip(ues(&out)) {
            assert_eq!(u["rnti"], r["rnti"], "{mode}");
            assert_eq!(
                n(&u["acks_arrived"]),
                n(&r["ul_acks"]) + 1,
                "{mode}: {u} {r}"
            );
            assert_eq!(
                n(&u["acks_sent"]),
                n(&r["ul_acks_delivered"]) + 1,
                "{mode}: {u} {r}"
            );
            assert_eq!(
                u["acks_arrived"].as_u64().unwrap(),
                u["acks_sent"].as_u64().unwrap() + u["acks_discarded"].as_u64().unwrap(),
                "{mode}: every ACK is sent or discarded"
            );
            if mode == "hybrid-opt" {
                assert!(u["t_opt"].as_u64().unwrap() >= 1);
                assert!(u["s_tbs_bytes"].as_f64().unwrap() > 0.0);
            }
        }
        let cells = a["cells"].as_array().unwrap();
        assert_eq!(cells.len(), 1);
        assert_eq!(cells[0]["acks_arrived"], a["acks_arrived"]);
        assert!(a["ack_prbs"].as_f64().unwrap() > 0.0);
        // The UE uplink queue series: one row per UE and sample.
        let t = out
            .tables
            .iter()
            .find(|t| t.name == "ack_filter_ue")
            .expect("ack_filter_ue series");
        assert!(t.columns.iter().any(|c| c.0 == "ul_buffer_bytes"));
    }
}

#[test]
fn absent_filter_leaves_no_trace_and_none_changes_nothing() {
    let off = run(&[]);
    assert!(off
        .summary
        .get("functions")
        .is_none_or(|f| f.get("ack_filter").is_none()));
    let none = run(&[("functions.ack_filter.mode", "none")]);
    // Present but "none": the same run, packet for packet.
    assert_eq!(off.summary["events"], none.summary["events"]);
    for (a, b) in flows(&off).iter().zip(flows(&none)) {
        assert_eq!(a["bytes_delivered"], b["bytes_delivered"]);
        assert_eq!(a["data_segments_sent"], b["data_segments_sent"]);
        assert_eq!(a["rtt_mean_ms"], b["rtt_mean_ms"]);
    }
}

/// (time in µs, rnti) → `col` of table `name`.
fn keyed(out: &RunOutput, name: &str, col: &str) -> std::collections::BTreeMap<(i64, i64), i64> {
    use rantcp_scenario::Column;
    let t = out.tables.iter().find(|t| t.name == name).expect(name);
    let get = |c: &str| {
        &t.columns
            .iter()
            .find(|x| x.0 == c)
            .unwrap_or_else(|| panic!("{name}.{c}"))
            .1
    };
    let (Column::F64(time), Column::I64(rnti), Column::I64(v)) =
        (get("time_s"), get("rnti"), get(col))
    else {
        panic!("{name}: unexpected column types");
    };
    (0..time.len())
        .map(|k| (((time[k] * 1e6).round() as i64, rnti[k]), v[k]))
        .collect()
}

/// The filter samples each UE's uplink buffer through `RanView::ul_buffer_bytes` (not a whole
/// report: issue 19's cost of an attached filter); it must read what the radio series reads.
#[test]
fn sampled_uplink_buffer_is_the_radio_series_one() {
    for mode in ["none", "hybrid-opt"] {
        let out = run(&[("functions.ack_filter.mode", mode)]);
        let f = keyed(&out, "ack_filter_ue", "ul_buffer_bytes");
        let r = keyed(&out, "radio", "ul_queue_bytes");
        assert!(f.len() >= 3 * 70, "{mode}: {} rows", f.len());
        assert!(
            f.values().any(|&b| b > 0),
            "{mode}: the buffers were never sampled non-empty"
        );
        for (k, b) in &f {
            assert_eq!(r.get(k), Some(b), "{mode}: UE {} at {} µs", k.1, k.0);
        }
    }
}
