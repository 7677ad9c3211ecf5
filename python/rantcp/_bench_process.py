"""`make bench`: what a user waits for, whole process, beside the simulation's own time and
ns-3's published figures for the same scenarios (issue 20).

Each command runs as a fresh process (``.venv/bin/rantcp ...``, default outputs: summary.json
and Parquet, plots off as by default), best of ``REPEATS`` wall-clock times against a noisy
machine. "simulation" is the core's own loop (summary.json → wall.seconds) of the same run.
The ratios are ns-3's time over ours: how many times faster the whole process is, and the
simulation alone.

ns-3 reference (ns-3.44 on this project's reference machine, as given in issue 20): p2p-bulk
30 s simulated 8.3 s; LENA LTE 10 s with 1 UE 16.5 s, with 40 UEs 45.6 s.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPEATS = 5

CASES: list[tuple[str, list[str], float | None]] = [
    ("rantcp --version", ["--version"], None),
    ("run p2p-bulk (30 s)", ["run", "builtin:p2p-bulk", "--quiet"], 8.3),
    ("run lte-cell 1 UE (10 s)", ["run", "builtin:lte-cell", "--set", "ues=1", "--quiet"], 16.5),
    ("run lte-cell 40 UEs (10 s)", ["run", "builtin:lte-cell", "--set", "ues=40", "--quiet"], 45.6),
]


def _rantcp() -> list[str]:
    exe = Path(sys.executable).with_name("rantcp")
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "rantcp.cli"]


def measure(args: list[str], out: Path | None) -> tuple[float, float | None]:
    """(best whole-process wall s, the simulation loop's own s of that run)."""
    best, sim = float("inf"), None
    for _ in range(REPEATS):
        cmd = [*_rantcp(), *args] + (["--out", str(out)] if out is not None else [])
        t0 = time.perf_counter()
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wall = time.perf_counter() - t0
        if wall < best:
            best = wall
            if out is not None:
                sim = json.loads((out / "summary.json").read_text())["wall"]["seconds"]
    return best, sim


def main() -> None:
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"whole process, best of {REPEATS} (load average {load:.1f} on {os.cpu_count()} cores):")
    print(f"  {'case':<28} {'process':>9} {'simulation':>11} {'ns-3':>7} {'ns-3 / process':>15} {'ns-3 / simulation':>18}")
    tmp = Path(tempfile.mkdtemp(prefix="rantcp-bench-process-"))
    try:
        for i, (name, args, ns3) in enumerate(CASES):
            out = tmp / f"run{i}" if args[0] == "run" else None
            wall, sim = measure(args, out)
            sim_text = f"{sim:.3f} s" if sim is not None else "-"
            ns3_text = f"{ns3:.1f} s" if ns3 is not None else "-"
            ratio = f"{ns3 / wall:.0f}x" if ns3 is not None else "-"
            sim_ratio = f"{ns3 / sim:.0f}x" if ns3 is not None and sim else "-"
            print(f"  {name:<28} {wall:7.3f} s {sim_text:>11} {ns3_text:>7} {ratio:>15} {sim_ratio:>18}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
