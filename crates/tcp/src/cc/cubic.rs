//! CUBIC congestion control (RFC 9438) with HyStart++ slow start (RFC 9406).
//!
//! In congestion avoidance the window follows W_cubic(t) = C·(t − K)³ + W_max (RFC 9438 §4.2),
//! t measured from the start of the congestion-avoidance epoch, with the Reno-friendly estimate
//! W_est as a floor (§4.3), multiplicative decrease by β_cubic = 0.7 (§4.6), fast convergence
//! (§4.7) and Reno's timeout response with CUBIC's ssthresh (§4.8). Windows in the cubic
//! arithmetic are in segments (f64); the exported cwnd is bytes. The window grows only while it
//! limits the sender, and t excludes the periods when it does not (§5.8).
//!
//! Slow start is RFC 5681 byte counting with one of two exits ([`Hystart`]):
//! * Linux's HyStart (`tcp_cubic.c`, the Linux default and ns-3's `TcpCubic`): in every slow
//!   start, once cwnd ≥ 16 segments, leave slow start (ssthresh = cwnd) when a train of ACKs
//!   spaced ≤ 2 ms lasts longer than half the minimum delay — the pipe is about full — or when
//!   the minimum RTT of a round's first 8 samples exceeds the connection's minimum by
//!   clamp(min/8, 4 ms, 16 ms). Rounds end when SND.UNA passes SND.NXT of the round's start.
//! * HyStart++ (RFC 9406 §4), initial slow start only: delay increase between consecutive
//!   rounds, then Conservative Slow Start. Its delay signal comes from the previous round's
//!   packets (the ACKs of round n are for data sent in round n − 1), so with a drop-tail queue of
//!   one BDP or less the queue can overflow before it fires; that is the algorithm, not a defect
//!   of this model.

use super::{AckSample, CcParams, CcTrace, CongestionControl, Hystart, SlowStartCause};
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
/// Linux tcp_cubic.c `bictcp_update`: "The initial growth of cubic function may be too
/// conservative when the available bandwidth is still unknown": while `last_max_cwnd == 0`
/// (no loss since the connection began or since the last timeout) cwnd grows by at least one
/// segment per this many segments acknowledged (`ca->cnt` at most 20: 5 % per RTT). Not in
/// RFC 9438; applied under the Linux cwnd rules.
pub const LINUX_INITIAL_GROWTH_CNT: f64 = 20.0;

// Linux tcp_cubic.c HyStart constants.
/// `hystart_low_window`: HyStart acts only from a cwnd of 16 segments.
pub const HYSTART_LOW_WINDOW: u64 = 16;
/// `hystart_ack_delta_us`: ACKs at most 2 ms apart form a train.
pub const HYSTART_ACK_DELTA: Duration = Duration::from_millis(2);
/// `HYSTART_MIN_SAMPLES`: delay samples per round before the delay test.
pub const HYSTART_MIN_SAMPLES: u32 = 8;
/// `HYSTART_DELAY_MIN` / `HYSTART_DELAY_MAX`: bounds of the delay threshold.
pub const HYSTART_DELAY_MIN: Duration = Duration::from_millis(4);
pub const HYSTART_DELAY_MAX: Duration = Duration::from_millis(16);

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

/// Linux HyStart's per-round state (`struct bictcp`: round_start, end_seq, last_ack, curr_rtt,
/// sample_cnt, found).
#[derive(Clone, Copy, Debug)]
struct ClassicHystart {
    found: bool,
    round_start: Time,
    last_ack: Time,
    /// SND.NXT at the round's start; the round ends when SND.UNA passes it.
    end_seq: u64,
    curr_rtt: Duration,
    sample_cnt: u32,
}

impl ClassicHystart {
    fn new() -> Self {
        ClassicHystart {
            found: false,
            round_start: Time::ZERO,
            last_ack: Time::ZERO,
            end_seq: 0,
            curr_rtt: Duration::MAX,
            sample_cnt: 0,
        }
    }
}

/// How HyStart ended slow start, for tests and traces.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HystartExit {
    AckTrain,
    Delay,
}

/// CUBIC controller. cwnd and ssthresh in bytes; W_max, W_est, cwnd_epoch in segments.
#[derive(Clone, Debug)]
pub struct Cubic {
    params: CcParams,
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
    /// Time of the last transmission, to exclude idle periods from t.
    last_sent: Option<Time>,
    /// Time of the last ACK in congestion avoidance, to exclude rate-limited periods from t.
    last_ca_ack: Option<Time>,

    // Linux HyStart.
    classic: ClassicHystart,
    hystart_exit: Option<HystartExit>,

