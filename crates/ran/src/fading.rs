//! Time-correlated flat fast fading: Rayleigh, or Rician with a K-factor in LOS.
//!
//! The diffuse part is the sum-of-sinusoids model of Zheng & Xiao ("Simulation models with
//! correct statistical properties for Rayleigh fading channels", IEEE Trans. Commun. 51(6),
//! 2003): with M sinusoids, arrival angles α_n = (2πn − π + θ)/(4M) and random phases ψ_n, φ,
//!
//!   h(t) = (1/√M) Σ_n [cos ψ_n + j sin ψ_n] · cos(ω_d t cos α_n + φ),
//!
//! whose ensemble autocorrelation is E[h(t) h*(t+τ)] = J0(ω_d τ) exactly (ω_d = 2π f_D, the
//! Clarke/Jakes spectrum) and E|h|² = 1. The LOS part of a Rician channel is a unit phasor
//! rotating at f_D cos θ_0: h = √(K/(K+1))·e^{j(ω_d t cos θ_0 + φ_0)} + √(1/(K+1))·h_diffuse.
//!
//! Time enters only through the UE's *displacement in wavelengths* x = s/λ (ω_d t = 2π x for a
//! constant speed v, f_D = v/λ), so speed changes along a route never make the phase jump. While
//! the UE stands still,
//! [`FadingConfig::scatterer_speed_mps`] keeps the displacement growing at v_env (moving
//! scatterers), so a static UE is not stuck in one fade forever; while it moves, f_D = v/λ.
//! Every random parameter is drawn once from the owning entity's [`Rng`]: the process is a pure,
//! deterministic function of x afterwards. Fading is frequency-flat (one gain per UE per slot).

use rantcp_core::Rng;
use std::f64::consts::PI;

/// Number of sinusoids per process: Zheng & Xiao's own choice, M = 8. The ensemble statistics
/// are exact for any M; a larger M makes each realisation's Doppler spectrum smoother at a
/// proportional cost (8 sinusoids ≈ 100 ns of the per-slot evaluation).
pub const DEFAULT_SINUSOIDS: usize = 8;

/// How fast fading is applied to a link.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FadingConfig {
    /// Off, Rayleigh, or Rician with K (dB) applied when the link is LOS (Rayleigh in NLOS).
    pub kind: FadingKind,
    /// Speed of moving scatterers (m/s) that sets the Doppler while the UE is stationary:
    /// f_D = v_env/λ when paused, v_UE/λ when moving. Default 0.83 m/s (3 km/h, the usual
    /// "pedestrian" Doppler floor).
    pub scatterer_speed_mps: f64,
    /// Sinusoids per process.
    pub sinusoids: usize,
    /// Downlink transmit-diversity branches: 1 (single antenna), or 2 for LTE transmission
    /// mode 2 (TS 36.213 §7.1.2, SFBC over two antenna ports, TS 36.211 §6.3.4.3): the UE sees
    /// two independent fading processes with the transmit power split between them, so the
    /// post-combining SNR gain is (|h1|² + |h2|²)/2 (Alamouti, IEEE JSAC 16(8) 1998) — the same
    /// mean, diversity order 2.
    pub tx_diversity: u8,
}

/// The fading distribution.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum FadingKind {
    None,
    Rayleigh,
    /// Rician with this K-factor (dB) in LOS, Rayleigh in NLOS. TR 38.901 Table 7.5-6 gives
    /// a mean K of 9 dB (UMi/UMa/RMa LOS) and 7 dB (InH LOS).
    Rician {
        k_los_db: f64,
    },
}

impl Default for FadingConfig {
    fn default() -> Self {
        FadingConfig {
            kind: FadingKind::Rayleigh,
            scatterer_speed_mps: 0.83,
            sinusoids: DEFAULT_SINUSOIDS,
            tx_diversity: 1,
        }
    }
}

impl FadingConfig {
    pub const NONE: FadingConfig = FadingConfig {
        kind: FadingKind::None,
        scatterer_speed_mps: 0.0,
        sinusoids: DEFAULT_SINUSOIDS,
        tx_diversity: 1,
    };
}

/// One realisation of the fading process of one link.
#[derive(Clone, Debug)]
pub struct FadingProcess {
    /// 2π cos α_n for each sinusoid (phase advance per wavelength travelled).
    k: Vec<f64>,
    /// cos ψ_n / √M and sin ψ_n / √M.
    c: Vec<f64>,
    s: Vec<f64>,
    phi: f64,
    /// LOS component: 2π cos θ_0 and φ_0.
    k_los: f64,
    phi_los: f64,
}

impl FadingProcess {
    /// Draw a realisation with `m` sinusoids from `rng`.
    pub fn new(m: usize, rng: &mut Rng) -> Self {
        let m = m.max(1);
        let theta = (2.0 * rng.uniform() - 1.0) * PI;
        let phi = (2.0 * rng.uniform() - 1.0) * PI;
        let norm = 1.0 / (m as f64).sqrt();
        let mut k = Vec::with_capacity(m);
        let mut c = Vec::with_capacity(m);
        let mut s = Vec::with_capacity(m);
        for n in 1..=m {
            let alpha = (2.0 * PI * n as f64 - PI + theta) / (4.0 * m as f64);
            let psi = (2.0 * rng.uniform() - 1.0) * PI;
            k.push(2.0 * PI * alpha.cos());
            c.push(psi.cos() * norm);
            s.push(psi.sin() * norm);
        }
        let theta0 = (2.0 * rng.uniform() - 1.0) * PI;
        let phi_los = (2.0 * rng.uniform() - 1.0) * PI;
        FadingProcess {
            k,
            c,
            s,
            phi,
            k_los: 2.0 * PI * theta0.cos(),
            phi_los,
        }
    }

