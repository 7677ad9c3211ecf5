"""The `rantcp` command line.

    rantcp run SCENARIO [--out DIR] [--seed N] [--set path.to.field=value ...] [--plots] [--profile]
    rantcp scenarios
    rantcp validate FILE [--set ...]
    rantcp schema
    rantcp --version

SCENARIO is a TOML file or builtin:NAME. Bad input prints one line to stderr and exits 2.

Start-up is kept short (``tests/test_startup.py``): nothing heavier than argparse and the native
core is imported before a command needs it, and `run` imports what it will write with (pyarrow;
matplotlib for --plots; rich for a progress bar) on a helper thread while the core simulates.
"""

from __future__ import annotations

import time

_T_IMPORTED = time.perf_counter()

import argparse  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import sys  # noqa: E402
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn

EXIT_BAD_INPUT = 2


class _Parser(argparse.ArgumentParser):
    """argparse that reports usage errors in one line with exit status 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_BAD_INPUT, f"rantcp: error: {message} (see rantcp --help)\n")


def _fail(message: str) -> NoReturn:
    sys.stderr.write(f"rantcp: error: {message}\n")
    raise SystemExit(EXIT_BAD_INPUT)


def _config_warnings_to_stderr() -> None:
    """Print each rantcp.ConfigWarning as one `rantcp: warning: ...` line on stderr (other
    warnings as Python shows them)."""
    import warnings

    shown = warnings.showwarning

    def show(message, category, filename, lineno, file=None, line=None):  # type: ignore[no-untyped-def]
        if category.__name__ == "ConfigWarning" and category.__module__ == "rantcp.api":
            sys.stderr.write(f"rantcp: warning: {message}\n")
        else:
            shown(message, category, filename, lineno, file, line)

    warnings.showwarning = show


def _parse_sets(items: Sequence[str] | None) -> dict[str, str]:
    out: dict[str, str] = {}
    for item in items or []:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            _fail(f"--set {item!r}: expected path.to.field=value")
        out[key.strip()] = value.strip()
    return out


def _add_common(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--set",
        dest="sets",
        action="append",
        metavar="PATH=VALUE",
        help="override any config field, e.g. --set bottleneck.loss=1e-3 (repeatable)",
    )
    p.add_argument("--seed", type=int, help="run seed (replaces the config's seed)")


def _build_parser() -> argparse.ArgumentParser:
    import rantcp

    p = _Parser(prog="rantcp", description="Fast, deterministic simulation of TCP over cellular RANs.")
    p.add_argument("--version", action="version", version=f"rantcp {rantcp.__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    r = sub.add_parser("run", help="run a scenario and write its output folder")
    r.add_argument("scenario", help="a TOML file or builtin:NAME (see `rantcp scenarios`)")
    r.add_argument("--out", type=Path, help="output folder (default: out/<scenario>)")
    r.add_argument("--quiet", action="store_true", help="no progress bar or summary table")
    r.add_argument(
        "--plots",
        action="store_true",
        help="also draw plots/*.png (same as --set output.plots=true; about half a second more)",
    )
    r.add_argument("--profile", action="store_true", help="print the wall time of each phase of the run to stderr")
    r.add_argument(
        "--force",
        action="store_true",
        help="run even when the work estimated before the start is above its bound (minutes to hours of wall time)",
    )
    _add_common(r)

    sub.add_parser("scenarios", help="list built-in scenarios")

    v = sub.add_parser("validate", help="check a scenario config and print its effective values")
    v.add_argument("scenario", help="a TOML file or builtin:NAME")
    _add_common(v)

    sc = sub.add_parser("schema", help="print the JSON Schema of scenario configs (or of sweep files)")
    sc.add_argument("--sweep", action="store_true", help="the schema of sweep files instead")

    _register_extra_commands(sub)
    return p


def _register_extra_commands(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Commands contributed by other modules (sweep, report, trace, reproduce) when they are present."""
    from rantcp.reproductions import cli as reproduce_cli  # light: no pandas/duckdb at import
    from rantcp import emulation  # light: the native core and the standard library only
    from rantcp.trace import cli as trace_cli  # light: heavy imports live in its handlers

    trace_cli.register(sub)
    emulation.register(sub)
    reproduce_cli.register(sub)
    try:
        from rantcp import sweep_cli  # noqa: F401
    except ImportError:
        return
    sweep_cli.register(sub)


