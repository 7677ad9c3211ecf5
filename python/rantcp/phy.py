"""Radio and PHY-abstraction functions, for checking numbers in a notebook.

Thin, documented wrappers over the native functions ``rantcp._native.phy_*`` (the same Rust
code the simulator runs, crate ``rantcp-ran``). Units are in the names or stated below:
bits for transport block sizes, dB / dBm for powers, metres for distances, Hz for frequencies.

    >>> from rantcp import phy
    >>> phy.lte_tbs(26, 100)                       # TS 36.213 Table 7.1.7.2.1-1
    75376
    >>> phy.nr_tbs(n_prb=273, mcs=27, table="nr2", layers=4)   # TS 38.214 §5.1.3.2
    >>> phy.pathloss("umi", 100.0, los=False, fc_hz=28e9)       # TR 38.901 Table 7.4.1-1
    >>> phy.bler(10.0, mcs=15)                     # logistic fit, 10 % at the MCS threshold
    >>> phy.cqi(10.0)                              # TS 38.214 Table 5.2.2.1-2

Models (``model`` argument of :func:`pathloss`): ``"umi"`` (UMi-Street Canyon), ``"uma"``,
``"rma"`` (h = 5 m, W = 20 m), ``"inh"`` (InH-Office mixed), ``"inh-open"``, ``"cost231"``
(COST 231-Hata), ``"cost231-metro"`` (+3 dB), ``"seed004"`` (28 GHz: LOS 61.4 + 20 log10 d,
NLOS 72 + 29.2 log10 d).

MCS tables (``table`` argument): ``"lte"`` (TS 36.213 Table 7.1.7.1-1), ``"nr1"``
(TS 38.214 Table 5.1.3.1-1, 64QAM), ``"nr2"`` (Table 5.1.3.1-2, 256QAM). The CQI table follows
the MCS table (TS 36.213 Table 7.2.3-1 = TS 38.214 Table 5.2.2.1-2 for lte/nr1, Table
5.2.2.1-3 for nr2).

SINR model: an MCS of spectral efficiency SE has its 10 %-BLER threshold at
``gap_db + 10 log10(2**SE - 1)`` dB (default gap 2.3 dB); BLER is a logistic in dB that drops
from 90 % to 10 % over ``width_db`` (default 1.5 dB) and equals 10 % at the threshold.
"""

from __future__ import annotations

import functools
import inspect
from typing import Any, Callable, TypedDict, TypeVar, cast

from rantcp import _native

__all__ = [
    "bler",
    "cqi",
    "los_probability",
    "lte_tbs",
    "lte_tbs_mcs",
    "mcs_from_cqi",
    "n_prb",
    "noise_dbm",
    "nr_tbs",
    "nr_tbs_raw",
    "pathloss",
    "Seed004Trace",
    "seed004_trace",
    "shadowing_sigma",
    "threshold_sinr",
]

DEFAULT_GAP_DB = 2.3
DEFAULT_WIDTH_DB = 1.5

_F = TypeVar("_F", bound=Callable[..., Any])


def _unsigned(**bits: int) -> Callable[[_F], _F]:
    """The named integer arguments are unsigned of that many bits in the native function: an
    int outside that range is a ValueError naming the argument (the native call would raise a
    bare OverflowError that does not say which). Other types are left to the native call,
    whose TypeError names the argument."""

    def wrap(f: _F) -> _F:
        sig = inspect.signature(f)

        @functools.wraps(f)
        def checked(*args: Any, **kwargs: Any) -> Any:
            given = sig.bind_partial(*args, **kwargs).arguments
            for name, b in bits.items():
                v = given.get(name)
                if isinstance(v, int) and not isinstance(v, bool) and not 0 <= v < 1 << b:
                    raise ValueError(f"{name} must be an integer from 0 to {(1 << b) - 1}, got {v}")
            return f(*args, **kwargs)

        return cast(_F, checked)  # functools.wraps keeps the signature, not its static type

    return wrap


