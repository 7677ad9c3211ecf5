//! Large-scale random processes of a moving UE as functions of the distance it has travelled
//! ([`crate::mobility::Mobility::path_length_m`]): log-normal shadowing and the uniform draw of
//! the probabilistic LOS state, per (UE, site).
//!
//! Both live on a fixed grid of distance travelled and draw from their own stream, advanced
//! lazily and in order through every grid point crossed, so a value is a function of (run seed,
//! UE, site, distance) only: the same however often, and whenever, the channel is evaluated
//! (TR 38.901 §7.6.3.1, spatial consistency: the channel of a UT at a position does not depend
//! on the simulation's sampling of it). The last [`WINDOW`] shadowing grid values and the
//! previous LOS draw are kept, so going a little back (an observer reading the channel at an
//! instant before the scheduler's last evaluation of it, a CQI report measured `cqi_delay`
//! ago) costs nothing; going further back replays the stream from the start, so even that
//! gives the same values.
//!
//! * [`ShadowingTrack`]: Gudmundson's AR(1) in distance (TR 38.901 §7.4.4, Table 7.5-6 /
//!   Table 7.4.1-1 correlation distances), z_{k+1} = ρ z_k + √(1−ρ²) n_k on grid points
//!   k·Δ with Δ = d_corr / [`GRID_PER_CORR`], ρ = exp(−Δ/d_corr); between grid points the
//!   value is the linear interpolation renormalised to unit variance. So z has unit variance
//!   everywhere and autocorrelation exactly exp(−d/d_corr) between grid points; between
//!   arbitrary points the interpolation smooths it slightly (a process without the Markov
//!   kink at lag 0): within 0.010 of exp(−d/d_corr) at every lag, 0.004 at d = d_corr.
//! * [`LosDrawTrack`]: the uniform u_j compared with the LOS probability, redrawn at every
//!   LOS correlation distance travelled (u_j for distances in [j·d_LOS, (j+1)·d_LOS)).
use rantcp_core::Rng;

/// Grid points per shadowing correlation distance: ρ = exp(−1/50) = 0.980 between points.
/// The interpolated process's autocorrelation deviates from exp(−d/d_corr) by at most about
/// 1/(2·50) (0.0099 at a lag of one step, 0.0039 at d_corr; 10 points per d_corr would give
/// 0.048 and 0.019), and a vehicle at 30 m/s with d_corr = 10 m still draws only one normal
/// every 6.7 ms, not one per 125 µs slot.
pub const GRID_PER_CORR: f64 = 50.0;

/// A stream that can be rewound: the run seed and entity id it was made from.
#[derive(Clone, Debug)]
struct Stream {
    seed: u64,
    entity: u64,
    rng: Option<Rng>,
}

impl Stream {
    fn new(seed: u64, entity: u64) -> Self {
        Stream {
            seed,
            entity,
            rng: None,
        }
    }
    /// Created at the first draw: a UE that never moves never builds it.
    fn get(&mut self) -> &mut Rng {
        let (seed, entity) = (self.seed, self.entity);
        self.rng.get_or_insert_with(|| Rng::new(seed, entity))
    }
    fn rewind(&mut self) {
        self.rng = None;
    }
}

/// Shadowing grid values a track keeps (the last ones drawn): 16 steps = 0.32·d_corr, e.g.
/// 3.2 m of UMi LOS shadowing (d_corr 10 m), 0.3 s of driving at 10 m/s; read back further,
/// the track replays its stream from the start.
pub const WINDOW: usize = 16;

/// Unit-variance shadowing of one (UE, site, LOS state) on a grid of distance travelled
/// (module docs). Scale by σ_SF at use.
#[derive(Clone, Debug)]
pub struct ShadowingTrack {
    step_m: f64,
    rho: f64,
    innov: f64,
    z0: f64,
    stream: Stream,
    /// The highest grid index drawn, k, and z_j for j in (k − WINDOW, k] at `zs[j % WINDOW]`.
    k: u64,
    zs: [f64; WINDOW],
    /// z_{k+1} once drawn (an evaluation between grid points k and k + 1 needs it).
    zk1: Option<f64>,
    replays: u64,
}

