//! State-by-state tests of the ACK filter: exact queue contents before and after each event.
//! ACKs are numbered by their acknowledgment number; `n` = 1000, segments of 100 bytes.

use super::*;
use rantcp_core::Duration;
use rantcp_nf::{Point, UeReport};
use rantcp_wire::{Ipv4Header, SackBlock, TcpFlags, TcpOptions};
use std::net::Ipv4Addr;

const UE: Ipv4Addr = Ipv4Addr::new(10, 1, 0, 1);
const SRV: Ipv4Addr = Ipv4Addr::new(10, 0, 0, 1);
const N: u32 = 1000;
/// PDCP + RLC header bytes per IP packet in the grants below.
const OH: u32 = 5;
/// IP length of a plain ACK (20 + 20) and its cost in a grant.
const ACK_COST: u32 = 40 + OH;

fn seg(port: u16, ack: u32, flags: TcpFlags, payload: u32) -> Packet {
    Packet::tcp(
        Ipv4Header::new(UE, SRV),
        TcpHeader {
            src_port: 49152,
            dst_port: port,
            seq: 1,
            ack,
            flags,
            window: 1000,
            urgent: 0,
            options: TcpOptions::default(),
        },
        payload,
    )
}
fn ack(a: u32) -> Packet {
    seg(5201, a, TcpFlags::ACK, 0)
}
/// ACK number `a` with header fields changed by `f`.
fn ack_with(a: u32, f: impl FnOnce(&mut TcpHeader)) -> Packet {
    let mut p = ack(a);
    f(p.as_tcp_mut().unwrap());
    p
}

fn filter(toml_text: &str) -> AckFilter {
    let c: AckFilterConfig = toml::from_str(toml_text).unwrap();
    c.validate("functions.ack_filter").unwrap();
    c.function()
}

/// A RAN view with one UE (rnti 1, cell 2): its whole-band TBS now (`full`) and mean
/// scheduled DL block (`scheduled`).
struct View {
    full: std::cell::Cell<f64>,
    scheduled: f64,
}

impl View {
    /// Both TBS values `tbs`.
    fn new(tbs: f64) -> View {
        View {
            full: std::cell::Cell::new(tbs),
            scheduled: tbs,
        }
    }
}
impl RanView for View {
    fn slot(&self) -> Duration {
        Duration::from_millis(1)
    }
    fn rntis(&self) -> &[Rnti] {
        &[1]
    }
    fn rnti_of(&self, _: Ipv4Addr) -> Option<Rnti> {
        Some(1)
    }
    fn addr_of(&self, _: Rnti) -> Option<Ipv4Addr> {
        Some(UE)
    }
    fn ue_report(&self, rnti: Rnti, _: Time) -> Option<UeReport> {
        Some(UeReport {
            rnti,
            cell: 2,
            avg_dl_tbs_bytes: self.scheduled,
            dl_full_tbs_bytes: self.full.get(),
            ..Default::default()
        })
    }
}

/// Drives one filter over one UE's buffer.
struct Bench<'v> {
    f: AckFilter,
    q: UlBuffer,
    view: Option<&'v View>,
}

impl<'v> Bench<'v> {
    fn new(toml_text: &str) -> Self {
        Bench {
            f: filter(toml_text),
            q: UlBuffer::new(0),
            view: None,
        }
    }
    fn cx(&self) -> Ctx<'v> {
        Ctx {
            now: Time::from_millis(1),
            point: Point::UeUlBuffer,
            rnti: Some(1),
            ran: self.view.map(|v| v as &dyn RanView),
        }
    }
    /// Append `p` and tell the filter.
    fn arrive(&mut self, p: Packet) {
        let id = self.q.push(Time::ZERO, p).unwrap();
        let cx = self.cx();
        self.f
            .handle_ul_buffer(&cx, BufferEvent::Arrival { id }, &mut self.q);
    }
    /// A grant with room for `acks` plain ACKs; returns the ACK numbers the owner then
    /// drains FIFO (as the radio cell does).
    fn grant(&mut self, acks: u32) -> Vec<u32> {
        let bytes = acks * ACK_COST;
        let cx = self.cx();
        let ev = BufferEvent::Grant {
            bytes,
            overhead_bytes: OH,
            rlc_bytes: 0,
            n_prb: 4,
        };
        self.f.handle_ul_buffer(&cx, ev, &mut self.q);
        let mut have = 0u64;
        let mut sent = Vec::new();
        while have < bytes as u64 {
            let Some(e) = self.q.pop_front() else { break };
            have += (e.bytes() + OH) as u64;
            sent.push(e.packet.as_tcp().unwrap().ack);
        }
        sent
    }
    fn queue(&self) -> Vec<u32> {
        self.q
            .iter()
            .map(|e| e.packet.as_tcp().unwrap().ack)
            .collect()
    }
    fn counters(&self) -> AckCounters {
        self.f.counters(1).cloned().unwrap_or_default()
    }
    fn kept(&self, k: Kept) -> u64 {
        self.counters().kept[k as usize]
    }
}

