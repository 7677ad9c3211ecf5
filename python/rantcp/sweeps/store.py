"""The results store of a sweep folder: an embedded DuckDB database plus one folder per run.

Layout::

    <sweep>/sweep.toml            the sweep file as given
    <sweep>/sweep.duckdb          table `runs`, one row per run; table `meta`
    <sweep>/runs/<point_id>/      the run's folder: summary.json, flows.parquet (time series), ...

Table ``runs``: ``point_id`` (PRIMARY KEY), ``point_index`` (the point's place in the sweep),
``repetition``, ``seed``, ``status`` ("ok" or "failed"), ``error`` (one line, failed runs only),
``wall_s`` (worker wall time of the whole run), ``sim_wall_s`` (the simulation loop alone),
``finished_at`` (UTC), ``rantcp_version``, then one column per axis named by its config path
(``"flow.cc"``), then every summary figure:

* per-flow figures aggregated over the run's flows under their own name (``goodput_mbps``):
  the sum for integer counts and for rates (``*_bps``, ``*_mbps``), the minimum for names
  containing ``min``, the maximum for names containing ``max``, the mean otherwise; plus
  ``n_flows`` and ``jain_goodput`` (Jain's fairness index of goodput; 1 for one flow);
* each flow's figures as ``flow<i>.<figure>`` (``flow0.goodput_mbps``) when a run has at most
  16 flows (beyond that only the aggregates; every figure stays in the run's summary.json);
* other per-item lists (links, UEs, ...) as ``<list>.<item>.<figure>`` with the item named by
  its ``iface``/``name``/``id`` (``links.router-eth1.queue_drops``), up to 16 items;
* other scalars at the top level under their own name (``events``, ``duration_s``) and nested
  tables as ``<table>.<key>``. The config echo and the wall-clock ``wall`` table are left out.

Columns appear as figures first appear (and widen BIGINT -> DOUBLE -> VARCHAR if needed).

Atomicity: only the coordinating process writes. A finished run's files go to
``runs/.tmp-<id>-<random>/`` and are renamed to ``runs/<point_id>``; then its row is inserted
in a DuckDB transaction (runs that finish together share one transaction). The row is the commit point: a run without a row is
unfinished. Opening the store deletes temporary folders and run folders without a row, so a
crash at any moment (even SIGKILL) leaves neither a partial nor a duplicated row (the primary
key forbids duplicates; DuckDB's write-ahead log discards an uncommitted transaction). The run
files are not fsynced (a killed process loses nothing the kernel has); after a power cut, an ok
row whose folder lacks its summary.json is deleted on reopening and the run done again.
"""

from __future__ import annotations

import datetime as _dt
import json
import math
import os
import shutil
import uuid
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rantcp._native import ConfigError
from rantcp.interrupts import as_keyboard_interrupt

if TYPE_CHECKING:
    import pandas as pd

    from rantcp.sweeps.spec import RunTask, SweepSpec

DB_NAME = "sweep.duckdb"
SPEC_NAME = "sweep.toml"
RUNS_DIR = "runs"
MAX_ITEM_COLUMNS = 16

FIXED_COLUMNS: list[tuple[str, str]] = [
    ("point_id", "VARCHAR PRIMARY KEY"),
    ("point_index", "INTEGER NOT NULL"),
    ("repetition", "INTEGER NOT NULL"),
    ("seed", "UBIGINT NOT NULL"),
    ("status", "VARCHAR NOT NULL CHECK (status IN ('ok', 'failed'))"),
    ("error", "VARCHAR"),
    ("wall_s", "DOUBLE"),
    ("sim_wall_s", "DOUBLE"),
    ("finished_at", "TIMESTAMP"),
    ("rantcp_version", "VARCHAR"),
]
NONDETERMINISTIC_COLUMNS = ("wall_s", "sim_wall_s", "finished_at")
"""Columns that differ between identical runs (wall-clock); everything else is reproducible."""

_WIDEN = {"BOOLEAN": 0, "BIGINT": 1, "DOUBLE": 2, "VARCHAR": 3}
_TYPE_BY_RANK = {v: k for k, v in _WIDEN.items()}


def quote(name: str) -> str:
    """A DuckDB identifier in double quotes."""
    return '"' + name.replace('"', '""') + '"'


