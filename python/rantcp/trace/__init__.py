"""TCP packet-trace analysis: pcap/pcapng captures → a DuckDB session database → graphs and
throughput-gain tables (the dissertation's §5.3, Figure 28).

    import rantcp.trace as trace
    trace.ingest(["captures/"], "traces.duckdb", manifest="manifest.csv")
    df = trace.sessions("traces.duckdb")
    trace.time_sequence_graph("traces.duckdb", session_id=0, out="seq.png")
    table = trace.compare("traces.duckdb", by="optimisation", weights="weights.toml")

Every metric is defined in the README ("Trace analysis"). Plotting functions import matplotlib
only when called.
"""

from __future__ import annotations

from typing import Any

from rantcp.trace.ingest import FileResult, IngestReport, TraceInputError, ingest
from rantcp.trace.sessions import packets, sessions

__all__ = [
    "FileResult",
    "IngestReport",
    "TraceInputError",
    "compare",
    "graph",
    "ingest",
    "packets",
    "rtt_graph",
    "sessions",
    "throughput_graph",
    "time_sequence_graph",
    "in_flight_graph",
]


def __getattr__(name: str) -> Any:
    # Graphs and gain tables pull in matplotlib/numpy: import them on first use.
    if name in ("graph", "time_sequence_graph", "throughput_graph", "rtt_graph", "in_flight_graph"):
        from rantcp.trace import graphs

        return getattr(graphs, name)
    if name == "compare":
        # The function lives in `gain`: a submodule named `compare` would replace this
        # attribute with itself once imported (`rantcp trace compare` in-process did).
        from rantcp.trace.gain import compare

        return compare
    raise AttributeError(name)