/// ACKs n … n+4 (acknowledging 100-byte segments).
fn five() -> Vec<Packet> {
    (0..5).map(|k| ack(N + 100 * k)).collect()
}

// ---- the paper's Figure 1 ----

#[test]
fn figure1_granted_ack_sends_the_two_newest_of_five() {
    let mut b = Bench::new("mode = 'granted'");
    for p in five() {
        b.arrive(p);
    }
    assert_eq!(
        b.queue(),
        vec![1000, 1100, 1200, 1300, 1400],
        "nothing on arrival"
    );
    // TBS = 2 ACKs: fit 2, excess 3, all three oldest go.
    assert_eq!(b.grant(2), vec![1300, 1400]);
    assert_eq!(b.queue(), Vec::<u32>::new());
    let c = b.counters();
    assert_eq!(
        (
            c.arrived,
            c.discarded_passive,
            c.discarded_active,
            c.sent,
            c.grants
        ),
        (5, 3, 0, 2, 1)
    );
    assert_eq!((c.sent_bytes, c.sent_ip_bytes), (2 * ACK_COST as u64, 80));
    assert_eq!(c.sent_prbs, 4.0, "the whole block carried ACKs");
}

#[test]
fn figure1_passive_ratio_two_thirds_discards_two_of_the_three_excess() {
    let mut b = Bench::new("mode = 'passive'\nratio = 0.6666666666666666");
    for p in five() {
        b.arrive(p);
    }
    // floor(2/3 × 3) = 2: n and n+1 go; n+2, n+3 are sent, n+4 waits.
    assert_eq!(b.grant(2), vec![1200, 1300]);
    assert_eq!(b.queue(), vec![1400]);
    assert_eq!(b.counters().discarded_passive, 2);
    assert_eq!(b.counters().sent, 2);
}

#[test]
fn figure1_active_threshold_three_keeps_the_three_newest_on_every_arrival() {
    let mut b = Bench::new("mode = 'active'\nthreshold = 3");
    let mut seen = Vec::new();
    for p in five() {
        b.arrive(p);
        seen.push(b.queue());
    }
    assert_eq!(
        seen,
        vec![
            vec![1000],
            vec![1000, 1100],
            vec![1000, 1100, 1200],
            vec![1100, 1200, 1300],
            vec![1200, 1300, 1400],
        ]
    );
    // TBS = 1: the oldest kept one (n+2) is sent; Active does nothing at a grant.
    assert_eq!(b.grant(1), vec![1200]);
    assert_eq!(b.queue(), vec![1300, 1400]);
    let c = b.counters();
    assert_eq!((c.discarded_active, c.discarded_passive, c.sent), (2, 0, 1));
}

// ---- the other modes ----

#[test]
fn none_discards_nothing_and_counts() {
    let mut b = Bench::new("mode = 'none'");
    for p in five() {
        b.arrive(p);
    }
    assert_eq!(b.grant(2), vec![1000, 1100]);
    assert_eq!(b.queue(), vec![1200, 1300, 1400]);
    let c = b.counters();
    assert_eq!(
        (c.arrived, c.discarded_active + c.discarded_passive, c.sent),
        (5, 0, 2)
    );
}

