"""pcap output: opens in tshark with no malformed packets, and tshark's count of retransmissions
equals rantcp's own count. `make test` installs tshark."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

import rantcp

TSHARK = shutil.which("tshark")
pytestmark = pytest.mark.skipif(TSHARK is None, reason="tshark not installed (make test installs it)")


def _tshark_count(pcap: Path, display_filter: str) -> int:
    r = subprocess.run(
        [TSHARK, "-n", "-r", str(pcap), "-Y", display_filter, "-T", "fields", "-e", "frame.number"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 0, r.stderr
    return len([line for line in r.stdout.splitlines() if line.strip()])


@pytest.mark.parametrize("sack", [True, False])
def test_lossy_run_pcap_is_clean_and_retransmissions_match(tmp_path: Path, sack: bool):
    out = tmp_path / "run"
    r = rantcp.run(
        "builtin:p2p-bulk",
        seed=3,
        overrides={
            "duration": "6s",
            "bottleneck.rate": "10Mbps",
            "bottleneck.loss": 1e-2,
            "flow.sack": sack,
            "output.pcap": ["sender-eth0", "receiver-eth0"],
        },
        out=out,
    )
    flow = r.summary["flows"][0]
    assert flow["retransmitted_segments"] > 10  # the run really was lossy
    sender = out / "pcap" / "sender-eth0.pcap"
    receiver = out / "pcap" / "receiver-eth0.pcap"
    for p in (sender, receiver):
        assert _tshark_count(p, "_ws.malformed || _ws.expert.severity == error") == 0, p
        assert _tshark_count(p, "tcp") > 1000
    retx = _tshark_count(sender, "tcp.analysis.retransmission || tcp.analysis.fast_retransmission")
    assert retx == flow["retransmitted_segments"]
