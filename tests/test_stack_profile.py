"""`flow.stack` profiles and the TCP knobs they set: the config echo shows the effective values,
every knob overrides its profile, bad values are one-line errors with exit status 2."""

from __future__ import annotations

from pathlib import Path

import pytest
import tomli_w

import rantcp

# p2p-bulk's own file sets cc = "newreno", which beats either profile's controller (linux:
# cubic, rfc: newreno; crates/scenario/tests/stack_profiles.rs checks those defaults).
LINUX = {
    "quickack": True,
    "delack_timeout": "40ms",
    "min_rto": "200ms",
    "rack_tlp": True,
    "prr": True,
    "rto_undo": True,
    "rcv_win_ratio": 0.625,
    "hystart": "classic",
    "cwnd_rules": "linux",
}
RFC = {
    "quickack": False,
    "delack_timeout": "200ms",
    "min_rto": "1s",
    "rack_tlp": False,
    "prr": False,
    "rto_undo": False,
    "rcv_win_ratio": 1.0,
    "hystart": "hystart++",
    "cwnd_rules": "rfc",
}


def flow_echo(tmp_path: Path, flow_toml: str, overrides: dict | None = None) -> dict:
    cfg = tmp_path / "s.toml"
    cfg.write_text(f'scenario = "p2p-bulk"\nduration = "1s"\n[flow]\n{flow_toml}\n[output]\nplots = false\n')
    r = rantcp.run(str(cfg), overrides=overrides or {})
    return r.summary["config"]["flow"]


@pytest.mark.parametrize("stack,want", [("linux", LINUX), ("rfc", RFC)])
def test_profile_sets_the_defaults_and_the_echo_shows_them(tmp_path: Path, stack, want):
    flow = flow_echo(tmp_path, f'stack = "{stack}"')
    assert flow["stack"] == stack
    assert {k: flow[k] for k in want} == want
    assert flow["cc"] == "newreno", "the scenario file's own knob beats the profile"
    # The knobs both profiles share.
    assert (flow["sack"], flow["ack_every"], flow["initial_cwnd"], flow["initial_rto"]) == (True, 2, 10, "1s")


def test_linux_is_the_default_and_each_knob_overrides_it(tmp_path: Path):
    assert flow_echo(tmp_path, "")["stack"] == "linux"
    overrides = {
        "flow.min_rto": "1s",
        "flow.rack_tlp": False,
        "flow.hystart": "off",
        "flow.ack_every": 3,
        "flow.quickack": False,
    }
    # p2p-bulk runs NewReno: HyStart set explicitly is a setting without effect (still echoed).
    with pytest.warns(rantcp.ConfigWarning, match=r"^flow\.hystart is set but flow\.cc = \"newreno\""):
        flow = flow_echo(tmp_path, 'stack = "linux"', overrides)
    assert (flow["min_rto"], flow["rack_tlp"], flow["hystart"], flow["ack_every"], flow["quickack"]) == (
        "1s",
        False,
        "off",
        3,
        False,
    )
    # The others stay the profile's.
    assert (flow["prr"], flow["delack_timeout"], flow["cwnd_rules"]) == (True, "40ms", "linux")


def test_echoed_config_runs_again_to_the_same_result(tmp_path: Path):
    # The echo is a complete, valid config: feeding it back gives the same summary.
    first = rantcp.run("builtin:p2p-bulk", seed=3, overrides={"duration": "2s", "flow.stack": "rfc", "output.plots": False})

    def no_nulls(x):
        # TOML has no null: an absent key is what the echo's null means.
        if isinstance(x, dict):
            return {k: no_nulls(v) for k, v in x.items() if v is not None}
        return x

    path = tmp_path / "echo.toml"
    path.write_text(tomli_w.dumps(no_nulls(first.summary["config"])))
    again = rantcp.run(str(path))
    a = {k: v for k, v in first.summary.items() if k != "wall"}
    b = {k: v for k, v in again.summary.items() if k != "wall"}
    assert a == b


@pytest.mark.parametrize(
    "key,value,needle",
    [
        ("flow.stack", "bsd", "flow.stack"),
        ("flow.hystart", "fast", "flow.hystart"),
        ("flow.cwnd_rules", "windows", "flow.cwnd_rules"),
        ("flow.ack_every", "0", "flow.ack_every"),
        ("flow.rack_tlp", "maybe", "flow.rack_tlp"),
        ("flow.rcv_win_ratio", "0", "flow.rcv_win_ratio"),
        ("flow.rcv_win_ratio", "1.5", "flow.rcv_win_ratio"),
    ],
)
def test_bad_profile_values_are_one_line_errors(cli, key, value, needle):
    r = cli("validate", "builtin:p2p-bulk", "--set", f"{key}={value}")
    assert r.returncode == 2, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and needle in lines[0], r.stderr
