//! The simulator: the event loop that joins the sans-IO entities (design.md §3). Entities
//! never touch the queue; this module and its siblings turn their outputs into events:
//! [`crate::topology`] (nodes, interfaces, routes, links, devices), [`crate::host`]
//! (forwarding and demultiplexing), [`crate::app`] (applications and TCP connections),
//! [`crate::functions`] (network functions at nodes), [`crate::metrics`] (results and time
//! series).
//!
//! Build a network with [`Sim::add_node`], [`Sim::connect`] and [`Sim::add_route`], add flows
//! with [`Sim::add_flow`] and functions with [`Sim::add_function`], then advance it with
//! [`Sim::run_until`]. Events at one time run in the order they were scheduled.

use crate::app::{Conn, Flow};
use crate::functions::PendingFeedback;
use crate::link::Offer;
use crate::topology::{DeviceSlot, Egress, Iface, LinkEnd, Node};
use crate::NodeId;
use rantcp_core::{Duration, EventQueue, Time};
use rantcp_nf::SampleSink;
use rantcp_wire::Packet;
use rustc_hash::FxHashMap;
use std::net::Ipv4Addr;

#[derive(Clone, Copy, Debug)]
pub(crate) enum Ev {
    /// The first packet travelling on a link is fully received at its far end.
    Arrive {
        link: u32,
    },
    /// A connection's timer.
    Timer {
        conn: u32,
    },
    FlowStart {
        flow: u32,
    },
    /// A device's timer.
    DeviceTimer {
        dev: u32,
    },
    CbrTick {
        flow: u32,
    },
    /// A paced application write (app.rs `AppWrite`).
    AppWrite {
        conn: u32,
    },
    /// A burst of a bursty application arrives (app.rs `Bursts`).
    Burst {
        conn: u32,
    },
    /// An M2M server's think time ends (app.rs `M2m`).
    M2mNext {
        conn: u32,
    },
    /// A video player's GET is due, and a blocked player looks again (video.rs).
    VideoGet {
        flow: u32,
    },
    VideoTick {
        flow: u32,
    },
    Sample,
    /// The timer of a node's network functions.
    ChainTimer {
        node: u32,
    },
    /// Network-function feedback reaches its TCP sender.
    Feedback {
        slot: u32,
    },
}

/// The simulator.
pub struct Sim {
    pub(crate) seed: u64,
    pub(crate) q: EventQueue<Ev>,
    pub(crate) nodes: Vec<Node>,
    pub(crate) node_by_addr: FxHashMap<Ipv4Addr, NodeId>,
    pub(crate) ifaces: Vec<Iface>,
    pub(crate) links: Vec<LinkEnd>,
    pub(crate) devices: Vec<DeviceSlot>,
    pub(crate) conns: Vec<Conn>,
    pub(crate) flows: Vec<Flow>,
    /// Feedback in flight (slab indexed by `Ev::Feedback::slot`).
    pub(crate) feedback: Vec<PendingFeedback>,
    pub(crate) free_feedback: Vec<u32>,
    pub(crate) fn_samples: SampleSink,
    pub(crate) fn_actions_dropped: u64,
    pub(crate) sample_interval: Option<Duration>,
    pub(crate) io_error: Option<String>,
    /// Packets for external nodes ([`crate::external`]), until drained.
    pub(crate) external_out: Vec<(Time, NodeId, Packet)>,
}

impl Sim {
    /// A new, empty network. `seed` derives every entity's random stream.
    pub fn new(seed: u64) -> Self {
        Sim {
            seed,
            q: EventQueue::new(),
            nodes: Vec::new(),
            node_by_addr: FxHashMap::default(),
            ifaces: Vec::new(),
            links: Vec::new(),
            devices: Vec::new(),
            conns: Vec::new(),
            flows: Vec::new(),
            feedback: Vec::new(),
            free_feedback: Vec::new(),
            fn_samples: SampleSink::default(),
            fn_actions_dropped: 0,
            sample_interval: None,
            io_error: None,
            external_out: Vec::new(),
        }
    }

    pub fn seed(&self) -> u64 {
        self.seed
    }
    pub fn now(&self) -> Time {
        self.q.now()
    }
    pub fn events_executed(&self) -> u64 {
        self.q.events_executed()
    }

