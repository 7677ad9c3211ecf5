//! Hosts: what a node does with a packet it receives — forward it (RFC 791 §3.2 TTL,
//! RFC 1812 §5.2) or take it in and demultiplex it to a TCP connection (RFC 9293 §3.10.7.2:
//! the connection whose 4-tuple matches, else a listener on the port, else RST per
//! §3.10.7.1) or a UDP sink (RFC 768) — with the node's network functions called at
//! [`Point::Forward`], [`Point::Host`] and, for what the host itself sends, [`Point::HostOut`].
//!
//! The demultiplexer is hashed on (local port, remote address, remote port): one lookup per
//! segment whatever the number of connections at the host (a server with 200 UEs used to
//! compare 200 connections per ACK); a host with at most 8 connections scans their packed keys
//! instead, which is cheaper than hashing.

use crate::app::FlowId;
use crate::topology::IfaceId;
use crate::{NodeId, Sim};
use rantcp_core::Time;
use rantcp_nf::{Ctx, Point, Points, Verdict};
use rantcp_tcp::{reset_for, State};
use rantcp_wire::{Packet, Transport};
use rustc_hash::FxHashMap;
use std::net::Ipv4Addr;

/// The 4-tuple of a connection at a host (its local address is the host's), packed.
#[inline]
pub(crate) fn conn_key(local_port: u16, remote: (Ipv4Addr, u16)) -> u64 {
    (local_port as u64) << 48 | (u32::from(remote.0) as u64) << 16 | remote.1 as u64
}

/// Connections by [`conn_key`]: a short list searched in order while a host has few (a
/// scan of a handful of keys beats hashing), a hash map once it has more.
enum ConnTable {
    Few(Vec<(u64, usize)>),
    Many(FxHashMap<u64, usize>),
}

/// Up to this many connections a host scans its list.
const FEW: usize = 8;

impl Default for ConnTable {
    fn default() -> Self {
        ConnTable::Few(Vec::new())
    }
}

impl ConnTable {
    #[inline]
    fn get(&self, key: u64) -> Option<usize> {
        match self {
            ConnTable::Few(v) => v.iter().find(|e| e.0 == key).map(|e| e.1),
            ConnTable::Many(m) => m.get(&key).copied(),
        }
    }
    /// Insert unless `key` is taken (the first connection keeps its 4-tuple).
    fn insert(&mut self, key: u64, c: usize) {
        match self {
            ConnTable::Few(v) if v.iter().any(|e| e.0 == key) => {}
            ConnTable::Few(v) if v.len() < FEW => v.push((key, c)),
            ConnTable::Few(v) => {
                let mut m: FxHashMap<u64, usize> = v.drain(..).collect();
                m.insert(key, c);
                *self = ConnTable::Many(m);
            }
            ConnTable::Many(m) => {
                m.entry(key).or_insert(c);
            }
        }
    }
}

/// A host's transport endpoints.
#[derive(Default)]
pub(crate) struct Host {
    /// Connections with a remote end, by [`conn_key`]. A connection stays here after it
    /// closes (a late segment still reaches it, as with a linear search).
    conns: ConnTable,
    /// Connections opened passively, in creation order; looked up (state LISTEN, by port) only
    /// for segments that match no 4-tuple.
    listeners: Vec<usize>,
    /// UDP sinks by port.
    udp: FxHashMap<u16, FlowId>,
    /// TCP segments answered with RST because no connection matched.
    pub(crate) resets_sent: u64,
}

impl Host {
    /// Register connection `c`: under its 4-tuple when it has a remote end, as a listener
    /// when it was opened passively. The first connection registered under a 4-tuple keeps it.
    pub(crate) fn register(&mut self, c: usize, key: Option<u64>, passive: bool) {
        if let Some(k) = key {
            self.conns.insert(k, c);
        }
        if passive {
            self.listeners.push(c);
        }
    }

    pub(crate) fn add_udp_sink(&mut self, port: u16, flow: FlowId) {
        self.udp.entry(port).or_insert(flow);
    }

    /// The connection registered under `key`, if any.
    #[inline]
    pub(crate) fn lookup(&self, key: u64) -> Option<usize> {
        self.conns.get(key)
    }
}

impl Sim {
    /// A packet fully received on `iface`: take it in or forward it.
    pub(crate) fn receive(&mut self, now: Time, iface: IfaceId, mut p: Packet) {
        let node = self.ifaces[iface].node;
        self.record(now, now, iface, &p);
        if p.ip.dst == self.nodes[node].addr {
            if self.nodes[node].chain.wants(Points::HOST) {
                if self.chain_verdict(now, node, Point::Host(node), &mut p) == Verdict::Pass {
                    self.deliver(now, node, p);
                }
                self.service_chain(now, node);
            } else {
                self.deliver(now, node, p);
            }
        } else {
            // RFC 791 §3.2: decrement TTL when forwarding; discard at zero.
            if p.ip.ttl <= 1 {
                return;
            }
            p.ip.ttl -= 1;
            self.nodes[node].forwarded += 1;
            if self.nodes[node].chain.wants(Points::FORWARD) {
                if self.chain_verdict(now, node, Point::Forward(node), &mut p) == Verdict::Pass {
                    self.transmit(now, node, p);
                }
                self.service_chain(now, node);
            } else {
                self.transmit(now, node, p);
            }
        }
    }

