//! Bursty applications (`FlowKind::Bursts`): 3GPP FTP model 1 (TR 36.814 Annex A.2.1.3.1,
//! Poisson arrivals), periodic bursts and a single burst, over one persistent TCP connection,
//! with each burst's latency (first byte sent → last byte delivered).
//!
//! ```text
//!  a --(link, 1 ms)-- b
//! ```

use rantcp_core::{Duration, Time};
use rantcp_net::{Arrivals, BurstRecord, Bursts, FlowKind, FlowSpec};
use rantcp_tcp::{State, TcpConfig};
use std::net::Ipv4Addr;

mod support;

fn run(seed: u64, b: Bursts, link_bps: u64, secs: u64) -> (Vec<BurstRecord>, u64, Option<State>) {
    let (mut sim, a, bn) = support::pair(
        seed,
        ("a", "b"),
        Ipv4Addr::new(10, 0, 1, 1),
        support::link(link_bps, 1),
    );
    let tcp = TcpConfig::default();
    let f = sim.add_flow(FlowSpec {
        name: "bursts".into(),
        kind: FlowKind::Bursts(b),
        src: a,
        dst: bn,
        src_port: 40000,
        dst_port: 5201,
        start: Time::ZERO,
        tcp_sender: tcp.clone(),
        tcp_receiver: tcp,
    });
    sim.run_until(Time::from_secs(secs)).expect("run");
    let r = sim.flow_result(f);
    (
        r.bursts.clone(),
        r.delivered_bytes,
        sim.flow_sender_state(f),
    )
}

#[test]
fn periodic_bursts_arrive_on_the_grid_and_each_is_timed() {
    let b = Bursts {
        size: 100_000,
        arrivals: Arrivals::Periodic {
            interval: Duration::from_secs(1),
        },
        count: None,
    };
    let (bursts, delivered, state) = run(1, b, 100_000_000, 5);
    // Arrivals at 0, 1, 2, 3, 4 s and one at 5 s (the run's end is inclusive).
    assert_eq!(bursts.len(), 6);
    for (k, r) in bursts.iter().enumerate() {
        assert_eq!(r.arrival, Time::from_secs(k as u64));
        assert_eq!(
            (r.start, r.end),
            (k as u64 * 100_000, (k as u64 + 1) * 100_000)
        );
    }
    // The first five are delivered; the burst at the end has not even been sent.
    assert_eq!(delivered, 500_000);
    assert!(bursts[5].delivered.is_none());
    for r in &bursts[..5] {
        let (sent, done) = (r.first_sent.unwrap(), r.delivered.unwrap());
        assert!(sent >= r.arrival);
        // At least the serialisation time of 100 kB at 100 Mbit/s plus one-way delay, and far
        // less than the interval (the connection is idle between bursts).
        let lat = r.latency().unwrap();
        assert!(lat >= Duration::from_millis(9), "{lat:?}");
        assert!(lat < Duration::from_millis(200), "{lat:?}");
        assert!(r.transfer_time().unwrap() >= lat);
        assert!(done > sent);
    }
    // The first burst waits for the handshake (one RTT = 2 ms + serialisation); later ones
    // go out at once on the open connection.
    assert!(bursts[0].first_sent.unwrap() >= Time::from_millis(2));
    assert_eq!(bursts[1].first_sent.unwrap(), bursts[1].arrival);
    assert_eq!(
        state,
        Some(State::Established),
        "unlimited bursts never close"
    );
}

#[test]
fn a_single_burst_is_sent_then_the_connection_closes() {
    let b = Bursts {
        size: 500_000,
        arrivals: Arrivals::Periodic {
            interval: Duration::from_secs(1),
        },
        count: Some(1),
    };
    let (bursts, delivered, state) = run(1, b, 20_000_000, 3);
    assert_eq!(bursts.len(), 1);
    assert_eq!(delivered, 500_000);
    let lat = bursts[0].latency().unwrap().as_secs_f64();
    // 500 kB at 20 Mbit/s is 0.2 s of serialisation; slow start adds some RTTs of 2 ms.
    assert!(lat > 0.2 && lat < 0.3, "{lat}");
    assert!(matches!(
        state,
        Some(State::FinWait1 | State::FinWait2 | State::TimeWait | State::Closed)
    ));
}

#[test]
fn ftp_model_1_arrivals_are_poisson_and_reproducible() {
    let b = Bursts {
        size: 10_000,
        arrivals: Arrivals::Poisson { rate_per_s: 2.0 },
        count: None,
    };
    let (x, _, _) = run(3, b, 100_000_000, 200);
    let (y, _, _) = run(3, b, 100_000_000, 200);
    assert_eq!(x, y, "same seed, same arrivals and times");
    let (z, _, _) = run(4, b, 100_000_000, 200);
    assert_ne!(x.len(), 0);
    assert_ne!(
        x.iter().map(|r| r.arrival).collect::<Vec<_>>(),
        z.iter().map(|r| r.arrival).collect::<Vec<_>>()
    );
    // 200 s at λ = 2/s: 1 + Poisson(400) arrivals (the first at t = 0); mean 400, sd 20,
    // so 320..480 holds with probability 1 − 6e-5.
    assert!((321..=481).contains(&x.len()), "{}", x.len());
    // Exponential inter-arrivals: the coefficient of variation is 1 (±0.15 for ~400 draws).
    let gaps: Vec<f64> = x
        .windows(2)
        .map(|w| w[1].arrival.saturating_since(w[0].arrival).as_secs_f64())
        .collect();
    let m = gaps.iter().sum::<f64>() / gaps.len() as f64;
    let sd = (gaps.iter().map(|g| (g - m).powi(2)).sum::<f64>() / gaps.len() as f64).sqrt();
    assert!((m - 0.5).abs() < 0.075, "mean gap {m}");
    assert!((sd / m - 1.0).abs() < 0.15, "cv {}", sd / m);
    // Every burst but possibly the last few was delivered, in order.
    let done = x.iter().filter(|r| r.delivered.is_some()).count();
    assert!(done + 3 >= x.len());
    assert!(x.windows(2).all(|w| w[0].end == w[1].start));
}
