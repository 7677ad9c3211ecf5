//! Per-slot MAC schedulers (the role of ns-3's `FfMacScheduler` implementations): round robin,
//! proportional fair and maximum rate, allocating a slot's PRBs among UEs and respecting the
//! PDCCH budget (a maximum number of DCIs = grants per slot, shared by DL and UL).
//!
//! Inputs per UE ([`SchedUe`]): achievable bytes per PRB this slot (from the PHY's CQI → MCS →
//! TBS chain, passed in), backlog (RLC buffer status incl. retransmission and STATUS queues,
//! or for the uplink the eNB's view of the UE's reported buffer), a pending HARQ retransmission
//! and a free HARQ process. Output: [`Allocation`]s `(rnti, n_prb, tb_bytes, harq_id, is_retx)`.
//!
//! Rules, in order:
//! 1. HARQ retransmissions first (TS 36.321 §5.3.2.2: a NACKed process is retransmitted
//!    before new data), with the PRB count of the first transmission (non-adaptive).
//! 2. New data to UEs with backlog and an idle HARQ process, one allocation per UE per slot,
//!    ordered by the policy: round robin (rotating start, PRBs shared equally, leftover
//!    redistributed), max rate (metric = achievable rate), proportional fair (metric =
//!    achievable rate / EWMA of served rate, time-domain PF: best metric first, each UE
//!    gets the PRBs its backlog needs).
//! 3. No more allocations than the remaining PDCCH budget, no new allocation wider than
//!    the UE's `max_prb` (the uplink's power-headroom limit, [`crate::ul_phy`]) and none
//!    narrower than its `min_prb` (the uplink's smallest useful grant: a UE whose floor does
//!    not fit this slot gets nothing).
//!
//! The PF average is `R ← (1 − 1/τ)·R + (1/τ)·r`, `τ` = time constant in slots, updated every
//! slot for every UE the scheduler knows (served rate `r` = 0 when not scheduled), as in the
//! textbook PF (Sesia et al., *LTE – The UMTS Long Term Evolution*, §12.3.1.2) and ns-3's
//! `PfFfMacScheduler`, which updates every configured UE's average each TTI. A UE that has
//! nothing to send is not in the input: its average decays by `(1 − 1/τ)` for each scheduling
//! opportunity it was absent from ([`Scheduler::set_opportunities`]: every slot, or under TDD
//! the slots of the scheduler's direction), applied when it next appears (`(1 − 1/τ)^k` at
//! once; opportunities in which the scheduler does not run at all count too). The scheduler
//! keeps its scratch vectors: no allocation per slot in steady state.

use super::sap::Rnti;
use rantcp_core::{Duration, Time};
use rustc_hash::FxHashMap;

/// Scheduling policy.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum SchedulerKind {
    RoundRobin,
    /// Proportional fair with the EWMA time constant of the served-rate average.
    ProportionalFair {
        time_constant: Duration,
    },
    MaxRate,
}

/// Scheduler configuration.
#[derive(Clone, Copy, Debug)]
pub struct SchedConfig {
    pub kind: SchedulerKind,
    /// PRBs in the band (e.g. 100 for LTE 20 MHz).
    pub n_prb: u16,
    /// Slot (TTI) length.
    pub slot: Duration,
    /// Smallest allocation (PRBs).
    pub min_prb: u16,
}

/// One UE as seen by the scheduler this slot.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SchedUe {
    pub rnti: Rnti,
    /// Achievable transport-block bytes per PRB this slot (from CQI/MCS/TBS).
    pub bytes_per_prb: f64,
    /// Bytes waiting (new data + RLC retransmissions + STATUS), or the reported UL buffer.
    pub backlog_bytes: u64,
    /// A HARQ process waiting for retransmission: `(harq_id, n_prb, tb_bytes)`.
    pub harq_retx: Option<(u8, u16, u32)>,
    /// An idle HARQ process for new data.
    pub free_harq: Option<u8>,
    /// Most PRBs one new allocation may span (`u16::MAX`: no limit). The uplink's
    /// power-headroom limit ([`crate::ul_phy`]).
    pub max_prb: u16,
    /// Fewest PRBs a new allocation to this UE may span (at most `max_prb`; 0 or 1: no floor):
    /// the uplink's smallest useful grant ([`crate::ul_phy::min_useful_grant`]). A UE that
    /// cannot get that many this slot gets none, rather than a grant it cannot use.
    pub min_prb: u16,
}

