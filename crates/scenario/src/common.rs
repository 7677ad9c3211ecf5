//! Config sections shared by scenarios: a TCP flow (`[flow]`) and outputs (`[output]`).

use crate::config::reads::{concat, FieldUse, Unreads};
use crate::config::{check, ConfigError};
use crate::units::{Bytes, Dur, Rate};
use rantcp_core::Duration;
use rantcp_net::{AppWrite, Arrivals, Bursts, FlowKind};
use rantcp_tcp::cc::radio_aware::{RadioAwareParams, RttPredictor, Variant};
use rantcp_tcp::cc::{CcKind, Hystart};
use rantcp_tcp::{CwndRules, TcpConfig};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Congestion control algorithm.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum CcName {
    /// NewReno (RFC 5681, RFC 6582).
    Newreno,
    /// CUBIC (RFC 9438).
    Cubic,
    /// HighSpeed TCP (RFC 3649).
    Highspeed,
    /// BBR v1 (Linux tcp_bbr.c).
    Bbr,
    /// Seed 002's loose-coupled radio-aware TCP: the window from RAN feedback (needs
    /// `functions.radio_feedback`; settings in `flow.radio_aware`).
    #[serde(rename = "radio-aware")]
    RadioAware,
}

impl CcName {
    pub fn kind(self) -> CcKind {
        match self {
            CcName::Newreno => CcKind::NewReno,
            CcName::Cubic => CcKind::Cubic,
            CcName::Highspeed => CcKind::HighSpeed,
            CcName::Bbr => CcKind::Bbr,
            CcName::RadioAware => CcKind::RadioAware,
        }
    }
}

/// A config enum's name as files write it (`"udp-cbr"`), for messages.
pub fn name_of<T: Serialize>(v: T) -> String {
    match serde_json::to_value(v) {
        Ok(serde_json::Value::String(s)) => s,
        Ok(v) => v.to_string(),
        Err(_) => String::new(),
    }
}

/// `flow.radio_aware.variant`: the terms of seed 002's window formula.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
pub enum RadioAwareVariant {
    /// cwnd = R(t)·RTT.
    #[serde(rename = "rate")]
    Rate,
    /// cwnd = R(t)·RTT + (Q_th − Q(t)).
    #[serde(rename = "rate+queue")]
    RateQueue,
}

/// `flow.radio_aware.rtt`: the RTT predictor.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum RttPredictorName {
    /// The connection's minimum RTT.
    Min,
    /// The RFC 6298 smoothed RTT.
    Srtt,
}

fn d_ra_variant() -> RadioAwareVariant {
    RadioAwareVariant::RateQueue
}
fn d_q_th() -> Bytes {
    Bytes(20_000)
}
fn d_rtt_pred() -> RttPredictorName {
    RttPredictorName::Min
}
fn d_stale() -> Dur {
    Dur::ms(100)
}

/// `[flow.radio_aware]`: the radio-aware controller's settings (used when `cc =
/// "radio-aware"`).
#[derive(Clone, Copy, Debug, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RadioAwareFlowConfig {
    /// "rate+queue" (cwnd = R·RTT + Q_th − Q) or "rate" (cwnd = R·RTT).
    #[serde(default = "d_ra_variant")]
    pub variant: RadioAwareVariant,
    /// Layer-2 queue target Q_th.
    #[serde(default = "d_q_th")]
    pub q_th: Bytes,
    /// RTT predictor: "min" (the connection's minimum RTT) or "srtt" (RFC 6298 SRTT).
    #[serde(default = "d_rtt_pred")]
    pub rtt: RttPredictorName,
    /// Feedback sampled longer ago than this is stale: the loss-based `fallback` runs.
    #[serde(default = "d_stale")]
    pub stale_after: Dur,
    /// The loss-based controller without fresh feedback (default: the stack's, linux: cubic,
    /// rfc: newreno).
    #[serde(default)]
    pub fallback: Option<CcName>,
}

impl Default for RadioAwareFlowConfig {
    fn default() -> Self {
        RadioAwareFlowConfig {
            variant: d_ra_variant(),
            q_th: d_q_th(),
            rtt: d_rtt_pred(),
            stale_after: d_stale(),
            fallback: None,
        }
    }
}

/// The application a flow runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum AppKind {
    /// Bulk TCP send, unlimited (full buffer) or `bytes` long.
    Bulk,
    /// File download: a `request`-byte request, then `bytes` back over the same connection.
    Download,
    /// UDP constant bit rate at `udp_rate` (the "UDP saturation" reference).
    UdpCbr,
    /// 3GPP FTP traffic model 1 (TR 36.814 Annex A.2.1.3.1): files of `burst_size` bytes
    /// arriving as a Poisson process of `burst_rate` per second, sent over one TCP
    /// connection; per-burst latency is measured.
    Ftp1,
    /// Bursts of `burst_size` bytes every `burst_interval` (seed 002's "long flows"), or
    /// `burst_count = 1` for a single burst (its "short flow"); per-burst latency is measured.
    Bursts,
    /// The dissertation's adaptive-video client (ch. 4): HTTP GETs of `request` bytes, some
    /// over new connections; settings in `flow.video`.
    Video,
}

