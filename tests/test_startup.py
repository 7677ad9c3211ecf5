"""Start-up stays short: the quick commands import nothing heavy, a run imports no pandas and
(without --plots) no matplotlib; --profile and the progress bar's events/s (issue 20)."""

from __future__ import annotations

import json
import os
import pty
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest

import rantcp
from rantcp import api, cli

HEAVY = ("pandas", "pyarrow", "matplotlib", "duckdb", "dask", "distributed", "rich", "pydantic", "numpy", "jinja2")


def _imported_by(*args: str) -> set[str]:
    """Top-level packages in sys.modules after `rantcp ARGS` ran in a fresh interpreter."""
    code = (
        "import sys, json, contextlib, io\n"
        "from rantcp.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):\n"
        "    try:\n"
        f"        main({list(args)!r})\n"
        "    except SystemExit:\n"
        "        pass\n"
        "print(json.dumps(sorted({m.split('.')[0] for m in sys.modules})))\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    return set(json.loads(r.stdout.strip().splitlines()[-1]))


@pytest.mark.parametrize("args", [["--version"], ["scenarios"], ["validate", "builtin:p2p-bulk"], ["schema"], ["--help"]], ids=lambda a: a[0])
def test_quick_commands_import_nothing_heavy(args):
    loaded = _imported_by(*args)
    assert not loaded & set(HEAVY), sorted(loaded & set(HEAVY))


def test_import_rantcp_is_light_and_attributes_resolve():
    r = subprocess.run(
        [sys.executable, "-c", "import sys, rantcp; print(sorted(m for m in ('pandas', 'pyarrow', 'matplotlib', 'duckdb') if m in sys.modules))"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.stdout.strip() == "[]", r.stdout
    assert callable(rantcp.run) and callable(rantcp.sweep) and callable(rantcp.load)
    assert rantcp.Sweep.__module__ == "rantcp.sweeps.api"
    assert "sweep" in dir(rantcp) and "phy" in dir(rantcp)
    with pytest.raises(AttributeError):
        rantcp.nope  # noqa: B018


def test_the_console_script_imports_nothing_before_its_ctrl_c_handler():
    """`rantcp` (the console script) imports rantcp.__main__, whose console() records a Ctrl-C
    from its first statement: what runs before it is the window in which a Ctrl-C still prints
    Python's traceback. Importing the package and that module imports nothing else (before: the
    package imported typing (re, enum, collections, functools...) and the native core, 5-30 ms;
    the handler came after rantcp.cli and its imports, 40-170 ms on a loaded box)."""
    code = "import sys\nbefore = set(sys.modules)\nimport rantcp.__main__\nprint(sorted(set(sys.modules) - before))\n"
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert (r.stdout, r.stderr) == ("['rantcp', 'rantcp.__main__']\n", "")
    from importlib.metadata import entry_points

    assert [e.value for e in entry_points(group="console_scripts", name="rantcp")] == ["rantcp.__main__:console"]


def test_run_imports_no_pandas_and_no_matplotlib_without_plots(tmp_path: Path):
    loaded = _imported_by("run", "builtin:p2p-bulk", "--set", "duration=1s", "--out", str(tmp_path / "r"), "--quiet")
    assert "pyarrow" in loaded  # the Parquet files
    assert not loaded & {"pandas", "matplotlib", "duckdb", "dask", "pydantic"}
    assert (tmp_path / "r" / "flows.parquet").is_file()


def test_profile_prints_every_phase(cli, tmp_path: Path):
    r = cli("run", "builtin:p2p-bulk", "--set", "duration=2s", "--out", str(tmp_path / "r"), "--quiet", "--profile")
    assert r.returncode == 0, r.stderr
    lines = r.stderr.strip().splitlines()
    assert lines[0].split() == ["phase", "wall", "s"]
    phases = [line.rsplit(None, 1)[0].strip() for line in lines[1:]]
    for p in ("start-up (interpreter, imports)", "config", "build", "simulate", "collect", "write Parquet", "total"):
        assert p in phases, lines
    total = float(lines[-1].split()[-1])
    parts = sum(float(line.split()[-1]) for line in lines[1:-1])
    assert 0 < parts <= total + 0.01


def test_profile_includes_plots_when_drawn(cli, tmp_path: Path):
    r = cli("run", "builtin:p2p-bulk", "--set", "duration=1s", "--out", str(tmp_path / "r"), "--quiet", "--profile", "--plots")
    assert r.returncode == 0, r.stderr
    assert any(line.startswith("plots ") for line in r.stderr.splitlines()), r.stderr


def test_rate_text():
    assert cli.rate_text(5_000_000, 0.5) == ""  # not in the first second
    assert cli.rate_text(12_340_000, 2.0) == "6.2 M events/s"
    assert cli.rate_text(50_000, 2.0) == "25.0 k events/s"


def test_progress_callback_with_events():
    seen: list[tuple[float, float, int]] = []
    rantcp.run("builtin:p2p-bulk", overrides={"duration": "1s"}, progress=lambda now, total, events: seen.append((now, total, events)))
    assert seen[-1][0] == seen[-1][1] == 1.0
    assert seen[-1][2] > 0 and [e for *_, e in seen] == sorted(e for *_, e in seen)
    two: list[float] = []
    rantcp.run("builtin:p2p-bulk", overrides={"duration": "1s"}, progress=lambda now, total: two.append(now))
    assert two[-1] == 1.0


def test_terminal_progress_shows_events_per_second(tmp_path: Path):
    """On a terminal, a run longer than a second shows its events/s on the progress bar."""
    master, slave = pty.openpty()
    p = subprocess.Popen(
        [sys.executable, "-m", "rantcp.cli", "run", "builtin:p2p-bulk", "--set", "duration=600s", "--set", "bottleneck.rate=1Gbps", "--set", "output.sample_interval=10s", "--out", str(tmp_path / "r")],
        stdin=slave,
        stdout=subprocess.DEVNULL,
        stderr=slave,
        env={**os.environ, "COLUMNS": "160", "TERM": "xterm"},
    )
    os.close(slave)
    seen = b""
    deadline = time.monotonic() + 120
    try:
        while b"events/s" not in seen and time.monotonic() < deadline and p.poll() is None:
            if select.select([master], [], [], 0.2)[0]:
                try:
                    seen += os.read(master, 65536)
                except OSError:
                    break
    finally:
        p.terminate()
        p.wait(timeout=30)
        os.close(master)
    assert b"events/s" in seen, seen[-500:]


def test_empty_time_series_note(cli, tmp_path: Path):
    r = cli("run", "builtin:p2p-bulk", "--set", "duration=1s", "--set", "output.sample_interval=5s", "--out", str(tmp_path / "r"))
    assert r.returncode == 0, r.stderr
    notes = [line for line in r.stderr.splitlines() if line.startswith("note:")]
    assert notes == [
        "note: the time series are empty: output.sample_interval (5s) is longer than the run (1 s simulated); "
        "set a shorter one, e.g. --set output.sample_interval=100ms"
    ]
    assert api.load_result(tmp_path / "r").flows.empty


def test_result_tables_are_arrow_until_asked():
    r = rantcp.run("builtin:p2p-bulk", overrides={"duration": "1s"})
    assert r.timeseries.arrow("flows").num_rows == 10
    assert r.flows["time_s"].iloc[-1] == 1.0
    assert set(r.timings) >= {"build", "simulate", "collect"}


def test_summary_text():
    summary = {
        "scenario": "p2p-bulk",
        "seed": 1,
        "duration_s": 30.0,
        "events": 376659,
        "wall": {"seconds": 0.0412, "events_per_second": 9.14e6},
        "flows": [{"name": "flow0", "app": "bulk", "cc": "newreno", "goodput_mbps": 47.9612, "retransmitted_segments": 342, "rtos": 0, "rtt_mean_ms": 61.73}],
    }
    assert cli.summary_text(summary, Path("out/p2p-bulk")).splitlines() == [
        "p2p-bulk · seed 1 · 30 s simulated",
        "flow   app   cc       goodput Mbit/s  retx segs  RTOs  RTT mean ms",
        "-----  ----  -------  --------------  ---------  ----  -----------",
        "flow0  bulk  newreno           47.96        342     0         61.7",
        "376,659 events in 0.041 s wall (9.1 M events/s) → out/p2p-bulk",
    ]
