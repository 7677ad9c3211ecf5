"""`rantcp trace`: ingest into DuckDB, agreement with tshark on rantcp's own lossy runs and on
hand-built captures, port reuse and mid-connection splits, malformed input, idempotent and
atomic ingest, graphs, gain tables and the report section. `make test` installs tshark."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import types
from pathlib import Path
from typing import Any, Literal, Union, get_args, get_origin, get_type_hints

import duckdb
import pytest

import rantcp.trace as trace
from rantcp import _native
from rantcp.trace.schema import SESSION_COLUMNS, CaptureCounts, TraceResult
from trace_helpers import (
    ACK,
    FIN,
    PSH,
    RST,
    SYN,
    TSHARK,
    assert_sessions_agree,
    compare_with_tshark,
    tcp_ipv4,
    write_pcap,
)

needs_tshark = pytest.mark.skipif(TSHARK is None, reason="tshark not installed (make test installs it)")

C, S = "10.0.0.1", "10.0.0.2"


def c2s(seq: int, ack: int, flags: int, payload: int = 0, sport: int = 40000, window: int = 65535) -> bytes:
    return tcp_ipv4(C, S, sport, 80, seq, ack, flags, payload, window)


def s2c(seq: int, ack: int, flags: int, payload: int = 0, dport: int = 40000, window: int = 65535) -> bytes:
    return tcp_ipv4(S, C, 80, dport, seq, ack, flags, payload, window)


T0 = 1_700_000_000.0


def port_reuse_pcap(path: Path) -> Path:
    """Two downloads on one 4-tuple: the second SYN follows the first connection's FIN."""
    recs = [
        (0.000, c2s(100, 0, SYN)),
        (0.010, s2c(5000, 101, SYN | ACK)),
        (0.020, c2s(101, 5001, ACK)),
        (0.021, s2c(5001, 101, ACK, 1000)),
        (0.022, s2c(6001, 101, ACK | PSH, 1000)),
        (0.031, c2s(101, 7001, ACK)),
        (0.040, s2c(7001, 101, ACK | FIN)),
        (0.050, c2s(101, 7002, ACK | FIN)),
        (0.060, s2c(7002, 102, ACK)),
        (1.000, c2s(90000, 0, SYN)),
        (1.010, s2c(123456, 90001, SYN | ACK)),
        (1.020, c2s(90001, 123457, ACK)),
        (1.021, s2c(123457, 90001, ACK, 500)),
        (1.031, c2s(90001, 123957, ACK)),
        (1.040, c2s(90001, 123957, ACK | RST)),
    ]
    return write_pcap(path, [(T0 + t, b) for t, b in recs])


def mid_connection_pcap(path: Path) -> Path:
    """A capture that starts after the handshake, with a loss and its recovery."""
    recs = [(0.000, s2c(5001, 101, ACK, 1000))]
    t = 0.001
    for i in range(1, 8):
        recs.append((t, s2c(5001 + 1000 * i, 101, ACK, 1000)))
        t += 0.001
    recs += [
        (0.020, c2s(101, 7001, ACK)),
        (0.021, c2s(101, 7001, ACK)),
        (0.022, c2s(101, 7001, ACK)),
        (0.023, c2s(101, 7001, ACK)),
        (0.024, s2c(7001, 101, ACK, 1000)),
        (0.040, c2s(101, 13001, ACK)),
    ]
    return write_pcap(path, [(T0 + t, b) for t, b in recs])


def ingest_one(tmp_path: Path, pcap: Path, **kw: object) -> tuple[duckdb.DuckDBPyConnection, int]:
    db = tmp_path / "t.duckdb"
    rep = trace.ingest([pcap], db, **kw)  # type: ignore[arg-type]
    assert [f.status for f in rep.files] == ["ingested"], rep.files
    con = duckdb.connect(str(db), read_only=True)
    return con, int(rep.files[0].capture_id or 0)


# ---------------------------------------------------------------- agreement with tshark


@pytest.fixture(scope="module")
def lossy_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("lossy") / "run"
    r = subprocess.run(
        [sys.executable, "-m", "rantcp.cli", "run", "builtin:p2p-bulk", "--set", "bottleneck.loss=1e-2",
         "--set", "output.pcap=true", "--set", "duration=8s", "--out", str(out), "--quiet"],
        capture_output=True, text=True, timeout=300,
    )
    assert r.returncode == 0, r.stderr
    return out


