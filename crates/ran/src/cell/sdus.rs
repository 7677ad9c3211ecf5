//! The IP packets beside one direction's RLC SDUs. RLC handles SDUs as ids and lengths
//! (`crate::rlc`); the sending node keeps each packet here from the moment RLC accepts its SDU
//! until the peer RLC delivers that id (TS 36.322 §5.1.3.2.3 / TS 38.322 §5.2.3.2.3: in-order
//! delivery to the upper layer) or the SDU is purged or lost.
//!
//! Packets are kept in the order RLC sends their SDUs: RLC's queue order, where an SDU queued
//! with `front` sits ahead of every SDU no byte of which has been sent. So the store's tail is
//! exactly RLC's unsent SDUs, and with in-order delivery an id delivered means every packet
//! ahead of it that is still here was lost (an RLC UM gap): those are dropped on the way.
//! NR UM delivers out of order (TS 38.322 §5.2.2.2); there the owner drops lost SDUs by id
//! ([`SduStore::forget`]) from what RLC reports and from transport blocks that HARQ gave up.

use rantcp_wire::Packet;
use std::collections::VecDeque;

/// See the module docs.
#[derive(Clone, Debug)]
pub(super) struct SduStore {
    q: VecDeque<(u64, Packet)>,
    in_order: bool,
}

impl SduStore {
    /// A store for an RLC entity that delivers in order (`in_order`) or not (NR UM).
    pub fn new(in_order: bool) -> Self {
        SduStore {
            q: VecDeque::new(),
            in_order,
        }
    }

    #[inline]
    pub fn in_order(&self) -> bool {
        self.in_order
    }

    /// RLC queued SDU `id` at its tail.
    #[inline]
    pub fn push(&mut self, id: u64, p: Packet) {
        self.q.push_back((id, p));
    }

    /// RLC queued SDU `id` ahead of its `unsent` SDUs no byte of which has been sent (counted
    /// before the insertion).
    pub fn insert_before_unsent(&mut self, unsent: usize, id: u64, p: Packet) {
        self.q.insert(self.q.len() - unsent, (id, p));
    }

    /// The peer RLC delivered SDU `id`: its packet. With in-order delivery the packets ahead
    /// of it are dropped (lost). `None` if `id` is not here.
    #[inline]
    pub fn take(&mut self, id: u64) -> Option<Packet> {
        if let Some(&(i, p)) = self.q.front() {
            if i == id {
                self.q.pop_front();
                return Some(p);
            }
        }
        let k = self.q.iter().position(|&(i, _)| i == id)?;
        if self.in_order {
            self.q.drain(..k);
            self.q.pop_front().map(|(_, p)| p)
        } else {
            self.q.remove(k).map(|(_, p)| p)
        }
    }

    /// SDU `id` will never be delivered: drop its packet (no-op if it is gone).
    pub fn forget(&mut self, id: u64) {
        if let Some(k) = self.q.iter().position(|&(i, _)| i == id) {
            self.q.remove(k);
        }
    }

    /// Every packet still here, in sending order (the store is left empty).
    pub fn drain(&mut self) -> std::collections::vec_deque::Drain<'_, (u64, Packet)> {
        self.q.drain(..)
    }

    /// The packets of the last `unsent` entries (RLC's unsent SDUs), oldest first.
    pub fn unsent(&self, unsent: usize) -> impl Iterator<Item = &(u64, Packet)> + '_ {
        self.q.range(self.q.len() - unsent..)
    }

    /// Remove the entries with ids in `sorted_ids` among the last `unsent` ones.
    pub fn remove_unsent(&mut self, unsent: usize, sorted_ids: &[u64]) {
        let start = self.q.len() - unsent;
        let mut k = 0;
        self.q.retain(|(i, _)| {
            k += 1;
            k <= start || sorted_ids.binary_search(i).is_err()
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rantcp_wire::{Ipv4Header, UdpHeader};
    use std::net::Ipv4Addr;

    fn pkt(n: u16) -> Packet {
        Packet::udp(
            Ipv4Header::new(Ipv4Addr::new(10, 0, 0, 1), Ipv4Addr::new(10, 1, 0, 1)),
            UdpHeader {
                src_port: n,
                dst_port: 9,
            },
            100,
        )
    }
    fn ids(s: &SduStore) -> Vec<u64> {
        s.q.iter().map(|e| e.0).collect()
    }

    #[test]
    fn in_order_take_drops_the_lost_ones_ahead() {
        let mut s = SduStore::new(true);
        for id in 0..5 {
            s.push(id, pkt(id as u16));
        }
        assert_eq!(s.take(0).unwrap(), pkt(0));
        // 1 and 2 were lost: delivering 3 drops them.
        assert_eq!(s.take(3).unwrap(), pkt(3));
        assert_eq!(ids(&s), vec![4]);
        assert!(s.take(1).is_none());
        assert_eq!(ids(&s), vec![4]);
    }

    #[test]
    fn out_of_order_take_keeps_the_others() {
        let mut s = SduStore::new(false);
        for id in 0..4 {
            s.push(id, pkt(id as u16));
        }
        assert_eq!(s.take(2).unwrap(), pkt(2));
        assert_eq!(s.take(0).unwrap(), pkt(0));
        assert_eq!(ids(&s), vec![1, 3]);
        s.forget(1);
        s.forget(7);
        assert_eq!(ids(&s), vec![3]);
    }

    #[test]
    fn front_insertion_goes_ahead_of_the_unsent_tail() {
        let mut s = SduStore::new(true);
        for id in 0..4 {
            s.push(id, pkt(id as u16));
        }
        // RLC has sent 0 and 1; 2 and 3 are unsent.
        s.insert_before_unsent(2, 10, pkt(10));
        assert_eq!(ids(&s), vec![0, 1, 10, 2, 3]);
        assert_eq!(s.unsent(3).map(|e| e.0).collect::<Vec<_>>(), vec![10, 2, 3]);
        s.remove_unsent(3, &[0, 2]);
        assert_eq!(ids(&s), vec![0, 1, 10, 3]);
        // Delivery in RLC's order: 10 before 2 and 3 is not a loss of 2 or 3.
        assert_eq!(s.take(0).unwrap(), pkt(0));
        assert_eq!(s.take(1).unwrap(), pkt(1));
        assert_eq!(s.take(10).unwrap(), pkt(10));
        assert_eq!(ids(&s), vec![3]);
    }
}
