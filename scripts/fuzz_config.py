#!/usr/bin/env python3
"""Fuzz the CLI with configurations, looking for what tests of one knob at a time miss.

Three modes, each seeded (a finding replays with its seed) and each writing one line per run:

  single  every config path of the shipped schema × nonsense values (wrong type, negative, NaN,
          huge, empty durations) on the given scenarios: every run must succeed or exit 2 with
          one line; never a panic or a traceback.
  combo   random combinations of valid knobs and network functions on the radio scenarios:
          the same rule, plus a summary.json for every successful run. Runs that carry nothing
          are marked `zero` to look at (heavy loss can explain them; a half-open connection
          through a proxy did not).
  pair    a random base configuration with and without one network function, same seed: runs
          where switching it on loses more than 70 % of the goodput are marked `LOW`.

  .venv/bin/python scripts/fuzz_config.py single --scenarios lte-cell,mmwave-blockage
  .venv/bin/python scripts/fuzz_config.py combo --start 1 --count 200
  .venv/bin/python scripts/fuzz_config.py pair --start 1 --count 150

The other commands (sweep files, reproduce, report, trace, emulate's arguments) and the Python
API: scripts/fuzz_cli.py.

Not part of `make test` (minutes to tens of minutes on 2 cores). Findings so far (2026-11-28):
mmWave ignored `radio.bandwidth_mhz` (single), a proxy consumed the ACK completing a
handshake the UE opened (combo, lte-m2m), a proxy's early ACKs carried no SACK blocks (combo,
mmwave-urban with loss upstream), the split host's 1 MB buffer caps I-TCP on mmWave (pair).
"""
import argparse
import json
import random
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
RANTCP = str(ROOT / ".venv" / "bin" / "rantcp")
SCHEMA = ROOT / "python" / "rantcp" / "config.schema.json"

COMBO = {
    "ues": ["1", "2", "5"],
    "traffic": ["tcp", "udp-saturation"],
    "mac.bsr": ["standard", "ideal"],
    "mac.scheduler": ["rr", "pf", "max-rate"],
    "rlc.mode": ["am", "um"],
    "rlc.buffer": ["10KiB", "64KiB", "1MiB"],
    "flow.stack": ["linux", "rfc"],
    "flow.cc": ["newreno", "cubic", "highspeed", "bbr"],
    "flow.app": ["bulk", "download", "ftp1", "bursts", "video"],
    "flow.sack": ["true", "false"],
    "flow.timestamps": ["true", "false"],
    "flow.pacing": ["true", "false"],
    "flow.ack_every": ["1", "2", "4"],
    "flow.mss": ["536", "1400"],
    "flow.count": ["1", "2"],
    "functions.ack_filter.mode": ["hybrid-opt", "granted", "highest"],
    "functions.proxy.mode": ["none", "pep", "mmpep", "off"],
    "functions.proxy.cache": ["16KiB", "64MiB"],
    "functions.split.mode": ["off", "i-tcp", "es-tcp", "as-tcp"],
    "functions.rst_tracker.enabled": ["true", "false"],
    "functions.radio_feedback.enabled": ["true", "false"],
    "functions.close_coupled.enabled": ["true", "false"],
    "functions.impair.loss": ["0", "0.001", "0.01"],
    "functions.impair.point": ["forward", "dl-ingress", "dl-egress", "host"],
    "core.error_rate": ["0", "1e-6"],
    "mac.ul_proactive_grant": ["0B", "200B"],
    "mac.bsr_enhancement": ["true", "false"],
    "ue.indoor": ["0", "0.5"],
    "radio.fading": ["true", "false"],
}
FUNCTIONS = [
    "functions.proxy.mode=pep", "functions.proxy.mode=mmpep",
    "functions.ack_filter.mode=hybrid-opt", "functions.ack_filter.mode=granted",
    "functions.split.mode=i-tcp", "functions.split.mode=es-tcp", "functions.split.mode=as-tcp",
    "functions.rst_tracker.enabled=true", "functions.close_coupled.enabled=true",
]
RAN = ["lte-cell", "lte-7cell", "lte-m2m", "mmwave-blockage", "mmwave-urban", "radio-aware",
       "split-tcp"]


def run(scenario, sets, seed, duration, out):
    args = [RANTCP, "run", f"builtin:{scenario}", "--quiet", "--force", "--out", str(out),
            "--set", f"duration={duration}", "--seed", str(seed)]
    for s in sets:
        args += ["--set", s]
    shutil.rmtree(out, ignore_errors=True)
    try:
        r = subprocess.run(args, capture_output=True, text=True, timeout=600)
    except subprocess.TimeoutExpired:
        return "TIMEOUT", "", None
    err = r.stderr.strip()
    goodput = None
    if r.returncode == 0:
        try:
            d = json.loads((out / "summary.json").read_text())
            goodput = sum(f.get("goodput_mbps") or 0 for f in d["flows"])
        except (OSError, ValueError, KeyError) as e:
            return "NOSUMMARY", str(e), None
    return r.returncode, err, goodput


def bad(rc, err):
    return (rc not in (0, 2) or "panick" in err or "Traceback" in err
            or (rc == 2 and ("\n" in err or not err)))


