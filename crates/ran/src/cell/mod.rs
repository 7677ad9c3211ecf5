//! Radio cells as one simulator [`Device`]: the eNB/gNB MAC loop per slot (TS 36.321 / 38.321)
//! joining the layer-2 entities of [`crate::rlc`], [`crate::pdcp`] and [`crate::mac`] to the
//! PHY abstraction of [`crate::radio::RadioEnvironment`], for one cell or a multi-cell layout.
//!
//! Topology: the eNB/gNB node and every UE node attach to the device (`Sim::attach`); the core
//! (SGW/PGW or UPF) is a router joined to the eNB node by an S1-U/N3 point-to-point link. A
//! packet the eNB node routes into the device is a downlink packet for the UE with that IP
//! address; a packet a UE node routes into it goes up to the eNB node.
//!
//! Per bearer (one data radio bearer per UE, LCID 3):
//! * downlink: PDCP (header overhead, TS 36.323 §6.2.3 / TS 38.323 §6.2.2) → RLC AM/UM tx at the
//!   eNB (SDU byte limit, drops counted) → MAC scheduler → HARQ → UE RLC rx → UE node;
//! * uplink: UE node → per-bearer FIFO [`UlQueue`] (hook points [`UlBufferHook::on_arrival`] and
//!   [`UlBufferHook::on_grant`] for network functions such as seed 000's ACK filter) → at each
//!   grant, PDCP + RLC tx at the UE → UL HARQ → eNB RLC rx → eNB node. The UE MAC runs SR and
//!   BSR (TS 36.321 §5.4.4, §5.4.5) through [`UeUlMac`]; the eNB sizes grants from reported
//!   buffers with [`UlScheduler`].
//!
//! Timing (all on slot boundaries except processing delays):
//! * a DL transport block sent in slot n is decoded with the slot-n SINR (chase combining over
//!   HARQ attempts, [`RadioEnvironment::decode`]); its ACK/NACK reaches the eNB after
//!   `harq.feedback_delay` (LTE FDD n+4, TS 36.213 §10.1); a decoded TB reaches the UE's RLC at
//!   the end of the slot plus `ue_processing`;
//! * an UL grant issued in slot n is used in slot n + `k2_slots` (LTE FDD n+4, TS 36.213 §8;
//!   NR k2, TS 38.214 §6.1.2.1); the eNB knows the decoding result after `ul_harq_feedback`
//!   and retransmits first (adaptive retransmission grant); decoded UL data reach the eNB RLC at
//!   the end of the slot plus `enb_processing`;
//! * CQI: the scheduler uses the latest report that has reached it ([`RadioEnvironment::cqi_report`],
//!   period and delay from the radio config); MCS 0 until the first report;
//! * TDD: DL data only in slots whose type carries DL, UL data only in UL slots; an UL grant is
//!   issued in slot n only if slot n + k2 is an UL slot. FDD: every slot both.
//! * PDCCH: at most `pdcch_grants_per_slot` DCIs per cell and slot, DL first, then UL.
//!
//! Events: the device wakes at slot boundaries only while something is queued (DL backlog, HARQ
//! retransmissions, reported UL backlog); otherwise it sleeps until the next RLC/MAC timer or
//! pending delivery. Per-slot work is proportional to the UEs of a cell; scratch vectors are
//! kept, so steady state allocates only the RLC PDU descriptors.
//!
//! Simplifications (stated, not hidden): one eNB node for all cells of a layout (the cells are
//! independent schedulers sharing the node's IP routing); no handover; no UL inter-cell
//! interference (see [`RadioEnvironment::ul_sinr_db`]); the UL MCS is chosen from the UL SINR at
//! grant time (SRS-like); UL HARQ retransmissions keep the first transmission's PRBs and MCS.

mod series;

pub use series::{CellSeries, UeSeries};

use crate::mac::harq::{HarqConfig, HarqEntity, HarqOutcome};
use crate::mac::mux::{dl_tx_opportunities, dl_tx_opportunities_nr};
use crate::mac::sap::{BufferStatus, HarqFeedback, Lcid, TxOpportunity, UlGrant};
use crate::mac::sched::{Allocation, PdcchBudget, SchedConfig, SchedUe, Scheduler, SchedulerKind};
use crate::mac::ul::{
    bsr_index, BsrKind, BsrReport, NoHook, UeMacConfig, UeUlMac, UlBufferHook, UlPacket,
    UlPacketInfo, UlQueue, UlScheduler, UlTransmission,
};
use crate::pdcp::{PdcpConfig, PdcpEntity, PdcpSnSize};
use crate::radio::RadioEnvironment;
use crate::rlc::{RlcConfig, RlcEntity, RlcLayout, RlcPdu, RlcSdu};
use rantcp_core::{Duration, Time};
use rantcp_nf::{Device, NodeId};
use rantcp_wire::{Packet, Transport};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, VecDeque};
use std::net::Ipv4Addr;

/// The data radio bearer's logical channel (TS 36.321 Table 6.2.1-1: 3..=10 are DTCH).
pub const DRB_LCID: Lcid = 3;

/// Layer-2 and timing parameters of every cell of a [`RanDevice`].
#[derive(Clone, Debug)]
pub struct RanConfig {
    /// Downlink scheduler policy.
    pub dl_scheduler: SchedulerKind,
    /// Uplink scheduler policy.
    pub ul_scheduler: SchedulerKind,
    /// Smallest allocation (PRBs).
    pub min_prb: u16,
    /// DL HARQ: processes, ACK/NACK delay, maximum retransmissions.
    pub harq: HarqConfig,
    /// UL HARQ processes and maximum retransmissions (the feedback time is `ul_harq_feedback`).
    pub ul_harq_processes: u8,
    pub ul_harq_max_retx: u8,
    /// From an UL transmission to the eNB acting on its decoding result.
    pub ul_harq_feedback: Duration,
    /// Grant-to-PUSCH offset k2 in slots (LTE FDD: 4).
    pub k2_slots: u32,
    /// DCIs (DL + UL grants) per cell per slot.
    pub pdcch_grants_per_slot: u16,
    /// RLC configuration template (rnti/lcid are set per UE); the same settings at the eNB
    /// (DL tx, UL rx) and at the UE (UL tx, DL rx).
    pub rlc: RlcConfig,
    /// PDCP SN size (header bytes).
    pub pdcp: PdcpSnSize,
    /// UE MAC (SR/BSR) template.
    pub ue_mac: UeMacConfig,
    /// Bytes granted after an SR before any BSR arrived.
    pub sr_grant_bytes: u32,
    /// UE uplink FIFO byte limit (0 = unlimited).
    pub ul_queue_limit_bytes: u64,
    /// UE processing delay: decoded DL TB → IP packets out of the UE's PDCP.
    pub ue_processing: Duration,
    /// eNB processing delay: decoded UL TB → IP packets out of the eNB's PDCP.
    pub enb_processing: Duration,
    /// Uplink MIMO layers.
    pub ul_layers: u8,
    /// Ideal buffer reporting as ns-3 LENA / mmWave do (the simulators of seeds 000, 001 and
    /// 004): the eNB's uplink scheduler sees every change of the UE's buffer at once, minus
    /// bytes already granted, without SR/BSR latency or quantisation. `false` (the default)
    /// runs the TS 36.321 §5.4.4/§5.4.5 procedure, including the retxBSR-Timer stall of the
    /// dissertation's Figure 6.
    pub ideal_bsr: bool,
}

