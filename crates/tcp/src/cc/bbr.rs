//! BBR v1 congestion control, as Linux `net/ipv4/tcp_bbr.c` behaves, with
//! draft-cardwell-iccrg-bbr-congestion-control-00 as the written reference (section numbers
//! below are the draft's, with the section title where it helps to find it).
//!
//! The model: BtlBw = windowed max of delivery-rate samples over 10 packet-timed rounds (§4.1.1),
//! RTprop = min RTT over 10 s (§4.1.2); pacing rate = pacing_gain · BtlBw · (1 − 1 % margin)
//! (§4.2.1), cwnd = cwnd_gain · BDP + 3 segments of quantization budget (§4.2.3). The state machine
//! is STARTUP (gain 2/ln 2) → DRAIN (1/(2/ln 2)) → PROBE_BW (8-phase gain cycle 5/4, 3/4, 1 ×6,
//! cwnd gain 2) with PROBE_RTT (cwnd 4 segments for max(200 ms, 1 round)) whenever the min-RTT
//! estimate is 10 s old (§4.3). Loss recovery uses packet conservation for the first round, then
//! slow-starts up to the target, and restores the pre-recovery cwnd on exit (§4.2.3.4, Linux
//! `bbr_set_cwnd_to_recover_or_restore`).
//!
//! Simplifications relative to Linux: there is no TSO/GSO in the simulator, so the quantization
//! budget is 3 segments (`bbr_tso_segs_goal` = 1); the long-term policer model (`lt_bw`) is not
//! modelled; EDT "in network at departure" corrections reduce to the in-flight count plus one
//! segment while probing. Linux marks the sender app-limited during PROBE_RTT; since the endpoint
//! owns that marking, BBR treats samples of packets sent during PROBE_RTT as app-limited itself.
//! The ACK-aggregation cwnd bonus (Linux `bbr_update_ack_aggregation`) is modelled: cellular
//! MAC/RLC layers deliver ACKs in bursts.
//!
//! Inputs it relies on: a [`super::RateSample`] on every ACK that delivers data (round counting,
//! BtlBw), `AckSample::rtt` with Karn's rule applied (RTprop), `in_recovery` / `in_loss` /
//! `newly_lost` and the recovery hooks (packet conservation, the cwnd saved at a timeout and
//! restored when the endpoint leaves its Loss state or undoes the timeout), and
//! `on_packet_sent` (idle restart).

use super::{AckSample, CcParams, CcTrace, CongestionControl, SlowStartCause};
use rantcp_core::{entity_id, Duration, Rng, Time};

/// §4.3.2 "Startup": high gain 2/ln 2 ≈ 2.885, the smallest that doubles the delivery rate per
/// round.
pub const HIGH_GAIN: f64 = 2.0 / std::f64::consts::LN_2;
/// §4.3.3 "Drain": DRAIN pacing gain, the inverse of STARTUP's.
pub const DRAIN_GAIN: f64 = 1.0 / HIGH_GAIN;
/// §4.3.4 "ProbeBW": PROBE_BW cwnd gain.
pub const CWND_GAIN: f64 = 2.0;
/// §4.3.4 "ProbeBW": the PROBE_BW pacing-gain cycle.
pub const PACING_GAIN_CYCLE: [f64; 8] = [1.25, 0.75, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0];
/// §4.1.1 "BBR.BtlBw": BtlBw filter window, in packet-timed rounds (Linux `bbr_bw_rtts` = CYCLE_LEN
/// + 2).
pub const BW_FILTER_ROUNDS: u64 = 10;
/// §4.1.2 "BBR.RTprop": RTprop filter window.
pub const MIN_RTT_WINDOW: Duration = Duration::from_secs(10);
/// §4.3.5 "ProbeRTT": minimum time in PROBE_RTT.
pub const PROBE_RTT_DURATION: Duration = Duration::from_millis(200);
/// §4.2.3.3 "Minimum cwnd for Pipelining" / Linux `bbr_cwnd_min_target`: 4 segments.
pub const MIN_CWND_SEGMENTS: u64 = 4;
/// Linux `bbr_pacing_margin_percent`: pace 1 % below the estimated bandwidth.
pub const PACING_MARGIN: f64 = 0.01;
/// §4.3.2.2 "Estimating when Startup has filled the pipe": STARTUP exits after this many rounds
/// without 25 % BtlBw growth.
pub const FULL_BW_ROUNDS: u32 = 3;
pub const FULL_BW_THRESH: f64 = 1.25;

