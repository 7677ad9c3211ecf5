"""The kernel's TCP against rantcp's, side by side on the same scenarios (issue 17).

    sudo .venv/bin/python -m rantcp._emu_fidelity [--seconds 20] [--repeats 3] [--only lte]
        [--cc cubic] [--offload] [--sack off] [--out fidelity.json]
    .venv/bin/python -m rantcp._emu_fidelity --from a.json b.json    # the table of saved runs

For each case (p2p-bulk at loss 0, 1e-4, 1e-3; lte-cell with 1 UE; mmwave-blockage) and each
congestion control (Linux reno, cubic, bbr against rantcp's NewReno, CUBIC, BBR), `--repeats`
times (repeat i uses seed i on both sides: the model's randomness in the emulation, the whole
run in simulation):

* emulated: `rantcp emulate` of the scenario, iperf3 (Debian) sending from the data sender's
  namespace (p2p-bulk's sender, a RAN scenario's server) to the receiver's for `--seconds`;
* simulated: the same scenario with rantcp's TCP on its Linux stack profile (`flow.stack =
  "linux"`: classic HyStart, RACK-TLP, PRR, quick-ACKs, 40 ms delayed-ACK timeout, 200 ms minimum
  RTO, Linux's cwnd and RTO rules; also where the scenario's own profile is "rfc"), its flow
  starting when iperf3's data connection sent its SYN in the emulation (the radio's blockage
  schedule is aligned; iperf3 first opens its control connection and exchanges the test's
  parameters: the SYN came 95–175 ms after iperf3's launch on mmwave-blockage and p2p-bulk,
  210–310 ms on lte-cell) and lasting `--seconds`.

Goodput has one definition on both sides (`rantcp.trace.rtt.capture_goodput`, summary.json's):
the in-order bytes that reached the receiver's interface in the model over the `--seconds` from
the transfer's SYN at the sender's interface; on rantcp's side it equals summary.json's figure to
the byte. iperf3's received rate (kept in the JSON, `goodput_iperf3_mbps`) is not that: the
server divides what it read by its own time up to the end of test on the control connection, and
that message waits behind the radio: on mmwave-blockage a 10 s test ends inside a blockage
(line of sight 2 s, blocked 2 s, from 0 s), the end of test got through after it, and the
server's time was 11.2–11.35 s: 11–12 % low.

RTT and retransmissions come from one definition on both sides: both runs capture the data
sender's interface in the model (`output.pcap`; in the emulation the packets the sender's
kernel hands the TUN device enter the model there) and `rantcp.trace.rtt.capture_rtt` computes
them from that pcap with the trace analyser: the mean of the data→ACK samples of the transfer's
session (Karn's rule), and the segments flagged as retransmissions. (iperf3's own RTT, the mean
of one smoothed RTT per interval from tcp_info, and rantcp's mean of every RTT sample, which
counts timestamp samples during recovery, are kept in the JSON only: they are not comparable.)

The data receiver's ACKs: the kernel sender's `TcpInSegs` against rantcp's
`receiver_segments_sent`, and from a capture of the receiver's own interface in the model on both
sides (`ue1-radio0`), its ACKs over the transfer's first `--seconds` (`capture_acks`: TcpInSegs
also counts the ACKs of what a deep RLC queue held when iperf3 stopped). `--offload` delivers a
burst to the receiving kernel batched, as GRO would merge it (one write per super-segment), not
one write per packet.

The end of the first slow start, per run: the kernel's from `nstat` in the sender's namespace
(a new namespace per run, so its counters start at 0): `TcpExtTCPHystart{Train,Delay}Detect`
and `…Cwnd` (tcp_cubic.c adds the cwnd in segments at each detection), and the first ssthresh
`ss -ti` shows (polled every 20 ms: HyStart sets ssthresh = cwnd, a loss β·cwnd, BBR its
in-flight target on entering DRAIN); rantcp's from summary.json (`slow_start_exit_cause`,
`slow_start_exit_cwnd_segments`) and the first ssthresh of its flows time series.

The kernel is set to rantcp's where it can be (`kernel_sysctls`, in both namespaces, read back
after setting): `tcp_rmem` / `tcp_wmem` max = the scenario's own `flow.rcv_buf` / `flow.snd_buf`
from its resolved config (`rantcp.validate`, same overrides: 6 MB on mmwave-blockage, the 6 MiB
default on p2p-bulk and lte-cell), the cap of Linux's buffer autotuning (tcp_rcv_space_adjust),
so the kernel advertises rcv_buf × scaling_ratio / 256 (tcp_win_from_space; 160/256 here) as
rantcp's linux profile advertises rcv_buf × `flow.rcv_win_ratio` (0.625); the rest is
`KERNEL_SYSCTLS`, and `tcp_sack` from `flow.sack` (`--sack off` sets it false on both sides and
marks the cases ", SACK off"). MSS 1448 follows from the TUN device's 1500-byte MTU with timestamps. Prints Markdown
tables (the README's): per case and controller the mean and range over the repeats of each
side, the ratio of the means (kernel / rantcp), and the slow-start exits run by run.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
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
    # net.ipv4.tcp_rmem / tcp_wmem come from the scenario's own flow.rcv_buf / snd_buf, per case
    # (`kernel_sysctls`), so the two sides cannot drift apart.
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
TCP_RMEM_MIN_DEFAULT = (4096, 131072)
TCP_WMEM_MIN_DEFAULT = (4096, 16384)
"""Linux's own tcp_rmem / tcp_wmem min and initial (Documentation/networking/ip-sysctl.rst); only
the max is the scenario's."""

