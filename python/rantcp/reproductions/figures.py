"""The generic figure kinds of a reproduction, each drawn from one SQL query over its results.

=============  ==============================================================================
kind           query columns → drawing
=============  ==============================================================================
bars           ``x``, ``series``, ``y`` (a row per run): grouped bars of the mean over runs,
               whiskers from the smallest to the largest run; ``ref`` adds horizontal lines
               (each its own query returning ``value``), e.g. the UDP saturation rate
lines          ``x`` (numeric), ``y``, optional ``series``: the mean against x, band min–max
cdf            ``value``, optional ``series``: empirical CDF per series
timeseries     ``x``, ``y``, optional ``series``, optional ``run``: one line per series (the
               mean over runs with a min–max band when a series has several); ``shading``
               names a [shading.NAME] set whose intervals come from the first run's samples
xy             ``x``, ``y``, optional ``series``: points coloured by series (a route map)
table          any columns: shown as a table (and written as CSV)
config         no query: ``rows = [{label, path, paper}]``, the effective config value of each
               path in sweep ``sweep`` beside the seed's value
custom         ``function`` in the reproduction's figures.py: f(results, figure) -> Figure
=============  ==============================================================================

Common options: ``x_label``, ``y_label``, ``title``, ``size = [w, h]`` (inches), ``x_order``
and ``series_order`` (values in the order to draw; default: first appearance), ``y_min``,
``y_max``, ``x_scale``/``y_scale`` ("linear", "log", "symlog"), ``legend`` (matplotlib loc or
false). Colours: figures.toml ``[style] colors = {label = color}``.
"""

from __future__ import annotations

import importlib.util
import io
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from rantcp._native import ConfigError
from rantcp.reproductions.results import Results
from rantcp.reproductions.spec import Figure, Reproduction, Shading, config_value

__all__ = ["Drawn", "draw", "intervals"]

_DEFAULT_SIZE = (7.0, 3.8)


@dataclass
class Drawn:
    """A drawn figure: PNG bytes (plots) or a table, the data behind it, notes, or an error."""

    figure: Figure
    png: bytes | None = None
    table: pd.DataFrame | None = None
    data: pd.DataFrame | None = None
    notes: list[str] = field(default_factory=list)
    error: str = ""


def _plt() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def png_bytes(fig: Any) -> bytes:
    """The figure as PNG (no timestamp or software metadata: identical data give identical bytes)."""
    buf = io.BytesIO()
    fig.tight_layout()
    fig.savefig(buf, format="png", dpi=110, metadata={"Software": None})
    _plt().close(fig)
    return buf.getvalue()


def _order(values: Sequence[Any], given: Sequence[Any] | None) -> list[Any]:
    seen: list[Any] = []
    for v in values:
        if v not in seen:
            seen.append(v)
    if given:
        head = [v for v in given if v in seen]
        return head + [v for v in seen if v not in head]
    return seen


def _need(df: pd.DataFrame, cols: Sequence[str], fig: Figure) -> None:
    missing = [c for c in cols if c not in df.columns]
    if missing:
        raise ConfigError(f"figure {fig.id!r}: the query has no column {missing[0]!r} (a {fig.kind} figure needs {', '.join(cols)})")


def _data(res: Results, fig: Figure, cols: Sequence[str]) -> pd.DataFrame:
    """The figure's query result; checks the kind's columns, adds an empty `series` if absent."""
    df = res.query(fig.query or "", f"figure {fig.id!r}")
    _need(df, cols, fig)
    if "series" not in df:
        df["series"] = ""
    return df


def _color(style: Mapping[str, Any], label: Any, i: int) -> Any:
    return style.get("colors", {}).get(str(label), f"C{i % 10}")


def _axes(fig: Figure) -> tuple[Any, Any]:
    size = fig.options.get("size", _DEFAULT_SIZE)
    f, ax = _plt().subplots(figsize=(float(size[0]), float(size[1])))
    return f, ax


def _finish(ax: Any, fig: Figure, legend: bool) -> None:
    o = fig.options
    ax.set_xlabel(o.get("x_label", ""))
    ax.set_ylabel(o.get("y_label", ""))
    if o.get("title"):
        ax.set_title(o["title"], fontsize="medium")
    for axis in ("x", "y"):
        scale = o.get(f"{axis}_scale")
        if scale:
            getattr(ax, f"set_{axis}scale")(scale)
    if "y_min" in o or "y_max" in o:
        ax.set_ylim(bottom=o.get("y_min"), top=o.get("y_max"))
    if o.get("x_range"):
        ax.set_xlim(float(o["x_range"][0]), float(o["x_range"][1]))
    if o.get("y_range"):
        ax.set_ylim(float(o["y_range"][0]), float(o["y_range"][1]))
    ax.grid(alpha=0.3)
    loc = o.get("legend", "best")
    if legend and loc is not False:
        ax.legend(fontsize="small", loc=loc)


