//! Uplink SR/BSR procedure (TS 36.321 §5.4.4, §5.4.5) and the dissertation's Figure 6 stall
//! (seed 003, ch. 3): with periodicBSR-Timer = 10 subframes and retxBSR-Timer = 2560 subframes,
//! bytes that arrive after the last BSR, once the reported data has been fully granted, wait
//! for retxBSR-Timer; with the BSR enhancement they wait a few ms.

use rantcp_core::{Duration, Time};
use rantcp_ran::mac::sched::{SchedConfig, SchedUe, Scheduler, SchedulerKind};
use rantcp_ran::mac::ul::*;
use rantcp_ran::mac::UlGrant;

fn ms(x: u64) -> Time {
    Time::from_millis(x)
}

/// Outcome of the Figure 6 scenario.
#[derive(Debug)]
struct Fig6 {
    /// When the 300 bytes arrived and when the UE buffer became empty.
    arrival: Time,
    empty_at: Time,
    counters: UeMacCounters,
    /// (time, kind, reported bytes) of every BSR the eNB received.
    bsrs: Vec<(Time, BsrKind, u32)>,
    grants: Vec<(Time, u32)>,
}

/// One UE, one bearer, 1 ms TTI. An SR or a MAC PDU sent in TTI `t` is processed by the eNB in
/// `t` (processing delays are the node's business), the eNB schedules in the same TTI, and the
/// grant is used 4 TTIs later (LTE FDD k = 4).
fn run_fig6(enhanced: bool, restart_on_grant: bool) -> Fig6 {
    assert!(
        UeMacConfig::lte_default(1).retx_bsr_restart_on_grant,
        "spec rule is the default"
    );
    let mut cfg = UeMacConfig::lte_default(1);
    cfg.bsr_enhancement = enhanced;
    cfg.retx_bsr_restart_on_grant = restart_on_grant;
    let mut ue = UeUlMac::new(cfg);
    // SR answered with a 100-byte grant; grants sized exactly to the reported buffer.
    let mut enb = UlScheduler::new(
        SchedConfig {
            kind: SchedulerKind::RoundRobin,
            n_prb: 100,
            slot: Duration::from_millis(1),
            min_prb: 1,
        },
        100,
    );
    let mut buffer: u64 = 0;
    let mut pending_grants: Vec<(Time, UlGrant)> = Vec::new();
    let mut bsrs = Vec::new();
    let mut grants = Vec::new();
    let mut arrival = Time::MAX;
    let mut empty_at = Time::MAX;
    let mut ul_grants = Vec::new();
    for tti in 0..4000u64 {
        let now = ms(tti);
        // Application data: 1500 bytes at T99, 300 more right after the first BSR went out.
        if tti == 99 {
            buffer += 1500;
            ue.handle_buffer_status(now, 3, buffer);
        }
        if arrival == Time::MAX && !bsrs.is_empty() && tti > 99 {
            buffer += 300;
            arrival = now;
            ue.handle_buffer_status(now, 3, buffer);
        }
        if ue.poll_timeout().is_some_and(|t| t <= now) {
            ue.handle_timeout(now);
        }
        if ue.poll_sr() {
            enb.handle_sr(1);
        }
        // Grants due in this TTI.
        while let Some(i) = pending_grants.iter().position(|(t, _)| *t == now) {
            let (_, g) = pending_grants.remove(i);
            let tx = ue.handle_ul_grant(now, g);
            for op in &tx.opportunities {
                buffer -= op.bytes as u64;
            }
            ue.handle_buffer_status(now, 3, buffer);
            if let Some(b) = tx.bsr {
                enb.handle_bsr(1, &b);
                bsrs.push((now, b.kind, bsr_index_to_bytes(b.index[b.lcg as usize])));
            }
            if buffer == 0 && arrival != Time::MAX && empty_at == Time::MAX {
                empty_at = now;
            }
        }
        // eNB uplink scheduler (for the next-but-4 TTI).
        ul_grants.clear();
        let ues = [SchedUe {
            rnti: 1,
            bytes_per_prb: 100.0,
            backlog_bytes: 0,
            harq_retx: None,
            free_harq: Some(0),
            max_prb: u16::MAX,
            min_prb: 0,
        }];
        enb.schedule_with(
            now,
            &ues,
            3,
            |u, n| Scheduler::linear_tbs(u, n).min(u.backlog_bytes as u32),
            &mut ul_grants,
        );
        for g in &ul_grants {
            grants.push((now, g.tb_bytes));
            pending_grants.push((now + Duration::from_millis(4), *g));
        }
        if empty_at != Time::MAX && tti > empty_at.as_nanos() / 1_000_000 + 20 {
            break;
        }
    }
    Fig6 {
        arrival,
        empty_at,
        counters: ue.counters().clone(),
        bsrs,
        grants,
    }
}

