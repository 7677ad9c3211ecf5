//! Network functions at the radio points of a `RanDevice` (design.md §5): one test per power
//! of the contract, against the deterministic radio of `support` (UE 1 at 100 m: CQI 15, one
//! 4587-byte block per 1 ms slot carrying 3.18 downlink packets of 1442 PDCP bytes).

mod support;

use rantcp_core::{Duration, Time};
use rantcp_nf::*;
use rantcp_ran::phy::cqi::DEFAULT_GAP_DB;
use rantcp_ran::phy::{cqi_from_sinr, lte_tbs_bits_for_mcs, McsTable};
use rantcp_wire::{Packet, TcpFlags};
use std::sync::{Arc, Mutex};
use support::*;

const NEAR: f64 = 100.0;

fn port(p: &Packet) -> u16 {
    p.as_tcp().map_or(0, |t| t.dst_port)
}
fn seq(p: &Packet) -> u32 {
    p.as_tcp().unwrap().seq
}

/// Drops packets to port 9, keeps those to port 7, passes the rest with TTL 7.
struct Gate;
impl NetworkFunction for Gate {
    fn kind(&self) -> &'static str {
        "gate"
    }
    fn points(&self) -> Points {
        Points::DL_INGRESS | Points::UL_EGRESS
    }
    fn handle_packet(&mut self, _cx: &Ctx, p: &mut Packet) -> Verdict {
        match port(p) {
            9 => Verdict::Drop("port 9"),
            7 => Verdict::Consume,
            _ => {
                p.ip.ttl = 7;
                Verdict::Pass
            }
        }
    }
}

#[test]
fn pass_drop_and_consume_at_dl_ingress_and_ul_egress() {
    let mut dev = device(&[NEAR], |c| c.ideal_bsr = true);
    dev.add_function(Box::new(Gate));
    let mut d = Driver::new(dev);
    for (k, port) in [80u16, 9, 7].into_iter().enumerate() {
        d.send(ms(0.2 + 0.1 * k as f64), ENB, dl(1, port, 1));
        d.send(
            ms(0.2 + 0.1 * k as f64),
            1,
            tcp(
                (ue_addr(1), 40000),
                (SERVER, port),
                1,
                1,
                rantcp_wire::TcpFlags::ACK,
                10,
            ),
        );
    }
    d.run_until(ms(30.0));
    let down = d.to_node(1);
    assert_eq!(down.len(), 1);
    assert_eq!(
        (down[0].0, port(&down[0].1), down[0].1.ip.ttl),
        (ms(3.0), 80, 7)
    );
    let up = d.to_node(ENB);
    assert_eq!(up.len(), 1, "{up:?}");
    assert_eq!((port(&up[0].1), up[0].1.ip.ttl), (80, 7));
    let c = d.dev.ue_counters(1).unwrap();
    // Dropped at ingress never enters the bearer; the uplink ones crossed the radio first.
    assert_eq!((c.dl_packets_in, c.dl_nf_dropped), (1, 1));
    assert_eq!((c.ul_packets_delivered, c.ul_nf_dropped), (3, 1));
    let r = d.dev.function_reports();
    assert_eq!(r[0].0, "gate");
    assert_eq!(
        (r[0].1["dropped"].as_u64(), r[0].1["consumed"].as_u64()),
        (Some(2), Some(2))
    );
}

/// At DlIngress, answers every data segment with an ACK from the UE (a PEP's early ACK).
#[derive(Default)]
struct EarlyAck {
    out: Outbox,
}
impl NetworkFunction for EarlyAck {
    fn kind(&self) -> &'static str {
        "early_ack"
    }
    fn points(&self) -> Points {
        Points::DL_INGRESS
    }
    fn handle_packet(&mut self, _cx: &Ctx, p: &mut Packet) -> Verdict {
        let t = *p.as_tcp().unwrap();
        let a = tcp(
            (p.ip.dst, t.dst_port),
            (p.ip.src, t.src_port),
            t.ack,
            t.seq + p.payload_len,
            TcpFlags::ACK,
            0,
        );
        self.out.emit(a);
        Verdict::Pass
    }
    fn poll_output(&mut self) -> Option<Output> {
        self.out.pop()
    }
}

