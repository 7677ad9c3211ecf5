//! The dissertation's packet flows (seed 003 ch. 3, Figures 6, 7 and 9) step by step on the UE
//! MAC of TS 36.321 §5.4.4 (SR) and §5.4.5 (BSR), with the figures' arrivals and grants at the
//! figures' times: when each BSR and SR goes out, what it reports and what each grant carries.
//!
//! The figures' UE builds a MAC PDU when the grant is *received* (4 subframes before it is
//! sent: "when the grant is received, a MAC PDU was already created"), so the grants are
//! handed to the MAC at their reception times. The figures count a 10-byte BSR and no MAC
//! subheaders; here a short BSR is 2 bytes (subheader + CE, §6.1.3.1) and each data piece has
//! a 3-byte subheader (§6.1.2), so the reported sizes differ by those bytes. A BSR reports
//! exact bytes to the UE's counters and the Table 6.1.3.1-1 level to the eNB. SR occasions
//! every subframe (the figures send the first BSR 1 subframe after the data), and retxBSR-Timer
//! restarted only when a BSR is sent (the Figure 5 flowchart,
//! `retx_bsr_restart_on_grant = false`). The first BSR goes out in a 4-byte grant that
//! answers the SR (BSR only; the figures do not draw the SR).

use rantcp_core::{Duration, Time};
use rantcp_ran::mac::ul::*;
use rantcp_ran::mac::UlGrant;

fn ms(x: u64) -> Time {
    Time::from_millis(x)
}

/// What happened in one run.
#[derive(Debug, Default)]
struct Trace {
    /// (time, kind, exact bytes reported).
    bsrs: Vec<(u64, BsrKind, u64)>,
    srs: Vec<u64>,
    /// (time, data bytes carried).
    data: Vec<(u64, u32)>,
    retx_expiries: u64,
}

struct Flow {
    ue: UeUlMac,
    buffer: u64,
    t: Trace,
}

impl Flow {
    fn new(periodic_ms: u64, enhanced: bool) -> Flow {
        let mut cfg = UeMacConfig::lte_default(1);
        cfg.periodic_bsr_timer = Some(Duration::from_millis(periodic_ms));
        cfg.retx_bsr_timer = Duration::from_millis(2560);
        cfg.retx_bsr_restart_on_grant = false;
        cfg.sr_period = Duration::from_millis(1);
        cfg.bsr_enhancement = enhanced;
        Flow {
            ue: UeUlMac::new(cfg),
            buffer: 0,
            t: Trace::default(),
        }
    }
    /// Advance the UE's timers to `to` (inclusive), one subframe at a time.
    fn run_to(&mut self, from: u64, to: u64) {
        for x in from..=to {
            while self.ue.poll_timeout().is_some_and(|t| t <= ms(x)) {
                self.ue.handle_timeout(ms(x));
                if self.ue.poll_sr() {
                    self.t.srs.push(x);
                }
            }
        }
        self.t.retx_expiries = self.ue.counters().retx_bsr_expiries;
    }
    fn arrive(&mut self, at: u64, bytes: u64) {
        self.buffer += bytes;
        self.ue.handle_buffer_status(ms(at), 3, self.buffer);
    }
    fn grant(&mut self, at: u64, tb: u32) {
        let tx = self.ue.handle_ul_grant(
            ms(at),
            UlGrant {
                rnti: 1,
                tb_bytes: tb,
                n_prb: 1,
                harq_id: 0,
                is_retx: false,
            },
        );
        let sent: u32 = tx.opportunities.iter().map(|o| o.bytes).sum();
        self.buffer -= sent as u64;
        self.ue.handle_buffer_status(ms(at), 3, self.buffer);
        if sent > 0 {
            self.t.data.push((at, sent));
        }
        if let Some(b) = tx.bsr {
            self.t.bsrs.push((at, b.kind, b.exact_bytes[1]));
        }
    }
}

/// Figure 6 (periodicBSR-Timer sf10, retxBSR-Timer sf2560): 1,500 B at T99, the BSR at T100,
/// 300 B at T102, a 1,500 B grant at T104 (sent T108). periodicBSR-Timer expires at T110 but a
/// periodic BSR asks for no grant, and the eNB has granted all it was told: the 300 B wait for
/// retxBSR-Timer (T100 + 2560 = T2660), whose regular BSR brings an SR and the grant at T2665.
#[test]
fn test_figure6_default_protocol_stalls_until_retx_bsr_timer() {
    let mut f = Flow::new(10, false);
    f.arrive(99, 1500);
    f.run_to(99, 99);
    f.grant(100, 4);
    f.run_to(100, 101);
    f.arrive(102, 300);
    f.run_to(102, 103);
    f.grant(104, 1503);
    f.run_to(104, 2659);
    assert_eq!(f.t.srs, vec![99], "no SR during the stall");
    assert_eq!(
        f.ue.counters().periodic_bsr_expiries,
        1,
        "periodicBSR-Timer expired at T110"
    );
    assert_eq!(f.ue.poll_timeout(), Some(ms(2660)));
    f.run_to(2660, 2660);
    assert_eq!(f.t.srs, vec![99, 2660]);
    assert_eq!(f.t.retx_expiries, 1);
    f.grant(2661, 4);
    f.run_to(2661, 2664);
    f.grant(2665, 303);
    assert_eq!(
        f.t.bsrs,
        vec![(100, BsrKind::Regular, 1500), (2661, BsrKind::Regular, 300)]
    );
    assert_eq!(f.t.data, vec![(104, 1500), (2665, 300)]);
    assert_eq!(f.buffer, 0);
    // The eNB reads the levels: 1500 → index 33 (≤ 1552), 300 → index 23 (≤ 321).
    assert_eq!((bsr_index(1500), bsr_index(300)), (33, 23));
}