#[test]
fn test_default_bsr_reproduces_figure6_stall() {
    let r = run_fig6(false, true);
    let wait = r.empty_at - r.arrival;
    eprintln!("default: {r:?}\nwait {wait}");
    // T99 data, T100 SR, the grant for the SR used at T104 (regular BSR: 1404 bytes → level
    // 33, read as 1552), 300 bytes at T105, the 1552-byte grant used at T108 leaves 155 bytes,
    // periodicBSR-Timer expires at T114 (periodic BSR triggered, but no grant comes and a
    // periodic BSR may not ask for one), retxBSR-Timer (restarted by that grant) expires at
    // T2668 → regular BSR → SR at the T2670 occasion → grant → BSR + data at T2674 → the rest
    // at T2678.
    assert_eq!(r.arrival, ms(105));
    assert_eq!(r.empty_at, ms(2678));
    assert!(
        wait >= Duration::from_millis(2560) && wait <= Duration::from_millis(2600),
        "{wait}"
    );
    assert_eq!(r.counters.retx_bsr_expiries, 1);
    assert!(r.counters.periodic_bsr_expiries >= 1);
    assert_eq!(r.counters.sr_tx, 2);
    assert_eq!(r.counters.bsr_enhanced, 0);
    // No BSR and no grant during the stall.
    assert!(r
        .bsrs
        .iter()
        .all(|(t, _, _)| *t <= ms(104) || *t >= ms(2674)));
    assert!(r
        .grants
        .iter()
        .all(|(t, _)| *t <= ms(104) || *t >= ms(2670)));
    assert_eq!(r.bsrs[0], (ms(104), BsrKind::Regular, 1552));
}

#[test]
fn test_figure6_stall_with_dissertation_flowchart_timer() {
    // Figure 5's flowchart (re)starts retxBSR-Timer only when a BSR is sent (T104): expiry at
    // T2664 instead of T2668, the SR occasion at T2670 is the same, so is the outcome.
    let r = run_fig6(false, false);
    assert_eq!(r.empty_at, ms(2678));
    assert_eq!(r.counters.retx_bsr_expiries, 1);
}

#[test]
fn test_bsr_enhancement_removes_stall() {
    let r = run_fig6(true, true);
    let wait = r.empty_at - r.arrival;
    eprintln!("enhanced: {r:?}\nwait {wait}");
    // At T108 the grants since the last BSR (1552) reach what it reported (1404) while data
    // remains: a regular BSR rides in that grant (data 1552 − 2 − 3 = 1547, 157 bytes left →
    // level 18, read as 171), the eNB grants the rest, used at T112.
    assert_eq!(r.counters.bsr_enhanced, 1);
    assert_eq!(r.bsrs[1], (ms(108), BsrKind::Regular, 171));
    assert_eq!(r.empty_at, ms(112));
    assert!(wait <= Duration::from_millis(10), "{wait}");
    assert_eq!(r.counters.retx_bsr_expiries, 0);
    assert_eq!(r.counters.sr_tx, 1);
}

