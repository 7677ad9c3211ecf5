//! The UE side of the uplink: IP packets from the UE node into its per-bearer uplink buffer
//! ([`rantcp_nf::UlBuffer`], before PDCP: TS 36.323 §5.1.1 / TS 38.323 §5.2.1), the UE MAC's
//! scheduling request and buffer status reporting (TS 36.321 §5.4.4, §5.4.5, through
//! [`crate::mac::ul::UeUlMac`]; or the ideal reporting of ns-3 LENA/mmWave), and the use of a
//! grant k2 slots after it was issued: the UE MAC builds the MAC PDU (BSR, logical channel
//! prioritisation, §5.4.3.1), the buffer is drained FIFO into PDCP/RLC for each logical
//! channel's share, and RLC builds its PDUs.
//!
//! When the UE MAC gives an SR up (dsr-TransMax, TS 36.321 §5.4.4) it runs random access
//! ([`crate::mac::ra`]); the PHY judgements are made here: a preamble is detected if its SNR
//! ([`crate::radio::RadioEnvironment::prach_snr_db`]) reaches
//! [`super::RanConfig::prach_detection_snr_db`]; Msg3 is decoded if the UE is within uplink
//! coverage for the smallest useful block within maxHARQ-Msg3Tx transmissions (the rule the
//! uplink scheduler grants by, [`crate::radio::RadioEnvironment::ul_min_useful_grant`]), and
//! its BSR then reaches the eNB's uplink scheduler. A random access problem is a radio link
//! failure (TS 36.331 §5.3.11.3) and starts re-establishment (§5.3.7): MAC reset, bearers
//! suspended, the eNB schedules the UE in neither direction and forgets its reported buffer;
//! after `rlf_search_delay` (T311 running, the same cell selected again) random access for the
//! re-establishment request; on success the connection is re-established: HARQ reset, RLC
//! re-established on both sides (TS 36.322 §5.4: everything discarded), and PDCP (TS 36.323
//! §5.2.1.1, AM) resends every SDU not delivered, in order, through the fresh RLC entities
//! (UM, §5.2.1.2: those SDUs are lost). A failed re-establishment random access goes back to
//! the search (T301 expiry and RRC_IDLE are not modelled: the UE retries for ever).
//!
//! The other radio link failures of §5.3.11.3 take the same path: T310 expiry after
//! out-of-sync indications of radio link monitoring ([`super::rlm`], when
//! [`super::RanConfig::rlm`] is set) and the UE's RLC reaching maxRetxThreshold (TS 36.322
//! §5.2.1, when [`super::RanConfig::rlf_on_rlc_max_retx`] is set).
//!
//! Network functions at [`rantcp_nf::Point::UeUlBuffer`] see every arrival
//! ([`BufferEvent::Arrival`], after the packet is appended) and every grant
//! ([`BufferEvent::Grant`], before the buffer is drained), and may discard queued packets
//! (seed 000's ACK filter).

use super::config::DRB_LCID;
use super::counters::is_pure_ack;
use super::functions::{BufferView, Functions};
use super::pending::Pending;
use super::ue::{Dir, Rrc, ENB, UE};
use super::RanState;
use crate::mac::harq::HarqEntity;
use crate::mac::ra::RaStep;
use crate::mac::sap::UlGrant;
use crate::mac::ul::{bsr_index, BsrKind, BsrReport};
use rantcp_core::{Duration, Time};
use rantcp_nf::{BufferEvent, Ctx, Point, Points};
use rantcp_wire::Packet;

/// What declared a radio link failure (TS 36.331 §5.3.11.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum RlfCause {
    /// A random access problem indicated by MAC.
    RandomAccess,
    /// T310 expiry after out-of-sync indications.
    RadioLinkMonitoring,
    /// The UE's RLC at maxRetxThreshold.
    RlcMaxRetx,
}

