"""Run the `rantcp` command line with a SIGKILL injected into the sweep store's commit path.

    python tests/kill_at.py STAGE N -- sweep FILE --out DIR ...

sends SIGKILL to this process at STAGE of the commit that records the N-th run. Stages, in the
order a commit passes them: ``files-written`` (the batch's first run files written to runs/.tmp-*,
not yet renamed), ``renamed`` (every run folder of the batch in place, no row yet), ``inserted``
(rows inserted, transaction not committed), ``committed`` (transaction committed).

The hook lives here, not in rantcp: it wraps the store's methods (its seams) before main runs.
"""

from __future__ import annotations

import os
import signal
import sys
from typing import Any

from rantcp.cli import main
from rantcp.sweeps.store import Store


def install(stage: str, n: int) -> None:
    state: dict[str, Any] = {"recorded": 0, "batch": range(0), "moved": False}

    def kill_if(at: str) -> None:
        if at == stage and n in state["batch"]:
            os.kill(os.getpid(), signal.SIGKILL)

    real_commit, real_move, real_insert = Store.commit_many, Store._move_into_place, Store._insert_rows

    def commit_many(self, items):  # type: ignore[no-untyped-def]
        state["batch"] = range(state["recorded"] + 1, state["recorded"] + len(items) + 1)
        state["moved"] = False
        real_commit(self, items)
        kill_if("committed")
        state["recorded"] += len(items)

    def move_into_place(self, tmp, task):  # type: ignore[no-untyped-def]
        if tmp is not None and not state["moved"]:
            kill_if("files-written")
        state["moved"] = True
        real_move(self, tmp, task)

    def insert_rows(self, items, rows):  # type: ignore[no-untyped-def]
        kill_if("renamed")
        real_insert(self, items, rows)
        kill_if("inserted")

    Store.commit_many = commit_many  # type: ignore[method-assign]
    Store._move_into_place = move_into_place  # type: ignore[method-assign]
    Store._insert_rows = insert_rows  # type: ignore[method-assign]


if __name__ == "__main__":
    stage, n, sep, *args = sys.argv[1:]
    assert sep == "--", "usage: kill_at.py STAGE N -- rantcp arguments"
    install(stage, int(n))
    raise SystemExit(main(args))
