//! Network functions at the radio points (design.md §5, the contract of `rantcp_nf`): the
//! device's [`Chain`] and how the device keeps its side of the contract.
//!
//! | point | called | verdict / event |
//! |---|---|---|
//! | [`Point::DlIngress`] | a DL packet from the core for a known UE, before PDCP | drop, consume, or pass (maybe modified) into PDCP |
//! | [`Point::DlEgress`] | a DL packet the UE's RLC delivered in order, before the UE node | drop, consume, pass |
//! | [`Point::UlEgress`] | an UL packet the eNB's RLC delivered in order, before the eNB node | drop, consume, pass |
//! | [`Point::UeUlBuffer`] | after each arrival in a UE's uplink buffer; at each grant before the buffer is drained | [`rantcp_nf::BufferEvent`] |
//! | [`Points::DL_PULL`] | the function's DL backlog counts for the scheduler; at each new DL transport block of the UE, before RLC builds PDUs | [`NetworkFunction::pull_dl`] for the block's room |
//!
//! Outputs are carried out after each input the device handles and after each phase of its
//! timeout (events, function timers, slot): an emitted packet addressed to a UE goes down that
//! UE's bearer into PDCP/RLC, at the tail ([`Entry::Bearer`]) or ahead of every SDU RLC has
//! not begun to send ([`Entry::BearerFront`]) (it does not pass DlIngress again), or straight
//! to the UE node ([`Entry::Ue`], after DlEgress); any other packet goes up to the eNB/gNB node;
//! [`Action::PurgeDl`] removes the flow's unsent SDUs from the UE's bearer
//! ([`RanState::purge_dl`]) and hands what it removed back to the function that asked
//! ([`rantcp_nf::NetworkFunction::handle_purged`]); [`Action::Feedback`] waits for the simulator in
//! [`rantcp_nf::Device::poll_action`]. Function timers join the device's `poll_timeout`.
//!
//! Functions read the radio network through [`RanView`], implemented here over the device's
//! state (the chain lives outside that state, so the two are borrowed side by side). A
//! [`UeReport`] is computed when asked, without evaluating the channel, so reading it never
//! changes a run:
//! * `cqi`, `mcs`: the latest CQI report that reached the eNB by `now` among the measurements
//!   taken (the channel is measured when the UE is scheduled or sampled); 0 before the first;
//! * `achievable_rate_bps`: the transport-block bits of all PRBs at `mcs` in each DL slot of
//!   the duplex pattern (TS 36.213 §7.1.7 / TS 38.214 §5.1.3.2) per second, times 1 / (UEs of
//!   the cell with DL RLC backlog or a pending DL HARQ retransmission, this one included);
//!   0 while `cqi` is 0. A pulling function's own backlog is not counted;
//! * `rlc_queue_bytes`: the eNB RLC's buffer status (new SDUs with header estimates,
//!   retransmissions, STATUS); `rlc_queue_packets`: SDUs no byte of which has been sent;
//!   `rlc_empty`: no RLC bytes and no DL HARQ retransmission pending;
//! * `harq_feedback_slots`: the DL HARQ feedback delay in slots;
//! * `dl_packets_per_slot` (α): DL packets the UE's RLC delivered per DL slot in which the UE
//!   had an allocation (new or retransmission), over the last 64 to 128 such slots;
//! * `avg_dl_tbs_bytes`: mean size of the UE's new DL transport blocks since the start;
//! * `dl_full_tbs_bytes`: the transport block of all PRBs at `mcs` in a DL slot (mean over the
//!   DL slots of the duplex pattern); 0 while `cqi` is 0;
//! * `ul_buffer_bytes`: IP bytes in the UE's uplink buffer.
//!
//! [`NetworkFunction::pull_dl`] is called with `Ctx::point` = [`Point::DlIngress`]: pulled
//! packets enter between IP and PDCP, at the tail, in the order given.
//!
//! With no function attached every point costs one bit test per packet and nothing else.

use super::ue::{Dir, ENB};
use super::RanState;
use rantcp_core::{Duration, Time};
use rantcp_nf::{
    Action, Chain, Ctx, Emit, Entry, FlowKey, NetworkFunction, Output, Point, Points, Purged,
    RanView, Rnti, SampleSink, UeReport, Verdict,
};
use rantcp_wire::Packet;
use std::collections::VecDeque;
use std::net::Ipv4Addr;

