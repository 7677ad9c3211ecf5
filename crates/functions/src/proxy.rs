//! `proxy`: seed 001's mmWave performance enhancing proxy (mmPEP, §III) and its baseline, an
//! RFC 3135-style PEP (§IV: "Ack management is applied but only packets receiving the
//! corresponding duplicated Acks are retransmitted"), as a layer at the base station between
//! IP and PDCP (§III.C, Figure 4). Both are transparent: packets keep their addresses, the
//! proxy watches the TCP headers of the flows it serves.
//!
//! * **Ack management** (§III.A, Figure 2). Every data segment from the server is kept in the
//!   connection's cache and passed on towards PDCP; the proxy answers the server at once with an
//!   *early ACK* for the contiguous data it holds, whose receive window is the free cache space
//!   (flow control, §III.A; scaled by the window scale the UE announced, RFC 7323 §2.3, and so
//!   at most 65535 << shift), and with SACK blocks for out-of-order data it holds when both
//!   ends permitted SACK (RFC 2018 §4). When an early ACK had to advertise less than one
//!   segment (the cache is full) and the UE's ACKs free at least one segment, the last early
//!   ACK is sent again with the new window (RFC 9293 §3.8.6.2.2, receiver SWS avoidance). ACKs
//!   from the UE free the cache and are not forwarded: the server already believes the data
//!   delivered.
//! * **Retransmission** from the cache, ahead of the data the bearer holds that RLC has not
//!   begun to send (§III.B: "The priority of any batch retransmission is higher than that of
//!   any initial transmissions"). A duplicate ACK from the UE names the segment at its
//!   cumulative ACK. mmPEP retransmits that segment and the following cached ones, N =
//!   ceil(α·β·(1+γ)) in all (Eq. 1, Figure 3: "we regard all corresponding HARQ transmissions
//!   as failures for the duration of a HARQ feedback delay"); PEP retransmits that one
//!   segment. Either does so on the first duplicate ACK naming a segment: further duplicates
//!   naming the same segment are the rest of the same loss, or the UE's answers to copies it
//!   already had (as in Snoop, seed ref. [8]); the next loss is handled once the UE's ACK has
//!   moved and a duplicate names the next segment.
//! * **Retransmission timer**: `timer` after the UE's cumulative ACK last moved while the
//!   cache holds unacknowledged data. PEP then retransmits the segment at the UE's ACK, whatever
//!   RLC holds; mmPEP sends a batch of N only if the UE's RLC buffer is empty (footnote 1: "the
//!   batch retransmission by the timer expiration is triggered only when the buffer of RLC is
//!   empty"), and otherwise waits another period. No backoff: the seed gives none.
//! * **γ** from Eq. 2, solved as written: the least ω with ½[1 + erf(αβω / (βσ√2))] ≥ 1 − ε
//!   (σ = 0.1, 1 − ε = 0.99, α = 1.12 give γ = 0.208, the seed's "approximately 0.2", and
//!   N = 14). α is given or measured online (the RAN's downlink IP packets per scheduled slot,
//!   [`rantcp_nf::UeReport::dl_packets_per_slot`]); β is the radio's HARQ feedback delay.
//!
//! **Handshake and FIN** (what the seed and RFC 3135 leave to the implementer; RFC 3135 §3.5
//! and §4.4 on end-to-end semantics): the three-way handshake passes untouched, so both ends
//! negotiate their own options; the proxy learns the initial sequence numbers and the UE's
//! window scale from it, whichever end opens (the UE's ACK that completes a handshake it
//! opened passes: the proxy consumes the UE's pure ACKs only once it has sent an early ACK).
//! Data is cached and early-acknowledged only once the connection is established. The
//! server's FIN is cached (so it can be retransmitted) but never early-acknowledged: the UE's
//! ACK that covers the FIN is forwarded to the server, so the server learns the transfer is
//! over only when the UE has every byte. Segments from the UE that carry data, SYN, FIN or RST
//! pass (their acknowledgement number is raised to the proxy's early ACK, so the server never
//! sees its data acknowledged twice and then less).
//! A connection whose handshake the proxy did not see is left alone.
//!
//! **Mode `none`** attaches the proxy's counters only (no early ACK, no retransmission): plain
//! TCP's delivery ratio, measured the same way as the proxies'.
//!
//! **Delivery ratio** (design.md §6, seed 001 §IV): packets delivered to the UE's application
//! over data packets arriving at the UE's TCP. Arrivals are counted where RLC delivers to the
//! UE ([`Point::DlEgress`]); what reached the application is the UE's cumulative ACK, in
//! segments of the flow's largest data segment (every segment of a bulk transfer but the last
//! is that size).

use crate::split::tcp_packet;
use crate::{BuildEnv, FunctionConfig};
use rantcp_config::reads::{concat, FieldUse, Unreads};
use rantcp_config::units::{Bytes, Dur};
use rantcp_config::{check, ConfigError};
use rantcp_core::{Duration, Time};
use rantcp_nf::{
    Attach, Ctx, FlowKey, NetworkFunction, Outbox, Output, Point, Points, RanView, Rnti,
    SampleSink, SampleValue, Site, Verdict,
};
use rantcp_wire::{
    Packet, SackBlock, TcpFlags, IPV4_HEADER_LEN, MAX_OPTIONS_LEN, PROTO_TCP, TCP_HEADER_LEN,
};
use rustc_hash::FxHashMap;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;
use std::net::Ipv4Addr;

/// Which proxy runs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum ProxyMode {
    /// Not attached.
    #[default]
    Off,
    /// Counters only (plain TCP's delivery ratio).
    None,
    /// RFC 3135-style PEP: early ACKs, one segment per duplicate ACK, timer regardless of RLC.
    Pep,
    /// Seed 001's mmPEP: early ACKs, batch retransmission, timer only when RLC is empty.
    Mmpep,
}

impl ProxyMode {
    pub fn name(self) -> &'static str {
        match self {
            ProxyMode::Off => "off",
            ProxyMode::None => "none",
            ProxyMode::Pep => "pep",
            ProxyMode::Mmpep => "mmpep",
        }
    }
}