impl RanConfig {
    /// LTE FDD defaults: PF (100 ms), 8 HARQ processes, n+4 feedback, 3 retransmissions,
    /// k2 = 4, 8 UL HARQ processes with 4 ms feedback (8 ms synchronous UL HARQ RTT,
    /// TS 36.213 §8), 10 DCIs per subframe, RLC AM (TS 36.322, ns-3-like timers), 12-bit PDCP,
    /// periodicBSR-Timer sf10, retxBSR-Timer sf2560, SR every 10 ms, 1 ms processing.
    pub fn lte(slot: Duration) -> Self {
        RanConfig {
            dl_scheduler: SchedulerKind::ProportionalFair {
                time_constant: Duration::from_millis(100),
            },
            ul_scheduler: SchedulerKind::RoundRobin,
            min_prb: 1,
            harq: HarqConfig::with_slots(8, 4, slot, 3),
            ul_harq_processes: 8,
            ul_harq_max_retx: 3,
            ul_harq_feedback: slot.saturating_mul(4),
            k2_slots: 4,
            pdcch_grants_per_slot: 10,
            rlc: RlcConfig::am_lte(0, DRB_LCID),
            pdcp: PdcpSnSize::Lte12,
            ue_mac: UeMacConfig::lte_default(0),
            sr_grant_bytes: 100,
            ul_queue_limit_bytes: 0,
            ue_processing: Duration::from_millis(1),
            enb_processing: Duration::from_millis(1),
            ul_layers: 1,
            ideal_bsr: false,
        }
    }

    /// NR/mmWave defaults for slot length `slot`: PF, 20 HARQ processes (seed 004), feedback
    /// after 4 slots, 3 retransmissions, k2 = 4 (fits "CCDDUUUU": slots 0–3 grant 4–7),
    /// RLC AM with 18-bit SN and seed 004's timers, 18-bit PDCP, periodicBSR-Timer 10 slots,
    /// retxBSR-Timer sf80 (a common TS 38.331 setting), SR every 8 slots, 2-slot processing.
    pub fn nr(slot: Duration) -> Self {
        let mut ue_mac = UeMacConfig::lte_default(0);
        ue_mac.periodic_bsr_timer = Some(slot.saturating_mul(10));
        ue_mac.retx_bsr_timer = Duration::from_millis(80);
        ue_mac.sr_period = slot.saturating_mul(8);
        RanConfig {
            dl_scheduler: SchedulerKind::ProportionalFair {
                time_constant: Duration::from_millis(100),
            },
            ul_scheduler: SchedulerKind::RoundRobin,
            min_prb: 1,
            harq: HarqConfig::with_slots(20, 4, slot, 3),
            ul_harq_processes: 20,
            ul_harq_max_retx: 3,
            ul_harq_feedback: slot.saturating_mul(4),
            k2_slots: 4,
            pdcch_grants_per_slot: 10,
            rlc: RlcConfig::am_nr(0, DRB_LCID),
            pdcp: PdcpSnSize::Nr18,
            ue_mac,
            sr_grant_bytes: 200,
            ul_queue_limit_bytes: 0,
            ue_processing: slot.saturating_mul(2),
            enb_processing: slot.saturating_mul(2),
            ul_layers: 1,
            ideal_bsr: false,
        }
    }
}

/// A network function at the eNB/gNB between IP and PDCP (design.md §5: seed 001's mmPEP, the
/// RST tracker): sees every downlink packet before PDCP and may keep it out of the bearer.
pub trait DlHook: Send {
    /// A downlink IP packet for UE `rnti` arrived from the core. `false` drops it (counted in
    /// [`UeCounters::dl_hook_drops`]).
    fn on_dl_packet(&mut self, now: Time, rnti: u16, p: &Packet) -> bool;
}

/// Per-UE counters (cumulative).
#[derive(Clone, Debug, Default)]
pub struct UeCounters {
    /// New DL transport blocks and their bytes.
    pub dl_tb_new: u64,
    pub dl_tb_bytes: u64,
    pub dl_tb_retx: u64,
    pub dl_tb_failed: u64,
    pub dl_prbs: u64,
    /// DL IP packets in, dropped at the RLC byte limit or for no UE, delivered to the UE.
    pub dl_packets_in: u64,
    /// DL packets a [`DlHook`] kept out of the bearer.
    pub dl_hook_drops: u64,
    pub dl_packets_delivered: u64,
    pub dl_bytes_delivered: u64,
    pub ul_tb_new: u64,
    pub ul_tb_bytes: u64,
    pub ul_tb_retx: u64,
    pub ul_tb_failed: u64,
    pub ul_prbs: u64,
    pub ul_packets_in: u64,
    /// Pure TCP ACKs the UE sent into its uplink buffer, and those that reached the eNB.
    pub ul_acks_in: u64,
    pub ul_acks_delivered: u64,
    pub ul_packets_delivered: u64,
    /// SRs received at the eNB, BSRs decoded, UL grants issued (new data).
    pub sr_rx: u64,
    pub bsr_rx: u64,
    pub ul_grants: u64,
    /// Sum of the per-slot SINR samples taken at scheduling (for the mean).
    pub sinr_sum_db: f64,
    pub sinr_samples: u64,
}

#[derive(Default)]
struct DlTb {
    pdus: Vec<RlcPdu>,
    mcs: u8,
}

#[derive(Default)]
struct UlTb {
    pdus: Vec<RlcPdu>,
    bsr: Option<BsrReport>,
    mcs: u8,
    n_prb: u16,
    attempt: u32,
    ok: bool,
}