/// The functions of a device and what they produced that the device's owner collects.
#[derive(Default)]
pub(super) struct Functions {
    pub chain: Chain,
    /// Their time-series rows.
    pub samples: SampleSink,
    /// Feedback for senders, waiting for the simulator.
    pub actions: VecDeque<Action>,
    /// Packets emitted towards the core (not to a UE).
    pub emitted_up: u64,
    /// Scratch for pulled packets.
    pulled: Vec<Packet>,
}

impl Functions {
    pub fn push(&mut self, f: Box<dyn NetworkFunction>) {
        self.chain.push(f);
    }
}

/// The view a function gets while it edits UE `rnti`'s uplink buffer, which is out of the
/// state meanwhile: `ul_buffer_bytes` of that UE is the buffer's size when the event began.
pub(super) struct BufferView<'a> {
    pub st: &'a RanState,
    pub rnti: Rnti,
    pub bytes: u64,
}

impl RanView for BufferView<'_> {
    fn slot(&self) -> Duration {
        self.st.slot()
    }
    fn rntis(&self) -> &[Rnti] {
        self.st.rntis()
    }
    fn rnti_of(&self, addr: Ipv4Addr) -> Option<Rnti> {
        self.st.rnti_of(addr)
    }
    fn addr_of(&self, rnti: Rnti) -> Option<Ipv4Addr> {
        self.st.addr_of(rnti)
    }
    fn ue_report(&self, rnti: Rnti, now: Time) -> Option<UeReport> {
        let mut r = self.st.ue_report(rnti, now)?;
        if rnti == self.rnti {
            r.ul_buffer_bytes = self.bytes;
        }
        Some(r)
    }
    fn ul_buffer_bytes(&self, rnti: Rnti, now: Time) -> Option<u64> {
        if rnti == self.rnti {
            return Some(self.bytes);
        }
        self.st.ul_buffer_bytes(rnti, now)
    }
    fn rlc_queue_bytes(&self, rnti: Rnti, now: Time) -> Option<u64> {
        self.st.rlc_queue_bytes(rnti, now)
    }
}

impl RanView for RanState {
    fn slot(&self) -> Duration {
        self.slot
    }
    fn rntis(&self) -> &[Rnti] {
        &self.rntis
    }
    fn rnti_of(&self, addr: Ipv4Addr) -> Option<Rnti> {
        self.by_addr.get(&addr).map(|&i| self.ues[i].rnti)
    }
    fn addr_of(&self, rnti: Rnti) -> Option<Ipv4Addr> {
        self.ue_index(rnti).map(|i| self.ues[i].addr)
    }
    fn ue_report(&self, rnti: Rnti, now: Time) -> Option<UeReport> {
        let i = self.ue_index(rnti)?;
        let u = &self.ues[i];
        let (cqi, mcs) = self
            .radio
            .latest_cqi(rnti, now)
            .map_or((0, 0), |r| (r.cqi, r.mcs));
        let dl = u.link(Dir::Dl);
        let rlc = &u.rlc[ENB];
        let rlc_queue_bytes = rlc.total_bytes(now);
        let retx = dl.harq.pending_retx().next().is_some();
        // Expected share of the cell's PRBs: one over the UEs with DL backlog, this one included.
        let others = self.cells[u.cell]
            .ues
            .iter()
            .filter(|&&k| k != i && self.dl_backlogged(k, now))
            .count();
        let achievable_rate_bps = if cqi == 0 {
            0.0
        } else {
            self.dl_peak_bps(rnti, mcs, u.layers) / (others + 1) as f64
        };
        let c = &dl.counters;
        Some(UeReport {
            rnti,
            cell: u.cell,
            cqi,
            mcs,
            achievable_rate_bps,
            rlc_queue_bytes,
            rlc_queue_packets: rlc.unsent_sdus() as u64,
            rlc_empty: rlc_queue_bytes == 0 && !retx,
            harq_feedback_slots: (self.cfg.harq.feedback_delay.as_nanos()
                / self.slot.as_nanos().max(1)) as u32,
            dl_packets_per_slot: u.dl_per_slot.rate(c.packets_delivered),
            dl_full_tbs_bytes: if cqi == 0 {
                0.0
            } else {
                self.dl_slot_tbs_bytes(rnti, mcs, u.layers)
            },
            avg_dl_tbs_bytes: if c.tb_new > 0 {
                c.tb_bytes as f64 / c.tb_new as f64
            } else {
                0.0
            },
            ul_buffer_bytes: u.ul_buf.bytes(),
        })
    }
    fn ul_buffer_bytes(&self, rnti: Rnti, _now: Time) -> Option<u64> {
        self.ue_index(rnti).map(|i| self.ues[i].ul_buf.bytes())
    }
    fn rlc_queue_bytes(&self, rnti: Rnti, now: Time) -> Option<u64> {
        let i = self.ue_index(rnti)?;
        Some(self.ues[i].rlc[ENB].total_bytes(now))
    }
}

