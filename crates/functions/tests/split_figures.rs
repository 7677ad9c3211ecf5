//! The dissertation's packet-by-packet examples (§5.4.2 Figures 36–38, §5.5.2 Figures 43–44)
//! replayed against the split host: the far host (FH) and the mobile host (MH) are stub
//! neighbours whose segments the test writes by hand, 3000 bytes in 1000-byte segments, and
//! every packet the host sends to the FH is checked (acknowledgement relative to the FH's
//! initial sequence number, window, AS-TCP option).

use rantcp_core::{Duration, Rng, Time};
use rantcp_functions::split::{
    tcp_packet, AfterFail, SplitFlow, SplitHost, SplitMode, SplitParams,
};
use rantcp_nf::{Ctx, FlowKey, NetworkFunction, Output, Point, Verdict};
use rantcp_tcp::TcpConfig;
use rantcp_wire::{Packet, TcpFlags, PROTO_TCP};
use std::net::Ipv4Addr;

const FH: (Ipv4Addr, u16) = (Ipv4Addr::new(10, 0, 0, 1), 5201);
const MH: (Ipv4Addr, u16) = (Ipv4Addr::new(10, 1, 0, 1), 49152);
const FH_ISS: u32 = 5000;
const MH_ISS: u32 = 9000;
const ACK: TcpFlags = TcpFlags::ACK;

fn tcp_cfg(buffer: u64) -> TcpConfig {
    TcpConfig {
        mss: 1000,
        rcv_buf_bytes: buffer,
        snd_buf_bytes: buffer,
        delayed_ack: false,
        sack: false,
        timestamps: false,
        window_scaling: false,
        min_rto: Duration::from_secs(1),
        ..TcpConfig::default()
    }
}

fn flow(buffer: u64) -> SplitFlow {
    SplitFlow {
        name: "ue1".into(),
        key: FlowKey {
            src: FH.0,
            dst: MH.0,
            src_port: FH.1,
            dst_port: MH.1,
            proto: PROTO_TCP,
        },
        wan_tcp: tcp_cfg(buffer),
        ran_tcp: tcp_cfg(buffer),
    }
}

/// One packet the host sent, as the figures label it (relative acknowledgement).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Seen {
    ack: u32,
    window: u16,
    flags: u8,
    len: u32,
    mh_ack: Option<u32>,
}

struct Harness {
    host: SplitHost,
    now: Time,
    /// The FH's and the MH's view of the other end's initial sequence numbers.
    wan_iss: u32,
    ran_iss: u32,
    to_fh: Vec<Packet>,
    to_mh: Vec<Packet>,
}

