//! UE mobility: fixed positions and piecewise-linear routes (constant-velocity legs and
//! pauses), the "waypoint" mobility of ns-3 and of TR 38.901 §7.6.3.2's UT trajectories.
//!
//! Time is integer nanoseconds ([`Time`]); leg boundaries are computed once when the route is
//! built, so `position(t)` is a pure function of `t`. [`seed004_urban_route`] builds the urban
//! walk/drive of seed 004 from the facts in design.md §8.

use crate::geometry::Vec3;
use rantcp_core::{Duration, Time};

#[derive(Clone, Debug)]
struct Leg {
    t0: Time,
    t1: Time,
    p0: Vec3,
    /// Velocity (m/s); zero for a pause.
    v: Vec3,
    speed_mps: f64,
    /// Path length travelled before this leg (m).
    s0: f64,
    /// Time spent moving before this leg (s).
    m0: f64,
}

/// A UE trajectory: fixed, or a sequence of constant-velocity legs and pauses starting at
/// `Time::ZERO`. After the last leg the UE stays where it stopped.
#[derive(Clone, Debug)]
pub struct Mobility {
    start: Vec3,
    legs: Vec<Leg>,
}

impl Mobility {
    /// A UE that never moves.
    pub fn fixed(p: Vec3) -> Self {
        Mobility {
            start: p,
            legs: Vec::new(),
        }
    }
    /// Start building a route at `p` (at t = 0).
    pub fn route(p: Vec3) -> RouteBuilder {
        RouteBuilder {
            start: p,
            pos: p,
            t: Time::ZERO,
            s: 0.0,
            moving_s: 0.0,
            legs: Vec::new(),
        }
    }
    fn leg_at(&self, t: Time) -> Option<&Leg> {
        if self.legs.is_empty() {
            return None;
        }
        let i = self.legs.partition_point(|l| l.t1 <= t);
        Some(&self.legs[i.min(self.legs.len() - 1)])
    }
    /// Position at `t` (m).
    pub fn position(&self, t: Time) -> Vec3 {
        match self.leg_at(t) {
            None => self.start,
            Some(l) => {
                let dt = t.as_nanos().clamp(l.t0.as_nanos(), l.t1.as_nanos()) - l.t0.as_nanos();
                l.p0 + l.v * (dt as f64 * 1e-9)
            }
        }
    }
    /// [`Self::position`] and [`Self::path_length_m`] at `t` with one leg lookup.
    #[inline]
    pub fn position_and_path_length(&self, t: Time) -> (Vec3, f64) {
        match self.leg_at(t) {
            None => (self.start, 0.0),
            Some(l) => {
                let dt = t.as_nanos().clamp(l.t0.as_nanos(), l.t1.as_nanos()) - l.t0.as_nanos();
                let s = dt as f64 * 1e-9;
                (l.p0 + l.v * s, l.s0 + l.speed_mps * s)
            }
        }
    }
    /// Speed at `t` (m/s): the speed of the leg under way, zero when paused or finished.
    pub fn speed_mps(&self, t: Time) -> f64 {
        match self.leg_at(t) {
            Some(l) if t >= l.t0 && t < l.t1 => l.speed_mps,
            _ => 0.0,
        }
    }
    /// Path length travelled from t = 0 to `t` (m); drives the fast-fading phase.
    pub fn path_length_m(&self, t: Time) -> f64 {
        match self.leg_at(t) {
            None => 0.0,
            Some(l) => {
                let dt = t.as_nanos().clamp(l.t0.as_nanos(), l.t1.as_nanos()) - l.t0.as_nanos();
                l.s0 + l.speed_mps * (dt as f64 * 1e-9)
            }
        }
    }
    /// Time spent stationary between t = 0 and `t` (s): pauses, and the time before/after the
    /// route. Moving scatterers keep the channel of a stationary UE varying.
    pub fn stationary_s(&self, t: Time) -> f64 {
        let total = t.as_secs_f64();
        match self.leg_at(t) {
            None => total,
            Some(l) => {
                let dt = t.as_nanos().clamp(l.t0.as_nanos(), l.t1.as_nanos()) - l.t0.as_nanos();
                let moving = l.m0
                    + if l.speed_mps > 0.0 {
                        dt as f64 * 1e-9
                    } else {
                        0.0
                    };
                (total - moving).max(0.0)
            }
        }
    }
    /// Time at which the last leg ends (`Time::ZERO` for a fixed UE).
    pub fn end_time(&self) -> Time {
        self.legs.last().map_or(Time::ZERO, |l| l.t1)
    }
    /// True if the UE never moves.
    pub fn is_fixed(&self) -> bool {
        self.legs.iter().all(|l| l.speed_mps == 0.0)
    }
}