SUMMARY_COLUMNS = [
    ("flow", "name", "{}"),
    ("app", "app", "{}"),
    ("cc", "cc", "{}"),
    ("goodput Mbit/s", "goodput_mbps", "{:.2f}"),
    ("retx segs", "retransmitted_segments", "{}"),
    ("RTOs", "rtos", "{}"),
    ("RTT mean ms", "rtt_mean_ms", "{:.1f}"),
    ("download s", "download_time_s", "{:.3f}"),
]
_TEXT_COLUMNS = ("flow", "app", "cc")


def summary_text(summary: dict[str, Any], out: Path, max_flows: int = 20) -> str:
    """The table printed after a run: one row per flow (up to `max_flows`), then events and wall
    time. Plain aligned text: a table library's import would cost more than a short run."""
    flows = summary["flows"]
    present = [c for c in SUMMARY_COLUMNS if any(c[1] in f for f in flows)]
    rows = [[head for head, _, _ in present]]
    for f in flows[:max_flows]:
        rows.append(["-" if f.get(key) is None else fmt.format(f[key]) for _, key, fmt in present])
    widths = [max(len(r[i]) for r in rows) for i in range(len(present))]
    lines = [f"{summary['scenario']} · seed {summary['seed']} · {summary['duration_s']:g} s simulated"]
    for ri, r in enumerate(rows):
        cells = [c.ljust(w) if present[i][0] in _TEXT_COLUMNS else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths))]
        lines.append("  ".join(cells).rstrip())
        if ri == 0:
            lines.append("  ".join("-" * w for w in widths))
    if len(flows) > max_flows:
        lines.append(f"... {len(flows) - max_flows} more flows in summary.json")
    wall = summary["wall"]
    lines.append(
        f"{summary['events']:,} events in {wall['seconds']:.3f} s wall "
        f"({wall['events_per_second'] / 1e6:.1f} M events/s) → {out}"
    )
    return "\n".join(lines)


RATE_AFTER_S = 1.0
"""The progress bar adds events/s once a run has taken this long."""


def rate_text(events: int, elapsed_s: float) -> str:
    """The progress bar's events/s field: empty during the first second."""
    if elapsed_s < RATE_AFTER_S or elapsed_s <= 0:
        return ""
    rate = events / elapsed_s
    return f"{rate / 1e6:.1f} M events/s" if rate >= 1e5 else f"{rate / 1e3:.1f} k events/s"


def empty_tables_note(summary: dict[str, Any], table_rows: dict[str, int]) -> str | None:
    """One line when the run wrote time-series tables without a row: the sample interval is
    longer than the run, so flows.parquet & co. are empty."""
    if not table_rows or any(table_rows.values()):
        return None
    interval = ((summary.get("config") or {}).get("output") or {}).get("sample_interval", "?")
    return (
        f"note: the time series are empty: output.sample_interval ({interval}) is longer than the "
        f"run ({summary.get('duration_s', 0):g} s simulated); set a shorter one, e.g. --set output.sample_interval=100ms"
    )


def _process_age_s() -> float | None:
    """Seconds since this process started (Linux /proc; None elsewhere): the interpreter's
    own start-up and the imports before main."""
    try:
        with open("/proc/self/stat", "rb") as f:
            started_ticks = int(f.read().rsplit(b")", 1)[1].split()[19])
        with open("/proc/uptime", "rb") as f:
            uptime = float(f.read().split()[0])
        return max(0.0, uptime - started_ticks / os.sysconf("SC_CLK_TCK"))
    except (OSError, ValueError, IndexError):
        return None


def _print_profile(phases: dict[str, float], t_main: float) -> None:
    total = time.perf_counter() - t_main
    rows = list(phases.items())
    age = _START_AGE
    if age is not None:
        rows.insert(0, ("start-up (interpreter, imports)", age))
        total += age
    width = max(len(k) for k, _ in rows)
    lines = [f"{'phase':<{width}}  wall s"]
    lines += [f"{k:<{width}}  {v:6.3f}" for k, v in rows]
    lines.append(f"{'total':<{width}}  {total:6.3f}")
    sys.stderr.write("\n".join(lines) + "\n")


