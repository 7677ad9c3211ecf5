//! Seed 001's proxies packet by packet (issue 12, "What must be shown"): early ACK numbers and
//! windows for a sequence of arrivals, the cache-full window and the ACK resent when the cache
//! frees, a duplicate ACK from the UE triggering exactly N = ceil(α·β·(1+γ)) packets under
//! mmPEP and exactly one under PEP, and the timer rule with the UE's RLC buffer empty or not.
//! The proxy is driven directly through the network-function contract against a stub RAN.

use rantcp_core::{Duration, Time};
use rantcp_functions::proxy::{batch_size, gamma, Proxy, ProxyMode, ProxyParams};
use rantcp_functions::split::tcp_packet;
use rantcp_nf::{
    Ctx, Entry, FlowKey, NetworkFunction, Output, Point, RanView, Rnti, UeReport, Verdict,
};
use rantcp_wire::{Packet, SackBlock, TcpFlags};
use std::cell::Cell;
use std::net::Ipv4Addr;

const SRV: (Ipv4Addr, u16) = (Ipv4Addr::new(10, 0, 0, 1), 5201);
const UE: (Ipv4Addr, u16) = (Ipv4Addr::new(10, 1, 0, 1), 49152);
const IRS: u32 = 4_294_960_000; // the server's ISN: data wraps the sequence space early
const UE_ISS: u32 = 1000;
const SEG: u32 = 1000;

struct StubRan {
    rlc_empty: Cell<bool>,
    rlc_queue: Cell<u64>,
}

impl RanView for StubRan {
    fn slot(&self) -> Duration {
        Duration::from_micros(125)
    }
    fn rntis(&self) -> &[Rnti] {
        &[1]
    }
    fn rnti_of(&self, _addr: Ipv4Addr) -> Option<Rnti> {
        Some(1)
    }
    fn addr_of(&self, _rnti: Rnti) -> Option<Ipv4Addr> {
        Some(UE.0)
    }
    fn ue_report(&self, rnti: Rnti, _now: Time) -> Option<UeReport> {
        Some(UeReport {
            rnti,
            cqi: 15,
            rlc_empty: self.rlc_empty.get(),
            rlc_queue_bytes: self.rlc_queue.get(),
            harq_feedback_slots: 10,
            dl_packets_per_slot: 3.0,
            ..Default::default()
        })
    }
}

struct H {
    px: Proxy,
    ran: StubRan,
    now: Time,
}

/// An early ACK or a retransmission seen leaving the proxy.
#[derive(Debug, PartialEq, Eq)]
enum Out {
    /// To the server: acknowledgement (data offset) and window field.
    Ack { ack: u64, window: u16 },
    /// To the UE ahead of new data: data offset of the segment.
    Front { off: u64 },
    /// To the UE at the bearer's tail (released from the cache): data offset.
    Sent { off: u64 },
}

/// The server's `k`-th full data segment on the connection `H::new` opens.
fn data_segment(k: u32) -> Packet {
    tcp_packet(
        SRV,
        UE,
        IRS.wrapping_add(1).wrapping_add(k * SEG),
        UE_ISS + 1,
        TcpFlags::ACK,
        65535,
        SEG,
    )
}

