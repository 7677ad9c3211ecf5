//! RLC AM/UM between stub MAC and PDCP neighbours (ns-3 `lte-test-rlc-am-*` style):
//! byte-exact segmentation for given transmit opportunities, timers at exact times, and
//! in-order exactly-once delivery with transport-block losses injected.

use rantcp_core::{Duration, Rng, Time};
use rantcp_ran::rlc::{
    Field, Nack, RlcConfig, RlcEntity, RlcLayout, RlcPdu, RlcPduBody, RlcSdu, StatusPdu,
};

fn ms(x: u64) -> Time {
    Time::from_millis(x)
}

fn sdu(id: u64, bytes: u32) -> RlcSdu {
    RlcSdu { sdu_id: id, bytes }
}

fn f(id: u64, sdu_bytes: u32, off: u32, len: u32, uoff: u32) -> Field {
    Field {
        sdu_id: id,
        sdu_bytes,
        sdu_offset: off,
        len,
        unit_offset: uoff,
    }
}

#[test]
fn test_lte_am_segmentation_byte_exact() {
    let mut e = RlcEntity::new(RlcConfig::am_lte(1, 3));
    assert!(e.handle_sdu(ms(0), sdu(10, 1500)));
    assert!(e.handle_sdu(ms(0), sdu(11, 40)));

    let p = e.tx_opportunity(ms(1), 500);
    assert_eq!(p.len(), 1);
    let d = p[0].as_data().unwrap();
    assert_eq!(
        (p[0].bytes, p[0].header_bytes, d.sn, d.so, d.len),
        (500, 2, 0, 0, 498)
    );
    assert_eq!(d.fi(), 0b01);
    assert!(!d.has_so && d.last && !d.poll);
    assert_eq!(d.fields, vec![f(10, 1500, 0, 498, 0)]);

    let p = e.tx_opportunity(ms(2), 1000);
    let d = p[0].as_data().unwrap();
    assert_eq!(
        (p[0].bytes, p[0].header_bytes, d.sn, d.len),
        (1000, 2, 1, 998)
    );
    assert_eq!(d.fi(), 0b11);
    assert_eq!(d.fields, vec![f(10, 1500, 498, 998, 0)]);

    // 4 bytes of SDU 10 + all of SDU 11: 2-byte fixed header + one E/LI pair (12 bits → 2 bytes).
    let p = e.tx_opportunity(ms(3), 100);
    assert_eq!(p.len(), 1);
    let d = p[0].as_data().unwrap();
    assert_eq!((p[0].bytes, p[0].header_bytes, d.sn, d.len), (48, 4, 2, 44));
    assert_eq!(d.fi(), 0b10);
    assert_eq!(d.fields, vec![f(10, 1500, 1496, 4, 0), f(11, 40, 0, 40, 4)]);
    // Both buffers empty after this PDU → poll (36.322 §5.2.2.1).
    assert!(d.poll);
    assert_eq!(e.tx_queue_bytes(), 0);
}

#[test]
fn test_lte_am_li_bytes_for_many_fields() {
    // Five 10-byte SDUs in one PDU: 2 + ceil(4·12/8) = 8 header bytes.
    let mut e = RlcEntity::new(RlcConfig::am_lte(1, 3));
    for i in 0..5 {
        e.handle_sdu(ms(0), sdu(i, 10));
    }
    let p = e.tx_opportunity(ms(1), 1000);
    assert_eq!((p[0].bytes, p[0].header_bytes), (58, 8));
    // Three fields: 2 + ceil(24/8) = 5.
    let mut e = RlcEntity::new(RlcConfig::am_lte(1, 3));
    for i in 0..3 {
        e.handle_sdu(ms(0), sdu(i, 10));
    }
    assert_eq!(e.tx_opportunity(ms(1), 1000)[0].header_bytes, 5);
}

#[test]
fn test_lte_am_no_concatenation_after_field_longer_than_li() {
    let mut e = RlcEntity::new(RlcConfig::am_lte(1, 3));
    e.handle_sdu(ms(0), sdu(0, 3000));
    e.handle_sdu(ms(0), sdu(1, 100));
    let p = e.tx_opportunity(ms(1), 5000);
    // First PDU carries SDU 0 alone (its length does not fit an 11-bit LI), second SDU 1.
    assert_eq!(p.len(), 2);
    assert_eq!((p[0].bytes, p[0].header_bytes), (3002, 2));
    assert_eq!((p[1].bytes, p[1].header_bytes), (102, 2));
}

fn nr_rlc_only(mut cfg: RlcConfig) -> RlcConfig {
    // Opportunities count RLC bytes only (no NR MAC subheader per PDU).
    cfg.mac_subheader_per_pdu = false;
    cfg
}

#[test]
fn test_nr_am_segmentation_byte_exact() {
    let mut e = RlcEntity::new(nr_rlc_only(RlcConfig::am_nr(1, 4))); // 18-bit SN: 3-byte header
    e.handle_sdu(ms(0), sdu(10, 1500));
    e.handle_sdu(ms(0), sdu(11, 40));
    let p = e.tx_opportunity(ms(1), 500);
    let d = p[0].as_data().unwrap();
    assert_eq!(
        (
            p[0].bytes,
            p[0].header_bytes,
            d.sn,
            d.so,
            d.len,
            d.has_so,
            d.last
        ),
        (500, 3, 0, 0, 497, false, false)
    );
    let p = e.tx_opportunity(ms(2), 1000);
    let d = p[0].as_data().unwrap();
    assert_eq!(
        (p[0].bytes, p[0].header_bytes, d.sn, d.so, d.len, d.has_so),
        (1000, 5, 0, 497, 995, true)
    );
    let p = e.tx_opportunity(ms(3), 100);
    assert_eq!(p.len(), 2);
    let d0 = p[0].as_data().unwrap();
    assert_eq!(
        (p[0].bytes, p[0].header_bytes, d0.sn, d0.so, d0.len, d0.last),
        (13, 5, 0, 1492, 8, true)
    );
    let d1 = p[1].as_data().unwrap();
    assert_eq!(
        (p[1].bytes, p[1].header_bytes, d1.sn, d1.so, d1.len, d1.last),
        (43, 3, 1, 0, 40, true)
    );
    assert!(d1.poll && !d0.poll);

    // 12-bit SN: 2-byte header.
    let mut cfg = nr_rlc_only(RlcConfig::am_nr(1, 4));
    cfg.layout = RlcLayout::Nr12;
    cfg.window_size = 2048;
    let mut e = RlcEntity::new(cfg);
    e.handle_sdu(ms(0), sdu(1, 100));
    assert_eq!(e.tx_opportunity(ms(1), 60)[0].header_bytes, 2);
    assert_eq!(e.tx_opportunity(ms(1), 60)[0].header_bytes, 4);
}

