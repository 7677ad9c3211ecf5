"""Sweeps: spec parsing, the results store, local pool vs Dask, kill-and-resume, failing points."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pandas as pd
import pandas.testing as pdt
import pytest

import rantcp
from rantcp.sweeps import spec as sweep_spec
from rantcp.sweeps import store

from conftest import RANTCP, ROOT

SMALL: dict[str, Any] = {
    "sweep": {"name": "small", "scenario": "builtin:p2p-bulk", "repetitions": 2, "seed": 7},
    "set": {"duration": "2s", "output.sample_interval": "200ms"},
    "axes": {"flow.cc": ["newreno", "cubic"], "bottleneck.loss": [0.0, 1e-3, 1e-2]},
}


def deterministic(df: pd.DataFrame) -> pd.DataFrame:
    """Rows without the wall-clock columns, in a canonical order."""
    d = df.drop(columns=[c for c in store.NONDETERMINISTIC_COLUMNS if c in df])
    return d.sort_values("point_id").reset_index(drop=True)


# ---------------------------------------------------------------------------------------------
# Spec parsing


def test_cross_zip_ranges_and_seeds():
    spec = sweep_spec.parse_spec(
        {
            "sweep": {"scenario": "builtin:p2p-bulk", "repetitions": 3, "seed": 5, "zip": [["flow.cc", "flow.pacing"]]},
            "axes": {
                "flow.cc": ["newreno", "bbr"],
                "bottleneck.rate": {"start": 10, "stop": 30, "step": 10, "unit": "Mbps"},
                "flow.pacing": [False, True],
                "bottleneck.loss": {"start": 1e-4, "stop": 1e-2, "num": 3, "scale": "log"},
            },
        }
    )
    assert spec.axes["bottleneck.rate"] == ["10Mbps", "20Mbps", "30Mbps"]
    assert spec.axes["bottleneck.loss"] == [1e-4, 1e-3, 1e-2]
    # (cc, pacing) zipped: 2 x 3 rates x 3 losses, first axis outermost.
    assert len(spec.points) == 18
    assert spec.points[0] == {"flow.cc": "newreno", "bottleneck.rate": "10Mbps", "flow.pacing": False, "bottleneck.loss": 1e-4}
    assert spec.points[-1] == {"flow.cc": "bbr", "bottleneck.rate": "30Mbps", "flow.pacing": True, "bottleneck.loss": 1e-2}
    assert {(p["flow.cc"], p["flow.pacing"]) for p in spec.points} == {("newreno", False), ("bbr", True)}
    # Seeds: documented derivation, distinct, the same for every point of a repetition.
    assert spec.seeds == [sweep_spec.derive_seed(5, r) for r in range(3)]
    assert len(set(spec.seeds)) == 3 and all(0 <= s < 2**63 for s in spec.seeds)
    tasks = spec.tasks()
    assert len(tasks) == 54 and len({t.point_id for t in tasks}) == 54
    assert {t.seed for t in tasks if t.repetition == 1} == {spec.seeds[1]}
    assert tasks[0].overrides["output.plots"] is False
    # Stable ids: the same spec parsed again gives the same ids.
    again = sweep_spec.parse_spec(
        {
            "sweep": {"scenario": "builtin:p2p-bulk", "repetitions": 3, "seed": 5, "zip": True},
            "axes": {"flow.cc": ["newreno", "bbr"], "flow.pacing": [False, True]},
        }
    )
    assert [p["flow.cc"] for p in again.points] == ["newreno", "bbr"]
    # Pinned: derive_seed is part of the documented format (old sweep folders stay resumable).
    assert sweep_spec.derive_seed(5, 0) == 8375576346411456744


def test_linear_ranges_and_default_seed():
    spec = sweep_spec.parse_spec(
        {"sweep": {"scenario": "builtin:p2p-bulk"}, "axes": {"flow.mss": {"start": 500, "stop": 1500, "num": 3}, "bottleneck.loss": {"start": 0, "stop": 0.3, "step": 0.1}}}
    )
    assert spec.axes["flow.mss"] == [500, 1000, 1500]
    assert spec.axes["bottleneck.loss"] == [0.0, 0.1, 0.2, 0.3]
    # Without sweep.seed the base scenario's seed is the base seed.
    assert spec.base_seed == rantcp.validate("builtin:p2p-bulk")["seed"]
    explicit = sweep_spec.parse_spec({"sweep": {"scenario": "builtin:p2p-bulk", "seeds": [3, 4]}})
    assert explicit.seeds == [3, 4] and explicit.points == [{}]


BAD_SPECS = [
    ("no sweep table", {"axes": {}}, "[sweep]"),
    ("unknown top key", {"sweep": {"scenario": "builtin:p2p-bulk"}, "axis": {}}, "axis"),
    ("unknown sweep key", {"sweep": {"scenario": "builtin:p2p-bulk", "reps": 2}}, "sweep.reps"),
    ("missing file", {"sweep": {"scenario": "nope.toml"}}, "not found"),
    ("empty axis", {"sweep": {"scenario": "builtin:p2p-bulk"}, "axes": {"flow.cc": []}}, "axes.flow.cc"),
    ("duplicate value", {"sweep": {"scenario": "builtin:p2p-bulk"}, "axes": {"flow.cc": ["bbr", "bbr"]}}, "twice"),
    ("range without step", {"sweep": {"scenario": "builtin:p2p-bulk"}, "axes": {"flow.mss": {"start": 1, "stop": 2}}}, "step or num"),
    ("zip lengths", {"sweep": {"scenario": "builtin:p2p-bulk", "zip": True}, "axes": {"flow.cc": ["bbr"], "flow.mss": [1, 2]}}, "different lengths"),
    ("zip unknown axis", {"sweep": {"scenario": "builtin:p2p-bulk", "zip": [["flow.x"]]}, "axes": {"flow.cc": ["bbr"]}}, "flow.x"),
    ("seed axis", {"sweep": {"scenario": "builtin:p2p-bulk"}, "axes": {"seed": [1, 2]}}, "sweep.seeds"),
    ("bad repetitions", {"sweep": {"scenario": "builtin:p2p-bulk", "repetitions": 0}}, "sweep.repetitions"),
    ("seeds and repetitions", {"sweep": {"scenario": "builtin:p2p-bulk", "seeds": [1], "repetitions": 2}}, "sweep.seeds"),
]


@pytest.mark.parametrize("what,data,needle", BAD_SPECS, ids=[b[0] for b in BAD_SPECS])
def test_bad_spec_is_one_line_config_error(tmp_path: Path, what, data, needle):
    with pytest.raises(rantcp.ConfigError) as e:
        sweep_spec.parse_spec(data, tmp_path)
    msg = str(e.value)
    assert needle in msg and "\n" not in msg


def test_bad_sweep_file_cli_exit_2(cli, tmp_path: Path):
    f = tmp_path / "s.toml"
    f.write_text('[sweep]\nscenario = "builtin:p2p-bulk"\n[axes]\n"flow.cc" = [\n')
    r = cli("sweep", str(f), "--out", str(tmp_path / "o"))
    assert r.returncode == 2 and "invalid TOML" in r.stderr and len(r.stderr.strip().splitlines()) == 1
    f.write_text('[sweep]\nscenario = "base.toml"\n')
    r = cli("sweep", str(f), "--out", str(tmp_path / "o"))
    assert r.returncode == 2 and "base.toml" in r.stderr
    # A bad fixed override fails the whole sweep up front (not every point).
    f.write_text('[sweep]\nscenario = "builtin:p2p-bulk"\n[set]\n"bottleneck.loss" = 3\n')
    r = cli("sweep", str(f), "--out", str(tmp_path / "o"))
    assert r.returncode == 2 and "bottleneck.loss" in r.stderr, r.stderr
    assert not (tmp_path / "o" / "sweep.duckdb").exists()


# ---------------------------------------------------------------------------------------------
# The store


def test_flatten_multi_flow_summary():
    r = rantcp.run("builtin:p2p-bulk", seed=3, overrides={"duration": "2s", "flow.count": 3})
    flat = store.flatten_summary(r.summary)
    flows = r.summary["flows"]
    assert flat["n_flows"] == 3
    assert flat["goodput_bps"] == pytest.approx(sum(f["goodput_bps"] for f in flows))
    assert flat["retransmitted_segments"] == sum(f["retransmitted_segments"] for f in flows)
    assert flat["rtt_min_ms"] == min(f["rtt_min_ms"] for f in flows)
    assert flat["rtt_max_ms"] == max(f["rtt_max_ms"] for f in flows)
    assert flat["rtt_mean_ms"] == pytest.approx(sum(f["rtt_mean_ms"] for f in flows) / 3)
    assert flat["flow2.goodput_mbps"] == flows[2]["goodput_mbps"]
    assert 0 < flat["jain_goodput"] <= 1
    assert flat["links.router-eth1.queue_drops"] == next(l for l in r.summary["links"] if l["iface"] == "router-eth1")["queue_drops"]
    assert "wall.seconds" not in flat and not any(k.startswith("config") for k in flat)


def test_flatten_skips_a_flow_field_that_is_text_in_one_flow_and_null_in_another():
    # As `slow_start_exit_cause`: null while a flow has not left slow start, text once it has.
    summary = {"flows": [{"x": None, "cause": None, "n": 1}, {"x": 2.0, "cause": "hystart-train", "n": 3}]}
    flat = store.flatten_summary(summary)
    assert flat["x"] == 2.0 and flat["n"] == 4 and flat["n_flows"] == 2
    assert not any(k == "cause" or k.endswith(".cause") for k in flat)


def test_api_sweep_resume_and_load(tmp_path: Path):
    out = tmp_path / "sw"
    spec = {**SMALL, "axes": {"flow.cc": ["newreno", "bbr"]}}
    df = rantcp.sweep(spec, out=out, workers=2)
    assert len(df) == 4 and set(df["status"]) == {"ok"}
    assert df.attrs["rantcp_sweep"] == str(out)
    assert (out / "sweep.toml").is_file()
    # Each run's folder: summary.json and its time series as Parquet.
    for pid in df["point_id"]:
        assert (out / "runs" / pid / "flows.parquet").is_file()
        assert (out / "runs" / pid / "summary.json").is_file()
    # Running again does nothing: the rows (and their finish times) are unchanged.
    again = rantcp.sweep(spec, out=out, workers=2)
    pdt.assert_frame_equal(again, df)
    # More repetitions: only the new ones run, the old rows stay.
    more = rantcp.sweep({**spec, "sweep": {**spec["sweep"], "repetitions": 3}}, out=out, workers=2)
    assert len(more) == 6
    old = more[more["point_id"].isin(df["point_id"])]
    pdt.assert_frame_equal(old.reset_index(drop=True), df.reset_index(drop=True))

    sw = rantcp.load(out)
    assert isinstance(sw, rantcp.Sweep) and sw.axes == ["flow.cc"] and len(sw.df) == 6
    pid = df["point_id"].iloc[0]
    res = rantcp.load(out / "runs" / pid)
    assert isinstance(res, rantcp.Result)
    assert res.summary["flows"][0]["goodput_mbps"] == df["goodput_mbps"].iloc[0]
    # A run of the sweep is reproducible with rantcp.run and its seed.
    row = df.iloc[1]
    direct = rantcp.run("builtin:p2p-bulk", seed=int(row["seed"]), overrides={"duration": "2s", "output.sample_interval": "200ms", "flow.cc": row["flow.cc"]})
    assert direct.summary["flows"][0]["bytes_delivered"] == row["bytes_delivered"]
    ts = sw.timeseries()
    assert {"point_id", "repetition", "seed", "flow.cc", "time_s", "goodput_bps"} <= set(ts.columns)
    assert len(ts) == 6 * 10
    s = sw.summarise(["goodput_mbps"])
    assert list(s["n"]) == [3, 3] and s["goodput_mbps_ci95"].notna().all()
    assert len(sw.sql('SELECT "flow.cc", avg(goodput_mbps) FROM runs GROUP BY 1')) == 2


def test_resume_refuses_a_different_sweep(tmp_path: Path):
    out = tmp_path / "sw"
    spec = {**SMALL, "axes": {"flow.cc": ["newreno"]}, "sweep": {**SMALL["sweep"], "repetitions": 1}}
    rantcp.sweep(spec, out=out, workers=1)
    changed = {**spec, "set": {"duration": "3s"}}
    with pytest.raises(rantcp.ConfigError, match="different sweep"):
        rantcp.sweep(changed, out=out, workers=1)
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "x.txt").write_text("keep")
    with pytest.raises(rantcp.ConfigError, match="not a sweep folder"):
        rantcp.sweep(spec, out=tmp_path / "other", workers=1)
    assert (tmp_path / "other" / "x.txt").read_text() == "keep"


def test_reopen_cleans_what_a_crash_left(tmp_path: Path):
    out = tmp_path / "sw"
    spec = {**SMALL, "axes": {"flow.cc": ["newreno", "bbr"]}, "sweep": {**SMALL["sweep"], "repetitions": 1}}
    df = rantcp.sweep(spec, out=out, workers=1)
    ids = list(df["point_id"])
    runs = out / "runs"
    # A crash after the rename but before the row: a run folder without a row. And a crash
    # while writing files: a temporary folder.
    con = store._connect(out / store.DB_NAME)
    con.execute("DELETE FROM runs WHERE point_id = ?", [ids[1]])
    con.close()
    (runs / ".tmp-deadbeef-1234").mkdir()
    (runs / ".tmp-deadbeef-1234" / "summary.json").write_text("{")
    again = rantcp.sweep(spec, out=out, workers=1)
    assert sorted(p.name for p in runs.iterdir()) == sorted(ids)
    pdt.assert_frame_equal(deterministic(again), deterministic(df))


# ---------------------------------------------------------------------------------------------
# Local pool vs Dask


@pytest.mark.timeout(120)
def test_local_pool_and_dask_give_identical_rows(tmp_path: Path):
    local = rantcp.sweep(SMALL, out=tmp_path / "local", workers=2)
    assert len(local) == 12 and set(local["status"]) == {"ok"}
    dask = rantcp.sweep(SMALL, out=tmp_path / "dask", dask="local:2")
    assert len(dask) == 12
    pdt.assert_frame_equal(deterministic(local), deterministic(dask))
    # The stored time series are identical too.
    for pid in local["point_id"]:
        a = pd.read_parquet(tmp_path / "local" / "runs" / pid / "flows.parquet")
        b = pd.read_parquet(tmp_path / "dask" / "runs" / pid / "flows.parquet")
        pdt.assert_frame_equal(a, b)
    # Loss changes results, seeds change results at loss > 0, and the seed is not shared across points' values.
    lossy = local[local["bottleneck.loss"] == 1e-2]
    assert lossy.groupby("flow.cc")["bytes_delivered"].nunique().min() == 2


# ---------------------------------------------------------------------------------------------
# Kill -9 and resume

SLOW = """
[sweep]
name = "slow"
scenario = "builtin:p2p-bulk"
repetitions = 2
seed = 11

