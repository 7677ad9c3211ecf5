//! Which fields a run reads (`rantcp_config::reads`): every field of every config table is
//! classified, a value the run does not read is still range-checked, a value the user set and
//! the run does not read is a warning, and — the drift check — changing a field a config is
//! said not to read leaves the run's outputs unchanged.

use rantcp_functions as f;
use rantcp_scenario::cc_compare::CcCompare;
use rantcp_scenario::common::{FlowConfig, OutputConfig};
use rantcp_scenario::config::reads::{classified, FieldUse};
use rantcp_scenario::p2p_bulk::{Access, Bottleneck, P2pBulk};
use rantcp_scenario::ran_common::{
    CoreSection, MacSection, RadioSection, RanScenario, RlcSection, UeSection,
};
use rantcp_scenario::scenario::config_at;
use rantcp_scenario::split_tcp::SplitTcp;
use rantcp_scenario::{load, resolve_source, Common, Run, ScenarioConfig, BUILTINS};
use serde_json::Value;

fn try_load(spec: &str, set: &[(&str, &str)]) -> Result<ScenarioConfig, String> {
    let (src, text) = resolve_source(spec).unwrap();
    let ov: Vec<(String, String)> = set
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    load(&text, &src, &ov, None).map_err(|e| e.to_string())
}

fn err(spec: &str, set: &[(&str, &str)]) -> String {
    let e = try_load(spec, set).expect_err("refused");
    assert!(!e.contains('\n'), "one line: {e}");
    e
}

fn warnings(spec: &str, set: &[(&str, &str)]) -> Vec<String> {
    try_load(spec, set)
        .unwrap_or_else(|e| panic!("{e}"))
        .warnings
}

#[test]
fn every_field_of_every_table_is_always_read_or_has_its_condition() {
    let checks = [
        classified::<Common>(),
        classified::<OutputConfig>(),
        classified::<FlowConfig>(),
        classified::<P2pBulk>(),
        classified::<Access>(),
        classified::<Bottleneck>(),
        classified::<CcCompare>(),
        classified::<RanScenario>(),
        classified::<RadioSection>(),
        classified::<UeSection>(),
        classified::<MacSection>(),
        classified::<RlcSection>(),
        classified::<CoreSection>(),
        classified::<SplitTcp>(),
        classified::<f::impair::ImpairConfig>(),
        classified::<f::ack_filter::AckFilterConfig>(),
        classified::<f::split::SplitConfig>(),
        classified::<f::proxy::ProxyConfig>(),
        classified::<f::radio_feedback::RadioFeedbackConfig>(),
        classified::<f::close_coupled::CloseCoupledConfig>(),
        classified::<f::rst_tracker::RstTrackerConfig>(),
    ];
    let errs: Vec<String> = checks.into_iter().filter_map(Result::err).collect();
    assert!(errs.is_empty(), "{errs:#?}");
    // The flow's TCP list is what a UDP flow skips: all of it conditional.
    for t in FlowConfig::TCP {
        assert!(FlowConfig::CONDITIONAL.contains(t), "{t}");
    }
}

#[test]
fn shipped_scenarios_run_without_warnings() {
    for b in BUILTINS {
        let w = warnings(&format!("builtin:{}", b.name), &[]);
        assert!(w.is_empty(), "{}: {w:?}", b.name);
    }
}

