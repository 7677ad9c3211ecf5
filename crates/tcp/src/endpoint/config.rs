//! Endpoint configuration: the stack settings of one connection (sizes in bytes, times in
//! [`Duration`]), with defaults close to a current Linux host.

use crate::cc::CcKind;
use rantcp_core::Duration;

/// Endpoint configuration. All sizes in bytes.
#[derive(Clone, Debug, PartialEq)]
pub struct TcpConfig {
    /// Maximum segment size: payload bytes per segment this endpoint sends and announces.
    pub mss: u32,
    /// Receive buffer, bytes: bounds the advertised window (unread + out-of-order data).
    pub rcv_buf_bytes: u64,
    /// Send buffer, bytes: bounds unacknowledged + unsent data.
    pub snd_buf_bytes: u64,
    /// Delayed ACKs on (ACK every second full-sized segment or at the timer).
    pub delayed_ack: bool,
    /// Maximum delay of a delayed ACK (RFC 1122 §4.2.3.2 allows up to 500 ms; Linux ~40 ms).
    pub delack_timeout: Duration,
    /// Lower bound on the RTO (RFC 6298 §2.4 says 1 s; Linux uses 200 ms).
    pub min_rto: Duration,
    /// RTO before any RTT sample (RFC 6298 §2.1: 1 s).
    pub initial_rto: Duration,
    /// Upper bound on the RTO (RFC 6298 §2.5: at least 60 s).
    pub max_rto: Duration,
    /// Offer/use SACK (RFC 2018) and RFC 6675 loss recovery.
    pub sack: bool,
    /// Offer/use timestamps (RFC 7323 §3).
    pub timestamps: bool,
    /// Offer/use window scaling (RFC 7323 §2).
    pub window_scaling: bool,
    /// Congestion control algorithm.
    pub cc: CcKind,
    /// Initial window, segments (RFC 6928: 10).
    pub initial_cwnd_segments: u32,
    /// CUBIC: HyStart++ on.
    pub hystart: bool,
    /// Pace transmissions even when the controller does not ask for it (BBR always paces).
    pub pacing: bool,
}

impl Default for TcpConfig {
    fn default() -> Self {
        TcpConfig {
            mss: 1448,
            rcv_buf_bytes: 6 << 20,
            snd_buf_bytes: 6 << 20,
            delayed_ack: true,
            delack_timeout: Duration::from_millis(40),
            min_rto: Duration::from_millis(200),
            initial_rto: Duration::from_secs(1),
            max_rto: Duration::from_secs(60),
            sack: true,
            timestamps: true,
            window_scaling: true,
            cc: CcKind::NewReno,
            initial_cwnd_segments: 10,
            hystart: true,
            pacing: false,
        }
    }
}
