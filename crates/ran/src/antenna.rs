//! Antenna gains: isotropic; the 3GPP three-sector macro pattern (TR 36.814 Table A.2.1.1-2
//! and TR 38.901 Table 7.3-1: A_H(φ) = −min(12·(φ/φ_3dB)², A_m), optional vertical cut
//! A_V(θ) = −min(12·((θ − θ_tilt)/θ_3dB)², SLA_V), combined −min(−(A_H + A_V), A_m));
//! and the ideal beamforming array gain 10·log10(N_tx·N_rx) used for mmWave links
//! (seed 001/004: 64 gNB × 16 UE elements → 30.1 dB).

use crate::geometry::{azimuth_deg, elevation_deg, wrap_deg, Vec3};

/// Vertical pattern parameters of a sector antenna.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct VerticalPattern {
    /// Electrical downtilt below the horizon (degrees, positive = down).
    pub tilt_deg: f64,
    /// Vertical 3 dB beamwidth (degrees); TR 36.814: 10°.
    pub theta_3db_deg: f64,
    /// Side-lobe level limit (dB); TR 36.814: 20 dB.
    pub sla_v_db: f64,
}

/// An antenna radiation pattern with its peak gain.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum AntennaPattern {
    /// Same gain in every direction (dBi).
    Isotropic { gain_dbi: f64 },
    /// The 3GPP three-sector pattern pointing at `boresight_deg` (azimuth, 0 = +x, ccw).
    ThreeSector {
        boresight_deg: f64,
        /// Horizontal 3 dB beamwidth (degrees): 70° in TR 36.814, 65° in TR 38.901.
        phi_3db_deg: f64,
        /// Front-to-back ratio A_m (dB): 20 dB in TR 36.814 (the value).
        a_m_db: f64,
        /// Peak gain (dBi): 14 dBi in TR 36.814 macro case 1, 8 dBi per element in 38.901.
        g_max_dbi: f64,
        vertical: Option<VerticalPattern>,
    },
    /// A TR 38.901 §7.3 panel of one column: `n_v` Table 7.3-1 elements (φ_3dB = θ_3dB = 65°,
    /// A_max = SLA_V = 30 dB, 8 dBi, facing the horizon at `boresight_deg`) stacked vertically
    /// `d_v_wavelengths` apart, fed with the fixed electrical-downtilt weights
    /// w_m = e^{−j2π(m−1)d_V·cos θ_tilt}/√n_v (TR 36.897 §5.2.2, which TR 38.901 Table 7.8-1's
    /// "θ_tilt" refers to; θ zenith angles, θ_tilt = 90° + `tilt_deg`): gain = element gain +
    /// 10·log10|Σ_m w_m e^{j2π(m−1)d_V·cos θ}|², which peaks at 8 + 10·log10(n_v) dBi along
    /// the tilt. The large-scale calibration's antenna (Table 7.8-1: n_v = 10, 12° tilt).
    VerticalArray {
        boresight_deg: f64,
        n_v: u32,
        d_v_wavelengths: f64,
        tilt_deg: f64,
    },
}

impl AntennaPattern {
    /// An omnidirectional 0 dBi antenna.
    pub const ISOTROPIC: AntennaPattern = AntennaPattern::Isotropic { gain_dbi: 0.0 };

    /// TR 36.814 macro sector: φ_3dB = 70°, A_m = 20 dB, 14 dBi, horizontal cut only.
    pub fn sector_36814(boresight_deg: f64) -> Self {
        AntennaPattern::ThreeSector {
            boresight_deg,
            phi_3db_deg: 70.0,
            a_m_db: 20.0,
            g_max_dbi: 14.0,
            vertical: None,
        }
    }

