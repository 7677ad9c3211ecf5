//! Uplink request/grant procedure: the UE's scheduling request (TS 36.321 §5.4.4) and buffer
//! status reporting (TS 36.321 §5.4.5, MAC CEs §6.1.3.1, buffer-size levels Table 6.1.3.1-1),
//! multiplexing of a granted transport block (§5.4.3.1), the eNB's view of reported buffers,
//! and the BSR enhancement of the dissertation (seed 003, ch. 3; design.md §5). The UE's
//! uplink IP buffer before PDCP, where network functions work, is [`rantcp_nf::UlBuffer`]; the
//! radio device (`crate::cell`) reports its size to [`UeUlMac::handle_buffer_status`].
//!
//! # Procedure as modelled ([`UeUlMac`])
//! * Regular BSR is triggered when data becomes available for a logical channel and either no
//!   LCG had data or the channel has a higher priority than every channel with data; and when
//!   retxBSR-Timer expires while data is available (§5.4.5).
//! * Periodic BSR is triggered when periodicBSR-Timer expires. Only a *regular* BSR triggers a
//!   scheduling request; a periodic BSR waits for a grant (§5.4.5: "if a Regular BSR has been
//!   triggered … a Scheduling Request shall be triggered").
//! * Padding BSR: when the padding of a granted MAC PDU can hold a BSR (short if it fits 2
//!   bytes or only one LCG has data, truncated if more LCGs have data but only 2–3 bytes are
//!   free, long otherwise).
//! * When a MAC PDU carries a BSR: every triggered BSR is cancelled, periodicBSR-Timer is
//!   (re)started unless the BSR is truncated, and retxBSR-Timer is (re)started. A grant that
//!   can carry all pending data but not the BSR as well cancels the triggered BSRs.
//! * retxBSR-Timer is also restarted (if running) upon every grant for new data, the §5.4.5
//!   rule "restart retxBSR-Timer upon indication of a grant for transmission of new data on
//!   any UL-SCH" (as srsRAN's UE does). The dissertation's Figure 5 flowchart (re)starts it only
//!   when a BSR is sent; [`UeMacConfig::retx_bsr_restart_on_grant`] = `false` gives that
//!   variant. Either way the Figure 6 stall lasts about retxBSR-Timer: no grant comes while it
//!   runs, because the eNB has granted everything it was told about.
//! * The reported size is the buffer after the MAC PDU is built (§5.4.5 "after all MAC PDUs for
//!   this TTI have been built"), quantised with Table 6.1.3.1-1.
//! * BSR sizes including the MAC subheader (§6.1.2, §6.1.3.1): short/truncated BSR = 1-byte
//!   subheader + 1-byte CE = 2 bytes; long BSR = 1 + 3 = 4 bytes. Data MAC subheaders: 2 bytes
//!   (7-bit L) when the piece is < 128 bytes, 3 bytes (15-bit L) otherwise (the 1-byte last
//!   subheader optimisation is not modelled).
//! * SR (§5.4.4): a regular BSR with no SR pending triggers an SR and sets SR_COUNTER to 0.
//!   While an SR is pending, at each SR occasion (`sr_period`, `sr_offset`) at which
//!   sr-ProhibitTimer is not running: if SR_COUNTER < dsr-TransMax, SR_COUNTER is incremented,
//!   the SR goes on PUCCH and sr-ProhibitTimer starts; otherwise the UE gives up: PUCCH/SR
//!   resources are released (RRC), configured grants cleared (none are modelled), every
//!   pending SR cancelled and the random access procedure ([`super::ra`]) started. A MAC PDU
//!   carrying the BSR, or a grant that takes all pending data, cancels the pending SR and
//!   stops sr-ProhibitTimer. While the SR resources are released, a new regular BSR starts
//!   random access instead of an SR ("no valid PUCCH resource for SR", §5.4.4). TS 38.321
//!   §5.4.4 is the same per SR configuration (sr-TransMax, sr-ProhibitTimer in ms).
//! * sr-ProhibitTimer expires at its start + its length (TS 36.331 sr-ProhibitTimer-r9 k is k
//!   SR periods; the timer of value k started at an occasion has expired at the occasion k
//!   periods later, so k = 1 spaces SRs as no timer does and k ≥ 2 spaces them k periods).
//! * Random access in connected mode (§5.1, [`super::ra`]): Msg3 carries the C-RNTI MAC CE and
//!   a regular BSR of the buffer (built as a granted PDU's BSR is: triggered BSRs cancelled,
//!   periodicBSR-/retxBSR-Timer started). Success restores the SR resources (the RRC
//!   reconfiguration that does it in a network is not modelled as a delay). A new-data grant
//!   while random access runs ends it (§5.1.5: a PDCCH to the C-RNTI with an UL grant).
//!   A random access problem is RRC's (the cell's): radio link failure, re-establishment
//!   ([`UeUlMac::suspend`] resets the MAC, §5.9; [`UeUlMac::resume`] after re-establishment).
//! * Logical channel prioritisation (§5.4.3.1) is strict priority without prioritisedBitRate.
//! * BSR enhancement (option, off by default): the UE tracks the bytes granted since its last
//!   BSR; when they reach the size the last BSR reported and data remains beyond this grant,
//!   a regular BSR is sent in the current grant (its data reduced by the BSR size) instead of
//!   waiting for retxBSR-Timer.

use super::mux::{mac_subheader_bytes, max_sdu};
use super::ra::{RaConfig, RaCounters, RaProcedure, RaStep};
use super::sap::{Lcid, Rnti, TxOpportunity, UlGrant};
use super::sched::{Allocation, SchedConfig, SchedUe, Scheduler};
use rantcp_core::{Duration, Rng, Time};
use rustc_hash::FxHashMap;

// ---------------------------------------------------------------------------------------------
// Buffer size levels.