@needs_tshark
def test_lossy_rantcp_run_agrees_with_tshark_packet_by_packet(lossy_run: Path, tmp_path: Path) -> None:
    db = tmp_path / "t.duckdb"
    rep = trace.ingest([lossy_run], db)
    pcaps = sorted((lossy_run / "pcap").glob("*.pcap"))
    assert [Path(f.path).name for f in rep.files] == [p.name for p in pcaps]
    con = duckdb.connect(str(db), read_only=True)
    flagged = 0
    for f, pcap in zip(rep.files, pcaps):
        res = compare_with_tshark(con, int(f.capture_id or 0), pcap)
        assert res["differences"] == [], (pcap.name, res["differences"][:10])
        assert_sessions_agree(res)
        flagged += sum(s["retransmissions"][0] + s["dup_acks"][0] for s in res["sessions"])
    # The loss made something to compare: retransmissions and duplicate ACKs on every interface.
    assert flagged > 100
    # A rantcp run folder is classified by its summary.json.
    tags = dict(con.execute("SELECT key, value FROM tags WHERE capture_id = 1").fetchall())
    assert tags == {"source": "rantcp", "scenario": "p2p-bulk", "seed": "1", "interface": pcaps[0].stem}


@needs_tshark
def test_retransmission_counts_match_the_simulator(lossy_run: Path, tmp_path: Path) -> None:
    """At the sender's interface every retransmission rantcp made is seen once."""
    summary = json.loads((lossy_run / "summary.json").read_text())
    con, cid = ingest_one(tmp_path, lossy_run / "pcap" / "sender-eth0.pcap")
    retx, ooo = con.execute("SELECT retx_packets, out_of_order FROM sessions WHERE capture_id = ?", [cid]).fetchall()[0]
    # At the sender nothing is reordered; a retransmission sent within 3 ms of the highest
    # segment is "out-of-order" by the shared heuristic (module doc of rantcp_trace::analysis).
    assert retx + ooo == summary["flows"][0]["retransmitted_segments"]


@needs_tshark
def test_port_reuse_and_mid_connection_agree_with_tshark(tmp_path: Path) -> None:
    for name, make, expect in [
        ("reuse.pcap", port_reuse_pcap, [("new", False, 9), ("syn_after_close", False, 6)]),
        ("mid.pcap", mid_connection_pcap, [("new", True, 14)]),
    ]:
        pcap = make(tmp_path / name)
        db = tmp_path / f"{name}.duckdb"
        rep = trace.ingest([pcap], db)
        con = duckdb.connect(str(db), read_only=True)
        got = con.execute("SELECT start_reason, mid_connection, packets FROM sessions ORDER BY session").fetchall()
        assert got == expect
        res = compare_with_tshark(con, int(rep.files[0].capture_id or 0), pcap)
        assert res["differences"] == []
        assert_sessions_agree(res)


def test_port_reuse_sessions_exact(tmp_path: Path) -> None:
    con, _ = ingest_one(tmp_path, port_reuse_pcap(tmp_path / "r.pcap"))
    rows = con.execute(
        "SELECT session_id, client_port, server_port, data_bytes, fins, rsts, download_time_s, handshake_rtt_ms "
        "FROM sessions ORDER BY session_id").fetchall()
    assert rows[0][:6] == (0, 40000, 80, 2000, 2, 0)
    assert rows[1][:6] == (1, 40000, 80, 500, 0, 1)
    assert rows[0][6] == pytest.approx(0.010)  # first data 21 ms → its ACK at 31 ms
    assert rows[0][7] == pytest.approx(20.0)
    per_session = con.execute("SELECT session_id, count(*) FROM packets GROUP BY ALL ORDER BY 1").fetchall()
    assert per_session == [(0, 9), (1, 6)]


def test_mid_connection_metrics(tmp_path: Path) -> None:
    con, _ = ingest_one(tmp_path, mid_connection_pcap(tmp_path / "m.pcap"))
    s = con.execute("SELECT * FROM sessions").df().iloc[0]
    assert (s.mid_connection, s.client_port, s.data_dir) == (True, 40000, "s2c")
    assert (s.data_bytes, s.retx_packets, s.fast_retx, s.dup_acks) == (8000, 1, 1, 3)
    assert s.handshake_rtt_ms != s.handshake_rtt_ms  # NaN: no handshake seen
    flagged = con.execute("SELECT frame FROM packets WHERE fast_retransmission").fetchall()
    assert flagged == [(13,)]


