//! The uplink PHY as the eNB/gNB scheduler sees it: PUSCH power control (TS 36.213 §5.1.1.1,
//! TS 38.213 §7.1.1), the power headroom (TS 36.213 §5.1.1.2, reported per TS 36.321 §5.4.6),
//! uplink link adaptation at a BLER target, and the power-headroom limit on how many PRBs one
//! grant may span. [`crate::radio::RadioEnvironment`] applies it per UE (`ul_sinr_db`,
//! `ul_mcs`, `ul_grant_limit`); the cell's uplink scheduler (`crate::cell`) uses the limit.
//!
//! # Model
//! * **Power control** (open loop, TS 36.213 §5.1.1.1 with f(i) = 0 and Δ_TF = 0, i.e.
//!   no accumulated TPC commands and `deltaMCS-Enabled` off, the TS 36.331 default):
//!
//!   P_PUSCH(M) = min(P_CMAX, P_O_PUSCH + 10·log10(2^μ·M) + α·PL)   (dBm)
//!
//!   over M PRBs (μ = 0 in LTE; TS 38.213 §7.1.1 for NR), where PL is the UE's downlink path
//!   loss estimate (referenceSignalPower − filtered RSRP: the serving link's coupling loss
//!   incl. antenna gains and shadowing, without fast fading). The power is spread evenly over
//!   the M PRBs, so the power per PRB is min(P_CMAX − 10·log10 M, P_O_PUSCH + 10·log10 2^μ +
//!   α·PL): constant while the UE has headroom, falling 3 dB per doubling of M once it is
//!   power-limited.
//! * **Power headroom** (type 1, TS 36.213 §5.1.1.2): PH(M) = P_CMAX − (P_O_PUSCH +
//!   10·log10(2^μ·M) + α·PL). The UE reports it (PHR MAC CE, TS 36.321 §5.4.6 / §6.1.3.6);
//!   here the report is ideal (the eNB knows PH whenever it schedules: PL changes on the
//!   scale of metres, the PHR timers on the scale of tens of ms).
//! * **Uplink SINR** of a grant of M PRBs: power per PRB + coupling gain × fast fading − the
//!   base station's noise per PRB (−174 dBm/Hz + 10·log10(12·SCS) + NF_BS). No uplink
//!   inter-cell interference is modelled.
//! * **Link adaptation** (TS 36.213 §8.6.1; TS 38.214 §6.1.4.1): the eNB measures the uplink
//!   SINR (SRS/DM-RS, no delay) and, for a grant of M PRBs, picks the highest MCS whose block
//!   error probability at the SINR it predicts for M is at most the BLER target (10 % by
//!   default, the same curves as the downlink, [`crate::phy::BlerModel`]). PUSCH I_MCS 0..28
//!   of TS 36.213 Table 8.6.1-1 map to the same transport block indices I_TBS 0..26 as the
//!   PDSCH table, so an uplink MCS is carried as the PDSCH-table MCS of the same I_TBS (same
//!   TBS, same threshold; [`ul_imcs`] gives the Table 8.6.1-1 index for logs). NR PUSCH without
//!   transform precoding uses the PDSCH MCS tables (TS 38.214 §6.1.4.1).
//! * **Power-headroom limit on the grant** (what eNB schedulers do with the PHR): among the
//!   PUSCH sizes M of TS 36.211 §5.3.3 (M = 2^a·3^b·5^c ≤ N_RB), the grant may span at most
//!   the smallest M that maximises the transport block at the BLER target. While the UE has
//!   headroom the SINR does not depend on M and the limit is the whole carrier; once it is
//!   power-limited, more PRBs lower the SINR per PRB and beyond the limit they add no bits —
//!   so a cell-edge UE gets few PRBs at a robust MCS rather than many PRBs at an SINR no MCS
//!   can carry. If not even one PRB at P_CMAX reaches the target for MCS 0, the limit is one
//!   PRB at MCS 0 (then the floor below decides).
//! * **Smallest useful grant** ([`min_useful_grant`]): a grant must carry a short BSR and one
//!   RLC PDU with a data byte (7 bytes in LTE: TS 36.321 §6.1.2/§6.1.3.1, TS 36.322 §6.2.1;
//!   `RanConfig::ul_min_useful_tbs`), or it carries nothing the eNB can use and the eNB, still
//!   seeing the backlog, grants again every slot. Where the headroom limit's block is smaller,
//!   the grant widens to the most robust allocation that carries the minimum, below the BLER
//!   target if it must (HARQ combining carries it), as ns-3 LENA's uplink schedulers never
//!   grant fewer than 3 PRBs "to ensure TxOpportunity >= 7 bytes"; a UE that not even HARQ
//!   combining over all transmissions would carry there at its large-scale SINR (without fast
//!   fading) is out of uplink coverage and gets no new grant (ns-3 LENA grants nothing to a
//!   UE whose SRS CQI is 0).
//!
//! Defaults ([`UlPowerConfig::default`]): P_CMAX = 23 dBm (power class 3, TS 36.101 §6.2.2 /
//! TS 38.101-1 §6.2.1), α = 1 (full path-loss compensation; TS 36.331 `alpha` al1),
//! P_O_PUSCH = −106 dBm per 180 kHz (TS 36.331 has no default for `p0-NominalPUSCH`, range
//! −126…24 dBm; −106 dBm puts the received power per PRB about 10 dB above a 5 dB-NF
//! receiver's noise; ns-3 LENA's default is −80 dBm, which drives every UE beyond ~100 m to
//! P_CMAX), BLER target 10 %.