/// Upper bounds (bytes) of the buffer size levels 0..=62 of TS 36.321 Table 6.1.3.1-1; index 63
/// means "> 150000". (ns-3 LENA's copy has 93749 for index 59; the table says 93479.)
pub const BSR_LEVELS: [u32; 63] = [
    0, 10, 12, 14, 17, 19, 22, 26, 31, 36, 42, 49, 57, 67, 78, 91, 107, 125, 146, 171, 200, 234,
    274, 321, 376, 440, 515, 603, 706, 826, 967, 1132, 1326, 1552, 1817, 2127, 2490, 2915, 3413,
    3995, 4677, 5476, 6411, 7505, 8787, 10287, 12043, 14099, 16507, 19325, 22624, 26487, 31009,
    36304, 42502, 49759, 58255, 68201, 79846, 93479, 109439, 128125, 150000,
];

/// BSR index for a buffer of `bytes` (Table 6.1.3.1-1: index i covers `(BSR_LEVELS[i-1], BSR_LEVELS[i]]`).
pub fn bsr_index(bytes: u64) -> u8 {
    if bytes > 150_000 {
        return 63;
    }
    BSR_LEVELS.partition_point(|&b| (b as u64) < bytes) as u8
}

/// The buffer size an eNB assumes for a reported index: the level's upper bound (150000 for 63).
pub fn bsr_index_to_bytes(index: u8) -> u32 {
    BSR_LEVELS[(index as usize).min(62)]
}

/// Short or truncated BSR incl. subheader (bytes).
pub const SHORT_BSR_BYTES: u32 = 2;
/// Long BSR incl. subheader (bytes).
pub const LONG_BSR_BYTES: u32 = 4;

// ---------------------------------------------------------------------------------------------
// UE MAC.

/// A logical channel of the UE (TS 36.331 `LogicalChannelConfig`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UlLogicalChannel {
    pub lcid: Lcid,
    /// Logical channel group 0..=3.
    pub lcg: u8,
    /// Lower value = higher priority.
    pub priority: u8,
}

/// UE MAC uplink configuration (TS 36.331 `MAC-MainConfig`, `SchedulingRequestConfig`).
#[derive(Clone, Debug)]
pub struct UeMacConfig {
    pub rnti: Rnti,
    /// periodicBSR-Timer; `None` = infinity (the 36.331 default).
    pub periodic_bsr_timer: Option<Duration>,
    /// retxBSR-Timer (default sf2560).
    pub retx_bsr_timer: Duration,
    /// Restart retxBSR-Timer on every grant for new data (§5.4.5; see module docs). Default
    /// `true`; `false` = the dissertation's Figure 5 flowchart (BSR transmission only).
    pub retx_bsr_restart_on_grant: bool,
    /// SR periodicity and offset (sr-ConfigIndex).
    pub sr_period: Duration,
    pub sr_offset: Duration,
    /// sr-ProhibitTimer (§5.4.4); zero = not configured (the TS 36.331 default).
    pub sr_prohibit_timer: Duration,
    /// dsr-TransMax (NR sr-TransMax): SRs before the UE gives up and starts random access;
    /// `None` = SR forever (the model before the fallback; no TS 36.331 value).
    pub dsr_trans_max: Option<u32>,
    /// Random access parameters (§5.1).
    pub ra: RaConfig,
    /// The dissertation's BSR enhancement (design.md §5). Default `false`.
    pub bsr_enhancement: bool,
    pub channels: Vec<UlLogicalChannel>,
}

impl UeMacConfig {
    /// One data bearer (LCID 3, LCG 1), periodicBSR-Timer sf10, retxBSR-Timer sf2560, SR every
    /// 10 ms: the setting of the dissertation's Figure 6; no sr-ProhibitTimer, dsr-TransMax n64
    /// (srsRAN's eNB default, `srsenb/rr.conf.example`), LTE random access ([`RaConfig::lte`]).
    pub fn lte_default(rnti: Rnti) -> Self {
        UeMacConfig {
            rnti,
            periodic_bsr_timer: Some(Duration::from_millis(10)),
            retx_bsr_timer: Duration::from_millis(2560),
            retx_bsr_restart_on_grant: true,
            sr_period: Duration::from_millis(10),
            sr_offset: Duration::ZERO,
            sr_prohibit_timer: Duration::ZERO,
            dsr_trans_max: Some(64),
            ra: RaConfig::lte(Duration::from_millis(1)),
            bsr_enhancement: false,
            channels: vec![UlLogicalChannel {
                lcid: 3,
                lcg: 1,
                priority: 1,
            }],
        }
    }
}

/// Why a BSR was sent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BsrKind {
    Regular,
    Periodic,
    Padding,
}

/// A BSR MAC control element.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BsrReport {
    pub kind: BsrKind,
    /// Long BSR (all four LCGs) rather than short/truncated (one LCG).
    pub is_long: bool,
    pub is_truncated: bool,
    /// Buffer size index per LCG (Table 6.1.3.1-1); for a short BSR only `lcg` is meaningful.
    pub index: [u8; 4],
    /// LCG reported by a short/truncated BSR.
    pub lcg: u8,
    /// Exact bytes behind the indices (for traces; the eNB must use `index`).
    pub exact_bytes: [u64; 4],
    /// Size incl. subheader (2 or 4 bytes).
    pub bytes: u32,
}

/// What the UE sends in a granted transport block.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct UlTransmission {
    pub rnti: Rnti,
    pub harq_id: u8,
    pub bsr: Option<BsrReport>,
    /// Per logical channel: bytes the RLC entity may fill (MAC subheaders already removed).
    pub opportunities: Vec<TxOpportunity>,
    pub mac_subheader_bytes: u32,
    pub padding_bytes: u32,
}

