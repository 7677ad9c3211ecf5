//! Service-access-point structs between RLC, MAC and PHY (ns-3 `LteMacSapProvider` /
//! `LteMacSapUser` vocabulary; 3GPP TS 36.321 / 38.321 terms). Plain values, no pointers:
//! a node passes them between its sans-IO entities.

use rantcp_core::Duration;

/// Radio network temporary identifier of a UE in a cell (TS 36.321 §7.1).
pub type Rnti = u16;
/// Logical channel identity (TS 36.321 Table 6.2.1-1: 1..=10 for DTCH/DCCH).
pub type Lcid = u8;

/// MAC → RLC: "you may send up to `bytes` now" (ns-3 `NotifyTxOpportunity`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TxOpportunity {
    /// Bytes available to this logical channel's RLC PDU(s), RLC headers included,
    /// MAC subheaders excluded.
    pub bytes: u32,
    pub rnti: Rnti,
    pub lcid: Lcid,
    /// HARQ process that will carry the transport block.
    pub harq_id: u8,
}

/// RLC → MAC: the logical channel's backlog (ns-3 `ReportBufferStatus`, the input of
/// the scheduler and of the UE's BSR, TS 36.321 §5.4.5 "data available for transmission").
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BufferStatus {
    pub rnti: Rnti,
    pub lcid: Lcid,
    /// New data waiting (SDU bytes plus an estimate of the RLC headers they need).
    pub tx_queue_bytes: u32,
    /// Age of the oldest waiting SDU.
    pub tx_queue_hol_delay: Duration,
    /// Bytes of pending retransmissions, RLC headers included.
    pub retx_queue_bytes: u32,
    /// Size of a triggered STATUS PDU waiting to be sent (0 if none).
    pub status_pdu_bytes: u32,
}

impl BufferStatus {
    /// Everything the MAC should schedule for this channel (bytes).
    pub fn total_bytes(&self) -> u64 {
        self.tx_queue_bytes as u64 + self.retx_queue_bytes as u64 + self.status_pdu_bytes as u64
    }
    /// Retransmissions and STATUS, which go before new data.
    pub fn priority_bytes(&self) -> u64 {
        self.retx_queue_bytes as u64 + self.status_pdu_bytes as u64
    }
}

/// PHY/MAC: decoding outcome of one HARQ transmission (TS 36.321 §5.3.2 / §5.4.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HarqFeedback {
    pub rnti: Rnti,
    pub harq_id: u8,
    pub ack: bool,
}

/// eNB/gNB → UE: an uplink grant on PDCCH (DCI format 0; TS 36.321 §5.4.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UlGrant {
    pub rnti: Rnti,
    /// Transport block size (bytes) the UE may send.
    pub tb_bytes: u32,
    pub n_prb: u16,
    pub harq_id: u8,
    /// Adaptive/non-adaptive retransmission of the process rather than new data.
    pub is_retx: bool,
}
