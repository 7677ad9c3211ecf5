//! Radio link control: acknowledged mode (TS 36.322 §5.1.3, §5.2, §5.3.3, §5.4; TS 38.322
//! §5.2.3, §5.3, §5.3.4) and unacknowledged mode (TS 36.322 §5.1.2; TS 38.322 §5.2.2) as
//! sans-IO entities.
//!
//! One [`RlcEntity`] is one radio bearer's RLC at one node; an AM entity holds both the
//! transmitting side (SDU queue bounded in bytes, segmentation/concatenation, retransmission
//! buffer, polling) and the receiving side (reordering, STATUS reports, in-order delivery).
//! Payload bytes are never stored: an SDU is an opaque `sdu_id` plus its length, and PDUs
//! carry descriptors of the SDU bytes they contain (`Field`s).
//!
//! Contract (ns-3 `LteRlcSapProvider` / `LteMacSapUser` vocabulary):
//! * upper layer → [`RlcEntity::handle_sdu`] (PDCP PDU in; `false` = dropped at the byte limit),
//!   or [`RlcEntity::handle_sdu_front`] ahead of the SDUs not begun ([`RlcEntity::unsent_sdus`]),
//!   which [`RlcEntity::purge_sdus`] may also remove (network functions, design.md §5);
//! * MAC → [`RlcEntity::handle_tx_opportunity`] (returns the RLC PDUs for that many bytes:
//!   STATUS first, then retransmissions, then new data, §5.2.1 / §5.3.2 / TS 36.322 §5.1.3.1.1);
//! * MAC → [`RlcEntity::handle_pdu`] (a PDU received from the peer);
//! * [`RlcEntity::buffer_status`] for the MAC scheduler / BSR;
//! * [`RlcEntity::pop_delivered`] for SDU ids delivered to the upper layer (in order except NR
//!   UM, [`RlcEntity::delivers_in_order`]); [`RlcEntity::pop_lost`] for UM SDU ids given up;
//! * [`RlcEntity::poll_timeout`] / [`RlcEntity::handle_timeout`] for t-PollRetransmit,
//!   t-StatusProhibit and t-Reordering (LTE) / t-Reassembly (NR).
//!
//! # Header layouts (one per [`RlcLayout`]), byte-exact
//! * `Lte` (TS 36.322 §6.2.1.3 / §6.2.1.4 / §6.2.1.5, 10-bit SN): an AMD or UMD PDU has a
//!   2-byte fixed header (D/C, RF, P, FI, E, SN for AM; FI, E, SN for 10-bit UM). Each SDU piece
//!   beyond the first in a PDU (concatenation) adds an E+LI pair of 12 bits; the pairs are
//!   octet-aligned, so K data fields cost `ceil(12·(K−1)/8)` bytes (0, 2, 3, 5, 6, …). LI is
//!   11 bits, so a data field that is not the last one is at most 2047 bytes. An AMD PDU
//!   *segment* (re-segmentation of a retransmitted PDU, §5.2.1) adds LSF+SO (2 bytes): 4 + LIs.
//!   New data goes as one PDU concatenating as many SDUs as fit (a new PDU starts only after
//!   an SDU piece too long for an LI). Every RLC PDU after the first in one opportunity (STATUS,
//!   retransmissions, new data) is a further MAC SDU of the channel and pays its MAC subheader
//!   (2 bytes below 128 bytes, else 3; TS 36.321 §6.1.2) inside the opportunity; the first
//!   one's subheader is the MAC's (see `mac::mux`).
//! * `Nr12` / `Nr18` (TS 38.322 §6.2.2.3 / §6.2.2.4): no concatenation; the SN is per SDU.
//!   AMD header 2 bytes (12-bit SN) or 3 bytes (18-bit SN), plus a 2-byte SO in every segment
//!   but the first (SI = 10 or 11). UMD: a complete SDU has a 1-byte header (SI = 00, no SN);
//!   segments have 2 bytes (12-bit SN) plus the SO except the first. One opportunity may carry
//!   several PDUs; each becomes its own MAC subPDU, so with
//!   [`RlcConfig::mac_subheader_per_pdu`] (the NR default) the entity also counts a 2- or 3-byte
//!   MAC subheader per PDU (TS 38.321 §6.1.2) inside [`TxOpportunity::bytes`].
//! * STATUS PDU sizes: LTE §6.2.1.6 (15 bits + 12 per NACK_SN + 30 per SOstart/SOend, rounded
//!   up to octets); NR §6.2.2.5 (3 bytes + 2 (12-bit) or 3 (18-bit) per NACK_SN + 4 per SO pair).
//!
//! Sequence numbers are kept as unbounded `u64` counters; the wrap-around of the on-air SN is
//! not modelled, the window (`window_size`, AM_Window_Size = 512 in LTE, 2048 / 131072 in NR)
//! is enforced instead. In-order delivery is used in both LTE and NR (NR RLC may deliver out of
//! order and let PDCP reorder; for AM the end result at the PDCP SAP is the same order). LTE UM
//! delivers in SN order (36.322 §5.1.2.2); NR UM delivers each SDU as soon as it is complete,
//! possibly out of order, and discards incomplete ones when t-Reassembly or the window moves
//! past them (38.322 §5.2.2.2); use PDCP `in_order` for ordered delivery. In both, a PDU that
//! arrives after the receiving window moved past its SN is discarded.
//!
//! t-Reordering / t-Reassembly start condition: LTE starts it when any SN above VR(R) has been
//! received (36.322 §5.1.3.2.3); NR when RX_Next_Highest > RX_Next + 1, or = RX_Next + 1 with
//! a byte missing before the last received byte of RX_Next (38.322 §5.2.3.2.3); the same
//! rules with VR(MS) / RX_Highest_Status decide the restart at expiry.

