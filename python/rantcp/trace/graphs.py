"""Graphs of one TCP session from a trace database: the classic time-sequence graph (data
segments, the ACK line, the receive-window line, retransmissions and duplicate ACKs as red dots
— the dissertation's Figure 31), throughput over time, RTT over time and bytes in flight.
Everything is drawn from the `packets` view; times are seconds since the session's first packet.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from rantcp.trace.ingest import TraceInputError
from rantcp.trace.sessions import packets

KINDS = ("sequence", "throughput", "rtt", "inflight")


def _session_frame(db: Any, session_id: int) -> tuple[Any, Any]:
    from rantcp.trace.ingest import reading

    with reading(db) as con:
        pk = packets(con, session_id)
        s = con.execute("SELECT * FROM sessions WHERE session_id = ?", [session_id]).df().iloc[0]
    return pk, s


def _axes(ax: Any) -> tuple[Any, Any]:
    if ax is not None:
        return ax.figure, ax
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 4.5), dpi=110)
    return fig, ax


def _finish(fig: Any, ax: Any, title: str, out: str | Path | None) -> Any:
    ax.set_title(title, fontsize=10)
    ax.grid(True, alpha=0.3)
    if out is not None:
        fig.tight_layout()
        fig.savefig(out)
        import matplotlib.pyplot as plt

        plt.close(fig)
    return fig


def _title(s: Any, what: str) -> str:
    return f"session {int(s.session_id)} · {s.client_ip}:{s.client_port} ↔ {s.server_ip}:{s.server_port} · {what}"


def time_sequence_graph(db: Any, session_id: int, out: str | Path | None = None, ax: Any = None) -> Any:
    """Sequence number (MB, relative) of each data segment over time in the data direction,
    with the ACK line and the ACK + receive-window line of the other direction; retransmitted
    segments and duplicate ACKs as red dots."""
    pk, s = _session_frame(db, session_id)
    data_dir = 0 if s.data_dir == "c2s" else 1
    t0 = pk.ts_ns.min() if len(pk) else 0
    t = (pk.ts_ns - t0) / 1e9
    fig, ax = _axes(ax)
    d = pk[(pk.dir == data_dir) & (pk.payload_len > 0)]
    a = pk[(pk.dir != data_dir) & ((pk.tcp_flags & 0x10) != 0)]
    td, ta = t[d.index], t[a.index]
    ax.vlines(td, d.seq / 1e6, (d.seq + d.payload_len) / 1e6, color="tab:blue", lw=1.2, label="data segment")
    ax.step(ta, a.ack / 1e6, where="post", color="tab:green", lw=1, label="ACK")
    ax.step(ta, (a.ack.astype("int64") + a.win) / 1e6, where="post", color="tab:olive", lw=0.8, ls="--", label="ACK + rwin")
    r = d[d.retransmission]
    if len(r):
        ax.plot(t[r.index], r.seq / 1e6, "o", color="red", ms=3.5, label="retransmission")
    da = a[a.dup_ack]
    if len(da):
        ax.plot(t[da.index], da.ack / 1e6, "o", color="red", ms=2.5, mfc="none", label="duplicate ACK")
    if len(d):
        # Keep the data in view: a large receive window would flatten everything else.
        ax.set_ylim(0, float((d.seq + d.payload_len).max()) / 1e6 * 1.15)
    ax.set_xlabel("time (s)")
    ax.set_ylabel("relative sequence number (MB)")
    ax.legend(fontsize=8, loc="upper left")
    return _finish(fig, ax, _title(s, "time-sequence"), out)


def throughput_graph(db: Any, session_id: int, out: str | Path | None = None, ax: Any = None, bin_s: float | None = None) -> Any:
    """Throughput of the data direction over time: payload bytes of new data per time bin
    (default: 1/50 of the session, at least 10 ms), Mbit/s, and the session mean."""
    pk, s = _session_frame(db, session_id)
    data_dir = 0 if s.data_dir == "c2s" else 1
    t0 = pk.ts_ns.min() if len(pk) else 0
    d = pk[(pk.dir == data_dir) & (pk.payload_len > 0) & ~pk.retransmission]
    span = max((pk.ts_ns.max() - t0) / 1e9 if len(pk) else 1.0, 1e-3)
    width = bin_s or max(span / 50, 0.01)
    edges = np.arange(0.0, span + width, width)
    hist, _ = np.histogram((d.ts_ns - t0) / 1e9, bins=edges, weights=d.payload_len.astype(float))
    fig, ax = _axes(ax)
    ax.step(edges[:-1], hist * 8 / width / 1e6, where="post", color="tab:blue", label=f"{width * 1e3:.0f} ms bins")
    if s.throughput_bps == s.throughput_bps and s.throughput_bps:  # not NaN
        ax.axhline(s.throughput_bps / 1e6, color="tab:gray", ls="--", lw=1, label=f"session {s.throughput_bps / 1e6:.2f} Mbit/s")
    ax.set_xlabel("time (s)")
    ax.set_ylabel("throughput (Mbit/s)")
    ax.legend(fontsize=8)
    return _finish(fig, ax, _title(s, "throughput"), out)


def rtt_graph(db: Any, session_id: int, out: str | Path | None = None, ax: Any = None) -> Any:
    """RTT samples (Karn: data→ACK pairs, retransmitted segments excluded) over time, ms."""
    pk, s = _session_frame(db, session_id)
    t0 = pk.ts_ns.min() if len(pk) else 0
    r = pk[pk.rtt_us.notna()]
    fig, ax = _axes(ax)
    ax.plot((r.ts_ns - t0) / 1e9, r.rtt_us / 1e3, ".", ms=2.5, color="tab:purple", label="RTT sample")
    ax.set_xlabel("time (s)")
    ax.set_ylabel("RTT at the capture point (ms)")
    ax.legend(fontsize=8)
    return _finish(fig, ax, _title(s, "RTT"), out)


def in_flight_graph(db: Any, session_id: int, out: str | Path | None = None, ax: Any = None) -> Any:
    """Bytes in flight after each data segment (highest sequence sent − last ACK seen), KB."""
    pk, s = _session_frame(db, session_id)
    t0 = pk.ts_ns.min() if len(pk) else 0
    r = pk[pk.in_flight.notna()]
    fig, ax = _axes(ax)
    ax.step((r.ts_ns - t0) / 1e9, r.in_flight / 1e3, where="post", color="tab:orange", lw=1, label="in flight")
    ax.set_xlabel("time (s)")
    ax.set_ylabel("bytes in flight (KB)")
    ax.legend(fontsize=8)
    return _finish(fig, ax, _title(s, "bytes in flight"), out)


def graph(db: Any, session_id: int, kind: str = "sequence", out: str | Path | None = None) -> Any:
    """One of the graphs by name: sequence | throughput | rtt | inflight."""
    fns = {"sequence": time_sequence_graph, "throughput": throughput_graph, "rtt": rtt_graph, "inflight": in_flight_graph}
    if kind not in fns:
        raise TraceInputError(f"--kind {kind!r}: expected one of {', '.join(KINDS)}")
    return fns[kind](db, session_id, out=out)
