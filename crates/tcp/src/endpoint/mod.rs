//! The TCP connection state machine (RFC 9293 §3.3.2, §3.10) as a sans-IO entity.
//!
//! One [`Endpoint`] is one connection. Inputs: [`Endpoint::handle_segment`],
//! [`Endpoint::handle_timeout`], [`Endpoint::handle_feedback`] and the application calls
//! ([`Endpoint::send`], [`Endpoint::recv`], [`Endpoint::close`], [`Endpoint::abort`]); outputs:
//! [`Endpoint::poll_transmit`] (drain until `None` after every input) and
//! [`Endpoint::poll_timeout`]. Payload bytes are never stored, only lengths.
//!
//! Sequence numbers are kept internally as 64-bit *positions* (0 = ISS on the send side, 0 = IRS
//! on the receive side) and converted to wrapping 32-bit numbers (RFC 9293 §3.4) at the wire.
//!
//! # Where each mechanism lives
//! | file | what |
//! |---|---|
//! | `input.rs` | SEGMENT ARRIVES (RFC 9293 §3.10.7): handshake, option negotiation, acceptability, RST/SYN checks, state transitions |
//! | `ack.rs` | the ACK field (fifth step): window update, duplicate ACKs, fast retransmit / fast recovery (RFC 5681, RFC 6582, RFC 6675), RTT samples, the controller's `on_ack` |
//! | `scoreboard.rs` | the per-segment record: SACK scoreboard, pipe, IsLost, NextSeg (RFC 6675 §3–§4) |
//! | `rack.rs` | RACK-TLP loss detection and tail loss probes (RFC 8985) |
//! | `undo.rs` | D-SACK use on the sending side (RFC 2883), the undo of congestion responses found unnecessary (Linux `tcp_try_undo_*`, RFC 3522), F-RTO (RFC 5682) |
//! | `prr.rs` | Proportional Rate Reduction (RFC 6937 / RFC 9937) |
//! | `reno.rs` | the Linux stack's recovery without SACK: duplicate ACKs counted as delivered segments (Linux `tcp_add_reno_sack` and kin) |
//! | `rate.rs` | delivery-rate sampling (draft-cheng-iccrg-delivery-rate-estimation) |
//! | `recv.rs` | the receive side: reassembly, when to ACK, SACK blocks, the advertised window |
//! | `output.rs` | `poll_transmit`: what goes next (retransmission, new data, FIN, probe, ACK), cwnd and pacing, segment building |
//! | `idle.rs` | restarting the window after an idle period (RFC 5681 §4.1, Linux `tcp_cwnd_restart`) |
//! | `timers.rs` | RTO (RFC 6298), persist (RFC 9293 §3.8.6.1), delayed ACK, TIME-WAIT; `poll_timeout` |
//! | `app.rs` | the application's send and receive buffers, close and abort |
//! | `rtt.rs` | the RFC 6298 estimator |
//!
//! Design choices worth knowing:
//! * RTT samples use the per-segment send time (ns) with Karn's rule (RFC 6298 §3); under
//!   [`CwndRules::Linux`] none from an ACK that also covers retransmitted data (Linux
//!   `FLAG_RETRANS_DATA_ACKED`). Timestamps
//!   (RFC 7323, TSval = `now` in ms) are sent and echoed (§4.3); their coarse samples are used
//!   only where Karn gives none (ACKs of retransmitted data), to update the RTO and end the
//!   backoff, as Linux does. PAWS is not implemented.
//! * Zero-window probes are Linux-style: an ACK with SEQ = SND.UNA − 1 and no payload, which an
//!   RFC 9293 receiver answers with an ACK carrying its current window (§3.10.7.4).
//! * After an RTO every un-SACKed segment is marked lost (RFC 6675 §5.1) and resent in order as
//!   cwnd allows (go-back-N over the holes); a new fast recovery cannot start until the RTO's
//!   recovery point is acknowledged (RFC 6582 §3.2 step 1, RFC 6675 §5.1).
//! * A listening endpoint becomes the connection: the first SYN turns it into SYN-RECEIVED.
//! * The advertised window is the free part of [`TcpConfig::rcv_space`], the share
//!   [`TcpConfig::rcv_win_ratio`] of the receive buffer (Linux `tcp_win_from_space`: 5/8 in the
//!   Linux profile, all of it in the RFC profile).
//! * The FIN rides on the last data segment when the application closed before it went out
//!   (Linux/ns-3 behaviour); otherwise it is a segment of its own.
//! * Loss detection with SACK is RACK-TLP (RFC 8985) when [`TcpConfig::rack_tlp`] is on (as in
//!   Linux), otherwise RFC 6675's DupThresh rule with NextSeg rules 1–3, where a lost
//!   retransmission is repaired by the RTO unless the opt-in lost-retransmission detection
//!   ([`Endpoint::set_lost_retransmit_detection`]) is on; without SACK, RFC 6582 with window
//!   inflation under [`CwndRules::Rfc`], Linux's emulation of SACK by duplicate ACKs under
//!   [`CwndRules::Linux`] (`reno.rs`). The sending rate in recovery follows PRR (RFC 6937) when
//!   [`TcpConfig::prr`] is on, with SACK or that emulation. There is no
//!   PAWS. A timeout found spurious by its timestamps is undone when [`TcpConfig::rto_undo`]
//!   is on (Linux `tcp_try_undo_loss`). The Linux profile adds ([`TcpConfig::dsack`],
//!   [`TcpConfig::recovery_undo`], [`TcpConfig::frto`]; `undo.rs`): the receiver's D-SACK
//!   (RFC 2883), the undo of a fast recovery by timestamps or D-SACKs (Linux
//!   `tcp_try_undo_recovery` / `_partial` / `_dsack`), F-RTO (RFC 5682) and RACK's
//!   reordering-window adaptation (RFC 8985 §6.2 Step 4).