/// One scheduling decision.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Allocation {
    pub rnti: Rnti,
    pub n_prb: u16,
    pub tb_bytes: u32,
    pub harq_id: u8,
    pub is_retx: bool,
}

/// A per-slot scheduler (use one for the downlink and one for the uplink).
#[derive(Debug)]
pub struct Scheduler {
    pub cfg: SchedConfig,
    /// PF average served rate (bytes per slot) per UE and the opportunity it was last updated
    /// in. Only looked up, never iterated, so the hasher does not matter to outputs: FxHash
    /// (with std's SipHash, two lookups per UE per slot, lte-cell 40 UEs took 4 % more
    /// instructions).
    avg: FxHashMap<Rnti, PfAverage>,
    /// Opportunities before each position of the repeating opportunity pattern, the whole
    /// pattern's count last (`pattern.len() + 1` entries; empty: every slot is one).
    opp_prefix: Vec<u64>,
    rr_next: usize,
    order: Vec<(f64, usize)>,
    alloc_prb: Vec<u16>,
    /// PDCCH grants used by this scheduler in the last slot.
    pub last_grants: u16,
    /// PRBs used in the last slot.
    pub last_prbs: u16,
}

/// PRBs the backlog needs at `bytes_per_prb`, at least `min_prb` and the UE's own floor, at
/// most the UE's `max_prb`.
fn needed_prb(ue: &SchedUe, min_prb: u16) -> u16 {
    if ue.bytes_per_prb <= 0.0 {
        return 0;
    }
    let n = (ue.backlog_bytes as f64 / ue.bytes_per_prb).ceil();
    (n.min(u16::MAX as f64) as u16)
        .max(min_prb)
        .max(ue.min_prb)
        .min(ue.max_prb.max(1))
}

/// The fewest PRBs a new allocation to `ue` may span.
fn floor_prb(ue: &SchedUe) -> u16 {
    ue.min_prb.min(ue.max_prb.max(1))
}

/// `n` PRBs for `ue` unless they are below its floor (`min_prb`): then its floor if `left`
/// holds it, else none.
fn floored(ue: &SchedUe, n: u16, left: u16) -> u16 {
    let floor = floor_prb(ue);
    if n >= floor {
        n
    } else if floor <= left {
        floor
    } else {
        0
    }
}

/// One UE's PF average: `rate` (bytes per slot) as of the end of scheduling opportunity
/// number `opp` (see [`Scheduler::set_opportunities`]).
#[derive(Clone, Copy, Debug)]
struct PfAverage {
    rate: f64,
    opp: u64,
}

impl PfAverage {
    /// The average at the start of opportunity `now_opp`: decayed by `keep` for every
    /// opportunity after `opp` and before `now_opp` (in which the UE had nothing to be
    /// scheduled for, or the scheduler did not run because the cell had nothing to send).
    #[inline]
    fn at(&self, now_opp: u64, keep: f64) -> f64 {
        let absent = now_opp.saturating_sub(self.opp + 1);
        if absent == 0 {
            self.rate
        } else {
            self.rate * keep.powf(absent as f64)
        }
    }
}

impl Scheduler {
    pub fn new(cfg: SchedConfig) -> Self {
        Scheduler {
            cfg,
            avg: FxHashMap::default(),
            opp_prefix: Vec::new(),
            rr_next: 0,
            order: Vec::new(),
            alloc_prb: Vec::new(),
            last_grants: 0,
            last_prbs: 0,
        }
    }

    /// Average served rate the PF metric uses (bytes per slot) at the end of the last
    /// opportunity the UE was in the scheduler's input, if known ([`Self::average_rate_at`] decays it to `now`).
    pub fn average_rate(&self, rnti: Rnti) -> Option<f64> {
        self.avg.get(&rnti).map(|a| a.rate)
    }

    /// Average served rate the PF metric would use for `rnti` in the slot starting at `now`:
    /// the stored average decayed over the opportunities since the UE was last in the input.
    pub fn average_rate_at(&self, rnti: Rnti, now: Time) -> Option<f64> {
        let keep = 1.0 - 1.0 / self.pf_tau()?;
        let k = self.opportunity_index(now);
        self.avg.get(&rnti).map(|a| a.at(k, keep))
    }

