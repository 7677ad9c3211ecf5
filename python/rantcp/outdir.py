"""Output folders that never cost a user a file rantcp did not write.

A run is written into a private staging folder beside its target (``.<name>.partial-<pid>-<hex>``)
and moved into place only when it has succeeded. The target may be

- missing or an empty folder: the staging folder is renamed onto it;
- a previous rantcp *run* folder (it carries the marker file ``.rantcp-run``, or, for folders
  written before the marker existed, a run's ``summary.json`` and nothing but run outputs): it is
  replaced atomically (``renameat2(RENAME_EXCHANGE)`` on Linux, two renames elsewhere), so a
  reader sees the old run or the new one, never a mix;
- anything else (a file, a non-empty folder holding anything rantcp did not write, a sweep
  folder, the current directory or one of its parents): refused with a one-line ConfigError
  *before* the simulation starts, and checked again just before the move.

Two runs into the same target each have their own staging folder; the later one to finish wins
and the folder always holds exactly one run. A run killed where it cannot clean up (SIGKILL, a
power cut) leaves its staging folder; the next run into the same target deletes the staging
folders of its target whose process is gone (``remove_stale``).
"""

from __future__ import annotations

import errno
import glob
import json
import os
import re
import shutil
from pathlib import Path

from rantcp._native import ConfigError

MARKER = ".rantcp-run"
"""File present in every run folder rantcp writes (its content: the rantcp version)."""

_RUN_FILES = {"summary.json", MARKER, "report.html", "report.html.tmp"}
"""report.html.tmp: `rantcp report` writes the page there first; a SIGKILL can leave it."""
_RUN_DIRS = {"plots": (".png",), "pcap": (".pcap",)}


def is_run_folder(path: Path) -> bool:
    """True when ``path`` is a folder rantcp wrote for one run and holds nothing else."""
    if not path.is_dir() or path.is_symlink():
        return False
    try:
        entries = list(path.iterdir())
    except OSError:
        return False
    if not (path / MARKER).is_file():
        # A run folder from before the marker: a run's summary.json is required.
        try:
            summary = json.loads((path / "summary.json").read_text())
        except (OSError, ValueError):
            return False
        if not (isinstance(summary, dict) and {"scenario", "seed", "config"} <= summary.keys()):
            return False
    for e in entries:
        if e.is_symlink():
            return False
        if e.is_file() and (e.name in _RUN_FILES or e.suffix == ".parquet"):
            continue
        if e.is_dir() and e.name in _RUN_DIRS:
            suffixes = _RUN_DIRS[e.name]
            if all(c.is_file() and not c.is_symlink() and c.suffix in suffixes for c in e.iterdir()):
                continue
        return False
    return True


def _describe(out: Path) -> str:
    return str(out) if str(out) else '""'


def check_target(out: Path) -> None:
    """Raise ConfigError (one line) unless a run may be written to ``out``."""
    if str(out) == "":
        raise ConfigError('--out: empty path (give a folder name, e.g. --out out/run1)')
    target = Path(os.path.abspath(out))
    cwd = Path(os.getcwd())
    if target == cwd or target in cwd.parents:
        raise ConfigError(f"--out {_describe(out)}: is the current folder or one of its parents; give a new or empty folder")
    if target.is_symlink() or (target.exists() and not target.is_dir()):
        raise ConfigError(f"--out {_describe(out)}: exists and is not a folder; give a new or empty folder")
    if target.is_dir():
        try:
            empty = not any(target.iterdir())
        except OSError as e:
            raise ConfigError(f"--out {_describe(out)}: cannot read the folder ({e.strerror})") from None
        if not empty and not is_run_folder(target):
            raise ConfigError(
                f"--out {_describe(out)}: folder is not empty and is not a rantcp run folder; "
                "rantcp never deletes files it did not write: give a new or empty folder"
            )


def check_output_file(path: str | os.PathLike[str], what: str, suffixes: tuple[str, ...]) -> Path:
    """Raise ConfigError (one line) unless a file rantcp writes (a page, an image, a table) may
    go to ``path``: its folder exists, and it is new or a file of the same kind (one of
    ``suffixes``) — never a folder, a run's summary.json or Parquet table, or any other file
    rantcp did not write. ``what`` names the option (``--output``). Returns the path."""
    p = Path(path)
    shown = _describe(p)
    if str(p) == "" or p.name in ("", ".", ".."):
        raise ConfigError(f"{what} {shown}: give a file name, e.g. {what} out{suffixes[0]}")
    if p.is_dir():
        raise ConfigError(f"{what} {shown}: is a folder; give a file name, e.g. {what} {p / ('out' + suffixes[0])}")
    if not p.parent.is_dir():
        raise ConfigError(f"{what} {shown}: folder {_describe(p.parent)} does not exist")
    if p.exists() or p.is_symlink():
        if not p.is_file() or p.suffix.lower() not in suffixes:
            raise ConfigError(
                f"{what} {shown}: exists and is not a {' or '.join(suffixes)} file; rantcp replaces only a file "
                "of the kind it writes: give a new file name"
            )
    return p


