//! External nodes (the real-time emulator's hosts): injected packets take the model's path,
//! packets for an external node come out with their payload handle, a simulated flow at the
//! same node keeps its own packets, and any node answers ICMP echo (RFC 1122 §3.2.2.6).

use rantcp_core::Time;
use rantcp_net::{FlowKind, FlowSpec, LinkParams, QueueLimit, Sim};
use rantcp_tcp::TcpConfig;
use rantcp_wire::{IcmpHeader, Ipv4Header, Packet, TcpFlags, TcpHeader, TcpOptions, Transport};
use std::net::Ipv4Addr;

mod support;
use support::{A, B, R};

/// a --(10 Mbit/s, 5 ms)-- r --(10 Mbit/s, 5 ms)-- b, both ends external.
fn net() -> Sim {
    let l = LinkParams {
        queue: QueueLimit::Packets(100),
        ..support::link(10_000_000, 5)
    };
    let (mut sim, a, _, b) = support::line3(1, l);
    sim.set_external(a);
    sim.set_external(b);
    sim
}

fn ip(src: Ipv4Addr, dst: Ipv4Addr) -> Ipv4Header {
    Ipv4Header::new(src, dst)
}

fn echo(src: Ipv4Addr, dst: Ipv4Addr, payload: u32) -> Packet {
    let mut p = Packet::icmp(
        ip(src, dst),
        IcmpHeader {
            icmp_type: IcmpHeader::ECHO_REQUEST,
            code: 0,
            rest: 0x0042_0007,
        },
        payload,
    );
    p.payload_id = 99;
    p
}

#[test]
fn injected_packet_crosses_the_model_and_comes_out_with_its_payload_handle() {
    let mut sim = net();
    let a = sim.node_id("a").unwrap();
    let b = sim.node_id("b").unwrap();
    sim.run_until(Time::from_millis(1)).unwrap();
    let p = echo(A, B, 56); // 84 bytes: 67.2 us per 10 Mbit/s hop
    sim.inject(Time::from_millis(1), a, p);
    let mut out = Vec::new();
    sim.run_until(Time::from_millis(11)).unwrap();
    sim.drain_external(&mut out);
    assert!(out.is_empty(), "not there before 2 x (5 ms + 67.2 us)");
    sim.run_until(Time::from_millis(12)).unwrap();
    sim.drain_external(&mut out);
    assert_eq!(out.len(), 1);
    let (at, node, q) = out[0];
    assert_eq!(node, b);
    assert_eq!(at, Time::from_nanos(1_000_000 + 2 * (5_000_000 + 67_200)));
    assert_eq!(q.payload_id, 99);
    assert_eq!(q.payload_len, 56);
    assert_eq!(q.transport, p.transport);
    // Nothing is answered by the model at an external node: the real host answers.
    sim.run_until(Time::from_millis(100)).unwrap();
    sim.drain_external(&mut out);
    assert_eq!(out.len(), 1);
    assert_eq!(sim.resets_sent(), 0);
}

#[test]
fn a_router_answers_echo_with_the_same_identifier_sequence_and_data() {
    let mut sim = net();
    let a = sim.node_id("a").unwrap();
    sim.inject(Time::ZERO, a, echo(A, R, 56));
    sim.run_until(Time::from_millis(20)).unwrap();
    let mut out = Vec::new();
    sim.drain_external(&mut out);
    assert_eq!(out.len(), 1);
    let (at, node, q) = out[0];
    assert_eq!(node, a);
    assert_eq!(at, Time::from_nanos(2 * (5_000_000 + 67_200)));
    assert_eq!((q.ip.src, q.ip.dst), (R, A));
    let Transport::Icmp(m) = q.transport else {
        panic!("not ICMP: {q:?}");
    };
    assert_eq!(
        (m.icmp_type, m.code, m.rest),
        (IcmpHeader::ECHO_REPLY, 0, 0x0042_0007)
    );
    assert_eq!(
        (q.payload_len, q.payload_id),
        (56, 99),
        "the request's data, by handle"
    );
}

#[test]
fn a_simulated_flow_at_an_external_node_keeps_its_packets_and_strays_go_out() {
    let mut sim = net();
    let a = sim.node_id("a").unwrap();
    let b = sim.node_id("b").unwrap();
    sim.add_flow(FlowSpec {
        name: "bg".into(),
        kind: FlowKind::Bulk {
            bytes: Some(100_000),
            write: None,
        },
        src: a,
        dst: b,
        src_port: 40000,
        dst_port: 5201,
        start: Time::ZERO,
        tcp_sender: TcpConfig::default(),
        tcp_receiver: TcpConfig::default(),
    });
    // A real host's segment for a connection the model does not know: out to b, no RST.
    let stray = Packet::tcp(
        ip(A, B),
        TcpHeader {
            src_port: 50000,
            dst_port: 80,
            seq: 1,
            ack: 0,
            flags: TcpFlags::SYN,
            window: 65535,
            urgent: 0,
            options: TcpOptions::default(),
        },
        0,
    );
    sim.inject(Time::ZERO, a, stray);
    sim.run_until(Time::from_secs(5)).unwrap();
    let mut out = Vec::new();
    sim.drain_external(&mut out);
    assert_eq!(out.len(), 1, "only the stray segment leaves the model");
    assert_eq!(out[0].1, b);
    assert_eq!(out[0].2.as_tcp().unwrap().dst_port, 80);
    assert_eq!(sim.flow_result(0).delivered_bytes, 100_000);
    assert_eq!(sim.resets_sent(), 0);
}

#[test]
fn removed_flows_never_start() {
    let mut sim = net();
    let a = sim.node_id("a").unwrap();
    let b = sim.node_id("b").unwrap();
    sim.add_flow(FlowSpec {
        name: "bg".into(),
        kind: FlowKind::Bulk {
            bytes: None,
            write: None,
        },
        src: a,
        dst: b,
        src_port: 40000,
        dst_port: 5201,
        start: Time::from_millis(1),
        tcp_sender: TcpConfig::default(),
        tcp_receiver: TcpConfig::default(),
    });
    sim.remove_flows();
    assert_eq!(sim.flow_count(), 0);
    sim.run_until(Time::from_secs(1)).unwrap();
    assert!(sim.link_reports().iter().all(|l| l.stats.tx_packets == 0));
}