struct Ue {
    rnti: u16,
    node: NodeId,
    addr: Ipv4Addr,
    cell: usize,
    layers: u8,
    // eNB side
    enb_rlc: RlcEntity,
    enb_pdcp: PdcpEntity,
    dl_sdus: VecDeque<(u64, Packet)>,
    next_dl_id: u64,
    dl_harq: HarqEntity<()>,
    dl_tb: Vec<DlTb>,
    ul_harq: HarqEntity<()>,
    // UE side
    ue_rlc: RlcEntity,
    ue_pdcp: PdcpEntity,
    ue_mac: UeUlMac,
    ul_queue: UlQueue,
    ul_pkts: VecDeque<(u64, Packet)>,
    ul_sdus: VecDeque<(u64, Packet)>,
    next_ul_id: u64,
    ul_tb: Vec<UlTb>,
    hook: Box<dyn UlBufferHook + Send>,
    /// Bytes of new-data UL grants issued and not yet used.
    ul_granted_pending: u64,
    last_cqi: u8,
    last_mcs: u8,
    counters: UeCounters,
    /// Counters at the previous sample, for per-interval columns.
    prev: UeCounters,
}

/// One cell's scheduler state.
struct Cell {
    dl_sched: Scheduler,
    ul_sched: UlScheduler,
    pdcch: PdcchBudget,
    ues: Vec<usize>,
    /// Counters: DL-capable slots run, PRBs used in them, DCIs used.
    dl_slots: u64,
    dl_prbs: u64,
    ul_slots: u64,
    ul_prbs: u64,
    dcis: u64,
    slots: u64,
    prev: [u64; 6],
}

#[derive(Clone, Copy, Debug)]
enum Pending {
    DlFeedback {
        ue: u32,
        harq: u8,
        ack: bool,
    },
    DlRxAtUe {
        ue: u32,
        slab: u32,
    },
    UlTx {
        ue: u32,
        harq: u8,
        tb_bytes: u32,
        n_prb: u16,
        retx: bool,
    },
    UlFeedback {
        ue: u32,
        harq: u8,
        ack: bool,
    },
    UlRxAtEnb {
        ue: u32,
        slab: u32,
        bsr: Option<BsrReport>,
    },
}

/// The radio access network of a run as one shared-medium device. See the module docs.
pub struct RanDevice {
    cfg: RanConfig,
    radio: RadioEnvironment,
    enb_node: NodeId,
    ues: Vec<Ue>,
    by_addr: HashMap<Ipv4Addr, usize>,
    by_node: HashMap<NodeId, usize>,
    /// UE index by RNTI (`u32::MAX` = none).
    by_rnti: Vec<u32>,
    /// Network function between IP and PDCP at the eNB/gNB (downlink ingress).
    dl_hook: Option<Box<dyn DlHook>>,
    cells: Vec<Cell>,
    slot: Duration,
    nr: bool,
    next_slot: Option<Time>,
    timer_min: Option<Time>,
    pending: BinaryHeap<Reverse<(Time, u64, usize)>>,
    pending_items: Vec<Pending>,
    pending_free: Vec<usize>,
    pending_seq: u64,
    slab: Vec<Vec<RlcPdu>>,
    slab_free: Vec<u32>,
    out: VecDeque<(NodeId, Packet)>,
    // scratch
    sched_ues: Vec<SchedUe>,
    sched_mcs: Vec<u8>,
    allocs: Vec<Allocation>,
    grants: Vec<UlGrant>,
    ops: Vec<TxOpportunity>,
    ul_tx: UlTransmission,
    moved: Vec<UlPacket>,
    /// Time series.
    pub ue_series: UeSeries,
    pub cell_series: CellSeries,
    last_sample: Time,
    /// DL packets for an unknown address.
    pub unknown_dst_drops: u64,
    /// Slots run (all cells together count once).
    pub slots_run: u64,
}

fn next_boundary(slot: Duration, t: Time) -> Time {
    let s = slot.as_nanos().max(1);
    Time::from_nanos(t.as_nanos().div_ceil(s) * s)
}

fn ul_info(p: &Packet) -> UlPacketInfo {
    match &p.transport {
        Transport::Tcp(t) => {
            let flags = t.flags.0;
            let key = (u32::from(p.ip.src) as u64) << 32
                ^ (u32::from(p.ip.dst) as u64)
                ^ ((t.src_port as u64) << 16 | t.dst_port as u64) << 8;
            UlPacketInfo {
                flow_key: key,
                is_pure_tcp_ack: p.payload_len == 0 && flags & !0x08 == 0x10,
                tcp_flags: flags,
                seq: t.seq,
                ack: t.ack,
                payload_bytes: p.payload_len,
                sack_blocks: t.options.sack_len,
                other_options: false,
            }
        }
        Transport::Udp(_) => UlPacketInfo {
            payload_bytes: p.payload_len,
            ..Default::default()
        },
    }
}

/// Pops the packet with id `id` from a FIFO of `(id, packet)` in id order, discarding older
/// entries (SDUs that were lost or discarded and will never be delivered).
fn take_id(q: &mut VecDeque<(u64, Packet)>, id: u64) -> Option<Packet> {
    while let Some(&(i, p)) = q.front() {
        if i < id {
            q.pop_front();
        } else if i == id {
            q.pop_front();
            return Some(p);
        } else {
            return None;
        }
    }
    None
}

