"""The kernel's TCP against rantcp's, side by side on the same scenarios (issue 17).

    sudo .venv/bin/python -m rantcp._emu_fidelity [--seconds 20] [--out fidelity.json]

For each case (p2p-bulk at loss 0, 1e-4, 1e-3; lte-cell with 1 UE; mmwave-blockage) and each
congestion control (Linux reno, cubic, bbr against rantcp's NewReno, CUBIC, BBR):

* emulated: `rantcp emulate` of the scenario, iperf3 (Debian) sending from the data sender's
  namespace (p2p-bulk's sender, a RAN scenario's server) to the receiver's for `--seconds`;
  goodput is iperf3's received rate, the RTT its sender's mean smoothed RTT (tcp_info);
* simulated: the same scenario with rantcp's TCP on its Linux stack profile (`flow.stack =
  "linux"`: classic HyStart, RACK-TLP, PRR, quick-ACKs, 40 ms delayed-ACK timeout, 200 ms minimum
  RTO, Linux's cwnd and RTO rules; also where the scenario's own profile is "rfc"), its flow
  starting when iperf3's did in the emulation (the radio's blockage schedule is aligned) and
  lasting as long; goodput and the sender's mean RTT sample from summary.json.

The kernel is set to rantcp's defaults where it can be (below: `KERNEL_SYSCTLS`): 6 MB socket
buffers; MSS 1448 follows from the TUN device's 1500-byte MTU with timestamps. Prints a Markdown
table (the README's) with the ratio emulated / simulated for each figure.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from typing import Any

import rantcp
from rantcp import emulation

CASES: list[tuple[str, str, dict[str, Any], str, str]] = [
    # (label, scenario, overrides, data sender, data receiver)
    ("p2p-bulk, loss 0", "builtin:p2p-bulk", {}, "sender", "receiver"),
    ("p2p-bulk, loss 1e-4", "builtin:p2p-bulk", {"bottleneck.loss": 1e-4}, "sender", "receiver"),
    ("p2p-bulk, loss 1e-3", "builtin:p2p-bulk", {"bottleneck.loss": 1e-3}, "sender", "receiver"),
    ("lte-cell, 1 UE", "builtin:lte-cell", {"ues": 1}, "server", "ue1"),
    ("mmwave-blockage", "builtin:mmwave-blockage", {}, "server", "ue1"),
]
CCS = [("reno", "newreno"), ("cubic", "cubic"), ("bbr", "bbr")]
KERNEL_SYSCTLS = {
    # rantcp's rcv_buf / snd_buf default (6 MB) bounds the windows: the kernel's autotuning
    # may grow its buffers up to the same.
    "net.ipv4.tcp_rmem": "4096 131072 6291456",
    "net.ipv4.tcp_wmem": "4096 16384 6291456",
    # Each run's namespaces are new, so no cached ssthresh/RTT from an earlier run anyway.
    "net.ipv4.tcp_no_metrics_save": "1",
    # iperf3 sets `-C` (TCP_CONGESTION) after connect(), so the socket first runs the namespace's
    # default controller, inherited from the host (bbr here). bbr_init marks the socket
    # SK_PACING_NEEDED and switching to cubic does not clear it (tcp_cong.c,
    # tcp_reinit_congestion_control): the kernel's CUBIC would then be paced by TCP itself and its
    # HyStart ACK-train threshold would be the whole delay_min instead of delay_min / 2
    # (tcp_cubic.c, hystart_update). reno as the default has no init, so the socket stays
    # SK_PACING_NONE like rantcp's unpaced CUBIC; `-C bbr` still initialises BBR (and its pacing).
    # A namespace may only pick a default from tcp_allowed_congestion_control ("reno bbr").
    "net.ipv4.tcp_congestion_control": "reno",
}
NOT_MATCHED = [
    "delayed ACKs: Linux's adaptive ATO (40 ms floor, grows with the RTT); rantcp a fixed 40 ms",
    "quick-ACK mode: Linux re-enters it after idle and on out-of-order data; rantcp only for the first 16 segments",
    "BBR: Linux tcp_bbr.c (v1) as shipped in this kernel; rantcp's BBR v1 port",
    "RTT: iperf3's mean of per-interval smoothed RTT (tcp_info) vs rantcp's mean of every RTT sample",
]
SIM_STACK = {"flow.stack": "linux"}
"""rantcp's side runs its Linux profile everywhere (the kernel is the reference here)."""


