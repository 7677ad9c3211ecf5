//! The controllers under random loss, at controller level: a packet-level bulk sender over one
//! drop-tail bottleneck with Bernoulli loss, SACK-style loss detection (a hole is lost once 3
//! later segments are acknowledged, RFC 6675 DupThresh), retransmission ahead of new data,
//! one recovery episode per window (RFC 6675 §5: enter only past the previous recovery point),
//! delivery-rate samples per draft-cheng-iccrg-delivery-rate-estimation §3, and pacing at the
//! controller's rate when it asks for one. A stand-in for the endpoint, to check that each
//! controller reacts to losses the way its specification says; the full-simulator checks of the
//! issue run on the real endpoint.

use rantcp_core::{Duration, Rng, Time};
use rantcp_tcp::cc::{AckSample, Cc, CcKind, CcParams, CongestionControl, Hystart, RateSample};
use std::collections::VecDeque;

const MSS: u32 = 1448;
const MSS64: u64 = MSS as u64;

#[derive(Clone, Copy)]
struct Pkt {
    seq: u64,
    sent: Time,
    ack_at: Time,
    dropped: bool,
    acked_after: u32,
    delivered: u64,
    delivered_time: Time,
    first_sent_time: Time,
}

struct Sim {
    rate_bps: u64,
    base_rtt: Duration,
    buffer_bytes: u64,
    loss: f64,
    rng: Rng,
    now: Time,
    link_free: Time,
    next_send: Time,
    next_seq: u64,
    /// Segments in flight in send order (dropped ones stay until declared lost).
    flight: VecDeque<Pkt>,
    pipe: u64,
    rtx_queue: VecDeque<u64>,
    delivered: u64,
    delivered_time: Time,
    first_sent_time: Time,
    srtt: Duration,
    min_rtt: Duration,
    in_recovery: bool,
    recover_seq: u64,
    rtx_count: u64,
    rtt_sum: f64,
    rtt_n: u64,
}

impl Sim {
    fn new(rate_bps: u64, base_rtt: Duration, buffer_bytes: u64, loss: f64, seed: u64) -> Self {
        Sim {
            rate_bps,
            base_rtt,
            buffer_bytes,
            loss,
            rng: Rng::new(seed, 99),
            now: Time::ZERO,
            link_free: Time::ZERO,
            next_send: Time::ZERO,
            next_seq: 0,
            flight: VecDeque::new(),
            pipe: 0,
            rtx_queue: VecDeque::new(),
            delivered: 0,
            delivered_time: Time::ZERO,
            first_sent_time: Time::ZERO,
            srtt: Duration::ZERO,
            min_rtt: Duration::MAX,
            in_recovery: false,
            recover_seq: 0,
            rtx_count: 0,
            rtt_sum: 0.0,
            rtt_n: 0,
        }
    }

    /// Run until `until`; returns delivered bytes in [from, until].
    fn run(&mut self, cc: &mut Cc, from: Time, until: Time) -> u64 {
        let mut at_from = None;
        while self.now < until {
            if at_from.is_none() && self.now >= from {
                at_from = Some(self.delivered);
                self.rtt_sum = 0.0;
                self.rtt_n = 0;
            }
            let next_ack = self
                .flight
                .iter()
                .find(|p| !p.dropped)
                .map(|p| p.ack_at)
                .unwrap_or(Time::MAX);
            let can_send = self.pipe + MSS64 <= cc.cwnd();
            let next_send = if can_send {
                self.next_send.max(self.now)
            } else {
                Time::MAX
            };
            if next_ack == Time::MAX && next_send == Time::MAX {
                panic!(
                    "stalled at {} (cwnd {}, pipe {})",
                    self.now,
                    cc.cwnd(),
                    self.pipe
                );
            }
            if next_ack <= next_send {
                self.now = next_ack;
                self.ack(cc);
            } else {
                self.now = next_send;
                self.send(cc);
            }
        }
        self.delivered - at_from.unwrap_or(0)
    }

    fn send(&mut self, cc: &mut Cc) {
        let now = self.now;
        if self.pipe == 0 {
            self.first_sent_time = now;
            self.delivered_time = now;
        }
        let seq = match self.rtx_queue.pop_front() {
            Some(s) => {
                self.rtx_count += 1;
                s
            }
            None => {
                self.next_seq += 1;
                self.next_seq - 1
            }
        };
        let tx = Duration::transmission(MSS64, self.rate_bps);
        let queued = (self.link_free.saturating_since(now).as_secs_f64() * self.rate_bps as f64
            / 8.0) as u64;
        let dropped = queued + MSS64 > self.buffer_bytes || self.rng.bernoulli(self.loss);
        let mut ack_at = Time::MAX;
        if !dropped {
            let depart = self.link_free.max(now) + tx;
            self.link_free = depart;
            ack_at = depart + self.base_rtt;
            if let Some(last) = self.flight.iter().rev().find(|p| !p.dropped) {
                ack_at = ack_at.max(last.ack_at);
            }
        }
        self.flight.push_back(Pkt {
            seq,
            sent: now,
            ack_at,
            dropped,
            acked_after: 0,
            delivered: self.delivered,
            delivered_time: self.delivered_time,
            first_sent_time: self.first_sent_time,
        });
        self.pipe += MSS64;
        cc.on_packet_sent(now, MSS64, self.pipe, false);
        self.next_send = match cc.pacing_rate_bps() {
            Some(rate) => now + Duration::from_secs_f64(MSS64 as f64 * 8.0 / rate.max(1.0)),
            None => now,
        };
    }