impl Harness {
    fn new(mode: SplitMode, buffer: u64) -> Self {
        let p = SplitParams {
            mode,
            es_rto_factor: 0.5,
            mh_ack_wait: Duration::ZERO,
            fail_at: None,
            after_fail: AfterFail::Drop,
        };
        Harness {
            host: SplitHost::new(p, vec![flow(buffer)], Rng::for_entity(1, "nf/split/test")),
            now: Time::ZERO,
            wan_iss: 0,
            ran_iss: 0,
            to_fh: Vec::new(),
            to_mh: Vec::new(),
        }
    }
    fn drain(&mut self) {
        while let Some(o) = self.host.poll_output() {
            let Output::Emit(e) = o else {
                panic!("unexpected action {o:?}")
            };
            if e.packet.ip.dst == FH.0 {
                self.to_fh.push(e.packet);
            } else {
                assert_eq!(e.packet.ip.dst, MH.0);
                self.to_mh.push(e.packet);
            }
        }
    }
    fn feed(&mut self, mut p: Packet) {
        let cx = Ctx {
            now: self.now,
            point: Point::Forward(1),
            rnti: None,
            ran: None,
        };
        assert_eq!(self.host.handle_packet(&cx, &mut p), Verdict::Consume);
        self.drain();
    }
    /// Advance to `t`, firing the host's timers on the way.
    fn advance(&mut self, t: Time) {
        while let Some(at) = self.host.poll_timeout().filter(|&at| at <= t) {
            self.now = at.max(self.now);
            self.host.handle_timeout(self.now, None);
            self.drain();
        }
        self.now = t;
    }
    fn at_ms(&mut self, ms: u64) {
        self.advance(Time::from_millis(ms));
    }
    /// What the host sent to the FH since the last call, relative to the FH's ISN.
    fn fh_packets(&mut self) -> Vec<Seen> {
        self.to_fh
            .drain(..)
            .map(|p| {
                let t = p.as_tcp().unwrap();
                Seen {
                    ack: t.ack.wrapping_sub(FH_ISS + 1),
                    window: t.window,
                    flags: t.flags.0,
                    len: p.payload_len,
                    mh_ack: t.options.as_tcp_ack.map(|a| a.wrapping_sub(FH_ISS + 1)),
                }
            })
            .collect()
    }
    /// Data bytes the host sent to the MH since the last call (relative sequence, length).
    fn mh_data(&mut self) -> Vec<(u32, u32)> {
        self.to_mh
            .drain(..)
            .filter(|p| p.payload_len > 0)
            .map(|p| {
                let t = p.as_tcp().unwrap();
                (t.seq.wrapping_sub(self.ran_iss + 1), p.payload_len)
            })
            .collect()
    }
    /// The MH opens (a download, §5.5.2 #1"–#2"); `fh_option`: the FH answers AS-TCP.
    fn handshake(&mut self, fh_option: bool) -> Packet {
        let mut syn = tcp_packet(MH, FH, MH_ISS, 0, TcpFlags::SYN, 65535, 0);
        syn.as_tcp_mut().unwrap().options.mss = Some(1000);
        self.feed(syn);
        assert!(
            self.to_mh.is_empty(),
            "the MH's SYN is held until TCP_WAN is up"
        );
        let wan_syn = self.to_fh.pop().expect("SYN to the FH");
        assert!(self.to_fh.is_empty());
        let t = *wan_syn.as_tcp().unwrap();
        assert!(t.flags.syn() && !t.flags.ack());
        assert_eq!(
            (wan_syn.ip.src, t.src_port),
            MH,
            "TCP_WAN speaks with the MH's address"
        );
        self.wan_iss = t.seq;
        self.at_ms(10);
        let mut sa = tcp_packet(
            FH,
            MH,
            FH_ISS,
            self.wan_iss + 1,
            TcpFlags::SYN | ACK,
            65535,
            0,
        );
        sa.as_tcp_mut().unwrap().options.mss = Some(1000);
        if fh_option {
            sa.as_tcp_mut().unwrap().options.as_tcp_ack = Some(0);
        }
        self.feed(sa);
        let hs = self.fh_packets();
        assert_eq!(hs.len(), 1, "{hs:?}");
        assert_eq!((hs[0].ack, hs[0].flags), (0, ACK.0));
        let sa2 = self.to_mh.pop().expect("SYN-ACK to the MH");
        let t2 = *sa2.as_tcp().unwrap();
        assert!(t2.flags.syn() && t2.flags.ack());
        assert_eq!(
            (sa2.ip.src, t2.src_port),
            FH,
            "TCP_RAN speaks with the FH's address"
        );
        self.ran_iss = t2.seq;
        self.at_ms(20);
        self.feed(self.mh_ack(0));
        assert!(self.to_fh.is_empty() && self.to_mh.is_empty());
        wan_syn
    }
    fn fh_data(&self, rel: u32, len: u32) -> Packet {
        tcp_packet(
            FH,
            MH,
            FH_ISS + 1 + rel,
            self.wan_iss + 1,
            ACK | TcpFlags::PSH,
            65535,
            len,
        )
    }
    fn fh_fin(&self, rel: u32) -> Packet {
        tcp_packet(
            FH,
            MH,
            FH_ISS + 1 + rel,
            self.wan_iss + 1,
            ACK | TcpFlags::FIN,
            65535,
            0,
        )
    }
    fn mh_ack(&self, rel: u32) -> Packet {
        tcp_packet(MH, FH, MH_ISS + 1, self.ran_iss + 1 + rel, ACK, 65535, 0)
    }
}