def _sql_type(v: Any) -> str | None:
    if v is None:
        return None
    if isinstance(v, bool):
        return "BOOLEAN"
    if isinstance(v, int):
        return "BIGINT" if -(2**63) <= v < 2**63 else "DOUBLE"
    if isinstance(v, float):
        return "DOUBLE"
    return "VARCHAR"


def _sql_value(v: Any) -> Any:
    if isinstance(v, float) and not math.isfinite(v):
        return None
    if isinstance(v, (list, dict)):
        return json.dumps(v)
    return v


def _agg_kind(name: str, values: list[Any]) -> str:
    if "min" in name:
        return "min"
    if "max" in name:
        return "max"
    if name.endswith(("_bps", "_mbps")):
        return "sum"
    if all(isinstance(v, int) and not isinstance(v, bool) for v in values):
        return "sum"
    return "mean"


def _item_key(item: Mapping[str, Any], index: int) -> str:
    for k in ("iface", "name", "id"):
        v = item.get(k)
        if isinstance(v, (str, int)) and not isinstance(v, bool):
            return str(v)
    return str(index)


def _flat_scalars(prefix: str, d: Mapping[str, Any], out: dict[str, Any]) -> None:
    for k, v in d.items():
        if isinstance(v, Mapping):
            _flat_scalars(f"{prefix}{k}.", v, out)
        elif v is None or isinstance(v, (bool, int, float)):
            out[f"{prefix}{k}"] = v


def flatten_summary(summary: Mapping[str, Any]) -> dict[str, Any]:
    """The summary.json of a run as {column: value} (see the module doc for the mapping)."""
    out: dict[str, Any] = {}
    flows = [f for f in summary.get("flows", []) if isinstance(f, Mapping)]
    # A per-flow figure is aggregated when it is a number (or null) in every flow: a field that
    # is null in one flow and text in another (e.g. `slow_start_exit_cause`) is not a column.
    names: list[str] = []
    textual: set[str] = set()
    for f in flows:
        for k, v in f.items():
            if v is not None and (isinstance(v, bool) or not isinstance(v, (int, float))):
                textual.add(k)
            elif k not in names:
                names.append(k)
    names = [k for k in names if k not in textual]
    out["n_flows"] = len(flows)
    for k in names:
        vals: list[Any] = [f[k] for f in flows if f.get(k) is not None]
        if not vals:
            out[k] = None
            continue
        kind = _agg_kind(k, vals)
        if kind == "sum":
            out[k] = sum(vals)
        elif kind == "min":
            out[k] = min(vals)
        elif kind == "max":
            out[k] = max(vals)
        else:
            out[k] = sum(vals) / len(vals)
    gp = [float(f.get("goodput_bps") or 0.0) for f in flows if "goodput_bps" in f]
    if gp:
        s, s2 = sum(gp), sum(x * x for x in gp)
        out["jain_goodput"] = (s * s) / (len(gp) * s2) if s2 > 0 else None
    if len(flows) <= MAX_ITEM_COLUMNS:
        for i, f in enumerate(flows):
            for k in names:
                out[f"flow{i}.{k}"] = f.get(k)
    for key, val in summary.items():
        if key in ("flows", "config", "wall", "seed", "rantcp_version"):
            continue
        if isinstance(val, list):
            items = [x for x in val if isinstance(x, Mapping)]
            if items and len(items) <= MAX_ITEM_COLUMNS:
                seen: set[str] = set()
                for i, it in enumerate(items):
                    ik = _item_key(it, i)
                    if ik in seen:
                        ik = str(i)
                    seen.add(ik)
                    _flat_scalars(f"{key}.{ik}.", it, out)
        elif isinstance(val, Mapping):
            _flat_scalars(f"{key}.", val, out)
        elif val is None or isinstance(val, (bool, int, float)):
            out[key] = val
    return out


def _connect(path: Path, read_only: bool = False) -> Any:
    """Open the database. Read-only opens of a database held by a running sweep read a snapshot
    (a copy of the file and its log; the copy is opened, never the original)."""
    import duckdb

    try:
        return duckdb.connect(str(path), read_only=read_only)
    except duckdb.IOException as e:
        locked = "lock" in str(e).lower()
        if locked and read_only:
            con = _snapshot(path)
            if con is not None:
                return con
        if locked:
            raise ConfigError(f"{path.parent}: the sweep database is in use by another process (a sweep still running?)") from None
        raise ConfigError(f"{path}: cannot open the sweep database ({str(e).splitlines()[0]})") from None


