//! The sender's per-segment record: the SACK scoreboard (RFC 6675 §3), the retransmission queue
//! and the per-packet delivery-rate state (draft-cheng-iccrg-delivery-rate-estimation §3.2) at
//! once.
//!
//! One [`Seg`] per transmitted data segment, in a `VecDeque` indexed from SND.UNA, with the
//! RFC 6675 "pipe" (SetPipe, §4) kept incrementally: every flag change goes through
//! [`Scoreboard::set_flags`], which adjusts `pipe` by the segment's change of contribution. The
//! SACKed ranges are kept separately, sorted and merged, so a SACK block touches only the
//! records in its uncovered gaps. Loss marking is RFC 6675 §4 IsLost (DupThresh SACKed segments
//! or more than (DupThresh − 1)·SMSS SACKed bytes above a hole), NewReno's "first unacked
//! segment" (RFC 6582 §3.2), the RTO's "everything un-SACKed" (RFC 6675 §5.1), and the optional
//! pre-RACK lost-retransmission rule.

use super::rack::RackScan;
use super::rate::{RateSampler, RsBuild};
use super::reno::RenoSacks;
use super::DUP_THRESH;
use rantcp_core::{Duration, Time};
use std::collections::VecDeque;

/// The segment is SACKed (RFC 6675 §3 scoreboard).
pub(super) const F_SACKED: u8 = 1;
/// The segment is deemed lost (IsLost, RFC 6675 §4; or RTO; or NewReno's first hole).
pub(super) const F_LOST: u8 = 2;
/// A retransmission of the segment is in flight (counts in pipe, RFC 6675 §4 SetPipe (b)).
pub(super) const F_RETRANS: u8 = 4;
/// The segment was retransmitted at least once (Karn, RFC 6298 §3).
pub(super) const F_EVER_RETRANS: u8 = 8;
/// Sent while application-limited (delivery-rate draft §3.2 P.is_app_limited).
pub(super) const F_APP_LIMITED: u8 = 16;

/// One transmitted data segment (sender side).
#[derive(Clone, Copy, Debug)]
pub(super) struct Seg {
    /// First byte, send-side position.
    pub start: u64,
    pub len: u32,
    pub flags: u8,
    /// Last (re)transmission time.
    pub sent: Time,
    /// Delivery-rate state at (re)transmission (draft §3.2): C.first_sent_time,
    /// C.delivered_time, C.delivered.
    pub first_sent: Time,
    pub delivered_time: Time,
    pub delivered: u64,
}

impl Seg {
    #[inline]
    pub fn end(&self) -> u64 {
        self.start + self.len as u64
    }
    /// Contribution to RFC 6675 "pipe" (SetPipe, §4): un-SACKed octets not deemed lost, plus
    /// retransmitted octets still outstanding.
    #[inline]
    pub fn in_flight(&self) -> u64 {
        if self.flags & F_SACKED != 0 {
            return 0;
        }
        let mut n = 0;
        if self.flags & F_LOST == 0 {
            n += self.len as u64; // (a) not IsLost
        }
        if self.flags & F_RETRANS != 0 {
            n += self.len as u64; // (b) retransmitted, still outstanding
        }
        n
    }
}

/// Everything one ACK newly delivered, gathered while the scoreboard is updated: the
/// delivery-rate sample under construction and RACK's per-ACK observations.
pub(super) struct Delivered<'a> {
    pub now: Time,
    pub rate: &'a mut RateSampler,
    pub rs: RsBuild,
    /// RACK's observations, when RACK is in use.
    pub rack: Option<RackScan>,
    /// The lowest end of a never-retransmitted segment delivered (wholly or in part), for
    /// F-RTO's `FLAG_ORIG_SACK_ACKED` (RFC 5682 §3.1 step 3.b).
    pub orig_min_end: Option<u64>,
}