fn ack(a: u32, window: u16) -> Seen {
    Seen {
        ack: a,
        window,
        flags: ACK.0,
        len: 0,
        mh_ack: None,
    }
}

/// The first half of Figures 36–38: #1–#7 and what goes to the MH alongside, then the MH's
/// second ACK.
///
/// The host's buffer is 2000 bytes, shared by TCP_WAN's window and TCP_RAN's queue, so #3 fills
/// it (#4, rwin 0) and the MH's ACK of the first segment opens it (#5). #6 fills it again, so
/// rantcp's #7 is itself a zero-window ACK (the figure leaves #7's window unstated), and the
/// MH's ACK of the second segment then brings one packet the figure does not have: the window
/// update, acknowledging the freeze byte (2999) under rule 4. The figures' own packets carry
/// exactly the figures' numbers.
fn es_first_seven(h: &mut Harness) {
    h.handshake(false);
    h.at_ms(30);
    h.feed(h.fh_data(0, 1000)); // #1
    assert_eq!(h.fh_packets(), vec![ack(998, 1000)], "#2: 2 bytes withheld");
    assert_eq!(h.mh_data(), vec![(0, 1000)]);
    h.at_ms(31);
    h.feed(h.fh_data(1000, 1000)); // #3
    assert_eq!(
        h.fh_packets(),
        vec![ack(1998, 0)],
        "#4: rwin 0 freezes the FH"
    );
    assert_eq!(h.mh_data(), vec![(1000, 1000)]);
    h.at_ms(60);
    h.feed(h.mh_ack(1000));
    assert_eq!(
        h.fh_packets(),
        vec![ack(1999, 1000)],
        "#5: the window update acknowledges 1 reserved byte"
    );
    h.at_ms(70);
    h.feed(h.fh_data(2000, 1000)); // #6
    assert_eq!(h.fh_packets(), vec![ack(2998, 0)], "#7");
    assert_eq!(h.mh_data(), vec![(2000, 1000)]);
    h.at_ms(80);
    h.feed(h.mh_ack(2000));
    assert_eq!(
        h.fh_packets(),
        vec![ack(2999, 1000)],
        "the buffer opens: unfreeze"
    );
}

/// The close (#9–#11 of Figure 36): the FH's FIN, the host's FIN+ACK, the last ACK.
fn es_close(h: &mut Harness) {
    h.feed(h.fh_fin(3000)); // #9
    let p = h.fh_packets();
    assert_eq!(p.len(), 1, "{p:?}");
    assert_eq!(
        (p[0].ack, p[0].flags),
        (3001, (ACK | TcpFlags::FIN).0),
        "#10: FIN_ACK"
    );
    // TCP_RAN closes too.
    assert!(h.to_mh.iter().any(|p| p.as_tcp().unwrap().flags.fin()));
    let wan_fin_seq = h.wan_iss + 1;
    h.feed(tcp_packet(
        FH,
        MH,
        FH_ISS + 3002,
        wan_fin_seq + 1,
        ACK,
        65535,
        0,
    )); // #11
    assert!(h.fh_packets().is_empty());
}

#[test]
fn test_figure_36_es_tcp_normal_operation() {
    let mut h = Harness::new(SplitMode::EsTcp, 2000);
    es_first_seven(&mut h);
    h.at_ms(100);
    h.feed(h.mh_ack(3000)); // #6'
    let p = h.fh_packets();
    assert_eq!(p.len(), 1, "{p:?}");
    assert_eq!(p[0].ack, 3000, "#8: the last byte once the MH has it");
    es_close(&mut h);
}

