"""Reproductions: claim verdicts from synthetic results tables, the figure kinds, a tiny
reproduction end to end (resume, modes), and `rantcp reproduce seed-004 --quick` in full."""

from __future__ import annotations

import json
import textwrap
import tomllib
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import rantcp
from rantcp import reproductions
from rantcp.reproductions import claims as cl
from rantcp.reproductions import figures as fg
from rantcp.reproductions.results import Results
from rantcp.reproductions.spec import Claim, Figure, Shading, load_folder
from rantcp.sweeps.stats import MIN_REPETITIONS_FOR_INTERVAL

from conftest import run_cli
from reproduce_helpers import PNG, drawn_figures, run_quick



def synthetic() -> Results:
    """Three controllers, two repetitions each: a 100/110, b 90/96, c 50/-; plus a time series."""
    runs = pd.DataFrame(
        {
            "run": ["s/1", "s/2", "s/3", "s/4", "s/5", "s/6"],
            "status": ["ok", "ok", "ok", "ok", "ok", "failed"],
            "cc": ["a", "a", "b", "b", "c", "c"],
            "per": [0.0, 0.0, 0.0, 0.0, 1e-8, 1e-8],
            "tput": [100.0, 110.0, 90.0, 96.0, 50.0, None],
        }
    )
    t = [0.1 * i for i in range(1, 11)]
    ts = pd.DataFrame(
        {
            "run": ["s/1"] * 10,
            "time_s": t,
            "y": [float(i) for i in range(10)],
            "los": [1, 1, 0, 0, 0, 1, 1, 0, 1, 1],
            "x_m": [0.0, 0.0, 0.0, 0.15, 0.3, 0.45, 0.45, 0.45, 3.45, 6.45],
            "y_m": [0.0] * 10,
        }
    )
    prelude = "CREATE VIEW ok AS SELECT * FROM runs WHERE status = 'ok';\nCREATE MACRO mean_of(c_) AS (SELECT avg(tput) FROM ok WHERE cc = c_);"
    return Results(runs, {"radio": ts}, prelude)


def claim(**kw: Any) -> Claim:
    base: dict[str, Any] = {"id": "c", "where": "§1", "statement": "s", "metric": "SELECT 1 AS value"}
    base.update(kw)
    return Claim(**base)


# ---------------------------------------------------------------------------------------------
# Verdicts


def test_claim_that_holds_within_margin():
    r = cl.evaluate(claim(metric="SELECT mean_of('a') AS value", paper=100, holds="abs(value - paper) <= 0.1 * paper"), synthetic())
    assert (r.verdict, r.value) == ("holds", 105.0)


def test_claim_that_holds_in_direction_only():
    # a is 14.5 above b (105 vs 90.5): the sign is the seed's, but the seed said "at least 30 %".
    c = claim(
        metric="SELECT 100 * (mean_of('a') / mean_of('b') - 1) AS value, mean_of('a') AS a, mean_of('b') AS b",
        direction="value > 0",
        holds="value >= 30",
    )
    r = cl.evaluate(c, synthetic())
    assert r.verdict == "holds in direction"
    assert r.value == pytest.approx(100 * (105 / 93 - 1))
    assert r.details == {"a": 105.0, "b": 93.0}


def test_claim_that_does_not_hold():
    res = synthetic()
    # Wrong sign: c is below a.
    r = cl.evaluate(claim(metric="SELECT mean_of('c') - mean_of('a') AS value", direction="value > 0", holds="value >= 30"), res)
    assert (r.verdict, r.value) == ("does not hold", -55.0)
    # A number outside its margin, no direction given.
    r = cl.evaluate(claim(metric="SELECT mean_of('b') AS value", paper=120, holds="abs(value - paper) <= 0.1 * paper"), res)
    assert (r.verdict, r.value) == ("does not hold", 93.0)
    # Only a direction, and it is right: holds.
    r = cl.evaluate(claim(metric="SELECT mean_of('a') - mean_of('b') AS value", direction="value > 0"), res)
    assert r.verdict == "holds"


