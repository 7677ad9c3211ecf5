//! Large-scale path loss, LOS probability and shadowing σ.
//!
//! * 3GPP TR 38.901 §7.4.1, Table 7.4.1-1: RMa, UMa, UMi-Street Canyon and InH-Office, LOS and
//!   NLOS, with the breakpoint distances of Notes 1 and 5. Effective environment height
//!   h_E = 1 m (Note 1; the random h_E for h_UT ≥ 13 m in UMa is not modelled).
//! * TR 38.901 §7.4.2, Table 7.4.2-1: LOS probabilities, for when no geometry is given.
//! * TR 38.901 Table 7.5-6 (shadow-fading decorrelation distances) for the spatial
//!   correlation of shadowing.
//! * COST 231-Hata (COST Action 231 final report, ch. 4; also TR 36.942 §4.5.2 style macro
//!   urban model) for LTE macro cells, with TR 36.814 Table A.2.1.1-2's 8 dB shadowing.
//! * Seed 004's simple 28 GHz formulas (ns-3 mmWave building scenario, from the NYU
//!   measurements of Akdeniz et al., JSAC 2014): LOS 61.4 + 20·log10(d), NLOS
//!   72 + 29.2·log10(d) (dB, d in m), σ = 5.8 dB LOS and 8.7 dB NLOS.
//!
//! Units: distances in metres, carrier frequency `fc_hz` in Hz (formulas use f_c in GHz as
//! the TR does), heights in metres, losses in dB.

use std::f64::consts::PI;

/// Speed of light used by TR 38.901's breakpoint formulas (m/s).
pub const C: f64 = 3.0e8;

/// A path-loss model and its scenario parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum PathlossModel {
    /// TR 38.901 UMi-Street Canyon (h_BS = 10 m nominal).
    UmiStreetCanyon,
    /// TR 38.901 UMa (h_BS = 25 m nominal).
    Uma,
    /// TR 38.901 RMa with average building height `h_m` (default 5 m) and street width `w_m`
    /// (default 20 m).
    Rma { h_m: f64, w_m: f64 },
    /// TR 38.901 InH-Office (mixed office LOS probability unless `open_office`).
    InhOffice { open_office: bool },
    /// COST 231-Hata, 1500–2000 MHz; `metropolitan` adds the 3 dB C_M term.
    Cost231Hata { metropolitan: bool },
    /// Seed 004 / ns-3 mmWave 28 GHz: LOS 61.4 + 20·log10(d), NLOS 72 + 29.2·log10(d).
    Seed004Mmwave,
}

/// The geometry of one BS–UT link.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LinkGeometry {
    /// Horizontal distance d_2D (m).
    pub d2d_m: f64,
    /// Straight-line distance d_3D (m).
    pub d3d_m: f64,
    /// Base-station antenna height (m).
    pub h_bs_m: f64,
    /// UE antenna height (m).
    pub h_ut_m: f64,
    /// Carrier frequency (Hz).
    pub fc_hz: f64,
}

impl LinkGeometry {
    /// From horizontal distance and heights (d_3D derived).
    pub fn new(d2d_m: f64, h_bs_m: f64, h_ut_m: f64, fc_hz: f64) -> Self {
        let dh = h_bs_m - h_ut_m;
        LinkGeometry {
            d2d_m,
            d3d_m: (d2d_m * d2d_m + dh * dh).sqrt(),
            h_bs_m,
            h_ut_m,
            fc_hz,
        }
    }
}

#[inline]
fn lg(x: f64) -> f64 {
    x.log10()
}

impl PathlossModel {
    /// TR 38.901 default RMa parameters (h = 5 m, W = 20 m).
    pub const RMA_DEFAULT: PathlossModel = PathlossModel::Rma {
        h_m: 5.0,
        w_m: 20.0,
    };