/// `[functions.proxy]`. Off unless `mode` is set.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ProxyConfig {
    /// "off", "none" (counters only), "pep" or "mmpep".
    #[serde(default)]
    pub mode: ProxyMode,
    /// Cache per connection, bytes of TCP payload (the seed gives no size).
    #[serde(default = "d_cache")]
    pub cache: Bytes,
    /// α, packets per slot when the channel is available; absent: measured online (the UE's
    /// downlink IP packets per scheduled slot). Table I: 1.12.
    #[serde(default)]
    pub alpha: Option<f64>,
    /// β, HARQ feedback delay in slots; absent: the radio's (`mac.harq_feedback_slots`).
    #[serde(default)]
    pub beta_slots: Option<u32>,
    /// σ of Eq. 2, standard deviation of the packets arriving per slot (the seed: 0.1).
    #[serde(default = "d_sigma")]
    pub sigma: f64,
    /// 1 − ε of Eq. 2 (the seed: 0.99).
    #[serde(default = "d_confidence")]
    pub confidence: f64,
    /// The proxy's retransmission timer (the seed gives none; 200 ms is Linux's minimum RTO).
    #[serde(default = "d_timer")]
    pub timer: Dur,
    /// New data goes on to PDCP while the UE's RLC holds less than this fraction of its buffer
    /// (`rlc.buffer`); beyond it the proxy keeps the data in its cache until RLC drains (§III.A:
    /// in NLOS "the base station keeps these packets in its cache until LOS status is
    /// resumed"), leaving room for retransmissions. 1: never hold (RLC drops what it cannot
    /// take).
    #[serde(default = "d_rlc_fill")]
    pub rlc_fill: f64,
}

fn d_cache() -> Bytes {
    Bytes(64 << 20)
}
fn d_sigma() -> f64 {
    0.1
}
fn d_confidence() -> f64 {
    0.99
}
fn d_timer() -> Dur {
    Dur::ms(200)
}
fn d_rlc_fill() -> f64 {
    0.75
}

impl Default for ProxyConfig {
    fn default() -> Self {
        ProxyConfig {
            mode: ProxyMode::Off,
            cache: d_cache(),
            alpha: None,
            beta_slots: None,
            sigma: d_sigma(),
            confidence: d_confidence(),
            timer: d_timer(),
            rlc_fill: d_rlc_fill(),
        }
    }
}

/// `mode` switches the proxy on; "none" counts only, "pep" caches and retransmits one packet
/// at a time, "mmpep" batches by Eq. 2 (α, β, σ, 1 − ε).
impl FieldUse for ProxyConfig {
    const ALWAYS: &'static [&'static str] = &["mode"];
    const CONDITIONAL: &'static [&'static str] = &concat::<
        { 1 + Self::BATCH.len() + Self::CACHING.len() },
    >(&[&["cache"], Self::BATCH, Self::CACHING]);
}

impl ProxyConfig {
    /// What only mmPEP reads: its batch size N = ceil(α·β·(1+γ)) (Eq. 1–2).
    const BATCH: &'static [&'static str] = &["alpha", "beta_slots", "sigma", "confidence"];
    /// What PEP and mmPEP read and "none" (which caches nothing) does not.
    const CACHING: &'static [&'static str] = &["timer", "rlc_fill"];
}

impl FunctionConfig for ProxyConfig {
    const KIND: &'static str = "proxy";

    fn enabled(&self) -> bool {
        self.mode != ProxyMode::Off
    }

    fn off_because(&self, p: &str) -> String {
        format!("{p}.mode = \"off\"")
    }

    /// "none" forwards everything (`active`) but still samples the window the cache would
    /// give (`window_bytes` of the proxy table): it reads `cache` only.
    fn unread(&self, p: &str, out: &mut Unreads) {
        let because = || format!("{p}.mode = {:?}", self.mode.name());
        match self.mode {
            ProxyMode::Off => out.unless(false, p, Self::CONDITIONAL, because),
            ProxyMode::None => {
                out.unless(false, p, Self::BATCH, because);
                out.unless(false, p, Self::CACHING, because);
            }
            ProxyMode::Pep => out.unless(false, p, Self::BATCH, because),
            ProxyMode::Mmpep => {}
        }
    }

    fn validate(&self, p: &str) -> Result<(), ConfigError> {
        check(
            (16_384..=(1u64 << 34)).contains(&self.cache.0),
            &format!("{p}.cache"),
            "must be between 16 KB and 16 GiB",
        )?;
        check(
            self.alpha
                .is_none_or(|a| a.is_finite() && a > 0.0 && a <= 10_000.0),
            &format!("{p}.alpha"),
            "must be > 0 and <= 10000 packets per slot (absent: measured online)",
        )?;
        check(
            self.beta_slots.is_none_or(|b| (1..=1000).contains(&b)),
            &format!("{p}.beta_slots"),
            "must be between 1 and 1000 slots (absent: the radio's HARQ feedback delay)",
        )?;
        check(
            self.sigma.is_finite() && self.sigma >= 0.0 && self.sigma <= 1000.0,
            &format!("{p}.sigma"),
            "must be between 0 and 1000",
        )?;
        check(
            self.confidence > 0.5 && self.confidence < 1.0,
            &format!("{p}.confidence"),
            "must be in (0.5, 1): it is 1 - epsilon of Eq. 2",
        )?;
        check(
            self.timer.d() >= Duration::from_millis(1) && self.timer.d() <= Duration::from_secs(60),
            &format!("{p}.timer"),
            "must be between 1ms and 60s",
        )?;
        check(
            self.rlc_fill > 0.0 && self.rlc_fill <= 1.0,
            &format!("{p}.rlc_fill"),
            "must be in (0, 1] (1: never hold data back from RLC)",
        )?;
        Ok(())
    }

    fn build(&self, p: &str, env: &BuildEnv) -> Result<Vec<Attach>, ConfigError> {
        if !self.enabled() {
            return Ok(vec![]);
        }
        let Some(radio) = env.radio else {
            return Err(ConfigError::new(
                format!("{p}.mode"),
                "the proxy sits at a base station: this scenario has no radio access network (allowed: \"off\")",
            ));
        };
        let flows: Vec<FlowKey> = env
            .flows
            .iter()
            .map(|f| f.1)
            .filter(|k| k.proto == PROTO_TCP)
            .collect();
        let params = ProxyParams {
            mode: self.mode,
            cache: self.cache.0,
            alpha: self.alpha,
            beta: self.beta_slots.unwrap_or(radio.harq_feedback_slots),
            sigma: self.sigma,
            confidence: self.confidence,
            timer: self.timer.d(),
            rlc_hold: if self.rlc_fill >= 1.0 {
                0
            } else {
                (radio.rlc_buffer_bytes as f64 * self.rlc_fill) as u64
            },
        };
        Ok(vec![Attach {
            site: Site::Ran,
            function: Box::new(Proxy::new(params, flows)),
        }])
    }
}

