"""Every command README.md shows is one that works (tests/test_readme.py runs its Python snippets).

The commands are taken from the README's ```sh blocks (line by line: `#` comments dropped, `\\`
continuations joined) and from its inline code spans that start with a command (`rantcp …`,
`sudo .venv/bin/rantcp …`, `make …`, `.venv/bin/python -m rantcp.…`, `.venv/bin/python -c …`);
spans that are just flags (`--offload`, `--set functions.impair.every=100`) are checked too. Then:

* every command parses with the real parser (`rantcp.cli.parse_args`, or the module's
  `build_parser()` for `python -m`), and every `make` target exists in the Makefile;
* every scenario it names, with its `--set`s and `--seed`, passes `rantcp.validate` (an unknown
  field, a bad value or a warning fails); sweep files load; reproductions exist;
* the cheap ones (`scenarios`, `validate`, `schema`, `--version`, `run`, `reproduce --list`) run
  end to end in a scratch folder.

Written forms the test must interpret are resolved from explicit tables below (PLACEHOLDERS,
FILES, ELIDED, OTHER_SH, SET_SPANS), so a README line the extraction does not understand, a new
placeholder or an unknown file is a failure naming the README line, never a silent skip.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import io
import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from conftest import ROOT, RANTCP

README = ROOT / "README.md"

# Capitalised placeholders -> what the test substitutes. A new placeholder in the README fails
# (test_extraction_is_complete) until it is added here.
PLACEHOLDERS = {
    "FILE": "examples/sweep-cc-loss.toml",  # `rantcp sweep FILE ...`
    "FOLDER": "out/x",  # `rantcp report FOLDER`
    "NAME": "p2p-bulk",  # builtin:NAME
    "N": "2",
    "CASE": "lte",  # _emu_fidelity --only CASE
    "CC": "cubic",
    "SEED": "3",
}
# Files the README names that the repository does not hold under that name: copied into the
# scratch folder the commands run in.
FILES = {"my-scenario.toml": ROOT / "crates/scenario/scenarios/p2p-bulk.toml"}
# Commands written with an ellipsis for "any arguments": what the test runs instead.
ELIDED = {
    "rantcp run … --plots": "rantcp run builtin:p2p-bulk --plots",
    "rantcp run ... --seed SEED --set ...": "rantcp run builtin:p2p-bulk --seed SEED --set flow.cc=cubic",
}
# sh-block lines that are not rantcp's commands (the README line's text -> why).
OTHER_SH = {"sudo ip netns exec rantcp-ue1 ping server": "runs ping inside an emulation's namespace"}
# `--set` spans of the prose: None = the syntax itself; "refused" = the README says it is refused
# (exit 2); otherwise the scenario it is checked against (default builtin:p2p-bulk).
SET_SPANS: dict[str, str | None] = {
    "path.to.field=value": None,
    "functions.split.at=bogus": "refused",
    "functions.impair.point=dl-ingress": "builtin:lte-cell",  # "In the radio scenarios ..."
}
DEFAULT_SCENARIO = "builtin:p2p-bulk"

# Runs end to end are kept short: the whole file stays well under a minute on 2 cores. Only where
# the scenario's own duration costs seconds is it shortened (--set duration=..., added unless the
# command sets a duration itself); the command is otherwise run as written. mmwave-urban's 60 s
# with --plots take 6 s (2 s simulated: 1.9 s); every other run shown takes about a second.
SHORTENED = {"builtin:mmwave-urban": "2s"}
RUN_COMMANDS = {"scenarios", "validate", "schema", "run"}  # plus `--version` and `reproduce --list`


@dataclass(frozen=True)
class Command:
    line: int  # README line number (of the command's first line)
    source: str  # "sh" or "inline"
    text: str  # as written (comments dropped, continuations and line breaks joined)
    kind: str  # "rantcp", "make", "python-m", "python-c"
    argv: tuple[str, ...]  # after the program (sudo, .venv/bin/ dropped), placeholders substituted

    @property
    def id(self) -> str:
        return f"L{self.line}:{self.text[:70]}"


@dataclass(frozen=True)
class FlagSpan:
    line: int
    text: str
    words: tuple[str, ...]


def _blank_fences(text: str) -> str:
    """The README with its fenced blocks blanked out (line numbers kept)."""
    return re.sub(r"(?ms)^```.*?^```", lambda m: "\n" * m.group(0).count("\n"), text)


PLACEHOLDER_RE = re.compile(r"(?<![\w.-])[A-Z][A-Z0-9_]*(?![\w-])")


def _classify(text: str, line: int, source: str, errors: list[str]) -> Command | None:
    """A command line (one alternative) into a Command, or None when it is not a command."""
    words = text.split()
    while words and words[0] == "sudo":
        words = words[1:]
    if not words:
        return None
    prog = words[0]
    if prog in ("rantcp", ".venv/bin/rantcp") and len(words) > 1:
        kind, rest = "rantcp", words[1:]
    elif prog == "make" and len(words) > 1:
        kind, rest = "make", words[1:]
    elif re.fullmatch(r"(\.venv/bin/)?python3?", prog) and len(words) > 2 and words[1] in ("-m", "-c"):
        kind = "python-m" if words[1] == "-m" else "python-c"
        if kind == "python-m" and not words[2].startswith("rantcp."):
            return None
        rest = words[2:]
    else:
        return None
    if kind == "python-c":
        try:
            rest = ["-c", *shlex.split(" ".join(rest))]
        except ValueError as e:
            errors.append(f"README line {line}: {text!r}: {e}")
            return None
        return Command(line, source, text, kind, tuple(rest))
    if "…" in rest or "..." in rest:
        if text not in ELIDED:
            errors.append(f"README line {line}: {text!r} has an ellipsis; add what it stands for to ELIDED")
            return None
        rest = ELIDED[text].split()[1:]
    try:
        words = shlex.split(" ".join(rest))
    except ValueError as e:
        errors.append(f"README line {line}: {text!r}: {e}")
        return None
    # optional groups `[--only CASE]` are taken (the fullest form)
    words = [w.strip("[]") for w in words if w.strip("[]")]
    unknown = sorted({p for w in words for p in PLACEHOLDER_RE.findall(w) if p not in PLACEHOLDERS})
    if unknown:
        errors.append(f"README line {line}: {text!r}: placeholder {', '.join(map(repr, unknown))} is not in PLACEHOLDERS")
        return None
    out = [PLACEHOLDER_RE.sub(lambda m: PLACEHOLDERS[m.group(0)], w) for w in words]
    return Command(line, source, text, kind, tuple(out))


def _alternatives(text: str) -> list[str]:
    """`rantcp reproduce X --workers 2 | --dask local:4` (prose alternatives: each one after a `|`
    starts with a flag and replaces the first command's last option) into one command each; a `|`
    followed by anything else is a shell pipe: only the command before it is rantcp's."""
    parts = [p.strip() for p in text.split(" | ")]
    first = parts[0]
    out = [first]
    words = first.split()
    last_opt = max((i for i, w in enumerate(words) if w.startswith("--")), default=None)
    for alt in parts[1:]:
        if not alt.startswith("-"):
            break
        if last_opt is None:
            out.append(first + " " + alt)
        else:
            out.append(" ".join(words[:last_opt] + [alt]))
    return out


def extract(text: str) -> tuple[list[Command], list[FlagSpan], list[str]]:
    lines = text.splitlines()
    commands: list[Command] = []
    errors: list[str] = []
    # ```sh blocks
    i = 0
    while i < len(lines):
        if lines[i].strip() != "```sh":
            i += 1
            continue
        i += 1
        while i < len(lines) and lines[i].strip() != "```":
            start = i + 1
            logical = lines[i]
            while logical.rstrip().endswith("\\") and i + 1 < len(lines):
                i += 1
                logical = logical.rstrip()[:-1] + " " + lines[i]
            i += 1
            cmd = " ".join(re.sub(r"(^|\s)#.*$", "", logical).split())  # a `#` starting a word: a comment
            if not cmd:
                continue  # an empty or comment-only line
            if cmd in OTHER_SH:
                continue
            alts = _alternatives(cmd)
            found = [_classify(a, start, "sh", errors) for a in alts]
            if not all(found):
                if not any(e.startswith(f"README line {start}:") for e in errors):
                    errors.append(f"README line {start}: {cmd!r} is not a command the test knows (add it to OTHER_SH?)")
                continue
            commands.extend(c for c in found if c)
        i += 1
    # inline code spans (they may wrap across lines)
    flags: list[FlagSpan] = []
    body = _blank_fences(text)
    for m in re.finditer(r"(`+)(.+?)\1", body, flags=re.S):
        span = " ".join(m.group(2).split())
        line = body.count("\n", 0, m.start()) + 1
        if span.startswith("--") and span != "--":
            flags.append(FlagSpan(line, span, tuple(span.split())))
            continue
        for alt in _alternatives(span):
            c = _classify(alt, line, "inline", errors)
            if c:
                commands.append(c)
    return commands, flags, errors


COMMANDS, FLAG_SPANS, ERRORS = extract(README.read_text())
RANTCP_COMMANDS = [c for c in COMMANDS if c.kind == "rantcp"]


def test_extraction_is_complete():
    """Nothing the README shows is dropped: every sh line is a command or listed in OTHER_SH,
    every placeholder and ellipsis is resolved, and the counts stay above a floor (a change to the
    README's markup that hid its commands from the test would fail here)."""
    assert ERRORS == []
    by = lambda kind, source: sum(1 for c in COMMANDS if c.kind == kind and c.source == source)  # noqa: E731
    assert by("rantcp", "sh") >= 28
    assert by("make", "sh") >= 2
    assert by("rantcp", "inline") >= 32
    assert by("make", "inline") >= 15
    assert by("python-m", "inline") >= 2
    assert len(FLAG_SPANS) >= 35
    used = {p for c in COMMANDS for p in PLACEHOLDER_RE.findall(ELIDED.get(c.text, c.text))}
    assert set(PLACEHOLDERS) <= used, f"PLACEHOLDERS no command uses: {set(PLACEHOLDERS) - used}"


def test_extraction_rules():
    """The extraction itself on a made-up README: comments, continuations, prose alternatives,
    pipes, optional groups, placeholders, wrapped spans, and the lines it must refuse."""
    text = "\n".join([
        "```sh",
        "rantcp run builtin:p2p-bulk \\",
        "    --seed 3   # a comment",
        "# only a comment",
        "",
        "rantcp sweep FILE --workers 2 | --dask local:4",
        "rantcp schema | head -1",
        "ls -l",
        "rantcp sweep NEWTHING",
        "```",
        "Run `rantcp validate",
        "builtin:NAME [--seed N]`, or `rantcp run … --plots`; flags: `--offload`, `--set a.b=1`.",
    ])
    commands, flags, errors = extract(text)
    assert [(c.line, c.source, c.argv) for c in commands] == [
        (2, "sh", ("run", "builtin:p2p-bulk", "--seed", "3")),
        (6, "sh", ("sweep", "examples/sweep-cc-loss.toml", "--workers", "2")),
        (6, "sh", ("sweep", "examples/sweep-cc-loss.toml", "--dask", "local:4")),
        (7, "sh", ("schema",)),
        (11, "inline", ("validate", "builtin:p2p-bulk", "--seed", "2")),
        (12, "inline", ("run", "builtin:p2p-bulk", "--plots")),
    ]
    assert [(f.line, f.words) for f in flags] == [(12, ("--offload",)), (12, ("--set", "a.b=1"))]
    assert errors == [
        "README line 8: 'ls -l' is not a command the test knows (add it to OTHER_SH?)",
        "README line 9: 'rantcp sweep NEWTHING': placeholder 'NEWTHING' is not in PLACEHOLDERS",
    ]


def _parser() -> argparse.ArgumentParser:
    from rantcp import cli

    return cli._build_parser()


PARSER = _parser()


def _parse(parser: argparse.ArgumentParser, argv: list[str], parse) -> tuple[argparse.Namespace | None, str]:  # type: ignore[no-untyped-def]
    err, out = io.StringIO(), io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
        try:
            return parse(parser, argv), ""
        except SystemExit as e:
            if e.code == 0:  # --version, --help
                return None, ""
            return None, err.getvalue().strip() or f"exit {e.code}"


def _subparsers(p: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for a in p._actions:
        if isinstance(a, argparse._SubParsersAction):
            return dict(a.choices)
    return {}


def _leaf(argv: tuple[str, ...]) -> tuple[argparse.ArgumentParser, list[str]]:
    p, words = PARSER, list(argv)
    while words and words[0] in _subparsers(p):
        p, words = _subparsers(p)[words[0]], words[1:]
    return p, words


def _option_strings(p: argparse.ArgumentParser) -> set[str]:
    return set(p._option_string_actions)


def _assert_exact_flags(cmd: Command, parser: argparse.ArgumentParser, words: list[str] | tuple[str, ...]) -> None:
    """Every flag is spelt out: argparse also takes a unique prefix (`--prof`), which a later
    flag with the same start would break."""
    inexact = [w for w in words if w.startswith("--") and w.split("=")[0] not in _option_strings(parser)]
    assert not inexact, f"README line {cmd.line}: `{cmd.text}`: {inexact} not spelt as {parser.prog} defines it"


def _all_parsers() -> list[argparse.ArgumentParser]:
    out, todo = [], [PARSER]
    while todo:
        p = todo.pop()
        out.append(p)
        todo.extend(_subparsers(p).values())
    from rantcp import _emu_fidelity

    out.append(_emu_fidelity.build_parser())
    return out


def _makefile_targets() -> set[str]:
    targets: set[str] = set()
    for line in (ROOT / "Makefile").read_text().splitlines():
        m = re.match(r"^([A-Za-z0-9_.-][A-Za-z0-9_. -]*?)\s*:(?!=)", line)
        if m:
            targets.update(m.group(1).split())
    return targets


def _scenario_path(scenario: str) -> str:
    if scenario.startswith("builtin:"):
        return scenario
    if scenario in FILES:
        return str(FILES[scenario])
    assert (ROOT / scenario).is_file(), f"scenario file {scenario!r} is neither in the repository nor in FILES"
    return str(ROOT / scenario)


@contextlib.contextmanager
def _at(line: int, text: str):  # type: ignore[no-untyped-def]
    """A config error (or, as pytest makes warnings errors, a ConfigWarning) names the README line."""
    import rantcp

    failure = None
    try:
        yield
    except (rantcp.ConfigError, Warning, ValueError, AssertionError) as e:
        failure = f"README line {line}: `{text}`: {type(e).__name__}: {e}"
    if failure:
        pytest.fail(failure, pytrace=False)


def _sets(items: list[str] | None) -> dict[str, str]:
    out = {}
    for item in items or []:
        key, sep, value = item.partition("=")
        assert sep, f"--set {item!r}: expected path.to.field=value"
        out[key.strip()] = value.strip()
    return out


@pytest.mark.parametrize("cmd", COMMANDS, ids=lambda c: c.id)
def test_readme_command_parses_and_its_config_validates(cmd: Command):
    if cmd.kind == "make":
        missing = [t for t in cmd.argv if not t.startswith("-") and t not in _makefile_targets()]
        assert not missing, f"README line {cmd.line}: `{cmd.text}`: no Makefile target {missing}"
        return
    if cmd.kind == "python-c":
        r = subprocess.run([sys.executable, *cmd.argv], capture_output=True, text=True, timeout=60)
        assert r.returncode == 0, f"README line {cmd.line}: `{cmd.text}`:\n{r.stderr[-2000:]}"
        return
    if cmd.kind == "python-m":
        module, *words = cmd.argv
        mod = importlib.import_module(module)
        if hasattr(mod, "build_parser"):
            parser = mod.build_parser()
            _, err = _parse(parser, words, lambda p, a: p.parse_args(a))
            assert not err, f"README line {cmd.line}: `{cmd.text}`: {err}"
            _assert_exact_flags(cmd, parser, words)
        else:
            assert not words, f"README line {cmd.line}: `{cmd.text}`: {module} takes no arguments"
            assert callable(getattr(mod, "main", None)), f"README line {cmd.line}: {module} has no main()"
        return

    from rantcp import cli

    args, err = _parse(PARSER, list(cmd.argv), cli.parse_args)
    if err:
        leaf, words = _leaf(cmd.argv)
        # An inline span may name a command without its required arguments (`rantcp trace
        # ingest --uncompressed`) or a flag without its value (`rantcp emulate --out`): then its
        # flags must exist there.
        incomplete = "the following arguments are required" in err or (
            "expected one argument" in err and cmd.argv[-1].startswith("--")
        )
        assert cmd.source == "inline" and incomplete, (
            f"README line {cmd.line}: `{cmd.text}` does not parse: {err}"
        )
        unknown = [w for w in words if w.startswith("-") and w.split("=")[0] not in _option_strings(leaf)]
        assert not unknown, f"README line {cmd.line}: `{cmd.text}`: {leaf.prog} has no option {unknown}"
        return
    leaf, words = _leaf(cmd.argv)
    _assert_exact_flags(cmd, leaf, words[: words.index("--")] if "--" in words else words)
    if args is None:  # --version
        return
    with _at(cmd.line, cmd.text):
        _check_config(args)


def _check_config(args: argparse.Namespace) -> None:
    import rantcp

    command = args.command
    scenario = getattr(args, "scenario", None)
    if command == "emulate" and scenario:
        from rantcp import emulation

        # what `rantcp emulate` checks before it makes a namespace (no root needed)
        emu = emulation.Emulation(_scenario_path(scenario), _sets(args.sets), args.seed, None, args.traffic,
                                  args.duration, args.offload, args.moderation_us)
        hosts = emu.hosts()
        for host, _ in emulation.parse_commands(args.commands):
            assert host in hosts, f"no host {host!r}; hosts: {hosts}"
    elif command in ("run", "validate") and scenario:
        rantcp.validate(_scenario_path(scenario), _sets(args.sets), args.seed)
    elif command == "sweep":
        from rantcp.sweeps.spec import load_spec

        assert (ROOT / args.spec).is_file(), f"sweep file {args.spec} not found"
        assert load_spec(ROOT / args.spec).tasks()
    elif command == "reproduce" and args.name:
        from rantcp import reproductions

        assert args.name in reproductions.names(), f"no reproduction {args.name!r}"


@pytest.mark.parametrize("span", FLAG_SPANS, ids=lambda s: f"L{s.line}:{s.text[:60]}")
def test_readme_flag_exists(span: FlagSpan):
    """A flag the prose names (`--offload`, `--from runs.json --resimulate`) is an option of some
    rantcp command, all of one span of the same one; its `--set`s validate."""
    flags = [w for w in span.words if w.startswith("--") and w != "--"]
    assert any(set(flags) <= _option_strings(p) for p in _all_parsers()), (
        f"README line {span.line}: `{span.text}`: no rantcp command has all of {flags}"
    )
    import rantcp

    words = list(span.words)
    items = [words[i + 1] for i, w in enumerate(words[:-1]) if w == "--set"]
    if not items:
        return
    listed = [SET_SPANS[k] for item in items for k in (item, item.partition("=")[0]) if k in SET_SPANS]
    where = listed[0] if listed else DEFAULT_SCENARIO
    if where is None:  # the syntax itself
        return
    sets = _sets(items)
    if where == "refused":
        with pytest.raises(rantcp.ConfigError, match=re.escape(items[0].partition("=")[0])):
            rantcp.validate(DEFAULT_SCENARIO, sets)
    else:
        with _at(span.line, span.text):
            rantcp.validate(where, sets)


def test_readme_sweep_file_is_the_example():
    """The README's annotated sweep file (a ```toml block headed `# examples/NAME.toml`) says what
    that file holds: the same tables and values."""
    import tomllib

    blocks = re.findall(r"```toml\n# (examples/\S+\.toml)\b.*?\n(.*?)```", README.read_text(), flags=re.S)
    assert blocks, "the README no longer shows an example sweep file"
    for path, block in blocks:
        assert tomllib.loads(block) == tomllib.loads((ROOT / path).read_text()), path


def test_netns_example_names_the_emulated_hosts():
    """`sudo ip netns exec rantcp-ue1 ping server` (in OTHER_SH) runs in the namespace of a host
    of the emulation shown just before it and pings one of its nodes."""
    from rantcp import emulation

    text = README.read_text().splitlines()
    line = next(i for i, t in enumerate(text) if t.startswith("sudo ip netns exec rantcp-"))
    emulate = next(c for c in COMMANDS if c.line == line and c.argv[:1] == ("emulate",))  # the line before
    words = text[line].split()
    host, target = words[4].removeprefix("rantcp-"), words[6]
    sets = _sets([emulate.argv[i + 1] for i, w in enumerate(emulate.argv[:-1]) if w == "--set"])
    emu = emulation.Emulation(emulate.argv[1], sets)
    from rantcp import _native

    hosts, nodes = _native.emulation_hosts(emu.scenario, emu._ov, None)
    assert host in dict(hosts) and target in dict(nodes), (host, target, hosts, nodes)


def _runnable(cmd: Command) -> bool:
    if cmd.kind != "rantcp":
        return False
    argv = cmd.argv
    if argv == ("--version",) or argv[:2] == ("reproduce", "--list"):
        return True
    if argv[0] not in RUN_COMMANDS:
        return False
    args, err = _parse(PARSER, list(argv), lambda p, a: p.parse_args(a))
    return not err


RUNNABLE = list({c.argv: c for c in reversed(COMMANDS) if _runnable(c)}.values())[::-1]  # each once


def test_enough_commands_run():
    assert len(RUNNABLE) >= 15


@pytest.mark.timeout(120)
@pytest.mark.parametrize("cmd", RUNNABLE, ids=lambda c: c.id)
def test_readme_command_runs(tmp_path: Path, cmd: Command):
    (tmp_path / "examples").symlink_to(ROOT / "examples")
    for name, src in FILES.items():
        shutil.copy(src, tmp_path / name)
    argv = list(cmd.argv)
    if argv[0] == "run" and argv[1] in SHORTENED and not any(a.startswith("duration=") for a in argv):
        argv += ["--set", f"duration={SHORTENED[argv[1]]}"]  # shortened: see SHORTENED
    r = subprocess.run([*RANTCP, *argv], cwd=tmp_path, capture_output=True, text=True, timeout=110)
    assert r.returncode == 0, f"README line {cmd.line}: `{cmd.text}` exited {r.returncode}:\n{r.stderr[-2000:]}"
    assert "warning" not in r.stderr, f"README line {cmd.line}: `{cmd.text}` warns:\n{r.stderr}"
    if argv[0] == "run":
        found = list((tmp_path / "out").rglob("summary.json"))
        assert len(found) == 1, f"README line {cmd.line}: `{cmd.text}` wrote {found}"
        out = found[0].parent
        if "--out" in argv:
            assert out == tmp_path / argv[argv.index("--out") + 1]
        if "--plots" in argv:
            assert list((out / "plots").glob("*.png"))
        if "--profile" in argv:
            assert "total" in r.stderr
    elif argv[0] == "validate":
        assert r.stderr.strip().endswith(": ok")
