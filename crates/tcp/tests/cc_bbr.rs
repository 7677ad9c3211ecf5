//! BBR v1 checked at controller level: synthetic ACK sequences for the state machine's exact
//! rules (full-pipe detection, the 10-round max filter, recovery), and a small packet-level
//! harness — a paced bulk sender, one FIFO bottleneck of rate R, a fixed propagation delay, one
//! ACK per segment and delivery-rate sampling as in draft-cheng-iccrg-delivery-rate-estimation
//! §3 — for the mode sequence, the gain cycle and PROBE_RTT.

use rantcp_core::{Duration, Time};
use rantcp_tcp::cc::bbr::{Bbr, MaxFilter, Mode, HIGH_GAIN, PACING_GAIN_CYCLE};
use rantcp_tcp::cc::{AckSample, CcKind, CcParams, CongestionControl, RateSample};
use std::collections::VecDeque;

const MSS: u32 = 1448;
const MSS64: u64 = MSS as u64;

fn params(seed: u64) -> CcParams {
    CcParams {
        kind: CcKind::Bbr,
        mss: MSS,
        initial_cwnd_segments: 10,
        seed,
        ..CcParams::default()
    }
}

// ---------------------------------------------------------------------------------------------
// Packet-level harness.

#[derive(Clone, Copy)]
struct Pkt {
    sent: Time,
    ack_at: Time,
    delivered: u64,
    delivered_time: Time,
    first_sent_time: Time,
}

/// A bulk sender through a single bottleneck. `extra_rtt(now)` adds path delay (route change).
struct Path {
    rate_bps: u64,
    base_rtt: Duration,
    now: Time,
    link_free: Time,
    next_send: Time,
    inflight: VecDeque<Pkt>,
    delivered: u64,
    delivered_time: Time,
    first_sent_time: Time,
    srtt: Duration,
    min_rtt: Duration,
    extra_rtt: fn(Time) -> Duration,
    /// ACKs are released in batches at multiples of this (ACK aggregation), if non-zero.
    ack_batch: Duration,
}

#[derive(Default)]
struct Log {
    /// (time, mode) at every mode change.
    modes: Vec<(Time, Mode)>,
    /// PROBE_BW cycle indices in the order visited.
    cycle: Vec<usize>,
    /// (time, rtt) per ACK.
    rtts: Vec<(Time, Duration)>,
    /// (time, cwnd) per ACK.
    cwnds: Vec<(Time, u64)>,
    /// (time, delivered) per ACK.
    delivered: Vec<(Time, u64)>,
}

impl Path {
    fn new(rate_bps: u64, base_rtt: Duration) -> Self {
        Path {
            rate_bps,
            base_rtt,
            now: Time::ZERO,
            link_free: Time::ZERO,
            next_send: Time::ZERO,
            inflight: VecDeque::new(),
            delivered: 0,
            delivered_time: Time::ZERO,
            first_sent_time: Time::ZERO,
            srtt: Duration::ZERO,
            min_rtt: Duration::MAX,
            extra_rtt: |_| Duration::ZERO,
            ack_batch: Duration::ZERO,
        }
    }

    fn bytes_in_flight(&self) -> u64 {
        self.inflight.len() as u64 * MSS64
    }

    fn run(&mut self, cc: &mut Bbr, until: Time, log: &mut Log) {
        let mut last_mode = None;
        let mut last_cycle = None;
        while self.now < until {
            let next_ack = self.inflight.front().map(|p| p.ack_at).unwrap_or(Time::MAX);
            let can_send = self.bytes_in_flight() + MSS64 <= cc.cwnd();
            let next_send = if can_send {
                self.next_send.max(self.now)
            } else {
                Time::MAX
            };
            if next_ack <= next_send {
                self.now = next_ack;
                self.ack(cc, log);
            } else {
                self.now = next_send;
                self.send(cc);
            }
            if last_mode != Some(cc.mode()) {
                log.modes.push((self.now, cc.mode()));
                last_mode = Some(cc.mode());
            }
            if cc.mode() == Mode::ProbeBw && last_cycle != Some(cc.cycle_index()) {
                log.cycle.push(cc.cycle_index());
            }
            last_cycle = (cc.mode() == Mode::ProbeBw).then_some(cc.cycle_index());
        }
    }

