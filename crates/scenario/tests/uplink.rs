//! The uplink at the cell edge (issue 18): lte-cell, one UE, static channel (no fading, no
//! shadowing), NewReno. TCP's ACKs ride the uplink, so where the radio still carries the
//! downlink TCP must keep up with it; and side by side with ns-3 LENA (3.44) on matched
//! settings, the figures the issue measured. Run in release mode:
//! `cargo test --release -p rantcp-scenario --test uplink`.

use rantcp_scenario::{run_quiet, RunOutput};

fn run(distance_m: u32, traffic: &str) -> RunOutput {
    let d = distance_m.to_string();
    let o: Vec<(String, String)> = [
        ("ues", "1"),
        ("ue.placement", "fixed"),
        ("ue.distance_m", d.as_str()),
        ("radio.shadowing", "false"),
        ("radio.fading", "false"),
        ("flow.cc", "newreno"),
        ("traffic", traffic),
    ]
    .iter()
    .map(|(a, b)| (a.to_string(), b.to_string()))
    .collect();
    run_quiet("builtin:lte-cell", &o, None).unwrap()
}

fn goodput_mbps(out: &RunOutput) -> f64 {
    out.summary["flows"][0]["goodput_mbps"].as_f64().unwrap()
}

fn ue(out: &RunOutput, key: &str) -> f64 {
    out.summary["radio"]["ues"][0][key].as_f64().unwrap()
}

/// TCP keeps at least half of the UDP goodput at a static 800 m and 1000 m (before the uplink
/// power control and power-headroom limit: 1.76 of 13.7 and 0.01 of 9.4 Mbit/s, the uplink
/// TBs failing after all HARQ retransmissions).
#[test]
fn test_tcp_survives_the_uplink_at_the_cell_edge() {
    for d in [800, 1000] {
        let udp = goodput_mbps(&run(d, "udp-saturation"));
        let tcp_out = run(d, "tcp");
        let tcp = goodput_mbps(&tcp_out);
        assert!(
            tcp >= 0.5 * udp,
            "{d} m: TCP {tcp:.2} vs UDP {udp:.2} Mbit/s"
        );
        // The ACKs get through: uplink TBs decode (at most a few per cent lost after HARQ),
        // and the flow never needs a retransmission timeout.
        let (new, failed) = (ue(&tcp_out, "ul_tb_new"), ue(&tcp_out, "ul_tb_failed"));
        assert!(
            new > 1000.0 && failed <= 0.02 * new,
            "{d} m: {failed} of {new} UL TBs failed"
        );
        assert_eq!(
            tcp_out.summary["flows"][0]["rtos"].as_u64(),
            Some(0),
            "{d} m"
        );
    }
}

/// ns-3 LENA 3.44, matched settings (issue 18): UDP saturation 73.59 / 29.8 / 7.0 Mbit/s at
/// 100 / 500 / 1000 m; TCP 6.1 Mbit/s at 1000 m. Tolerance ±15 % at 100 and 500 m. At 1000 m
/// rantcp's downlink link adaptation is known to be more optimistic than LENA's (MCS 6 vs 4:
/// the 2.3 dB-gap threshold model against LENA's error model), so there the test pins the
/// disagreement instead: above LENA, by less than 40 %. TCP at 1000 m keeps 6.1 / 7.0 = 87 % of
/// UDP on LENA; here at least that ratio less 15 points.
#[test]
fn test_side_by_side_with_lena() {
    for (d, lena) in [(100, 73.59), (500, 29.8)] {
        let udp = goodput_mbps(&run(d, "udp-saturation"));
        assert!(
            (udp / lena - 1.0).abs() <= 0.15,
            "{d} m: UDP {udp:.2} vs LENA {lena}"
        );
    }
    let udp = goodput_mbps(&run(1000, "udp-saturation"));
    assert!(
        udp > 7.0 && udp < 1.4 * 7.0,
        "1000 m: UDP {udp:.2} vs LENA 7.0"
    );
    let tcp = goodput_mbps(&run(1000, "tcp"));
    assert!(
        tcp / udp >= 6.1 / 7.0 - 0.15,
        "1000 m: TCP {tcp:.2} of UDP {udp:.2}"
    );
}