use crate::phy::BlerModel;

/// Uplink power-control and link-adaptation parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct UlPowerConfig {
    /// P_CMAX: UE maximum output power (dBm).
    pub p_cmax_dbm: f64,
    /// P_O_PUSCH = P_O_NOMINAL_PUSCH + P_O_UE_PUSCH (dBm per 180 kHz).
    pub p0_dbm: f64,
    /// Path-loss compensation factor α ∈ {0, 0.4, 0.5, …, 1}.
    pub alpha: f64,
    /// Block error target of uplink link adaptation (new transmissions).
    pub bler_target: f64,
}

impl Default for UlPowerConfig {
    fn default() -> Self {
        UlPowerConfig {
            p_cmax_dbm: 23.0,
            p0_dbm: -106.0,
            alpha: 1.0,
            bler_target: 0.1,
        }
    }
}

impl UlPowerConfig {
    /// PUSCH transmit power per PRB (dBm) of a grant of `n_prb` PRBs at path loss `pl_db`;
    /// `mu_db` = 10·log10(2^μ) (0 in LTE). TS 36.213 §5.1.1.1 / TS 38.213 §7.1.1.
    pub fn psd_dbm(&self, pl_db: f64, n_prb: u32, mu_db: f64) -> f64 {
        self.psd_dbm_at(pl_db, 10.0 * (n_prb.max(1) as f64).log10(), mu_db)
    }
    /// [`Self::psd_dbm`] with 10·log10(M) given.
    #[inline]
    pub fn psd_dbm_at(&self, pl_db: f64, m_db: f64, mu_db: f64) -> f64 {
        (self.p_cmax_dbm - m_db).min(self.p0_dbm + mu_db + self.alpha * pl_db)
    }
    /// Total PUSCH transmit power (dBm), TS 36.213 §5.1.1.1.
    pub fn pusch_power_dbm(&self, pl_db: f64, n_prb: u32, mu_db: f64) -> f64 {
        self.psd_dbm(pl_db, n_prb, mu_db) + 10.0 * (n_prb.max(1) as f64).log10()
    }
    /// Type 1 power headroom (dB) for `n_prb` PRBs, TS 36.213 §5.1.1.2 (negative: the UE is
    /// power-limited and sends at P_CMAX).
    pub fn power_headroom_db(&self, pl_db: f64, n_prb: u32, mu_db: f64) -> f64 {
        self.p_cmax_dbm
            - (self.p0_dbm + mu_db + 10.0 * (n_prb.max(1) as f64).log10() + self.alpha * pl_db)
    }
}

