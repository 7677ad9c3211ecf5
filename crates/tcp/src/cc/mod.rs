//! Congestion control: one trait, one file per algorithm, dispatched through an enum on the
//! hot path (design.md §3 "Congestion control").
//!
//! Division of labour (as in Linux and ns-3's `TcpCongestionOps`): the TCP endpoint owns loss
//! detection, recovery (RFC 6675 / RFC 6582 / RFC 8985, PRR per RFC 6937), the RTT estimator,
//! per-packet delivery-rate sampling and the decisions *whether* an event is a new congestion
//! event (an RTO during fast recovery is not: RFC 5681 §3.1, Linux `tcp_enter_loss`) and whether
//! the sender is cwnd-limited (RFC 7661, Linux `tcp_is_cwnd_limited`); the controller owns cwnd,
//! ssthresh and the pacing rate and is told about ACKs, congestion events and timeouts.

use rantcp_core::{Duration, Time};

pub mod bbr;
pub mod cubic;
pub mod highspeed;
pub mod newreno;
pub mod none;
pub mod radio_aware;

/// A delivery-rate sample (draft-cheng-iccrg-delivery-rate-estimation §3.3), computed by the
/// endpoint for the most recently sent packet that this ACK newly delivered.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct RateSample {
    /// Bytes delivered over `interval`.
    pub delivered: u64,
    /// max(send interval, ACK interval) of the sample.
    pub interval: Duration,
    /// `C.delivered` when the sampled packet was sent (for round counting in BBR).
    pub prior_delivered: u64,
    /// The packet was sent while the sender was application-limited.
    pub is_app_limited: bool,
    /// RTT of the sampled packet.
    pub rtt: Duration,
}

impl RateSample {
    /// Delivery rate in bits per second, `None` for an empty or zero-length interval.
    pub fn rate_bps(&self) -> Option<f64> {
        if self.interval.0 == 0 || self.delivered == 0 {
            None
        } else {
            Some(self.delivered as f64 * 8.0 / self.interval.as_secs_f64())
        }
    }
}

/// What one ACK told the sender, handed to the controller.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct AckSample {
    pub now: Time,
    /// Bytes newly acknowledged (cumulatively or by SACK) by this ACK: DeliveredData.
    pub bytes_acked: u64,
    /// Of these, bytes acknowledged cumulatively (SND.UNA advanced by this much). Window-based
    /// controllers grow cwnd only on ACKs that advance SND.UNA (RFC 5681 §3.1 "each ACK
    /// received that cumulatively acknowledges new data"; Linux `tcp_may_raise_cwnd`
    /// FLAG_DATA_ACKED); a duplicate ACK carrying SACK information is not one.
    pub cum_acked: u64,
    /// RTT measured from this ACK, if any (Karn's rule applied).
    pub rtt: Option<Duration>,
    /// Smoothed RTT after this ACK (RFC 6298), `Duration::ZERO` before the first sample.
    pub srtt: Duration,
    /// Minimum RTT seen on the connection.
    pub min_rtt: Duration,
    /// Bytes in flight (RFC 6675 "pipe") after processing this ACK.
    pub bytes_in_flight: u64,
    /// Bytes in flight before this ACK was processed.
    pub prior_in_flight: u64,
    /// Bytes newly marked lost while processing this ACK.
    pub newly_lost: u64,
    /// The endpoint is in fast recovery.
    pub in_recovery: bool,
    /// The endpoint is recovering from a retransmission timeout: the data outstanding at the
    /// timeout has not all been acknowledged yet and the timeout was not undone (Linux
    /// `icsk_ca_state == TCP_CA_Loss` after `tcp_fastretrans_alert`, which `cong_control`
    /// modules such as BBR read).
    pub in_loss: bool,
    /// [`AckSample::in_loss`] as it was when this ACK arrived, before the ACK was processed
    /// (false if this ACK undid the timeout as spurious): the ACK belongs to the slow start that
    /// follows a timeout, the one that completes its recovery included. That last ACK is the
    /// one RFC 3465 §2.3 is about: a retransmission that fills the hole at SND.UNA is
    /// acknowledged together with everything the receiver held above it. FreeBSD reads its
    /// `snd_nxt != snd_max` in the same place, before the ACK moves `snd_nxt`.
    pub in_loss_before: bool,
    /// Total bytes delivered on the connection so far (`C.delivered`).
    pub delivered: u64,
    /// The delivery-rate sample, when one could be taken.
    pub rate: Option<RateSample>,
    /// Sender MSS in bytes.
    pub mss: u32,
    /// The sender was not limited by cwnd but by the application or the peer's window (RFC 7661
    /// "rate-limited"; Linux `!tcp_is_cwnd_limited`, which in slow start still allows growth up
    /// to twice the data in flight). Window-based controllers do not grow cwnd on such ACKs
    /// (RFC 9438 §5.8).
    pub rate_limited: bool,
    /// SND.UNA after this ACK, as a send-side byte position (0 = ISS).
    pub snd_una: u64,
    /// SND.NXT (the highest sequence sent + 1) when this ACK was processed, same positions.
    pub snd_nxt: u64,
}

