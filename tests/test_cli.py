"""The command line: listing, validation, runs, and one-line errors with exit status 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import rantcp


def test_version_and_scenarios(cli):
    r = cli("--version")
    assert r.returncode == 0
    assert r.stdout.strip() == f"rantcp {rantcp.__version__}"
    r = cli("scenarios")
    assert r.returncode == 0
    assert "builtin:p2p-bulk" in r.stdout


BAD = [
    ("malformed TOML", 'scenario = "p2p-bulk"\nduration = = "3s"\n', [], "invalid TOML"),
    ("unknown key", 'scenario = "p2p-bulk"\n[bottleneck]\nrte = "5Mbps"\n', [], "bottleneck.rte"),
    ("negative rate", 'scenario = "p2p-bulk"\n[bottleneck]\nrate = "-5Mbps"\n', [], "bottleneck.rate"),
    ("wrong type", 'scenario = "p2p-bulk"\n[flow]\nmss = "big"\n', [], "flow.mss"),
    ("out of range", 'scenario = "p2p-bulk"\n', ["--set", "bottleneck.loss=2"], "bottleneck.loss"),
    ("unknown cc", 'scenario = "p2p-bulk"\n', ["--set", "flow.cc=vegas"], "flow.cc"),
    ("bad --set", 'scenario = "p2p-bulk"\n', ["--set", "novalue"], "--set"),
    ("missing scenario key", "duration = \"1s\"\n", [], "scenario"),
]


@pytest.mark.parametrize("what,text,extra,needle", BAD, ids=[b[0] for b in BAD])
@pytest.mark.parametrize("command", ["validate", "run"])
def test_bad_input_is_one_line_and_exit_2(cli, tmp_path: Path, what, text, extra, needle, command):
    cfg = tmp_path / "s.toml"
    cfg.write_text(text)
    out = tmp_path / "out"
    out.mkdir()
    (out / "keep.txt").write_text("earlier result")
    args = [command, str(cfg), *extra]
    if command == "run":
        args += ["--out", str(out)]
    r = cli(*args)
    assert r.returncode == 2, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    assert needle in lines[0]
    assert "Traceback" not in r.stderr and "panicked" not in r.stderr
    # Nothing already written is lost.
    assert (out / "keep.txt").read_text() == "earlier result"


def test_missing_file(cli, tmp_path: Path):
    r = cli("run", str(tmp_path / "nope.toml"))
    assert r.returncode == 2
    assert len(r.stderr.strip().splitlines()) == 1
    assert "not found" in r.stderr


def test_unknown_builtin(cli):
    r = cli("validate", "builtin:nope")
    assert r.returncode == 2
    assert "p2p-bulk" in r.stderr  # says what is allowed


def test_validate_prints_effective_config(cli):
    r = cli("validate", "builtin:p2p-bulk", "--set", "bottleneck.rate=10Mbps", "--seed", "7")
    assert r.returncode == 0, r.stderr
    cfg = json.loads(r.stdout)
    assert cfg["bottleneck"]["rate"] == "10Mbps"
    assert cfg["seed"] == 7


def test_run_writes_output_folder(cli, tmp_path: Path):
    out = tmp_path / "run"
    r = cli("run", "builtin:p2p-bulk", "--out", str(out), "--set", "duration=3s", "--set", "bottleneck.rate=10Mbps")
    assert r.returncode == 0, r.stderr
    summary = json.loads((out / "summary.json").read_text())
    assert summary["scenario"] == "p2p-bulk"
    assert summary["flows"][0]["bytes_delivered"] > 0
    assert (out / "flows.parquet").stat().st_size > 0
    assert not (tmp_path / "run.partial").exists()
    assert "goodput" in r.stdout
    # Plots are opt-in (matplotlib's start-up is several times a short run); one line says how.
    assert not (out / "plots").exists()
    assert r.stderr.strip().splitlines() == ["plots: not drawn (add --plots for plots/*.png, about half a second more)"]


def test_run_with_plots(cli, tmp_path: Path):
    out = tmp_path / "run"
    r = cli("run", "builtin:p2p-bulk", "--out", str(out), "--set", "duration=3s", "--plots", "--quiet")
    assert r.returncode == 0, r.stderr
    assert (out / "plots" / "flows.png").stat().st_size > 1000
    assert json.loads((out / "summary.json").read_text())["config"]["output"]["plots"] is True
    assert r.stderr == "" and r.stdout == ""


def test_schema_is_json_and_shipped_copy_is_current(cli):
    r = cli("schema")
    assert r.returncode == 0
    schema = json.loads(r.stdout)
    assert "p2p-bulk" in json.dumps(schema) or "P2pBulk" in json.dumps(schema)
    shipped = Path(rantcp.__file__).with_name("config.schema.json")
    assert json.loads(shipped.read_text()) == schema, "run `make schema` to regenerate the shipped schema"
