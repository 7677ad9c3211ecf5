"""`rantcp trace ingest` on damaged and unusual captures (the regression inputs of a seeded fuzzing
pass, built here byte by byte): every input ends in exit 0 with sensible rows, or exit 2 with one
line naming the file and what is wrong; never a traceback; a database that already holds a
capture keeps it exactly. The crate's own fuzzer is crates/trace/tests/fuzz.rs."""

from __future__ import annotations

import gzip
import random
import re
import shutil
import struct
import subprocess
from pathlib import Path

import duckdb
import pytest

from rantcp.cli import main
from trace_helpers import ACK, FIN, PSH, SYN, tcp_ipv4

T0 = 1_700_000_000
C, S = "10.0.0.1", "10.0.0.2"


def tcp_ts(src: str, dst: str, sport: int, dport: int, seq: int, ack: int, flags: int, payload: int,
           tsval: int) -> bytes:
    """IPv4/TCP with the timestamps option (a 32-byte TCP header, as Linux sends)."""
    opts = bytes([1, 1, 8, 10]) + struct.pack("!II", tsval, tsval)
    tcp = struct.pack("!HHIIBBHHH", sport, dport, seq % 2**32, ack % 2**32, 8 << 4, flags, 65535, 0, 0) + opts
    total = 20 + len(tcp) + payload
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, total, 0, 0x4000, 64, 6, 0,
                     bytes(map(int, src.split("."))), bytes(map(int, dst.split("."))))
    return ip + tcp + bytes(payload)


def conversation(isn_c: int = 100, isn_s: int = 5000, ts: bool = True) -> list[bytes]:
    """Handshake, 10 × 1448 bytes of server data (one resent), ACKs, FINs."""
    def pkt(src: str, dst: str, sport: int, dport: int, seq: int, ack: int, fl: int, n: int, tsval: int) -> bytes:
        if ts:
            return tcp_ts(src, dst, sport, dport, seq, ack, fl, n, tsval)
        return tcp_ipv4(src, dst, sport, dport, seq, ack, fl, n)

    c = lambda seq, ack, fl, n=0: pkt(C, S, 40000, 80, isn_c + seq, isn_s + ack, fl, n, 7)  # noqa: E731
    s = lambda seq, ack, fl, n=0: pkt(S, C, 80, 40000, isn_s + seq, isn_c + ack, fl, n, 9)  # noqa: E731
    out = [c(0, -isn_s, SYN), s(0, 1, SYN | ACK), c(1, 1, ACK)]
    for i in range(10):
        out.append(s(1 + 1448 * i, 1, ACK | PSH, 1448))
        if i % 2:
            out.append(c(1, 1 + 1448 * (i + 1), ACK))
    out += [s(1 + 1448 * 9, 1, ACK, 1448), c(1, 1 + 14480, ACK | FIN), s(14481, 2, ACK | FIN), c(2, 14482, ACK)]
    return out


def eth(ip: bytes) -> bytes:
    return b"\x02" * 6 + b"\x04" * 6 + b"\x08\x00" + ip


def pcap(frames: list[bytes], linktype: int = 101, snaplen: int = 65535, endian: str = "<",
         magic: int = 0xA1B2C3D4, times: list[float] | None = None) -> bytes:
    out = bytearray(struct.pack(endian + "IHHiIII", magic, 2, 4, 0, 0, snaplen, linktype))
    for i, f in enumerate(frames):
        t = times[i] if times else i * 0.001
        incl = min(len(f), snaplen)
        out += struct.pack(endian + "IIII", T0 + int(t), round((t % 1) * 1e6), incl, len(f)) + f[:incl]
    return bytes(out)


def block(kind: int, body: bytes) -> bytes:
    body += b"\0" * (-len(body) % 4)
    n = 12 + len(body)
    return struct.pack("<II", kind, n) + body + struct.pack("<I", n)


