//! The device's own events: layer-2 happenings due at a later instant than the slot that
//! caused them, ordered by (time, insertion order) as the simulator orders its events
//! (design.md §3), and what the device does when each falls due. Both directions share one
//! handler per kind:
//!
//! * [`Pending::Feedback`]: a transmission's HARQ ACK/NACK reaches the sender's MAC
//!   (DL: `harq.feedback_delay` after the slot, LTE FDD n+4, TS 36.213 §10.1; UL:
//!   `ul_harq_feedback` after the PUSCH, TS 36.213 §8) and frees the process, asks for a
//!   retransmission, or gives the transport block up (TS 36.321 §5.3.2.2 / §5.4.2.2);
//! * [`Pending::Rx`]: a decoded transport block reaches the receiving RLC one slot plus the
//!   receiver's processing delay after it was sent; RLC delivers SDUs in order (TS 36.322
//!   §5.1.3.2.3) and their IP packets leave for the receiving node through the egress point
//!   ([`rantcp_nf::Point::DlEgress`] / [`rantcp_nf::Point::UlEgress`]); an uplink block's BSR
//!   reaches the eNB's uplink scheduler (TS 36.321 §5.4.5);
//! * [`Pending::UlTx`]: the UE transmits on PUSCH k2 slots after its grant (TS 36.213 §8,
//!   TS 38.214 §6.1.2.1) — see `uplink.rs`.
//!
//! Decoded transport blocks carry their RLC PDUs in a slab of reused vectors ([`PduSlab`]), so
//! steady state allocates nothing here.

use super::counters::is_pure_ack;
use super::functions::Functions;
use super::ue::Dir;
use super::RanState;
use crate::mac::harq::HarqOutcome;
use crate::mac::sap::HarqFeedback;
use crate::mac::ul::BsrReport;
use crate::rlc::RlcPdu;
use rantcp_core::Time;
use rantcp_nf::{Ctx, Verdict};
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// An event of the device. See the module docs.
#[derive(Clone, Copy, Debug)]
pub(super) enum Pending {
    Feedback {
        dir: Dir,
        ue: u32,
        harq: u8,
        ack: bool,
    },
    Rx {
        dir: Dir,
        ue: u32,
        /// Index into the [`PduSlab`].
        slab: u32,
        bsr: Option<BsrReport>,
    },
    UlTx {
        ue: u32,
        harq: u8,
        tb_bytes: u32,
        n_prb: u16,
        retx: bool,
    },
}

/// Events by (time, insertion order); items live in a reused table.
#[derive(Default)]
pub(super) struct PendingQueue {
    heap: BinaryHeap<Reverse<(Time, u64, usize)>>,
    items: Vec<Pending>,
    free: Vec<usize>,
    seq: u64,
}

impl PendingQueue {
    pub fn push(&mut self, at: Time, p: Pending) {
        let idx = match self.free.pop() {
            Some(i) => {
                self.items[i] = p;
                i
            }
            None => {
                self.items.push(p);
                self.items.len() - 1
            }
        };
        self.seq += 1;
        self.heap.push(Reverse((at, self.seq, idx)));
    }

    /// When the next event is due.
    #[inline]
    pub fn next_time(&self) -> Option<Time> {
        self.heap.peek().map(|r| r.0 .0)
    }

    /// The next event due at or before `now`.
    #[inline]
    pub fn pop_due(&mut self, now: Time) -> Option<Pending> {
        let &Reverse((at, _, idx)) = self.heap.peek()?;
        if at > now {
            return None;
        }
        self.heap.pop();
        self.free.push(idx);
        Some(self.items[idx])
    }
}

/// Vectors of RLC PDUs on their way to the receiver, reused.
#[derive(Default)]
pub(super) struct PduSlab {
    slots: Vec<Vec<RlcPdu>>,
    free: Vec<u32>,
}

impl PduSlab {
    /// Move `v`'s PDUs into a slot (`v` gets the slot's empty vector back); the slot index.
    pub fn put(&mut self, v: &mut Vec<RlcPdu>) -> u32 {
        let i = match self.free.pop() {
            Some(i) => i,
            None => {
                self.slots.push(Vec::new());
                (self.slots.len() - 1) as u32
            }
        };
        std::mem::swap(&mut self.slots[i as usize], v);
        i
    }
    /// The PDUs of slot `i`; hand the vector back with [`PduSlab::release`].
    pub fn take(&mut self, i: u32) -> Vec<RlcPdu> {
        std::mem::take(&mut self.slots[i as usize])
    }
    pub fn release(&mut self, i: u32, mut v: Vec<RlcPdu>) {
        v.clear();
        self.slots[i as usize] = v;
        self.free.push(i);
    }
}

impl RanState {
    /// Run every event due at or before `now`.
    pub(super) fn run_pending(&mut self, now: Time, nf: &mut Functions) {
        while let Some(item) = self.pending.pop_due(now) {
            match item {
                Pending::Feedback { dir, ue, harq, ack } => {
                    self.on_harq_feedback(now, dir, ue as usize, harq, ack)
                }
                Pending::Rx { dir, ue, slab, bsr } => {
                    self.on_rx(now, dir, ue as usize, slab, bsr, nf)
                }
                Pending::UlTx {
                    ue,
                    harq,
                    tb_bytes,
                    n_prb,
                    retx,
                } => self.ul_transmit(now, ue as usize, harq, tb_bytes, n_prb, retx, nf),
            }
        }
    }

