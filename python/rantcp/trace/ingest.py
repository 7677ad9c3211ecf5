"""Ingest pcap/pcapng captures into a DuckDB trace database (the dissertation's Figure 28:
split into sessions, classify, store per-packet and per-session data).

Parsing and session building run in Rust (`rantcp._native.trace_open`) on a worker thread that
hands over packet rows in column chunks; each chunk becomes a pyarrow table over the same
buffers (no per-packet Python objects) and is inserted with `INSERT … SELECT` while the worker
parses the next one.

Each capture is ingested in one transaction: a killed ingest leaves either the whole capture or
nothing of it. A capture whose content hash (BLAKE3) is already in the database is skipped, so
the same command can be run again after an interruption.
"""

from __future__ import annotations

import csv
import fnmatch
import json
import os
import re
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rantcp.trace import schema

CAPTURE_SUFFIXES = (".pcap", ".pcapng", ".cap", ".pcap0", ".ntar")
COMPRESSED_SUFFIXES = (".gz", ".zst", ".lz4", ".bz2", ".xz")
"""A capture compressed whole (``x.pcap.gz``, as Wireshark writes): a folder search lists it,
so it is refused by name with the command that decompresses it, never skipped in silence."""


class TraceInputError(ValueError):
    """Bad input to the trace commands (a manifest, a pattern, a weights file): one line."""


@dataclass
class FileResult:
    path: str
    status: str  # ingested | skipped | failed
    message: str = ""
    capture_id: int | None = None
    sessions: int = 0
    packets: int = 0
    frames: int = 0
    malformed: int = 0
    truncated: bool = False
    seconds: float = 0.0


@dataclass
class IngestReport:
    files: list[FileResult] = field(default_factory=list)

    @property
    def failed(self) -> list[FileResult]:
        return [f for f in self.files if f.status == "failed"]

    @property
    def packets(self) -> int:
        return sum(f.packets for f in self.files)


# ---------------------------------------------------------------- classification tags


def read_manifest(path: str | Path) -> list[tuple[str, dict[str, str]]]:
    """A manifest CSV: a header row whose first column is `file` (a glob matched against the
    capture's path and its file name) and whose other columns are tag names."""
    p = Path(path)
    if not p.is_file():
        raise TraceInputError(f"manifest {str(p)!r} not found")
    with p.open(newline="") as f:
        rows = list(csv.reader(f))
    if not rows or not rows[0] or rows[0][0].strip().lower() not in ("file", "glob", "path"):
        raise TraceInputError(f"manifest {str(p)!r}: the first column must be headed 'file' (a glob), the others tag names")
    keys = [k.strip() for k in rows[0][1:]]
    for k in keys:
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", k):
            raise TraceInputError(f"manifest {str(p)!r}: tag name {k!r} must be letters, digits and _")
    out = []
    for n, row in enumerate(rows[1:], start=2):
        if not row or not row[0].strip():
            continue
        if len(row) != len(keys) + 1:
            raise TraceInputError(f"manifest {str(p)!r} line {n}: {len(row)} fields, expected {len(keys) + 1}")
        out.append((row[0].strip(), {k: v.strip() for k, v in zip(keys, row[1:]) if v.strip()}))
    return out


def compile_pattern(pattern: str) -> re.Pattern[str]:
    """A file-name pattern such as `{region}_{site}_{size}_{optimisation}.pcap`: each `{name}`
    matches one or more characters other than `/`; the rest is literal."""
    parts = re.split(r"(\{[^{}]*\})", pattern)
    rx = []
    names = set()
    for part in parts:
        if part.startswith("{") and part.endswith("}"):
            name = part[1:-1]
            if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name) or name in names:
                raise TraceInputError(f"--pattern {pattern!r}: {{{name}}} must be a new name of letters, digits and _")
            names.add(name)
            rx.append(f"(?P<{name}>[^/]+?)")
        else:
            rx.append(re.escape(part))
    if not names:
        raise TraceInputError(f"--pattern {pattern!r}: give at least one {{tag}}")
    return re.compile("".join(rx))


