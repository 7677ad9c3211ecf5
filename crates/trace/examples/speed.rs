//! Parse speed of the analysis pass alone: `cargo run --release -p rantcp-trace --example speed -- FILE`.
use std::time::Instant;

fn main() {
    let path = std::env::args()
        .nth(1)
        .expect("usage: speed FILE [PACKETS-TO-GENERATE]");
    if let Some(n) = std::env::args().nth(2) {
        let f = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
        rantcp_trace::testing::write_synthetic(f, n.parse().unwrap()).unwrap();
    }
    let t = Instant::now();
    let mut rows = 0usize;
    let file = std::fs::File::open(&path).unwrap();
    let a = rantcp_trace::analyze(file, Default::default(), 1 << 20, |c| rows += c.len()).unwrap();
    let dt = t.elapsed().as_secs_f64();
    println!(
        "{} frames, {} rows, {} sessions in {:.3} s: {:.2} M packets/s",
        a.frames.frames,
        rows,
        a.sessions.len(),
        dt,
        a.frames.frames as f64 / dt / 1e6
    );
}
