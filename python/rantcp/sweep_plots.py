"""Plots for sweeps: a metric against an axis (mean and 95 % interval over repetitions, one line
per value of another axis), empirical CDFs, and time series with shaded intervals.

Every function draws into a matplotlib Axes (made when not given) and returns the Figure;
``png_bytes(fig)`` renders it for a report. The 95 % interval is Student's t over the
repetitions of a point (mean ± t·s/√n); a point with one repetition has no interval.
"""

from __future__ import annotations

import io
import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import pandas as pd

from rantcp.sweeps.stats import t975

__all__ = ["cdf", "metric_vs_axis", "png_bytes", "shade_intervals", "timeseries", "timeseries_band"]

_MAX_GROUPS = 10


def _plt() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _axes(ax: Any, size: tuple[float, float] = (7.0, 3.6)) -> tuple[Any, Any]:
    if ax is not None:
        return ax.figure, ax
    fig, ax = _plt().subplots(figsize=size)
    return fig, ax


def png_bytes(fig: Any, dpi: int = 100) -> bytes:
    """The figure as PNG bytes (no timestamp metadata), and close it."""
    buf = io.BytesIO()
    fig.tight_layout()
    fig.savefig(buf, format="png", dpi=dpi, metadata={"Software": None})
    _plt().close(fig)
    return buf.getvalue()


def _is_numeric(values: Iterable[Any]) -> bool:
    vals = [v for v in values if v is not None and not (isinstance(v, float) and math.isnan(v))]
    return bool(vals) and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in vals)


def _ordered_unique(values: Iterable[Any]) -> list[Any]:
    seen: list[Any] = []
    for v in values:
        if v not in seen:
            seen.append(v)
    return seen


def _mean_ci(vals: pd.Series) -> tuple[float, float, int]:
    vals = pd.to_numeric(vals, errors="coerce").dropna()
    n = len(vals)
    if n == 0:
        return float("nan"), float("nan"), 0
    mean = float(vals.mean())
    ci = float(t975(n - 1) * vals.std(ddof=1) / math.sqrt(n)) if n > 1 else 0.0
    return mean, ci, n


def metric_vs_axis(
    df: pd.DataFrame,
    metric: str,
    x: str,
    group: str | None = None,
    ax: Any = None,
    where: Mapping[str, Any] | None = None,
    title: str | None = None,
) -> Any:
    """`metric` against axis `x`: the mean over repetitions with its 95 % interval, one line
    per value of `group`. Only ok runs count; `where` keeps rows whose columns equal the
    given values (fix the other axes). Numeric x gets a numeric (log when it spans ≥ 100×)
    scale with a shaded band; other x values are categories with error bars."""
    fig, ax = _axes(ax)
    d = df[df["status"] == "ok"] if "status" in df else df
    for k, v in (where or {}).items():
        d = d[d[k] == v]
    xs = _ordered_unique(d[x])
    numeric = _is_numeric(xs)
    if numeric:
        xs = sorted(xs)
    groups = _ordered_unique(d[group])[:_MAX_GROUPS] if group else [None]
    width = 0.8 / max(1, len(groups))
    for gi, g in enumerate(groups):
        sub = d if g is None else d[d[group] == g]
        pts = []
        for xi, xv in enumerate(xs):
            mean, ci, n = _mean_ci(sub.loc[sub[x] == xv, metric])
            if n:
                pts.append((xv if numeric else xi + (gi - (len(groups) - 1) / 2) * width, mean, ci))
        if not pts:
            continue
        px, pm, pc = zip(*pts)
        label = None if g is None else f"{group} = {g}"
        if numeric:
            (line,) = ax.plot(px, pm, marker="o", lw=1.5, ms=4, label=label)
            ax.fill_between(px, [m - c for m, c in zip(pm, pc)], [m + c for m, c in zip(pm, pc)], color=line.get_color(), alpha=0.2, lw=0)
        else:
            ax.errorbar(px, pm, yerr=pc, fmt="o", capsize=3, ms=5, label=label)
    if numeric:
        _scale_x(ax, xs)
    else:
        ax.set_xticks(range(len(xs)))
        ax.set_xticklabels([str(v) for v in xs])
    _floor_at_zero(ax, d[metric])
    ax.set_xlabel(x)
    ax.set_ylabel(metric)
    ax.set_title(title or f"{metric} vs {x} (mean, 95 % interval over repetitions)", fontsize="medium")
    ax.grid(alpha=0.3)
    if group:
        ax.legend(fontsize="small")
    return fig


def _scale_x(ax: Any, xs: Sequence[float]) -> None:
    """Log scale when positive values span >= 100x (symmetric-log when 0 is among them)."""
    pos = [float(v) for v in xs if v > 0]
    if len(pos) < 2 or max(pos) / min(pos) < 100 or any(v < 0 for v in xs):
        return
    if len(pos) == len(xs):
        ax.set_xscale("log")
    else:
        ax.set_xscale("symlog", linthresh=min(pos))


def _floor_at_zero(ax: Any, values: Any, scale: float = 1.0) -> None:
    """Keep the y axis near the observed values: from 0 for a quantity that is never negative,
    up to a little above the largest run. An interval wider than that (few repetitions) is cut
    at the frame rather than squashing the lines."""
    vals = pd.to_numeric(pd.Series(list(values)), errors="coerce").dropna() * scale
    if not len(vals):
        return
    lo, hi = float(vals.min()), float(vals.max())
    span = (hi - lo) or abs(hi) or 1.0
    bottom = 0.0 if lo >= 0 else lo - 0.1 * span
    ax.set_ylim(bottom=bottom, top=hi + 0.1 * span)


