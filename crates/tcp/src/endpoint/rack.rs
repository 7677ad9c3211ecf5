//! RACK-TLP loss detection (RFC 8985), as Linux `tcp_recovery.c` runs it.
//!
//! RACK ("Recent ACKnowledgment", §6) declares a segment lost when a segment *sent after it*
//! has been delivered and more than RACK.rtt + RACK.reo_wnd has passed since it was sent: a
//! time-based test that applies to retransmissions too, so a lost retransmission is repaired
//! without waiting for the RTO. The reordering window is min_RTT / 4 (at most SRTT) while no
//! reordering has been seen, and 0 in recovery or once DupThresh segments are SACKed
//! (§6.2 Step 4, Linux `tcp_rack_reo_wnd`); segments that may still be reordered arm the RACK
//! reordering timer. The scan follows send order (as Linux's `tsorted_sent_queue`) and stops at
//! the first segment sent after the most recently delivered one: original transmissions are in
//! send order in the scoreboard itself, scanned from a hint below which none is a candidate any
//! more; retransmissions are kept in a send-ordered queue of their own.
//!
//! TLP ("Tail Loss Probe", §7) sends a probe 2·SRTT after the last transmission (+ the
//! worst-case delayed-ACK time when one segment is in flight, never later than the RTO) when
//! the sender is neither in recovery nor holding SACKed data: new data if there is some, else
//! the last segment again. Its ACK then lets RACK find a tail loss; if the probe itself repaired
//! the loss the sender still reduces its window (§7.4, Linux `tcp_process_tlp_ack`).
//!
//! With D-SACK ([`super::TcpConfig::dsack`]) the reordering window adapts (§6.2 Step 4, Linux
//! `tcp_rack_update_reo_wnd`): a round with a D-SACK, once reordering has been seen, widens it
//! by one more min_RTT / 4 (RACK.reo_wnd_mult), up to SRTT, and the widening persists for 16
//! recoveries. Without D-SACK RACK.reo_wnd_mult stays 1. A probe's redundancy is judged from
//! the duplicate ACK at TLP.end_seq (which a D-SACK for the probe also is).

use super::scoreboard::{Scoreboard, Seg, F_EVER_RETRANS};
use super::{ts_ms, Endpoint, DUP_THRESH};
use crate::cc::CongestionControl;
use rantcp_core::{Duration, Time};
use std::collections::VecDeque;

/// RFC 8985 §7.2 WCDelAckT: the worst-case delayed-ACK time added to the PTO when one segment
/// is in flight (Linux adds `tcp_rto_min`, the same 200 ms by default).
pub const WC_DEL_ACK_T: Duration = Duration::from_millis(200);

/// Per-ACK RACK observations, gathered while the scoreboard is updated.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct RackScan {
    now: Time,
    /// The ACK's TSecr in ms, when timestamps are in use.
    tsecr_ms: Option<u32>,
    min_rtt: Duration,
    /// The most recently sent valid delivered segment: (xmit time, end).
    latest: Option<(Time, u64)>,
    /// The lowest end of a newly delivered never-retransmitted segment.
    min_end_original: Option<u64>,
    /// The highest end of a newly delivered segment.
    max_end: u64,
}

impl RackScan {
    pub fn new(now: Time, tsecr_ms: Option<u32>, min_rtt: Duration) -> Self {
        RackScan {
            now,
            tsecr_ms,
            min_rtt,
            ..RackScan::default()
        }
    }

    /// One segment newly acknowledged, cumulatively or by SACK (§6.2 Steps 2-3).
    pub fn on_delivered(&mut self, s: &Seg) {
        let end = s.end();
        self.max_end = self.max_end.max(end);
        let retransmitted = s.flags & F_EVER_RETRANS != 0;
        if !retransmitted {
            self.min_end_original = Some(self.min_end_original.map_or(end, |m| m.min(end)));
        } else {
            // Step 2: an ambiguous delivery of a retransmitted segment is ignored if the ACK
            // echoes a timestamp older than the retransmission, or came sooner than min_RTT
            // after it (it must then be for the original).
            if self
                .tsecr_ms
                .is_some_and(|e| (e.wrapping_sub(ts_ms(s.sent)) as i32) < 0)
            {
                return;
            }
            if self.now.saturating_since(s.sent) < self.min_rtt {
                return;
            }
        }
        if self.latest.is_none_or(|l| sent_after((s.sent, end), l)) {
            self.latest = Some((s.sent, end));
        }
    }
}

/// RFC 8985 §6.2 RACK_sent_after: `a` was sent after `b` (ties broken by sequence).
#[inline]
fn sent_after(a: (Time, u64), b: (Time, u64)) -> bool {
    a.0 > b.0 || (a.0 == b.0 && a.1 > b.1)
}