def _stats(df: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """Mean, min, max and count of y per group, groups in order of first appearance."""
    d = df.assign(y=pd.to_numeric(df["y"], errors="coerce"))
    g = d.groupby(keys, sort=False, dropna=False)["y"].agg(["mean", "min", "max", "count"]).reset_index()
    return g


def _bars(res: Results, fig: Figure, style: Mapping[str, Any]) -> Drawn:
    df = _data(res, fig, ["x", "y"])
    st = _stats(df, ["x", "series"])
    xs = _order(list(st["x"]), fig.options.get("x_order"))
    series = _order(list(st["series"]), fig.options.get("series_order"))
    f, ax = _axes(fig)
    width = 0.8 / max(1, len(series))
    for si, s in enumerate(series):
        sub = st[st["series"] == s].set_index("x")
        pos, mean, lo, hi = [], [], [], []
        for xi, x in enumerate(xs):
            if x in sub.index and sub.loc[x, "count"] > 0:
                r = sub.loc[x]
                pos.append(xi + (si - (len(series) - 1) / 2) * width)
                mean.append(r["mean"])
                lo.append(r["mean"] - r["min"])
                hi.append(r["max"] - r["mean"])
        if pos:
            ax.bar(pos, mean, width=width * 0.95, color=_color(style, s, si), label=str(s) if s != "" else None,
                   yerr=[lo, hi], capsize=2, error_kw={"lw": 0.8})
    for ri, ref in enumerate(fig.options.get("ref", [])):
        v = res.query(ref["query"], f"figure {fig.id!r} ref {ri + 1}")
        if len(v) and "value" in v and pd.notna(v["value"].iloc[0]):
            val = float(v["value"].iloc[0])
            ax.axhline(val, color=ref.get("color", "red"), ls=ref.get("style", "--"), lw=1.2,
                       label=f"{ref.get('label', 'reference')} ({val:.1f})")
    ax.set_xticks(range(len(xs)))
    ax.set_xticklabels([str(x) for x in xs])
    _finish(ax, fig, legend=True)
    fewest, most = (int(st["count"].min()), int(st["count"].max())) if len(st) else (0, 0)
    runs = f"{fewest}" if fewest == most else f"{fewest}–{most}"
    return Drawn(fig, png_bytes(f), data=st, notes=[f"bars: mean over {runs} run(s) each; whiskers: smallest to largest run"])


def _lines(res: Results, fig: Figure, style: Mapping[str, Any]) -> Drawn:
    df = _data(res, fig, ["x", "y"])
    df["x"] = pd.to_numeric(df["x"], errors="coerce")
    st = _stats(df, ["series", "x"]).sort_values(["x"], kind="stable")
    f, ax = _axes(fig)
    for si, s in enumerate(_order(list(st["series"]), fig.options.get("series_order"))):
        sub = st[st["series"] == s]
        c = _color(style, s, si)
        ax.plot(sub["x"], sub["mean"], marker="o", ms=4, lw=1.5, color=c, label=str(s) if s != "" else None)
        if (sub["count"] > 1).any():
            ax.fill_between(sub["x"], sub["min"], sub["max"], color=c, alpha=0.2, lw=0)
    _finish(ax, fig, legend=st["series"].nunique() > 1)
    return Drawn(fig, png_bytes(f), data=st, notes=["lines: mean over runs; band: smallest to largest run"])


def _cdf(res: Results, fig: Figure, style: Mapping[str, Any]) -> Drawn:
    df = _data(res, fig, ["value"])
    f, ax = _axes(fig)
    for si, s in enumerate(_order(list(df["series"]), fig.options.get("series_order"))):
        v = sorted(pd.to_numeric(df.loc[df["series"] == s, "value"], errors="coerce").dropna())
        if v:
            ax.step(v, [(i + 1) / len(v) for i in range(len(v))], where="post", color=_color(style, s, si), label=str(s) if s != "" else None)
    ax.set_ylim(0, 1.02)
    if "y_label" not in fig.options:
        fig.options["y_label"] = "CDF"
    _finish(ax, fig, legend=df["series"].nunique() > 1)
    return Drawn(fig, png_bytes(f), data=df)


def intervals(times: Sequence[float], flags: Sequence[Any]) -> list[tuple[float, float]]:
    """[start, end] intervals where consecutive samples are true; a sample at time t stands for
    (previous sample time, t] (the first for [t - (t1 - t0), t])."""
    out: list[tuple[float, float]] = []
    start: float | None = None
    prev: float | None = None
    step = (times[1] - times[0]) if len(times) > 1 else 0.0
    for t, on in zip(times, flags):
        begin = prev if prev is not None else t - step
        if bool(on) and on == on:  # NaN/None count as false
            if start is None:
                start = begin
        elif start is not None:
            out.append((start, begin))
            start = None
        prev = t
    if start is not None and prev is not None:
        out.append((start, prev))
    return out


def _shade(res: Results, ax: Any, sh: Shading, run: str, where: str) -> list[str]:
    notes = []
    for kind, items in (("span", sh.spans), ("band", sh.bands)):
        for i, it in enumerate(items):
            q = f"SELECT time_s, ({it['when']}) AS flag FROM {sh.table} WHERE run = $run ORDER BY time_s"
            d = res.query(q, f"{where} shading {kind} {i + 1}", {"run": run})
            ivs = intervals(list(d["time_s"]), list(d["flag"]))
            color = it.get("color", "0.6")
            first = True
            for a, b in ivs:
                if kind == "span":
                    ax.axvspan(a, b, color=color, alpha=float(it.get("alpha", 0.3)), lw=0, label=it.get("label") if first else None)
                else:
                    ax.axvspan(a, b, ymin=0.94, ymax=1.0, color=color, alpha=0.9, lw=0)
                    ax.text((a + b) / 2, 0.97, it.get("label", ""), transform=ax.get_xaxis_transform(), ha="center", va="center", fontsize=6.5, clip_on=True)
                first = False
            if kind == "span" and ivs:
                notes.append(f"{it.get('label', 'shaded')}: " + ", ".join(f"{a:.1f}–{b:.1f} s" for a, b in ivs[:8]) + (" …" if len(ivs) > 8 else ""))
    return notes


def _timeseries(res: Results, fig: Figure, style: Mapping[str, Any], shading: Mapping[str, Shading]) -> Drawn:
    where = f"figure {fig.id!r}"
    df = _data(res, fig, ["x", "y"])
    f, ax = _axes(fig)
    notes: list[str] = []
    runs = list(dict.fromkeys(df["run"])) if "run" in df else []
    o = fig.options
    if o.get("shading") and runs:
        notes += _shade(res, ax, shading[o["shading"]], runs[0], where)
        notes.insert(0, f"shading from run {runs[0]}")
    multi = False
    for si, s in enumerate(_order(list(df["series"]), o.get("series_order"))):
        sub = df[df["series"] == s]
        c = _color(style, s, si)
        label = str(s) if s != "" else None
        if "run" in sub and sub["run"].nunique() > 1:
            multi = True
            st = _stats(sub, ["x"]).sort_values("x", kind="stable")
            ax.plot(st["x"], st["mean"], lw=1, color=c, label=label)
            ax.fill_between(st["x"], st["min"], st["max"], color=c, alpha=0.2, lw=0)
        else:
            sub = sub.sort_values("x", kind="stable")
            ax.plot(sub["x"], sub["y"], lw=1, color=c, label=label)
    if multi:
        notes.append("lines: mean over runs; band: smallest to largest run")
    lo_hi = o.get("x_range")
    if o.get("x_range_query") and runs:
        r = res.query(o["x_range_query"], f"{where} x_range_query", {"run": runs[0]} if "$run" in o["x_range_query"] else None)
        if len(r) and r.shape[1] >= 2 and pd.notna(r.iloc[0, 0]) and pd.notna(r.iloc[0, 1]):
            lo_hi = [float(r.iloc[0, 0]), float(r.iloc[0, 1])]
            notes.append(f"time axis {lo_hi[0]:.1f}–{lo_hi[1]:.1f} s ({o.get('x_range_note', 'from x_range_query')})")
        else:
            notes.append("x_range_query found nothing: the whole run is shown")
    if lo_hi:
        ax.set_xlim(float(lo_hi[0]), float(lo_hi[1]))
    if "x_label" not in o:
        o["x_label"] = "time (s)"
    _finish(ax, fig, legend=True)
    return Drawn(fig, png_bytes(f), data=df, notes=notes)


def _xy(res: Results, fig: Figure, style: Mapping[str, Any]) -> Drawn:
    df = _data(res, fig, ["x", "y"])
    f, ax = _axes(fig)
    for si, s in enumerate(_order(list(df["series"]), fig.options.get("series_order"))):
        sub = df[df["series"] == s]
        ax.scatter(sub["x"], sub["y"], s=6, color=_color(style, s, si), label=str(s) if s != "" else None)
    for p in fig.options.get("points", []):
        ax.plot([p["x"]], [p["y"]], marker=p.get("marker", "^"), color=p.get("color", "k"), ms=8)
        ax.annotate(p.get("label", ""), (p["x"], p["y"]), textcoords="offset points", xytext=(5, 5), fontsize="small")
    if fig.options.get("aspect") == "equal":
        ax.set_aspect("equal", adjustable="box")
    _finish(ax, fig, legend=df["series"].nunique() > 1)
    return Drawn(fig, png_bytes(f), data=df)


def _config(res: Results, fig: Figure, configs: Mapping[str, Mapping[str, Any]]) -> Drawn:
    sweep = fig.options.get("sweep") or next(iter(configs))
    if sweep not in configs:
        raise ConfigError(f"figure {fig.id!r}.sweep: {sweep!r} is not a sweep of this reproduction")
    cfg = configs[sweep]
    rows = []
    for i, r in enumerate(fig.options.get("rows", [])):
        if not isinstance(r, Mapping) or "label" not in r:
            raise ConfigError(f"figure {fig.id!r}.rows[{i}]: expected {{label, path, paper}}")
        path = r.get("path")
        val = config_value(cfg, path) if path else None
        swept = ""
        if path and path in res.runs.columns:
            vals = [v for v in dict.fromkeys(res.runs[path].tolist()) if v is not None and v == v]
            if len(vals) > 1:
                swept = ", ".join(str(v) for v in vals)
        rows.append({"parameter": r["label"], "seed": r.get("paper", ""), "rantcp": "" if val is None else str(val),
                     "config path": path or "", "values in this reproduction": swept})
    t = pd.DataFrame(rows)
    return Drawn(fig, table=t, data=t, notes=[f"rantcp values: the effective config of sweep {sweep!r}"])


def _custom(res: Results, fig: Figure, folder: Path) -> Drawn:
    name = fig.options.get("function")
    src = folder / "figures.py"
    if not isinstance(name, str) or not src.is_file():
        raise ConfigError(f"figure {fig.id!r}: a custom figure needs function = \"name\" in {src.name}")
    spec = importlib.util.spec_from_file_location(f"rantcp_reproduction_{folder.name}_figures", src)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    fn: Callable[[Results, Figure], Any] | None = getattr(mod, name, None)
    if fn is None:
        raise ConfigError(f"figure {fig.id!r}.function: {name!r} is not in {src.name}")
    return Drawn(fig, png_bytes(fn(res, fig)))


def draw(res: Results, fig: Figure, repro: Reproduction, configs: Mapping[str, Mapping[str, Any]]) -> Drawn:
    """Draw one figure; a failing query gives a Drawn with `error` set (never raises ConfigError)."""
    import copy

    fig = copy.deepcopy(fig)  # drawing fills in default labels
    try:
        d = _draw(res, fig, repro, configs)
    except ConfigError as e:
        _plt().close("all")
        return Drawn(fig, error=str(e))
    if fig.options.get("note"):
        d.notes.append(str(fig.options["note"]))
    return d


def _draw(res: Results, fig: Figure, repro: Reproduction, configs: Mapping[str, Mapping[str, Any]]) -> Drawn:
    if fig.kind == "bars":
        return _bars(res, fig, repro.style)
    if fig.kind == "lines":
        return _lines(res, fig, repro.style)
    if fig.kind == "cdf":
        return _cdf(res, fig, repro.style)
    if fig.kind == "timeseries":
        return _timeseries(res, fig, repro.style, repro.shading)
    if fig.kind == "xy":
        return _xy(res, fig, repro.style)
    if fig.kind == "table":
        t = res.query(fig.query or "", f"figure {fig.id!r}")
        return Drawn(fig, table=t, data=t)
    if fig.kind == "config":
        return _config(res, fig, configs)
    return _custom(res, fig, repro.folder)
