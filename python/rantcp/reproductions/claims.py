"""Claims as data, verdicts computed.

A claim's ``metric`` is one SELECT over the reproduction's results (see
:mod:`rantcp.reproductions.results`) returning at most one row with a column ``value``:
rantcp's number. Its other columns are details shown beside it (e.g. each controller's
throughput behind a ratio). The verdict comes from two optional SQL boolean expressions over
that row's columns and ``paper`` (the seed's number):

* ``direction``: the effect has the seed's sign (e.g. ``value > 0`` for "A is above B");
* ``holds``: the seed's finding holds as stated (e.g. ``abs(value - paper) <= 0.1 * paper``).

Decision:

====================  =====================================================================
no data               the metric gave no row, or ``value`` (or a rule) is NULL
does not hold         ``direction`` is false; or there is no ``direction`` and ``holds`` is false
holds in direction    ``direction`` is true but ``holds`` is false
holds                 ``holds`` is true (and ``direction``, if given, too); or only
                      ``direction`` is given and it is true
====================  =====================================================================

plus "not run in quick mode" for a claim marked ``quick = false`` in a quick run, and "error"
when its SQL fails (the message is kept; the command then exits 1).

Noise. ``value`` is the metric over all runs, and a verdict from one number can flip between
reruns when the effect is smaller than the run-to-run spread. So every decided claim (holds,
holds in direction, does not hold) also gets ``noise``, one of

====================  =====================================================================
significant           the rules give the same verdict everywhere in the 95 % interval
within noise          somewhere in the interval the rules give another verdict (named in
                      ``noise_note`` with the value where it happens)
no interval           the metric cannot be split by repetition, or has too few repetitions;
                      ``noise_note`` says why
====================  =====================================================================

The interval is per repetition: every run of repetition ``r`` of a sweep uses the same seed at
every point (common random numbers, :func:`rantcp.sweeps.spec.derive_seed`), so the metric
evaluated on one repetition alone (``runs`` and the time series restricted to it, the prelude's
views on top) is one paired sample of the effect, and the repetitions are independent. From the
samples: their mean and a Student-t 95 % interval (:func:`rantcp.sweeps.stats.interval`, so none
below ``MIN_REPETITIONS_FOR_INTERVAL`` = 5 samples, as in the figures). Per repetition rather than
a leave-one-repetition-out jackknife: the samples are what one rerun would give and are shown,
and many metrics are medians, percentiles, maxima or counts over points, where the jackknife's
variance is not consistent; for a metric linear in the runs both give the same interval.

The rules are evaluated at the point, at both ends of the interval, at 0 and ``paper`` when
inside it, and at 199 evenly spaced values between the ends. Rules that compare the value with
detail columns of the metric (``value >= max_all``: "the largest of all points") cannot move the
value alone, since the details move with it: there each repetition's own row (value and details)
decides, and a repetition whose verdict differs from the point's is noise. No interval when: the runs have one repetition; the metric is NULL,
empty or fails in some repetition; the all-runs value lies outside the per-repetition values
(a count or sum over runs, n times one repetition's; an extreme of noisy means); the claim depends on sweeps with different repetition counts
(it depends on the sweeps of a count when leaving all their runs out of the first repetition
changes the metric there);
fewer than 5 repetitions.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from rantcp._native import ConfigError
from rantcp.interrupts import as_keyboard_interrupt
from rantcp.reproductions.results import Results, check_select
from rantcp.reproductions.spec import Claim

__all__ = [
    "HOLDS", "IN_DIRECTION", "NOT_HOLD", "NO_DATA", "NOT_QUICK", "ERROR", "SIGNIFICANT", "WITHIN_NOISE", "NO_INTERVAL",
    "ClaimResult", "Repetitions", "decide", "evaluate", "evaluate_all",
]

HOLDS = "holds"
IN_DIRECTION = "holds in direction"
NOT_HOLD = "does not hold"
NO_DATA = "no data"
NOT_QUICK = "not run in quick mode"
ERROR = "error"
VERDICTS = (HOLDS, IN_DIRECTION, NOT_HOLD, NO_DATA, NOT_QUICK, ERROR)
DECIDED = (HOLDS, IN_DIRECTION, NOT_HOLD)

SIGNIFICANT = "significant"
WITHIN_NOISE = "within noise"
NO_INTERVAL = "no interval"
NOISE = (SIGNIFICANT, WITHIN_NOISE, NO_INTERVAL)
GRID = 199
"""Values between the interval's ends at which the rules are evaluated (besides the ends)."""


