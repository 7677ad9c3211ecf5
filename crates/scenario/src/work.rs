//! The work of a run, estimated before it starts (issue 20): an upper bound on the packets its
//! links and UDP sources can produce and the UE-slots its radio devices process over the run,
//! so an absurd run (a 10 Tbit/s link, a 100 Tbit/s UDP source) is refused at once instead of
//! running for hours without a word.
//!
//! Each link direction counts as busy all the time with 1500-byte packets, at its rate or at
//! what the network's data sources can send, whichever is less (a source sends at most its
//! flows' own rates, paced application writes and UDP, and at most at its fastest egress
//! link, or [`RADIO_SOURCE_BPS`] from behind a radio); a UDP source's
//! packets count at its own rate (at most one per nanosecond, the clock's resolution), sent
//! or dropped at its first queue; a radio device as serving every UE and cell in every slot.
//! Real runs do less (TCP rarely fills every link), so the estimate is an upper bound.

use rantcp_net::{FlowKind, Sim};

/// Runs estimated above this are refused unless forced. The estimate counts packets, and a
/// packet costs a few events per link it crosses: cc-compare at a 10 Tbit/s bottleneck is
/// estimated at 8.4e8 per simulated second (its UDP reference) and executes 5e8 events per
/// simulated second, about two minutes of wall time per simulated second at 4 M events/s
/// (allowed for 1 s, refused for its default 30 s). Runs at the bound take from minutes (links
/// mostly idle) to hours (links and sources as busy as estimated).
pub const WORK_LIMIT: f64 = 2e9;

/// What a data source behind a radio (a UE sending uplink) can send at most, bit/s: above
/// the peak rate of any one 3GPP carrier.
pub const RADIO_SOURCE_BPS: f64 = 20e9;

/// Packets per second a link direction carrying `bps` can carry at most.
fn link_packets_per_s(bps: f64) -> f64 {
    bps / (8.0 * 1500.0)
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
        let links = sim.link_reports();
        // What each source node can send: its flows' own rates (paced writes, UDP) or
        // unbounded (a full send buffer), at most its fastest egress link.
        let mut sources: Vec<(usize, f64)> = Vec::new();
        for f in 0..sim.flow_count() {
            let spec = sim.flow_spec(f);
            let own = match spec.kind {
                FlowKind::Bulk { write: Some(w), .. } => w.rate_bps as f64,
                FlowKind::UdpCbr { rate_bps, .. } => rate_bps as f64,
                _ => f64::INFINITY,
            };
            match sources.iter_mut().find(|s| s.0 == spec.src) {
                Some(s) => s.1 += own,
                None => sources.push((spec.src, own)),
            }
        }
        let source_bps: f64 = sources
            .iter()
            .map(|&(n, own)| {
                let egress = links
                    .iter()
                    .filter(|l| l.node == n)
                    .map(|l| l.rate_bps as f64)
                    .reduce(f64::max)
                    .unwrap_or(RADIO_SOURCE_BPS);
                own.min(egress)
            })
            .sum();
        for l in &links {
            parts.push((
                at(format!(
                    "link {} at {}",
                    l.iface,
                    rate_text(l.rate_bps as f64)
                )),
                link_packets_per_s((l.rate_bps as f64).min(source_bps)),
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