/// A congestion controller's internal state for the time series (design.md §6).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct CcTrace {
    /// BBR mode: 0 STARTUP, 1 DRAIN, 2 PROBE_BW, 3 PROBE_RTT; `None` for others.
    pub bbr_mode: Option<u8>,
    /// BBR bottleneck-bandwidth estimate, bit/s.
    pub bbr_btl_bw_bps: Option<f64>,
    /// BBR min-RTT estimate.
    pub bbr_min_rtt: Option<Duration>,
    /// CUBIC W_max, bytes.
    pub cubic_w_max: Option<f64>,
    /// CUBIC K, seconds.
    pub cubic_k_s: Option<f64>,
    /// Radio-aware: the radio window is in charge (fresh feedback); `None` for others.
    pub radio_active: Option<bool>,
    /// Radio-aware: the newest report's rate R(t), bit/s, and queue Q(t), bytes.
    pub radio_rate_bps: Option<f64>,
    pub radio_queue_bytes: Option<u64>,
}

/// What ended a connection's first slow start (see [`crate::SlowStartExit`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SlowStartCause {
    /// Linux HyStart's ACK-train detector (tcp_cubic.c `hystart_update`, HYSTART_ACK_TRAIN;
    /// the kernel counts it in `TcpExtTCPHystartTrainDetect` / `TCPHystartTrainCwnd`).
    HystartTrain,
    /// Linux HyStart's delay-increase detector (HYSTART_DELAY; `TcpExtTCPHystartDelayDetect` /
    /// `TCPHystartDelayCwnd`).
    HystartDelay,
    /// HyStart++ left Conservative Slow Start (RFC 9406 §4.2).
    HystartPlusPlus,
    /// BBR's STARTUP found the pipe full and moved to DRAIN (Linux `bbr_check_drain`).
    FullBandwidth,
    /// A loss (fast recovery, or a tail-loss probe that repaired one) set ssthresh.
    Loss,
    /// A retransmission timeout set ssthresh.
    Timeout,
    /// The controller set ssthresh for a reason it does not name.
    Threshold,
}

impl SlowStartCause {
    pub fn name(self) -> &'static str {
        match self {
            SlowStartCause::HystartTrain => "hystart-train",
            SlowStartCause::HystartDelay => "hystart-delay",
            SlowStartCause::HystartPlusPlus => "hystart++",
            SlowStartCause::FullBandwidth => "bbr-full-bw",
            SlowStartCause::Loss => "loss",
            SlowStartCause::Timeout => "rto",
            SlowStartCause::Threshold => "ssthresh",
        }
    }
}

/// Information about the path from outside TCP, handed to the controller by
/// [`crate::Endpoint::handle_feedback`] rather than inferred from ACKs: RAN-side information such
/// as seed 002's achievable data rate R(t) (predicted from CQI and cell load) and layer-2 queue
/// Q(t), from which a radio-aware controller sets its window (cwnd = R(t)·RTT + (Q_th − Q(t))).
/// A source fills in what it knows.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Feedback {
    /// When it was measured.
    pub sampled_at: Time,
    /// Achievable data rate R(t), bit/s.
    pub rate_bps: Option<f64>,
    /// Layer-2 queue Q(t), bytes.
    pub queue_bytes: Option<u64>,
}

