//! Layer-2 and timing parameters of the cells of a [`super::RanDevice`]: scheduler policies,
//! HARQ (TS 36.321 §5.3.2 / §5.4.2, timing TS 36.213 §8 and §10.1, NR k2 TS 38.214
//! §6.1.2.1), the PDCCH budget, RLC/PDCP templates, the UE MAC's SR/BSR settings (TS 36.321
//! §5.4.4, §5.4.5) and processing delays, with LTE and NR presets.

use crate::mac::harq::HarqConfig;
use crate::mac::sap::Lcid;
use crate::mac::sched::SchedulerKind;
use crate::mac::ul::UeMacConfig;
use crate::pdcp::PdcpSnSize;
use crate::rlc::RlcConfig;
use rantcp_core::Duration;

/// The data radio bearer's logical channel (TS 36.321 Table 6.2.1-1: 3..=10 are DTCH).
pub const DRB_LCID: Lcid = 3;

/// Layer-2 and timing parameters of every cell of a [`super::RanDevice`].
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
    /// Vendor behaviour, not TS 36.321 (off = 0, the default): proactive uplink grants for
    /// TCP ACKs. When the eNB sent a UE new downlink data since its last uplink grant, and
    /// its view of the UE's reported buffer is empty, it grants this many bytes on its own,
    /// at most once per [`Self::ul_proactive_period`] — so the ACKs that data will elicit (and
    /// a BSR for anything that arrived after the UE's last report) have room without an SR,
    /// and the retxBSR-Timer stall of the standard procedure cannot start. With ideal
    /// reporting it changes nothing.
    pub ul_proactive_grant_bytes: u32,
    pub ul_proactive_period: Duration,
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
    /// Record one row per uplink IP packet delivered at the eNB with its uplink LTE packet
    /// delay (UE buffer arrival → delivered by the eNB's RLC; seed 003 Figure 11), and one row
    /// per run subframe with its PDCCH DCIs (seed 003 Figure 12). Off by default (row volume).
    pub record_packet_series: bool,
    /// Give each UE its own SR offset, `(rnti − 1) mod` the SR period in slots (the eNB
    /// assigns sr-ConfigIndex per UE, TS 36.213 §10.1.5 Table 10.1.5-1), instead of the
    /// configured `ue_mac.sr_offset` for all. Off by default.
    pub sr_offset_per_ue: bool,
    /// The eNB/gNB detects a random access preamble whose SNR over its bandwidth
    /// ([`crate::radio::RadioEnvironment::prach_snr_db`]) reaches this (dB).
    pub prach_detection_snr_db: f64,
    /// The preamble's bandwidth in PRBs of the carrier (LTE format 0: 6; NR short formats: 12).
    pub prach_prbs: u32,
    /// After a radio link failure: how long the UE searches before it has selected the cell
    /// again and starts re-establishment (T311 running, TS 36.331 §5.3.7.3).
    pub rlf_search_delay: Duration,
    /// Radio link monitoring (TS 36.133 §7.6, TS 36.331 §5.3.11): out-of-sync indications
    /// start T310, whose expiry is a radio link failure. `None` (the presets' default): off.
    pub rlm: Option<super::rlm::RlmConfig>,
    /// The UE's RLC entity reaching maxRetxThreshold (TS 36.322 §5.2.1) is a radio link
    /// failure (TS 36.331 §5.3.11.3). `false` (the presets' default): only counted.
    pub rlf_on_rlc_max_retx: bool,
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
            ul_proactive_grant_bytes: 0,
            ul_proactive_period: Duration::from_millis(5),
            ul_queue_limit_bytes: 0,
            ue_processing: Duration::from_millis(1),
            enb_processing: Duration::from_millis(1),
            ul_layers: 1,
            ideal_bsr: false,
            record_packet_series: false,
            sr_offset_per_ue: false,
            prach_detection_snr_db: PRACH_DETECTION_SNR_DB,
            prach_prbs: 6,
            rlf_search_delay: RLF_SEARCH_DELAY,
            rlm: None,
            rlf_on_rlc_max_retx: false,
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
        ue_mac.ra = crate::mac::ra::RaConfig::nr(slot);
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
            ul_proactive_grant_bytes: 0,
            ul_proactive_period: Duration::from_millis(5),
            ul_queue_limit_bytes: 0,
            ue_processing: slot.saturating_mul(2),
            enb_processing: slot.saturating_mul(2),
            ul_layers: 1,
            ideal_bsr: false,
            record_packet_series: false,
            sr_offset_per_ue: false,
            prach_detection_snr_db: PRACH_DETECTION_SNR_DB,
            prach_prbs: 12,
            rlf_search_delay: RLF_SEARCH_DELAY,
            rlm: None,
            rlf_on_rlc_max_retx: false,
        }
    }
}