def emulated(scenario: str, ov: dict[str, Any], snd: str, rcv: str, cc: str, seconds: int) -> dict[str, float]:
    with emulation.emulate(scenario, overrides=ov, duration=f"{seconds + 30}s") as emu:
        for host in (snd, rcv):
            args = [f"{k}={v}" for k, v in KERNEL_SYSCTLS.items()]
            emu.run(host, ["sysctl", "-q", "-w", *args], check=True)
        server = emu.popen(rcv, ["iperf3", "-s", "-1"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(0.5)
        start_s = emu.now_s
        r = emu.run(snd, ["iperf3", "-c", rcv, "-t", str(seconds), "-C", cc, "-J"], capture_output=True, text=True,
                    timeout=seconds + 60)
        server.wait(timeout=10)
    if r.returncode != 0:
        raise RuntimeError(f"iperf3 failed: {r.stdout[-500:]} {r.stderr[-500:]}")
    j = json.loads(r.stdout)
    end = j["end"]
    health = emu.summary["emulation"] if emu.summary else {}
    return {
        "goodput_mbps": end["sum_received"]["bits_per_second"] / 1e6,
        "rtt_ms": end["streams"][0]["sender"]["mean_rtt"] / 1e3,
        "retransmits": end["sum_sent"].get("retransmits", 0),
        "start_s": start_s,
        "emulator_drops": health.get("emulator_drops", -1),
        "lateness_p99_us": health.get("model_lateness", {}).get("p99_us", -1),
    }


def simulated(scenario: str, ov: dict[str, Any], cc: str, start_s: float, seconds: int) -> dict[str, float]:
    start = round(start_s, 3)
    r = rantcp.run(scenario, overrides={**ov, **SIM_STACK, "flow.cc": cc, "flow.start": f"{start}s",
                                         "duration": f"{start + seconds:.3f}s"})
    f = r.summary["flows"][0]
    # goodput over [flow start, end of run] (summary.json's definition): the flow's `seconds`.
    return {"goodput_mbps": f["goodput_mbps"], "rtt_ms": f.get("rtt_mean_ms") or float("nan"),
            "retransmits": f.get("retransmitted_segments", 0)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m rantcp._emu_fidelity")
    ap.add_argument("--seconds", type=int, default=20)
    ap.add_argument("--out", help="also write every figure as JSON")
    ap.add_argument("--only", help="run the cases whose label contains this")
    args = ap.parse_args(argv)
    why = emulation.why_not()
    if why:
        print(f"fidelity: skipped: {why}", file=sys.stderr)
        return 0
    rows = []
    for label, scenario, ov, snd, rcv in CASES:
        if args.only and args.only not in label:
            continue
        for kcc, rcc in CCS:
            e = emulated(scenario, ov, snd, rcv, kcc, args.seconds)
            s = simulated(scenario, ov, rcc, e["start_s"], args.seconds)
            rows.append({"case": label, "kernel_cc": kcc, "rantcp_cc": rcc, "emulated": e, "simulated": s})
            print(f"{label:<22} {kcc:<6} kernel {e['goodput_mbps']:8.2f} Mbit/s {e['rtt_ms']:7.1f} ms | "
                  f"rantcp {s['goodput_mbps']:8.2f} Mbit/s {s['rtt_ms']:7.1f} ms | drops {e['emulator_drops']} "
                  f"p99 {e['lateness_p99_us']} us", file=sys.stderr, flush=True)
    print(table(rows, args.seconds))
    if args.out:
        with open(args.out, "w") as f:
            json.dump(rows, f, indent=2)
    return 0


def table(rows: list[dict[str, Any]], seconds: int) -> str:
    lines = [
        f"| case | Linux cc / rantcp cc | kernel goodput Mbit/s | rantcp goodput Mbit/s | ratio | kernel RTT ms | rantcp RTT ms | ratio | kernel / rantcp retx |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        e, s = r["emulated"], r["simulated"]
        g = e["goodput_mbps"] / s["goodput_mbps"] if s["goodput_mbps"] else float("nan")
        t = e["rtt_ms"] / s["rtt_ms"] if s["rtt_ms"] else float("nan")
        flag = lambda x: f"**{x:.2f}**" if abs(x - 1) > 0.2 else f"{x:.2f}"  # noqa: E731
        lines.append(
            f"| {r['case']} | {r['kernel_cc']} / {r['rantcp_cc']} | {e['goodput_mbps']:.2f} | {s['goodput_mbps']:.2f} | "
            f"{flag(g)} | {e['rtt_ms']:.1f} | {s['rtt_ms']:.1f} | {flag(t)} | {e['retransmits']} / {s['retransmits']} |"
        )
    return "\n".join(lines) + f"\n\n{seconds} s transfers; ratios beyond ±20 % in bold."


if __name__ == "__main__":
    raise SystemExit(main())
