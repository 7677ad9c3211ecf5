//! Emulation health: how late the model ran behind the wall clock. A histogram of lateness at
//! 1 µs resolution up to 100 ms (a later sample counts in the last bucket; the maximum is kept
//! exactly), quantiles read from it.

/// Lateness histogram, microseconds.
pub struct Lateness {
    counts: Vec<u64>,
    n: u64,
    max_ns: u64,
}

const BUCKETS: usize = 100_000;

impl Default for Lateness {
    fn default() -> Self {
        Lateness {
            counts: vec![0; BUCKETS],
            n: 0,
            max_ns: 0,
        }
    }
}

impl Lateness {
    #[inline]
    pub fn record(&mut self, ns: u64) {
        let b = ((ns / 1000) as usize).min(BUCKETS - 1);
        self.counts[b] += 1;
        self.n += 1;
        self.max_ns = self.max_ns.max(ns);
    }

    pub fn samples(&self) -> u64 {
        self.n
    }

    /// The `q` quantile (0..=1), µs: the upper edge of the bucket holding it (so a reported
    /// p99 of 3 means 99 % of samples were under 3 µs).
    pub fn quantile_us(&self, q: f64) -> f64 {
        if self.n == 0 {
            return 0.0;
        }
        let rank = ((q * self.n as f64).ceil() as u64).clamp(1, self.n);
        let mut seen = 0;
        for (b, &c) in self.counts.iter().enumerate() {
            seen += c;
            if seen >= rank {
                return if b == BUCKETS - 1 {
                    self.max_ns as f64 / 1000.0
                } else {
                    (b + 1) as f64
                };
            }
        }
        self.max_ns as f64 / 1000.0
    }

    pub fn max_us(&self) -> f64 {
        self.max_ns as f64 / 1000.0
    }

    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({
            "samples": self.n,
            "p50_us": self.quantile_us(0.5),
            "p99_us": self.quantile_us(0.99),
            "max_us": self.max_us(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles() {
        let mut l = Lateness::default();
        assert_eq!(l.quantile_us(0.99), 0.0);
        for k in 0..100u64 {
            l.record(k * 1000 + 500); // 0.5 µs, 1.5 µs, … 99.5 µs
        }
        assert_eq!(l.samples(), 100);
        assert_eq!(l.quantile_us(0.5), 50.0);
        assert_eq!(l.quantile_us(0.99), 99.0);
        assert_eq!(l.quantile_us(1.0), 100.0);
        assert_eq!(l.max_us(), 99.5);
        l.record(250_000_000); // 250 ms: beyond the buckets, reported exactly at the top
        assert_eq!(l.quantile_us(1.0), 250_000.0);
    }
}
