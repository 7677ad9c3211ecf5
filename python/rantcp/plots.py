"""Plots of a run: goodput, congestion window and RTT over time, one line per flow.

Figures are made with matplotlib's object API on the Agg canvas (``new_figure``): no pyplot,
no global figure state, safe on any thread. Tables may be pyarrow Tables or pandas DataFrames
(anything that gives a column by name). Series longer than a figure can show are decimated to
the minimum and maximum of each pixel column (``decimate``), so a long run draws as fast as a
short one and keeps its spikes.
"""

from __future__ import annotations

from pathlib import Path
from typing import IO, Any

from rantcp.labels import label

MAX_POINTS = 2000
"""Points per line after decimation: two (min, max) per pixel column of an 8-inch, 110 dpi plot."""

DPI = 110


def new_figure(nrows: int = 1, ncols: int = 1, figsize: tuple[float, float] = (8.0, 3.0), **kw: Any) -> tuple[Any, list[Any]]:
    """(figure, flat list of axes) on an Agg canvas of its own."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=figsize)
    FigureCanvasAgg(fig)
    axes = fig.subplots(nrows, ncols, squeeze=False, **kw)
    return fig, [a for row in axes for a in row]


def save(fig: Any, path: str | Path | IO[bytes], dpi: int = DPI) -> None:
    """Write the figure as PNG (no timestamp metadata: same data, same bytes)."""
    fig.tight_layout()
    fig.savefig(path, format="png", dpi=dpi, metadata={"Software": None})


def columns(table: Any) -> list[str]:
    return list(table.column_names) if hasattr(table, "column_names") else list(table.columns)


def col(table: Any, name: str) -> Any:
    """Column `name` as a numpy array (nulls as NaN for numbers)."""
    import numpy as np

    c = table[name]
    if hasattr(c, "to_numpy") and hasattr(c, "combine_chunks"):  # pyarrow ChunkedArray
        return c.to_numpy()
    return np.asarray(c)


def groups(keys: Any) -> list[tuple[Any, Any]]:
    """(key, row indices) per distinct key, in order of first appearance."""
    import numpy as np

    keys = np.asarray(keys)
    if not len(keys):
        return []
    uniq, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
    order = np.argsort(first, kind="stable")
    rows = np.argsort(inverse, kind="stable")
    bounds = np.cumsum(np.bincount(inverse, minlength=len(uniq)))
    starts = np.concatenate(([0], bounds[:-1]))
    return [(uniq[k].item() if hasattr(uniq[k], "item") else uniq[k], rows[starts[k] : bounds[k]]) for k in order]


def decimate(x: Any, y: Any, max_points: int = MAX_POINTS) -> tuple[Any, Any]:
    """At most about `max_points` points of (x, y): for each of max_points/2 equal slices of
    the series, its minimum and maximum in their time order (the visible envelope). Series
    that fit are returned as they are."""
    import numpy as np

    x = np.asarray(x)
    y = np.asarray(y, dtype=float)
    n = len(y)
    buckets = max(1, max_points // 2)
    if n <= max_points:
        return x, y
    edges = np.linspace(0, n, buckets + 1).astype(int)
    keep: list[int] = []
    filled = np.where(np.isnan(y), np.inf, y)
    filled_max = np.where(np.isnan(y), -np.inf, y)
    for a, b in zip(edges[:-1], edges[1:]):
        if b <= a:
            continue
        lo = a + int(np.argmin(filled[a:b]))
        hi = a + int(np.argmax(filled_max[a:b]))
        keep.extend(sorted({lo, hi}))
    idx = np.asarray(keep)
    return x[idx], y[idx]


def byte_unit(max_bytes: float) -> tuple[float, str]:
    """(divisor, unit) that shows `max_bytes` as a number below 10,000 (B, kB, MB, GB)."""
    for div, unit in ((1.0, "B"), (1e3, "kB"), (1e6, "MB")):
        if max_bytes < 1e4 * div:
            return div, unit
    return 1e9, "GB"


def plain_numbers(ax: Any) -> None:
    """No offset or "1e6" multiplier above the axis: the label carries the unit."""
    ax.ticklabel_format(axis="y", style="plain", useOffset=False)


def _finite_max(values: Any) -> float:
    import numpy as np

    v = np.asarray(values, dtype=float)
    v = v[np.isfinite(v)]
    return float(v.max()) if len(v) else 0.0


def flow_timeseries(flows: Any, title: str, path: str | Path | IO[bytes]) -> None:
    """Three stacked panels (goodput Mbit/s, cwnd in B/kB/MB, smoothed RTT ms) against time."""
    fig, (ax_g, ax_c, ax_r) = new_figure(3, 1, figsize=(8, 7.8), sharex=True)
    t = col(flows, "time_s")
    goodput, cwnd, srtt = col(flows, "goodput_bps"), col(flows, "cwnd_bytes"), col(flows, "srtt_ms")
    div, unit = byte_unit(_finite_max(cwnd))
    flow_groups = groups(col(flows, "flow"))
    for name, rows in flow_groups:
        ax_g.plot(*decimate(t[rows], goodput[rows] / 1e6), label=str(name), lw=1)
        ax_c.plot(*decimate(t[rows], cwnd[rows] / div), lw=1)
        ax_r.plot(*decimate(t[rows], srtt[rows]), lw=1)
    ax_g.set_ylabel(label("goodput_mbps"))
    ax_c.set_ylabel(label("cwnd_bytes", unit))
    ax_r.set_ylabel(label("srtt_ms"))
    ax_r.set_xlabel(label("time_s"))
    ax_g.set_title(title)
    if len(flow_groups) <= 8:
        ax_g.legend(loc="lower right", fontsize="small")
    for a in (ax_g, ax_c, ax_r):
        a.grid(alpha=0.3)
        plain_numbers(a)
    save(fig, path)


def side_by_side(flows: Any, summary: dict[str, Any], title: str, path: str | Path | IO[bytes]) -> None:
    """Goodput (left) and smoothed RTT (right) against time, one line per flow or variant,
    with each flow's mean goodput in the legend."""
    import numpy as np

    means = {f["name"]: f.get("goodput_mbps") for f in summary["flows"]}
    fig, (ax_g, ax_r) = new_figure(1, 2, figsize=(12, 4))
    t, goodput, srtt = col(flows, "time_s"), col(flows, "goodput_bps"), col(flows, "srtt_ms")
    for name, rows in groups(col(flows, "flow")):
        mean = means.get(name)
        ax_g.plot(*decimate(t[rows], goodput[rows] / 1e6), label=f"{name} ({mean if mean is not None else float('nan'):.1f} Mbit/s)", lw=1)
        if np.nanmax(srtt[rows], initial=0.0) > 0:
            ax_r.plot(*decimate(t[rows], srtt[rows]), label=str(name), lw=1)
    ax_g.set_xlabel(label("time_s"))
    ax_g.set_ylabel(label("goodput_mbps"))
    ax_r.set_xlabel(label("time_s"))
    ax_r.set_ylabel(label("srtt_ms"))
    ax_g.legend(fontsize="small")
    ax_r.legend(fontsize="small")
    for a in (ax_g, ax_r):
        a.grid(alpha=0.3)
    fig.suptitle(title)
    save(fig, path)


def run_plots(out: Path, summary: dict[str, Any], tables: Any) -> list[Path]:
    """Write every plot of a run folder into ``out/plots``; returns the files written."""
    from rantcp.radio_plots import radio_run_plots

    pdir = out / "plots"
    pdir.mkdir(exist_ok=True)
    written: list[Path] = []
    flows = tables.get("flows")
    title = f"{summary['scenario']} (seed {summary['seed']})"
    if flows is not None and len(flows):
        written.append(pdir / "flows.png")
        flow_timeseries(flows, title, written[-1])
        if summary["scenario"] == "cc-compare":
            written.append(pdir / "cc-compare.png")
            side_by_side(flows, summary, title, written[-1])
    written.extend(radio_run_plots(pdir, summary, tables))
    return written
