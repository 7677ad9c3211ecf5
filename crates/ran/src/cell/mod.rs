//! The radio access network of a run as one simulator [`Device`]: the eNB/gNB MAC loop per slot
//! (TS 36.321 / TS 38.321) joining the layer-2 entities of [`crate::rlc`], [`crate::pdcp`] and
//! [`crate::mac`] to the PHY abstraction of [`RadioEnvironment`], for one cell or a multi-cell
//! layout, with network functions at the radio points (design.md §5).
//!
//! # The device's contract (sans-IO, [`Device`])
//! Topology: the eNB/gNB node and every UE node attach to the device (`Sim::attach`); the core
//! (SGW/PGW or UPF) is a router joined to the eNB node by an S1-U/N3 link. A packet the eNB node
//! routes into the device ([`Device::handle_packet`] with `from` = the eNB node) is a downlink
//! packet for the UE with that destination address (unknown addresses are dropped and
//! counted); a packet a UE node routes into it goes up to the eNB node. The device hands
//! packets out through [`Device::poll_deliver`] (to a UE node, or to the eNB node), wants
//! [`Device::handle_timeout`] at [`Device::poll_timeout`], offers network functions'
//! feedback for TCP senders through [`Device::poll_action`], and appends time-series rows at
//! [`Device::sample`]. Same inputs at the same times give the same outputs.
//!
//! Per UE one data radio bearer (LCID 3, [`DRB_LCID`]):
//! * downlink: [`rantcp_nf::Point::DlIngress`] functions → PDCP (header bytes, TS 36.323 §6.2.3 / TS 38.323
//!   §6.2.2) → eNB RLC AM/UM tx (SDU byte limit, drops counted; TS 36.322 §5.1.3.1 / TS 38.322
//!   §5.2.3.1) → MAC scheduler → HARQ (§5.3.2) → UE RLC rx → [`rantcp_nf::Point::DlEgress`] functions → UE
//!   node;
//! * uplink: UE node → per-bearer IP buffer ([`rantcp_nf::UlBuffer`], [`rantcp_nf::Point::UeUlBuffer`]
//!   functions at arrival and grant) → at each grant, PDCP + UE RLC tx → UL HARQ (§5.4.2) → eNB
//!   RLC rx → [`rantcp_nf::Point::UlEgress`] functions → eNB node. The UE MAC runs SR and BSR (TS 36.321
//!   §5.4.4, §5.4.5) through [`crate::mac::ul::UeUlMac`]; the eNB sizes grants from reported
//!   buffers with [`crate::mac::ul::UlScheduler`] (or, with `ideal_bsr`, from the UE's buffer
//!   at once, as ns-3 LENA/mmWave do).
//!
//! Timing (all on slot boundaries except processing delays):
//! * a DL transport block sent in slot n is decoded with the slot-n SINR (chase combining over
//!   HARQ attempts, [`RadioEnvironment::decode`]); its ACK/NACK reaches the eNB after
//!   `harq.feedback_delay` (LTE FDD n+4, TS 36.213 §10.1); a decoded block reaches the UE's RLC
//!   at the end of the slot plus `ue_processing`;
//! * an UL grant issued in slot n is used in slot n + `k2_slots` (LTE FDD n+4, TS 36.213 §8; NR
//!   k2, TS 38.214 §6.1.2.1); the eNB knows the decoding result after `ul_harq_feedback` and
//!   retransmits first (adaptive retransmission grant); decoded UL data reach the eNB RLC at the
//!   end of the slot plus `enb_processing`;
//! * CQI: the scheduler uses the latest report that has reached it
//!   ([`RadioEnvironment::cqi_report`], period and delay from the radio config); MCS 0 until
//!   the first report;
//! * TDD: DL data only in slots whose type carries DL, UL data only in UL slots; an UL grant is
//!   issued in slot n only if slot n + k2 is an UL slot. FDD: every slot both;
//! * PDCCH: at most `pdcch_grants_per_slot` DCIs per cell and slot, DL first, then UL.
//!
//! Events: the device wakes at slot boundaries only while something is queued (DL backlog,
//! HARQ retransmissions, reported UL backlog, a pulling function's backlog), and runs at most
//! one slot per boundary; otherwise it sleeps until the next RLC/MAC timer, function timer or
//! pending event. Per-slot work is proportional to the UEs of a cell; scratch vectors are kept,
//! so steady state allocates only the RLC PDU descriptors.
//!
//! # Where things are
//! * [`config`]: [`RanConfig`] and its LTE/NR presets.
//! * `ue.rs`: per-UE state; one `Link` per direction (the sender's PDCP, packets beside RLC
//!   SDUs, HARQ entity and transport blocks) shared in shape by downlink and uplink.
//! * `sdus.rs`: the packets beside RLC SDUs, in RLC's sending order.
//! * `slot.rs`: the per-slot MAC loop (scheduling both directions, transmitting a block).
//! * `pending.rs`: the device's events (HARQ feedback, decoded blocks reaching the peer RLC,
//!   PUSCH transmissions) and their handlers.
//! * `uplink.rs`: the UE side of the uplink (buffer, SR/BSR, using a grant).
//! * `functions.rs`: network functions at the radio points and the [`RanView`] they read.
//! * [`counters`], [`series`]: what the outputs report.
//!
//! Simplifications (stated, not hidden): one eNB node for all cells of a layout (the cells are
//! independent schedulers sharing the node's IP routing); no handover; no UL inter-cell
//! interference (see [`RadioEnvironment::ul_sinr_db`]); the UL MCS is chosen from the UL SINR
//! at grant time (SRS-like) at a 10 % BLER target, under open-loop power control with an
//! ideal PHR limiting the PRBs of a grant ([`crate::ul_phy`]); UL HARQ retransmissions keep
//! the first transmission's PRBs and MCS.