#[test]
fn test_nr_um_headers() {
    let mut e = RlcEntity::new(nr_rlc_only(RlcConfig::um_nr(1, 5)));
    e.handle_sdu(ms(0), sdu(1, 100));
    e.handle_sdu(ms(0), sdu(2, 300));
    let p = e.tx_opportunity(ms(1), 250);
    // Complete SDU: 1-byte header; first segment of SDU 2: 2-byte header (12-bit SN).
    assert_eq!(
        p.iter()
            .map(|p| (p.bytes, p.header_bytes))
            .collect::<Vec<_>>(),
        vec![(101, 1), (149, 2)]
    );
    let p = e.tx_opportunity(ms(2), 1000);
    assert_eq!((p[0].bytes, p[0].header_bytes), (157, 4)); // 153 bytes left + SN + SO
}

#[test]
fn test_lte_am_resegmentation_byte_exact() {
    let mut tx = RlcEntity::new(RlcConfig::am_lte(1, 3));
    tx.handle_sdu(ms(0), sdu(10, 1500));
    tx.handle_sdu(ms(0), sdu(11, 40));
    tx.tx_opportunity(ms(1), 500);
    tx.tx_opportunity(ms(2), 1000);
    tx.tx_opportunity(ms(3), 100); // SN 2 (44 data bytes) is "lost"
    let st = RlcPdu {
        bytes: 4,
        header_bytes: 4,
        body: RlcPduBody::Status(StatusPdu {
            ack_sn: 3,
            nacks: vec![Nack { sn: 2, so: None }],
        }),
    };
    tx.handle_pdu(ms(20), &st);
    // 44 bytes + 4-byte segment header + 3 bytes allowance for a MAC subheader.
    assert_eq!(tx.buffer_status(ms(20)).retx_queue_bytes, 44 + 4 + 3);
    // 20 bytes: AMD PDU segment header 4 + one LI (2) → 14 data bytes spanning both SDUs.
    let p = tx.tx_opportunity(ms(21), 20);
    let d = p[0].as_data().unwrap();
    assert_eq!(
        (
            p[0].bytes,
            p[0].header_bytes,
            d.sn,
            d.so,
            d.len,
            d.has_so,
            d.last,
            d.is_retx
        ),
        (20, 6, 2, 0, 14, true, false, true)
    );
    assert_eq!(d.fields, vec![f(10, 1500, 1496, 4, 0), f(11, 40, 0, 10, 4)]);
    let p = tx.tx_opportunity(ms(22), 100);
    let d = p[0].as_data().unwrap();
    assert_eq!(
        (p[0].bytes, p[0].header_bytes, d.so, d.len, d.last),
        (34, 4, 14, 30, true)
    );
    assert_eq!(tx.counters().retx_pdus, 2);
    // Whole-PDU retransmission keeps the original AMD PDU header.
    tx.handle_pdu(ms(40), &st);
    let p = tx.tx_opportunity(ms(41), 100);
    assert_eq!(
        (
            p[0].bytes,
            p[0].header_bytes,
            p[0].as_data().unwrap().has_so
        ),
        (48, 4, false)
    );
}

#[test]
fn test_byte_limit_drops_counted() {
    let mut cfg = RlcConfig::am_lte(1, 3);
    cfg.max_tx_buffer_bytes = 5000;
    let mut e = RlcEntity::new(cfg);
    let accepted: Vec<bool> = (0..10).map(|i| e.handle_sdu(ms(0), sdu(i, 1000))).collect();
    assert_eq!(
        accepted,
        [true, true, true, true, true, false, false, false, false, false]
    );
    assert_eq!(e.counters().sdus_dropped, 5);
    assert_eq!(e.counters().sdu_bytes_dropped, 5000);
    assert_eq!(e.tx_queue_bytes(), 5000);
    // Space freed by transmission is usable again.
    e.tx_opportunity(ms(1), 1002);
    assert!(e.handle_sdu(ms(1), sdu(10, 1000)));
    assert!(!e.handle_sdu(ms(1), sdu(11, 1)));
    assert_eq!(e.counters().sdus_dropped, 6);
}

#[test]
fn test_poll_retransmit_timer_exact() {
    let cfg = RlcConfig::am_lte(1, 3); // t-PollRetransmit 45 ms
    let mut tx = RlcEntity::new(cfg);
    tx.handle_sdu(ms(0), sdu(1, 100));
    tx.handle_sdu(ms(0), sdu(2, 100));
    let p = tx.tx_opportunity(ms(5), 102);
    assert!(!p[0].as_data().unwrap().poll);
    let p = tx.tx_opportunity(ms(6), 102);
    assert!(p[0].as_data().unwrap().poll);
    assert_eq!(tx.poll_timeout(), Some(ms(51)));
    tx.handle_timeout(ms(50));
    assert_eq!(tx.counters().poll_retransmit_expiries, 0);
    tx.handle_timeout(ms(51));
    assert_eq!(tx.counters().poll_retransmit_expiries, 1);
    // Buffers empty: the highest SN is retransmitted with the poll bit (§5.2.2.3).
    let p = tx.tx_opportunity(ms(52), 500);
    let d = p[0].as_data().unwrap();
    assert_eq!((d.sn, d.is_retx, d.poll), (1, true, true));
    assert_eq!(tx.poll_timeout(), Some(ms(97)));
    // A STATUS acknowledging POLL_SN stops the timer.
    let st = RlcPdu {
        bytes: 2,
        header_bytes: 2,
        body: RlcPduBody::Status(StatusPdu {
            ack_sn: 2,
            nacks: vec![],
        }),
    };
    tx.handle_pdu(ms(60), &st);
    assert_eq!(tx.poll_timeout(), None);
    assert_eq!(tx.unacked_sns(), 0);
}

