//! Nonsense is refused at load time with one line naming the field and what is allowed
//! (issue 9 item 7, issue 20), and what is sensible still loads.

use rantcp_scenario::{load, resolve_source};

fn err(spec: &str, set: &[(&str, &str)]) -> String {
    let (src, text) = resolve_source(spec).unwrap();
    let ov: Vec<(String, String)> = set
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    match load(&text, &src, &ov, None) {
        Ok(_) => panic!("{spec} {set:?} loaded"),
        Err(e) => {
            let s = e.to_string();
            assert!(!s.contains('\n'), "one line: {s}");
            s
        }
    }
}

fn ok(spec: &str, set: &[(&str, &str)]) {
    let (src, text) = resolve_source(spec).unwrap();
    let ov: Vec<(String, String)> = set
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    if let Err(e) = load(&text, &src, &ov, None) {
        panic!("{spec} {set:?}: {e}");
    }
}

const LTE: &str = "builtin:lte-cell";
const MMW: &str = "builtin:mmwave-blockage";

#[test]
fn sr_period_shorter_than_a_slot() {
    assert_eq!(
        err(LTE, &[("mac.sr_period", "1ns"), ("mac.bsr", "standard")]),
        "mac.sr_period: must be at least one slot (1ms)"
    );
    assert_eq!(
        err(MMW, &[("mac.sr_period", "100us")]),
        "mac.sr_period: must be at least one slot (125us)"
    );
    ok(LTE, &[("mac.sr_period", "1ms")]);
}

#[test]
fn tdd_pattern_needs_a_downlink_and_an_uplink_slot() {
    assert_eq!(
        err(MMW, &[("radio.duplex", "UUUU")]),
        "radio.duplex: TDD pattern \"UUUU\" must have a downlink (D or F) and an uplink (U or F) slot"
    );
    assert_eq!(
        err(MMW, &[("radio.duplex", "CCDD")]),
        "radio.duplex: TDD pattern \"CCDD\" must have a downlink (D or F) and an uplink (U or F) slot"
    );
    assert!(
        err(MMW, &[("radio.duplex", "CCXX")]).starts_with("radio.duplex: \"FDD\" or a TDD pattern")
    );
    ok(MMW, &[("radio.duplex", "FFFF")]);
    ok(LTE, &[("radio.duplex", "DDDU")]);
}

#[test]
fn carrier_power_heights_noise_figures_must_be_physical() {
    for v in ["-1", "0", "nan", "inf", "301"] {
        assert_eq!(
            err(LTE, &[("radio.carrier_ghz", v)]),
            "radio.carrier_ghz: must be > 0 and <= 300 GHz",
            "{v}"
        );
    }
    for v in ["nan", "-inf", "100"] {
        assert_eq!(
            err(LTE, &[("radio.tx_power_dbm", v)]),
            "radio.tx_power_dbm: must be between -50 and 80 dBm",
            "{v}"
        );
    }
    assert_eq!(
        err(LTE, &[("radio.bs_height_m", "-25")]),
        "radio.bs_height_m: must be > 0 and <= 1000 m"
    );
    assert_eq!(
        err(LTE, &[("radio.ue_height_m", "nan")]),
        "radio.ue_height_m: must be > 0 and <= 1000 m"
    );
    assert_eq!(
        err(LTE, &[("radio.ue_noise_figure_db", "nan")]),
        "radio.ue_noise_figure_db: must be between 0 and 30 dB"
    );
    assert_eq!(
        err(LTE, &[("ue.distance_m", "nan")]),
        "ue.distance_m: must be >= 1 m and <= 100 km"
    );
}

#[test]
fn scheduling_delays_are_bounded() {
    assert_eq!(
        err(LTE, &[("mac.k2_slots", "100000")]),
        "mac.k2_slots: must be 1..=32 slots (TS 38.214 §6.1.2.1)"
    );
    assert_eq!(
        err(LTE, &[("mac.harq_feedback_slots", "33")]),
        "mac.harq_feedback_slots: must be 1..=32 slots"
    );
    assert_eq!(
        err(LTE, &[("mac.enb_processing", "1s")]),
        "mac.enb_processing: must be <= 100ms"
    );
    ok(LTE, &[("mac.k2_slots", "32")]);
}

