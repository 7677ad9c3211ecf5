//! Round-trip time estimation and the retransmission timeout (RFC 6298 §2, §5.5).
//!
//! Samples come from per-segment send times in integer nanoseconds, with Karn's rule
//! (RFC 6298 §3): segments that were ever retransmitted give no sample. The estimator keeps
//! SRTT and RTTVAR in nanoseconds and derives the base RTO; exponential backoff
//! (RFC 6298 §5.5) is applied on top by [`RttEstimator::rto`]. Under Linux's rules
//! ([`RttEstimator::with_linux_rules`]) the variation term is Linux's instead (`tcp_rtt_estimator`):
//! it follows the largest deviation of each round trip and decays by a quarter per round trip,
//! not per sample.

use rantcp_core::Duration;

/// Clock granularity G of RFC 6298 §2 (1 ms, as a coarse-grained Linux jiffy clock).
pub const CLOCK_GRANULARITY: Duration = Duration::from_millis(1);

/// RFC 6298 estimator state.
#[derive(Clone, Copy, Debug)]
pub struct RttEstimator {
    /// Smoothed RTT, ns; `None` before the first sample.
    srtt_ns: Option<u64>,
    /// RTT variation, ns.
    rttvar_ns: u64,
    /// Minimum RTT seen, ns (`u64::MAX` before the first sample).
    min_rtt_ns: u64,
    /// Base RTO (no backoff).
    rto: Duration,
    min_rto: Duration,
    max_rto: Duration,
    /// Linux's variation term ([`crate::CwndRules::Linux`]), `None` under RFC 6298.
    linux: Option<LinuxVar>,
    /// Exponential backoff shift (RFC 6298 §5.5).
    pub backoff: u32,
}

impl RttEstimator {
    pub fn new(initial_rto: Duration, min_rto: Duration, max_rto: Duration) -> Self {
        // RFC 6298 §2.1: before a sample, RTO = initial RTO (1 s by the RFC).
        RttEstimator {
            srtt_ns: None,
            rttvar_ns: 0,
            min_rtt_ns: u64::MAX,
            rto: initial_rto.min(max_rto),
            min_rto,
            max_rto,
            linux: None,
            backoff: 0,
        }
    }

    /// Linux's RTO (`tcp_rtt_estimator`, `__tcp_set_rto`): SRTT + Linux's `rttvar`, which is at
    /// least `min_rto` ([`LinuxVar`]), instead of RFC 6298 §2.4's max(SRTT + 4·RTTVAR, min_rto).
    pub fn with_linux_rules(mut self) -> Self {
        self.linux = Some(LinuxVar::default());
        self
    }

    /// Feed one RTT measurement taken on an ACK after which SND.UNA is `snd_una` and the highest
    /// sequence sent is `snd_nxt` (positions; Linux's round trips of the variation term end when
    /// SND.UNA passes the SND.NXT of the round's start; RFC 6298 does not use them).
    pub fn sample(&mut self, r: Duration, snd_una: u64, snd_nxt: u64) {
        let r_ns = r.0;
        self.min_rtt_ns = self.min_rtt_ns.min(r_ns);
        if let Some(mut v) = self.linux {
            let srtt = v.sample(self.srtt_ns, r_ns, self.min_rto.0, snd_una, snd_nxt);
            self.linux = Some(v);
            self.srtt_ns = Some(srtt);
            // __tcp_set_rto: SRTT + rttvar (tcp_bound_rto caps it at TCP_RTO_MAX).
            self.rto = Duration(srtt + v.rttvar_ns.max(CLOCK_GRANULARITY.0)).min(self.max_rto);
            self.backoff = 0;
            return;
        }
        match self.srtt_ns {
            None => {
                // RFC 6298 §2.2: SRTT = R, RTTVAR = R/2.
                self.srtt_ns = Some(r_ns);
                self.rttvar_ns = r_ns / 2;
            }
            Some(srtt) => {
                // RFC 6298 §2.3: alpha = 1/8, beta = 1/4; RTTVAR is updated with the old SRTT.
                let err = srtt.abs_diff(r_ns);
                self.rttvar_ns = (3 * self.rttvar_ns + err) / 4;
                self.srtt_ns = Some((7 * srtt + r_ns) / 8);
            }
        }
        // RFC 6298 §2.3 and §2.4/§2.5: RTO = SRTT + max(G, K*RTTVAR), K = 4, clamped.
        let srtt = self.srtt_ns.unwrap_or(0);
        let var = (4 * self.rttvar_ns).max(CLOCK_GRANULARITY.0);
        self.rto = Duration(srtt + var).max(self.min_rto).min(self.max_rto);
        // RFC 6298 §5.7 note / Karn: a valid sample from a non-retransmitted segment ends the
        // backoff.
        self.backoff = 0;
    }