    fn send(&mut self, cc: &mut Bbr) {
        let now = self.now;
        if self.inflight.is_empty() {
            self.first_sent_time = now;
            self.delivered_time = now;
        }
        let tx = Duration::transmission(MSS64, self.rate_bps);
        let depart = self.link_free.max(now) + tx;
        self.link_free = depart;
        let mut ack_at = depart + self.base_rtt + (self.extra_rtt)(now);
        if self.ack_batch > Duration::ZERO {
            ack_at = Time(ack_at.0.div_ceil(self.ack_batch.0) * self.ack_batch.0);
        }
        let ack_at = ack_at.max(self.inflight.back().map(|p| p.ack_at).unwrap_or(Time::ZERO));
        self.inflight.push_back(Pkt {
            sent: now,
            ack_at,
            delivered: self.delivered,
            delivered_time: self.delivered_time,
            first_sent_time: self.first_sent_time,
        });
        cc.on_packet_sent(now, MSS64, self.bytes_in_flight(), false);
        let rate = cc.pacing_rate_bps().expect("BBR always paces");
        self.next_send = now + Duration::from_secs_f64(MSS64 as f64 * 8.0 / rate);
    }

    fn ack(&mut self, cc: &mut Bbr, log: &mut Log) {
        let now = self.now;
        let prior_in_flight = self.bytes_in_flight();
        let p = self.inflight.pop_front().unwrap();
        self.delivered += MSS64;
        self.delivered_time = now;
        // draft-cheng-iccrg-delivery-rate-estimation §3.3.
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
        let interval = send_elapsed.max(ack_elapsed);
        let rs = RateSample {
            delivered: self.delivered - p.delivered,
            interval,
            prior_delivered: p.delivered,
            is_app_limited: false,
            rtt,
        };
        let a = AckSample {
            now,
            bytes_acked: MSS64,
            cum_acked: MSS64,
            rtt: Some(rtt),
            srtt: self.srtt,
            min_rtt: self.min_rtt,
            bytes_in_flight: self.bytes_in_flight(),
            prior_in_flight,
            newly_lost: 0,
            in_recovery: false,
            delivered: self.delivered,
            rate: (interval >= self.min_rtt).then_some(rs),
            mss: MSS,
            ..AckSample::default()
        };
        cc.on_ack(&a);
        log.rtts.push((now, rtt));
        log.cwnds.push((now, cc.cwnd()));
        log.delivered.push((now, self.delivered));
    }
}

fn delivered_at(log: &Log, t: Time) -> u64 {
    let i = log.delivered.partition_point(|(at, _)| *at <= t);
    if i == 0 {
        0
    } else {
        log.delivered[i - 1].1
    }
}

// ---------------------------------------------------------------------------------------------

#[test]
fn test_initial_pacing_rate_is_high_gain_times_initial_window_per_ms() {
    let cc = Bbr::new(&params(1));
    let expect = HIGH_GAIN * 10.0 * MSS64 as f64 * 8.0 / 1e-3 * 0.99;
    let got = cc.pacing_rate_bps().unwrap();
    assert!((got - expect).abs() / expect < 1e-9, "{got} vs {expect}");
    assert_eq!(cc.mode(), Mode::Startup);
    assert_eq!(cc.trace().bbr_mode, Some(0));
}

#[test]
fn test_max_filter_holds_the_max_for_10_rounds() {
    let mut f = MaxFilter::default();
    f.reset(0, 0.0);
    assert_eq!(f.update(10, 1, 100.0), 100.0);
    for r in 2..=11 {
        assert_eq!(f.update(10, r, 50.0 + r as f64), 100.0, "round {r}");
    }
    // Round 12: the round-1 sample is more than 10 rounds old.
    assert!(f.update(10, 12, 60.0) < 100.0);
    assert_eq!(f.get(), 61.0);
}