#[test]
fn test_figure_37_es_tcp_freeze_by_estimated_rto() {
    let mut h = Harness::new(SplitMode::EsTcp, 2000);
    es_first_seven(&mut h);
    // TCP_WAN's RTO is its 1 s minimum; the estimate is half of it, from the last ACK at
    // 80 ms.
    h.at_ms(579);
    assert!(h.fh_packets().is_empty());
    h.at_ms(580);
    assert_eq!(
        h.fh_packets(),
        vec![ack(2999, 0)],
        "#8: 1 reserved byte, rwin 0"
    );
    h.at_ms(700);
    h.feed(h.mh_ack(3000)); // #6'
    let p = h.fh_packets();
    assert_eq!((p.len(), p[0].ack), (1, 3000), "#9: {p:?}");
    assert!(p[0].window > 0, "#9 unfreezes");
    es_close(&mut h);
}

#[test]
fn test_figure_38_es_tcp_freeze_on_retransmission() {
    let mut h = Harness::new(SplitMode::EsTcp, 2000);
    es_first_seven(&mut h);
    h.at_ms(300);
    h.feed(h.fh_data(2998, 2)); // #8: the FH retransmits the reserved bytes
    assert_eq!(h.fh_packets(), vec![ack(2999, 0)], "#9: frozen at once");
    h.at_ms(700);
    h.feed(h.mh_ack(3000)); // #6'
    let p = h.fh_packets();
    assert_eq!((p.len(), p[0].ack), (1, 3000), "#10: {p:?}");
    assert!(p[0].window > 0);
    es_close(&mut h);
}

/// I-TCP on the same exchange: everything is acknowledged at once.
#[test]
fn test_i_tcp_acknowledges_everything() {
    let mut h = Harness::new(SplitMode::ITcp, 2000);
    h.handshake(false);
    h.feed(h.fh_data(0, 1000));
    h.feed(h.fh_data(1000, 1000));
    assert_eq!(h.fh_packets(), vec![ack(1000, 1000), ack(2000, 0)]);
    let fig = h.host.figures();
    assert_eq!((fig[0].1.acked_to_fh, fig[0].1.mh_acked), (2000, 0));
}

fn with_mh(a: Seen, mh: u32) -> Seen {
    Seen {
        mh_ack: Some(mh),
        ..a
    }
}

#[test]
fn test_figure_43_as_tcp_single_host() {
    let mut h = Harness::new(SplitMode::AsTcp, 2000);
    let syn = h.handshake(true);
    // #1: the request on the wire, RFC 6994 form: kind 253, length 8, ExID 0x4153, MH ack 0.
    let b = syn.to_bytes();
    let opts = &b[40..];
    let at = opts
        .windows(4)
        .position(|w| w == [0xfd, 0x08, 0x41, 0x53])
        .expect("AS-TCP option in the SYN");
    assert_eq!(&opts[at + 4..at + 8], &[0, 0, 0, 0]);
    h.at_ms(30);
    h.feed(h.fh_data(0, 1000)); // #3
    assert_eq!(h.fh_packets(), vec![ack(1000, 1000)], "#4: a plain ACK");
    assert_eq!(h.mh_data(), vec![(0, 1000)], "#3\"");
    h.feed(h.fh_data(1000, 1000)); // #5
    assert_eq!(h.fh_packets(), vec![ack(2000, 0)], "#6: ZWA");
    assert_eq!(h.mh_data(), vec![(1000, 1000)], "#5\"");
    h.at_ms(60);
    h.feed(h.mh_ack(1000)); // #4"
    let p = h.fh_packets();
    assert_eq!(
        p,
        vec![with_mh(ack(2000, 0), 1000), ack(2000, 1000)],
        "#7: MH_ack 1000 with #6's ack and rwin; #8: the window update"
    );
    // #7 on the wire: the option carries 1000 in TCP_WAN's sequence space.
    h.at_ms(70);
    h.feed(h.fh_data(2000, 1000)); // #9
    assert_eq!(h.fh_packets(), vec![ack(3000, 0)]);
    assert_eq!(h.mh_data(), vec![(2000, 1000)], "#7\"");
    h.at_ms(80);
    h.feed(h.mh_ack(2000)); // #6"
    assert_eq!(
        h.fh_packets(),
        vec![with_mh(ack(3000, 0), 2000), ack(3000, 1000)],
        "#10: ACK 3000 with MH_ack 2000"
    );
    h.at_ms(90);
    h.feed(h.mh_ack(3000)); // #8"
    assert_eq!(
        h.fh_packets(),
        vec![with_mh(ack(3000, 1000), 3000)],
        "#11: MH_ack 3000 (no window update: the 1000-byte window was not small, RFC 1122 §4.2.3.3)"
    );
    h.feed(h.fh_fin(3000)); // #12
    let p = h.fh_packets();
    assert_eq!(
        (p.len(), p[0].ack, p[0].flags),
        (1, 3001, (ACK | TcpFlags::FIN).0),
        "#13"
    );
    let fig = h.host.figures();
    assert!(fig[0].1.as_negotiated);
    assert_eq!((fig[0].1.mh_ack_to_fh, fig[0].1.acked_to_fh), (3000, 3000));
}

