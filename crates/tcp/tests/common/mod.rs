//! Shared fixtures for the endpoint tests: addresses, configs, a handshake helper, segment
//! builders for a scripted peer, and a small deterministic two-endpoint network (`Pair`) with
//! fixed delay, a rate limit and seeded loss (quinn's `Pair`, smoltcp's netsim).
#![allow(dead_code)]

use rantcp_core::{Duration, Rng, Time};
use rantcp_tcp::{Endpoint, TcpConfig};
use rantcp_wire::{Ipv4Header, Packet, SackBlock, TcpFlags, TcpHeader, TcpOptions};
use std::collections::BinaryHeap;
use std::net::Ipv4Addr;

pub const CLIENT: (Ipv4Addr, u16) = (Ipv4Addr::new(10, 0, 0, 1), 40000);
pub const SERVER: (Ipv4Addr, u16) = (Ipv4Addr::new(10, 0, 0, 2), 80);
pub const CISS: u32 = 1000;
pub const SISS: u32 = 5000;
pub const MSS: u32 = 1000;

pub fn ms(x: u64) -> Time {
    Time::from_millis(x)
}
pub fn dms(x: u64) -> Duration {
    Duration::from_millis(x)
}

/// A config with round numbers: MSS 1000, no timestamps (so option sets stay small), 1 MB
/// buffers (window scale 4), delayed ACK 40 ms, min RTO 200 ms.
pub fn cfg(sack: bool) -> TcpConfig {
    TcpConfig {
        mss: MSS,
        rcv_buf_bytes: 1_000_000,
        snd_buf_bytes: 1_000_000,
        sack,
        timestamps: false,
        ..TcpConfig::default()
    }
}

pub fn tcp(p: &Packet) -> &TcpHeader {
    p.as_tcp().expect("tcp")
}

pub fn deliver(e: &mut Endpoint, now: Time, p: &Packet) {
    e.handle_segment(now, &p.ip, tcp(p), p.payload_len);
}

pub fn drain(e: &mut Endpoint, now: Time) -> Vec<Packet> {
    let mut v = Vec::new();
    while let Some(p) = e.poll_transmit(now) {
        v.push(p);
        assert!(v.len() < 100_000, "runaway poll_transmit");
    }
    v
}

/// Deliver `pkts` to `s` at `t`, then every ACK it sends to `c` at `t + 10 ms`; returns the ACKs
/// and what `c` sends in reply.
pub fn deliver_and_ack(
    c: &mut Endpoint,
    s: &mut Endpoint,
    t: Time,
    pkts: &[Packet],
) -> (Vec<Packet>, Vec<Packet>) {
    let mut acks = Vec::new();
    for p in pkts {
        deliver(s, t, p);
        acks.extend(drain(s, t));
    }
    let t2 = t + dms(10);
    let mut sent = Vec::new();
    for a in &acks {
        deliver(c, t2, a);
        sent.extend(drain(c, t2));
    }
    (acks, sent)
}

/// Assert that exactly one segment is pending and return it.
pub fn one(e: &mut Endpoint, now: Time) -> Packet {
    let v = drain(e, now);
    assert_eq!(
        v.len(),
        1,
        "expected exactly one segment at {now}, got {v:#?}"
    );
    v[0]
}

pub fn none(e: &mut Endpoint, now: Time) {
    let v = drain(e, now);
    assert!(v.is_empty(), "expected no segment at {now}, got {v:#?}");
}

/// Handshake with a one-way delay of 10 ms: SYN at 0, SYN-ACK at 10 ms, ACK at 20 ms, the
/// server established at 30 ms. Returns (client, server); both have a 20 ms RTT sample.
pub fn established(ccfg: TcpConfig, scfg: TcpConfig) -> (Endpoint, Endpoint) {
    let mut c = Endpoint::connect(ms(0), CLIENT, SERVER, CISS, ccfg);
    let mut s = Endpoint::listen(SERVER, SISS, scfg);
    let syn = one(&mut c, ms(0));
    deliver(&mut s, ms(10), &syn);
    let synack = one(&mut s, ms(10));
    deliver(&mut c, ms(20), &synack);
    let ack = one(&mut c, ms(20));
    deliver(&mut s, ms(30), &ack);
    none(&mut s, ms(30));
    (c, s)
}

