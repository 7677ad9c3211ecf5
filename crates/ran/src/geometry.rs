//! Geometry for the channel model: 3-D points, axis-aligned boxes (buildings, trees) and the
//! segment–box test that decides line of sight, the approach of the ns-3 buildings module and
//! of TR 38.901 §7.6.2's "blockage by objects" when obstacles are given explicitly.
//!
//! Boxes are *closed* sets: a segment that touches a face, runs along an edge or grazes a
//! corner intersects the box (a ray that skims a wall is treated as blocked). Coordinates are
//! metres, z up.

use std::ops::{Add, Mul, Sub};

/// A point or vector in metres.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Vec3 {
    pub x: f64,
    pub y: f64,
    pub z: f64,
}

impl Vec3 {
    pub const ZERO: Vec3 = Vec3 {
        x: 0.0,
        y: 0.0,
        z: 0.0,
    };
    #[inline]
    pub const fn new(x: f64, y: f64, z: f64) -> Self {
        Vec3 { x, y, z }
    }
    #[inline]
    pub fn dot(self, o: Vec3) -> f64 {
        self.x * o.x + self.y * o.y + self.z * o.z
    }
    /// Euclidean length (m).
    #[inline]
    pub fn norm(self) -> f64 {
        self.dot(self).sqrt()
    }
    /// Length of the horizontal (x, y) projection (m).
    #[inline]
    pub fn norm_2d(self) -> f64 {
        (self.x * self.x + self.y * self.y).sqrt()
    }
    /// 3-D distance to `o` (m).
    #[inline]
    pub fn distance(self, o: Vec3) -> f64 {
        (self - o).norm()
    }
    /// Horizontal distance to `o` (m), TR 38.901's d_2D.
    #[inline]
    pub fn distance_2d(self, o: Vec3) -> f64 {
        (self - o).norm_2d()
    }
    #[inline]
    fn axis(self, i: usize) -> f64 {
        match i {
            0 => self.x,
            1 => self.y,
            _ => self.z,
        }
    }
}

impl Add for Vec3 {
    type Output = Vec3;
    #[inline]
    fn add(self, o: Vec3) -> Vec3 {
        Vec3::new(self.x + o.x, self.y + o.y, self.z + o.z)
    }
}
impl Sub for Vec3 {
    type Output = Vec3;
    #[inline]
    fn sub(self, o: Vec3) -> Vec3 {
        Vec3::new(self.x - o.x, self.y - o.y, self.z - o.z)
    }
}
impl Mul<f64> for Vec3 {
    type Output = Vec3;
    #[inline]
    fn mul(self, k: f64) -> Vec3 {
        Vec3::new(self.x * k, self.y * k, self.z * k)
    }
}

/// An axis-aligned box `[min, max]` (closed), e.g. a building of footprint
/// `[x0, x1] × [y0, y1]` and height `h` is `Aabb::new((x0, y0, 0), (x1, y1, h))`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Aabb {
    pub min: Vec3,
    pub max: Vec3,
}

