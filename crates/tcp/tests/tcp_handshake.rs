//! Connection establishment, teardown and reset, state by state with exact segments
//! (RFC 9293 §3.5, §3.6, §3.10.7; RFC 7323 §2–3; RFC 2018 §2).

mod common;
use common::*;
use rantcp_tcp::{reset_for, Endpoint, State, MSL};
use rantcp_wire::{TcpFlags, TcpOptions};

#[test]
fn test_handshake_exact_segments_with_options() {
    let mut c = Endpoint::connect(ms(0), CLIENT, SERVER, CISS, cfg(true));
    let mut s = Endpoint::listen(SERVER, SISS, cfg(true));
    assert_eq!(c.state(), State::SynSent);
    assert_eq!(s.state(), State::Listen);

    let syn = one(&mut c, ms(0));
    assert_eq!((syn.ip.src, syn.ip.dst), (CLIENT.0, SERVER.0));
    let h = tcp(&syn);
    assert_eq!(
        (h.src_port, h.dst_port, h.seq, h.ack, h.flags),
        (CLIENT.1, SERVER.1, CISS, 0, TcpFlags::SYN)
    );
    assert_eq!(
        h.window, 65535,
        "SYN window is unscaled and capped (RFC 7323 §2.2)"
    );
    let want = TcpOptions {
        mss: Some(1000),
        window_scale: Some(4),
        sack_permitted: true,
        ..Default::default()
    };
    assert_eq!(h.options, want);
    assert_eq!(
        c.poll_timeout(),
        Some(ms(1000)),
        "initial RTO 1 s (RFC 6298 §2.1)"
    );

    deliver(&mut s, ms(10), &syn);
    assert_eq!(s.state(), State::SynReceived);
    assert_eq!(s.remote(), CLIENT);
    let synack = one(&mut s, ms(10));
    let h = tcp(&synack);
    assert_eq!(
        (h.src_port, h.dst_port, h.seq, h.ack, h.flags),
        (
            SERVER.1,
            CLIENT.1,
            SISS,
            CISS + 1,
            TcpFlags::SYN | TcpFlags::ACK
        )
    );
    assert_eq!(h.window, 65535);
    assert_eq!(h.options, want);

    deliver(&mut c, ms(20), &synack);
    assert_eq!(c.state(), State::Established);
    let ack = one(&mut c, ms(20));
    let h = tcp(&ack);
    assert_eq!((h.seq, h.ack, h.flags), (CISS + 1, SISS + 1, TcpFlags::ACK));
    assert_eq!(h.window, 62500, "1 MB >> 4");
    assert_eq!(h.options, TcpOptions::default());
    assert_eq!(ack.payload_len, 0);
    assert_eq!(c.poll_timeout(), None, "nothing outstanding");
    assert_eq!(c.info().srtt, dms(20));

    deliver(&mut s, ms(30), &ack);
    assert_eq!(s.state(), State::Established);
    none(&mut s, ms(30));
    assert_eq!(s.negotiated(), (true, false, true));
    assert_eq!(s.window_scales(), (4, 4));
    assert_eq!(s.info().peer_rwin, 1_000_000);
    assert_eq!(s.info().srtt, dms(20));
}

#[test]
fn test_handshake_options_only_when_both_offer() {
    let mut ccfg = cfg(false);
    ccfg.timestamps = true;
    ccfg.window_scaling = false;
    ccfg.mss = 1460;
    let mut scfg = cfg(true);
    scfg.timestamps = true;
    let mut c = Endpoint::connect(ms(0), CLIENT, SERVER, CISS, ccfg);
    let mut s = Endpoint::listen(SERVER, SISS, scfg);
    let syn = one(&mut c, ms(0));
    assert_eq!(
        tcp(&syn).options,
        TcpOptions {
            mss: Some(1460),
            timestamps: Some((0, 0)),
            ..Default::default()
        }
    );
    deliver(&mut s, ms(10), &syn);
    let synack = one(&mut s, ms(10));
    // No SACK-permitted and no window scale: the client did not offer them.
    assert_eq!(
        tcp(&synack).options,
        TcpOptions {
            mss: Some(1000),
            timestamps: Some((10, 0)),
            ..Default::default()
        }
    );
    deliver(&mut c, ms(20), &synack);
    let ack = one(&mut c, ms(20));
    assert_eq!(
        tcp(&ack).options.timestamps,
        Some((20, 10)),
        "TSecr echoes TS.Recent (RFC 7323 §4.3)"
    );
    assert_eq!(tcp(&ack).window, 65535, "no scaling: capped at 65535");
    assert_eq!(c.send_mss(), 1000, "min(own 1460, peer 1000)");
    deliver(&mut s, ms(30), &ack);
    assert_eq!(s.negotiated(), (false, true, false));
    assert_eq!(c.negotiated(), (false, true, false));
}