/// Preamble detection threshold (dB, SNR over the preamble's bandwidth): about the SNR at which
/// a base station must detect a format-0 preamble with probability ≥ 99 % in AWGN with 2
/// receive antennas (TS 36.104 §8.4.2). LTE's Table 8.4.2.1-1 itself was not found (searched
/// 2026-11-27: docs, pages and code corpora, "8.4.2.1-1", "PRACH missed detection"); the
/// same preamble (L_RA = 839, 1.25 kHz, format 0) has −14.5 dB in NR's TS 38.104 V16.4 Table
/// 8.4.2.2-1 (−14.2 dB with the test tolerance, TS 38.141-1 Table 8.4.1.5-1), as NVIDIA
/// Aerial's PRACH performance tests (testPerformance_prach.m) transcribe them; LTE's ETU70 2 Rx
/// row is −8.0 dB (MathWorks LTE Toolbox, "PRACH Detection Conformance Test"). Like with like:
/// those SNRs are per resource element (signal and noise power in the same bandwidth), which
/// is what [`crate::radio::RadioEnvironment::prach_snr_db`] computes (received power over
/// noise over `prach_prbs` PRBs; 6 PRBs = 1.08 MHz against the preamble's 839 × 1.25 kHz:
/// 0.13 dB conservative), not Ec/N0 over the whole sequence, which is 10·log10 839 = 29.2 dB
/// higher. The AWGN figure is the right one because the slot's fast fading is applied to the
/// SNR explicitly (a fading-channel figure would count it twice). A hard threshold: the fast
/// fading of the slot makes detection near it random. Shared with NR (12 PRBs), where the
/// short formats' requirements are lower (B4, 2 Rx AWGN: −16.8 dB at 15 kHz).
pub const PRACH_DETECTION_SNR_DB: f64 = -14.0;

/// Cell search after a radio link failure: TS 36.133 §6.1.2's re-establishment delay for a
/// known cell without the system information and PRACH times, 50 ms + T_search 100 ms (the
/// UE keeps its cell's system information; the random access is modelled on its own).
pub const RLF_SEARCH_DELAY: Duration = Duration::from_millis(150);

impl RanConfig {
    /// Bytes PDCP and RLC add to each uplink IP packet, as the UE counts its buffer for a BSR
    /// (TS 36.321 §5.4.5: data available in PDCP and RLC) and as the uplink buffer's
    /// functions see a grant: the PDCP header plus a 3-byte RLC header estimate.
    pub fn ul_overhead_bytes(&self) -> u32 {
        self.pdcp.header_bytes() + 3
    }

    /// The smallest useful uplink transport block (bytes): a short BSR with its subheader
    /// (TS 36.321 §6.1.3.1, §6.1.2: 2 bytes), one MAC SDU subheader (§6.1.2: 2 bytes with a
    /// 7-bit L) and an RLC PDU with one data byte behind its fixed header (TS 36.322
    /// §6.2.1.3/§6.2.1.4: 2 bytes for a UMD PDU with a 10-bit SN or an AMD PDU; TS 38.322
    /// §6.2.2.3/§6.2.2.4 for NR, whose RLC PDU is a MAC subPDU of its own). A triggered
    /// regular or periodic BSR goes before data (TS 36.321 §5.4.3.1), so a grant below this
    /// carries a BSR and no data, or nothing. LTE: 2 + 2 + 2 + 1 = 7 bytes, the TBS of 3 PRBs
    /// at I_TBS 0 (TS 36.213 Table 7.1.7.2.1-1: 56 bits) and the floor of ns-3 LENA's uplink
    /// schedulers ("at least 3 rbg per flow … to ensure TxOpportunity >= 7 bytes").
    pub fn ul_min_useful_tbs(&self) -> u32 {
        use crate::rlc::RlcLayout;
        let rlc = &self.rlc;
        // The first piece of an SDU: LTE's fixed header (a segment of a new SDU is no AMD PDU
        // segment); NR's header of a first segment.
        let rlc_header = rlc
            .layout
            .data_header_bytes(rlc.mode, 1, 0, rlc.layout == RlcLayout::Lte);
        let nr_subpdu = if rlc.mac_subheader_per_pdu {
            crate::rlc::nr_mac_subheader_bytes(1)
        } else {
            0
        };
        crate::mac::ul::SHORT_BSR_BYTES
            + crate::mac::mux::mac_subheader_bytes(1)
            + nr_subpdu
            + rlc_header
            + 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rlc::RlcMode;

    #[test]
    fn smallest_useful_uplink_block() {
        let ms = Duration::from_millis(1);
        // LTE AM or UM (10-bit SN): BSR 2 + MAC subheader 2 + RLC header 2 + 1 data byte.
        let mut lte = RanConfig::lte(ms);
        assert_eq!(lte.ul_min_useful_tbs(), 7);
        lte.rlc.mode = RlcMode::Um;
        assert_eq!(lte.ul_min_useful_tbs(), 7);
        // NR AM, 18-bit SN (3-byte header), each RLC PDU a MAC subPDU of its own (+2).
        let nr = RanConfig::nr(Duration::from_micros(125));
        let per_pdu = if nr.rlc.mac_subheader_per_pdu { 2 } else { 0 };
        assert_eq!(nr.ul_min_useful_tbs(), 2 + 2 + per_pdu + 3 + 1);
    }
}