impl RanDevice {
    /// A device for the cells of `radio` (every cell gets a scheduler) whose core-facing node
    /// is `enb_node`. Add UEs with [`RanDevice::add_ue`] before handing it to the simulator.
    pub fn new(cfg: RanConfig, radio: RadioEnvironment, enb_node: NodeId) -> Self {
        let carrier = radio.carrier().clone();
        let n_cells = radio.cells().len();
        let mk = |kind| SchedConfig {
            kind,
            n_prb: carrier.n_prb,
            slot: carrier.slot,
            min_prb: cfg.min_prb,
        };
        let cells = (0..n_cells)
            .map(|_| Cell {
                dl_sched: Scheduler::new(mk(cfg.dl_scheduler)),
                ul_sched: UlScheduler::new(mk(cfg.ul_scheduler), cfg.sr_grant_bytes),
                pdcch: PdcchBudget::new(cfg.pdcch_grants_per_slot),
                ues: Vec::new(),
                dl_slots: 0,
                dl_prbs: 0,
                ul_slots: 0,
                ul_prbs: 0,
                dcis: 0,
                slots: 0,
                prev: [0; 6],
            })
            .collect();
        RanDevice {
            nr: cfg.rlc.layout != RlcLayout::Lte,
            cfg,
            radio,
            enb_node,
            ues: Vec::new(),
            by_addr: HashMap::new(),
            by_node: HashMap::new(),
            by_rnti: Vec::new(),
            dl_hook: None,
            cells,
            slot: carrier.slot,
            next_slot: None,
            timer_min: None,
            pending: BinaryHeap::new(),
            pending_items: Vec::new(),
            pending_free: Vec::new(),
            pending_seq: 0,
            slab: Vec::new(),
            slab_free: Vec::new(),
            out: VecDeque::new(),
            sched_ues: Vec::new(),
            sched_mcs: Vec::new(),
            allocs: Vec::new(),
            grants: Vec::new(),
            ops: Vec::new(),
            ul_tx: UlTransmission::default(),
            moved: Vec::new(),
            ue_series: UeSeries::default(),
            cell_series: CellSeries::default(),
            last_sample: Time::ZERO,
            unknown_dst_drops: 0,
            slots_run: 0,
        }
    }

    /// Register UE `rnti` (already added to the radio environment) living on `node` with IP
    /// address `addr`. Its serving cell is the radio environment's choice.
    pub fn add_ue(&mut self, rnti: u16, node: NodeId, addr: Ipv4Addr) {
        let cell = self.radio.large_scale(rnti).serving_cell;
        let layers = self.radio.layers(rnti);
        let rlc = RlcConfig {
            rnti,
            lcid: DRB_LCID,
            ..self.cfg.rlc.clone()
        };
        let pdcp = PdcpConfig {
            sn_size: self.cfg.pdcp,
            ..PdcpConfig::default()
        };
        let mut mac = self.cfg.ue_mac.clone();
        mac.rnti = rnti;
        let ul_harq_cfg = HarqConfig {
            n_processes: self.cfg.ul_harq_processes,
            feedback_delay: self.slot.saturating_mul(self.cfg.k2_slots as u64)
                + self.cfg.ul_harq_feedback,
            max_retx: self.cfg.ul_harq_max_retx,
        };
        let i = self.ues.len();
        self.ues.push(Ue {
            rnti,
            node,
            addr,
            cell,
            layers,
            enb_rlc: RlcEntity::new(rlc.clone()),
            enb_pdcp: PdcpEntity::new(pdcp.clone()),
            dl_sdus: VecDeque::new(),
            next_dl_id: 0,
            dl_harq: HarqEntity::new(self.cfg.harq),
            dl_tb: (0..self.cfg.harq.n_processes)
                .map(|_| DlTb::default())
                .collect(),
            ul_harq: HarqEntity::new(ul_harq_cfg),
            ue_rlc: RlcEntity::new(rlc),
            ue_pdcp: PdcpEntity::new(pdcp),
            ue_mac: UeUlMac::new(mac),
            ul_queue: UlQueue::new(self.cfg.ul_queue_limit_bytes),
            ul_pkts: VecDeque::new(),
            ul_sdus: VecDeque::new(),
            next_ul_id: 0,
            ul_tb: (0..self.cfg.ul_harq_processes)
                .map(|_| UlTb::default())
                .collect(),
            hook: Box::new(NoHook),
            ul_granted_pending: 0,
            last_cqi: 0,
            last_mcs: 0,
            counters: UeCounters::default(),
            prev: UeCounters::default(),
        });
        self.by_addr.insert(addr, i);
        self.by_node.insert(node, i);
        if self.by_rnti.len() <= rnti as usize {
            self.by_rnti.resize(rnti as usize + 1, u32::MAX);
        }
        self.by_rnti[rnti as usize] = i as u32;
        self.cells[cell].ues.push(i);
    }

    /// Install a network function on UE `rnti`'s uplink buffer (seed 000's ACK filter).
    pub fn set_ul_hook(&mut self, rnti: u16, hook: Box<dyn UlBufferHook + Send>) {
        if let Some(u) = self.ues.iter_mut().find(|u| u.rnti == rnti) {
            u.hook = hook;
        }
    }

    /// Install the downlink network function between IP and PDCP.
    pub fn set_dl_hook(&mut self, hook: Box<dyn DlHook>) {
        self.dl_hook = Some(hook);
    }

    /// Discard UE `rnti`'s queued downlink packets (not yet segmented by RLC) for which `pred`
    /// holds — the RST tracker's purge (design.md §5). Returns the RLC SDU bytes removed
    /// (SDUs RLC has already started to send stay).
    pub fn purge_dl(&mut self, rnti: u16, mut pred: impl FnMut(&Packet) -> bool) -> u64 {
        let Some(&i) = self.by_rnti.get(rnti as usize) else {
            return 0;
        };
        let Some(u) = self.ues.get_mut(i as usize) else {
            return 0;
        };
        let ids: Vec<u64> = u
            .dl_sdus
            .iter()
            .filter(|(_, p)| pred(p))
            .map(|(id, _)| *id)
            .collect();
        if ids.is_empty() {
            return 0;
        }
        // The id map keeps the purged packets until delivery passes their ids.
        u.enb_rlc.purge_sdus(|id| ids.binary_search(&id).is_ok())
    }