/// RACK-TLP state of a connection.
#[derive(Debug, Default)]
pub(super) struct Rack {
    /// RACK.xmit_ts and RACK.end_seq: the most recently sent segment delivered so far.
    latest: Option<(Time, u64)>,
    /// RACK.rtt: the RTT of that delivery.
    rtt: Duration,
    /// RACK.fack: the highest end of a delivered segment.
    fack: u64,
    /// RACK.reordering_seen.
    reordering_seen: bool,
    /// Every never-retransmitted segment starting below this position is SACKed, acknowledged
    /// or marked lost: no RACK candidate.
    orig_hint: u64,
    /// Retransmissions in send order: (send time, end of the segment). Entries whose segment
    /// has since been delivered, retransmitted again or marked lost are dropped when they reach
    /// the front and skipped elsewhere. (The end identifies the segment: an ACK inside a segment
    /// trims its start, never its end.)
    rtx: VecDeque<(Time, u64)>,
    /// The RACK reordering timer.
    pub reo_deadline: Option<Time>,
    /// The TLP probe timeout (PTO).
    pub pto_deadline: Option<Time>,
    /// When the PTO was last (re)armed.
    pub pto_armed_at: Option<Time>,
    /// A probe is due at the next transmission opportunity.
    pub probe_due: bool,
    /// TLP.end_seq: SND.NXT when the outstanding probe was sent.
    pub tlp_end: Option<u64>,
    /// TLP.is_retrans.
    pub tlp_is_retrans: bool,
    /// An RTT sample was taken since the last probe (§7.3 condition 2).
    pub rtt_sample_since_probe: bool,
    /// RACK.reo_wnd_mult − 1 (Linux `reo_wnd_steps` − 1, so that the default is 1).
    reo_wnd_extra: u32,
    /// A D-SACK arrived that may widen the window (Linux `rack.dsack_seen`).
    dsack_seen: bool,
    /// C.delivered when the window last widened (Linux `rack.last_delivered`).
    last_delivered: u64,
    /// Recoveries the widened window still lasts (RFC 8985 §6.2 Step 4
    /// RACK.reo_wnd_persist; Linux `TCP_RACK_RECOVERY_THRESH` = 16).
    reo_wnd_persist: u32,
}

/// RFC 8985 §6.2 Step 4: a widened reordering window lasts this many recoveries (Linux
/// `TCP_RACK_RECOVERY_THRESH`).
const REO_WND_PERSIST: u32 = 16;

impl Rack {
    /// A retransmission at `now` of the segment ending at `end`.
    #[inline]
    pub fn on_retransmit(&mut self, now: Time, end: u64) {
        self.rtx.push_back((now, end));
    }

    /// §6.2 Steps 2-3 with this ACK's observations: advance RACK.xmit_ts / end_seq / rtt (as
    /// Linux tcp_rack_advance, only when the segment was sent after the current one) and note
    /// reordering (a never-retransmitted segment delivered below RACK.fack).
    pub fn update(&mut self, scan: &RackScan) {
        if let Some(m) = scan.min_end_original {
            if m < self.fack {
                self.reordering_seen = true;
            }
        }
        self.fack = self.fack.max(scan.max_end);
        if let Some(l) = scan.latest {
            if self.latest.is_none_or(|cur| sent_after(l, cur)) {
                self.latest = Some(l);
                self.rtt = scan.now.saturating_since(l.0);
            }
        }
    }

    /// A D-SACK was accepted (Linux `tcp_dsack_seen`): it may widen the reordering window if
    /// reordering has been seen and it is not for a loss probe (which the timer sent, not
    /// RACK).
    pub fn note_dsack(&mut self, of_probe: bool) {
        if self.reordering_seen && !of_probe {
            self.dsack_seen = true;
        }
    }

    /// §6.2 Step 4 RACK.reo_wnd_mult on every ACK (Linux `tcp_rack_update_reo_wnd`):
    /// `prior_delivered` is C.delivered when the most recently sent segment this ACK delivered
    /// was sent (the rate sample's), `delivered` C.delivered now. A D-SACK widens the window
    /// once per round trip (one from a segment sent before the last widening is ignored);
    /// without one, the window falls back to 1× once the persistence has run out.
    pub fn update_reo_wnd(&mut self, prior_delivered: Option<u64>, delivered: u64) {
        let Some(pd) = prior_delivered.filter(|&d| d > 0) else {
            return;
        };
        if pd < self.last_delivered {
            self.dsack_seen = false;
        }
        if self.dsack_seen {
            self.reo_wnd_extra = (self.reo_wnd_extra + 1).min(0xFE);
            self.dsack_seen = false;
            self.last_delivered = delivered;
            self.reo_wnd_persist = REO_WND_PERSIST;
        } else if self.reo_wnd_persist == 0 {
            self.reo_wnd_extra = 0;
        }
    }