#[test]
fn cqi_reports_must_arrive_within_the_run() {
    assert_eq!(
        err(LTE, &[("duration", "1s"), ("radio.cqi_delay", "2s")]),
        "radio.cqi_delay: the first CQI report must arrive within the run: cqi_period + cqi_delay < duration"
    );
    assert_eq!(
        err(LTE, &[("radio.cqi_period", "0s")]),
        "radio.cqi_period: must be at least one slot (1ms) and shorter than the run"
    );
}

/// Under TDD the UE measures CSI only in slots with downlink symbols: a period whose every
/// instant falls in an uplink-only slot would leave the UE without a CQI report.
#[test]
fn tdd_cqi_instants_must_reach_a_downlink_slot() {
    let msg = "radio.cqi_period: every CQI instant falls in an uplink-only slot of the TDD \
               pattern, where the UE measures nothing (TS 38.214 §5.2.2.5): pick a period that \
               reaches a slot with downlink symbols (e.g. one slot)";
    assert_eq!(
        err(
            MMW,
            &[("radio.duplex", "UUUUCCDD"), ("radio.cqi_period", "1ms")]
        ),
        msg
    );
    // The same pattern with a one-slot period, or the shipped pattern with 1 ms, is fine.
    ok(
        MMW,
        &[("radio.duplex", "UUUUCCDD"), ("radio.cqi_period", "125us")],
    );
    ok(
        MMW,
        &[("radio.duplex", "CCDDUUUU"), ("radio.cqi_period", "1ms")],
    );
}

#[test]
fn queues_must_hold_a_packet() {
    assert_eq!(
        err(LTE, &[("core.server_queue", "0B")]),
        "core.server_queue: must hold at least one packet: >= 1508 bytes with these flow settings"
    );
    assert_eq!(
        err("builtin:p2p-bulk", &[("bottleneck.queue", "1B")]),
        "bottleneck.queue: must hold at least one packet: >= 1508 bytes with these flow settings, or a number of packets such as \"100packets\""
    );
    assert!(
        err("builtin:p2p-bulk", &[("access.queue", "1kB")]).starts_with("access.queue: must hold")
    );
    ok("builtin:p2p-bulk", &[("bottleneck.queue", "1packets")]);
    ok("builtin:p2p-bulk", &[("bottleneck.queue", "1508B")]);
}

#[test]
fn flows_start_before_the_end() {
    assert_eq!(
        err(
            "builtin:p2p-bulk",
            &[("duration", "2s"), ("flow.start", "3s")]
        ),
        "flow.start: must be before the end of the run (duration = 2s)"
    );
    assert_eq!(
        err(LTE, &[("duration", "1s"), ("flow.start", "1s")]),
        "flow.start: must be before the end of the run (duration = 1s)"
    );
}

#[test]
fn enums_name_what_is_allowed() {
    assert_eq!(
        err(LTE, &[("mac.bsr", "sometimes")]),
        "mac.bsr: unknown variant `sometimes`, expected `standard` or `ideal`"
    );
    assert_eq!(
        err(LTE, &[("rlc.mode", "tm")]),
        "rlc.mode: unknown variant `tm`, expected `am` or `um`"
    );
    assert_eq!(
        err("builtin:p2p-bulk", &[("scenario", "lte-cel")]),
        "scenario: unknown scenario \"lte-cel\"; allowed: p2p-bulk, cc-compare, lte-cell, lte-7cell, lte-m2m, mmwave-blockage, mmwave-urban, radio-aware, split-tcp"
    );
}

