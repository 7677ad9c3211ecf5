//! The per-slot MAC loop of every cell (TS 36.321 §5.3.1 / §5.4.1, TS 38.321 §5.3.1 /
//! §5.4.1): PDCCH budget, downlink scheduling from RLC buffer status and the latest CQI,
//! uplink grants from the eNB's view of reported buffers, and the transmission of a transport
//! block on one HARQ process, shared by both directions: decode with the slot's SINR (chase
//! combining over attempts, [`crate::radio::RadioEnvironment::decode`]), then the HARQ
//! feedback and, if decoded, the delivery to the peer's RLC become events (`pending.rs`).
//!
//! * Downlink, slot n: UEs with RLC backlog (or backlog a pulling network function holds,
//!   [`rantcp_nf::Points::DL_PULL`]) or a pending HARQ retransmission are ranked by the
//!   scheduler; a new transport block is split among logical channels (`mac::mux`) and filled
//!   by the eNB's RLC at once; MCS from the latest CQI report (none before the first). A CQI-0
//!   report from a UE whose average link is below CQI 1 but within HARQ reach of MCS 0 gets
//!   MCS 0 (the downlink coverage floor; one from a fade is waited out).
//! * Uplink, slot n: grants for slot n + k2 if that slot carries uplink (TS 36.213 §8, TS 38.214
//!   §6.1.2.1); retransmission grants keep the first transmission's PRBs; the UE fills the
//!   block when it transmits (`uplink.rs`). The UL MCS comes from the UL SINR at grant time
//!   at the 10 % BLER target, and a grant spans at most the UE's power-headroom limit
//!   (`crate::ul_phy`: power control, PHR, link adaptation).
//! * TDD: DL data only in slots whose type carries DL; an UL grant only if slot n + k2 is an
//!   UL slot. DCIs: DL first, then UL, at most `pdcch_grants_per_slot` per cell.

use super::functions::Functions;
use super::pending::Pending;
use super::ue::{Dir, ENB};
use super::RanState;
use crate::mac::mux::{dl_tx_opportunities, dl_tx_opportunities_nr};
use crate::mac::sched::SchedUe;
use rantcp_core::Time;
use rantcp_nf::Points;

impl RanState {
    /// One slot of every cell that serves UEs.
    pub(super) fn run_slot(&mut self, now: Time, nf: &mut Functions) {
        let slot_idx = self.radio.carrier().slot_index(now);
        let dl_ok = self.radio.duplex().is_dl(slot_idx);
        let ul_tx_slot = slot_idx + self.cfg.k2_slots as u64;
        let ul_ok = self.radio.duplex().is_ul(ul_tx_slot);
        self.slots_run += 1;
        self.last_slot = Some(now);
        for c in 0..self.cells.len() {
            if self.cells[c].ues.is_empty() {
                continue;
            }
            self.cells[c].pdcch.reset();
            self.cells[c].slots += 1;
            let dcis_before = self.cells[c].dcis;
            if dl_ok {
                self.cells[c].dl_slots += 1;
                self.schedule_dl(now, c, slot_idx, nf);
            }
            if self.radio.duplex().is_ul(slot_idx) {
                self.cells[c].ul_slots += 1;
            }
            if ul_ok {
                self.schedule_ul(now, c, ul_tx_slot);
            }
            // PDCCH use of this subframe (seed 003 Figure 12).
            let cell = &mut self.cells[c];
            let used = (cell.dcis - dcis_before) as usize;
            let k = used.min(cell.pdcch_hist.len() - 1);
            cell.pdcch_hist[k] += 1;
            if self.cfg.record_packet_series {
                let s = &mut self.packet_series.pdcch;
                while cell.pdcch_row_next < now {
                    s.time_s.push(cell.pdcch_row_next.as_secs_f64());
                    s.cell.push(c as i64);
                    s.dcis.push(0);
                    cell.pdcch_row_next += self.slot;
                }
                cell.pdcch_row_next = now + self.slot;
                s.time_s.push(now.as_secs_f64());
                s.cell.push(c as i64);
                s.dcis.push(used as i64);
            }
        }
    }

