//! The TCP connection state machine (RFC 9293 §3.3.2, §3.10) as a sans-IO entity.
//!
//! One [`Endpoint`] is one connection. Inputs: [`Endpoint::handle_segment`],
//! [`Endpoint::handle_timeout`] and the application calls ([`Endpoint::send`],
//! [`Endpoint::recv`], [`Endpoint::close`], [`Endpoint::abort`]); outputs:
//! [`Endpoint::poll_transmit`] (drain until `None` after every input) and
//! [`Endpoint::poll_timeout`]. Payload bytes are never stored, only lengths.
//!
//! Sequence numbers are kept internally as 64-bit *positions* (0 = ISS on the send side, 0 = IRS
//! on the receive side) and converted to wrapping 32-bit numbers (RFC 9293 §3.4) at the wire.
//! The sender keeps one record per transmitted segment in a `VecDeque` indexed from SND.UNA:
//! it is the SACK scoreboard (RFC 6675 §3), the retransmission queue, and the per-packet
//! delivery-rate state (draft-cheng-iccrg-delivery-rate-estimation §3.2) at once.
//!
//! Design choices worth knowing:
//! * RTT samples use the per-segment send time (ns) with Karn's rule (RFC 6298 §3). Timestamps
//!   (RFC 7323, TSval = `now` in ms) are sent and echoed (§4.3); their coarse samples are used
//!   only where Karn gives none (ACKs of retransmitted data), to update the RTO and end the
//!   backoff, as Linux does. PAWS is not implemented.
//! * Zero-window probes are Linux-style: an ACK with SEQ = SND.UNA − 1 and no payload, which an
//!   RFC 9293 receiver answers with an ACK carrying its current window (§3.10.7.4).
//! * After an RTO every un-SACKed segment is marked lost (RFC 6675 §5.1) and resent in order as
//!   cwnd allows (go-back-N over the holes); a new fast recovery cannot start until the RTO's
//!   recovery point is acknowledged (RFC 6582 §3.2 step 1, RFC 6675 §5.1).
//! * A listening endpoint becomes the connection: the first SYN turns it into SYN-RECEIVED.
//! * The FIN rides on the last data segment when the application closed before it went out
//!   (Linux/ns-3 behaviour); otherwise it is a segment of its own.
//! * Loss recovery is RFC 6675 with NextSeg rules 1–3 when SACK is negotiated, RFC 6582
//!   otherwise; there is no RACK/TLP, no PRR, no D-SACK undo and no PAWS, so a lost
//!   retransmission is repaired by the RTO unless the opt-in lost-retransmission detection
//!   ([`Endpoint::set_lost_retransmit_detection`]) is on.

mod rtt;

pub use rtt::RttEstimator;

use crate::cc::{AckSample, Cc, CcKind, CcParams, CcTrace, CongestionControl, RateSample};
use rantcp_core::{Duration, Time};
use rantcp_wire::{Ipv4Header, Packet, SackBlock, TcpFlags, TcpHeader, TcpOptions};
use std::collections::VecDeque;
use std::net::Ipv4Addr;

/// Maximum segment lifetime (RFC 9293 §3.4.2: "arbitrarily defined to be 2 minutes"; Linux and
/// most stacks use 60 s). TIME-WAIT lasts 2·MSL.
pub const MSL: Duration = Duration::from_secs(60);
/// RFC 6675 §2 DupThresh.
pub const DUP_THRESH: u32 = 3;
/// Default send MSS when the peer announces none (RFC 9293 §3.7.1).
pub const DEFAULT_MSS: u32 = 536;

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

// Per-segment record flags.
/// The segment is SACKed (RFC 6675 §3 scoreboard).
const F_SACKED: u8 = 1;
/// The segment is deemed lost (IsLost, RFC 6675 §4; or RTO; or NewReno's first hole).
const F_LOST: u8 = 2;
/// A retransmission of the segment is in flight (counts in pipe, RFC 6675 §4 SetPipe (b)).
const F_RETRANS: u8 = 4;
/// The segment was retransmitted at least once (Karn, RFC 6298 §3).
const F_EVER_RETRANS: u8 = 8;
/// Sent while application-limited (delivery-rate draft §3.2 P.is_app_limited).
const F_APP_LIMITED: u8 = 16;

/// One transmitted data segment (sender side).
#[derive(Clone, Copy, Debug)]
struct Seg {
    /// First byte, send-side position.
    start: u64,
    len: u32,
    flags: u8,
    /// Last (re)transmission time.
    sent: Time,
    /// Delivery-rate state at (re)transmission (draft §3.2): C.first_sent_time,
    /// C.delivered_time, C.delivered.
    first_sent: Time,
    delivered_time: Time,
    delivered: u64,
}

impl Seg {
    #[inline]
    fn end(&self) -> u64 {
        self.start + self.len as u64
    }
    /// Contribution to RFC 6675 "pipe" (SetPipe, §4): un-SACKed octets not deemed lost, plus
    /// retransmitted octets still outstanding.
    #[inline]
    fn in_flight(&self) -> u64 {
        if self.flags & F_SACKED != 0 {
            return 0;
        }
        let mut n = 0;
        if self.flags & F_LOST == 0 {
            n += self.len as u64; // (a) not IsLost
        }
        if self.flags & F_RETRANS != 0 {
            n += self.len as u64; // (b) retransmitted, still outstanding
        }
        n
    }
}

/// Delivery-rate sample under construction (draft §3.3).
#[derive(Clone, Copy, Default)]
struct RsBuild {
    has_data: bool,
    prior_delivered: u64,
    prior_time: Time,
    send_elapsed: Duration,
    is_app_limited: bool,
    sent: Time,
}

/// One TCP connection endpoint (sans-IO).
///
/// # Driving it
/// * Create with [`Endpoint::connect`] (active open, the SYN is the first
///   [`Endpoint::poll_transmit`] output) or [`Endpoint::listen`] (passive open). A listening
///   endpoint *becomes* the connection when the first SYN arrives ([`Endpoint::remote`] is
///   then the SYN's source); create one listening endpoint per expected connection. Segments
///   for a 4-tuple with no endpoint should be answered with [`reset_for`].
/// * After every input — [`Endpoint::handle_segment`], [`Endpoint::handle_timeout`],
///   [`Endpoint::send`], [`Endpoint::recv`], [`Endpoint::close`], [`Endpoint::abort`] — drain
///   [`Endpoint::poll_transmit`] until `None`, then (re)arm one timer at
///   [`Endpoint::poll_timeout`]. Timers that arm themselves (persist, pacing release, the
///   app-limited mark) are decided inside `poll_transmit`, so the drain must come first.
/// * `handle_timeout(now)` fires whatever is due at `now`; early or repeated calls are
///   harmless. `send` may be called before the handshake completes (data waits).
/// * Every output is a complete [`Packet`] (IPv4 + TCP header with options, payload length).
///
/// # Units
/// Sizes are bytes, times are [`Time`]/[`Duration`] (integer ns). [`TcpInfo::cwnd`] includes
/// the NewReno recovery inflation (RFC 6582 §3.2) when SACK is off; [`TcpInfo::bytes_in_flight`]
/// is RFC 6675 "pipe".
pub struct Endpoint {
    cfg: TcpConfig,
    state: State,
    local: (Ipv4Addr, u16),
    remote: (Ipv4Addr, u16),
    ip_id: u16,
    reset_by_peer: bool,

    // ---- send side; positions: 0 = ISS (the SYN), 1 = first data byte ----
    iss: u32,
    snd_una: u64,
    /// Highest position sent + 1 (RFC 6675 HighData + 1).
    snd_max: u64,
    /// Position after the last byte the application queued.
    app_end: u64,
    fin_queued: bool,
    fin_sent: bool,
    fin_rtx: bool,
    syn_pending: bool,
    syn_sent_at: Option<Time>,
    /// Peer's window, bytes (scaled).
    snd_wnd: u64,
    max_snd_wnd: u64,
    /// SND.WL1 as a receive-side position, SND.WL2 as a send-side position (RFC 9293 §3.10.7.4).
    snd_wl1: i64,
    snd_wl2: u64,
    snd_wscale: u8,
    rcv_wscale: u8,
    smss: u32,
    sack_ok: bool,
    ts_ok: bool,
    ws_ok: bool,
    ts_recent: u32,
    segs: VecDeque<Seg>,
    /// RFC 6675 pipe, bytes.
    pipe: u64,
    /// SACKed ranges above SND.UNA, sorted, merged, `[start, end)` positions.
    sacked: Vec<(u64, u64)>,
    /// Every un-SACKed segment ending at or below this position is marked lost.
    lost_mark: u64,
    /// No lost, un-retransmitted segment starts below this position.
    rxt_hint: u64,
    dupacks: u32,
    /// RFC 6675 HighRxt + 1: end of the highest segment retransmitted in this recovery.
    high_rxt: u64,
    /// Lost-retransmission detection on (see [`Endpoint::set_lost_retransmit_detection`]).
    detect_lost_rtx: bool,
    /// Outstanding retransmissions as (segment start, send time, HighData + 1 when sent), in
    /// send order, hence sorted by the third field.
    rtx_queue: VecDeque<(u64, Time, u64)>,
    in_recovery: bool,
    /// RFC 6582 `recover` / RFC 6675 RecoveryPoint, as HighData + 1.
    recover: u64,
    /// NewReno (no SACK) cwnd inflation during fast recovery (RFC 6582 §3.2 steps 3–4).
    inflation: u64,
    partial_acks: u32,
    cc: Cc,
    rtt: RttEstimator,
    rto_deadline: Option<Time>,
    persist_deadline: Option<Time>,
    persist_backoff: u32,
    probe_pending: bool,
    force_send: bool,
    /// The next retransmission goes regardless of cwnd (RFC 5681 §3.2 step 3, RFC 6582 §3.2
    /// step 5, RFC 6675 §5 step 4.3).
    force_rtx: bool,
    next_send_time: Time,
    pacing_blocked: bool,
    // delivery-rate connection state (draft §3.1)
    delivered: u64,
    delivered_time: Time,
    first_sent_time: Time,
    app_limited: u64,
    last_rate: Option<RateSample>,