/// Synthetic ACKs where every ACK starts a new packet-timed round with bandwidth `bw(round)`.
fn round_ack(now: Time, delivered: &mut u64, bw_bytes_per_s: f64) -> AckSample {
    let prior = *delivered;
    *delivered += 10 * MSS64;
    let interval = Duration::from_millis(10);
    AckSample {
        now,
        bytes_acked: 10 * MSS64,
        cum_acked: 10 * MSS64,
        rtt: Some(Duration::from_millis(10)),
        srtt: Duration::from_millis(10),
        min_rtt: Duration::from_millis(10),
        bytes_in_flight: 1_000_000,
        prior_in_flight: 1_000_000,
        delivered: *delivered,
        rate: Some(RateSample {
            delivered: (bw_bytes_per_s * interval.as_secs_f64()) as u64,
            interval,
            prior_delivered: prior,
            is_app_limited: false,
            rtt: Duration::from_millis(10),
        }),
        mss: MSS,
        ..AckSample::default()
    }
}

/// Linux `bbr_check_full_bw_reached` returns early on an app-limited sample
/// (`rs->is_app_limited`), so rounds whose samples are app-limited never count toward the full
/// pipe: a sender held back by its application or its send buffer stays in STARTUP however flat
/// the bandwidth is (seed 004's BBR at PER ≤ 1e-8, README). ns-3's TcpBbr reads the same flag,
/// but ns-3 sets it only when a write leaves less than one MSS unsent *after* it is queued
/// (TcpSocketBase::Send → TcpRateLinux::CalculateAppLimited), never with MSS-sized writes;
/// Linux checks before queuing (tcp_sendmsg_locked → tcp_rate_check_app_limited).
#[test]
fn test_startup_ignores_app_limited_rounds_for_full_pipe() {
    let mut cc = Bbr::new(&params(1));
    let mut d = 0;
    let mut now = Time::ZERO;
    let bw = 1e7;
    let app_limited = |mut a: AckSample| {
        a.rate.as_mut().unwrap().is_app_limited = true;
        a
    };
    // One non-app-limited round sets full_bw; then 20 flat rounds, all app-limited.
    now += Duration::from_millis(10);
    cc.on_ack(&round_ack(now, &mut d, bw));
    for i in 0..20 {
        now += Duration::from_millis(10);
        cc.on_ack(&app_limited(round_ack(now, &mut d, bw)));
        assert_eq!(cc.mode(), Mode::Startup, "app-limited round {i}");
        assert!(!cc.full_bw_reached());
    }
    assert!((cc.pacing_gain() - HIGH_GAIN).abs() < 1e-12);
    // The same flat bandwidth without the flag: three rounds end STARTUP.
    for i in 1..=3 {
        now += Duration::from_millis(10);
        cc.on_ack(&round_ack(now, &mut d, bw));
        assert_eq!(cc.full_bw_reached(), i == 3, "round {i}");
    }
    assert_ne!(cc.mode(), Mode::Startup);
}

#[test]
fn test_btl_bw_is_max_over_10_rounds() {
    let mut cc = Bbr::new(&params(1));
    let mut d = 0;
    let mut now = Time::ZERO;
    // Keep growing ≥ 25 % per round so STARTUP does not end, then one peak, then lower.
    let mut bw = 1e5;
    for _ in 0..5 {
        now += Duration::from_millis(10);
        cc.on_ack(&round_ack(now, &mut d, bw));
        bw *= 1.5;
    }
    let peak = bw;
    now += Duration::from_millis(10);
    cc.on_ack(&round_ack(now, &mut d, peak));
    let peak_round = cc.round_count();
    let got = cc.btl_bw_bytes_per_s();
    assert!((got - peak).abs() / peak < 1e-3, "{got} {peak}");
    loop {
        now += Duration::from_millis(10);
        cc.on_ack(&round_ack(now, &mut d, peak * 0.8));
        let r = cc.round_count() - peak_round;
        let est = cc.btl_bw_bytes_per_s();
        if r <= 10 {
            assert!((est - peak).abs() / peak < 1e-3, "round +{r}: {est}");
        } else {
            assert!((est - 0.8 * peak).abs() / peak < 1e-3, "round +{r}: {est}");
            break;
        }
    }
    assert!((cc.trace().bbr_btl_bw_bps.unwrap() - 0.8 * peak * 8.0).abs() / peak < 1e-2);
}

