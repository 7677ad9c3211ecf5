"""Claim verdicts against their own noise: the metric on each repetition alone, a Student-t
95 % interval over those samples, and "within noise" when the rules give another verdict
somewhere in it (rantcp.reproductions.claims, module doc). Synthetic runs tables only."""

from __future__ import annotations

from typing import Any

import pandas as pd
import pytest

from rantcp.reproductions import claims as cl
from rantcp.reproductions.results import Results
from rantcp.reproductions.spec import Claim
from rantcp.sweeps.stats import interval


def paired(diffs: list[float], base: float = 100.0, extra: dict[str, list[float]] | None = None) -> Results:
    """Sweep "s": schemes a and b, one run each per repetition; b = a + diffs[r] (a varies by
    repetition much more than the difference: the drops' luck, shared by both). `extra`: more
    sweeps, {name: a-values per repetition} (their own repetition count)."""
    rows = []
    for r, d in enumerate(diffs):
        a = base + 20.0 * ((r * 7) % 5 - 2)
        rows.append({"sweep": "s", "run": f"s/a{r}", "repetition": r, "status": "ok", "scheme": "a", "tput": a})
        rows.append({"sweep": "s", "run": f"s/b{r}", "repetition": r, "status": "ok", "scheme": "b", "tput": a + d})
    for name, vals in (extra or {}).items():
        for r, v in enumerate(vals):
            rows.append({"sweep": name, "run": f"{name}/{r}", "repetition": r, "status": "ok", "scheme": "a", "tput": v})
    runs = pd.DataFrame(rows)
    ts = pd.DataFrame({"run": [x for x in runs["run"] for _ in range(3)], "time_s": [0.1, 0.2, 0.3] * len(runs),
                       "y": [float(t) for t in runs["tput"] for _ in range(3)]})
    prelude = "CREATE MACRO m(s_, c_) AS (SELECT avg(tput) FROM runs WHERE sweep = s_ AND scheme = c_);"
    return Results(runs, {"flows": ts}, prelude)


GAIN = "SELECT 100 * (m('s', 'b') / m('s', 'a') - 1) AS value, m('s', 'a') AS a"


def claim(**kw: Any) -> Claim:
    base: dict[str, Any] = {"id": "c", "where": "§1", "statement": "b is above a", "metric": GAIN, "unit": "%", "direction": "value > 0"}
    base.update(kw)
    return Claim(**base)


def test_a_near_tie_is_within_noise():
    res = paired([1.0, -0.8, 1.5, -1.2, 0.9])
    r = cl.evaluate(claim(), res)
    assert r.verdict == "holds" and r.value is not None and r.value > 0  # the point says b is above a ...
    assert r.noise == "within noise"  # ... but not at 95 %
    assert r.noise_note.startswith("does not hold at ")
    assert r.n == 5 and r.low is not None and r.high is not None and r.low < 0 < r.high
    assert r.verdict_text() == "holds (within noise)"
    md = cl.markdown([r])
    assert "**holds (within noise)**: does not hold at" in md
    row = cl.table([r]).iloc[0]
    assert (row["verdict"], row["noise"], row["n"]) == ("holds", "within noise", 5)


def test_a_clear_effect_is_significant():
    r = cl.evaluate(claim(), paired([10.0, 11.0, 9.0, 10.5, 9.5]))
    assert (r.verdict, r.noise, r.noise_note) == ("holds", "significant", "")
    assert r.low is not None and r.high is not None and 0 < r.low < r.high and r.verdict_text() == "holds"


def test_the_samples_are_the_metric_on_each_repetition_alone():
    diffs = [10.0, 11.0, 9.0, 10.5, 9.5]
    r = cl.evaluate(claim(), paired(diffs))
    a = [100.0 + 20.0 * ((k * 7) % 5 - 2) for k in range(5)]
    expect = [100 * ((x + d) / x - 1) for x, d in zip(a, diffs)]
    assert r.samples == pytest.approx(expect)
    mean, lo, hi, n = interval(expect)
    assert (r.mean, r.low, r.high) == pytest.approx((mean, lo, hi))
    # The reported value stays the metric over all runs (a ratio of means, not the mean ratio).
    assert r.value == pytest.approx(100 * ((sum(a) + sum(diffs)) / sum(a) - 1))
    # Time series are restricted too.
    ts = cl.evaluate(claim(metric="SELECT avg(y) AS value FROM flows JOIN runs USING (run) WHERE scheme = 'b'", direction="value > 0"), paired(diffs))
    assert ts.samples == pytest.approx([x + d for x, d in zip(a, diffs)])