    // ---- receive side; positions: 0 = IRS ----
    irs: u32,
    rcv_nxt: u64,
    rcv_read: u64,
    ooo: Vec<(u64, u64)>,
    ooo_bytes: u64,
    sack_recent: [(u64, u64); 4],
    sack_recent_len: usize,
    peer_fin: Option<u64>,
    fin_received: bool,
    rcv_right_edge: u64,
    last_ack_sent: u64,
    ack_now: bool,
    delack_deadline: Option<Time>,
    unacked_bytes: u64,
    time_wait_deadline: Option<Time>,
    rst_pending: Option<Packet>,

    stats: TcpStats,
}

#[inline]
fn ts_ms(now: Time) -> u32 {
    (now.0 / 1_000_000) as u32
}

impl Endpoint {
    fn new(
        local: (Ipv4Addr, u16),
        remote: (Ipv4Addr, u16),
        iss: u32,
        cfg: TcpConfig,
        state: State,
    ) -> Self {
        // RFC 7323 §2.3: the smallest shift that makes the receive buffer fit 16 bits.
        let mut shift = 0u8;
        if cfg.window_scaling {
            while shift < 14 && (cfg.rcv_buf_bytes >> shift) > 65535 {
                shift += 1;
            }
        }
        // The controller's random stream (BBR) is seeded from the ISS and local port, so flows
        // differ but runs stay deterministic; see also [`Endpoint::set_cc_seed`].
        let seed = CcParams::DEFAULT_SEED ^ ((iss as u64) << 16) ^ local.1 as u64;
        let cc = build_cc(&cfg, seed);
        Endpoint {
            rtt: RttEstimator::new(cfg.initial_rto, cfg.min_rto, cfg.max_rto),
            state,
            local,
            remote,
            ip_id: 0,
            reset_by_peer: false,
            iss,
            snd_una: 0,
            snd_max: 0,
            app_end: 1,
            fin_queued: false,
            fin_sent: false,
            fin_rtx: false,
            syn_pending: false,
            syn_sent_at: None,
            snd_wnd: 0,
            max_snd_wnd: 0,
            snd_wl1: 0,
            snd_wl2: 0,
            snd_wscale: 0,
            rcv_wscale: shift,
            smss: cfg.mss,
            sack_ok: false,
            ts_ok: false,
            ws_ok: false,
            ts_recent: 0,
            segs: VecDeque::new(),
            pipe: 0,
            sacked: Vec::new(),
            lost_mark: 0,
            rxt_hint: 0,
            dupacks: 0,
            high_rxt: 0,
            detect_lost_rtx: false,
            rtx_queue: VecDeque::new(),
            in_recovery: false,
            recover: 0,
            inflation: 0,
            partial_acks: 0,
            cc,
            rto_deadline: None,
            persist_deadline: None,
            persist_backoff: 0,
            probe_pending: false,
            force_send: false,
            force_rtx: false,
            next_send_time: Time::ZERO,
            pacing_blocked: false,
            delivered: 0,
            delivered_time: Time::ZERO,
            first_sent_time: Time::ZERO,
            app_limited: 0,
            last_rate: None,
            irs: 0,
            rcv_nxt: 0,
            rcv_read: 1,
            ooo: Vec::new(),
            ooo_bytes: 0,
            sack_recent: [(0, 0); 4],
            sack_recent_len: 0,
            peer_fin: None,
            fin_received: false,
            rcv_right_edge: 0,
            last_ack_sent: 0,
            ack_now: false,
            delack_deadline: None,
            unacked_bytes: 0,
            time_wait_deadline: None,
            rst_pending: None,
            stats: TcpStats::default(),
            cfg,
        }
    }

    /// Active open: the first `poll_transmit` yields the SYN.
    pub fn connect(
        _now: Time,
        local: (Ipv4Addr, u16),
        remote: (Ipv4Addr, u16),
        iss: u32,
        cfg: TcpConfig,
    ) -> Self {
        let mut e = Endpoint::new(local, remote, iss, cfg, State::SynSent);
        e.syn_pending = true;
        e
    }

    /// Passive open: waits in LISTEN for a SYN to `local`. The endpoint itself becomes the
    /// connection when the SYN arrives (remote address taken from it); create one listening
    /// endpoint per expected connection.
    pub fn listen(local: (Ipv4Addr, u16), iss: u32, cfg: TcpConfig) -> Self {
        Endpoint::new(local, (Ipv4Addr::UNSPECIFIED, 0), iss, cfg, State::Listen)
    }

    // ------------------------------------------------------------------ conversions

    #[inline]
    fn snd_seq(&self, pos: u64) -> u32 {
        self.iss.wrapping_add(pos as u32)
    }
    /// Send-side position of a 32-bit sequence number, relative to SND.UNA (RFC 9293 §3.4).
    #[inline]
    fn snd_pos(&self, seq: u32) -> i64 {
        self.snd_una as i64 + seq.wrapping_sub(self.snd_seq(self.snd_una)) as i32 as i64
    }
    #[inline]
    fn rcv_seq(&self, pos: u64) -> u32 {
        self.irs.wrapping_add(pos as u32)
    }
    /// Receive-side position of a 32-bit sequence number, relative to RCV.NXT.
    #[inline]
    fn rcv_pos(&self, seq: u32) -> i64 {
        self.rcv_nxt as i64 + seq.wrapping_sub(self.rcv_seq(self.rcv_nxt)) as i32 as i64
    }

    // ------------------------------------------------------------------ inputs

    pub fn handle_segment(
        &mut self,
        now: Time,
        ip: &Ipv4Header,
        tcp: &TcpHeader,
        payload_len: u32,
    ) {
        self.segment_arrives(now, ip, tcp, payload_len);
        #[cfg(debug_assertions)]
        self.check_invariants();
    }

    /// RFC 9293 §3.10.7 SEGMENT ARRIVES.
    fn segment_arrives(&mut self, now: Time, ip: &Ipv4Header, tcp: &TcpHeader, payload_len: u32) {
        self.stats.segments_received += 1;
        let f = tcp.flags;
        match self.state {
            State::Closed => {
                // RFC 9293 §3.10.7.1: answer anything but a RST with a RST.
                if !f.rst() {
                    self.rst_pending = reset_for(ip, tcp, payload_len);
                }
                return;
            }
            State::Listen => {
                // RFC 9293 §3.10.7.2.
                if f.rst() {
                    return;
                }
                if f.ack() {
                    self.rst_pending = reset_for(ip, tcp, payload_len);
                    return;
                }
                if f.syn() {
                    self.remote = (ip.src, tcp.src_port);
                    self.irs = tcp.seq;
                    self.rcv_nxt = 1;
                    self.rcv_read = 1;
                    self.negotiate(tcp);
                    // RFC 7323 §2.2: the window in a SYN is never scaled.
                    self.snd_wnd = tcp.window as u64;
                    self.max_snd_wnd = self.snd_wnd;
                    self.snd_wl1 = 0;
                    self.snd_wl2 = 0;
                    self.state = State::SynReceived;
                    self.syn_pending = true;
                }
                return;
            }
            State::SynSent => {
                self.handle_syn_sent(now, ip, tcp, payload_len);
                return;
            }
            _ => {}
        }

        // ---- synchronized states: RFC 9293 §3.10.7.4 ----
        if self.state == State::SynReceived && f.syn() && !f.ack() && tcp.seq == self.irs {
            // Retransmitted SYN (our SYN-ACK was lost): resend the SYN-ACK.
            self.syn_pending = true;
            return;
        }
        let seg_len = payload_len as u64 + f.syn() as u64 + f.fin() as u64;
        let seq_pos = self.rcv_pos(tcp.seq);
        let wnd = self.rcv_right_edge.saturating_sub(self.rcv_nxt) as i64;
        let nxt = self.rcv_nxt as i64;
        // First: check sequence number.
        let acceptable = if seg_len == 0 {
            if wnd == 0 {
                seq_pos == nxt
            } else {
                seq_pos >= nxt && seq_pos < nxt + wnd
            }
        } else if wnd == 0 {
            false
        } else {
            let end = seq_pos + seg_len as i64 - 1;
            (seq_pos >= nxt && seq_pos < nxt + wnd)
                || (end >= nxt && end < nxt + wnd)
                || (seq_pos < nxt && end >= nxt + wnd)
        };
        // RFC 9293 §3.10.7.4: with a zero window, still process ACK and RST of in-sequence segments.
        let zero_wnd_inseq = wnd == 0 && seq_pos == nxt;
        if !acceptable && !zero_wnd_inseq {
            if !f.rst() {
                self.ack_now = true;
            }
            // Old duplicates may still carry a retransmitted FIN in TIME-WAIT.
            if self.state == State::TimeWait && f.fin() {
                self.time_wait_deadline = Some(now + MSL.saturating_mul(2));
            }
            return;
        }
        // Second: RST (RFC 5961 §3.2: exact match resets, otherwise challenge ACK).
        if f.rst() {
            if seq_pos == nxt {
                self.reset_by_peer = true;
                self.enter_closed();
            } else {
                self.ack_now = true;
            }
            return;
        }
        // Fourth: SYN in a synchronized state.
        if f.syn() {
            // RFC 5961 §4.2 challenge ACK.
            self.ack_now = true;
            return;
        }
        // Fifth: ACK field.
        if !f.ack() {
            return;
        }
        // RFC 7323 §4.3: TS.Recent from segments covering Last.ACK.sent.
        if self.ts_ok {
            if let Some((tsval, _)) = tcp.options.timestamps {
                if seq_pos <= self.last_ack_sent as i64
                    && (tsval.wrapping_sub(self.ts_recent) as i32) >= 0
                {
                    self.ts_recent = tsval;
                }
            }
        }
        let ack_pos = self.snd_pos(tcp.ack);
        if self.state == State::SynReceived {
            if ack_pos == 1 {
                self.snd_una = 1;
                self.state = State::Established;
                self.on_synchronized(now);
                self.snd_wnd = (tcp.window as u64) << self.snd_wscale;
                self.max_snd_wnd = self.max_snd_wnd.max(self.snd_wnd);
                self.snd_wl1 = seq_pos;
                self.snd_wl2 = 1;
                if self.fin_queued {
                    self.state = State::FinWait1;
                }
            } else {
                self.rst_pending = reset_for(ip, tcp, payload_len);
                return;
            }
        }
        if ack_pos > self.snd_max as i64 {
            // RFC 9293 §3.10.7.4: ACK for something not yet sent.
            self.ack_now = true;
            return;
        }
        if ack_pos >= self.snd_una as i64 {
            self.process_ack(now, tcp, payload_len, seq_pos, ack_pos as u64);
        }
        if self.state == State::Closed {
            return;
        }
        // Seventh: segment text; eighth: FIN.
        if matches!(
            self.state,
            State::Established | State::FinWait1 | State::FinWait2
        ) {
            if payload_len > 0 {
                self.process_data(now, seq_pos, payload_len);
            }
            if f.fin() {
                let fin_pos = seq_pos + payload_len as i64;
                if fin_pos >= self.rcv_nxt as i64 && self.peer_fin.is_none() {
                    self.peer_fin = Some(fin_pos as u64);
                }
            }
            self.check_peer_fin(now);
        } else if f.fin() {
            // CLOSE-WAIT, CLOSING, LAST-ACK: FIN already seen; TIME-WAIT: restart 2 MSL.
            self.ack_now = true;
            if self.state == State::TimeWait {
                self.time_wait_deadline = Some(now + MSL.saturating_mul(2));
            }
        }
    }