/// UE MAC counters.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct UeMacCounters {
    pub sr_tx: u64,
    pub bsr_regular: u64,
    pub bsr_periodic: u64,
    pub bsr_padding: u64,
    /// Regular BSRs sent because of the enhancement.
    pub bsr_enhanced: u64,
    pub grants: u64,
    pub granted_bytes: u64,
    pub retx_bsr_expiries: u64,
    pub periodic_bsr_expiries: u64,
    /// Times SR_COUNTER reached dsr-TransMax (SR given up, random access started).
    pub sr_give_ups: u64,
}

/// The UE side of the uplink request/grant procedure (sans-IO).
///
/// Calling order per slot: [`Self::handle_buffer_status`] when a channel's backlog changes;
/// [`Self::handle_ul_grant`] in the slot a grant is used (then fill the returned opportunities
/// from RLC and report the new backlog); [`Self::handle_timeout`] when [`Self::poll_timeout`]
/// is due, then [`Self::poll_sr`]. Handling the grant first means no SR goes out in a slot that
/// has UL-SCH resources whose PDU carries the BSR (§5.4.4: the PDU cancels the pending SR).
#[derive(Debug)]
pub struct UeUlMac {
    pub cfg: UeMacConfig,
    /// Bytes available per channel (same order as `cfg.channels`).
    avail: Vec<u64>,
    regular_triggered: bool,
    periodic_triggered: bool,
    sr_pending: bool,
    sr_to_send: bool,
    next_sr_at: Option<Time>,
    periodic_at: Option<Time>,
    retx_at: Option<Time>,
    /// Enhancement state: bytes granted since the last BSR and what that BSR reported.
    granted_since_bsr: u64,
    last_bsr_bytes: Option<u64>,
    counters: UeMacCounters,
    /// Channel indices in priority order, and per-grant scratch.
    lcp_order: Vec<usize>,
    sent: Vec<u64>,
    /// SR_COUNTER, sr-ProhibitTimer's expiry, whether the PUCCH SR resource is configured.
    sr_counter: u32,
    sr_prohibit_until: Option<Time>,
    sr_resource: bool,
    ra: RaProcedure,
    /// The BSR of the last Msg3 (for the eNB once Msg3 is decoded).
    msg3_bsr: Option<BsrReport>,
    /// MAC reset by RRC re-establishment (§5.9): radio bearers suspended until [`Self::resume`].
    suspended: bool,
    /// Time without uplink: since when (SR given up or RLF), and the total of past periods.
    outage_since: Option<Time>,
    outage_ns: u64,
}

impl UeUlMac {
    pub fn new(cfg: UeMacConfig) -> Self {
        let rng = Rng::new(0, cfg.rnti as u64);
        Self::with_rng(cfg, rng)
    }

    /// A UE MAC whose random access backoff draws come from `rng`.
    pub fn with_rng(cfg: UeMacConfig, rng: Rng) -> Self {
        let n = cfg.channels.len();
        UeUlMac {
            ra: RaProcedure::new(cfg.ra.clone(), rng),
            sr_counter: 0,
            sr_prohibit_until: None,
            sr_resource: true,
            msg3_bsr: None,
            suspended: false,
            outage_since: None,
            outage_ns: 0,
            cfg,
            avail: vec![0; n],
            regular_triggered: false,
            periodic_triggered: false,
            sr_pending: false,
            sr_to_send: false,
            next_sr_at: None,
            periodic_at: None,
            retx_at: None,
            granted_since_bsr: 0,
            last_bsr_bytes: None,
            counters: UeMacCounters::default(),
            lcp_order: Vec::new(),
            sent: vec![0; n],
        }
        .with_order()
    }

    fn with_order(mut self) -> Self {
        let mut order: Vec<usize> = (0..self.cfg.channels.len()).collect();
        order.sort_by_key(|&i| (self.cfg.channels[i].priority, i));
        self.lcp_order = order;
        self
    }

    fn lcg_bytes(&self) -> [u64; 4] {
        let mut b = [0u64; 4];
        for (c, &a) in self.cfg.channels.iter().zip(&self.avail) {
            b[c.lcg as usize & 3] += a;
        }
        b
    }
    /// Data available for transmission (bytes, all channels).
    pub fn total_available(&self) -> u64 {
        self.avail.iter().sum()
    }

    fn trigger_regular(&mut self, now: Time) {
        self.regular_triggered = true;
        if self.suspended {
            return;
        }
        if !self.sr_resource {
            // §5.4.4: no valid PUCCH resource for SR: random access (if not already running).
            self.ra.start(now);
        } else if !self.sr_pending {
            self.sr_pending = true;
            self.sr_counter = 0;
            self.next_sr_at = Some(self.next_sr_occasion(now));
        }
    }

    /// Pending SRs cancelled and sr-ProhibitTimer stopped (§5.4.4).
    fn cancel_sr(&mut self) {
        self.sr_pending = false;
        self.next_sr_at = None;
        self.sr_prohibit_until = None;
    }

    /// SR_COUNTER reached dsr-TransMax (§5.4.4): release PUCCH/SR, cancel SRs, random access.
    fn give_up_sr(&mut self, now: Time) {
        self.counters.sr_give_ups += 1;
        self.sr_resource = false;
        self.cancel_sr();
        self.outage_since.get_or_insert(now);
        self.ra.start(now);
    }

    fn end_outage(&mut self, now: Time) {
        if let Some(t) = self.outage_since.take() {
            self.outage_ns += now.saturating_since(t).as_nanos();
        }
    }

    fn next_sr_occasion(&self, now: Time) -> Time {
        let p = self.cfg.sr_period.as_nanos().max(1);
        let off = self.cfg.sr_offset.as_nanos() % p;
        let t = now.as_nanos();
        let k = (t + p - off).saturating_sub(1) / p; // smallest k with k·p + off ≥ t
        let cand = k * p + off;
        Time::from_nanos(if cand < t { cand + p } else { cand })
    }