def pcapng(interfaces: list[int], packets: list[tuple[int, bytes]]) -> bytes:
    out = block(0x0A0D0D0A, struct.pack("<IHHq", 0x1A2B3C4D, 1, 0, -1))
    for lt in interfaces:
        out += block(1, struct.pack("<HHI", lt, 0, 0))
    for i, (iface, f) in enumerate(packets):
        ts = (T0 + i) * 10**6
        out += block(6, struct.pack("<IIIII", iface, ts >> 32, ts & 0xFFFFFFFF, len(f), len(f)) + f)
    return out


# ---------------------------------------------------------------- harness


@pytest.fixture
def db(tmp_path: Path) -> Path:
    """A database already holding one good capture."""
    d = tmp_path / "t.duckdb"
    good = tmp_path / "good.pcap"
    good.write_bytes(pcap(conversation()))
    assert main(["trace", "ingest", str(good), "--db", str(d), "--quiet"]) == 0
    return d


def contents(d: Path) -> tuple:
    con = duckdb.connect(str(d), read_only=True)
    try:
        return (con.execute("SELECT * FROM captures ORDER BY capture_id").fetchall(),
                con.execute("SELECT count(*), sum(seq), sum(ts_ns) FROM packet_rows").fetchall(),
                con.execute("SELECT count(*), sum(packets) FROM sessions").fetchall())
    finally:
        con.close()


def ingest(d: Path, path: Path, data: bytes, capsys: pytest.CaptureFixture[str]) -> tuple[int, list[str]]:
    """Ingest one input through the CLI in-process; check the pass condition; return (exit, stderr
    lines without the 'rantcp: error|warning: PATH: ' prefix)."""
    path.write_bytes(data)
    before = contents(d)
    capsys.readouterr()
    rc = main(["trace", "ingest", str(path), "--db", str(d), "--quiet"])
    err = capsys.readouterr().err.strip().splitlines()
    assert "Traceback" not in "\n".join(err)
    after = contents(d)
    if rc == 2:
        assert len(err) == 1 and err[0].startswith(f"rantcp: error: {path}: "), err
        assert after == before, "a failed ingest changed the database"
    else:
        assert rc == 0, (rc, err)
        assert len(err) <= 1 and all(e.startswith(f"rantcp: warning: {path}: ") for e in err), err
        # Ingested (one capture more) or skipped (the same content is already there).
        assert after[0][: len(before[0])] == before[0] and len(after[0]) - len(before[0]) in (0, 1)
        # The rows stored agree with the capture's counts.
        assert after[1][0][0] == sum(c[7] for c in after[0])
    return rc, [re.sub(r"^rantcp: (error|warning): .*?: ", "", e, count=1) for e in err]


def last_capture(d: Path) -> dict:
    con = duckdb.connect(str(d), read_only=True)
    try:
        cur = con.execute("SELECT * FROM captures ORDER BY capture_id DESC LIMIT 1")
        names = [c[0] for c in cur.description]
        return dict(zip(names, cur.fetchall()[0]))
    finally:
        con.close()


def last_sessions(d: Path) -> list[tuple]:
    con = duckdb.connect(str(d), read_only=True)
    try:
        return con.execute(
            "SELECT packets, data_bytes, retx_packets, duration_s, download_time_s, rtt_min_ms FROM sessions "
            "WHERE capture_id = (SELECT max(capture_id) FROM captures) ORDER BY session_id").fetchall()
    finally:
        con.close()


# ---------------------------------------------------------------- container damage

GOOD = pcap(conversation())
REC1 = 24  # the first record of GOOD
NG_TWO = pcapng([101, 101], [(i % 2, f) for i, f in enumerate(conversation())])


def _set(b: bytes, off: int, fmt: str, v: int) -> bytes:
    m = bytearray(b)
    struct.pack_into(fmt, m, off, v)
    return bytes(m)


