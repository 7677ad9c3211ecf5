//! Packet data convergence protocol, reduced to what the simulator needs: header overhead,
//! sequence-number assignment and optional in-order delivery (TS 36.323 §6.2.3 / §5.1;
//! TS 38.323 §6.2.2.1 / §5.2.2). No ciphering, integrity or header compression.
//!
//! * LTE data PDU for DRBs with the 12-bit SN (TS 36.323 §6.2.3): 2-byte header.
//! * NR data PDU for DRBs with the 18-bit SN (TS 38.323 §6.2.2.2): 3-byte header
//!   (12-bit SN variant: 2 bytes).
//!
//! Sans-IO: [`PdcpEntity::handle_sdu`] returns the PDU (SN and size) to hand to RLC;
//! [`PdcpEntity::handle_pdu`] takes a PDU delivered by RLC and returns, through
//! [`PdcpEntity::pop_delivered`], the SDU ids for the upper layer (in SN order when
//! `in_order` is set, with a reordering timer `t_reordering` for gaps, TS 38.323 §5.2.2.2).

use rantcp_core::{Duration, Time};
use std::collections::BTreeMap;
use std::collections::VecDeque;

/// PDCP header layout.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PdcpSnSize {
    /// LTE DRB, 12-bit SN: 2-byte header.
    Lte12,
    /// NR DRB, 12-bit SN: 2-byte header.
    Nr12,
    /// NR DRB, 18-bit SN: 3-byte header.
    Nr18,
}

impl PdcpSnSize {
    /// Header bytes of a data PDU.
    pub fn header_bytes(self) -> u32 {
        match self {
            PdcpSnSize::Lte12 | PdcpSnSize::Nr12 => 2,
            PdcpSnSize::Nr18 => 3,
        }
    }
}

/// Configuration.
#[derive(Clone, Debug)]
pub struct PdcpConfig {
    pub sn_size: PdcpSnSize,
    /// Deliver SDUs in SN order (holding later ones until gaps fill or `t_reordering` expires).
    pub in_order: bool,
    /// t-Reordering (NR) for in-order delivery; `Duration::MAX` = wait forever.
    pub t_reordering: Duration,
}

impl Default for PdcpConfig {
    fn default() -> Self {
        PdcpConfig {
            sn_size: PdcpSnSize::Lte12,
            in_order: false,
            t_reordering: Duration::from_millis(100),
        }
    }
}

/// A PDCP data PDU descriptor: the SDU it carries, its SN (COUNT) and size with header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PdcpPdu {
    pub sdu_id: u64,
    /// COUNT (unbounded; the on-air SN is its low bits).
    pub sn: u64,
    /// SDU bytes + PDCP header.
    pub bytes: u32,
}

/// Counters.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PdcpCounters {
    pub sdus_tx: u64,
    pub header_bytes_tx: u64,
    pub pdus_rx: u64,
    pub delivered: u64,
    pub duplicates: u64,
    pub reordering_expiries: u64,
}

/// One PDCP entity (one bearer at one node), both directions.
#[derive(Debug)]
pub struct PdcpEntity {
    pub cfg: PdcpConfig,
    tx_next: u64,
    rx_deliv: u64,
    reorder: BTreeMap<u64, u64>,
    t_reordering: Option<Time>,
    delivered: VecDeque<u64>,
    counters: PdcpCounters,
}

impl PdcpEntity {
    pub fn new(cfg: PdcpConfig) -> Self {
        PdcpEntity {
            cfg,
            tx_next: 0,
            rx_deliv: 0,
            reorder: BTreeMap::new(),
            t_reordering: None,
            delivered: VecDeque::new(),
            counters: PdcpCounters::default(),
        }
    }

    /// An SDU (IP packet) of `bytes` from the upper layer: assigns the next SN (TS 36.323
    /// §5.1.1 / TS 38.323 §5.2.1) and returns the PDU for RLC.
    pub fn handle_sdu(&mut self, sdu_id: u64, bytes: u32) -> PdcpPdu {
        let sn = self.tx_next;
        self.tx_next += 1;
        let h = self.cfg.sn_size.header_bytes();
        self.counters.sdus_tx += 1;
        self.counters.header_bytes_tx += h as u64;
        PdcpPdu {
            sdu_id,
            sn,
            bytes: bytes + h,
        }
    }

