"""Human labels, units and physical bounds of the figures and config paths that plots and
reports show, so no axis is labelled with a raw column name.

``label("goodput_mbps")`` is ``"goodput (Mbit/s)"``; a name missing from the table gets a label
from its unit suffix (``_ms``, ``_bps``, ``_bytes`` …) with underscores as spaces; a config
path not in the table is shown as the path the user typed.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Label", "bounds", "describe", "label", "log_scale"]


@dataclass(frozen=True)
class Label:
    name: str
    unit: str | None = None
    lower: float | None = None
    """Smallest physically possible value (None: unbounded)."""
    upper: float | None = None
    log: bool = False
    """Best shown on a log axis (rates of rare events such as loss)."""


TABLE: dict[str, Label] = {
    # Run figures (summary.json, runs table) and time-series columns.
    "goodput_mbps": Label("goodput", "Mbit/s", 0.0),
    "goodput_bps": Label("goodput", "bit/s", 0.0),
    "rtt_mean_ms": Label("mean RTT", "ms", 0.0),
    "rtt_min_ms": Label("minimum RTT", "ms", 0.0),
    "rtt_max_ms": Label("maximum RTT", "ms", 0.0),
    "srtt_ms": Label("smoothed RTT", "ms", 0.0),
    "rto_ms": Label("RTO", "ms", 0.0),
    "rto_mean_ms": Label("mean RTO", "ms", 0.0),
    "retransmitted_segments": Label("retransmitted segments", None, 0.0),
    "retransmitted_bytes": Label("retransmitted bytes", "B", 0.0),
    "fast_retransmits": Label("fast retransmits", None, 0.0),
    "rtos": Label("retransmission timeouts", None, 0.0),
    "rto_undos": Label("spurious timeouts undone", None, 0.0),
    "spurious_rtos": Label("timeouts F-RTO found spurious", None, 0.0),
    "full_undos": Label("fast recoveries undone at their end", None, 0.0),
    "partial_undos": Label("fast recoveries undone on a partial ACK", None, 0.0),
    "dsack_undos": Label("congestion responses undone by D-SACK", None, 0.0),
    "dsacks_received": Label("D-SACKs received", None, 0.0),
    "dsacks_sent": Label("D-SACKs sent", None, 0.0),
    "bytes_delivered": Label("bytes delivered", "B", 0.0),
    "download_time_s": Label("download time", "s", 0.0),
    "jain_goodput": Label("Jain fairness index of goodput", None, 0.0, 1.0),
    "cwnd_bytes": Label("congestion window", "B", 0.0),
    "in_flight_bytes": Label("bytes in flight", "B", 0.0),
    "sinr_db": Label("SINR", "dB"),
    "dl_prb_util": Label("downlink PRB utilisation", None, 0.0, 1.0),
    "ul_prb_util": Label("uplink PRB utilisation", None, 0.0, 1.0),
    "pdcch_util": Label("PDCCH use (of budget)", None, 0.0),
    "time_s": Label("time", "s", 0.0),
    # Config paths (sweep axes).
    "bottleneck.loss": Label("bottleneck loss probability", None, 0.0, 1.0, log=True),
    "bottleneck.rate": Label("bottleneck rate"),
    "bottleneck.delay": Label("bottleneck delay"),
    "bottleneck.queue": Label("bottleneck queue"),
    "core.error_rate": Label("core packet error rate", None, 0.0, 1.0, log=True),
    "flow.cc": Label("congestion control"),
    "flow.mss": Label("MSS", "B"),
    "flow.count": Label("flows"),
    "flow.pacing": Label("pacing"),
    "mac.scheduler": Label("MAC scheduler"),
    "ues": Label("UEs"),
}

_SUFFIX_UNITS = (
    ("_mbps", "Mbit/s"),
    ("_bps", "bit/s"),
    ("_ms", "ms"),
    ("_s", "s"),
    ("_bytes", "B"),
    ("_db", "dB"),
    ("_dbm", "dBm"),
    ("_m", "m"),
)
_NON_NEGATIVE_SUFFIXES = ("_mbps", "_bps", "_ms", "_s", "_bytes", "_segments", "_drops", "_packets")


def describe(name: str) -> Label:
    """The table's entry, or one derived from the name."""
    if name in TABLE:
        return TABLE[name]
    base = name.rsplit(".", 1)[-1] if name.startswith("flow") and "." in name and name[4:5].isdigit() else name
    if base in TABLE:
        return TABLE[base]
    if "." in name:  # a config path, or <list>.<item>.<figure>: show it as written
        return Label(name)
    for suffix, unit in _SUFFIX_UNITS:
        if name.endswith(suffix):
            lower = 0.0 if name.endswith(_NON_NEGATIVE_SUFFIXES) else None
            return Label(name[: -len(suffix)].replace("_", " "), unit, lower)
    return Label(name.replace("_", " "))


def label(name: str, unit: str | None = None) -> str:
    """Axis label: "goodput (Mbit/s)"; `unit` replaces the table's (for scaled values)."""
    d = describe(name)
    u = unit if unit is not None else d.unit
    return f"{d.name} ({u})" if u else d.name


def bounds(name: str) -> tuple[float | None, float | None]:
    """(lower, upper) physical bounds of a figure, None where unbounded."""
    d = describe(name)
    return d.lower, d.upper


def log_scale(name: str) -> bool:
    return describe(name).log