impl ShadowingTrack {
    /// A track starting at z_0 = `z0` (a standard normal drawn by the caller), decorrelating
    /// over `corr_m`, with innovations from stream `entity` of run `seed`.
    pub fn new(z0: f64, corr_m: f64, seed: u64, entity: u64) -> Self {
        let step_m = corr_m / GRID_PER_CORR;
        let rho = (-1.0 / GRID_PER_CORR).exp();
        let mut zs = [0.0; WINDOW];
        zs[0] = z0;
        ShadowingTrack {
            step_m,
            rho,
            innov: (1.0 - rho * rho).sqrt(),
            z0,
            stream: Stream::new(seed, entity),
            k: 0,
            zs,
            zk1: None,
            replays: 0,
        }
    }

    /// Grid spacing Δ (m).
    pub fn step_m(&self) -> f64 {
        self.step_m
    }

    /// How many times the track went back beyond its window and replayed its stream.
    pub fn replays(&self) -> u64 {
        self.replays
    }

    #[inline]
    fn z(&self, j: u64) -> f64 {
        self.zs[(j % WINDOW as u64) as usize]
    }

    /// z_{k+1}, drawn at the first call.
    fn next_z(&mut self) -> f64 {
        let (rho, innov, zk) = (self.rho, self.innov, self.z(self.k));
        *self.zk1.get_or_insert_with(|| {
            let n = self.stream.get().normal();
            rho * zk + innov * n
        })
    }

    /// The unit-variance shadowing value after `s_m` metres travelled.
    pub fn at(&mut self, s_m: f64) -> f64 {
        let x = (s_m / self.step_m).max(0.0);
        let k = x.floor() as u64;
        let f = x - k as f64;
        if k + (WINDOW as u64) <= self.k {
            self.stream.rewind();
            self.k = 0;
            self.zs[0] = self.z0;
            self.zk1 = None;
            self.replays += 1;
        }
        while self.k < k {
            let z = self.next_z();
            self.k += 1;
            self.zs[(self.k % WINDOW as u64) as usize] = z;
            self.zk1 = None;
        }
        let zk = self.z(k);
        if f == 0.0 {
            return zk;
        }
        let z1 = if k < self.k {
            self.z(k + 1)
        } else {
            self.next_z()
        };
        let a = 1.0 - f;
        // Var(a·z_k + f·z_{k+1}) = a² + f² + 2·a·f·ρ: renormalise to unit variance.
        (a * zk + f * z1) / (a * a + f * f + 2.0 * a * f * self.rho).sqrt()
    }
}

/// The uniform draw of the probabilistic LOS state of one (UE, site): u_0 given (drawn by the
/// caller), u_j for j ≥ 1 from its own stream, u_j in force for distances travelled in
/// [j·d, (j+1)·d). Keeps u_j and u_{j−1}.
#[derive(Clone, Debug)]
pub struct LosDrawTrack {
    corr_m: f64,
    u0: f64,
    stream: Stream,
    j: u64,
    uj: f64,
    /// u_{j−1} (for j ≥ 1).
    prev: f64,
}

impl LosDrawTrack {
    pub fn new(u0: f64, corr_m: f64, seed: u64, entity: u64) -> Self {
        LosDrawTrack {
            corr_m,
            u0,
            stream: Stream::new(seed, entity),
            j: 0,
            uj: u0,
            prev: u0,
        }
    }