#[test]
fn emit_upstream_reaches_the_enb_node_at_once() {
    let mut dev = device(&[NEAR], |_| {});
    dev.add_function(Box::new(EarlyAck::default()));
    let mut d = Driver::new(dev);
    d.send(ms(0.3), ENB, dl(1, 49152, 1));
    d.send(ms(0.4), ENB, dl(1, 49152, 1401));
    d.run_until(ms(5.0));
    let up = d.to_node(ENB);
    let acks: Vec<(Time, u32, std::net::Ipv4Addr)> = up
        .iter()
        .map(|(t, p)| (*t, p.as_tcp().unwrap().ack, p.ip.src))
        .collect();
    assert_eq!(
        acks,
        vec![(ms(0.3), 1401, ue_addr(1)), (ms(0.4), 2801, ue_addr(1))]
    );
    assert_eq!(d.dev.function_emitted_up(), 2);
    // The data still go down; the early ACKs never crossed the radio.
    assert_eq!(d.to_node(1).len(), 2);
    assert_eq!(d.dev.ue_counters(1).unwrap().ul_packets_in, 0);
}

/// Keeps packets to port 7; at `at` emits the first ahead of the bearer's unsent packets and
/// the second at the tail; records the RAN report's unsent-packet count around the emits.
struct Holder {
    at: Time,
    held: Vec<Packet>,
    out: Outbox,
    unsent: Arc<Mutex<Vec<u64>>>,
}
impl NetworkFunction for Holder {
    fn kind(&self) -> &'static str {
        "holder"
    }
    fn points(&self) -> Points {
        Points::DL_INGRESS
    }
    fn handle_packet(&mut self, _cx: &Ctx, p: &mut Packet) -> Verdict {
        if port(p) == 7 {
            self.held.push(*p);
            Verdict::Consume
        } else {
            Verdict::Pass
        }
    }
    fn poll_timeout(&self) -> Option<Time> {
        (!self.held.is_empty()).then_some(self.at)
    }
    fn handle_timeout(&mut self, now: Time, ran: Option<&dyn RanView>) {
        if now < self.at {
            return;
        }
        let r = ran.unwrap().ue_report(1, now).unwrap();
        self.unsent.lock().unwrap().push(r.rlc_queue_packets);
        let mut h = std::mem::take(&mut self.held).into_iter();
        self.out.emit_front(h.next().unwrap());
        self.out.emit(h.next().unwrap());
    }
    fn poll_output(&mut self) -> Option<Output> {
        self.out.pop()
    }
}

#[test]
fn emit_downstream_at_the_head_of_the_queue_and_at_the_tail() {
    let unsent = Arc::new(Mutex::new(Vec::new()));
    let mut dev = device(&[NEAR], |_| {});
    dev.add_function(Box::new(Holder {
        at: ms(1.5),
        held: Vec::new(),
        out: Outbox::default(),
        unsent: unsent.clone(),
    }));
    let mut d = Driver::new(dev);
    for k in 0..10u32 {
        d.send(ms(0.5), ENB, dl(1, 80, k));
    }
    d.send(ms(0.5), ENB, dl(1, 7, 100)); // X: goes ahead
    d.send(ms(0.5), ENB, dl(1, 7, 200)); // Y: goes to the tail
    d.run_until(ms(1.6));
    // The slot at 1 ms sent packets 0–2 and began 3: six unsent when the function runs,
    // seven after the front emit.
    assert_eq!(*unsent.lock().unwrap(), vec![6]);
    assert_eq!(d.dev.ue_report(1, ms(1.6)).unwrap().rlc_queue_packets, 8);
    d.run_until(ms(30.0));
    let order: Vec<u32> = d.to_node(1).iter().map(|x| seq(&x.1)).collect();
    assert_eq!(order, vec![0, 1, 2, 3, 100, 4, 5, 6, 7, 8, 9, 200]);
    let c = d.dev.ue_counters(1).unwrap();
    assert_eq!(
        (c.dl_packets_in, c.dl_nf_emitted, c.dl_packets_delivered),
        (10, 2, 12)
    );
}