#[test]
fn seeds_span_zero_to_i64_max_with_a_clear_message() {
    let max = "9223372036854775807";
    ok("builtin:p2p-bulk", &[("seed", max)]);
    assert_eq!(
        err("builtin:p2p-bulk", &[("seed", "-1")]),
        "seed: -1 is out of range (allowed: 0 to 9223372036854775807)"
    );
    assert_eq!(
        err("builtin:p2p-bulk", &[("seed", "9223372036854775808")]),
        "seed: 9223372036854775808 is out of range (allowed: 0 to 9223372036854775807)"
    );
    assert_eq!(
        err("builtin:p2p-bulk", &[("seed", "1.5")]),
        "seed: invalid type: floating point `1.5`, expected an integer from 0 to 9223372036854775807"
    );
}

#[test]
fn functions_tables_are_checked_in_every_scenario() {
    for b in rantcp_scenario::BUILTINS {
        let spec = format!("builtin:{}", b.name);
        assert_eq!(
            err(&spec, &[("functions.impair.loss", "1.5")]),
            "functions.impair.loss: must be a probability in [0, 1)",
            "{}",
            b.name
        );
        assert_eq!(
            err(&spec, &[("functions.impair.los", "0.1")]),
            "functions.impair.los: unknown field `los`, expected one of `point`, `node`, `loss`, `every`, `delay`, `start`, `stop`, `proto`, `direction`, `flow`, `src_port`, `dst_port`",
            "{}",
            b.name
        );
        assert!(
            err(
                &spec,
                &[
                    ("functions.impair.loss", "0"),
                    ("functions.impair.every", "2"),
                    ("functions.impair.node", "nowhere")
                ]
            )
            .starts_with("functions.impair.node: no node named \"nowhere\" (allowed: "),
            "{}",
            b.name
        );
        assert_eq!(
            err(&spec, &[("functions.nope.x", "1")]),
            "functions.nope: unknown field `nope`, expected one of `impair`, `ack_filter`, `split`, `proxy`, `radio_feedback`, `close_coupled`, `rst_tracker`",
            "{}",
            b.name
        );
        assert_eq!(
            err(&spec, &[("functions.proxy.confidence", "1.5")]),
            "functions.proxy.confidence: must be in (0.5, 1): it is 1 - epsilon of Eq. 2",
            "{}",
            b.name
        );
        ok(
            &spec,
            &[
                ("functions.impair.loss", "0"),
                ("functions.impair.every", "10"),
            ],
        );
        assert_eq!(
            err(&spec, &[("functions.ack_filter.mode", "hybrid")]),
            "functions.ack_filter.threshold: required with mode \"hybrid\": an integer >= 1",
            "{}",
            b.name
        );
        assert!(
            err(&spec, &[("functions.ack_filter.mode", "fastest")])
                .starts_with("functions.ack_filter.mode: unknown variant `fastest`, expected one of `none`, `passive`, `granted`, `active`, `highest`, `hybrid`, `hybrid-opt`"),
            "{}",
            b.name
        );
    }
    assert_eq!(
        err("builtin:p2p-bulk", &[("functions.ack_filter.mode", "granted")]),
        "functions.ack_filter.mode: the ACK filter sits in the UE uplink buffer and this scenario has no radio (allowed: scenarios with a radio access network)"
    );
    assert_eq!(
        err("builtin:p2p-bulk", &[("functions.impair.every", "2"), ("functions.impair.point", "dl-ingress")]),
        "functions.impair.point: \"dl-ingress\" is a radio point and this scenario has no radio (allowed: \"forward\", \"host\")"
    );
    assert_eq!(
        err(LTE, &[("functions.impair.every", "2"), ("functions.impair.flow", "ue11")]),
        "functions.impair.flow: no flow named \"ue11\" (allowed: ue1, ue2, ue3, ue4, ue5, ue6, ue7, ue8, ue9, ue10)"
    );
}