def test_missing_data():
    res = synthetic()
    # No matching run: the mean is NULL.
    r = cl.evaluate(claim(metric="SELECT mean_of('zz') AS value", holds="value > 0"), res)
    assert (r.verdict, r.value) == ("no data", None)
    # No row at all.
    r = cl.evaluate(claim(metric="SELECT tput AS value FROM ok WHERE cc = 'zz'", holds="value > 0"), res)
    assert r.verdict == "no data"
    # The failed run's NULL does not count: c's mean is its one ok run.
    r = cl.evaluate(claim(metric="SELECT mean_of('c') AS value", holds="value = 50"), res)
    assert r.verdict == "holds"
    # A rule that reads a NULL detail column.
    r = cl.evaluate(claim(metric="SELECT 1 AS value, NULL::DOUBLE AS other", holds="other > 0"), res)
    assert r.verdict == "no data"


def test_not_run_in_quick_mode():
    r = cl.evaluate(claim(quick=False, holds="value > 0"), synthetic(), quick=True)
    assert r.verdict == "not run in quick mode"
    assert cl.evaluate(claim(quick=False, holds="value > 0"), synthetic(), quick=False).verdict == "holds"


@pytest.mark.parametrize(
    "h, d, has_h, has_d, verdict",
    [
        (True, None, True, False, "holds"),
        (False, None, True, False, "does not hold"),
        (None, True, False, True, "holds"),
        (None, False, False, True, "does not hold"),
        (True, True, True, True, "holds"),
        (False, True, True, True, "holds in direction"),
        (True, False, True, True, "does not hold"),
        (False, False, True, True, "does not hold"),
        (None, True, True, True, "no data"),
        (True, None, True, True, "no data"),
    ],
)
def test_decision_table(h, d, has_h, has_d, verdict):
    assert cl.decide(h, d, has_h, has_d) == verdict


def test_bad_claims_are_errors_and_cannot_touch_anything():
    res = synthetic()
    cases = {
        "SELECT tput AS value FROM ok": "returned 5 rows",
        "SELECT 1 AS x": "no column named value",
        "SELECT 'abc' AS value": "is not a number",
        "DROP TABLE runs": "one SELECT",
        "SELECT 1 AS value; DROP VIEW ok": "one SELECT",
        "SELECT count(*) AS value FROM read_csv('/etc/passwd')": "disabled",
        "SELECT 1 AS value, 2 AS paper": "may not name a column paper",
    }
    for metric, msg in cases.items():
        r = cl.evaluate(claim(metric=metric, holds="value > 0"), res)
        assert r.verdict == "error", metric
        assert msg in r.message, (metric, r.message)
    r = cl.evaluate(claim(holds="true) AS h; DROP VIEW ok; SELECT (true"), res)
    assert r.verdict == "error"
    assert len(res.query("SELECT * FROM ok")) == 5  # nothing was dropped


def test_markdown_and_table_rows():
    res = synthetic()
    rs = cl.evaluate_all([claim(id="x", metric="SELECT mean_of('a') AS value", paper=100, unit="Mbit/s", holds="abs(value - paper) <= 0.1 * paper")], res)
    md = cl.markdown(rs)
    # The synthetic runs have no repetition column: the verdict says it has no interval.
    assert "| `x`: s | §1 | 100 Mbit/s | 105 Mbit/s | no interval: the runs have no repetition column | holds (no interval) |" in md
    row = cl.table(rs).iloc[0]
    assert (row["paper"], row["rantcp"], row["verdict"], row["noise"]) == (100.0, 105.0, "holds", "no interval")


# ---------------------------------------------------------------------------------------------
# Results: the derived speed; the prelude may only create


def test_speed_is_derived_from_positions():
    res = synthetic()
    sp = res.query("SELECT speed_mps FROM radio ORDER BY time_s")["speed_mps"].round(6).tolist()
    assert sp == [0.0, 0.0, 0.0, 1.5, 1.5, 1.5, 0.0, 0.0, 30.0, 30.0]