#[test]
fn test_status_prohibit_and_reordering_timers_exact() {
    let cfg = RlcConfig::am_lte(1, 3); // t-StatusProhibit 10 ms, t-Reordering 35 ms
    let mut tx = RlcEntity::new(cfg.clone());
    let mut rx = RlcEntity::new(cfg);
    for i in 0..4 {
        tx.handle_sdu(ms(0), sdu(i, 100));
    }
    let pdus: Vec<RlcPdu> = (0..4).flat_map(|i| tx.tx_opportunity(ms(i), 102)).collect();
    assert!(pdus[3].as_data().unwrap().poll);
    rx.handle_pdu(ms(4), &pdus[0]);
    assert_eq!(rx.pop_delivered(), Some(0));
    rx.handle_pdu(ms(5), &pdus[2]); // SN 1 missing → t-Reordering until 40 ms
    assert_eq!(rx.poll_timeout(), Some(ms(40)));
    rx.handle_pdu(ms(6), &pdus[3]); // poll, but SN 3 ≥ VR(MS): status waits
    assert_eq!(rx.buffer_status(ms(6)).status_pdu_bytes, 0);
    rx.handle_timeout(ms(39));
    assert_eq!(rx.buffer_status(ms(39)).status_pdu_bytes, 0);
    rx.handle_timeout(ms(40));
    // ACK_SN 4, NACK_SN 1: 15 + 12 bits → 4 bytes.
    assert_eq!(rx.buffer_status(ms(40)).status_pdu_bytes, 4);
    let st = rx.tx_opportunity(ms(41), 100);
    assert_eq!(st.len(), 1);
    assert_eq!(
        st[0].as_status().unwrap(),
        &StatusPdu {
            ack_sn: 4,
            nacks: vec![Nack { sn: 1, so: None }]
        }
    );
    // A second trigger inside t-StatusProhibit (41..51 ms) waits for its end.
    rx.handle_pdu(ms(42), &pdus[3]); // duplicate with poll → trigger
    assert_eq!(rx.buffer_status(ms(42)).status_pdu_bytes, 0);
    assert!(rx.tx_opportunity(ms(42), 100).is_empty());
    assert_eq!(rx.poll_timeout(), Some(ms(51)));
    rx.handle_timeout(ms(51));
    assert_eq!(rx.buffer_status(ms(51)).status_pdu_bytes, 4);
    // Retransmission closes the hole; delivery in order.
    tx.handle_pdu(ms(45), &st[0]);
    let re = tx.tx_opportunity(ms(46), 200);
    assert_eq!(re[0].as_data().unwrap().sn, 1);
    rx.handle_pdu(ms(50), &re[0]);
    let got: Vec<u64> = std::iter::from_fn(|| rx.pop_delivered()).collect();
    assert_eq!(got, vec![1, 2, 3]);
}

#[test]
fn test_status_truncated_to_opportunity() {
    let cfg = RlcConfig::am_lte(1, 3);
    let mut tx = RlcEntity::new(cfg.clone());
    let mut rx = RlcEntity::new(cfg);
    for i in 0..10 {
        tx.handle_sdu(ms(0), sdu(i, 100));
    }
    let pdus: Vec<RlcPdu> = (0..10)
        .flat_map(|i| tx.tx_opportunity(ms(i), 102))
        .collect();
    for (i, p) in pdus.iter().enumerate() {
        if i % 2 == 1 {
            rx.handle_pdu(ms(10), p);
        }
    }
    // t-Reordering (started at SN 1, VR(X) = 2) first moves VR(MS) to 2 only, restarts with
    // VR(X) = 10 and moves VR(MS) to 10 at its second expiry (36.322 §5.1.3.2.4).
    rx.handle_timeout(ms(45));
    assert_eq!(rx.buffer_status(ms(45)).status_pdu_bytes, 4);
    assert_eq!(rx.poll_timeout(), Some(ms(80)));
    rx.handle_timeout(ms(80));
    // Full report: ACK_SN 10, NACKs 0,2,4,6,8 → 15 + 60 bits = 10 bytes. Give 6 bytes:
    // 15 + 12·2 = 39 bits → 5 bytes; 3 NACKs need 51 bits → 7 bytes.
    assert_eq!(rx.buffer_status(ms(80)).status_pdu_bytes, 10);
    let st = rx.tx_opportunity(ms(80), 6);
    let s = st[0].as_status().unwrap();
    assert_eq!(st[0].bytes, 5);
    assert_eq!(s.ack_sn, 4);
    assert_eq!(s.nacks.iter().map(|n| n.sn).collect::<Vec<_>>(), vec![0, 2]);
}

