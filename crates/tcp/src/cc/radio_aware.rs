//! Loose-coupled radio-aware congestion control (seed 002, 3GPP RAN3 contribution §3.1 "Loose
//! Coupled Radio-Aware TCP Solution"; design.md §5): the window is set from RAN feedback instead
//! of being probed,
//!
//! ```text
//!   cwnd = R(t)·RTT + (Q_th − Q(t))      (variant "rate+queue")
//!   cwnd = R(t)·RTT                      (variant "rate")
//! ```
//!
//! with R(t) the UE's achievable data rate predicted from its CQI and the cell load, RTT the
//! predicted round-trip time, Q(t) the sampled layer-2 (RLC) queue of the UE and Q_th its
//! target. The feedback arrives through [`CongestionControl::on_feedback`]
//! ([`crate::Endpoint::handle_feedback`]).
//!
//! What the seed leaves open, decided here:
//! * RTT predictor ([`RttPredictor`]): the connection's minimum RTT (default; the path RTT
//!   without the queue the formula's Q term accounts for) or the RFC 6298 smoothed RTT (the
//!   seed's "smoothed TCP RTT", which already contains the queueing delay Q/R).
//! * The window never goes below [`MIN_CWND_SEGMENTS`] segments (RFC 5681 §3.1's smallest
//!   ssthresh), so Q > Q_th or R = 0 slows the sender to an ACK clock, never to a stall.
//! * Losses found by duplicate ACKs, SACK or RACK do not shrink the window while feedback is
//!   fresh (the seed: loss on a radio link is not a congestion signal); the endpoint still
//!   retransmits, without PRR (the controller sets the recovery window itself).
//! * A retransmission timeout is different, and the seed is silent on it. Here, as in every
//!   real stack, the sender then uses a loss window: one segment at the timeout (RFC 5681 §3.1
//!   "LW = 1 SMSS"; Linux `tcp_enter_loss` sets cwnd to the packets in flight + 1, which after
//!   marking everything lost is 1, for every congestion-control module, including the
//!   `cong_control` ones that own cwnd), growing by slow start (RFC 5681 §3.1: at most one SMSS
//!   per ACK that cumulatively acknowledges data, see `on_ack`) up to the radio window, for as
//!   long as the endpoint is in the timeout's recovery ([`AckSample::in_loss`]: until
//!   everything outstanding at the timeout is cumulatively acknowledged, RFC 6582 §3.2 step 1 /
//!   RFC 6675 §5.1 `recover`, Linux `high_seq`); then the radio window is in charge again.
//!   This is what Linux's BBR (tcp_bbr.c), the other controller that sets cwnd from its own
//!   model, does: cwnd = 1 at `tcp_enter_loss`, in TCP_CA_Loss `bbr_set_cwnd` slow-starts
//!   toward its target, and on leaving Loss `bbr_set_cwnd_to_recover_or_restore` restores the
//!   cwnd from before (here: the radio window of the latest report). A timeout undone as
//!   spurious (Linux `tcp_try_undo_loss`, [`CongestionControl::on_undo`]) ends the loss window
//!   at once. Without it, go-back-N resends up to the whole radio window into a layer-2 buffer
//!   that may hold a fraction of it, and without SACK each segment it drops waits for the next
//!   timeout.
//! * Missing or stale feedback: before the first report, and whenever the newest report was
//!   sampled more than `stale_after` ago (checked at every ACK, transmission, timeout and
//!   report), the flow's loss-based controller ([`RadioAwareParams::fallback`]) is in charge.
//!   It runs from the connection's start until the first fresh report; when feedback goes
//!   stale later it is started anew with the last radio window as its initial window (RFC 5681
//!   behaviour from there: slow start until the first loss, then its own rules). A report
//!   without a rate, or received before any RTT sample, counts as missing. The hand-over keeps
//!   a timeout's loss window: fresh feedback in the middle of a timeout's recovery takes the
//!   loss window on from the fallback's cwnd, and a fallback started then starts from the
//!   loss window, not the radio window.

use super::{
    AckSample, Cc, CcKind, CcParams, CcTrace, CongestionControl, Feedback, SlowStartCause,
};
use rantcp_core::{Duration, Time};

/// The window never drops below this many segments.
pub const MIN_CWND_SEGMENTS: u64 = 2;

/// Which terms of the seed's window formula are used.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Variant {
    /// cwnd = R·RTT.
    Rate,
    /// cwnd = R·RTT + (Q_th − Q).
    RateQueue,
}

/// The RTT the window formula multiplies the rate by.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RttPredictor {
    /// Minimum RTT seen on the connection.
    MinRtt,
    /// RFC 6298 smoothed RTT.
    Srtt,
}

/// The controller's settings (`flow.radio_aware`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct RadioAwareParams {
    pub variant: Variant,
    /// Layer-2 queue target Q_th, bytes.
    pub q_th_bytes: u64,
    pub rtt: RttPredictor,
    /// Feedback sampled longer ago than this is stale.
    pub stale_after: Duration,
    /// The loss-based controller without fresh feedback (not [`CcKind::RadioAware`]).
    pub fallback: CcKind,
}

