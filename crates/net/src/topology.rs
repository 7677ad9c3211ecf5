//! The network's shape: nodes with one IPv4 address each, their interfaces, longest-prefix
//! routes (RFC 1812 §5.2.4.3), point-to-point links and shared-medium devices, and
//! per-interface pcap capture.

use crate::host::Host;
use crate::link::{Link, LinkParams};
use crate::pcapsink::PcapSink;
use crate::{Device, NodeId, Sim};
use rantcp_core::{Rng, Time};
use rantcp_nf::Chain;
use rantcp_wire::Packet;
use std::collections::VecDeque;
use std::net::Ipv4Addr;
use std::path::Path;

/// Index of an interface (one end of a link).
pub type IfaceId = usize;

#[derive(Clone, Copy, Debug)]
pub(crate) struct Route {
    net: u32,
    mask: u32,
    iface: IfaceId,
}

pub(crate) struct Node {
    pub(crate) name: String,
    pub(crate) addr: Ipv4Addr,
    pub(crate) ifaces: Vec<IfaceId>,
    /// Longest prefix first.
    routes: Vec<Route>,
    /// The node's TCP/UDP endpoints and their demultiplexer.
    pub(crate) host: Host,
    /// Network functions at this node ([`Sim::add_function`]).
    pub(crate) chain: Chain,
    /// Time of the chain's timer event in the queue, if any.
    pub(crate) chain_timer_at: Option<Time>,
    pub(crate) forwarded: u64,
    pub(crate) ip_id: u16,
    /// Its host is outside the model ([`crate::external`]).
    pub(crate) external: bool,
}

/// Where an interface sends what is routed to it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Egress {
    /// One direction of a point-to-point link.
    Link(usize),
    /// A shared-medium device such as a radio cell.
    Device(usize),
}

pub(crate) struct Iface {
    pub(crate) name: String,
    pub(crate) node: NodeId,
    pub(crate) egress: Egress,
    pub(crate) pcap: Option<PcapSink>,
}

pub(crate) struct DeviceSlot {
    pub(crate) dev: Box<dyn Device>,
    pub(crate) timer_at: Option<Time>,
    /// (node, its interface on this device).
    pub(crate) ifaces: Vec<(NodeId, IfaceId)>,
    /// The simulator is draining this device's outputs: a packet a delivery provokes (a TCP
    /// ACK) is handed to the device and picked up by that drain, not by a nested one.
    pub(crate) draining: bool,
}

pub(crate) struct LinkEnd {
    pub(crate) link: Link,
    /// Interface at the receiving end.
    pub(crate) rx_iface: IfaceId,
    /// Packets travelling on the link, in the order they arrive: (arrival, event sequence
    /// number, packet). The first one's arrival is in the event queue (`Ev::Arrive`).
    pub(crate) in_flight: VecDeque<(Time, u64, Packet)>,
}

impl Sim {
    /// Add a node (host or router: any node forwards what is not addressed to it).
    pub fn add_node(&mut self, name: &str, addr: Ipv4Addr) -> NodeId {
        self.nodes.push(Node {
            name: name.to_string(),
            addr,
            ifaces: Vec::new(),
            routes: Vec::new(),
            host: Host::default(),
            chain: Chain::new(),
            chain_timer_at: None,
            forwarded: 0,
            ip_id: 0,
            external: false,
        });
        let n = self.nodes.len() - 1;
        self.node_by_addr.entry(addr).or_insert(n);
        n
    }

    pub fn node_name(&self, n: NodeId) -> &str {
        &self.nodes[n].name
    }
    pub fn node_addr(&self, n: NodeId) -> Ipv4Addr {
        self.nodes[n].addr
    }
    /// The node named `name`.
    pub fn node_id(&self, name: &str) -> Option<NodeId> {
        self.nodes.iter().position(|n| n.name == name)
    }
    pub fn node_count(&self) -> usize {
        self.nodes.len()
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
            in_flight: VecDeque::new(),
        });
        self.links.push(LinkEnd {
            link: Link::new(ba, rng_b),
            rx_iface: ia,
            in_flight: VecDeque::new(),
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
            draining: false,
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
    /// A device, for draining its outputs (downcast with `as_any_mut`).
    pub fn device_mut(&mut self, dev: usize) -> &mut dyn Device {
        self.devices[dev].dev.as_mut()
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
        routes.sort_by_key(|r| std::cmp::Reverse(r.mask.count_ones()));
    }

    /// The interface `node` sends a packet for `dst` out of (longest prefix match).
    #[inline]
    pub(crate) fn route(&self, node: NodeId, dst: Ipv4Addr) -> Option<IfaceId> {
        let d = u32::from(dst);
        self.nodes[node]
            .routes
            .iter()
            .find(|r| d & r.mask == r.net)
            .map(|r| r.iface)
    }

    /// Interface names, in creation order.
    pub fn iface_names(&self) -> Vec<String> {
        self.ifaces.iter().map(|i| i.name.clone()).collect()
    }

    /// Capture every packet sent or received on `iface_name` into `dir/<iface_name>.pcap`,
    /// keeping at most `snaplen` bytes of each (the records keep the packet's real length).
    pub fn capture(&mut self, iface_name: &str, dir: &Path, snaplen: u32) -> Result<(), String> {
        let i = self
            .ifaces
            .iter()
            .position(|i| i.name == iface_name)
            .ok_or_else(|| format!("no interface named {iface_name:?}"))?;
        let path = dir.join(format!("{iface_name}.pcap"));
        let sink = PcapSink::create(&path, snaplen)
            .map_err(|e| format!("cannot create {}: {e}", path.display()))?;
        self.ifaces[i].pcap = Some(sink);
        Ok(())
    }

    /// Record `p` on `iface`'s capture (if any) with timestamp `at`.
    #[inline(always)]
    pub(crate) fn record(&mut self, now: Time, at: Time, iface: IfaceId, p: &rantcp_wire::Packet) {
        if self.ifaces[iface].pcap.is_some() {
            self.record_pcap(now, at, iface, p);
        }
    }

    #[cold]
    #[inline(never)]
    fn record_pcap(&mut self, now: Time, at: Time, iface: IfaceId, p: &rantcp_wire::Packet) {
        if let Some(sink) = &mut self.ifaces[iface].pcap {
            if let Err(e) = sink.record(now, at, p) {
                self.io_error.get_or_insert(format!("pcap: {e}"));
            }
        }
    }

    /// Flush capture files and write the video records (`video_gets`). Call once at the end of
    /// the run.
    pub fn finish(&mut self) -> Result<(), String> {
        self.flush_video_records();
        for i in &mut self.ifaces {
            if let Some(p) = &mut i.pcap {
                p.finish()
                    .map_err(|e| format!("writing pcap for {}: {e}", i.name))?;
            }
        }
        Ok(())
    }
}