#[test]
fn test_buffer_size_table_spot_values() {
    // TS 36.321 Table 6.1.3.1-1.
    assert_eq!(BSR_LEVELS.len(), 63);
    assert_eq!(bsr_index(0), 0);
    assert_eq!(bsr_index(1), 1);
    assert_eq!(bsr_index(10), 1);
    assert_eq!(bsr_index(11), 2);
    assert_eq!(bsr_index(300), 23); // 274 < BS <= 321
    assert_eq!(bsr_index(1500), 33); // 1326 < BS <= 1552
    assert_eq!(bsr_index(1552), 33);
    assert_eq!(bsr_index(1553), 34);
    assert_eq!(bsr_index(93_479), 59);
    assert_eq!(bsr_index(93_480), 60);
    assert_eq!(bsr_index(150_000), 62);
    assert_eq!(bsr_index(150_001), 63);
    assert_eq!(bsr_index(10_000_000), 63);
    assert_eq!(bsr_index_to_bytes(20), 200);
    assert_eq!(bsr_index_to_bytes(31), 1132);
    assert_eq!(bsr_index_to_bytes(40), 4677);
    assert_eq!(bsr_index_to_bytes(50), 22624);
    assert_eq!(bsr_index_to_bytes(61), 128_125);
}

fn two_lcg_ue() -> UeUlMac {
    let mut cfg = UeMacConfig::lte_default(7);
    cfg.channels = vec![
        UlLogicalChannel {
            lcid: 1,
            lcg: 0,
            priority: 1,
        },
        UlLogicalChannel {
            lcid: 3,
            lcg: 1,
            priority: 5,
        },
        UlLogicalChannel {
            lcid: 4,
            lcg: 1,
            priority: 6,
        },
    ];
    UeUlMac::new(cfg)
}

fn grant(tb: u32) -> UlGrant {
    UlGrant {
        rnti: 7,
        tb_bytes: tb,
        n_prb: 1,
        harq_id: 2,
        is_retx: false,
    }
}

#[test]
fn test_regular_bsr_triggers_and_sr() {
    let mut ue = two_lcg_ue();
    // Data on an empty UE: regular BSR → SR at the next occasion (every 10 ms, offset 0).
    ue.handle_buffer_status(ms(3), 3, 500);
    assert!(ue.sr_pending());
    assert_eq!(ue.poll_timeout(), Some(ms(10)));
    ue.handle_timeout(ms(10));
    assert!(ue.poll_sr());
    assert!(!ue.poll_sr());
    // Same-or-lower priority data while buffers are non-empty: no new regular BSR.
    let tx = ue.handle_ul_grant(ms(14), grant(100));
    assert_eq!(tx.bsr.unwrap().kind, BsrKind::Regular);
    assert!(!ue.sr_pending());
    ue.handle_buffer_status(ms(15), 4, 100);
    assert!(!ue.sr_pending());
    // Higher-priority channel gets data: regular BSR.
    ue.handle_buffer_status(ms(16), 1, 20);
    assert!(ue.sr_pending());
    let tx = ue.handle_ul_grant(ms(17), grant(1000));
    let b = tx.bsr.unwrap();
    assert_eq!(b.kind, BsrKind::Regular);
    // Data of the highest priority first.
    assert_eq!(tx.opportunities[0].lcid, 1);
    assert_eq!(tx.opportunities[0].harq_id, 2);
}