/// BBR state (§4.3). The `u8` values are the [`CcTrace::bbr_mode`] codes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Startup = 0,
    Drain = 1,
    ProbeBw = 2,
    ProbeRtt = 3,
}

/// Loss-recovery state as the controller sees it (Linux `icsk_ca_state`, reduced).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum CaState {
    Open,
    Recovery,
    Loss,
}

/// Windowed running maximum over a virtual time (rounds) keeping the best, second-best and
/// third-best samples of successive sub-windows (the Kathleen Nichols filter, Linux
/// `lib/win_minmax.c`): O(1) per sample, no allocation.
#[derive(Clone, Copy, Debug, Default)]
pub struct MaxFilter {
    s: [(u64, f64); 3],
}

impl MaxFilter {
    pub fn get(&self) -> f64 {
        self.s[0].1
    }
    pub fn reset(&mut self, t: u64, v: f64) {
        self.s = [(t, v); 3];
    }
    /// Add sample `v` at time `t` with window `win`; returns the windowed max.
    pub fn update(&mut self, win: u64, t: u64, v: f64) -> f64 {
        if v >= self.s[0].1 || t.saturating_sub(self.s[2].0) > win {
            self.reset(t, v);
            return v;
        }
        if v >= self.s[1].1 {
            self.s[1] = (t, v);
            self.s[2] = (t, v);
        } else if v >= self.s[2].1 {
            self.s[2] = (t, v);
        }
        // Age out sub-window bests.
        let dt = t.saturating_sub(self.s[0].0);
        if dt > win {
            self.s[0] = self.s[1];
            self.s[1] = self.s[2];
            self.s[2] = (t, v);
            if t.saturating_sub(self.s[0].0) > win {
                self.s[0] = self.s[1];
                self.s[1] = self.s[2];
                self.s[2] = (t, v);
            }
        } else if self.s[1].0 == self.s[0].0 && dt > win / 4 {
            self.s[1] = (t, v);
            self.s[2] = (t, v);
        } else if self.s[2].0 == self.s[1].0 && dt > win / 2 {
            self.s[2] = (t, v);
        }
        self.s[0].1
    }
}

/// BBR v1 controller. Sizes in bytes, bandwidth in bytes/s internally.
#[derive(Clone, Debug)]
pub struct Bbr {
    cwnd: u64,
    ssthresh: u64,
    mss: u64,
    initial_cwnd_segments: u64,
    pacing_rate_bytes_per_s: f64,
    mode: Mode,
    pacing_gain: f64,
    cwnd_gain: f64,
    rng: Rng,

    // Model.
    bw: MaxFilter,
    round_count: u64,
    next_round_delivered: u64,
    round_start: bool,
    min_rtt: Duration,
    min_rtt_stamp: Time,
    has_seen_rtt: bool,

    // STARTUP full-pipe detection.
    full_bw: f64,
    full_bw_count: u32,
    full_bw_reached: bool,

    // PROBE_BW gain cycling.
    cycle_index: usize,
    cycle_stamp: Time,

    // PROBE_RTT.
    probe_rtt_done_stamp: Option<Time>,
    probe_rtt_round_done: bool,
    idle_restart: bool,
    /// Packets sent with prior_delivered in [start, end) were sent during PROBE_RTT and count as
    /// app-limited (Linux sets `tp->app_limited` there).
    probe_rtt_app_limited: (u64, u64),

    // Recovery.
    prev_state: CaState,
    packet_conservation: bool,
    prior_cwnd: u64,

    // ACK aggregation (Linux `bbr_update_ack_aggregation`).
    ack_epoch_start: Time,
    ack_epoch_acked: u64,
    extra_acked: [u64; 2],
    extra_acked_win_rounds: u32,
    extra_acked_win_idx: usize,
}

/// Linux `bbr_extra_acked_win_rtts`: the extra-acked max filter spans 5–10 rounds.
const EXTRA_ACKED_WIN_ROUNDS: u32 = 5;
/// Linux `bbr_extra_acked_max_us`: the aggregation bonus is at most 100 ms of BtlBw.
const EXTRA_ACKED_MAX: Duration = Duration::from_millis(100);
/// Linux `bbr_ack_epoch_acked_reset_thresh`: 2^20 segments.
const ACK_EPOCH_RESET_SEGMENTS: u64 = 1 << 20;