def test_a_band_rule_that_the_interval_spans_is_within_noise():
    # Point 4.0 %, paper 3 %, "holds if within ±0.5 points": does not hold at the point, holds
    # inside the interval, though neither end of the interval holds.
    r = cl.evaluate(claim(direction=None, paper=3.0, holds="abs(value - paper) <= 0.5"), paired([4.0, -2.0, 10.0, 0.0, 8.0]))
    assert r.verdict == "does not hold" and r.low is not None and r.high is not None and r.low < 2.5 and r.high > 3.5
    assert r.noise == "within noise" and r.noise_note.startswith("holds at ")
    # The value named is the one closest to the point where the verdict differs.
    at = float(r.noise_note.split(" at ")[1])
    assert 3.4 < at <= 3.5


def test_one_repetition_has_no_interval():
    r = cl.evaluate(claim(), paired([10.0]))
    assert (r.verdict, r.noise, r.noise_note, r.samples) == ("holds", "no interval", "one repetition", [])
    assert r.interval_text() == "no interval: one repetition"
    assert r.verdict_text() == "holds (no interval)"


def test_fewer_than_five_repetitions_show_samples_but_no_interval():
    r = cl.evaluate(claim(), paired([10.0, 11.0, 9.0]))
    assert (r.noise, r.noise_note, r.n) == ("no interval", "3 repetitions (an interval needs 5)", 3)
    assert r.mean == pytest.approx(sum(r.samples) / 3) and r.low is None


def test_a_metric_that_is_not_decomposable_by_repetition_has_no_interval():
    # The spread across repetitions is NULL on one repetition alone.
    r = cl.evaluate(claim(metric="SELECT stddev_samp(tput) AS value FROM runs WHERE scheme = 'a'", direction="value > 0"), paired([1.0] * 5))
    assert r.verdict == "holds"
    assert (r.noise, r.noise_note) == ("no interval", "no value in repetition 0 alone (the metric is NULL)")
    # No row in a repetition.
    r = cl.evaluate(claim(metric="SELECT tput AS value FROM runs WHERE run = 's/a3'"), paired([1.0] * 5))
    assert (r.noise, r.noise_note) == ("no interval", "no value in repetition 0 alone (no matching runs)")


def test_a_claim_joining_sweeps_of_different_repetition_counts_has_no_interval():
    res = paired([10.0, 11.0, 9.0, 10.5, 9.5], extra={"one": [50.0]})
    joined = cl.evaluate(claim(metric="SELECT m('s', 'b') - m('one', 'a') AS value"), res)
    assert joined.verdict == "holds"
    assert (joined.noise, joined.noise_note) == ("no interval", "joins sweeps with different repetition counts (one: 1; s: 5)")
    # A claim on one sweep of that reproduction still gets its interval; one on the short sweep
    # alone says it has one repetition.
    own = cl.evaluate(claim(), res)
    assert (own.noise, own.n) == ("significant", 5)
    short = cl.evaluate(claim(metric="SELECT m('one', 'a') AS value"), res)
    assert (short.noise, short.noise_note) == ("no interval", "one repetition")
    # Two sweeps of the same count pair by repetition even beside a sweep of another count.
    res = paired([10.0, 11.0, 9.0, 10.5, 9.5], extra={"one": [50.0], "t": [60.0, 61.0, 59.0, 60.5, 59.5]})
    both = cl.evaluate(claim(metric="SELECT m('s', 'a') - m('t', 'a') AS value"), res)
    assert (both.noise, both.n) == ("significant", 5)
    spread = cl.evaluate(claim(metric="SELECT stddev_samp(tput) AS value FROM runs WHERE sweep = 't'"), res)
    assert (spread.noise, spread.noise_note) == ("no interval", "no value in repetition 0 alone (the metric is NULL)")


