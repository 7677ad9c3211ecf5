//! Contention-based random access, UE side (TS 36.321 §5.1.1–§5.1.5; NR TS 38.321 §5.1.1–
//! §5.1.5 where it differs), as a sans-IO procedure the UE MAC ([`super::ul::UeUlMac`]) starts
//! when SR_COUNTER reaches dsr-TransMax (§5.4.4) or RRC starts it for connection
//! re-establishment (TS 36.331 §5.3.7.4). The PHY judgements (was the preamble detected, was
//! Msg3 decoded) are the caller's: [`RaProcedure::handle_timeout`] returns a [`RaStep`] and the
//! caller answers with [`RaProcedure::preamble_result`] / [`RaProcedure::msg3_result`].
//!
//! # Procedure as modelled
//! * **Initialisation** (§5.1.1): PREAMBLE_TRANSMISSION_COUNTER = 1, backoff parameter 0 ms.
//! * **Resource selection** (§5.1.2): the next PRACH occasion at or after now (after the
//!   backoff, if any): occasions every `prach_period` from `prach_offset` (prach-ConfigIndex,
//!   TS 36.211 Table 5.7.1-2: index 3 = preamble format 0 in subframe 1 of every frame).
//! * **Preamble transmission** (§5.1.3): PREAMBLE_RECEIVED_TARGET_POWER =
//!   preambleInitialReceivedTargetPower + DELTA_PREAMBLE + (PREAMBLE_TRANSMISSION_COUNTER − 1) ×
//!   powerRampingStep (NR: the PREAMBLE_POWER_RAMPING_COUNTER, equal here because neither the
//!   beam nor the carrier changes, TS 38.321 §5.1.3); the PHY sends at min(P_CMAX, target +
//!   PL) (TS 36.213 §6.1, TS 38.213 §7.4) — the caller's judgement.
//! * **RAR reception** (§5.1.4): the window opens `rar_window_start` after the preamble (LTE:
//!   3 subframes after its end; NR: the first PDCCH occasion) and lasts ra-ResponseWindowSize
//!   (NR ra-ResponseWindow). A detected preamble's RAR arrives at the window's start; none
//!   arrives for an undetected one. At the window's end without a RAR: the counter is
//!   incremented; at preambleTransMax + 1 a random access problem is indicated to RRC and the
//!   procedure stops; otherwise the next preamble waits a backoff drawn uniformly from
//!   [0, backoff parameter] and the next PRACH occasion.
//! * **Msg3** (§5.1.4, §5.1.5): the RAR's grant is used `msg3_delay` after the RAR (LTE
//!   k1 ≥ 6 subframes, TS 36.213 §6.1.1; NR k2 + Δ, TS 38.214 §6.1.2.1.1). In connected mode
//!   Msg3 carries the C-RNTI MAC CE and the BSR (the UE MAC builds it); for re-establishment the
//!   RRC request. mac-ContentionResolutionTimer starts at Msg3.
//! * **Contention resolution** (§5.1.5): a decoded Msg3 is answered (PDCCH to the C-RNTI with
//!   an UL grant, or the contention resolution identity) `msg4_delay` after Msg3; the procedure
//!   succeeds if that is before the timer expires. An undecoded Msg3 (after maxHARQ-Msg3Tx
//!   transmissions, judged by the caller) lets the timer expire: the counter is incremented
//!   and the procedure goes on as after a failed RAR reception.
//!
//! Simplifications: one preamble group, no preamble collisions with other UEs (each UE's
//! contention always resolves in its favour when its Msg3 is decoded); Msg2 and Msg4 (downlink)
//! are always received; Msg3's HARQ retransmissions are not scheduled one by one but judged at
//! once by the caller; no contention-free (dedicated preamble) access.

use rantcp_core::{Duration, Rng, Time};