    /// The uniform in force after `s_m` metres travelled.
    pub fn at(&mut self, s_m: f64) -> f64 {
        let j = (s_m / self.corr_m).max(0.0).floor() as u64;
        if j + 1 == self.j {
            return self.prev;
        }
        if j < self.j {
            self.stream.rewind();
            self.j = 0;
            self.uj = self.u0;
        }
        while self.j < j {
            self.prev = self.uj;
            self.uj = self.stream.get().uniform();
            self.j += 1;
        }
        self.uj
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Variance and autocorrelation of the shadowing process over many independent tracks.
    /// Tolerances fixed from the sample size before looking: n = 4000 tracks, each sampled at
    /// s = 0.63·d_corr … 3.63·d_corr; the mean square of n unit normals has standard error
    /// √(2/n) = 0.022, the sample (Pearson) correlation at ρ has standard error
    /// (1 − ρ²)/√n ≤ 0.016; both asserted within 4 standard errors (the correlation also
    /// within the interpolation's 0.010).
    #[test]
    fn shadowing_track_keeps_variance_and_exponential_autocorrelation() {
        let corr = 13.0;
        let n = 4000;
        let mut seed_rng = Rng::new(42, 1);
        // Lags in units of d_corr, off-grid ones included (0.55·d = 5.5 steps).
        let lags = [0.0, 0.037, 0.55, 1.0, 2.0, 3.0];
        let start = 0.63 * corr; // between grid points
        let mut samples = vec![Vec::with_capacity(n); lags.len()];
        for t in 0..n {
            let z0 = seed_rng.normal();
            let mut tr = ShadowingTrack::new(z0, corr, 7, 1000 + t as u64);
            // Walk to the start first, then sample the lags in increasing distance.
            for (k, l) in lags.iter().enumerate() {
                samples[k].push(tr.at(start + l * corr));
            }
        }
        let se_var = (2.0 / n as f64).sqrt();
        for (k, l) in lags.iter().enumerate() {
            let v = samples[k].iter().map(|z| z * z).sum::<f64>() / n as f64;
            assert!(
                (v - 1.0).abs() < 4.0 * se_var,
                "variance {v} at lag {l}·d_corr"
            );
            // Pearson correlation: standard error ≈ (1 − ρ²)/√n.
            let dot = |a: &[f64], b: &[f64]| a.iter().zip(b).map(|(x, y)| x * y).sum::<f64>();
            let (a, b) = (&samples[0], &samples[k]);
            let r = dot(a, b) / (dot(a, a) * dot(b, b)).sqrt();
            let rho = (-l).exp();
            let se = (1.0 - rho * rho) / (n as f64).sqrt();
            // Plus the interpolation's own bound (module docs): |Δρ| ≤ 0.010.
            assert!(
                (r - rho).abs() <= 4.0 * se + 0.010,
                "autocorrelation {r} at lag {l}·d_corr, exp(−d/d_corr) = {rho}"
            );
        }
    }

    #[test]
    fn tracks_are_functions_of_distance_only() {
        let mut dense = ShadowingTrack::new(0.3, 10.0, 1, 2);
        let mut sparse = ShadowingTrack::new(0.3, 10.0, 1, 2);
        let mut back = ShadowingTrack::new(0.3, 10.0, 1, 2);
        back.at(95.0);
        for i in 0..2000 {
            let s = i as f64 * 0.037;
            let d = dense.at(s);
            if i % 97 == 0 {
                assert_eq!(d.to_bits(), sparse.at(s).to_bits());
                assert_eq!(d.to_bits(), back.at(s).to_bits(), "after rewinding");
            }
        }
        assert_eq!(back.replays(), 1, "95 m back to 0 m is beyond the window");
        // Back and forth within the window (an observer ahead of the scheduler, a CQI report
        // measured a delay ago): the same values, and no replay.
        let mut zigzag = ShadowingTrack::new(0.3, 10.0, 1, 2);
        let step = zigzag.step_m();
        for i in 0..500 {
            let s = i as f64 * 0.37;
            let behind = (s - (WINDOW as f64 - 1.5) * step).max(0.0);
            for x in [s, behind, s - 0.01, behind + 0.5 * step] {
                let x = x.max(0.0);
                let mut fresh = ShadowingTrack::new(0.3, 10.0, 1, 2);
                assert_eq!(zigzag.at(x).to_bits(), fresh.at(x).to_bits(), "at {x} m");
            }
        }
        assert_eq!(zigzag.replays(), 0);
        assert_eq!(dense.at(0.0), 0.3);
        let mut a = LosDrawTrack::new(0.25, 15.0, 1, 3);
        let mut b = LosDrawTrack::new(0.25, 15.0, 1, 3);
        let seq: Vec<f64> = (0..100).map(|i| a.at(i as f64 * 1.3)).collect();
        assert_eq!(b.at(14.9), 0.25);
        assert_eq!(b.at(99.0 * 1.3), seq[99]);
        assert_eq!(b.at(50.0 * 1.3), seq[50]);
        assert_ne!(seq[99], 0.25);
        // One draw back (a read just behind a boundary crossed) and forward again.
        let mut c = LosDrawTrack::new(0.25, 15.0, 1, 3);
        for (i, &u) in seq.iter().enumerate().skip(1) {
            let s = i as f64 * 1.3;
            assert_eq!(c.at(s), u);
            let behind = (s - 2.0).max(0.0);
            let mut fresh = LosDrawTrack::new(0.25, 15.0, 1, 3);
            assert_eq!(c.at(behind), fresh.at(behind));
        }
    }
}