    fn schedule_dl(&mut self, now: Time, c: usize, slot_idx: u64, nf: &mut Functions) {
        let sc = &mut self.sc;
        sc.sched_ues.clear();
        sc.sched_mcs.clear();
        sc.sched_mcs.resize(self.ues.len() + 1, 0);
        for k in 0..self.cells[c].ues.len() {
            let i = self.cells[c].ues[k];
            let u = &self.ues[i];
            if !u.connected() {
                // Radio link failure: the UE is not scheduled until re-established.
                continue;
            }
            let backlog = u.rlc[ENB].total_bytes(now) + nf.chain.dl_backlog(u.rnti);
            let harq_retx = u.link(Dir::Dl).harq.pending_retx().next();
            if backlog == 0 && harq_retx.is_none() {
                continue;
            }
            let (rnti, layers) = (u.rnti, u.layers);
            let (mcs, cqi, reported) = match self.radio.cqi_report(rnti, now) {
                Some(r) => (r.mcs, r.cqi, true),
                None => (0, 0, false),
            };
            let sinr = self.radio.sinr_db(rnti, now);
            let u = &mut self.ues[i];
            u.counters.sinr_sum_db += sinr;
            u.counters.sinr_samples += 1;
            u.last_cqi = cqi;
            u.last_mcs = mcs;
            let free_harq = u.link(Dir::Dl).harq.free_process();
            // CQI 0 ("out of range", TS 36.213 Table 7.2.3-1): from a fade the scheduler waits
            // it out; from the average link, waiting gains nothing and the UE gets MCS 0 if
            // HARQ carries it there (the downlink coverage floor).
            let covered = cqi > 0
                || (reported
                    && self.radio.dl_coverage_floor(
                        rnti,
                        layers,
                        self.cfg.harq.max_retx as u32 + 1,
                    ));
            let bpp = if covered {
                self.radio.bytes_per_prb(rnti, slot_idx, mcs, layers)
            } else {
                0.0
            };
            sc.sched_mcs[i] = mcs;
            sc.sched_ues.push(SchedUe {
                rnti,
                bytes_per_prb: bpp,
                backlog_bytes: backlog,
                harq_retx,
                free_harq,
                max_prb: u16::MAX,
                min_prb: 0,
            });
        }
        if sc.sched_ues.is_empty() {
            return;
        }
        sc.allocs.clear();
        let budget = self.cells[c].pdcch.remaining();
        {
            let radio = &self.radio;
            let ues = &self.ues;
            let by_rnti = &self.by_rnti;
            let mcs_of = &sc.sched_mcs;
            self.cells[c].dl_sched.schedule_with(
                now,
                &sc.sched_ues,
                budget,
                |su, n| {
                    let i = by_rnti[su.rnti as usize] as usize;
                    radio.tb_size_bytes(su.rnti, slot_idx, n as u32, mcs_of[i], ues[i].layers)
                },
                &mut sc.allocs,
            );
        }
        let n_alloc = sc.allocs.len();
        self.cells[c].pdcch.consume(n_alloc as u16);
        self.cells[c].dcis += n_alloc as u64;
        let pull = nf.chain.wants(Points::DL_PULL);
        for k in 0..n_alloc {
            let a = self.sc.allocs[k];
            let i = self.by_rnti[a.rnti as usize] as usize;
            let h = a.harq_id as usize;
            if a.is_retx {
                let l = self.ues[i].link_mut(Dir::Dl);
                l.harq.start_retx(now, a.harq_id);
                l.counters.tb_retx += 1;
            } else {
                if pull {
                    self.pull_dl(now, i, a.tb_bytes, nf);
                }
                let u = &mut self.ues[i];
                let bs = u.rlc[ENB].buffer_status(now);
                let ops = &mut self.sc.ops;
                ops.clear();
                if self.nr {
                    dl_tx_opportunities_nr(a.tb_bytes, a.rnti, a.harq_id, &[bs], ops);
                } else {
                    dl_tx_opportunities(a.tb_bytes, a.rnti, a.harq_id, &[bs], ops);
                }
                let l = &mut u.links[Dir::Dl as usize];
                let tb = &mut l.tbs[h];
                tb.pdus.clear();
                for op in ops.iter() {
                    u.rlc[ENB].handle_tx_opportunity(now, *op, &mut tb.pdus);
                }
                if tb.pdus.is_empty() {
                    continue;
                }
                tb.mcs = self.sc.sched_mcs[i];
                l.harq.start_new(now, a.harq_id, a.n_prb, a.tb_bytes, ());
                l.counters.tb_new += 1;
                l.counters.tb_bytes += a.tb_bytes as u64;
                u.dl_since_ul_grant = true;
            }
            self.cells[c].dl_prbs += a.n_prb as u64;
            let u = &mut self.ues[i];
            let delivered = u.link(Dir::Dl).counters.packets_delivered;
            u.dl_per_slot.scheduled(delivered);
            self.transmit(now, Dir::Dl, i, a.harq_id, a.n_prb);
        }
    }