/// Drives a DL AM (or UM) bearer between an eNB-side and a UE-side entity through a stub MAC
/// with a fixed air delay; every `k_dl`-th DL PDU and `k_ul`-th UL PDU is lost (HARQ failure).
fn run_lossy(
    cfg: RlcConfig,
    n: u64,
    k_dl: u64,
    k_ul: u64,
    seed: u64,
) -> (Vec<u64>, RlcEntity, RlcEntity) {
    let mut rng = Rng::new(seed, 7);
    let mut enb = RlcEntity::new(cfg.clone());
    let mut ue = RlcEntity::new(cfg);
    let mut air_dl: Vec<(Time, RlcPdu)> = Vec::new();
    let mut air_ul: Vec<(Time, RlcPdu)> = Vec::new();
    let (mut ndl, mut nul) = (0u64, 0u64);
    let mut next_sdu = 0u64;
    let mut delivered = Vec::new();
    let delay = Duration::from_millis(4);
    let mut t = Time::ZERO;
    let mut out = Vec::new();
    for _tti in 0..200_000 {
        t += Duration::from_millis(1);
        // Stub PDCP: a few SDUs per TTI.
        for _ in 0..rng.below(3) {
            if next_sdu < n {
                let b = 20 + rng.below(1481) as u32;
                assert!(enb.handle_sdu(t, sdu(next_sdu, b)));
                next_sdu += 1;
            }
        }
        for e in [&mut enb, &mut ue] {
            if e.poll_timeout().is_some_and(|x| x <= t) {
                e.handle_timeout(t);
            }
        }
        // Air interface arrivals.
        air_dl.retain(|(at, p)| {
            if *at <= t {
                ue.handle_pdu(t, p);
                false
            } else {
                true
            }
        });
        air_ul.retain(|(at, p)| {
            if *at <= t {
                enb.handle_pdu(t, p);
                false
            } else {
                true
            }
        });
        while let Some(id) = ue.pop_delivered() {
            delivered.push(id);
        }
        // Stub MAC: DL opportunity of random size, UL opportunity when something is waiting.
        out.clear();
        let bs = enb.buffer_status(t);
        if bs.total_bytes() > 0 {
            let bytes = 50 + rng.below(3000) as u32;
            enb.handle_tx_opportunity(
                t,
                rantcp_ran::mac::TxOpportunity {
                    bytes,
                    rnti: 1,
                    lcid: 3,
                    harq_id: 0,
                },
                &mut out,
            );
            assert!(out.iter().map(|p| p.bytes).sum::<u32>() <= bytes);
            for p in out.drain(..) {
                ndl += 1;
                if ndl % k_dl != 0 {
                    air_dl.push((t + delay, p));
                }
            }
        }
        if ue.buffer_status(t).total_bytes() > 0 {
            let bytes = 5 + rng.below(40) as u32;
            ue.handle_tx_opportunity(
                t,
                rantcp_ran::mac::TxOpportunity {
                    bytes,
                    rnti: 1,
                    lcid: 3,
                    harq_id: 0,
                },
                &mut out,
            );
            for p in out.drain(..) {
                nul += 1;
                if nul % k_ul != 0 {
                    air_ul.push((t + delay, p));
                }
            }
        }
        if next_sdu == n
            && delivered.len() as u64 == n
            && air_dl.is_empty()
            && air_ul.is_empty()
            && enb.unacked_sns() == 0
        {
            break;
        }
        if enb.cfg.mode == rantcp_ran::rlc::RlcMode::Um
            && next_sdu == n
            && enb.buffer_status(t).total_bytes() == 0
            && air_dl.is_empty()
            && t > ms(n + 2000)
        {
            break;
        }
    }
    (delivered, enb, ue)
}

#[test]
fn test_am_lossy_every_sdu_once_in_order() {
    for (layout, seed) in [
        (RlcLayout::Lte, 1),
        (RlcLayout::Nr18, 2),
        (RlcLayout::Nr12, 3),
    ] {
        for (k_dl, k_ul) in [(7, 5), (3, 2), (1000, 4)] {
            let mut cfg = match layout {
                RlcLayout::Lte => RlcConfig::am_lte(1, 3),
                _ => RlcConfig::am_nr(1, 3),
            };
            cfg.layout = layout;
            if layout == RlcLayout::Nr12 {
                cfg.window_size = 2048;
            }
            let (got, enb, ue) = run_lossy(cfg, 3000, k_dl, k_ul, seed);
            let want: Vec<u64> = (0..3000).collect();
            assert_eq!(got.len(), want.len(), "{layout:?} k_dl={k_dl} k_ul={k_ul}");
            assert_eq!(got, want, "{layout:?} k_dl={k_dl}");
            assert!(enb.counters().retx_pdus > 0);
            assert!(ue.counters().status_pdus_tx > 0);
            assert_eq!(enb.unacked_sns(), 0, "{layout:?}: everything acknowledged");
        }
    }
}

#[test]
fn test_um_lossy_in_order_no_duplicates() {
    for cfg in [RlcConfig::um_lte(1, 3), RlcConfig::um_nr(1, 3)] {
        let (got, _enb, ue) = run_lossy(cfg.clone(), 2000, 9, 1000, 11);
        assert!(
            got.windows(2).all(|w| w[0] < w[1]),
            "{:?}: in order, no duplicates",
            cfg.layout
        );
        assert!(
            got.len() > 1500 && got.len() < 2000,
            "{:?}: {} delivered",
            cfg.layout,
            got.len()
        );
        assert!(ue.counters().sdus_lost_um > 0);
        // Without losses everything arrives.
        let (got, _, _) = run_lossy(cfg, 2000, u64::MAX, u64::MAX, 12);
        assert_eq!(got, (0..2000).collect::<Vec<_>>());
    }
}

