"""`rantcp.trace.rtt.capture_rtt`: the RTT and retransmissions of a capture's bulk transfer, the
one definition `_emu_fidelity` applies to the kernel's capture and to rantcp's (issue 17).
Checked against what the simulated sender itself counted, on its own interface's pcap."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import rantcp
from rantcp.trace.rtt import TraceInputError, capture_rtt


def _run(out: Path, **ov: object) -> dict:
    r = rantcp.run("builtin:p2p-bulk", out=out,
                   overrides={"flow.stack": "linux", "output.pcap": ["sender-eth0", "receiver-eth0"], **ov})
    return r.summary["flows"][0]


def test_loss_free_rtt_matches_the_senders_own_samples(tmp_path: Path) -> None:
    # 0.3 s: slow start has not yet overflowed the 1-BDP queue (NewReno's first loss is at 0.37 s).
    f = _run(tmp_path / "run", duration="0.3s")
    r = capture_rtt(tmp_path / "run" / "pcap" / "sender-eth0.pcap")
    # One sample per ACK that advances, as the sender takes one per such ACK (RFC 7323 §4.1
    # TSecr); the sender's echo is of the older segment a delayed ACK covers, the capture's
    # the newest, so the means differ by a fraction of a delayed-ACK gap, not more.
    assert r["samples"] == f["rtt_samples"] > 100
    assert r["mean_ms"] == pytest.approx(f["rtt_mean_ms"], abs=0.5)
    # 2 × (20 ms + 1 µs) of propagation: no sample below the floor, the minimum just above it.
    assert 40.0 <= r["min_ms"] < 40.2
    assert r["min_ms"] <= r["median_ms"] <= r["p95_ms"] <= r["max_ms"]
    assert r["resent_segments"] == f["retransmitted_segments"] == 0
    assert r["data_bytes"] > 1_000_000
    # At the receiver the ACK leaves when the data arrives: the data→ACK time is ~0 (delayed
    # ACKs apart), so the capture point, not the code, makes the sender's figure.
    assert capture_rtt(tmp_path / "run" / "pcap" / "receiver-eth0.pcap")["median_ms"] < 1.0


def test_retransmissions_match_the_sender_and_karn_drops_samples(tmp_path: Path) -> None:
    f = _run(tmp_path / "run", duration="4s", **{"bottleneck.loss": 1e-2})
    r = capture_rtt(tmp_path / "run" / "pcap" / "sender-eth0.pcap")
    assert r["resent_segments"] == f["retransmitted_segments"] > 10
    # Karn: an ACK whose newest covered segment was resent (or sent before a resend it waited
    # for) gives no sample; the sender is no less strict than that on this path.
    assert 0 < r["samples"] <= f["rtt_samples"]
    assert r["min_ms"] >= 40.0


def test_not_a_capture_is_a_one_line_error(tmp_path: Path) -> None:
    p = tmp_path / "x.pcap"
    p.write_bytes(b"not a pcap at all")
    with pytest.raises(TraceInputError) as e:
        capture_rtt(p)
    assert "\n" not in str(e.value) and "x.pcap" in str(e.value)


def test_capture_acks_counts_the_receivers_segments_in_the_window(tmp_path: Path) -> None:
    from rantcp.trace.rtt import capture_acks

    f = _run(tmp_path / "run", duration="2s")
    pcap = tmp_path / "run" / "pcap" / "receiver-eth0.pcap"
    whole = capture_acks(pcap, 10.0)
    # Over the whole run: every segment the receiver sent but its SYN-ACK (summary.json counts
    # it; the capture's window starts at the first data segment, after it).
    assert whole["acks"] == f["receiver_segments_sent"] - 1 > 500
    # The receiver ACKs at least every second full segment (segments arrive apart on a wire), at
    # once in its first quick ACKs and after the first loss (duplicate ACKs, of which SACK
    # compression holds some): about 1 to 2.
    assert 1.2 < whole["segments_per_ack"] < 2.2
    # A shorter window counts fewer, and only what it covers.
    half = capture_acks(pcap, 0.5)
    assert 0 < half["acks"] < whole["acks"] and 0 < half["data_segments"] < whole["data_segments"]


def test_capture_goodput_is_the_summarys_over_the_window_from_the_syn(tmp_path: Path) -> None:
    from rantcp.trace.rtt import capture_goodput

    # With loss (holes and retransmissions at the receiver), to the byte: summary.json's goodput
    # counts the bytes delivered in order to the application over [flow start, end of run].
    ov = {"bottleneck.loss": 1e-2, "flow.start": "0.5s"}
    long = _run(tmp_path / "long", duration="2.5s", **ov)
    short = _run(tmp_path / "short", duration="1.5s", **ov)
    pcaps = tmp_path / "long" / "pcap"
    g = capture_goodput(pcaps / "sender-eth0.pcap", pcaps / "receiver-eth0.pcap", 2.0)
    # The window starts at the SYN on the sender's interface: the flow's start.
    assert g["start_s"] == 0.5
    assert g["bytes"] == long["bytes_delivered"] > 500_000
    assert g["mbps"] == pytest.approx(long["goodput_mbps"], abs=1e-6)
    # Its first second is what a run that stopped then delivered (same seed: the same run up to there).
    first = capture_goodput(pcaps / "sender-eth0.pcap", pcaps / "receiver-eth0.pcap", 1.0)
    assert first["bytes"] == short["bytes_delivered"] < g["bytes"]


def test_rcv_nxt_counts_what_is_in_order() -> None:
    from rantcp.trace.rtt import rcv_nxt

    assert rcv_nxt(1, []) == 1
    assert rcv_nxt(1, [(1, 101), (101, 201)]) == 201
    # A hole holds back what arrived above it until it is filled; duplicates count once.
    assert rcv_nxt(1, [(1, 101), (201, 301), (301, 401)]) == 101
    assert rcv_nxt(1, [(1, 101), (201, 301), (301, 401), (101, 201)]) == 401
    assert rcv_nxt(1, [(1, 101), (1, 101), (51, 151)]) == 151
    # Held segments are taken in sequence order, whatever order they came in.
    assert rcv_nxt(1, [(301, 401), (201, 301), (1, 101), (101, 201)]) == 401
