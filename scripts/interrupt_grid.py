#!/usr/bin/env python3
"""Signal a command at every instant of a grid over its start-up and find hangs and lost signals.

    .venv/bin/python scripts/interrupt_grid.py TARGET SIGNAL T0 T1 STEP REPETITIONS [--log FILE]

TARGET: run (`rantcp run` over an earlier run folder), runplots (the same with --plots), sweep
(scripts/fuzz_interrupt.py's 8-run sweep, 2 workers), reproduce (`reproduce seed-003-split
--quick`, 2 workers). SIGNAL: INTG (SIGINT to the process group: a terminal's Ctrl-C), INT, TERM
(to the process), TERMG. Each case starts the command in its own session, sends the signal T
seconds after the start (T = T0, T0+STEP, ... T1, each REPETITIONS times, serially) and flags:

- hang: not ended 20 s after the signal. Before it is killed: each process of the group's
  /proc status (SigBlk/SigIgn/SigCgt), kernel stack, and `py-spy dump --native` when py-spy is
  on PATH; then SIGABRT, on which PYTHONFAULTHANDLER (set for every case) prints every thread's
  Python stack to stderr;
- exit0-after-signal: the signal was sent while the process ran and it exited 0 anyway (the
  state it was in when signalled is logged: "Z" or flag PF_EXITING means it had already finished);
- traceback ("Traceback", "Exception ignored", "Fatal Python error" on stderr), an exit status
  other than 0, 130 or the signal's own, anything but "rantcp: interrupted" with 130, and
  processes of the group alive 5 s after the command ended.

One JSON line per case in the log (the work folders of flagged cases are kept); the counts at
the end. Unlike scripts/fuzz_interrupt.py it does not check the outputs: it looks for what the
fuzz's random instants left unreproduced.

Runs 2026-11-28 (2-core box shared with other builds; ~4,500 cases): before the fixes, `runplots
INTG 0 0.9 0.004` hung 4 times in its first 179 cases (0.33-0.40 s; importlib's import lock, see
rantcp.interrupts); `sweep INTG/TERM 0 0.6 0.005 2` (484) lost 12 signals (exit 0 after the whole
sweep) and aborted twice in DuckDB's import, `runplots` lost 3 in 904 and `reproduce INTG` one
(a C extension's init swallowing the interrupt). After: sweep 0.10-0.35 s (204), runplots
(226), run (1,206): no hang, no lost signal. Left: a traceback for a Ctrl-C in the first ~60 ms
(Python's own start-up, before `rantcp` installs its handler), and one abort at exit ("terminate
called without an active exception", 1 in 904 `run --plots`, seen before the fixes too).

Start-up, `run INTG 0 0.12 0.002 2` (122 cases, load 9-10): before rantcp.__main__ 28 ended by
SIGINT before Python's handler (no output), 14 "Fatal Python error" in `site` (exit 1), 77
KeyboardInterrupt tracebacks while the console script imported rantcp.cli (exit -2), one traceback
in the interpreter's check of argv[0] after which the run completed (exit 0), 2 exit 130; after:
27, 10, 9 tracebacks (all at the console script's `from rantcp.__main__ import console`, before
any of rantcp's code runs), 0, 76 exit 130. A grid started in the background from a
non-interactive shell (`cmd &`) used to inherit SIGINT ignored and passed that on to the commands,
which then ignored every SIGINT; it now restores SIGINT's default action first.

The abort at exit: the daemon prefetch thread (rantcp.api._prefetch) was ended inside matplotlib's
ft2font init as the interpreter finalized. Exiting a script at a random instant of the prefetch
(0-1.6 s): 2 crashes in 489 (a segfault, a "Fatal Python error" abort), and 1 in 150 exiting
0-30 ms after ft2font's import began; with the thread joined instead, 0 in 400 and 0 in 150.
`runplots INTG 0.1 1.5 0.01 1` after: 141 exit 130, no abort; signalled 0.4-1.5 s in, the time
from the signal to the exit went from a median 0.35 s (32 cases, step 0.035 before) to 2.6 s (111)
at load 10: the rest of the pyarrow and matplotlib imports.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RANTCP = str(ROOT / ".venv" / "bin" / "rantcp")
HANG_S = 20.0
SIGNALS = {"INT": signal.SIGINT, "INTG": signal.SIGINT, "TERM": signal.SIGTERM, "TERMG": signal.SIGTERM}
sys.path.insert(0, str(ROOT / "scripts"))
from fuzz_interrupt import SWEEP_TOML  # noqa: E402 - the same sweep as the fuzz's


def argv_for(target: str, c: Path, w: Path) -> list[str]:
    run = [RANTCP, "run", "builtin:p2p-bulk", "--seed", "2", "--set", "duration=2s", "--quiet", "--out", str(c / "out")]
    return {
        "run": run,
        "runplots": [*run, "--plots"],
        "sweep": [RANTCP, "sweep", str(w / "sweep.toml"), "--out", str(c / "sw"), "--workers", "2", "--quiet"],
        "reproduce": [RANTCP, "reproduce", "seed-003-split", "--quick", "--out", str(c / "rp"), "--workers", "2"],
    }[target]


def group_pids(pgid: int, zombies: bool = True) -> list[int]:
    out = []
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                fields = Path(f"/proc/{d}/stat").read_text().rsplit(")", 1)[1].split()
                if int(fields[2]) == pgid and (zombies or fields[0] != "Z"):
                    out.append(int(d))
            except (OSError, ValueError, IndexError):
                pass
    return sorted(out)


def diagnose(pgid: int) -> str:
    lines = []
    pyspy = shutil.which("py-spy")
    for pid in group_pids(pgid):
        lines.append(f"=== pid {pid}")
        try:
            lines.append(Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()[:300])
            lines += [ln for ln in Path(f"/proc/{pid}/status").read_text().splitlines() if ln.startswith(("State", "Sig", "Shd", "Threads"))]
            lines.append("wchan " + Path(f"/proc/{pid}/wchan").read_text())
            lines.append(Path(f"/proc/{pid}/stack").read_text())
        except OSError as e:
            lines.append(str(e))
        if pyspy:
            r = subprocess.run([pyspy, "dump", "--native", "--pid", str(pid)], capture_output=True, text=True, timeout=60)
            lines.append(r.stdout + r.stderr)
    return "\n".join(lines)


def one(target: str, sig: str, delay: float, c: Path, w: Path) -> dict:
    c.mkdir(parents=True)
    if target.startswith("run"):
        shutil.copytree(w / "old-run", c / "out")
    env = dict(os.environ, PYTHONFAULTHANDLER="1")
    t0 = time.perf_counter()
    p = subprocess.Popen(argv_for(target, c, w), cwd=c, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                         start_new_session=True, env=env)
    sent = pre = None
    try:
        p.wait(timeout=max(0.0, delay - (time.perf_counter() - t0)))
    except subprocess.TimeoutExpired:
        try:
            st = Path(f"/proc/{p.pid}/stat").read_text().rsplit(")", 1)[1].split()
            pre = [st[0], int(st[6]) & 0x4, Path(f"/proc/{p.pid}/wchan").read_text()]  # state, PF_EXITING, wchan
        except (OSError, IndexError):
            pass
        if sig.endswith("G"):
            os.killpg(p.pid, SIGNALS[sig])
        else:
            os.kill(p.pid, SIGNALS[sig])
        sent = time.perf_counter() - t0
    res: dict = {"target": target, "sig": sig, "delay": delay, "sent": sent and round(sent, 4), "pre": pre}
    diag = ""
    try:
        _, err = p.communicate(timeout=HANG_S)
    except subprocess.TimeoutExpired:
        res["hang"] = True
        diag = diagnose(p.pid)
        try:
            os.kill(p.pid, signal.SIGABRT)  # faulthandler: every thread's Python stack
            _, err = p.communicate(timeout=10)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            os.killpg(p.pid, signal.SIGKILL)
            _, err = p.communicate()
    end = time.perf_counter() - t0
    res.update(rc=p.returncode, end=round(end, 4))
    if sent is not None:
        res["stop_s"] = round(end - sent, 4)
    for _ in range(100):  # zombies count as gone: the container's init may reap them late
        if not group_pids(p.pid, zombies=False):
            break
        time.sleep(0.05)
    else:
        res["stragglers"] = True
        diag += "\nSTRAGGLERS\n" + diagnose(p.pid)
        os.killpg(p.pid, signal.SIGKILL)
    bad = []
    if res.get("hang"):
        bad.append("hang")
    if "Traceback" in err or "Fatal Python" in err or "Exception ignored" in err:
        bad.append("traceback")
    if sent is not None and p.returncode == 0:
        bad.append("exit0-after-signal")
    if p.returncode not in {0, 130, -SIGNALS[sig]}:
        bad.append(f"rc{p.returncode}")
    if p.returncode == 130 and err.strip() != "rantcp: interrupted":
        bad.append("stderr")
    if res.get("stragglers"):
        bad.append("stragglers")
    res["bad"] = bad
    if bad:
        res["err"] = err[:3000] + ("\n...\n" + err[-2000:] if len(err) > 5000 else err[3000:5000])
        if diag:
            res["diag"] = diag
    else:
        shutil.rmtree(c, ignore_errors=True)
    return res


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("target", choices=["run", "runplots", "sweep", "reproduce"])
    ap.add_argument("signal", choices=sorted(SIGNALS))
    ap.add_argument("t0", type=float)
    ap.add_argument("t1", type=float)
    ap.add_argument("step", type=float)
    ap.add_argument("repetitions", type=int)
    ap.add_argument("--log", help="JSON lines (default: interrupt-grid-TARGET-SIGNAL.jsonl)")
    a = ap.parse_args()
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        # Started in the background by a non-interactive shell (`cmd &`): SIGINT is ignored, and
        # the commands would inherit that across exec and ignore every SIGINT sent to them.
        signal.signal(signal.SIGINT, signal.SIG_DFL)
    w = Path(tempfile.mkdtemp(prefix="rantcp-grid-"))
    (w / "sweep.toml").write_text(SWEEP_TOML)
    subprocess.run([RANTCP, "run", "builtin:p2p-bulk", "--seed", "1", "--set", "duration=0.5s", "--quiet", "--out",
                    str(w / "old-run")], check=True)
    n = int(round((a.t1 - a.t0) / a.step)) + 1
    counts: dict[str, int] = {}
    flagged = 0
    with open(a.log or f"interrupt-grid-{a.target}-{a.signal}.jsonl", "a") as log:
        for rep in range(a.repetitions):
            for i in range(n):
                r = one(a.target, a.signal, round(a.t0 + i * a.step, 4), w / f"case-{rep}-{i}", w)
                key = ",".join(r["bad"]) or f"exit {r['rc']}"
                flagged += bool(r["bad"])
                counts[key] = counts.get(key, 0) + 1
                log.write(json.dumps(r) + "\n")
                log.flush()
                if r["bad"]:
                    print(json.dumps({k: v for k, v in r.items() if k != "diag"})[:2000], flush=True)
    print(a.target, a.signal, json.dumps(counts), f"(flagged cases kept in {w})" if flagged else "", flush=True)
    if not flagged:
        shutil.rmtree(w, ignore_errors=True)


if __name__ == "__main__":
    main()
