"""A setting that has no effect does not pass silently: a bad value is refused whether or not
the run reads it (one line, exit 2), and a value set that the run does not read is a warning
(one line on stderr, in summary.json and in the Python API), said once in a sweep and only when
no point of the sweep reads it; the run's outputs are those of the run without it."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pyarrow.parquet as pq
import pytest

import rantcp
from rantcp import api

P2P = "builtin:p2p-bulk"
UNUSED = "functions.split.at is set but functions.split.mode = \"off\": it has no effect"


@pytest.mark.parametrize(
    "setting,needle",
    [
        ("functions.split.at=bogus", "functions.split.at: no node named \"bogus\""),
        ("flow.burst_rate=-1", "flow.burst_rate: must be > 0"),
        ("functions.proxy.mode=bogus", "functions.proxy.mode: unknown variant `bogus`"),
        ("functions.ack_filter.threshold=0", "functions.ack_filter.threshold: must be an integer"),
    ],
)
@pytest.mark.parametrize("command", ["validate", "run"])
def test_a_bad_value_of_a_part_that_is_off_is_refused(cli, tmp_path: Path, setting, needle, command):
    args = [command, P2P, "--set", setting]
    if command == "run":
        args += ["--out", str(tmp_path / "o"), "--set", "duration=1s"]
    r = cli(*args)
    assert r.returncode == 2, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    assert lines[0].startswith(f"rantcp: error: {needle}"), lines[0]
    assert not (tmp_path / "o").exists()


def _outputs(folder: Path) -> tuple[dict, dict]:
    s = json.loads((folder / "summary.json").read_text())
    for k in ("config", "wall", "warnings"):
        s.pop(k, None)
    tables = {p.name: pq.read_table(p).to_pydict() for p in sorted(folder.glob("*.parquet"))}
    return s, tables


def test_an_unused_value_warns_once_and_changes_no_output(cli, tmp_path: Path):
    base = ["run", P2P, "--set", "duration=2s", "--quiet"]
    plain = cli(*base, "--out", str(tmp_path / "plain"))
    assert plain.returncode == 0, plain.stderr
    assert "warning" not in plain.stderr
    r = cli(*base, "--set", "functions.split.at=receiver", "--out", str(tmp_path / "unused"))
    assert r.returncode == 0, r.stderr
    warned = [l for l in r.stderr.splitlines() if "warning" in l]
    assert warned == [f"rantcp: warning: {UNUSED}"], r.stderr
    summary = json.loads((tmp_path / "unused" / "summary.json").read_text())
    assert summary["warnings"] == [UNUSED]
    assert "warnings" not in json.loads((tmp_path / "plain" / "summary.json").read_text())
    assert _outputs(tmp_path / "unused") == _outputs(tmp_path / "plain")
    # validate says it too, and still succeeds.
    v = cli("validate", P2P, "--set", "functions.split.at=receiver")
    assert v.returncode == 0
    assert f"rantcp: warning: {UNUSED}" in v.stderr.splitlines()


def test_shipped_scenarios_validate_without_warnings(cli):
    for name, _ in rantcp.scenarios():
        r = cli("validate", f"builtin:{name}")
        assert r.returncode == 0, r.stderr
        assert "warning" not in r.stderr, (name, r.stderr)


def test_the_python_api_issues_config_warnings():
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        cfg = rantcp.validate(P2P, {"flow.burst_rate": 3.0})
    assert cfg["flow"]["burst_rate"] == 3.0
    assert [str(w.message) for w in got if issubclass(w.category, rantcp.ConfigWarning)] == [
        "flow.burst_rate is set but flow.app = \"bulk\": it has no effect"
    ]
    assert api.check(P2P, {"flow.burst_rate": 3.0})[1] == [
        "flow.burst_rate is set but flow.app = \"bulk\": it has no effect"
    ]
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        r = rantcp.run(P2P, overrides={"duration": "1s", "functions.split.at": "receiver"})
    assert r.warnings == [UNUSED]
    assert [str(w.message) for w in got if issubclass(w.category, rantcp.ConfigWarning)] == [UNUSED]
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        r = rantcp.run(P2P, overrides={"duration": "1s", "functions.split.at": "receiver"}, warn=False)
    assert r.warnings == [UNUSED] and not got


def test_a_sweep_says_each_distinct_warning_once(cli, tmp_path: Path):
    spec = tmp_path / "s.toml"
    spec.write_text(
        '[sweep]\nname = "w"\nscenario = "builtin:p2p-bulk"\nrepetitions = 2\n'
        '[set]\nduration = "1s"\n"functions.split.at" = "receiver"\n'
        '[axes]\n"flow.cc" = ["newreno", "cubic"]\n'
    )
    r = cli("sweep", str(spec), "--out", str(tmp_path / "o"), "--workers", "1", "--quiet")
    assert r.returncode == 0, r.stderr
    warned = [l for l in r.stderr.splitlines() if "warning" in l]
    assert warned == [f"rantcp: warning: {UNUSED}"], r.stderr


def test_a_sweep_that_switches_the_part_on_at_some_points_does_not_warn(cli, tmp_path: Path):
    spec = tmp_path / "s.toml"
    spec.write_text(
        '[sweep]\nname = "w"\nscenario = "builtin:p2p-bulk"\n'
        '[set]\nduration = "1s"\n"functions.split.at" = "router"\n'
        '[axes]\n"functions.split.mode" = ["off", "i-tcp"]\n'
    )
    r = cli("sweep", str(spec), "--out", str(tmp_path / "o"), "--workers", "1", "--quiet")
    assert r.returncode == 0, r.stderr
    assert "warning" not in r.stderr, r.stderr
