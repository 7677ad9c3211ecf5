//! SR give-up, random access and radio link failure through the whole device
//! ([`RanDevice`] with the deterministic radio of `support`): TS 36.321 §5.4.4 (dsr-TransMax),
//! §5.1 (random access), TS 36.331 §5.3.11.3 / §5.3.7 (RLF, re-establishment).

mod support;

use rantcp_core::Duration;
use rantcp_nf::NodeId;
use rantcp_ran::cell::{RanConfig, RanDevice};
use rantcp_ran::geometry::Vec3;
use rantcp_ran::mobility::Mobility;
use rantcp_ran::radio::RadioEnvironment;
use std::collections::HashSet;
use support::*;

const NEAR: f64 = 100.0;
/// Path loss ≈ 162 dB: a preamble at P_CMAX arrives ≈ 25 dB below the detection threshold.
const HOPELESS: f64 = 8000.0;

fn standard(c: &mut RanConfig) {
    c.ideal_bsr = false;
}

#[test]
fn random_access_with_a_good_link_succeeds_and_msg3_carries_the_bsr() {
    // dsr-TransMax 0 (not a TS 36.331 value): the first SR occasion starts random access.
    let mut d = Driver::new(device(&[NEAR], |c| {
        standard(c);
        c.ue_mac.dsr_trans_max = Some(0);
    }));
    let p = ack(1, 49152, 1401);
    d.send(ms(2.5), 1, p);
    d.run_until(ms(200.0));
    let mac = d.dev.ue_mac_counters(1).unwrap();
    let ra = d.dev.ue_ra_counters(1).unwrap();
    assert_eq!((mac.sr_tx, mac.sr_give_ups), (0, 1));
    assert_eq!(
        (ra.procedures, ra.preambles, ra.successes, ra.problems),
        (1, 1, 1, 0)
    );
    // Give-up at the 10 ms occasion; preamble at 11 ms (prach-ConfigIndex 3); RAR at 14;
    // Msg3 (BSR) at 20, at the eNB's scheduler at 22 (slot + 1 ms processing) → grant in
    // slot 22 for 26 → at the eNB's RLC at 28 ms.
    assert_eq!(d.to_node(ENB), vec![(ms(28.0), p)]);
    let c = d.dev.ue_counters(1).unwrap();
    // BSRs at the eNB: Msg3's and the data block's padding BSR.
    assert_eq!((c.rlf, c.bsr_rx), (0, 2));
    assert_eq!(
        d.dev.ue_ul_outage(1, ms(200.0)),
        Some(Duration::from_millis(14))
    );
}

#[test]
fn a_hopeless_uplink_gives_up_srs_then_random_access_then_declares_rlf() {
    let mut d = Driver::new(device(&[HOPELESS], standard));
    for k in 0..20 {
        d.send(ms(2.5 + 100.0 * k as f64), 1, ack(1, 49152, 1401 + k));
    }
    d.run_until(ms(10_000.0));
    let mac = d.dev.ue_mac_counters(1).unwrap();
    let ra = d.dev.ue_ra_counters(1).unwrap();
    let c = d.dev.ue_counters(1).unwrap();
    // dsr-TransMax n64: 64 SRs, then never another one (the SR resource is released, and
    // after the RLF the re-establishment attempts use random access, never SR).
    assert_eq!(mac.sr_tx, 64, "{mac:?}");
    assert_eq!(mac.sr_give_ups, 1);
    // Each procedure: 10 preambles (preambleTransMax n10) none detected, then a problem.
    assert!(ra.problems >= 2, "{ra:?}");
    assert_eq!(ra.successes, 0);
    assert!(ra.preambles >= 10 * ra.problems, "{ra:?}");
    assert!(ra.preambles <= 10 * ra.procedures, "{ra:?}");
    assert_eq!(c.rlf, 1, "one RLF; then failed re-establishments: {c:?}");
    assert_eq!(c.reestablishment_failures, ra.problems - 1);
    assert_eq!(c.reestablishments, 0);
    assert!(d.to_node(ENB).is_empty());
    // Without uplink since the give-up at 650 ms (SRs at 10, 20, …, 640 ms).
    assert_eq!(
        d.dev.ue_ul_outage(1, ms(10_000.0)),
        Some(Duration::from_millis(10_000 - 650))
    );
}