impl H {
    fn new(mode: ProxyMode, cache: u64) -> H {
        H::with_hold(mode, cache, 0)
    }
    fn with_hold(mode: ProxyMode, cache: u64, rlc_hold: u64) -> H {
        H::build(mode, cache, rlc_hold, false)
    }
    fn build(mode: ProxyMode, cache: u64, rlc_hold: u64, sack: bool) -> H {
        H::build_among(mode, cache, rlc_hold, sack, vec![FlowKey::tcp(SRV, UE)])
    }
    /// A proxy serving `flows` that has seen no packet yet.
    fn unopened(mode: ProxyMode, cache: u64, rlc_hold: u64, flows: Vec<FlowKey>) -> H {
        let params = ProxyParams {
            mode,
            cache,
            alpha: Some(1.12),
            beta: 10,
            sigma: 0.1,
            confidence: 0.99,
            timer: Duration::from_millis(200),
            rlc_hold,
        };
        H {
            px: Proxy::new(params, flows),
            ran: StubRan {
                rlc_empty: Cell::new(true),
                rlc_queue: Cell::new(0),
            },
            now: Time::ZERO,
        }
    }
    /// A proxy serving `flows`, of which (SRV, UE) is the one driven.
    fn build_among(
        mode: ProxyMode,
        cache: u64,
        rlc_hold: u64,
        sack: bool,
        flows: Vec<FlowKey>,
    ) -> H {
        let mut h = H::unopened(mode, cache, rlc_hold, flows);
        // The server opens (a bulk push), the UE answers; no window scaling.
        let mut syn = tcp_packet(SRV, UE, IRS, 0, TcpFlags::SYN, 65535, 0);
        syn.as_tcp_mut().unwrap().options.sack_permitted = sack;
        assert_eq!(h.feed(Point::DlIngress, syn), Verdict::Pass);
        let mut synack = tcp_packet(
            UE,
            SRV,
            UE_ISS,
            IRS.wrapping_add(1),
            TcpFlags(TcpFlags::SYN.0 | TcpFlags::ACK.0),
            65535,
            0,
        );
        synack.as_tcp_mut().unwrap().options.sack_permitted = sack;
        assert_eq!(h.feed(Point::UlEgress, synack), Verdict::Pass);
        let ack = tcp_packet(
            SRV,
            UE,
            IRS.wrapping_add(1),
            UE_ISS + 1,
            TcpFlags::ACK,
            65535,
            0,
        );
        assert_eq!(h.feed(Point::DlIngress, ack), Verdict::Pass);
        assert!(h.drain().is_empty(), "the handshake passes untouched");
        h
    }
    fn feed(&mut self, point: Point, mut p: Packet) -> Verdict {
        let cx = Ctx {
            now: self.now,
            point,
            rnti: Some(1),
            ran: Some(&self.ran),
        };
        self.px.handle_packet(&cx, &mut p)
    }
    fn data(&mut self, k: u32) -> Verdict {
        self.feed(Point::DlIngress, data_segment(k))
    }
    fn ue_ack(&mut self, off: u64) -> Verdict {
        self.ue_ack_window(off, 65535)
    }
    fn ue_ack_window(&mut self, off: u64, window: u16) -> Verdict {
        let p = tcp_packet(
            UE,
            SRV,
            UE_ISS + 1,
            IRS.wrapping_add(1).wrapping_add(off as u32),
            TcpFlags::ACK,
            window,
            0,
        );
        self.feed(Point::UlEgress, p)
    }
    fn drain(&mut self) -> Vec<Out> {
        let mut v = Vec::new();
        while let Some(o) = self.px.poll_output() {
            let Output::Emit(e) = o else {
                panic!("no actions expected")
            };
            let t = *e.packet.as_tcp().expect("tcp");
            if e.packet.ip.dst == SRV.0 {
                assert_eq!(e.entry, Entry::Bearer);
                assert_eq!((t.seq, t.flags), (UE_ISS + 1, TcpFlags::ACK));
                v.push(Out::Ack {
                    ack: t.ack.wrapping_sub(IRS.wrapping_add(1)) as u64,
                    window: t.window,
                });
            } else {
                assert_eq!(e.packet.payload_len, SEG);
                let off = t.seq.wrapping_sub(IRS.wrapping_add(1)) as u64;
                v.push(match e.entry {
                    Entry::BearerFront => Out::Front { off },
                    Entry::Bearer => Out::Sent { off },
                    Entry::Ue => panic!("never straight to the UE"),
                });
            }
        }
        v
    }
    fn fire(&mut self, at_ms: u64) {
        self.now = Time::from_millis(at_ms);
        assert!(self.px.poll_timeout().is_some_and(|t| t <= self.now));
        self.px.handle_timeout(self.now, Some(&self.ran));
    }
    fn report(&self) -> serde_json::Value {
        self.px.report()
    }
}