/// The congestion-control contract. All sizes in bytes.
pub trait CongestionControl {
    /// Congestion window, bytes.
    fn cwnd(&self) -> u64;
    /// Slow-start threshold, bytes (`u64::MAX` before the first congestion event).
    fn ssthresh(&self) -> u64;
    /// Pacing rate in bits per second, or `None` to send as fast as cwnd allows.
    fn pacing_rate_bps(&self) -> Option<f64> {
        None
    }
    /// A data packet of `bytes` left the sender with `bytes_in_flight` now outstanding.
    fn on_packet_sent(
        &mut self,
        _now: Time,
        _bytes: u64,
        _bytes_in_flight: u64,
        _app_limited: bool,
    ) {
    }
    /// Every ACK that acknowledged new data or carried new SACK information.
    fn on_ack(&mut self, ack: &AckSample);
    /// Loss detected by duplicate ACKs / SACK / RACK: entering fast recovery (RFC 5681 §3.2
    /// step 2, RFC 6675 §5 step 4.2). Sets ssthresh and cwnd for the recovery episode.
    /// `basis` is what the reduction is computed from: FlightSize (RFC 5681 eq. 4) or cwnd
    /// (Linux `ca_ops->ssthresh`), as the endpoint's [`crate::CwndRules`] say; controllers whose
    /// rule is defined on cwnd (CUBIC §4.6, HighSpeed §4) may use their own cwnd.
    fn on_congestion_event(&mut self, now: Time, basis: u64, mss: u32);
    /// Fast recovery ended (the recovery point was acknowledged).
    fn on_recovery_exit(&mut self, _now: Time, _mss: u32) {}
    /// Retransmission timeout: cwnd = 1 loss window (RFC 5681 §3.1). ssthresh is reduced from
    /// `basis` (as in [`CongestionControl::on_congestion_event`]) only when `reduce_ssthresh`:
    /// the endpoint says no for an RTO during fast recovery (Linux `tcp_enter_loss` keeps the
    /// episode's ssthresh; RFC 5681 eq. 4 with the FlightSize then is no lower) and for a repeated
    /// timeout of one episode (RFC 5681 §3.1: ssthresh is held constant).
    fn on_rto(&mut self, now: Time, basis: u64, mss: u32, reduce_ssthresh: bool);
    /// The last retransmission timeout was spurious and is undone (Linux `tcp_try_undo_loss` →
    /// `tcp_undo_cwnd_reduction`): the endpoint hands back the window from before the timeout,
    /// `cwnd` = max(cwnd now, cwnd before) and `ssthresh` = max(ssthresh now, ssthresh before)
    /// (`ca_ops->undo_cwnd`, `tcp_reno_undo_cwnd`; `prior_ssthresh`). A window-based controller
    /// takes them; one that keeps its own model (BBR) resets what its `undo_cwnd` resets.
    fn on_undo(&mut self, _now: Time, _cwnd: u64, _ssthresh: u64) {}
    /// The controller sets cwnd itself during recovery (Linux `cong_control`, BBR's packet
    /// conservation), so the endpoint does not apply PRR (RFC 6937) on top.
    fn controls_recovery_window(&self) -> bool {
        false
    }
    /// The sender restarts after an idle period (RFC 5681 §4.1): the endpoint has computed the
    /// restart `cwnd` and `ssthresh` under its [`crate::CwndRules`]. A window-based controller
    /// takes them and returns true; one that sets its window from its own model declines and
    /// returns false (Linux skips the restart for controllers with `cong_control`, e.g. BBR).
    fn on_idle_restart(&mut self, _now: Time, _cwnd: u64, _ssthresh: u64) -> bool {
        false
    }
    /// An external signal about the path ([`Feedback`]); ignored unless the controller uses
    /// it.
    fn on_feedback(&mut self, _now: Time, _fb: &Feedback) {}
    /// Why the controller set ssthresh on an ACK (asked by the endpoint on the ACK that ends the
    /// first slow start without a loss): HyStart's detector, BBR's full pipe…
    fn slow_start_cause(&self) -> SlowStartCause {
        SlowStartCause::Threshold
    }
    /// Internal state for the time series.
    fn trace(&self) -> CcTrace {
        CcTrace::default()
    }
}

/// Which algorithm, as named in configs (`flow.cc`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CcKind {
    NewReno,
    Cubic,
    HighSpeed,
    Bbr,
    /// Seed 002's loose-coupled radio-aware controller ([`radio_aware`]); its settings come
    /// from [`crate::TcpConfig::radio_aware`].
    RadioAware,
    /// No congestion control ([`none`]): seed 002's close-coupled sender, whose rate the MAC
    /// grants set.
    None,
}