/// Holds every packet the UE's RLC delivers for 2 ms, then lets it go on to the UE.
#[derive(Default)]
struct EgressDelay {
    held: std::collections::VecDeque<(Time, Packet)>,
    out: Outbox,
}
impl NetworkFunction for EgressDelay {
    fn kind(&self) -> &'static str {
        "egress_delay"
    }
    fn points(&self) -> Points {
        Points::DL_EGRESS
    }
    fn handle_packet(&mut self, cx: &Ctx, p: &mut Packet) -> Verdict {
        self.held.push_back((cx.now + Duration::from_millis(2), *p));
        Verdict::Consume
    }
    fn poll_timeout(&self) -> Option<Time> {
        self.held.front().map(|x| x.0)
    }
    fn handle_timeout(&mut self, now: Time, _ran: Option<&dyn RanView>) {
        while self.held.front().is_some_and(|x| x.0 <= now) {
            let p = self.held.pop_front().unwrap().1;
            self.out.emit_at(p, Entry::Ue);
        }
    }
    fn poll_output(&mut self) -> Option<Output> {
        self.out.pop()
    }
}

#[test]
fn emit_to_the_ue_after_dl_egress_skips_the_bearer() {
    let mut dev = device(&[NEAR], |_| {});
    dev.add_function(Box::new(EgressDelay::default()));
    let mut d = Driver::new(dev);
    d.send(ms(0.2), ENB, dl(1, 80, 1));
    d.run_until(ms(30.0));
    // Delivered by RLC at 3 ms (as without the function), handed to the UE 2 ms later, once:
    // it does not go down the bearer and past DlEgress again.
    let down = d.to_node(1);
    assert_eq!(down.iter().map(|x| x.0).collect::<Vec<_>>(), vec![ms(5.0)]);
    let c = d.dev.ue_counters(1).unwrap();
    assert_eq!(
        (c.dl_packets_in, c.dl_nf_emitted, c.dl_packets_delivered),
        (1, 1, 1)
    );
    assert_eq!(d.dev.function_reports()[0].1["consumed"], 1);
}

/// At `at`, asks the device to purge UE 1's queued packets of `flow`.
struct Purger {
    at: Option<Time>,
    flow: FlowKey,
    out: Outbox,
}
impl NetworkFunction for Purger {
    fn kind(&self) -> &'static str {
        "purger"
    }
    fn points(&self) -> Points {
        Points::NONE
    }
    fn poll_timeout(&self) -> Option<Time> {
        self.at
    }
    fn handle_timeout(&mut self, now: Time, _ran: Option<&dyn RanView>) {
        if self.at.is_some_and(|t| t <= now) {
            self.at = None;
            self.out.action(Action::PurgeDl {
                rnti: 1,
                flow: self.flow,
            });
        }
    }
    fn poll_output(&mut self) -> Option<Output> {
        self.out.pop()
    }
}

#[test]
fn purge_removes_one_flows_unsent_packets_and_no_other() {
    let flow80 = FlowKey::of(&dl(1, 80, 0));
    let mut dev = device(&[NEAR], |_| {});
    dev.add_function(Box::new(Purger {
        at: Some(ms(1.5)),
        flow: flow80,
        out: Outbox::default(),
    }));
    let mut d = Driver::new(dev);
    // Even packets to port 80, odd to port 81.
    for k in 0..12u32 {
        d.send(ms(0.5), ENB, dl(1, if k % 2 == 0 { 80 } else { 81 }, k));
    }
    d.run_until(ms(30.0));
    // Slot 1 ms sent 0–2 and began 3. Port 80's unsent packets (4, 6, 8, 10) are purged;
    // port 81's all arrive, and so does what RLC had begun.
    let got: Vec<u32> = d.to_node(1).iter().map(|x| seq(&x.1)).collect();
    assert_eq!(got, vec![0, 1, 2, 3, 5, 7, 9, 11]);
    // The direct call: nothing of flow 80 left; another UE or flow is a no-op.
    assert_eq!(d.dev.purge_dl(1, &flow80), 0);
    assert_eq!(d.dev.purge_dl(9, &flow80), 0);
}

