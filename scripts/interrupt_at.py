#!/usr/bin/env python3
"""Run the rantcp command line with a signal delivered at an exact instant of its writing.

    python scripts/interrupt_at.py POINT[@N][+] SIGNAL -- rantcp-arguments...

POINT names a function looked up at call time (``os.rename``, ``os.replace``, ``shutil.rmtree``,
``rantcp.outdir._exchange``, ``rantcp.sweeps.store.Store.commit_many``, ...). At its N-th call
(default 1) the process sends itself SIGNAL (INT, TERM or KILL) just before the call, or just
after it with a trailing ``+``. SIGINT and SIGTERM then unwind from that point exactly as a
Ctrl-C or a ``kill`` arriving there would (Python runs the handler at the next bytecode, i.e.
as the hook returns); SIGKILL ends the process there. Nothing in rantcp itself knows about this
hook: it patches the attribute from outside, then calls ``rantcp.__main__.console`` (what the
``rantcp`` command runs), so the interpreter's exit is the command's too (``threading._shutdown``).

Used by scripts/fuzz_interrupt.py (its ``hook`` instants) and tests/test_interrupt.py.
"""
from __future__ import annotations

import functools
import importlib
import os
import signal
import sys


def _resolve(point: str) -> tuple[object, str]:
    parts = point.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        try:
            owner: object = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for attr in parts[cut:-1]:
            owner = getattr(owner, attr)
        return owner, parts[-1]
    raise SystemExit(f"interrupt_at: cannot resolve {point!r}")


def install(spec: str, sig: signal.Signals) -> None:
    after = spec.endswith("+")
    spec = spec.rstrip("+")
    point, _, nth = spec.partition("@")
    n = int(nth or 1)
    owner, name = _resolve(point)
    real = getattr(owner, name)
    calls = [0]

    def fire() -> None:
        sys.stderr.flush()
        os.kill(os.getpid(), sig)

    @functools.wraps(real)
    def hooked(*args: object, **kwargs: object) -> object:
        calls[0] += 1
        hit = calls[0] == n
        if hit and not after:
            fire()
        result = real(*args, **kwargs)
        if hit and after:
            fire()
        return result

    if isinstance(owner, type) and isinstance(owner.__dict__.get(name), staticmethod):
        hooked = staticmethod(hooked)  # type: ignore[assignment]
    setattr(owner, name, hooked)


def main() -> int:
    argv = sys.argv[1:]
    if len(argv) < 3 or argv[2] != "--":
        raise SystemExit(__doc__)
    spec, signame, rest = argv[0], argv[1], argv[3:]
    sig = signal.Signals["SIG" + signame.upper().removeprefix("SIG")]
    install(spec, sig)
    from rantcp.__main__ import console

    sys.argv = ["rantcp", *rest]
    return console()


if __name__ == "__main__":
    raise SystemExit(main())