impl Aabb {
    /// A box from two opposite corners (in any order).
    pub fn new(a: Vec3, b: Vec3) -> Self {
        Aabb {
            min: Vec3::new(a.x.min(b.x), a.y.min(b.y), a.z.min(b.z)),
            max: Vec3::new(a.x.max(b.x), a.y.max(b.y), a.z.max(b.z)),
        }
    }
    /// A box standing on the ground: footprint `[x0, x1] × [y0, y1]`, height `h` (m).
    pub fn building(x0: f64, x1: f64, y0: f64, y1: f64, h: f64) -> Self {
        Aabb::new(Vec3::new(x0, y0, 0.0), Vec3::new(x1, y1, h))
    }
    /// True if `p` lies inside or on the boundary.
    pub fn contains(&self, p: Vec3) -> bool {
        (0..3).all(|i| p.axis(i) >= self.min.axis(i) && p.axis(i) <= self.max.axis(i))
    }
    /// True if the closed segment `a`–`b` has at least one point in the closed box
    /// (slab method; segments parallel to a face are handled without division).
    pub fn intersects_segment(&self, a: Vec3, b: Vec3) -> bool {
        slab_test::<3>(
            [a.x, a.y, a.z],
            [b.x - a.x, b.y - a.y, b.z - a.z],
            [self.min.x, self.min.y, self.min.z],
            [self.max.x, self.max.y, self.max.z],
        )
    }
    /// The same test on the horizontal projection only (heights ignored): the "2-D box test"
    /// the ns-3 mmWave buildings-obstacle scenario of seed 004 uses.
    pub fn intersects_segment_2d(&self, a: Vec3, b: Vec3) -> bool {
        slab_test::<2>(
            [a.x, a.y],
            [b.x - a.x, b.y - a.y],
            [self.min.x, self.min.y],
            [self.max.x, self.max.y],
        )
    }
}

/// Closed-segment / closed-box slab test in N dimensions: the segment is `o + t·d`, t ∈ [0, 1].
fn slab_test<const N: usize>(o: [f64; N], d: [f64; N], lo: [f64; N], hi: [f64; N]) -> bool {
    let mut t0 = 0.0f64;
    let mut t1 = 1.0f64;
    for i in 0..N {
        if d[i] == 0.0 {
            // Parallel to this pair of faces: inside the slab for all t, or never.
            if o[i] < lo[i] || o[i] > hi[i] {
                return false;
            }
        } else {
            let inv = 1.0 / d[i];
            let (mut ta, mut tb) = ((lo[i] - o[i]) * inv, (hi[i] - o[i]) * inv);
            if ta > tb {
                std::mem::swap(&mut ta, &mut tb);
            }
            t0 = t0.max(ta);
            t1 = t1.min(tb);
            if t0 > t1 {
                return false;
            }
        }
    }
    true
}

/// Azimuth of `to` seen from `from`, degrees in (−180, 180], 0 = +x axis, counter-clockwise.
pub fn azimuth_deg(from: Vec3, to: Vec3) -> f64 {
    let d = to - from;
    d.y.atan2(d.x).to_degrees()
}

/// Elevation of `to` seen from `from`, degrees (positive = above the horizon).
pub fn elevation_deg(from: Vec3, to: Vec3) -> f64 {
    let d = to - from;
    d.z.atan2(d.norm_2d()).to_degrees()
}

