"""The trace database schema (DuckDB): tables `captures`, `tags`, `sessions`, `packet_rows` and
the view `packets` (packet rows with one boolean column per analysis flag and the global
session id). Every metric is defined in the README, section "Trace analysis"."""

from __future__ import annotations

from typing import Any, Literal, TypedDict

SCHEMA_VERSION = 1

CAPTURES = """
CREATE TABLE IF NOT EXISTS captures (
    capture_id     INTEGER PRIMARY KEY,
    path           VARCHAR NOT NULL,  -- as given on the command line, made absolute
    blake3         VARCHAR NOT NULL,  -- content hash of the whole file (ingest is idempotent by it)
    file_bytes     BIGINT NOT NULL,
    format         VARCHAR,           -- pcap | pcapng
    linktypes      VARCHAR,           -- LINKTYPE_* numbers seen, comma-separated
    frames         BIGINT,            -- records in the file
    tcp_packets    BIGINT,            -- rows in packets
    not_tcp        BIGINT,            -- well-formed frames that are not TCP over IP
    malformed      BIGINT,            -- frames whose headers could not be parsed
    repaired       BIGINT,            -- TCP packets whose IP length was repaired
    truncated      BOOLEAN,           -- the file ended inside a record (or a block was corrupt)
    stop_reason    VARCHAR,
    first_ts_ns    BIGINT,
    last_ts_ns     BIGINT,
    sessions       INTEGER,
    ingest_s       DOUBLE,
    rantcp_version VARCHAR
)"""

TAGS = """
CREATE TABLE IF NOT EXISTS tags (
    capture_id INTEGER NOT NULL,
    key        VARCHAR NOT NULL,
    value      VARCHAR NOT NULL
)"""

# (name, DuckDB type) of the per-session columns, in the order Rust hands them over.
SESSION_COLUMNS: list[tuple[str, str]] = [
    ("session", "INTEGER"),
    ("ip_version", "UTINYINT"),
    ("client_ip", "VARCHAR"),
    ("client_port", "USMALLINT"),
    ("server_ip", "VARCHAR"),
    ("server_port", "USMALLINT"),
    ("first_frame", "BIGINT"),
    ("start_reason", "VARCHAR"),
    ("mid_connection", "BOOLEAN"),
    ("first_ts_ns", "BIGINT"),
    ("last_ts_ns", "BIGINT"),
    ("duration_s", "DOUBLE"),
    ("packets", "BIGINT"),
    ("packets_c2s", "BIGINT"),
    ("packets_s2c", "BIGINT"),
    ("bytes", "BIGINT"),
    ("payload_bytes_c2s", "BIGINT"),
    ("payload_bytes_s2c", "BIGINT"),
    ("data_dir", "VARCHAR"),
    ("data_bytes", "BIGINT"),
    ("download_time_s", "DOUBLE"),
    ("download_acked", "BOOLEAN"),
    ("throughput_bps", "DOUBLE"),
    ("retx_packets", "BIGINT"),
    ("retx_bytes", "BIGINT"),
    ("retx_ratio", "DOUBLE"),
    ("fast_retx", "BIGINT"),
    ("spurious_retx", "BIGINT"),
    ("dup_acks", "BIGINT"),
    ("dup_ack_ratio", "DOUBLE"),
    ("out_of_order", "BIGINT"),
    ("lost_segments", "BIGINT"),
    ("acked_unseen", "BIGINT"),
    ("window_full", "BIGINT"),
    ("zero_windows", "BIGINT"),
    ("keep_alives", "BIGINT"),
    ("rsts", "BIGINT"),
    ("fins", "BIGINT"),
    ("rtt_samples", "BIGINT"),
    ("rtt_min_ms", "DOUBLE"),
    ("rtt_median_ms", "DOUBLE"),
    ("rtt_p95_ms", "DOUBLE"),
    ("ts_rtt_samples", "BIGINT"),
    ("ts_rtt_min_ms", "DOUBLE"),
    ("ts_rtt_median_ms", "DOUBLE"),
    ("ts_rtt_p95_ms", "DOUBLE"),
    ("handshake_rtt_ms", "DOUBLE"),
    ("handshake_server_ms", "DOUBLE"),
    ("handshake_client_ms", "DOUBLE"),
    ("capture_near", "VARCHAR"),
    ("max_in_flight_bytes", "BIGINT"),
    ("rwin_min_bytes", "BIGINT"),
    ("rwin_max_bytes", "BIGINT"),
    ("mss_c2s", "INTEGER"),
    ("mss_s2c", "INTEGER"),
    ("wscale_c2s", "INTEGER"),
    ("wscale_s2c", "INTEGER"),
    ("sack_permitted", "BOOLEAN"),
    ("timestamps", "BOOLEAN"),
    ("repaired_packets", "BIGINT"),
]



class CaptureCounts(TypedDict):
    """What the analysis of one capture found (``TraceIngest.result()["capture"]``), most of it
    a row of `captures`; None where the file did not say (no frame, no format)."""

    format: Literal["pcap", "pcapng"] | None
    file_bytes: int
    blake3: str
    truncated: bool
    stop_reason: str | None
    skipped_blocks: int
    frames: int
    tcp_packets: int
    not_tcp: int
    malformed: int
    repaired: int
    linktypes: list[int]
    unsupported_frames: int
    ts_backwards: int
    unsupported_note: str | None
    first_ts_ns: int | None
    last_ts_ns: int | None


class TraceResult(TypedDict):
    """``TraceIngest.result()``: the capture's counts and its session table, {name: one value
    per session} for each of SESSION_COLUMNS."""

    capture: CaptureCounts
    sessions: dict[str, list[Any]]


SESSIONS = (
    "CREATE TABLE IF NOT EXISTS sessions (\n    session_id BIGINT NOT NULL,\n    capture_id INTEGER NOT NULL,\n    "
    + ",\n    ".join(f"{n} {t}" for n, t in SESSION_COLUMNS)
    + "\n)"
)

# Packet columns as Rust hands them over: (name, DuckDB type).
PACKET_COLUMNS: list[tuple[str, str]] = [
    ("frame", "UINTEGER"),
    ("ts_ns", "BIGINT"),
    ("dir", "UTINYINT"),
    ("tcp_flags", "UTINYINT"),
    ("seq", "UINTEGER"),
    ("ack", "UINTEGER"),
    ("win", "UINTEGER"),
    ("payload_len", "UINTEGER"),
    ("ip_len", "UINTEGER"),
    ("analysis", "USMALLINT"),
    ("rtt_us", "UINTEGER"),
    ("in_flight", "UINTEGER"),
]

PACKET_ROWS = (
    "CREATE TABLE IF NOT EXISTS packet_rows (\n    session_id BIGINT NOT NULL,\n    "
    + ",\n    ".join(f"{n} {t}" for n, t in PACKET_COLUMNS)
    + "\n)"
)

META = "CREATE TABLE IF NOT EXISTS trace_meta (key VARCHAR PRIMARY KEY, value VARCHAR)"


def packets_view(flag_names: list[tuple[int, str]]) -> str:
    """The `packets` view: every packet row plus a boolean per analysis flag."""
    flags = ",\n    ".join(f"(analysis & {bit}) <> 0 AS {name}" for bit, name in flag_names)
    return (
        "CREATE OR REPLACE VIEW packets AS SELECT\n    session_id, frame, ts_ns, dir, tcp_flags, seq, ack, win,\n"
        "    payload_len, ip_len, analysis, NULLIF(rtt_us, 0) AS rtt_us, NULLIF(in_flight, 0) AS in_flight,\n    "
        + flags
        + "\nFROM packet_rows"
    )
