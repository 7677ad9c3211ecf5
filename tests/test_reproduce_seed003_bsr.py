"""Seed 003 chapter 3's reproduction (BSR timers, the BSR enhancement, PDCCH under M2M load): its
definition against the dissertation's settings, and `rantcp reproduce seed-003-bsr --quick` end
to end (about 15 s)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from rantcp import reproductions

from reproduce_helpers import drawn_figures, run_quick


def test_seed_003_bsr_definition_is_consistent():
    r = reproductions.load("seed-003-bsr")
    names = {s.name: s for s in r.sweeps}
    assert set(names) == {"fig10", "fig11", "fig12"}
    for s in r.sweeps:
        assert s.data["sweep"]["scenario"] == "builtin:lte-m2m"
    # §3.4: Figure 10 at 50/100/150 UEs, periodic 5 vs 320 ms, retx 2560 ms; Figure 11 periodic
    # 20 ms, retx 640 vs 2560 ms; Figure 12 2-190 UEs at 5/2560 ms; all with the enhancement.
    f10, f11, f12 = (names[n].data for n in ("fig10", "fig11", "fig12"))
    assert f10["axes"]["ues"] == [50, 100, 150] and f10["axes"]["mac.periodic_bsr_timer"] == ["5ms", "320ms"]
    assert f10["set"]["mac.retx_bsr_timer"] == "2560ms"
    assert f11["set"]["mac.periodic_bsr_timer"] == "20ms" and f11["axes"]["mac.retx_bsr_timer"] == ["640ms", "2560ms"]
    assert f12["axes"]["ues"][0] == 2 and f12["axes"]["ues"][-1] == 190
    assert (f12["set"]["mac.periodic_bsr_timer"], f12["set"]["mac.retx_bsr_timer"]) == ("5ms", "2560ms")
    for d in (f10, f11, f12):
        assert d["axes"]["mac.bsr_enhancement"] == [False, True]
    papers = {c.id: c.paper for c in r.claims}
    assert papers["fig10a-under-150ms"] == 0.15 and papers["fig10b-beyond-retx"] == 2.56
    assert papers["fig12-90ues-full-45pct"] == 45
    wheres = {f.where for f in r.figures}
    assert {"Figure 10 (a)", "Figure 10 (b)", "Figure 11", "Figure 12 (a)", "Figure 12 (b)", "Figure 12 (c)", "Figure 12 (d)", "Figure 12 (e)"} <= wheres


@pytest.mark.timeout(180)
def test_reproduce_seed_003_bsr_quick(tmp_path: Path):
    out = tmp_path / "seed-003-bsr"
    r, verdicts, m = run_quick("seed-003-bsr", out, workers=1)
    drawn_figures(r, out)
    assert {c.id for c in r.claims if not c.quick} == {c for c in verdicts if c.startswith("fig12-")}
    assert m["runs"] == 4 + 4 + 2
    # The signalling table puts the BSR count beside the delays, one row per run of fig10/fig11.
    sig = pd.read_csv(out / "figures" / "signalling.csv")
    assert len(sig) == 8 and {"BSRs / transaction", "upload max (s)", "UL delay max (s)"} <= set(sig.columns)