#[test]
fn test_startup_exits_after_3_rounds_below_25_percent_growth() {
    let mut cc = Bbr::new(&params(1));
    let mut d = 0;
    let mut now = Time::ZERO;
    let mut bw = 1e5;
    // The first round sets full_bw; growth ≥ 25 % per round keeps STARTUP going, then 5 %
    // per round (< 25 % over full_bw for three rounds) is "no significant growth" → full pipe.
    for _ in 0..6 {
        now += Duration::from_millis(10);
        cc.on_ack(&round_ack(now, &mut d, bw));
        assert_eq!(cc.mode(), Mode::Startup);
        bw *= 1.3;
    }
    bw /= 1.3; // the last sample fed
    for i in 1..=3 {
        bw *= 1.05;
        now += Duration::from_millis(10);
        cc.on_ack(&round_ack(now, &mut d, bw));
        if i < 3 {
            assert_eq!(cc.mode(), Mode::Startup, "round {i}");
            assert!(!cc.full_bw_reached());
        }
    }
    assert!(cc.full_bw_reached());
    // In flight (1 MB) is above the BDP target, so the controller is draining.
    assert_eq!(cc.mode(), Mode::Drain);
    assert!((cc.pacing_gain() - 1.0 / HIGH_GAIN).abs() < 1e-12);
    assert!(cc.ssthresh() < u64::MAX);
}

#[test]
fn test_path_startup_drain_probe_bw_and_utilisation() {
    // 100 Mbit/s, 40 ms: the reference path (infinite buffer: BBR bounds its own queue).
    let mut cc = Bbr::new(&params(1));
    let mut path = Path::new(100_000_000, Duration::from_millis(40));
    let mut log = Log::default();
    path.run(&mut cc, Time::from_secs(8), &mut log);
    let seq: Vec<Mode> = log.modes.iter().map(|m| m.1).collect();
    assert_eq!(
        &seq[..3],
        &[Mode::Startup, Mode::Drain, Mode::ProbeBw],
        "{:?}",
        log.modes
    );
    let drain_at = log.modes[1].0;
    assert!(drain_at < Time::from_millis(800), "startup took {drain_at}");
    // Steady state from 2 s to 8 s: goodput and RTT.
    let (t0, t1) = (Time::from_secs(2), Time::from_secs(8));
    let bytes = delivered_at(&log, t1) - delivered_at(&log, t0);
    let goodput = bytes as f64 * 8.0 / (t1 - t0).as_secs_f64();
    let rtts: Vec<f64> = log
        .rtts
        .iter()
        .filter(|(t, _)| *t >= t0)
        .map(|(_, r)| r.as_secs_f64())
        .collect();
    let mean_rtt = rtts.iter().sum::<f64>() / rtts.len() as f64;
    let min_rtt = path.min_rtt.as_secs_f64();
    println!(
        "goodput {:.1} Mbit/s, mean RTT {:.2} ms, min {:.2} ms",
        goodput / 1e6,
        mean_rtt * 1e3,
        min_rtt * 1e3
    );
    assert!(goodput >= 0.90 * 100e6, "goodput {goodput}");
    assert!(
        mean_rtt <= 1.3 * min_rtt,
        "mean RTT {mean_rtt} vs min {min_rtt}"
    );
    let tr = cc.trace();
    assert_eq!(tr.bbr_mode, Some(2));
    let btl = tr.bbr_btl_bw_bps.unwrap();
    assert!((btl - 100e6).abs() / 100e6 < 0.02, "{btl}");
    assert!(tr.bbr_min_rtt.unwrap() >= Duration::from_millis(40));
}