/// Build a segment from the server to the client (scripted peer). `ack_off` is the client's
/// data offset acknowledged (0 = nothing but the SYN); `sack` holds data-offset ranges.
pub fn server_ack(ack_off: u32, window_field: u16, sack: &[(u32, u32)]) -> (Ipv4Header, TcpHeader) {
    let mut o = TcpOptions::default();
    for &(l, r) in sack {
        o.push_sack(SackBlock {
            left: CISS + 1 + l,
            right: CISS + 1 + r,
        });
    }
    let h = TcpHeader {
        src_port: SERVER.1,
        dst_port: CLIENT.1,
        seq: SISS + 1,
        ack: CISS + 1 + ack_off,
        flags: TcpFlags::ACK,
        window: window_field,
        urgent: 0,
        options: o,
    };
    (Ipv4Header::new(SERVER.0, CLIENT.0), h)
}

/// A data segment from the client to the server at client data offset `off`.
pub fn client_data(off: u32, len: u32) -> (Ipv4Header, TcpHeader, u32) {
    let h = TcpHeader {
        src_port: CLIENT.1,
        dst_port: SERVER.1,
        seq: CISS + 1 + off,
        ack: SISS + 1,
        flags: TcpFlags::ACK,
        window: 1000,
        urgent: 0,
        options: TcpOptions::default(),
    };
    (Ipv4Header::new(CLIENT.0, SERVER.0), h, len)
}

/// Client data offset of a client segment.
pub fn coff(p: &Packet) -> u32 {
    tcp(p).seq.wrapping_sub(CISS + 1)
}
/// Server-acknowledged client data offset in a server segment.
pub fn sack_off(p: &Packet) -> u32 {
    tcp(p).ack.wrapping_sub(CISS + 1)
}

// ------------------------------------------------------------------------------ Pair

#[derive(PartialEq, Eq)]
struct Ev {
    t: Time,
    seq: u64,
    to_server: bool,
    pkt: Packet,
}
impl Ord for Ev {
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        (o.t, o.seq).cmp(&(self.t, self.seq))
    }
}
impl PartialOrd for Ev {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}

/// Which packets to drop.
pub enum Loss {
    None,
    /// Seeded Bernoulli loss per packet in both directions.
    Random(Rng, f64),
    /// Drop the first transmission of client data segments starting at these data offsets.
    FirstTx(Vec<u32>),
    /// Drop the first `n` transmissions of the client data segment at each data offset.
    Times(Vec<(u32, u32)>),
}

/// Two endpoints joined by a pipe with one-way `delay` and a serialisation `rate_bps` per
/// direction (FIFO, unlimited queue), with loss applied at the pipe entrance.
pub struct Pair {
    pub c: Endpoint,
    pub s: Endpoint,
    pub now: Time,
    pub delay: Duration,
    pub rate_bps: u64,
    pub loss: Loss,
    q: BinaryHeap<Ev>,
    seq: u64,
    link_free: [Time; 2],
    /// (time, to_server, packet, dropped) for every packet sent.
    pub log: Vec<(Time, bool, Packet, bool)>,
    /// Server application reads everything as it arrives.
    pub server_reads: bool,
    pub delivered_to_server_app: u64,
    dropped_once: Vec<u32>,
    /// Events processed (segment arrivals + timer firings).
    pub events: u64,
    /// Record every packet in `log` (off for benchmarks).
    pub keep_log: bool,
    /// Extra per-packet delay, uniform in [0, jitter) (reorders packets), with its own stream.
    pub jitter: Option<(Rng, Duration)>,
    /// Drop-tail queue limit in bytes per direction (`None`: unlimited).
    pub queue_limit_bytes: Option<u64>,
    /// Packets dropped by the drop-tail queue.
    pub queue_drops: u64,
}