#[test]
fn test_syn_sent_retransmits_syn_with_backoff() {
    let mut c = Endpoint::connect(ms(0), CLIENT, SERVER, CISS, cfg(true));
    one(&mut c, ms(0));
    c.handle_timeout(ms(999));
    none(&mut c, ms(999));
    c.handle_timeout(ms(1000));
    let syn = one(&mut c, ms(1000));
    assert_eq!(tcp(&syn).flags, TcpFlags::SYN);
    assert_eq!(c.poll_timeout(), Some(ms(3000)));
}

#[test]
fn test_reset_for_with_and_without_ack() {
    // RFC 9293 §3.10.7.1: ACK set -> <SEQ=SEG.ACK><CTL=RST>.
    let (ip, h, len) = client_data(0, 500);
    let r = reset_for(&ip, &h, len).unwrap();
    let rh = tcp(&r);
    assert_eq!((r.ip.src, r.ip.dst), (SERVER.0, CLIENT.0));
    assert_eq!(
        (rh.src_port, rh.dst_port, rh.seq, rh.flags),
        (SERVER.1, CLIENT.1, SISS + 1, TcpFlags::RST)
    );
    // No ACK -> <SEQ=0><ACK=SEG.SEQ+SEG.LEN><CTL=RST,ACK>, SYN counts in SEG.LEN.
    let (ip, mut h, _) = client_data(0, 0);
    h.flags = TcpFlags::SYN;
    h.seq = CISS;
    let r = reset_for(&ip, &h, 0).unwrap();
    assert_eq!(
        (tcp(&r).seq, tcp(&r).ack, tcp(&r).flags),
        (0, CISS + 1, TcpFlags::RST | TcpFlags::ACK)
    );
    // Never answer a RST.
    h.flags = TcpFlags::RST;
    assert!(reset_for(&ip, &h, 0).is_none());
}

#[test]
fn test_closed_endpoint_answers_data_with_rst() {
    let (mut c, mut s) = established(cfg(true), cfg(true));
    s.abort();
    let rst = one(&mut s, ms(40));
    assert_eq!((tcp(&rst).seq, tcp(&rst).flags), (SISS + 1, TcpFlags::RST));
    assert_eq!(s.state(), State::Closed);
    // Data arriving at the closed server is answered with a RST.
    let (ip, h, len) = client_data(0, 1000);
    s.handle_segment(ms(50), &ip, &h, len);
    let r = one(&mut s, ms(50));
    assert_eq!((tcp(&r).seq, tcp(&r).flags), (SISS + 1, TcpFlags::RST));
    // The client accepts the in-window RST and closes.
    deliver(&mut c, ms(60), &r);
    assert_eq!(c.state(), State::Closed);
    assert!(c.was_reset());
    none(&mut c, ms(60));
    assert_eq!(c.poll_timeout(), None);
}

#[test]
fn test_established_out_of_window_rst_gets_challenge_ack() {
    let (mut c, _s) = established(cfg(true), cfg(true));
    let (ip, mut h) = server_ack(0, 1000, &[]);
    h.flags = TcpFlags::RST;
    h.seq = SISS + 1 + 5000; // in window but not RCV.NXT
    c.handle_segment(ms(40), &ip, &h, 0);
    assert_eq!(c.state(), State::Established);
    let a = one(&mut c, ms(40));
    assert_eq!((tcp(&a).flags, tcp(&a).ack), (TcpFlags::ACK, SISS + 1));
}

#[test]
fn test_listen_answers_ack_with_rst() {
    let mut s = Endpoint::listen(SERVER, SISS, cfg(true));
    let (ip, h, len) = client_data(0, 0);
    s.handle_segment(ms(0), &ip, &h, len);
    let r = one(&mut s, ms(0));
    assert_eq!(
        (tcp(&r).seq, tcp(&r).flags),
        (SISS + 1, TcpFlags::RST),
        "<SEQ=SEG.ACK>"
    );
    assert_eq!(s.state(), State::Listen);
}

