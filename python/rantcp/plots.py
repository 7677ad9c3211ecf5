"""Plots of a run: goodput, congestion window and RTT over time, one line per flow."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from .radio_plots import radio_run_plots


def _figure(nrows: int = 1):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(nrows, 1, figsize=(8, 2.6 * nrows), sharex=True, squeeze=False)
    return plt, fig, [a[0] for a in axes]


def flow_timeseries(df: pd.DataFrame, title: str, path: Path) -> Path:
    """Three stacked panels (goodput Mbit/s, cwnd kB, smoothed RTT ms) against time."""
    plt, fig, (ax_g, ax_c, ax_r) = _figure(3)
    for name, g in df.groupby("flow", sort=False):
        ax_g.plot(g["time_s"], g["goodput_bps"] / 1e6, label=str(name), lw=1)
        ax_c.plot(g["time_s"], g["cwnd_bytes"] / 1e3, lw=1)
        ax_r.plot(g["time_s"], g["srtt_ms"], lw=1)
    ax_g.set_ylabel("goodput (Mbit/s)")
    ax_c.set_ylabel("cwnd (kB)")
    ax_r.set_ylabel("sRTT (ms)")
    ax_r.set_xlabel("time (s)")
    ax_g.set_title(title)
    if df["flow"].nunique() <= 8:
        ax_g.legend(loc="lower right", fontsize="small")
    for a in (ax_g, ax_c, ax_r):
        a.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110, metadata={"Software": None})
    plt.close(fig)
    return path


def side_by_side(df: pd.DataFrame, summary: dict[str, Any], title: str, path: Path) -> Path:
    """Goodput (left) and smoothed RTT (right) against time, one line per flow or variant,
    with each flow's mean goodput in the legend."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    means = {f["name"]: f.get("goodput_mbps") for f in summary["flows"]}
    fig, (ax_g, ax_r) = plt.subplots(1, 2, figsize=(12, 4))
    for name, g in df.groupby("flow", sort=False):
        label = f"{name} ({means.get(name, float('nan')):.1f} Mbit/s)"
        ax_g.plot(g["time_s"], g["goodput_bps"] / 1e6, label=label, lw=1)
        if g["srtt_ms"].max() > 0:
            ax_r.plot(g["time_s"], g["srtt_ms"], label=str(name), lw=1)
    ax_g.set_xlabel("time (s)")
    ax_g.set_ylabel("goodput (Mbit/s)")
    ax_r.set_xlabel("time (s)")
    ax_r.set_ylabel("sRTT (ms)")
    ax_g.legend(fontsize="small")
    ax_r.legend(fontsize="small")
    for a in (ax_g, ax_r):
        a.grid(alpha=0.3)
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=110, metadata={"Software": None})
    plt.close(fig)
    return path


def run_plots(out: Path, summary: dict[str, Any], frames: dict[str, pd.DataFrame]) -> list[Path]:
    """Write every plot of a run folder into ``out/plots``; returns the files written."""
    pdir = out / "plots"
    pdir.mkdir(exist_ok=True)
    written: list[Path] = []
    flows = frames.get("flows")
    if flows is not None and len(flows):
        title = f"{summary['scenario']} (seed {summary['seed']})"
        written.append(flow_timeseries(flows, title, pdir / "flows.png"))
        if summary["scenario"] == "cc-compare":
            written.append(side_by_side(flows, summary, title, pdir / "cc-compare.png"))
    written.extend(radio_run_plots(pdir, summary, frames))
    return written
