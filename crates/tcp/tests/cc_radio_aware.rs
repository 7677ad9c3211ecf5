//! Seed 002's loose-coupled radio-aware controller: the window formula with exact values, the
//! controller state by state (before feedback, fresh, stale, losses), and the fallback.

use rantcp_core::{Duration, Time};
use rantcp_tcp::cc::radio_aware::{RadioAware, RadioAwareParams, RttPredictor, Variant};
use rantcp_tcp::cc::{AckSample, CcKind, CcParams, CongestionControl, Feedback};

const MSS: u32 = 1448;

fn ms(x: u64) -> Duration {
    Duration::from_millis(x)
}
fn at(x: u64) -> Time {
    Time::from_millis(x)
}

#[test]
fn formula_exact_values() {
    let f = RadioAware::formula;
    // R = 16 Mbit/s, RTT = 20 ms: R·RTT = 40 000 bytes.
    assert_eq!(f(Variant::Rate, 16e6, ms(20), 10_000, 30_000, MSS), 40_000);
    // + (Q_th − Q) = + 20 000.
    assert_eq!(
        f(Variant::RateQueue, 16e6, ms(20), 10_000, 30_000, MSS),
        60_000
    );
    // Q > Q_th subtracts: 40 000 − 20 000.
    assert_eq!(
        f(Variant::RateQueue, 16e6, ms(20), 50_000, 30_000, MSS),
        20_000
    );
    // Q far above Q_th: the floor of 2 segments.
    assert_eq!(
        f(Variant::RateQueue, 16e6, ms(20), 100_000, 30_000, MSS),
        2 * 1448
    );
    // A zero rate leaves only the queue term, or the floor.
    assert_eq!(
        f(Variant::RateQueue, 0.0, ms(20), 10_000, 30_000, MSS),
        20_000
    );
    assert_eq!(f(Variant::Rate, 0.0, ms(20), 10_000, 30_000, MSS), 2 * 1448);
    assert_eq!(
        f(Variant::RateQueue, 0.0, ms(20), 30_000, 30_000, MSS),
        2 * 1448
    );
    // Fractions of a byte are dropped: 1 Mbit/s × 1.5 ms = 187.5 bytes.
    assert_eq!(
        f(
            Variant::RateQueue,
            1e6,
            Duration::from_micros(1500),
            0,
            10_000,
            MSS
        ),
        10_187
    );
}

fn params(variant: Variant, rtt: RttPredictor) -> RadioAwareParams {
    RadioAwareParams {
        variant,
        q_th_bytes: 30_000,
        rtt,
        stale_after: ms(100),
        fallback: CcKind::NewReno,
    }
}
fn ctl(p: RadioAwareParams) -> RadioAware {
    RadioAware::new(
        &CcParams {
            kind: CcKind::RadioAware,
            mss: MSS,
            initial_cwnd_segments: 10,
            abc_limit_segments: Some(2),
            ..Default::default()
        },
        p,
    )
}
fn ack(now: Time, bytes: u64) -> AckSample {
    AckSample {
        now,
        bytes_acked: bytes,
        cum_acked: bytes,
        rtt: Some(ms(30)),
        srtt: ms(30),
        min_rtt: ms(20),
        mss: MSS,
        ..Default::default()
    }
}
fn fb(sampled: u64, rate: Option<f64>, q: Option<u64>) -> Feedback {
    Feedback {
        sampled_at: at(sampled),
        rate_bps: rate,
        queue_bytes: q,
    }
}

#[test]
fn before_feedback_the_loss_based_controller_runs() {
    let mut c = ctl(params(Variant::RateQueue, RttPredictor::MinRtt));
    assert!(!c.is_active());
    assert_eq!(c.cwnd(), 14_480, "NewReno's IW 10");
    assert_eq!(c.ssthresh(), u64::MAX);
    // Slow start, RFC 3465 L = 2.
    c.on_ack(&ack(at(10), 1448));
    assert_eq!(c.cwnd(), 15_928);
    c.on_ack(&ack(at(11), 5 * 1448));
    assert_eq!(c.cwnd(), 18_824);
}

#[test]
fn feedback_before_any_rtt_sample_waits_for_one() {
    let mut c = ctl(params(Variant::RateQueue, RttPredictor::MinRtt));
    c.on_feedback(at(5), &fb(4, Some(16e6), Some(10_000)));
    assert!(!c.is_active(), "no RTT to multiply the rate by");
    assert_eq!(c.cwnd(), 14_480);
    // The first ACK brings min RTT 20 ms: 40 000 + 20 000.
    c.on_ack(&ack(at(20), 1448));
    assert!(c.is_active());
    assert_eq!(c.cwnd(), 60_000);
    assert_eq!(c.ssthresh(), 60_000);
    assert!(c.controls_recovery_window());
}