#[test]
fn a_bad_value_is_refused_whether_or_not_the_run_reads_it() {
    let lte = "builtin:lte-cell";
    let p2p = "builtin:p2p-bulk";
    let e = err(lte, &[("functions.split.at", "bogus")]);
    assert!(
        e.starts_with("functions.split.at: no node named \"bogus\" (allowed: server, core, enb"),
        "{e}"
    );
    let e = err(p2p, &[("functions.split.flows", "[\"ue9\"]")]);
    assert!(
        e.starts_with("functions.split.flows: no flow named \"ue9\""),
        "{e}"
    );
    let e = err(p2p, &[("functions.split.fail_at", "100s")]);
    assert_eq!(
        e,
        "functions.split.fail_at: must be before the end of the run"
    );
    let e = err(lte, &[("functions.impair.flow", "flow0")]);
    assert!(
        e.starts_with("functions.impair.flow: no flow named \"flow0\""),
        "{e}"
    );
    let e = err(lte, &[("functions.radio_feedback.flow", "ue99")]);
    assert!(
        e.starts_with("functions.radio_feedback.flow: no flow named"),
        "{e}"
    );
    let e = err(lte, &[("functions.close_coupled.flow", "ue99")]);
    assert!(
        e.starts_with("functions.close_coupled.flow: no flow named"),
        "{e}"
    );
    assert_eq!(
        err(p2p, &[("flow.burst_rate", "-1")]),
        "flow.burst_rate: must be > 0 and <= 1000 bursts per second"
    );
    assert_eq!(
        err(p2p, &[("flow.burst_interval", "0s")]),
        "flow.burst_interval: must be at least 1ms"
    );
    assert_eq!(
        err(p2p, &[("flow.burst_count", "0")]),
        "flow.burst_count: must be > 0 (leave it out for bursts until the end of the run)"
    );
    assert_eq!(
        err(p2p, &[("flow.video.new_connection", "2.0")]),
        "flow.video.new_connection: must be between 0 and 1"
    );
    assert_eq!(
        err(lte, &[("functions.ack_filter.threshold", "0")]),
        "functions.ack_filter.threshold: must be an integer in [1, 100000]"
    );
    assert_eq!(
        err("builtin:lte-m2m", &[("traffic", "tcp"), ("m2m.down", "0B")]),
        "m2m.down: must be >= 1 byte"
    );
    assert!(err(lte, &[("mac.ul_proactive_period", "0s")]).starts_with("mac.ul_proactive_period:"),);
    // An unknown enum value, off or on.
    let e = err(p2p, &[("functions.proxy.mode", "bogus")]);
    assert!(
        e.starts_with("functions.proxy.mode: unknown variant `bogus`"),
        "{e}"
    );
    let e = err(p2p, &[("functions.split.after_fail", "bogus")]);
    assert!(
        e.starts_with("functions.split.after_fail: unknown variant"),
        "{e}"
    );
    // The radio scenarios have no UDP app (their UDP is traffic = "udp-saturation").
    let e = err(lte, &[("flow.app", "udp-cbr")]);
    assert!(
        e.starts_with("flow.app: \"udp-cbr\" is not an app of the radio"),
        "{e}"
    );
}

#[test]
fn a_value_set_that_the_run_does_not_read_is_a_warning() {
    let lte = "builtin:lte-cell";
    assert_eq!(
        warnings(lte, &[("functions.split.at", "enb")]),
        ["functions.split.at is set but functions.split.mode = \"off\": it has no effect"]
    );
    assert_eq!(
        warnings(
            lte,
            &[("functions.proxy.cache", "1MB"), ("flow.burst_rate", "3.0")]
        ),
        [
            "flow.burst_rate is set but flow.app = \"bulk\": it has no effect",
            "functions.proxy.cache is set but functions.proxy.mode = \"off\": it has no effect",
        ]
    );
    // A table the run does not read: the leaf set is named.
    assert_eq!(
        warnings(lte, &[("flow.video.preset", "android")]),
        ["flow.video.preset is set but flow.app = \"bulk\": it has no effect"]
    );
    // Mode parameters that used to be refused are warnings now (a sweep over the mode keeps
    // them fixed).
    assert_eq!(
        warnings(
            lte,
            &[
                ("functions.ack_filter.mode", "active"),
                ("functions.ack_filter.threshold", "3"),
                ("functions.ack_filter.ratio", "0.5"),
            ]
        ),
        ["functions.ack_filter.ratio is set but functions.ack_filter.mode = \"active\": it has no effect"]
    );
    assert_eq!(
        warnings(
            "builtin:p2p-bulk",
            &[("flow.app", "ftp1"), ("flow.app_rate", "1Mbps")]
        ),
        ["flow.app_rate is set but flow.app = \"ftp1\": it has no effect"]
    );
    // Once the part that reads it is on, no warning; a value equal to the built-in's is a
    // default, not a setting.
    assert!(warnings(
        lte,
        &[
            ("functions.split.at", "enb"),
            ("functions.split.mode", "i-tcp")
        ]
    )
    .is_empty());
    assert!(warnings(lte, &[("udp_rate", "120Mbps")]).is_empty());
    assert_eq!(
        warnings(lte, &[("udp_rate", "50Mbps")]),
        ["udp_rate is set but traffic = \"tcp\": it has no effect"]
    );
}