    fn schedule_ul(&mut self, now: Time, c: usize, tx_slot: u64) {
        let layers = self.cfg.ul_layers;
        let min_tbs = self.cfg.ul_min_useful_tbs();
        let max_tx = 1 + self.cfg.ul_harq_max_retx as u32;
        let (pro_bytes, pro_period) = (
            self.cfg.ul_proactive_grant_bytes,
            self.cfg.ul_proactive_period,
        );
        let sc = &mut self.sc;
        sc.sched_ues.clear();
        for k in 0..self.cells[c].ues.len() {
            let i = self.cells[c].ues[k];
            let u = &self.ues[i];
            if !u.connected() {
                continue;
            }
            let harq_retx = u.link(Dir::Ul).harq.pending_retx().next();
            let mut backlog = self.cells[c].ul_sched.tracker.backlog(u.rnti);
            // Vendor option: a proactive grant for the ACKs of downlink data sent since the
            // last uplink grant (see `RanConfig::ul_proactive_grant_bytes`).
            let proactive = if pro_bytes > 0
                && backlog == 0
                && u.dl_since_ul_grant
                && u.last_ul_grant.is_none_or(|t| now >= t + pro_period)
            {
                backlog = pro_bytes as u64;
                pro_bytes as u64
            } else {
                0
            };
            if backlog == 0 && harq_retx.is_none() {
                continue;
            }
            let rnti = u.rnti;
            let mut free_harq = u.link(Dir::Ul).harq.free_process();
            // The power-headroom limit of a grant and the rate there (`crate::ul_phy`): a
            // power-limited UE gets at most the PRBs beyond which its TBS would not grow.
            let (mut max_prb, _, mut tb) = self.radio.ul_grant_limit(rnti, now, tx_slot, layers);
            // ... and at least the smallest grant it can use (a BSR and an RLC PDU, TS 36.321
            // §5.4.3.1, TS 36.322 §6.2.1): where the limit's TBS is below it, the grant widens
            // to the most robust allocation that carries it, below the BLER target if it must
            // (HARQ combining), instead of a stream of grants that carry nothing; a UE that
            // not even HARQ combining would carry there at its large-scale SINR is out of
            // uplink coverage and gets no new grant (HARQ retransmissions go on).
            let mut min_prb = 0;
            match self
                .radio
                .ul_min_useful_grant(rnti, now, tx_slot, layers, min_tbs, max_tx)
            {
                Some((m, _, b)) => {
                    min_prb = m;
                    if tb < min_tbs {
                        (max_prb, tb) = (m, b);
                    }
                }
                None => {
                    free_harq = None;
                    if harq_retx.is_none() {
                        continue;
                    }
                }
            }
            let bpp = tb as f64 / max_prb.max(1) as f64;
            sc.sched_ues.push(SchedUe {
                rnti,
                bytes_per_prb: bpp.max(1.0),
                backlog_bytes: proactive,
                harq_retx,
                free_harq,
                max_prb: max_prb.min(u16::MAX as u32) as u16,
                min_prb: min_prb.min(u16::MAX as u32) as u16,
            });
        }
        if sc.sched_ues.is_empty() {
            return;
        }
        sc.grants.clear();
        let budget = self.cells[c].pdcch.remaining();
        let used = {
            let radio = &mut self.radio;
            self.cells[c].ul_sched.schedule_with(
                now,
                &sc.sched_ues,
                budget,
                |su, n| {
                    let mcs = radio.ul_grant_mcs(su.rnti, now, tx_slot, n as u32, layers, min_tbs);
                    radio.tb_size_bytes(su.rnti, tx_slot, n as u32, mcs, layers)
                },
                &mut sc.grants,
            )
        };
        self.cells[c].pdcch.consume(used);
        self.cells[c].dcis += used as u64;
        let tx_at = self.radio.carrier().slot_start(tx_slot);
        for k in 0..self.sc.grants.len() {
            let g = self.sc.grants[k];
            let i = self.by_rnti[g.rnti as usize] as usize;
            self.cells[c].ul_prbs += g.n_prb as u64;
            if g.is_retx {
                self.ues[i]
                    .link_mut(Dir::Ul)
                    .harq
                    .start_retx(now, g.harq_id);
            } else {
                if g.tb_bytes == 0 {
                    continue;
                }
                let mcs =
                    self.radio
                        .ul_grant_mcs(g.rnti, now, tx_slot, g.n_prb as u32, layers, min_tbs);
                let u = &mut self.ues[i];
                let l = u.link_mut(Dir::Ul);
                l.harq.start_new(now, g.harq_id, g.n_prb, g.tb_bytes, ());
                l.tbs[g.harq_id as usize].mcs = mcs;
                u.counters.ul_grants += 1;
                u.ul_granted_pending += g.tb_bytes as u64;
                u.dl_since_ul_grant = false;
                u.last_ul_grant = Some(now);
            }
            self.pending.push(
                tx_at,
                Pending::UlTx {
                    ue: i as u32,
                    harq: g.harq_id,
                    tb_bytes: g.tb_bytes,
                    n_prb: g.n_prb,
                    retx: g.is_retx,
                },
            );
        }
    }

