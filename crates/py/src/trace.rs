//! Python bindings of the packet-trace analysis (rantcp-trace): conversion only, no logic.
//!
//! `trace_open(path, idle_split_s, chunk_rows, session_base)` starts the analysis of one capture on its own
//! thread and returns a `TraceIngest`; `next_chunk()` hands over the next packet rows as
//! `{column: (bytes, numpy dtype)}` — fixed-width little-endian buffers that numpy/pyarrow wrap
//! without per-element Python objects — and `None` at the end, after which `result()` gives the
//! capture counts and the session table. The thread runs ahead by at most two chunks, so parsing
//! overlaps with whatever Python does with the previous chunk (the database insert).
//! `python/rantcp/trace/ingest.py` is the caller.

use std::fs::File;
use std::io::Read;
use std::sync::mpsc::{sync_channel, Receiver};
use std::sync::Mutex;
use std::thread::JoinHandle;

use pyo3::exceptions::{PyOSError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};
use rantcp_trace::session::quantile;
use rantcp_trace::{Analysis, Options, PacketColumns};

/// Bytes of a little-endian fixed-width column.
trait LeBytes: Copy {
    const W: usize;
    const DTYPE: &'static str;
    fn put(self, out: &mut [u8]);
}
macro_rules! le_bytes {
    ($t:ty, $dt:expr) => {
        impl LeBytes for $t {
            const W: usize = std::mem::size_of::<$t>();
            const DTYPE: &'static str = $dt;
            #[inline]
            fn put(self, out: &mut [u8]) {
                out.copy_from_slice(&self.to_le_bytes());
            }
        }
    };
}
le_bytes!(u8, "<u1");
le_bytes!(u16, "<u2");
le_bytes!(u32, "<u4");
le_bytes!(i64, "<i8");

fn column<'py, T: LeBytes>(
    py: Python<'py>,
    v: &[T],
) -> PyResult<(Bound<'py, PyBytes>, &'static str)> {
    let b = PyBytes::new_with(py, v.len() * T::W, |buf| {
        for (out, x) in buf.chunks_exact_mut(T::W).zip(v) {
            x.put(out);
        }
        Ok(())
    })?;
    Ok((b, T::DTYPE))
}

enum Msg {
    Chunk(PacketColumns),
    Done(Result<Analysis, String>),
}

/// One capture being analysed on a worker thread.
#[pyclass]
struct TraceIngest {
    rx: Mutex<Receiver<Msg>>,
    worker: Option<JoinHandle<()>>,
    result: Option<Result<Analysis, String>>,
    /// Added to each session's index in the capture to make the database's `session_id`.
    session_base: i64,
}

#[pymethods]
impl TraceIngest {
    /// The next chunk of packet rows as {column: (bytes, dtype)}, or None at the end.
    fn next_chunk<'py>(&mut self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyDict>>> {
        if self.result.is_some() {
            return Ok(None);
        }
        let rx = &self.rx;
        let msg = py.detach(|| rx.lock().expect("receiver").recv());
        match msg {
            Ok(Msg::Chunk(c)) => {
                let d = PyDict::new(py);
                let ids: Vec<i64> = c
                    .session
                    .iter()
                    .map(|&s| self.session_base + s as i64)
                    .collect();
                d.set_item("session_id", column(py, &ids)?)?;
                d.set_item("frame", column(py, &c.frame)?)?;
                d.set_item("ts_ns", column(py, &c.ts_ns)?)?;
                d.set_item("dir", column(py, &c.dir)?)?;
                d.set_item("tcp_flags", column(py, &c.tcp_flags)?)?;
                d.set_item("seq", column(py, &c.seq)?)?;
                d.set_item("ack", column(py, &c.ack)?)?;
                d.set_item("win", column(py, &c.win)?)?;
                d.set_item("payload_len", column(py, &c.payload_len)?)?;
                d.set_item("ip_len", column(py, &c.ip_len)?)?;
                d.set_item("analysis", column(py, &c.analysis)?)?;
                d.set_item("rtt_us", column(py, &c.rtt_us)?)?;
                d.set_item("in_flight", column(py, &c.in_flight)?)?;
                Ok(Some(d))
            }
            Ok(Msg::Done(r)) => {
                self.result = Some(r);
                if let Some(w) = self.worker.take() {
                    let _ = w.join();
                }
                Ok(None)
            }
            Err(_) => Err(PyRuntimeError::new_err("trace analysis thread stopped")),
        }
    }

    /// After the last chunk: {"capture": {...}, "sessions": {column: list}}. Raises ValueError
    /// with one line when the file is not a capture.
    fn result<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        while self.result.is_none() {
            self.next_chunk(py)?;
        }
        let a = match self.result.as_ref().expect("result") {
            Ok(a) => a,
            Err(e) => return Err(PyValueError::new_err(e.clone())),
        };
        let out = PyDict::new(py);
        let cap = PyDict::new(py);
        cap.set_item("format", a.read.format.map(|f| f.name()))?;
        cap.set_item("file_bytes", a.read.bytes)?;
        cap.set_item("blake3", &a.read.blake3)?;
        cap.set_item("truncated", a.read.truncated)?;
        cap.set_item("stop_reason", a.read.stop_reason.as_deref())?;
        cap.set_item("skipped_blocks", a.read.skipped_blocks)?;
        cap.set_item("frames", a.frames.frames)?;
        cap.set_item("tcp_packets", a.frames.tcp)?;
        cap.set_item("not_tcp", a.frames.not_tcp)?;
        cap.set_item("malformed", a.frames.malformed)?;
        cap.set_item("repaired", a.frames.repaired)?;
        cap.set_item("linktypes", a.frames.linktypes.clone())?;
        cap.set_item("unsupported_frames", a.frames.unsupported)?;
        cap.set_item("ts_backwards", a.frames.ts_backwards)?;
        let unsupported = a.unsupported_linktypes();
        cap.set_item(
            "unsupported_note",
            (!unsupported.is_empty()).then(|| rantcp_trace::decode::unsupported_note(&unsupported)),
        )?;
        cap.set_item("first_ts_ns", a.frames.first_ts_ns)?;
        cap.set_item("last_ts_ns", a.frames.last_ts_ns)?;
        out.set_item("capture", cap)?;
        out.set_item("sessions", session_columns(py, a)?)?;
        Ok(out)
    }
}