/// The outputs a setting could change: the summary without the config echo, its warnings and
/// wall time, and every time-series table.
fn outputs(cfg: ScenarioConfig) -> (Value, String) {
    let mut run = Run::new(cfg, None).unwrap();
    run.run_to_end().unwrap();
    let out = run.finish(0.0).unwrap();
    let mut s = out.summary;
    let m = s.as_object_mut().unwrap();
    for k in ["config", "warnings", "wall"] {
        m.remove(k);
    }
    if let Some(f) = m.get_mut("functions") {
        strip(f);
    }
    (s, format!("{:?}", out.tables))
}

/// The proxy's report echoes its parameters whatever its mode (proxy.rs `report`): they
/// describe the config, not the run.
const ECHO: [&str; 6] = [
    "cache_limit_bytes",
    "alpha",
    "alpha_measured",
    "beta_slots",
    "gamma",
    "timer_s",
];

fn strip(v: &mut Value) {
    match v {
        Value::Object(m) => {
            for k in ECHO {
                m.remove(k);
            }
            m.values_mut().for_each(strip);
        }
        Value::Array(a) => a.iter_mut().for_each(strip),
        _ => {}
    }
}

/// For each field, values to try (the first that loads and changes the config is used).
const ALT: &[(&str, &[&str])] = &[
    ("functions.impair.point", &["host"]),
    ("functions.impair.node", &["enb", "receiver"]),
    ("functions.impair.start", &["100ms"]),
    ("functions.impair.stop", &["500ms"]),
    ("functions.impair.proto", &["udp"]),
    ("functions.impair.direction", &["ack"]),
    ("functions.impair.flow", &["ue1", "flow0"]),
    ("functions.impair.src_port", &["5201"]),
    ("functions.impair.dst_port", &["5201"]),
    ("functions.ack_filter.ratio", &["0.5"]),
    ("functions.ack_filter.threshold", &["3"]),
    ("functions.ack_filter.segment_bytes", &["1000"]),
    ("functions.ack_filter.s_tbs", &["scheduled"]),
    ("functions.ack_filter.header_bytes", &["40"]),
    ("functions.split.at", &["enb", "router"]),
    ("functions.split.flows", &["[\"ue1\"]", "[\"flow0\"]"]),
    ("functions.split.buffer", &["64KB"]),
    ("functions.split.wan_window", &["32KB"]),
    ("functions.split.ran_cc", &["newreno"]),
    ("functions.split.far_host_option", &["false"]),
    ("functions.split.es_rto_factor", &["0.9"]),
    ("functions.split.mh_ack_wait", &["5ms"]),
    ("functions.split.fail_at", &["500ms"]),
    ("functions.split.after_fail", &["pass"]),
    ("functions.proxy.cache", &["64KB"]),
    ("functions.proxy.alpha", &["3.0"]),
    ("functions.proxy.beta_slots", &["2"]),
    ("functions.proxy.sigma", &["0.5"]),
    ("functions.proxy.confidence", &["0.6"]),
    ("functions.proxy.timer", &["20ms"]),
    ("functions.proxy.rlc_fill", &["0.1"]),
    ("functions.radio_feedback.period", &["5ms"]),
    ("functions.radio_feedback.feedback_delay", &["1ms"]),
    ("functions.radio_feedback.stop", &["500ms"]),
    ("functions.radio_feedback.flow", &["ue1", "flow0"]),
    ("functions.close_coupled.flow", &["ue1", "flow0"]),
    ("functions.close_coupled.buffer", &["3000B"]),
    ("functions.rst_tracker.hold", &["10s"]),
    ("output.pcap_snaplen", &["full"]),
    ("flow.app", &["ftp1"]),
    ("flow.count", &["3"]),
    ("flow.bytes", &["100kB"]),
    ("flow.request", &["5000B"]),
    ("flow.app_rate", &["1Mbps"]),
    ("flow.app_write", &["500B"]),
    ("flow.burst_size", &["10kB"]),
    ("flow.burst_rate", &["50.0"]),
    ("flow.burst_interval", &["10ms"]),
    ("flow.burst_count", &["2"]),
    ("flow.udp_rate", &["1Mbps"]),
    ("flow.udp_packet", &["500B"]),
    ("flow.stack", &["rfc", "linux"]),
    ("flow.cc", &["bbr", "newreno"]),
    ("flow.mss", &["1000"]),
    ("flow.delayed_ack", &["false", "true"]),
    ("flow.ack_every", &["1"]),
    ("flow.quickack", &["true", "false"]),
    ("flow.ack_when_read", &["true", "false"]),
    ("flow.delack_timeout", &["7ms"]),
    ("flow.min_rto", &["50ms"]),
    ("flow.initial_rto", &["300ms"]),
    ("flow.sack", &["false", "true"]),
    ("flow.rack_tlp", &["false", "true"]),
    ("flow.prr", &["false", "true"]),
    ("flow.rto_undo", &["false", "true"]),
    ("flow.timestamps", &["false", "true"]),
    ("flow.window_scaling", &["false"]),
    ("flow.rcv_buf", &["64kB"]),
    ("flow.rcv_win_ratio", &["0.3"]),
    ("flow.snd_buf", &["64kB"]),
    ("flow.initial_cwnd", &["2"]),
    ("flow.pacing", &["true", "false"]),
    ("flow.slow_start_after_idle", &["false", "true"]),
    ("flow.hystart", &["off", "classic"]),
    ("flow.cwnd_rules", &["rfc", "linux"]),
    ("flow.radio_aware.q_th", &["5kB"]),
    ("flow.radio_aware.variant", &["rate"]),
    ("flow.video.preset", &["android", "ios"]),
    ("flow.video.video_bytes", &["1MB"]),
    ("flow.video.ues", &["1"]),
    ("udp_rate", &["1Mbps"]),
    ("udp_packet", &["500B"]),
    ("m2m.down", &["100B"]),
    ("m2m.think", &["10ms"]),
    ("radio.isd_m", &["300.0"]),
    ("radio.o2i", &["high-loss"]),
    ("ue.distance_m", &["80.0"]),
    ("ue.min_distance_m", &["60.0"]),
    ("ue.cell_radius_m", &["200.0"]),
    ("ue.los_duration", &["300ms"]),
    ("ue.nlos_duration", &["300ms"]),
    ("ue.drive_duration", &["10s"]),
    ("ue.drop_area", &["serving-site"]),
    ("ue.fading_speed_kmh", &["120.0"]),
    ("mac.pf_time_constant", &["10ms"]),
    ("mac.ul_proactive_period", &["20ms"]),
    ("mac.bsr_enhancement", &["true"]),
    ("mac.dsr_trans_max", &["4"]),
    ("mac.ra_prach_period", &["20ms"]),
    ("mac.ra_preamble_trans_max", &["3"]),
    ("mac.ra_power_ramping_step_db", &["2.0"]),
    ("mac.ra_preamble_target_dbm", &["-110.0"]),
    ("mac.ra_response_window", &["5ms"]),
    ("mac.ra_contention_resolution_timer", &["16ms"]),
    ("mac.ra_backoff", &["20ms"]),
    ("mac.ra_detection_snr_db", &["-5.0"]),
    ("mac.rlf_search_delay", &["1s"]),
    ("mac.rlm_qout_db", &["-10.0"]),
    ("mac.rlm_qin_db", &["-1.0"]),
    ("mac.n310", &["2"]),
    ("mac.n311", &["2"]),
    ("mac.t310", &["50ms"]),
    ("rlc.t_poll_retransmit", &["200ms"]),
    ("rlc.t_status_prohibit", &["50ms"]),
    ("core.error_unit", &["packet", "bit"]),
    ("core.server_delay", &["50ms"]),
    ("core.s1_delay", &["5ms"]),
    ("bottleneck.loss_unit", &["byte", "bit"]),
];

