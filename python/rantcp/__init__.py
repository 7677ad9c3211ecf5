"""rantcp: fast, deterministic packet-level simulation of TCP over cellular radio access networks.

    >>> import rantcp
    >>> r = rantcp.run("builtin:p2p-bulk", seed=1, overrides={"bottleneck.loss": 1e-3})
    >>> r.summary["flows"][0]["goodput_mbps"]
    >>> r.flows            # pandas DataFrame: one row per flow per sample
    >>> df = rantcp.sweep("examples/sweep-cc-loss.toml", out="out/cc-loss")   # one row per run
    >>> rantcp.load("out/cc-loss")   # a Sweep (or a Result for a run folder)

Times in results are seconds (``time_s``) or milliseconds (``*_ms``); rates are bit/s.

Importing the package loads only the native core: everything heavier (pandas, pyarrow,
matplotlib, DuckDB, Dask) is imported by the attribute or function that needs it, so the
command line answers at once (``tests/test_startup.py`` keeps it so).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from rantcp._native import ConfigError, builtin_toml, config_schema, scenarios, version

if TYPE_CHECKING:
    from rantcp import phy, sweep_plots
    from rantcp.api import ConfigWarning, Result, load_result, run, validate
    from rantcp.emulation import emulate
    from rantcp.sweeps import Sweep, load, sweep

__version__ = version()

# Public name -> (module, attribute or None for the module itself), resolved on first use.
_LAZY: dict[str, tuple[str, str | None]] = {
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


def __getattr__(name: str) -> Any:
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
    return sorted([*globals(), *_LAZY])


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