@dataclass
class ClaimResult:
    claim: Claim
    verdict: str
    value: float | None = None
    details: dict[str, Any] = field(default_factory=dict)
    message: str = ""
    """Why there is no verdict (no data, error)."""
    noise: str = ""
    """significant / within noise / no interval for a decided verdict; "" otherwise."""
    noise_note: str = ""
    """Why there is no interval, or the other verdicts inside it."""
    samples: list[float] = field(default_factory=list)
    """The metric on each repetition alone, in repetition order (empty when not decomposable)."""
    mean: float | None = None
    low: float | None = None
    high: float | None = None

    @property
    def n(self) -> int:
        return len(self.samples)

    def as_row(self) -> dict[str, Any]:
        c = self.claim
        return {
            "id": c.id,
            "where": c.where,
            "statement": c.statement,
            "paper": c.paper,
            "rantcp": self.value,
            "unit": c.unit,
            "verdict": self.verdict,
            "noise": self.noise,
            "n": self.n,
            "mean": self.mean,
            "ci_low": self.low,
            "ci_high": self.high,
            "samples": " ".join(fmt_number(v) for v in self.samples),
            "noise_note": self.noise_note,
            "details": ", ".join(f"{k} {fmt_number(v)}" for k, v in self.details.items()),
            "rule": rule_text(c),
            "message": self.message,
        }

    def verdict_text(self) -> str:
        """The verdict with its noise mark: "holds (within noise)", "holds (no interval)"."""
        if self.noise in (WITHIN_NOISE, NO_INTERVAL):
            return f"{self.verdict} ({self.noise})"
        return self.verdict

    def interval_text(self, unit: str = "") -> str:
        """"[low, high]" with the unit, or "no interval: why"; "" for an undecided claim."""
        if self.low is not None and self.high is not None:
            return f"[{fmt_number(self.low)}, {fmt_number(self.high)}]{unit}, n = {self.n}"
        if self.noise == NO_INTERVAL:
            return f"no interval: {self.noise_note}"
        return ""


def fmt_number(v: Any) -> str:
    """Four significant digits for floats, as is for the rest; "–" for missing."""
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "–"
    if isinstance(v, bool):
        return str(v).lower()
    if isinstance(v, float):
        if v == 0:
            return "0"
        if abs(v) >= 1e5 or abs(v) < 1e-3:
            return f"{v:.3g}"
        return f"{v:.4g}"
    return str(v)


def rule_text(c: Claim) -> str:
    parts = []
    if c.holds:
        parts.append(f"holds if {c.holds}")
    if c.direction:
        parts.append(f"direction: {c.direction}")
    return "; ".join(parts)


def decide(holds: bool | None, direction: bool | None, has_holds: bool, has_direction: bool) -> str:
    """The verdict from the evaluated rules (None = the rule gave NULL)."""
    if (has_holds and holds is None) or (has_direction and direction is None):
        return NO_DATA
    if has_direction and not direction:
        return NOT_HOLD
    if not has_holds:
        return HOLDS
    if holds:
        return HOLDS
    return IN_DIRECTION if has_direction else NOT_HOLD


def _is_null(v: Any) -> bool:
    return v is None or v is pd.NA or v is pd.NaT or (isinstance(v, float) and math.isnan(v))


def _py(v: Any) -> Any:
    if _is_null(v):
        return None
    if hasattr(v, "item"):
        return v.item()
    return v


