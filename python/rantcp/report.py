"""A self-contained static HTML report of a run folder or a sweep folder.

``write_report(folder)`` writes ``folder/report.html``: one file with every figure embedded as
a base64 PNG, the tables and the config; no scripts, no external resources, so it opens
anywhere and can be mailed or archived as is.

A run report: the run's figures (scenario, seed, events), per-flow and per-link tables,
goodput/cwnd/RTT over time, the CDF of the sampled smoothed RTT per flow, the effective config.

A sweep report: counts, the axes, mean ± 95 % interval over repetitions per point, the failed
runs with their errors, each key metric against the x axis grouped by another axis, CDFs over
runs, goodput over time (mean and 95 % band over repetitions), the sweep file and the base
scenario. The x axis is the first numeric axis with several values (else the first axis with
several values); the group axis is the next such axis; further axes are held at their first
value in the time-series figure and get one panel per value (up to 6) in the metric figures.
"""

from __future__ import annotations

import base64
import datetime as _dt
import html
import json
import math
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

__all__ = ["render_run", "render_sweep", "write_report"]

KEY_METRICS = ("goodput_mbps", "rtt_mean_ms", "retransmitted_segments", "rtos", "jain_goodput")
_MAX_TABLE_ROWS = 500
_MAX_PANELS = 6

_CSS = """
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; margin: 2em auto; max-width: 1100px;
       padding: 0 1em; color: #1d1d1f; }
h1 { font-size: 1.6em; margin-bottom: 0.2em; } h2 { font-size: 1.25em; margin-top: 1.8em;
     border-bottom: 1px solid #ddd; padding-bottom: 0.2em; }
.meta { color: #555; }
table { border-collapse: collapse; margin: 0.6em 0; font-size: 0.92em; }
th, td { border: 1px solid #ddd; padding: 0.25em 0.6em; text-align: right; }
th { background: #f4f4f6; } td.l, th.l { text-align: left; }
tr.failed td { background: #fff1f0; }
figure { margin: 1em 0; } figure img { max-width: 100%; height: auto; border: 1px solid #eee; }
figcaption { color: #555; font-size: 0.9em; }
pre { background: #f7f7f9; padding: 0.8em; overflow-x: auto; font-size: 0.85em; border: 1px solid #eee; }
.note { color: #8a5a00; } .scroll { overflow-x: auto; }
"""


def _esc(v: Any) -> str:
    return html.escape(str(v), quote=True)


def _fmt(v: Any) -> str:
    if v is None:
        return "–"
    if isinstance(v, float):
        if math.isnan(v):
            return "–"
        if v == 0:
            return "0"
        if abs(v) >= 1e6 or abs(v) < 1e-3:
            return f"{v:.4g}"
        return f"{v:.4g}" if abs(v) < 1000 else f"{v:,.1f}"
    if isinstance(v, int) and not isinstance(v, bool):
        return f"{v:,}" if abs(v) >= 10000 else str(v)
    return str(v)


def _table(rows: Sequence[Sequence[Any]], head: Sequence[str], left: int = 0, row_class: Sequence[str] | None = None) -> str:
    out = ['<div class="scroll"><table><thead><tr>']
    out += [f'<th class="{"l" if i < left else ""}">{_esc(h)}</th>' for i, h in enumerate(head)]
    out.append("</tr></thead><tbody>")
    for ri, r in enumerate(rows):
        cls = f' class="{row_class[ri]}"' if row_class and row_class[ri] else ""
        out.append(f"<tr{cls}>" + "".join(f'<td class="{"l" if i < left else ""}">{_esc(_fmt(v))}</td>' for i, v in enumerate(r)) + "</tr>")
    out.append("</tbody></table></div>")
    return "".join(out)


class _Page:
    def __init__(self, title: str) -> None:
        self.title = title
        self.parts: list[str] = []
        self.figures = 0

    def h(self, text: str, level: int = 2) -> None:
        self.parts.append(f"<h{level}>{_esc(text)}</h{level}>")

    def p(self, text: str, cls: str = "") -> None:
        c = f' class="{cls}"' if cls else ""
        self.parts.append(f"<p{c}>{_esc(text)}</p>")

    def raw(self, fragment: str) -> None:
        self.parts.append(fragment)

    def pre(self, text: str) -> None:
        self.parts.append(f"<pre>{_esc(text)}</pre>")

    def figure(self, png: bytes, caption: str) -> None:
        self.figures += 1
        data = base64.b64encode(png).decode("ascii")
        self.parts.append(
            f'<figure id="fig{self.figures}"><img alt="{_esc(caption)}" src="data:image/png;base64,{data}">'
            f"<figcaption>Figure {self.figures}. {_esc(caption)}</figcaption></figure>"
        )

    def html(self) -> str:
        import rantcp

        stamp = _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
        return (
            "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            '<meta name="viewport" content="width=device-width, initial-scale=1">'
            f"<title>{_esc(self.title)}</title><style>{_CSS}</style></head><body>"
            + "\n".join(self.parts)
            + f'<hr><p class="meta">rantcp {_esc(rantcp.__version__)} · report written {stamp}</p></body></html>\n'
        )


