"""The parts of `rantcp._emu_fidelity` (issue 17's kernel-vs-rantcp table) that need no root:
reading the kernel's HyStart counters and ss output, and the tables of saved runs. The
emulation itself needs root and is not in `make test`."""

from __future__ import annotations

import json
from pathlib import Path

from rantcp import _emu_fidelity as fid

NSTAT = """#kernel
TcpExtTCPHystartTrainDetect     1                  0.0
TcpExtTCPHystartTrainCwnd       247                0.0
TcpExtTCPHystartDelayDetect     0                  0.0
TcpExtTCPHystartDelayCwnd       0                  0.0
"""

SS = """ESTAB 0      0       10.0.0.1:40000 10.0.1.1:5201
\t cubic wscale:7,7 rto:204 rtt:40.5/0.3 ato:40 mss:1448 pmtu:1500 rcvmss:536 advmss:1448 cwnd:10 bytes_sent:200
ESTAB 0      3000000 10.0.0.1:40002 10.0.1.1:5201
\t cubic wscale:7,7 rto:240 rtt:60.1/2.1 mss:1448 pmtu:1500 rcvmss:536 advmss:1448 cwnd:231 ssthresh:231 bytes_sent:9000000
"""


def test_kernel_hystart_counters() -> None:
    h = fid.kernel_hystart(fid.parse_nstat(NSTAT))
    assert h["cause"] == "hystart-train" and h["cwnd_segments"] == 247 and h["train_detect"] == 1
    # Two detections (a timeout restarts HyStart): the mean cwnd, and both detectors named.
    two = fid.parse_nstat(NSTAT.replace("Detect     0", "Detect     1").replace("DelayCwnd       0", "DelayCwnd       53"))
    h2 = fid.kernel_hystart(two)
    assert h2["cause"] == "hystart-train+delay" and h2["cwnd_segments"] == 150
    # No detection: slow start ended otherwise (a loss) or not at all.
    assert fid.kernel_hystart(fid.parse_nstat(NSTAT.replace("Detect     1", "Detect     0")))["cause"] is None


def test_ss_ssthresh_only_once_set() -> None:
    assert fid.parse_ss(SS) == [(10, None), (231, 231)]
    assert fid.parse_ss("") == []


def _row(case: str, seed: int, kg: float, sg: float, kr: float, sr: float) -> dict:
    rtt = lambda m: {"mean_ms": m, "resent_segments": 3}  # noqa: E731
    return {
        "case": case, "kernel_cc": "cubic", "rantcp_cc": "cubic", "seed": seed, "seconds": 20,
        "emulated": {"goodput_mbps": kg, "rtt": rtt(kr), "hystart": fid.kernel_hystart(fid.parse_nstat(NSTAT)),
                     "first_ssthresh": {"t_s": 0.3, "cwnd": 247, "ssthresh": 247}, "emulator_drops": 0,
                     "lateness_p99_us": 60, "lateness_max_us": 900, "load1": 2.0},
        "simulated": {"goodput_mbps": sg, "rtt": rtt(sr), "exit_cause": "hystart-delay", "exit_cwnd_segments": 96.0,
                      "exit_s": 0.4, "first_ssthresh": {"t_s": 0.47, "ssthresh": 96.0}},
    }


def test_tables_mean_range_ratio_and_overlap(tmp_path: Path, capsys) -> None:
    rows = [_row("lte", 1, 20.0, 18.0, 600.0, 400.0), _row("lte", 2, 22.0, 19.0, 700.0, 420.0),
            _row("p2p", 1, 48.0, 47.0, 68.0, 69.0)]
    t = fid.tables(rows)
    # Mean (min–max), ratio of the means, bold beyond ±20 %, overlap of the ranges per figure.
    assert "| lte | cubic / cubic | 2 | 21.00 (20.00–22.00) | 18.50 (18.00–19.00) | 1.14 | 650.0 (600.0–700.0) | " \
           "410.0 (400.0–420.0) | **1.59** | no / no | 3 / 3 |" in t
    assert "| p2p | cubic / cubic | 1 | 48.00 | 47.00 | 1.02 | 68.0 | 69.0 | 0.99 | – / – | 3 / 3 |" in t
    assert "| lte | cubic | 2 | hystart-train @ 247; ssthresh 247 at 0.30 s | hystart-delay @ 96 at 0.40 s; ssthresh 96 |" in t
    assert "emulator drops 0" in t
    # --from reprints saved runs without running anything (no root needed).
    saved = tmp_path / "rows.json"
    saved.write_text(json.dumps(rows))
    assert fid.main(["--from", str(saved)]) == 0
    assert capsys.readouterr().out.strip() == t.strip()


