//! CUBIC (RFC 9438) and HyStart++ (RFC 9406) checked at controller level with an ACK-clock
//! harness: every round trip the window's worth of segments is acknowledged, one ACK per
//! segment, evenly spread over the RTT (a clean path whose RTT is set by the test).

use rantcp_core::{Duration, Time};
use rantcp_tcp::cc::cubic::{cbrt, Cubic, HystartExit, HystartPhase, BETA, C};
use rantcp_tcp::cc::{AckSample, CcKind, CcParams, CongestionControl, Hystart, RateSample};

const MSS: u32 = 1448;
const MSS64: u64 = MSS as u64;

fn params(hystart: bool) -> CcParams {
    params_with(if hystart {
        Hystart::PlusPlus
    } else {
        Hystart::Off
    })
}

fn params_with(hystart: Hystart) -> CcParams {
    CcParams {
        kind: CcKind::Cubic,
        mss: MSS,
        initial_cwnd_segments: 10,
        hystart,
        ..CcParams::default()
    }
}

struct Clock {
    now: Time,
    delivered: u64,
    /// Delivered count and ACK count of the previous round (when this round's data was sent).
    prev: (u64, u64),
}

impl Clock {
    fn new() -> Self {
        Clock {
            now: Time::ZERO,
            delivered: 0,
            prev: (0, 1),
        }
    }

    /// One round trip of `rtt`: acknowledge cwnd (at the round start) segment by segment, each
    /// ACK carrying the RTT sample `rtt_sample`. The sender is cwnd-limited: after each ACK,
    /// SND.NXT = SND.UNA + cwnd.
    fn round(&mut self, cc: &mut Cubic, rtt: Duration, rtt_sample: Duration) {
        let n = (cc.cwnd() / MSS64).max(1);
        let round_start_delivered = self.delivered;
        let step = Duration(rtt.0 / n);
        for i in 0..n {
            self.now += step;
            self.delivered += MSS64;
            // This segment was sent in the previous round, in response to ACK number
            // i·n_prev/n of it (ACK clocking), so C.delivered was then:
            let prior_delivered = self.prev.0 + (i * self.prev.1 / n + 1) * MSS64;
            let a = AckSample {
                now: self.now,
                bytes_acked: MSS64,
                cum_acked: MSS64,
                rtt: Some(rtt_sample),
                srtt: rtt_sample,
                min_rtt: Duration::ZERO,
                bytes_in_flight: cc.cwnd().saturating_sub(MSS64),
                prior_in_flight: cc.cwnd(),
                delivered: self.delivered,
                rate: Some(RateSample {
                    delivered: cc.cwnd(),
                    interval: rtt,
                    prior_delivered,
                    is_app_limited: false,
                    rtt: rtt_sample,
                }),
                mss: MSS,
                snd_una: self.delivered,
                snd_nxt: self.delivered + cc.cwnd(),
                ..AckSample::default()
            };
            cc.on_ack(&a);
        }
        self.prev = (round_start_delivered, n);
    }
}

fn segs(cc: &Cubic) -> f64 {
    cc.cwnd() as f64 / MSS64 as f64
}

/// Grow (slow start, no HyStart) to at least `w` segments.
fn grow_to(cc: &mut Cubic, clock: &mut Clock, w: f64, rtt: Duration) {
    while segs(cc) < w {
        clock.round(cc, rtt, rtt);
    }
}

fn force_loss(cc: &mut Cubic, clock: &Clock) {
    cc.on_congestion_event(clock.now, cc.cwnd(), MSS);
    cc.on_recovery_exit(clock.now, MSS);
}

#[test]
fn test_cbrt_is_exact_enough() {
    for x in [1e-6, 0.3, 1.0, 2.0, 27.0, 750.0, 1e6, 3.3e9] {
        let y = cbrt(x);
        assert!((y * y * y - x).abs() <= 1e-12 * x.max(1.0), "{x}: {y}");
    }
}

