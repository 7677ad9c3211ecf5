//! Linux's loss recovery on a connection without SACK ("reno" in Linux's terms), used by the
//! Linux stack ([`super::CwndRules::Linux`]) when SACK was not negotiated, in place of RFC 6582's
//! window inflation.
//!
//! Linux emulates SACK: each duplicate ACK counts as one more segment that reached the receiver
//! (`tp->sacked_out`, `tcp_add_reno_sack`), so the data in flight, `tcp_packets_in_flight` =
//! packets_out − sacked_out − lost_out + retrans_out, falls by a segment per duplicate ACK, and
//! the window in fast recovery is set by PRR (`tcp_cwnd_reduction`, RFC 6937) from those
//! deliveries, as with SACK. A cumulative ACK is taken to cover one hole and, for the rest,
//! segments already counted by duplicate ACKs (`tcp_remove_reno_sacks`); the count is capped so
//! that at least one hole stays outstanding (`tcp_limit_reno_sacked`), and exceeding the cap is
//! taken as reordering (`tcp_check_reno_reordering`), which raises the duplicate-ACK threshold
//! (`tp->reordering`). The segment at SND.UNA is marked lost once `reordering` duplicate ACKs
//! are counted, and on every ACK that advances SND.UNA in recovery (`tcp_newreno_mark_lost`).
//! RACK and TLP do not run without SACK (`tcp_identify_packet_loss` takes the NewReno branch;
//! `tcp_schedule_loss_probe` requires SACK).
//!
//! Here the count is kept in segments, as Linux does, and turned into bytes at SMSS each
//! ([`Scoreboard::in_flight`]).

use super::scoreboard::{Scoreboard, F_LOST};
use super::{CwndRules, Endpoint, DUP_THRESH};

/// Linux `sysctl_tcp_max_reordering` (default 300): the highest duplicate-ACK threshold.
pub const MAX_REORDERING: u32 = 300;

/// The emulated SACK state of a connection without SACK.
#[derive(Clone, Copy, Debug)]
pub(super) struct RenoSacks {
    /// Duplicate ACKs counted as delivered segments (Linux `sacked_out` without SACK).
    pub sacked: u32,
    /// The duplicate-ACK threshold (Linux `tp->reordering`; starts at `TCP_FASTRETRANS_THRESH`).
    pub reordering: u32,
}

impl Default for RenoSacks {
    fn default() -> Self {
        RenoSacks {
            sacked: 0,
            reordering: DUP_THRESH,
        }
    }
}

impl Scoreboard {
    /// Data in flight, bytes: RFC 6675 pipe less the segments duplicate ACKs reported delivered
    /// on a connection without SACK (Linux `tcp_packets_in_flight`); pipe itself otherwise.
    #[inline]
    pub fn in_flight(&self, smss: u32) -> u64 {
        self.pipe
            .saturating_sub(self.reno.sacked as u64 * smss as u64)
    }

    /// Segments marked lost (Linux `lost_out`). Every lost segment ends at or below
    /// `lost_mark`, so only those are looked at.
    fn lost_segs(&self) -> u32 {
        self.segs
            .iter()
            .take_while(|s| s.end() <= self.lost_mark)
            .filter(|s| s.flags & F_LOST != 0)
            .count() as u32
    }

    /// Linux `tcp_limit_reno_sacked`: duplicate ACKs cannot have reported more segments than
    /// are outstanding beside the holes (at least one). Returns whether the count was cut.
    fn limit_reno_sacked(&mut self) -> bool {
        if self.reno.sacked == 0 {
            return false; // holes ≤ packets_out
        }
        let packets_out = self.segs.len() as u32;
        let holes = self.lost_segs().max(1).min(packets_out);
        if self.reno.sacked + holes > packets_out {
            self.reno.sacked = packets_out - holes;
            return true;
        }
        false
    }

    /// Linux `tcp_check_reno_reordering`: more duplicate ACKs than the outstanding segments
    /// explain is reordering; the threshold becomes the flight (+ `addend`).
    fn check_reno_reordering(&mut self, addend: u32) {
        if self.limit_reno_sacked() {
            let packets_out = self.segs.len() as u32;
            self.reno.reordering = (packets_out + addend).min(MAX_REORDERING);
        }
    }

    /// Linux `tcp_add_reno_sack`: `dupacks` duplicate ACKs arrived. Returns the segments they
    /// newly report delivered (Linux `tcp_count_delivered`).
    pub fn add_reno_sack(&mut self, dupacks: u32) -> u32 {
        if dupacks == 0 {
            return 0;
        }
        let prior = self.reno.sacked;
        self.reno.sacked += dupacks;
        self.check_reno_reordering(0);
        self.reno.sacked.saturating_sub(prior)
    }

    /// Linux `tcp_remove_reno_sacks`, after a cumulative ACK removed `acked` segments: one of
    /// them filled a hole, the others had been counted by duplicate ACKs. Returns the segments
    /// the ACK newly delivers: max(acked − sacked, 1) (none when `acked` is 0).
    pub fn remove_reno_sacks(&mut self, acked: u32) -> u32 {
        let mut delivered = 0;
        if acked > 0 {
            let eaten = (acked - 1).min(self.reno.sacked);
            self.reno.sacked -= eaten;
            delivered = acked - eaten;
        }
        self.check_reno_reordering(acked);
        delivered
    }

