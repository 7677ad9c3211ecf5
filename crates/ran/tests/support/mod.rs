//! A deterministic radio and a minimal event driver for testing [`RanDevice`] on its own.
//!
//! The radio: one LTE 10 MHz FDD cell (50 PRBs, 1 ms slots) at the origin, UEs at fixed
//! positions, no shadowing, no fast fading, no interference, a CQI report every slot reaching
//! the scheduler at once: each UE's SINR is a constant. The driver plays the simulator's part:
//! it hands the device packets at given times and wakes it at `poll_timeout`, in time order
//! (inputs first at equal times), and records what the device delivers and when.
#![allow(dead_code)]

use rantcp_core::Time;
use rantcp_nf::{Device, NodeId};
use rantcp_ran::cell::{RanConfig, RanDevice};
use rantcp_ran::fading::{FadingConfig, FadingKind};
use rantcp_ran::geometry::Vec3;
use rantcp_ran::mobility::Mobility;
use rantcp_ran::radio::{RadioConfig, RadioEnvironment};
use rantcp_wire::{Ipv4Header, Packet, TcpFlags, TcpHeader, TcpOptions, UdpHeader};
use std::net::Ipv4Addr;

pub const ENB: NodeId = 0;
pub const SERVER: Ipv4Addr = Ipv4Addr::new(10, 0, 0, 1);

/// UE `k` (1-based) lives on node `k` with address 10.1.0.k and RNTI k.
pub fn ue_addr(k: u16) -> Ipv4Addr {
    Ipv4Addr::new(10, 1, 0, k as u8)
}

/// The radio of the module docs with UEs at `distances` (m, along x).
pub fn radio(distances: &[f64], edit: impl FnOnce(&mut RadioConfig)) -> RadioEnvironment {
    let mut cfg = RadioConfig::lte_macro();
    cfg.shadowing = false;
    cfg.fading = FadingConfig {
        kind: FadingKind::None,
        ..FadingConfig::default()
    };
    cfg.interference = false;
    cfg.cqi_period = cfg.carrier.slot;
    cfg.cqi_delay = rantcp_core::Duration::ZERO;
    edit(&mut cfg);
    let mut r = RadioEnvironment::single_cell(cfg, Vec3::new(0.0, 0.0, 25.0), 46.0, 1);
    for (k, &d) in distances.iter().enumerate() {
        r.add_ue(k as u16 + 1, Mobility::fixed(Vec3::new(d, 0.0, 1.5)), 1);
    }
    r
}

/// A device over [`radio`] with LTE defaults edited by `edit`.
pub fn device(distances: &[f64], edit: impl FnOnce(&mut RanConfig)) -> RanDevice {
    device_over(radio(distances, |_| {}), distances.len() as u16, edit)
}

/// A device over radio `r` with LTE defaults edited by `edit`, serving its UEs 1..=`ues`
/// (UE k at node k, address [`ue_addr`]`(k)`).
pub fn device_over(r: RadioEnvironment, ues: u16, edit: impl FnOnce(&mut RanConfig)) -> RanDevice {
    let mut cfg = RanConfig::lte(r.carrier().slot);
    edit(&mut cfg);
    let mut dev = RanDevice::new(cfg, r, ENB);
    for k in 1..=ues {
        dev.add_ue(k, k as NodeId, ue_addr(k));
    }
    dev
}

/// A TCP segment with `payload` bytes (IP length 40 + payload).
pub fn tcp(
    src: (Ipv4Addr, u16),
    dst: (Ipv4Addr, u16),
    seq: u32,
    ack: u32,
    flags: TcpFlags,
    payload: u32,
) -> Packet {
    Packet::tcp(
        Ipv4Header::new(src.0, dst.0),
        TcpHeader {
            src_port: src.1,
            dst_port: dst.1,
            seq,
            ack,
            flags,
            window: 1000,
            urgent: 0,
            options: TcpOptions::default(),
        },
        payload,
    )
}

/// A downlink data segment to UE `k`'s port `port`, 1400 payload bytes, sequence number `seq`.
pub fn dl(k: u16, port: u16, seq: u32) -> Packet {
    tcp(
        (SERVER, 5201),
        (ue_addr(k), port),
        seq,
        1,
        TcpFlags::ACK,
        1400,
    )
}

/// A pure ACK from UE `k`'s port `port` acknowledging `ack`.
pub fn ack(k: u16, port: u16, ack: u32) -> Packet {
    tcp((ue_addr(k), port), (SERVER, 5201), 1, ack, TcpFlags::ACK, 0)
}

/// A UDP datagram of `bytes` IP bytes.
pub fn udp(src: Ipv4Addr, dst: Ipv4Addr, port: u16, bytes: u32) -> Packet {
    Packet::udp(
        Ipv4Header::new(src, dst),
        UdpHeader {
            src_port: port,
            dst_port: port,
        },
        bytes - 28,
    )
}

/// The simulator's side of the device contract, reduced to what the tests need.
pub struct Driver {
    pub dev: RanDevice,
    inputs: Vec<(Time, NodeId, Packet)>,
    /// (time, node, packet) the device delivered.
    pub delivered: Vec<(Time, NodeId, Packet)>,
    pub now: Time,
}

impl Driver {
    pub fn new(dev: RanDevice) -> Self {
        Driver {
            dev,
            inputs: Vec::new(),
            delivered: Vec::new(),
            now: Time::ZERO,
        }
    }

    /// Node `from` hands `p` to the device at `at`.
    pub fn send(&mut self, at: Time, from: NodeId, p: Packet) {
        assert!(at >= self.now);
        let k = self.inputs.partition_point(|(t, _, _)| *t <= at);
        self.inputs.insert(k, (at, from, p));
    }

    /// Run until `end` (inclusive).
    pub fn run_until(&mut self, end: Time) {
        loop {
            let ti = self.inputs.first().map(|x| x.0);
            let to = self.dev.poll_timeout();
            let t = match (ti, to) {
                (Some(a), Some(b)) => a.min(b),
                (a, b) => match a.or(b) {
                    Some(t) => t,
                    None => break,
                },
            };
            if t > end {
                break;
            }
            assert!(t >= self.now, "time went back: {t:?} < {:?}", self.now);
            self.now = t;
            if ti == Some(t) {
                let (_, from, p) = self.inputs.remove(0);
                self.dev.handle_packet(t, from, p);
            } else {
                self.dev.handle_timeout(t);
            }
            while let Some((n, p)) = self.dev.poll_deliver(t) {
                self.delivered.push((t, n, p));
            }
        }
        self.now = end;
    }

    /// Delivered to `node`: (time, packet).
    pub fn to_node(&self, node: NodeId) -> Vec<(Time, Packet)> {
        self.delivered
            .iter()
            .filter(|d| d.1 == node)
            .map(|d| (d.0, d.2))
            .collect()
    }
}

pub fn ms(x: f64) -> Time {
    Time::from_nanos((x * 1e6).round() as u64)
}