def write_error(what: str, path: str | os.PathLike[str], e: OSError) -> ConfigError:
    """The one-line error of a failed write of an output file (no space, no permission)."""
    return ConfigError(f"{what} {_describe(Path(path))}: cannot write ({e.strerror or e})")


_STAGING_NAME = re.compile(r"\.(?:partial|old)-(\d+)-[0-9a-f]{8}")


def _only_run_outputs(folder: Path) -> bool:
    """Whether a staging folder holds nothing but what a run writes (possibly half of it)."""
    for e in folder.iterdir():
        if e.is_symlink():
            return False
        if e.is_file() and (e.name in _RUN_FILES or e.suffix == ".parquet"):
            continue
        if e.is_dir() and e.name in _RUN_DIRS and all(c.is_file() and not c.is_symlink() for c in e.iterdir()):
            continue
        return False
    return True


def remove_stale(target: Path) -> list[Path]:
    """Delete the staging folders of ``target`` (``.<name>.partial-<pid>-<hex>``, and the
    ``.<name>.old-<pid>-<hex>`` of the two-rename swap) left by a run whose process is gone: a
    SIGKILL or a power cut gives it no chance to remove its own. A folder whose process still
    runs (another run into the same target) is left alone, and so is one holding anything a run
    does not write. Processes are told apart by pid on this machine: a target shared with
    another machine or PID namespace may keep a stale folder. Returns the folders deleted."""
    removed: list[Path] = []
    stem = glob.escape(f".{target.name}.")
    found = [*target.parent.glob(stem + "partial-*"), *target.parent.glob(stem + "old-*")]
    if not found:
        return removed
    from rantcp.sweeps.executors import _alive  # zombies count as gone

    for p in found:
        m = _STAGING_NAME.fullmatch(p.name[len(target.name) + 1 :])
        if m is None or p.is_symlink() or not p.is_dir():
            continue
        pid = int(m.group(1))
        try:
            if pid == os.getpid() or _alive(pid) or not _only_run_outputs(p):
                continue
            shutil.rmtree(p)
        except OSError:
            continue  # not ours to judge (no permission, already gone): left as it is
        removed.append(p)
    return removed


class Staging:
    """A private folder a run is written into, then moved onto its target with ``commit``."""

    def __init__(self, out: str | os.PathLike[str]) -> None:
        self.out = Path(out)
        check_target(self.out)
        target = Path(os.path.abspath(self.out))
        try:
            if target.parent.is_dir():
                remove_stale(target)
            target.parent.mkdir(parents=True, exist_ok=True)
            self.path = target.parent / f".{target.name}.partial-{os.getpid()}-{os.urandom(4).hex()}"
            self.path.mkdir()
        except OSError as e:
            raise ConfigError(f"--out {_describe(self.out)}: cannot create the folder ({e.strerror or e})") from None
        self._target = target

    def commit(self, version: str) -> None:
        """Move the finished run into place (see the module doc)."""
        (self.path / MARKER).write_text(f"rantcp {version}\n")
        check_target(self.out)
        target = self._target
        try:
            os.rename(self.path, target)  # missing target, or an empty folder: replaced atomically
            return
        except OSError as e:
            if e.errno not in (errno.ENOTEMPTY, errno.EEXIST):
                raise ConfigError(f"--out {_describe(self.out)}: cannot move the run into place ({e.strerror})") from None
        # A previous run folder: swap them, then delete the old run.
        if not is_run_folder(target):
            raise ConfigError(f"--out {_describe(self.out)}: folder changed during the run and is no longer a rantcp run folder")
        if _exchange(self.path, target):
            shutil.rmtree(self.path, ignore_errors=True)
            return
        old = target.parent / f".{target.name}.old-{os.getpid()}-{os.urandom(4).hex()}"
        os.rename(target, old)
        os.rename(self.path, target)
        shutil.rmtree(old, ignore_errors=True)

    def discard(self) -> None:
        shutil.rmtree(self.path, ignore_errors=True)


_RENAME_EXCHANGE = 2
_AT_FDCWD = -100


def _exchange(a: Path, b: Path) -> bool:
    """Atomically swap two paths (Linux renameat2 RENAME_EXCHANGE). False where unsupported."""
    import ctypes
    import ctypes.util

    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        fn = libc.renameat2
    except (OSError, AttributeError):
        return False
    fn.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    rc: int = fn(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE)
    return rc == 0
