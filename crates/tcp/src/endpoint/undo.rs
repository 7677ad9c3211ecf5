//! Undoing a congestion response that proves unnecessary, as Linux `tcp_input.c` does it, and
//! the sender's use of D-SACK (RFC 2883):
//!
//! * **D-SACK detection** (`tcp_check_dsack`, `tcp_dsack_seen`; RFC 2883 §4): the first SACK
//!   block is a D-SACK when it lies below the ACK field or inside the second block. A D-SACK
//!   for more than the peer's largest window, or one that would make more duplicates than
//!   segments retransmitted, is ignored (dubious). Each accepted D-SACK of a retransmission
//!   made in the current episode counts down `undo_retrans`.
//! * **Undo state** (`tcp_init_undo`): at a fast recovery's or timeout's congestion response
//!   the window from before (`prior_cwnd`, `prior_ssthresh`), SND.UNA (`undo_marker`) and the
//!   retransmissions outstanding (`undo_retrans`, −1 if none) are kept; every retransmission
//!   adds one (`tcp_retransmit_skb`; a loss probe's does not).
//! * **When to undo** (`tcp_may_undo`): every retransmission D-SACKed (`undo_retrans` = 0) or
//!   the ACK echoes a timestamp from before the episode's first retransmission
//!   (`tcp_packet_delayed`, RFC 3522 §3.2 Eifel detection) — at the end of a fast recovery
//!   (`tcp_try_undo_recovery`, TCPFullUndo), on a partial ACK with no retransmission in flight
//!   (`tcp_try_undo_partial`, timestamps only, TCPPartialUndo), on any ACK once D-SACKs cover
//!   every retransmission, in recovery or after it (`tcp_try_undo_dsack`, TCPDSACKUndo), and
//!   during a timeout's recovery (`tcp_try_undo_loss`, TCPLossUndo).
//! * **F-RTO** (RFC 5682 §3.1, SACK-enhanced; Linux `tcp_process_loss` with `tp->frto`): after
//!   a timeout the first ACK that advances SND.UNA below the recovery point sends new data
//!   instead of retransmissions (step 2.b); if a later ACK then (S)ACKs data never
//!   retransmitted and sent before the timeout, the timeout was spurious and is undone (step
//!   3.b, TCPSpuriousRTOs); a duplicate ACK or new SACK information instead shows the loss real
//!   (step 3.a) and the conventional recovery continues.
//!
//! The undo itself (`tcp_undo_cwnd_reduction`): cwnd = max(cwnd, prior_cwnd), ssthresh =
//! max(ssthresh, prior_ssthresh), optionally every loss mark cleared.

use super::scoreboard::{F_EVER_RETRANS, F_RETRANS};
use super::{Endpoint, TcpStats};
use crate::cc::CongestionControl;
use rantcp_core::Time;
use rantcp_wire::TcpHeader;

/// Which counter an undo goes to (Linux's MIB of the `tcp_try_undo_*` that did it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum UndoKind {
    /// `tcp_try_undo_loss` (TCPLossUndo), `frto` when F-RTO found it (TCPSpuriousRTOs too).
    Loss { frto: bool },
    /// `tcp_try_undo_recovery` in the Recovery state (TCPFullUndo).
    Full,
    /// `tcp_try_undo_partial` (TCPPartialUndo).
    Partial,
    /// `tcp_try_undo_dsack` (TCPDSACKUndo).
    Dsack,
}

impl UndoKind {
    fn count(self, s: &mut TcpStats) {
        match self {
            UndoKind::Loss { frto } => {
                s.rto_undos += 1;
                s.spurious_rtos += frto as u64;
            }
            UndoKind::Full => s.full_undos += 1,
            UndoKind::Partial => s.partial_undos += 1,
            UndoKind::Dsack => s.dsack_undos += 1,
        }
    }
}

