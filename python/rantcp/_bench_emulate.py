"""`make bench`: real-time emulation throughput (issue 17).

For p2p-bulk with its bottleneck raised to each rate of ``RATES`` (access link 10 Gbit/s,
the scenario's 20 ms delay and 1-BDP queue), and for mmwave-blockage held in LOS: one iperf3
transfer (Linux CUBIC, ``SECONDS`` s after ``OMIT`` s of slow start left out) between the
emulated hosts, in two modes: plain TUN devices, one packet per read and write, the model run
at every event; and ``MODES``' fast one: segmentation and receive offload with interrupt
moderation (``MODERATION_US``). A rate is *sustained* when the transfer got >= 90 % of the
bottleneck's payload rate with no emulator drop and a p99 lateness under 1 ms, both of the model
(its turns behind its events) and of the deliveries (each packet written behind its model
time). Beside it, the same transfer over a bare veth pair shaped by tbf to the same rate (no
model and no delay: netem is not in this kernel; the kernel's own cost of moving the packets,
the ceiling a Mahimahi-style shell would also sit under), and the ratio.

Skips with one line when the machine cannot emulate (no root, no TUN, no iperf3).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from typing import Any

RATES_GBPS = [0.5, 1.0, 2.0, 4.0]
MODERATION_US = 100
MODES = [("plain", False, 0.0), (f"offload, moderation {MODERATION_US} us", True, float(MODERATION_US))]
SECONDS = 6
OMIT = 2
PAYLOAD = 1448 / 1500  # TCP payload per IP byte of a full segment with timestamps
SYSCTLS = {
    # A path of 40 ms with a 1-BDP queue holds up to 2 BDP in flight: 10 MB at 1 Gbit/s, 20 MB
    # at 2. Linux's default 6 MB tcp_rmem maximum (of which it advertises about half) would
    # cap the window at about 0.6 Gbit/s whatever the emulator does; per namespace.
    "net.ipv4.tcp_rmem": "4096 131072 67108864",
    "net.ipv4.tcp_wmem": "4096 16384 67108864",
}


def _iperf(run: Any, popen: Any, snd: str, rcv_name: str, rcv: str) -> tuple[float, int]:
    server = popen(rcv, ["iperf3", "-s", "-1"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(0.5)
    r = run(snd, ["iperf3", "-c", rcv_name, "-t", str(SECONDS), "-O", str(OMIT), "-J"],
            capture_output=True, text=True, timeout=SECONDS + OMIT + 60)
    server.wait(timeout=30)
    if r.returncode != 0:
        raise RuntimeError(f"iperf3: {r.stdout[-300:]} {r.stderr[-300:]}")
    end = json.loads(r.stdout)["end"]
    return end["sum_received"]["bits_per_second"], int(end["sum_sent"].get("retransmits", 0))


def emulated(scenario: str, ov: dict[str, Any], snd: str, rcv: str, offload: bool, moderation_us: float) -> dict[str, Any]:
    from rantcp import emulation

    with emulation.emulate(scenario, overrides=ov, duration="120s", offload=offload, moderation_us=moderation_us) as emu:
        for host in (snd, rcv):
            emu.run(host, ["sysctl", "-q", "-w", *(f"{k}={v}" for k, v in SYSCTLS.items())], check=True)
        bps, retx = _iperf(emu.run, emu.popen, snd, rcv, rcv)
    e = emu.summary["emulation"] if emu.summary else {}
    return {"bps": bps, "retx": retx, "drops": e.get("emulator_drops"), "p99_us": e["model_lateness"]["p99_us"],
            "max_us": e["model_lateness"]["max_us"], "deliv_p99_us": e["delivery_lateness"]["p99_us"],
            "cpu": e.get("cpu_fraction")}


def veth_tbf(rate_bps: float) -> float:
    """iperf3 over veth between two fresh namespaces, the sender's side shaped by tbf."""
    tag = f"rtb{os.getpid()}"
    a, b = f"{tag}a", f"{tag}b"

    def sh(*args: str, ns: str | None = None) -> None:
        cmd = (["ip", "netns", "exec", ns] if ns else []) + list(args)
        subprocess.run(cmd, check=True, capture_output=True, timeout=30)

    try:
        sh("ip", "netns", "add", a)
        sh("ip", "netns", "add", b)
        sh("ip", "link", "add", "va", "netns", a, "type", "veth", "peer", "name", "vb", "netns", b)
        for ns, dev, addr in ((a, "va", "10.232.0.1"), (b, "vb", "10.232.0.2")):
            sh("ip", "addr", "add", f"{addr}/24", "dev", dev, ns=ns)
            sh("ip", "link", "set", dev, "up", ns=ns)
            sh("ip", "link", "set", "lo", "up", ns=ns)
        burst = max(int(rate_bps / 8 / 250), 64 * 1024)  # 4 ms of bytes
        for ns in (a, b):
            sh("sysctl", "-q", "-w", *(f"{k}={v}" for k, v in SYSCTLS.items()), ns=ns)
        sh("tc", "qdisc", "add", "dev", "va", "root", "tbf", "rate", f"{int(rate_bps)}bit", "burst", str(burst),
           "latency", "20ms", ns=a)

        def run(ns: str, argv: list[str], **kw: Any) -> subprocess.CompletedProcess[str]:
            return subprocess.run(["ip", "netns", "exec", ns, *argv], **kw)

        def popen(ns: str, argv: list[str], **kw: Any) -> subprocess.Popen[Any]:
            return subprocess.Popen(["ip", "netns", "exec", ns, *argv], **kw)

        bps, _ = _iperf(run, popen, a, "10.232.0.2", b)
        return bps
    finally:
        for ns in (a, b):
            subprocess.run(["ip", "netns", "del", ns], capture_output=True)