    fn handle_syn_sent(&mut self, now: Time, ip: &Ipv4Header, tcp: &TcpHeader, payload_len: u32) {
        // RFC 9293 §3.10.7.3.
        let f = tcp.flags;
        let ack_ok = f.ack() && tcp.ack == self.iss.wrapping_add(1);
        if f.ack() && !ack_ok {
            if !f.rst() {
                self.rst_pending = reset_for(ip, tcp, payload_len);
            }
            return;
        }
        if f.rst() {
            if ack_ok {
                self.reset_by_peer = true;
                self.enter_closed();
            }
            return;
        }
        if !f.syn() {
            return;
        }
        self.irs = tcp.seq;
        self.rcv_nxt = 1;
        self.rcv_read = 1;
        self.negotiate(tcp);
        if self.ts_ok {
            if let Some((tsval, _)) = tcp.options.timestamps {
                self.ts_recent = tsval;
            }
        }
        // RFC 7323 §2.2: the window in a SYN(-ACK) is not scaled.
        self.snd_wnd = tcp.window as u64;
        self.max_snd_wnd = self.snd_wnd;
        self.snd_wl1 = 0;
        self.snd_wl2 = if ack_ok { 1 } else { 0 };
        if ack_ok {
            self.snd_una = 1;
            self.state = State::Established;
            self.on_synchronized(now);
            self.ack_now = true;
            if self.fin_queued {
                self.state = State::FinWait1;
            }
        } else {
            // Simultaneous open.
            self.state = State::SynReceived;
            self.syn_pending = true;
        }
    }

    /// Option negotiation from the peer's SYN or SYN-ACK: each feature is on only when both
    /// sides offer it (RFC 7323 §2.2, §3.2; RFC 2018 §2).
    fn negotiate(&mut self, tcp: &TcpHeader) {
        let o = &tcp.options;
        self.sack_ok = self.cfg.sack && o.sack_permitted;
        self.ts_ok = self.cfg.timestamps && o.timestamps.is_some();
        if let Some((tsval, _)) = o.timestamps {
            self.ts_recent = tsval;
        }
        match (self.cfg.window_scaling, o.window_scale) {
            (true, Some(s)) => {
                self.ws_ok = true;
                // RFC 7323 §2.3: shifts above 14 are treated as 14.
                self.snd_wscale = s.min(14);
            }
            _ => {
                self.ws_ok = false;
                self.snd_wscale = 0;
                self.rcv_wscale = 0;
            }
        }
        // RFC 9293 §3.7.1: effective send MSS.
        let peer_mss = o.mss.map(|m| m as u32).unwrap_or(DEFAULT_MSS);
        self.smss = self.cfg.mss.min(peer_mss).max(1);
    }

    /// SYN acknowledged: take the handshake RTT sample (Karn: only if the SYN was not resent).
    fn on_synchronized(&mut self, now: Time) {
        if let Some(t) = self.syn_sent_at.take() {
            self.rtt_sample(now.saturating_since(t));
        } else {
            self.rtt.reset_after_syn_timeout();
        }
        self.rto_deadline = None;
        self.delivered_time = now;
        self.first_sent_time = now;
        self.lost_mark = 1;
        self.rxt_hint = 1;
        self.recover = 1;
        self.snd_max = self.snd_max.max(1);
    }

    fn rtt_sample(&mut self, r: Duration) {
        self.rtt.sample(r);
        let s = &mut self.stats;
        s.rtt_samples += 1;
        s.rtt_sum_ns += r.0 as u128;
        s.rtt_min = Some(s.rtt_min.map_or(r, |m| m.min(r)));
        s.rtt_max = Some(s.rtt_max.map_or(r, |m| m.max(r)));
    }

    #[inline]
    fn set_flags(&mut self, idx: usize, set: u8, clear: u8) {
        let s = &mut self.segs[idx];
        let before = s.in_flight();
        s.flags = (s.flags | set) & !clear;
        let after = s.in_flight();
        self.pipe = self.pipe - before + after;
    }