#[test]
fn passive_ratio_zero_is_basic_and_a_grant_that_fits_all_discards_nothing() {
    let mut b = Bench::new("mode = 'passive'\nratio = 0.0");
    for p in five() {
        b.arrive(p);
    }
    assert_eq!(b.grant(2), vec![1000, 1100]);
    let mut b = Bench::new("mode = 'granted'");
    for p in five() {
        b.arrive(p);
    }
    assert_eq!(b.grant(5), vec![1000, 1100, 1200, 1300, 1400]);
    assert_eq!(b.counters().discarded_passive, 0);
}

#[test]
fn highest_keeps_only_the_newest() {
    let mut b = Bench::new("mode = 'highest'");
    for p in five() {
        b.arrive(p);
    }
    assert_eq!(b.queue(), vec![1400]);
    assert_eq!(b.counters().discarded_active, 4);
}

#[test]
fn hybrid_is_active_on_arrival_then_granted() {
    let mut b = Bench::new("mode = 'hybrid'\nthreshold = 3");
    for p in five() {
        b.arrive(p);
    }
    assert_eq!(b.queue(), vec![1200, 1300, 1400]);
    // TBS = 1: fit 1, excess 2: n+2, n+3 go, n+4 is sent.
    assert_eq!(b.grant(1), vec![1400]);
    let c = b.counters();
    assert_eq!((c.discarded_active, c.discarded_passive, c.sent), (2, 2, 1));
}

#[test]
fn passive_and_active_count_each_connection_apart() {
    // Two connections interleaved; Active(2) keeps two of each.
    let mut b = Bench::new("mode = 'active'\nthreshold = 2");
    for k in 0..4 {
        b.arrive(ack(N + 100 * k));
        b.arrive(seg(5202, 5000 + 100 * k, TcpFlags::ACK, 0));
    }
    assert_eq!(b.queue(), vec![1200, 5200, 1300, 5300]);
    // Granted over both: room for 1 ACK: the three oldest go whatever their connection, but
    // the newest of each connection is never discarded.
    let mut b = Bench::new("mode = 'granted'");
    for k in 0..3 {
        b.arrive(ack(N + 100 * k));
        b.arrive(seg(5202, 5000 + 100 * k, TcpFlags::ACK, 0));
    }
    assert_eq!(b.grant(1), vec![1200]);
    assert_eq!(b.queue(), vec![5200]);
    assert_eq!(
        b.kept(Kept::Newest),
        2,
        "1200 and 5200 were picked but are their connections' newest"
    );
}

#[test]
fn data_segments_take_room_before_acks_fit() {
    // A 100-byte data segment (140 IP bytes) and three ACKs; the grant has room for the
    // segment and one ACK: fit 1, excess 2.
    let mut b = Bench::new("mode = 'granted'");
    b.arrive(ack(N));
    b.arrive(seg(5201, N, TcpFlags::ACK, 100));
    b.arrive(ack(N + 100));
    b.arrive(ack(N + 200));
    let cx = b.cx();
    let ev = BufferEvent::Grant {
        bytes: 140 + OH + ACK_COST,
        overhead_bytes: OH,
        rlc_bytes: 0,
        n_prb: 2,
    };
    b.f.handle_ul_buffer(&cx, ev, &mut b.q);
    assert_eq!(
        b.queue(),
        vec![1000, 1200],
        "the data segment (ack 1000) and the newest ACK"
    );
    let c = b.counters();
    assert_eq!((c.sent, c.sent_bytes), (1, ACK_COST as u64));
    // One of the block's 2 PRBs carried the ACK in proportion to its bytes.
    assert_eq!(c.sent_prbs, 2.0 * 45.0 / 190.0);
}

#[test]
fn rlc_bytes_waiting_use_the_grant_first() {
    let mut b = Bench::new("mode = 'granted'");
    for p in five() {
        b.arrive(p);
    }
    let cx = b.cx();
    let ev = BufferEvent::Grant {
        bytes: 3 * ACK_COST,
        overhead_bytes: OH,
        rlc_bytes: ACK_COST as u64,
        n_prb: 3,
    };
    b.f.handle_ul_buffer(&cx, ev, &mut b.q);
    assert_eq!(b.queue(), vec![1300, 1400]);
}

// ---- hybrid-opt ----