/// A coherent set of TCP defaults for both endpoints of a flow (`flow.stack`). Every field it
/// sets can still be set on its own; the effective values are what the config echo shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum StackName {
    /// Linux 6.x: CUBIC with Linux's HyStart, IW 10, 200 ms minimum RTO, delayed ACK every
    /// 2nd segment with a 40 ms timer and quick-ACK for the first 16 segments, SACK + RACK-TLP
    /// (RFC 8985) + PRR (RFC 6937), Linux's ssthresh/cwnd rules.
    Linux,
    /// The RFCs: NewReno (RFC 5681/6582), IW 10 (RFC 6928), RFC 6298's 1 s minimum RTO, delayed
    /// ACK every 2nd segment with a 200 ms timer, SACK with RFC 6675 recovery (no RACK-TLP, no
    /// PRR), HyStart++ (RFC 9406) for CUBIC, RFC 5681/3465 ssthresh/cwnd rules.
    Rfc,
}

impl StackName {
    /// The profile's TCP settings (the tcp crate's presets).
    fn tcp(self) -> TcpConfig {
        match self {
            StackName::Linux => TcpConfig::linux(),
            StackName::Rfc => TcpConfig::rfc(),
        }
    }
    /// The profile's congestion control: Linux's default is CUBIC; RFC 5681's is NewReno.
    fn cc(self) -> CcName {
        match self {
            StackName::Linux => CcName::Cubic,
            StackName::Rfc => CcName::Newreno,
        }
    }
}

/// CUBIC's slow-start exit (`flow.hystart`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
pub enum HystartName {
    /// HyStart++ (RFC 9406).
    #[serde(rename = "hystart++")]
    PlusPlus,
    /// Linux's HyStart (tcp_cubic.c): ACK train + delay.
    #[serde(rename = "classic")]
    Classic,
    /// Standard slow start until the first loss.
    #[serde(rename = "off")]
    Off,
}

impl HystartName {
    fn kind(self) -> Hystart {
        match self {
            HystartName::PlusPlus => Hystart::PlusPlus,
            HystartName::Classic => Hystart::Classic,
            HystartName::Off => Hystart::Off,
        }
    }
    fn from_kind(h: Hystart) -> Self {
        match h {
            Hystart::PlusPlus => HystartName::PlusPlus,
            Hystart::Classic => HystartName::Classic,
            Hystart::Off => HystartName::Off,
        }
    }
}

/// Where Linux and the RFCs differ on ssthresh, cwnd and the RTO (`flow.cwnd_rules`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum CwndRulesName {
    /// ssthresh from cwnd, slow start by all that is acknowledged, RTO = SRTT + Linux's
    /// variation term (at least min_rto, decaying by a quarter per round trip); without SACK,
    /// duplicate ACKs counted as SACKed segments and PRR in fast recovery (Linux 6.x).
    Linux,
    /// ssthresh from FlightSize (RFC 5681 eq. 4), slow start by at most 2 SMSS per ACK
    /// (RFC 3465), RTO = max(SRTT + 4·RTTVAR, min_rto) (RFC 6298); without SACK, cwnd
    /// inflation in fast recovery (RFC 6582).
    Rfc,
}

impl CwndRulesName {
    fn kind(self) -> CwndRules {
        match self {
            CwndRulesName::Linux => CwndRules::Linux,
            CwndRulesName::Rfc => CwndRules::Rfc,
        }
    }
    fn from_kind(r: CwndRules) -> Self {
        match r {
            CwndRules::Linux => CwndRulesName::Linux,
            CwndRules::Rfc => CwndRulesName::Rfc,
        }
    }
}

fn d_true() -> bool {
    true
}
fn d_one() -> u32 {
    1
}
fn d_two() -> u32 {
    2
}
fn d_mss() -> u32 {
    1448
}
fn d_stack() -> StackName {
    StackName::Linux
}
fn d_app() -> AppKind {
    AppKind::Bulk
}
fn d_request() -> Bytes {
    Bytes(100)
}
fn d_udp_packet() -> Bytes {
    Bytes(1500)
}
fn d_initial_rto() -> Dur {
    Dur::ms(1000)
}
fn d_buf() -> Bytes {
    Bytes(6 << 20)
}
fn d_iw() -> u32 {
    10
}
fn d_zero() -> Dur {
    Dur::ms(0)
}
fn d_burst_size() -> Bytes {
    Bytes(500_000)
}
fn d_burst_rate() -> f64 {
    1.0
}
fn d_burst_interval() -> Dur {
    Dur::ms(1000)
}