def test_prelude_only_creates():
    with pytest.raises(rantcp.ConfigError, match="only CREATE"):
        Results(pd.DataFrame({"run": ["a"]}), {}, "CREATE VIEW v AS SELECT 1; DELETE FROM runs")


# ---------------------------------------------------------------------------------------------
# Figures


def test_intervals_from_samples():
    t = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6]
    assert fg.intervals(t, [0, 1, 1, 0, 1, 1]) == [(pytest.approx(0.1), 0.3), (pytest.approx(0.4), 0.6)]
    assert fg.intervals(t, [1, 0, 0, 0, 0, 0]) == [(pytest.approx(0.0), 0.1)]
    assert fg.intervals(t, [None, 0, 0, 0, 0, 0]) == []


def _repro(tmp_path: Path, figures: list[Figure], shading: dict[str, Shading] | None = None) -> object:
    class R:
        style = {"colors": {"a": "red"}}
        folder = tmp_path

    r = R()
    r.shading = shading or {}  # type: ignore[attr-defined]
    r.figures = figures  # type: ignore[attr-defined]
    return r


def test_every_generic_kind_draws(tmp_path: Path):
    res = synthetic()
    sh = {"nlos": Shading("radio", [{"when": "los = 0", "label": "NLoS"}], [{"when": "speed_mps > 5", "label": "drive"}])}
    figs = [
        Figure("b", "bars", "bars", "", "SELECT per AS x, cc AS series, tput AS y FROM ok",
               {"ref": [{"query": "SELECT 120.0 AS value", "label": "UDP"}], "x_label": "PER"}),
        Figure("l", "lines", "lines", "", "SELECT per AS x, cc AS series, tput AS y FROM ok", {}),
        Figure("c", "cdf", "cdf", "", "SELECT cc AS series, tput AS value FROM ok", {}),
        Figure("t", "timeseries", "ts", "", "SELECT 'a' AS series, run, time_s AS x, y FROM radio", {"shading": "nlos"}),
        Figure("x", "xy", "xy", "", "SELECT x_m AS x, y_m AS y, CASE WHEN los = 1 THEN 'LOS' ELSE 'NLOS' END AS series FROM radio",
               {"points": [{"x": 0, "y": 0, "label": "gNB"}], "aspect": "equal"}),
        Figure("tab", "table", "table", "", "SELECT cc, avg(tput) AS tput FROM ok GROUP BY cc ORDER BY cc", {}),
        Figure("cfg", "config", "config", "", None, {"sweep": "s", "rows": [{"label": "RTO", "path": "flow.min_rto", "paper": "1 s"}]}),
    ]
    r = _repro(tmp_path, figs, sh)
    out = {f.id: fg.draw(res, f, r, {"s": {"flow": {"min_rto": "1s"}}}) for f in figs}  # type: ignore[arg-type]
    for k in ("b", "l", "c", "t", "x"):
        png = out[k].png
        assert out[k].error == "" and png is not None and png.startswith(PNG), (k, out[k].error)
    data, tab, cfg = out["b"].data, out["tab"].table, out["cfg"].table
    assert data is not None and tab is not None and cfg is not None
    bars = data.set_index("series")
    assert bars.loc["a", ["mean", "min", "max", "count"]].tolist() == [105.0, 100.0, 110.0, 2]
    assert bars.loc["c", "count"] == 1
    assert out["t"].notes[1] == "NLoS: 0.2–0.5 s, 0.7–0.8 s"
    assert tab.to_dict("list") == {"cc": ["a", "b", "c"], "tput": [105.0, 93.0, 50.0]}
    assert cfg.iloc[0][["parameter", "seed", "rantcp"]].tolist() == ["RTO", "1 s", "1s"]
    # Identical data draw identical PNG bytes.
    assert fg.draw(res, figs[0], r, {}).png == out["b"].png  # type: ignore[arg-type]


