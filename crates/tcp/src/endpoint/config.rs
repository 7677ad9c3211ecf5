//! Endpoint configuration: the stack settings of one connection (sizes in bytes, times in
//! [`Duration`]). [`TcpConfig::default`] is rantcp's historical RFC-algorithm stack with Linux's
//! timer values; [`TcpConfig::linux`] and [`TcpConfig::rfc`] are the two coherent stack profiles
//! the scenario configs select with `flow.stack`.

use crate::cc::radio_aware::RadioAwareParams;
use crate::cc::{CcKind, Hystart};
use rantcp_core::Duration;

/// How ssthresh, cwnd and the RTO respond to congestion where Linux and the RFCs differ.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CwndRules {
    /// RFC 5681 / RFC 3465: ssthresh from FlightSize (eq. 4); slow start grows by at most
    /// L = 2 SMSS per ACK (RFC 3465 §2.2); a repeated timeout within one timeout episode holds
    /// ssthresh (RFC 5681 §3.1). RTO = max(SRTT + 4·RTTVAR, min_rto) (RFC 6298 §2.3, §2.4).
    /// Without SACK, fast recovery inflates cwnd (RFC 6582 §3.2).
    Rfc,
    /// Linux 6.x: ssthresh from cwnd (`ca_ops->ssthresh`, e.g. `tcp_reno_ssthresh`); slow start
    /// grows by everything acknowledged (`tcp_slow_start`); a timeout after the previous one's
    /// retransmission was acknowledged reduces ssthresh again, from the (small) cwnd
    /// (`tcp_enter_loss` with `icsk_retransmits` reset by the ACK). RTO = SRTT + Linux's
    /// variation term (`__tcp_set_rto` adds `rttvar_us`): at least min_rto, so the RTO stays
    /// min_rto above SRTT however large SRTT grows, and following each round trip's largest
    /// deviation, decaying by a quarter per round trip rather than per sample
    /// (`tcp_rtt_estimator`; `LinuxVar` in rtt.rs), so one delay spike (a window held
    /// through a blockage) keeps the RTO up for round trips. An ACK that also covers retransmitted
    /// data gives no send-time RTT sample, only its timestamp's (`tcp_clean_rtx_queue`:
    /// `FLAG_RETRANS_DATA_ACKED`); with `Rfc`, the oldest never-retransmitted segment it covers
    /// gives one (RFC 6298 §3 forbids samples of retransmitted segments only). Without SACK,
    /// duplicate ACKs count as SACKed segments (`tcp_add_reno_sack`) and PRR sets the window in
    /// fast recovery, with no inflation (`reno.rs`).
    Linux,
}