/// RFC 9438 §4.2: after one loss on a long clean path cwnd follows W(t) = C(t−K)³ + W_max
/// within ±5 % for 2K seconds (RTT 100 ms: the cubic term dominates W_est).
#[test]
fn test_cubic_follows_w_cubic_after_single_loss() {
    let rtt = Duration::from_millis(100);
    let mut cc = Cubic::new(&params(false));
    let mut clock = Clock::new();
    grow_to(&mut cc, &mut clock, 1000.0, rtt);
    let w_before = segs(&cc);
    force_loss(&mut cc, &clock);
    // §4.6: ssthresh = cwnd·β, cwnd = ssthresh; §4.7: W_max = cwnd at the loss (first loss).
    assert!((segs(&cc) - BETA * w_before).abs() < 1.0);
    assert_eq!(cc.ssthresh(), cc.cwnd());
    let w_max = cc.w_max_segments().unwrap();
    assert!((w_max - w_before).abs() < 1e-9);
    let k = cbrt(w_max * (1.0 - BETA) / C);
    let mut checked = 0;
    loop {
        clock.round(&mut cc, rtt, rtt);
        let epoch = cc.epoch_start().expect("congestion avoidance started");
        assert!(
            (cc.k_seconds() - k).abs() < 1e-9,
            "K = {} vs {k}",
            cc.k_seconds()
        );
        let t = clock.now.saturating_since(epoch).as_secs_f64();
        if t > 2.0 * k {
            break;
        }
        let w = C * (t - k).powi(3) + w_max;
        let err = (segs(&cc) - w) / w;
        assert!(
            err.abs() <= 0.05,
            "t={t:.2}s cwnd={:.1} W(t)={w:.1} ({:+.2}%)",
            segs(&cc),
            err * 100.0
        );
        checked += 1;
    }
    assert!(checked as f64 >= 2.0 * k / 0.1 - 2.0, "{checked}");
    let tr = cc.trace();
    assert_eq!(tr.cubic_k_s, Some(cc.k_seconds()));
    assert!((tr.cubic_w_max.unwrap() - w_max * MSS64 as f64).abs() < 1e-6);
}

/// RFC 9438 §4.3: at a short RTT with a small window the Reno-friendly W_est is above
/// W_cubic, and cwnd tracks it (α = 3(1−β)/(1+β) per RTT, then 1 once past cwnd_prior).
#[test]
fn test_reno_friendly_region_governs_at_short_rtt() {
    let rtt = Duration::from_millis(2);
    let mut cc = Cubic::new(&params(false));
    let mut clock = Clock::new();
    grow_to(&mut cc, &mut clock, 20.0, rtt);
    let w_prior = segs(&cc);
    force_loss(&mut cc, &clock);
    let w0 = segs(&cc);
    let mut reno_rounds = 0;
    for r in 0..200 {
        clock.round(&mut cc, rtt, rtt);
        let epoch = cc.epoch_start().unwrap();
        let t = clock.now.saturating_since(epoch).as_secs_f64();
        let w_est = cc.w_est_segments();
        if cc.w_cubic(t) < w_est {
            reno_rounds += 1;
            assert!(
                (segs(&cc) - w_est).abs() < 1.0,
                "round {r}: cwnd {} W_est {w_est}",
                segs(&cc)
            );
        }
    }
    assert!(reno_rounds >= 190, "{reno_rounds}");
    // Over 200 RTTs the Reno-friendly window gained about α·(rounds to cwnd_prior) + 1·(rest).
    let alpha = 3.0 * (1.0 - BETA) / (1.0 + BETA);
    let rounds_to_prior = (w_prior - w0) / alpha;
    let expect = w_prior + (200.0 - rounds_to_prior);
    assert!(
        (segs(&cc) - expect).abs() / expect < 0.1,
        "cwnd {} expect {expect}",
        segs(&cc)
    );
}

