//! `ack_filter`: TCP ACK filtering in the UE's uplink IP buffer (seed 000, §II.A "Proposed
//! Schemes" and §III.A Equ. (1)–(2); design.md §5). Pure TCP ACKs waiting for an uplink grant
//! are intentionally discarded when a newer queued ACK of the same connection makes them
//! redundant (TCP ACKs are cumulative, RFC 9293 §3.4), so that fewer ACKs use uplink radio
//! resources and the core network.
//!
//! Modes (`mode`):
//! * `none` — the paper's "Basic": nothing is discarded (counters only);
//! * `passive` with `ratio` r — at each uplink grant ([`BufferEvent::Grant`]), with `fit` = the
//!   newest queued ACKs that fit the granted bytes and `excess` = queued ACKs − `fit`, discard
//!   the floor(r · excess) oldest discardable ACKs; the owner then sends FIFO. `granted` is
//!   r = 1 ("Granted ACK");
//! * `active` with `threshold` T — on every ACK arrival ([`BufferEvent::Arrival`]) keep at most
//!   T queued ACKs of that connection, discarding the oldest discardable ones; `highest` is
//!   T = 1 ("Highest ACK"). The paper's ratio is 1 − T/100;
//! * `hybrid` with T — active(T) on arrival and granted at each grant;
//! * `hybrid-opt` — hybrid with, per UE and connection, T_opt = max(⌊N_ack⌋, 1),
//!   N_ack = S_TBS / (2 (S_seg + S_header)) (Equ. (1)–(2)). S_TBS, the UE's long-term average
//!   downlink TBS, as `s_tbs` chooses: `full-band` (default; how the paper's Table I derives
//!   it from the UE's average MCS) = the mean, over the UE's ACK arrivals since its first CQI,
//!   (sampled at most once per slot) of the transport block of all PRBs at its current MCS
//!   ([`rantcp_nf::UeReport::dl_full_tbs_bytes`]); `scheduled` = the mean size of the UE's new
//!   downlink transport blocks since its first one ([`rantcp_nf::UeReport::avg_dl_tbs_bytes`],
//!   smaller when the scheduler shares PRBs). Window: the whole run so far in both (the
//!   paper's per-UE averages), so T_opt settles as the run goes on. S_seg is the MSS
//!   the UE announced in its SYN or SYN-ACK (RFC 9293 §3.7.1: the largest segment it will
//!   receive; 536 bytes when absent or unseen, or `segment_bytes`), S_header = `header_bytes`
//!   (58: TCP/IP 52 + PDCP/RLC/MAC 6, §III.B). While S_TBS is unknown (no CQI or no downlink
//!   block yet) only the granted step acts.
//!
//! # What is never discarded
//! An *ACK* here is TCP with the ACK flag, no payload and no SYN ([`is_ack`]). Data segments
//! and SYNs are never touched. Among ACKs, each kept-for-a-reason is counted under that reason:
//! * `flags`: SYN, FIN, RST, URG, ECE or CWR set (RFC 9293 §3.1; RFC 3168 §6.1: ECE/CWR carry
//!   congestion signals that no later ACK repeats);
//! * `options`: MSS, window scale, SACK-permitted or the AS-TCP option on a non-SYN segment
//!   (unexpected, so kept as CAKE keeps unknown options);
//! * `duplicate`: its acknowledgment number equals the highest one the connection had sent
//!   before it (RFC 5681 §2 duplicate ACK; the sender's fast retransmit counts them);
//! * relation to the newer queued ACKs of the connection — an ACK A is discardable only if
//!   some newer queued ACK N *covers* it: N acknowledges strictly more (so the first ACK of a
//!   run of duplicates is kept too); every SACK block of A lies below N's cumulative ACK or
//!   inside one of N's SACK blocks, and A has no D-SACK (RFC 2018 §4, RFC 2883) — else
//!   `sack`; N's timestamps are not older than A's (RFC 7323 §4.3, §5.3) — else `timestamp`;
//!   N's right window edge (ACK + window << scale) is not left of A's (RFC 9293 §3.8.6) — else
//!   `window`; when no newer ACK of the connection is queued — `newest`.
//!
//! # Where rantcp differs from Linux CAKE's `ack-filter` (net/sched/sch_cake.c,
//! `cake_ack_filter` / `cake_tcph_may_drop` / `cake_tcph_sack_compare`)
//! CAKE filters on enqueue and drops at most one ACK per arriving ACK (two eligible in normal
//! mode, one in aggressive mode), comparing each queued ACK only with the arriving one. Its
//! per-ACK rules are the same as ours for payload, SYN/FIN/RST/URG, unknown and SYN-only
//! options, timestamps (drop only if not newer than the trigger's) and D-SACK. It differs:
//! * CAKE drops an ACK with the *same* acknowledgment number when the newer one SACKs more
//!   (i.e. duplicate ACKs carrying growing SACK blocks); rantcp never drops duplicate ACKs, as
//!   seed 000 requires;
//! * CAKE drops ECE/CWR ACKs when their ECE/CWR bits equal those of the next eligible ACK;
//!   rantcp never drops them;
//! * CAKE refuses to drop an empty ACK with PSH; rantcp treats PSH on an empty segment as
//!   meaningless (RFC 9293 §3.9.1: PSH concerns data) and may drop it;
//! * CAKE ignores the advertised window; rantcp keeps an ACK whose window edge is right of
//!   every newer ACK's (a shrunk window, RFC 9293 §3.8.6);
//! * the *amount* discarded is seed 000's (threshold T per arrival, ratio r of the excess over
//!   the grant), which CAKE does not have.
//!
//! # Counters and series
//! `report()` gives per UE and per cell: ACKs arrived, discarded by the active step and by the
//! passive step, kept by reason, handed to PDCP ("sent", predicted from the grant's documented
//! FIFO drain: RLC bytes first, then packets while the grant has room, each costing
//! `overhead_bytes` on top of its IP length), the uplink bytes (IP + PDCP/RLC headers) and PRBs
//! (the transport block's PRBs × the ACKs' share of its bytes) spent on them, and the T_opt
//! values used (hybrid-opt: ACK arrivals per T). `sample()` writes the table `ack_filter_ue`:
//! per UE and sample time the uplink buffer's bytes and the filter's state.