CONTAINER = [
    ("empty", b"", 2, r"not a pcap or pcapng file \(empty file\)"),
    ("header-cut", GOOD[:23], 2, r"not a pcap or pcapng file \(file shorter than a capture header\)"),
    ("wrong-magic", b"\0\1\2\3" + GOOD[4:], 2, r"not a pcap or pcapng file \(unknown magic number\)"),
    ("gzip", gzip.compress(GOOD, mtime=0), 2, r"\(gzip-compressed; decompress it first: gunzip -k FILE\)"),
    ("zstd-magic", b"\x28\xb5\x2f\xfd" + GOOD, 2, r"\(zstd-compressed; decompress it first: zstd -d FILE\)"),
    ("caplen-absurd", _set(GOOD, REC1 + 8, "<I", 0xFFFFFFFF), 0,
     r"^truncated: record 1 at byte 24: captured length 4294967295 is larger than the 1 MiB limit "
     r"\(damaged file\); 0 frames before it were read$"),
    # The SYN record is 16 + 52 bytes: record 2 starts at byte 92.
    ("cut-in-record-header", GOOD[: REC1 + 16 + 52 + 8], 0,
     r"^truncated: file ends inside record 2 at byte 92 \(8 of its bytes present\); 1 frames before it were read$"),
    ("zero-length-records", pcap([b"", b"", conversation()[0]]), 0, r"^2 of 3 frames malformed \("),
    ("big-endian", pcap(conversation(), endian=">"), 0, None),
    ("nanosecond-magic", pcap(conversation(), magic=0xA1B23C4D), 0, None),
    ("radiotap-only", pcap([b"\0\0\x08\0\0\0\0\0"] * 3, linktype=127), 2,
     r"^link type 127 is not decoded \(supported: 0 NULL, 1 ETHERNET, 12 RAW, 14 RAW, 101 RAW, 108 LOOP, "
     r"113 LINUX_SLL, 228 IPV4, 229 IPV6, 276 LINUX_SLL2\)$"),
    ("pcapng-two-linktypes", pcapng([1, 127], [(0, eth(f)) if i % 3 else (1, b"\0" * 8)
                                               for i, f in enumerate(conversation())]), 0,
     r"^\d+ frames skipped: link type 127 is not decoded \(supported: .*\)$"),
    ("pcapng-unknown-block", NG_TWO[:28] + block(0x0BADCAFE, b"hello") + NG_TWO[28:], 0, None),
    # Section header 28 bytes, two interface blocks of 20: the first packet block (84 bytes: a
    # 52-byte SYN) starts at byte 68.
    ("pcapng-trailer-mismatch", _set(NG_TWO, 68 + 84 - 4, "<I", 88), 0,
     r"^truncated: the block at byte 68 \(after record 0\): malformed block \(length 84 at its start, 88 at its end\)"),
    ("pcapng-length-odd", _set(NG_TWO, 68 + 4, "<I", 13), 0,
     r"malformed block \(length 13 is not a multiple of 4\)"),
]


@pytest.mark.parametrize("name,data,status,message", CONTAINER, ids=[c[0] for c in CONTAINER])
def test_damaged_containers(tmp_path: Path, db: Path, capsys, name: str, data: bytes, status: int,
                            message: str | None) -> None:
    rc, err = ingest(db, tmp_path / f"{name}.pcap", data, capsys)
    assert rc == status, err
    if message is None:
        assert err == []
    else:
        assert len(err) == 1 and re.search(message, err[0]), err


def test_mixed_linktypes_keep_the_decodable_interface(tmp_path: Path, db: Path, capsys) -> None:
    conv = conversation()
    data = pcapng([1, 127], [(0, eth(f)) for f in conv] + [(1, b"\0" * 8)] * 2)
    rc, err = ingest(db, tmp_path / "mixed.pcapng", data, capsys)
    assert rc == 0 and err[0].startswith("2 frames skipped: link type 127 is not decoded")
    cap = last_capture(db)
    assert (cap["frames"], cap["tcp_packets"], cap["linktypes"]) == (len(conv) + 2, len(conv), "1,127")


# ---------------------------------------------------------------- packets inside valid files