/// The proxy's settings (what [`ProxyConfig`] resolves to).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ProxyParams {
    pub mode: ProxyMode,
    /// Cache per connection, payload bytes.
    pub cache: u64,
    /// α given (packets per slot); `None`: measured online.
    pub alpha: Option<f64>,
    /// β, slots.
    pub beta: u32,
    pub sigma: f64,
    /// 1 − ε.
    pub confidence: f64,
    pub timer: Duration,
    /// Hold new data in the cache while the UE's RLC holds more than this, bytes (0: never).
    pub rlc_hold: u64,
}

/// γ of Eq. 2: the least ω with ½[1 + erf(αβω / (βσ√2))] ≥ 1 − ε (bisection on the
/// monotone left side, to 1e-12). σ = 0 gives 0.
pub fn gamma(alpha: f64, beta: f64, sigma: f64, confidence: f64) -> f64 {
    if sigma <= 0.0 || alpha <= 0.0 {
        return 0.0;
    }
    let lhs = |w: f64| {
        0.5 * (1.0 + libm::erf(alpha * beta * w / (beta * sigma * std::f64::consts::SQRT_2)))
    };
    let (mut lo, mut hi) = (0.0_f64, 1.0_f64);
    while lhs(hi) < confidence {
        hi *= 2.0;
    }
    while hi - lo > 1e-12 * hi.max(1.0) {
        let m = 0.5 * (lo + hi);
        if lhs(m) >= confidence {
            hi = m;
        } else {
            lo = m;
        }
    }
    hi
}

/// N of Eq. 1: ceil(α·β·(1 + γ)), at least 1.
pub fn batch_size(alpha: f64, beta: u32, sigma: f64, confidence: f64) -> u32 {
    let b = beta as f64;
    let g = gamma(alpha, b, sigma, confidence);
    ((alpha * b * (1.0 + g)).ceil() as u32).max(1)
}

/// A cached segment of the server's: its offset in the data stream (0 = first data byte),
/// payload length, FIN flag and the packet as it arrived.
#[derive(Clone, Copy, Debug)]
struct Seg {
    off: u64,
    len: u32,
    fin: bool,
    /// Handed to PDCP (false: held in the cache while RLC is full).
    sent: bool,
    pkt: Packet,
}

impl Seg {
    /// End in sequence space (the FIN counts one).
    fn end(&self) -> u64 {
        self.off + self.len as u64 + self.fin as u64
    }
}

/// Per-connection counters (all of them go into summary.json).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct ConnCounters {
    /// Early ACKs sent to the server (window updates included).
    pub early_acks: u64,
    /// Early ACKs resent with a new window after the cache was full.
    pub window_updates: u64,
    /// ACKs from the UE consumed (not forwarded).
    pub ue_acks_consumed: u64,
    /// Duplicate ACKs from the UE, and those of them that signal no loss (SACK: no block above
    /// the cumulative ACK; they answer copies the UE already had).
    pub dup_acks: u64,
    pub dup_acks_no_loss: u64,
    /// Retransmissions triggered by a duplicate ACK (mmPEP: batches; PEP: single segments).
    pub dupack_retransmissions: u64,
    /// Batches sent (mmPEP: on a duplicate ACK or the timer) and the packets in them.
    pub batches: u64,
    pub batch_packets: u64,
    /// Largest and smallest batch (smaller than N when the cache held fewer segments).
    pub batch_max: u64,
    pub batch_min: u64,
    /// Timer expiries with unacknowledged data, and the packets they retransmitted.
    pub timer_expiries: u64,
    pub timer_retx_packets: u64,
    /// Timer retransmissions sent while the UE's RLC buffer was not empty (RLC still held
    /// data, so the retransmission was likely redundant; PEP only — mmPEP waits instead).
    pub timer_retx_rlc_busy: u64,
    /// mmPEP: timer expiries that sent nothing because RLC was not empty.
    pub timer_deferred: u64,
    /// Every packet the proxy retransmitted.
    pub retx_packets: u64,
    /// Segments held in the cache while RLC was full (sent later, when it drained).
    pub held_packets: u64,
    /// Server segments dropped: beyond the free cache, or already cached.
    pub dropped_cache_full: u64,
    pub dropped_duplicate: u64,
    /// Cache occupancy: largest and at the end, payload bytes.
    pub cache_max_bytes: u64,
    /// Data packets (and payload bytes) of the flow arriving at the UE's TCP.
    pub ue_data_packets: u64,
    pub ue_data_bytes: u64,
    /// Bytes delivered in order to the UE's application (its cumulative ACK).
    pub delivered_bytes: u64,
}

impl ConnCounters {
    /// Add another connection's counters (sums; largest for the maxima; batch_min over
    /// connections that sent batches).
    fn add(&mut self, k: &ConnCounters) {
        let mut sums = [
            (&mut self.early_acks, k.early_acks),
            (&mut self.window_updates, k.window_updates),
            (&mut self.ue_acks_consumed, k.ue_acks_consumed),
            (&mut self.dup_acks, k.dup_acks),
            (&mut self.dup_acks_no_loss, k.dup_acks_no_loss),
            (&mut self.dupack_retransmissions, k.dupack_retransmissions),
            (&mut self.batches, k.batches),
            (&mut self.batch_packets, k.batch_packets),
            (&mut self.timer_expiries, k.timer_expiries),
            (&mut self.timer_retx_packets, k.timer_retx_packets),
            (&mut self.timer_retx_rlc_busy, k.timer_retx_rlc_busy),
            (&mut self.timer_deferred, k.timer_deferred),
            (&mut self.retx_packets, k.retx_packets),
            (&mut self.held_packets, k.held_packets),
            (&mut self.dropped_cache_full, k.dropped_cache_full),
            (&mut self.dropped_duplicate, k.dropped_duplicate),
            (&mut self.ue_data_packets, k.ue_data_packets),
            (&mut self.ue_data_bytes, k.ue_data_bytes),
            (&mut self.delivered_bytes, k.delivered_bytes),
        ];
        for (a, b) in sums.iter_mut() {
            **a += *b;
        }
        self.batch_max = self.batch_max.max(k.batch_max);
        self.cache_max_bytes = self.cache_max_bytes.max(k.cache_max_bytes);
        if k.batches > 0 {
            self.batch_min = self.batch_min.min(k.batch_min);
        }
    }
}

