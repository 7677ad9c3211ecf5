//! rantcp-emu: real-time emulation (issue 17). The deterministic simulator core runs against
//! the wall clock while real hosts — Linux network namespaces with their own TCP/IP stacks and
//! applications — stand where the scenario's endpoint hosts would be:
//!
//! * [`tun`]: a TUN device per host, created inside that host's namespace;
//! * [`payload`]: the bytes of real packets, kept beside the model (which carries headers and
//!   lengths only);
//! * [`driver`]: the loop: read packets from the TUN devices and inject them at their node,
//!   advance the model to the wall clock, write what it delivers to external nodes back out,
//!   sleep until the next event or packet;
//! * [`offload`]: TCP segmentation offload on the devices (one read per 64 KB super-segment);
//! * [`health`]: how late the model ran behind the wall clock.
//!
//! Creating and deleting the namespaces, addressing the devices and starting commands in them
//! is the Python front's job (`rantcp.emulate`): this crate only needs each host's namespace
//! handle (`/run/netns/NAME`). Linux only.

pub mod driver;
pub mod health;
pub mod offload;
pub mod payload;
pub mod tun;

pub use driver::{Emulator, HostSpec};

use rantcp_net::{NodeId, Sim};

/// The hosts of a network: the nodes where its flows start or end, in node order. In an
/// emulation these become real hosts (servers and UEs; routers, the core and the base station
/// stay in the model).
pub fn hosts(sim: &Sim) -> Vec<NodeId> {
    let mut v: Vec<NodeId> = (0..sim.flow_count())
        .flat_map(|f| {
            let s = sim.flow_spec(f);
            [s.src, s.dst]
        })
        .collect();
    v.sort_unstable();
    v.dedup();
    v
}
