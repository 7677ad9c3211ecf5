//! `radio_feedback`: the base station's side of seed 002's loose-coupled radio-aware TCP (3GPP
//! RAN3 contribution §3.1, Figure 4 "Layer 2 information delivery in downlink TCP"). Every
//! `period` the base station samples, for each UE that receives a TCP flow, the achievable data
//! rate R(t) and the layer-2 (RLC) queue Q(t), and sends them to the flow's TCP sender, where
//! they arrive `feedback_delay` later and set the window of a `cc = "radio-aware"` sender
//! (`rantcp_tcp::cc::radio_aware`). Senders with another controller ignore it.
//!
//! * R(t) is [`rantcp_nf::UeReport::achievable_rate_bps`]: the UE's latest reported CQI →
//!   MCS (TS 36.213 §7.2.3 Table 7.2.3-1, BLER target 10%) → transport-block size of all PRBs
//!   of a downlink slot (TS 36.213 §7.1.7.2.1 Table 7.1.7.2.1-1, over the duplex pattern) per
//!   second, times the UE's expected share of the PRBs: one over the UEs of its cell with
//!   downlink backlog (itself included) — the long-run share of round-robin and of
//!   proportional fair among UEs of statistically equal channels. The seed's UE computes it
//!   from the same inputs (its CQI and the load the eNB broadcasts); where it is computed does
//!   not change the value, only the delay, which `feedback_delay` stands for. No report (CQI
//!   0, before the first CQI report) is sent as "no rate".
//! * Q(t) is the eNB RLC entity's buffer status of the UE's bearer (new SDUs with header
//!   estimates, retransmissions, STATUS PDUs), bytes.
//!
//! How it travels: as an out-of-band message from the RAN to the sender, modelled as one
//! UDP/IPv4 datagram per report of [`MESSAGE_BYTES`] bytes (20 IP + 8 UDP + 16 payload: rate in
//! kbit/s, queue in bytes, sample time in ms, flow identifier, 4 bytes each). It is not put on
//! the simulated links — it arrives exactly `feedback_delay` after it was sampled, in order —
//! and its bytes are counted (`bytes_sent` in summary.json), so the overhead can be weighed
//! against the gain. `stop` ends the reports at a given time (to exercise the sender's
//! fallback when feedback goes missing).
//!
//! Series `radio_feedback`: one row per report (time, rnti, cqi, rate, queue).

use crate::{BuildEnv, FunctionConfig};
use rantcp_config::reads::FieldUse;
use rantcp_config::units::Dur;
use rantcp_config::{check, ConfigError};
use rantcp_core::{Duration, Time};
use rantcp_nf::{
    Action, Attach, Feedback, FlowKey, NetworkFunction, Outbox, Output, Points, RanView,
    SampleSink, SampleValue, Site,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Bytes of one report on the wire: IPv4 (20) + UDP (8) + four 4-byte fields.
pub const MESSAGE_BYTES: u64 = 20 + 8 + 16;

fn d_period() -> Dur {
    Dur::ms(10)
}
fn d_delay() -> Dur {
    Dur::ms(10)
}

/// `[functions.radio_feedback]`.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RadioFeedbackConfig {
    /// Send R(t) and Q(t) to the TCP senders of the flows to UEs.
    #[serde(default)]
    pub enabled: bool,
    /// Sampling period.
    #[serde(default = "d_period")]
    pub period: Dur,
    /// From sampling at the base station to arrival at the sender.
    #[serde(default = "d_delay")]
    pub feedback_delay: Dur,
    /// No reports from this time on (absent: to the end of the run).
    #[serde(default)]
    pub stop: Option<Dur>,
    /// Only this flow (a name from summary.json's flows, e.g. "ue1"); absent: every TCP flow
    /// whose receiver is a UE.
    #[serde(default)]
    pub flow: Option<String>,
}

impl Default for RadioFeedbackConfig {
    fn default() -> Self {
        RadioFeedbackConfig {
            enabled: false,
            period: d_period(),
            feedback_delay: d_delay(),
            stop: None,
            flow: None,
        }
    }
}

impl FieldUse for RadioFeedbackConfig {
    const ALWAYS: &'static [&'static str] = &["enabled"];
    const CONDITIONAL: &'static [&'static str] = &["period", "feedback_delay", "stop", "flow"];
}

impl FunctionConfig for RadioFeedbackConfig {
    const KIND: &'static str = "radio_feedback";

    fn enabled(&self) -> bool {
        self.enabled
    }

    fn off_because(&self, p: &str) -> String {
        format!("{p}.enabled = false")
    }

    fn tcp_flow(&self) -> Option<&str> {
        self.flow.as_deref()
    }

    fn validate(&self, p: &str) -> Result<(), ConfigError> {
        check(
            self.period.0 >= Duration::from_micros(100) && self.period.0 <= Duration::from_secs(10),
            &format!("{p}.period"),
            "must be between 100us and 10s",
        )?;
        check(
            self.feedback_delay.0 <= Duration::from_secs(10),
            &format!("{p}.feedback_delay"),
            "must be between 0s and 10s",
        )
    }

