//! The simulator's side of the network-function contract (rantcp-nf, design.md §5) at nodes:
//! each node owns a [`Chain`] called at [`Point::Forward`] and [`Point::Host`]
//! ([`crate::host`]); this module carries out what the functions ask for — emitted packets
//! are routed from the node (or taken in, when addressed to it), chain timers become events,
//! and [`Action::Feedback`] from a node function or a device ([`crate::Device::poll_action`])
//! reaches the TCP sender of its flow after its delay, as an event.

use crate::sim::Ev;
use crate::{NodeId, Sim};
use rantcp_core::Time;
use rantcp_nf::{Action, Feedback, FlowKey, NetworkFunction, Output};
use rantcp_wire::PROTO_TCP;

/// Feedback on its way to a TCP sender.
#[derive(Clone, Copy, Debug)]
pub(crate) struct PendingFeedback {
    flow: FlowKey,
    fb: Feedback,
}

impl Sim {
    /// Attach `f` at `node`, after the functions already there. It is called at
    /// [`rantcp_nf::Point::Forward`] (packets the node forwards, after the TTL decrement) and
    /// [`rantcp_nf::Point::Host`] (packets addressed to the node, before TCP/UDP
    /// demultiplexing), as its [`NetworkFunction::points`] ask.
    pub fn add_function(&mut self, node: NodeId, f: Box<dyn NetworkFunction>) {
        self.nodes[node].chain.push(f);
        self.arm_chain(node);
    }

    /// Carry out the outputs of `node`'s functions, then re-arm their timer.
    pub(crate) fn service_chain(&mut self, now: Time, node: NodeId) {
        while let Some(o) = self.nodes[node].chain.poll_output() {
            match o {
                Output::Emit(e) => {
                    let p = e.packet;
                    if p.ip.dst == self.nodes[node].addr {
                        // Injected into the node's own stack (after its functions).
                        self.deliver(now, node, p);
                    } else {
                        self.transmit(now, node, p);
                    }
                }
                Output::Action(a) => self.on_action(now, a),
            }
        }
        self.arm_chain(node);
    }

    fn arm_chain(&mut self, node: NodeId) {
        let now = self.q.now();
        let n = &mut self.nodes[node];
        if let Some(t) = n.chain.poll_timeout() {
            let t = t.max(now);
            if n.chain_timer_at.is_none_or(|at| t < at) {
                n.chain_timer_at = Some(t);
                self.q.schedule(t, Ev::ChainTimer { node: node as u32 });
            }
        }
    }

    pub(crate) fn on_chain_timer(&mut self, now: Time, node: NodeId) {
        if self.nodes[node].chain_timer_at != Some(now) {
            return; // superseded by an earlier re-arm
        }
        self.nodes[node].chain_timer_at = None;
        self.nodes[node].chain.handle_timeout(now, None);
        self.service_chain(now, node);
    }

    /// An action of a node function or of a device.
    pub(crate) fn on_action(&mut self, now: Time, a: Action) {
        match a {
            Action::Feedback { flow, fb, delay } => {
                let slot = match self.free_feedback.pop() {
                    Some(i) => {
                        self.feedback[i as usize] = PendingFeedback { flow, fb };
                        i
                    }
                    None => {
                        self.feedback.push(PendingFeedback { flow, fb });
                        (self.feedback.len() - 1) as u32
                    }
                };
                self.q.schedule(now + delay, Ev::Feedback { slot });
            }
            // A node has no radio bearers to purge; the device carries out its own purges.
            Action::PurgeDl { .. } => self.fn_actions_dropped += 1,
        }
    }

    /// Feedback reaches the TCP endpoint that sends `flow` (`flow.src` is the sender).
    pub(crate) fn on_feedback(&mut self, now: Time, slot: u32) {
        let PendingFeedback { flow, fb } = self.feedback[slot as usize];
        self.free_feedback.push(slot);
        let c = if flow.proto == PROTO_TCP {
            self.find_conn(flow.src, flow.src_port, (flow.dst, flow.dst_port))
        } else {
            None
        };
        let Some(c) = c else {
            self.fn_actions_dropped += 1;
            return;
        };
        let f = self.conns[c].flow;
        let r = &mut self.flows[f].result;
        r.feedback_received += 1;
        r.last_feedback_at = Some(now);
        let fb = rantcp_tcp::cc::Feedback {
            sampled_at: fb.sampled_at,
            rate_bps: fb.rate_bps,
            queue_bytes: fb.queue_bytes,
        };
        self.conns[c].ep.handle_feedback(now, &fb);
        self.service(now, c);
    }
}
