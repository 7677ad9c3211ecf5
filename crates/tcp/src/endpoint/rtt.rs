//! Round-trip time estimation and the retransmission timeout (RFC 6298 §2, §5.5).
//!
//! Samples come from per-segment send times in integer nanoseconds, with Karn's rule
//! (RFC 6298 §3): segments that were ever retransmitted give no sample. The estimator keeps
//! SRTT and RTTVAR in nanoseconds and derives the base RTO; exponential backoff
//! (RFC 6298 §5.5) is applied on top by [`RttEstimator::rto`].

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
    /// Linux's rule: `min_rto` floors 4·RTTVAR instead of the RTO ([`crate::CwndRules::Linux`]).
    floor_variation: bool,
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
            floor_variation: false,
            backoff: 0,
        }
    }

    /// Linux's RTO: SRTT + max(4·RTTVAR, min_rto) (`__tcp_set_rto`, with `rttvar_us` at least
    /// `tcp_rto_min` in `tcp_rtt_estimator`) instead of RFC 6298 §2.4's max(SRTT + 4·RTTVAR,
    /// min_rto). Linux's per-round maximum of the deviation (`mdev_max_us`) and its slow decay
    /// are not modelled: the variation term is RFC 6298's RTTVAR.
    pub fn with_linux_floor(mut self) -> Self {
        self.floor_variation = true;
        self
    }

    /// Feed one RTT measurement.
    pub fn sample(&mut self, r: Duration) {
        let r_ns = r.0;
        self.min_rtt_ns = self.min_rtt_ns.min(r_ns);
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
        // RFC 6298 §2.3 and §2.4/§2.5: RTO = SRTT + max(G, K*RTTVAR), K = 4, clamped; Linux
        // floors the variation term at min_rto instead ([`RttEstimator::with_linux_floor`]).
        let srtt = self.srtt_ns.unwrap_or(0);
        let var = (4 * self.rttvar_ns).max(CLOCK_GRANULARITY.0);
        self.rto = if self.floor_variation {
            Duration(srtt + var.max(self.min_rto.0))
        } else {
            Duration(srtt + var).max(self.min_rto)
        }
        .min(self.max_rto);
        // RFC 6298 §5.7 note / Karn: a valid sample from a non-retransmitted segment ends the
        // backoff.
        self.backoff = 0;
    }

    /// Feed a coarse measurement (RFC 7323 timestamps, ms resolution): updates SRTT, RTTVAR
    /// and the RTO and ends the backoff, but leaves the minimum RTT alone.
    pub fn sample_coarse(&mut self, r: Duration) {
        let min = self.min_rtt_ns;
        self.sample(r);
        self.min_rtt_ns = min;
    }

    /// Smoothed RTT, `Duration::ZERO` before the first sample.
    pub fn srtt(&self) -> Duration {
        Duration(self.srtt_ns.unwrap_or(0))
    }
    pub fn has_sample(&self) -> bool {
        self.srtt_ns.is_some()
    }
    pub fn rttvar(&self) -> Duration {
        Duration(self.rttvar_ns)
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
        e.sample(Duration::from_millis(100));
        assert_eq!(e.srtt(), Duration::from_millis(100));
        assert_eq!(e.rttvar(), Duration::from_millis(50));
        // 100 + 4*50 = 300 ms
        assert_eq!(e.rto(), Duration::from_millis(300));
        e.sample(Duration::from_millis(200));
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
        e.sample(Duration::from_millis(10));
        assert_eq!(e.rto(), Duration::from_millis(200));
    }

    #[test]
    fn linux_floors_the_variation_term_not_the_rto() {
        let new = || {
            RttEstimator::new(
                Duration::from_secs(1),
                Duration::from_millis(200),
                Duration::from_secs(60),
            )
        };
        let (mut rfc, mut linux) = (new(), new().with_linux_floor());
        // Steady 150 ms samples: RTTVAR decays towards 0. RFC 6298: max(SRTT + 4·RTTVAR, 200 ms)
        // is soon 200 ms, 50 ms above SRTT; Linux: SRTT + 200 ms.
        for _ in 0..40 {
            rfc.sample(Duration::from_millis(150));
            linux.sample(Duration::from_millis(150));
        }
        assert_eq!(rfc.srtt(), Duration::from_millis(150));
        assert_eq!(rfc.rto(), Duration::from_millis(200));
        assert_eq!(linux.rto(), Duration::from_millis(350));
        // A large variation term passes the floor under both rules: SRTT + 4·RTTVAR.
        let (mut rfc, mut linux) = (new(), new().with_linux_floor());
        rfc.sample(Duration::from_millis(100));
        linux.sample(Duration::from_millis(100));
        assert_eq!(rfc.rto(), Duration::from_millis(300));
        assert_eq!(linux.rto(), Duration::from_millis(300));
    }
}