def test_a_failing_figure_query_is_reported_not_raised(tmp_path: Path):
    f = Figure("b", "bars", "bars", "", "SELECT cc AS series, tput AS y FROM ok", {})
    d = fg.draw(synthetic(), f, _repro(tmp_path, [f]), {})  # type: ignore[arg-type]
    assert d.png is None and "needs x, y" in d.error


# ---------------------------------------------------------------------------------------------
# A tiny reproduction end to end: resume, modes, bad definitions

TINY = {
    "reproduction.toml": """
        [reproduction]
        name = "tiny"
        title = "Tiny"
        timeseries = ["flows"]
        prelude = "prelude.sql"
        [quick]
        repetitions = 1
        set = { duration = "300ms" }
    """,
    "prelude.sql": """
        CREATE MACRO g(c_) AS (SELECT avg(goodput_mbps) FROM runs WHERE "flow.cc" = c_ AND status = 'ok');
    """,
    "sweeps/cc.toml": """
        [sweep]
        name = "cc"
        scenario = "builtin:p2p-bulk"
        repetitions = 2
        [set]
        duration = "1s"
        "bottleneck.rate" = "10Mbps"
        [axes]
        "flow.cc" = ["newreno", "bbr"]
    """,
    "claims.toml": """
        [[claim]]
        id = "fills"
        where = "§1"
        statement = "NewReno fills the 10 Mbit/s bottleneck."
        paper = 10
        unit = "Mbit/s"
        metric = "SELECT g('newreno') AS value"
        holds = "abs(value - paper) <= 0.5 * paper"
        [[claim]]
        id = "rate-column"
        where = "§1"
        statement = "Every run has its bottleneck rate as a column."
        metric = "SELECT count(*) FILTER (WHERE \\"bottleneck.rate\\" = '10Mbps') - count(*) AS value FROM runs"
        holds = "value = 0"
        [[claim]]
        id = "samples"
        where = "§1"
        statement = "Time series are there."
        metric = "SELECT count(*) AS value FROM flows JOIN runs USING (run)"
        direction = "value > 0"
        quick = false
    """,
    "figures.toml": """
        [[figure]]
        id = "g"
        kind = "bars"
        caption = "Goodput."
        query = "SELECT 'x' AS x, \\"flow.cc\\" AS series, goodput_mbps AS y FROM runs"
        [[figure]]
        id = "ts"
        kind = "timeseries"
        caption = "Goodput over time."
        query = "SELECT \\"flow.cc\\" AS series, run, time_s AS x, f.goodput_bps / 1e6 AS y FROM runs JOIN flows f USING (run)"
    """,
}


def write_tiny(root: Path, **replace: str) -> Path:
    for name, text in {**TINY, **replace}.items():
        p = root / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(textwrap.dedent(text))
    return root


def test_tiny_reproduction_runs_resumes_and_keeps_modes_apart(tmp_path: Path):
    folder = write_tiny(tmp_path / "tiny")
    out = tmp_path / "out"
    o = reproductions.reproduce(folder, out, workers=1)
    assert [s.ran for s in o.sweeps] == [4]
    assert {c.claim.id: c.verdict for c in o.claims} == {"fills": "holds", "rate-column": "holds", "samples": "holds"}
    assert (out / "figures" / "g.png").read_bytes().startswith(PNG)
    assert (out / "figures" / "ts.png").read_bytes().startswith(PNG)
    page = (out / "report.html").read_text()
    assert "NewReno fills the 10 Mbit/s bottleneck." in page and 'id="ts"' in page
    m = json.loads((out / "reproduction.json").read_text())
    assert (m["mode"], m["runs"], m["runs_this_invocation"], m["verdicts"]) == ("full", 4, 4, {"holds": 3})
    # Two repetitions: each decided claim shows its two samples and says it has no interval.
    assert m["noise"] == {"no interval": 3}
    assert {c.claim.id: (c.n, c.noise_note) for c in o.claims}["fills"] == (2, "2 repetitions (an interval needs 5)")
    first = (out / "claims.csv").read_text()

    # Resume: nothing runs again and the claims come out the same.
    o2 = reproductions.reproduce(folder, out, workers=1)
    assert [s.ran for s in o2.sweeps] == [0]
    assert (out / "claims.csv").read_text() == first

    # The quick results never go into a full folder (and a stranger's folder is refused).
    with pytest.raises(rantcp.ConfigError, match="holds the full reproduction 'tiny'"):
        reproductions.reproduce(folder, out, quick=True)
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "x").write_text("mine")
    with pytest.raises(rantcp.ConfigError, match="not a reproduction folder"):
        reproductions.reproduce(folder, tmp_path / "other")
    assert (tmp_path / "other" / "x").read_text() == "mine"

    q = reproductions.reproduce(folder, tmp_path / "quick", quick=True, workers=1)
    assert [len(s.df) for s in q.sweeps] == [2]
    assert {c.claim.id: c.verdict for c in q.claims}["samples"] == "not run in quick mode"
    assert "Quick mode" in (tmp_path / "quick" / "report.html").read_text()