impl Bbr {
    pub fn new(p: &CcParams) -> Self {
        let mss = p.mss as u64;
        let iw = p.initial_cwnd_segments as u64;
        let mut b = Bbr {
            cwnd: iw * mss,
            ssthresh: u64::MAX,
            mss,
            initial_cwnd_segments: iw,
            pacing_rate_bytes_per_s: 0.0,
            mode: Mode::Startup,
            pacing_gain: HIGH_GAIN,
            cwnd_gain: HIGH_GAIN,
            rng: Rng::new(p.seed, entity_id("cc/bbr")),
            bw: MaxFilter::default(),
            round_count: 0,
            next_round_delivered: 0,
            round_start: false,
            min_rtt: Duration::MAX,
            min_rtt_stamp: Time::ZERO,
            has_seen_rtt: false,
            full_bw: 0.0,
            full_bw_count: 0,
            full_bw_reached: false,
            cycle_index: 0,
            cycle_stamp: Time::ZERO,
            probe_rtt_done_stamp: None,
            probe_rtt_round_done: false,
            idle_restart: false,
            probe_rtt_app_limited: (0, 0),
            prev_state: CaState::Open,
            packet_conservation: false,
            prior_cwnd: 0,
            ack_epoch_start: Time::ZERO,
            ack_epoch_acked: 0,
            extra_acked: [0; 2],
            extra_acked_win_rounds: 0,
            extra_acked_win_idx: 0,
        };
        b.init_pacing_rate(Duration::ZERO);
        b
    }

    pub fn mode(&self) -> Mode {
        self.mode
    }
    /// Bottleneck-bandwidth estimate, bytes/s.
    pub fn btl_bw_bytes_per_s(&self) -> f64 {
        self.bw.get()
    }
    /// Min-RTT estimate (`None` before the first sample).
    pub fn min_rtt(&self) -> Option<Duration> {
        (self.min_rtt != Duration::MAX).then_some(self.min_rtt)
    }
    pub fn pacing_gain(&self) -> f64 {
        self.pacing_gain
    }
    pub fn cwnd_gain(&self) -> f64 {
        self.cwnd_gain
    }
    /// Index into [`PACING_GAIN_CYCLE`].
    pub fn cycle_index(&self) -> usize {
        self.cycle_index
    }
    pub fn full_bw_reached(&self) -> bool {
        self.full_bw_reached
    }
    /// Packet-timed rounds counted so far.
    pub fn round_count(&self) -> u64 {
        self.round_count
    }

    /// §4.2.1 "Pacing Rate" / Linux `bbr_init_pacing_rate_from_rtt`: high_gain · initial cwnd /
    /// RTT, with a nominal 1 ms RTT before the first sample.
    fn init_pacing_rate(&mut self, srtt: Duration) {
        let rtt = if srtt > Duration::ZERO {
            self.has_seen_rtt = true;
            srtt.as_secs_f64()
        } else {
            1e-3
        };
        let bw = self.cwnd as f64 / rtt;
        self.pacing_rate_bytes_per_s = HIGH_GAIN * bw * (1.0 - PACING_MARGIN);
    }

    /// §4.2.1 / Linux `bbr_set_pacing_rate`: never lower the rate before the pipe is full.
    fn set_pacing_rate(&mut self, bw: f64, gain: f64, srtt: Duration) {
        if !self.has_seen_rtt && srtt > Duration::ZERO {
            self.init_pacing_rate(srtt);
        }
        let rate = gain * bw * (1.0 - PACING_MARGIN);
        if self.full_bw_reached || rate > self.pacing_rate_bytes_per_s {
            self.pacing_rate_bytes_per_s = rate;
        }
    }

    /// §4.2.3.2 "Target cwnd" / Linux `bbr_bdp`: ceil(bw · min_rtt · gain) in segments.
    fn bdp_segments(&self, bw: f64, gain: f64) -> u64 {
        if self.min_rtt == Duration::MAX {
            return self.initial_cwnd_segments;
        }
        let bytes = bw * self.min_rtt.as_secs_f64() * gain;
        (bytes / self.mss as f64).ceil() as u64
    }

