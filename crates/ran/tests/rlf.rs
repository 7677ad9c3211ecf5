//! SR give-up, random access and radio link failure through the whole device
//! ([`RanDevice`] with the deterministic radio of `support`): TS 36.321 §5.4.4 (dsr-TransMax),
//! §5.1 (random access), TS 36.331 §5.3.11.3 / §5.3.7 (RLF, re-establishment).

mod support;

use rantcp_core::Duration;
use rantcp_ran::cell::rlm::RlmConfig;
use rantcp_ran::cell::RanConfig;
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

/// [`standard`] with radio link monitoring on, at its defaults.
fn standard_rlm(c: &mut RanConfig) {
    standard(c);
    c.rlm = Some(RlmConfig::default());
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
    let mut d = Driver::new(device_over(r, 1, standard));
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

/// The nearest distance (m, 50 m steps) at which the support radio's downlink SINR is below
/// `db`.
fn distance_below(db: f64) -> f64 {
    (10..200)
        .map(|k| 50.0 * k as f64)
        .find(|&d| radio(&[d], |_| {}).sinr_db(1, ms(0.0)) < db)
        .expect("some distance is that bad")
}

/// A UE at 100 m that jumps to `bad` m at 1 s, stays for `dip` ms and comes back, with a
/// downlink datagram every 10 ms (so the scheduler keeps its channel state current), radio
/// link monitoring on with the defaults (Qout −8 dB, Qin −6 dB, N310 1, N311 1, T310
/// 200 ms). Its counters at 4 s.
fn dip_run(bad: f64, dip: f64) -> rantcp_ran::cell::UeCounters {
    let mut r: RadioEnvironment = radio(&[], |_| {});
    let m = Mobility::route(Vec3::new(NEAR, 0.0, 1.5))
        .pause(Duration::from_secs(1))
        .move_to(Vec3::new(bad, 0.0, 1.5), 1e9)
        .pause(Duration::from_nanos((dip * 1e6) as u64))
        .move_to(Vec3::new(NEAR, 0.0, 1.5), 1e9)
        .build();
    r.add_ue(1, m, 1);
    let mut d = Driver::new(device_over(r, 1, standard_rlm));
    for k in 0..400u32 {
        d.send(
            ms(0.5 + 10.0 * k as f64),
            ENB,
            udp(SERVER, ue_addr(1), 5000, 200),
        );
    }
    d.run_until(ms(4_000.0));
    d.dev.ue_counters(1).unwrap()
}

/// Radio link monitoring (TS 36.133 §7.6, TS 36.331 §5.3.11): a downlink at −9 dB (2150 m)
/// against Qout −8 dB for 700 ms gives an out-of-sync indication once the
/// 200 ms mean is below Qout (once all 20 frames are bad, 200 ms), T310 (200 ms) expires: one
/// radio link failure, and
/// re-establishment once back. A dip of 300 ms ends while T310 runs: the 100 ms mean is back
/// above Qin within 20 ms, the in-sync indication stops T310, no failure.
#[test]
fn a_downlink_below_qout_beyond_t310_is_a_radio_link_failure_a_short_dip_is_not() {
    let bad = distance_below(-9.0);
    let c = dip_run(bad, 700.0);
    assert_eq!(
        (c.rlf, c.rlf_rlm, c.rlf_rlc_max_retx),
        (1, 1, 0),
        "{bad} m: {c:?}"
    );
    assert_eq!(c.reestablishments, 1, "{c:?}");
    let c = dip_run(bad, 300.0);
    assert_eq!((c.rlf, c.rlf_rlm), (0, 0), "{bad} m: {c:?}");
    // 700 ms at a downlink just above Qin (−6 dB, here 50 m closer): never out of sync.
    let c = dip_run(distance_below(-6.0) - 50.0, 700.0);
    assert_eq!(c.rlf, 0, "{c:?}");
}

/// TS 36.331 §5.3.11.3: the UE's RLC reaching maxRetxThreshold (TS 36.322 §5.2.1) is a radio
/// link failure. An uplink whose HARQ never retransmits (every lost block is left to RLC) at
/// maxRetxThreshold 1: the second retransmission of a PDU is the indication. Without the RLF
/// the same indications are only counted.
#[test]
fn rlc_at_max_retx_threshold_is_a_radio_link_failure() {
    let run = |rlf: bool| {
        let mut d = Driver::new(device(&[distance_below(0.0)], |c| {
            standard(c);
            c.ul_harq_max_retx = 0;
            c.rlc.max_retx_threshold = 1;
            c.rlf_on_rlc_max_retx = rlf;
        }));
        for k in 0..1000u32 {
            d.send(
                ms(0.5 + 5.0 * k as f64),
                1,
                udp(ue_addr(1), SERVER, 5000, 600),
            );
        }
        d.run_until(ms(6_000.0));
        let c = d.dev.ue_counters(1).unwrap();
        let n = d.dev.ue_rlc_counters(1).unwrap().1.max_retx_reached;
        (c, n)
    };
    let (c, n) = run(false);
    assert!(n >= 1, "no PDU reached maxRetxThreshold: {c:?}");
    assert_eq!(c.rlf, 0, "{c:?}");
    let (c, n) = run(true);
    assert!(n >= 1);
    assert!(c.rlf_rlc_max_retx >= 1, "{n} indications: {c:?}");
    assert_eq!(c.rlf, c.rlf_rlc_max_retx + c.rlf_rlm, "{c:?}");
    assert!(c.reestablishments >= 1, "{c:?}");
}

/// Radio link monitoring of a UE that is never scheduled (TS 36.133 §7.6: the UE monitors the
/// downlink whether or not it has data): UE 1, silent, jumps at 1 s from 100 m to where the
/// downlink is at −12 dB and stays; UE 2 at 100 m receives a datagram every 10 ms, so the
/// device has events. The monitor sees UE 1's channel at each sample, out of sync, T310, radio
/// link failure. (With the view of the channel as of UE 1's last evaluation, 100 m, it stayed
/// in sync for ever.)
#[test]
fn a_silent_ue_that_drives_out_of_coverage_fails_its_radio_link() {
    let bad = distance_below(-12.0);
    let mut r: RadioEnvironment = radio(&[], |_| {});
    let m = Mobility::route(Vec3::new(NEAR, 0.0, 1.5))
        .pause(Duration::from_secs(1))
        .move_to(Vec3::new(bad, 0.0, 1.5), 1e9)
        .build();
    r.add_ue(1, m, 1);
    r.add_ue(2, Mobility::fixed(Vec3::new(0.0, NEAR, 1.5)), 1);
    let mut d = Driver::new(device_over(r, 2, standard_rlm));
    for k in 0..300u32 {
        d.send(
            ms(0.5 + 10.0 * k as f64),
            ENB,
            udp(SERVER, ue_addr(2), 5000, 200),
        );
    }
    d.run_until(ms(3_000.0));
    let c = d.dev.ue_counters(1).unwrap();
    assert_eq!(
        (c.dl_tb_new, c.ul_tb_new),
        (0, 0),
        "UE 1 never scheduled: {c:?}"
    );
    assert_eq!((c.rlf, c.rlf_rlm), (1, 1), "{bad} m: {c:?}");
    assert_eq!(d.dev.ue_counters(2).unwrap().rlf, 0);
}

/// Radio link monitoring in a cell where nobody has data (TS 36.133 §7.6.2.1: the UE
/// evaluates its downlink every radio frame whether or not it is scheduled): UE 1, alone and
/// silent, jumps at 1 s from 100 m to where the downlink is at −12 dB. The 200 ms mean falls
/// below Qout by 1.2 s, T310 (200 ms) then runs out: the failure is declared by 1.45 s
/// without any packet to wake the device (before, it waited for the next packet, so never
/// in this run), and not before 1.15 s.
#[test]
fn a_ue_in_a_silent_cell_fails_its_radio_link_when_t310_expires() {
    let bad = distance_below(-12.0);
    let mut r: RadioEnvironment = radio(&[], |_| {});
    let m = Mobility::route(Vec3::new(NEAR, 0.0, 1.5))
        .pause(Duration::from_secs(1))
        .move_to(Vec3::new(bad, 0.0, 1.5), 1e9)
        .build();
    r.add_ue(1, m, 1);
    let mut d = Driver::new(device_over(r, 1, standard_rlm));
    d.run_until(ms(1_150.0));
    assert_eq!(d.dev.ue_counters(1).unwrap().rlf, 0, "{bad} m");
    d.run_until(ms(1_450.0));
    let c = d.dev.ue_counters(1).unwrap();
    assert_eq!((c.rlf, c.rlf_rlm), (1, 1), "{bad} m: {c:?}");
    assert_eq!((c.dl_tb_new, c.ul_tb_new), (0, 0), "silent: {c:?}");
}