/// RACH parameters (TS 36.331 `RACH-ConfigCommon`, `PRACH-Config`; TS 38.331
/// `RACH-ConfigGeneric`, `RACH-ConfigCommon`).
#[derive(Clone, Debug, PartialEq)]
pub struct RaConfig {
    /// PRACH occasions every `prach_period` from `prach_offset`.
    pub prach_period: Duration,
    pub prach_offset: Duration,
    /// preambleInitialReceivedTargetPower (dBm).
    pub preamble_initial_target_dbm: f64,
    /// powerRampingStep (dB).
    pub power_ramping_step_db: f64,
    /// DELTA_PREAMBLE (dB; TS 36.321 §7.6: 0 for preamble format 0).
    pub delta_preamble_db: f64,
    /// preambleTransMax.
    pub preamble_trans_max: u32,
    /// From the preamble to the start of the RAR window, and ra-ResponseWindowSize.
    pub rar_window_start: Duration,
    pub rar_window: Duration,
    /// RAR → Msg3.
    pub msg3_delay: Duration,
    /// Msg3 → contention resolution (Msg4) when Msg3 was decoded.
    pub msg4_delay: Duration,
    /// mac-ContentionResolutionTimer.
    pub contention_resolution_timer: Duration,
    /// Backoff parameter value the eNB signals in the RAR's BI subheader (TS 36.321 §7.2);
    /// zero = no BI (§5.1.1: 0 ms).
    pub backoff: Duration,
    /// maxHARQ-Msg3Tx.
    pub max_harq_msg3_tx: u32,
}

impl RaConfig {
    /// LTE FDD, the values of srsRAN's eNB configuration (`srsenb/sib.conf.example`):
    /// prach-ConfigIndex 3 (every 10 ms, subframe 1), preambleInitialReceivedTargetPower
    /// −104 dBm, powerRampingStep 6 dB, preambleTransMax n10, ra-ResponseWindowSize sf10 (from
    /// 3 subframes after the preamble, §5.1.4), mac-ContentionResolutionTimer sf64,
    /// maxHARQ-Msg3Tx 4; Msg3 6 subframes after the RAR (TS 36.213 §6.1.1), contention
    /// resolution 4 subframes after Msg3 (the eNB's n+4 answer); no BI.
    pub fn lte(slot: Duration) -> Self {
        RaConfig {
            prach_period: Duration::from_millis(10),
            prach_offset: slot,
            preamble_initial_target_dbm: -104.0,
            power_ramping_step_db: 6.0,
            delta_preamble_db: 0.0,
            preamble_trans_max: 10,
            rar_window_start: slot.saturating_mul(3),
            rar_window: Duration::from_millis(10),
            msg3_delay: slot.saturating_mul(6),
            msg4_delay: slot.saturating_mul(4),
            contention_resolution_timer: Duration::from_millis(64),
            backoff: Duration::ZERO,
            max_harq_msg3_tx: 4,
        }
    }
}

impl RaConfig {
    /// NR FR2 (slot `slot`, "CCDDUUUU"): as [`Self::lte`] but PRACH in the first UL slot of
    /// the pattern (slot 4), the RAR window from the next control slot (4 slots later) for
    /// ra-ResponseWindow sl80, Msg3 k2 + Δ = 4 + 6 slots after the RAR (TS 38.214 Table
    /// 6.1.2.1.1-5, μ = 3), contention resolution 4 slots after Msg3, ra-ContentionResolution-
    /// Timer sf64.
    pub fn nr(slot: Duration) -> Self {
        RaConfig {
            prach_offset: slot.saturating_mul(4),
            rar_window_start: slot.saturating_mul(4),
            rar_window: slot.saturating_mul(80),
            msg3_delay: slot.saturating_mul(10),
            msg4_delay: slot.saturating_mul(4),
            ..Self::lte(slot)
        }
    }
}