def tags_for(
    path: Path,
    manifest: Sequence[tuple[str, dict[str, str]]] = (),
    pattern: re.Pattern[str] | None = None,
    constant: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """Tags of one capture: a rantcp run folder's scenario and seed, then the manifest rows that
    match (in order), then the file-name pattern, then the constant tags — later ones win."""
    tags: dict[str, str] = {}
    for d in (path.parent, path.parent.parent):
        summary = d / "summary.json"
        if summary.is_file():
            try:
                s = json.loads(summary.read_text())
                tags.update(source="rantcp", scenario=str(s.get("scenario", "")), seed=str(s.get("seed", "")))
                tags["interface"] = path.stem
            except (OSError, ValueError):
                pass
            break
    names = {str(path), path.name, os.path.relpath(path)}
    for glob, row in manifest:
        if any(fnmatch.fnmatchcase(n, glob) for n in names):
            tags.update(row)
    if pattern is not None:
        m = pattern.fullmatch(path.name)
        if m:
            tags.update({k: v for k, v in m.groupdict().items() if v is not None})
    tags.update(constant or {})
    return tags


# ---------------------------------------------------------------- files


def expand(inputs: Iterable[str | os.PathLike[str]] | str | os.PathLike[str]) -> tuple[list[Path], list[FileResult]]:
    """Files to ingest (folders are searched for captures, recursively, in name order) and one
    failure per input that does not exist."""
    files: list[Path] = []
    missing: list[FileResult] = []
    if isinstance(inputs, (str, os.PathLike)):
        inputs = [inputs]  # one capture or folder, not its characters (a "/" searched the disk)
    for item in inputs:
        p = Path(item)
        if p.is_dir():
            found = sorted(q for q in p.rglob("*") if q.is_file() and _is_capture_name(q))
            files.extend(found)
        elif p.is_file():
            files.append(p)
        else:
            missing.append(FileResult(str(p), "failed", "no such file or folder"))
    seen: set[Path] = set()
    unique = []
    for f in files:
        r = f.resolve()
        if r not in seen:
            seen.add(r)
            unique.append(f)
    return unique, missing


def _is_capture_name(p: Path) -> bool:
    suffixes = [x.lower() for x in p.suffixes[-2:]]
    return bool(suffixes) and (
        suffixes[-1] in CAPTURE_SUFFIXES
        or (len(suffixes) == 2 and suffixes[0] in CAPTURE_SUFFIXES and suffixes[1] in COMPRESSED_SUFFIXES)
    )


# ---------------------------------------------------------------- database

_DUCKDB_MAGIC = (8, b"DUCK")
"""Where a DuckDB database file says what it is (the main header's magic bytes)."""


def _check_database_file(db: Path) -> None:
    """An existing --db must be a DuckDB database: DuckDB opens a CSV, JSON or Parquet file as
    an in-memory database over it, so an ingest into one reported success and stored nothing."""
    if not db.is_file():
        return
    off, magic = _DUCKDB_MAGIC
    try:
        with db.open("rb") as f:
            head = f.read(off + len(magic))
    except OSError as e:
        raise TraceInputError(f"trace database {str(db)!r}: cannot read it ({e.strerror})") from None
    if head[off:] != magic:
        raise TraceInputError(
            f"trace database {str(db)!r}: exists and is not a DuckDB database; give a new file name or a database "
            "`rantcp trace ingest` wrote"
        )


def connect(db: str | os.PathLike[str], read_only: bool = False, compress: bool = True) -> Any:
    """Open (creating if needed) a trace database with its schema. `compress=False` stores what
    this connection writes uncompressed: about half the CPU per packet, about five times the
    disk (DuckDB's per-column compression analysis is most of the insert cost)."""
    import duckdb

    from rantcp import _native

    _check_database_file(Path(db))
    try:
        if read_only:
            if not Path(db).is_file():
                raise TraceInputError(f"trace database {str(db)!r} not found (run `rantcp trace ingest` first)")
            return duckdb.connect(str(db), read_only=True)
        con = duckdb.connect(str(db))
    except duckdb.Error as e:
        # Locked by another process, not a DuckDB file, no permission: one line.
        raise TraceInputError(f"trace database {str(db)!r}: {str(e).splitlines()[0]}") from None
    con.execute("SET enable_progress_bar = false")
    if not compress:
        con.execute("SET force_compression = 'uncompressed'")
    con.execute("BEGIN")
    for ddl in (schema.META, schema.CAPTURES, schema.TAGS, schema.SESSIONS, schema.PACKET_ROWS):
        con.execute(ddl)
    con.execute(schema.packets_view(_native.trace_flag_names()))
    con.execute("INSERT OR REPLACE INTO trace_meta VALUES ('schema_version', ?)", [str(schema.SCHEMA_VERSION)])
    con.execute("COMMIT")
    return con


@contextmanager
def reading(db: str | os.PathLike[str] | Any) -> Iterator[Any]:
    """A read-only connection to the trace database at a path (closed afterwards), or the
    caller's own DuckDB connection as it is."""
    if isinstance(db, (str, os.PathLike)):
        con = connect(db, read_only=True)
        try:
            yield con
        finally:
            con.close()
    elif hasattr(db, "execute"):
        yield db
    else:
        raise TraceInputError(f"db: expected a trace database path or a DuckDB connection, not {type(db).__name__}")


def _arrow_chunk(chunk: dict[str, tuple[bytes, str]]) -> Any:
    import numpy as np
    import pyarrow as pa

    return pa.table({k: pa.array(np.frombuffer(b, dtype=dt)) for k, (b, dt) in chunk.items()})


_PACKET_SELECT = ", ".join(name for name, _ in schema.PACKET_COLUMNS)


def ingest_file(
    con: Any,
    path: Path,
    tags: Mapping[str, str],
    *,
    idle_split_s: float = 300.0,
    chunk_rows: int = 1 << 20,
    on_packets: Callable[[int], None] | None = None,
) -> FileResult:
    """Ingest one capture in one transaction; never raises for a bad file (see FileResult)."""
    import pyarrow as pa

    import rantcp
    from rantcp import _native

    t0 = time.perf_counter()
    shown = str(path)
    try:
        size = path.stat().st_size
    except OSError as e:
        return FileResult(shown, "failed", e.strerror or str(e))
    same_size = con.execute("SELECT blake3 FROM captures WHERE file_bytes = ?", [size]).fetchall()
    if same_size:
        digest = _native.trace_file_hash(str(path))
        if any(h == digest for (h,) in same_size):
            return FileResult(shown, "skipped", "already ingested (same content)")
    packets = 0
    con.execute("BEGIN")
    try:
        capture_id = con.execute("SELECT coalesce(max(capture_id), 0) + 1 FROM captures").fetchall()[0][0]
        base = con.execute("SELECT coalesce(max(session_id), -1) + 1 FROM sessions").fetchall()[0][0]
        try:
            it = _native.trace_open(str(path), idle_split_s, chunk_rows, base)
        except OSError as e:
            con.execute("ROLLBACK")
            return FileResult(shown, "failed", str(e).split(": ", 1)[-1])
        while (chunk := it.next_chunk()) is not None:
            tbl = _arrow_chunk(chunk)
            con.register("_trace_chunk", tbl)
            con.execute(f"INSERT INTO packet_rows SELECT session_id, {_PACKET_SELECT} FROM _trace_chunk")
            con.unregister("_trace_chunk")
            packets += tbl.num_rows
            if on_packets:
                on_packets(tbl.num_rows)
        try:
            res = it.result()
        except ValueError as e:
            con.execute("ROLLBACK")
            return FileResult(shown, "failed", str(e))
        cap = res["capture"]
        note = cap.get("unsupported_note")
        if note and cap["unsupported_frames"] == cap["frames"]:
            # Nothing in the file could be read: refuse it rather than store an empty capture.
            con.execute("ROLLBACK")
            return FileResult(shown, "failed", note)
        if con.execute("SELECT count(*) FROM captures WHERE blake3 = ?", [cap["blake3"]]).fetchall()[0][0]:
            con.execute("ROLLBACK")
            return FileResult(shown, "skipped", "already ingested (same content)")
        sess = res["sessions"]
        n_sessions = len(sess["session"])
        cols = {"session_id": pa.array([base + i for i in sess["session"]], pa.int64()),
                "capture_id": pa.array([capture_id] * n_sessions, pa.int32())}
        for name, _ in schema.SESSION_COLUMNS:
            cols[name] = pa.array(sess[name])
        con.register("_trace_sessions", pa.table(cols))
        names = ", ".join(["session_id", "capture_id"] + [n for n, _ in schema.SESSION_COLUMNS])
        con.execute(f"INSERT INTO sessions ({names}) SELECT {names} FROM _trace_sessions")
        con.unregister("_trace_sessions")
        seconds = time.perf_counter() - t0
        con.execute(
            "INSERT INTO captures VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [
                capture_id, str(path.resolve()), cap["blake3"], cap["file_bytes"], cap["format"],
                ",".join(str(x) for x in cap["linktypes"]), cap["frames"], cap["tcp_packets"],
                cap["not_tcp"], cap["malformed"], cap["repaired"], cap["truncated"], cap["stop_reason"],
                cap["first_ts_ns"], cap["last_ts_ns"], n_sessions, seconds, rantcp.__version__,
            ],
        )
        if tags:
            con.executemany("INSERT INTO tags VALUES (?, ?, ?)", [[capture_id, k, v] for k, v in sorted(tags.items())])
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise
    notes = []
    if cap["truncated"]:
        notes.append(f"truncated: {cap['stop_reason']}; {cap['frames']} frames before it were read")
    if note:
        notes.append(f"{cap['unsupported_frames']} frames skipped: {note}")
    if cap["malformed"]:
        notes.append(f"{cap['malformed']} of {cap['frames']} frames malformed (an IP or TCP header damaged "
                     "or cut short by the snapshot length)")
    if cap["ts_backwards"]:
        notes.append(f"{cap['ts_backwards']} frames have an earlier timestamp than the frame before "
                     "(analysed in file order)")
    msg = "; ".join(notes)
    return FileResult(
        shown, "ingested", msg, capture_id, n_sessions, packets, cap["frames"], cap["malformed"],
        cap["truncated"], time.perf_counter() - t0,
    )