    /// Linux `tcp_check_sack_reordering` as `tcp_try_undo_partial` calls it without SACK: an
    /// ACK from `low` to `snd_una` filled by a delayed original (timestamps) shows reordering
    /// up to FACK, which without SACK is SND.NXT while duplicate ACKs are counted
    /// (`tcp_highest_sack_seq` finds no SACKed segment) and SND.UNA otherwise; a degree above
    /// the threshold raises it to that many segments.
    pub fn reno_delayed_fill(&mut self, low: u64, snd_una: u64, snd_nxt: u64, smss: u32) {
        let fack = if self.reno.sacked > 0 {
            snd_nxt
        } else {
            snd_una
        };
        let mss = smss.max(1) as u64;
        let metric = fack.saturating_sub(low);
        if metric > self.reno.reordering as u64 * mss {
            self.reno.reordering = metric.div_ceil(mss).min(MAX_REORDERING as u64) as u32;
        }
    }

    /// Linux `tcp_reset_reno_sack`.
    #[inline]
    pub fn reset_reno_sack(&mut self) {
        self.reno.sacked = 0;
    }

    /// Linux `tcp_newreno_mark_lost`: the segment at SND.UNA is lost (fast retransmit, or a
    /// partial ACK in recovery), unless already marked. Returns bytes newly marked.
    pub fn newreno_mark_lost(&mut self) -> u64 {
        match self.segs.front() {
            Some(s) if s.flags & F_LOST == 0 => self.mark_first_lost(),
            _ => 0,
        }
    }
}

impl Endpoint {
    /// Linux's SACK emulation is in use: the Linux stack on a connection without SACK.
    #[inline]
    pub(super) fn reno_emulation(&self) -> bool {
        !self.sack_ok && self.cfg.cwnd_rules == CwndRules::Linux
    }

    /// Data in flight, bytes ([`Scoreboard::in_flight`]).
    #[inline]
    pub(super) fn in_flight(&self) -> u64 {
        self.sb.in_flight(self.smss)
    }
}

#[cfg(test)]
mod tests {
    use super::super::scoreboard::Seg;
    use super::*;
    use rantcp_core::Time;

    /// `n` outstanding 1000-byte segments, none lost.
    fn board(n: u64) -> Scoreboard {
        let mut sb = Scoreboard::default();
        for i in 0..n {
            sb.push(Seg {
                start: 1 + i * 1000,
                len: 1000,
                flags: 0,
                sent: Time(0),
                first_sent: Time(0),
                delivered_time: Time(0),
                delivered: 0,
            });
        }
        sb
    }

    /// Remove the first `n` segments as a cumulative ACK does (none was lost or resent).
    fn ack_front(sb: &mut Scoreboard, n: usize) -> u32 {
        sb.segs.drain(..n);
        sb.pipe -= n as u64 * 1000;
        sb.remove_reno_sacks(n as u32)
    }

    #[test]
    fn dupacks_beyond_the_flight_are_capped_and_raise_the_threshold() {
        let mut sb = board(5);
        assert_eq!(sb.add_reno_sack(4), 4, "4 reported + 1 hole = 5 out");
        assert_eq!(sb.reno.reordering, DUP_THRESH);
        assert_eq!(sb.in_flight(1000), 1000);
        // tcp_limit_reno_sacked: a 5th duplicate ACK cannot report a 6th segment ...
        assert_eq!(sb.add_reno_sack(1), 0);
        assert_eq!(sb.reno.sacked, 4);
        // ... and tcp_check_reno_reordering takes it as reordering of the whole flight.
        assert_eq!(sb.reno.reordering, 5);
        // A lost hole counts once however many are lost: max(lost_out, 1).
        let mut sb = board(5);
        sb.mark_first_lost();
        assert_eq!(sb.add_reno_sack(4), 4);
        assert_eq!(
            sb.in_flight(1000),
            0,
            "4 out − 4 reported; the hole is lost"
        );
    }

    #[test]
    fn a_cumulative_ack_fills_one_hole_and_eats_reported_segments() {
        // Linux tcp_remove_reno_sacks: delivered = max(acked − sacked_out, 1), sacked_out less
        // acked − 1.
        let mut sb = board(10);
        sb.add_reno_sack(3);
        assert_eq!(ack_front(&mut sb, 2), 1);
        assert_eq!(sb.reno.sacked, 2);
        assert_eq!(ack_front(&mut sb, 5), 3);
        assert_eq!(sb.reno.sacked, 0);
        assert_eq!(sb.in_flight(1000), 3000);
        // Everything acknowledged: nothing can stay reported.
        let mut sb = board(3);
        sb.add_reno_sack(2);
        assert_eq!(ack_front(&mut sb, 3), 1);
        assert_eq!(sb.reno.sacked, 0);
    }

    #[test]
    fn a_hole_filled_by_a_delayed_original_raises_the_threshold_to_fack() {
        // 10 out from position 1; 4 duplicate ACKs counted; the ACK of 1..1001 was for the
        // original: FACK is SND.NXT (11 001), 11 000 bytes = 11 segments above the old SND.UNA.
        let mut sb = board(10);
        sb.add_reno_sack(4);
        sb.reno_delayed_fill(1, 1001, 11_001, 1000);
        assert_eq!(sb.reno.reordering, 11);
        // Without counted duplicate ACKs FACK is SND.UNA: 2 segments, below the threshold.
        let mut sb = board(10);
        sb.reno_delayed_fill(1, 2001, 11_001, 1000);
        assert_eq!(sb.reno.reordering, DUP_THRESH);
        // Capped at tcp_max_reordering.
        let mut sb = board(10);
        sb.add_reno_sack(1);
        sb.reno_delayed_fill(1, 1001, 1_000_001, 1000);
        assert_eq!(sb.reno.reordering, MAX_REORDERING);
    }

    #[test]
    fn only_an_unmarked_head_is_newly_lost() {
        let mut sb = board(3);
        assert_eq!(sb.newreno_mark_lost(), 1000);
        assert_eq!(
            sb.newreno_mark_lost(),
            0,
            "tcp_newreno_mark_lost: already TCPCB_LOST"
        );
    }
}