/// Endpoint configuration. All sizes in bytes.
#[derive(Clone, Debug, PartialEq)]
pub struct TcpConfig {
    /// Maximum segment size: payload bytes per segment this endpoint sends and announces.
    pub mss: u32,
    /// Receive buffer, bytes: bounds the advertised window (unread + out-of-order data), of
    /// which the share [`TcpConfig::rcv_win_ratio`] holds payload.
    pub rcv_buf_bytes: u64,
    /// The share of `rcv_buf_bytes` that holds payload, hence bounds the advertised window
    /// ([`TcpConfig::rcv_space`]); 1 = all of it (RFC 9293: the window is the free buffer).
    /// Linux charges a socket's receive buffer with each skb's `truesize` (payload plus the
    /// `sk_buff` and the allocation it sits in), so the window it offers for a buffer of
    /// `space` bytes is `tcp_win_from_space`: space × `scaling_ratio` / 256, the ratio being
    /// payload / truesize of the segments received (`tcp_measure_rcv_mss`, Linux ≥ 6.7;
    /// before, `tcp_adv_win_scale` = 1: half).
    pub rcv_win_ratio: f64,
    /// Send buffer, bytes: bounds unacknowledged + unsent data.
    pub snd_buf_bytes: u64,
    /// Delayed ACKs on (ACK every `ack_every` full-sized segments or at the timer); off: ACK
    /// every segment at once.
    pub delayed_ack: bool,
    /// With delayed ACKs, ACK at least every this many full-sized segments (RFC 5681 §4.2: 2;
    /// more makes stretch ACKs, as some phone OSes do). At least 1.
    pub ack_every: u32,
    /// Quick-ACK at connection start: the first this many data segments are each ACKed at once
    /// (Linux `tcp_incr_quickack`: min(rcv_wnd / (2·MSS), 16)); 0 = off.
    pub quickack_segments: u32,
    /// Maximum delay of a delayed ACK (RFC 1122 §4.2.3.2 allows up to 500 ms; Linux ~40 ms).
    pub delack_timeout: Duration,
    /// Acknowledge the `ack_every`-th full-sized segment when the application reads, not at
    /// once: after every segment that arrived at the same instant (a burst a radio transport
    /// block delivered), so a burst gets one ACK. Linux: `__tcp_ack_snd_check` ACKs at once
    /// only if the window's right edge advances (`__tcp_select_window(sk) >= tp->rcv_wnd`),
    /// which it does not while the segment is unread; the ACK then leaves from
    /// `tcp_recvmsg` → `tcp_cleanup_rbuf` (`rcv_nxt - rcv_wup > rcv_mss`). The same read
    /// also ACKs a lone segment shorter than the MSS or full-sized with PSH (Linux
    /// `ICSK_ACK_PUSHED`, `tcp_measure_rcv_mss`; PSH since 6.6), which otherwise waits for the
    /// delayed-ACK timer. Assumes the application reads whenever data is readable (and empties
    /// the queue); off: ACK at once (RFC 5681 §4.2), a lone segment after the timer.
    pub ack_when_read: bool,
    /// Lower bound on the RTO (RFC 6298 §2.4 says 1 s; Linux uses 200 ms).
    pub min_rto: Duration,
    /// RTO before any RTT sample (RFC 6298 §2.1: 1 s).
    pub initial_rto: Duration,
    /// Upper bound on the RTO (RFC 6298 §2.5: at least 60 s).
    pub max_rto: Duration,
    /// Offer/use SACK (RFC 2018) and RFC 6675 loss recovery (without: RFC 6582, as
    /// [`CwndRules`] says).
    pub sack: bool,
    /// RACK-TLP loss detection (RFC 8985) instead of RFC 6675's DupThresh rule (needs SACK).
    pub rack_tlp: bool,
    /// Proportional Rate Reduction (RFC 6937) for the sending rate in fast recovery (with SACK,
    /// or without it under [`CwndRules::Linux`]; for the window-based controllers).
    pub prr: bool,
    /// Offer/use timestamps (RFC 7323 §3).
    pub timestamps: bool,
    /// Offer/use window scaling (RFC 7323 §2).
    pub window_scaling: bool,
    /// Congestion control algorithm.
    pub cc: CcKind,
    /// Initial window, segments (RFC 6928: 10).
    pub initial_cwnd_segments: u32,
    /// CUBIC's slow-start exit.
    pub hystart: Hystart,
    /// Where Linux and the RFCs differ on ssthresh and cwnd.
    pub cwnd_rules: CwndRules,
    /// Undo a retransmission timeout found spurious (Linux `tcp_try_undo_loss`): an ACK that
    /// advances SND.UNA during the timeout's recovery and echoes a timestamp older than the
    /// episode's first retransmission (`tcp_packet_delayed`; the Eifel detection of RFC 3522
    /// §3.2) shows the original segments arrived, so the window from before the timeout comes
    /// back and nothing more is resent as lost. Needs timestamps.
    pub rto_undo: bool,
    /// D-SACK (RFC 2883), Linux `net.ipv4.tcp_dsack` = 1: the receiver reports a duplicate
    /// segment's range as the first SACK block (§4), and the sender uses the D-SACKs it gets
    /// for the undo of a congestion response whose retransmissions all proved unnecessary
    /// (Linux `undo_retrans`, `tcp_try_undo_dsack`) and for RACK's reordering window (RFC 8985
    /// §6.2 Step 4, `tcp_rack_update_reo_wnd`). Needs SACK.
    pub dsack: bool,
    /// Undo a fast recovery found unnecessary (Linux `tcp_try_undo_recovery`,
    /// `tcp_try_undo_partial`; RFC 3522's Eifel detection by timestamps, and by D-SACK with
    /// [`TcpConfig::dsack`]): the window from before the recovery comes back.
    pub recovery_undo: bool,
    /// F-RTO (RFC 5682 §3, the SACK-enhanced algorithm; Linux `net.ipv4.tcp_frto` = 2,
    /// `tcp_process_loss`): after a timeout, the first ACK that advances SND.UNA lets new data
    /// go instead of retransmissions, and an ACK of never-retransmitted data sent before the
    /// timeout shows the timeout spurious, which is then undone. Needs SACK.
    pub frto: bool,
    /// SACK compression (Linux 4.19+, `__tcp_ack_snd_check`): of the duplicate ACKs for
    /// out-of-order data at one RCV.NXT, the first three (TCP_FASTRETRANS_THRESH) leave at
    /// once, the rest wait up to min(RTT / 20, `tcp_comp_sack_delay_ns` = 1 ms) and go as one
    /// ACK, or at once when `tcp_comp_sack_nr` = 44 are held. Needs SACK.
    pub sack_compression: bool,
    /// Pace transmissions even when the controller does not ask for it (BBR always paces).
    pub pacing: bool,
    /// Restart the window after an idle period longer than the RTO (RFC 5681 §4.1 SHOULD;
    /// Linux `net.ipv4.tcp_slow_start_after_idle`, on by default), by [`CwndRules`].
    pub slow_start_after_idle: bool,
    /// Settings of the radio-aware controller (`cc` = [`CcKind::RadioAware`], seed 002).
    pub radio_aware: RadioAwareParams,
}

