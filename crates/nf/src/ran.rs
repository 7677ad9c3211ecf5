//! What a function at a radio point may read about the radio access network.

use crate::Rnti;
use rantcp_core::{Duration, Time};
use std::net::Ipv4Addr;

/// One UE as the base station sees it now (design.md §5 table: "RAN report").
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct UeReport {
    pub rnti: Rnti,
    /// Serving cell index.
    pub cell: usize,
    /// Latest downlink CQI report that reached the base station by `now` (0 before the first),
    /// and the MCS the scheduler picks from it: the report the scheduler would use at `now`,
    /// whether or not the UE was scheduled since its measurement.
    pub cqi: u8,
    pub mcs: u8,
    /// Downlink rate the UE can expect now, bit/s: transport-block bits per PRB at `mcs` ×
    /// the PRBs of a downlink slot × the UE's expected share of them (one over the number of
    /// UEs with downlink backlog in its cell, itself included) × downlink slots per second.
    pub achievable_rate_bps: f64,
    /// Bytes the UE's downlink RLC entity holds (new SDUs, retransmissions, status).
    pub rlc_queue_bytes: u64,
    /// Downlink SDUs the bearer holds that RLC has not begun to send.
    pub rlc_queue_packets: u64,
    /// Nothing waits in the UE's downlink RLC and no HARQ process is retransmitting.
    pub rlc_empty: bool,
    /// Downlink HARQ feedback delay, in slots (β of seed 001).
    pub harq_feedback_slots: u32,
    /// Downlink IP packets delivered per downlink slot in which the UE was scheduled,
    /// averaged over its recent slots (α of seed 001; 0 before any).
    pub dl_packets_per_slot: f64,
    /// Average size of the UE's new downlink transport blocks since the run started, bytes
    /// (S_TBS of seed 000's Hybrid(opt)).
    pub avg_dl_tbs_bytes: f64,
    /// Transport block size of all the carrier's PRBs at `mcs` in one downlink slot, bytes (TS
    /// 36.213 §7.1.7 / TS 38.214 §5.1.3.2; the mean over the DL slots of a TDD pattern); 0
    /// while `cqi` is 0. What seed 000's Table I derives S_TBS from (the TBS at the UE's mean
    /// MCS over the whole band).
    pub dl_full_tbs_bytes: f64,
    /// Bytes in the UE's uplink IP buffer.
    pub ul_buffer_bytes: u64,
}

/// Read access to the radio access network, handed to functions at [`crate::Site::Ran`].
pub trait RanView {
    /// Slot (TTI) length.
    fn slot(&self) -> Duration;
    /// Every UE's RNTI, in attachment order.
    fn rntis(&self) -> &[Rnti];
    /// The UE with IP address `addr`.
    fn rnti_of(&self, addr: Ipv4Addr) -> Option<Rnti>;
    /// The IP address of UE `rnti`.
    fn addr_of(&self, rnti: Rnti) -> Option<Ipv4Addr>;
    /// The UE's state at `now`.
    fn ue_report(&self, rnti: Rnti, now: Time) -> Option<UeReport>;
    /// Bytes in UE `rnti`'s uplink IP buffer: `ue_report(rnti, now)?.ul_buffer_bytes` without
    /// computing the rest of the report (which looks at every UE of the cell), for functions
    /// that sample the buffer of every UE.
    fn ul_buffer_bytes(&self, rnti: Rnti, now: Time) -> Option<u64> {
        self.ue_report(rnti, now).map(|r| r.ul_buffer_bytes)
    }
    /// Bytes in UE `rnti`'s downlink RLC entity: `ue_report(rnti, now)?.rlc_queue_bytes`
    /// without computing the rest of the report (CQI, rate, pattern-wide transport-block
    /// sizes), for functions that ask on every packet (seed 001's proxy).
    fn rlc_queue_bytes(&self, rnti: Rnti, now: Time) -> Option<u64> {
        self.ue_report(rnti, now).map(|r| r.rlc_queue_bytes)
    }
}