def _snapshot(path: Path) -> Any:
    import tempfile

    import duckdb

    tmp = Path(tempfile.mkdtemp(prefix="rantcp-snapshot-"))
    try:
        shutil.copy2(path, tmp / path.name)
        wal = path.with_name(path.name + ".wal")
        if wal.exists():
            shutil.copy2(wal, tmp / wal.name)
        # Not read-only: opening replays the copied log into the copy.
        con = duckdb.connect(str(tmp / path.name))
    except (OSError, duckdb.Error):
        shutil.rmtree(tmp, ignore_errors=True)
        return None
    return _TempConnection(con, tmp)


class _TempConnection:
    """A connection to a snapshot copy, deleted on close."""

    def __init__(self, con: Any, folder: Path) -> None:
        self._con = con
        self._folder = folder

    def execute(self, *args: Any) -> Any:
        return self._con.execute(*args)

    def close(self) -> None:
        self._con.close()
        shutil.rmtree(self._folder, ignore_errors=True)


class Store:
    """The writable store of one sweep folder (held by the coordinating process only)."""

    def __init__(self, folder: Path, con: Any) -> None:
        self.folder = folder
        self.con = con
        self.runs_dir = folder / RUNS_DIR
        self._types: dict[str, str] = {}
        self._id_cache: set[str] | None = None
        self._reload_types()

    # -- opening --------------------------------------------------------------------------

    @classmethod
    def open(cls, folder: str | os.PathLike[str], spec: SweepSpec) -> Store:
        """Create the store or reopen it for the same sweep; clean up what a crash left."""
        folder = Path(folder)
        check_folder(folder)
        db = folder / DB_NAME
        if folder.exists() and not db.exists() and any(folder.iterdir()):
            raise ConfigError(f"{folder}: exists and is not a sweep folder (no {DB_NAME}); choose another --out")
        folder.mkdir(parents=True, exist_ok=True)
        con = _connect(db)  # the database first: a folder with anything in it has one
        (folder / RUNS_DIR).mkdir(exist_ok=True)
        store = cls(folder, con)
        store._init_schema(spec)
        store._cleanup()
        return store

    def _init_schema(self, spec: SweepSpec) -> None:
        con = self.con
        fp = json.dumps(spec.fingerprint(), sort_keys=True)
        con.execute("BEGIN TRANSACTION")
        try:
            con.execute("CREATE TABLE IF NOT EXISTS meta (key VARCHAR PRIMARY KEY, value VARCHAR)")
            row = con.execute("SELECT value FROM meta WHERE key = 'fingerprint'").fetchone()
            if row is not None and row[0] != fp:
                old = json.loads(row[0])
                new = json.loads(fp)
                what = next((k for k in new if old.get(k) != new.get(k)), "definition")
                raise ConfigError(
                    f"{self.folder}: holds a different sweep (its {what} differs); only axis values and "
                    "repetitions may change on resume — use another --out"
                )
            if row is None:
                import rantcp

                cols = ", ".join(f"{quote(n)} {t}" for n, t in FIXED_COLUMNS)
                con.execute(f"CREATE TABLE runs ({cols})")
                meta = {
                    "fingerprint": fp,
                    "name": spec.name,
                    "scenario": spec.scenario,
                    "scenario_text": spec.scenario_text or "",
                    "axes": json.dumps(list(spec.axes)),
                    "created_with": rantcp.__version__,
                    "created_at": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
                }
                con.executemany("INSERT INTO meta VALUES (?, ?)", list(meta.items()))
            con.execute("INSERT OR REPLACE INTO meta VALUES ('spec', ?)", [spec.source_text])
            self._reload_types()
            # Axis columns, typed from their values, in axis order.
            for path, vals in spec.axes.items():
                for v in vals:
                    self._ensure_column(path, v)
            con.execute("COMMIT")
        except BaseException:
            con.execute("ROLLBACK")
            raise
        tmp = self.folder / (SPEC_NAME + ".tmp")
        tmp.write_text(spec.source_text)
        tmp.replace(self.folder / SPEC_NAME)

    def _cleanup(self) -> None:
        """Delete temporary folders and run folders whose row was never committed, and the rows
        of ok runs whose folder is incomplete (files lost in a power cut: the run's files are
        not fsynced, the database is), so those runs are done again."""
        ok = {r[0] for r in self.con.execute("SELECT point_id FROM runs WHERE status = 'ok'").fetchall()}
        lost = [i for i in ok if not (self.runs_dir / i / "summary.json").is_file()]
        if lost:
            self.con.executemany("DELETE FROM runs WHERE point_id = ?", [[i] for i in lost])
            ok -= set(lost)
        for d in self.runs_dir.iterdir():
            if d.name.startswith(".tmp-") or (d.is_dir() and d.name not in ok):
                shutil.rmtree(d, ignore_errors=True) if d.is_dir() else d.unlink(missing_ok=True)

    def close(self) -> None:
        self.con.close()

    # -- schema ---------------------------------------------------------------------------

    def _reload_types(self) -> None:
        # A Ctrl-C or SIGTERM that came during the query (DuckDB raises it as an error) goes on
        # as KeyboardInterrupt: taken for "no columns" here it was lost (the sweep ran on).
        try:
            with as_keyboard_interrupt():
                rows = self.con.execute(
                    "SELECT column_name, data_type FROM information_schema.columns WHERE table_name = 'runs' ORDER BY ordinal_position"
                ).fetchall()
        except Exception:
            rows = []
        self._types = {n: t for n, t in rows}

    def _ensure_column(self, name: str, value: Any) -> None:
        want = _sql_type(value)
        have = self._types.get(name)
        if have is None:
            t = want or "DOUBLE"
            self.con.execute(f"ALTER TABLE runs ADD COLUMN {quote(name)} {t}")
            self._types[name] = t
        elif want is not None and have in _WIDEN and _WIDEN[want] > _WIDEN[have]:
            self.con.execute(f"ALTER TABLE runs ALTER COLUMN {quote(name)} TYPE {want}")
            self._types[name] = want

    # -- reading --------------------------------------------------------------------------

    def finished_ids(self, include_failed: bool = True) -> set[str]:
        q = "SELECT point_id FROM runs" + ("" if include_failed else " WHERE status = 'ok'")
        return {r[0] for r in self.con.execute(q).fetchall()}

    @property
    def _ids(self) -> set[str]:
        if self._id_cache is None:
            self._id_cache = self.finished_ids()
        return self._id_cache

    def count_failed(self, ids: Iterable[str]) -> int:
        ids = list(ids)
        if not ids:
            return 0
        self.con.execute("CREATE OR REPLACE TEMP TABLE _ids (point_id VARCHAR)")
        self.con.executemany("INSERT INTO _ids VALUES (?)", [[i] for i in ids])
        row = self.con.execute("SELECT count(*) FROM runs JOIN _ids USING (point_id) WHERE status = 'failed'").fetchone()
        return int(row[0]) if row else 0

    # -- writing --------------------------------------------------------------------------

    def commit(self, task: RunTask, outcome: Mapping[str, Any]) -> None:
        """Record one finished run (see commit_many)."""
        self.commit_many([(task, outcome)])

    def _row(self, task: RunTask, outcome: Mapping[str, Any]) -> dict[str, Any]:
        row: dict[str, Any] = {
            "point_id": task.point_id,
            "point_index": task.point_index,
            "repetition": task.repetition,
            "seed": task.seed,
            "status": outcome["status"],
            "error": outcome.get("error"),
            "wall_s": outcome.get("wall_s"),
            "sim_wall_s": None,
            "finished_at": _dt.datetime.now(_dt.UTC).replace(tzinfo=None),
            "rantcp_version": outcome.get("version"),
        }
        row.update(task.axes)
        if outcome["status"] == "ok":
            summary = json.loads(outcome["files"]["summary.json"])
            row["sim_wall_s"] = (summary.get("wall") or {}).get("seconds")
            row["rantcp_version"] = summary.get("rantcp_version", row["rantcp_version"])
            for k, v in flatten_summary(summary).items():
                if k not in row:
                    row[k] = v
        return row

    def _write_files(self, task: RunTask, outcome: Mapping[str, Any]) -> Path:
        """A finished run's files in a temporary folder of runs/ (not yet a run folder)."""
        tmp = self.runs_dir / f".tmp-{task.point_id}-{uuid.uuid4().hex[:8]}"
        tmp.mkdir()
        for rel, data in (outcome.get("files") or {}).items():
            p = tmp / rel
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_bytes(data)
        return tmp

    def _move_into_place(self, tmp: Path | None, task: RunTask) -> None:
        """Rename the temporary folder to runs/<point_id> (a failed run has none: any old folder
        of that id goes)."""
        final = self.runs_dir / task.point_id
        if final.exists():
            shutil.rmtree(final)
        if tmp is not None:
            tmp.rename(final)

    def _insert_rows(self, items: Sequence[tuple[RunTask, Mapping[str, Any]]], rows: Sequence[dict[str, Any]]) -> None:
        """The rows of a batch, inside the caller's open transaction."""
        con = self.con
        for (task, _), row in zip(items, rows):
            for k, v in row.items():
                self._ensure_column(k, _sql_value(v))
            if task.point_id in self._ids:  # a failed run done again (--retry-failed)
                con.execute("DELETE FROM runs WHERE point_id = ?", [task.point_id])
            names = list(row)
            con.execute(
                f"INSERT INTO runs ({', '.join(quote(n) for n in names)}) VALUES ({', '.join('?' for _ in names)})",
                [_sql_value(row[n]) for n in names],
            )

    def commit_many(self, items: Sequence[tuple[RunTask, Mapping[str, Any]]]) -> None:
        """Record finished runs: each run's files written and renamed into place, then all their
        rows inserted in one transaction (the commit point; one log sync for the lot)."""
        if not items:
            return
        rows = [self._row(t, o) for t, o in items]
        for t, o in items:
            tmp = self._write_files(t, o) if o["status"] == "ok" else None
            self._move_into_place(tmp, t)
        con = self.con
        con.execute("BEGIN TRANSACTION")
        try:
            self._insert_rows(items, rows)
            con.execute("COMMIT")
        except BaseException:
            con.execute("ROLLBACK")
            self._reload_types()
            raise
        self._ids.update(t.point_id for t, _ in items)