/// Builder for a [`Mobility`] route; each call appends a leg starting where the previous ended.
#[derive(Clone, Debug)]
pub struct RouteBuilder {
    start: Vec3,
    pos: Vec3,
    t: Time,
    s: f64,
    moving_s: f64,
    legs: Vec<Leg>,
}

impl RouteBuilder {
    /// Stay put for `d`.
    pub fn pause(mut self, d: Duration) -> Self {
        let t1 = self.t + d;
        self.legs.push(Leg {
            t0: self.t,
            t1,
            p0: self.pos,
            v: Vec3::ZERO,
            speed_mps: 0.0,
            s0: self.s,
            m0: self.moving_s,
        });
        self.t = t1;
        self
    }
    /// Move along `direction` (normalised here) at `speed_mps` for `d`.
    pub fn walk_for(mut self, direction: Vec3, speed_mps: f64, d: Duration) -> Self {
        let n = direction.norm();
        assert!(
            n > 0.0 && speed_mps >= 0.0,
            "direction must be non-zero, speed non-negative"
        );
        let v = direction * (speed_mps / n);
        let t1 = self.t + d;
        self.legs.push(Leg {
            t0: self.t,
            t1,
            p0: self.pos,
            v,
            speed_mps,
            s0: self.s,
            m0: self.moving_s,
        });
        let secs = d.as_nanos() as f64 * 1e-9;
        self.pos = self.pos + v * secs;
        self.s += speed_mps * secs;
        if speed_mps > 0.0 {
            self.moving_s += secs;
        }
        self.t = t1;
        self
    }
    /// Move in a straight line to `target` at `speed_mps` (duration rounded to the nearest ns;
    /// the leg ends exactly at `target`).
    pub fn move_to(mut self, target: Vec3, speed_mps: f64) -> Self {
        assert!(speed_mps > 0.0, "speed must be positive");
        let dist = self.pos.distance(target);
        let d = Duration::from_secs_f64(dist / speed_mps);
        if d.as_nanos() == 0 {
            return self;
        }
        let v = (target - self.pos) * (1.0 / (d.as_nanos() as f64 * 1e-9));
        let t1 = self.t + d;
        self.legs.push(Leg {
            t0: self.t,
            t1,
            p0: self.pos,
            v,
            speed_mps: v.norm(),
            s0: self.s,
            m0: self.moving_s,
        });
        self.pos = target;
        self.s += dist;
        self.moving_s += d.as_nanos() as f64 * 1e-9;
        self.t = t1;
        self
    }
    /// Current end time of the route.
    pub fn now(&self) -> Time {
        self.t
    }
    pub fn build(self) -> Mobility {
        Mobility {
            start: self.start,
            legs: self.legs,
        }
    }
}

/// Walking speed of seed 004 (m/s).
pub const WALK_MPS: f64 = 1.5;
/// Driving speed of seed 004: 108 km/h = 30 m/s.
pub const DRIVE_MPS: f64 = 30.0;