mod few;
mod rx;
mod tx;

use crate::mac::sap::{BufferStatus, Lcid, Rnti, TxOpportunity};
use rantcp_core::{Duration, Time};

pub use few::Few;
pub use rx::RlcRx;
pub use tx::RlcTx;

/// Transfer mode of an entity.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RlcMode {
    /// Acknowledged mode: ARQ with STATUS reports.
    Am,
    /// Unacknowledged mode: segmentation and reassembly only.
    Um,
}

/// Which header layout (and SN size) the entity uses. See the module docs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RlcLayout {
    /// TS 36.322, 10-bit SN, LI-based concatenation.
    Lte,
    /// TS 38.322, 12-bit SN, SO-based segmentation, no concatenation.
    Nr12,
    /// TS 38.322, 18-bit SN (AM only; UM uses the 12-bit UMD layout).
    Nr18,
}

/// Configuration of one RLC entity (TS 36.331 `RLC-Config` / TS 38.331 `RLC-BearerConfig`).
#[derive(Clone, Debug)]
pub struct RlcConfig {
    pub mode: RlcMode,
    pub layout: RlcLayout,
    pub rnti: Rnti,
    pub lcid: Lcid,
    /// Byte limit of the SDU queue (new data not yet segmented); SDUs that would exceed it
    /// are dropped and counted.
    pub max_tx_buffer_bytes: u64,
    /// pollPDU (TS 36.322 §5.2.2.1); `u32::MAX` = infinity.
    pub poll_pdu: u32,
    /// pollByte (bytes); `u64::MAX` = infinity.
    pub poll_byte: u64,
    /// t-PollRetransmit.
    pub t_poll_retransmit: Duration,
    /// t-StatusProhibit.
    pub t_status_prohibit: Duration,
    /// t-Reordering (LTE) / t-Reassembly (NR).
    pub t_reassembly: Duration,
    /// maxRetxThreshold: reaching it is counted as a radio-link-failure indication.
    pub max_retx_threshold: u32,
    /// AM_Window_Size / UM_Window_Size in SNs.
    pub window_size: u64,
    /// Count a MAC subheader per RLC PDU inside [`TxOpportunity::bytes`] (NR, where every RLC
    /// PDU is its own MAC subPDU: 2 bytes with an 8-bit L, 3 with a 16-bit L, TS 38.321
    /// §6.1.2). `false` for LTE, where the MAC adds one subheader per logical channel.
    pub mac_subheader_per_pdu: bool,
}