def _metric_row(claim: Claim, results: Results) -> tuple[pd.DataFrame | None, dict[str, Any] | None, str]:
    """(the metric's one-row frame, its row as Python values, "") or (None, None, why not);
    why starts with "error:" for a failed or malformed metric, else it says there is no value."""
    where = f"claim {claim.id!r}"
    try:
        df = results.query(claim.metric, f"{where} metric")
    except ConfigError as e:
        return None, None, f"error:{e}"
    if len(df) > 1:
        return None, None, f"error:{where}: the metric returned {len(df)} rows; expected one"
    if "value" not in df.columns:
        return None, None, f"error:{where}: the metric has no column named value"
    if "paper" in df.columns:
        return None, None, f"error:{where}: the metric may not name a column paper (the rules' name for the seed's number)"
    if len(df) == 0:
        return df, None, "no matching runs"
    row = {k: _py(v) for k, v in df.iloc[0].items()}
    value = row["value"]
    if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))):
        return None, None, f"error:{where}: value {value!r} is not a number"
    return df, row, ""


def _rules(claim: Claim, results: Results, rows: pd.DataFrame) -> list[str]:
    """The verdict of each row of `rows` (the metric's columns); raises on a rule's SQL error,
    and KeyboardInterrupt for a Ctrl-C or SIGTERM during the query (rantcp.interrupts)."""
    sel = ", ".join(f"({e})::BOOLEAN AS {n}" for n, e in (("h", claim.holds), ("d", claim.direction)) if e)
    sql = f"SELECT {sel} FROM _claim_row, (SELECT CAST($paper AS DOUBLE) AS paper) ORDER BY _claim_i"
    check_select(sql, f"claim {claim.id!r} rules")
    rows = rows.assign(_claim_i=range(len(rows)))
    results.con.register("_claim_row", rows)
    try:
        with as_keyboard_interrupt():
            r = results.con.execute(sql, {"paper": claim.paper}).df()
    finally:
        results.con.unregister("_claim_row")
    out = []
    for i in range(len(r)):
        h = _py(r["h"].iloc[i]) if claim.holds else None
        d = _py(r["d"].iloc[i]) if claim.direction else None
        out.append(decide(h, d, claim.holds is not None, claim.direction is not None))
    return out


def evaluate(claim: Claim, results: Results, quick: bool = False, reps: Repetitions | None = None) -> ClaimResult:
    """One claim's verdict (never raises for a claim's own SQL error: verdict "error"), and, for
    a decided verdict, its noise against the repetitions (`reps`, built from `results` when not
    given)."""
    if quick and not claim.quick:
        return ClaimResult(claim, NOT_QUICK, message="needs the full run")
    where = f"claim {claim.id!r}"
    df, row, why = _metric_row(claim, results)
    if why.startswith("error:"):
        return ClaimResult(claim, ERROR, message=why[len("error:"):])
    if row is None or df is None:
        return ClaimResult(claim, NO_DATA, message=why)
    value = row.pop("value")
    details = row
    if value is None:
        return ClaimResult(claim, NO_DATA, None, details, "the metric is NULL (no matching runs?)")
    value = float(value)
    try:
        verdict = _rules(claim, results, df)[0]
    except Exception as e:  # a rule's SQL error (duckdb.Error) or a non-SELECT rule
        return ClaimResult(claim, ERROR, value, details, f"{where} rules: {str(e).splitlines()[0]}")
    res = ClaimResult(claim, verdict, value, details, "a rule is NULL" if verdict == NO_DATA else "")
    if verdict in DECIDED:
        own = reps is None
        reps = Repetitions(results) if reps is None else reps
        try:
            _noise(res, df, results, reps)
        finally:
            if own:
                reps.close()
    return res