pub mod config;
pub mod counters;
mod functions;
mod pending;
pub mod rlm;
mod sdus;
pub mod series;
mod slot;
mod ue;
mod uplink;

pub use config::{RanConfig, DRB_LCID};
pub use counters::{LinkCounters, UeCounters};
pub use series::{CellSeries, PacketSeries, PdcchSeries, UeSeries, UlDelaySeries};

use crate::frame::Duplex;
use crate::mac::harq::HarqConfig;
use crate::mac::sap::{TxOpportunity, UlGrant};
use crate::mac::sched::{Allocation, PdcchBudget, SchedConfig, SchedUe, Scheduler};
use crate::mac::ul::{UeUlMac, UlScheduler, UlTransmission};
use crate::pdcp::{PdcpConfig, PdcpEntity};
use crate::radio::RadioEnvironment;
use crate::rlc::{RlcConfig, RlcEntity, RlcLayout};
use functions::Functions;
use pending::{PduSlab, PendingQueue};
use rantcp_core::{Duration, Time};
use rantcp_nf::{
    Action, Device, FlowKey, NetworkFunction, NodeId, Points, RanView, Rnti, SampleSink, UeReport,
    UlBuffer,
};
use rantcp_wire::Packet;
use rustc_hash::FxHashMap;
use std::collections::VecDeque;
use std::net::Ipv4Addr;
use ue::{Ue, UeSetup, ENB, UE};

/// One cell's scheduler state and counters.
struct Cell {
    dl_sched: Scheduler,
    ul_sched: UlScheduler,
    pdcch: PdcchBudget,
    /// Indices of the UEs it serves.
    ues: Vec<usize>,
    /// Slots run, DL-capable slots run and the PRBs used in them, UL slots and PRBs, DCIs.
    slots: u64,
    dl_slots: u64,
    dl_prbs: u64,
    ul_slots: u64,
    ul_prbs: u64,
    dcis: u64,
    /// Subframes (slots) the MAC loop ran, by DCIs used: `pdcch_hist[k]` slots used `k` of the
    /// `pdcch_grants_per_slot` DCIs (slots the device slept through are not counted).
    pdcch_hist: Vec<u64>,
    /// The next subframe without a `pdcch` row (the slots the device slept through get rows of
    /// 0 DCIs when it wakes, so the series has every subframe up to the last one run).
    pdcch_row_next: Time,
    /// Totals at the previous sample.
    prev: [u64; 6],
}

impl Cell {
    fn totals(&self) -> [u64; 6] {
        [
            self.slots,
            self.dl_slots,
            self.dl_prbs,
            self.ul_slots,
            self.ul_prbs,
            self.dcis,
        ]
    }
}