    /// Path loss (dB) for a LOS or NLOS link. Distances below 1 m are clamped to 1 m.
    pub fn pathloss_db(&self, los: bool, g: &LinkGeometry) -> f64 {
        let d3 = g.d3d_m.max(1.0);
        let d2 = g.d2d_m.max(1.0);
        let fc = g.fc_hz / 1e9;
        match *self {
            PathlossModel::UmiStreetCanyon => {
                let pl_los = {
                    let dbp = breakpoint_prime(g.h_bs_m, g.h_ut_m, g.fc_hz);
                    if d2 <= dbp {
                        32.4 + 21.0 * lg(d3) + 20.0 * lg(fc)
                    } else {
                        32.4 + 40.0 * lg(d3) + 20.0 * lg(fc)
                            - 9.5 * lg(dbp * dbp + (g.h_bs_m - g.h_ut_m).powi(2))
                    }
                };
                if los {
                    pl_los
                } else {
                    let pl = 35.3 * lg(d3) + 22.4 + 21.3 * lg(fc) - 0.3 * (g.h_ut_m - 1.5);
                    pl.max(pl_los)
                }
            }
            PathlossModel::Uma => {
                let pl_los = {
                    let dbp = breakpoint_prime(g.h_bs_m, g.h_ut_m, g.fc_hz);
                    if d2 <= dbp {
                        28.0 + 22.0 * lg(d3) + 20.0 * lg(fc)
                    } else {
                        28.0 + 40.0 * lg(d3) + 20.0 * lg(fc)
                            - 9.0 * lg(dbp * dbp + (g.h_bs_m - g.h_ut_m).powi(2))
                    }
                };
                if los {
                    pl_los
                } else {
                    let pl = 13.54 + 39.08 * lg(d3) + 20.0 * lg(fc) - 0.6 * (g.h_ut_m - 1.5);
                    pl.max(pl_los)
                }
            }
            PathlossModel::Rma { h_m, w_m } => {
                let pl1 = |d: f64| {
                    20.0 * lg(40.0 * PI * d * fc / 3.0) + (0.03 * h_m.powf(1.72)).min(10.0) * lg(d)
                        - (0.044 * h_m.powf(1.72)).min(14.77)
                        + 0.002 * lg(h_m) * d
                };
                let dbp = 2.0 * PI * g.h_bs_m * g.h_ut_m * g.fc_hz / C;
                let pl_los = if d2 <= dbp {
                    pl1(d3)
                } else {
                    pl1(dbp) + 40.0 * lg(d3 / dbp)
                };
                if los {
                    pl_los
                } else {
                    let hbs = g.h_bs_m;
                    let pl = 161.04 - 7.1 * lg(w_m) + 7.5 * lg(h_m)
                        - (24.37 - 3.7 * (h_m / hbs).powi(2)) * lg(hbs)
                        + (43.42 - 3.1 * lg(hbs)) * (lg(d3) - 3.0)
                        + 20.0 * lg(fc)
                        - (3.2 * lg(11.75 * g.h_ut_m).powi(2) - 4.97);
                    pl.max(pl_los)
                }
            }
            PathlossModel::InhOffice { .. } => {
                let pl_los = 32.4 + 17.3 * lg(d3) + 20.0 * lg(fc);
                if los {
                    pl_los
                } else {
                    (38.3 * lg(d3) + 17.30 + 24.9 * lg(fc)).max(pl_los)
                }
            }
            PathlossModel::Cost231Hata { metropolitan } => {
                let f_mhz = g.fc_hz / 1e6;
                let hb = g.h_bs_m;
                let hm = g.h_ut_m;
                let a_hm = (1.1 * lg(f_mhz) - 0.7) * hm - (1.56 * lg(f_mhz) - 0.8);
                let cm = if metropolitan { 3.0 } else { 0.0 };
                let d_km = (d3 / 1000.0).max(1e-3);
                46.3 + 33.9 * lg(f_mhz) - 13.82 * lg(hb) - a_hm
                    + (44.9 - 6.55 * lg(hb)) * lg(d_km)
                    + cm
            }
            PathlossModel::Seed004Mmwave => {
                if los {
                    61.4 + 20.0 * lg(d3)
                } else {
                    72.0 + 29.2 * lg(d3)
                }
            }
        }
    }