# ---------------------------------------------------------------- malformed input


def test_malformed_files_one_line_each_exit_2_and_nothing_lost(tmp_path: Path, cli) -> None:
    db = tmp_path / "t.duckdb"
    good = port_reuse_pcap(tmp_path / "good.pcap")
    r = cli("trace", "ingest", str(good), "--db", str(db), "--quiet")
    assert r.returncode == 0, r.stderr
    before = duckdb.connect(str(db), read_only=True).execute("SELECT count(*) FROM packet_rows").fetchall()[0][0]

    garbage = tmp_path / "garbage.pcap"
    garbage.write_bytes(os.urandom(1000))
    wrong_magic = tmp_path / "magic.pcap"
    wrong_magic.write_bytes(b"\x00\x00\x00\x00" + good.read_bytes()[4:])
    empty = tmp_path / "empty.pcap"
    empty.write_bytes(b"")
    truncated = tmp_path / "truncated.pcap"
    whole = mid_connection_pcap(tmp_path / "m.pcap").read_bytes()
    truncated.write_bytes(whole[:-25])
    last_len = 16 + len(c2s(101, 13001, ACK))  # the last record: header + a 40-byte packet
    trunc_at, trunc_left = len(whole) - last_len, last_len - 25
    ip = c2s(1, 1, ACK, 10)
    bad_ihl = bytes([0x44]) + ip[1:]
    bad_off = ip[:32] + bytes([0xF0]) + ip[33:]
    odd = write_pcap(tmp_path / "odd.pcap", [
        (T0, c2s(100, 0, SYN)),
        (T0 + 0.001, b""),                 # zero-length record
        (T0 + 0.002, bad_ihl),             # IPv4 header length 16 < 20
        (T0 + 0.003, bad_off[:45], len(ip)),  # TCP data offset beyond the packet
        (T0 + 0.004, s2c(500, 101, SYN | ACK)),
    ])
    r = cli("trace", "ingest", str(garbage), str(wrong_magic), str(empty), str(truncated), str(odd),
            str(tmp_path / "missing.pcap"), "--db", str(db), "--quiet")
    assert r.returncode == 2
    lines = r.stderr.strip().splitlines()
    assert lines == [
        f"rantcp: error: {tmp_path / 'missing.pcap'}: no such file or folder",
        f"rantcp: error: {garbage}: not a pcap or pcapng file (unknown magic number)",
        f"rantcp: error: {wrong_magic}: not a pcap or pcapng file (unknown magic number)",
        f"rantcp: error: {empty}: not a pcap or pcapng file (empty file)",
        f"rantcp: warning: {truncated}: truncated: file ends inside record 14 at byte {trunc_at} "
        f"({trunc_left} of its bytes present); 13 frames before it were read",
        f"rantcp: warning: {odd}: 3 of 5 frames malformed (an IP or TCP header damaged or cut short by the "
        "snapshot length)",
    ]
    assert "Traceback" not in r.stderr
    con = duckdb.connect(str(db), read_only=True)
    caps = con.execute("SELECT path, frames, tcp_packets, malformed, truncated FROM captures ORDER BY capture_id").fetchall()
    assert [Path(c[0]).name for c in caps] == ["good.pcap", "truncated.pcap", "odd.pcap"]
    assert caps[2][1:] == (5, 2, 3, False)
    assert caps[1][1:] == (13, 13, 0, True)
    assert con.execute("SELECT count(*) FROM packet_rows").fetchall()[0][0] == before + 13 + 2


def test_not_a_database_is_one_line(tmp_path: Path, cli) -> None:
    bad = tmp_path / "t.duckdb"
    bad.write_text("not a database")
    for args in (["ingest", str(port_reuse_pcap(tmp_path / "a.pcap"))], ["sessions"], ["graph", "--session", "0"]):
        r = cli("trace", *args, "--db", str(bad))
        assert r.returncode == 2
        assert r.stderr.startswith(f"rantcp: error: trace database '{bad}': ") and r.stderr.count("\n") == 1, r.stderr
    assert bad.read_text() == "not a database"


