"""SINR and selected MCS against distance, per path-loss model (rantcp.phy).

    gNB/eNB ((A))  ---- d (m) ---->  UE
      tx power, antenna/array gain      noise figure, bandwidth
      path loss: TR 38.901 UMi / UMa / RMa / InH, COST 231-Hata, seed 004 (28 GHz)

For each model, a single link without interference, shadowing or fast fading:
SINR = P_tx + G - PL(d) - (-174 + 10 log10 B + NF), then CQI (10 % BLER target) and the MCS
the scheduler would pick. LOS and NLOS curves are drawn for every model (COST 231-Hata has
a single curve). A second figure follows seed 004's urban route through the full radio model
(trees and a building as boxes, fast fading on).

Run:  python examples/phy_sinr_mcs.py [--out DIR]   (default out/examples, git-ignored)
Writes phy_sinr_mcs.png and phy_seed004_route.png when matplotlib is installed, and asserts
that the curves behave (SINR and MCS never rise with distance, NLOS never beats LOS, the
route's stops behind the trees and the building are NLOS).
"""

from __future__ import annotations

import argparse
import math
import os

from rantcp import phy

# name: (model, fc_hz, h_bs_m, h_ut_m, tx_dbm, gain_db, bandwidth_hz, nf_db, mcs_table, d_min, d_max)
SETUPS = {
    "UMi-SC 28 GHz": ("umi", 28e9, 10.0, 1.5, 30.0, 30.1, 400e6 * 0.95, 7.0, "nr1", 10, 1000),
    "UMa 3.5 GHz": ("uma", 3.5e9, 25.0, 1.5, 46.0, 8.0, 100e6 * 0.98, 7.0, "nr2", 10, 3000),
    "RMa 0.7 GHz": ("rma", 0.7e9, 35.0, 1.5, 46.0, 8.0, 20e6 * 0.9, 7.0, "nr1", 10, 10000),
    "InH-Office 28 GHz": ("inh", 28e9, 3.0, 1.0, 23.0, 24.1, 400e6 * 0.95, 7.0, "nr1", 1, 150),
    "COST231-Hata 2 GHz": ("cost231", 2e9, 30.0, 1.5, 46.0, 14.0, 10e6 * 0.9, 9.0, "lte", 50, 5000),
    "Seed 004 28 GHz": ("seed004", 28e9, 15.0, 1.5, 30.0, 30.1, 950.4e6, 5.0, "nr1", 5, 1000),
}


def curve(setup, los: bool, n: int = 120):
    model, fc, hbs, hut, p, g, bw, nf, table, d0, d1 = setup
    noise = phy.noise_dbm(bw, nf)
    ds, sinrs, mcss = [], [], []
    for i in range(n):
        d = d0 * (d1 / d0) ** (i / (n - 1))
        s = p + g - phy.pathloss(model, d, los=los, fc_hz=fc, h_bs_m=hbs, h_ut_m=hut) - noise
        c = phy.cqi(s, table)
        ds.append(d)
        sinrs.append(s)
        mcss.append(phy.mcs_from_cqi(c, table) if c > 0 else -1)  # -1: out of range
    return ds, sinrs, mcss


