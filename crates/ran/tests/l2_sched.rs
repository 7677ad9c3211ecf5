//! Downlink schedulers: proportional fair fairness and throughput against round robin,
//! HARQ retransmissions before new data, PDCCH budget, with the HARQ entity in the loop.

use rantcp_core::{Duration, Rng, Time};
use rantcp_ran::mac::harq::{HarqConfig, HarqEntity, HarqOutcome};
use rantcp_ran::mac::sched::{
    jain_index, Allocation, SchedConfig, SchedUe, Scheduler, SchedulerKind,
};
use rantcp_ran::mac::HarqFeedback;

const SLOT: Duration = Duration::from_millis(1);

fn cfg(kind: SchedulerKind) -> SchedConfig {
    SchedConfig {
        kind,
        n_prb: 100,
        slot: SLOT,
        min_prb: 1,
    }
}

fn pf() -> SchedulerKind {
    SchedulerKind::ProportionalFair {
        time_constant: Duration::from_millis(100),
    }
}

/// Full-buffer UEs; `bpp(ue, slot, rng)` gives bytes per PRB. Returns bytes served per UE.
fn run_full_buffer(
    kind: SchedulerKind,
    n_ue: usize,
    slots: u64,
    max_grants: u16,
    mut bpp: impl FnMut(usize, &mut Rng) -> f64,
) -> Vec<f64> {
    let mut s = Scheduler::new(cfg(kind));
    let mut rngs: Vec<Rng> = (0..n_ue).map(|i| Rng::new(42, i as u64)).collect();
    let mut served = vec![0.0; n_ue];
    let mut ues = Vec::with_capacity(n_ue);
    let mut out = Vec::new();
    for t in 0..slots {
        ues.clear();
        for (i, r) in rngs.iter_mut().enumerate() {
            ues.push(SchedUe {
                rnti: 100 + i as u16,
                bytes_per_prb: bpp(i, r),
                backlog_bytes: 1 << 30,
                harq_retx: None,
                free_harq: Some(0),
                max_prb: u16::MAX,
                min_prb: 0,
            });
        }
        out.clear();
        s.schedule(Time::from_millis(t), &ues, max_grants, &mut out);
        assert!(out.len() <= max_grants as usize);
        assert!(out.iter().map(|a| a.n_prb).sum::<u16>() <= 100);
        for a in &out {
            served[(a.rnti - 100) as usize] += a.tb_bytes as f64;
        }
    }
    served
}

#[test]
fn test_pf_equal_channels_jain_index() {
    for n in [2, 5, 10, 40] {
        let served = run_full_buffer(pf(), n, 20_000, 10, |_, _| 50.0);
        let j = jain_index(&served);
        assert!(j >= 0.99, "n={n}: Jain {j}");
    }
    // With fading of equal mean as well.
    let served = run_full_buffer(pf(), 10, 20_000, 10, |_, r| 50.0 * r.exponential(1.0));
    let j = jain_index(&served);
    assert!(j >= 0.99, "fading: Jain {j}");
}

/// Fast fading (exponential power → log2(1 + SNR) per PRB) around different mean SNRs.
fn fading_bpp(i: usize, r: &mut Rng) -> f64 {
    let mean_snr_db = 0.0 + 5.0 * i as f64;
    let snr = 10f64.powf(mean_snr_db / 10.0) * r.exponential(1.0);
    // 12 subcarriers × 14 symbols × spectral efficiency / 8 bits, capped at 64QAM-ish 5.5 b/s/Hz
    (168.0 * (1.0 + snr).log2().min(5.5) / 8.0).floor()
}