[set]
duration = "80s"
"bottleneck.rate" = "200Mbps"
"output.sample_interval" = "1s"

[axes]
"flow.cc" = ["newreno", "cubic", "bbr"]
"bottleneck.loss" = [1e-4, 1e-3]
"""


def _committed(folder: Path) -> int:
    runs = folder / "runs"
    if not runs.is_dir():
        return 0
    return sum(1 for p in runs.iterdir() if not p.name.startswith(".tmp-"))


def _start(spec: Path, out: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [*RANTCP, "sweep", str(spec), "--out", str(out), "--workers", "2", "--quiet"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )


def _kill_tree(p: subprocess.Popen[bytes]) -> None:
    """SIGKILL the coordinator alone (the crash under test), then reap its orphaned workers."""
    p.send_signal(signal.SIGKILL)
    p.wait(timeout=30)
    try:
        os.killpg(p.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    if p.stderr:
        p.stderr.close()


@pytest.mark.timeout(180)
def test_kill_9_and_resume(tmp_path: Path):
    spec = tmp_path / "slow.toml"
    spec.write_text(SLOW)
    reference = rantcp.sweep(spec, out=tmp_path / "ref", workers=2)
    assert len(reference) == 12 and set(reference["status"]) == {"ok"}

    out = tmp_path / "killed"
    kills = 0
    for target in (1, 4, 7):  # kill at several points of progress
        p = _start(spec, out)
        deadline = time.monotonic() + 60
        while _committed(out) < target and p.poll() is None and time.monotonic() < deadline:
            time.sleep(0.005)
        if p.poll() is not None:
            break  # finished before we could kill it (fast machine)
        if kills == 0:
            # While it runs: a second sweep into the folder is refused in one line, and
            # rantcp.load reads a snapshot.
            live = rantcp.load(out).df
            assert live["point_id"].is_unique and len(live) <= 12 and set(live["status"]) <= {"ok"}
            second = subprocess.run([*RANTCP, "sweep", str(spec), "--out", str(out), "--quiet"], capture_output=True, text=True, timeout=60)
            if p.poll() is not None:
                break  # the first one finished meanwhile (and the second may have run)
            assert second.returncode == 2 and "in use by another process" in second.stderr, second.stderr
        _kill_tree(p)
        kills += 1
    assert kills >= 1, "the sweep finished before it could be killed; make the points slower"
    # Restart and finish.
    r = subprocess.run([*RANTCP, "sweep", str(spec), "--out", str(out), "--workers", "2", "--quiet"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    resumed = rantcp.load(out).df
    assert len(resumed) == 12
    assert resumed["point_id"].is_unique
    assert set(resumed["status"]) == {"ok"}
    pdt.assert_frame_equal(deterministic(resumed), deterministic(reference))
    # Exactly the committed runs have folders; nothing temporary is left.
    assert sorted(p.name for p in (out / "runs").iterdir()) == sorted(resumed["point_id"])


@pytest.mark.parametrize("stage", ["files-written", "renamed", "inserted", "committed"])
def test_kill_9_inside_a_commit(tmp_path: Path, stage: str):
    """SIGKILL at each step of recording the third run (tests/kill_at.py wraps the store's
    methods in a subprocess; nothing of it is in rantcp): afterwards the store holds the rows
    committed before (and the third once committed), never a partial or duplicated one, and a
    restart completes it exactly like an uninterrupted sweep."""
    spec = {**SMALL, "axes": {"flow.cc": ["newreno", "bbr"], "bottleneck.loss": [0.0, 1e-2]}, "sweep": {**SMALL["sweep"], "repetitions": 1}}
    path = tmp_path / "s.toml"
    path.write_text(sweep_spec.to_toml(spec))
    out = tmp_path / "o"
    p = subprocess.Popen(
        [sys.executable, str(ROOT / "tests" / "kill_at.py"), stage, "3", "--", "sweep", str(path), "--out", str(out), "--workers", "1", "--quiet"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    try:
        p.wait(timeout=120)
        _, err = p.communicate(timeout=30)  # EOF once the orphaned worker has left by itself
    finally:
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    assert p.returncode == -signal.SIGKILL, err
    rows = rantcp.load(out).df
    # Runs finished together are committed together: the third run's batch is all or nothing.
    assert rows["point_id"].is_unique and set(rows["status"]) <= {"ok"}
    assert (len(rows) >= 3) if stage == "committed" else (len(rows) <= 2)
    assert len(rows) < 4 or stage == "committed"
    r = subprocess.run([*RANTCP, "sweep", str(path), "--out", str(out), "--workers", "1", "--quiet"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    done = rantcp.load(out).df
    reference = rantcp.sweep(spec, out=tmp_path / "ref", workers=1)
    pdt.assert_frame_equal(deterministic(done), deterministic(reference))
    assert sorted(p.name for p in (out / "runs").iterdir()) == sorted(done["point_id"])


# ---------------------------------------------------------------------------------------------
# Failing points

FAILING = """
[sweep]
name = "failing"
scenario = "builtin:p2p-bulk"
repetitions = 2
seed = 1

