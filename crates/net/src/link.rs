//! Point-to-point links: rate, propagation delay, a drop-tail queue limited in bytes or
//! packets, and a seeded error model per packet, per byte or per bit.
//!
//! The transmitter is modelled by virtual finish times rather than a "transmission done"
//! event: a packet accepted at `now` starts serialising at `max(now, busy_until)` and arrives
//! at the far end one transmission time plus the propagation delay later. The queue backlog at
//! `now` is the set of accepted packets that have not started serialising yet, the same
//! quantity a Linux qdisc or an ns-3 `DropTailQueue` limits (the packet on the wire is not in
//! the queue). This halves the events per packet compared with an explicit dequeue event and
//! gives identical timing.

use rantcp_core::{Duration, Rng, Time};
use std::collections::VecDeque;

/// Queue limit of a link's transmit queue.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum QueueLimit {
    Bytes(u64),
    Packets(u64),
}

/// Unit of a link's random error model.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorUnit {
    /// Each packet is lost with probability `rate`.
    Packet,
    /// Each byte is corrupted with probability `rate` (ns-3 `RateErrorModel` default unit).
    Byte,
    /// Each bit is corrupted with probability `rate`.
    Bit,
}

/// Parameters of one direction of a link.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LinkParams {
    /// Line rate, bit/s.
    pub rate_bps: u64,
    /// One-way propagation delay.
    pub delay: Duration,
    pub queue: QueueLimit,
    /// Error probability per `error_unit`.
    pub error_rate: f64,
    pub error_unit: ErrorUnit,
}

/// Counters of one link direction.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LinkStats {
    pub tx_packets: u64,
    pub tx_bytes: u64,
    pub queue_drops: u64,
    pub error_drops: u64,
    pub max_backlog_bytes: u64,
}

/// Outcome of offering a packet to a link.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Offer {
    /// Accepted: starts serialising at `tx_start`, fully received at `arrival`; `corrupted`
    /// packets occupy the link but are discarded by the receiver.
    Sent {
        tx_start: Time,
        arrival: Time,
        corrupted: bool,
    },
    /// Dropped at the tail of a full queue.
    Dropped,
}

/// One direction of a point-to-point link.
#[derive(Debug)]
pub struct Link {
    pub params: LinkParams,
    busy_until: Time,
    /// (start time, bytes) of accepted packets, oldest first; entries whose start has passed
    /// are pruned lazily.
    waiting: VecDeque<(Time, u32)>,
    waiting_bytes: u64,
    rng: Rng,
    /// Probability that a packet of a given length survives, cached for the last length seen.
    survive_cache: (u32, f64),
    pub stats: LinkStats,
}

impl Link {
    pub fn new(params: LinkParams, rng: Rng) -> Self {
        Link {
            params,
            busy_until: Time::ZERO,
            waiting: VecDeque::new(),
            waiting_bytes: 0,
            rng,
            survive_cache: (0, 1.0),
            stats: LinkStats::default(),
        }
    }

    #[inline]
    fn prune(&mut self, now: Time) {
        while let Some(&(start, bytes)) = self.waiting.front() {
            if start > now {
                break;
            }
            self.waiting.pop_front();
            self.waiting_bytes -= bytes as u64;
        }
    }

    /// Bytes waiting in the queue at `now` (excluding the packet being serialised).
    pub fn backlog_bytes(&mut self, now: Time) -> u64 {
        self.prune(now);
        self.waiting_bytes
    }

    /// Offer a packet of `bytes` (IP length) at `now`.
    #[inline]
    pub fn offer(&mut self, now: Time, bytes: u32) -> Offer {
        self.prune(now);
        let start = self.busy_until.max(now);
        if start > now {
            // The transmitter is busy: the packet must wait in the queue.
            let full = match self.params.queue {
                QueueLimit::Bytes(b) => self.waiting_bytes + bytes as u64 > b,
                QueueLimit::Packets(p) => self.waiting.len() as u64 + 1 > p,
            };
            if full {
                self.stats.queue_drops += 1;
                return Offer::Dropped;
            }
            self.waiting.push_back((start, bytes));
            self.waiting_bytes += bytes as u64;
            self.stats.max_backlog_bytes = self.stats.max_backlog_bytes.max(self.waiting_bytes);
        }
        let finish = start + Duration::transmission(bytes as u64, self.params.rate_bps);
        self.busy_until = finish;
        self.stats.tx_packets += 1;
        self.stats.tx_bytes += bytes as u64;
        let corrupted = self.draw_error(bytes);
        if corrupted {
            self.stats.error_drops += 1;
        }
        Offer::Sent {
            tx_start: start,
            arrival: finish + self.params.delay,
            corrupted,
        }
    }