def test_snaplen_54_64_96_keep_every_segment(tmp_path: Path, db: Path, capsys) -> None:
    """tcpdump -s 54/64 keeps the fixed TCP header but cuts the timestamps option: each segment
    is still read (as tshark reads it) and the sessions are those of the full capture."""
    frames = [eth(f) for f in conversation()]
    assert ingest(db, tmp_path / "full.pcap", pcap(frames, linktype=1), capsys)[0] == 0
    full = last_sessions(db)
    for snap in (54, 64, 96):
        rc, err = ingest(db, tmp_path / f"s{snap}.pcap", pcap(frames, linktype=1, snaplen=snap), capsys)
        assert (rc, err) == (0, [])
        cap = last_capture(db)
        assert (cap["tcp_packets"], cap["malformed"]) == (len(frames), 0), snap
        got = last_sessions(db)
        # The same packets, bytes, retransmissions and times; the timestamps option is cut at
        # 54 and 64, so only RTTs from sequence numbers remain (the same ones).
        assert got == full, snap
    # -s 40 leaves 6 bytes of TCP header: nothing to read, and the warning says why.
    rc, err = ingest(db, tmp_path / "s40.pcap", pcap(frames, linktype=1, snaplen=40), capsys)
    n = len(frames)
    assert (rc, err) == (0, [f"{n} of {n} frames malformed (an IP or TCP header damaged or cut short by the "
                             "snapshot length)"])


def test_damaged_headers_are_counted_not_fatal(tmp_path: Path, db: Path, capsys) -> None:
    conv = conversation()
    data = conv[3]  # a data segment
    damaged = [
        bytes([0x44]) + data[1:],  # IHL 16 < 20
        bytes([0x4F]) + data[1:],  # IHL 60: TCP header inside the data
        data[:32] + bytes([0x40]) + data[33:],  # data offset 16 < 20
        data[:32] + bytes([0xF0]) + data[33:50],  # data offset 60 beyond a 50-byte cut
        data[:20] + b"\xff" * 10,  # TCP header cut at 10 bytes
        data[:40] + bytes([2, 0]) + data[42:],  # option length 0 (mss)
        data[:40] + bytes([2, 1]) + data[42:],  # option length 1
        data[:40] + bytes([5, 255]) + data[42:],  # SACK running past the header
        data[:40] + bytes([5, 7]) + data[42:],  # SACK of an odd length
        data[:6] + b"\x20\x00" + data[8:],  # first fragment (MF)
        data[:6] + b"\x00\xb9" + data[8:],  # a later fragment: no TCP header
    ]
    rc, err = ingest(db, tmp_path / "headers.pcap", pcap(conv[:3] + damaged + conv[3:]), capsys)
    n = len(conv) + len(damaged)
    assert (rc, err) == (0, [f"5 of {n} frames malformed (an IP or TCP header damaged or cut short by the snapshot "
                             "length)"])
    cap = last_capture(db)
    # Malformed: IHL 16, IHL 60 (its "TCP header" has data offset 0), offset 16, offset 60,
    # the 10-byte TCP header. The option damage ends the option walk only; the later fragment
    # is not TCP.
    assert (cap["malformed"], cap["not_tcp"], cap["tcp_packets"]) == (5, 1, len(conv) + 5)


