//! Paced application writes (`FlowKind::Bulk { write: Some(AppWrite) }`): the offered load is
//! the application's rate, not the link's; writes that do not fit the send buffer are refused
//! and lost to the application, as ns-3's tutorial `MyApp` over `TcpSocketBase::Send`.
//!
//! ```text
//!  a --(link, 1 ms)-- b
//! ```

use rantcp_core::Time;
use rantcp_net::{AppWrite, FlowKind, FlowSpec};
use rantcp_tcp::TcpConfig;
use std::net::Ipv4Addr;

mod support;

fn run(link_bps: u64, write: AppWrite, snd_buf: u64, secs: u64) -> (u64, u64, u64) {
    let (mut sim, a, b) = support::pair(
        7,
        ("a", "b"),
        Ipv4Addr::new(10, 0, 1, 1),
        support::link(link_bps, 1),
    );
    let tcp = TcpConfig {
        snd_buf_bytes: snd_buf,
        ..TcpConfig::default()
    };
    let f = sim.add_flow(FlowSpec {
        name: "paced".into(),
        kind: FlowKind::Bulk {
            bytes: None,
            write: Some(write),
        },
        src: a,
        dst: b,
        src_port: 40000,
        dst_port: 5201,
        start: Time::ZERO,
        tcp_sender: tcp.clone(),
        tcp_receiver: tcp,
    });
    sim.run_until(Time::from_secs(secs)).expect("run");
    let r = sim.flow_result(f);
    (r.delivered_bytes, r.app_writes, r.app_writes_refused)
}

#[test]
fn a_fast_link_carries_exactly_what_the_application_writes() {
    // 1448-byte writes at 10 Mbit/s = one write every 1158.4 µs; over 10 s that is 8633 writes
    // (times 0, 1158.4 µs, …, ≤ 10 s). The 1 Gbit/s link never fills the 6 MB send buffer.
    let w = AppWrite {
        rate_bps: 10_000_000,
        chunk: 1448,
    };
    let (delivered, writes, refused) = run(1_000_000_000, w, 6 << 20, 10);
    assert_eq!(writes, 8633);
    assert_eq!(refused, 0);
    // All but the writes of the last ~RTT (2 ms + the handshake's) have arrived.
    let written = writes * 1448;
    assert!(
        delivered <= written && delivered >= written - 4 * 1448,
        "{delivered} of {written}"
    );
}

#[test]
fn a_slow_link_fills_the_buffer_and_later_writes_are_refused() {
    // 50 Mbit/s of writes into a 10 Mbit/s link behind a 64 KB send buffer: TCP carries about
    // the link rate, the application loses the rest of its writes.
    let w = AppWrite {
        rate_bps: 50_000_000,
        chunk: 1448,
    };
    let (delivered, writes, refused) = run(10_000_000, w, 64 << 10, 10);
    let goodput = delivered as f64 * 8.0 / 10.0;
    assert!(goodput > 8.5e6 && goodput < 10e6, "goodput {goodput}");
    // Every accepted write was a whole chunk, and the stream is exactly those chunks (the send
    // buffer holds at most 64 KB of accepted-but-unacknowledged bytes at the end).
    let accepted = (writes - refused) * 1448;
    assert!(accepted >= delivered && accepted - delivered <= 64 << 10);
    let refused_share = refused as f64 / writes as f64;
    assert!(
        refused_share > 0.75 && refused_share < 0.85,
        "{refused_share}"
    );
}

#[test]
fn paced_runs_are_deterministic() {
    let w = AppWrite {
        rate_bps: 50_000_000,
        chunk: 1000,
    };
    assert_eq!(
        run(10_000_000, w, 64 << 10, 3),
        run(10_000_000, w, 64 << 10, 3)
    );
}
