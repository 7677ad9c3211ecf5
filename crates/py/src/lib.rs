//! PyO3 bindings: conversion only, no logic (design.md §2). The Python package
//! `rantcp` (python/rantcp) wraps these into its public API and CLI.

mod emulate;
mod panic;
mod phy;
mod trace;

use pyo3::create_exception;
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use rantcp_core::Time;
use rantcp_scenario::{Column, Run, Table};
use std::path::PathBuf;

create_exception!(
    _native,
    ConfigError,
    PyValueError,
    "A config field is missing, unknown, mistyped or out of range."
);

pub(crate) fn config_err(e: impl std::fmt::Display) -> PyErr {
    ConfigError::new_err(e.to_string())
}

/// The rantcp version.
#[pyfunction]
fn version() -> &'static str {
    env!("CARGO_PKG_VERSION")
}

/// Built-in scenarios as (name, one-line description).
#[pyfunction]
fn scenarios() -> Vec<(&'static str, &'static str)> {
    rantcp_scenario::BUILTINS
        .iter()
        .map(|b| (b.name, b.description))
        .collect()
}

/// The default TOML of a built-in scenario.
#[pyfunction]
fn builtin_toml(name: &str) -> PyResult<&'static str> {
    rantcp_scenario::BUILTINS
        .iter()
        .find(|b| b.name == name)
        .map(|b| b.toml)
        .ok_or_else(|| config_err(format!("unknown built-in scenario {name:?}")))
}

/// JSON Schema of the scenario configs, as JSON text.
#[pyfunction]
fn config_schema() -> String {
    serde_json::to_string_pretty(&rantcp_scenario::config_schema()).expect("schema")
}

pub(crate) fn load(
    spec: &str,
    overrides: Vec<(String, String)>,
    seed: Option<u64>,
) -> PyResult<rantcp_scenario::ScenarioConfig> {
    let (src, text) = rantcp_scenario::resolve_source(spec).map_err(config_err)?;
    rantcp_scenario::load(&text, &src, &overrides, seed).map_err(config_err)
}

/// Validate a scenario (`builtin:NAME` or a TOML path) with overrides; returns the effective
/// config as JSON text and the warnings (one line each: a value set that the run does not
/// read). Raises ConfigError with a one-line message.
#[pyfunction]
#[pyo3(signature = (spec, overrides=Vec::new(), seed=None))]
fn validate(
    spec: &str,
    overrides: Vec<(String, String)>,
    seed: Option<u64>,
) -> PyResult<(String, Vec<String>)> {
    let cfg = load(spec, overrides, seed)?;
    let json = serde_json::to_string(&cfg.to_json()).expect("json");
    Ok((json, cfg.warnings))
}

/// One simulation run, advanced in steps so the caller can show progress.
#[pyclass(unsendable)]
struct Simulation {
    run: Option<Run>,
}

/// A column as (kind, values): kind "f64", "i64" or "str"; integer nulls are None.
fn column_to_py<'py>(py: Python<'py>, c: &Column) -> PyResult<(&'static str, Bound<'py, PyList>)> {
    Ok(match c {
        Column::F64(v) => ("f64", PyList::new(py, v)?),
        Column::I64(v) => ("i64", PyList::new(py, v)?),
        Column::OptI64(v) => ("i64", PyList::new(py, v)?),
        Column::Str(v) => ("str", PyList::new(py, v)?),
    })
}

/// {table name: {column: (kind, values)}}.
pub(crate) fn tables_to_py<'py>(py: Python<'py>, tables: &[Table]) -> PyResult<Bound<'py, PyDict>> {
    let out = PyDict::new(py);
    for t in tables {
        let cols = PyDict::new(py);
        for (name, c) in &t.columns {
            cols.set_item(name, column_to_py(py, c)?)?;
        }
        out.set_item(&t.name, cols)?;
    }
    Ok(out)
}

impl Simulation {
    fn run_ref(&self) -> PyResult<&Run> {
        self.run
            .as_ref()
            .ok_or_else(|| PyRuntimeError::new_err("simulation already finished"))
    }
}