/// Vectors the slot loop reuses.
#[derive(Default)]
struct Scratch {
    sched_ues: Vec<SchedUe>,
    /// MCS per UE index for this slot.
    sched_mcs: Vec<u8>,
    allocs: Vec<Allocation>,
    grants: Vec<UlGrant>,
    ops: Vec<TxOpportunity>,
    ul_tx: UlTransmission,
}

/// Everything of the device but its network functions (which read it through [`RanView`]).
struct RanState {
    cfg: RanConfig,
    radio: RadioEnvironment,
    enb_node: NodeId,
    ues: Vec<Ue>,
    rntis: Vec<Rnti>,
    /// UE index by address and by node: looked up for every packet, hence FxHash (keys are
    /// the model's own, SipHash's flooding resistance buys nothing; never iterated).
    by_addr: FxHashMap<Ipv4Addr, usize>,
    by_node: FxHashMap<NodeId, usize>,
    /// UE index by RNTI (`u32::MAX` = none).
    by_rnti: Vec<u32>,
    cells: Vec<Cell>,
    slot: Duration,
    nr: bool,
    /// Next slot to run, the last one run, and the earliest entity timer.
    next_slot: Option<Time>,
    last_slot: Option<Time>,
    timer_min: Option<Time>,
    /// No UE's radio link monitoring is due before this (`Time::ZERO`: look).
    rlm_next: Time,
    pending: PendingQueue,
    slab: PduSlab,
    out: VecDeque<(NodeId, Packet)>,
    sc: Scratch,
    last_sample: Time,
    unknown_dst_drops: u64,
    slots_run: u64,
    packet_series: PacketSeries,
}

fn next_boundary(slot: Duration, t: Time) -> Time {
    let s = slot.as_nanos().max(1);
    Time::from_nanos(t.as_nanos().div_ceil(s) * s)
}

impl RanState {
    #[inline]
    fn ue_index(&self, rnti: Rnti) -> Option<usize> {
        match self.by_rnti.get(rnti as usize) {
            Some(&i) if i != u32::MAX => Some(i as usize),
            _ => None,
        }
    }

    /// Run the slot loop from the next slot boundary (at most one slot per boundary).
    fn wake_slots(&mut self, now: Time) {
        if self.next_slot.is_none() {
            let mut t = next_boundary(self.slot, now);
            if self.last_slot == Some(t) {
                t += self.slot;
            }
            self.next_slot = Some(t);
        }
    }

    fn note_ue_timers(&mut self, i: usize) {
        if let Some(t) = self.ues[i].poll_timeout() {
            self.timer_min = Some(self.timer_min.map_or(t, |m| m.min(t)));
        }
    }
}

/// The radio access network of a run as one shared-medium device. See the module docs.
pub struct RanDevice {
    st: RanState,
    nf: Functions,
    /// Time series.
    pub ue_series: UeSeries,
    pub cell_series: CellSeries,
}