/// RFC 9438 §4.7: a loss below the previous W_max sets W_max = cwnd·(1+β)/2.
#[test]
fn test_fast_convergence() {
    let rtt = Duration::from_millis(100);
    let mut cc = Cubic::new(&params(false));
    let mut clock = Clock::new();
    grow_to(&mut cc, &mut clock, 1000.0, rtt);
    force_loss(&mut cc, &clock);
    let w_max1 = cc.w_max_segments().unwrap();
    for _ in 0..5 {
        clock.round(&mut cc, rtt, rtt);
    }
    let w = segs(&cc);
    assert!(w < w_max1);
    force_loss(&mut cc, &clock);
    let w_max2 = cc.w_max_segments().unwrap();
    assert!(
        (w_max2 - w * (1.0 + BETA) / 2.0).abs() < 1e-6,
        "{w_max2} vs {w}"
    );
    // A loss above W_max does not reduce it further.
    grow_to(&mut cc, &mut clock, w_max2 + 50.0, rtt);
    let w3 = segs(&cc);
    force_loss(&mut cc, &clock);
    assert!((cc.w_max_segments().unwrap() - w3).abs() < 1e-6);
}

/// RFC 9438 §4.8: timeout → cwnd 1 segment, ssthresh = β·cwnd; the next CA stage has K = 0.
#[test]
fn test_timeout_then_ca_with_k_zero() {
    let rtt = Duration::from_millis(50);
    let mut cc = Cubic::new(&params(false));
    let mut clock = Clock::new();
    grow_to(&mut cc, &mut clock, 100.0, rtt);
    let before = cc.cwnd();
    cc.on_rto(clock.now, before, MSS, true);
    assert_eq!(cc.cwnd(), MSS64);
    assert_eq!(cc.ssthresh(), (before as f64 * BETA) as u64);
    // The retransmission times out again: the endpoint says it is the same episode.
    cc.on_rto(clock.now, before, MSS, false);
    assert_eq!(cc.ssthresh(), (before as f64 * BETA) as u64);
    while cc.cwnd() < cc.ssthresh() {
        clock.round(&mut cc, rtt, rtt);
    }
    clock.round(&mut cc, rtt, rtt);
    assert_eq!(cc.k_seconds(), 0.0);
    assert!(cc.cwnd() > cc.ssthresh());
}

/// RFC 9406 §4.2: a delay increase of at least max(4 ms, min(16 ms, lastRoundMinRTT/8)) moves
/// slow start into CSS (growth ÷ 4), and after CSS_ROUNDS rounds into congestion avoidance with
/// ssthresh = cwnd.
#[test]
fn test_hystart_css_then_congestion_avoidance() {
    let base = Duration::from_millis(40);
    let mut cc = Cubic::new(&params(true));
    let mut clock = Clock::new();
    for _ in 0..4 {
        clock.round(&mut cc, base, base);
        assert_eq!(cc.hystart_phase(), HystartPhase::SlowStart);
    }
    // +3 ms: below the 5 ms threshold (40/8): stays in slow start.
    let w = cc.cwnd();
    clock.round(&mut cc, base, base + Duration::from_millis(3));
    assert_eq!(cc.hystart_phase(), HystartPhase::SlowStart);
    assert_eq!(cc.cwnd(), 2 * w);
    clock.round(&mut cc, base, base);
    assert_eq!(cc.hystart_phase(), HystartPhase::SlowStart);
    // +6 ms over the previous round's minimum: enter CSS during this round.
    clock.round(&mut cc, base, base + Duration::from_millis(6));
    assert!(
        matches!(cc.hystart_phase(), HystartPhase::Css { .. }),
        "{:?}",
        cc.hystart_phase()
    );
    let w = cc.cwnd();
    clock.round(&mut cc, base, base + Duration::from_millis(6));
    // CSS growth is a quarter of slow start's (+25 % per round).
    let growth = cc.cwnd() as f64 / w as f64;
    assert!((growth - 1.25).abs() < 0.02, "{growth}");
    for _ in 0..6 {
        clock.round(&mut cc, base, base + Duration::from_millis(6));
    }
    assert_eq!(cc.hystart_phase(), HystartPhase::Done);
    assert!(cc.ssthresh() < u64::MAX);
    assert!(cc.cwnd() >= cc.ssthresh());
    // In congestion avoidance after a loss-free exit: K = 0, W_max = cwnd at the start (§4.10).
    clock.round(&mut cc, base, base + Duration::from_millis(6));
    assert_eq!(cc.k_seconds(), 0.0);
}