    // HyStart++ (RFC 9406).
    hystart: HystartPhase,
    paced: bool,
    /// RFC 9406 §4.2 windowEnd (a send-side position); the round ends when SND.UNA reaches it.
    window_end: Option<u64>,
    last_round_min_rtt: Duration,
    current_round_min_rtt: Duration,
    rtt_sample_count: u32,
    css_baseline_min_rtt: Duration,
}

impl Cubic {
    pub fn new(p: &CcParams) -> Self {
        let mss = p.mss as u64;
        Cubic {
            params: *p,
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
            last_sent: None,
            last_ca_ack: None,
            classic: ClassicHystart::new(),
            hystart_exit: None,
            hystart: if p.hystart == Hystart::PlusPlus {
                HystartPhase::SlowStart
            } else {
                HystartPhase::Done
            },
            paced: false,
            window_end: None,
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
    /// How Linux HyStart ended the last slow start, if it did.
    pub fn hystart_exit(&self) -> Option<HystartExit> {
        self.hystart_exit
    }
    /// Start of the current congestion-avoidance epoch.
    pub fn epoch_start(&self) -> Option<Time> {
        self.epoch_start
    }

    /// Linux's cwnd rules are in force (they grow slow start by all that an ACK acknowledged,
    /// `CcParams::abc_limit_segments` = None); they bring tcp_cubic.c's own rules too.
    #[inline]
    fn linux_rules(&self) -> bool {
        self.params.abc_limit_segments.is_none()
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

    /// Linux `hystart_update` (tcp_cubic.c), called on ACKs with an RTT sample in slow start
    /// while the exit has not been found. Sets ssthresh = cwnd when it fires.
    fn classic_hystart_on_ack(&mut self, ack: &AckSample, delay: Duration) {
        let now = ack.now;
        let h = &mut self.classic;
        if ack.snd_una > h.end_seq {
            // bictcp_hystart_reset: a new round.
            h.round_start = now;
            h.last_ack = now;
            h.end_seq = ack.snd_nxt;
            h.curr_rtt = Duration::MAX;
            h.sample_cnt = 0;
        }
        if self.cwnd < HYSTART_LOW_WINDOW * self.mss {
            return;
        }
        let delay_min = self.min_rtt;
        // ACK train: ACKs closely spaced for longer than delay_min / 2 (the whole of delay_min
        // when paced) mean the pipe is full. Linux adds a TSO/GRO cushion of up to 1 ms
        // (`hystart_ack_delay`); there is no TSO or GRO here, so it is 0.
        if now.saturating_since(h.last_ack) <= HYSTART_ACK_DELTA {
            h.last_ack = now;
            let threshold = if self.paced {
                delay_min
            } else {
                Duration(delay_min.0 / 2)
            };
            if now.saturating_since(h.round_start) > threshold {
                h.found = true;
                self.hystart_exit = Some(HystartExit::AckTrain);
                self.ssthresh = self.cwnd;
                return;
            }
        }
        // Delay increase over the round's first HYSTART_MIN_SAMPLES samples.
        h.curr_rtt = h.curr_rtt.min(delay);
        if h.sample_cnt < HYSTART_MIN_SAMPLES {
            h.sample_cnt += 1;
        } else {
            let thresh = Duration(delay_min.0 >> 3)
                .max(HYSTART_DELAY_MIN)
                .min(HYSTART_DELAY_MAX);
            if h.curr_rtt > delay_min + thresh {
                h.found = true;
                self.hystart_exit = Some(HystartExit::Delay);
                self.ssthresh = self.cwnd;
            }
        }
    }

    /// RFC 9406 §4.2: per-ACK HyStart++ bookkeeping while in slow start / CSS. Returns the
    /// increase to apply to cwnd.
    fn hystart_on_ack(&mut self, ack: &AckSample) -> u64 {
        let l = if self.paced { u64::MAX / 2 } else { L_UNPACED };
        // Rounds (RFC 9406 §4.2: "Define windowEnd as a sequence number initialized to SND.NXT.
        // When windowEnd is ACKed, the current round ends and windowEnd is set to SND.NXT.")
        let round_end = self.window_end.is_none_or(|w| ack.snd_una >= w);
        if round_end {
            let css_round_done = self.window_end.is_some();
            self.window_end = Some(ack.snd_nxt);
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
            HystartPhase::Done => self.params.slow_start_increase(ack),
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
        let since_last_ack = self.last_ca_ack.map(|t| now.saturating_since(t));
        self.last_ca_ack = Some(now);
        if ack.rate_limited {
            // RFC 9438 §5.8: no growth while the window does not limit the sender, and t in
            // Eq. (1) MUST NOT include such periods.
            if let (Some(start), Some(d)) = (self.epoch_start, since_last_ack) {
                self.epoch_start = Some((start + d).min(now));
            }
            return;
        }
        if ack.cum_acked == 0 {
            return; // a duplicate ACK (SACK information only) does not grow cwnd
        }
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
        // Linux's floor while no loss has set W_max (after slow start or a timeout, where
        // after_congestion is false, as Linux's last_max_cwnd is 0 then).
        let new_cwnd = if self.linux_rules() && !self.after_congestion {
            new_cwnd.max(cwnd + acked_segs / LINUX_INITIAL_GROWTH_CNT)
        } else {
            new_cwnd
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

    /// Slow-start increase for this ACK, with the configured exit detection.
    fn slow_start(&mut self, ack: &AckSample) -> u64 {
        match self.params.hystart {
            Hystart::PlusPlus if self.hystart != HystartPhase::Done => self.hystart_on_ack(ack),
            Hystart::Classic => {
                if !self.classic.found {
                    if let Some(rtt) = ack.rtt {
                        self.classic_hystart_on_ack(ack, rtt.max(Duration(1)));
                    }
                }
                if self.cwnd >= self.ssthresh {
                    return 0; // the exit was found on this ACK: CA from the next one
                }
                self.params.slow_start_increase(ack)
            }
            _ => self.params.slow_start_increase(ack),
        }
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
        if ack.in_recovery {
            return; // the endpoint's recovery (RFC 6675 / PRR) governs sending.
        }
        // Growth only on ACKs that advance SND.UNA (RFC 5681 §3.1, Linux tcp_may_raise_cwnd);
        // HyStart's detection still sees every ACK with an RTT sample.
        let may_raise = ack.cum_acked > 0 && !ack.rate_limited;
        if self.cwnd < self.ssthresh {
            // Exit detection runs on every slow-start ACK (Linux calls hystart_update from
            // pkts_acked, before the cwnd-limited test); growth only when cwnd-limited.
            let inc = self.slow_start(ack);
            if !may_raise {
                return;
            }
            // Slow start stops at ssthresh (as Linux tcp_slow_start); CA takes over next ACK.
            self.cwnd = (self.cwnd + inc).min(self.ssthresh.max(self.cwnd));
            return;
        }
        self.congestion_avoidance(ack);
    }

    fn on_congestion_event(&mut self, _now: Time, _basis: u64, _mss: u32) {
        let ss = self.reduce();
        self.ssthresh = ss;
        self.cwnd = ss;
    }

    fn on_recovery_exit(&mut self, _now: Time, _mss: u32) {
        // cwnd stays at ssthresh; the epoch starts with the next ACK in congestion avoidance.
        self.cwnd = self.cwnd.max(2 * self.mss);
    }

    fn on_undo(&mut self, _now: Time, cwnd: u64, ssthresh: u64) {
        // Linux tcp_undo_cwnd_reduction with tcp_reno_undo_cwnd (the endpoint computed both).
        self.cwnd = cwnd;
        self.ssthresh = ssthresh;
    }
    fn on_idle_restart(&mut self, _now: Time, cwnd: u64, ssthresh: u64) -> bool {
        // RFC 5681 §4.1 (the endpoint computed the restart window).
        self.cwnd = cwnd;
        self.ssthresh = ssthresh;
        true
    }
    fn on_rto(&mut self, _now: Time, _basis: u64, _mss: u32, reduce_ssthresh: bool) {
        // RFC 9438 §4.8: Reno's timeout response (cwnd = 1 loss window) with ssthresh from §4.6,
        // when the endpoint says this timeout is a new congestion event.
        if reduce_ssthresh {
            let ss = self.reduce();
            self.ssthresh = ss;
        }
        self.epoch_start = None;
        self.last_ca_ack = None;
        self.cwnd = self.mss;
        // §4.8: the first CA stage after a timeout uses K = 0 and W_max = cwnd at its start.
        self.after_congestion = false;
        self.w_max = None;
        // Linux cubictcp_state(TCP_CA_Loss): HyStart starts afresh for the next slow start.
        self.classic = ClassicHystart::new();
    }

    fn slow_start_cause(&self) -> SlowStartCause {
        match (self.hystart_exit, self.params.hystart) {
            (Some(HystartExit::AckTrain), _) => SlowStartCause::HystartTrain,
            (Some(HystartExit::Delay), _) => SlowStartCause::HystartDelay,
            (None, Hystart::PlusPlus) => SlowStartCause::HystartPlusPlus,
            (None, _) => SlowStartCause::Threshold,
        }
    }

    fn trace(&self) -> CcTrace {
        CcTrace {
            cubic_w_max: self.w_max.map(|w| w * self.mss as f64),
            cubic_k_s: Some(self.k),
            ..CcTrace::default()
        }
    }
}
