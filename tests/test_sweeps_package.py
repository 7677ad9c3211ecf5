"""The sweeps package (issue 9 item 8): no import cycle, no module shadowed by the function,
no test hook in production code, the sweep file's schema; and the one-line errors of issue 20
(`sweep --out afile`, `--dask foo`, a typo in an axis path, every point validated up front)."""

from __future__ import annotations

import ast
import importlib
import json
from pathlib import Path

import pytest

import rantcp
from rantcp.sweeps import spec as sweep_spec

PKG = Path(rantcp.__file__).parent


def _intra_imports(module_file: Path) -> set[str]:
    """rantcp.sweeps.* modules imported anywhere in the file (top level or inside functions)."""
    tree = ast.parse(module_file.read_text())
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            if node.module.startswith("rantcp.sweeps."):
                out.add(node.module.rsplit(".", 1)[1])
            elif node.module == "rantcp.sweeps":
                out.update(a.name for a in node.names)
        elif isinstance(node, ast.Import):
            out.update(a.name.rsplit(".", 1)[1] for a in node.names if a.name.startswith("rantcp.sweeps."))
    return out


def test_sweeps_modules_import_without_cycles():
    files = {p.stem: p for p in (PKG / "sweeps").glob("*.py") if p.stem != "__init__"}
    graph = {name: _intra_imports(f) & set(files) - {name} for name, f in files.items()}
    order: list[str] = []
    state: dict[str, int] = {}

    def visit(n: str, path: list[str]) -> None:
        if state.get(n) == 1:
            raise AssertionError(f"import cycle: {' -> '.join([*path, n])}")
        if state.get(n) == 2:
            return
        state[n] = 1
        for m in sorted(graph[n]):
            visit(m, [*path, n])
        state[n] = 2
        order.append(n)

    for n in sorted(graph):
        visit(n, [])
    assert {"spec", "stats", "worker", "executors", "store", "coordinator", "api"} <= set(order)


def test_sweep_is_a_function_and_no_module_is_shadowed():
    assert callable(rantcp.sweep) and rantcp.sweep.__module__ == "rantcp.sweeps.api"
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("rantcp.sweep")
    assert not (PKG / "sweep.py").exists() and not (PKG / "store.py").exists()


def test_no_test_hook_in_production_code():
    for f in PKG.rglob("*.py"):
        text = f.read_text()
        assert "RANTCP_TEST" not in text and "_kill_point" not in text, f


def test_sweep_schema_is_shipped_and_current(cli):
    r = cli("schema", "--sweep")
    assert r.returncode == 0, r.stderr
    schema = json.loads(r.stdout)
    assert schema == sweep_spec.json_schema()
    assert json.loads((PKG / "sweep.schema.json").read_text()) == schema, "run `make schema`"
    assert set(schema["properties"]) == {"sweep", "set", "axes"} and schema["required"] == ["sweep"]
    assert schema["additionalProperties"] is False


def test_to_toml_round_trips():
    import tomllib

    data = {
        "sweep": {"name": "x", "scenario": "builtin:p2p-bulk", "zip": [["flow.cc", "flow.pacing"]]},
        "set": {"duration": "2s", "output.sample_interval": "200ms"},
        "axes": {"flow.cc": ["newreno", "bbr"], "flow.pacing": [False, True], "bottleneck.rate": {"start": 10, "stop": 30, "step": 10, "unit": "Mbps"}},
    }
    assert tomllib.loads(sweep_spec.to_toml(data)) == data


def _write(tmp_path: Path, text: str) -> Path:
    f = tmp_path / "s.toml"
    f.write_text(text)
    return f


def _one_line_2(r, needle: str) -> None:
    assert r.returncode == 2, (r.returncode, r.stderr)
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and needle in lines[0], r.stderr
    assert "Traceback" not in r.stderr