/// What the procedure asks of the caller, or tells it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum RaStep {
    /// Send a preamble now with PREAMBLE_RECEIVED_TARGET_POWER `target_dbm`; answer with
    /// [`RaProcedure::preamble_result`].
    Preamble { target_dbm: f64 },
    /// Send Msg3 now; answer with [`RaProcedure::msg3_result`].
    Msg3,
    /// Contention resolution succeeded: the procedure is complete (§5.1.5).
    Success,
    /// PREAMBLE_TRANSMISSION_COUNTER reached preambleTransMax + 1: random access problem
    /// (§5.1.4, §5.1.5), for RRC (TS 36.331 §5.3.11.3).
    Problem,
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum State {
    Idle,
    /// Next preamble at the first PRACH occasion at or after `.0`.
    Select(Time),
    /// Preamble sent: RAR at `rar` if detected; window ends at `end`.
    Rar {
        rar: Option<Time>,
        end: Time,
    },
    /// Msg3 at `.0`.
    Msg3(Time),
    /// Contention resolution at `done` if Msg3 was decoded; timer expires at `expiry`.
    ContRes {
        done: Option<Time>,
        expiry: Time,
    },
}

/// Random access counters.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RaCounters {
    /// Procedures started, preambles sent, Msg3s sent, successes, random access problems.
    pub procedures: u64,
    pub preambles: u64,
    pub msg3: u64,
    pub successes: u64,
    pub problems: u64,
}

/// The UE's random access procedure. See the module docs.
#[derive(Debug)]
pub struct RaProcedure {
    pub cfg: RaConfig,
    state: State,
    /// PREAMBLE_TRANSMISSION_COUNTER.
    counter: u32,
    rng: Rng,
    counters: RaCounters,
}

impl RaProcedure {
    /// `rng`: the UE's stream for backoff draws.
    pub fn new(cfg: RaConfig, rng: Rng) -> Self {
        RaProcedure {
            cfg,
            state: State::Idle,
            counter: 0,
            rng,
            counters: RaCounters::default(),
        }
    }

    /// Initiate the procedure (§5.1.1); no-op if one is ongoing.
    pub fn start(&mut self, now: Time) {
        if self.is_active() {
            return;
        }
        self.counters.procedures += 1;
        self.counter = 1;
        self.state = State::Select(now);
    }

    /// Stop the procedure (MAC reset, TS 36.321 §5.9; or an UL grant to the C-RNTI ended it).
    pub fn stop(&mut self) {
        self.state = State::Idle;
    }

    /// An UL grant for new data addressed to the C-RNTI: after a decoded Msg3 it is the
    /// contention resolution (§5.1.5, success); otherwise it ends the procedure all the same
    /// (the UE is being scheduled).
    pub fn grant_received(&mut self) {
        if let State::ContRes { done: Some(_), .. } = self.state {
            self.counters.successes += 1;
        }
        self.state = State::Idle;
    }

    #[inline]
    pub fn is_active(&self) -> bool {
        self.state != State::Idle
    }

    /// PREAMBLE_TRANSMISSION_COUNTER (0 when idle).
    pub fn preamble_counter(&self) -> u32 {
        if self.is_active() {
            self.counter
        } else {
            0
        }
    }

    pub fn counters(&self) -> &RaCounters {
        &self.counters
    }

    /// The first PRACH occasion at or after `t`.
    pub fn next_occasion(&self, t: Time) -> Time {
        let p = self.cfg.prach_period.as_nanos().max(1);
        let off = self.cfg.prach_offset.as_nanos() % p;
        let t = t.as_nanos();
        let k = (t + p - off).saturating_sub(1) / p;
        let cand = k * p + off;
        Time::from_nanos(if cand < t { cand + p } else { cand })
    }

    /// When the procedure next acts.
    pub fn poll_timeout(&self) -> Option<Time> {
        match self.state {
            State::Idle => None,
            State::Select(t) => Some(self.next_occasion(t)),
            State::Rar { rar, end } => Some(rar.map_or(end, |r| r.min(end))),
            State::Msg3(t) => Some(t),
            State::ContRes { done, expiry } => Some(done.map_or(expiry, |d| d.min(expiry))),
        }
    }