def test_vlan_stack_sll_sll2_ipv6_agree(tmp_path: Path, db: Path, capsys) -> None:
    conv = conversation()
    assert ingest(db, tmp_path / "raw.pcap", pcap(conv), capsys)[0] == 0
    want = last_sessions(db)

    def v6(ip: bytes) -> bytes:
        ihl = (ip[0] & 15) * 4
        plen = struct.unpack_from("!H", ip, 2)[0] - ihl
        a = lambda x: b"\xfd" + b"\0" * 11 + x  # noqa: E731
        return struct.pack("!IHBB", 0x60000000, plen, 6, 64) + a(ip[12:16]) + a(ip[16:20]) + ip[ihl:]

    variants = {
        "qinq": (1, [b"\2" * 6 + b"\4" * 6 + b"\x88\xa8\0\1\x81\0\0\7\x08\0" + f for f in conv]),
        "sll": (113, [b"\0\0\0\1\0\6" + b"\2" * 8 + b"\x08\x00" + f for f in conv]),
        "sll2": (276, [b"\x08\x00\0\0\0\0\0\2\0\1\0\6" + b"\2" * 8 + f for f in conv]),
        "ipv6": (101, [v6(f) for f in conv]),
    }
    for name, (lt, frames) in variants.items():
        rc, err = ingest(db, tmp_path / f"{name}.pcap", pcap(frames, linktype=lt), capsys)
        assert (rc, err) == (0, []), name
        assert last_sessions(db) == want, name
    # A frame that is nothing but VLAN tags: malformed, not a crash.
    rc, err = ingest(db, tmp_path / "tags.pcap", pcap([b"\2" * 12 + b"\x81\0\0\7" * 40], linktype=1), capsys)
    assert (rc, err[0][:25]) == (0, "1 of 1 frames malformed (") and last_capture(db)["malformed"] == 1


def test_sequence_wraparound_changes_nothing(tmp_path: Path, db: Path, capsys) -> None:
    assert ingest(db, tmp_path / "plain.pcap", pcap(conversation()), capsys)[0] == 0
    want = last_sessions(db)
    for isn_s in (2**32 - 3000, 2**32 - 1, 2**31 - 5):
        rc, err = ingest(db, tmp_path / f"wrap{isn_s}.pcap", pcap(conversation(isn_s=isn_s, isn_c=2**32 - 1)), capsys)
        assert (rc, err) == (0, [])
        assert last_sessions(db) == want, isn_s


def test_timestamps_out_of_order_and_duplicates(tmp_path: Path, db: Path, capsys) -> None:
    conv = conversation()
    n = len(conv)
    rc, err = ingest(db, tmp_path / "backwards.pcap", pcap(conv, times=[(n - i) * 0.01 for i in range(n)]), capsys)
    assert rc == 0 and err == [f"{n - 1} frames have an earlier timestamp than the frame before (analysed in file order)"]
    for packets, data_bytes, _retx, duration, download, rtt in last_sessions(db):
        assert duration >= 0 and (download is None or download >= 0) and (rtt is None or rtt >= 0)
    assert ingest(db, tmp_path / "dup.pcap", pcap([f for f in conv for _ in (0, 1)]), capsys)[0] == 0
    (packets, data_bytes, retx, *_), = last_sessions(db)
    # Each data segment and SYN/FIN seen twice: the copies are retransmissions, as is the
    # conversation's own resent segment and its copy (tshark flags the same 16).
    assert (packets, data_bytes) == (2 * n, 14480)
    assert retx == 1 + sum(1 for f in conv if len(f) > 52 or f[33] & (SYN | FIN)) == 16


# ---------------------------------------------------------------- seeded mutation


def test_seeded_mutations_pass(tmp_path: Path, db: Path, capsys) -> None:
    """Byte flips, 32-bit fields set to extremes and truncation on a pcap and a pcapng: every
    input passes (exit 0 or one-line exit 2, the database intact). 60 inputs, seed fixed."""
    rng = random.Random(20261128)
    seeds = [GOOD, NG_TWO, pcap([eth(f) for f in conversation()], linktype=1, snaplen=64)]
    for i in range(60):
        m = bytearray(seeds[i % 3])
        for _ in range(rng.randint(1, 4)):
            at = rng.randrange(len(m) - 4)
            if rng.random() < 0.5:
                m[at] = rng.randrange(256)
            else:
                struct.pack_into("<I", m, at, rng.choice([0, 1, 11, 12, 0xFFFFFFFF, 0x80000000]))
        if rng.random() < 0.3:
            del m[rng.randrange(len(m)):]
        ingest(db, tmp_path / f"m{i}.pcap", bytes(m), capsys)


