//! Simulated time as integer nanoseconds (design.md §3).

use std::fmt;
use std::ops::{Add, AddAssign, Sub};

/// An instant of simulated time: nanoseconds since the start of the run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Time(pub u64);

/// A span of simulated time in nanoseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Duration(pub u64);

impl Time {
    pub const ZERO: Time = Time(0);
    pub const MAX: Time = Time(u64::MAX);
    /// The earlier of two optional instants (`None` when both are): how entities combine
    /// their timers. Two compares, where `[a, b].into_iter().flatten().min()` costs an
    /// iterator per call (entities' timers are asked after every event).
    #[inline]
    pub fn earliest(a: Option<Time>, b: Option<Time>) -> Option<Time> {
        match (a, b) {
            (Some(x), Some(y)) => Some(if y < x { y } else { x }),
            (x, y) => x.or(y),
        }
    }
    #[inline]
    pub const fn from_nanos(ns: u64) -> Self {
        Time(ns)
    }
    #[inline]
    pub const fn from_micros(us: u64) -> Self {
        Time(us * 1_000)
    }
    #[inline]
    pub const fn from_millis(ms: u64) -> Self {
        Time(ms * 1_000_000)
    }
    #[inline]
    pub const fn from_secs(s: u64) -> Self {
        Time(s * 1_000_000_000)
    }
    #[inline]
    pub const fn as_nanos(self) -> u64 {
        self.0
    }
    /// Seconds as a float, for reporting only.
    #[inline]
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / 1e9
    }
    /// Time elapsed since `earlier`, saturating at zero.
    #[inline]
    pub fn saturating_since(self, earlier: Time) -> Duration {
        Duration(self.0.saturating_sub(earlier.0))
    }
}

impl Duration {
    pub const ZERO: Duration = Duration(0);
    pub const MAX: Duration = Duration(u64::MAX);
    #[inline]
    pub const fn from_nanos(ns: u64) -> Self {
        Duration(ns)
    }
    #[inline]
    pub const fn from_micros(us: u64) -> Self {
        Duration(us * 1_000)
    }
    #[inline]
    pub const fn from_millis(ms: u64) -> Self {
        Duration(ms * 1_000_000)
    }
    #[inline]
    pub const fn from_secs(s: u64) -> Self {
        Duration(s * 1_000_000_000)
    }
    #[inline]
    pub const fn as_nanos(self) -> u64 {
        self.0
    }
    /// Seconds as a float, for reporting and for rate arithmetic in models.
    #[inline]
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / 1e9
    }
    /// Round a float number of seconds to the nearest nanosecond (model boundary only).
    #[inline]
    pub fn from_secs_f64(s: f64) -> Self {
        Duration((s * 1e9).round().max(0.0) as u64)
    }
    /// Time to serialise `bytes` at `rate_bps` bits per second, rounded up to whole nanoseconds.
    #[inline]
    pub fn transmission(bytes: u64, rate_bps: u64) -> Self {
        let r = rate_bps.max(1);
        // Any packet's bits × 10^9 fit 64 bits (up to 2.3 GB): the same quotient without a
        // 128-bit division (a call per packet sent on a link).
        if bytes <= u64::MAX / 8_000_000_000 {
            return Duration((bytes * 8_000_000_000).div_ceil(r));
        }
        let bits = bytes as u128 * 8 * 1_000_000_000;
        Duration(bits.div_ceil(r as u128) as u64)
    }
    #[inline]
    pub fn saturating_mul(self, k: u64) -> Self {
        Duration(self.0.saturating_mul(k))
    }
    #[inline]
    pub fn min(self, o: Duration) -> Duration {
        if self.0 <= o.0 {
            self
        } else {
            o
        }
    }
    #[inline]
    pub fn max(self, o: Duration) -> Duration {
        if self.0 >= o.0 {
            self
        } else {
            o
        }
    }
}

impl Add<Duration> for Time {
    type Output = Time;
    #[inline]
    fn add(self, d: Duration) -> Time {
        Time(self.0.saturating_add(d.0))
    }
}
impl AddAssign<Duration> for Time {
    #[inline]
    fn add_assign(&mut self, d: Duration) {
        self.0 = self.0.saturating_add(d.0);
    }
}
impl Sub<Time> for Time {
    type Output = Duration;
    /// Panics in debug builds if `rhs` is later than `self`; use [`Time::saturating_since`]
    /// when that can happen.
    #[inline]
    fn sub(self, rhs: Time) -> Duration {
        debug_assert!(self.0 >= rhs.0, "time went backwards");
        Duration(self.0.wrapping_sub(rhs.0))
    }
}
impl Sub<Duration> for Time {
    type Output = Time;
    #[inline]
    fn sub(self, d: Duration) -> Time {
        Time(self.0.saturating_sub(d.0))
    }
}
impl Add for Duration {
    type Output = Duration;
    #[inline]
    fn add(self, d: Duration) -> Duration {
        Duration(self.0.saturating_add(d.0))
    }
}
impl AddAssign for Duration {
    #[inline]
    fn add_assign(&mut self, d: Duration) {
        self.0 = self.0.saturating_add(d.0);
    }
}
impl Sub for Duration {
    type Output = Duration;
    #[inline]
    fn sub(self, d: Duration) -> Duration {
        Duration(self.0.saturating_sub(d.0))
    }
}

impl fmt::Display for Time {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:.9}s", self.as_secs_f64())
    }
}
impl fmt::Display for Duration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.is_multiple_of(1_000_000) {
            write!(f, "{}ms", self.0 / 1_000_000)
        } else if self.0.is_multiple_of(1_000) {
            write!(f, "{}us", self.0 / 1_000)
        } else {
            write!(f, "{}ns", self.0)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn transmission_time_rounds_up() {
        // 1500 B at 50 Mbit/s = 240 us exactly.
        assert_eq!(
            Duration::transmission(1500, 50_000_000),
            Duration::from_micros(240)
        );
        // 1 B at 3 bit/s = 8/3 s, rounded up to the next ns.
        assert_eq!(Duration::transmission(1, 3).0, 2_666_666_667);
    }
    #[test]
    fn transmission_time_is_the_128_bit_quotient_on_both_sides_of_the_64_bit_path() {
        let wide = |b: u64, r: u64| ((b as u128 * 8_000_000_000).div_ceil(r.max(1) as u128)) as u64;
        let edge = u64::MAX / 8_000_000_000;
        for b in [0, 1, 40, 1500, 65_535, edge - 1, edge, edge + 1, edge * 3] {
            for r in [0, 1, 3, 7_000_001, 50_000_000, 1_000_000_000_000, u64::MAX] {
                assert_eq!(
                    Duration::transmission(b, r).0,
                    wide(b, r),
                    "{b} B at {r} bit/s"
                );
            }
        }
    }
    #[test]
    fn arithmetic() {
        let t = Time::from_millis(5) + Duration::from_micros(250);
        assert_eq!(t.as_nanos(), 5_250_000);
        assert_eq!(t - Time::from_millis(5), Duration::from_micros(250));
        assert_eq!(Time::from_millis(1).saturating_since(t), Duration::ZERO);
    }
}