#[test]
fn purge_returns_the_rlc_bytes_it_removed() {
    let mut d = Driver::new(device(&[NEAR], |_| {}));
    for k in 0..4u32 {
        d.send(ms(0.5), ENB, dl(1, 80 + (k % 2) as u16, k));
    }
    d.run_until(ms(0.6));
    // Two packets of flow 80, 1442 bytes each after PDCP.
    assert_eq!(d.dev.purge_dl(1, &FlowKey::of(&dl(1, 80, 0))), 2 * 1442);
    d.run_until(ms(30.0));
    let got: Vec<u32> = d.to_node(1).iter().map(|x| seq(&x.1)).collect();
    assert_eq!(got, vec![1, 3]);
}

/// What a buffer function saw: the event, the buffer's ACK numbers before and after, and the
/// RAN report's UL buffer bytes against the buffer's own.
type BufLog = Arc<Mutex<Vec<(BufferEvent, Vec<u32>, Vec<u32>, u64, u64)>>>;

/// Keeps only the newest pure ACK of each flow at every grant (seed 000's "Granted ACK" idea
/// without its fit rule).
struct NewestAck {
    log: BufLog,
}
impl NetworkFunction for NewestAck {
    fn kind(&self) -> &'static str {
        "newest_ack"
    }
    fn points(&self) -> Points {
        Points::UE_UL_BUFFER | Points::UL_FLOW_INDEX
    }
    fn handle_ul_buffer(&mut self, cx: &Ctx, ev: BufferEvent, q: &mut UlBuffer) {
        let acks = |q: &UlBuffer| {
            q.iter()
                .map(|e| e.packet.as_tcp().unwrap().ack)
                .collect::<Vec<_>>()
        };
        let before = acks(q);
        let report = cx.ran.unwrap().ue_report(cx.rnti.unwrap(), cx.now).unwrap();
        let seen = report.ul_buffer_bytes;
        assert_eq!(
            cx.ran.unwrap().rlc_queue_bytes(cx.rnti.unwrap(), cx.now),
            Some(report.rlc_queue_bytes)
        );
        if let BufferEvent::Grant { .. } = ev {
            let pure = |e: &UlEntry| e.packet.payload_len == 0;
            let flows: Vec<FlowKey> = q.iter().filter(|e| pure(e)).map(|e| e.flow).collect();
            for f in flows {
                let ids: Vec<u64> = q.flow_iter(&f).filter(|e| pure(e)).map(|e| e.id).collect();
                for id in &ids[..ids.len().saturating_sub(1)] {
                    q.discard(*id);
                }
            }
        }
        self.log
            .lock()
            .unwrap()
            .push((ev, before, acks(q), seen, q.bytes()));
    }
}

