//! The payload side-table: the bytes of packets from real hosts, kept beside the model while it
//! carries only their headers and lengths (the model's [`rantcp_wire::Packet::payload_id`]).
//!
//! A ring of `capacity` slots, each reused in turn (its buffer keeps its allocation, so the
//! steady state allocates nothing). An id names its slot (`id % capacity`) and is valid until
//! `capacity` newer packets have been stored: the model may drop, hold or duplicate a packet
//! without telling anyone, so slots are never freed explicitly, only overwritten. A packet
//! that stays in the model longer than that (more than `capacity` packets queued behind it)
//! finds its slot taken: [`PayloadStore::get`] says so, and the caller counts it.

/// Ring of packet payloads; ids start at 1 (0 means "no payload kept").
pub struct PayloadStore {
    slots: Vec<(u32, Vec<u8>)>,
    next: u32,
}

impl PayloadStore {
    /// A ring of `capacity` payloads (at least 1).
    pub fn new(capacity: usize) -> Self {
        PayloadStore {
            slots: (0..capacity.max(1)).map(|_| (0, Vec::new())).collect(),
            next: 1,
        }
    }

    /// Keep `bytes`; returns their id (never 0).
    #[inline]
    pub fn put(&mut self, bytes: &[u8]) -> u32 {
        let id = self.next;
        self.next = self.next.wrapping_add(1).max(1);
        let n = self.slots.len();
        let slot = &mut self.slots[id as usize % n];
        slot.0 = id;
        slot.1.clear();
        slot.1.extend_from_slice(bytes);
        id
    }

    /// The bytes stored under `id`, if they are still there.
    #[inline]
    pub fn get(&self, id: u32) -> Option<&[u8]> {
        if id == 0 {
            return None;
        }
        let slot = &self.slots[id as usize % self.slots.len()];
        (slot.0 == id).then_some(&slot.1[..])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_overwrite_after_capacity() {
        let mut s = PayloadStore::new(3);
        let a = s.put(b"a");
        let b = s.put(b"bb");
        assert_eq!((a, b), (1, 2));
        assert_eq!(s.get(a), Some(&b"a"[..]));
        assert_eq!(s.get(0), None);
        let c = s.put(b"ccc");
        let d = s.put(b"dddd"); // slot of `a` (4 % 3 == 1)
        assert_eq!((c, d), (3, 4));
        assert_eq!(s.get(a), None, "overwritten");
        assert_eq!(s.get(b), Some(&b"bb"[..]));
        assert_eq!(s.get(d), Some(&b"dddd"[..]));
        assert_eq!(s.get(7), None, "never stored");
    }

    #[test]
    fn id_zero_is_skipped_on_wrap() {
        let mut s = PayloadStore::new(4);
        s.next = u32::MAX;
        assert_eq!(s.put(b"x"), u32::MAX);
        assert_eq!(s.put(b"y"), 1);
        assert_eq!(s.get(u32::MAX), Some(&b"x"[..]));
    }
}