def test_ingest_is_idempotent_by_content(tmp_path: Path, cli) -> None:
    db = tmp_path / "t.duckdb"
    a = port_reuse_pcap(tmp_path / "a.pcap")
    copy = tmp_path / "renamed.pcap"
    copy.write_bytes(a.read_bytes())
    assert cli("trace", "ingest", str(a), "--db", str(db), "--quiet").returncode == 0
    r = cli("trace", "ingest", str(a), str(copy), "--db", str(db))
    assert r.returncode == 0
    assert "0 ingested, 2 skipped" in r.stdout
    con = duckdb.connect(str(db), read_only=True)
    assert con.execute("SELECT count(*) FROM captures").fetchall()[0][0] == 1
    assert con.execute("SELECT count(*) FROM sessions").fetchall()[0][0] == 2


def test_interrupted_ingest_leaves_no_half_capture(tmp_path: Path) -> None:
    db = tmp_path / "t.duckdb"
    first = port_reuse_pcap(tmp_path / "first.pcap")
    big = tmp_path / "big.pcap"
    _native.trace_write_synthetic(str(big), 300_000)
    trace.ingest([first], db)

    def interrupt(_: int) -> None:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        trace.ingest([big], db, chunk_rows=50_000, on_packets=interrupt)
    con = duckdb.connect(str(db), read_only=True)
    assert con.execute("SELECT count(*) FROM captures").fetchall()[0][0] == 1
    assert con.execute("SELECT count(*) FROM packet_rows").fetchall()[0][0] == 15
    con.close()

    # A killed process (SIGKILL in the middle of the insert): the next open rolls back.
    code = (
        "import rantcp.trace as t, os, signal\n"
        "n = [0]\n"
        "def tick(k):\n"
        "    n[0] += k\n"
        "    if n[0] >= 100_000: os.kill(os.getpid(), signal.SIGKILL)\n"
        f"t.ingest([{str(big)!r}], {str(db)!r}, chunk_rows=50_000, on_packets=tick)\n"
    )
    p = subprocess.run([sys.executable, "-c", code], timeout=300)
    assert p.returncode == -signal.SIGKILL
    rep = trace.ingest([big], db)  # resumes: the killed capture is ingested whole
    assert [f.status for f in rep.files] == ["ingested"]
    con = duckdb.connect(str(db), read_only=True)
    assert con.execute("SELECT count(*) FROM captures").fetchall()[0][0] == 2
    assert con.execute("SELECT count(*) FROM packet_rows").fetchall()[0][0] == 15 + rep.files[0].packets


# ---------------------------------------------------------------- tags, compare, graphs