@pytest.mark.parametrize(
    "file, text, message",
    [
        ("claims.toml", '[[claim]]\nid = "a"\nwhere = "x"\nstatement = "s"\nmetric = "SELECT 1 AS value"\n', "give holds"),
        ("claims.toml", '[[claim]]\nid = "a"\nwhere = "x"\nstatement = "s"\nmetric = "SELECT 1 AS value"\nholds = "true"\nverdict = "holds"\n', "claim 1.verdict: unknown key"),
        ("figures.toml", '[[figure]]\nid = "g"\nkind = "pie"\ncaption = "c"\nquery = "SELECT 1"\n', "kind: 'pie'"),
        ("figures.toml", '[[figure]]\nid = "g"\nkind = "timeseries"\ncaption = "c"\nquery = "SELECT 1"\nshading = "nope"\n', "shading: 'nope'"),
        ("figures.toml", '[[figure]]\nid = "g"\nkind = "bars"\ncaption = "c"\nquery = "SELECT 1"\nylabel = "x"\n', "figure 'g'.ylabel: unknown key"),
    ],
)
def test_bad_definitions_name_the_field(tmp_path: Path, file: str, text: str, message: str):
    folder = write_tiny(tmp_path / "tiny", **{file: text})
    with pytest.raises(rantcp.ConfigError, match=message):
        load_folder(folder)


# ---------------------------------------------------------------------------------------------
# The command and seed 004


def test_cli_list_and_bad_input(tmp_path: Path):
    p = run_cli("reproduce", "--list")
    assert p.returncode == 0 and p.stdout.splitlines()[0].startswith("seed-000")
    for name in ("seed-001", "seed-003-split", "seed-004"):
        assert any(line.startswith(name) for line in p.stdout.splitlines()), name
    p = run_cli("reproduce", "seed-999", "--out", str(tmp_path / "x"))
    assert p.returncode == 2
    available = ", ".join(reproductions.names())
    assert p.stderr.strip() == f"rantcp: error: reproduction 'seed-999' not found (available: {available})"
    assert available.startswith("seed-000, seed-001, seed-002") and "seed-003-split" in available
    assert "seed-003-rst" in available and "seed-003-bsr" in available
    assert not (tmp_path / "x").exists()
    p = run_cli("reproduce")
    assert p.returncode == 2 and "name a reproduction" in p.stderr


