//! `make bench` section for the radio: nanoseconds per UE-slot channel evaluation
//! (`RadioEnvironment::sinr_db`: large-scale cache check or recomputation, fast fading,
//! interference sum, CQI bookkeeping) in four settings, plus the cost of a decode draw.
//!
//! Wall-clock timing is the bench's business only; the model itself never reads a clock.

use rantcp_core::{Duration, Time};
use rantcp_ran::geometry::Vec3;
use rantcp_ran::mobility::{seed004_urban_route, Mobility};
use rantcp_ran::obstacles::seed004_obstacles;
use rantcp_ran::radio::{hex_layout, LosSource, RadioConfig, RadioEnvironment};
use std::hint::black_box;
use std::time::Instant;

/// Evaluate every UE in every slot for `slots` slots; returns ns per UE-slot.
fn per_ue_slot(env: &mut RadioEnvironment, slots: u64) -> f64 {
    let rntis: Vec<u16> = env.rntis().collect();
    let slot = env.carrier().slot;
    let t0 = Instant::now();
    let mut acc = 0.0;
    for k in 0..slots {
        let now = Time::ZERO + slot.saturating_mul(k + 1);
        for &r in &rntis {
            acc += env.sinr_db(r, now);
        }
    }
    black_box(acc);
    t0.elapsed().as_nanos() as f64 / (slots * rntis.len() as u64) as f64
}

/// Rows of (name, value, unit).
pub fn bench() -> Vec<(String, f64, &'static str)> {
    let mut out = Vec::new();

    // 1. mmWave single cell, 10 static UEs: cache hits, fading only.
    let mut env = RadioEnvironment::single_cell(
        RadioConfig::mmwave_28ghz(),
        Vec3::new(0.0, 0.0, 15.0),
        30.0,
        1,
    );
    for i in 0..10u16 {
        env.add_ue(
            i + 1,
            Mobility::fixed(Vec3::new(20.0 + 10.0 * i as f64, 5.0, 1.5)),
            1,
        );
    }
    out.push((
        "phy/mmwave_static_ue_slot".to_string(),
        per_ue_slot(&mut env, 20_000),
        "ns",
    ));

    // 2. mmWave seed-004 route (moving every slot, 2-D obstacle test each time).
    let mut cfg = RadioConfig::mmwave_28ghz();
    cfg.los = LosSource::Geometry2d(seed004_obstacles());
    let mut env = RadioEnvironment::single_cell(cfg, Vec3::new(0.0, 0.0, 15.0), 30.0, 2);
    for i in 0..10u16 {
        env.add_ue(i + 1, seed004_urban_route(Duration::from_secs(25)), 1);
    }
    // Start 1 s in, when the UEs walk.
    let rntis: Vec<u16> = env.rntis().collect();
    let slot = env.carrier().slot;
    let t0 = Instant::now();
    let slots = 20_000u64;
    let mut acc = 0.0;
    for k in 0..slots {
        let now = Time::from_secs(1) + slot.saturating_mul(k);
        for &r in &rntis {
            acc += env.sinr_db(r, now);
        }
    }
    black_box(acc);
    out.push((
        "phy/mmwave_moving_ue_slot".to_string(),
        t0.elapsed().as_nanos() as f64 / (slots * rntis.len() as u64) as f64,
        "ns",
    ));

    // 3. LTE 7 sites x 3 sectors, 30 static UEs (interference from 20 cells, cached).
    let mut env = RadioEnvironment::new(
        RadioConfig::lte_macro(),
        hex_layout(1, 500.0, 25.0, 46.0),
        3,
    );
    for i in 0..30u16 {
        let a = i as f64 * 0.7;
        env.add_ue(
            i + 1,
            Mobility::fixed(Vec3::new(150.0 * a.cos(), 150.0 * a.sin(), 1.5)),
            1,
        );
    }
    out.push((
        "phy/lte_7x3_static_ue_slot".to_string(),
        per_ue_slot(&mut env, 5_000),
        "ns",
    ));

    // 4. LTE 7x3, 30 UEs driving at 30 m/s (21 links recomputed every TTI).
    let mut env = RadioEnvironment::new(
        RadioConfig::lte_macro(),
        hex_layout(1, 500.0, 25.0, 46.0),
        4,
    );
    for i in 0..30u16 {
        let a = i as f64 * 0.7;
        let m = Mobility::route(Vec3::new(100.0 * a.cos(), 100.0 * a.sin(), 1.5))
            .walk_for(
                Vec3::new(a.sin(), -a.cos(), 0.0),
                30.0,
                Duration::from_secs(100),
            )
            .build();
        env.add_ue(i + 1, m, 1);
    }
    out.push((
        "phy/lte_7x3_moving_ue_slot".to_string(),
        per_ue_slot(&mut env, 5_000),
        "ns",
    ));

    // 5. Decode draw (BLER curve + chase combining + RNG), same slot (SINR cached).
    let mut env = RadioEnvironment::single_cell(
        RadioConfig::mmwave_28ghz(),
        Vec3::new(0.0, 0.0, 15.0),
        30.0,
        5,
    );
    env.add_ue(1, Mobility::fixed(Vec3::new(50.0, 0.0, 1.5)), 1);
    let n = 200_000u64;
    let t0 = Instant::now();
    let mut ok = 0u64;
    for k in 0..n {
        ok += env.decode(1, (k % 20) as u8, Time::ZERO, 20, 0, 1) as u64;
    }
    black_box(ok);
    out.push((
        "phy/decode".to_string(),
        t0.elapsed().as_nanos() as f64 / n as f64,
        "ns",
    ));
    out
}

/// Print the rows as `name value unit` lines.
pub fn print() {
    for (name, v, unit) in bench() {
        println!("{name:<32} {v:>10.1} {unit}");
    }
}