    /// Sender-side ACK processing (RFC 9293 §3.10.7.4 fifth step; RFC 5681; RFC 6582; RFC 6675).
    fn process_ack(
        &mut self,
        now: Time,
        tcp: &TcpHeader,
        payload_len: u32,
        seq_pos: i64,
        ack: u64,
    ) {
        let prior_in_flight = self.pipe;
        let prior_una = self.snd_una;
        let mut rs = RsBuild::default();
        let mut newly_lost = 0u64;

        // RFC 6675 §5 / RFC 2018: update the scoreboard from the SACK blocks.
        let mut newly_sacked = 0u64;
        if self.sack_ok && tcp.options.sack_len > 0 && !self.segs.is_empty() {
            for b in tcp.options.sack_blocks() {
                newly_sacked += self.sack_block(now, b, &mut rs);
            }
        }

        // Cumulative ACK.
        let mut acked_bytes = 0u64;
        let mut rtt: Option<Duration> = None;
        if ack > self.snd_una {
            while let Some(front) = self.segs.front().copied() {
                if front.end() <= ack {
                    self.segs.pop_front();
                    self.pipe -= front.in_flight();
                    if front.flags & F_SACKED == 0 {
                        acked_bytes += front.len as u64;
                        self.rate_delivered(now, &front, front.len as u64, &mut rs);
                        // RFC 6298 §3 Karn: only never-retransmitted segments give samples;
                        // the oldest newly acked one is used (as Linux's seq_rtt).
                        if rtt.is_none() && front.flags & F_EVER_RETRANS == 0 {
                            rtt = Some(now.saturating_since(front.sent));
                        }
                    }
                } else if front.start < ack {
                    let cut = ack - front.start;
                    let s = &mut self.segs[0];
                    let before = s.in_flight();
                    s.start = ack;
                    s.len -= cut as u32;
                    let after = s.in_flight();
                    self.pipe = self.pipe - before + after;
                    if front.flags & F_SACKED == 0 {
                        acked_bytes += cut;
                        self.rate_delivered(now, &front, cut, &mut rs);
                    }
                    break;
                } else {
                    break;
                }
            }
            self.snd_una = ack;
            // Drop scoreboard ranges below SND.UNA.
            let n = self.sacked.partition_point(|&(_, e)| e <= ack);
            if n > 0 {
                self.sacked.drain(..n);
            }
            if let Some(first) = self.sacked.first_mut() {
                first.0 = first.0.max(ack);
            }
            // A front segment trimmed by an ACK inside it may now lie wholly in a SACKed range
            // (SACK blocks not on segment boundaries, e.g. from a split host).
            if let (Some(&(l, r)), Some(front)) = (self.sacked.first(), self.segs.front().copied())
            {
                if front.flags & F_SACKED == 0 && front.start >= l && front.end() <= r {
                    self.set_flags(0, F_SACKED, F_LOST | F_RETRANS);
                    newly_sacked += front.len as u64;
                    self.rate_delivered(now, &front, front.len as u64, &mut rs);
                }
            }
            self.lost_mark = self.lost_mark.max(ack);
            self.rxt_hint = self.rxt_hint.max(ack);
            while self.rtx_queue.front().is_some_and(|e| e.0 < ack) {
                self.rtx_queue.pop_front();
            }
            // Data bytes acked (SYN/FIN positions excluded).
            let data_hi = ack.min(self.app_end);
            let data_lo = prior_una.max(1).min(data_hi);
            self.stats.bytes_acked += data_hi - data_lo;
        }

        // Window update (RFC 9293 §3.10.7.4: SND.WL1/SND.WL2 rule).
        let new_wnd = (tcp.window as u64) << self.snd_wscale;
        let window_changed = new_wnd != self.snd_wnd;
        if self.snd_wl1 < seq_pos || (self.snd_wl1 == seq_pos && self.snd_wl2 <= ack) {
            self.snd_wnd = new_wnd;
            self.max_snd_wnd = self.max_snd_wnd.max(new_wnd);
            self.snd_wl1 = seq_pos;
            self.snd_wl2 = ack;
        }
        if self.snd_wnd > 0 {
            // A window opened: stop the persist timer (RFC 9293 §3.8.6.1).
            self.persist_deadline = None;
            self.persist_backoff = 0;
            self.probe_pending = false;
        }

        // RFC 5681 §2 duplicate ACK; with SACK, an ACK carrying new SACK information (RFC 6675 §2).
        let outstanding = self.snd_max > prior_una;
        let is_dup = outstanding
            && ack == prior_una
            && payload_len == 0
            && !tcp.flags.syn()
            && !tcp.flags.fin()
            && if self.sack_ok {
                newly_sacked > 0
            } else {
                !window_changed
            };
        if is_dup {
            self.stats.dup_acks_received += 1;
        }

        // RFC 6675 §4 IsLost marking.
        if newly_sacked > 0 {
            newly_lost += self.mark_lost_by_sack();
            if self.detect_lost_rtx {
                newly_lost += self.mark_lost_retransmissions();
            }
        }

        // Loss recovery state machine.
        let mut was_in_recovery = self.in_recovery;
        if ack > prior_una {
            if self.in_recovery {
                if ack >= self.recover {
                    // RFC 6582 §3.2 step 6 full ACK / RFC 6675 §5: leave recovery. The ACK
                    // is reported with in_recovery = true, then on_recovery_exit follows.
                    self.in_recovery = false;
                    self.inflation = 0;
                    self.dupacks = 0;
                } else if !self.sack_ok {
                    // RFC 6582 §3.2 step 5 partial ACK: retransmit the first unacked segment,
                    // deflate by the amount acked, add back one SMSS if at least SMSS acked.
                    newly_lost += self.mark_first_lost();
                    self.force_rtx = true;
                    let smss = self.smss as u64;
                    self.inflation = self.inflation.saturating_sub(acked_bytes);
                    if acked_bytes >= smss {
                        self.inflation += smss;
                    }
                    self.partial_acks += 1;
                    // Reset the retransmit timer on the first partial ACK only.
                    if self.partial_acks == 1 {
                        self.rto_deadline = Some(now + self.rtt.rto());
                    }
                }
            } else {
                self.dupacks = 0;
            }
        }
        if is_dup {
            self.dupacks += 1;
            if self.in_recovery && !self.sack_ok {
                // RFC 6582 §3.2 step 4 / RFC 5681 §3.2 step 4: inflate by one SMSS.
                self.inflation += self.smss as u64;
            }
        }
        if !self.in_recovery && !was_in_recovery && !self.segs.is_empty() {
            // RFC 6582 §3.2 step 1 / RFC 6675 §5 step 4: enter only past the last recovery
            // point (RFC 6675 §5.1 after an RTO).
            let first_lost = self.sack_ok && self.segs[0].flags & (F_LOST | F_SACKED) == F_LOST;
            if (self.dupacks >= DUP_THRESH || first_lost) && ack >= self.recover {
                self.enter_recovery(now, prior_in_flight);
                newly_lost += self.mark_first_lost();
                self.force_rtx = true;
                was_in_recovery = true;
            }
        }

        // Delivery-rate sample (draft §3.3) and the controller.
        if self.app_limited != 0 && self.delivered > self.app_limited {
            self.app_limited = 0;
        }
        if let Some(r) = rtt {
            self.rtt_sample(r);
        } else if ack > prior_una && self.ts_ok {
            // RFC 7323 §4.1 RTTM: an ACK that advances SND.UNA echoes the TSval of the segment
            // (retransmission included) that advanced it, so timestamps give a sample where
            // Karn's rule gives none — as Linux does. The ms clock is coarse: it feeds the RTO
            // estimator (and ends the backoff) but not min RTT, the RTT statistics or the
            // controller.
            if let Some((_, tsecr)) = tcp.options.timestamps {
                let d_ms = ts_ms(now).wrapping_sub(tsecr);
                if (d_ms as i32) >= 0 && d_ms < (1 << 24) {
                    self.rtt.sample_coarse(Duration::from_millis(d_ms as u64));
                }
            }
        }
        if acked_bytes > 0 || newly_sacked > 0 {
            let rate = self.finish_rate_sample(now, &rs);
            if rate.is_some() {
                self.last_rate = rate;
            }
            let sample = AckSample {
                now,
                bytes_acked: acked_bytes + newly_sacked,
                rtt,
                srtt: self.rtt.srtt(),
                min_rtt: self.rtt.min_rtt(),
                bytes_in_flight: self.pipe,
                prior_in_flight,
                newly_lost,
                in_recovery: was_in_recovery,
                delivered: self.delivered,
                rate,
                mss: self.smss,
            };
            self.cc.on_ack(&sample);
        }
        if was_in_recovery && !self.in_recovery {
            self.cc.on_recovery_exit(now, self.smss);
        }

        // Our FIN acknowledged?
        if self.fin_sent && ack > self.app_end {
            self.fin_rtx = false;
            match self.state {
                State::FinWait1 => self.state = State::FinWait2,
                State::Closing => self.enter_time_wait(now),
                State::LastAck => {
                    self.enter_closed();
                    return;
                }
                _ => {}
            }
        }

        // RFC 6298 §5.2/§5.3: stop the timer when all is acked, restart it on new data acked.
        if self.snd_una >= self.snd_max {
            self.rto_deadline = None;
        } else if ack > prior_una && !(self.in_recovery && !self.sack_ok && self.partial_acks > 0) {
            self.rto_deadline = Some(now + self.rtt.rto());
        }
    }

    /// Debug-build consistency check of the scoreboard: pipe, ordering, SACK ranges.
    /// Skipped for large scoreboards so debug-build simulations stay usable.
    #[cfg(debug_assertions)]
    fn check_invariants(&self) {
        if self.segs.len() > 1024 || self.ooo.len() > 256 {
            return;
        }
        let mut pipe = 0;
        let mut prev_end = self.snd_una;
        for (i, s) in self.segs.iter().enumerate() {
            pipe += s.in_flight();
            if i == 0 {
                assert!(s.start >= self.snd_una, "front record below SND.UNA");
            } else {
                assert_eq!(s.start, prev_end, "records not contiguous");
            }
            assert!(s.len > 0);
            prev_end = s.end();
            let in_ranges = self
                .sacked
                .iter()
                .any(|&(l, r)| s.start >= l && s.end() <= r);
            assert_eq!(
                s.flags & F_SACKED != 0,
                in_ranges,
                "SACKED flag vs ranges at {}",
                s.start
            );
        }
        assert_eq!(pipe, self.pipe, "pipe out of sync");
        assert!(prev_end <= self.snd_max);
        for w in self.sacked.windows(2) {
            assert!(w[0].1 < w[1].0, "SACK ranges not merged");
        }
        // Receiver: out-of-order ranges sorted, disjoint, above RCV.NXT, inside the buffer.
        let mut ooo = 0;
        for (i, &(l, r)) in self.ooo.iter().enumerate() {
            assert!(
                l < r && l > self.rcv_nxt,
                "ooo range {l}..{r} vs RCV.NXT {}",
                self.rcv_nxt
            );
            if i > 0 {
                assert!(self.ooo[i - 1].1 < l, "ooo ranges not merged");
            }
            ooo += r - l;
        }
        assert_eq!(ooo, self.ooo_bytes);
        if self.rcv_nxt > 0 {
            assert!(
                self.readable() + self.ooo_bytes <= self.cfg.rcv_buf_bytes,
                "receive buffer overrun"
            );
        }
        assert!(self.snd_una <= self.snd_max && self.snd_una <= self.app_end + 1);
    }

    fn enter_recovery(&mut self, now: Time, _prior_in_flight: u64) {
        // RFC 5681 §3.2 step 2 / RFC 6675 §5 step 4.2: FlightSize is the outstanding data.
        let flight = self.snd_max - self.snd_una;
        self.cc.on_congestion_event(now, flight, self.smss);
        self.in_recovery = true;
        self.recover = self.snd_max;
        self.high_rxt = self.snd_una;
        self.partial_acks = 0;
        self.stats.fast_retransmits += 1;
        // RFC 6582 §3.2 step 3: cwnd = ssthresh + 3·SMSS (SACK uses pipe instead, RFC 6675).
        self.inflation = if self.sack_ok {
            0
        } else {
            DUP_THRESH as u64 * self.smss as u64
        };
    }

    /// Mark the segment at SND.UNA lost (fast retransmit, RFC 5681 §3.2 step 3; RFC 6582
    /// partial ACK; RFC 6675 §5 step 4.3). Returns bytes newly marked.
    fn mark_first_lost(&mut self) -> u64 {
        let Some(s) = self.segs.front().copied() else {
            return 0;
        };
        if s.flags & F_SACKED != 0 {
            return 0;
        }
        let newly = if s.flags & F_LOST == 0 {
            s.len as u64
        } else {
            0
        };
        self.set_flags(0, F_LOST, F_RETRANS);
        self.lost_mark = self.lost_mark.max(s.end());
        self.rxt_hint = self.rxt_hint.min(s.start);
        newly
    }

    /// Apply one SACK block; returns newly SACKed bytes.
    fn sack_block(&mut self, now: Time, b: &SackBlock, rs: &mut RsBuild) -> u64 {
        let l = self.snd_pos(b.left).max(self.snd_una as i64);
        let r = self.snd_pos(b.right).min(self.snd_max as i64);
        if r <= l {
            return 0; // D-SACK below SND.UNA or bogus
        }
        let (l, r) = (l as u64, r as u64);
        // Existing ranges overlapping or touching [l, r).
        let first = self.sacked.partition_point(|&(_, e)| e < l);
        let mut last = first;
        while last < self.sacked.len() && self.sacked[last].0 <= r {
            last += 1;
        }
        let ml = if last > first {
            self.sacked[first].0.min(l)
        } else {
            l
        };
        let mr = if last > first {
            self.sacked[last - 1].1.max(r)
        } else {
            r
        };
        // Walk only the uncovered gaps of [l, r), marking records fully inside [ml, mr).
        let mut newly = 0u64;
        let mut cur = l;
        for i in first..=last {
            let gap_end = if i < last { self.sacked[i].0.min(r) } else { r };
            if gap_end > cur {
                newly += self.mark_sacked_in(now, cur, gap_end, ml, mr, rs);
            }
            if i < last {
                cur = cur.max(self.sacked[i].1);
            }
        }
        // Merge (no allocation once the Vec has grown).
        if last > first {
            self.sacked[first] = (ml, mr);
            if last > first + 1 {
                self.sacked.drain(first + 1..last);
            }
        } else {
            self.sacked.insert(first, (ml, mr));
        }
        newly
    }