    /// Advance to `now`; at most one step that concerns the caller.
    pub fn handle_timeout(&mut self, now: Time) -> Option<RaStep> {
        loop {
            let due = self.poll_timeout()?;
            if due > now {
                return None;
            }
            match self.state {
                State::Idle => return None,
                State::Select(_) => {
                    // §5.1.3: PREAMBLE_RECEIVED_TARGET_POWER.
                    let c = &self.cfg;
                    let target = c.preamble_initial_target_dbm
                        + c.delta_preamble_db
                        + (self.counter - 1) as f64 * c.power_ramping_step_db;
                    self.counters.preambles += 1;
                    self.state = State::Rar {
                        rar: None,
                        end: now + c.rar_window_start + c.rar_window,
                    };
                    return Some(RaStep::Preamble { target_dbm: target });
                }
                State::Rar { rar: Some(r), .. } if r <= now => {
                    // §5.1.4: RAR received; Msg3 on its grant.
                    self.state = State::Msg3(r + self.cfg.msg3_delay);
                }
                State::Rar { .. } => {
                    // §5.1.4: RA Response reception not successful.
                    if let Some(s) = self.fail(now) {
                        return Some(s);
                    }
                }
                State::Msg3(_) => {
                    self.counters.msg3 += 1;
                    self.state = State::ContRes {
                        done: None,
                        expiry: now + self.cfg.contention_resolution_timer,
                    };
                    return Some(RaStep::Msg3);
                }
                State::ContRes {
                    done: Some(d),
                    expiry,
                } if d <= now && d < expiry => {
                    self.state = State::Idle;
                    self.counters.successes += 1;
                    return Some(RaStep::Success);
                }
                State::ContRes { .. } => {
                    // §5.1.5: mac-ContentionResolutionTimer expired: not successful.
                    if let Some(s) = self.fail(now) {
                        return Some(s);
                    }
                }
            }
        }
    }

    /// §5.1.4/§5.1.5: increment PREAMBLE_TRANSMISSION_COUNTER; a problem at preambleTransMax + 1,
    /// otherwise back off and select the next occasion.
    fn fail(&mut self, now: Time) -> Option<RaStep> {
        self.counter += 1;
        // PREAMBLE_TRANSMISSION_COUNTER = preambleTransMax + 1.
        if self.counter > self.cfg.preamble_trans_max {
            self.state = State::Idle;
            self.counters.problems += 1;
            return Some(RaStep::Problem);
        }
        let b = self.cfg.backoff.as_nanos();
        let wait = if b == 0 { 0 } else { self.rng.below(b + 1) };
        self.state = State::Select(now + Duration::from_nanos(wait));
        None
    }

    /// The caller's judgement of the preamble just sent: detected by the eNB or not.
    pub fn preamble_result(&mut self, now: Time, detected: bool) {
        if let State::Rar { rar: None, end } = self.state {
            if detected {
                let r = now + self.cfg.rar_window_start;
                self.state = State::Rar {
                    rar: Some(r.min(end)),
                    end,
                };
            }
        }
    }