/// One connection the proxy serves.
struct Conn {
    flow: usize,
    rnti: Option<Rnti>,
    /// The server's initial sequence number.
    irs: Option<u32>,
    /// The UE's sequence number after its last segment (an early ACK's seq).
    ue_seq: u32,
    server_ws: bool,
    ue_ws: Option<u8>,
    /// SACK permitted by both SYNs (RFC 2018 §2).
    server_sack: bool,
    ue_sack: bool,
    /// Last TSval from the UE (echoed in early ACKs with timestamps).
    ue_tsval: Option<u32>,
    /// The UE's SYN (or SYN-ACK) was seen.
    ue_syn: bool,
    /// Contiguous data the proxy holds: what its early ACKs acknowledge.
    rcv_nxt: u64,
    /// The UE's cumulative ACK.
    una: u64,
    /// Segments at or beyond `una` up to `rcv_nxt` (in order), and beyond `rcv_nxt`.
    cache: VecDeque<Seg>,
    ooo: Vec<Seg>,
    ooo_bytes: u64,
    /// Offset of the out-of-order segment that arrived last (the first SACK block's).
    ooo_recent: u64,
    fin_off: Option<u64>,
    /// Largest data segment seen (the SWS rule's MSS; the delivered-packet unit).
    mss: u32,
    last_early: Option<Packet>,
    window_closed: bool,
    /// The right edge of the UE's receive window (its ACK plus its scaled window, data
    /// offset), once the UE has acknowledged anything after the handshake.
    ue_edge: Option<u64>,
    /// The UE's ACK whose segment was last retransmitted on a duplicate ACK.
    rtx_una: Option<u64>,
    timer: Option<Time>,
    fin_acked: bool,
    /// Segments held back from RLC, and the offset of the first.
    held: u64,
    held_from: u64,
    c: ConnCounters,
}

impl Conn {
    fn new(flow: usize) -> Self {
        Conn {
            flow,
            rnti: None,
            irs: None,
            ue_seq: 0,
            server_ws: false,
            ue_ws: None,
            server_sack: false,
            ue_sack: false,
            ue_tsval: None,
            ue_syn: false,
            rcv_nxt: 0,
            una: 0,
            cache: VecDeque::new(),
            ooo: Vec::new(),
            ooo_bytes: 0,
            ooo_recent: 0,
            fin_off: None,
            mss: 0,
            last_early: None,
            window_closed: false,
            ue_edge: None,
            rtx_una: None,
            timer: None,
            fin_acked: false,
            held: 0,
            held_from: 0,
            c: ConnCounters {
                batch_min: u64::MAX,
                ..Default::default()
            },
        }
    }
    /// Offset in the data stream of server sequence number `seq`, taken as the one nearest
    /// offset `near` (sequence numbers wrap every 4 GiB; offsets do not).
    fn off_near(&self, seq: u32, near: u64) -> i64 {
        near as i64 + seq.wrapping_sub(self.seq(near)) as i32 as i64
    }
    /// Both SYNs seen: data may flow.
    fn established(&self) -> bool {
        self.irs.is_some() && self.ue_syn
    }
    fn seq(&self, off: u64) -> u32 {
        self.irs
            .unwrap_or(0)
            .wrapping_add(1)
            .wrapping_add(off as u32)
    }
    fn shift(&self) -> u8 {
        match (self.server_ws, self.ue_ws) {
            (true, Some(s)) => s.min(14),
            _ => 0,
        }
    }
    /// Would data up to offset `end` lie beyond the UE's receive window? The proxy forwards
    /// the server's data at once, and the server sends into the window of the early ACKs (the
    /// free cache, §III.A), not the UE's: what lies beyond the UE's window waits in the cache
    /// until the UE's ACKs or window updates open it (RFC 9293 §3.8.6: a sender must not send
    /// beyond the receive window; the UE would drop it, §3.10.7.4).
    fn beyond_ue_window(&self, end: u64) -> bool {
        self.ue_edge.is_some_and(|e| end > e)
    }
    /// Payload bytes the cache holds.
    fn occupancy(&self) -> u64 {
        self.rcv_nxt.saturating_sub(self.una) + self.ooo_bytes
    }
    /// The window an early ACK advertises, bytes, and its header field.
    fn window(&self, cache: u64) -> (u64, u16) {
        let free = cache.saturating_sub(self.rcv_nxt.saturating_sub(self.una));
        let field = (free >> self.shift()).min(u16::MAX as u64) as u16;
        ((field as u64) << self.shift(), field)
    }
    /// An early ACK's SACK blocks: the proxy is the server's receiver, so when both SYNs
    /// permitted SACK it reports the out-of-order data it holds (RFC 2018 §4: SACK options
    /// SHOULD be in every ACK that does not acknowledge the highest sequence number held; the
    /// first block contains the most recently received segment, the rest follow, here highest
    /// first). Without them a SACK sender never sees a duplicate ACK (RFC 6675 §2 counts only
    /// ACKs whose SACK blocks report new data) and recovers a loss upstream of the proxy by
    /// its retransmission timer alone.
    fn sack_blocks(&self, o: &mut rantcp_wire::TcpOptions) {
        o.sack_len = 0;
        if !(self.server_sack && self.ue_sack) || self.ooo.is_empty() {
            return;
        }
        let cap = o.sack_capacity();
        // Contiguous runs of the (sorted) out-of-order segments, as data offsets.
        let mut runs: Vec<(u64, u64)> = Vec::new();
        for s in &self.ooo {
            match runs.last_mut() {
                Some(r) if s.off <= r.1 => r.1 = r.1.max(s.end()),
                _ => runs.push((s.off, s.end())),
            }
        }
        let first = runs
            .iter()
            .position(|r| (r.0..r.1).contains(&self.ooo_recent))
            .unwrap_or(runs.len() - 1);
        let order = std::iter::once(first).chain((0..runs.len()).rev().filter(|&i| i != first));
        for i in order.take(cap) {
            let (l, r) = runs[i];
            o.push_sack(SackBlock {
                left: self.seq(l),
                right: self.seq(r),
            });
        }
    }
}

/// Flow-wide figures with delivery ratio, per connection.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct ConnReport {
    #[serde(flatten)]
    pub c: ConnCounters,
    pub packets_delivered: u64,
    pub delivery_ratio: Option<f64>,
    pub cache_bytes: u64,
}

/// (src, dst, src port, dst port) of a served flow or its reverse → (connection, direction).
type FlowIndex = FxHashMap<(Ipv4Addr, Ipv4Addr, u16, u16), (usize, Dir)>;

