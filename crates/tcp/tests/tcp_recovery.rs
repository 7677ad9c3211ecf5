//! Loss recovery at the endpoint with exact segments at exact times: Proportional Rate
//! Reduction (RFC 6937 / RFC 9937) on RFC 6937's own examples, and RACK-TLP (RFC 8985): the
//! reordering window, a lost retransmission detected without an RTO, and the tail loss probe.

mod common;
use common::*;
use rantcp_core::Time;
use rantcp_tcp::{CwndRules, Endpoint};
use rantcp_wire::Packet;

fn ack(c: &mut Endpoint, t: Time, off: u32, sack: &[(u32, u32)]) {
    let (ip, h) = server_ack(off, W, sack);
    c.handle_segment(t, &ip, &h, 0);
}

fn offs(v: &[Packet]) -> Vec<u32> {
    v.iter().map(coff).collect()
}

const W: u16 = 62500; // 1 MB >> 4

/// RFC 6937 §3.1's set-up: cwnd = FlightSize = pipe = 20 segments (MSS 1000), ssthresh 10 at
/// recovery (Linux's cwnd-based rule gives exactly cwnd / 2), PRR on, RFC 6675 loss detection.
fn prr_sender() -> Endpoint {
    let mut ccfg = cfg(true);
    ccfg.initial_cwnd_segments = 20;
    ccfg.prr = true;
    ccfg.cwnd_rules = CwndRules::Linux;
    let (mut c, _s) = established(ccfg, cfg(true));
    ack(&mut c, ms(30), 0, &[]);
    c.send(100_000);
    assert_eq!(drain(&mut c, ms(40)).len(), 20);
    c
}

#[test]
fn test_prr_single_loss_sends_one_segment_per_two_acks() {
    // Segment 0 is lost; the SACKs for segments 1..19 arrive at 61..79 ms.
    let mut c = prr_sender();
    let mut sent = Vec::new();
    for k in 1..=19u32 {
        let t = ms(60 + k as u64);
        ack(&mut c, t, 0, &[(1000, 1000 * (k + 1))]);
        let v = drain(&mut c, t);
        assert!(v.len() <= 1, "ACK {k}: {:?}", offs(&v));
        sent.push(v.first().map(coff));
        if k == 3 {
            // RFC 6937 §3: ssthresh = 10 segments, RecoverFS = SND.NXT − SND.UNA less what was
            // SACKed before this ACK = 22 − 2 (RFC 9937 §6.1).
            let i = c.info();
            assert_eq!((i.ssthresh, i.in_recovery), (10_000, true));
        }
    }
    // ACKs 1-2: a SACKed segment leaves pipe, one new segment each (Limited Transmit in
    // effect). ACK 3: fast retransmission. Then PRR: ⌈prr_delivered · 10 / 20⌉ − prr_out, one
    // new segment on every second ACK, the last at ACK 17; pipe ends at ssthresh.
    let n = |o: u32| Some(o);
    assert_eq!(
        sent,
        vec![
            n(20_000),
            n(21_000),
            n(0),
            None,
            n(22_000),
            None,
            n(23_000),
            None,
            n(24_000),
            None,
            n(25_000),
            None,
            n(26_000),
            None,
            n(27_000),
            None,
            n(28_000),
            None,
            None
        ]
    );
    assert_eq!(c.info().bytes_in_flight, 10_000);
    assert_eq!(c.stats().retrans_segments, 1);
    // The retransmission and everything after it arrive: recovery ends, cwnd = ssthresh.
    ack(&mut c, ms(100), 29_000, &[]);
    let i = c.info();
    assert_eq!((i.in_recovery, i.cwnd, i.ssthresh), (false, 10_000, 10_000));
    assert_eq!(drain(&mut c, ms(100)).len(), 10);
}

#[test]
fn test_prr_burst_loss_reduction_bound_rebuilds_pipe() {
    // Segments 0..14 lost; SACKs for 15..19 arrive. ACKs 1-2 (segments 15, 16) let out one new
    // segment each; ACK 3 marks all 15 lost: pipe = 22 − 3 − 15 = 4 ≤ ssthresh, so PRR's
    // reduction bound applies: max(prr_delivered − prr_out, DeliveredData), + 1 segment on a
    // safe ACK (RFC 9937; duplicate ACKs are not). One retransmission per ACK (RFC 6937's
    // PRR-CRB column: R R R), in order from segment 0.
    let mut c = prr_sender();
    let mut sent = Vec::new();
    for (i, k) in (15..=19u32).enumerate() {
        let t = ms(61 + i as u64);
        ack(&mut c, t, 0, &[(15_000, 1000 * (k + 1))]);
        sent.push(offs(&drain(&mut c, t)));
    }
    assert_eq!(
        sent,
        vec![vec![20_000], vec![21_000], vec![0], vec![1000], vec![2000]]
    );
    // The retransmission of segment 0 is acknowledged: a safe ACK (SND.UNA advances, no new
    // loss): limit = max(prr_delivered − prr_out, DeliveredData) + 1 segment = 2.
    ack(&mut c, ms(85), 1000, &[(15_000, 20_000)]);
    assert_eq!(offs(&drain(&mut c, ms(85))), vec![3000, 4000]);
}