class Repetitions:
    """A reproduction's results split for the intervals: one Results per repetition (runs and
    time series of that repetition only) and, when sweeps differ in repetition count, one per
    count: the first repetition without the sweeps of that count (to see which counts a claim
    depends on). Built lazily, closed together."""

    def __init__(self, results: Results) -> None:
        self.results = results
        runs = results.runs
        self.reps: list[int] = sorted(int(r) for r in runs["repetition"].dropna().unique()) if "repetition" in runs else []
        self.sweep_reps: dict[str, int] = {}
        if "sweep" in runs and "repetition" in runs:
            for name, g in runs.groupby("sweep", sort=True):
                self.sweep_reps[str(name)] = int(g["repetition"].nunique())
        self._by_rep: dict[int, Results] = {}
        self._without: dict[int, Results] = {}

    @property
    def counts(self) -> list[int]:
        """The sweeps' distinct repetition counts, ascending."""
        return sorted(set(self.sweep_reps.values()))

    def sweeps_with(self, count: int) -> list[str]:
        return [s for s, n in self.sweep_reps.items() if n == count]

    def of(self, rep: int) -> Results:
        if rep not in self._by_rep:
            self._by_rep[rep] = self.results.subset(self.results.runs["repetition"] == rep)
        return self._by_rep[rep]

    def without(self, count: int) -> tuple[Results, Results]:
        """Repetition 0 with and without every sweep that has `count` repetitions (a claim
        depends on the same sweeps in every repetition; one repetition is the cheapest)."""
        if count not in self._without:
            runs = self.results.runs
            self._without[count] = self.results.subset((runs["repetition"] == self.reps[0]) & ~runs["sweep"].isin(self.sweeps_with(count)))
        return self.of(self.reps[0]), self._without[count]

    def close(self) -> None:
        for r in [*self._by_rep.values(), *self._without.values()]:
            r.close()
        self._by_rep.clear()
        self._without.clear()


def _same_row(a: dict[str, Any] | None, b: dict[str, Any] | None) -> bool:
    """Equal metric rows (floats to 1e-12 relative: leaving rows out may reorder a sum); two
    missing rows are equal."""
    if a is None or b is None:
        return a is None and b is None
    if a.keys() != b.keys():
        return False
    for k, x in a.items():
        y = b[k]
        if isinstance(x, float) and isinstance(y, (int, float)) and not isinstance(y, bool):
            if not math.isclose(x, float(y), rel_tol=1e-12, abs_tol=1e-300):
                return False
        elif x != y:
            return False
    return True


def _noise(res: ClaimResult, df: pd.DataFrame, results: Results, reps: Repetitions) -> None:
    """Fills res.noise, noise_note, samples, mean, low, high (see the module doc)."""
    from rantcp.sweeps.stats import MIN_REPETITIONS_FOR_INTERVAL, interval

    claim = res.claim

    def no(why: str) -> None:
        res.noise, res.noise_note = NO_INTERVAL, why

    if not reps.reps:
        return no("the runs have no repetition column")
    if len(reps.reps) == 1:
        return no("one repetition")
    wanted = reps.reps
    if len(reps.counts) > 1:
        # The counts whose sweeps the claim depends on: leaving them out changes its metric.
        deps = []
        for n in reps.counts:
            rep0, rest = reps.without(n)
            if not _same_row(_metric_row(claim, rep0)[1], _metric_row(claim, rest)[1]):
                deps.append(n)
        if len(deps) > 1:
            groups = "; ".join(f"{', '.join(reps.sweeps_with(n))}: {n}" for n in deps)
            return no(f"joins sweeps with different repetition counts ({groups})")
        if deps:
            runs = results.runs
            wanted = sorted(int(r) for r in runs[runs["sweep"].isin(reps.sweeps_with(deps[0]))]["repetition"].dropna().unique())
    if len(wanted) == 1:
        return no("one repetition")
    samples = []
    rows = []
    for r in wanted:
        rdf, row, why = _metric_row(claim, reps.of(r))
        v = None if row is None else row.get("value")
        if v is None or rdf is None:
            why = why[len("error:"):].split(": ", 1)[-1] if why.startswith("error:") else (why or "the metric is NULL")
            return no(f"no value in repetition {r} alone ({why})")
        samples.append(float(v))
        rows.append(rdf)
    res.samples = samples
    assert res.value is not None
    lo_s, hi_s = min(samples), max(samples)
    tol = 1e-9 * max(abs(lo_s), abs(hi_s), abs(res.value))
    if not lo_s - tol <= res.value <= hi_s + tol:
        # A mean, a ratio of sums, a pooled median or maximum lies among its per-repetition
        # values; a count or a sum over runs (n times one repetition's) or an extreme of noisy
        # means does not, and its per-repetition values measure something else.
        return no(
            f"the metric over all runs ({fmt_number(res.value)}) is outside its values on single repetitions "
            f"({fmt_number(lo_s)} to {fmt_number(hi_s)}): not decomposable by repetition (a count or sum over runs?)"
        )
    mean, lo, hi, n = interval(samples)
    res.mean = mean
    if lo != lo or hi != hi:
        return no(f"{n} repetitions (an interval needs {MIN_REPETITIONS_FOR_INTERVAL})")
    res.low, res.high = lo, hi
    rules = " ".join(e for e in (claim.holds, claim.direction) if e)
    shared = [k for k in res.details if re.search(rf"(?<![A-Za-z0-9_]){re.escape(k)}(?![A-Za-z0-9_])", rules)]
    if shared:
        # The rules compare the value with detail columns of the same runs ("the largest of
        # all points"), which move with it: moving the value alone would be meaningless. Each
        # repetition's own row decides instead, and any repetition disagreeing is noise.
        try:
            per_rep = _rules(claim, results, pd.concat(rows, ignore_index=True))
        except Exception as e:
            return no(f"the rules fail on one repetition: {str(e).splitlines()[0]}")
        differ = [(r, v, x) for r, v, x in zip(wanted, per_rep, samples) if v != res.verdict]
        if differ:
            res.noise = WITHIN_NOISE
            res.noise_note = "; ".join(f"{v} in repetition {r} alone ({fmt_number(x)})" for r, v, x in differ) + f" (the rules compare with {', '.join(shared)})"
        else:
            res.noise = SIGNIFICANT
        return None
    cands = [res.value, lo, hi] + [lo + (hi - lo) * (i + 1) / (GRID + 1) for i in range(GRID)]
    for special in (0.0, claim.paper):
        if special is not None and lo <= special <= hi:
            cands.append(float(special))
    grid = pd.concat([df] * len(cands), ignore_index=True)
    grid["value"] = cands
    try:
        verdicts = _rules(claim, results, grid)
    except Exception as e:  # the rules ran at the point, so this is unexpected
        return no(f"the rules fail inside the interval: {str(e).splitlines()[0]}")
    others: dict[str, float] = {}
    for v, c in zip(verdicts, cands):
        if v != res.verdict and (v not in others or abs(c - res.value) < abs(others[v] - res.value)):
            others[v] = c
    if others:
        res.noise = WITHIN_NOISE
        res.noise_note = "; ".join(f"{v} at {fmt_number(c)}" for v, c in sorted(others.items(), key=lambda kv: VERDICTS.index(kv[0])))
    else:
        res.noise = SIGNIFICANT