#[test]
fn without_dsr_trans_max_a_hopeless_uplink_sends_srs_for_ever() {
    let mut d = Driver::new(device(&[HOPELESS], |c| {
        standard(c);
        c.ue_mac.dsr_trans_max = None;
    }));
    d.send(ms(2.5), 1, ack(1, 49152, 1401));
    d.run_until(ms(10_000.0));
    let mac = d.dev.ue_mac_counters(1).unwrap();
    assert_eq!(mac.sr_tx, 1000);
    assert_eq!(d.dev.ue_counters(1).unwrap().rlf, 0);
}

/// The UE starts out of coverage and comes close after 3 s: the radio link fails, and once
/// back in coverage re-establishment succeeds and both directions resume; downlink AM SDUs
/// caught in RLC by the failure are resent by PDCP (TS 36.323 §5.2.1.1), each delivered once.
#[test]
fn reestablishment_resumes_the_uplink_and_resends_undelivered_sdus() {
    let mut r: RadioEnvironment = radio(&[], |_| {});
    let m = Mobility::route(Vec3::new(HOPELESS, 0.0, 1.5))
        .pause(Duration::from_secs(3))
        .move_to(Vec3::new(NEAR, 0.0, 1.5), 1e6)
        .build();
    r.add_ue(1, m, 1);
    let mut cfg = RanConfig::lte(r.carrier().slot);
    standard(&mut cfg);
    let mut dev = RanDevice::new(cfg, r, ENB);
    dev.add_ue(1, 1 as NodeId, ue_addr(1));
    let mut d = Driver::new(dev);
    // Uplink: an ACK every 100 ms; downlink: a segment every 50 ms, all through the outage.
    let mut ul = Vec::new();
    for k in 0..50u32 {
        let p = ack(1, 49152, 1401 + k);
        ul.push(p);
        d.send(ms(2.5 + 100.0 * k as f64), 1, p);
    }
    let mut dl_sent = Vec::new();
    for k in 0..100u32 {
        let p = dl(1, 49152, 1 + 1400 * k);
        dl_sent.push(p);
        d.send(ms(1.0 + 50.0 * k as f64), ENB, p);
    }
    d.run_until(ms(8_000.0));
    let c = d.dev.ue_counters(1).unwrap();
    let ra = d.dev.ue_ra_counters(1).unwrap();
    assert_eq!(c.rlf, 1, "{c:?}");
    assert_eq!(c.reestablishments, 1, "{c:?} {ra:?}");
    assert!(ra.successes >= 1);
    // Every uplink packet reaches the eNB after the re-establishment (none is lost: those in
    // the UE's buffer waited, those in RLC were resent), in order.
    let got: Vec<_> = d.to_node(ENB).into_iter().map(|(_, p)| p).collect();
    assert_eq!(got, ul);
    // Downlink: every segment exactly once.
    let dl_got: Vec<_> = d.to_node(1).into_iter().map(|(_, p)| p).collect();
    let seqs: HashSet<u32> = dl_got.iter().map(|p| p.as_tcp().unwrap().seq).collect();
    assert_eq!(dl_got.len(), dl_sent.len(), "no duplicate, none lost");
    assert_eq!(seqs.len(), dl_sent.len());
    // The uplink came back within the search delay + one random access after 3 s.
    let outage = d.dev.ue_ul_outage(1, ms(8_000.0)).unwrap();
    assert!(outage > Duration::from_millis(2000), "{outage:?}");
    assert!(outage < Duration::from_millis(3000), "{outage:?}");
}