impl RlcConfig {
    /// LTE AM, 10-bit SN (AM_Window_Size 512), with values from the TS 36.331 ranges:
    /// pollPDU 32, pollByte 25000, t-PollRetransmit 45 ms, t-StatusProhibit 10 ms,
    /// t-Reordering 35 ms, maxRetxThreshold 32; SDU queue limit 10 MiB.
    pub fn am_lte(rnti: Rnti, lcid: Lcid) -> Self {
        RlcConfig {
            mode: RlcMode::Am,
            layout: RlcLayout::Lte,
            rnti,
            lcid,
            max_tx_buffer_bytes: 10 * 1024 * 1024,
            poll_pdu: 32,
            poll_byte: 25_000,
            t_poll_retransmit: Duration::from_millis(45),
            t_status_prohibit: Duration::from_millis(10),
            t_reassembly: Duration::from_millis(35),
            max_retx_threshold: 32,
            window_size: 512,
            mac_subheader_per_pdu: false,
        }
    }
    /// NR AM, 18-bit SN (window 131072), seed 004's timers (t-PollRetransmit 4 ms,
    /// t-StatusProhibit 1 ms), t-Reassembly 5 ms.
    pub fn am_nr(rnti: Rnti, lcid: Lcid) -> Self {
        RlcConfig {
            mode: RlcMode::Am,
            layout: RlcLayout::Nr18,
            rnti,
            lcid,
            max_tx_buffer_bytes: 20 * 1024 * 1024,
            poll_pdu: 64,
            poll_byte: 100_000,
            t_poll_retransmit: Duration::from_millis(4),
            t_status_prohibit: Duration::from_millis(1),
            t_reassembly: Duration::from_millis(5),
            max_retx_threshold: 32,
            window_size: 131_072,
            mac_subheader_per_pdu: true,
        }
    }
    /// LTE UM, 10-bit SN (UM_Window_Size 512), t-Reordering 35 ms.
    pub fn um_lte(rnti: Rnti, lcid: Lcid) -> Self {
        RlcConfig {
            mode: RlcMode::Um,
            ..Self::am_lte(rnti, lcid)
        }
    }
    /// NR UM, 12-bit SN (UM_Window_Size 2048), t-Reassembly 5 ms.
    pub fn um_nr(rnti: Rnti, lcid: Lcid) -> Self {
        RlcConfig {
            mode: RlcMode::Um,
            layout: RlcLayout::Nr12,
            window_size: 2048,
            ..Self::am_nr(rnti, lcid)
        }
    }
}

/// A piece of one SDU inside an RLC data PDU.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Field {
    pub sdu_id: u64,
    /// Length of the whole SDU (bytes).
    pub sdu_bytes: u32,
    /// Offset of this piece inside the SDU.
    pub sdu_offset: u32,
    /// Length of this piece.
    pub len: u32,
    /// Offset of this piece inside the data field of its SN (the unit SO refers to).
    pub unit_offset: u32,
}

impl Field {
    /// The piece starts its SDU (FI / SI first bit clear).
    pub fn is_sdu_start(&self) -> bool {
        self.sdu_offset == 0
    }
    /// The piece ends its SDU.
    pub fn is_sdu_end(&self) -> bool {
        self.sdu_offset + self.len == self.sdu_bytes
    }
}

/// The SDU pieces of a PDU or an SN: one or two inline (an NR PDU carries one), more on the
/// heap (LTE concatenation).
pub type Fields = Few<Field, 2>;

/// An AMD / UMD PDU or PDU segment (descriptor; payload bytes are not stored).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DataPdu {
    /// Sequence number (unbounded counter, see module docs). Meaningless for an NR UMD PDU
    /// carrying a complete SDU, which has no SN.
    pub sn: u64,
    /// Segment offset inside the SN's data field (bytes).
    pub so: u32,
    /// Data bytes carried.
    pub len: u32,
    /// This piece ends the SN's data field (LTE LSF, NR SI ∈ {00, 10}).
    pub last: bool,
    /// SO field present in the header (LTE RF = 1 AMD PDU segment; NR SI ∈ {10, 11}).
    pub has_so: bool,
    /// Poll bit (AM only).
    pub poll: bool,
    /// Retransmission (AM only).
    pub is_retx: bool,
    /// The SDU pieces carried, in order.
    pub fields: Fields,
}

