"""The Python API: run a scenario, get its summary and time series as pandas DataFrames.

A run's output folder holds:
  summary.json        run metadata (version, seed, config echo), per-flow and per-link figures;
                      wall-clock fields live only under the "wall" key
  <table>.parquet     time series, e.g. flows.parquet (one row per flow per sample), written
                      while the run goes in row groups of ROW_GROUP_ROWS rows, so memory stays
                      flat however long the run; integer columns hold nulls where a value does
                      not exist (ssthresh before it is first set, bbr_mode of non-BBR flows)
  plots/*.png         goodput, cwnd and RTT over time (when output.plots is set: they cost
                      matplotlib's start-up, about half a second)
  pcap/<iface>.pcap   when output.pcap is set
Same config and seed give byte-identical summary.json (apart from "wall") and Parquet files.
"""

from __future__ import annotations

import importlib
import json
import math
import os
import time
import warnings as _warnings
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rantcp import _native

if TYPE_CHECKING:
    import pandas as pd


def _override_text(value: Any) -> str:
    """Render a Python override value as the text the config loader parses (a TOML literal)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise _native.ConfigError(f"override value {value!r} is not a finite number")
        return repr(value)
    if isinstance(value, str):
        return value
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(json.dumps(v) if isinstance(v, str) else _override_text(v) for v in value) + "]"
    raise _native.ConfigError(f"override value {value!r}: use a number, bool, string or list")


def normalise_overrides(overrides: Mapping[str, Any] | None) -> list[tuple[str, str]]:
    """(path, literal text) pairs in the order given. A value that has no literal text is a
    ConfigError naming its path."""
    out = []
    for k, v in (overrides or {}).items():
        try:
            out.append((str(k), _override_text(v)))
        except _native.ConfigError as e:
            raise _native.ConfigError(f"{k}: {e}") from None
    return out


class ConfigWarning(UserWarning):
    """A value the config sets that the run does not read (a parameter of a function that is
    off, a traffic-model knob of another app, ...): one line naming the field and the setting
    that makes it so. The run goes on; the same lines are in ``Result.warnings`` and in
    summary.json's ``warnings``."""


def warn_config(messages: list[str], stacklevel: int = 3) -> None:
    """Issue a ConfigWarning per message."""
    for m in messages:
        _warnings.warn(m, ConfigWarning, stacklevel=stacklevel)


def check(
    scenario: str | os.PathLike[str], overrides: Mapping[str, Any] | None = None, seed: int | None = None
) -> tuple[dict[str, Any], list[str]]:
    """The effective config and its warnings (values set that the run does not read), without
    issuing them. Raises ConfigError."""
    text, warnings = _native.validate(_check_scenario(scenario), _check_overrides(overrides), _check_seed(seed))
    return json.loads(text), list(warnings)


def validate(scenario: str | os.PathLike[str], overrides: Mapping[str, Any] | None = None, seed: int | None = None) -> dict[str, Any]:
    """Validate a scenario and return its effective config. Raises ConfigError; issues a
    ConfigWarning per value set that the run does not read."""
    cfg, warnings = check(scenario, overrides, seed)
    warn_config(warnings)
    return cfg