@_unsigned(i_tbs=8, n_prb=16)
def lte_tbs(i_tbs: int, n_prb: int) -> int:
    """LTE transport block size in **bits** for TBS index ``i_tbs`` (0..26) and ``n_prb``
    PRBs (1..110), one layer: TS 36.213 Table 7.1.7.2.1-1 (the whole table is embedded).
    Raises ValueError outside the table."""
    return _native.phy_lte_tbs(i_tbs, n_prb)


@_unsigned(mcs=8, n_prb=16, layers=8)
def lte_tbs_mcs(mcs: int, n_prb: int, layers: int = 1) -> int:
    """LTE downlink TBS in **bits** for I_MCS ``mcs`` (0..28, Table 7.1.7.1-1), ``n_prb`` PRBs
    and ``layers`` (1..4; two layers per TS 36.213 §7.1.7.2.2 up to 55 PRBs, ``layers ×``
    the one-layer size otherwise)."""
    return _native.phy_lte_tbs_mcs(mcs, n_prb, layers)


@_unsigned(n_prb=32, mcs=8, layers=32, n_symb=32, n_dmrs_prb=32, n_oh_prb=32)
def nr_tbs(
    n_prb: int,
    mcs: int,
    table: str = "nr1",
    layers: int = 1,
    n_symb: int = 12,
    n_dmrs_prb: int = 12,
    n_oh_prb: int = 0,
) -> int:
    """NR transport block size in **bits** by the TS 38.214 §5.1.3.2 procedure.

    ``n_prb`` PRBs, MCS index ``mcs`` of ``table`` ("nr1" or "nr2"), ``layers`` (1..4),
    ``n_symb`` PDSCH symbols in the slot, ``n_dmrs_prb`` DM-RS resource elements per PRB,
    ``n_oh_prb`` xOverhead resource elements per PRB."""
    return _native.phy_nr_tbs(n_prb, mcs, table, layers, n_symb, n_dmrs_prb, n_oh_prb)


@_unsigned(n_prb=32, qm=8, layers=32, n_symb=32, n_dmrs_prb=32, n_oh_prb=32)
def nr_tbs_raw(
    n_prb: int,
    qm: int,
    r_x1024: float,
    layers: int = 1,
    n_symb: int = 12,
    n_dmrs_prb: int = 12,
    n_oh_prb: int = 0,
) -> int:
    """NR TBS in **bits** from an explicit modulation order ``qm`` (2, 4, 6, 8) and target code
    rate ``r_x1024`` (R × 1024, e.g. 948)."""
    return _native.phy_nr_tbs_raw(n_prb, qm, r_x1024, layers, n_symb, n_dmrs_prb, n_oh_prb)


def pathloss(
    model: str,
    d2d_m: float,
    los: bool = True,
    fc_hz: float = 28e9,
    h_bs_m: float = 10.0,
    h_ut_m: float = 1.5,
) -> float:
    """Path loss in **dB** of ``model`` at horizontal distance ``d2d_m`` (m) for a LOS or NLOS
    link at carrier ``fc_hz`` (Hz), base-station height ``h_bs_m`` and UE height ``h_ut_m``
    (m). TR 38.901 Table 7.4.1-1 (breakpoints included; NLOS = max(LOS, NLOS')), COST 231-Hata
    or seed 004's formulas; see the module docstring for model names."""
    return _native.phy_pathloss(model, d2d_m, los, fc_hz, h_bs_m, h_ut_m)


def shadowing_sigma(
    model: str,
    los: bool = True,
    d2d_m: float = 100.0,
    fc_hz: float = 28e9,
    h_bs_m: float = 10.0,
    h_ut_m: float = 1.5,
) -> float:
    """Log-normal shadowing standard deviation in **dB** (TR 38.901 Table 7.4.1-1)."""
    return _native.phy_shadowing_sigma(model, los, d2d_m, fc_hz, h_bs_m, h_ut_m)


