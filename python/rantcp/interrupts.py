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
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

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