use crate::{BuildEnv, FunctionConfig};
use rantcp_config::reads::{FieldUse, Unreads};
use rantcp_config::{check, ConfigError};
use rantcp_core::Time;
use rantcp_nf::{
    Attach, BufferEvent, Ctx, FlowKey, NetworkFunction, Points, RanView, Rnti, SampleSink,
    SampleValue, Site, UlBuffer, UlEntry,
};
use rantcp_wire::{Packet, TcpHeader, Transport};
use rustc_hash::FxHashMap;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, VecDeque};

/// RFC 9293 §3.7.1: the MSS a sender assumes when the peer sent no MSS option.
pub const DEFAULT_MSS: u32 = 536;

/// Seed 000 §III.B: S_header = TCP/IP 52 + MAC/RLC/PDCP 6 bytes.
pub const SEED_HEADER_BYTES: u32 = 58;

/// Which discard scheme (seed 000 §II.A).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum AckFilterMode {
    /// "Basic": discard nothing, count only.
    None,
    /// Passive Discard with `ratio`.
    Passive,
    /// Passive Discard with ratio 1 ("Granted ACK").
    Granted,
    /// Active Discard with `threshold`.
    Active,
    /// Active Discard with threshold 1 ("Highest ACK").
    Highest,
    /// Active(`threshold`) on arrival + Granted ACK at each grant.
    Hybrid,
    /// Hybrid with T_opt per UE and connection (Equ. (2)).
    HybridOpt,
}

impl AckFilterMode {
    fn name(self) -> &'static str {
        match self {
            AckFilterMode::None => "none",
            AckFilterMode::Passive => "passive",
            AckFilterMode::Granted => "granted",
            AckFilterMode::Active => "active",
            AckFilterMode::Highest => "highest",
            AckFilterMode::Hybrid => "hybrid",
            AckFilterMode::HybridOpt => "hybrid-opt",
        }
    }
}

/// `[functions.ack_filter]`. Absent `mode`: not attached at all.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AckFilterConfig {
    /// "none", "passive", "granted", "active", "highest", "hybrid" or "hybrid-opt" (absent:
    /// the filter is not attached).
    #[serde(default)]
    pub mode: Option<AckFilterMode>,
    /// Passive Discard's discard ratio r in [0, 1] (mode "passive" only).
    #[serde(default)]
    #[schemars(range(min = 0.0, max = 1.0))]
    pub ratio: Option<f64>,
    /// Active Discard's threshold T >= 1: ACKs of a connection kept queued (modes "active",
    /// "hybrid").
    #[serde(default)]
    #[schemars(range(min = 1, max = 100000))]
    pub threshold: Option<u32>,
    /// hybrid-opt: S_seg in bytes instead of the MSS each UE announced.
    #[serde(default)]
    #[schemars(range(min = 1, max = 65535))]
    pub segment_bytes: Option<u32>,
    /// hybrid-opt: S_TBS from "full-band" (the TBS of all PRBs at the UE's MCS, averaged) or
    /// "scheduled" (the mean size of its new DL transport blocks).
    #[serde(default)]
    pub s_tbs: STbs,
    /// hybrid-opt: S_header, bytes (seed 000: 58).
    #[serde(default = "d_header")]
    #[schemars(range(max = 1000))]
    pub header_bytes: u32,
}

