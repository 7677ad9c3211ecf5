//! The event queue: a binary min-heap keyed by `(time, insertion sequence)`.
//!
//! Equal-time events pop in the order they were pushed, which is what makes a run
//! reproducible independent of heap internals (design.md §3).

use crate::Time;
use std::cmp::Ordering;
use std::collections::BinaryHeap;

struct Entry<E> {
    time: Time,
    seq: u64,
    event: E,
}

impl<E> PartialEq for Entry<E> {
    fn eq(&self, o: &Self) -> bool {
        self.time == o.time && self.seq == o.seq
    }
}
impl<E> Eq for Entry<E> {}
impl<E> PartialOrd for Entry<E> {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl<E> Ord for Entry<E> {
    /// Reversed so that `BinaryHeap` (a max-heap) pops the earliest entry first.
    #[inline]
    fn cmp(&self, o: &Self) -> Ordering {
        o.time.cmp(&self.time).then_with(|| o.seq.cmp(&self.seq))
    }
}

/// A deterministic discrete-event queue.
pub struct EventQueue<E> {
    heap: BinaryHeap<Entry<E>>,
    seq: u64,
    now: Time,
    popped: u64,
}

impl<E> Default for EventQueue<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E> EventQueue<E> {
    pub fn new() -> Self {
        EventQueue {
            heap: BinaryHeap::with_capacity(1024),
            seq: 0,
            now: Time::ZERO,
            popped: 0,
        }
    }
    /// The time of the event last popped (the simulation clock).
    #[inline]
    pub fn now(&self) -> Time {
        self.now
    }
    /// Schedule `event` at `time`. Scheduling in the past is a model bug.
    #[inline]
    pub fn schedule(&mut self, time: Time, event: E) {
        debug_assert!(
            time >= self.now,
            "event scheduled in the past: {time} < {}",
            self.now
        );
        let seq = self.seq;
        self.seq += 1;
        self.heap.push(Entry { time, seq, event });
    }
    /// Take the next insertion sequence number without scheduling anything yet: the event it
    /// is for goes in later with [`EventQueue::schedule_reserved`] and pops exactly where
    /// [`EventQueue::schedule`] at this moment would have put it. A source whose events are
    /// already in `(time, sequence)` order (a link's arrivals, which leave in the order they
    /// were sent) keeps only its earliest in the heap and the rest beside it, so the heap stays
    /// small while the order of every pop is unchanged.
    #[inline]
    pub fn reserve(&mut self) -> u64 {
        let seq = self.seq;
        self.seq += 1;
        seq
    }
    /// Schedule `event` at `time` under `seq`, a number [`EventQueue::reserve`] gave. It must
    /// go in before any event that orders after `(time, seq)` pops: e.g. when the previous
    /// event of its ordered source pops.
    #[inline]
    pub fn schedule_reserved(&mut self, time: Time, seq: u64, event: E) {
        debug_assert!(seq < self.seq, "sequence number {seq} was not reserved");
        debug_assert!(
            time >= self.now,
            "event scheduled in the past: {time} < {}",
            self.now
        );
        self.heap.push(Entry { time, seq, event });
    }
    /// Pop the earliest event if it is at or before `until`, advancing the clock.
    #[inline]
    pub fn pop_until(&mut self, until: Time) -> Option<(Time, E)> {
        if self.heap.peek()?.time > until {
            return None;
        }
        let e = self.heap.pop()?;
        self.now = e.time;
        self.popped += 1;
        Some((e.time, e.event))
    }
    /// Time of the next event, if any.
    #[inline]
    pub fn peek_time(&self) -> Option<Time> {
        self.heap.peek().map(|e| e.time)
    }
    /// Number of events executed so far.
    pub fn events_executed(&self) -> u64 {
        self.popped
    }
    pub fn len(&self) -> usize {
        self.heap.len()
    }
    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn equal_times_pop_in_insertion_order() {
        let mut q = EventQueue::new();
        q.schedule(Time(10), 'a');
        q.schedule(Time(5), 'b');
        q.schedule(Time(10), 'c');
        q.schedule(Time(5), 'd');
        let order: Vec<char> = std::iter::from_fn(|| q.pop_until(Time::MAX).map(|x| x.1)).collect();
        assert_eq!(order, vec!['b', 'd', 'a', 'c']);
        assert_eq!(q.now(), Time(10));
        assert_eq!(q.events_executed(), 4);
    }
    #[test]
    fn reserved_events_pop_where_scheduling_them_then_would_have() {
        // Two queues fed the same events: one schedules each at once, the other reserves the
        // sequence of 'b' and 'd' (an ordered source: b then d) and inserts each late, d only
        // once b has popped.
        let mut now = EventQueue::new();
        let mut late = EventQueue::new();
        now.schedule(Time(10), 'a');
        late.schedule(Time(10), 'a');
        now.schedule(Time(10), 'b');
        let sb = late.reserve();
        now.schedule(Time(20), 'c');
        late.schedule(Time(20), 'c');
        now.schedule(Time(20), 'd');
        let sd = late.reserve();
        now.schedule(Time(20), 'e');
        late.schedule(Time(20), 'e');
        late.schedule_reserved(Time(10), sb, 'b');
        let a: Vec<char> = std::iter::from_fn(|| now.pop_until(Time::MAX).map(|x| x.1)).collect();
        let mut b = Vec::new();
        while let Some((_, e)) = late.pop_until(Time::MAX) {
            if e == 'b' {
                late.schedule_reserved(Time(20), sd, 'd');
            }
            b.push(e);
        }
        assert_eq!(a, vec!['a', 'b', 'c', 'd', 'e']);
        assert_eq!(b, a);
        assert_eq!(late.events_executed(), 5);
    }
    #[test]
    fn pop_until_respects_horizon() {
        let mut q = EventQueue::new();
        q.schedule(Time(10), 1);
        q.schedule(Time(20), 2);
        assert_eq!(q.pop_until(Time(15)), Some((Time(10), 1)));
        assert_eq!(q.pop_until(Time(15)), None);
        assert_eq!(q.len(), 1);
    }
}