def evaluate_all(claims: Sequence[Claim], results: Results, quick: bool = False) -> list[ClaimResult]:
    reps = Repetitions(results)
    try:
        return [evaluate(c, results, quick, reps) for c in claims]
    finally:
        reps.close()


def table(results: Sequence[ClaimResult]) -> pd.DataFrame:
    """The claims table: one row per claim (id, where, statement, paper, rantcp, unit, verdict, ...)."""
    return pd.DataFrame([r.as_row() for r in results])


def markdown(results: Sequence[ClaimResult]) -> str:
    """The claims table in Markdown (for a README)."""
    head = "| claim | where | seed | rantcp | 95 % interval | verdict |\n|---|---|---|---|---|---|\n"
    lines = []
    for r in results:
        c = r.claim
        unit = f" {c.unit}" if c.unit else ""
        paper = "–" if c.paper is None else f"{fmt_number(c.paper)}{unit}"
        ours = "–" if r.value is None else f"{fmt_number(r.value)}{unit}"
        stmt = c.statement.replace("|", "\\|").replace("\n", " ")
        ci = (r.interval_text() or "–").replace("|", "\\|")
        verdict = r.verdict_text()
        if r.noise == WITHIN_NOISE:
            verdict = f"**{verdict}**: {r.noise_note}"
        lines.append(f"| `{c.id}`: {stmt} | {c.where} | {paper} | {ours} | {ci} | {verdict} |")
    return head + "\n".join(lines) + "\n"


def noise_counts(results: Sequence[ClaimResult]) -> dict[str, int]:
    """How many decided claims are significant, within noise, without an interval."""
    out: dict[str, int] = {}
    for r in results:
        if r.noise:
            out[r.noise] = out.get(r.noise, 0) + 1
    return out