impl RanState {
    /// Does UE `i` have downlink data or a downlink retransmission waiting?
    fn dl_backlogged(&self, i: usize, now: Time) -> bool {
        let u = &self.ues[i];
        u.rlc[ENB].total_bytes(now) > 0 || u.link(Dir::Dl).harq.pending_retx().next().is_some()
    }

    /// Transport-block bytes of every PRB of each DL slot of the duplex pattern at `mcs` (TS
    /// 36.213 §7.1.7 / TS 38.214 §5.1.3.2), the number of those DL slots and of all slots.
    fn dl_pattern_tbs(&self, rnti: Rnti, mcs: u8, layers: u8) -> (u64, u64, u64) {
        let n_prb = self.radio.carrier().n_prb as u32;
        let period = match self.radio.duplex() {
            crate::frame::Duplex::Fdd => 1,
            crate::frame::Duplex::Tdd(p) => p.len() as u64,
        };
        let (mut bytes, mut dl) = (0u64, 0u64);
        for k in (0..period).filter(|&k| self.radio.duplex().is_dl(k)) {
            bytes += self.radio.tb_size_bytes(rnti, k, n_prb, mcs, layers) as u64;
            dl += 1;
        }
        (bytes, dl, period)
    }

    /// Mean transport block of all PRBs at `mcs` in a DL slot, bytes.
    pub(super) fn dl_slot_tbs_bytes(&self, rnti: Rnti, mcs: u8, layers: u8) -> f64 {
        let (bytes, dl, _) = self.dl_pattern_tbs(rnti, mcs, layers);
        bytes as f64 / dl.max(1) as f64
    }

    /// Downlink bit/s of UE `rnti` alone in its cell at `mcs`: the pattern's transport-block
    /// bits over its duration.
    pub(super) fn dl_peak_bps(&self, rnti: Rnti, mcs: u8, layers: u8) -> f64 {
        let (bytes, _, period) = self.dl_pattern_tbs(rnti, mcs, layers);
        bytes as f64 * 8.0 / (period as f64 * self.slot.as_secs_f64())
    }

    /// A DL packet from the core for UE `i`: DlIngress functions, then PDCP/RLC.
    pub(super) fn dl_ingress(&mut self, now: Time, i: usize, mut p: Packet, nf: &mut Functions) {
        if nf.chain.wants(Points::DL_INGRESS) {
            let cx = Ctx {
                now,
                point: Point::DlIngress,
                rnti: Some(self.ues[i].rnti),
                ran: Some(&*self),
            };
            match nf.chain.handle_packet(&cx, &mut p) {
                Verdict::Pass => {}
                Verdict::Drop(_) => {
                    self.ues[i].link_mut(Dir::Dl).counters.nf_dropped += 1;
                    return;
                }
                Verdict::Consume => return,
            }
        }
        self.ues[i].link_mut(Dir::Dl).counters.packets_in += 1;
        self.enqueue_dl(now, i, p, false);
    }

    /// `p` into UE `i`'s downlink PDCP/RLC (tail, or `front`).
    fn enqueue_dl(&mut self, now: Time, i: usize, p: Packet, front: bool) {
        if self.ues[i].enqueue(Dir::Dl, now, p, front) {
            self.wake_slots(now);
        }
        self.note_ue_timers(i);
    }

