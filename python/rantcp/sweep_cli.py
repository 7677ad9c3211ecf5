"""The `sweep` and `report` commands of the `rantcp` command line.

    rantcp sweep SWEEP.toml [--out DIR] [--workers N | --dask ADDRESS | --dask local:N]
                            [--strict] [--retry-failed] [--quiet]
    rantcp report FOLDER [--output FILE]

`sweep` exits 0 when every run was recorded (failed runs included), 1 with --strict when any
run of the sweep failed, 2 for bad input, 3 when the workers (not a run) fail,
130 when interrupted (finished runs stay recorded;
the same command resumes).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

EXIT_FAILED_RUNS = 1
EXIT_WORKERS_DIED = 3


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    s = sub.add_parser(
        "sweep",
        help="run a parameter sweep (local cores or a Dask cluster) into a results store",
        description="Run every point of a sweep file; runs already recorded in the folder are skipped.",
    )
    s.add_argument("spec", metavar="SWEEP.toml", help="the sweep file (see examples/sweep-cc-loss.toml)")
    s.add_argument("--out", type=Path, help="sweep folder (default: out/<sweep name>)")
    where = s.add_mutually_exclusive_group()
    where.add_argument("--workers", type=int, metavar="N", help="local worker processes (default: every core)")
    where.add_argument("--dask", metavar="ADDRESS", help="a dask.distributed scheduler (tcp://host:8786), or local:N for a local cluster of N workers")
    s.add_argument("--strict", action="store_true", help="exit with status 1 if any run failed")
    s.add_argument("--retry-failed", action="store_true", help="run again the runs recorded as failed")
    s.add_argument("--quiet", action="store_true", help="no progress bar or summary table")
    s.set_defaults(handler=cmd_sweep)

    r = sub.add_parser("report", help="write a self-contained HTML report of a run or sweep folder")
    r.add_argument("folder", type=Path, help="a run folder (summary.json) or a sweep folder (sweep.duckdb)")
    r.add_argument("--output", type=Path, help="where to write the page (default: FOLDER/report.html)")
    r.set_defaults(handler=cmd_report)


class _PlainProgress:
    """A line every few seconds when stderr is not a terminal."""

    def __init__(self, name: str, every_s: float = 5.0) -> None:
        self.name = name
        self.every_s = every_s
        self.t0 = time.monotonic()
        self.last = -1.0
        self.state = (0, 0, 0)

    def __call__(self, ok: int, failed: int, total: int) -> None:
        now = time.monotonic()
        changed = (ok, failed, total) != self.state
        self.state = (ok, failed, total)
        if changed and ok + failed > 0 and (now - self.last >= self.every_s or ok + failed == total):
            self.last = now
            done = ok + failed
            el = now - self.t0
            eta = f", ETA {el / done * (total - done):.0f} s" if 0 < done < total else ""
            sys.stderr.write(f"{self.name}: {done}/{total} runs ({ok} ok, {failed} failed), {el:.1f} s{eta}\n")
            sys.stderr.flush()


def cmd_sweep(args: argparse.Namespace) -> int:
    from rantcp.sweeps.spec import load_spec

    if not Path(args.spec).is_file():
        raise _config_error(f"sweep file {str(args.spec)!r} not found")
    if args.workers is not None and args.workers < 1:
        raise _config_error("--workers: expected N >= 1")
    spec = load_spec(args.spec)
    out: Path = args.out or Path("out") / spec.name
    tasks = spec.tasks()
    quiet = args.quiet
    show_bar = not quiet and sys.stderr.isatty()

    if show_bar:
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

        with Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("[green]{task.fields[ok]} ok[/] [red]{task.fields[failed]} failed[/]"),
            TimeElapsedColumn(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
        ) as bar:
            task = bar.add_task(spec.name, total=None, ok=0, failed=0)

            def tick(ok: int, failed: int, total: int) -> None:
                bar.update(task, completed=ok + failed, total=total, ok=ok, failed=failed)

            outcome = _run(spec, out, args, tick)
    else:
        plain = None if quiet else _PlainProgress(spec.name)
        outcome = _run(spec, out, args, plain)

    if outcome is None:
        return EXIT_WORKERS_DIED
    if not quiet:
        _print_table(spec, out, [t.point_id for t in tasks])
        print(
            f"{outcome.total} runs: {outcome.ok} ok and {outcome.failed} failed now, "
            f"{outcome.skipped} already recorded; {outcome.failed_overall} failed in all; "
            f"{outcome.wall_s:.1f} s → {out}"
        )
    if args.strict and outcome.failed_overall:
        sys.stderr.write(f"rantcp: {outcome.failed_overall} run(s) failed (see the error column of {out}/sweep.duckdb)\n")
        return EXIT_FAILED_RUNS
    return 0


def _run(spec: Any, out: Path, args: argparse.Namespace, progress: Any) -> Any:
    from rantcp.sweeps.coordinator import run_sweep
    from rantcp.sweeps.executors import SweepAborted

    try:
        return run_sweep(spec, out, workers=args.workers, dask=args.dask, retry_failed=args.retry_failed, progress=progress)
    except SweepAborted as e:
        sys.stderr.write(f"rantcp: error: {e}\n")
        return None


def _config_error(msg: str) -> Exception:
    from rantcp import ConfigError

    return ConfigError(msg)


def _print_table(spec: Any, out: Path, ids: list[str]) -> None:
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    import pandas as pd

    from rantcp import labels
    from rantcp.sweeps import store
    from rantcp.sweeps.stats import MIN_REPETITIONS_FOR_INTERVAL, interval_text

    df = store.read_table(out, ids=ids)
    heads = {"goodput_mbps": "goodput Mbit/s", "rtt_mean_ms": "mean RTT ms"}
    metrics = [m for m in heads if m in df]
    ok = df[df["status"] == "ok"]
    fails = df[df["status"] == "failed"]
    points = list(ok.groupby(list(spec.axes), sort=False, dropna=False)) if spec.axes else ([((), ok)] if len(ok) else [])
    console = Console(width=None if sys.stdout.isatty() else 120)
    t = Table(
        title=f"{spec.name}: mean over repetitions, [95 % interval] with {MIN_REPETITIONS_FOR_INTERVAL} or more, (lowest–highest) with fewer"
    )
    for a in spec.axes:
        t.add_column(a, no_wrap=True)
    t.add_column("ok runs", justify="right")
    for m in metrics:
        t.add_column(heads[m], justify="right", no_wrap=True)
    for key, g in points[:40]:
        key = key if isinstance(key, tuple) else (key,)
        cells = [str(k) for k in key] + [str(len(g))]
        for m in metrics:
            cells.append(interval_text(pd.to_numeric(g[m], errors="coerce"), *labels.bounds(m)))
        t.add_row(*cells)
    if metrics and points:
        console.print(t)
    if len(points) > 40:
        console.print(f"... {len(points) - 40} more points (rantcp.load({str(out)!r}).summarise())")
    for _, row in fails.head(10).iterrows():
        axes = ", ".join(f"{a}={row[a]}" for a in spec.axes)
        console.print(f"[red]failed[/] {escape(axes)} rep {row['repetition']}: {escape(str(row['error']))}", highlight=False)
    if len(fails) > 10:
        console.print(f"... {len(fails) - 10} more failed runs")


def cmd_report(args: argparse.Namespace) -> int:
    from rantcp import report

    folder: Path = args.folder
    if not folder.is_dir():
        raise _config_error(f"{str(folder)!r}: no such folder")
    path = report.write_report(folder, args.output)
    print(path)
    return 0