    fn mark_sacked_in(
        &mut self,
        now: Time,
        gl: u64,
        gr: u64,
        ml: u64,
        mr: u64,
        rs: &mut RsBuild,
    ) -> u64 {
        let mut idx = self.segs.partition_point(|s| s.end() <= gl);
        let mut newly = 0;
        while idx < self.segs.len() {
            let s = self.segs[idx];
            if s.start >= gr {
                break;
            }
            if s.flags & F_SACKED == 0 && s.start >= ml && s.end() <= mr {
                self.set_flags(idx, F_SACKED, F_LOST | F_RETRANS);
                newly += s.len as u64;
                self.rate_delivered(now, &s, s.len as u64, rs);
            }
            idx += 1;
        }
        newly
    }

    /// RFC 6675 §4 IsLost: a segment is lost when DupThresh SACKed segments or more than
    /// (DupThresh − 1)·SMSS SACKed bytes lie above it. Returns bytes newly marked lost.
    fn mark_lost_by_sack(&mut self) -> u64 {
        let Some(&(_, top)) = self.sacked.last() else {
            return 0;
        };
        let n = self.segs.partition_point(|s| s.start < top);
        if n == 0 {
            return 0;
        }
        let mut idx = n; // exclusive
        let mut count = 0u32;
        let mut bytes = 0u64;
        let limit_bytes = (DUP_THRESH as u64 - 1) * self.smss as u64;
        let mut newly = 0u64;
        let mut threshold: Option<u64> = None;
        while idx > 0 {
            idx -= 1;
            let s = self.segs[idx];
            if s.end() <= self.lost_mark {
                break; // already evaluated: everything below is lost or SACKed
            }
            if s.flags & F_SACKED != 0 {
                if threshold.is_none() {
                    count += 1;
                    bytes += s.len as u64;
                    if count >= DUP_THRESH || bytes > limit_bytes {
                        threshold = Some(s.start);
                    }
                }
            } else if threshold.is_some() && s.flags & F_LOST == 0 {
                // A segment already resent by NextSeg rule 3 keeps its retransmission.
                self.set_flags(idx, F_LOST, 0);
                newly += s.len as u64;
                self.rxt_hint = self.rxt_hint.min(s.start);
            }
        }
        if let Some(t) = threshold {
            self.lost_mark = self.lost_mark.max(t);
        }
        newly
    }

    /// Lost-retransmission detection (Linux's pre-RACK `tcp_mark_lost_retrans`, in the spirit
    /// of RFC 6675 §4 IsLost): a retransmission is deemed lost again once more than
    /// (DupThresh − 1)·SMSS bytes sent after it (above HighData at its send time) are SACKed.
    /// The segment becomes eligible for NextSeg rule 1 again. Returns bytes newly lost.
    fn mark_lost_retransmissions(&mut self) -> u64 {
        let limit = (DUP_THRESH as u64 - 1) * self.smss as u64;
        let mut newly = 0;
        while let Some(&(start, sent, hi)) = self.rtx_queue.front() {
            let above: u64 = self
                .sacked
                .iter()
                .rev()
                .take_while(|&&(_, r)| r > hi)
                .map(|&(l, r)| r - l.max(hi))
                .sum();
            if above <= limit {
                break; // later entries have a higher HighData: none can qualify yet
            }
            self.rtx_queue.pop_front();
            let idx = self.segs.partition_point(|s| s.start < start);
            if idx < self.segs.len() {
                let s = self.segs[idx];
                // Only a still-outstanding, lost-marked retransmission sent at that time.
                if s.start == start
                    && s.sent == sent
                    && s.flags & (F_SACKED | F_LOST | F_RETRANS) == F_LOST | F_RETRANS
                {
                    self.set_flags(idx, 0, F_RETRANS);
                    newly += s.len as u64;
                    self.rxt_hint = self.rxt_hint.min(s.start);
                }
            }
        }
        newly
    }

    /// Delivery-rate bookkeeping for one newly delivered packet (draft §3.3 UpdateRateSample).
    fn rate_delivered(&mut self, now: Time, p: &Seg, bytes: u64, rs: &mut RsBuild) {
        self.delivered += bytes;
        self.delivered_time = now;
        if !rs.has_data
            || p.delivered > rs.prior_delivered
            || (p.delivered == rs.prior_delivered && p.sent >= rs.sent)
        {
            rs.has_data = true;
            rs.prior_delivered = p.delivered;
            rs.prior_time = p.delivered_time;
            rs.is_app_limited = p.flags & F_APP_LIMITED != 0;
            rs.send_elapsed = p.sent.saturating_since(p.first_sent);
            rs.sent = p.sent;
            self.first_sent_time = p.sent;
        }
    }

    fn finish_rate_sample(&self, now: Time, rs: &RsBuild) -> Option<RateSample> {
        if !rs.has_data {
            return None;
        }
        let ack_elapsed = self.delivered_time.saturating_since(rs.prior_time);
        let interval = rs.send_elapsed.max(ack_elapsed);
        // Linux tcp_rate_gen: intervals shorter than min_rtt are unreliable (ACK compression).
        if interval.0 == 0 || interval < self.rtt.min_rtt() {
            return None;
        }
        Some(RateSample {
            delivered: self.delivered - rs.prior_delivered,
            interval,
            prior_delivered: rs.prior_delivered,
            is_app_limited: rs.is_app_limited,
            rtt: now.saturating_since(rs.sent),
        })
    }

    /// Receive in-window data (RFC 9293 §3.10.7.4 seventh step).
    fn process_data(&mut self, now: Time, seq_pos: i64, len: u32) {
        let nxt = self.rcv_nxt;
        let mut start = seq_pos.max(0) as u64;
        let mut end = (seq_pos + len as i64).max(0) as u64;
        // Keep only what fits in the window we advertised.
        end = end.min(self.rcv_right_edge.max(nxt));
        if end <= nxt {
            // Old duplicate: ACK at once (RFC 5681 §4.2).
            self.ack_now = true;
            return;
        }
        start = start.max(nxt);
        if start > end {
            self.ack_now = true;
            return;
        }
        if start == nxt {
            let had_ooo = !self.ooo.is_empty();
            let mut new_nxt = end;
            // Pull contiguous out-of-order ranges.
            let mut k = 0;
            while k < self.ooo.len() && self.ooo[k].0 <= new_nxt {
                new_nxt = new_nxt.max(self.ooo[k].1);
                k += 1;
            }
            for &(s, e) in &self.ooo[..k] {
                self.ooo_bytes -= e - s;
            }
            self.ooo.drain(..k);
            let adv = new_nxt - nxt;
            self.rcv_nxt = new_nxt;
            self.stats.bytes_received += adv;
            if had_ooo {
                // RFC 5681 §4.2: a segment that fills (part of) a hole is ACKed at once.
                self.ack_now = true;
            } else if !self.cfg.delayed_ack {
                self.ack_now = true;
            } else {
                // RFC 1122 §4.2.3.2 / RFC 5681 §4.2: ACK at least every second full-sized
                // segment, otherwise within the delayed-ACK timeout.
                self.unacked_bytes += adv;
                if self.unacked_bytes >= 2 * self.smss as u64 {
                    self.ack_now = true;
                } else if self.delack_deadline.is_none() {
                    self.delack_deadline = Some(now + self.cfg.delack_timeout);
                }
            }
        } else {
            // Out of order (RFC 5681 §4.2: immediate duplicate ACK).
            self.insert_ooo(start, end);
            self.ack_now = true;
        }
    }

    fn insert_ooo(&mut self, l: u64, r: u64) {
        let first = self.ooo.partition_point(|&(_, e)| e < l);
        let mut last = first;
        while last < self.ooo.len() && self.ooo[last].0 <= r {
            last += 1;
        }
        let (ml, mr) = if last > first {
            (self.ooo[first].0.min(l), self.ooo[last - 1].1.max(r))
        } else {
            (l, r)
        };
        for &(s, e) in &self.ooo[first..last] {
            self.ooo_bytes -= e - s;
        }
        if last > first {
            self.ooo[first] = (ml, mr);
            if last > first + 1 {
                self.ooo.drain(first + 1..last);
            }
        } else {
            self.ooo.insert(first, (ml, mr));
        }
        self.ooo_bytes += mr - ml;
        // RFC 2018 §4: the block with the most recent segment goes first; remember order.
        let mut out = [(ml, mr); 4];
        let mut n = 1;
        for i in 0..self.sack_recent_len {
            let b = self.sack_recent[i];
            if (b.1 < ml || b.0 > mr) && n < 4 {
                out[n] = b;
                n += 1;
            }
        }
        self.sack_recent = out;
        self.sack_recent_len = n;
    }

    fn check_peer_fin(&mut self, now: Time) {
        if let Some(p) = self.peer_fin {
            if !self.fin_received && self.rcv_nxt == p {
                // RFC 9293 §3.10.7.4 eighth step.
                self.rcv_nxt += 1;
                self.fin_received = true;
                self.ack_now = true;
                match self.state {
                    State::Established => self.state = State::CloseWait,
                    State::FinWait1 => {
                        if self.fin_sent && self.snd_una > self.app_end {
                            self.enter_time_wait(now);
                        } else {
                            self.state = State::Closing;
                        }
                    }
                    State::FinWait2 => self.enter_time_wait(now),
                    _ => {}
                }
            }
        }
    }

