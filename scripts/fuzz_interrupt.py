#!/usr/bin/env python3
"""Interrupt the commands that write, at random or exact instants, and check nothing is lost.

Each case (drawn from its seed: a finding replays with ``--start SEED --count 1``) starts one
writing command over earlier output, delivers SIGINT, SIGTERM or SIGKILL, then checks:

- run:       ``rantcp run --out DIR`` over an earlier run folder (sometimes with --plots): DIR
             is the old run byte for byte or the new one complete (summary.json without its
             wall-clock table, every Parquet file, the file list); after SIGINT/SIGTERM no
             ``.DIR.partial-*``/``.DIR.old-*`` is left; after SIGKILL the next run into DIR
             leaves none either;
- sweep:     8 runs of p2p-bulk (4 controllers x 2 repetitions, 1 s): the store opens, every ok
             row has its summary.json, no run is recorded twice; the same command then resumes,
             keeps the rows finished before (same finished_at, same files), runs only the others,
             and every row and run file equals an uninterrupted sweep's;
- reproduce: ``reproduce seed-003-split --quick`` likewise, and its claims and figure data
             equal an uninterrupted reproduction's;
- ingest:    ``trace ingest`` of three larger captures into a database with two: the database
             opens and is the first k captures of an uninterrupted ingest (the two intact, each new
             one all in or absent); ingesting again gives the uninterrupted database;
- report:    ``rantcp report RUN`` over an earlier report.html: the page is the old one or the
             new one whole, no temporary file is left after SIGINT/SIGTERM, and the folder is still
             a run folder.

Every command must end with exit 0 (it finished first), 130 (SIGINT/SIGTERM) or -9, and print no
traceback. Instants: ``timed`` (a uniform delay over the command's uninterrupted wall time,
start-up included) or ``hook`` (scripts/interrupt_at.py: just before/after the N-th call of a
writing function: the staging swap, a rename, a DuckDB commit, a Parquet or page write).
Signals go to the process, or for SIGINT sometimes to its whole process group, as a terminal's
Ctrl-C does (the sweep's workers get it too).

  .venv/bin/python scripts/fuzz_interrupt.py --start 1 --count 100 [--only run,sweep]

Not part of `make test`: about 3-6 s a case on a shared 2-core box (--workers 1 or 2), 60-90 s
for reproduce. Its regression cases are tests/test_interrupt.py. Timed instants are a fraction of
the wall measured at start, so a timed finding replays only roughly; hook instants replay exactly.

Runs 2026-11-28: seeds 1-10 (run), 1-8 (sweep, ingest, report), 101-160, 301-350, 401-440
(run, sweep, ingest, report), 201-206 (reproduce seed-003-split --quick, 184 runs); after the
fixes 501-530, 601-608: only what is left below. 234 cases in all.
Found and fixed: a SIGKILLed run's .DIR.partial-* stayed forever (2 of 2 SIGKILLs mid-run);
report.html.tmp left by SIGINT/SIGTERM before the page's rename, after which `run --out` refused
the folder; `trace ingest` interrupted inside a DuckDB INSERT: traceback, exit 1; SIGTERM or
SIGINT during start-up: traceback, exit -2; SIGKILL before a sweep's tables existed: report/load
failed with CatalogException; a forkserver child's traceback (EOFError, SemLock._rebuild's
FileNotFoundError) when the sweep stopped while the pool started a worker (5 of ~80 sweep cases,
data intact); a Ctrl-C as the interpreter exits, after the work: Python's "Exception ignored in
threading._shutdown ... KeyboardInterrupt" (seed 604); found beside them, by hand: a terminal's
Ctrl-C that found a pool worker idle (its traceback, a broken pool) or the forkserver importing
its preload (its traceback, the coordinator's EOFError). Left then, found later by
scripts/interrupt_grid.py (every instant of the start-up): two SIGTERMs at 0.25 s into a sweep not
acted on (exit 0 after the whole sweep) and a hang after a group Ctrl-C to `run` at 0.184 s. Two
causes drop a signal: raised inside importlib (it also leaves the import lock held, and `run
--plots` then deadlocked with its prefetch thread: rantcp.interrupts) and, in the sweep store's
column query, DuckDB's "Query interrupted" taken for an error. Never seen: an old run or page damaged, a half run in DIR, a
run recorded twice or ok without its files, a resumed sweep or reproduction differing from an
uninterrupted one, a trace database with half a capture or unreadable, workers outliving the
sweep.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
PY = str(ROOT / ".venv" / "bin" / "python")
RANTCP = str(ROOT / ".venv" / "bin" / "rantcp")
HOOK = str(ROOT / "scripts" / "interrupt_at.py")

SIGS = {"INT": signal.SIGINT, "TERM": signal.SIGTERM, "KILL": signal.SIGKILL}
SWEEP_TOML = """[sweep]
name = "interrupt"
scenario = "builtin:p2p-bulk"
repetitions = 2
seed = 5
[set]
duration = "10s"
[axes]
"flow.cc" = ["newreno", "cubic", "bbr", "highspeed"]
"""
REPRO = "seed-003-split"
HOOKS = {
    "run": ["rantcp.outdir._exchange", "rantcp.outdir._exchange+", "os.rename", "shutil.rmtree", "shutil.rmtree+",
            "rantcp.outdir.Staging.commit", "rantcp.api._Series.close", "rantcp.api._Series.close+",
            "pathlib.Path.write_text", "rantcp.plots.run_plots", "rantcp.api._advance"],
    "sweep": ["rantcp.sweeps.store.Store.commit_many", "rantcp.sweeps.store.Store.commit_many+",
              "rantcp.sweeps.store.Store._insert_rows", "rantcp.sweeps.store.Store._insert_rows+",
              "rantcp.sweeps.store.Store._move_into_place", "rantcp.sweeps.store.Store._write_files+",
              "rantcp.sweeps.store.Store.open", "rantcp.sweeps.store.Store.open+", "rantcp.sweeps.store.Store._cleanup",
              "multiprocessing.forkserver.connect_to_new_process+", "multiprocessing.forkserver.read_signed+"],
    "reproduce": ["rantcp.sweeps.store.Store.commit_many+", "rantcp.reproductions.render", "rantcp.reproductions._write",
                  "rantcp.reproductions._write+", "os.replace", "rantcp.reproductions.page.render"],
    "ingest": ["rantcp.trace.ingest._arrow_chunk", "rantcp.trace.ingest.ingest_file", "rantcp.trace.ingest.ingest_file+",
               "rantcp.trace.ingest.connect+", "rantcp.trace.ingest.FileResult"],
    "report": ["pathlib.Path.write_text", "pathlib.Path.write_text+", "pathlib.Path.replace", "pathlib.Path.replace+",
               "rantcp.report.render_run"],
}


# ------------------------------------------------------------------ digests


def file_digest(p: Path) -> str:
    if p.name == "summary.json":
        s = json.loads(p.read_text())
        s.pop("wall", None)
        return hashlib.sha256(json.dumps(s, sort_keys=True).encode()).hexdigest()
    if p.suffix == ".png":  # matplotlib's PNGs: whole, not necessarily byte-identical
        b = p.read_bytes()
        return "png" if b.startswith(b"\x89PNG") and b.endswith(b"IEND\xaeB`\x82") else "broken-png"
    return hashlib.sha256(p.read_bytes()).hexdigest()


def tree(path: Path, normalised: bool = True) -> dict[str, str]:
    """{relative path: digest} of every file (summary.json without its wall-clock part)."""
    if not path.is_dir():
        return {}
    out = {}
    for p in sorted(path.rglob("*")):
        if p.is_file():
            rel = str(p.relative_to(path))
            out[rel] = file_digest(p) if normalised else hashlib.sha256(p.read_bytes()).hexdigest()
    return out


def leftovers(parent: Path, name: str) -> list[str]:
    return sorted(p.name for p in parent.iterdir() if p.name.startswith(f".{name}.partial-") or p.name.startswith(f".{name}.old-"))


def sweep_rows(folder: Path) -> dict[str, dict[str, Any]]:
    """point_id -> row (as text) of the runs table, read with a plain read-only DuckDB open."""
    import duckdb

    con = duckdb.connect(str(folder / "sweep.duckdb"), read_only=True)
    try:
        cur = con.execute("SELECT * FROM runs")
        cols = [d[0] for d in cur.description]
        rows = cur.fetchall()
    finally:
        con.close()
    out: dict[str, dict[str, Any]] = {}
    for r in rows:
        d = dict(zip(cols, r))
        if d["point_id"] in out:
            raise AssertionError(f"point {d['point_id']} recorded twice")
        out[d["point_id"]] = {k: repr(v) for k, v in d.items()}
    return out


def trace_state(db: Path) -> dict[str, Any]:
    import duckdb

    con = duckdb.connect(str(db), read_only=True)
    try:
        caps = con.execute("SELECT capture_id, blake3, frames, sessions FROM captures ORDER BY capture_id").fetchall()
        per = con.execute(
            "SELECT s.capture_id, count(*), sum(hash(p)::HUGEINT) FROM packet_rows p JOIN sessions s USING (session_id) "
            "GROUP BY 1 ORDER BY 1").fetchall()
        sess = con.execute("SELECT capture_id, count(*) FROM sessions GROUP BY 1 ORDER BY 1").fetchall()
        tags = con.execute("SELECT * FROM tags ORDER BY ALL").fetchall()
        orphans = con.execute("SELECT count(*) FROM sessions WHERE capture_id NOT IN (SELECT capture_id FROM captures)").fetchall()[0][0]
    finally:
        con.close()
    return {"captures": [list(map(str, c)) for c in caps], "packets": [list(map(str, p)) for p in per],
            "sessions": [list(map(str, s)) for s in sess], "tags": [list(map(str, t)) for t in tags], "orphans": orphans}


def page_digest(page: bytes) -> str:
    """A report page without what differs between identical reports: its folder's absolute
    path and the minute it was written."""
    text = re.sub(rb"folder [^<]*</p>", b"folder </p>", page)
    text = re.sub(rb"report written [^<]*</p>", b"report written </p>", text)
    return hashlib.sha256(text).hexdigest()


def prefix(state: dict[str, Any], n: int) -> dict[str, Any]:
    """A trace state restricted to its first n captures (ids 1..n)."""
    keep = lambda rows: [r for r in rows if int(r[0]) <= n]  # noqa: E731
    return {"captures": keep(state["captures"]), "packets": keep(state["packets"]), "sessions": keep(state["sessions"]),
            "tags": keep(state["tags"]), "orphans": state["orphans"]}


# ------------------------------------------------------------------ running


def sh(*argv: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    r = subprocess.run(argv, cwd=cwd, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)}: exit {r.returncode}: {r.stderr[-2000:]}")
    return r


def interrupted(argv: list[str], cwd: Path, sig: signal.Signals, delay: float | None, group: bool) -> tuple[int, str, float]:
    """Start argv in its own process group; deliver sig after delay (None: the hook does it).
    Returns (exit status, stderr, seconds). Whatever the group still holds 5 s after the
    coordinator ended is reported and killed (it was started here)."""
    t0 = time.perf_counter()
    p = subprocess.Popen(argv, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, start_new_session=True)
    if delay is not None:
        try:
            p.wait(timeout=delay)
        except subprocess.TimeoutExpired:
            if group:
                os.killpg(p.pid, sig)
            else:
                p.send_signal(sig)
    try:
        _, err = p.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        _, err = p.communicate()
        err += "\n[harness: did not stop within 120 s of the signal]"
    wall = time.perf_counter() - t0
    for _ in range(50):  # local sweep workers leave by themselves within ~0.5 s of the coordinator
        try:
            os.killpg(p.pid, 0)
        except ProcessLookupError:
            break
        time.sleep(0.1)
    else:
        err += "\n[harness: processes of the group still alive 5 s after the command ended]"
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    return p.returncode, err, wall


class Workspace:
    """The reference outputs, made once, uninterrupted."""

    def __init__(self, w: Path, targets: list[str]) -> None:
        self.w = w
        self.walls: dict[str, float] = {}
        sh(RANTCP, "run", "builtin:p2p-bulk", "--seed", "1", "--set", "duration=0.5s", "--quiet", "--out", "old-run", cwd=w)
        self.old_run_raw = tree(w / "old-run", normalised=False)
        for plots in (False, True):
            t = time.perf_counter()
            sh(*self.run_argv(Path(f"new-run-{plots}"), plots), cwd=w)
            self.walls[f"run-{plots}"] = time.perf_counter() - t
        self.new_run = {p: tree(w / f"new-run-{p}") for p in (False, True)}
        (w / "sweep.toml").write_text(SWEEP_TOML)
        t = time.perf_counter()
        sh(*self.sweep_argv(w / "ref-sweep", 2), cwd=w)
        self.walls["sweep"] = time.perf_counter() - t
        self.ref_sweep = sweep_rows(w / "ref-sweep")
        self.ref_sweep_files = tree(w / "ref-sweep" / "runs")
        if "reproduce" in targets:
            t = time.perf_counter()
            sh(*self.repro_argv(w / "ref-repro", 2), cwd=w)
            self.walls["reproduce"] = time.perf_counter() - t
            self.ref_repro = self.repro_outputs(w / "ref-repro")
        caps = w / "caps"
        caps.mkdir()
        gen = "import sys; from rantcp import _native; _native.trace_write_synthetic(sys.argv[1], int(sys.argv[2]))"
        sh(PY, "-c", gen, "caps/a.pcap", "300", cwd=w)
        sh(PY, "-c", gen, "caps/b.pcapng", "200", cwd=w)
        for i in range(3):  # three captures: each is one transaction
            sh(PY, "-c", gen, f"caps/big{i}.pcap", str(200000 + i), cwd=w)
        sh(RANTCP, "trace", "ingest", "caps/a.pcap", "--db", "base.duckdb", "--quiet", "--tag", "opt=a", cwd=w)
        sh(RANTCP, "trace", "ingest", "caps/b.pcapng", "--db", "base.duckdb", "--quiet", "--tag", "opt=b", cwd=w)
        self.base_trace = trace_state(w / "base.duckdb")
        shutil.copy(w / "base.duckdb", w / "ref.duckdb")
        t = time.perf_counter()
        sh(*self.ingest_argv(w / "ref.duckdb"), cwd=w)
        self.walls["ingest"] = time.perf_counter() - t
        self.ref_trace = trace_state(w / "ref.duckdb")
        shutil.copytree(w / "old-run", w / "report-run")
        (w / "report-run" / "report.html").write_text("<!doctype html><title>an earlier report</title></html>\n")
        self.old_report = (w / "report-run" / "report.html").read_bytes()
        (w / "ref-report").mkdir()  # the page names its folder: the same name as the cases'
        shutil.copytree(w / "report-run", w / "ref-report" / "run")
        t = time.perf_counter()
        sh(RANTCP, "report", "run", cwd=w / "ref-report")
        self.walls["report"] = time.perf_counter() - t
        self.new_report = page_digest((w / "ref-report" / "run" / "report.html").read_bytes())

    @staticmethod
    def run_argv(out: Path, plots: bool) -> list[str]:
        return [RANTCP, "run", "builtin:p2p-bulk", "--seed", "2", "--set", "duration=2s", "--quiet", "--out", str(out),
                *(["--plots"] if plots else [])]

    def sweep_argv(self, out: Path, workers: int) -> list[str]:
        return [RANTCP, "sweep", str(self.w / "sweep.toml"), "--out", str(out), "--workers", str(workers), "--quiet"]

    @staticmethod
    def repro_argv(out: Path, workers: int) -> list[str]:
        return [RANTCP, "reproduce", REPRO, "--quick", "--out", str(out), "--workers", str(workers)]

    def ingest_argv(self, db: Path) -> list[str]:
        return [RANTCP, "trace", "ingest", *(str(self.w / "caps" / f"big{i}.pcap") for i in range(3)), "--db", str(db),
                "--quiet", "--tag", "opt=big"]

    @staticmethod
    def repro_outputs(out: Path) -> dict[str, str]:
        keep = {}
        for p in sorted(out.rglob("*")):
            rel = str(p.relative_to(out))
            if p.is_file() and (rel.startswith("figures/") or rel.startswith("claims.")):
                keep[rel] = file_digest(p)
        return keep


# ------------------------------------------------------------------ the cases


def check_exit(rc: int, err: str, sig: signal.Signals, problems: list[str]) -> None:
    if "Traceback" in err or "panicked" in err or "[harness" in err:
        problems.append("stderr: " + err.strip()[-1500:])
    # -15: a SIGTERM before the command installs its handler (start-up) or after the interpreter
    # removed it (its exit); the outputs are checked like a SIGKILL's.
    # -2: a SIGINT as the interpreter exits, after the command's work (outputs checked the same way).
    allowed = {0, 130, -9} if sig == signal.SIGKILL else {0, 130, -15} if sig == signal.SIGTERM else {0, 130, -2}
    if rc not in allowed:
        problems.append(f"exit {rc} (expected one of {sorted(allowed)}); stderr: {err.strip()[-600:]}")


def case_run(ws: Workspace, c: Path, rng: random.Random, sig: signal.Signals, inst: dict[str, Any]) -> list[str]:
    problems: list[str] = []
    plots = rng.random() < 0.3
    out = c / "out"
    shutil.copytree(ws.w / "old-run", out)
    argv = ws.run_argv(out, plots)
    rc, err, _ = launch(argv, c, sig, inst)
    check_exit(rc, err, sig, problems)
    now = tree(out, normalised=False)
    if now != ws.old_run_raw and tree(out) != ws.new_run[plots]:
        problems.append(f"out is neither the old run nor the new one: {sorted(tree(out))}")
    if rc == 0 and tree(out) != ws.new_run[plots]:
        problems.append("exit 0 but out is not the new run")
    left = leftovers(c, "out")
    inst["leftover"] = left
    if left and inst["exit"] not in (-9, -15, -2):
        problems.append(f"left behind after SIG{sig.name[3:]}: {left}")
    # The next run into the same folder completes and leaves nothing of the interrupted one.
    sh(*argv, cwd=c)
    if tree(out) != ws.new_run[plots]:
        problems.append("the rerun's folder differs from the reference run")
    if leftovers(c, "out"):
        problems.append(f"still there after the next run: {leftovers(c, 'out')}")
    return problems


def _check_store(folder: Path, problems: list[str]) -> dict[str, dict[str, Any]]:
    if not (folder / "sweep.duckdb").exists():
        return {}
    import duckdb

    con = duckdb.connect(str(folder / "sweep.duckdb"), read_only=True)
    try:
        tables = {r[0] for r in con.execute("SELECT table_name FROM information_schema.tables").fetchall()}
    finally:
        con.close()
    if "runs" not in tables:  # killed before the first transaction: readers must say so in one line
        r = subprocess.run([RANTCP, "report", str(folder)], capture_output=True, text=True)
        if r.returncode != 2 or len(r.stderr.splitlines()) != 1:
            problems.append(f"a store without tables: report exits {r.returncode}: {r.stderr.strip()[-300:]}")
        return {}
    try:
        rows = sweep_rows(folder)
    except Exception as e:  # noqa: BLE001 - any failure to read is the finding
        problems.append(f"store unreadable: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}")
        return {}
    for pid, row in rows.items():
        if row["status"] == "'ok'" and not (folder / "runs" / pid / "summary.json").is_file():
            problems.append(f"run {pid} recorded ok but its summary.json is missing")
        if row["status"] != "'ok'":
            problems.append(f"run {pid} recorded as {row['status']}: {row['error']}")
    return rows


def case_sweep(ws: Workspace, c: Path, rng: random.Random, sig: signal.Signals, inst: dict[str, Any]) -> list[str]:
    problems: list[str] = []
    out = c / "sw"
    workers = rng.choice([1, 2])
    argv = ws.sweep_argv(out, workers)
    rc, err, _ = launch(argv, c, sig, inst)
    check_exit(rc, err, sig, problems)
    before = _check_store(out, problems)
    files_before = {pid: tree(out / "runs" / pid) for pid in before}
    inst["done_before"] = len(before)
    r = subprocess.run(argv, cwd=c, capture_output=True, text=True)
    if r.returncode != 0 or "Traceback" in r.stderr:
        problems.append(f"rerun: exit {r.returncode}: {r.stderr.strip()[-800:]}")
        return problems
    after = _check_store(out, problems)
    for pid, row in before.items():
        if after.get(pid, {}).get("finished_at") != row["finished_at"]:
            problems.append(f"run {pid} finished before the interrupt was run again")
        if tree(out / "runs" / pid) != files_before[pid]:
            problems.append(f"run {pid}'s files changed on resume")
    problems += compare_rows(after, ws.ref_sweep)
    if tree(out / "runs") != ws.ref_sweep_files:
        problems.append("the resumed sweep's run files differ from an uninterrupted sweep's")
    stray = [p.name for p in (out / "runs").iterdir() if p.name not in after]
    if stray:
        problems.append(f"run folders without a row after the rerun: {stray}")
    return problems


def compare_rows(got: dict[str, dict[str, Any]], ref: dict[str, dict[str, Any]]) -> list[str]:
    if set(got) != set(ref):
        return [f"rows {sorted(got)} != the reference's {sorted(ref)}"]
    skip = {"wall_s", "sim_wall_s", "finished_at"}
    bad = [pid for pid in ref if {k: v for k, v in got[pid].items() if k not in skip} != {k: v for k, v in ref[pid].items() if k not in skip}]
    return [f"rows differ from the uninterrupted sweep's: {bad}"] if bad else []


def case_reproduce(ws: Workspace, c: Path, rng: random.Random, sig: signal.Signals, inst: dict[str, Any]) -> list[str]:
    problems: list[str] = []
    out = c / "rp"
    argv = ws.repro_argv(out, rng.choice([1, 2]))
    rc, err, _ = launch(argv, c, sig, inst)
    check_exit(rc, err, sig, problems)
    sweeps = sorted((out / "sweeps").glob("*")) if (out / "sweeps").is_dir() else []
    before = {s.name: _check_store(s, problems) for s in sweeps}
    inst["done_before"] = sum(len(b) for b in before.values())
    r = subprocess.run(argv, cwd=c, capture_output=True, text=True)
    if r.returncode not in (0, 1) or "Traceback" in r.stderr:
        problems.append(f"rerun: exit {r.returncode}: {r.stderr.strip()[-800:]}")
        return problems
    for s, rows in before.items():
        after = _check_store(out / "sweeps" / s, problems)
        for pid, row in rows.items():
            if after.get(pid, {}).get("finished_at") != row["finished_at"]:
                problems.append(f"{s}: run {pid} finished before the interrupt was run again")
    got = ws.repro_outputs(out)
    if got != ws.ref_repro:
        diff = sorted(k for k in set(got) | set(ws.ref_repro) if got.get(k) != ws.ref_repro.get(k))
        problems.append(f"outputs differ from an uninterrupted reproduction's: {diff}")
    stray = [str(p.relative_to(out)) for p in out.rglob(".*.tmp")]
    if stray:
        problems.append(f"temporary files left after the rerun: {stray}")
    return problems


def case_ingest(ws: Workspace, c: Path, rng: random.Random, sig: signal.Signals, inst: dict[str, Any]) -> list[str]:
    problems: list[str] = []
    db = c / "t.duckdb"
    shutil.copy(ws.w / "base.duckdb", db)
    argv = ws.ingest_argv(db)
    rc, err, _ = launch(argv, c, sig, inst)
    check_exit(rc, err, sig, problems)
    try:
        st = trace_state(db)
    except Exception as e:  # noqa: BLE001
        problems.append(f"database unreadable: {type(e).__name__}: {str(e).splitlines()[0]}")
        return problems
    n = len(st["captures"])
    inst["captures_after"] = n
    if st != prefix(ws.ref_trace, n):
        problems.append(f"database is not the first {n} captures of an uninterrupted ingest: {json.dumps(st)[:600]}")
    r = subprocess.run(argv, cwd=c, capture_output=True, text=True)
    if r.returncode != 0 or "Traceback" in r.stderr:
        problems.append(f"re-ingest: exit {r.returncode}: {r.stderr.strip()[-800:]}")
    elif trace_state(db) != ws.ref_trace:
        problems.append("re-ingest: database differs from an uninterrupted ingest's")
    if Path(str(db) + ".wal").exists() and rc == 0:
        pass
    return problems


def case_report(ws: Workspace, c: Path, rng: random.Random, sig: signal.Signals, inst: dict[str, Any]) -> list[str]:
    problems: list[str] = []
    run = c / "run"
    shutil.copytree(ws.w / "report-run", run)
    argv = [RANTCP, "report", "run"]
    rc, err, _ = launch(argv, c, sig, inst)
    check_exit(rc, err, sig, problems)
    page = (run / "report.html").read_bytes() if (run / "report.html").exists() else b"<missing>"
    if page != ws.old_report and page_digest(page) != ws.new_report:
        problems.append(f"report.html is neither the old page nor the new one ({len(page)} bytes)")
    stray = sorted(p.name for p in run.iterdir() if p.name not in {"summary.json", ".rantcp-run", "report.html"} and p.suffix != ".parquet")
    inst["leftover"] = stray
    if stray and inst["exit"] not in (-9, -15, -2):
        problems.append(f"left in the run folder after SIG{sig.name[3:]}: {stray}")
    r = subprocess.run([RANTCP, "run", "builtin:p2p-bulk", "--set", "duration=0.1s", "--quiet", "--out", str(run)],
                       cwd=c, capture_output=True, text=True)
    if r.returncode != 0:
        problems.append(f"after the interrupted report, `run --out` into the folder: exit {r.returncode}: {r.stderr.strip()}")
    return problems


CASES = {"run": case_run, "sweep": case_sweep, "reproduce": case_reproduce, "ingest": case_ingest, "report": case_report}
WALL_KEY = {"run": "run-True", "sweep": "sweep", "reproduce": "reproduce", "ingest": "ingest", "report": "report"}


def launch(argv: list[str], c: Path, sig: signal.Signals, inst: dict[str, Any]) -> tuple[int, str, float]:
    if inst["kind"] == "hook":
        res = interrupted([PY, HOOK, inst["hook"], sig.name[3:], "--", *argv[1:]], c, sig, None, False)
    else:
        res = interrupted(argv, c, sig, inst["delay"], inst["group"])
    inst["exit"] = res[0]
    return res


def draw(ws: Workspace, seed: int, only: list[str]) -> tuple[str, signal.Signals, dict[str, Any], random.Random]:
    rng = random.Random(seed)
    target = rng.choice(only)
    sig = SIGS[rng.choice(sorted(SIGS))]
    if rng.random() < 0.5:
        hook = rng.choice(HOOKS[target])
        if rng.random() < 0.3 and not hook.startswith(("rantcp.sweeps.store.Store.open", "rantcp.trace.ingest.connect")):
            base, plus = hook.rstrip("+"), "+" if hook.endswith("+") else ""
            hook = f"{base}@{rng.randint(2, 4)}{plus}"
        inst: dict[str, Any] = {"kind": "hook", "hook": hook}
    else:
        inst = {"kind": "timed", "delay": round(rng.uniform(0.0, 1.1 * ws.walls[WALL_KEY[target]]), 3),
                "group": sig == signal.SIGINT and rng.random() < 0.5}
    return target, sig, inst, rng


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--start", type=int, default=1)
    ap.add_argument("--count", type=int, default=50)
    ap.add_argument("--only", default=",".join(sorted(CASES)), help="comma-separated targets: " + ", ".join(sorted(CASES)))
    ap.add_argument("--log", default="fuzz-interrupt-results.txt")
    ap.add_argument("--keep", action="store_true", help="keep the work folder")
    a = ap.parse_args()
    w = Path(tempfile.mkdtemp(prefix="rantcp-interrupt-"))
    t0 = time.perf_counter()
    only = sorted(set(a.only.split(",")))
    if not only or not set(only) <= set(CASES):
        ap.error(f"--only: expected some of {', '.join(sorted(CASES))}")
    ws = Workspace(w, only)
    print(f"workspace {w} ready in {time.perf_counter() - t0:.1f} s; uninterrupted walls: "
          + ", ".join(f"{k} {v:.2f} s" for k, v in ws.walls.items()), flush=True)
    counts: dict[str, int] = {}
    bad = 0
    with open(a.log, "w") as log:
        for seed in range(a.start, a.start + a.count):
            target, sig, inst, rng = draw(ws, seed, only)
            c = w / f"case-{seed}"
            c.mkdir()
            try:
                problems = CASES[target](ws, c, rng, sig, inst)
            except Exception as e:  # noqa: BLE001 - the harness's own failure is a finding too
                problems = [f"harness: {type(e).__name__}: {e}"]
            key = f"{target}/{sig.name}/{'ok' if not problems else 'BAD'}"
            counts[key] = counts.get(key, 0) + 1
            line = f"seed {seed}: {target} SIG{sig.name[3:]} {json.dumps(inst)}: " + ("ok" if not problems else " | ".join(problems))
            print(line, flush=True)
            log.write(line + "\n")
            bad += bool(problems)
            if not problems:
                shutil.rmtree(c, ignore_errors=True)
    print(json.dumps(dict(sorted(counts.items())), indent=1))
    print(f"{bad} of {a.count} cases found something; log: {a.log}")
    if not a.keep and not bad:
        shutil.rmtree(w, ignore_errors=True)


if __name__ == "__main__":
    main()
