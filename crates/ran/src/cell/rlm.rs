//! Radio link monitoring of a UE in RRC_CONNECTED: the physical layer's in-sync and
//! out-of-sync indications (TS 36.133 §7.6, TS 36.213 §4.2.1) and RRC's N310/N311/T310
//! (TS 36.331 §5.3.11.1–§5.3.11.3); T310 expiry is a radio link failure.
//!
//! Downlink quality is the wideband downlink SINR the UE sees at the sample instant, scheduled
//! or not ([`crate::radio::RadioEnvironment::sinr_db_observed`]), sampled every 5 ms and averaged
//! (in dB) per radio frame. Every 10 ms (the indication period without DRX,
//! TS 36.133 §7.6.2.1) the UE compares the mean of the last 20 frames (the 200 ms Qout
//! evaluation period) with Qout and the mean of the last 10 (the 100 ms Qin period) with Qin:
//! below Qout an out-of-sync indication, above Qin an in-sync one, in between none. Qout
//! and Qin are defined as the levels at which a hypothetical PDCCH would be received with
//! 10 % (DCI 1A, aggregation level 8) and 2 % (aggregation level 4) block error; the model
//! takes them as SINR thresholds, [`QOUT_DB`] and [`QIN_DB`]. N310 consecutive out-of-sync
//! indications start T310; N311 consecutive in-sync indications stop it (§5.3.11.2); an
//! indication of the other kind breaks the run.

use rantcp_core::{Duration, Time};

/// Qout as a downlink SINR (dB): −8 dB, the figure radio link monitoring studies use for the
/// 10 % BLER of TS 36.133 Table 7.6.1-1's hypothetical PDCCH (DCI 1A, aggregation level 8),
/// attributed to TR 36.839's HetNet mobility study (as a NIST ns-3 example's comments report
/// it; the TR itself not checked). No 3GPP table gives the SINR: it depends on the receiver.
/// Chosen over ns-3 LENA's `LteUePhy` default (Qout −5 dB, Qin −3.9 dB; set
/// `mac.rlm_qout_db = -5`, `mac.rlm_qin_db = -3.9` for those) because it agrees with this
/// model's own PHY: DCI 1A (28 bits + 16 CRC at 20 MHz) on 8 CCEs (288 REs, QPSK) has a
/// spectral efficiency of 0.153 bit/RE, that of CQI 1, which the model decodes at 10 % BLER
/// at −7.2 dB (and Table 7.6.1-1 sends that PDCCH above the reference signals' power, which
/// lowers the level further). With Qout −5 dB a UE whose reports say CQI 1–2 (data decoded
/// at MCS 0–2) would be declared out of sync.
pub const QOUT_DB: f64 = -8.0;
/// Qin as a downlink SINR (dB): −6 dB (2 % BLER of the aggregation-level-4 hypothetical PDCCH,
/// TS 36.133 Table 7.6.1-2; same source as [`QOUT_DB`]).
pub const QIN_DB: f64 = -6.0;
/// N310, N311 and T310 as srsRAN's eNB broadcasts them in SIB2 ue-TimersAndConstants
/// (srsenb/sib.conf.example: t310 = 200 ms, n310 = 1, n311 = 1), which is what its UEs use
/// (TS 36.331 §5.3.11.1: the values of ue-TimersAndConstants unless RLF-TimersAndConstants
/// were given).
pub const N310: u32 = 1;
pub const N311: u32 = 1;
pub const T310: Duration = Duration::from_millis(200);

/// Frames in the Qout and Qin evaluation periods (200 ms, 100 ms; TS 36.133 §7.6.2.1).
const OUT_FRAMES: usize = 20;
const IN_FRAMES: usize = 10;
/// Indication period and frame length.
const FRAME: Duration = Duration::from_millis(10);
/// Downlink quality samples per frame: every 5 ms, 40 per Qout period. The frame's mean
/// needs no more: at LTE's carriers and UE speeds up to tens of km/h the fast fading changes
/// little within 5 ms.
const SAMPLES_PER_FRAME: u64 = 2;

/// Thresholds and RRC constants of radio link monitoring.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RlmConfig {
    pub q_out_db: f64,
    pub q_in_db: f64,
    pub n310: u32,
    pub n311: u32,
    pub t310: Duration,
}

impl Default for RlmConfig {
    fn default() -> Self {
        RlmConfig {
            q_out_db: QOUT_DB,
            q_in_db: QIN_DB,
            n310: N310,
            n311: N311,
            t310: T310,
        }
    }
}

/// One UE's radio link monitoring. See the module docs.
#[derive(Clone, Debug, Default)]
pub struct Rlm {
    /// Mean SINR (dB) of the last frames, oldest first (at most 20).
    frames: std::collections::VecDeque<f64>,
    /// End of the next frame to evaluate (the next indication).
    next: Option<Time>,
    out_run: u32,
    in_run: u32,
    t310_until: Option<Time>,
}

impl Rlm {
    /// When an indication or T310's expiry is next due (`None`: stopped): the monitor's
    /// wake-up. Each sample is read over the channel at its own instant (a function of time,
    /// read without changing the run), so [`Self::advance`] catching up on several frames at
    /// once gives the indications of timely ones; the device still wakes at every frame
    /// boundary, because an indication may start T310.
    pub fn next_due(&self) -> Option<Time> {
        Time::earliest(self.next, self.t310_until)
    }

    /// Whether T310 runs.
    pub fn t310_running(&self) -> bool {
        self.t310_until.is_some()
    }

    /// Start monitoring afresh at `now` (connection set up or re-established): the evaluation
    /// periods begin empty, T310 stopped, the first indication at the next frame boundary.
    pub fn restart(&mut self, now: Time) {
        let f = FRAME.as_nanos();
        *self = Rlm {
            next: Some(Time::from_nanos((now.as_nanos() / f + 1) * f)),
            ..Rlm::default()
        };
    }