#[test]
fn test_fin_close_sequence_active_and_passive() {
    let (mut c, mut s) = established(cfg(true), cfg(true));
    c.close();
    assert_eq!(c.state(), State::FinWait1);
    let fin = one(&mut c, ms(40));
    assert_eq!(
        (tcp(&fin).seq, tcp(&fin).ack, tcp(&fin).flags),
        (CISS + 1, SISS + 1, TcpFlags::FIN | TcpFlags::ACK)
    );
    assert_eq!(c.poll_timeout(), Some(ms(240)), "FIN is covered by the RTO");

    deliver(&mut s, ms(50), &fin);
    assert_eq!(s.state(), State::CloseWait);
    assert!(s.peer_closed());
    let ack = one(&mut s, ms(50));
    assert_eq!(
        (tcp(&ack).seq, tcp(&ack).ack, tcp(&ack).flags),
        (SISS + 1, CISS + 2, TcpFlags::ACK)
    );
    deliver(&mut c, ms(60), &ack);
    assert_eq!(c.state(), State::FinWait2);
    assert_eq!(c.poll_timeout(), None);

    s.close();
    assert_eq!(s.state(), State::LastAck);
    let sfin = one(&mut s, ms(70));
    assert_eq!(
        (tcp(&sfin).seq, tcp(&sfin).ack, tcp(&sfin).flags),
        (SISS + 1, CISS + 2, TcpFlags::FIN | TcpFlags::ACK)
    );
    deliver(&mut c, ms(80), &sfin);
    assert_eq!(c.state(), State::TimeWait);
    assert!(c.peer_closed());
    let last = one(&mut c, ms(80));
    assert_eq!(
        (tcp(&last).seq, tcp(&last).ack, tcp(&last).flags),
        (CISS + 2, SISS + 2, TcpFlags::ACK)
    );
    let tw_end = ms(80) + MSL.saturating_mul(2);
    assert_eq!(c.poll_timeout(), Some(tw_end));

    deliver(&mut s, ms(90), &last);
    assert_eq!(s.state(), State::Closed);
    assert_eq!(s.poll_timeout(), None);

    c.handle_timeout(tw_end - dms(1));
    assert_eq!(c.state(), State::TimeWait);
    c.handle_timeout(tw_end);
    assert_eq!(c.state(), State::Closed);
    assert_eq!(c.poll_timeout(), None);
}

#[test]
fn test_fin_after_data_and_simultaneous_close() {
    let (mut c, mut s) = established(cfg(true), cfg(true));
    assert_eq!(c.send(1500), 1500);
    c.close();
    let v = drain(&mut c, ms(40));
    assert_eq!(v.len(), 2);
    assert_eq!(
        (coff(&v[0]), v[0].payload_len, tcp(&v[0]).flags),
        (0, 1000, TcpFlags::ACK)
    );
    assert_eq!((coff(&v[1]), v[1].payload_len), (1000, 500));
    assert_eq!(
        tcp(&v[1]).flags,
        TcpFlags::ACK | TcpFlags::PSH | TcpFlags::FIN,
        "FIN rides on the last segment"
    );
    assert_eq!(c.send(10), 0, "no data after close");
    // Simultaneous close: the server closes before it sees our FIN.
    s.close();
    let sfin = one(&mut s, ms(40));
    deliver(&mut c, ms(50), &sfin);
    assert_eq!(c.state(), State::Closing);
    for p in &v {
        deliver(&mut s, ms(50), p);
    }
    assert_eq!(s.state(), State::Closing);
    assert_eq!(s.readable(), 1500);
    let sack = one(&mut s, ms(50));
    deliver(&mut c, ms(60), &sack);
    assert_eq!(c.state(), State::TimeWait);
    let cack = drain(&mut c, ms(60));
    for p in &cack {
        deliver(&mut s, ms(70), p);
    }
    assert_eq!(s.state(), State::TimeWait);
}

#[test]
fn test_fin_retransmitted_on_rto() {
    let (mut c, _s) = established(cfg(true), cfg(true));
    c.close();
    let fin = one(&mut c, ms(40));
    c.handle_timeout(ms(240));
    let fin2 = one(&mut c, ms(240));
    assert_eq!(tcp(&fin2).seq, tcp(&fin).seq);
    assert!(tcp(&fin2).flags.fin());
    assert_eq!(c.poll_timeout(), Some(ms(640)));
}

