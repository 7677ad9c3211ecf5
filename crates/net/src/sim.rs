//! The simulator: nodes, interfaces, routes, hosts with TCP endpoints and applications, and
//! the event loop that joins them.
//!
//! Build a network with [`Sim::add_node`], [`Sim::connect`] and [`Sim::add_route`], add flows
//! with [`Sim::add_flow`], then advance it with [`Sim::run_until`]. Entities are sans-IO; this
//! module is the only place that turns their outputs into events (design.md §3).

use crate::link::{Link, LinkParams, Offer};
use crate::pcapsink::PcapSink;
use rantcp_core::{Duration, EventQueue, Rng, Time};
use rantcp_tcp::cc::CcTrace;
use rantcp_tcp::{reset_for, Endpoint, State, TcpConfig, TcpInfo, TcpStats};
use rantcp_wire::{Ipv4Header, Packet, Transport, UdpHeader, IPV4_HEADER_LEN, UDP_HEADER_LEN};
use std::net::Ipv4Addr;
use std::path::Path;

pub use rantcp_nf::{Device, NodeId};
/// Index of an interface (one end of a link).
pub type IfaceId = usize;
/// Index of a flow.
pub type FlowId = usize;

#[derive(Clone, Copy, Debug)]
struct Route {
    net: u32,
    mask: u32,
    iface: IfaceId,
}

struct Node {
    name: String,
    addr: Ipv4Addr,
    ifaces: Vec<IfaceId>,
    routes: Vec<Route>,
    /// Connections terminating here, for demultiplexing.
    conns: Vec<usize>,
    /// UDP sinks here: (port, flow).
    udp_sinks: Vec<(u16, FlowId)>,
    /// TCP segments answered with RST because no connection matched.
    resets_sent: u64,
    forwarded: u64,
    ip_id: u16,
}

/// Where an interface sends what is routed to it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Egress {
    /// One direction of a point-to-point link.
    Link(usize),
    /// A shared-medium device such as a radio cell.
    Device(usize),
}

struct Iface {
    name: String,
    node: NodeId,
    egress: Egress,
    pcap: Option<PcapSink>,
}

struct DeviceSlot {
    dev: Box<dyn Device>,
    timer_at: Option<Time>,
    /// (node, its interface on this device).
    ifaces: Vec<(NodeId, IfaceId)>,
}

struct LinkEnd {
    link: Link,
    /// Interface at the receiving end.
    rx_iface: IfaceId,
}

/// What an application does over a flow.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum FlowKind {
    /// Bulk TCP send from source to destination: `bytes = None` is unlimited (full buffer).
    Bulk { bytes: Option<u64> },
    /// The destination opens a connection to the source, sends a `request_bytes` request, and
    /// the source answers `bytes` then closes.
    Download { request_bytes: u64, bytes: u64 },
    /// UDP constant bit rate from source to destination: `rate_bps` of IP packets of
    /// `packet_bytes` (IP length).
    UdpCbr { rate_bps: u64, packet_bytes: u32 },
}

