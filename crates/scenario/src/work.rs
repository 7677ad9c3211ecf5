//! The work of a run, estimated before it starts (issue 20): an upper bound on the packets its
//! links and UDP sources can produce and the UE-slots its radio devices process over the run,
//! so an absurd run (a 10 Tbit/s link, a 100 Tbit/s UDP source) is refused at once instead of
//! running for hours without a word.
//!
//! Each link direction counts as busy all the time with 1500-byte packets; a UDP source as
//! sending at its rate (at most one packet per nanosecond, the clock's resolution); a radio
//! device as serving every UE and cell in every slot. Real runs do less (TCP rarely fills
//! every link), so the bound is generous: the default scenarios estimate 10^5-10^7.

use rantcp_net::{FlowKind, Sim};

/// Runs estimated above this are refused unless forced. The estimate is an upper bound: the
/// 10 Tbit/s cc-compare, estimated 9.2e9 per simulated second, executes 5e8 events per
/// simulated second, about two minutes of wall time at 4 M events/s; runs at the bound take
/// from minutes (a mostly idle link) to hours (links and sources as busy as estimated).
pub const WORK_LIMIT: f64 = 2e9;

/// Packets (or UE-slots) per second a link direction at `rate_bps` can carry at most.
fn link_packets_per_s(rate_bps: u64) -> f64 {
    rate_bps as f64 / (8.0 * 1500.0)
}

/// A run's estimated work and its largest part.
#[derive(Clone, Debug, PartialEq)]
pub struct Work {
    /// Packets and UE-slots over the whole run.
    pub total: f64,
    /// What contributes most, e.g. `link router-eth1 at 10 Tbit/s`, and its share of `total`.
    pub largest: (String, f64),
}

fn rate_text(bps: f64) -> String {
    let (v, u) = [
        (1e12, "Tbit/s"),
        (1e9, "Gbit/s"),
        (1e6, "Mbit/s"),
        (1e3, "kbit/s"),
    ]
    .into_iter()
    .find(|(s, _)| bps >= *s)
    .unwrap_or((1.0, "bit/s"));
    format!("{:.3} {u}", bps / v).replacen(".000 ", " ", 1)
}

/// The work of `sims` run for `duration_s` simulated seconds.
pub fn estimate(sims: &[(String, Sim)], duration_s: f64) -> Work {
    let mut parts: Vec<(String, f64)> = Vec::new();
    for (label, sim) in sims {
        let at = |what: String| {
            if label.is_empty() {
                what
            } else {
                format!("{what} of {label}")
            }
        };
        for l in sim.link_reports() {
            parts.push((
                at(format!(
                    "link {} at {}",
                    l.iface,
                    rate_text(l.rate_bps as f64)
                )),
                link_packets_per_s(l.rate_bps),
            ));
        }
        for f in 0..sim.flow_count() {
            let spec = sim.flow_spec(f);
            if let FlowKind::UdpCbr {
                rate_bps,
                packet_bytes,
            } = spec.kind
            {
                let pps = (rate_bps as f64 / (8.0 * packet_bytes.max(1) as f64)).min(1e9);
                parts.push((
                    at(format!(
                        "UDP flow {} at {}",
                        spec.name,
                        rate_text(rate_bps as f64)
                    )),
                    pps,
                ));
            }
        }
        for d in 0..sim.device_count() {
            if let Some(ran) = sim
                .device(d)
                .as_any()
                .downcast_ref::<rantcp_ran::cell::RanDevice>()
            {
                let slot_s = ran.radio().carrier().slot.as_secs_f64().max(1e-9);
                let units = (ran.rntis().len() + ran.active_cells().len()) as f64;
                parts.push((at("radio device".to_string()), units / slot_s));
            }
        }
    }
    let total = parts.iter().map(|p| p.1).sum::<f64>() * duration_s;
    let largest = parts
        .into_iter()
        .max_by(|a, b| a.1.total_cmp(&b.1))
        .map(|(n, r)| (n, r * duration_s))
        .unwrap_or_default();
    Work { total, largest }
}
