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
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from rantcp._native import ConfigError
from rantcp.reproductions.results import Results, check_select
from rantcp.reproductions.spec import Claim

__all__ = ["HOLDS", "IN_DIRECTION", "NOT_HOLD", "NO_DATA", "NOT_QUICK", "ERROR", "ClaimResult", "decide", "evaluate", "evaluate_all"]

HOLDS = "holds"
IN_DIRECTION = "holds in direction"
NOT_HOLD = "does not hold"
NO_DATA = "no data"
NOT_QUICK = "not run in quick mode"
ERROR = "error"
VERDICTS = (HOLDS, IN_DIRECTION, NOT_HOLD, NO_DATA, NOT_QUICK, ERROR)


@dataclass
class ClaimResult:
    claim: Claim
    verdict: str
    value: float | None = None
    details: dict[str, Any] = field(default_factory=dict)
    message: str = ""
    """Why there is no verdict (no data, error)."""

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
            "details": ", ".join(f"{k} {fmt_number(v)}" for k, v in self.details.items()),
            "rule": rule_text(c),
            "message": self.message,
        }


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


def evaluate(claim: Claim, results: Results, quick: bool = False) -> ClaimResult:
    """One claim's verdict (never raises for a claim's own SQL error: verdict "error")."""
    if quick and not claim.quick:
        return ClaimResult(claim, NOT_QUICK, message="needs the full run")
    where = f"claim {claim.id!r}"
    try:
        df = results.query(claim.metric, f"{where} metric")
    except ConfigError as e:
        return ClaimResult(claim, ERROR, message=str(e))
    if len(df) > 1:
        return ClaimResult(claim, ERROR, message=f"{where}: the metric returned {len(df)} rows; expected one")
    if "value" not in df.columns:
        return ClaimResult(claim, ERROR, message=f"{where}: the metric has no column named value")
    if "paper" in df.columns:
        return ClaimResult(claim, ERROR, message=f"{where}: the metric may not name a column paper (the rules' name for the seed's number)")
    if len(df) == 0:
        return ClaimResult(claim, NO_DATA, message="no matching runs")
    row = {k: _py(v) for k, v in df.iloc[0].items()}
    value = row.pop("value")
    if value is not None and not isinstance(value, (int, float)):
        return ClaimResult(claim, ERROR, message=f"{where}: value {value!r} is not a number")
    details = row
    if value is None:
        return ClaimResult(claim, NO_DATA, None, details, "the metric is NULL (no matching runs?)")
    value = float(value)
    sel = ", ".join(f"({e})::BOOLEAN AS {n}" for n, e in (("h", claim.holds), ("d", claim.direction)) if e)
    sql = f"SELECT {sel} FROM _claim_row, (SELECT CAST($paper AS DOUBLE) AS paper)"
    try:
        check_select(sql, f"{where} rules")
        results.con.register("_claim_row", df)
        try:
            r = results.con.execute(sql, {"paper": claim.paper}).df().iloc[0]
        finally:
            results.con.unregister("_claim_row")
    except Exception as e:  # a rule's SQL error (duckdb.Error) or a non-SELECT rule
        return ClaimResult(claim, ERROR, value, details, f"{where} rules: {str(e).splitlines()[0]}")
    h = _py(r["h"]) if claim.holds else None
    d = _py(r["d"]) if claim.direction else None
    verdict = decide(h, d, claim.holds is not None, claim.direction is not None)
    return ClaimResult(claim, verdict, value, details, "a rule is NULL" if verdict == NO_DATA else "")


def evaluate_all(claims: Sequence[Claim], results: Results, quick: bool = False) -> list[ClaimResult]:
    return [evaluate(c, results, quick) for c in claims]


def table(results: Sequence[ClaimResult]) -> pd.DataFrame:
    """The claims table: one row per claim (id, where, statement, paper, rantcp, unit, verdict, ...)."""
    return pd.DataFrame([r.as_row() for r in results])


def markdown(results: Sequence[ClaimResult]) -> str:
    """The claims table in Markdown (for a README)."""
    head = "| claim | where | seed | rantcp | verdict |\n|---|---|---|---|---|\n"
    lines = []
    for r in results:
        c = r.claim
        unit = f" {c.unit}" if c.unit else ""
        paper = "–" if c.paper is None else f"{fmt_number(c.paper)}{unit}"
        ours = "–" if r.value is None else f"{fmt_number(r.value)}{unit}"
        stmt = c.statement.replace("|", "\\|").replace("\n", " ")
        lines.append(f"| `{c.id}`: {stmt} | {c.where} | {paper} | {ours} | {r.verdict} |")
    return head + "\n".join(lines) + "\n"
