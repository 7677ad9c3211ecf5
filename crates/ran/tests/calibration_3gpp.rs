//! System-level check of the radio against 3GPP's large-scale calibration campaigns: the CDFs
//! of geometry (and coupling gain) of many dropped UEs, percentile by percentile, against the
//! median over the companies that took part.
//!
//! Reference numbers (the companies' median at the percentiles 5, 10, ..., 95), as transcribed
//! by Fraunhofer HHI's QuaDRiGa (`tutorials/calib_3GPP_ref_data.m`, commit 03ce921):
//! * TR 38.901 §7.8.1 large-scale calibration (assumptions: Table 7.8-1), results of
//!   R1-165974 (RAN1 #86, August 2016, run with TR 38.900 v14.0.0's parameters): arrays
//!   `gf38900a` (geometry) and `cl38900a` (coupling gain), UMa and UMi-Street Canyon, 6 GHz.
//!   The same arrays at 30 and 70 GHz; and, for the coupling gain at 6 GHz, the median and
//!   range of the 20 companies' curves in R1-165974's own workbook
//!   (`Phase1Calibration_v42_CMCC.xlsx`, as NVIDIA Aerial's `3gpp_calibration_phase1.json`
//!   carries it).
//! * TR 36.873 §8.2 phase 1 calibration (assumptions: Table 8.2-1; 3D-UMa / 3D-UMi, 2 GHz, one
//!   element per sector (K = M = 1) or a column of 10 (K = M = 10)): array `gf36873a`.
//!
//! The geometry there is the noise-free one (serving over the sum of the interfering path
//! gains, QuaDRiGa's `calib_3GPP_*` scripts), so it is compared with rantcp's
//! `rx_power_dbm − interference_dbm`, at full load. The companies' spread is not in the
//! transcription, and TR 38.901 / 36.873 print the assumptions, not the results.
//!
//! What rantcp expresses of those assumptions: hexagonal sites × 3 sectors (boresights 0°,
//! 120°, 240°, each towards a first-ring site), ISD and BS height (UMa 500 m / 25 m, UMi 200 m / 10 m), the minimum distance
//! (35 m / 10 m), TR 38.901 path loss, LOS probability and shadowing σ (one LOS state and one
//! shadowing value per site, shared by its sectors), the Table 7.3-1 element and the 10-element
//! electrically tilted column ([`AntennaPattern::VerticalArray`], d_V = 0.5 λ as QuaDRiGa
//! models Table 7.8-1's and Table 8.2-1's antenna), a 0 dBi UE, 80 % of the UEs on floors
//! 1..N_fl (N_fl 4..8) at 3(n_fl − 1) + 1.5 m, association to the smallest coupling loss,
//! and those indoor UEs' TR 38.901 §7.4.3.1 O2I penetration loss (the radio's own,
//! [`RadioConfig::o2i`], half low-loss, half high-loss buildings as QuaDRiGa's layouts take
//! them: the campaign's building mix is not in the transcription), which adds the same loss
//! to every link of a UE and so leaves the geometry alone but not the coupling gain, and
//! their O2I links' LOS probability at d_2D-out and σ_SF of 7 dB (Table 7.4.2-1 note,
//! Table 7.5-6; `set_indoor` re-attaches the UE), which move both.
//! Approximated: wrap-around, by 19 sites with the UEs dropped in the centre site's hexagon
//! (each UE then sees the two full rings that wrap-around gives every site). See README
//! "Radio: 3GPP calibration".
//!
//! Why the coupling gain lies ≈ 1 dB above R1-165974's (the xfail) is measured with a
//! per-link re-computation in this file ([`recomputed_cg`]) that switches single rules: TR
//! 38.900's UMa LOS path loss, the O2I-link rules, QuaDRiGa's departures.
//!
//! `cargo test --release -p rantcp-ran --test calibration_3gpp -- --ignored --nocapture` prints
//! the README's table and the variants that isolate each assumption.

use rantcp_core::Rng;
use rantcp_ran::antenna::{AntennaPattern, VerticalPattern};
use rantcp_ran::fading::FadingKind;
use rantcp_ran::frame::Carrier;
use rantcp_ran::geometry::Vec3;
use rantcp_ran::mobility::Mobility;
use rantcp_ran::pathloss::{breakpoint_prime, Building, LinkGeometry, PathlossModel};
use rantcp_ran::radio::{
    hex_layout, CellConfig, LosSource, O2iConfig, RadioConfig, RadioEnvironment,
};

/// Percentiles of the reference tables: 5, 10, ..., 95.
const PCT: [f64; 19] = [
    5.0, 10.0, 15.0, 20.0, 25.0, 30.0, 35.0, 40.0, 45.0, 50.0, 55.0, 60.0, 65.0, 70.0, 75.0, 80.0,
    85.0, 90.0, 95.0,
];