def test_config_bytes_as_the_config_writes_them() -> None:
    # crates/config/src/units.rs Bytes::parse: decimal and binary prefixes, bare integers.
    assert fid.config_bytes("6MB") == 6_000_000
    assert fid.config_bytes("6MiB") == 6_291_456
    assert fid.config_bytes("6500kB") == 6_500_000
    assert fid.config_bytes("3.75MiB") == 3_932_160
    assert fid.config_bytes(1500) == 1500 and fid.config_bytes("1500B") == 1500
    for bad in ("6 parsecs", "", "MB"):
        try:
            fid.config_bytes(bad)
        except ValueError as e:
            assert "size in bytes" in str(e)
        else:
            raise AssertionError(bad)


def test_kernel_buffers_are_the_scenarios_own() -> None:
    """The kernel's tcp_rmem / tcp_wmem max is each scenario's rcv_buf / snd_buf (mmwave-blockage
    says 6 MB, p2p-bulk and lte-cell take the 6 MiB default), not one constant."""
    import rantcp

    for scenario, ov in (("builtin:mmwave-blockage", {}), ("builtin:lte-cell", {"ues": 1}),
                         ("builtin:p2p-bulk", {"bottleneck.loss": 1e-3})):
        cfg = rantcp.validate(scenario, overrides=ov, seed=1)
        s = fid.kernel_sysctls(cfg)
        assert s["net.ipv4.tcp_rmem"].split()[2] == str(fid.config_bytes(cfg["flow"]["rcv_buf"]))
        assert s["net.ipv4.tcp_wmem"].split()[2] == str(fid.config_bytes(cfg["flow"]["snd_buf"]))
        assert s["net.ipv4.tcp_congestion_control"] == "reno" and s["net.ipv4.tcp_no_metrics_save"] == "1"
    mm = fid.kernel_sysctls(rantcp.validate("builtin:mmwave-blockage", seed=1))
    assert mm["net.ipv4.tcp_rmem"] == "4096 131072 6000000" and mm["net.ipv4.tcp_wmem"] == "4096 16384 6000000"
    # An override reaches the kernel too; a buffer below Linux's initial size lowers it (min ≤ default ≤ max).
    small = fid.kernel_sysctls(rantcp.validate("builtin:p2p-bulk", overrides={"flow.rcv_buf": "64kB"}, seed=1))
    assert small["net.ipv4.tcp_rmem"] == "4096 64000 64000"


def test_sack_off_reaches_both_sides() -> None:
    """`--sack off`: rantcp's flow.sack = false and the kernel's tcp_sack = 0, from the one
    override; the case is labelled as such and a saved run is re-simulated with it."""
    import rantcp

    assert fid.build_parser().parse_args([]).sack == "on"
    assert fid.build_parser().parse_args(["--sack", "off"]).sack == "off"
    base = {"bottleneck.loss": 1e-3}
    assert fid.case_overrides(base, True) == base
    off = fid.case_overrides(base, False)
    assert off == {"bottleneck.loss": 1e-3, "flow.sack": False} and base == {"bottleneck.loss": 1e-3}
    on_cfg = rantcp.validate("builtin:p2p-bulk", overrides=base, seed=1)
    off_cfg = rantcp.validate("builtin:p2p-bulk", overrides=off, seed=1)
    assert (on_cfg["flow"]["sack"], off_cfg["flow"]["sack"]) == (True, False)
    assert fid.kernel_sysctls(on_cfg)["net.ipv4.tcp_sack"] == "1"
    assert fid.kernel_sysctls(off_cfg)["net.ipv4.tcp_sack"] == "0"
    assert ("p2p-bulk, loss 1e-3" + fid.SACK_OFF).removesuffix(fid.SACK_OFF) in {c[0] for c in fid.CASES}
    # The kernel counts a connection without SACK's fast recoveries as TCPRenoRecovery.
    row = {"case": "p2p" + fid.SACK_OFF, "kernel_cc": "reno",
           "emulated": {"nstat": {"TcpExtTCPRenoRecovery": 8}}, "simulated": {"undo": dict.fromkeys(fid.SIM_UNDO, 0)}}
    assert fid.undo_table([row]).splitlines()[2].endswith("| 8.0 / 0.0 |")


def test_set_sysctls_reads_them_back() -> None:
    class Emu:
        def __init__(self, readback: str) -> None:
            self.readback = readback
            self.calls: list[list[str]] = []

        def run(self, host, argv, **kw):
            import subprocess

            self.calls.append(argv)
            return subprocess.CompletedProcess(argv, 0, stdout=self.readback if argv[1] == "-n" else "")

    want = {"net.ipv4.tcp_rmem": "4096 131072 6000000", "net.ipv4.tcp_congestion_control": "reno"}
    emu = Emu("4096\t131072\t6000000\nreno\n")
    assert fid.set_sysctls(emu, "server", want) == want
    assert emu.calls[0] == ["sysctl", "-q", "-w", "net.ipv4.tcp_rmem=4096 131072 6000000",
                            "net.ipv4.tcp_congestion_control=reno"]
    try:
        fid.set_sysctls(Emu("4096\t131072\t6291456\nreno\n"), "server", want)
    except RuntimeError as e:
        assert "tcp_rmem" in str(e) and "6291456" in str(e)
    else:
        raise AssertionError("a sysctl that did not take went unnoticed")


