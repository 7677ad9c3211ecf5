"""The `trace` commands of the `rantcp` command line.

    rantcp trace ingest CAPTURES... --db traces.duckdb [--manifest manifest.csv]
                        [--pattern '{region}_{site}_{size}_{optimisation}.pcap'] [--tag KEY=VALUE]
                        [--idle-split SECONDS] [--uncompressed] [--quiet]
    rantcp trace sessions --db traces.duckdb [--where SQL]
    rantcp trace graph --db traces.duckdb --session ID [--kind sequence|throughput|rtt|inflight|all]
                       [--out FILE.png]
    rantcp trace compare --db traces.duckdb --by TAG [--baseline V --treatment V]
                         [--weights weights.toml] [--metric throughput_bps] [--group-by TAG]
                         [--bootstrap N] [--csv FILE]

`ingest` prints one line per file it could not read and exits 2 if there was any (the other files
are ingested; nothing already in the database is touched); bad arguments exit 2. Heavy modules
(duckdb, pyarrow, matplotlib) are imported inside the handlers only.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

EXIT_BAD_INPUT = 2


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    t = sub.add_parser(
        "trace",
        help="analyse pcap/pcapng captures: TCP sessions into DuckDB, graphs, gain tables",
        description="TCP packet-trace analysis (see the README, section 'Trace analysis').",
    )
    tsub = t.add_subparsers(dest="trace_command", metavar="SUBCOMMAND", parser_class=type(t))
    t.set_defaults(handler=_no_subcommand(t))

    i = tsub.add_parser("ingest", help="read captures (files or folders) into a trace database")
    i.add_argument("captures", nargs="+", metavar="CAPTURE", help="pcap/pcapng files, or folders searched for them")
    i.add_argument("--db", type=Path, required=True, help="the DuckDB database (created if missing)")
    i.add_argument("--manifest", type=Path, help="CSV: a 'file' glob column, then one column per tag")
    i.add_argument("--pattern", help="file-name pattern with {tag} fields, e.g. '{region}_{site}_{size}.pcap'")
    i.add_argument("--tag", action="append", metavar="KEY=VALUE", help="a tag for every capture (repeatable)")
    i.add_argument("--idle-split", type=float, default=300.0, metavar="SECONDS",
                   help="a packet after this much silence on its 4-tuple starts a new session (default 300)")
    i.add_argument("--uncompressed", action="store_true",
                   help="store packet rows uncompressed: about 2x faster ingest, about 5x the disk")
    i.add_argument("--quiet", action="store_true", help="no progress bar or summary")
    i.set_defaults(handler=cmd_ingest)

    s = tsub.add_parser("sessions", help="list the sessions of a trace database")
    s.add_argument("--db", type=Path, required=True)
    s.add_argument("--where", help="SQL condition on the sessions columns, e.g. 'retx_ratio > 0.01'")
    s.add_argument("--csv", type=Path, help="write every column to this CSV file instead")
    s.set_defaults(handler=cmd_sessions)

    g = tsub.add_parser("graph", help="draw graphs of one session (PNG)")
    g.add_argument("--db", type=Path, required=True)
    g.add_argument("--session", type=int, required=True, metavar="ID", help="session_id (see `rantcp trace sessions`)")
    g.add_argument("--kind", default="sequence", choices=["sequence", "throughput", "rtt", "inflight", "all"])
    g.add_argument("--out", type=Path, help="output file (default: session-ID-KIND.png)")
    g.set_defaults(handler=cmd_graph)

    c = tsub.add_parser("compare", help="weighted gain table between two values of a tag")
    c.add_argument("--db", type=Path, required=True)
    c.add_argument("--by", required=True, metavar="TAG", help="the tag whose two values are compared, e.g. optimisation")
    c.add_argument("--baseline", help="the baseline value (default: the other of exactly two values)")
    c.add_argument("--treatment", help="the treatment value")
    c.add_argument("--weights", type=Path, help="TOML weights per class (see rantcp.trace.gain)")
    c.add_argument("--metric", default="throughput_bps", help="a sessions column (default throughput_bps)")
    c.add_argument("--group-by", metavar="TAG", help="one row per value of this tag, plus overall")
    c.add_argument("--bootstrap", type=int, default=1000, metavar="N", help="bootstrap resamples for the CI (0: none)")
    c.add_argument("--seed", type=int, default=1)
    c.add_argument("--csv", type=Path, help="also write the table to this CSV file")
    c.set_defaults(handler=cmd_compare)


def _no_subcommand(parser: argparse.ArgumentParser) -> Any:
    def handler(args: argparse.Namespace) -> int:
        parser.print_help()
        return EXIT_BAD_INPUT

    return handler


def _fail(message: str) -> int:
    sys.stderr.write(f"rantcp: error: {message}\n")
    return EXIT_BAD_INPUT


def _parse_tags(items: list[str] | None) -> dict[str, str]:
    from rantcp.trace.ingest import TraceInputError

    out = {}
    for item in items or []:
        k, sep, v = item.partition("=")
        if not sep or not k.strip():
            raise TraceInputError(f"--tag {item!r}: expected KEY=VALUE")
        out[k.strip()] = v.strip()
    return out


def cmd_ingest(args: argparse.Namespace) -> int:
    from rantcp.trace.ingest import FileResult, TraceInputError, ingest

    try:
        tags = _parse_tags(args.tag)
        if not args.idle_split > 0:
            raise TraceInputError(f"--idle-split {args.idle_split}: must be a positive number of seconds")
        show = not args.quiet and sys.stderr.isatty()
        done: list[FileResult] = []
        t0 = time.perf_counter()

        def report(r: FileResult) -> None:
            done.append(r)
            if r.status == "failed":
                sys.stderr.write(f"rantcp: error: {r.path}: {r.message}\n")
            elif r.message and r.status == "ingested":
                sys.stderr.write(f"rantcp: warning: {r.path}: {r.message}\n")

        if show:
            from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

            from rantcp.trace.ingest import expand

            files, _ = expand(args.captures)
            with Progress(
                TextColumn("[bold]trace ingest"),
                BarColumn(),
                TextColumn("{task.fields[files]} files · {task.fields[packets]:,} packets"),
                TimeElapsedColumn(),
                transient=True,
            ) as bar:
                task = bar.add_task("ingest", total=max(len(files), 1), files=f"0/{len(files)}", packets=0)
                state = {"packets": 0}

                def on_packets(n: int) -> None:
                    state["packets"] += n
                    bar.update(task, packets=state["packets"])

                def on_file(r: FileResult) -> None:
                    report(r)
                    bar.update(task, advance=1, files=f"{len(done)}/{len(files)}")

                rep = ingest(args.captures, args.db, manifest=args.manifest, pattern=args.pattern, tags=tags,
                             idle_split_s=args.idle_split, compress=not args.uncompressed,
                             on_file=on_file, on_packets=on_packets)
        else:
            rep = ingest(args.captures, args.db, manifest=args.manifest, pattern=args.pattern, tags=tags,
                         idle_split_s=args.idle_split, compress=not args.uncompressed, on_file=report)
    except TraceInputError as e:
        return _fail(str(e))
    if not args.quiet:
        wall = time.perf_counter() - t0
        n = {s: sum(1 for f in rep.files if f.status == s) for s in ("ingested", "skipped", "failed")}
        sessions = sum(f.sessions for f in rep.files)
        rate = f" ({rep.packets / wall / 1e6:.2f} M packets/s)" if rep.packets and wall > 0 else ""
        print(f"{n['ingested']} ingested, {n['skipped']} skipped (already in the database), {n['failed']} unreadable: "
              f"{sessions:,} sessions, {rep.packets:,} packets in {wall:.2f} s{rate} → {args.db}")
    return EXIT_BAD_INPUT if rep.failed else 0


def cmd_sessions(args: argparse.Namespace) -> int:
    from rantcp.trace.ingest import TraceInputError
    from rantcp.trace.sessions import sessions

    try:
        if args.csv:
            _check_output(args.csv, "--csv", (".csv",))
        df = sessions(args.db, where=args.where)
    except TraceInputError as e:
        return _fail(str(e))
    except Exception as e:  # an SQL error in --where
        if type(e).__module__.startswith(("duckdb", "_duckdb")):
            return _fail(f"--where {args.where!r}: {str(e).splitlines()[0]}")
        raise
    if args.csv:
        try:
            df.to_csv(args.csv, index=False)
        except OSError as e:
            return _fail(f"--csv {args.csv}: cannot write ({e.strerror or e})")
        print(f"{len(df)} sessions → {args.csv}")
        return 0
    cols = ["session_id", "client_ip", "client_port", "server_ip", "server_port", "packets", "data_bytes",
            "duration_s", "throughput_bps", "retx_ratio", "dup_acks", "out_of_order", "rtt_median_ms", "start_reason"]
    with_tags = cols + [c for c in df.columns if c not in cols and c not in _session_column_names()]
    print(df[[c for c in with_tags if c in df.columns]].to_string(index=False, max_rows=200))
    return 0


def _session_column_names() -> set[str]:
    from rantcp.trace.schema import SESSION_COLUMNS

    return {n for n, _ in SESSION_COLUMNS} | {"capture_id", "path"}


def cmd_graph(args: argparse.Namespace) -> int:
    from rantcp.trace.graphs import KINDS, graph
    from rantcp.trace.ingest import TraceInputError

    kinds = list(KINDS) if args.kind == "all" else [args.kind]
    # matplotlib picks the format by the suffix and adds ".png" to a name without one: name
    # the file that is written.
    given = args.out.with_suffix(".png") if args.out and not args.out.suffix and not args.out.is_dir() else args.out
    outs = [
        given if (given and len(kinds) == 1) else Path(
            f"session-{args.session}-{kind}.png" if not given else f"{given.with_suffix('')}-{kind}{given.suffix}"
        )
        for kind in kinds
    ]
    try:
        for out in outs:
            _check_output(out, "--out", (".png", ".svg", ".pdf"))
        for kind, out in zip(kinds, outs):
            try:
                graph(args.db, args.session, kind, out=out)
            except OSError as e:
                return _fail(f"--out {out}: cannot write ({e.strerror or e})")
            print(out)
    except TraceInputError as e:
        return _fail(str(e))
    return 0


def cmd_compare(args: argparse.Namespace) -> int:
    from rantcp.trace.gain import compare
    from rantcp.trace.ingest import TraceInputError

    try:
        if args.csv:
            _check_output(args.csv, "--csv", (".csv",))
        t = compare(args.db, args.by, weights=args.weights, baseline=args.baseline, treatment=args.treatment,
                    metric=args.metric, group_by=args.group_by, bootstrap=args.bootstrap, seed=args.seed)
    except TraceInputError as e:
        return _fail(str(e))
    print(t.to_text())
    if args.csv:
        try:
            t.table.to_csv(args.csv, index=False)
        except OSError as e:
            return _fail(f"--csv {args.csv}: cannot write ({e.strerror or e})")
    return 0


def _check_output(path: Path, what: str, suffixes: tuple[str, ...]) -> None:
    """An output file's checks (rantcp.outdir.check_output_file) as this module's error."""
    from rantcp import ConfigError
    from rantcp.outdir import check_output_file
    from rantcp.trace.ingest import TraceInputError

    try:
        check_output_file(path, what, suffixes)
    except ConfigError as e:
        raise TraceInputError(str(e)) from None