fn ms(v: Option<i64>) -> Option<f64> {
    v.map(|x| x as f64 / 1e6)
}

/// The session table as {column: list}. The metrics are defined in the README ("Trace
/// analysis") and computed by rantcp-trace; this only lays them out, one column at a time.
fn session_columns<'py>(py: Python<'py>, a: &Analysis) -> PyResult<Bound<'py, PyDict>> {
    let ss = &a.sessions;
    let d = PyDict::new(py);
    macro_rules! col {
        ($name:expr, |$s:ident| $e:expr) => {
            d.set_item($name, ss.iter().map(|$s| $e).collect::<Vec<_>>())?
        };
    }
    fn data(s: &rantcp_trace::Session) -> &rantcp_trace::session::DirStats {
        &s.dirs[s.data_dir()]
    }
    fn acks(s: &rantcp_trace::Session) -> &rantcp_trace::session::DirStats {
        &s.dirs[1 - s.data_dir()]
    }
    let sorted = |v: &Vec<i64>| {
        let mut v = v.clone();
        v.sort_unstable();
        v
    };
    let rtt: Vec<Vec<i64>> = ss.iter().map(|s| sorted(&data(s).rtt_ns)).collect();
    let ts_rtt: Vec<Vec<i64>> = ss.iter().map(|s| sorted(&data(s).ts_rtt_ns)).collect();
    let sum = |s: &rantcp_trace::Session, f: fn(&rantcp_trace::session::DirStats) -> u64| {
        f(&s.dirs[0]) + f(&s.dirs[1])
    };
    let hs_server = |s: &rantcp_trace::Session| match (s.syn_ts, s.synack_ts) {
        (Some(a), Some(b)) if b >= a => Some(b - a),
        _ => None,
    };
    let hs_client = |s: &rantcp_trace::Session| match (s.synack_ts, s.ack3_ts) {
        (Some(a), Some(b)) if b >= a => Some(b - a),
        _ => None,
    };

    col!("session", |s| s.index);
    col!("ip_version", |s| s.ip_version);
    col!("client_ip", |s| s.addr_text(&s.client.0));
    col!("client_port", |s| s.client.1);
    col!("server_ip", |s| s.addr_text(&s.server.0));
    col!("server_port", |s| s.server.1);
    col!("first_frame", |s| s.first_frame);
    col!("start_reason", |s| s.start.name());
    col!("mid_connection", |s| s.mid_connection);
    col!("first_ts_ns", |s| s.first_ts);
    col!("last_ts_ns", |s| s.last_ts);
    col!("duration_s", |s| (s.last_ts - s.first_ts) as f64 / 1e9);
    col!("packets", |s| sum(s, |d| d.packets));
    col!("packets_c2s", |s| s.dirs[0].packets);
    col!("packets_s2c", |s| s.dirs[1].packets);
    col!("bytes", |s| sum(s, |d| d.ip_bytes));
    col!("payload_bytes_c2s", |s| s.dirs[0].payload_bytes);
    col!("payload_bytes_s2c", |s| s.dirs[1].payload_bytes);
    col!("data_dir", |s| if s.data_dir() == 0 {
        "c2s"
    } else {
        "s2c"
    });
    col!("data_bytes", |s| data(s).unique_bytes);
    col!("download_time_s", |s| s
        .download_time_ns()
        .map(|t| t as f64 / 1e9));
    col!("download_acked", |s| s.download_acked());
    col!("throughput_bps", |s| match s.download_time_ns() {
        Some(t) if t > 0 => Some(data(s).unique_bytes as f64 * 8.0 / (t as f64 / 1e9)),
        _ => None,
    });
    col!("retx_packets", |s| sum(s, |d| d.retx_packets));
    col!("retx_bytes", |s| data(s).retx_bytes);
    col!("retx_ratio", |s| {
        let p = data(s).payload_bytes;
        if p > 0 {
            Some(data(s).retx_bytes as f64 / p as f64)
        } else {
            None
        }
    });
    col!("fast_retx", |s| sum(s, |d| d.fast_retx));
    col!("spurious_retx", |s| sum(s, |d| d.spurious_retx));
    col!("dup_acks", |s| sum(s, |d| d.dup_acks));
    col!("dup_ack_ratio", |s| {
        let p = acks(s).pure_acks;
        if p > 0 {
            Some(acks(s).dup_acks as f64 / p as f64)
        } else {
            None
        }
    });
    col!("out_of_order", |s| sum(s, |d| d.out_of_order));
    col!("lost_segments", |s| sum(s, |d| d.lost_segments));
    col!("acked_unseen", |s| sum(s, |d| d.acked_unseen));
    col!("window_full", |s| sum(s, |d| d.window_full));
    col!("zero_windows", |s| sum(s, |d| d.zero_window));
    col!("keep_alives", |s| sum(s, |d| d.keep_alives));
    col!("rsts", |s| sum(s, |d| d.rsts));
    col!("fins", |s| sum(s, |d| d.fins));
    d.set_item(
        "rtt_samples",
        rtt.iter().map(|v| v.len()).collect::<Vec<_>>(),
    )?;
    d.set_item(
        "rtt_min_ms",
        rtt.iter()
            .map(|v| ms(v.first().copied()))
            .collect::<Vec<_>>(),
    )?;
    d.set_item(
        "rtt_median_ms",
        rtt.iter().map(|v| ms(quantile(v, 0.5))).collect::<Vec<_>>(),
    )?;
    d.set_item(
        "rtt_p95_ms",
        rtt.iter()
            .map(|v| ms(quantile(v, 0.95)))
            .collect::<Vec<_>>(),
    )?;
    d.set_item(
        "ts_rtt_samples",
        ts_rtt.iter().map(|v| v.len()).collect::<Vec<_>>(),
    )?;
    d.set_item(
        "ts_rtt_min_ms",
        ts_rtt
            .iter()
            .map(|v| ms(v.first().copied()))
            .collect::<Vec<_>>(),
    )?;
    d.set_item(
        "ts_rtt_median_ms",
        ts_rtt
            .iter()
            .map(|v| ms(quantile(v, 0.5)))
            .collect::<Vec<_>>(),
    )?;
    d.set_item(
        "ts_rtt_p95_ms",
        ts_rtt
            .iter()
            .map(|v| ms(quantile(v, 0.95)))
            .collect::<Vec<_>>(),
    )?;
    col!("handshake_rtt_ms", |s| ms(hs_server(s)
        .zip(hs_client(s))
        .map(|(a, b)| a + b)));
    col!("handshake_server_ms", |s| ms(hs_server(s)));
    col!("handshake_client_ms", |s| ms(hs_client(s)));
    col!("capture_near", |s| match (hs_server(s), hs_client(s)) {
        (Some(a), Some(b)) if a < b => Some("server"),
        (Some(a), Some(b)) if b < a => Some("client"),
        _ => None,
    });
    col!("max_in_flight_bytes", |s| data(s).max_in_flight);
    // Raw window fields whose scale is unknown are not bytes: NULL (see `DirStats::rwin_unscaled`).
    col!("rwin_min_bytes", |s| acks(s)
        .rwin_min
        .filter(|_| !acks(s).rwin_unscaled));
    col!("rwin_max_bytes", |s| Some(acks(s).rwin_max)
        .filter(|_| !acks(s).rwin_unscaled));
    col!("mss_c2s", |s| s.dirs[0].mss);
    col!("mss_s2c", |s| s.dirs[1].mss);
    // The shift sent; NULL: no option; -1: unknown (no SYN seen, or its options cut by the
    // snapshot length), as tshark's "window size scaling factor".
    let wscale = |d: &rantcp_trace::session::DirStats| match (d.wscale, d.wscale_known) {
        (Some(w), _) => Some(i32::from(w)),
        (None, true) => None,
        (None, false) => Some(-1),
    };
    col!("wscale_c2s", |s| wscale(&s.dirs[0]));
    col!("wscale_s2c", |s| wscale(&s.dirs[1]));
    col!("sack_permitted", |s| s.dirs[0].sack_permitted
        && s.dirs[1].sack_permitted);
    col!("timestamps", |s| s.dirs[0].timestamps
        && s.dirs[1].timestamps);
    col!("repaired_packets", |s| s.repaired);
    Ok(d)
}

