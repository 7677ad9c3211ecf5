"""rantcp.phy: the radio/PHY functions against the standards and independent arithmetic."""

from __future__ import annotations

import math

import pytest

phy = pytest.importorskip("rantcp.phy")

# TS 36.213 Table 7.1.7.2.1-1 spot values (I_TBS, N_PRB, bits), from an independent
# transcription (IMTAPHY) and the well-known LTE peak transport blocks.
LTE_SPOT = [
    (26, 100, 75376), (0, 1, 16), (0, 110, 3112), (0, 50, 1384), (1, 25, 904), (4, 10, 696),
    (6, 1, 328), (7, 50, 6200), (9, 100, 15840), (10, 75, 12960), (13, 20, 5160),
    (15, 25, 7736), (19, 50, 21384), (20, 100, 46888), (26, 6, 4392), (26, 15, 11064),
    (26, 25, 18336), (26, 50, 36696), (26, 75, 55056), (26, 110, 75376),
]


@pytest.mark.parametrize("i_tbs,n_prb,bits", LTE_SPOT)
def test_lte_tbs_table(i_tbs, n_prb, bits):
    assert phy.lte_tbs(i_tbs, n_prb) == bits


@pytest.mark.parametrize("i_tbs,n_prb", [(27, 10), (5, 0), (5, 111)])
def test_lte_tbs_out_of_table(i_tbs, n_prb):
    with pytest.raises(ValueError):
        phy.lte_tbs(i_tbs, n_prb)


@pytest.mark.parametrize(
    "call,name",
    [
        (lambda: phy.lte_tbs(-1, 10), "i_tbs"),
        (lambda: phy.lte_tbs(5, 70000), "n_prb"),
        (lambda: phy.lte_tbs_mcs(3, 10, layers=256), "layers"),
        (lambda: phy.nr_tbs(2**40, 5), "n_prb"),
        (lambda: phy.nr_tbs_raw(10, qm=-2, r_x1024=500.0), "qm"),
        (lambda: phy.bler(3.0, mcs=-1), "mcs"),
        (lambda: phy.mcs_from_cqi(300), "cqi_index"),
        (lambda: phy.seed004_trace(step_ms=-10), "step_ms"),
    ],
)
def test_integers_outside_the_native_range_name_the_argument(call, name):
    # The native functions take unsigned integers; pyo3 alone raised a bare OverflowError
    # ("can't convert negative int to unsigned") that did not say which argument.
    with pytest.raises(ValueError, match=rf"^{name} must be an integer from 0 to "):
        call()


@pytest.mark.parametrize(
    "call,name",
    [
        (lambda: phy.nr_tbs_raw(50, 6, 948.0, layers=0), "layers"),
        (lambda: phy.nr_tbs_raw(50, 6, 948.0, layers=8), "layers"),
        (lambda: phy.nr_tbs_raw(50, 6, 948.0, n_symb=20), "n_symb"),
        (lambda: phy.nr_tbs_raw(50, 6, 948.0, n_symb=0), "n_symb"),
        (lambda: phy.nr_tbs_raw(50, 0, 948.0), "qm"),
        (lambda: phy.nr_tbs_raw(50, 3, 948.0), "qm"),
        (lambda: phy.nr_tbs(50, 5, layers=5), "layers"),
        (lambda: phy.nr_tbs(50, 5, n_symb=15), "n_symb"),
    ],
)
def test_nr_tbs_values_outside_the_standard_name_the_argument(call, name):
    # nr_tbs_raw returned a number for any of these (0 for 0 layers or qm 0, 295176 bits for 8
    # layers); both NR functions now refuse them with the same one-line message.
    with pytest.raises(ValueError, match=rf"^{name} \d+: must be|^{name} \d+: the modulation order"):
        call()


def test_lte_tbs_mcs_and_layers():
    assert phy.lte_tbs_mcs(28, 100) == 75376
    assert phy.lte_tbs_mcs(28, 50, layers=2) == 75376  # §7.1.7.2.2: 2 × 50 PRB column


# (n_symb, n_dmrs_prb, n_oh_prb, qm, r_x1024, layers, n_prb, tbs): srsRAN_Project's
# MATLAB-generated cases, small (table branch) and large (formula branch).
NR_CASES = [
    (12, 6, 0, 2, 102.4, 1, 6, 160),
    (12, 36, 12, 2, 921.6, 1, 6, 1032),
    (12, 36, 12, 4, 921.6, 1, 11, 3824),
    (12, 6, 0, 6, 921.6, 4, 11, 32776),
    (12, 36, 12, 4, 921.6, 4, 11, 15112),
    (12, 36, 0, 8, 921.6, 4, 11, 33816),
    (12, 12, 0, 2, 120.0, 1, 273, 8448),  # R <= 1/4 branch, hand-computed
]


@pytest.mark.parametrize("n_symb,n_dmrs,n_oh,qm,r,layers,n_prb,tbs", NR_CASES)
def test_nr_tbs_worked_cases(n_symb, n_dmrs, n_oh, qm, r, layers, n_prb, tbs):
    assert phy.nr_tbs_raw(n_prb, qm, r, layers, n_symb, n_dmrs, n_oh) == tbs