impl DataPdu {
    /// LTE framing info (TS 36.322 §6.2.2.6): bit 1 = first byte is not an SDU start,
    /// bit 0 = last byte is not an SDU end. `0b01` = first segment, `0b11` middle, `0b10` last.
    pub fn fi(&self) -> u8 {
        let first = self.fields.first().is_some_and(|f| !f.is_sdu_start()) as u8;
        let last = self.fields.last().is_some_and(|f| !f.is_sdu_end()) as u8;
        (first << 1) | last
    }
}

/// One NACK in a STATUS PDU.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Nack {
    pub sn: u64,
    /// Missing byte range `[so_start, so_end)` of the SN's data field; `None` = the whole SN.
    /// `so_end == u32::MAX` means "to the end" (LTE SOend = 0x7FFF, NR 0xFFFF).
    pub so: Option<(u32, u32)>,
}

/// STATUS PDU (TS 36.322 §6.2.1.6, TS 38.322 §6.2.2.5).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StatusPdu {
    /// Next SN not received and not NACKed: every SN below it and not in `nacks` is ACKed.
    pub ack_sn: u64,
    pub nacks: Vec<Nack>,
}

/// Body of an RLC PDU.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RlcPduBody {
    Data(DataPdu),
    Status(StatusPdu),
}

/// One RLC PDU handed to the MAC.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RlcPdu {
    /// Total size on air (header + data), bytes.
    pub bytes: u32,
    /// RLC header bytes included in `bytes`.
    pub header_bytes: u32,
    pub body: RlcPduBody,
}

impl RlcPdu {
    pub fn as_data(&self) -> Option<&DataPdu> {
        match &self.body {
            RlcPduBody::Data(d) => Some(d),
            _ => None,
        }
    }
    pub fn as_status(&self) -> Option<&StatusPdu> {
        match &self.body {
            RlcPduBody::Status(s) => Some(s),
            _ => None,
        }
    }
}

/// An RLC SDU (a PDCP PDU): opaque id and length; the packet travels beside it in the node.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RlcSdu {
    pub sdu_id: u64,
    pub bytes: u32,
}

/// Per-entity counters.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RlcCounters {
    pub sdus_in: u64,
    pub sdu_bytes_in: u64,
    /// SDUs dropped at the byte limit.
    pub sdus_dropped: u64,
    pub sdu_bytes_dropped: u64,
    pub data_pdus_tx: u64,
    pub data_bytes_tx: u64,
    pub retx_pdus: u64,
    pub retx_bytes: u64,
    pub status_pdus_tx: u64,
    pub status_pdus_rx: u64,
    pub polls_tx: u64,
    pub poll_retransmit_expiries: u64,
    /// Times an SN reached maxRetxThreshold (radio link failure indication, §5.2.1).
    pub max_retx_reached: u64,
    pub data_pdus_rx: u64,
    pub duplicate_pdus_rx: u64,
    pub sdus_delivered: u64,
    pub sdu_bytes_delivered: u64,
    /// SDUs lost in UM reassembly (incomplete when t-Reassembly moved past them).
    pub sdus_lost_um: u64,
    pub reassembly_expiries: u64,
}

// ---------------------------------------------------------------------------------------------
// Header arithmetic.

/// NR MAC subheader for a MAC SDU of `len` bytes (TS 38.321 §6.1.2: R/F/LCID/L with an 8-bit
/// or a 16-bit L).
pub fn nr_mac_subheader_bytes(len: u32) -> u32 {
    if len < 256 {
        2
    } else {
        3
    }
}

/// Largest RLC PDU that fits `room` together with its own MAC subheader, if counted: always
/// in NR (`mac_subheader_per_pdu`); in LTE for every PDU after the first of an opportunity
/// (the MAC accounts one subheader per logical channel; further RLC PDUs of the channel in the
/// same TB are further MAC SDUs, TS 36.321 §6.1.2).
pub(crate) fn pdu_budget(room: u32, cfg: &RlcConfig, first: bool) -> u32 {
    if cfg.mac_subheader_per_pdu {
        if room >= 259 {
            room - 3
        } else {
            room.saturating_sub(2).min(255)
        }
    } else if first || cfg.layout.is_nr() {
        room
    } else {
        crate::mac::mux::max_sdu(room)
    }
}