impl RanState {
    /// UE `i`'s node sends `p` into the radio network.
    pub(super) fn ul_arrival(&mut self, now: Time, i: usize, p: Packet, nf: &mut Functions) {
        let u = &mut self.ues[i];
        let l = u.link_mut(Dir::Ul);
        l.counters.packets_in += 1;
        l.counters.acks_in += is_pure_ack(&p) as u64;
        if let Some(id) = u.ul_buf.push(now, p) {
            self.ul_buffer_event(now, i, BufferEvent::Arrival { id }, nf);
        }
        self.sync_bsr(i, now);
        self.note_ue_timers(i);
    }

    /// Hand UE `i`'s uplink buffer to the functions that want it.
    fn ul_buffer_event(&mut self, now: Time, i: usize, ev: BufferEvent, nf: &mut Functions) {
        if !nf.chain.wants(Points::UE_UL_BUFFER) {
            return;
        }
        // The buffer leaves the state while the functions edit it, so that they can read the
        // rest of the radio network at the same time.
        let mut q = std::mem::take(&mut self.ues[i].ul_buf);
        let rnti = self.ues[i].rnti;
        let view = BufferView {
            st: self,
            rnti,
            bytes: q.bytes(),
        };
        let cx = Ctx {
            now,
            point: Point::UeUlBuffer,
            rnti: Some(rnti),
            ran: Some(&view),
        };
        nf.chain.handle_ul_buffer(&cx, ev, &mut q);
        self.ues[i].ul_buf = q;
    }

    /// Tell the UE MAC how much the bearer holds (uplink buffer + PDCP/RLC header estimate +
    /// RLC), TS 36.321 §5.4.5; with ideal reporting, the eNB's scheduler learns it at once.
    pub(super) fn sync_bsr(&mut self, i: usize, now: Time) {
        let per_pkt = self.cfg.ul_overhead_bytes() as u64;
        let u = &mut self.ues[i];
        let b = u.ul_buf.bytes() + u.ul_buf.len() as u64 * per_pkt + u.rlc[UE].total_bytes(now);
        u.ue_mac.handle_buffer_status(now, DRB_LCID, b);
        if self.cfg.ideal_bsr {
            // MAC subheaders per TB: a few bytes of margin.
            let want = (b + 4 * (b > 0) as u64).saturating_sub(u.ul_granted_pending);
            let lcg = u.ue_mac.cfg.channels.first().map_or(0, |c| c.lcg);
            let mut exact = [0u64; 4];
            exact[lcg as usize & 3] = want;
            let mut index = [0u8; 4];
            index[lcg as usize & 3] = bsr_index(want);
            let rep = BsrReport {
                kind: BsrKind::Regular,
                is_long: false,
                is_truncated: false,
                index,
                lcg,
                exact_bytes: exact,
                bytes: 0,
            };
            let (rnti, cell) = (u.rnti, u.cell);
            self.cells[cell].ul_sched.handle_bsr(rnti, &rep);
            if want > 0 {
                self.wake_slots(now);
            }
        }
    }

    /// Timers of UE `i`'s entities that are due: RLC on both sides, then the UE MAC (an SR on
    /// PUCCH reaches the eNB in this slot, TS 36.321 §5.4.4).
    pub(super) fn ue_timers(&mut self, i: usize, now: Time) {
        let u = &mut self.ues[i];
        if u.rlc[ENB].poll_timeout().is_some_and(|t| t <= now) {
            u.rlc[ENB].handle_timeout(now);
            u.forget_lost(Dir::Ul);
            self.wake_slots(now);
        }
        let u = &mut self.ues[i];
        if u.rlc[UE].poll_timeout().is_some_and(|t| t <= now) {
            u.rlc[UE].handle_timeout(now);
            u.forget_lost(Dir::Dl);
            self.sync_bsr(i, now);
            // t-PollRetransmit may have counted a retransmission up to maxRetxThreshold.
            self.check_rlc_max_retx(i, now);
        }
        let u = &mut self.ues[i];
        if let Rrc::Searching { until } = u.rrc {
            if until <= now {
                // TS 36.331 §5.3.7.3–§5.3.7.4: cell selected, re-establishment request by RA.
                u.rrc = Rrc::Reestablishing;
                u.ue_mac.start_ra(now);
            }
        }
        let u = &mut self.ues[i];
        if u.ue_mac.poll_timeout().is_some_and(|t| t <= now) {
            u.ue_mac.handle_timeout(now);
            if u.ue_mac.poll_sr() {
                u.counters.sr_rx += 1;
                if !self.cfg.ideal_bsr {
                    let (rnti, cell) = (u.rnti, u.cell);
                    self.cells[cell].ul_sched.handle_sr(rnti);
                    self.wake_slots(now);
                }
            }
            self.random_access(i, now);
        }
    }

