"""Parameter sweeps: a base scenario, axes over config paths, repetitions with derived seeds,
run on a local process pool (all cores by default) or on a dask.distributed cluster.

A sweep file (TOML)::

    [sweep]
    name = "cc-loss"                  # default: the file's stem
    scenario = "builtin:p2p-bulk"     # or a TOML file, relative to this sweep file
    repetitions = 2                   # runs per point, each with its own seed (default 1)
    seed = 1                          # base seed the repetition seeds derive from
                                      # (default: the base scenario's seed)
    # seeds = [1, 2, 3]               # or explicit seeds, one repetition each
    # zip = [["flow.cc", "flow.pacing"]]   # axes in one group advance together
    # zip = true                      # zip every axis (default: cross product of all axes)

    [set]                             # overrides applied to every point
    duration = "10s"

    [axes]                            # one axis per config path, values in order
    "flow.cc" = ["newreno", "cubic", "highspeed", "bbr"]
    "bottleneck.loss" = [0.0, 1e-3, 1e-2]
    "bottleneck.rate" = { start = 10, stop = 50, step = 10, unit = "Mbps" }   # stop included
    "flow.mss" = { start = 500, stop = 1500, num = 3 }                        # evenly spaced
    "bottleneck.delay" = { start = 1, stop = 100, num = 3, scale = "log", unit = "ms" }

Points are the cross product of the axes in file order (first axis outermost), or zipped where
asked. A *run* is one point at one repetition; it is identified by ``point_id``, a hash of its
axis values, repetition and seed, so it is stable across restarts and machines.

Seeds: repetition ``r`` runs with ``derive_seed(base_seed, r)``: the first 8 bytes of
SHA-256("rantcp-sweep-seed:{base_seed}:{r}") as an unsigned integer, top bit cleared (a re-hash
on the rare collision within one sweep). Every point uses the same seed for the same repetition
(common random numbers), so differences between points are not blurred by different draws.

Per-run plots are off in sweeps (``output.plots = false``) unless the sweep sets
``output.plots`` itself. A run writes nothing shared: a worker runs the scenario in a private
temporary folder and sends the files back; only the coordinating process writes the sweep
folder (see :mod:`rantcp.store`), so Dask workers need no shared file system, only the same
rantcp version.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
import multiprocessing
import os
import sys
import tempfile
import time
import tomllib
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rantcp._native import ConfigError

__all__ = [
    "SweepSpec",
    "RunTask",
    "derive_seed",
    "load_spec",
    "parse_spec",
    "run_point",
    "run_sweep",
    "summarise",
]

_SWEEP_KEYS = {"name", "scenario", "repetitions", "seed", "seeds", "zip"}
_TOP_KEYS = {"sweep", "set", "axes"}
_RANGE_KEYS = {"start", "stop", "step", "num", "scale", "unit"}
_RESERVED_AXES = {"seed", "scenario"}

Progress = Callable[[int, int, int], None]
"""progress(ok, failed, total) over the runs this invocation has to do."""


def derive_seed(base_seed: int, repetition: int, salt: int = 0) -> int:
    """Seed of repetition ``repetition``: 63 bits of SHA-256 of (base seed, repetition)."""
    text = f"rantcp-sweep-seed:{base_seed}:{repetition}" + (f":{salt}" if salt else "")
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big") >> 1


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), allow_nan=False)


def point_id(axes: Mapping[str, Any], repetition: int, seed: int) -> str:
    """Stable id of one run: 16 hex digits of SHA-256 of its axis values, repetition and seed."""
    text = _canonical({"axes": dict(axes), "repetition": repetition, "seed": seed})
    return hashlib.sha256(text.encode()).hexdigest()[:16]


@dataclass(frozen=True)
class RunTask:
    """One run as a worker sees it (plain data, picklable)."""

    point_id: str
    point_index: int
    repetition: int
    seed: int
    axes: dict[str, Any]
    scenario: str
    """``builtin:NAME`` or an absolute TOML path."""
    scenario_text: str | None
    """The TOML text when the scenario is a file (used where that path does not exist)."""
    overrides: dict[str, Any]


@dataclass
class SweepSpec:
    """A parsed sweep file."""

    name: str
    scenario: str
    """``builtin:NAME`` or an absolute TOML path."""
    scenario_text: str | None
    fixed: dict[str, Any]
    axes: dict[str, list[Any]]
    zip_groups: list[list[str]]
    base_seed: int
    seeds: list[int]
    source_text: str = ""
    """The sweep file as written (kept in the sweep folder)."""
    plots: bool = False
    points: list[dict[str, Any]] = field(default_factory=list)

    @property
    def repetitions(self) -> int:
        return len(self.seeds)

    def tasks(self) -> list[RunTask]:
        """Every run, point by point, repetitions innermost."""
        out = []
        for i, axes in enumerate(self.points):
            for r, seed in enumerate(self.seeds):
                overrides = dict(self.fixed)
                if not self.plots:
                    overrides["output.plots"] = False
                overrides.update(axes)
                out.append(
                    RunTask(
                        point_id=point_id(axes, r, seed),
                        point_index=i,
                        repetition=r,
                        seed=seed,
                        axes=dict(axes),
                        scenario=self.scenario,
                        scenario_text=self.scenario_text,
                        overrides=overrides,
                    )
                )
        return out

    def fingerprint(self) -> dict[str, Any]:
        """What must not change when a sweep folder is resumed (axis values and seeds may grow)."""
        return {
            "scenario": self.scenario if self.scenario.startswith("builtin:") else "file",
            "scenario_sha256": hashlib.sha256((self.scenario_text or self.scenario).encode()).hexdigest(),
            "set": {k: self.fixed[k] for k in sorted(self.fixed)},
            "axes": list(self.axes),
            "plots": self.plots,
        }


# ---------------------------------------------------------------------------------------------
# Parsing


def _fail(msg: str) -> ConfigError:
    return ConfigError(msg)


def _tidy_float(x: float) -> float:
    """Round away binary noise from range arithmetic (0.30000000000000004 -> 0.3)."""
    return float(f"{x:.12g}")


def _expand_range(path: str, spec: Mapping[str, Any]) -> list[Any]:
    where = f"axes.{path}"
    unknown = set(spec) - _RANGE_KEYS
    if unknown:
        raise _fail(f"{where}: unknown key {sorted(unknown)[0]!r} (allowed: {', '.join(sorted(_RANGE_KEYS))})")
    for k in ("start", "stop"):
        if k not in spec:
            raise _fail(f"{where}: a range needs start and stop (and step or num)")
        if isinstance(spec[k], bool) or not isinstance(spec[k], (int, float)):
            raise _fail(f"{where}.{k}: expected a number")
    start, stop = spec["start"], spec["stop"]
    scale = spec.get("scale", "linear")
    if scale not in ("linear", "log"):
        raise _fail(f"{where}.scale: expected \"linear\" or \"log\"")
    if ("step" in spec) == ("num" in spec):
        raise _fail(f"{where}: give exactly one of step or num")
    values: list[Any]
    if "step" in spec:
        step = spec["step"]
        if scale != "linear":
            raise _fail(f"{where}: scale = \"log\" takes num, not step")
        if isinstance(step, bool) or not isinstance(step, (int, float)) or step == 0:
            raise _fail(f"{where}.step: expected a non-zero number")
        if (stop - start) / step < 0:
            raise _fail(f"{where}: step {step} does not go from {start} to {stop}")
        n = int(math.floor((stop - start) / step + 1e-9)) + 1
        if n > 100_000:
            raise _fail(f"{where}: {n} values; at most 100000")
        if all(isinstance(v, int) for v in (start, stop, step)):
            values = [start + i * step for i in range(n)]
        else:
            values = [_tidy_float(start + i * step) for i in range(n)]
    else:
        num = spec["num"]
        if isinstance(num, bool) or not isinstance(num, int) or not 1 <= num <= 100_000:
            raise _fail(f"{where}.num: expected an integer from 1 to 100000")
        if scale == "log":
            if start <= 0 or stop <= 0:
                raise _fail(f"{where}: scale = \"log\" needs start and stop > 0")
            a, b = math.log(start), math.log(stop)
            values = [_tidy_float(math.exp(a + (b - a) * i / (num - 1))) if num > 1 else float(start) for i in range(num)]
        else:
            values = [_tidy_float(start + (stop - start) * i / (num - 1)) if num > 1 else float(start) for i in range(num)]
        if all(isinstance(v, int) for v in (start, stop)) and all(float(v).is_integer() for v in values):
            values = [int(v) for v in values]
    unit = spec.get("unit")
    if unit is not None:
        if not isinstance(unit, str):
            raise _fail(f"{where}.unit: expected a string such as \"Mbps\"")
        values = [f"{v:g}{unit}" if isinstance(v, float) else f"{v}{unit}" for v in values]
    return values


def _check_value(path: str, v: Any) -> Any:
    if isinstance(v, float) and not math.isfinite(v):
        raise _fail(f"axes.{path}: {v!r} is not a finite number")
    if isinstance(v, (dict,)):
        raise _fail(f"axes.{path}: values must be numbers, strings, booleans or lists")
    if isinstance(v, list):
        return [_check_value(path, x) for x in v]
    if hasattr(v, "isoformat"):  # TOML dates and times
        raise _fail(f"axes.{path}: dates are not config values; quote it")
    return v


def parse_spec(data: Mapping[str, Any], base_dir: str | os.PathLike[str] | None = None, name: str = "sweep") -> SweepSpec:
    """Validate a sweep description (the TOML as a dict) and expand its points.

    base_dir: where a relative scenario path is resolved (the sweep file's folder).
    Raises ConfigError with a one-line message naming the offending key.
    """
    from rantcp import api

    unknown = set(data) - _TOP_KEYS
    if unknown:
        raise _fail(f"unknown key {sorted(unknown)[0]!r} (allowed tables: [sweep], [set], [axes])")
    sw = data.get("sweep")
    if not isinstance(sw, Mapping):
        raise _fail("[sweep] table missing (it names the scenario: scenario = \"builtin:p2p-bulk\")")
    unknown = set(sw) - _SWEEP_KEYS
    if unknown:
        raise _fail(f"sweep.{sorted(unknown)[0]}: unknown key (allowed: {', '.join(sorted(_SWEEP_KEYS))})")
    name = sw.get("name", name)
    if not isinstance(name, str) or not name or "/" in name:
        raise _fail("sweep.name: expected a non-empty string without '/'")

    scen = sw.get("scenario")
    if not isinstance(scen, str) or not scen:
        raise _fail("sweep.scenario: expected builtin:NAME or a TOML file path")
    scenario_text = None
    if not scen.startswith("builtin:"):
        p = Path(scen)
        if not p.is_absolute():
            p = Path(base_dir or ".") / p
        p = p.resolve()
        if not p.is_file():
            raise _fail(f"sweep.scenario: file {str(p)!r} not found")
        scenario_text = p.read_text()
        scen = str(p)

    fixed = data.get("set", {})
    if not isinstance(fixed, Mapping):
        raise _fail("[set]: expected a table of config path = value")
    fixed = _flatten_set(fixed)
    for k, v in fixed.items():
        if k in _RESERVED_AXES:
            raise _fail(f"set.{k}: set the seed with sweep.seed or sweep.seeds")
        _check_value(k, v)

    raw_axes = data.get("axes", {})
    if not isinstance(raw_axes, Mapping):
        raise _fail("[axes]: expected a table of config path = [values] or {start, stop, step|num}")
    axes: dict[str, list[Any]] = {}
    for path, vals in raw_axes.items():
        if path in _RESERVED_AXES:
            raise _fail(f"axes.{path}: not an axis (use sweep.seeds for seeds)")
        if isinstance(vals, Mapping):
            vals = _expand_range(path, vals)
        elif isinstance(vals, list):
            vals = [_check_value(path, v) for v in vals]
        else:
            raise _fail(f"axes.{path}: expected a list of values or a range {{start, stop, step|num}}")
        if not vals:
            raise _fail(f"axes.{path}: no values")
        seen = set()
        for v in vals:
            key = _canonical(v)
            if key in seen:
                raise _fail(f"axes.{path}: value {v!r} appears twice")
            seen.add(key)
        if path in fixed:
            raise _fail(f"axes.{path}: also fixed in [set]")
        axes[path] = vals

    zip_spec = sw.get("zip", False)
    if zip_spec is True:
        groups = [list(axes)] if axes else []
    elif zip_spec is False:
        groups = []
    elif isinstance(zip_spec, list) and all(isinstance(g, list) and all(isinstance(a, str) for a in g) for g in zip_spec):
        groups = [list(g) for g in zip_spec]
    else:
        raise _fail("sweep.zip: expected true, false or a list of lists of axis paths")
    grouped: set[str] = set()
    for g in groups:
        for a in g:
            if a not in axes:
                raise _fail(f"sweep.zip: {a!r} is not an axis")
            if a in grouped:
                raise _fail(f"sweep.zip: {a!r} is in two groups")
            grouped.add(a)
        lens = {len(axes[a]) for a in g}
        if len(lens) > 1:
            raise _fail(f"sweep.zip: axes {', '.join(g)} have different lengths ({', '.join(str(len(axes[a])) for a in g)})")

    # Units of iteration in file order: a zip group sits where its first axis is.
    units: list[list[str]] = []
    placed: set[str] = set()
    for a in axes:
        if a in placed:
            continue
        g = next((g for g in groups if a in g), [a])
        units.append(g)
        placed.update(g)
    points: list[dict[str, Any]] = []
    for combo in itertools.product(*[range(len(axes[u[0]])) for u in units]):
        pt: dict[str, Any] = {}
        for u, i in zip(units, combo):
            for a in u:
                pt[a] = axes[a][i]
        points.append({a: pt[a] for a in axes})
    if not points:
        points = [{}]

    if "seeds" in sw and ("repetitions" in sw or "seed" in sw):
        raise _fail("sweep.seeds: give either seeds or repetitions/seed, not both")
    if "seeds" in sw:
        seeds = sw["seeds"]
        if not isinstance(seeds, list) or not seeds or not all(isinstance(s, int) and not isinstance(s, bool) and 0 <= s < 2**63 for s in seeds):
            raise _fail("sweep.seeds: expected a non-empty list of integers from 0 to 2^63-1")
        if len(set(seeds)) != len(seeds):
            raise _fail("sweep.seeds: a seed appears twice")
        base_seed = seeds[0]
    else:
        reps = sw.get("repetitions", 1)
        if isinstance(reps, bool) or not isinstance(reps, int) or not 1 <= reps <= 1_000_000:
            raise _fail("sweep.repetitions: expected an integer >= 1")
        if "seed" in sw:
            base_seed = sw["seed"]
            if isinstance(base_seed, bool) or not isinstance(base_seed, int) or not 0 <= base_seed < 2**63:
                raise _fail("sweep.seed: expected an integer from 0 to 2^63-1")
        else:
            base_seed = int(api.validate(scen, fixed)["seed"])
        seeds = []
        used: set[int] = set()
        for r in range(reps):
            salt = 0
            s = derive_seed(base_seed, r)
            while s in used:
                salt += 1
                s = derive_seed(base_seed, r, salt)
            used.add(s)
            seeds.append(s)

    plots = bool(fixed.get("output.plots", False)) or "output.plots" in axes
    return SweepSpec(
        name=name,
        scenario=scen,
        scenario_text=scenario_text,
        fixed=dict(fixed),
        axes=axes,
        zip_groups=groups,
        base_seed=base_seed,
        seeds=seeds,
        plots=plots,
        points=points,
    )


def _flatten_set(table: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """[set] accepts dotted keys ("flow.cc" = ...) and nested tables ([set.flow] cc = ...)."""
    out: dict[str, Any] = {}
    for k, v in table.items():
        path = f"{prefix}{k}"
        if isinstance(v, Mapping):
            out.update(_flatten_set(v, path + "."))
        else:
            out[path] = v
    return out


def load_spec(source: str | os.PathLike[str] | Mapping[str, Any]) -> SweepSpec:
    """A sweep from a TOML file path or from a dict of the same shape (paths relative to cwd)."""
    if isinstance(source, Mapping):
        spec = parse_spec(source, Path.cwd(), name=str(source.get("sweep", {}).get("name", "sweep")))
        spec.source_text = _to_toml(source)
        return spec
    p = Path(source)
    if not p.is_file():
        raise _fail(f"sweep file {str(p)!r} not found")
    text = p.read_text()
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise _fail(f"{p}: invalid TOML: {e}") from None
    spec = parse_spec(data, p.resolve().parent, name=p.stem)
    spec.source_text = text
    return spec


def _toml_value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v)
    if isinstance(v, str):
        return json.dumps(v)
    if isinstance(v, list):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    if isinstance(v, Mapping):
        return "{ " + ", ".join(f"{json.dumps(k)} = {_toml_value(x)}" for k, x in v.items()) + " }"
    return json.dumps(str(v))


def _to_toml(data: Mapping[str, Any]) -> str:
    """A small TOML writer for sweep dicts (tables of scalars, lists and inline tables)."""
    lines = []
    for table in ("sweep", "set", "axes"):
        if table in data:
            lines.append(f"[{table}]")
            for k, v in data[table].items():
                lines.append(f"{json.dumps(k)} = {_toml_value(v)}")
            lines.append("")
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------
# The worker side


def run_point(task: RunTask) -> dict[str, Any]:
    """Run one point in a private temporary folder; return its files (bytes) and status.

    Never raises for a failing run: the error is returned as text. Runs in worker processes.
    """
    import rantcp

    t0 = time.perf_counter()
    res: dict[str, Any] = {"point_id": task.point_id, "status": "failed", "error": None, "files": {}, "version": rantcp.__version__}
    try:
        with tempfile.TemporaryDirectory(prefix="rantcp-sweep-") as tmp:
            scenario = task.scenario
            if task.scenario_text is not None and not _same_file(task.scenario, task.scenario_text):
                scenario = os.path.join(tmp, "scenario.toml")
                Path(scenario).write_text(task.scenario_text)
            run_dir = Path(tmp) / "run"
            _call_unsampled(lambda: rantcp.run(scenario, seed=task.seed, overrides=task.overrides, out=run_dir))
            files = {}
            for f in sorted(run_dir.rglob("*")):
                if f.is_file():
                    files[f.relative_to(run_dir).as_posix()] = f.read_bytes()
        res["files"] = files
        res["status"] = "ok"
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException as e:  # ConfigError, and a Rust panic (PanicException is a BaseException)
        msg = str(e).strip().splitlines()[0] if str(e).strip() else ""
        res["error"] = msg if isinstance(e, ConfigError) else f"{type(e).__name__}: {msg}"
    res["wall_s"] = time.perf_counter() - t0
    return res


def _in_dask_worker() -> bool:
    if "distributed" not in sys.modules:
        return False
    try:
        from distributed import get_worker

        get_worker()
        return True
    except (ImportError, ValueError):
        return False


def _call_unsampled(fn: Callable[[], Any]) -> Any:
    """Call fn, on a private thread when in a Dask worker.

    Dask's statistical profiler grabs the frames of task threads from its event-loop thread; a
    frame it still holds when rantcp.run returns would drop the native Simulation (which must
    stay on its own thread) on the wrong thread. A helper thread is never sampled.
    """
    if not _in_dask_worker():
        return fn()
    import threading

    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = fn()
        except BaseException as e:  # re-raised on the calling thread
            box["error"] = e

    th = threading.Thread(target=target, name="rantcp-run", daemon=True)
    th.start()
    th.join()
    if "error" in box:
        raise box.pop("error")
    return box.get("value")


def _same_file(path: str, text: str) -> bool:
    try:
        return Path(path).read_text() == text
    except OSError:
        return False


# ---------------------------------------------------------------------------------------------
# Executors: each yields (task, outcome dict) as runs finish, with at most `window` in flight.


def _mp_context() -> multiprocessing.context.BaseContext:
    methods = multiprocessing.get_all_start_methods()
    if "forkserver" in methods:
        ctx = multiprocessing.get_context("forkserver")
        # Workers fork from a server that has already imported rantcp: fast start.
        ctx.set_forkserver_preload(["rantcp.sweep"])
        return ctx
    return multiprocessing.get_context("spawn")


def default_workers() -> int:
    """All cores this process may use."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:
        return max(1, os.cpu_count() or 1)


def _crashed(task: RunTask, why: str) -> dict[str, Any]:
    return {"point_id": task.point_id, "status": "failed", "error": why, "files": {}, "wall_s": float("nan"), "version": None}


class SweepAborted(RuntimeError):
    """The workers, not a run, failed; the runs in flight stay unfinished (the same command resumes)."""


class WorkersCannotStart(SweepAborted):
    """The local pool's worker processes die before finishing any run."""


def _local_runs(tasks: Sequence[RunTask], workers: int) -> Iterator[tuple[RunTask, dict[str, Any]] | None]:
    """A process pool; a run that kills its worker twice is recorded as failed. A pool that
    breaks twice in a row without finishing any run stops the sweep (nothing is recorded).
    Yields (task, outcome) as runs finish and None at the end of each wait round."""
    pending = list(reversed(tasks))
    attempts: dict[str, int] = {}
    window = max(2 * workers, workers + 2)
    barren_pools = 0
    with _main_path_hidden_if_unimportable():
        while pending:
            pool = ProcessPoolExecutor(max_workers=workers, mp_context=_mp_context(), initializer=_worker_init, initargs=(os.getpid(),))
            inflight: dict[Future[dict[str, Any]], RunTask] = {}
            broken = False
            finished = 0
            try:
                while pending or inflight:
                    while pending and len(inflight) < window and not broken:
                        t = pending.pop()
                        try:
                            inflight[pool.submit(run_point, t)] = t
                        except BrokenProcessPool:
                            pending.append(t)
                            broken = True
                    if not inflight:
                        break
                    done, _ = wait(inflight, timeout=0.25, return_when=FIRST_COMPLETED)
                    for fut in done:
                        t = inflight.pop(fut)
                        try:
                            outcome = fut.result()
                        except BrokenProcessPool:
                            broken = True
                            attempts[t.point_id] = attempts.get(t.point_id, 0) + 1
                            pending.append(t)
                            continue
                        finished += 1
                        yield t, outcome
                    yield None  # end of a round: what finished together is committed together
            finally:
                pool.shutdown(wait=True, cancel_futures=True)
            if not broken:
                continue
            barren_pools = 0 if finished else barren_pools + 1
            if barren_pools >= 2:
                raise WorkersCannotStart(
                    "the local worker processes die before finishing any run (see the messages above; a script "
                    "that calls rantcp.sweep must do so under `if __name__ == \"__main__\":`); nothing was recorded "
                    "for the runs in flight"
                )
            # A run that broke the pool twice (while others finish) is recorded as failed.
            for t in [t for t in pending if attempts.get(t.point_id, 0) >= 2]:
                pending.remove(t)
                yield t, _crashed(t, "the worker process died while running this point (twice)")
            yield None


def _worker_init(coordinator_pid: int) -> None:
    """In each pool worker: exit when the coordinating process is gone (killed, even with -9),
    instead of idling forever on a queue nobody writes to."""
    import threading

    parent = os.getppid()

    def watch() -> None:
        while True:
            time.sleep(0.5)
            if not _alive(coordinator_pid) or os.getppid() != parent:
                os._exit(1)

    threading.Thread(target=watch, name="rantcp-coordinator-watch", daemon=True).start()


def _alive(pid: int) -> bool:
    """Whether process `pid` runs (a zombie, killed but not yet reaped, does not)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            state = f.read().rsplit(b")", 1)[1].split()[0]
        return state not in (b"Z", b"X")
    except (OSError, IndexError):
        return True


class _main_path_hidden_if_unimportable:
    """Worker processes re-import the parent's __main__ from its file; a __main__ read from stdin
    or a notebook has no such file, which would kill every worker. Hide the bogus path."""

    def __enter__(self) -> None:
        self.main = sys.modules.get("__main__")
        self.saved = getattr(self.main, "__file__", None)
        spec = getattr(self.main, "__spec__", None)
        if self.main is not None and self.saved is not None and spec is None and not os.path.isfile(self.saved):
            del self.main.__file__
        else:
            self.saved = None

    def __exit__(self, *exc: Any) -> None:
        if self.saved is not None and self.main is not None:
            self.main.__file__ = self.saved


def _dask_client(dask: Any) -> tuple[Any, Any, int]:
    """(client, cluster or None, number of worker threads) for an address, local:N or a Client."""
    import distributed

    if isinstance(dask, distributed.Client):
        return dask, None, max(1, sum(dask.nthreads().values()))
    if not isinstance(dask, str) or not dask:
        raise _fail("--dask: expected a scheduler address (tcp://host:8786) or local:N")
    if dask.startswith("local:") or dask == "local":
        n_text = dask.partition(":")[2] or str(default_workers())
        if not n_text.isdigit() or int(n_text) < 1:
            raise _fail(f"--dask {dask}: expected local:N with N >= 1")
        import logging

        cluster = distributed.LocalCluster(
            n_workers=int(n_text),
            threads_per_worker=1,
            processes=True,
            dashboard_address=None,
            host="127.0.0.1",
            silence_logs=logging.ERROR,
        )
        client = distributed.Client(cluster)
        return client, cluster, int(n_text)
    try:
        client = distributed.Client(dask, timeout="20s")
    except OSError as e:
        raise _fail(f"--dask {dask}: cannot reach the scheduler ({e})") from None
    return client, None, max(1, sum(client.nthreads().values()))


def _dask_runs(tasks: Sequence[RunTask], client: Any, threads: int) -> Iterator[tuple[RunTask, dict[str, Any]] | None]:
    import uuid

    import distributed
    from distributed.scheduler import KilledWorker

    pending = list(reversed(tasks))
    window = max(2 * threads, threads + 2)
    inflight: dict[Any, RunTask] = {}
    run_tag = uuid.uuid4().hex[:8]
    try:
        while pending or inflight:
            while pending and len(inflight) < window:
                t = pending.pop()
                fut = client.submit(run_point, t, key=f"rantcp-run-{t.point_id}-{run_tag}", pure=False)
                inflight[fut] = t
            try:
                res = distributed.wait(list(inflight), timeout=0.25, return_when="FIRST_COMPLETED")
                done = res.done
            except distributed.TimeoutError:
                done = set()
            for fut in done:
                t = inflight.pop(fut)
                if fut.status == "finished":
                    outcome = fut.result()
                else:
                    try:
                        exc = fut.exception()
                    except BaseException as e:  # cancelled
                        exc = e
                    if not isinstance(exc, KilledWorker):
                        # The cluster, not the run, failed: stop; the run stays unfinished.
                        raise SweepAborted(f"dask: {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}") from exc
                    # The run killed every worker that tried it (e.g. out of memory): record it.
                    outcome = _crashed(t, f"dask: {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}")
                fut.release()
                yield t, outcome
            yield None
    finally:
        for fut in inflight:
            fut.cancel()


# ---------------------------------------------------------------------------------------------
# The coordinator


@dataclass
class SweepOutcome:
    """What one `run_sweep` call did."""

    folder: Path
    total: int
    skipped: int
    ok: int
    failed: int
    failed_overall: int
    """Failed rows among this sweep's runs, including ones recorded by earlier invocations."""
    wall_s: float


def run_sweep(
    spec: SweepSpec,
    out: str | os.PathLike[str],
    workers: int | None = None,
    dask: Any = None,
    retry_failed: bool = False,
    progress: Progress | None = None,
) -> SweepOutcome:
    """Run every run of `spec` not yet in the store at `out`; see the module doc."""
    from rantcp import api
    from rantcp.store import Store

    api.validate(spec.scenario, spec.fixed, spec.seeds[0])  # a bad base fails the sweep, not each point
    t0 = time.perf_counter()
    tasks = spec.tasks()
    store = Store.open(out, spec)
    try:
        done = store.finished_ids(include_failed=not retry_failed)
        todo = [t for t in tasks if t.point_id not in done]
        skipped = len(tasks) - len(todo)
        counts = [0, 0]  # ok, failed

        def tick() -> None:
            if progress is not None:
                progress(counts[0], counts[1], len(todo))

        tick()
        if todo:
            if dask is not None:
                client, cluster, threads = _dask_client(dask)
                try:
                    _drain(store, _dask_runs(todo, client, threads), counts, tick)
                finally:
                    if cluster is not None:
                        client.close()
                        cluster.close()
            else:
                n = workers or default_workers()
                if n < 1:
                    raise _fail("--workers: expected N >= 1")
                _drain(store, _local_runs(todo, min(n, len(todo))), counts, tick)
        ok, failed = counts
        failed_overall = store.count_failed([t.point_id for t in tasks])
    finally:
        store.close()
    return SweepOutcome(Path(out), len(tasks), skipped, ok, failed, failed_overall, time.perf_counter() - t0)


_MAX_BATCH = 256


def _drain(store: Any, stream: Iterator[tuple[RunTask, dict[str, Any]] | None], counts: list[int], tick: Callable[[], None]) -> None:
    """Commit runs as they arrive, those finished in the same wait round in one transaction."""
    buffer: list[tuple[RunTask, dict[str, Any]]] = []
    try:
        for item in stream:
            if item is not None:
                buffer.append(item)
                if len(buffer) < _MAX_BATCH:
                    continue
            if buffer:
                batch, buffer = buffer, []
                _commit(store, batch, counts)
            tick()
    except (KeyboardInterrupt, SweepAborted):
        if buffer:  # finished work in hand is kept
            _commit(store, buffer, counts)
        raise
    if buffer:
        _commit(store, buffer, counts)
    tick()


def _commit(store: Any, items: list[tuple[RunTask, dict[str, Any]]], counts: list[int]) -> None:
    import rantcp

    for _, outcome in items:
        if outcome.get("version") not in (None, rantcp.__version__):
            raise SweepAborted(f"a worker runs rantcp {outcome.get('version')}, this process {rantcp.__version__}; install the same version everywhere")
    store.commit_many(items)
    for _, outcome in items:
        counts[0 if outcome["status"] == "ok" else 1] += 1


# ---------------------------------------------------------------------------------------------
# Summaries over repetitions

_T975 = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145, 2.131,
         2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042]