def test_from_a_later_file_replaces_a_case_and_controller_whole() -> None:
    old = [_row("mmwave", s, 49.0, 49.0, 25.0, 25.0) for s in (1, 2, 3, 4, 5)] + [_row("p2p", 1, 48.0, 47.0, 68.0, 69.0)]
    new = [_row("mmwave", s, 48.0, 48.0, 26.0, 25.0) for s in (1, 2, 3)]
    rows = fid.merge_runs([old, new])
    mm = [r for r in rows if r["case"] == "mmwave"]
    assert [r["seed"] for r in mm] == [1, 2, 3] and all(r["emulated"]["goodput_mbps"] == 48.0 for r in mm)
    assert [r["case"] for r in rows].count("p2p") == 1
    # Another controller of the same case is its own group: kept.
    bbr = dict(_row("mmwave", 1, 47.0, 47.0, 25.0, 25.0), kernel_cc="bbr")
    assert len(fid.merge_runs([old + [bbr], new])) == 5


def test_ack_table_kernel_against_rantcp_per_delivery() -> None:
    def row(off: bool, insegs: int, sent: int, k: tuple[int, int], s: tuple[int, int]) -> dict:
        return {"case": "lte", "kernel_cc": "reno", "rantcp_cc": "newreno", "seed": 1, "offload": off,
                "emulated": {"nstat": {"TcpInSegs": insegs},
                             "receiver_acks": {"acks": k[0], "data_segments": k[1]}},
                "simulated": {"receiver_segments_sent": sent,
                              "receiver_acks": {"acks": s[0], "data_segments": s[1]}}}
    t = fid.ack_table([row(False, 8000, 5000, (6000, 15000), (5000, 15000)),
                       row(False, 7000, 5000, (6000, 15000), (5000, 15000)),
                       row(True, 6000, 5000, (5000, 14000), (5000, 14500))])
    # Means per run, TcpInSegs ratio 7500 / 5000 = 1.5 (bold); segments per ACK 2.50 / 3.00, so
    # the kernel sends 1.20 times as many ACKs per segment; batched runs are a row of their own.
    assert "| lte | reno | one write per packet | 2 | 7500 / 5000 | **1.50** | 2.50 / 3.00 | 1.20 |" in t
    assert "| lte | reno | batched (--offload) | 1 | 6000 / 5000 | 1.20 | 2.80 / 2.90 | 1.04 |" in t
    # Saved runs from before the receiver's capture: the capture columns say so.
    old = row(False, 8000, 5000, (1, 1), (1, 1))
    del old["emulated"]["receiver_acks"], old["offload"]
    assert "| lte | reno | one write per packet | 1 | 8000 / 5000 | **1.60** | – | – |" in fid.ack_table([old])


def test_tables_say_which_runs_took_iperf3s_rate() -> None:
    old = _row("mmwave", 1, 45.0, 52.0, 24.7, 24.8)
    new = _row("mmwave", 2, 50.9, 51.0, 24.7, 24.8)
    new["emulated"]["goodput_iperf3_mbps"] = 44.8
    # Saved before goodput came from the captures: the table says how many, and that the kernel's
    # figure there is iperf3's; a table of new runs only says nothing of it.
    assert "1 of the 2 runs were saved before goodput came from the captures" in fid.tables([old, new])
    assert "iperf3's received rate" not in fid.tables([new])


def test_iperf3_block_size_is_passed_and_marked_in_the_tables() -> None:
    # Default: iperf3's own 128 KB block (no -l); --blksize passes -l, which also sets the
    # server's read size, and the tables say which runs had it.
    assert fid.iperf3_client("ue1", 10, "reno") == ["iperf3", "-c", "ue1", "-t", "10", "-C", "reno", "-J"]
    assert fid.iperf3_client("ue1", 10, "reno", "1M")[-2:] == ["-l", "1M"]
    rows = [_row("mmwave", 1, 51.0, 51.5, 24.7, 24.8), {**_row("mmwave", 2, 51.4, 51.7, 24.7, 24.8), "blksize": "1M"}]
    assert "iperf3 block size (-l, the server's read size): 1M in 1 of the 2 runs, 128K in the rest." in fid.tables(rows)
    assert "iperf3 block size" not in fid.tables(rows[:1])