/// Bytes an RLC PDU of `bytes` takes from the opportunity (see [`pdu_budget`]).
pub(crate) fn pdu_cost(bytes: u32, cfg: &RlcConfig, first: bool) -> u32 {
    bytes
        + if cfg.mac_subheader_per_pdu {
            nr_mac_subheader_bytes(bytes)
        } else if first || cfg.layout.is_nr() {
            0
        } else {
            crate::mac::mux::mac_subheader_bytes(bytes)
        }
}

/// Bytes taken by the E/LI pairs for `k` data fields in one LTE PDU (TS 36.322 §6.2.1.4).
pub fn lte_li_bytes(k: usize) -> u32 {
    if k <= 1 {
        0
    } else {
        (12 * (k as u32 - 1)).div_ceil(8)
    }
}

/// Largest data field that may carry an LI (11 bits).
pub const LTE_MAX_LI: u32 = 2047;

impl RlcLayout {
    /// Header of a data PDU carrying `k` fields (LTE) starting at `so` of its SN.
    /// `whole` = the piece is the SN's entire data field, `sdu_whole` (NR UM) = the piece is a
    /// complete SDU.
    pub fn data_header_bytes(self, mode: RlcMode, k: usize, so: u32, whole: bool) -> u32 {
        match self {
            RlcLayout::Lte => {
                let seg = if mode == RlcMode::Am && !whole { 2 } else { 0 };
                2 + seg + lte_li_bytes(k)
            }
            RlcLayout::Nr12 | RlcLayout::Nr18 => {
                let so_bytes = if so > 0 { 2 } else { 0 };
                match mode {
                    RlcMode::Am => (if self == RlcLayout::Nr12 { 2 } else { 3 }) + so_bytes,
                    RlcMode::Um => {
                        if whole {
                            1
                        } else {
                            2 + so_bytes
                        }
                    }
                }
            }
        }
    }

    /// Size of a STATUS PDU with `n_nack` NACKs of which `n_so` carry an SO range.
    pub fn status_bytes(self, n_nack: usize, n_so: usize) -> u32 {
        match self {
            RlcLayout::Lte => {
                let bits = 15 + 12 * n_nack as u32 + 30 * n_so as u32;
                bits.div_ceil(8)
            }
            RlcLayout::Nr12 => 3 + 2 * n_nack as u32 + 4 * n_so as u32,
            RlcLayout::Nr18 => 3 + 3 * n_nack as u32 + 4 * n_so as u32,
        }
    }

    /// True for the NR layouts (no concatenation, SN per SDU).
    pub fn is_nr(self) -> bool {
        !matches!(self, RlcLayout::Lte)
    }
}

// ---------------------------------------------------------------------------------------------
// The entity.

/// One RLC entity (AM or UM): transmitting and receiving side of one bearer at one node.
#[derive(Debug)]
pub struct RlcEntity {
    pub cfg: RlcConfig,
    tx: RlcTx,
    rx: RlcRx,
    counters: RlcCounters,
}

impl RlcEntity {
    pub fn new(cfg: RlcConfig) -> Self {
        RlcEntity {
            tx: RlcTx::new(&cfg),
            rx: RlcRx::new(&cfg),
            cfg,
            counters: RlcCounters::default(),
        }
    }

    /// An SDU from the upper layer (ns-3 `TransmitPdcpPdu`). Returns `false` if it was dropped
    /// because the SDU queue would exceed `max_tx_buffer_bytes`.
    pub fn handle_sdu(&mut self, now: Time, sdu: RlcSdu) -> bool {
        self.tx
            .handle_sdu(now, sdu, false, &self.cfg, &mut self.counters)
    }

    /// [`Self::handle_sdu`], but the SDU goes ahead of every queued SDU no byte of which has
    /// been sent (a partly segmented head SDU keeps its place): a network function's urgent
    /// packet, such as seed 001's batch retransmissions, overtakes queued new data.
    pub fn handle_sdu_front(&mut self, now: Time, sdu: RlcSdu) -> bool {
        self.tx
            .handle_sdu(now, sdu, true, &self.cfg, &mut self.counters)
    }