/// The `[flow]` table as written: the fields `flow.stack` decides are optional. Deserialised
/// into [`FlowConfig`], which holds the effective values.
#[derive(Clone, Debug, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "FlowConfig")]
pub struct FlowConfigInput {
    /// Application: "bulk" (full buffer or `bytes`), "download", "udp-cbr", "ftp1" (3GPP FTP
    /// model 1), "bursts" (periodic or single bursts) or "video" (adaptive video, `flow.video`).
    #[serde(default = "d_app")]
    pub app: AppKind,
    /// Number of parallel flows with these settings.
    #[serde(default = "d_one")]
    #[schemars(range(min = 1, max = 1000))]
    pub count: u32,
    /// When the flows start.
    #[serde(default = "d_zero")]
    pub start: Dur,
    /// Bytes to send (bulk) or download; absent means unlimited for bulk. Required size for a
    /// download (default 10MB).
    #[serde(default)]
    pub bytes: Option<Bytes>,
    /// Download request size.
    #[serde(default = "d_request")]
    pub request: Bytes,
    /// Bulk: the sending application's write rate. Absent, the application keeps the send
    /// buffer full (iperf-like). Set, it writes `app_write` bytes every `app_write / app_rate`
    /// and loses a write that does not fit the send buffer, as the ns-3 tutorial `MyApp` the
    /// seeds' scenario code uses (seed 004: 1400-byte writes at 1 Gbit/s): the offered load is
    /// then at most `app_rate`, whatever the rate of the server's link.
    #[serde(default)]
    pub app_rate: Option<Rate>,
    /// Bytes per paced write (default: the MSS).
    #[serde(default)]
    pub app_write: Option<Bytes>,
    /// Bursty apps ("ftp1", "bursts"): bytes per burst (TR 36.814 FTP model 1: 0.5 MB).
    #[serde(default = "d_burst_size")]
    pub burst_size: Bytes,
    /// "ftp1": mean burst arrivals per second (λ of TR 36.814 FTP model 1).
    #[serde(default = "d_burst_rate")]
    pub burst_rate: f64,
    /// "bursts": time between burst arrivals.
    #[serde(default = "d_burst_interval")]
    pub burst_interval: Dur,
    /// Bursty apps: stop after this many bursts (absent: until the end of the run).
    #[serde(default)]
    pub burst_count: Option<u64>,
    /// UDP CBR rate of IP packets (default: the bottleneck rate).
    #[serde(default)]
    pub udp_rate: Option<Rate>,
    /// UDP packet size (IP length).
    #[serde(default = "d_udp_packet")]
    pub udp_packet: Bytes,
    /// TCP stack profile: "linux" (default) or "rfc"; sets the defaults of cc, delack_timeout,
    /// min_rto, quickack, ack_when_read, rack_tlp, prr, rto_undo, rcv_win_ratio, hystart and
    /// cwnd_rules.
    #[serde(default = "d_stack")]
    pub stack: StackName,
    /// Congestion control: "newreno", "cubic", "highspeed", "bbr" or "radio-aware" (seed 002;
    /// needs `functions.radio_feedback`) (linux: cubic, rfc: newreno).
    #[serde(default)]
    pub cc: Option<CcName>,
    /// Maximum segment size, payload bytes.
    #[serde(default = "d_mss")]
    #[schemars(range(min = 64, max = 65495))]
    pub mss: u32,
    /// Delayed ACKs at the receiver (every `ack_every` full segments or at `delack_timeout`);
    /// false: every segment is ACKed at once.
    #[serde(default = "d_true")]
    pub delayed_ack: bool,
    /// With delayed ACKs, ACK every this many full segments: 2 (RFC 5681), 1 (every segment),
    /// more for stretch ACKs (as some phone OSes send).
    #[serde(default = "d_two")]
    pub ack_every: u32,
    /// Quick-ACK at connection start: the first 16 segments (fewer with a small receive buffer)
    /// are each ACKed at once, as Linux does (linux: true, rfc: false).
    #[serde(default)]
    pub quickack: Option<bool>,
    /// With delayed ACKs, the every-`ack_every`th-segment ACK leaves when the application reads,
    /// after every segment that arrived at the same instant (a radio transport block's burst
    /// gets one ACK), as Linux's receiver does (`__tcp_ack_snd_check`, `tcp_cleanup_rbuf`);
    /// false: at once, as RFC 5681 §4.2 reads (linux: true, rfc: false).
    #[serde(default)]
    pub ack_when_read: Option<bool>,
    /// Maximum ACK delay (linux: 40ms; rfc: 200ms, the BSD/ns-3 value, also seed 003's
    /// dissertation's).
    #[serde(default)]
    pub delack_timeout: Option<Dur>,
    /// Minimum RTO (linux: 200ms; rfc: 1s, RFC 6298 §2.4).
    #[serde(default)]
    pub min_rto: Option<Dur>,
    /// RTO before the first RTT sample (RFC 6298 §2.1: 1 s).
    #[serde(default = "d_initial_rto")]
    pub initial_rto: Dur,
    /// SACK (RFC 2018) with RFC 6675 recovery; off means NewReno recovery (RFC 6582): with
    /// cwnd inflation under the rfc `cwnd_rules`, with Linux's counting of duplicate ACKs as
    /// SACKed segments and PRR under the linux ones.
    #[serde(default = "d_true")]
    pub sack: bool,
    /// RACK-TLP loss detection (RFC 8985) with SACK (linux: true, rfc: false).
    #[serde(default)]
    pub rack_tlp: Option<bool>,
    /// Proportional Rate Reduction in fast recovery (RFC 6937), with SACK or, under the linux
    /// `cwnd_rules`, without (linux: true, rfc: false).
    #[serde(default)]
    pub prr: Option<bool>,
    /// Undo a retransmission timeout whose ACKs echo timestamps from before its retransmission
    /// (Linux tcp_try_undo_loss, RFC 3522 §3.2; needs timestamps) (linux: true, rfc: false).
    #[serde(default)]
    pub rto_undo: Option<bool>,
    /// TCP timestamps (RFC 7323).
    #[serde(default = "d_true")]
    pub timestamps: bool,
    /// Window scaling (RFC 7323).
    #[serde(default = "d_true")]
    pub window_scaling: bool,
    /// Receive buffer (bounds the advertised window).
    #[serde(default = "d_buf")]
    pub rcv_buf: Bytes,
    /// The share of `rcv_buf` the advertised window may offer: Linux charges the buffer with
    /// each segment's skb truesize, so it offers `tcp_win_from_space` = rcv_buf × payload /
    /// truesize (160/256 for 1448-byte segments from a 1500-byte-MTU device) (linux: 0.625,
    /// rfc: 1).
    #[serde(default)]
    pub rcv_win_ratio: Option<f64>,
    /// Send buffer.
    #[serde(default = "d_buf")]
    pub snd_buf: Bytes,
    /// Initial congestion window, segments (RFC 6928: 10).
    #[serde(default = "d_iw")]
    #[schemars(range(min = 1, max = 1000))]
    pub initial_cwnd: u32,
    /// Pace every controller's transmissions (BBR always paces).
    #[serde(default)]
    pub pacing: bool,
    /// Restart the window after an idle period longer than the RTO (RFC 5681 §4.1; Linux
    /// `net.ipv4.tcp_slow_start_after_idle`, on by default); how, by `cwnd_rules`.
    #[serde(default = "d_true")]
    pub slow_start_after_idle: bool,
    /// CUBIC's slow-start exit: "classic" (Linux's HyStart), "hystart++" (RFC 9406) or "off"
    /// (linux: classic, rfc: hystart++).
    #[serde(default)]
    pub hystart: Option<HystartName>,
    /// ssthresh, cwnd and RTO rules where Linux and the RFCs differ: "linux" or "rfc" (as the
    /// stack).
    #[serde(default)]
    pub cwnd_rules: Option<CwndRulesName>,
    /// Settings of `cc = "radio-aware"` (seed 002).
    #[serde(default)]
    pub radio_aware: RadioAwareFlowConfig,
    /// Settings of `app = "video"` (dissertation ch. 4).
    #[serde(default)]
    pub video: crate::video::VideoFlowConfig,
}