/// The SINR thresholds (dB) of one MCS table at one BLER target: what link adaptation reads.
#[derive(Clone, Copy, Debug)]
pub struct McsThresholds {
    /// Per MCS, the SINR at which the BLER reaches the target (+∞ for a reserved MCS).
    pub db: [f64; 29],
    /// Per MCS, the lowest threshold of that MCS and every higher one: non-decreasing even
    /// where the table is not. TS 38.214 Table 5.1.3.1-1 is not: MCS 17 (64QAM, code rate
    /// 438/1024, 2.5664 bit/s/Hz) is a little below MCS 16 (16QAM, 658/1024, 2.5703), so its
    /// threshold is 0.014 dB lower and a binary search over `db` answered MCS 15 in between.
    reach_db: [f64; 29],
}

impl McsThresholds {
    /// From per-MCS thresholds (+∞ for a reserved MCS).
    pub fn new(db: [f64; 29]) -> Self {
        let mut reach_db = db;
        for m in (0..28).rev() {
            reach_db[m] = reach_db[m].min(reach_db[m + 1]);
        }
        McsThresholds { db, reach_db }
    }

    /// Highest MCS whose threshold `sinr_db` reaches, `None` if none does. A binary search over the
    /// suffix minima: the highest MCS whose suffix minimum is reached is itself reached
    /// (every higher MCS's threshold is above `sinr_db`).
    #[inline]
    pub fn best(&self, sinr_db: f64) -> Option<u8> {
        let n = self.reach_db.partition_point(|&t| sinr_db >= t);
        n.checked_sub(1).map(|m| m as u8)
    }
}

/// SINR (dB) at which `bler` reaches `target` for each MCS of its table (29 entries; a reserved
/// MCS gets +∞). From the logistic curve of [`BlerModel::bler`].
pub fn mcs_thresholds(bler: &BlerModel, target: f64) -> McsThresholds {
    let t = target.clamp(1e-6, 1.0 - 1e-6);
    let k = 2.0 * 9f64.ln() / bler.width_db;
    let shift = (((1.0 - t) / t).ln() - 9f64.ln()) / k;
    let mut out = [f64::INFINITY; 29];
    for (m, o) in out.iter_mut().enumerate() {
        if let Some(thr) = bler.threshold_db(m as u8) {
            *o = thr + shift;
        }
    }
    McsThresholds::new(out)
}

/// PUSCH sizes of TS 36.211 §5.3.3 (M = 2^a·3^b·5^c) up to `max`, ascending, with
/// 10·log10(M).
pub fn pusch_sizes(max: u32) -> Vec<(u32, f64)> {
    (1..=max)
        .filter(|&m| {
            let mut x = m;
            for p in [2, 3, 5] {
                while x % p == 0 {
                    x /= p;
                }
            }
            x == 1
        })
        .map(|m| (m, 10.0 * (m as f64).log10()))
        .collect()
}

/// The power-headroom limit of one grant: over `sizes` (ascending, with 10·log10 M), with
/// `sinr_at(M, 10·log10 M)` the SINR the eNB predicts for M PRBs (non-increasing in M) and
/// `tbs(M, mcs)` the transport block (non-decreasing in M at a fixed MCS),
/// the smallest M that maximises the TBS at the threshold MCS, with that TBS. `(1, mcs 0)`
/// when no size reaches MCS 0's threshold. `headroom_db` is the power headroom on one PRB:
/// up to 10·log10 M = headroom_db the UE is not power-limited, the SINR does not depend on M
/// and the largest such size is the best of them, so the search starts there.
pub fn grant_limit(
    sizes: &[(u32, f64)],
    thresholds: &McsThresholds,
    headroom_db: f64,
    mut sinr_at: impl FnMut(u32, f64) -> f64,
    mut tbs: impl FnMut(u32, u8) -> u32,
) -> (u32, u8, u32) {
    let mut best: Option<(u32, u8, u32)> = None;
    let first = sizes
        .partition_point(|&(_, m_db)| m_db <= headroom_db)
        .saturating_sub(1);
    for &(m, m_db) in &sizes[first.min(sizes.len())..] {
        let Some(mcs) = thresholds.best(sinr_at(m, m_db)) else {
            break; // the SINR only falls with M
        };
        let b = tbs(m, mcs);
        if best.is_none_or(|(_, _, bb)| b > bb) {
            best = Some((m, mcs, b));
        }
    }
    best.unwrap_or_else(|| (1, 0, tbs(1, 0)))
}