    /// Log-normal shadowing standard deviation σ_SF (dB), TR 38.901 Table 7.4.1-1.
    pub fn shadowing_sigma_db(&self, los: bool, g: &LinkGeometry) -> f64 {
        match *self {
            PathlossModel::UmiStreetCanyon => {
                if los {
                    4.0
                } else {
                    7.82
                }
            }
            PathlossModel::Uma => {
                if los {
                    4.0
                } else {
                    6.0
                }
            }
            PathlossModel::Rma { .. } => {
                if los {
                    let dbp = 2.0 * PI * g.h_bs_m * g.h_ut_m * g.fc_hz / C;
                    if g.d2d_m <= dbp {
                        4.0
                    } else {
                        6.0
                    }
                } else {
                    8.0
                }
            }
            PathlossModel::InhOffice { .. } => {
                if los {
                    3.0
                } else {
                    8.03
                }
            }
            PathlossModel::Cost231Hata { .. } => 8.0,
            PathlossModel::Seed004Mmwave => {
                if los {
                    5.8
                } else {
                    8.7
                }
            }
        }
    }

    /// Shadow-fading decorrelation distance (m), TR 38.901 Table 7.5-6 (TR 36.814: 50 m for
    /// the COST 231 macro; the UMi values for seed 004's street scenario).
    pub fn shadowing_corr_distance_m(&self, los: bool) -> f64 {
        match *self {
            PathlossModel::UmiStreetCanyon | PathlossModel::Seed004Mmwave => {
                if los {
                    10.0
                } else {
                    13.0
                }
            }
            PathlossModel::Uma => {
                if los {
                    37.0
                } else {
                    50.0
                }
            }
            PathlossModel::Rma { .. } => {
                if los {
                    37.0
                } else {
                    120.0
                }
            }
            PathlossModel::InhOffice { .. } => {
                if los {
                    10.0
                } else {
                    6.0
                }
            }
            PathlossModel::Cost231Hata { .. } => 50.0,
        }
    }

    /// LOS probability, TR 38.901 Table 7.4.2-1 (outdoor UEs). COST 231-Hata has no LOS
    /// notion (returns 0: the formula is an NLOS macro fit); seed 004's model returns 1
    /// (its LOS state comes from geometry).
    pub fn los_probability(&self, d2d_m: f64, h_ut_m: f64) -> f64 {
        let d = d2d_m;
        match *self {
            PathlossModel::UmiStreetCanyon => {
                if d <= 18.0 {
                    1.0
                } else {
                    18.0 / d + (-d / 36.0).exp() * (1.0 - 18.0 / d)
                }
            }
            PathlossModel::Uma => {
                if d <= 18.0 {
                    1.0
                } else {
                    let c = if h_ut_m <= 13.0 {
                        0.0
                    } else {
                        ((h_ut_m - 13.0) / 10.0).powf(1.5)
                    };
                    (18.0 / d + (-d / 63.0).exp() * (1.0 - 18.0 / d))
                        * (1.0 + c * 1.25 * (d / 100.0).powi(3) * (-d / 150.0).exp())
                }
            }
            PathlossModel::Rma { .. } => {
                if d <= 10.0 {
                    1.0
                } else {
                    (-(d - 10.0) / 1000.0).exp()
                }
            }
            PathlossModel::InhOffice { open_office: false } => {
                if d <= 1.2 {
                    1.0
                } else if d < 6.5 {
                    (-(d - 1.2) / 4.7).exp()
                } else {
                    (-(d - 6.5) / 32.6).exp() * 0.32
                }
            }
            PathlossModel::InhOffice { open_office: true } => {
                if d <= 5.0 {
                    1.0
                } else if d <= 49.0 {
                    (-(d - 5.0) / 70.8).exp()
                } else {
                    (-(d - 49.0) / 211.7).exp() * 0.54
                }
            }
            PathlossModel::Cost231Hata { .. } => 0.0,
            PathlossModel::Seed004Mmwave => 1.0,
        }
    }