/// The proxy. See the module docs.
pub struct Proxy {
    p: ProxyParams,
    flows: Vec<FlowKey>,
    conns: Vec<Conn>,
    out: Outbox,
    /// Bytes of downlink packets in `out` the owner has not taken yet (RLC does not hold them
    /// yet: the hold mark counts them).
    out_down: u64,
    /// How many of the packets in `out` are downlink (addressed to a served flow's
    /// destination): while none is, `poll_output` need not look.
    out_down_packets: usize,
    /// Per connection: is its early ACK (addressed to the flow's source) addressed to a served
    /// flow's destination too (counted as downlink, as any such packet is)?
    ack_is_down: Vec<bool>,
    /// The earliest connection timer (what `poll_timeout` answers), kept as timers change.
    next_timer: Option<Time>,
    /// Beyond [`LINEAR_FLOWS`] flows: (src, dst, src port, dst port) of each served flow and
    /// of its reverse, to the connection and direction (the first flow that matches, as the
    /// scan finds it).
    index: Option<FlowIndex>,
    /// The last batch size used (α measured online changes it).
    last_n: Option<u32>,
    last_alpha: Option<f64>,
}

/// Up to this many flows, a packet's flow is found by comparing it with each (cheaper than a
/// hash for the usual one flow per UE); beyond, by [`Proxy::index`].
const LINEAR_FLOWS: usize = 4;

/// Which way a packet of a served flow goes.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Dir {
    /// From the server (data).
    Down,
    /// From the UE (ACKs).
    Up,
}

impl Proxy {
    pub fn new(p: ProxyParams, flows: Vec<FlowKey>) -> Self {
        let conns = (0..flows.len()).map(Conn::new).collect();
        let ack_is_down = flows
            .iter()
            .map(|f| flows.iter().any(|g| g.dst == f.src))
            .collect();
        let index = (flows.len() > LINEAR_FLOWS).then(|| {
            let mut m = FxHashMap::default();
            for (i, f) in flows
                .iter()
                .enumerate()
                .filter(|(_, f)| f.proto == PROTO_TCP)
            {
                // Scan order: flow i's own direction, then its reverse, before flow i + 1.
                m.entry((f.src, f.dst, f.src_port, f.dst_port))
                    .or_insert((i, Dir::Down));
                m.entry((f.dst, f.src, f.dst_port, f.src_port))
                    .or_insert((i, Dir::Up));
            }
            m
        });
        Proxy {
            p,
            flows,
            conns,
            out: Outbox::default(),
            out_down: 0,
            out_down_packets: 0,
            ack_is_down,
            index,
            next_timer: None,
            last_n: None,
            last_alpha: None,
        }
    }

    /// The connection and direction of a packet, if it belongs to a served flow.
    #[inline]
    fn classify(&self, p: &Packet) -> Option<(usize, Dir)> {
        // `FlowKey::of(p)` compared with each flow and its reverse, field by field (this runs
        // for every packet at three points); by the index beyond a few flows.
        let t = p.as_tcp()?;
        let (src, dst, sp, dp) = (p.ip.src, p.ip.dst, t.src_port, t.dst_port);
        if let Some(index) = &self.index {
            return index.get(&(src, dst, sp, dp)).copied();
        }
        self.flows.iter().enumerate().find_map(|(i, f)| {
            if f.proto != PROTO_TCP {
                None
            } else if f.src_port == sp && f.dst_port == dp && f.src == src && f.dst == dst {
                Some((i, Dir::Down))
            } else if f.src_port == dp && f.dst_port == sp && f.src == dst && f.dst == src {
                Some((i, Dir::Up))
            } else {
                None
            }
        })
    }

    /// Counters and figures of every connection, by flow index.
    pub fn reports(&self) -> Vec<ConnReport> {
        self.conns
            .iter()
            .map(|c| {
                let mut k = c.c;
                if k.batch_min == u64::MAX {
                    k.batch_min = 0;
                }
                let delivered = if c.mss > 0 {
                    k.delivered_bytes.div_ceil(c.mss as u64)
                } else {
                    0
                };
                ConnReport {
                    c: k,
                    packets_delivered: delivered,
                    delivery_ratio: (k.ue_data_packets > 0).then(|| {
                        delivered.min(k.ue_data_packets) as f64 / k.ue_data_packets as f64
                    }),
                    cache_bytes: c.occupancy(),
                }
            })
            .collect()
    }

    fn active(&self) -> bool {
        matches!(self.p.mode, ProxyMode::Pep | ProxyMode::Mmpep)
    }

    /// N for UE `rnti` now.
    fn n(&mut self, ran: Option<&dyn RanView>, rnti: Option<Rnti>, now: Time) -> u32 {
        if self.p.mode == ProxyMode::Pep {
            return 1;
        }
        let alpha = match self.p.alpha {
            Some(a) => a,
            None => rnti
                .and_then(|r| ran.and_then(|v| v.ue_report(r, now)))
                .map(|r| r.dl_packets_per_slot)
                .filter(|a| *a > 0.0)
                .unwrap_or(1.0),
        };
        let n = batch_size(alpha, self.p.beta, self.p.sigma, self.p.confidence);
        self.last_alpha = Some(alpha);
        self.last_n = Some(n);
        n
    }

    /// An early ACK of connection `ci` (ack = its contiguous data, window = free cache). The
    /// connection's last early ACK is the template: only its sequence, acknowledgement, window
    /// and timestamps change from one to the next.
    fn early_ack(&mut self, ci: usize, tsecr: Option<u32>) {
        let cache = self.p.cache;
        let c = &mut self.conns[ci];
        let (w_bytes, field) = c.window(cache);
        let (seq, ack) = (c.ue_seq, c.seq(c.rcv_nxt));
        let ts = match (c.ue_tsval, tsecr) {
            (Some(tsval), Some(ecr)) => Some((tsval, ecr)),
            _ => None,
        };
        let f = &self.flows[ci];
        let mut a = c.last_early.take().unwrap_or_else(|| {
            tcp_packet(
                (f.dst, f.dst_port),
                (f.src, f.src_port),
                0,
                0,
                TcpFlags::ACK,
                0,
                0,
            )
        });
        let t = a.as_tcp_mut().expect("tcp");
        t.seq = seq;
        t.ack = ack;
        t.window = field;
        t.options.timestamps = ts;
        c.sack_blocks(&mut t.options);
        c.last_early = Some(a);
        c.window_closed = w_bytes < c.mss.max(1) as u64;
        c.c.early_acks += 1;
        self.out_down_packets += self.ack_is_down[ci] as usize;
        self.out.emit(a);
    }

    /// Retransmit up to `n` cached segments from data offset `from` on (the first one that
    /// ends beyond it), ahead of new data: emitted last first, as each goes in front of those
    /// before it. Returns how many, and the end of the last.
    fn retransmit(&mut self, ci: usize, n: u32, from: u64) -> (u64, u64) {
        let c = &mut self.conns[ci];
        let i = c.cache.partition_point(|s| s.end() <= from);
        let sent = c
            .cache
            .range(i..)
            .take(n as usize)
            .take_while(|s| s.sent)
            .count();
        let k = sent;
        let mut end = from;
        for s in c.cache.range(i..i + k).rev() {
            end = end.max(s.end());
            self.out_down += s.pkt.len() as u64;
            self.out_down_packets += 1;
            self.out.emit_front(s.pkt);
        }
        c.c.retx_packets += k as u64;
        (k as u64, end)
    }