#[test]
fn test_pf_beats_rr_with_unequal_fading_channels() {
    let n = 8;
    let pf_served = run_full_buffer(pf(), n, 20_000, 10, fading_bpp);
    let rr_served = run_full_buffer(SchedulerKind::RoundRobin, n, 20_000, 10, fading_bpp);
    let mr_served = run_full_buffer(SchedulerKind::MaxRate, n, 20_000, 10, fading_bpp);
    let (pf_t, rr_t, mr_t): (f64, f64, f64) = (
        pf_served.iter().sum(),
        rr_served.iter().sum(),
        mr_served.iter().sum(),
    );
    eprintln!("total bytes: PF {pf_t:.0}, RR {rr_t:.0}, MaxRate {mr_t:.0}");
    eprintln!(
        "Jain: PF {:.3}, RR {:.3}, MaxRate {:.3}",
        jain_index(&pf_served),
        jain_index(&rr_served),
        jain_index(&mr_served)
    );
    assert!(pf_t > 1.1 * rr_t, "PF {pf_t} vs RR {rr_t}");
    assert!(mr_t >= pf_t);
    // PF stays fairer than max rate, and every UE gets service.
    assert!(jain_index(&pf_served) > jain_index(&mr_served));
    assert!(pf_served.iter().all(|&b| b > 0.0));
}

#[test]
fn test_rr_rotates_under_pdcch_limit() {
    // 5 UEs, 2 grants per slot: over 10 slots each UE gets exactly 4 slots.
    let mut s = Scheduler::new(cfg(SchedulerKind::RoundRobin));
    let ues: Vec<SchedUe> = (0..5)
        .map(|i| SchedUe {
            rnti: i,
            bytes_per_prb: 10.0,
            backlog_bytes: 1 << 20,
            harq_retx: None,
            free_harq: Some(0),
            max_prb: u16::MAX,
            min_prb: 0,
        })
        .collect();
    let mut count = [0; 5];
    let mut out = Vec::new();
    for t in 0..10 {
        out.clear();
        s.schedule(Time::from_millis(t), &ues, 2, &mut out);
        assert_eq!(out.len(), 2);
        assert_eq!(
            out.iter().map(|a| a.n_prb).collect::<Vec<_>>(),
            vec![50, 50]
        );
        for a in &out {
            count[a.rnti as usize] += 1;
        }
    }
    assert_eq!(count, [4; 5]);
}

#[test]
fn test_pdcch_limit_respected_by_every_policy() {
    for kind in [SchedulerKind::RoundRobin, SchedulerKind::MaxRate, pf()] {
        let mut s = Scheduler::new(cfg(kind));
        let ues: Vec<SchedUe> = (0..20)
            .map(|i| SchedUe {
                rnti: i,
                bytes_per_prb: 10.0 + i as f64,
                backlog_bytes: 100, // small backlogs: many UEs could fit
                harq_retx: if i % 7 == 0 { Some((1, 3, 30)) } else { None },
                free_harq: Some(0),
                max_prb: u16::MAX,
                min_prb: 0,
            })
            .collect();
        // PDCCH of 4 DCIs per slot, one used by an uplink grant: 3 left for the downlink.
        let mut out = Vec::new();
        for t in 0..50 {
            out.clear();
            s.schedule(Time::from_millis(t), &ues, 3, &mut out);
            assert_eq!(out.len(), 3, "{kind:?}");
            assert_eq!(s.last_grants, 3);
        }
        out.clear();
        s.schedule(Time::ZERO, &ues, 0, &mut out);
        assert!(out.is_empty());
    }
}

#[test]
fn test_harq_retx_before_new_data() {
    let mut s = Scheduler::new(cfg(SchedulerKind::MaxRate));
    let ues = [
        SchedUe {
            rnti: 1,
            bytes_per_prb: 10.0,
            backlog_bytes: 100_000,
            harq_retx: Some((3, 60, 600)),
            free_harq: Some(0),
            max_prb: u16::MAX,
            min_prb: 0,
        },
        SchedUe {
            rnti: 2,
            bytes_per_prb: 90.0,
            backlog_bytes: 100_000,
            harq_retx: None,
            free_harq: Some(0),
            max_prb: u16::MAX,
            min_prb: 0,
        },
    ];
    let mut out = Vec::new();
    s.schedule(Time::ZERO, &ues, 10, &mut out);
    assert_eq!(
        out,
        vec![
            Allocation {
                rnti: 1,
                n_prb: 60,
                tb_bytes: 600,
                harq_id: 3,
                is_retx: true
            },
            Allocation {
                rnti: 2,
                n_prb: 40,
                tb_bytes: 3600,
                harq_id: 0,
                is_retx: false
            },
        ]
    );
    // With a single grant the retransmission wins even though UE 2 has the better channel.
    out.clear();
    s.schedule(Time::ZERO, &ues, 1, &mut out);
    assert_eq!(out.len(), 1);
    assert!(out[0].is_retx && out[0].rnti == 1);
}

