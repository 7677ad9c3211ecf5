"""Bad input to the commands besides `run` (report, sweep files, trace, the extension's panics):
the regression cases of `scripts/fuzz_config.py cli`. Each gives one line on stderr and exit
status 2, never a traceback or Rust's panic lines, and nothing already written is changed."""

from __future__ import annotations

import gzip
import os
import subprocess
import sys
from pathlib import Path

import pytest

import rantcp
from rantcp import _native
from rantcp.cli import main


def one_line(capsys: pytest.CaptureFixture[str], argv: list[str]) -> str:
    """Run the CLI in-process; assert exit 2 and one stderr line; return it."""
    capsys.readouterr()
    with pytest.raises(SystemExit) as e:
        rc = main(argv)
        raise SystemExit(rc)
    err = capsys.readouterr().err.strip().splitlines()
    assert e.value.code == 2, err
    assert len(err) == 1 and err[0].startswith("rantcp: error: "), err
    return err[0]


def fail_line(capsys: pytest.CaptureFixture[str], argv: list[str]) -> list[str]:
    """The trace commands return 2 (no SystemExit): stderr lines."""
    capsys.readouterr()
    rc = main(argv)
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2, err
    assert err and all(e.startswith("rantcp: error: ") for e in err), err
    return err


@pytest.fixture(scope="module")
def run_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("runs") / "run1"
    rantcp.run("builtin:p2p-bulk", overrides={"duration": "0.2s"}, out=out)
    return out


def snapshot(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()}


# ------------------------------------------------------------------ the extension's panics


def test_a_panic_in_the_extension_is_one_line_without_rusts_own(tmp_path: Path) -> None:
    """Rust's default hook printed "thread '…' panicked at …" and, with RUST_BACKTRACE=1 (set on
    this machine), a backtrace before the command's own line; the command then ended in a
    traceback (PanicException is a BaseException)."""
    code = (
        "import sys\nfrom rantcp import cli, _native\n"
        "cli._cmd_scenarios = lambda args: _native.panic_for_tests('boom')\n"
        "sys.exit(cli.main(['scenarios']))\n"
    )
    env = {**os.environ, "RUST_BACKTRACE": "1"}
    env.pop("RANTCP_PANIC_DETAILS", None)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60)
    assert r.returncode == 2, r.stderr
    [line] = r.stderr.splitlines()
    assert line.startswith("rantcp: error: internal error (a bug in rantcp; please report it with the command): "
                           "boom (at crates/py/src/panic.rs:"), line


def test_a_panic_in_a_worker_thread_prints_nothing(capfd: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(RuntimeError, match=r"the thread panicked: in a thread \(at crates/py/src/panic\.rs:\d+\)"):
        _native.panic_for_tests("in a thread", in_thread=True)
    assert capfd.readouterr().err == ""


def test_nr_tbs_raw_refuses_a_code_rate_that_is_not_a_number(capfd: pytest.CaptureFixture[str]) -> None:
    """NaN reached log2(0) in TS 38.214 step 4 and panicked."""
    for r in (float("nan"), 0.0, -1.0, 1025.0, float("inf")):
        with pytest.raises(ValueError, match=r"r_x1024 .*: the code rate x 1024 must be in \(0, 1024\]"):
            rantcp.phy.nr_tbs_raw(10, 2, r)
    assert rantcp.phy.nr_tbs_raw(10, 2, 120.0) > 0
    assert capfd.readouterr().err == ""