    /// HARQ feedback of direction `dir` reaches the sender (TS 36.321 §5.3.2.2, §5.4.2.2).
    fn on_harq_feedback(&mut self, now: Time, dir: Dir, i: usize, harq: u8, ack: bool) {
        let u = &mut self.ues[i];
        let rnti = u.rnti;
        let l = u.link_mut(dir);
        let fb = HarqFeedback {
            rnti,
            harq_id: harq,
            ack,
        };
        match l.harq.handle_feedback(now, fb) {
            HarqOutcome::Retx => self.wake_slots(now),
            HarqOutcome::Failed(()) => {
                l.counters.tb_failed += 1;
                let tb = &mut l.tbs[harq as usize];
                if !l.sdus.in_order() {
                    // NR UM never resends: the SDUs with a piece in this block are lost.
                    for f in tb
                        .pdus
                        .iter()
                        .filter_map(|p| p.as_data())
                        .flat_map(|d| &d.fields)
                    {
                        l.sdus.forget(f.sdu_id);
                    }
                }
                tb.pdus.clear();
            }
            _ => {}
        }
    }

    /// A decoded transport block of direction `dir` reaches the receiving RLC; its SDUs
    /// delivered in order leave for the receiving node through the egress point.
    fn on_rx(
        &mut self,
        now: Time,
        dir: Dir,
        i: usize,
        slab: u32,
        bsr: Option<BsrReport>,
        nf: &mut Functions,
    ) {
        let v = self.slab.take(slab);
        let rx = &mut self.ues[i].rlc[dir.rx()];
        for pdu in &v {
            rx.handle_pdu(now, pdu);
        }
        self.slab.release(slab, v);
        if let Some(bsr) = bsr {
            // TS 36.321 §5.4.5: the BSR MAC CE reaches the eNB's uplink scheduler.
            let u = &mut self.ues[i];
            u.counters.bsr_rx += 1;
            if !self.cfg.ideal_bsr {
                let (rnti, cell) = (u.rnti, u.cell);
                self.cells[cell].ul_sched.handle_bsr(rnti, &bsr);
            }
        }
        self.deliver(now, dir, i, nf);
        self.ues[i].forget_lost(dir);
        // The receiving entity may now owe a STATUS PDU: its node's MAC must learn about it.
        match dir {
            Dir::Dl => {
                self.sync_bsr(i, now);
                // A STATUS PDU's NACKs may have counted a retransmission up to
                // maxRetxThreshold at the UE's RLC.
                self.check_rlc_max_retx(i, now);
            }
            Dir::Ul => self.wake_slots(now),
        }
        self.note_ue_timers(i);
    }

    /// Hand the SDUs the receiving RLC of `dir` delivered to the receiving node: the UE (DL)
    /// or the eNB/gNB node towards the core (UL), through the egress point's functions.
    fn deliver(&mut self, now: Time, dir: Dir, i: usize, nf: &mut Functions) {
        let point = dir.egress();
        let wants = nf.chain.wants(point.bit());
        loop {
            let u = &mut self.ues[i];
            let Some(id) = u.rlc[dir.rx()].pop_delivered() else {
                break;
            };
            if dir == Dir::Ul {
                if let Some(t) = u.take_ul_arrival(id) {
                    // Uplink LTE packet delay (seed 003 Figure 11): UE buffer → eNB RLC.
                    let d = now.saturating_since(t).as_nanos();
                    let c = &mut u.counters;
                    c.ul_delay_n += 1;
                    c.ul_delay_sum_ns += d as u128;
                    c.ul_delay_max_ns = c.ul_delay_max_ns.max(d);
                    if self.cfg.record_packet_series {
                        let s = &mut self.packet_series.ul_delay;
                        s.time_s.push(now.as_secs_f64());
                        s.rnti.push(u.rnti as i64);
                        s.delay_s.push(d as f64 * 1e-9);
                    }
                }
            }
            let u = &mut self.ues[i];
            let l = &mut u.links[dir as usize];
            let Some(mut p) = l.sdus.take(id) else {
                continue;
            };
            l.counters.packets_delivered += 1;
            l.counters.bytes_delivered += p.len() as u64;
            l.counters.acks_delivered += is_pure_ack(&p) as u64;
            let to = match dir {
                Dir::Dl => u.node,
                Dir::Ul => self.enb_node,
            };
            if wants {
                let cx = Ctx {
                    now,
                    point,
                    rnti: Some(self.ues[i].rnti),
                    ran: Some(&*self),
                };
                match nf.chain.handle_packet(&cx, &mut p) {
                    Verdict::Pass => {}
                    Verdict::Drop(_) => {
                        self.ues[i].link_mut(dir).counters.nf_dropped += 1;
                        continue;
                    }
                    Verdict::Consume => continue,
                }
            }
            self.out.push_back((to, p));
        }
    }
}
