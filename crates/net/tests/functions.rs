//! The node side of the network-function contract, with test functions that use each power:
//! pass (modifying), drop, consume; emit; timers; samples; feedback delivered after its delay
//! to the TCP sender of a flow, from a node function and from a device.
//!
//! ```text
//!  a --(10 Mbit/s, 1 ms)-- r --(10 Mbit/s, 1 ms)-- b
//!  10.0.0.1              10.0.0.254                10.0.1.1
//! ```
//! A UDP CBR flow a → b of 1250-byte packets every 10 ms (1 Mbit/s): packet k leaves a at
//! 10k ms, reaches r at 10k + 2 ms (1 ms serialisation + 1 ms propagation) and b at 10k + 4 ms.

use rantcp_core::{Duration, Time};
use rantcp_net::{Device, FlowKind, FlowSpec, NodeId, Sim};
use rantcp_nf::{
    Action, Ctx, Feedback, FlowKey, NetworkFunction, Outbox, Output, Point, Points, RanView,
    SampleSink, SampleValue, SeriesColumn, Verdict,
};
use rantcp_tcp::TcpConfig;
use rantcp_wire::Packet;
use std::net::Ipv4Addr;
use std::sync::{Arc, Mutex};

mod support;
use support::{A, B};

struct Net {
    sim: Sim,
    a: NodeId,
    r: NodeId,
    b: NodeId,
}

fn net() -> Net {
    let (sim, a, r, b) = support::line3(1, support::link(10_000_000, 1));
    Net { sim, a, r, b }
}

fn cbr(n: &mut Net) -> usize {
    n.sim.add_flow(FlowSpec {
        name: "cbr".into(),
        kind: FlowKind::UdpCbr {
            rate_bps: 1_000_000,
            packet_bytes: 1250,
        },
        src: n.a,
        dst: n.b,
        src_port: 40000,
        dst_port: 5000,
        start: Time::ZERO,
        tcp_sender: TcpConfig::default(),
        tcp_receiver: TcpConfig::default(),
    })
}

fn bulk(n: &mut Net) -> usize {
    n.sim.add_flow(FlowSpec {
        name: "bulk".into(),
        kind: FlowKind::Bulk {
            bytes: None,
            write: None,
        },
        src: n.a,
        dst: n.b,
        src_port: 40000,
        dst_port: 5201,
        start: Time::ZERO,
        tcp_sender: TcpConfig::default(),
        tcp_receiver: TcpConfig::default(),
    })
}

type Log = Arc<Mutex<Vec<(Time, Point, u8)>>>;

/// Records (time, point, TTL) of every packet, then applies `rule` to the packet's index.
struct Probe {
    points: Points,
    log: Log,
    rule: fn(usize) -> Verdict,
    out: Outbox,
}

impl Probe {
    fn new(points: Points, rule: fn(usize) -> Verdict) -> (Self, Log) {
        let log = Log::default();
        (
            Probe {
                points,
                log: log.clone(),
                rule,
                out: Outbox::default(),
            },
            log,
        )
    }
}

impl NetworkFunction for Probe {
    fn kind(&self) -> &'static str {
        "probe"
    }
    fn points(&self) -> Points {
        self.points
    }
    fn handle_packet(&mut self, cx: &Ctx, p: &mut Packet) -> Verdict {
        let mut log = self.log.lock().unwrap();
        log.push((cx.now, cx.point, p.ip.ttl));
        (self.rule)(log.len() - 1)
    }
    fn poll_output(&mut self) -> Option<Output> {
        self.out.pop()
    }
}

#[test]
fn forward_point_sees_forwarded_packets_after_the_ttl_decrement() {
    let mut n = net();
    let f = cbr(&mut n);
    let (probe, log) = Probe::new(Points::FORWARD | Points::HOST, |_| Verdict::Pass);
    n.sim.add_function(n.r, Box::new(probe));
    n.sim.run_until(Time::from_millis(35)).unwrap();
    let log = log.lock().unwrap();
    // Packets 0..=3 reach r at 2, 12, 22, 32 ms; none is addressed to r.
    let want: Vec<(Time, Point, u8)> = (0..4)
        .map(|k| (Time::from_millis(10 * k + 2), Point::Forward(n.r), 63))
        .collect();
    assert_eq!(*log, want);
    assert_eq!(n.sim.flow_result(f).udp_received_packets, 4);
    let reps = n.sim.function_reports();
    assert_eq!(reps.len(), 1);
    assert_eq!((reps[0].node, reps[0].kind), (n.r, "probe"));
    assert_eq!(reps[0].report["dropped"], 0);
}