/// A TCP (or UDP) flow and its endpoints' TCP settings, with every value `flow.stack` left
/// open resolved (the config echo in summary.json shows these). Field meanings as in
/// [`FlowConfigInput`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(from = "FlowConfigInput")]
pub struct FlowConfig {
    pub app: AppKind,
    pub count: u32,
    pub start: Dur,
    pub bytes: Option<Bytes>,
    pub request: Bytes,
    pub app_rate: Option<Rate>,
    pub app_write: Option<Bytes>,
    pub burst_size: Bytes,
    pub burst_rate: f64,
    pub burst_interval: Dur,
    pub burst_count: Option<u64>,
    pub udp_rate: Option<Rate>,
    pub udp_packet: Bytes,
    pub stack: StackName,
    pub cc: CcName,
    pub mss: u32,
    pub delayed_ack: bool,
    pub ack_every: u32,
    pub quickack: bool,
    pub ack_when_read: bool,
    pub delack_timeout: Dur,
    pub min_rto: Dur,
    pub initial_rto: Dur,
    pub sack: bool,
    pub rack_tlp: bool,
    pub prr: bool,
    pub rto_undo: bool,
    pub timestamps: bool,
    pub window_scaling: bool,
    pub rcv_buf: Bytes,
    pub rcv_win_ratio: f64,
    pub snd_buf: Bytes,
    pub initial_cwnd: u32,
    pub pacing: bool,
    pub slow_start_after_idle: bool,
    pub hystart: HystartName,
    pub cwnd_rules: CwndRulesName,
    pub radio_aware: RadioAwareFlowConfig,
    pub video: crate::video::VideoFlowConfig,
}