/// R1-165974 via QuaDRiGa `gf38900a` (geometry, dB), UMa, 6 GHz.
const GF_UMA_6: [f64; 19] = [
    -1.0, 0.1, 1.1, 2.0, 2.9, 3.9, 5.0, 6.0, 7.2, 8.6, 9.9, 11.3, 12.9, 14.7, 16.5, 18.6, 20.9,
    23.4, 25.6,
];
/// R1-165974 via QuaDRiGa `gf38900a`, UMi-Street Canyon, 6 GHz.
const GF_UMI_6: [f64; 19] = [
    -1.7, -0.5, 0.4, 1.2, 2.1, 3.0, 4.0, 5.0, 6.1, 7.3, 8.6, 9.9, 11.4, 13.0, 14.9, 17.0, 19.4,
    22.1, 24.9,
];
/// `gf38900a` at 30 and 70 GHz (the geometry hardly depends on the frequency).
const GF_UMA_30: [f64; 19] = [
    -1.0, 0.2, 1.1, 2.0, 3.0, 4.0, 5.0, 6.1, 7.3, 8.6, 9.9, 11.3, 13.0, 14.7, 16.5, 18.6, 20.9,
    23.4, 25.6,
];
const GF_UMA_70: [f64; 19] = [
    -0.9, 0.1, 1.1, 2.0, 3.0, 3.9, 5.0, 6.1, 7.2, 8.5, 9.9, 11.3, 13.0, 14.7, 16.5, 18.6, 20.9,
    23.4, 25.6,
];
const GF_UMI_30: [f64; 19] = [
    -1.6, -0.4, 0.4, 1.3, 2.2, 3.1, 4.1, 5.2, 6.3, 7.5, 8.8, 10.2, 11.7, 13.3, 15.1, 17.2, 19.6,
    22.2, 24.9,
];
const GF_UMI_70: [f64; 19] = [
    -1.6, -0.4, 0.5, 1.3, 2.2, 3.1, 4.1, 5.2, 6.3, 7.5, 8.8, 10.2, 11.7, 13.4, 15.2, 17.3, 19.7,
    22.4, 25.0,
];
/// R1-165974 via QuaDRiGa `cl38900a` (coupling gain = −coupling loss, dB: the 5th percentile
/// is the cell edge, as for geometry), UMa, 6 GHz; 80 % of the UEs indoor with O2I loss.
const CG_UMA_6: [f64; 19] = [
    -150.4, -144.7, -140.6, -137.0, -133.9, -131.1, -128.4, -125.8, -123.1, -120.3, -117.5, -114.7,
    -111.8, -109.1, -106.1, -102.8, -98.8, -93.7, -86.0,
];
/// R1-165974 via QuaDRiGa `cl38900a`, UMi-Street Canyon, 6 GHz.
const CG_UMI_6: [f64; 19] = [
    -142.3, -136.4, -132.4, -128.9, -125.8, -122.9, -120.3, -117.6, -115.0, -112.2, -109.5, -106.4,
    -103.2, -99.9, -96.2, -92.2, -87.6, -82.0, -74.8,
];
/// `cl38900a` at 30 and 70 GHz (UMa, UMi-Street Canyon): the same campaign, where the O2I
/// wall losses are 5–20 dB larger than at 6 GHz (TR 38.901 Table 7.4.3-1's concrete 5 + 4f).
const CG_UMA_30: [f64; 19] = [
    -172.0, -166.3, -161.8, -157.9, -154.5, -151.4, -148.5, -145.7, -142.9, -140.1, -137.0, -133.6,
    -130.0, -126.6, -123.1, -119.5, -115.4, -110.1, -102.0,
];
const CG_UMA_70: [f64; 19] = [
    -191.4, -185.5, -180.9, -176.8, -172.8, -169.2, -165.8, -162.6, -159.6, -156.6, -153.3, -149.8,
    -145.5, -140.4, -135.1, -130.4, -125.5, -119.7, -110.7,
];
const CG_UMI_30: [f64; 19] = [
    -164.6, -158.5, -154.1, -150.3, -147.1, -144.0, -141.1, -138.2, -135.3, -132.4, -129.4, -126.2,
    -122.5, -118.3, -113.7, -108.9, -103.5, -97.1, -89.3,
];
const CG_UMI_70: [f64; 19] = [
    -184.2, -177.8, -173.3, -169.2, -165.5, -162.0, -158.7, -155.5, -152.3, -149.1, -145.8, -142.4,
    -138.3, -133.6, -127.1, -119.8, -112.8, -105.2, -96.8,
];
/// The R1-165974 workbook itself (`Phase1Calibration_v42_CMCC.xlsx`, 20 companies' coupling
/// gain CDFs; as carried by NVIDIA Aerial's `testBenches/chanModels/util/3gpp_calibration_phase1.json`):
/// per percentile the median over the companies, the lowest and the highest company, 6 GHz.
/// Its median lies 0.0–0.9 dB above QuaDRiGa's `cl38900a` (UMi 35–45 %: 0.8–0.9 dB), whose
/// source summary may have had fewer companies: the reference is itself uncertain at the
/// tolerance's scale. (Its geometry medians match `gf38900a` within 0.1 dB.)
const WB_UMA_6: [[f64; 19]; 3] = [
    [
        -150.10, -144.67, -140.36, -136.74, -133.71, -130.76, -128.01, -125.37, -122.78, -119.99,
        -117.22, -114.44, -111.60, -108.76, -105.87, -102.52, -98.73, -93.60, -86.09,
    ],
    [
        -153.88, -146.66, -142.85, -139.54, -136.54, -133.73, -130.92, -128.39, -125.71, -123.08,
        -120.13, -117.27, -113.86, -110.63, -107.66, -104.47, -100.64, -94.73, -87.33,
    ],
    [
        -147.54, -142.48, -138.30, -134.51, -131.31, -128.67, -126.13, -123.39, -120.75, -118.09,
        -115.49, -113.08, -110.38, -107.84, -104.76, -100.90, -96.92, -91.87, -83.35,
    ],
];
const WB_UMI_6: [[f64; 19]; 3] = [
    [
        -141.93, -135.93, -132.00, -128.48, -125.18, -122.46, -119.48, -116.74, -114.18, -111.50,
        -108.67, -105.94, -102.79, -99.64, -96.05, -92.06, -87.48, -82.13, -74.71,
    ],
    [
        -145.96, -140.03, -135.53, -132.09, -129.01, -126.21, -123.36, -120.48, -117.68, -114.92,
        -112.26, -109.08, -105.63, -102.21, -98.59, -95.03, -89.97, -83.64, -77.19,
    ],
    [
        -140.09, -134.85, -130.90, -127.52, -124.05, -120.96, -118.39, -115.47, -112.82, -110.54,
        -107.77, -104.40, -101.61, -98.51, -94.97, -90.81, -86.17, -80.37, -73.53,
    ],
];
/// TR 36.873 phase 1 via QuaDRiGa `gf36873a` (its 0 and 100 % points left out), 3D-UMa,
/// 2 GHz, one element per sector (K = M = 1).
const GF_3D_UMA_K1: [f64; 19] = [
    -3.1, -1.9, -0.9, -0.1, 0.6, 1.4, 2.2, 3.0, 4.0, 4.9, 6.0, 7.2, 8.5, 9.9, 11.6, 13.5, 15.9,
    18.8, 22.6,
];
/// 3D-UMa, K = M = 10 (10-element column, 12° electrical downtilt).
const GF_3D_UMA_K10: [f64; 19] = [
    -1.4, -0.1, 0.8, 1.7, 2.7, 3.7, 4.8, 5.9, 7.1, 8.4, 9.8, 11.2, 12.8, 14.5, 16.4, 18.5, 20.7,
    23.2, 25.4,
];
/// 3D-UMi, K = M = 1.
const GF_3D_UMI_K1: [f64; 19] = [
    -2.2, -0.9, 0.0, 0.8, 1.6, 2.4, 3.4, 4.3, 5.3, 6.4, 7.5, 8.7, 10.1, 11.6, 13.4, 15.3, 17.5,
    20.2, 23.4,
];
/// 3D-UMi, K = M = 10.
const GF_3D_UMI_K10: [f64; 19] = [
    -1.7, -0.4, 0.6, 1.5, 2.4, 3.4, 4.5, 5.6, 6.8, 8.1, 9.5, 10.9, 12.5, 14.2, 16.1, 18.3, 20.7,
    23.3, 25.6,
];

/// The layout and channel of one calibration case.
#[derive(Clone, Copy, Debug)]
struct Case {
    name: &'static str,
    model: PathlossModel,
    isd_m: f64,
    h_bs_m: f64,
    fc_hz: f64,
    /// Minimum BS–UE 2-D distance (Tables 7.8-1 / 8.2-1: UMa 35 m, UMi 10 m).
    min_d2d_m: f64,
    /// Rings of sites around the centre (1 = 7 sites, 2 = 19 sites).
    rings: u32,
    /// Drop area: the centre site's hexagon (`false`) or the inscribed disk of radius ISD/2
    /// (`true`, as `lte-7cell` drops its UEs).
    disk: bool,
    antenna: Antenna,
    /// UE heights of Tables 7.8-1 / 8.2-1: 80 % of the UEs indoor on floor n_fl ~ U{1..N_fl},
    /// N_fl ~ U{4..8}, at 3(n_fl − 1) + 1.5 m; 20 % outdoor at 1.5 m (`false`: all at 1.5 m).
    /// The indoor UEs carry the radio's O2I loss (TR 38.901 §7.4.3.1).
    floors: bool,
    /// Share of the indoor UEs in high-loss buildings (Table 7.4.3-2).
    high_loss: f64,
    /// The reference: geometry and, where published, coupling gain.
    gf_ref: &'static [f64; 19],
    cg_ref: Option<&'static [f64; 19]>,
}

