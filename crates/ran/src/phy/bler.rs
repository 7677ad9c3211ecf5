//! Error model: BLER(SINR, MCS) curves and HARQ chase combining (TS 36.321 §5.3.2 / TS 38.321
//! §5.3.2 HARQ; the combining model is the PHY abstraction of e.g. ns-3 LENA/5G-LENA).
//!
//! Curve (documented fit, AWGN): for an MCS whose 10 %-BLER threshold is SINR_thr (see
//! [`super::cqi`]),
//!
//!   BLER(s) = 1 / (1 + exp(k·(s − SINR_thr) + ln 9)),  k = 2·ln 9 / W,
//!
//! a logistic in dB with BLER(SINR_thr) = 10 % exactly and a 90 %→10 % waterfall width of
//! W dB (default 1.5 dB, typical of turbo/LDPC transport blocks of a few thousand bits).
//!
//! Chase combining: retransmissions repeat the same coded bits, so the receiver's effective
//! SINR after n transmissions is the sum of their linear SINRs; each attempt is decoded at that
//! accumulated SINR with one uniform draw from the owning entity's [`Rng`].

use super::cqi::{threshold_sinr_db, McsTable, DEFAULT_GAP_DB};
use rantcp_core::Rng;

/// Default 90 %→10 % width of the BLER waterfall (dB).
pub const DEFAULT_WIDTH_DB: f64 = 1.5;

/// BLER curves for one MCS table.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BlerModel {
    pub table: McsTable,
    /// Shannon gap Γ (dB) of the threshold model.
    pub gap_db: f64,
    /// Waterfall width W (dB) from 90 % to 10 % BLER.
    pub width_db: f64,
}

impl BlerModel {
    pub fn new(table: McsTable) -> Self {
        BlerModel {
            table,
            gap_db: DEFAULT_GAP_DB,
            width_db: DEFAULT_WIDTH_DB,
        }
    }
    /// The 10 %-BLER SINR of `mcs` (dB); `None` for a reserved MCS.
    pub fn threshold_db(&self, mcs: u8) -> Option<f64> {
        Some(threshold_sinr_db(
            self.table.spectral_efficiency(mcs)?,
            self.gap_db,
        ))
    }
    /// Block error probability of one transport block at per-layer SINR `sinr_db` (dB).
    /// A reserved MCS always fails.
    pub fn bler(&self, sinr_db: f64, mcs: u8) -> f64 {
        let Some(thr) = self.threshold_db(mcs) else {
            return 1.0;
        };
        let k = 2.0 * 9f64.ln() / self.width_db;
        1.0 / (1.0 + (k * (sinr_db - thr) + 9f64.ln()).exp())
    }
}

/// The soft buffer of one HARQ process with chase combining.
#[derive(Clone, Debug)]
pub struct ChaseCombiner {
    pub model: BlerModel,
    acc_lin: f64,
    attempts: u32,
}

impl ChaseCombiner {
    pub fn new(model: BlerModel) -> Self {
        ChaseCombiner {
            model,
            acc_lin: 0.0,
            attempts: 0,
        }
    }
    /// Decode a transmission of a transport block at `sinr_db` with `mcs`. `harq_attempt` is
    /// 0 for a new transmission (which clears the buffer) and n for the n-th retransmission.
    /// Returns true if the block decodes (the buffer is then cleared).
    pub fn decode(&mut self, sinr_db: f64, mcs: u8, harq_attempt: u32, rng: &mut Rng) -> bool {
        if harq_attempt == 0 {
            self.acc_lin = 0.0;
            self.attempts = 0;
        }
        self.acc_lin += 10f64.powf(sinr_db / 10.0);
        self.attempts += 1;
        let p = self.model.bler(self.effective_sinr_db(), mcs);
        let ok = rng.uniform() >= p;
        if ok {
            self.acc_lin = 0.0;
            self.attempts = 0;
        }
        ok
    }
    /// Accumulated SINR of the buffered transmissions (dB; −inf when empty).
    pub fn effective_sinr_db(&self) -> f64 {
        10.0 * self.acc_lin.log10()
    }
    /// Transmissions combined so far.
    pub fn attempts(&self) -> u32 {
        self.attempts
    }
}