/// Random losses, duplicates and reordering (delay 1..=`max_delay_ms`) in both directions.
fn run_random(
    cfg: RlcConfig,
    n: u64,
    p_loss: f64,
    p_dup: f64,
    max_delay_ms: u64,
    seed: u64,
) -> (Vec<u64>, RlcEntity, RlcEntity, Time) {
    let mut rng = Rng::new(seed, 99);
    let mut enb = RlcEntity::new(cfg.clone());
    let mut ue = RlcEntity::new(cfg.clone());
    let mut air_dl: Vec<(Time, RlcPdu)> = Vec::new();
    let mut air_ul: Vec<(Time, RlcPdu)> = Vec::new();
    let mut next_sdu = 0u64;
    let mut delivered = Vec::new();
    let mut t = Time::ZERO;
    let mut out = Vec::new();
    let send = |rng: &mut Rng, air: &mut Vec<(Time, RlcPdu)>, t: Time, p: RlcPdu| {
        if rng.bernoulli(p_loss) {
            return;
        }
        if rng.bernoulli(p_dup) {
            air.push((
                t + Duration::from_millis(1 + rng.below(max_delay_ms)),
                p.clone(),
            ));
        }
        air.push((t + Duration::from_millis(1 + rng.below(max_delay_ms)), p));
    };
    for _ in 0..100_000 {
        t += Duration::from_millis(1);
        if next_sdu < n {
            for _ in 0..rng.below(4) {
                if next_sdu < n && enb.handle_sdu(t, sdu(next_sdu, 1 + rng.below(3000) as u32)) {
                    next_sdu += 1;
                }
            }
        }
        for e in [&mut enb, &mut ue] {
            if e.poll_timeout().is_some_and(|x| x <= t) {
                e.handle_timeout(t);
            }
        }
        // Deliver due PDUs in a shuffled order.
        let mut due: Vec<RlcPdu> = Vec::new();
        air_dl.retain(|(at, p)| {
            if *at <= t {
                due.push(p.clone());
                false
            } else {
                true
            }
        });
        for p in due.drain(..) {
            ue.handle_pdu(t, &p);
        }
        air_ul.retain(|(at, p)| {
            if *at <= t {
                due.push(p.clone());
                false
            } else {
                true
            }
        });
        for p in due.drain(..) {
            enb.handle_pdu(t, &p);
        }
        while let Some(id) = ue.pop_delivered() {
            delivered.push(id);
        }
        out.clear();
        if enb.buffer_status(t).total_bytes() > 0 {
            let bytes = 3 + rng.below(4000) as u32;
            enb.handle_tx_opportunity(
                t,
                rantcp_ran::mac::TxOpportunity {
                    bytes,
                    rnti: 1,
                    lcid: 3,
                    harq_id: 0,
                },
                &mut out,
            );
            assert!(out.iter().map(|p| p.bytes).sum::<u32>() <= bytes);
            for p in out.drain(..) {
                send(&mut rng, &mut air_dl, t, p);
            }
        }
        if ue.buffer_status(t).total_bytes() > 0 {
            let bytes = 3 + rng.below(60) as u32;
            ue.handle_tx_opportunity(
                t,
                rantcp_ran::mac::TxOpportunity {
                    bytes,
                    rnti: 1,
                    lcid: 3,
                    harq_id: 0,
                },
                &mut out,
            );
            for p in out.drain(..) {
                send(&mut rng, &mut air_ul, t, p);
            }
        }
        let idle =
            air_dl.is_empty() && air_ul.is_empty() && enb.buffer_status(t).total_bytes() == 0;
        if next_sdu == n
            && idle
            && (cfg.mode == rantcp_ran::rlc::RlcMode::Um || enb.unacked_sns() == 0)
            && ue.poll_timeout().is_none()
        {
            break;
        }
    }
    (delivered, enb, ue, t)
}

#[test]
fn test_am_random_loss_duplication_reordering() {
    for (i, layout) in [RlcLayout::Lte, RlcLayout::Nr12, RlcLayout::Nr18]
        .into_iter()
        .enumerate()
    {
        for seed in 0..4u64 {
            let mut cfg = if layout == RlcLayout::Lte {
                RlcConfig::am_lte(1, 3)
            } else {
                RlcConfig::am_nr(1, 3)
            };
            cfg.layout = layout;
            if layout == RlcLayout::Nr12 {
                cfg.window_size = 2048;
            }
            let (got, enb, ue, t) = run_random(cfg, 1500, 0.15, 0.05, 12, 100 * i as u64 + seed);
            assert_eq!(
                got,
                (0..1500).collect::<Vec<_>>(),
                "{layout:?} seed {seed} ({t})"
            );
            assert_eq!(enb.unacked_sns(), 0);
            assert!(ue.counters().duplicate_pdus_rx > 0);
            assert!(enb.counters().max_retx_reached == 0 || enb.counters().retx_pdus > 0);
        }
    }
}

#[test]
fn test_um_random_loss_duplication_reordering() {
    // LTE UM delivers in SN order (a PDU arriving after t-Reordering, 35 ms, moved past its SN
    // is discarded); NR UM delivers complete SDUs at once, possibly out of order, and loses a
    // segmented SDU whose segment arrives after t-Reassembly gave up on it (5 ms < the 12 ms
    // reordering depth here; with 35 ms it fares like LTE). NR UMD PDUs with a complete SDU
    // carry no SN, so a duplicated one would be delivered twice, as in 38.322: no duplicates
    // are injected for NR.
    let mut nr_slow = RlcConfig::um_nr(1, 3);
    nr_slow.t_reassembly = Duration::from_millis(35);
    for (i, (cfg, p_dup, min_ok)) in [
        (RlcConfig::um_lte(1, 3), 0.05, 1300),
        (RlcConfig::um_nr(1, 3), 0.0, 1000),
        (nr_slow, 0.0, 1300),
    ]
    .into_iter()
    .enumerate()
    {
        for seed in 0..4u64 {
            let (got, _enb, ue, _) = run_random(
                cfg.clone(),
                1500,
                0.05,
                p_dup,
                12,
                1000 + 10 * i as u64 + seed,
            );
            if cfg.layout == RlcLayout::Lte {
                assert!(
                    got.windows(2).all(|w| w[0] < w[1]),
                    "{:?}: strictly increasing",
                    cfg.layout
                );
            } else {
                let mut sorted = got.clone();
                sorted.sort_unstable();
                sorted.dedup();
                assert_eq!(sorted.len(), got.len(), "no duplicates");
                assert!(
                    got.windows(2).any(|w| w[0] > w[1]),
                    "reordering shows through"
                );
            }
            eprintln!(
                "{:?} {:?} seed {seed}: {} of 1500 delivered",
                cfg.layout,
                cfg.t_reassembly,
                got.len()
            );
            assert!(got.len() > min_ok, "{:?}: {}", cfg.layout, got.len());
            assert!(ue.counters().sdus_lost_um > 0);
        }
    }
}

