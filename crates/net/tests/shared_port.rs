//! Flows that share a server port each get their own connection: a passive open waits for the
//! flow's own client (RFC 9293 §3.10.1, a fully specified foreign socket), so the SYN that
//! arrives first does not take whichever listener was made first.
//!
//! ```text
//!  c0 --(20 ms)--\
//!                 r --(1 ms)-- server (port 5201 for both downloads)
//!  c1 --(1 ms)---/
//! ```

use rantcp_core::Time;
use rantcp_net::{FlowKind, FlowSpec, LinkParams, Sim};
use rantcp_tcp::TcpConfig;
use std::net::Ipv4Addr;

mod support;

fn link(ms: u64) -> LinkParams {
    support::link(100_000_000, ms)
}

#[test]
fn downloads_sharing_a_server_port_are_not_cross_wired() {
    let mut sim = Sim::new(1);
    let s = sim.add_node("server", Ipv4Addr::new(10, 0, 0, 1));
    let r = sim.add_node("router", Ipv4Addr::new(10, 0, 0, 254));
    let c0 = sim.add_node("c0", Ipv4Addr::new(10, 0, 1, 1));
    let c1 = sim.add_node("c1", Ipv4Addr::new(10, 0, 2, 1));
    let (s0, rs) = sim.connect(s, r, link(1), link(1));
    let (c0r, r0) = sim.connect(c0, r, link(20), link(20));
    let (c1r, r1) = sim.connect(c1, r, link(1), link(1));
    sim.add_route(s, Ipv4Addr::UNSPECIFIED, 0, s0);
    sim.add_route(c0, Ipv4Addr::UNSPECIFIED, 0, c0r);
    sim.add_route(c1, Ipv4Addr::UNSPECIFIED, 0, c1r);
    sim.add_route(r, Ipv4Addr::new(10, 0, 0, 0), 24, rs);
    sim.add_route(r, Ipv4Addr::new(10, 0, 1, 0), 24, r0);
    sim.add_route(r, Ipv4Addr::new(10, 0, 2, 0), 24, r1);
    let tcp = TcpConfig::default();
    // Flow 0's listener is made first, but c1's SYN reaches the server 19 ms before c0's.
    let sizes = [100_000u64, 300_000];
    let flows: Vec<_> = [c0, c1]
        .iter()
        .zip(sizes)
        .enumerate()
        .map(|(k, (&c, bytes))| {
            sim.add_flow(FlowSpec {
                name: format!("dl{k}"),
                kind: FlowKind::Download {
                    request_bytes: 100,
                    bytes,
                },
                src: s,
                dst: c,
                src_port: 5201,
                dst_port: 49152,
                start: Time::ZERO,
                tcp_sender: tcp.clone(),
                tcp_receiver: tcp.clone(),
            })
        })
        .collect();
    sim.run_until(Time::from_secs(5)).expect("run");
    for (k, &f) in flows.iter().enumerate() {
        let res = sim.flow_result(f);
        assert_eq!(
            res.delivered_bytes, sizes[k],
            "flow {k} got another flow's download"
        );
        assert!(res.completed_at.is_some(), "flow {k}");
    }
}
