//! Write one run's outputs for a byte-for-byte comparison of two builds (`scripts/same-outputs.sh`):
//! `outputs DIR SPEC [KEY=VALUE ...]` writes DIR/summary.json (without `wall`, the only
//! field that differs between identical runs), DIR/tables.txt (every time-series table, the
//! rows the Python front writes as Parquet, floats as their bit patterns) and, with
//! `output.pcap=true` among the overrides, DIR/pcap/.
use std::fmt::Write as _;
use std::path::Path;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.len() < 2 {
        eprintln!("usage: outputs DIR SPEC [KEY=VALUE ...]");
        std::process::exit(2);
    }
    let dir = Path::new(&args[0]);
    std::fs::create_dir_all(dir).expect("output folder");
    let ov: Vec<(String, String)> = args[2..]
        .iter()
        .map(|a| {
            let (k, v) = a.split_once('=').expect("overrides are KEY=VALUE");
            (k.to_string(), v.to_string())
        })
        .collect();
    let (src, text) = rantcp_scenario::resolve_source(&args[1]).expect("scenario");
    let cfg = rantcp_scenario::load(&text, &src, &ov, None).expect("config");
    let mut run = rantcp_scenario::Run::new(cfg, Some(dir)).expect("build");
    let mut tables = Vec::new();
    let end = run.end();
    run.step(end).expect("run");
    for b in run.take_batches() {
        rantcp_scenario::merge(&mut tables, b);
    }
    let out = run.finish(0.0).expect("finish");
    rantcp_scenario::merge(&mut tables, out.tables);
    let mut summary = out.summary;
    if let Some(o) = summary.as_object_mut() {
        o.remove("wall");
    }
    std::fs::write(
        dir.join("summary.json"),
        serde_json::to_string_pretty(&summary).unwrap(),
    )
    .unwrap();
    let mut s = String::new();
    for t in &tables {
        writeln!(s, "table {} rows {}", t.name, t.rows()).unwrap();
        for (n, c) in &t.columns {
            let _ = write!(s, "{n}:");
            match c {
                rantcp_scenario::Column::F64(v) => v.iter().for_each(|x| {
                    let _ = write!(s, " {:x}", x.to_bits());
                }),
                rantcp_scenario::Column::I64(v) => v.iter().for_each(|x| {
                    let _ = write!(s, " {x}");
                }),
                rantcp_scenario::Column::OptI64(v) => v.iter().for_each(|x| {
                    let _ = write!(s, " {x:?}");
                }),
                rantcp_scenario::Column::Str(v) => v.iter().for_each(|x| {
                    let _ = write!(s, " {x:?}");
                }),
            }
            s.push('\n');
        }
    }
    std::fs::write(dir.join("tables.txt"), s).unwrap();
}
