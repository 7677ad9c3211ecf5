//! `RanDevice` on its own against the deterministic radio of `support`: exact delivery times
//! of downlink and uplink packets through the whole layer-2 path (PDCP, RLC AM, MAC
//! scheduling, HARQ, SR/BSR), checked against the timing rules of the device's module docs
//! (LTE FDD defaults: 1 ms slots, decoded DL block at the UE's RLC one slot plus 1 ms UE
//! processing after its slot; UL grant in slot n used in slot n + 4, decoded at the eNB's RLC
//! one slot plus 1 ms eNB processing later; SR every 10 ms).

mod support;

use rantcp_core::Time;
use rantcp_nf::Device;
use support::*;

/// A UE 100 m from the site: SINR 37.9 dB, CQI 15, block errors negligible.
const NEAR: f64 = 100.0;

#[test]
fn downlink_packets_arrive_one_slot_plus_processing_after_their_slot() {
    let mut d = Driver::new(device(&[NEAR], |_| {}));
    let sent = [dl(1, 49152, 1), dl(1, 49152, 1401), dl(1, 49152, 2801)];
    d.send(ms(0.3), ENB, sent[0]);
    d.send(ms(0.4), ENB, sent[1]);
    // While the device sleeps (no backlog after the first block), a packet at 5.2 ms waits
    // for the slot at 6 ms.
    d.send(ms(5.2), ENB, sent[2]);
    d.run_until(ms(20.0));
    let got = d.to_node(1);
    // Slot 1 ms carries the first two (one 4587-byte block at CQI 15 on 50 PRBs holds both):
    // at the UE's RLC at 1 + 1 + 1 = 3 ms. The third: slot 6 ms → 8 ms.
    assert_eq!(
        got,
        vec![(ms(3.0), sent[0]), (ms(3.0), sent[1]), (ms(8.0), sent[2])],
        "whole packets, every header field kept"
    );
    let c = d.dev.ue_counters(1).unwrap();
    assert_eq!((c.dl_tb_new, c.dl_tb_retx, c.dl_tb_failed), (2, 0, 0));
    assert_eq!((c.dl_packets_in, c.dl_packets_delivered), (3, 3));
    assert_eq!(c.dl_bytes_delivered, 3 * 1440);
    assert!(d.to_node(ENB).is_empty(), "nothing goes up");
}

#[test]
fn downlink_backlog_larger_than_a_block_drains_one_block_per_slot() {
    let mut d = Driver::new(device(&[NEAR], |_| {}));
    // 10 packets of 1442 bytes after PDCP: 3.18 per 4584-byte RLC opportunity.
    for k in 0..10u32 {
        d.send(ms(0.5), ENB, dl(1, 49152, 1 + 1400 * k));
    }
    d.run_until(ms(30.0));
    let times: Vec<Time> = d.to_node(1).iter().map(|x| x.0).collect();
    // Slot 1 ms carries packets 0–2 whole and the start of 3; slot 2 ms the rest of 3, 4, 5
    // and the start of 6; slot 3 ms 6, 7, 8 and part of 9; slot 4 ms the rest.
    let want: Vec<Time> = [3.0, 3.0, 3.0, 4.0, 4.0, 4.0, 5.0, 5.0, 5.0, 6.0]
        .iter()
        .map(|&x| ms(x))
        .collect();
    assert_eq!(times, want);
    let seqs: Vec<u32> = d
        .to_node(1)
        .iter()
        .map(|x| x.1.as_tcp().unwrap().seq)
        .collect();
    assert_eq!(
        seqs,
        (0..10).map(|k| 1 + 1400 * k).collect::<Vec<_>>(),
        "in order"
    );
    assert_eq!(d.dev.ue_counters(1).unwrap().dl_tb_new, 4);
}

#[test]
fn uplink_with_ideal_reporting_is_granted_at_the_next_slot_and_sent_k2_later() {
    let mut d = Driver::new(device(&[NEAR], |c| c.ideal_bsr = true));
    let p = ack(1, 49152, 1401);
    d.send(ms(2.5), 1, p);
    d.run_until(ms(30.0));
    // Grant in slot 3 ms for slot 7 ms; decoded at the eNB's RLC at 7 + 1 + 1 = 9 ms.
    assert_eq!(d.to_node(ENB), vec![(ms(9.0), p)]);
    let c = d.dev.ue_counters(1).unwrap();
    assert_eq!(
        (c.ul_packets_in, c.ul_acks_in, c.ul_acks_delivered),
        (1, 1, 1)
    );
    assert_eq!((c.ul_grants, c.ul_tb_new, c.sr_rx), (1, 1, 0));
    assert!(
        !d.dev.ue_ul_buffer(1).unwrap().is_indexed(),
        "no function: no flow index"
    );
}

#[test]
fn uplink_with_standard_reporting_waits_for_the_sr_occasion() {
    // The SR grant is big enough for the whole packet with its BSR.
    let mut d = Driver::new(device(&[NEAR], |c| c.sr_grant_bytes = 1000));
    let p = ack(1, 49152, 1401);
    d.send(ms(2.5), 1, p);
    d.run_until(ms(40.0));
    // Regular BSR at 2.5 ms → SR at the next occasion, 10 ms (period 10 ms, offset 0; TS
    // 36.321 §5.4.4) → grant in slot 10 for slot 14 → at the eNB's RLC at 16 ms.
    assert_eq!(d.to_node(ENB), vec![(ms(16.0), p)]);
    let c = d.dev.ue_counters(1).unwrap();
    assert_eq!((c.sr_rx, c.ul_grants, c.bsr_rx), (1, 1, 1));
    let mac = d.dev.ue_mac_counters(1).unwrap();
    assert_eq!((mac.sr_tx, mac.bsr_regular), (1, 1));
}

#[test]
fn an_idle_device_sleeps_and_unknown_destinations_are_counted() {
    let mut d = Driver::new(device(&[NEAR], |_| {}));
    assert_eq!(d.dev.poll_timeout(), None);
    d.send(ms(1.0), ENB, dl(7, 80, 1));
    d.run_until(ms(10.0));
    assert_eq!(d.dev.unknown_dst_drops(), 1);
    assert_eq!(d.dev.slots_run(), 0);
    assert_eq!(d.dev.poll_timeout(), None);
}

#[test]
fn a_packet_at_a_slot_boundary_after_that_slot_ran_waits_for_the_next() {
    let mut d = Driver::new(device(&[NEAR], |_| {}));
    d.send(ms(0.5), ENB, dl(1, 49152, 1));
    // 1 ms: the slot runs (timeout first), then this packet arrives at the same instant.
    d.run_until(ms(1.0));
    assert_eq!(d.dev.slots_run(), 1);
    d.send(ms(1.0), ENB, dl(1, 49152, 1401));
    d.run_until(ms(5.0));
    let times: Vec<Time> = d.to_node(1).iter().map(|x| x.0).collect();
    assert_eq!(times, vec![ms(3.0), ms(4.0)]);
    assert_eq!(d.dev.slots_run(), 2, "one slot per boundary: 1 ms and 2 ms");
}