def leaves():
    """(top-level scenario type, path, schema node) for every leaf of the config schema."""
    s = json.loads(SCHEMA.read_text())
    defs = s["$defs"]

    def res(n):
        while "$ref" in n:
            n = {**defs[n["$ref"].split("/")[-1]], **{k: v for k, v in n.items() if k != "$ref"}}
        return n

    def walk(n, prefix, top, out):
        n = res(n)
        if n.get("type") == "object" and "properties" in n:
            for k, v in n["properties"].items():
                walk(v, prefix + [k], top, out)
        else:
            out.append((top, ".".join(prefix), n))
    out: list[tuple[str, str, Any]] = []
    for a in s["anyOf"]:
        top = a["$ref"].split("/")[-1]
        walk(defs[top], [], top, out)
    return out


def nonsense(n):
    alts = n.get("anyOf") or n.get("oneOf") or []
    pats = [a.get("pattern", "") for a in alts] + [n.get("pattern", "")]
    t = n.get("type")
    types = set([t] if isinstance(t, str) else (t or []))
    types |= {a.get("type") for a in alts if isinstance(a.get("type"), str)}
    v = []
    if any("ns|us" in p for p in pats):
        v += ["0s", "1ns", "1e9h", "-1s", "xx"]
    if any("bps" in p for p in pats):
        v += ["0bps", "1bps", "1e15bps", "abc"]
    if any("KiB" in p for p in pats):
        v += ["0", "1", "1e15B", "-5"]
    if "integer" in types:
        v += ["0", "-1", "4294967296", "1e3"]
    if "number" in types:
        v += ["0", "-1", "1e300", "nan", "inf"]
    if "boolean" in types:
        v += ["maybe"]
    if n.get("enum") or any("const" in a for a in alts):
        v += ["bogus"]
    return list(dict.fromkeys(v or ["bogus", "0"]))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("mode", choices=["single", "combo", "pair"])
    ap.add_argument("--start", type=int, default=1)
    ap.add_argument("--count", type=int, default=100)
    ap.add_argument("--scenarios", default="lte-cell,mmwave-blockage",
                    help="single: radio scenarios to try every radio path on")
    ap.add_argument("--log", default="fuzz-results.txt")
    a = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="rantcp-fuzz-"))
    log = open(a.log, "a")
    found = 0

    def note(line, flag):
        nonlocal found
        found += flag
        log.write(line + "\n")
        log.flush()
        if flag:
            print(line)

    try:
        if a.mode == "single":
            own = {"P2pBulk": ["p2p-bulk"], "CcCompare": ["cc-compare"],
                   "SplitTcp": ["split-tcp"], "RanScenario": a.scenarios.split(",")}
            for top, path, n in leaves():
                if path in ("scenario", "duration") or path.startswith("output."):
                    continue
                for sc in own.get(top, []):
                    for v in nonsense(n):
                        rc, err, _ = run(sc, [f"{path}={v}"], 1, "0.2s", work / "o")
                        b = bad(rc, err)
                        note(f"{'BAD ' if b else 'ok  '}{sc} {path}={v} rc={rc} :: {err[-300:]!r}", b)
        elif a.mode == "combo":
            for seed in range(a.start, a.start + a.count):
                rng = random.Random(seed)
                sc = rng.choice(RAN)
                keys = rng.sample(sorted(COMBO), rng.randint(2, 7))
                sets = [f"{k}={rng.choice(COMBO[k])}" for k in keys]
                rc, err, g = run(sc, sets, seed % 7 + 1, "2s", work / "o")
                b = bad(rc, err)
                tag = "BAD " if b else ("zero" if g == 0 else "ok  ")
                note(f"{tag} seed={seed} {sc} {' '.join(sets)} rc={rc} goodput={g} :: {err[-300:]!r}", b)
        else:
            base = {k: COMBO[k] for k in ("mac.bsr", "rlc.mode", "flow.stack", "flow.cc", "flow.sack",
                                          "flow.timestamps", "flow.ack_every",
                                          "functions.impair.loss", "core.error_rate")}
            for seed in range(a.start, a.start + a.count):
                rng = random.Random(seed)
                sc = rng.choice(RAN)
                keys = rng.sample(sorted(base), rng.randint(2, 6))
                sets = [f"{k}={rng.choice(base[k])}" for k in keys]
                fn = rng.choice(FUNCTIONS)
                rc0, err0, g0 = run(sc, sets, seed % 5 + 1, "3s", work / "o")
                if g0 is None:
                    note(f"skip seed={seed} {sc} {sets} rc={rc0} {err0[-200:]!r}", bad(rc0, err0))
                    continue
                rc1, err1, g1 = run(sc, sets + [fn], seed % 5 + 1, "3s", work / "o")
                if g1 is None:
                    note(f"skip seed={seed} {sc} {sets} + {fn} rc={rc1} {err1[-200:]!r}", bad(rc1, err1))
                    continue
                low = g0 > 0.5 and g1 < 0.3 * g0
                note(f"{'LOW ' if low else 'ok  '} seed={seed} {sc} {' '.join(sets)} + {fn}: "
                     f"{g0:.2f} -> {g1:.2f}", low)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"{found} to look at; every run in {a.log}")
    sys.exit(1 if found else 0)


if __name__ == "__main__":
    main()