/// A flow between two hosts. "Source" is where the data comes from.
#[derive(Clone, Debug)]
pub struct FlowSpec {
    pub name: String,
    pub kind: FlowKind,
    pub src: NodeId,
    pub dst: NodeId,
    pub src_port: u16,
    pub dst_port: u16,
    pub start: Time,
    /// TCP configuration of the data sender (source side).
    pub tcp_sender: TcpConfig,
    /// TCP configuration of the data receiver (destination side).
    pub tcp_receiver: TcpConfig,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Role {
    BulkSender,
    BulkReceiver,
    DownloadServer,
    DownloadClient,
}

struct Conn {
    node: NodeId,
    flow: FlowId,
    role: Role,
    ep: Endpoint,
    /// Time of the timer event currently in the queue for this connection, if any.
    timer_at: Option<Time>,
    /// Bytes still to hand to the socket (sender roles); `u64::MAX` for unlimited.
    to_write: u64,
    request_read: u64,
    /// The application has data to send (bulk from the start; download once requested).
    writing: bool,
    closed_by_app: bool,
}

/// Per-flow results and time-series state.
#[derive(Clone, Debug, Default)]
pub struct FlowResult {
    /// In-order bytes delivered to the receiving application.
    pub delivered_bytes: u64,
    /// When the first/last byte reached the receiving application.
    pub first_delivery: Option<Time>,
    pub last_delivery: Option<Time>,
    /// Download: when the request was written, and when the last byte arrived.
    pub request_at: Option<Time>,
    pub completed_at: Option<Time>,
    /// UDP: packets and payload bytes sent / received.
    pub udp_sent_packets: u64,
    pub udp_received_packets: u64,
    pub udp_sent_bytes: u64,
}

struct Flow {
    spec: FlowSpec,
    sender: Option<usize>,
    receiver: Option<usize>,
    result: FlowResult,
    last_sample_delivered: u64,
    series: FlowSeries,
}

/// Sampled time series of one flow (columns of equal length).
#[derive(Clone, Debug, Default)]
pub struct FlowSeries {
    pub time_s: Vec<f64>,
    /// Goodput over the last sampling interval, bit/s.
    pub goodput_bps: Vec<f64>,
    pub delivered_bytes: Vec<u64>,
    pub cwnd_bytes: Vec<u64>,
    pub ssthresh_bytes: Vec<u64>,
    pub srtt_ms: Vec<f64>,
    pub rto_ms: Vec<f64>,
    pub in_flight_bytes: Vec<u64>,
    pub rwin_bytes: Vec<u64>,
    pub pacing_rate_bps: Vec<f64>,
    pub bbr_mode: Vec<i64>,
    pub bbr_btl_bw_bps: Vec<f64>,
    pub bbr_min_rtt_ms: Vec<f64>,
    pub cubic_w_max_bytes: Vec<f64>,
    pub cubic_k_s: Vec<f64>,
}

#[derive(Clone, Copy, Debug)]
enum Ev {
    /// A packet fully received on an interface.
    Arrive {
        iface: u32,
        pkt: u32,
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
    Sample,
}

/// The simulator.
pub struct Sim {
    seed: u64,
    q: EventQueue<Ev>,
    nodes: Vec<Node>,
    ifaces: Vec<Iface>,
    links: Vec<LinkEnd>,
    devices: Vec<DeviceSlot>,
    conns: Vec<Conn>,
    flows: Vec<Flow>,
    packets: Vec<Packet>,
    free_packets: Vec<u32>,
    sample_interval: Option<Duration>,
    io_error: Option<String>,
}

/// Summary of one link direction for outputs.
#[derive(Clone, Debug)]
pub struct LinkReport {
    pub iface: String,
    pub stats: crate::link::LinkStats,
}

impl Sim {
    /// A new, empty network. `seed` derives every entity's random stream.
    pub fn new(seed: u64) -> Self {
        Sim {
            seed,
            q: EventQueue::new(),
            nodes: Vec::new(),
            ifaces: Vec::new(),
            links: Vec::new(),
            devices: Vec::new(),
            conns: Vec::new(),
            flows: Vec::new(),
            packets: Vec::with_capacity(4096),
            free_packets: Vec::with_capacity(4096),
            sample_interval: None,
            io_error: None,
        }
    }

    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// Add a node (host or router: any node forwards what is not addressed to it).
    pub fn add_node(&mut self, name: &str, addr: Ipv4Addr) -> NodeId {
        self.nodes.push(Node {
            name: name.to_string(),
            addr,
            ifaces: Vec::new(),
            routes: Vec::new(),
            conns: Vec::new(),
            udp_sinks: Vec::new(),
            resets_sent: 0,
            forwarded: 0,
            ip_id: 0,
        });
        self.nodes.len() - 1
    }