    /// A PDU delivered by RLC.
    pub fn handle_pdu(&mut self, now: Time, sn: u64, sdu_id: u64) {
        self.counters.pdus_rx += 1;
        if !self.cfg.in_order {
            self.delivered.push_back(sdu_id);
            self.counters.delivered += 1;
            return;
        }
        if sn < self.rx_deliv || self.reorder.contains_key(&sn) {
            self.counters.duplicates += 1;
            return;
        }
        self.reorder.insert(sn, sdu_id);
        self.flush_in_order();
        if self.reorder.is_empty() {
            self.t_reordering = None;
        } else if self.t_reordering.is_none() {
            self.t_reordering = Some(now + self.cfg.t_reordering);
        }
    }

    fn flush_in_order(&mut self) {
        while let Some(id) = self.reorder.remove(&self.rx_deliv) {
            self.delivered.push_back(id);
            self.counters.delivered += 1;
            self.rx_deliv += 1;
        }
    }

    /// Next SDU id for the upper layer.
    pub fn pop_delivered(&mut self) -> Option<u64> {
        self.delivered.pop_front()
    }
    pub fn poll_timeout(&self) -> Option<Time> {
        self.t_reordering
    }
    /// t-Reordering expiry: deliver everything held up to the next gap (TS 38.323 §5.2.2.4).
    pub fn handle_timeout(&mut self, now: Time) {
        if !matches!(self.t_reordering, Some(t) if t <= now) {
            return;
        }
        self.t_reordering = None;
        self.counters.reordering_expiries += 1;
        if let Some((&first, _)) = self.reorder.iter().next() {
            self.rx_deliv = first;
            self.flush_in_order();
        }
        if !self.reorder.is_empty() {
            self.t_reordering = Some(now + self.cfg.t_reordering);
        }
    }
    pub fn counters(&self) -> &PdcpCounters {
        &self.counters
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_pdcp_header_and_sn() {
        let mut p = PdcpEntity::new(PdcpConfig::default());
        assert_eq!(
            p.handle_sdu(10, 1500),
            PdcpPdu {
                sdu_id: 10,
                sn: 0,
                bytes: 1502
            }
        );
        assert_eq!(
            p.handle_sdu(11, 40),
            PdcpPdu {
                sdu_id: 11,
                sn: 1,
                bytes: 42
            }
        );
        let mut n = PdcpEntity::new(PdcpConfig {
            sn_size: PdcpSnSize::Nr18,
            ..Default::default()
        });
        assert_eq!(n.handle_sdu(1, 1400).bytes, 1403);
        assert_eq!(p.counters().header_bytes_tx, 4);
    }

    #[test]
    fn test_pdcp_in_order_with_reordering_timer() {
        let t = Time::from_millis;
        let mut p = PdcpEntity::new(PdcpConfig {
            in_order: true,
            t_reordering: Duration::from_millis(10),
            ..Default::default()
        });
        p.handle_pdu(t(1), 0, 100);
        p.handle_pdu(t(2), 2, 102);
        p.handle_pdu(t(3), 3, 103);
        assert_eq!(p.pop_delivered(), Some(100));
        assert_eq!(p.pop_delivered(), None);
        assert_eq!(p.poll_timeout(), Some(t(12)));
        p.handle_pdu(t(4), 0, 100); // duplicate
        assert_eq!(p.counters().duplicates, 1);
        p.handle_timeout(t(12)); // SN 1 given up
        assert_eq!(
            std::iter::from_fn(|| p.pop_delivered()).collect::<Vec<_>>(),
            vec![102, 103]
        );
        assert_eq!(p.poll_timeout(), None);
        p.handle_pdu(t(13), 1, 101); // too late
        assert_eq!(p.pop_delivered(), None);
        p.handle_pdu(t(14), 4, 104);
        assert_eq!(p.pop_delivered(), Some(104));
    }
}