    /// §4.2.3.2 / Linux `bbr_quantization_budget` with one-segment "TSO" bursts: +3 segments,
    /// rounded up to even, +2 in the 1.25 probing phase.
    fn quantization_budget(&self, segs: u64) -> u64 {
        let mut c = segs + 3;
        c = (c + 1) & !1;
        if self.mode == Mode::ProbeBw && self.cycle_index == 0 {
            c += 2;
        }
        c
    }

    /// Target in-flight in segments for `gain` (Linux `bbr_inflight`).
    fn inflight_segments(&self, bw: f64, gain: f64) -> u64 {
        self.quantization_budget(self.bdp_segments(bw, gain))
    }

    #[inline]
    fn segs(&self, bytes: u64) -> u64 {
        bytes.div_ceil(self.mss)
    }

    /// Linux `bbr_save_cwnd`.
    fn save_cwnd(&mut self) {
        if self.prev_state == CaState::Open && self.mode != Mode::ProbeRtt {
            self.prior_cwnd = self.cwnd;
        } else {
            self.prior_cwnd = self.prior_cwnd.max(self.cwnd);
        }
    }

    /// §4.1.1.3 "Tracking Time for the BtlBw Max Filter" / Linux `bbr_update_bw`: round counting
    /// and the BtlBw max filter.
    fn update_bw(&mut self, ack: &AckSample) {
        self.round_start = false;
        let Some(rs) = ack.rate else { return };
        if rs.interval == Duration::ZERO {
            return;
        }
        if rs.prior_delivered >= self.next_round_delivered {
            self.next_round_delivered = ack.delivered;
            self.round_count += 1;
            self.round_start = true;
            self.packet_conservation = false;
        }
        let bw = rs.delivered as f64 / rs.interval.as_secs_f64();
        // §4.1.1.4 "BtlBw and Application-limited Delivery Rate Samples": app-limited samples only
        // count when they raise the estimate.
        if !self.sample_app_limited(&rs) || bw >= self.bw.get() {
            self.bw.update(BW_FILTER_ROUNDS, self.round_count, bw);
        }
    }

    fn sample_app_limited(&self, rs: &super::RateSample) -> bool {
        rs.is_app_limited
            || (rs.prior_delivered >= self.probe_rtt_app_limited.0
                && rs.prior_delivered < self.probe_rtt_app_limited.1)
    }

    /// Linux `bbr_update_ack_aggregation`: the largest excess of data ACKed beyond what BtlBw
    /// predicts over an ACK epoch, max-filtered over 5–10 rounds (bytes).
    fn update_ack_aggregation(&mut self, ack: &AckSample) {
        let Some(rs) = ack.rate else { return };
        if ack.bytes_acked == 0 || rs.interval == Duration::ZERO {
            return;
        }
        if self.round_start {
            self.extra_acked_win_rounds = (self.extra_acked_win_rounds + 1).min(31);
            if self.extra_acked_win_rounds >= EXTRA_ACKED_WIN_ROUNDS {
                self.extra_acked_win_rounds = 0;
                self.extra_acked_win_idx ^= 1;
                self.extra_acked[self.extra_acked_win_idx] = 0;
            }
        }
        let epoch = ack.now.saturating_since(self.ack_epoch_start).as_secs_f64();
        let mut expected = (self.bw.get() * epoch) as u64;
        // Restart the epoch when ACKs arrive no faster than BtlBw, or it is very old.
        if self.ack_epoch_acked <= expected
            || self.ack_epoch_acked + ack.bytes_acked >= ACK_EPOCH_RESET_SEGMENTS * self.mss
        {
            self.ack_epoch_acked = 0;
            self.ack_epoch_start = ack.now;
            expected = 0;
        }
        self.ack_epoch_acked += ack.bytes_acked;
        let extra = (self.ack_epoch_acked - expected).min(self.cwnd);
        let slot = &mut self.extra_acked[self.extra_acked_win_idx];
        *slot = (*slot).max(extra);
    }

    /// Linux `bbr_ack_aggregation_cwnd`: cwnd bonus for ACK aggregation once the pipe is full.
    fn ack_aggregation_cwnd(&self) -> u64 {
        if !self.full_bw_reached {
            return 0;
        }
        let max_aggr = (self.bw.get() * EXTRA_ACKED_MAX.as_secs_f64()) as u64;
        self.extra_acked[0].max(self.extra_acked[1]).min(max_aggr)
    }