#[test]
fn test_probe_bw_gain_cycle_order_and_random_start() {
    let mut firsts = Vec::new();
    for seed in 0..12 {
        let mut cc = Bbr::new(&params(seed));
        let mut path = Path::new(20_000_000, Duration::from_millis(20));
        let mut log = Log::default();
        path.run(&mut cc, Time::from_secs(4), &mut log);
        assert!(log.cycle.len() > 20, "{:?}", log.cycle);
        // Linux bbr_reset_probe_bw_mode: never starts in the 3/4 (drain) phase.
        assert_ne!(log.cycle[0], 1);
        firsts.push(log.cycle[0]);
        for w in log.cycle.windows(2) {
            assert_eq!(w[1], (w[0] + 1) % 8, "{:?}", log.cycle);
        }
    }
    firsts.sort();
    firsts.dedup();
    assert!(firsts.len() >= 3, "start phases {firsts:?}");
    assert_eq!(
        PACING_GAIN_CYCLE,
        [1.25, 0.75, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0]
    );
}

/// The path's RTT grows by 1 ms at 3 s (a route change), so the 40 ms min-RTT sample goes
/// stale: PROBE_RTT follows 10 s after the last sample at the old minimum, holds cwnd at
/// 4 segments for at least 200 ms and a round, then PROBE_BW resumes with the new min RTT.
#[test]
fn test_probe_rtt_when_min_rtt_is_10s_stale() {
    let mut cc = Bbr::new(&params(3));
    let mut path = Path::new(20_000_000, Duration::from_millis(40));
    path.extra_rtt = |t| {
        if t >= Time::from_secs(3) {
            Duration::from_millis(1)
        } else {
            Duration::ZERO
        }
    };
    let mut log = Log::default();
    path.run(&mut cc, Time::from_secs(15), &mut log);
    // The min-RTT filter is stamped when a strictly smaller sample arrives (Linux `<`): the
    // first time the old minimum was seen.
    let old_min = log
        .rtts
        .iter()
        .filter(|(t, _)| *t < Time::from_secs(3))
        .map(|(_, r)| *r)
        .min()
        .unwrap();
    let last_old_min = log
        .rtts
        .iter()
        .find(|(_, r)| *r == old_min)
        .map(|(t, _)| *t)
        .unwrap();
    let enter = log
        .modes
        .iter()
        .find(|m| m.1 == Mode::ProbeRtt)
        .expect("PROBE_RTT")
        .0;
    let exit = log
        .modes
        .iter()
        .find(|m| m.0 > enter && m.1 != Mode::ProbeRtt)
        .expect("exit")
        .0;
    println!("last old-min sample {last_old_min}, PROBE_RTT {enter} .. {exit}");
    let stale = enter.saturating_since(last_old_min);
    assert!(
        stale >= Duration::from_secs(10) && stale < Duration::from_millis(10_100),
        "{stale}"
    );
    assert!(
        exit - enter >= Duration::from_millis(200),
        "{}",
        exit - enter
    );
    assert!(
        exit - enter < Duration::from_millis(400),
        "{}",
        exit - enter
    );
    for (t, c) in &log.cwnds {
        if *t > enter && *t < exit {
            assert!(*c <= 4 * MSS64, "cwnd {c} at {t}");
        }
    }
    assert_eq!(
        log.modes.iter().find(|m| m.0 >= exit).unwrap().1,
        Mode::ProbeBw
    );
    assert!(cc.min_rtt().unwrap() >= Duration::from_millis(41));
}

/// Linux `bbr_update_ack_aggregation`: ACKs released in 10 ms batches make the extra-acked
/// estimate about one batch of data, and cwnd grows by it so the sender keeps sending through
/// the silences; the path stays fully used.
#[test]
fn test_ack_aggregation_adds_extra_acked_to_cwnd() {
    let run = |batch_ms: u64| {
        let mut cc = Bbr::new(&params(1));
        let mut path = Path::new(20_000_000, Duration::from_millis(40));
        path.ack_batch = Duration::from_millis(batch_ms);
        let mut log = Log::default();
        path.run(&mut cc, Time::from_secs(6), &mut log);
        let bytes = delivered_at(&log, Time::from_secs(6)) - delivered_at(&log, Time::from_secs(3));
        let max_cwnd = log
            .cwnds
            .iter()
            .filter(|(t, _)| *t > Time::from_secs(3))
            .map(|c| c.1)
            .max()
            .unwrap();
        (cc.extra_acked_bytes(), max_cwnd, bytes as f64 * 8.0 / 3.0)
    };
    let (extra0, cwnd0, _) = run(0);
    let (extra, cwnd, goodput) = run(10);
    let batch_bytes = 20e6 / 8.0 * 0.010;
    println!("no batching: extra {extra0} cwnd {cwnd0}; 10 ms batches: extra {extra} cwnd {cwnd}, {goodput:.0} bit/s");
    assert!(extra0 < 4 * MSS64, "{extra0}");
    assert!(
        (extra as f64) > 0.8 * batch_bytes && (extra as f64) < 2.2 * batch_bytes,
        "{extra} vs {batch_bytes}"
    );
    assert!(
        cwnd >= cwnd0 + (0.8 * batch_bytes) as u64,
        "{cwnd} vs {cwnd0}"
    );
    assert!(goodput > 0.95 * 20e6, "{goodput}");
}