    fn note_batch(c: &mut Conn, k: u64) {
        if k == 0 {
            return;
        }
        c.c.batches += 1;
        c.c.batch_packets += k;
        c.c.batch_max = c.c.batch_max.max(k);
        c.c.batch_min = c.c.batch_min.min(k);
    }

    fn arm(&mut self, ci: usize, now: Time) {
        let t = self.p.timer;
        let c = &mut self.conns[ci];
        c.timer = (!c.cache.is_empty()).then(|| now + t);
        self.note_timers();
    }

    /// Recompute `next_timer` after a connection's timer changed.
    fn note_timers(&mut self) {
        self.next_timer = match self.conns.as_slice() {
            [c] => c.timer,
            cs => cs.iter().filter_map(|c| c.timer).min(),
        };
    }

    /// A packet from the server (DlIngress).
    fn on_server_packet(&mut self, cx: &Ctx, ci: usize, p: &mut Packet) -> Verdict {
        let active = self.active();
        let cache = self.p.cache;
        let c = &mut self.conns[ci];
        c.rnti = cx.rnti.or(c.rnti);
        let t = p.as_tcp().expect("classified TCP");
        if t.flags.syn() {
            c.irs = Some(t.seq);
            c.server_ws = t.options.window_scale.is_some();
            c.server_sack = t.options.sack_permitted;
            return Verdict::Pass;
        }
        if c.irs.is_none() || t.flags.rst() {
            return Verdict::Pass;
        }
        let len = p.payload_len;
        if len == 0 && !t.flags.fin() {
            return Verdict::Pass;
        }
        c.mss = c.mss.max(len);
        if !active || !c.established() {
            if t.flags.fin() && c.fin_off.is_none() {
                c.fin_off = Some(c.off_near(t.seq, c.una).max(0) as u64 + len as u64);
            }
            return Verdict::Pass;
        }
        let off = c.off_near(t.seq, c.rcv_nxt);
        let mut seg = Seg {
            off: off.max(0) as u64,
            len,
            fin: t.flags.fin(),
            sent: true,
            pkt: *p,
        };
        let tsecr = t.options.timestamps.map(|x| x.0);
        let dup = off < 0
            || (seg.off + len as u64 <= c.rcv_nxt && (!seg.fin || c.fin_off.is_some()))
            || c.fin_off.is_some_and(|f| seg.off >= f);
        if dup {
            // Everything in it is cached already (a retransmission from the server).
            c.c.dropped_duplicate += 1;
            if len > 0 {
                self.early_ack(ci, tsecr);
            }
            return Verdict::Drop("proxy: already cached");
        }
        let limit = c.una + cache;
        if seg.off + len as u64 > limit {
            c.c.dropped_cache_full += 1;
            self.early_ack(ci, tsecr);
            return Verdict::Drop("proxy: cache full");
        }
        if seg.fin {
            c.fin_off = Some(seg.off + len as u64);
        }
        let hold = self.must_hold(ci, cx, p, seg.off);
        let c = &mut self.conns[ci];
        seg.sent = !hold;
        if hold {
            Self::note_held(c, seg.off);
        }
        let verdict = if hold {
            Verdict::Consume
        } else {
            Verdict::Pass
        };
        if seg.off > c.rcv_nxt {
            // Out of order (a loss upstream): keep it, pass it, repeat the early ACK.
            if !c.ooo.iter().any(|s| s.off == seg.off) {
                let at = c.ooo.partition_point(|s| s.off < seg.off);
                c.ooo.insert(at, seg);
                c.ooo_bytes += len as u64;
            }
            c.ooo_recent = seg.off;
            self.early_ack(ci, tsecr);
            self.note_cache(ci);
            if self.conns[ci].timer.is_none() {
                self.arm(ci, cx.now);
            }
            return verdict;
        }
        c.rcv_nxt = c.rcv_nxt.max(seg.off + len as u64);
        c.cache.push_back(seg);
        while c.ooo.first().is_some_and(|s| s.off <= c.rcv_nxt) {
            let s = c.ooo.remove(0);
            c.ooo_bytes -= s.len as u64;
            c.rcv_nxt = c.rcv_nxt.max(s.off + s.len as u64);
            c.cache.push_back(s);
        }
        if len > 0 {
            self.early_ack(ci, tsecr);
        }
        self.note_cache(ci);
        if self.conns[ci].timer.is_none() {
            self.arm(ci, cx.now);
        }
        verdict
    }

    /// Must new segment `p` (data offset `off`) wait in the cache (beyond the UE's receive
    /// window, RLC too full, or earlier data waits)?
    fn must_hold(&self, ci: usize, cx: &Ctx, p: &Packet, off: u64) -> bool {
        let c = &self.conns[ci];
        if c.held > 0 || c.beyond_ue_window(off + p.payload_len as u64) {
            return true;
        }
        if self.p.rlc_hold == 0 {
            return false;
        }
        let q = c
            .rnti
            .and_then(|r| cx.ran.and_then(|v| v.rlc_queue_bytes(r, cx.now)))
            .unwrap_or(0);
        let before = q + self.out_down;
        // The packet's length (its TCP options' encoding) is needed only near the mark: below
        // it by the largest headers, it cannot reach it.
        let most = IPV4_HEADER_LEN + TCP_HEADER_LEN + MAX_OPTIONS_LEN + p.payload_len;
        before + most as u64 > self.p.rlc_hold && before + p.len() as u64 > self.p.rlc_hold
    }

    /// Hand held segments to PDCP, in order, while RLC has room below the hold mark and they
    /// lie within the UE's receive window.
    #[inline]
    fn release(&mut self, ci: usize, now: Time, ran: Option<&dyn RanView>) {
        if self.conns[ci].held > 0 {
            self.release_held(ci, now, ran);
        }
    }