#[test]
fn t_opt_reproduces_table_i_with_536_byte_segments() {
    // Seed 000 Table I: (DL TBS, T_opt) of the ten UEs.
    let table = [
        (2481.0, 2),
        (1960.0, 1),
        (5477.0, 4),
        (6378.0, 5),
        (6882.0, 5),
        (4587.0, 3),
        (5861.0, 4),
        (4904.0, 4),
        (4587.0, 3),
        (4107.0, 3),
    ];
    for (tbs, t) in table {
        assert_eq!(AckFilter::t_opt(tbs, 536, 58), t, "TBS {tbs}");
    }
    // With 1448-byte segments only the smallest TBS keeps its T_opt (all are 1 … 2).
    let same = table
        .iter()
        .filter(|(tbs, t)| AckFilter::t_opt(*tbs, 1448, 58) == *t)
        .count();
    assert_eq!(same, 1);
}

#[test]
fn hybrid_opt_uses_the_ues_mean_tbs_and_the_announced_mss() {
    let view = View::new(2481.0);
    let mut b = Bench::new("mode = 'hybrid-opt'");
    b.view = Some(&view);
    // The UE's SYN-ACK announces MSS 536: T_opt = floor(2481 / 1188) = 2.
    b.arrive(ack_with(N - 1, |t| {
        t.flags = TcpFlags(TcpFlags::SYN.0 | TcpFlags::ACK.0);
        t.options.mss = Some(536);
    }));
    for p in five() {
        b.arrive(p);
    }
    assert_eq!(b.queue(), vec![999, 1300, 1400], "the SYN-ACK stays");
    assert_eq!(
        b.grant(1),
        vec![999],
        "the SYN-ACK goes first; it is not an ACK to count"
    );
    let r = b.f.report();
    assert_eq!(r["ues"][0]["rnti"], 1);
    assert_eq!(r["ues"][0]["t_opt"], 2);
    assert_eq!(r["ues"][0]["t_opt_used"]["2"], 5);
    assert_eq!(r["ues"][0]["cell"], 2);
    assert_eq!(r["cells"][0]["cell"], 2);
    assert_eq!(r["cells"][0]["acks_arrived"], 5);
    assert_eq!(r["acks_arrived"], 5);
    assert_eq!(r["mode"], "hybrid-opt");
    // Granted step at that grant: fit 0 after the SYN-ACK's room, both ACKs are excess but
    // the newest stays.
    assert_eq!(b.queue(), vec![1400]);
}

#[test]
fn hybrid_opt_without_announced_mss_assumes_536_and_segment_bytes_overrides() {
    let view = View::new(6882.0);
    let mut b = Bench::new("mode = 'hybrid-opt'");
    b.view = Some(&view);
    for k in 0..8 {
        b.arrive(ack(N + 100 * k));
    }
    assert_eq!(b.queue().len(), 5, "T_opt = floor(6882 / 1188) = 5");
    let mut b = Bench::new("mode = 'hybrid-opt'\nsegment_bytes = 1448");
    b.view = Some(&view);
    for k in 0..8 {
        b.arrive(ack(N + 100 * k));
    }
    assert_eq!(b.queue().len(), 2, "T_opt = floor(6882 / 3012) = 2");
}

#[test]
fn hybrid_opt_full_band_averages_the_samples_and_scheduled_reads_the_mean_block() {
    // Whole-band TBS 4000 then 8000 at arrivals in two slots: S_TBS 4000 (T 3), then 6000
    // (T 5); a third arrival in the second slot (TBS 20000 by then) reuses that slot's sample.
    for (cfg, want) in [("", [3, 5, 5]), ("\ns_tbs = 'scheduled'", [1, 1, 1])] {
        let v = View {
            full: std::cell::Cell::new(4000.0),
            scheduled: 1300.0,
        };
        let mut f = filter(&format!("mode = 'hybrid-opt'{cfg}"));
        let mut q = UlBuffer::new(0);
        let mut seen = Vec::new();
        for (k, (ms, tbs)) in [(0, 4000.0), (1, 8000.0), (1, 20000.0)]
            .into_iter()
            .enumerate()
        {
            v.full.set(tbs);
            let id = q.push(Time::ZERO, ack(N + 100 * k as u32)).unwrap();
            let cx = Ctx {
                now: Time::from_millis(ms),
                point: Point::UeUlBuffer,
                rnti: Some(1),
                ran: Some(&v),
            };
            f.handle_ul_buffer(&cx, BufferEvent::Arrival { id }, &mut q);
            seen.push(f.report()["ues"][0]["t_opt"].as_u64().unwrap());
        }
        assert_eq!(seen, want, "{cfg}");
    }
}