    /// Run UE `i`'s random access steps due at `now`, judging preamble and Msg3 here.
    fn random_access(&mut self, i: usize, now: Time) {
        while let Some(step) = self.ues[i].ue_mac.poll_ra(now) {
            let rnti = self.ues[i].rnti;
            match step {
                RaStep::Preamble { target_dbm } => {
                    let snr = self
                        .radio
                        .prach_snr_db(rnti, now, target_dbm, self.cfg.prach_prbs);
                    let ok = snr >= self.cfg.prach_detection_snr_db;
                    self.ues[i].ue_mac.ra_preamble_result(now, ok);
                }
                RaStep::Msg3 => {
                    // The next slot that carries PUSCH.
                    let mut slot = self.radio.carrier().slot_index(now);
                    for _ in 0..64 {
                        if self.radio.duplex().is_ul(slot) {
                            break;
                        }
                        slot += 1;
                    }
                    let max_tx = self.ues[i].ue_mac.cfg.ra.max_harq_msg3_tx;
                    let ok = self
                        .radio
                        .ul_min_useful_grant(
                            rnti,
                            now,
                            slot,
                            self.cfg.ul_layers,
                            self.cfg.ul_min_useful_tbs(),
                            max_tx,
                        )
                        .is_some();
                    let u = &mut self.ues[i];
                    u.ue_mac.ra_msg3_result(now, ok);
                    let bsr = u.ue_mac.take_msg3_bsr();
                    if let (true, Some(b)) = (ok, bsr) {
                        // Msg3's BSR MAC CE reaches the eNB's uplink scheduler (§5.4.5) as an
                        // uplink block's does: one slot plus the eNB's processing later.
                        let slab = self.slab.put(&mut Vec::new());
                        self.pending.push(
                            now + self.slot + self.cfg.enb_processing,
                            Pending::Rx {
                                dir: Dir::Ul,
                                ue: i as u32,
                                slab,
                                bsr: Some(b),
                            },
                        );
                    }
                }
                RaStep::Success => {
                    if self.ues[i].rrc == Rrc::Reestablishing {
                        self.reestablish(i, now);
                    }
                }
                RaStep::Problem => self.radio_link_failure(i, now, RlfCause::RandomAccess),
            }
        }
    }

    /// Radio link monitoring of every UE up to `now` (TS 36.133 §7.6; TS 36.331 §5.3.11),
    /// first thing at every event of the device: the frames since the last event are evaluated,
    /// each sample over the channel at its instant, whether or not the UE was scheduled then,
    /// read without disturbing the run ([`crate::radio::RadioEnvironment::sinr_db_observed`]).
    /// The device also wakes at the next indication due ([`Self::rlm_due`]) when nothing
    /// else wakes it first: the UE monitors its downlink every radio frame whether or not it
    /// has data (TS 36.133 §7.6.2.1), so a cell whose UEs are all silent still starts T310
    /// when a UE goes out of sync and declares the radio link failure at T310's expiry, not
    /// at the next packet. A busy cell runs slots at frame boundaries anyway: no extra event.
    // Inlined: it runs at every packet and timeout of the device and almost always returns at
    // once (no UE due); as a call that copied the configuration first it cost mmwave-urban
    // 0.3 % of its instructions.
    #[inline]
    pub(super) fn monitor_radio_links(&mut self, now: Time) {
        if now >= self.rlm_next && self.cfg.rlm.is_some() {
            self.monitor_due_radio_links(now);
        }
    }

    /// When radio link monitoring next needs the device (an indication or T310's expiry of
    /// some connected UE; `None` without monitoring or with no UE monitored).
    pub(super) fn rlm_due(&self) -> Option<Time> {
        (self.cfg.rlm.is_some() && self.rlm_next < Time::MAX).then_some(self.rlm_next)
    }

