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
use rantcp_config::units::Dur;
use rantcp_config::{check, ConfigError};
use rantcp_core::{Duration, Time};
use rantcp_nf::{
    Action, Attach, Feedback, FlowKey, NetworkFunction, Outbox, Output, Points, RanView,
    SampleSink, SampleValue, Site,
};
use rantcp_wire::PROTO_TCP;
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

impl FunctionConfig for RadioFeedbackConfig {
    const KIND: &'static str = "radio_feedback";

    fn enabled(&self) -> bool {
        self.enabled
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
        check(
            env.radio.is_some(),
            &format!("{p}.enabled"),
            "needs a scenario with a radio access network",
        )?;
        let flows: Vec<FlowKey> = match &self.flow {
            Some(name) => vec![env.flow(&format!("{p}.flow"), name)?],
            None => env.flows.iter().map(|f| f.1).collect(),
        };
        let flows = flows.into_iter().filter(|k| k.proto == PROTO_TCP).collect();
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
            self.next = self.next + self.period;
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
