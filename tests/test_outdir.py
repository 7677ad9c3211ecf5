"""`--out` never deletes what rantcp did not write; bad targets are one line, exit 2, before
the simulation; runs land atomically (issue: "Never lose a user's files")."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import rantcp
from rantcp.outdir import MARKER, is_run_folder

SHORT = ["--set", "duration=1s", "--set", "output.plots=false"]


def _one_line_exit_2(r: subprocess.CompletedProcess[str], needle: str) -> None:
    assert r.returncode == 2, (r.returncode, r.stderr)
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    assert needle in lines[0], lines[0]
    assert "Traceback" not in r.stderr


def test_non_run_folder_is_refused_and_untouched(cli, tmp_path: Path):
    v = tmp_path / "v"
    (v / "sub").mkdir(parents=True)
    (v / "notes.txt").write_text("precious")
    r = cli("run", "builtin:p2p-bulk", *SHORT, "--out", str(v))
    _one_line_exit_2(r, "not a rantcp run folder")
    assert (v / "notes.txt").read_text() == "precious"
    assert (v / "sub").is_dir()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["v"]  # no staging folder left


def test_run_folder_with_a_user_file_is_not_a_run_folder(cli, tmp_path: Path):
    out = tmp_path / "run"
    assert cli("run", "builtin:p2p-bulk", *SHORT, "--out", str(out)).returncode == 0
    assert is_run_folder(out)
    (out / "my-notes.txt").write_text("mine")
    assert not is_run_folder(out)
    r = cli("run", "builtin:p2p-bulk", *SHORT, "--out", str(out))
    _one_line_exit_2(r, "not a rantcp run folder")
    assert (out / "my-notes.txt").read_text() == "mine"


def test_sweep_folder_is_refused(cli, tmp_path: Path):
    sw = tmp_path / "sw"
    (sw / "runs" / "abc").mkdir(parents=True)
    (sw / "sweep.duckdb").write_bytes(b"db")
    (sw / "runs" / "abc" / "summary.json").write_text("{}")
    r = cli("run", "builtin:p2p-bulk", *SHORT, "--out", str(sw))
    _one_line_exit_2(r, "not a rantcp run folder")
    assert (sw / "sweep.duckdb").read_bytes() == b"db"


def test_parent_and_current_folder_are_refused(cli, tmp_path: Path):
    sub = tmp_path / "a" / "b"
    sub.mkdir(parents=True)
    (tmp_path / "a" / "keep.txt").write_text("k")
    for target in ("..", "."):
        r = cli("run", "builtin:p2p-bulk", *SHORT, "--out", target, cwd=sub)
        _one_line_exit_2(r, "current folder")
    assert (tmp_path / "a" / "keep.txt").read_text() == "k"


# A day of p2p-bulk (the longest run a config allows; --force: above the work bound), and the
# same run cut to its 24th. A bad --out must be refused before the simulation, so the refused day
# costs less than the hour actually simulated, on any machine (here: ~0.1 s against ~5 s; a
# refusal after the simulation would cost the whole day, ~2 min). An absolute "< 20 s" stood
# here: it held on a slow machine but did not tell the two apart, since 600 s of p2p-bulk
# simulate in 0.8 s here.
DAY = ["run", "builtin:p2p-bulk", "--set", "duration=86400s", "--set", "output.plots=false", "--force", "--quiet"]


@pytest.fixture(scope="module")
def hour_wall_s(tmp_path_factory: pytest.TempPathFactory) -> float:
    """Wall seconds of the same command simulating 1/24 of the day into a good folder."""
    from conftest import run_cli

    out = tmp_path_factory.mktemp("hour") / "run"
    t0 = time.perf_counter()
    r = run_cli(*DAY, "--set", "duration=3600s", "--out", str(out))
    took = time.perf_counter() - t0
    assert r.returncode == 0, r.stderr
    return took


@pytest.mark.parametrize("target", ["FILE", "/dev/null", "/proc/rantcp-nope/x", ""])
def test_bad_targets_fail_before_simulating(cli, tmp_path: Path, target: str, hour_wall_s: float):
    if target == "FILE":
        f = tmp_path / "afile"
        f.write_text("data")
        target = str(f)
    t0 = time.perf_counter()
    r = cli(*DAY, "--out", target)
    took = time.perf_counter() - t0
    _one_line_exit_2(r, "--out")
    assert took < hour_wall_s, f"refused in {took:.2f} s, but an hour of the run takes {hour_wall_s:.2f} s"
    if target.endswith("afile"):
        assert Path(target).read_text() == "data"


@pytest.mark.parametrize("target", ["FILE", "/dev/null", "/proc/rantcp-nope/x"])
def test_api_bad_targets_fail_before_simulating(tmp_path: Path, target: str):
    """The API refuses them before its first step: the progress callback, called after every
    step, is never called (on the first call it stops the run, so a regression fails at once)."""
    if target == "FILE":
        f = tmp_path / "afile"
        f.write_text("data")
        target = str(f)

    def stepped(now: float, total: float) -> None:
        raise AssertionError(f"simulated to {now} s before refusing --out {target!r}")

    with pytest.raises(rantcp.ConfigError, match="--out"):
        rantcp.run("builtin:p2p-bulk", overrides={"duration": "86400s"}, out=target, force=True, progress=stepped)
    if target.endswith("afile"):
        assert Path(target).read_text() == "data"


def test_previous_run_folder_is_replaced_whole(cli, tmp_path: Path):
    out = tmp_path / "run"
    assert cli("run", "builtin:p2p-bulk", *SHORT, "--seed", "1", "--out", str(out), "--set", "output.pcap=true").returncode == 0
    assert (out / "pcap").is_dir()
    assert (out / MARKER).is_file()
    assert cli("run", "builtin:p2p-bulk", *SHORT, "--seed", "2", "--out", str(out)).returncode == 0
    assert json.loads((out / "summary.json").read_text())["seed"] == 2
    assert not (out / "pcap").exists()  # nothing of the old run mixed in
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run"]


def test_empty_folder_is_used(cli, tmp_path: Path):
    out = tmp_path / "empty"
    out.mkdir()
    assert cli("run", "builtin:p2p-bulk", *SHORT, "--out", str(out)).returncode == 0
    assert (out / "summary.json").is_file()


def test_api_run_refuses_a_non_run_folder(tmp_path: Path):
    (tmp_path / "notes.txt").write_text("precious")
    with pytest.raises(rantcp.ConfigError, match="not a rantcp run folder"):
        rantcp.run("builtin:p2p-bulk", overrides={"duration": "1s"}, out=tmp_path)
    assert (tmp_path / "notes.txt").read_text() == "precious"


def test_two_runs_into_one_folder_leave_exactly_one_run(tmp_path: Path):
    out = tmp_path / "shared"
    cmd = [sys.executable, "-m", "rantcp.cli", "run", "builtin:p2p-bulk", "--quiet", "--set", "duration=5s", "--set", "output.plots=false", "--out", str(out)]
    procs = [subprocess.Popen([*cmd, "--seed", str(s)], stderr=subprocess.PIPE, text=True) for s in (11, 12)]
    errs = [p.communicate(timeout=300)[1] for p in procs]
    assert [p.returncode for p in procs] == [0, 0], errs
    summary = json.loads((out / "summary.json").read_text())
    assert summary["seed"] in (11, 12)
    import pandas as pd

    flows = pd.read_parquet(out / "flows.parquet")
    assert len(flows) > 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["shared"]


def test_sigterm_leaves_no_partial_folder(tmp_path: Path):
    out = tmp_path / "long"
    cmd = [sys.executable, "-m", "rantcp.cli", "run", "builtin:lte-cell", "--quiet", "--set", "duration=600s", "--out", str(out)]
    p = subprocess.Popen(cmd, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 60
    while time.time() < deadline and not any(tmp_path.iterdir()):
        time.sleep(0.05)
    time.sleep(1.0)  # well inside the simulation
    t0 = time.perf_counter()
    p.send_signal(signal.SIGTERM)
    p.communicate(timeout=60)
    assert time.perf_counter() - t0 < 2.0, "SIGTERM must act within a chunk (~0.1 s) of wall time"
    assert p.returncode != 0
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("seed", [-1, 2**63, 2**64, 1.5, True])
def test_bad_seed_is_a_config_error(seed):
    with pytest.raises(rantcp.ConfigError, match="seed"):
        rantcp.run("builtin:p2p-bulk", seed=seed, overrides={"duration": "1s"})


def test_bad_seed_on_the_command_line(cli):
    _one_line_exit_2(cli("run", "builtin:p2p-bulk", "--seed", "-1"), "seed")
    _one_line_exit_2(cli("validate", "builtin:p2p-bulk", "--seed", str(2**64)), "seed")
    _one_line_exit_2(cli("validate", "builtin:p2p-bulk", "--set", f"seed={2**63}"), "seed")


def test_largest_seed_is_accepted_and_schema_says_so(cli):
    r = cli("validate", "builtin:p2p-bulk", "--seed", str(2**63 - 1))
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["seed"] == 2**63 - 1
    assert f'"maximum": {2**63 - 1}' in rantcp.config_schema()


def test_overrides_must_be_a_mapping():
    with pytest.raises(rantcp.ConfigError, match="overrides"):
        rantcp.run("builtin:p2p-bulk", overrides=["duration=1s"])  # type: ignore[arg-type]


def test_schema_into_a_closed_pipe_is_quiet():
    r = subprocess.run(f"{sys.executable} -m rantcp.cli schema | head -1", shell=True, capture_output=True, text=True, env=os.environ)
    assert r.stdout.strip() == "{"
    assert "Traceback" not in r.stderr and "Broken pipe" not in r.stderr, r.stderr