#[test]
fn drop_and_consume_keep_packets_out_of_the_path() {
    let mut n = net();
    let f = cbr(&mut n);
    // Drop every second packet, consume every third of the others.
    let (probe, _) = Probe::new(Points::FORWARD, |k| match k % 6 {
        1 | 3 | 5 => Verdict::Drop("odd"),
        0 => Verdict::Consume,
        _ => Verdict::Pass,
    });
    n.sim.add_function(n.r, Box::new(probe));
    n.sim.run_until(Time::from_millis(595)).unwrap(); // packets 0..=59 reach b
    let r = n.sim.flow_result(f);
    assert_eq!(r.udp_sent_packets, 60);
    assert_eq!(r.udp_received_packets, 20);
    let rep = &n.sim.function_reports()[0].report;
    assert_eq!(rep["dropped"], 30);
    assert_eq!(rep["consumed"], 10);
}

#[test]
fn host_point_sees_packets_for_the_node_before_demultiplexing() {
    let mut n = net();
    let f = cbr(&mut n);
    let (probe, log) = Probe::new(Points::FORWARD | Points::HOST, |_| Verdict::Consume);
    n.sim.add_function(n.b, Box::new(probe));
    n.sim.run_until(Time::from_millis(25)).unwrap();
    let log = log.lock().unwrap();
    assert_eq!(
        *log,
        vec![
            (Time::from_millis(4), Point::Host(n.b), 63),
            (Time::from_millis(14), Point::Host(n.b), 63),
            (Time::from_millis(24), Point::Host(n.b), 63),
        ]
    );
    assert_eq!(n.sim.flow_result(f).udp_received_packets, 0);
}

/// Holds every packet it sees for `hold`, then emits it: consume, timers and emit together.
struct Delay {
    hold: Duration,
    points: Points,
    held: std::collections::VecDeque<(Time, Packet)>,
    out: Outbox,
    emitted: u64,
}

impl Delay {
    fn new(hold: Duration, points: Points) -> Self {
        Delay {
            hold,
            points,
            held: Default::default(),
            out: Outbox::default(),
            emitted: 0,
        }
    }
}

impl NetworkFunction for Delay {
    fn kind(&self) -> &'static str {
        "delay"
    }
    fn points(&self) -> Points {
        self.points
    }
    fn handle_packet(&mut self, cx: &Ctx, p: &mut Packet) -> Verdict {
        self.held.push_back((cx.now + self.hold, *p));
        Verdict::Consume
    }
    fn poll_timeout(&self) -> Option<Time> {
        self.held.front().map(|x| x.0)
    }
    fn handle_timeout(&mut self, now: Time, _ran: Option<&dyn RanView>) {
        while self.held.front().is_some_and(|x| x.0 <= now) {
            let (_, p) = self.held.pop_front().unwrap();
            self.out.emit(p);
            self.emitted += 1;
        }
    }
    fn poll_output(&mut self) -> Option<Output> {
        self.out.pop()
    }
    fn sample(&mut self, now: Time, _ran: Option<&dyn RanView>, out: &mut SampleSink) {
        out.push(
            "delay_held",
            &[
                ("time_s", SampleValue::F64(now.as_secs_f64())),
                ("held", SampleValue::I64(self.held.len() as i64)),
            ],
        );
    }
    fn report(&self) -> serde_json::Value {
        serde_json::json!({ "emitted": self.emitted })
    }
}

#[test]
fn consumed_packets_emitted_at_a_timer_are_routed_from_the_node() {
    let mut n = net();
    let f = cbr(&mut n);
    n.sim.add_function(
        n.r,
        Box::new(Delay::new(Duration::from_millis(9), Points::FORWARD)),
    );
    n.sim.set_sample_interval(Duration::from_millis(10));
    n.sim.run_until(Time::from_millis(12)).unwrap();
    assert_eq!(
        n.sim.flow_result(f).udp_received_packets,
        0,
        "held at r until 11 ms"
    );
    n.sim.run_until(Time::from_millis(13)).unwrap();
    // Reached r at 2 ms, emitted at 11 ms, at b 2 ms later.
    assert_eq!(
        n.sim.flow_result(f).first_delivery,
        Some(Time::from_millis(13))
    );
    n.sim.run_until(Time::from_millis(100)).unwrap();
    let r = n.sim.flow_result(f);
    assert_eq!(r.last_delivery, Some(Time::from_millis(93)));
    assert_eq!(r.udp_received_packets, 9);
    let rep = &n.sim.function_reports()[0].report;
    // Packet 9 reached r at 92 ms and is still held.
    assert_eq!(
        (rep["emitted"].as_u64(), rep["consumed"].as_u64()),
        (Some(9), Some(10))
    );
    // One sample row every 10 ms; at each, exactly one packet is held (packet k from 10k + 2
    // to 10k + 11 ms).
    let s = &n.sim.function_series()[0];
    assert_eq!(s.name, "delay_held");
    assert_eq!(s.columns[1].1, SeriesColumn::I64(vec![1; 10]));
}