    /// Run every event at or before `until`; returns the simulated time reached (`until`).
    pub fn run_until(&mut self, until: Time) -> Result<Time, String> {
        while let Some((now, ev)) = self.q.pop_until(until) {
            match ev {
                Ev::Arrive { link } => self.on_arrive(now, link as usize),
                Ev::Timer { conn } => self.on_timer(now, conn as usize),
                Ev::FlowStart { flow } => self.on_flow_start(now, flow as usize),
                Ev::DeviceTimer { dev } => self.on_device_timer(now, dev as usize),
                Ev::CbrTick { flow } => self.on_cbr_tick(now, flow as usize),
                Ev::AppWrite { conn } => self.on_app_write(now, conn as usize),
                Ev::Burst { conn } => self.on_burst(now, conn as usize),
                Ev::M2mNext { conn } => self.on_m2m_next(now, conn as usize),
                Ev::VideoGet { flow } => self.on_video_get(now, flow as usize),
                Ev::VideoTick { flow } => self.on_video_tick(now, flow as usize),
                Ev::Sample => self.on_sample(now),
                Ev::ChainTimer { node } => self.on_chain_timer(now, node as usize),
                Ev::Feedback { slot } => self.on_feedback(now, slot),
            }
        }
        match self.io_error.take() {
            Some(e) => Err(e),
            None => Ok(until),
        }
    }

    /// Send `p` out of `node` towards its destination.
    pub(crate) fn transmit(&mut self, now: Time, node: NodeId, p: Packet) {
        let Some(iface) = self.route(node, p.ip.dst) else {
            return; // no route: discarded, like a host without a default route
        };
        let link = match self.ifaces[iface].egress {
            Egress::Link(l) => l,
            Egress::Device(d) => {
                self.record(now, now, iface, &p);
                self.devices[d].dev.handle_packet(now, node, p);
                self.service_device(now, d);
                return;
            }
        };
        match self.links[link].link.offer(now, p.len()) {
            Offer::Dropped => {}
            Offer::Sent {
                tx_start,
                arrival,
                corrupted,
            } => {
                self.record(now, tx_start, iface, &p);
                if !corrupted {
                    // A link delivers in the order it sends (arrival = serialisation end + a
                    // fixed delay), so only its first packet's arrival is in the event heap;
                    // the others wait here with the sequence number `schedule` would have
                    // given them (EventQueue::reserve): same order, smaller heap.
                    let seq = self.q.reserve();
                    let l = &mut self.links[link];
                    debug_assert!(l.in_flight.back().is_none_or(|b| b.0 <= arrival));
                    if l.in_flight.is_empty() {
                        self.q
                            .schedule_reserved(arrival, seq, Ev::Arrive { link: link as u32 });
                    }
                    l.in_flight.push_back((arrival, seq, p));
                }
            }
        }
    }

    fn on_arrive(&mut self, now: Time, link: usize) {
        let l = &mut self.links[link];
        let (_, _, p) = l.in_flight.pop_front().expect("an arrival has its packet");
        if let Some(&(t, seq, _)) = l.in_flight.front() {
            self.q
                .schedule_reserved(t, seq, Ev::Arrive { link: link as u32 });
        }
        let iface = l.rx_iface;
        self.receive(now, iface, p);
    }

    fn on_device_timer(&mut self, now: Time, d: usize) {
        if self.devices[d].timer_at != Some(now) {
            return; // superseded by an earlier re-arm
        }
        self.devices[d].timer_at = None;
        self.devices[d].dev.handle_timeout(now);
        self.service_device(now, d);
    }

    /// Hand a device's deliveries to their nodes, carry out its functions' actions, then
    /// re-arm its timer. Not re-entrant: when a delivery makes a node send into the same
    /// device (an ACK at once), the drain already running picks up what that produces, so the
    /// stack does not grow with the number of packets a device delivers at one instant.
    fn service_device(&mut self, now: Time, d: usize) {
        if self.devices[d].draining {
            return;
        }
        self.devices[d].draining = true;
        loop {
            let mut any = false;
            while let Some((node, p)) = self.devices[d].dev.poll_deliver(now) {
                any = true;
                let Some(&(_, iface)) = self.devices[d].ifaces.iter().find(|(n, _)| *n == node)
                else {
                    continue; // not attached: a model bug, the packet is dropped
                };
                self.receive(now, iface, p);
            }
            while let Some(a) = self.devices[d].dev.poll_action() {
                any = true;
                self.on_action(now, a);
            }
            if !any {
                break;
            }
        }
        self.devices[d].draining = false;
        self.arm_device(d);
    }

    pub(crate) fn arm_device(&mut self, d: usize) {
        let slot = &mut self.devices[d];
        if let Some(t) = slot.dev.poll_timeout() {
            let t = t.max(self.q.now());
            if slot.timer_at.is_none_or(|at| t < at) {
                slot.timer_at = Some(t);
                self.q.schedule(t, Ev::DeviceTimer { dev: d as u32 });
            }
        }
    }
}