#[test]
fn test_backlog_limits_allocation() {
    let mut s = Scheduler::new(cfg(pf()));
    let ues = [
        SchedUe {
            rnti: 1,
            bytes_per_prb: 50.0,
            backlog_bytes: 120,
            harq_retx: None,
            free_harq: Some(0),
            max_prb: u16::MAX,
            min_prb: 0,
        },
        SchedUe {
            rnti: 2,
            bytes_per_prb: 50.0,
            backlog_bytes: 1_000_000,
            harq_retx: None,
            free_harq: Some(0),
            max_prb: u16::MAX,
            min_prb: 0,
        },
        SchedUe {
            rnti: 3,
            bytes_per_prb: 50.0,
            backlog_bytes: 1_000_000,
            harq_retx: None,
            free_harq: None,
            max_prb: u16::MAX,
            min_prb: 0,
        },
    ];
    let mut out = Vec::new();
    s.schedule(Time::ZERO, &ues, 10, &mut out);
    // UE 1 needs 3 PRBs, UE 2 takes the other 97, UE 3 has no free HARQ process.
    let mut got: Vec<(u16, u16)> = out.iter().map(|a| (a.rnti, a.n_prb)).collect();
    got.sort();
    assert_eq!(got, vec![(1, 3), (2, 97)]);
}

/// A UE's floor (`min_prb`, the uplink's smallest useful grant): an allocation never goes
/// below it, even for a tiny backlog; a UE whose floor does not fit the PRBs left gets nothing
/// this slot (not a narrower grant it cannot use), with round robin and with PF.
#[test]
fn test_min_prb_floor() {
    // A power-limited UE: 2 PRBs at most and at least (7 bytes: 3.5 B/PRB), 3 bytes reported.
    let edge = SchedUe {
        rnti: 1,
        bytes_per_prb: 3.5,
        backlog_bytes: 3,
        harq_retx: None,
        free_harq: Some(0),
        max_prb: 2,
        min_prb: 2,
    };
    let full = SchedUe {
        rnti: 2,
        bytes_per_prb: 50.0,
        backlog_bytes: 500,
        harq_retx: None,
        free_harq: Some(0),
        max_prb: u16::MAX,
        min_prb: 0,
    };
    for kind in [SchedulerKind::RoundRobin, pf(), SchedulerKind::MaxRate] {
        let mut s = Scheduler::new(cfg(kind));
        let mut out = Vec::new();
        s.schedule(Time::ZERO, &[edge, full], 10, &mut out);
        let mut got: Vec<(u16, u16)> = out.iter().map(|a| (a.rnti, a.n_prb)).collect();
        got.sort();
        assert_eq!(got, vec![(1, 2), (2, 10)], "{kind:?}");
        // A floor wider than what is left: no allocation at all. A HARQ retransmission holds
        // 99 of the 100 PRBs; the UE with a 2-PRB floor gets none, the 1-PRB UE gets the last.
        let hog = SchedUe {
            rnti: 3,
            harq_retx: Some((0, 99, 990)),
            free_harq: None,
            ..full
        };
        let small = SchedUe {
            rnti: 4,
            backlog_bytes: 10,
            ..full
        };
        let mut s = Scheduler::new(cfg(kind));
        out.clear();
        s.schedule(Time::ZERO, &[edge, hog, small], 10, &mut out);
        let mut got: Vec<(u16, u16)> = out.iter().map(|a| (a.rnti, a.n_prb)).collect();
        got.sort();
        assert_eq!(got, vec![(3, 99), (4, 1)], "{kind:?}");
    }
}

