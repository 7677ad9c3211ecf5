"""Type stubs for the native extension (PyO3, crates/py/src). Times are integer nanoseconds.

Checked against the built module by `make typecheck` (mypy.stubtest): names, parameter names,
order and defaults; a default the module's signature does not spell out (a Rust expression) is
written `...` here. Integer parameters are Rust integers, most of them unsigned (u8 ... u64): a
negative or too large int raises OverflowError.
"""

import os
from typing import Any, Literal, Self, final

from rantcp.phy import Seed004Trace
from rantcp.trace.schema import TraceResult

__all__ = [
    "last_panic",
    "panic_for_tests",
    "version",
    "scenarios",
    "builtin_toml",
    "config_schema",
    "validate",
    "parse_bytes",
    "Simulation",
    "ConfigError",
    "emulation_hosts",
    "Emulator",
    "phy_lte_tbs",
    "phy_lte_tbs_mcs",
    "phy_nr_tbs",
    "phy_nr_tbs_raw",
    "phy_pathloss",
    "phy_shadowing_sigma",
    "phy_los_probability",
    "phy_bler",
    "phy_threshold_sinr",
    "phy_cqi",
    "phy_mcs_from_cqi",
    "phy_noise_dbm",
    "phy_n_prb",
    "phy_tb_size_bits",
    "phy_seed004_trace",
    "TraceIngest",
    "trace_open",
    "trace_file_hash",
    "trace_write_synthetic",
    "trace_flag_names",
]

# `config_overrides` as the core takes them: (dotted path, TOML value text).
_Overrides = list[tuple[str, str]]
# A time-series column as (kind, values): "f64" floats, "i64" ints (None where null), "str".
_Column = tuple[Literal["f64", "i64", "str"], list[float] | list[int | None] | list[str]]
# Time-series tables {table name: {column name: column}} (crates/py/src/lib.rs tables_to_py).
_Tables = dict[str, dict[str, _Column]]
_Path = str | os.PathLike[str]

class ConfigError(ValueError):
    """A config field is missing, unknown, mistyped or out of range (one-line message)."""

def version() -> str: ...
def scenarios() -> list[tuple[str, str]]:
    """Built-in scenarios as (name, one-line description)."""

def builtin_toml(name: str) -> str:
    """The default TOML of a built-in scenario."""

def config_schema() -> str:
    """JSON Schema of the scenario configs, as JSON text."""

def validate(spec: str, overrides: _Overrides = ..., seed: int | None = None) -> tuple[str, list[str]]:
    """Validate `builtin:NAME` or a TOML path with overrides; returns the effective config as JSON
    and the warnings (values set that the run does not read), one line each."""

def parse_bytes(text: str) -> int:
    """A config size ("6MB", "6MiB", "1500") in bytes, by the config's own rule; ValueError if not one."""

@final
class Simulation:
    """One simulation run, advanced in steps. Every method raises RuntimeError once finished."""

    def __new__(
        cls,
        spec: str,
        overrides: _Overrides = ...,
        seed: int | None = None,
        out_dir: _Path | None = None,
        force: bool = False,
    ) -> Self: ...
    @property
    def end_ns(self) -> int: ...
    @property
    def now_ns(self) -> int: ...
    @property
    def events(self) -> int: ...
    def config_json(self) -> str: ...
    def step(self, until_ns: int) -> int: ...
    def take_batches(self) -> list[_Tables]: ...
    def finish(self, wall_seconds: float) -> tuple[str, _Tables]: ...

# Real-time emulation (wrapped by rantcp.emulation).
def emulation_hosts(
    spec: str, overrides: _Overrides = ..., seed: int | None = None
) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """([(host, address)], [(node, address)]) of a one-network scenario."""

@final
class Emulator:
    """A scenario against the wall clock with real hosts behind TUN devices."""

    def __new__(
        cls,
        spec: str,
        overrides: _Overrides,
        seed: int | None,
        out_dir: _Path | None,
        hosts: list[tuple[str, _Path]],
        tun_name: str,
        keep_traffic: bool,
        offload: bool = False,
        moderation_ns: int = 0,
    ) -> Self:
        """`hosts`: (scenario node, network namespace path) pairs."""

    def start(self) -> None: ...
    def stop(self) -> None: ...
    @property
    def running(self) -> bool: ...
    @property
    def now_ns(self) -> int: ...
    @property
    def end_ns(self) -> int: ...
    def finish(self) -> tuple[str, _Tables]: ...

