"""Plots and report figures: decimation, units, labels, NLOS shading, intervals, log axes, the
radio section and seeds without separators (issue 20, "Reports and plots")."""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import rantcp
from rantcp import labels, plots, radio_plots, report, sweep_plots
from rantcp.sweeps import stats


def test_decimate_keeps_envelope_and_short_series():
    xi = np.arange(10)
    y = np.arange(10.0)
    dx, dy = plots.decimate(xi, y, max_points=20)
    assert dx.tolist() == xi.tolist() and dy.tolist() == y.tolist()
    x = np.arange(100_000) / 1000.0
    y = np.sin(x)
    y[54_321] = 7.0  # a spike survives
    y[12_345] = -9.0
    dx, dy = plots.decimate(x, y, max_points=2000)
    assert len(dx) <= 2000
    assert dy.max() == 7.0 and dy.min() == -9.0
    assert np.all(np.diff(dx) > 0)  # time order kept
    assert dx[0] == 0.0


def test_groups_in_first_appearance_order():
    g = plots.groups(np.array(["b", "a", "b", "c", "a"], dtype=object))
    assert [(k, rows.tolist()) for k, rows in g] == [("b", [0, 2]), ("a", [1, 4]), ("c", [3])]


def test_byte_unit():
    assert plots.byte_unit(5_000) == (1.0, "B")
    assert plots.byte_unit(64_000) == (1e3, "kB")
    assert plots.byte_unit(3.7e6) == (1e3, "kB")
    assert plots.byte_unit(25e6) == (1e6, "MB")
    assert plots.byte_unit(2e11) == (1e9, "GB")


def test_labels():
    assert labels.label("goodput_mbps") == "goodput (Mbit/s)"
    assert labels.label("flow0.rtt_mean_ms") == "mean RTT (ms)"
    assert labels.label("queue_drops") == "queue drops"
    assert labels.label("dl_phy_mbps") == "dl phy (Mbit/s)"
    assert labels.label("flow.cc") == "congestion control"
    assert labels.label("radio.isd_m") == "radio.isd_m"  # an unlisted config path as typed
    assert labels.bounds("goodput_mbps") == (0.0, None) and labels.bounds("jain_goodput") == (0.0, 1.0)
    assert labels.log_scale("bottleneck.loss") and not labels.log_scale("bottleneck.rate")


def test_interval_points_below_five_and_clipped_t_interval():
    mean, lo, hi, n = stats.interval([1.0, 3.0])
    assert (mean, n) == (2.0, 2) and math.isnan(lo) and math.isnan(hi)
    # n = 5: mean 2, s = sqrt(2.5), t(0.975, 4) = 2.776 -> 2 +- 1.9630; clipped at 0 below.
    mean, lo, hi, n = stats.interval([0.0, 1.0, 2.0, 3.0, 4.0], lower=0.5)
    assert mean == 2.0 and n == 5
    assert hi == pytest.approx(2 + 2.776 * math.sqrt(2.5) / math.sqrt(5))
    assert lo == 0.5
    assert stats.interval([float("nan"), None, 1.0])[3] == 1


def test_interval_text():
    assert stats.interval_text([]) == "–"
    assert stats.interval_text([5.0]) == "5"
    assert stats.interval_text([1.0, 3.0]) == "2 (1–3)"
    assert stats.interval_text([0.1, 0.1, 0.1, 0.1, 9.0], lower=0.0) == "1.88 [0, 6.821]"  # 1.88 + 2.776 * 4.9749 / sqrt(5); the low end clipped at 0


def test_nlos_intervals_only_where_the_state_changes():
    t = [0.1, 0.2, 0.3, 0.4, 0.5]
    assert radio_plots.nlos_intervals(t, [0, 0, 0, 0, 0]) == []  # LTE: NLOS by model, nothing to shade
    assert radio_plots.nlos_intervals(t, [1, 1, 1, 1, 1]) == []
    assert radio_plots.nlos_intervals(t, [1, 0, 0, 1, 0]) == [(0.1, 0.3), (0.4, 0.5)]


def _captured(monkeypatch, module) -> list:
    figs: list = []
    monkeypatch.setattr(module, "save", lambda fig, path, dpi=110: figs.append(fig))
    return figs


def test_radio_plot_says_how_many_ues_and_lte_has_no_nlos_shading(monkeypatch):
    figs = _captured(monkeypatch, radio_plots)
    r = rantcp.run("builtin:lte-cell", seed=2, overrides={"duration": "1s", "ues": 6})
    radio_plots.radio_timeseries(r.timeseries.arrow("radio"), r.timeseries.arrow("flows"), "t", "unused.png")
    ax_s, ax_g, ax_r = figs[0].axes
    assert ax_s.get_title() == "t — 4 of 6 UEs shown"
    assert len(ax_s.get_lines()) == 4
    assert not ax_s.patches and "NLOS" not in ax_r.get_xlabel()
    assert ax_s.get_ylabel() == "SINR (dB)"
    b = rantcp.run("builtin:mmwave-blockage", seed=1, overrides={"duration": "2s", "ue.los_duration": "500ms", "ue.nlos_duration": "500ms"})
    radio_plots.radio_timeseries(b.timeseries.arrow("radio"), b.timeseries.arrow("flows"), "t", "unused.png")
    ax_s, _, ax_r = figs[1].axes
    los = b.timeseries["radio"]
    expected = radio_plots.nlos_intervals(los["time_s"], los["los"])
    assert expected and len(ax_s.patches) == len(expected)
    assert ax_s.get_title() == "t — 1 UE" and "grey: NLOS of ue1" in ax_r.get_xlabel()