#[derive(Clone, Copy, Debug)]
enum Antenna {
    /// One TR 38.901 Table 7.3-1 element, mechanically tilted down by this many degrees.
    Element { tilt_deg: f64 },
    /// A column of 10 such elements, d_V apart (wavelengths), electrically tilted 12° down
    /// (θ_tilt = 102°).
    Array { d_v: f64 },
    /// TR 36.814 macro sector: 70°, 20 dB, 14 dBi, no vertical cut (what `lte-7cell` uses).
    Sector36814,
}

fn pattern(a: Antenna, boresight_deg: f64) -> AntennaPattern {
    match a {
        Antenna::Element { tilt_deg } => AntennaPattern::ThreeSector {
            boresight_deg,
            phi_3db_deg: 65.0,
            a_m_db: 30.0,
            g_max_dbi: 8.0,
            vertical: Some(VerticalPattern {
                tilt_deg,
                theta_3db_deg: 65.0,
                sla_v_db: 30.0,
            }),
        },
        Antenna::Array { d_v } => AntennaPattern::VerticalArray {
            boresight_deg,
            n_v: 10,
            d_v_wavelengths: d_v,
            tilt_deg: 12.0,
        },
        Antenna::Sector36814 => AntennaPattern::sector_36814(boresight_deg),
    }
}

/// TR 38.901 large-scale calibration, UMa, 6 GHz: what rantcp expresses of Table 7.8-1.
const UMA_6: Case = Case {
    name: "38.901 UMa 6 GHz",
    model: PathlossModel::Uma,
    isd_m: 500.0,
    h_bs_m: 25.0,
    fc_hz: 6e9,
    min_d2d_m: 35.0,
    rings: 2,
    disk: false,
    antenna: Antenna::Array { d_v: 0.5 },
    floors: true,
    high_loss: 0.5,
    gf_ref: &GF_UMA_6,
    cg_ref: Some(&CG_UMA_6),
};
/// TR 38.901 large-scale calibration, UMi-Street Canyon, 6 GHz.
const UMI_6: Case = Case {
    name: "38.901 UMi 6 GHz",
    model: PathlossModel::UmiStreetCanyon,
    isd_m: 200.0,
    h_bs_m: 10.0,
    min_d2d_m: 10.0,
    gf_ref: &GF_UMI_6,
    cg_ref: Some(&CG_UMI_6),
    ..UMA_6
};
/// The same campaign at 30 and 70 GHz (Table 7.8-1's other two frequencies).
const UMA_30: Case = Case {
    name: "38.901 UMa 30 GHz",
    fc_hz: 30e9,
    gf_ref: &GF_UMA_30,
    cg_ref: Some(&CG_UMA_30),
    ..UMA_6
};
const UMA_70: Case = Case {
    name: "38.901 UMa 70 GHz",
    fc_hz: 70e9,
    gf_ref: &GF_UMA_70,
    cg_ref: Some(&CG_UMA_70),
    ..UMA_6
};
const UMI_30: Case = Case {
    name: "38.901 UMi 30 GHz",
    fc_hz: 30e9,
    gf_ref: &GF_UMI_30,
    cg_ref: Some(&CG_UMI_30),
    ..UMI_6
};
const UMI_70: Case = Case {
    name: "38.901 UMi 70 GHz",
    fc_hz: 70e9,
    gf_ref: &GF_UMI_70,
    cg_ref: Some(&CG_UMI_70),
    ..UMI_6
};
/// The six coupling-gain cases of R1-165974.
const CG_CASES: [Case; 6] = [UMA_6, UMA_30, UMA_70, UMI_6, UMI_30, UMI_70];
/// TR 36.873 phase 1, 3D-UMa, 2 GHz, K = M = 10 (TR 38.901's UMa stands in for 3D-UMa: the
/// same LOS probability, σ_SF and LOS path loss, an NLOS formula fitted to 3D-UMa's).
const UMA_2_K10: Case = Case {
    name: "36.873 3D-UMa 2 GHz K=M=10",
    fc_hz: 2e9,
    gf_ref: &GF_3D_UMA_K10,
    cg_ref: None,
    ..UMA_6
};
const UMA_2_K1: Case = Case {
    name: "36.873 3D-UMa 2 GHz K=M=1",
    antenna: Antenna::Element { tilt_deg: 0.0 },
    gf_ref: &GF_3D_UMA_K1,
    ..UMA_2_K10
};
const UMI_2_K10: Case = Case {
    name: "36.873 3D-UMi 2 GHz K=M=10",
    fc_hz: 2e9,
    gf_ref: &GF_3D_UMI_K10,
    cg_ref: None,
    ..UMI_6
};
const UMI_2_K1: Case = Case {
    name: "36.873 3D-UMi 2 GHz K=M=1",
    antenna: Antenna::Element { tilt_deg: 0.0 },
    gf_ref: &GF_3D_UMI_K1,
    ..UMI_2_K10
};

/// Per UE: coupling gain (dB: serving antenna gain − path loss − shadowing, with an indoor
/// UE's O2I loss), the same without the O2I loss, and geometry (SIR, dB).
struct Drop {
    cg_db: Vec<f64>,
    cg_outdoor_db: Vec<f64>,
    sir_db: Vec<f64>,
    /// The UEs as dropped (position and O2I draws), for [`recomputed_cg`].
    ues: Vec<UeDraw>,
}

/// Inside the centre site's Voronoi hexagon: neighbour sites lie at 0°, 60°, ..., so the
/// hexagon's sides are ISD/2 from the centre along those directions.
fn in_hexagon(x: f64, y: f64, isd: f64) -> bool {
    (0..3).all(|k| {
        let a = (k as f64 * 60.0_f64).to_radians();
        (x * a.cos() + y * a.sin()).abs() <= isd / 2.0
    })
}

const TX_DBM: f64 = 46.0;

