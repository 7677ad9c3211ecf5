//! Placeholder: being written (see the issue). Behaves as a fixed window until then.

use super::{AckSample, CcParams, CongestionControl};
use rantcp_core::Time;

#[derive(Clone, Debug)]
pub struct HighSpeed {
    cwnd: u64,
    ssthresh: u64,
}

impl HighSpeed {
    pub fn new(p: &CcParams) -> Self {
        HighSpeed { cwnd: p.initial_cwnd_segments as u64 * p.mss as u64, ssthresh: u64::MAX }
    }
}

impl CongestionControl for HighSpeed {
    fn cwnd(&self) -> u64 {
        self.cwnd
    }
    fn ssthresh(&self) -> u64 {
        self.ssthresh
    }
    fn on_ack(&mut self, _ack: &AckSample) {}
    fn on_congestion_event(&mut self, _now: Time, _in_flight: u64, _mss: u32) {}
    fn on_rto(&mut self, _now: Time, _in_flight: u64, _mss: u32) {}
}