def download_pcap(path: Path, rate_bps: float, size: int = 100_000, sport: int = 40000) -> Path:
    """A clean download of `size` bytes at `rate_bps` (one 1000-byte segment per ACK)."""
    dt = 1000 * 8 / rate_bps
    recs = [(0.0, c2s(1, 0, SYN, sport=sport)), (0.01, s2c(1000, 2, SYN | ACK, dport=sport)),
            (0.02, c2s(2, 1001, ACK, sport=sport))]
    t = 0.02
    for i in range(size // 1000):
        t += dt
        recs.append((t, s2c(1001 + 1000 * i, 2, ACK, 1000, dport=sport)))
    recs.append((t + 0.001, c2s(2, 1001 + size, ACK, sport=sport)))
    return write_pcap(path, [(T0 + x, b) for x, b in recs])


def test_manifest_pattern_and_weighted_gain_table(tmp_path: Path, cli) -> None:
    # Region R1: site NC gains 100 %, FC gains 50 %; region R2: NC 0 %, FC 20 %.
    rates = {("R1", "NC", "off"): 10e6, ("R1", "NC", "on"): 20e6, ("R1", "FC", "off"): 4e6, ("R1", "FC", "on"): 6e6,
             ("R2", "NC", "off"): 10e6, ("R2", "NC", "on"): 10e6, ("R2", "FC", "off"): 5e6, ("R2", "FC", "on"): 6e6}
    caps = tmp_path / "caps"
    caps.mkdir()
    for n, ((region, site, opt), rate) in enumerate(rates.items()):
        for rep in range(2):
            # Distinct ports: identical bytes would be skipped as the same capture.
            download_pcap(caps / f"{region}_{site}_{opt}_{rep}.pcap", rate, sport=40000 + 2 * n + rep)
    manifest = tmp_path / "manifest.csv"
    manifest.write_text("file,technology\n*_on_*,LTE\n*,LTE\n")
    db = tmp_path / "t.duckdb"
    r = cli("trace", "ingest", str(caps), "--db", str(db), "--manifest", str(manifest),
            "--pattern", "{region}_{site}_{optimisation}_{rep}.pcap", "--quiet")
    assert r.returncode == 0, r.stderr
    df = trace.sessions(db)
    assert len(df) == 16
    assert set(df.technology) == {"LTE"}
    weights = tmp_path / "w.toml"
    weights.write_text('group_by = "region"\n[weights.site]\nNC = { weight = 0.25 }\nFC = { weight = 0.75 }\n')
    t = trace.compare(db, "optimisation", weights=weights, baseline="off", treatment="on")
    got = {row.group: row.gain_pct for row in t.table.itertuples()}

    def tput(rate: float) -> float:
        # First data segment to the ACK of the last byte: 99 segment intervals plus 1 ms.
        return 100_000 * 8 / (99 * 8000 / rate + 0.001)

    def gain(region: str, site: str) -> float:
        return (tput(rates[(region, site, "on")]) / tput(rates[(region, site, "off")]) - 1) * 100

    r1 = 0.25 * gain("R1", "NC") + 0.75 * gain("R1", "FC")
    r2 = 0.25 * gain("R2", "NC") + 0.75 * gain("R2", "FC")
    assert got["R1"] == pytest.approx(r1, rel=1e-9)
    assert got["R2"] == pytest.approx(r2, rel=1e-9)
    assert got["overall"] == pytest.approx((r1 + r2) / 2, rel=1e-9)
    assert (round(r1), round(r2)) == (62, 15)  # ≈ 0.25·100 + 0.75·50 and 0.25·0 + 0.75·20
    assert list(t.table.sessions_baseline) == [4, 4, 8]
    # Identical repetitions: the bootstrap interval collapses onto the estimate.
    assert t.table.ci_low_pct.iloc[0] == pytest.approx(r1, rel=1e-9)
    assert t.table.ci_high_pct.iloc[0] == pytest.approx(r1, rel=1e-9)
    r = cli("trace", "compare", "--db", str(db), "--by", "optimisation", "--weights", str(weights))
    assert r.returncode == 0, r.stderr
    assert "'on' over 'off'" in r.stdout and "overall" in r.stdout
    r = cli("trace", "compare", "--db", str(db), "--by", "nosuchtag")
    assert r.returncode == 2
    assert r.stderr.startswith("rantcp: error: no tag or column 'nosuchtag'")


def test_graph_command_writes_pngs(lossy_run: Path, tmp_path: Path, cli) -> None:
    db = tmp_path / "t.duckdb"
    trace.ingest([lossy_run / "pcap" / "sender-eth0.pcap"], db)
    r = cli("trace", "graph", "--db", str(db), "--session", "0", "--kind", "all", "--out", str(tmp_path / "g.png"))
    assert r.returncode == 0, r.stderr
    for kind in ("sequence", "throughput", "rtt", "inflight"):
        png = tmp_path / f"g-{kind}.png"
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    r = cli("trace", "graph", "--db", str(db), "--session", "99")
    assert r.returncode == 2
    assert r.stderr.strip() == "rantcp: error: no session 99 in the database (see `rantcp trace sessions`)"


def test_trace_cli_import_stays_light() -> None:
    """Registering the trace commands adds no heavy module to what `import rantcp` loads."""
    code = (
        "import sys, rantcp; before = set(sys.modules); import rantcp.trace.cli; "
        "print(sorted(m.split('.')[0] for m in set(sys.modules) - before if not m.startswith('rantcp')))"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    added = set(eval(r.stdout))
    assert not added & {"duckdb", "pyarrow", "matplotlib", "numpy", "pandas", "rich"}, added


def test_report_trace_section(lossy_run: Path, tmp_path: Path) -> None:
    from rantcp.report import render_run, render_trace

    db = tmp_path / "t.duckdb"
    trace.ingest([lossy_run / "pcap" / "receiver-eth0.pcap"], db)
    html = render_trace(db)
    assert ">Trace analysis</h2>" in html
    assert "data:image/png;base64," in html
    assert "10.0.0.1:49152 → 10.0.1.1:5201" in html
    # A run folder with pcaps: the section follows the run's own, figures numbered on.
    page = render_run(lossy_run)
    assert ">Trace analysis</h2>" in page
    assert "Time-sequence graph of session" in page


def test_large_synthetic_capture_ingests_whole(tmp_path: Path) -> None:
    """The bench's synthetic capture (64 interleaved bulk downloads with loss), 200k packets end
    to end: every packet stored, one session per download. Its speed is the benchmark's
    (`make bench` prints packets/s for 10 M packets), not asserted here: a floor of 100k
    packets/s was only 3x below this machine's first ingest in a process (310k/s; 1.0 M/s
    warm), so a slower or busier CI machine could fail it with nothing wrong."""
    big = tmp_path / "s.pcap"
    _native.trace_write_synthetic(str(big), 200_000)
    db = tmp_path / "t.duckdb"
    rep = trace.ingest([big], db)
    assert [f.status for f in rep.files] == ["ingested"]
    assert rep.packets == 200_000
    con = duckdb.connect(str(db), read_only=True)
    assert con.execute("SELECT count(*) FROM packet_rows").fetchall() == [(200_000,)]
    assert con.execute("SELECT count(*) FROM sessions").fetchall() == [(64,)]


def _conforms(v: object, t: Any) -> bool:
    """Whether `v` is a value of the annotation `t` (the few forms CaptureCounts uses)."""
    origin, args = get_origin(t), get_args(t)
    if origin in (Union, types.UnionType):
        return any(_conforms(v, a) for a in args)
    if origin is Literal:
        return v in args
    if origin is list:
        return isinstance(v, list) and all(_conforms(x, args[0]) for x in v)
    if t is type(None):
        return v is None
    return type(v) is t  # bool is not an int here


def test_the_native_result_is_what_its_type_says(tmp_path: Path) -> None:
    """`TraceIngest.result()` against its TypedDict (rantcp.trace.schema.TraceResult, which the
    stub and so `make typecheck` hold its users to): the same keys, each value of its type, and
    one column per session column."""
    pcap = port_reuse_pcap(tmp_path / "p.pcap")
    it = _native.trace_open(str(pcap))
    while it.next_chunk() is not None:
        pass
    res = it.result()
    assert set(res) == set(get_type_hints(TraceResult))
    hints = get_type_hints(CaptureCounts)
    cap: dict[str, Any] = dict(res["capture"])
    assert set(cap) == set(hints)
    wrong = {k: v for k, v in cap.items() if not _conforms(v, hints[k])}
    assert not wrong, wrong
    sess = res["sessions"]
    assert list(sess) == [n for n, _ in SESSION_COLUMNS]
    assert {len(c) for c in sess.values()} == {2}


def test_uncompressed_ingest_stores_the_same_rows(tmp_path: Path) -> None:
    pcap = mid_connection_pcap(tmp_path / "m.pcap")
    trace.ingest([pcap], tmp_path / "a.duckdb")
    trace.ingest([pcap], tmp_path / "b.duckdb", compress=False)
    a = duckdb.connect(str(tmp_path / "a.duckdb"), read_only=True)
    b = duckdb.connect(str(tmp_path / "b.duckdb"), read_only=True)
    for sql in ("SELECT * FROM packets ORDER BY frame", "SELECT * EXCLUDE (path) FROM sessions JOIN captures USING (capture_id)"):
        x, y = a.execute(sql).df(), b.execute(sql).df()
        assert x.drop(columns=[c for c in x.columns if c == "ingest_s"]).equals(y.drop(columns=[c for c in y.columns if c == "ingest_s"]))


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--manifest", "MISSING"], "manifest 'MISSING' not found"),
        (["--manifest", "BADHEAD"], "the first column must be headed 'file' (a glob), the others tag names"),
        (["--pattern", "{a}_{a}.pcap"], "--pattern '{a}_{a}.pcap': {a} must be a new name of letters, digits and _"),
        (["--pattern", "plain.pcap"], "--pattern 'plain.pcap': give at least one {tag}"),
        (["--tag", "novalue"], "--tag 'novalue': expected KEY=VALUE"),
        (["--idle-split", "0"], "--idle-split 0.0: must be a positive number of seconds"),
    ],
)
def test_bad_ingest_options_are_one_line(tmp_path: Path, cli, args: list[str], message: str) -> None:
    (tmp_path / "BADHEAD").write_text("name,region\nx,R1\n")
    pcap = port_reuse_pcap(tmp_path / "a.pcap")
    args = [str(tmp_path / a) if a in ("MISSING", "BADHEAD") else a for a in args]
    message = message.replace("'MISSING'", repr(str(tmp_path / "MISSING")))
    r = cli("trace", "ingest", str(pcap), "--db", str(tmp_path / "t.duckdb"), *args)
    assert r.returncode == 2
    assert r.stderr.strip().endswith(message), r.stderr
    assert r.stderr.count("\n") == 1
