"""A reproduction's definition: the data files of its folder, read and checked.

A reproduction folder holds::

    reproduction.toml    name, title, the seed it reproduces, notes, the quick-mode overlay,
                         the time-series tables its queries use, the shared SQL prelude
    sweeps/*.toml        ordinary sweep files (each also runs with `rantcp sweep`)
    prelude.sql          views and macros shared by the claims and the figures (optional)
    claims.toml          [[claim]] tables: statement, location, seed's number, metric, rule
    figures.toml         [[figure]] tables: kind, SQL query, labels; [shading.NAME] sets
    figures.py           optional: functions for layouts the generic kinds cannot draw

Every check here raises ConfigError with one line naming the file and the field.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rantcp._native import ConfigError

__all__ = ["config_value", "Claim", "Figure", "QuickMode", "Reproduction", "Shading", "SweepDef", "load_folder"]

FIGURE_KINDS = ("bars", "lines", "cdf", "timeseries", "xy", "table", "config", "custom")
FIGURE_OPTIONS = {
    "x_label", "y_label", "title", "size", "x_order", "series_order", "y_min", "y_max", "x_scale", "y_scale",
    "legend", "x_range", "y_range", "note", "ref", "shading", "x_range_query", "x_range_note", "points", "aspect",
    "rows", "sweep", "function",
}
_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")


@dataclass(frozen=True)
class SweepDef:
    """One sweep file of the reproduction."""

    name: str
    path: Path
    data: dict[str, Any]
    """The sweep file as parsed TOML (the shape rantcp.sweep accepts)."""


@dataclass(frozen=True)
class QuickMode:
    """What --quick changes: fewer repetitions, overrides on every sweep (e.g. a short duration),
    and fewer values of some axes (each a subset of the values of every sweep that has the axis)."""

    repetitions: int = 1
    set: dict[str, Any] = field(default_factory=dict)
    axes: dict[str, list[Any]] = field(default_factory=dict)


@dataclass(frozen=True)
class Claim:
    id: str
    where: str
    """Location in the seed: section, figure or table."""
    statement: str
    """The seed's words, quoted."""
    metric: str
    """SQL returning one row with a column `value` (rantcp's number); other columns are details."""
    paper: float | None = None
    unit: str = ""
    holds: str | None = None
    """SQL boolean over the metric row's columns and `paper`: true = the claim holds."""
    direction: str | None = None
    """SQL boolean: the effect has the seed's sign (needed for "holds in direction")."""
    quick: bool = True
    """False: not evaluated in quick mode (its verdict says so)."""


@dataclass(frozen=True)
class Shading:
    """Time intervals to shade behind time-series figures, each from a per-sample condition."""

    table: str
    spans: list[dict[str, Any]]
    """[{when, label, color, alpha}]: shaded across the plot."""
    bands: list[dict[str, Any]]
    """[{when, label, color}]: a labelled strip along the top (e.g. walk / stop / drive)."""


@dataclass(frozen=True)
class Figure:
    id: str
    kind: str
    caption: str
    """The seed's caption (quoted) or, for rantcp-only figures, a description."""
    where: str
    query: str | None
    options: dict[str, Any]
    """Kind-specific keys (x_label, y_label, shading, ref, rows, function, ...)."""


@dataclass
class Reproduction:
    name: str
    title: str
    folder: Path
    seed: str
    """The source document, e.g. "004_ec08a270b643ea25.txt"."""
    description: str
    notes: list[str]
    sweeps: list[SweepDef]
    quick: QuickMode
    timeseries: list[str]
    prelude: str
    claims: list[Claim]
    figures: list[Figure]
    shading: dict[str, Shading]
    style: dict[str, Any]
    """figures.toml [style]: colors = {series label = matplotlib color}."""
    vocabulary: dict[str, str]
    """How the seed's qualitative words were turned into rules (shown with the claims table)."""


def config_value(cfg: Mapping[str, Any], path: str) -> Any:
    """The value at a dotted config path ("rlc.buffer") of an effective config; None if absent."""
    cur: Any = cfg
    for part in path.split("."):
        if not isinstance(cur, Mapping) or part not in cur:
            return None
        cur = cur[part]
    return cur


def _fail(where: str, msg: str) -> ConfigError:
    return ConfigError(f"{where}: {msg}")


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(path.read_text())
    except FileNotFoundError:
        raise _fail(str(path), "file not found") from None
    except tomllib.TOMLDecodeError as e:
        raise _fail(str(path), f"invalid TOML: {e}") from None


def _str(where: str, table: Mapping[str, Any], key: str, default: str | None = None) -> str:
    v = table.get(key, default)
    if not isinstance(v, str) or (default is None and not v.strip()):
        raise _fail(f"{where}.{key}", "expected a non-empty string" if default is None else "expected a string")
    return v


