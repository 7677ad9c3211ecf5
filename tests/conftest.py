"""Shared fixtures: the CLI as a subprocess (exit codes and stderr as a user sees them)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
RANTCP = [sys.executable, "-m", "rantcp.cli"]


def run_cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*RANTCP, *args], capture_output=True, text=True, cwd=cwd, timeout=600)


@pytest.fixture
def cli():
    return run_cli
