"""A fuzzer over the config JSON Schema (issue 20), bounded for CI: about 1,000 cases of one to
three `--set` overrides on a built-in scenario, each value drawn from the field's own schema
(hypothesis-jsonschema) or junk of any type, sometimes a field that does not exist. Each case
goes through what `rantcp run` does before it simulates: validation, then building the network
and the work check. Every case must be accepted or refused with a ConfigError of one line that
names a field (the CLI prints it and exits 2); nothing else may escape (a Rust panic surfaces as
pyo3's PanicException). A few cases go through the real command line too.

hypothesis-jsonschema builds a strategy per leaf field (the whole schema's anyOf takes it 8 s to
canonicalise and 0.1 s per example; a leaf takes milliseconds)."""

from __future__ import annotations

import functools
import json
import math
import re
import subprocess
import sys
import warnings
from typing import Any

import hypothesis_jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import rantcp
from rantcp import _native

SCHEMA = json.loads(rantcp.config_schema())
DEFS = SCHEMA["$defs"]
KIND_OF = {"p2p-bulk": "P2pBulk", "cc-compare": "CcCompare"}
BUILTINS = [name for name, _ in rantcp.scenarios()]


def _resolve(s: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in s:
        ref = DEFS[s["$ref"].rsplit("/", 1)[1]]
        s = {**ref, **{k: v for k, v in s.items() if k != "$ref"}}
    return s


def _leaves(s: dict[str, Any], prefix: str = "") -> list[tuple[str, dict[str, Any]]]:
    """(dotted path, schema) of every field that is not a table of named fields."""
    s = _resolve(s)
    props = s.get("properties")
    if s.get("type") == "object" and props:
        out = []
        for k, v in props.items():
            out += _leaves(v, f"{prefix}{k}.")
        return out
    return [(prefix.rstrip("."), s)]


LEAVES = {kind: _leaves(DEFS[kind]) for kind in ("P2pBulk", "CcCompare", "RanScenario")}
# Every field and table path: an error must name one of them.
KNOWN = {p for leaves in LEAVES.values() for p, _ in leaves}
KNOWN |= {p.rsplit(".", 1)[0] for p in list(KNOWN) if "." in p}
KNOWN |= {"seed", "scenario"}


@functools.lru_cache(maxsize=None)
def _valid(kind: str, path: str) -> st.SearchStrategy[Any]:
    """Values the field's schema allows (string patterns such as durations' are looser than the
    parser, and ranges across fields are not in a schema: about half of them are refused),
    and its default, so that several fields changed at once still often make a valid config."""
    schema = dict(LEAVES[kind])[path]
    valid = hypothesis_jsonschema.from_schema({**schema, "$defs": DEFS})
    return st.one_of(valid, st.just(schema["default"])) if "default" in schema else valid


JUNK = st.one_of(
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=12),
    st.booleans(),
    st.lists(st.integers(-5, 5), max_size=3),
    st.sampled_from(["", "0", "-1", "1e999", "nan", "inf", "0ms", "1ns", "1 Tbps", "1000000000 GB", "[]", "{}", "\"x\"", "0bdp"]),
)


def _text(v: Any) -> str:
    """The value as a `--set path=VALUE` gives it."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return repr(v) if math.isfinite(v) else ("nan" if math.isnan(v) else ("inf" if v > 0 else "-inf"))
    if isinstance(v, (int, str)):
        return str(v)
    if v is None:
        return ""
    return json.dumps(v)


@st.composite
def cases(draw: st.DrawFn) -> tuple[str, dict[str, str], list[str]]:
    builtin = draw(st.sampled_from(BUILTINS))
    kind = KIND_OF.get(builtin, "RanScenario")
    fields = [p for p, _ in LEAVES[kind] if p != "scenario"]
    paths = draw(st.lists(st.sampled_from(fields), min_size=1, max_size=3, unique=True))
    overrides: dict[str, str] = {}
    unknown: list[str] = []
    for p in paths:
        value = draw(JUNK if draw(st.integers(0, 3)) == 0 else _valid(kind, p))
        overrides[p] = _text(value)
    if draw(st.integers(0, 9)) == 0:
        p = draw(st.sampled_from(paths)) + draw(st.sampled_from(["x", ".x", "_typo"]))
        overrides[p] = "1"
        unknown.append(p)
    return f"builtin:{builtin}", overrides, unknown


FIELD = re.compile(r"^([A-Za-z_][\w.\[\]/-]*): ")


def _check_refusal(message: str, overrides: dict[str, str], unknown: list[str]) -> None:
    assert "\n" not in message and message.strip(), repr(message)
    m = FIELD.match(message)
    assert m, f"the error names no field: {message!r} for {overrides}"
    named = m.group(1)
    if unknown:
        return  # an unknown field may be reported, or another bad one found first
    assert named in KNOWN or named in overrides or any(p.startswith(named + ".") for p in overrides), (
        f"{named!r} is not a field: {message!r} for {overrides}"
    )


@settings(
    max_examples=1000,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=list(HealthCheck),
)
@given(cases())
def test_every_case_is_accepted_or_refused_in_one_line(case: tuple[str, dict[str, str], list[str]]) -> None:
    spec, overrides, unknown = case
    try:
        # A value the run does not read is accepted with a ConfigWarning (pytest makes
        # warnings errors): accepted all the same.
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", rantcp.ConfigWarning)
            rantcp.validate(spec, overrides)
        # What `rantcp run` does next: build the networks and check the work estimate (the
        # output folder is left out: output.pcap then asks for one, a ConfigError too).
        sim = _native.Simulation(spec, list(overrides.items()), None, None, False)
        del sim
    except rantcp.ConfigError as e:
        _check_refusal(str(e), overrides, unknown)
        return
    assert not unknown, f"unknown field accepted: {overrides}"


CLI_CASES = [
    ("builtin:p2p-bulk", {"flow.mss": "0"}),
    ("builtin:p2p-bulk", {"bottleneck.rate": "nan"}),
    ("builtin:cc-compare", {"controllers": "[\"reno\"]"}),
    ("builtin:lte-cell", {"radio.carrier_ghz": "inf"}),
    ("builtin:lte-cell", {"ues": "-1"}),
    ("builtin:mmwave-urban", {"flow.ccc": "1"}),
    ("builtin:p2p-bulk", {"output.pcap_snaplen": "1"}),
    ("builtin:p2p-bulk", {"duration": "1e999 s"}),
]


@pytest.mark.parametrize("spec,overrides", CLI_CASES)
def test_command_line_refuses_in_one_line_with_exit_2(spec: str, overrides: dict[str, str]) -> None:
    sets = [a for k, v in overrides.items() for a in ("--set", f"{k}={v}")]
    r = subprocess.run([sys.executable, "-m", "rantcp.cli", "validate", spec, *sets], capture_output=True, text=True, timeout=60)
    assert r.returncode == 2, (r.returncode, r.stderr)
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in r.stderr, r.stderr
    assert lines[0].startswith(f"rantcp: error: {next(iter(overrides))}"), lines[0]


@pytest.mark.parametrize("value", [float("nan"), float("inf"), object()])
def test_python_override_without_literal_text_names_its_field(value: Any) -> None:
    with pytest.raises(rantcp.ConfigError, match=r"^bottleneck\.loss: "):
        rantcp.validate("builtin:p2p-bulk", {"bottleneck.loss": value})