    fn ack(&mut self, cc: &mut Cc) {
        let now = self.now;
        let prior_in_flight = self.pipe;
        let i = self.flight.iter().position(|p| !p.dropped).unwrap();
        let p = self.flight.remove(i).unwrap();
        self.pipe -= MSS64;
        self.delivered += MSS64;
        self.delivered_time = now;
        let send_elapsed = p.sent.saturating_since(p.first_sent_time);
        let ack_elapsed = now.saturating_since(p.delivered_time);
        self.first_sent_time = p.sent;
        let rtt = now.saturating_since(p.sent);
        self.min_rtt = self.min_rtt.min(rtt);
        self.srtt = if self.srtt == Duration::ZERO {
            rtt
        } else {
            Duration((self.srtt.0 * 7 + rtt.0) / 8)
        };
        self.rtt_sum += rtt.as_secs_f64();
        self.rtt_n += 1;
        // RFC 6675 DupThresh: a hole is lost once 3 segments sent after it are delivered. ACKs
        // come in send order, so the holes ahead of this segment are exactly the front `i`.
        let mut newly_lost = 0;
        let mut j = 0;
        for _ in 0..i {
            self.flight[j].acked_after += 1;
            if self.flight[j].acked_after >= 3 {
                let lost = self.flight.remove(j).unwrap();
                self.pipe -= MSS64;
                self.rtx_queue.push_back(lost.seq);
                newly_lost += MSS64;
            } else {
                j += 1;
            }
        }
        let was_in_recovery = self.in_recovery;
        let mut entering = false;
        if newly_lost > 0 && !self.in_recovery && p.seq >= self.recover_seq {
            self.in_recovery = true;
            entering = true;
            self.recover_seq = self.next_seq;
            cc.on_congestion_event(now, prior_in_flight + newly_lost, MSS);
        }
        let exiting =
            self.in_recovery && !entering && p.seq >= self.recover_seq && self.rtx_queue.is_empty();
        let interval = send_elapsed.max(ack_elapsed);
        let rate = (interval >= self.min_rtt && interval > Duration::ZERO).then_some(RateSample {
            delivered: self.delivered - p.delivered,
            interval,
            prior_delivered: p.delivered,
            is_app_limited: false,
            rtt,
        });
        cc.on_ack(&AckSample {
            now,
            bytes_acked: MSS64,
            cum_acked: MSS64,
            rtt: Some(rtt),
            srtt: self.srtt,
            min_rtt: self.min_rtt,
            bytes_in_flight: self.pipe,
            prior_in_flight,
            newly_lost,
            in_recovery: self.in_recovery || was_in_recovery,
            delivered: self.delivered,
            rate,
            mss: MSS,
            ..AckSample::default()
        });
        if exiting {
            self.in_recovery = false;
            cc.on_recovery_exit(now, MSS);
        }
    }
}

fn goodput_and_rtt(kind: CcKind, loss: f64, secs: u64) -> (f64, f64, f64) {
    let rate = 100_000_000;
    let rtt = Duration::from_millis(40);
    let bdp = (rate as f64 / 8.0 * rtt.as_secs_f64()) as u64;
    let mut cc = Cc::new(&CcParams {
        kind,
        mss: MSS,
        initial_cwnd_segments: 10,
        hystart: Hystart::PlusPlus,
        abc_limit_segments: Some(2),
        seed: 5,
    });
    let mut sim = Sim::new(rate, rtt, 2 * bdp, loss, 17);
    let from = Time::from_secs(5);
    let until = Time::from_secs(5 + secs);
    let bytes = sim.run(&mut cc, from, until);
    let goodput = bytes as f64 * 8.0 / secs as f64;
    // Payload rate of the link (the harness carries payload only).
    let frac = goodput / rate as f64;
    let mean_rtt = sim.rtt_sum / sim.rtt_n.max(1) as f64;
    (
        frac,
        mean_rtt / sim.min_rtt.as_secs_f64(),
        sim.rtx_count as f64,
    )
}

#[test]
fn test_bbr_clean_path_2bdp_buffer() {
    let (frac, rtt_ratio, _) = goodput_and_rtt(CcKind::Bbr, 0.0, 10);
    println!(
        "bbr clean: {:.1} % of link, mean RTT {:.2} × min",
        frac * 100.0,
        rtt_ratio
    );
    assert!(frac >= 0.90, "{frac}");
    assert!(rtt_ratio <= 1.3, "{rtt_ratio}");
}

#[test]
fn test_one_percent_loss_bbr_keeps_the_link_loss_based_do_not() {
    let mut res = Vec::new();
    for kind in [
        CcKind::Bbr,
        CcKind::Cubic,
        CcKind::NewReno,
        CcKind::HighSpeed,
    ] {
        let (frac, rtt_ratio, rtx) = goodput_and_rtt(kind, 0.01, 10);
        println!(
            "{:>9} 1% loss: {:.1} % of link, mean RTT {:.2} × min, {rtx} rtx",
            kind.name(),
            frac * 100.0,
            rtt_ratio
        );
        res.push((kind, frac));
    }
    assert!(res[0].1 >= 0.80, "bbr {}", res[0].1);
    assert!(res[1].1 < 0.30, "cubic {}", res[1].1);
    assert!(res[2].1 < 0.30, "newreno {}", res[2].1);
}