fn panic_text(p: &Box<dyn std::any::Any + Send>) -> String {
    p.downcast_ref::<String>()
        .cloned()
        .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_else(|| "panic".into())
        .lines()
        .next()
        .unwrap_or("")
        .to_string()
}

fn open_err(path: &str, e: std::io::Error) -> PyErr {
    PyOSError::new_err(format!("{path}: {e}"))
}

/// Start analysing the capture at `path` (see the module doc).
#[pyfunction]
#[pyo3(signature = (path, idle_split_s=300.0, chunk_rows=1 << 20, session_base=0))]
fn trace_open(
    path: &str,
    idle_split_s: f64,
    chunk_rows: usize,
    session_base: i64,
) -> PyResult<TraceIngest> {
    if idle_split_s.is_nan() || idle_split_s <= 0.0 {
        return Err(PyValueError::new_err(format!(
            "idle split {idle_split_s} s: must be positive"
        )));
    }
    let file = File::open(path).map_err(|e| open_err(path, e))?;
    let opts = Options {
        idle_split_ns: (idle_split_s * 1e9) as i64,
    };
    let (tx, rx) = sync_channel::<Msg>(2);
    let worker = std::thread::Builder::new()
        .name("rantcp-trace".into())
        .spawn(move || {
            // A panic is a bug, but the caller still gets one line (and rolls back), not a
            // "thread stopped" RuntimeError and a traceback.
            let chunks = tx.clone();
            let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                rantcp_trace::analyze(
                    std::io::BufReader::with_capacity(1 << 16, file),
                    opts,
                    chunk_rows,
                    |c| {
                        let _ = chunks.send(Msg::Chunk(c));
                    },
                )
            }));
            let r = match r {
                Ok(r) => r.map_err(|e| e.to_string()),
                Err(p) => Err(format!(
                    "internal error in the trace reader (please report it with this file): {}",
                    crate::panic::last_panic().unwrap_or_else(|| panic_text(&p))
                )),
            };
            let _ = tx.send(Msg::Done(r));
        })
        .map_err(|e| PyRuntimeError::new_err(e.to_string()))?;
    Ok(TraceIngest {
        rx: Mutex::new(rx),
        worker: Some(worker),
        result: None,
        session_base,
    })
}

