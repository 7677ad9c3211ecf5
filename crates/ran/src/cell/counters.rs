//! Counters of a [`super::RanDevice`]: per direction of a UE's bearer ([`LinkCounters`]),
//! per UE ([`UeCounters`], the flat view `summary.json` reads), and the α meter of the RAN
//! report (seed 001: packets delivered per scheduled slot).

use rantcp_wire::{Packet, Transport};

/// Counters of one direction of a UE's bearer (cumulative).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LinkCounters {
    /// New transport blocks and their bytes, HARQ retransmissions, blocks lost after the last
    /// retransmission, PRBs used (new + retransmissions).
    pub tb_new: u64,
    pub tb_bytes: u64,
    pub tb_retx: u64,
    pub tb_failed: u64,
    pub prbs: u64,
    /// IP packets into the bearer: downlink, from the core after [`rantcp_nf::Point::DlIngress`];
    /// uplink, from the UE into its uplink buffer. `acks_in`: the pure TCP ACKs among them.
    pub packets_in: u64,
    pub acks_in: u64,
    /// IP packets (bytes, pure TCP ACKs) the receiving RLC delivered.
    pub packets_delivered: u64,
    pub bytes_delivered: u64,
    pub acks_delivered: u64,
    /// Packets network functions dropped at this direction's points, and packets they emitted
    /// into it.
    pub nf_dropped: u64,
    pub nf_emitted: u64,
}

/// Per-UE counters (cumulative), both directions flattened for the outputs.
#[derive(Clone, Debug, Default)]
pub struct UeCounters {
    pub dl_tb_new: u64,
    pub dl_tb_bytes: u64,
    pub dl_tb_retx: u64,
    pub dl_tb_failed: u64,
    pub dl_prbs: u64,
    /// DL IP packets into the bearer (after the DlIngress functions), delivered to the UE.
    pub dl_packets_in: u64,
    pub dl_packets_delivered: u64,
    pub dl_bytes_delivered: u64,
    /// DL packets network functions dropped (DlIngress, DlEgress) and emitted towards the UE.
    pub dl_nf_dropped: u64,
    pub dl_nf_emitted: u64,
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
    pub ul_bytes_delivered: u64,
    /// UL packets network functions dropped at UlEgress.
    pub ul_nf_dropped: u64,
    /// SRs received at the eNB, BSRs decoded, UL grants issued (new data).
    pub sr_rx: u64,
    pub bsr_rx: u64,
    pub ul_grants: u64,
    /// Sum of the per-slot SINR samples taken at scheduling (for the mean).
    pub sinr_sum_db: f64,
    pub sinr_samples: u64,
    /// Uplink LTE packet delay (UE buffer arrival → delivered by the eNB's RLC): packets with
    /// a sample, sum and maximum (ns).
    pub ul_delay_n: u64,
    pub ul_delay_sum_ns: u128,
    pub ul_delay_max_ns: u64,
    /// Radio link failures (TS 36.331 §5.3.11.3; all causes), connection re-establishments
    /// completed, and re-establishment attempts whose random access failed.
    pub rlf: u64,
    pub reestablishments: u64,
    pub reestablishment_failures: u64,
    /// Of `rlf`: T310 expiries (radio link monitoring) and the UE's RLC at maxRetxThreshold;
    /// the rest were random access problems.
    pub rlf_rlm: u64,
    pub rlf_rlc_max_retx: u64,
}

/// Counters of a UE that belong to neither direction alone.
#[derive(Clone, Debug, Default)]
pub(super) struct UeOnlyCounters {
    /// Uplink LTE packet delay (UE buffer arrival → delivered by the eNB's RLC): packets,
    /// sum and maximum (ns).
    pub ul_delay_n: u64,
    pub ul_delay_sum_ns: u128,
    pub ul_delay_max_ns: u64,
    pub sr_rx: u64,
    pub bsr_rx: u64,
    pub ul_grants: u64,
    pub sinr_sum_db: f64,
    pub sinr_samples: u64,
    pub rlf: u64,
    pub reestablishments: u64,
    pub reestablishment_failures: u64,
    pub rlf_rlm: u64,
    pub rlf_rlc_max_retx: u64,
}