impl RanDevice {
    /// A device for the cells of `radio` (every cell gets a scheduler) whose core-facing node
    /// is `enb_node`. Add UEs with [`RanDevice::add_ue`] before handing it to the simulator.
    pub fn new(cfg: RanConfig, radio: RadioEnvironment, enb_node: NodeId) -> Self {
        let carrier = radio.carrier().clone();
        let mk = |kind| SchedConfig {
            kind,
            n_prb: carrier.n_prb,
            slot: carrier.slot,
            min_prb: cfg.min_prb,
        };
        // The schedulers' opportunities (their PF averages decay once per opportunity): under
        // TDD the downlink slots, and the slots whose uplink grant lands k2 slots later in an
        // uplink slot (the slot loop runs each scheduler exactly there).
        let duplex = radio.duplex().clone();
        let pattern_len = match &duplex {
            Duplex::Fdd => 0,
            Duplex::Tdd(p) => p.len() as u64,
        };
        let k2 = cfg.k2_slots as u64;
        let dl_opp: Vec<bool> = (0..pattern_len).map(|s| duplex.is_dl(s)).collect();
        let ul_opp: Vec<bool> = (0..pattern_len).map(|s| duplex.is_ul(s + k2)).collect();
        let cells = (0..radio.cells().len())
            .map(|_| Cell {
                dl_sched: {
                    let mut s = Scheduler::new(mk(cfg.dl_scheduler));
                    s.set_opportunities(dl_opp.clone());
                    s
                },
                ul_sched: {
                    let mut s = UlScheduler::new(mk(cfg.ul_scheduler), cfg.sr_grant_bytes);
                    s.sched.set_opportunities(ul_opp.clone());
                    s
                },
                pdcch: PdcchBudget::new(cfg.pdcch_grants_per_slot),
                ues: Vec::new(),
                slots: 0,
                dl_slots: 0,
                dl_prbs: 0,
                ul_slots: 0,
                ul_prbs: 0,
                dcis: 0,
                pdcch_hist: vec![0; cfg.pdcch_grants_per_slot as usize + 1],
                pdcch_row_next: Time::ZERO,
                prev: [0; 6],
            })
            .collect();
        let st = RanState {
            nr: cfg.rlc.layout != RlcLayout::Lte,
            cfg,
            radio,
            enb_node,
            ues: Vec::new(),
            rntis: Vec::new(),
            by_addr: FxHashMap::default(),
            by_node: FxHashMap::default(),
            by_rnti: Vec::new(),
            cells,
            slot: carrier.slot,
            next_slot: None,
            last_slot: None,
            timer_min: None,
            rlm_next: Time::ZERO,
            pending: PendingQueue::default(),
            slab: PduSlab::default(),
            out: VecDeque::new(),
            sc: Scratch::default(),
            last_sample: Time::ZERO,
            unknown_dst_drops: 0,
            slots_run: 0,
            packet_series: PacketSeries::default(),
        };
        RanDevice {
            st,
            nf: Functions::default(),
            ue_series: UeSeries::default(),
            cell_series: CellSeries::default(),
        }
    }

    /// Register UE `rnti` (already added to the radio environment) living on `node` with IP
    /// address `addr`. Its serving cell is the radio environment's choice.
    pub fn add_ue(&mut self, rnti: Rnti, node: NodeId, addr: Ipv4Addr) {
        let st = &mut self.st;
        let cfg = &st.cfg;
        let cell = st.radio.large_scale(rnti).serving_cell;
        let layers = st.radio.layers(rnti);
        let rlc = RlcConfig {
            rnti,
            lcid: DRB_LCID,
            ..cfg.rlc.clone()
        };
        let pdcp = PdcpConfig {
            sn_size: cfg.pdcp,
            ..PdcpConfig::default()
        };
        let mut mac = cfg.ue_mac.clone();
        mac.rnti = rnti;
        if cfg.sr_offset_per_ue {
            // TS 36.213 §10.1.5: SR offset from the UE's own sr-ConfigIndex.
            let period = (mac.sr_period.as_nanos() / st.slot.as_nanos().max(1)).max(1);
            mac.sr_offset = st
                .slot
                .saturating_mul((rnti as u64).saturating_sub(1) % period);
        }
        let ul_harq = HarqConfig {
            n_processes: cfg.ul_harq_processes,
            feedback_delay: st.slot.saturating_mul(cfg.k2_slots as u64) + cfg.ul_harq_feedback,
            max_retx: cfg.ul_harq_max_retx,
        };
        if cfg.ideal_bsr {
            // Ideal reporting abstracts the request procedure away (the eNB ignores SRs): no
            // SR is left unanswered, so there is no dsr-TransMax fallback either.
            mac.dsr_trans_max = None;
        }
        let rng = rantcp_core::Rng::new(st.radio.seed(), 0x7261_0000 ^ rnti as u64);
        let setup = UeSetup {
            rlc: [RlcEntity::new(rlc.clone()), RlcEntity::new(rlc)],
            pdcp: [PdcpEntity::new(pdcp.clone()), PdcpEntity::new(pdcp)],
            harq: [cfg.harq, ul_harq],
            ue_mac: UeUlMac::with_rng(mac, rng),
            ul_buffer_limit_bytes: cfg.ul_queue_limit_bytes,
        };
        let i = st.ues.len();
        let mut ue = Ue::new(rnti, node, addr, cell, layers, setup);
        if self.nf.chain.wants(Points::UL_FLOW_INDEX) {
            ue.ul_buf.index_flows();
        }
        if cfg.rlm.is_some() {
            // Connected from the start: monitoring runs from the first radio frame.
            ue.rlm.restart(Time::ZERO);
        }
        st.ues.push(ue);
        st.rntis.push(rnti);
        st.by_addr.insert(addr, i);
        st.by_node.insert(node, i);
        if st.by_rnti.len() <= rnti as usize {
            st.by_rnti.resize(rnti as usize + 1, u32::MAX);
        }
        st.by_rnti[rnti as usize] = i as u32;
        st.cells[cell].ues.push(i);
    }

