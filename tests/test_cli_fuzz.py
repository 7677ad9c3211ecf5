"""Bad input to the commands besides `run` (report, sweep files, trace, the extension's panics):
the regression cases of `scripts/fuzz_cli.py`. Each gives one line on stderr and exit
status 2, never a traceback or Rust's panic lines, and nothing already written is changed."""

from __future__ import annotations

import gzip
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import rantcp
import rantcp.trace
import rantcp.trace.graphs
from rantcp import _native
from rantcp.cli import main


def one_line(capsys: pytest.CaptureFixture[str], argv: list[str]) -> str:
    """Run the CLI in-process; assert exit 2 and one stderr line; return it."""
    capsys.readouterr()
    with pytest.raises(SystemExit) as e:
        rc = main(argv)
        raise SystemExit(rc)
    err = capsys.readouterr().err.strip().splitlines()
    assert e.value.code == 2, err
    assert len(err) == 1 and err[0].startswith("rantcp: error: "), err
    return err[0]


def fail_line(capsys: pytest.CaptureFixture[str], argv: list[str]) -> list[str]:
    """The trace commands return 2 (no SystemExit): stderr lines."""
    capsys.readouterr()
    rc = main(argv)
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2, err
    assert err and all(e.startswith("rantcp: error: ") for e in err), err
    return err


@pytest.fixture(scope="module")
def run_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("runs") / "run1"
    rantcp.run("builtin:p2p-bulk", overrides={"duration": "0.2s"}, out=out)
    return out


def snapshot(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()}


# ------------------------------------------------------------------ the extension's panics


def test_a_panic_in_the_extension_is_one_line_without_rusts_own(tmp_path: Path) -> None:
    """Rust's default hook printed "thread '…' panicked at …" and, with RUST_BACKTRACE=1 (set on
    this machine), a backtrace before the command's own line; the command then ended in a
    traceback (PanicException is a BaseException)."""
    code = (
        "import sys\nfrom rantcp import cli, _native\n"
        "cli._cmd_scenarios = lambda args: _native.panic_for_tests('boom')\n"
        "sys.exit(cli.main(['scenarios']))\n"
    )
    env = {**os.environ, "RUST_BACKTRACE": "1"}
    env.pop("RANTCP_PANIC_DETAILS", None)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60)
    assert r.returncode == 2, r.stderr
    [line] = r.stderr.splitlines()
    assert line.startswith("rantcp: error: internal error (a bug in rantcp; please report it with the command): "
                           "boom (at crates/py/src/panic.rs:"), line