    pub fn node_name(&self, n: NodeId) -> &str {
        &self.nodes[n].name
    }
    pub fn node_addr(&self, n: NodeId) -> Ipv4Addr {
        self.nodes[n].addr
    }

    /// Join `a` and `b` with a duplex point-to-point link (`ab` for a→b, `ba` for b→a).
    /// Returns the interfaces (at a, at b), named `<node>-eth<k>`.
    pub fn connect(
        &mut self,
        a: NodeId,
        b: NodeId,
        ab: LinkParams,
        ba: LinkParams,
    ) -> (IfaceId, IfaceId) {
        let ia = self.ifaces.len();
        let ib = ia + 1;
        let la = self.links.len();
        let lb = la + 1;
        let name_a = format!("{}-eth{}", self.nodes[a].name, self.nodes[a].ifaces.len());
        let name_b = format!("{}-eth{}", self.nodes[b].name, self.nodes[b].ifaces.len());
        let rng_a = Rng::for_entity(self.seed, &format!("link/{name_a}"));
        let rng_b = Rng::for_entity(self.seed, &format!("link/{name_b}"));
        self.ifaces.push(Iface {
            name: name_a,
            node: a,
            egress: Egress::Link(la),
            pcap: None,
        });
        self.ifaces.push(Iface {
            name: name_b,
            node: b,
            egress: Egress::Link(lb),
            pcap: None,
        });
        self.links.push(LinkEnd {
            link: Link::new(ab, rng_a),
            rx_iface: ib,
        });
        self.links.push(LinkEnd {
            link: Link::new(ba, rng_b),
            rx_iface: ia,
        });
        self.nodes[a].ifaces.push(ia);
        self.nodes[b].ifaces.push(ib);
        (ia, ib)
    }

    /// Add a shared-medium device; attach nodes to it with [`Sim::attach`].
    pub fn add_device(&mut self, dev: Box<dyn Device>) -> usize {
        self.devices.push(DeviceSlot {
            dev,
            timer_at: None,
            ifaces: Vec::new(),
        });
        let d = self.devices.len() - 1;
        self.arm_device(d);
        d
    }

    /// Attach `node` to device `dev` through a new interface named `<node>-<kind><k>`.
    pub fn attach(&mut self, node: NodeId, dev: usize, kind: &str) -> IfaceId {
        let i = self.ifaces.len();
        let name = format!(
            "{}-{kind}{}",
            self.nodes[node].name,
            self.nodes[node].ifaces.len()
        );
        self.ifaces.push(Iface {
            name,
            node,
            egress: Egress::Device(dev),
            pcap: None,
        });
        self.nodes[node].ifaces.push(i);
        self.devices[dev].ifaces.push((node, i));
        i
    }

    /// A device, for outputs (downcast with `as_any`).
    pub fn device(&self, dev: usize) -> &dyn Device {
        self.devices[dev].dev.as_ref()
    }
    pub fn device_count(&self) -> usize {
        self.devices.len()
    }

    /// Route `net/prefix_len` out of `iface` (longest prefix wins; a /0 is the default route).
    pub fn add_route(&mut self, node: NodeId, net: Ipv4Addr, prefix_len: u8, iface: IfaceId) {
        assert_eq!(
            self.ifaces[iface].node, node,
            "route through another node's interface"
        );
        let mask = if prefix_len == 0 {
            0
        } else {
            u32::MAX << (32 - prefix_len as u32)
        };
        let r = Route {
            net: u32::from(net) & mask,
            mask,
            iface,
        };
        let routes = &mut self.nodes[node].routes;
        routes.push(r);
        // Longest prefix first, stable for equal lengths.
        routes.sort_by(|x, y| y.mask.count_ones().cmp(&x.mask.count_ones()));
    }

