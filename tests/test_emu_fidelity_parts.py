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