impl Pair {
    pub fn new(
        ccfg: TcpConfig,
        scfg: TcpConfig,
        delay: Duration,
        rate_bps: u64,
        loss: Loss,
    ) -> Pair {
        Pair {
            c: Endpoint::connect(Time::ZERO, CLIENT, SERVER, CISS, ccfg),
            s: Endpoint::listen(SERVER, SISS, scfg),
            now: Time::ZERO,
            delay,
            rate_bps,
            loss,
            q: BinaryHeap::new(),
            seq: 0,
            link_free: [Time::ZERO; 2],
            log: Vec::new(),
            server_reads: true,
            delivered_to_server_app: 0,
            dropped_once: Vec::new(),
            events: 0,
            keep_log: true,
            jitter: None,
            queue_limit_bytes: None,
            queue_drops: 0,
        }
    }

    fn flush(&mut self) {
        for to_server in [true, false] {
            loop {
                let e = if to_server { &mut self.c } else { &mut self.s };
                let Some(p) = e.poll_transmit(self.now) else {
                    break;
                };
                let drop = match &mut self.loss {
                    Loss::None => false,
                    Loss::Random(rng, pr) => rng.bernoulli(*pr),
                    Loss::FirstTx(offs) => {
                        let o = coff(&p);
                        if to_server
                            && p.payload_len > 0
                            && offs.contains(&o)
                            && !self.dropped_once.contains(&o)
                        {
                            self.dropped_once.push(o);
                            true
                        } else {
                            false
                        }
                    }
                    Loss::Times(v) => {
                        let o = coff(&p);
                        match v.iter_mut().find(|(off, n)| *off == o && *n > 0) {
                            Some(e) if to_server && p.payload_len > 0 => {
                                e.1 -= 1;
                                true
                            }
                            _ => false,
                        }
                    }
                };
                if self.keep_log {
                    self.log.push((self.now, to_server, p, drop));
                }
                let d = to_server as usize;
                let mut drop = drop;
                if let Some(limit) = self.queue_limit_bytes {
                    // Bytes waiting ahead of this packet (serialisation backlog).
                    let backlog_ns = self.link_free[d].saturating_since(self.now).0 as u128;
                    let backlog_bytes =
                        (backlog_ns * self.rate_bps as u128 / 8 / 1_000_000_000) as u64;
                    if !drop && backlog_bytes + p.len() as u64 > limit {
                        drop = true;
                        self.queue_drops += 1;
                        if self.keep_log {
                            self.log.last_mut().unwrap().3 = true;
                        }
                    }
                }
                if drop {
                    continue;
                }
                let start = self.link_free[d].max(self.now);
                let done = start + Duration::transmission(p.len() as u64, self.rate_bps);
                self.link_free[d] = done;
                {
                    self.seq += 1;
                    let extra = match &mut self.jitter {
                        Some((rng, j)) if j.0 > 0 => Duration(rng.below(j.0)),
                        _ => Duration::ZERO,
                    };
                    self.q.push(Ev {
                        t: done + self.delay + extra,
                        seq: self.seq,
                        to_server,
                        pkt: p,
                    });
                }
            }
        }
    }

    /// Run until `until` or until nothing is left to do.
    pub fn run_until(&mut self, until: Time) {
        self.flush();
        loop {
            let tq = self.q.peek().map(|e| e.t);
            let tc = self.c.poll_timeout();
            let ts = self.s.poll_timeout();
            let next = [tq, tc, ts].into_iter().flatten().min();
            let Some(t) = next else { break };
            if t > until {
                break;
            }
            assert!(t >= self.now, "time went backwards: {t} < {}", self.now);
            self.now = t;
            self.events += 1;
            if tq == Some(t) {
                let ev = self.q.pop().unwrap();
                let p = ev.pkt;
                if ev.to_server {
                    deliver(&mut self.s, t, &p);
                } else {
                    deliver(&mut self.c, t, &p);
                }
            } else if tc == Some(t) {
                self.c.handle_timeout(t);
            } else {
                self.s.handle_timeout(t);
            }
            if self.server_reads {
                let n = self.s.readable();
                self.delivered_to_server_app += self.s.recv(n);
            }
            self.flush();
        }
    }
}