    /// Interface names, in creation order.
    pub fn iface_names(&self) -> Vec<String> {
        self.ifaces.iter().map(|i| i.name.clone()).collect()
    }

    /// Capture every packet sent or received on `iface_name` into `dir/<iface_name>.pcap`.
    pub fn capture(&mut self, iface_name: &str, dir: &Path) -> Result<(), String> {
        let i = self
            .ifaces
            .iter()
            .position(|i| i.name == iface_name)
            .ok_or_else(|| format!("no interface named {iface_name:?}"))?;
        let path = dir.join(format!("{iface_name}.pcap"));
        let sink = PcapSink::create(&path)
            .map_err(|e| format!("cannot create {}: {e}", path.display()))?;
        self.ifaces[i].pcap = Some(sink);
        Ok(())
    }

    /// Sample flow time series every `interval`.
    pub fn set_sample_interval(&mut self, interval: Duration) {
        if self.sample_interval.is_none() {
            self.q.schedule(Time::ZERO + interval, Ev::Sample);
        }
        self.sample_interval = Some(interval);
    }

    /// Add a flow; it starts at `spec.start`.
    pub fn add_flow(&mut self, spec: FlowSpec) -> FlowId {
        let id = self.flows.len();
        self.q
            .schedule(spec.start, Ev::FlowStart { flow: id as u32 });
        self.flows.push(Flow {
            spec,
            sender: None,
            receiver: None,
            result: FlowResult::default(),
            last_sample_delivered: 0,
            series: FlowSeries::default(),
        });
        id
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
                Ev::Arrive { iface, pkt } => self.on_arrive(now, iface as usize, pkt),
                Ev::Timer { conn } => self.on_timer(now, conn as usize),
                Ev::FlowStart { flow } => self.on_flow_start(now, flow as usize),
                Ev::DeviceTimer { dev } => self.on_device_timer(now, dev as usize),
                Ev::CbrTick { flow } => self.on_cbr_tick(now, flow as usize),
                Ev::Sample => self.on_sample(now),
            }
        }
        match self.io_error.take() {
            Some(e) => Err(e),
            None => Ok(until),
        }
    }

    /// Flush capture files. Call once at the end of the run.
    pub fn finish(&mut self) -> Result<(), String> {
        for i in &mut self.ifaces {
            if let Some(p) = &mut i.pcap {
                p.finish()
                    .map_err(|e| format!("writing pcap for {}: {e}", i.name))?;
            }
        }
        Ok(())
    }

    // ----- results -----

    pub fn flow_count(&self) -> usize {
        self.flows.len()
    }
    pub fn flow_spec(&self, f: FlowId) -> &FlowSpec {
        &self.flows[f].spec
    }
    pub fn flow_result(&self, f: FlowId) -> &FlowResult {
        &self.flows[f].result
    }
    pub fn flow_series(&self, f: FlowId) -> &FlowSeries {
        &self.flows[f].series
    }
    /// TCP counters of the data sender and receiver of a TCP flow.
    pub fn flow_tcp(&self, f: FlowId) -> (Option<&TcpStats>, Option<&TcpStats>) {
        let fl = &self.flows[f];
        (
            fl.sender.map(|c| self.conns[c].ep.stats()),
            fl.receiver.map(|c| self.conns[c].ep.stats()),
        )
    }
    pub fn flow_sender_info(&self, f: FlowId) -> Option<TcpInfo> {
        self.flows[f].sender.map(|c| self.conns[c].ep.info())
    }
    pub fn flow_sender_state(&self, f: FlowId) -> Option<State> {
        self.flows[f].sender.map(|c| self.conns[c].ep.state())
    }
    pub fn link_reports(&self) -> Vec<LinkReport> {
        self.ifaces
            .iter()
            .filter_map(|i| match i.egress {
                Egress::Link(l) => Some(LinkReport {
                    iface: i.name.clone(),
                    stats: self.links[l].link.stats.clone(),
                }),
                Egress::Device(_) => None,
            })
            .collect()
    }
    /// UDP packets of flow `f` still travelling (sent, neither received nor dropped).
    pub fn udp_in_flight_packets(&self, f: FlowId) -> u64 {
        let spec = &self.flows[f].spec;
        let (dst, port) = (self.nodes[spec.dst].addr, spec.dst_port);
        let mut free = vec![false; self.packets.len()];
        for &i in &self.free_packets {
            free[i as usize] = true;
        }
        self.packets
            .iter()
            .zip(free)
            .filter(|(p, is_free)| {
                !is_free && p.ip.dst == dst && p.as_udp().is_some_and(|u| u.dst_port == port)
            })
            .count() as u64
    }

