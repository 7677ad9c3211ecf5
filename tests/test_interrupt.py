"""Interrupted writing commands: the regression cases of scripts/fuzz_interrupt.py.

Each delivers its signal at an exact instant with scripts/interrupt_at.py (the N-th call of a
writing function), so nothing races: SIGKILL during a run, SIGINT/SIGTERM during a commit,
a report write, a trace ingest, then checks what is left and that the next command completes."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
HOOK = str(ROOT / "scripts" / "interrupt_at.py")


def at(point: str, sig: str, *argv: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """`rantcp ARGV` with SIG delivered at POINT (see scripts/interrupt_at.py)."""
    return subprocess.run([sys.executable, HOOK, point, sig, "--", *argv], cwd=cwd, capture_output=True, text=True, timeout=120)


def rantcp(*argv: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "rantcp.cli", *argv], cwd=cwd, capture_output=True, text=True, timeout=120)


RUN = ("run", "builtin:p2p-bulk", "--set", "duration=0.2s", "--quiet", "--out", "out")


def test_sigkill_leaves_a_partial_folder_the_next_run_removes(tmp_path: Path):
    r = at("rantcp.api._Series.close", "KILL", *RUN, cwd=tmp_path)
    assert r.returncode == -9, r.stderr
    left = [p.name for p in tmp_path.iterdir()]
    assert len(left) == 1 and left[0].startswith(".out.partial-"), left
    r = rantcp(*RUN, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]
    assert (tmp_path / "out" / "summary.json").is_file()


def test_stale_folders_of_live_runs_and_user_files_are_kept(tmp_path: Path):
    live = tmp_path / f".out.partial-{os.getpid()}-0123abcd"  # this test's process runs
    live.mkdir()
    (live / "flows.parquet").write_bytes(b"half")
    dead_pid = _dead_pid()
    mine = tmp_path / f".out.partial-{dead_pid}-89abcdef"  # a dead process, but a user's file
    mine.mkdir()
    (mine / "notes.txt").write_text("mine\n")
    stale = tmp_path / f".out.old-{dead_pid}-00000000"
    stale.mkdir()
    (stale / "summary.json").write_text("{}")
    other = tmp_path / f".outx.partial-{dead_pid}-00000000"  # another target's
    other.mkdir()
    r = rantcp(*RUN, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["out", live.name, mine.name, other.name])


def _dead_pid() -> int:
    p = subprocess.Popen(["true"])
    p.wait()
    return p.pid


@pytest.fixture(scope="module")
def run_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    w = tmp_path_factory.mktemp("run")
    r = rantcp("run", "builtin:p2p-bulk", "--set", "duration=0.2s", "--quiet", "--out", "out", cwd=w)
    assert r.returncode == 0, r.stderr
    (w / "out" / "report.html").write_text("<!doctype html><title>an earlier page</title>\n")
    return w / "out"


@pytest.mark.parametrize("sig", ["INT", "TERM", "KILL"])
def test_report_interrupted_before_its_rename_keeps_the_old_page_and_the_run_folder(run_folder: Path, tmp_path: Path, sig: str):
    import shutil

    run = tmp_path / "run"
    shutil.copytree(run_folder, run)
    old = (run / "report.html").read_bytes()
    r = at("pathlib.Path.replace", sig, "report", str(run), cwd=tmp_path)
    assert r.returncode == (-9 if sig == "KILL" else 130), r.stderr
    assert "Traceback" not in r.stderr
    assert (run / "report.html").read_bytes() == old
    if sig != "KILL":
        assert not (run / "report.html.tmp").exists()
    # Whatever is left, the folder is still a run folder: the next run replaces it.
    r = rantcp("run", "builtin:p2p-bulk", "--set", "duration=0.1s", "--quiet", "--out", str(run), cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run"]
