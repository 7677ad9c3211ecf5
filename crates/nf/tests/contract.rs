//! The contract's shared pieces: the UE uplink buffer and the chain's dispatch rules.

use rantcp_core::{Duration, Time};
use rantcp_nf::*;
use rantcp_wire::{Ipv4Header, Packet, TcpFlags, TcpHeader, TcpOptions};
use std::net::Ipv4Addr;

const UE: Ipv4Addr = Ipv4Addr::new(10, 1, 0, 1);
const SRV: Ipv4Addr = Ipv4Addr::new(10, 0, 0, 1);

fn ack(dport: u16, ack: u32) -> Packet {
    Packet::tcp(
        Ipv4Header::new(UE, SRV),
        TcpHeader {
            src_port: 49152,
            dst_port: dport,
            seq: 1,
            ack,
            flags: TcpFlags::ACK,
            window: 100,
            urgent: 0,
            options: TcpOptions::default(),
        },
        0,
    )
}

fn acks_of(q: &UlBuffer) -> Vec<u32> {
    q.iter().map(|e| e.packet.as_tcp().unwrap().ack).collect()
}

#[test]
fn ul_buffer_is_fifo_with_o1_discards_and_flow_order() {
    let mut q = UlBuffer::new(0);
    q.index_flows();
    let t = Time::ZERO;
    // Two flows interleaved: A acks 1..=4, B acks 100, 200.
    let ids: Vec<u64> = [
        (5201, 1),
        (5200, 100),
        (5201, 2),
        (5201, 3),
        (5200, 200),
        (5201, 4),
    ]
    .iter()
    .map(|&(p, a)| q.push(t, ack(p, a)).unwrap())
    .collect();
    assert_eq!(ids, vec![0, 1, 2, 3, 4, 5]);
    assert_eq!(q.len(), 6);
    assert_eq!(q.bytes(), 6 * 40);
    let fa = FlowKey::of(&ack(5201, 0));
    let fb = FlowKey::of(&ack(5200, 0));
    assert_eq!(q.flow_ids(&fa), vec![0, 2, 3, 5]);
    assert_eq!(q.flow_ids(&fb), vec![1, 4]);
    // Discard in the middle and at the head.
    assert_eq!(q.discard(2).unwrap().packet.as_tcp().unwrap().ack, 2);
    assert!(q.discard(2).is_none(), "a packet is discarded once");
    assert_eq!(q.discard(0).unwrap().id, 0);
    assert_eq!(acks_of(&q), vec![100, 3, 200, 4]);
    assert_eq!(q.flow_ids(&fa), vec![3, 5]);
    assert_eq!(q.front().unwrap().id, 1);
    assert_eq!(q.counters.discarded, 2);
    assert_eq!(q.counters.discarded_bytes, 80);
    // FIFO out.
    assert_eq!(q.pop_front().unwrap().id, 1);
    assert_eq!(q.pop_front().unwrap().id, 3);
    assert_eq!(q.flow_ids(&fb), vec![4]);
    assert_eq!(q.get(4).unwrap().id, 4);
    assert!(q.get(3).is_none());
    // New arrivals keep consecutive ids.
    assert_eq!(q.push(t, ack(5201, 9)), Some(6));
    assert_eq!(q.flow_ids(&fa), vec![5, 6]);
    assert_eq!(q.counters.dequeued, 2);
    assert_eq!(q.len(), 3);
    assert_eq!(q.bytes(), 120);
    while q.pop_front().is_some() {}
    assert!(q.is_empty());
    assert_eq!(q.bytes(), 0);
    assert!(q.flow_ids(&fa).is_empty());
}