#[test]
fn test_nr_am_lost_middle_segment_nacked_with_so_range() {
    let cfg = nr_rlc_only(RlcConfig::am_nr(1, 4)); // 18-bit SN, t-Reassembly 5 ms, t-StatusProhibit 1 ms
    let mut tx = RlcEntity::new(cfg.clone());
    let mut rx = RlcEntity::new(cfg);
    tx.handle_sdu(ms(0), sdu(7, 1500));
    let a = tx.tx_opportunity(ms(1), 500); // SN 0 [0, 497)
    let _lost = tx.tx_opportunity(ms(2), 1000); // SN 0 [497, 1492)
    let c = tx.tx_opportunity(ms(3), 100); // SN 0 [1492, 1500), poll
    assert!(c[0].as_data().unwrap().poll);
    rx.handle_pdu(ms(5), &a[0]);
    assert_eq!(rx.poll_timeout(), None); // no byte missing before the last byte received
    rx.handle_pdu(ms(6), &c[0]);
    // Now bytes 497..1492 are missing before received bytes: t-Reassembly runs to 11 ms.
    assert_eq!(rx.poll_timeout(), Some(ms(11)));
    assert_eq!(rx.buffer_status(ms(6)).status_pdu_bytes, 0); // poll waits for RX_Highest_Status
    rx.handle_timeout(ms(11));
    // 3 (ACK_SN) + 3 (NACK_SN) + 4 (SOstart, SOend) bytes.
    assert_eq!(rx.buffer_status(ms(11)).status_pdu_bytes, 10);
    let st = rx.tx_opportunity(ms(11), 100);
    assert_eq!(
        st[0].as_status().unwrap(),
        &StatusPdu {
            ack_sn: 1,
            nacks: vec![Nack {
                sn: 0,
                so: Some((497, 1492))
            }]
        }
    );
    tx.handle_pdu(ms(13), &st[0]);
    let re = tx.tx_opportunity(ms(14), 2000);
    let d = re[0].as_data().unwrap();
    assert_eq!(
        (
            re[0].bytes,
            re[0].header_bytes,
            d.sn,
            d.so,
            d.len,
            d.is_retx,
            d.last
        ),
        (1000, 5, 0, 497, 995, true, false)
    );
    rx.handle_pdu(ms(16), &re[0]);
    assert_eq!(rx.pop_delivered(), Some(7));
    // The retransmission emptied the sender's buffers, so it carried a poll: a STATUS is due
    // once t-StatusProhibit (started at 11 ms) ends at 12 ms.
    assert!(d.poll);
    assert_eq!(rx.poll_timeout(), Some(ms(12)));
    rx.handle_timeout(ms(12));
    let st = rx.tx_opportunity(ms(12), 100);
    assert_eq!(
        st[0].as_status().unwrap(),
        &StatusPdu {
            ack_sn: 1,
            nacks: vec![]
        }
    );
    tx.handle_pdu(ms(14), &st[0]);
    assert_eq!((tx.unacked_sns(), tx.poll_timeout()), (0, None));
}

#[test]
fn test_poll_pdu_and_poll_byte_thresholds() {
    // pollPDU = 4: every 4th new PDU polls while data remains (36.322 §5.2.2.1).
    let mut cfg = RlcConfig::am_lte(1, 3);
    cfg.poll_pdu = 4;
    cfg.poll_byte = u64::MAX;
    let mut tx = RlcEntity::new(cfg);
    for i in 0..20 {
        tx.handle_sdu(ms(0), sdu(i, 100));
    }
    let polls: Vec<bool> = (0..10)
        .map(|i| tx.tx_opportunity(ms(i), 102)[0].as_data().unwrap().poll)
        .collect();
    assert_eq!(
        polls,
        [false, false, false, true, false, false, false, true, false, false]
    );
    assert_eq!(tx.counters().polls_tx, 2);

    // pollByte = 1000: the PDU that brings BYTE_WITHOUT_POLL to ≥ 1000 polls.
    let mut cfg = RlcConfig::am_lte(1, 3);
    cfg.poll_pdu = u32::MAX;
    cfg.poll_byte = 1000;
    let mut tx = RlcEntity::new(cfg);
    tx.handle_sdu(ms(0), sdu(0, 10_000));
    let polls: Vec<bool> = (0..6)
        .map(|i| tx.tx_opportunity(ms(i), 302)[0].as_data().unwrap().poll)
        .collect();
    assert_eq!(polls, [false, false, false, true, false, false]); // 300, 600, 900, 1200 → poll
}

#[test]
fn test_max_retx_threshold_counted() {
    let mut cfg = RlcConfig::am_lte(1, 3);
    cfg.max_retx_threshold = 2;
    let mut tx = RlcEntity::new(cfg);
    tx.handle_sdu(ms(0), sdu(0, 100));
    tx.handle_sdu(ms(0), sdu(1, 100));
    tx.tx_opportunity(ms(1), 102);
    tx.tx_opportunity(ms(2), 102);
    let nack0 = RlcPdu {
        bytes: 4,
        header_bytes: 4,
        body: RlcPduBody::Status(StatusPdu {
            ack_sn: 2,
            nacks: vec![Nack { sn: 0, so: None }],
        }),
    };
    // RETX_COUNT: 0 on the first NACK, then 1, 2 → threshold reached once.
    for k in 0..4u64 {
        tx.handle_pdu(ms(10 + 10 * k), &nack0);
        assert_eq!(
            tx.tx_opportunity(ms(11 + 10 * k), 200)[0]
                .as_data()
                .unwrap()
                .sn,
            0
        );
        assert_eq!(
            tx.counters().max_retx_reached,
            if k >= 2 { 1 } else { 0 },
            "k = {k}"
        );
    }
    assert_eq!(tx.counters().retx_pdus, 4);
    // SN 1 was acknowledged, SN 0 is still outstanding.
    assert_eq!(tx.unacked_sns(), 2);
}

