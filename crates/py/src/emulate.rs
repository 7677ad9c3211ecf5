//! Bindings of the real-time emulator (rantcp-emu): conversion and its thread, no logic.
//!
//! The model is built and run on a thread of its own (the network is not `Send`); the Python
//! side holds a handle to start, stop and finish it while its own main thread starts commands
//! in the namespaces and handles signals.

use crate::{config_err, load, tables_to_py};
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use rantcp_emu::HostSpec;
use rantcp_scenario::{Run, RunOutput};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{mpsc, Arc};
use std::thread::JoinHandle;

/// The hosts a scenario's emulation makes real, and every node: ([(name, address)] of the
/// hosts, [(name, address)] of all nodes). Raises ConfigError for a scenario with several
/// networks.
#[pyfunction]
#[pyo3(signature = (spec, overrides=Vec::new(), seed=None))]
#[allow(clippy::type_complexity)]
fn emulation_hosts(
    spec: &str,
    overrides: Vec<(String, String)>,
    seed: Option<u64>,
) -> PyResult<(Vec<(String, String)>, Vec<(String, String)>)> {
    let cfg = load(spec, overrides, seed)?;
    let nets = cfg.build().map_err(config_err)?;
    if nets.len() != 1 {
        return Err(config_err(format!(
            "scenario: {} runs {} networks side by side; emulation needs a scenario with one network",
            cfg.name(),
            nets.len()
        )));
    }
    let sim = &nets[0].sim;
    let named = |n: usize| (sim.node_name(n).to_string(), sim.node_addr(n).to_string());
    let hosts = rantcp_emu::hosts(sim).into_iter().map(named).collect();
    let nodes = (0..sim.node_count()).map(named).collect();
    Ok((hosts, nodes))
}

#[derive(Default)]
struct Shared {
    stop: AtomicBool,
    now_ns: AtomicU64,
}

/// A scenario running in real time with real hosts (see rantcp-emu).
#[pyclass]
struct Emulator {
    shared: Arc<Shared>,
    go: Option<mpsc::Sender<()>>,
    thread: Option<JoinHandle<Result<RunOutput, String>>>,
    end_ns: u64,
}

#[pymethods]
impl Emulator {
    /// Build the model and open a TUN device named `tun_name` in each host's namespace
    /// (`hosts`: [(node name, namespace handle path)]), with segmentation offload when
    /// `offload`, with interrupt moderation of `moderation_ns` (0: off). The clock starts with
    /// `start()`.
    #[new]
    #[pyo3(signature = (spec, overrides, seed, out_dir, hosts, tun_name, keep_traffic, offload=false, moderation_ns=0))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        spec: &str,
        overrides: Vec<(String, String)>,
        seed: Option<u64>,
        out_dir: Option<PathBuf>,
        hosts: Vec<(String, PathBuf)>,
        tun_name: String,
        keep_traffic: bool,
        offload: bool,
        moderation_ns: u64,
    ) -> PyResult<Self> {
        let cfg = load(spec, overrides, seed)?;
        let hosts: Vec<HostSpec> = hosts
            .into_iter()
            .map(|(node, netns)| HostSpec { node, netns })
            .collect();
        let shared = Arc::new(Shared::default());
        let (ready_tx, ready_rx) = mpsc::channel::<Result<u64, String>>();
        let (go_tx, go_rx) = mpsc::channel::<()>();
        let sh = shared.clone();
        let thread = std::thread::Builder::new()
            .name("rantcp-emulator".into())
            .spawn(move || -> Result<RunOutput, String> {
                let built = Run::new(cfg, out_dir.as_deref()).and_then(|run| {
                    rantcp_emu::Emulator::new(run, &hosts, &tun_name, keep_traffic, offload)
                });
                let built = built.map(|mut e| {
                    e.set_moderation(moderation_ns);
                    e
                });
                let mut emu = match built {
                    Ok(e) => e,
                    Err(e) => {
                        let _ = ready_tx.send(Err(e.clone()));
                        return Err(e);
                    }
                };
                let _ = ready_tx.send(Ok(emu.end().as_nanos()));
                if go_rx.recv().is_err() {
                    return Err("emulation abandoned before it started".into());
                }
                emu.run(&sh.stop, &sh.now_ns)?;
                emu.finish()
            })
            .map_err(|e| {
                PyRuntimeError::new_err(format!("cannot start the emulator thread: {e}"))
            })?;
        match py.detach(move || ready_rx.recv()) {
            Ok(Ok(end_ns)) => Ok(Emulator {
                shared,
                go: Some(go_tx),
                thread: Some(thread),
                end_ns,
            }),
            Ok(Err(e)) => {
                let _ = thread.join();
                Err(PyRuntimeError::new_err(e))
            }
            Err(_) => {
                let _ = thread.join();
                Err(PyRuntimeError::new_err(
                    "the emulator thread died while starting",
                ))
            }
        }
    }

    /// Start the clock (simulated time 0 is now).
    fn start(&mut self) -> PyResult<()> {
        let go = self
            .go
            .take()
            .ok_or_else(|| PyRuntimeError::new_err("emulation already started"))?;
        go.send(())
            .map_err(|_| PyRuntimeError::new_err("the emulator thread has stopped"))
    }

    /// Ask the loop to stop (returns at once; `finish` waits for it).
    fn stop(&self) {
        self.shared.stop.store(true, Ordering::Relaxed);
    }

    /// Whether the loop is still running (false once stopped or at the scenario's end).
    #[getter]
    fn running(&self) -> bool {
        self.thread.as_ref().is_some_and(|t| !t.is_finished())
    }

    /// Simulated time reached, ns.
    #[getter]
    fn now_ns(&self) -> u64 {
        self.shared.now_ns.load(Ordering::Relaxed)
    }

    /// The scenario's end (its duration), ns.
    #[getter]
    fn end_ns(&self) -> u64 {
        self.end_ns
    }

    /// Stop, wait for the loop and return (summary JSON text, {table: {column: list}}).
    fn finish<'py>(&mut self, py: Python<'py>) -> PyResult<(String, Bound<'py, PyDict>)> {
        self.shared.stop.store(true, Ordering::Relaxed);
        self.go = None; // unstarted: the thread gives up
        let t = self
            .thread
            .take()
            .ok_or_else(|| PyRuntimeError::new_err("emulation already finished"))?;
        let out = match py.detach(|| t.join()) {
            Ok(r) => r.map_err(PyRuntimeError::new_err)?,
            Err(_) => {
                return Err(PyRuntimeError::new_err(format!(
                    "the emulator thread panicked: {}",
                    crate::panic::last_panic().unwrap_or_default()
                )))
            }
        };
        let summary = serde_json::to_string_pretty(&out.summary).expect("json");
        Ok((summary, tables_to_py(py, &out.tables)?))
    }
}

impl Drop for Emulator {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::Relaxed);
        self.go = None;
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(emulation_hosts, m)?)?;
    m.add_class::<Emulator>()?;
    Ok(())
}