def _cmd_run(args: argparse.Namespace) -> int:
    import rantcp
    from rantcp import api

    t_main = _T_MAIN
    sets = _parse_sets(args.sets)
    if args.plots:
        sets["output.plots"] = "true"
    scenario: str = args.scenario
    if not scenario.startswith("builtin:") and not Path(scenario).is_file():
        _fail(f"scenario file {scenario!r} not found (give a TOML file or builtin:NAME)")
    show_progress = not args.quiet and sys.stderr.isatty()
    api._prefetch("pyarrow.parquet", *(["rich.console", "rich.progress"] if show_progress else []))
    phases: dict[str, float] = {}
    t0 = time.perf_counter()
    # Validate before touching the output folder, so bad input never costs earlier results;
    # this says the config's warnings (the run itself then does not repeat them).
    cfg = rantcp.validate(scenario, sets, args.seed)
    out: Path = args.out or Path("out") / cfg["scenario"]
    from rantcp.outdir import check_target

    check_target(out)
    phases["config"] = time.perf_counter() - t0
    if show_progress:
        from rich.console import Console
        from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

        with Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            TextColumn("{task.completed:.1f} / {task.total:.1f} s simulated"),
            TimeElapsedColumn(),
            TextColumn("{task.fields[rate]}"),
            console=Console(stderr=True),
            transient=True,
        ) as bar:
            task = bar.add_task(cfg["scenario"], total=1.0, rate="")
            started = time.perf_counter()

            def tick(now_s: float, total_s: float, events: int) -> None:
                bar.update(task, completed=now_s, total=total_s, rate=rate_text(events, time.perf_counter() - started))

            result = rantcp.run(scenario, seed=args.seed, overrides=sets, out=out, progress=tick, force=args.force, warn=False)
    else:
        result = rantcp.run(scenario, seed=args.seed, overrides=sets, out=out, force=args.force, warn=False)
    phases.update(result.timings)
    t0 = time.perf_counter()
    if not args.quiet:
        print(summary_text(result.summary, out))
        note = empty_tables_note(result.summary, {k: len(result.timeseries.arrow(k)) for k in result.timeseries})
        if note:
            sys.stderr.write(note + "\n")
        if not result.summary["config"]["output"]["plots"]:
            sys.stderr.write("plots: not drawn (add --plots for plots/*.png, about half a second more)\n")
    phases["summary table"] = time.perf_counter() - t0
    if args.profile:
        _print_profile(phases, t_main)
    return 0


def _cmd_scenarios(_: argparse.Namespace) -> int:
    import rantcp

    width = max(len(n) for n, _ in rantcp.scenarios())
    for name, desc in rantcp.scenarios():
        print(f"builtin:{name:<{width}}  {desc}")
    return 0


def _cmd_validate(args: argparse.Namespace) -> int:
    import rantcp

    scenario: str = args.scenario
    if not scenario.startswith("builtin:") and not Path(scenario).is_file():
        _fail(f"scenario file {scenario!r} not found")
    cfg = rantcp.validate(scenario, _parse_sets(args.sets), args.seed)
    print(json.dumps(cfg, indent=2))
    print(f"{scenario}: ok", file=sys.stderr)
    return 0


def _cmd_schema(args: argparse.Namespace) -> int:
    import rantcp

    if args.sweep:
        from rantcp.sweeps.spec import json_schema

        print(json.dumps(json_schema(), indent=2))
    else:
        print(rantcp.config_schema())
    return 0


def parse_args(parser: argparse.ArgumentParser, argv: Sequence[str]) -> argparse.Namespace:
    """The command line's arguments, as main() reads them (tests/test_readme_commands.py parses
    the README's commands with this). Bad input exits with status 2 (SystemExit)."""
    argv = list(argv)
    # `rantcp emulate [OPTIONS] SCENARIO -- HOST: ARGV... [-- HOST: ARGV...]`: the commands
    # after the first `--` are not rantcp's options (argparse cannot split them itself).
    trailing: list[str] = []
    if argv[:1] == ["emulate"] and "--" in argv:
        cut = argv.index("--")
        argv, trailing = argv[:cut], argv[cut:]
    args = parser.parse_args(argv)
    if args.command == "emulate":
        args.commands = trailing
    return args


_T_MAIN = _T_IMPORTED
_START_AGE: float | None = None