/// Wrap an angle to (−180, 180] degrees.
pub fn wrap_deg(a: f64) -> f64 {
    let mut x = a % 360.0;
    if x > 180.0 {
        x -= 360.0;
    } else if x <= -180.0 {
        x += 360.0;
    }
    x
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unit() -> Aabb {
        Aabb::new(Vec3::new(0.0, 0.0, 0.0), Vec3::new(1.0, 1.0, 1.0))
    }

    #[test]
    fn segment_through_box_and_missing_it() {
        let b = unit();
        assert!(b.intersects_segment(Vec3::new(-1.0, 0.5, 0.5), Vec3::new(2.0, 0.5, 0.5)));
        assert!(!b.intersects_segment(Vec3::new(-1.0, 1.5, 0.5), Vec3::new(2.0, 1.5, 0.5)));
        // Stops short of the box.
        assert!(!b.intersects_segment(Vec3::new(-2.0, 0.5, 0.5), Vec3::new(-0.1, 0.5, 0.5)));
        // Passes over the top (height matters in 3-D, not in 2-D).
        let (a, c) = (Vec3::new(-1.0, 0.5, 2.0), Vec3::new(2.0, 0.5, 2.0));
        assert!(!b.intersects_segment(a, c));
        assert!(b.intersects_segment_2d(a, c));
    }

    #[test]
    fn segment_touching_an_edge() {
        let b = unit();
        // Runs exactly along the top edge y = 1, z = 1: closed box → blocked.
        assert!(b.intersects_segment(Vec3::new(-1.0, 1.0, 1.0), Vec3::new(2.0, 1.0, 1.0)));
        // Ends exactly on a face.
        assert!(b.intersects_segment(Vec3::new(-1.0, 0.5, 0.5), Vec3::new(0.0, 0.5, 0.5)));
        // A hair outside the edge.
        assert!(!b.intersects_segment(
            Vec3::new(-1.0, 1.0 + 1e-9, 1.0),
            Vec3::new(2.0, 1.0 + 1e-9, 1.0)
        ));
    }

    #[test]
    fn segment_parallel_to_a_face() {
        let b = unit();
        // Parallel to the x faces (dx = 0), outside the x slab: never hits.
        assert!(!b.intersects_segment(Vec3::new(1.5, -1.0, 0.5), Vec3::new(1.5, 2.0, 0.5)));
        // Parallel, inside the slab: hits.
        assert!(b.intersects_segment(Vec3::new(0.5, -1.0, 0.5), Vec3::new(0.5, 2.0, 0.5)));
        // Lying in the face plane x = 1.
        assert!(b.intersects_segment(Vec3::new(1.0, -1.0, 0.5), Vec3::new(1.0, 2.0, 0.5)));
        // Parallel to two axes at once (only z varies), beside the box.
        assert!(!b.intersects_segment(Vec3::new(2.0, 2.0, -1.0), Vec3::new(2.0, 2.0, 3.0)));
    }

    #[test]
    fn segment_with_endpoint_inside() {
        let b = unit();
        assert!(b.intersects_segment(Vec3::new(0.5, 0.5, 0.5), Vec3::new(5.0, 5.0, 5.0)));
        assert!(b.intersects_segment(Vec3::new(5.0, -3.0, 0.2), Vec3::new(0.5, 0.5, 0.5)));
        // Both endpoints inside (degenerate: zero-length segment inside).
        let p = Vec3::new(0.3, 0.3, 0.3);
        assert!(b.intersects_segment(p, p));
        assert!(!b.intersects_segment(Vec3::new(3.0, 3.0, 3.0), Vec3::new(3.0, 3.0, 3.0)));
    }

    #[test]
    fn segment_grazing_a_corner() {
        let b = unit();
        // Diagonal in the z = 0.5 plane through the vertical edge at (1, 0): x + y = 1 line
        // shifted so that it touches only the corner point (1, 0).
        assert!(b.intersects_segment(Vec3::new(2.0, 1.0, 0.5), Vec3::new(0.0, -1.0, 0.5)));
        // Through the 3-D vertex (1, 1, 1) only.
        assert!(b.intersects_segment(Vec3::new(2.0, 0.0, 1.0), Vec3::new(0.0, 2.0, 1.0)));
        // The same line moved 1e-6 m outward misses.
        assert!(!b.intersects_segment(
            Vec3::new(2.0, 0.0 + 1e-6, 1.0),
            Vec3::new(0.0 + 1e-6, 2.0, 1.0)
        ));
        // 2-D corner graze and 2-D near-miss.
        assert!(b.intersects_segment_2d(Vec3::new(2.0, 0.0, 9.0), Vec3::new(0.0, 2.0, 9.0)));
        assert!(!b.intersects_segment_2d(Vec3::new(2.0, 0.001, 9.0), Vec3::new(0.001, 2.0, 9.0)));
    }

    #[test]
    fn angles() {
        let o = Vec3::ZERO;
        assert!((azimuth_deg(o, Vec3::new(0.0, 1.0, 0.0)) - 90.0).abs() < 1e-12);
        assert!((elevation_deg(o, Vec3::new(1.0, 0.0, 1.0)) - 45.0).abs() < 1e-12);
        assert_eq!(wrap_deg(270.0), -90.0);
        assert_eq!(wrap_deg(-180.0), 180.0);
    }
}