def t975(dof: int) -> float:
    """Two-sided 95 % Student t quantile (t_{0.975, dof}); Cornish–Fisher beyond the table."""
    if dof < 1:
        return float("nan")
    if dof <= len(_T975):
        return _T975[dof - 1]
    z = 1.959964
    return z + (z**3 + z) / (4 * dof) + (5 * z**5 + 16 * z**3 + 3 * z) / (96 * dof**2)


def summarise(df: Any, metrics: Sequence[str], by: Sequence[str]) -> Any:
    """Mean, 95 % confidence half-width (Student t over repetitions) and n of each metric per group.

    Only rows with status "ok" count. Columns: by..., n, <m>_mean, <m>_ci95 for each metric.
    """
    import pandas as pd

    ok = df[df["status"] == "ok"] if "status" in df else df
    by = list(by)
    rows = []
    groups = ok.groupby(by, sort=False, dropna=False) if by else [((), ok)]
    for key, g in groups:
        key = key if isinstance(key, tuple) else (key,)
        row: dict[str, Any] = dict(zip(by, key))
        row["n"] = len(g)
        for m in metrics:
            vals = pd.to_numeric(g[m], errors="coerce").dropna() if m in g else pd.Series([], dtype=float)
            n = len(vals)
            row[f"{m}_mean"] = float(vals.mean()) if n else float("nan")
            row[f"{m}_ci95"] = float(t975(n - 1) * vals.std(ddof=1) / math.sqrt(n)) if n > 1 else float("nan")
        rows.append(row)
    return pd.DataFrame(rows)


