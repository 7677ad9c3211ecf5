"""Plots for sweeps: a metric against an axis (mean over repetitions with its 95 % interval,
one line per value of another axis), empirical CDFs, and time series with shaded intervals.

Every function draws into a matplotlib Axes (made when not given, with matplotlib's object API:
no pyplot state) and returns the Figure; ``png_bytes(fig)`` renders it for a report. Axes are
labelled from ``rantcp.labels`` (``goodput (Mbit/s)``, not ``goodput_mbps``); loss-like axes are
logarithmic.

Intervals (``rantcp.sweeps.stats.interval``): with at least
``MIN_REPETITIONS_FOR_INTERVAL`` (5) repetitions, the mean ± Student t·s/√n, clipped to the
quantity's physical bounds (goodput ≥ 0, a fairness index ≤ 1); with fewer, every repetition's
value is drawn as a dot beside the mean, since a t interval of 2 or 3 values is wider than
anything it could mean.
"""

from __future__ import annotations

import io
import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import pandas as pd

from rantcp import labels
from rantcp.plots import new_figure
from rantcp.sweeps.stats import interval

__all__ = ["cdf", "metric_vs_axis", "png_bytes", "shade_intervals", "timeseries", "timeseries_band"]

_MAX_GROUPS = 10


def _axes(ax: Any, size: tuple[float, float] = (7.0, 3.6)) -> tuple[Any, Any]:
    if ax is not None:
        return ax.figure, ax
    fig, (ax,) = new_figure(1, 1, figsize=size)
    return fig, ax


def subplots(nrows: int, figsize: tuple[float, float], **kw: Any) -> tuple[Any, list[Any]]:
    """A figure of `nrows` stacked axes (object API)."""
    return new_figure(nrows, 1, figsize=figsize, **kw)


def png_bytes(fig: Any, dpi: int = 100) -> bytes:
    """The figure as PNG bytes (no timestamp metadata)."""
    buf = io.BytesIO()
    fig.tight_layout()
    fig.savefig(buf, format="png", dpi=dpi, metadata={"Software": None})
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


def metric_vs_axis(
    df: pd.DataFrame,
    metric: str,
    x: str,
    group: str | None = None,
    ax: Any = None,
    where: Mapping[str, Any] | None = None,
    title: str | None = None,
) -> Any:
    """`metric` against axis `x`: the mean over repetitions with its 95 % interval (or each
    repetition as a dot when there are fewer than 5), one line per value of `group`. Only ok
    runs count; `where` keeps rows whose columns equal the given values (fix the other axes).
    Numeric x gets a numeric scale (logarithmic for loss-like axes and when the values span
    ≥ 100×) with a shaded band; other x values are categories with error bars."""
    fig, ax = _axes(ax)
    d = df[df["status"] == "ok"] if "status" in df else df
    for k, v in (where or {}).items():
        d = d[d[k] == v]
    xs = _ordered_unique(d[x])
    numeric = _is_numeric(xs)
    if numeric:
        xs = sorted(xs)
    lower, upper = labels.bounds(metric)
    groups = _ordered_unique(d[group])[:_MAX_GROUPS] if group else [None]
    width = 0.8 / max(1, len(groups))
    few = False
    for gi, g in enumerate(groups):
        sub = d if g is None else d[d[group] == g]
        pts = []
        for xi, xv in enumerate(xs):
            vals = pd.to_numeric(sub.loc[sub[x] == xv, metric], errors="coerce").dropna()
            mean, lo, hi, n = interval(vals, lower, upper)
            if n:
                px = xv if numeric else xi + (gi - (len(groups) - 1) / 2) * width
                pts.append((px, mean, lo, hi, list(vals)))
        if not pts:
            continue
        px, pm, plo, phi, pvals = zip(*pts)
        label = None if g is None else f"{labels.describe(group).name} = {g}" if group else None
        has_band = all(lo == lo for lo in plo)
        if numeric:
            (line,) = ax.plot(px, pm, marker="o", lw=1.5, ms=4, label=label)
            if has_band:
                ax.fill_between(px, plo, phi, color=line.get_color(), alpha=0.2, lw=0)
        else:
            yerr = [[m - lo for m, lo in zip(pm, plo)], [hi - m for m, hi in zip(pm, phi)]] if has_band else None
            line = ax.errorbar(px, pm, yerr=yerr, fmt="o", capsize=3, ms=5, label=label).lines[0]
        if not has_band:
            few = True
            dx = [p for p, vals in zip(px, pvals) for _ in vals]
            dy = [v for vals in pvals for v in vals]
            ax.scatter(dx, dy, s=10, color=line.get_color(), alpha=0.5, lw=0, zorder=3)
    if numeric:
        _scale_x(ax, xs, log=labels.log_scale(x))
    else:
        ax.set_xticks(range(len(xs)))
        ax.set_xticklabels([str(v) for v in xs])
    _y_limits(ax, d[metric], lower=lower, upper=upper)
    ax.set_xlabel(labels.label(x))
    ax.set_ylabel(labels.label(metric))
    how = "mean; dots: each repetition" if few else "mean, 95 % interval over repetitions"
    ax.set_title(title or f"{labels.describe(metric).name} against {labels.describe(x).name} ({how})", fontsize="medium")
    ax.grid(alpha=0.3)
    if group:
        ax.legend(fontsize="small")
    return fig


