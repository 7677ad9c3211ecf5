"""Summaries over repetitions: mean, Student-t 95 % interval and n per point, and the interval
a figure or table shows (see ``interval``)."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

__all__ = ["MIN_REPETITIONS_FOR_INTERVAL", "interval", "interval_text", "summarise", "t975"]

_T975 = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145, 2.131,
         2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042]


def t975(dof: int) -> float:
    """Two-sided 95 % Student t quantile (t_{0.975, dof}); Cornish–Fisher beyond the table."""
    if dof < 1:
        return float("nan")
    if dof <= len(_T975):
        return _T975[dof - 1]
    z = 1.959964
    return z + (z**3 + z) / (4 * dof) + (5 * z**5 + 16 * z**3 + 3 * z) / (96 * dof**2)


def summarise(df: Any, metrics: Sequence[str], by: Sequence[str]) -> Any:
    """Mean, 95 % confidence half-width (Student t over repetitions) and n of each metric per group.

    Only rows with status "ok" count. Columns: by..., n, <m>_mean, <m>_ci95 for each metric.
    """
    import pandas as pd

    ok = df[df["status"] == "ok"] if "status" in df else df
    by = list(by)
    rows = []
    groups = ok.groupby(by, sort=False, dropna=False) if by else [((), ok)]
    for key, g in groups:
        key = key if isinstance(key, tuple) else (key,)
        row: dict[str, Any] = dict(zip(by, key))
        row["n"] = len(g)
        for m in metrics:
            vals = pd.to_numeric(g[m], errors="coerce").dropna() if m in g else pd.Series([], dtype=float)
            n = len(vals)
            row[f"{m}_mean"] = float(vals.mean()) if n else float("nan")
            row[f"{m}_ci95"] = float(t975(n - 1) * vals.std(ddof=1) / math.sqrt(n)) if n > 1 else float("nan")
        rows.append(row)
    return pd.DataFrame(rows)


MIN_REPETITIONS_FOR_INTERVAL = 5
"""Below this many repetitions figures show every repetition's value instead of an interval:
Student's t with n = 2 has t = 12.7, a band wider than anything physical (issue 20)."""


def interval(values: Any, lower: float | None = None, upper: float | None = None) -> tuple[float, float, float, int]:
    """(mean, low, high, n) of the finite values: low/high the mean ± t·s/√n clipped to the
    quantity's physical bounds [lower, upper], or NaN when n < MIN_REPETITIONS_FOR_INTERVAL
    (show the values themselves then)."""
    vals = [float(v) for v in values if v is not None and v == v and math.isfinite(float(v))]
    n = len(vals)
    if n == 0:
        return float("nan"), float("nan"), float("nan"), 0
    mean = sum(vals) / n
    if n < MIN_REPETITIONS_FOR_INTERVAL:
        return mean, float("nan"), float("nan"), n
    sd = math.sqrt(sum((v - mean) ** 2 for v in vals) / (n - 1))
    half = t975(n - 1) * sd / math.sqrt(n)
    lo, hi = mean - half, mean + half
    if lower is not None:
        lo = max(lo, lower)
    if upper is not None:
        hi = min(hi, upper)
    return mean, lo, hi, n


def interval_text(values: Any, lower: float | None = None, upper: float | None = None, fmt: Callable[[float], str] = "{:.4g}".format) -> str:
    """A table cell for the values of one point: "mean [low, high]" (the clipped 95 % interval,
    n >= 5), "mean (min–max)" (2 to 4 values), "mean" (one), "–" (none)."""
    vals = [float(v) for v in values if v is not None and v == v and math.isfinite(float(v))]
    mean, lo, hi, n = interval(vals, lower, upper)
    if not n:
        return "–"
    if lo == lo:
        return f"{fmt(mean)} [{fmt(lo)}, {fmt(hi)}]"
    if n > 1:
        return f"{fmt(mean)} ({fmt(min(vals))}–{fmt(max(vals))})"
    return fmt(mean)