def _only(where: str, table: Mapping[str, Any], allowed: set[str]) -> None:
    unknown = sorted(set(table) - allowed)
    if unknown:
        raise _fail(f"{where}.{unknown[0]}", f"unknown key (allowed: {', '.join(sorted(allowed))})")


def _claims(path: Path) -> tuple[list[Claim], dict[str, str]]:
    data = _read_toml(path)
    _only(path.name, data, {"claim", "vocabulary"})
    vocab = data.get("vocabulary", {})
    if not isinstance(vocab, Mapping) or not all(isinstance(v, str) for v in vocab.values()):
        raise _fail(f"{path.name}.vocabulary", "expected a table of word = rule text")
    out: list[Claim] = []
    seen: set[str] = set()
    for i, c in enumerate(data.get("claim", [])):
        where = f"{path.name} claim {i + 1}"
        if not isinstance(c, Mapping):
            raise _fail(where, "expected a [[claim]] table")
        _only(where, c, {"id", "where", "statement", "metric", "paper", "unit", "holds", "direction", "quick"})
        cid = _str(where, c, "id")
        if not _ID.match(cid) or cid in seen:
            raise _fail(f"{where}.id", f"{cid!r} is not a unique id of letters, digits, '-', '_', '.'")
        seen.add(cid)
        where = f"{path.name} claim {cid!r}"
        paper = c.get("paper")
        if paper is not None and (isinstance(paper, bool) or not isinstance(paper, (int, float))):
            raise _fail(f"{where}.paper", "expected the seed's number (or leave it out)")
        holds, direction = c.get("holds"), c.get("direction")
        if holds is None and direction is None:
            raise _fail(where, "give holds (and/or direction): how the verdict is decided")
        for k, v in (("holds", holds), ("direction", direction)):
            if v is not None and (not isinstance(v, str) or not v.strip()):
                raise _fail(f"{where}.{k}", "expected an SQL boolean expression over value (and paper)")
        quick = c.get("quick", True)
        if not isinstance(quick, bool):
            raise _fail(f"{where}.quick", "expected true or false")
        out.append(
            Claim(
                id=cid,
                where=_str(where, c, "where"),
                statement=_str(where, c, "statement"),
                metric=_str(where, c, "metric"),
                paper=None if paper is None else float(paper),
                unit=_str(where, c, "unit", ""),
                holds=holds,
                direction=direction,
                quick=quick,
            )
        )
    if not out:
        raise _fail(path.name, "no [[claim]] tables")
    return out, dict(vocab)


def _figures(path: Path, timeseries: list[str]) -> tuple[list[Figure], dict[str, Shading], dict[str, Any]]:
    data = _read_toml(path)
    _only(path.name, data, {"figure", "shading", "style"})
    style = data.get("style", {})
    if not isinstance(style, Mapping):
        raise _fail(f"{path.name}.style", "expected a table (colors = {label = color})")
    _only(f"{path.name} style", style, {"colors"})
    shading: dict[str, Shading] = {}
    for name, s in data.get("shading", {}).items():
        where = f"{path.name} shading.{name}"
        if not isinstance(s, Mapping):
            raise _fail(where, "expected a table")
        _only(where, s, {"table", "spans", "bands"})
        table = _str(where, s, "table", "radio")
        if table not in timeseries:
            raise _fail(f"{where}.table", f"{table!r} is not among reproduction.timeseries {timeseries}")
        parts: dict[str, list[dict[str, Any]]] = {}
        for key in ("spans", "bands"):
            items = s.get(key, [])
            if not isinstance(items, list) or not all(isinstance(x, Mapping) and isinstance(x.get("when"), str) for x in items):
                raise _fail(f"{where}.{key}", "expected a list of {when = \"SQL condition\", label, color}")
            for x in items:
                _only(f"{where}.{key}", x, {"when", "label", "color", "alpha"})
            parts[key] = [dict(x) for x in items]
        shading[name] = Shading(table, parts["spans"], parts["bands"])
    figures: list[Figure] = []
    seen: set[str] = set()
    for i, f in enumerate(data.get("figure", [])):
        where = f"{path.name} figure {i + 1}"
        if not isinstance(f, Mapping):
            raise _fail(where, "expected a [[figure]] table")
        fid = _str(where, f, "id")
        if not _ID.match(fid) or fid in seen:
            raise _fail(f"{where}.id", f"{fid!r} is not a unique id of letters, digits, '-', '_', '.'")
        seen.add(fid)
        where = f"{path.name} figure {fid!r}"
        kind = _str(where, f, "kind")
        if kind not in FIGURE_KINDS:
            raise _fail(f"{where}.kind", f"{kind!r}; expected one of {', '.join(FIGURE_KINDS)}")
        query = f.get("query")
        if kind not in ("config", "custom") and not (isinstance(query, str) and query.strip()):
            raise _fail(f"{where}.query", "expected an SQL query")
        sh = f.get("shading")
        if sh is not None and sh not in shading:
            raise _fail(f"{where}.shading", f"{sh!r} is not a [shading.NAME] of {path.name}")
        _only(where, f, FIGURE_OPTIONS | {"id", "kind", "caption", "where", "query"})
        opts = {k: v for k, v in f.items() if k not in ("id", "kind", "caption", "where", "query")}
        figures.append(Figure(fid, kind, _str(where, f, "caption"), _str(where, f, "where", ""), query, opts))
    if not figures:
        raise _fail(path.name, "no [[figure]] tables")
    return figures, shading, dict(style)


