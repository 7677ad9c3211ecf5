//! The dissertation's TCP RST tracker (seed 003 §4.5, `rantcp_functions::rst_tracker`) on a
//! real `RanDevice` (issue 14, "What must be shown"): a UE's uplink RST purges exactly its
//! flow's queued downlink packets and no other flow's; the flow's packets arriving in the hold
//! time are dropped and counted; after the hold, and after a new SYN on the same 5-tuple, the
//! flow's packets go through unharmed. Radio of `support`: UE 1 at 100 m, about 3.2 downlink
//! packets of 1442 PDCP bytes per 1 ms slot.

mod support;

use rantcp_core::Duration;
use rantcp_functions::rst_tracker::RstTracker;
use rantcp_wire::{Packet, TcpFlags};
use support::*;

fn port(p: &Packet) -> u16 {
    p.as_tcp().map_or(0, |t| t.dst_port)
}
fn seq(p: &Packet) -> u32 {
    p.as_tcp().unwrap().seq
}
fn from_ue(port: u16, flags: TcpFlags) -> Packet {
    tcp((ue_addr(1), port), (SERVER, 5201), 1, 0, flags, 0)
}

#[test]
fn a_ue_rst_purges_its_flow_drops_arrivals_for_the_hold_then_lets_the_5_tuple_through() {
    let mut dev = device(&[100.0], |c| c.ideal_bsr = true);
    dev.add_function(Box::new(RstTracker::new(Duration::from_millis(500))));
    let mut d = Driver::new(dev);
    // 40 packets at 0.5 ms, alternating the UE's ports 80 and 81: about 13 ms of air time.
    for k in 0..40u32 {
        d.send(ms(0.5), ENB, dl(1, 80 + (k % 2) as u16, k));
    }
    // The client abandons port 80's connection: its RST reaches the eNB a few ms later.
    d.send(ms(1.0), 1, from_ue(80, TcpFlags::RST));
    d.run_until(ms(100.0));
    let rst_at = d.to_node(ENB)[0].0;
    assert!(rst_at > ms(1.0) && rst_at < ms(20.0), "{rst_at:?}");
    let down = d.to_node(1);
    let got = |p: u16| -> Vec<u32> {
        down.iter()
            .filter(|x| port(&x.1) == p)
            .map(|x| seq(&x.1))
            .collect()
    };
    // Port 81 loses nothing, in order.
    assert_eq!(got(81), (0..40).filter(|k| k % 2 == 1).collect::<Vec<_>>());
    // Port 80: a prefix of its packets got out before the RST (the last one possibly already
    // begun by RLC), the rest was purged from the bearer.
    let p80 = got(80);
    let want: Vec<u32> = (0..40).filter(|k| k % 2 == 0).take(p80.len()).collect();
    assert_eq!(p80, want);
    assert!(
        p80.len() < 20,
        "something of port 80 was still queued at the RST"
    );
    let purged = 20 - p80.len() as u64;
    // Nothing of port 80 reaches the UE after the RST plus one slot (a begun SDU finishes).
    let last80 = down
        .iter()
        .filter(|x| port(&x.1) == 80)
        .map(|x| x.0)
        .max()
        .unwrap();
    assert!(
        last80 <= rst_at + Duration::from_millis(2),
        "{last80:?} vs {rst_at:?}"
    );
    let r = &d.dev.function_reports()[0].1;
    assert_eq!(r["rsts_seen"], 1);
    assert_eq!(r["purged_packets"], purged);
    assert_eq!(r["purged_bytes"], purged * 1440);
    assert_eq!(r["purged_rlc_sdu_bytes"], purged * 1442);
    assert_eq!(r["dropped_packets"], 0);

    // In the hold: port 80's arrivals are dropped and counted, port 81's pass.
    for k in 0..3u32 {
        d.send(ms(200.0), ENB, dl(1, 80, 100 + k));
    }
    d.send(ms(200.0), ENB, dl(1, 81, 100));
    d.run_until(ms(300.0));
    let late: Vec<(u16, u32)> = d.to_node(1)[down.len()..]
        .iter()
        .map(|x| (port(&x.1), seq(&x.1)))
        .collect();
    assert_eq!(late, vec![(81, 100)]);
    let r = &d.dev.function_reports()[0].1;
    assert_eq!(
        (r["dropped_packets"].as_u64(), r["dropped_bytes"].as_u64()),
        (Some(3), Some(3 * 1440))
    );
    assert_eq!(r["rsts_avoided"], purged + 3);
    assert_eq!(r["dropped"], 3, "the chain counts the drops too");

    // After the hold (ends at rst_at + 500 ms) the same 5-tuple is not harmed.
    let n = d.to_node(1).len();
    for k in 0..4u32 {
        d.send(ms(700.0), ENB, dl(1, 80, 200 + k));
    }
    d.run_until(ms(800.0));
    let after: Vec<u32> = d.to_node(1)[n..].iter().map(|x| seq(&x.1)).collect();
    assert_eq!(after, vec![200, 201, 202, 203]);

    // A second RST, then a new connection (SYN) from the same port within the hold: the hold
    // ends at the SYN and the new connection's packets pass.
    d.send(ms(800.0), 1, from_ue(80, TcpFlags::RST));
    d.send(ms(850.0), 1, from_ue(80, TcpFlags::SYN));
    d.run_until(ms(900.0));
    let n = d.to_node(1).len();
    d.send(ms(900.0), ENB, dl(1, 80, 300));
    d.run_until(ms(950.0));
    let r = &d.dev.function_reports()[0].1;
    assert_eq!(
        (r["rsts_seen"].as_u64(), r["holds_released_by_syn"].as_u64()),
        (Some(2), Some(1))
    );
    assert_eq!(
        d.to_node(1)[n..]
            .iter()
            .map(|x| seq(&x.1))
            .collect::<Vec<_>>(),
        vec![300]
    );
}
