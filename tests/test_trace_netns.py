"""Real Linux TCP, captured and analysed: two network namespaces joined by a veth pair, the
server's side shaped by tbf (20 Mbit/s; this CI kernel has no netem), an nftables rule in the client's
input hook dropping every 40th data segment (after tcpdump saw it: a loss between the capture
point and the receiver, as with a capture in the core network), HTTP downloads (python -m http.server, curl) captured with
tcpdump on the client's side (snapshot length 128: headers only, as field captures are). rantcp's
per-packet flags and per-session counts must agree with tshark's on the same file.

Needs root, `ip netns`, tc, nft, tcpdump and curl (`make test` installs them); skips with the
reason where the kernel refuses namespaces."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import pytest

import rantcp.trace as trace
from trace_helpers import TSHARK, assert_sessions_agree, compare_with_tshark

TOOLS = ["ip", "tc", "nft", "tcpdump", "curl"]
NS_C, NS_S = f"rtc{os.getpid()}", f"rts{os.getpid()}"
ADDR_C, ADDR_S = "10.231.0.1", "10.231.0.2"


def _sh(*args: str, ns: str | None = None, check: bool = True) -> subprocess.CompletedProcess[str]:
    cmd = (["ip", "netns", "exec", ns] if ns else []) + list(args)
    return subprocess.run(cmd, capture_output=True, text=True, timeout=60, check=check)


def _why_not() -> str | None:
    missing = [t for t in TOOLS if shutil.which(t) is None]
    if missing:
        return f"missing tools: {', '.join(missing)} (make test installs them)"
    if TSHARK is None:
        return "tshark not installed"
    if os.geteuid() != 0:
        return "needs root for network namespaces"
    r = subprocess.run(["ip", "netns", "add", NS_C + "x"], capture_output=True, text=True)
    if r.returncode != 0:
        return f"the kernel refused a network namespace: {r.stderr.strip()}"
    subprocess.run(["ip", "netns", "del", NS_C + "x"], capture_output=True)
    return None


REASON = _why_not()
if REASON:
    print(f"test_trace_netns: skipped: {REASON}", file=sys.stderr)
pytestmark = pytest.mark.skipif(REASON is not None, reason=REASON or "")


@pytest.fixture
def namespaces():
    try:
        _sh("ip", "netns", "add", NS_C)
        _sh("ip", "netns", "add", NS_S)
        _sh("ip", "link", "add", "vc", "netns", NS_C, "type", "veth", "peer", "name", "vs", "netns", NS_S)
        for ns, dev, addr in ((NS_C, "vc", ADDR_C), (NS_S, "vs", ADDR_S)):
            _sh("ip", "addr", "add", f"{addr}/24", "dev", dev, ns=ns)
            _sh("ip", "link", "set", dev, "up", ns=ns)
            _sh("ip", "link", "set", "lo", "up", ns=ns)
            # Wire-sized segments in the capture (no TSO/GRO super-frames).
            _sh("ethtool", "-K", dev, "tso", "off", "gso", "off", "gro", "off", ns=ns, check=False)
        _sh("tc", "qdisc", "add", "dev", "vs", "root", "tbf", "rate", "20mbit", "burst", "32kbit",
            "latency", "100ms", ns=NS_S)
        _sh("nft", "-f", "-", ns=NS_S, check=True) if False else None
        rules = (
            "table inet rantcp_loss {\n"
            "  chain out {\n"
            "    type filter hook input priority 0; policy accept;\n"
            "    tcp sport 8000 tcp flags & (syn|fin|rst) == 0 meta length > 200 numgen inc mod 40 == 0 drop\n"
            "  }\n"
            "}\n"
        )
        subprocess.run(["ip", "netns", "exec", NS_C, "nft", "-f", "-"], input=rules, text=True, check=True,
                       capture_output=True, timeout=30)
        yield
    finally:
        for ns in (NS_C, NS_S):
            subprocess.run(["ip", "netns", "del", ns], capture_output=True)


def test_linux_tcp_over_shaped_lossy_veth_agrees_with_tshark(namespaces: None, tmp_path: Path) -> None:
    www = tmp_path / "www"
    www.mkdir()
    (www / "file").write_bytes(os.urandom(3 << 20))
    server = subprocess.Popen(
        ["ip", "netns", "exec", NS_S, sys.executable, "-m", "http.server", "8000", "--bind", ADDR_S,
         "--directory", str(www)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    pcap = tmp_path / "client.pcap"
    dump = subprocess.Popen(
        ["ip", "netns", "exec", NS_C, "tcpdump", "-i", "vc", "-s", "128", "-B", "16384", "--immediate-mode", "-U", "-w", str(pcap), "tcp"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:  # the server listens and tcpdump writes its header
            ok = _sh("curl", "-s", "-I", "-o", "/dev/null", f"http://{ADDR_S}:8000/file", ns=NS_C, check=False)
            if ok.returncode == 0 and pcap.exists() and pcap.stat().st_size > 0:
                break
            time.sleep(0.1)
        for _ in range(2):
            r = _sh("curl", "-s", "-o", "/dev/null", "-w", "%{size_download}", f"http://{ADDR_S}:8000/file",
                    ns=NS_C, check=False)
            assert r.returncode == 0 and r.stdout == str(3 << 20), (r.returncode, r.stdout, r.stderr)
        # tcpdump stops at SIGINT without draining its buffer: wait until it has caught up.
        size, still, deadline = -1, 0, time.monotonic() + 20
        while still < 5 and time.monotonic() < deadline:
            time.sleep(0.1)
            now = pcap.stat().st_size
            still = still + 1 if now == size else 0
            size = now
    finally:
        dump.send_signal(signal.SIGINT)
        dump.wait(timeout=10)
        server.terminate()
        server.wait(timeout=10)

    db = tmp_path / "t.duckdb"
    rep = trace.ingest([pcap], db)
    assert [f.status for f in rep.files] == ["ingested"]
    con = duckdb.connect(str(db), read_only=True)
    res = compare_with_tshark(con, int(rep.files[0].capture_id or 0), pcap)
    assert res["differences"] == [], res["differences"][:20]
    assert_sessions_agree(res)
    big = con.execute(
        "SELECT s.session_id, max(p.seq + p.payload_len) AS span, s.retx_packets, s.dup_acks, s.throughput_bps "
        "FROM sessions s JOIN packets p USING (session_id) WHERE p.dir = 1 "
        "GROUP BY ALL HAVING span > 1000000 ORDER BY 1").fetchall()
    assert len(big) == 2
    for _, span, retx, dups, tput in big:
        assert span > 3 << 20  # the whole file (plus the HTTP header) crossed the capture point
        # Every 40th data segment was dropped after the capture point: each is seen twice (the
        # retransmission), announced by duplicate ACKs.
        assert retx > 10 and dups > 10, (retx, dups)
        # tbf shapes to 20 Mbit/s (IP bytes): the payload rate stays below it.
        assert 1e6 < tput < 20e6