/// How hybrid-opt measures S_TBS (see the module docs).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum STbs {
    #[default]
    FullBand,
    Scheduled,
}

fn d_header() -> u32 {
    SEED_HEADER_BYTES
}

/// The table's defaults whether it is absent or written empty (a derived `Default` gave
/// `header_bytes` 0 for an absent table, 58 for an empty one, and the echo said 0).
impl Default for AckFilterConfig {
    fn default() -> Self {
        AckFilterConfig {
            mode: None,
            ratio: None,
            threshold: None,
            segment_bytes: None,
            s_tbs: STbs::default(),
            header_bytes: d_header(),
        }
    }
}

/// The discard steps a mode runs.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Steps {
    None,
    Passive(f64),
    Active(u32),
    Hybrid(u32),
    HybridOpt,
}

impl AckFilterConfig {
    fn steps(&self) -> Steps {
        match self.mode {
            None | Some(AckFilterMode::None) => Steps::None,
            Some(AckFilterMode::Passive) => Steps::Passive(self.ratio.unwrap_or(0.0)),
            Some(AckFilterMode::Granted) => Steps::Passive(1.0),
            Some(AckFilterMode::Active) => Steps::Active(self.threshold.unwrap_or(1)),
            Some(AckFilterMode::Highest) => Steps::Active(1),
            Some(AckFilterMode::Hybrid) => Steps::Hybrid(self.threshold.unwrap_or(1)),
            Some(AckFilterMode::HybridOpt) => Steps::HybridOpt,
        }
    }

    /// The function itself (what `build` attaches), for tests and other owners.
    pub fn function(&self) -> AckFilter {
        AckFilter {
            mode: self.mode.unwrap_or(AckFilterMode::None),
            steps: self.steps(),
            segment_bytes: self.segment_bytes,
            header_bytes: self.header_bytes,
            s_tbs: self.s_tbs,
            ues: FxHashMap::default(),
            flows: FxHashMap::default(),
            scratch: Vec::new(),
        }
    }
}

/// `mode` switches the filter on and picks its steps; each parameter is one mode's.
impl FieldUse for AckFilterConfig {
    const ALWAYS: &'static [&'static str] = &["mode"];
    const CONDITIONAL: &'static [&'static str] = &[
        "ratio",
        "threshold",
        "segment_bytes",
        "s_tbs",
        "header_bytes",
    ];
}

impl FunctionConfig for AckFilterConfig {
    const KIND: &'static str = "ack_filter";

    fn enabled(&self) -> bool {
        self.mode.is_some()
    }

    fn off_because(&self, p: &str) -> String {
        format!("{p}.mode is absent (the filter is not attached)")
    }

    /// What [`AckFilterConfig::steps`] and the hybrid-opt step read, by mode.
    fn unread(&self, p: &str, out: &mut Unreads) {
        let Some(mode) = self.mode else {
            out.unless(false, p, Self::CONDITIONAL, || self.off_because(p));
            return;
        };
        let because = || format!("{p}.mode = {:?}", mode.name());
        out.unless(mode == AckFilterMode::Passive, p, &["ratio"], because);
        out.unless(
            matches!(mode, AckFilterMode::Active | AckFilterMode::Hybrid),
            p,
            &["threshold"],
            because,
        );
        out.unless(
            mode == AckFilterMode::HybridOpt,
            p,
            &["segment_bytes", "s_tbs", "header_bytes"],
            because,
        );
    }