fn drop_ues(c: &Case, n: usize, seed: u64) -> Drop {
    let mut cfg = RadioConfig::lte_macro();
    cfg.carrier = Carrier::lte(c.fc_hz, 20_000).unwrap();
    cfg.pathloss = c.model;
    cfg.los = match c.model {
        PathlossModel::Cost231Hata { .. } => LosSource::AlwaysNlos,
        _ => LosSource::Probabilistic,
    };
    cfg.shadowing = true;
    cfg.fading.kind = FadingKind::None;
    cfg.interference = true;
    // Who is indoors is decided below, with the floor; the radio draws the rest per UE.
    cfg.o2i = c.floors.then_some(O2iConfig {
        indoor_share: 0.0,
        high_loss_share: c.high_loss,
    });
    let mut env = RadioEnvironment::new(cfg, case_cells(c), seed);
    let mut rng = Rng::for_entity(seed, "calibration/drop");
    let r = c.isd_m / 3f64.sqrt(); // circumradius of the hexagon
    let mut added = 0;
    while added < n {
        let x = (2.0 * rng.uniform() - 1.0) * r;
        let y = (2.0 * rng.uniform() - 1.0) * r;
        let d = x.hypot(y);
        let inside = if c.disk {
            d <= c.isd_m / 2.0
        } else {
            in_hexagon(x, y, c.isd_m)
        };
        if !inside || d < c.min_d2d_m {
            continue;
        }
        let mut h = 1.5;
        let inside_building = c.floors && rng.uniform() < 0.8;
        if inside_building {
            let n_fl = 4 + rng.below(5);
            h += 3.0 * rng.below(n_fl) as f64;
        }
        added += 1;
        let rnti = added as u16;
        env.add_ue(rnti, Mobility::fixed(Vec3::new(x, y, h)), 1);
        if inside_building {
            env.set_indoor(rnti, true);
        }
    }
    let mut d = Drop {
        cg_db: Vec::with_capacity(n),
        cg_outdoor_db: Vec::with_capacity(n),
        sir_db: Vec::with_capacity(n),
        ues: Vec::with_capacity(n),
    };
    for k in env.rntis() {
        let ls = env.large_scale(k);
        let cg = ls.rx_power_dbm - TX_DBM;
        d.cg_db.push(cg);
        d.cg_outdoor_db
            .push(cg + env.o2i(k).map_or(0.0, |o| o.loss_db));
        d.sir_db.push(ls.rx_power_dbm - ls.interference_dbm);
        d.ues.push(UeDraw {
            pos: ls.position,
            o2i: env.o2i(k).map(|o| (o.d_2d_in_m, o.loss_db)),
        });
    }
    d
}

/// Percentile `p` (0..100) of sorted `v` by linear interpolation between order statistics.
fn percentile(v: &[f64], p: f64) -> f64 {
    let h = (v.len() - 1) as f64 * p / 100.0;
    let (lo, hi) = (h.floor() as usize, h.ceil() as usize);
    v[lo] + (h - lo as f64) * (v[hi] - v[lo])
}

fn percentiles(v: &[f64]) -> [f64; 19] {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    PCT.map(|p| percentile(&s, p))
}

/// 8 seeds × 2500 UEs per case. With 2 × 2000 the largest deviation over the 19 percentiles
/// moved by up to 0.9 dB from one seed pair to the next (the tails and the 95th percentile of
/// a curve rising ≈ 0.5 dB per percent); with 20,000 UEs three disjoint seed sets agree within
/// 0.1 dB, so what is left is the model's own difference from the reference.
const UES: usize = 2500;
const SEEDS: [u64; 8] = [1, 2, 3, 4, 5, 6, 7, 8];

fn run(c: &Case) -> Drop {
    run_seeds(c, &SEEDS)
}

fn run_seeds(c: &Case, seeds: &[u64]) -> Drop {
    let mut all = Drop {
        cg_db: Vec::new(),
        cg_outdoor_db: Vec::new(),
        sir_db: Vec::new(),
        ues: Vec::new(),
    };
    for &s in seeds {
        let d = drop_ues(c, UES, s);
        all.cg_db.extend(d.cg_db);
        all.cg_outdoor_db.extend(d.cg_outdoor_db);
        all.sir_db.extend(d.sir_db);
        all.ues.extend(d.ues);
    }
    all
}

/// Seeds of the coupling-gain checks: 40 × 2500 = 100,000 UEs. The geometry's 20,000 are not
/// enough for the coupling gain's low tail: the indoor UEs' O2I deviation (σ_P 4.4 / 6.5 dB)
/// and 7 dB shadowing spread it, and five disjoint sets of 8 seeds put rantcp's UMa 5th
/// percentile at −149.0 … −150.0 dB and its 20th at −135.8 … −136.5 dB (UMi −141.0 … −141.7
/// and −127.4 … −128.0): seeds 1–8, the set the first xfail was measured with, lie at the top.
/// Three disjoint sets of 40 seeds agree within 0.1 dB at the 5th percentile and 0.25 dB at
/// any other (largest difference from `cl38900a` 0.92–1.11 dB UMa, 1.20–1.28 dB UMi).
fn cg_seeds() -> Vec<u64> {
    (1..=40).collect()
}

/// One UE of a drop: position and, indoors, (d_2D-in, O2I loss) as the radio drew them.
#[derive(Clone, Copy, Debug)]
struct UeDraw {
    pos: Vec3,
    o2i: Option<(f64, f64)>,
}

/// Which rules a per-link re-computation of the coupling gain applies ([`recomputed_cg`]):
/// rantcp's TR 38.901 reading ([`TR38901`]) with single departures switched on, to measure
/// what each is worth. Test-only: the radio's behaviour is TR 38.901's.
#[derive(Clone, Copy, Debug)]
struct Rules {
    /// TR 38.900's UMa LOS path loss (v14.1.0 as ns-3 mmWave's `MmWave3gppPropagationLossModel`
    /// implements it, v15.0.0 as Sionna issue #814 quotes it; QuaDRiGa's calibration tutorial:
    /// "the parameters for UMa-LOS have changed in 3GPP 38.901 v14.1.0"):
    /// PL1 = 32.4 + 20·log10(d_3D) + 20·log10(f_c), beyond d'_BP
    /// PL2 = 32.4 + 40·log10(d_3D) + 20·log10(f_c) − 10·log10(d'_BP² + (h_BS − h_UT)²),
    /// instead of TR 38.901's 28.0 + 22·log10(d_3D) … / − 9·log10(…). Also the LOS floor of
    /// the NLOS formula max(PL_LOS, PL'_NLOS).
    uma_los_38900: bool,
    /// An indoor UE's LOS probability at d_2D-out = d_2D − d_2D-in (TR 38.901 Table 7.4.2-1
    /// note; rantcp's). `false`: at d_2D, as for an outdoor UE.
    o2i_los_d2d_out: bool,
    /// An indoor UE's σ_SF from Table 7.5-6's O2I column (7 dB; rantcp's). `false`: Table
    /// 7.4.1-1's σ of the link's LOS state, as for an outdoor UE.
    o2i_sigma_sf: bool,
    /// d_2D-in one U(0, 25 m) draw (TR 36.873's rule) instead of the minimum of two
    /// (TR 38.901 Table 7.4.3-2 note; TR 38.900 v14.1.0's as ns-3 mmWave has it).
    d_2d_in_one_uniform: bool,
    /// QuaDRiGa (`qd_builder.get_pl`): the basic path loss PL_b of an indoor UE over
    /// d_3D-out = d_3D − d_3D-in (and d_2D scaled alike) instead of over d_3D.
    qd_pl_b_d3d_out: bool,
    /// QuaDRiGa (`qd_layout.gen_o2i_loss`): the O2I deviation σ_P·U(0, 1) (`rand`) instead
    /// of TR 38.901's N(0, σ_P²): 2.2 / 3.25 dB more loss on average, a narrower spread.
    qd_sigma_p_uniform: bool,
    /// QuaDRiGa's tutorial drop (`randomize_rx_positions(0.93*isd, …)`): UEs uniform in a
    /// disk of radius 0.93·ISD around the centre site instead of in its hexagon.
    qd_disk_drop: bool,
}