/// BLAKE3 of a whole file, hex (the same hash `result()["capture"]["blake3"]` reports).
#[pyfunction]
fn trace_file_hash(py: Python<'_>, path: &str) -> PyResult<String> {
    py.detach(|| {
        let mut f = File::open(path).map_err(|e| open_err(path, e))?;
        let mut h = blake3::Hasher::new();
        let mut buf = vec![0u8; 1 << 20];
        loop {
            let n = f.read(&mut buf).map_err(|e| open_err(path, e))?;
            if n == 0 {
                break;
            }
            h.update(&buf[..n]);
        }
        Ok(h.finalize().to_hex().to_string())
    })
}

/// Write the synthetic benchmark capture of `packets` frames (rantcp_trace::testing).
#[pyfunction]
fn trace_write_synthetic(py: Python<'_>, path: &str, packets: u64) -> PyResult<()> {
    py.detach(|| {
        let f = File::create(path).map_err(|e| open_err(path, e))?;
        rantcp_trace::testing::write_synthetic(
            std::io::BufWriter::with_capacity(1 << 20, f),
            packets,
        )
        .map_err(|e| open_err(path, e))
    })
}

/// Per-packet analysis bits as (bit, name), for the SQL views.
#[pyfunction]
fn trace_flag_names() -> Vec<(u16, &'static str)> {
    rantcp_trace::flag::NAMES.to_vec()
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<TraceIngest>()?;
    m.add_function(wrap_pyfunction!(trace_open, m)?)?;
    m.add_function(wrap_pyfunction!(trace_file_hash, m)?)?;
    m.add_function(wrap_pyfunction!(trace_write_synthetic, m)?)?;
    m.add_function(wrap_pyfunction!(trace_flag_names, m)?)?;
    Ok(())
}