def main(argv: Sequence[str] | None = None) -> int:
    import signal

    import rantcp

    global _T_MAIN, _START_AGE
    try:  # from the first line: a Ctrl-C anywhere before the command runs is one line too
        _T_MAIN = time.perf_counter()
        _START_AGE = _process_age_s()
        parser = _build_parser()  # the subcommands' modules: most of the start-up
        args = parse_args(parser, sys.argv[1:] if argv is None else argv)
    except KeyboardInterrupt:  # Ctrl-C while starting: nothing written, no traceback
        sys.stderr.write("rantcp: interrupted\n")
        return 130
    _config_warnings_to_stderr()
    handlers = {
        "run": _cmd_run,
        "scenarios": _cmd_scenarios,
        "validate": _cmd_validate,
        "schema": _cmd_schema,
    }
    handler = handlers.get(args.command) or getattr(args, "handler", None)
    if handler is None:
        parser.print_help()
        return EXIT_BAD_INPUT
    try:
        # Only now: a SIGTERM while the arguments are parsed (nothing written yet) just ends the
        # process; from here it unwinds like Ctrl-C, inside this try (no traceback).
        if threading_main():
            from rantcp.interrupts import on_interrupt

            # Unwinds like Ctrl-C, so a run's staging folder is removed (nothing half-written is left).
            signal.signal(signal.SIGTERM, on_interrupt)
        return int(handler(args) or 0)
    except rantcp.ConfigError as e:
        _fail(str(e))
    except KeyboardInterrupt:
        sys.stderr.write("rantcp: interrupted\n")
        return 130
    except BrokenPipeError:
        # The reader went away (`rantcp schema | head -1`): stop quietly.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
    except BaseException as e:
        from rantcp.interrupts import is_interrupt

        if is_interrupt(e):  # a Ctrl-C or SIGTERM that arrived inside a DuckDB statement
            sys.stderr.write("rantcp: interrupted\n")
            return 130
        # A Rust panic (pyo3's PanicException, a BaseException): a bug, but one line like any
        # other error (the extension's panic hook keeps Rust's own lines off stderr).
        if type(e).__name__ != "PanicException":
            raise
        from rantcp import _native

        _fail(f"internal error (a bug in rantcp; please report it with the command): {_native.last_panic() or e}")


def console(started: Sequence[int] = ()) -> int:
    """The `rantcp` command (rantcp.__main__.console, pyproject's console script, calls it with
    the signals its start-up handler recorded: a Ctrl-C while this module was imported): main(),
    with SIGINT handled by rantcp.interrupts.on_interrupt, which never raises inside Python's
    import machinery (a Ctrl-C there could leave the import lock held and be swallowed: the
    command went on, or hung); then SIGINT and SIGTERM back to their default actions for the
    interpreter's exit. Otherwise a Ctrl-C while the interpreter runs its own Python code at exit
    (threading._shutdown, which runs concurrent.futures' exit hook and joins threads, then
    atexit's callbacks), after all work is done and with no thread left to wait for, raised
    KeyboardInterrupt there: "Exception ignored in: <module 'threading'>" and a traceback. Now the
    signal just ends the process. main() itself leaves SIGINT's handler alone: tests and scripts
    call it in-process. A Ctrl-C that comes here outside main's own try (a recorded one, or one
    between main's return and the handlers' reset) is the same one line and exit 130."""
    import signal

    on_main_thread = threading_main()
    try:
        try:
            if on_main_thread:
                from rantcp.interrupts import on_interrupt

                # A Ctrl-C as the handler changes is recorded in `started` or raised: both end below.
                signal.signal(signal.SIGINT, on_interrupt)
            if started:
                raise KeyboardInterrupt
            return main()
        finally:
            if on_main_thread:
                _default_actions()
    except KeyboardInterrupt:
        sys.stderr.write("rantcp: interrupted\n")
        return 130


def _default_actions() -> None:
    """SIGINT and SIGTERM to their default actions. signal.signal first runs the handler of a
    signal that came just before: on_interrupt raises. The command is over (its work done, or
    undone as it unwound), so that interrupt is dropped and the reset tried again."""
    import signal

    for sig in (signal.SIGINT, signal.SIGTERM):
        while True:
            try:
                signal.signal(sig, signal.SIG_DFL)
                break
            except KeyboardInterrupt:
                continue


def threading_main() -> bool:
    import threading

    return threading.current_thread() is threading.main_thread()


if __name__ == "__main__":
    raise SystemExit(console())
