#!/usr/bin/env python3
"""Fuzz the commands other than `run`'s config, and the Python API, with bad input.

`scripts/fuzz_config.py single` covers every leaf of the scenario config; this covers the rest:
sweep files (axes as lists and ranges: start/stop/step/num/scale/unit, zip, seeds, unknown keys,
empty axes, huge products, wrong types), `reproduce`, `report`, `trace ingest|sessions|graph|
compare` (captures that are not captures, folders, empty and compressed files, databases that
are not databases, output files over data), `emulate`'s argument checks, and the public API
with wrong types. Each case is drawn from its seed (a finding replays with `--start SEED
--count 1`) and writes one line to the log. A case passes when

- the command exits 0 or 2 (1 only for `reproduce`'s failed claims), prints no traceback and
  no Rust panic, and each stderr line of an exit 2 is one `rantcp: error: …` line;
- the API call returns or raises ConfigError / ValueError / TypeError (nothing else: no
  PanicException, OSError, KeyError, …), and prints nothing on stderr;
- the folders and files made before the cases (a run folder, a sweep folder, a trace database, a
  folder and a file of the user's) are byte-identical afterwards (a run folder may gain its
  report.html).

Emulation: only arguments refused before a namespace is made (every case carries at least one
such; never --cleanup), each under `flock /tmp/rantcp-emu.lock`.

  .venv/bin/python scripts/fuzz_cli.py --start 1 --count 300
  .venv/bin/python scripts/fuzz_cli.py --only trace --start 1 --count 50

Not part of `make test` (600 cases take 6.5 min on a shared 2-core box; valid sweeps run at most
4 runs of 0.05 s). Its regression cases are tests/test_cli_fuzz.py. Run 2026-11-28, seeds 1-600
after the fixes: 481 commands (exit 2: 445, exit 0: 36, nothing else; no traceback, no panic, no
protected file changed) and 119 API calls (42 ConfigError, 58 TypeError, 8 TraceInputError,
4 ValueError, 5 returned; 2 OverflowError from pyo3 for phy.lte_tbs(-1, 10): now a ValueError naming i_tbs). Seeds
601-1000 then found trace.ingest("folder") searching "/" (fixed); rerun: nothing else. Found before them: report --output over a run's summary.json, trace --db over a Parquet/CSV
file (exit 0, nothing stored), a folder's *.pcap.gz skipped, tracebacks for output files in missing
folders and for compare's --seed/--metric, sweep ranges with inf or an overflowing span, 10^10-point
sweeps filling memory, emulate making namespaces for a misspelt host, API type errors.
"""
import argparse
import gzip
import hashlib
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from fuzz_config import bad  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
PY = str(ROOT / ".venv" / "bin" / "python")
RANTCP = str(ROOT / ".venv" / "bin" / "rantcp")
LOCK = "/tmp/rantcp-emu.lock"

NUMBERS = [0, 1, 2, -1, 3.5, 1e-12, 1e308, -1e308, "nan", "inf", "-inf", "1e400", 10**19, 100000, 100001, 10**10,
           '"10"', "true", "[]", "{}", '"x"', "1979-05-27"]


# ------------------------------------------------------------------ the workspace


def tree_digest(path: Path, ignore: tuple[str, ...] = ()) -> str:
    h = hashlib.sha256()
    if path.is_file():
        h.update(path.read_bytes())
        return h.hexdigest()
    for p in sorted(path.rglob("*")):
        if p.name in ignore or any(part in ignore for part in p.relative_to(path).parts):
            continue
        h.update(str(p.relative_to(path)).encode())
        if p.is_file():
            h.update(p.read_bytes())
    return h.hexdigest()


