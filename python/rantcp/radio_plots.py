"""Plots of a radio run (seed 004 style): SINR, goodput and RTT over time with NLOS intervals
shaded, and per-cell PRB / PDCCH use.

Inputs are the run's ``radio`` table (one row per UE per sample: ``time_s``, ``ue``,
``sinr_db``, ``los`` …), ``flows`` table and ``cells`` table, as written by the Rust core.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd


def _nlos_intervals(t: pd.Series, los: pd.Series) -> list[tuple[float, float]]:
    """(start, end) times of runs of samples with los == 0; each sample covers the interval
    that ends at its time stamp."""
    out: list[tuple[float, float]] = []
    ts = list(t)
    ls = list(los)
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


def radio_timeseries(radio: pd.DataFrame, flows: pd.DataFrame | None, title: str, path: Path, max_ues: int = 4) -> Path:
    """SINR (dB), goodput (Mbit/s) and smoothed RTT (ms) of up to ``max_ues`` UEs against time;
    the first UE's NLOS intervals shaded grey."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax_s, ax_g, ax_r) = plt.subplots(3, 1, figsize=(9, 7.5), sharex=True)
    ues = list(dict.fromkeys(radio["ue"]))[:max_ues]
    for k, ue in enumerate(ues):
        r = radio[radio["ue"] == ue]
        ax_s.plot(r["time_s"], r["sinr_db"], lw=0.8, label=str(ue))
        if k == 0 and "los" in r:
            for a, b in _nlos_intervals(r["time_s"], r["los"]):
                for ax in (ax_s, ax_g, ax_r):
                    ax.axvspan(a, b, color="0.85", lw=0, zorder=0)
        if flows is not None and len(flows):
            f = flows[flows["flow"] == ue]
            if len(f):
                ax_g.plot(f["time_s"], f["goodput_bps"] / 1e6, lw=1)
                if f["srtt_ms"].max() > 0:
                    ax_r.plot(f["time_s"], f["srtt_ms"], lw=1)
    ax_s.set_ylabel("SINR (dB)")
    ax_g.set_ylabel("goodput (Mbit/s)")
    ax_r.set_ylabel("sRTT (ms)")
    ax_r.set_xlabel("time (s)  — grey: NLOS")
    ax_s.set_title(title)
    if len(ues) > 1:
        ax_s.legend(loc="lower right", fontsize="small")
    for a in (ax_s, ax_g, ax_r):
        a.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110, metadata={"Software": None})
    plt.close(fig)
    return path


def cell_usage(cells: pd.DataFrame, title: str, path: Path) -> Path:
    """DL/UL PRB utilisation and PDCCH use per cell against time."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax_p, ax_c) = plt.subplots(2, 1, figsize=(9, 5), sharex=True)
    for cell, c in cells.groupby("cell", sort=True):
        ax_p.plot(c["time_s"], c["dl_prb_util"], lw=1, label=f"cell {cell} DL")
        ax_p.plot(c["time_s"], c["ul_prb_util"], lw=1, ls="--", label=f"cell {cell} UL")
        ax_c.plot(c["time_s"], c["pdcch_util"], lw=1, label=f"cell {cell}")
    ax_p.set_ylabel("PRB utilisation")
    ax_c.set_ylabel("PDCCH use (of budget)")
    ax_c.set_xlabel("time (s)")
    ax_p.set_title(title)
    ax_p.legend(fontsize="small", ncol=2)
    for a in (ax_p, ax_c):
        a.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110, metadata={"Software": None})
    plt.close(fig)
    return path


def radio_run_plots(pdir: Path, summary: dict[str, Any], frames: dict[str, pd.DataFrame]) -> list[Path]:
    """The radio plots of a run folder (nothing when the run has no radio table)."""
    radio = frames.get("radio")
    if radio is None or not len(radio):
        return []
    title = f"{summary['scenario']} (seed {summary['seed']})"
    written = [radio_timeseries(radio, frames.get("flows"), title, pdir / "radio.png")]
    cells = frames.get("cells")
    if cells is not None and len(cells):
        written.append(cell_usage(cells, title, pdir / "cells.png"))
    return written
