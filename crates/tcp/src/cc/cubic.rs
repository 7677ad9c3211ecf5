//! CUBIC congestion control (RFC 9438) with HyStart++ slow start (RFC 9406).
//!
//! In congestion avoidance the window follows W_cubic(t) = C·(t − K)³ + W_max (RFC 9438 §4.2),
//! t measured from the start of the congestion-avoidance epoch, with the Reno-friendly estimate
//! W_est as a floor (§4.3), multiplicative decrease by β_cubic = 0.7 (§4.6), fast convergence
//! (§4.7) and Reno's timeout response with CUBIC's ssthresh (§4.8). Windows in the cubic
//! arithmetic are in segments (f64); the exported cwnd is bytes. Slow start is RFC 5681 byte
//! counting, replaced by HyStart++ (RFC 9406 §4) for the initial slow start when enabled (the
//! default, as in Linux).

use super::{AckSample, CcParams, CcTrace, CongestionControl};
use rantcp_core::{Duration, Time};

/// RFC 9438 §4.1.1: C = 0.4 (segments / s³).
pub const C: f64 = 0.4;
/// RFC 9438 §4.1.1: β_cubic = 0.7 (multiplicative decrease, §4.6).
pub const BETA: f64 = 0.7;
/// RFC 9438 §4.3: α_cubic = 3(1 − β)/(1 + β).
pub const ALPHA: f64 = 3.0 * (1.0 - BETA) / (1.0 + BETA);

// RFC 9406 §4.3 constants.
const MIN_RTT_THRESH: Duration = Duration::from_millis(4);
const MAX_RTT_THRESH: Duration = Duration::from_millis(16);
const MIN_RTT_DIVISOR: u64 = 8;
const N_RTT_SAMPLE: u32 = 8;
const CSS_GROWTH_DIVISOR: u64 = 4;
const CSS_ROUNDS: u32 = 5;
/// RFC 9406 §4.3: L = 8 when not pacing (infinity when pacing).
const L_UNPACED: u64 = 8;

/// Cube root from IEEE basic operations only (Newton's method), so K is bit-identical on every
/// platform whatever its libm (design.md §3: byte-identical outputs).
pub fn cbrt(x: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    // Start above the root (x ≥ 1: x itself is an upper bound; x < 1: 1 is), then Newton
    // decreases monotonically to it.
    let mut y = if x > 1.0 { x.min(1.0 + x / 3.0) } else { 1.0 };
    for _ in 0..200 {
        let next = y - (y - x / (y * y)) / 3.0;
        if next >= y {
            break;
        }
        y = next;
    }
    y
}

/// HyStart++ phase (RFC 9406 §4.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HystartPhase {
    /// Standard slow start with delay monitoring.
    SlowStart,
    /// Conservative Slow Start, with the number of CSS rounds completed.
    Css { rounds: u32 },
    /// HyStart++ finished (left slow start, or a loss happened, or disabled).
    Done,
}

/// CUBIC controller. cwnd and ssthresh in bytes; W_max, W_est, cwnd_epoch in segments.
#[derive(Clone, Debug)]
pub struct Cubic {
    cwnd: u64,
    ssthresh: u64,
    mss: u64,
    /// RFC 9438 §4.2 W_max (segments); `None` until the first congestion event.
    w_max: Option<f64>,
    /// K (seconds) of the current epoch.
    k: f64,
    /// Start of the current congestion-avoidance epoch (§4.2 "t"), `None` = not started.
    epoch_start: Option<Time>,
    /// cwnd at the start of the epoch (segments).
    cwnd_epoch: f64,
    /// The epoch starts after a congestion event (W_max, K from §4.6/§4.7) rather than from slow
    /// start or a timeout (K = 0, W_max = cwnd at the start of the stage, §4.8/§4.10).
    after_congestion: bool,
    /// RFC 9438 §4.3 Reno-friendly estimate (segments).
    w_est: f64,
    /// cwnd_prior: cwnd before the most recent reduction (segments), for α_cubic (§4.3).
    cwnd_prior: f64,
    /// Fractional cwnd growth carried between ACKs (bytes).
    frac_bytes: f64,
    /// Minimum RTT, the "RTT" of §4.2's W_cubic(t + RTT) (as Linux uses delay_min).
    min_rtt: Duration,
    /// An RTO fired and no new data has been acknowledged since: a repeated timeout of the same
    /// episode does not reduce ssthresh or W_max again (RFC 5681 §3.1, Linux tcp_enter_loss).
    in_rto_backoff: bool,
    /// Time of the last transmission, to exclude idle periods from t.
    last_sent: Option<Time>,

