//! The downlink layer-2 chain of one cell with stub PHY: RLC AM per UE → buffer status →
//! PF scheduler (HARQ retransmissions first, PDCCH budget shared with uplink grants) → TB split
//! among logical channels → HARQ processes holding the RLC PDUs → decode failures (BLER, and
//! residual losses after the last retransmission) → UE RLC AM, STATUS back on the uplink.
//! Every SDU arrives exactly once, in order. The entities' contracts under stress; the
//! device that wires them for runs is `rantcp_ran::cell::RanDevice` (tests/ran_device.rs).

use rantcp_core::{Duration, Rng, Time};
use rantcp_ran::mac::harq::{HarqConfig, HarqEntity, HarqOutcome};
use rantcp_ran::mac::mux::{dl_tx_opportunities, dl_tx_opportunities_nr};
use rantcp_ran::mac::sched::{PdcchBudget, SchedConfig, SchedUe, Scheduler, SchedulerKind};
use rantcp_ran::mac::{HarqFeedback, TxOpportunity};
use rantcp_ran::rlc::{RlcConfig, RlcEntity, RlcPdu, RlcSdu};

struct Ue {
    enb_rlc: RlcEntity,
    ue_rlc: RlcEntity,
    harq: HarqEntity<Vec<RlcPdu>>,
    delivered: Vec<u64>,
    next_sdu: u64,
    bpp: f64,
}