    /// Declares which slots are this scheduler's opportunities: slot `s` is one when
    /// `pattern[s % pattern.len()]` (a TDD pattern's downlink slots for the downlink
    /// scheduler; for the uplink, the slots whose grant lands in an uplink slot). Empty (the
    /// default): every slot. The PF average decays once per opportunity, so a UE
    /// backlogged throughout is averaged over exactly the slots it could be served in.
    pub fn set_opportunities(&mut self, pattern: Vec<bool>) {
        self.opp_prefix = if pattern.is_empty() {
            Vec::new()
        } else {
            std::iter::once(0)
                .chain(pattern.iter().scan(0u64, |n, &o| {
                    *n += o as u64;
                    Some(*n)
                }))
                .collect()
        };
    }

    /// Number of scheduling opportunities in the slots before the one at `now`.
    #[inline]
    fn opportunity_index(&self, now: Time) -> u64 {
        let s = self.slot_index(now);
        let Some((&per_pattern, _)) = self.opp_prefix.split_last() else {
            return s;
        };
        let n = self.opp_prefix.len() as u64 - 1;
        (s / n) * per_pattern + self.opp_prefix[(s % n) as usize]
    }

    /// The PF time constant in slots (`None` for the other policies).
    fn pf_tau(&self) -> Option<f64> {
        match self.cfg.kind {
            SchedulerKind::ProportionalFair { time_constant } => Some(
                (time_constant.as_nanos() as f64 / self.cfg.slot.as_nanos().max(1) as f64).max(1.0),
            ),
            _ => None,
        }
    }

    /// Index of the slot that starts at (or contains) `now`.
    #[inline]
    fn slot_index(&self, now: Time) -> u64 {
        now.as_nanos() / self.cfg.slot.as_nanos().max(1)
    }

    /// Schedules one slot. `max_grants` is the PDCCH budget left for this scheduler. Allocations
    /// are appended to `out` (not cleared). `tbs(ue, n_prb)` gives the transport block for an
    /// allocation (pass [`Scheduler::linear_tbs`] for `floor(n_prb · bytes_per_prb)`).
    pub fn schedule_with(
        &mut self,
        now: Time,
        ues: &[SchedUe],
        max_grants: u16,
        mut tbs: impl FnMut(&SchedUe, u16) -> u32,
        out: &mut Vec<Allocation>,
    ) {
        let start = out.len();
        let mut prb_left = self.cfg.n_prb;
        let mut grants_left = max_grants;
        self.alloc_prb.clear();
        self.alloc_prb.resize(ues.len(), 0);
        let pf_tau = self.pf_tau();
        let pf_keep = pf_tau.map(|tau| 1.0 - 1.0 / tau);
        let opp = self.opportunity_index(now);

        // 1. HARQ retransmissions first.
        for (i, ue) in ues.iter().enumerate() {
            if grants_left == 0 {
                break;
            }
            if let Some((hid, n, tb)) = ue.harq_retx {
                // A UE whose retransmission does not fit gets no new data either.
                self.alloc_prb[i] = u16::MAX;
                if n <= prb_left {
                    prb_left -= n;
                    grants_left -= 1;
                    out.push(Allocation {
                        rnti: ue.rnti,
                        n_prb: n,
                        tb_bytes: tb,
                        harq_id: hid,
                        is_retx: true,
                    });
                }
            }
        }

        // 2. New data.
        self.order.clear();
        for (i, ue) in ues.iter().enumerate() {
            // A UE whose floor does not fit the PRBs the retransmissions left waits.
            if self.alloc_prb[i] == 0
                && ue.backlog_bytes > 0
                && ue.free_harq.is_some()
                && ue.bytes_per_prb > 0.0
                && floor_prb(ue) <= prb_left
            {
                let metric = match self.cfg.kind {
                    SchedulerKind::RoundRobin => 0.0,
                    SchedulerKind::MaxRate => ue.bytes_per_prb,
                    SchedulerKind::ProportionalFair { .. } => {
                        let r = ue.bytes_per_prb * self.cfg.n_prb.min(ue.max_prb) as f64;
                        let keep = pf_keep.unwrap_or(1.0);
                        let avg = self
                            .avg
                            .get(&ue.rnti)
                            .map_or(0.0, |a| a.at(opp, keep))
                            .max(1e-3);
                        r / avg
                    }
                };
                self.order.push((metric, i));
            }
        }
        if !self.order.is_empty() && grants_left > 0 && prb_left >= self.cfg.min_prb.max(1) {
            match self.cfg.kind {
                SchedulerKind::RoundRobin => {
                    // Rotate by RNTI order position so that the start moves every slot.
                    self.order.sort_by_key(|&(_, i)| ues[i].rnti);
                    let n = self.order.len();
                    let s = self.rr_next % n;
                    self.order.rotate_left(s);
                    let k = (grants_left as usize)
                        .min(n)
                        .min((prb_left / self.cfg.min_prb.max(1)) as usize);
                    self.order.truncate(k);
                    self.rr_next = (s + k) % n.max(1);
                    // Equal shares, then redistribute leftovers to UEs that need more.
                    let share = prb_left / k as u16;
                    for &(_, i) in &self.order {
                        let want = needed_prb(&ues[i], self.cfg.min_prb);
                        let a = floored(&ues[i], want.min(share), prb_left);
                        self.alloc_prb[i] = a;
                        prb_left -= a;
                    }
                    for &(_, i) in &self.order {
                        if self.alloc_prb[i] == 0 {
                            continue; // below its floor: no grant this slot
                        }
                        let want = needed_prb(&ues[i], self.cfg.min_prb);
                        let extra = want.saturating_sub(self.alloc_prb[i]).min(prb_left);
                        self.alloc_prb[i] += extra;
                        prb_left -= extra;
                    }
                }
                SchedulerKind::MaxRate | SchedulerKind::ProportionalFair { .. } => {
                    // Best metric first; ties by RNTI for determinism.
                    self.order.sort_by(|a, b| {
                        b.0.total_cmp(&a.0).then(ues[a.1].rnti.cmp(&ues[b.1].rnti))
                    });
                    for (used, &(_, i)) in self.order.iter().enumerate() {
                        if used == grants_left as usize || prb_left < self.cfg.min_prb.max(1) {
                            break;
                        }
                        let want = needed_prb(&ues[i], self.cfg.min_prb);
                        let a = floored(&ues[i], want.min(prb_left), prb_left);
                        self.alloc_prb[i] = a;
                        prb_left -= a;
                    }
                }
            }
            for &(_, i) in &self.order {
                let n = self.alloc_prb[i];
                if n == 0 || n == u16::MAX {
                    continue;
                }
                let ue = &ues[i];
                let tb = tbs(ue, n);
                out.push(Allocation {
                    rnti: ue.rnti,
                    n_prb: n,
                    tb_bytes: tb,
                    harq_id: ue.free_harq.unwrap(),
                    is_retx: false,
                });
            }
        }

        // 3. PF averages.
        if let (Some(tau), Some(keep)) = (pf_tau, pf_keep) {
            for ue in ues {
                let served: f64 = out[start..]
                    .iter()
                    .filter(|a| a.rnti == ue.rnti)
                    .map(|a| a.tb_bytes as f64)
                    .sum();
                let e = self.avg.entry(ue.rnti).or_insert(PfAverage {
                    rate: 0.0,
                    opp: opp.saturating_sub(1),
                });
                *e = PfAverage {
                    rate: keep * e.at(opp, keep) + served / tau,
                    opp,
                };
            }
        }
        self.last_grants = (out.len() - start) as u16;
        self.last_prbs = out[start..].iter().map(|a| a.n_prb).sum();
    }