/// The HARQ soft buffers of one UE: one [`ChaseCombiner`] per HARQ process id.
#[derive(Clone, Debug)]
pub struct HarqSoftBuffers {
    procs: Vec<ChaseCombiner>,
}

impl HarqSoftBuffers {
    /// `n_processes` buffers (8 in LTE FDD, up to 16 in NR; 20 in ns-3 mmWave / seed 004).
    pub fn new(n_processes: usize, model: BlerModel) -> Self {
        HarqSoftBuffers {
            procs: vec![ChaseCombiner::new(model); n_processes.max(1)],
        }
    }
    /// Decode on process `harq_id` (see [`ChaseCombiner::decode`]).
    pub fn decode(
        &mut self,
        harq_id: u8,
        sinr_db: f64,
        mcs: u8,
        harq_attempt: u32,
        rng: &mut Rng,
    ) -> bool {
        let n = self.procs.len();
        self.procs[harq_id as usize % n].decode(sinr_db, mcs, harq_attempt, rng)
    }
    pub fn process(&self, harq_id: u8) -> &ChaseCombiner {
        &self.procs[harq_id as usize % self.procs.len()]
    }
    pub fn len(&self) -> usize {
        self.procs.len()
    }
    pub fn is_empty(&self) -> bool {
        self.procs.is_empty()
    }
}

/// Outer-loop link adaptation (OLLA): an SINR offset that steers the long-run BLER of first
/// transmissions to a target whatever the CQI's bias (stale reports, fading). On every HARQ
/// ACK the offset rises by Δ·BLER_t/(1 − BLER_t), on every NACK it falls by Δ, so at
/// equilibrium NACKs make up BLER_t of the outcomes (the usual jump algorithm, e.g. Pedersen
/// et al., VTC 2005). The scheduler picks the MCS for `reported SINR + offset`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct OuterLoop {
    /// Current offset (dB), clamped to ±`limit_db`.
    pub offset_db: f64,
    /// Step down on a NACK (dB).
    pub step_db: f64,
    /// Target first-transmission BLER.
    pub target_bler: f64,
    pub limit_db: f64,
}

impl OuterLoop {
    /// Target 10 %, 0.5 dB down-steps, ±10 dB range.
    pub fn new() -> Self {
        OuterLoop {
            offset_db: 0.0,
            step_db: 0.5,
            target_bler: 0.1,
            limit_db: 10.0,
        }
    }
    /// Feed the HARQ outcome of a first transmission.
    pub fn on_feedback(&mut self, ack: bool) {
        if ack {
            self.offset_db += self.step_db * self.target_bler / (1.0 - self.target_bler);
        } else {
            self.offset_db -= self.step_db;
        }
        self.offset_db = self.offset_db.clamp(-self.limit_db, self.limit_db);
    }
    /// The SINR (dB) to choose the MCS from.
    pub fn adjusted_sinr_db(&self, reported_sinr_db: f64) -> f64 {
        reported_sinr_db + self.offset_db
    }
}

impl Default for OuterLoop {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rantcp_core::entity_id;

    #[test]
    fn curve_shape() {
        let m = BlerModel::new(McsTable::Nr1);
        for mcs in 0..=28 {
            let thr = m.threshold_db(mcs).unwrap();
            assert!((m.bler(thr, mcs) - 0.1).abs() < 1e-12);
            assert!((m.bler(thr - 1.5, mcs) - 0.9).abs() < 1e-9);
            assert!(m.bler(thr + 3.0, mcs) < 1e-4);
        }
        // Higher MCS needs more SINR.
        assert!(m.threshold_db(20).unwrap() > m.threshold_db(10).unwrap());
        assert_eq!(m.bler(50.0, 29), 1.0);
    }