#[pymethods]
impl Simulation {
    /// Build a run; unless `force`, refuse one whose estimated work is absurd (ConfigError).
    #[new]
    #[pyo3(signature = (spec, overrides=Vec::new(), seed=None, out_dir=None, force=false))]
    fn new(
        spec: &str,
        overrides: Vec<(String, String)>,
        seed: Option<u64>,
        out_dir: Option<PathBuf>,
        force: bool,
    ) -> PyResult<Self> {
        let cfg = load(spec, overrides, seed)?;
        let run = Run::new(cfg, out_dir.as_deref()).map_err(config_err)?;
        if !force {
            run.check_work().map_err(config_err)?;
        }
        Ok(Simulation { run: Some(run) })
    }

    /// Simulated end time, ns.
    #[getter]
    fn end_ns(&self) -> PyResult<u64> {
        Ok(self.run_ref()?.end().as_nanos())
    }
    /// Simulated time reached, ns.
    #[getter]
    fn now_ns(&self) -> PyResult<u64> {
        Ok(self.run_ref()?.now().as_nanos())
    }
    /// Events executed so far.
    #[getter]
    fn events(&self) -> PyResult<u64> {
        Ok(self.run_ref()?.events())
    }
    /// The effective config as JSON text.
    fn config_json(&self) -> PyResult<String> {
        Ok(serde_json::to_string(&self.run_ref()?.config().to_json()).expect("json"))
    }

    /// Advance to `until_ns` (clamped to the end); returns the time reached, ns.
    fn step(&mut self, py: Python<'_>, until_ns: u64) -> PyResult<u64> {
        let run = self
            .run
            .as_mut()
            .ok_or_else(|| PyRuntimeError::new_err("simulation already finished"))?;
        let r = py.detach(|| run.step(Time(until_ns)));
        r.map(|t| t.as_nanos()).map_err(PyRuntimeError::new_err)
    }

    /// Batches of time-series rows cut since the last call, oldest first: a list of
    /// {table name: {column: (kind, values)}} (kind "f64", "i64" or "str").
    fn take_batches<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let run = self
            .run
            .as_mut()
            .ok_or_else(|| PyRuntimeError::new_err("simulation already finished"))?;
        let batches = run.take_batches();
        let out = PyList::empty(py);
        for b in &batches {
            out.append(tables_to_py(py, b)?)?;
        }
        Ok(out)
    }

    /// Finish: returns (summary JSON text, the rows not taken with `take_batches` as
    /// {table name: {column: (kind, values)}}; every table appears, with no rows if need be).
    fn finish<'py>(
        &mut self,
        py: Python<'py>,
        wall_seconds: f64,
    ) -> PyResult<(String, Bound<'py, PyDict>)> {
        let run = self
            .run
            .take()
            .ok_or_else(|| PyRuntimeError::new_err("simulation already finished"))?;
        let out = run.finish(wall_seconds).map_err(PyRuntimeError::new_err)?;
        let summary = serde_json::to_string_pretty(&out.summary).expect("json");
        Ok((summary, tables_to_py(py, &out.tables)?))
    }
}

/// A size in bytes as configs write it ("6MB", "6MiB", "1500"), by the config's own rule
/// (`rantcp_config::units::Bytes::parse`: kB = 1000, KiB = 1024, rounded), so Python tools
/// that read a resolved config never carry a copy of it.
#[pyfunction]
fn parse_bytes(text: &str) -> PyResult<u64> {
    rantcp_scenario::units::Bytes::parse(text)
        .map(|b| b.0)
        .ok_or_else(|| {
            PyValueError::new_err(format!(
                "{text:?} is not a size in bytes (e.g. \"6MB\", \"6MiB\", 1500)"
            ))
        })
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    panic::register(m)?;
    m.add_function(wrap_pyfunction!(version, m)?)?;
    m.add_function(wrap_pyfunction!(scenarios, m)?)?;
    m.add_function(wrap_pyfunction!(builtin_toml, m)?)?;
    m.add_function(wrap_pyfunction!(config_schema, m)?)?;
    m.add_function(wrap_pyfunction!(validate, m)?)?;
    m.add_function(wrap_pyfunction!(parse_bytes, m)?)?;
    m.add_class::<Simulation>()?;
    m.add("ConfigError", m.py().get_type::<ConfigError>())?;
    emulate::register(m)?;
    phy::register(m)?;
    trace::register(m)?;
    Ok(())
}