#[test]
fn test_gamma_and_batch_size_of_table_one() {
    // Eq. 2 with σ = 0.1, 1 − ε = 0.99: γ = z_0.99·σ/α = 2.326348·0.1/1.12 = 0.207710.
    let g = gamma(1.12, 10.0, 0.1, 0.99);
    assert!((g - 0.207_710).abs() < 1e-5, "{g}");
    // Eq. 1: N = ceil(1.12 · 10 · 1.20771) = ceil(13.526) = 14.
    assert_eq!(batch_size(1.12, 10, 0.1, 0.99), 14);
    assert_eq!(batch_size(1.12, 10, 0.0, 0.99), 12); // σ = 0: γ = 0, ceil(11.2)
                                                     // A slow flow: γ = 2.326348·0.1/0.01 = 23.26, N = ceil(0.1 · 24.26) = 3.
    assert_eq!(batch_size(0.01, 10, 0.1, 0.99), 3);
    assert_eq!(batch_size(0.001, 1, 0.0, 0.99), 1);
}

#[test]
fn test_early_acks_for_a_sequence_of_arrivals() {
    let mut h = H::new(ProxyMode::Mmpep, 10_000);
    // Three segments in order: each passes on to PDCP and is acknowledged at once, window =
    // free cache.
    for k in 0..3 {
        assert_eq!(h.data(k), Verdict::Pass);
    }
    assert_eq!(
        h.drain(),
        vec![
            Out::Ack {
                ack: 1000,
                window: 9000
            },
            Out::Ack {
                ack: 2000,
                window: 8000
            },
            Out::Ack {
                ack: 3000,
                window: 7000
            },
        ]
    );
    // Segment 4 lost upstream, 5 arrives: kept and passed, the early ACK repeats 3000.
    assert_eq!(h.data(4), Verdict::Pass);
    assert_eq!(
        h.drain(),
        vec![Out::Ack {
            ack: 3000,
            window: 7000
        }]
    );
    // 4 arrives: the early ACK jumps over the segment held out of order.
    assert_eq!(h.data(3), Verdict::Pass);
    assert_eq!(
        h.drain(),
        vec![Out::Ack {
            ack: 5000,
            window: 5000
        }]
    );
    // A retransmission of what the cache has is dropped and answered.
    assert_eq!(h.data(1), Verdict::Drop("proxy: already cached"));
    assert_eq!(
        h.drain(),
        vec![Out::Ack {
            ack: 5000,
            window: 5000
        }]
    );
    // The UE's ACKs free the cache and are not forwarded; the next early ACK shows the room.
    assert_eq!(h.ue_ack(2000), Verdict::Consume);
    assert!(h.drain().is_empty());
    assert_eq!(h.data(5), Verdict::Pass);
    assert_eq!(
        h.drain(),
        vec![Out::Ack {
            ack: 6000,
            window: 6000
        }]
    );
    let r = h.report();
    assert_eq!(r["early_acks"], 7);
    assert_eq!(r["ue_acks_consumed"], 1);
    assert_eq!(r["dropped_duplicate"], 1);
    assert_eq!(r["cache_max_bytes"], 5000);
}