#[test]
fn test_syn_timeout_then_rto_is_three_seconds() {
    // RFC 6298 §5.7: after a lost SYN, no handshake sample (Karn) and RTO = 3 s for data.
    let mut c = Endpoint::connect(ms(0), CLIENT, SERVER, CISS, cfg(true));
    let mut s = Endpoint::listen(SERVER, SISS, cfg(true));
    one(&mut c, ms(0)); // lost
    c.handle_timeout(ms(1000));
    let syn = one(&mut c, ms(1000));
    deliver(&mut s, ms(1010), &syn);
    let synack = one(&mut s, ms(1010));
    deliver(&mut c, ms(1020), &synack);
    assert_eq!(c.state(), State::Established);
    assert_eq!(c.stats().rtt_samples, 0);
    assert_eq!(c.info().rto, dms(3000));
    c.send(100);
    let v = drain(&mut c, ms(1020));
    assert_eq!(v.len(), 1, "data piggybacks the handshake ACK");
    assert_eq!(c.poll_timeout(), Some(ms(4020)));
}

#[test]
fn test_syn_received_retransmitted_syn_gets_synack_again() {
    let mut c = Endpoint::connect(ms(0), CLIENT, SERVER, CISS, cfg(true));
    let mut s = Endpoint::listen(SERVER, SISS, cfg(true));
    let syn = one(&mut c, ms(0));
    deliver(&mut s, ms(10), &syn);
    let sa1 = one(&mut s, ms(10)); // lost
    c.handle_timeout(ms(1000));
    let syn2 = one(&mut c, ms(1000));
    deliver(&mut s, ms(1010), &syn2);
    let sa2 = one(&mut s, ms(1010));
    assert_eq!(tcp(&sa2).flags, tcp(&sa1).flags);
    assert_eq!((tcp(&sa2).seq, tcp(&sa2).ack), (SISS, CISS + 1));
    deliver(&mut c, ms(1020), &sa2);
    let a = one(&mut c, ms(1020));
    deliver(&mut s, ms(1030), &a);
    assert_eq!(s.state(), State::Established);
    none(&mut s, ms(1030));
    // The SYN-ACK timer on the server side also retransmits, with backoff (RFC 6298 §5.5).
    let mut s2 = Endpoint::listen(SERVER, SISS, cfg(true));
    deliver(&mut s2, ms(0), &syn);
    one(&mut s2, ms(0));
    assert_eq!(s2.poll_timeout(), Some(ms(1000)));
    s2.handle_timeout(ms(1000));
    assert_eq!(
        tcp(&one(&mut s2, ms(1000))).flags,
        TcpFlags::SYN | TcpFlags::ACK
    );
    assert_eq!(s2.poll_timeout(), Some(ms(3000)));
}

#[test]
fn test_fin_wait_2_still_receives_data_half_close() {
    let (mut c, mut s) = established(cfg(true), cfg(true));
    c.close();
    let fin = one(&mut c, ms(40));
    deliver(&mut s, ms(50), &fin);
    let a = one(&mut s, ms(50));
    deliver(&mut c, ms(60), &a);
    assert_eq!(c.state(), State::FinWait2);
    // CLOSE-WAIT may still send; FIN-WAIT-2 receives and ACKs (two full segments).
    assert_eq!(s.send(2000), 2000);
    let v = drain(&mut s, ms(70));
    assert_eq!(v.len(), 2);
    for p in &v {
        deliver(&mut c, ms(80), p);
    }
    let a = one(&mut c, ms(80));
    assert_eq!((tcp(&a).seq, tcp(&a).ack), (CISS + 2, SISS + 1 + 2000));
    assert_eq!(c.recv(u64::MAX), 2000);
    assert_eq!(c.state(), State::FinWait2);
}