fn run(nr: bool, bler: f64, seed: u64) -> (Vec<Ue>, u64) {
    let n_ue = 6;
    let n_sdu = 800u64;
    let slot = Duration::from_millis(1);
    let hcfg = HarqConfig::with_slots(8, 4, slot, 1); // one retransmission only: residual losses
    let mut ues: Vec<Ue> = (0..n_ue)
        .map(|i| {
            let cfg = if nr {
                RlcConfig::am_nr(i as u16, 4)
            } else {
                RlcConfig::am_lte(i as u16, 3)
            };
            Ue {
                enb_rlc: RlcEntity::new(cfg.clone()),
                ue_rlc: RlcEntity::new(cfg),
                harq: HarqEntity::new(hcfg),
                delivered: Vec::new(),
                next_sdu: 0,
                bpp: 20.0 + 15.0 * i as f64,
            }
        })
        .collect();
    let mut sched = Scheduler::new(SchedConfig {
        kind: SchedulerKind::ProportionalFair {
            time_constant: Duration::from_millis(50),
        },
        n_prb: 50,
        slot,
        min_prb: 1,
    });
    let mut pdcch = PdcchBudget::new(4);
    let mut rng = Rng::new(seed, 3);
    let mut feedback: Vec<(Time, usize, HarqFeedback)> = Vec::new();
    let mut ul_air: Vec<(Time, usize, RlcPdu)> = Vec::new();
    let (mut inputs, mut allocs, mut ops, mut pdus) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let mut residual = 0u64;
    for t in 0..60_000u64 {
        let now = Time::from_millis(t);
        for u in ues.iter_mut() {
            // Offered load: one SDU per ms per UE until n_sdu.
            if u.next_sdu < n_sdu {
                let b = 200 + (u.next_sdu * 37 % 1300) as u32;
                assert!(u.enb_rlc.handle_sdu(
                    now,
                    RlcSdu {
                        sdu_id: u.next_sdu,
                        bytes: b
                    }
                ));
                u.next_sdu += 1;
            }
            for e in [&mut u.enb_rlc, &mut u.ue_rlc] {
                if e.poll_timeout().is_some_and(|x| x <= now) {
                    e.handle_timeout(now);
                }
            }
        }
        // HARQ feedback due now.
        let mut k = 0;
        while k < feedback.len() {
            if feedback[k].0 <= now {
                let (_, i, fb) = feedback.swap_remove(k);
                let u = &mut ues[i];
                match u.harq.handle_feedback(now, fb) {
                    HarqOutcome::Acked(pdus) => {
                        for p in &pdus {
                            u.ue_rlc.handle_pdu(now, p);
                        }
                    }
                    HarqOutcome::Failed(_) => residual += 1,
                    _ => {}
                }
            } else {
                k += 1;
            }
        }
        // Uplink STATUS PDUs (error-free uplink, 4 ms).
        ul_air.retain(|(at, i, p)| {
            if *at <= now {
                ues[*i].enb_rlc.handle_pdu(now, p);
                false
            } else {
                true
            }
        });
        for (i, u) in ues.iter_mut().enumerate() {
            while let Some(id) = u.ue_rlc.pop_delivered() {
                u.delivered.push(id);
            }
            if u.ue_rlc.buffer_status(now).total_bytes() > 0 {
                for p in u.ue_rlc.tx_opportunity(now, 200) {
                    ul_air.push((now + Duration::from_millis(4), i, p));
                }
            }
        }
        // Downlink scheduling: one PDCCH DCI per slot goes to an uplink grant.
        pdcch.reset();
        pdcch.consume(1);
        inputs.clear();
        for u in &ues {
            inputs.push(SchedUe {
                rnti: u.enb_rlc.cfg.rnti,
                bytes_per_prb: u.bpp,
                backlog_bytes: match u.enb_rlc.buffer_status(now).total_bytes() {
                    0 => 0,
                    b => b + 3, // + MAC subheader
                },
                harq_retx: u.harq.pending_retx().next(),
                free_harq: u.harq.free_process(),
                max_prb: u16::MAX,
                min_prb: 0,
            });
        }
        allocs.clear();
        sched.schedule(now, &inputs, pdcch.remaining(), &mut allocs);
        pdcch.consume(allocs.len() as u16);
        assert!(pdcch.used <= 4);
        for a in &allocs {
            let i = a.rnti as usize;
            let u = &mut ues[i];
            if a.is_retx {
                u.harq.start_retx(now, a.harq_id);
            } else {
                ops.clear();
                let bs = [u.enb_rlc.buffer_status(now)];
                if nr {
                    dl_tx_opportunities_nr(a.tb_bytes, a.rnti, a.harq_id, &bs, &mut ops);
                } else {
                    dl_tx_opportunities(a.tb_bytes, a.rnti, a.harq_id, &bs, &mut ops);
                }
                pdus.clear();
                for op in &ops {
                    u.enb_rlc
                        .handle_tx_opportunity(now, TxOpportunity { ..*op }, &mut pdus);
                }
                assert!(pdus.iter().map(|p| p.bytes).sum::<u32>() <= a.tb_bytes);
                u.harq
                    .start_new(now, a.harq_id, a.n_prb, a.tb_bytes, pdus.clone());
            }
            let ack = !rng.bernoulli(bler);
            feedback.push((
                now + hcfg.feedback_delay,
                i,
                HarqFeedback {
                    rnti: a.rnti,
                    harq_id: a.harq_id,
                    ack,
                },
            ));
        }
        if ues
            .iter()
            .all(|u| u.delivered.len() as u64 == n_sdu && u.enb_rlc.unacked_sns() == 0)
        {
            return (ues, residual);
        }
    }
    for u in &ues {
        eprintln!(
            "delivered {} unacked {} bs {:?} enb {:?} ue {:?} harq {:?} enb_to {:?} ue_to {:?}",
            u.delivered.len(),
            u.enb_rlc.unacked_sns(),
            u.enb_rlc.buffer_status(Time::from_millis(60_000)),
            u.enb_rlc.counters(),
            u.ue_rlc.counters(),
            u.harq.counters(),
            u.enb_rlc.poll_timeout(),
            u.ue_rlc.poll_timeout()
        );
    }
    panic!("did not finish");
}

#[test]
fn test_dl_chain_harq_failures_every_sdu_once_in_order() {
    for (nr, bler, seed) in [
        (false, 0.0, 1),
        (false, 0.2, 2),
        (true, 0.2, 3),
        (true, 0.3, 4),
    ] {
        let (ues, residual) = run(nr, bler, seed);
        for u in &ues {
            assert_eq!(
                u.delivered,
                (0..800).collect::<Vec<_>>(),
                "nr={nr} bler={bler}"
            );
        }
        let retx: u64 = ues.iter().map(|u| u.enb_rlc.counters().retx_pdus).sum();
        eprintln!("nr={nr} bler={bler}: residual HARQ failures {residual}, RLC retx PDUs {retx}");
        if bler > 0.0 {
            assert!(residual > 0 && retx > 0);
        }
    }
}

#[test]
fn test_dl_chain_is_deterministic() {
    let digest = |nr| {
        let (ues, residual) = run(nr, 0.2, 9);
        let c: Vec<String> = ues
            .iter()
            .map(|u| {
                format!(
                    "{:?}{:?}{:?}",
                    u.enb_rlc.counters(),
                    u.ue_rlc.counters(),
                    u.harq.counters()
                )
            })
            .collect();
        (residual, c)
    };
    assert_eq!(digest(false), digest(false));
    assert_eq!(digest(true), digest(true));
}