/// RFC 9406 §4.2: if the RTT drops back below the CSS baseline, slow start resumes.
#[test]
fn test_hystart_css_spurious_exit_resumes_slow_start() {
    let base = Duration::from_millis(40);
    let mut cc = Cubic::new(&params(true));
    let mut clock = Clock::new();
    for _ in 0..3 {
        clock.round(&mut cc, base, base);
    }
    clock.round(&mut cc, base, base + Duration::from_millis(10));
    assert!(matches!(cc.hystart_phase(), HystartPhase::Css { .. }));
    clock.round(&mut cc, base, base);
    assert_eq!(cc.hystart_phase(), HystartPhase::SlowStart);
}

/// RFC 9438 §5.8 / Linux CA_EVENT_TX_START: an idle period (nothing in flight) is not counted in
/// t, so the window resumes where it stopped instead of jumping along W_cubic.
#[test]
fn test_idle_period_does_not_advance_the_epoch() {
    let rtt = Duration::from_millis(100);
    let mut cc = Cubic::new(&params(false));
    let mut clock = Clock::new();
    grow_to(&mut cc, &mut clock, 500.0, rtt);
    force_loss(&mut cc, &clock);
    for _ in 0..10 {
        clock.round(&mut cc, rtt, rtt);
    }
    let epoch = cc.epoch_start().unwrap();
    cc.on_packet_sent(clock.now, MSS64, MSS64 * 400, false);
    // 5 s idle, then a send with nothing else outstanding.
    clock.now += Duration::from_secs(5);
    cc.on_packet_sent(clock.now, MSS64, MSS64, true);
    assert_eq!(cc.epoch_start().unwrap(), epoch + Duration::from_secs(5));
    let w = segs(&cc);
    clock.round(&mut cc, rtt, rtt);
    assert!(segs(&cc) < w * 1.05, "{} after idle vs {w}", segs(&cc));
}

/// One ACK of one segment for Linux-HyStart tests: SND.UNA = `una` segments, SND.NXT =
/// SND.UNA + cwnd (a cwnd-limited sender), RTT sample `rtt`.
fn hs_ack(cc: &mut Cubic, now: Time, una: u64, rtt: Duration) {
    let a = AckSample {
        now,
        bytes_acked: MSS64,
        cum_acked: MSS64,
        rtt: Some(rtt),
        srtt: rtt,
        min_rtt: Duration::ZERO,
        mss: MSS,
        snd_una: una * MSS64,
        snd_nxt: una * MSS64 + cc.cwnd(),
        ..AckSample::default()
    };
    cc.on_ack(&a);
}

fn classic(iw: u32) -> Cubic {
    Cubic::new(&CcParams {
        initial_cwnd_segments: iw,
        ..params_with(Hystart::Classic)
    })
}

/// Linux HyStart, ACK train (tcp_cubic.c `hystart_update`): a round is SND.UNA passing the
/// SND.NXT of its first ACK; ACKs at most 2 ms apart are a train; once the train is longer than
/// delay_min / 2 (unpaced) slow start ends with ssthresh = cwnd.
#[test]
fn test_classic_hystart_ack_train_exit() {
    let mut cc = classic(20);
    let rtt = Duration::from_millis(40);
    let t = |ms: u64| Time::from_millis(ms);
    // Round 1: ACKs 1..=21 at 100..=120 ms (end_seq = 1 + 20 segments, passed by ACK 22). The
    // train lasts exactly 20 ms = delay_min / 2: not more, no exit.
    for k in 1..=21u64 {
        hs_ack(&mut cc, t(99 + k), k, rtt);
        assert_eq!(cc.ssthresh(), u64::MAX, "ACK {k}");
    }
    assert_eq!(cc.cwnd(), 41 * MSS64, "IW 20 + 21 slow-start increments");
    // Round 2 starts with ACK 22 at 121 ms; ACK 43 at 142 ms makes the train 21 ms long.
    for k in 22..=42u64 {
        hs_ack(&mut cc, t(99 + k), k, rtt);
        assert_eq!(cc.ssthresh(), u64::MAX, "ACK {k}");
    }
    hs_ack(&mut cc, t(142), 43, rtt);
    assert_eq!(cc.hystart_exit(), Some(HystartExit::AckTrain));
    assert_eq!((cc.cwnd(), cc.ssthresh()), (62 * MSS64, 62 * MSS64));
    // The next ACK is in congestion avoidance (W_max = cwnd, K = 0).
    hs_ack(&mut cc, t(143), 44, rtt);
    assert_eq!(cc.k_seconds(), 0.0);
}