#[test]
fn ul_buffer_arrival_and_grant_events_see_and_edit_the_queue() {
    let log: BufLog = Arc::default();
    let mut dev = device(&[NEAR], |c| c.ideal_bsr = true);
    dev.add_function(Box::new(NewestAck { log: log.clone() }));
    let mut d = Driver::new(dev);
    // Flow A (port 1000) ACKs 1–4, flow B (port 2000) ACKs 11, 12, one data segment of A
    // (ack 0, 100 bytes), all before the first uplink slot (3 ms).
    let a = |n: u32| ack(1, 1000, n);
    let b = |n: u32| ack(1, 2000, n);
    let data = tcp(
        (ue_addr(1), 1000),
        (SERVER, 5201),
        1,
        0,
        rantcp_wire::TcpFlags::ACK,
        100,
    );
    let sent = [a(1), a(2), b(11), data, a(3), b(12), a(4)];
    for (k, p) in sent.iter().enumerate() {
        d.send(ms(2.1 + 0.1 * k as f64), 1, *p);
    }
    d.run_until(ms(30.0));
    let log = log.lock().unwrap();
    assert_eq!(log.len(), 8, "seven arrivals and one grant");
    for (k, (ev, before, after, seen, bytes)) in log[..7].iter().enumerate() {
        assert_eq!(*ev, BufferEvent::Arrival { id: k as u64 });
        let want: Vec<u32> = sent[..=k].iter().map(|p| p.as_tcp().unwrap().ack).collect();
        assert_eq!((before, after), (&want, &want));
        assert_eq!(seen, bytes, "the report sees the buffer being edited");
    }
    let (ev, before, after, seen, _) = &log[7];
    let BufferEvent::Grant {
        bytes,
        overhead_bytes,
        rlc_bytes,
        n_prb,
    } = *ev
    else {
        panic!("{ev:?}")
    };
    // Grant in slot 3 ms (ideal reporting of the whole buffer) used at 7 ms: it covers the
    // buffer (6 × 40 + 140 IP bytes, 2 + 3 bytes of PDCP/RLC headers each).
    assert_eq!((overhead_bytes, rlc_bytes), (5, 0));
    assert!(n_prb >= 1, "the block's PRBs");
    assert!(bytes >= 380 + 7 * 5, "{bytes}");
    assert_eq!(before, &vec![1, 2, 11, 0, 3, 12, 4]);
    assert_eq!(after, &vec![0, 12, 4]);
    assert_eq!(*seen, 380);
    // What reaches the eNB node: the data segment and the newest ACK of each flow, at 9 ms.
    let up: Vec<(Time, u32)> = d
        .to_node(ENB)
        .iter()
        .map(|(t, p)| (*t, p.as_tcp().unwrap().ack))
        .collect();
    assert_eq!(up, vec![(ms(9.0), 0), (ms(9.0), 12), (ms(9.0), 4)]);
    let c = d.dev.ue_counters(1).unwrap();
    assert_eq!(
        (c.ul_packets_in, c.ul_acks_in, c.ul_acks_delivered),
        (7, 6, 2)
    );
    assert_eq!(
        (c.ul_packets_delivered, c.ul_bytes_delivered),
        (3, 140 + 40 + 40)
    );
    let q = d.dev.ue_ul_buffer(1).unwrap();
    assert!(
        q.is_indexed(),
        "a function wants the buffer: flows are indexed"
    );
    assert_eq!(
        (
            q.counters.discarded,
            q.counters.discarded_bytes,
            q.counters.dequeued
        ),
        (4, 160, 3)
    );
}

/// Reads every UE's report at its timers and at every sample.
struct Reader {
    at: Vec<Time>,
    reports: Arc<Mutex<Vec<UeReport>>>,
}
impl NetworkFunction for Reader {
    fn kind(&self) -> &'static str {
        "reader"
    }
    fn points(&self) -> Points {
        Points::NONE
    }
    fn poll_timeout(&self) -> Option<Time> {
        self.at.first().copied()
    }
    fn handle_timeout(&mut self, now: Time, ran: Option<&dyn RanView>) {
        while self.at.first().is_some_and(|&t| t <= now) {
            self.at.remove(0);
            let ran = ran.unwrap();
            for &r in ran.rntis() {
                let rep = ran.ue_report(r, now).unwrap();
                // The per-packet accessor answers what the whole report says.
                assert_eq!(ran.rlc_queue_bytes(r, now), Some(rep.rlc_queue_bytes));
                self.reports.lock().unwrap().push(rep);
            }
            assert_eq!(ran.rlc_queue_bytes(99, now), None, "no such UE");
        }
    }
    fn sample(&mut self, now: Time, ran: Option<&dyn RanView>, out: &mut SampleSink) {
        let r = ran.unwrap().ue_report(1, now).unwrap();
        out.push(
            "reader_ue1",
            &[
                ("time_s", SampleValue::F64(now.as_secs_f64())),
                ("rate_bps", SampleValue::F64(r.achievable_rate_bps)),
                (
                    "rlc_queue_bytes",
                    SampleValue::I64(r.rlc_queue_bytes as i64),
                ),
            ],
        );
    }
}

