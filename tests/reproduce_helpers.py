"""What every `rantcp reproduce NAME --quick` test checks, in one place: the command succeeds,
each figure of the definition is on disk in its form, the claims table lists the definition's
claims in order, each claim run in quick mode has a verdict and the others say they were not
run, and the manifest says quick mode. Each seed's test adds its own facts on top.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd

from rantcp import reproductions
from rantcp.reproductions.spec import Reproduction

from conftest import run_cli

PNG = b"\x89PNG\r\n\x1a\n"
VERDICTS = ("holds", "holds in direction", "does not hold")
NOT_RUN = "not run in quick mode"


def run_quick(name: str, out: Path, workers: int = 2) -> tuple[Reproduction, dict[str, str], dict[str, Any]]:
    """Runs the quick reproduction into `out` and checks what every reproduction must leave;
    returns the definition, the verdict of each claim by id, and reproduction.json."""
    p = run_cli("reproduce", name, "--quick", "--out", str(out), "--workers", str(workers))
    assert p.returncode == 0, p.stderr[-2000:]
    r = reproductions.load(name)
    rows = pd.read_csv(out / "claims.csv")
    assert rows["id"].tolist() == [c.id for c in r.claims]
    verdicts = dict(zip(rows["id"], rows["verdict"]))
    for c in r.claims:
        expected = VERDICTS if c.quick else (NOT_RUN,)
        assert verdicts[c.id] in expected, (c.id, verdicts[c.id])
    manifest = json.loads((out / "reproduction.json").read_text())
    assert manifest["mode"] == "quick"
    return r, verdicts, manifest


def drawn_figures(r: Reproduction, out: Path, *, every_plot: bool = True) -> int:
    """Checks each figure's file: a table or configuration figure is a CSV, a plot a PNG (with
    `every_plot=False` a plot may be missing when quick mode left it without data). Returns how
    many plots were drawn."""
    drawn = 0
    for f in r.figures:
        png, csv = out / "figures" / f"{f.id}.png", out / "figures" / f"{f.id}.csv"
        if f.kind in ("config", "table"):
            assert csv.is_file(), f.id
        elif every_plot or png.is_file():
            assert png.read_bytes().startswith(PNG), f.id
            drawn += 1
    return drawn