def test_cwnd_axis_in_readable_units(monkeypatch):
    figs = _captured(monkeypatch, plots)
    r = rantcp.run("builtin:p2p-bulk", overrides={"duration": "3s", "bottleneck.rate": "1Gbps"})
    plots.flow_timeseries(r.timeseries.arrow("flows"), "t", "unused.png")
    fig = figs[0]
    fig.canvas.draw()
    ax_c = fig.axes[1]
    assert ax_c.get_ylabel() in ("congestion window (kB)", "congestion window (MB)")
    assert ax_c.yaxis.get_offset_text().get_text() == ""  # no "1e6" above the axis
    assert fig.axes[0].get_ylabel() == "goodput (Mbit/s)"


def test_metric_vs_axis_labels_log_loss_and_dots_for_few_repetitions():
    df = pd.DataFrame(
        {
            "status": ["ok"] * 6,
            "bottleneck.loss": [0.0, 0.0, 1e-4, 1e-4, 1e-3, 1e-3],
            "goodput_mbps": [48.0, 47.0, 30.0, 31.0, 10.0, 12.0],
        }
    )
    fig = sweep_plots.metric_vs_axis(df, "goodput_mbps", "bottleneck.loss")
    ax = fig.axes[0]
    assert ax.get_xscale() == "symlog"  # loss is logarithmic; 0 sits in the linear part
    assert ax.get_xlabel() == "bottleneck loss probability" and ax.get_ylabel() == "goodput (Mbit/s)"
    assert not ax.collections[0].get_offsets().tolist() == []  # the repetitions as dots
    assert len(ax.collections[0].get_offsets()) == 6
    assert ax.get_ylim()[0] == 0.0
    # With five repetitions: a band, never below 0 although the t interval would be.
    five = pd.DataFrame({"status": ["ok"] * 10, "x": [1] * 5 + [2] * 5, "goodput_mbps": [0.1, 0.1, 0.1, 0.1, 9.0, 5, 5, 5, 5, 5.5]})
    fig = sweep_plots.metric_vs_axis(five, "goodput_mbps", "x")
    band = fig.axes[0].collections[0]
    ys = band.get_paths()[0].vertices[:, 1]
    assert ys.min() >= 0.0


def test_radio_run_report_has_radio_section_and_plain_seeds(tmp_path: Path):
    seed = 8375576346411456744
    rantcp.run("builtin:lte-cell", seed=seed, overrides={"duration": "1s", "ues": 5}, out=tmp_path / "r")
    text = report.render_run(tmp_path / "r")
    assert "<h2>Radio</h2>" in text and "Radio: ues" in text and "Radio: cells" in text
    assert "SINR, goodput and smoothed RTT over time of 4 of 5 UEs" in text
    assert str(seed) in text and "8,375" not in text
    assert "<h2>Radio</h2>" not in report.render_run(_p2p(tmp_path))


def _p2p(tmp_path: Path) -> Path:
    out = tmp_path / "p2p"
    rantcp.run("builtin:p2p-bulk", overrides={"duration": "1s"}, out=out)
    return out


def test_run_report_of_an_empty_time_series(tmp_path: Path):
    rantcp.run("builtin:p2p-bulk", overrides={"duration": "1s", "output.sample_interval": "2s"}, out=tmp_path / "r")
    text = report.render_run(tmp_path / "r")
    assert "No time-series samples: output.sample_interval (2s) is longer than the run" in text


def test_sweep_report_table_uses_labels_and_ranges_for_two_repetitions(tmp_path: Path):
    spec = {
        "sweep": {"name": "two", "scenario": "builtin:p2p-bulk", "repetitions": 2, "seed": 3},
        "set": {"duration": "1s", "bottleneck.loss": 1e-2},
        "axes": {"flow.cc": ["newreno", "bbr"]},
    }
    df = rantcp.sweep(spec, out=tmp_path / "sw", workers=1)
    text = report.render_sweep(tmp_path / "sw")
    results = text.split("<h2>Results over repetitions</h2>", 1)[1].split("<h2>", 1)[0]
    assert "goodput (Mbit/s)" in results and "goodput_mbps" not in results  # the runs table keeps column names
    nr = df[df["flow.cc"] == "newreno"]["goodput_mbps"]
    lo, hi = report._fmt(float(nr.min())), report._fmt(float(nr.max()))
    assert f"({lo}–{hi})" in text  # the range of the two repetitions, not a t interval
    assert "±" not in text
    for s in df["seed"]:
        assert str(int(s)) in text
    assert not re.search(r"\d,\d{3},\d{3},\d{3}", text)  # no seed with separators