#[test]
fn ran_reports_follow_the_phy_tables_and_the_queues() {
    const FAR: f64 = 600.0; // SINR 10.5 dB
    let reports = Arc::new(Mutex::new(Vec::new()));
    let mut dev = device(&[FAR, NEAR], |_| {});
    dev.add_function(Box::new(Reader {
        at: vec![ms(0.7), ms(2.5), ms(150.0)],
        reports: reports.clone(),
    }));
    let mut d = Driver::new(dev);
    for k in 0..40u32 {
        d.send(ms(0.5), ENB, dl(1, 80, k));
        d.send(ms(0.5), ENB, dl(2, 80, k));
    }
    // An uplink ACK that waits for its SR (10 ms) in UE 1's buffer.
    d.send(ms(0.2), 1, ack(1, 80, 1));
    d.run_until(ms(2.5));
    d.dev.sample(ms(2.5));
    d.run_until(ms(150.0));
    d.dev.sample(ms(150.0));
    let reports = reports.lock().unwrap();
    assert_eq!(reports.len(), 6);
    // 0.7 ms: no slot has run, but the UE measured its CSI at 0 ms (at every period, scheduled
    // or not; reported without delay here), so the report in hand is that one and the rate
    // its 50-PRB block per 1 ms slot, shared by the two backlogged UEs; 40 SDUs of 1442 + 2
    // RLC header bytes each wait; RLC has begun none.
    let r = reports[0];
    let cqi = cqi_from_sinr(
        d.dev.radio().large_scale(1).mean_sinr_db,
        McsTable::Lte.cqi_table(),
        DEFAULT_GAP_DB,
    );
    let mcs = McsTable::Lte.mcs_from_cqi(cqi);
    let rate = lte_tbs_bits_for_mcs(mcs, 50, 1).unwrap() as f64 * 1000.0 / 2.0;
    assert!(cqi > 0);
    assert_eq!(
        (r.rnti, r.cell, r.cqi, r.mcs, r.achievable_rate_bps),
        (1, 0, cqi, mcs, rate)
    );
    assert_eq!(
        (r.rlc_queue_bytes, r.rlc_queue_packets, r.rlc_empty),
        (40 * 1444, 40, false)
    );
    assert_eq!(
        (
            r.harq_feedback_slots,
            r.dl_packets_per_slot,
            r.avg_dl_tbs_bytes
        ),
        (4, 0.0, 0.0)
    );
    assert_eq!(r.ul_buffer_bytes, 40);
    // 2.5 ms: CQI from the fixed SINR by TS 36.213 Table 7.2.3-1 thresholds; the rate is the
    // 50-PRB block at that CQI's MCS per 1 ms slot, shared by the two backlogged UEs.
    for r in &reports[2..4] {
        let sinr = d.dev.radio().large_scale(r.rnti).mean_sinr_db;
        let cqi = cqi_from_sinr(sinr, McsTable::Lte.cqi_table(), DEFAULT_GAP_DB);
        let mcs = McsTable::Lte.mcs_from_cqi(cqi);
        assert_eq!((r.cqi, r.mcs), (cqi, mcs), "UE {}", r.rnti);
        let bits = lte_tbs_bits_for_mcs(mcs, 50, 1).unwrap() as f64;
        assert_eq!(r.achievable_rate_bps, bits * 1000.0 / 2.0);
        assert!(!r.rlc_empty && r.rlc_queue_packets > 0);
    }
    assert_eq!((reports[2].cqi, reports[3].cqi), (10, 15));
    // 150 ms: everything delivered (UE 1's ACK has left too); the figures from the counters.
    for r in &reports[4..6] {
        let c = d.dev.ue_counters(r.rnti).unwrap();
        assert_eq!(c.dl_packets_delivered, 40);
        assert_eq!(
            (r.rlc_queue_bytes, r.rlc_queue_packets, r.rlc_empty),
            (0, 0, true)
        );
        assert_eq!(
            r.avg_dl_tbs_bytes,
            c.dl_tb_bytes as f64 / c.dl_tb_new as f64
        );
        // Fewer than 64 scheduled slots: α over all of them (one block each).
        assert_eq!(
            r.dl_packets_per_slot,
            40.0 / (c.dl_tb_new + c.dl_tb_retx) as f64
        );
        assert_eq!(r.ul_buffer_bytes, 0);
        // Alone with backlog now? No one has backlog: the UE's share is the whole cell.
        let bits = lte_tbs_bits_for_mcs(r.mcs, 50, 1).unwrap() as f64;
        assert_eq!(r.achievable_rate_bps, bits * 1000.0);
    }
    // Samples: one row per call of Device::sample.
    let s = d.dev.function_samples();
    assert_eq!(s.rows("reader_ue1"), 2);
}