def setup(w: Path) -> dict[str, Path]:
    """The files cases point at; the `protected` ones must not change."""
    sh = lambda *a: subprocess.run(a, check=True, capture_output=True, text=True, cwd=w)  # noqa: E731
    keep = w / "keep"
    keep.mkdir()
    (keep / "notes.txt").write_text("the user's own file\n")
    (keep / "data.csv").write_text("a,b\n1,2\n")
    (w / "afile").write_text("precious\n")
    sh(RANTCP, "run", "builtin:p2p-bulk", "--set", "duration=0.2s", "--quiet", "--out", "run")
    (w / "s.toml").write_text('[sweep]\nscenario = "builtin:p2p-bulk"\n[set]\nduration = "0.05s"\n'
                              '[axes]\n"flow.cc" = ["newreno"]\n')
    sh(RANTCP, "sweep", "s.toml", "--out", "sweep", "--workers", "1", "--quiet")
    caps = w / "caps"
    caps.mkdir()
    sh(PY, "-c", "import sys; from rantcp import _native; _native.trace_write_synthetic(sys.argv[1], 300)", "caps/a.pcap")
    sh(PY, "-c", "import sys; from rantcp import _native; _native.trace_write_synthetic(sys.argv[1], 200)", "caps/b.pcapng")
    (caps / "c.pcap.gz").write_bytes(gzip.compress((caps / "a.pcap").read_bytes(), mtime=0))
    (caps / "empty.pcap").write_bytes(b"")
    (caps / "text.cap").write_text("not a capture\n")
    (caps / "half.pcap").write_bytes((caps / "a.pcap").read_bytes()[:1000])
    sh(RANTCP, "trace", "ingest", "caps/a.pcap", "--db", "db.duckdb", "--quiet", "--tag", "opt=a")
    sh(RANTCP, "trace", "ingest", "caps/b.pcapng", "--db", "db.duckdb", "--quiet", "--tag", "opt=b")
    return {"keep": keep, "afile": w / "afile", "run": w / "run", "sweep": w / "sweep", "caps": caps,
            "db": w / "db.duckdb"}


PROTECTED = ("keep", "afile", "run", "sweep", "caps", "db")


# ------------------------------------------------------------------ case generators


def toml_value(rng: random.Random) -> str:
    v = rng.choice(NUMBERS)
    return str(v) if not isinstance(v, float) or v == v else "nan"


VALID_AXES = ['"flow.cc" = ["newreno", "cubic"]', '"flow.mss" = { start = 536, stop = 1400, num = 2 }',
              '"bottleneck.loss" = [0.0, 0.01]', '"bottleneck.rate" = { start = 10, stop = 20, step = 10, unit = "Mbps" }',
              '"bottleneck.delay" = { start = 1, stop = 100, num = 2, scale = "log", unit = "ms" }']
MUTATIONS = ["", "", "", 'repetitions = 0', 'seeds = [1, 1]', 'zip = [["flow.cc", "nope"]]', 'zip = true',
             'seed = 9223372036854775808', '"flow.cc" = ["newreno", "vegas"]', '"flow.mss" = [10, 20]',
             '"bottleneck.loss" = [2.0]', '"flow.mss" = { start = 536, stop = 1400, num = 2, scale = "log", step = 1 }',
             '"bottleneck.rate" = { start = 20, stop = 10, step = 10, unit = "Mbps" }', '"x.y" = [1]',
             '"flow.cc" = []', '"flow.cc" = [{ a = 1 }]', '"bottleneck.loss" = [nan]', '"flow.mss" = ["1400", 1400]']


def gen_sweep_near_valid(rng: random.Random, case: Path) -> list[str]:
    """A valid sweep of at most 4 runs with at most one thing wrong."""
    m = rng.choice(MUTATIONS)
    head = ['[sweep]', 'scenario = "builtin:p2p-bulk"'] + ([m] if m and "=" in m and not m.startswith('"') else [])
    axes = rng.sample(VALID_AXES, rng.randint(0, 2))
    if m.startswith('"'):
        axes = [a for a in axes if not a.startswith(m.split(" = ")[0])] + [m]
    (case / "sw.toml").write_text("\n".join(head + ["[set]", 'duration = "0.05s"', "[axes]"] + axes) + "\n")
    return ["sweep", str(case / "sw.toml"), "--out", str(case / "new"), "--quiet", "--workers", "1"]


