//! A shared-medium device plugged into the simulator: a toy "cell" that carries every packet
//! to its destination node after a fixed delay at a fixed rate. TCP runs across it unchanged.

use rantcp_core::{Duration, Time};
use rantcp_net::{Device, FlowKind, FlowSpec, NodeId, Sim};
use rantcp_tcp::TcpConfig;
use rantcp_wire::Packet;
use std::collections::VecDeque;
use std::net::Ipv4Addr;

struct Pipe {
    nodes: Vec<(Ipv4Addr, NodeId)>,
    delay: Duration,
    rate_bps: u64,
    busy_until: Time,
    in_flight: VecDeque<(Time, NodeId, Packet)>,
    carried: u64,
}

impl Device for Pipe {
    fn handle_packet(&mut self, now: Time, _from: NodeId, p: Packet) {
        let to = self
            .nodes
            .iter()
            .find(|(a, _)| *a == p.ip.dst)
            .map(|x| x.1)
            .unwrap();
        let start = self.busy_until.max(now);
        self.busy_until = start + Duration::transmission(p.len() as u64, self.rate_bps);
        self.in_flight
            .push_back((self.busy_until + self.delay, to, p));
    }
    fn handle_timeout(&mut self, _now: Time) {}
    fn poll_deliver(&mut self, now: Time) -> Option<(NodeId, Packet)> {
        if self.in_flight.front().is_some_and(|(t, _, _)| *t <= now) {
            self.carried += 1;
            self.in_flight.pop_front().map(|(_, n, p)| (n, p))
        } else {
            None
        }
    }
    fn poll_timeout(&self) -> Option<Time> {
        self.in_flight.front().map(|x| x.0)
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

#[test]
fn tcp_runs_over_a_device() {
    let mut sim = Sim::new(1);
    let a_addr = Ipv4Addr::new(10, 0, 0, 1);
    let b_addr = Ipv4Addr::new(10, 0, 0, 2);
    let a = sim.add_node("a", a_addr);
    let b = sim.add_node("b", b_addr);
    let dev = sim.add_device(Box::new(Pipe {
        nodes: vec![(a_addr, a), (b_addr, b)],
        delay: Duration::from_millis(10),
        rate_bps: 10_000_000,
        busy_until: Time::ZERO,
        in_flight: VecDeque::new(),
        carried: 0,
    }));
    let ia = sim.attach(a, dev, "radio");
    let ib = sim.attach(b, dev, "radio");
    sim.add_route(a, Ipv4Addr::UNSPECIFIED, 0, ia);
    sim.add_route(b, Ipv4Addr::UNSPECIFIED, 0, ib);
    assert_eq!(
        sim.iface_names(),
        vec!["a-radio0".to_string(), "b-radio0".to_string()]
    );
    let f = sim.add_flow(FlowSpec {
        name: "f".into(),
        kind: FlowKind::Bulk {
            bytes: Some(1_000_000),
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
    sim.run_until(Time::from_secs(5)).unwrap();
    assert_eq!(sim.flow_result(f).delivered_bytes, 1_000_000);
    // 1 MB at 10 Mbit/s takes at least 0.8 s plus the handshake.
    let done = sim.flow_result(f).last_delivery.unwrap();
    assert!(
        done > Time::from_millis(820) && done < Time::from_secs(3),
        "{done}"
    );
    let pipe = sim.device(dev).as_any().downcast_ref::<Pipe>().unwrap();
    assert!(pipe.carried > 700);
}