def _ecdf(vals: Sequence[float]) -> tuple[list[float], list[float]]:
    xs = sorted(v for v in vals if v == v)
    n = len(xs)
    return xs, [(i + 1) / n for i in range(n)]


def cdf(
    data: pd.DataFrame | Mapping[str, Sequence[float]],
    metric: str | None = None,
    group: str | None = None,
    ax: Any = None,
    xlabel: str | None = None,
    title: str | None = None,
) -> Any:
    """Empirical CDF of `metric` over the rows of a DataFrame (one line per value of `group`),
    or of each labelled sample list in a mapping {label: values}."""
    fig, ax = _axes(ax)
    series: dict[str, Sequence[float]] = {}
    if isinstance(data, pd.DataFrame):
        if metric is None:
            raise ValueError("cdf: name the metric column")
        d = data[data["status"] == "ok"] if "status" in data else data
        if group:
            for g in _ordered_unique(d[group])[:_MAX_GROUPS]:
                series[f"{group} = {g}"] = pd.to_numeric(d.loc[d[group] == g, metric], errors="coerce").tolist()
        else:
            series[metric] = pd.to_numeric(d[metric], errors="coerce").tolist()
    else:
        series = {str(k): list(v) for k, v in list(data.items())[:_MAX_GROUPS]}
    for label, vals in series.items():
        xs, ys = _ecdf([float(v) for v in vals])
        if xs:
            ax.step(xs, ys, where="post", label=label, lw=1.5)
    ax.set_ylim(0, 1.02)
    ax.set_ylabel("CDF")
    ax.set_xlabel(xlabel or metric or "value")
    if title:
        ax.set_title(title, fontsize="medium")
    ax.grid(alpha=0.3)
    if len(series) > 1 or group:
        ax.legend(fontsize="small")
    return fig


def shade_intervals(
    ax: Any,
    intervals: Iterable[tuple[float, float] | Sequence[float]],
    label: str | None = None,
    color: str = "0.6",
    alpha: float = 0.25,
) -> None:
    """Shade each [start, end) time interval (seconds) across the whole height of `ax`, e.g.
    the non-line-of-sight periods of a route. One legend entry for all of them."""
    first = True
    for iv in intervals:
        start, end = float(iv[0]), float(iv[1])
        if end <= start:
            continue
        ax.axvspan(start, end, color=color, alpha=alpha, lw=0, label=label if first else None)
        first = False


def timeseries(
    ts: pd.DataFrame,
    y: str,
    by: str | None = "flow",
    x: str = "time_s",
    intervals: Iterable[Sequence[float]] | None = None,
    interval_label: str | None = None,
    ax: Any = None,
    scale: float = 1.0,
    ylabel: str | None = None,
    title: str | None = None,
) -> Any:
    """`y` against time, one line per value of `by`, with optional shaded [start, end) intervals."""
    fig, ax = _axes(ax)
    if intervals:
        shade_intervals(ax, intervals, label=interval_label)
    groups = [(None, ts)] if not by else list(ts.groupby(by, sort=False))[:_MAX_GROUPS]
    for key, g in groups:
        ax.plot(g[x], g[y] * scale, lw=1, label=None if key is None else str(key))
    ax.set_xlabel("time (s)" if x == "time_s" else x)
    ax.set_ylabel(ylabel or y)
    if title:
        ax.set_title(title, fontsize="medium")
    ax.grid(alpha=0.3)
    if (by and len(groups) > 1) or interval_label:
        ax.legend(fontsize="small")
    return fig


def timeseries_band(
    ts: pd.DataFrame,
    y: str,
    by: str,
    x: str = "time_s",
    over: str = "repetition",
    ax: Any = None,
    scale: float = 1.0,
    intervals: Iterable[Sequence[float]] | None = None,
    ylabel: str | None = None,
    title: str | None = None,
) -> Any:
    """Mean of `y` over the runs in `over` at each time, with the 95 % interval shaded; one line
    per value of `by` (e.g. an axis)."""
    fig, ax = _axes(ax)
    if intervals:
        shade_intervals(ax, intervals)
    for key, g in list(ts.groupby(by, sort=False))[:_MAX_GROUPS]:
        agg = g.groupby(x)[y].agg(["mean", "std", "count"]).reset_index()
        half = [
            t975(int(n) - 1) * s / math.sqrt(n) if n > 1 and s == s else 0.0
            for s, n in zip(agg["std"], agg["count"])
        ]
        m = agg["mean"] * scale
        h = pd.Series(half) * scale
        (line,) = ax.plot(agg[x], m, lw=1.2, label=f"{by} = {key}")
        ax.fill_between(agg[x], m - h, m + h, color=line.get_color(), alpha=0.2, lw=0)
    _floor_at_zero(ax, ts[y], scale)
    ax.set_xlabel("time (s)" if x == "time_s" else x)
    ax.set_ylabel(ylabel or y)
    if title:
        ax.set_title(title, fontsize="medium")
    ax.grid(alpha=0.3)
    ax.legend(fontsize="small")
    return fig
