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
//! * Losses do not shrink the window while feedback is fresh (the seed: loss on a radio link is
//!   not a congestion signal); the endpoint still retransmits, without PRR (the controller
//!   sets the recovery window itself).
//! * Missing or stale feedback: before the first report, and whenever the newest report was
//!   sampled more than `stale_after` ago (checked at every ACK, transmission, timeout and
//!   report), the flow's loss-based controller ([`RadioAwareParams::fallback`]) is in charge.
//!   It runs from the connection's start until the first fresh report; when feedback goes
//!   stale later it is started anew with the last radio window as its initial window (RFC 5681
//!   behaviour from there: slow start until the first loss, then its own rules). A report
//!   without a rate, or received before any RTT sample, counts as missing.

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
                self.active = true;
            }
            None if self.active => {
                // Feedback went stale: the loss-based controller takes over from the last
                // radio window.
                self.active = false;
                self.fallbacks += 1;
                let segs = self.window.div_ceil(self.base.mss as u64).max(1);
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
            self.window
        } else {
            self.fallback.cwnd()
        }
    }
    fn ssthresh(&self) -> u64 {
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
        if !self.active {
            self.fallback.on_rto(now, basis, mss, reduce_ssthresh);
        }
    }
    fn on_undo(&mut self, now: Time, cwnd: u64, ssthresh: u64) {
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
