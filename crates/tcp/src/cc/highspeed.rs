//! HighSpeed TCP (RFC 3649): an AIMD whose increase a(w) and decrease b(w) depend on the current
//! window w (in segments) so that the response function becomes w = 0.12 / p^0.835 (RFC 3649 §5)
//! above Low_Window = 38 segments, and is exactly standard TCP (a = 1, b = 0.5, RFC 5681; the same
//! byte-counting rules as [`super::newreno`]) at or below it. a(w) and b(w) are computed exactly
//! from §5's formulas (not from the rounded table of Appendix B, nor Linux tcp_highspeed.c's
//! `hstcp_aimd_vals`), once per change of the integer window, so the per-ACK path is a few integer
//! operations. Above High_Window the formulas are not extrapolated: b(w) stays at High_Decrease
//! = 0.1 and a(w) at a(High_Window), as the tables of RFC 3649 Appendix B, Linux and ns-3 end
//! there (extrapolated, b turns negative above ~570 000 segments and a loss would raise
//! ssthresh above the window).

use super::{AckSample, CcParams, CongestionControl};
use rantcp_core::Time;

/// RFC 3649 §5 / §6 parameters.
pub const LOW_WINDOW: f64 = 38.0;
pub const HIGH_WINDOW: f64 = 83_000.0;
pub const HIGH_P: f64 = 1e-7;
pub const HIGH_DECREASE: f64 = 0.1;

/// Loss rate at which standard TCP has window Low_Window (RFC 3649 §5: Low_P = 1.5/Low_Window²,
/// the deterministic Reno response w = 1.2/sqrt(p) rounded as the RFC does; Low_P = 0.001).
pub const LOW_P: f64 = 0.001;

/// The response function exponent S (RFC 3649 §5, eq. for S = (log W1 − log W0)/(log P1 − log P0)
/// ≈ −0.835 with the default parameters).
pub fn response_exponent() -> f64 {
    (HIGH_WINDOW.ln() - LOW_WINDOW.ln()) / (HIGH_P.ln() - LOW_P.ln())
}

/// RFC 3649 §5: the loss rate p(w) at which the response function gives window `w` segments,
/// w = Low_Window · (p / Low_P)^S, i.e. w ≈ 0.12 / p^0.835. Only meaningful for w > Low_Window.
pub fn p_of_w(w: f64) -> f64 {
    LOW_P * (w / LOW_WINDOW).powf(1.0 / response_exponent())
}

/// RFC 3649 §5: b(w) = (High_Decrease − 0.5)(log w − log Low_Window)/(log High_Window −
/// log Low_Window) + 0.5 for Low_Window < w ≤ High_Window; 0.5 (standard TCP) at or below
/// Low_Window; High_Decrease = 0.1 above High_Window (where RFC 3649 Appendix B, Linux
/// `hstcp_aimd_vals` and ns-3's TcpHighSpeed table end at b = 0.1).
pub fn b_of_w(w: f64) -> f64 {
    if w <= LOW_WINDOW {
        return 0.5;
    }
    if w >= HIGH_WINDOW {
        return HIGH_DECREASE;
    }
    (HIGH_DECREASE - 0.5) * (w.ln() - LOW_WINDOW.ln()) / (HIGH_WINDOW.ln() - LOW_WINDOW.ln()) + 0.5
}

/// RFC 3649 §5: a(w) = w² · p(w) · 2 · b(w) / (2 − b(w)) for Low_Window < w ≤ High_Window; 1 at
/// or below Low_Window; a(High_Window) above it (the tables end there, see [`b_of_w`]).
pub fn a_of_w(w: f64) -> f64 {
    if w <= LOW_WINDOW {
        return 1.0;
    }
    let w = w.min(HIGH_WINDOW);
    let b = b_of_w(w);
    (w * w * p_of_w(w) * 2.0 * b / (2.0 - b)).max(1.0)
}

/// HighSpeed TCP controller. Sizes in bytes.
#[derive(Clone, Debug)]
pub struct HighSpeed {
    params: CcParams,
    cwnd: u64,
    ssthresh: u64,
    mss: u64,
    /// Integer window (segments) the cached a/b belong to.
    cached_w: u64,
    /// a(w) in 1/1024 segment units, so the per-ACK increase is integer arithmetic.
    a_q10: u64,
    b: f64,
    /// Bytes acknowledged since cwnd last grew in congestion avoidance (RFC 3465 §2.1).
    bytes_acked: u64,
}