#[test]
fn ul_buffer_flow_index_gives_what_a_scan_gives() {
    let fa = FlowKey::of(&ack(5201, 0));
    let fb = FlowKey::of(&ack(5200, 0));
    let mut plain = UlBuffer::new(0);
    let mut indexed = UlBuffer::new(0);
    assert!(!indexed.is_indexed());
    for (k, q) in [&mut plain, &mut indexed].into_iter().enumerate() {
        for (i, &(p, a)) in [(5201, 1), (5200, 100), (5201, 2), (5201, 3)]
            .iter()
            .enumerate()
        {
            if k == 1 && i == 2 {
                // Indexing part-way builds the index from what is queued.
                q.index_flows();
            }
            q.push(Time::ZERO, ack(p, a));
        }
        q.discard(2);
        q.pop_front();
        q.push(Time::ZERO, ack(5200, 200));
    }
    assert!(indexed.is_indexed() && !plain.is_indexed());
    for f in [fa, fb] {
        assert_eq!(plain.flow_ids(&f), indexed.flow_ids(&f));
        let rev: Vec<u64> = indexed.flow_iter(&f).rev().map(|e| e.id).collect();
        assert_eq!(
            rev,
            plain.flow_iter(&f).rev().map(|e| e.id).collect::<Vec<_>>()
        );
    }
    assert_eq!(indexed.flow_ids(&fa), vec![3]);
    assert_eq!(indexed.flow_ids(&fb), vec![1, 4]);
}

#[test]
fn ul_buffer_byte_limit_refuses_and_counts() {
    let mut q = UlBuffer::new(100);
    assert!(q.push(Time::ZERO, ack(1, 1)).is_some());
    assert!(q.push(Time::ZERO, ack(1, 2)).is_some());
    assert!(q.push(Time::ZERO, ack(1, 3)).is_none());
    assert_eq!(q.counters.dropped_full, 1);
    assert_eq!(q.counters.arrived, 2);
}

#[test]
fn ul_buffer_discard_where_and_long_runs_stay_small() {
    let mut q = UlBuffer::new(0);
    for a in 0..10_000u32 {
        q.push(Time::ZERO, ack(5201, a));
        // Keep only the newest ACK of the flow (Active(1)).
        let f = FlowKey::of(&ack(5201, 0));
        let ids = q.flow_ids(&f);
        for id in &ids[..ids.len() - 1] {
            q.discard(*id);
        }
    }
    assert_eq!(q.len(), 1);
    assert_eq!(acks_of(&q), vec![9999]);
    assert_eq!(
        q.discard_where(|e| e.packet.as_tcp().unwrap().ack == 9999),
        1
    );
    assert!(q.is_empty());
}

/// A function that exercises every output: drops packets to port 9, consumes those to port 7
/// and emits a copy of them at its timer, asks for a purge and sends feedback.
#[derive(Default)]
struct Probe {
    out: Outbox,
    timer: Option<Time>,
    held: Vec<Packet>,
    seen: u64,
}

impl NetworkFunction for Probe {
    fn kind(&self) -> &'static str {
        "probe"
    }
    fn points(&self) -> Points {
        Points::DL_INGRESS | Points::UL_EGRESS
    }
    fn handle_packet(&mut self, cx: &Ctx, p: &mut Packet) -> Verdict {
        self.seen += 1;
        let port = p.as_tcp().unwrap().dst_port;
        match port {
            9 => Verdict::Drop("port 9"),
            7 => {
                self.held.push(*p);
                self.timer = Some(cx.now + Duration::from_millis(5));
                Verdict::Consume
            }
            _ => {
                p.ip.ttl = 7;
                Verdict::Pass
            }
        }
    }
    fn poll_timeout(&self) -> Option<Time> {
        self.timer
    }
    fn handle_timeout(&mut self, now: Time, _ran: Option<&dyn RanView>) {
        if self.timer.is_some_and(|t| t <= now) {
            self.timer = None;
            for p in self.held.drain(..) {
                self.out.emit_front(p);
                self.out.action(Action::PurgeDl {
                    rnti: 1,
                    flow: FlowKey::of(&p),
                });
            }
        }
    }
    fn poll_output(&mut self) -> Option<Output> {
        self.out.pop()
    }
    fn report(&self) -> serde_json::Value {
        serde_json::json!({ "seen": self.seen })
    }
}

