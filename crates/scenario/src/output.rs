//! Run outputs (design.md §6): the summary (run metadata, config echo, per-flow figures, link
//! counters) and the time-series tables.
//!
//! Metric definitions: goodput = in-order bytes delivered to the receiving application per
//! second, over [flow start, end of run] (or to the download's completion); download time =
//! request written to last byte delivered; RTT statistics over every RTT sample the sender
//! took; mean RTO = mean of the RTO values that expired (Padhye et al.'s T0).

use crate::ScenarioConfig;
use rantcp_core::Time;
use rantcp_net::{FlowKind, Sim};
use serde_json::{json, Value};

/// One column of a time-series table.
#[derive(Clone, Debug, PartialEq)]
pub enum Column {
    F64(Vec<f64>),
    I64(Vec<i64>),
    /// Integers with nulls (a value that does not exist yet, or not for this row's entity).
    OptI64(Vec<Option<i64>>),
    Str(Vec<String>),
}

impl Column {
    pub fn len(&self) -> usize {
        match self {
            Column::F64(v) => v.len(),
            Column::I64(v) => v.len(),
            Column::OptI64(v) => v.len(),
            Column::Str(v) => v.len(),
        }
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    fn append(&mut self, other: Column) {
        match (self, other) {
            (Column::F64(a), Column::F64(b)) => a.extend(b),
            (Column::I64(a), Column::I64(b)) => a.extend(b),
            (Column::OptI64(a), Column::OptI64(b)) => a.extend(b),
            (Column::Str(a), Column::Str(b)) => a.extend(b),
            _ => unreachable!("a table's columns keep their types from batch to batch"),
        }
    }
}

/// A time-series table in long format (one row per sample per entity).
#[derive(Clone, Debug, PartialEq)]
pub struct Table {
    pub name: String,
    pub columns: Vec<(String, Column)>,
}

impl Table {
    pub fn rows(&self) -> usize {
        self.columns.first().map_or(0, |(_, c)| c.len())
    }
}

/// Append `batch`'s tables to `tables` (by name; a table first seen in `batch` is added).
pub fn merge(tables: &mut Vec<Table>, batch: Vec<Table>) {
    for t in batch {
        match tables.iter_mut().find(|x| x.name == t.name) {
            Some(x) => {
                for ((n, dst), (m, src)) in x.columns.iter_mut().zip(t.columns) {
                    debug_assert_eq!(*n, m);
                    dst.append(src);
                }
            }
            None => tables.push(t),
        }
    }
}

fn r6(x: f64) -> f64 {
    // Round reported floats to 6 significant decimals of their unit so JSON stays readable;
    // the rounding is deterministic and applied after all computation.
    (x * 1e6).round() / 1e6
}

fn ms(ns: f64) -> f64 {
    r6(ns * 1e-6)
}

/// A flow's display name: its own name in a single network; the variant label (or
/// `label/name` with several flows) in a comparison.
fn flow_name(label: &str, sim: &Sim, f: usize) -> String {
    let name = &sim.flow_spec(f).name;
    match (label.is_empty(), sim.flow_count()) {
        (true, _) => name.clone(),
        (false, 1) => label.to_string(),
        (false, _) => format!("{label}/{name}"),
    }
}

/// The content of summary.json.
pub(crate) fn collect(
    cfg: &ScenarioConfig,
    sims: &[(String, Sim)],
    end: Time,
    wall_seconds: f64,
) -> Value {
    let mut flows = Vec::new();
    let mut links = Vec::new();
    let mut events = 0;
    let mut resets = 0;
    for (label, sim) in sims {
        flows.extend(flow_summaries(label, sim, end));
        links.extend(link_summaries(label, sim));
        events += sim.events_executed();
        resets += sim.resets_sent();
    }
    let summary = json!({
        "rantcp_version": env!("CARGO_PKG_VERSION"),
        "scenario": cfg.name(),
        "seed": cfg.seed(),
        "duration_s": end.as_secs_f64(),
        "events": events,
        "flows": flows,
        "links": links,
        "resets_sent_for_unknown_connections": resets,
        "config": cfg.to_json(),
        "radio": radio_summary(sims, end),
        "functions": function_summary(sims),
        "semantics": semantics_summary(sims),
        "wall": {
            "seconds": wall_seconds,
            "events_per_second": if wall_seconds > 0.0 { events as f64 / wall_seconds } else { 0.0 },
        },
    });
    let summary = match summary {
        Value::Object(mut m) => {
            for k in ["radio", "functions", "semantics"] {
                if m.get(k).is_some_and(|r| r.is_null()) {
                    m.remove(k);
                }
            }
            // The values set that the run did not read (`reads`); absent when there are none,
            // so a run without warnings writes what it always did.
            if !cfg.warnings.is_empty() {
                m.insert("warnings".into(), json!(cfg.warnings));
            }
            Value::Object(m)
        }
        v => v,
    };
    summary
}

/// Rows sampled since the last drain, in time-series tables: `flows`, `radio` and `cells`
/// (when a network has a radio device) and the network functions' tables. Each network's rows
/// are in sample order (all entities at one instant, then the next); a comparison's networks
/// follow one another within a drain.
pub(crate) fn drain(sims: &mut [(String, Sim)]) -> Vec<Table> {
    let mut tables = vec![flow_table(sims)];
    tables.extend(m2m_table(sims));
    tables.extend(radio_tables(sims));
    tables.extend(function_tables(sims));
    tables
}

/// Rows waiting in the networks' series (what [`drain`] would return).
pub(crate) fn pending_rows(sims: &[(String, Sim)]) -> usize {
    let mut rows = 0;
    for (_, sim) in sims {
        rows += (0..sim.flow_count())
            .map(|f| sim.flow_series(f).time_s.len())
            .sum::<usize>();
        rows += ran_devices(sim)
            .map(|d| {
                d.ue_series.time_s.len()
                    + d.cell_series.time_s.len()
                    + d.packet_series_rows()
                    + d.function_samples()
                        .tables()
                        .iter()
                        .map(|s| s.columns.first().map_or(0, |(_, c)| c.len()))
                        .sum::<usize>()
            })
            .sum::<usize>();
        rows += sim
            .function_series()
            .iter()
            .map(|s| s.columns.first().map_or(0, |(_, c)| c.len()))
            .sum::<usize>();
    }
    rows
}

fn flow_summaries(label: &str, sim: &Sim, end: Time) -> Vec<Value> {
    let mut flows = Vec::new();
    for f in 0..sim.flow_count() {
        let spec = sim.flow_spec(f);
        let res = sim.flow_result(f);
        let (kind, cc) = match spec.kind {
            FlowKind::Bulk { .. } => ("bulk", Some(spec.tcp_sender.cc.name())),
            FlowKind::Download { .. } => ("download", Some(spec.tcp_sender.cc.name())),
            FlowKind::UdpCbr { .. } => ("udp-cbr", None),
            FlowKind::M2m(_) => ("m2m", Some(spec.tcp_sender.cc.name())),
            FlowKind::Bursts(b) => (
                match b.arrivals {
                    rantcp_net::Arrivals::Poisson { .. } => "ftp1",
                    rantcp_net::Arrivals::Periodic { .. } => "bursts",
                },
                Some(spec.tcp_sender.cc.name()),
            ),
            FlowKind::Video(_) => ("video", Some(spec.tcp_sender.cc.name())),
        };
        let stop = res.completed_at.unwrap_or(end);
        let active = stop.saturating_since(spec.start).as_secs_f64();
        let goodput = if active > 0.0 {
            res.delivered_bytes as f64 * 8.0 / active
        } else {
            0.0
        };
        let mut o = json!({
            "name": flow_name(label, sim, f),
            "app": kind,
            "cc": cc,
            "goodput_bps": r6(goodput),
            "goodput_mbps": r6(goodput / 1e6),
            "bytes_delivered": res.delivered_bytes,
        });
        let m = o.as_object_mut().unwrap();
        if let (Some(tx), rx) = sim.flow_tcp(f) {
            let mean_rtt = if tx.rtt_samples > 0 {
                Some(ms(tx.rtt_sum_ns as f64 / tx.rtt_samples as f64))
            } else {
                None
            };
            let mean_rto = if tx.rtos > 0 {
                Some(ms(tx.rto_sum_ns as f64 / tx.rtos as f64))
            } else {
                None
            };
            m.insert("retransmitted_bytes".into(), json!(tx.retrans_bytes));
            m.insert("retransmitted_segments".into(), json!(tx.retrans_segments));
            m.insert("rtos".into(), json!(tx.rtos));
            m.insert("rto_undos".into(), json!(tx.rto_undos));
            // The other undos and D-SACKs (Linux TCPSpuriousRTOs, TCPFullUndo, TCPPartialUndo,
            // TCPDSACKUndo, TCPDSACKRecv; the receiver's D-SACKs sent).
            m.insert("spurious_rtos".into(), json!(tx.spurious_rtos));
            m.insert("full_undos".into(), json!(tx.full_undos));
            m.insert("partial_undos".into(), json!(tx.partial_undos));
            m.insert("dsack_undos".into(), json!(tx.dsack_undos));
            m.insert("dsacks_received".into(), json!(tx.dsacks_received));
            m.insert("dsacks_sent".into(), json!(rx.map_or(0, |r| r.dsacks_sent)));
            m.insert("fast_retransmits".into(), json!(tx.fast_retransmits));
            m.insert(
                "rtt_min_ms".into(),
                json!(tx.rtt_min.map(|d| ms(d.0 as f64))),
            );
            m.insert("rtt_mean_ms".into(), json!(mean_rtt));
            m.insert(
                "rtt_max_ms".into(),
                json!(tx.rtt_max.map(|d| ms(d.0 as f64))),
            );
            m.insert("rtt_samples".into(), json!(tx.rtt_samples));
            m.insert("mean_rto_ms".into(), json!(mean_rto));
            m.insert("data_segments_sent".into(), json!(tx.data_segments_sent));
            m.insert("segments_sent".into(), json!(tx.segments_sent));
            m.insert("persist_probes".into(), json!(tx.persist_probes));
            m.insert("idle_restarts".into(), json!(tx.idle_restarts));
            // The end of the first slow start (null while it lasts): cwnd in segments as the
            // kernel's TcpExtTCPHystart*Cwnd counters count it, seconds after the flow's start.
            let sse = tx.slow_start_exit;
            m.insert(
                "slow_start_exit_cause".into(),
                json!(sse.map(|e| e.cause.name())),
            );
            m.insert(
                "slow_start_exit_cwnd_segments".into(),
                json!(sse.map(|e| r6(e.cwnd as f64 / e.mss.max(1) as f64))),
            );
            m.insert(
                "slow_start_exit_s".into(),
                json!(sse.map(|e| r6(e.at.saturating_since(spec.start).as_secs_f64()))),
            );
            if let Some(rx) = rx {
                m.insert("receiver_segments_sent".into(), json!(rx.segments_sent));
            }
        }
        if let FlowKind::Bulk { write: Some(_), .. } = spec.kind {
            m.insert("app_writes".into(), json!(res.app_writes));
            m.insert("app_writes_refused".into(), json!(res.app_writes_refused));
        }
        if let FlowKind::Bulk { bytes: Some(b), .. } = spec.kind {
            // A limited push: first byte sent to last byte delivered.
            let t = (res.delivered_bytes >= b)
                .then(|| {
                    res.last_delivery
                        .map(|l| r6(l.saturating_since(spec.start).as_secs_f64()))
                })
                .flatten();
            m.insert("download_time_s".into(), json!(t));
        }
        if let (Some(tx), _) = sim.flow_tcp(f) {
            // What the sender's TCP had acknowledged (the far host's view of delivery).
            m.insert("sender_acked_bytes".into(), json!(tx.bytes_acked));
        }
        if let FlowKind::Download { .. } = spec.kind {
            let t = match (res.request_at, res.completed_at) {
                (Some(a), Some(b)) => Some(r6(b.saturating_since(a).as_secs_f64())),
                _ => None,
            };
            m.insert("download_time_s".into(), json!(t));
        }
        if let FlowKind::Bursts(_) = spec.kind {
            burst_summary(&res.bursts, m);
        }
        if let FlowKind::M2m(_) = spec.kind {
            m2m_summary(&res.m2m, m);
        }
        if let FlowKind::Video(_) = spec.kind {
            // Dissertation §4.3.3 / Table 3: bytes that reached the client and were discarded.
            let v = &res.video;
            m.insert("video_gets".into(), json!(v.gets));
            m.insert("video_connections".into(), json!(v.connections));
            m.insert("video_abandoned".into(), json!(v.abandoned));
            m.insert("video_received_bytes".into(), json!(v.received_bytes()));
            m.insert("video_read_bytes".into(), json!(v.read_bytes));
            m.insert(
                "video_unread_discarded_bytes".into(),
                json!(v.unread_discarded_bytes),
            );
            m.insert(
                "video_late_discarded_bytes".into(),
                json!(v.late_discarded_bytes),
            );
            m.insert("video_late_segments".into(), json!(v.late_segments));
            m.insert("video_discarded_bytes".into(), json!(v.discarded_bytes()));
            m.insert("video_discard_ratio".into(), json!(r6(v.discard_ratio())));
            m.insert("video_rsts_sent".into(), json!(v.rsts_sent));
        }
        if res.feedback_received > 0 {
            m.insert("feedback_received".into(), json!(res.feedback_received));
        }
        if let Some(rantcp_tcp::cc::Cc::RadioAware(ra)) = sim.flow_sender_cc(f) {
            // Reports the controller used, and times stale feedback handed the window back
            // to the loss-based fallback.
            m.insert("radio_reports_used".into(), json!(ra.reports));
            m.insert("radio_fallbacks".into(), json!(ra.fallbacks));
        }
        if let FlowKind::UdpCbr { .. } = spec.kind {
            m.insert("udp_sent_packets".into(), json!(res.udp_sent_packets));
            m.insert(
                "udp_received_packets".into(),
                json!(res.udp_received_packets),
            );
            // Packets still on the wire at the end are neither received nor lost.
            let in_flight = sim.udp_in_flight_packets(f);
            m.insert("udp_in_flight_packets".into(), json!(in_flight));
            let settled = res.udp_sent_packets - in_flight;
            let loss = if settled > 0 {
                1.0 - res.udp_received_packets as f64 / settled as f64
            } else {
                0.0
            };
            m.insert("udp_loss_ratio".into(), json!(r6(loss)));
        }
        flows.push(o);
    }
    flows
}

/// Per-transaction figures of an M2M flow (seed 003 §3.4): transactions started, answered
/// (downlink message read), completed (upload acknowledged), and the mean, median, 95th
/// percentile and maximum of the application upload response time and of the downlink
/// response time over the completed ones. Transactions still open at the end are censored.
fn m2m_summary(recs: &[rantcp_net::M2mRecord], m: &mut serde_json::Map<String, Value>) {
    let up: Vec<f64> = recs
        .iter()
        .filter_map(|r| r.up_response().map(|d| d.as_secs_f64()))
        .collect();
    let down: Vec<f64> = recs
        .iter()
        .filter_map(|r| r.down_response().map(|d| d.as_secs_f64()))
        .collect();
    m.insert("m2m_started".into(), json!(recs.len()));
    m.insert("m2m_answered".into(), json!(down.len()));
    m.insert("m2m_completed".into(), json!(up.len()));
    time_stats(up, "upload_response", m);
    time_stats(down, "down_response", m);
}

/// `{key}_mean_s`, `{key}_p50_s`, `{key}_p95_s` (nearest rank) and `{key}_max_s` of times `v`
/// (seconds; null when empty).
fn time_stats(mut v: Vec<f64>, key: &str, m: &mut serde_json::Map<String, Value>) {
    v.sort_by(f64::total_cmp);
    let pct = |q: f64| {
        (!v.is_empty()).then(|| {
            let k = ((q * v.len() as f64).ceil() as usize).clamp(1, v.len());
            r6(v[k - 1])
        })
    };
    let mean = (!v.is_empty()).then(|| r6(v.iter().sum::<f64>() / v.len() as f64));
    m.insert(format!("{key}_mean_s"), json!(mean));
    m.insert(format!("{key}_p50_s"), json!(pct(0.5)));
    m.insert(format!("{key}_p95_s"), json!(pct(0.95)));
    m.insert(format!("{key}_max_s"), json!(v.last().map(|&x| r6(x))));
}

/// Per-burst figures of a bursty flow, over the bursts delivered by the end of the run:
/// latency (first byte sent → last byte delivered; mean, median, 95th percentile, maximum),
/// transfer time (arrival → last byte delivered; mean) and burst throughput (burst bits over
/// its latency, Mbit/s; mean over bursts). Flat keys, so sweeps aggregate them over flows.
fn burst_summary(bursts: &[rantcp_net::BurstRecord], m: &mut serde_json::Map<String, Value>) {
    let done: Vec<&rantcp_net::BurstRecord> =
        bursts.iter().filter(|b| b.delivered.is_some()).collect();
    let lat: Vec<f64> = done
        .iter()
        .filter_map(|b| b.latency().map(|d| d.as_secs_f64()))
        .collect();
    let tt: Vec<f64> = done
        .iter()
        .filter_map(|b| b.transfer_time().map(|d| d.as_secs_f64()))
        .collect();
    let tput: Vec<f64> = done
        .iter()
        .filter_map(|b| {
            let l = b.latency()?.as_secs_f64();
            (l > 0.0).then(|| (b.end - b.start) as f64 * 8.0 / l / 1e6)
        })
        .collect();
    let mean = |v: &[f64]| (!v.is_empty()).then(|| r6(v.iter().sum::<f64>() / v.len() as f64));
    m.insert("bursts_arrived".into(), json!(bursts.len()));
    m.insert("bursts_delivered".into(), json!(done.len()));
    time_stats(lat, "burst_latency", m);
    m.insert("burst_transfer_mean_s".into(), json!(mean(&tt)));
    m.insert("burst_tput_mean".into(), json!(mean(&tput)));
}

fn link_summaries(label: &str, sim: &Sim) -> Vec<Value> {
    sim.link_reports()
        .into_iter()
        .map(|l| {
            json!({
                "iface": if label.is_empty() { l.iface } else { format!("{label}/{}", l.iface) },
                "tx_packets": l.stats.tx_packets,
                "tx_bytes": l.stats.tx_bytes,
                "queue_drops": l.stats.queue_drops,
                "error_drops": l.stats.error_drops,
                "max_backlog_bytes": l.stats.max_backlog_bytes,
            })
        })
        .collect()
}

fn flow_table(sims: &mut [(String, Sim)]) -> Table {
    use rantcp_net::FlowSeries as S;
    // (flow names, each flow's samples): every flow is sampled at every instant, so the
    // series of one network have equal lengths and row k·flows + f is flow f's k-th sample.
    let parts: Vec<(Vec<String>, Vec<S>)> = sims
        .iter_mut()
        .map(|(label, sim)| {
            let names = (0..sim.flow_count())
                .map(|f| flow_name(label, sim, f))
                .collect();
            (names, sim.take_flow_series())
        })
        .collect();
    let mut cols: Vec<(String, Column)> = Vec::new();
    macro_rules! col {
        ($name:literal, $variant:ident, |$s:ident, $k:ident| $get:expr) => {{
            let mut v = Vec::new();
            for (_, series) in &parts {
                let n = series.first().map_or(0, |s| s.time_s.len());
                for $k in 0..n {
                    for $s in series {
                        v.push($get);
                    }
                }
            }
            cols.push(($name.to_string(), Column::$variant(v)));
        }};
    }
    let i = |x: u64| x.min(i64::MAX as u64) as i64;
    let mut flow = Vec::new();
    for (names, series) in &parts {
        let n = series.first().map_or(0, |s| s.time_s.len());
        for _ in 0..n {
            flow.extend(names.iter().cloned());
        }
    }
    cols.push(("flow".into(), Column::Str(flow)));
    col!("time_s", F64, |s, k| s.time_s[k]);
    col!("goodput_bps", F64, |s, k| s.goodput_bps[k]);
    col!("delivered_bytes", I64, |s, k| i(s.delivered_bytes[k]));
    col!("cwnd_bytes", I64, |s, k| i(s.cwnd_bytes[k]));
    col!("ssthresh_bytes", OptI64, |s, k| s.ssthresh_bytes[k].map(i));
    col!("srtt_ms", F64, |s, k| s.srtt_ms[k]);
    col!("rto_ms", F64, |s, k| s.rto_ms[k]);
    col!("in_flight_bytes", I64, |s, k| i(s.in_flight_bytes[k]));
    col!("rwin_bytes", I64, |s, k| i(s.rwin_bytes[k]));
    col!("pacing_rate_bps", F64, |s, k| s.pacing_rate_bps[k]);
    col!("bbr_mode", OptI64, |s, k| s.bbr_mode[k]);
    col!("bbr_btl_bw_bps", F64, |s, k| s.bbr_btl_bw_bps[k]);
    col!("bbr_min_rtt_ms", F64, |s, k| s.bbr_min_rtt_ms[k]);
    col!("cubic_w_max_bytes", F64, |s, k| s.cubic_w_max_bytes[k]);
    col!("cubic_k_s", F64, |s, k| s.cubic_k_s[k]);
    Table {
        name: "flows".into(),
        columns: cols,
    }
}

// ----- radio (RanDevice) outputs -----

fn ran_devices(sim: &Sim) -> impl Iterator<Item = &rantcp_ran::cell::RanDevice> {
    (0..sim.device_count()).filter_map(move |d| {
        sim.device(d)
            .as_any()
            .downcast_ref::<rantcp_ran::cell::RanDevice>()
    })
}

/// Per-UE and per-cell radio figures (None when no network has a radio device).
fn radio_summary(sims: &[(String, Sim)], end: Time) -> Value {
    let mut ues = Vec::new();
    let mut cells = Vec::new();
    // Over every UE: uplink signalling (seed 003 ch. 3: the BSR count beside the delay) and the
    // uplink LTE packet delay; over every active cell: subframes with no DCI and with all.
    let (mut bsrs, mut srs, mut retx, mut enh) = (0u64, 0u64, 0u64, 0u64);
    // SR give-ups (dsr-TransMax), random access procedures/successes/problems, radio link
    // failures, re-establishments, time without uplink (TS 36.321 §5.4.4, §5.1; 36.331 §5.3.11).
    let (mut give_ups, mut ra_n, mut ra_ok, mut ra_fail) = (0u64, 0u64, 0u64, 0u64);
    let (mut rlfs, mut reest, mut outage_ns) = (0u64, 0u64, 0u64);
    // Of the radio link failures: T310 expiries (radio link monitoring) and RLC
    // maxRetxThreshold indications.
    let (mut rlf_rlm, mut rlf_rlc) = (0u64, 0u64);
    let (mut d_n, mut d_sum, mut d_max) = (0u64, 0u128, 0u64);
    let (mut sf_all, mut sf_idle, mut sf_full) = (0u64, 0u64, 0u64);
    let secs = end.as_secs_f64().max(1e-9);
    for (label, sim) in sims {
        for dev in ran_devices(sim) {
            for rnti in dev.rntis() {
                let c = dev.ue_counters(rnti).unwrap();
                let (enb_rlc, ue_rlc) = dev.ue_rlc_counters(rnti).unwrap();
                let mac = dev.ue_mac_counters(rnti).unwrap();
                bsrs += mac.bsr_regular + mac.bsr_periodic + mac.bsr_padding;
                srs += mac.sr_tx;
                retx += mac.retx_bsr_expiries;
                enh += mac.bsr_enhanced;
                let ra = dev.ue_ra_counters(rnti).unwrap();
                let outage = dev.ue_ul_outage(rnti, end).unwrap().as_nanos();
                give_ups += mac.sr_give_ups;
                ra_n += ra.procedures;
                ra_ok += ra.successes;
                ra_fail += ra.problems;
                rlfs += c.rlf;
                rlf_rlm += c.rlf_rlm;
                rlf_rlc += c.rlf_rlc_max_retx;
                reest += c.reestablishments;
                outage_ns += outage;
                d_n += c.ul_delay_n;
                d_sum += c.ul_delay_sum_ns;
                d_max = d_max.max(c.ul_delay_max_ns);
                let ls = dev.radio().large_scale(rnti);
                let name = if label.is_empty() {
                    format!("ue{rnti}")
                } else {
                    format!("{label}/ue{rnti}")
                };
                ues.push(json!({
                    "ue": name,
                    "rnti": rnti,
                    "cell": dev.ue_cell(rnti),
                    "distance_m": r6(ls.distance_m),
                    "mean_sinr_db": if c.sinr_samples > 0 { Some(r6(c.sinr_sum_db / c.sinr_samples as f64)) } else { None },
                    "dl_avg_tbs_bytes": if c.dl_tb_new > 0 { r6(c.dl_tb_bytes as f64 / c.dl_tb_new as f64) } else { 0.0 },
                    "dl_tb_new": c.dl_tb_new,
                    "dl_tb_retx": c.dl_tb_retx,
                    "dl_tb_failed": c.dl_tb_failed,
                    "dl_phy_mbps": r6(c.dl_tb_bytes as f64 * 8.0 / secs / 1e6),
                    "dl_prbs": c.dl_prbs,
                    "dl_packets_in": c.dl_packets_in,
                    "dl_packets_delivered": c.dl_packets_delivered,
                    "rlc_dl_sdus_dropped": enb_rlc.sdus_dropped,
                    "rlc_dl_retx_pdus": enb_rlc.retx_pdus,
                    "rlc_dl_status_rx": enb_rlc.status_pdus_rx,
                    "rlc_ul_status_tx": ue_rlc.status_pdus_tx,
                    "ul_packets": c.ul_packets_in,
                    "ul_acks": c.ul_acks_in,
                    "ul_acks_delivered": c.ul_acks_delivered,
                    "ul_tb_new": c.ul_tb_new,
                    "ul_tb_retx": c.ul_tb_retx,
                    "ul_tb_failed": c.ul_tb_failed,
                    "ul_avg_tbs_bytes": if c.ul_tb_new > 0 { r6(c.ul_tb_bytes as f64 / c.ul_tb_new as f64) } else { 0.0 },
                    "sr_sent": mac.sr_tx,
                    "sr_received": c.sr_rx,
                    "bsr_regular": mac.bsr_regular,
                    "bsr_periodic": mac.bsr_periodic,
                    "bsr_padding": mac.bsr_padding,
                    "bsr_received": c.bsr_rx,
                    "retx_bsr_expiries": mac.retx_bsr_expiries,
                    "bsr_enhanced": mac.bsr_enhanced,
                    "ul_grants": c.ul_grants,
                    "ul_delay_packets": c.ul_delay_n,
                    "ul_delay_mean_s": if c.ul_delay_n > 0 { Some(r6(c.ul_delay_sum_ns as f64 / c.ul_delay_n as f64 * 1e-9)) } else { None },
                    "ul_delay_max_s": r6(c.ul_delay_max_ns as f64 * 1e-9),
                }));
                {
                    // SR give-up, random access, RLF (beside the SR/BSR counters above).
                    let o = ues.last_mut().and_then(|v| v.as_object_mut()).unwrap();
                    for (k, v) in [
                        ("sr_give_ups", json!(mac.sr_give_ups)),
                        ("ra_attempts", json!(ra.procedures)),
                        ("ra_preambles", json!(ra.preambles)),
                        ("ra_successes", json!(ra.successes)),
                        ("ra_failures", json!(ra.problems)),
                        ("rlf", json!(c.rlf)),
                        ("rlf_rlm", json!(c.rlf_rlm)),
                        ("rlf_rlc_max_retx", json!(c.rlf_rlc_max_retx)),
                        ("reestablishments", json!(c.reestablishments)),
                        ("ul_outage_s", json!(r6(outage as f64 * 1e-9))),
                    ] {
                        o.insert(k.into(), v);
                    }
                }
                if dev.radio().config().o2i.is_some() {
                    // Indoor UEs (ue.indoor): TR 38.901 §7.4.3.1 building and O2I loss.
                    let o2i = dev.radio().o2i(rnti);
                    let o = ues.last_mut().and_then(|v| v.as_object_mut()).unwrap();
                    o.insert("indoor".into(), json!(o2i.is_some()));
                    o.insert(
                        "o2i_building".into(),
                        json!(o2i.map(|s| match s.building {
                            rantcp_ran::pathloss::Building::LowLoss => "low-loss",
                            rantcp_ran::pathloss::Building::HighLoss => "high-loss",
                        })),
                    );
                    o.insert("o2i_loss_db".into(), json!(o2i.map(|s| r6(s.loss_db))));
                }
                if c.dl_nf_emitted > 0 {
                    // Downlink packets network functions put into the bearer (emitted or pulled).
                    let o = ues
                        .last_mut()
                        .and_then(|v: &mut Value| v.as_object_mut())
                        .unwrap();
                    o.insert("dl_nf_emitted".into(), json!(c.dl_nf_emitted));
                }
            }
            let n_prb = dev.radio().carrier().n_prb as f64;
            for ci in dev.active_cells() {
                let [slots, dl_slots, dl_prbs, ul_slots, ul_prbs, dcis] = dev.cell_totals(ci);
                let all_slots = (secs / dev.radio().carrier().slot.as_secs_f64())
                    .round()
                    .max(1.0);
                let dl_frac = if slots > 0 {
                    dl_slots as f64 / slots as f64
                } else {
                    1.0
                };
                let ul_frac = if slots > 0 {
                    ul_slots as f64 / slots as f64
                } else {
                    0.0
                };
                // Subframes by DCIs used (index = DCIs); the subframes the device slept
                // through carried none and are counted at index 0. A device still busy when
                // the run ends also runs the subframe that starts at its last instant, one more
                // than the duration holds: the shares are of the subframes counted (≤ 1).
                let mut hist = dev.cell_pdcch_histogram(ci).to_vec();
                hist[0] += (all_slots as u64).saturating_sub(slots);
                let counted = (all_slots as u64).max(slots);
                let share = |n: u64| r6(n as f64 / counted as f64);
                sf_all += counted;
                sf_idle += hist[0];
                sf_full += *hist.last().expect("budget >= 1");
                cells.push(json!({
                    "cell": ci,
                    "slots_active": slots,
                    "dl_slots": dl_slots,
                    "ul_slots": ul_slots,
                    "dl_prb_util": r6(dl_prbs as f64 / (all_slots * dl_frac * n_prb).max(1.0)),
                    "ul_prb_util": if ul_frac > 0.0 { r6(ul_prbs as f64 / (all_slots * ul_frac * n_prb).max(1.0)) } else { 0.0 },
                    "dcis": dcis,
                    "pdcch_per_slot": r6(dcis as f64 / all_slots),
                    // Shares of the run's subframes with no DCI (PDCCH use under 1 % of any
                    // budget below 100 DCIs) and with every DCI of the budget used.
                    "pdcch_idle_share": share(hist[0]),
                    "pdcch_full_share": share(*hist.last().expect("budget >= 1")),
                    "pdcch_histogram": hist,
                }));
            }
        }
    }
    if ues.is_empty() {
        return Value::Null;
    }
    let tput: Vec<f64> = ues
        .iter()
        .map(|u| u["dl_phy_mbps"].as_f64().unwrap_or(0.0))
        .collect();
    let frac = |n: u64| r6(n as f64 / sf_all.max(1) as f64);
    json!({
        "ues": ues,
        "cells": cells,
        "dl_phy_jain": r6(rantcp_ran::mac::sched::jain_index(&tput)),
        "uplink": {
            "bsr_sent": bsrs,
            "sr_sent": srs,
            "retx_bsr_expiries": retx,
            "bsr_enhanced": enh,
            "sr_give_ups": give_ups,
            "ra_attempts": ra_n,
            "ra_successes": ra_ok,
            "ra_failures": ra_fail,
            "rlf": rlfs,
            "rlf_rlm": rlf_rlm,
            "rlf_rlc_max_retx": rlf_rlc,
            "reestablishments": reest,
            "ul_outage_s": r6(outage_ns as f64 * 1e-9),
            "ul_delay_packets": d_n,
            "ul_delay_mean_s": if d_n > 0 { Some(r6(d_sum as f64 / d_n as f64 * 1e-9)) } else { None },
            "ul_delay_max_s": r6(d_max as f64 * 1e-9),
        },
        "pdcch": { "idle_share": frac(sf_idle), "full_share": frac(sf_full) },
    })
}

/// `m2m`: one row per M2M transaction completed (upload acknowledged) since the last drain:
/// flow, when the server wrote the downlink message, the downlink response time and the
/// application upload response time. None without M2M flows.
fn m2m_table(sims: &mut [(String, Sim)]) -> Option<Table> {
    let mut flow = Vec::new();
    let (mut t0, mut down, mut up) = (Vec::new(), Vec::new(), Vec::new());
    let mut any = false;
    for (label, sim) in sims.iter_mut() {
        for f in 0..sim.flow_count() {
            if !matches!(sim.flow_spec(f).kind, FlowKind::M2m(_)) {
                continue;
            }
            any = true;
            let name = flow_name(label, sim, f);
            for r in sim.take_m2m_completed(f) {
                flow.push(name.clone());
                t0.push(r.down_sent.as_secs_f64());
                down.push(r.down_response().map_or(f64::NAN, |d| d.as_secs_f64()));
                up.push(r.up_response().map_or(f64::NAN, |d| d.as_secs_f64()));
            }
        }
    }
    any.then(|| Table {
        name: "m2m".into(),
        columns: vec![
            ("flow".into(), Column::Str(flow)),
            ("down_sent_s".into(), Column::F64(t0)),
            ("down_response_s".into(), Column::F64(down)),
            ("upload_response_s".into(), Column::F64(up)),
        ],
    })
}

/// A radio device's samples taken for one drain.
struct RadioRows {
    ue_series: rantcp_ran::cell::UeSeries,
    cell_series: rantcp_ran::cell::CellSeries,
}

fn radio_tables(sims: &mut [(String, Sim)]) -> Vec<Table> {
    let mut devs: Vec<(&str, RadioRows)> = Vec::new();
    let mut packets: Vec<(&str, rantcp_ran::cell::PacketSeries)> = Vec::new();
    let mut any_packets = false;
    for (l, sim) in sims.iter_mut() {
        for d in 0..sim.device_count() {
            let ran = sim
                .device_mut(d)
                .as_any_mut()
                .and_then(|a| a.downcast_mut::<rantcp_ran::cell::RanDevice>());
            if let Some(ran) = ran {
                any_packets |= ran.records_packet_series();
                packets.push((l.as_str(), ran.take_packet_series()));
                let (ue_series, cell_series) = ran.take_series();
                devs.push((
                    l.as_str(),
                    RadioRows {
                        ue_series,
                        cell_series,
                    },
                ));
            }
        }
    }
    if devs.is_empty() {
        return vec![];
    }
    let mut cols: Vec<(String, Column)> = Vec::new();
    let name = |l: &str, r: i64| {
        if l.is_empty() {
            format!("ue{r}")
        } else {
            format!("{l}/ue{r}")
        }
    };
    cols.push((
        "ue".into(),
        Column::Str(
            devs.iter()
                .flat_map(|(l, d)| d.ue_series.rnti.iter().map(move |&r| name(l, r)))
                .collect(),
        ),
    ));
    // One column of every device's UE or cell series, concatenated.
    macro_rules! series_col {
        ($cols:ident, $series:ident, $f:ident, $v:ident) => {
            $cols.push((
                stringify!($f).into(),
                Column::$v(
                    devs.iter()
                        .flat_map(|(_, d)| d.$series.$f.iter().cloned())
                        .collect(),
                ),
            ));
        };
    }
    macro_rules! ucol {
        ($f:ident, $v:ident) => {
            series_col!(cols, ue_series, $f, $v)
        };
    }
    ucol!(time_s, F64);
    ucol!(rnti, I64);
    ucol!(cell, I64);
    ucol!(sinr_db, F64);
    ucol!(mean_sinr_db, F64);
    ucol!(cqi, I64);
    ucol!(mcs, I64);
    ucol!(los, I64);
    ucol!(distance_m, F64);
    ucol!(x_m, F64);
    ucol!(y_m, F64);
    ucol!(tbs_bytes, F64);
    ucol!(dl_phy_bps, F64);
    ucol!(prbs, I64);
    ucol!(harq_new, I64);
    ucol!(harq_retx, I64);
    ucol!(harq_failed, I64);
    ucol!(rlc_queue_bytes, I64);
    ucol!(rlc_drops, I64);
    ucol!(ul_queue_bytes, I64);
    ucol!(sr, I64);
    ucol!(bsr, I64);
    ucol!(ul_grants, I64);
    ucol!(ul_tbs_bytes, F64);
    let radio = Table {
        name: "radio".into(),
        columns: cols,
    };
    let mut cols: Vec<(String, Column)> = Vec::new();
    macro_rules! ccol {
        ($f:ident, $v:ident) => {
            series_col!(cols, cell_series, $f, $v)
        };
    }
    ccol!(time_s, F64);
    ccol!(cell, I64);
    ccol!(dl_prb_util, F64);
    ccol!(ul_prb_util, F64);
    ccol!(pdcch_per_slot, F64);
    ccol!(pdcch_util, F64);
    let mut out = vec![
        radio,
        Table {
            name: "cells".into(),
            columns: cols,
        },
    ];
    if any_packets {
        let labelled = packets.iter().any(|(l, _)| !l.is_empty());
        let mut ue = Vec::new();
        let (mut t, mut d) = (Vec::new(), Vec::new());
        let mut net = Vec::new();
        let (mut pt, mut pc, mut pd) = (Vec::new(), Vec::new(), Vec::new());
        for (l, p) in &packets {
            let u = &p.ul_delay;
            ue.extend(u.rnti.iter().map(|&r| name(l, r)));
            t.extend_from_slice(&u.time_s);
            d.extend_from_slice(&u.delay_s);
            net.extend(std::iter::repeat_n(l.to_string(), p.pdcch.time_s.len()));
            pt.extend_from_slice(&p.pdcch.time_s);
            pc.extend_from_slice(&p.pdcch.cell);
            pd.extend_from_slice(&p.pdcch.dcis);
        }
        out.push(Table {
            name: "ul_delay".into(),
            columns: vec![
                ("ue".into(), Column::Str(ue)),
                ("time_s".into(), Column::F64(t)),
                ("delay_s".into(), Column::F64(d)),
            ],
        });
        let mut cols = Vec::new();
        if labelled {
            cols.push(("network".into(), Column::Str(net)));
        }
        cols.push(("time_s".into(), Column::F64(pt)));
        cols.push(("cell".into(), Column::I64(pc)));
        cols.push(("dcis".into(), Column::I64(pd)));
        out.push(Table {
            name: "pdcch".into(),
            columns: cols,
        });
    }
    out
}

// ----- network functions -----

/// `functions.<kind>`: the report of each function instance (its counters, the `dropped` and
/// `consumed` counts of its verdicts, and its `site`: the node's name, or "ran" for the radio
/// points of the radio access network). A kind with one instance gives its report; several
/// (functions at several sites, or the variants of a comparison) give an object of reports
/// keyed by `<variant>/<site>` (or the part that differs). Null when no function ran.
fn function_summary(sims: &[(String, Sim)]) -> Value {
    // (kind, [(variant label, site, report)])
    type ByKind = Vec<(&'static str, Vec<(String, String, Value)>)>;
    let mut by_kind: ByKind = Vec::new();
    for (label, sim) in sims {
        let at_nodes = sim
            .function_reports()
            .into_iter()
            .map(|r| (sim.node_name(r.node).to_string(), r.kind, r.report));
        let at_ran = ran_devices(sim)
            .flat_map(|d| d.function_reports())
            .map(|(kind, report)| ("ran".to_string(), kind, report));
        for (site, kind, report) in at_nodes.chain(at_ran) {
            let mut rep = report;
            if let Value::Object(m) = &mut rep {
                m.insert("site".into(), json!(site));
            }
            match by_kind.iter_mut().find(|(k, _)| *k == kind) {
                Some((_, v)) => v.push((label.clone(), site, rep)),
                None => by_kind.push((kind, vec![(label.clone(), site, rep)])),
            }
        }
    }
    if by_kind.is_empty() {
        return Value::Null;
    }
    let mut out = serde_json::Map::new();
    for (kind, mut inst) in by_kind {
        let v = if inst.len() == 1 {
            inst.pop().expect("one").2
        } else {
            let labelled = inst.iter().any(|i| !i.0.is_empty());
            let one_site = inst.iter().all(|i| i.1 == inst[0].1);
            let mut m = serde_json::Map::new();
            for (label, site, rep) in inst {
                let key = match (labelled, one_site) {
                    (true, true) => label,
                    (true, false) => format!("{label}/{site}"),
                    (false, _) => site,
                };
                m.insert(key, rep);
            }
            Value::Object(m)
        };
        out.insert(kind.to_string(), v);
    }
    Value::Object(out)
}

/// `semantics`: with a split host (`functions.split`), per split flow, what the far host was
/// told is delivered versus what the mobile host received, and the verdict of the host's
/// mode (rantcp_functions::split::check). Null without a split host.
fn semantics_summary(sims: &[(String, Sim)]) -> Value {
    use rantcp_functions::split::check::{check, Ends};
    use rantcp_functions::split::SplitMode;
    let mut out = Vec::new();
    for (label, sim) in sims {
        let reports = sim.function_reports();
        let Some(split) = reports.iter().find(|r| r.kind == "split") else {
            continue;
        };
        let Ok(mode) = serde_json::from_value::<SplitMode>(split.report["mode"].clone()) else {
            continue;
        };
        let fh = reports.iter().find(|r| r.kind == "split_fh");
        let conns = split.report["connections"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        for f in 0..sim.flow_count() {
            let spec = sim.flow_spec(f);
            let Some(conn) = conns.iter().find(|c| c["flow"] == json!(spec.name)) else {
                continue;
            };
            let file_bytes = match spec.kind {
                FlowKind::Bulk { bytes: Some(b), .. } => b,
                FlowKind::Download { bytes, .. } => bytes,
                _ => continue,
            };
            // The far host's end of this flow: its local and remote ends both (the flows of a
            // server share its address and port).
            let local = format!("{}:{}", sim.node_addr(spec.src), spec.src_port);
            let remote = format!("{}:{}", sim.node_addr(spec.dst), spec.dst_port);
            let freed = fh.and_then(|r| {
                r.report["connections"].as_array()?.iter().find(|c| {
                    c["local"] == json!(local)
                        && c["remote"] == json!(remote)
                        && c["as_tcp"] == json!(true)
                })?["freed_bytes"]
                    .as_u64()
            });
            let res = sim.flow_result(f);
            let e = Ends {
                file_bytes,
                fh_acked: sim.flow_tcp(f).0.map_or(0, |s| s.bytes_acked),
                fh_freed_mh: freed,
                mh_received: res.delivered_bytes,
            };
            let r = check(mode, e);
            let mut v = serde_json::to_value(r).expect("plain struct");
            v["flow"] = json!(flow_name(label, sim, f));
            v["mode"] = json!(mode.name());
            v["host_failed"] = split.report["failed"].clone();
            v["unacked_in_host_at_failure"] = conn["unacked_at_failure"].clone();
            out.push(v);
        }
    }
    if out.is_empty() {
        Value::Null
    } else {
        Value::Array(out)
    }
}

/// The functions' time series: one table per name (`<name>.parquet`), rows of every network
/// in order (in each, the functions at nodes, then those at the radio points), with a leading
/// `network` column in a comparison.
fn function_tables(sims: &mut [(String, Sim)]) -> Vec<Table> {
    use rantcp_nf::SeriesColumn;
    let labelled = sims.iter().any(|(l, _)| !l.is_empty());
    let mut tables: Vec<Table> = Vec::new();
    for (label, sim) in sims.iter_mut() {
        let mut series = sim.take_function_series();
        for d in 0..sim.device_count() {
            let ran = sim
                .device_mut(d)
                .as_any_mut()
                .and_then(|a| a.downcast_mut::<rantcp_ran::cell::RanDevice>());
            if let Some(ran) = ran {
                series.extend(ran.take_function_samples());
            }
        }
        for s in series {
            let t = match tables.iter_mut().position(|t| t.name == s.name) {
                Some(i) => &mut tables[i],
                None => {
                    let mut columns = Vec::new();
                    if labelled {
                        columns.push(("network".to_string(), Column::Str(vec![])));
                    }
                    for (n, c) in &s.columns {
                        columns.push((
                            n.clone(),
                            match c {
                                SeriesColumn::F64(_) => Column::F64(vec![]),
                                SeriesColumn::I64(_) => Column::I64(vec![]),
                            },
                        ));
                    }
                    tables.push(Table {
                        name: s.name.clone(),
                        columns,
                    });
                    tables.last_mut().expect("just pushed")
                }
            };
            let rows = s.columns.first().map_or(0, |c| match &c.1 {
                SeriesColumn::F64(v) => v.len(),
                SeriesColumn::I64(v) => v.len(),
            });
            let mut cols = t.columns.iter_mut();
            if labelled {
                if let Some((_, Column::Str(v))) = cols.next() {
                    v.extend(std::iter::repeat_n(label.clone(), rows));
                }
            }
            for ((_, dst), (_, src)) in cols.zip(&s.columns) {
                match (dst, src) {
                    (Column::F64(d), SeriesColumn::F64(x)) => d.extend_from_slice(x),
                    (Column::I64(d), SeriesColumn::I64(x)) => d.extend_from_slice(x),
                    _ => unreachable!("the same function writes the same columns in every network"),
                }
            }
        }
    }
    tables
}
