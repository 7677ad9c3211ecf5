//! Restart after idle (RFC 5681 §4.1; Linux `tcp_cwnd_restart`) at the endpoint: a sender that
//! grew its window, then sent nothing for longer than the RTO, sends its next burst with the
//! restart window; within the RTO, or with `slow_start_after_idle` off, the old window stands.
//! Path: 10 ms one way, 100 Mbit/s, unlimited queue, no loss; MSS 1000.

mod common;
use common::*;
use rantcp_core::Duration;
use rantcp_tcp::cc::CcKind;
use rantcp_tcp::{CwndRules, TcpConfig};

const IW: u64 = 10 * MSS as u64;

/// Before the pause: cwnd, ssthresh, RTO; at the instant sending resumes: data segments sent,
/// cwnd, ssthresh; restarts counted.
struct Resumed {
    cwnd0: u64,
    ssthresh0: u64,
    rto0: Duration,
    first_flight: usize,
    cwnd1: u64,
    ssthresh1: u64,
    restarts: u64,
}

/// Grow the window with a 400 kB transfer, wait `idle_in_rtos` RTOs after its last data
/// segment, then queue 300 kB more.
fn resume(ccfg: TcpConfig, idle_in_rtos: f64) -> Resumed {
    let mut p = Pair::new(ccfg, cfg(true), dms(10), 100_000_000, Loss::None);
    p.server_reads = true;
    p.run_until(ms(50));
    p.c.send(400_000);
    p.run_until(ms(3000));
    assert_eq!(p.delivered_to_server_app, 400_000);
    let i0 = p.c.info();
    let last = p
        .log
        .iter()
        .filter(|(_, to_s, pk, _)| *to_s && pk.payload_len > 0)
        .map(|(t, ..)| *t)
        .max()
        .unwrap();
    let resume_at = last + Duration::from_secs_f64(i0.rto.as_secs_f64() * idle_in_rtos);
    p.run_until(resume_at);
    p.now = resume_at;
    let before = p.log.len();
    p.c.send(300_000);
    p.run_until(resume_at);
    let first_flight = p.log[before..]
        .iter()
        .filter(|(t, to_s, pk, _)| *t == resume_at && *to_s && pk.payload_len > 0)
        .count();
    let i1 = p.c.info();
    Resumed {
        cwnd0: i0.cwnd,
        ssthresh0: i0.ssthresh,
        rto0: i0.rto,
        first_flight,
        cwnd1: i1.cwnd,
        ssthresh1: i1.ssthresh,
        restarts: p.c.stats().idle_restarts,
    }
}

fn rfc() -> TcpConfig {
    cfg(true) // RFC rules, NewReno
}

#[test]
fn test_rfc_sender_restarts_from_iw_after_an_rto_of_idle() {
    let r = resume(rfc(), 1.5);
    assert!(r.cwnd0 > 4 * IW, "the transfer grew cwnd to {}", r.cwnd0);
    assert_eq!(r.ssthresh0, u64::MAX);
    assert_eq!(r.restarts, 1);
    assert_eq!(r.cwnd1, IW);
    assert_eq!(r.ssthresh1, u64::MAX, "RFC 5681 §4.1 leaves ssthresh alone");
    assert_eq!(r.first_flight, 10);
}

#[test]
fn test_no_restart_within_the_rto_or_when_switched_off() {
    let within = resume(rfc(), 0.5);
    assert_eq!(within.restarts, 0);
    assert_eq!(within.cwnd1, within.cwnd0);
    assert_eq!(
        within.first_flight as u64,
        (within.cwnd0 / MSS as u64).min(300),
        "the old window (or all 300 segments) goes at once"
    );
    let off = resume(
        TcpConfig {
            slow_start_after_idle: false,
            ..rfc()
        },
        1.5,
    );
    assert_eq!(off.restarts, 0);
    assert_eq!(off.cwnd1, off.cwnd0);
    assert_eq!(off.first_flight as u64, (off.cwnd0 / MSS as u64).min(300));
}

#[test]
fn test_linux_sender_halves_once_per_further_rto_and_raises_ssthresh() {
    let linux = TcpConfig {
        cwnd_rules: CwndRules::Linux,
        ..rfc()
    };
    // 2.5 RTOs idle: two halvings (delta − rto > 0 twice).
    let r = resume(linux.clone(), 2.5);
    assert!(r.cwnd0 / 4 > IW, "cwnd0 {}", r.cwnd0);
    assert_eq!(r.restarts, 1);
    assert_eq!(r.cwnd1, (r.cwnd0 >> 1) >> 1);
    assert_eq!(
        r.ssthresh1,
        u64::MAX,
        "max(∞, ¾ cwnd) stays infinite before any loss"
    );
    assert_eq!(r.first_flight as u64, r.cwnd1 / MSS as u64);
    // 20 RTOs idle: halvings stop at IW.
    let long = resume(linux, 20.0);
    assert_eq!(long.cwnd1, IW);
    assert!(long.rto0 >= dms(200));
}

#[test]
fn test_bbr_declines_the_restart() {
    let r = resume(
        TcpConfig {
            cc: CcKind::Bbr,
            ..rfc()
        },
        1.5,
    );
    assert_eq!(r.restarts, 0);
}
