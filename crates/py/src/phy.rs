//! Python bindings of the radio/PHY functions (rantcp-ran): conversion only, no logic.
//!
//! Registered on the native module as flat functions named `phy_*` (so
//! `rantcp._native.phy_lte_tbs(26, 100) == 75376`); `python/rantcp/phy.py` re-exports them
//! without the prefix and documents the units.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use rantcp_core::{Duration, Time};
use rantcp_ran::frame::{lte_n_prb, nr_n_prb, FrequencyRange};
use rantcp_ran::geometry::Vec3;
use rantcp_ran::mobility::seed004_urban_route;
use rantcp_ran::obstacles::seed004_obstacles;
use rantcp_ran::pathloss::{LinkGeometry, PathlossModel};
use rantcp_ran::phy::{self, BlerModel, CqiTable, McsTable, NrAllocation};
use rantcp_ran::radio::{LosSource, RadioConfig, RadioEnvironment};

fn model(name: &str) -> PyResult<PathlossModel> {
    PathlossModel::from_name(name).ok_or_else(|| {
        PyValueError::new_err(format!(
            "unknown path-loss model {name:?} (umi, uma, rma, inh, inh-open, cost231, cost231-metro, seed004)"
        ))
    })
}

fn mcs_table(name: &str) -> PyResult<McsTable> {
    match name.to_ascii_lowercase().as_str() {
        "lte" => Ok(McsTable::Lte),
        "nr1" | "nr" | "1" => Ok(McsTable::Nr1),
        "nr2" | "2" => Ok(McsTable::Nr2),
        _ => Err(PyValueError::new_err(format!(
            "unknown MCS table {name:?} (lte, nr1, nr2)"
        ))),
    }
}

fn bler_model(table: &str, gap_db: f64, width_db: f64) -> PyResult<BlerModel> {
    if width_db <= 0.0 {
        return Err(PyValueError::new_err("width_db must be positive"));
    }
    Ok(BlerModel {
        table: mcs_table(table)?,
        gap_db,
        width_db,
    })
}

/// LTE TBS (bits), TS 36.213 Table 7.1.7.2.1-1.
#[pyfunction]
fn phy_lte_tbs(i_tbs: u8, n_prb: u16) -> PyResult<u32> {
    phy::lte_tbs_bits(i_tbs, n_prb).ok_or_else(|| {
        PyValueError::new_err(format!(
            "no TBS for I_TBS {i_tbs}, N_PRB {n_prb} (0..=26, 1..=110)"
        ))
    })
}

/// LTE DL TBS (bits) for an I_MCS (Table 7.1.7.1-1) and layer count.
#[pyfunction]
#[pyo3(signature = (mcs, n_prb, layers=1))]
fn phy_lte_tbs_mcs(mcs: u8, n_prb: u16, layers: u8) -> PyResult<u32> {
    phy::lte_tbs_bits_for_mcs(mcs, n_prb, layers)
        .ok_or_else(|| PyValueError::new_err(format!("no TBS for I_MCS {mcs}, N_PRB {n_prb}")))
}

/// NR TBS (bits) by TS 38.214 §5.1.3.2 for an MCS index of table `table` ("nr1"/"nr2").
#[pyfunction]
#[pyo3(signature = (n_prb, mcs, table="nr1", layers=1, n_symb=12, n_dmrs_prb=12, n_oh_prb=0))]
fn phy_nr_tbs(
    n_prb: u32,
    mcs: u8,
    table: &str,
    layers: u32,
    n_symb: u32,
    n_dmrs_prb: u32,
    n_oh_prb: u32,
) -> PyResult<u32> {
    let t = mcs_table(table)?;
    let e = t.nr_entry(mcs).ok_or_else(|| {
        PyValueError::new_err(format!("MCS {mcs} is reserved or not an NR table index"))
    })?;
    check_nr_allocation(layers, n_symb)?;
    Ok(phy::nr_tbs_bits(&phy::NrTbsInput {
        n_prb,
        n_symb,
        n_dmrs_prb,
        n_oh_prb,
        re_cap_prb: phy::nr::RE_CAP_PRB,
        mcs: e,
        layers,
    }))
}