impl Delivered<'_> {
    /// `bytes` of segment `s` were newly delivered (all of it, or the front of a segment an ACK
    /// ends inside).
    #[inline]
    fn segment(&mut self, s: &Seg, bytes: u64) {
        self.rate.on_delivered(self.now, s, bytes, &mut self.rs);
        if s.flags & F_EVER_RETRANS == 0 {
            let end = s.end();
            self.orig_min_end = Some(self.orig_min_end.map_or(end, |m| m.min(end)));
        }
        if let Some(r) = &mut self.rack {
            if bytes == s.len as u64 {
                r.on_delivered(s);
            }
        }
    }
}

/// What a cumulative ACK removed from the scoreboard.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct CumAck {
    /// Bytes newly acknowledged that had not been SACKed before.
    pub acked_bytes: u64,
    /// Segments the ACK removed whole (Linux `pkts_acked`).
    pub segs_acked: u32,
    /// Bytes of a trimmed front segment that now lies wholly in a SACKed range.
    pub newly_sacked: u64,
    /// RTT of the oldest newly acked never-retransmitted segment (Karn, RFC 6298 §3); with
    /// `strict_karn`, none if the ACK also covers retransmitted data (Linux
    /// `FLAG_RETRANS_DATA_ACKED`).
    pub rtt: Option<Duration>,
}

/// The RFC 6675 scoreboard. Positions are send-side (0 = ISS).
#[derive(Debug, Default)]
pub(super) struct Scoreboard {
    /// Transmitted segments from SND.UNA up, contiguous.
    pub segs: VecDeque<Seg>,
    /// RFC 6675 pipe, bytes.
    pub pipe: u64,
    /// Bytes of the segments marked SACKed.
    pub sacked_bytes: u64,
    /// Number of segments marked SACKed (RFC 8985 RACK.segs_sacked).
    pub sacked_segs: u32,
    /// SACKed ranges above SND.UNA, sorted, merged, `[start, end)` positions.
    pub sacked: Vec<(u64, u64)>,
    /// Every un-SACKed segment ending at or below this position is marked lost.
    pub lost_mark: u64,
    /// No lost, un-retransmitted segment starts below this position.
    pub rxt_hint: u64,
    /// Outstanding retransmissions as (segment start, send time, HighData + 1 when sent), in
    /// send order, hence sorted by the third field (lost-retransmission detection only).
    pub rtx_queue: VecDeque<(u64, Time, u64)>,
    /// Duplicate ACKs counted as delivered segments on a connection without SACK (reno.rs).
    pub reno: RenoSacks,
}

impl Scoreboard {
    /// Set and clear flags of the record at `idx`, keeping `pipe` in step.
    #[inline]
    pub fn set_flags(&mut self, idx: usize, set: u8, clear: u8) {
        let s = &mut self.segs[idx];
        let before = s.in_flight();
        let was_sacked = s.flags & F_SACKED != 0;
        s.flags = (s.flags | set) & !clear;
        let after = s.in_flight();
        self.pipe = self.pipe - before + after;
        if !was_sacked && s.flags & F_SACKED != 0 {
            self.sacked_bytes += s.len as u64;
            self.sacked_segs += 1;
        }
    }

    /// Record a newly transmitted segment (it enters pipe).
    #[inline]
    pub fn push(&mut self, s: Seg) {
        self.pipe += s.in_flight();
        self.segs.push_back(s);
    }

    /// Forget everything (connection closed).
    pub fn clear(&mut self) {
        self.segs.clear();
        self.pipe = 0;
        self.sacked_bytes = 0;
        self.sacked_segs = 0;
        self.reset_reno_sack();
    }