def test_undecided_claims_have_no_noise_mark_and_output_is_deterministic():
    res = paired([1.0, -0.8, 1.5, -1.2, 0.9])
    cs = [claim(id="n", metric="SELECT NULL::DOUBLE AS value"), claim(id="e", metric="SELECT nope AS value"), claim(id="t")]
    a = cl.table(cl.evaluate_all(cs, res)).to_csv(index=False)
    b = cl.table(cl.evaluate_all(cs, res)).to_csv(index=False)
    assert a == b
    rs = cl.evaluate_all(cs, res)
    assert [(r.verdict, r.noise) for r in rs] == [("no data", ""), ("error", ""), ("holds", "within noise")]
    assert cl.noise_counts(rs) == {"within noise": 1}


def test_the_cli_prints_the_interval_and_the_mark(capsys):
    from types import SimpleNamespace

    from rantcp.reproductions.cli import _print

    res = paired([1.0, -0.8, 1.5, -1.2, 0.9])
    rs = cl.evaluate_all([claim(id="tie"), claim(id="one", metric="SELECT m('s', 'a') AS value FROM runs WHERE false")], res)
    _print(SimpleNamespace(claims=rs, sweeps=[], failed_runs=0, wall_s=1.0, out=__import__("pathlib").Path("o")))  # type: ignore[arg-type]
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("tie ") and "holds (within noise): does not hold at" in out[0] and "[" in out[0]
    assert out[1].endswith("no data")
    assert out[2].startswith("1 holds, 1 no data (1 within noise)")


def test_shipped_reproductions_pair_repetitions_across_sweeps():
    # The per-repetition samples pair the points of a repetition (common random numbers within
    # a sweep, rantcp.sweeps.spec) and, for claims over several sweeps, across sweeps: every
    # sweep of a reproduction derives its repetition seeds from the same base seed.
    from rantcp import reproductions

    for name in reproductions.names():
        r = reproductions.load(name)
        bases = {(s.data["sweep"].get("seed"), tuple(s.data["sweep"].get("seeds", ()))) for s in r.sweeps}
        assert len(bases) == 1 and None not in next(iter(bases))[:1], (name, bases)


def test_a_count_over_runs_is_not_decomposable_by_repetition():
    # The number of runs of scheme a: 5 over all runs, 1 per repetition.
    r = cl.evaluate(claim(metric="SELECT count(*) AS value FROM runs WHERE scheme = 'a'"), paired([1.0] * 5))
    assert (r.verdict, r.value, r.samples) == ("holds", 5.0, [1.0] * 5)
    assert r.noise == "no interval" and r.noise_note.startswith("the metric over all runs (5) is outside its values on single repetitions (1 to 1)")


def test_rules_over_detail_columns_use_each_repetitions_own_row():
    # "b is the largest": b beats c in every repetition but one. The detail (the largest mean)
    # moves with the value, so the value's interval alone says nothing; each repetition decides.
    def res(pairs: list[tuple[float, float]]) -> Results:
        rows = []
        for r, (b, c) in enumerate(pairs):
            rows += [{"sweep": "s", "run": f"s/{k}{r}", "repetition": r, "status": "ok", "scheme": k, "tput": v} for k, v in (("b", b), ("c", c))]
        return Results(pd.DataFrame(rows), {}, "")

    b, c = "avg(tput) FILTER (WHERE scheme = 'b')", "avg(tput) FILTER (WHERE scheme = 'c')"
    largest = claim(metric=f"SELECT {b} AS value, greatest({b}, {c}) AS max_all FROM runs", direction=None, holds="value >= max_all - 1e-9")
    r = cl.evaluate(largest, res([(12.0, 10.0), (11.0, 10.0), (9.0, 10.0), (12.0, 10.0), (13.0, 10.0)]))
    assert r.verdict == "holds" and r.noise == "within noise"
    assert r.noise_note == "does not hold in repetition 2 alone (9) (the rules compare with max_all)"
    r = cl.evaluate(largest, res([(12.0, 10.0), (11.0, 10.0), (10.5, 10.0), (12.0, 10.0), (13.0, 10.0)]))
    assert (r.verdict, r.noise) == ("holds", "significant")