    pub fn radio(&self) -> &RadioEnvironment {
        &self.radio
    }
    pub fn config(&self) -> &RanConfig {
        &self.cfg
    }
    /// RNTIs in insertion order.
    pub fn rntis(&self) -> Vec<u16> {
        self.ues.iter().map(|u| u.rnti).collect()
    }
    /// IP address of UE `rnti`.
    pub fn ue_addr(&self, rnti: u16) -> Option<Ipv4Addr> {
        self.ues.iter().find(|u| u.rnti == rnti).map(|u| u.addr)
    }
    /// Counters of UE `rnti`.
    pub fn ue_counters(&self, rnti: u16) -> Option<&UeCounters> {
        self.ues
            .iter()
            .find(|u| u.rnti == rnti)
            .map(|u| &u.counters)
    }
    /// Serving cell of UE `rnti`.
    pub fn ue_cell(&self, rnti: u16) -> Option<usize> {
        self.ues.iter().find(|u| u.rnti == rnti).map(|u| u.cell)
    }
    /// (eNB RLC, UE RLC) counters of UE `rnti`.
    pub fn ue_rlc_counters(
        &self,
        rnti: u16,
    ) -> Option<(&crate::rlc::RlcCounters, &crate::rlc::RlcCounters)> {
        self.ues
            .iter()
            .find(|u| u.rnti == rnti)
            .map(|u| (u.enb_rlc.counters(), u.ue_rlc.counters()))
    }
    /// UE MAC (SR/BSR) counters of UE `rnti`.
    pub fn ue_mac_counters(&self, rnti: u16) -> Option<&crate::mac::ul::UeMacCounters> {
        self.ues
            .iter()
            .find(|u| u.rnti == rnti)
            .map(|u| u.ue_mac.counters())
    }
    /// UE uplink FIFO counters.
    pub fn ue_ul_queue_counters(&self, rnti: u16) -> Option<&crate::mac::ul::UlQueueCounters> {
        self.ues
            .iter()
            .find(|u| u.rnti == rnti)
            .map(|u| &u.ul_queue.counters)
    }
    /// Per-cell totals: (slots, DL slots, DL PRBs used, UL slots, UL PRBs used, DCIs).
    pub fn cell_totals(&self, cell: usize) -> [u64; 6] {
        let c = &self.cells[cell];
        [
            c.slots, c.dl_slots, c.dl_prbs, c.ul_slots, c.ul_prbs, c.dcis,
        ]
    }
    pub fn cell_count(&self) -> usize {
        self.cells.len()
    }
    /// Cells that serve at least one UE.
    pub fn active_cells(&self) -> Vec<usize> {
        (0..self.cells.len())
            .filter(|&c| !self.cells[c].ues.is_empty())
            .collect()
    }

    // ----- internal plumbing -----

    fn push_pending(&mut self, at: Time, p: Pending) {
        let idx = match self.pending_free.pop() {
            Some(i) => {
                self.pending_items[i] = p;
                i
            }
            None => {
                self.pending_items.push(p);
                self.pending_items.len() - 1
            }
        };
        self.pending_seq += 1;
        self.pending.push(Reverse((at, self.pending_seq, idx)));
    }

    fn slab_put(&mut self, v: &mut Vec<RlcPdu>) -> u32 {
        let i = match self.slab_free.pop() {
            Some(i) => i,
            None => {
                self.slab.push(Vec::new());
                (self.slab.len() - 1) as u32
            }
        };
        std::mem::swap(&mut self.slab[i as usize], v);
        i
    }

    fn wake_slots(&mut self, now: Time) {
        if self.next_slot.is_none() {
            self.next_slot = Some(next_boundary(self.slot, now));
        }
    }

    fn note_ue_timers(&mut self, i: usize) {
        let u = &self.ues[i];
        for t in [
            u.enb_rlc.poll_timeout(),
            u.ue_rlc.poll_timeout(),
            u.ue_mac.poll_timeout(),
        ]
        .into_iter()
        .flatten()
        {
            self.timer_min = Some(self.timer_min.map_or(t, |m| m.min(t)));
        }
    }

    /// Tell the UE MAC how much the bearer holds (UL FIFO + PDCP/RLC headers estimate + RLC).
    fn sync_bsr(&mut self, i: usize, now: Time) {
        let per_pkt = self.cfg.pdcp.header_bytes() as u64 + 3;
        let u = &mut self.ues[i];
        let b = u.ul_queue.bytes()
            + u.ul_queue.len() as u64 * per_pkt
            + u.ue_rlc.buffer_status(now).total_bytes();
        u.ue_mac.handle_buffer_status(now, DRB_LCID, b);
        if self.cfg.ideal_bsr {
            // MAC subheaders per TB: a few bytes of margin.
            let want = (b + 4 * (b > 0) as u64).saturating_sub(u.ul_granted_pending);
            let lcg = u.ue_mac.cfg.channels.first().map_or(0, |c| c.lcg);
            let mut exact = [0u64; 4];
            exact[lcg as usize & 3] = want;
            let mut index = [0u8; 4];
            index[lcg as usize & 3] = bsr_index(want);
            let rep = BsrReport {
                kind: BsrKind::Regular,
                is_long: false,
                is_truncated: false,
                index,
                lcg,
                exact_bytes: exact,
                bytes: 0,
            };
            let (rnti, cell) = (u.rnti, u.cell);
            self.cells[cell].ul_sched.handle_bsr(rnti, &rep);
            if want > 0 {
                self.wake_slots(now);
            }
        }
    }

    fn ue_timers(&mut self, i: usize, now: Time) {
        let u = &mut self.ues[i];
        if u.enb_rlc.poll_timeout().is_some_and(|t| t <= now) {
            u.enb_rlc.handle_timeout(now);
            self.wake_slots(now);
        }
        let u = &mut self.ues[i];
        let mut ue_side = false;
        if u.ue_rlc.poll_timeout().is_some_and(|t| t <= now) {
            u.ue_rlc.handle_timeout(now);
            ue_side = true;
        }
        if ue_side {
            self.sync_bsr(i, now);
        }
        let u = &mut self.ues[i];
        if u.ue_mac.poll_timeout().is_some_and(|t| t <= now) {
            u.ue_mac.handle_timeout(now);
            if u.ue_mac.poll_sr() {
                // PUCCH SR reaches the eNB in this slot (TS 36.321 §5.4.4).
                u.counters.sr_rx += 1;
                if !self.cfg.ideal_bsr {
                    let (rnti, cell) = (u.rnti, u.cell);
                    self.cells[cell].ul_sched.handle_sr(rnti);
                    self.wake_slots(now);
                }
            }
        }
    }