    /// Remove what the cumulative ACK `ack` covers (RFC 9293 §3.10.7.4; RFC 6675 §5 scoreboard
    /// update), feeding the delivery-rate sampler with every newly delivered record.
    /// `strict_karn`: no RTT sample from an ACK that also covers retransmitted data.
    #[inline]
    pub fn on_cumulative_ack(&mut self, ack: u64, d: &mut Delivered, strict_karn: bool) -> CumAck {
        let now = d.now;
        let mut out = CumAck::default();
        // Some of the data acknowledged was retransmitted (SACKed or not).
        let mut retrans_acked = false;
        while let Some(front) = self.segs.front().copied() {
            retrans_acked |= front.start < ack && front.flags & F_EVER_RETRANS != 0;
            if front.end() <= ack {
                self.segs.pop_front();
                self.pipe -= front.in_flight();
                out.segs_acked += 1;
                if front.flags & F_SACKED != 0 {
                    self.sacked_bytes -= front.len as u64;
                    self.sacked_segs -= 1;
                } else {
                    out.acked_bytes += front.len as u64;
                    d.segment(&front, front.len as u64);
                    // RFC 6298 §3 Karn: only never-retransmitted segments give samples;
                    // the oldest newly acked one is used (as Linux's seq_rtt), unless the
                    // ACK also covers retransmitted data (below).
                    if out.rtt.is_none() && front.flags & F_EVER_RETRANS == 0 {
                        out.rtt = Some(now.saturating_since(front.sent));
                    }
                }
            } else if front.start < ack {
                let cut = ack - front.start;
                let s = &mut self.segs[0];
                let before = s.in_flight();
                s.start = ack;
                s.len -= cut as u32;
                let after = s.in_flight();
                self.pipe = self.pipe - before + after;
                if front.flags & F_SACKED == 0 {
                    out.acked_bytes += cut;
                    d.segment(&front, cut);
                } else {
                    self.sacked_bytes -= cut;
                }
                break;
            } else {
                break;
            }
        }
        // Drop scoreboard ranges below SND.UNA.
        let n = self.sacked.partition_point(|&(_, e)| e <= ack);
        if n > 0 {
            self.sacked.drain(..n);
        }
        if let Some(first) = self.sacked.first_mut() {
            first.0 = first.0.max(ack);
        }
        // A front segment trimmed by an ACK inside it may now lie wholly in a SACKed range
        // (SACK blocks not on segment boundaries, e.g. from a split host).
        if let (Some(&(l, r)), Some(front)) = (self.sacked.first(), self.segs.front().copied()) {
            if front.flags & F_SACKED == 0 && front.start >= l && front.end() <= r {
                self.set_flags(0, F_SACKED, F_LOST | F_RETRANS);
                out.newly_sacked += front.len as u64;
                d.segment(&front, front.len as u64);
            }
        }
        self.lost_mark = self.lost_mark.max(ack);
        self.rxt_hint = self.rxt_hint.max(ack);
        while self.rtx_queue.front().is_some_and(|e| e.0 < ack) {
            self.rtx_queue.pop_front();
        }
        if strict_karn && retrans_acked {
            // Linux tcp_clean_rtx_queue: an ACK covering any retransmitted segment
            // (TCPCB_RETRANS) sets FLAG_RETRANS_DATA_ACKED and gives no seq_rtt sample, since
            // the ACK may have been sent when the retransmission filled the hole and the later
            // segments' samples would then count the repair time (ns-3 likewise takes none when
            // the oldest acked segment was resent). Timestamps still give one (RFC 7323 §4.1,
            // [`super::Endpoint::process_ack`]).
            out.rtt = None;
        }
        out
    }

    /// Apply one SACK block `[l, r)` (RFC 2018 §4, RFC 6675 §5), already clipped to
    /// [SND.UNA, HighData]; returns newly SACKed bytes.
    pub fn sack(&mut self, l: u64, r: u64, d: &mut Delivered) -> u64 {
        // Existing ranges overlapping or touching [l, r).
        let first = self.sacked.partition_point(|&(_, e)| e < l);
        let mut last = first;
        while last < self.sacked.len() && self.sacked[last].0 <= r {
            last += 1;
        }
        let ml = if last > first {
            self.sacked[first].0.min(l)
        } else {
            l
        };
        let mr = if last > first {
            self.sacked[last - 1].1.max(r)
        } else {
            r
        };
        // Walk only the uncovered gaps of [l, r), marking records fully inside [ml, mr).
        let mut newly = 0u64;
        let mut cur = l;
        for i in first..=last {
            let gap_end = if i < last { self.sacked[i].0.min(r) } else { r };
            if gap_end > cur {
                newly += self.mark_sacked_in(cur, gap_end, ml, mr, d);
            }
            if i < last {
                cur = cur.max(self.sacked[i].1);
            }
        }
        // Merge (no allocation once the Vec has grown).
        if last > first {
            self.sacked[first] = (ml, mr);
            if last > first + 1 {
                self.sacked.drain(first + 1..last);
            }
        } else {
            self.sacked.insert(first, (ml, mr));
        }
        newly
    }