/// The smallest useful uplink grant: a grant must carry at least `min_tbs` bytes, what a short
/// BSR and one RLC PDU with one byte of data take ([`crate::cell::RanConfig::ul_min_useful_tbs`]);
/// a smaller one carries nothing the eNB can use (the UE sends no data, or a BSR alone).
/// Over `sizes` (ascending, with 10·log10 M), with `sinr_at` and `tbs` as for [`grant_limit`]:
/// * the first M whose link-adaptation MCS (at the BLER target) gives a TBS of at least
///   `min_tbs`, with that MCS: the BLER target holds, so nothing is lost;
/// * if no M does (a power-limited UE whose SINR per PRB falls as fast as the PRBs grow), the
///   most robust way to carry `min_tbs`: over M, the lowest MCS whose TBS on M PRBs reaches
///   `min_tbs`, the M with the largest SINR margin over that MCS's threshold (smallest M on a
///   tie). The BLER target is then missed on the first transmission and HARQ combining
///   carries the block — as ns-3 LENA widens every uplink grant to at least 3 PRBs "to ensure
///   TxOpportunity >= 7 bytes" (`pf-ff-mac-scheduler.cc`, `DoSchedUlTriggerReq`) whatever
///   the SINR per PRB;
/// * `None` if even that block cannot reach its threshold with the HARQ budget, i.e. margin +
///   `combining_db` < 0, where `combining_db` = 10·log10 of the transmissions HARQ allows
///   (chase combining adds their SINRs, [`crate::phy::HarqSoftBuffers`]): evaluated on the
///   UE's large-scale SINR, the UE is then out of uplink coverage and gets no grant for new
///   data until that recovers — every grant would fail (ns-3 LENA grants nothing to a UE whose
///   uplink CQI is 0; [`crate::radio::RadioEnvironment::ul_min_useful_grant`]).
///
/// The search stops at the first M where MCS 0 reaches `min_tbs`: beyond it the SINR only
/// falls and the MCS cannot. `None` too if no size of `sizes` can carry `min_tbs`.
pub fn min_useful_grant(
    sizes: &[(u32, f64)],
    thresholds: &McsThresholds,
    min_tbs: u32,
    combining_db: f64,
    mut sinr_at: impl FnMut(u32, f64) -> f64,
    mut tbs: impl FnMut(u32, u8) -> u32,
) -> Option<(u32, u8, u32)> {
    let mut robust: Option<(f64, u32, u8, u32)> = None;
    for &(m, m_db) in sizes {
        let sinr = sinr_at(m, m_db);
        if let Some(la) = thresholds.best(sinr) {
            let b = tbs(m, la);
            if b >= min_tbs {
                return Some((m, la, b));
            }
        }
        if let Some(mcs) = lowest_mcs_for(thresholds, min_tbs, |mcs| tbs(m, mcs)) {
            let margin = sinr - thresholds.db[mcs as usize];
            if robust.is_none_or(|(best, ..)| margin > best) {
                robust = Some((margin, m, mcs, tbs(m, mcs)));
            }
            if mcs == 0 {
                break;
            }
        }
    }
    robust
        .filter(|&(margin, ..)| margin + combining_db >= 0.0)
        .map(|(_, m, mcs, b)| (m, mcs, b))
}

/// The lowest MCS (with a finite threshold) whose TBS `tbs(mcs)` is at least `min_tbs`.
pub fn lowest_mcs_for(
    thresholds: &McsThresholds,
    min_tbs: u32,
    mut tbs: impl FnMut(u8) -> u32,
) -> Option<u8> {
    (0..29u8).find(|&mcs| thresholds.db[mcs as usize].is_finite() && tbs(mcs) >= min_tbs)
}

