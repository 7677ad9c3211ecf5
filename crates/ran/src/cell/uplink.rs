//! The UE side of the uplink: IP packets from the UE node into its per-bearer uplink buffer
//! ([`rantcp_nf::UlBuffer`], before PDCP: TS 36.323 §5.1.1 / TS 38.323 §5.2.1), the UE MAC's
//! scheduling request and buffer status reporting (TS 36.321 §5.4.4, §5.4.5, through
//! [`crate::mac::ul::UeUlMac`]; or the ideal reporting of ns-3 LENA/mmWave), and the use of a
//! grant k2 slots after it was issued: the UE MAC builds the MAC PDU (BSR, logical channel
//! prioritisation, §5.4.3.1), the buffer is drained FIFO into PDCP/RLC for each logical
//! channel's share, and RLC builds its PDUs.
//!
//! Network functions at [`rantcp_nf::Point::UeUlBuffer`] see every arrival
//! ([`BufferEvent::Arrival`], after the packet is appended) and every grant
//! ([`BufferEvent::Grant`], before the buffer is drained), and may discard queued packets
//! (seed 000's ACK filter).

use super::config::DRB_LCID;
use super::counters::is_pure_ack;
use super::functions::{BufferView, Functions};
use super::ue::{Dir, ENB, UE};
use super::RanState;
use crate::mac::sap::UlGrant;
use crate::mac::ul::{bsr_index, BsrKind, BsrReport};
use rantcp_core::Time;
use rantcp_nf::{BufferEvent, Ctx, Point, Points};
use rantcp_wire::Packet;

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
        let b = u.ul_buf.bytes()
            + u.ul_buf.len() as u64 * per_pkt
            + u.rlc[UE].buffer_status(now).total_bytes();
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
        }
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
        if retx {
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
                let mut have = self.ues[i].rlc[UE].buffer_status(now).total_bytes();
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