#[test]
fn links_must_carry_a_packet_within_the_run() {
    assert_eq!(
        err(
            "builtin:p2p-bulk",
            &[("duration", "1s"), ("bottleneck.rate", "1bps")]
        ),
        "bottleneck.rate: must carry one 1508-byte packet within the run (duration = 1s)"
    );
    assert_eq!(
        err(
            "builtin:p2p-bulk",
            &[("duration", "1s"), ("access.delay", "1h")]
        ),
        "access.delay: must be shorter than the run (duration = 1s)"
    );
    assert_eq!(
        err(LTE, &[("duration", "1s"), ("core.server_rate", "1kbps")]),
        "core.server_rate: must carry one 1508-byte packet within the run (duration = 1s)"
    );
    assert_eq!(
        err(LTE, &[("duration", "1s"), ("core.server_delay", "600ms"), ("core.s1_delay", "500ms")]),
        "core.server_delay: a packet from the server must reach the base station within the run: server_delay + s1_delay < duration"
    );
    assert_eq!(
        err(LTE, &[("ue.cell_radius_m", "1e12")]),
        "ue.cell_radius_m: must exceed ue.min_distance_m (>= 1 m) and be <= 100 km"
    );
}

#[test]
fn a_segment_larger_than_the_mtu_is_refused() {
    // Seed 004's MSS 14000 needs its 15000-byte MTU: 14000 + 40 + 12 (timestamps) = 14052.
    assert_eq!(
        err("builtin:mmwave-urban", &[("flow.mss", "14000")]),
        "flow.mss: gives 14052-byte IP packets, more than core.mtu = 1500 bytes; raise core.mtu or lower flow.mss"
    );
    ok(
        "builtin:mmwave-urban",
        &[("flow.mss", "14000"), ("core.mtu", "15000B")],
    );
    // Without timestamps a 1460-byte MSS fills Ethernet's 1500 exactly; with them it does not.
    ok(
        "builtin:p2p-bulk",
        &[("flow.mss", "1460"), ("flow.timestamps", "false")],
    );
    assert_eq!(
        err("builtin:p2p-bulk", &[("flow.mss", "1460")]),
        "flow.mss: gives 1512-byte IP packets, more than access.mtu = 1500 bytes; raise access.mtu or lower flow.mss"
    );
    assert_eq!(
        err(
            "builtin:p2p-bulk",
            &[("flow.mss", "8948"), ("access.mtu", "9000B")]
        ),
        "flow.mss: gives 9000-byte IP packets, more than bottleneck.mtu = 1500 bytes; raise bottleneck.mtu or lower flow.mss"
    );
    assert_eq!(
        err(
            "builtin:mmwave-urban",
            &[("traffic", "udp-saturation"), ("udp_packet", "1600B")]
        ),
        "udp_packet: gives 1600-byte IP packets, more than core.mtu = 1500 bytes; raise core.mtu or lower udp_packet"
    );
    assert_eq!(
        err("builtin:lte-cell", &[("core.mtu", "20B")]),
        "core.mtu: must be between 68 and 65535 bytes"
    );
}

#[test]
fn the_application_rate_is_checked() {
    // A zero rate is refused by the units parser before the scenario's own check.
    let e = err("builtin:p2p-bulk", &[("flow.app_rate", "0bps")]);
    assert!(e.starts_with("flow.app_rate: "), "{e}");
    assert_eq!(
        err("builtin:p2p-bulk", &[("flow.app_write", "0B")]),
        "flow.app_write: must be between 1 byte and snd_buf"
    );
    ok(
        "builtin:p2p-bulk",
        &[("flow.app_rate", "10Mbps"), ("flow.app_write", "1400B")],
    );
}

#[test]
fn the_ns3_mmwave_frame_needs_a_mmwave_carrier() {
    assert_eq!(
        err(LTE, &[("radio.frame", "ns3-mmwave")]),
        "radio.frame: \"ns3-mmwave\" needs radio.rat = \"mmwave\" (LTE's frame is fixed: \"nr\")"
    );
    assert!(err(MMW, &[("radio.frame", "ns3")]).starts_with("radio.frame"));
    ok(MMW, &[("radio.frame", "ns3-mmwave")]);
}