impl From<FlowConfigInput> for FlowConfig {
    /// Resolve the fields left to the stack profile.
    fn from(i: FlowConfigInput) -> Self {
        let p = i.stack.tcp();
        FlowConfig {
            app: i.app,
            count: i.count,
            start: i.start,
            bytes: i.bytes,
            request: i.request,
            app_rate: i.app_rate,
            app_write: i.app_write,
            burst_size: i.burst_size,
            burst_rate: i.burst_rate,
            burst_interval: i.burst_interval,
            burst_count: i.burst_count,
            udp_rate: i.udp_rate,
            udp_packet: i.udp_packet,
            stack: i.stack,
            cc: i.cc.unwrap_or(i.stack.cc()),
            mss: i.mss,
            delayed_ack: i.delayed_ack,
            ack_every: i.ack_every,
            quickack: i.quickack.unwrap_or(p.quickack_segments > 0),
            ack_when_read: i.ack_when_read.unwrap_or(p.ack_when_read),
            delack_timeout: i.delack_timeout.unwrap_or(Dur(p.delack_timeout)),
            min_rto: i.min_rto.unwrap_or(Dur(p.min_rto)),
            initial_rto: i.initial_rto,
            sack: i.sack,
            rack_tlp: i.rack_tlp.unwrap_or(p.rack_tlp),
            prr: i.prr.unwrap_or(p.prr),
            rto_undo: i.rto_undo.unwrap_or(p.rto_undo),
            timestamps: i.timestamps,
            window_scaling: i.window_scaling,
            rcv_buf: i.rcv_buf,
            rcv_win_ratio: i.rcv_win_ratio.unwrap_or(p.rcv_win_ratio),
            snd_buf: i.snd_buf,
            initial_cwnd: i.initial_cwnd,
            pacing: i.pacing,
            slow_start_after_idle: i.slow_start_after_idle,
            hystart: i.hystart.unwrap_or(HystartName::from_kind(p.hystart)),
            cwnd_rules: i
                .cwnd_rules
                .unwrap_or(CwndRulesName::from_kind(p.cwnd_rules)),
            radio_aware: RadioAwareFlowConfig {
                fallback: Some(i.radio_aware.fallback.unwrap_or(i.stack.cc())),
                ..i.radio_aware
            },
            video: i.video,
        }
    }
}

impl Default for FlowConfig {
    fn default() -> Self {
        crate::config::from_table(toml::Table::new()).expect("defaults deserialize")
    }
}

/// `app`, `count` and `start` are read by every flow; the rest depends on the app, the
/// controller and the TCP options ([`FlowConfig::unread`]).
impl FieldUse for FlowConfig {
    const ALWAYS: &'static [&'static str] = &["app", "count", "start"];
    const CONDITIONAL: &'static [&'static str] =
        &concat::<{ Self::APP.len() + Self::TCP.len() }>(&[Self::APP, Self::TCP]);
}

/// Linux `TCP_MAX_QUICKACKS`.
const QUICKACK_SEGMENTS: u32 = 16;

impl FlowConfig {
    pub fn validate(&self, p: &str) -> Result<(), ConfigError> {
        check(
            self.count >= 1 && self.count <= 1000,
            &format!("{p}.count"),
            "must be between 1 and 1000",
        )?;
        check(
            (64..=65495).contains(&self.mss),
            &format!("{p}.mss"),
            "must be between 64 and 65495 bytes",
        )?;
        check(
            self.rcv_buf.0 >= self.mss as u64 && self.rcv_buf.0 <= 1 << 30,
            &format!("{p}.rcv_buf"),
            "must be between one MSS and 1GiB",
        )?;
        check(
            self.rcv_win_ratio.is_finite() && self.rcv_win_ratio > 0.0 && self.rcv_win_ratio <= 1.0,
            &format!("{p}.rcv_win_ratio"),
            "must be > 0 and <= 1",
        )?;
        check(
            (self.rcv_buf.0 as f64 * self.rcv_win_ratio) >= self.mss as f64,
            &format!("{p}.rcv_win_ratio"),
            "must leave a window of at least one MSS (rcv_buf × rcv_win_ratio)",
        )?;
        check(
            self.snd_buf.0 >= self.mss as u64 && self.snd_buf.0 <= 1 << 30,
            &format!("{p}.snd_buf"),
            "must be between one MSS and 1GiB",
        )?;
        check(
            (1..=1000).contains(&self.initial_cwnd),
            &format!("{p}.initial_cwnd"),
            "must be between 1 and 1000 segments",
        )?;
        check(
            (1..=64).contains(&self.ack_every),
            &format!("{p}.ack_every"),
            "must be between 1 and 64 segments",
        )?;
        check(
            self.min_rto.0 .0 > 0,
            &format!("{p}.min_rto"),
            "must be > 0",
        )?;
        check(
            self.initial_rto.0 .0 > 0,
            &format!("{p}.initial_rto"),
            "must be > 0",
        )?;
        check(
            self.delack_timeout.0 .0 > 0 && self.delack_timeout.0 <= Duration::from_millis(500),
            &format!("{p}.delack_timeout"),
            "must be > 0 and <= 500ms (RFC 1122 §4.2.3.2)",
        )?;
        check(
            self.udp_packet.0 >= 28 && self.udp_packet.0 <= 65535,
            &format!("{p}.udp_packet"),
            "must be between 28 and 65535 bytes",
        )?;
        check(
            self.app_rate.is_none_or(|r| r.bps() > 0),
            &format!("{p}.app_rate"),
            "must be > 0 (leave it out for a full send buffer)",
        )?;
        check(
            self.app_write
                .is_none_or(|w| w.0 >= 1 && w.0 <= self.snd_buf.0 && w.0 <= u32::MAX as u64),
            &format!("{p}.app_write"),
            "must be between 1 byte and snd_buf",
        )?;
        check(
            self.radio_aware.fallback != Some(CcName::RadioAware),
            &format!("{p}.radio_aware.fallback"),
            "must be a loss-based controller: \"newreno\", \"cubic\", \"highspeed\" or \"bbr\"",
        )?;
        check(
            self.radio_aware.stale_after.0 .0 > 0,
            &format!("{p}.radio_aware.stale_after"),
            "must be > 0",
        )?;
        // Every app's values are checked whatever `app` is (a sweep over `app` must not meet
        // a bad value only at the points that read it); [`FlowConfig::unread`] warns of them.
        check(
            self.burst_size.0 > 0 && self.burst_size.0 <= 1 << 40,
            &format!("{p}.burst_size"),
            "must be between 1 byte and 1TiB",
        )?;
        check(
            self.burst_count.is_none_or(|n| n > 0),
            &format!("{p}.burst_count"),
            "must be > 0 (leave it out for bursts until the end of the run)",
        )?;
        check(
            self.burst_rate.is_finite() && self.burst_rate > 0.0 && self.burst_rate <= 1000.0,
            &format!("{p}.burst_rate"),
            "must be > 0 and <= 1000 bursts per second",
        )?;
        check(
            self.burst_interval.0 >= Duration::from_millis(1),
            &format!("{p}.burst_interval"),
            "must be at least 1ms",
        )?;
        self.video.validate(&format!("{p}.video"))?;
        if self.app == AppKind::Download {
            check(
                self.bytes.is_none_or(|b| b.0 > 0),
                &format!("{p}.bytes"),
                "a download must be > 0 bytes",
            )?;
        }
        Ok(())
    }