    /// Extra-acked estimate (bytes), for tests and traces.
    pub fn extra_acked_bytes(&self) -> u64 {
        self.extra_acked[0].max(self.extra_acked[1])
    }

    /// §4.3.4 "ProbeBW" / Linux `bbr_is_next_cycle_phase`.
    fn is_next_cycle_phase(&self, ack: &AckSample) -> bool {
        let full_length = ack.now.saturating_since(self.cycle_stamp) > self.min_rtt;
        if self.pacing_gain == 1.0 {
            return full_length;
        }
        let mut inflight = self.segs(ack.prior_in_flight);
        let bw = self.bw.get();
        if self.pacing_gain > 1.0 {
            inflight += 1; // the segment about to depart
            return full_length
                && (ack.newly_lost > 0
                    || inflight >= self.inflight_segments(bw, self.pacing_gain));
        }
        full_length || inflight <= self.inflight_segments(bw, 1.0)
    }

    fn advance_cycle_phase(&mut self, now: Time) {
        self.cycle_index = (self.cycle_index + 1) % PACING_GAIN_CYCLE.len();
        self.cycle_stamp = now;
    }

    /// Linux `bbr_reset_probe_bw_mode`: start at a random phase other than the 3/4 one.
    fn enter_probe_bw(&mut self, now: Time) {
        self.mode = Mode::ProbeBw;
        self.cycle_index = PACING_GAIN_CYCLE.len() - 1 - self.rng.below(7) as usize;
        self.advance_cycle_phase(now);
    }

    fn reset_mode(&mut self, now: Time) {
        if self.full_bw_reached {
            self.enter_probe_bw(now);
        } else {
            self.mode = Mode::Startup;
        }
    }

    /// §4.3.2.2 / Linux `bbr_check_full_bw_reached`.
    fn check_full_bw_reached(&mut self, ack: &AckSample) {
        let app_limited = ack
            .rate
            .map(|rs| self.sample_app_limited(&rs))
            .unwrap_or(false);
        if self.full_bw_reached || !self.round_start || app_limited {
            return;
        }
        let max_bw = self.bw.get();
        if max_bw >= self.full_bw * FULL_BW_THRESH {
            self.full_bw = max_bw;
            self.full_bw_count = 0;
            return;
        }
        self.full_bw_count += 1;
        self.full_bw_reached = self.full_bw_count >= FULL_BW_ROUNDS;
    }

    /// §4.3.3 "Drain" / Linux `bbr_check_drain`.
    fn check_drain(&mut self, ack: &AckSample) {
        let bw = self.bw.get();
        if self.mode == Mode::Startup && self.full_bw_reached {
            self.mode = Mode::Drain;
            self.ssthresh = self.inflight_segments(bw, 1.0) * self.mss;
        }
        if self.mode == Mode::Drain
            && self.segs(ack.bytes_in_flight) <= self.inflight_segments(bw, 1.0)
        {
            self.enter_probe_bw(ack.now);
        }
    }

    /// Linux `bbr_check_probe_rtt_done`.
    fn check_probe_rtt_done(&mut self, now: Time) {
        match self.probe_rtt_done_stamp {
            Some(done) if now > done => {}
            _ => return,
        }
        self.min_rtt_stamp = now; // wait a while until the next PROBE_RTT
        self.cwnd = self.cwnd.max(self.prior_cwnd);
        self.reset_mode(now);
    }