#[test]
fn mmwave_bandwidths_are_fr2_channels_or_the_seeds_1_ghz() {
    // Was ignored for mmWave: any number, NaN included, loaded and ran the 1 GHz carrier.
    for bw in ["300", "nan", "-1", "20", "1e300", "400.5"] {
        assert_eq!(
            err(MMW, &[("radio.bandwidth_mhz", bw)]),
            "radio.bandwidth_mhz: 50, 100, 200 or 400 (TS 38.101-2 Table 5.3.2-1 at 120 kHz), \
             or 1000 (the seeds' 1 GHz carrier, 660 PRBs)",
            "{bw}"
        );
    }
    for bw in ["50", "100", "200", "400", "1000"] {
        ok(MMW, &[("radio.bandwidth_mhz", bw)]);
    }
    assert!(err(
        MMW,
        &[
            ("radio.frame", "ns3-mmwave"),
            ("radio.bandwidth_mhz", "400")
        ]
    )
    .starts_with("radio.bandwidth_mhz: 1000 with radio.frame = \"ns3-mmwave\""));
    assert!(err(LTE, &[("radio.bandwidth_mhz", "400")]).starts_with("radio.bandwidth_mhz: 1.4,"));
}

#[test]
fn uplink_and_neighbour_knobs() {
    assert_eq!(
        err("builtin:lte-7cell", &[("radio.neighbour_load", "1.5")]),
        "radio.neighbour_load: must be a fraction between 0 and 1"
    );
    assert_eq!(
        err(
            LTE,
            &[
                ("mac.ul_proactive_grant", "100B"),
                ("mac.ul_proactive_period", "100us")
            ]
        ),
        "mac.ul_proactive_period: must be at least one slot (1ms)"
    );
    assert!(err("builtin:lte-7cell", &[("ue.drop_area", "\"site\"")]).starts_with("ue.drop_area"));
    ok(
        "builtin:lte-7cell",
        &[
            ("radio.neighbour_load", "0.5"),
            ("ue.drop_area", "serving-site"),
        ],
    );
    ok(
        LTE,
        &[("mac.ul_proactive_grant", "100B"), ("mac.bsr", "standard")],
    );
}

#[test]
fn sr_give_up_and_random_access_fields_name_themselves() {
    assert_eq!(
        err(LTE, &[("mac.dsr_trans_max", "5")]),
        "mac.dsr_trans_max: must be 4, 8, 16, 32 or 64 (TS 36.331 dsr-TransMax), or 0 (SRs for ever)"
    );
    assert_eq!(
        err(LTE, &[("mac.sr_prohibit_timer", "80ms")]),
        "mac.sr_prohibit_timer: must be 0 to 7 SR periods of mac.sr_period (10ms) (TS 36.331 sr-ProhibitTimer-r9)"
    );
    assert!(err(LTE, &[("mac.sr_prohibit_timer", "15ms")]).starts_with("mac.sr_prohibit_timer: "));
    assert!(err(MMW, &[("mac.sr_prohibit_timer", "3ms")]).starts_with(
        "mac.sr_prohibit_timer: must be a TS 38.331 sr-ProhibitTimer value: 0ms, 1ms"
    ));
    assert_eq!(
        err(LTE, &[("mac.ra_preamble_trans_max", "9")]),
        "mac.ra_preamble_trans_max: must be 3, 4, 5, 6, 7, 8, 10, 20, 50, 100 or 200 (TS 36.331 preambleTransMax)"
    );
    assert_eq!(
        err(LTE, &[("mac.ra_power_ramping_step_db", "3")]),
        "mac.ra_power_ramping_step_db: must be 0, 2, 4 or 6 (dB; TS 36.331 powerRampingStep)"
    );
    assert!(err(LTE, &[("mac.ra_response_window", "9ms")]).starts_with("mac.ra_response_window: "));
    assert!(err(LTE, &[("mac.ra_contention_resolution_timer", "63ms")])
        .starts_with("mac.ra_contention_resolution_timer: "));
    assert!(err(LTE, &[("mac.ra_preamble_target_dbm", "-85")])
        .starts_with("mac.ra_preamble_target_dbm: "));
    assert!(err(LTE, &[("mac.ra_backoff", "50ms")]).starts_with("mac.ra_backoff: "));
    assert!(err(LTE, &[("mac.ra_prach_period", "1500us")]).starts_with("mac.ra_prach_period: "));
    assert!(
        err(LTE, &[("mac.ra_detection_snr_db", "-80")]).starts_with("mac.ra_detection_snr_db: ")
    );
    assert!(err(LTE, &[("mac.rlf_search_delay", "31s")]).starts_with("mac.rlf_search_delay: "));
    // Radio link monitoring: TS 36.331 n310/n311/t310 values; Qin above Qout.
    assert!(err(LTE, &[("mac.n310", "5")]).starts_with("mac.n310: "));
    assert!(err(LTE, &[("mac.n311", "20")]).starts_with("mac.n311: "));
    assert!(err(LTE, &[("mac.t310", "300ms")]).starts_with("mac.t310: "));
    assert!(err(LTE, &[("mac.rlm_qout_db", "-50")]).starts_with("mac.rlm_qout_db: "));
    // Qin at or below the default Qout (−8 dB) is refused.
    assert!(err(LTE, &[("mac.rlm_qin_db", "-8")]).starts_with("mac.rlm_qin_db: "));
    ok(
        LTE,
        &[
            ("mac.n310", "20"),
            ("mac.n311", "5"),
            ("mac.t310", "2000ms"),
            ("mac.rlm_qout_db", "-5"),
            ("mac.rlm_qin_db", "-3.9"),
        ],
    );
    ok(
        LTE,
        &[
            ("mac.dsr_trans_max", "0"),
            ("mac.sr_prohibit_timer", "70ms"),
            ("mac.ra_preamble_trans_max", "200"),
            ("mac.ra_power_ramping_step_db", "2"),
            ("mac.ra_response_window", "2ms"),
            ("mac.ra_contention_resolution_timer", "8ms"),
            ("mac.ra_preamble_target_dbm", "-90"),
            ("mac.ra_backoff", "960ms"),
            ("mac.ra_prach_period", "20ms"),
            ("mac.rlf_search_delay", "0s"),
        ],
    );
    ok(
        MMW,
        &[
            ("mac.sr_prohibit_timer", "128ms"),
            ("mac.ra_response_window", "125us"),
        ],
    );
}