    fn run_pending(&mut self, now: Time) {
        while let Some(&Reverse((at, _, idx))) = self.pending.peek() {
            if at > now {
                break;
            }
            self.pending.pop();
            let item = self.pending_items[idx];
            self.pending_free.push(idx);
            match item {
                Pending::DlFeedback { ue, harq, ack } => {
                    let u = &mut self.ues[ue as usize];
                    match u.dl_harq.handle_feedback(
                        now,
                        HarqFeedback {
                            rnti: u.rnti,
                            harq_id: harq,
                            ack,
                        },
                    ) {
                        HarqOutcome::Retx => self.wake_slots(now),
                        HarqOutcome::Failed(()) => {
                            u.counters.dl_tb_failed += 1;
                            u.dl_tb[harq as usize].pdus.clear();
                        }
                        _ => {}
                    }
                }
                Pending::DlRxAtUe { ue, slab } => {
                    let i = ue as usize;
                    let mut v = std::mem::take(&mut self.slab[slab as usize]);
                    let u = &mut self.ues[i];
                    for pdu in &v {
                        u.ue_rlc.handle_pdu(now, pdu);
                    }
                    while let Some(id) = u.ue_rlc.pop_delivered() {
                        if let Some(p) = take_id(&mut u.dl_sdus, id) {
                            u.counters.dl_packets_delivered += 1;
                            u.counters.dl_bytes_delivered += p.len() as u64;
                            self.out.push_back((u.node, p));
                        }
                    }
                    v.clear();
                    self.slab[slab as usize] = v;
                    self.slab_free.push(slab);
                    self.sync_bsr(i, now);
                    self.note_ue_timers(i);
                }
                Pending::UlTx {
                    ue,
                    harq,
                    tb_bytes,
                    n_prb,
                    retx,
                } => self.ul_transmit(now, ue as usize, harq, tb_bytes, n_prb, retx),
                Pending::UlFeedback { ue, harq, ack } => {
                    let u = &mut self.ues[ue as usize];
                    match u.ul_harq.handle_feedback(
                        now,
                        HarqFeedback {
                            rnti: u.rnti,
                            harq_id: harq,
                            ack,
                        },
                    ) {
                        HarqOutcome::Retx => self.wake_slots(now),
                        HarqOutcome::Failed(()) => {
                            u.counters.ul_tb_failed += 1;
                            u.ul_tb[harq as usize].pdus.clear();
                        }
                        _ => {}
                    }
                }
                Pending::UlRxAtEnb { ue, slab, bsr } => {
                    let i = ue as usize;
                    let mut v = std::mem::take(&mut self.slab[slab as usize]);
                    let u = &mut self.ues[i];
                    for pdu in &v {
                        u.enb_rlc.handle_pdu(now, pdu);
                    }
                    v.clear();
                    self.slab[slab as usize] = v;
                    self.slab_free.push(slab);
                    if let Some(bsr) = bsr {
                        u.counters.bsr_rx += 1;
                        if !self.cfg.ideal_bsr {
                            let (rnti, cell) = (u.rnti, u.cell);
                            self.cells[cell].ul_sched.handle_bsr(rnti, &bsr);
                        }
                    }
                    let u = &mut self.ues[i];
                    while let Some(id) = u.enb_rlc.pop_delivered() {
                        if let Some(p) = take_id(&mut u.ul_sdus, id) {
                            u.counters.ul_packets_delivered += 1;
                            if ul_info(&p).is_pure_tcp_ack {
                                u.counters.ul_acks_delivered += 1;
                            }
                            self.out.push_back((self.enb_node, p));
                        }
                    }
                    self.wake_slots(now);
                    self.note_ue_timers(i);
                }
            }
        }
    }

    /// The UE sends on PUSCH with grant `(harq, tb_bytes, n_prb)`; the eNB decodes it.
    fn ul_transmit(
        &mut self,
        now: Time,
        i: usize,
        harq: u8,
        tb_bytes: u32,
        n_prb: u16,
        retx: bool,
    ) {
        let h = harq as usize;
        if !retx {
            let grant = UlGrant {
                rnti: self.ues[i].rnti,
                tb_bytes,
                n_prb,
                harq_id: harq,
                is_retx: false,
            };
            let u = &mut self.ues[i];
            u.ul_granted_pending = u.ul_granted_pending.saturating_sub(tb_bytes as u64);
            u.ue_mac.handle_ul_grant_into(now, grant, &mut self.ul_tx);
            let mut pdus = std::mem::take(&mut u.ul_tb[h].pdus);
            pdus.clear();
            let pdcp_hdr = self.cfg.pdcp.header_bytes();
            for k in 0..self.ul_tx.opportunities.len() {
                let op = self.ul_tx.opportunities[k];
                // Network-function hook point at the grant (design.md §5, seed 000).
                u.hook.on_grant(&mut u.ul_queue, op.bytes, now);
                for id in u.ul_queue.drain_discarded() {
                    if let Some(pos) = u.ul_pkts.iter().position(|(x, _)| *x == id) {
                        u.ul_pkts.remove(pos);
                    }
                }
                let mut have = u.ue_rlc.buffer_status(now).total_bytes();
                self.moved.clear();
                while have < op.bytes as u64 {
                    let Some(pk) = u.ul_queue.pop_front() else {
                        break;
                    };
                    self.moved.push(pk);
                    have += (pk.bytes + pdcp_hdr + 3) as u64;
                }
                for pk in &self.moved {
                    let Some(p) = take_id(&mut u.ul_pkts, pk.id) else {
                        continue;
                    };
                    let pd = u.ue_pdcp.handle_sdu(pk.id, pk.bytes);
                    if u.ue_rlc.handle_sdu(
                        now,
                        RlcSdu {
                            sdu_id: pk.id,
                            bytes: pd.bytes,
                        },
                    ) {
                        u.ul_sdus.push_back((pk.id, p));
                    }
                }
                u.ue_rlc.handle_tx_opportunity(now, op, &mut pdus);
            }
            let u = &mut self.ues[i];
            let tb = &mut u.ul_tb[h];
            tb.pdus = pdus;
            tb.bsr = self.ul_tx.bsr;
            tb.attempt = 0;
            u.counters.ul_tb_new += 1;
            u.counters.ul_tb_bytes += tb_bytes as u64;
            self.sync_bsr(i, now);
        } else {
            let u = &mut self.ues[i];
            u.ul_tb[h].attempt += 1;
            u.counters.ul_tb_retx += 1;
        }
        let u = &mut self.ues[i];
        u.counters.ul_prbs += n_prb as u64;
        let (rnti, mcs, attempt) = (u.rnti, u.ul_tb[h].mcs, u.ul_tb[h].attempt);
        let ok = self.radio.ul_decode(
            rnti,
            harq,
            now,
            mcs,
            attempt,
            self.cfg.ul_layers,
            n_prb as u32,
        );
        self.ues[i].ul_tb[h].ok = ok;
        self.push_pending(
            now + self.cfg.ul_harq_feedback,
            Pending::UlFeedback {
                ue: i as u32,
                harq,
                ack: ok,
            },
        );
        if ok {
            // The decoded TB's content moves out of the UE's HARQ buffer at once, so that a
            // later grant on the same process cannot overwrite it before the eNB handles it.
            let mut v = std::mem::take(&mut self.ues[i].ul_tb[h].pdus);
            let bsr = self.ues[i].ul_tb[h].bsr.take();
            let slab = self.slab_put(&mut v);
            self.ues[i].ul_tb[h].pdus = v;
            self.push_pending(
                now + self.slot + self.cfg.enb_processing,
                Pending::UlRxAtEnb {
                    ue: i as u32,
                    slab,
                    bsr,
                },
            );
        }
        self.note_ue_timers(i);
    }