    /// Every value is checked whatever the mode; one a mode does not read is a warning
    /// ([`FunctionConfig::unread`]), one it needs and lacks an error.
    fn validate(&self, p: &str) -> Result<(), ConfigError> {
        let mode = self.mode.map_or("absent", AckFilterMode::name);
        let passive = self.mode == Some(AckFilterMode::Passive);
        check(
            self.ratio.is_some() || !passive,
            &format!("{p}.ratio"),
            "required with mode \"passive\": a ratio in [0, 1]",
        )?;
        if let Some(r) = self.ratio {
            check(
                (0.0..=1.0).contains(&r),
                &format!("{p}.ratio"),
                "must be in [0, 1]",
            )?;
        }
        let with_t = matches!(
            self.mode,
            Some(AckFilterMode::Active | AckFilterMode::Hybrid)
        );
        check(
            self.threshold.is_some() || !with_t,
            &format!("{p}.threshold"),
            format!("required with mode {mode:?}: an integer >= 1"),
        )?;
        if let Some(t) = self.threshold {
            check(
                (1..=100_000).contains(&t),
                &format!("{p}.threshold"),
                "must be an integer in [1, 100000]",
            )?;
        }
        if let Some(s) = self.segment_bytes {
            check(
                (1..=65535).contains(&s),
                &format!("{p}.segment_bytes"),
                "must be an integer in [1, 65535]",
            )?;
        }
        check(
            self.header_bytes <= 1000,
            &format!("{p}.header_bytes"),
            "must be an integer in [0, 1000]",
        )
    }

    fn build(&self, p: &str, env: &BuildEnv) -> Result<Vec<Attach>, ConfigError> {
        if !self.enabled() {
            return Ok(vec![]);
        }
        check(
            env.radio.is_some(),
            &format!("{p}.mode"),
            "the ACK filter sits in the UE uplink buffer and this scenario has no radio (allowed: scenarios with a radio access network)",
        )?;
        Ok(vec![Attach {
            site: Site::Ran,
            function: Box::new(self.function()),
        }])
    }
}

/// Why an ACK a discard step selected was kept.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(usize)]
pub enum Kept {
    Flags,
    Options,
    Duplicate,
    Newest,
    Sack,
    Timestamp,
    Window,
}

impl Kept {
    pub const ALL: [Kept; 7] = [
        Kept::Flags,
        Kept::Options,
        Kept::Duplicate,
        Kept::Newest,
        Kept::Sack,
        Kept::Timestamp,
        Kept::Window,
    ];
    pub fn name(self) -> &'static str {
        match self {
            Kept::Flags => "flags",
            Kept::Options => "options",
            Kept::Duplicate => "duplicate",
            Kept::Newest => "newest",
            Kept::Sack => "sack",
            Kept::Timestamp => "timestamp",
            Kept::Window => "window",
        }
    }
}

/// Counters of one UE (cumulative).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct AckCounters {
    /// Pure ACKs into the uplink buffer.
    pub arrived: u64,
    /// Discarded by the active step (on arrival) and the passive step (at a grant).
    pub discarded_active: u64,
    pub discarded_passive: u64,
    /// ACKs a step selected but kept, by [`Kept`] reason (an ACK spared at several steps
    /// counts at each).
    pub kept: [u64; 7],
    /// ACKs handed to PDCP, their bytes with PDCP/RLC headers, and the PRBs they took.
    pub sent: u64,
    pub sent_bytes: u64,
    /// Their IP bytes alone (what reaches the core network).
    pub sent_ip_bytes: u64,
    pub sent_prbs: f64,
    /// Grants seen.
    pub grants: u64,
}

impl AckCounters {
    fn add(&mut self, o: &AckCounters) {
        self.arrived += o.arrived;
        self.discarded_active += o.discarded_active;
        self.discarded_passive += o.discarded_passive;
        for k in 0..self.kept.len() {
            self.kept[k] += o.kept[k];
        }
        self.sent += o.sent;
        self.sent_bytes += o.sent_bytes;
        self.sent_ip_bytes += o.sent_ip_bytes;
        self.sent_prbs += o.sent_prbs;
        self.grants += o.grants;
    }
    fn json(&self) -> serde_json::Value {
        let kept: serde_json::Map<String, serde_json::Value> = Kept::ALL
            .iter()
            .map(|k| (k.name().to_string(), self.kept[*k as usize].into()))
            .collect();
        serde_json::json!({
            "acks_arrived": self.arrived,
            "acks_discarded": self.discarded_active + self.discarded_passive,
            "discarded_active": self.discarded_active,
            "discarded_passive": self.discarded_passive,
            "kept": kept,
            "acks_sent": self.sent,
            "ack_bytes_sent": self.sent_bytes,
            "ack_ip_bytes_sent": self.sent_ip_bytes,
            "ack_prbs": self.sent_prbs,
            "grants": self.grants,
        })
    }
}

