//! Link adaptation: CQI tables, SINR → CQI at a 10 % BLER target, CQI → MCS, per-MCS
//! threshold SINR.
//!
//! * CQI table 1: TS 36.213 Table 7.2.3-1 = TS 38.214 Table 5.2.2.1-2 (up to 64QAM).
//! * CQI table 2: TS 38.214 Table 5.2.2.1-3 (up to 256QAM).
//! * MCS tables: LTE TS 36.213 Table 7.1.7.1-1 (spectral efficiencies of R1-081483, as ns-3
//!   LENA uses them), NR TS 38.214 Tables 5.1.3.1-1/-2.
//!
//! Threshold model (documented choice; the standards define no SINR mapping): an MCS of
//! spectral efficiency SE (bit/s/Hz per layer) decodes at 10 % BLER at
//!
//!   SINR_thr = Γ · (2^SE − 1),   Γ = 2.3 dB by default,
//!
//! a Shannon bound shifted by a gap Γ. 2.3 dB is the mean gap to Shannon of the widely quoted
//! LTE link-level AWGN 10 %-BLER CQI switching points (CQI 1 ≈ −6.9 dB … CQI 15 ≈ 19.8 dB,
//! usually attributed to the Vienna LTE link-level simulator, Mehlführer et al., EUSIPCO 2009);
//! the fit is within ±0.9 dB at every CQI (checked in the tests). Γ is a parameter. The CQI reported for a SINR is the highest whose threshold the SINR reaches, so that the
//! MCS matching that CQI runs at ≤ 10 % BLER; the MCS for a CQI is the highest MCS whose
//! spectral efficiency does not exceed the CQI's.

use super::lte_tbs::MCS_QM_DL;
use super::nr::{McsEntry, MCS_TABLE_1, MCS_TABLE_2};

/// Default Shannon gap Γ (dB) of the threshold model.
pub const DEFAULT_GAP_DB: f64 = 2.3;

/// A CQI table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CqiTable {
    /// TS 36.213 Table 7.2.3-1 / TS 38.214 Table 5.2.2.1-2 (64QAM).
    Table1,
    /// TS 38.214 Table 5.2.2.1-3 (256QAM).
    Table2,
}

/// An MCS table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum McsTable {
    /// LTE PDSCH, TS 36.213 Table 7.1.7.1-1, I_MCS 0..=28.
    Lte,
    /// NR TS 38.214 Table 5.1.3.1-1, I_MCS 0..=28.
    Nr1,
    /// NR TS 38.214 Table 5.1.3.1-2, I_MCS 0..=27.
    Nr2,
}

/// (Q_m, R × 1024) of CQI 1..=15 of TS 36.213 Table 7.2.3-1 / TS 38.214 Table 5.2.2.1-2.
#[rustfmt::skip]
pub const CQI_TABLE_1: [(u8, f64); 15] = [
    (2, 78.0), (2, 120.0), (2, 193.0), (2, 308.0), (2, 449.0), (2, 602.0), (4, 378.0), (4, 490.0),
    (4, 616.0), (6, 466.0), (6, 567.0), (6, 666.0), (6, 772.0), (6, 873.0), (6, 948.0),
];

/// (Q_m, R × 1024) of CQI 1..=15 of TS 38.214 Table 5.2.2.1-3.
#[rustfmt::skip]
pub const CQI_TABLE_2: [(u8, f64); 15] = [
    (2, 78.0), (2, 193.0), (2, 449.0), (4, 378.0), (4, 490.0), (4, 616.0), (6, 466.0), (6, 567.0),
    (6, 666.0), (6, 772.0), (6, 873.0), (8, 711.0), (8, 797.0), (8, 885.0), (8, 948.0),
];

/// LTE PDSCH spectral efficiency per I_MCS 0..=28 (bit/s/Hz), from 3GPP R1-081483 "TBS_support"
/// (the values ns-3 LENA's `SpectralEfficiencyForMcs` carries).
#[rustfmt::skip]
pub const LTE_MCS_SE: [f64; 29] = [
    0.15, 0.19, 0.23, 0.31, 0.38, 0.49, 0.6, 0.74, 0.88, 1.03, 1.18, 1.33, 1.48, 1.7, 1.91, 2.16,
    2.41, 2.57, 2.73, 3.03, 3.32, 3.61, 3.9, 4.21, 4.52, 4.82, 5.12, 5.33, 5.55,
];

impl CqiTable {
    /// Spectral efficiency of `cqi` (1..=15); 0 for CQI 0 ("out of range").
    pub fn spectral_efficiency(self, cqi: u8) -> f64 {
        if cqi == 0 || cqi > 15 {
            return 0.0;
        }
        let (qm, r) = match self {
            CqiTable::Table1 => CQI_TABLE_1[cqi as usize - 1],
            CqiTable::Table2 => CQI_TABLE_2[cqi as usize - 1],
        };
        qm as f64 * r / 1024.0
    }
}

