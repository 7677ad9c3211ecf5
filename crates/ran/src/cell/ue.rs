//! Per-UE state of a [`super::RanDevice`]: the two RLC entities of the UE's data radio bearer
//! (the eNB/gNB's and the UE's; one AM entity sends one direction and receives the other,
//! TS 36.322 §4.2.1.3), one [`Link`] per direction of transfer holding what the two
//! directions share in shape (the sender's PDCP, the packets beside RLC SDUs, the HARQ entity
//! and the transport blocks of its processes, counters), and the UE's uplink side: the IP
//! buffer before PDCP ([`UlBuffer`], where network functions see arrivals and grants) and the
//! UE MAC's SR/BSR procedure ([`UeUlMac`], TS 36.321 §5.4.4–§5.4.5).

use super::counters::{LinkCounters, PerSlotRate, UeOnlyCounters};
use super::sdus::SduStore;
use crate::mac::harq::{HarqConfig, HarqEntity};
use crate::mac::ul::{BsrReport, UeUlMac};
use crate::pdcp::PdcpEntity;
use crate::rlc::{RlcEntity, RlcPdu, RlcSdu};
use rantcp_core::Time;
use rantcp_nf::{NodeId, Point, Rnti, UlBuffer};
use rantcp_wire::Packet;
use std::collections::VecDeque;
use std::net::Ipv4Addr;

/// A direction of transfer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Dir {
    /// eNB/gNB → UE.
    Dl = 0,
    /// UE → eNB/gNB.
    Ul = 1,
}

/// Index of the eNB/gNB's and of the UE's RLC entity in [`Ue::rlc`]. A direction is sent by
/// the entity with its own index (`Dir::Dl as usize == ENB`) and received by the other.
pub(super) const ENB: usize = 0;
pub(super) const UE: usize = 1;

impl Dir {
    /// Index of the sending side's RLC entity.
    #[inline]
    pub fn tx(self) -> usize {
        self as usize
    }
    /// Index of the receiving side's RLC entity.
    #[inline]
    pub fn rx(self) -> usize {
        1 - self as usize
    }
    /// Where functions see this direction's packets leave the radio network.
    #[inline]
    pub fn egress(self) -> Point {
        match self {
            Dir::Dl => Point::DlEgress,
            Dir::Ul => Point::UlEgress,
        }
    }
}

/// The transport block a HARQ process holds: RLC PDUs (until the peer decodes it or HARQ
/// gives up), an uplink BSR MAC CE, the MCS of its first transmission (retransmissions keep
/// it).
#[derive(Default)]
pub(super) struct Tb {
    pub pdus: Vec<RlcPdu>,
    pub bsr: Option<BsrReport>,
    pub mcs: u8,
}

/// One direction of a UE's bearer. See the module docs.
pub(super) struct Link {
    /// The sending side's PDCP (header bytes, SN; TS 36.323 §5.1.1 / TS 38.323 §5.2.1).
    pub pdcp: PdcpEntity,
    /// Packets beside the sending RLC's SDUs, by SDU id, until delivered.
    pub sdus: SduStore,
    /// SDU id of the next packet into PDCP.
    pub next_id: u64,
    pub harq: HarqEntity<()>,
    /// Per HARQ process.
    pub tbs: Vec<Tb>,
    pub counters: LinkCounters,
    /// Uplink: (SDU id, arrival in the UE's uplink buffer) of the packets in `sdus`, in SDU
    /// order, for the uplink LTE packet delay. Empty for the downlink.
    pub arrivals: VecDeque<(u64, Time)>,
}

impl Link {
    fn new(pdcp: PdcpEntity, in_order: bool, harq: HarqConfig) -> Self {
        Link {
            pdcp,
            sdus: SduStore::new(in_order),
            next_id: 0,
            harq: HarqEntity::new(harq),
            tbs: (0..harq.n_processes).map(|_| Tb::default()).collect(),
            counters: LinkCounters::default(),
            arrivals: VecDeque::new(),
        }
    }
}

/// The UE's RRC state as far as the radio link goes (TS 36.331 §5.3.7, §5.3.11).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Rrc {
    Connected,
    /// After a radio link failure: T311 runs while the UE searches for a cell, until `until`.
    Searching {
        until: Time,
    },
    /// Cell found: random access for the re-establishment request is running.
    Reestablishing,
}

/// One UE. See the module docs.
pub(super) struct Ue {
    pub rnti: Rnti,
    pub node: NodeId,
    pub addr: Ipv4Addr,
    pub cell: usize,
    pub layers: u8,
    /// `rlc[ENB]`, `rlc[UE]`.
    pub rlc: [RlcEntity; 2],
    /// `links[Dir::Dl as usize]`, `links[Dir::Ul as usize]`.
    pub links: [Link; 2],
    pub ue_mac: UeUlMac,
    /// The UE's uplink IP buffer, before PDCP.
    pub ul_buf: UlBuffer,
    /// Bytes of new-data UL grants issued and not yet used.
    pub ul_granted_pending: u64,
    /// Proactive uplink grants (vendor option, [`super::config::RanConfig::ul_proactive_grant_bytes`]):
    /// a new downlink TB went out since the last uplink grant, and when that grant was.
    pub dl_since_ul_grant: bool,
    pub last_ul_grant: Option<Time>,
    /// CQI and MCS the downlink scheduler used last.
    pub last_cqi: u8,
    pub last_mcs: u8,
    /// α: DL packets delivered per scheduled DL slot.
    pub dl_per_slot: PerSlotRate,
    pub counters: UeOnlyCounters,
    /// Counters at the previous time-series sample, for per-interval columns.
    pub prev: super::UeCounters,
    pub rrc: Rrc,
    /// Radio link monitoring (idle unless [`super::RanConfig::rlm`] is set).
    pub rlm: super::rlm::Rlm,
    /// The UE's RLC maxRetxThreshold indications already acted on.
    pub rlc_max_retx_seen: u64,
}

