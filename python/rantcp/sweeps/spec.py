"""The sweep file: its pydantic model (which also gives its JSON Schema), and its expansion into
points, seeds and runs.

A sweep file (TOML)::

    [sweep]
    name = "cc-loss"                  # default: the file's stem
    scenario = "builtin:p2p-bulk"     # or a TOML file, relative to this sweep file
    repetitions = 2                   # runs per point, each with its own seed (default 1)
    seed = 1                          # base seed the repetition seeds derive from
                                      # (default: the base scenario's seed)
    # seeds = [1, 2, 3]               # or explicit seeds, one repetition each
    # zip = [["flow.cc", "flow.pacing"]]   # axes in one group advance together
    # zip = true                      # zip every axis (default: cross product of all axes)

    [set]                             # overrides applied to every point
    duration = "10s"

    [axes]                            # one axis per config path, values in order
    "flow.cc" = ["newreno", "cubic", "highspeed", "bbr"]
    "bottleneck.loss" = [0.0, 1e-3, 1e-2]
    "bottleneck.rate" = { start = 10, stop = 50, step = 10, unit = "Mbps" }   # stop included
    "flow.mss" = { start = 500, stop = 1500, num = 3 }                        # evenly spaced
    "bottleneck.delay" = { start = 1, stop = 100, num = 3, scale = "log", unit = "ms" }

Points are the cross product of the axes in file order (first axis outermost), or zipped where
asked. A *run* is one point at one repetition; it is identified by ``point_id``, a hash of its
axis values, repetition and seed, so it is stable across restarts and machines.

Seeds: repetition ``r`` runs with ``derive_seed(base_seed, r)``: the first 8 bytes of
SHA-256("rantcp-sweep-seed:{base_seed}:{r}") as an unsigned integer, top bit cleared (a re-hash
on the rare collision within one sweep). Every point uses the same seed for the same repetition
(common random numbers), so differences between points are not blurred by different draws.

Per-run plots are off in sweeps (``output.plots = false``) unless the sweep sets
``output.plots`` itself.

Errors are one-line ConfigErrors naming the key (``sweep.repetitions: …``); ``json_schema()``
is the schema of the file (shipped as ``rantcp/sweep.schema.json``, ``rantcp schema --sweep``).
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictFloat, StrictInt, StrictStr, ValidationError, field_validator, model_validator

from rantcp._native import ConfigError

__all__ = [
    "RunTask",
    "SweepFile",
    "SweepSpec",
    "derive_seed",
    "json_schema",
    "load_spec",
    "parse_spec",
    "point_id",
    "to_toml",
]

SEED_MAX = 2**63 - 1
MAX_VALUES = 100_000
_RESERVED_AXES = {"seed", "scenario"}

Number = Union[StrictInt, StrictFloat]
Scalar = Union[StrictBool, StrictInt, StrictFloat, StrictStr]
AxisValue = Union[Scalar, list[Scalar]]
Seed = Annotated[StrictInt, Field(ge=0, le=SEED_MAX)]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class Range(_Strict):
    """Axis values from start to stop (included): every `step`, or `num` evenly spaced."""

    start: Number
    stop: Number
    step: Number | None = Field(None, description="spacing of a linear range (not 0)")
    num: Annotated[StrictInt, Field(ge=1, le=MAX_VALUES)] | None = Field(None, description="how many values")
    scale: Literal["linear", "log"] = "linear"
    unit: StrictStr | None = Field(None, description='appended to each value, e.g. "Mbps"')

    @model_validator(mode="after")
    def _one_of_step_or_num(self) -> Range:
        for key in ("start", "stop", "step"):
            v = getattr(self, key)
            if isinstance(v, float) and not math.isfinite(v):
                raise ValueError(f"{key}: {v!r} is not a finite number")
        if (self.step is None) == (self.num is None):
            raise ValueError("give exactly one of step or num")
        if self.step is not None and self.scale != "linear":
            raise ValueError('scale = "log" takes num, not step')
        if self.step == 0:
            raise ValueError("step: expected a non-zero number")
        if self.scale == "log" and (self.start <= 0 or self.stop <= 0):
            raise ValueError('scale = "log" needs start and stop > 0')
        return self


class SweepTable(_Strict):
    """The [sweep] table."""

    name: StrictStr | None = Field(None, min_length=1, pattern=r"^[^/]+$", description="default: the file's stem")
    scenario: StrictStr = Field(min_length=1, description="builtin:NAME or a TOML file relative to the sweep file")
    repetitions: Annotated[StrictInt, Field(ge=1, le=1_000_000)] | None = Field(None, description="runs per point (default 1)")
    seed: Seed | None = Field(None, description="base seed of the repetitions (default: the scenario's seed)")
    seeds: Annotated[list[Seed], Field(min_length=1)] | None = Field(None, description="explicit seeds, one repetition each")
    zip: StrictBool | list[list[StrictStr]] = Field(False, description="true: zip every axis; or groups of axis paths that advance together")

    @model_validator(mode="after")
    def _seeds_or_repetitions(self) -> SweepTable:
        if self.seeds is not None:
            if self.repetitions is not None or self.seed is not None:
                raise ValueError("sweep.seeds: give either seeds or repetitions/seed, not both")
            if len(set(self.seeds)) != len(self.seeds):
                raise ValueError("sweep.seeds: a seed appears twice")
        return self


class SweepFile(_Strict):
    """A sweep file: a base scenario, overrides for every run, axes over config paths."""

    model_config = ConfigDict(extra="forbid", strict=True, title="rantcp sweep file")

    sweep: SweepTable
    set: dict[str, Any] = Field(default_factory=dict, description="config path = value, applied to every run (dotted keys or nested tables)")
    axes: dict[str, Union[list[AxisValue], Range]] = Field(default_factory=dict, description="config path = [values] or a range")

    @field_validator("axes", mode="before")
    @classmethod
    def _check_axes(cls, axes: Any) -> Any:
        if not isinstance(axes, Mapping):
            raise ValueError("[axes]: expected a table of config path = [values] or {start, stop, step|num}")
        for path, vals in axes.items():
            if path in _RESERVED_AXES:
                raise ValueError(f"axes.{path}: not an axis (use sweep.seeds for seeds)")
            if isinstance(vals, Mapping):
                try:
                    Range.model_validate(vals)
                except ValidationError as e:
                    raise ValueError(_one_line(e, prefix=f"axes.{path}")) from None
            elif isinstance(vals, list):
                if not vals:
                    raise ValueError(f"axes.{path}: no values")
                seen: set[str] = set()
                for v in vals:
                    _check_value(path, v)
                    key = _canonical(v)
                    if key in seen:
                        raise ValueError(f"axes.{path}: value {v!r} appears twice")
                    seen.add(key)
            else:
                raise ValueError(f"axes.{path}: expected a list of values or a range {{start, stop, step|num}}")
        return axes

    @field_validator("set", mode="before")
    @classmethod
    def _check_set(cls, table: Any) -> Any:
        if not isinstance(table, Mapping):
            raise ValueError("[set]: expected a table of config path = value")
        for k, v in flatten_set(table).items():
            if k in _RESERVED_AXES:
                raise ValueError(f"set.{k}: set the seed with sweep.seed or sweep.seeds")
            _check_value(k, v, where="set")
        return table


def json_schema() -> dict[str, Any]:
    """JSON Schema of a sweep file (as TOML parsed to JSON)."""
    schema = SweepFile.model_json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    return schema


_ALLOWED = {
    (): "allowed tables: [sweep], [set], [axes]",
    ("sweep",): "allowed: " + ", ".join(sorted(SweepTable.model_fields)),
}


def _one_line(e: ValidationError, prefix: str = "") -> str:
    """The first error of a ValidationError as one line naming its key."""
    err = e.errors(include_url=False)[0]
    loc = tuple(str(x) for x in err["loc"])
    # Union members appear in pydantic's locations by type name; they are not keys.
    loc = tuple(x for x in loc if not (x[:1].islower() and ("[" in x or x in ("int", "float", "bool", "str")) or x.startswith("function-")))
    path = ".".join(p for p in (prefix, *loc) if p)
    kind = err["type"]
    if kind == "value_error":
        msg = str(err["ctx"]["error"])
        return msg if (msg.startswith(("axes.", "set.", "sweep.", "[")) or not path) else f"{path}: {msg}"
    if kind == "extra_forbidden":
        if prefix.startswith("axes."):  # a key of a range
            allowed = "allowed: " + ", ".join(sorted(Range.model_fields))
        else:
            allowed = _ALLOWED.get(loc[:-1], "")
        return f"{path}: unknown key" + (f" ({allowed})" if allowed else "")
    if kind == "missing" and loc == ("sweep",):
        return '[sweep] table missing (it names the scenario: scenario = "builtin:p2p-bulk")'
    return f"{path}: {err['msg']}" if path else err["msg"]


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), allow_nan=False)


def _check_value(path: str, v: Any, where: str = "axes") -> None:
    if isinstance(v, float) and not math.isfinite(v):
        raise ValueError(f"{where}.{path}: {v!r} is not a finite number")
    if isinstance(v, Mapping):
        raise ValueError(f"{where}.{path}: values must be numbers, strings, booleans or lists")
    if isinstance(v, list):
        for x in v:
            _check_value(path, x, where)
    elif hasattr(v, "isoformat"):  # TOML dates and times
        raise ValueError(f"{where}.{path}: dates are not config values; quote it")


def flatten_set(table: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """[set] accepts dotted keys ("flow.cc" = ...) and nested tables ([set.flow] cc = ...)."""
    out: dict[str, Any] = {}
    for k, v in table.items():
        path = f"{prefix}{k}"
        if isinstance(v, Mapping):
            out.update(flatten_set(v, path + "."))
        else:
            out[path] = v
    return out


# ---------------------------------------------------------------------------------------------
# Seeds, ids, runs


def derive_seed(base_seed: int, repetition: int, salt: int = 0) -> int:
    """Seed of repetition ``repetition``: 63 bits of SHA-256 of (base seed, repetition)."""
    text = f"rantcp-sweep-seed:{base_seed}:{repetition}" + (f":{salt}" if salt else "")
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big") >> 1


def point_id(axes: Mapping[str, Any], repetition: int, seed: int) -> str:
    """Stable id of one run: 16 hex digits of SHA-256 of its axis values, repetition and seed."""
    text = _canonical({"axes": dict(axes), "repetition": repetition, "seed": seed})
    return hashlib.sha256(text.encode()).hexdigest()[:16]


@dataclass(frozen=True)
class RunTask:
    """One run as a worker sees it (plain data, picklable)."""

    point_id: str
    point_index: int
    repetition: int
    seed: int
    axes: dict[str, Any]
    scenario: str
    """``builtin:NAME`` or an absolute TOML path."""
    scenario_text: str | None
    """The TOML text when the scenario is a file (used where that path does not exist)."""
    overrides: dict[str, Any]


@dataclass
class SweepSpec:
    """A parsed sweep file."""

    name: str
    scenario: str
    """``builtin:NAME`` or an absolute TOML path."""
    scenario_text: str | None
    fixed: dict[str, Any]
    axes: dict[str, list[Any]]
    zip_groups: list[list[str]]
    base_seed: int
    seeds: list[int]
    source_text: str = ""
    """The sweep file as written (kept in the sweep folder)."""
    plots: bool = False
    points: list[dict[str, Any]] = field(default_factory=list)

    @property
    def repetitions(self) -> int:
        return len(self.seeds)

    def point_overrides(self, axes: Mapping[str, Any]) -> dict[str, Any]:
        """The overrides of the runs at one point: [set], plots off unless asked, the axes."""
        overrides = dict(self.fixed)
        if not self.plots:
            overrides["output.plots"] = False
        overrides.update(axes)
        return overrides

    def tasks(self) -> list[RunTask]:
        """Every run, point by point, repetitions innermost."""
        out = []
        for i, axes in enumerate(self.points):
            overrides = self.point_overrides(axes)
            for r, seed in enumerate(self.seeds):
                out.append(
                    RunTask(
                        point_id=point_id(axes, r, seed),
                        point_index=i,
                        repetition=r,
                        seed=seed,
                        axes=dict(axes),
                        scenario=self.scenario,
                        scenario_text=self.scenario_text,
                        overrides=dict(overrides),
                    )
                )
        return out

    def fingerprint(self) -> dict[str, Any]:
        """What must not change when a sweep folder is resumed (axis values and seeds may grow)."""
        return {
            "scenario": self.scenario if self.scenario.startswith("builtin:") else "file",
            "scenario_sha256": hashlib.sha256((self.scenario_text or self.scenario).encode()).hexdigest(),
            "set": {k: self.fixed[k] for k in sorted(self.fixed)},
            "axes": list(self.axes),
            "plots": self.plots,
        }


# ---------------------------------------------------------------------------------------------
# Parsing


def _tidy_float(x: float) -> float:
    """Round away binary noise from range arithmetic (0.30000000000000004 -> 0.3)."""
    return float(f"{x:.12g}")


def expand_range(path: str, r: Range) -> list[Any]:
    """The values of a range axis (stop included)."""
    start, stop = r.start, r.stop
    values: list[Any]
    if r.step is not None:
        step = r.step
        span = (stop - start) / step
        if span < 0:
            raise ConfigError(f"axes.{path}: step {step} does not go from {start} to {stop}")
        n = int(math.floor(span + 1e-9)) + 1 if math.isfinite(span) else MAX_VALUES + 1
        if n > MAX_VALUES:
            raise ConfigError(f"axes.{path}: {n if math.isfinite(span) else 'too many'} values; at most {MAX_VALUES}")
        if all(isinstance(v, int) for v in (start, stop, step)):
            values = [start + i * step for i in range(n)]
        else:
            values = [_tidy_float(start + i * step) for i in range(n)]
    else:
        num = r.num or 1
        if r.scale == "log":
            a, b = math.log(start), math.log(stop)
            values = [_tidy_float(math.exp(a + (b - a) * i / (num - 1))) if num > 1 else float(start) for i in range(num)]
        else:
            values = [_tidy_float(start + (stop - start) * i / (num - 1)) if num > 1 else float(start) for i in range(num)]
        if all(isinstance(v, int) for v in (start, stop)) and all(float(v).is_integer() for v in values):
            values = [int(v) for v in values]
    if r.unit is not None:
        values = [f"{v:g}{r.unit}" if isinstance(v, float) else f"{v}{r.unit}" for v in values]
    return values


def _zip_groups(zip_spec: bool | list[list[str]], axes: Mapping[str, list[Any]]) -> list[list[str]]:
    if zip_spec is True:
        groups = [list(axes)] if axes else []
    elif zip_spec is False:
        groups = []
    else:
        groups = [list(g) for g in zip_spec]
    grouped: set[str] = set()
    for g in groups:
        for a in g:
            if a not in axes:
                raise ConfigError(f"sweep.zip: {a!r} is not an axis")
            if a in grouped:
                raise ConfigError(f"sweep.zip: {a!r} is in two groups")
            grouped.add(a)
        if len({len(axes[a]) for a in g}) > 1:
            raise ConfigError(f"sweep.zip: axes {', '.join(g)} have different lengths ({', '.join(str(len(axes[a])) for a in g)})")
    return groups


MAX_RUNS = 1_000_000
"""Most runs (points × repetitions) in one sweep: the points are listed, and each one's config
checked, before the first run starts."""


def _check_size(axes: Mapping[str, list[Any]], groups: list[list[str]], repetitions: int) -> None:
    """Refuse a sweep of more than MAX_RUNS runs before its points are listed (the cross
    product of a few long axes does not fit in memory)."""
    zipped = {a for g in groups for a in g}
    sizes = [len(axes[a]) for a in axes if a not in zipped] + [len(axes[g[0]]) for g in groups]
    runs = math.prod(sizes) * repetitions
    if runs > MAX_RUNS:
        shape = " × ".join(str(n) for n in sizes) or "1"
        raise ConfigError(
            f"the sweep has {runs:,} runs ({shape} points × {repetitions} repetitions); at most {MAX_RUNS:,}: "
            "shorten an axis, zip axes (sweep.zip) or split the sweep"
        )


def _points(axes: Mapping[str, list[Any]], groups: list[list[str]]) -> list[dict[str, Any]]:
    """Cross product in file order (first axis outermost); a zip group sits where its first axis is."""
    units: list[list[str]] = []
    placed: set[str] = set()
    for a in axes:
        if a in placed:
            continue
        g = next((g for g in groups if a in g), [a])
        units.append(g)
        placed.update(g)
    points: list[dict[str, Any]] = []
    for combo in itertools.product(*[range(len(axes[u[0]])) for u in units]):
        pt: dict[str, Any] = {}
        for u, i in zip(units, combo):
            for a in u:
                pt[a] = axes[a][i]
        points.append({a: pt[a] for a in axes})
    return points or [{}]


def parse_spec(data: Mapping[str, Any], base_dir: str | os.PathLike[str] | None = None, name: str = "sweep") -> SweepSpec:
    """Validate a sweep description (the TOML as a dict) and expand its points.

    base_dir: where a relative scenario path is resolved (the sweep file's folder).
    Raises ConfigError with a one-line message naming the offending key.
    """
    from rantcp import api

    if not isinstance(data, Mapping):
        raise ConfigError("a sweep is a table with [sweep], [set] and [axes]")
    try:
        model = SweepFile.model_validate(dict(data))
    except ValidationError as e:
        raise ConfigError(_one_line(e)) from None
    sw = model.sweep
    name = sw.name or name

    scen = sw.scenario
    scenario_text = None
    if not scen.startswith("builtin:"):
        p = Path(scen)
        if not p.is_absolute():
            p = Path(base_dir or ".") / p
        p = p.resolve()
        if not p.is_file():
            raise ConfigError(f"sweep.scenario: file {str(p)!r} not found")
        scenario_text = p.read_text()
        scen = str(p)

    fixed = flatten_set(model.set)
    axes: dict[str, list[Any]] = {}
    for path, vals in model.axes.items():
        values = expand_range(path, vals) if isinstance(vals, Range) else list(data["axes"][path])
        if path in fixed:
            raise ConfigError(f"axes.{path}: also fixed in [set]")
        axes[path] = values
    groups = _zip_groups(sw.zip, axes)
    repetitions = len(sw.seeds) if sw.seeds is not None else (sw.repetitions or 1)
    _check_size(axes, groups, repetitions)
    points = _points(axes, groups)

    if sw.seeds is not None:
        seeds = list(sw.seeds)
        base_seed = seeds[0]
    else:
        base_seed = sw.seed if sw.seed is not None else int(api.check(scen, fixed)[0]["seed"])
        seeds = []
        used: set[int] = set()
        for r in range(sw.repetitions or 1):
            salt = 0
            s = derive_seed(base_seed, r)
            while s in used:
                salt += 1
                s = derive_seed(base_seed, r, salt)
            used.add(s)
            seeds.append(s)

    plots = bool(fixed.get("output.plots", False)) or "output.plots" in axes
    return SweepSpec(
        name=name,
        scenario=scen,
        scenario_text=scenario_text,
        fixed=dict(fixed),
        axes=axes,
        zip_groups=groups,
        base_seed=base_seed,
        seeds=seeds,
        plots=plots,
        points=points,
    )


def load_spec(source: str | os.PathLike[str] | Mapping[str, Any]) -> SweepSpec:
    """A sweep from a TOML file path or from a dict of the same shape (paths relative to cwd)."""
    import tomllib

    if isinstance(source, Mapping):
        sweep_table = source.get("sweep")
        default = str(sweep_table.get("name", "sweep")) if isinstance(sweep_table, Mapping) else "sweep"
        spec = parse_spec(source, Path.cwd(), name=default)
        spec.source_text = to_toml(source)
        return spec
    p = Path(source)
    if not p.is_file():
        raise ConfigError(f"sweep file {str(p)!r} not found")
    text = p.read_text()
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"{p}: invalid TOML: {e}") from None
    spec = parse_spec(data, p.resolve().parent, name=p.stem)
    spec.source_text = text
    return spec


def to_toml(data: Mapping[str, Any]) -> str:
    """A sweep dict as TOML text (tomli-w), tables in the order [sweep], [set], [axes]."""
    import tomli_w

    ordered = {k: data[k] for k in ("sweep", "set", "axes") if k in data}
    return tomli_w.dumps(ordered)
