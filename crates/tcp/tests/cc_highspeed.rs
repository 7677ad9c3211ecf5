//! HighSpeed TCP (RFC 3649) checked at controller level: a(w)/b(w) against the RFC's table, a
//! cwnd/ssthresh trace identical step by step to `cc::newreno::NewReno` at or below Low_Window, and
//! the response function w = 0.12/p^0.835 under periodic and random loss in a per-RTT fluid AIMD
//! model driven through the controller itself (one ACK per RTT acknowledging the whole window).

use rantcp_core::{Duration, Rng, Time};
use rantcp_tcp::cc::highspeed::{a_of_w, b_of_w, HighSpeed};
use rantcp_tcp::cc::newreno::NewReno;
use rantcp_tcp::cc::{AckSample, CcKind, CcParams, CongestionControl};

const MSS: u32 = 1000;

fn params() -> CcParams {
    CcParams {
        kind: CcKind::HighSpeed,
        mss: MSS,
        initial_cwnd_segments: 2,
        ..CcParams::default()
    }
}

fn ack(now: Time, bytes: u64) -> AckSample {
    AckSample {
        now,
        bytes_acked: bytes,
        cum_acked: bytes,
        rtt: Some(Duration::from_millis(100)),
        srtt: Duration::from_millis(100),
        min_rtt: Duration::from_millis(100),
        mss: MSS,
        ..AckSample::default()
    }
}

/// RFC 3649 Appendix B (the table Linux tcp_highspeed.c carries as `hstcp_aimd_vals`): the
/// window at which a(w) reaches each integer value, and b(w) there, rounded to 0.01.
const RFC3649_TABLE: [(f64, f64, f64); 12] = [
    (38.0, 1.0, 0.50),
    (118.0, 2.0, 0.44),
    (221.0, 3.0, 0.41),
    (347.0, 4.0, 0.38),
    (663.0, 6.0, 0.35),
    (1058.0, 8.0, 0.33),
    (2076.0, 12.0, 0.29),
    (5036.0, 20.0, 0.25),
    (10661.0, 30.0, 0.21),
    (21013.0, 42.0, 0.17),
    (40808.0, 56.0, 0.14),
    (89053.0, 72.0, 0.10),
];

#[test]
fn test_aimd_values_match_rfc3649_appendix_b() {
    for (w, a_rfc, b_rfc) in RFC3649_TABLE {
        let (a, b) = (a_of_w(w), b_of_w(w));
        assert!(
            (a - a_rfc).abs() <= 0.05 * a_rfc,
            "a({w}) = {a}, RFC {a_rfc}"
        );
        assert!((b - b_rfc).abs() <= 0.006, "b({w}) = {b}, RFC {b_rfc}");
    }
    // Exactly standard TCP at or below Low_Window.
    for w in [1.0, 10.0, 37.0, 38.0] {
        assert_eq!((a_of_w(w), b_of_w(w)), (1.0, 0.5));
    }
    // The response function at the end points (RFC 3649 §5).
    let resp = |p: f64| 0.12 / p.powf(0.835);
    assert!((resp(1e-3) - 38.0).abs() < 1.0);
    assert!((resp(1e-7) - 83_000.0).abs() / 83_000.0 < 0.02);
}

#[test]
fn test_highspeed_is_newreno_at_or_below_low_window() {
    let mut hs = HighSpeed::new(&params());
    let mut nr = NewReno::new(&CcParams {
        kind: CcKind::NewReno,
        ..params()
    });
    let mut rng = Rng::new(7, 3);
    let mut now = Time::ZERO;
    let mut steps = 0;
    let mut losses = 0;
    for _ in 0..20_000 {
        now += Duration::from_millis(1);
        // ACKs cover one or two segments (delayed ACKs), sometimes a partial segment.
        let bytes = match rng.below(4) {
            0 => 2 * MSS as u64,
            1 => 300,
            _ => MSS as u64,
        };
        hs.on_ack(&ack(now, bytes));
        nr.on_ack(&ack(now, bytes));
        steps += 1;
        // Force losses before the window leaves NewReno's region (38 segments).
        if hs.cwnd() >= 36 * MSS as u64 || rng.below(500) == 0 {
            let flight = hs.cwnd() - rng.below(3) * MSS as u64;
            if rng.below(10) == 0 {
                hs.on_rto(now, flight, MSS, true);
                nr.on_rto(now, flight, MSS, true);
                if rng.below(2) == 0 {
                    // The retransmission is lost again: no second reduction (RFC 5681 §3.1).
                    hs.on_rto(now, flight, MSS, false);
                    nr.on_rto(now, flight, MSS, false);
                }
            } else {
                hs.on_congestion_event(now, flight, MSS);
                nr.on_congestion_event(now, flight, MSS);
                // ACKs inside recovery do not change the window.
                let mut a = ack(now, MSS as u64);
                a.in_recovery = true;
                hs.on_ack(&a);
                nr.on_ack(&a);
                hs.on_recovery_exit(now, MSS);
                nr.on_recovery_exit(now, MSS);
            }
            losses += 1;
        }
        assert!(hs.cwnd() <= 38 * MSS as u64);
        assert_eq!(
            (hs.cwnd(), hs.ssthresh()),
            (nr.cwnd(), nr.ssthresh()),
            "step {steps}"
        );
    }
    assert!(losses > 50);
}