# ---------------------------------------------------------------------------------------------
# Runs


def render_run(folder: str | os.PathLike[str]) -> str:
    """The HTML report of one run folder."""
    from rantcp import api, plots, sweep_plots

    res = api.load_result(folder)
    s = res.summary
    page = _Page(f"rantcp · {s.get('scenario', 'run')} · seed {s.get('seed')}")
    page.h(f"{s.get('scenario', 'run')} — seed {s.get('seed')}", 1)
    wall = s.get("wall") or {}
    page.p(
        f"{_fmt(s.get('duration_s'))} s simulated · {_fmt(s.get('events'))} events · "
        f"{_fmt(wall.get('seconds'))} s wall · rantcp {s.get('rantcp_version')} · folder {Path(folder).resolve()}",
        "meta",
    )

    flows = s.get("flows") or []
    if flows:
        page.h("Flows")
        keys = [k for k in flows[0] if not isinstance(flows[0][k], (dict, list))]
        for f in flows[1:]:
            keys += [k for k in f if k not in keys and not isinstance(f[k], (dict, list))]
        if len(flows) <= 8:  # figures down, flows across: stays readable
            names = [str(f.get("name", i)) for i, f in enumerate(flows)]
            page.raw(_table([[k, *[f.get(k) for f in flows]] for k in keys if k != "name"], ["figure", *names], left=1))
        else:
            page.raw(_table([[f.get(k) for k in keys] for f in flows[:_MAX_TABLE_ROWS]], keys, left=3))
    for key, val in s.items():
        if key in ("flows", "config") or not isinstance(val, list) or not val or not isinstance(val[0], dict):
            continue
        page.h(key.capitalize())
        keys = list(val[0])
        page.raw(_table([[it.get(k) for k in keys] for it in val[:_MAX_TABLE_ROWS]], keys, left=1))
    other = {k: v for k, v in s.items() if k not in ("flows", "config", "wall") and not isinstance(v, (list, dict))}
    if other:
        page.h("Run")
        page.raw(_table([[k, v] for k, v in other.items()], ["figure", "value"], left=1))

    ts = res.timeseries.get("flows")
    if ts is not None and len(ts):
        page.h("Time series")
        import io

        buf = io.BytesIO()
        plots.flow_timeseries(ts, f"{s.get('scenario')} (seed {s.get('seed')})", buf)  # type: ignore[arg-type]
        page.figure(buf.getvalue(), "Goodput, congestion window and smoothed RTT over time, one line per flow.")
        if "srtt_ms" in ts:
            samples = {str(k): g["srtt_ms"].dropna().tolist() for k, g in ts.groupby("flow", sort=False)}
            if any(samples.values()):
                fig = sweep_plots.cdf(samples, xlabel="smoothed RTT (ms)", title="Sampled smoothed RTT")
                page.figure(sweep_plots.png_bytes(fig), "CDF of the smoothed RTT at each sample time, per flow.")
        if "goodput_bps" in ts:
            samples = {str(k): (g["goodput_bps"] / 1e6).tolist() for k, g in ts.groupby("flow", sort=False)}
            fig = sweep_plots.cdf(samples, xlabel="goodput per sample interval (Mbit/s)", title="Sampled goodput")
            page.figure(sweep_plots.png_bytes(fig), "CDF of the goodput in each sample interval, per flow.")
    if "config" in s:
        page.h("Config")
        page.pre(json.dumps(s["config"], indent=2))
    return page.html()


# ---------------------------------------------------------------------------------------------
# Sweeps


def _varying(df: pd.DataFrame, axes: Sequence[str]) -> list[str]:
    return [a for a in axes if a in df and df[a].nunique(dropna=False) > 1]