    /// [`Self::monitor_radio_links`] once some UE may be due.
    #[inline(never)]
    fn monitor_due_radio_links(&mut self, now: Time) {
        let Some(cfg) = self.cfg.rlm else {
            return;
        };
        let mut next = Time::MAX;
        for i in 0..self.ues.len() {
            let u = &mut self.ues[i];
            if !u.connected() {
                continue;
            }
            if u.rlm.next_due().is_some_and(|t| t <= now) {
                let (radio, rnti) = (&self.radio, u.rnti);
                if u.rlm
                    .advance(now, &cfg, |t| radio.sinr_db_observed(rnti, t))
                {
                    self.radio_link_failure(i, now, RlfCause::RadioLinkMonitoring);
                    self.note_ue_timers(i);
                }
            }
            if let Some(t) = self.ues[i].rlm.next_due() {
                next = next.min(t);
            }
        }
        self.rlm_next = next;
    }

    /// The UE's RLC entity indicated maxRetxThreshold (TS 36.322 §5.2.1): radio link failure
    /// while connected (TS 36.331 §5.3.11.3), if so configured.
    pub(super) fn check_rlc_max_retx(&mut self, i: usize, now: Time) {
        let u = &mut self.ues[i];
        let n = u.rlc[UE].counters().max_retx_reached;
        if n == u.rlc_max_retx_seen {
            return;
        }
        u.rlc_max_retx_seen = n;
        if self.cfg.rlf_on_rlc_max_retx && u.connected() {
            self.radio_link_failure(i, now, RlfCause::RlcMaxRetx);
        }
    }

    /// Radio link failure (TS 36.331 §5.3.11.3) while connected, or a failed re-establishment
    /// attempt (random access problem); either way the UE searches for a cell again.
    fn radio_link_failure(&mut self, i: usize, now: Time, cause: RlfCause) {
        // Events of the UE already under way (grants in use, HARQ feedback, decoded blocks on
        // their way to RLC) end within this horizon; re-establishment waits for it, so that
        // none of them meets the re-established entities.
        let c = &self.cfg;
        let horizon = self.slot.saturating_mul(c.k2_slots as u64 + 2)
            + c.ul_harq_feedback
                .max(c.harq.feedback_delay)
                .max(c.ue_processing)
                .max(c.enb_processing);
        let delay = c.rlf_search_delay.max(horizon);
        let u = &mut self.ues[i];
        match u.rrc {
            Rrc::Connected => {
                u.counters.rlf += 1;
                match cause {
                    RlfCause::RandomAccess => {}
                    RlfCause::RadioLinkMonitoring => u.counters.rlf_rlm += 1,
                    RlfCause::RlcMaxRetx => u.counters.rlf_rlc_max_retx += 1,
                }
                u.rlm.stop();
                // §5.3.7.2: MAC reset, bearers suspended; the eNB stops scheduling the UE and
                // forgets its reported buffer.
                u.ue_mac.suspend(now);
                u.ul_granted_pending = 0;
                let (rnti, cell) = (u.rnti, u.cell);
                self.cells[cell].ul_sched.tracker.forget(rnti);
            }
            Rrc::Reestablishing => u.counters.reestablishment_failures += 1,
            Rrc::Searching { .. } => {}
        }
        self.ues[i].rrc = Rrc::Searching {
            until: now + delay.max(Duration::from_nanos(1)),
        };
    }

