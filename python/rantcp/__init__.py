"""rantcp: fast, deterministic packet-level simulation of TCP over cellular radio access networks.

    >>> import rantcp
    >>> r = rantcp.run("builtin:p2p-bulk", seed=1, overrides={"bottleneck.loss": 1e-3})
    >>> r.summary["flows"][0]["goodput_mbps"]
    >>> r.flows            # pandas DataFrame: one row per flow per sample
    >>> df = rantcp.sweep("examples/sweep-cc-loss.toml", out="out/cc-loss")   # one row per run
    >>> rantcp.load("out/cc-loss")   # a Sweep (or a Result for a run folder)

Times in results are seconds (``time_s``) or milliseconds (``*_ms``); rates are bit/s.

Importing the package imports nothing: every name, the native core's too, is imported by the
first use of the attribute or function that needs it, so the command line answers at once
(``tests/test_startup.py`` keeps it so), and the command's Ctrl-C handler is in place before
anything is imported (``rantcp.__main__``).
"""

# Not even `typing` (5-30 ms with what it imports, on a loaded box): type checkers take any
# TYPE_CHECKING for typing's; nor `from __future__ import annotations` (an annotation that names
# a type checkers' import is a string).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from rantcp import phy, sweep_plots
    from rantcp._native import ConfigError, builtin_toml, config_schema, scenarios, version
    from rantcp.api import ConfigWarning, Result, load_result, run, validate
    from rantcp.emulation import emulate
    from rantcp.sweeps import Sweep, load, sweep

    __version__: str

# Public name -> (module, attribute or None for the module itself), resolved on first use.
_LAZY: dict[str, tuple[str, str | None]] = {
    "ConfigError": ("rantcp._native", "ConfigError"),
    "builtin_toml": ("rantcp._native", "builtin_toml"),
    "config_schema": ("rantcp._native", "config_schema"),
    "scenarios": ("rantcp._native", "scenarios"),
    "version": ("rantcp._native", "version"),
    "ConfigWarning": ("rantcp.api", "ConfigWarning"),
    "Result": ("rantcp.api", "Result"),
    "load_result": ("rantcp.api", "load_result"),
    "run": ("rantcp.api", "run"),
    "emulate": ("rantcp.emulation", "emulate"),
    "validate": ("rantcp.api", "validate"),
    "Sweep": ("rantcp.sweeps", "Sweep"),
    "load": ("rantcp.sweeps", "load"),
    "sweep": ("rantcp.sweeps", "sweep"),
    "phy": ("rantcp.phy", None),
    "sweep_plots": ("rantcp.sweep_plots", None),
}


def __getattr__(name: str) -> "Any":
    import importlib

    if name == "__version__":
        value = importlib.import_module("rantcp._native").version()
    else:
        try:
            module, attr = _LAZY[name]
        except KeyError:
            raise AttributeError(f"module 'rantcp' has no attribute {name!r}") from None
        value = importlib.import_module(module)
        if attr is not None:
            value = getattr(value, attr)
    globals()[name] = value  # later lookups skip __getattr__
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY, "__version__"})


__all__ = [
    "ConfigError",
    "ConfigWarning",
    "Result",
    "Sweep",
    "builtin_toml",
    "config_schema",
    "emulate",
    "load",
    "load_result",
    "phy",
    "run",
    "scenarios",
    "sweep",
    "validate",
    "version",
    "__version__",
]