def _stderr_is_tty() -> bool:
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False


# ---------------------------------------------------------------------------------------------
# The Python API: rantcp.sweep(...) and rantcp.load(...)


class Sweep:
    """An existing sweep folder: its runs table, spec and per-run results.

    ``df`` is the runs table (one row per run; see :mod:`rantcp.store` for the columns).
    """

    def __init__(self, folder: str | os.PathLike[str]) -> None:
        from rantcp import store

        self.folder = Path(folder)
        if not store.is_sweep_folder(self.folder):
            raise _fail(f"{self.folder}: not a sweep folder (no {store.DB_NAME})")
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
            from rantcp import store

            self._df = store.read_table(self.folder)
            self._df.attrs["rantcp_sweep"] = str(self.folder)
        return self._df

    def reload(self) -> Sweep:
        self._df = None
        return self

    def run_dir(self, point_id: str) -> Path:
        from rantcp import store

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
            df = df[df["point_id"].isin(list(ids))]
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
            return pd.DataFrame(columns=keys)
        return pd.concat(parts, ignore_index=True)

    def summarise(self, metrics: Sequence[str] = ("goodput_mbps",), by: Sequence[str] | None = None) -> Any:
        """Mean and 95 % interval over repetitions, per point (or grouped by `by`)."""
        return summarise(self.df, metrics, self.axes if by is None else by)

    def sql(self, query: str) -> Any:
        """Run a read-only SQL query on the store (the table is `runs`)."""
        from rantcp import store

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
    progress: Progress | None = None,
) -> Any:
    """Run a sweep and return its runs as a pandas DataFrame (one row per run).

    spec: a sweep TOML file or a dict of the same shape. out: the sweep folder (default
    ``out/<sweep name>``); runs already recorded there are skipped. workers: local processes
    (default: every core). dask: a scheduler address, ``"local:N"`` or a
    ``distributed.Client``; the runs then go to that cluster. Failed runs are rows with
    status "failed" and their error. ``df.attrs["rantcp_sweep"]`` holds the folder.
    Raises ConfigError for a bad sweep file or base scenario.
    """
    from rantcp import store

    s = load_spec(spec)
    folder = Path(out) if out is not None else Path("out") / s.name
    run_sweep(s, folder, workers=workers, dask=dask, retry_failed=retry_failed, progress=progress)
    df = store.read_table(folder, ids=[t.point_id for t in s.tasks()])
    df.attrs["rantcp_sweep"] = str(folder)
    return df


def load(folder: str | os.PathLike[str]) -> Any:
    """Open a sweep folder (a :class:`Sweep`) or a run folder (a :class:`rantcp.Result`)."""
    from rantcp import api, store

    p = Path(folder)
    if store.is_sweep_folder(p):
        return Sweep(p)
    if (p / "summary.json").is_file():
        return api.load_result(p)
    raise _fail(f"{p}: neither a run folder (summary.json) nor a sweep folder ({store.DB_NAME})")