def _scale_x(ax: Any, xs: Sequence[float], log: bool = False) -> None:
    """Log scale for loss-like axes (`log`) or when positive values span >= 100x;
    symmetric-log (linear below the smallest positive value) when 0 is among them."""
    pos = [float(v) for v in xs if v > 0]
    if len(pos) < 2 or any(v < 0 for v in xs):
        return
    if not log and max(pos) / min(pos) < 100:
        return
    if len(pos) == len(xs):
        ax.set_xscale("log")
    else:
        ax.set_xscale("symlog", linthresh=min(pos))


def _y_limits(ax: Any, values: Any, scale: float = 1.0, lower: float | None = 0.0, upper: float | None = None) -> None:
    """Keep the y axis near the observed values: from the physical lower bound (0 for a
    quantity that is never negative) to a little above the largest run, never past the upper
    bound."""
    vals = pd.to_numeric(pd.Series(list(values)), errors="coerce").dropna() * scale
    if not len(vals):
        return
    lo, hi = float(vals.min()), float(vals.max())
    span = (hi - lo) or abs(hi) or 1.0
    bottom = lower * scale if lower is not None and lo >= lower * scale else lo - 0.1 * span
    top = hi + 0.1 * span
    if upper is not None:
        top = min(top, upper * scale * 1.02)
    ax.set_ylim(bottom=bottom, top=top)


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
    ax.set_xlabel(xlabel or (labels.label(metric) if metric else "value"))
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
    ax.set_xlabel(labels.label(x))
    ax.set_ylabel(ylabel or labels.label(y))
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
    """Mean of `y` over the runs in `over` at each time, one line per value of `by` (e.g. an
    axis), with the 95 % interval shaded (clipped to the physical bounds of `y`); with fewer
    than 5 runs each run is drawn as a thin line instead of a band."""
    fig, ax = _axes(ax)
    if intervals:
        shade_intervals(ax, intervals)
    lower, upper = labels.bounds(y)
    for key, g in list(ts.groupby(by, sort=False))[:_MAX_GROUPS]:
        times, means, los, his = [], [], [], []
        for t, at in g.groupby(x, sort=True)[y]:
            mean, lo, hi, _ = interval(at, lower, upper)
            times.append(t)
            means.append(mean * scale)
            los.append(lo * scale)
            his.append(hi * scale)
        (line,) = ax.plot(times, means, lw=1.2, label=f"{labels.describe(by).name} = {key}")
        if all(lo == lo for lo in los):
            ax.fill_between(times, los, his, color=line.get_color(), alpha=0.2, lw=0)
        elif over in g:
            for _, run in g.groupby(over, sort=False):
                run = run.sort_values(x)
                ax.plot(run[x], run[y] * scale, lw=0.5, alpha=0.35, color=line.get_color())
    _y_limits(ax, ts[y], scale, lower=lower, upper=upper)
    ax.set_xlabel(labels.label(x))
    ax.set_ylabel(ylabel or labels.label(y))
    if title:
        ax.set_title(title, fontsize="medium")
    ax.grid(alpha=0.3)
    ax.legend(fontsize="small")
    return fig