    /// Correlation distance of the LOS state (m), TR 38.901 Table 7.6.3.1-2 (spatial
    /// consistency): used to re-draw a probabilistic LOS state as a UE moves.
    pub fn los_corr_distance_m(&self) -> f64 {
        match *self {
            PathlossModel::UmiStreetCanyon | PathlossModel::Seed004Mmwave => 15.0,
            PathlossModel::Uma => 50.0,
            PathlossModel::Rma { .. } => 60.0,
            PathlossModel::InhOffice { .. } => 10.0,
            PathlossModel::Cost231Hata { .. } => 50.0,
        }
    }

    /// Parse a model name as used by the Python API: "umi", "uma", "rma", "inh",
    /// "inh-open", "cost231", "cost231-metro", "seed004".
    pub fn from_name(name: &str) -> Option<Self> {
        Some(match name.to_ascii_lowercase().as_str() {
            "umi" | "umi-sc" | "umi_street_canyon" => PathlossModel::UmiStreetCanyon,
            "uma" => PathlossModel::Uma,
            "rma" => PathlossModel::RMA_DEFAULT,
            "inh" | "inh-office" | "inh-mixed" => PathlossModel::InhOffice { open_office: false },
            "inh-open" => PathlossModel::InhOffice { open_office: true },
            "cost231" | "cost231-hata" => PathlossModel::Cost231Hata {
                metropolitan: false,
            },
            "cost231-metro" => PathlossModel::Cost231Hata { metropolitan: true },
            "seed004" | "mmwave28" => PathlossModel::Seed004Mmwave,
            _ => return None,
        })
    }
}

/// TR 38.901 Table 7.4.1-1 Note 1: d'_BP = 4·h'_BS·h'_UT·f_c/c with h_E = 1 m.
pub fn breakpoint_prime(h_bs_m: f64, h_ut_m: f64, fc_hz: f64) -> f64 {
    4.0 * (h_bs_m - 1.0) * (h_ut_m - 1.0) * fc_hz / C
}

/// Free-space path loss (dB) at `d_m` metres and `fc_hz`: 20·log10(4π d f / c).
pub fn free_space_db(d_m: f64, fc_hz: f64) -> f64 {
    20.0 * (4.0 * PI * d_m.max(1e-3) * fc_hz / 299_792_458.0).log10()
}

/// TR 38.901 §7.4.3.1 building type of an indoor UE (Table 7.4.3-2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Building {
    /// Low-loss model: 30 % standard glass, 70 % concrete; σ_P = 4.4 dB.
    LowLoss,
    /// High-loss model: 70 % IRR glass, 30 % concrete; σ_P = 6.5 dB.
    HighLoss,
}

/// TR 38.901 Table 7.4.3-1, material penetration losses (dB) at `fc_ghz`.
pub mod material {
    /// Standard multi-pane glass: L_glass = 2 + 0.2·f.
    pub fn glass_db(fc_ghz: f64) -> f64 {
        2.0 + 0.2 * fc_ghz
    }
    /// Infrared-reflective glass: L_IRRglass = 23 + 0.3·f.
    pub fn irr_glass_db(fc_ghz: f64) -> f64 {
        23.0 + 0.3 * fc_ghz
    }
    /// Concrete: L_concrete = 5 + 4·f.
    pub fn concrete_db(fc_ghz: f64) -> f64 {
        5.0 + 4.0 * fc_ghz
    }
}