def load_folder(folder: Path) -> Reproduction:
    """Read and check a reproduction folder (raises ConfigError naming the file and field)."""
    path = folder / "reproduction.toml"
    data = _read_toml(path)
    _only("reproduction.toml", data, {"reproduction", "quick"})
    r = data.get("reproduction")
    if not isinstance(r, Mapping):
        raise _fail("reproduction.toml", "[reproduction] table missing")
    where = "reproduction.toml reproduction"
    _only(where, r, {"name", "title", "seed", "description", "notes", "timeseries", "prelude"})
    name = _str(where, r, "name")
    if not _ID.match(name):
        raise _fail(f"{where}.name", f"{name!r}: letters, digits, '-', '_', '.'")
    notes = r.get("notes", [])
    if not isinstance(notes, list) or not all(isinstance(n, str) for n in notes):
        raise _fail(f"{where}.notes", "expected a list of strings")
    ts = r.get("timeseries", [])
    if not isinstance(ts, list) or not all(isinstance(t, str) and re.match(r"^[a-z_][a-z0-9_]*$", t) for t in ts):
        raise _fail(f"{where}.timeseries", "expected a list of time-series table names such as [\"flows\", \"radio\"]")
    if "runs" in ts:
        raise _fail(f"{where}.timeseries", "\"runs\" is the runs table, not a time series")
    prelude = ""
    if "prelude" in r:
        prelude = (folder / _str(where, r, "prelude")).read_text()

    q = data.get("quick", {})
    _only("reproduction.toml quick", q, {"repetitions", "set", "axes"})
    reps = q.get("repetitions", 1)
    if isinstance(reps, bool) or not isinstance(reps, int) or reps < 1:
        raise _fail("reproduction.toml quick.repetitions", "expected an integer >= 1")
    qset = q.get("set", {})
    if not isinstance(qset, Mapping):
        raise _fail("reproduction.toml quick.set", "expected a table of config path = value")
    qaxes = q.get("axes", {})
    if not isinstance(qaxes, Mapping) or not all(isinstance(v, list) and v for v in qaxes.values()):
        raise _fail("reproduction.toml quick.axes", "expected a table of config path = [values]")

    sweeps: list[SweepDef] = []
    for p in sorted((folder / "sweeps").glob("*.toml")):
        sd = _read_toml(p)
        sw = sd.get("sweep")
        if not isinstance(sw, Mapping):
            raise _fail(f"sweeps/{p.name}", "[sweep] table missing")
        sname = sw.get("name", p.stem)
        if not isinstance(sname, str) or not _ID.match(sname):
            raise _fail(f"sweeps/{p.name} sweep.name", "letters, digits, '-', '_', '.'")
        if any(s.name == sname for s in sweeps):
            raise _fail(f"sweeps/{p.name} sweep.name", f"{sname!r} is used by another sweep file")
        sweeps.append(SweepDef(sname, p, sd))
    if not sweeps:
        raise _fail(str(folder / "sweeps"), "no sweep files (*.toml)")
    for k, vals in qaxes.items():
        having = [s for s in sweeps if k in s.data.get("axes", {})]
        if not having:
            raise _fail(f"reproduction.toml quick.axes.{k}", "is an axis of no sweep")
        for s in having:
            extra = [v for v in vals if v not in s.data["axes"][k]]
            if extra:
                raise _fail(f"reproduction.toml quick.axes.{k}", f"{extra[0]!r} is not a value of that axis in sweep {s.name!r}")

    claims, vocab = _claims(folder / "claims.toml")
    figures, shading, style = _figures(folder / "figures.toml", list(ts))
    return Reproduction(
        name=name,
        title=_str(where, r, "title"),
        folder=folder,
        seed=_str(where, r, "seed", ""),
        description=_str(where, r, "description", ""),
        notes=list(notes),
        sweeps=sweeps,
        quick=QuickMode(reps, dict(qset), {k: list(v) for k, v in qaxes.items()}),
        timeseries=list(ts),
        prelude=prelude,
        claims=claims,
        figures=figures,
        shading=shading,
        style=style,
        vocabulary=vocab,
    )