#[test]
fn hybrid_opt_before_the_first_downlink_block_only_grants() {
    let view = View::new(0.0);
    let mut b = Bench::new("mode = 'hybrid-opt'");
    b.view = Some(&view);
    for p in five() {
        b.arrive(p);
    }
    assert_eq!(b.queue().len(), 5, "S_TBS unknown: no active step");
    assert_eq!(b.grant(2), vec![1300, 1400]);
}

// ---- never discarded: one test per rule ----

/// Queue `older` then a plain newer ACK (n+100 … covers everything a plain ACK says), run
/// Highest ACK, and return the queue and the filter.
fn highest_after(older: Packet) -> Bench<'static> {
    let mut b = Bench::new("mode = 'highest'");
    b.arrive(older);
    b.arrive(ack(N + 500));
    b
}

#[test]
fn a_plain_older_ack_is_discarded_by_a_newer_one() {
    let b = highest_after(ack(N));
    assert_eq!(b.queue(), vec![1500]);
}

#[test]
fn never_discarded_duplicate_acks() {
    let mut b = Bench::new("mode = 'highest'");
    b.arrive(ack(N));
    b.arrive(ack(N)); // duplicate
    b.arrive(ack(N)); // duplicate
    assert_eq!(
        b.queue(),
        vec![1000, 1000, 1000],
        "same number: none covers another"
    );
    b.arrive(ack(N + 500));
    // The first ACK of the run goes (the newer one acknowledges more); the two duplicates
    // stay for the sender's fast retransmit.
    assert_eq!(b.queue(), vec![1000, 1000, 1500]);
    assert!(b.kept(Kept::Duplicate) >= 2);
}

#[test]
fn never_discarded_acks_with_payload() {
    let mut b = Bench::new("mode = 'highest'");
    b.arrive(seg(5201, N, TcpFlags::ACK, 10));
    b.arrive(ack(N + 500));
    b.arrive(ack(N + 600));
    assert_eq!(b.queue(), vec![1000, 1600], "the data segment stays");
}

#[test]
fn never_discarded_syn_fin_rst_urg_ece_cwr() {
    for flag in [
        TcpFlags::FIN,
        TcpFlags::RST,
        TcpFlags::URG,
        TcpFlags::ECE,
        TcpFlags::CWR,
    ] {
        let b = highest_after(seg(5201, N, TcpFlags(TcpFlags::ACK.0 | flag.0), 0));
        assert_eq!(b.queue(), vec![1000, 1500], "flag {flag:?}");
        assert_eq!(b.kept(Kept::Flags), 1, "flag {flag:?}");
    }
    // A SYN-ACK is not an ACK the filter counts at all: it stays, uncounted.
    let b = highest_after(seg(5201, N, TcpFlags(TcpFlags::ACK.0 | TcpFlags::SYN.0), 0));
    assert_eq!(b.queue(), vec![1000, 1500]);
    assert_eq!(b.counters().arrived, 1);
}

#[test]
fn psh_on_an_empty_ack_does_not_protect_it() {
    let b = highest_after(seg(5201, N, TcpFlags(TcpFlags::ACK.0 | TcpFlags::PSH.0), 0));
    assert_eq!(b.queue(), vec![1500]);
}

#[test]
fn never_discarded_sack_blocks_the_newer_ack_lacks() {
    let sack = |t: &mut TcpHeader, l: u32, r: u32| {
        t.options.push_sack(SackBlock { left: l, right: r });
    };
    // Older SACKs 2000–2100; the newer ACK (1500) neither reaches nor SACKs it.
    let b = highest_after(ack_with(N, |t| sack(t, 2000, 2100)));
    assert_eq!(b.queue(), vec![1000, 1500]);
    assert_eq!(b.kept(Kept::Sack), 1);
    // The newer ACK repeats the block: the older one may go.
    let mut b = Bench::new("mode = 'highest'");
    b.arrive(ack_with(N, |t| sack(t, 2000, 2100)));
    b.arrive(ack_with(N + 500, |t| sack(t, 1900, 2200)));
    assert_eq!(b.queue(), vec![1500]);
    // The newer cumulative ACK passes the block: the older one may go.
    let mut b = Bench::new("mode = 'highest'");
    b.arrive(ack_with(N, |t| sack(t, 1200, 1300)));
    b.arrive(ack(N + 500));
    assert_eq!(b.queue(), vec![1500]);
}

