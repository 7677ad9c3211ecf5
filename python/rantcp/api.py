"""The Python API: run a scenario, get its summary and time series as pandas DataFrames.

A run's output folder holds:
  summary.json        run metadata (version, seed, config echo), per-flow and per-link figures;
                      wall-clock fields live only under the "wall" key
  <table>.parquet     time series, e.g. flows.parquet (one row per flow per sample)
  plots/*.png         goodput, cwnd and RTT over time
  pcap/<iface>.pcap   when output.pcap is set
Same config and seed give byte-identical summary.json (apart from "wall") and Parquet files.
"""

from __future__ import annotations

import json
import math
import os
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from rantcp import _native


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
    """(path, literal text) pairs in the order given."""
    return [(str(k), _override_text(v)) for k, v in (overrides or {}).items()]


def validate(scenario: str, overrides: Mapping[str, Any] | None = None, seed: int | None = None) -> dict[str, Any]:
    """Validate a scenario and return its effective config. Raises ConfigError."""
    return json.loads(_native.validate(scenario, _check_overrides(overrides), _check_seed(seed)))


@dataclass
class Result:
    """A finished run."""

    summary: dict[str, Any]
    """The content of summary.json."""
    timeseries: dict[str, pd.DataFrame] = field(default_factory=dict)
    """Time-series tables by name (e.g. "flows")."""
    out: Path | None = None
    """The output folder, when one was written."""

    @property
    def flows(self) -> pd.DataFrame:
        """Per-flow time series: flow, time_s, goodput_bps, cwnd_bytes, srtt_ms, ..."""
        return self.timeseries["flows"]

    def flow_summary(self) -> pd.DataFrame:
        """Per-flow summary figures as a DataFrame."""
        return pd.DataFrame(self.summary["flows"])


def _write_outputs(out: Path, summary_text: str, frames: dict[str, pd.DataFrame], plots: bool) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    (out / "summary.json").write_text(summary_text + "\n")
    for name, df in frames.items():
        table = pa.Table.from_pandas(df, preserve_index=False).replace_schema_metadata(None)
        pq.write_table(table, out / f"{name}.parquet", compression="zstd")
    if plots:
        from rantcp import plots as _plots

        _plots.run_plots(out, json.loads(summary_text), frames)


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


def _check_overrides(overrides: Any) -> list[tuple[str, str]]:
    if overrides is not None and not isinstance(overrides, Mapping):
        raise _native.ConfigError(
            f"overrides: expected a mapping of config paths to values, e.g. {{'flow.cc': 'cubic'}}, not {type(overrides).__name__}"
        )
    return normalise_overrides(overrides)


def _advance(sim: Any, progress: Callable[[float, float], None] | None) -> None:
    """Run to the end in chunks of about 0.1 s of wall time, so Ctrl-C and progress stay live."""
    end = sim.end_ns
    now = sim.now_ns
    chunk = max(end // 1000, 1)
    while now < end:
        t0 = time.perf_counter()
        now = sim.step(min(now + chunk, end))
        dt = time.perf_counter() - t0
        if dt < 0.05:
            chunk *= 2
        elif dt > 0.2:
            chunk = max(chunk // 2, 1)
        if progress is not None:
            progress(now / 1e9, end / 1e9)


def run(
    scenario: str,
    seed: int | None = None,
    overrides: Mapping[str, Any] | None = None,
    out: str | os.PathLike[str] | None = None,
    progress: Callable[[float, float], None] | None = None,
) -> Result:
    """Run a scenario (``builtin:NAME`` or a TOML path) and return its results.

    seed: replaces the config's seed (0 to 2**64-1). overrides: {"dotted.path": value}.
    out: write the output folder there. The folder must be new, empty, or an earlier rantcp run
    folder (replaced atomically on success); anything else is refused before the simulation
    starts, so rantcp never deletes a file it did not write (see ``rantcp.outdir``).
    progress: called with (simulated seconds, total seconds) as the run advances.
    Raises ConfigError (a ValueError) for bad input.
    """
    from rantcp.outdir import Staging

    seed = _check_seed(seed)
    ov = _check_overrides(overrides)
    staging = Staging(out) if out is not None else None
    sim = None
    try:
        sim = _native.Simulation(scenario, ov, seed, str(staging.path) if staging is not None else None)
        start = time.perf_counter()
        _advance(sim, progress)
        wall = time.perf_counter() - start
        summary_text, tables = sim.finish(wall)
        frames = {name: pd.DataFrame(cols) for name, cols in tables.items()}
        summary = json.loads(summary_text)
        if staging is not None:
            _write_outputs(staging.path, summary_text, frames, summary["config"]["output"]["plots"])
            staging.commit(_native.version())
    except BaseException:
        if staging is not None:
            staging.discard()
        raise
    finally:
        # The native run is not thread-safe to drop elsewhere: release it on this thread even
        # when a profiler (Dask's) keeps this frame alive.
        sim = None
    return Result(summary=summary, timeseries=frames, out=Path(out) if out is not None else None)


def load_result(folder: str | os.PathLike[str]) -> Result:
    """Open an existing run folder."""
    p = Path(folder)
    summary = json.loads((p / "summary.json").read_text())
    frames = {f.stem: pd.read_parquet(f) for f in sorted(p.glob("*.parquet"))}
    return Result(summary=summary, timeseries=frames, out=p)