#[test]
fn test_short_long_truncated_bsr_sizes() {
    let mut ue = two_lcg_ue();
    ue.handle_buffer_status(ms(0), 1, 5000);
    ue.handle_buffer_status(ms(0), 3, 5000);
    // Regular BSR with two LCGs holding data after the PDU: long BSR, 4 bytes (1 + 3).
    let tx = ue.handle_ul_grant(ms(1), grant(1000));
    let b = tx.bsr.unwrap();
    assert!(b.is_long && !b.is_truncated);
    assert_eq!(b.bytes, LONG_BSR_BYTES);
    assert_eq!(
        tx.opportunities.iter().map(|o| o.bytes).sum::<u32>()
            + tx.mac_subheader_bytes
            + b.bytes
            + tx.padding_bytes,
        1000
    );
    assert_eq!(tx.opportunities.len(), 1);
    assert_eq!(tx.opportunities[0].bytes, 1000 - 4 - 3);
    assert_eq!(b.exact_bytes[0], 5000 - 993);
    assert_eq!(b.index[1], bsr_index(5000));

    // Two LCGs with data in this TTI but one emptied by the PDU: the long format reserved
    // before multiplexing is kept; every byte of the TB is accounted for.
    let mut ue = two_lcg_ue();
    ue.handle_buffer_status(ms(0), 1, 100);
    ue.handle_buffer_status(ms(0), 3, 5000);
    let tx = ue.handle_ul_grant(ms(1), grant(1000));
    let b = tx.bsr.unwrap();
    assert!(b.is_long);
    assert_eq!(b.exact_bytes, [0, 5000 - (1000 - 4 - 102 - 3), 0, 0]);
    assert_eq!(
        tx.opportunities.iter().map(|o| o.bytes).sum::<u32>()
            + tx.mac_subheader_bytes
            + b.bytes
            + tx.padding_bytes,
        1000
    );

    // Only one LCG with data: short BSR, 2 bytes (1 + 1).
    let mut ue = two_lcg_ue();
    ue.handle_buffer_status(ms(0), 3, 5000);
    let tx = ue.handle_ul_grant(ms(1), grant(1000));
    let b = tx.bsr.unwrap();
    assert!(!b.is_long && b.bytes == SHORT_BSR_BYTES && b.lcg == 1);
    assert_eq!(tx.opportunities[0].bytes, 1000 - 2 - 3);

    // Padding BSR: a grant larger than the data leaves padding for a BSR.
    let mut ue = two_lcg_ue();
    ue.handle_buffer_status(ms(0), 3, 500);
    let tx = ue.handle_ul_grant(ms(1), grant(200)); // regular BSR (2) + 195 data + subheader (3)
    assert_eq!(tx.opportunities[0].bytes, 195);
    let tx = ue.handle_ul_grant(ms(3), grant(400)); // 305 data + 3: 92 bytes of padding
    let b = tx.bsr.unwrap();
    assert_eq!(b.kind, BsrKind::Padding);
    assert_eq!((b.bytes, b.index[1]), (SHORT_BSR_BYTES, 0));
    assert_eq!(tx.padding_bytes, 400 - 305 - 3 - 2);
}

#[test]
fn test_truncated_padding_bsr() {
    let mut cfg = UeMacConfig::lte_default(7);
    cfg.channels = vec![
        UlLogicalChannel {
            lcid: 1,
            lcg: 0,
            priority: 1,
        },
        UlLogicalChannel {
            lcid: 2,
            lcg: 2,
            priority: 3,
        },
        UlLogicalChannel {
            lcid: 3,
            lcg: 1,
            priority: 5,
        },
    ];
    let mut ue = UeUlMac::new(cfg);
    ue.handle_buffer_status(ms(0), 1, 1000);
    ue.handle_ul_grant(ms(1), grant(100)); // regular short BSR, LCG 0 only
    ue.handle_buffer_status(ms(2), 2, 5000); // lower priority, buffers non-empty: no trigger
    ue.handle_buffer_status(ms(2), 3, 5000);
    ue.handle_buffer_status(ms(2), 1, 60);
    // 60 bytes + 2-byte subheader of LCID 1 leave 2 bytes: too little for data, room for a
    // short BSR but not a long one while LCGs 1 and 2 still hold data → truncated BSR
    // reporting the LCG of the highest-priority channel with data (LCID 2 → LCG 2).
    let tx = ue.handle_ul_grant(ms(3), grant(64));
    assert_eq!(tx.opportunities.len(), 1);
    let b = tx.bsr.unwrap();
    assert_eq!(b.kind, BsrKind::Padding);
    assert!(b.is_truncated && !b.is_long);
    assert_eq!(
        (b.bytes, b.lcg, b.index[2]),
        (SHORT_BSR_BYTES, 2, bsr_index(5000))
    );
    assert_eq!(tx.padding_bytes, 0);
    // A truncated BSR does not restart periodicBSR-Timer (§5.4.5): it still expires at T11.
    assert_eq!(ue.poll_timeout(), Some(ms(11)));
}

