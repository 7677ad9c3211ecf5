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


def _is_identifier(key: str | None) -> bool:
    """Seeds, ids and indices are printed as they are, without thousands separators."""
    if not key:
        return False
    k = key.rsplit(".", 1)[-1]
    return "seed" in k or k.endswith(("_id", "index", "rnti")) or k in ("cell", "ue", "repetition")


def _fmt(v: Any, key: str | None = None) -> str:
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
        return f"{v:,}" if abs(v) >= 10000 and not _is_identifier(key) else str(v)
    return str(v)


def _table(rows: Sequence[Sequence[Any]], head: Sequence[str], left: int = 0, row_class: Sequence[str] | None = None, keys_in_first_cell: bool = False) -> dict[str, Any]:
    """A table block; cells are formatted by their column name (or, for tables of figures
    down and items across, by the figure name in the first cell)."""
    out_rows = []
    for ri, r in enumerate(rows):
        key_of_row = str(r[0]) if keys_in_first_cell and r else None
        cells = [_fmt(v, key_of_row or (head[i] if i < len(head) else None)) for i, v in enumerate(r)]
        out_rows.append({"cells": cells, "cls": row_class[ri] if row_class else ""})
    return {"kind": "table", "head": list(head), "rows": out_rows, "left": left}


class _Page:
    """The blocks of a report page, rendered by the jinja2 template templates/report.html.j2."""

    def __init__(self, title: str) -> None:
        self.title = title
        self.blocks: list[dict[str, Any]] = []
        self.figures = 0

    def h(self, text: str, level: int = 2) -> None:
        self.blocks.append({"kind": "heading", "text": text, "level": level})

    def p(self, text: str, cls: str = "") -> None:
        self.blocks.append({"kind": "paragraph", "text": text, "cls": cls})

    def raw(self, block: dict[str, Any]) -> None:
        self.blocks.append(block)

    def pre(self, text: str) -> None:
        self.blocks.append({"kind": "pre", "text": text})

    def figure(self, png: bytes, caption: str) -> None:
        self.figures += 1
        self.blocks.append({"kind": "figure", "number": self.figures, "caption": caption, "data": base64.b64encode(png).decode("ascii")})

    def html(self) -> str:
        import jinja2

        import rantcp

        env = jinja2.Environment(
            loader=jinja2.PackageLoader("rantcp", "templates"),
            autoescape=True,
            undefined=jinja2.StrictUndefined,
            keep_trailing_newline=True,
        )
        stamp = _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
        return env.get_template("report.html.j2").render(title=self.title, blocks=self.blocks, version=rantcp.__version__, stamp=stamp)


# ---------------------------------------------------------------------------------------------
# Runs


def _item_tables(page: _Page, title: str, items: list[Any]) -> None:
    """A table of a list of dicts (links, UEs, cells), one row per item."""
    items = [it for it in items if isinstance(it, dict)]
    if not items:
        return
    keys = list(items[0])
    for it in items[1:]:
        keys += [k for k in it if k not in keys]
    keys = [k for k in keys if not isinstance(items[0].get(k), (dict, list))]
    page.h(title)
    page.raw(_table([[it.get(k) for k in keys] for it in items[:_MAX_TABLE_ROWS]], keys, left=1))
    if len(items) > _MAX_TABLE_ROWS:
        page.p(f"First {_MAX_TABLE_ROWS} of {len(items)}; summary.json has them all.", "note")


def render_run(folder: str | os.PathLike[str]) -> str:
    """The HTML report of one run folder."""
    from rantcp import api, plots, radio_plots, sweep_plots

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
            page.raw(_table([[k, *[f.get(k) for f in flows]] for k in keys if k != "name"], ["figure", *names], left=1, keys_in_first_cell=True))
        else:
            page.raw(_table([[f.get(k) for k in keys] for f in flows[:_MAX_TABLE_ROWS]], keys, left=3))
    for key, val in s.items():
        if key in ("flows", "config") or not isinstance(val, list) or not val or not isinstance(val[0], dict):
            continue
        _item_tables(page, key.capitalize(), val)
    other = {k: v for k, v in s.items() if k not in ("flows", "config", "wall") and not isinstance(v, (list, dict))}
    if other:
        page.h("Run")
        page.raw(_table([[k, v] for k, v in other.items()], ["figure", "value"], left=1, keys_in_first_cell=True))

    ts = res.timeseries.get("flows")
    title = f"{s.get('scenario')} (seed {s.get('seed')})"
    if ts is not None and not len(ts) and "flows" in res.timeseries:
        interval = ((s.get("config") or {}).get("output") or {}).get("sample_interval", "?")
        page.h("Time series")
        page.p(
            f"No time-series samples: output.sample_interval ({interval}) is longer than the run "
            f"({_fmt(s.get('duration_s'))} s simulated). Run it again with a shorter interval.",
            "note",
        )
    if ts is not None and len(ts):
        page.h("Time series")
        import io

        buf = io.BytesIO()
        plots.flow_timeseries(ts, title, buf)
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
    _radio_section(page, s, res.timeseries, title)
    _trace_section_for_run(page, Path(folder))
    if "config" in s:
        page.h("Config")
        page.pre(json.dumps(s["config"], indent=2))
    return page.html()