impl Building {
    /// Through-wall loss PL_tw (dB) at `fc_hz`, TR 38.901 Table 7.4.3-2:
    /// low-loss  5 − 10·log10(0.3·10^(−L_glass/10) + 0.7·10^(−L_concrete/10)),
    /// high-loss 5 − 10·log10(0.7·10^(−L_IRRglass/10) + 0.3·10^(−L_concrete/10)).
    pub fn wall_loss_db(self, fc_hz: f64) -> f64 {
        let f = fc_hz / 1e9;
        let lin = |l: f64| 10f64.powf(-l / 10.0);
        let c = lin(material::concrete_db(f));
        let mix = match self {
            Building::LowLoss => 0.3 * lin(material::glass_db(f)) + 0.7 * c,
            Building::HighLoss => 0.7 * lin(material::irr_glass_db(f)) + 0.3 * c,
        };
        5.0 - 10.0 * mix.log10()
    }
    /// Standard deviation σ_P (dB) of the O2I loss, TR 38.901 Table 7.4.3-2: 4.4 (low-loss),
    /// 6.5 (high-loss).
    pub fn sigma_db(self) -> f64 {
        match self {
            Building::LowLoss => 4.4,
            Building::HighLoss => 6.5,
        }
    }
    /// The O2I loss (dB) of a UE `d_2d_in_m` metres inside, with the unit normal `z` drawn
    /// for it: PL_tw + PL_in + N(0, σ_P²) with PL_in = 0.5·d_2D-in (TR 38.901 eq. 7.4-2,
    /// Table 7.4.3-2). Not clipped: TR 38.901 does not clip it.
    pub fn o2i_loss_db(self, fc_hz: f64, d_2d_in_m: f64, z: f64) -> f64 {
        self.wall_loss_db(fc_hz) + 0.5 * d_2d_in_m + self.sigma_db() * z
    }
}

impl PathlossModel {
    /// Upper end of the uniform draws whose minimum is d_2D-in (m), TR 38.901 Table 7.4.3-2
    /// note: 25 m for UMa and UMi-Street Canyon, 10 m for RMa. The other models take UMa's
    /// 25 m (COST 231-Hata's macro cell and seed 004's urban street are urban layouts);
    /// InH-Office UEs are indoors with the base station, O2I does not apply to them.
    pub fn o2i_max_d_2d_in_m(&self) -> f64 {
        match self {
            PathlossModel::Rma { .. } => 10.0,
            _ => 25.0,
        }
    }

    /// LOS probability of an indoor UT `d_2d_in_m` metres inside its building: the outdoor
    /// formula of Table 7.4.2-1 at d_2D-out = d_2D − d_2D-in (TR 38.901 Table 7.4.2-1 note:
    /// "For indoor users d_2D-out shall be used instead of d_2D"), h_UT the UT's own height.
    /// d_2D-out is clamped at 0 (a UT nearer the mast than its own d_2D-in, which the TR's
    /// geometry does not produce: probability 1).
    pub fn los_probability_o2i(&self, d2d_m: f64, d_2d_in_m: f64, h_ut_m: f64) -> f64 {
        self.los_probability((d2d_m - d_2d_in_m).max(0.0), h_ut_m)
    }

    /// Shadow fading of an O2I link (indoor UT, outdoor BS): (σ_SF dB, decorrelation distance
    /// m) from the O2I columns of TR 38.901 Table 7.5-6 (Part-1 UMi-Street Canyon and UMa:
    /// σ_SF = 7 dB, 7 m; Part-2 RMa: 8 dB, 120 m), the same for the LOS and the NLOS outdoor
    /// path loss PL_b the link's LOS state selects (QuaDRiGa's `3GPP_38.901_*_{LOS,NLOS}_O2I`
    /// configurations carry the same σ and distance in both). `None` for the models without
    /// an O2I column: COST 231-Hata's 8 dB is TR 36.814's σ for every UE of a macro layout
    /// whose UEs all carry a penetration loss, seed 004's σ is its own measurement, and
    /// InH-Office UEs are not O2I; their indoor UEs keep the outdoor σ and distance.
    pub fn o2i_shadowing(&self) -> Option<(f64, f64)> {
        match self {
            PathlossModel::UmiStreetCanyon | PathlossModel::Uma => Some((7.0, 7.0)),
            PathlossModel::Rma { .. } => Some((8.0, 120.0)),
            PathlossModel::InhOffice { .. }
            | PathlossModel::Cost231Hata { .. }
            | PathlossModel::Seed004Mmwave => None,
        }
    }
}

#[cfg(test)]
mod tests {
    //! Expected values were computed by hand with Python's `math` module from the printed
    //! formulas of TR 38.901 Table 7.4.1-1 (and COST 231-Hata), never by calling this code.
    //! Each comment shows the arithmetic.
    use super::*;