/// The configs the drift check starts from: each switches some part off or picks a mode, so
/// that between them every condition of `unread` holds somewhere.
const BASES: &[(&str, &[(&str, &str)])] = &[
    ("builtin:p2p-bulk", &[("duration", "2s")]),
    (
        "builtin:p2p-bulk",
        &[("duration", "1s"), ("flow.app", "udp-cbr")],
    ),
    (
        "builtin:p2p-bulk",
        &[
            ("duration", "3s"),
            ("flow.app", "ftp1"),
            ("flow.burst_size", "200kB"),
            ("flow.burst_rate", "5.0"),
            ("flow.cc", "newreno"),
            ("flow.delayed_ack", "false"),
            ("flow.sack", "false"),
            ("flow.timestamps", "false"),
            ("bottleneck.loss", "0.01"),
        ],
    ),
    (
        "builtin:p2p-bulk",
        &[
            ("duration", "2s"),
            ("flow.app", "video"),
            ("functions.split.mode", "i-tcp"),
            ("functions.split.at", "router"),
        ],
    ),
    (
        "builtin:cc-compare",
        &[
            ("duration", "1s"),
            ("controllers", "[\"newreno\"]"),
            ("udp_reference", "false"),
        ],
    ),
    ("builtin:lte-cell", &[("duration", "1s"), ("ues", "2")]),
    (
        "builtin:lte-cell",
        &[
            ("duration", "1s"),
            ("ues", "2"),
            ("traffic", "udp-saturation"),
            ("rlc.mode", "um"),
            ("functions.ack_filter.mode", "active"),
            ("functions.ack_filter.threshold", "2"),
        ],
    ),
    (
        "builtin:lte-cell",
        &[
            ("duration", "1s"),
            ("ues", "2"),
            ("flow.app", "download"),
            ("flow.bytes", "300kB"),
            ("functions.ack_filter.mode", "none"),
        ],
    ),
    ("builtin:lte-m2m", &[("duration", "1s"), ("ues", "4")]),
    ("builtin:lte-7cell", &[("duration", "1s"), ("ues", "3")]),
    (
        "builtin:mmwave-blockage",
        &[("duration", "1s"), ("functions.proxy.mode", "pep")],
    ),
    (
        "builtin:mmwave-blockage",
        &[
            ("duration", "1s"),
            ("functions.proxy.mode", "none"),
            ("ue.nlos_duration", "0s"),
        ],
    ),
    ("builtin:mmwave-urban", &[("duration", "1s")]),
    (
        "builtin:split-tcp",
        &[
            ("duration", "2s"),
            ("flow.bytes", "300kB"),
            ("functions.split.mode", "es-tcp"),
        ],
    ),
    ("builtin:radio-aware", &[("duration", "1s")]),
];

