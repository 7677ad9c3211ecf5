//! The shared-medium device contract between the simulator and a layer-2 model such as the
//! radio access network.

use crate::{Action, NodeId};
use rantcp_core::Time;
use rantcp_wire::Packet;

/// A layer-2 device joining several nodes over a shared medium (e.g. a radio cell joining an
/// eNB/gNB and its UEs). Sans-IO (design.md §3): the simulator hands it packets and wakes it at
/// [`Device::poll_timeout`]; after every input it drains [`Device::poll_deliver`] and
/// [`Device::poll_action`].
pub trait Device: std::any::Any + Send {
    /// `p` leaves node `from` (attached to this device) through it.
    fn handle_packet(&mut self, now: Time, from: NodeId, p: Packet);
    /// The device's timer fired. Early or stale calls are harmless.
    fn handle_timeout(&mut self, now: Time);
    /// The next packet the device hands to an attached node.
    fn poll_deliver(&mut self, now: Time) -> Option<(NodeId, Packet)>;
    /// When the device next wants [`Device::handle_timeout`].
    fn poll_timeout(&self) -> Option<Time>;
    /// The next action of a network function at this device that only the simulator can
    /// carry out ([`Action::Feedback`] to a TCP sender).
    fn poll_action(&mut self) -> Option<Action> {
        None
    }
    /// Sampling hook, called at every time-series sample.
    fn sample(&mut self, _now: Time) {}
    fn as_any(&self) -> &dyn std::any::Any;
    /// Mutable access for owners that drain a device's own outputs (e.g. a RAN device's time
    /// series); devices with nothing to drain keep the default.
    fn as_any_mut(&mut self) -> Option<&mut dyn std::any::Any> {
        None
    }
}