    /// §4.1.2 + §4.3.5 "ProbeRTT" / Linux `bbr_update_min_rtt`.
    fn update_min_rtt(&mut self, ack: &AckSample) {
        let now = ack.now;
        let expired = now > self.min_rtt_stamp + MIN_RTT_WINDOW;
        // The ACK's RTT sample with Karn's rule applied (Linux feeds `ca_rtt_us`, taken only from
        // never-retransmitted segments): a retransmission acknowledged by the ACK for its
        // original would otherwise give a tiny RTT and shrink the BDP.
        if let Some(rtt) = ack.rtt.filter(|r| *r > Duration::ZERO) {
            // Linux takes only strictly smaller samples (`rs->rtt_us < bbr->min_rtt_us`); the
            // draft's `<=` would let a queue-free path refresh the filter forever and never
            // enter PROBE_RTT, which Linux does every 10 s.
            if rtt < self.min_rtt || expired {
                self.min_rtt = rtt;
                self.min_rtt_stamp = now;
            }
        }
        if expired && !self.idle_restart && self.mode != Mode::ProbeRtt {
            self.mode = Mode::ProbeRtt;
            self.save_cwnd();
            self.probe_rtt_done_stamp = None;
            self.probe_rtt_app_limited = (ack.delivered, ack.delivered);
        }
        if self.mode == Mode::ProbeRtt {
            // Samples of what is sent now describe PROBE_RTT's small window, not the path.
            self.probe_rtt_app_limited.1 = ack.delivered + ack.bytes_in_flight.max(1);
            if self.probe_rtt_done_stamp.is_none()
                && self.segs(ack.bytes_in_flight) <= MIN_CWND_SEGMENTS
            {
                self.probe_rtt_done_stamp = Some(now + PROBE_RTT_DURATION);
                self.probe_rtt_round_done = false;
                self.next_round_delivered = ack.delivered;
            } else if self.probe_rtt_done_stamp.is_some() {
                if self.round_start {
                    self.probe_rtt_round_done = true;
                }
                if self.probe_rtt_round_done {
                    self.check_probe_rtt_done(now);
                }
            }
        }
        if ack
            .rate
            .map(|rs| rs.delivered > 0)
            .unwrap_or(ack.bytes_acked > 0)
        {
            self.idle_restart = false;
        }
    }

    fn update_gains(&mut self) {
        let (p, c) = match self.mode {
            Mode::Startup => (HIGH_GAIN, HIGH_GAIN),
            Mode::Drain => (DRAIN_GAIN, HIGH_GAIN),
            Mode::ProbeBw => (PACING_GAIN_CYCLE[self.cycle_index], CWND_GAIN),
            Mode::ProbeRtt => (1.0, 1.0),
        };
        self.pacing_gain = p;
        self.cwnd_gain = c;
    }

    /// §4.2.3.4 "Modulating cwnd in Loss Recovery" / Linux `bbr_set_cwnd_to_recover_or_restore`.
    /// Returns the cwnd to use and whether packet conservation applies.
    fn recover_or_restore(&mut self, ack: &AckSample) -> (u64, bool) {
        let mut cwnd = self.cwnd;
        if ack.newly_lost > 0 {
            cwnd = cwnd.saturating_sub(ack.newly_lost).max(self.mss);
        }
        // The endpoint's loss state after this ACK (Linux reads `icsk_ca_state`): a timeout's
        // Loss state lasts until everything outstanding at the timeout is acknowledged
        // (`tcp_process_loss`, SND.UNA ≥ high_seq) or the timeout is undone.
        let state = if ack.in_recovery {
            CaState::Recovery
        } else if ack.in_loss {
            CaState::Loss
        } else {
            CaState::Open
        };
        if state == CaState::Recovery && self.prev_state != CaState::Recovery {
            // First round of recovery: packet conservation (send one per one delivered).
            if self.prev_state == CaState::Open {
                self.save_cwnd();
            }
            self.packet_conservation = true;
            self.next_round_delivered = ack.delivered; // start a round now
            cwnd = ack.bytes_in_flight + ack.bytes_acked;
        } else if self.prev_state != CaState::Open && state == CaState::Open {
            // Leaving recovery: restore the cwnd saved on entry.
            cwnd = cwnd.max(self.prior_cwnd);
            self.packet_conservation = false;
        }
        self.prev_state = state;
        if self.packet_conservation {
            return (cwnd.max(ack.bytes_in_flight + ack.bytes_acked), true);
        }
        (cwnd, false)
    }

    /// §4.2.3 "Congestion Window" / Linux `bbr_set_cwnd`.
    fn set_cwnd(&mut self, ack: &AckSample, bw: f64) {
        let acked = ack.bytes_acked;
        if acked > 0 {
            let (mut cwnd, conserving) = self.recover_or_restore(ack);
            if !conserving {
                // Linux: target = quantization(bdp + ack-aggregation bonus).
                let aggr_segs = self.ack_aggregation_cwnd().div_ceil(self.mss);
                let target = self
                    .quantization_budget(self.bdp_segments(bw, self.cwnd_gain) + aggr_segs)
                    * self.mss;
                if self.full_bw_reached {
                    cwnd = (cwnd + acked).min(target);
                } else if cwnd < target || ack.delivered < self.initial_cwnd_segments * self.mss {
                    cwnd += acked;
                }
                cwnd = cwnd.max(MIN_CWND_SEGMENTS * self.mss);
            }
            self.cwnd = cwnd;
        }
        if self.mode == Mode::ProbeRtt {
            self.cwnd = self.cwnd.min(MIN_CWND_SEGMENTS * self.mss);
        }
    }
}

