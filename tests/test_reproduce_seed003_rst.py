"""Seed 003 chapter 4 (wasted video traffic, the TCP RST tracker): the video client and the
tracker through the CLI (determinism, counters that must agree, bad input), the reproduction's
definition, and `rantcp reproduce seed-003-rst --quick` end to end."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from rantcp import reproductions

from conftest import run_cli
from reproduce_helpers import drawn_figures, run_quick


VIDEO = """scenario = "lte-cell"
duration = "15s"
ues = 4
[flow]
app = "video"
request = "400B"
[flow.video]
preset = "ios"
ues = 2
get_interval = "3s"
"""


def _run(tmp_path: Path, name: str, *sets: str) -> dict:
    cfg = tmp_path / "video.toml"
    cfg.write_text(VIDEO)
    args = [x for s in sets for x in ("--set", s)]
    p = run_cli("run", str(cfg), *args, "--out", str(tmp_path / name))
    assert p.returncode == 0, p.stderr[-2000:]
    s = json.loads((tmp_path / name / "summary.json").read_text())
    s.pop("wall")
    return s


def test_video_and_tracker_runs_are_deterministic_and_their_counters_agree(tmp_path: Path):
    a = _run(tmp_path, "a", "functions.rst_tracker.enabled=true")
    b = _run(tmp_path, "b", "functions.rst_tracker.enabled=true")
    assert a == b
    off = _run(tmp_path, "off")
    video = [f for f in a["flows"] if f["app"] == "video"]
    assert [f["name"] for f in video] == ["ue1", "ue2"]
    assert [f["app"] for f in a["flows"][2:]] == ["bulk", "bulk"]
    t = a["functions"]["rst_tracker"]
    # Every RST the eNB saw is one a video client sent (and reached the eNB by the end).
    assert 0 < t["rsts_seen"] <= sum(f["video_rsts_sent"] for f in video)
    # What the tracker purged or dropped each would have drawn a RST.
    assert t["rsts_avoided"] == t["purged_packets"] + t["dropped_packets"]
    assert t["purged_bytes"] + t["dropped_bytes"] > 0
    # Without the tracker the clients discard more bytes and send more RSTs.
    video_off = [f for f in off["flows"] if f["app"] == "video"]
    late = lambda fs: sum(f["video_late_discarded_bytes"] for f in fs)  # noqa: E731
    rsts = lambda fs: sum(f["video_rsts_sent"] for f in fs)  # noqa: E731
    assert late(video) < late(video_off) and rsts(video) < rsts(video_off)
    for f in video:
        assert f["video_received_bytes"] == f["video_read_bytes"] + f["video_discarded_bytes"]
    assert "functions" not in off or "rst_tracker" not in off["functions"]


@pytest.mark.parametrize(
    "setting, message",
    [
        ("functions.rst_tracker.hold=61s", "functions.rst_tracker.hold: must be between 0s and 60s"),
        ("flow.video.new_connection=1.5", "flow.video.new_connection: must be between 0 and 1"),
        ("flow.video.preset=windows", "flow.video.preset"),
        ("functions.rst_tracker.purge=true", "functions.rst_tracker"),
    ],
)
def test_bad_config_is_one_line_naming_the_field(tmp_path: Path, setting: str, message: str):
    cfg = tmp_path / "video.toml"
    cfg.write_text(VIDEO)
    p = run_cli("run", str(cfg), "--set", setting, "--out", str(tmp_path / "x"))
    assert p.returncode == 2
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("rantcp: error: ") and message in lines[0], p.stderr


def test_seed_003_rst_definition_is_consistent():
    r = reproductions.load("seed-003-rst")
    sweeps = {s.name: s for s in r.sweeps}
    assert set(sweeps) == {"rst", "hold"}
    s = sweeps["rst"]
    assert s.data["axes"] == {
        "flow.video.preset": ["ios", "android"],
        "flow.video.get_interval": ["2.5s", "10s", "30s"],
        "functions.rst_tracker.enabled": [False, True],
    }
    assert s.data["set"]["flow.video.ues"] == 5 and s.data["set"]["ues"] == 10
    # The hold sweep runs on the same drops as sweep rst (its tracker-off runs are the baseline).
    h = sweeps["hold"].data
    assert h["axes"] == {"functions.rst_tracker.hold": ["0s", "100ms", "500ms", "2s"]}
    assert (h["sweep"]["seed"], h["sweep"]["repetitions"]) == (s.data["sweep"]["seed"], s.data["sweep"]["repetitions"])
    for k, v in s.data["set"].items():
        if k != "functions.rst_tracker.hold":
            assert h["set"][k] == v, k
    papers = {c.id: c.paper for c in r.claims}
    assert papers["ios-discard-11-13pct"] == 12 and papers["bytes-per-get-320kB"] == 320
    assert papers["discarded-per-get-52kB"] == 52
    assert papers["saving-up-to-35pct"] == 35 and papers["saving-about-10pct-avg"] == 10
    assert [f.where for f in r.figures][0] == "Table 3"


@pytest.mark.timeout(120)
def test_reproduce_seed_003_rst_quick(tmp_path: Path):
    out = tmp_path / "seed-003-rst"
    r, _, m = run_quick("seed-003-rst", out)
    drawn_figures(r, out)
    assert all(c.quick for c in r.claims)
    assert m["runs"] == 8  # 2 presets x tracker off/on at the 10 s gap, 4 holds
    pts = pd.read_csv(out / "figures" / "points.csv")
    ios = pts[pts["preset"] == "ios"].iloc[0]
    # The tracker removes most of the iOS-like client's waste and RSTs.
    assert ios["discard_on_pct"] < ios["discard_off_pct"] and ios["rst_cut_pct"] > 50
    # The hold sweep's 2 s run is the rst sweep's tracker-on run (same drop, same config).
    hold = pd.read_csv(out / "figures" / "hold.csv").set_index("x")["mean"]
    assert hold[2.0] == pytest.approx(ios["saving_pct"], abs=0.005)