/// An FH without the option: AS-TCP falls back to ES-TCP (§5.5).
#[test]
fn test_as_tcp_falls_back_to_es_tcp() {
    let mut h = Harness::new(SplitMode::AsTcp, 2000);
    h.handshake(false);
    h.at_ms(30);
    h.feed(h.fh_data(0, 1000));
    assert_eq!(h.fh_packets(), vec![ack(998, 1000)]);
    assert!(!h.host.figures()[0].1.as_negotiated);
}

/// Figure 44: two AS-TCP hosts, three connections (FH–AH1, AH1–AH2, AH2–MH). A packet one
/// host sends towards the MH reaches the next host, and so on; the FH and the MH are stubs.
struct Chain2 {
    hosts: [SplitHost; 2],
    now: Time,
    to_fh: Vec<Packet>,
    to_mh: Vec<Packet>,
}

impl Chain2 {
    fn new() -> Self {
        let p = SplitParams {
            mode: SplitMode::AsTcp,
            es_rto_factor: 0.5,
            mh_ack_wait: Duration::ZERO,
            fail_at: None,
            after_fail: AfterFail::Drop,
        };
        let mk = |k: &str| SplitHost::new(p, vec![flow(2000)], Rng::for_entity(1, k));
        Chain2 {
            hosts: [mk("ah1"), mk("ah2")],
            now: Time::ZERO,
            to_fh: Vec::new(),
            to_mh: Vec::new(),
        }
    }
    /// Deliver `p` to host `k` (0 = AH1 next to the FH) and everything that follows.
    fn feed(&mut self, k: usize, p: Packet) {
        let mut work = vec![(k, p)];
        while let Some((k, mut p)) = work.pop() {
            let cx = Ctx {
                now: self.now,
                point: Point::Forward(k + 1),
                rnti: None,
                ran: None,
            };
            assert_eq!(self.hosts[k].handle_packet(&cx, &mut p), Verdict::Consume);
            let mut out = Vec::new();
            while let Some(Output::Emit(e)) = self.hosts[k].poll_output() {
                out.push(e.packet);
            }
            for q in out.into_iter().rev() {
                match (q.ip.dst == FH.0, k) {
                    (true, 0) => self.to_fh.push(q),
                    (true, _) => work.push((k - 1, q)),
                    (false, 1) => self.to_mh.push(q),
                    (false, _) => work.push((k + 1, q)),
                }
            }
        }
    }
}