#[test]
fn a_host_function_can_hold_and_reinject_packets_into_its_own_stack() {
    let run = |hold: Option<u64>| {
        let mut n = net();
        let f = bulk(&mut n);
        if let Some(ms) = hold {
            n.sim.add_function(
                n.b,
                Box::new(Delay::new(Duration::from_millis(ms), Points::HOST)),
            );
        }
        n.sim.run_until(Time::from_secs(2)).unwrap();
        let r = n.sim.flow_result(f).clone();
        let rtt_min = n.sim.flow_tcp(f).0.unwrap().rtt_min.unwrap();
        (r, rtt_min)
    };
    let (plain, plain_rtt) = run(None);
    let (held, held_rtt) = run(Some(3));
    assert!(held.delivered_bytes > 1_000_000, "{}", held.delivered_bytes);
    // Every packet into b waits 3 ms: the SYN and the first data segment.
    assert!(
        held.first_delivery.unwrap() >= plain.first_delivery.unwrap() + Duration::from_millis(6),
        "{:?} vs {:?}",
        held.first_delivery,
        plain.first_delivery
    );
    assert!(
        held_rtt >= plain_rtt + Duration::from_millis(3),
        "{held_rtt} vs {plain_rtt}"
    );
}

/// On the first data segment it forwards, asks for feedback to the flow's sender.
struct Informer {
    delay: Duration,
    sent_at: Arc<Mutex<Option<Time>>>,
    out: Outbox,
}

impl NetworkFunction for Informer {
    fn kind(&self) -> &'static str {
        "informer"
    }
    fn points(&self) -> Points {
        Points::FORWARD
    }
    fn handle_packet(&mut self, cx: &Ctx, p: &mut Packet) -> Verdict {
        let mut at = self.sent_at.lock().unwrap();
        if at.is_none() && p.payload_len > 0 {
            *at = Some(cx.now);
            self.out.action(Action::Feedback {
                flow: FlowKey::of(p),
                fb: Feedback {
                    sampled_at: cx.now,
                    rate_bps: Some(1e6),
                    queue_bytes: Some(1000),
                },
                delay: self.delay,
            });
        }
        Verdict::Pass
    }
    fn poll_output(&mut self) -> Option<Output> {
        self.out.pop()
    }
}

#[test]
fn feedback_from_a_node_function_reaches_the_sender_after_its_delay() {
    let mut n = net();
    let f = bulk(&mut n);
    let sent_at = Arc::new(Mutex::new(None));
    n.sim.add_function(
        n.r,
        Box::new(Informer {
            delay: Duration::from_millis(7),
            sent_at: sent_at.clone(),
            out: Outbox::default(),
        }),
    );
    n.sim.run_until(Time::from_millis(500)).unwrap();
    let t = sent_at.lock().unwrap().expect("a data segment passed r");
    let r = n.sim.flow_result(f);
    assert_eq!(r.feedback_received, 1);
    assert_eq!(r.last_feedback_at, Some(t + Duration::from_millis(7)));
    assert_eq!(n.sim.function_actions_dropped(), 0);
}

/// A device joining a and b directly that carries packets after 1 ms and, for every data
/// segment it carries, sends the sender feedback with a 3 ms delay (as a RAN device does for
/// its functions).
struct FeedbackPipe {
    nodes: Vec<(Ipv4Addr, NodeId)>,
    in_flight: std::collections::VecDeque<(Time, NodeId, Packet)>,
    actions: std::collections::VecDeque<Action>,
    informed: Vec<Time>,
}