def _choose_axes(df: pd.DataFrame, axes: Sequence[str]) -> tuple[str | None, str | None, list[str]]:
    from rantcp.sweep_plots import _is_numeric

    var = _varying(df, axes)
    if not var:
        return None, None, []
    numeric = [a for a in var if _is_numeric(df[a].tolist())]
    x = numeric[0] if numeric else var[0]
    rest = [a for a in var if a != x]
    group = rest[0] if rest else None
    return x, group, rest[1:]


def render_sweep(folder: str | os.PathLike[str]) -> str:
    """The HTML report of one sweep folder."""
    from rantcp import sweep_plots
    from rantcp.sweeps.api import Sweep
    from rantcp.sweeps.stats import summarise

    sw = Sweep(folder)
    df = sw.df
    axes = [a for a in sw.axes if a in df]
    ok = df[df["status"] == "ok"]
    failed = df[df["status"] == "failed"]
    page = _Page(f"rantcp sweep · {sw.name}")
    page.h(f"Sweep {sw.name}", 1)
    page.p(
        f"{len(df)} runs: {len(ok)} ok, {len(failed)} failed · scenario {sw.meta.get('scenario', '?')} · "
        f"created with rantcp {sw.meta.get('created_with', '?')} on {sw.meta.get('created_at', '?')} · "
        f"folder {Path(folder).resolve()}",
        "meta",
    )

    page.h("Axes")
    if axes:
        page.raw(_table([[a, ", ".join(_fmt(v) for v in df[a].drop_duplicates().tolist())] for a in axes], ["config path", "values"], left=2))
    else:
        page.p("No axes: repetitions of the base scenario only.")
    reps = df.groupby("point_index")["repetition"].nunique().max() if len(df) else 0
    page.p(f"{df['point_index'].nunique() if len(df) else 0} points × up to {reps} repetitions (seeds derived per repetition; see the runs table).")

    metrics = [m for m in KEY_METRICS if m in df and pd.to_numeric(ok[m], errors="coerce").notna().any()]
    if len(ok) and metrics:
        page.h("Results: mean ± 95 % interval over repetitions")
        summ = summarise(df, metrics, axes)
        head = [*axes, "ok runs", *metrics]
        rows = []
        for _, r in summ.iterrows():
            cells: list[Any] = [r[a] for a in axes] + [int(r["n"])]
            for m in metrics:
                mean, ci = r[f"{m}_mean"], r[f"{m}_ci95"]
                cells.append("–" if mean != mean else (_fmt(mean) if ci != ci else f"{_fmt(mean)} ± {_fmt(ci)}"))
            rows.append(cells)
        page.raw(_table(rows[:_MAX_TABLE_ROWS], head, left=len(axes)))

    if len(failed):
        page.h(f"Failed runs ({len(failed)})")
        page.raw(
            _table(
                [[*[r[a] for a in axes], r["repetition"], r["point_id"], r["error"]] for _, r in failed.head(_MAX_TABLE_ROWS).iterrows()],
                [*axes, "repetition", "point_id", "error"],
                left=len(axes) + 3,
                row_class=["failed"] * min(len(failed), _MAX_TABLE_ROWS),
            )
        )

    if len(ok):
        page.h("Figures")
        x, group, facets = _choose_axes(ok, axes)
        facet_values: list[dict[str, Any]] = [{}]
        if facets:
            facet_values = [dict(zip(facets, vals)) for vals in ok[facets].drop_duplicates().itertuples(index=False)]
        shown = facet_values[:_MAX_PANELS]
        plotted = [m for m in metrics if pd.to_numeric(ok[m], errors="coerce").nunique() > 1]
        for m in plotted:
            if x is None:
                fig = sweep_plots.cdf(ok, m, title=f"{m} over all runs")
                page.figure(sweep_plots.png_bytes(fig), f"CDF of {m} over the runs.")
                continue
            plt = sweep_plots._plt()
            fig, axs = plt.subplots(len(shown), 1, figsize=(7.5, 3.6 * len(shown)), squeeze=False)
            for ax, fv in zip([a[0] for a in axs], shown):
                title = ", ".join(f"{k} = {v}" for k, v in fv.items()) or None
                sweep_plots.metric_vs_axis(ok, m, x, group, ax=ax, where=fv, title=title)
            cap = f"{m} against {x}" + (f", one line per {group}" if group else "") + "; mean and 95 % interval over repetitions."
            if len(facet_values) > len(shown):
                cap += f" First {len(shown)} of {len(facet_values)} combinations of {', '.join(facets)}."
            page.figure(sweep_plots.png_bytes(fig), cap)
        cdf_by = group or x
        for m in plotted[:2] if x is not None else []:  # without axes the CDFs are above
            fig = sweep_plots.cdf(ok, m, group=cdf_by, title=f"{m} over runs")
            page.figure(sweep_plots.png_bytes(fig), f"CDF of {m} over the runs" + (f", per {cdf_by}." if cdf_by else "."))
        _sweep_timeseries(page, sw, ok, axes, x, group)

    page.h("Sweep file")
    page.pre(sw.spec_text or "(not recorded)")
    base = sw.meta.get("scenario_text") or ""
    scen = sw.meta.get("scenario", "")
    if not base and scen.startswith("builtin:"):
        try:
            import rantcp

            base = rantcp.builtin_toml(scen.split(":", 1)[1])
        except Exception:
            base = ""
    if base:
        page.h(f"Base scenario ({scen})")
        page.pre(base)
    if len(df):
        page.h("Runs")
        cols = ["point_id", *axes, "repetition", "seed", "status", *[m for m in metrics[:3]], "wall_s"]
        rows = [[r[c] for c in cols] for _, r in df.head(_MAX_TABLE_ROWS).iterrows()]
        page.raw(_table(rows, cols, left=len(axes) + 1, row_class=["failed" if r == "failed" else "" for r in df["status"].head(_MAX_TABLE_ROWS)]))
        if len(df) > _MAX_TABLE_ROWS:
            page.p(f"First {_MAX_TABLE_ROWS} of {len(df)} runs; rantcp.load({str(folder)!r}).df has them all.", "note")
    return page.html()