def gen_sweep(rng: random.Random, case: Path) -> list[str]:
    if rng.random() < 0.4:
        return gen_sweep_near_valid(rng, case)
    lines = ["[sweep]"]
    if rng.random() < 0.9:
        scenario = rng.choice(['"builtin:p2p-bulk"'] * 6 + ['"builtin:nope"', '"missing.toml"', "5", '""'])
        lines.append(f"scenario = {scenario}")
    for key in rng.sample(["name", "repetitions", "seed", "seeds", "zip", "bogus"], rng.choice([0, 0, 1, 2, 3])):
        val = {"name": rng.choice(['"n"', '"a/b"', '""', "1"]),
               "repetitions": rng.choice(["1", "2", "0", "-1", "1000001", '"2"', "2000"]),
               "seed": rng.choice(["1", "-1", "9223372036854775808", '"x"']),
               "seeds": rng.choice(["[1, 2]", "[]", "[1, 1]", '["a"]', "[-1]"]),
               "zip": rng.choice(["true", "false", '[["flow.cc", "flow.mss"]]', '[["nope"]]', '[["flow.cc"], ["flow.cc"]]', "3"]),
               "bogus": "1"}[key]
        lines.append(f"{key} = {val}")
    lines += ["[set]", 'duration = "0.05s"']
    if rng.random() < 0.3:
        lines.append(rng.choice(['"flow.mss" = 1400', 'seed = 3', '"flow.cc" = {}', 'x = 1979-05-27', '"nope.x" = 1',
                                 '"bottleneck.loss" = nan']))
    lines.append("[axes]")
    for _ in range(rng.randint(0, 3)):
        path = rng.choice(["flow.cc", "flow.mss", "bottleneck.loss", "bottleneck.rate", "nope.x", "seed", "flow"])
        kind = rng.random()
        if kind < 0.4:
            vals = rng.sample(['"newreno"', '"cubic"', '"vegas"', "1400", "536", "0.01", "0", "true", "nan", "[1, 2]",
                               "{a = 1}", "1979-05-27", '"1400"'], rng.randint(0, 3))
            lines.append(f'"{path}" = [{", ".join(vals)}]')
        else:
            keys = rng.sample(["start", "stop", "step", "num", "scale", "unit", "bogus"], rng.randint(0, 5))
            parts = []
            for k in keys:
                v = {"scale": rng.choice(['"log"', '"linear"', '"exp"', "1"]),
                     "unit": rng.choice(['"Mbps"', '"ms"', "5", '""']),
                     "num": rng.choice(["1", "2", "3", "0", "100001", "-2", "2.5", "10000000000"])}.get(k) or toml_value(rng)
                parts.append(f"{k} = {v}")
            lines.append(f'"{path}" = {{ {", ".join(parts)} }}')
    if rng.random() < 0.1:
        lines = ["[sweep", "x = = 1"] if rng.random() < 0.5 else ["[nope]", "a = 1"]
    (case / "sw.toml").write_text("\n".join(dict.fromkeys(lines)) + "\n")
    # Most sweeps point at a folder rantcp refuses (every check of the file, no run); a few at a
    # new folder with the points capped small (the point checks, a handful of 0.05 s runs).
    out = rng.choice(["keep", "run", "afile", "caps", "sweep"] + [str(case / "new")] * 5)
    argv = ["sweep", str(case / "sw.toml"), "--out", out, "--quiet"]
    argv += rng.choice([["--workers", "1"]] * 6 + [["--workers", "0"], ["--workers", "-2"],
                        ["--workers", "x"], ["--dask", "bogus://"], ["--strict", "--workers", "1"]])
    if out.endswith("new") and runs_of(case / "sw.toml") > 4:
        argv[3] = "keep"
    return argv


def runs_of(spec: Path) -> int:
    """Runs of a sweep file as rantcp counts them (0 when it is refused)."""
    from rantcp.sweeps.spec import load_spec

    try:
        return len(load_spec(spec).tasks())
    except Exception:
        return 0


def gen_reproduce(rng: random.Random, case: Path) -> list[str]:
    name = rng.choice(["seed-004", "seed-000", "nope", "", "keep", str(case / "repro"), "--list"])
    if name == str(case / "repro"):
        (case / "repro").mkdir()
        (case / "repro" / "reproduction.toml").write_text(rng.choice(["[reproduction]\nname = 1\n", "x = = 1\n", "",
                                                                      "[reproduction]\nname = \"r\"\n[quick]\nbogus = 1\n"]))
    argv: list[str | list[str]] = ["reproduce", *([name] if name else [])]
    # A valid reproduction only ever meets a folder it must refuse (no sweep is run here).
    argv += ["--out", rng.choice(["keep", "run", "sweep", "afile", "caps"])]
    argv += rng.sample([["--quick"], ["--workers", rng.choice(["0", "-1", "x", "1"])], ["--quiet"],
                        ["--dask", rng.choice(["bogus", "local:0", "local:x"])]], rng.randint(0, 2))
    return [a for part in argv for a in (part if isinstance(part, list) else [part])]