/// State of one UE.
#[derive(Clone, Debug, Default)]
struct UeState {
    cell: Option<usize>,
    counters: AckCounters,
    /// Ids of queued ACKs that were duplicates on arrival, ascending.
    dups: VecDeque<u64>,
    /// hybrid-opt, `full-band`: the sum and count of the samples averaged.
    full_sum: f64,
    full_n: u64,
    /// hybrid-opt: when S_TBS was last sampled (at most once per slot).
    sampled_at: Option<Time>,
    /// hybrid-opt: the S_TBS and T_opt of the latest sample (0: not yet known).
    s_tbs: f64,
    t_opt: u32,
    /// hybrid-opt: ACK arrivals per T_opt in force.
    t_used: BTreeMap<u32, u64>,
}

/// State of one connection (uplink direction, the ACKs' 5-tuple).
#[derive(Clone, Copy, Debug, Default)]
struct FlowState {
    /// Highest acknowledgment number sent into the buffer so far.
    last_ack: Option<u32>,
    /// MSS and window shift the UE announced in its SYN / SYN-ACK.
    mss: Option<u16>,
    wscale: u8,
}

/// The function. See the module docs.
pub struct AckFilter {
    mode: AckFilterMode,
    steps: Steps,
    segment_bytes: Option<u32>,
    header_bytes: u32,
    s_tbs: STbs,
    ues: FxHashMap<Rnti, UeState>,
    flows: FxHashMap<FlowKey, FlowState>,
    /// Ids collected for one step (reused, so steps do not allocate).
    scratch: Vec<u64>,
}

/// An ACK the filter counts and may consider: TCP with the ACK flag, no payload and no SYN
/// (a SYN-ACK opens the connection; it acknowledges no data). FIN, RST, URG, ECE and CWR ACKs
/// are counted but never discarded ([`Kept::Flags`]); PSH means nothing without data.
#[inline]
pub fn is_ack(p: &Packet) -> bool {
    match &p.transport {
        Transport::Tcp(t) => p.payload_len == 0 && t.flags.ack() && !t.flags.syn(),
        Transport::Udp(_) | Transport::Icmp(_) => false,
    }
}

/// `a` is after `b` in sequence space (RFC 9293 §3.4 modular comparison).
#[inline]
fn after(a: u32, b: u32) -> bool {
    (a.wrapping_sub(b) as i32) > 0
}

/// An ACK's own reason to be kept, whatever is queued behind it.
fn intrinsic(t: &TcpHeader) -> Option<Kept> {
    const SYN_FIN_RST_URG_ECE_CWR: u8 = 0x01 | 0x02 | 0x04 | 0x20 | 0x40 | 0x80;
    if t.flags.0 & SYN_FIN_RST_URG_ECE_CWR != 0 {
        return Some(Kept::Flags);
    }
    let o = &t.options;
    if o.mss.is_some() || o.window_scale.is_some() || o.sack_permitted || o.as_tcp_ack.is_some() {
        return Some(Kept::Options);
    }
    None
}

/// Does newer ACK `n` carry everything older ACK `a` tells the sender? `Err` names what
/// `n` lacks. `shift` is the connection's window scale.
fn covers(n: &TcpHeader, a: &TcpHeader, shift: u8) -> Result<(), Kept> {
    if !after(n.ack, a.ack) {
        return Err(Kept::Duplicate);
    }
    for b in a.options.sack_blocks() {
        // RFC 2883: a D-SACK reports a duplicate below the cumulative ACK; only `a` has it.
        if after(a.ack, b.left) {
            return Err(Kept::Sack);
        }
        let below = !after(b.right, n.ack);
        let inside = n
            .options
            .sack_blocks()
            .iter()
            .any(|c| !after(c.left, b.left) && !after(b.right, c.right));
        if !below && !inside {
            return Err(Kept::Sack);
        }
    }
    if let Some((va, ea)) = a.options.timestamps {
        match n.options.timestamps {
            Some((vn, en)) if !after(va, vn) && !after(ea, en) => {}
            _ => return Err(Kept::Timestamp),
        }
    }
    let edge = |t: &TcpHeader| t.ack.wrapping_add((t.window as u32) << shift.min(14));
    if after(edge(a), edge(n)) {
        return Err(Kept::Window);
    }
    Ok(())
}

