"""Helpers of the trace tests: a tiny classic-pcap writer for hand-built captures, and the
comparison of a trace database with tshark's `tcp.analysis.*` fields on the same file.

The mapping (rantcp `packets` column ↔ tshark field), checked packet by packet:

    retransmission          ↔ tcp.analysis.retransmission   (tshark also sets it on fast and
                                                              spurious retransmissions; so do we)
    fast_retransmission     ↔ tcp.analysis.fast_retransmission
    spurious_retransmission ↔ tcp.analysis.spurious_retransmission
    out_of_order            ↔ tcp.analysis.out_of_order
    dup_ack                 ↔ tcp.analysis.duplicate_ack
    window_full             ↔ tcp.analysis.window_full
    zero_window             ↔ tcp.analysis.zero_window
    zero_window_probe       ↔ tcp.analysis.zero_window_probe
    keep_alive              ↔ tcp.analysis.keep_alive
    window_update           ↔ tcp.analysis.window_update
    lost_segment            ↔ tcp.analysis.lost_segment
    acked_unseen            ↔ tcp.analysis.ack_lost_segment
    payload_len             ↔ tcp.len
    ip_len                  ↔ ip.len (IPv4) / ipv6.plen + 40 (IPv6)
    session_id (per capture)↔ tcp.stream

and per session: packets, bytes (Σ ip_len), payload bytes (Σ tcp.len), duration (last − first
frame time), and the counts of each flag.
"""

from __future__ import annotations

import shutil
import struct
import subprocess
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

TSHARK = shutil.which("tshark")

FLAG_FIELDS = [
    ("retransmission", "tcp.analysis.retransmission"),
    ("fast_retransmission", "tcp.analysis.fast_retransmission"),
    ("spurious_retransmission", "tcp.analysis.spurious_retransmission"),
    ("out_of_order", "tcp.analysis.out_of_order"),
    ("dup_ack", "tcp.analysis.duplicate_ack"),
    ("window_full", "tcp.analysis.window_full"),
    ("zero_window", "tcp.analysis.zero_window"),
    ("zero_window_probe", "tcp.analysis.zero_window_probe"),
    ("keep_alive", "tcp.analysis.keep_alive"),
    ("window_update", "tcp.analysis.window_update"),
    ("lost_segment", "tcp.analysis.lost_segment"),
    ("acked_unseen", "tcp.analysis.ack_lost_segment"),
]

SYN, ACK, FIN, RST, PSH = 0x02, 0x10, 0x01, 0x04, 0x08


def tcp_ipv4(src: str, dst: str, sport: int, dport: int, seq: int, ack: int, flags: int,
             payload: int = 0, window: int = 65535) -> bytes:
    """An IPv4/TCP packet with `payload` zero bytes (checksums zero: nobody checks them)."""
    tcp = struct.pack("!HHIIBBHHH", sport, dport, seq & 0xFFFFFFFF, ack & 0xFFFFFFFF, 5 << 4, flags, window, 0, 0)
    total = 20 + len(tcp) + payload
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, total, 0, 0x4000, 64, 6, 0,
                     bytes(int(x) for x in src.split(".")), bytes(int(x) for x in dst.split(".")))
    return ip + tcp + bytes(payload)


def write_pcap(path: Path, records: Sequence[tuple[float, bytes] | tuple[float, bytes, int]],
               linktype: int = 101, magic: int = 0xA1B2C3D4) -> Path:
    """Classic pcap, microsecond magic by default; records are (time s, bytes[, orig_len])."""
    out = bytearray(struct.pack("<IHHiIII", magic, 2, 4, 0, 0, 65535, linktype))
    for rec in records:
        t, data = rec[0], rec[1]
        orig = rec[2] if len(rec) > 2 else len(data)
        sec = int(t)
        frac = round((t - sec) * (1e9 if magic == 0xA1B23C4D else 1e6))
        out += struct.pack("<IIII", sec, frac, len(data), orig) + data
    path.write_bytes(bytes(out))
    return path


def tshark_packets(pcap: Path) -> dict[int, dict[str, Any]]:
    """tshark's view of every TCP frame: {frame: {stream, len, ip_len, time, <flag>: bool}}."""
    fields = ["frame.number", "tcp.stream", "tcp.len", "ip.len", "ipv6.plen", "frame.time_epoch"] + [f for _, f in FLAG_FIELDS]
    cmd = [TSHARK or "tshark", "-n", "-r", str(pcap), "-Y", "tcp", "-T", "fields", "-E", "separator=/t", "-E", "occurrence=f"]
    for f in fields:
        cmd += ["-e", f]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True, timeout=300).stdout
    rows = {}
    for line in out.splitlines():
        p = line.split("\t")
        ip_len = int(p[3]) if p[3] else int(p[4]) + 40
        row: dict[str, Any] = {"stream": int(p[1]), "len": int(p[2]), "ip_len": ip_len, "time": float(p[5])}
        for (name, _), v in zip(FLAG_FIELDS, p[6:]):
            row[name] = bool(v)
        rows[int(p[0])] = row
    return rows