    // HyStart++ (RFC 9406).
    hystart: HystartPhase,
    paced: bool,
    window_end_delivered: u64,
    round_started: bool,
    last_round_min_rtt: Duration,
    current_round_min_rtt: Duration,
    rtt_sample_count: u32,
    css_baseline_min_rtt: Duration,
}

impl Cubic {
    pub fn new(p: &CcParams) -> Self {
        let mss = p.mss as u64;
        Cubic {
            cwnd: p.initial_cwnd_segments as u64 * mss,
            ssthresh: u64::MAX,
            mss,
            w_max: None,
            k: 0.0,
            epoch_start: None,
            cwnd_epoch: 0.0,
            after_congestion: false,
            w_est: 0.0,
            cwnd_prior: 0.0,
            frac_bytes: 0.0,
            min_rtt: Duration::MAX,
            in_rto_backoff: false,
            last_sent: None,
            hystart: if p.hystart {
                HystartPhase::SlowStart
            } else {
                HystartPhase::Done
            },
            paced: false,
            window_end_delivered: 0,
            round_started: false,
            last_round_min_rtt: Duration::MAX,
            current_round_min_rtt: Duration::MAX,
            rtt_sample_count: 0,
            css_baseline_min_rtt: Duration::MAX,
        }
    }

    /// Tell HyStart++ whether the sender paces (RFC 9406 §4.3: L = ∞ when paced, else 8).
    pub fn set_paced(&mut self, paced: bool) {
        self.paced = paced;
    }

    /// W_max in segments (`None` before the first congestion event).
    pub fn w_max_segments(&self) -> Option<f64> {
        self.w_max
    }
    /// K in seconds of the current epoch.
    pub fn k_seconds(&self) -> f64 {
        self.k
    }
    /// Reno-friendly estimate W_est (segments).
    pub fn w_est_segments(&self) -> f64 {
        self.w_est
    }
    /// HyStart++ phase.
    pub fn hystart_phase(&self) -> HystartPhase {
        self.hystart
    }
    /// Start of the current congestion-avoidance epoch.
    pub fn epoch_start(&self) -> Option<Time> {
        self.epoch_start
    }

    #[inline]
    fn segs(&self) -> f64 {
        self.cwnd as f64 / self.mss as f64
    }

    /// RFC 9438 §4.2 eq. (1).
    #[inline]
    pub fn w_cubic(&self, t: f64) -> f64 {
        let d = t - self.k;
        C * d * d * d + self.w_max.unwrap_or(0.0)
    }

    /// RFC 5681 §3.1 / RFC 9406 §4.2 slow-start increase with limit L segments per ACK.
    #[inline]
    fn slow_start_inc(&self, acked: u64, l: u64) -> u64 {
        acked.min(l.saturating_mul(self.mss))
    }