/// What [`Ue::new`] needs besides identity.
pub(super) struct UeSetup {
    pub rlc: [RlcEntity; 2],
    pub pdcp: [PdcpEntity; 2],
    pub harq: [HarqConfig; 2],
    pub ue_mac: UeUlMac,
    pub ul_buffer_limit_bytes: u64,
}

impl Ue {
    pub fn new(
        rnti: Rnti,
        node: NodeId,
        addr: Ipv4Addr,
        cell: usize,
        layers: u8,
        s: UeSetup,
    ) -> Self {
        let [enb_rlc, ue_rlc] = s.rlc;
        let [dl_pdcp, ul_pdcp] = s.pdcp;
        let dl = Link::new(dl_pdcp, ue_rlc.delivers_in_order(), s.harq[0]);
        let ul = Link::new(ul_pdcp, enb_rlc.delivers_in_order(), s.harq[1]);
        Ue {
            rnti,
            node,
            addr,
            cell,
            layers,
            rlc: [enb_rlc, ue_rlc],
            links: [dl, ul],
            ue_mac: s.ue_mac,
            ul_buf: UlBuffer::new(s.ul_buffer_limit_bytes),
            ul_granted_pending: 0,
            dl_since_ul_grant: false,
            last_ul_grant: None,
            last_cqi: 0,
            last_mcs: 0,
            dl_per_slot: PerSlotRate::default(),
            counters: UeOnlyCounters::default(),
            prev: Default::default(),
            rrc: Rrc::Connected,
            rlm: Default::default(),
            rlc_max_retx_seen: 0,
        }
    }

    /// RRC connected: the eNB schedules the UE in both directions.
    #[inline]
    pub fn connected(&self) -> bool {
        self.rrc == Rrc::Connected
    }

    #[inline]
    pub fn link(&self, d: Dir) -> &Link {
        &self.links[d as usize]
    }
    #[inline]
    pub fn link_mut(&mut self, d: Dir) -> &mut Link {
        &mut self.links[d as usize]
    }

    /// IP packet `p` into the sending side's PDCP and RLC of direction `d`, at RLC's tail or
    /// (`front`) ahead of every SDU RLC has not begun to send. `false`: RLC's byte limit
    /// dropped it.
    pub fn enqueue(&mut self, d: Dir, now: Time, p: Packet, front: bool) -> bool {
        let l = &mut self.links[d as usize];
        let rlc = &mut self.rlc[d.tx()];
        let id = l.next_id;
        l.next_id += 1;
        let pd = l.pdcp.handle_sdu(id, p.len());
        let sdu = RlcSdu {
            sdu_id: id,
            bytes: pd.bytes,
        };
        if !front {
            let ok = rlc.handle_sdu(now, sdu);
            if ok {
                l.sdus.push(id, p);
            }
            ok
        } else {
            let unsent = rlc.unsent_sdus();
            let ok = rlc.handle_sdu_front(now, sdu);
            if ok {
                l.sdus.insert_before_unsent(unsent, id, p);
            }
            ok
        }
    }

    /// An uplink packet that arrived in the UE's buffer at `arrived` into PDCP/RLC (at RLC's
    /// tail); its arrival is kept for the uplink packet delay.
    pub fn enqueue_ul(&mut self, now: Time, arrived: Time, p: Packet) -> bool {
        let id = self.links[Dir::Ul as usize].next_id;
        let ok = self.enqueue(Dir::Ul, now, p, false);
        if ok {
            self.links[Dir::Ul as usize]
                .arrivals
                .push_back((id, arrived));
        }
        ok
    }

    /// Uplink SDU `id` was delivered at the eNB: when it arrived in the UE's buffer (entries
    /// of SDUs before it, lost or delivered out of order, are dropped).
    pub fn take_ul_arrival(&mut self, id: u64) -> Option<Time> {
        let a = &mut self.links[Dir::Ul as usize].arrivals;
        while let Some(&(i, t)) = a.front() {
            if i > id {
                return None;
            }
            a.pop_front();
            if i == id {
                return Some(t);
            }
        }
        None
    }

    /// Free the packets of SDUs the receiving RLC of direction `d` gave up.
    pub fn forget_lost(&mut self, d: Dir) {
        let rx = &mut self.rlc[d.rx()];
        let store = &mut self.links[d as usize].sdus;
        while let Some(id) = rx.pop_lost() {
            if !store.in_order() {
                store.forget(id);
            }
        }
    }

    /// The UE's counters, flattened.
    pub fn counters(&self) -> super::UeCounters {
        super::UeCounters::from_parts(
            &self.link(Dir::Dl).counters,
            &self.link(Dir::Ul).counters,
            &self.counters,
        )
    }

    /// Next wake-up of the UE's entities (RLC timers on both sides, SR/BSR timers, the cell
    /// search after a radio link failure; radio link monitoring wakes the device through
    /// `RanState::rlm_due`).
    pub fn poll_timeout(&self) -> Option<Time> {
        let t = Time::earliest(
            Time::earliest(self.rlc[ENB].poll_timeout(), self.rlc[UE].poll_timeout()),
            self.ue_mac.poll_timeout(),
        );
        match self.rrc {
            Rrc::Searching { until } => Time::earliest(t, Some(until)),
            _ => t,
        }
    }
}
