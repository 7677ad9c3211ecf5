//! Time series handed out in batches (issue 20): a long run's rows leave the core as it goes,
//! cut at sample instants only, so the tables do not depend on how the caller chunks the run;
//! integer columns hold nulls where a value does not exist.

mod common;

use common::ov;
use rantcp_core::{Duration, Time};
use rantcp_scenario::{load, merge, resolve_source, Column, Run, Table, BATCH_ROWS};

fn run(spec: &str, pairs: &[(&str, &str)]) -> Run {
    let (src, text) = resolve_source(spec).unwrap();
    let cfg = load(&text, &src, &ov(pairs), Some(3)).unwrap();
    Run::new(cfg, None).unwrap()
}

fn rows(batch: &[Table]) -> usize {
    batch.iter().map(Table::rows).sum()
}

fn column<'a>(tables: &'a [Table], table: &str, name: &str) -> &'a Column {
    let t = tables.iter().find(|t| t.name == table).unwrap();
    &t.columns.iter().find(|c| c.0 == name).unwrap().1
}

/// cc-compare: five networks sampled every millisecond for 4 s (20,000 flow rows).
const COMPARE: &[(&str, &str)] = &[("duration", "4s"), ("output.sample_interval", "1ms")];

#[test]
fn tables_do_not_depend_on_how_the_run_is_stepped() {
    let mut whole = run("builtin:cc-compare", COMPARE);
    whole.run_to_end().unwrap();
    let whole = whole.finish(0.0).unwrap().tables;

    let mut stepped = run("builtin:cc-compare", COMPARE);
    let mut tables = Vec::new();
    let mut batches = Vec::new();
    let mut t = Time::ZERO;
    let mut k = 0u64;
    while t < stepped.end() {
        // Uneven steps, none on a sample instant: 1.3 ms, 7.7 ms, 130.1 ms, ...
        k += 1;
        let d = [1_300_000, 7_700_000, 130_100_000][(k % 3) as usize];
        t = stepped.step(t + Duration::from_nanos(d)).unwrap();
        for b in stepped.take_batches() {
            batches.push(rows(&b));
            merge(&mut tables, b);
        }
    }
    merge(&mut tables, stepped.finish(0.0).unwrap().tables);

    // Compared as text: NaN (a value not yet measured) is not equal to itself.
    assert!(
        format!("{tables:?}") == format!("{whole:?}"),
        "stepped and whole runs differ"
    );
    assert_eq!(tables[0].rows(), 5 * 4000);
    // Cut as soon as BATCH_ROWS rows wait at a sample instant: at most one instant's rows
    // (5 flows) more than that.
    assert!(batches.len() >= 2, "{batches:?}");
    for &b in &batches {
        assert!((BATCH_ROWS..BATCH_ROWS + 5).contains(&b), "{batches:?}");
    }
}

#[test]
fn rows_are_in_sample_order_within_a_network() {
    let mut r = run(
        "builtin:p2p-bulk",
        &[("duration", "1s"), ("flow.count", "3")],
    );
    r.run_to_end().unwrap();
    let t = r.finish(0.0).unwrap().tables;
    let Column::Str(flow) = column(&t, "flows", "flow") else {
        panic!()
    };
    let Column::F64(time) = column(&t, "flows", "time_s") else {
        panic!()
    };
    assert_eq!(&flow[..4], ["flow0", "flow1", "flow2", "flow0"]);
    assert_eq!(&time[..4], [0.1, 0.1, 0.1, 0.2]);
    assert_eq!(time.len(), 30);
}

#[test]
fn ssthresh_is_null_until_set_and_bbr_mode_only_for_bbr() {
    // NewReno with random loss: ssthresh is unset ("arbitrarily high", RFC 5681 §3.1) until
    // the first loss, then a number of bytes.
    let mut r = run(
        "builtin:p2p-bulk",
        &[
            ("duration", "5s"),
            ("flow.cc", "newreno"),
            ("bottleneck.loss", "1e-3"),
            ("output.sample_interval", "10ms"),
        ],
    );
    r.run_to_end().unwrap();
    let t = r.finish(0.0).unwrap().tables;
    let Column::OptI64(ss) = column(&t, "flows", "ssthresh_bytes") else {
        panic!("ssthresh_bytes is a nullable integer column")
    };
    let first = ss
        .iter()
        .position(Option::is_some)
        .expect("a loss sets ssthresh");
    assert!(first > 0, "unset at the start");
    assert!(ss[first..]
        .iter()
        .all(|v| v.is_some_and(|b| b > 0 && b < 1 << 40)));
    let Column::OptI64(mode) = column(&t, "flows", "bbr_mode") else {
        panic!("bbr_mode is a nullable integer column")
    };
    assert!(mode.iter().all(Option::is_none));

    // cc-compare: BBR's rows carry its mode; the other CCs' and the UDP reference's do not,
    // and a UDP flow has no ssthresh.
    let mut r = run("builtin:cc-compare", &[("duration", "2s")]);
    r.run_to_end().unwrap();
    let t = r.finish(0.0).unwrap().tables;
    let (Column::Str(flow), Column::OptI64(mode), Column::OptI64(ss)) = (
        column(&t, "flows", "flow"),
        column(&t, "flows", "bbr_mode"),
        column(&t, "flows", "ssthresh_bytes"),
    ) else {
        panic!()
    };
    for ((f, m), s) in flow.iter().zip(mode).zip(ss) {
        assert_eq!(m.is_some(), f == "bbr", "{f}: bbr_mode {m:?}");
        if f.starts_with("udp") {
            assert_eq!(*s, None, "{f}");
        }
    }
    assert!(flow.iter().any(|f| f.starts_with("udp")), "{flow:?}");
}