/// Drift check: for every field a base config is said not to read, a run with another value
/// of it gives the same outputs. Each (field, reason) is tried once, at the first base that
/// reports it; every field reported must have values to try in `ALT`.
#[test]
fn a_field_said_unread_does_not_change_the_outputs() {
    let mut tried = std::collections::BTreeSet::new();
    let mut failures = Vec::new();
    let mut runs = 0;
    for (spec, set) in BASES {
        let base = try_load(spec, set).unwrap_or_else(|e| panic!("{spec} {set:?}: {e}"));
        let base_json = base.to_json();
        let unread = base.unread().0;
        let mut expect = None;
        for u in unread {
            let alts: Vec<&(&str, &[&str])> = ALT
                .iter()
                .filter(|(p, _)| *p == u.path || p.starts_with(&format!("{}.", u.path)))
                .collect();
            assert!(
                !alts.is_empty(),
                "{}: no value to try in ALT (reported unread by {spec})",
                u.path
            );
            for (path, values) in alts {
                if !tried.insert((path.to_string(), u.because.clone())) {
                    continue;
                }
                let before = config_at(&base_json, path).cloned();
                let mut loaded = false;
                let alt = values.iter().find_map(|v| {
                    let mut s = set.to_vec();
                    s.push((path, v));
                    let c = try_load(spec, &s).ok()?;
                    loaded = true;
                    (config_at(&c.to_json(), path).cloned() != before).then_some(c)
                });
                let Some(alt) = alt else {
                    // Loaded with the same effective value (a scenario that sets the field
                    // itself): nothing the run reads changed.
                    if !loaded {
                        failures.push(format!("{spec}: no value of {path} in ALT loads"));
                    }
                    continue;
                };
                let expect = expect.get_or_insert_with(|| outputs(try_load(spec, set).unwrap()));
                runs += 1;
                let got = outputs(alt);
                if got.0 != expect.0 {
                    let keys: Vec<&String> = got
                        .0
                        .as_object()
                        .unwrap()
                        .iter()
                        .filter(|(k, v)| expect.0.get(k.as_str()) != Some(*v))
                        .map(|(k, _)| k)
                        .collect();
                    failures.push(format!(
                        "{spec} {set:?}: {path} ({}) changed the summary's {keys:?}",
                        u.because
                    ));
                } else if got.1 != expect.1 {
                    failures.push(format!(
                        "{spec} {set:?}: {path} ({}) changed the time series",
                        u.because
                    ));
                }
            }
        }
    }
    println!("{runs} runs with a field said unread changed");
    assert!(failures.is_empty(), "{failures:#?}");
}

