"""Interrupted writing commands: the regression cases of scripts/fuzz_interrupt.py.

Each delivers its signal at an exact instant with scripts/interrupt_at.py (the N-th call of a
writing function), so nothing races: SIGKILL during a run, SIGINT/SIGTERM during a commit,
a report write, a trace ingest, then checks what is left and that the next command completes."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
HOOK = str(ROOT / "scripts" / "interrupt_at.py")


def at(point: str, sig: str, *argv: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """`rantcp ARGV` with SIG delivered at POINT (see scripts/interrupt_at.py)."""
    return subprocess.run([sys.executable, HOOK, point, sig, "--", *argv], cwd=cwd, capture_output=True, text=True, timeout=120)


def rantcp(*argv: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "rantcp.cli", *argv], cwd=cwd, capture_output=True, text=True, timeout=120)


RUN = ("run", "builtin:p2p-bulk", "--set", "duration=0.2s", "--quiet", "--out", "out")


def test_sigkill_leaves_a_partial_folder_the_next_run_removes(tmp_path: Path):
    r = at("rantcp.api._Series.close", "KILL", *RUN, cwd=tmp_path)
    assert r.returncode == -9, r.stderr
    left = [p.name for p in tmp_path.iterdir()]
    assert len(left) == 1 and left[0].startswith(".out.partial-"), left
    r = rantcp(*RUN, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]
    assert (tmp_path / "out" / "summary.json").is_file()


def test_stale_folders_of_live_runs_and_user_files_are_kept(tmp_path: Path):
    live = tmp_path / f".out.partial-{os.getpid()}-0123abcd"  # this test's process runs
    live.mkdir()
    (live / "flows.parquet").write_bytes(b"half")
    dead_pid = _dead_pid()
    mine = tmp_path / f".out.partial-{dead_pid}-89abcdef"  # a dead process, but a user's file
    mine.mkdir()
    (mine / "notes.txt").write_text("mine\n")
    stale = tmp_path / f".out.old-{dead_pid}-00000000"
    stale.mkdir()
    (stale / "summary.json").write_text("{}")
    other = tmp_path / f".outx.partial-{dead_pid}-00000000"  # another target's
    other.mkdir()
    r = rantcp(*RUN, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["out", live.name, mine.name, other.name])


def _dead_pid() -> int:
    p = subprocess.Popen(["true"])
    p.wait()
    return p.pid


@pytest.fixture(scope="module")
def run_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    w = tmp_path_factory.mktemp("run")
    r = rantcp("run", "builtin:p2p-bulk", "--set", "duration=0.2s", "--quiet", "--out", "out", cwd=w)
    assert r.returncode == 0, r.stderr
    (w / "out" / "report.html").write_text("<!doctype html><title>an earlier page</title>\n")
    return w / "out"


@pytest.mark.parametrize("sig", ["INT", "TERM", "KILL"])
def test_report_interrupted_before_its_rename_keeps_the_old_page_and_the_run_folder(run_folder: Path, tmp_path: Path, sig: str):
    import shutil

    run = tmp_path / "run"
    shutil.copytree(run_folder, run)
    old = (run / "report.html").read_bytes()
    r = at("pathlib.Path.replace", sig, "report", str(run), cwd=tmp_path)
    assert r.returncode == (-9 if sig == "KILL" else 130), r.stderr
    assert "Traceback" not in r.stderr
    assert (run / "report.html").read_bytes() == old
    if sig != "KILL":
        assert not (run / "report.html.tmp").exists()
    # Whatever is left, the folder is still a run folder: the next run replaces it.
    r = rantcp("run", "builtin:p2p-bulk", "--set", "duration=0.1s", "--quiet", "--out", str(run), cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run"]


DUCKDB_PROBE = """
import os, signal, threading
import rantcp  # as the command line does: with it, DuckDB acts on the signal as the statement ends
import duckdb
from rantcp.interrupts import is_interrupt
con = duckdb.connect()
threading.Timer(0.1, os.kill, (os.getpid(), signal.SIGINT)).start()
try:
    con.execute("SELECT count(*) FROM range(300000000) t(i) WHERE hash(i) = 0").fetchall()
    print("finished")
