"""Network functions from the command line: `[functions.impair]` switched on by `--set`, its
counters in summary.json and its time series in impair.parquet; bad values are one line, exit 2."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd


def test_impair_from_the_command_line_writes_counters_and_series(cli, tmp_path: Path):
    out = tmp_path / "run"
    r = cli(
        "run", "builtin:p2p-bulk", "--out", str(out), "--set", "duration=2s", "--set", "output.plots=false",
        "--set", "functions.impair.every=50", "--set", "functions.impair.direction=data",
    )
    assert r.returncode == 0, r.stderr
    summary = json.loads((out / "summary.json").read_text())
    imp = summary["functions"]["impair"]
    assert imp["site"] == "router" and imp["point"] == "forward"
    assert imp["dropped"] == imp["matched"] // 50 > 0
    series = pd.read_parquet(out / "impair.parquet")
    assert list(series.columns) == ["time_s", "matched", "dropped", "held"]
    assert len(series) == 20
    assert series["dropped"].is_monotonic_increasing


def test_functions_off_by_default(cli, tmp_path: Path):
    out = tmp_path / "run"
    r = cli("run", "builtin:p2p-bulk", "--out", str(out), "--set", "duration=1s", "--set", "output.plots=false")
    assert r.returncode == 0, r.stderr
    assert "functions" not in json.loads((out / "summary.json").read_text())
    assert not (out / "impair.parquet").exists()


def test_impair_at_a_radio_point_writes_counters_and_series(cli, tmp_path: Path):
    out = tmp_path / "run"
    r = cli(
        "run", "builtin:lte-cell", "--out", str(out), "--set", "duration=1s", "--set", "ues=2",
        "--set", "output.plots=false", "--set", "functions.impair.point=dl-ingress",
        "--set", "functions.impair.every=40", "--set", "functions.impair.direction=data",
    )
    assert r.returncode == 0, r.stderr
    summary = json.loads((out / "summary.json").read_text())
    imp = summary["functions"]["impair"]
    assert imp["site"] == "ran" and imp["point"] == "dl-ingress"
    assert imp["dropped"] == imp["matched"] // 40 > 0
    series = pd.read_parquet(out / "impair.parquet")
    assert list(series.columns) == ["time_s", "matched", "dropped", "held"]
    assert series["dropped"].is_monotonic_increasing and series["dropped"].iloc[-1] > 0


def test_bad_function_values_are_one_line_exit_2(cli):
    for scenario, args, needle in [
        ("lte-cell", ["--set", "functions.impair.loss=2"], "functions.impair.loss"),
        ("lte-cell", ["--set", "functions.impair.every=2", "--set", "functions.impair.node=nowhere"], "functions.impair.node"),
        ("p2p-bulk", ["--set", "functions.impair.every=2", "--set", "functions.impair.point=dl-ingress"], "functions.impair.point"),
        ("lte-cell", ["--set", "functions.impare.loss=0.1"], "functions.impare"),
    ]:
        r = cli("validate", f"builtin:{scenario}", *args)
        assert r.returncode == 2, (args, r.stderr)
        lines = r.stderr.strip().splitlines()
        assert len(lines) == 1 and needle in lines[0], r.stderr