    fn build(&self, p: &str, env: &BuildEnv) -> Result<Vec<Attach>, ConfigError> {
        if !self.enabled {
            return Ok(vec![]);
        }
        env.require_radio(&format!("{p}.enabled"))?;
        let flows = env.tcp_flows(&format!("{p}.flow"), self.tcp_flow())?;
        Ok(vec![Attach {
            site: Site::Ran,
            function: Box::new(RadioFeedback::new(
                flows,
                self.period.d(),
                self.feedback_delay.d(),
                self.stop.map(|s| Time::ZERO + s.d()),
            )),
        }])
    }
}

/// One report, as sampled.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Row {
    rnti: u16,
    cqi: u8,
    rate_bps: f64,
    queue_bytes: u64,
}

/// The function (see the module docs).
pub struct RadioFeedback {
    /// Candidate flows in their data direction; those whose receiver is a UE get reports.
    flows: Vec<FlowKey>,
    period: Duration,
    delay: Duration,
    stop: Option<Time>,
    next: Time,
    out: Outbox,
    /// Reports of the latest round, for the series.
    rows: Vec<Row>,
    reports: u64,
    /// Reports without a rate (no CQI yet).
    no_rate: u64,
}

impl RadioFeedback {
    pub fn new(flows: Vec<FlowKey>, period: Duration, delay: Duration, stop: Option<Time>) -> Self {
        RadioFeedback {
            flows,
            period,
            delay,
            stop,
            next: Time::ZERO + period,
            out: Outbox::default(),
            rows: Vec::new(),
            reports: 0,
            no_rate: 0,
        }
    }

    /// Sample every flow's UE at `now` and queue the reports.
    fn round(&mut self, now: Time, ran: &dyn RanView) {
        self.rows.clear();
        for &flow in &self.flows {
            let Some(rnti) = ran.rnti_of(flow.dst) else {
                continue;
            };
            let Some(r) = ran.ue_report(rnti, now) else {
                continue;
            };
            let rate = (r.cqi > 0).then_some(r.achievable_rate_bps);
            if rate.is_none() {
                self.no_rate += 1;
            }
            self.reports += 1;
            self.rows.push(Row {
                rnti,
                cqi: r.cqi,
                rate_bps: r.achievable_rate_bps,
                queue_bytes: r.rlc_queue_bytes,
            });
            self.out.action(Action::Feedback {
                flow,
                fb: Feedback {
                    sampled_at: now,
                    rate_bps: rate,
                    queue_bytes: Some(r.rlc_queue_bytes),
                },
                delay: self.delay,
            });
        }
    }
}

