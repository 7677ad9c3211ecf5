//! NR modulation/coding and transport block size, TS 38.214 §5.1.3.
//!
//! * [`MCS_TABLE_1`]: TS 38.214 Table 5.1.3.1-1 (MCS index table 1 for PDSCH, up to 64QAM).
//! * [`MCS_TABLE_2`]: TS 38.214 Table 5.1.3.1-2 (MCS index table 2, up to 256QAM).
//! * [`TBS_SMALL`]: TS 38.214 Table 5.1.3.2-1 (TBS for N_info ≤ 3824).
//! * [`nr_tbs_bits`]: the TBS determination procedure of §5.1.3.2, steps 1–4.

/// One row of an MCS table: modulation order Q_m and target code rate R × 1024.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct McsEntry {
    pub qm: u8,
    pub r_x1024: f64,
}

impl McsEntry {
    /// Spectral efficiency Q_m · R (bit/s/Hz per layer).
    pub fn spectral_efficiency(&self) -> f64 {
        self.qm as f64 * self.r_x1024 / 1024.0
    }
}

const fn e(qm: u8, r_x1024: f64) -> McsEntry {
    McsEntry { qm, r_x1024 }
}

/// TS 38.214 Table 5.1.3.1-1, I_MCS 0..=28 (29..31 reserved).
#[rustfmt::skip]
pub const MCS_TABLE_1: [McsEntry; 29] = [
    e(2, 120.0), e(2, 157.0), e(2, 193.0), e(2, 251.0), e(2, 308.0), e(2, 379.0), e(2, 449.0),
    e(2, 526.0), e(2, 602.0), e(2, 679.0), e(4, 340.0), e(4, 378.0), e(4, 434.0), e(4, 490.0),
    e(4, 553.0), e(4, 616.0), e(4, 658.0), e(6, 438.0), e(6, 466.0), e(6, 517.0), e(6, 567.0),
    e(6, 616.0), e(6, 666.0), e(6, 719.0), e(6, 772.0), e(6, 822.0), e(6, 873.0), e(6, 910.0),
    e(6, 948.0),
];

/// TS 38.214 Table 5.1.3.1-2, I_MCS 0..=27 (28..31 reserved).
#[rustfmt::skip]
pub const MCS_TABLE_2: [McsEntry; 28] = [
    e(2, 120.0), e(2, 193.0), e(2, 308.0), e(2, 449.0), e(2, 602.0), e(4, 378.0), e(4, 434.0),
    e(4, 490.0), e(4, 553.0), e(4, 616.0), e(4, 658.0), e(6, 466.0), e(6, 517.0), e(6, 567.0),
    e(6, 616.0), e(6, 666.0), e(6, 719.0), e(6, 772.0), e(6, 822.0), e(6, 873.0), e(8, 682.5),
    e(8, 711.0), e(8, 754.0), e(8, 797.0), e(8, 841.0), e(8, 885.0), e(8, 916.5), e(8, 948.0),
];

/// TS 38.214 Table 5.1.3.2-1: TBS for N_info ≤ 3824 (bits).
#[rustfmt::skip]
pub const TBS_SMALL: [u32; 93] = [
    24, 32, 40, 48, 56, 64, 72, 80, 88, 96, 104, 112, 120, 128, 136, 144, 152, 160, 168, 176, 184,
    192, 208, 224, 240, 256, 272, 288, 304, 320, 336, 352, 368, 384, 408, 432, 456, 480, 504, 528,
    552, 576, 608, 640, 672, 704, 736, 768, 808, 848, 888, 928, 984, 1032, 1064, 1128, 1160, 1192,
    1224, 1256, 1288, 1320, 1352, 1416, 1480, 1544, 1608, 1672, 1736, 1800, 1864, 1928, 2024, 2088,
    2152, 2216, 2280, 2408, 2472, 2536, 2600, 2664, 2728, 2792, 2856, 2976, 3104, 3240, 3368, 3496,
    3624, 3752, 3824,
];

/// TS 38.214 §5.1.3.2 step 1: the cap on resource elements per PRB in a 14-symbol slot.
pub const RE_CAP_PRB: u32 = 156;

