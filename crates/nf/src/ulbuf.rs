//! The UE's per-bearer uplink IP buffer: the packets waiting for an uplink grant before PDCP
//! (TS 36.323 §5.1.1 / TS 38.323 §5.2.1 "transmit operation": SDUs from upper layers), where
//! seed 000's ACK filter works.
//!
//! Packets are kept whole (every header field and option) with their 5-tuple. Each gets a
//! consecutive id at arrival; discarding any packet by id is O(1) (a tombstone that the head
//! skips), and a per-flow index gives a flow's packets in arrival order without scanning the
//! others. Tombstones and stale index entries are removed when they reach the head, so every
//! operation is amortised O(1) apart from iteration.
//!
//! The per-flow index serves network functions only, and hashing every packet twice is most
//! of a buffer's cost (about 850 instructions per packet): a buffer keeps it from
//! [`UlBuffer::index_flows`] on, which its owner calls when a function wants the buffer.
//! Without it [`UlBuffer::flow_iter`] scans the queue (same results).

use crate::FlowKey;
use rantcp_core::Time;
use rantcp_wire::Packet;
use std::collections::{HashMap, VecDeque};

/// One queued packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UlEntry {
    /// Arrival id (consecutive per buffer).
    pub id: u64,
    pub packet: Packet,
    pub flow: FlowKey,
    pub arrival: Time,
}

impl UlEntry {
    /// IP length, bytes.
    #[inline]
    pub fn bytes(&self) -> u32 {
        self.packet.len()
    }
}

/// Counters of one buffer (cumulative).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct UlBufferCounters {
    pub arrived: u64,
    /// Refused at arrival by the byte limit.
    pub dropped_full: u64,
    /// Discarded by network functions.
    pub discarded: u64,
    pub discarded_bytes: u64,
    /// Handed to PDCP.
    pub dequeued: u64,
}

/// A bearer's uplink IP buffer. See the module docs.
#[derive(Clone, Debug, Default)]
pub struct UlBuffer {
    /// `slots[k]` holds id `head_id + k`; `None` is a discarded packet.
    slots: VecDeque<Option<UlEntry>>,
    head_id: u64,
    live: usize,
    bytes: u64,
    /// Byte limit (0 = unlimited).
    pub limit_bytes: u64,
    /// Ids per flow in arrival order, once indexed; may hold ids already gone (skipped, then
    /// removed when they reach the front of their flow's list). Boxed: the owner moves the
    /// buffer out of its state for every event a function sees, and a buffer of at most 128
    /// bytes moves without a call to memcpy.
    #[allow(clippy::box_collection)] // the box is the point: see above
    by_flow: Option<Box<HashMap<FlowKey, VecDeque<u64>>>>,
    pub counters: UlBufferCounters,
}

