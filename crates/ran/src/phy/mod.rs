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

/// Transport block size (bits) for `mcs` of `table` on `n_prb` PRBs with `layers` layers.
/// LTE uses the 36.213 tables (`alloc` ignored; N_PRB above 110 is split into 110-PRB pieces,
/// a carrier-aggregation-like approximation); NR uses the §5.1.3.2 procedure. 0 for a reserved
/// MCS or an empty allocation.
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