def test_seed_004_definition_is_consistent():
    r = reproductions.load("seed-004")
    names = {s.name: s for s in r.sweeps}
    assert set(names) == {"edge", "mss14000", "remote", "udp", "udp-mss14000", "route15"}
    assert names["edge"].data["axes"] == {
        "flow.cc": ["newreno", "cubic", "highspeed", "bbr"],
        "rlc.buffer": ["20MiB", "2.5MiB", "0.25MiB"],
        "core.error_rate": [0.0, 1e-9, 1e-8, 1e-7],
    }
    # Every number the issue lists is a claim with the seed's value.
    papers = {c.id: c.paper for c in r.claims}
    assert papers["udp-20MB"] == 824.825 and papers["udp-2.5MB"] == 810.55 and papers["udp-0.25MB"] == 807.5
    assert papers["udp-mss14000"] == 839.38 and papers["hs-35pct-above-bbr-1e-8-mss14000"] == 35
    assert papers["min-rtt-edge-20ms"] == 20 and papers["min-rtt-remote-80ms"] == 80 and papers["route-end-716m"] == 716
    assert papers["route-drive-15s"] == 15
    # Every figure of the seed (1–26) and its Table 1.
    assert [f.where for f in r.figures] == ["Figure 1", "Table 1"] + [f"Figure {i}" for i in range(2, 27)]


@pytest.mark.timeout(240)
def test_reproduce_seed_004_quick(tmp_path: Path):
    out = tmp_path / "seed-004"
    r, _, m = run_quick("seed-004", out)
    drawn_figures(r, out)
    page = (out / "report.html").read_text()
    assert page.count("<figure ") == len(r.figures) and "Quick mode" in page
    assert m["runs"] == 85
    with open(out / "sweeps" / "edge" / "sweep.toml", "rb") as fh:
        assert tomllib.load(fh)["set"]["duration"] == "3s"


def test_seed_003_split_definition_is_consistent():
    r = reproductions.load("seed-003-split")
    names = {s.name: s for s in r.sweeps}
    assert set(names) == {"gain", "loss", "fig48", "fig47"}
    # Table 5's axes.
    gain = names["gain"].data
    assert gain["axes"]["radio.fixed_mcs"] == [5, 10, 15, 20, 25]
    assert gain["axes"]["flow.bytes"] == ["0.5MB", "1MB", "5MB", "10MB", "20MB"]
    assert list(zip(gain["axes"]["ran_rtt"], gain["axes"]["wan_rtt"])) == [("35ms", "85ms"), ("60ms", "60ms"), ("85ms", "35ms")]
    assert names["loss"].data["axes"]["functions.impair.loss"] == [0.0001, 0.0005, 0.001, 0.005, 0.01]
    papers = {c.id: c.paper for c in r.claims}
    assert papers["es-94pct-60-60-20MB-mcs25"] == 94 and papers["as-93pct-60-60-20MB-mcs25"] == 93
    assert papers["fig48-gain-56pct"] == 56 and papers["fig48-e2e-7s"] == 7
    wheres = [f.where for f in r.figures]
    for n in (47, 48, 49, 50, 51, 52, 53):
        assert any(w.startswith(f"Figure {n}") for w in wheres), n


@pytest.mark.timeout(400)
def test_reproduce_seed_003_split_quick(tmp_path: Path):
    out = tmp_path / "seed-003-split"
    r, _, m = run_quick("seed-003-split", out)
    assert {f.kind for f in r.figures}.isdisjoint({"config", "table"})
    drawn_figures(r, out)
    assert {c.id for c in r.claims if not c.quick} == {"fig53-rises-to-0.5pct-then-falls"}
    assert m["runs"] == 150 + 30 + 2 + 2  # gain 2 x 3 x 5 x 5, loss 3 x 2 x 5, fig48, fig47