impl CcKind {
    /// The self-contained controllers (radio-aware needs RAN feedback and `none` needs a MAC
    /// scheduler to pace it; they are not among them).
    pub const ALL: [CcKind; 4] = [
        CcKind::NewReno,
        CcKind::Cubic,
        CcKind::HighSpeed,
        CcKind::Bbr,
    ];
    pub fn name(self) -> &'static str {
        match self {
            CcKind::NewReno => "newreno",
            CcKind::Cubic => "cubic",
            CcKind::HighSpeed => "highspeed",
            CcKind::Bbr => "bbr",
            CcKind::RadioAware => "radio-aware",
            CcKind::None => "none",
        }
    }
    pub fn from_name(s: &str) -> Option<CcKind> {
        CcKind::ALL
            .into_iter()
            .chain([CcKind::RadioAware, CcKind::None])
            .find(|k| k.name() == s)
    }
}

/// CUBIC's slow-start variant (`flow.hystart`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Hystart {
    /// Linux's HyStart (tcp_cubic.c, Ha & Rhee 2008): ACK-train and delay-increase detection,
    /// slow start ends at once (ssthresh = cwnd). The Linux default.
    Classic,
    /// HyStart++ (RFC 9406): delay increase over rounds, then Conservative Slow Start.
    PlusPlus,
    /// Standard slow start (RFC 5681) until the first loss.
    Off,
}

impl Hystart {
    pub const ALL: [Hystart; 3] = [Hystart::Classic, Hystart::PlusPlus, Hystart::Off];
    pub fn name(self) -> &'static str {
        match self {
            Hystart::Classic => "classic",
            Hystart::PlusPlus => "hystart++",
            Hystart::Off => "off",
        }
    }
}

/// Parameters every controller is built from.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CcParams {
    pub kind: CcKind,
    pub mss: u32,
    /// Initial window in segments (RFC 6928: 10).
    pub initial_cwnd_segments: u32,
    /// CUBIC's slow start.
    pub hystart: Hystart,
    /// Slow start grows cwnd by at most this many segments per ACK (RFC 3465 §2.2 L = 2), one
    /// in the slow start after a timeout (RFC 3465 §2.3, see [`CcParams::slow_start_increase`]);
    /// `None`: by everything the ACK newly acknowledged (Linux `tcp_slow_start`).
    pub abc_limit_segments: Option<u32>,
    /// Seed of the controller's own random stream (BBR's PROBE_BW start phase). Derive it from
    /// (run seed, flow id) so flows differ; [`CcParams::DEFAULT_SEED`] when there is no better.
    pub seed: u64,
}

impl CcParams {
    /// The fixed seed used by [`CcParams::default`].
    pub const DEFAULT_SEED: u64 = 0x7263_7463_705f_6363; // "rctcp_cc"

    /// Slow-start increase for this ACK: min(N, L·SMSS) of the N bytes it newly acknowledged
    /// (RFC 3465 §2.2), or all of them (Linux `tcp_slow_start`, which has no such rule).
    ///
    /// RFC 3465 §2.3: L = 1 SMSS while slow starting after a retransmission timeout, whatever
    /// L is otherwise. After a timeout the receiver may hold much data above the lost segment,
    /// so the ACK of the retransmission that fills the hole covers all of it; counted with
    /// L = 2 every such ACK would add a segment more to the burst it releases. FreeBSD
    /// cc_newreno.c `newreno_cc_cwnd_in_slow_start` (and cc_cubic.c): "Must not use
    /// abc_l_var > 1 if slow starting after an RTO". The slow start after a timeout lasts, as
    /// the radio-aware controller's loss window does, until everything outstanding at the
    /// timeout is acknowledged ([`AckSample::in_loss`]), and covers the ACK that gets there
    /// ([`AckSample::in_loss_before`]).
    #[inline]
    pub fn slow_start_increase(&self, ack: &AckSample) -> u64 {
        match self.abc_limit_segments {
            // RFC 3465 §2.3
            Some(_) if ack.in_loss_before => ack.bytes_acked.min(self.mss as u64),
            Some(l) => ack.bytes_acked.min(l as u64 * self.mss as u64),
            None => ack.bytes_acked,
        }
    }
}