/// Seed 004's urban route (design.md §8): start (52, −0.2, 1.5) m; 0–1 s static; 1–5.3 s walk
/// +y at 1.5 m/s; 5.3–9 s stop; 9–19 s walk +y; 19–26 s walk −x; 26–30 s stop; 30–35 s walk −x;
/// then drive −x at 30 m/s for `drive` (the authors' code: 25 s, ending ≈ 716 m from the gNB;
/// the paper's text: 15 s).
pub fn seed004_urban_route(drive: Duration) -> Mobility {
    let s = Duration::from_millis;
    let up = Vec3::new(0.0, 1.0, 0.0);
    let left = Vec3::new(-1.0, 0.0, 0.0);
    Mobility::route(Vec3::new(52.0, -0.2, 1.5))
        .pause(s(1000))
        .walk_for(up, WALK_MPS, s(4300))
        .pause(s(3700))
        .walk_for(up, WALK_MPS, s(10_000))
        .walk_for(left, WALK_MPS, s(7000))
        .pause(s(4000))
        .walk_for(left, WALK_MPS, s(5000))
        .walk_for(left, DRIVE_MPS, drive)
        .build()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: Vec3, b: Vec3) -> bool {
        a.distance(b) < 1e-9
    }

    #[test]
    fn fixed_never_moves() {
        let m = Mobility::fixed(Vec3::new(1.0, 2.0, 3.0));
        assert!(close(
            m.position(Time::from_secs(100)),
            Vec3::new(1.0, 2.0, 3.0)
        ));
        assert_eq!(m.speed_mps(Time::from_secs(1)), 0.0);
        assert!(m.is_fixed());
    }

    #[test]
    fn waypoints_with_pause() {
        let m = Mobility::route(Vec3::ZERO)
            .move_to(Vec3::new(3.0, 4.0, 0.0), 1.0) // 5 m in 5 s
            .pause(Duration::from_secs(2))
            .move_to(Vec3::new(3.0, 14.0, 0.0), 10.0) // 10 m in 1 s
            .build();
        assert!(close(
            m.position(Time::from_millis(2500)),
            Vec3::new(1.5, 2.0, 0.0)
        ));
        assert!(close(
            m.position(Time::from_secs(6)),
            Vec3::new(3.0, 4.0, 0.0)
        ));
        assert_eq!(m.speed_mps(Time::from_secs(6)), 0.0);
        assert!((m.speed_mps(Time::from_millis(7500)) - 10.0).abs() < 1e-9);
        assert!(close(
            m.position(Time::from_millis(7500)),
            Vec3::new(3.0, 9.0, 0.0)
        ));
        assert!(close(
            m.position(Time::from_secs(99)),
            Vec3::new(3.0, 14.0, 0.0)
        ));
        assert!((m.path_length_m(Time::from_secs(99)) - 15.0).abs() < 1e-9);
        // Moving 0–5 s and 7–8 s: stationary 2 s by t = 8 s, 93 s by t = 99 s.
        assert!((m.stationary_s(Time::from_secs(8)) - 2.0).abs() < 1e-9);
        assert!((m.stationary_s(Time::from_secs(99)) - 93.0).abs() < 1e-9);
        assert!((m.stationary_s(Time::from_millis(6500)) - 1.5).abs() < 1e-9);
        assert_eq!(
            Mobility::fixed(Vec3::ZERO).stationary_s(Time::from_secs(3)),
            3.0
        );
        assert_eq!(m.end_time(), Time::from_secs(8));
    }

    #[test]
    fn seed004_route_facts() {
        let m = seed004_urban_route(Duration::from_secs(25));
        let at = |ms| m.position(Time::from_millis(ms));
        assert!(close(at(0), Vec3::new(52.0, -0.2, 1.5)));
        assert!(close(at(1000), Vec3::new(52.0, -0.2, 1.5)));
        // 4.3 s at 1.5 m/s = 6.45 m of +y, then a 3.7 s stop.
        assert!(close(at(5300), Vec3::new(52.0, 6.25, 1.5)));
        assert!(close(at(9000), Vec3::new(52.0, 6.25, 1.5)));
        assert!(close(at(19_000), Vec3::new(52.0, 21.25, 1.5)));
        assert!(close(at(26_000), Vec3::new(41.5, 21.25, 1.5)));
        assert!(close(at(35_000), Vec3::new(34.0, 21.25, 1.5)));
        assert_eq!(m.speed_mps(Time::from_secs(40)), DRIVE_MPS);
        let end = at(60_000);
        assert!(close(end, Vec3::new(-716.0, 21.25, 1.5)));
        // "ends 716 m from the gNB" (horizontal distance ≈ 716.3 m).
        assert!((end.distance_2d(Vec3::ZERO) - 716.3).abs() < 0.1);
    }
}