    /// RFC 9406 §4.2: per-ACK HyStart++ bookkeeping while in slow start / CSS. Returns the
    /// increase to apply to cwnd.
    fn hystart_on_ack(&mut self, ack: &AckSample) -> u64 {
        let l = if self.paced { u64::MAX / 2 } else { L_UNPACED };
        // Rounds (RFC 9406 §4.2: windowEnd = SND.NXT at the round start; a round ends when it is
        // acknowledged). A packet sent after the round began has prior_delivered at least the
        // delivered count at the round start.
        let round_end = match ack.rate {
            Some(rs) => rs.prior_delivered >= self.window_end_delivered,
            None => ack.delivered >= self.window_end_delivered,
        };
        if !self.round_started || round_end {
            let css_round_done = self.round_started;
            self.round_started = true;
            self.window_end_delivered = if ack.rate.is_some() {
                ack.delivered
            } else {
                ack.delivered + ack.bytes_in_flight
            };
            self.last_round_min_rtt = self.current_round_min_rtt;
            self.current_round_min_rtt = Duration::MAX;
            self.rtt_sample_count = 0;
            if let HystartPhase::Css { rounds } = self.hystart {
                let rounds = rounds + css_round_done as u32;
                if rounds >= CSS_ROUNDS {
                    // RFC 9406 §4.2: after CSS_ROUNDS rounds in CSS, enter congestion avoidance
                    // with ssthresh = cwnd.
                    self.hystart = HystartPhase::Done;
                    self.ssthresh = self.cwnd;
                    return 0;
                }
                self.hystart = HystartPhase::Css { rounds };
            }
        }
        if let Some(rtt) = ack.rtt {
            self.current_round_min_rtt = self.current_round_min_rtt.min(rtt);
            self.rtt_sample_count += 1;
        }
        match self.hystart {
            HystartPhase::SlowStart => {
                let inc = self.slow_start_inc(ack.bytes_acked, l);
                if self.rtt_sample_count >= N_RTT_SAMPLE
                    && self.current_round_min_rtt != Duration::MAX
                    && self.last_round_min_rtt != Duration::MAX
                {
                    let thresh = Duration(self.last_round_min_rtt.0 / MIN_RTT_DIVISOR)
                        .max(MIN_RTT_THRESH)
                        .min(MAX_RTT_THRESH);
                    if self.current_round_min_rtt >= self.last_round_min_rtt + thresh {
                        self.css_baseline_min_rtt = self.current_round_min_rtt;
                        self.hystart = HystartPhase::Css { rounds: 0 };
                    }
                }
                inc
            }
            HystartPhase::Css { .. } => {
                if self.rtt_sample_count >= N_RTT_SAMPLE
                    && self.current_round_min_rtt < self.css_baseline_min_rtt
                {
                    // RFC 9406 §4.2: the delay increase was spurious; resume slow start.
                    self.css_baseline_min_rtt = Duration::MAX;
                    self.hystart = HystartPhase::SlowStart;
                    return self.slow_start_inc(ack.bytes_acked, l);
                }
                self.slow_start_inc(ack.bytes_acked, l) / CSS_GROWTH_DIVISOR
            }
            HystartPhase::Done => self.slow_start_inc(ack.bytes_acked, 2),
        }
    }

    /// Begin a congestion-avoidance epoch (RFC 9438 §4.2, §4.8, §4.10).
    fn start_epoch(&mut self, now: Time) {
        let cwnd = self.segs();
        self.epoch_start = Some(now);
        self.cwnd_epoch = cwnd;
        self.w_est = cwnd;
        self.frac_bytes = 0.0;
        match self.w_max {
            Some(w_max) if self.after_congestion && w_max > cwnd => {
                // §4.2 eq. (2): K = cbrt((W_max − cwnd_epoch)/C).
                self.k = cbrt((w_max - cwnd) / C);
            }
            _ => {
                // §4.10 (exit from slow start without loss) and §4.8 (first CA stage after a
                // timeout): K = 0, W_max = cwnd at the start of the stage, W_est = cwnd.
                self.k = 0.0;
                self.w_max = Some(cwnd);
                if !self.after_congestion {
                    self.cwnd_prior = cwnd;
                }
            }
        }
    }

    fn congestion_avoidance(&mut self, ack: &AckSample) {
        let now = ack.now;
        if self.epoch_start.is_none() {
            self.start_epoch(now);
        }
        let cwnd = self.segs();
        let acked_segs = ack.bytes_acked as f64 / self.mss as f64;
        let t = (now.saturating_since(self.epoch_start.unwrap_or(now))).as_secs_f64();
        let rtt = if self.min_rtt == Duration::MAX {
            ack.srtt
        } else {
            self.min_rtt
        };

        // §4.3 Reno-friendly region: W_est += α_cubic · segments_acked / cwnd, with α = 1 once
        // W_est has reached cwnd_prior.
        let alpha = if self.w_est >= self.cwnd_prior {
            1.0
        } else {
            ALPHA
        };
        self.w_est += alpha * acked_segs / cwnd;

        let w_cubic_now = self.w_cubic(t);
        let new_cwnd = if w_cubic_now < self.w_est {
            // §4.3: cwnd = W_est.
            self.w_est.max(cwnd)
        } else {
            // §4.4 concave / §4.5 convex: target = W_cubic(t + RTT) clamped to
            // [cwnd, 1.5·cwnd]; cwnd += (target − cwnd)/cwnd per ACK-ed segment.
            let target = self.w_cubic(t + rtt.as_secs_f64()).clamp(cwnd, 1.5 * cwnd);
            cwnd + (target - cwnd) / cwnd * acked_segs
        };
        let inc = (new_cwnd - cwnd) * self.mss as f64 + self.frac_bytes;
        let whole = inc.floor().max(0.0);
        self.frac_bytes = inc - whole;
        self.cwnd += whole as u64;
    }

