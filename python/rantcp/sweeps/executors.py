"""Where a sweep's runs go: a local process pool or a dask.distributed cluster. Each executor
yields (task, outcome) as runs finish, with a bounded number in flight, and None at the end of
each wait round (what finished together is committed together)."""

from __future__ import annotations

import importlib.util
import math
import multiprocessing
import os
import signal
import sys
import time
from collections.abc import Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from typing import Any

from rantcp._native import ConfigError
from rantcp.interrupts import held, on_interrupt
from rantcp.sweeps.spec import RunTask
from rantcp.sweeps.worker import run_point

__all__ = ["SweepAborted", "WorkersCannotStart", "dask_client", "dask_runs", "default_workers", "local_runs"]

Outcomes = Iterator["tuple[RunTask, dict[str, Any]] | None"]


def _mp_context() -> multiprocessing.context.BaseContext:
    methods = multiprocessing.get_all_start_methods()
    if "forkserver" in methods:
        ctx = multiprocessing.get_context("forkserver")
        # Workers fork from a server that has already imported rantcp: fast start.
        ctx.set_forkserver_preload(["rantcp.sweeps.worker"])
        _start_forkserver()
        return ctx
    return multiprocessing.get_context("spawn")


def _start_forkserver() -> None:
    """Start the forkserver, unless it runs, with SIGINT blocked, as CPython starts its resource
    tracker (multiprocessing/resource_tracker.py, bpo-33613). A terminal's Ctrl-C reaches the whole
    process group, and the forkserver ignores SIGINT only once it has imported its preload
    (rantcp: 0.1-0.2 s): a Ctrl-C then killed it with a KeyboardInterrupt traceback. The mask is
    inherited by the forkserver (which then ignores SIGINT, dropping one pending) and by the workers
    it forks; _worker_init unblocks SIGINT once its handler is set. The forkserver is one per
    process: other pools of a script that use it (Python 3.14's default on Linux) get workers
    with SIGINT blocked too, unless they unblock it."""
    from multiprocessing import forkserver, resource_tracker

    if not hasattr(signal, "pthread_sigmask"):
        forkserver.ensure_running()
        return
    # First: starting the resource tracker unblocks SIGINT and SIGTERM after its own spawn.
    resource_tracker.ensure_running()
    old = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        forkserver.ensure_running()
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)  # a Ctrl-C meanwhile is acted on here


def default_workers(cgroup_root: str = "/sys/fs/cgroup") -> int:
    """All cores this process may use: the CPUs it may run on, at most the CPU quota of its
    cgroup rounded up (a container limited to 2 CPUs' time on a 64-CPU host gets 2 workers,
    not 64 that share 2 CPUs' time and each hold a process's memory)."""
    try:
        n = len(os.sched_getaffinity(0))
    except AttributeError:
        n = os.cpu_count() or 1
    quota = cgroup_cpu_quota(cgroup_root)
    if quota is not None:
        n = min(n, math.ceil(quota))
    return max(1, n)


def cgroup_cpu_quota(root: str = "/sys/fs/cgroup") -> float | None:
    """CPUs' worth of time the CFS quota allows (cgroup v2 ``cpu.max``, v1
    ``cpu.cfs_quota_us`` / ``cpu.cfs_period_us``; see the kernel's
    Documentation/scheduler/sched-bwc.rst), or None when there is no quota or no cgroup file."""
    try:
        quota, period = _read(root, "cpu.max").split()[:2]
        return int(quota) / int(period) if quota != "max" and int(quota) > 0 and int(period) > 0 else None
    except (OSError, ValueError):
        pass
    for sub in ("cpu", "cpu,cpuacct", "cpuacct,cpu"):
        try:
            quota_us = int(_read(root, sub, "cpu.cfs_quota_us"))
            period_us = int(_read(root, sub, "cpu.cfs_period_us"))
        except (OSError, ValueError):
            continue
        return quota_us / period_us if quota_us > 0 and period_us > 0 else None
    return None


def _read(*parts: str) -> str:
    with open(os.path.join(*parts)) as f:
        return f.read()


def _crashed(task: RunTask, why: str) -> dict[str, Any]:
    return {"point_id": task.point_id, "status": "failed", "error": why, "files": {}, "wall_s": float("nan"), "version": None}


class SweepAborted(RuntimeError):
    """The workers, not a run, failed; the runs in flight stay unfinished (the same command resumes)."""


class WorkersCannotStart(SweepAborted):
    """The local pool's worker processes die before finishing any run."""


def local_runs(tasks: Sequence[RunTask], workers: int) -> Iterator[tuple[RunTask, dict[str, Any]] | None]:
    """A process pool; a run that kills its worker twice is recorded as failed. A pool that
    breaks twice in a row without finishing any run stops the sweep (nothing is recorded).
    Yields (task, outcome) as runs finish and None at the end of each wait round."""
    pending = list(reversed(tasks))
    attempts: dict[str, int] = {}
    window = max(2 * workers, workers + 2)
    barren_pools = 0
    with _main_path_hidden_if_unimportable():
        while pending:
            ctx = _mp_context()
            stop = ctx.Event()  # set as the pool shuts down: the workers start no run and stop the one they run
            pool = ProcessPoolExecutor(max_workers=workers, mp_context=ctx, initializer=_worker_init, initargs=(os.getpid(), stop))
            inflight: dict[Future[dict[str, Any]], RunTask] = {}
            broken = False
            finished = 0
            try:
                while pending or inflight:
                    while pending and len(inflight) < window and not broken:
                        t = pending.pop()
                        try:
                            # Whole: a worker the pool starts here and an interrupt cuts off from
                            # the pool (before it records the process) is never joined, and reads
                            # its arguments after this process has closed the pipe or unlinked the
                            # queues' semaphores: a traceback (EOFError, SemLock._rebuild's
                            # FileNotFoundError) from the forkserver's child.
                            with held():
                                inflight[pool.submit(_local_run, t)] = t
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
                # On an interrupt, the runs in flight are not waited for: cancel_futures cancels only
                # the runs still here, not those already queued to the workers (one more each), and a
                # SIGTERM (or Ctrl-C to this process alone) does not reach the workers at all. Each
                # worker went on to finish its run and the queued one: a group Ctrl-C took a run's
                # wall to end the sweep (1.0-1.3 s with 1 s runs), a SIGTERM two runs'.
                stop.set()
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


