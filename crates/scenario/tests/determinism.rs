//! Same config and seed → identical outputs; different seeds → different outputs.

use rantcp_scenario::run_quiet;

fn run(seed: u64) -> (String, String) {
    let ov = vec![
        ("bottleneck.loss".to_string(), "0.005".to_string()),
        ("duration".to_string(), "5s".to_string()),
        ("flow.count".to_string(), "2".to_string()),
    ];
    let mut out = run_quiet("builtin:p2p-bulk", &ov, Some(seed)).unwrap();
    out.summary.as_object_mut().unwrap().remove("wall");
    (
        serde_json::to_string(&out.summary).unwrap(),
        format!("{:?}", out.tables),
    )
}

#[test]
fn same_seed_same_bytes_other_seed_differs() {
    let a = run(5);
    let b = run(5);
    let c = run(6);
    assert_eq!(a, b);
    assert_ne!(a.0, c.0);
    assert_ne!(a.1, c.1);
}