/// rantcp's reading of TR 38.901, as the radio implements it.
const TR38901: Rules = Rules {
    uma_los_38900: false,
    o2i_los_d2d_out: true,
    o2i_sigma_sf: true,
    d_2d_in_one_uniform: false,
    qd_pl_b_d3d_out: false,
    qd_sigma_p_uniform: false,
    qd_disk_drop: false,
};
/// QuaDRiGa's large-scale calibration set-up (`tutorials/calib_3GPP_38901_large_scale.m`,
/// v2.8.1), where it departs from rantcp's: all three QuaDRiGa departures.
const QUADRIGA: Rules = Rules {
    qd_pl_b_d3d_out: true,
    qd_sigma_p_uniform: true,
    qd_disk_drop: true,
    ..TR38901
};

/// `c`'s cells with its antenna.
fn case_cells(c: &Case) -> Vec<CellConfig> {
    hex_layout(c.rings, c.isd_m, c.h_bs_m, TX_DBM)
        .into_iter()
        .map(|mut cell| {
            if let AntennaPattern::ThreeSector { boresight_deg, .. } = cell.antenna {
                cell.antenna = pattern(c.antenna, boresight_deg);
            }
            cell
        })
        .collect()
}

/// The path loss of one link under `r` (the radio's own formula unless a rule replaces it).
fn rule_pathloss_db(model: PathlossModel, r: &Rules, los: bool, g: &LinkGeometry) -> f64 {
    if !(r.uma_los_38900 && model == PathlossModel::Uma) {
        return model.pathloss_db(los, g);
    }
    let (d3, fc) = (g.d3d_m.max(1.0), g.fc_hz / 1e9);
    let dbp = breakpoint_prime(g.h_bs_m, g.h_ut_m, g.fc_hz);
    let pl_los = if g.d2d_m <= dbp {
        32.4 + 20.0 * d3.log10() + 20.0 * fc.log10()
    } else {
        32.4 + 40.0 * d3.log10() + 20.0 * fc.log10()
            - 10.0 * (dbp * dbp + (g.h_bs_m - g.h_ut_m).powi(2)).log10()
    };
    if los {
        pl_los
    } else {
        // TR 38.900 / 38.901 Table 7.4.1-1 UMa PL'_NLOS (unchanged between them).
        let nlos = 13.54 + 39.08 * d3.log10() + 20.0 * fc.log10() - 0.6 * (g.h_ut_m - 1.5);
        nlos.max(pl_los)
    }
}

/// Coupling gain (dB) of one UE re-computed link by link under `r`, independently of the
/// radio's code but from its public pieces (Table 7.4.2-1 LOS probability, Table 7.4.1-1 path
/// loss and σ_SF, Table 7.5-6 O2I σ_SF, the antenna pattern, the layout): one LOS state and
/// one shadowing value per site (shared by its sectors), association to the strongest cell,
/// the UE's O2I loss on every link. The LOS and shadowing draws are fresh (`rng`), two per
/// site in this order whatever `r` is, so two rule sets on one stream differ only by the rule.
fn recomputed_cg(c: &Case, cells: &[CellConfig], ue: &UeDraw, r: &Rules, rng: &mut Rng) -> f64 {
    let (pos, m) = (ue.pos, c.model);
    let mut best = f64::NEG_INFINITY;
    for site in cells.chunks(3) {
        let bs = site[0].position;
        let (d2, d3) = (bs.distance_2d(pos), bs.distance(pos));
        let p = match ue.o2i {
            Some((d_in, _)) if r.o2i_los_d2d_out => m.los_probability_o2i(d2, d_in, pos.z),
            _ => m.los_probability(d2, pos.z),
        };
        let los = rng.uniform() < p;
        let mut g = LinkGeometry {
            d2d_m: d2,
            d3d_m: d3,
            h_bs_m: bs.z,
            h_ut_m: pos.z,
            fc_hz: c.fc_hz,
        };
        if let (Some((d_in, _)), true) = (ue.o2i, r.qd_pl_b_d3d_out) {
            // QuaDRiGa: d_3D-in = d_3D·d_2D-in/d_2D, PL_b over d_3D − d_3D-in.
            let f = (1.0 - d_in / d2).max(0.0);
            g.d2d_m *= f;
            g.d3d_m *= f;
        }
        let sigma = match (ue.o2i, r.o2i_sigma_sf, m.o2i_shadowing()) {
            (Some(_), true, Some((s, _))) => s,
            _ => m.shadowing_sigma_db(los, &g),
        };
        let loss = rule_pathloss_db(m, r, los, &g) + sigma * rng.normal();
        for cell in site {
            best = best.max(cell.antenna.gain_dbi(cell.position, pos) - loss);
        }
    }
    best - ue.o2i.map_or(0.0, |(_, l)| l)
}

/// A drop of `n` UEs made by the test itself (so that `r`'s QuaDRiGa departures can change
/// it): Table 7.8-1's heights and indoor share as [`drop_ues`], half high-loss buildings,
/// d_2D-in the minimum of two U(0, 25 m) (Table 7.4.3-2 note), the O2I deviation N(0, σ_P²)
/// or QuaDRiGa's σ_P·U(0, 1). Every draw is made whatever `r` is.
fn drawn_ues(c: &Case, r: &Rules, n: usize, rng: &mut Rng) -> Vec<UeDraw> {
    let reach = if r.qd_disk_drop {
        0.93 * c.isd_m
    } else {
        c.isd_m / 3f64.sqrt()
    };
    let mut ues = Vec::with_capacity(n);
    while ues.len() < n {
        let x = (2.0 * rng.uniform() - 1.0) * reach;
        let y = (2.0 * rng.uniform() - 1.0) * reach;
        let d = x.hypot(y);
        let inside = if r.qd_disk_drop {
            d <= reach
        } else {
            in_hexagon(x, y, c.isd_m)
        };
        if !inside || d < c.min_d2d_m {
            continue;
        }
        let indoor = rng.uniform() < 0.8;
        let n_fl = 4 + rng.below(5);
        let floor = rng.below(n_fl);
        let building = if rng.uniform() < c.high_loss {
            Building::HighLoss
        } else {
            Building::LowLoss
        };
        let (u1, u2) = (rng.uniform(), rng.uniform());
        let d_in = c.model.o2i_max_d_2d_in_m()
            * if r.d_2d_in_one_uniform {
                u1
            } else {
                u1.min(u2)
            };
        let (z, u) = (rng.normal(), rng.uniform());
        let deviation = if r.qd_sigma_p_uniform { u } else { z };
        ues.push(UeDraw {
            pos: Vec3::new(
                x,
                y,
                if indoor {
                    1.5 + 3.0 * floor as f64
                } else {
                    1.5
                },
            ),
            o2i: indoor.then(|| {
                (
                    d_in,
                    building.wall_loss_db(c.fc_hz) + 0.5 * d_in + building.sigma_db() * deviation,
                )
            }),
        });
    }
    ues
}