#[test]
fn never_discarded_d_sack() {
    // RFC 2883: a block below the cumulative ACK reports a duplicate segment.
    let b = highest_after(ack_with(N, |t| {
        t.options.push_sack(SackBlock {
            left: 900,
            right: 1000,
        });
    }));
    assert_eq!(b.queue(), vec![1000, 1500]);
    assert_eq!(b.kept(Kept::Sack), 1);
}

#[test]
fn never_discarded_window_edge_the_newer_ack_lacks() {
    // Older: ACK 1000, window 1000 (edge 2000). Newer: ACK 1500, window 100 (edge 1600).
    let mut b = Bench::new("mode = 'highest'");
    b.arrive(ack(N));
    b.arrive(ack_with(N + 500, |t| t.window = 100));
    assert_eq!(b.queue(), vec![1000, 1500]);
    assert_eq!(b.kept(Kept::Window), 1);
    // A window update (same ACK, larger window) is not covered by anything older, and the
    // older ACK with the same number stays as well (the newer one acknowledges no more).
    let mut b = Bench::new("mode = 'highest'");
    b.arrive(ack(N));
    b.arrive(ack_with(N, |t| t.window = 5000));
    assert_eq!(b.queue(), vec![1000, 1000]);
}

#[test]
fn window_scale_from_the_syn_applies_to_the_window_edge() {
    // Scale 4: older edge 1000 + 100·16 = 2600; newer 1500 + 80·16 = 2780 ≥ 2600: may go.
    let mut b = Bench::new("mode = 'highest'");
    b.arrive(ack_with(1, |t| {
        t.flags = TcpFlags(TcpFlags::SYN.0 | TcpFlags::ACK.0);
        t.options.window_scale = Some(4);
    }));
    b.arrive(ack_with(N, |t| t.window = 100));
    b.arrive(ack_with(N + 500, |t| t.window = 80));
    assert_eq!(b.queue(), vec![1, 1500]);
}

#[test]
fn never_discarded_timestamps_newer_than_the_newer_acks() {
    let ts = |v: u32, e: u32| move |t: &mut TcpHeader| t.options.timestamps = Some((v, e));
    // Older TSecr 60 after the newer's 50 (reordered echo): kept.
    let mut b = Bench::new("mode = 'highest'");
    b.arrive(ack_with(N, ts(10, 60)));
    b.arrive(ack_with(N + 500, ts(11, 50)));
    assert_eq!(b.queue(), vec![1000, 1500]);
    assert_eq!(b.kept(Kept::Timestamp), 1);
    // Older has timestamps, the newer none: kept.
    let b = highest_after(ack_with(N, ts(10, 60)));
    assert_eq!(b.queue(), vec![1000, 1500]);
    // Monotone timestamps: may go.
    let mut b = Bench::new("mode = 'highest'");
    b.arrive(ack_with(N, ts(10, 60)));
    b.arrive(ack_with(N + 500, ts(11, 60)));
    assert_eq!(b.queue(), vec![1500]);
}

#[test]
fn never_discarded_syn_only_options_on_an_ack() {
    let b = highest_after(ack_with(N, |t| t.options.mss = Some(1400)));
    assert_eq!(b.queue(), vec![1000, 1500]);
    assert_eq!(b.kept(Kept::Options), 1);
}

#[test]
fn never_discarded_the_newest_ack_of_a_connection() {
    let mut b = Bench::new("mode = 'granted'");
    b.arrive(ack(N));
    assert_eq!(b.grant(0), Vec::<u32>::new());
    assert_eq!(
        b.queue(),
        vec![1000],
        "no room, but nothing newer covers it"
    );
    assert_eq!(b.kept(Kept::Newest), 1);
}

