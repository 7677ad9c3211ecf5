"""What `pip install .` gives a user: every third-party module the package imports is one of its
declared dependencies, and the one optional extra (`sweep`: dask.distributed, for `--dask`) is
asked for by name when it is missing, in one line with exit status 2, not a traceback.

`make` installs every dependency into .venv, so a dependency missing from pyproject.toml would
never fail a test there; this reads the imports instead (found 2026-11-28: `rantcp sweep`,
`reproduce` and `trace` import duckdb, which was only in the `sweep` extra, so a plain
`pip install .` gave `ModuleNotFoundError` with a traceback)."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
import tomllib
from importlib.metadata import packages_distributions
from pathlib import Path

from conftest import ROOT

PACKAGE = ROOT / "python" / "rantcp"
# Imported only where `--dask` is used, after check_dask_address asked for the extra:
# module -> (extra, the requirement of that extra that brings it: dask[distributed]).
OPTIONAL = {"distributed": ("sweep", "dask"), "dask": ("sweep", "dask")}


def _requirement_name(req: str) -> str:
    name = re.split(r"[\[<>=!~; ]", req, maxsplit=1)[0]
    return re.sub(r"[-_.]+", "-", name).lower()


def _pyproject() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())


def _imported_top_level_modules() -> dict[str, set[str]]:
    """Top-level module -> files of the package that import it (absolute imports only)."""
    found: dict[str, set[str]] = {}
    for path in PACKAGE.rglob("*.py"):
        tree = ast.parse(path.read_text(), filename=str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                found.setdefault(name.split(".")[0], set()).add(str(path.relative_to(ROOT)))
    return found


def test_every_third_party_import_is_a_declared_dependency() -> None:
    project = _pyproject()["project"]
    core = {_requirement_name(r) for r in project["dependencies"]}
    extras = {k: {_requirement_name(r) for r in v} for k, v in project["optional-dependencies"].items()}
    dists = packages_distributions()
    third_party = {
        m: files
        for m, files in _imported_top_level_modules().items()
        if m not in sys.stdlib_module_names and m != "rantcp" and not m.startswith("_")
    }
    assert "duckdb" in third_party and "pandas" in third_party  # the scan sees the package
    undeclared = []
    for module, files in sorted(third_party.items()):
        names = {_requirement_name(d) for d in dists.get(module, [module])}
        if names & core:
            continue
        optional = OPTIONAL.get(module)
        if optional is not None and optional[1] in extras.get(optional[0], set()):
            continue
        undeclared.append(f"{module} (distribution {sorted(names)}) imported by {sorted(files)}")
    assert not undeclared, "imported but not in pyproject.toml's dependencies:\n" + "\n".join(undeclared)


def test_dask_without_the_extra_is_a_one_line_error_naming_it(tmp_path: Path) -> None:
    # dask.distributed made unimportable in this process only (a None entry in sys.modules is
    # how Python marks a module as not importable); the sweep must stop before writing anything.
    out = tmp_path / "out"
    code = (
        "import sys; sys.modules['distributed'] = None; sys.argv[0] = 'rantcp'\n"
        "from rantcp.cli import console; console()\n"
    )
    r = subprocess.run(
        [sys.executable, "-c", code, "sweep", str(ROOT / "examples" / "sweep-cc-loss.toml"), "--out", str(out), "--dask", "local:1"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 2, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    assert "--dask" in lines[0] and "pip install 'rantcp[sweep]'" in lines[0]
    assert "Traceback" not in r.stderr
    assert not out.exists()