impl Default for TcpConfig {
    /// RFC algorithms (RFC 6675 recovery, no RACK-TLP, no PRR, no quick-ACK, HyStart++ for
    /// CUBIC) with Linux's timers (200 ms minimum RTO, 40 ms delayed ACK): what rantcp's
    /// endpoint did before the stack profiles existed. Unit tests build on it.
    fn default() -> Self {
        TcpConfig {
            mss: 1448,
            rcv_buf_bytes: 6 << 20,
            rcv_win_ratio: 1.0,
            snd_buf_bytes: 6 << 20,
            delayed_ack: true,
            ack_every: 2,
            quickack_segments: 0,
            delack_timeout: Duration::from_millis(40),
            ack_when_read: false,
            min_rto: Duration::from_millis(200),
            initial_rto: Duration::from_secs(1),
            max_rto: Duration::from_secs(60),
            sack: true,
            rack_tlp: false,
            prr: false,
            timestamps: true,
            window_scaling: true,
            cc: CcKind::NewReno,
            initial_cwnd_segments: 10,
            hystart: Hystart::PlusPlus,
            cwnd_rules: CwndRules::Rfc,
            rto_undo: false,
            dsack: false,
            recovery_undo: false,
            frto: false,
            sack_compression: false,
            pacing: false,
            slow_start_after_idle: true,
            radio_aware: RadioAwareParams::default(),
        }
    }
}

/// Linux's `scaling_ratio` for full-sized segments from a 1500-byte-MTU device, as a share:
/// 160/256. `tcp_measure_rcv_mss` (tcp_input.c) sets `scaling_ratio = len · 256 / truesize`
/// (floored): len = 1448 payload bytes (MSS with timestamps), truesize = 2304 for the skb of a
/// 1500-byte frame (`__alloc_skb` puts its data in a 2 KiB kmalloc bucket; `SKB_TRUESIZE` adds
/// the 256-byte aligned `sk_buff`) → ⌊1448 · 256 / 2304⌋ = 160. Seen in the emulation (kernel
/// 6.18, TUN device, `tcp_rmem` max 6 MiB): reno's flight levelled at 2716 segments = 6 MiB ·
/// 160/256 / 1448.
pub const LINUX_RCV_WIN_RATIO: f64 = 160.0 / 256.0;

impl TcpConfig {
    /// Receive buffer space for payload (Linux `tcp_win_from_space` of the buffer): what the
    /// advertised window may offer when nothing is held, bytes.
    #[inline]
    pub fn rcv_space(&self) -> u64 {
        if self.rcv_win_ratio >= 1.0 {
            self.rcv_buf_bytes
        } else {
            (self.rcv_buf_bytes as f64 * self.rcv_win_ratio) as u64
        }
    }

    /// The Linux 6.x stack: IW 10, 200 ms minimum RTO, delayed ACK (every 2nd segment, 40 ms)
    /// with quick-ACK for the first 16 segments and the ACK when the application reads
    /// ([`TcpConfig::ack_when_read`]), SACK + RACK-TLP + PRR, CUBIC's HyStart,
    /// Linux's ssthresh/cwnd rules ([`CwndRules::Linux`]), the undo of spurious timeouts and
    /// fast recoveries, D-SACK, F-RTO, SACK compression and a window of 5/8 of the receive buffer
    /// ([`LINUX_RCV_WIN_RATIO`]).
    pub fn linux() -> Self {
        TcpConfig {
            rcv_win_ratio: LINUX_RCV_WIN_RATIO,
            quickack_segments: 16,
            ack_when_read: true,
            rack_tlp: true,
            prr: true,
            hystart: Hystart::Classic,
            cwnd_rules: CwndRules::Linux,
            rto_undo: true,
            dsack: true,
            recovery_undo: true,
            frto: true,
            sack_compression: true,
            ..TcpConfig::default()
        }
    }

    /// The RFC stack: RFC 6298's 1 s minimum RTO, delayed ACK every 2nd segment with a 200 ms
    /// timer (RFC 1122 §4.2.3.2 allows 500 ms; BSD and ns-3 use 200 ms), no quick-ACK, SACK
    /// with RFC 6675 recovery (no RACK-TLP, no PRR), HyStart++ (RFC 9406) for CUBIC, RFC 5681 /
    /// RFC 3465 ssthresh/cwnd rules.
    pub fn rfc() -> Self {
        TcpConfig {
            min_rto: Duration::from_secs(1),
            delack_timeout: Duration::from_millis(200),
            ..TcpConfig::default()
        }
    }
}