except BaseException as e:
    print(type(e).__name__, repr(str(e)), is_interrupt(e))
"""


def test_duckdb_turns_a_keyboard_interrupt_into_an_error_we_recognise():
    """What a real SIGINT during a DuckDB statement raises: not KeyboardInterrupt."""
    from rantcp.interrupts import is_interrupt

    r = subprocess.run([sys.executable, "-c", DUCKDB_PROBE], capture_output=True, text=True, timeout=60)
    assert r.stdout.strip() == "RuntimeError 'Query interrupted' True", (r.stdout, r.stderr)
    assert not is_interrupt(RuntimeError("Query failed")) and not is_interrupt(ValueError("Query interrupted"))


@pytest.mark.parametrize("command", [["trace", "ingest", "x.pcap", "--db", "t.duckdb", "--quiet"],
                                     ["reproduce", "seed-004", "--quick", "--out", "q"]])
def test_ctrl_c_inside_a_duckdb_statement_is_an_interrupt_not_a_crash(monkeypatch, capsys, tmp_path: Path, command):
    """Before: `trace ingest` printed a traceback and exited 1, `reproduce` exited 3 ("the
    sweep machinery failed") when Ctrl-C or SIGTERM arrived during an INSERT or a commit."""
    import rantcp.reproductions
    import rantcp.trace.ingest
    from rantcp.cli import main

    def interrupted(*a, **k):  # noqa: ANN002, ANN003
        raise RuntimeError("Query interrupted")  # what DuckDB raises (the test above)

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys.modules["rantcp.trace.ingest"], "ingest", interrupted)
    monkeypatch.setattr(rantcp.reproductions, "reproduce", interrupted)
    assert main(command) == 130
    assert capsys.readouterr().err == "rantcp: interrupted\n"



def test_sigterm_while_the_arguments_are_parsed_ends_without_a_traceback(tmp_path: Path):
    """Before: the handler was installed before the parser was built, and the KeyboardInterrupt
    it raised there was outside main's try: a traceback and exit -2 (found with SIGTERM at
    0.12 s into `rantcp sweep`). Nothing is written yet, so SIGTERM just ends the process."""
    r = at("rantcp.cli._build_parser", "TERM", *RUN, cwd=tmp_path)
    assert r.returncode == -15, (r.returncode, r.stderr)
    assert r.stderr == "" and list(tmp_path.iterdir()) == []
    r = at("rantcp.api.run", "TERM", *RUN, cwd=tmp_path)  # once the command runs: unwinds
    assert (r.returncode, r.stderr) == (130, "rantcp: interrupted\n")


SIGNAL_AT_IMPORT = """
# sitecustomize: this process sends itself a signal as the import of a named module begins
# (RANTCP_TEST_SIGNAL_AT_IMPORT=module:signal number). Imports nothing: site has imported os.
import os
import sys

_NAME, _SIG = os.environ["RANTCP_TEST_SIGNAL_AT_IMPORT"].split(":")


class _SignalAtImport:
    @staticmethod
    def find_spec(name, path=None, target=None):
        if name == _NAME:
            sys.meta_path.remove(_SignalAtImport)
            os.kill(os.getpid(), int(_SIG))
        return None


sys.meta_path.insert(0, _SignalAtImport)
"""