/// At DlIngress, sends the sender of every packet the UE's rate and queue (seed 002's loose
/// coupling), to arrive 5 ms later.
#[derive(Default)]
struct Loose {
    out: Outbox,
}
impl NetworkFunction for Loose {
    fn kind(&self) -> &'static str {
        "loose"
    }
    fn points(&self) -> Points {
        Points::DL_INGRESS
    }
    fn handle_packet(&mut self, cx: &Ctx, p: &mut Packet) -> Verdict {
        let r = cx.ran.unwrap().ue_report(cx.rnti.unwrap(), cx.now).unwrap();
        let fb = Feedback {
            sampled_at: cx.now,
            rate_bps: Some(r.achievable_rate_bps),
            queue_bytes: Some(r.rlc_queue_bytes),
        };
        self.out.action(Action::Feedback {
            flow: FlowKey::of(p),
            fb,
            delay: Duration::from_millis(5),
        });
        Verdict::Pass
    }
    fn poll_output(&mut self) -> Option<Output> {
        self.out.pop()
    }
}

#[test]
fn feedback_actions_surface_through_poll_action() {
    use rantcp_nf::Device;
    let mut dev = device(&[NEAR], |_| {});
    dev.add_function(Box::new(Loose::default()));
    assert_eq!(dev.poll_action(), None);
    dev.handle_packet(ms(0.3), ENB, dl(1, 80, 0));
    dev.handle_packet(ms(0.4), ENB, dl(1, 80, 1400));
    let flow = FlowKey::of(&dl(1, 80, 0));
    // The report in hand from 0 ms on is the one measured at 0 ms (no delay in this radio):
    // the whole 50-PRB block at its CQI's MCS per 1 ms slot.
    let cqi = cqi_from_sinr(
        dev.radio().large_scale(1).mean_sinr_db,
        McsTable::Lte.cqi_table(),
        DEFAULT_GAP_DB,
    );
    let mcs = McsTable::Lte.mcs_from_cqi(cqi);
    let rate = lte_tbs_bits_for_mcs(mcs, 50, 1).unwrap() as f64 * 1000.0;
    let want = |t: Time, q: u64| Action::Feedback {
        flow,
        fb: Feedback {
            sampled_at: t,
            rate_bps: Some(rate),
            queue_bytes: Some(q),
        },
        delay: Duration::from_millis(5),
    };
    // The report is read before the packet enters RLC: empty, then one SDU (1442 + 2).
    assert_eq!(dev.poll_action(), Some(want(ms(0.3), 0)));
    assert_eq!(dev.poll_action(), Some(want(ms(0.4), 1444)));
    assert_eq!(dev.poll_action(), None);
}

/// Wakes at 2.5 ms and at 7 ms, recording when it was called.
struct Alarm {
    at: Vec<Time>,
    calls: Arc<Mutex<Vec<Time>>>,
}
impl NetworkFunction for Alarm {
    fn kind(&self) -> &'static str {
        "alarm"
    }
    fn points(&self) -> Points {
        Points::NONE
    }
    fn poll_timeout(&self) -> Option<Time> {
        self.at.first().copied()
    }
    fn handle_timeout(&mut self, now: Time, _ran: Option<&dyn RanView>) {
        self.calls.lock().unwrap().push(now);
        self.at.retain(|&t| t > now);
    }
}