struct UlOnly;
impl NetworkFunction for UlOnly {
    fn kind(&self) -> &'static str {
        "ul_only"
    }
    fn points(&self) -> Points {
        Points::UE_UL_BUFFER
    }
    fn handle_ul_buffer(&mut self, _cx: &Ctx, ev: BufferEvent, q: &mut UlBuffer) {
        if let BufferEvent::Arrival { id } = ev {
            if q.len() > 2 {
                q.discard(id);
            }
        }
    }
}

fn cx(point: Point, now: Time) -> Ctx<'static> {
    Ctx {
        now,
        point,
        rnti: Some(1),
        ran: None,
    }
}

#[test]
fn chain_dispatches_by_point_and_stops_at_drop_or_consume() {
    let mut c = Chain::new();
    assert!(!c.wants(Points::DL_INGRESS));
    c.push(Box::new(Probe::default()));
    c.push(Box::new(UlOnly));
    assert!(c.wants(Points::DL_INGRESS) && c.wants(Points::UE_UL_BUFFER));
    assert!(!c.wants(Points::FORWARD));
    let t = Time::from_millis(10);
    // Not subscribed: untouched.
    let mut p = ack(80, 1);
    assert_eq!(
        c.handle_packet(&cx(Point::DlEgress, t), &mut p),
        Verdict::Pass
    );
    assert_eq!(p.ip.ttl, 64);
    // Pass, modified in place.
    assert_eq!(
        c.handle_packet(&cx(Point::DlIngress, t), &mut p),
        Verdict::Pass
    );
    assert_eq!(p.ip.ttl, 7);
    let mut d = ack(9, 1);
    assert_eq!(
        c.handle_packet(&cx(Point::UlEgress, t), &mut d),
        Verdict::Drop("port 9")
    );
    let mut k = ack(7, 1);
    assert_eq!(
        c.handle_packet(&cx(Point::DlIngress, t), &mut k),
        Verdict::Consume
    );
    assert!(c.poll_output().is_none());
    assert_eq!(c.poll_timeout(), Some(Time::from_millis(15)));
    // Early timer calls are harmless.
    c.handle_timeout(Time::from_millis(14), None);
    assert!(c.poll_output().is_none());
    c.handle_timeout(Time::from_millis(15), None);
    assert_eq!(c.poll_timeout(), None);
    match c.poll_output() {
        Some(Output::Emit(e)) => {
            assert_eq!(e.entry, rantcp_nf::Entry::BearerFront);
            assert_eq!(e.packet, k);
        }
        o => panic!("expected an emitted packet, got {o:?}"),
    }
    assert!(matches!(
        c.poll_output(),
        Some(Output::Action(Action::PurgeDl { rnti: 1, .. }))
    ));
    assert!(c.poll_output().is_none());
    let reps = c.reports();
    assert_eq!(reps[0].0, "probe");
    assert_eq!(reps[0].1["seen"], 3);
    assert_eq!(reps[0].1["dropped"], 1);
    assert_eq!(reps[0].1["consumed"], 1);
    assert_eq!(reps[1].1["dropped"], 0);
}

#[test]
fn chain_hands_buffer_events_to_buffer_functions_only() {
    let mut c = Chain::new();
    c.push(Box::new(Probe::default()));
    c.push(Box::new(UlOnly));
    let mut q = UlBuffer::new(0);
    for a in 0..5 {
        let id = q.push(Time::ZERO, ack(5201, a)).unwrap();
        c.handle_ul_buffer(
            &cx(Point::UeUlBuffer, Time::ZERO),
            BufferEvent::Arrival { id },
            &mut q,
        );
    }
    assert_eq!(acks_of(&q), vec![0, 1]);
    assert_eq!(q.counters.discarded, 3);
    assert_eq!(c.dl_backlog(1), 0, "no pulling function");
}

/// The RAN moves a UE's buffer out of its state for every event a function sees (issue 19: an
/// attached-but-off filter costs nothing measurable): at most 128 bytes moves inline, larger
/// costs a memcpy call per move.
#[test]
fn ul_buffer_moves_without_memcpy() {
    assert!(
        std::mem::size_of::<UlBuffer>() <= 128,
        "{} bytes",
        std::mem::size_of::<UlBuffer>()
    );
}

