"""Reproductions: a seed's evaluation rerun with one command (design.md §9).

    rantcp reproduce --list
    rantcp reproduce seed-004 --out out/seed-004 [--quick] [--workers N | --dask ADDRESS]

    >>> from rantcp import reproductions
    >>> reproductions.names()
    ['seed-004']
    >>> o = reproductions.reproduce("seed-004", "out/seed-004", quick=True)
    >>> o.claims[0].verdict

A reproduction is a folder of data under ``rantcp/reproductions/`` (see
:mod:`rantcp.reproductions.spec`): ordinary sweep files run with the sweep machinery
(``rantcp.sweep``: resumable, local cores or Dask), claims whose verdicts are computed from the
runs (:mod:`~rantcp.reproductions.claims`), and figures in the seed's layout drawn from SQL
queries (:mod:`~rantcp.reproductions.figures`). The output folder::

    OUT/reproduction.json     name, mode (full / quick), runs and wall time of the last invocation
    OUT/sweeps/<sweep>/       each sweep's store (resumed on the next invocation)
    OUT/figures/<id>.png      every figure; <id>.csv the data drawn
    OUT/claims.csv, claims.md, claims.json
    OUT/report.html           one self-contained page with all of it

Quick mode (``--quick``) applies the reproduction's [quick] overlay (fewer repetitions, shorter
runs) to every sweep; its numbers exercise the machinery and are not the reproduction. Quick
and full results never share a folder.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rantcp._native import ConfigError
from rantcp.reproductions.spec import Reproduction, SweepDef, config_value, load_folder

__all__ = ["Outcome", "Reproduction", "load", "names", "reproduce", "sweep_data"]

MANIFEST = "reproduction.json"
SweepProgress = Callable[[str, int, int, int], None]
"""progress(sweep name, ok, failed, total) over the runs this invocation has to do."""


def _root() -> Path:
    return Path(__file__).resolve().parent


def _folders() -> dict[str, Path]:
    out = {}
    for d in sorted(_root().iterdir()):
        f = d / "reproduction.toml"
        if f.is_file():
            import tomllib

            name = tomllib.loads(f.read_text()).get("reproduction", {}).get("name", d.name)
            out[str(name)] = d
    return out


def names() -> list[str]:
    """The reproductions shipped with rantcp."""
    return list(_folders())


def load(name: str | os.PathLike[str]) -> Reproduction:
    """A shipped reproduction by name, or a reproduction folder by path."""
    p = Path(name)
    if (p / "reproduction.toml").is_file():
        return load_folder(p)
    folders = _folders()
    if str(name) not in folders:
        raise ConfigError(f"reproduction {str(name)!r} not found (available: {', '.join(folders) or 'none'})")
    return load_folder(folders[str(name)])


def _flatten(table: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in table.items():
        if isinstance(v, Mapping):
            out.update(_flatten(v, f"{prefix}{k}."))
        else:
            out[f"{prefix}{k}"] = v
    return out


def sweep_data(sd: SweepDef, repro: Reproduction, quick: bool) -> dict[str, Any]:
    """The sweep as rantcp.sweep takes it: named, scenario path absolute, quick overlay applied."""
    sweep = dict(sd.data["sweep"])
    sweep["name"] = sd.name
    scen = sweep.get("scenario")
    if isinstance(scen, str) and not scen.startswith("builtin:") and not Path(scen).is_absolute():
        sweep["scenario"] = str((sd.path.parent / scen).resolve())
    fixed = _flatten(sd.data.get("set", {}))
    axes = dict(sd.data.get("axes", {}))
    if quick:
        q = repro.quick
        if "seeds" in sweep:
            sweep["seeds"] = list(sweep["seeds"])[: q.repetitions]
        else:
            sweep["repetitions"] = min(int(sweep.get("repetitions", 1)), q.repetitions)
        for k, v in q.axes.items():
            if k in axes:
                axes[k] = list(v)
        for k, v in _flatten(q.set).items():
            if k in axes:
                raise ConfigError(f"{repro.name}: quick.set.{k} is an axis of sweep {sd.name!r}")
            fixed[k] = v
    return {"sweep": sweep, "set": fixed, "axes": axes}


@dataclass
class SweepRun:
    name: str
    folder: Path
    df: Any
    """The sweep's runs table (this reproduction's runs only)."""
    ran: int
    skipped: int
    wall_s: float
    data: dict[str, Any]


@dataclass
class Outcome:
    """What `reproduce` did and found."""

    repro: Reproduction
    out: Path
    quick: bool
    sweeps: list[SweepRun]
    claims: list[Any]
    """ClaimResult per claim."""
    figures: list[Any]
    """Drawn per figure."""
    wall_s: float
    load: dict[str, Any] = field(default_factory=dict)

    @property
    def failed_runs(self) -> int:
        return int(sum(int((s.df["status"] != "ok").sum()) for s in self.sweeps))

    @property
    def errors(self) -> list[str]:
        return [f"claim {c.claim.id}: {c.message}" for c in self.claims if c.verdict == "error"] + [
            f"figure {d.figure.id}: {d.error}" for d in self.figures if d.error
        ]


def _check_out(out: Path, repro: Reproduction, quick: bool) -> None:
    mode = "quick" if quick else "full"
    m = out / MANIFEST
    if m.is_file():
        try:
            old = json.loads(m.read_text())
        except (OSError, ValueError):
            old = {}
        if old.get("name") != repro.name or old.get("mode") != mode:
            raise ConfigError(
                f"{out}: holds the {old.get('mode', '?')} reproduction {old.get('name')!r}; "
                f"use another --out for the {mode} {repro.name!r}"
            )
    elif out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise ConfigError(f"{out}: exists and is not a reproduction folder (no {MANIFEST}); choose another --out")


def _write(path: Path, data: bytes | str) -> None:
    """Write through a temporary name, so a reader never sees half a file."""
    tmp = path.with_name(f".{path.name}.tmp")
    if isinstance(data, str):
        tmp.write_text(data)
    else:
        tmp.write_bytes(data)
    os.replace(tmp, path)


def _loadavg() -> list[float]:
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return []


def reproduce(
    name: str | os.PathLike[str] | Reproduction,
    out: str | os.PathLike[str],
    quick: bool = False,
    workers: int | None = None,
    dask: Any = None,
    progress: SweepProgress | None = None,
) -> Outcome:
    """Run the reproduction's sweeps (skipping finished runs), then write figures, claims and
    report.html into `out`. Raises ConfigError for bad input before anything is run."""
    import rantcp

    repro = name if isinstance(name, Reproduction) else load(name)
    out = Path(out)
    _check_out(out, repro, quick)
    specs = [(sd, sweep_data(sd, repro, quick)) for sd in repro.sweeps]
    configs: dict[str, dict[str, Any]] = {}
    for sd, data in specs:  # every sweep's base is checked before the first run
        configs[sd.name] = rantcp.validate(data["sweep"]["scenario"], data["set"])
    out.mkdir(parents=True, exist_ok=True)
    _write(out / MANIFEST, json.dumps({"name": repro.name, "mode": "quick" if quick else "full"}, indent=2) + "\n")

    t0 = time.perf_counter()
    load0 = _loadavg()
    runs: list[SweepRun] = []
    for sd, data in specs:
        folder = out / "sweeps" / sd.name
        cb = None if progress is None else (lambda ok, failed, total, _n=sd.name: progress(_n, ok, failed, total))
        done_before = _recorded(folder)
        ts = time.perf_counter()
        df = rantcp.sweep(data, out=folder, workers=workers, dask=dask, progress=cb)
        ran = len(df) - len(done_before & set(df["point_id"]))
        runs.append(SweepRun(sd.name, folder, df, ran, len(df) - ran, time.perf_counter() - ts, data))
    sweep_wall = time.perf_counter() - t0
    load1 = _loadavg()

    from rantcp.reproductions import claims as cl

    outcome = render(repro, out, quick, runs, configs)
    outcome.wall_s = sweep_wall
    outcome.load = {"start": load0, "end": load1, "cpus": os.cpu_count()}
    manifest = {
        "name": repro.name,
        "mode": "quick" if quick else "full",
        "rantcp_version": rantcp.__version__,
        "runs": sum(len(s.df) for s in runs),
        "runs_this_invocation": sum(s.ran for s in runs),
        "sweep_wall_s": round(sweep_wall, 3),
        "load_average": outcome.load,
        "workers": workers,
        "dask": dask if isinstance(dask, str) else None,
        "sweeps": {s.name: {"runs": len(s.df), "ran": s.ran, "failed": int((s.df["status"] != "ok").sum()), "wall_s": round(s.wall_s, 3)} for s in runs},
        "verdicts": _count([c.verdict for c in outcome.claims]),
        "noise": cl.noise_counts(outcome.claims),
    }
    _write(out / MANIFEST, json.dumps(manifest, indent=2) + "\n")
    from rantcp.reproductions import page

    _write(out / "report.html", page.render(outcome, manifest))
    return outcome


def _recorded(folder: Path) -> set[str]:
    """Point ids already recorded in a sweep folder (empty when there is none yet)."""
    if not (folder / "sweep.duckdb").is_file():
        return set()
    import rantcp

    try:
        return set(rantcp.load(folder).df["point_id"])
    except ConfigError:
        # A sweep stopped before its tables existed has recorded nothing; anything else wrong
        # with the folder is said by the sweep that runs next.
        return set()


def _count(items: list[str]) -> dict[str, int]:
    out: dict[str, int] = {}
    for i in items:
        out[i] = out.get(i, 0) + 1
    return out


def results_of(repro: Reproduction, runs: list[SweepRun], configs: Mapping[str, Mapping[str, Any]]) -> Any:
    """The reproduction's Results (runs table, time series, prelude) from its sweeps."""
    import pandas as pd

    import rantcp
    from rantcp.reproductions.results import Results, union_runs

    paths: list[str] = []
    for s in runs:
        for p in [*s.data["set"], *s.data["axes"]]:
            if p not in paths and p != "output.plots":
                paths.append(p)
    parts = []
    for s in runs:
        params = {p: (s.data["set"][p] if p in s.data["set"] else config_value(configs[s.name], p)) for p in paths if p not in s.data["axes"]}
        parts.append((s.name, s.df, params))
    table = union_runs(parts)
    ts: dict[str, pd.DataFrame] = {}
    for name in repro.timeseries:
        frames = []
        for s in runs:
            ok = s.df[s.df["status"] == "ok"]["point_id"].tolist()
            if not ok:
                continue
            t = rantcp.load(s.folder).timeseries(name, ids=ok)
            if not len(t):
                continue
            keys = ["point_id", "repetition", "seed", *s.data["axes"]]
            run = [f"{s.name}/{p}" for p in t["point_id"]]
            t = t.drop(columns=[k for k in keys if k in t.columns])
            t.insert(0, "run", run)
            frames.append(t)
        ts[name] = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame({"run": pd.Series([], dtype=str), "time_s": pd.Series([], dtype=float)})
    return Results(table, ts, repro.prelude)