class Tables(Mapping[str, "pd.DataFrame"]):
    """Time-series tables by name (e.g. "flows"), each a pandas DataFrame made on first access.

    A run keeps its tables as Arrow tables (what the Parquet files hold), so writing a run folder
    never imports pandas; ``result.flows`` converts once and caches.
    """

    def __init__(self, arrow: Mapping[str, Any]) -> None:
        self._arrow = dict(arrow)  # Arrow tables, or Parquet files read on first access
        self._frames: dict[str, pd.DataFrame] = {}

    @classmethod
    def from_files(cls, folder: Path, names: Iterator[str] | list[str]) -> Tables:
        """Tables `names` of a run folder, each read from ``<name>.parquet`` when first used."""
        return cls({name: folder / f"{name}.parquet" for name in names})

    def _table(self, name: str) -> Any:
        t = self._arrow[name]
        if isinstance(t, Path):
            import pyarrow.parquet as pq

            t = self._arrow[name] = pq.read_table(t)
        return t

    @classmethod
    def wrap(cls, tables: Mapping[str, Any]) -> Tables:
        """Tables from Arrow tables or DataFrames (either is accepted; both are kept as given)."""
        if isinstance(tables, Tables):
            return tables
        t = cls({})
        for name, table in tables.items():
            if hasattr(table, "to_pandas"):
                t._arrow[name] = table
            else:
                t._frames[name] = table
        return t

    def __getitem__(self, name: str) -> pd.DataFrame:
        if name not in self._frames:
            self._frames[name] = self._table(name).to_pandas()
        return self._frames[name]

    def __iter__(self) -> Iterator[str]:
        return iter(dict.fromkeys([*self._arrow, *self._frames]))

    def __len__(self) -> int:
        return len(set(self._arrow) | set(self._frames))

    def arrow(self, name: str) -> Any:
        """Table `name` as a pyarrow Table (no pandas involved when the run made it)."""
        if name in self._arrow:
            return self._table(name)
        import pyarrow as pa

        return pa.Table.from_pandas(self._frames[name], preserve_index=False).replace_schema_metadata(None)

    def __repr__(self) -> str:
        return f"Tables({list(self)})"


@dataclass
class Result:
    """A finished run."""

    summary: dict[str, Any]
    """The content of summary.json."""
    timeseries: Tables = field(default_factory=lambda: Tables({}))
    """Time-series tables by name (e.g. "flows"), pandas DataFrames (made on first access);
    ``timeseries.arrow(name)`` gives one as a pyarrow Table without pandas. Any mapping of Arrow
    tables or DataFrames given here is wrapped in a Tables."""
    out: Path | None = None
    """The output folder, when one was written."""
    warnings: list[str] = field(default_factory=list)
    """Values the config sets that the run did not read, one line each (summary.json's
    ``warnings``; empty when there are none)."""
    timings: dict[str, float] = field(default_factory=dict)
    """Wall seconds per phase of the run that made this result (``build``, ``simulate``,
    ``collect``, ``write Parquet``, ``plots``); empty for a loaded folder. A run writes most of
    its Parquet rows while it simulates: ``write Parquet`` is the last row groups only."""

    def __post_init__(self) -> None:
        self.timeseries = Tables.wrap(self.timeseries)
        if not self.warnings:
            self.warnings = list(self.summary.get("warnings", []))

    @property
    def flows(self) -> pd.DataFrame:
        """Per-flow time series: flow, time_s, goodput_bps, cwnd_bytes, srtt_ms, ..."""
        return self.timeseries["flows"]

    def flow_summary(self) -> pd.DataFrame:
        """Per-flow summary figures as a DataFrame."""
        import pandas as pd

        return pd.DataFrame(self.summary["flows"])


def arrow_table(columns: Mapping[str, tuple[str, list[Any]]]) -> Any:
    """A time-series table from the core's columns, {name: (kind, values)} with kind "f64",
    "i64" or "str": strings large_string, integers int64 (None stored as null), floats float64
    with NaN stored as null, no schema metadata. A column keeps its type when it has no rows.

    Built from buffers because ``pyarrow.array`` imports pandas on its first call (0.4 s, more
    than a short run takes); nothing here does."""
    import pyarrow as pa

    return pa.Table.from_arrays([_column_array(kind, v) for kind, v in columns.values()], names=list(columns))


_ARROW_TYPES = {"f64": "float64", "i64": "int64", "str": "large_string"}


def _column_array(kind: str, values: list[Any]) -> Any:
    import numpy as np
    import pyarrow as pa

    n = len(values)
    arrow_type = getattr(pa, _ARROW_TYPES[kind])()
    present = np.fromiter((v is not None for v in values), dtype=bool, count=n)
    if kind == "str":
        encoded = [v.encode() if v is not None else b"" for v in values]
        offsets = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(np.fromiter((len(e) for e in encoded), dtype=np.int64, count=n), out=offsets[1:])
        data: list[Any] = [pa.py_buffer(offsets), pa.py_buffer(b"".join(encoded))]
        valid = present
    else:
        dtype = np.int64 if kind == "i64" else np.float64
        filled = values if present.all() else [v if v is not None else 0 for v in values]
        arr = np.asarray(filled, dtype=dtype)
        data = [pa.py_buffer(arr)]
        valid = present if kind == "i64" else present & ~np.isnan(arr)
    nulls = int(n - np.count_nonzero(valid))
    bitmap = pa.py_buffer(np.packbits(valid, bitorder="little")) if nulls else None
    return pa.Array.from_buffers(arrow_type, n, [bitmap, *data], null_count=nulls)


