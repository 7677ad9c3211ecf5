//! The read-only views of the channel see it at `now`, however long ago the scheduler last
//! evaluated the UE, and reading them never changes the run: the CQI report in hand
//! ([`RadioEnvironment::latest_cqi`], behind `RanView::ue_report`; the CSI reference resource,
//! TS 38.214 §5.2.2.5 / TS 36.213 §7.2.3: the UE measures whether or not it is scheduled) and
//! the SINR radio link monitoring samples ([`RadioEnvironment::sinr_db_observed`], TS 36.133
//! §7.6).

mod support;

use rantcp_core::{Duration, Rng, Time};
use rantcp_nf::NodeId;
use rantcp_ran::cell::rlm::RlmConfig;
use rantcp_ran::cell::{RanConfig, RanDevice};
use rantcp_ran::geometry::Vec3;
use rantcp_ran::mobility::Mobility;
use rantcp_ran::pathloss::PathlossModel;
use rantcp_ran::radio::{hex_layout, LosSource, RadioConfig, RadioEnvironment};
use support::*;

/// UE 1 driving at 15 m/s through the 7-site layout (UMa, probabilistic LOS, 6 dB/4 dB
/// shadowing on tracks of 37/50 m, Rayleigh fading, CQI every 5 ms reported 4 ms later).
fn drive(seed: u64) -> RadioEnvironment {
    let mut cfg = RadioConfig::lte_macro();
    cfg.pathloss = PathlossModel::Uma;
    cfg.los = LosSource::Probabilistic;
    let mut env = RadioEnvironment::new(cfg, hex_layout(1, 500.0, 25.0, 46.0), seed);
    env.add_ue(
        1,
        Mobility::route(Vec3::new(-150.0, 40.0, 1.5))
            .walk_for(Vec3::new(1.0, 0.2, 0.0), 15.0, Duration::from_secs(20))
            .build(),
        1,
    );
    env
}

/// `env` with UE 1 scheduled (evaluated) every 1 ms slot for its first 300 ms.
fn scheduled_300ms(seed: u64) -> RadioEnvironment {
    let mut env = drive(seed);
    for k in 0..300 {
        env.cqi_report(1, Time::from_millis(k));
    }
    env
}

/// (a) After an idle gap the report a read-only view hands out is the one the scheduler would
/// hold if it evaluated the UE at `now`: measured at the last grid point ≤ now − 4 ms, not
/// the last one taken before the gap (the old view's, which fails here).
#[test]
fn latest_cqi_after_an_idle_gap_is_the_report_in_hand_at_now() {
    let base = scheduled_300ms(5);
    let mut env = base.clone();
    let before = env.latest_cqi(1, Time::from_millis(300)).unwrap();
    let mut pick = Rng::new(17, 1);
    let mut t = Time::from_millis(300);
    let (mut n, mut changed) = (0, 0);
    while t < Time::from_millis(3_000) {
        t += Duration::from_micros(1 + pick.below(30_000));
        let seen = env.latest_cqi(1, t);
        // The scheduler evaluating the UE at `t` for the first time since 300 ms.
        let fresh = base.clone().cqi_report(1, t);
        assert_eq!(seen, fresh, "at {t:?}");
        let r = seen.unwrap();
        let held = (t.as_nanos() - 4_000_000) / 5_000_000 * 5_000_000;
        assert_eq!(r.measured_at, Time::from_nanos(held), "at {t:?}");
        // A second read at the same instant comes from the view's cache: the same.
        assert_eq!(env.latest_cqi(1, t), seen);
        n += 1;
        changed += (r.cqi != before.cqi) as u32;
    }
    assert!(n > 100, "{n} reads");
    assert!(
        changed > n / 4,
        "the channel moved: {changed} of {n} reports differ"
    );
    // Reading changed nothing the scheduler holds: its next evaluation is that of a run
    // without the reads.
    let end = Time::from_millis(3_100);
    assert_eq!(env.cqi_report(1, end), base.clone().cqi_report(1, end));
    assert_eq!(env.shadowing_replays(1), 0);
}

/// (b) The SINR radio link monitoring reads of a UE that moved without being scheduled is
/// the SINR an evaluation at that instant gives (large scale and fading there), bit for bit;
/// reads behind the latest one (the monitor catches up on 5 ms samples after the scheduler)
/// too. The old view (large scale of the last evaluation) fails.
#[test]
fn observed_sinr_of_an_unscheduled_moving_ue_is_the_sinr_at_now() {
    let base = scheduled_300ms(8);
    let env = base.clone();
    let mut pick = Rng::new(4, 1);
    let mut t = Time::from_millis(300);
    let mut los_seen = [false; 2];
    for _ in 0..400 {
        t += Duration::from_micros(1 + pick.below(20_000));
        // Now and then 10 ms behind the latest read.
        let at = if pick.bernoulli(0.3) {
            t - Duration::from_millis(10)
        } else {
            t
        };
        let seen = env.sinr_db_observed(1, at);
        let mut fresh = base.clone();
        assert_eq!(seen.to_bits(), fresh.sinr_db(1, at).to_bits(), "at {at:?}");
        los_seen[fresh.large_scale(1).los as usize] = true;
    }
    assert_eq!(los_seen, [true, true], "the drive crosses LOS and NLOS");
    assert_eq!(env.shadowing_replays(1), 0);
    // The state for logs is still that of the last evaluation (at 299 ms).
    assert_eq!(env.large_scale(1), base.large_scale(1));
}