[set]
duration = "2s"

[axes]
"flow.cc" = ["newreno", "vegas", "bbr"]
"bottleneck.loss" = [0.0, 1e-3]
"""


def test_failing_point_is_recorded_and_strict_exit(cli, tmp_path: Path):
    spec = tmp_path / "failing.toml"
    spec.write_text(FAILING)
    out = tmp_path / "f"
    r = cli("sweep", str(spec), "--out", str(out), "--workers", "2")
    assert r.returncode == 0, r.stderr
    assert "Traceback" not in r.stderr
    df = rantcp.load(out).df
    assert len(df) == 12
    bad = df[df["flow.cc"] == "vegas"]
    good = df[df["flow.cc"] != "vegas"]
    assert set(bad["status"]) == {"failed"} and len(bad) == 4
    assert bad["error"].str.contains("flow.cc").all() and bad["error"].str.contains("vegas").all()
    assert bad["goodput_mbps"].isna().all()
    assert set(good["status"]) == {"ok"} and good["goodput_mbps"].gt(0).all() and good["error"].isna().all()
    assert not any((out / "runs" / pid).exists() for pid in bad["point_id"])
    assert "failed" in r.stdout and "vegas" in r.stdout

    # --strict: non-zero, in a fresh folder (the other points still complete) and on resume.
    out2 = tmp_path / "strict"
    r = cli("sweep", str(spec), "--out", str(out2), "--workers", "2", "--strict")
    assert r.returncode == 1
    assert "4 run(s) failed" in r.stderr
    df2 = rantcp.load(out2).df
    assert (df2["status"] == "ok").sum() == 8
    r = cli("sweep", str(spec), "--out", str(out2), "--strict", "--quiet")
    assert r.returncode == 1
    # --retry-failed runs them again (and they fail again, with the same error).
    r = cli("sweep", str(spec), "--out", str(out2), "--retry-failed", "--quiet")
    assert r.returncode == 0
    df3 = rantcp.load(out2).df
    assert len(df3) == 12 and (df3["status"] == "failed").sum() == 4


def test_example_sweep_under_a_minute(cli, tmp_path: Path):
    t0 = time.monotonic()
    r = cli("sweep", str(ROOT / "examples" / "sweep-cc-loss.toml"), "--out", str(tmp_path / "cc-loss"))
    took = time.monotonic() - t0
    assert r.returncode == 0, r.stderr
    df = rantcp.load(tmp_path / "cc-loss").df
    assert len(df) == 4 * 3 * 2 and set(df["status"]) == {"ok"}
    assert set(df["flow.cc"]) == {"newreno", "cubic", "highspeed", "bbr"}
    assert took < 60
    # Loss costs the loss-based controllers goodput.
    nr = df[df["flow.cc"] == "newreno"].groupby("bottleneck.loss")["goodput_mbps"].mean()
    assert nr[1e-3] < nr[0.0]


def test_plain_progress_when_not_a_terminal(tmp_path: Path):
    spec = tmp_path / "s.toml"
    spec.write_text('[sweep]\nscenario = "builtin:p2p-bulk"\nrepetitions = 2\n[set]\nduration = "1s"\n')
    r = subprocess.run([*RANTCP, "sweep", str(spec), "--out", str(tmp_path / "o"), "--workers", "1"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "2/2 runs (2 ok, 0 failed)" in r.stderr
    assert "\x1b[" not in r.stderr


def test_cli_help_lists_sweep_and_report(cli):
    r = cli("--help")
    assert "sweep" in r.stdout and "report" in r.stdout
    r = cli("sweep", "--help")
    assert "--dask" in r.stdout and "--strict" in r.stdout and "--workers" in r.stdout


def test_dask_bad_address_is_one_line(cli, tmp_path: Path):
    spec = tmp_path / "s.toml"
    spec.write_text('[sweep]\nscenario = "builtin:p2p-bulk"\n[set]\nduration = "1s"\n')
    r = cli("sweep", str(spec), "--out", str(tmp_path / "o"), "--dask", "local:zero")
    assert r.returncode == 2 and "local:N" in r.stderr and len(r.stderr.strip().splitlines()) == 1



@pytest.mark.timeout(120)
def test_dask_scheduler_address(tmp_path: Path):
    """--dask ADDRESS: the runs go to an existing cluster (here one on the loopback)."""
    import logging

    import distributed

    spec = tmp_path / "s.toml"
    spec.write_text('[sweep]\nscenario = "builtin:p2p-bulk"\nrepetitions = 2\nseed = 4\n[set]\nduration = "1s"\n[axes]\n"flow.cc" = ["newreno", "vegas"]\n')
    with distributed.LocalCluster(
        n_workers=1, threads_per_worker=2, processes=True, dashboard_address=None, host="127.0.0.1", silence_logs=logging.ERROR
    ) as cluster:
        r = subprocess.run(
            [*RANTCP, "sweep", str(spec), "--out", str(tmp_path / "o"), "--dask", cluster.scheduler_address, "--quiet"],
            capture_output=True,
            text=True,
            timeout=120,
        )
    assert r.returncode == 0, r.stderr
    df = rantcp.load(tmp_path / "o").df
    assert list(df["status"]) == ["ok", "ok", "failed", "failed"]
    assert df["error"].iloc[2].startswith("flow.cc")
    local = rantcp.sweep(spec, out=tmp_path / "local", workers=1)
    pdt.assert_frame_equal(deterministic(df), deterministic(local))


def test_workers_that_cannot_start_record_nothing(tmp_path: Path):
    """A script without the __main__ guard kills every pool worker: the sweep stops with a clear
    error and records no failed rows (the runs stay unfinished, to be done on a fixed rerun)."""
    script = tmp_path / "noguard.py"
    out = tmp_path / "o"
    script.write_text(
        "import rantcp\n"
        f"rantcp.sweep({{'sweep': {{'scenario': 'builtin:p2p-bulk', 'repetitions': 2}}, 'set': {{'duration': '1s'}}}}, out={str(out)!r}, workers=2)\n"
    )
    r = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120)
    assert r.returncode != 0
    assert "WorkersCannotStart" in r.stderr and "__main__" in r.stderr
    assert len(rantcp.load(out).df) == 0


@pytest.mark.parametrize(
    ("files", "quota", "workers"),
    [
        ({}, None, None),  # no cgroup files: the CPUs the process may run on
        ({"cpu.max": "max 100000\n"}, None, None),
        ({"cpu.max": "200000 100000\n"}, 2.0, 2),  # CI: 2 CPUs' time, whatever the host shows
        ({"cpu.max": "150000 100000\n"}, 1.5, 2),
        ({"cpu.max": "50000 100000\n"}, 0.5, 1),
        ({"cpu/cpu.cfs_quota_us": "200000\n", "cpu/cpu.cfs_period_us": "100000\n"}, 2.0, 2),  # cgroup v1
        ({"cpu,cpuacct/cpu.cfs_quota_us": "-1\n", "cpu,cpuacct/cpu.cfs_period_us": "100000\n"}, None, None),
    ],
)
def test_default_workers_follow_the_cpu_quota(tmp_path: Path, files: dict[str, str], quota: float | None, workers: int | None):
    """The issue's "all cores by default" are the cores the process may use: a CPU quota (a
    container's, a CI machine's) bounds them, not only the CPUs the host shows."""
    from rantcp.sweeps.executors import cgroup_cpu_quota, default_workers

    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    cpus = len(os.sched_getaffinity(0))
    assert cgroup_cpu_quota(str(tmp_path)) == quota
    assert default_workers(str(tmp_path)) == (cpus if workers is None else min(cpus, workers))