/// Emits one packet for every input it is handed, whichever the kind.
#[derive(Default)]
struct Echo {
    out: Outbox,
}
impl NetworkFunction for Echo {
    fn kind(&self) -> &'static str {
        "echo"
    }
    fn points(&self) -> Points {
        Points::DL_INGRESS | Points::UE_UL_BUFFER | Points::DL_PULL
    }
    fn handle_packet(&mut self, _cx: &Ctx, p: &mut Packet) -> Verdict {
        self.out.emit(*p);
        Verdict::Pass
    }
    fn handle_ul_buffer(&mut self, _cx: &Ctx, _ev: BufferEvent, _q: &mut UlBuffer) {
        self.out.emit(ack(1, 1));
    }
    fn pull_dl(&mut self, _cx: &Ctx, _bytes: u64, _out: &mut Vec<Packet>) {
        self.out.emit(ack(2, 2));
    }
    fn handle_purged(&mut self, _now: Time, _rnti: Rnti, _flow: FlowKey, _p: Purged) {
        self.out.emit(ack(3, 3));
    }
    fn handle_timeout(&mut self, _now: Time, _ran: Option<&dyn RanView>) {
        self.out.emit(ack(4, 4));
    }
    fn poll_timeout(&self) -> Option<Time> {
        Some(Time::ZERO)
    }
    fn sample(&mut self, _now: Time, _ran: Option<&dyn RanView>, _out: &mut SampleSink) {
        self.out.emit(ack(5, 5));
    }
    fn poll_output(&mut self) -> Option<Output> {
        self.out.pop()
    }
}

/// A chain polls its functions only after handing one an input (outputs answer inputs, the
/// RAN's poll after every packet and timer phase is then a bit test): every kind of input
/// must re-arm the poll, and a poll that finds nothing disarms it.
#[test]
fn chain_polls_after_every_kind_of_input_and_not_otherwise() {
    let mut c = Chain::new();
    c.push(Box::new(Echo::default()));
    assert!(c.may_have_output(), "a new function may hold output");
    assert!(c.poll_output().is_none());
    assert!(!c.may_have_output(), "an empty poll disarms");
    let t = Time::ZERO;
    let port = |o: Option<(usize, Output)>| match o {
        Some((0, Output::Emit(e))) => e.packet.as_tcp().unwrap().dst_port,
        o => panic!("expected an emitted packet from function 0, got {o:?}"),
    };
    let expect = |c: &mut Chain, want: u16, what: &str| {
        assert!(c.may_have_output(), "{what} re-arms the poll");
        assert_eq!(port(c.poll_output_from()), want, "{what}");
        assert!(c.poll_output_from().is_none(), "{what}: one output");
        assert!(!c.may_have_output(), "{what}: the empty poll disarms");
    };
    let mut p = ack(80, 1);
    c.handle_packet(&cx(Point::DlIngress, t), &mut p);
    expect(&mut c, 80, "handle_packet");
    // A point no function wants hands nothing.
    c.handle_packet(&cx(Point::DlEgress, t), &mut p);
    assert!(!c.may_have_output(), "an unwanted point hands no input");
    let mut q = UlBuffer::new(0);
    let id = q.push(t, ack(5201, 1)).unwrap();
    c.handle_ul_buffer(
        &cx(Point::UeUlBuffer, t),
        BufferEvent::Arrival { id },
        &mut q,
    );
    expect(&mut c, 1, "handle_ul_buffer");
    c.pull_dl(&cx(Point::DlIngress, t), 1500, &mut Vec::new());
    expect(&mut c, 2, "pull_dl");
    c.handle_purged(0, t, 1, FlowKey::of(&p), Purged::default());
    expect(&mut c, 3, "handle_purged");
    c.handle_timeout(t, None);
    expect(&mut c, 4, "handle_timeout");
    c.sample(t, None, &mut SampleSink::default());
    expect(&mut c, 5, "sample");
}