impl Default for RadioAwareParams {
    fn default() -> Self {
        RadioAwareParams {
            variant: Variant::RateQueue,
            q_th_bytes: 30_000,
            rtt: RttPredictor::MinRtt,
            stale_after: Duration::from_millis(100),
            fallback: CcKind::NewReno,
        }
    }
}

/// The newest report.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Report {
    sampled_at: Time,
    rate_bps: f64,
    queue_bytes: Option<u64>,
}

#[derive(Clone, Debug)]
pub struct RadioAware {
    p: RadioAwareParams,
    base: CcParams,
    /// The loss-based controller, in charge while `!active`.
    fallback: Box<Cc>,
    last: Option<Report>,
    /// Feedback is fresh and the window is the formula's.
    active: bool,
    /// The formula's window, bytes (valid while `active`; the last one after).
    window: u64,
    /// The loss window during a retransmission timeout's recovery (RFC 5681 §3.1, Linux
    /// TCP_CA_Loss), bytes: one segment at the timeout, then slow start up to the radio
    /// window; `None` outside such a recovery. It is the window while `active` (the fallback's
    /// own cwnd is in charge otherwise).
    loss: Option<u64>,
    min_rtt: Duration,
    srtt: Duration,
    /// Reports used, and times the controller fell back after having been active.
    pub reports: u64,
    pub fallbacks: u64,
}

impl RadioAware {
    pub fn new(base: &CcParams, p: RadioAwareParams) -> Self {
        assert!(
            p.fallback != CcKind::RadioAware,
            "a radio-aware fallback must be loss-based"
        );
        let fb = CcParams {
            kind: p.fallback,
            ..*base
        };
        RadioAware {
            p,
            base: *base,
            fallback: Box::new(Cc::new(&fb)),
            last: None,
            active: false,
            window: 0,
            loss: None,
            min_rtt: Duration::ZERO,
            srtt: Duration::ZERO,
            reports: 0,
            fallbacks: 0,
        }
    }

    /// Is the radio window in charge?
    pub fn is_active(&self) -> bool {
        self.active
    }

    /// Is the sender in a timeout's recovery, under the loss window?
    pub fn in_loss(&self) -> bool {
        self.loss.is_some()
    }

    /// The window while `active`: the radio window, or the loss window below it after a
    /// timeout.
    fn radio_cwnd(&self) -> u64 {
        self.loss.map_or(self.window, |l| l.min(self.window))
    }

    /// The seed's window for rate `rate_bps` (bit/s), predicted RTT `rtt`, queue `q` (bytes)
    /// and target `q_th`, floored at [`MIN_CWND_SEGMENTS`]·`mss`.
    pub fn formula(
        variant: Variant,
        rate_bps: f64,
        rtt: Duration,
        q: u64,
        q_th: u64,
        mss: u32,
    ) -> u64 {
        let bdp = (rate_bps.max(0.0) / 8.0 * rtt.as_secs_f64()).floor();
        let w = match variant {
            Variant::Rate => bdp,
            Variant::RateQueue => bdp + q_th as f64 - q as f64,
        };
        let floor = MIN_CWND_SEGMENTS * mss as u64;
        if w.is_finite() && w > floor as f64 {
            w as u64
        } else {
            floor
        }
    }

    fn predicted_rtt(&self) -> Duration {
        match self.p.rtt {
            RttPredictor::MinRtt => self.min_rtt,
            RttPredictor::Srtt => self.srtt,
        }
    }

    /// Re-evaluate freshness and the window at `now`.
    fn update(&mut self, now: Time) {
        let rtt = self.predicted_rtt();
        let fresh = self.last.filter(|r| {
            now.saturating_since(r.sampled_at) <= self.p.stale_after && rtt > Duration::ZERO
        });
        match fresh {
            Some(r) => {
                self.window = Self::formula(
                    self.p.variant,
                    r.rate_bps,
                    rtt,
                    r.queue_bytes.unwrap_or(0),
                    self.p.q_th_bytes,
                    self.base.mss,
                );
                if !self.active {
                    if let Some(l) = self.loss.as_mut() {
                        // Fresh feedback within a timeout's recovery: the loss window goes on
                        // from where the fallback has brought it.
                        *l = self.fallback.cwnd();
                    }
                }
                self.active = true;
            }
            None if self.active => {
                // Feedback went stale: the loss-based controller takes over from the last
                // window in force (the radio window, or the loss window after a timeout).
                let last = self.radio_cwnd();
                self.active = false;
                self.fallbacks += 1;
                let segs = last.div_ceil(self.base.mss as u64).max(1);
                *self.fallback = Cc::new(&CcParams {
                    kind: self.p.fallback,
                    initial_cwnd_segments: segs.min(u32::MAX as u64) as u32,
                    ..self.base
                });
            }
            None => {}
        }
    }
}