/// Linux HyStart, delay: in each round the first 8 RTT samples are only collected; from the 9th
/// on, a round minimum above delay_min + clamp(delay_min / 8, 4 ms, 16 ms) ends slow start. ACKs
/// 3 ms apart never form a train. Nothing happens below 16 segments.
#[test]
fn test_classic_hystart_delay_exit_and_low_window() {
    let mut cc = classic(10);
    let t = |ms: u64| Time::from_millis(ms);
    let base = Duration::from_millis(40);
    // cwnd 10..15 segments: below hystart_low_window, even with a large delay.
    for k in 1..=6u64 {
        hs_ack(&mut cc, t(3 * k), k, Duration::from_millis(80));
    }
    assert_eq!((cc.cwnd(), cc.ssthresh()), (16 * MSS64, u64::MAX));
    // Round from ACK 7 (end_seq = 7 + 16 = 23 segments). delay_min is 40 ms from ACK 7 on: the
    // 80 ms samples above set CUBIC's min first, so start a fresh controller whose first samples
    // are 40 ms instead.
    let mut cc = classic(16);
    for k in 1..=17u64 {
        hs_ack(&mut cc, t(3 * k), k, base);
    }
    assert_eq!(cc.ssthresh(), u64::MAX);
    // ACK 18 passes end_seq (1 + 16 = 17): a new round. Its samples are 46 ms: threshold
    // 40 + max(4, 40/8) = 45 ms. Samples 1-8 (ACKs 18-25) are only collected; ACK 26 decides.
    for k in 18..=25u64 {
        hs_ack(&mut cc, t(3 * k), k, base + Duration::from_millis(6));
        assert_eq!(cc.ssthresh(), u64::MAX, "ACK {k}");
    }
    let before = cc.cwnd();
    hs_ack(&mut cc, t(78), 26, base + Duration::from_millis(6));
    assert_eq!(cc.hystart_exit(), Some(HystartExit::Delay));
    assert_eq!((cc.cwnd(), cc.ssthresh()), (before, before));
    assert_eq!(before, (16 + 25) * MSS64);
}

/// A delay increase of 5 ms (not above 40 + 5) does not end slow start; after an RTO HyStart
/// starts afresh (Linux cubictcp_state(TCP_CA_Loss) resets it).
#[test]
fn test_classic_hystart_threshold_and_reset_after_rto() {
    let mut cc = classic(16);
    let t = |ms: u64| Time::from_millis(ms);
    let base = Duration::from_millis(40);
    for k in 1..=17u64 {
        hs_ack(&mut cc, t(3 * k), k, base);
    }
    for k in 18..=40u64 {
        hs_ack(&mut cc, t(3 * k), k, base + Duration::from_millis(5));
    }
    assert_eq!(cc.ssthresh(), u64::MAX);
    assert_eq!(cc.hystart_exit(), None);
    cc.on_rto(t(200), cc.cwnd(), MSS, true);
    // Slow start again from 1 segment up to ssthresh = 0.7 · 40 segments; HyStart needs 16
    // segments, then fires on the 9th sample of a round with a 6 ms increase.
    let mut k = 41;
    let mut now = 300;
    while cc.cwnd() < 16 * MSS64 {
        hs_ack(&mut cc, t(now), k, base);
        k += 1;
        now += 3;
    }
    let mut exited_at = None;
    for _ in 0..40 {
        hs_ack(&mut cc, t(now), k, base + Duration::from_millis(6));
        k += 1;
        now += 3;
        if cc.hystart_exit() == Some(HystartExit::Delay) {
            exited_at = Some(cc.ssthresh() / MSS64);
            break;
        }
    }
    assert!(exited_at.is_some_and(|w| w < 28), "{exited_at:?}");
}

