"""The `reproduce` command of the `rantcp` command line.

    rantcp reproduce --list
    rantcp reproduce NAME [--out DIR] [--quick] [--workers N | --dask ADDRESS] [--quiet]

Exit status: 0 when every claim has a verdict and every figure is drawn (claims that do not
hold included), 1 when a claim's or figure's query failed, 2 for bad input, 3 when the sweep
machinery (not a run) failed, 130 when interrupted (finished runs stay recorded; the same
command resumes).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rantcp.reproductions import Outcome

EXIT_ERRORS = 1
EXIT_SWEEP_FAILED = 3


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser(
        "reproduce",
        help="rerun a seed's evaluation: sweeps, figures in the seed's layout, claims with verdicts",
        description="Run a reproduction's sweeps (finished runs are skipped), then write its figures, "
        "claims table and report.html.",
    )
    p.add_argument("name", nargs="?", help="a reproduction (see --list) or a reproduction folder")
    p.add_argument("--list", action="store_true", help="list the reproductions and exit")
    p.add_argument("--out", type=Path, help="output folder (default: out/NAME, out/NAME-quick with --quick)")
    p.add_argument("--quick", action="store_true", help="fewer repetitions, shorter runs (what the tests run)")
    where = p.add_mutually_exclusive_group()
    where.add_argument("--workers", type=int, metavar="N", help="local worker processes (default: every core)")
    where.add_argument("--dask", metavar="ADDRESS", help="a dask.distributed scheduler (tcp://host:8786) or local:N")
    p.add_argument("--quiet", action="store_true", help="no progress lines or claims table")
    p.set_defaults(handler=cmd_reproduce)


def _progress(quiet: bool) -> Callable[[str, int, int, int], None]:
    """A line on stderr when a sweep's count changed and 10 s have passed, or it finished."""
    t0 = time.monotonic()
    state: dict[str, object] = {"last": 0.0, "seen": None}

    def tick(sweep: str, ok: int, failed: int, total: int) -> None:
        now = time.monotonic()
        key = (sweep, ok, failed, total)
        done = ok + failed == total
        if quiet or total == 0 or key == state["seen"] or (now - float(state["last"]) < 10.0 and not done):  # type: ignore[arg-type]
            return
        state["last"], state["seen"] = now, key
        sys.stderr.write(f"{sweep}: {ok + failed}/{total} runs ({failed} failed), {now - t0:.0f} s\n")
        sys.stderr.flush()

    return tick


def cmd_reproduce(args: argparse.Namespace) -> int:
    from rantcp import ConfigError, reproductions

    if args.list:
        for n in reproductions.names():
            r = reproductions.load(n)
            print(f"{n:<12} {r.title}  ({len(r.claims)} claims, {len(r.figures)} figures, {len(r.sweeps)} sweeps)")
        return 0
    if not args.name:
        raise ConfigError("reproduce: name a reproduction (rantcp reproduce --list)")
    if args.workers is not None and args.workers < 1:
        raise ConfigError("--workers: expected N >= 1")
    repro = reproductions.load(args.name)
    out: Path = args.out or Path("out") / (repro.name + ("-quick" if args.quick else ""))
    try:
        o = reproductions.reproduce(repro, out, quick=args.quick, workers=args.workers, dask=args.dask, progress=_progress(args.quiet))
    except (ConfigError, KeyboardInterrupt):
        raise
    except Exception as e:  # the sweep machinery (a worker pool or Dask), not a run, failed
        from rantcp.interrupts import is_interrupt

        if is_interrupt(e):  # Ctrl-C inside a DuckDB statement (a commit, a claim's query)
            raise
        sys.stderr.write(f"rantcp: error: reproduce {repro.name}: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}\n")
        return EXIT_SWEEP_FAILED
    if not args.quiet:
        _print(o)
    for err in o.errors:
        sys.stderr.write(f"rantcp: error: {err}\n")
    return EXIT_ERRORS if o.errors else 0


def _print(o: Outcome) -> None:
    from rantcp.reproductions.claims import WITHIN_NOISE, fmt_number, noise_counts

    claims = o.claims
    w = max(len(c.claim.id) for c in claims)
    for c in claims:
        unit = f" {c.claim.unit}" if c.claim.unit else ""
        paper = "–" if c.claim.paper is None else fmt_number(c.claim.paper) + unit
        ours = "–" if c.value is None else fmt_number(c.value) + unit
        ci = "" if c.low is None or c.high is None else f"[{fmt_number(c.low)}, {fmt_number(c.high)}]"
        line = f"{c.claim.id:<{w}}  seed {paper:>16}  rantcp {ours:>16} {ci:>22}  {c.verdict_text()}"
        if c.noise == WITHIN_NOISE or (c.noise and c.low is None):
            line += f": {c.noise_note}"
        print(line)
    counts: dict[str, int] = {}
    for c in claims:
        counts[c.verdict] = counts.get(c.verdict, 0) + 1
    noise = noise_counts(claims)
    runs = sum(len(s.df) for s in o.sweeps)
    ran = sum(s.ran for s in o.sweeps)
    print(
        ", ".join(f"{v} {k}" for k, v in counts.items())
        + (" (" + ", ".join(f"{v} {k}" for k, v in noise.items()) + ")" if noise else "")
        + f"; {runs} runs ({ran} now, {o.failed_runs} failed), sweeps {o.wall_s:.1f} s wall"
        + f" → {o.out / 'report.html'}"
    )