/// Per-RTT fluid AIMD through the controller: each RTT one ACK acknowledges the whole window
/// (so the controller adds exactly a(w) segments), and `w` packets are exposed to the loss
/// process; a loss applies the controller's decrease. Returns the time-average window.
fn mean_window(p: f64, periodic: bool, seed: u64) -> f64 {
    let mut hs = HighSpeed::new(&params());
    let mut rng = Rng::new(seed, 11);
    let mut now = Time::ZERO;
    let mut to_next_loss = if periodic {
        1.0 / p
    } else {
        rng.exponential(1.0 / p)
    };
    let (mut sum, mut n) = (0.0, 0u64);
    let rounds = 400_000;
    for r in 0..rounds {
        now += Duration::from_millis(100);
        let w = hs.cwnd() as f64 / MSS as f64;
        if r > rounds / 10 {
            sum += w;
            n += 1;
        }
        to_next_loss -= w;
        if to_next_loss <= 0.0 {
            hs.on_congestion_event(now, hs.cwnd(), MSS);
            hs.on_recovery_exit(now, MSS);
            to_next_loss += if periodic {
                1.0 / p
            } else {
                rng.exponential(1.0 / p)
            };
            if to_next_loss <= 0.0 {
                to_next_loss = if periodic {
                    1.0 / p
                } else {
                    rng.exponential(1.0 / p)
                };
            }
        } else {
            hs.on_ack(&ack(now, hs.cwnd()));
        }
    }
    sum / n as f64
}

#[test]
fn test_response_function_periodic_and_random_loss() {
    for p in [1e-5f64, 1e-4] {
        let expect = 0.12 / p.powf(0.835);
        for periodic in [true, false] {
            let w = mean_window(p, periodic, 42);
            let err = (w - expect) / expect;
            println!("p={p:e} periodic={periodic}: mean w = {w:.1}, 0.12/p^0.835 = {expect:.1} ({:+.1}%)", err * 100.0);
            assert!(
                err.abs() <= 0.30,
                "p={p} periodic={periodic}: {w} vs {expect}"
            );
        }
    }
}

/// Above Low_Window the decrease applies to the congestion window (RFC 3649 §4), so a timeout
/// with far more outstanding than cwnd (everything sent before an earlier RTO) does not leave
/// ssthresh above the window that saw the loss.
#[test]
fn test_decrease_above_low_window_is_from_cwnd() {
    let mut hs = HighSpeed::new(&params());
    let mut now = Time::ZERO;
    while hs.cwnd() < 200 * MSS as u64 {
        now += Duration::from_millis(1);
        hs.on_ack(&ack(now, MSS as u64));
    }
    let (cwnd, w) = (hs.cwnd(), (hs.cwnd() / MSS as u64) as f64);
    hs.on_rto(now, 10 * cwnd, MSS, true);
    let expect = (cwnd as f64 * (1.0 - b_of_w(w))) as u64;
    assert!(
        hs.ssthresh().abs_diff(expect) <= 1,
        "{} vs {expect}",
        hs.ssthresh()
    );
    assert_eq!(hs.cwnd(), MSS as u64);
}

#[test]
fn test_decrease_factor_floors_at_high_decrease_above_high_window() {
    // RFC 3649 §5 defines b(w) between Low_Window and High_Window; extrapolated past
    // High_Window = 83 000 segments it falls below High_Decrease = 0.1 and turns negative above
    // ~570 000 segments, so a loss would *raise* ssthresh. Linux tcp_highspeed.c's
    // `hstcp_aimd_vals` and ns-3's TcpHighSpeed table stop at b = 0.1: so does rantcp.
    for w in [83_000.0, 100_000.0, 570_000.0, 1e6, 3.3e6] {
        let b = b_of_w(w);
        assert!((0.099_999..=0.1001).contains(&b), "b({w}) = {b}");
    }
    // A congestion event at a window of 2.3 million segments (the 3 307 MB at MSS 1448)
    // reduces it by 10 %.
    let mut hs = HighSpeed::new(&params());
    let mut now = Time::ZERO;
    while hs.cwnd() < 2_300_000 * MSS as u64 {
        now += Duration::from_millis(1);
        hs.on_ack(&ack(now, 1 << 30));
    }
    let cwnd = hs.cwnd();
    hs.on_congestion_event(now, cwnd, MSS);
    let ratio = hs.ssthresh() as f64 / cwnd as f64;
    assert!((0.899..=0.901).contains(&ratio), "ssthresh/cwnd = {ratio}");
}