#[test]
fn test_figure_44_two_as_tcp_hosts() {
    let mut c = Chain2::new();
    let mut syn = tcp_packet(MH, FH, MH_ISS, 0, TcpFlags::SYN, 65535, 0);
    syn.as_tcp_mut().unwrap().options.mss = Some(1000);
    c.feed(1, syn);
    // AH2 opens towards AH1 with the request; AH1 opens towards the FH with it.
    let wan_syn = c.to_fh.pop().expect("AH1's SYN to the FH");
    assert_eq!(wan_syn.as_tcp().unwrap().options.as_tcp_ack, Some(0));
    let wan_iss = wan_syn.as_tcp().unwrap().seq;
    let mut sa = tcp_packet(FH, MH, FH_ISS, wan_iss + 1, TcpFlags::SYN | ACK, 65535, 0);
    sa.as_tcp_mut().unwrap().options.mss = Some(1000);
    sa.as_tcp_mut().unwrap().options.as_tcp_ack = Some(0);
    c.feed(0, sa);
    c.to_fh.clear();
    let sa2 = c.to_mh.pop().expect("AH2's SYN-ACK to the MH");
    assert_eq!(
        sa2.as_tcp().unwrap().options.as_tcp_ack,
        None,
        "the MH did not offer the option"
    );
    let ran_iss = sa2.as_tcp().unwrap().seq;
    c.feed(
        1,
        tcp_packet(MH, FH, MH_ISS + 1, ran_iss + 1, ACK, 65535, 0),
    );
    let figs = |c: &Chain2| [c.hosts[0].figures()[0].1, c.hosts[1].figures()[0].1];
    assert!(
        figs(&c).iter().all(|f| f.as_negotiated),
        "both hops speak AS-TCP"
    );
    // The FH sends 3000 bytes; every host acknowledges at once, nobody confirms yet.
    for k in 0..3 {
        c.feed(
            0,
            tcp_packet(FH, MH, FH_ISS + 1 + 1000 * k, wan_iss + 1, ACK, 65535, 1000),
        );
        if k == 1 {
            // The 2000-byte buffers: the MH acknowledges the first segment before the third.
            c.feed(
                1,
                tcp_packet(MH, FH, MH_ISS + 1, ran_iss + 1 + 1000, ACK, 65535, 0),
            );
        }
    }
    let seen: Vec<(u32, Option<u32>)> = c
        .to_fh
        .drain(..)
        .map(|p| {
            let t = p.as_tcp().unwrap();
            (
                t.ack - (FH_ISS + 1),
                t.options.as_tcp_ack.map(|a| a - (FH_ISS + 1)),
            )
        })
        .collect();
    // The MH ack reaches the FH through both hosts, mapped into each sequence space.
    assert!(seen.contains(&(2000, Some(1000))), "{seen:?}");
    assert!(
        seen.iter().all(|s| s.1.is_none_or(|m| m <= 1000)),
        "{seen:?}"
    );
    assert_eq!(
        seen.last().unwrap().0,
        3000,
        "AH1 acknowledged everything: {seen:?}"
    );
    // The MH has 3000 bytes; the FH hears MH_ack 3000 from AH1, relayed from AH2.
    let mh_data: u32 = c.to_mh.iter().map(|p| p.payload_len).sum();
    assert_eq!(mh_data, 3000);
    c.feed(
        1,
        tcp_packet(MH, FH, MH_ISS + 1, ran_iss + 1 + 3000, ACK, 65535, 0),
    );
    let last: Vec<Option<u32>> = c
        .to_fh
        .drain(..)
        .map(|p| {
            p.as_tcp()
                .unwrap()
                .options
                .as_tcp_ack
                .map(|a| a - (FH_ISS + 1))
        })
        .collect();
    assert_eq!(last, vec![Some(3000)]);
    let [f1, f2] = figs(&c);
    assert_eq!((f1.mh_ack_to_fh, f2.mh_ack_to_fh), (3000, 3000));
    assert_eq!((f1.acked_to_fh, f2.acked_to_fh), (3000, 3000));
}