impl Device for FeedbackPipe {
    fn handle_packet(&mut self, now: Time, _from: NodeId, p: Packet) {
        let to = self.nodes.iter().find(|(a, _)| *a == p.ip.dst).unwrap().1;
        if p.payload_len > 0 && self.informed.len() < 3 {
            self.informed.push(now);
            self.actions.push_back(Action::Feedback {
                flow: FlowKey::of(&p),
                fb: Feedback::default(),
                delay: Duration::from_millis(3),
            });
        }
        self.in_flight
            .push_back((now + Duration::from_millis(1), to, p));
    }
    fn handle_timeout(&mut self, _now: Time) {}
    fn poll_deliver(&mut self, now: Time) -> Option<(NodeId, Packet)> {
        if self.in_flight.front().is_some_and(|x| x.0 <= now) {
            self.in_flight.pop_front().map(|(_, n, p)| (n, p))
        } else {
            None
        }
    }
    fn poll_timeout(&self) -> Option<Time> {
        self.in_flight.front().map(|x| x.0)
    }
    fn poll_action(&mut self) -> Option<Action> {
        self.actions.pop_front()
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

#[test]
fn feedback_from_a_device_reaches_the_sender_after_its_delay() {
    let mut sim = Sim::new(1);
    let a = sim.add_node("a", A);
    let b = sim.add_node("b", B);
    let d = sim.add_device(Box::new(FeedbackPipe {
        nodes: vec![(A, a), (B, b)],
        in_flight: Default::default(),
        actions: Default::default(),
        informed: Vec::new(),
    }));
    let ia = sim.attach(a, d, "radio");
    let ib = sim.attach(b, d, "radio");
    sim.add_route(a, Ipv4Addr::UNSPECIFIED, 0, ia);
    sim.add_route(b, Ipv4Addr::UNSPECIFIED, 0, ib);
    let f = sim.add_flow(FlowSpec {
        name: "bulk".into(),
        kind: FlowKind::Bulk {
            bytes: None,
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
    sim.run_until(Time::from_millis(200)).unwrap();
    let pipe = sim
        .device(d)
        .as_any()
        .downcast_ref::<FeedbackPipe>()
        .unwrap();
    let last = *pipe.informed.last().unwrap();
    let r = sim.flow_result(f);
    assert_eq!(r.feedback_received, 3);
    assert_eq!(r.last_feedback_at, Some(last + Duration::from_millis(3)));
}

#[test]
fn feedback_for_a_flow_with_no_tcp_sender_is_counted_not_delivered() {
    let mut n = net();
    cbr(&mut n);
    struct Bad(Outbox, bool);
    impl NetworkFunction for Bad {
        fn kind(&self) -> &'static str {
            "bad"
        }
        fn points(&self) -> Points {
            Points::FORWARD
        }
        fn handle_packet(&mut self, _cx: &Ctx, p: &mut Packet) -> Verdict {
            if !self.1 {
                self.1 = true;
                // UDP: no TCP endpoint sends it. And a purge, which a node cannot do.
                self.0.action(Action::Feedback {
                    flow: FlowKey::of(p),
                    fb: Feedback::default(),
                    delay: Duration::ZERO,
                });
                self.0.action(Action::PurgeDl {
                    rnti: 1,
                    flow: FlowKey::of(p),
                });
            }
            Verdict::Pass
        }
        fn poll_output(&mut self) -> Option<Output> {
            self.0.pop()
        }
    }
    n.sim
        .add_function(n.r, Box::new(Bad(Outbox::default(), false)));
    n.sim.run_until(Time::from_millis(50)).unwrap();
    assert_eq!(n.sim.function_actions_dropped(), 2);
}

#[test]
fn hashed_demux_keeps_many_connections_apart() {
    // 50 bulk flows from a to b on distinct ports, one listener each on port 5201.
    let mut n = net();
    let flows: Vec<usize> = (0..50u16)
        .map(|i| {
            n.sim.add_flow(FlowSpec {
                name: format!("f{i}"),
                kind: FlowKind::Bulk {
                    bytes: Some(20_000 + i as u64),
                    write: None,
                },
                src: n.a,
                dst: n.b,
                src_port: 40000 + i,
                dst_port: 5201,
                start: Time::from_millis(i as u64),
                tcp_sender: TcpConfig::default(),
                tcp_receiver: TcpConfig::default(),
            })
        })
        .collect();
    n.sim.run_until(Time::from_secs(3)).unwrap();
    for (i, &f) in flows.iter().enumerate() {
        assert_eq!(
            n.sim.flow_result(f).delivered_bytes,
            20_000 + i as u64,
            "flow {i}"
        );
    }
    assert_eq!(n.sim.resets_sent(), 0);
}
