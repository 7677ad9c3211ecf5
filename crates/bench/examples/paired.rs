//! How noisy is a with/without comparison? `paired SPEC SEEDS KEY=A|B [KEY=VALUE ...]` runs
//! SPEC with KEY=A and with KEY=B on seeds 1..=SEEDS and prints per seed the aggregate goodput
//! (bytes delivered × 8 / duration, Mbit/s) of each and their difference, then the mean and
//! standard deviation of the paired difference and the RMS over UEs of the per-flow
//! differences. The smaller the standard deviation for a mechanism with no effect, the less
//! noise the model adds to the seeds' comparisons (how the per-direction decode streams were
//! judged: lte-7cell, 40 UEs, ACK filter none|hybrid-opt, 100 seeds).
//!
//! `cargo run --release -p rantcp-bench --example paired -- builtin:lte-7cell 100 \
//!  'functions.ack_filter.mode=none|hybrid-opt' ues=40`
fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let usage = || -> ! {
        eprintln!("usage: paired SPEC SEEDS KEY=A|B [KEY=VALUE ...]");
        std::process::exit(2);
    };
    if args.len() < 3 {
        usage();
    }
    let spec = &args[0];
    let Ok(seeds) = args[1].parse::<u64>() else {
        usage()
    };
    let Some((key, (va, vb))) = args[2]
        .split_once('=')
        .and_then(|(k, v)| Some((k, v.split_once('|')?)))
    else {
        usage()
    };
    let mut fixed = Vec::new();
    for a in &args[3..] {
        let Some((k, v)) = a.split_once('=') else {
            usage()
        };
        fixed.push((k.to_string(), v.to_string()));
    }
    let run = |v: &str, seed: u64| -> Vec<f64> {
        let mut ov = fixed.clone();
        ov.push((key.to_string(), v.to_string()));
        let out = rantcp_scenario::run_quiet(spec, &ov, Some(seed)).unwrap_or_else(|e| {
            eprintln!("{e}");
            std::process::exit(2)
        });
        let dur = out.summary["duration_s"].as_f64().unwrap_or(1.0);
        out.summary["flows"].as_array().map_or(Vec::new(), |fs| {
            fs.iter()
                .map(|f| f["bytes_delivered"].as_u64().unwrap_or(0) as f64 * 8.0 / dur / 1e6)
                .collect()
        })
    };
    let (mut diffs, mut sq, mut n_flows) = (Vec::new(), 0.0f64, 0.0f64);
    for seed in 1..=seeds {
        let (a, b) = (run(va, seed), run(vb, seed));
        for (x, y) in a.iter().zip(&b) {
            sq += (x - y) * (x - y);
            n_flows += 1.0;
        }
        let (ta, tb) = (a.iter().sum::<f64>(), b.iter().sum::<f64>());
        println!("seed {seed:3} {ta:10.3} {tb:10.3} {:10.3}", tb - ta);
        diffs.push(tb - ta);
    }
    let n = diffs.len() as f64;
    let mean = diffs.iter().sum::<f64>() / n;
    let sd = (diffs.iter().map(|d| (d - mean).powi(2)).sum::<f64>() / (n - 1.0).max(1.0)).sqrt();
    println!(
        "mean diff {mean:.3} std diff {sd:.3} per-flow rms diff {:.3} (Mbit/s)",
        (sq / n_flows.max(1.0)).sqrt()
    );
}
