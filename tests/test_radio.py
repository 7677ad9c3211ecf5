"""A short radio scenario through the Python API: radio and cells tables, radio summary and
the seed-004-style plot."""

from __future__ import annotations

from pathlib import Path

import rantcp


def test_radio_run_writes_tables_and_plot(tmp_path: Path):
    out = tmp_path / "run"
    r = rantcp.run("builtin:mmwave-blockage", seed=1, overrides={"duration": "2s", "ue.los_duration": "500ms", "ue.nlos_duration": "500ms", "output.plots": True}, out=out)
    radio = r.timeseries["radio"]
    for col in ["time_s", "ue", "sinr_db", "cqi", "mcs", "tbs_bytes", "prbs", "harq_new", "harq_retx", "harq_failed", "rlc_queue_bytes", "rlc_drops", "sr", "bsr", "ul_grants", "los"]:
        assert col in radio.columns
    assert len(radio) == 20  # 1 UE, 2 s at 100 ms
    assert set(radio["los"]) == {0, 1}
    assert "cells" in r.timeseries and (r.timeseries["cells"]["dl_prb_util"] >= 0).all()
    ue = r.summary["radio"]["ues"][0]
    assert ue["dl_tb_new"] > 0 and ue["ul_grants"] > 0
    assert (out / "radio.parquet").exists()
    assert (out / "plots" / "radio.png").stat().st_size > 10_000
    assert (out / "plots" / "cells.png").exists()
