//! No congestion control: the sender of seed 002's close-coupled radio-aware TCP (3GPP RAN3
//! contribution §3.2, Figure 7: "TCP sends data to IP layer without following original TCP
//! congestion control. The TCP congestion control mechanism is replaced."). The window is
//! effectively unlimited, so what the sender may have outstanding is bounded only by the
//! peer's receive window and the send buffer; losses and timeouts leave it unchanged (the
//! endpoint still retransmits what is lost). It is meant for a sender next to the radio whose
//! packets wait in an IP buffer that the MAC scheduler's grants drain
//! (`functions.close_coupled`): there the grants are the rate control. Anywhere else it floods
//! the path.

use super::{AckSample, CongestionControl};
use rantcp_core::Time;

/// The window of a sender without congestion control, bytes (1 TiB: above any receive window
/// with RFC 7323's largest scale, 2^30, and any send buffer a config allows).
pub const UNLIMITED: u64 = 1 << 40;

#[derive(Clone, Debug, Default)]
pub struct NoCc;

impl CongestionControl for NoCc {
    fn cwnd(&self) -> u64 {
        UNLIMITED
    }
    fn ssthresh(&self) -> u64 {
        UNLIMITED
    }
    fn on_ack(&mut self, _ack: &AckSample) {}
    fn on_congestion_event(&mut self, _now: Time, _basis: u64, _mss: u32) {}
    fn on_rto(&mut self, _now: Time, _basis: u64, _mss: u32, _reduce_ssthresh: bool) {}
    /// No PRR (RFC 6937) on top either: recovery keeps the unlimited window.
    fn controls_recovery_window(&self) -> bool {
        true
    }
    // on_idle_restart: declined (the default): there is no window to restart.
}
