"""The Python API: results as dict + DataFrames, overrides, determinism of written files."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pandas as pd
import pytest

import rantcp

SHORT = {"duration": "4s", "bottleneck.rate": "20Mbps"}


def test_run_returns_summary_and_dataframes():
    r = rantcp.run("builtin:p2p-bulk", seed=1, overrides={**SHORT, "bottleneck.loss": 1e-3})
    assert r.summary["seed"] == 1
    assert r.summary["config"]["bottleneck"]["loss"] == 1e-3
    f = r.summary["flows"][0]
    assert f["cc"] == "newreno" and f["bytes_delivered"] > 0
    assert isinstance(r.flows, pd.DataFrame)
    for col in ["flow", "time_s", "goodput_bps", "cwnd_bytes", "ssthresh_bytes", "srtt_ms", "in_flight_bytes", "rwin_bytes"]:
        assert col in r.flows.columns
    assert len(r.flows) == 40  # 4 s at 100 ms
    assert r.flow_summary().loc[0, "name"] == "flow0"


def test_bad_override_raises_config_error():
    with pytest.raises(rantcp.ConfigError, match="bottleneck.loss"):
        rantcp.run("builtin:p2p-bulk", overrides={"bottleneck.loss": -1.0})
    with pytest.raises(ValueError):  # ConfigError is a ValueError
        rantcp.run("builtin:p2p-bulk", overrides={"flow.nope": 1})


def _digest(folder: Path) -> dict[str, str]:
    out = {}
    summary = json.loads((folder / "summary.json").read_text())
    del summary["wall"]
    out["summary"] = json.dumps(summary, sort_keys=True)
    for p in sorted(folder.glob("*.parquet")):
        out[p.name] = hashlib.sha256(p.read_bytes()).hexdigest()
    return out


def test_same_seed_is_byte_identical_and_other_seed_differs(tmp_path: Path):
    ov = {**SHORT, "bottleneck.loss": 5e-3}
    a = rantcp.run("builtin:p2p-bulk", seed=11, overrides=ov, out=tmp_path / "a")
    b = rantcp.run("builtin:p2p-bulk", seed=11, overrides=ov, out=tmp_path / "b")
    c = rantcp.run("builtin:p2p-bulk", seed=12, overrides=ov, out=tmp_path / "c")
    # summary.json is byte-identical apart from the "wall" block, which comes last.
    ta = (tmp_path / "a" / "summary.json").read_text()
    tb = (tmp_path / "b" / "summary.json").read_text()
    assert ta.split('"wall"')[0] == tb.split('"wall"')[0]
    assert _digest(tmp_path / "a") == _digest(tmp_path / "b")
    assert _digest(tmp_path / "a") != _digest(tmp_path / "c")
    assert a.summary["flows"] != c.summary["flows"]
    assert a.flows.equals(b.flows)


def test_load_result_round_trip(tmp_path: Path):
    r = rantcp.run("builtin:p2p-bulk", overrides=SHORT, out=tmp_path / "r")
    back = rantcp.load_result(tmp_path / "r")
    assert back.summary == r.summary
    pd.testing.assert_frame_equal(back.flows, r.flows)


def test_result_timeseries_is_tables_whatever_it_was_given():
    # Result.timeseries is typed Tables (the CLI counts rows with .arrow(), without pandas): a
    # mapping of DataFrames or Arrow tables given to Result is wrapped, and both views work.
    import pyarrow as pa

    from rantcp.api import Result, Tables

    df = pd.DataFrame({"time_s": [0.1, 0.2], "goodput_bps": [1.0, 2.0]})
    for given in ({"flows": df}, {"flows": pa.Table.from_pandas(df, preserve_index=False)}):
        r = Result(summary={}, timeseries=given)  # type: ignore[arg-type]  # wrapped in Tables
        assert isinstance(r.timeseries, Tables) and list(r.timeseries) == ["flows"]
        assert r.timeseries.arrow("flows").num_rows == 2
        pd.testing.assert_frame_equal(r.flows, df)
    assert len(Result(summary={}).timeseries) == 0


def test_failed_run_keeps_earlier_folder(tmp_path: Path):
    out = tmp_path / "r"
    rantcp.run("builtin:p2p-bulk", overrides=SHORT, out=out)
    before = (out / "summary.json").read_text()
    with pytest.raises(rantcp.ConfigError):
        rantcp.run("builtin:p2p-bulk", overrides={"output.pcap": ["no-such-iface"]}, out=out)
    assert (out / "summary.json").read_text() == before
    assert not (tmp_path / "r.partial").exists()