def check(name, los_c, nlos_c):
    for ds, sinrs, mcss in (los_c, nlos_c):
        assert all(b <= a + 1e-9 for a, b in zip(sinrs, sinrs[1:])), f"{name}: SINR rises with distance"
        assert all(b <= a for a, b in zip(mcss, mcss[1:])), f"{name}: MCS rises with distance"
    assert all(n <= l + 1e-9 for l, n in zip(los_c[1], nlos_c[1])), f"{name}: NLOS above LOS"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="out/examples", help="directory for the PNG files")
    args = ap.parse_args()

    results = {}
    for name, setup in SETUPS.items():
        los_c, nlos_c = curve(setup, True), curve(setup, False)
        check(name, los_c, nlos_c)
        results[name] = (los_c, nlos_c)
        d, s, m = los_c
        print(f"{name:<20} LOS SINR {s[0]:6.1f} dB @ {d[0]:.0f} m -> {s[-1]:6.1f} dB @ {d[-1]:.0f} m; "
              f"MCS {m[0]} -> {m[-1]}")

    # Close to a mmWave cell the link runs at the top MCS; far away it falls out of range.
    los_c, nlos_c = results["Seed 004 28 GHz"]
    assert los_c[2][0] == 28 and nlos_c[2][-1] <= 5, (los_c[2][0], nlos_c[2][-1])
    # At 52 m (seed 004's start) LOS vs NLOS differs by 72 - 61.4 + 9.2 log10(53.7) dB.
    gap = phy.pathloss("seed004", 52, los=False, h_bs_m=15) - phy.pathloss("seed004", 52, los=True, h_bs_m=15)
    assert abs(gap - (10.6 + 9.2 * math.log10(math.hypot(52, 13.5)))) < 1e-6

    trace = phy.seed004_trace(step_ms=50, drive_s=25, seed=1)
    t, los = trace["t_s"], trace["los"]
    at = lambda s: los[min(range(len(t)), key=lambda i: abs(t[i] - s))]  # noqa: E731
    assert at(0.5) and not at(7.0) and not at(28.0) and at(50.0), "route blockage"
    nlos_sinr = [s for s, l in zip(trace["sinr_db"], los) if not l]
    los_sinr = [s for s, l in zip(trace["sinr_db"], los) if l]
    assert sum(los_sinr) / len(los_sinr) > sum(nlos_sinr) / len(nlos_sinr) + 10.0
    print(f"seed 004 route: {sum(los)}/{len(los)} samples LOS, mean SINR LOS "
          f"{sum(los_sinr) / len(los_sinr):.1f} dB, NLOS {sum(nlos_sinr) / len(nlos_sinr):.1f} dB")

    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib not installed: checks passed, no figures written")
        return

    os.makedirs(args.out, exist_ok=True)
    fig, axes = plt.subplots(2, len(SETUPS), figsize=(4 * len(SETUPS), 6.5), sharex="col")
    for k, (name, (los_c, nlos_c)) in enumerate(results.items()):
        for c, lab, st in ((los_c, "LOS", "-"), (nlos_c, "NLOS", "--")):
            if name.startswith("COST231") and lab == "LOS":
                continue
            axes[0, k].semilogx(c[0], c[1], st, label=lab)
            axes[1, k].semilogx(c[0], c[2], st, label=lab)
        axes[0, k].set_title(name)
        axes[1, k].set_xlabel("distance (m)")
        axes[0, k].grid(True, which="both", alpha=0.3)
        axes[1, k].grid(True, which="both", alpha=0.3)
    axes[0, 0].set_ylabel("SINR (dB)")
    axes[1, 0].set_ylabel("MCS (-1 = out of range)")
    axes[0, 0].legend()
    fig.tight_layout()
    fig.savefig(os.path.join(args.out, "phy_sinr_mcs.png"), dpi=110)

    fig, ax = plt.subplots(2, 1, figsize=(9, 5.5), sharex=True)
    ax[0].plot(t, trace["sinr_db"], lw=0.6)
    ax[0].set_ylabel("SINR (dB)")
    for i in range(len(t)):
        if not los[i]:
            ax[0].axvspan(t[i] - 0.025, t[i] + 0.025, color="0.85", lw=0)
    ax[1].step(t, trace["mcs"], where="post", lw=0.8)
    ax[1].set_ylabel("MCS (NR table 1)")
    ax[1].set_xlabel("time (s): walk, stop behind tree, walk, stop behind building, drive")
    fig.tight_layout()
    fig.savefig(os.path.join(args.out, "phy_seed004_route.png"), dpi=110)
    print(f"wrote {args.out}/phy_sinr_mcs.png and phy_seed004_route.png")


if __name__ == "__main__":
    main()
