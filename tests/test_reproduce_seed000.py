"""Seed 000's reproduction (TCP ACK filtering): its definition against the issue's numbers, the
quick mode's axis subsets, and `rantcp reproduce seed-000 --quick` end to end."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

import rantcp
from rantcp import reproductions
from rantcp.reproductions.spec import load_folder

from reproduce_helpers import drawn_figures, run_quick


def test_seed_000_definition_is_consistent():
    r = reproductions.load("seed-000")
    names = {s.name: s for s in r.sweeps}
    assert set(names) == {"schemes", "hybrid094", "ackpolicy", "ackpolicy-quickack", "mmwave"}
    axes = names["schemes"].data["axes"]
    assert axes["ues"] == [10, 20, 30, 40, 50, 60]
    assert axes["functions.ack_filter.mode"] == ["none", "granted", "hybrid-opt"]
    assert axes["mac.bsr"] == ["ideal", "standard"] and axes["rlc.buffer"] == ["10KiB", "10MB"]
    # The seed's cell and segments (issue 19's two facts), wherever the cell is lte-7cell.
    for s in r.sweeps:
        if s.name == "mmwave":
            continue
        assert s.data["set"]["radio.bandwidth_mhz"] == 20.0 and s.data["set"]["flow.mss"] == 536
    assert names["hybrid094"].data["set"]["functions.ack_filter.threshold"] == 6
    # Every number the issue lists is a claim with the seed's value, for both BSR models.
    papers = {c.id: c.paper for c in r.claims}
    want = {
        "fig5-acks-vs-hybrid-avg": 23.9, "fig5-acks-vs-hybrid-max": 65.2,
        "fig5-acks-vs-basic-avg": 54.2, "fig5-acks-vs-basic-max": 70.5,
        "fig6-gain-vs-basic-40": 59.1, "fig6-gain-vs-granted-40": 11.9, "fig6-acks-vs-basic-40": 21.4,
        "capacity-basic-25": 30, "capacity-opt-25": 60, "sgw-opt": 397.2, "sgw-basic": 866.4,
    }
    for cid, v in want.items():
        assert papers[cid] == v and papers[f"{cid}-standard"] == v, cid
    assert "fig7-fairness" in papers and "fig6-opt-above-20-60" in papers
    # Table I and Figures 5, 6, 7, in both uplink models.
    wheres = {f.where for f in r.figures}
    assert {"Table I", "Figure 5", "Figure 6", "Figure 7"} <= wheres
    ids = {f.id for f in r.figures}
    assert {"fig5a", "fig5a-standard", "fig6a", "fig6a-standard", "fig6a-rlc10mb", "fig7a", "sgw"} <= ids


def test_beyond_the_seed_sweeps_and_claims():
    """Issue 19 item 5: mmWave and the receiver ACK policies of real phones, as rantcp's own
    claims (no seed number) computed from their own sweeps."""
    r = reproductions.load("seed-000")
    names = {s.name: s for s in r.sweeps}
    mm = names["mmwave"].data
    assert mm["sweep"]["scenario"] == "builtin:mmwave-urban"
    assert mm["axes"]["functions.ack_filter.mode"] == ["none", "granted", "hybrid-opt"]
    # every segment, every 2nd (the seed's), stretch every 4th; every 2nd + quick-ACK.
    a = names["ackpolicy"].data["axes"]
    assert a == {"functions.ack_filter.mode": ["none", "hybrid-opt"], "flow.ack_every": [1, 2, 4]}
    q = names["ackpolicy-quickack"].data
    assert q["set"]["flow.quickack"] is True and q["set"]["flow.ack_every"] == 2
    assert q["axes"] == {"functions.ack_filter.mode": ["none", "hybrid-opt"]}
    beyond = [c for c in r.claims if c.where.startswith("rantcp, beyond the seed")]
    ids = {c.id for c in beyond}
    assert {"mmw-acks-vs-basic", "mmw-throughput", "mmw-topt-above-lte", "mmw-topt-steady"} <= ids
    for slug in ("every", "2nd", "quickack", "4th"):
        assert {f"policy-{slug}-acks-vs-basic", f"policy-{slug}-throughput"} <= ids
    # rantcp's hypotheses carry no seed number; the seed's claims all keep theirs or a rule.
    assert all(c.paper is None for c in beyond)
    # The seed's own views see only the seed's sweeps.
    assert "sweep IN ('schemes', 'hybrid094')" in r.prelude


def test_quick_axes_take_a_subset_of_each_sweep_axis():
    r = reproductions.load("seed-000")
    sd = next(s for s in r.sweeps if s.name == "schemes")
    q = reproductions.sweep_data(sd, r, quick=True)
    assert q["axes"]["ues"] == [10, 40] and q["axes"]["rlc.buffer"] == ["10KiB"]
    assert q["axes"]["mac.bsr"] == ["ideal", "standard"]
    assert q["set"]["duration"] == "2s" and q["sweep"]["repetitions"] == 1
    full = reproductions.sweep_data(sd, r, quick=False)
    assert full["axes"]["ues"] == [10, 20, 30, 40, 50, 60]


def test_quick_axes_must_be_values_of_the_sweeps(tmp_path: Path):
    src = reproductions.load("seed-000").folder
    dst = tmp_path / "r"
    dst.mkdir()
    for f in src.rglob("*"):
        if f.is_file():
            t = dst / f.relative_to(src)
            t.parent.mkdir(parents=True, exist_ok=True)
            t.write_bytes(f.read_bytes())
    text = (dst / "reproduction.toml").read_text()
    (dst / "reproduction.toml").write_text(text.replace("ues = [10, 40]", "ues = [10, 45]"))
    with pytest.raises(rantcp.ConfigError, match=r"quick.axes.ues: 45 is not a value of that axis in sweep"):
        load_folder(dst)
    (dst / "reproduction.toml").write_text(text.replace("ues = [10, 40]", "cells = [1]"))
    with pytest.raises(rantcp.ConfigError, match=r"quick.axes.cells: is an axis of no sweep"):
        load_folder(dst)


@pytest.mark.timeout(300)
def test_reproduce_seed_000_quick(tmp_path: Path):
    out = tmp_path / "seed-000"
    r, _, m = run_quick("seed-000", out)
    assert drawn_figures(r, out, every_plot=False) >= 10
    # schemes: 2 UE counts × 3 modes × 2 BSR models × 1 RLC buffer; hybrid094: 2 × 2 × 1;
    # ackpolicy: 3 policies × 2 modes, ackpolicy-quickack 2 modes; mmwave: 3 modes.
    assert m["runs"] == 16 + 8 + 3
    # Table I: ten UEs with their T_opt from Equ. (2).
    t1 = pd.read_csv(out / "figures" / "table1.csv")
    assert len(t1) == 10 and t1["T_opt [num]"].between(1, 20).all()
    # Beyond the seed: the policy and mmWave figures are drawn from their own sweeps.
    pt = pd.read_csv(out / "figures" / "policy-table.csv")
    assert len(pt) == 8 and set(pt["scheme"]) == {"Basic", "Hybrid(opt)"}
    assert set(pt["policy"]) == {"every segment", "every 2nd", "every 2nd + quick-ACK", "every 4th"}
    mt = pd.read_csv(out / "figures" / "mmw-table.csv")
    assert set(mt["scheme"]) == {"Basic", "Granted ACK", "Hybrid(opt)"}
    # Table I still holds only the seed's sweeps (no ackpolicy UEs mixed in).
    assert t1["ue"].is_unique