    fn enter_time_wait(&mut self, now: Time) {
        self.state = State::TimeWait;
        self.rto_deadline = None;
        self.persist_deadline = None;
        self.time_wait_deadline = Some(now + MSL.saturating_mul(2));
    }

    fn enter_closed(&mut self) {
        self.state = State::Closed;
        self.rto_deadline = None;
        self.persist_deadline = None;
        self.delack_deadline = None;
        self.time_wait_deadline = None;
        self.ack_now = false;
        self.syn_pending = false;
        self.probe_pending = false;
        self.pacing_blocked = false;
        self.segs.clear();
        self.pipe = 0;
    }

    /// Fire whichever timers are due. Calls before any deadline are harmless.
    pub fn handle_timeout(&mut self, now: Time) {
        if let Some(t) = self.time_wait_deadline {
            if now >= t {
                self.time_wait_deadline = None;
                self.enter_closed();
                return;
            }
        }
        if let Some(t) = self.delack_deadline {
            if now >= t {
                self.delack_deadline = None;
                self.ack_now = true;
            }
        }
        if let Some(t) = self.rto_deadline {
            if now >= t {
                self.on_rto(now);
            }
        }
        if let Some(t) = self.persist_deadline {
            if now >= t {
                // RFC 9293 §3.8.6.1: probe the zero window, backing off exponentially.
                if self.usable_window() > 0 {
                    // Sender SWS override (RFC 9293 §3.8.6.2.1 (d)): send what fits.
                    self.force_send = true;
                } else {
                    self.probe_pending = true;
                }
                self.persist_backoff += 1;
                self.persist_deadline = Some(now + self.persist_timeout());
            }
        }
    }

    fn persist_timeout(&self) -> Duration {
        self.rtt.backed_off(self.persist_backoff)
    }

    /// RFC 6298 §5.4–§5.6 and RFC 5681 §3.1 / RFC 6675 §5.1.
    fn on_rto(&mut self, now: Time) {
        let rto = self.rtt.rto();
        let syn_state = matches!(self.state, State::SynSent | State::SynReceived);
        if !syn_state && self.snd_max <= self.snd_una {
            self.rto_deadline = None;
            return;
        }
        self.stats.rtos += 1;
        self.stats.rto_sum_ns += rto.0 as u128;
        match self.state {
            State::SynSent | State::SynReceived => {
                self.syn_pending = true;
                self.syn_sent_at = None; // Karn
            }
            _ if self.snd_max > self.snd_una => {
                // RFC 5681 §3.1 eq. 4 FlightSize: the data the sender believes is in the network.
                // After an earlier timeout snd_max − snd_una still spans everything ever sent
                // (most of it marked lost), which would put ssthresh far above the path and
                // overshoot again; pipe (RFC 6675 §2) is what is really outstanding, the same
                // quantity BSD's go-back-N (snd_nxt − snd_una) and Linux's cwnd-based rule track.
                let flight = self
                    .pipe
                    .min(self.snd_max - self.snd_una)
                    .max(self.smss as u64);
                self.cc.on_rto(now, flight, self.smss);
                // RFC 6675 §5.1: keep SACKed marks, everything else is lost.
                for s in self.segs.iter_mut() {
                    if s.flags & F_SACKED == 0 {
                        s.flags = (s.flags | F_LOST) & !F_RETRANS;
                    }
                }
                self.pipe = 0;
                self.rtx_queue.clear();
                self.lost_mark = self.snd_max;
                self.rxt_hint = self.snd_una;
                if self.fin_sent && self.snd_una <= self.app_end {
                    self.fin_rtx = true;
                }
                self.in_recovery = false;
                self.inflation = 0;
                self.force_rtx = false;
                self.recover = self.snd_max;
                self.dupacks = 0;
                // Pacing must not delay the retransmission further.
                self.next_send_time = now;
            }
            _ => {
                self.rto_deadline = None;
                return;
            }
        }
        #[cfg(debug_assertions)]
        self.check_invariants();
        // RFC 6298 §5.5: back off; §5.6: restart the timer.
        self.rtt.back_off();
        self.rto_deadline = Some(now + self.rtt.rto());
    }

    // ------------------------------------------------------------------ output

    /// Congestion window in force: the controller's plus NewReno inflation (RFC 6582 §3.2).
    #[inline]
    fn cwnd(&self) -> u64 {
        self.cc.cwnd() + self.inflation
    }

    /// Bytes of new data the peer's window still admits.
    #[inline]
    fn usable_window(&self) -> u64 {
        (self.snd_una + self.snd_wnd).saturating_sub(self.snd_max)
    }

    fn pacing_rate(&self) -> Option<f64> {
        if let Some(r) = self.cc.pacing_rate_bps() {
            return Some(r);
        }
        if self.cfg.pacing && self.rtt.has_sample() {
            // Linux tcp_update_pacing_rate: 200% of cwnd/srtt in slow start, 120% after.
            let cwnd = self.cwnd() as f64;
            let ratio = if self.cc.cwnd() < self.cc.ssthresh() {
                2.0
            } else {
                1.2
            };
            let srtt = self.rtt.srtt().as_secs_f64().max(1e-9);
            return Some(cwnd * 8.0 / srtt * ratio);
        }
        None
    }

    /// Can a data segment of `len` bytes enter the network under cwnd (RFC 6675 §5 (C):
    /// cwnd − pipe ≥ SMSS; a short last segment needs only its own size)?
    #[inline]
    fn cwnd_allows(&self, len: u32) -> bool {
        let cwnd = self.cwnd();
        self.pipe + len as u64 <= cwnd || (self.pipe == 0)
    }

    fn can_send_data_state(&self) -> bool {
        matches!(
            self.state,
            State::Established
                | State::CloseWait
                | State::FinWait1
                | State::Closing
                | State::LastAck
        )
    }

    pub fn poll_transmit(&mut self, now: Time) -> Option<Packet> {
        if let Some(p) = self.rst_pending.take() {
            self.stats.segments_sent += 1;
            return Some(p);
        }
        match self.state {
            State::Closed | State::Listen => return None,
            _ => {}
        }
        if self.syn_pending {
            self.syn_pending = false;
            let synack = self.state == State::SynReceived;
            let flags = if synack {
                TcpFlags::SYN | TcpFlags::ACK
            } else {
                TcpFlags::SYN
            };
            if self.syn_sent_at.is_none() && self.stats.rtos == 0 {
                self.syn_sent_at = Some(now);
            }
            self.snd_max = self.snd_max.max(1);
            if self.rto_deadline.is_none() {
                self.rto_deadline = Some(now + self.rtt.rto());
            }
            return Some(self.build(now, 0, flags, 0));
        }
        if matches!(self.state, State::SynSent | State::SynReceived) {
            return None;
        }
        self.pacing_blocked = false;
        if self.can_send_data_state() {
            if let Some(p) = self.try_send_data(now) {
                return Some(p);
            }
            // FIN once all data has been sent (RFC 9293 §3.10.4), or again after an RTO.
            if self.fin_queued && self.snd_max >= self.app_end && !self.pacing_blocked {
                let no_lost_pending = self.next_lost().is_none();
                if (!self.fin_sent || (self.fin_rtx && no_lost_pending))
                    && matches!(
                        self.state,
                        State::FinWait1 | State::LastAck | State::Closing
                    )
                {
                    self.fin_sent = true;
                    self.fin_rtx = false;
                    self.snd_max = self.snd_max.max(self.app_end + 1);
                    if self.rto_deadline.is_none() {
                        self.rto_deadline = Some(now + self.rtt.rto());
                    }
                    let pos = self.app_end;
                    return Some(self.build(now, pos, TcpFlags::FIN | TcpFlags::ACK, 0));
                }
            }
            if self.probe_pending {
                // Zero-window probe, Linux style: SEQ = SND.UNA − 1, no data.
                self.probe_pending = false;
                self.stats.persist_probes += 1;
                let pos = self.snd_una.wrapping_sub(1);
                return Some(self.build(now, pos, TcpFlags::ACK, 0));
            }
        }
        if self.ack_now && !matches!(self.state, State::SynSent | State::SynReceived) {
            let pos = self.snd_max;
            return Some(self.build(now, pos, TcpFlags::ACK, 0));
        }
        None
    }

    /// First lost, not yet retransmitted, un-SACKed segment (RFC 6675 §4 NextSeg rule 1).
    fn next_lost(&mut self) -> Option<usize> {
        if self.rxt_hint >= self.lost_mark {
            return None;
        }
        let mut idx = self.segs.partition_point(|s| s.end() <= self.rxt_hint);
        while idx < self.segs.len() {
            let s = &self.segs[idx];
            if s.start >= self.lost_mark {
                break;
            }
            if s.flags & (F_LOST | F_RETRANS | F_SACKED) == F_LOST {
                self.rxt_hint = s.start;
                return Some(idx);
            }
            idx += 1;
        }
        self.rxt_hint = self.lost_mark;
        None
    }