    /// RFC 9438 §4.7 fast convergence and §4.6 multiplicative decrease bookkeeping.
    fn reduce(&mut self) -> u64 {
        let cwnd = self.segs();
        // §4.7: a loss below the previous W_max means another flow took bandwidth: release more.
        self.w_max = Some(match self.w_max {
            Some(prev) if cwnd < prev => cwnd * (1.0 + BETA) / 2.0,
            _ => cwnd,
        });
        self.cwnd_prior = cwnd;
        // §4.6: ssthresh = cwnd · β_cubic, at least 2 segments.
        let ss = ((self.cwnd as f64 * BETA) as u64).max(2 * self.mss);
        self.epoch_start = None;
        self.after_congestion = true;
        if self.hystart != HystartPhase::Done {
            self.hystart = HystartPhase::Done; // RFC 9406 §4.2: loss ends HyStart++.
        }
        ss
    }
}

impl CongestionControl for Cubic {
    fn cwnd(&self) -> u64 {
        self.cwnd
    }
    fn ssthresh(&self) -> u64 {
        self.ssthresh
    }

    fn on_packet_sent(&mut self, now: Time, bytes: u64, bytes_in_flight: u64, _app_limited: bool) {
        // Sending resumes after an idle period (nothing else in flight): the idle time does not
        // count towards t, so W_cubic does not jump (RFC 9438 §5.8; Linux bictcp_cwnd_event
        // CA_EVENT_TX_START shifts epoch_start by the time since the last send).
        if bytes_in_flight <= bytes {
            if let (Some(start), Some(last)) = (self.epoch_start, self.last_sent) {
                let idle = now.saturating_since(last);
                self.epoch_start = Some((start + idle).min(now));
            }
        }
        self.last_sent = Some(now);
    }

    fn on_ack(&mut self, ack: &AckSample) {
        if let Some(rtt) = ack.rtt {
            self.min_rtt = self.min_rtt.min(rtt);
        }
        if ack.min_rtt != Duration::ZERO {
            self.min_rtt = self.min_rtt.min(ack.min_rtt);
        }
        if ack.bytes_acked == 0 {
            return;
        }
        self.in_rto_backoff = false;
        if ack.in_recovery {
            return; // the endpoint's RFC 6675 recovery governs sending.
        }
        if self.cwnd < self.ssthresh {
            let inc = if self.hystart == HystartPhase::Done {
                // RFC 5681 §3.1 with appropriate byte counting, L = 2 (RFC 3465 §2.2).
                self.slow_start_inc(ack.bytes_acked, 2)
            } else {
                self.hystart_on_ack(ack)
            };
            // Slow start stops at ssthresh (as Linux tcp_slow_start); CA takes over next ACK.
            self.cwnd = (self.cwnd + inc).min(self.ssthresh.max(self.cwnd));
            return;
        }
        self.congestion_avoidance(ack);
    }

    fn on_congestion_event(&mut self, _now: Time, _bytes_in_flight: u64, _mss: u32) {
        let ss = self.reduce();
        self.ssthresh = ss;
        self.cwnd = ss;
    }

    fn on_recovery_exit(&mut self, _now: Time, _mss: u32) {
        // cwnd stays at ssthresh; the epoch starts with the next ACK in congestion avoidance.
        self.cwnd = self.cwnd.max(2 * self.mss);
    }

    fn on_rto(&mut self, _now: Time, _bytes_in_flight: u64, _mss: u32) {
        // RFC 9438 §4.8: Reno's timeout response (cwnd = 1 loss window) with ssthresh from §4.6.
        if !self.in_rto_backoff {
            let ss = self.reduce();
            self.ssthresh = ss;
        }
        self.in_rto_backoff = true;
        self.epoch_start = None;
        self.cwnd = self.mss;
        // §4.8: the first CA stage after a timeout uses K = 0 and W_max = cwnd at its start.
        self.after_congestion = false;
        self.w_max = None;
    }

    fn trace(&self) -> CcTrace {
        CcTrace {
            cubic_w_max: self.w_max.map(|w| w * self.mss as f64),
            cubic_k_s: Some(self.k),
            ..CcTrace::default()
        }
    }
}
