"""What counts as the user interrupting a command (Ctrl-C, or SIGTERM: the command line's
handler raises KeyboardInterrupt for it, see ``rantcp.cli``).

A KeyboardInterrupt that arrives while DuckDB runs a statement does not reach Python as one:
DuckDB's Python client checks for signals during the statement, interrupts it and raises
``RuntimeError("Query interrupted")`` in its place (duckdb 1.x-2.x). The transaction it was in
is rolled back like any other failed statement; callers only have to treat that error as the
interrupt it is, rather than as a failure (a traceback and exit 1 from `trace ingest`, exit 3
"the sweep machinery failed" from `reproduce`). Once rantcp is imported DuckDB acts on the signal
only as the statement ends (measured with duckdb 2.0.1: a 5 s statement interrupted at 0.1 s
raised at 4.9 s; 0.1 s in a bare interpreter), so a command stops within one statement; rantcp's
statements are a chunk of packets or a batch of runs.

Some steps must not be cut in two by the interrupt: ``held()`` runs such a step whole and acts on
a signal that arrived during it as the step ends.

Nor may the interrupt be raised inside Python's import machinery: ``on_interrupt`` (the command
line's handler for SIGINT and SIGTERM, and a sweep worker's during a run) waits until the code
running is not importlib's. CPython 3.11's importlib takes the global import lock with
``_imp.acquire_lock()`` one bytecode before the ``try`` that releases it (``_get_module_lock``, and
the weakref callback ``cb`` that runs whenever a module lock is freed); a KeyboardInterrupt raised
on that call's return leaves the lock held for ever. Raised in ``cb`` it is also swallowed
("Exception ignored in: <function _get_module_lock.<locals>.cb>"): the command went on as if the
signal had not come, and as soon as another thread imported (``api._prefetch``, during a run's
Parquet and plots) that thread waited for the lock while holding a module lock the main thread
then needed: both waited for ever (a group Ctrl-C 0.33-0.41 s into `rantcp run --plots`: 5 hangs
in 60).
"""

from __future__ import annotations

import signal
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

_IMPORT_MACHINERY = frozenset({"<frozen importlib._bootstrap>", "<frozen importlib._bootstrap_external>"})


def on_interrupt(signum: int, frame: Any) -> None:
    """A signal handler that raises KeyboardInterrupt, except inside the import machinery (see
    the module doc): there it raises it at the first call or return of code that is not
    importlib's (the module being imported, or the code that imported), through a profile
    function on this thread that then removes itself. A thread blocked on a lock inside an import
    (a module another thread imports) is interrupted as soon as that import ends. (Not by sending
    the signal again: from the handler, the handler runs again at once, in its own frame; from
    another thread 1 ms later, the command had sometimes ended first and the signal was lost.)"""
    if frame is not None and frame.f_code.co_filename in _IMPORT_MACHINERY:
        _raise_outside_imports(frame)
        return
    raise KeyboardInterrupt


def _raise_outside_imports(interrupted: Any) -> None:
    previous = sys.getprofile()
    if getattr(previous, "__name__", "") == "_interrupt_outside_imports":
        return  # already pending
    armed = False

    def _interrupt_outside_imports(frame: Any, event: str, arg: object) -> None:
        nonlocal armed
        if not armed:
            # Not within the signal handler (on_interrupt, or a handler that calls it): armed
            # as it returns to the interrupted frame.
            armed = frame is interrupted or (event == "return" and frame.f_back is interrupted)
            return
        if frame.f_code.co_filename in _IMPORT_MACHINERY:
            return
        sys.setprofile(previous)
        raise KeyboardInterrupt  # propagates into `frame`, as if the signal came there

    sys.setprofile(_interrupt_outside_imports)


DUCKDB_INTERRUPTED = "Query interrupted"
"""The message of the error DuckDB raises when a signal interrupts a statement."""


def is_interrupt(e: BaseException) -> bool:
    """Whether ``e`` is the user's interrupt: a KeyboardInterrupt, or DuckDB's stand-in for one
    (also when it is the cause or context of ``e``, e.g. re-raised by a rollback handler)."""
    seen: set[int] = set()
    cur: BaseException | None = e
    while cur is not None and id(cur) not in seen:
        seen.add(id(cur))
        if isinstance(cur, KeyboardInterrupt):
            return True
        if type(cur).__module__.startswith(("duckdb", "_duckdb")) or type(cur) is RuntimeError:
            if str(cur).strip() == DUCKDB_INTERRUPTED:
                return True
        cur = cur.__cause__ or cur.__context__
    return False


@contextmanager
def held() -> Iterator[None]:
    """Run the block whole: a SIGINT or SIGTERM that arrives during it is raised again as it ends,
    to the handlers in place before (KeyboardInterrupt for Ctrl-C, and for SIGTERM under the
    command line). Handlers run on the main thread only, so elsewhere this does nothing; nor for a
    signal whose handler was not installed from Python."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    arrived: list[int] = []

    def hold(signum: int, frame: object) -> None:
        arrived.append(signum)

    before: dict[signal.Signals, Any] = {}
    try:
        for sig in (signal.SIGINT, signal.SIGTERM):
            if signal.getsignal(sig) is not None:
                before[sig] = signal.signal(sig, hold)
        yield
    finally:
        for sig, handler in before.items():
            signal.signal(sig, handler)
        for signum in dict.fromkeys(arrived):
            signal.raise_signal(signum)  # as if it arrived now: the handler, the default action or nothing
