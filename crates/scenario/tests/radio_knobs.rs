//! Every radio knob with nonsensical values (issue 9 item 7): each either is refused at load
//! time with one line naming the knob, or the run still carries data. No run may succeed while
//! carrying nothing because of a nonsensical value.

mod common;

use common::ov;
use rantcp_scenario::{load, resolve_source, Run};
use serde_json::Value;

/// Nonsense for knob `path` whose default is `v`.
fn nonsense(path: &str, v: &Value) -> Vec<String> {
    if path == "radio.tx_power_dbm" {
        // Low powers are physical (a cell that reaches no UE); these are not.
        return ["nan", "inf", "-inf", "1e12", "-1e12"]
            .map(String::from)
            .to_vec();
    }
    match v {
        Value::Number(n) if n.is_f64() => ["-1", "0", "nan", "inf", "-inf", "1e12"]
            .map(String::from)
            .to_vec(),
        Value::Number(_) => ["0", "-1", "100000", "4294967295"]
            .map(String::from)
            .to_vec(),
        Value::String(s)
            if s.ends_with('s')
                && s.chars().next().is_some_and(|c| c.is_ascii_digit())
                && !s.ends_with("bps") =>
        {
            ["0s", "1ns", "1h", "1000h"].map(String::from).to_vec()
        }
        Value::String(s) if s.ends_with("bps") => ["1bps", "1Tbps"].map(String::from).to_vec(),
        Value::String(s) if s.ends_with('B') => ["1B", "0B", "1TB"].map(String::from).to_vec(),
        _ => vec![],
    }
}

fn leaves(prefix: &str, v: &Value, out: &mut Vec<(String, Value)>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                leaves(&format!("{prefix}{k}."), x, out);
            }
        }
        _ => out.push((prefix.trim_end_matches('.').to_string(), v.clone())),
    }
}

#[test]
fn nonsense_in_any_radio_knob_is_refused_or_still_carries_data() {
    let spec = "builtin:lte-cell";
    let (src, text) = resolve_source(spec).unwrap();
    let base = [("ues", "1"), ("duration", "500ms"), ("flow.start", "0s")];
    let cfg = load(&text, &src, &ov(&base), None).unwrap().to_json();
    let mut knobs = Vec::new();
    for section in ["radio", "ue", "mac", "rlc", "core"] {
        leaves(&format!("{section}."), &cfg[section], &mut knobs);
    }
    assert!(knobs.len() > 40, "{}", knobs.len());
    let mut tried = 0;
    let mut silent = Vec::new();
    for (path, default) in &knobs {
        for bad in nonsense(path, default) {
            tried += 1;
            let mut set: Vec<(&str, &str)> = base.to_vec();
            set.push((path.as_str(), bad.as_str()));
            match load(&text, &src, &ov(&set), None) {
                Err(e) => {
                    let s = e.to_string();
                    assert!(!s.contains('\n'), "{path}={bad}: {s}");
                    assert!(!s.is_empty());
                }
                Ok(c) => {
                    let mut run = Run::new(c, None).unwrap();
                    run.run_to_end().unwrap();
                    let out = run.finish(0.0).unwrap();
                    let bytes: u64 = out.summary["flows"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|f| f["bytes_delivered"].as_u64().unwrap())
                        .sum();
                    if bytes == 0 {
                        silent.push(format!("{path}={bad}"));
                    }
                }
            }
        }
    }
    assert!(tried > 100, "{tried}");
    assert!(
        silent.is_empty(),
        "accepted but carried nothing: {silent:?}"
    );
}