#[test]
fn test_cache_full_window_and_the_ack_resent_when_it_frees() {
    let mut h = H::new(ProxyMode::Pep, 4000);
    for k in 0..4 {
        assert_eq!(h.data(k), Verdict::Pass);
    }
    let acks = h.drain();
    assert_eq!(
        acks.last(),
        Some(&Out::Ack {
            ack: 4000,
            window: 0
        })
    );
    // The server sends beyond the window: dropped, answered with the zero window.
    assert_eq!(h.data(4), Verdict::Drop("proxy: cache full"));
    assert_eq!(
        h.drain(),
        vec![Out::Ack {
            ack: 4000,
            window: 0
        }]
    );
    // The UE acknowledges 500 bytes: less than a segment frees, no update yet (SWS).
    assert_eq!(h.ue_ack(500), Verdict::Consume);
    assert!(h.drain().is_empty());
    // Then a whole segment: the last early ACK again, with the new window.
    assert_eq!(h.ue_ack(1000), Verdict::Consume);
    assert_eq!(
        h.drain(),
        vec![Out::Ack {
            ack: 4000,
            window: 1000
        }]
    );
    // Further ACKs while the window is open send nothing.
    assert_eq!(h.ue_ack(2000), Verdict::Consume);
    assert!(h.drain().is_empty());
    let r = h.report();
    assert_eq!(r["window_updates"], 1);
    assert_eq!(r["dropped_cache_full"], 1);
}

fn with_thirty_cached(mode: ProxyMode) -> H {
    let mut h = H::new(mode, 1_000_000);
    for k in 0..30 {
        h.data(k);
    }
    h.drain();
    assert_eq!(h.ue_ack(2000), Verdict::Consume);
    h
}

#[test]
fn test_duplicate_ack_triggers_a_batch_of_n_under_mmpep() {
    let mut h = with_thirty_cached(ProxyMode::Mmpep);
    assert_eq!(h.ue_ack(2000), Verdict::Consume);
    // N = 14 segments from the one the ACK names, each ahead of the bearer's new data: emitted
    // last first so that they leave in order.
    let want: Vec<Out> = (2..16)
        .rev()
        .map(|k| Out::Front { off: k * 1000 })
        .collect();
    assert_eq!(h.drain(), want);
    // More duplicates naming the same segment: nothing more.
    for _ in 0..4 {
        assert_eq!(h.ue_ack(2000), Verdict::Consume);
    }
    assert!(h.drain().is_empty());
    // The ACK moves (the batch arrived) and a duplicate names the next hole: the next batch,
    // 14 segments from 16 000.
    assert_eq!(h.ue_ack(16_000), Verdict::Consume);
    assert_eq!(h.ue_ack(16_000), Verdict::Consume);
    let want: Vec<Out> = (16..30)
        .rev()
        .map(|k| Out::Front { off: k * 1000 })
        .collect();
    assert_eq!(h.drain(), want);
    let r = h.report();
    assert_eq!(r["batch_size"], 14);
    assert_eq!(r["batches"], 2);
    assert_eq!(r["batch_packets"], 28);
    assert_eq!(r["dup_acks"], 6);
}

#[test]
fn test_duplicate_ack_triggers_one_packet_under_pep() {
    let mut h = with_thirty_cached(ProxyMode::Pep);
    assert_eq!(h.ue_ack(2000), Verdict::Consume);
    assert_eq!(h.drain(), vec![Out::Front { off: 2000 }]);
    assert_eq!(h.ue_ack(2000), Verdict::Consume);
    assert!(h.drain().is_empty());
    let r = h.report();
    assert_eq!(r["retx_packets"], 1);
    assert_eq!(r["batches"], 0);
}

#[test]
fn test_a_batch_is_cut_to_what_the_cache_holds() {
    let mut h = H::new(ProxyMode::Mmpep, 1_000_000);
    for k in 0..5 {
        h.data(k);
    }
    h.drain();
    h.ue_ack(1000);
    h.ue_ack(1000);
    assert_eq!(h.drain().len(), 4);
    assert_eq!(h.report()["batch_max"], 4);
}

#[test]
fn test_mmpep_timer_waits_for_an_empty_rlc_buffer() {
    let mut h = with_thirty_cached(ProxyMode::Mmpep);
    // Last progress at t = 0: the timer is due at 200 ms. RLC still holds data: nothing.
    h.ran.rlc_empty.set(false);
    h.fire(200);
    assert!(h.drain().is_empty());
    assert_eq!(h.report()["timer_deferred"], 1);
    // 200 ms later RLC is empty: a batch of N from the UE's ACK.
    h.ran.rlc_empty.set(true);
    h.fire(400);
    let want: Vec<Out> = (2..16)
        .rev()
        .map(|k| Out::Front { off: k * 1000 })
        .collect();
    assert_eq!(h.drain(), want);
    let r = h.report();
    assert_eq!(
        (
            r["timer_expiries"].as_u64(),
            r["timer_retx_packets"].as_u64()
        ),
        (Some(2), Some(14))
    );
    assert_eq!(r["timer_retx_rlc_busy"], 0);
}