    fn try_send_data(&mut self, now: Time) -> Option<Packet> {
        let paced = self.pacing_rate().is_some();
        // Retransmissions first (RFC 6675 §5 (C) rule 1).
        if let Some(idx) = self.next_lost() {
            let len = self.segs[idx].len;
            if !self.force_rtx && !self.cwnd_allows(len) {
                return None;
            }
            if paced && now < self.next_send_time {
                self.pacing_blocked = true;
                return None;
            }
            self.force_rtx = false;
            return Some(self.retransmit(now, idx));
        }
        // New data (RFC 6675 §5 (C) rule 2).
        if self.snd_max < 1 || self.fin_sent && self.snd_max > self.app_end {
            return self.rescue_hole(now, paced);
        }
        let remaining = self.app_end.saturating_sub(self.snd_max);
        if remaining == 0 {
            // Nothing to send: application-limited (draft §3.4) if cwnd has room.
            if self.pipe < self.cwnd() {
                self.app_limited = (self.delivered + self.pipe).max(1);
            }
            return self.rescue_hole(now, paced);
        }
        let wnd = self.usable_window();
        let len = (self.smss as u64).min(remaining).min(wnd) as u32;
        // Sender SWS avoidance (RFC 9293 §3.8.6.2.1): a full segment, all remaining data, or at
        // least half the largest window the peer offered; the persist timer forces otherwise.
        let sws_ok = len > 0
            && (len == self.smss
                || len as u64 == remaining
                || len as u64 >= self.max_snd_wnd / 2
                || self.force_send);
        if !sws_ok {
            if self.snd_max == self.snd_una && self.persist_deadline.is_none() {
                // RFC 9293 §3.8.6.1: window closed with nothing in flight: start persisting.
                self.persist_deadline = Some(now + self.persist_timeout());
            }
            return self.rescue_hole(now, paced);
        }
        if !self.cwnd_allows(len) {
            return None;
        }
        if paced && now < self.next_send_time {
            self.pacing_blocked = true;
            return None;
        }
        self.force_send = false;
        let start = self.snd_max;
        let is_app_limited = self.app_limited != 0;
        self.segs.push_back(Seg {
            start,
            len,
            flags: if is_app_limited { F_APP_LIMITED } else { 0 },
            sent: now,
            first_sent: now,
            delivered_time: now,
            delivered: 0,
        });
        let idx = self.segs.len() - 1;
        let nothing_outstanding = self.snd_una >= start;
        self.stamp_sent(now, idx, nothing_outstanding);
        self.pipe += len as u64;
        self.snd_max = start + len as u64;
        Some(self.finish_data(now, start, len))
    }

    /// Retransmit the segment at `idx` (rules 1 and 3 of RFC 6675 NextSeg, RTO go-back-N).
    fn retransmit(&mut self, now: Time, idx: usize) -> Packet {
        let len = self.segs[idx].len;
        self.stamp_sent(now, idx, false);
        self.set_flags(idx, F_RETRANS | F_EVER_RETRANS, 0);
        self.stats.retrans_segments += 1;
        self.stats.retrans_bytes += len as u64;
        let start = self.segs[idx].start;
        self.high_rxt = self.high_rxt.max(start + len as u64);
        if self.detect_lost_rtx && self.sack_ok {
            self.rtx_queue.push_back((start, now, self.snd_max));
        }
        self.finish_data(now, start, len)
    }

    /// RFC 6675 §4 NextSeg rule 3: in SACK recovery, when there is no lost segment to resend
    /// and no new data may go, resend the first un-SACKed, never-resent segment above HighRxt
    /// and below HighSACK (cwnd permitting).
    fn rescue_hole(&mut self, now: Time, paced: bool) -> Option<Packet> {
        if !(self.in_recovery && self.sack_ok) {
            return None;
        }
        let top = self.sacked.last()?.1;
        let from = self.high_rxt.max(self.snd_una);
        let mut idx = self.segs.partition_point(|s| s.end() <= from);
        while idx < self.segs.len() {
            let s = &self.segs[idx];
            if s.end() > top {
                return None;
            }
            if s.flags & (F_SACKED | F_RETRANS | F_LOST) == 0 {
                break;
            }
            idx += 1;
        }
        if idx >= self.segs.len() || !self.cwnd_allows(self.segs[idx].len) {
            return None;
        }
        if paced && now < self.next_send_time {
            self.pacing_blocked = true;
            return None;
        }
        Some(self.retransmit(now, idx))
    }

    /// Delivery-rate state at transmission (draft §3.2 OnPacketSent).
    fn stamp_sent(&mut self, now: Time, idx: usize, nothing_outstanding: bool) {
        // "No packets in flight" as Linux's packets_out == 0: nothing outstanding at all (a
        // retransmission always has something outstanding).
        if nothing_outstanding {
            self.first_sent_time = now;
            self.delivered_time = now;
        }
        let app_limited = self.app_limited != 0;
        let (fs, dt, d) = (self.first_sent_time, self.delivered_time, self.delivered);
        let s = &mut self.segs[idx];
        s.sent = now;
        s.first_sent = fs;
        s.delivered_time = dt;
        s.delivered = d;
        if app_limited {
            s.flags |= F_APP_LIMITED;
        } else {
            s.flags &= !F_APP_LIMITED;
        }
    }

    fn finish_data(&mut self, now: Time, start: u64, len: u32) -> Packet {
        let mut flags = TcpFlags::ACK;
        if start + len as u64 >= self.app_end {
            flags |= TcpFlags::PSH;
            // The FIN rides on the last data segment (and on its retransmissions), as in
            // Linux and ns-3.
            if self.fin_queued
                && matches!(
                    self.state,
                    State::FinWait1 | State::LastAck | State::Closing
                )
            {
                flags |= TcpFlags::FIN;
                self.fin_sent = true;
                self.fin_rtx = false;
                self.snd_max = self.snd_max.max(self.app_end + 1);
            }
        }
        let pkt = self.build(now, start, flags, len);
        self.stats.data_segments_sent += 1;
        self.stats.bytes_sent += len as u64;
        // RFC 6298 §5.1: start the timer if it is not running.
        if self.rto_deadline.is_none() {
            self.rto_deadline = Some(now + self.rtt.rto());
        }
        self.persist_deadline = None;
        self.cc
            .on_packet_sent(now, len as u64, self.pipe, self.app_limited != 0);
        if let Some(rate) = self.pacing_rate() {
            let rate = rate.max(1.0) as u64;
            // Paced on payload bytes, as Linux tcp_update_skb_after_send does (the original skb
            // carries no headers) and as BBR's rate (delivered payload per second) is defined.
            self.next_send_time =
                self.next_send_time.max(now) + Duration::transmission(len as u64, rate);
        }
        pkt
    }

    /// Window to advertise, bytes, applying receiver SWS avoidance (RFC 9293 §3.8.6.2.2): the
    /// right edge moves only by at least min(rcv_buf/2, MSS) and never moves left.
    fn advertise(&mut self) -> u64 {
        let held = self.readable() + self.ooo_bytes;
        let max_wnd = 65535u64 << self.rcv_wscale;
        let avail = self.cfg.rcv_buf_bytes.saturating_sub(held).min(max_wnd);
        let cand = self.rcv_nxt + avail;
        let cur = self.rcv_right_edge.max(self.rcv_nxt);
        let thresh = (self.cfg.rcv_buf_bytes / 2).min(self.smss as u64).max(1);
        if cand >= cur + thresh {
            self.rcv_right_edge = cand;
        } else {
            self.rcv_right_edge = cur;
        }
        self.rcv_right_edge - self.rcv_nxt
    }

    fn build(&mut self, now: Time, pos: u64, flags: TcpFlags, payload_len: u32) -> Packet {
        let syn = flags.syn();
        let mut o = TcpOptions::default();
        let window;
        if syn {
            // RFC 9293 §3.7.1, RFC 7323 §2.2/§3.2, RFC 2018 §2: offer what is configured; a
            // SYN-ACK only echoes what the peer offered.
            let synack = flags.ack();
            o.mss = Some(self.cfg.mss.min(65535) as u16);
            if self.cfg.window_scaling && (!synack || self.ws_ok) {
                o.window_scale = Some(self.rcv_wscale);
            }
            o.sack_permitted = self.cfg.sack && (!synack || self.sack_ok);
            if self.cfg.timestamps && (!synack || self.ts_ok) {
                o.timestamps = Some((ts_ms(now), if synack { self.ts_recent } else { 0 }));
            }
            // RFC 7323 §2.2: the SYN window is not scaled.
            let w = self.cfg.rcv_buf_bytes.min(65535);
            window = w as u16;
            if synack {
                self.rcv_right_edge = self.rcv_nxt + w;
            }
        } else {
            if self.ts_ok {
                o.timestamps = Some((ts_ms(now), self.ts_recent));
            }
            if self.sack_ok && !self.ooo.is_empty() && flags.ack() {
                // RFC 2018 §4: most recent block first, then the other recent ones.
                let max_blocks = if self.ts_ok { 3 } else { 4 };
                for i in 0..self.sack_recent_len {
                    let (l, _) = self.sack_recent[i];
                    // Map to the current range holding it (ranges merge as data arrives).
                    let k = self.ooo.partition_point(|&(_, e)| e <= l);
                    if k < self.ooo.len() && self.ooo[k].0 <= l {
                        let (rl, rr) = self.ooo[k];
                        let b = SackBlock {
                            left: self.rcv_seq(rl),
                            right: self.rcv_seq(rr),
                        };
                        if !o.sack_blocks().contains(&b) && (o.sack_len as usize) < max_blocks {
                            o.push_sack(b);
                        }
                    }
                }
                // Fill with other held ranges, highest first.
                for k in (0..self.ooo.len()).rev() {
                    if (o.sack_len as usize) >= max_blocks {
                        break;
                    }
                    let (rl, rr) = self.ooo[k];
                    let b = SackBlock {
                        left: self.rcv_seq(rl),
                        right: self.rcv_seq(rr),
                    };
                    if !o.sack_blocks().contains(&b) {
                        o.push_sack(b);
                    }
                }
            }
            let w = self.advertise();
            window = (w >> self.rcv_wscale).min(65535) as u16;
        }
        if flags.ack() {
            self.ack_now = false;
            self.delack_deadline = None;
            self.unacked_bytes = 0;
            self.last_ack_sent = self.rcv_nxt;
        }
        let tcp = TcpHeader {
            src_port: self.local.1,
            dst_port: self.remote.1,
            seq: self.snd_seq(pos),
            ack: if flags.ack() {
                self.rcv_seq(self.rcv_nxt)
            } else {
                0
            },
            flags,
            window,
            urgent: 0,
            options: o,
        };
        let mut ip = Ipv4Header::new(self.local.0, self.remote.0);
        ip.identification = self.ip_id;
        self.ip_id = self.ip_id.wrapping_add(1);
        self.stats.segments_sent += 1;
        Packet::tcp(ip, tcp, payload_len)
    }

