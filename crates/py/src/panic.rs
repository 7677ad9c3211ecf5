//! A quiet panic hook for the extension. Rust's default hook writes "thread '…' panicked at
//! …" (and, with RUST_BACKTRACE set, a backtrace) to stderr; pyo3 then raises the panic as a
//! `PanicException`, so the command line's one-line error came after several lines of Rust's.
//! This hook writes nothing and keeps the panic's message and place for the caller
//! (`last_panic`); `RANTCP_PANIC_DETAILS=1` keeps Rust's default output for debugging.

use pyo3::prelude::*;
use std::sync::{Mutex, Once};

static LAST: Mutex<Option<String>> = Mutex::new(None);

/// Install the hook once per process (when the module is imported).
pub(crate) fn install() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        if std::env::var_os("RANTCP_PANIC_DETAILS").is_some_and(|v| !v.is_empty() && v != "0") {
            return;
        }
        std::panic::set_hook(Box::new(|info| {
            let payload = info.payload();
            let msg = payload
                .downcast_ref::<String>()
                .map(String::as_str)
                .or_else(|| payload.downcast_ref::<&str>().copied())
                .unwrap_or("panic");
            let first = msg.lines().next().unwrap_or("");
            let text = match info.location() {
                Some(l) => format!("{first} (at {}:{})", l.file(), l.line()),
                None => first.to_string(),
            };
            if let Ok(mut last) = LAST.lock() {
                *last = Some(text);
            }
        }));
    });
}

/// The last panic of this process as one line, "message (at file:line)", if any.
#[pyfunction]
pub(crate) fn last_panic() -> Option<String> {
    LAST.lock().ok().and_then(|l| l.clone())
}

/// Panic with `message`, in a new thread when `in_thread` (the trace reader's and the
/// emulator's way) — for the tests of this hook and of the callers' one-line errors.
#[pyfunction]
#[pyo3(signature = (message, in_thread=false))]
fn panic_for_tests(message: &str, in_thread: bool) -> PyResult<()> {
    if in_thread {
        let m = message.to_string();
        let r = std::thread::spawn(move || panic!("{m}")).join();
        if r.is_err() {
            return Err(pyo3::exceptions::PyRuntimeError::new_err(format!(
                "the thread panicked: {}",
                last_panic().unwrap_or_default()
            )));
        }
        return Ok(());
    }
    panic!("{message}");
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    install();
    m.add_function(wrap_pyfunction!(last_panic, m)?)?;
    m.add_function(wrap_pyfunction!(panic_for_tests, m)?)?;
    Ok(())
}