def config_bytes(value: int | str) -> int:
    """A config size (`Bytes` as the resolved config writes it: "6MB", "6MiB", 1500) in bytes,
    parsed by the config's own rule (crates/config/src/units.rs `Bytes::parse`, through the
    native module): kB = 1000, KiB = 1024, rounded."""
    if isinstance(value, int):
        return value
    from rantcp._native import parse_bytes

    return int(parse_bytes(str(value)))


def kernel_sysctls(config: dict[str, Any]) -> dict[str, str]:
    """The sysctls of both namespaces for a scenario's resolved config (`rantcp.validate`): the
    socket buffers' max is the scenario's `flow.rcv_buf` / `flow.snd_buf`, the cap of the kernel's
    autotuning (tcp_input.c, tcp_rcv_space_adjust and tcp_clamp_window: sk_rcvbuf ≤ tcp_rmem[2];
    tcp_sndbuf_expand: sk_sndbuf ≤ tcp_wmem[2]); its advertised window is then that × scaling_ratio
    / 256 (tcp_win_from_space), as rantcp's linux profile offers rcv_buf × flow.rcv_win_ratio."""
    flow = config["flow"]
    rcv, snd = config_bytes(flow["rcv_buf"]), config_bytes(flow["snd_buf"])
    rmin, rdef = TCP_RMEM_MIN_DEFAULT
    wmin, wdef = TCP_WMEM_MIN_DEFAULT
    return {
        "net.ipv4.tcp_rmem": f"{min(rmin, rcv)} {min(rdef, rcv)} {rcv}",
        "net.ipv4.tcp_wmem": f"{min(wmin, snd)} {min(wdef, snd)} {snd}",
        # `flow.sack` (both namespaces: neither side offers SACK when off)
        "net.ipv4.tcp_sack": "1" if flow["sack"] else "0",
        **KERNEL_SYSCTLS,
    }


def set_sysctls(emu: Any, host: str, sysctls: dict[str, str]) -> dict[str, str]:
    """Set `sysctls` in `host`'s namespace and read them back; raises if one did not take."""
    emu.run(host, ["sysctl", "-q", "-w", *(f"{k}={v}" for k, v in sysctls.items())], check=True)
    r = emu.run(host, ["sysctl", "-n", *sysctls], capture_output=True, text=True, check=True)
    got = dict(zip(sysctls, (" ".join(line.split()) for line in r.stdout.splitlines())))
    for k, v in sysctls.items():
        if got.get(k) != v:
            raise RuntimeError(f"{host}: {k} is {got.get(k)!r} after setting {v!r}")
    return got


NOT_MATCHED = [
    "delayed ACKs: Linux's adaptive ATO (40 ms floor, grows with the RTT); rantcp a fixed 40 ms",
    "quick-ACK mode: rantcp enters it as Linux at the start, on a retransmission below RCV.NXT, "
    "at the window's edge and after a receive gap longer than the RTO; Linux's other quick ACKs "
    "(tcp_grow_window raising rcv_ssthresh, ECN CE) are not modelled",
    "BBR: Linux tcp_bbr.c (v1) as shipped in this kernel; rantcp's BBR v1 port",
    "TCP small queues, TSO autosizing and the advertised window's share of tcp_rmem (Linux only)",
    "send buffer autotuning (tcp_sndbuf_expand): the kernel sender pushes (PSH) every 4-8 segments, "
    "rantcp's only at the end of what was written, so Linux's ACK of a pushed segment at the read "
    "(modelled) seldom fires in rantcp's bulk flows",
]
SIM_STACK = {"flow.stack": "linux"}
"""rantcp's side runs its Linux profile everywhere (the kernel is the reference here)."""
SACK_OFF = ", SACK off"
"""Appended to a case's label for the runs with `--sack off`."""