def ingest(
    captures: Iterable[str | os.PathLike[str]] | str | os.PathLike[str],
    db: str | Path,
    *,
    manifest: str | Path | None = None,
    pattern: str | None = None,
    tags: Mapping[str, str] | None = None,
    idle_split_s: float = 300.0,
    chunk_rows: int = 1 << 20,
    compress: bool = True,
    on_file: Callable[[FileResult], None] | None = None,
    on_packets: Callable[[int], None] | None = None,
) -> IngestReport:
    """Ingest captures (files or folders) into the DuckDB database `db`.

    Tags per capture come from a rantcp run folder's summary.json, a `manifest` CSV, a file-name
    `pattern` and constant `tags` (see `tags_for`). A file that cannot be read is reported in the
    result (status "failed") and the others go on; nothing already in the database is touched.
    `compress=False` trades disk for speed (see `connect`).
    """
    rows = read_manifest(manifest) if manifest else []
    rx = compile_pattern(pattern) if pattern else None
    files, missing = expand(captures)
    report = IngestReport(files=list(missing))
    for r in missing:
        if on_file:
            on_file(r)
    con = connect(db, compress=compress)
    try:
        for f in files:
            r = ingest_file(con, f, tags_for(f, rows, rx, tags), idle_split_s=idle_split_s,
                            chunk_rows=chunk_rows, on_packets=on_packets)
            report.files.append(r)
            if on_file:
                on_file(r)
    finally:
        con.close()
    return report