    /// The backlog of channel `lcid` is now `bytes` (RLC + PDCP, incl. retransmissions and
    /// STATUS). Triggers a regular BSR per §5.4.5.
    pub fn handle_buffer_status(&mut self, now: Time, lcid: Lcid, bytes: u64) {
        let Some(i) = self.cfg.channels.iter().position(|c| c.lcid == lcid) else {
            return;
        };
        let before = self.avail[i];
        self.avail[i] = bytes;
        if bytes > before && before == 0 {
            let prio = self.cfg.channels[i].priority;
            let others_empty = self
                .avail
                .iter()
                .enumerate()
                .all(|(j, &a)| j == i || a == 0);
            let higher = self
                .cfg
                .channels
                .iter()
                .zip(&self.avail)
                .enumerate()
                .filter(|&(j, (_, &a))| j != i && a > 0)
                .all(|(_, (c, _))| prio < c.priority);
            if others_empty || higher {
                self.trigger_regular(now);
            }
        }
    }

    /// Earliest timer: SR occasion (if an SR is pending), periodicBSR-Timer, retxBSR-Timer,
    /// the random access procedure (handled by [`Self::poll_ra`]).
    #[inline]
    pub fn poll_timeout(&self) -> Option<Time> {
        // Called for every UE after every device event: plain comparisons.
        let min = |a: Option<Time>, b: Option<Time>| match (a, b) {
            (Some(x), Some(y)) => Some(x.min(y)),
            (x, y) => x.or(y),
        };
        let mut t = min(self.periodic_at, self.retx_at);
        if self.sr_pending {
            t = min(t, self.next_sr_at);
        }
        if self.ra.is_active() {
            t = min(t, self.ra.poll_timeout());
        }
        t
    }

    pub fn handle_timeout(&mut self, now: Time) {
        if self.periodic_at.is_some_and(|t| t <= now) {
            self.periodic_at = None;
            self.periodic_triggered = true;
            self.counters.periodic_bsr_expiries += 1;
        }
        if self.retx_at.is_some_and(|t| t <= now) {
            self.retx_at = None;
            self.counters.retx_bsr_expiries += 1;
            if self.total_available() > 0 {
                self.trigger_regular(now);
            }
        }
        if self.sr_pending && self.next_sr_at.is_some_and(|t| t <= now) {
            // §5.4.4, at an SR occasion with sr-ProhibitTimer not running.
            if self.sr_prohibit_until.is_none_or(|t| t <= now) {
                if self.cfg.dsr_trans_max.is_some_and(|m| self.sr_counter >= m) {
                    self.give_up_sr(now);
                    return;
                }
                self.sr_counter += 1;
                self.sr_to_send = true;
                self.counters.sr_tx += 1;
                let p = self.cfg.sr_prohibit_timer;
                self.sr_prohibit_until = (p > Duration::ZERO).then(|| now + p);
            }
            let after = (now + Duration::from_nanos(1)).max(self.sr_prohibit_until.unwrap_or(now));
            self.next_sr_at = Some(self.next_sr_occasion(after));
        }
    }

    /// Advance the random access procedure to `now`: at most one step for the caller (loop
    /// until `None`). At [`RaStep::Msg3`] in connected mode the Msg3 BSR is built
    /// ([`Self::take_msg3_bsr`]); at [`RaStep::Success`] the SR resources are back and the time
    /// without uplink ends.
    pub fn poll_ra(&mut self, now: Time) -> Option<RaStep> {
        let step = self.ra.handle_timeout(now)?;
        match step {
            RaStep::Msg3 if !self.suspended => {
                let lcg = self.lcg_bytes();
                let n_lcg = lcg.iter().filter(|&&b| b > 0).count();
                let bsr = self.make_bsr(BsrKind::Regular, lcg, None, n_lcg > 1);
                if let Some(b) = &bsr {
                    self.counters.bsr_regular += 1;
                    self.bsr_sent(now, b, lcg);
                }
                self.msg3_bsr = bsr;
            }
            RaStep::Success => {
                self.sr_resource = true;
                self.sr_counter = 0;
                self.end_outage(now);
                if !self.suspended && self.regular_triggered && self.total_available() > 0 {
                    // A BSR triggered after Msg3 still needs an SR.
                    self.trigger_regular(now);
                }
            }
            _ => {}
        }
        Some(step)
    }

    /// The caller's judgement of the preamble of [`RaStep::Preamble`].
    pub fn ra_preamble_result(&mut self, now: Time, detected: bool) {
        self.ra.preamble_result(now, detected);
    }
    /// The caller's judgement of the Msg3 of [`RaStep::Msg3`].
    pub fn ra_msg3_result(&mut self, now: Time, decoded: bool) {
        self.ra.msg3_result(now, decoded);
    }
    /// The BSR the last Msg3 carried.
    pub fn take_msg3_bsr(&mut self) -> Option<BsrReport> {
        self.msg3_bsr.take()
    }

    /// RRC starts random access on its own (connection re-establishment, TS 36.331 §5.3.7.4).
    pub fn start_ra(&mut self, now: Time) {
        self.ra.start(now);
    }

    /// MAC reset at the start of RRC connection re-establishment (TS 36.331 §5.3.7.2, TS 36.321
    /// §5.9): triggered BSRs and pending SRs cancelled, timers stopped, random access stopped;
    /// the radio bearers are suspended (no BSR triggers) until [`Self::resume`]. The time without
    /// uplink runs on.
    pub fn suspend(&mut self, now: Time) {
        self.regular_triggered = false;
        self.periodic_triggered = false;
        self.sr_to_send = false;
        self.cancel_sr();
        self.sr_counter = 0;
        self.sr_resource = false;
        self.periodic_at = None;
        self.retx_at = None;
        self.granted_since_bsr = 0;
        self.last_bsr_bytes = None;
        self.msg3_bsr = None;
        self.ra.stop();
        self.suspended = true;
        self.outage_since.get_or_insert(now);
    }