def _radio_section(page: _Page, s: dict[str, Any], tables: Any, title: str) -> None:
    """A radio run's UEs and cells (summary.json → radio) and its radio figures."""
    radio = s.get("radio")
    if not isinstance(radio, dict):
        return
    import io

    from rantcp import radio_plots

    page.h("Radio")
    scalars = {k: v for k, v in radio.items() if not isinstance(v, (list, dict))}
    if scalars:
        page.raw(_table([[k, v] for k, v in scalars.items()], ["figure", "value"], left=1, keys_in_first_cell=True))
    for key, val in radio.items():
        if isinstance(val, list):
            _item_tables(page, f"Radio: {key}", val)
    ts = tables.get("radio")
    if ts is not None and len(ts):
        buf = io.BytesIO()
        radio_plots.radio_timeseries(ts, tables.get("flows"), title, buf)
        n = ts["ue"].nunique()
        shown = min(n, radio_plots.MAX_UES)
        page.figure(
            buf.getvalue(),
            f"SINR, goodput and smoothed RTT over time of {shown} of {n} UEs"
            + (f" (the first {shown}; radio.parquet has them all)" if n > shown else "")
            + "; grey: NLOS intervals of the first UE, where its LOS state changes.",
        )
    cells = tables.get("cells")
    if cells is not None and len(cells):
        buf = io.BytesIO()
        radio_plots.cell_usage(cells, title, buf)
        page.figure(buf.getvalue(), "Downlink and uplink PRB utilisation and PDCCH use per cell over time.")


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
    from rantcp.sweeps.stats import MIN_REPETITIONS_FOR_INTERVAL, interval_text

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
        page.h("Results over repetitions")
        page.p(
            f"Each cell: the mean over a point's repetitions; with {MIN_REPETITIONS_FOR_INTERVAL} or more, its 95 % "
            "Student-t interval clipped to what the quantity can physically be; with fewer, the lowest and "
            "highest repetition (a t interval of 2 to 4 values says little)."
        )
        from rantcp import labels

        head = [*axes, "ok runs", *[labels.label(m) for m in metrics]]
        rows = []
        groups = ok.groupby(axes, sort=False, dropna=False) if axes else [((), ok)]
        for key, g in groups:
            key = key if isinstance(key, tuple) else (key,)
            cells: list[Any] = [*key, len(g)]
            for m in metrics:
                cells.append(interval_text(pd.to_numeric(g[m], errors="coerce").dropna(), *labels.bounds(m), fmt=_fmt))
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
        few = bool(len(ok)) and int(ok.groupby("point_index")["repetition"].nunique().min()) < MIN_REPETITIONS_FOR_INTERVAL
        how = ", each repetition a dot (fewer than 5 repetitions: no interval)" if few else " with its 95 % interval"
        for m in plotted:
            if x is None:
                fig = sweep_plots.cdf(ok, m, title=f"{m} over all runs")
                page.figure(sweep_plots.png_bytes(fig), f"CDF of {m} over the runs.")
                continue
            fig, axs = sweep_plots.subplots(len(shown), figsize=(7.5, 3.6 * len(shown)))
            for ax, fv in zip(axs, shown):
                title = ", ".join(f"{k} = {v}" for k, v in fv.items()) or None
                sweep_plots.metric_vs_axis(ok, m, x, group, ax=ax, where=fv, title=title)
            cap = f"{m} against {x}" + (f", one line per {group}" if group else "") + f"; mean over repetitions{how}."
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
    fig, axs = sweep_plots.subplots(len(panels), figsize=(7.5, 3.2 * len(panels)), sharex=True)
    for ax, pv in zip(axs, panels):
        d = per_run if pv is None else per_run[per_run[group] == pv]
        sweep_plots.timeseries_band(d, "goodput_bps", by=by, ax=ax, scale=1e-6, ylabel="goodput (Mbit/s)", title=None if pv is None else f"{group} = {pv}")
    cap = "Goodput over time (all flows of a run summed): mean over repetitions with its 95 % band (with fewer than 5 repetitions, each run a thin line)"
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
    from rantcp.outdir import check_output_file, write_error
    from rantcp.sweeps import store

    p = Path(folder)
    sweep = store.is_sweep_folder(p)
    if not sweep and not (p / "summary.json").is_file():
        raise ConfigError(f"{p}: neither a run folder (summary.json) nor a sweep folder ({store.DB_NAME})")
    # Checked before the page is drawn: never over a run's own data (summary.json, Parquet).
    out = check_output_file(output if output is not None else p / "report.html", "--output", (".html", ".htm"))
    text = render_sweep(p) if sweep else render_run(p)
    tmp = out.with_name(out.name + ".tmp")
    try:
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(out)
    except OSError as e:
        tmp.unlink(missing_ok=True)
        raise write_error("--output", out, e) from None
    except BaseException:
        # Ctrl-C or SIGTERM: the page stays the old one (or none) and nothing else is left; a
        # leftover report.html.tmp would also stop the run folder from being one (`run --out`).
        tmp.unlink(missing_ok=True)
        raise
    return out


