"""The coordinating process of a sweep: validates every point, opens the store, sends the runs
that are not recorded yet to an executor and commits them as they come back."""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rantcp._native import ConfigError
from rantcp.sweeps.executors import SweepAborted, check_dask_address, dask_client, dask_runs, default_workers, local_runs
from rantcp.sweeps.spec import RunTask, SweepSpec
from rantcp.sweeps.store import Store, check_folder

__all__ = ["Progress", "SweepOutcome", "run_sweep", "validate_points"]

Progress = Callable[[int, int, int], None]
"""progress(ok, failed, total) over the runs this invocation has to do."""


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
    if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int) or workers < 1):
        raise ConfigError(f"workers: {workers!r}: expected a whole number N >= 1 (or None: every core)")
    check_folder(Path(out))
    if dask is not None:
        check_dask_address(dask)
    validate_points(spec)
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
                client, cluster, threads = dask_client(dask)
                try:
                    _drain(store, dask_runs(todo, client, threads), counts, tick)
                finally:
                    if cluster is not None:
                        client.close()
                        cluster.close()
            else:
                n = workers or default_workers()
                if n < 1:
                    raise ConfigError("--workers: expected N >= 1")
                _drain(store, local_runs(todo, min(n, len(todo))), counts, tick)
        ok, failed = counts
        failed_overall = store.count_failed([t.point_id for t in tasks])
    finally:
        store.close()
    return SweepOutcome(Path(out), len(tasks), skipped, ok, failed, failed_overall, time.perf_counter() - t0)


_PATH_ERRORS = ("unknown field", "is not a table")
"""What the config loader says of a path that does not exist (a typo), as opposed to a value."""


def validate_points(spec: SweepSpec) -> None:
    """Check the config of every point before any run starts (one validation per point, a
    fraction of a millisecond each).

    Fails the sweep (ConfigError, exit status 2) when the base scenario or [set] is invalid,
    when an axis names a config path that does not exist, or when every point is invalid.
    A value that only some points have and the scenario refuses (``flow.cc = "vegas"``) is left
    to the runs: they are recorded as failed with the error, and the other points run.
    """
    from rantcp import api

    seed = spec.seeds[0]
    api.check(spec.scenario, spec.fixed, seed)  # a bad base fails the sweep, not each point
    # A value set that no point of the sweep reads is said once, before the runs; one that
    # some point reads is not (a sweep may switch a function on and off with its parameters
    # fixed). Warnings are one per field ("<field> is set but ...").
    unread: dict[str, str] | None = None
    bad = 0
    first = ""
    for axes in spec.points:
        try:
            ws = api.check(spec.scenario, spec.point_overrides(axes), seed)[1]
            here = {w.split(" is set but ", 1)[0]: w for w in ws}
            unread = here if unread is None else {k: v for k, v in unread.items() if k in here}
        except ConfigError as e:
            msg = str(e)
            if any(p in msg for p in _PATH_ERRORS):
                where = msg.split(":", 1)[0]
                axis = next((a for a in axes if a == where or a.startswith(where + ".")), None)
                raise ConfigError(f"axes.{axis}: not a config path of {spec.scenario} ({msg})" if axis else msg) from None
            bad += 1
            first = first or f"{msg} (at {', '.join(f'{k} = {v!r}' for k, v in axes.items())})"
    if bad and bad == len(spec.points):
        raise ConfigError(f"no point of the sweep is valid: {first}")
    api.warn_config(list((unread or {}).values()))


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