    /// Re-establishment complete: bearers resumed with the SR resources configured again; a
    /// regular BSR is triggered if data wait (§5.4.5: data become available to a channel).
    pub fn resume(&mut self, now: Time) {
        self.suspended = false;
        self.sr_resource = true;
        self.end_outage(now);
        if self.total_available() > 0 {
            self.trigger_regular(now);
        }
    }

    pub fn is_suspended(&self) -> bool {
        self.suspended
    }
    /// Random access running.
    pub fn ra_active(&self) -> bool {
        self.ra.is_active()
    }
    pub fn ra_counters(&self) -> &RaCounters {
        self.ra.counters()
    }
    /// SR_COUNTER.
    pub fn sr_counter(&self) -> u32 {
        self.sr_counter
    }
    /// Total time without uplink (SR given up or RLF, until random access succeeded or the
    /// connection was re-established) up to `now`.
    pub fn ul_outage(&self, now: Time) -> Duration {
        let cur = self
            .outage_since
            .map_or(0, |t| now.saturating_since(t).as_nanos());
        Duration::from_nanos(self.outage_ns + cur)
    }

    /// An SR to transmit on PUCCH now.
    pub fn poll_sr(&mut self) -> bool {
        std::mem::take(&mut self.sr_to_send)
    }

    /// `room`: padding available (padding BSR) or `None` (regular/periodic BSR, whose format
    /// was fixed by `long` before the data were multiplexed).
    fn make_bsr(
        &self,
        kind: BsrKind,
        lcg_after: [u64; 4],
        room: Option<u32>,
        long: bool,
    ) -> Option<BsrReport> {
        let n_lcg = lcg_after.iter().filter(|&&b| b > 0).count();
        let want_long = n_lcg > 1;
        let (is_long, is_truncated) = match room {
            None => (long, false),
            Some(r) if r >= LONG_BSR_BYTES && want_long => (true, false),
            Some(r) if r >= SHORT_BSR_BYTES => (false, want_long),
            Some(_) => return None,
        };
        let mut index = [0u8; 4];
        for g in 0..4 {
            index[g] = bsr_index(lcg_after[g]);
        }
        // Short BSR: the LCG with data (truncated: the one with the highest-priority channel).
        let lcg = if is_truncated {
            self.cfg
                .channels
                .iter()
                .zip(&self.avail)
                .filter(|(_, &a)| a > 0)
                .min_by_key(|(c, _)| c.priority)
                .map_or(0, |(c, _)| c.lcg)
        } else {
            (0..4)
                .find(|&g| lcg_after[g] > 0)
                .unwrap_or_else(|| self.cfg.channels.first().map_or(0, |c| c.lcg as usize))
                as u8
        };
        Some(BsrReport {
            kind,
            is_long,
            is_truncated,
            index,
            lcg,
            exact_bytes: lcg_after,
            bytes: if is_long {
                LONG_BSR_BYTES
            } else {
                SHORT_BSR_BYTES
            },
        })
    }

    /// Multiplexing and assembly of a granted MAC PDU (§5.4.3.1, §5.4.5). For a HARQ
    /// retransmission grant nothing new is built (the node resends the stored TB).
    pub fn handle_ul_grant(&mut self, now: Time, grant: UlGrant) -> UlTransmission {
        let mut tx = UlTransmission::default();
        self.handle_ul_grant_into(now, grant, &mut tx);
        tx
    }