impl UeCounters {
    pub(super) fn from_parts(dl: &LinkCounters, ul: &LinkCounters, ue: &UeOnlyCounters) -> Self {
        UeCounters {
            dl_tb_new: dl.tb_new,
            dl_tb_bytes: dl.tb_bytes,
            dl_tb_retx: dl.tb_retx,
            dl_tb_failed: dl.tb_failed,
            dl_prbs: dl.prbs,
            dl_packets_in: dl.packets_in,
            dl_packets_delivered: dl.packets_delivered,
            dl_bytes_delivered: dl.bytes_delivered,
            dl_nf_dropped: dl.nf_dropped,
            dl_nf_emitted: dl.nf_emitted,
            ul_tb_new: ul.tb_new,
            ul_tb_bytes: ul.tb_bytes,
            ul_tb_retx: ul.tb_retx,
            ul_tb_failed: ul.tb_failed,
            ul_prbs: ul.prbs,
            ul_packets_in: ul.packets_in,
            ul_acks_in: ul.acks_in,
            ul_acks_delivered: ul.acks_delivered,
            ul_packets_delivered: ul.packets_delivered,
            ul_bytes_delivered: ul.bytes_delivered,
            ul_nf_dropped: ul.nf_dropped,
            sr_rx: ue.sr_rx,
            bsr_rx: ue.bsr_rx,
            ul_grants: ue.ul_grants,
            sinr_sum_db: ue.sinr_sum_db,
            sinr_samples: ue.sinr_samples,
            ul_delay_n: ue.ul_delay_n,
            ul_delay_sum_ns: ue.ul_delay_sum_ns,
            ul_delay_max_ns: ue.ul_delay_max_ns,
            rlf: ue.rlf,
            reestablishments: ue.reestablishments,
            reestablishment_failures: ue.reestablishment_failures,
            rlf_rlm: ue.rlf_rlm,
            rlf_rlc_max_retx: ue.rlf_rlc_max_retx,
        }
    }
}

/// A TCP segment without payload that carries only ACK (and possibly PSH): what seed 000's
/// uplink ACK counts count.
#[inline]
pub fn is_pure_ack(p: &Packet) -> bool {
    match &p.transport {
        Transport::Tcp(t) => p.payload_len == 0 && t.flags.0 & !0x08 == 0x10,
        Transport::Udp(_) | Transport::Icmp(_) => false,
    }
}

/// α of seed 001: downlink IP packets delivered per downlink slot in which the UE was
/// scheduled. Averaged over the last [`PerSlotRate::WINDOW`] to 2 × `WINDOW` such slots (two
/// checkpoints of the cumulative counts, so each update is O(1)); over all of them before
/// that.
#[derive(Clone, Debug, Default)]
pub(super) struct PerSlotRate {
    slots: u64,
    /// (slots, packets delivered) at the current and the previous checkpoint.
    cur: (u64, u64),
    prev: (u64, u64),
}

impl PerSlotRate {
    pub const WINDOW: u64 = 64;

    /// The UE was scheduled in one more slot; `delivered` packets so far.
    #[inline]
    pub fn scheduled(&mut self, delivered: u64) {
        self.slots += 1;
        if self.slots - self.cur.0 >= Self::WINDOW {
            self.prev = self.cur;
            self.cur = (self.slots, delivered);
        }
    }

    /// Packets per scheduled slot since the previous checkpoint (0 before any slot).
    pub fn rate(&self, delivered: u64) -> f64 {
        let slots = self.slots - self.prev.0;
        if slots == 0 {
            0.0
        } else {
            (delivered - self.prev.1) as f64 / slots as f64
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn per_slot_rate_averages_over_the_recent_window() {
        let mut r = PerSlotRate::default();
        assert_eq!(r.rate(0), 0.0);
        // 64 slots with 2 packets each, then 64 with 1 each.
        let mut d = 0;
        for _ in 0..64 {
            d += 2;
            r.scheduled(d);
        }
        assert_eq!(r.rate(d), 2.0);
        for _ in 0..64 {
            d += 1;
            r.scheduled(d);
        }
        // Checkpoints at slot 64 and 128: the window is the last 64 slots.
        assert_eq!(r.rate(d), 1.0);
        d += 3;
        r.scheduled(d);
        // 65 slots since the checkpoint at 64: 64 × 1 + 3.
        assert_eq!(r.rate(d), 67.0 / 65.0);
    }
}