/// RFC 9438 §5.8: while the sender is rate-limited (not cwnd-limited) CUBIC does not grow cwnd,
/// and t excludes those periods: each rate-limited ACK shifts the epoch start by the time since
/// the previous ACK.
#[test]
fn test_rate_limited_acks_neither_grow_cwnd_nor_advance_t() {
    let rtt = Duration::from_millis(100);
    let mut cc = Cubic::new(&params(false));
    let mut clock = Clock::new();
    grow_to(&mut cc, &mut clock, 200.0, rtt);
    force_loss(&mut cc, &clock);
    clock.round(&mut cc, rtt, rtt);
    let (w, epoch) = (cc.cwnd(), cc.epoch_start().unwrap());
    for i in 1..=50u64 {
        let a = AckSample {
            now: clock.now + Duration::from_millis(10 * i),
            bytes_acked: MSS64,
            cum_acked: MSS64,
            rtt: Some(rtt),
            srtt: rtt,
            mss: MSS,
            rate_limited: true,
            ..AckSample::default()
        };
        cc.on_ack(&a);
    }
    assert_eq!(cc.cwnd(), w, "no growth while rate-limited");
    assert_eq!(
        cc.epoch_start().unwrap(),
        epoch + Duration::from_millis(500)
    );
}

/// Linux tcp_cubic.c `bictcp_update`: while no loss has set W_max (`last_max_cwnd == 0`: from
/// the start, after HyStart's exit, after a timeout) cwnd grows by at least one segment per 20
/// acknowledged (`ca->cnt` ≤ 20: 5 % per RTT), under the Linux cwnd rules. RFC 9438 alone grows
/// from K = 0 by C·t³ (and W_est), far slower at first at a long RTT. A loss ends the floor.
#[test]
fn test_linux_initial_growth_floor_until_the_first_loss() {
    let rtt = Duration::from_millis(500);
    let ratios = |cc: &mut Cubic, clock: &mut Clock, rounds: usize| -> Vec<f64> {
        (0..rounds)
            .map(|_| {
                let before = segs(cc);
                clock.round(cc, rtt, rtt);
                segs(cc) / before
            })
            .collect()
    };
    let mut first_round = Vec::new();
    for linux in [true, false] {
        let mut cc = Cubic::new(&CcParams {
            abc_limit_segments: if linux { None } else { Some(2) },
            ..params(false)
        });
        let mut clock = Clock::new();
        grow_to(&mut cc, &mut clock, 100.0, rtt);
        // A timeout: ssthresh = β·cwnd, W_max forgotten (Linux: last_max_cwnd = 0).
        cc.on_rto(clock.now, cc.cwnd(), MSS, true);
        while cc.cwnd() < cc.ssthresh() {
            clock.round(&mut cc, rtt, rtt);
        }
        let r = ratios(&mut cc, &mut clock, 8);
        first_round.push(r[1]);
        if linux {
            assert!(r[1..].iter().all(|&x| x >= 1.049), "{r:?}");
            // After a loss W_max is known: the plateau round near t = K grows by ~nothing.
            force_loss(&mut cc, &clock);
            let after = ratios(&mut cc, &mut clock, 20);
            assert!(after.iter().any(|&x| x < 1.02), "{after:?}");
        }
    }
    // RFC 9438 alone: the cubic term from K = 0 and α/RTT, far below 5 % in the first rounds.
    assert!(first_round[1] < 1.02, "{first_round:?}");
}