    /// [`Self::handle_ul_grant`] reusing `tx` (no allocation in steady state).
    pub fn handle_ul_grant_into(&mut self, now: Time, grant: UlGrant, tx: &mut UlTransmission) {
        tx.rnti = self.cfg.rnti;
        tx.harq_id = grant.harq_id;
        tx.bsr = None;
        tx.opportunities.clear();
        tx.mac_subheader_bytes = 0;
        tx.padding_bytes = 0;
        if grant.is_retx {
            return;
        }
        if self.ra.is_active() && !self.suspended {
            // §5.1.5: a PDCCH to the C-RNTI with an UL grant for new data ends random access
            // (successfully if it answers this UE's Msg3).
            self.ra.grant_received();
            self.sr_resource = true;
            self.sr_counter = 0;
            self.end_outage(now);
        }
        self.counters.grants += 1;
        self.counters.granted_bytes += grant.tb_bytes as u64;
        if self.cfg.retx_bsr_restart_on_grant && self.retx_at.is_some() {
            self.retx_at = Some(now + self.cfg.retx_bsr_timer);
        }
        let tb = grant.tb_bytes;
        let total = self.total_available();
        // Long BSR if more than one LCG has data in this TTI (§5.4.5), decided before
        // multiplexing so that the CE's size can be reserved; the values reported are the
        // buffers after this MAC PDU.
        let lcg_now = self.lcg_bytes();
        let n_lcg = lcg_now.iter().filter(|&&b| b > 0).count();
        let bsr_size = if n_lcg > 1 {
            LONG_BSR_BYTES
        } else {
            SHORT_BSR_BYTES
        };

        // BSR enhancement (dissertation ch. 3, Figure 8 step 9).
        let granted = self.granted_since_bsr + tb as u64;
        if self.cfg.bsr_enhancement
            && !self.regular_triggered
            && self.last_bsr_bytes.is_some_and(|r| granted >= r)
            && total > Self::data_capacity(tb) as u64
        {
            self.regular_triggered = true;
            self.counters.bsr_enhanced += 1;
        }
        let mut bsr_kind = if self.regular_triggered {
            Some(BsrKind::Regular)
        } else if self.periodic_triggered {
            Some(BsrKind::Periodic)
        } else {
            None
        };
        if bsr_kind.is_some() && tb < bsr_size {
            bsr_kind = None;
        }
        if bsr_kind.is_some() {
            // §5.4.5: a grant that accommodates all pending data but not the BSR in addition
            // cancels the triggered BSRs.
            let need: u64 = self
                .avail
                .iter()
                .filter(|&&a| a > 0)
                .map(|&a| a + mac_subheader_bytes(a.min(u32::MAX as u64) as u32) as u64)
                .sum();
            if need <= tb as u64 && need + bsr_size as u64 > tb as u64 {
                bsr_kind = None;
                self.regular_triggered = false;
                self.periodic_triggered = false;
            }
        }
        let mut cap = tb - if bsr_kind.is_some() { bsr_size } else { 0 };

        // Logical channel prioritisation: strict priority.
        let mut sent = std::mem::take(&mut self.sent);
        sent.iter_mut().for_each(|s| *s = 0);
        for &i in &self.lcp_order {
            let a = self.avail[i];
            if a == 0 || cap <= 2 {
                continue;
            }
            let chunk = a.min(max_sdu(cap) as u64) as u32;
            if chunk == 0 {
                continue;
            }
            let sub = mac_subheader_bytes(chunk);
            cap -= chunk + sub;
            tx.mac_subheader_bytes += sub;
            sent[i] = chunk as u64;
            let c = self.cfg.channels[i];
            tx.opportunities.push(TxOpportunity {
                bytes: chunk,
                rnti: self.cfg.rnti,
                lcid: c.lcid,
                harq_id: grant.harq_id,
            });
        }
        for (a, s) in self.avail.iter_mut().zip(&sent) {
            *a -= s;
        }
        self.sent = sent;
        let lcg_after = self.lcg_bytes();
        let bsr = match bsr_kind {
            Some(k) => self.make_bsr(k, lcg_after, None, n_lcg > 1),
            None if cap >= SHORT_BSR_BYTES => {
                let r = self.make_bsr(BsrKind::Padding, lcg_after, Some(cap), false);
                if let Some(b) = &r {
                    cap -= b.bytes;
                }
                r
            }
            None => None,
        };
        tx.padding_bytes = cap;
        if let Some(b) = &bsr {
            match b.kind {
                BsrKind::Regular => self.counters.bsr_regular += 1,
                BsrKind::Periodic => self.counters.bsr_periodic += 1,
                BsrKind::Padding => self.counters.bsr_padding += 1,
            }
            let b = *b;
            self.bsr_sent(now, &b, lcg_after);
        } else {
            self.granted_since_bsr = granted;
        }
        if self.total_available() == 0 {
            // The grant accommodated all pending data: pending SR cancelled (§5.4.4).
            self.cancel_sr();
        }
        tx.bsr = bsr;
    }

    /// A MAC PDU carries BSR `b` of the buffers `lcg_after` (§5.4.5): triggered BSRs
    /// cancelled, periodicBSR-Timer (unless truncated) and retxBSR-Timer (re)started; the
    /// pending SR cancelled (§5.4.4).
    fn bsr_sent(&mut self, now: Time, b: &BsrReport, lcg_after: [u64; 4]) {
        self.regular_triggered = false;
        self.periodic_triggered = false;
        if !b.is_truncated {
            self.periodic_at = self.cfg.periodic_bsr_timer.map(|p| now + p);
        }
        self.retx_at = Some(now + self.cfg.retx_bsr_timer);
        self.cancel_sr();
        self.granted_since_bsr = 0;
        self.last_bsr_bytes = Some(lcg_after.iter().sum());
    }

    /// Data bytes a grant of `tb` carries without a BSR (one channel).
    fn data_capacity(tb: u32) -> u32 {
        max_sdu(tb)
    }

    pub fn sr_pending(&self) -> bool {
        self.sr_pending
    }
    pub fn counters(&self) -> &UeMacCounters {
        &self.counters
    }
}

// ---------------------------------------------------------------------------------------------
// eNB side.

/// The eNB's view of one UE's uplink buffer, from BSRs and SRs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct UlBufferView {
    /// Per LCG: bytes reported (level upper bound) minus bytes granted since.
    pub lcg_bytes: [u64; 4],
    pub sr_pending: bool,
}

/// Tracks reported uplink buffers at the eNB and sizes the scheduler's uplink backlog.
#[derive(Debug, Default)]
pub struct UlBufferTracker {
    /// By RNTI: looked up on every BSR and grant, hence FxHash (never iterated).
    ues: FxHashMap<Rnti, UlBufferView>,
    /// Grant given in answer to an SR (bytes; enough for a BSR and some data).
    pub sr_grant_bytes: u32,
}