/// The min-RTT filter takes the ACK's RTT (Karn's rule applied), not the rate sample's: a
/// retransmission acknowledged by the ACK for its original has a rate-sample RTT far below the
/// path's, which would collapse the BDP.
#[test]
fn test_min_rtt_ignores_rate_sample_rtt_without_karn_sample() {
    let mut cc = Bbr::new(&params(1));
    let mut path = Path::new(20_000_000, Duration::from_millis(20));
    let mut log = Log::default();
    path.run(&mut cc, Time::from_secs(2), &mut log);
    let before = cc.min_rtt().unwrap();
    let mut a = round_ack(path.now, &mut path.delivered.clone(), 2.5e6);
    a.rtt = None;
    a.rate.as_mut().unwrap().rtt = Duration::from_micros(300);
    cc.on_ack(&a);
    assert_eq!(cc.min_rtt().unwrap(), before);
}

#[test]
fn test_recovery_packet_conservation_then_restore() {
    let mut cc = Bbr::new(&params(1));
    let mut path = Path::new(20_000_000, Duration::from_millis(20));
    let mut log = Log::default();
    path.run(&mut cc, Time::from_secs(2), &mut log);
    let before = cc.cwnd();
    let now = path.now;
    cc.on_congestion_event(now, 40 * MSS64, MSS);
    let a = AckSample {
        now,
        bytes_acked: MSS64,
        cum_acked: MSS64,
        rtt: None,
        srtt: path.srtt,
        min_rtt: path.min_rtt,
        bytes_in_flight: 30 * MSS64,
        prior_in_flight: 40 * MSS64,
        newly_lost: 9 * MSS64,
        in_recovery: true,
        delivered: path.delivered + MSS64,
        rate: None,
        mss: MSS,
        ..AckSample::default()
    };
    cc.on_ack(&a);
    // Packet conservation: cwnd = in flight + newly ACKed.
    assert_eq!(cc.cwnd(), 31 * MSS64);
    cc.on_recovery_exit(now, MSS);
    assert_eq!(cc.cwnd(), before);
}

/// On a jitter-free path RTT samples keep *equalling* the minimum; Linux refreshes the min-RTT
/// filter only on strictly smaller samples (`rs->rtt_us < bbr->min_rtt_us`), so the filter goes
/// stale after 10 s and PROBE_RTT recurs about every 10 s even without queueing.
#[test]
fn test_probe_rtt_recurs_while_min_rtt_is_only_met() {
    let mut cc = Bbr::new(&params(1));
    let mut path = Path::new(20_000_000, Duration::from_millis(40));
    let mut log = Log::default();
    path.run(&mut cc, Time::from_secs(32), &mut log);
    let entries: Vec<Time> = log
        .modes
        .windows(2)
        .filter(|w| w[1].1 == Mode::ProbeRtt && w[0].1 != Mode::ProbeRtt)
        .map(|w| w[1].0)
        .collect();
    assert!(entries.len() >= 2, "{:?}", log.modes);
    for w in entries.windows(2) {
        let gap = w[1] - w[0];
        assert!(
            gap >= Duration::from_secs(10) && gap <= Duration::from_millis(10_500),
            "{entries:?}"
        );
    }
}