    /// One slot of every cell that serves UEs.
    fn run_slot(&mut self, now: Time) {
        let slot_idx = self.radio.carrier().slot_index(now);
        let dl_ok = self.radio.duplex().is_dl(slot_idx);
        let ul_tx_slot = slot_idx + self.cfg.k2_slots as u64;
        let ul_ok = self.radio.duplex().is_ul(ul_tx_slot);
        self.slots_run += 1;
        for c in 0..self.cells.len() {
            if self.cells[c].ues.is_empty() {
                continue;
            }
            self.cells[c].pdcch.reset();
            self.cells[c].slots += 1;
            if dl_ok {
                self.cells[c].dl_slots += 1;
                self.schedule_dl(now, c, slot_idx);
            }
            if self.radio.duplex().is_ul(slot_idx) {
                self.cells[c].ul_slots += 1;
            }
            if ul_ok {
                self.schedule_ul(now, c, ul_tx_slot);
            }
        }
    }

    fn schedule_dl(&mut self, now: Time, c: usize, slot_idx: u64) {
        self.sched_ues.clear();
        self.sched_mcs.clear();
        self.sched_mcs.resize(self.ues.len() + 1, 0);
        for k in 0..self.cells[c].ues.len() {
            let i = self.cells[c].ues[k];
            let u = &mut self.ues[i];
            let backlog = u.enb_rlc.buffer_status(now).total_bytes();
            let harq_retx = u.dl_harq.pending_retx().next();
            if backlog == 0 && harq_retx.is_none() {
                continue;
            }
            let rnti = u.rnti;
            let layers = u.layers;
            let (mcs, cqi) = match self.radio.cqi_report(rnti, now) {
                Some(r) => (r.mcs, r.cqi),
                None => (0, 0),
            };
            let sinr = self.radio.sinr_db(rnti, now);
            let u = &mut self.ues[i];
            u.counters.sinr_sum_db += sinr;
            u.counters.sinr_samples += 1;
            u.last_cqi = cqi;
            u.last_mcs = mcs;
            let free_harq = u.dl_harq.free_process();
            let bpp = if cqi == 0 {
                0.0
            } else {
                self.radio.bytes_per_prb(rnti, slot_idx, mcs, layers)
            };
            self.sched_mcs[i] = mcs;
            self.sched_ues.push(SchedUe {
                rnti,
                bytes_per_prb: bpp,
                backlog_bytes: backlog,
                harq_retx,
                free_harq,
            });
        }
        if self.sched_ues.is_empty() {
            return;
        }
        self.allocs.clear();
        let budget = self.cells[c].pdcch.remaining();
        {
            let radio = &self.radio;
            let ues = &self.ues;
            let by_rnti_tab = &self.by_rnti;
            let mcs_of = &self.sched_mcs;
            let by_rnti = |r: u16| by_rnti_tab[r as usize] as usize;
            self.cells[c].dl_sched.schedule_with(
                now,
                &self.sched_ues,
                budget,
                |su, n| {
                    let i = by_rnti(su.rnti);
                    radio.tb_size_bytes(su.rnti, slot_idx, n as u32, mcs_of[i], ues[i].layers)
                },
                &mut self.allocs,
            );
        }
        let n_alloc = self.allocs.len();
        self.cells[c].pdcch.consume(n_alloc as u16);
        self.cells[c].dcis += n_alloc as u64;
        for k in 0..n_alloc {
            let a = self.allocs[k];
            let i = self.by_rnti[a.rnti as usize] as usize;
            let h = a.harq_id as usize;
            let attempt;
            if a.is_retx {
                let u = &mut self.ues[i];
                u.dl_harq.start_retx(now, a.harq_id);
                attempt = u.dl_harq.process(a.harq_id).tx_count as u32 - 1;
                u.counters.dl_tb_retx += 1;
            } else {
                let u = &mut self.ues[i];
                let bs: BufferStatus = u.enb_rlc.buffer_status(now);
                self.ops.clear();
                if self.nr {
                    dl_tx_opportunities_nr(a.tb_bytes, a.rnti, a.harq_id, &[bs], &mut self.ops);
                } else {
                    dl_tx_opportunities(a.tb_bytes, a.rnti, a.harq_id, &[bs], &mut self.ops);
                }
                let mut pdus = std::mem::take(&mut u.dl_tb[h].pdus);
                pdus.clear();
                for op in &self.ops {
                    u.enb_rlc.handle_tx_opportunity(now, *op, &mut pdus);
                }
                if pdus.is_empty() {
                    u.dl_tb[h].pdus = pdus;
                    continue;
                }
                u.dl_tb[h].pdus = pdus;
                u.dl_tb[h].mcs = self.sched_mcs[i];
                u.dl_harq.start_new(now, a.harq_id, a.n_prb, a.tb_bytes, ());
                u.counters.dl_tb_new += 1;
                u.counters.dl_tb_bytes += a.tb_bytes as u64;
                attempt = 0;
            }
            let u = &mut self.ues[i];
            u.counters.dl_prbs += a.n_prb as u64;
            self.cells[c].dl_prbs += a.n_prb as u64;
            let (rnti, mcs, layers) = (u.rnti, u.dl_tb[h].mcs, u.layers);
            let ok = self
                .radio
                .decode(rnti, a.harq_id, now, mcs, attempt, layers);
            self.push_pending(
                now + self.cfg.harq.feedback_delay,
                Pending::DlFeedback {
                    ue: i as u32,
                    harq: a.harq_id,
                    ack: ok,
                },
            );
            if ok {
                let mut v = std::mem::take(&mut self.ues[i].dl_tb[h].pdus);
                let s = self.slab_put(&mut v);
                self.ues[i].dl_tb[h].pdus = v;
                self.push_pending(
                    now + self.slot + self.cfg.ue_processing,
                    Pending::DlRxAtUe {
                        ue: i as u32,
                        slab: s,
                    },
                );
            }
            self.note_ue_timers(i);
        }
    }

