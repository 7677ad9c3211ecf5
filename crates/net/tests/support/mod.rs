//! Topologies the net crate's tests share: a lossless drop-tail link, two hosts joined by one,
//! and two hosts with a router between them. Each test file uses what it needs.
#![allow(dead_code)]

use rantcp_core::Duration;
use rantcp_net::{ErrorUnit, LinkParams, NodeId, QueueLimit, Sim};
use std::net::Ipv4Addr;

/// A link without random errors and a queue of 1000 packets.
pub fn link(rate_bps: u64, delay_ms: u64) -> LinkParams {
    LinkParams {
        rate_bps,
        delay: Duration::from_millis(delay_ms),
        queue: QueueLimit::Packets(1000),
        error_rate: 0.0,
        error_unit: ErrorUnit::Packet,
    }
}

/// `a --l-- b` with a default route at each end; `a` is 10.0.0.1, `b` the given address.
pub fn pair(
    seed: u64,
    names: (&str, &str),
    b_addr: Ipv4Addr,
    l: LinkParams,
) -> (Sim, NodeId, NodeId) {
    let mut sim = Sim::new(seed);
    let a = sim.add_node(names.0, Ipv4Addr::new(10, 0, 0, 1));
    let b = sim.add_node(names.1, b_addr);
    let (a0, b0) = sim.connect(a, b, l, l);
    sim.add_route(a, Ipv4Addr::UNSPECIFIED, 0, a0);
    sim.add_route(b, Ipv4Addr::UNSPECIFIED, 0, b0);
    (sim, a, b)
}

pub const A: Ipv4Addr = Ipv4Addr::new(10, 0, 0, 1);
pub const R: Ipv4Addr = Ipv4Addr::new(10, 0, 0, 254);
pub const B: Ipv4Addr = Ipv4Addr::new(10, 0, 1, 1);

/// `a --l-- r --l-- b` (A, R, B above): hosts route everything to `r`, which routes
/// 10.0.0.0/24 to `a` and 10.0.1.0/24 to `b`.
pub fn line3(seed: u64, l: LinkParams) -> (Sim, NodeId, NodeId, NodeId) {
    let mut sim = Sim::new(seed);
    let a = sim.add_node("a", A);
    let r = sim.add_node("r", R);
    let b = sim.add_node("b", B);
    let (a0, r0) = sim.connect(a, r, l, l);
    let (r1, b0) = sim.connect(r, b, l, l);
    sim.add_route(a, Ipv4Addr::UNSPECIFIED, 0, a0);
    sim.add_route(b, Ipv4Addr::UNSPECIFIED, 0, b0);
    sim.add_route(r, Ipv4Addr::new(10, 0, 0, 0), 24, r0);
    sim.add_route(r, Ipv4Addr::new(10, 0, 1, 0), 24, r1);
    (sim, a, r, b)
}
