//! The far host's side of AS-TCP (dissertation §5.5.1, the "FH-AS-TCP" half of Figure 40 and
//! Figure 42), as an extension of the far host's TCP stack attached at its node
//! ([`Point::Host`] for what it receives, [`Point::HostOut`] for what it sends).
//!
//! * It offers the AS-TCP option on the host's SYNs and answers a SYN that carries it on the
//!   SYN-ACK (§5.5.2 packets #1, #2).
//! * It reads the MH ack from the option of each ACK: the host may free its send buffer up to
//!   there and no further (transmit category #5 of Figure 42). The TCP below still slides its
//!   window on the regular acknowledgement; the agent keeps the "freed" edge — what the far
//!   host's application may be told is delivered — and the bytes retained between the two.
//! * §5.5.1 FH op. 2: an ACK is a duplicate only if both its acknowledgement and its MH ack
//!   repeat the previous ones. An ACK that repeats the acknowledgement and window but brings
//!   a new MH ack is therefore not shown to the TCP below (it would count it as a duplicate
//!   ACK, RFC 5681 §2); its MH ack is taken here. Window updates go through unchanged.
//!
//! Not modelled: holding the FIN until the MH ack covers every byte (Figure 43 #12); the far
//! host's application here completes on its TCP's acknowledgement, and the semantics checker
//! reads the freed edge instead.

use rantcp_nf::{Ctx, NetworkFunction, Point, Points, Verdict};
use rantcp_wire::Packet;
use std::net::Ipv4Addr;

/// One connection of the far host that negotiated AS-TCP.
#[derive(Clone, Copy, Debug)]
struct AgentConn {
    local: (Ipv4Addr, u16),
    remote: (Ipv4Addr, u16),
    /// The far host's initial sequence number (its data start at `iss + 1`).
    iss: Option<u32>,
    /// The peer offered the option on its SYN.
    offered: bool,
    /// Both sides agreed.
    on: bool,
    /// Highest MH ack, as data bytes.
    freed: u64,
    /// Highest regular acknowledgement, as data bytes.
    acked: u64,
    last_ack: u32,
    last_window: u16,
    /// Data bytes before the host's FIN, once it sent one (an acknowledgement of the FIN is
    /// not a data byte).
    data_end: Option<u64>,
}

/// The far host's AS-TCP agent. See the module docs.
#[derive(Default)]
pub struct FhAgent {
    conns: Vec<AgentConn>,
    mh_acks: u64,
    hidden_from_tcp: u64,
}

/// (local, remote, bytes freed, bytes acknowledged) of one split connection.
pub type Edge = ((Ipv4Addr, u16), (Ipv4Addr, u16), u64, u64);

impl FhAgent {
    pub fn new() -> Self {
        FhAgent::default()
    }

    fn find(&mut self, local: (Ipv4Addr, u16), remote: (Ipv4Addr, u16)) -> Option<&mut AgentConn> {
        self.conns
            .iter_mut()
            .find(|c| c.local == local && c.remote == remote)
    }

    fn entry(&mut self, local: (Ipv4Addr, u16), remote: (Ipv4Addr, u16)) -> &mut AgentConn {
        if let Some(k) = self
            .conns
            .iter()
            .position(|c| c.local == local && c.remote == remote)
        {
            return &mut self.conns[k];
        }
        self.conns.push(AgentConn {
            local,
            remote,
            iss: None,
            offered: false,
            on: false,
            freed: 0,
            acked: 0,
            last_ack: 0,
            last_window: 0,
            data_end: None,
        });
        self.conns.last_mut().expect("pushed")
    }

    /// Data bytes the far host may free (and tell its application are delivered) and data
    /// bytes its TCP had acknowledged, per connection (local, remote, freed, acked).
    pub fn edges(&self) -> Vec<Edge> {
        self.conns
            .iter()
            .filter(|c| c.on)
            .map(|c| (c.local, c.remote, c.freed, c.acked))
            .collect()
    }
}