    /// Feed a coarse measurement (RFC 7323 timestamps, ms resolution): updates SRTT, RTTVAR
    /// and the RTO and ends the backoff, but leaves the minimum RTT alone.
    pub fn sample_coarse(&mut self, r: Duration, snd_una: u64, snd_nxt: u64) {
        let min = self.min_rtt_ns;
        self.sample(r, snd_una, snd_nxt);
        self.min_rtt_ns = min;
    }

    /// Smoothed RTT, `Duration::ZERO` before the first sample.
    pub fn srtt(&self) -> Duration {
        Duration(self.srtt_ns.unwrap_or(0))
    }
    pub fn has_sample(&self) -> bool {
        self.srtt_ns.is_some()
    }
    /// RFC 6298's RTTVAR; under Linux's rules a quarter of Linux's variation term (its RTO is
    /// SRTT + `rttvar_us`, RFC 6298's SRTT + 4·RTTVAR).
    pub fn rttvar(&self) -> Duration {
        match self.linux {
            Some(v) => Duration(v.rttvar_ns / 4),
            None => Duration(self.rttvar_ns),
        }
    }
    /// Minimum RTT seen, `Duration::ZERO` before the first sample.
    pub fn min_rtt(&self) -> Duration {
        if self.min_rtt_ns == u64::MAX {
            Duration::ZERO
        } else {
            Duration(self.min_rtt_ns)
        }
    }
    /// Base RTO without backoff.
    pub fn base_rto(&self) -> Duration {
        self.rto
    }
    /// Current RTO including the exponential backoff, capped at the maximum (RFC 6298 §5.5).
    pub fn rto(&self) -> Duration {
        self.backed_off(self.backoff)
    }
    /// Base RTO doubled `shift` times, capped at the maximum RTO.
    pub fn backed_off(&self, shift: u32) -> Duration {
        if shift >= 40 {
            return self.max_rto;
        }
        self.rto.saturating_mul(1u64 << shift).min(self.max_rto)
    }
    /// RFC 6298 §5.7: the SYN (or SYN-ACK) timed out and no sample was taken: once the
    /// connection is established, start from max(RTO, 3 s) without backoff.
    pub fn reset_after_syn_timeout(&mut self) {
        if self.srtt_ns.is_none() {
            self.rto = self.rto.max(Duration::from_secs(3)).min(self.max_rto);
            self.backoff = 0;
        }
    }
    /// Double the RTO (RFC 6298 §5.5).
    pub fn back_off(&mut self) {
        if self.rto() < self.max_rto {
            self.backoff += 1;
        }
    }
}

/// Linux's variation term (net/ipv4/tcp_input.c `tcp_rtt_estimator`), in nanoseconds where
/// Linux counts µs. `mdev` is the mean deviation scaled by 4 (Linux `mdev_us`: the RTO's K = 4
/// built in), updated on every sample with gain 1/4 — but when the RTT falls, only an eighth of
/// that ("similar to one of Eifel findings … finer gain for mdev in this case", so the RTO does
/// not drop fast). `rttvar` (Linux `rttvar_us`, the RTO's whole variation term) rises at once
/// to the largest `mdev` of the current round trip (`mdev_max_us`, which starts each round at
/// `min_rto`), and once a round ends — SND.UNA passes the SND.NXT of its start (`rtt_seq`) —
/// falls a quarter of the way down to that round's largest `mdev`: after one 2 s sample among
/// 25 ms ones the RTO stays above 1 s for rounds where RFC 6298's RTTVAR (per sample) would have
/// decayed within a few dozen ACKs.
#[derive(Clone, Copy, Debug, Default)]
pub struct LinuxVar {
    mdev_ns: u64,
    mdev_max_ns: u64,
    rttvar_ns: u64,
    rtt_seq: u64,
}