def test_nr_tbs_by_mcs_index():
    # Table 5.1.3.1-2 MCS 27 = 256QAM, R = 948/1024; 2 layers, 264 PRBs, 13 symbols.
    assert phy.nr_tbs(264, 27, table="nr2", layers=2, n_symb=13) == 557416
    with pytest.raises(ValueError):
        phy.nr_tbs(10, 29)


def _umi_los(d2d, fc_ghz, hbs=10.0, hut=1.5):
    d3 = math.hypot(d2d, hbs - hut)
    dbp = 4 * (hbs - 1) * (hut - 1) * fc_ghz * 1e9 / 3e8
    if d2d <= dbp:
        return 32.4 + 21 * math.log10(d3) + 20 * math.log10(fc_ghz)
    return 32.4 + 40 * math.log10(d3) + 20 * math.log10(fc_ghz) - 9.5 * math.log10(dbp**2 + (hbs - hut) ** 2)


@pytest.mark.parametrize("d", [15.0, 50.0, 200.0, 800.0])
@pytest.mark.parametrize("fc_ghz", [3.5, 28.0])
def test_pathloss_umi_matches_formula(d, fc_ghz):
    assert phy.pathloss("umi", d, los=True, fc_hz=fc_ghz * 1e9) == pytest.approx(_umi_los(d, fc_ghz), abs=1e-9)
    d3 = math.hypot(d, 8.5)
    nlos = max(_umi_los(d, fc_ghz), 35.3 * math.log10(d3) + 22.4 + 21.3 * math.log10(fc_ghz))
    assert phy.pathloss("umi", d, los=False, fc_hz=fc_ghz * 1e9) == pytest.approx(nlos, abs=1e-9)


def test_pathloss_other_models_spot():
    assert phy.pathloss("uma", 200, True, 3.5e9, 25.0) == pytest.approx(89.5695, abs=1e-3)
    assert phy.pathloss("rma", 2000, False, 3.5e9, 35.0) == pytest.approx(142.0471, abs=1e-3)
    assert phy.pathloss("inh", 20, False, 28e9, 3.0, 1.0) == pytest.approx(103.2464, abs=1e-3)
    assert phy.pathloss("cost231", 1000, False, 2e9, 30.0) == pytest.approx(137.7502, abs=1e-3)
    assert phy.pathloss("seed004", 52, True, 28e9, 15.0) == pytest.approx(96.0033, abs=1e-3)
    assert phy.los_probability("umi", 50) == pytest.approx(18 / 50 + math.exp(-50 / 36) * (1 - 18 / 50))
    assert phy.shadowing_sigma("uma", los=False) == 6.0
    with pytest.raises(ValueError):
        phy.pathloss("nope", 10)


@pytest.mark.parametrize("table,max_mcs", [("lte", 28), ("nr1", 28), ("nr2", 27)])
def test_bler_is_ten_percent_at_threshold(table, max_mcs):
    for mcs in range(max_mcs + 1):
        thr = phy.threshold_sinr(mcs, table)
        assert phy.bler(thr, mcs, table) == pytest.approx(0.1, abs=1e-12)
        assert phy.bler(thr + 1.0, mcs, table) < 0.1 < phy.bler(thr - 1.0, mcs, table)


def test_cqi_and_mcs():
    assert phy.cqi(-30.0) == 0 and phy.cqi(50.0) == 15
    cqis = [phy.cqi(x / 4) for x in range(-40, 120)]
    assert cqis == sorted(cqis)
    assert phy.mcs_from_cqi(15, "nr1") == 28 and phy.mcs_from_cqi(15, "nr2") == 27
    # The MCS picked for the CQI reported at a SINR runs at <= 10 % BLER there.
    for x in range(-5, 30):
        c = phy.cqi(float(x))
        if c > 1:
            assert phy.bler(float(x), phy.mcs_from_cqi(c)) <= 0.1 + 1e-12


def test_prb_counts_and_noise():
    assert [phy.n_prb(b) for b in (1.4, 3, 5, 10, 15, 20)] == [6, 15, 25, 50, 75, 100]
    assert phy.n_prb(100, 30) == 273 and phy.n_prb(400, 120, fr2=True) == 264
    with pytest.raises(ValueError):
        phy.n_prb(1000, 120, fr2=True)
    assert phy.noise_dbm(1e6, 5.0) == pytest.approx(-174 + 60 + 5)


def test_seed004_trace_blockage_and_determinism():
    a = phy.seed004_trace(step_ms=100, seed=3)
    b = phy.seed004_trace(step_ms=100, seed=3)
    assert a == b
    t, los = a["t_s"], a["los"]
    assert len(t) == len(los) == len(a["sinr_db"]) == 601
    assert los[5] and not los[70] and not los[280]  # start, behind tree 2, behind the building
    assert max(a["mcs"]) == 28
