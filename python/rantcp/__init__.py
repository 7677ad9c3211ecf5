"""rantcp: fast, deterministic packet-level simulation of TCP over cellular radio access networks.

    >>> import rantcp
    >>> r = rantcp.run("builtin:p2p-bulk", seed=1, overrides={"bottleneck.loss": 1e-3})
    >>> r.summary["flows"][0]["goodput_mbps"]
    >>> r.flows            # pandas DataFrame: one row per flow per sample
    >>> df = rantcp.sweep("examples/sweep-cc-loss.toml", out="out/cc-loss")   # one row per run
    >>> rantcp.load("out/cc-loss")   # a Sweep (or a Result for a run folder)

Times in results are seconds (``time_s``) or milliseconds (``*_ms``); rates are bit/s.
"""

from __future__ import annotations

from rantcp._native import ConfigError, builtin_toml, config_schema, scenarios, version
from rantcp import phy
from rantcp.api import Result, load_result, run, validate
from rantcp.sweep import Sweep, load, sweep  # noqa: E402  (binds rantcp.sweep to the function)

__version__ = version()

__all__ = [
    "ConfigError",
    "Result",
    "Sweep",
    "builtin_toml",
    "config_schema",
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