/// Inputs of the §5.1.3.2 procedure.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct NrTbsInput {
    /// Allocated PRBs n_PRB.
    pub n_prb: u32,
    /// Symbols of the PDSCH/PUSCH allocation N_symb^sh (≤ 14).
    pub n_symb: u32,
    /// DM-RS resource elements per PRB in the allocation, N_DMRS^PRB (e.g. 12 for one
    /// type-1 DM-RS symbol).
    pub n_dmrs_prb: u32,
    /// Overhead N_oh^PRB from xOverhead (0, 6, 12 or 18).
    pub n_oh_prb: u32,
    /// Cap on REs per PRB (156 in §5.1.3.2 step 1, for a 14-symbol slot; a non-standard frame
    /// with longer slots, such as ns-3 mmWave's 24-symbol subframe, raises it).
    pub re_cap_prb: u32,
    /// Modulation order and code rate.
    pub mcs: McsEntry,
    /// Number of layers v (1–4 per codeword).
    pub layers: u32,
}

/// Transport block size (bits) by TS 38.214 §5.1.3.2. Returns 0 for an empty allocation.
pub fn nr_tbs_bits(i: &NrTbsInput) -> u32 {
    // Step 1: REs per PRB, N'_RE = 12·N_symb − N_DMRS − N_oh, then N_RE = min(156, N'_RE)·n_PRB.
    let n_re_prime = (12 * i.n_symb).saturating_sub(i.n_dmrs_prb + i.n_oh_prb);
    let n_re = n_re_prime.min(i.re_cap_prb) as u64 * i.n_prb as u64;
    // Step 2: N_info = N_RE · R · Q_m · v (exact in binary floating point: R = x/1024).
    let n_info = n_re as f64 * (i.mcs.r_x1024 / 1024.0) * i.mcs.qm as f64 * i.layers as f64;
    if n_info <= 0.0 {
        return 0;
    }
    if n_info <= 3824.0 {
        // Step 3: n = max(3, ⌊log2 N_info⌋ − 6), N'_info = max(24, 2^n·⌊N_info/2^n⌋),
        // TBS = the smallest Table 5.1.3.2-1 entry not less than N'_info.
        let lg = if n_info >= 1.0 {
            (n_info.floor() as u64).ilog2() as i32
        } else {
            0
        };
        let n = (lg - 6).max(3);
        let step = (1u64 << n) as f64;
        let n_info_q = (step * (n_info / step).floor()).max(24.0);
        TBS_SMALL
            .iter()
            .copied()
            .find(|&t| t as f64 >= n_info_q)
            .unwrap_or(3824)
    } else {
        // Step 4: n = ⌊log2(N_info − 24)⌋ − 5, N'_info = max(3840, 2^n·round((N_info − 24)/2^n)).
        let n = ((n_info - 24.0).floor() as u64).ilog2() as i32 - 5;
        let step = (1u64 << n) as f64;
        let n_info_q = (step * ((n_info - 24.0) / step + 0.5).floor()).max(3840.0);
        let r = i.mcs.r_x1024 / 1024.0;
        let x = n_info_q + 24.0;
        let tbs = if r <= 0.25 {
            let c = (x / 3816.0).ceil();
            8.0 * c * (x / (8.0 * c)).ceil() - 24.0
        } else if n_info_q > 8424.0 {
            let c = (x / 8424.0).ceil();
            8.0 * c * (x / (8.0 * c)).ceil() - 24.0
        } else {
            8.0 * (x / 8.0).ceil() - 24.0
        };
        tbs as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tbs(n_symb: u32, n_dmrs: u32, n_oh: u32, qm: u8, r: f64, layers: u32, n_prb: u32) -> u32 {
        nr_tbs_bits(&NrTbsInput {
            n_prb,
            n_symb,
            n_dmrs_prb: n_dmrs,
            n_oh_prb: n_oh,
            re_cap_prb: RE_CAP_PRB,
            mcs: e(qm, r),
            layers,
        })
    }

    /// Small sizes (N_info ≤ 3824, Table 5.1.3.2-1 branch). Expected TBS from srsRAN_Project's
    /// MATLAB-generated `tbs_calculator_test_data.h` (5G Toolbox `nrTBS`); the arithmetic of the
    /// first case by hand: N'_RE = 12·12 − 6 = 138, N_RE = 828, N_info = 828·0.1·2 = 165.6,
    /// n = max(3, 7 − 6) = 3, N'_info = 8·⌊20.7⌋ = 160 → TBS 160.
    #[test]
    fn small_worked_cases() {
        assert_eq!(tbs(12, 6, 0, 2, 102.4, 1, 6), 160);
        assert_eq!(tbs(12, 6, 12, 2, 102.4, 1, 6), 144);
        assert_eq!(tbs(12, 6, 0, 2, 921.6, 1, 6), 1544);
        assert_eq!(tbs(12, 36, 12, 2, 921.6, 1, 6), 1032);
        assert_eq!(tbs(12, 6, 0, 2, 921.6, 1, 11), 2728);
        assert_eq!(tbs(12, 6, 0, 4, 921.6, 1, 6), 2976);
        assert_eq!(tbs(12, 36, 12, 4, 921.6, 1, 11), 3824);
        assert_eq!(tbs(12, 36, 0, 6, 921.6, 1, 6), 3496);
        assert_eq!(tbs(12, 6, 12, 8, 102.4, 4, 6), 2408);
        // Tiny allocation: N_info = (12·2 − 12)·1·(120/1024)·2 = 2.8125 → N'_info = max(24, 0) → 24.
        assert_eq!(tbs(2, 12, 0, 2, 120.0, 1, 1), 24);
    }

    /// Large sizes (step 4). Same source; by hand for the first: N'_RE = 138, N_RE = 1518,
    /// N_info = 1518·0.9·6·4 = 32788.8, n = ⌊log2 32764.8⌋ − 5 = 9, N'_info = 512·round(63.99)
    /// = 32768, R > 1/4 and N'_info > 8424 → C = ⌈32792/8424⌉ = 4,
    /// TBS = 8·4·⌈32792/32⌉ − 24 = 32776.
    #[test]
    fn large_worked_cases() {
        assert_eq!(tbs(12, 6, 0, 6, 921.6, 4, 11), 32776);
        assert_eq!(tbs(12, 6, 0, 2, 921.6, 4, 11), 11016);
        assert_eq!(tbs(12, 6, 0, 4, 921.6, 1, 11), 5504);
        assert_eq!(tbs(12, 36, 12, 4, 921.6, 4, 11), 15112);
        assert_eq!(tbs(12, 6, 12, 6, 921.6, 4, 11), 29704);
        assert_eq!(tbs(12, 36, 0, 8, 921.6, 4, 11), 33816);
        assert_eq!(tbs(12, 6, 12, 8, 921.6, 4, 6), 21504);
        assert_eq!(tbs(12, 6, 0, 8, 102.4, 4, 11), 4872);
        // R ≤ 1/4 branch, by hand (Python): MCS 0 of table 1 (Q_m 2, R 120/1024) over 273 PRBs,
        // 12 symbols, one DM-RS symbol (12 REs): N_RE = 132·273 = 36036,
        // N_info = 36036·0.1171875·2 = 8445.9375, n = ⌊log2 8421.9375⌋ − 5 = 8,
        // N'_info = 256·round(32.898) = 8448, C = ⌈8472/3816⌉ = 3, TBS = 24·⌈8472/24⌉ − 24 = 8448.
        assert_eq!(tbs(12, 12, 0, 2, 120.0, 1, 273), 8448);
        // 8424 < N'_info boundary, R > 1/4, one code block: N_RE = 132·20 = 2640,
        // N_info = 2640·(490/1024)·4 = 5053.125, n = 12 − 5 = 7, N'_info = 128·round(39.29) =
        // 4992, TBS = 8·⌈5016/8⌉ − 24 = 4992.
        assert_eq!(tbs(12, 12, 0, 4, 490.0, 1, 20), 4992);
        // 28 GHz, 264 PRBs, 256QAM MCS 27 (table 2), 13 symbols, 1 DM-RS symbol, 2 layers:
        // N'_RE = 144, N_RE = 38016, N_info = 38016·(948/1024)·8·2 = 563112.0,
        // n = ⌊log2 563088⌋ − 5 = 14, N'_info = 16384·round(34.368) = 557056,
        // C = ⌈557080/8424⌉ = 67, TBS = 536·⌈557080/536⌉ − 24 = 536·1040 − 24 = 557416.
        assert_eq!(
            nr_tbs_bits(&NrTbsInput {
                n_prb: 264,
                n_symb: 13,
                n_dmrs_prb: 12,
                n_oh_prb: 0,
                re_cap_prb: RE_CAP_PRB,
                mcs: MCS_TABLE_2[27],
                layers: 2
            }),
            557416
        );
    }

    #[test]
    fn tables() {
        assert_eq!(MCS_TABLE_1[28], e(6, 948.0));
        assert_eq!(MCS_TABLE_2[20], e(8, 682.5));
        assert!((MCS_TABLE_1[0].spectral_efficiency() - 0.2344).abs() < 1e-4);
        assert!((MCS_TABLE_2[27].spectral_efficiency() - 7.4063).abs() < 1e-4);
        assert_eq!(TBS_SMALL.len(), 93);
        assert!(TBS_SMALL.windows(2).all(|w| w[0] < w[1]));
    }
}
