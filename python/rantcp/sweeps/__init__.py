"""Parameter sweeps: a base scenario, axes over config paths, repetitions with derived seeds,
run on a local process pool (all cores by default) or on a dask.distributed cluster, recorded
in a crash-safe results store.

One module per job, imported in this order (each only imports modules above it, so there is no
import cycle; ``tests/test_sweeps_package.py`` checks it):

- ``spec``: the sweep file (pydantic model, JSON Schema), points, seeds, runs (``RunTask``)
- ``stats``: mean and 95 % intervals over repetitions
- ``worker``: one run in a private folder, its files sent back
- ``executors``: the local process pool and Dask
- ``store``: the sweep folder's DuckDB table and run folders
- ``coordinator``: validates every point, runs what is missing, commits as runs finish
- ``api``: ``rantcp.sweep()``, ``rantcp.load()``, ``Sweep``

A run writes nothing shared: a worker runs the scenario in a private temporary folder and sends
the files back; only the coordinating process writes the sweep folder, so Dask workers need no
shared file system, only the same rantcp version.
"""

from __future__ import annotations

from rantcp.sweeps.api import Sweep, load, sweep

__all__ = ["Sweep", "load", "sweep"]