impl UlBuffer {
    pub fn new(limit_bytes: u64) -> Self {
        UlBuffer {
            limit_bytes,
            ..Default::default()
        }
    }
    /// Packets queued.
    #[inline]
    pub fn len(&self) -> usize {
        self.live
    }
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.live == 0
    }
    /// Bytes queued (IP lengths).
    #[inline]
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// Keep a per-flow index from now on (built from the packets queued), so that
    /// [`UlBuffer::flow_iter`] does not scan. Idempotent.
    pub fn index_flows(&mut self) {
        if self.by_flow.is_some() {
            return;
        }
        let mut m: HashMap<FlowKey, VecDeque<u64>> = HashMap::new();
        for e in self.slots.iter().flatten() {
            m.entry(e.flow).or_default().push_back(e.id);
        }
        self.by_flow = Some(Box::new(m));
    }
    /// Is the per-flow index kept?
    pub fn is_indexed(&self) -> bool {
        self.by_flow.is_some()
    }

    /// Append `packet`; returns its id, or `None` if the byte limit refuses it.
    pub fn push(&mut self, now: Time, packet: Packet) -> Option<u64> {
        let bytes = packet.len() as u64;
        if self.limit_bytes > 0 && self.bytes + bytes > self.limit_bytes {
            self.counters.dropped_full += 1;
            return None;
        }
        let id = self.head_id + self.slots.len() as u64;
        let flow = FlowKey::of(&packet);
        self.slots.push_back(Some(UlEntry {
            id,
            packet,
            flow,
            arrival: now,
        }));
        if let Some(m) = &mut self.by_flow {
            m.entry(flow).or_default().push_back(id);
        }
        self.live += 1;
        self.bytes += bytes;
        self.counters.arrived += 1;
        Some(id)
    }

    /// The packet with id `id`, if still queued.
    #[inline]
    pub fn get(&self, id: u64) -> Option<&UlEntry> {
        let k = id.checked_sub(self.head_id)?;
        self.slots.get(k as usize)?.as_ref()
    }

    /// The oldest queued packet.
    #[inline]
    pub fn front(&self) -> Option<&UlEntry> {
        // The head is never a tombstone (see `trim_head`).
        self.slots.front().and_then(|s| s.as_ref())
    }

    /// Remove and return the oldest packet (it goes to PDCP).
    pub fn pop_front(&mut self) -> Option<UlEntry> {
        let e = self.slots.pop_front()??;
        self.head_id += 1;
        self.live -= 1;
        self.bytes -= e.bytes() as u64;
        self.counters.dequeued += 1;
        self.forget(e.flow, e.id);
        self.trim_head();
        Some(e)
    }

    /// A network function discards packet `id` (O(1)). Returns it, or `None` if it is gone.
    pub fn discard(&mut self, id: u64) -> Option<UlEntry> {
        let k = id.checked_sub(self.head_id)? as usize;
        let e = self.slots.get_mut(k)?.take()?;
        self.live -= 1;
        self.bytes -= e.bytes() as u64;
        self.counters.discarded += 1;
        self.counters.discarded_bytes += e.bytes() as u64;
        self.forget(e.flow, e.id);
        self.trim_head();
        Some(e)
    }

    /// Discard every packet for which `f` holds; returns how many.
    pub fn discard_where(&mut self, mut f: impl FnMut(&UlEntry) -> bool) -> usize {
        let ids: Vec<u64> = self.iter().filter(|e| f(e)).map(|e| e.id).collect();
        for &id in &ids {
            self.discard(id);
        }
        ids.len()
    }

    /// Queued packets, oldest first.
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = &UlEntry> + '_ {
        self.slots.iter().filter_map(|s| s.as_ref())
    }

    /// Queued packets of `flow`, oldest first (from the index if kept, else by a scan).
    pub fn flow_iter<'a>(
        &'a self,
        flow: &FlowKey,
    ) -> impl DoubleEndedIterator<Item = &'a UlEntry> + 'a {
        let flow = *flow;
        let indexed = self.by_flow.as_deref();
        let scan = if indexed.is_some() {
            0
        } else {
            self.slots.len()
        };
        indexed
            .and_then(|m| m.get(&flow))
            .into_iter()
            .flat_map(move |ids| ids.iter().filter_map(move |&id| self.get(id)))
            .chain(
                self.slots
                    .iter()
                    .take(scan)
                    .filter_map(|s| s.as_ref())
                    .filter(move |e| e.flow == flow),
            )
    }

    /// Ids of the queued packets of `flow`, oldest first (a copy, for discarding while
    /// walking).
    pub fn flow_ids(&self, flow: &FlowKey) -> Vec<u64> {
        self.flow_iter(flow).map(|e| e.id).collect()
    }

    /// Drop `id` from its flow's index if it is at the front, with any gone ids behind it.
    fn forget(&mut self, flow: FlowKey, id: u64) {
        let Some(m) = &mut self.by_flow else {
            return;
        };
        let Some(ids) = m.get_mut(&flow) else {
            return;
        };
        if ids.front() == Some(&id) {
            ids.pop_front();
            while let Some(&f) = ids.front() {
                let k = f.wrapping_sub(self.head_id) as usize;
                if f >= self.head_id && self.slots.get(k).is_some_and(|s| s.is_some()) {
                    break;
                }
                ids.pop_front();
            }
            if ids.is_empty() {
                m.remove(&flow);
            }
        }
    }

    /// Remove tombstones at the head so that `front()` is a live packet.
    fn trim_head(&mut self) {
        while let Some(None) = self.slots.front() {
            self.slots.pop_front();
            self.head_id += 1;
        }
    }
}