def signal_at_import(module: str, command: list[str], tmp_path: Path) -> subprocess.CompletedProcess[str]:
    """`command` (the real console script, or python -m) with SIGINT sent as `module`'s import begins."""
    import signal

    hook = tmp_path / "hook"
    hook.mkdir()
    (hook / "sitecustomize.py").write_text(SIGNAL_AT_IMPORT)
    path = os.pathsep.join(p for p in (str(hook), os.environ.get("PYTHONPATH")) if p)
    env = dict(os.environ, PYTHONPATH=path, RANTCP_TEST_SIGNAL_AT_IMPORT=f"{module}:{int(signal.SIGINT)}")
    work = tmp_path / "work"
    work.mkdir()
    return subprocess.run([*command, *RUN], cwd=work, env=env, capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("module", ["rantcp.cli", "argparse", "rantcp.interrupts"])
def test_ctrl_c_as_the_command_line_is_imported_is_one_line(tmp_path: Path, module: str):
    """Before: `rantcp` installed its handler once the console script had imported rantcp.cli
    and what it imports (20-60 ms, 40-170 ms on a loaded box): a Ctrl-C there printed a
    KeyboardInterrupt traceback and ended with -SIGINT. Now rantcp.__main__.console records a
    SIGINT from its first statement, before it imports anything, and the command acts on it as it
    begins. rantcp.cli is the first module imported after, rantcp.interrupts the last before
    on_interrupt takes over. (A signal before that first statement, during the interpreter's own
    start-up and the import of `rantcp` itself, is left to Python: see rantcp.__main__.)"""
    exe = Path(sys.executable).with_name("rantcp")
    r = signal_at_import(module, [str(exe)], tmp_path)
    assert (r.returncode, r.stderr) == (130, "rantcp: interrupted\n")
    assert list((tmp_path / "work").iterdir()) == []


def test_python_m_rantcp_is_the_command_with_the_same_start_up_handler(tmp_path: Path):
    r = signal_at_import("rantcp.cli", [sys.executable, "-m", "rantcp"], tmp_path)
    assert (r.returncode, r.stderr) == (130, "rantcp: interrupted\n")
    r = subprocess.run([sys.executable, "-m", "rantcp", "--version"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and r.stdout.startswith("rantcp "), r


@pytest.mark.parametrize("sig", ["INT", "TERM"])
def test_a_signal_as_main_returns_is_one_line(tmp_path: Path, sig: str):
    """Before: a signal between main's return and the handlers' reset to their default actions
    raised KeyboardInterrupt outside any try: a traceback and -SIGINT. Now it is one line and 130
    (the run was complete: its folder is kept)."""
    r = at("rantcp.cli.main+", sig, *RUN, cwd=tmp_path)
    assert (r.returncode, r.stderr) == (130, "rantcp: interrupted\n")
    assert (tmp_path / "out" / "summary.json").is_file()


def test_ctrl_c_while_starting_is_one_line(tmp_path: Path):
    """Before: Ctrl-C while the subcommands' modules were imported (the first 0.1 s) printed a
    KeyboardInterrupt traceback and ended with -SIGINT."""
    r = at("rantcp.cli._register_extra_commands", "INT", *RUN, cwd=tmp_path)
    assert (r.returncode, r.stderr) == (130, "rantcp: interrupted\n")
    assert list(tmp_path.iterdir()) == []


SWEEP = '[sweep]\nscenario = "builtin:p2p-bulk"\nrepetitions = 2\n[set]\nduration = "0.2s"\n[axes]\n"flow.cc" = ["newreno"]\n'


def test_sweep_killed_before_its_tables_exist_reads_as_one_line_and_resumes(tmp_path: Path):
    """Before: SIGKILL between creating sweep.duckdb and committing its tables (0.16 s into a
    sweep) left a database that `rantcp report`, `rantcp.load` and a rerun of `reproduce` (which
    reads what is recorded first) failed on with DuckDB's CatalogException."""
    from rantcp.reproductions import _recorded

    (tmp_path / "s.toml").write_text(SWEEP)
    sweep = ("sweep", "s.toml", "--out", "sw", "--workers", "1", "--quiet")
    r = at("rantcp.sweeps.store.Store._init_schema", "KILL", *sweep, cwd=tmp_path)
    assert r.returncode == -9 and (tmp_path / "sw" / "sweep.duckdb").is_file()
    r = rantcp("report", "sw", cwd=tmp_path)
    assert r.returncode == 2 and r.stderr.startswith("rantcp: error: sw: the sweep was stopped before it recorded"), r.stderr
    assert len(r.stderr.splitlines()) == 1
    assert _recorded(tmp_path / "sw") == set()
    r = rantcp(*sweep, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    import rantcp as api

    assert sorted(api.load(tmp_path / "sw").df["status"]) == ["ok", "ok"]


@pytest.mark.parametrize("point", ["multiprocessing.forkserver.connect_to_new_process+", "multiprocessing.forkserver.read_signed+"])
@pytest.mark.parametrize("sig", ["INT", "TERM"])
def test_a_sweep_interrupted_while_it_starts_a_worker_prints_one_line(tmp_path: Path, point: str, sig: str):
    """Before: the interrupt cut the worker the pool was starting off from the pool (after the
    forkserver forked it, before the pool recorded it); the process exited without joining it and
    the child, reading its arguments after that, printed a traceback: EOFError at the first instant
    (always), SemLock._rebuild's FileNotFoundError at the second (3 runs in 5), as in
    scripts/fuzz_interrupt.py's sweeps. Now starting a worker is held whole (rantcp.interrupts.held)."""
    (tmp_path / "s.toml").write_text(SWEEP)
    r = at(point, sig, "sweep", "s.toml", "--out", "sw", "--workers", "1", "--quiet", cwd=tmp_path)
    assert (r.returncode, r.stderr) == (130, "rantcp: interrupted\n")


def test_held_acts_on_the_signal_as_the_block_ends():
    import signal

    from rantcp.interrupts import held

    steps = []
    with pytest.raises(KeyboardInterrupt):
        with held():
            os.kill(os.getpid(), signal.SIGINT)
            steps.append("after the signal")  # the block is not cut
        steps.append("after the block")  # not reached
    assert steps == ["after the signal"]
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


@pytest.mark.parametrize("sig, code", [("INT", -2), ("TERM", -15)])
def test_a_signal_as_the_interpreter_exits_ends_it_without_a_traceback(tmp_path: Path, sig: str, code: int):
    """Before: exit 0 and "Exception ignored in: <module 'threading'>" with a KeyboardInterrupt
    traceback (fuzz seed 604): the handlers raised it in the Python code the interpreter runs at
    exit, with no thread left to wait for. Now `rantcp` (rantcp.cli.console) hands the signals
    back to their default actions once its work is done."""
    from importlib.metadata import entry_points

    assert [e.value for e in entry_points(group="console_scripts", name="rantcp")] == ["rantcp.__main__:console"]
    r = at("threading._shutdown", sig, *RUN, cwd=tmp_path)
    assert (r.returncode, r.stderr) == (code, "")
    assert (tmp_path / "out" / "summary.json").is_file()


POOL_PROBE = """
import os, platform, signal, time
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import forkserver
from rantcp.sweeps import executors

READ = {"x86_64": "0", "aarch64": "63"}[platform.machine()]  # read(2)'s number


def reading(pid):
    # whether the worker's main thread waits in read(2): on the call queue, idle
    with open(f"/proc/{pid}/syscall") as f:
        return f.read().split()[0] == READ


def sigint_in_a_run(_):
    # What a Ctrl-C does to a worker during a run: the "run" receives SIGINT and would go on.
    executors.run_point = lambda task: (os.kill(os.getpid(), signal.SIGINT), "not stopped")[1]
    return executors._local_run(None)


if __name__ == "__main__":
    ctx = executors._mp_context()  # starts the forkserver
    server = forkserver._forkserver._forkserver_pid
    os.kill(server, signal.SIGINT)  # a Ctrl-C as it starts: it imports rantcp (0.1-0.2 s) first
    pool = ProcessPoolExecutor(max_workers=1, mp_context=ctx,
                               initializer=executors._worker_init, initargs=(os.getpid(),))
    worker = pool.submit(os.getpid).result()
    while not reading(worker):
        time.sleep(0.001)
    os.kill(worker, signal.SIGINT)  # a Ctrl-C between runs: the worker is idle
    print("idle:", pool.submit(os.getpid).result() == worker)  # the same worker, still serving
    try:
        print("run:", pool.submit(sigint_in_a_run, None).result())
    except KeyboardInterrupt:
        print("run: stopped")
    pool.shutdown()
    print("forkserver: the same", forkserver._forkserver._forkserver_pid == server)  # not restarted
"""


def test_the_pool_s_processes_leave_a_ctrl_c_to_the_coordinator_but_a_run_stops(tmp_path: Path):
    """A terminal's Ctrl-C signals the whole process group. Before: the forkserver, hit while it
    imported its preload, died (KeyboardInterrupt traceback, or silently before Python's handler
    was set); a pool worker hit while idle, reading the call queue, printed "Process
    ForkServerProcess-1:" and a traceback, and broke the pool. During a run it still stops the run."""
    (tmp_path / "probe.py").write_text(POOL_PROBE)
    r = subprocess.run([sys.executable, "probe.py"], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert (r.stdout, r.stderr) == ("idle: True\nrun: stopped\nforkserver: the same True\n", "")


IMPORT_LOCK_PROBE = """
import _imp, os, signal, sys, threading, time
from importlib import _bootstrap

import rantcp.cli

# The handler `rantcp` (rantcp.cli.console) has for SIGINT while its command runs:
handler = []
rantcp.cli.main = lambda argv=None: handler.append(signal.getsignal(signal.SIGINT)) or 0
rantcp.cli.console()
signal.signal(signal.SIGINT, handler[0])
MAIN = threading.get_ident()


def hold_and_signal(where, ready):
    # Hold the import lock until the main thread waits for it in `where`, then signal and let go:
    # the handler runs as the main thread's _imp.acquire_lock() returns there (the instant a
    # signal that came during the call is acted on).
    _imp.acquire_lock()
    ready.set()
    while sys._current_frames()[MAIN].f_code.co_name != where:
        time.sleep(0.001)
    os.kill(os.getpid(), signal.SIGINT)
    _imp.release_lock()


def case(where, step):
    ready = threading.Event()
    helper = threading.Thread(target=hold_and_signal, args=(where, ready))
    helper.start()
    ready.wait()
    try:
        step()
        outcome = "not interrupted"  # not by the end of the step, although the signal came during it
    except KeyboardInterrupt:
        outcome = "interrupted"
    helper.join()
    print(f"{where}: {outcome}, import lock left held: {_imp.lock_held()}", flush=True)
    if _imp.lock_held():
        _imp.release_lock()


def free_a_lock():
    locks.pop()  # freeing a module lock runs its weakref callback, cb


locks = [_bootstrap._get_module_lock(f"rantcp-probe-{i}") for i in range(2)]
case("cb", free_a_lock)
case("_get_module_lock", lambda: __import__("colorsys"))  # an import takes its module lock


def import_half():
    import half  # its code signals itself half-way


with open("half.py", "w") as f:
    f.write("import os, signal\\nos.kill(os.getpid(), signal.SIGINT)\\ndone = True\\n")
try:
    import_half()
    outcome = "not interrupted"
except KeyboardInterrupt:
    outcome = "interrupted"
print(f"a module's own code: {outcome}, the module whole: {getattr(sys.modules.get('half'), 'done', False)}", flush=True)
# A sweep worker's handler during a run, which calls the same on_interrupt:
from rantcp.sweeps import executors

executors._running = True
signal.signal(signal.SIGINT, executors._on_sigint_in_worker)
case("cb", free_a_lock)
case("_get_module_lock", lambda: __import__("sched"))
"""


def test_a_ctrl_c_inside_the_import_machinery_leaves_the_import_lock_free_and_stops_the_command(tmp_path: Path):
    """Before: a Ctrl-C to `rantcp run --plots` 0.33-0.40 s in hung it for ever, 4-5 times in 60
    (scripts/fuzz_interrupt.py's unreproduced hang): the KeyboardInterrupt was raised in
    importlib's weakref callback `cb` just after it took the global import lock, outside the try
    that releases it, and as a callback's exception it was swallowed ("Exception ignored in"):
    the run went on with the lock held, and the prefetch thread importing matplotlib waited for it
    while holding the module lock the main thread's own import of matplotlib then waited for.
    Raised likewise in _get_module_lock it stopped the command but left the lock held. Now the
    handler acts on the signal once the import has ended, at the first call or return of other
    code, within the step (a retry 1 ms later from another thread came after a command that had
    ended meanwhile: 4 lost Ctrl-Cs in 150 `rantcp run`s). Nor is a module's own code cut off
    half-way: a C extension's init that called Python code swallowed the interrupt (Cython's
    collections.abc registration in pandas and numpy.random: `run --plots` went on to exit 0) or
    aborted the process (nanobind, DuckDB's import)."""
    (tmp_path / "probe.py").write_text(IMPORT_LOCK_PROBE)
    r = subprocess.run([sys.executable, "probe.py"], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    cases = "cb: interrupted, import lock left held: False\n_get_module_lock: interrupted, import lock left held: False\n"
    module = "a module's own code: interrupted, the module whole: True\n"
    assert (r.stdout, r.stderr) == (cases + module + cases, "")  # the command line's handler, then a sweep worker's


@pytest.mark.parametrize("point", ["rantcp.cli._process_age_s", "argparse.ArgumentParser.parse_args"])
def test_ctrl_c_while_the_arguments_are_parsed_is_one_line(tmp_path: Path, point: str):
    """Before: only building the parser was inside main's try; a Ctrl-C while argparse parsed
    (0.09 s into `rantcp run` on a loaded box), or in main's first lines (0.044 s), printed a
    KeyboardInterrupt traceback, exit -2."""
    r = at(point, "INT", *RUN, cwd=tmp_path)
    assert (r.returncode, r.stderr) == (130, "rantcp: interrupted\n")
    assert list(tmp_path.iterdir()) == []


STORE_PROBE = """
import sys

from rantcp.sweeps import store

real = store._connect


class Interrupted:
    # A connection whose first query of the runs table's columns is interrupted: DuckDB raises a
    # Ctrl-C or SIGTERM that comes during a statement as RuntimeError("Query interrupted") (see
    # test_duckdb_turns_a_keyboard_interrupt_into_an_error_we_recognise).
    def __init__(self, con):
        self._con, self.fired = con, False

    def execute(self, sql, *args):
        if "information_schema.columns" in sql and not self.fired:
            self.fired = True
            raise RuntimeError("Query interrupted")
        return self._con.execute(sql, *args)

    def __getattr__(self, name):
        return getattr(self._con, name)


if __name__ == "__main__":  # not in the sweep's workers, which import this file
    store._connect = lambda *a, **k: Interrupted(real(*a, **k))
    from rantcp import cli

    sys.argv = ["rantcp", *sys.argv[1:]]
    raise SystemExit(cli.console())
"""


def test_an_interrupt_during_the_sweep_store_s_column_query_stops_the_sweep(tmp_path: Path):
    """Before: Store._reload_types took any error of its query for "no columns yet", so a SIGTERM
    or Ctrl-C that came while DuckDB ran it (about 1 ms, as the store opens, 0.16-0.25 s into a
    sweep) was dropped and the whole sweep ran: exit 0 (scripts/fuzz_interrupt.py's two ignored
    SIGTERMs). With a real SIGTERM sent while the query ran, 40 of 300 were dropped."""
    (tmp_path / "s.toml").write_text(SWEEP)
    (tmp_path / "probe.py").write_text(STORE_PROBE)
    r = subprocess.run([sys.executable, "probe.py", "sweep", "s.toml", "--out", "sw", "--workers", "1", "--quiet"],
                       cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert (r.returncode, r.stderr) == (130, "rantcp: interrupted\n")
    assert not (tmp_path / "sw" / "runs").exists() or not any((tmp_path / "sw" / "runs").iterdir())


LONG_SWEEP = '[sweep]\nscenario = "builtin:lte-cell"\n[set]\nduration = "600s"\n[axes]\n"flow.cc" = ["newreno", "cubic"]\n'


@pytest.mark.parametrize("sig", ["TERM", "INT"])
def test_an_interrupted_sweep_does_not_wait_for_its_runs(tmp_path: Path, sig: str):
    """Before: the coordinator, stopped, waited in pool.shutdown for each worker to finish its run
    and then the run already queued to it (cancel_futures cancels only the runs not yet handed to
    the pool's queue); a SIGTERM (or a Ctrl-C to the coordinator alone) does not reach the
    workers at all. A group Ctrl-C took a run's wall to end a sweep (1.0-1.3 s with 1 s runs), a
    SIGTERM up to two runs'. Here 2 runs of several seconds each on 1 worker, stopped as the
    coordinator first waits: before, the whole sweep's wall (10-20 s); now well under one run's."""
    import time

    (tmp_path / "s.toml").write_text(LONG_SWEEP)
    t0 = time.perf_counter()
    r = at("rantcp.sweeps.executors.wait", sig, "sweep", "s.toml", "--out", "sw", "--workers", "1", "--quiet", cwd=tmp_path)
    wall = time.perf_counter() - t0
    assert (r.returncode, r.stderr) == (130, "rantcp: interrupted\n")
    assert wall < 4.0, wall


PREFETCH_PROBE = """
import sys
from pathlib import Path

sys.path.insert(0, ".")
Path("slow_module.py").write_text(
    "import threading, time\\n"
    "from pathlib import Path\\n"
    "Path('started').touch()\\n"
    "while threading.main_thread().is_alive():  # until the interpreter's exit has begun\\n"
    "    time.sleep(0.01)\\n"
    "time.sleep(1.0)  # C++ module init still running as the interpreter would finalize\\n"
    "Path('done').touch()\\n"
)
from rantcp import api

api._prefetch("slow_module")
while not Path("started").exists():
    pass
"""  # then the main thread ends: the interpreter exits, as `rantcp run --plots` after a Ctrl-C


def test_the_interpreter_waits_for_a_prefetch_import_before_it_finalizes(tmp_path: Path):
    """Before: the prefetch thread (api._prefetch: pyarrow, matplotlib, imported during a run) was
    a daemon thread, so a command interrupted during a run finalized the interpreter while that
    thread was still importing. CPython 3.11 ends such a thread with pthread_exit as it next takes
    the GIL, unwinding through the C++ frames of the extension it initialises (matplotlib's
    ft2font, pybind11): "terminate called without an active exception" and SIGABRT (1 of 904
    `run --plots` in scripts/interrupt_grid.py); exits at random instants of the prefetch crashed
    2 times in 489 (core dumps: a segfault with that thread in ft2font's init and the main thread
    in Py_FinalizeEx's GC; "Fatal Python error: PyThreadState_Get" in ft2font's static destructor
    at exit()). Here the import outlives the main thread by 1 s; it must run to its end."""
    (tmp_path / "probe.py").write_text(PREFETCH_PROBE)
    r = subprocess.run([sys.executable, "probe.py"], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert (r.returncode, r.stderr) == (0, "")
    assert (tmp_path / "done").exists()
