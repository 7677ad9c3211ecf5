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
    assert TSHARK is not None  # the module is skipped without it
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
    # tshark labels a segment below the highest sequence number "out_of_order" instead of
    # "retransmission" when it follows the highest segment within its 3 ms heuristic threshold;
    # on the sender's own interface nothing is ever reordered, so each such frame must be a
    # retransmission: check that independently from the sequence numbers, then count it.
    ooo = _out_of_order_frames_are_resends(sender)
    assert retx + ooo == flow["retransmitted_segments"]
    assert retx >= 0.5 * flow["retransmitted_segments"]


def _out_of_order_frames_are_resends(pcap: Path) -> int:
    assert TSHARK is not None
    r = subprocess.run(
        [TSHARK, "-n", "-r", str(pcap), "-o", "tcp.relative_sequence_numbers:FALSE", "-Y", "tcp.len > 0 && ip.src == 10.0.0.1",
         "-T", "fields", "-e", "tcp.seq", "-e", "tcp.len", "-e", "tcp.analysis.out_of_order"],
        capture_output=True, text=True, timeout=300,
    )
    assert r.returncode == 0, r.stderr
    highest = None
    ooo = 0
    for line in r.stdout.splitlines():
        seq_s, len_s, flag = (line.split("\t") + ["", "", ""])[:3]
        seq, length = int(seq_s), int(len_s)
        end = (seq + length) % 2**32
        if flag:
            ooo += 1
            # Entirely at or below data already sent (mod 2^32, RFC 9293 §3.4 comparison).
            assert highest is not None and (highest - end) % 2**32 < 2**31, line
        if highest is None or (end - highest) % 2**32 < 2**31:
            highest = end
    return ooo