/// Coupling-gain percentiles of `c` re-computed under `r` on the test's own drop of 100,000
/// UEs ([`drawn_ues`]); the same streams for every `r`.
fn recomputed_cg_percentiles(c: &Case, r: &Rules) -> [f64; 19] {
    let cells = case_cells(c);
    let mut cg = Vec::new();
    for s in cg_seeds() {
        let mut rng = Rng::for_entity(s, "calibration/recompute");
        for ue in drawn_ues(c, r, UES, &mut rng) {
            cg.push(recomputed_cg(c, &cells, &ue, r, &mut rng));
        }
    }
    percentiles(&cg)
}

fn largest_diff(a: &[f64; 19], b: &[f64; 19]) -> f64 {
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f64::max)
}

/// Tolerance on every geometry percentile, fixed before any rantcp result was looked at: the
/// reference is read to 0.1 dB, the companies' own spread is not published with the median,
/// and rantcp's percentiles carry ≈ 0.1 dB of Monte Carlo error at 20,000 UEs; 1 dB is met by
/// a model that implements the same assumptions and missed by one that lacks an assumption
/// that matters (one element instead of the tilted column: 4–6 dB, see the README).
const TOL_DB: f64 = 1.0;

fn check_geometry(c: &Case) {
    let ours = percentiles(&run(c).sir_db);
    let bad: Vec<String> = PCT
        .iter()
        .zip(ours.iter().zip(c.gf_ref))
        .filter(|(_, (a, b))| (*a - *b).abs() > TOL_DB)
        .map(|(p, (a, b))| format!("{p} %: rantcp {a:.2} dB, 3GPP {b:.1} dB"))
        .collect();
    assert!(
        bad.is_empty(),
        "{}: geometry outside ±{TOL_DB} dB of 3GPP's median: {bad:?}",
        c.name
    );
}

#[test]
fn geometry_matches_38901_large_scale_calibration_uma() {
    check_geometry(&UMA_6);
}

/// Was an xfail (1.04 dB below at the 75th–80th percentiles) while `hex_layout` pointed the
/// sectors between two neighbour sites; with the boresights towards first-ring sites, as
/// QuaDRiGa and ns-3 lay out 3GPP's hexagonal grid, it is within 0.3 dB at every percentile.
#[test]
fn geometry_matches_38901_large_scale_calibration_umi() {
    check_geometry(&UMI_6);
}

#[test]
fn geometry_matches_36873_phase1_calibration_uma() {
    check_geometry(&UMA_2_K1);
    check_geometry(&UMA_2_K10);
}

/// Coupling gain (with the radio's O2I loss on the 80 % indoor UEs) against R1-165974's,
/// UMa and UMi at 6 GHz, on 100,000 UEs, at the geometry's tolerance. Not a blind check:
/// before the O2I was in the radio, the same O2I applied by this test to the indoor UEs' gains
/// was seen within 0.7 dB at the printed percentiles, and the building mix (half low-loss,
/// half high-loss) is QuaDRiGa's reading, not in the transcription. What it does check: the
/// radio's O2I (Table 7.4.3-2 wall losses at 6 GHz, d_2D-in, σ_P, one loss per UE on every
/// link) lands on 3GPP's curve across the whole CDF, where all low-loss buildings miss it by
/// up to 14 dB and no O2I by up to 33 dB (README "Radio: 3GPP calibration").
///
/// xfail: rantcp lies above `cl38900a` by up to 1.11 dB (UMa) and 1.26 dB (UMi), +0.6–1.3 dB
/// from 5 % to 70 % (and about the same at 30 and 70 GHz, where the O2I wall loss is 5–20 dB
/// larger). What it is made of, measured by [`recomputed_cg`]
/// (`print_coupling_gain_variants`; tests below):
/// * not a departure from TR 38.901: the per-link re-computation reproduces the radio within
///   0.23 dB ([`recomputation_reproduces_the_radios_coupling_gain`]);
/// * not the campaign's older TR 38.900: of the rules rantcp applies, only UMa's LOS path loss
///   changed (38.901 v14.1.0), and TR 38.900's formula raises rantcp's gain by 0.1 dB
///   ([`tr38900_uma_los_raises_the_coupling_gain`]); UMi, unchanged, has the same gap; TR
///   38.900's O2I (v14.1.0 as ns-3 mmWave implements it: the same wall losses, d_2D-in
///   min of two U(0, 25 m), σ_P 4.4 / 6.5 dB) is TR 38.901's;
/// * it is the size of the two O2I-link rules: an indoor UE's LOS probability at d_2D-out
///   (Table 7.4.2-1 note) and its 7 dB σ_SF (Table 7.5-6), which raise the best server's gain
///   by 0.2–0.9 dB (UMa) and up to 1.5 dB (UMi); without them every R1-165974 curve is met
///   within 0.66 dB ([`coupling_gain_with_indoor_links_as_outdoor_links_matches_r1_165974`]).
///   So is a building mix of 55 % high-loss instead of 50 % (a probe, printed by
///   `print_coupling_gain_variants`: all six within 0.87 dB); the reference cannot tell the
///   two apart, nor says whether the companies applied those rules or which mix they drew.
///   Against the R1-165974 workbook's own median over 20 companies (0–0.9 dB above
///   `cl38900a`) rantcp is within 0.82 / 0.95 dB, and inside the companies' range at every
///   percentile.
///
/// The tolerance stays and rantcp keeps TR 38.901's rules.
#[test]
#[ignore = "xfail: coupling gain above cl38900a by up to 1.11 dB (UMa) / 1.26 dB (UMi) at 5-70 %: the size of the O2I-link rules (d_2D-out LOS, 7 dB sigma_SF) or of a 55 % high-loss mix, not TR 38.900"]
fn coupling_gain_matches_38901_large_scale_calibration_with_o2i() {
    for c in [UMA_6, UMI_6] {
        let ours = percentiles(&run_seeds(&c, &cg_seeds()).cg_db);
        let cg_ref = c.cg_ref.unwrap();
        let bad: Vec<String> = PCT
            .iter()
            .zip(ours.iter().zip(cg_ref))
            .filter(|(_, (a, b))| (*a - *b).abs() > TOL_DB)
            .map(|(p, (a, b))| format!("{p} %: rantcp {a:.2} dB, 3GPP {b:.1} dB"))
            .collect();
        assert!(
            bad.is_empty(),
            "{}: coupling gain outside ±{TOL_DB} dB of 3GPP's median: {bad:?}",
            c.name
        );
    }
}

/// The per-link re-computation ([`recomputed_cg`], rantcp's rules) on the radio's own UEs
/// (positions, indoor flags, d_2D-in and O2I losses as the radio drew them) gives the radio's
/// coupling-gain percentiles: the variants measured with it differ from the radio only by
/// the rule they change. Its LOS and shadowing draws are its own, so the two differ by Monte
/// Carlo error only: 0.16–0.23 dB at 100,000 UEs in the six cases. 0.5 dB, twice that,
/// catches a re-computation that misses the O2I σ_SF (0.6–0.8 dB) or, in UMi, the d_2D-out
/// LOS rule (0.8–1.0 dB); a 0.15 dB rule such as TR 38.900's UMa LOS is measured on common
/// random numbers instead ([`tr38900_uma_los_raises_the_coupling_gain`]).
#[test]
fn recomputation_reproduces_the_radios_coupling_gain() {
    for c in [UMA_6, UMI_6] {
        let d = run_seeds(&c, &cg_seeds());
        let cells = case_cells(&c);
        let mut rng = Rng::for_entity(0, "calibration/recompute/radio-ues");
        let again: Vec<f64> = d
            .ues
            .iter()
            .map(|u| recomputed_cg(&c, &cells, u, &TR38901, &mut rng))
            .collect();
        let (radio, again) = (percentiles(&d.cg_db), percentiles(&again));
        let worst = largest_diff(&radio, &again);
        assert!(
            worst <= 0.5,
            "{}: re-computed coupling gain {worst:.2} dB from the radio's: {}",
            c.name,
            diffs(&again, &radio)
        );
    }
}