    /// Transport block of HARQ process `harq` of direction `dir` goes on air now (first
    /// transmission or retransmission, `n_prb` PRBs): the receiver decodes it with this slot's
    /// SINR; the HARQ feedback and, if decoded, the PDUs' arrival at the peer RLC become
    /// events. The decoded block's PDUs leave the HARQ buffer at once, so that a later block on
    /// the same process cannot overwrite them before the receiver handles them.
    pub(super) fn transmit(&mut self, now: Time, dir: Dir, i: usize, harq: u8, n_prb: u16) {
        let h = harq as usize;
        let u = &mut self.ues[i];
        let (rnti, layers) = (u.rnti, u.layers);
        let l = u.link_mut(dir);
        l.counters.prbs += n_prb as u64;
        let mcs = l.tbs[h].mcs;
        let attempt = l.harq.process(harq).tx_count as u32 - 1;
        let (ok, feedback, processing) = match dir {
            Dir::Dl => (
                self.radio.decode(rnti, harq, now, mcs, attempt, layers),
                self.cfg.harq.feedback_delay,
                self.cfg.ue_processing,
            ),
            Dir::Ul => (
                self.radio.ul_decode(
                    rnti,
                    harq,
                    now,
                    mcs,
                    attempt,
                    self.cfg.ul_layers,
                    n_prb as u32,
                ),
                self.cfg.ul_harq_feedback,
                self.cfg.enb_processing,
            ),
        };
        let ue = i as u32;
        self.pending.push(
            now + feedback,
            Pending::Feedback {
                dir,
                ue,
                harq,
                ack: ok,
            },
        );
        if ok {
            let tb = &mut self.ues[i].link_mut(dir).tbs[h];
            let bsr = tb.bsr.take();
            let slab = self.slab.put(&mut tb.pdus);
            self.pending.push(
                now + self.slot + processing,
                Pending::Rx { dir, ue, slab, bsr },
            );
        }
        self.note_ue_timers(i);
    }

    /// Anything that needs the next slot?
    pub(super) fn needs_slots(&self, now: Time, nf: &Functions) -> bool {
        self.cells.iter().any(|cell| {
            cell.ues.iter().any(|&i| {
                let u = &self.ues[i];
                u.connected()
                    && (u.rlc[ENB].total_bytes(now) > 0
                        || u.link(Dir::Dl).harq.pending_retx().next().is_some()
                        || u.link(Dir::Ul).harq.pending_retx().next().is_some()
                        || cell.ul_sched.tracker.backlog(u.rnti) > 0
                        || nf.chain.dl_backlog(u.rnti) > 0)
            })
        })
    }
}
