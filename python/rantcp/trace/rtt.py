"""The RTT of a capture's bulk transfer, from the trace analysis's per-packet samples: one
definition for a kernel's capture and a simulated one (issue 17's fidelity table).

    >>> from rantcp.trace.rtt import capture_rtt
    >>> capture_rtt("out/run/pcap/sender-eth0.pcap")["mean_ms"]
    >>> capture_goodput("out/run/pcap/sender-eth0.pcap", "out/run/pcap/receiver-eth0.pcap", 10)["mbps"]

The capture is ingested into an in-memory trace database (`rantcp trace ingest`'s code, so the
sessions, repairs and flags are exactly those of the `sessions` / `packets` tables), and the
session that carried the most new data (`data_bytes`) is the transfer. Its RTT samples are the
`rtt_us` column of the ACKs going back (README "Trace analysis"): from a data segment seen at the
capture point to the first ACK covering it, the newest segment an advancing ACK covers, none
for data any byte of which was sent twice (Karn, RFC 6298 §3). At the sender's own interface
that is the sender's RTT, minus its stack's time to send and to take in the ACK.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from rantcp.trace.ingest import TraceInputError, connect, ingest_file


@contextmanager
def _ingested(path: Path) -> Iterator[Any]:
    """An in-memory trace database holding the capture at `path` (closed on exit); raises
    TraceInputError when the file is not a capture."""
    con = connect(":memory:")
    try:
        res = ingest_file(con, path, {})
        if res.status != "ingested":
            raise TraceInputError(f"{path}: {res.message or res.status}")
        yield con
    finally:
        con.close()


def _transfer(con: Any, path: Path, columns: str) -> tuple[Any, ...]:
    """`columns` of the capture's transfer: the session that carried the most new data (ties:
    the lowest id). Raises TraceInputError when the capture has no TCP session."""
    row = con.execute(
        f"SELECT {columns} FROM sessions ORDER BY data_bytes DESC, session_id LIMIT 1"
    ).fetchone()
    if row is None:
        raise TraceInputError(f"{path}: no TCP session with data")
    return tuple(row)


def _data_dir(data_dir: str) -> int:
    """The `packets.dir` the transfer's data travel in (0 is client → server); its ACKs travel
    in the other."""
    return 1 if data_dir == "s2c" else 0


def capture_rtt(capture: str | Path) -> dict[str, Any]:
    """RTT of the capture's largest transfer: {"samples", "mean_ms", "min_ms", "median_ms",
    "p95_ms", "max_ms"} of its data→ACK samples (None without samples), "ts_rtt_median_ms" (the
    session's timestamp-echo RTT median), "data_bytes", "resent_segments" (data segments below
    the highest sequence sent: the sender's retransmissions when captured at the sender),
    "session" (client port->server port) and "rwin_max_bytes" (the largest window the receiver
    advertised, scaled). Raises TraceInputError when the file is not a capture
    or holds no TCP data."""
    path = Path(capture)
    with _ingested(path) as con:
        row = _transfer(con, path, "session_id, data_dir, data_bytes, client_port, server_port, "
                        "ts_rtt_median_ms, rwin_max_bytes")
        if not row[2]:
            raise TraceInputError(f"{path}: no TCP session with data")
        sid, data_dir, data_bytes, cport, sport, ts_median, rwin_max = row
        data = _data_dir(data_dir)
        ack_dir = 1 - data
        # Data segments below the highest sequence sent: at the sender's own interface these are
        # all retransmissions, whether Wireshark's timing rule calls them "retransmission" or,
        # when sent within one handshake RTT of the newest segment, "out-of-order".
        (resent,) = con.execute(
            "SELECT count(*) FROM packets WHERE session_id = ? AND dir = ? AND payload_len > 0 "
            "AND (retransmission OR out_of_order)",
            [sid, data],
        ).fetchone()
        n, mean, lo, med, p95, hi = con.execute(
            "SELECT count(rtt_us), avg(rtt_us), min(rtt_us), quantile_disc(rtt_us, 0.5), "
            "quantile_disc(rtt_us, 0.95), max(rtt_us) FROM packets "
            "WHERE session_id = ? AND dir = ? AND rtt_us IS NOT NULL",
            [sid, ack_dir],
        ).fetchone()

    def ms(us: Any) -> float | None:
        return None if us is None else float(us) / 1e3

    return {
        "samples": int(n),
        "mean_ms": ms(mean),
        "min_ms": ms(lo),
        "median_ms": ms(med),
        "p95_ms": ms(p95),
        "max_ms": ms(hi),
        "ts_rtt_median_ms": ts_median,
        "data_bytes": int(data_bytes),
        "resent_segments": int(resent),
        "session": f"{cport}->{sport}",
        "rwin_max_bytes": None if rwin_max is None else int(rwin_max),
    }


def capture_acks(capture: str | Path, seconds: float) -> dict[str, Any]:
    """The data receiver's ACKs in a capture taken at the receiver's side, over the transfer's
    first `seconds` (from its first data segment): {"acks" (segments the receiver sent on the
    transfer's session), "data_segments" (data segments that reached it), "segments_per_ack"}.
    One window for a kernel's capture and a simulated one: a kernel sender's TcpInSegs also
    counts the ACKs of whatever a deep RLC queue still held when the transfer's time ran out
    (an lte-cell flow's last RTT, up to 1.5 s) and rantcp's run stops there."""
    path = Path(capture)
    with _ingested(path) as con:
        sid, data_dir = _transfer(con, path, "session_id, data_dir")
        data = _data_dir(data_dir)
        (t0,) = con.execute("SELECT min(ts_ns) FROM packets WHERE session_id = ? AND dir = ? AND payload_len > 0",
                            [sid, data]).fetchone()
        if t0 is None:
            raise TraceInputError(f"{path}: no TCP session with data")
        t1 = t0 + int(seconds * 1e9)
        acks, segs = con.execute(
            "SELECT count(*) FILTER (WHERE dir = ?), count(*) FILTER (WHERE dir = ? AND payload_len > 0) "
            "FROM packets WHERE session_id = ? AND ts_ns >= ? AND ts_ns < ?",
            [1 - data, data, sid, t0, t1],
        ).fetchone()
    return {"acks": int(acks), "data_segments": int(segs), "segments_per_ack": segs / acks if acks else None}


def capture_goodput(sender_capture: str | Path, receiver_capture: str | Path, seconds: float) -> dict[str, Any]:
    """The transfer's goodput over its first `seconds`, from two captures on one clock: the
    window starts at the transfer's first packet (its SYN) at the data sender's interface and
    counts the in-order bytes that reached the receiver's interface before it ends
    ({"start_s": window start, capture time; "bytes"; "mbps"}). rantcp's summary.json figure
    (in-order bytes delivered over [flow start, end of run]) measured the same way on a kernel's
    run: iperf3's received rate divides what the server read by the server's own time, up to
    the end of test on the control connection, which waits behind whatever a deep RLC queue
    held when the sender stopped. In-order: a segment counts once everything below it arrived
    (RCV.NXT, RFC 9293 §3.10.7.4); the trace's sequence numbers are relative to the ISN, so
    transfers of up to 4 GiB."""
    snd, rcv = Path(sender_capture), Path(receiver_capture)
    with _ingested(snd) as con:
        (sid,) = _transfer(con, snd, "session_id")
        (t0,) = con.execute("SELECT min(ts_ns) FROM packets WHERE session_id = ?", [sid]).fetchone()
    t1 = t0 + int(seconds * 1e9)
    with _ingested(rcv) as con:
        sid, data_dir = _transfer(con, rcv, "session_id, data_dir")
        data = _data_dir(data_dir)
        (first,) = con.execute("SELECT min(seq) FROM packets WHERE session_id = ? AND dir = ? AND payload_len > 0",
                               [sid, data]).fetchone()
        segs = con.execute(
            "SELECT seq, seq + payload_len FROM packets WHERE session_id = ? AND dir = ? AND payload_len > 0 "
            "AND ts_ns < ? ORDER BY ts_ns, frame",
            [sid, data, t1],
        ).fetchall()
    got = rcv_nxt(first, segs) - first
    return {"start_s": t0 / 1e9, "bytes": int(got), "mbps": got * 8 / seconds / 1e6}


def rcv_nxt(first: int, segments: Iterable[tuple[int, int]]) -> int:
    """The receiver's RCV.NXT after `segments` ([start, end) sequence ranges, in arrival order)
    when the first byte is `first`: a segment moves it once everything below the segment has
    arrived (RFC 9293 §3.10.7.4); duplicates and overlaps count once."""
    nxt = first
    held: list[tuple[int, int]] = []  # the out-of-order segments above RCV.NXT, a heap by start
    for lo, hi in segments:
        if lo <= nxt:
            nxt = max(nxt, hi)
            while held and held[0][0] <= nxt:
                nxt = max(nxt, heapq.heappop(held)[1])
        else:
            heapq.heappush(held, (lo, hi))
    return nxt