impl HighSpeed {
    pub fn new(p: &CcParams) -> Self {
        let mss = p.mss as u64;
        HighSpeed {
            params: *p,
            cwnd: p.initial_cwnd_segments as u64 * mss,
            ssthresh: u64::MAX,
            mss,
            cached_w: 0,
            a_q10: 1024,
            b: 0.5,
            bytes_acked: 0,
        }
    }

    /// Refresh a(w), b(w) when the integer window changed (not per ACK in steady state).
    #[inline]
    fn update_aimd(&mut self) {
        let w = self.cwnd / self.mss.max(1);
        if w != self.cached_w {
            self.cached_w = w;
            let a = a_of_w(w as f64);
            self.a_q10 = (a * 1024.0).round() as u64;
            self.b = b_of_w(w as f64);
        }
    }

    /// Current a(w) and b(w) (for tests and traces).
    pub fn aimd(&mut self) -> (f64, f64) {
        self.update_aimd();
        (self.a_q10 as f64 / 1024.0, self.b)
    }

    /// ssthresh after a congestion signal. At or below Low_Window, standard TCP exactly as
    /// NewReno: RFC 5681 eq. (4) max(FlightSize/2, 2·SMSS). Above it, RFC 3649 §4 decreases the
    /// congestion window itself, w ← (1 − b(w))·w (as Linux tcp_highspeed.c's `hstcp_ssthresh`):
    /// FlightSize can be far above cwnd after a timeout (everything sent before it is still
    /// outstanding), and a reduction based on it would keep ssthresh above the path's capacity.
    fn reduced(&mut self, flight_size: u64) -> u64 {
        self.update_aimd();
        let keep = if self.cached_w as f64 <= LOW_WINDOW {
            flight_size / 2
        } else {
            (self.cwnd as f64 * (1.0 - self.b)) as u64
        };
        keep.max(2 * self.mss)
    }
}

impl CongestionControl for HighSpeed {
    fn cwnd(&self) -> u64 {
        self.cwnd
    }
    fn ssthresh(&self) -> u64 {
        self.ssthresh
    }

    fn on_ack(&mut self, ack: &AckSample) {
        // RFC 5681 §3.2 / RFC 6582: no growth during fast recovery; RFC 7661: none while the
        // window does not limit the sender.
        if ack.cum_acked == 0 || ack.in_recovery || ack.rate_limited {
            return;
        }
        if self.cwnd < self.ssthresh {
            // RFC 5681 §3.1 slow start with RFC 3465 §2.2 byte counting (as NewReno).
            self.cwnd += self.params.slow_start_increase(ack);
            self.bytes_acked = 0;
        } else {
            // RFC 3649 §4: w ← w + a(w)/w per ACK-ed segment, i.e. a(w) segments per window of
            // acknowledged data; counted in bytes as RFC 3465 §2.1 does for a = 1 (NewReno).
            self.update_aimd();
            self.bytes_acked += ack.bytes_acked;
            if self.bytes_acked >= self.cwnd {
                self.bytes_acked -= self.cwnd;
                self.cwnd += if self.a_q10 == 1024 {
                    self.mss
                } else {
                    self.a_q10 * self.mss / 1024
                };
            }
        }
    }

    fn on_congestion_event(&mut self, _now: Time, basis: u64, _mss: u32) {
        // RFC 3649 §4 decrease; RFC 5681 §3.2 step 2/3: cwnd = ssthresh for the episode.
        self.ssthresh = self.reduced(basis);
        self.cwnd = self.ssthresh;
        self.bytes_acked = 0;
    }

    fn on_recovery_exit(&mut self, _now: Time, _mss: u32) {
        // RFC 6582 §3.2 step 6 (full ACK): deflate to ssthresh.
        self.cwnd = self.ssthresh;
        self.bytes_acked = 0;
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
    fn on_rto(&mut self, _now: Time, basis: u64, _mss: u32, reduce_ssthresh: bool) {
        // RFC 5681 §3.1 eq. (4) with HighSpeed's b(w) when the endpoint says this is a new
        // congestion event; cwnd = loss window (1 SMSS).
        if reduce_ssthresh {
            self.ssthresh = self.reduced(basis);
        }
        self.cwnd = self.mss;
        self.bytes_acked = 0;
    }
}