impl NetworkFunction for RadioFeedback {
    fn kind(&self) -> &'static str {
        RadioFeedbackConfig::KIND
    }
    fn points(&self) -> Points {
        Points::NONE
    }
    fn poll_timeout(&self) -> Option<Time> {
        match self.stop {
            Some(s) if self.next >= s => None,
            _ => Some(self.next),
        }
    }
    fn handle_timeout(&mut self, now: Time, ran: Option<&dyn RanView>) {
        if now < self.next || self.stop.is_some_and(|s| self.next >= s) {
            return;
        }
        if let Some(ran) = ran {
            self.round(now, ran);
        }
        while self.next <= now {
            self.next += self.period;
        }
    }
    fn poll_output(&mut self) -> Option<Output> {
        self.out.pop()
    }
    fn sample(&mut self, now: Time, _ran: Option<&dyn RanView>, out: &mut SampleSink) {
        for r in &self.rows {
            out.push(
                "radio_feedback",
                &[
                    ("time_s", SampleValue::F64(now.as_secs_f64())),
                    ("rnti", SampleValue::I64(r.rnti as i64)),
                    ("cqi", SampleValue::I64(r.cqi as i64)),
                    ("rate_bps", SampleValue::F64(r.rate_bps)),
                    ("queue_bytes", SampleValue::I64(r.queue_bytes as i64)),
                ],
            );
        }
    }
    fn report(&self) -> serde_json::Value {
        serde_json::json!({
            "period_ms": self.period.as_secs_f64() * 1e3,
            "feedback_delay_ms": self.delay.as_secs_f64() * 1e3,
            "channel": "out-of-band UDP/IPv4 message, not on the simulated links",
            "message_bytes": MESSAGE_BYTES,
            "reports": self.reports,
            "reports_without_rate": self.no_rate,
            "bytes_sent": self.reports * MESSAGE_BYTES,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rantcp_nf::{Rnti, UeReport};
    use rantcp_wire::PROTO_TCP;
    use std::net::Ipv4Addr;

    const SRV: Ipv4Addr = Ipv4Addr::new(10, 0, 0, 1);
    fn ue(k: u8) -> Ipv4Addr {
        Ipv4Addr::new(10, 1, 0, k)
    }
    fn key(dst: Ipv4Addr, port: u16) -> FlowKey {
        FlowKey {
            src: SRV,
            dst,
            src_port: 5201,
            dst_port: port,
            proto: PROTO_TCP,
        }
    }

    /// Two UEs: UE 1 with CQI 9, UE 2 without a CQI report yet.
    struct Stub;
    impl RanView for Stub {
        fn slot(&self) -> Duration {
            Duration::from_millis(1)
        }
        fn rntis(&self) -> &[Rnti] {
            &[1, 2]
        }
        fn rnti_of(&self, addr: Ipv4Addr) -> Option<Rnti> {
            [ue(1), ue(2)]
                .iter()
                .position(|a| *a == addr)
                .map(|i| i as Rnti + 1)
        }
        fn addr_of(&self, rnti: Rnti) -> Option<Ipv4Addr> {
            Some(ue(rnti as u8))
        }
        fn ue_report(&self, rnti: Rnti, now: Time) -> Option<UeReport> {
            Some(UeReport {
                rnti,
                cqi: if rnti == 1 { 9 } else { 0 },
                achievable_rate_bps: if rnti == 1 { 12.5e6 } else { 0.0 },
                rlc_queue_bytes: 1000 * rnti as u64 + now.as_nanos() / 1_000_000,
                ..Default::default()
            })
        }
    }

    fn feedback(f: &mut RadioFeedback) -> Vec<(FlowKey, Feedback, Duration)> {
        let mut v = Vec::new();
        while let Some(o) = f.poll_output() {
            match o {
                Output::Action(Action::Feedback { flow, fb, delay }) => v.push((flow, fb, delay)),
                o => panic!("unexpected {o:?}"),
            }
        }
        v
    }

    #[test]
    fn every_period_each_ue_flow_gets_rate_and_queue_after_the_delay() {
        let flows = vec![
            key(ue(1), 1),
            key(ue(2), 2),
            key(Ipv4Addr::new(10, 9, 9, 9), 3),
        ];
        let mut f = RadioFeedback::new(
            flows.clone(),
            Duration::from_millis(10),
            Duration::from_millis(7),
            Some(Time::from_millis(30)),
        );
        assert_eq!(f.points(), Points::NONE);
        assert_eq!(f.poll_timeout(), Some(Time::from_millis(10)));
        // Early and stale calls do nothing.
        f.handle_timeout(Time::from_millis(9), Some(&Stub));
        assert!(feedback(&mut f).is_empty());
        f.handle_timeout(Time::from_millis(10), Some(&Stub));
        let fb = feedback(&mut f);
        // The flow to a non-UE address gets none; UE 2 has no CQI: no rate, its queue still.
        assert_eq!(
            fb,
            vec![
                (
                    flows[0],
                    Feedback {
                        sampled_at: Time::from_millis(10),
                        rate_bps: Some(12.5e6),
                        queue_bytes: Some(1010),
                    },
                    Duration::from_millis(7)
                ),
                (
                    flows[1],
                    Feedback {
                        sampled_at: Time::from_millis(10),
                        rate_bps: None,
                        queue_bytes: Some(2010),
                    },
                    Duration::from_millis(7)
                ),
            ]
        );
        assert_eq!(f.poll_timeout(), Some(Time::from_millis(20)));
        // A late call samples at its own time and keeps the grid.
        f.handle_timeout(Time::from_millis(23), Some(&Stub));
        let fb = feedback(&mut f);
        assert_eq!(fb[0].1.sampled_at, Time::from_millis(23));
        assert_eq!(fb[0].1.queue_bytes, Some(1023));
        // The next round would be at 30 ms = stop: no more reports.
        assert_eq!(f.poll_timeout(), None);
        f.handle_timeout(Time::from_millis(30), Some(&Stub));
        assert!(feedback(&mut f).is_empty());
        let r = f.report();
        assert_eq!(r["reports"], 4);
        assert_eq!(r["reports_without_rate"], 2);
        assert_eq!(r["bytes_sent"], 4 * 44);
    }

    #[test]
    fn config_is_checked_and_builds_only_at_a_ran() {
        let c = RadioFeedbackConfig {
            period: Dur(Duration::from_micros(50)),
            ..Default::default()
        };
        let e = c.validate("functions.radio_feedback").unwrap_err();
        assert!(
            e.to_string().contains("functions.radio_feedback.period"),
            "{e}"
        );
        let on = RadioFeedbackConfig {
            enabled: true,
            ..Default::default()
        };
        let e = on
            .build("functions.radio_feedback", &BuildEnv::default())
            .err()
            .unwrap();
        assert!(e.to_string().contains("radio access network"), "{e}");
        assert!(RadioFeedbackConfig::default()
            .build("functions.radio_feedback", &BuildEnv::default())
            .unwrap()
            .is_empty());
    }
}