    /// Queued SDUs no byte of which has been sent yet (the ones [`Self::handle_sdu_front`]
    /// overtakes and [`Self::purge_sdus`] may remove).
    pub fn unsent_sdus(&self) -> usize {
        self.tx.unsent_sdus()
    }

    /// Does the receiving side deliver SDUs in the order they were sent? Everything but NR UM,
    /// which delivers each SDU as soon as it is complete (TS 38.322 §5.2.2.2).
    pub fn delivers_in_order(&self) -> bool {
        !(self.cfg.mode == RlcMode::Um && self.cfg.layout.is_nr())
    }

    /// A transmit opportunity from the MAC: appends the PDUs to send (at most `op.bytes` in
    /// total, including one MAC subheader per PDU if `mac_subheader_per_pdu`, or per PDU after
    /// the first in LTE) to `out`. Order: STATUS PDU (AM, if triggered and t-StatusProhibit not running),
    /// retransmissions, new data.
    pub fn handle_tx_opportunity(&mut self, now: Time, op: TxOpportunity, out: &mut Vec<RlcPdu>) {
        let mut room = op.bytes;
        let start = out.len();
        if self.cfg.mode == RlcMode::Am {
            if let Some(st) =
                self.rx
                    .build_status(now, pdu_budget(room, &self.cfg, true), &self.cfg)
            {
                room -= pdu_cost(st.bytes, &self.cfg, true);
                self.counters.status_pdus_tx += 1;
                out.push(st);
            }
        }
        let first = out.len() == start;
        self.tx
            .fill(now, room, first, &self.cfg, &mut self.counters, out);
    }

    /// Convenience form of [`Self::handle_tx_opportunity`] returning a fresh vector.
    pub fn tx_opportunity(&mut self, now: Time, bytes: u32) -> Vec<RlcPdu> {
        let mut v = Vec::new();
        let op = TxOpportunity {
            bytes,
            rnti: self.cfg.rnti,
            lcid: self.cfg.lcid,
            harq_id: 0,
        };
        self.handle_tx_opportunity(now, op, &mut v);
        v
    }

    /// A PDU received from the peer entity through the MAC.
    pub fn handle_pdu(&mut self, now: Time, pdu: &RlcPdu) {
        match &pdu.body {
            RlcPduBody::Data(d) => self.rx.handle_data(now, d, &self.cfg, &mut self.counters),
            RlcPduBody::Status(s) => {
                self.counters.status_pdus_rx += 1;
                self.tx.handle_status(now, s, &self.cfg, &mut self.counters)
            }
        }
    }

    /// Next SDU id delivered in order to the upper layer.
    pub fn pop_delivered(&mut self) -> Option<u64> {
        self.rx.delivered.pop_front()
    }

    /// Next SDU id the receiving side gave up (UM only: incomplete when t-Reassembly or the
    /// window moved past it, TS 36.322 §5.1.2.2.3 / TS 38.322 §5.2.2.2.3), so that the upper
    /// layer can free what it keeps beside the SDU.
    pub fn pop_lost(&mut self) -> Option<u64> {
        self.rx.lost.pop_front()
    }

    /// The channel's backlog for the MAC.
    pub fn buffer_status(&self, now: Time) -> BufferStatus {
        let mut bs = self.tx.buffer_status(now, &self.cfg);
        if self.cfg.mode == RlcMode::Am {
            let st = self.rx.pending_status_bytes(now, &self.cfg);
            bs.status_pdu_bytes = if st > 0 {
                pdu_cost(st, &self.cfg, true)
            } else {
                0
            };
            if st > 0
                && !self.cfg.mac_subheader_per_pdu
                && bs.retx_queue_bytes == 0
                && bs.tx_queue_bytes > 0
            {
                // New data after the STATUS PDU: a second MAC SDU of the channel.
                bs.tx_queue_bytes += 3;
            }
        }
        bs
    }