impl McsTable {
    /// Highest valid I_MCS of the table.
    pub fn max_mcs(self) -> u8 {
        match self {
            McsTable::Lte | McsTable::Nr1 => 28,
            McsTable::Nr2 => 27,
        }
    }
    /// The CQI table that goes with this MCS table.
    pub fn cqi_table(self) -> CqiTable {
        match self {
            McsTable::Nr2 => CqiTable::Table2,
            _ => CqiTable::Table1,
        }
    }
    /// Spectral efficiency of `mcs` (bit/s/Hz per layer); `None` if reserved/out of range.
    pub fn spectral_efficiency(self, mcs: u8) -> Option<f64> {
        match self {
            McsTable::Lte => LTE_MCS_SE.get(mcs as usize).copied(),
            McsTable::Nr1 => MCS_TABLE_1
                .get(mcs as usize)
                .map(McsEntry::spectral_efficiency),
            McsTable::Nr2 => MCS_TABLE_2
                .get(mcs as usize)
                .map(McsEntry::spectral_efficiency),
        }
    }
    /// Modulation order Q_m of `mcs`.
    pub fn qm(self, mcs: u8) -> Option<u8> {
        match self {
            McsTable::Lte => MCS_QM_DL.get(mcs as usize).copied(),
            McsTable::Nr1 => MCS_TABLE_1.get(mcs as usize).map(|e| e.qm),
            McsTable::Nr2 => MCS_TABLE_2.get(mcs as usize).map(|e| e.qm),
        }
    }
    /// NR table entry (Q_m, R) for the TBS procedure; `None` for LTE or reserved indices.
    pub fn nr_entry(self, mcs: u8) -> Option<McsEntry> {
        match self {
            McsTable::Lte => None,
            McsTable::Nr1 => MCS_TABLE_1.get(mcs as usize).copied(),
            McsTable::Nr2 => MCS_TABLE_2.get(mcs as usize).copied(),
        }
    }
    /// Highest MCS whose spectral efficiency does not exceed CQI `cqi`'s (rounded to two
    /// decimals as the LTE table is); CQI 0 maps to MCS 0 (the scheduler should not schedule),
    /// as does NR CQI 1, whose 0.15 bit/s/Hz is below NR MCS 0's 0.23.
    pub fn mcs_from_cqi(self, cqi: u8) -> u8 {
        let se = self.cqi_table().spectral_efficiency(cqi);
        let mut best = 0;
        for m in 0..=self.max_mcs() {
            if self.spectral_efficiency(m).unwrap() <= se + 0.005 {
                best = m;
            }
        }
        best
    }
}

/// SINR (dB) at which spectral efficiency `se` decodes at 10 % BLER: Γ·(2^SE − 1).
pub fn threshold_sinr_db(se: f64, gap_db: f64) -> f64 {
    gap_db + 10.0 * (2f64.powf(se) - 1.0).log10()
}

/// CQI (0..=15) for a wideband per-layer SINR (dB) at the 10 % BLER target.
pub fn cqi_from_sinr(sinr_db: f64, table: CqiTable, gap_db: f64) -> u8 {
    let mut cqi = 0;
    for c in 1..=15u8 {
        if sinr_db >= threshold_sinr_db(table.spectral_efficiency(c), gap_db) {
            cqi = c;
        } else {
            break;
        }
    }
    cqi
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cqi_tables_spectral_efficiency() {
        // TS 36.213 Table 7.2.3-1 efficiency column.
        let t1 = CqiTable::Table1;
        assert!((t1.spectral_efficiency(1) - 0.1523).abs() < 1e-4);
        assert!((t1.spectral_efficiency(7) - 1.4766).abs() < 1e-4);
        assert!((t1.spectral_efficiency(15) - 5.5547).abs() < 1e-4);
        // TS 38.214 Table 5.2.2.1-3.
        assert!((CqiTable::Table2.spectral_efficiency(12) - 5.5547).abs() < 1e-4);
        assert!((CqiTable::Table2.spectral_efficiency(15) - 7.4063).abs() < 1e-4);
    }

    #[test]
    fn threshold_fit_to_published_cqi_points() {
        // The 10 % BLER AWGN switching points quoted in the module docs.
        let pts = [
            -6.934, -5.147, -3.18, -1.254, 0.761, 2.70, 4.697, 6.528, 8.576, 10.37, 12.3, 14.18,
            15.89, 17.82, 19.83,
        ];
        for (i, &p) in pts.iter().enumerate() {
            let thr = threshold_sinr_db(
                CqiTable::Table1.spectral_efficiency(i as u8 + 1),
                DEFAULT_GAP_DB,
            );
            assert!((thr - p).abs() < 0.95, "CQI {}: {thr} vs {p}", i + 1);
        }
    }

    #[test]
    fn cqi_and_mcs_selection() {
        let g = DEFAULT_GAP_DB;
        assert_eq!(cqi_from_sinr(-20.0, CqiTable::Table1, g), 0);
        assert_eq!(cqi_from_sinr(40.0, CqiTable::Table1, g), 15);
        assert_eq!(cqi_from_sinr(40.0, CqiTable::Table2, g), 15);
        // CQI is monotone in SINR.
        let mut last = 0;
        for i in -200..400 {
            let c = cqi_from_sinr(i as f64 * 0.1, CqiTable::Table1, g);
            assert!(c >= last);
            last = c;
        }
        // CQI → MCS: the MCS with the same efficiency (tables are aligned by design).
        assert_eq!(McsTable::Nr1.mcs_from_cqi(15), 28);
        assert_eq!(McsTable::Nr1.mcs_from_cqi(1), 0);
        assert_eq!(McsTable::Nr1.mcs_from_cqi(7), 11); // 16QAM 378 ↔ table-1 MCS 11
        assert_eq!(McsTable::Nr2.mcs_from_cqi(15), 27);
        assert_eq!(McsTable::Nr2.mcs_from_cqi(12), 21); // 256QAM 711
        assert_eq!(McsTable::Lte.mcs_from_cqi(15), 28);
        assert_eq!(McsTable::Lte.mcs_from_cqi(1), 0);
        for t in [McsTable::Lte, McsTable::Nr1, McsTable::Nr2] {
            for c in 1..=15 {
                let m = t.mcs_from_cqi(c);
                // NR CQI 1 (0.15 bit/s/Hz) is below every NR MCS: MCS 0 is the fallback.
                assert!(
                    m == 0
                        || t.spectral_efficiency(m).unwrap()
                            <= t.cqi_table().spectral_efficiency(c) + 0.005
                );
            }
        }
    }
}