def case_overrides(ov: dict[str, Any], sack: bool) -> dict[str, Any]:
    """A case's overrides on both sides, with `flow.sack = false` for `--sack off` (rantcp's
    `flow.sack`, the kernel's `net.ipv4.tcp_sack` through `kernel_sysctls`)."""
    return ov if sack else {**ov, "flow.sack": False}


SS_POLL_S = 0.02
"""How often the kernel's ssthresh is polled with `ss -ti` until it is first set."""
HYSTART_COUNTERS = ("TcpExtTCPHystartTrainDetect", "TcpExtTCPHystartTrainCwnd",
                    "TcpExtTCPHystartDelayDetect", "TcpExtTCPHystartDelayCwnd")


def capture_iface(sender: str) -> str:
    """The interface of the data sender's node in the model (both scenarios name it so)."""
    return f"{sender}-eth0"


def receiver_iface(receiver: str) -> str:
    """The interface of the data receiver's node in the model: a UE's radio, a host's eth0."""
    return f"{receiver}-radio0" if receiver.startswith("ue") else f"{receiver}-eth0"


def parse_nstat(text: str) -> dict[str, int]:
    """`nstat -a` output as {counter: value}."""
    out = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) >= 2 and parts[0].startswith(("Tcp", "Ip", "Udp")) and parts[1].isdigit():
            out[parts[0]] = int(parts[1])
    return out


def kernel_hystart(counters: dict[str, int]) -> dict[str, Any]:
    """The kernel's HyStart exits from its namespace's counters: detections per detector and the
    mean cwnd (segments) at them. tcp_cubic.c adds the cwnd to `…Cwnd` at every detection, so
    with one detection it is that exit's cwnd; 0 detections mean slow start ended otherwise (a
    loss) or not at all."""
    train, train_cwnd = counters.get(HYSTART_COUNTERS[0], 0), counters.get(HYSTART_COUNTERS[1], 0)
    delay, delay_cwnd = counters.get(HYSTART_COUNTERS[2], 0), counters.get(HYSTART_COUNTERS[3], 0)
    cause, cwnd = None, None
    if train and not delay:
        cause, cwnd = "hystart-train", train_cwnd / train
    elif delay and not train:
        cause, cwnd = "hystart-delay", delay_cwnd / delay
    elif train and delay:
        cause, cwnd = "hystart-train+delay", (train_cwnd + delay_cwnd) / (train + delay)
    return {"train_detect": train, "train_cwnd": train_cwnd, "delay_detect": delay, "delay_cwnd": delay_cwnd,
            "cause": cause, "cwnd_segments": cwnd}


_SS_CWND = re.compile(r"\bcwnd:(\d+)")
_SS_SSTHRESH = re.compile(r"\bssthresh:(\d+)")


def parse_ss(text: str) -> list[tuple[int, int | None]]:
    """(cwnd, ssthresh or None) of every socket in `ss -ti` output (ss prints ssthresh only once
    the kernel has set it below infinity)."""
    out = []
    for line in text.splitlines():
        c = _SS_CWND.search(line)
        if c:
            s = _SS_SSTHRESH.search(line)
            out.append((int(c.group(1)), int(s.group(1)) if s else None))
    return out


class SsthreshWatch(threading.Thread):
    """Polls `ss -ti` (a command line, run in the sender's namespace) until a socket shows an
    ssthresh: the first one, its cwnd and when, seconds after `start`."""

    def __init__(self, argv: list[str], limit_s: float) -> None:
        super().__init__(daemon=True)
        self.argv, self.limit_s = argv, limit_s
        self.first: dict[str, float] | None = None
        self.polls = 0
        self._stop_ev = threading.Event()

    def run(self) -> None:
        t0 = time.monotonic()
        while not self._stop_ev.is_set() and time.monotonic() - t0 < self.limit_s:
            try:
                r = subprocess.run(self.argv, capture_output=True, text=True, timeout=5)
            except subprocess.TimeoutExpired:
                continue
            self.polls += 1
            for cwnd, ss in parse_ss(r.stdout):
                if ss is not None:
                    self.first = {"t_s": time.monotonic() - t0, "cwnd": cwnd, "ssthresh": ss}
                    return
            self._stop_ev.wait(SS_POLL_S)

    def stop(self) -> None:
        self._stop_ev.set()