impl Endpoint {
    /// Linux `tcp_init_undo` with `prior_cwnd` / `prior_ssthresh`: remember what an undo
    /// restores, at a congestion response that starts an episode. `retrans_out`: segments
    /// retransmitted and still outstanding (the episode's `undo_retrans` starts there, −1 if 0).
    pub(super) fn init_undo(&mut self, prior_cwnd: u64, prior_ssthresh: u64) {
        let retrans_out = self
            .sb
            .segs
            .iter()
            .filter(|s| s.flags & F_RETRANS != 0)
            .count() as i64;
        self.undo_window = Some((prior_cwnd, prior_ssthresh));
        self.undo_marker = self.snd_una;
        self.undo_retrans = if retrans_out > 0 { retrans_out } else { -1 };
    }

    /// RFC 2883 §4 / Linux `tcp_check_dsack` + `tcp_dsack_seen` on an ACK's SACK blocks, before
    /// the scoreboard sees them (`prior_una`: SND.UNA before the ACK, `ack`: its ACK field, as
    /// positions). Returns whether the ACK carried an accepted D-SACK; counts down
    /// `undo_retrans` for the episode's retransmissions it reports and tells RACK.
    pub(super) fn check_dsack(&mut self, tcp: &TcpHeader, prior_una: u64, ack: u64) -> bool {
        let blocks = tcp.options.sack_blocks();
        let Some(b0) = blocks.first() else {
            return false;
        };
        let una_seq = self.snd_seq(prior_una);
        let pos = |seq: u32| prior_una as i64 + seq.wrapping_sub(una_seq) as i32 as i64;
        let (l, r) = (pos(b0.left), pos(b0.right));
        let is_dsack = if l < ack as i64 {
            true // below the cumulative ACK (Linux TCPDSACKRecv)
        } else if let Some(b1) = blocks.get(1) {
            // inside the second block (TCPDSACKOfoRecv)
            r <= pos(b1.right) && l >= pos(b1.left)
        } else {
            false
        };
        if !is_dsack || r <= l {
            return false;
        }
        // tcp_dsack_seen: a range larger than the largest window offered is dubious.
        let len = (r - l) as u64;
        if len > self.max_snd_wnd {
            return false;
        }
        let mss = self.smss.max(1) as u64;
        let dup_segs = len.div_ceil(mss).max(1);
        let of_probe = len <= mss && self.rack.tlp_end == Some(r as u64);
        self.dsack_dups += dup_segs;
        // "Skip the DSACK if dup segs weren't retransmitted by sender".
        if self.dsack_dups > self.stats.retrans_segments {
            return false;
        }
        self.stats.dsacks_received += 1;
        // RACK widens its reordering window in rounds with D-SACKs, if reordering has been
        // seen and the D-SACK is not for a loss probe (RFC 8985 §6.2 Step 4).
        self.rack.note_dsack(of_probe);
        if self.undo_window.is_none() || self.undo_retrans <= 0 {
            return true;
        }
        if r <= prior_una as i64 {
            // Below SND.UNA: the segments are gone, "do dumb counting" (tcp_check_dsack).
            if r > self.undo_marker as i64 {
                self.undo_retrans = (self.undo_retrans - dup_segs as i64).max(0);
            }
        } else {
            // In the window: each retransmitted segment it covers (tcp_sacktag_one with
            // dup_sack and TCPCB_RETRANS, ending above undo_marker).
            let (l, r) = (l.max(prior_una as i64) as u64, r as u64);
            let first = self.sb.segs.partition_point(|s| s.end() <= l);
            let n = self
                .sb
                .segs
                .range(first..)
                .take_while(|s| s.start < r)
                .filter(|s| s.flags & F_EVER_RETRANS != 0 && s.end() > self.undo_marker)
                .count() as i64;
            self.undo_retrans = (self.undo_retrans - n).max(0);
        }
        true
    }

    /// Linux `tcp_packet_delayed`: the ACK echoes a timestamp from before the episode's first
    /// retransmission (`tcp_tsopt_ecr_before`; RFC 3522 §3.2), or — with SACK — nothing has
    /// been retransmitted yet.
    pub(super) fn packet_delayed(&self, tcp: &TcpHeader) -> bool {
        match self.retrans_stamp {
            Some(stamp) => match tcp.options.timestamps.filter(|_| self.ts_ok) {
                Some((_, tsecr)) => tsecr != 0 && (tsecr.wrapping_sub(stamp) as i32) < 0,
                None => false,
            },
            // "(1) For non-SACK connections ... clears tp->retrans_stamp when snd_una ==
            // high_seq".
            None => self.sack_ok || self.snd_una < self.recover,
        }
    }