#[test]
fn test_nr_opportunity_includes_mac_subheader_per_pdu() {
    // NR: every RLC PDU is its own MAC subPDU (2-byte subheader below 256 bytes, else 3).
    let mut e = RlcEntity::new(RlcConfig::am_nr(1, 4));
    e.handle_sdu(ms(0), sdu(10, 1500));
    e.handle_sdu(ms(0), sdu(11, 40));
    let sizes = |p: &[RlcPdu]| {
        p.iter()
            .map(|p| (p.bytes, p.header_bytes))
            .collect::<Vec<_>>()
    };
    let p = e.tx_opportunity(ms(1), 500);
    assert_eq!(sizes(&p), vec![(497, 3)]); // + 3 = 500
    let p = e.tx_opportunity(ms(2), 1000);
    assert_eq!(sizes(&p), vec![(997, 5)]); // + 3 = 1000
    let p = e.tx_opportunity(ms(3), 100);
    assert_eq!(sizes(&p), vec![(19, 5), (43, 3)]); // 14 + 40 data bytes; + 2 + 2 = 66
    let d = p[0].as_data().unwrap();
    assert_eq!((d.so, d.len, d.last), (1486, 14, true));
    assert_eq!(e.buffer_status(ms(3)).total_bytes(), 0);
    // The buffer status includes the per-PDU subheader: 100 + 3 (RLC) + 3 (MAC).
    e.handle_sdu(ms(4), sdu(12, 100));
    assert_eq!(e.buffer_status(ms(4)).tx_queue_bytes, 106);
    let p = e.tx_opportunity(ms(5), 106);
    assert_eq!(sizes(&p), vec![(103, 3)]);
}

#[test]
fn test_window_stall_polls_and_resumes() {
    let mut cfg = RlcConfig::am_lte(1, 3);
    cfg.window_size = 4;
    cfg.poll_pdu = u32::MAX;
    cfg.poll_byte = u64::MAX;
    let mut tx = RlcEntity::new(cfg);
    for i in 0..10 {
        tx.handle_sdu(ms(0), sdu(i, 100));
    }
    let polls: Vec<bool> = (0..4)
        .map(|i| tx.tx_opportunity(ms(i), 102)[0].as_data().unwrap().poll)
        .collect();
    // The PDU that fills the window carries the poll (36.322 §5.2.2.1 window stall).
    assert_eq!(polls, [false, false, false, true]);
    assert!(tx.tx_opportunity(ms(5), 1000).is_empty());
    assert_eq!(tx.buffer_status(ms(5)).tx_queue_bytes, 6 * 102);
    let st = RlcPdu {
        bytes: 2,
        header_bytes: 2,
        body: RlcPduBody::Status(StatusPdu {
            ack_sn: 2,
            nacks: vec![],
        }),
    };
    tx.handle_pdu(ms(10), &st);
    let p = tx.tx_opportunity(ms(11), 1000);
    // Two SNs free: one PDU concatenating as much as fits (the window counts SNs, not SDUs).
    assert_eq!(p.len(), 1);
    assert_eq!(p[0].as_data().unwrap().sn, 4);
    assert_eq!(p[0].as_data().unwrap().fields.len(), 6);
}

#[test]
fn test_lte_retx_segment_for_nacked_so_range() {
    // Three SDUs concatenated in one PDU (two LIs: 2 + 3 header bytes); a NACK with the SO
    // range [500, 1700) is answered by an AMD PDU segment spanning the first two SDUs.
    let mut tx = RlcEntity::new(RlcConfig::am_lte(1, 3));
    tx.handle_sdu(ms(0), sdu(0, 1000));
    tx.handle_sdu(ms(0), sdu(1, 1000));
    tx.handle_sdu(ms(0), sdu(2, 10));
    let p = tx.tx_opportunity(ms(1), 5000);
    assert_eq!(p.len(), 1);
    assert_eq!((p[0].bytes, p[0].header_bytes), (2015, 5));
    let st = RlcPdu {
        bytes: 4,
        header_bytes: 4,
        body: RlcPduBody::Status(StatusPdu {
            ack_sn: 1,
            nacks: vec![Nack {
                sn: 0,
                so: Some((500, 1700)),
            }],
        }),
    };
    tx.handle_pdu(ms(10), &st);
    // Segment [500, 1700) spans SDU 0 (500 bytes) and SDU 1 (700 bytes): 4 + 2 (one LI) header.
    let p = tx.tx_opportunity(ms(11), 5000);
    let d = p[0].as_data().unwrap();
    assert_eq!(
        (p[0].bytes, p[0].header_bytes, d.so, d.len, d.last, d.has_so),
        (1206, 6, 500, 1200, false, true)
    );
    assert_eq!(
        d.fields,
        vec![f(0, 1000, 500, 500, 500), f(1, 1000, 0, 700, 1000)]
    );
}

