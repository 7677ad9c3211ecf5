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

Nor may the interrupt be raised inside an import: ``on_interrupt`` (the command line's handler
for SIGINT and SIGTERM, and a sweep worker's during a run) raises it once the import ends.
CPython 3.11's importlib takes the global import lock with ``_imp.acquire_lock()`` one bytecode
before the ``try`` that releases it (``_get_module_lock``, and the weakref callback ``cb`` that
runs whenever a module lock is freed); a KeyboardInterrupt raised on that call's return leaves the
lock held for ever. Raised in ``cb`` it is also swallowed ("Exception ignored in: <function
_get_module_lock.<locals>.cb>"): the command went on as if the signal had not come, and as soon as
another thread imported (``api._prefetch``, during a run's Parquet and plots) that thread waited
for the lock while holding a module lock the main thread then needed: both waited for ever (a group
Ctrl-C 0.33-0.41 s into `rantcp run --plots`: 5 hangs in 60). Raised in Python code that a C
extension's module init calls (Cython registering its types with ``collections.abc``: pandas,
numpy.random) it was swallowed by that init and the command ran to its end (3 of 904 `run --plots`
and 12 of 484 sweeps signalled in their first 0.6 s; `reproduce` once); in nanobind's enum
creation (DuckDB's import) it aborted the process ("Critical nanobind error", 2 of 484 sweeps).
Found with scripts/interrupt_grid.py.
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
    """A signal handler that raises KeyboardInterrupt, but never inside an import (see the module
    doc): there it raises it once the outermost import running on this thread has ended, at the
    first call or return of other code, through a profile function on this thread that then
    removes itself. A thread blocked on a lock inside an import (a module another thread imports)
    is interrupted once both imports end; a Ctrl-C during a long import waits for it (pandas:
    0.3 s). (Not by sending the signal again: from the handler, the handler runs again at once,
    in its own frame; from another thread 1 ms later, the command had sometimes ended first and
    the signal was lost.)"""
    outermost = _outermost_import(frame)
    if outermost is not None:
        _raise_after(outermost)
        return
    raise KeyboardInterrupt


def _outermost_import(frame: Any) -> Any:
    """The outermost frame of the import machinery on `frame`'s stack, or None."""
    found = None
    while frame is not None:
        if frame.f_code.co_filename in _IMPORT_MACHINERY:
            found = frame
        frame = frame.f_back
    return found


def _raise_after(import_frame: Any) -> None:
    previous = sys.getprofile()
    if getattr(previous, "__name__", "") == "_interrupt_after_imports":
        return  # already pending
    waiting: Any = import_frame

    def _interrupt_after_imports(frame: Any, event: str, arg: object) -> None:
        nonlocal waiting
        if waiting is not None:
            if event == "return" and frame is waiting:
                waiting = None
            return
        waiting = _outermost_import(frame)  # another import began meanwhile: after it too
        if waiting is not None:
            return
        sys.setprofile(previous)
        raise KeyboardInterrupt  # propagates into `frame`, as if the signal came there

    sys.setprofile(_interrupt_after_imports)


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
def as_keyboard_interrupt() -> Iterator[None]:
    """Run the block (DuckDB statements) with DuckDB's stand-in for the user's interrupt raised
    as the KeyboardInterrupt it is, so that callers which treat other errors of the block as
    failures need no special case for it."""
    try:
        yield
    except Exception as e:
        if is_interrupt(e):
            raise KeyboardInterrupt from e
        raise


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
