//! Placeholder for the endpoint state machine (being written).

use crate::cc::{CcKind, CcTrace};
use rantcp_core::{Duration, Time};
use rantcp_wire::{Ipv4Header, Packet, TcpHeader};
use std::net::Ipv4Addr;

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

/// RFC 9293 §3.3.2 connection states.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum State {
    Closed,
    Listen,
    SynSent,
    SynReceived,
    Established,
    FinWait1,
    FinWait2,
    CloseWait,
    Closing,
    LastAck,
    TimeWait,
}

/// Counters for outputs (design.md §6).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TcpStats {
    pub segments_sent: u64,
    pub data_segments_sent: u64,
    /// Payload bytes sent, retransmissions included.
    pub bytes_sent: u64,
    pub retrans_segments: u64,
    pub retrans_bytes: u64,
    /// Fast retransmit events (entries into fast recovery).
    pub fast_retransmits: u64,
    /// Retransmission timeouts that fired.
    pub rtos: u64,
    pub persist_probes: u64,
    pub segments_received: u64,
    pub dup_acks_received: u64,
    /// Bytes acknowledged by the peer (sender side).
    pub bytes_acked: u64,
    /// In-order bytes made available to the application (receiver side).
    pub bytes_received: u64,
    pub rtt_samples: u64,
    pub rtt_sum_ns: u128,
    pub rtt_min: Option<Duration>,
    pub rtt_max: Option<Duration>,
    /// Sum of the RTO values that fired, for the mean RTO (Padhye's T0).
    pub rto_sum_ns: u128,
}

/// Instantaneous sender/receiver state for the time series.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct TcpInfo {
    pub cwnd: u64,
    pub ssthresh: u64,
    pub srtt: Duration,
    pub rto: Duration,
    pub bytes_in_flight: u64,
    /// Window the peer advertises to us, bytes (scaled).
    pub peer_rwin: u64,
    /// Window we advertise, bytes.
    pub rwin: u64,
    pub pacing_rate_bps: Option<f64>,
    pub in_recovery: bool,
    pub cc: CcTrace,
}

/// One TCP connection endpoint.
pub struct Endpoint {
    _private: (),
}

impl Endpoint {
    /// Active open: the first `poll_transmit` yields the SYN.
    pub fn connect(_now: Time, _local: (Ipv4Addr, u16), _remote: (Ipv4Addr, u16), _iss: u32, _cfg: TcpConfig) -> Self {
        todo!()
    }
    /// Passive open: waits in LISTEN for a SYN to `local`.
    pub fn listen(_local: (Ipv4Addr, u16), _iss: u32, _cfg: TcpConfig) -> Self {
        todo!()
    }
    pub fn handle_segment(&mut self, _now: Time, _ip: &Ipv4Header, _tcp: &TcpHeader, _payload_len: u32) {
        todo!()
    }
    pub fn handle_timeout(&mut self, _now: Time) {
        todo!()
    }
    pub fn poll_transmit(&mut self, _now: Time) -> Option<Packet> {
        todo!()
    }
    pub fn poll_timeout(&self) -> Option<Time> {
        todo!()
    }
    /// Queue up to `bytes` for sending; returns how many fit in the send buffer.
    pub fn send(&mut self, _bytes: u64) -> u64 {
        todo!()
    }
    pub fn send_buffer_free(&self) -> u64 {
        todo!()
    }
    /// Bytes the application has queued that the peer has not yet acknowledged.
    pub fn send_backlog(&self) -> u64 {
        todo!()
    }
    /// In-order bytes waiting to be read.
    pub fn readable(&self) -> u64 {
        todo!()
    }
    /// Read up to `max` bytes; returns how many were read. Reading opens the receive window.
    pub fn recv(&mut self, _max: u64) -> u64 {
        todo!()
    }
    /// The peer's FIN has been received and all data before it read.
    pub fn peer_closed(&self) -> bool {
        todo!()
    }
    /// Close after queued data (FIN).
    pub fn close(&mut self) {
        todo!()
    }
    /// Abort with RST.
    pub fn abort(&mut self) {
        todo!()
    }
    pub fn state(&self) -> State {
        todo!()
    }
    pub fn local(&self) -> (Ipv4Addr, u16) {
        todo!()
    }
    pub fn remote(&self) -> (Ipv4Addr, u16) {
        todo!()
    }
    pub fn stats(&self) -> &TcpStats {
        todo!()
    }
    pub fn info(&self) -> TcpInfo {
        todo!()
    }
}

/// The RST a host with no matching connection answers to `tcp` (RFC 9293 §3.10.7.1, CLOSED
/// state): `None` if `tcp` itself is a RST.
pub fn reset_for(_ip: &Ipv4Header, _tcp: &TcpHeader, _payload_len: u32) -> Option<Packet> {
    todo!()
}