    /// `floor(n_prb · bytes_per_prb)`.
    pub fn linear_tbs(ue: &SchedUe, n_prb: u16) -> u32 {
        (n_prb as f64 * ue.bytes_per_prb).floor() as u32
    }

    /// [`Self::schedule_with`] with [`Self::linear_tbs`].
    pub fn schedule(
        &mut self,
        now: Time,
        ues: &[SchedUe],
        max_grants: u16,
        out: &mut Vec<Allocation>,
    ) {
        self.schedule_with(now, ues, max_grants, Self::linear_tbs, out)
    }
}

/// The PDCCH budget of one slot: DL and UL grants (DCIs) share `max_per_slot`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PdcchBudget {
    pub max_per_slot: u16,
    pub used: u16,
}

impl PdcchBudget {
    pub fn new(max_per_slot: u16) -> Self {
        PdcchBudget {
            max_per_slot,
            used: 0,
        }
    }
    /// Start of a slot.
    pub fn reset(&mut self) {
        self.used = 0;
    }
    pub fn remaining(&self) -> u16 {
        self.max_per_slot.saturating_sub(self.used)
    }
    pub fn consume(&mut self, n: u16) {
        self.used = self.used.saturating_add(n).min(self.max_per_slot);
    }
}

/// Jain's fairness index of `x`: `(Σx)² / (n·Σx²)`.
pub fn jain_index(x: &[f64]) -> f64 {
    let s: f64 = x.iter().sum();
    let s2: f64 = x.iter().map(|v| v * v).sum();
    if s2 == 0.0 {
        return 1.0;
    }
    s * s / (x.len() as f64 * s2)
}
