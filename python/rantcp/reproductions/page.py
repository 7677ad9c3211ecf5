"""The reproduction's HTML page: claims table, every figure (PNG embedded), notes and sweeps, in
one self-contained file (no scripts, no external resources)."""

from __future__ import annotations

import base64
import json
from typing import Any

from rantcp.reproductions.claims import fmt_number, noise_counts

__all__ = ["render"]


def _toml_lines(data: dict[str, Any]) -> str:
    lines = []
    for table in ("sweep", "set", "axes"):
        lines.append(f"[{table}]")
        for k, v in data.get(table, {}).items():
            lines.append(f"{json.dumps(k)} = {json.dumps(v)}")
        lines.append("")
    return "\n".join(lines)


def render(outcome: Any, manifest: dict[str, Any]) -> str:
    """The page of a finished `reproduce` (an Outcome) and its manifest."""
    import jinja2

    env = jinja2.Environment(
        loader=jinja2.PackageLoader("rantcp.reproductions", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    claims = []
    for c in outcome.claims:
        row = c.as_row()
        unit = f" {row['unit']}" if row["unit"] else ""
        row["paper_text"] = "–" if row["paper"] is None else f"{fmt_number(row['paper'])}{unit}"
        row["rantcp_text"] = "–" if row["rantcp"] is None else f"{fmt_number(row['rantcp'])}{unit}"
        row["interval_text"] = c.interval_text(unit) or "–"
        claims.append(row)
    figures = []
    for d in outcome.figures:
        f = d.figure
        t = d.table
        figures.append({
            "id": f.id,
            "where": f.where,
            "caption": f.caption,
            "query": f.query,
            "error": d.error,
            "notes": d.notes,
            "png": base64.b64encode(d.png).decode("ascii") if d.png is not None else None,
            "table_head": list(t.columns) if t is not None else [],
            "table_rows": [[fmt_number(v) for v in r] for r in t.itertuples(index=False)] if t is not None else None,
        })
    failed_rows = []
    sweeps = []
    for s in outcome.sweeps:
        bad = s.df[s.df["status"] != "ok"]
        for _, r in bad.head(50).iterrows():
            failed_rows.append({"run": f"{s.name}/{r['point_id']}", "error": r.get("error", "")})
        sweeps.append({"name": s.name, "runs": len(s.df), "failed": len(bad), "ran": s.ran, "wall_s": s.wall_s, "toml": _toml_lines(s.data)})
    quick_desc = ", ".join([f"{outcome.repro.quick.repetitions} repetition(s)"] + [f"{k} = {v}" for k, v in outcome.repro.quick.set.items()])
    counts: dict[str, int] = {}
    for c in outcome.claims:
        counts[c.verdict] = counts.get(c.verdict, 0) + 1
    return env.get_template("page.html.j2").render(
        r=outcome.repro,
        m=manifest,
        quick=outcome.quick,
        quick_desc=quick_desc,
        failed=outcome.failed_runs,
        errors=outcome.errors,
        counts=counts,
        noise=noise_counts(outcome.claims),
        claims=claims,
        claim_defs=outcome.repro.claims,
        figures=figures,
        sweeps=sweeps,
        failed_rows=failed_rows,
    )