def gen_report(rng: random.Random, case: Path) -> list[str]:
    folder = rng.choice(["run", "sweep", "keep", "caps", "afile", "missing", "db.duckdb", ""])
    argv = ["report", folder]
    if rng.random() < 0.8:
        argv += ["--output", rng.choice(["run/summary.json", "run/flows.parquet", "keep", "keep/notes.txt", "missing/x.html",
                                         str(case / "r.html"), str(case), "/dev/full", "afile", "sweep/sweep.duckdb",
                                         "run/report.html", ""])]
    return argv


def gen_ingest(rng: random.Random, case: Path) -> list[str]:
    caps = rng.sample(["caps", "caps/a.pcap", "caps/c.pcap.gz", "caps/empty.pcap", "caps/text.cap", "caps/half.pcap",
                       "keep", "missing.pcap", "run", "/dev/null", "db.duckdb"], rng.randint(1, 3))
    db = rng.choice([str(case / "t.duckdb"), str(case / "t.duckdb"), "run/flows.parquet", "keep/data.csv", "keep",
                     "run/summary.json", "afile", "missing/t.duckdb", "caps/a.pcap"])
    argv = ["trace", "ingest", *caps, "--db", db, "--quiet"]
    if rng.random() < 0.4:
        argv += ["--idle-split", rng.choice(["300", "0", "-1", "nan", "inf", "1e-12", "1e300", "x"])]
    if rng.random() < 0.3:
        argv += ["--tag", rng.choice(["a=b", "=b", "ab", "a==b", "a="])]
    if rng.random() < 0.3:
        argv += ["--pattern", rng.choice(["{a}_{b}.pcap", "{a", "{a}{a}", "x", "{1a}.pcap", "{a}"])]
    if rng.random() < 0.3:
        m = case / "m.csv"
        m.write_text(rng.choice(["file,opt\n*.pcap,x\n", "nofile,opt\n", "file,1bad\n*,x\n", "file,opt\n*.pcap,x,y\n", ""]))
        argv += ["--manifest", rng.choice([str(m), "keep", "missing.csv"])]
    return argv


def gen_trace_read(rng: random.Random, case: Path) -> list[str]:
    db = rng.choice(["db.duckdb"] * 4 + ["missing.duckdb", "keep/data.csv", "afile", "keep", "run/flows.parquet"])
    sub = rng.choice(["sessions", "graph", "compare"])
    argv = ["trace", sub, "--db", db]
    if sub == "sessions":
        if rng.random() < 0.5:
            argv += ["--where", rng.choice(["packets > 1", "drop table x", "1=1; drop table sessions", "nope > 1", "", "'"])]
        if rng.random() < 0.5:
            # (An existing .csv is replaced: the user named it as the output.)
            argv += ["--csv", rng.choice([str(case / "s.csv"), "run/summary.json", "keep", "missing/s.csv", "keep/notes.txt"])]
    elif sub == "graph":
        argv += ["--session", rng.choice(["0", "1", "-1", "99999", "x", "99999999999999999999"])]
        if rng.random() < 0.5:
            argv += ["--kind", rng.choice(["sequence", "all", "rtt", "bogus"])]
        if rng.random() < 0.6:
            argv += ["--out", rng.choice([str(case / "g.png"), str(case / "g"), str(case), "run/summary.json", "missing/g.png",
                                          "keep/notes.txt"])]
    else:
        argv += ["--by", rng.choice(["opt", "opt", "nope", "client_ip"])]
        for opt, vals in (("--baseline", ["a", "b", "c"]), ("--treatment", ["a", "b", "c"]),
                          ("--metric", ["throughput_bps", "client_ip", "nope", "mid_connection"]),
                          ("--group-by", ["opt", "nope"]), ("--bootstrap", ["0", "10", "-5", "100000000000", "x"]),
                          ("--seed", ["1", "-1", "18446744073709551616", "x"]),
                          ("--csv", [str(case / "c.csv"), "run/summary.json", "missing/c.csv"])):
            if rng.random() < 0.3:
                argv += [opt, rng.choice(vals)]
        if rng.random() < 0.3:
            wf = case / "w.toml"
            wf.write_text(rng.choice(["[weights.opt]\na = 1\nb = 1\n", "x = 1\n", "[weights]\nopt = 3\n",
                                      "[weights.opt]\na = -1\n", "[weights.opt]\na = nan\n", "group_by = 3\n", "= =\n"]))
            argv += ["--weights", rng.choice([str(wf), "keep", "missing.toml"])]
    return argv