#[test]
fn test_pep_timer_fires_regardless_of_rlc() {
    let mut h = with_thirty_cached(ProxyMode::Pep);
    h.ran.rlc_empty.set(false);
    h.fire(200);
    assert_eq!(h.drain(), vec![Out::Front { off: 2000 }]);
    h.ran.rlc_empty.set(true);
    h.fire(400);
    assert_eq!(h.drain(), vec![Out::Front { off: 2000 }]);
    let r = h.report();
    assert_eq!(r["timer_retx_packets"], 2);
    assert_eq!(r["timer_retx_rlc_busy"], 1);
    // Progress re-arms the timer from the ACK.
    h.now = Time::from_millis(450);
    h.ue_ack(30_000);
    assert_eq!(
        h.px.poll_timeout(),
        None,
        "nothing unacknowledged: no timer"
    );
}

#[test]
fn test_fin_is_cached_not_early_acked_and_its_ack_goes_end_to_end() {
    let mut h = H::new(ProxyMode::Mmpep, 1_000_000);
    h.data(0);
    let fin = tcp_packet(
        SRV,
        UE,
        IRS.wrapping_add(1 + SEG),
        UE_ISS + 1,
        TcpFlags(TcpFlags::FIN.0 | TcpFlags::ACK.0),
        65535,
        0,
    );
    assert_eq!(h.feed(Point::DlIngress, fin), Verdict::Pass);
    assert_eq!(
        h.drain(),
        vec![Out::Ack {
            ack: 1000,
            window: 65535
        }]
    );
    // The UE has the data but not the FIN: consumed. A duplicate: the FIN is retransmitted.
    assert_eq!(h.ue_ack(1000), Verdict::Consume);
    assert_eq!(h.ue_ack(1000), Verdict::Consume);
    let v: Vec<Out> = std::iter::from_fn(|| h.px.poll_output())
        .map(|o| match o {
            Output::Emit(e) => {
                let t = e.packet.as_tcp().unwrap();
                assert!(t.flags.fin() && e.entry == Entry::BearerFront);
                Out::Front { off: 1000 }
            }
            _ => unreachable!(),
        })
        .collect();
    assert_eq!(v.len(), 1);
    // The UE's ACK of the FIN reaches the server.
    assert_eq!(h.ue_ack(1001), Verdict::Pass);
}

#[test]
fn test_a_handshake_the_ue_opens_completes_end_to_end() {
    // An M2M device connects to its server: SYN up, SYN-ACK down, and the UE's ACK that
    // completes the handshake must reach the server (it was consumed as a UE ACK, so the
    // server never left SYN-RECEIVED and lte-m2m with a proxy delivered nothing).
    for mode in [ProxyMode::Pep, ProxyMode::Mmpep] {
        let mut h = H::unopened(mode, 1_000_000, 0, vec![FlowKey::tcp(SRV, UE)]);
        let syn = tcp_packet(UE, SRV, UE_ISS, 0, TcpFlags::SYN, 65535, 0);
        assert_eq!(h.feed(Point::UlEgress, syn), Verdict::Pass);
        let synack = tcp_packet(
            SRV,
            UE,
            IRS,
            UE_ISS + 1,
            TcpFlags(TcpFlags::SYN.0 | TcpFlags::ACK.0),
            65535,
            0,
        );
        assert_eq!(h.feed(Point::DlIngress, synack), Verdict::Pass);
        assert_eq!(
            h.ue_ack(0),
            Verdict::Pass,
            "{mode:?}: the handshake's last ACK"
        );
        assert_eq!(h.ue_ack(0), Verdict::Pass, "{mode:?}: a repeat of it too");
        assert!(h.drain().is_empty());
        // From the server's first data on, the proxy acknowledges and the UE's ACKs stop here.
        assert_eq!(h.data(0), Verdict::Pass);
        assert_eq!(
            h.drain(),
            vec![Out::Ack {
                ack: 1000,
                window: 65535
            }]
        );
        assert_eq!(h.ue_ack(1000), Verdict::Consume, "{mode:?}");
    }
}