def iperf3_client(rcv: str, seconds: int, cc: str, blksize: str | None = None) -> list[str]:
    """iperf3's client command line. `blksize` is its `-l`: the client's write size and the
    server's read size (iperf3's default for TCP: 128 KB). After a blockage the RLC hands the UE
    ~1 MB at once; a 128 KB read that finds it all queued makes Linux ACK it with the window of
    what is still unread (`tcp_cleanup_rbuf`), which a reader of 1 MB does not (README, "Goodput:
    one definition")."""
    return ["iperf3", "-c", rcv, "-t", str(seconds), "-C", cc, "-J", *(["-l", blksize] if blksize else [])]


def emulated(scenario: str, ov: dict[str, Any], snd: str, rcv: str, cc: str, seconds: int, seed: int,
             work: Path, offload: bool = False, blksize: str | None = None) -> dict[str, Any]:
    from rantcp.trace.rtt import capture_acks, capture_goodput, capture_rtt

    iface = capture_iface(snd)
    out = work / "emulated"
    sysctls = kernel_sysctls(rantcp.validate(scenario, overrides=ov, seed=seed))
    with emulation.emulate(scenario, overrides={**ov, "output.pcap": [iface, receiver_iface(rcv)]}, seed=seed,
                           out=out, duration=f"{seconds + 30}s", offload=offload) as emu:
        for host in (snd, rcv):
            set_sysctls(emu, host, sysctls)
        server = emu.popen(rcv, ["iperf3", "-s", "-1"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(0.5)
        watch = SsthreshWatch(emu.command(snd, ["ss", "-tinH", "state", "established"]), limit_s=min(seconds, 10))
        launched_s = emu.now_s
        watch.start()
        r = emu.run(snd, iperf3_client(rcv, seconds, cc, blksize), capture_output=True, text=True,
                    timeout=seconds + 60)
        watch.stop()
        watch.join(timeout=10)
        ns = emu.run(snd, ["nstat", "-saz"], capture_output=True, text=True, timeout=30)
        server.wait(timeout=10)
    load1 = os.getloadavg()[0]
    if r.returncode != 0:
        raise RuntimeError(f"iperf3 failed: {r.stdout[-500:]} {r.stderr[-500:]}")
    (work / "iperf3.json").write_text(r.stdout)
    j = json.loads(r.stdout)
    end = j["end"]
    counters = parse_nstat(ns.stdout)
    health = emu.summary["emulation"] if emu.summary else {}
    lateness = health.get("model_lateness", {})
    goodput = capture_goodput(out / "pcap" / f"{iface}.pcap", out / "pcap" / f"{receiver_iface(rcv)}.pcap", seconds)
    received = end["sum_received"]
    return {
        # in-order bytes at the receiver over the data connection's first `seconds` (from its SYN at
        # the sender's interface): rantcp's definition, on the same captures as rantcp's side
        "goodput_mbps": goodput["mbps"],
        "goodput_bytes": goodput["bytes"],
        # iperf3's received rate, for reference: what the server read, over the server's own time
        # up to the end of test on the control connection (which waits behind a deep RLC queue)
        "goodput_iperf3_mbps": received["bits_per_second"] / 1e6,
        "iperf3_received": {"bytes": received["bytes"], "seconds": received["seconds"]},
        "rtt": capture_rtt(out / "pcap" / f"{iface}.pcap"),
        "receiver_acks": capture_acks(out / "pcap" / f"{receiver_iface(rcv)}.pcap", seconds),
        "rtt_iperf3_ms": end["streams"][0]["sender"]["mean_rtt"] / 1e3,
        "retransmits_iperf3": end["sum_sent"].get("retransmits", 0),
        "hystart": kernel_hystart(counters),
        # The sender namespace's TCP counters (timeouts, undos, SACK, HyStart…), the non-zero ones.
        "nstat": {k: v for k, v in counters.items() if v and k.startswith(("Tcp", "TcpExt"))},
        # polled from iperf3's launch: its time after the data connection's SYN, as rantcp's
        "first_ssthresh": {**watch.first, "t_s": watch.first["t_s"] - (goodput["start_s"] - launched_s)}
        if watch.first else None,
        "ss_polls": watch.polls,
        # the data connection's SYN at the sender's interface, model time: rantcp's flow starts then
        "start_s": goodput["start_s"],
        # when iperf3 was launched (its control connection first, then the data connection)
        "iperf3_launched_s": launched_s,
        "emulator_drops": health.get("emulator_drops", -1),
        "lateness_p99_us": lateness.get("p99_us", -1),
        "lateness_max_us": lateness.get("max_us", -1),
        "load1": load1,
        "sysctls": sysctls,  # read back in both namespaces after setting
    }


def simulated(scenario: str, ov: dict[str, Any], snd: str, rcv: str, cc: str, start_s: float, seconds: int, seed: int,
              work: Path) -> dict[str, Any]:
    from rantcp.trace.rtt import capture_acks, capture_goodput, capture_rtt

    iface = capture_iface(snd)
    start = round(start_s, 6)
    pcaps = work / "simulated" / "pcap"
    r = rantcp.run(scenario, seed=seed, out=work / "simulated",
                   overrides={**ov, **SIM_STACK, "flow.cc": cc, "flow.start": f"{start:.6f}s",
                              "duration": f"{start + seconds:.6f}s",
                              "output.pcap": [iface, receiver_iface(rcv)]})
    f = r.summary["flows"][0]
    mss = int(r.summary["config"]["flow"]["mss"])
    first_ss = None
    fl = r.flows
    ss = fl[fl["ssthresh_bytes"].notna()]
    if len(ss):
        first_ss = {"t_s": float(ss["time_s"].iloc[0]) - start, "ssthresh": float(ss["ssthresh_bytes"].iloc[0]) / mss}
    # The capture's goodput (the kernel's definition: the transfer's first `seconds` from its SYN at
    # the sender's interface) is summary.json's (over [flow start, end of run]), computed as on the
    # kernel's side.
    goodput = capture_goodput(pcaps / f"{iface}.pcap", pcaps / f"{receiver_iface(rcv)}.pcap", seconds)
    return {
        "goodput_mbps": goodput["mbps"],
        "goodput_bytes": goodput["bytes"],
        "goodput_summary_mbps": f["goodput_mbps"],
        "start_s": start,
        "rtt": capture_rtt(pcaps / f"{iface}.pcap"),
        "rtt_summary_ms": f.get("rtt_mean_ms"),
        "retransmits_summary": f.get("retransmitted_segments", 0),
        # segments the receiver sent (its ACKs), against the kernel sender's nstat TcpInSegs
        "receiver_segments_sent": f.get("receiver_segments_sent"),
        # the same count from the receiver's capture, in the transfer's first `seconds` (both sides)
        "receiver_acks": capture_acks(pcaps / f"{receiver_iface(rcv)}.pcap", seconds),
        "undo": {k: f.get(k, 0) for k in SIM_UNDO},
        "exit_cause": f.get("slow_start_exit_cause"),
        "exit_cwnd_segments": f.get("slow_start_exit_cwnd_segments"),
        "exit_s": f.get("slow_start_exit_s"),
        "first_ssthresh": first_ss,
    }


# The kernel's undo and D-SACK counters (nstat, tcp_input.c's MIBs) and rantcp's summary.json
# counterparts, in the same order.
KERNEL_UNDO = ("TcpExtTCPTimeouts", "TcpExtTCPLossUndo", "TcpExtTCPSpuriousRTOs", "TcpExtTCPFullUndo",
               "TcpExtTCPPartialUndo", "TcpExtTCPDSACKUndo", "TcpExtTCPDSACKRecv", "TcpExtTCPSackRecovery")
SIM_UNDO = ("rtos", "rto_undos", "spurious_rtos", "full_undos", "partial_undos", "dsack_undos",
            "dsacks_received", "fast_retransmits")
UNDO_NAMES = ("timeouts", "loss undo", "spurious RTOs (F-RTO)", "full undo", "partial undo", "D-SACK undo",
              "D-SACKs received", "fast recoveries")


def undo_table(rows: list[dict[str, Any]]) -> str:
    """Per case and controller, the mean per run of each undo / D-SACK counter, kernel / rantcp
    (rantcp's only where the saved run has them: runs simulated before the counters existed have
    none)."""
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for r in rows:
        groups.setdefault((r["case"], r["kernel_cc"]), []).append(r)
    lines = ["| case | cc | " + " | ".join(UNDO_NAMES) + " |", "|---|---|" + "---:|" * len(UNDO_NAMES)]
    for (case, kcc), rs in groups.items():
        cells = []
        for k, s in zip(KERNEL_UNDO, SIM_UNDO):
            # A connection without SACK counts its fast recoveries as TCPRenoRecovery instead.
            ks = (k, "TcpExtTCPRenoRecovery") if k == "TcpExtTCPSackRecovery" else (k,)
            kv = sum(r["emulated"].get("nstat", {}).get(x, 0) for r in rs for x in ks) / len(rs)
            sims = [r["simulated"]["undo"][s] for r in rs if "undo" in r["simulated"]]
            sv = f"{sum(sims) / len(sims):.1f}" if sims else "–"
            cells.append(f"{kv:.1f} / {sv}")
        lines.append(f"| {case} | {kcc} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n\nUndo and D-SACK counters, mean per run, kernel (nstat) / rantcp (summary.json)."


def ack_table(rows: list[dict[str, Any]]) -> str:
    """Per case, controller and delivery, the data receiver's ACKs, mean per run: the kernel
    sender's TcpInSegs against rantcp's `receiver_segments_sent`, and (runs with a receiver-side
    capture) segments per ACK in the transfer's first `seconds` on each side, with the ratio of
    ACKs per data segment, kernel / rantcp."""
    groups: dict[tuple[str, str, bool], list[dict[str, Any]]] = {}
    for r in rows:
        groups.setdefault((r["case"], r["kernel_cc"], bool(r.get("offload"))), []).append(r)
    lines = ["| case | cc | delivery | runs | kernel TcpInSegs / rantcp ACKs | ratio | segments per ACK, kernel / rantcp "
             "(receiver's capture) | ACKs per segment, ratio |", "|---|---|---|---:|---:|---:|---:|---:|"]
    for (case, kcc, off), rs in groups.items():
        ks = [r["emulated"].get("nstat", {}).get("TcpInSegs", 0) for r in rs]
        ss = [r["simulated"].get("receiver_segments_sent") or 0 for r in rs]
        k, sm = sum(ks) / len(rs), sum(ss) / len(rs)
        cap = [r for r in rs if r["emulated"].get("receiver_acks") and r["simulated"].get("receiver_acks")]
        if cap:
            ke = [r["emulated"]["receiver_acks"] for r in cap]
            se = [r["simulated"]["receiver_acks"] for r in cap]
            kspa = sum(x["data_segments"] for x in ke) / sum(x["acks"] for x in ke)
            sspa = sum(x["data_segments"] for x in se) / sum(x["acks"] for x in se)
            capcell = f"{kspa:.2f} / {sspa:.2f} | {_flag(sspa / kspa)}"
        else:
            capcell = "– | –"
        lines.append(f"| {case} | {kcc} | {'batched (--offload)' if off else 'one write per packet'} | {len(rs)} | "
                     f"{k:.0f} / {sm:.0f} | {_flag(k / sm) if sm else '–'} | {capcell} |")
    return "\n".join(lines) + ("\n\nThe data receiver's ACKs, mean per run. TcpInSegs also counts the ACKs of what a "
                               "deep RLC queue still held when the transfer's time ran out; the capture columns count "
                               "both sides over the transfer's first seconds.")


def merge_runs(files: list[list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """The runs of several saved files, in order; where a later file has runs of a case and kernel
    controller, they replace all of the earlier files' runs of that pair (a re-run replaces the
    old runs whole, even where it has fewer seeds)."""
    out: list[dict[str, Any]] = []
    for rows in files:
        new = {(r["case"], r["kernel_cc"]) for r in rows}
        out = [r for r in out if (r["case"], r["kernel_cc"]) not in new] + list(rows)
    return out


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="python -m rantcp._emu_fidelity")
    ap.add_argument("--seconds", type=int, default=20)
    ap.add_argument("--repeats", type=int, default=1, help="runs per case and controller on each side (seeds 1..N)")
    ap.add_argument("--first-seed", type=int, default=1)
    ap.add_argument("--out", help="also write every figure as JSON")
    ap.add_argument("--only", help="run the cases whose label contains this")
    ap.add_argument("--cc", help="only this kernel controller (reno, cubic, bbr)")
    ap.add_argument("--keep", help="keep each run's folders (pcaps) under this folder")
    ap.add_argument("--offload", action="store_true",
                    help="emulate with TCP offload on the TUN devices: a burst reaches the receiver as one "
                         "super-segment, as a modem driver's NAPI poll with GRO hands it over")
    ap.add_argument("--blksize", help="iperf3's -l (its write size, and the server's read size; default 128K): "
                                      "a reader that takes a whole post-blockage burst in one read")
    ap.add_argument("--sack", choices=("on", "off"), default="on",
                    help="off: SACK off on both sides (net.ipv4.tcp_sack = 0 in the namespaces, flow.sack = false)")
    ap.add_argument("--from", dest="sources", nargs="+",
                    help="print the tables of saved JSON files; run nothing (a later file's runs of a case and "
                         "controller replace an earlier file's)")
    ap.add_argument("--resimulate", action="store_true",
                    help="with --from: run rantcp's side of each saved run again (same seed and start), "
                         "keep the kernel's; write the result to --out")
    return ap


def main(argv: list[str] | None = None) -> int:
    ap = build_parser()
    args = ap.parse_args(argv)
    if args.sources:
        rows = merge_runs([json.loads(Path(src).read_text()) for src in args.sources])
        if args.resimulate:
            by_label = {c[0]: c for c in CASES}
            for r in rows:
                _, scenario, ov, snd, rcv = by_label[r["case"].removesuffix(SACK_OFF)]
                ov = case_overrides(ov, r.get("sack", True))
                with tempfile.TemporaryDirectory(prefix="rantcp-fidelity-") as tmp:
                    r["simulated"] = simulated(scenario, ov, snd, rcv, r["rantcp_cc"], r["emulated"]["start_s"],
                                               r.get("seconds", args.seconds), r["seed"], Path(tmp))
            if args.out:
                Path(args.out).write_text(json.dumps(rows, indent=2))
        print(tables(rows))
        return 0
    if args.repeats < 1:
        ap.error("--repeats: at least 1")
    why = emulation.why_not()
    if why:
        print(f"fidelity: skipped: {why}", file=sys.stderr)
        return 0
    rows = []
    sack = args.sack == "on"
    for label, scenario, ov, snd, rcv in CASES:
        if args.only and args.only not in label:
            continue
        ov = case_overrides(ov, sack)
        label = label if sack else label + SACK_OFF
        for kcc, rcc in CCS:
            if args.cc and args.cc != kcc:
                continue
            for i in range(args.repeats):
                seed = args.first_seed + i
                with tempfile.TemporaryDirectory(prefix="rantcp-fidelity-") as tmp:
                    work = Path(args.keep) / f"{label.replace(' ', '').replace(',', '_')}-{kcc}-{seed}" \
                        if args.keep else Path(tmp)
                    work.mkdir(parents=True, exist_ok=True)
                    e = emulated(scenario, ov, snd, rcv, kcc, args.seconds, seed, work, offload=args.offload,
                                 blksize=args.blksize)
                    s = simulated(scenario, ov, snd, rcv, rcc, e["start_s"], args.seconds, seed, work)
                row = {"case": label, "kernel_cc": kcc, "rantcp_cc": rcc, "seed": seed, "seconds": args.seconds,
                       "offload": args.offload, "blksize": args.blksize, "sack": sack, "emulated": e,
                       "simulated": s}
                rows.append(row)
                print(f"{label:<20} {kcc:<5} seed {seed}: kernel {e['goodput_mbps']:7.2f} Mbit/s "
                      f"{e['rtt']['mean_ms']:7.1f} ms {exit_text_kernel(e)} | rantcp {s['goodput_mbps']:7.2f} Mbit/s "
                      f"{s['rtt']['mean_ms']:7.1f} ms {exit_text_rantcp(s)} | drops {e['emulator_drops']} "
                      f"p99 {e['lateness_p99_us']} us load {e['load1']:.1f}", file=sys.stderr, flush=True)
                if args.out:  # after every run: an interrupted sweep keeps what it did
                    Path(args.out).write_text(json.dumps(rows, indent=2))
    print(tables(rows))
    return 0


# -- tables ------------------------------------------------------------------------------------


def _stats(xs: list[float]) -> tuple[float, float, float]:
    return sum(xs) / len(xs), min(xs), max(xs)


def _fmt(xs: list[float], nd: int) -> str:
    m, lo, hi = _stats(xs)
    if len(xs) == 1:
        return f"{m:.{nd}f}"
    return f"{m:.{nd}f} ({lo:.{nd}f}–{hi:.{nd}f})"


def _flag(x: float) -> str:
    return f"**{x:.2f}**" if abs(x - 1) > 0.2 else f"{x:.2f}"


def _overlap(a: list[float], b: list[float]) -> str:
    if len(a) < 2 or len(b) < 2:
        return "–"
    return "yes" if max(min(a), min(b)) <= min(max(a), max(b)) else "no"


def exit_text_kernel(e: dict[str, Any]) -> str:
    h = e["hystart"]
    parts = []
    if h["cause"]:
        n = h["train_detect"] + h["delay_detect"]
        parts.append(f"{h['cause']} @ {h['cwnd_segments']:.0f}" + (f" ({n} exits)" if n > 1 else ""))
    else:
        parts.append("no HyStart exit")
    fs = e.get("first_ssthresh")
    parts.append(f"ssthresh {fs['ssthresh']} at {fs['t_s']:.2f} s" if fs else "no ssthresh seen")  # t: after the SYN
    return "; ".join(parts)


def exit_text_rantcp(s: dict[str, Any]) -> str:
    parts = []
    if s["exit_cause"]:
        parts.append(f"{s['exit_cause']} @ {s['exit_cwnd_segments']:.0f} at {s['exit_s']:.2f} s")
    else:
        parts.append("still in slow start")
    fs = s.get("first_ssthresh")
    parts.append(f"ssthresh {fs['ssthresh']:.0f}" if fs else "no ssthresh")
    return "; ".join(parts)


def tables(rows: list[dict[str, Any]]) -> str:
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for r in rows:
        groups.setdefault((r["case"], r["kernel_cc"]), []).append(r)
    lines = [
        "| case | Linux cc / rantcp cc | runs | kernel goodput Mbit/s | rantcp goodput Mbit/s | ratio | kernel RTT ms | "
        "rantcp RTT ms | ratio | ranges overlap (goodput / RTT) | kernel / rantcp retx |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---|---:|",
    ]
    for (case, kcc), rs in groups.items():
        kg = [r["emulated"]["goodput_mbps"] for r in rs]
        sg = [r["simulated"]["goodput_mbps"] for r in rs]
        kr = [r["emulated"]["rtt"]["mean_ms"] for r in rs]
        sr = [r["simulated"]["rtt"]["mean_ms"] for r in rs]
        kx = [r["emulated"]["rtt"]["resent_segments"] for r in rs]
        sx = [r["simulated"]["rtt"]["resent_segments"] for r in rs]
        g = _stats(kg)[0] / _stats(sg)[0] if _stats(sg)[0] else float("nan")
        t = _stats(kr)[0] / _stats(sr)[0] if _stats(sr)[0] else float("nan")
        lines.append(
            f"| {case} | {kcc} / {rs[0]['rantcp_cc']} | {len(rs)} | {_fmt(kg, 2)} | {_fmt(sg, 2)} | {_flag(g)} | "
            f"{_fmt(kr, 1)} | {_fmt(sr, 1)} | {_flag(t)} | {_overlap(kg, sg)} / {_overlap(kr, sr)} | "
            f"{_stats(kx)[0]:.0f} / {_stats(sx)[0]:.0f} |"
        )
    secs = sorted({r.get("seconds", 0) for r in rows})
    out = "\n".join(lines) + (
        f"\n\n{'/'.join(str(s) for s in secs)} s transfers; mean (min–max) over the runs; ratios kernel / rantcp of "
        "the means, beyond ±20 % in bold; goodput, RTT and retransmissions from the model's captures (same code both "
        "sides)."
    )
    blk = sorted({r["blksize"] for r in rows if r.get("blksize")})
    if blk:
        n = sum(bool(r.get("blksize")) for r in rows)
        out += (f" iperf3 block size (-l, the server's read size): {', '.join(blk)} in {n} of the {len(rows)} runs, "
                "128K in the rest.")
    old = sum("goodput_iperf3_mbps" not in r["emulated"] for r in rows)
    if old:
        out += (f" {old} of the {len(rows)} runs were saved before goodput came from the captures: their kernel goodput is "
                "iperf3's received rate and rantcp's flow started when iperf3 was launched, not at its data SYN.")
    ex = ["| case | cc | seed | kernel: HyStart exit @ cwnd; first ssthresh (ss) | rantcp: first exit @ cwnd; first ssthresh |",
          "|---|---|---:|---|---|"]
    for r in rows:
        ex.append(f"| {r['case']} | {r['kernel_cc']} | {r['seed']} | {exit_text_kernel(r['emulated'])} | "
                  f"{exit_text_rantcp(r['simulated'])} |")
    health = [r["emulated"] for r in rows]
    hl = (f"Emulation health over {len(rows)} runs: model lateness p99 ≤ {max(h['lateness_p99_us'] for h in health):.0f} µs "
          f"(max {max(h['lateness_max_us'] for h in health):.0f} µs), emulator drops {sum(h['emulator_drops'] for h in health)}, "
          f"load average {min(h['load1'] for h in health):.1f}–{max(h['load1'] for h in health):.1f}.") if health else ""
    return out + "\n\n" + undo_table(rows) + "\n\n" + ack_table(rows) + "\n\n" + "\n".join(ex) + "\n\n" + hl


if __name__ == "__main__":
    raise SystemExit(main())