EARLY_BAD_EMULATE = [["--moderation-us", "-1"], ["--moderation-us", "1e9"], ["--set", "nope.x=1"], ["--duration", "xx"],
                     ["--seed", "-1"], ["--out", "keep"], ["--out", "afile"], ["--out", "run/summary.json"],
                     ["--", "ls"], ["--", "nohost:", "ls"], ["--", "sender:"]]


def gen_emulate(rng: random.Random, case: Path) -> list[str]:
    scen = rng.choice(["builtin:p2p-bulk", "builtin:lte-cell", "builtin:nope", "missing.toml", "keep", ""])
    argv = ["emulate"] + ([scen] if scen else [])
    extra = rng.sample([["--traffic"], ["--offload"], ["--duration", rng.choice(["1s", "0s", "-1s"])],
                        ["--moderation-us", rng.choice(["0", "50"])], ["--set", "flow.cc=cubic"]], rng.randint(0, 2))
    bad_parts = rng.sample(EARLY_BAD_EMULATE, rng.randint(1, 2))
    trailing = [p for p in bad_parts if p[0] == "--"][:1]
    for p in extra + [p for p in bad_parts if p[0] != "--"]:
        argv += p
    for p in trailing:
        argv += p
    if not any(p[0] != "--" for p in bad_parts) and not trailing:
        argv += ["--out", "keep"]
    return argv


API_CALLS = [
    "rantcp.run({a})", "rantcp.run('builtin:p2p-bulk', seed={a}, overrides={{'duration': '0.05s'}}, out=W + '/api-out')",
    "rantcp.run('builtin:p2p-bulk', overrides={a}, out=W + '/keep')", "rantcp.validate({a})",
    "rantcp.validate('builtin:p2p-bulk', {a})", "rantcp.validate('builtin:p2p-bulk', {{}}, {a})",
    "rantcp.load({a})", "rantcp.load_result({a})", "rantcp.sweep({a}, out=W + '/keep')",
    "rantcp.sweep({{'sweep': {{'scenario': 'builtin:p2p-bulk'}}, 'set': {{'duration': '0.05s'}}}}, out=W + '/keep', workers={a})",
    "rantcp.builtin_toml({a})", "rantcp.config_schema({a})", "rantcp.emulate({a})",
    "rantcp.phy.nr_tbs_raw(10, 2, {a})", "rantcp.phy.nr_tbs({a}, 5, 'nr1')", "rantcp.phy.lte_tbs({a}, 10)",
    "rantcp.phy.pathloss({a}, 100.0)", "rantcp.phy.bler({a}, 5)", "rantcp.phy.n_prb({a}, 30)",
    "rantcp.trace.ingest({a}, W + '/api.duckdb')", "rantcp.trace.sessions({a})",
    "rantcp.trace.compare(W + '/db.duckdb', {a})", "rantcp.report.write_report({a})",
]
API_ARGS = ["None", "5", "-1", "1.5", "float('nan')", "float('inf')", "'x'", "''", "[]", "{}", "b'x'", "True",
            "2**64", "-2**63", "W + '/keep'", "W + '/run'", "W + '/afile'", "W + '/caps'", "object()", "{'a': 1}",
            "['builtin:p2p-bulk']", "{'flow.cc': None}", "{1: 2}"]
API_OK = ("ConfigError", "ValueError", "TypeError", "TraceInputError")


def gen_api(rng: random.Random, case: Path) -> list[str]:
    call = rng.choice(API_CALLS).format(a=rng.choice(API_ARGS))
    code = (
        "import sys, rantcp, rantcp.report, rantcp.trace, rantcp.phy\n"
        f"W = {str(case.parent.parent)!r}\n"
        "try:\n"
        f"    {call}\n"
        "    print('returned')\n"
        "except BaseException as e:\n"
        "    print('raised', type(e).__name__, str(e).splitlines()[0][:200] if str(e) else '')\n"
    )
    return ["__api__", code, call]