    /// A new DL transport block of `tb_bytes` for UE `i`: the pulling functions fill the room
    /// RLC's backlog leaves, in order, before RLC builds its PDUs (seed 002's close coupling).
    pub(super) fn pull_dl(&mut self, now: Time, i: usize, tb_bytes: u32, nf: &mut Functions) {
        let held = self.ues[i].rlc[ENB].total_bytes(now);
        let room = (tb_bytes as u64).saturating_sub(held);
        if room == 0 {
            return;
        }
        let rnti = self.ues[i].rnti;
        let mut pulled = std::mem::take(&mut nf.pulled);
        pulled.clear();
        // Pulled packets enter where DlIngress is, between IP and PDCP.
        let cx = Ctx {
            now,
            point: Point::DlIngress,
            rnti: Some(rnti),
            ran: Some(&*self),
        };
        nf.chain.pull_dl(&cx, room, &mut pulled);
        for p in pulled.drain(..) {
            self.ues[i].link_mut(Dir::Dl).counters.nf_emitted += 1;
            self.ues[i].enqueue(Dir::Dl, now, p, false);
        }
        nf.pulled = pulled;
    }

    /// Carry out the functions' outputs (see the module docs).
    #[inline]
    pub(super) fn carry_out(&mut self, now: Time, nf: &mut Functions) {
        if !nf.chain.is_empty() && (nf.chain.may_have_output() || nf.chain.wants(Points::DL_PULL)) {
            self.carry_out_outputs(now, nf);
        }
    }

    fn carry_out_outputs(&mut self, now: Time, nf: &mut Functions) {
        while let Some(o) = nf.chain.poll_output() {
            match o {
                Output::Emit(e) => self.emit(now, e, nf),
                Output::Action(Action::PurgeDl { rnti, flow }) => {
                    let purged = self.purge_dl(rnti, &flow);
                    let k = nf.chain.last_output_from();
                    nf.chain.handle_purged(k, now, rnti, flow, purged);
                }
                Output::Action(a @ Action::Feedback { .. }) => nf.actions.push_back(a),
            }
        }
        if nf.chain.wants(Points::DL_PULL)
            && self.ues.iter().any(|u| nf.chain.dl_backlog(u.rnti) > 0)
        {
            self.wake_slots(now);
        }
    }

    fn emit(&mut self, now: Time, e: Emit, nf: &mut Functions) {
        match self.by_addr.get(&e.packet.ip.dst) {
            Some(&i) => {
                self.ues[i].link_mut(Dir::Dl).counters.nf_emitted += 1;
                match e.entry {
                    Entry::Bearer => self.enqueue_dl(now, i, e.packet, false),
                    Entry::BearerFront => self.enqueue_dl(now, i, e.packet, true),
                    Entry::Ue => self.out.push_back((self.ues[i].node, e.packet)),
                }
            }
            None => {
                nf.emitted_up += 1;
                self.out.push_back((self.enb_node, e.packet));
            }
        }
    }

    /// Discard UE `rnti`'s downlink packets of `flow` that RLC has not begun to send (the RST
    /// tracker's purge, dissertation §4.5): from RLC's SDU queue and beside it. Returns what
    /// was removed; other flows' packets and SDUs RLC has begun to segment stay.
    pub(super) fn purge_dl(&mut self, rnti: Rnti, flow: &FlowKey) -> Purged {
        let Some(i) = self.ue_index(rnti) else {
            return Purged::default();
        };
        let u = &mut self.ues[i];
        let unsent = u.rlc[ENB].unsent_sdus();
        let l = u.link_mut(Dir::Dl);
        let mut out = Purged::default();
        let mut ids: Vec<u64> = Vec::new();
        for (id, p) in l.sdus.unsent(unsent) {
            if FlowKey::of(p) == *flow {
                ids.push(*id);
                out.packets += 1;
                out.ip_bytes += p.len() as u64;
                out.payload_bytes += p.payload_len as u64;
            }
        }
        if ids.is_empty() {
            return out;
        }
        ids.sort_unstable();
        l.sdus.remove_unsent(unsent, &ids);
        out.sdu_bytes = u.rlc[ENB].purge_sdus(|id| ids.binary_search(&id).is_ok());
        out
    }
}