#[test]
fn test_buffer_status_is_enough_to_drain() {
    // Whatever state segmentation left the entity in, an opportunity of
    // `buffer_status().total_bytes()` bytes sends everything (the MAC sizes grants from it).
    let cfgs = [
        RlcConfig::am_lte(1, 3),
        RlcConfig::um_lte(1, 3),
        RlcConfig::am_nr(1, 3),
        RlcConfig::um_nr(1, 3),
        nr_rlc_only(RlcConfig::am_nr(1, 3)),
    ];
    let mut rng = Rng::new(77, 1);
    for cfg in cfgs {
        for round in 0..300 {
            let mut e = RlcEntity::new(cfg.clone());
            for i in 0..1 + rng.below(6) {
                e.handle_sdu(ms(0), sdu(i, 1 + rng.below(3000) as u32));
            }
            for k in 0..rng.below(4) {
                e.tx_opportunity(ms(1 + k), 1 + rng.below(1500) as u32);
            }
            if cfg.mode == rantcp_ran::rlc::RlcMode::Am && round % 2 == 0 {
                // NACK everything sent so far, partly with SO ranges.
                let n = e.unacked_sns();
                let nacks = (0..n)
                    .map(|sn| Nack {
                        sn,
                        so: if sn % 2 == 0 {
                            None
                        } else {
                            Some((1, u32::MAX))
                        },
                    })
                    .collect();
                let st = RlcPdu {
                    bytes: 0,
                    header_bytes: 0,
                    body: RlcPduBody::Status(StatusPdu { ack_sn: n, nacks }),
                };
                e.handle_pdu(ms(10), &st);
            }
            let before = e.buffer_status(ms(20));
            let total = before.total_bytes() as u32;
            let p = e.tx_opportunity(ms(20), total);
            assert!(p.iter().map(|p| p.bytes).sum::<u32>() <= total);
            let bs = e.buffer_status(ms(20));
            assert_eq!(
                (bs.tx_queue_bytes, bs.retx_queue_bytes),
                (0, 0),
                "{:?} {:?} round {round}: {total} bytes left {bs:?}",
                cfg.mode,
                cfg.layout
            );
        }
    }
}

#[test]
fn test_lte_second_pdu_in_opportunity_pays_mac_subheader() {
    // STATUS and data of one LTE channel in one TB are two MAC SDUs: the MAC's mux counts the
    // channel's first subheader, the RLC counts the second one (TS 36.321 §6.1.2).
    let cfg = RlcConfig::am_lte(1, 3);
    let mut a = RlcEntity::new(cfg.clone());
    let mut b = RlcEntity::new(cfg);
    a.handle_sdu(ms(0), sdu(0, 100));
    let p = a.tx_opportunity(ms(1), 102); // polls
    b.handle_pdu(ms(2), &p[0]);
    b.handle_sdu(ms(2), sdu(7, 50));
    let bs = b.buffer_status(ms(2));
    assert_eq!((bs.status_pdu_bytes, bs.tx_queue_bytes), (2, 52 + 3));
    let p = b.tx_opportunity(ms(3), 2 + 52 + 2);
    assert_eq!(p.iter().map(|p| p.bytes).collect::<Vec<_>>(), vec![2, 52]);
    assert!(p[0].as_status().is_some());
}

#[test]
fn test_um_nr_out_of_order_delivery_and_lost_ids() {
    // TS 38.322 §5.2.2.2: complete SDUs are delivered at once, a segmented SDU whose first
    // segment is lost is given up when t-Reassembly expires, and its id is reported.
    let cfg = nr_rlc_only(RlcConfig::um_nr(1, 3));
    let mut tx = RlcEntity::new(cfg.clone());
    let mut rx = RlcEntity::new(cfg);
    let t0 = Time::from_millis(1);
    for id in 0..3 {
        assert!(tx.handle_sdu(t0, sdu(id, 100)));
    }
    let a = tx.tx_opportunity(t0, 101); // SDU 0 whole (1-byte header)
    let b = tx.tx_opportunity(t0, 50); // first segment of SDU 1 (2-byte header, 48 bytes)
    let c = tx.tx_opportunity(t0, 56); // rest of SDU 1 (SN + SO: 4 bytes, 52 bytes)
    let d = tx.tx_opportunity(t0, 101); // SDU 2 whole
    assert_eq!([a.len(), b.len(), c.len(), d.len()], [1, 1, 1, 1]);
    assert_eq!(c[0].as_data().unwrap().so, 48);
    for p in a.iter().chain(&c).chain(&d) {
        rx.handle_pdu(t0, p);
    }
    assert_eq!(
        [rx.pop_delivered(), rx.pop_delivered(), rx.pop_delivered()],
        [Some(0), Some(2), None]
    );
    assert_eq!(rx.pop_lost(), None);
    assert!(!rx.delivers_in_order());
    let t = rx.poll_timeout().expect("t-Reassembly runs");
    rx.handle_timeout(t);
    assert_eq!((rx.pop_lost(), rx.pop_lost()), (Some(1), None));
    assert_eq!(rx.counters().sdus_lost_um, 1);
    // The late first segment is discarded (the window moved past its SN) and reported again.
    rx.handle_pdu(t, &b[0]);
    assert_eq!((rx.pop_delivered(), rx.pop_lost()), (None, Some(1)));
}

#[test]
fn test_front_sdu_overtakes_unsent_sdus_but_not_a_begun_one() {
    let mut e = RlcEntity::new(RlcConfig::am_lte(1, 3));
    let t0 = Time::from_millis(1);
    for id in 0..3 {
        assert!(e.handle_sdu(t0, sdu(id, 1000)));
    }
    assert_eq!(e.unsent_sdus(), 3);
    assert!(e.handle_sdu_front(t0, sdu(10, 1000)));
    assert_eq!(e.unsent_sdus(), 4);
    // 500 bytes: a 2-byte header and the first 498 bytes of SDU 10.
    let p = e.tx_opportunity(t0, 500);
    assert_eq!(p[0].as_data().unwrap().fields[0].sdu_id, 10);
    assert_eq!(e.unsent_sdus(), 3);
    // SDU 10 has begun: a new front SDU goes behind it.
    assert!(e.handle_sdu_front(t0, sdu(11, 1000)));
    // The rest of SDU 10 (502 bytes) and SDU 11 with a 4-byte header (one LI).
    let p = e.tx_opportunity(t0, 1506);
    let ids: Vec<u64> = p[0]
        .as_data()
        .unwrap()
        .fields
        .iter()
        .map(|f| f.sdu_id)
        .collect();
    assert_eq!(ids, vec![10, 11]);
    assert_eq!(e.purge_sdus(|id| id == 0), 1000);
    assert_eq!(e.unsent_sdus(), 2);
}
