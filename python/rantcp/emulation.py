"""Real-time emulation: a scenario's model between real Linux hosts (issue 17).

    >>> with rantcp.emulate("builtin:p2p-bulk") as emu:
    ...     emu.popen("receiver", ["iperf3", "-s", "-1"])
    ...     emu.run("sender", ["iperf3", "-c", "receiver", "-t", "10"])
    >>> emu.summary["emulation"]["model_lateness"]["p99_us"]

Each host of the scenario (every node where one of its flows starts or ends: p2p-bulk's sender
and receiver, a RAN scenario's server and UEs) becomes a network namespace ``rantcp-HOST`` with
its own Linux TCP/IP stack, its scenario address on a TUN device ``rantcp0`` and a default route
through it; ``/etc/netns/rantcp-HOST/hosts`` names every node, so ``iperf3 -c server`` works
inside. The model (links, core, RAN, network functions) runs against the wall clock in between
(``rantcp-emu``). The scenario's own flows are off unless ``traffic=True``.

Set-up and tear-down touch nothing outside what they create: the TUN devices are made inside
the namespaces (they vanish with the emulator, however it ends), and every namespace is listed
in a state file ``/run/rantcp/emulate/PREFIX.json`` until it is deleted, so ``rantcp emulate
--cleanup`` (:func:`cleanup`) removes what an emulator killed with SIGKILL left behind. A second
emulation while one runs gets the prefix ``rantcp2-`` (then ``rantcp3-``, …).

Needs root (network namespaces, TUN devices) and iproute2's ``ip``; Linux only.
"""

from __future__ import annotations

import atexit
import errno
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from rantcp import _native

STATE_DIR = Path("/run/rantcp/emulate")
NETNS_DIR = Path("/run/netns")
ETC_NETNS = Path("/etc/netns")
TUN = "rantcp0"
MTU = 1500
TXQUEUELEN = 10000
"""Packets the kernel queues on a TUN device for the emulator to read (the default 500 drops
bursts of a fast sender before the emulator's next turn)."""


MAX_MODERATION_US = 10_000
"""The longest interrupt moderation interval (10 ms): beyond it the model would lag visibly."""


class EmulationError(RuntimeError):
    """The machine cannot emulate (no root, no TUN device, no `ip`), or set-up failed."""


def why_not() -> str | None:
    """Why this machine cannot run an emulation, in one line; None when it can."""
    if not sys.platform.startswith("linux"):
        return "emulation needs Linux (network namespaces and TUN devices)"
    if os.geteuid() != 0:
        return "emulation needs root (it creates network namespaces and TUN devices): run it with sudo"
    if not os.path.exists("/dev/net/tun"):
        return "emulation needs /dev/net/tun (the tun kernel module: modprobe tun)"
    if shutil.which("ip") is None:
        return "emulation needs iproute2's `ip` command (apt-get install iproute2)"
    return None