impl UlBufferTracker {
    pub fn new(sr_grant_bytes: u32) -> Self {
        UlBufferTracker {
            ues: FxHashMap::default(),
            sr_grant_bytes,
        }
    }
    pub fn handle_sr(&mut self, rnti: Rnti) {
        self.ues.entry(rnti).or_default().sr_pending = true;
    }
    /// A BSR received in a decoded uplink TB.
    pub fn handle_bsr(&mut self, rnti: Rnti, bsr: &BsrReport) {
        let v = self.ues.entry(rnti).or_default();
        if bsr.is_long {
            for g in 0..4 {
                v.lcg_bytes[g] = bsr_index_to_bytes(bsr.index[g]) as u64;
            }
        } else {
            let g = bsr.lcg as usize & 3;
            v.lcg_bytes[g] = bsr_index_to_bytes(bsr.index[g]) as u64;
        }
    }
    /// Forget `rnti`'s reported buffer and pending SR (the UE lost its connection).
    pub fn forget(&mut self, rnti: Rnti) {
        self.ues.remove(&rnti);
    }
    /// An uplink grant of `tb_bytes` was issued to `rnti` for new data.
    pub fn on_grant(&mut self, rnti: Rnti, tb_bytes: u32) {
        let v = self.ues.entry(rnti).or_default();
        v.sr_pending = false;
        let mut left = tb_bytes as u64;
        for b in v.lcg_bytes.iter_mut() {
            let t = left.min(*b);
            *b -= t;
            left -= t;
        }
    }
    /// Bytes to schedule for `rnti`: the reported buffer, at least `sr_grant_bytes` after an SR.
    pub fn backlog(&self, rnti: Rnti) -> u64 {
        self.ues.get(&rnti).map_or(0, |v| {
            let b: u64 = v.lcg_bytes.iter().sum();
            if v.sr_pending {
                b.max(self.sr_grant_bytes as u64)
            } else {
                b
            }
        })
    }
    pub fn view(&self, rnti: Rnti) -> Option<&UlBufferView> {
        self.ues.get(&rnti)
    }
}

/// The eNB's uplink scheduler: a [`Scheduler`] whose per-UE backlog is the
/// [`UlBufferTracker`]'s view (reported, quantised buffers and pending SRs); every grant is
/// subtracted from the view.
#[derive(Debug)]
pub struct UlScheduler {
    pub sched: Scheduler,
    pub tracker: UlBufferTracker,
    ues: Vec<SchedUe>,
    allocs: Vec<Allocation>,
}