    fn mark_sacked_in(&mut self, gl: u64, gr: u64, ml: u64, mr: u64, d: &mut Delivered) -> u64 {
        let mut idx = self.segs.partition_point(|s| s.end() <= gl);
        let mut newly = 0;
        while idx < self.segs.len() {
            let s = self.segs[idx];
            if s.start >= gr {
                break;
            }
            if s.flags & F_SACKED == 0 && s.start >= ml && s.end() <= mr {
                self.set_flags(idx, F_SACKED, F_LOST | F_RETRANS);
                newly += s.len as u64;
                d.segment(&s, s.len as u64);
            }
            idx += 1;
        }
        newly
    }

    /// RFC 6675 §4 IsLost: a segment is lost when DupThresh SACKed segments or more than
    /// (DupThresh − 1)·SMSS SACKed bytes lie above it. Returns bytes newly marked lost.
    pub fn mark_lost_by_sack(&mut self, smss: u32) -> u64 {
        let Some(&(_, top)) = self.sacked.last() else {
            return 0;
        };
        let n = self.segs.partition_point(|s| s.start < top);
        if n == 0 {
            return 0;
        }
        let mut idx = n; // exclusive
        let mut count = 0u32;
        let mut bytes = 0u64;
        let limit_bytes = (DUP_THRESH as u64 - 1) * smss as u64;
        let mut newly = 0u64;
        let mut threshold: Option<u64> = None;
        while idx > 0 {
            idx -= 1;
            let s = self.segs[idx];
            if s.end() <= self.lost_mark {
                break; // already evaluated: everything below is lost or SACKed
            }
            if s.flags & F_SACKED != 0 {
                if threshold.is_none() {
                    count += 1;
                    bytes += s.len as u64;
                    if count >= DUP_THRESH || bytes > limit_bytes {
                        threshold = Some(s.start);
                    }
                }
            } else if threshold.is_some() && s.flags & F_LOST == 0 {
                // A segment already resent by NextSeg rule 3 keeps its retransmission.
                self.set_flags(idx, F_LOST, 0);
                newly += s.len as u64;
                self.rxt_hint = self.rxt_hint.min(s.start);
            }
        }
        if let Some(t) = threshold {
            self.lost_mark = self.lost_mark.max(t);
        }
        newly
    }

    /// Lost-retransmission detection (Linux's pre-RACK `tcp_mark_lost_retrans`, in the spirit
    /// of RFC 6675 §4 IsLost): a retransmission is deemed lost again once more than
    /// (DupThresh − 1)·SMSS bytes sent after it (above HighData at its send time) are SACKed.
    /// The segment becomes eligible for NextSeg rule 1 again. Returns bytes newly lost.
    pub fn mark_lost_retransmissions(&mut self, smss: u32) -> u64 {
        let limit = (DUP_THRESH as u64 - 1) * smss as u64;
        let mut newly = 0;
        while let Some(&(start, sent, hi)) = self.rtx_queue.front() {
            let above: u64 = self
                .sacked
                .iter()
                .rev()
                .take_while(|&&(_, r)| r > hi)
                .map(|&(l, r)| r - l.max(hi))
                .sum();
            if above <= limit {
                break; // later entries have a higher HighData: none can qualify yet
            }
            self.rtx_queue.pop_front();
            let idx = self.segs.partition_point(|s| s.start < start);
            if idx < self.segs.len() {
                let s = self.segs[idx];
                // Only a still-outstanding, lost-marked retransmission sent at that time.
                if s.start == start
                    && s.sent == sent
                    && s.flags & (F_SACKED | F_LOST | F_RETRANS) == F_LOST | F_RETRANS
                {
                    self.set_flags(idx, 0, F_RETRANS);
                    newly += s.len as u64;
                    self.rxt_hint = self.rxt_hint.min(s.start);
                }
            }
        }
        newly
    }