    /// RSTs sent by hosts for segments that matched no connection.
    pub fn resets_sent(&self) -> u64 {
        self.nodes.iter().map(|n| n.resets_sent).sum()
    }

    // ----- packets -----

    #[inline]
    fn alloc_packet(&mut self, p: Packet) -> u32 {
        match self.free_packets.pop() {
            Some(i) => {
                self.packets[i as usize] = p;
                i
            }
            None => {
                self.packets.push(p);
                (self.packets.len() - 1) as u32
            }
        }
    }

    #[inline]
    fn route(&self, node: NodeId, dst: Ipv4Addr) -> Option<IfaceId> {
        let d = u32::from(dst);
        self.nodes[node]
            .routes
            .iter()
            .find(|r| d & r.mask == r.net)
            .map(|r| r.iface)
    }

    /// Send `p` out of `node` towards its destination.
    fn transmit(&mut self, now: Time, node: NodeId, p: Packet) {
        let Some(iface) = self.route(node, p.ip.dst) else {
            return; // no route: discarded, like a host without a default route
        };
        let link = match self.ifaces[iface].egress {
            Egress::Link(l) => l,
            Egress::Device(d) => {
                if let Some(sink) = &mut self.ifaces[iface].pcap {
                    if let Err(e) = sink.record(now, now, &p) {
                        self.io_error.get_or_insert(format!("pcap: {e}"));
                    }
                }
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
                if let Some(sink) = &mut self.ifaces[iface].pcap {
                    if let Err(e) = sink.record(now, tx_start, &p) {
                        self.io_error.get_or_insert(format!("pcap: {e}"));
                    }
                }
                if !corrupted {
                    let rx = self.links[link].rx_iface as u32;
                    let pkt = self.alloc_packet(p);
                    self.q.schedule(arrival, Ev::Arrive { iface: rx, pkt });
                }
            }
        }
    }

