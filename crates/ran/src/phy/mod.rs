//! PHY abstraction (design.md §4): CQI from SINR, MCS from CQI, transport block sizes,
//! BLER curves and HARQ chase combining.
//!
//! * [`lte_tbs`]: TS 36.213 Tables 7.1.7.1-1 and 7.1.7.2.1-1 (the whole TBS table).
//! * [`nr`]: TS 38.214 Tables 5.1.3.1-1/-2 and the §5.1.3.2 TBS procedure.
//! * [`cqi`]: TS 36.213 Table 7.2.3-1, TS 38.214 Tables 5.2.2.1-2/-3, SINR thresholds.
//! * [`bler`]: per-MCS logistic BLER curves, chase combining, decode draws, outer-loop
//!   link adaptation.
//!
//! MIMO: with v layers (1–4) the TBS scales as the standards say (NR: v in N_info; LTE:
//! §7.1.7.2.2 for two layers) and, in [`crate::radio`], the transmit power is split equally
//! across layers so each layer sees SINR − 10·log10(v).

pub mod bler;
pub mod cqi;
pub mod lte_tbs;
pub mod nr;

use std::cell::Cell;

pub use bler::{BlerModel, ChaseCombiner, HarqSoftBuffers, OuterLoop};
pub use cqi::{cqi_from_sinr, threshold_sinr_db, CqiTable, McsTable};
pub use lte_tbs::{lte_tbs_bits, lte_tbs_bits_for_mcs};
pub use nr::{nr_tbs_bits, McsEntry, NrTbsInput};

/// Resource-element parameters of the NR TBS procedure for a data slot.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct NrAllocation {
    /// PDSCH/PUSCH symbols per slot (default 12: 14 minus a 2-symbol control region).
    pub n_symb: u32,
    /// DM-RS REs per PRB (default 12: one type-1 DM-RS symbol).
    pub n_dmrs_prb: u32,
    /// xOverhead REs per PRB (default 0).
    pub n_oh_prb: u32,
    /// Cap on REs per PRB (TS 38.214 §5.1.3.2 step 1: 156 for a 14-symbol slot).
    pub re_cap_prb: u32,
}

impl NrAllocation {
    /// The ns-3 mmWave module's subframe ([`crate::frame::Carrier::ns3_mmwave_1ghz`]): 24
    /// symbols of which one carries downlink and one uplink control, so 22 data symbols, and no
    /// DM-RS REs of its own (its error model counts whole data symbols).
    pub fn ns3_mmwave() -> Self {
        NrAllocation {
            n_symb: 22,
            n_dmrs_prb: 0,
            n_oh_prb: 0,
            re_cap_prb: 12 * 22,
        }
    }
}

impl Default for NrAllocation {
    fn default() -> Self {
        NrAllocation {
            n_symb: 12,
            n_dmrs_prb: 12,
            n_oh_prb: 0,
            re_cap_prb: nr::RE_CAP_PRB,
        }
    }
}

/// Exact memo of [`tb_size_bits`] for one carrier's MCS table and [`NrAllocation`], so the
/// §5.1.3.2 procedure (floating point, a scan of Table 5.1.3.2-1) runs once per distinct
/// (MCS, layers, PRBs) instead of once per scheduler query: a scheduler asks for the same few
/// sizes every slot. Entries are filled on first use; a pure function memoised, so the answer
/// never depends on the order of queries. Queries outside the memo's range (MCS above 31, more
/// than `max_prb` PRBs) are computed directly. LTE's sizes are memoised too: Table
/// 7.1.7.2.1-1 is already a lookup, but reaching it (the 110-PRB pieces, the MCS to I_TBS
/// map, the layer rule, bounds checks, an out-of-line call) costs ~40 instructions against
/// the memo's few, and the uplink's power-headroom search asks ~27 sizes per grant.
#[derive(Clone, Debug)]
pub struct TbsMemo {
    table: McsTable,
    alloc: NrAllocation,
    max_prb: u32,
    /// `[layers 1..=4][I_MCS 0..=31][n_prb 0..=max_prb]`, `UNKNOWN` until computed.
    bits: Vec<Cell<u32>>,
}

impl TbsMemo {
    /// I_MCS values memoised (the 5-bit DCI field; reserved ones memoise their 0).
    const N_MCS: usize = 32;
    /// Layers memoised: [`tb_size_bits`] clamps `layers` to 1..=4 for both LTE and NR.
    const N_LAYERS: usize = 4;
    /// Not yet computed. No realistic TBS equals it (4 layers × 1024 PRBs of 256QAM is below
    /// 2^24 bits); one that did would merely be recomputed on every query.
    const UNKNOWN: u32 = u32::MAX;
    /// Largest PRB count memoised, whatever the carrier (keeps the memo ≤ 2 MB).
    pub const MAX_PRB: u32 = 1024;

    /// A memo for `table` and `alloc` covering allocations of up to `max_prb` PRBs (the
    /// carrier's; capped at [`Self::MAX_PRB`]).
    pub fn new(table: McsTable, alloc: NrAllocation, max_prb: u32) -> Self {
        let max_prb = max_prb.min(Self::MAX_PRB);
        let n = Self::N_LAYERS * Self::N_MCS * (max_prb as usize + 1);
        TbsMemo {
            table,
            alloc,
            max_prb,
            bits: vec![Cell::new(Self::UNKNOWN); n],
        }
    }

