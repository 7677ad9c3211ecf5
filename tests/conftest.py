"""Shared fixtures: the CLI as a subprocess (exit codes and stderr as a user sees them)."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
RANTCP = [sys.executable, "-m", "rantcp.cli"]

# A suite started with SIGINT ignored (a background job of a non-interactive shell, nohup)
# would hand that on to every child, and the tests that stop a run or a capture with Ctrl-C
# would wait for it to end instead. A handler here is reset to the default across exec.
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


def run_cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*RANTCP, *args], capture_output=True, text=True, cwd=cwd, timeout=600)


@pytest.fixture
def cli():
    return run_cli