/// A 10 MHz LTE cell (UMi street canyon, probabilistic LOS, shadowing on a 0.2/0.26 m grid,
/// Rayleigh fading): UE 1 drives away from the site at 30 m/s and back, UE 2 stays at 150 m.
/// Standard (non-ideal) BSR, radio link monitoring.
fn moving_device() -> RanDevice {
    let mut cfg = RadioConfig::lte_macro();
    cfg.pathloss = PathlossModel::UmiStreetCanyon;
    cfg.los = LosSource::Probabilistic;
    cfg.interference = false;
    let mut r = RadioEnvironment::single_cell(cfg, Vec3::new(0.0, 0.0, 25.0), 46.0, 3);
    r.add_ue(
        1,
        Mobility::route(Vec3::new(80.0, 0.0, 1.5))
            .walk_for(Vec3::new(1.0, 0.3, 0.0), 30.0, Duration::from_secs(2))
            .walk_for(Vec3::new(-1.0, -0.3, 0.0), 30.0, Duration::from_secs(2))
            .build(),
        1,
    );
    r.add_ue(2, Mobility::fixed(Vec3::new(0.0, 150.0, 1.5)), 1);
    let mut c = RanConfig::lte(r.carrier().slot);
    c.ideal_bsr = false;
    c.rlm = Some(RlmConfig::default());
    let mut dev = RanDevice::new(c, r, ENB);
    dev.add_ue(1, 1 as NodeId, ue_addr(1));
    dev.add_ue(2, 2 as NodeId, ue_addr(2));
    dev
}

/// (a) through the device: the RAN report of a UE that has had no traffic yet carries the
/// CQI the eNB holds at `now` (before: 0, no report ever having been taken).
#[test]
fn ue_report_of_an_idle_ue_carries_the_cqi_in_hand() {
    let mut d = Driver::new(moving_device());
    for k in 0..400u32 {
        d.send(ms(0.5 + 10.0 * k as f64), ENB, dl(2, 49152, 1 + 1400 * k));
    }
    let mut nonzero = 0;
    for k in 1..=300u64 {
        let t = ms(13.0 * k as f64);
        d.run_until(t);
        let r = d.dev.ue_report(1, t).unwrap();
        let fresh = d.dev.radio().clone().cqi_report(1, t);
        assert_eq!(
            (r.cqi, r.mcs),
            fresh.map_or((0, 0), |f| (f.cqi, f.mcs)),
            "at {t:?}"
        );
        nonzero += (r.cqi > 0) as u32;
        assert_eq!(r.achievable_rate_bps > 0.0, r.cqi > 0);
    }
    assert!(nonzero > 200, "{nonzero}");
    assert_eq!(
        d.dev.ue_counters(1).unwrap().dl_tb_new,
        0,
        "UE 1 never scheduled"
    );
}

/// The device's trace: every packet delivered (time, node, packet) and every UE's counters.
fn trace(d: &Driver) -> String {
    let c: Vec<_> = [1, 2].map(|r| d.dev.ue_counters(r).unwrap()).into();
    format!("{:?}\n{:?}", d.delivered, c)
}

/// (c) Reading the views at extra instants (every UE's RAN report, the observed SINR at,
/// behind and ahead of `now`) between the device's events leaves the run event for event
/// identical: the same packets delivered at the same times, the same counters (HARQ, RLC,
/// radio link monitoring), and no shadowing track replayed.
#[test]
fn reading_the_views_never_changes_the_run() {
    let run = |read: bool| {
        let mut d = Driver::new(moving_device());
        for k in 0..800u32 {
            d.send(ms(0.5 + 5.0 * k as f64), ENB, dl(1, 49152, 1 + 1400 * k));
            if k % 3 == 0 {
                d.send(ms(0.7 + 5.0 * k as f64), 2, ack(2, 49152, 1 + 1400 * k));
            }
        }
        let mut pick = Rng::new(9, 1);
        let mut reads = 0u32;
        for k in 1..=8_000u64 {
            let t = ms(0.5 * k as f64);
            d.run_until(t);
            if read && pick.bernoulli(0.5) {
                for r in [1, 2] {
                    let _ = d.dev.ue_report(r, t);
                    let radio = d.dev.radio();
                    let back = Duration::from_micros(pick.below(12_000));
                    let ahead = Duration::from_micros(pick.below(5_000));
                    let _ = radio.sinr_db_observed(r, t);
                    let _ = radio.sinr_db_observed(
                        r,
                        Time::from_nanos(t.as_nanos().saturating_sub(back.as_nanos())),
                    );
                    let _ = radio.sinr_db_observed(r, t + ahead);
                    let _ = radio.latest_cqi(r, t + ahead);
                    reads += 1;
                }
            }
        }
        assert_eq!(d.dev.radio().shadowing_replays(1), 0);
        (trace(&d), reads, d.dev.ue_counters(1).unwrap())
    };
    let (plain, _, c) = run(false);
    let (read, reads, _) = run(true);
    assert!(reads > 5_000, "{reads}");
    assert!(c.dl_tb_new >= 800, "{c:?}");
    assert_eq!(plain, read);
}