ROW_GROUP_ROWS = 65536
"""Rows per Parquet row group of a run's time series: what a run holds of a table before it
writes it out (a few MB), whatever the run's length."""


class _ParquetTable:
    """One time-series table written to ``<name>.parquet`` as the run goes, in row groups of
    exactly ROW_GROUP_ROWS rows (the last one shorter), so the file's bytes do not depend on
    how the rows arrived."""

    def __init__(self, path: Path, schema: Any) -> None:
        import pyarrow.parquet as pq

        self._writer = pq.ParquetWriter(path, schema, compression="zstd")
        self._pending: list[Any] = []
        self._rows = 0

    def add(self, table: Any) -> None:
        if not len(table):
            return
        self._pending.append(table)
        self._rows += len(table)
        if self._rows >= ROW_GROUP_ROWS:
            self._flush(final=False)

    def _flush(self, final: bool) -> None:
        import pyarrow as pa

        if not self._pending:
            return
        rows = pa.concat_tables(self._pending)
        start = 0
        while len(rows) - start >= ROW_GROUP_ROWS or (final and start < len(rows)):
            group = rows.slice(start, ROW_GROUP_ROWS).combine_chunks()
            self._writer.write_table(group, row_group_size=ROW_GROUP_ROWS)
            start += len(group)
        rest = rows.slice(start)
        self._pending = [rest] if len(rest) else []
        self._rows = len(rest)

    def close(self) -> None:
        self._flush(final=True)
        self._writer.close()


class _Series:
    """Where a run's time-series rows go as the core hands them out in batches: Parquet files in
    `folder` (see _ParquetTable), or Arrow tables in memory when the run writes no folder."""

    def __init__(self, folder: Path | None) -> None:
        self._folder = folder
        self._files: dict[str, _ParquetTable] = {}
        self._memory: dict[str, list[Any]] = {}

    def add(self, batch: Mapping[str, Mapping[str, tuple[str, list[Any]]]]) -> None:
        for name, columns in batch.items():
            table = arrow_table(columns)
            if self._folder is None:
                self._memory.setdefault(name, []).append(table)
                continue
            if name not in self._files:
                self._files[name] = _ParquetTable(self._folder / f"{name}.parquet", table.schema)
            self._files[name].add(table)

    def close(self) -> Tables:
        """Finish the files; returns the tables (read back from the files when first used)."""
        if self._folder is not None:
            for f in self._files.values():
                f.close()
            return Tables.from_files(self._folder, list(self._files))
        import pyarrow as pa

        return Tables({name: pa.concat_tables(parts) if len(parts) > 1 else parts[0] for name, parts in self._memory.items()})

    def discard(self) -> None:
        for f in self._files.values():
            try:
                f._writer.close()
            except Exception:  # noqa: BLE001 - the folder is being removed anyway
                pass


SEED_MAX = 2**63 - 1
"""Seeds span 0..2**63-1: TOML integers are signed 64-bit (sweeps derive seeds in this range too)."""


def _check_seed(seed: Any) -> int | None:
    if seed is None:
        return None
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise _native.ConfigError(f"seed: {seed!r} is not an integer (allowed: 0 to {SEED_MAX})")
    if not 0 <= seed <= SEED_MAX:
        raise _native.ConfigError(f"seed: {seed} is out of range (allowed: 0 to {SEED_MAX})")
    return seed