    /// Mark the segment at SND.UNA lost (fast retransmit, RFC 5681 §3.2 step 3; RFC 6582
    /// partial ACK; RFC 6675 §5 step 4.3). Returns bytes newly marked.
    pub fn mark_first_lost(&mut self) -> u64 {
        let Some(s) = self.segs.front().copied() else {
            return 0;
        };
        if s.flags & F_SACKED != 0 {
            return 0;
        }
        let newly = if s.flags & F_LOST == 0 {
            s.len as u64
        } else {
            0
        };
        self.set_flags(0, F_LOST, F_RETRANS);
        self.lost_mark = self.lost_mark.max(s.end());
        self.rxt_hint = self.rxt_hint.min(s.start);
        newly
    }

    /// RFC 6675 §5.1 after an RTO: keep the SACKed marks, every other segment is lost and no
    /// retransmission is outstanding any more.
    pub fn mark_all_lost(&mut self, snd_una: u64, snd_max: u64) {
        for s in self.segs.iter_mut() {
            if s.flags & F_SACKED == 0 {
                s.flags = (s.flags | F_LOST) & !F_RETRANS;
            }
        }
        self.pipe = 0;
        self.rtx_queue.clear();
        self.lost_mark = snd_max;
        self.rxt_hint = snd_una;
    }

    /// A timeout is undone (Linux `tcp_undo_cwnd_reduction` with `unmark_loss`): no segment is
    /// lost any more. Retransmissions still outstanding keep counting in pipe beside their
    /// originals (Linux keeps `retrans_out`).
    pub fn unmark_lost(&mut self) {
        for idx in 0..self.segs.len() {
            if self.segs[idx].flags & F_LOST != 0 {
                self.set_flags(idx, 0, F_LOST);
            }
        }
        self.rxt_hint = self.lost_mark;
    }

    /// The record of the transmission sent at `sent` of the segment ending at `end`, if that
    /// segment is still outstanding and was not sent again since.
    #[inline]
    pub fn find_transmission(&self, end: u64, sent: Time) -> Option<usize> {
        let front = self.segs.front()?;
        if end <= front.start {
            return None; // cumulatively acknowledged
        }
        // Usually the transmission is of the oldest outstanding segment.
        let idx = if front.end() == end {
            0
        } else {
            self.segs.partition_point(|s| s.end() < end)
        };
        let s = self.segs.get(idx)?;
        (s.end() == end && s.sent == sent).then_some(idx)
    }

    /// Mark the segment at `idx` lost (RFC 8985 §6.2 Step 5: RACK; a retransmission lost again
    /// stops counting in pipe and becomes eligible for NextSeg rule 1). Returns bytes newly
    /// marked.
    pub fn mark_lost(&mut self, idx: usize) -> u64 {
        let s = self.segs[idx];
        if s.flags & F_SACKED != 0 || s.flags & (F_LOST | F_RETRANS) == F_LOST {
            return 0;
        }
        self.set_flags(idx, F_LOST, F_RETRANS);
        self.rxt_hint = self.rxt_hint.min(s.start);
        self.lost_mark = self.lost_mark.max(s.end());
        s.len as u64
    }