    /// Earliest instant at which [`Endpoint::handle_timeout`] has work: RTO, delayed ACK,
    /// persist, TIME-WAIT end, or the pacing release when data waits only for pacing.
    pub fn poll_timeout(&self) -> Option<Time> {
        let mut t: Option<Time> = None;
        let mut upd = |d: Option<Time>| {
            if let Some(d) = d {
                t = Some(t.map_or(d, |x: Time| x.min(d)));
            }
        };
        upd(self.rto_deadline);
        upd(self.delack_deadline);
        upd(self.persist_deadline);
        upd(self.time_wait_deadline);
        if self.pacing_blocked {
            upd(Some(self.next_send_time));
        }
        t
    }

    // ------------------------------------------------------------------ application

    /// Queue up to `bytes` for sending; returns how many fit in the send buffer.
    pub fn send(&mut self, bytes: u64) -> u64 {
        if self.fin_queued
            || !matches!(
                self.state,
                State::Listen
                    | State::SynSent
                    | State::SynReceived
                    | State::Established
                    | State::CloseWait
            )
        {
            return 0;
        }
        let n = bytes.min(self.send_buffer_free());
        self.app_end += n;
        n
    }
    pub fn send_buffer_free(&self) -> u64 {
        self.cfg.snd_buf_bytes.saturating_sub(self.send_backlog())
    }
    /// Bytes the application has queued that the peer has not yet acknowledged.
    pub fn send_backlog(&self) -> u64 {
        self.app_end - self.snd_una.clamp(1, self.app_end)
    }
    /// In-order bytes waiting to be read.
    pub fn readable(&self) -> u64 {
        let data_end = if self.fin_received {
            self.rcv_nxt - 1
        } else {
            self.rcv_nxt
        };
        data_end.saturating_sub(self.rcv_read)
    }
    /// Read up to `max` bytes; returns how many were read. Reading opens the receive window.
    pub fn recv(&mut self, max: u64) -> u64 {
        let n = max.min(self.readable());
        if n == 0 {
            return 0;
        }
        self.rcv_read += n;
        if matches!(
            self.state,
            State::Established | State::FinWait1 | State::FinWait2
        ) && !self.fin_received
        {
            // RFC 9293 §3.8.6.2.2 / RFC 1122 §4.2.3.3: send a window update once reading
            // opens a small or zero window by at least min(rcv_buf/2, MSS).
            let thresh = (self.cfg.rcv_buf_bytes / 2).min(self.smss as u64).max(1);
            let old = self.rcv_right_edge.saturating_sub(self.rcv_nxt);
            let held = self.readable() + self.ooo_bytes;
            let max_wnd = 65535u64 << self.rcv_wscale;
            let avail = self.cfg.rcv_buf_bytes.saturating_sub(held).min(max_wnd);
            if old < thresh && avail >= old + thresh {
                self.ack_now = true;
            }
        }
        n
    }
    /// The peer's FIN has been received and all data before it read.
    pub fn peer_closed(&self) -> bool {
        self.fin_received && self.readable() == 0
    }
    /// Close after queued data (FIN).
    pub fn close(&mut self) {
        match self.state {
            State::Listen | State::SynSent => self.enter_closed(),
            State::SynReceived => self.fin_queued = true,
            State::Established => {
                self.fin_queued = true;
                self.state = State::FinWait1;
            }
            State::CloseWait => {
                self.fin_queued = true;
                self.state = State::LastAck;
            }
            _ => {}
        }
    }
    /// Abort with RST (RFC 9293 §3.10.5: <SEQ=SND.NXT><CTL=RST> in synchronized states).
    pub fn abort(&mut self) {
        let send_rst = matches!(
            self.state,
            State::SynReceived
                | State::Established
                | State::FinWait1
                | State::FinWait2
                | State::CloseWait
        );
        if send_rst {
            let pos = self.snd_max;
            let mut tcp = TcpHeader {
                src_port: self.local.1,
                dst_port: self.remote.1,
                seq: self.snd_seq(pos),
                ack: 0,
                flags: TcpFlags::RST,
                window: 0,
                urgent: 0,
                options: TcpOptions::default(),
            };
            if self.state == State::SynReceived {
                tcp.flags = TcpFlags::RST | TcpFlags::ACK;
                tcp.ack = self.rcv_seq(self.rcv_nxt);
            }
            let ip = Ipv4Header::new(self.local.0, self.remote.0);
            self.enter_closed();
            self.rst_pending = Some(Packet::tcp(ip, tcp, 0));
        } else {
            self.enter_closed();
        }
    }
    /// An externally supplied signal about the path (e.g. RAN feedback for radio-aware TCP,
    /// seed 002), handed to the congestion controller; controllers that do not use it ignore
    /// it. Drain [`Endpoint::poll_transmit`] afterwards.
    pub fn handle_feedback(&mut self, now: Time, fb: &crate::cc::Feedback) {
        self.cc.on_feedback(now, fb);
    }

    pub fn state(&self) -> State {
        self.state
    }
    pub fn local(&self) -> (Ipv4Addr, u16) {
        self.local
    }
    pub fn remote(&self) -> (Ipv4Addr, u16) {
        self.remote
    }
    pub fn stats(&self) -> &TcpStats {
        &self.stats
    }
    pub fn info(&self) -> TcpInfo {
        TcpInfo {
            cwnd: self.cwnd(),
            ssthresh: self.cc.ssthresh(),
            srtt: self.rtt.srtt(),
            rto: self.rtt.rto(),
            bytes_in_flight: self.pipe,
            peer_rwin: self.snd_wnd,
            rwin: self.rcv_right_edge.saturating_sub(self.rcv_nxt),
            pacing_rate_bps: self.pacing_rate(),
            in_recovery: self.in_recovery,
            cc: self.cc.trace(),
        }
    }

    // ------------------------------------------------------------------ additions

    /// The connection was closed by a RST from the peer.
    pub fn was_reset(&self) -> bool {
        self.reset_by_peer
    }
    /// Effective send MSS (RFC 9293 §3.7.1: min(own MSS, peer's announced MSS)), bytes.
    pub fn send_mss(&self) -> u32 {
        self.smss
    }
    /// Options negotiated in the handshake: (SACK, timestamps, window scaling).
    pub fn negotiated(&self) -> (bool, bool, bool) {
        (self.sack_ok, self.ts_ok, self.ws_ok)
    }
    /// Window scale shifts (send, receive) in force (RFC 7323 §2).
    pub fn window_scales(&self) -> (u8, u8) {
        (self.snd_wscale, self.rcv_wscale)
    }
    /// Total bytes the application has queued since the connection opened.
    pub fn bytes_queued(&self) -> u64 {
        self.app_end - 1
    }
    /// All queued data (and the FIN, if closing) has been acknowledged.
    pub fn all_acked(&self) -> bool {
        self.snd_una >= self.app_end && (!self.fin_queued || self.snd_una > self.app_end)
    }
    /// Switch on lost-retransmission detection (off by default: plain RFC 6675 repairs a lost
    /// retransmission only by the RTO). When on and SACK is negotiated, a retransmission is
    /// deemed lost once more than 2·SMSS of data sent after it is SACKed, and is resent, as
    /// Linux did before RACK.
    pub fn set_lost_retransmit_detection(&mut self, on: bool) {
        self.detect_lost_rtx = on;
        if !on {
            self.rtx_queue.clear();
        }
    }
    /// The most recent delivery-rate sample handed to the controller
    /// (draft-cheng-iccrg-delivery-rate-estimation §3.3).
    pub fn last_rate_sample(&self) -> Option<RateSample> {
        self.last_rate
    }
    /// Total bytes delivered to the peer (cumulatively ACKed or SACKed), the draft's
    /// `C.delivered`.
    pub fn delivered_bytes(&self) -> u64 {
        self.delivered
    }
    /// Rebuild the congestion controller with an explicit random seed (e.g. derived from the
    /// run seed and flow id). Call before any data is sent.
    pub fn set_cc_seed(&mut self, seed: u64) {
        self.cc = build_cc(&self.cfg, seed);
    }
    /// Controller access (read-only) for tests and traces.
    pub fn cc(&self) -> &Cc {
        &self.cc
    }
}

/// The controller for `cfg`, told whether the sender paces (HyStart++'s L depends on it,
/// RFC 9406 §4.3).
fn build_cc(cfg: &TcpConfig, seed: u64) -> Cc {
    let mut cc = Cc::new(&CcParams {
        kind: cfg.cc,
        mss: cfg.mss,
        initial_cwnd_segments: cfg.initial_cwnd_segments,
        hystart: cfg.hystart,
        seed,
    });
    if let Cc::Cubic(c) = &mut cc {
        c.set_paced(cfg.pacing);
    }
    cc
}

/// The RST a host with no matching connection answers to `tcp` (RFC 9293 §3.10.7.1, CLOSED
/// state): `None` if `tcp` itself is a RST.
pub fn reset_for(ip: &Ipv4Header, tcp: &TcpHeader, payload_len: u32) -> Option<Packet> {
    if tcp.flags.rst() {
        return None;
    }
    let (seq, ack, flags) = if tcp.flags.ack() {
        // <SEQ=SEG.ACK><CTL=RST>
        (tcp.ack, 0, TcpFlags::RST)
    } else {
        // <SEQ=0><ACK=SEG.SEQ+SEG.LEN><CTL=RST,ACK>
        let seg_len = payload_len + tcp.flags.syn() as u32 + tcp.flags.fin() as u32;
        (
            0,
            tcp.seq.wrapping_add(seg_len),
            TcpFlags::RST | TcpFlags::ACK,
        )
    };
    let h = TcpHeader {
        src_port: tcp.dst_port,
        dst_port: tcp.src_port,
        seq,
        ack,
        flags,
        window: 0,
        urgent: 0,
        options: TcpOptions::default(),
    };
    Some(Packet::tcp(Ipv4Header::new(ip.dst, ip.src), h, 0))
}