    /// At each MCS's threshold SINR the simulated BLER over 1e5 draws is 10 % ± 2 %, and the
    /// residual BLER after the maximum number of HARQ retransmissions (3, i.e. 4 transmissions
    /// chase-combined) is below 1 %. Every MCS of the three tables.
    #[test]
    fn simulated_bler_at_threshold_and_residual_after_harq() {
        let draws = 100_000;
        let max_retx = 3;
        for table in [McsTable::Lte, McsTable::Nr1, McsTable::Nr2] {
            let model = BlerModel::new(table);
            let mut rng = Rng::new(2024, entity_id(&format!("bler-{table:?}")));
            for mcs in 0..=table.max_mcs() {
                let thr = model.threshold_db(mcs).unwrap();
                let mut first_fail = 0u32;
                let mut residual = 0u32;
                let mut harq = ChaseCombiner::new(model);
                for _ in 0..draws {
                    let mut ok = harq.decode(thr, mcs, 0, &mut rng);
                    if !ok {
                        first_fail += 1;
                    }
                    let mut a = 1;
                    while !ok && a <= max_retx {
                        ok = harq.decode(thr, mcs, a, &mut rng);
                        a += 1;
                    }
                    if !ok {
                        residual += 1;
                    }
                }
                let bler = first_fail as f64 / draws as f64;
                let res = residual as f64 / draws as f64;
                eprintln!(
                    "{table:?} MCS {mcs:2}: thr {thr:6.2} dB, BLER {bler:.4}, residual {res:.6}"
                );
                assert!(
                    (bler - 0.1).abs() <= 0.02,
                    "{table:?} MCS {mcs}: BLER {bler}"
                );
                assert!(res < 0.01, "{table:?} MCS {mcs}: residual {res}");
            }
        }
    }

    /// OLLA drives the BLER to 10 % even when the reported SINR is 4 dB optimistic.
    #[test]
    fn outer_loop_reaches_target() {
        use crate::phy::cqi::{cqi_from_sinr, McsTable};
        let model = BlerModel::new(McsTable::Nr1);
        let mut olla = OuterLoop::new();
        let mut rng = Rng::new(5, 5);
        let true_sinr = 12.0;
        let reported = true_sinr + 4.0;
        let (mut n, mut fails) = (0u32, 0u32);
        for k in 0..60_000 {
            let cqi = cqi_from_sinr(
                olla.adjusted_sinr_db(reported),
                McsTable::Nr1.cqi_table(),
                model.gap_db,
            );
            let mcs = McsTable::Nr1.mcs_from_cqi(cqi);
            let ok = rng.uniform() >= model.bler(true_sinr, mcs);
            olla.on_feedback(ok);
            if k >= 10_000 {
                n += 1;
                fails += !ok as u32;
            }
        }
        let bler = fails as f64 / n as f64;
        assert!((bler - 0.1).abs() < 0.02, "{bler}");
        assert!(olla.offset_db < -2.0, "{}", olla.offset_db);
    }

    #[test]
    fn chase_combining_accumulates_linear_sinr() {
        let model = BlerModel::new(McsTable::Nr1);
        let mut c = ChaseCombiner::new(model);
        let mut rng = Rng::new(1, 1);
        // Force failures with a hopeless SINR to watch the buffer grow.
        assert!(!c.decode(-30.0, 28, 0, &mut rng));
        assert!(!c.decode(-30.0, 28, 1, &mut rng));
        assert!((c.effective_sinr_db() - (-30.0 + 10.0 * 2f64.log10())).abs() < 1e-9);
        assert_eq!(c.attempts(), 2);
        // A new transmission clears the buffer.
        let _ = c.decode(-30.0, 28, 0, &mut rng);
        assert_eq!(c.attempts(), 1);
        let mut h = HarqSoftBuffers::new(20, model);
        assert_eq!(h.len(), 20);
        assert!(h.decode(3, 40.0, 0, 0, &mut rng));
    }
}