def _check_scenario(scenario: Any) -> str:
    """``builtin:NAME`` or a TOML file path (str or os.PathLike) as the core takes it."""
    if isinstance(scenario, os.PathLike):
        scenario = os.fspath(scenario)
    if isinstance(scenario, bytes) or not isinstance(scenario, str):
        raise _native.ConfigError(
            f"scenario: expected builtin:NAME or a TOML file path, not {type(scenario).__name__} {scenario!r:.60}"
        )
    return scenario


def _check_overrides(overrides: Any) -> list[tuple[str, str]]:
    if overrides is not None and not isinstance(overrides, Mapping):
        raise _native.ConfigError(
            f"overrides: expected a mapping of config paths to values, e.g. {{'flow.cc': 'cubic'}}, not {type(overrides).__name__}"
        )
    return normalise_overrides(overrides)


Progress = Callable[..., None]
"""progress(simulated_s, total_s) or progress(simulated_s, total_s, events)."""


def _progress_caller(progress: Progress | None) -> Callable[[float, float, int], None] | None:
    """Call `progress` with the events count too when it takes a third argument."""
    if progress is None:
        return None
    import inspect

    try:
        inspect.signature(progress).bind(0.0, 0.0, 0)
        return progress
    except TypeError:
        return lambda now_s, total_s, events: progress(now_s, total_s)
    except ValueError:  # no signature (a builtin): call it as documented first
        return lambda now_s, total_s, events: progress(now_s, total_s)


