"""`make bench-reproduce`: the full seed-004 matrix from scratch, its wall time and event rate.
`make bench` prints the last such measurement (it is too long to run every time).

    python -m rantcp._bench_reproduce --run    # rerun into out/bench/seed-004 (421 runs of 60 s)
    python -m rantcp._bench_reproduce          # print the last measurement
"""

from __future__ import annotations

import json
import shutil
import sys
import time
from pathlib import Path
from typing import Any

OUT = Path("out/bench/seed-004")
RESULT = Path("out/bench/seed-004.json")


def run() -> dict[str, Any]:
    from rantcp import reproductions

    if OUT.exists():
        if not (OUT / reproductions.MANIFEST).is_file():
            raise SystemExit(f"{OUT}: not a reproduction folder; move it away")
        shutil.rmtree(OUT)  # our own earlier bench output
    t0 = time.perf_counter()
    o = reproductions.reproduce("seed-004", OUT)
    wall = time.perf_counter() - t0
    events = sum(int(s.df["events"].sum()) for s in o.sweeps)
    res = {
        "runs": sum(len(s.df) for s in o.sweeps),
        "failed": o.failed_runs,
        "sweeps_wall_s": round(o.wall_s, 1),
        "total_wall_s": round(wall, 1),
        "events": events,
        "simulation_wall_s_summed": round(sum(float(s.df["sim_wall_s"].sum()) for s in o.sweeps), 1),
        "load_average": o.load,
        "date": time.strftime("%Y-%m-%d %H:%M"),
    }
    RESULT.parent.mkdir(parents=True, exist_ok=True)
    RESULT.write_text(json.dumps(res, indent=2) + "\n")
    return res


def show(res: dict[str, Any]) -> None:
    load = res["load_average"]
    print(
        f"seed-004 reproduction ({res['date']}): {res['runs']} runs ({res['failed']} failed) in "
        f"{res['sweeps_wall_s'] / 60:.1f} min wall, {res['total_wall_s'] / 60:.1f} min with figures and claims; "
        f"{res['events'] / 1e9:.2f} G events, {res['events'] / res['sweeps_wall_s'] / 1e6:.2f} M events/s over "
        f"{load.get('cpus')} CPUs; load average {load.get('start')} -> {load.get('end')}"
    )


def main(argv: list[str]) -> int:
    if "--run" in argv:
        show(run())
        return 0
    if not RESULT.is_file():
        print("seed-004 reproduction: not measured here yet (make bench-reproduce; README: 13.8 min on 2 shared cores)")
        return 0
    show(json.loads(RESULT.read_text()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