fn data_bytes(seq: u32, iss: u32) -> u64 {
    let d = seq.wrapping_sub(iss.wrapping_add(1)) as i32;
    d.max(0) as u64
}

impl NetworkFunction for FhAgent {
    fn kind(&self) -> &'static str {
        "split_fh"
    }
    fn points(&self) -> Points {
        Points::HOST | Points::HOST_OUT
    }
    fn handle_packet(&mut self, cx: &Ctx, p: &mut Packet) -> Verdict {
        let ip = p.ip;
        let payload_out = p.payload_len;
        let Some(t) = p.as_tcp_mut() else {
            return Verdict::Pass;
        };
        match cx.point {
            Point::HostOut(_) => {
                let (local, remote) = ((ip.src, t.src_port), (ip.dst, t.dst_port));
                if t.flags.fin() && !t.flags.syn() {
                    let end = t.seq.wrapping_add(payload_out);
                    if let Some(c) = self.find(local, remote) {
                        if let Some(iss) = c.iss {
                            c.data_end = Some(data_bytes(end, iss));
                        }
                    }
                }
                if t.flags.syn() {
                    let c = self.entry(local, remote);
                    c.iss = Some(t.seq);
                    if !t.flags.ack() {
                        // §5.5.2 #1 seen from the other side: offer the option.
                        t.options.as_tcp_ack = Some(0);
                    } else if c.offered {
                        // §5.5.2 #2: answer the offer.
                        t.options.as_tcp_ack = Some(0);
                        c.on = true;
                    }
                }
                Verdict::Pass
            }
            Point::Host(_) => {
                let (local, remote) = ((ip.dst, t.dst_port), (ip.src, t.src_port));
                if t.flags.syn() {
                    let offered = t.options.as_tcp_ack.is_some();
                    let c = self.entry(local, remote);
                    if t.flags.ack() {
                        c.on = offered; // our offer answered
                    } else {
                        c.offered = offered;
                    }
                    return Verdict::Pass;
                }
                let payload = p.payload_len;
                let t = *p.as_tcp().expect("tcp");
                let Some(c) = self.find(local, remote) else {
                    return Verdict::Pass;
                };
                if !c.on || !t.flags.ack() {
                    return Verdict::Pass;
                }
                let Some(iss) = c.iss else {
                    return Verdict::Pass;
                };
                let repeat = t.ack == c.last_ack && t.window == c.last_window;
                c.last_ack = t.ack;
                c.last_window = t.window;
                let cap = c.data_end.unwrap_or(u64::MAX);
                c.acked = c.acked.max(data_bytes(t.ack, iss).min(cap));
                let Some(mh) = t.options.as_tcp_ack else {
                    return Verdict::Pass;
                };
                // Transmit category #5: free up to the MH ack (never beyond the regular ack).
                let mh = data_bytes(mh, iss).min(c.acked);
                let new_mh = mh > c.freed;
                c.freed = c.freed.max(mh);
                self.mh_acks += 1;
                if repeat && new_mh && payload == 0 && !t.flags.fin() && t.options.sack_len == 0 {
                    // Not a duplicate (§5.5.1 FH op. 2): keep it from the TCP's dup-ACK count.
                    self.hidden_from_tcp += 1;
                    return Verdict::Consume;
                }
                Verdict::Pass
            }
            _ => Verdict::Pass,
        }
    }
    fn report(&self) -> serde_json::Value {
        let conns: Vec<serde_json::Value> = self
            .conns
            .iter()
            .map(|c| {
                serde_json::json!({
                    "local": format!("{}:{}", c.local.0, c.local.1),
                    "remote": format!("{}:{}", c.remote.0, c.remote.1),
                    "as_tcp": c.on,
                    "freed_bytes": c.freed,
                    "acked_bytes": c.acked,
                    "retained_bytes": c.acked - c.freed.min(c.acked),
                })
            })
            .collect();
        serde_json::json!({
            "mh_acks_received": self.mh_acks,
            "acks_hidden_from_tcp": self.hidden_from_tcp,
            "connections": conns,
        })
    }
}