/// The layers and symbols of an NR TBS calculation, checked the same way for `phy_nr_tbs` and
/// `phy_nr_tbs_raw` (the raw one took any value and returned a number: 0 for 0 layers).
fn check_nr_allocation(layers: u32, n_symb: u32) -> PyResult<()> {
    // TS 38.214 §5.1.3.2: one codeword carries at most 4 layers.
    if !(1..=4).contains(&layers) {
        return Err(PyValueError::new_err(format!(
            "layers {layers}: must be 1 to 4 (one codeword, TS 38.214 §5.1.3.2)"
        )));
    }
    // TS 38.214 §5.1.3.2: N_symb^sh, the PDSCH/PUSCH symbols of one 14-symbol slot.
    if !(1..=14).contains(&n_symb) {
        return Err(PyValueError::new_err(format!(
            "n_symb {n_symb}: must be 1 to 14 (symbols of one slot)"
        )));
    }
    Ok(())
}

/// NR TBS (bits) from an explicit modulation order and code rate × 1024.
#[pyfunction]
#[pyo3(signature = (n_prb, qm, r_x1024, layers=1, n_symb=12, n_dmrs_prb=12, n_oh_prb=0))]
fn phy_nr_tbs_raw(
    n_prb: u32,
    qm: u8,
    r_x1024: f64,
    layers: u32,
    n_symb: u32,
    n_dmrs_prb: u32,
    n_oh_prb: u32,
) -> PyResult<u32> {
    // A code rate is in (0, 1] (TS 38.214 Table 5.1.3.1-1 tops out at 948/1024); NaN made the
    // TBS step 4 take log2 of 0 and panic (found by fuzzing the API).
    if !(r_x1024 > 0.0 && r_x1024 <= 1024.0) {
        return Err(PyValueError::new_err(format!(
            "r_x1024 {r_x1024}: the code rate x 1024 must be in (0, 1024]"
        )));
    }
    // TS 38.214 Tables 5.1.3.1-1..3 (2, 4, 6, 8) and 6.1.4.1-1 (1: pi/2-BPSK).
    if ![1, 2, 4, 6, 8].contains(&qm) {
        return Err(PyValueError::new_err(format!(
            "qm {qm}: the modulation order must be 1, 2, 4, 6 or 8"
        )));
    }
    check_nr_allocation(layers, n_symb)?;
    Ok(phy::nr_tbs_bits(&phy::NrTbsInput {
        n_prb,
        n_symb,
        n_dmrs_prb,
        n_oh_prb,
        re_cap_prb: phy::nr::RE_CAP_PRB,
        mcs: phy::McsEntry { qm, r_x1024 },
        layers,
    }))
}

/// Path loss (dB).
#[pyfunction]
#[pyo3(signature = (model_name, d2d_m, los=true, fc_hz=28e9, h_bs_m=10.0, h_ut_m=1.5))]
fn phy_pathloss(
    model_name: &str,
    d2d_m: f64,
    los: bool,
    fc_hz: f64,
    h_bs_m: f64,
    h_ut_m: f64,
) -> PyResult<f64> {
    Ok(model(model_name)?.pathloss_db(los, &LinkGeometry::new(d2d_m, h_bs_m, h_ut_m, fc_hz)))
}

/// Shadowing standard deviation (dB).
#[pyfunction]
#[pyo3(signature = (model_name, los=true, d2d_m=100.0, fc_hz=28e9, h_bs_m=10.0, h_ut_m=1.5))]
fn phy_shadowing_sigma(
    model_name: &str,
    los: bool,
    d2d_m: f64,
    fc_hz: f64,
    h_bs_m: f64,
    h_ut_m: f64,
) -> PyResult<f64> {
    Ok(
        model(model_name)?
            .shadowing_sigma_db(los, &LinkGeometry::new(d2d_m, h_bs_m, h_ut_m, fc_hz)),
    )
}