    fn pl(m: PathlossModel, los: bool, d2d: f64, hbs: f64, hut: f64, fc_ghz: f64) -> f64 {
        m.pathloss_db(los, &LinkGeometry::new(d2d, hbs, hut, fc_ghz * 1e9))
    }
    fn near(a: f64, b: f64) {
        assert!((a - b).abs() < 0.01, "{a} vs {b}");
    }

    #[test]
    fn umi_street_canyon() {
        let m = PathlossModel::UmiStreetCanyon;
        // d3D = sqrt(50² + 8.5²) = 50.7174; 32.4 + 21·log10(50.7174) + 20·log10(28) = 97.1514
        near(pl(m, true, 50.0, 10.0, 1.5, 28.0), 97.1514);
        // 3.5 GHz: d'BP = 4·9·0.5·3.5e9/3e8 = 210 m < 500 m → PL2:
        // 32.4 + 40·log10(500.0722) + 20·log10(3.5) − 9.5·log10(210² + 8.5²) = 107.1138
        near(pl(m, true, 500.0, 10.0, 1.5, 3.5), 107.1138);
        // NLOS 100 m, 28 GHz: 35.3·log10(100.3600) + 22.4 + 21.3·log10(28) = 123.8796 (> LOS 103.38)
        near(pl(m, false, 100.0, 10.0, 1.5, 28.0), 123.8796);
        near(
            m.shadowing_sigma_db(true, &LinkGeometry::new(50.0, 10.0, 1.5, 28e9)),
            4.0,
        );
        near(
            m.shadowing_sigma_db(false, &LinkGeometry::new(50.0, 10.0, 1.5, 28e9)),
            7.82,
        );
    }

    #[test]
    fn uma() {
        let m = PathlossModel::Uma;
        // d'BP = 4·24·0.5·3.5e9/3e8 = 560 m. 200 m: 28 + 22·log10(201.3759) + 20·log10(3.5) = 89.5695
        near(pl(m, true, 200.0, 25.0, 1.5, 3.5), 89.5695);
        // 1000 m: 28 + 40·log10(1000.2761) + 20·log10(3.5) − 9·log10(560² + 23.5²) = 109.4119
        near(pl(m, true, 1000.0, 25.0, 1.5, 3.5), 109.4119);
        // NLOS 300 m: 13.54 + 39.08·log10(300.9190) + 20·log10(3.5) − 0 = 121.2792 (> LOS 93.41)
        near(pl(m, false, 300.0, 25.0, 1.5, 3.5), 121.2792);
    }

    #[test]
    fn rma() {
        let m = PathlossModel::RMA_DEFAULT;
        // h = 5, W = 20, h_BS = 35, h_UT = 1.5, 3.5 GHz: d_BP = 2π·35·1.5·3.5e9/3e8 = 3848.45 m.
        // 1000 m: 20·log10(40π·1000.5577·3.5/3) + min(0.03·5^1.72, 10)·log10(1000.5577)
        //   − min(0.044·5^1.72, 14.77) + 0.002·log10(5)·1000.5577 = 105.4596
        near(pl(m, true, 1000.0, 35.0, 1.5, 3.5), 105.4596);
        // 5000 m (> d_BP): PL1(d_BP) + 40·log10(5000.1122/3848.45) = 125.9690
        near(pl(m, true, 5000.0, 35.0, 1.5, 3.5), 125.9690);
        // NLOS 2000 m: 161.04 − 7.1·log10(20) + 7.5·log10(5) − (24.37 − 3.7·(5/35)²)·log10(35)
        //   + (43.42 − 3.1·log10(35))·(log10(2000.2806) − 3) + 20·log10(3.5)
        //   − (3.2·log10(11.75·1.5)² − 4.97) = 142.0471 (> LOS 113.02)
        near(pl(m, false, 2000.0, 35.0, 1.5, 3.5), 142.0471);
    }

