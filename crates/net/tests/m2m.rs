//! The M2M telemetry application (`FlowKind::M2m`, seed 003 §3.4) over one link: the device
//! connects, the server writes 50 B, the device answers each message with a 1,000 B upload,
//! the next message follows a think time after the server has read the upload; each
//! transaction's downlink response time (server write → device read) and application upload
//! response time (device write → last byte acknowledged) are recorded.
//!
//! ```text
//!  server a --(1 Gbit/s, 10 ms)-- b device
//! ```

use rantcp_core::{Duration, Time};
use rantcp_net::{FlowKind, FlowSpec, M2m, M2mRecord};
use rantcp_tcp::TcpConfig;
use std::net::Ipv4Addr;

mod support;

fn run(m: M2m, secs: u64) -> Vec<M2mRecord> {
    let (mut sim, a, b) = support::pair(
        1,
        ("server", "device"),
        Ipv4Addr::new(10, 0, 1, 1),
        support::link(1_000_000_000, 10),
    );
    let tcp = TcpConfig::default();
    let f = sim.add_flow(FlowSpec {
        name: "m2m".into(),
        kind: FlowKind::M2m(m),
        src: a,
        dst: b,
        src_port: 5201,
        dst_port: 49152,
        start: Time::ZERO,
        tcp_sender: tcp.clone(),
        tcp_receiver: tcp,
    });
    sim.run_until(Time::from_secs(secs)).expect("run");
    sim.flow_result(f).m2m.clone()
}

/// Serialisation of an IP packet of `payload` TCP bytes (20 + 20 header bytes, and the
/// timestamp option if negotiated) at 1 Gbit/s is below 10 µs: times are exact to 0.1 ms.
fn ms(d: Duration) -> f64 {
    (d.as_secs_f64() * 1e4).round() / 10.0
}

#[test]
fn transactions_repeat_after_the_think_time_with_exact_response_times() {
    let m = M2m {
        down_bytes: 50,
        up_bytes: 1000,
        think: Duration::from_millis(100),
        think_exponential: false,
        count: None,
    };
    let recs = run(m, 1);
    // Handshake: SYN at 0, SYN-ACK at 10 ms, the device's ACK reaches the server at 30 ms: the
    // server's first write.
    assert_eq!(
        ms(recs[0].down_sent.saturating_since(Time::ZERO)),
        30.0,
        "{:?}",
        recs[0]
    );
    for (k, r) in recs.iter().enumerate() {
        if r.up_acked.is_none() {
            assert_eq!(k, recs.len() - 1, "only the last may be open");
            continue;
        }
        // One way down (10 ms); the upload up and its ACK back (20 ms) after the server's
        // delayed-ACK timer (40 ms, RFC 9293 §3.8.6.3): with a think time no data carries it.
        assert_eq!(ms(r.down_response().unwrap()), 10.0, "{k}");
        assert_eq!(ms(r.up_response().unwrap()), 60.0, "{k}");
        if k > 0 {
            // Next write: upload read by the server (10 ms after the device wrote it) + 100 ms.
            let prev = &recs[k - 1];
            let gap = r.down_sent.saturating_since(prev.down_read.unwrap());
            assert_eq!(ms(gap), 110.0, "{k}");
        }
    }
    // A cycle is 10 ms down + 10 ms up + 100 ms think (the server does not wait for its own
    // ACK): transactions start at 30, 150, …, 990 ms.
    assert_eq!(recs.len(), 9);
}

#[test]
fn count_stops_the_session_and_exponential_think_times_are_seeded() {
    let m = M2m {
        down_bytes: 50,
        up_bytes: 1000,
        think: Duration::ZERO,
        think_exponential: false,
        count: Some(3),
    };
    let recs = run(m, 2);
    assert_eq!(recs.len(), 3);
    assert!(recs.iter().all(|r| r.up_acked.is_some()));
    // Back to back: each next write as soon as the server read the upload, and it carries the
    // upload's ACK (20 ms); the last upload waits for the delayed ACK (60 ms).
    assert_eq!(
        ms(recs[1]
            .down_sent
            .saturating_since(recs[0].down_read.unwrap())),
        10.0
    );
    let up: Vec<f64> = recs.iter().map(|r| ms(r.up_response().unwrap())).collect();
    assert_eq!(up, vec![20.0, 20.0, 60.0]);
    let e = M2m {
        think: Duration::from_millis(200),
        think_exponential: true,
        count: None,
        ..m
    };
    let a = run(e, 3);
    let b = run(e, 3);
    assert_eq!(a, b, "same seed, same think times");
    let gaps: Vec<f64> = a
        .windows(2)
        .filter_map(|w| Some(ms(w[1].down_sent.saturating_since(w[0].down_read?)) - 10.0))
        .collect();
    assert!(
        gaps.len() >= 5 && gaps.windows(2).any(|g| g[0] != g[1]),
        "{gaps:?}"
    );
}