def main() -> int:
    from rantcp import emulation

    why = emulation.why_not() or (None if shutil.which("iperf3") else "iperf3 not installed (make system-deps)")
    if why:
        print(f"emulation bench: skipped: {why}")
        return 0
    print(f"\nReal-time emulation (iperf3 CUBIC, {SECONDS} s after {OMIT} s omitted; sustained = >= 90 % of the "
          "payload rate, 0 emulator drops, p99 model and delivery lateness < 1 ms)")
    print(f"{'case':<52} {'Gbit/s':>7} {'% rate':>7} {'drops':>5} {'p99 us':>7} {'max us':>8} {'dlv p99':>8} "
          f"{'CPU':>4} {'veth+tbf':>8} {'ratio':>5}  sustained")
    best = {m[0]: 0.0 for m in MODES}

    def ok(e: dict[str, Any]) -> bool:
        return bool(e["drops"] == 0 and e["p99_us"] < 1000 and e["deliv_p99_us"] < 1000)

    for g in RATES_GBPS:
        rate = g * 1e9
        ov = {"bottleneck.rate": f"{int(rate)}bps", "access.rate": "10Gbps"}
        v = veth_tbf(rate)
        for mode, off, mod in MODES:
            e = emulated("builtin:p2p-bulk", ov, "sender", "receiver", off, mod)
            frac = e["bps"] / (rate * PAYLOAD)
            sustained = frac >= 0.9 and ok(e)
            if sustained:
                best[mode] = max(best[mode], e["bps"])
            label = f"p2p-bulk at {g:g} Gbit/s, {mode}"
            print(f"{label:<52} {e['bps'] / 1e9:7.3f} {100 * frac:6.1f}% {e['drops']:>5} {e['p99_us']:7.0f} "
                  f"{e['max_us']:8.0f} {e['deliv_p99_us']:8.0f} {100 * e['cpu']:3.0f}% {v / 1e9:8.3f} "
                  f"{e['bps'] / v:5.2f}  {'yes' if sustained else 'no'}", flush=True)
    _, off, mod = MODES[-1]
    mm = emulated("builtin:mmwave-blockage", {"ue.los_duration": "1000s", "ue.nlos_duration": "0s",
                                              "core.server_rate": "10Gbps"}, "server", "ue1", off, mod)
    label = f"mmwave-blockage in LOS, {MODES[-1][0]}"
    print(f"{label:<52} {mm['bps'] / 1e9:7.3f} {'radio':>7} {mm['drops']:>5} {mm['p99_us']:7.0f} {mm['max_us']:8.0f} "
          f"{mm['deliv_p99_us']:8.0f} {100 * mm['cpu']:3.0f}% {'':>8} {'':>5}  {'yes' if ok(mm) else 'no'}")
    print("highest sustained p2p goodput: " + ", ".join(f"{m}: {b / 1e9:.3f} Gbit/s" for m, b in best.items())
          + " (target >= 1 Gbit/s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