    /// The caller's judgement of the Msg3 just sent: decoded by the eNB or not.
    pub fn msg3_result(&mut self, now: Time, decoded: bool) {
        if let State::ContRes { done: None, expiry } = self.state {
            if decoded {
                self.state = State::ContRes {
                    done: Some(now + self.cfg.msg4_delay),
                    expiry,
                };
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ra() -> RaProcedure {
        RaProcedure::new(RaConfig::lte(Duration::from_millis(1)), Rng::new(1, 2))
    }

    /// Run to the next step, answering preambles and Msg3 with `heard`.
    fn run(p: &mut RaProcedure, heard: bool) -> Vec<(Time, RaStep)> {
        let mut out = Vec::new();
        while let Some(t) = p.poll_timeout() {
            if let Some(s) = p.handle_timeout(t) {
                out.push((t, s));
                match s {
                    RaStep::Preamble { .. } => p.preamble_result(t, heard),
                    RaStep::Msg3 => p.msg3_result(t, heard),
                    RaStep::Success | RaStep::Problem => break,
                }
            }
        }
        out
    }

    #[test]
    fn success_takes_one_preamble_and_msg3() {
        let mut p = ra();
        p.start(Time::from_micros(4500));
        let s = run(&mut p, true);
        // Occasion subframe 1 of the next frame (11 ms); RAR at 14 ms; Msg3 at 20; Msg4 at 24.
        assert_eq!(
            s,
            vec![
                (
                    Time::from_millis(11),
                    RaStep::Preamble { target_dbm: -104.0 }
                ),
                (Time::from_millis(20), RaStep::Msg3),
                (Time::from_millis(24), RaStep::Success),
            ]
        );
        assert!(!p.is_active());
        assert_eq!(p.counters().successes, 1);
    }

    #[test]
    fn hopeless_link_ramps_power_and_reports_a_problem_after_preamble_trans_max() {
        let mut p = ra();
        p.start(Time::ZERO);
        let s = run(&mut p, false);
        let pre: Vec<f64> = s
            .iter()
            .filter_map(|(_, x)| match x {
                RaStep::Preamble { target_dbm } => Some(*target_dbm),
                _ => None,
            })
            .collect();
        assert_eq!(pre.len(), 10, "preambleTransMax = 10 preambles");
        assert_eq!(pre[0], -104.0);
        assert_eq!(pre[9], -104.0 + 9.0 * 6.0, "6 dB ramping per attempt");
        assert_eq!(s.last().unwrap().1, RaStep::Problem);
        // Each attempt: window ends 13 ms after the preamble, next occasion 20 ms later.
        assert_eq!(s[1].0 - s[0].0, Duration::from_millis(20));
        assert_eq!(p.counters().problems, 1);
    }

    #[test]
    fn undecoded_msg3_expires_the_contention_resolution_timer() {
        let mut p = ra();
        p.start(Time::ZERO);
        let t = p.poll_timeout().unwrap();
        assert!(matches!(p.handle_timeout(t), Some(RaStep::Preamble { .. })));
        p.preamble_result(t, true);
        let t3 = p.poll_timeout().unwrap();
        // The RAR is handled internally; the next step is Msg3.
        assert_eq!(p.handle_timeout(t3), None);
        let t3 = p.poll_timeout().unwrap();
        assert_eq!(p.handle_timeout(t3), Some(RaStep::Msg3));
        p.msg3_result(t3, false);
        assert_eq!(p.poll_timeout(), Some(t3 + Duration::from_millis(64)));
        assert_eq!(p.handle_timeout(t3 + Duration::from_millis(64)), None);
        assert_eq!(p.preamble_counter(), 2);
    }

    #[test]
    fn backoff_delays_the_next_preamble_within_the_parameter() {
        let mut cfg = RaConfig::lte(Duration::from_millis(1));
        cfg.backoff = Duration::from_millis(80);
        cfg.prach_period = Duration::from_millis(1);
        cfg.prach_offset = Duration::ZERO;
        let mut p = RaProcedure::new(cfg, Rng::new(7, 1));
        p.start(Time::ZERO);
        let s = run(&mut p, false);
        let times: Vec<Time> = s.iter().map(|x| x.0).collect();
        let gaps: Vec<u64> = times
            .windows(2)
            .map(|w| (w[1] - w[0]).as_nanos() / 1_000_000)
            .collect();
        // Window 13 ms, then 0..=80 ms of backoff (1 ms occasions).
        assert!(
            gaps[..gaps.len() - 1]
                .iter()
                .all(|&g| (13..=93).contains(&g)),
            "{gaps:?}"
        );
        assert!(
            gaps.iter().any(|&g| g > 14),
            "a backoff was drawn: {gaps:?}"
        );
    }
}