impl CongestionControl for Bbr {
    fn cwnd(&self) -> u64 {
        self.cwnd
    }
    fn ssthresh(&self) -> u64 {
        self.ssthresh
    }
    fn pacing_rate_bps(&self) -> Option<f64> {
        Some(self.pacing_rate_bytes_per_s * 8.0)
    }

    fn on_packet_sent(&mut self, now: Time, bytes: u64, bytes_in_flight: u64, app_limited: bool) {
        // Linux CA_EVENT_TX_START: restarting from idle while app-limited.
        if app_limited && bytes_in_flight <= bytes {
            self.idle_restart = true;
            self.ack_epoch_start = now;
            self.ack_epoch_acked = 0;
            if self.mode == Mode::ProbeBw {
                let bw = self.bw.get();
                self.set_pacing_rate(bw, 1.0, Duration::ZERO);
            } else if self.mode == Mode::ProbeRtt {
                self.check_probe_rtt_done(now);
            }
        }
    }

    fn on_ack(&mut self, ack: &AckSample) {
        // Linux `bbr_update_model`.
        self.update_bw(ack);
        self.update_ack_aggregation(ack);
        if self.mode == Mode::ProbeBw && self.is_next_cycle_phase(ack) {
            self.advance_cycle_phase(ack.now);
        }
        self.check_full_bw_reached(ack);
        self.check_drain(ack);
        self.update_min_rtt(ack);
        self.update_gains();
        // Linux `bbr_main`.
        let bw = self.bw.get();
        self.set_pacing_rate(bw, self.pacing_gain, ack.srtt);
        self.set_cwnd(ack, bw);
    }

    fn on_congestion_event(&mut self, _now: Time, _bytes_in_flight: u64, _mss: u32) {
        // Linux `bbr_ssthresh`: note the cwnd to restore after recovery; the cut itself
        // (packet conservation) happens on the next ACK, which sees `in_recovery`.
        self.save_cwnd();
    }

    fn on_recovery_exit(&mut self, _now: Time, _mss: u32) {
        if self.prev_state != CaState::Open {
            self.cwnd = self.cwnd.max(self.prior_cwnd);
            self.packet_conservation = false;
            self.prev_state = CaState::Open;
        }
    }

    fn on_undo(&mut self, _now: Time, _cwnd: u64, _ssthresh: u64) {
        // Linux `bbr_undo_cwnd`: a spurious slow-down; restart full-pipe detection and keep cwnd.
        // The cwnd saved at the timeout comes back on the next ACK, which sees the Loss state
        // left (`bbr_set_cwnd_to_recover_or_restore`).
        self.full_bw = 0.0;
        self.full_bw_count = 0;
    }

    fn controls_recovery_window(&self) -> bool {
        true // Linux: BBR is a `cong_control` module; PRR does not apply.
    }

    fn on_rto(&mut self, _now: Time, _basis: u64, _mss: u32, _reduce_ssthresh: bool) {
        // Linux tcp_enter_loss + `bbr_set_state(TCP_CA_Loss)`: save cwnd, cwnd = 1 segment,
        // restart full-pipe accounting, treat the RTO as the end of a round. The Loss state
        // lasts as long as the endpoint says (`AckSample::in_loss`).
        self.save_cwnd();
        self.cwnd = self.mss;
        self.prev_state = CaState::Loss;
        self.full_bw = 0.0;
        self.round_start = true;
        self.packet_conservation = false;
    }

    fn slow_start_cause(&self) -> SlowStartCause {
        SlowStartCause::FullBandwidth // ssthresh is set only on entering DRAIN
    }

    fn trace(&self) -> CcTrace {
        CcTrace {
            bbr_mode: Some(self.mode as u8),
            bbr_btl_bw_bps: Some(self.bw.get() * 8.0),
            bbr_min_rtt: self.min_rtt(),
            ..CcTrace::default()
        }
    }
}