def _ip(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    r = subprocess.run(["ip", *args], capture_output=True, text=True, timeout=30)
    if check and r.returncode != 0:
        raise EmulationError(f"ip {' '.join(args)}: {r.stderr.strip() or f'exit status {r.returncode}'}")
    return r


def _teardown(state: Mapping[str, Any], state_path: Path | None) -> list[str]:
    """Remove what one emulation made: kill the processes left in its namespaces, delete the
    namespaces and their /etc/netns folders, then the state file. Returns what failed."""
    problems: list[str] = []
    for ns in state.get("namespaces", []):
        if not (NETNS_DIR / ns).exists():
            continue
        pids = _ip("netns", "pids", ns, check=False).stdout.split()
        for p in pids:
            try:
                os.kill(int(p), signal.SIGKILL)
            except (ProcessLookupError, ValueError):
                pass
        r = _ip("netns", "del", ns, check=False)
        if r.returncode != 0:
            problems.append(f"ip netns del {ns}: {r.stderr.strip()}")
    for ns in state.get("namespaces", []):
        shutil.rmtree(ETC_NETNS / ns, ignore_errors=True)
    if state.get("created_etc_netns"):
        try:
            ETC_NETNS.rmdir()  # only when empty: another tool's files stay
        except OSError:
            pass
    if state_path is not None and not problems:
        state_path.unlink(missing_ok=True)
    return problems


def cleanup() -> list[str]:
    """Remove what emulations that did not end cleanly (SIGKILL, power loss) left behind: the
    namespaces listed in state files whose emulator process is gone. A running emulation is
    left alone. Returns one line per instance (removed, still running, or what failed)."""
    from rantcp.sweeps.executors import _alive  # zombies count as gone

    lines: list[str] = []
    if not STATE_DIR.is_dir():
        return lines
    for path in sorted(STATE_DIR.glob("*.json")):
        try:
            state = json.loads(path.read_text())
        except (OSError, ValueError):
            state = None
        if not isinstance(state, dict):
            path.unlink(missing_ok=True)
            lines.append(f"{path.name}: unreadable state file removed")
            continue
        pid = int(state.get("pid", 0))
        if pid and pid != os.getpid() and _alive(pid) and _cmdline_is_ours(pid, state):
            lines.append(f"{state.get('prefix')}: still running (pid {pid}), left alone")
            continue
        problems = _teardown(state, path)
        names = ", ".join(state.get("namespaces", []))
        lines.append(
            f"{state.get('prefix')}: removed {names or 'nothing'}" if not problems else "; ".join(problems)
        )
    return lines


def _proc_start(pid: int) -> int | None:
    """When process `pid` started (clock ticks since boot, /proc/PID/stat field 22)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return int(f.read().rsplit(b")", 1)[1].split()[19])
    except (OSError, ValueError, IndexError):
        return None


def _cmdline_is_ours(pid: int, state: Mapping[str, Any]) -> bool:
    """Whether `pid` is still the emulator that wrote `state` (pids are reused)."""
    return _proc_start(pid) == state.get("pid_start")


def _claim_prefix(hosts: Sequence[str]) -> tuple[str, Path]:
    """A free namespace prefix, claimed by creating its state file (O_EXCL: two emulations
    starting together cannot take the same one)."""
    STATE_DIR.mkdir(parents=True, exist_ok=True)
    for n in range(1, 1000):
        prefix = "rantcp-" if n == 1 else f"rantcp{n}-"
        path = STATE_DIR / f"{prefix[:-1]}.json"
        try:
            fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
        except FileExistsError:
            continue
        os.close(fd)
        if any((NETNS_DIR / f"{prefix}{h}").exists() for h in hosts):
            path.unlink()  # someone else's namespace of that name: never touched
            continue
        return prefix, path
    raise EmulationError(f"no free namespace prefix (see {STATE_DIR}; rantcp emulate --cleanup)")


class Emulation:
    """One emulation (see the module doc). Use as a context manager, or call ``start`` and
    ``close`` (``close`` always tears down, also after an error)."""

    def __init__(
        self,
        scenario: str,
        overrides: Mapping[str, Any] | None = None,
        seed: int | None = None,
        out: str | os.PathLike[str] | None = None,
        traffic: bool = False,
        duration: str | None = None,
        offload: bool = False,
        moderation_us: float = 0.0,
    ) -> None:
        from rantcp.api import _check_overrides, _check_scenario, _check_seed

        if isinstance(moderation_us, bool) or not isinstance(moderation_us, (int, float)) \
                or not 0 <= moderation_us <= MAX_MODERATION_US:
            raise _native.ConfigError(
                f"moderation_us: {moderation_us!r} is not a number of microseconds from 0 to {MAX_MODERATION_US}"
            )

        self.scenario = _check_scenario(scenario)
        self._ov = _check_overrides(overrides)
        if duration is not None:
            self._ov.append(("duration", str(duration)))
        self._seed = _check_seed(seed)
        self._out = out
        self._traffic = traffic
        self._offload = offload
        self._moderation_ns = int(round(moderation_us * 1000))
        self._emu: Any = None
        self._state: dict[str, Any] | None = None
        self._state_path: Path | None = None
        self._staging: Any = None
        self._children: list[subprocess.Popen[Any]] = []
        self.namespaces: dict[str, str] = {}
        """Host name -> its network namespace."""
        self.addresses: dict[str, str] = {}
        """Node name -> its IPv4 address (every node of the scenario)."""
        self.summary: dict[str, Any] | None = None
        """summary.json's content, once closed."""
        self.tables: dict[str, Any] = {}

    # -- set-up -------------------------------------------------------------------------------

    def hosts(self) -> list[str]:
        """The scenario's hosts, each of which becomes a namespace (ConfigError for a bad config);
        nothing is made."""
        return [h for h, _ in _native.emulation_hosts(self.scenario, self._ov, self._seed)[0]]

    def start(self) -> Emulation:
        why = why_not()
        if why:
            raise EmulationError(why)
        hosts, nodes = _native.emulation_hosts(self.scenario, self._ov, self._seed)
        if not hosts:
            raise _native.ConfigError(f"scenario {self.scenario}: no flows, so no hosts to emulate")
        self.addresses = dict(nodes)
        host_addr = dict(hosts)
        if self._out is not None:
            from rantcp.outdir import Staging

            self._staging = Staging(self._out)
        prefix, self._state_path = _claim_prefix(list(host_addr))
        self._state = {
            "pid": os.getpid(),
            "pid_start": _proc_start(os.getpid()),
            "started": time.time(),
            "prefix": prefix,
            "scenario": self.scenario,
            "namespaces": [],
            "created_etc_netns": not ETC_NETNS.exists(),
        }
        atexit.register(self.close)
        try:
            self._save_state()
            hosts_file = "".join(f"{a}\t{n}\n" for n, a in nodes) + "127.0.0.1\tlocalhost\n"
            for h in host_addr:
                ns = f"{prefix}{h}"
                self._state["namespaces"].append(ns)
                self._save_state()  # listed before it exists: a crash now still cleans it up
                _ip("netns", "add", ns)
                self.namespaces[h] = ns
                (ETC_NETNS / ns).mkdir(parents=True, exist_ok=True)
                (ETC_NETNS / ns / "hosts").write_text(hosts_file)
                # IPv4 only: the model carries IPv4 (no router solicitations on the TUN device).
                subprocess.run(["ip", "netns", "exec", ns, "sysctl", "-q", "-w",
                                "net.ipv6.conf.all.disable_ipv6=1", "net.ipv6.conf.default.disable_ipv6=1"],
                               capture_output=True, timeout=30)
            self._emu = _native.Emulator(
                self.scenario, self._ov, self._seed,
                str(self._staging.path) if self._staging is not None else None,
                [(h, str(NETNS_DIR / ns)) for h, ns in self.namespaces.items()],
                TUN, self._traffic, self._offload, self._moderation_ns,
            )
            for h, ns in self.namespaces.items():
                _ip("-n", ns, "link", "set", "lo", "up")
                _ip("-n", ns, "link", "set", TUN, "mtu", str(MTU), "txqueuelen", str(TXQUEUELEN), "up")
                _ip("-n", ns, "addr", "add", f"{host_addr[h]}/32", "dev", TUN)
                _ip("-n", ns, "route", "add", "default", "dev", TUN)
            self._emu.start()
        except BaseException:
            self.close()
            raise
        return self

    def _save_state(self) -> None:
        assert self._state is not None and self._state_path is not None
        tmp = self._state_path.with_suffix(".tmp")
        tmp.write_text(json.dumps(self._state))
        os.replace(tmp, self._state_path)

    def __enter__(self) -> Emulation:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- use ----------------------------------------------------------------------------------

    def command(self, host: str, argv: Sequence[str]) -> list[str]:
        """The command line running `argv` inside `host`'s namespace."""
        if host not in self.namespaces:
            raise KeyError(f"no emulated host {host!r}; hosts: {', '.join(self.namespaces)}")
        return ["ip", "netns", "exec", self.namespaces[host], *argv]

    def run(self, host: str, argv: Sequence[str], **kwargs: Any) -> subprocess.CompletedProcess[Any]:
        """Run `argv` in `host`'s namespace to completion (``subprocess.run``'s keywords)."""
        return subprocess.run(self.command(host, argv), preexec_fn=_die_with_parent, **kwargs)

    def popen(self, host: str, argv: Sequence[str], **kwargs: Any) -> subprocess.Popen[Any]:
        """Start `argv` in `host`'s namespace; it is killed at ``close`` if still running."""
        p = subprocess.Popen(self.command(host, argv), preexec_fn=_die_with_parent, **kwargs)
        self._children.append(p)
        return p

    @property
    def running(self) -> bool:
        """Whether the model still runs (false after the scenario's duration)."""
        return self._emu is not None and bool(self._emu.running)

    @property
    def now_s(self) -> float:
        return self._emu.now_ns / 1e9 if self._emu is not None else 0.0

    @property
    def end_s(self) -> float:
        return self._emu.end_ns / 1e9 if self._emu is not None else 0.0

    # -- tear-down ----------------------------------------------------------------------------

    def close(self) -> dict[str, Any] | None:
        """Stop the model, write the outputs (with ``out``), kill what still runs in the
        namespaces and delete them. Safe to call twice; returns the summary."""
        atexit.unregister(self.close)
        try:
            for p in self._children:
                if p.poll() is None:
                    p.kill()
            for p in self._children:
                try:
                    p.wait(timeout=5)
                except subprocess.TimeoutExpired:
                    pass
            if self._emu is not None:
                emu, self._emu = self._emu, None
                tun_stats = {h: _tun_stats(ns) for h, ns in self.namespaces.items()}
                summary_text, columns = emu.finish()
                summary = json.loads(summary_text)
                _add_tun_stats(summary, tun_stats)
                self.summary = summary
                self.tables = columns
                if self._staging is not None:
                    self._write(summary, columns)
        except BaseException:
            if self._staging is not None:
                self._staging.discard()
            raise
        finally:
            self._staging = None
            if self._state is not None:
                state, self._state = self._state, None
                problems = _teardown(state, self._state_path)
                if problems:
                    sys.stderr.write("rantcp emulate: tear-down: " + "; ".join(problems) + "\n")
        return self.summary

    def _write(self, summary: dict[str, Any], columns: Mapping[str, Any]) -> None:
        """summary.json, the time series as Parquet and the plots, written the way a simulated
        run writes them (rantcp.api), then the staged folder committed."""
        from rantcp.api import _Series

        path = self._staging.path
        series = _Series(path)
        series.add(columns)
        tables = series.close()
        (path / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
        if bool(summary.get("config", {}).get("output", {}).get("plots")):
            from rantcp import plots as _plots

            _plots.run_plots(path, summary, tables)
        self._staging.commit(_native.version())


def _die_with_parent() -> None:
    """In a child: SIGKILL when the emulator dies (Linux PR_SET_PDEATHSIG), so a command does
    not outlive a killed emulator."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


def _tun_stats(ns: str) -> dict[str, int]:
    """The TUN device's counters in `ns` (its tx_dropped: packets the host sent that the
    emulator did not read in time)."""
    r = _ip("-n", ns, "-s", "-j", "link", "show", TUN, check=False)
    try:
        s = json.loads(r.stdout)[0]["stats64"]
        return {"tun_tx_dropped": int(s["tx"]["dropped"]), "tun_rx_dropped": int(s["rx"]["dropped"])}
    except (ValueError, KeyError, IndexError, TypeError):
        return {}


def _add_tun_stats(summary: dict[str, Any], stats: Mapping[str, Mapping[str, int]]) -> None:
    emu = summary.setdefault("emulation", {})
    hosts = emu.setdefault("hosts", {})
    for h, s in stats.items():
        hosts.setdefault(h, {}).update(s)
    emu["emulator_drops"] = int(emu.get("emulator_drops", 0)) + sum(int(s.get("tun_tx_dropped", 0)) for s in stats.values())


def emulate(
    scenario: str,
    overrides: Mapping[str, Any] | None = None,
    seed: int | None = None,
    out: str | os.PathLike[str] | None = None,
    traffic: bool = False,
    duration: str | None = None,
    offload: bool = False,
    moderation_us: float = 0.0,
) -> Emulation:
    """An emulation of `scenario` (``builtin:NAME`` or a TOML path), to use in a ``with``
    block: the namespaces exist and the model runs inside it, and are gone after it.
    duration: the longest it runs (replaces the scenario's ``duration``, e.g. "5min").
    traffic: keep the scenario's own flows (simulated background traffic).
    offload: the TUN devices offer TCP segmentation and checksum offload, as a NIC does (the
    hosts' stacks hand over 64 KB super-segments, cut into MSS-sized packets before the model):
    much less CPU per packet, for rates near 1 Gbit/s; and in-order segments the model delivers
    together are written to the receiving host as one (receive offload, GRO).
    moderation_us: interrupt moderation, as a NIC's rx-usecs: while busy, the model's turns are
    at least this far apart (packets and events up to that much late, handled in batches)."""
    return Emulation(scenario, overrides, seed, out, traffic, duration, offload, moderation_us)


# -- the command line ------------------------------------------------------------------------

EXIT_BAD_INPUT = 2


def register(sub: Any) -> None:
    e = sub.add_parser(
        "emulate",
        help="run a scenario in real time between real Linux hosts (network namespaces; root)",
        description=(
            "Each host of the scenario becomes a network namespace (rantcp-HOST) joined to the model "
            "through a TUN device; the model runs against the wall clock. Commands after `--` run in "
            "the namespaces: `-- HOST: ARGV... [-- HOST: ARGV...]`; the emulation ends when the last "
            "command exits (the ones before it are helpers, e.g. servers, started 0.5 s apart and "
            "killed at the end), at the scenario's duration, or at Ctrl-C."
        ),
    )
    e.add_argument("scenario", nargs="?", help="a TOML file or builtin:NAME")
    e.add_argument("--out", type=Path, help="write the output folder there (summary.json, Parquet, pcap)")
    e.add_argument("--duration", help="run at most this long (e.g. 60s, 10min; default: the scenario's duration)")
    e.add_argument("--traffic", action="store_true", help="keep the scenario's own (simulated) flows as background traffic")
    e.add_argument("--offload", action="store_true",
                   help="TCP segmentation/checksum offload on the TUN devices (as a NIC; for high rates)")
    e.add_argument("--moderation-us", type=float, default=0.0, metavar="US",
                   help=f"interrupt moderation: while busy, turns of the model at least US µs apart "
                        f"(0 to {MAX_MODERATION_US}; default 0, off)")
    e.add_argument("--cleanup", action="store_true",
                   help="remove namespaces left by emulations that were killed (SIGKILL), then exit")
    e.add_argument("--set", dest="sets", action="append", metavar="PATH=VALUE", help="override a config field")
    e.add_argument("--seed", type=int, help="run seed")
    e.set_defaults(handler=_cmd_emulate)


def parse_commands(words: Sequence[str]) -> list[tuple[str, list[str]]]:
    """`-- HOST: ARGV... -- HOST: ARGV...` into [(host, argv)]; ValueError on bad input."""
    groups: list[list[str]] = []
    for w in words:
        if w == "--":
            groups.append([])
        elif not groups:
            raise ValueError(f"unexpected argument {w!r} (commands go after `--`: -- HOST: ARGV...)")
        else:
            groups[-1].append(w)
    out = []
    for g in groups:
        if not g:
            continue
        head, rest = g[0], g[1:]
        host, colon, first = head.partition(":")
        if not colon or not host:
            raise ValueError(f"command {' '.join(g)!r}: start it with the host, e.g. `-- ue1: ping server`")
        argv = ([first] if first else []) + rest
        if not argv:
            raise ValueError(f"command for {host}: nothing to run")
        out.append((host, argv))
    return out


def _fail(message: str) -> int:
    sys.stderr.write(f"rantcp: error: {message}\n")
    return EXIT_BAD_INPUT


def _cmd_emulate(args: Any) -> int:
    from rantcp.cli import _parse_sets

    if args.cleanup:
        why = why_not()
        if why:
            return _fail(why)
        lines = cleanup()
        print("\n".join(lines) if lines else "nothing to clean up")
        return 0
    if not args.scenario:
        return _fail("emulate needs a scenario (builtin:NAME or a TOML file), or --cleanup")
    if not 0 <= args.moderation_us <= MAX_MODERATION_US:
        return _fail(f"--moderation-us: {args.moderation_us:g} is outside 0 to {MAX_MODERATION_US} (microseconds)")
    try:
        commands = parse_commands(args.commands)
    except ValueError as e:
        return _fail(str(e))
    why = why_not()
    if why:
        return _fail(why)
    if not args.scenario.startswith("builtin:") and not Path(args.scenario).is_file():
        return _fail(f"scenario file {args.scenario!r} not found (give a TOML file or builtin:NAME)")
    signal.signal(signal.SIGHUP, _raise_interrupt)
    signal.signal(signal.SIGTERM, _raise_interrupt)
    emu = Emulation(args.scenario, _parse_sets(args.sets), args.seed, args.out, args.traffic, args.duration,
                    args.offload, args.moderation_us)
    # Before any namespace is made (they were made, and torn down, for a misspelt host).
    hosts = emu.hosts() if commands else []
    for host, _ in commands:
        if host not in hosts:
            return _fail(f"command for {host!r}: no such host; hosts: {', '.join(hosts)}")
    status = 0
    try:
        try:
            emu.start()
        except EmulationError as e:
            return _fail(str(e))
        _banner(emu)
        procs = []
        for i, (host, argv) in enumerate(commands):
            procs.append(emu.popen(host, argv))
            if i + 1 < len(commands):
                time.sleep(0.5)  # let a helper (a server) start listening
        main = procs[-1] if procs else None
        while emu.running:
            if main is not None and main.poll() is not None:
                status = main.returncode
                break
            time.sleep(0.05)
        else:
            if main is not None and main.poll() is None:
                sys.stderr.write(f"rantcp emulate: the scenario's duration ({emu.end_s:g} s) ended before the command\n")
                status = 1
    except KeyboardInterrupt:
        sys.stderr.write("rantcp emulate: interrupted, tearing down\n")
        status = 130
    finally:
        summary = emu.close()
    if summary is not None:
        print(health_text(summary, args.out))
    return status


def _raise_interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def _banner(emu: Emulation) -> None:
    lines = [f"emulating {emu.scenario} in real time for up to {emu.end_s:g} s (Ctrl-C stops)"]
    for h, ns in emu.namespaces.items():
        lines.append(f"  {h:<10} {emu.addresses[h]:<12} namespace {ns}   (ip netns exec {ns} bash)")
    sys.stderr.write("\n".join(lines) + "\n")


def health_text(summary: Mapping[str, Any], out: Path | None) -> str:
    """The lines printed after an emulation: traffic per host and how well the model kept up."""
    e = summary.get("emulation", {})
    lines = [f"{summary.get('scenario')} · {e.get('wall_s', 0):.1f} s emulated"]
    for h, c in e.get("hosts", {}).items():
        lines.append(
            f"  {h:<10} sent {c.get('from_host_packets', 0):>9,} packets {c.get('from_host_bytes', 0) / 1e6:10.2f} MB, "
            f"received {c.get('to_host_packets', 0):>9,} packets {c.get('to_host_bytes', 0) / 1e6:10.2f} MB"
        )
    ml, dl = e.get("model_lateness", {}), e.get("delivery_lateness", {})
    lines.append(
        f"model lateness p50 {ml.get('p50_us', 0):g} µs, p99 {ml.get('p99_us', 0):g} µs, max {ml.get('max_us', 0):g} µs; "
        f"emulator drops {e.get('emulator_drops', 0)}; CPU {100 * e.get('cpu_fraction', 0):.0f} % of a core"
        + (f" → {out}" if out else "")
    )
    return "\n".join(lines)