# ---------------------------------------------------------------------------------------------
# Trace analysis (rantcp.trace): one self-contained section


def trace_blocks(db: str | os.PathLike[str], max_sessions: int = 20) -> list[dict[str, Any]]:
    """The "Trace analysis" section of a trace database as page blocks: the sessions with the
    most packets and the time-sequence graph of the largest one."""
    import io

    from rantcp import trace

    page = _Page("")
    page.h("Trace analysis")
    df = trace.sessions(db)
    if not len(df):
        page.p("No TCP sessions in the captures.")
        return page.blocks
    df = df.sort_values(["packets", "session_id"], ascending=[False, True])
    page.p(f"{len(df)} TCP sessions; metrics as defined in the README, section “Trace analysis”.")
    head = ["session", "capture", "client → server", "packets", "data MB", "duration s", "throughput Mbit/s",
            "retx %", "dup ACK %", "out-of-order", "RTT median ms"]
    nan = float("nan")
    rows = [
        [r.session_id, Path(r.path).name, f"{r.client_ip}:{r.client_port} → {r.server_ip}:{r.server_port}", r.packets,
         r.data_bytes / 1e6, r.duration_s, r.throughput_bps / 1e6, 100 * r.retx_ratio, 100 * r.dup_ack_ratio,
         r.out_of_order, r.rtt_median_ms if r.rtt_median_ms is not None else nan]
        for r in df.head(max_sessions).itertuples()
    ]
    page.raw(_table(rows, head, left=3))
    if len(df) > max_sessions:
        page.p(f"{len(df) - max_sessions} more sessions in {db}.")
    buf = io.BytesIO()
    top = int(df.iloc[0].session_id)
    trace.time_sequence_graph(db, top, out=buf)
    page.figures = 100  # numbered after the page's own figures: see _trace_section_for_run
    page.figure(buf.getvalue(), f"Time-sequence graph of session {top}: data segments, ACK and ACK + receive-window "
                                "lines; retransmissions and duplicate ACKs in red.")
    return page.blocks


def render_trace(db: str | os.PathLike[str]) -> str:
    """A report page of a trace database: its "Trace analysis" section alone."""
    page = _Page(f"rantcp · trace analysis · {Path(db).name}")
    for b in trace_blocks(db):
        page.raw(b)
    return page.html()


def _trace_section_for_run(page: _Page, folder: Path) -> None:
    """Add the trace section of a run folder that wrote pcaps (analysed into a temporary database)."""
    import tempfile

    if not any((folder / "pcap").glob("*.pcap")):
        return
    from rantcp import trace

    with tempfile.TemporaryDirectory() as tmp:
        trace.ingest([folder / "pcap"], Path(tmp) / "trace.duckdb")
        for b in trace_blocks(Path(tmp) / "trace.duckdb"):
            if b["kind"] == "figure":
                page.figures += 1
                b = {**b, "number": page.figures}
            page.raw(b)
