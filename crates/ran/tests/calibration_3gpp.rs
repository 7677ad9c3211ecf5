//! System-level check of the radio against 3GPP's large-scale calibration campaigns: the CDFs
//! of geometry (and coupling gain) of many dropped UEs, percentile by percentile, against the
//! median over the companies that took part.
//!
//! Reference numbers (the companies' median at the percentiles 5, 10, ..., 95), as transcribed
//! by Fraunhofer HHI's QuaDRiGa (`tutorials/calib_3GPP_ref_data.m`, commit 03ce921):
//! * TR 38.901 §7.8.1 large-scale calibration (assumptions: Table 7.8-1), results of
//!   R1-165974 (RAN1 #86, August 2016, run with TR 38.900 v14.0.0's parameters): arrays
//!   `gf38900a` (geometry) and `cl38900a` (coupling gain), UMa and UMi-Street Canyon, 6 GHz.
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
//! `cargo test --release -p rantcp-ran --test calibration_3gpp -- --ignored --nocapture` prints
//! the README's table and the variants that isolate each assumption.

use rantcp_core::Rng;
use rantcp_ran::antenna::{AntennaPattern, VerticalPattern};
use rantcp_ran::fading::FadingKind;
use rantcp_ran::frame::Carrier;
use rantcp_ran::geometry::Vec3;
use rantcp_ran::mobility::Mobility;
use rantcp_ran::pathloss::PathlossModel;
use rantcp_ran::radio::{hex_layout, LosSource, O2iConfig, RadioConfig, RadioEnvironment};

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
    let cells = hex_layout(c.rings, c.isd_m, c.h_bs_m, TX_DBM)
        .into_iter()
        .map(|mut cell| {
            if let AntennaPattern::ThreeSector { boresight_deg, .. } = cell.antenna {
                cell.antenna = pattern(c.antenna, boresight_deg);
            }
            cell
        })
        .collect();
    let mut env = RadioEnvironment::new(cfg, cells, seed);
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
    };
    for k in env.rntis() {
        let ls = env.large_scale(k);
        let cg = ls.rx_power_dbm - TX_DBM;
        d.cg_db.push(cg);
        d.cg_outdoor_db
            .push(cg + env.o2i(k).map_or(0.0, |o| o.loss_db));
        d.sir_db.push(ls.rx_power_dbm - ls.interference_dbm);
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
    let mut all = Drop {
        cg_db: Vec::new(),
        cg_outdoor_db: Vec::new(),
        sir_db: Vec::new(),
    };
    for s in SEEDS {
        let d = drop_ues(c, UES, s);
        all.cg_db.extend(d.cg_db);
        all.cg_outdoor_db.extend(d.cg_outdoor_db);
        all.sir_db.extend(d.sir_db);
    }
    all
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
/// UMa and UMi at 6 GHz, at the geometry's tolerance. Not a blind check: before the O2I was
/// in the radio, the same O2I applied by this test to the indoor UEs' gains was seen within
/// 0.7 dB at the printed percentiles, and the building mix (half low-loss, half high-loss)
/// is QuaDRiGa's reading, not in the transcription. What it does check: the radio's O2I
/// (Table 7.4.3-2 wall losses at 6 GHz, d_2D-in, σ_P, one loss per UE on every link) lands
/// on 3GPP's curve across the whole CDF, where all low-loss buildings miss it by up to 14 dB
/// and no O2I by up to 33 dB (README "Radio: 3GPP calibration").
///
/// xfail since the `hex_layout` orientation fix: written against the old orientation (UMa
/// within 0.62 dB, UMi 0.65 dB), it now gives UMa +1.14 dB at the 5th percentile (+0.8–0.9 dB
/// at 10–20 %) and UMi 0.98 dB. Pointing the sectors at the neighbour sites raises the
/// serving gain of the cell-edge UEs; the building mix the low tail depends on is an
/// assumption. The tolerance stays; the disagreement is reported in the README.
///
/// Since an indoor UE's links are O2I links (LOS probability at d_2D-out, Table 7.4.2-1 note;
/// σ_SF 7 dB, Table 7.5-6) both lie further above: UMa up to +1.42 dB (+1.1–1.4 dB from 5 %
/// to 60 %), UMi up to +1.63 dB (+1.2–1.5 dB at 5–50 %).
#[test]
#[ignore = "xfail: coupling gain above 3GPP's by up to 1.42 dB (UMa) / 1.63 dB (UMi) at 5-60 %"]
fn coupling_gain_matches_38901_large_scale_calibration_with_o2i() {
    for c in [UMA_6, UMI_6] {
        let ours = percentiles(&run(&c).cg_db);
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
            print_rows(
                " coupling gain without O2I (dB)",
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
