//! The endpoint's timers and what happens when they fire: the retransmission timer and its
//! exponential backoff (RFC 6298 §5) with the timeout's congestion response (RFC 5681 §3.1,
//! RFC 6675 §5.1), the persist timer (RFC 9293 §3.8.6.1), the delayed-ACK timer (RFC 1122
//! §4.2.3.2) and TIME-WAIT (RFC 9293 §3.10.7.4); the pacing release is armed by
//! [`super::output`]. [`Endpoint::poll_timeout`] is the earliest of them.

use super::{Endpoint, State};
use crate::cc::{CongestionControl, SlowStartCause};
use rantcp_core::{Duration, Time};

impl Endpoint {
    /// Fire whichever timers are due. Calls before any deadline are harmless.
    pub fn handle_timeout(&mut self, now: Time) {
        if let Some(t) = self.time_wait_deadline {
            if now >= t {
                self.time_wait_deadline = None;
                self.enter_closed();
                return;
            }
        }
        if let Some(t) = self.rcv.delack_deadline {
            if now >= t {
                self.rcv.delack_deadline = None;
                self.rcv.ack_now = true;
            }
        }
        if let Some(t) = self.rack.reo_deadline {
            if now >= t {
                self.on_rack_timeout(now);
            }
        }
        if let Some(t) = self.rack.pto_deadline {
            if now >= t {
                self.on_pto();
            }
        }
        if let Some(t) = self.rto_deadline {
            if now >= t {
                self.on_rto(now);
            }
        }
        if let Some(t) = self.persist_deadline {
            if now >= t {
                // RFC 9293 §3.8.6.1: probe the zero window, backing off exponentially.
                if self.usable_window() > 0 {
                    // Sender SWS override (RFC 9293 §3.8.6.2.1 (d)): send what fits.
                    self.force_send = true;
                } else {
                    self.probe_pending = true;
                }
                self.persist_backoff += 1;
                self.persist_deadline = Some(now + self.persist_timeout());
            }
        }
    }

    pub(super) fn persist_timeout(&self) -> Duration {
        self.rtt.backed_off(self.persist_backoff)
    }

    /// RFC 6298 §5.4–§5.6 and RFC 5681 §3.1 / RFC 6675 §5.1.
    fn on_rto(&mut self, now: Time) {
        let rto = self.rtt.rto();
        let syn_state = matches!(self.state, State::SynSent | State::SynReceived);
        if !syn_state && self.snd_max <= self.snd_una {
            self.rto_deadline = None;
            return;
        }
        self.stats.rtos += 1;
        self.stats.rto_sum_ns += rto.0 as u128;
        match self.state {
            State::SynSent | State::SynReceived => {
                self.syn_pending = true;
                self.syn_sent_at = None; // Karn
            }
            _ if self.snd_max > self.snd_una => {
                // Is this timeout a new congestion event?
                // * Not during fast recovery: the episode's ssthresh stands (Linux tcp_enter_loss
                //   recomputes it only in Open/Disorder; RFC 5681 eq. 4 with the FlightSize then
                //   — the whole pre-loss window — is no lower).
                // * Not when the segment timing out was already retransmitted by the timer, i.e.
                //   no ACK has advanced SND.UNA since the last timeout: RFC 5681 §3.1 holds
                //   ssthresh constant (Linux: Loss state with icsk_retransmits > 0).
                // Otherwise eq. 4 from [`Endpoint::reduction_basis`], which within a timeout's
                // go-back-N is the retransmitted flight, not everything sent before the timeout.
                let same_segment_again = self.rto_recovery && !self.acked_since_rto;
                let reduce = !self.in_recovery && !same_segment_again;
                let basis = self.reduction_basis().max(self.smss as u64);
                let cwnd_before = self.cc.cwnd();
                if reduce || self.undo_window.is_none() {
                    // Linux tcp_enter_loss: prior_cwnd and prior_ssthresh (tcp_current_ssthresh:
                    // max(ssthresh, ¾ cwnd) outside a window reduction) for an undo, saved when
                    // the timeout reduces ssthresh; a repeated timeout keeps the first one's.
                    let ss = self.cc.ssthresh();
                    let prior_ss = if self.in_recovery {
                        ss
                    } else {
                        ss.max(cwnd_before / 2 + cwnd_before / 4)
                    };
                    self.init_undo(cwnd_before, prior_ss);
                }
                // RFC 5682 §3.1 step 1 / Linux tcp_enter_loss: F-RTO for a timeout that starts
                // a recovery, or a repeated one on the same SND.UNA (§3.2), not one in a fast
                // recovery.
                let new_recovery = !self.in_recovery && !self.rto_recovery;
                self.frto = self.cfg.frto && self.sack_ok && (new_recovery || same_segment_again);
                self.frto_new_only = false;
                self.cc.on_rto(now, basis, self.smss, reduce);
                self.note_slow_start_exit(now, cwnd_before, Some(SlowStartCause::Timeout));
                if self.rack_on() {
                    // RFC 8985 §6.3: SND.UNA and what was sent RACK.rtt + reo_wnd ago are lost;
                    // RFC 6298 §5.4: the earliest segment goes again at once.
                    let reo = self.rack.reo_wnd(
                        true,
                        self.sb.sacked_segs,
                        self.rtt.min_rtt(),
                        self.rtt.srtt(),
                    );
                    let age = self.rack.rtt() + reo;
                    self.sb
                        .mark_lost_on_rto_rack(self.snd_una, self.snd_max, now, age);
                } else {
                    // RFC 6675 §5.1: keep SACKed marks, everything else is lost.
                    self.sb.mark_all_lost(self.snd_una, self.snd_max);
                }
                // Linux tcp_timeout_mark_lost → tcp_reset_reno_sack (no SACK).
                self.sb.reset_reno_sack();
                self.rack.reo_deadline = None;
                self.rack.pto_deadline = None;
                self.rack.probe_due = false;
                self.rack.tlp_end = None;
                if self.fin_sent && self.snd_una <= self.app_end {
                    self.fin_rtx = true;
                }
                self.in_recovery = false;
                self.prr = None;
                self.rto_recovery = true;
                self.acked_since_rto = false;
                self.inflation = 0;
                self.force_rtx = self.rack_on();
                self.recover = self.snd_max;
                self.dupacks = 0;
                // Pacing must not delay the retransmission further.
                self.next_send_time = now;
            }
            _ => {
                self.rto_deadline = None;
                return;
            }
        }
        #[cfg(debug_assertions)]
        self.check_invariants();
        // RFC 6298 §5.5: back off; §5.6: restart the timer.
        self.rtt.back_off();
        self.rto_deadline = Some(now + self.rtt.rto());
    }

    /// Earliest instant at which [`Endpoint::handle_timeout`] has work: RTO, delayed ACK,
    /// persist, TIME-WAIT end, or the pacing release when data waits only for pacing.
    pub fn poll_timeout(&self) -> Option<Time> {
        // Called after every event: plain u64 minima (an unset timer is u64::MAX).
        #[inline(always)]
        fn at(d: Option<Time>) -> u64 {
            d.map_or(u64::MAX, |t| t.0)
        }
        let pacing = if self.pacing_blocked {
            self.next_send_time.0
        } else {
            u64::MAX
        };
        let t = at(self.rto_deadline)
            .min(at(self.rcv.delack_deadline))
            .min(at(self.persist_deadline))
            .min(at(self.time_wait_deadline))
            .min(at(self.rack.reo_deadline))
            .min(at(self.rack.pto_deadline))
            .min(pacing);
        (t != u64::MAX).then_some(Time(t))
    }
}
