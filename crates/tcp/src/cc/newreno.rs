//! NewReno congestion control: RFC 5681 slow start and congestion avoidance with appropriate
//! byte counting (RFC 3465, L = 2), the RFC 5681 §3.1 eq. 4 reduction on a congestion event,
//! and the one-segment loss window after an RTO. Fast retransmit / fast recovery itself
//! (RFC 6582 inflation, partial ACKs) lives in the endpoint, which adds the inflation on top of
//! [`NewReno::cwnd`].

use super::{AckSample, CcParams, CongestionControl};
use rantcp_core::Time;

/// RFC 3465 §2.3 limit L: slow start grows by at most L·SMSS per ACK.
const ABC_L: u64 = 2;

#[derive(Clone, Debug)]
pub struct NewReno {
    /// Congestion window, bytes.
    cwnd: u64,
    /// Slow-start threshold, bytes.
    ssthresh: u64,
    /// Bytes acknowledged since cwnd last grew in congestion avoidance (RFC 3465 §2.1).
    bytes_acked: u64,
    /// An RTO fired and no new data has been acknowledged since.
    in_rto_backoff: bool,
    /// Between on_congestion_event and on_recovery_exit: ssthresh already reduced.
    in_recovery: bool,
}

impl NewReno {
    pub fn new(p: &CcParams) -> Self {
        // RFC 6928 initial window (RFC 5681 §3.1 IW when initial_cwnd_segments is small).
        NewReno {
            cwnd: p.initial_cwnd_segments.max(1) as u64 * p.mss as u64,
            ssthresh: u64::MAX,
            bytes_acked: 0,
            in_rto_backoff: false,
            in_recovery: false,
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
        if ack.bytes_acked == 0 {
            return;
        }
        self.in_rto_backoff = false;
        // RFC 5681 §3.2 / RFC 6582: no window growth during fast recovery.
        if ack.in_recovery {
            return;
        }
        let smss = ack.mss as u64;
        if self.cwnd < self.ssthresh {
            // RFC 5681 §3.1 slow start with RFC 3465 §2.2 byte counting, L = 2.
            self.cwnd += ack.bytes_acked.min(ABC_L * smss);
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
    fn on_congestion_event(&mut self, _now: Time, in_flight: u64, mss: u32) {
        // RFC 5681 §3.2 step 2 (RFC 6582 §3.2 step 2): ssthresh from FlightSize; the endpoint
        // adds the 3·SMSS inflation on top of cwnd = ssthresh.
        self.ssthresh = Self::reduced_ssthresh(in_flight, mss);
        self.cwnd = self.ssthresh;
        self.bytes_acked = 0;
        self.in_recovery = true;
    }
    fn on_recovery_exit(&mut self, _now: Time, _mss: u32) {
        // RFC 6582 §3.2 step 6 (full ACK): deflate to ssthresh.
        self.cwnd = self.ssthresh;
        self.bytes_acked = 0;
        self.in_recovery = false;
    }
    fn on_rto(&mut self, _now: Time, in_flight: u64, mss: u32) {
        // RFC 5681 §3.1: a retransmitted segment lost again does not halve ssthresh again.
        // ssthresh is set to "no more than" eq. 4: an RTO during fast recovery keeps the
        // episode's already reduced ssthresh when that is smaller (FlightSize still counts
        // the whole pre-loss window then).
        if !self.in_rto_backoff {
            let eq4 = Self::reduced_ssthresh(in_flight, mss);
            self.ssthresh = if self.in_recovery {
                eq4.min(self.ssthresh)
            } else {
                eq4
            };
        }
        self.in_recovery = false;
        self.in_rto_backoff = true;
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
            hystart: false,
            ..Default::default()
        })
    }
    fn ack(bytes: u64, in_recovery: bool) -> AckSample {
        AckSample {
            bytes_acked: bytes,
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
    fn rto_loss_window_and_no_second_halving() {
        let mut c = nr();
        c.on_rto(Time::ZERO, 20_000, 1000);
        assert_eq!((c.cwnd(), c.ssthresh()), (1000, 10_000));
        c.on_rto(Time::ZERO, 20_000, 1000);
        assert_eq!((c.cwnd(), c.ssthresh()), (1000, 10_000));
    }

    #[test]
    fn rto_during_recovery_keeps_the_reduced_ssthresh() {
        let mut c = nr();
        c.on_congestion_event(Time::ZERO, 40_000, 1000);
        assert_eq!(c.ssthresh(), 20_000);
        c.on_ack(&ack(1000, true));
        c.on_rto(Time::ZERO, 60_000, 1000);
        assert_eq!((c.cwnd(), c.ssthresh()), (1000, 20_000));
    }
}