def test_seed_001_definition_is_consistent():
    r = reproductions.load("seed-001")
    names = {s.name: s for s in r.sweeps}
    assert set(names) == {"fig1", "fig5", "fig5um", "fig6", "urban"}
    fig5 = names["fig5"].data
    assert fig5["axes"]["functions.proxy.mode"] == ["none", "pep", "mmpep"]
    assert fig5["axes"]["ue.los_duration"] == fig5["axes"]["ue.nlos_duration"] == ["0.5s", "1s", "1.5s", "2s", "2.5s", "3s"]
    assert fig5["set"]["functions.proxy.alpha"] == 1.12 and fig5["set"]["functions.proxy.beta_slots"] == 10
    fig6 = names["fig6"].data
    assert fig6["set"]["ue.los_duration"] == "100s"
    assert fig6["axes"]["ue.nlos_duration"] == ["1s", "2s", "5s", "10s", "15s", "20s"]
    assert names["fig1"].data["set"]["core.server_rate"] == "50Mbps"
    # Beyond the paper: every scheme with every server controller, enough repetitions for a
    # 95 % interval (rantcp.sweeps.stats.MIN_REPETITIONS_FOR_INTERVAL).
    urban = names["urban"].data
    assert urban["sweep"]["scenario"] == "builtin:mmwave-urban"
    assert urban["axes"] == {"functions.proxy.mode": ["none", "pep", "mmpep"], "flow.cc": ["newreno", "cubic", "bbr"]}
    assert urban["sweep"]["repetitions"] >= MIN_REPETITIONS_FOR_INTERVAL
    papers = {c.id: c.paper for c in r.claims}
    assert papers["fig5-mmpep-near-cap"] == 100 and papers["fig5-mmpep-3x-pep-delivery"] == 3 and papers["gamma-0.2"] == 0.2
    wheres = [f.where for f in r.figures]
    for w in ("Figure 1", "Table I", "Figure 5 (a)", "Figure 5 (b)", "Figure 6 (a)", "Figure 6 (b)"):
        assert w in wheres, w


@pytest.mark.timeout(300)
def test_reproduce_seed_001_quick(tmp_path: Path):
    out = tmp_path / "seed-001"
    r, verdicts, m = run_quick("seed-001", out)
    drawn_figures(r, out)
    # Whatever the verdicts, the model's facts the claims rest on: nothing reaches the UE in
    # NLOS, and γ of Eq. 2 is the seed's.
    assert verdicts["fig1-nlos-no-packets"] == "holds" and verdicts["gamma-0.2"] == "holds"
    assert m["runs"] == 1 + 18 + 18 + 18 + 9
    # The urban table: every scheme x controller once (one repetition: no interval), the gain
    # over plain TCP with the same controller is the paired difference of the runs' goodputs.
    urban = pd.read_csv(out / "figures" / "urban.csv")
    assert len(urban) == 9 and set(urban["n"]) == {1}
    assert urban["rate_ci95"].isna().all()
    tcp = urban[urban["scheme"] == "TCP"].set_index("cc")["rate_mbps"]
    for row in urban.itertuples():
        assert abs(row.gain_mbps - (row.rate_mbps - tcp[row.cc])) <= 0.011, row
        assert abs(row.gain_over_bbr_alone_mbps - (row.rate_mbps - tcp["bbr"])) <= 0.011, row


def test_seed_002_definition_is_consistent():
    r = reproductions.load("seed-002")
    names = {s.name: s for s in r.sweeps}
    assert set(names) == {
        "fig1", "table1", "fig5", "fig8", "fig9", "fig8co", "fig9co",
        "beyond_bbr", "beyond_delay", "beyond_mmwave",
    }
    # Close coupling as the seed describes it: a sender without congestion control at the RAN
    # (I-TCP host at the core, radio leg "none") feeding the eNB's IP buffer.
    for n in ("fig8co", "fig9co"):
        st = names[n].data["set"]
        assert st["functions.close_coupled.enabled"] is True
        assert (st["functions.split.mode"], st["functions.split.ran_cc"]) == ("i-tcp", "none")
    # Table 1's buffers and traffic, Figure 5's burst, Figure 1 beside the air link's rate.
    t1 = names["table1"].data
    assert t1["axes"]["rlc.buffer"] == ["45KB", "60KB"]
    assert (t1["set"]["flow.app"], t1["set"]["flow.burst_size"]) == ("bursts", "2MB")
    assert names["fig5"].data["set"]["flow.burst_size"] == "0.5MB"
    assert names["fig5"].data["set"]["flow.burst_count"] == 1
    assert names["fig1"].data["axes"]["traffic"] == ["tcp", "udp-saturation"]
    papers = {c.id: c.paper for c in r.claims}
    assert (papers["table1-45KB-normal"], papers["table1-45KB-rate"], papers["table1-45KB-queue"]) == (14.5, 15.9, 16.6)
    assert (papers["table1-60KB-normal"], papers["table1-60KB-rate"], papers["table1-60KB-queue"]) == (16.57, 17.33, 18.59)
    assert (papers["table1-45KB-gain"], papers["table1-60KB-gain"]) == (14.5, 12.1)
    assert papers["fig5-short-flow-latency-minus-66pct"] == 66
    assert papers["fig9-close-coupled-latency-minus-37pct"] == 37
    wheres = [f.where for f in r.figures]
    for w in ("Figure 1", "Table 1", "Figure 5", "Figure 8", "Figure 9"):
        assert any(x.startswith(w) for x in wheres), w