    /// The `[flow]` fields the run does not read with these values (a scenario adds what it
    /// decides itself, e.g. the radio scenarios' `traffic`). `download_is_bulk`: the scenario
    /// runs "download" as a bulk send of `bytes` from the server, without a request (the radio
    /// scenarios' `build_sim`).
    pub fn unread(&self, p: &str, download_is_bulk: bool, out: &mut Unreads) {
        let app = || {
            if download_is_bulk && self.app == AppKind::Download {
                format!(
                    "{p}.app = \"download\", which this scenario runs as a bulk send of {p}.bytes"
                )
            } else {
                format!("{p}.app = {:?}", name_of(self.app))
            }
        };
        let is = |apps: &[AppKind]| apps.contains(&self.app);
        use AppKind::*;
        let bulk: &[AppKind] = if download_is_bulk {
            &[Bulk, Download]
        } else {
            &[Bulk]
        };
        let request: &[AppKind] = if download_is_bulk {
            &[Video]
        } else {
            &[Download, Video]
        };
        // `tcp_source` and the scenarios' UDP flow: what each app reads.
        out.unless(self.app != UdpCbr, p, Self::TCP, app);
        out.unless(is(&[Bulk, Download]), p, &["bytes"], app);
        out.unless(is(request), p, &["request"], app);
        out.unless(is(bulk), p, &["app_rate", "app_write"], app);
        out.unless(
            !is(bulk) || self.app_rate.is_some(),
            p,
            &["app_write"],
            || format!("{p}.app_rate is absent (the sender keeps its buffer full)"),
        );
        out.unless(is(&[Ftp1, Bursts]), p, &["burst_size", "burst_count"], app);
        out.unless(is(&[Ftp1]), p, &["burst_rate"], app);
        out.unless(is(&[Bursts]), p, &["burst_interval"], app);
        out.unless(is(&[UdpCbr]), p, &["udp_rate", "udp_packet"], app);
        out.unless(is(&[Video]), p, &["video"], app);
        if self.app == UdpCbr {
            return;
        }
        let cc = || format!("{p}.cc = {:?}", name_of(self.cc));
        out.unless(self.cc == CcName::RadioAware, p, &["radio_aware"], cc);
        // Only CUBIC has a slow-start exit to choose (cc/cubic.rs), also as radio-aware's
        // fallback.
        let cubic = self.cc == CcName::Cubic
            || (self.cc == CcName::RadioAware && self.radio_aware.fallback == Some(CcName::Cubic));
        out.unless(cubic, p, &["hystart"], cc);
        // recv.rs: without delayed ACKs every segment is ACKed at once.
        out.unless(
            self.delayed_ack,
            p,
            &["ack_every", "quickack", "ack_when_read", "delack_timeout"],
            || format!("{p}.delayed_ack = false"),
        );
        // rack.rs: RACK-TLP runs on a SACK connection only. ack.rs, reno.rs: PRR runs with SACK,
        // or without it under the Linux rules (Linux's duplicate-ACK SACK emulation); the RFC
        // rules inflate cwnd instead (RFC 6582).
        out.unless(self.sack, p, &["rack_tlp"], || format!("{p}.sack = false"));
        out.unless(
            self.sack || self.cwnd_rules == CwndRulesName::Linux,
            p,
            &["prr"],
            || format!("{p}.sack = false with {p}.cwnd_rules = \"rfc\""),
        );
        // ack.rs: the undo test reads the echoed timestamps.
        out.unless(self.timestamps, p, &["rto_undo"], || {
            format!("{p}.timestamps = false")
        });
    }