    /// Stop monitoring (radio link failure: RRC leaves the monitored state until
    /// re-established).
    pub fn stop(&mut self) {
        *self = Rlm::default();
    }

    /// Run the indications due by `now`, sampling the downlink SINR with `sinr_at` (NaN or
    /// −∞ = no measurement yet: the subframe is skipped). `true`: T310 expired — radio link
    /// failure (TS 36.331 §5.3.11.3); the monitor is then stopped.
    pub fn advance(
        &mut self,
        now: Time,
        cfg: &RlmConfig,
        mut sinr_at: impl FnMut(Time) -> f64,
    ) -> bool {
        while let Some(t) = self.next.filter(|&t| t <= now) {
            if self.t310_until.is_some_and(|e| e <= t) {
                self.stop();
                return true;
            }
            let sub = FRAME.as_nanos() / SAMPLES_PER_FRAME;
            let (mut sum, mut n) = (0.0, 0u32);
            for k in 0..SAMPLES_PER_FRAME {
                let s = sinr_at(Time::from_nanos(t.as_nanos() - (k + 1) * sub));
                if s.is_finite() {
                    sum += s;
                    n += 1;
                }
            }
            if n > 0 {
                if self.frames.len() == OUT_FRAMES {
                    self.frames.pop_front();
                }
                self.frames.push_back(sum / n as f64);
            }
            self.indicate(t, cfg);
            self.next = Some(t + FRAME);
        }
        if self.t310_until.is_some_and(|e| e <= now) {
            self.stop();
            return true;
        }
        false
    }

    /// The indication at the end of a frame at `t` (TS 36.133 §7.6.2.1; TS 36.331
    /// §5.3.11.1–§5.3.11.2).
    fn indicate(&mut self, t: Time, cfg: &RlmConfig) {
        let mean = |k: usize| {
            let n = self.frames.len();
            (n >= k).then(|| self.frames.iter().skip(n - k).sum::<f64>() / k as f64)
        };
        let out = mean(OUT_FRAMES).is_some_and(|q| q < cfg.q_out_db);
        let in_sync = mean(IN_FRAMES).is_some_and(|q| q > cfg.q_in_db);
        // Both at once (the 100 ms period recovered while the 200 ms one has not): the
        // in-sync indication, of the more recent period, counts.
        if in_sync {
            self.out_run = 0;
            self.in_run += 1;
            if self.t310_until.is_some() && self.in_run >= cfg.n311 {
                self.t310_until = None;
            }
        } else if out {
            self.in_run = 0;
            self.out_run += 1;
            if self.t310_until.is_none() && self.out_run >= cfg.n310 {
                self.t310_until = Some(t + cfg.t310);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(x: u64) -> Time {
        Time::from_nanos(x * 1_000_000)
    }

    /// SINR `good` dB except `bad` dB during [from, to) ms.
    fn dip(good: f64, bad: f64, from: u64, to: u64) -> impl Fn(Time) -> f64 {
        move |t: Time| {
            if t >= ms(from) && t < ms(to) {
                bad
            } else {
                good
            }
        }
    }

    /// Runs to `end` ms; the RLF instant, if any.
    fn run(cfg: &RlmConfig, f: impl Fn(Time) -> f64, end: u64) -> Option<u64> {
        let mut m = Rlm::default();
        m.restart(ms(0));
        (1..=end).find(|&t| m.advance(ms(t), cfg, &f))
    }

    #[test]
    fn a_long_dip_below_qout_is_a_radio_link_failure() {
        let cfg = RlmConfig::default();
        // From 1000 ms at −9 dB: the 200 ms mean of (20 dB, −9 dB) frames falls below −8 dB
        // only once all 20 of its frames are bad (19 give (20 − 19·9)/20 = −7.55): out-of-sync
        // at 1200 ms, N310 = 1 starts T310 (200 ms), expiry at 1400 ms.
        assert_eq!(run(&cfg, dip(20.0, -9.0, 1000, 3000), 3000), Some(1400));
        // N310 = 4: three more out-of-sync indications (10 ms each) first.
        let n4 = RlmConfig { n310: 4, ..cfg };
        assert_eq!(run(&n4, dip(20.0, -9.0, 1000, 3000), 3000), Some(1430));
        // A constant −7 dB is neither out of sync (−8) nor in sync (−6): no failure.
        assert_eq!(run(&cfg, |_| -7.0, 3000), None);
    }

    #[test]
    fn recovery_within_t310_stops_it() {
        let cfg = RlmConfig::default();
        // Out-of-sync at 1200 ms, back at 20 dB from 1300 ms: the 100 ms mean exceeds Qin
        // after 2 good frames ((2·20 − 8·9)/10 = −3.2; one gives −6.1), at 1320 ms, before
        // T310's expiry (1400 ms).
        assert_eq!(run(&cfg, dip(20.0, -9.0, 1000, 1300), 5000), None);
        // Back only at 1390 ms: one good frame by 1400 ms is not enough, too late.
        assert_eq!(run(&cfg, dip(20.0, -9.0, 1000, 1390), 5000), Some(1400));
        // N311 = 10 consecutive in-sync indications needed: back at 1300 ms is now too late
        // (in sync from 1320, the tenth at 1410 ms).
        let n311 = RlmConfig { n311: 10, ..cfg };
        assert_eq!(run(&n311, dip(20.0, -9.0, 1000, 1300), 5000), Some(1400));
    }

    #[test]
    fn no_measurement_no_indication() {
        let cfg = RlmConfig::default();
        assert_eq!(run(&cfg, |_| f64::NEG_INFINITY, 2000), None);
    }
}