def los_probability(model: str, d2d_m: float, h_ut_m: float = 1.5) -> float:
    """Probability (0..1) that a link at horizontal distance ``d2d_m`` (m) is LOS,
    TR 38.901 Table 7.4.2-1."""
    return _native.phy_los_probability(model, d2d_m, h_ut_m)


@_unsigned(mcs=8)
def bler(
    sinr_db: float,
    mcs: int,
    table: str = "nr1",
    gap_db: float = DEFAULT_GAP_DB,
    width_db: float = DEFAULT_WIDTH_DB,
) -> float:
    """Block error probability (0..1) of one transport block with MCS ``mcs`` of ``table`` at
    per-layer SINR ``sinr_db`` (dB). Equals 0.1 at :func:`threshold_sinr`."""
    return _native.phy_bler(sinr_db, mcs, table, gap_db, width_db)


@_unsigned(mcs=8)
def threshold_sinr(mcs: int, table: str = "nr1", gap_db: float = DEFAULT_GAP_DB) -> float:
    """SINR in **dB** at which MCS ``mcs`` of ``table`` runs at 10 % BLER."""
    return _native.phy_threshold_sinr(mcs, table, gap_db)


def cqi(sinr_db: float, table: str = "nr1", gap_db: float = DEFAULT_GAP_DB) -> int:
    """Wideband CQI (0..15) a UE reports at per-layer SINR ``sinr_db`` (dB) for a 10 % BLER
    target, using the CQI table that goes with MCS table ``table``."""
    return _native.phy_cqi(sinr_db, table, gap_db)


@_unsigned(cqi_index=8)
def mcs_from_cqi(cqi_index: int, table: str = "nr1") -> int:
    """The MCS index (of ``table``) a scheduler picks for CQI ``cqi_index`` (0..15): the
    highest MCS whose spectral efficiency does not exceed the CQI's."""
    return _native.phy_mcs_from_cqi(cqi_index, table)


def noise_dbm(bandwidth_hz: float, noise_figure_db: float = 0.0) -> float:
    """Thermal noise power in **dBm**: -174 dBm/Hz + 10 log10(bandwidth_hz) + noise figure."""
    return _native.phy_noise_dbm(bandwidth_hz, noise_figure_db)


@_unsigned(scs_khz=32)
def n_prb(bandwidth_mhz: float, scs_khz: int = 0, fr2: bool = False) -> int:
    """PRB count of a carrier: LTE when ``scs_khz`` is 0 (1.4, 3, 5, 10, 15, 20 MHz →
    6 … 100), otherwise NR TS 38.101-1/-2 Table 5.3.2-1 (e.g. ``n_prb(400, 120, fr2=True)``
    = 264). Raises ValueError where the tables have no entry (e.g. 1000 MHz)."""
    return _native.phy_n_prb(bandwidth_mhz, scs_khz, fr2)


class Seed004Trace(TypedDict):
    """:func:`seed004_trace`'s equal-length lists, one entry per sample."""

    t_s: list[float]
    x_m: list[float]
    y_m: list[float]
    los: list[bool]
    pathloss_db: list[float]
    sinr_db: list[float]
    cqi: list[int]
    mcs: list[int]


@_unsigned(step_ms=64, drive_s=64, seed=64)
def seed004_trace(step_ms: int = 10, drive_s: int = 25, seed: int = 1, fading: bool = True) -> Seed004Trace:
    """Seed 004's urban route through the 28 GHz radio model (gNB at 15 m, 30 dBm, 64 × 16
    beamforming, 5 dB noise figure, trees and building as boxes, 2-D LOS test), sampled every
    ``step_ms``. Returns a dict of equal-length lists: ``t_s`` (s), ``x_m``, ``y_m`` (m),
    ``los`` (bool), ``pathloss_db``, ``sinr_db`` (dB), ``cqi``, ``mcs`` (NR table 1)."""
    return _native.phy_seed004_trace(step_ms, drive_s, seed, fading)