@pytest.mark.skipif(shutil.which("tshark") is None, reason="tshark not installed")
def test_tshark_reads_the_snaplen_cut_segments_we_read(tmp_path: Path) -> None:
    """The reference for the snaplen rule: tshark decodes every segment of a -s 54 capture."""
    p = tmp_path / "s54.pcap"
    p.write_bytes(pcap([eth(f) for f in conversation()], linktype=1, snaplen=54))
    out = subprocess.run(["tshark", "-r", str(p), "-T", "fields", "-e", "tcp.len"], capture_output=True,
                         text=True, timeout=60).stdout.split()
    assert sum(map(int, out)) == 14480 + 1448 and len(out) == len(conversation())


def tcp_wscale(src: str, dst: str, sport: int, dport: int, seq: int, ack: int, flags: int, payload: int,
               window: int, wscale: int | None) -> bytes:
    """IPv4/TCP with MSS, SACK-permitted, timestamps and (if given) window scale, as a Linux SYN."""
    opts = bytes([2, 4, 0x05, 0xB4, 4, 2, 8, 10]) + struct.pack("!II", 1, 0)
    opts += bytes([1, 3, 3, wscale]) if wscale is not None else bytes([1, 1, 1, 1])
    tcp = struct.pack("!HHIIBBHHH", sport, dport, seq % 2**32, ack % 2**32, (20 + len(opts)) // 4 << 4, flags,
                      window, 0, 0) + opts
    total = 20 + len(tcp) + payload
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, total, 0, 0x4000, 64, 6, 0,
                     bytes(map(int, src.split("."))), bytes(map(int, dst.split("."))))
    return ip + tcp + bytes(payload)


def test_snaplen_that_cuts_the_syn_options_leaves_the_window_scale_unknown(tmp_path: Path, db: Path, capsys) -> None:
    """tcpdump -s 54 keeps no option of a SYN: the window scale is unknown. It was read as
    "negotiated off" (the client's 1000-unit window reported as 1000 bytes, 128x too small); now
    `wscale_*` is -1 and the windows in bytes are empty, as tshark says "scaling factor -1
    (unknown)" and shows the raw field."""
    c = lambda seq, ack, fl, n=0, win=1000, ws=None: tcp_wscale(C, S, 40000, 80, 100 + seq, 5000 + ack, fl, n, win, ws)  # noqa: E731
    s = lambda seq, ack, fl, n=0, win=2000, ws=None: tcp_wscale(S, C, 80, 40000, 5000 + seq, 100 + ack, fl, n, win, ws)  # noqa: E731
    frames = [eth(f) for f in [c(0, -5000, SYN, ws=7), s(0, 1, SYN | ACK, ws=7), c(1, 1, ACK),
                               s(1, 1, ACK | PSH, 1448), c(1, 1449, ACK)]]
    rows = "SELECT wscale_c2s, wscale_s2c, rwin_min_bytes, rwin_max_bytes FROM sessions WHERE capture_id = (SELECT max(capture_id) FROM captures)"
    wins = "SELECT win FROM packet_rows WHERE session_id = (SELECT max(session_id) FROM sessions) ORDER BY frame"
    got = {}
    for snap in (65535, 54):
        path = tmp_path / f"s{snap}.pcap"
        assert ingest(db, path, pcap(frames, linktype=1, snaplen=snap), capsys) == (0, [])
        con = duckdb.connect(str(db), read_only=True)
        try:
            got[snap] = (con.execute(rows).fetchall()[0], [w for (w,) in con.execute(wins).fetchall()])
        finally:
            con.close()
    assert got[65535] == ((7, 7, 128_000, 128_000), [1000, 2000, 128_000, 256_000, 128_000])
    assert got[54] == ((-1, -1, None, None), [1000, 2000, 1000, 2000, 1000])
    if shutil.which("tshark"):
        out = subprocess.run(["tshark", "-r", str(tmp_path / "s54.pcap"), "-T", "fields", "-e", "tcp.window_size_scalefactor",
                              "-e", "tcp.window_size"], capture_output=True, text=True, check=True).stdout.split("\n")
        assert [line.split("\t") for line in out[2:5]] == [["-1", "1000"], ["-1", "2000"], ["-1", "1000"]]