    /// The application's settings: each read by some `app` only (what M2M traffic, which
    /// runs its own application, does not read).
    pub const APP: &'static [&'static str] = &[
        "bytes",
        "request",
        "app_rate",
        "app_write",
        "burst_size",
        "burst_rate",
        "burst_interval",
        "burst_count",
        "udp_rate",
        "udp_packet",
        "video",
    ];

    /// The TCP settings: what a UDP flow does not read.
    pub const TCP: &'static [&'static str] = &[
        "stack",
        "cc",
        "mss",
        "delayed_ack",
        "ack_every",
        "quickack",
        "ack_when_read",
        "delack_timeout",
        "min_rto",
        "initial_rto",
        "sack",
        "rack_tlp",
        "prr",
        "rto_undo",
        "timestamps",
        "window_scaling",
        "rcv_buf",
        "rcv_win_ratio",
        "snd_buf",
        "initial_cwnd",
        "pacing",
        "slow_start_after_idle",
        "hystart",
        "cwnd_rules",
        "radio_aware",
    ];

    /// The application of a TCP flow from the data source: bulk (full buffer, `bytes` long or
    /// paced) or bursty ("ftp1", "bursts"). `None` for "download" and "udp-cbr".
    pub fn tcp_source(&self) -> Option<FlowKind> {
        let bursts = |arrivals| {
            FlowKind::Bursts(Bursts {
                size: self.burst_size.0,
                arrivals,
                count: self.burst_count,
            })
        };
        match self.app {
            AppKind::Bulk => Some(FlowKind::Bulk {
                bytes: self.bytes.map(|b| b.0),
                write: self.app_write(),
            }),
            AppKind::Ftp1 => Some(bursts(Arrivals::Poisson {
                rate_per_s: self.burst_rate,
            })),
            AppKind::Bursts => Some(bursts(Arrivals::Periodic {
                interval: self.burst_interval.d(),
            })),
            AppKind::Video => Some(FlowKind::Video(self.video.resolve(self.request.0))),
            AppKind::Download | AppKind::UdpCbr => None,
        }
    }

    /// The paced writes of a bulk sender, if `app_rate` is set.
    pub fn app_write(&self) -> Option<AppWrite> {
        self.app_rate.map(|r| AppWrite {
            rate_bps: r.bps(),
            chunk: self.app_write.map_or(self.mss, |w| w.0 as u32),
        })
    }

    /// The TCP settings of the data sender.
    pub fn tcp_sender(&self) -> TcpConfig {
        TcpConfig {
            mss: self.mss,
            rcv_buf_bytes: self.rcv_buf.0,
            rcv_win_ratio: self.rcv_win_ratio,
            snd_buf_bytes: self.snd_buf.0,
            delayed_ack: self.delayed_ack,
            ack_every: self.ack_every,
            quickack_segments: if self.quickack { QUICKACK_SEGMENTS } else { 0 },
            delack_timeout: self.delack_timeout.d(),
            ack_when_read: self.ack_when_read,
            min_rto: self.min_rto.d(),
            initial_rto: self.initial_rto.d(),
            max_rto: Duration::from_secs(60),
            sack: self.sack,
            rack_tlp: self.rack_tlp,
            prr: self.prr,
            rto_undo: self.rto_undo,
            // Not configurable on their own: the stack profile's (on in `linux`, off in `rfc`).
            dsack: self.stack.tcp().dsack,
            recovery_undo: self.stack.tcp().recovery_undo,
            frto: self.stack.tcp().frto,
            sack_compression: self.stack.tcp().sack_compression,
            timestamps: self.timestamps,
            window_scaling: self.window_scaling,
            cc: self.cc.kind(),
            initial_cwnd_segments: self.initial_cwnd,
            hystart: self.hystart.kind(),
            cwnd_rules: self.cwnd_rules.kind(),
            pacing: self.pacing,
            slow_start_after_idle: self.slow_start_after_idle,
            radio_aware: RadioAwareParams {
                variant: match self.radio_aware.variant {
                    RadioAwareVariant::Rate => Variant::Rate,
                    RadioAwareVariant::RateQueue => Variant::RateQueue,
                },
                q_th_bytes: self.radio_aware.q_th.0,
                rtt: match self.radio_aware.rtt {
                    RttPredictorName::Min => RttPredictor::MinRtt,
                    RttPredictorName::Srtt => RttPredictor::Srtt,
                },
                stale_after: self.radio_aware.stale_after.d(),
                fallback: self.radio_aware.fallback.unwrap_or(self.stack.cc()).kind(),
            },
        }
    }
    /// The TCP settings of the data receiver (same stack settings).
    pub fn tcp_receiver(&self) -> TcpConfig {
        self.tcp_sender()
    }
}

/// Which interfaces to capture into pcap files.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(
    untagged,
    expecting = "true, false, or a list of interface names such as [\"sender-eth0\"]"
)]
pub enum PcapSelection {
    All(bool),
    Some(Vec<String>),
}