# Radio/PHY functions (wrapped with docs and units by rantcp.phy). `table` is an MCS table name,
# "lte", "nr1" or "nr2"; the `...` gap and width defaults are rantcp.phy's DEFAULT_GAP_DB and
# DEFAULT_WIDTH_DB.
def phy_lte_tbs(i_tbs: int, n_prb: int) -> int: ...
def phy_lte_tbs_mcs(mcs: int, n_prb: int, layers: int = 1) -> int: ...
def phy_nr_tbs(
    n_prb: int,
    mcs: int,
    table: str = "nr1",
    layers: int = 1,
    n_symb: int = 12,
    n_dmrs_prb: int = 12,
    n_oh_prb: int = 0,
) -> int: ...
def phy_nr_tbs_raw(
    n_prb: int,
    qm: int,
    r_x1024: float,
    layers: int = 1,
    n_symb: int = 12,
    n_dmrs_prb: int = 12,
    n_oh_prb: int = 0,
) -> int: ...
def phy_pathloss(
    model_name: str, d2d_m: float, los: bool = True, fc_hz: float = 28e9, h_bs_m: float = 10.0, h_ut_m: float = 1.5
) -> float: ...
def phy_shadowing_sigma(
    model_name: str,
    los: bool = True,
    d2d_m: float = 100.0,
    fc_hz: float = 28e9,
    h_bs_m: float = 10.0,
    h_ut_m: float = 1.5,
) -> float: ...
def phy_los_probability(model_name: str, d2d_m: float, h_ut_m: float = 1.5) -> float: ...
def phy_bler(sinr_db: float, mcs: int, table: str = "nr1", gap_db: float = ..., width_db: float = ...) -> float: ...
def phy_threshold_sinr(mcs: int, table: str = "nr1", gap_db: float = ...) -> float: ...
def phy_cqi(sinr_db: float, table: str = "nr1", gap_db: float = ...) -> int: ...
def phy_mcs_from_cqi(cqi: int, table: str = "nr1") -> int: ...
def phy_noise_dbm(bandwidth_hz: float, noise_figure_db: float = 0.0) -> float: ...
def phy_n_prb(bandwidth_mhz: float, scs_khz: int = 0, fr2: bool = False) -> int: ...
def phy_tb_size_bits(mcs: int, n_prb: int, layers: int = 1, table: str = "nr1") -> int: ...
def phy_seed004_trace(step_ms: int = 10, drive_s: int = 25, seed: int = 1, fading: bool = True) -> Seed004Trace: ...

# Trace analysis (crates/py/src/trace.rs).
@final
class TraceIngest:
    """One capture being analysed on a worker thread (made by `trace_open`)."""

    def next_chunk(self) -> dict[str, tuple[bytes, str]] | None:
        """The next chunk of packet rows as {column: (little-endian bytes, numpy dtype)}, or None
        at the end."""

    def result(self) -> TraceResult:
        """After the last chunk: {"capture": {...}, "sessions": {column: list}}; ValueError with
        one line when the file is not a capture."""

def trace_open(path: str, idle_split_s: float = 300.0, chunk_rows: int = ..., session_base: int = 0) -> TraceIngest:
    """Start analysing the capture at `path` (`chunk_rows` defaults to 1 << 20)."""

def trace_file_hash(path: str) -> str: ...
def trace_write_synthetic(path: str, packets: int) -> None: ...
def trace_flag_names() -> list[tuple[int, str]]: ...
def last_panic() -> str | None:
    """The last Rust panic of this process as one line, "message (at file:line)" (the
    extension's panic hook prints nothing; see crates/py/src/panic.rs)."""

def panic_for_tests(message: str, in_thread: bool = False) -> None:
    """Panic with `message` (in a new thread when `in_thread`: then RuntimeError) — tests only."""