    #[inline]
    fn draw_error(&mut self, bytes: u32) -> bool {
        let p = self.params.error_rate;
        if p <= 0.0 {
            return false;
        }
        let loss = match self.params.error_unit {
            ErrorUnit::Packet => p,
            ErrorUnit::Byte | ErrorUnit::Bit => {
                if self.survive_cache.0 != bytes {
                    let units = match self.params.error_unit {
                        ErrorUnit::Byte => bytes as f64,
                        _ => bytes as f64 * 8.0,
                    };
                    // P(no unit in error) = (1 - p)^units (ns-3 RateErrorModel semantics).
                    self.survive_cache = (bytes, (units * (-p).ln_1p()).exp());
                }
                1.0 - self.survive_cache.1
            }
        };
        self.rng.bernoulli(loss)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn link(queue: QueueLimit) -> Link {
        Link::new(
            LinkParams {
                rate_bps: 8_000_000, // 1 byte per microsecond
                delay: Duration::from_millis(10),
                queue,
                error_rate: 0.0,
                error_unit: ErrorUnit::Packet,
            },
            Rng::new(1, 1),
        )
    }

    #[test]
    fn back_to_back_packets_serialise_in_turn() {
        let mut l = link(QueueLimit::Packets(10));
        let t0 = Time::from_millis(1);
        let a = l.offer(t0, 1000);
        let b = l.offer(t0, 500);
        assert_eq!(
            a,
            Offer::Sent {
                tx_start: t0,
                arrival: t0 + Duration::from_micros(1000 + 10_000),
                corrupted: false
            }
        );
        assert_eq!(
            b,
            Offer::Sent {
                tx_start: t0 + Duration::from_micros(1000),
                arrival: t0 + Duration::from_micros(1500 + 10_000),
                corrupted: false
            }
        );
        assert_eq!(l.backlog_bytes(t0), 500);
        assert_eq!(l.backlog_bytes(t0 + Duration::from_micros(1000)), 0);
    }

    #[test]
    fn drop_tail_in_packets_excludes_the_packet_on_the_wire() {
        let mut l = link(QueueLimit::Packets(2));
        let t = Time::ZERO;
        assert!(matches!(l.offer(t, 100), Offer::Sent { .. })); // on the wire
        assert!(matches!(l.offer(t, 100), Offer::Sent { .. })); // queued 1
        assert!(matches!(l.offer(t, 100), Offer::Sent { .. })); // queued 2
        assert_eq!(l.offer(t, 100), Offer::Dropped);
        assert_eq!(l.stats.queue_drops, 1);
        // After the first finishes (100 us) one slot frees.
        assert!(matches!(
            l.offer(Time::from_micros(100), 100),
            Offer::Sent { .. }
        ));
    }

    #[test]
    fn drop_tail_in_bytes() {
        let mut l = link(QueueLimit::Bytes(1500));
        let t = Time::ZERO;
        assert!(matches!(l.offer(t, 1500), Offer::Sent { .. }));
        assert!(matches!(l.offer(t, 1000), Offer::Sent { .. }));
        assert!(matches!(l.offer(t, 500), Offer::Sent { .. }));
        assert_eq!(l.offer(t, 1), Offer::Dropped);
    }

    #[test]
    fn per_packet_error_rate_matches() {
        let mut l = link(QueueLimit::Packets(u64::MAX));
        l.params.error_rate = 0.01;
        let n = 100_000u64;
        let mut lost = 0;
        for i in 0..n {
            if let Offer::Sent {
                corrupted: true, ..
            } = l.offer(Time::from_millis(i), 100)
            {
                lost += 1;
            }
        }
        let r = lost as f64 / n as f64;
        assert!((r - 0.01).abs() < 0.0015, "{r}");
    }

    #[test]
    fn per_bit_error_rate_scales_with_length() {
        let mut l = link(QueueLimit::Packets(u64::MAX));
        l.params.error_rate = 1e-5;
        l.params.error_unit = ErrorUnit::Bit;
        let n = 100_000u64;
        let mut lost = 0;
        for i in 0..n {
            if let Offer::Sent {
                corrupted: true, ..
            } = l.offer(Time::from_millis(i), 1500)
            {
                lost += 1;
            }
        }
        // 1 - (1 - 1e-5)^12000 = 0.1131
        let r = lost as f64 / n as f64;
        assert!((r - 0.1131).abs() < 0.005, "{r}");
    }
}