impl AckFilter {
    /// The mode's name.
    pub fn mode(&self) -> &'static str {
        self.mode.name()
    }

    /// Counters of UE `rnti` so far.
    pub fn counters(&self, rnti: Rnti) -> Option<&AckCounters> {
        self.ues.get(&rnti).map(|u| &u.counters)
    }

    /// T_opt (Equ. (1)–(2)) for a mean downlink TBS `s_tbs` and segment size `s_seg`.
    pub fn t_opt(s_tbs: f64, s_seg: u32, header: u32) -> u32 {
        let n_ack = s_tbs / (2.0 * (s_seg + header) as f64);
        (n_ack.floor() as u32).max(1)
    }

    /// Can queued ACK `id` of UE `u` go? `Ok` or the reason it is kept.
    fn discardable(&self, q: &UlBuffer, dups: &VecDeque<u64>, e: &UlEntry) -> Result<(), Kept> {
        let Some(t) = e.packet.as_tcp() else {
            return Err(Kept::Flags);
        };
        if let Some(r) = intrinsic(t) {
            return Err(r);
        }
        if dups.binary_search(&e.id).is_ok() {
            return Err(Kept::Duplicate);
        }
        let shift = self.flows.get(&e.flow).map_or(0, |f| f.wscale);
        // The newest newer ACK usually covers it; otherwise look at the others.
        let mut why = Kept::Newest;
        for n in q.flow_iter(&e.flow).rev() {
            if n.id <= e.id {
                break;
            }
            if !is_ack(&n.packet) {
                continue;
            }
            match covers(n.packet.as_tcp().expect("an ACK is TCP"), t, shift) {
                Ok(()) => return Ok(()),
                Err(r) => why = r,
            }
        }
        Err(why)
    }

    /// Discard up to `want` of the ACKs in `self.scratch` (oldest first) that may go; returns
    /// how many went. Kept ones are counted by reason.
    fn discard_oldest(&mut self, rnti: Rnti, q: &mut UlBuffer, want: usize) -> u64 {
        let mut ids = std::mem::take(&mut self.scratch);
        let mut u = self.ues.remove(&rnti).unwrap_or_default();
        let mut gone = 0;
        for &id in &ids {
            if gone as usize >= want {
                break;
            }
            let Some(e) = q.get(id) else { continue };
            match self.discardable(q, &u.dups, e) {
                Ok(()) => {
                    q.discard(id);
                    gone += 1;
                }
                Err(r) => u.counters.kept[r as usize] += 1,
            }
        }
        ids.clear();
        self.scratch = ids;
        self.ues.insert(rnti, u);
        gone
    }

    /// Active Discard on the arrival of ACK `id`: keep at most `t` queued ACKs of its flow.
    fn active(&mut self, rnti: Rnti, q: &mut UlBuffer, flow: FlowKey, t: u32) {
        self.scratch.clear();
        self.scratch.extend(
            q.flow_iter(&flow)
                .filter(|e| is_ack(&e.packet))
                .map(|e| e.id),
        );
        let excess = self.scratch.len().saturating_sub(t as usize);
        if excess > 0 {
            let n = self.discard_oldest(rnti, q, excess);
            self.ue(rnti).counters.discarded_active += n;
        }
    }

    /// Passive Discard at a grant of `room` bytes for IP packets, each costing `overhead`.
    fn passive(&mut self, rnti: Rnti, q: &mut UlBuffer, room: u64, overhead: u32, ratio: f64) {
        // Room left for ACKs after the packets that are never discarded (they drain too).
        let others: u64 = q
            .iter()
            .filter(|e| !is_ack(&e.packet))
            .map(|e| (e.bytes() + overhead) as u64)
            .sum();
        let mut left = room.saturating_sub(others);
        self.scratch.clear();
        self.scratch
            .extend(q.iter().filter(|e| is_ack(&e.packet)).map(|e| e.id));
        // fit: the newest ACKs that fit whole.
        let mut fit = 0usize;
        for &id in self.scratch.iter().rev() {
            let c = (q.get(id).expect("queued").bytes() + overhead) as u64;
            if c > left {
                break;
            }
            left -= c;
            fit += 1;
        }
        let excess = self.scratch.len() - fit;
        let want = (ratio * excess as f64 + 1e-9).floor() as usize;
        if want > 0 {
            let n = self.discard_oldest(rnti, q, want);
            self.ue(rnti).counters.discarded_passive += n;
        }
    }

    fn ue(&mut self, rnti: Rnti) -> &mut UeState {
        self.ues.entry(rnti).or_default()
    }

    /// S_seg of `flow` (the ACKs' direction).
    fn s_seg(&self, flow: &FlowKey) -> u32 {
        self.segment_bytes.unwrap_or_else(|| {
            self.flows
                .get(flow)
                .and_then(|f| f.mss)
                .map_or(DEFAULT_MSS, u32::from)
        })
    }

    fn arrival(&mut self, cx: &Ctx, id: u64, q: &mut UlBuffer) {
        let rnti = cx.rnti.unwrap_or(0);
        if self.steps == Steps::None {
            // Basic counts and discards nothing: the connections' state (MSS, window scale,
            // highest ACK) and the duplicate marks serve only the discard steps.
            if q.get(id).is_some_and(|e| is_ack(&e.packet)) {
                self.ue(rnti).counters.arrived += 1;
            }
            return;
        }
        let Some(e) = q.get(id) else { return };
        let Transport::Tcp(t) = &e.packet.transport else {
            return;
        };
        let flow = e.flow;
        let (ack, syn, mss, ws) = (t.ack, t.flags.syn(), t.options.mss, t.options.window_scale);
        let pure = is_ack(&e.packet);
        let fs = self.flows.entry(flow).or_default();
        if syn {
            fs.mss = mss;
            fs.wscale = ws.unwrap_or(0);
        }
        if !pure {
            return;
        }
        let dup = fs.last_ack == Some(ack);
        if fs.last_ack.is_none_or(|l| after(ack, l)) {
            fs.last_ack = Some(ack);
        }
        let head = q.front().map_or(id, |f| f.id);
        let u = self.ue(rnti);
        u.counters.arrived += 1;
        while u.dups.front().is_some_and(|&d| d < head) {
            u.dups.pop_front();
        }
        if dup {
            u.dups.push_back(id);
        }
        let t = match self.steps {
            Steps::Active(t) | Steps::Hybrid(t) => t,
            Steps::HybridOpt => {
                let slot = cx.ran.map_or(rantcp_core::Duration::ZERO, |v| v.slot());
                let u = self.ue(rnti);
                let fresh = u.sampled_at.is_some_and(|t| cx.now < t + slot);
                let t = if fresh {
                    // S_TBS was sampled in this slot: the same T_opt.
                    u.t_opt
                } else {
                    match self.sample_t_opt(cx, rnti, &flow) {
                        Some(t) => t,
                        None => return,
                    }
                };
                if t == 0 {
                    return;
                }
                *self.ue(rnti).t_used.entry(t).or_default() += 1;
                t
            }
            Steps::None | Steps::Passive(_) => return,
        };
        self.active(rnti, q, flow, t);
    }

    /// hybrid-opt: sample S_TBS from the RAN report and compute T_opt (None: no report).
    fn sample_t_opt(&mut self, cx: &Ctx, rnti: Rnti, flow: &FlowKey) -> Option<u32> {
        {
            {
                let r = cx.ran.and_then(|v| v.ue_report(rnti, cx.now))?;
                let s_seg = self.s_seg(flow);
                let header = self.header_bytes;
                let how = self.s_tbs;
                let u = self.ue(rnti);
                u.cell = Some(r.cell);
                u.sampled_at = Some(cx.now);
                let s_tbs = match how {
                    STbs::Scheduled => r.avg_dl_tbs_bytes,
                    STbs::FullBand => {
                        if r.dl_full_tbs_bytes > 0.0 {
                            u.full_sum += r.dl_full_tbs_bytes;
                            u.full_n += 1;
                        }
                        u.full_sum / u.full_n.max(1) as f64
                    }
                };
                if s_tbs <= 0.0 {
                    return Some(0);
                }
                let t = Self::t_opt(s_tbs, s_seg, header);
                u.s_tbs = s_tbs;
                u.t_opt = t;
                Some(t)
            }
        }
    }

    fn grant(&mut self, cx: &Ctx, ev: BufferEvent, q: &mut UlBuffer) {
        let BufferEvent::Grant {
            bytes,
            overhead_bytes,
            rlc_bytes,
            n_prb,
        } = ev
        else {
            return;
        };
        let rnti = cx.rnti.unwrap_or(0);
        let room = (bytes as u64).saturating_sub(rlc_bytes);
        match self.steps {
            Steps::Passive(r) => self.passive(rnti, q, room, overhead_bytes, r),
            Steps::Hybrid(_) | Steps::HybridOpt => self.passive(rnti, q, room, overhead_bytes, 1.0),
            Steps::None | Steps::Active(_) => {}
        }
        // What the owner drains next (BufferEvent::Grant): RLC bytes first, then packets FIFO
        // while the grant has room.
        let mut have = rlc_bytes;
        let (mut n, mut b, mut ip) = (0u64, 0u64, 0u64);
        for e in q.iter() {
            if have >= bytes as u64 {
                break;
            }
            let c = (e.bytes() + overhead_bytes) as u64;
            have += c;
            if is_ack(&e.packet) {
                n += 1;
                b += c;
                ip += e.bytes() as u64;
            }
        }
        let u = self.ue(rnti);
        if u.cell.is_none() {
            // A UE keeps its cell (no handover); the report is read once.
            u.cell = cx
                .ran
                .and_then(|v| v.ue_report(rnti, cx.now))
                .map(|r| r.cell);
        }
        let c = &mut u.counters;
        c.grants += 1;
        c.sent += n;
        c.sent_bytes += b;
        c.sent_ip_bytes += ip;
        if bytes > 0 {
            c.sent_prbs += n_prb as f64 * b.min(bytes as u64) as f64 / bytes as f64;
        }
    }
}