#[test]
fn test_mode_none_only_counts_and_measures_the_delivery_ratio() {
    let mut h = H::new(ProxyMode::None, 1_000_000);
    for k in 0..4 {
        assert_eq!(h.data(k), Verdict::Pass);
    }
    assert!(h.drain().is_empty(), "no early ACKs");
    // Five data packets reach the UE's TCP (one twice); it acknowledges all four segments.
    for k in [0u32, 1, 1, 2, 3] {
        assert_eq!(h.feed(Point::DlEgress, data_segment(k)), Verdict::Pass);
    }
    assert_eq!(h.ue_ack(4000), Verdict::Pass, "ACKs pass under none");
    let r = h.report();
    assert_eq!(r["ue_data_packets"], 5);
    assert_eq!(r["packets_delivered"], 4);
    assert_eq!(r["delivery_ratio"], 0.8);
}

#[test]
fn test_new_data_waits_in_the_cache_while_rlc_is_full_and_goes_when_it_drains() {
    // Hold mark 3000 bytes; each segment is 1040 bytes on the wire.
    let mut h = H::with_hold(ProxyMode::Mmpep, 1_000_000, 3000);
    assert_eq!(h.data(0), Verdict::Pass);
    // RLC holds 2500 bytes (NLOS): the next segment would pass the mark, so it stays in the
    // cache; so does the one after it (order is kept). Both are still early-acknowledged.
    h.ran.rlc_queue.set(2500);
    assert_eq!(h.data(1), Verdict::Consume);
    h.ran.rlc_queue.set(0);
    assert_eq!(h.data(2), Verdict::Consume);
    assert_eq!(h.data(3), Verdict::Consume);
    assert_eq!(h.drain().len(), 4);
    // A packet reaches the UE (the channel is back) and RLC is empty: two segments fit below
    // the mark, in order, at the bearer's tail.
    let p = tcp_packet(
        SRV,
        UE,
        IRS.wrapping_add(1),
        UE_ISS + 1,
        TcpFlags::ACK,
        65535,
        SEG,
    );
    assert_eq!(h.feed(Point::DlEgress, p), Verdict::Pass);
    assert_eq!(
        h.drain(),
        vec![Out::Sent { off: 1000 }, Out::Sent { off: 2000 }]
    );
    // The UE's ACK releases the rest.
    h.ue_ack(1000);
    assert_eq!(h.drain(), vec![Out::Sent { off: 3000 }]);
    // A duplicate ACK retransmits only segments already handed to PDCP.
    h.ue_ack(1000);
    let want: Vec<Out> = (1..4).rev().map(|k| Out::Front { off: k * 1000 }).collect();
    assert_eq!(h.drain(), want);
    assert_eq!(h.report()["held_packets"], 3);
}