mod ack;
mod app;
mod config;
mod idle;
mod input;
mod output;
mod prr;
mod rack;
mod rate;
mod recv;
mod reno;
mod rtt;
mod scoreboard;
mod timers;
mod undo;

pub use config::{CwndRules, TcpConfig, LINUX_RCV_WIN_RATIO};
pub use input::reset_for;
pub use prr::{Prr, ReductionBound};
pub use rtt::RttEstimator;

use crate::cc::{
    Cc, CcKind, CcParams, CcTrace, CongestionControl, Feedback, RateSample, SlowStartCause,
};
use rack::Rack;
use rantcp_core::{Duration, Time};
use rantcp_wire::Packet;
use rate::RateSampler;
use recv::Receiver;
use scoreboard::Scoreboard;
use std::net::Ipv4Addr;

/// Maximum segment lifetime (RFC 9293 §3.4.2: "arbitrarily defined to be 2 minutes"; Linux and
/// most stacks use 60 s). TIME-WAIT lasts 2·MSL.
pub const MSL: Duration = Duration::from_secs(60);
/// RFC 6675 §2 DupThresh.
pub const DUP_THRESH: u32 = 3;
/// Default send MSS when the peer announces none (RFC 9293 §3.7.1).
pub const DEFAULT_MSS: u32 = 536;

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
    /// Timeouts found spurious and undone ([`TcpConfig::rto_undo`]; Linux `TCPLossUndo`).
    pub rto_undos: u64,
    /// Timeouts found spurious by F-RTO (RFC 5682 §3.1 step 3.b; Linux `TCPSpuriousRTOs`),
    /// also counted in `rto_undos`.
    pub spurious_rtos: u64,
    /// Fast recoveries undone at their end, by timestamps or D-SACKs (Linux
    /// `tcp_try_undo_recovery`, `TCPFullUndo`).
    pub full_undos: u64,
    /// Fast recoveries undone on a partial ACK of a delayed original (Linux
    /// `tcp_try_undo_partial`, `TCPPartialUndo`).
    pub partial_undos: u64,
    /// Congestion responses undone because D-SACKs showed every retransmission unnecessary
    /// (Linux `tcp_try_undo_dsack`, `TCPDSACKUndo`).
    pub dsack_undos: u64,
    /// D-SACK blocks received and accepted (Linux `TCPDSACKRecv` + `TCPDSACKOfoRecv`, less
    /// `TCPDSACKIgnoredDubious`).
    pub dsacks_received: u64,
    /// D-SACK blocks sent (receiver side; Linux `TCPDSACKOldSent` + `TCPDSACKOfoSent`).
    pub dsacks_sent: u64,
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
    /// Tail loss probes sent (RFC 8985 §7).
    pub tlp_probes: u64,
    /// Window restarts after an idle period longer than the RTO (RFC 5681 §4.1).
    pub idle_restarts: u64,
    /// The end of the connection's first slow start (sender side), `None` while it lasts.
    pub slow_start_exit: Option<SlowStartExit>,
}