def _sweep_timeseries(page: _Page, sw: Any, ok: pd.DataFrame, axes: Sequence[str], x: str | None, group: str | None) -> None:
    """Goodput over time: mean and 95 % band over repetitions, a panel per group value, a line
    per x value; other axes held at their first value."""
    from rantcp import sweep_plots

    sel = ok
    held = {}
    for a in axes:
        if a not in (x, group) and sel[a].nunique(dropna=False) > 1:
            held[a] = sel[a].iloc[0]
            sel = sel[sel[a] == held[a]]
    panels = sweep_plots._ordered_unique(sel[group])[:_MAX_PANELS] if group else [None]
    lines = sweep_plots._ordered_unique(sel[x]) if x else [None]
    if len(lines) > 8:
        step = math.ceil(len(lines) / 8)
        lines = lines[::step]
    ids = sel[sel[x].isin(lines)]["point_id"].tolist() if x else sel["point_id"].tolist()
    if group:
        ids = [i for i in ids if sel.loc[sel["point_id"] == i, group].iloc[0] in panels]
    if not ids or len(ids) > 2000:
        return
    ts = sw.timeseries("flows", ids=ids)
    if ts.empty or "goodput_bps" not in ts:
        return
    keys = ["point_id", "repetition", *axes, "time_s"]
    per_run = ts.groupby(keys, sort=False, dropna=False)["goodput_bps"].sum().reset_index()
    if x is None:
        per_run["run"] = "all"
    by = x or "run"
    plt = sweep_plots._plt()
    fig, axs = plt.subplots(len(panels), 1, figsize=(7.5, 3.2 * len(panels)), squeeze=False, sharex=True)
    for ax, pv in zip([a[0] for a in axs], panels):
        d = per_run if pv is None else per_run[per_run[group] == pv]
        sweep_plots.timeseries_band(d, "goodput_bps", by=by, ax=ax, scale=1e-6, ylabel="goodput (Mbit/s)", title=None if pv is None else f"{group} = {pv}")
    cap = "Goodput over time (all flows of a run summed): mean and 95 % band over repetitions"
    if x:
        cap += f", one line per {x}"
    if group:
        cap += f", one panel per {group}"
    if held:
        cap += "; " + ", ".join(f"{k} held at {v}" for k, v in held.items())
    page.figure(sweep_plots.png_bytes(fig), cap + ".")


# ---------------------------------------------------------------------------------------------


def write_report(folder: str | os.PathLike[str], output: str | os.PathLike[str] | None = None) -> Path:
    """Write the report of a run or sweep folder (default ``folder/report.html``); returns its path."""
    from rantcp import ConfigError
    from rantcp.sweeps import store

    p = Path(folder)
    if store.is_sweep_folder(p):
        text = render_sweep(p)
    elif (p / "summary.json").is_file():
        text = render_run(p)
    else:
        raise ConfigError(f"{p}: neither a run folder (summary.json) nor a sweep folder ({store.DB_NAME})")
    out = Path(output) if output is not None else p / "report.html"
    tmp = out.with_name(out.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(out)
    return out