def _json_row(row: dict[str, Any]) -> dict[str, Any]:
    return {k: None if isinstance(v, float) and v != v else v for k, v in row.items()}


def render(repro: Reproduction, out: Path, quick: bool, runs: list[SweepRun], configs: Mapping[str, Mapping[str, Any]]) -> Outcome:
    """Evaluate the claims and draw the figures from finished sweeps; write them into `out`."""
    from rantcp.reproductions import claims as cl
    from rantcp.reproductions import figures as fg

    res = results_of(repro, runs, configs)
    try:
        verdicts = cl.evaluate_all(repro.claims, res, quick)
        drawn = [fg.draw(res, f, repro, configs) for f in repro.figures]
    finally:
        res.close()
    figdir = out / "figures"
    figdir.mkdir(parents=True, exist_ok=True)
    for d in drawn:
        if d.png is not None:
            _write(figdir / f"{d.figure.id}.png", d.png)
        if d.data is not None:
            _write(figdir / f"{d.figure.id}.csv", d.data.to_csv(index=False))
    t = cl.table(verdicts)
    _write(out / "claims.csv", t.to_csv(index=False))
    _write(out / "claims.md", cl.markdown(verdicts))
    # From the rows themselves: a DataFrame turns a missing number into NaN, which is not JSON.
    _write(out / "claims.json", json.dumps([_json_row(r.as_row()) for r in verdicts], indent=1) + "\n")
    return Outcome(repro, out, quick, runs, verdicts, drawn, 0.0)
