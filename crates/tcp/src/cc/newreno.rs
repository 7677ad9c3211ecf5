//! NewReno congestion control: RFC 5681 slow start and congestion avoidance with appropriate
//! byte counting (RFC 3465; L = 2, or no limit as in Linux), the RFC 5681 §3.1 eq. 4 reduction
//! on a congestion event, and the one-segment loss window after an RTO. The window grows only
//! while it limits the sender (RFC 7661). Fast retransmit / fast recovery itself (RFC 6582
//! inflation, partial ACKs, PRR) lives in the endpoint, which adds the inflation on top of
//! [`NewReno::cwnd`].

use super::{AckSample, CcParams, CongestionControl};
use rantcp_core::Time;

#[derive(Clone, Debug)]
pub struct NewReno {
    params: CcParams,
    /// Congestion window, bytes.
    cwnd: u64,
    /// Slow-start threshold, bytes.
    ssthresh: u64,
    /// Bytes acknowledged since cwnd last grew in congestion avoidance (RFC 3465 §2.1).
    bytes_acked: u64,
}

impl NewReno {
    pub fn new(p: &CcParams) -> Self {
        // RFC 6928 initial window (RFC 5681 §3.1 IW when initial_cwnd_segments is small).
        NewReno {
            params: *p,
            cwnd: p.initial_cwnd_segments.max(1) as u64 * p.mss as u64,
            ssthresh: u64::MAX,
            bytes_acked: 0,
        }
    }

    /// RFC 5681 §3.1 eq. 4: ssthresh = max(FlightSize / 2, 2·SMSS).
    fn reduced_ssthresh(flight: u64, mss: u32) -> u64 {
        (flight / 2).max(2 * mss as u64)
    }
}

impl CongestionControl for NewReno {
    fn cwnd(&self) -> u64 {
        self.cwnd
    }
    fn ssthresh(&self) -> u64 {
        self.ssthresh
    }
    fn on_ack(&mut self, ack: &AckSample) {
        // RFC 5681 §3.2 / RFC 6582: no window growth during fast recovery; RFC 7661: none while
        // the window does not limit the sender.
        if ack.cum_acked == 0 || ack.in_recovery || ack.rate_limited {
            return;
        }
        let smss = ack.mss as u64;
        if self.cwnd < self.ssthresh {
            // RFC 5681 §3.1 slow start with RFC 3465 §2.2 byte counting.
            self.cwnd += self.params.slow_start_increase(ack);
            self.bytes_acked = 0;
        } else {
            // RFC 3465 §2.1 / RFC 5681 §3.1 congestion avoidance: one SMSS per cwnd of bytes.
            self.bytes_acked += ack.bytes_acked;
            if self.bytes_acked >= self.cwnd {
                self.bytes_acked -= self.cwnd;
                self.cwnd += smss;
            }
        }
    }
    fn on_congestion_event(&mut self, _now: Time, basis: u64, mss: u32) {
        // RFC 5681 §3.2 step 2 (RFC 6582 §3.2 step 2): ssthresh from FlightSize (or cwnd, Linux
        // tcp_reno_ssthresh); the endpoint adds the 3·SMSS inflation on top of cwnd = ssthresh.
        self.ssthresh = Self::reduced_ssthresh(basis, mss);
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
    fn on_rto(&mut self, _now: Time, basis: u64, mss: u32, reduce_ssthresh: bool) {
        // RFC 5681 §3.1 eq. 4, unless the endpoint says this timeout belongs to a congestion
        // event already responded to.
        if reduce_ssthresh {
            self.ssthresh = Self::reduced_ssthresh(basis, mss);
        }
        // RFC 5681 §3.1: loss window LW = 1 SMSS.
        self.cwnd = mss as u64;
        self.bytes_acked = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::{CcKind, CcParams};

    fn nr() -> NewReno {
        NewReno::new(&CcParams {
            kind: CcKind::NewReno,
            mss: 1000,
            initial_cwnd_segments: 10,
            ..Default::default()
        })
    }
    fn ack(bytes: u64, in_recovery: bool) -> AckSample {
        AckSample {
            bytes_acked: bytes,
            cum_acked: bytes,
            in_recovery,
            mss: 1000,
            ..Default::default()
        }
    }

    #[test]
    fn slow_start_byte_counting_capped_at_two_smss() {
        let mut c = nr();
        c.on_ack(&ack(1000, false));
        assert_eq!(c.cwnd(), 11_000);
        c.on_ack(&ack(5000, false));
        assert_eq!(c.cwnd(), 13_000);
    }

    #[test]
    fn congestion_event_and_avoidance() {
        let mut c = nr();
        c.on_congestion_event(Time::ZERO, 10_000, 1000);
        assert_eq!((c.cwnd(), c.ssthresh()), (5000, 5000));
        c.on_ack(&ack(1000, true));
        assert_eq!(c.cwnd(), 5000, "no growth in recovery");
        c.on_recovery_exit(Time::ZERO, 1000);
        for _ in 0..4 {
            c.on_ack(&ack(1000, false));
        }
        assert_eq!(c.cwnd(), 5000);
        c.on_ack(&ack(1000, false));
        assert_eq!(c.cwnd(), 6000);
        // Small flight: floor at 2 SMSS.
        c.on_congestion_event(Time::ZERO, 1000, 1000);
        assert_eq!(c.ssthresh(), 2000);
    }

    #[test]
    fn rto_loss_window_and_held_ssthresh() {
        let mut c = nr();
        c.on_rto(Time::ZERO, 20_000, 1000, true);
        assert_eq!((c.cwnd(), c.ssthresh()), (1000, 10_000));
        c.on_rto(Time::ZERO, 8_000, 1000, false);
        assert_eq!((c.cwnd(), c.ssthresh()), (1000, 10_000));
    }

    #[test]
    fn growth_only_when_cwnd_limited_and_linux_slow_start() {
        let mut c = nr();
        let mut a = ack(1000, false);
        a.rate_limited = true;
        c.on_ack(&a);
        assert_eq!(
            c.cwnd(),
            10_000,
            "RFC 7661: no growth when not cwnd-limited"
        );
        // Linux tcp_slow_start: no L limit, a stretch ACK of 5 segments grows cwnd by 5.
        let mut l = NewReno::new(&CcParams {
            mss: 1000,
            abc_limit_segments: None,
            ..Default::default()
        });
        l.on_ack(&ack(5000, false));
        assert_eq!(l.cwnd(), 15_000);
    }
}