def _advance(sim: Any, progress: Callable[[float, float, int], None] | None, series: _Series) -> None:
    """Run to the end in chunks of about 0.1 s of wall time, so Ctrl-C and progress stay live,
    handing the time-series rows the core has cut into batches to `series` as they come."""
    end = sim.end_ns
    now = sim.now_ns
    chunk = max(end // 1000, 1)
    while now < end:
        t0 = time.perf_counter()
        now = sim.step(min(now + chunk, end))
        dt = time.perf_counter() - t0
        rows = 0
        for batch in sim.take_batches():
            rows += max((len(values) for cols in batch.values() for _, values in cols.values()), default=0)
            series.add(batch)
        # The rows of a chunk are held until it ends: a chunk grows while it is quick, but not
        # past ROW_GROUP_ROWS rows, so peak memory does not grow with the run's length (nor with
        # how fast the machine simulates).
        if dt > 0.2 or rows > ROW_GROUP_ROWS:
            chunk = max(chunk // 2, 1)
        elif dt < 0.05 and rows <= ROW_GROUP_ROWS // 2:
            chunk *= 2
        if progress is not None:
            progress(now / 1e9, end / 1e9, sim.events)


def _prefetch(*modules: str) -> None:
    """Import `modules` on a helper thread while this one simulates (the core releases the GIL
    while it steps, so on two cores the imports cost no wall time). Errors are left for the
    real import to report.

    Not a daemon thread: the interpreter waits for it (threading._shutdown) before it finalizes.
    A daemon thread still importing as the interpreter finalized (a Ctrl-C during a run ends the
    command at once) was ended by CPython 3.11 with pthread_exit when it next took the GIL, which
    unwinds through the C++ frames on its stack: in matplotlib's ft2font (pybind11) module init,
    a segfault (its references dropped without the GIL during Py_FinalizeEx's GC), "Fatal Python
    error: PyThreadState_Get" from the half-built module's static destructor at exit(), or
    std::terminate through a noexcept frame ("terminate called without an active exception").
    The cost: an interrupted `rantcp run` ends once the import in progress has (`--plots` signalled
    0.4-1.5 s in, on a 2-core box at load 10: median 2.6 s after the signal, 0.35 s before; the
    import of pyarrow.parquet and matplotlib takes 0.6 + 1.4 s there). A second Ctrl-C ends it at
    once: `rantcp` has given SIGINT its default action by then (rantcp.cli.console)."""
    import threading

    def load() -> None:
        for m in modules:
            try:
                importlib.import_module(m)
            except BaseException:  # noqa: BLE001 - the caller's own import raises it properly
                return

    threading.Thread(target=load, name="rantcp-prefetch").start()


PLOT_MODULES = ("matplotlib.figure", "matplotlib.backends.backend_agg")
"""What drawing a run's plots imports (rantcp.plots uses matplotlib's object API only)."""


class _Phases:
    """Wall seconds per named phase, in the order first entered."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}
        self._t = time.perf_counter()

    def lap(self, name: str) -> None:
        now = time.perf_counter()
        self.seconds[name] = self.seconds.get(name, 0.0) + now - self._t
        self._t = now


def run(
    scenario: str | os.PathLike[str],
    seed: int | None = None,
    overrides: Mapping[str, Any] | None = None,
    out: str | os.PathLike[str] | None = None,
    progress: Progress | None = None,
    force: bool = False,
    warn: bool = True,
) -> Result:
    """Run a scenario (``builtin:NAME`` or a TOML path) and return its results.

    seed: replaces the config's seed (0 to 2**63-1). overrides: {"dotted.path": value}.
    out: write the output folder there. The folder must be new, empty, or an earlier rantcp run
    folder (replaced atomically on success); anything else is refused before the simulation
    starts, so rantcp never deletes a file it did not write (see ``rantcp.outdir``).
    Plots (``plots/*.png``) are drawn when the config sets ``output.plots = true``.
    progress: called with (simulated seconds, total seconds), or with (simulated seconds,
    total seconds, events so far) when it takes three arguments, as the run advances.
    force: run even when the work estimated before the start is above the bound (see
    ``crates/scenario/src/work.rs``: minutes to hours of wall time); otherwise it is refused.
    warn: issue a ConfigWarning per value the config sets that the run does not read (they are
    in ``Result.warnings`` either way).
    Raises ConfigError (a ValueError) for bad input. ``Result.timings`` says where the time went.
    """
    from rantcp.outdir import Staging

    phases = _Phases()
    scenario = _check_scenario(scenario)
    seed = _check_seed(seed)
    ov = _check_overrides(overrides)
    staging = Staging(out) if out is not None else None
    _prefetch("pyarrow.parquet" if staging is not None else "pyarrow")  # the tables are Arrow
    sim = None
    series = _Series(staging.path if staging is not None else None)
    try:
        sim = _native.Simulation(scenario, ov, seed, str(staging.path) if staging is not None else None, bool(force))
        plots = staging is not None and bool(json.loads(sim.config_json())["output"]["plots"])
        if plots:
            _prefetch(*PLOT_MODULES)
        phases.lap("build")
        start = time.perf_counter()
        _advance(sim, _progress_caller(progress), series)
        wall = time.perf_counter() - start
        phases.lap("simulate")
        summary_text, columns = sim.finish(wall)
        sim = None
        summary = json.loads(summary_text)
        if warn:
            warn_config(summary.get("warnings", []))
        phases.lap("collect")
        series.add(columns)
        tables = series.close()
        phases.lap("write Parquet" if staging is not None else "collect")
        if staging is not None:
            (staging.path / "summary.json").write_text(summary_text + "\n")
            if plots:
                from rantcp import plots as _plots

                _plots.run_plots(staging.path, summary, tables)
                phases.lap("plots")
            staging.commit(_native.version())
            tables = Tables.from_files(staging.out, list(tables))
    except BaseException:
        series.discard()
        if staging is not None:
            staging.discard()
        raise
    finally:
        # The native run is not thread-safe to drop elsewhere: release it on this thread even
        # when a profiler (Dask's) keeps this frame alive.
        sim = None
    return Result(summary=summary, timeseries=tables, out=Path(out) if out is not None else None, timings=phases.seconds)


def load_result(folder: str | os.PathLike[str]) -> Result:
    """Open an existing run folder."""
    import pyarrow.parquet as pq

    p = Path(folder)
    try:
        summary = json.loads((p / "summary.json").read_text())
    except (OSError, ValueError) as e:
        why = "no summary.json" if isinstance(e, FileNotFoundError) else f"summary.json unreadable: {e}"
        raise _native.ConfigError(f"{p}: not a run folder ({why})") from None
    tables = Tables({f.stem: pq.read_table(f) for f in sorted(p.glob("*.parquet"))})
    return Result(summary=summary, timeseries=tables, out=p)