#[test]
fn each_report_resets_the_window_and_the_queue_term_corrects_it() {
    let mut c = ctl(params(Variant::RateQueue, RttPredictor::MinRtt));
    c.on_ack(&ack(at(20), 1448));
    c.on_feedback(at(30), &fb(25, Some(16e6), Some(10_000)));
    assert_eq!(c.cwnd(), 60_000);
    // Q above Q_th.
    c.on_feedback(at(40), &fb(35, Some(16e6), Some(50_000)));
    assert_eq!(c.cwnd(), 20_000);
    // Zero rate: only Q_th − Q.
    c.on_feedback(at(50), &fb(45, Some(0.0), Some(5_000)));
    assert_eq!(c.cwnd(), 25_000);
    // The rate halves: 20 000 + 20 000.
    c.on_feedback(at(60), &fb(55, Some(8e6), Some(10_000)));
    assert_eq!(c.cwnd(), 40_000);
    // ACKs do not grow it.
    c.on_ack(&ack(at(61), 10 * 1448));
    assert_eq!(c.cwnd(), 40_000);
    // A report sampled before the newest is ignored; one without a rate too.
    c.on_feedback(at(62), &fb(50, Some(1e6), Some(0)));
    c.on_feedback(at(63), &fb(60, None, Some(0)));
    assert_eq!(c.cwnd(), 40_000);
    assert_eq!(c.reports, 4);
}

#[test]
fn the_rate_variant_ignores_the_queue_and_srtt_predictor_uses_srtt() {
    let mut c = ctl(params(Variant::Rate, RttPredictor::MinRtt));
    c.on_ack(&ack(at(20), 1448));
    c.on_feedback(at(30), &fb(25, Some(16e6), Some(90_000)));
    assert_eq!(c.cwnd(), 40_000);
    let mut c = ctl(params(Variant::RateQueue, RttPredictor::Srtt));
    c.on_ack(&ack(at(20), 1448));
    c.on_feedback(at(30), &fb(25, Some(16e6), Some(10_000)));
    // 16 Mbit/s × 30 ms = 60 000, + 20 000.
    assert_eq!(c.cwnd(), 80_000);
}

#[test]
fn losses_do_not_shrink_the_radio_window() {
    let mut c = ctl(params(Variant::RateQueue, RttPredictor::MinRtt));
    c.on_ack(&ack(at(20), 1448));
    c.on_feedback(at(30), &fb(25, Some(16e6), Some(10_000)));
    c.on_congestion_event(at(31), 60_000, MSS);
    assert_eq!(c.cwnd(), 60_000);
    c.on_recovery_exit(at(35), MSS);
    assert_eq!(c.cwnd(), 60_000);
}

/// An ACK in a timeout's recovery (the endpoint's Loss state after it).
fn loss_ack(now: Time, bytes: u64, in_loss: bool) -> AckSample {
    AckSample {
        in_loss,
        ..ack(now, bytes)
    }
}

/// Active with the 60 000-byte radio window (16 Mbit/s × 20 ms + 30 000 − 10 000).
fn active() -> RadioAware {
    let mut c = ctl(RadioAwareParams {
        stale_after: ms(10_000),
        ..params(Variant::RateQueue, RttPredictor::MinRtt)
    });
    c.on_ack(&ack(at(20), 1448));
    c.on_feedback(at(30), &fb(25, Some(16e6), Some(10_000)));
    assert_eq!(c.cwnd(), 60_000);
    c
}

#[test]
fn rto_with_fresh_feedback_uses_a_loss_window_then_the_radio_window() {
    let mut c = active();
    // RFC 5681 §3.1 / Linux tcp_enter_loss: one segment, although feedback is fresh.
    c.on_rto(at(300), 60_000, MSS, true);
    assert!(c.is_active() && c.in_loss());
    assert_eq!(c.cwnd(), MSS as u64);
    assert_eq!(c.ssthresh(), 60_000, "slow start up to the radio window");
    // Slow start per cumulative ACK, one SMSS at most (RFC 5681 eq. 2), although this
    // controller's stack counts up to 2 (RFC 3465 L = 2): a stretch ACK of 10 segments (a
    // retransmission that filled a hole) adds one.
    c.on_ack(&loss_ack(at(320), 1448, true));
    assert_eq!(c.cwnd(), 2 * 1448);
    c.on_ack(&loss_ack(at(340), 10 * 1448, true));
    assert_eq!(c.cwnd(), 3 * 1448);
    c.on_ack(&loss_ack(at(341), 500, true));
    c.on_ack(&loss_ack(at(342), 1448, true));
    assert_eq!(c.cwnd(), 4 * 1448 + 500);
    // No growth from an ACK that only SACKs, nor while the window does not limit the sender.
    c.on_ack(&AckSample {
        cum_acked: 0,
        ..loss_ack(at(343), 1448, true)
    });
    c.on_ack(&AckSample {
        rate_limited: true,
        ..loss_ack(at(344), 1448, true)
    });
    assert_eq!(c.cwnd(), 4 * 1448 + 500);
    // A new report moves the cap: 2 Mbit/s × 20 ms + 30 000 − 25 000 = 10 000.
    c.on_feedback(at(350), &fb(349, Some(2e6), Some(25_000)));
    assert_eq!(c.cwnd(), 4 * 1448 + 500);
    for k in 0..3 {
        c.on_ack(&loss_ack(at(360 + k), 1448, true));
    }
    assert_eq!(c.cwnd(), 10_000, "capped by the radio window");
    c.on_feedback(at(370), &fb(369, Some(16e6), Some(10_000)));
    assert_eq!(c.cwnd(), 10_000, "the loss window goes on from the cap");
    c.on_ack(&loss_ack(at(380), 1448, true));
    assert_eq!(c.cwnd(), 10_000 + 1448);
    // Everything outstanding at the timeout acknowledged: the radio window again.
    c.on_ack(&loss_ack(at(400), 1448, false));
    assert!(!c.in_loss());
    assert_eq!(c.cwnd(), 60_000);
    c.on_ack(&ack(at(401), 1448));
    assert_eq!(c.cwnd(), 60_000);
}

