"""The Python API of sweeps: ``rantcp.sweep(...)`` runs one, ``rantcp.load(...)`` opens a sweep
folder (a :class:`Sweep`) or a run folder (a :class:`rantcp.Result`)."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from rantcp._native import ConfigError
from rantcp.sweeps import store
from rantcp.sweeps.stats import summarise

__all__ = ["Sweep", "load", "sweep"]


class Sweep:
    """An existing sweep folder: its runs table, spec and per-run results.

    ``df`` is the runs table (one row per run; see :mod:`rantcp.sweeps.store` for the columns).
    """

    def __init__(self, folder: str | os.PathLike[str]) -> None:
        self.folder = Path(folder)
        if not store.is_sweep_folder(self.folder):
            raise ConfigError(f"{self.folder}: not a sweep folder (no {store.DB_NAME})")
        self.meta = store.read_meta(self.folder)
        self.axes: list[str] = json.loads(self.meta.get("axes", "[]"))
        self.name: str = self.meta.get("name", self.folder.name)
        self.spec_text: str = self.meta.get("spec", "")
        self._df: Any = None

    def __repr__(self) -> str:
        return f"<rantcp.Sweep {self.name!r} at {str(self.folder)!r}: {len(self.df)} runs, axes {self.axes}>"

    @property
    def df(self) -> Any:
        """The runs table as a pandas DataFrame (read once; call ``reload()`` to refresh)."""
        if self._df is None:
            self._df = store.read_table(self.folder)
            self._df.attrs["rantcp_sweep"] = str(self.folder)
        return self._df

    def reload(self) -> Sweep:
        self._df = None
        return self

    def run_dir(self, point_id: str) -> Path:
        return self.folder / store.RUNS_DIR / point_id

    def result(self, point_id: str) -> Any:
        """The full result (summary and time series) of one run."""
        from rantcp import api

        return api.load_result(self.run_dir(point_id))

    def timeseries(self, table: str = "flows", ids: Iterable[str] | None = None) -> Any:
        """One time-series table of every ok run (or of `ids`), with point_id, repetition, seed
        and the axis columns in front."""
        import pandas as pd

        df = self.df[self.df["status"] == "ok"]
        if ids is not None:
            df = df[df["point_id"].isin([ids] if isinstance(ids, str) else list(ids))]  # one id, not its characters
        parts = []
        keys = ["point_id", "repetition", "seed", *self.axes]
        for row in df[keys].itertuples(index=False):
            f = self.run_dir(row[0]) / f"{table}.parquet"
            if not f.is_file():
                continue
            ts = pd.read_parquet(f)
            for k, v in reversed(list(zip(keys, row))):
                ts.insert(0, k, v)
            parts.append(ts)
        if not parts:
            if len(df):  # runs to read, none has the table: a typo, not an empty result
                have = sorted({f.stem for pid in df["point_id"] for f in self.run_dir(pid).glob("*.parquet")})
                raise ConfigError(f"timeseries: no run of {self.folder} has a table {table!r} (tables: {', '.join(have) or 'none'})")
            return pd.DataFrame(columns=keys)
        return pd.concat(parts, ignore_index=True)

    def summarise(self, metrics: Sequence[str] = ("goodput_mbps",), by: Sequence[str] | None = None) -> Any:
        """Mean and 95 % interval over repetitions, per point (or grouped by `by`)."""
        metrics = [metrics] if isinstance(metrics, str) else list(metrics)  # not its characters
        by = self.axes if by is None else ([by] if isinstance(by, str) else list(by))
        df = self.df
        for what, names in (("metric", metrics if (df["status"] == "ok").any() else []), ("by", by)):
            unknown = [n for n in names if n not in df.columns]
            if unknown:
                raise ConfigError(f"summarise: {what} {unknown[0]!r} is not a column of the runs table (see .df.columns)")
        return summarise(df, metrics, by)

    def sql(self, query: str) -> Any:
        """Run a read-only SQL query on the store (the table is `runs`)."""
        con = store._connect(self.folder / store.DB_NAME, read_only=True)
        try:
            return con.execute(query).df()
        finally:
            con.close()


def sweep(
    spec: str | os.PathLike[str] | Mapping[str, Any],
    out: str | os.PathLike[str] | None = None,
    workers: int | None = None,
    dask: Any = None,
    retry_failed: bool = False,
    progress: Any = None,
) -> Any:
    """Run a sweep and return its runs as a pandas DataFrame (one row per run).

    spec: a sweep TOML file or a dict of the same shape. out: the sweep folder (default
    ``out/<sweep name>``); runs already recorded there are skipped. workers: local processes
    (default: every core). dask: a scheduler address, ``"local:N"`` or a
    ``distributed.Client``; the runs then go to that cluster. Failed runs are rows with
    status "failed" and their error. ``df.attrs["rantcp_sweep"]`` holds the folder.
    Raises ConfigError for a bad sweep file or base scenario.
    """
    from rantcp.sweeps.coordinator import run_sweep
    from rantcp.sweeps.spec import load_spec

    s = load_spec(spec)
    folder = Path(out) if out is not None else Path("out") / s.name
    run_sweep(s, folder, workers=workers, dask=dask, retry_failed=retry_failed, progress=progress)
    df = store.read_table(folder, ids=[t.point_id for t in s.tasks()])
    df.attrs["rantcp_sweep"] = str(folder)
    return df


def load(folder: str | os.PathLike[str]) -> Any:
    """Open a sweep folder (a :class:`Sweep`) or a run folder (a :class:`rantcp.Result`)."""
    from rantcp import api

    p = Path(folder)
    if store.is_sweep_folder(p):
        return Sweep(p)
    if (p / "summary.json").is_file():
        return api.load_result(p)
    raise ConfigError(f"{p}: neither a run folder (summary.json) nor a sweep folder ({store.DB_NAME})")