#[test]
fn test_with_sack_only_a_duplicate_reporting_data_above_the_hole_is_a_loss() {
    let mut h = H::build(ProxyMode::Mmpep, 1_000_000, 0, true);
    for k in 0..30 {
        h.data(k);
    }
    h.drain();
    h.ue_ack(2000);
    // A duplicate ACK with no SACK block: the UE answered a copy it already had. Nothing.
    assert_eq!(h.ue_ack(2000), Verdict::Consume);
    assert!(h.drain().is_empty());
    // One reporting 3000..5000 received: segment 2 is lost. The batch from 2000.
    let mut p = tcp_packet(
        UE,
        SRV,
        UE_ISS + 1,
        IRS.wrapping_add(2001),
        TcpFlags::ACK,
        65535,
        0,
    );
    p.as_tcp_mut().unwrap().options.push_sack(SackBlock {
        left: IRS.wrapping_add(3001),
        right: IRS.wrapping_add(5001),
    });
    assert_eq!(h.feed(Point::UlEgress, p), Verdict::Consume);
    assert_eq!(h.drain().len(), 14);
    let r = h.report();
    assert_eq!(
        (r["dup_acks"].as_u64(), r["dup_acks_no_loss"].as_u64()),
        (Some(2), Some(1))
    );
}

#[test]
fn test_early_acks_carry_sack_blocks_for_data_held_above_a_hole() {
    // A loss between the server and the proxy: the proxy, the server's receiver, reports what
    // it holds above the hole (RFC 2018 §4), most recent block first, so that a SACK sender
    // sees duplicate ACKs (RFC 6675 §2) and retransmits without waiting for its RTO.
    let early = |h: &mut H| -> Vec<(u64, Vec<(u64, u64)>)> {
        std::iter::from_fn(|| h.px.poll_output())
            .filter_map(|o| match o {
                Output::Emit(e) if e.packet.ip.dst == SRV.0 => {
                    let t = *e.packet.as_tcp().unwrap();
                    let off = |x: u32| x.wrapping_sub(IRS.wrapping_add(1)) as u64;
                    let blocks = t
                        .options
                        .sack_blocks()
                        .iter()
                        .map(|b| (off(b.left), off(b.right)))
                        .collect();
                    Some((off(t.ack), blocks))
                }
                _ => None,
            })
            .collect()
    };
    let mut h = H::build(ProxyMode::Mmpep, 1_000_000, 0, true);
    h.data(0);
    assert_eq!(early(&mut h), vec![(1000, vec![])]);
    // Segment 1 lost upstream; 2 and 3 arrive, then 5 (4 lost too).
    h.data(2);
    h.data(3);
    h.data(5);
    assert_eq!(
        early(&mut h),
        vec![
            (1000, vec![(2000, 3000)]),
            (1000, vec![(2000, 4000)]),
            (1000, vec![(5000, 6000), (2000, 4000)]),
        ]
    );
    // The server's retransmission of 1 fills the first hole: the ACK moves, 5 is still held.
    h.data(1);
    assert_eq!(early(&mut h), vec![(4000, vec![(5000, 6000)])]);
    h.data(4);
    assert_eq!(early(&mut h), vec![(6000, vec![])]);
    // Without SACK on both SYNs: no blocks.
    let mut h = H::build(ProxyMode::Pep, 1_000_000, 0, false);
    h.data(0);
    h.data(2);
    assert_eq!(early(&mut h), vec![(1000, vec![]), (1000, vec![])]);
}