_running = False
"""In a local pool worker: whether it is running a point (see _on_sigint_in_worker)."""


_stop: Any = None
"""In a local pool worker: the pool's event set when the coordinator stops (see _worker_init)."""


def _local_run(task: RunTask) -> dict[str, Any]:
    """run_point in a local pool worker; not started once the coordinator stops."""
    global _running
    if _stop is not None and _stop.is_set():
        raise KeyboardInterrupt  # the coordinator does not wait for it: it stops
    _running = True
    try:
        return run_point(task)
    finally:
        _running = False


def _on_sigint_in_worker(signum: int, frame: object) -> None:
    """A Ctrl-C reaches the workers too (the terminal signals the whole process group). During a
    run it stops the run as in `rantcp run` (its KeyboardInterrupt goes back to the coordinator
    as the run's outcome). Between runs the worker leaves it to the coordinator, which got it too
    and shuts the pool down (the worker reads its sentinel and exits): raised there, in the read of
    the call queue, it printed "Process ForkServerProcess-N:" and a traceback. Raised as
    rantcp.interrupts.on_interrupt does: never inside an import (a run imports pyarrow and its
    prefetch thread too)."""
    if _running:
        on_interrupt(signum, frame)


def _worker_init(coordinator_pid: int, stop: Any = None) -> None:
    """In each pool worker: exit when the coordinating process is gone (killed, even with -9),
    instead of idling forever on a queue nobody writes to; a Ctrl-C between runs left to the
    coordinator (_on_sigint_in_worker); once the coordinator sets `stop` (it stops), the run in
    progress is interrupted as a Ctrl-C would and no other starts."""
    import _thread
    import threading

    global _stop
    _stop = stop
    signal.signal(signal.SIGINT, _on_sigint_in_worker)
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})  # blocked since _start_forkserver

    parent = os.getppid()

    def watch() -> None:
        while True:
            stopping = False
            if stop is not None:
                stopping = stop.wait(0.5)
            else:
                time.sleep(0.5)
            if not _alive(coordinator_pid) or os.getppid() != parent:
                os._exit(1)
            if stopping:
                if _running:
                    _thread.interrupt_main(signal.SIGINT)  # as a Ctrl-C: _on_sigint_in_worker
                time.sleep(0.05)

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


def check_dask_address(dask: Any) -> None:
    """Raise ConfigError (one line) unless `dask` looks like local, local:N, a scheduler address
    (scheme://host:port or host:port) or a distributed.Client; checked before anything is
    written."""
    if not isinstance(dask, str):
        return  # a Client (checked when used)
    if importlib.util.find_spec("distributed") is None:
        # dask is the `sweep` extra (pyproject.toml); the core install runs sweeps on local cores.
        raise ConfigError(
            f"--dask {dask}: dask.distributed is not installed; install it with "
            "pip install 'rantcp[sweep]', or leave --dask out to use this machine's cores"
        )
    if dask == "local" or dask.startswith("local:"):
        n_text = dask.partition(":")[2]
        if n_text and (not n_text.isdigit() or int(n_text) < 1):
            raise ConfigError(f"--dask {dask}: expected local:N with N >= 1")
        return
    rest = dask.split("://", 1)[1] if "://" in dask else dask
    host, sep, port = rest.rpartition(":")
    if not sep or not host or not port.isdigit():
        raise ConfigError(f"--dask {dask!r}: expected a scheduler address such as tcp://host:8786, or local:N")


def dask_client(dask: Any) -> tuple[Any, Any, int]:
    """(client, cluster or None, number of worker threads) for an address, local:N or a Client."""
    import distributed

    if isinstance(dask, distributed.Client):
        return dask, None, max(1, sum(dask.nthreads().values()))
    if not isinstance(dask, str) or not dask:
        raise ConfigError("--dask: expected a scheduler address (tcp://host:8786) or local:N")
    if dask.startswith("local:") or dask == "local":
        n_text = dask.partition(":")[2] or str(default_workers())
        if not n_text.isdigit() or int(n_text) < 1:
            raise ConfigError(f"--dask {dask}: expected local:N with N >= 1")
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
    check_dask_address(dask)
    try:
        client = distributed.Client(dask, timeout="20s")
    except (OSError, ValueError, TypeError) as e:
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise ConfigError(f"--dask {dask}: cannot reach the scheduler ({first})") from None
    return client, None, max(1, sum(client.nthreads().values()))


def dask_runs(tasks: Sequence[RunTask], client: Any, threads: int) -> Iterator[tuple[RunTask, dict[str, Any]] | None]:
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