    /// Gain (dBi) of an antenna at `at` towards the point `towards`.
    pub fn gain_dbi(&self, at: Vec3, towards: Vec3) -> f64 {
        match *self {
            AntennaPattern::Isotropic { gain_dbi } => gain_dbi,
            AntennaPattern::ThreeSector {
                boresight_deg,
                phi_3db_deg,
                a_m_db,
                g_max_dbi,
                vertical,
            } => {
                let phi = wrap_deg(azimuth_deg(at, towards) - boresight_deg);
                let a_h = -(12.0 * (phi / phi_3db_deg).powi(2)).min(a_m_db);
                let a = match vertical {
                    None => a_h,
                    Some(v) => {
                        // θ measured as downtilt: positive when the target is below the horizon.
                        let theta = -elevation_deg(at, towards);
                        let a_v = -(12.0 * ((theta - v.tilt_deg) / v.theta_3db_deg).powi(2))
                            .min(v.sla_v_db);
                        -(-(a_h + a_v)).min(a_m_db)
                    }
                };
                g_max_dbi + a
            }
            AntennaPattern::VerticalArray {
                boresight_deg,
                n_v,
                d_v_wavelengths,
                tilt_deg,
            } => {
                let element = AntennaPattern::ThreeSector {
                    boresight_deg,
                    phi_3db_deg: 65.0,
                    a_m_db: 30.0,
                    g_max_dbi: 8.0,
                    vertical: Some(VerticalPattern {
                        tilt_deg: 0.0,
                        theta_3db_deg: 65.0,
                        sla_v_db: 30.0,
                    }),
                };
                // cos θ − cos θ_tilt with zenith angles θ = 90° + downtilt.
                let down = -elevation_deg(at, towards);
                let u = tilt_deg.to_radians().sin() - down.to_radians().sin();
                let psi = std::f64::consts::TAU * d_v_wavelengths * u;
                let (mut re, mut im) = (0.0, 0.0);
                for m in 0..n_v.max(1) {
                    re += (psi * m as f64).cos();
                    im += (psi * m as f64).sin();
                }
                let af = (re * re + im * im) / n_v.max(1) as f64;
                element.gain_dbi(at, towards) + 10.0 * af.max(1e-30).log10()
            }
        }
    }
}

/// Ideal beamforming array gain (dB): 10·log10(N_tx·N_rx).
pub fn beamforming_gain_db(n_tx: u32, n_rx: u32) -> f64 {
    10.0 * ((n_tx.max(1) as f64) * (n_rx.max(1) as f64)).log10()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn three_sector_pattern() {
        let a = AntennaPattern::sector_36814(0.0);
        let o = Vec3::ZERO;
        let dir = |deg: f64| Vec3::new(deg.to_radians().cos(), deg.to_radians().sin(), 0.0);
        assert!((a.gain_dbi(o, dir(0.0)) - 14.0).abs() < 1e-9);
        // At half the 3 dB beamwidth the loss is 12·(35/70)² = 3 dB.
        assert!((a.gain_dbi(o, dir(35.0)) - 11.0).abs() < 1e-9);
        assert!((a.gain_dbi(o, dir(-35.0)) - 11.0).abs() < 1e-9);
        // Behind: capped at the 20 dB front-to-back ratio.
        assert!((a.gain_dbi(o, dir(180.0)) - (-6.0)).abs() < 1e-9);
        // 60° off boresight: 12·(60/70)² = 8.816 dB.
        assert!((a.gain_dbi(o, dir(60.0)) - (14.0 - 8.816_326_530_612_245)).abs() < 1e-9);
    }

    #[test]
    fn vertical_cut_and_array_gain() {
        let a = AntennaPattern::ThreeSector {
            boresight_deg: 90.0,
            phi_3db_deg: 65.0,
            a_m_db: 30.0,
            g_max_dbi: 8.0,
            vertical: Some(VerticalPattern {
                tilt_deg: 10.0,
                theta_3db_deg: 65.0,
                sla_v_db: 30.0,
            }),
        };
        // Target 10° below the horizon straight along boresight: full gain.
        let at = Vec3::new(0.0, 0.0, 10.0);
        let d = 10.0 / 10f64.to_radians().tan();
        assert!((a.gain_dbi(at, Vec3::new(0.0, d, 0.0)) - 8.0).abs() < 1e-9);
        assert!((beamforming_gain_db(64, 16) - 30.103).abs() < 1e-3);
        assert_eq!(beamforming_gain_db(1, 1), 0.0);
    }

    #[test]
    fn vertical_array_gain_and_nulls() {
        let a = AntennaPattern::VerticalArray {
            boresight_deg: 0.0,
            n_v: 10,
            d_v_wavelengths: 0.5,
            tilt_deg: 12.0,
        };
        let at = Vec3::new(0.0, 0.0, 25.0);
        // Along the tilt: 8 dBi element − 12·(12/65)² = 0.409 dB, + 10·log10(10) array gain.
        let d = 25.0 / 12f64.to_radians().tan();
        let g = a.gain_dbi(at, Vec3::new(d, 0.0, 0.0));
        assert!(
            (g - (18.0 - 12.0 * (12.0f64 / 65.0).powi(2))).abs() < 1e-9,
            "{g}"
        );
        // A uniform 10-element array has its first null where 10·ψ = 2π, ψ = π·u at d_V = λ/2:
        // sin(down) = sin 12° − 0.2 → down = 0.454°.
        let down = (12f64.to_radians().sin() - 0.2).asin();
        let far = Vec3::new(25.0 / down.tan(), 0.0, 0.0);
        assert!(a.gain_dbi(at, far) < -40.0);
    }
}