    /// Linux `tcp_may_undo`: an episode is under way and either every retransmission was
    /// D-SACKed or the original transmission was what the ACK acknowledged.
    pub(super) fn may_undo(&self, tcp: &TcpHeader) -> bool {
        self.undo_window.is_some() && (self.undo_retrans == 0 || self.packet_delayed(tcp))
    }

    /// Linux `tcp_undo_cwnd_reduction`: the window from before the episode comes back; with
    /// `unmark_loss` no segment is lost any more. The caller leaves the recovery state.
    pub(super) fn undo_cwnd_reduction(&mut self, now: Time, unmark_loss: bool, kind: UndoKind) {
        let Some((cwnd, ssthresh)) = self.undo_window.take() else {
            return;
        };
        if unmark_loss {
            self.sb.unmark_lost();
        }
        let cwnd = self.cc.cwnd().max(cwnd);
        let ssthresh = self.cc.ssthresh().max(ssthresh);
        self.cc.on_undo(now, cwnd, ssthresh);
        kind.count(&mut self.stats);
    }

    /// Linux `tcp_try_undo_loss` → `tcp_undo_cwnd_reduction(sk, true)`: nothing is lost any
    /// more, the window from before the timeout comes back and the connection is Open again,
    /// free to start a fast recovery should RACK or SACK find a real loss.
    pub(super) fn undo_loss(&mut self, now: Time, frto: bool) {
        if self.undo_window.is_none() {
            return;
        }
        self.undo_cwnd_reduction(now, true, UndoKind::Loss { frto });
        self.rto_recovery = false;
        self.frto = false;
        self.frto_new_only = false;
        self.force_rtx = false;
        if self.sack_ok {
            self.recover = self.snd_una;
        }
        self.retrans_stamp = None;
    }

    /// Leave fast recovery after an undo in it (Linux `tcp_try_to_open` / `tcp_try_keep_open`
    /// after `tcp_try_undo_dsack` / `_partial`): back to Open, where RACK may start a new
    /// recovery at once if segments are still marked lost.
    pub(super) fn leave_recovery_undone(&mut self) {
        self.in_recovery = false;
        self.inflation = 0;
        self.dupacks = 0;
        self.prr = None;
        // Linux tcp_try_keep_open: a new recovery may start at once (without SACK too, under
        // the Linux rules: tcp_time_to_recover has no recovery-point test).
        if self.sack_ok || self.reno_emulation() {
            self.recover = self.snd_una;
        }
    }

    /// RFC 5682 §3.1 / Linux `tcp_process_loss` with F-RTO, for an ACK during a timeout's
    /// recovery that the timestamp undo did not settle. `orig_acked`: the ACK (S)ACKed a
    /// never-retransmitted segment sent before the timeout (`FLAG_ORIG_SACK_ACKED`);
    /// `sacked_or_dup`: it SACKed new data or was a duplicate ACK; `advanced`: it moved
    /// SND.UNA. Returns whether the timeout was undone.
    pub(super) fn frto_on_ack(
        &mut self,
        now: Time,
        orig_acked: bool,
        sacked_or_dup: bool,
        advanced: bool,
    ) -> bool {
        if !self.frto {
            return false;
        }
        // Step 3.b: not all was lost — never-retransmitted data arrived.
        if orig_acked {
            self.undo_loss(now, true);
            return true;
        }
        if self.snd_max > self.recover {
            // New data went after step 2.b; Step 3.a: a duplicate ACK or SACKed data shows
            // the loss real.
            if sacked_or_dup {
                self.frto = false;
            }
        } else if advanced && self.snd_una < self.recover {
            // Step 2.b: send new data, if there is some the peer's window admits; otherwise
            // fall back to the conventional recovery.
            let wnd_end = self.snd_una + self.snd_wnd;
            if self.app_end > self.snd_max && wnd_end > self.snd_max {
                self.frto_new_only = true;
            } else {
                self.frto = false;
            }
        }
        false
    }
}
