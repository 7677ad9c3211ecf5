"""`make bench-reproduce`: the full seed-004 matrix from scratch, its wall and CPU time.
`make bench` prints the last such measurement (it is too long to run every time).

    python -m rantcp._bench_reproduce --run    # rerun into out/bench/seed-004 (≈ 250 runs of 60 s)
    python -m rantcp._bench_reproduce          # print the last measurement
"""

from __future__ import annotations

import json
import resource
import shutil
import sys
import time
from pathlib import Path
from typing import Any

OUT = Path("out/bench/seed-004")
RESULT = Path("out/bench/seed-004.json")


def _cpu_s() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def run() -> dict[str, Any]:
    from rantcp import reproductions

    if OUT.exists():
        if not (OUT / reproductions.MANIFEST).is_file():
            raise SystemExit(f"{OUT}: not a reproduction folder; move it away")
        shutil.rmtree(OUT)  # our own earlier bench output
    t0, c0 = time.perf_counter(), _cpu_s()
    o = reproductions.reproduce("seed-004", OUT)
    wall, cpu = time.perf_counter() - t0, _cpu_s() - c0
    runs = sum(len(s.df) for s in o.sweeps)
    sim_wall = sum(float(s.df["sim_wall_s"].sum()) for s in o.sweeps)
    res = {
        "runs": runs,
        "failed": o.failed_runs,
        "sweeps_wall_s": round(o.wall_s, 1),
        "total_wall_s": round(wall, 1),
        "cpu_s": round(cpu, 1),
        "simulation_wall_s_summed": round(sim_wall, 1),
        "load_average": o.load,
        "date": time.strftime("%Y-%m-%d %H:%M"),
    }
    RESULT.write_text(json.dumps(res, indent=2) + "\n")
    return res


def show(res: dict[str, Any]) -> None:
    load = res["load_average"]
    cpus = int(load.get("cpus") or 1)
    print(
        f"seed-004 reproduction ({res['date']}): {res['runs']} runs of the full matrix in "
        f"{res['sweeps_wall_s'] / 60:.1f} min wall (report included: {res['total_wall_s'] / 60:.1f} min); "
        f"{res['cpu_s'] / 60:.1f} CPU-min, i.e. {res['cpu_s'] / 60 / cpus:.1f} min on {cpus} idle cores; "
        f"load average {load.get('start')} -> {load.get('end')}"
    )


def main(argv: list[str]) -> int:
    if "--run" in argv:
        show(run())
        return 0
    if not RESULT.is_file():
        print("seed-004 reproduction: not measured yet (make bench-reproduce, ≈ 25 min)")
        return 0
    show(json.loads(RESULT.read_text()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
