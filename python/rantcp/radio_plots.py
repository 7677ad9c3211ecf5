"""Plots of a radio run (seed 004 style): SINR, goodput and RTT over time with NLOS intervals
shaded, and per-cell PRB / PDCCH use.

Inputs are the run's ``radio`` table (one row per UE per sample: ``time_s``, ``ue``,
``sinr_db``, ``los`` …), ``flows`` table and ``cells`` table, as written by the Rust core
(pyarrow Tables or pandas DataFrames). Drawn with matplotlib's object API (see rantcp.plots).
"""

from __future__ import annotations

from pathlib import Path
from typing import IO, Any

from rantcp.labels import label
from rantcp.plots import col, columns, decimate, groups, new_figure, plain_numbers, save

MAX_UES = 4
"""UEs drawn in radio.png (the figure says how many of how many)."""


def nlos_intervals(t: Any, los: Any) -> list[tuple[float, float]]:
    """(start, end) times of runs of samples with los == 0; each sample covers the interval
    that ends at its time stamp. Empty when the link never changes state: a model without
    LOS/NLOS transitions (LTE's COST 231 is NLOS by construction) has nothing to shade."""
    ts = [float(v) for v in t]
    ls = [int(v) for v in los]
    if len(set(ls)) < 2:
        return []
    out: list[tuple[float, float]] = []
    start = None
    prev_t = 0.0
    for ti, li in zip(ts, ls):
        if li == 0 and start is None:
            start = prev_t
        if li != 0 and start is not None:
            out.append((start, prev_t))
            start = None
        prev_t = ti
    if start is not None:
        out.append((start, prev_t))
    return out


def radio_timeseries(radio: Any, flows: Any, title: str, path: str | Path | IO[bytes], max_ues: int = MAX_UES) -> None:
    """SINR (dB), goodput (Mbit/s) and smoothed RTT (ms) of the first ``max_ues`` UEs against
    time; the first UE's NLOS intervals shaded grey (only where its LOS state changes)."""
    fig, (ax_s, ax_g, ax_r) = new_figure(3, 1, figsize=(9, 7.5), sharex=True)
    ue_groups = groups(col(radio, "ue"))
    shown = ue_groups[:max_ues]
    t, sinr = col(radio, "time_s"), col(radio, "sinr_db")
    flow_rows = dict(groups(col(flows, "flow"))) if flows is not None and len(flows) else {}
    shaded = False
    for k, (ue, rows) in enumerate(shown):
        ax_s.plot(*decimate(t[rows], sinr[rows]), lw=0.8, label=str(ue))
        if k == 0 and "los" in columns(radio):
            for a, b in nlos_intervals(t[rows], col(radio, "los")[rows]):
                shaded = True
                for ax in (ax_s, ax_g, ax_r):
                    ax.axvspan(a, b, color="0.85", lw=0, zorder=0)
        frows = flow_rows.get(ue)
        if frows is not None:
            ft = col(flows, "time_s")[frows]
            ax_g.plot(*decimate(ft, col(flows, "goodput_bps")[frows] / 1e6), lw=1)
            srtt = col(flows, "srtt_ms")[frows]
            if len(srtt) and float(max(srtt)) > 0:
                ax_r.plot(*decimate(ft, srtt), lw=1)
    ax_s.set_ylabel(label("sinr_db"))
    ax_g.set_ylabel(label("goodput_mbps"))
    ax_r.set_ylabel(label("srtt_ms"))
    xlabel = label("time_s")
    if shaded:
        xlabel += f" — grey: NLOS of {shown[0][0]}"
    ax_r.set_xlabel(xlabel)
    n = len(ue_groups)
    which = f"{len(shown)} of {n} UEs shown" if n > len(shown) else (f"all {n} UEs" if n > 1 else "1 UE")
    ax_s.set_title(f"{title} — {which}")
    if len(shown) > 1:
        ax_s.legend(loc="lower right", fontsize="small")
    for a in (ax_s, ax_g, ax_r):
        a.grid(alpha=0.3)
        plain_numbers(a)
    save(fig, path)


def cell_usage(cells: Any, title: str, path: str | Path | IO[bytes]) -> None:
    """DL/UL PRB utilisation and PDCCH use per cell against time."""
    fig, (ax_p, ax_c) = new_figure(2, 1, figsize=(9, 5), sharex=True)
    t = col(cells, "time_s")
    dl, ul, pdcch = col(cells, "dl_prb_util"), col(cells, "ul_prb_util"), col(cells, "pdcch_util")
    for cell, rows in sorted(groups(col(cells, "cell")), key=lambda g: g[0]):
        ax_p.plot(*decimate(t[rows], dl[rows]), lw=1, label=f"cell {cell} DL")
        ax_p.plot(*decimate(t[rows], ul[rows]), lw=1, ls="--", label=f"cell {cell} UL")
        ax_c.plot(*decimate(t[rows], pdcch[rows]), lw=1, label=f"cell {cell}")
    ax_p.set_ylabel("PRB utilisation")
    ax_c.set_ylabel(label("pdcch_util"))
    ax_c.set_xlabel(label("time_s"))
    ax_p.set_title(title)
    ax_p.legend(fontsize="small", ncol=2)
    for a in (ax_p, ax_c):
        a.grid(alpha=0.3)
    save(fig, path)


def radio_run_plots(pdir: Path, summary: dict[str, Any], tables: Any) -> list[Path]:
    """The radio plots of a run folder (nothing when the run has no radio table)."""
    radio = tables.get("radio")
    if radio is None or not len(radio):
        return []
    title = f"{summary['scenario']} (seed {summary['seed']})"
    written = [pdir / "radio.png"]
    radio_timeseries(radio, tables.get("flows"), title, written[0])
    cells = tables.get("cells")
    if cells is not None and len(cells):
        written.append(pdir / "cells.png")
        cell_usage(cells, title, written[-1])
    return written