    /// Re-establishment complete (TS 36.331 §5.3.7.5 and the reconfiguration that resumes the
    /// DRB): HARQ reset, RLC re-established on both sides (TS 36.322 §5.4), PDCP re-established
    /// (TS 36.323 §5.2.1): AM resends every SDU not delivered, UM loses them; the UE MAC resumes.
    fn reestablish(&mut self, i: usize, now: Time) {
        let u = &mut self.ues[i];
        u.rrc = Rrc::Connected;
        u.counters.reestablishments += 1;
        if self.cfg.rlm.is_some() {
            u.rlm.restart(now);
            if let Some(t) = u.rlm.next_due() {
                self.rlm_next = self.rlm_next.min(t);
            }
        }
        let am = u.rlc[ENB].cfg.mode == crate::rlc::RlcMode::Am;
        u.rlc[ENB].reestablish();
        u.rlc[UE].reestablish();
        let mut resend = Vec::new();
        for d in [Dir::Dl, Dir::Ul] {
            let l = u.link_mut(d);
            l.harq = HarqEntity::new(l.harq.cfg);
            for tb in &mut l.tbs {
                tb.pdus.clear();
                tb.bsr = None;
            }
            let arrivals = std::mem::take(&mut l.arrivals);
            resend.clear();
            resend.extend(l.sdus.drain());
            if !am {
                continue;
            }
            let mut a = arrivals.into_iter().peekable();
            for (id, p) in resend.drain(..) {
                match d {
                    Dir::Dl => {
                        u.enqueue(d, now, p, false);
                    }
                    Dir::Ul => {
                        while a.next_if(|&(k, _)| k < id).is_some() {}
                        let t = a.next_if(|&(k, _)| k == id).map_or(now, |(_, t)| t);
                        u.enqueue_ul(now, t, p);
                    }
                }
            }
        }
        self.sync_bsr(i, now);
        self.ues[i].ue_mac.resume(now);
        self.wake_slots(now);
        self.note_ue_timers(i);
    }

    /// The UE sends on PUSCH with grant `(harq, tb_bytes, n_prb)` issued k2 slots ago. For new
    /// data the UE MAC builds the MAC PDU now: per logical channel's share, the functions see
    /// the grant, then the buffer is drained FIFO into PDCP/RLC until RLC holds the share, and
    /// RLC builds its PDUs.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn ul_transmit(
        &mut self,
        now: Time,
        i: usize,
        harq: u8,
        tb_bytes: u32,
        n_prb: u16,
        retx: bool,
        nf: &mut Functions,
    ) {
        let h = harq as usize;
        if !self.ues[i].connected() {
            // A grant of before the radio link failure: the reset MAC sends nothing on it.
            let tb = &mut self.ues[i].link_mut(Dir::Ul).tbs[h];
            tb.pdus.clear();
            tb.bsr = None;
        } else if retx {
            self.ues[i].link_mut(Dir::Ul).counters.tb_retx += 1;
        } else {
            let u = &mut self.ues[i];
            let grant = UlGrant {
                rnti: u.rnti,
                tb_bytes,
                n_prb,
                harq_id: harq,
                is_retx: false,
            };
            u.ul_granted_pending = u.ul_granted_pending.saturating_sub(tb_bytes as u64);
            u.ue_mac
                .handle_ul_grant_into(now, grant, &mut self.sc.ul_tx);
            let mut pdus = std::mem::take(&mut u.link_mut(Dir::Ul).tbs[h].pdus);
            pdus.clear();
            let overhead = self.cfg.ul_overhead_bytes();
            for k in 0..self.sc.ul_tx.opportunities.len() {
                let op = self.sc.ul_tx.opportunities[k];
                let mut have = self.ues[i].rlc[UE].total_bytes(now);
                let ev = BufferEvent::Grant {
                    bytes: op.bytes,
                    overhead_bytes: overhead,
                    rlc_bytes: have,
                    n_prb,
                };
                self.ul_buffer_event(now, i, ev, nf);
                let u = &mut self.ues[i];
                while have < op.bytes as u64 {
                    let Some(e) = u.ul_buf.pop_front() else {
                        break;
                    };
                    have += (e.bytes() + overhead) as u64;
                    u.enqueue_ul(now, e.arrival, e.packet);
                }
                u.rlc[UE].handle_tx_opportunity(now, op, &mut pdus);
            }
            let l = self.ues[i].link_mut(Dir::Ul);
            let tb = &mut l.tbs[h];
            tb.pdus = pdus;
            tb.bsr = self.sc.ul_tx.bsr;
            l.counters.tb_new += 1;
            l.counters.tb_bytes += tb_bytes as u64;
            self.sync_bsr(i, now);
        }
        self.transmit(now, Dir::Ul, i, harq, n_prb);
    }
}