impl UlScheduler {
    pub fn new(cfg: SchedConfig, sr_grant_bytes: u32) -> Self {
        UlScheduler {
            sched: Scheduler::new(cfg),
            tracker: UlBufferTracker::new(sr_grant_bytes),
            ues: Vec::new(),
            allocs: Vec::new(),
        }
    }
    pub fn handle_sr(&mut self, rnti: Rnti) {
        self.tracker.handle_sr(rnti);
    }
    pub fn handle_bsr(&mut self, rnti: Rnti, bsr: &BsrReport) {
        self.tracker.handle_bsr(rnti, bsr);
    }
    /// Schedules one slot's uplink. `ues` carries channel and HARQ state; the backlog
    /// scheduled is the tracker's view, or `backlog_bytes` if that is larger (a grant the
    /// eNB makes on its own: 0 for the procedure of TS 36.321, a proactive grant otherwise);
    /// grants go to `out`. Returns the number of grants (PDCCH DCIs) used.
    pub fn schedule_with(
        &mut self,
        now: Time,
        ues: &[SchedUe],
        max_grants: u16,
        tbs: impl FnMut(&SchedUe, u16) -> u32,
        out: &mut Vec<UlGrant>,
    ) -> u16 {
        self.ues.clear();
        for u in ues {
            self.ues.push(SchedUe {
                backlog_bytes: self.tracker.backlog(u.rnti).max(u.backlog_bytes),
                ..*u
            });
        }
        self.allocs.clear();
        self.sched
            .schedule_with(now, &self.ues, max_grants, tbs, &mut self.allocs);
        for a in &self.allocs {
            if !a.is_retx {
                self.tracker.on_grant(a.rnti, a.tb_bytes);
            }
            out.push(UlGrant {
                rnti: a.rnti,
                tb_bytes: a.tb_bytes,
                n_prb: a.n_prb,
                harq_id: a.harq_id,
                is_retx: a.is_retx,
            });
        }
        self.allocs.len() as u16
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_bsr_index_boundaries() {
        assert_eq!(bsr_index(0), 0);
        assert_eq!(bsr_index(1), 1);
        assert_eq!(bsr_index(10), 1);
        assert_eq!(bsr_index(11), 2);
        assert_eq!(bsr_index(150_000), 62);
        assert_eq!(bsr_index(150_001), 63);
        for i in 1..63u8 {
            assert_eq!(bsr_index(bsr_index_to_bytes(i) as u64), i);
            assert_eq!(bsr_index(bsr_index_to_bytes(i) as u64 + 1), i + 1);
        }
    }

    /// Run `mac` from `from` to `to` (1 ms steps, timers only); the instants SRs went out.
    fn srs(mac: &mut UeUlMac, from: u64, to: u64) -> Vec<u64> {
        let mut out = Vec::new();
        for ms in from..to {
            let now = Time::from_millis(ms);
            if mac.poll_timeout().is_some_and(|t| t <= now) {
                mac.handle_timeout(now);
            }
            if mac.poll_sr() {
                out.push(ms);
            }
        }
        out
    }

    #[test]
    fn test_sr_counter_reaching_dsr_trans_max_starts_random_access() {
        let mut cfg = UeMacConfig::lte_default(1);
        cfg.dsr_trans_max = Some(4);
        let mut mac = UeUlMac::new(cfg);
        mac.handle_buffer_status(Time::ZERO, 3, 100);
        assert!(mac.sr_pending());
        // SR_COUNTER < 4: SRs at 0, 10, 20, 30 ms; at 40 ms the UE gives up (§5.4.4).
        assert_eq!(srs(&mut mac, 0, 45), vec![0, 10, 20, 30]);
        assert_eq!(mac.sr_counter(), 4);
        assert!(!mac.sr_pending(), "pending SR cancelled");
        assert!(mac.ra_active(), "random access started");
        assert_eq!(mac.counters().sr_give_ups, 1);
        assert_eq!(mac.ra_counters().procedures, 1);
        // No SR while the SR resource is released, also for a new regular BSR.
        mac.handle_buffer_status(Time::from_millis(50), 3, 0);
        mac.handle_buffer_status(Time::from_millis(51), 3, 300);
        assert!(!mac.sr_pending());
        let mut sent = 0;
        for ms in 45..400 {
            let now = Time::from_millis(ms);
            if mac.poll_timeout().is_some_and(|t| t <= now) {
                mac.handle_timeout(now);
            }
            sent += mac.poll_sr() as u32;
            while mac.poll_ra(now).is_some() {}
        }
        assert_eq!(sent, 0);
        assert_eq!(
            mac.ul_outage(Time::from_millis(400)),
            Duration::from_millis(360)
        );
    }

    #[test]
    fn test_without_dsr_trans_max_srs_go_on_for_ever() {
        let mut cfg = UeMacConfig::lte_default(1);
        cfg.dsr_trans_max = None;
        let mut mac = UeUlMac::new(cfg);
        mac.handle_buffer_status(Time::ZERO, 3, 100);
        assert_eq!(srs(&mut mac, 0, 1000).len(), 100);
        assert!(!mac.ra_active());
    }

    #[test]
    fn test_sr_prohibit_timer_spaces_srs() {
        for (prohibit, want) in [
            (0u64, vec![0, 10, 20, 30, 40, 50]),
            (10, vec![0, 10, 20, 30, 40, 50]),
            (20, vec![0, 20, 40]),
            (25, vec![0, 30]),
            (30, vec![0, 30]),
        ] {
            let mut cfg = UeMacConfig::lte_default(1);
            cfg.sr_prohibit_timer = Duration::from_millis(prohibit);
            let mut mac = UeUlMac::new(cfg);
            mac.handle_buffer_status(Time::ZERO, 3, 100);
            assert_eq!(srs(&mut mac, 0, 60), want, "sr-ProhibitTimer {prohibit} ms");
        }
        // A BSR in a granted PDU cancels the SR and stops the timer: a new SR at once.
        let mut cfg = UeMacConfig::lte_default(1);
        cfg.sr_prohibit_timer = Duration::from_millis(50);
        let mut mac = UeUlMac::new(cfg);
        mac.handle_buffer_status(Time::ZERO, 3, 100);
        assert_eq!(srs(&mut mac, 0, 5), vec![0]);
        let g = UlGrant {
            rnti: 1,
            tb_bytes: 50,
            n_prb: 2,
            harq_id: 0,
            is_retx: false,
        };
        let tx = mac.handle_ul_grant(Time::from_millis(5), g);
        assert!(tx.bsr.is_some() && !mac.sr_pending());
        // Drained to nothing, then new data: regular BSR, SR at the next occasion (10 ms).
        mac.handle_buffer_status(Time::from_millis(6), 3, 0);
        mac.handle_buffer_status(Time::from_millis(7), 3, 80);
        assert_eq!(srs(&mut mac, 7, 15), vec![10]);
    }

    #[test]
    fn test_random_access_success_sends_the_bsr_in_msg3_and_restores_sr() {
        let mut cfg = UeMacConfig::lte_default(1);
        cfg.dsr_trans_max = Some(1);
        let mut mac = UeUlMac::new(cfg);
        mac.handle_buffer_status(Time::ZERO, 3, 5000);
        assert_eq!(srs(&mut mac, 0, 11), vec![0]);
        assert!(mac.ra_active());
        let mut msg3 = None;
        let mut done = None;
        for ms in 11..200 {
            let now = Time::from_millis(ms);
            while let Some(s) = mac.poll_ra(now) {
                match s {
                    RaStep::Preamble { .. } => mac.ra_preamble_result(now, true),
                    RaStep::Msg3 => {
                        mac.ra_msg3_result(now, true);
                        msg3 = mac.take_msg3_bsr();
                    }
                    RaStep::Success => done = Some(ms),
                    RaStep::Problem => panic!("problem"),
                }
            }
        }
        let b = msg3.expect("Msg3 carries a BSR");
        assert_eq!(b.kind, BsrKind::Regular);
        assert!(bsr_index_to_bytes(b.index[1]) as u64 >= 5000);
        // Given up at 10 ms; preamble at 11, RAR 14, Msg3 20, Msg4 24.
        assert_eq!(done, Some(24));
        assert!(!mac.ra_active());
        assert_eq!(
            mac.ul_outage(Time::from_millis(200)),
            Duration::from_millis(14)
        );
        // The SR resource is back: new data after a drain triggers an SR, not random access.
        mac.handle_buffer_status(Time::from_millis(200), 3, 0);
        mac.handle_buffer_status(Time::from_millis(201), 3, 10);
        assert!(mac.sr_pending());
        assert_eq!(mac.ra_counters().procedures, 1);
    }

    #[test]
    fn test_new_data_grant_ends_random_access() {
        let mut cfg = UeMacConfig::lte_default(1);
        cfg.dsr_trans_max = Some(1);
        let mut mac = UeUlMac::new(cfg);
        mac.handle_buffer_status(Time::ZERO, 3, 100);
        srs(&mut mac, 0, 11);
        assert!(mac.ra_active());
        let g = UlGrant {
            rnti: 1,
            tb_bytes: 200,
            n_prb: 2,
            harq_id: 0,
            is_retx: false,
        };
        mac.handle_ul_grant(Time::from_millis(12), g);
        assert!(!mac.ra_active());
        assert_eq!(
            mac.ul_outage(Time::from_millis(50)),
            Duration::from_millis(2)
        );
    }

    #[test]
    fn test_sr_occasion() {
        let mut cfg = UeMacConfig::lte_default(1);
        cfg.sr_offset = Duration::from_millis(3);
        let m = UeUlMac::new(cfg);
        assert_eq!(
            m.next_sr_occasion(Time::from_millis(0)),
            Time::from_millis(3)
        );
        assert_eq!(
            m.next_sr_occasion(Time::from_millis(3)),
            Time::from_millis(3)
        );
        assert_eq!(
            m.next_sr_occasion(Time::from_micros(3001)),
            Time::from_millis(13)
        );
    }
}