    /// Diffuse (Rayleigh) complex gain after a displacement of `x` wavelengths; E|h|² = 1.
    #[inline]
    pub fn diffuse(&self, x: f64) -> (f64, f64) {
        let (mut re, mut im) = (0.0, 0.0);
        for n in 0..self.k.len() {
            let a = (self.k[n] * x + self.phi).cos();
            re += self.c[n] * a;
            im += self.s[n] * a;
        }
        // E[cos²(·)] = 1/2 per sinusoid: rescale so E|h|² = 1.
        (re * std::f64::consts::SQRT_2, im * std::f64::consts::SQRT_2)
    }

    /// Complex gain with Rician factor `k_lin` (linear; 0 = Rayleigh).
    #[inline]
    pub fn coefficient(&self, x: f64, k_lin: f64) -> (f64, f64) {
        let (re, im) = self.diffuse(x);
        if k_lin <= 0.0 {
            return (re, im);
        }
        let a = (k_lin / (k_lin + 1.0)).sqrt();
        let b = (1.0 / (k_lin + 1.0)).sqrt();
        let p = self.k_los * x + self.phi_los;
        (a * p.cos() + b * re, a * p.sin() + b * im)
    }

    /// Power gain |h|² (linear, mean 1) at displacement `x` wavelengths.
    #[inline]
    pub fn power_gain(&self, x: f64, k_lin: f64) -> f64 {
        let (re, im) = self.coefficient(x, k_lin);
        re * re + im * im
    }
}

/// Bessel function of the first kind, order 0 (for tests and documentation of the Doppler
/// autocorrelation): J0(x) = (1/π) ∫_0^π cos(x sin θ) dθ, evaluated by Simpson's rule.
pub fn bessel_j0(x: f64) -> f64 {
    let n = 2000;
    let h = PI / n as f64;
    let f = |t: f64| (x * t.sin()).cos();
    let mut s = f(0.0) + f(PI);
    for i in 1..n {
        s += if i % 2 == 1 { 4.0 } else { 2.0 } * f(i as f64 * h);
    }
    s * h / 3.0 / PI
}

#[cfg(test)]
mod tests {
    use super::*;
    use rantcp_core::entity_id;

    #[test]
    fn j0_values() {
        assert!((bessel_j0(0.0) - 1.0).abs() < 1e-12);
        assert!((bessel_j0(2.404_825_557_695_773)).abs() < 1e-9);
        assert!((bessel_j0(1.0) - 0.765_197_686_557_966_6).abs() < 1e-9);
    }

    /// The ensemble autocorrelation of the complex gain, normalised by its power, follows
    /// J0(2π f_D τ) within ±0.1 at several lags. Speed 30 m/s at 28 GHz: f_D = v f_c / c
    /// = 2801 Hz; displacement in wavelengths x = f_D t.
    #[test]
    fn autocorrelation_follows_j0() {
        let fc = 28e9;
        let v = 30.0;
        let f_d = v * fc / 299_792_458.0;
        let lags_s = [20e-6, 50e-6, 100e-6, 137e-6, 200e-6, 300e-6, 500e-6];
        let realisations = 400;
        let starts = 50; // time origins per realisation
        let mut rng = Rng::new(7, entity_id("fading-test"));
        let mut acc = vec![0.0; lags_s.len()];
        let mut p0 = 0.0;
        for _ in 0..realisations {
            let f = FadingProcess::new(DEFAULT_SINUSOIDS, &mut rng);
            for s in 0..starts {
                let t0 = s as f64 * 1.7e-3;
                let (a_re, a_im) = f.diffuse(f_d * t0);
                p0 += a_re * a_re + a_im * a_im;
                for (i, &tau) in lags_s.iter().enumerate() {
                    let (b_re, b_im) = f.diffuse(f_d * (t0 + tau));
                    // Re{h(t) h*(t+τ)}
                    acc[i] += a_re * b_re + a_im * b_im;
                }
            }
        }
        for (i, &tau) in lags_s.iter().enumerate() {
            let r = acc[i] / p0;
            let j = bessel_j0(2.0 * PI * f_d * tau);
            eprintln!(
                "lag {:5.0} us: autocorrelation {r:+.3}, J0 {j:+.3}",
                tau * 1e6
            );
            assert!((r - j).abs() < 0.1, "lag {tau}: {r} vs J0 = {j}");
        }
        // Mean power ≈ 1.
        let mean_p = p0 / (realisations * starts) as f64;
        assert!((mean_p - 1.0).abs() < 0.1, "{mean_p}");
    }

    #[test]
    fn rician_mean_power_and_determinism() {
        let mut r1 = Rng::new(1, 2);
        let mut r2 = Rng::new(1, 2);
        let a = FadingProcess::new(8, &mut r1);
        let b = FadingProcess::new(8, &mut r2);
        assert_eq!(a.power_gain(12.34, 0.0), b.power_gain(12.34, 0.0));
        let k = 10f64.powf(0.9);
        let n = 20_000;
        let mean: f64 = (0..n)
            .map(|i| a.power_gain(i as f64 * 0.37, k))
            .sum::<f64>()
            / n as f64;
        assert!((mean - 1.0).abs() < 0.15, "{mean}");
    }
}