impl Default for PcapSelection {
    fn default() -> Self {
        PcapSelection::All(false)
    }
}

fn d_sample() -> Dur {
    Dur::ms(100)
}

/// `output.pcap_snaplen`: how much of each packet a pcap record keeps. Records always carry
/// the packet's real length (`orig_len`), so tools see every header field; rantcp's payload is
/// zeros anyway, and keeping it makes a 30 s p2p-bulk capture 190 MB per interface.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Snaplen {
    /// At most this many bytes of each packet (120..=65535).
    Bytes(u32),
    /// The whole packet (the pcap header's snaplen field says 65535).
    Full,
}

impl Snaplen {
    /// Smallest allowed: the largest IPv4 header (60 bytes, RFC 791 IHL = 15) plus the largest
    /// TCP header (60 bytes, RFC 9293 §3.1 data offset = 15), so every header is whole.
    pub const MIN: u32 = 120;
    /// The default: headers only (with room to spare for any header).
    pub const HEADERS: Snaplen = Snaplen::Bytes(128);
    /// The snapshot length written into the file header and applied to each record.
    pub fn bytes(self) -> u32 {
        match self {
            Snaplen::Bytes(b) => b,
            Snaplen::Full => rantcp_wire::pcap::DEFAULT_SNAPLEN,
        }
    }
}

impl Default for Snaplen {
    fn default() -> Self {
        Snaplen::HEADERS
    }
}

impl Serialize for Snaplen {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Snaplen::Bytes(b) => s.serialize_u32(*b),
            Snaplen::Full => s.serialize_str("full"),
        }
    }
}

impl<'de> Deserialize<'de> for Snaplen {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::{Error, Visitor};
        struct V;
        const ALLOWED: &str = "bytes per packet from 120 to 65535, or \"full\"";
        impl Visitor<'_> for V {
            type Value = Snaplen;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str(ALLOWED)
            }
            fn visit_i64<E: Error>(self, v: i64) -> Result<Snaplen, E> {
                match u32::try_from(v) {
                    Ok(b) if (Snaplen::MIN..=rantcp_wire::pcap::DEFAULT_SNAPLEN).contains(&b) => {
                        Ok(Snaplen::Bytes(b))
                    }
                    _ => Err(E::custom(format!(
                        "{v} is out of range (allowed: {ALLOWED})"
                    ))),
                }
            }
            fn visit_u64<E: Error>(self, v: u64) -> Result<Snaplen, E> {
                self.visit_i64(i64::try_from(v).unwrap_or(i64::MAX))
            }
            fn visit_str<E: Error>(self, s: &str) -> Result<Snaplen, E> {
                match s.trim() {
                    "full" => Ok(Snaplen::Full),
                    t => match t.parse::<i64>() {
                        Ok(v) => self.visit_i64(v),
                        Err(_) => Err(E::custom(format!("{s:?} is not {ALLOWED}"))),
                    },
                }
            }
        }
        d.deserialize_any(V)
    }
}

impl JsonSchema for Snaplen {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Snaplen".into()
    }
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "description": "bytes of each packet a pcap record keeps (120 to 65535), or \"full\"",
            "anyOf": [
                {"type": "integer", "minimum": Snaplen::MIN, "maximum": 65535},
                {"const": "full"}
            ]
        })
    }
}

/// What a run writes besides summary.json.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OutputConfig {
    /// Time-series sampling interval.
    #[serde(default = "d_sample")]
    pub sample_interval: Dur,
    /// pcap capture: true (every interface), false, or a list of interface names.
    #[serde(default)]
    pub pcap: PcapSelection,
    /// Bytes of each packet a pcap record keeps: 128 (the default) keeps every IP and TCP
    /// header and drops the payload (rantcp's payload is zeros); "full" keeps whole packets.
    #[serde(default)]
    pub pcap_snaplen: Snaplen,
    /// Draw PNG plots into plots/ (off by default: matplotlib's start-up costs about half a
    /// second, several times a short run; `rantcp run --plots` turns them on).
    #[serde(default)]
    pub plots: bool,
}

impl Default for OutputConfig {
    fn default() -> Self {
        crate::config::from_table(toml::Table::new()).expect("defaults deserialize")
    }
}

/// The snap length is read only where pcap files are written.
impl FieldUse for OutputConfig {
    const ALWAYS: &'static [&'static str] = &["sample_interval", "pcap", "plots"];
    const CONDITIONAL: &'static [&'static str] = &["pcap_snaplen"];
}

impl OutputConfig {
    pub fn unread(&self, p: &str, out: &mut Unreads) {
        let none = match &self.pcap {
            PcapSelection::All(on) => !on,
            PcapSelection::Some(v) => v.is_empty(),
        };
        out.unless(!none, p, &["pcap_snaplen"], || {
            format!("{p}.pcap captures nothing")
        });
    }
    pub fn validate(&self, p: &str) -> Result<(), ConfigError> {
        check(
            self.sample_interval.0 >= Duration::from_millis(1),
            &format!("{p}.sample_interval"),
            "must be >= 1ms",
        )
    }
}