    /// Send a packet of `node`'s own TCP/UDP stack: through the node's functions at
    /// [`Point::HostOut`] (they may modify, drop or take it), then routed.
    pub(crate) fn host_send(&mut self, now: Time, node: NodeId, mut p: Packet) {
        if self.nodes[node].chain.wants(Points::HOST_OUT) {
            if self.chain_verdict(now, node, Point::HostOut(node), &mut p) == Verdict::Pass {
                self.transmit(now, node, p);
            }
            self.service_chain(now, node);
        } else {
            self.transmit(now, node, p);
        }
    }

    /// The node's functions' verdict on `p` at `point` (they may modify it). The caller
    /// carries out the verdict, then the functions' outputs ([`Sim::service_chain`]).
    fn chain_verdict(&mut self, now: Time, node: NodeId, point: Point, p: &mut Packet) -> Verdict {
        let cx = Ctx {
            now,
            point,
            rnti: None,
            ran: None,
        };
        self.nodes[node].chain.handle_packet(&cx, p)
    }

    /// Take in a packet addressed to `node`: TCP or UDP demultiplexing.
    pub(crate) fn deliver(&mut self, now: Time, node: NodeId, p: Packet) {
        match &p.transport {
            Transport::Tcp(tcp) => {
                let remote = (p.ip.src, tcp.src_port);
                let key = conn_key(tcp.dst_port, remote);
                // RFC 9293 §3.10.7.2: the connection of the exact 4-tuple, then a listener.
                let found = match self.nodes[node].host.lookup(key) {
                    Some(c) => Some(c),
                    None => self.listener(node, tcp.dst_port, remote),
                };
                match found {
                    Some(c) => {
                        if self.conns[c].abandoned && p.payload_len > 0 {
                            // Video data for a connection the player left: thrown away.
                            self.note_late(c, p.payload_len);
                        }
                        self.conns[c]
                            .ep
                            .handle_segment(now, &p.ip, tcp, p.payload_len);
                        // A listener that took a SYN now has a remote end.
                        if self.conns[c].key.is_none() {
                            self.register_remote(c);
                        }
                        self.service(now, c);
                    }
                    None => {
                        if self.nodes[node].external {
                            self.hand_out(now, node, p);
                            return;
                        }
                        // RFC 9293 §3.10.7.1: a segment for no connection is answered with RST.
                        if let Some(rst) = reset_for(&p.ip, tcp, p.payload_len) {
                            self.nodes[node].host.resets_sent += 1;
                            self.host_send(now, node, rst);
                        }
                    }
                }
            }
            Transport::Udp(udp) => {
                if let Some(&f) = self.nodes[node].host.udp.get(&udp.dst_port) {
                    let r = &mut self.flows[f].result;
                    r.udp_received_packets += 1;
                    r.delivered_bytes += p.payload_len as u64;
                    r.first_delivery.get_or_insert(now);
                    r.last_delivery = Some(now);
                } else {
                    self.hand_out(now, node, p);
                }
            }
            Transport::Icmp(_) => {
                self.hand_out(now, node, p);
            }
        }
    }

    /// The first passively opened connection at `node` listening on `port` for `remote` (or
    /// for any peer when it names none).
    fn listener(&self, node: NodeId, port: u16, remote: (Ipv4Addr, u16)) -> Option<usize> {
        self.nodes[node].host.listeners.iter().copied().find(|&c| {
            let conn = &self.conns[c];
            conn.ep.local().1 == port
                && conn.ep.state() == State::Listen
                && conn.peer.is_none_or(|p| p == remote)
        })
    }

    /// Register connection `c` under its 4-tuple once it has a remote end.
    pub(crate) fn register_remote(&mut self, c: usize) {
        let conn = &mut self.conns[c];
        let remote = conn.ep.remote();
        if remote.1 == 0 && remote.0.is_unspecified() {
            return;
        }
        let key = conn_key(conn.ep.local().1, remote);
        conn.key = Some(key);
        let node = conn.node;
        self.nodes[node].host.register(c, Some(key), false);
    }

    /// The connection at the host `addr` whose 4-tuple is (`local_port`, `remote`).
    pub(crate) fn find_conn(
        &self,
        addr: Ipv4Addr,
        local_port: u16,
        remote: (Ipv4Addr, u16),
    ) -> Option<usize> {
        let node = *self.node_by_addr.get(&addr)?;
        self.nodes[node].host.lookup(conn_key(local_port, remote))
    }

    /// RSTs sent by hosts for segments that matched no connection.
    pub fn resets_sent(&self) -> u64 {
        self.nodes.iter().map(|n| n.host.resets_sent).sum()
    }
}