impl LinuxVar {
    /// One sample `m` (ns) with the smoothed RTT before it (`None`: the first); returns the new
    /// SRTT. `min_rto`: Linux's `tcp_rto_min_us`, the floor of each round's `mdev_max`.
    fn sample(
        &mut self,
        srtt: Option<u64>,
        m: u64,
        min_rto: u64,
        snd_una: u64,
        snd_nxt: u64,
    ) -> u64 {
        let Some(srtt) = srtt else {
            // "no previous measure": SRTT = m, mdev = 2m ("make sure rto = 3*rtt").
            self.mdev_ns = 2 * m;
            self.rttvar_ns = self.mdev_ns.max(min_rto);
            self.mdev_max_ns = self.rttvar_ns;
            self.rtt_seq = snd_nxt;
            return m.max(1);
        };
        // SRTT += (m − SRTT)/8 (Linux keeps 8·SRTT; the same up to rounding).
        let new_srtt = (7 * srtt + m) / 8;
        let quarter = self.mdev_ns / 4;
        if m < srtt {
            // The RTT fell: mdev += (|err| − mdev/4)/8 when that is positive, else the usual.
            let err = srtt - m;
            if err > quarter {
                self.mdev_ns += (err - quarter) / 8;
            } else {
                self.mdev_ns -= quarter - err;
            }
        } else {
            let err = m - srtt;
            self.mdev_ns = self.mdev_ns + err - quarter;
        }
        if self.mdev_ns > self.mdev_max_ns {
            self.mdev_max_ns = self.mdev_ns;
            self.rttvar_ns = self.rttvar_ns.max(self.mdev_max_ns);
        }
        if snd_una > self.rtt_seq {
            // A round trip ended: rttvar decays a quarter of the way to its largest mdev.
            if self.mdev_max_ns < self.rttvar_ns {
                self.rttvar_ns -= (self.rttvar_ns - self.mdev_max_ns) / 4;
            }
            self.rtt_seq = snd_nxt;
            self.mdev_max_ns = min_rto;
        }
        new_srtt.max(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn first_and_second_sample() {
        let mut e = RttEstimator::new(
            Duration::from_secs(1),
            Duration::from_millis(200),
            Duration::from_secs(60),
        );
        assert_eq!(e.rto(), Duration::from_secs(1));
        e.sample(Duration::from_millis(100), 0, 0);
        assert_eq!(e.srtt(), Duration::from_millis(100));
        assert_eq!(e.rttvar(), Duration::from_millis(50));
        // 100 + 4*50 = 300 ms
        assert_eq!(e.rto(), Duration::from_millis(300));
        e.sample(Duration::from_millis(200), 0, 0);
        // rttvar = 3/4*50 + 1/4*100 = 62.5; srtt = 7/8*100 + 1/8*200 = 112.5
        assert_eq!(e.rttvar(), Duration::from_micros(62_500));
        assert_eq!(e.srtt(), Duration::from_micros(112_500));
        assert_eq!(e.rto(), Duration::from_micros(362_500));
        e.back_off();
        assert_eq!(e.rto(), Duration::from_micros(725_000));
    }
    #[test]
    fn min_rto_clamps() {
        let mut e = RttEstimator::new(
            Duration::from_secs(1),
            Duration::from_millis(200),
            Duration::from_secs(60),
        );
        e.sample(Duration::from_millis(10), 0, 0);
        assert_eq!(e.rto(), Duration::from_millis(200));
    }

    fn new_est() -> RttEstimator {
        RttEstimator::new(
            Duration::from_secs(1),
            Duration::from_millis(200),
            Duration::from_secs(60),
        )
    }

    #[test]
    fn linux_floors_the_variation_term_not_the_rto() {
        let (mut rfc, mut linux) = (new_est(), new_est().with_linux_rules());
        // Steady 150 ms samples: RTTVAR decays towards 0. RFC 6298: max(SRTT + 4·RTTVAR, 200 ms)
        // is soon 200 ms, 50 ms above SRTT; Linux: SRTT + 200 ms (its variation term, 300 ms
        // after the first sample, decays towards min_rto by a quarter of the rest per round:
        // (¾)^39 of 100 ms, ~2 µs, is left after these 40).
        for i in 0..40 {
            // Each sample ends a round trip (SND.UNA passes the last one's SND.NXT).
            rfc.sample(Duration::from_millis(150), i + 1, i + 1);
            linux.sample(Duration::from_millis(150), i + 1, i + 1);
        }
        assert_eq!(rfc.srtt(), Duration::from_millis(150));
        assert_eq!(rfc.rto(), Duration::from_millis(200));
        assert_eq!(linux.srtt(), Duration::from_millis(150));
        let over = linux.rto().0 - Duration::from_millis(350).0;
        assert!(over < 10_000, "Linux RTO {:?}", linux.rto());
        // The first sample: RFC 6298 SRTT + 4·R/2 = 3R, Linux max(2R, min_rto) on top of R.
        let (mut rfc, mut linux) = (new_est(), new_est().with_linux_rules());
        rfc.sample(Duration::from_millis(100), 0, 1);
        linux.sample(Duration::from_millis(100), 0, 1);
        assert_eq!(rfc.rto(), Duration::from_millis(300));
        assert_eq!(linux.rto(), Duration::from_millis(300));
    }

    #[test]
    fn linux_variation_decays_per_round_trip_not_per_sample() {
        // A 2 s sample (segments held through a blockage) among 25 ms ones, then 100 samples of
        // 25 ms within one round trip (SND.UNA stays below the round's SND.NXT, 1000).
        let (mut rfc, mut linux) = (new_est(), new_est().with_linux_rules());
        for e in [&mut rfc, &mut linux] {
            for i in 0..50 {
                e.sample(Duration::from_millis(25), i + 1, i + 1);
            }
            e.sample(Duration::from_millis(2000), 100, 1000);
        }
        // Both jump: RFC 6298 to SRTT + 4·RTTVAR ≈ 272 + 4·494 ms; Linux to SRTT + mdev_max.
        assert!(rfc.rto() > Duration::from_millis(2000), "{:?}", rfc.rto());
        assert!(
            linux.rto() > Duration::from_millis(2000),
            "{:?}",
            linux.rto()
        );
        for k in 0..100 {
            rfc.sample(Duration::from_millis(25), 101 + k, 1000);
            linux.sample(Duration::from_millis(25), 101 + k, 1000);
        }
        // RFC 6298 forgets the spike sample by sample (RTTVAR ×¾ each): back at the 200 ms floor.
        assert_eq!(rfc.rto(), Duration::from_millis(200));
        // Linux keeps its variation term until the round ends (tcp_rtt_estimator): SRTT is back
        // near 25 ms but the RTO is still above 1.9 s.
        assert!(
            linux.srtt() < Duration::from_millis(26),
            "{:?}",
            linux.srtt()
        );
        assert!(
            linux.rto() > Duration::from_millis(1900),
            "{:?}",
            linux.rto()
        );
        // Then one sample per round trip. The first ends the round and decays rttvar a quarter
        // of the way to that round's largest deviation — the first sample's after the spike
        // (1.73 s: the RTT fell, the deviation shrinks with the finer gain only past mdev/4) —
        // the next seven a quarter of the way to min_rto: Linux's own arithmetic
        // (tcp_rtt_estimator in integer µs, replayed) gives rttvar 428.697 ms, RTO 453.7 ms.
        for r in 0..8u64 {
            linux.sample(Duration::from_millis(25), 1001 + r, 1001 + r);
        }
        let rto_ms = linux.rto().0 as f64 / 1e6;
        assert!((rto_ms - 453.697).abs() < 0.05, "{rto_ms}");
    }
}