    /// A recovery ended without an undo (Linux `tcp_try_undo_recovery`: `reo_wnd_persist--`).
    pub fn on_recovery_end(&mut self) {
        self.reo_wnd_persist = self.reo_wnd_persist.saturating_sub(1);
    }

    /// RACK.reo_wnd_mult.
    pub fn reo_wnd_mult(&self) -> u32 {
        self.reo_wnd_extra + 1
    }

    /// §6.2 Step 4 (Linux tcp_rack_reo_wnd): 0 in recovery, or once DupThresh segments are
    /// SACKed, until reordering is seen; otherwise min_RTT / 4 × RACK.reo_wnd_mult, at most
    /// SRTT.
    pub fn reo_wnd(
        &self,
        in_recovery: bool,
        sacked_segs: u32,
        min_rtt: Duration,
        srtt: Duration,
    ) -> Duration {
        if !self.reordering_seen && (in_recovery || sacked_segs >= DUP_THRESH) {
            return Duration::ZERO;
        }
        Duration(min_rtt.0 / 4 * self.reo_wnd_mult() as u64).min(srtt)
    }

    /// RACK.rtt.
    pub fn rtt(&self) -> Duration {
        self.rtt
    }

    /// The common case on a loss-free path, answered without a scan: no retransmission is
    /// outstanding and the oldest outstanding segment, an original still in flight, was sent
    /// after the most recently delivered one (so every later original was too).
    #[inline]
    pub fn nothing_sent_before_latest(&self, sb: &Scoreboard) -> bool {
        let Some(latest) = self.latest else {
            return true;
        };
        let Some(s) = sb.segs.front() else {
            return true;
        };
        self.rtx.is_empty()
            && s.flags & F_EVER_RETRANS == 0
            && in_flight(s)
            && sent_after((s.sent, s.end()), latest)
    }

    /// §6.2 Step 5 RACK_detect_loss: mark lost every outstanding segment sent before the most
    /// recently delivered one whose RACK.rtt + `reo_wnd` has elapsed. Returns the bytes newly
    /// marked lost and, if some segments may still be reordered, when to look again.
    pub fn detect_loss(
        &mut self,
        sb: &mut Scoreboard,
        now: Time,
        reo_wnd: Duration,
    ) -> (u64, Option<Time>) {
        let Some(latest) = self.latest else {
            return (0, None);
        };
        let mut newly = 0;
        let mut wait: Option<Time> = None;
        let mut check = |sb: &mut Scoreboard, idx: usize, newly: &mut u64| -> bool {
            let s = sb.segs[idx];
            let deadline = s.sent + self.rtt + reo_wnd;
            if deadline <= now {
                *newly += sb.mark_lost(idx);
                true
            } else {
                wait = Some(wait.map_or(deadline, |w: Time| w.max(deadline)));
                false
            }
        };

        // Original transmissions: in sequence order, which is their send order.
        let first = sb.segs.front().map_or(u64::MAX, |s| s.start);
        let mut idx = if self.orig_hint <= first {
            0
        } else {
            sb.segs.partition_point(|s| s.start < self.orig_hint)
        };
        let mut advance = true;
        while idx < sb.segs.len() {
            let s = sb.segs[idx];
            let candidate = s.flags & F_EVER_RETRANS == 0 && in_flight(&s);
            if candidate {
                if !sent_after(latest, (s.sent, s.end())) {
                    break; // this one and every later original was sent after the latest delivery
                }
                let lost = check(sb, idx, &mut newly);
                advance &= lost;
            }
            if advance {
                self.orig_hint = s.end();
            }
            idx += 1;
        }

        // Retransmissions: drop those no longer in flight from the front, then scan in send
        // order.
        while let Some(&(t, end)) = self.rtx.front() {
            match sb.find_transmission(end, t) {
                Some(i) if in_flight(&sb.segs[i]) => break,
                _ => {
                    self.rtx.pop_front();
                }
            }
        }
        for k in 0..self.rtx.len() {
            let (t, end) = self.rtx[k];
            // Sent after the latest delivery: later, or at the same instant further on in the
            // same burst (a transmission opportunity resends in ascending sequence order).
            if t > latest.0 || (t == latest.0 && end > latest.1) {
                break;
            }
            let Some(i) = sb.find_transmission(end, t) else {
                continue;
            };
            let s = sb.segs[i];
            if in_flight(&s) && sent_after(latest, (s.sent, s.end())) {
                check(sb, i, &mut newly);
            }
        }
        (newly, wait)
    }
}

/// Outstanding and not yet known lost: not SACKed, and not marked lost awaiting its
/// retransmission (RFC 8985 §6.2 Step 5 sets Segment.xmit_ts to INFINITE_TS when marking lost).
#[inline]
fn in_flight(s: &Seg) -> bool {
    use super::scoreboard::{F_LOST, F_RETRANS, F_SACKED};
    s.flags & F_SACKED == 0 && s.flags & (F_LOST | F_RETRANS) != F_LOST
}

