//! The whole uplink layer-2 chain between a UE and an eNB with stub PHY and nodes:
//! uplink IP buffer → SR/BSR → uplink scheduler → grant → UE MAC multiplexing → PDCP →
//! RLC AM → lossy transport blocks → eNB RLC AM (STATUS back on the downlink) → in-order
//! delivery. The entities' contracts under stress (and the Figure 6 BSR stall); the device
//! that wires them for runs is `rantcp_ran::cell::RanDevice` (tests/ran_device.rs).

use rantcp_core::{Duration, Time};
use rantcp_nf::{UlBuffer, UlBufferCounters};
use rantcp_ran::mac::sched::{SchedConfig, SchedUe, SchedulerKind};
use rantcp_ran::mac::ul::*;
use rantcp_ran::mac::{TxOpportunity, UlGrant};
use rantcp_ran::pdcp::{PdcpConfig, PdcpEntity};
use rantcp_ran::rlc::{RlcConfig, RlcEntity, RlcPdu, RlcSdu};
use rantcp_wire::{Ipv4Header, Packet, UdpHeader};
use std::net::Ipv4Addr;

/// An uplink IP packet of `bytes` (UDP: 28 header bytes).
fn packet(bytes: u32) -> Packet {
    let ip = Ipv4Header::new(Ipv4Addr::new(10, 1, 0, 1), Ipv4Addr::new(10, 0, 0, 1));
    Packet::udp(
        ip,
        UdpHeader {
            src_port: 49152,
            dst_port: 5201,
        },
        bytes - 28,
    )
}