    #[test]
    fn inh_office() {
        let m = PathlossModel::InhOffice { open_office: false };
        // h_BS 3, h_UT 1, 28 GHz. 10 m: 32.4 + 17.3·log10(10.1980) + 20·log10(28) = 78.7905
        near(pl(m, true, 10.0, 3.0, 1.0, 28.0), 78.7905);
        // 50 m: 32.4 + 17.3·log10(50.0400) + 20·log10(28) = 90.7413
        near(pl(m, true, 50.0, 3.0, 1.0, 28.0), 90.7413);
        // NLOS 20 m: 38.3·log10(20.0998) + 17.3 + 24.9·log10(28) = 103.2464 (> LOS 83.89)
        near(pl(m, false, 20.0, 3.0, 1.0, 28.0), 103.2464);
    }

    #[test]
    fn cost231_hata() {
        let m = PathlossModel::Cost231Hata {
            metropolitan: false,
        };
        // f = 2000 MHz, h_b = 30, h_m = 1.5: a(h_m) = (1.1·log10 2000 − 0.7)·1.5 − (1.56·log10 2000 − 0.8)
        // L = 46.3 + 33.9·log10 2000 − 13.82·log10 30 − a + (44.9 − 6.55·log10 30)·log10(d_km)
        // d = 1.000392 km → 137.7502 ; d = 3.000134 km → 154.5512 ; metropolitan +3 dB.
        near(pl(m, false, 1000.0, 30.0, 1.5, 2.0), 137.7502);
        near(pl(m, true, 3000.0, 30.0, 1.5, 2.0), 154.5512);
        near(
            pl(
                PathlossModel::Cost231Hata { metropolitan: true },
                false,
                1000.0,
                30.0,
                1.5,
                2.0,
            ),
            140.7502,
        );
    }

    #[test]
    fn seed004_formulas() {
        let m = PathlossModel::Seed004Mmwave;
        // gNB 15 m, UE 1.5 m, 52 m away: d3D = 53.7238; 61.4 + 20·log10(53.7238) = 96.0033
        near(pl(m, true, 52.0, 15.0, 1.5, 28.0), 96.0033);
        // NLOS at 100 m: d3D = 100.9071; 72 + 29.2·log10(100.9071) = 130.5145
        near(pl(m, false, 100.0, 15.0, 1.5, 28.0), 130.5145);
    }

    #[test]
    fn los_probabilities_table_7_4_2_1() {
        // UMi 50 m: 18/50 + exp(−50/36)·(1 − 18/50) = 0.519585
        assert!(
            (PathlossModel::UmiStreetCanyon.los_probability(50.0, 1.5) - 0.519585).abs() < 1e-5
        );
        // UMa 100 m, h_UT 1.5 (C' = 0): 18/100 + exp(−100/63)·0.82 = 0.347671
        assert!((PathlossModel::Uma.los_probability(100.0, 1.5) - 0.347671).abs() < 1e-5);
        // RMa 510 m: exp(−500/1000) = 0.606531
        assert!((PathlossModel::RMA_DEFAULT.los_probability(510.0, 1.5) - 0.606531).abs() < 1e-5);
        // InH mixed office 20 m: exp(−(20 − 6.5)/32.6)·0.32 = 0.211497
        let inh = PathlossModel::InhOffice { open_office: false };
        assert!((inh.los_probability(20.0, 1.0) - 0.211497).abs() < 1e-5);
        for m in [PathlossModel::UmiStreetCanyon, PathlossModel::Uma] {
            assert_eq!(m.los_probability(10.0, 1.5), 1.0);
        }
    }