# ---------------------------------------------------------------------------------------------
# Reading a sweep folder


def check_folder(folder: Path) -> None:
    """Raise ConfigError (one line) when `folder` cannot be a sweep folder: a file, or a
    symbolic link to one."""
    if str(folder) == "":
        raise ConfigError("--out: empty path (give a folder name, e.g. --out out/sweep1)")
    if folder.exists() and not folder.is_dir():
        raise ConfigError(f"--out {folder}: exists and is not a folder; give a new folder or an earlier sweep folder")


def is_sweep_folder(folder: str | os.PathLike[str]) -> bool:
    return (Path(folder) / DB_NAME).is_file()


def _check_created(folder: Path, con: Any) -> None:
    """Raise ConfigError (one line) for a database the sweep was stopped in before its tables
    were committed (killed between creating sweep.duckdb and its first transaction)."""
    have = {r[0] for r in con.execute("SELECT table_name FROM information_schema.tables WHERE table_schema = 'main'").fetchall()}
    if not {"runs", "meta"} <= have:
        raise ConfigError(
            f"{folder}: the sweep was stopped before it recorded anything (its database has no runs table yet); "
            "run the same `rantcp sweep` command again"
        )


def read_table(folder: str | os.PathLike[str], ids: Iterable[str] | None = None) -> pd.DataFrame:
    """The `runs` table as a DataFrame, ordered by point and repetition (optionally only `ids`)."""
    folder = Path(folder)
    con = _connect(folder / DB_NAME, read_only=True)
    try:
        _check_created(folder, con)
        df = con.execute("SELECT * FROM runs ORDER BY point_index, repetition, point_id").df()
    finally:
        con.close()
    if ids is not None:
        keep = list(ids)
        df = df[df["point_id"].isin(keep)].reset_index(drop=True)
    return df


def read_meta(folder: str | os.PathLike[str]) -> dict[str, str]:
    con = _connect(Path(folder) / DB_NAME, read_only=True)
    try:
        _check_created(Path(folder), con)
        return {k: v for k, v in con.execute("SELECT key, value FROM meta").fetchall()}
    finally:
        con.close()