#[test]
fn test_time_wait_reacks_retransmitted_fin_and_restarts_timer() {
    let (mut c, mut s) = established(cfg(true), cfg(true));
    c.close();
    let fin = one(&mut c, ms(40));
    deliver(&mut s, ms(50), &fin);
    s.close();
    let v = drain(&mut s, ms(50));
    assert_eq!(v.len(), 1, "ACK piggybacked on the FIN");
    assert_eq!(tcp(&v[0]).flags, TcpFlags::FIN | TcpFlags::ACK);
    deliver(&mut c, ms(60), &v[0]);
    assert_eq!(c.state(), State::TimeWait);
    one(&mut c, ms(60)); // final ACK, lost
                         // The server's FIN is retransmitted at its RTO; TIME-WAIT ACKs it and restarts 2 MSL.
    s.handle_timeout(ms(250));
    let fin2 = one(&mut s, ms(250));
    deliver(&mut c, ms(260), &fin2);
    let a = one(&mut c, ms(260));
    assert_eq!(
        (tcp(&a).seq, tcp(&a).ack, tcp(&a).flags),
        (CISS + 2, SISS + 2, TcpFlags::ACK)
    );
    assert_eq!(c.poll_timeout(), Some(ms(260) + MSL.saturating_mul(2)));
    deliver(&mut s, ms(270), &a);
    assert_eq!(s.state(), State::Closed);
}

#[test]
fn test_syn_sent_rst_with_acceptable_ack_closes() {
    let mut c = Endpoint::connect(ms(0), CLIENT, SERVER, CISS, cfg(true));
    let syn = one(&mut c, ms(0));
    // A host with no listener answers the SYN with RST|ACK.
    let r = reset_for(&syn.ip, tcp(&syn), 0).unwrap();
    assert_eq!(
        (tcp(&r).seq, tcp(&r).ack, tcp(&r).flags),
        (0, CISS + 1, TcpFlags::RST | TcpFlags::ACK)
    );
    deliver(&mut c, ms(10), &r);
    assert_eq!(c.state(), State::Closed);
    assert!(c.was_reset());
    assert_eq!(c.poll_timeout(), None);
    none(&mut c, ms(10));
}

#[test]
fn test_abort_sends_rst_at_snd_nxt() {
    let (mut c, mut s) = established(cfg(true), cfg(true));
    c.send(3000);
    drain(&mut c, ms(40));
    c.abort();
    assert_eq!(c.state(), State::Closed);
    let r = one(&mut c, ms(41));
    assert_eq!(
        (tcp(&r).seq, tcp(&r).flags),
        (CISS + 1 + 3000, TcpFlags::RST)
    );
    assert_eq!(c.poll_timeout(), None);
    // The server has not received the data (lost): RST seq is beyond RCV.NXT, inside the
    // window: challenge ACK (RFC 5961 §3.2), the connection survives.
    deliver(&mut s, ms(50), &r);
    assert_eq!(s.state(), State::Established);
    let a = one(&mut s, ms(50));
    assert_eq!(tcp(&a).flags, TcpFlags::ACK);
    // ...and that challenge ACK to the closed client draws a RST with SEQ = SEG.ACK, which
    // matches RCV.NXT and resets the server.
    deliver(&mut c, ms(60), &a);
    let r2 = one(&mut c, ms(60));
    assert_eq!((tcp(&r2).seq, tcp(&r2).flags), (CISS + 1, TcpFlags::RST));
    deliver(&mut s, ms(70), &r2);
    assert_eq!(s.state(), State::Closed);
    assert!(s.was_reset());
}

#[test]
fn test_forget_sends_nothing_then_answers_each_segment_with_rst() {
    // A video client that moved on (dissertation §4.2): the server's data still arrives.
    let (mut c, mut s) = established(cfg(true), cfg(true));
    s.send(3000);
    let data = drain(&mut s, ms(40));
    assert_eq!(data.len(), 3);
    c.forget();
    assert_eq!(c.state(), State::Closed);
    none(&mut c, ms(40));
    assert_eq!(c.poll_timeout(), None);
    // RFC 9293 §3.10.7.1: every segment but a RST draws <SEQ=SEG.ACK><CTL=RST>; the first one
    // matches the server's RCV.NXT and resets it.
    for (k, d) in data.iter().enumerate() {
        deliver(&mut c, ms(50 + k as u64), d);
        let r = one(&mut c, ms(50 + k as u64));
        assert_eq!((tcp(&r).seq, tcp(&r).flags), (CISS + 1, TcpFlags::RST));
        assert_eq!(c.readable(), 0, "nothing reaches the application");
        if k == 0 {
            deliver(&mut s, ms(60), &r);
            assert_eq!(s.state(), State::Closed);
            assert!(s.was_reset());
        }
    }
}