#[test]
fn repeated_rto_restarts_the_loss_window_and_an_undo_ends_it() {
    let mut c = active();
    c.on_rto(at(300), 60_000, MSS, true);
    c.on_ack(&loss_ack(at(320), 1448, true));
    c.on_ack(&loss_ack(at(321), 1448, true));
    assert_eq!(c.cwnd(), 3 * 1448);
    c.on_rto(at(700), 3 * 1448, MSS, false);
    assert_eq!(c.cwnd(), MSS as u64);
    // Found spurious and undone (Linux tcp_try_undo_loss): the radio window at once.
    c.on_undo(at(710), 60_000, 60_000);
    assert!(!c.in_loss());
    assert_eq!(c.cwnd(), 60_000);
}

#[test]
fn the_loss_window_survives_the_hand_over_either_way() {
    // Stale at the timeout: the fallback's RTO response (NewReno: one segment)…
    let mut c = ctl(params(Variant::RateQueue, RttPredictor::MinRtt));
    c.on_ack(&ack(at(20), 1448));
    c.on_rto(at(300), 14_480, MSS, true);
    assert!(!c.is_active());
    assert_eq!(c.cwnd(), MSS as u64);
    c.on_ack(&loss_ack(at(320), 1448, true));
    assert_eq!(c.cwnd(), 2 * 1448, "NewReno's slow start");
    // …and fresh feedback in the recovery goes on from the fallback's window, not 60 000.
    c.on_feedback(at(330), &fb(329, Some(16e6), Some(10_000)));
    assert!(c.is_active() && c.in_loss());
    assert_eq!(c.cwnd(), 2 * 1448);
    c.on_ack(&loss_ack(at(340), 2 * 1448, true));
    assert_eq!(c.cwnd(), 3 * 1448);
    // Feedback going stale in the recovery: the fallback starts from the loss window.
    c.on_packet_sent(at(431), 1448, 1448, false);
    assert!(!c.is_active());
    assert_eq!(c.cwnd(), 3 * 1448);
    c.on_ack(&loss_ack(at(440), 2 * 1448, false));
    assert_eq!(c.cwnd(), 5 * 1448, "NewReno from there (L = 2)");
}

#[test]
fn stale_feedback_falls_back_to_the_loss_based_controller_from_the_last_window() {
    let mut c = ctl(params(Variant::RateQueue, RttPredictor::MinRtt));
    c.on_ack(&ack(at(20), 1448));
    c.on_feedback(at(30), &fb(25, Some(16e6), Some(10_000)));
    assert!(c.is_active());
    // Exactly stale_after old: still fresh.
    c.on_ack(&ack(at(125), 1448));
    assert!(c.is_active());
    assert_eq!(c.cwnd(), 60_000);
    // One ms later it is stale: NewReno with IW = ceil(60 000 / 1448) = 42 segments.
    c.on_packet_sent(at(126), 1448, 30_000, false);
    assert!(!c.is_active());
    assert_eq!(c.fallbacks, 1);
    assert_eq!(c.cwnd(), 42 * 1448);
    assert!(!c.controls_recovery_window());
    // From here NewReno's rules: slow start (+2 MSS per ACK at most), then a loss halves.
    c.on_ack(&ack(at(130), 3 * 1448));
    assert_eq!(c.cwnd(), 44 * 1448);
    c.on_congestion_event(at(131), 40_000, MSS);
    assert_eq!(c.cwnd(), 20_000);
    assert_eq!(c.ssthresh(), 20_000);
    // Fresh feedback takes over again at once.
    c.on_feedback(at(140), &fb(139, Some(8e6), Some(30_000)));
    assert!(c.is_active());
    assert_eq!(c.cwnd(), 20_000, "8 Mbit/s × 20 ms + 0");
}

#[test]
fn feedback_older_than_stale_after_on_arrival_is_not_used() {
    let mut c = ctl(params(Variant::RateQueue, RttPredictor::MinRtt));
    c.on_ack(&ack(at(20), 1448));
    // Sampled 150 ms before it arrives (a feedback delay above stale_after).
    c.on_feedback(at(200), &fb(50, Some(16e6), Some(10_000)));
    assert!(!c.is_active());
    assert_eq!(c.fallbacks, 0);
    assert_eq!(c.cwnd(), 15_928, "NewReno's slow start after one ACK");
}