#[test]
fn test_a_flow_among_many_is_served_as_if_alone() {
    // Beyond a few flows the proxy finds a packet's flow by an index instead of comparing it
    // with each: the driven flow, fourth of eight (other UEs, another port of the same UE,
    // another server), must give the same outputs as when it is the only one.
    let ue = |k: u8| (Ipv4Addr::new(10, 1, 0, k), 49152);
    let mut flows: Vec<FlowKey> = (2..5).map(|k| FlowKey::tcp(SRV, ue(k))).collect();
    flows.push(FlowKey::tcp(SRV, UE));
    flows.push(FlowKey::tcp(SRV, (UE.0, 49153)));
    flows.push(FlowKey::tcp((Ipv4Addr::new(10, 0, 0, 2), 5201), UE));
    flows.extend((5..7).map(|k| FlowKey::tcp(SRV, ue(k))));
    let mut many = H::build_among(ProxyMode::Mmpep, 30_000, 0, false, flows);
    let mut alone = H::new(ProxyMode::Mmpep, 30_000);
    for h in [&mut many, &mut alone] {
        for k in 0..20 {
            assert_eq!(h.data(k), Verdict::Pass);
        }
        assert_eq!(h.ue_ack(5000), Verdict::Consume);
        assert_eq!(h.ue_ack(5000), Verdict::Consume); // a duplicate: a batch from 5000
    }
    let (a, b) = (many.drain(), alone.drain());
    assert_eq!(a.len(), 20 + 14, "20 early ACKs and a batch of N = 14");
    assert_eq!(a, b);
    // A packet of another served flow is that flow's, not ours; one of no served flow passes.
    let other = tcp_packet(SRV, (UE.0, 49153), 1, 0, TcpFlags::SYN, 65535, 0);
    assert_eq!(many.feed(Point::DlIngress, other), Verdict::Pass);
    let stray = tcp_packet(SRV, (UE.0, 40000), 7, 0, TcpFlags::ACK, 65535, SEG);
    assert_eq!(many.feed(Point::DlIngress, stray), Verdict::Pass);
    assert!(many.drain().is_empty());
    let conns = many.report()["connections"].as_array().unwrap().clone();
    assert_eq!(conns.len(), 8);
    assert_eq!(conns[3]["early_acks"], 20);
    assert_eq!(alone.report()["connections"][0], conns[3]);
    for (i, c) in conns.iter().enumerate().filter(|(i, _)| *i != 3) {
        assert_eq!(c["early_acks"], 0, "flow {i}");
    }
}

#[test]
fn test_data_beyond_the_ues_receive_window_waits_in_the_cache() {
    // A cache far larger than the UE's receive window. The server sends into the early ACKs'
    // window (the free cache), and the proxy forwarded everything at once: the UE dropped what
    // lay beyond its own window (RFC 9293 §3.10.7.4) and the PEP brought it back one segment
    // per 200 ms timer (a 1.5 MB download on split-tcp, 512 KB receive buffer, stuck at 0.9 MB
    // after 30 s). Now such data waits in the cache until the UE's window opens.
    for mode in [ProxyMode::Pep, ProxyMode::Mmpep] {
        let mut h = H::new(mode, 1 << 26);
        // The UE's first ACK after the handshake: nothing yet, window 3000.
        assert_eq!(h.ue_ack_window(0, 3000), Verdict::Pass);
        for k in 0..3 {
            assert_eq!(h.data(k), Verdict::Pass, "{mode:?}");
        }
        // The fourth would end at 4000, beyond the UE's edge at 3000: cached and acknowledged
        // (the early ACK's window is the free cache), not forwarded.
        assert_eq!(h.data(3), Verdict::Consume, "{mode:?}");
        let acks = h.drain();
        assert_eq!(acks.len(), 4, "{mode:?}: {acks:?}");
        assert!(
            acks.iter().all(|a| matches!(a, Out::Ack { .. })),
            "{acks:?}"
        );
        // The UE takes two segments: its edge moves to 5000 and the held segment goes.
        assert_eq!(h.ue_ack_window(2000, 3000), Verdict::Consume);
        assert_eq!(h.drain(), vec![Out::Sent { off: 3000 }], "{mode:?}");
        assert_eq!(h.data(4), Verdict::Pass, "{mode:?}: ends at the edge");
        assert_eq!(h.data(5), Verdict::Consume, "{mode:?}: beyond it");
        assert_eq!(h.drain().len(), 2, "two early ACKs");
        // A window update from the UE (same ACK, larger window) lets it go, and is no
        // duplicate ACK (RFC 5681 §2): nothing is retransmitted.
        assert_eq!(h.ue_ack_window(2000, 4000), Verdict::Consume);
        assert_eq!(h.drain(), vec![Out::Sent { off: 5000 }], "{mode:?}");
        let r = h.report();
        assert_eq!(r["dup_acks"], 0, "{mode:?}");
        assert_eq!(r["retx_packets"], 0, "{mode:?}");
        assert_eq!(r["held_packets"], 2, "{mode:?}");
    }
}