/// LOS probability (0..1), TR 38.901 Table 7.4.2-1.
#[pyfunction]
#[pyo3(signature = (model_name, d2d_m, h_ut_m=1.5))]
fn phy_los_probability(model_name: &str, d2d_m: f64, h_ut_m: f64) -> PyResult<f64> {
    Ok(model(model_name)?.los_probability(d2d_m, h_ut_m))
}

/// Block error probability (0..1) of one transport block.
#[pyfunction]
#[pyo3(signature = (sinr_db, mcs, table="nr1", gap_db=phy::cqi::DEFAULT_GAP_DB, width_db=phy::bler::DEFAULT_WIDTH_DB))]
fn phy_bler(sinr_db: f64, mcs: u8, table: &str, gap_db: f64, width_db: f64) -> PyResult<f64> {
    Ok(bler_model(table, gap_db, width_db)?.bler(sinr_db, mcs))
}

/// 10 %-BLER threshold SINR of an MCS (dB).
#[pyfunction]
#[pyo3(signature = (mcs, table="nr1", gap_db=phy::cqi::DEFAULT_GAP_DB))]
fn phy_threshold_sinr(mcs: u8, table: &str, gap_db: f64) -> PyResult<f64> {
    bler_model(table, gap_db, 1.0)?
        .threshold_db(mcs)
        .ok_or_else(|| PyValueError::new_err(format!("MCS {mcs} is reserved")))
}

/// Wideband CQI (0..15) for a per-layer SINR (dB).
#[pyfunction]
#[pyo3(signature = (sinr_db, table="nr1", gap_db=phy::cqi::DEFAULT_GAP_DB))]
fn phy_cqi(sinr_db: f64, table: &str, gap_db: f64) -> PyResult<u8> {
    let ct: CqiTable = mcs_table(table)?.cqi_table();
    Ok(phy::cqi_from_sinr(sinr_db, ct, gap_db))
}

/// MCS index for a CQI.
#[pyfunction]
#[pyo3(signature = (cqi, table="nr1"))]
fn phy_mcs_from_cqi(cqi: u8, table: &str) -> PyResult<u8> {
    if cqi > 15 {
        return Err(PyValueError::new_err("CQI must be 0..=15"));
    }
    Ok(mcs_table(table)?.mcs_from_cqi(cqi))
}

/// Thermal noise power (dBm): −174 + 10·log10(B) + NF.
#[pyfunction]
#[pyo3(signature = (bandwidth_hz, noise_figure_db=0.0))]
fn phy_noise_dbm(bandwidth_hz: f64, noise_figure_db: f64) -> f64 {
    -174.0 + 10.0 * bandwidth_hz.log10() + noise_figure_db
}

/// PRB count: LTE (bandwidth_mhz in 1.4, 3, 5, 10, 15, 20) when scs_khz == 0, else NR.
#[pyfunction]
#[pyo3(signature = (bandwidth_mhz, scs_khz=0, fr2=false))]
fn phy_n_prb(bandwidth_mhz: f64, scs_khz: u32, fr2: bool) -> PyResult<u16> {
    let r = if scs_khz == 0 {
        lte_n_prb((bandwidth_mhz * 1000.0).round() as u32)
    } else {
        let fr = if fr2 {
            FrequencyRange::Fr2
        } else {
            FrequencyRange::Fr1
        };
        nr_n_prb(fr, scs_khz, bandwidth_mhz.round() as u32)
    };
    r.ok_or_else(|| {
        PyValueError::new_err(format!(
            "no PRB count for {bandwidth_mhz} MHz at {scs_khz} kHz"
        ))
    })
}

/// TBS (bits) for the radio defaults of a preset ("lte" / "mmwave").
#[pyfunction]
#[pyo3(signature = (mcs, n_prb, layers=1, table="nr1"))]
fn phy_tb_size_bits(mcs: u8, n_prb: u32, layers: u8, table: &str) -> PyResult<u32> {
    Ok(phy::tb_size_bits(
        mcs_table(table)?,
        mcs,
        n_prb,
        layers,
        &NrAllocation::default(),
    ))
}