/// Figure 7 (periodicBSR-Timer sf5): 10,000 B at T99, the BSR at T100, 1,000 B at T101, 1,000 B
/// grants received at T102, T107 and T116. The first carries only data (periodicBSR-Timer,
/// started at T100, expires at T105); every later grant carries a periodic BSR (the timer
/// restarts with each one and has expired again by the next grant): signalling in every
/// grant. The figure's reports are 9,010 and 8,020 B (a 10-byte BSR); here 9,008 and 8,013
/// (2-byte BSR, 3-byte subheader).
#[test]
fn test_figure7_short_periodic_timer_puts_a_bsr_in_every_grant() {
    let mut f = Flow::new(5, false);
    f.arrive(99, 10_000);
    f.run_to(99, 99);
    f.grant(100, 4);
    f.arrive(101, 1000);
    f.run_to(100, 101);
    f.grant(102, 1000);
    f.run_to(102, 106);
    assert_eq!(f.ue.counters().periodic_bsr_expiries, 1, "T105");
    f.grant(107, 1000);
    f.run_to(107, 115);
    f.grant(116, 1000);
    assert_eq!(
        f.t.bsrs,
        vec![
            (100, BsrKind::Regular, 10_000),
            (107, BsrKind::Periodic, 9008),
            (116, BsrKind::Periodic, 8013)
        ]
    );
    assert_eq!(f.t.data, vec![(102, 997), (107, 995), (116, 995)]);
    assert_eq!(f.t.srs, vec![99]);
    // Counted: 3 BSRs for 3 grants of data (the signalling cost of short timers).
    assert_eq!(f.ue.counters().bsr_periodic, 2);
}

/// Figure 9's flow up to its second grant: 1,500 B at T99, the BSR at T100, 300 B at T102,
/// grants of 1,000 B (T104) and 500 B (T109); periodicBSR-Timer sf10.
fn figure9_grants(enhanced: bool) -> Flow {
    let mut f = Flow::new(10, enhanced);
    f.arrive(99, 1500);
    f.run_to(99, 99);
    f.grant(100, 4);
    f.run_to(100, 101);
    f.arrive(102, 300);
    f.run_to(102, 103);
    f.grant(104, 1000);
    f.run_to(104, 108);
    f.grant(109, 500);
    f
}

/// Figure 9 (the enhancement; periodicBSR-Timer sf10): as Figure 6 but the eNB grants 1,000 B
/// (T104) then 500 B (T109). With the second grant the grants since the last BSR (1,500) reach
/// what it reported (1,500) while data remains: a regular BSR rides in it (the figure's
/// "490 B + BSR of 390 B"; here 495 B + a BSR of 308 B), and the rest goes at T115: no wait
/// for retxBSR-Timer.
#[test]
fn test_figure9_enhancement_sends_a_regular_bsr_once_the_report_is_granted() {
    let mut f = figure9_grants(true);
    f.run_to(109, 114);
    f.grant(115, 311);
    f.run_to(115, 3000);
    assert_eq!(
        f.t.bsrs,
        vec![(100, BsrKind::Regular, 1500), (109, BsrKind::Regular, 308)]
    );
    assert_eq!(f.t.data, vec![(104, 997), (109, 495), (115, 308)]);
    assert_eq!(f.buffer, 0);
    assert_eq!(f.ue.counters().bsr_enhanced, 1);
    // retxBSR-Timer (from the T109 BSR) runs out at T2669 on an empty buffer: no BSR, no SR.
    assert_eq!((f.t.retx_expiries, f.t.srs.clone()), (1, vec![99]));
}

/// Figure 9's grants without the enhancement: the 500 B grant at T109 comes before
/// periodicBSR-Timer expires (T110), so it carries no BSR and leaves 306 B that nobody reported:
/// the Figure 6 stall, until retxBSR-Timer at T2660.
#[test]
fn test_figure9_grants_without_the_enhancement_stall() {
    let mut f = figure9_grants(false);
    f.run_to(109, 2659);
    assert_eq!(f.t.bsrs, vec![(100, BsrKind::Regular, 1500)]);
    assert_eq!(f.t.data, vec![(104, 997), (109, 497)]);
    assert_eq!((f.buffer, f.t.srs.clone()), (306, vec![99]));
    f.run_to(2660, 2660);
    assert_eq!((f.t.retx_expiries, f.t.srs.clone()), (1, vec![99, 2660]));
}