/// TR 38.900's UMa LOS path loss ([`Rules::uma_los_38900`]), which R1-165974's campaign ran
/// with, instead of TR 38.901's: on the same drop and draws (common random numbers, so the
/// difference is the formula's), it raises the coupling gain at 5–60 %, where rantcp already
/// lies 0.8–1.1 dB above 3GPP, and moves no percentile by as much as 0.3 dB. The version
/// change cannot explain the gap.
#[test]
fn tr38900_uma_los_raises_the_coupling_gain() {
    let v38901 = recomputed_cg_percentiles(&UMA_6, &TR38901);
    let v38900 = recomputed_cg_percentiles(
        &UMA_6,
        &Rules {
            uma_los_38900: true,
            ..TR38901
        },
    );
    for ((p, new), old) in PCT.iter().zip(&v38900).zip(&v38901) {
        assert!(
            (new - old).abs() < 0.3,
            "{p} %: TR 38.900's UMa LOS moves the coupling gain {:+.2} dB",
            new - old
        );
        if *p <= 60.0 {
            assert!(
                new > old,
                "{p} %: TR 38.900's UMa LOS lowers the coupling gain ({new:.2} vs {old:.2})"
            );
        }
    }
}

/// The coupling gain with an indoor UE's links drawn as outdoor links (LOS probability at
/// d_2D, Table 7.4.1-1's σ_SF: [`Rules::o2i_los_d2d_out`] and [`Rules::o2i_sigma_sf`] off) and
/// everything else as the radio has it meets all six R1-165974 curves (UMa, UMi × 6, 30,
/// 70 GHz) within the tolerance (largest 0.66 dB): the xfail's gap is the size of those two
/// TR 38.901 rules (as it is of a 5-point heavier building mix, README). A documented
/// variant, not rantcp's behaviour: the radio keeps them (TR 38.901 has them; whether the
/// companies applied them is not in the reference).
#[test]
fn coupling_gain_with_indoor_links_as_outdoor_links_matches_r1_165974() {
    let r = Rules {
        o2i_los_d2d_out: false,
        o2i_sigma_sf: false,
        ..TR38901
    };
    for c in CG_CASES {
        let cg_ref = c.cg_ref.unwrap();
        let ours = recomputed_cg_percentiles(&c, &r);
        let bad: Vec<String> = PCT
            .iter()
            .zip(ours.iter().zip(cg_ref))
            .filter(|(_, (a, b))| (*a - *b).abs() > TOL_DB)
            .map(|(p, (a, b))| format!("{p} %: {a:.2} dB, 3GPP {b:.1} dB"))
            .collect();
        assert!(bad.is_empty(), "{}: {bad:?}", c.name);
    }
}

/// Documented disagreement: TR 36.873's 3D-UMi is not the model rantcp implements. 3D-UMi
/// (TR 36.873 Table 7.2-1, from ITU-R M.2135's UMi) has σ_SF = 3 / 4 dB (LOS / NLOS) and NLOS
/// 36.7·log10(d) + 22.7 + 26·log10(f_c); TR 38.901's UMi-Street Canyon, rantcp's, has 4 /
/// 7.82 dB and 35.3·log10(d) + 22.4 + 21.3·log10(f_c). The wider shadowing spreads the
/// geometry's upper half: rantcp's 2 GHz UMi lies 0.7–3.4 dB (one element) and 0.1–1.3 dB
/// (10 elements) below the 3D-UMi curves (README "Radio: 3GPP calibration"), while at 6 GHz,
/// against TR 38.901's own UMi calibration, it is within 0.3 dB. An independent
/// re-computation with 3D-UMi's formulas lands within 0.6 dB of both 3D-UMi curves, so the gap
/// is the model, not the code. This asserts the gap as documented: never above 3GPP by more
/// than the tolerance, below it by more than the tolerance at the 80th percentile (where the
/// wider shadowing shows most; the 10-element median gap is 0.7 dB since the layout fix).
///
/// Since the indoor UEs' links are O2I links (σ_SF 7 dB in both models, TR 38.901 / TR 36.873
/// Table 7.5-6 / 7.3-6 O2I columns; LOS probability at d_2D-out) the gap is 0.6–2.4 dB with
/// one element and at most 0.8 dB with the column (0.6 at the median, 0.8 at the 80th
/// percentile): the 80 % indoor UEs no longer carry 38.901's outdoor 7.82 dB, so the model
/// difference left is the 20 % outdoor UEs' σ and the NLOS formula. The column's 80th
/// percentile gap is now within the tolerance; only the one-element one is asserted below it.
#[test]
fn umi_2ghz_is_below_36873_3d_umi_as_documented() {
    for c in [UMI_2_K1, UMI_2_K10] {
        let ours = percentiles(&run(&c).sir_db);
        for ((p, a), b) in PCT.iter().zip(&ours).zip(c.gf_ref) {
            assert!(a - b <= TOL_DB, "{} {p} %: {a:.2} vs {b}", c.name);
        }
        if c.name == UMI_2_K1.name {
            let (a, b) = (ours[15], c.gf_ref[15]);
            assert!(
                a - b < -TOL_DB,
                "{}: 80th percentile {a:.2} vs {b}: gap closed?",
                c.name
            );
        }
    }
}

fn print_rows(title: &str, ours: &[f64; 19], theirs: &[f64; 19]) {
    println!("{title}");
    for ((p, a), b) in PCT.iter().zip(ours).zip(theirs) {
        if ![5.0, 10.0, 20.0, 50.0, 80.0, 90.0, 95.0].contains(p) {
            continue;
        }
        println!(
            "  {p:>3.0} %  rantcp {a:>7.1}  3GPP {b:>7.1}  diff {:>+5.1}",
            a - b
        );
    }
}