    /// Attach a network function at the radio points (after those already attached; see
    /// `functions.rs` for when each point is called).
    pub fn add_function(&mut self, f: Box<dyn NetworkFunction>) {
        if f.points().intersects(Points::UL_FLOW_INDEX) {
            // The function looks packets up by flow; without such a function the buffer
            // keeps no index (hashing every packet twice is most of a buffer's cost).
            for u in &mut self.st.ues {
                u.ul_buf.index_flows();
            }
        }
        self.nf.push(f);
    }

    /// Discard UE `rnti`'s queued downlink packets of `flow` that RLC has not begun to send
    /// (what [`Action::PurgeDl`] does). Returns the RLC SDU bytes removed.
    pub fn purge_dl(&mut self, rnti: Rnti, flow: &FlowKey) -> u64 {
        self.st.purge_dl(rnti, flow).sdu_bytes
    }

    /// The attached functions' reports (kind, JSON object), in attachment order.
    pub fn function_reports(&self) -> Vec<(&'static str, serde_json::Value)> {
        self.nf.chain.reports()
    }
    /// The attached functions' time-series rows.
    pub fn function_samples(&self) -> &SampleSink {
        &self.nf.samples
    }
    /// Take the rows functions at the radio points wrote so far (see [`SampleSink::take`]).
    pub fn take_function_samples(&mut self) -> Vec<rantcp_nf::Series> {
        self.nf.samples.take()
    }
    /// Packets functions emitted towards the core.
    pub fn function_emitted_up(&self) -> u64 {
        self.nf.emitted_up
    }
    /// The RAN report of UE `rnti` at `now`, as functions read it.
    pub fn ue_report(&self, rnti: Rnti, now: Time) -> Option<UeReport> {
        self.st.ue_report(rnti, now)
    }

    pub fn radio(&self) -> &RadioEnvironment {
        &self.st.radio
    }
    pub fn config(&self) -> &RanConfig {
        &self.st.cfg
    }
    /// RNTIs in insertion order.
    pub fn rntis(&self) -> Vec<Rnti> {
        self.st.rntis.clone()
    }
    fn ue(&self, rnti: Rnti) -> Option<&Ue> {
        self.st.ue_index(rnti).map(|i| &self.st.ues[i])
    }
    /// IP address of UE `rnti`.
    pub fn ue_addr(&self, rnti: Rnti) -> Option<Ipv4Addr> {
        self.ue(rnti).map(|u| u.addr)
    }
    /// Counters of UE `rnti`.
    pub fn ue_counters(&self, rnti: Rnti) -> Option<UeCounters> {
        self.ue(rnti).map(|u| u.counters())
    }
    /// Serving cell of UE `rnti`.
    pub fn ue_cell(&self, rnti: Rnti) -> Option<usize> {
        self.ue(rnti).map(|u| u.cell)
    }
    /// (eNB RLC, UE RLC) counters of UE `rnti`.
    pub fn ue_rlc_counters(
        &self,
        rnti: Rnti,
    ) -> Option<(&crate::rlc::RlcCounters, &crate::rlc::RlcCounters)> {
        self.ue(rnti)
            .map(|u| (u.rlc[ENB].counters(), u.rlc[UE].counters()))
    }
    /// UE MAC (SR/BSR) counters of UE `rnti`.
    pub fn ue_mac_counters(&self, rnti: Rnti) -> Option<&crate::mac::ul::UeMacCounters> {
        self.ue(rnti).map(|u| u.ue_mac.counters())
    }
    /// Random access counters of UE `rnti` (TS 36.321 §5.1).
    pub fn ue_ra_counters(&self, rnti: Rnti) -> Option<&crate::mac::ra::RaCounters> {
        self.ue(rnti).map(|u| u.ue_mac.ra_counters())
    }
    /// UE `rnti`'s time without uplink up to `now` (SR given up or RLF, until random access
    /// succeeded or the connection was re-established).
    pub fn ue_ul_outage(&self, rnti: Rnti, now: Time) -> Option<Duration> {
        self.ue(rnti).map(|u| u.ue_mac.ul_outage(now))
    }
    /// UE `rnti`'s uplink IP buffer (its packets and counters).
    pub fn ue_ul_buffer(&self, rnti: Rnti) -> Option<&UlBuffer> {
        self.ue(rnti).map(|u| &u.ul_buf)
    }
    /// Per-cell totals: (slots, DL slots, DL PRBs used, UL slots, UL PRBs used, DCIs).
    pub fn cell_totals(&self, cell: usize) -> [u64; 6] {
        self.st.cells[cell].totals()
    }
    /// Per-cell histogram of DCIs per run subframe (index = DCIs, 0..=`pdcch_grants_per_slot`);
    /// subframes the device slept through carried none and are not in it.
    pub fn cell_pdcch_histogram(&self, cell: usize) -> &[u64] {
        &self.st.cells[cell].pdcch_hist
    }
    pub fn cell_count(&self) -> usize {
        self.st.cells.len()
    }
    /// Cells that serve at least one UE.
    pub fn active_cells(&self) -> Vec<usize> {
        (0..self.st.cells.len())
            .filter(|&c| !self.st.cells[c].ues.is_empty())
            .collect()
    }
    /// DL packets for an unknown address.
    pub fn unknown_dst_drops(&self) -> u64 {
        self.st.unknown_dst_drops
    }
    /// Slots run (all cells together count once).
    pub fn slots_run(&self) -> u64 {
        self.st.slots_run
    }
}