#[test]
fn indoor_ue_fields_name_themselves() {
    for bad in ["1.5", "-0.1", "nan", "\"most\""] {
        let e = err("builtin:lte-7cell", &[("ue.indoor", bad)]);
        assert!(e.starts_with("ue.indoor: "), "{e}");
    }
    assert_eq!(
        err("builtin:lte-7cell", &[("ue.indoor", "1.5")]),
        "ue.indoor: must be the share of indoor UEs, between 0 and 1"
    );
    let o2i = "radio.o2i: \"low-loss\", \"high-loss\" or the share of indoor UEs in high-loss buildings, 0 to 1";
    for bad in ["\"medium\"", "1.5", "-1", "nan", "true"] {
        assert_eq!(
            err(
                "builtin:lte-7cell",
                &[("ue.indoor", "0.8"), ("radio.o2i", bad)]
            ),
            o2i,
            "{bad}"
        );
    }
    for good in ["low-loss", "high-loss", "0", "0.25", "1"] {
        ok(
            "builtin:lte-7cell",
            &[("ue.indoor", "0.8"), ("radio.o2i", good)],
        );
    }
    ok(MMW, &[("ue.indoor", "1"), ("radio.o2i", "high-loss")]);
    // Off by default, and then absent from the config echo (summary.json unchanged).
    let (src, text) = resolve_source("builtin:lte-7cell").unwrap();
    let cfg = load(&text, &src, &[], None).unwrap().to_json();
    assert!(cfg["ue"].get("indoor").is_none() && cfg["radio"].get("o2i").is_none());
    let ov = [
        ("ue.indoor".to_string(), "0.8".to_string()),
        ("radio.o2i".to_string(), "high-loss".to_string()),
    ];
    let cfg = load(&text, &src, &ov, None).unwrap().to_json();
    assert_eq!(cfg["ue"]["indoor"], 0.8);
    assert_eq!(cfg["radio"]["o2i"], "high-loss");
}