#[test]
fn function_timers_fire_at_their_time() {
    use rantcp_nf::Device;
    let calls = Arc::new(Mutex::new(Vec::new()));
    let mut dev = device(&[NEAR], |_| {});
    assert_eq!(dev.poll_timeout(), None);
    dev.add_function(Box::new(Alarm {
        at: vec![ms(2.5), ms(7.0)],
        calls: calls.clone(),
    }));
    assert_eq!(
        dev.poll_timeout(),
        Some(ms(2.5)),
        "an idle device wakes for its functions"
    );
    let mut d = Driver::new(dev);
    d.send(ms(0.5), ENB, dl(1, 80, 0));
    d.run_until(ms(20.0));
    assert_eq!(*calls.lock().unwrap(), vec![ms(2.5), ms(7.0)]);
    assert_eq!(d.to_node(1).len(), 1);
}

/// One grant's pull: (bytes asked, packet lengths handed over, packets left held).
type Pull = (u64, Vec<u32>, usize);

/// A sender co-located with the base station (seed 002's close coupling): keeps every
/// downlink packet and hands the MAC what each grant asks for.
struct Source {
    held: std::collections::VecDeque<Packet>,
    pulls: Arc<Mutex<Vec<Pull>>>,
}
impl NetworkFunction for Source {
    fn kind(&self) -> &'static str {
        "source"
    }
    fn points(&self) -> Points {
        Points::DL_INGRESS | Points::DL_PULL
    }
    fn handle_packet(&mut self, _cx: &Ctx, p: &mut Packet) -> Verdict {
        self.held.push_back(*p);
        Verdict::Consume
    }
    fn dl_backlog(&self, _rnti: Rnti) -> u64 {
        self.held.iter().map(|p| p.len() as u64).sum()
    }
    fn pull_dl(&mut self, _cx: &Ctx, bytes: u64, out: &mut Vec<Packet>) {
        let mut given = 0;
        let mut lens = Vec::new();
        while given < bytes {
            let Some(p) = self.held.pop_front() else {
                break;
            };
            given += p.len() as u64;
            lens.push(p.len());
            out.push(p);
        }
        self.pulls
            .lock()
            .unwrap()
            .push((bytes, lens, self.held.len()));
    }
}

#[test]
fn dl_pull_takes_what_each_grant_gives_in_order_without_rlc_drops() {
    let pulls = Arc::new(Mutex::new(Vec::new()));
    // An RLC buffer of 8000 bytes: the 30 packets (43 kB) pushed at once would overflow it.
    let mut dev = device(&[NEAR], |c| c.rlc.max_tx_buffer_bytes = 8000);
    dev.add_function(Box::new(Source {
        held: Default::default(),
        pulls: pulls.clone(),
    }));
    let mut d = Driver::new(dev);
    for k in 0..30u32 {
        d.send(ms(0.5), ENB, dl(1, 80, k));
    }
    d.run_until(ms(40.0));
    let got: Vec<u32> = d.to_node(1).iter().map(|x| seq(&x.1)).collect();
    assert_eq!(got, (0..30).collect::<Vec<_>>(), "all, in order");
    let (enb_rlc, _) = d.dev.ue_rlc_counters(1).unwrap();
    assert_eq!(enb_rlc.sdus_dropped, 0);
    let pulls = pulls.lock().unwrap();
    // First block: RLC is empty, so the whole 4587-byte block (CQI 15: MCS 28, 50 PRBs).
    let mcs = McsTable::Lte.mcs_from_cqi(15);
    assert_eq!(
        pulls[0].0,
        lte_tbs_bits_for_mcs(mcs, 50, 1).unwrap() as u64 / 8
    );
    for (asked, lens, left) in pulls.iter() {
        let given: u64 = lens.iter().map(|&l| l as u64).sum();
        // Exactly enough: at least the ask unless the sender ran dry, and the last packet was
        // needed to reach it (RLC segments it).
        assert!(given >= *asked || *left == 0, "{asked} {lens:?}");
        if let Some(&last) = lens.last() {
            assert!(
                given - (last as u64) < *asked,
                "no more than needed: {asked} {lens:?}"
            );
        }
    }
    let total: usize = pulls.iter().map(|p| p.1.len()).sum();
    assert_eq!(total, 30);
    assert_eq!(d.dev.ue_counters(1).unwrap().dl_nf_emitted, 30);
}