def test_a_panic_in_a_worker_thread_prints_nothing(capfd: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(RuntimeError, match=r"the thread panicked: in a thread \(at crates/py/src/panic\.rs:\d+\)"):
        _native.panic_for_tests("in a thread", in_thread=True)
    assert capfd.readouterr().err == ""


def test_nr_tbs_raw_refuses_a_code_rate_that_is_not_a_number(capfd: pytest.CaptureFixture[str]) -> None:
    """NaN reached log2(0) in TS 38.214 step 4 and panicked."""
    for r in (float("nan"), 0.0, -1.0, 1025.0, float("inf")):
        with pytest.raises(ValueError, match=r"r_x1024 .*: the code rate x 1024 must be in \(0, 1024\]"):
            rantcp.phy.nr_tbs_raw(10, 2, r)
    assert rantcp.phy.nr_tbs_raw(10, 2, 120.0) > 0
    assert capfd.readouterr().err == ""


# ------------------------------------------------------------------ report


@pytest.mark.parametrize(
    "output,needle",
    [
        ("summary.json", "exists and is not a .html or .htm file"),
        ("flows.parquet", "exists and is not a .html or .htm file"),
        (".", "is a folder"),
        ("nowhere/r.html", "does not exist"),
    ],
)
def test_report_output_never_replaces_a_runs_data(capsys, run_folder: Path, output: str, needle: str) -> None:
    """`report --output RUN/summary.json` wrote the page over the run's summary; a folder or a
    missing folder ended in a traceback."""
    before = snapshot(run_folder)
    line = one_line(capsys, ["report", str(run_folder), "--output", str(run_folder / output)])
    assert needle in line and "--output" in line
    assert snapshot(run_folder) == before


def test_report_output_replaces_an_earlier_page(capsys, run_folder: Path, tmp_path: Path) -> None:
    page = tmp_path / "page.html"
    page.write_text("an earlier page")
    assert main(["report", str(run_folder), "--output", str(page)]) == 0
    assert page.read_text().startswith("<!DOCTYPE html>")


# ------------------------------------------------------------------ sweep files


def sweep_file(tmp_path: Path, axes: str, extra: str = "") -> Path:
    p = tmp_path / "s.toml"
    p.write_text(f'[sweep]\nscenario = "builtin:p2p-bulk"\n{extra}[set]\nduration = "0.05s"\n[axes]\n{axes}\n')
    return p


@pytest.mark.parametrize(
    "axes,extra,needle",
    [
        ('"flow.mss" = { start = 1, stop = 1e400, num = 2 }', "", "axes.flow.mss: stop: inf is not a finite number"),
        ('"flow.mss" = { start = -1e308, stop = 1e308, step = 1e307 }', "", "axes.flow.mss: too many values; at most 100000"),
        ('"flow.mss" = { start = 1, stop = 2, num = 2, bogus = 1 }', "",
         "axes.flow.mss.bogus: unknown key (allowed: num, scale, start, step, stop, unit)"),
        ('"flow.mss" = { start = 500, stop = 1500, num = 100000 }\n"bottleneck.loss" = { start = 0, stop = 0.1, num = 100000 }',
         "", "the sweep has 10,000,000,000 runs (100000 × 100000 points × 1 repetitions); at most 1,000,000"),
        ('"flow.mss" = { start = 500, stop = 1500, num = 1000 }', "repetitions = 1001\n",
         "the sweep has 1,001,000 runs (1000 points × 1001 repetitions)"),
    ],
    ids=["inf", "overflow", "range-key", "product", "repetitions"],
)
def test_sweep_file_ranges_and_sizes(capsys, tmp_path: Path, axes: str, extra: str, needle: str) -> None:
    """An infinite bound or an overflowing span ended in a traceback; an unknown range key
    listed the file's tables as allowed; 10^10 points filled memory (killed after 30 s)."""
    line = one_line(capsys, ["sweep", str(sweep_file(tmp_path, axes, extra)), "--out", str(tmp_path / "o"), "--quiet"])
    assert needle in line
    assert not (tmp_path / "o").exists()


# ------------------------------------------------------------------ trace


@pytest.fixture(scope="module")
def capture(tmp_path_factory: pytest.TempPathFactory) -> Path:
    p = tmp_path_factory.mktemp("caps") / "a.pcap"
    _native.trace_write_synthetic(str(p), 200)
    return p


@pytest.mark.parametrize("kind", ["parquet", "csv", "json"])
def test_trace_db_that_is_a_data_file_is_refused(capsys, run_folder: Path, capture: Path, tmp_path: Path, kind: str) -> None:
    """DuckDB opens a CSV, JSON or Parquet file as an in-memory database: the ingest said
    "1 ingested … → flows.parquet" with exit 0 and stored nothing."""
    db = {"parquet": run_folder / "flows.parquet", "csv": tmp_path / "t.csv", "json": tmp_path / "t.json"}[kind]
    if kind != "parquet":
        db.write_text("a,b\n1,2\n" if kind == "csv" else '{"a": 1}\n')
    before = db.read_bytes()
    for argv in (["trace", "ingest", str(capture), "--db", str(db), "--quiet"], ["trace", "sessions", "--db", str(db)]):
        err = fail_line(capsys, argv)
        assert err == [f"rantcp: error: trace database {str(db)!r}: exists and is not a DuckDB database; give a new "
                       "file name or a database `rantcp trace ingest` wrote"]
    assert db.read_bytes() == before


def test_a_folder_with_compressed_captures_names_them(capsys, capture: Path, tmp_path: Path) -> None:
    """A folder's *.pcap.gz were skipped in silence (exit 0); a single one is refused by name."""
    folder = tmp_path / "caps"
    folder.mkdir()
    (folder / "a.pcap").write_bytes(capture.read_bytes())
    (folder / "b.pcap.gz").write_bytes(gzip.compress(capture.read_bytes(), mtime=0))
    (folder / "notes.txt.gz").write_bytes(gzip.compress(b"not a capture"))
    db = tmp_path / "t.duckdb"
    err = fail_line(capsys, ["trace", "ingest", str(folder), "--db", str(db), "--quiet"])
    assert err == [f"rantcp: error: {folder / 'b.pcap.gz'}: not a pcap or pcapng file "
                   "(gzip-compressed; decompress it first: gunzip -k FILE)"]
    df = rantcp.trace.sessions(db)
    assert len(df) and set(df["path"].map(lambda p: Path(p).name)) == {"a.pcap"}


@pytest.fixture(scope="module")
def tagged_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two captures tagged opt=a and opt=b."""
    d = tmp_path_factory.mktemp("db")
    for tag, packets in (("a", 150), ("b", 160)):
        _native.trace_write_synthetic(str(d / f"{tag}.pcap"), packets)
        rep = rantcp.trace.ingest([d / f"{tag}.pcap"], d / "t.duckdb", tags={"opt": tag})
        assert not rep.failed
    return d / "t.duckdb"


@pytest.mark.parametrize(
    "argv,needle",
    [
        (["sessions", "--csv", "{tmp}/nowhere/s.csv"], "--csv {tmp}/nowhere/s.csv: folder {tmp}/nowhere does not exist"),
        (["sessions", "--csv", "{tmp}"], "--csv {tmp}: is a folder"),
        (["sessions", "--csv", "{tmp}/keep.json"], "--csv {tmp}/keep.json: exists and is not a .csv file"),
        (["graph", "--session", "0", "--out", "{tmp}/nowhere/g.png"], "--out {tmp}/nowhere/g.png: folder {tmp}/nowhere does not exist"),
        (["graph", "--session", "0", "--out", "{tmp}"], "--out {tmp}: is a folder"),
        (["compare", "--by", "opt", "--csv", "{tmp}/nowhere/c.csv"], "--csv {tmp}/nowhere/c.csv: folder"),
        (["compare", "--by", "opt", "--seed", "-1"], "--seed -1: expected a whole number from 0 to 2^64 - 1"),
        (["compare", "--by", "opt", "--bootstrap", "-5"], "--bootstrap -5: expected a whole number of resamples"),
        (["compare", "--by", "opt", "--bootstrap", "100000000000"], "--bootstrap 100000000000: expected"),
        (["compare", "--by", "opt", "--metric", "client_ip"], "--metric client_ip: not a numeric sessions column"),
    ],
    ids=["csv-missing-folder", "csv-folder", "csv-over-json", "graph-missing-folder", "graph-folder",
         "compare-csv", "compare-seed", "compare-bootstrap-negative", "compare-bootstrap-huge", "compare-metric-text"],
)
def test_trace_outputs_and_options(capsys, tagged_db: Path, tmp_path: Path, argv: list[str], needle: str) -> None:
    """Each of these ended in a traceback (OSError, numpy's negative seed, a mean of strings)."""
    db = tagged_db
    (tmp_path / "keep.json").write_text("{}")
    full = ["trace", argv[0], "--db", str(db), *[a.format(tmp=tmp_path) for a in argv[1:]]]
    err = fail_line(capsys, full)
    assert len(err) == 1 and needle.format(tmp=tmp_path) in err[0], err
    assert (tmp_path / "keep.json").read_text() == "{}"
    assert not list(tmp_path.glob("*.png"))


# ------------------------------------------------------------------ emulate (argument checks only)


def test_emulate_refuses_an_unknown_host_before_any_namespace(capsys, monkeypatch) -> None:
    """`emulate SCENARIO -- nohost: CMD` made the namespaces and started the emulator, then
    refused the host and tore it all down. No namespace is made here: the test fails instead."""
    from rantcp import emulation

    why = emulation.why_not()
    if why:
        pytest.skip(why)

    def made(*a: object, **k: object) -> None:
        raise AssertionError("a namespace would be made")

    monkeypatch.setattr(emulation, "_claim_prefix", made)
    monkeypatch.setattr(emulation, "_ip", made)
    capsys.readouterr()
    rc = main(["emulate", "builtin:p2p-bulk", "--", "sender:", "true", "--", "nohost:", "ls"])
    err = capsys.readouterr().err.strip().splitlines()
    assert (rc, err) == (2, ["rantcp: error: command for 'nohost': no such host; hosts: sender, receiver"])


# ------------------------------------------------------------------ the Python API


def test_api_takes_a_path_object_and_names_a_wrong_scenario(tmp_path: Path) -> None:
    """rantcp.validate/run(Path("s.toml")) refused the path their doc promises ("'PosixPath'
    object is not an instance of 'str'"); a wrong type did not name the argument."""
    f = tmp_path / "s.toml"
    f.write_text('scenario = "p2p-bulk"\nduration = "0.05s"\n')
    assert rantcp.validate(f)["scenario"] == "p2p-bulk"
    assert rantcp.run(f).summary["scenario"] == "p2p-bulk"
    for bad in (None, 5, b"builtin:p2p-bulk", ["builtin:p2p-bulk"]):
        with pytest.raises(rantcp.ConfigError, match=r"^scenario: expected builtin:NAME or a TOML file path, not "):
            rantcp.validate(bad)  # type: ignore[arg-type]
        with pytest.raises(rantcp.ConfigError, match=r"^scenario: expected builtin:NAME"):
            rantcp.run(bad)  # type: ignore[arg-type]


def test_api_load_result_and_sweep_workers_are_config_errors(tmp_path: Path) -> None:
    """load_result of a folder without a run raised FileNotFoundError (load() a ConfigError);
    sweep(workers="2") a TypeError from a comparison, and workers=0 ran on every core."""
    with pytest.raises(rantcp.ConfigError, match=r"not a run folder \(no summary.json\)"):
        rantcp.load_result(tmp_path)
    spec = {"sweep": {"scenario": "builtin:p2p-bulk"}, "set": {"duration": "0.05s"}}
    for workers in ("2", 0, -1, 1.5, True):
        with pytest.raises(rantcp.ConfigError, match=r"^workers: .*expected a whole number N >= 1"):
            rantcp.sweep(spec, out=tmp_path / "sw", workers=workers)  # type: ignore[arg-type]
    assert not (tmp_path / "sw").exists()


def test_trace_readers_name_a_db_that_is_neither_path_nor_connection(tagged_db: Path) -> None:
    """trace.sessions(5) raised AttributeError ('int' object has no attribute 'execute')."""
    bad: Any
    for bad in (5, float("nan"), [], None):
        with pytest.raises(ValueError, match=r"^db: expected a trace database path or a DuckDB connection, not "):
            rantcp.trace.sessions(bad)
        with pytest.raises(ValueError, match=r"^db: expected a trace database path"):
            rantcp.trace.graphs.graph(bad, 0)
    assert len(rantcp.trace.sessions(str(tagged_db))) == len(rantcp.trace.sessions(tagged_db)) > 0


def test_trace_compare_stays_a_function_after_the_command_ran(tagged_db: Path) -> None:
    """The gain table lived in rantcp/trace/compare.py: once `rantcp trace compare` (or anything)
    imported that module, Python set `rantcp.trace.compare` to the module, and the documented
    `trace.compare(db, ...)` raised "'module' object is not callable"."""
    code = (
        "import sys\nimport rantcp.trace as trace\nfrom rantcp.cli import main\n"
        f"assert main(['trace', 'compare', '--db', {str(tagged_db)!r}, '--by', 'opt', '--bootstrap', '0']) == 0\n"
        f"print(trace.compare({str(tagged_db)!r}, 'opt', bootstrap=0).baseline)\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert (r.returncode, r.stdout.splitlines()[-1:]) == (0, ["a"]), r.stderr


def test_sweep_summarise_and_timeseries_name_a_typo(tmp_path: Path) -> None:
    """summarise("goodput_mbps") summarised each character as a metric (11 columns of NaN),
    summarise(["nope"]) gave NaN, timeseries("nope") an empty table: each said nothing."""
    s = rantcp.sweep({"sweep": {"scenario": "builtin:p2p-bulk"}, "set": {"duration": "0.05s"},
                      "axes": {"flow.cc": ["newreno"]}}, out=tmp_path / "sw", workers=1)
    sw = rantcp.load(tmp_path / "sw")
    assert list(sw.summarise("goodput_mbps").columns) == ["flow.cc", "n", "goodput_mbps_mean", "goodput_mbps_ci95"]
    with pytest.raises(rantcp.ConfigError, match=r"^summarise: metric 'nope' is not a column of the runs table"):
        sw.summarise(["nope"])
    with pytest.raises(rantcp.ConfigError, match=r"^summarise: by 'nope' is not a column"):
        sw.summarise(by="nope")
    with pytest.raises(rantcp.ConfigError, match=r"^timeseries: no run of .* has a table 'nope' \(tables: flows\)"):
        sw.timeseries("nope")
    assert "time_s" in sw.timeseries("flows").columns and len(s) == 1
    # One point id as a string is that run (it was its 16 characters, none of them an id, so
    # no run was selected and the typo went unnoticed).
    with pytest.raises(rantcp.ConfigError, match=r"has a table 'nope'"):
        sw.timeseries("nope", ids=s["point_id"].iloc[0])


def test_trace_ingest_takes_one_path_as_one_capture(capture: Path, tmp_path: Path) -> None:
    """trace.ingest("caps/", db) iterated the string's characters: "c", "a", … were missing
    files and "/" a folder, so the whole disk was searched (PermissionError on /proc/1/cwd)."""
    folder = tmp_path / "caps"
    folder.mkdir()
    (folder / "a.pcap").write_bytes(capture.read_bytes())
    for given in (str(folder), folder):
        rep = rantcp.trace.ingest(given, tmp_path / f"{type(given).__name__}.duckdb")
        assert [(Path(f.path).name, f.status) for f in rep.files] == [("a.pcap", "ingested")]