    /// [`tb_size_bits`]`(table, mcs, n_prb, layers, alloc)`.
    #[inline]
    pub fn bits(&self, mcs: u8, n_prb: u32, layers: u8) -> u32 {
        if mcs as usize >= Self::N_MCS || n_prb > self.max_prb {
            return tb_size_bits(self.table, mcs, n_prb, layers, &self.alloc);
        }
        let v = layers.clamp(1, 4) as usize - 1;
        let k = (v * Self::N_MCS + mcs as usize) * (self.max_prb as usize + 1) + n_prb as usize;
        let slot = &self.bits[k];
        let b = slot.get();
        if b != Self::UNKNOWN {
            return b;
        }
        let b = tb_size_bits(self.table, mcs, n_prb, layers, &self.alloc);
        slot.set(b);
        b
    }
}

/// Transport block size (bits) for `mcs` of `table` on `n_prb` PRBs with `layers` layers.
/// LTE uses the 36.213 tables (`alloc` ignored; N_PRB above 110 is split into 110-PRB pieces,
/// a carrier-aggregation-like approximation); NR uses the §5.1.3.2 procedure. 0 for a reserved
/// MCS or an empty allocation.
///
/// Never inlined: callers on the hot path go through [`TbsMemo`], whose hit path must stay
/// small enough to inline into the schedulers' closures.
#[inline(never)]
pub fn tb_size_bits(table: McsTable, mcs: u8, n_prb: u32, layers: u8, alloc: &NrAllocation) -> u32 {
    if n_prb == 0 {
        return 0;
    }
    match table {
        McsTable::Lte => {
            let mut left = n_prb;
            let mut bits = 0;
            while left > 0 {
                let chunk = left.min(110);
                bits += lte_tbs_bits_for_mcs(mcs, chunk as u16, layers).unwrap_or(0);
                left -= chunk;
            }
            bits
        }
        McsTable::Nr1 | McsTable::Nr2 => match table.nr_entry(mcs) {
            None => 0,
            Some(e) => nr_tbs_bits(&NrTbsInput {
                n_prb,
                n_symb: alloc.n_symb,
                n_dmrs_prb: alloc.n_dmrs_prb,
                n_oh_prb: alloc.n_oh_prb,
                re_cap_prb: alloc.re_cap_prb,
                mcs: e,
                layers: layers.clamp(1, 4) as u32,
            }),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The memo returns exactly what [`tb_size_bits`] does over every input a scheduler can ask
    /// (every table, I_MCS 0..=31 and beyond, layers 0..=5, every PRB count up to the carrier's
    /// and past it), queried in a scrambled order and then again once the memo is full.
    #[test]
    fn memo_equals_direct_computation_everywhere() {
        let allocs = [
            NrAllocation::default(),
            NrAllocation::ns3_mmwave(),
            NrAllocation {
                n_symb: 13,
                n_dmrs_prb: 24,
                n_oh_prb: 6,
                re_cap_prb: nr::RE_CAP_PRB,
            },
        ];
        let mut rng = 0x9e37_79b9_7f4a_7c15u64;
        let mut checked = 0u64;
        for table in [McsTable::Lte, McsTable::Nr1, McsTable::Nr2] {
            for (alloc, max_prb) in allocs.iter().zip([273u32, 288, 110]) {
                let memo = TbsMemo::new(table, *alloc, max_prb);
                let mut queries = Vec::new();
                for layers in 0..=5u8 {
                    for mcs in 0..=34u8 {
                        for n_prb in 0..=max_prb + 3 {
                            queries.push((mcs, n_prb, layers));
                        }
                    }
                }
                // Fisher-Yates with an LCG: fill the memo in no particular order.
                for i in (1..queries.len()).rev() {
                    rng = rng
                        .wrapping_mul(6364136223846793005)
                        .wrapping_add(1442695040888963407);
                    queries.swap(i, (rng >> 33) as usize % (i + 1));
                }
                for _pass in 0..2 {
                    for &(mcs, n_prb, layers) in &queries {
                        let direct = tb_size_bits(table, mcs, n_prb, layers, alloc);
                        assert_eq!(
                            memo.bits(mcs, n_prb, layers),
                            direct,
                            "{table:?} {alloc:?} mcs {mcs} n_prb {n_prb} layers {layers}"
                        );
                        checked += 1;
                    }
                }
            }
        }
        assert!(checked > 500_000, "{checked}");
        // Values the direct computation gives (and the worked cases of nr.rs check): the memo
        // is not comparing zeros with zeros.
        let m = TbsMemo::new(McsTable::Lte, NrAllocation::default(), 100);
        assert_eq!(m.bits(28, 100, 1), 75376);
        let m = TbsMemo::new(McsTable::Nr2, NrAllocation::default(), 273);
        assert_eq!(
            m.bits(27, 273, 2),
            tb_size_bits(McsTable::Nr2, 27, 273, 2, &NrAllocation::default())
        );
        assert!(m.bits(27, 273, 2) > 100_000);
    }

    /// A carrier wider than [`TbsMemo::MAX_PRB`] is memoised up to the cap and computed
    /// directly above it.
    #[test]
    fn memo_caps_its_size() {
        let a = NrAllocation::default();
        let m = TbsMemo::new(McsTable::Nr1, a, 5000);
        assert_eq!(m.bits.len(), 4 * 32 * (TbsMemo::MAX_PRB as usize + 1));
        for n in [1023, 1024, 1025, 4999] {
            assert_eq!(m.bits(20, n, 1), tb_size_bits(McsTable::Nr1, 20, n, 1, &a));
        }
    }
}