    fn release_held(&mut self, ci: usize, now: Time, ran: Option<&dyn RanView>) {
        let hold = self.p.rlc_hold;
        let c = &mut self.conns[ci];
        let q = c
            .rnti
            .and_then(|r| ran.and_then(|v| v.rlc_queue_bytes(r, now)))
            .unwrap_or(0);
        let mut room = if hold == 0 {
            u64::MAX
        } else {
            hold.saturating_sub(q + self.out_down)
        };
        let edge = c.ue_edge;
        let i = c.cache.partition_point(|s| s.off < c.held_from);
        let mut next = None;
        for s in c.cache.range_mut(i..).chain(c.ooo.iter_mut()) {
            if s.sent {
                continue;
            }
            let len = s.pkt.len() as u64;
            if len > room || edge.is_some_and(|e| s.off + s.len as u64 > e) {
                next = Some(s.off);
                break;
            }
            room -= len;
            s.sent = true;
            c.held -= 1;
            self.out_down += len;
            self.out_down_packets += 1;
            self.out.emit(s.pkt);
        }
        c.held_from = next.unwrap_or(c.rcv_nxt);
        if c.held == 0 {
            c.held_from = 0;
        }
    }

    /// Record that `seg` is held (not handed to PDCP).
    fn note_held(c: &mut Conn, off: u64) {
        if c.held == 0 || off < c.held_from {
            c.held_from = off;
        }
        c.held += 1;
        c.c.held_packets += 1;
    }

    #[inline]
    fn note_cache(&mut self, ci: usize) {
        let c = &mut self.conns[ci];
        c.c.cache_max_bytes = c.c.cache_max_bytes.max(c.occupancy());
    }

    /// A packet from the UE (UlEgress).
    fn on_ue_packet(&mut self, cx: &Ctx, ci: usize, p: &mut Packet) -> Verdict {
        let active = self.active();
        let cache = self.p.cache;
        let c = &mut self.conns[ci];
        c.rnti = cx.rnti.or(c.rnti);
        let t = p.as_tcp().expect("classified TCP");
        let adv = p.payload_len + t.flags.syn() as u32 + t.flags.fin() as u32;
        let end = t.seq.wrapping_add(adv);
        if t.flags.syn() || end.wrapping_sub(c.ue_seq) as i32 > 0 {
            c.ue_seq = end;
        }
        if let Some((tsval, _)) = t.options.timestamps {
            c.ue_tsval = Some(tsval);
        }
        if t.flags.syn() {
            c.ue_ws = t.options.window_scale;
            c.ue_sack = t.options.sack_permitted;
            c.ue_syn = true;
            return Verdict::Pass;
        }
        let Some(_) = c.irs else {
            return Verdict::Pass;
        };
        if !t.flags.ack() || t.flags.rst() {
            return Verdict::Pass;
        }
        let a = c.off_near(t.ack, c.una).max(0) as u64;
        // The UE's receive window, in its own scale (RFC 7323 §2.3; the proxy's early ACKs
        // speak for the UE in the same scale).
        let edge = a + ((t.window as u64) << c.shift());
        let edge_grew = c.ue_edge.is_none_or(|e| edge > e);
        if edge_grew {
            c.ue_edge = Some(edge);
        }
        if a > c.una {
            c.c.delivered_bytes =
                c.c.delivered_bytes
                    .max(a.min(c.fin_off.unwrap_or(u64::MAX)));
        }
        if !active {
            c.una = c.una.max(a);
            return Verdict::Pass;
        }
        // Free what the UE has.
        let advanced = a > c.una;
        if advanced {
            c.una = a.min(c.rcv_nxt.max(c.fin_off.map_or(0, |f| f + 1)));
            // Read in place; the popped segment is not copied out.
            while let Some(s) = c.cache.front() {
                if s.end() > c.una {
                    break;
                }
                c.held -= !s.sent as u64;
                c.cache.pop_front();
            }
            c.rtx_una = None;
        }
        let fin_covered = c.fin_off.is_some_and(|f| a > f);
        let plain = p.payload_len == 0 && !t.flags.fin();
        // Until the proxy has sent an early ACK, the UE's ACKs are the only ones the server
        // gets: the ACK that completes a handshake the UE opened (RFC 9293 §3.5; an M2M device
        // connecting to its server), and any repeat of it, pass untouched.
        if plain && c.last_early.is_none() {
            return Verdict::Pass;
        }
        if !plain || fin_covered {
            if fin_covered {
                c.fin_acked = true;
            }
            // End to end: keep the server's view monotone.
            if !fin_covered {
                let ours = c.seq(c.rcv_nxt);
                let tm = p.as_tcp_mut().expect("tcp");
                if ours.wrapping_sub(tm.ack) as i32 > 0 {
                    tm.ack = ours;
                }
            }
            self.arm(ci, cx.now);
            return Verdict::Pass;
        }
        c.c.ue_acks_consumed += 1;
        if advanced || edge_grew {
            let (w, _) = c.window(cache);
            if c.window_closed && w >= c.mss.max(1) as u64 {
                // §III.A: the cache frees after being full: the last early ACK, new window.
                let (_, field) = c.window(cache);
                if let Some(mut last) = c.last_early {
                    last.as_tcp_mut().expect("tcp").window = field;
                    c.window_closed = false;
                    c.last_early = Some(last);
                    c.c.window_updates += 1;
                    c.c.early_acks += 1;
                    self.out_down_packets += self.ack_is_down[ci] as usize;
                    self.out.emit(last);
                }
            }
            // Without progress this is a window update, not a duplicate ACK (RFC 5681 §2: a
            // duplicate ACK leaves the advertised window unchanged): it may let held data go,
            // and the timer keeps running from the UE's last progress.
            if advanced {
                self.arm(ci, cx.now);
            }
            self.release(ci, cx.now, cx.ran);
            return Verdict::Consume;
        }
        let c = &mut self.conns[ci];
        if a == c.una && !c.cache.is_empty() {
            c.c.dup_acks += 1;
            let una = c.una;
            // With SACK (RFC 2018), a duplicate ACK signals a loss only if the UE reports data
            // above its cumulative ACK; one without such a block answers a copy of data it
            // already had (RFC 5681 §4.2: an immediate ACK for any out-of-order or duplicate
            // segment; RFC 2883 D-SACK blocks lie below the ACK).
            let loss = !(c.server_sack && c.ue_sack)
                || t.options
                    .sack_blocks()
                    .iter()
                    .any(|b| c.off_near(b.left, una) > una as i64);
            if !loss {
                c.c.dup_acks_no_loss += 1;
                return Verdict::Consume;
            }
            // Once per name: further duplicates naming the same segment are the rest of the
            // same loss, or answers to segments the UE already had (our own retransmissions).
            if c.rtx_una != Some(una) && matches!(self.p.mode, ProxyMode::Pep | ProxyMode::Mmpep) {
                c.rtx_una = Some(una);
                let n = self.n(cx.ran, cx.rnti, cx.now);
                let (k, _) = self.retransmit(ci, n, una);
                let c = &mut self.conns[ci];
                if k > 0 {
                    c.c.dupack_retransmissions += 1;
                    if self.p.mode == ProxyMode::Mmpep {
                        Self::note_batch(c, k);
                    }
                }
            }
        }
        Verdict::Consume
    }

