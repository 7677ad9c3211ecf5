"""The worker side of a sweep: one run in a private temporary folder, its files sent back as
bytes (so Dask workers need no shared file system, only the same rantcp version)."""

from __future__ import annotations

import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rantcp._native import ConfigError
from rantcp.sweeps.spec import RunTask

__all__ = ["run_point"]


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
            _call_unsampled(lambda: rantcp.run(scenario, seed=task.seed, overrides=task.overrides, out=run_dir, warn=False))
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
