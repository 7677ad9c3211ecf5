"""Real-time emulation (issue 17): real Linux TCP between network namespaces through the model.

p2p-bulk's pipe must be what its config says to a real stack: ping's RTT within ±0.5 ms of the
40 ms floor, a kernel TCP transfer at >= 95 % of the bottleneck's payload rate with no emulator
drops; a RAN scenario carries real packets (ping across the cell); set-up and tear-down leave
the host's links, routes and firewall rules as they were, also after SIGKILL of the emulator
followed by `rantcp emulate --cleanup`.

Needs root, /dev/net/tun and `ip` (`make test` has them on CI); skips with the reason where the
kernel refuses network namespaces.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import RANTCP, run_cli
from rantcp import emulation

BULK_SERVER = r"""
import socket, sys, time
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("0.0.0.0", 5201)); s.listen(1)
c, _ = s.accept()
marks, total, t0 = [], 0, None
while True:
    b = c.recv(1 << 20)
    if not b:
        break
    now = time.monotonic()
    t0 = t0 or now
    total += len(b)
    marks.append((now - t0, total))
print(repr(marks[:: max(1, len(marks) // 2000)] + marks[-1:]))
"""

# The clients connect as soon as their server listens (its interpreter may start slowly on a
# busy machine; a fixed sleep before the client would race it).
CONNECT = r"""
import socket, time
def connect(host, port, within=20.0):
    end = time.monotonic() + within
    while True:
        try:
            return socket.create_connection((host, port))
        except ConnectionRefusedError:
            if time.monotonic() > end:
                raise
            time.sleep(0.05)
"""

BULK_CLIENT = CONNECT + r"""
import socket, sys, time
s = connect(sys.argv[1], 5201)
buf = b"x" * (1 << 16)
end = time.monotonic() + float(sys.argv[2])
while time.monotonic() < end:
    s.sendall(buf)
s.close()
"""


def _why_not() -> str | None:
    why = emulation.why_not()
    if why:
        return why
    ns = f"rantcp-probe{os.getpid()}"
    r = subprocess.run(["ip", "netns", "add", ns], capture_output=True, text=True)
    if r.returncode != 0:
        return f"the kernel refused a network namespace: {r.stderr.strip()}"
    subprocess.run(["ip", "netns", "del", ns], capture_output=True)
    return None


REASON = _why_not()
if REASON:
    print(f"test_emulate: skipped: {REASON}", file=sys.stderr)
needs_netns = pytest.mark.skipif(REASON is not None, reason=REASON or "")


def _host_state() -> dict[str, str]:
    """What the emulator must leave untouched outside its namespaces."""
    out = {}
    for name, cmd in {
        "links": ["ip", "-o", "link", "show"],
        "routes": ["ip", "route", "show", "table", "all"],
        "netns": ["ip", "netns", "list"],
        "nft": ["nft", "list", "ruleset"],
    }.items():
        if shutil.which(cmd[0]):
            r = subprocess.run(cmd, capture_output=True, text=True)
            # Link counters and the namespaces other tests (other processes) make come and go.
            text = "\n".join(l for l in r.stdout.splitlines() if "rantcp" not in l or name != "netns")
            out[name] = re.sub(r"\s+", " ", text)
    return out


def _ours_left() -> list[str]:
    r = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True)
    return [l.split()[0] for l in r.stdout.splitlines() if re.match(r"rantcp\d*-", l)]


def _ping_stats_ms(output: str) -> tuple[float, float]:
    """(min, avg) from ping's summary line."""
    m = re.search(r"= ([\d.]+)/([\d.]+)/[\d.]+/[\d.]+ ms", output)
    assert m, output
    return float(m.group(1)), float(m.group(2))


def _ping_avg_ms(output: str) -> float:
    return _ping_stats_ms(output)[1]


def _ping_min_ms(output: str) -> float:
    return _ping_stats_ms(output)[0]


def _ping_median_ms(output: str) -> float:
    """The median of the echo replies' `time=` values."""
    times = sorted(float(t) for t in re.findall(r"time=([\d.]+) ms", output))
    assert times, output
    mid = len(times) // 2
    return times[mid] if len(times) % 2 else (times[mid - 1] + times[mid]) / 2


def test_command_parsing() -> None:
    assert emulation.parse_commands(["--", "server:", "iperf3", "-s", "--", "ue1:ping", "-c", "1", "server"]) == [
        ("server", ["iperf3", "-s"]),
        ("ue1", ["ping", "-c", "1", "server"]),
    ]
    with pytest.raises(ValueError, match="start it with the host"):
        emulation.parse_commands(["--", "ping", "server"])
    with pytest.raises(ValueError, match="nothing to run"):
        emulation.parse_commands(["--", "ue1:"])


def test_without_root_one_line_exit_2(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    assert "needs root" in (emulation.why_not() or "")
    r = subprocess.run(
        ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", *RANTCP, "emulate", "builtin:p2p-bulk"],
        capture_output=True, text=True, timeout=60,
    ) if os.geteuid() == 0 and shutil.which("setpriv") else None
    if r is not None:
        assert r.returncode == 2, r.stderr
        assert r.stderr.count("\n") == 1 and "needs root" in r.stderr, r.stderr


def test_bad_moderation_one_line_exit_2() -> None:
    # Checked before anything is created, root or not.
    r = run_cli("emulate", "builtin:p2p-bulk", "--moderation-us", "20000")
    assert r.returncode == 2 and r.stderr.count("\n") == 1, r.stderr
    assert "--moderation-us" in r.stderr and "0 to 10000" in r.stderr, r.stderr
    for bad in (-1, float("nan"), True, "100"):
        with pytest.raises(Exception, match="moderation_us"):
            emulation.Emulation("builtin:p2p-bulk", moderation_us=bad)  # type: ignore[arg-type]


def test_several_networks_refused() -> None:
    r = run_cli("emulate", "builtin:cc-compare") if REASON is None else None
    if r is not None:
        assert r.returncode == 2 and "one network" in r.stderr, r.stderr


@needs_netns
def test_p2p_ping_rtt_floor_and_kernel_tcp_rate(tmp_path: Path) -> None:
    before = _host_state()
    with emulation.emulate("builtin:p2p-bulk", duration="60s", out=tmp_path / "emu") as emu:
        assert set(emu.namespaces) == {"sender", "receiver"}
        # The router (a node of the model) answers ping itself: its RTT is the 1 us access link's
        # (measured 0.07 ms), not the 40 ms path to the receiver. Judged on the fastest of the 3
        # replies, as the floor below: the host only ever adds delay, and one reply held up by
        # a CI machine's scheduler moves the mean of 3 by a third of that delay.
        r = emu.run("sender", ["ping", "-c", "3", "-i", "0.2", "-W", "2", "10.0.0.254"], capture_output=True, text=True)
        assert r.returncode == 0, r.stdout + r.stderr
        assert _ping_min_ms(r.stdout) < 1.0, r.stdout
        ping = emu.run("sender", ["ping", "-c", "20", "-i", "0.1", "receiver"], capture_output=True, text=True)
        assert ping.returncode == 0, ping.stdout + ping.stderr
        server = emu.popen("receiver", [sys.executable, "-c", BULK_SERVER], stdout=subprocess.PIPE, text=True)
        c = emu.run("sender", [sys.executable, "-c", BULK_CLIENT, "receiver", "8"], capture_output=True, text=True, timeout=60)
        assert c.returncode == 0, c.stderr
        marks = eval(server.communicate(timeout=30)[0])  # noqa: S307 (our own script's repr)
    # Payload rate from 2 s on (after slow start): >= 95 % of the bottleneck's payload rate
    # (50 Mbit/s of 1500-byte packets carrying 1448 bytes with timestamps).
    t_a, b_a = next((t, b) for t, b in marks if t >= 2.0)
    t_b, b_b = marks[-1]
    rate = (b_b - b_a) * 8 / (t_b - t_a)
    payload_rate = 50e6 * 1448 / 1500
    assert rate >= 0.95 * payload_rate, (rate, payload_rate)
    assert rate <= 1.005 * payload_rate, "faster than the bottleneck"
    s = emu.summary
    assert s is not None
    assert s["emulation"]["emulator_drops"] == 0, s["emulation"]
    # The ping's RTT is the model's floor, never less: 2 x (20 ms + 1 us) of propagation plus
    # 84-byte echo packets serialised at 1 Gbit/s and 50 Mbit/s each way; what the host adds
    # (its stacks, the TUN reads and writes, the loop's wake-ups) keeps the RTT within 0.5 ms of
    # 40 ms (issue 17). The median of the 20 replies is the RTT judged: one reply held up by the
    # host's scheduler (a CI machine's neighbours) moves the mean of 20 by its delay / 20 and is
    # the machine's, not the pipe's; the mean is in the message. How late the emulator ran
    # (delivery p99 < 1 ms) is a benchmark figure (`make bench`), not asserted on a shared CI box.
    floor_ms = 2 * (20.001 + 84 * 8 / 1e9 * 1e3 + 84 * 8 / 50e6 * 1e3)
    assert _ping_min_ms(ping.stdout) >= floor_ms - 0.01, (floor_ms, ping.stdout)
    assert abs(_ping_median_ms(ping.stdout) - 40.0) <= 0.5, (_ping_avg_ms(ping.stdout), ping.stdout)
    hosts = s["emulation"]["hosts"]
    assert hosts["sender"]["from_host_bytes"] > 8 * 0.9 * payload_rate / 8
    assert hosts["receiver"]["unparsed"] == 0 and hosts["sender"]["unparsed"] == 0
    # The outputs of a run: summary.json with the emulation's health, link counters.
    written = json.loads((tmp_path / "emu" / "summary.json").read_text())
    assert written["emulation"]["model_lateness"]["samples"] > 0
    assert any(l["tx_bytes"] > 40e6 for l in written["links"]), written["links"]
    assert _ours_left() == [] and _host_state() == before


@needs_netns
def test_lte_cell_carries_real_packets() -> None:
    with emulation.emulate("builtin:lte-cell", overrides={"ues": 2}, duration="30s") as emu:
        assert set(emu.namespaces) == {"server", "ue1", "ue2"}
        r = emu.run("ue1", ["ping", "-c", "5", "-i", "0.2", "server"], capture_output=True, text=True)
        assert r.returncode == 0, r.stdout + r.stderr
        # Over the radio: the wired floor 2 x (20 ms + 1 ms) plus scheduling and the uplink grant.
        assert _ping_avg_ms(r.stdout) > 42.0, r.stdout
    assert emu.summary is not None and emu.summary["emulation"]["hosts"]["ue1"]["to_host_packets"] >= 5
    assert _ours_left() == []


@needs_netns
def test_sigkill_then_cleanup_leaves_host_as_before(tmp_path: Path) -> None:
    before = _host_state()
    first = subprocess.Popen([*RANTCP, "emulate", "builtin:p2p-bulk", "--duration", "60s"],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    second = None
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not {"rantcp-sender", "rantcp-receiver"} <= set(_ours_left()):
            time.sleep(0.1)
        assert {"rantcp-sender", "rantcp-receiver"} <= set(_ours_left())
        # A second emulation meanwhile gets its own names; Ctrl-C tears it down.
        second = subprocess.Popen([*RANTCP, "emulate", "builtin:p2p-bulk", "--duration", "60s"],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        while time.monotonic() < deadline and "rantcp2-sender" not in _ours_left():
            time.sleep(0.1)
        assert "rantcp2-sender" in _ours_left()
        time.sleep(0.5)
        second.send_signal(signal.SIGINT)
        _, err = second.communicate(timeout=60)
        assert second.returncode == 130, err
        assert not [n for n in _ours_left() if n.startswith("rantcp2-")]
        # SIGKILL: nothing of the emulator runs; its namespaces stay until --cleanup.
        first.kill()
        first.wait(timeout=30)
        assert {"rantcp-sender", "rantcp-receiver"} <= set(_ours_left())
    finally:
        for p in (first, second):
            if p is not None and p.poll() is None:
                p.kill()
                p.communicate()
    r = run_cli("emulate", "--cleanup")
    assert r.returncode == 0, r.stderr
    assert "removed rantcp-receiver, rantcp-sender" in r.stdout or "removed rantcp-sender, rantcp-receiver" in r.stdout, r.stdout
    assert _ours_left() == []
    assert _host_state() == before


HASH_SERVER = r"""
import hashlib, socket
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("0.0.0.0", 5202)); s.listen(1)
c, _ = s.accept()
h, n = hashlib.sha256(), 0
while b := c.recv(1 << 20):
    h.update(b); n += len(b)
print(n, h.hexdigest())
"""

HASH_CLIENT = CONNECT + r"""
import random, socket, sys
data = random.Random(17).randbytes(5 << 20)
s = connect(sys.argv[1], 5202); s.sendall(data); s.close()
"""


@needs_netns
def test_real_bytes_arrive_intact_with_segmentation_and_receive_offload() -> None:
    import hashlib
    import random

    expect = hashlib.sha256(random.Random(17).randbytes(5 << 20)).hexdigest()
    # 2 ms interrupt moderation: the 50 Mbit/s bottleneck delivers about 8 segments per turn,
    # which receive offload merges into super-segments.
    with emulation.emulate("builtin:p2p-bulk", duration="60s", offload=True, moderation_us=2000,
                           overrides={"bottleneck.loss": 1e-3}) as emu:
        server = emu.popen("receiver", [sys.executable, "-c", HASH_SERVER], stdout=subprocess.PIPE, text=True)
        c = emu.run("sender", [sys.executable, "-c", HASH_CLIENT, "receiver"], capture_output=True, text=True, timeout=60)
        assert c.returncode == 0, c.stderr
        out = server.communicate(timeout=30)[0].split()
    # 5 MB through random loss and retransmissions, cut from 64 KB super-segments and merged
    # again towards the receiver: every byte.
    assert out == [str(5 << 20), expect]
    e = emu.summary["emulation"] if emu.summary else {}
    assert e["emulator_drops"] == 0 and e["payload_missing"] == 0
    # Super-segments were cut: more packets reached the model than the sender's device read.
    assert e["hosts"]["sender"]["from_host_packets"] > e["hosts"]["sender"]["from_host_reads"]
    # ... and merged: fewer writes to the receiver's device than segments the model delivered.
    rcv = e["hosts"]["receiver"]
    assert rcv["to_host_writes"] < rcv["to_host_packets"] / 2
    assert e["moderation_us"] == 2000
    # Moderation delays events by at most about its interval: the typical (median) event waits
    # out the hold, ~2000 us (measured 2015-2018 us; 17 us without moderation). A hold longer
    # than the interval moves the median past 3000 us on any machine. The p99 is the machine's:
    # it is one of ~550 samples (one per turn), so six turns held up by a shared CI machine's
    # scheduler decide it (measured 2047-2058 us here, max 6.6 ms in one run). It is a bench
    # figure, as delivery lateness: `make bench` reports the p99 of its offload + moderation mode.
    late = e["model_lateness"]
    assert late["p50_us"] < 2000 + 1000, late