    /// RFC 8985 §6.3 RACK_mark_losses_on_RTO: at a timeout the segment at SND.UNA and every
    /// segment sent at least `age` ago (RACK.rtt + RACK.reo_wnd) is lost; later ones stay in
    /// flight (Linux tcp_timeout_mark_lost with RACK).
    pub fn mark_lost_on_rto_rack(&mut self, snd_una: u64, snd_max: u64, now: Time, age: Duration) {
        for idx in 0..self.segs.len() {
            let s = self.segs[idx];
            if s.flags & F_SACKED != 0 {
                continue;
            }
            if s.start <= snd_una || s.sent + age <= now {
                self.set_flags(idx, F_LOST, F_RETRANS);
            }
        }
        self.rtx_queue.clear();
        self.lost_mark = snd_max;
        self.rxt_hint = snd_una;
    }

    /// First lost, not yet retransmitted, un-SACKed segment (RFC 6675 §4 NextSeg rule 1).
    pub fn next_lost(&mut self) -> Option<usize> {
        if self.rxt_hint >= self.lost_mark {
            return None;
        }
        let mut idx = self.segs.partition_point(|s| s.end() <= self.rxt_hint);
        while idx < self.segs.len() {
            let s = &self.segs[idx];
            if s.start >= self.lost_mark {
                break;
            }
            if s.flags & (F_LOST | F_RETRANS | F_SACKED) == F_LOST {
                self.rxt_hint = s.start;
                return Some(idx);
            }
            idx += 1;
        }
        self.rxt_hint = self.lost_mark;
        None
    }

    /// RFC 6675 §4 NextSeg rule 3 candidate: the first un-SACKed, never-resent, not-lost
    /// segment at or above `from` (HighRxt) that ends at or below HighSACK.
    pub fn rescue_candidate(&self, from: u64) -> Option<usize> {
        let top = self.sacked.last()?.1;
        let mut idx = self.segs.partition_point(|s| s.end() <= from);
        while idx < self.segs.len() {
            let s = &self.segs[idx];
            if s.end() > top {
                return None;
            }
            if s.flags & (F_SACKED | F_RETRANS | F_LOST) == 0 {
                return Some(idx);
            }
            idx += 1;
        }
        None
    }

    /// The segment at `idx` was retransmitted at `now` with HighData + 1 = `high_data`;
    /// `track` records it for lost-retransmission detection.
    pub fn on_retransmit(&mut self, idx: usize, now: Time, high_data: u64, track: bool) {
        self.set_flags(idx, F_RETRANS | F_EVER_RETRANS, 0);
        if track {
            self.rtx_queue
                .push_back((self.segs[idx].start, now, high_data));
        }
    }

    /// Debug-build consistency check: pipe, ordering, SACK ranges. Skipped for large
    /// scoreboards so debug-build simulations stay usable.
    #[cfg(debug_assertions)]
    pub fn check(&self, snd_una: u64, snd_max: u64) {
        if self.segs.len() > 1024 {
            return;
        }
        let mut pipe = 0;
        let mut prev_end = snd_una;
        for (i, s) in self.segs.iter().enumerate() {
            pipe += s.in_flight();
            if i == 0 {
                assert!(s.start >= snd_una, "front record below SND.UNA");
            } else {
                assert_eq!(s.start, prev_end, "records not contiguous");
            }
            assert!(s.len > 0);
            prev_end = s.end();
            let in_ranges = self
                .sacked
                .iter()
                .any(|&(l, r)| s.start >= l && s.end() <= r);
            assert_eq!(
                s.flags & F_SACKED != 0,
                in_ranges,
                "SACKED flag vs ranges at {}",
                s.start
            );
        }
        assert_eq!(pipe, self.pipe, "pipe out of sync");
        let sacked = self.segs.iter().filter(|s| s.flags & F_SACKED != 0);
        assert_eq!(sacked.clone().count() as u32, self.sacked_segs);
        assert_eq!(sacked.map(|s| s.len as u64).sum::<u64>(), self.sacked_bytes);
        assert!(prev_end <= snd_max);
        for w in self.sacked.windows(2) {
            assert!(w[0].1 < w[1].0, "SACK ranges not merged");
        }
    }
}