/// TS 36.213 Table 8.6.1-1 PUSCH I_MCS of the transport block index that PDSCH-table MCS
/// `dl_mcs` carries (the uplink MCS as the eNB signals it).
pub fn ul_imcs(dl_mcs: u8) -> u8 {
    use crate::phy::lte_tbs::{MCS_TO_ITBS_DL, MCS_TO_ITBS_UL};
    let Some(&itbs) = MCS_TO_ITBS_DL.get(dl_mcs as usize) else {
        return dl_mcs;
    };
    // The lowest PUSCH I_MCS with that I_TBS (I_TBS 10 and 19 have two: QPSK/16QAM, 16/64QAM).
    MCS_TO_ITBS_UL
        .iter()
        .position(|&t| t == itbs)
        .unwrap_or(dl_mcs as usize) as u8
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::phy::{lte_tbs_bits_for_mcs, McsTable};

    #[test]
    fn power_control_by_hand() {
        let pc = UlPowerConfig::default();
        // PL 100 dB: P0 + PL = −6 dBm per PRB; 10 PRBs → 4 dBm, PH = 19 dB.
        assert!((pc.psd_dbm(100.0, 10, 0.0) + 6.0).abs() < 1e-12);
        assert!((pc.pusch_power_dbm(100.0, 10, 0.0) - 4.0).abs() < 1e-12);
        assert!((pc.power_headroom_db(100.0, 10, 0.0) - 19.0).abs() < 1e-12);
        // PL 135 dB: P0 + PL = 29 dBm > P_CMAX on one PRB: power-limited, 23 dBm spread.
        assert!((pc.psd_dbm(135.0, 1, 0.0) - 23.0).abs() < 1e-12);
        assert!((pc.psd_dbm(135.0, 4, 0.0) - (23.0 - 10.0 * 4f64.log10())).abs() < 1e-12);
        assert!((pc.pusch_power_dbm(135.0, 4, 0.0) - 23.0).abs() < 1e-12);
        assert!((pc.power_headroom_db(135.0, 1, 0.0) + 6.0).abs() < 1e-12);
        // α = 0.8: PSD = P0 + 0.8·PL.
        let f = UlPowerConfig { alpha: 0.8, ..pc };
        assert!((f.psd_dbm(100.0, 1, 0.0) - (-106.0 + 80.0)).abs() < 1e-12);
        // NR μ = 3 (120 kHz): the PRB is 8 times wider, so is the nominal power.
        assert!((pc.psd_dbm(100.0, 1, 10.0 * 8f64.log10()) - (-6.0 + 9.0309)).abs() < 1e-4);
    }

    #[test]
    fn thresholds_hit_the_target() {
        let b = BlerModel::new(McsTable::Lte);
        let t10 = mcs_thresholds(&b, 0.1);
        let t1 = mcs_thresholds(&b, 0.01);
        for m in 0..29u8 {
            assert!((b.bler(t10.db[m as usize], m) - 0.1).abs() < 1e-9);
            assert!((b.bler(t1.db[m as usize], m) - 0.01).abs() < 1e-9);
            assert!((t10.db[m as usize] - b.threshold_db(m).unwrap()).abs() < 1e-9);
        }
        assert_eq!(t10.best(t10.db[0] - 0.01), None);
        assert_eq!(t10.best(t10.db[0]), Some(0));
        assert_eq!(t10.best(t10.db[12] + 0.01), Some(12));
        assert_eq!(t10.best(40.0), Some(28));
    }

    #[test]
    fn best_mcs_where_the_table_is_not_monotone() {
        // TS 38.214 Table 5.1.3.1-1: MCS 17 (64QAM, 438/1024) has a slightly lower spectral
        // efficiency than MCS 16 (16QAM, 658/1024), so its threshold is lower.
        let t = mcs_thresholds(&BlerModel::new(McsTable::Nr1), 0.1);
        assert!(t.db[17] < t.db[16], "{} {}", t.db[16], t.db[17]);
        // Between them MCS 17 meets the target and MCS 16 does not: the answer is 17 (a binary
        // search over the raw thresholds said 15).
        assert_eq!(t.best(0.5 * (t.db[16] + t.db[17])), Some(17));
        // Everywhere: the highest MCS whose own threshold is reached, as a linear scan finds.
        for table in [McsTable::Lte, McsTable::Nr1, McsTable::Nr2] {
            let t = mcs_thresholds(&BlerModel::new(table), 0.1);
            for i in 0..4000 {
                let s = -12.0 + i as f64 * 0.01;
                let scan = (0..29u8).rev().find(|&m| s >= t.db[m as usize]);
                assert_eq!(t.best(s), scan, "{table:?} at {s} dB");
            }
        }
    }

    #[test]
    fn pusch_sizes_are_2_3_5_smooth() {
        let s: Vec<u32> = pusch_sizes(100).iter().map(|x| x.0).collect();
        assert_eq!(&s[..12], &[1, 2, 3, 4, 5, 6, 8, 9, 10, 12, 15, 16]);
        assert_eq!(s.len(), 34);
        assert_eq!(*s.last().unwrap(), 100);
        assert!(!s.contains(&7) && !s.contains(&98));
        assert!((pusch_sizes(8)[6].1 - 10.0 * 8f64.log10()).abs() < 1e-12);
    }

    #[test]
    fn grant_limit_with_and_without_headroom() {
        let b = BlerModel::new(McsTable::Lte);
        let thr = mcs_thresholds(&b, 0.1);
        let sizes = pusch_sizes(100);
        let tbs = |m: u32, mcs: u8| lte_tbs_bits_for_mcs(mcs, m as u16, 1).unwrap() / 8;
        // Headroom everywhere (SINR 10 dB at any M): the whole carrier.
        let (m, mcs, tb) = grant_limit(&sizes, &thr, f64::INFINITY, |_, _| 10.0, tbs);
        assert_eq!((m, mcs), (100, thr.best(10.0).unwrap()));
        assert_eq!(tb, tbs(100, mcs));
        // Headroom up to 15 PRBs (11.76 dB), then −3 dB per doubling from 10 dB: the search
        // starts at 15 and the answer equals a full search's.
        let pl = |_m: u32, m_db: f64| 10.0 - (m_db - 10.0 * 15f64.log10()).max(0.0);
        let full = grant_limit(&sizes, &thr, -1.0, pl, tbs);
        assert_eq!(
            grant_limit(&sizes, &thr, 10.0 * 15f64.log10(), pl, tbs),
            full
        );
        assert!(full.0 > 15, "{full:?}");
        // Power-limited: 1-PRB SINR 0.6 dB, −3 dB per doubling. Hand check over the sizes:
        // M=1 MCS 7 → 13 B, 2 → MCS 4 15 B, 3 → MCS 2 18 B, 4 → MCS 1 18 B, 5 → MCS 0 15 B,
        // 6 → MCS 0 19 B, 8 → below MCS 0: the limit is 6 PRBs at MCS 0.
        let s1 = 0.6;
        let at = |_m: u32, m_db: f64| s1 - m_db;
        assert_eq!(thr.best(at(8, 10.0 * 8f64.log10())), None);
        let (m, mcs, tb) = grant_limit(&sizes, &thr, -0.1, at, tbs);
        assert_eq!((m, mcs, tb), (6, 0, 19));
        // Hopeless link: one PRB at MCS 0.
        assert_eq!(
            grant_limit(&sizes, &thr, -30.0, |_, _| -20.0, tbs),
            (1, 0, 2)
        );
    }

    #[test]
    fn min_useful_grant_by_hand() {
        let b = BlerModel::new(McsTable::Lte);
        let thr = mcs_thresholds(&b, 0.1);
        let sizes = pusch_sizes(100);
        let tbs = |m: u32, mcs: u8| lte_tbs_bits_for_mcs(mcs, m as u16, 1).unwrap() / 8;
        let four_tx = 10.0 * 4f64.log10();
        // TS 36.213 Table 7.1.7.2.1-1 (bytes): 1 PRB: MCS 0..4 = 2, 3, 4, 5, 7; 2 PRBs: MCS 0,
        // 1 = 4, 7; 3 PRBs: MCS 0 = 7. 10 % thresholds: MCS 0 −7.30, 1 −6.22, 2 −5.32,
        // 3 −3.90, 4 −2.91 dB.
        assert_eq!(
            (tbs(1, 4), tbs(2, 1), tbs(3, 0), tbs(1, 2), tbs(2, 0)),
            (7, 7, 7, 4, 4)
        );
        // Headroom (10 dB at any M): one PRB at the link-adaptation MCS already carries 7 B.
        let la = thr.best(10.0).unwrap();
        assert_eq!(
            min_useful_grant(&sizes, &thr, 7, four_tx, |_, _| 10.0, tbs),
            Some((1, la, tbs(1, la)))
        );
        // Power-limited at −2 dB on one PRB, −3 dB per doubling: 1 PRB at MCS 4 = 7 B meets
        // the target.
        assert_eq!(
            min_useful_grant(&sizes, &thr, 7, four_tx, |_, m_db| -2.0 - m_db, tbs),
            Some((1, 4, 7))
        );
        // The lte-m2m livelock: −4.5 dB on one PRB. The headroom limit is a 4-byte block (1 PRB
        // at MCS 2, or 2 at MCS 0), which carries no RLC PDU. Margins of the 7-byte blocks:
        // 1 PRB MCS 4: −4.5 + 2.91 = −1.59; 2 PRBs MCS 1: −4.5 − 3.01 + 6.22 = −1.30;
        // 3 PRBs MCS 0: −4.5 − 4.77 + 7.30 = −1.97 dB. The most robust: 2 PRBs at MCS 1.
        let at = |_m: u32, m_db: f64| -4.5 - m_db;
        assert_eq!(grant_limit(&sizes, &thr, -10.0, at, tbs).2, 4);
        assert_eq!(
            min_useful_grant(&sizes, &thr, 7, four_tx, at, tbs),
            Some((2, 1, 7))
        );
        // Without HARQ combining (one transmission) −1.30 dB is short: out of coverage.
        assert_eq!(min_useful_grant(&sizes, &thr, 7, 0.0, at, tbs), None);
        // Four transmissions give +6.02 dB: −7.5 dB on one PRB → 2 PRBs MCS 1 at −4.30 dB
        // margin still decodes; −12 dB on one PRB → best margin 1 PRB MCS 4 −9.09 or 3 PRBs MCS 0
        // −9.47: hopeless.
        assert_eq!(
            min_useful_grant(&sizes, &thr, 7, four_tx, |_, m_db| -7.5 - m_db, tbs),
            Some((2, 1, 7))
        );
        assert_eq!(
            min_useful_grant(&sizes, &thr, 7, four_tx, |_, m_db| -12.0 - m_db, tbs),
            None
        );
        assert_eq!(
            min_useful_grant(&sizes, &thr, 7, four_tx, |_, _| -20.0, tbs),
            None
        );
        // A hopeless link with headroom (SINR flat in M): MCS 0 on 3 PRBs is the most robust.
        assert_eq!(
            min_useful_grant(&sizes, &thr, 7, four_tx, |_, _| -9.0, tbs),
            Some((3, 0, 7))
        );
        // lowest_mcs_for: 1 PRB reaches 5 B at MCS 3, 2 PRBs 7 B at MCS 1.
        assert_eq!(lowest_mcs_for(&thr, 5, |m| tbs(1, m)), Some(3));
        assert_eq!(lowest_mcs_for(&thr, 7, |m| tbs(2, m)), Some(1));
        assert_eq!(lowest_mcs_for(&thr, 100_000, |m| tbs(1, m)), None);
    }

    #[test]
    fn pusch_imcs_of_table_8_6_1_1() {
        // PDSCH MCS 9 and 10 carry I_TBS 9 → PUSCH I_MCS 9; PDSCH 11 (I_TBS 10) → PUSCH 10;
        // PDSCH 20 (I_TBS 18) → PUSCH 19; PDSCH 28 → 28.
        assert_eq!(ul_imcs(0), 0);
        assert_eq!(ul_imcs(10), 9);
        assert_eq!(ul_imcs(11), 10);
        assert_eq!(ul_imcs(20), 19);
        assert_eq!(ul_imcs(21), 20);
        assert_eq!(ul_imcs(28), 28);
    }
}