#[test]
fn sequence_numbers_compare_modulo_2_32() {
    let mut b = Bench::new("mode = 'highest'");
    b.arrive(ack(u32::MAX - 50));
    b.arrive(ack(49));
    assert_eq!(b.queue(), vec![49], "49 is after 2^32 − 51");
}

// ---- config ----

#[test]
fn config_errors_name_the_field() {
    let e = |t: &str| {
        let c: AckFilterConfig = toml::from_str(t).unwrap();
        c.validate("functions.ack_filter")
            .err()
            .map(|e| e.to_string())
    };
    assert_eq!(
        e("mode = 'passive'"),
        Some(
            "functions.ack_filter.ratio: required with mode \"passive\": a ratio in [0, 1]".into()
        )
    );
    assert_eq!(
        e("mode = 'passive'\nratio = 1.5"),
        Some("functions.ack_filter.ratio: must be in [0, 1]".into())
    );
    assert_eq!(
        e("mode = 'hybrid'"),
        Some(
            "functions.ack_filter.threshold: required with mode \"hybrid\": an integer >= 1".into()
        )
    );
    assert_eq!(
        e("mode = 'active'\nthreshold = 0"),
        Some("functions.ack_filter.threshold: must be an integer in [1, 100000]".into())
    );
    // Out of range is refused whatever the mode reads.
    assert_eq!(
        e("mode = 'granted'\nthreshold = 0"),
        Some("functions.ack_filter.threshold: must be an integer in [1, 100000]".into())
    );
    assert_eq!(
        e("segment_bytes = 0"),
        Some("functions.ack_filter.segment_bytes: must be an integer in [1, 65535]".into())
    );
    assert_eq!(e("mode = 'hybrid-opt'\nsegment_bytes = 536"), None);
    // A parameter of another mode loads; `unread` warns of it.
    let unread = |t: &str| {
        let c: AckFilterConfig = toml::from_str(t).unwrap();
        assert_eq!(c.validate("f").err(), None);
        let mut u = rantcp_config::reads::Unreads::default();
        c.unread("f", &mut u);
        u.0.into_iter()
            .map(|u| format!("{} ({})", u.path, u.because))
            .collect::<Vec<_>>()
    };
    assert_eq!(
        unread("mode = 'granted'\nratio = 0.5"),
        [
            "f.ratio (f.mode = \"granted\")",
            "f.threshold (f.mode = \"granted\")",
            "f.segment_bytes (f.mode = \"granted\")",
            "f.s_tbs (f.mode = \"granted\")",
            "f.header_bytes (f.mode = \"granted\")",
        ]
    );
    assert_eq!(
        unread("mode = 'hybrid-opt'\nthreshold = 3"),
        [
            "f.ratio (f.mode = \"hybrid-opt\")",
            "f.threshold (f.mode = \"hybrid-opt\")",
        ]
    );
    assert_eq!(unread("ratio = 0.5").len(), 5);
    assert!(toml::from_str::<AckFilterConfig>("mode = 'fast'").is_err());
    assert!(toml::from_str::<AckFilterConfig>("mode = 'none'\nratios = 1").is_err());
}

#[test]
fn absent_builds_nothing_and_none_attaches_at_the_radio() {
    let env = BuildEnv {
        seed: 1,
        end: Time::from_secs(1),
        radio: Some(crate::RadioFacts {
            slot: Duration::from_millis(1),
            harq_feedback_slots: 4,
            rlc_buffer_bytes: 0,
        }),
        ..Default::default()
    };
    let off = AckFilterConfig::default();
    assert!(!off.enabled());
    assert!(off.build("functions.ack_filter", &env).unwrap().is_empty());
    let none: AckFilterConfig = toml::from_str("mode = 'none'").unwrap();
    let v = none.build("functions.ack_filter", &env).unwrap();
    assert_eq!(v.len(), 1);
    assert_eq!(v[0].site, Site::Ran);
    assert_eq!(v[0].function.points(), Points::UE_UL_BUFFER);
    let wired = BuildEnv { radio: None, ..env };
    assert_eq!(
        none.build("functions.ack_filter", &wired)
            .err()
            .unwrap()
            .path,
        "functions.ack_filter.mode"
    );
}