#[test]
#[ignore = "prints the README table"]
fn print_table() {
    let variants = [
        UMA_6,
        Case {
            name: "38.901 UMa 6 GHz, d_V 0.8",
            antenna: Antenna::Array { d_v: 0.8 },
            ..UMA_6
        },
        Case {
            name: "38.901 UMa 6 GHz, one element tilted 12°",
            antenna: Antenna::Element { tilt_deg: 12.0 },
            ..UMA_6
        },
        Case {
            name: "38.901 UMa 6 GHz, all UEs at 1.5 m",
            floors: false,
            ..UMA_6
        },
        Case {
            name: "38.901 UMa 6 GHz, 7 sites",
            rings: 1,
            ..UMA_6
        },
        Case {
            name: "38.901 UMa 6 GHz, 7 sites, disk drop",
            rings: 1,
            disk: true,
            ..UMA_6
        },
        Case {
            name: "38.901 UMa 6 GHz, TR 36.814 sector",
            antenna: Antenna::Sector36814,
            ..UMA_6
        },
        Case {
            name: "38.901 UMa 6 GHz, all buildings low-loss",
            high_loss: 0.0,
            ..UMA_6
        },
        UMI_6,
        Case {
            name: "38.901 UMi 6 GHz, all buildings low-loss",
            high_loss: 0.0,
            ..UMI_6
        },
        UMA_30,
        UMA_70,
        UMI_30,
        UMI_70,
        Case {
            name: "38.901 UMi 6 GHz, d_V 0.8",
            antenna: Antenna::Array { d_v: 0.8 },
            ..UMI_6
        },
        Case {
            name: "38.901 UMi 6 GHz, one element tilted 12°",
            antenna: Antenna::Element { tilt_deg: 12.0 },
            ..UMI_6
        },
        UMA_2_K1,
        UMA_2_K10,
        UMI_2_K1,
        UMI_2_K10,
        Case {
            name: "lte-7cell's radio (COST 231-Hata, 8 dB, 7 sites, disk, 36.814 sector, 2 GHz, 1.5 m) against 3D-UMa K=M=1",
            model: PathlossModel::Cost231Hata {
                metropolitan: false,
            },
            rings: 1,
            disk: true,
            antenna: Antenna::Sector36814,
            floors: false,
            ..UMA_2_K1
        },
    ];
    for c in variants {
        let d = run(&c);
        let sir = percentiles(&d.sir_db);
        let worst = sir
            .iter()
            .zip(c.gf_ref)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0, f64::max);
        println!(
            "== {} (largest geometry |diff| over 5..95 %: {worst:.2} dB)",
            c.name
        );
        print_rows(" geometry (SIR, dB)", &sir, c.gf_ref);
        if let Some(cg_ref) = c.cg_ref.filter(|_| c.floors) {
            let d = run_seeds(&c, &cg_seeds());
            print_rows(
                " coupling gain without O2I (dB, 100,000 UEs)",
                &percentiles(&d.cg_outdoor_db),
                cg_ref,
            );
            let cg = percentiles(&d.cg_db);
            let worst = cg
                .iter()
                .zip(cg_ref)
                .map(|(a, b)| (a - b).abs())
                .fold(0.0, f64::max);
            print_rows(
                &format!(
                    " coupling gain with O2I, {:.0} % high-loss (dB; largest |diff| over 5..95 %: {worst:.2})",
                    100.0 * c.high_loss
                ),
                &cg,
                cg_ref,
            );
        }
    }
}

fn diffs(ours: &[f64; 19], theirs: &[f64; 19]) -> String {
    [0, 1, 3, 5, 7, 9, 11, 13, 15, 17, 18]
        .iter()
        .map(|&i| format!("{:+5.2}", ours[i] - theirs[i]))
        .collect::<Vec<_>>()
        .join(" ")
}

/// What the coupling-gain gap is made of: the radio on 100,000 UEs against QuaDRiGa's
/// transcription, the R1-165974 workbook's median and its companies' range, and the
/// per-link re-computation with one rule changed at a time.
#[test]
#[ignore = "prints the coupling-gain variants (README)"]
fn print_coupling_gain_variants() {
    println!("differences (dB) at 5 10 20 30 40 50 60 70 80 90 95 %");
    for c in CG_CASES {
        let cg_ref = c.cg_ref.unwrap();
        let d = run_seeds(&c, &cg_seeds());
        let radio = percentiles(&d.cg_db);
        println!("== {}", c.name);
        println!(
            "  radio, 100k UEs − QuaDRiGa cl38900a     {} | largest {:.2}",
            diffs(&radio, cg_ref),
            largest_diff(&radio, cg_ref)
        );
        let wb = match c.name {
            n if n == UMA_6.name => Some(&WB_UMA_6),
            n if n == UMI_6.name => Some(&WB_UMI_6),
            _ => None,
        };
        if let Some(wb) = wb {
            let outside = radio
                .iter()
                .zip(wb[1].iter().zip(&wb[2]))
                .filter(|(x, (lo, hi))| *x < lo || *x > hi)
                .count();
            println!(
                "  radio − R1-165974 workbook median       {} | largest {:.2}; outside the 20 companies' range at {outside} of 19",
                diffs(&radio, &wb[0]),
                largest_diff(&radio, &wb[0])
            );
        }
        let cells = case_cells(&c);
        let mut rng = Rng::for_entity(0, "calibration/recompute/radio-ues");
        let same: Vec<f64> = d
            .ues
            .iter()
            .map(|u| recomputed_cg(&c, &cells, u, &TR38901, &mut rng))
            .collect();
        let same = percentiles(&same);
        println!(
            "  re-computed on the radio's UEs − radio  {} | largest {:.2}",
            diffs(&same, &radio),
            largest_diff(&same, &radio)
        );
        let base = recomputed_cg_percentiles(&c, &TR38901);
        println!(
            "  re-computed, own drop − QuaDRiGa        {} | largest {:.2}",
            diffs(&base, cg_ref),
            largest_diff(&base, cg_ref)
        );
        let variants = [
            (
                "TR 38.900 UMa LOS path loss",
                Rules {
                    uma_los_38900: true,
                    ..TR38901
                },
            ),
            (
                "LOS at d_2D (not d_2D-out)",
                Rules {
                    o2i_los_d2d_out: false,
                    ..TR38901
                },
            ),
            (
                "outdoor σ_SF (not O2I 7 dB)",
                Rules {
                    o2i_sigma_sf: false,
                    ..TR38901
                },
            ),
            (
                "indoor links as outdoor (both)",
                Rules {
                    o2i_los_d2d_out: false,
                    o2i_sigma_sf: false,
                    ..TR38901
                },
            ),
            (
                "d_2D-in one U(0, 25 m) (TR 36.873)",
                Rules {
                    d_2d_in_one_uniform: true,
                    ..TR38901
                },
            ),
            (
                "QD: PL_b over d_3D-out",
                Rules {
                    qd_pl_b_d3d_out: true,
                    ..TR38901
                },
            ),
            (
                "QD: σ_P·U(0,1)",
                Rules {
                    qd_sigma_p_uniform: true,
                    ..TR38901
                },
            ),
            (
                "QD: disk 0.93 ISD drop",
                Rules {
                    qd_disk_drop: true,
                    ..TR38901
                },
            ),
            ("QD: all three (QuaDRiGa's set-up)", QUADRIGA),
        ];
        let mix = Case {
            high_loss: 0.55,
            ..c
        };
        let v = recomputed_cg_percentiles(&mix, &TR38901);
        println!(
            "  {:<36}   effect {} | − QuaDRiGa largest {:.2}",
            "55 % high-loss buildings (not 50 %)",
            diffs(&v, &base),
            largest_diff(&v, cg_ref)
        );
        for (name, r) in variants {
            let v = recomputed_cg_percentiles(&c, &r);
            println!(
                "  {name:<36}   effect {} | − QuaDRiGa largest {:.2}",
                diffs(&v, &base),
                largest_diff(&v, cg_ref)
            );
        }
    }
}