#[test]
fn test_periodic_bsr_waits_for_grant_and_never_requests_one() {
    let mut ue = UeUlMac::new(UeMacConfig::lte_default(1));
    ue.handle_buffer_status(ms(0), 3, 10_000);
    ue.handle_timeout(ms(0));
    assert!(ue.poll_sr());
    let tx = ue.handle_ul_grant(ms(4), grant(1000));
    assert_eq!(tx.bsr.unwrap().kind, BsrKind::Regular);
    assert_eq!(ue.poll_timeout(), Some(ms(14))); // periodicBSR-Timer sf10
    ue.handle_timeout(ms(14));
    assert!(!ue.sr_pending(), "a periodic BSR does not trigger an SR");
    assert_eq!(ue.poll_timeout(), Some(ms(2564)));
    let tx = ue.handle_ul_grant(ms(30), grant(1000));
    assert_eq!(tx.bsr.unwrap().kind, BsrKind::Periodic);
    // Without a triggered BSR a full grant carries only data.
    let tx = ue.handle_ul_grant(ms(31), grant(1000));
    assert_eq!(tx.bsr, None);
    assert_eq!(tx.opportunities[0].bytes, 997);
    assert_eq!(ue.counters().bsr_periodic, 1);
}

#[test]
fn test_sr_grant_sizing_from_tracker() {
    let mut t = UlBufferTracker::new(56);
    assert_eq!(t.backlog(1), 0);
    t.handle_sr(1);
    assert_eq!(t.backlog(1), 56);
    t.on_grant(1, 56);
    assert_eq!(t.backlog(1), 0);
    let b = BsrReport {
        kind: BsrKind::Regular,
        is_long: false,
        is_truncated: false,
        index: [0, 33, 0, 0],
        lcg: 1,
        exact_bytes: [0, 1500, 0, 0],
        bytes: 2,
    };
    t.handle_bsr(1, &b);
    assert_eq!(t.backlog(1), 1552); // quantised upper bound
    t.on_grant(1, 1000);
    assert_eq!(t.backlog(1), 552);
}

#[test]
fn test_grant_fitting_all_data_but_not_bsr_cancels_it() {
    let mut ue = UeUlMac::new(UeMacConfig::lte_default(1));
    ue.handle_buffer_status(ms(0), 3, 100);
    assert!(ue.sr_pending());
    // 100 bytes + 2-byte subheader fill the 102-byte grant exactly: the regular BSR is
    // cancelled rather than displacing data (§5.4.5), and the SR with it.
    let tx = ue.handle_ul_grant(ms(4), grant(102));
    assert_eq!(tx.bsr, None);
    assert_eq!((tx.opportunities[0].bytes, tx.padding_bytes), (100, 0));
    assert!(!ue.sr_pending());
    // With two more bytes the BSR rides along (reporting an empty buffer).
    let mut ue = UeUlMac::new(UeMacConfig::lte_default(1));
    ue.handle_buffer_status(ms(0), 3, 100);
    let tx = ue.handle_ul_grant(ms(4), grant(104));
    assert_eq!(
        tx.bsr.map(|b| (b.kind, b.index[1])),
        Some((BsrKind::Regular, 0))
    );
    assert_eq!(tx.opportunities[0].bytes, 100);
}