impl NetworkFunction for AckFilter {
    fn kind(&self) -> &'static str {
        AckFilterConfig::KIND
    }
    fn points(&self) -> Points {
        match self.steps {
            // Counting only: no look-ups by flow, so the buffer needs no flow index.
            Steps::None => Points::UE_UL_BUFFER,
            _ => Points::UE_UL_BUFFER | Points::UL_FLOW_INDEX,
        }
    }
    fn handle_ul_buffer(&mut self, cx: &Ctx, ev: BufferEvent, q: &mut UlBuffer) {
        match ev {
            BufferEvent::Arrival { id } => self.arrival(cx, id, q),
            BufferEvent::Grant { .. } => self.grant(cx, ev, q),
        }
    }
    fn sample(&mut self, now: Time, ran: Option<&dyn RanView>, out: &mut SampleSink) {
        let Some(ran) = ran else { return };
        let zero = AckCounters::default();
        for &rnti in ran.rntis() {
            // Only the buffer's size: a whole report looks at every UE of the cell.
            let Some(ul_buffer_bytes) = ran.ul_buffer_bytes(rnti, now) else {
                continue;
            };
            let u = self.ues.get(&rnti);
            let c = u.map_or(&zero, |u| &u.counters);
            out.push(
                "ack_filter_ue",
                &[
                    ("time_s", SampleValue::F64(now.as_secs_f64())),
                    ("rnti", SampleValue::I64(rnti as i64)),
                    ("ul_buffer_bytes", SampleValue::I64(ul_buffer_bytes as i64)),
                    ("acks_arrived", SampleValue::I64(c.arrived as i64)),
                    (
                        "acks_discarded",
                        SampleValue::I64((c.discarded_active + c.discarded_passive) as i64),
                    ),
                    ("acks_sent", SampleValue::I64(c.sent as i64)),
                    (
                        "ack_ip_bytes_sent",
                        SampleValue::I64(c.sent_ip_bytes as i64),
                    ),
                    ("s_tbs_bytes", SampleValue::F64(u.map_or(0.0, |u| u.s_tbs))),
                    ("t_opt", SampleValue::I64(u.map_or(0, |u| u.t_opt) as i64)),
                ],
            );
        }
    }
    fn report(&self) -> serde_json::Value {
        // Per-UE and per-cell entries are lists (the sweep store keeps only the totals as
        // columns; every entry stays in summary.json).
        let mut rntis: Vec<&Rnti> = self.ues.keys().collect();
        rntis.sort_unstable();
        let mut ues = Vec::with_capacity(rntis.len());
        let mut cells: BTreeMap<usize, AckCounters> = BTreeMap::new();
        let mut total = AckCounters::default();
        for r in rntis {
            let u = &self.ues[r];
            let mut v = u.counters.json();
            v["rnti"] = (*r).into();
            v["cell"] = u.cell.into();
            if self.steps == Steps::HybridOpt {
                let used: serde_json::Map<String, serde_json::Value> = u
                    .t_used
                    .iter()
                    .map(|(t, n)| (t.to_string(), (*n).into()))
                    .collect();
                v["t_opt"] = u.t_opt.into();
                v["t_opt_used"] = used.into();
                v["s_tbs_bytes"] = u.s_tbs.into();
            }
            ues.push(v);
            cells
                .entry(u.cell.unwrap_or(0))
                .or_default()
                .add(&u.counters);
            total.add(&u.counters);
        }
        let cells: Vec<serde_json::Value> = cells
            .iter()
            .map(|(c, k)| {
                let mut v = k.json();
                v["cell"] = (*c).into();
                v
            })
            .collect();
        let mut v = total.json();
        v["mode"] = self.mode.name().into();
        v["ues"] = ues.into();
        v["cells"] = cells.into();
        v
    }
}

#[cfg(test)]
mod tests;