    /// A packet arriving at the UE (DlEgress): the delivery ratio's denominator.
    fn at_ue(&mut self, ci: usize, p: &Packet) {
        if p.payload_len > 0 {
            let c = &mut self.conns[ci];
            c.c.ue_data_packets += 1;
            c.c.ue_data_bytes += p.payload_len as u64;
            c.mss = c.mss.max(p.payload_len);
        }
    }
}

impl NetworkFunction for Proxy {
    fn kind(&self) -> &'static str {
        ProxyConfig::KIND
    }
    fn points(&self) -> Points {
        Points::DL_INGRESS | Points::UL_EGRESS | Points::DL_EGRESS
    }
    fn handle_packet(&mut self, cx: &Ctx, p: &mut Packet) -> Verdict {
        let Some((ci, dir)) = self.classify(p) else {
            return Verdict::Pass;
        };
        match (cx.point, dir) {
            (Point::DlIngress, Dir::Down) => self.on_server_packet(cx, ci, p),
            (Point::UlEgress, Dir::Up) => self.on_ue_packet(cx, ci, p),
            (Point::DlEgress, Dir::Down) => {
                self.at_ue(ci, p);
                self.release(ci, cx.now, cx.ran);
                Verdict::Pass
            }
            _ => Verdict::Pass,
        }
    }
    fn poll_timeout(&self) -> Option<Time> {
        self.next_timer
    }
    fn handle_timeout(&mut self, now: Time, ran: Option<&dyn RanView>) {
        for ci in 0..self.conns.len() {
            let c = &mut self.conns[ci];
            if c.timer.is_none_or(|t| t > now) {
                continue;
            }
            if c.cache.is_empty() {
                c.timer = None;
                continue;
            }
            c.c.timer_expiries += 1;
            c.rtx_una = None;
            self.release(ci, now, ran);
            let c = &mut self.conns[ci];
            let rnti = c.rnti;
            let rlc_empty = rnti
                .and_then(|r| ran.and_then(|v| v.ue_report(r, now)))
                .is_none_or(|r| r.rlc_empty);
            match self.p.mode {
                ProxyMode::Pep => {
                    let una = self.conns[ci].una;
                    let (k, _) = self.retransmit(ci, 1, una);
                    let c = &mut self.conns[ci];
                    c.c.timer_retx_packets += k;
                    if !rlc_empty {
                        c.c.timer_retx_rlc_busy += k;
                    }
                }
                ProxyMode::Mmpep => {
                    if rlc_empty {
                        let n = self.n(ran, rnti, now);
                        let una = self.conns[ci].una;
                        let (k, _) = self.retransmit(ci, n, una);
                        let c = &mut self.conns[ci];
                        c.c.timer_retx_packets += k;
                        Self::note_batch(c, k);
                    } else {
                        self.conns[ci].c.timer_deferred += 1;
                    }
                }
                ProxyMode::Off | ProxyMode::None => {}
            }
            self.arm(ci, now);
        }
        self.note_timers();
    }
    fn may_have_output(&self) -> bool {
        !self.out.is_empty()
    }
    fn poll_output(&mut self) -> Option<Output> {
        let o = self.out.pop();
        if self.out_down_packets > 0 {
            if let Some(Output::Emit(e)) = &o {
                if self.flows.iter().any(|f| f.dst == e.packet.ip.dst) {
                    self.out_down_packets -= 1;
                    self.out_down = self.out_down.saturating_sub(e.packet.len() as u64);
                }
            }
        }
        o
    }
    fn sample(&mut self, now: Time, _ran: Option<&dyn RanView>, out: &mut SampleSink) {
        let cache = self.p.cache;
        for c in &self.conns {
            if c.irs.is_none() {
                continue;
            }
            out.push(
                "proxy",
                &[
                    ("time_s", SampleValue::F64(now.as_secs_f64())),
                    ("flow_index", SampleValue::I64(c.flow as i64)),
                    ("cache_bytes", SampleValue::I64(c.occupancy() as i64)),
                    ("window_bytes", SampleValue::I64(c.window(cache).0 as i64)),
                    ("early_acked_bytes", SampleValue::I64(c.rcv_nxt as i64)),
                    ("ue_acked_bytes", SampleValue::I64(c.una as i64)),
                    ("early_acks", SampleValue::I64(c.c.early_acks as i64)),
                    ("retx_packets", SampleValue::I64(c.c.retx_packets as i64)),
                    ("batches", SampleValue::I64(c.c.batches as i64)),
                    (
                        "timer_expiries",
                        SampleValue::I64(c.c.timer_expiries as i64),
                    ),
                    (
                        "ue_data_packets",
                        SampleValue::I64(c.c.ue_data_packets as i64),
                    ),
                    (
                        "delivered_bytes",
                        SampleValue::I64(c.c.delivered_bytes as i64),
                    ),
                ],
            );
        }
    }
    fn report(&self) -> serde_json::Value {
        let reps = self.reports();
        let mut total = ConnCounters {
            batch_min: u64::MAX,
            ..Default::default()
        };
        let mut delivered = 0;
        for r in &reps {
            total.add(&r.c);
            delivered += r.packets_delivered;
        }
        if total.batch_min == u64::MAX {
            total.batch_min = 0;
        }
        let mut v = serde_json::to_value(total).expect("plain struct");
        let n_given = self
            .p
            .alpha
            .map(|a| batch_size(a, self.p.beta, self.p.sigma, self.p.confidence));
        let alpha = self.p.alpha.or(self.last_alpha);
        v["mode"] = self.p.mode.name().into();
        v["cache_limit_bytes"] = self.p.cache.into();
        v["alpha"] = alpha.into();
        v["alpha_measured"] = self.p.alpha.is_none().into();
        v["beta_slots"] = self.p.beta.into();
        v["gamma"] = alpha
            .map(|a| gamma(a, self.p.beta as f64, self.p.sigma, self.p.confidence))
            .into();
        v["batch_size"] = match self.p.mode {
            ProxyMode::Pep => Some(1),
            ProxyMode::Mmpep => n_given.or(self.last_n),
            _ => None,
        }
        .into();
        v["timer_s"] = self.p.timer.as_secs_f64().into();
        v["packets_delivered"] = delivered.into();
        v["delivery_ratio"] = (total.ue_data_packets > 0)
            .then(|| delivered.min(total.ue_data_packets) as f64 / total.ue_data_packets as f64)
            .into();
        v["connections"] = serde_json::to_value(&reps).expect("plain structs");
        v
    }
}