    fn on_arrive(&mut self, now: Time, iface: IfaceId, pkt: u32) {
        let p = self.packets[pkt as usize];
        self.free_packets.push(pkt);
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

    /// Hand a device's deliveries to their nodes, then re-arm its timer.
    fn service_device(&mut self, now: Time, d: usize) {
        while let Some((node, p)) = self.devices[d].dev.poll_deliver(now) {
            let Some(&(_, iface)) = self.devices[d].ifaces.iter().find(|(n, _)| *n == node) else {
                continue; // not attached: a model bug, the packet is dropped
            };
            self.receive(now, iface, p);
        }
        self.arm_device(d);
    }

    fn arm_device(&mut self, d: usize) {
        let slot = &mut self.devices[d];
        if let Some(t) = slot.dev.poll_timeout() {
            let t = t.max(self.q.now());
            if slot.timer_at.is_none_or(|at| t < at) {
                slot.timer_at = Some(t);
                self.q.schedule(t, Ev::DeviceTimer { dev: d as u32 });
            }
        }
    }

    /// A packet fully received on `iface`: deliver it locally or forward it.
    fn receive(&mut self, now: Time, iface: IfaceId, mut p: Packet) {
        let node = self.ifaces[iface].node;
        if let Some(sink) = &mut self.ifaces[iface].pcap {
            if let Err(e) = sink.record(now, now, &p) {
                self.io_error.get_or_insert(format!("pcap: {e}"));
            }
        }
        if p.ip.dst == self.nodes[node].addr {
            self.deliver(now, node, p);
        } else {
            // RFC 791 §3.2: decrement TTL when forwarding; discard at zero.
            if p.ip.ttl <= 1 {
                return;
            }
            p.ip.ttl -= 1;
            self.nodes[node].forwarded += 1;
            self.transmit(now, node, p);
        }
    }

    fn deliver(&mut self, now: Time, node: NodeId, p: Packet) {
        match &p.transport {
            Transport::Tcp(tcp) => {
                let src = p.ip.src;
                // An established 4-tuple first, then a listener on the port (RFC 9293 §3.10.7.2).
                let conns = &self.nodes[node].conns;
                let found = conns
                    .iter()
                    .copied()
                    .find(|&c| {
                        let ep = &self.conns[c].ep;
                        ep.local().1 == tcp.dst_port && ep.remote() == (src, tcp.src_port)
                    })
                    .or_else(|| {
                        conns.iter().copied().find(|&c| {
                            let ep = &self.conns[c].ep;
                            ep.local().1 == tcp.dst_port && ep.state() == State::Listen
                        })
                    });
                match found {
                    Some(c) => {
                        self.conns[c]
                            .ep
                            .handle_segment(now, &p.ip, tcp, p.payload_len);
                        self.service(now, c);
                    }
                    None => {
                        // RFC 9293 §3.10.7.1: a segment for no connection is answered with RST.
                        if let Some(rst) = reset_for(&p.ip, tcp, p.payload_len) {
                            self.nodes[node].resets_sent += 1;
                            self.transmit(now, node, rst);
                        }
                    }
                }
            }
            Transport::Udp(udp) => {
                let port = udp.dst_port;
                if let Some(&(_, f)) = self.nodes[node]
                    .udp_sinks
                    .iter()
                    .find(|(pt, _)| *pt == port)
                {
                    let r = &mut self.flows[f].result;
                    r.udp_received_packets += 1;
                    r.delivered_bytes += p.payload_len as u64;
                    r.first_delivery.get_or_insert(now);
                    r.last_delivery = Some(now);
                }
            }
        }
    }

    // ----- applications -----

    fn new_conn(
        &mut self,
        node: NodeId,
        flow: FlowId,
        role: Role,
        ep: Endpoint,
        to_write: u64,
    ) -> usize {
        let id = self.conns.len();
        let writing = to_write > 0;
        self.conns.push(Conn {
            node,
            flow,
            role,
            ep,
            timer_at: None,
            to_write,
            request_read: 0,
            writing,
            closed_by_app: false,
        });
        self.nodes[node].conns.push(id);
        id
    }

    fn iss_for(&self, flow: FlowId, side: &str) -> u32 {
        Rng::for_entity(self.seed, &format!("tcp/iss/{flow}/{side}")).next_u64() as u32
    }

    fn on_flow_start(&mut self, now: Time, f: FlowId) {
        let spec = self.flows[f].spec.clone();
        let src = (self.nodes[spec.src].addr, spec.src_port);
        let dst = (self.nodes[spec.dst].addr, spec.dst_port);
        match spec.kind {
            FlowKind::Bulk { bytes } => {
                let rx_ep = Endpoint::listen(dst, self.iss_for(f, "rx"), spec.tcp_receiver.clone());
                let rx = self.new_conn(spec.dst, f, Role::BulkReceiver, rx_ep, 0);
                let tx_ep = Endpoint::connect(
                    now,
                    src,
                    dst,
                    self.iss_for(f, "tx"),
                    spec.tcp_sender.clone(),
                );
                let tx = self.new_conn(
                    spec.src,
                    f,
                    Role::BulkSender,
                    tx_ep,
                    bytes.unwrap_or(u64::MAX),
                );
                self.flows[f].sender = Some(tx);
                self.flows[f].receiver = Some(rx);
                self.service(now, tx);
            }
            FlowKind::Download { .. } => {
                let srv_ep = Endpoint::listen(src, self.iss_for(f, "tx"), spec.tcp_sender.clone());
                let srv = self.new_conn(spec.src, f, Role::DownloadServer, srv_ep, 0);
                let cl_ep = Endpoint::connect(
                    now,
                    dst,
                    src,
                    self.iss_for(f, "rx"),
                    spec.tcp_receiver.clone(),
                );
                let cl = self.new_conn(spec.dst, f, Role::DownloadClient, cl_ep, 0);
                self.flows[f].sender = Some(srv);
                self.flows[f].receiver = Some(cl);
                self.service(now, cl);
            }
            FlowKind::UdpCbr { .. } => {
                self.nodes[spec.dst].udp_sinks.push((spec.dst_port, f));
                self.on_cbr_tick(now, f);
            }
        }
    }

    fn on_cbr_tick(&mut self, now: Time, f: FlowId) {
        let spec = &self.flows[f].spec;
        let FlowKind::UdpCbr {
            rate_bps,
            packet_bytes,
        } = spec.kind
        else {
            return;
        };
        let (src, dst, sp, dp) = (spec.src, spec.dst, spec.src_port, spec.dst_port);
        let payload = packet_bytes.saturating_sub(IPV4_HEADER_LEN + UDP_HEADER_LEN);
        let mut ip = Ipv4Header::new(self.nodes[src].addr, self.nodes[dst].addr);
        ip.identification = self.nodes[src].ip_id;
        self.nodes[src].ip_id = self.nodes[src].ip_id.wrapping_add(1);
        let p = Packet::udp(
            ip,
            UdpHeader {
                src_port: sp,
                dst_port: dp,
            },
            payload,
        );
        let r = &mut self.flows[f].result;
        r.udp_sent_packets += 1;
        r.udp_sent_bytes += payload as u64;
        self.transmit(now, src, p);
        let gap = Duration::transmission(packet_bytes as u64, rate_bps);
        self.q.schedule(now + gap, Ev::CbrTick { flow: f as u32 });
    }

    fn on_timer(&mut self, now: Time, c: usize) {
        let conn = &mut self.conns[c];
        if conn.timer_at != Some(now) {
            return; // superseded by an earlier re-arm
        }
        conn.timer_at = None;
        if conn.ep.poll_timeout().is_some_and(|t| t <= now) {
            conn.ep.handle_timeout(now);
        }
        self.service(now, c);
    }

    /// Run the application on connection `c`, drain its transmissions and re-arm its timer.
    fn service(&mut self, now: Time, c: usize) {
        let f = self.conns[c].flow;
        let conn = &mut self.conns[c];
        match conn.role {
            Role::BulkSender => write_pending(conn),
            Role::DownloadServer => {
                let FlowKind::Download {
                    request_bytes,
                    bytes,
                } = self.flows[f].spec.kind
                else {
                    unreachable!()
                };
                conn.request_read += conn.ep.recv(u64::MAX);
                if conn.request_read >= request_bytes && !conn.writing {
                    conn.to_write = bytes;
                    conn.writing = true;
                }
                write_pending(conn);
            }
            Role::BulkReceiver | Role::DownloadClient => {
                let flow = &mut self.flows[f];
                if conn.role == Role::DownloadClient
                    && flow.result.request_at.is_none()
                    && conn.ep.state() == State::Established
                {
                    let FlowKind::Download { request_bytes, .. } = flow.spec.kind else {
                        unreachable!()
                    };
                    conn.ep.send(request_bytes);
                    flow.result.request_at = Some(now);
                }
                let got = conn.ep.recv(u64::MAX);
                if got > 0 {
                    let r = &mut flow.result;
                    r.delivered_bytes += got;
                    r.first_delivery.get_or_insert(now);
                    r.last_delivery = Some(now);
                    if let FlowKind::Download { bytes, .. } = flow.spec.kind {
                        if r.delivered_bytes >= bytes && r.completed_at.is_none() {
                            r.completed_at = Some(now);
                        }
                    }
                }
                if conn.ep.peer_closed() && !conn.closed_by_app {
                    conn.ep.close();
                    conn.closed_by_app = true;
                }
            }
        }
        let node = conn.node;
        while let Some(p) = self.conns[c].ep.poll_transmit(now) {
            self.transmit(now, node, p);
        }
        let conn = &mut self.conns[c];
        if let Some(t) = conn.ep.poll_timeout() {
            let t = t.max(now);
            if conn.timer_at.is_none_or(|at| t < at) {
                conn.timer_at = Some(t);
                self.q.schedule(t, Ev::Timer { conn: c as u32 });
            }
        }
    }

    fn on_sample(&mut self, now: Time) {
        let Some(iv) = self.sample_interval else {
            return;
        };
        for slot in &mut self.devices {
            slot.dev.sample(now);
        }
        for f in 0..self.flows.len() {
            let info = self.flows[f].sender.map(|c| self.conns[c].ep.info());
            let flow = &mut self.flows[f];
            let d = flow.result.delivered_bytes;
            let s = &mut flow.series;
            s.time_s.push(now.as_secs_f64());
            s.goodput_bps
                .push((d - flow.last_sample_delivered) as f64 * 8.0 / iv.as_secs_f64());
            s.delivered_bytes.push(d);
            flow.last_sample_delivered = d;
            let i = info.unwrap_or_default();
            let cc: CcTrace = i.cc;
            s.cwnd_bytes.push(i.cwnd);
            s.ssthresh_bytes.push(i.ssthresh.min(i64::MAX as u64));
            s.srtt_ms.push(i.srtt.as_secs_f64() * 1e3);
            s.rto_ms.push(i.rto.as_secs_f64() * 1e3);
            s.in_flight_bytes.push(i.bytes_in_flight);
            s.rwin_bytes.push(i.peer_rwin);
            s.pacing_rate_bps
                .push(i.pacing_rate_bps.unwrap_or(f64::NAN));
            s.bbr_mode.push(cc.bbr_mode.map_or(-1, |m| m as i64));
            s.bbr_btl_bw_bps.push(cc.bbr_btl_bw_bps.unwrap_or(f64::NAN));
            s.bbr_min_rtt_ms
                .push(cc.bbr_min_rtt.map_or(f64::NAN, |d| d.as_secs_f64() * 1e3));
            s.cubic_w_max_bytes.push(cc.cubic_w_max.unwrap_or(f64::NAN));
            s.cubic_k_s.push(cc.cubic_k_s.unwrap_or(f64::NAN));
        }
        self.q.schedule(now + iv, Ev::Sample);
    }
}

/// Hand the socket as much of the application's remaining data as the send buffer takes, and
/// close once everything was handed over (limited transfers only).
#[inline]
fn write_pending(conn: &mut Conn) {
    if conn.to_write > 0 && conn.ep.state() != State::Closed {
        let free = conn.ep.send_buffer_free();
        if free > 0 {
            let n = conn.ep.send(free.min(conn.to_write));
            if conn.to_write != u64::MAX {
                conn.to_write -= n;
            }
        }
    }
    // Close once everything was handed over, but not before the handshake completed: a
    // CLOSE in SYN-SENT deletes the connection (RFC 9293 §3.10.4).
    if conn.writing
        && conn.to_write == 0
        && !conn.closed_by_app
        && matches!(conn.ep.state(), State::Established | State::CloseWait)
    {
        conn.ep.close();
        conn.closed_by_app = true;
    }
}