/// A power-limited UE gets uplink grants it can use: at least the smallest useful block (a
/// BSR and an RLC PDU with a data byte: 7 bytes in LTE, `RanConfig::ul_min_useful_tbs`). At a
/// static 1500 m the power-headroom limit alone is 1 PRB at MCS 1, a 3-byte block that carries
/// no RLC PDU; before the floor the eNB granted it in 98 % of subframes (9766 grants in 10 s),
/// not one of 7 uplink packets got through and TCP died (0.0 Mbit/s, 3 RTOs); even UDP fell
/// to 0.14 Mbit/s, as no RLC AM STATUS PDU got through either. With the floor the grant is
/// 2 PRBs at MCS 1 (7 bytes, below the 10 % BLER target; HARQ combining carries it): TCP 1.03,
/// UDP 2.64 Mbit/s.
#[test]
fn test_power_limited_ue_gets_useful_grants() {
    let udp = goodput_mbps(&run(1500, "udp-saturation"));
    assert!(udp >= 1.0, "1500 m: UDP {udp:.2} Mbit/s");
    let out = run(1500, "tcp");
    let tbs = ue(&out, "ul_avg_tbs_bytes");
    assert!(tbs >= 7.0, "1500 m: mean UL grant {tbs} B");
    let (acks, grants) = (ue(&out, "ul_acks_delivered"), ue(&out, "ul_grants"));
    assert!(
        acks >= 100.0,
        "1500 m: {acks} ACKs delivered in {grants} grants"
    );
    let tcp = goodput_mbps(&out);
    assert!(tcp >= 0.5, "1500 m: TCP {tcp:.2} Mbit/s");
    assert_eq!(out.summary["flows"][0]["rtos"].as_u64(), Some(0));
}

fn run7(o: &[(&str, &str)]) -> RunOutput {
    let mut v: Vec<(String, String)> = vec![("ues".into(), "10".into())];
    v.extend(o.iter().map(|(a, b)| (a.to_string(), b.to_string())));
    run_quiet("builtin:lte-7cell", &v, None).unwrap()
}

fn cell_mbps(out: &RunOutput) -> f64 {
    out.summary["flows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["goodput_mbps"].as_f64().unwrap())
        .sum()
}

fn ues_sum(out: &RunOutput, key: &str) -> f64 {
    out.summary["radio"]["ues"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| u[key].as_f64().unwrap())
        .sum()
}

/// lte-7cell, 10 UEs, `mac.bsr = "standard"`: the TS 36.321 procedure stalls on retxBSR-Timer
/// (sf2560) over and over — data that arrives while the buffer is not empty triggers no BSR,
/// and the periodic BSR (sf10) waits for a grant the eNB has no reason to give (the Figure 6
/// mechanism). The vendor option `mac.ul_proactive_grant` (off by default) grants after
/// downlink data: no stall, and the cell carries about what ideal reporting carries.
#[test]
fn test_standard_bsr_stalls_and_proactive_grants_lift_it() {
    let ideal = cell_mbps(&run7(&[]));
    let std = run7(&[("mac.bsr", "standard")]);
    assert!(
        ues_sum(&std, "retx_bsr_expiries") >= 10.0,
        "the stall is still there by default"
    );
    assert!(
        cell_mbps(&std) < 0.25 * ideal,
        "{} vs ideal {ideal}",
        cell_mbps(&std)
    );
    // The stall needs periodicBSR-Timer > the uplink round trip (BSR → grant → PUSCH, ≈ 6 ms).
    let p5 = run7(&[("mac.bsr", "standard"), ("mac.periodic_bsr_timer", "5ms")]);
    assert_eq!(ues_sum(&p5, "retx_bsr_expiries"), 0.0);
    let pro = run7(&[("mac.bsr", "standard"), ("mac.ul_proactive_grant", "100B")]);
    assert_eq!(ues_sum(&pro, "retx_bsr_expiries"), 0.0);
    assert!(
        cell_mbps(&pro) > 0.85 * ideal,
        "{} vs ideal {ideal}",
        cell_mbps(&pro)
    );
    // With ideal reporting the option changes nothing the eNB does not already know.
    let ideal_pro = cell_mbps(&run7(&[("mac.ul_proactive_grant", "100B")]));
    assert!(
        (ideal_pro / ideal - 1.0).abs() < 0.05,
        "{ideal_pro} vs {ideal}"
    );
}

/// `radio.neighbour_load` reaches the interference of the cells no UE attached to, and
/// `ue.drop_area = "serving-site"` attaches every UE to one of the centre site's sectors.
#[test]
fn test_lte_7cell_neighbour_load_and_drop_area() {
    let sinr = |o: &RunOutput| ues_sum(o, "mean_sinr_db") / 10.0;
    let full = run7(&[("duration", "1s")]);
    let half = run7(&[("duration", "1s"), ("radio.neighbour_load", "0.5")]);
    let idle = run7(&[("duration", "1s"), ("radio.neighbour_load", "0")]);
    assert!(
        sinr(&half) > sinr(&full) + 0.5 && sinr(&idle) > sinr(&half) + 0.5,
        "{} {} {}",
        sinr(&full),
        sinr(&half),
        sinr(&idle)
    );
    let cells = |o: &RunOutput| -> Vec<u64> {
        o.summary["radio"]["ues"]
            .as_array()
            .unwrap()
            .iter()
            .map(|u| u["cell"].as_u64().unwrap())
            .collect()
    };
    assert!(
        cells(&full).iter().any(|&c| c > 2),
        "some UEs attach to a neighbour site by default"
    );
    let site = run7(&[("duration", "1s"), ("ue.drop_area", "serving-site")]);
    assert!(cells(&site).iter().all(|&c| c <= 2), "{:?}", cells(&site));
}
