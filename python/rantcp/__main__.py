"""The `rantcp` command: pyproject's console script (``rantcp.__main__:console``) and
``python -m rantcp``.

A Ctrl-C is one line and exit 130 from console()'s first statement on: it gives SIGINT a handler
that only records the signal, before anything is imported (importing ``rantcp`` and this module
imports nothing else), and rantcp.cli.console acts on a recorded one as the command begins.
Before, the handler came once the console script had imported rantcp.cli and what it imports
(argparse, json, pathlib, typing, the native core: 40-170 ms on a loaded 2-core box, median
98 ms), and a Ctrl-C there printed a KeyboardInterrupt traceback. The handler never raises, so it
obeys rantcp.interrupts' rule (never raise inside an import) trivially. It is installed by
console(), not as this module is imported: multiprocessing's spawn and forkserver workers re-run
the console script as ``__mp_main__``, which imports this module without calling console(), and
they keep their own SIGINT handling. SIGTERM keeps its default action (the process ends, no
output) until the command runs (rantcp.cli.main).

Left to Python, before any of rantcp's code runs (median on the same box; tests/test_interrupt.py
probes the first covered instant): from exec to the interpreter's own SIGINT handler (14 ms)
SIGINT just ends the process (-SIGINT, nothing printed); while `site` runs (5 ms) a Ctrl-C is
"Fatal Python error: init_import_site" with a traceback, exit 1, and during the interpreter's
check of argv[0] a traceback after which the command runs on; then while the console script
imports ``rantcp`` and this module (4 ms without .pyc files, under 1 ms with them) Python's
KeyboardInterrupt traceback, exit -SIGINT.
"""

import sys


def console() -> int:
    import _signal  # type: ignore[import-not-found]  # signal's C half, loaded with the interpreter: `signal` imports enum first

    arrived: list[int] = []
    _signal.signal(_signal.SIGINT, lambda signum, frame: arrived.append(signum))
    from rantcp import cli

    return cli.console(arrived)


if __name__ == "__main__":
    sys.exit(console())