impl CongestionControl for RadioAware {
    fn cwnd(&self) -> u64 {
        if self.active {
            self.radio_cwnd()
        } else {
            self.fallback.cwnd()
        }
    }
    fn ssthresh(&self) -> u64 {
        // While active the radio window is the threshold (the loss window slow-starts to it).
        if self.active {
            self.window
        } else {
            self.fallback.ssthresh()
        }
    }
    fn pacing_rate_bps(&self) -> Option<f64> {
        if self.active {
            None
        } else {
            self.fallback.pacing_rate_bps()
        }
    }
    fn on_packet_sent(&mut self, now: Time, bytes: u64, in_flight: u64, app_limited: bool) {
        self.update(now);
        if !self.active {
            self.fallback
                .on_packet_sent(now, bytes, in_flight, app_limited);
        }
    }
    fn on_ack(&mut self, ack: &AckSample) {
        self.min_rtt = ack.min_rtt;
        self.srtt = ack.srtt;
        self.update(ack.now);
        if let Some(l) = self.loss {
            if !ack.in_loss {
                // The timeout's recovery is over (everything outstanding at the timeout is
                // cumulatively acknowledged): the radio window again, as BBR restores its
                // cwnd on leaving TCP_CA_Loss (`bbr_set_cwnd_to_recover_or_restore`).
                self.loss = None;
            } else if self.active && ack.cum_acked > 0 && !ack.rate_limited {
                // Slow start after the timeout on ACKs that advance SND.UNA (RFC 7661: while
                // the window limits the sender), up to the radio window (BBR: `cwnd =
                // min(cwnd + acked, target_cwnd)`), by at most one SMSS per ACK: RFC 5681
                // §3.1 eq. 2, cwnd += min(N, SMSS), whatever the stack's byte counting, as
                // FreeBSD does after a timeout (cc_newreno.c `newreno_cc_cwnd_in_slow_start`:
                // "Must not use abc_l_var > 1 if slow starting after an RTO"). The ACK of a
                // go-back-N retransmission that fills a hole covers everything the receiver
                // held out of order; counting all of it (Linux's `tcp_slow_start`, whose
                // ceiling is a reduced ssthresh, not a radio window) sends a burst of that
                // size at once, which a small layer-2 buffer drops, retransmissions included.
                let grown = l + ack.bytes_acked.min(self.base.mss as u64);
                self.loss = Some(grown.min(self.window.max(l)));
            }
        }
        if !self.active {
            self.fallback.on_ack(ack);
        }
    }
    fn on_congestion_event(&mut self, now: Time, basis: u64, mss: u32) {
        self.update(now);
        if !self.active {
            self.fallback.on_congestion_event(now, basis, mss);
        }
    }
    fn on_recovery_exit(&mut self, now: Time, mss: u32) {
        if !self.active {
            self.fallback.on_recovery_exit(now, mss);
        }
    }
    fn on_rto(&mut self, now: Time, basis: u64, mss: u32, reduce_ssthresh: bool) {
        self.update(now);
        // RFC 5681 §3.1 loss window, for the radio window as Linux `tcp_enter_loss` applies it
        // to every module (the seed does not say what a timeout does); a repeated timeout of one
        // recovery starts it again at one segment, as there. ssthresh needs no reduction: the
        // radio window is the slow-start ceiling.
        self.loss = Some(mss as u64);
        if !self.active {
            self.fallback.on_rto(now, basis, mss, reduce_ssthresh);
        }
    }
    fn on_undo(&mut self, now: Time, cwnd: u64, ssthresh: u64) {
        // A spurious timeout (Linux `tcp_try_undo_loss` → `tcp_undo_cwnd_reduction`): the window
        // from before it, the radio window, comes back.
        self.loss = None;
        self.fallback.on_undo(now, cwnd, ssthresh);
    }
    fn on_idle_restart(&mut self, now: Time, cwnd: u64, ssthresh: u64) -> bool {
        // Fresh feedback sets the window from R(t)·RTT: nothing to restart. Otherwise the
        // fallback restarts as it would alone.
        self.update(now);
        !self.active && self.fallback.on_idle_restart(now, cwnd, ssthresh)
    }
    fn controls_recovery_window(&self) -> bool {
        self.active || self.fallback.controls_recovery_window()
    }
    fn on_feedback(&mut self, now: Time, fb: &Feedback) {
        let Some(rate_bps) = fb.rate_bps.filter(|r| r.is_finite() && *r >= 0.0) else {
            return; // no rate: as if missing
        };
        if self.last.is_some_and(|l| fb.sampled_at < l.sampled_at) {
            return; // older than what we have (reordered)
        }
        self.reports += 1;
        self.last = Some(Report {
            sampled_at: fb.sampled_at,
            rate_bps,
            queue_bytes: fb.queue_bytes,
        });
        self.update(now);
    }
    fn slow_start_cause(&self) -> SlowStartCause {
        if self.active {
            SlowStartCause::Threshold // the radio window took over
        } else {
            self.fallback.slow_start_cause()
        }
    }
    fn trace(&self) -> CcTrace {
        let mut t = if self.active {
            CcTrace::default()
        } else {
            self.fallback.trace()
        };
        t.radio_active = Some(self.active);
        t.radio_rate_bps = self.last.map(|r| r.rate_bps);
        t.radio_queue_bytes = self.last.and_then(|r| r.queue_bytes);
        t
    }
}
