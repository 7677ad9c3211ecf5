//! External hosts: nodes whose traffic comes from outside the model and goes back out of it —
//! the real-time emulator's network namespaces, where real Linux TCP stacks and applications
//! run (issue 17). An external node is an ordinary node of the topology (its links, routes,
//! functions and pcap all apply); only its transport endpoints are elsewhere:
//!
//! * [`Sim::inject`]: a packet a real host sent leaves the external node at `now`, exactly as
//!   one from a simulated TCP connection would ([`Sim::transmit`]);
//! * a packet addressed to an external node that no simulated endpoint takes (no connection,
//!   listener or UDP sink: where a simulated host would answer RST, RFC 9293 §3.10.7.1) is
//!   handed out instead, to be collected with [`Sim::drain_external`]. Simulated flows at the
//!   same node keep their packets, so simulated background traffic and real traffic mix.
//!
//! Any node also answers ICMP echo requests addressed to it (RFC 1122 §3.2.2.6: the reply
//! returns the request's identifier, sequence number and data), so `ping` reaches every router
//! of the model.

use crate::{NodeId, Sim};
use rantcp_core::Time;
use rantcp_wire::{IcmpHeader, Packet, Transport};

impl Sim {
    /// Make `node` external (see the module docs). Call before the run starts.
    pub fn set_external(&mut self, node: NodeId) {
        self.nodes[node].external = true;
    }

    /// Whether `node` is external.
    pub fn is_external(&self, node: NodeId) -> bool {
        self.nodes[node].external
    }

    /// `p` leaves `node` at `now`, routed like a packet of the node's own endpoints. `now` must
    /// not be before the last event run ([`Sim::now`]): run the model up to `now` first.
    pub fn inject(&mut self, now: Time, node: NodeId, p: Packet) {
        debug_assert!(now >= self.q.now(), "injected in the past");
        self.transmit(now, node, p);
    }

    /// Move the packets handed out to external nodes since the last call into `out`, as
    /// (time of arrival, node, packet), in arrival order.
    pub fn drain_external(&mut self, out: &mut Vec<(Time, NodeId, Packet)>) {
        out.append(&mut self.external_out);
    }

    /// Time of the next event in the queue, if any.
    pub fn next_event_time(&self) -> Option<Time> {
        self.q.peek_time()
    }

    /// Remove every flow, so that the network carries only what is injected: the emulator
    /// switches the scenario's own traffic generators off this way. Only before the run starts.
    ///
    /// # Panics
    /// If a flow has already started.
    pub fn remove_flows(&mut self) {
        assert!(self.conns.is_empty(), "flows already started");
        // Their start events stay queued and find no flow (`on_flow_start`).
        self.flows.clear();
    }

    /// A packet addressed to `node` that no endpoint of the model takes: out to the external
    /// host, or an ICMP echo request answered; anything else is dropped.
    #[cold]
    pub(crate) fn hand_out(&mut self, now: Time, node: NodeId, p: Packet) {
        if self.nodes[node].external {
            self.external_out.push((now, node, p));
            return;
        }
        if let Transport::Icmp(m) = p.transport {
            if m.icmp_type == IcmpHeader::ECHO_REQUEST && m.code == 0 {
                // RFC 1122 §3.2.2.6: swap the addresses, same identifier, sequence and data.
                let mut r = p;
                r.ip.src = p.ip.dst;
                r.ip.dst = p.ip.src;
                r.ip.ttl = 64;
                r.ip.identification = self.nodes[node].ip_id;
                self.nodes[node].ip_id = self.nodes[node].ip_id.wrapping_add(1);
                r.transport = Transport::Icmp(IcmpHeader {
                    icmp_type: IcmpHeader::ECHO_REPLY,
                    ..m
                });
                self.transmit(now, node, r);
            }
        }
    }
}