def test_typo_in_an_axis_path_fails_the_sweep_before_any_run(cli, tmp_path: Path):
    f = _write(tmp_path, '[sweep]\nscenario = "builtin:p2p-bulk"\n[set]\nduration = "1s"\n[axes]\n"flow.ccc" = ["newreno", "bbr"]\n')
    r = cli("sweep", str(f), "--out", str(tmp_path / "o"))
    _one_line_2(r, "axes.flow.ccc: not a config path of builtin:p2p-bulk")
    assert not (tmp_path / "o").exists()
    # A path below a value (not a table) too.
    f = _write(tmp_path, '[sweep]\nscenario = "builtin:p2p-bulk"\n[axes]\n"flow.cc.x" = [1, 2]\n')
    _one_line_2(cli("sweep", str(f), "--out", str(tmp_path / "o")), "axes.flow.cc.x")


def test_every_point_validated_up_front():
    """A sweep whose every point is invalid fails before running; a value only some points
    have is left to the runs (recorded as failed rows: tests/test_sweep.py)."""
    from rantcp.sweeps.coordinator import validate_points

    bad = sweep_spec.parse_spec({"sweep": {"scenario": "builtin:p2p-bulk"}, "axes": {"bottleneck.loss": [2.0, 3.0]}})
    with pytest.raises(rantcp.ConfigError, match="no point of the sweep is valid: bottleneck.loss"):
        validate_points(bad)
    some = sweep_spec.parse_spec({"sweep": {"scenario": "builtin:p2p-bulk"}, "axes": {"bottleneck.loss": [0.0, 3.0]}})
    validate_points(some)


def test_sweep_out_at_a_file_is_one_line(cli, tmp_path: Path):
    f = _write(tmp_path, '[sweep]\nscenario = "builtin:p2p-bulk"\n[set]\nduration = "1s"\n')
    afile = tmp_path / "afile"
    afile.write_text("mine")
    _one_line_2(cli("sweep", str(f), "--out", str(afile)), "exists and is not a folder")
    assert afile.read_text() == "mine"


@pytest.mark.parametrize("address", ["foo", "tcp://", "local:0", "host:port"])
def test_sweep_bad_dask_address_is_one_line(cli, tmp_path: Path, address: str):
    f = _write(tmp_path, '[sweep]\nscenario = "builtin:p2p-bulk"\n[set]\nduration = "1s"\n')
    _one_line_2(cli("sweep", str(f), "--out", str(tmp_path / "o"), "--dask", address), "--dask")
    assert not (tmp_path / "o").exists()


BAD = [
    ({"sweep": {"scenario": "builtin:p2p-bulk", "name": "a/b"}}, "sweep.name"),
    ({"sweep": {"scenario": "builtin:p2p-bulk", "seed": -1}}, "sweep.seed"),
    ({"sweep": {"scenario": "builtin:p2p-bulk", "seeds": [1, 1]}}, "a seed appears twice"),
    ({"sweep": {"scenario": "builtin:p2p-bulk", "zip": "yes"}}, "sweep.zip"),
    ({"sweep": {"scenario": "builtin:p2p-bulk"}, "axes": {"flow.mss": {"start": 1, "stop": 2, "num": 2, "bogus": 1}}}, "axes.flow.mss.bogus: unknown key"),
    ({"sweep": {"scenario": "builtin:p2p-bulk"}, "axes": {"flow.mss": {"start": "a", "stop": 2, "num": 2}}}, "axes.flow.mss.start"),
    ({"sweep": {"scenario": "builtin:p2p-bulk"}, "axes": {"bottleneck.loss": [float("nan")]}}, "not a finite number"),
    ({"sweep": {"scenario": "builtin:p2p-bulk"}, "axes": {"flow.cc": "bbr"}}, "axes.flow.cc: expected a list"),
    ({"sweep": {"scenario": "builtin:p2p-bulk"}, "set": {"seed": 3}}, "set.seed"),
]


@pytest.mark.parametrize("data,needle", BAD, ids=[b[1] for b in BAD])
def test_more_bad_sweep_files(data, needle):
    with pytest.raises(rantcp.ConfigError) as e:
        sweep_spec.parse_spec(data)
    assert needle in str(e.value) and "\n" not in str(e.value), str(e.value)