    fn schedule_ul(&mut self, now: Time, c: usize, tx_slot: u64) {
        self.sched_ues.clear();
        for k in 0..self.cells[c].ues.len() {
            let i = self.cells[c].ues[k];
            let u = &self.ues[i];
            let harq_retx = u.ul_harq.pending_retx().next();
            let backlog = self.cells[c].ul_sched.tracker.backlog(u.rnti);
            if backlog == 0 && harq_retx.is_none() {
                continue;
            }
            let rnti = u.rnti;
            let free_harq = u.ul_harq.free_process();
            // Rank by the rate of a nominal 10-PRB allocation (UE power spread over it).
            let mcs = self.radio.ul_mcs(rnti, now, 10, self.cfg.ul_layers);
            let bpp = self
                .radio
                .tb_size_bytes(rnti, tx_slot, 10, mcs, self.cfg.ul_layers)
                as f64
                / 10.0;
            self.sched_ues.push(SchedUe {
                rnti,
                bytes_per_prb: bpp.max(1.0),
                backlog_bytes: 0,
                harq_retx,
                free_harq,
            });
        }
        if self.sched_ues.is_empty() {
            return;
        }
        self.grants.clear();
        let budget = self.cells[c].pdcch.remaining();
        let layers = self.cfg.ul_layers;
        let used = {
            let radio = &mut self.radio;
            self.cells[c].ul_sched.schedule_with(
                now,
                &self.sched_ues,
                budget,
                |su, n| {
                    let mcs = radio.ul_mcs(su.rnti, now, n as u32, layers);
                    radio.tb_size_bytes(su.rnti, tx_slot, n as u32, mcs, layers)
                },
                &mut self.grants,
            )
        };
        self.cells[c].pdcch.consume(used);
        self.cells[c].dcis += used as u64;
        let tx_at = self.radio.carrier().slot_start(tx_slot);
        for k in 0..self.grants.len() {
            let g = self.grants[k];
            let i = self.by_rnti[g.rnti as usize] as usize;
            self.cells[c].ul_prbs += g.n_prb as u64;
            if g.is_retx {
                self.ues[i].ul_harq.start_retx(now, g.harq_id);
            } else {
                if g.tb_bytes == 0 {
                    continue;
                }
                let mcs = self.radio.ul_mcs(g.rnti, now, g.n_prb as u32, layers);
                let u = &mut self.ues[i];
                u.ul_harq.start_new(now, g.harq_id, g.n_prb, g.tb_bytes, ());
                u.ul_tb[g.harq_id as usize].mcs = mcs;
                u.ul_tb[g.harq_id as usize].n_prb = g.n_prb;
                u.counters.ul_grants += 1;
                u.ul_granted_pending += g.tb_bytes as u64;
            }
            self.push_pending(
                tx_at,
                Pending::UlTx {
                    ue: i as u32,
                    harq: g.harq_id,
                    tb_bytes: g.tb_bytes,
                    n_prb: g.n_prb,
                    retx: g.is_retx,
                },
            );
        }
    }

    /// Anything that needs the next slot?
    fn needs_slots(&mut self, now: Time) -> bool {
        for c in 0..self.cells.len() {
            for &i in &self.cells[c].ues {
                let u = &self.ues[i];
                if u.enb_rlc.buffer_status(now).total_bytes() > 0
                    || u.dl_harq.pending_retx().next().is_some()
                    || u.ul_harq.pending_retx().next().is_some()
                    || self.cells[c].ul_sched.tracker.backlog(u.rnti) > 0
                {
                    return true;
                }
            }
        }
        false
    }
}

impl Device for RanDevice {
    fn handle_packet(&mut self, now: Time, from: NodeId, p: Packet) {
        if from == self.enb_node {
            let Some(&i) = self.by_addr.get(&p.ip.dst) else {
                self.unknown_dst_drops += 1;
                return;
            };
            let rnti = self.ues[i].rnti;
            if let Some(h) = &mut self.dl_hook {
                if !h.on_dl_packet(now, rnti, &p) {
                    self.ues[i].counters.dl_hook_drops += 1;
                    return;
                }
            }
            let u = &mut self.ues[i];
            u.counters.dl_packets_in += 1;
            let id = u.next_dl_id;
            u.next_dl_id += 1;
            let pd = u.enb_pdcp.handle_sdu(id, p.len());
            if u.enb_rlc.handle_sdu(
                now,
                RlcSdu {
                    sdu_id: id,
                    bytes: pd.bytes,
                },
            ) {
                u.dl_sdus.push_back((id, p));
                self.wake_slots(now);
            }
            self.note_ue_timers(i);
        } else if let Some(&i) = self.by_node.get(&from) {
            let u = &mut self.ues[i];
            u.counters.ul_packets_in += 1;
            let info = ul_info(&p);
            if info.is_pure_tcp_ack {
                u.counters.ul_acks_in += 1;
            }
            let id = u.next_ul_id;
            u.next_ul_id += 1;
            if u.ul_queue.push(UlPacket {
                id,
                bytes: p.len(),
                meta: 0,
                info,
                arrival: now,
            }) {
                u.ul_pkts.push_back((id, p));
                // Network-function hook point at packet arrival (design.md §5, seed 000).
                u.hook.on_arrival(&mut u.ul_queue, now);
                for id in u.ul_queue.drain_discarded() {
                    if let Some(pos) = u.ul_pkts.iter().position(|(x, _)| *x == id) {
                        u.ul_pkts.remove(pos);
                    }
                }
            }
            self.sync_bsr(i, now);
            self.note_ue_timers(i);
        }
    }

    fn handle_timeout(&mut self, now: Time) {
        self.run_pending(now);
        if self.timer_min.is_some_and(|t| t <= now) {
            for i in 0..self.ues.len() {
                self.ue_timers(i, now);
            }
        }
        if self.next_slot.is_some_and(|t| t <= now) {
            self.run_slot(now);
            self.next_slot = if self.needs_slots(now) {
                Some(next_boundary(self.slot, now + Duration::from_nanos(1)))
            } else {
                None
            };
        }
        // Recompute the earliest entity timer.
        self.timer_min = None;
        for i in 0..self.ues.len() {
            self.note_ue_timers(i);
        }
    }

    fn poll_deliver(&mut self, _now: Time) -> Option<(NodeId, Packet)> {
        self.out.pop_front()
    }

    fn poll_timeout(&self) -> Option<Time> {
        let p = self.pending.peek().map(|r| r.0 .0);
        [p, self.next_slot, self.timer_min]
            .into_iter()
            .flatten()
            .min()
    }

    fn sample(&mut self, now: Time) {
        self.take_sample(now);
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}