impl Default for CcParams {
    fn default() -> Self {
        CcParams {
            kind: CcKind::NewReno,
            mss: 1448,
            initial_cwnd_segments: 10,
            hystart: Hystart::Classic,
            abc_limit_segments: Some(2),
            seed: CcParams::DEFAULT_SEED,
        }
    }
}

/// Enum dispatch over the algorithms.
#[derive(Clone, Debug)]
pub enum Cc {
    NewReno(newreno::NewReno),
    Cubic(cubic::Cubic),
    HighSpeed(highspeed::HighSpeed),
    Bbr(bbr::Bbr),
    RadioAware(Box<radio_aware::RadioAware>),
    None(none::NoCc),
}

impl Cc {
    /// The controller `p.kind`; a radio-aware one with default settings
    /// ([`Cc::radio_aware`] sets them).
    pub fn new(p: &CcParams) -> Cc {
        match p.kind {
            CcKind::NewReno => Cc::NewReno(newreno::NewReno::new(p)),
            CcKind::Cubic => Cc::Cubic(cubic::Cubic::new(p)),
            CcKind::HighSpeed => Cc::HighSpeed(highspeed::HighSpeed::new(p)),
            CcKind::Bbr => Cc::Bbr(bbr::Bbr::new(p)),
            CcKind::RadioAware => Cc::radio_aware(p, radio_aware::RadioAwareParams::default()),
            CcKind::None => Cc::None(none::NoCc),
        }
    }
    /// A radio-aware controller (seed 002) with settings `ra`.
    pub fn radio_aware(p: &CcParams, ra: radio_aware::RadioAwareParams) -> Cc {
        Cc::RadioAware(Box::new(radio_aware::RadioAware::new(p, ra)))
    }
}

macro_rules! dispatch {
    ($self:ident, $c:ident => $e:expr) => {
        match $self {
            Cc::NewReno($c) => $e,
            Cc::Cubic($c) => $e,
            Cc::HighSpeed($c) => $e,
            Cc::Bbr($c) => $e,
            Cc::RadioAware($c) => $e,
            Cc::None($c) => $e,
        }
    };
}

impl CongestionControl for Cc {
    #[inline]
    fn cwnd(&self) -> u64 {
        dispatch!(self, c => c.cwnd())
    }
    #[inline]
    fn ssthresh(&self) -> u64 {
        dispatch!(self, c => c.ssthresh())
    }
    #[inline]
    fn pacing_rate_bps(&self) -> Option<f64> {
        dispatch!(self, c => c.pacing_rate_bps())
    }
    #[inline]
    fn on_packet_sent(&mut self, now: Time, bytes: u64, in_flight: u64, app_limited: bool) {
        dispatch!(self, c => c.on_packet_sent(now, bytes, in_flight, app_limited))
    }
    #[inline]
    fn on_ack(&mut self, ack: &AckSample) {
        dispatch!(self, c => c.on_ack(ack))
    }
    #[inline]
    fn on_congestion_event(&mut self, now: Time, basis: u64, mss: u32) {
        dispatch!(self, c => c.on_congestion_event(now, basis, mss))
    }
    #[inline]
    fn on_recovery_exit(&mut self, now: Time, mss: u32) {
        dispatch!(self, c => c.on_recovery_exit(now, mss))
    }
    #[inline]
    fn on_rto(&mut self, now: Time, basis: u64, mss: u32, reduce_ssthresh: bool) {
        dispatch!(self, c => c.on_rto(now, basis, mss, reduce_ssthresh))
    }
    #[inline]
    fn on_undo(&mut self, now: Time, cwnd: u64, ssthresh: u64) {
        dispatch!(self, c => c.on_undo(now, cwnd, ssthresh))
    }
    #[inline]
    fn controls_recovery_window(&self) -> bool {
        dispatch!(self, c => c.controls_recovery_window())
    }
    #[inline]
    fn on_idle_restart(&mut self, now: Time, cwnd: u64, ssthresh: u64) -> bool {
        dispatch!(self, c => c.on_idle_restart(now, cwnd, ssthresh))
    }
    #[inline]
    fn on_feedback(&mut self, now: Time, fb: &Feedback) {
        dispatch!(self, c => c.on_feedback(now, fb))
    }
    #[inline]
    fn slow_start_cause(&self) -> SlowStartCause {
        dispatch!(self, c => c.slow_start_cause())
    }
    #[inline]
    fn trace(&self) -> CcTrace {
        dispatch!(self, c => c.trace())
    }
}
