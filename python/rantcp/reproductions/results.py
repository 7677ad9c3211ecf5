"""A reproduction's results as one in-memory DuckDB database that claims and figures query.

Tables:

* ``runs``: one row per run of every sweep of the reproduction (the sweep store's columns:
  ``point_id``, ``repetition``, ``seed``, ``status``, the axis columns named by config path such
  as ``"flow.cc"``, every summary figure such as ``goodput_mbps``), plus ``sweep`` (the sweep's
  name), ``run`` (``sweep/point_id``, unique across sweeps) and one column per config path that
  any sweep of the reproduction sets or sweeps: a run of a sweep that does not mention the path
  gets the scenario's effective value, so ``"rlc.buffer"`` or ``traffic`` is filled in every row.
* one table per time series the reproduction names (``flows``, ``radio``, ...): the run's
  Parquet table with ``run`` in front (join with ``runs USING (run)``). A table with ``x_m`` and
  ``y_m`` columns also gets ``speed_mps`` (distance moved since the previous sample / interval).
* whatever the reproduction's prelude creates (views and macros).

Queries are plain SQL, read-only in effect: the connection has no file-system access (DuckDB's
``enable_external_access = false``), the prelude may only CREATE, and claim and figure queries
must be one SELECT each. One DuckDB thread, so the same runs give byte-identical claims.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from rantcp._native import ConfigError

__all__ = ["Results", "check_select"]


def check_select(sql: str, where: str) -> str:
    """The query if it is exactly one SELECT statement; else ConfigError naming `where`."""
    import duckdb

    try:
        stmts = duckdb.extract_statements(sql)
    except duckdb.Error as e:
        raise ConfigError(f"{where}: {str(e).splitlines()[0]}") from None
    if len(stmts) != 1 or stmts[0].type != duckdb.StatementType.SELECT:
        raise ConfigError(f"{where}: expected one SELECT statement")
    return sql


class Results:
    """The runs table and time series of a reproduction, queryable with SQL.

    runs: the runs table (see the module doc); timeseries: {table name: DataFrame with a
    ``run`` column}; prelude: SQL of CREATE statements run once (views and macros).
    """

    def __init__(self, runs: pd.DataFrame, timeseries: Mapping[str, pd.DataFrame] | None = None, prelude: str = "") -> None:
        import duckdb

        if "run" not in runs:
            raise ValueError("runs: a `run` column (unique run key) is required")
        self.runs = runs
        self.timeseries = dict(timeseries or {})
        self.prelude = prelude
        # One thread: parallel aggregation sums floats in varying order (last-digit differences
        # between identical runs); the tables are small.
        self.con = duckdb.connect(":memory:", config={"enable_external_access": False, "threads": 1})
        self.con.register("runs", runs)
        for name, df in (timeseries or {}).items():
            self.con.register(f"_ts_{name}", df)
            if "x_m" in df and "y_m" in df and "time_s" in df:
                part = "run, ue" if "ue" in df else "run"
                self.con.execute(
                    f"CREATE TABLE {name} AS SELECT *, coalesce(sqrt(power(x_m - lag(x_m) OVER w, 2) + "
                    f"power(y_m - lag(y_m) OVER w, 2)) / nullif(time_s - lag(time_s) OVER w, 0), 0) AS speed_mps "
                    f"FROM _ts_{name} WINDOW w AS (PARTITION BY {part} ORDER BY time_s)"
                )
            else:
                self.con.execute(f"CREATE TABLE {name} AS SELECT * FROM _ts_{name}")
            self.con.unregister(f"_ts_{name}")
        if prelude.strip():
            self._prelude(prelude)

    def _prelude(self, sql: str) -> None:
        import duckdb

        try:
            stmts = duckdb.extract_statements(sql)
        except duckdb.Error as e:
            raise ConfigError(f"prelude: {str(e).splitlines()[0]}") from None
        for s in stmts:
            if s.type != duckdb.StatementType.CREATE:
                raise ConfigError(f"prelude: only CREATE statements (views, macros), not {s.query.strip()[:60]!r}")
            try:
                self.con.execute(s.query)
            except duckdb.Error as e:
                raise ConfigError(f"prelude: {str(e).splitlines()[0]} in {s.query.strip()[:80]!r}") from None

    def query(self, sql: str, where: str = "query", params: Mapping[str, Any] | None = None) -> pd.DataFrame:
        """Run one SELECT; errors become ConfigError naming `where` (the claim or figure)."""
        import duckdb

        check_select(sql, where)
        try:
            return self.con.execute(sql, dict(params) if params else None).df()
        except duckdb.Error as e:
            raise ConfigError(f"{where}: {str(e).splitlines()[0]}") from None

    def subset(self, keep: Any) -> Results:
        """The same tables, time series and prelude over the runs where `keep` (a boolean
        Series over ``runs``) is true: e.g. one repetition, or every sweep but one."""
        runs = self.runs[keep].reset_index(drop=True)
        ids = set(runs["run"])
        ts = {n: df[df["run"].isin(ids)].reset_index(drop=True) for n, df in self.timeseries.items()}
        return Results(runs, ts, self.prelude)

    def close(self) -> None:
        self.con.close()


def union_runs(parts: Sequence[tuple[str, pd.DataFrame, Mapping[str, Any]]]) -> pd.DataFrame:
    """One runs table from each sweep's (name, runs DataFrame, {config path: value}).

    The mapping gives the value of each reproduction-wide config path for that sweep's runs
    where the sweep's own table has no such column (a path it fixes or leaves at the default).
    """
    frames = []
    for name, df, params in parts:
        d = df.copy()
        d.insert(0, "sweep", name)
        d.insert(0, "run", [f"{name}/{p}" for p in d["point_id"]])
        for path, value in params.items():
            if path not in d:
                d[path] = [value] * len(d)
        frames.append(d)
    if not frames:
        return pd.DataFrame(columns=["run", "sweep", "point_id", "status"])
    nonempty = [f for f in frames if len(f)]
    return pd.concat(nonempty or frames, ignore_index=True, sort=False)