    #[test]
    fn o2i_penetration_loss_table_7_4_3_2() {
        // Hand-computed (Python math) from Tables 7.4.3-1 / 7.4.3-2, not with this code.
        // 2 GHz low-loss: L_glass 2.4, L_concrete 13:
        //   5 − 10·log10(0.3·10^−0.24 + 0.7·10^−1.3) = 5 − 10·log10(0.172619 + 0.035083)
        //   = 11.8253
        let (f2, f28) = (2e9, 28e9);
        near(Building::LowLoss.wall_loss_db(f2), 11.8253);
        // 2 GHz high-loss: L_IRR 23.6, L_concrete 13:
        //   5 − 10·log10(0.7·10^−2.36 + 0.3·10^−1.3) = 5 − 10·log10(0.003057 + 0.015036)
        //   = 22.4258
        near(Building::HighLoss.wall_loss_db(f2), 22.4258);
        // 28 GHz low-loss: L_glass 7.6, L_concrete 117:
        //   5 − 10·log10(0.3·10^−0.76 + 0.7·10^−11.7) = 5 − 10·log10(0.052134) = 17.8288
        near(Building::LowLoss.wall_loss_db(f28), 17.8288);
        // 28 GHz high-loss: L_IRR 31.4:
        //   5 − 10·log10(0.7·10^−3.14 + 0.3·10^−11.7) = 5 − 10·log10(0.000507) = 37.9490
        near(Building::HighLoss.wall_loss_db(f28), 37.9490);
        // PL_in = 0.5·d_2D-in and σ_P·z: 2 GHz low-loss, 10 m inside, z = 1:
        //   11.8253 + 5 + 4.4 = 21.2253 ; 28 GHz high-loss, 4 m, z = −0.5: 37.9490 + 2 − 3.25
        near(Building::LowLoss.o2i_loss_db(f2, 10.0, 1.0), 21.2253);
        near(Building::HighLoss.o2i_loss_db(f28, 4.0, -0.5), 36.6990);
        assert_eq!(PathlossModel::Uma.o2i_max_d_2d_in_m(), 25.0);
        assert_eq!(PathlossModel::UmiStreetCanyon.o2i_max_d_2d_in_m(), 25.0);
        assert_eq!(PathlossModel::RMA_DEFAULT.o2i_max_d_2d_in_m(), 10.0);
    }

    /// Table 7.4.2-1 note: an indoor UT's LOS probability is the outdoor formula at
    /// d_2D-out = d_2D − d_2D-in. The expected values are the hand-computed ones of
    /// `los_probabilities_table_7_4_2_1` at d_2D-out (UMi 50 m, UMa 100 m).
    #[test]
    fn indoor_los_probability_at_d_2d_out() {
        let umi = PathlossModel::UmiStreetCanyon;
        // UMi, d_2D = 60 m, 10 m inside: 18/50 + exp(-50/36)·(1 - 18/50) = 0.519585.
        assert!((umi.los_probability_o2i(60.0, 10.0, 1.5) - 0.519585).abs() < 1e-5);
        // UMa, d_2D = 120.5 m, 20.5 m inside: 18/100 + exp(-100/63)·(1 - 18/100) = 0.347671.
        let uma = PathlossModel::Uma;
        assert!((uma.los_probability_o2i(120.5, 20.5, 1.5) - 0.347671).abs() < 1e-5);
        // Outdoors (d_2D-in = 0) it is the outdoor formula; a UT nearer than d_2D-in: LOS.
        assert_eq!(
            uma.los_probability_o2i(100.0, 0.0, 1.5),
            uma.los_probability(100.0, 1.5)
        );
        assert_eq!(umi.los_probability_o2i(15.0, 20.0, 1.5), 1.0);
        // And it is not the d_2D formula: UMi at 60 m is 18/60 + exp(-60/36)·0.7 = 0.432213.
        assert!((umi.los_probability(60.0, 1.5) - 0.432213).abs() < 1e-5);
    }

    #[test]
    fn o2i_shadowing_table_7_5_6() {
        assert_eq!(PathlossModel::Uma.o2i_shadowing(), Some((7.0, 7.0)));
        assert_eq!(
            PathlossModel::UmiStreetCanyon.o2i_shadowing(),
            Some((7.0, 7.0))
        );
        assert_eq!(
            PathlossModel::RMA_DEFAULT.o2i_shadowing(),
            Some((8.0, 120.0))
        );
        let cost = PathlossModel::Cost231Hata {
            metropolitan: false,
        };
        assert_eq!(cost.o2i_shadowing(), None);
        assert_eq!(PathlossModel::Seed004Mmwave.o2i_shadowing(), None);
    }
}