@pytest.mark.timeout(300)
def test_reproduce_seed_002_quick(tmp_path: Path):
    out = tmp_path / "seed-002"
    r, _, m = run_quick("seed-002", out)
    drawn_figures(r, out)
    # Every claim gets a verdict from the runs (none lacks data).
    assert all(c.quick for c in r.claims)
    # fig1 16, table1 16, fig5 8, fig8 4, fig8co 1, fig9 2, fig9co 1, beyond_bbr 3,
    # beyond_delay 6, beyond_mmwave 3: one repetition each.
    assert m["runs"] == 16 + 16 + 8 + 4 + 1 + 2 + 1 + 3 + 6 + 3



def five_repetitions() -> Results:
    runs = pd.DataFrame({"run": [f"s/{i}" for i in range(10)], "status": ["ok"] * 10, "sweep": ["s"] * 10,
                         "repetition": [1, 2, 3, 4, 5] * 2, "cc": ["a"] * 5 + ["b"] * 5,
                         "tput": [100.0, 104, 98, 101, 103, 90, 92, 95, 91, 93]})
    return Results(runs, {}, "CREATE MACRO mean_of(c_) AS (SELECT avg(tput) FROM runs WHERE cc = c_);")


class InterruptedRules:
    """A DuckDB connection whose `nth` query of a claim's rules raises what DuckDB raises for a
    Ctrl-C or SIGTERM during a statement; every other call goes to `con`."""

    def __init__(self, con: Any, nth: int) -> None:
        self.con, self.nth, self.calls = con, nth, 0

    def execute(self, sql: str, *a: Any) -> Any:
        if "_claim_row" in sql:
            self.calls += 1
            if self.calls == self.nth:
                raise RuntimeError("Query interrupted")
        return self.con.execute(sql, *a)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.con, name)


@pytest.mark.parametrize("metric, holds, nth", [
    ("SELECT mean_of('a') AS value", "value > 50", 1),  # the verdict's query
    ("SELECT mean_of('a') AS value", "value > 50", 2),  # the noise check over the interval
    ("SELECT mean_of('a') AS value, mean_of('b') AS b", "value > b", 2),  # the noise check per repetition
])
def test_an_interrupt_during_a_rule_s_query_is_the_interrupt_not_a_claim_error(metric: str, holds: str, nth: int):
    """DuckDB raises a Ctrl-C or SIGTERM that comes during a statement as RuntimeError("Query
    interrupted") (tests/test_interrupt.py); the rules' query raises it as KeyboardInterrupt.
    Before: the rules' query or the noise check's took it for a failing rule, so an interrupted
    reproduction recorded the claim as an error (or its noise as unknown) and went on."""
    assert cl.evaluate(claim(metric=metric, holds=holds), five_repetitions()).noise == "significant"  # both queries run
    results = five_repetitions()
    con = InterruptedRules(results.con, nth)
    results.con = con  # type: ignore[assignment]
    with pytest.raises(KeyboardInterrupt):
        cl.evaluate(claim(metric=metric, holds=holds), results)
    assert con.calls == nth