impl Endpoint {
    /// RACK-TLP is in use: configured and SACK negotiated (RFC 8985 requires SACK).
    #[inline]
    pub(super) fn rack_on(&self) -> bool {
        self.cfg.rack_tlp && self.sack_ok
    }

    /// RACK_detect_loss_and_arm_timer (§6.2 Step 5). Returns bytes newly marked lost.
    pub(super) fn rack_detect_loss(&mut self, now: Time) -> u64 {
        if self.rack.nothing_sent_before_latest(&self.sb) {
            self.rack.reo_deadline = None;
            return 0;
        }
        let reo_wnd = self.rack.reo_wnd(
            self.in_recovery || self.rto_recovery,
            self.sb.sacked_segs,
            self.rtt.min_rtt(),
            self.rtt.srtt(),
        );
        let (newly, wait) = self.rack.detect_loss(&mut self.sb, now, reo_wnd);
        self.rack.reo_deadline = wait;
        newly
    }

    /// The RACK reordering timer fired (§6.2, Linux tcp_rack_reo_timeout): mark what has now
    /// waited long enough, and start fast recovery if that found a loss.
    pub(super) fn on_rack_timeout(&mut self, now: Time) {
        self.rack.reo_deadline = None;
        let newly = self.rack_detect_loss(now);
        if newly > 0 && !self.in_recovery && !self.rto_recovery && self.snd_una >= self.recover {
            let recover_fs = self.snd_max - self.snd_una - self.sb.sacked_bytes;
            self.enter_recovery(now, recover_fs);
            self.prr_on_ack(0, false);
            self.force_rtx = true; // RFC 5681 §3.2 step 3: the fast retransmission goes at once
        }
    }

    /// §7.2: (re)arm the PTO after new data was sent or new data was acknowledged, unless in
    /// recovery or with SACKed data outstanding (then RACK's timer or the RTO take over).
    pub(super) fn arm_pto(&mut self, now: Time) {
        self.rack.pto_armed_at = Some(now);
        if !self.rack_on()
            || self.in_recovery
            || self.rto_recovery
            || self.sb.sacked_segs > 0
            || self.snd_max <= self.snd_una
        {
            self.rack.pto_deadline = None;
            return;
        }
        let pto = if self.rtt.has_sample() {
            let mut p = self.rtt.srtt().saturating_mul(2);
            if self.snd_max - self.snd_una <= self.smss as u64 {
                p += WC_DEL_ACK_T; // FlightSize is one segment
            }
            p
        } else {
            Duration::from_secs(1)
        };
        let mut at = now + pto;
        if let Some(rto) = self.rto_deadline {
            at = at.min(rto); // never after the RTO would fire
        }
        self.rack.pto_deadline = Some(at);
    }

    /// §7.3: the PTO fired. Send a probe at the next transmission opportunity if no probe is
    /// outstanding and an RTT sample was taken since the last one.
    pub(super) fn on_pto(&mut self) {
        self.rack.pto_deadline = None;
        if self.rack.tlp_end.is_none()
            && self.rack.rtt_sample_since_probe
            && self.snd_max > self.snd_una
        {
            self.rack.probe_due = true;
        }
    }

    /// A loss probe left at `now` (§7.3): remember it and re-arm the RTO.
    pub(super) fn on_probe_sent(&mut self, now: Time, is_retrans: bool) {
        self.rack.tlp_end = Some(self.snd_max);
        self.rack.tlp_is_retrans = is_retrans;
        self.rack.rtt_sample_since_probe = false;
        self.rto_deadline = Some(now + self.rtt.rto());
        self.stats.tlp_probes += 1;
    }

    /// §7.4 TLP_process_ack, with Linux's `tcp_process_tlp_ack` rules for a retransmitted probe
    /// and no D-SACK: an ACK beyond TLP.end_seq means the probe repaired a loss (reduce cwnd as
    /// a fast recovery would, then carry on); a pure duplicate ACK at TLP.end_seq means the
    /// original and the probe both arrived.
    pub(super) fn tlp_process_ack(&mut self, now: Time, ack: u64, advanced: bool, pure_dup: bool) {
        let Some(end) = self.rack.tlp_end else {
            return;
        };
        if ack < end {
            return;
        }
        if !self.rack.tlp_is_retrans {
            self.rack.tlp_end = None; // a probe of new data was delivered
        } else if ack > end {
            self.rack.tlp_end = None;
            self.respond_to_loss(now);
            self.cc.on_recovery_exit(now, self.smss);
        } else if pure_dup && !advanced {
            self.rack.tlp_end = None;
        }
    }
}