/// Seed 004's urban route through the radio model (28 GHz defaults, 2-D box blockage):
/// a dict of lists sampled every `step_ms`: t_s, x_m, y_m, los, pathloss_db, sinr_db, cqi, mcs.
#[pyfunction]
#[pyo3(signature = (step_ms=10, drive_s=25, seed=1, fading=true))]
fn phy_seed004_trace<'py>(
    py: Python<'py>,
    step_ms: u64,
    drive_s: u64,
    seed: u64,
    fading: bool,
) -> PyResult<Bound<'py, PyDict>> {
    if step_ms == 0 {
        return Err(PyValueError::new_err("step_ms must be positive"));
    }
    let mut cfg = RadioConfig::mmwave_28ghz();
    cfg.los = LosSource::Geometry2d(seed004_obstacles());
    if !fading {
        cfg.fading = rantcp_ran::fading::FadingConfig::NONE;
    }
    let table = cfg.mcs_table;
    let gap = cfg.gap_db;
    let mut env = RadioEnvironment::single_cell(cfg, Vec3::new(0.0, 0.0, 15.0), 30.0, seed);
    env.add_ue(1, seed004_urban_route(Duration::from_secs(drive_s)), 1);
    let end = Time::from_secs(35 + drive_s);
    let (mut t_s, mut xs, mut ys, mut los, mut pl, mut sinr, mut cqi, mut mcs) = (
        vec![],
        vec![],
        vec![],
        vec![],
        vec![],
        vec![],
        vec![],
        vec![],
    );
    let mut t = Time::ZERO;
    while t <= end {
        let s = env.sinr_db(1, t);
        let ls = env.large_scale(1);
        let c = phy::cqi_from_sinr(s, table.cqi_table(), gap);
        t_s.push(t.as_secs_f64());
        xs.push(ls.position.x);
        ys.push(ls.position.y);
        los.push(ls.los);
        pl.push(ls.pathloss_db);
        sinr.push(s);
        // u16, not u8: PyO3 turns Vec<u8> into `bytes`.
        cqi.push(c as u16);
        mcs.push(table.mcs_from_cqi(c) as u16);
        t += Duration::from_millis(step_ms);
    }
    let d = PyDict::new(py);
    d.set_item("t_s", t_s)?;
    d.set_item("x_m", xs)?;
    d.set_item("y_m", ys)?;
    d.set_item("los", los)?;
    d.set_item("pathloss_db", pl)?;
    d.set_item("sinr_db", sinr)?;
    d.set_item("cqi", cqi)?;
    d.set_item("mcs", mcs)?;
    Ok(d)
}

/// Add the `phy_*` functions to the native module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(phy_lte_tbs, m)?)?;
    m.add_function(wrap_pyfunction!(phy_lte_tbs_mcs, m)?)?;
    m.add_function(wrap_pyfunction!(phy_nr_tbs, m)?)?;
    m.add_function(wrap_pyfunction!(phy_nr_tbs_raw, m)?)?;
    m.add_function(wrap_pyfunction!(phy_pathloss, m)?)?;
    m.add_function(wrap_pyfunction!(phy_shadowing_sigma, m)?)?;
    m.add_function(wrap_pyfunction!(phy_los_probability, m)?)?;
    m.add_function(wrap_pyfunction!(phy_bler, m)?)?;
    m.add_function(wrap_pyfunction!(phy_threshold_sinr, m)?)?;
    m.add_function(wrap_pyfunction!(phy_cqi, m)?)?;
    m.add_function(wrap_pyfunction!(phy_mcs_from_cqi, m)?)?;
    m.add_function(wrap_pyfunction!(phy_noise_dbm, m)?)?;
    m.add_function(wrap_pyfunction!(phy_n_prb, m)?)?;
    m.add_function(wrap_pyfunction!(phy_tb_size_bits, m)?)?;
    m.add_function(wrap_pyfunction!(phy_seed004_trace, m)?)?;
    Ok(())
}
