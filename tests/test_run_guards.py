"""What keeps a long or absurd run from costing a user (issue 20): the work estimate refuses a
run that would take minutes to hours for a simulated second before it starts (unless
``--force``), and Ctrl-C stops a long run at once without leaving a partial folder."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import rantcp

# A 100 Tbit/s bottleneck behind a 1 Gbit/s access link: estimated as if the bottleneck were
# full (3.3e9 packets over 0.2 s, above the 2e9 bound), while TCP cannot send faster than the
# access link, so the forced run is short.
HUGE = ["--set", "bottleneck.rate=100 Tbps", "--set", "bottleneck.delay=1ms", "--set", "duration=0.2s"]


def test_absurd_run_is_refused_before_it_starts(cli, tmp_path: Path):
    out = tmp_path / "huge"
    t0 = time.perf_counter()
    r = cli("run", "builtin:p2p-bulk", *HUGE, "--out", str(out))
    assert time.perf_counter() - t0 < 10
    assert r.returncode == 2, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in r.stderr, r.stderr
    assert lines[0].startswith("rantcp: error: duration: this run is too large to start: about 3.3e9 "), lines[0]
    assert "at 100 Tbit/s" in lines[0] and "minutes to hours" in lines[0] and "--force" in lines[0], lines[0]
    assert list(tmp_path.iterdir()) == []


def test_force_runs_it(cli, tmp_path: Path):
    out = tmp_path / "huge"
    r = cli("run", "builtin:p2p-bulk", *HUGE, "--force", "--quiet", "--out", str(out))
    assert r.returncode == 0, r.stderr
    assert (out / "summary.json").is_file()


def test_python_api_refuses_and_forces():
    ov = {"bottleneck.rate": "100 Tbps", "bottleneck.delay": "1ms", "duration": "0.2s"}
    with pytest.raises(rantcp.ConfigError, match="too large to start"):
        rantcp.run("builtin:p2p-bulk", overrides=ov)
    assert rantcp.run("builtin:p2p-bulk", overrides=ov, force=True).summary["flows"][0]["bytes_delivered"] > 0


def test_ctrl_c_stops_a_long_run_at_once_and_leaves_no_folder(tmp_path: Path):
    out = tmp_path / "long"
    # 10 minutes of lte-cell sampled every millisecond: time series are being written when the
    # signal comes.
    cmd = [sys.executable, "-m", "rantcp.cli", "run", "builtin:lte-cell", "--quiet", "--set", "duration=600s"]
    cmd += ["--set", "output.sample_interval=1ms", "--out", str(out)]
    p = subprocess.Popen(cmd, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 60
    while time.time() < deadline and not any(tmp_path.iterdir()):
        time.sleep(0.05)
    partial = next(tmp_path.iterdir())
    while time.time() < deadline and not list(partial.glob("*.parquet")):
        time.sleep(0.05)
    assert list(partial.glob("*.parquet")), "the run writes its time series as it goes"
    t0 = time.perf_counter()
    p.send_signal(signal.SIGINT)
    _, err = p.communicate(timeout=60)
    took = time.perf_counter() - t0
    assert took < 2.0, f"Ctrl-C took {took:.2f} s (the core is stepped in ~0.1 s chunks)"
    assert p.returncode == 130, err
    assert err.strip().splitlines() == ["rantcp: interrupted"], err
    assert list(tmp_path.iterdir()) == []