fn run(enhanced: bool, lose_every: u64) -> (Vec<u64>, UeMacCounters, UlBufferCounters, u64) {
    let rnti = 9;
    let mut mcfg = UeMacConfig::lte_default(rnti);
    mcfg.bsr_enhancement = enhanced;
    let mut mac = UeUlMac::new(mcfg);
    let mut queue = UlBuffer::new(1_000_000);
    let mut pdcp = PdcpEntity::new(PdcpConfig::default());
    let mut ue_rlc = RlcEntity::new(RlcConfig::am_lte(rnti, 3));
    let mut enb_rlc = RlcEntity::new(RlcConfig::am_lte(rnti, 3));
    let mut enb = UlScheduler::new(
        SchedConfig {
            kind: SchedulerKind::ProportionalFair {
                time_constant: Duration::from_millis(100),
            },
            n_prb: 25,
            slot: Duration::from_millis(1),
            min_prb: 1,
        },
        60,
    );
    let mut grants_due: Vec<(Time, UlGrant)> = Vec::new();
    let mut dl_air: Vec<(Time, RlcPdu)> = Vec::new();
    let mut delivered = Vec::new();
    let mut tx = UlTransmission::default();
    let mut pdus = Vec::new();
    let mut grants = Vec::new();
    let (mut next_id, mut n_tb) = (0u64, 0u64);
    let n_packets = 600u64;
    let mut t_end = 0;
    for tti in 0..20_000u64 {
        let now = Time::from_millis(tti);
        // Traffic: a 52-byte ACK every 2 ms and a 1400-byte segment every 10 ms.
        if next_id < n_packets && (tti % 2 == 0 || tti % 10 == 5) {
            let bytes = if tti % 10 == 5 { 1400 } else { 52 };
            assert_eq!(queue.push(now, packet(bytes)), Some(next_id));
            next_id += 1;
        }
        // Data available for transmission: FIFO bytes + PDCP (2) and RLC (≈2) headers + RLC backlog.
        let avail = |q: &UlBuffer, r: &RlcEntity| {
            q.bytes() + 4 * q.len() as u64 + r.buffer_status(now).total_bytes()
        };
        mac.handle_buffer_status(now, 3, avail(&queue, &ue_rlc));
        for e in [&mut ue_rlc, &mut enb_rlc] {
            if e.poll_timeout().is_some_and(|t| t <= now) {
                e.handle_timeout(now);
            }
        }
        if mac.poll_timeout().is_some_and(|t| t <= now) {
            mac.handle_timeout(now);
        }
        if mac.poll_sr() {
            enb.handle_sr(rnti);
        }
        // STATUS PDUs from the eNB arrive on the downlink.
        dl_air.retain(|(at, p)| {
            if *at <= now {
                ue_rlc.handle_pdu(now, p);
                false
            } else {
                true
            }
        });
        // Uplink transmissions granted for this TTI.
        while let Some(i) = grants_due.iter().position(|(t, _)| *t == now) {
            let (_, g) = grants_due.remove(i);
            mac.handle_ul_grant_into(now, g, &mut tx);
            pdus.clear();
            for op in tx.opportunities.clone() {
                // Move enough packets from the buffer into PDCP/RLC to fill the opportunity.
                let want =
                    (op.bytes as u64).saturating_sub(ue_rlc.buffer_status(now).total_bytes());
                let mut taken = 0;
                while taken < want {
                    let Some(e) = queue.pop_front() else { break };
                    taken += e.bytes() as u64;
                    let pdu = pdcp.handle_sdu(e.id, e.bytes());
                    assert!(ue_rlc.handle_sdu(
                        now,
                        RlcSdu {
                            sdu_id: pdu.sdu_id,
                            bytes: pdu.bytes
                        }
                    ));
                }
                ue_rlc.handle_tx_opportunity(now, TxOpportunity { ..op }, &mut pdus);
                assert!(pdus.iter().map(|p| p.bytes).sum::<u32>() <= op.bytes);
            }
            n_tb += 1;
            let lost = lose_every > 0 && n_tb % lose_every == 0;
            if !lost {
                for p in &pdus {
                    enb_rlc.handle_pdu(now, p);
                }
                if let Some(b) = &tx.bsr {
                    enb.handle_bsr(rnti, b);
                }
            }
            mac.handle_buffer_status(now, 3, avail(&queue, &ue_rlc));
        }
        while let Some(id) = enb_rlc.pop_delivered() {
            delivered.push(id);
        }
        // eNB: downlink STATUS opportunity, uplink scheduling (grant used 4 TTIs later).
        if enb_rlc.buffer_status(now).status_pdu_bytes > 0 {
            for p in enb_rlc.tx_opportunity(now, 100) {
                dl_air.push((now + Duration::from_millis(2), p));
            }
        }
        grants.clear();
        let ues = [SchedUe {
            rnti,
            bytes_per_prb: 40.0,
            backlog_bytes: 0,
            harq_retx: None,
            free_harq: Some(0),
            max_prb: u16::MAX,
            min_prb: 0,
        }];
        enb.schedule_with(
            now,
            &ues,
            1,
            rantcp_ran::mac::sched::Scheduler::linear_tbs,
            &mut grants,
        );
        for g in &grants {
            grants_due.push((now + Duration::from_millis(4), *g));
        }
        if delivered.len() as u64 == n_packets && t_end == 0 {
            t_end = tti;
        }
        if t_end > 0 && tti > t_end + 100 {
            break;
        }
    }
    (delivered, mac.counters().clone(), queue.counters, t_end)
}

#[test]
fn test_ul_chain_delivers_everything_in_order() {
    for (enh, lose) in [(false, 0), (true, 0), (false, 6), (true, 6)] {
        let (got, c, q, t_end) = run(enh, lose);
        eprintln!("enhanced={enh} lose_every={lose}: done at {t_end} ms, {c:?}");
        assert_eq!(
            got,
            (0..600).collect::<Vec<_>>(),
            "enhanced={enh} lose_every={lose}"
        );
        assert!(c.sr_tx >= 1 && c.bsr_regular >= 1 && c.grants > 10);
        assert_eq!((q.arrived, q.dequeued, q.discarded), (600, 600, 0));
        if enh {
            assert!(c.bsr_enhanced >= 1);
        }
        // Traffic ends at about 1000 ms. Without losses the default procedure stalls on
        // retxBSR-Timer (Figure 6) at least once; the enhancement finishes with the traffic.
        if lose == 0 && !enh {
            assert!(t_end > 2000 && c.retx_bsr_expiries >= 1, "{t_end}");
        }
        if lose == 0 && enh {
            assert!(t_end < 1020 && c.retx_bsr_expiries == 0, "{t_end}");
        }
    }
}