impl Device for RanDevice {
    fn handle_packet(&mut self, now: Time, from: NodeId, p: Packet) {
        let (st, nf) = (&mut self.st, &mut self.nf);
        st.monitor_radio_links(now);
        if from == st.enb_node {
            match st.by_addr.get(&p.ip.dst) {
                Some(&i) => st.dl_ingress(now, i, p, nf),
                None => st.unknown_dst_drops += 1,
            }
        } else if let Some(&i) = st.by_node.get(&from) {
            st.ul_arrival(now, i, p, nf);
        }
        st.carry_out(now, nf);
    }

    fn handle_timeout(&mut self, now: Time) {
        let (st, nf) = (&mut self.st, &mut self.nf);
        st.monitor_radio_links(now);
        st.run_pending(now, nf);
        if !nf.chain.is_empty() && nf.chain.poll_timeout().is_some_and(|t| t <= now) {
            nf.chain.handle_timeout(now, Some(&*st));
        }
        st.carry_out(now, nf);
        if st.timer_min.is_some_and(|t| t <= now) {
            for i in 0..st.ues.len() {
                st.ue_timers(i, now);
            }
        }
        if st.next_slot.is_some_and(|t| t <= now) {
            st.run_slot(now, nf);
            st.next_slot = if st.needs_slots(now, nf) {
                Some(next_boundary(st.slot, now + Duration::from_nanos(1)))
            } else {
                None
            };
            st.carry_out(now, nf);
        }
        // Recompute the earliest entity timer.
        st.timer_min = None;
        for i in 0..st.ues.len() {
            st.note_ue_timers(i);
        }
    }

    fn poll_deliver(&mut self, _now: Time) -> Option<(NodeId, Packet)> {
        self.st.out.pop_front()
    }

    fn poll_timeout(&self) -> Option<Time> {
        let st = &self.st;
        let t = Time::earliest(
            Time::earliest(st.pending.next_time(), st.next_slot),
            Time::earliest(st.timer_min, st.rlm_due()),
        );
        if self.nf.chain.is_empty() {
            return t;
        }
        Time::earliest(t, self.nf.chain.poll_timeout())
    }

    fn poll_action(&mut self) -> Option<Action> {
        self.nf.actions.pop_front()
    }

    fn sample(&mut self, now: Time) {
        self.take_sample(now);
        let nf = &mut self.nf;
        nf.chain.sample(now, Some(&self.st), &mut nf.samples);
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
    fn as_any_mut(&mut self) -> Option<&mut dyn std::any::Any> {
        Some(self)
    }
}