/// The end of a connection's first slow start: when the controller first set ssthresh below
/// infinity, the cwnd just before, and why. The kernel's counterpart is the per-namespace
/// `TcpExtTCPHystart{Train,Delay}{Detect,Cwnd}` counters (tcp_cubic.c), which count HyStart's
/// exits only; a loss exit has no kernel counter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SlowStartExit {
    pub at: Time,
    /// cwnd before the event (a loss then cuts it), bytes.
    pub cwnd: u64,
    /// The sender's MSS then (cwnd / mss: Linux's cwnd in segments).
    pub mss: u32,
    pub cause: SlowStartCause,
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

/// One TCP connection endpoint (sans-IO).
///
/// # Driving it
/// * Create with [`Endpoint::connect`] (active open, the SYN is the first
///   [`Endpoint::poll_transmit`] output) or [`Endpoint::listen`] (passive open). A listening
///   endpoint *becomes* the connection when the first SYN arrives ([`Endpoint::remote`] is
///   then the SYN's source); create one listening endpoint per expected connection. Segments
///   for a 4-tuple with no endpoint should be answered with [`reset_for`].
/// * After every input — [`Endpoint::handle_segment`], [`Endpoint::handle_timeout`],
///   [`Endpoint::handle_feedback`], [`Endpoint::send`], [`Endpoint::recv`],
///   [`Endpoint::close`], [`Endpoint::abort`] — drain [`Endpoint::poll_transmit`] until `None`,
///   then (re)arm one timer at [`Endpoint::poll_timeout`]. Timers that arm themselves (persist,
///   pacing release, the app-limited mark) are decided inside `poll_transmit`, so the drain
///   must come first.
/// * `handle_timeout(now)` fires whatever is due at `now`; early or repeated calls are
///   harmless. `send` may be called before the handshake completes (data waits).
/// * Every output is a complete [`Packet`] (IPv4 + TCP header with options, payload length).
///
/// # Units
/// Sizes are bytes, times are [`Time`]/[`Duration`] (integer ns). [`TcpInfo::cwnd`] includes
/// the NewReno recovery inflation (RFC 6582 §3.2) when SACK is off under [`CwndRules::Rfc`];
/// [`TcpInfo::bytes_in_flight`] is RFC 6675 "pipe" (under [`CwndRules::Linux`] without SACK,
/// less the segments duplicate ACKs reported delivered: Linux `tcp_packets_in_flight`).
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
    /// Transmitted segments, SACK scoreboard, pipe.
    sb: Scoreboard,
    dupacks: u32,
    /// RFC 6675 HighRxt + 1: end of the highest segment retransmitted in this recovery.
    high_rxt: u64,
    /// Lost-retransmission detection on (see [`Endpoint::set_lost_retransmit_detection`]).
    detect_lost_rtx: bool,
    in_recovery: bool,
    /// A retransmission timeout's episode is under way: its recovery point (`recover`) has not
    /// been acknowledged yet (RFC 6675 §5.1 "RTO recovery").
    rto_recovery: bool,
    /// An ACK advanced SND.UNA since the last timeout (Linux resets `icsk_retransmits`).
    acked_since_rto: bool,
    /// TSval of the first retransmission of the current loss episode (Linux `retrans_stamp`),
    /// for the undo of a spurious timeout ([`TcpConfig::rto_undo`]).
    retrans_stamp: Option<u32>,
    /// (cwnd, ssthresh) from before the episode's congestion response, while it may be undone
    /// (Linux `undo_marker` with `prior_cwnd` / `prior_ssthresh`).
    undo_window: Option<(u64, u64)>,
    /// SND.UNA when the episode that may be undone began (Linux `undo_marker`; meaningful while
    /// `undo_window` is set).
    undo_marker: u64,
    /// Retransmissions of the episode not yet shown unnecessary by a D-SACK (Linux
    /// `undo_retrans`): −1 before the first, 0 when every one was D-SACKed.
    undo_retrans: i64,
    /// Segments reported duplicate by D-SACKs so far (Linux `dsack_dups`).
    dsack_dups: u64,
    /// F-RTO is running for the current timeout (RFC 5682 §3.1; Linux `tp->frto`).
    frto: bool,
    /// This ACK's transmissions are new data, not retransmissions (RFC 5682 §3.1 step 2.b;
    /// Linux `REXMIT_NEW`).
    frto_new_only: bool,
    /// RFC 6582 `recover` / RFC 6675 RecoveryPoint, as HighData + 1.
    recover: u64,
    /// NewReno (no SACK, [`CwndRules::Rfc`]) cwnd inflation during fast recovery (RFC 6582
    /// §3.2 steps 3–4).
    inflation: u64,
    /// Proportional Rate Reduction of the current fast recovery, when it applies.
    prr: Option<Prr>,
    /// The window PRR allows on the last ACK: pipe + sndcnt (Linux sets cwnd to this).
    prr_cwnd: u64,
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
    /// Whether cwnd limits the sender (RFC 7661; Linux `tcp_cwnd_validate`).
    cwnd_use: output::CwndUse,
    /// When the last data segment was sent (Linux `lsndtime`), for the idle restart.
    last_data_sent: Option<Time>,
    /// RACK-TLP state (RFC 8985).
    rack: Rack,
    /// Delivery-rate sampling state.
    rate: RateSampler,

    // ---- receive side; positions: 0 = IRS ----
    rcv: Receiver,
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
        // RFC 7323 §2.3: the smallest shift that makes the receive buffer fit 16 bits. Linux
        // (tcp_select_initial_window) scales the largest buffer the socket may grow to,
        // max(tcp_rmem[2], rmem_max), not the window it offers (× scaling_ratio): rcv_buf is
        // that ceiling here (the fidelity harness sets tcp_rmem[2] to it), so the shift is the
        // kernel's: ilog2(6e6) − 15 = 7 for mmwave-blockage's 6 MB, as this loop gives.
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
            rtt: {
                let rtt = RttEstimator::new(cfg.initial_rto, cfg.min_rto, cfg.max_rto);
                match cfg.cwnd_rules {
                    CwndRules::Rfc => rtt,
                    CwndRules::Linux => rtt.with_linux_rules(),
                }
            },
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
            sb: Scoreboard::default(),
            dupacks: 0,
            high_rxt: 0,
            detect_lost_rtx: false,
            in_recovery: false,
            rto_recovery: false,
            acked_since_rto: false,
            retrans_stamp: None,
            undo_window: None,
            undo_marker: 0,
            undo_retrans: -1,
            dsack_dups: 0,
            frto: false,
            frto_new_only: false,
            recover: 0,
            inflation: 0,
            prr: None,
            prr_cwnd: 0,
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
            cwnd_use: output::CwndUse::default(),
            last_data_sent: None,
            rack: Rack::default(),
            rate: RateSampler::default(),
            rcv: Receiver::new(),
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

    /// Debug-build consistency check of the scoreboard and the receive queue.
    #[cfg(debug_assertions)]
    fn check_invariants(&self) {
        self.sb.check(self.snd_una, self.snd_max);
        self.rcv.check(self.cfg.rcv_space());
        assert!(self.snd_una <= self.snd_max && self.snd_una <= self.app_end + 1);
    }

    // ------------------------------------------------------------------ external signals

    /// An externally supplied signal about the path (e.g. RAN feedback for radio-aware TCP,
    /// seed 002), handed to the congestion controller ([`CongestionControl::on_feedback`];
    /// controllers that do not use it ignore it). Drain [`Endpoint::poll_transmit`] afterwards:
    /// a larger window may let data out.
    pub fn handle_feedback(&mut self, now: Time, fb: &Feedback) {
        self.cc.on_feedback(now, fb);
    }

    // ------------------------------------------------------------------ observation

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
            bytes_in_flight: self.in_flight(),
            peer_rwin: self.snd_wnd,
            rwin: self.rcv.window(),
            pacing_rate_bps: self.pacing_rate(),
            in_recovery: self.in_recovery,
            cc: self.cc.trace(),
        }
    }
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
    /// Switch on lost-retransmission detection (off by default: plain RFC 6675 repairs a lost
    /// retransmission only by the RTO). When on and SACK is negotiated, a retransmission is
    /// deemed lost once more than 2·SMSS of data sent after it is SACKed, and is resent, as
    /// Linux did before RACK.
    pub fn set_lost_retransmit_detection(&mut self, on: bool) {
        self.detect_lost_rtx = on;
        if !on {
            self.sb.rtx_queue.clear();
        }
    }
    /// The most recent delivery-rate sample handed to the controller
    /// (draft-cheng-iccrg-delivery-rate-estimation §3.3).
    pub fn last_rate_sample(&self) -> Option<RateSample> {
        self.rate.last_rate
    }
    /// Total bytes delivered to the peer (cumulatively ACKed or SACKed), the draft's
    /// `C.delivered`.
    pub fn delivered_bytes(&self) -> u64 {
        self.rate.delivered
    }
    /// Rebuild the congestion controller with an explicit random seed (e.g. derived from the
    /// run seed and flow id). Call before any data is sent.
    pub fn set_cc_seed(&mut self, seed: u64) {
        self.cc = build_cc(&self.cfg, seed);
    }
    /// RACK.reo_wnd_mult (RFC 8985 §6.2 Step 4): 1 unless D-SACKs widened the reordering
    /// window.
    pub fn rack_reo_wnd_mult(&self) -> u32 {
        self.rack.reo_wnd_mult()
    }
    /// Controller access (read-only) for tests and traces.
    pub fn cc(&self) -> &Cc {
        &self.cc
    }
}

/// The controller for `cfg`, told whether the sender paces (HyStart++'s L depends on it,
/// RFC 9406 §4.3).
fn build_cc(cfg: &TcpConfig, seed: u64) -> Cc {
    let p = CcParams {
        kind: cfg.cc,
        mss: cfg.mss,
        initial_cwnd_segments: cfg.initial_cwnd_segments,
        hystart: cfg.hystart,
        abc_limit_segments: match cfg.cwnd_rules {
            CwndRules::Rfc => Some(2),
            CwndRules::Linux => None,
        },
        seed,
    };
    let mut cc = match cfg.cc {
        CcKind::RadioAware => Cc::radio_aware(&p, cfg.radio_aware),
        _ => Cc::new(&p),
    };
    if let Cc::Cubic(c) = &mut cc {
        c.set_paced(cfg.pacing);
    }
    cc
}