#[test]
fn test_ul_scheduler_sizes_grants_from_reports_within_pdcch_budget() {
    let mut s = UlScheduler::new(
        SchedConfig {
            kind: SchedulerKind::RoundRobin,
            n_prb: 50,
            slot: Duration::from_millis(1),
            min_prb: 1,
        },
        60,
    );
    let bsr = |idx: u8| BsrReport {
        kind: BsrKind::Regular,
        is_long: false,
        is_truncated: false,
        index: [0, idx, 0, 0],
        lcg: 1,
        exact_bytes: [0; 4],
        bytes: 2,
    };
    s.handle_bsr(1, &bsr(bsr_index(1500))); // read as 1552
    s.handle_bsr(2, &bsr(bsr_index(190))); // read as 200
    s.handle_sr(3);
    let ues: Vec<SchedUe> = (1..=4)
        .map(|r| SchedUe {
            rnti: r,
            bytes_per_prb: 100.0,
            backlog_bytes: 0,
            harq_retx: None,
            free_harq: Some(0),
            max_prb: u16::MAX,
            min_prb: 0,
        })
        .collect();
    let mut g = Vec::new();
    // PDCCH budget of 2 grants: RR serves two of the three UEs with a backlog, sized from the
    // reports (ceil to whole PRBs), and nothing for UE 4 (no report).
    let used = s.schedule_with(Time::ZERO, &ues, 2, Scheduler::linear_tbs, &mut g);
    assert_eq!(used, 2);
    assert_eq!(
        g.iter()
            .map(|g| (g.rnti, g.n_prb, g.tb_bytes))
            .collect::<Vec<_>>(),
        vec![(1, 16, 1600), (2, 2, 200)]
    );
    assert_eq!(
        (
            s.tracker.backlog(1),
            s.tracker.backlog(2),
            s.tracker.backlog(3)
        ),
        (0, 0, 60)
    );
    g.clear();
    s.schedule_with(Time::from_millis(1), &ues, 2, Scheduler::linear_tbs, &mut g);
    assert_eq!(
        g.iter().map(|g| (g.rnti, g.tb_bytes)).collect::<Vec<_>>(),
        vec![(3, 100)]
    );
    assert_eq!(s.tracker.backlog(3), 0);
}

/// The anatomy of the stall (issue 18): bytes that arrive while the buffer is not empty trigger
/// no BSR (§5.4.5), the grant the eNB sizes from the last report leaves them behind, and the
/// periodic BSR waits for a grant that will not come while periodicBSR-Timer (sf10) is longer
/// than the uplink round trip (BSR → grant → PUSCH, 6 ms here): only retxBSR-Timer, restarted
/// by the last grant (t = 10 ms + 2560), brings an SR. With periodicBSR-Timer = 5 ms the
/// periodic BSR is triggered before the grant and rides in it.
#[test]
fn test_stall_needs_periodic_timer_longer_than_the_uplink_round_trip() {
    for periodic in [10, 5] {
        let mut cfg = UeMacConfig::lte_default(7);
        cfg.periodic_bsr_timer = Some(Duration::from_millis(periodic));
        let mut ue = UeUlMac::new(cfg);
        ue.handle_buffer_status(ms(0), 3, 100);
        ue.handle_timeout(ms(0));
        assert!(ue.poll_sr());
        // The SR grant carries the regular BSR and part of the data.
        let tx = ue.handle_ul_grant(ms(4), grant(50));
        let reported = tx.bsr.unwrap().exact_bytes[1];
        assert!(reported > 0 && reported < 100, "{reported}");
        // An ACK arrives while data is still waiting: no trigger.
        ue.handle_buffer_status(ms(5), 3, reported + 60);
        assert!(!ue.sr_pending());
        // The eNB granted the reported level's upper bound (plus subheaders) at t = 6 for t = 10.
        if periodic == 5 {
            ue.handle_timeout(ms(9));
        }
        let g = bsr_index_to_bytes(bsr_index(reported)) + 3;
        let tx = ue.handle_ul_grant(ms(10), grant(g));
        assert!(ue.total_available() > 0);
        if periodic == 5 {
            let b = tx.bsr.unwrap();
            assert_eq!(b.kind, BsrKind::Periodic);
            assert_eq!(
                b.exact_bytes[1],
                ue.total_available(),
                "the eNB learns the leftover"
            );
            continue;
        }
        assert_eq!(tx.bsr, None, "no BSR triggered, no padding left");
        assert_eq!(ue.poll_timeout(), Some(ms(14)));
        ue.handle_timeout(ms(14));
        assert!(!ue.sr_pending(), "a periodic BSR asks for no grant");
        assert_eq!(ue.poll_timeout(), Some(ms(2570)));
        ue.handle_timeout(ms(2570));
        assert!(
            ue.sr_pending() && ue.poll_sr(),
            "retxBSR-Timer: regular BSR, SR"
        );
        assert_eq!(ue.counters().retx_bsr_expiries, 1);
    }
}