#[test]
fn test_dl_loop_with_harq_bler() {
    // 4 UEs, 8 HARQ processes each, feedback after 4 slots, 10% BLER per transmission:
    // retransmissions are always scheduled first and blocks fail only after max_retx.
    let n = 4;
    let hcfg = HarqConfig {
        n_processes: 8,
        feedback_delay: Duration::from_millis(4),
        max_retx: 3,
    };
    let mut harq: Vec<HarqEntity<u32>> = (0..n).map(|_| HarqEntity::new(hcfg)).collect();
    let mut s = Scheduler::new(cfg(pf()));
    let mut rng = Rng::new(5, 1);
    let mut feedback: Vec<(Time, usize, HarqFeedback)> = Vec::new();
    let (mut acked, mut failed, mut retx_allocs) = (0u64, 0u64, 0u64);
    let mut out = Vec::new();
    let mut ues = Vec::new();
    for t in 0..5000u64 {
        let now = Time::from_millis(t);
        feedback.retain(|&(at, i, fb)| {
            if at <= now {
                match harq[i].handle_feedback(now, fb) {
                    HarqOutcome::Acked(_) => acked += 1,
                    HarqOutcome::Failed(_) => failed += 1,
                    _ => {}
                }
                false
            } else {
                true
            }
        });
        ues.clear();
        for (i, h) in harq.iter().enumerate() {
            ues.push(SchedUe {
                rnti: i as u16,
                bytes_per_prb: 40.0,
                backlog_bytes: 1 << 20,
                harq_retx: h.pending_retx().next(),
                free_harq: h.free_process(),
                max_prb: u16::MAX,
                min_prb: 0,
            });
        }
        out.clear();
        s.schedule(now, &ues, 4, &mut out);
        // Every pending retransmission is served in this slot (they fit), before new data.
        let pending = ues.iter().filter(|u| u.harq_retx.is_some()).count();
        assert!(out.iter().take(pending).all(|a| a.is_retx));
        for a in &out {
            let i = a.rnti as usize;
            if a.is_retx {
                retx_allocs += 1;
                harq[i].start_retx(now, a.harq_id);
            } else {
                harq[i].start_new(now, a.harq_id, a.n_prb, a.tb_bytes, a.tb_bytes);
            }
            let ack = !rng.bernoulli(0.1);
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
    }
    let new: u64 = harq.iter().map(|h| h.counters().new_tx).sum();
    eprintln!("new {new} retx {retx_allocs} acked {acked} failed {failed}");
    assert!(retx_allocs as f64 > 0.08 * new as f64 && (retx_allocs as f64) < 0.14 * new as f64);
    assert!(failed <= new / 1000 + 2); // 0.1^4 residual
    assert_eq!(
        harq.iter().map(|h| h.counters().retx).sum::<u64>(),
        retx_allocs
    );
}

fn full_buffer_ue(rnti: u16, bytes_per_prb: f64, backlog_bytes: u64) -> SchedUe {
    SchedUe {
        rnti,
        bytes_per_prb,
        backlog_bytes,
        harq_retx: None,
        free_harq: Some(0),
        max_prb: u16::MAX,
        min_prb: 0,
    }
}

/// A UE with nothing to send is left out of the scheduler's input. Its PF average must decay
/// as if it had been in the input and served nothing (Sesia et al. §12.3.1.2; ns-3's
/// `PfFfMacScheduler` updates every configured UE each TTI), not stay frozen at its level
/// from before it went idle.
#[test]
fn test_pf_average_of_an_absent_ue_decays_as_if_present_and_unserved() {
    // Scheduler `present` sees UE 2 every slot with an empty buffer; `absent` does not see
    // it at all between slot 300 and slot 700.
    let mut present = Scheduler::new(cfg(pf()));
    let mut absent = Scheduler::new(cfg(pf()));
    let mut out = Vec::new();
    for t in 0..700u64 {
        let now = Time::from_millis(t);
        let busy = t < 300;
        let a = full_buffer_ue(1, 30.0, 1 << 30);
        let b = full_buffer_ue(2, 50.0, if busy { 1 << 30 } else { 0 });
        out.clear();
        present.schedule(now, &[a, b], 10, &mut out);
        out.clear();
        if busy {
            absent.schedule(now, &[a, b], 10, &mut out);
        } else {
            absent.schedule(now, &[a], 10, &mut out);
        }
    }
    let now = Time::from_millis(700);
    let want = present.average_rate_at(2, now).unwrap();
    let got = absent.average_rate_at(2, now).unwrap();
    let before = absent.average_rate(2).unwrap();
    assert!(
        before > 1000.0,
        "UE 2 was served before going idle: {before}"
    );
    // 400 slots with τ = 100 slots: e^-4 of the level before.
    assert!(
        want < 0.03 * before,
        "present-and-unserved decays: {want} vs {before}"
    );
    assert!(
        (got - want).abs() <= 1e-9 * want,
        "absent UE's average {got} != present-and-unserved {want}"
    );
    // UE 1, in both inputs throughout, is unaffected by the bookkeeping.
    assert_eq!(present.average_rate(1), absent.average_rate(1));
}

/// The decay has consequences: a UE back from a long idle period has a small average and so
/// the highest PF metric. UE 2 alone for 1000 slots, then UE 1 alone for 100 (UE 2 idle), then
/// both with full buffers: UE 2's average has decayed over those 100 slots (to e^-1 of its
/// level) while UE 1's has risen to 1 - e^-1 of its, so UE 2 is served first. With its average
/// frozen UE 2's metric would be ~1 against UE 1's ~1.6.
#[test]
fn test_pf_ue_back_from_idle_is_served_first() {
    let mut s = Scheduler::new(cfg(pf()));
    let mut out = Vec::new();
    for t in 0..1100u64 {
        let ue = if t < 1000 {
            full_buffer_ue(2, 40.0, 1 << 30)
        } else {
            full_buffer_ue(1, 40.0, 1 << 30)
        };
        out.clear();
        s.schedule(Time::from_millis(t), &[ue], 10, &mut out);
        assert_eq!(out.len(), 1);
    }
    out.clear();
    let both = [
        full_buffer_ue(1, 40.0, 1 << 30),
        full_buffer_ue(2, 40.0, 1 << 30),
    ];
    s.schedule(Time::from_millis(1100), &both, 10, &mut out);
    // Full buffers: the first UE in PF order takes every PRB.
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].rnti, 2, "UE back from idle first: {out:?}");
}

/// Under TDD the PF average decays once per scheduling opportunity: with every other slot an
/// opportunity, an absent UE loses `(1 - 1/τ)` per opportunity missed, not per slot.
#[test]
fn test_pf_decay_counts_opportunities_not_slots() {
    let mut s = Scheduler::new(cfg(pf()));
    s.set_opportunities(vec![true, false]);
    let mut out = Vec::new();
    // Served in slot 0 only (its average is then 1/τ of the TB), then absent.
    s.schedule(
        Time::ZERO,
        &[full_buffer_ue(1, 10.0, 1 << 30)],
        10,
        &mut out,
    );
    let r0 = s.average_rate(1).unwrap();
    assert_eq!(r0, out[0].tb_bytes as f64 / 100.0);
    // At slot 200 (opportunity 100) it has missed opportunities 1..=99.
    let keep: f64 = 1.0 - 1.0 / 100.0;
    let got = s.average_rate_at(1, Time::from_millis(200)).unwrap();
    let want = r0 * keep.powi(99);
    assert!((got - want).abs() <= 1e-12 * want, "{got} vs {want}");
}
