"""`make bench`, trace part: end-to-end ingest speed of a synthetic 10-million-packet capture into
DuckDB (parse, sessions, per-packet flags, insert, commit), and tshark's time for the same
per-packet TCP analysis of the same file, side by side.

    python -m rantcp.trace._bench [--packets N] [--no-tshark] [--keep]

The capture (bench-out/trace-synthetic.pcap, ~1 GB for 10 M packets: 64 interleaved bulk
downloads, 1 % loss, 96-byte snapshot length) is written once and reused. The best of
`--repeat` ingests is reported, as is usual for benchmarks on a shared machine, with the load
average at the start.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--packets", type=int, default=10_000_000)
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--no-tshark", action="store_true", help="skip the tshark comparison")
    ap.add_argument("--out", type=Path, default=Path("bench-out"))
    args = ap.parse_args()

    import rantcp.trace as trace
    from rantcp import _native

    args.out.mkdir(parents=True, exist_ok=True)
    pcap = args.out / f"trace-synthetic-{args.packets}.pcap"
    if not pcap.exists():
        t = time.perf_counter()
        _native.trace_write_synthetic(str(pcap), args.packets)
        print(f"wrote {pcap} ({pcap.stat().st_size / 1e9:.2f} GB) in {time.perf_counter() - t:.1f} s")
    import duckdb  # noqa: F401  (imports are not part of the ingest)
    import pyarrow  # noqa: F401

    for compress in (True, False):
        _ingest(trace, pcap, args, compress)
    _tshark(pcap, args, _LAST)
    return 0


_LAST: dict[str, float] = {}


def _ingest(trace: Any, pcap: Path, args: argparse.Namespace, compress: bool) -> None:
    load = os.getloadavg()[0]
    best = None
    cpu = 0.0
    for _ in range(max(args.repeat, 1)):
        db = args.out / "trace-bench.duckdb"
        for f in (db, Path(str(db) + ".wal")):
            f.unlink(missing_ok=True)
        r0 = resource.getrusage(resource.RUSAGE_SELF)
        t = time.perf_counter()
        rep = trace.ingest([pcap], db, compress=compress)
        wall = time.perf_counter() - t
        r1 = resource.getrusage(resource.RUSAGE_SELF)
        assert rep.files[0].status == "ingested", rep.files[0]
        if best is None or wall < best:
            best = wall
            cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
    assert best is not None
    n = rep.packets
    size = db.stat().st_size / 1e6
    mode = "compressed" if compress else "--uncompressed"
    if compress:
        _LAST.update(wall=best, cpu=cpu, packets=n)
    print(f"trace ingest  {n:,} packets → DuckDB ({mode}, {size:.0f} MB): {best:.2f} s wall, {n / best / 1e6:.2f} M packets/s "
          f"(best of {args.repeat}; load average {load:.2f} on {os.cpu_count()} cores); "
          f"{cpu:.2f} CPU s, {n / cpu / 1e6:.2f} M packets per CPU-second")


def _tshark(pcap: Path, args: argparse.Namespace, last: dict[str, float]) -> None:
    best, cpu, n = last["wall"], last["cpu"], int(last["packets"])
    tshark = shutil.which("tshark")
    if tshark and not args.no_tshark:
        cmd = [tshark, "-n", "-r", str(pcap), "-T", "fields", "-e", "frame.number", "-e", "tcp.stream",
               "-e", "tcp.analysis.retransmission", "-e", "tcp.analysis.duplicate_ack", "-e", "tcp.analysis.out_of_order"]
        c0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        t = time.perf_counter()
        with open(os.devnull, "w") as devnull:
            subprocess.run(cmd, stdout=devnull, stderr=subprocess.DEVNULL, check=True)
        tw = time.perf_counter() - t
        c1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        tcpu = (c1.ru_utime - c0.ru_utime) + (c1.ru_stime - c0.ru_stime)
        print(f"tshark        same file, per-packet tcp.analysis fields: {tw:.1f} s wall, {tcpu:.1f} CPU s, "
              f"{n / tw / 1e6:.3f} M packets/s → rantcp (compressed) is {tw / best:.0f}x faster (wall), {tcpu / cpu:.0f}x (CPU)")


if __name__ == "__main__":
    raise SystemExit(main())