def compare_with_tshark(con: Any, capture_id: int, pcap: Path) -> dict[str, Any]:
    """Packet-by-packet and session-by-session differences between the database and tshark.
    Returns {"frames": n, "differences": [(frame, field, ours, tshark)], "sessions": [...]}."""
    ours = con.execute(
        "SELECT p.*, s.session AS local FROM packets p JOIN sessions s USING (session_id) "
        "WHERE s.capture_id = ? ORDER BY frame", [capture_id]).df()
    theirs = tshark_packets(pcap)
    diffs: list[tuple[int, str, Any, Any]] = []
    ours_frames = set(int(f) for f in ours.frame)
    for f in sorted(set(theirs) - ours_frames):
        diffs.append((f, "present", False, True))
    stream_of_session: dict[int, set[int]] = defaultdict(set)
    for r in ours.itertuples():
        t = theirs.get(int(r.frame))
        if t is None:
            diffs.append((int(r.frame), "present", True, False))
            continue
        stream_of_session[int(r.local)].add(t["stream"])
        if int(r.payload_len) != t["len"]:
            diffs.append((int(r.frame), "payload_len", int(r.payload_len), t["len"]))
        if int(r.ip_len) != t["ip_len"]:
            diffs.append((int(r.frame), "ip_len", int(r.ip_len), t["ip_len"]))
        for name, _ in FLAG_FIELDS:
            if bool(getattr(r, name)) != t[name]:
                diffs.append((int(r.frame), name, bool(getattr(r, name)), t[name]))
    # Sessions ↔ streams: one stream per session, distinct.
    for local, streams in stream_of_session.items():
        if len(streams) != 1:
            diffs.append((-1, f"session {local} spans streams", sorted(streams), None))
    sessions = con.execute("SELECT * FROM sessions WHERE capture_id = ? ORDER BY session", [capture_id]).df()
    per_stream: dict[int, dict[str, Any]] = defaultdict(lambda: defaultdict(float))
    times: dict[int, list[float]] = defaultdict(list)
    for t in theirs.values():
        st = per_stream[t["stream"]]
        st["packets"] += 1
        st["bytes"] += t["ip_len"]
        st["payload"] += t["len"]
        for name in ("retransmission", "dup_ack", "out_of_order", "fast_retransmission", "spurious_retransmission"):
            st[name] += t[name]
        times[t["stream"]].append(t["time"])
    session_rows = []
    for s in sessions.itertuples():
        streams = stream_of_session.get(int(s.session), set())
        stream = next(iter(streams)) if len(streams) == 1 else None
        st = per_stream.get(stream, {}) if stream is not None else {}
        dur = (max(times[stream]) - min(times[stream])) if stream is not None else None
        row = {
            "session": int(s.session), "stream": stream,
            "packets": (int(s.packets), st.get("packets")),
            "bytes": (int(s.bytes), st.get("bytes")),
            "payload": (int(s.payload_bytes_c2s + s.payload_bytes_s2c), st.get("payload")),
            "retransmissions": (int(s.retx_packets), st.get("retransmission")),
            "fast_retransmissions": (int(s.fast_retx), st.get("fast_retransmission")),
            "spurious_retransmissions": (int(s.spurious_retx), st.get("spurious_retransmission")),
            "dup_acks": (int(s.dup_acks), st.get("dup_ack")),
            "out_of_order": (int(s.out_of_order), st.get("out_of_order")),
            "duration_s": (float(s.duration_s), dur),
        }
        session_rows.append(row)
    return {"frames": len(theirs), "differences": diffs, "sessions": session_rows}


def assert_sessions_agree(result: dict[str, Any]) -> None:
    for row in result["sessions"]:
        for key, value in row.items():
            if key in ("session", "stream"):
                continue
            ours, theirs = value
            if key == "duration_s":
                # tshark prints epoch times with 9 decimals; microsecond captures round-trip exactly.
                assert theirs is not None and abs(ours - theirs) < 2e-6, (row["session"], key, ours, theirs)
            else:
                assert ours == theirs, (row["session"], key, ours, theirs)