GENERATORS = {"sweep": gen_sweep, "reproduce": gen_reproduce, "report": gen_report, "ingest": gen_ingest,
              "trace": gen_trace_read, "emulate": gen_emulate, "api": gen_api}
WEIGHTS = {"sweep": 4, "reproduce": 1, "report": 2, "ingest": 3, "trace": 3, "emulate": 1, "api": 3}


# ------------------------------------------------------------------ running a case


def run_case(argv: list[str], w: Path) -> tuple[str, object, str]:
    """(verdict, exit code or API outcome, stderr) — verdict "ok" or "BAD"."""
    if argv[0] == "__api__":
        r = subprocess.run([PY, "-c", argv[1]], capture_output=True, text=True, cwd=w, timeout=300)
        out = r.stdout.strip()
        kind = out.split()[1] if out.startswith("raised") else "returned"
        ok = r.returncode == 0 and (out == "returned" or kind in API_OK) and not r.stderr.strip()
        return ("ok" if ok else "BAD"), out[:240], r.stderr.strip()[-300:]
    cmd = [RANTCP, *argv]
    if argv[0] == "emulate":
        cmd = ["flock", "-w", "120", LOCK, *cmd]
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, cwd=w, timeout=300)
    except subprocess.TimeoutExpired:
        return "BAD", "TIMEOUT", ""
    err = r.stderr.strip()
    allowed = (0, 1, 2) if argv[0] == "reproduce" else (0, 2)
    lines = err.splitlines()
    prefixes = ("rantcp: error: ", "rantcp: warning: ") if argv[:2] == ["trace", "ingest"] else ("rantcp: error: ",)
    b = (r.returncode not in allowed or "Traceback" in err or "panick" in err
         or (r.returncode == 2 and (not lines or not all(x.startswith(prefixes) for x in lines))))
    # One line per error; only `trace ingest` reports one per file.
    if r.returncode == 2 and argv[:2] != ["trace", "ingest"] and len(lines) != 1:
        b = True
    return ("BAD" if b else "ok"), r.returncode, err[-300:]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--start", type=int, default=1)
    ap.add_argument("--count", type=int, default=100)
    ap.add_argument("--only", choices=sorted(GENERATORS), help="one family of cases")
    ap.add_argument("--log", default="fuzz-cli-results.txt")
    a = ap.parse_args()
    w = Path(tempfile.mkdtemp(prefix="rantcp-fuzz-cli-"))
    found = 0
    counts: dict[str, int] = {}
    with open(a.log, "a") as log:
        try:
            paths = setup(w)
            digest = {k: tree_digest(paths[k], ignore=("report.html",)) for k in PROTECTED}
            names = sorted(GENERATORS)
            for seed in range(a.start, a.start + a.count):
                rng = random.Random(seed)
                fam = a.only or rng.choices(names, weights=[WEIGHTS[n] for n in names])[0]
                case = w / "cases" / str(seed)
                case.mkdir(parents=True)
                argv = GENERATORS[fam](rng, case)
                verdict, rc, err = run_case(argv, w)
                changed = [k for k in PROTECTED if tree_digest(paths[k], ignore=("report.html",)) != digest[k]]
                if changed:
                    verdict = "BAD"
                    err += f" [CHANGED: {', '.join(changed)}]"
                    digest = {k: tree_digest(paths[k], ignore=("report.html",)) for k in PROTECTED}
                shown = argv[2] if argv[0] == "__api__" else " ".join(argv)
                key = f"{fam} {rc if not isinstance(rc, str) else rc.split()[0] + ' ' + (rc.split() + [''])[1]}"
                counts[key] = counts.get(key, 0) + 1
                line = f"{verdict:4} seed={seed} {fam}: {shown} -> {rc} :: {err!r}"
                log.write(line + "\n")
                log.flush()
                if verdict == "BAD":
                    found += 1
                    print(line)
                shutil.rmtree(case, ignore_errors=True)
        finally:
            shutil.rmtree(w, ignore_errors=True)
    for k in sorted(counts):
        print(f"{counts[k]:6}  {k}")
    print(f"{a.count} cases, {found} to look at; every case in {a.log}")
    sys.exit(1 if found else 0)


if __name__ == "__main__":
    main()
