"""Throughput-gain tables between two values of a tag (e.g. optimisation off → on), with the
dissertation's weighted aggregation (§5.3.2, Figure 29): sessions are grouped into cells by the
classes of the weighting factors (e.g. file size ≤1 MB / 5 MB / ≥10 MB weighted 45/30/25 %, RF
condition NC/MC/FC weighted 25/30/45 %); each cell's gain is mean(treatment) / mean(baseline) − 1
of the metric; a group's (e.g. a region's) gain is the weight-averaged gain of its cells that have
sessions in both arms (the weights renormalised over those cells); "overall" is the mean of the
groups' gains. Confidence intervals: percentile bootstrap, resampling sessions within each cell
and arm (seeded, so the table is reproducible).

Weights file (TOML):

    group_by = "region"                  # optional: one row per value, plus "overall"
    [weights.file_size]                  # a tag; classes with a weight and the tag values in them
    small = { weight = 0.45, values = ["0.5MB", "1MB"] }
    medium = { weight = 0.30, values = ["5MB"] }
    large = { weight = 0.25, values = ["10MB", "20MB"] }
    [weights.site]
    NC = { weight = 0.25 }               # values default to [class name]
    MC = { weight = 0.30 }
    FC = { weight = 0.45 }
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from rantcp.trace.ingest import TraceInputError
from rantcp.trace.sessions import sessions


@dataclass
class Factor:
    tag: str
    value_class: dict[str, str]
    weight: dict[str, float]


@dataclass
class Weights:
    factors: list[Factor]
    group_by: str | None = None


def read_weights(path: str | Path) -> Weights:
    p = Path(path)
    if not p.is_file():
        raise TraceInputError(f"weights file {str(p)!r} not found")
    try:
        doc = tomllib.loads(p.read_text())
    except tomllib.TOMLDecodeError as e:
        raise TraceInputError(f"weights file {str(p)!r}: {e}") from None
    unknown = set(doc) - {"weights", "group_by"}
    if unknown:
        raise TraceInputError(f"weights file {str(p)!r}: unknown key {sorted(unknown)[0]!r} (allowed: weights, group_by)")
    group_by = doc.get("group_by")
    if group_by is not None and not isinstance(group_by, str):
        raise TraceInputError(f"weights file {str(p)!r}: group_by must be a tag name")
    factors = []
    for tag, classes in (doc.get("weights") or {}).items():
        if not isinstance(classes, dict) or not classes:
            raise TraceInputError(f"weights file {str(p)!r}: weights.{tag} must be a table of classes")
        vc: dict[str, str] = {}
        w: dict[str, float] = {}
        for cls, spec in classes.items():
            if isinstance(spec, (int, float)):
                spec = {"weight": spec}
            if not isinstance(spec, dict) or not isinstance(spec.get("weight"), (int, float)) or spec["weight"] < 0:
                raise TraceInputError(f"weights file {str(p)!r}: weights.{tag}.{cls}.weight must be a number >= 0")
            w[cls] = float(spec["weight"])
            for v in spec.get("values", [cls]):
                if str(v) in vc:
                    raise TraceInputError(f"weights file {str(p)!r}: value {v!r} of tag {tag!r} is in two classes")
                vc[str(v)] = cls
        factors.append(Factor(tag, vc, w))
    return Weights(factors, group_by)


MAX_BOOTSTRAP = 100_000
"""Most bootstrap resamples: each cell draws ``bootstrap × sessions`` indices at once."""


@dataclass
class GainTable:
    """`table`: one row per group (and "overall") with the weighted gain (%), its bootstrap CI and
    the sessions behind it; `cells`: the per-cell means and gains."""

    table: Any
    cells: Any
    baseline: str
    treatment: str
    metric: str
    dropped: int

    def to_text(self) -> str:
        lines = [
            f"{self.metric}: gain of {self.treatment!r} over {self.baseline!r} (weighted; 95 % bootstrap CI)",
            self.table.to_string(index=False, float_format=lambda v: f"{v:.1f}"),
        ]
        if self.dropped:
            lines.append(f"({self.dropped} sessions outside every weight class were left out)")
        return "\n".join(lines)


def compare(
    db: Any,
    by: str,
    *,
    weights: str | Path | Weights | None = None,
    baseline: str | None = None,
    treatment: str | None = None,
    metric: str = "throughput_bps",
    group_by: str | None = None,
    bootstrap: int = 1000,
    seed: int = 1,
    where: str | None = None,
) -> GainTable:
    """Gain table of `metric` between the `baseline` and `treatment` values of tag `by`."""
    import pandas as pd

    if isinstance(bootstrap, bool) or not isinstance(bootstrap, int) or not 0 <= bootstrap <= MAX_BOOTSTRAP:
        raise TraceInputError(f"--bootstrap {bootstrap}: expected a whole number of resamples from 0 (none) to {MAX_BOOTSTRAP}")
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**64:
        raise TraceInputError(f"--seed {seed}: expected a whole number from 0 to 2^64 - 1")
    w = read_weights(weights) if isinstance(weights, (str, Path)) else (weights or Weights([]))
    group = group_by or w.group_by
    df = sessions(db, where=where)
    for col in [by, metric] + ([group] if group else []) + [f.tag for f in w.factors]:
        if col not in df.columns:
            raise TraceInputError(f"no tag or column {col!r} in the sessions (tags: {', '.join(_tags(df)) or 'none'})")
    if not (pd.api.types.is_numeric_dtype(df[metric]) or pd.api.types.is_bool_dtype(df[metric])):
        raise TraceInputError(f"--metric {metric}: not a numeric sessions column (e.g. throughput_bps, retx_ratio, rtt_median_ms)")
    values = sorted(str(v) for v in df[by].dropna().unique())
    if baseline is None or treatment is None:
        if len(values) != 2:
            raise TraceInputError(f"--by {by}: give --baseline and --treatment (values: {', '.join(values) or 'none'})")
        baseline = baseline or next(v for v in values if v != treatment)
        treatment = treatment or next(v for v in values if v != baseline)
    for v in (baseline, treatment):
        if v not in values:
            raise TraceInputError(f"--by {by}: no session has {by}={v!r} (values: {', '.join(values)})")
    df = df[df[by].astype(str).isin([baseline, treatment]) & df[metric].notna()].copy()
    n0 = len(df)
    for f in w.factors:
        df[f"_cls_{f.tag}"] = df[f.tag].astype(str).map(f.value_class)
        df = df[df[f"_cls_{f.tag}"].notna()]
    dropped = n0 - len(df)
    df["_group"] = df[group].astype(str) if group else "all"
    cell_cols = ["_group"] + [f"_cls_{f.tag}" for f in w.factors]
    rng = np.random.default_rng(seed)

    cells = []
    for key, g in df.groupby(cell_cols, sort=True):
        key = key if isinstance(key, tuple) else (key,)
        b = g.loc[g[by].astype(str) == baseline, metric].to_numpy(float)
        t = g.loc[g[by].astype(str) == treatment, metric].to_numpy(float)
        weight = float(np.prod([f.weight[c] for f, c in zip(w.factors, key[1:])])) if w.factors else 1.0
        row = {"group": key[0], **{f.tag: c for f, c in zip(w.factors, key[1:])}, "weight": weight,
               "n_baseline": len(b), "n_treatment": len(t),
               "mean_baseline": b.mean() if len(b) else np.nan, "mean_treatment": t.mean() if len(t) else np.nan}
        ok = len(b) and len(t) and b.mean() > 0
        row["gain_pct"] = (t.mean() / b.mean() - 1) * 100 if ok else np.nan
        if ok and bootstrap:
            bb = b[rng.integers(0, len(b), (bootstrap, len(b)))].mean(axis=1)
            tb = t[rng.integers(0, len(t), (bootstrap, len(t)))].mean(axis=1)
            with np.errstate(divide="ignore", invalid="ignore"):
                row["_boot"] = (tb / bb - 1) * 100
        else:
            row["_boot"] = None
        cells.append(row)
    cells_df = pd.DataFrame(cells)

    rows = []
    group_boot = []
    for gname, g in (cells_df.groupby("group", sort=True) if len(cells_df) else []):
        g = g[g.gain_pct.notna()]
        if not len(g) or g.weight.sum() <= 0:
            continue
        wts = g.weight.to_numpy() / g.weight.sum()
        gain = float((g.gain_pct.to_numpy() * wts).sum())
        boot = np.stack(g["_boot"].to_list()) if bootstrap else None
        gb = (boot * wts[:, None]).sum(axis=0) if boot is not None else None
        group_boot.append(gb)
        rows.append(_row(str(gname), gain, gb, len(g), int(g.n_baseline.sum()), int(g.n_treatment.sum())))
    if rows and group:
        gains = np.array([r["gain_pct"] for r in rows])
        ob = np.mean(np.stack([b for b in group_boot if b is not None]), axis=0) if bootstrap else None
        rows.append(_row("overall", float(gains.mean()), ob, sum(r["cells"] for r in rows),
                         sum(r["sessions_baseline"] for r in rows), sum(r["sessions_treatment"] for r in rows)))
    table = pd.DataFrame(rows, columns=["group", "gain_pct", "ci_low_pct", "ci_high_pct", "cells", "sessions_baseline", "sessions_treatment"])
    if len(cells_df):
        cells_df = cells_df.drop(columns="_boot")
    return GainTable(table, cells_df, baseline, treatment, metric, dropped)


def _row(name: str, gain: float, boot: Any, cells: int, nb: int, nt: int) -> dict[str, Any]:
    lo = hi = np.nan
    if boot is not None:
        finite = boot[np.isfinite(boot)]
        if len(finite):
            lo, hi = np.percentile(finite, [2.5, 97.5])
    return {"group": name, "gain_pct": gain, "ci_low_pct": lo, "ci_high_pct": hi, "cells": cells,
            "sessions_baseline": nb, "sessions_treatment": nt}


def _tags(df: Any) -> list[str]:
    from rantcp.trace.schema import SESSION_COLUMNS

    known = {n for n, _ in SESSION_COLUMNS} | {"session_id", "capture_id", "path"}
    return [c for c in df.columns if c not in known]
