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

# 10 Gbit/s links for 20 minutes: estimated as if every link were full (4e9 packets, above the
# 2e9 bound), while the flow is a 10 kB download that ends at once, so the forced run is short.
IDLE = {
    "access.rate": "10Gbps",
    "bottleneck.rate": "10Gbps",
    "flow.app": "download",
    "flow.bytes": "10kB",
    "duration": "1200s",
    "output.sample_interval": "10s",
}
SETS = [a for k, v in IDLE.items() for a in ("--set", f"{k}={v}")]


def test_absurd_run_is_refused_before_it_starts(cli, tmp_path: Path):
    out = tmp_path / "huge"
    t0 = time.perf_counter()
    r = cli("run", "builtin:p2p-bulk", *SETS, "--out", str(out))
    assert time.perf_counter() - t0 < 10
    assert r.returncode == 2, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in r.stderr, r.stderr
    assert lines[0].startswith("rantcp: error: duration: this run is too large to start: about 4.0e9 "), lines[0]
    assert "at 10 Gbit/s" in lines[0] and "minutes to hours" in lines[0] and "--force" in lines[0], lines[0]
    assert list(tmp_path.iterdir()) == []


def test_force_runs_it(cli, tmp_path: Path):
    out = tmp_path / "huge"
    r = cli("run", "builtin:p2p-bulk", *SETS, "--force", "--quiet", "--out", str(out))
    assert r.returncode == 0, r.stderr
    assert (out / "summary.json").is_file()


def test_python_api_refuses_and_forces():
    def stepped(now: float, total: float) -> None:
        raise AssertionError(f"simulated to {now} s before refusing the run")

    # Refused before it starts: the progress callback (called after every step) never runs.
    with pytest.raises(rantcp.ConfigError, match="too large to start"):
        rantcp.run("builtin:p2p-bulk", overrides=IDLE, progress=stepped)
    assert rantcp.run("builtin:p2p-bulk", overrides=IDLE, force=True).summary["flows"][0]["bytes_delivered"] == 10_000


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
