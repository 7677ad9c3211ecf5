//! Helpers shared by the scenario integration tests: override lists and time-series columns.
#![allow(dead_code)] // each test binary uses a subset

use rantcp_scenario::{Column, RunOutput};

/// `--set`-style overrides from (path, value) pairs.
pub fn ov(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// A column of the first (flows) table.
pub fn col<'a>(out: &'a RunOutput, name: &str) -> &'a Column {
    &out.tables[0]
        .columns
        .iter()
        .find(|(n, _)| n == name)
        .unwrap()
        .1
}

/// A numeric column of the flows table as f64 (nulls as NaN).
pub fn f64s(out: &RunOutput, name: &str) -> Vec<f64> {
    match col(out, name) {
        Column::F64(v) => v.clone(),
        Column::I64(v) => v.iter().map(|&x| x as f64).collect(),
        Column::OptI64(v) => v.iter().map(|x| x.map_or(f64::NAN, |x| x as f64)).collect(),
        Column::Str(_) => panic!("{name} is not numeric"),
    }
}

/// Goodput (bit/s) of a single-flow run from its delivered-bytes column between two sample
/// times.
pub fn goodput_between(out: &RunOutput, t0: f64, t1: f64) -> f64 {
    let t = f64s(out, "time_s");
    let d = f64s(out, "delivered_bytes");
    let i0 = t.iter().position(|&x| x >= t0 - 1e-9).unwrap();
    let i1 = t.iter().rposition(|&x| x <= t1 + 1e-9).unwrap();
    (d[i1] - d[i0]) * 8.0 / (t[i1] - t[i0])
}