/// The drift check's control: a field that is read does change the outputs it compares.
#[test]
fn the_drift_check_sees_a_field_that_is_read() {
    for (spec, set, path, v) in [
        (
            "builtin:p2p-bulk",
            vec![("duration", "2s")],
            "flow.mss",
            "1000",
        ),
        (
            "builtin:lte-cell",
            vec![("duration", "1s"), ("ues", "2")],
            "mac.pf_time_constant",
            "10ms",
        ),
        (
            "builtin:mmwave-blockage",
            vec![("duration", "1s"), ("functions.proxy.mode", "pep")],
            "functions.proxy.cache",
            "64KB",
        ),
    ] {
        let base = outputs(try_load(spec, &set).unwrap());
        assert!(base.0["events"].as_u64().unwrap() > 1000, "{spec}");
        let mut s = set.clone();
        s.push((path, v));
        let cfg = try_load(spec, &s).unwrap();
        assert!(cfg.warnings.is_empty(), "{:?}", cfg.warnings);
        assert!(outputs(cfg) != base, "{spec}: {path} = {v} changed nothing");
    }
}

/// JSON without its nulls (TOML has none), for writing an echo back as TOML.
fn without_nulls(v: &Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.iter()
                .filter(|(_, v)| !v.is_null())
                .map(|(k, v)| (k.clone(), without_nulls(v)))
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(without_nulls).collect()),
        v => v.clone(),
    }
}

/// A setting is a value other than the built-in's effective one, not a key its file lacks:
/// the effective config a run echoes (summary.json `config`, `rantcp validate`), run again,
/// warns of nothing, and a default written in other units is not a setting; a value that
/// differs still warns.
#[test]
fn an_echoed_config_run_again_warns_of_nothing() {
    for b in BUILTINS {
        let echo = try_load(&format!("builtin:{}", b.name), &[])
            .unwrap()
            .to_json();
        let text = toml::to_string(&without_nulls(&echo)).expect("the echo is TOML");
        let cfg = load(&text, "echo.toml", &[], None).unwrap_or_else(|e| panic!("{}: {e}", b.name));
        assert!(cfg.warnings.is_empty(), "{}: {:?}", b.name, cfg.warnings);
    }
    let p2p = "builtin:p2p-bulk";
    let default = try_load(p2p, &[]).unwrap().to_json()["flow"]["hystart"].clone();
    let default = default.as_str().expect("hystart is a string").to_string();
    assert!(warnings(p2p, &[("flow.hystart", &default)]).is_empty());
    let other = if default == "off" { "classic" } else { "off" };
    assert_eq!(
        warnings(p2p, &[("flow.hystart", other)]),
        ["flow.hystart is set but flow.cc = \"newreno\": it has no effect"]
    );
}