    /// [`Self::buffer_status`]`(now).total_bytes()`, answered at once while the entity is idle
    /// (nothing queued or to retransmit, no STATUS triggered: every term is 0), as it often is
    /// when a function asks before each downlink packet.
    #[inline]
    pub fn total_bytes(&self, now: Time) -> u64 {
        if self.tx.is_idle() && !self.rx.status_triggered() {
            debug_assert_eq!(self.buffer_status(now).total_bytes(), 0);
            return 0;
        }
        self.buffer_status(now).total_bytes()
    }

    /// Earliest time at which [`Self::handle_timeout`] has work (t-PollRetransmit,
    /// t-Reordering/t-Reassembly, or the end of t-StatusProhibit with a STATUS pending).
    pub fn poll_timeout(&self) -> Option<Time> {
        let a = self.tx.poll_timeout();
        let b = self.rx.poll_timeout();
        match (a, b) {
            (Some(x), Some(y)) => Some(x.min(y)),
            (x, y) => x.or(y),
        }
    }

    /// Runs the timers that expired at or before `now`.
    pub fn handle_timeout(&mut self, now: Time) {
        self.tx.handle_timeout(now, &self.cfg, &mut self.counters);
        self.rx.handle_timeout(now, &self.cfg, &mut self.counters);
    }

    pub fn counters(&self) -> &RlcCounters {
        &self.counters
    }
    /// Bytes of SDUs waiting for their first transmission.
    pub fn tx_queue_bytes(&self) -> u64 {
        self.tx.queue_bytes()
    }
    /// SNs sent and not yet acknowledged (AM).
    pub fn unacked_sns(&self) -> u64 {
        self.tx.unacked_sns()
    }
    /// RLC re-establishment (TS 36.322 §5.4, TS 38.322 §5.1.2): every SDU, SDU segment and
    /// PDU of both sides is discarded, the state variables reset and the timers stopped. The
    /// counters are kept. (The receiving side's delivery of SDUs reassembled from PDUs below
    /// VR(MR) before the discard is not modelled: the PDCP above resends what was not
    /// delivered, so such SDUs cost air time, not data.)
    pub fn reestablish(&mut self) {
        self.tx = RlcTx::new(&self.cfg);
        self.rx = RlcRx::new(&self.cfg);
    }

    /// Discards all queued SDUs not yet (partly) transmitted whose id satisfies `pred`
    /// (for network functions such as the RST tracker). Returns the bytes removed.
    pub fn purge_sdus(&mut self, pred: impl FnMut(u64) -> bool) -> u64 {
        self.tx.purge(pred)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_header_and_status_sizes() {
        assert_eq!([1, 2, 3, 4, 5, 6].map(lte_li_bytes), [0, 2, 3, 5, 6, 8]);
        let l = RlcLayout::Lte;
        assert_eq!(l.data_header_bytes(RlcMode::Am, 1, 0, true), 2);
        assert_eq!(l.data_header_bytes(RlcMode::Am, 2, 0, false), 6);
        assert_eq!(l.data_header_bytes(RlcMode::Um, 3, 0, true), 5);
        assert_eq!(l.status_bytes(0, 0), 2); // 15 bits
        assert_eq!(l.status_bytes(1, 0), 4); // 27 bits
        assert_eq!(l.status_bytes(1, 1), 8); // 57 bits
        assert_eq!(
            RlcLayout::Nr12.data_header_bytes(RlcMode::Am, 1, 0, false),
            2
        );
        assert_eq!(
            RlcLayout::Nr12.data_header_bytes(RlcMode::Am, 1, 10, false),
            4
        );
        assert_eq!(
            RlcLayout::Nr18.data_header_bytes(RlcMode::Am, 1, 10, false),
            5
        );
        assert_eq!(
            RlcLayout::Nr12.data_header_bytes(RlcMode::Um, 1, 0, true),
            1
        );
        assert_eq!(
            RlcLayout::Nr12.data_header_bytes(RlcMode::Um, 1, 0, false),
            2
        );
        assert_eq!(
            RlcLayout::Nr12.data_header_bytes(RlcMode::Um, 1, 5, false),
            4
        );
        assert_eq!(RlcLayout::Nr12.status_bytes(2, 1), 3 + 4 + 4);
        assert_eq!(RlcLayout::Nr18.status_bytes(2, 1), 3 + 6 + 4);
    }
}
