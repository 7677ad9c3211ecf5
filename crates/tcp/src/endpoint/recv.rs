//! The receive side: in-window data and reassembly (RFC 9293 §3.10.7.4 seventh step), the
//! peer's FIN (eighth step), when to acknowledge (RFC 1122 §4.2.3.2, RFC 5681 §4.2), the SACK
//! blocks to report (RFC 2018 §4) with the D-SACK block of a duplicate (RFC 2883 §4, when
//! [`TcpConfig::dsack`] is on) and the window to advertise with receiver SWS avoidance
//! (RFC 9293 §3.8.6.2.2).
//!
//! Positions are receive-side: 0 = IRS (the peer's SYN), 1 = its first data byte. Payload bytes
//! are not stored: the out-of-order queue is a sorted list of merged ranges.

use super::{Endpoint, State, TcpConfig};
use rantcp_core::{Duration, Time};
use rantcp_wire::{SackBlock, TcpOptions};

/// Receive-side state of a connection.
#[derive(Debug, Default)]
pub(super) struct Receiver {
    /// Initial receive sequence number (the peer's ISS).
    pub irs: u32,
    /// RCV.NXT as a position.
    pub nxt: u64,
    /// Position of the next byte the application reads.
    pub read: u64,
    /// Out-of-order ranges above RCV.NXT, sorted, merged, `[start, end)`.
    pub ooo: Vec<(u64, u64)>,
    pub ooo_bytes: u64,
    /// The most recently changed out-of-order ranges, newest first (RFC 2018 §4 ordering).
    sack_recent: [(u64, u64); 4],
    sack_recent_len: usize,
    /// Position of the peer's FIN, once seen.
    pub peer_fin: Option<u64>,
    /// The FIN was reached in sequence (RCV.NXT moved past it).
    pub fin_received: bool,
    /// Right edge of the window last advertised (never moves left).
    pub right_edge: u64,
    /// RCV.NXT carried by the last ACK sent (RFC 7323 §4.3 Last.ACK.sent).
    pub last_ack_sent: u64,
    /// An ACK must go out at the next `poll_transmit`.
    pub ack_now: bool,
    /// Delayed-ACK timer.
    pub delack_deadline: Option<Time>,
    /// In-order bytes received since the last ACK.
    pub unacked_bytes: u64,
    /// ACKs still to be sent at once for data (Linux quick-ACK mode, `icsk_ack.quick`): set at
    /// the first data and raised by [`Receiver::incr_quickack`].
    quickacks: u32,
    /// Data arrived that asked for an ACK since the last one sent (Linux
    /// `inet_csk_ack_scheduled`): the next ACK sent counts against `quickacks`.
    ack_sched: bool,
    /// When in-sequence data last arrived (Linux `icsk_ack.lrcvtime`), for the receive-gap rule.
    lrcvtime: Option<Time>,
    /// A segment shorter than the MSS, or a full-sized one with PSH, arrived since the last ACK
    /// (Linux `ICSK_ACK_PUSHED`, set in `tcp_measure_rcv_mss`): the read that empties the
    /// receive queue acknowledges it even when less than two segments are unacknowledged.
    pushed: bool,
    /// SACK compression ([`TcpConfig::sack_compression`]; Linux `compressed_ack_rcv_nxt`,
    /// `dup_ack_counter`, `compressed_ack`): the RCV.NXT the duplicate ACKs counted are for, how
    /// many left at once, how many are held now.
    comp_rcv_nxt: u64,
    dup_acks_sent: u32,
    compressed: u32,
    /// The duplicate range to report as the first SACK block of the next ACK (RFC 2883 §4;
    /// Linux `tcp_dsack_set`), `[start, end)` positions.
    pub dsack: Option<(u64, u64)>,
}

impl Receiver {
    /// Before the peer's SYN: nothing received, the first data byte is position 1.
    pub fn new() -> Self {
        Receiver {
            read: 1,
            ..Receiver::default()
        }
    }

    /// The peer's SYN carried sequence number `irs`. With quick-ACK configured, the first
    /// data segments are ACKed at once: Linux `tcp_incr_quickack` on the first data,
    /// min(rcv_wnd / (2·MSS), TCP_MAX_QUICKACKS = 16), at least 2.
    pub fn start(&mut self, irs: u32, cfg: &TcpConfig) {
        self.irs = irs;
        self.nxt = 1;
        self.read = 1;
        // No window advertised yet: the bound takes the one the SYN-ACK will offer.
        self.raise_quickacks(cfg, cfg.rcv_space());
    }

    #[inline]
    pub fn seq(&self, pos: u64) -> u32 {
        self.irs.wrapping_add(pos as u32)
    }
    /// Receive-side position of a 32-bit sequence number, relative to RCV.NXT.
    #[inline]
    pub fn pos(&self, seq: u32) -> i64 {
        self.nxt as i64 + seq.wrapping_sub(self.seq(self.nxt)) as i32 as i64
    }

    /// Current receive window (right edge − RCV.NXT), bytes.
    #[inline]
    pub fn window(&self) -> u64 {
        self.right_edge.saturating_sub(self.nxt)
    }

    /// In-order bytes waiting to be read.
    pub fn readable(&self) -> u64 {
        let data_end = if self.fin_received {
            self.nxt - 1
        } else {
            self.nxt
        };
        data_end.saturating_sub(self.read)
    }

    /// Buffer space for payload ([`TcpConfig::rcv_space`]) not held by unread or out-of-order
    /// data, capped by what the window field can express. (Linux `tcp_space`:
    /// `tcp_win_from_space` of the buffer less what the held skbs charge, their truesize; in
    /// payload terms the same.)
    fn available(&self, cfg: &TcpConfig, rcv_wscale: u8) -> u64 {
        let held = self.readable() + self.ooo_bytes;
        let max_wnd = 65535u64 << rcv_wscale;
        cfg.rcv_space().saturating_sub(held).min(max_wnd)
    }

    /// Linux `tcp_incr_quickack(sk, TCP_MAX_QUICKACKS)`: at least min(rcv_wnd / (2·MSS),
    /// TCP_MAX_QUICKACKS) more data ACKs go out at once (2 if the window is below 2·MSS); the
    /// count is raised to that, not added to. `rcv_wnd` is the window last advertised
    /// (`tp->rcv_wnd`). Only with [`TcpConfig::quickack_segments`] (TCP_MAX_QUICKACKS) > 0.
    fn incr_quickack(&mut self, cfg: &TcpConfig) {
        self.raise_quickacks(cfg, self.right_edge.saturating_sub(self.last_ack_sent));
    }

    /// The rule of `tcp_incr_quickack` for a window of `rcv_wnd` bytes.
    fn raise_quickacks(&mut self, cfg: &TcpConfig, rcv_wnd: u64) {
        if cfg.quickack_segments == 0 {
            return;
        }
        let by_window = (rcv_wnd / (2 * cfg.mss.max(1) as u64)).max(2);
        let q = cfg.quickack_segments.min(by_window as u32);
        self.quickacks = self.quickacks.max(q);
    }

    /// Linux `tcp_enter_quickack_mode(sk, TCP_MAX_QUICKACKS)` with an immediate ACK, for a
    /// data segment wholly below RCV.NXT (a retransmission: `tcp_send_dupack`,
    /// `tcp_data_queue`) or outside the window (`tcp_data_queue`'s `out_of_window`). Besides
    /// the quick-ACK count Linux leaves pingpong (interactive) mode and resets the ATO to
    /// TCP_ATO_MIN; rantcp models neither (no pingpong, a fixed delayed-ACK timeout).
    /// `scheduled`: the ACK goes through `inet_csk_schedule_ack` (the `tcp_data_queue` path)
    /// and so counts against the quick-ACKs; `tcp_send_dupack` sends it directly and it does not.
    pub fn enter_quickack(&mut self, cfg: &TcpConfig, scheduled: bool) {
        self.incr_quickack(cfg);
        self.ack_now = true;
        if scheduled && cfg.quickack_segments > 0 {
            self.ack_sched = true;
        }
    }

    /// Receive in-window data (RFC 9293 §3.10.7.4 seventh step) and decide when to ACK.
    /// `rto`: this end's current retransmission timeout (Linux `icsk_rto`), for the
    /// receive-gap rule.
    /// `psh`: the segment carries PSH. `srtt`: this end's smoothed RTT if it has one, for SACK
    /// compression's delay.
    #[allow(clippy::too_many_arguments)]
    pub fn on_data(
        &mut self,
        now: Time,
        seq_pos: i64,
        len: u32,
        psh: bool,
        cfg: &TcpConfig,
        smss: u32,
        rto: Duration,
        srtt: Option<Duration>,
    ) {
        let nxt = self.nxt;
        let mut start = seq_pos.max(0) as u64;
        let mut end = (seq_pos + len as i64).max(0) as u64;
        if cfg.dsack && len > 0 && start < nxt {
            // RFC 2883 §4 (1): a duplicate below RCV.NXT, whole or the head of a segment that
            // also brings new data (Linux tcp_data_queue: `tcp_dsack_set(seq, min(end_seq,
            // rcv_nxt))`). Only the ACK that follows carries it.
            self.set_dsack(start.max(1), end.min(nxt));
        }
        // Keep only what fits in the window we advertised.
        end = end.min(self.right_edge.max(nxt));
        if end <= nxt {
            // Old duplicate, or data beyond a zero window (a probe): ACK at once (RFC 5681
            // §4.2); Linux (tcp_data_queue, `out_of_window`) also enters quick-ACK mode.
            self.enter_quickack(cfg, true);
            return;
        }
        start = start.max(nxt);
        if start > end {
            self.enter_quickack(cfg, true);
            return;
        }
        if cfg.quickack_segments > 0 {
            // Every data segment below asks for an ACK (Linux inet_csk_schedule_ack in
            // tcp_event_data_recv and tcp_data_queue_ofo).
            self.ack_sched = true;
        }
        if start == nxt && cfg.quickack_segments > 0 {
            // Linux tcp_event_data_recv (in-sequence data only): a receive gap longer
            // than the RTO means the sender failed to restart its window: quick ACKs.
            // (Its ATO adaptation is not modelled: rantcp's delayed-ACK timeout is fixed.)
            if self.lrcvtime.is_some_and(|t| now.saturating_since(t) > rto) {
                self.incr_quickack(cfg);
            }
            self.lrcvtime = Some(now);
        }
        if start == nxt {
            let had_ooo = !self.ooo.is_empty();
            let mut new_nxt = end;
            // Pull contiguous out-of-order ranges.
            let mut k = 0;
            while k < self.ooo.len() && self.ooo[k].0 <= new_nxt {
                new_nxt = new_nxt.max(self.ooo[k].1);
                k += 1;
            }
            for &(s, e) in &self.ooo[..k] {
                self.ooo_bytes -= e - s;
            }
            self.ooo.drain(..k);
            let adv = new_nxt - nxt;
            self.nxt = new_nxt;
            if had_ooo {
                // RFC 5681 §4.2: a segment that fills (part of) a hole is ACKed at once.
                self.ack_now = true;
            } else if !cfg.delayed_ack {
                self.ack_now = true;
            } else if self.quickacks > 0 {
                // Linux quick-ACK mode (`tcp_in_quickack_mode` in __tcp_ack_snd_check): the
                // segment is ACKed at once (the count drops when the ACK is sent), so the
                // sender's slow start is not held back by delayed ACKs.
                self.ack_now = true;
            } else {
                // RFC 1122 §4.2.3.2 / RFC 5681 §4.2: ACK at least every second full-sized
                // segment (every `ack_every`: stretch ACKs), otherwise within the delayed-ACK
                // timeout.
                self.unacked_bytes += adv;
                if cfg.ack_when_read && (len < smss || psh) {
                    // Linux tcp_measure_rcv_mss: a segment shorter than rcv_mss, or (since
                    // 6.6, commit 4720852ed9af "tcp: fix delayed ACKs for MSS boundary
                    // condition") a full-sized one with PSH, sets ICSK_ACK_PUSHED: the end of
                    // an application write, after which the sender may wait for this ACK.
                    // (Linux's exception, two short segments of one size in a row becoming the
                    // new rcv_mss, is not modelled: rantcp's senders send full segments but
                    // for a write's tail.)
                    self.pushed = true;
                }
                if self.unacked_bytes >= cfg.ack_every.max(1) as u64 * smss as u64 || self.pushed {
                    if cfg.ack_when_read {
                        // Linux: not at once (the window's right edge does not advance while
                        // the data is unread, `__tcp_ack_snd_check`) but when the woken
                        // application reads (`tcp_cleanup_rbuf`: more than rcv_mss unACKed,
                        // or ICSK_ACK_PUSHED and the read emptied the receive queue, which
                        // rantcp's readers always do), i.e. after the segments that arrive at
                        // this same instant: a timer due now fires after them.
                        self.delack_deadline = Some(now);
                    } else {
                        self.ack_now = true;
                    }
                } else if self.delack_deadline.is_none() {
                    self.delack_deadline = Some(now + cfg.delack_timeout);
                }
            }
        } else {
            // Out of order (RFC 5681 §4.2: immediate duplicate ACK).
            if cfg.dsack {
                // RFC 2883 §4 (2): data already held above RCV.NXT; the first part held is
                // reported (Linux tcp_data_queue_ofo: `tcp_dsack_set` for the first overlap,
                // `tcp_dsack_extend` only joins a contiguous one, which merged ranges never are).
                let k = self.ooo.partition_point(|&(_, e)| e <= start);
                if let Some(&(l, r)) = self.ooo.get(k).filter(|&&(l, _)| l < end) {
                    self.set_dsack(start.max(l), end.min(r));
                }
            }
            self.insert_ooo(start, end);
            if cfg.sack_compression && cfg.sack && self.quickacks == 0 {
                // (In quick-ACK mode Linux sends at once before it gets to the compression.)
                self.compress_dupack(now, srtt);
            } else {
                self.ack_now = true;
            }
        }
    }

    /// Linux `__tcp_ack_snd_check` for out-of-order data with SACK (4.19+): the first
    /// TCP_FASTRETRANS_THRESH = 3 duplicate ACKs at one RCV.NXT leave at once, later ones are
    /// held (`compressed_ack`) until min(RTT / 20, 1 ms) after the first of them
    /// (`tcp_comp_sack_delay_ns`; Linux takes the smaller of its receive-side RTT estimate and
    /// SRTT, rantcp its SRTT; 1 ms without one) or until `tcp_comp_sack_nr` = 44 are held; any
    /// ACK sent meanwhile carries them all. The timer is the delayed-ACK one, whose firing also
    /// sends one ACK (Linux `tcp_compressed_ack_kick`).
    fn compress_dupack(&mut self, now: Time, srtt: Option<Duration>) {
        const FASTRETRANS_THRESH: u32 = 3;
        const COMP_SACK_NR: u32 = 44;
        const COMP_SACK_DELAY: Duration = Duration::from_millis(1);
        if self.compressed >= COMP_SACK_NR {
            self.ack_now = true;
            return;
        }
        if self.comp_rcv_nxt != self.nxt {
            self.comp_rcv_nxt = self.nxt;
            self.dup_acks_sent = 0;
        }
        if self.dup_acks_sent < FASTRETRANS_THRESH {
            self.dup_acks_sent += 1;
            self.ack_now = true;
            return;
        }
        self.compressed += 1;
        let delay = srtt.map_or(COMP_SACK_DELAY, |r| {
            Duration::from_nanos(r.as_nanos() / 20).min(COMP_SACK_DELAY)
        });
        let due = now + delay;
        if self.delack_deadline.is_none_or(|t| t > due) {
            self.delack_deadline = Some(due);
        }
    }

    /// Remember `[l, r)` for the next ACK's D-SACK block (one per ACK; a later duplicate before
    /// that ACK replaces it, as Linux's `tcp_dsack_set` does).
    pub fn set_dsack(&mut self, l: u64, r: u64) {
        if r > l {
            self.dsack = Some((l, r));
        }
    }

    fn insert_ooo(&mut self, l: u64, r: u64) {
        let first = self.ooo.partition_point(|&(_, e)| e < l);
        let mut last = first;
        while last < self.ooo.len() && self.ooo[last].0 <= r {
            last += 1;
        }
        let (ml, mr) = if last > first {
            (self.ooo[first].0.min(l), self.ooo[last - 1].1.max(r))
        } else {
            (l, r)
        };
        for &(s, e) in &self.ooo[first..last] {
            self.ooo_bytes -= e - s;
        }
        if last > first {
            self.ooo[first] = (ml, mr);
            if last > first + 1 {
                self.ooo.drain(first + 1..last);
            }
        } else {
            self.ooo.insert(first, (ml, mr));
        }
        self.ooo_bytes += mr - ml;
        // RFC 2018 §4: the block with the most recent segment goes first; remember order.
        let mut out = [(ml, mr); 4];
        let mut n = 1;
        for i in 0..self.sack_recent_len {
            let b = self.sack_recent[i];
            if (b.1 < ml || b.0 > mr) && n < 4 {
                out[n] = b;
                n += 1;
            }
        }
        self.sack_recent = out;
        self.sack_recent_len = n;
    }

    /// SACK blocks for an outgoing ACK (RFC 2018 §4): a pending D-SACK block first (RFC 2883
    /// §4), then the most recent block (which holds an out-of-order duplicate just reported,
    /// RFC 2883 §4 (2)), then the other recent ones, then other held ranges, highest first;
    /// 3 blocks with timestamps, 4 without.
    pub fn fill_sack(&mut self, o: &mut TcpOptions, ts_ok: bool) {
        if let Some((l, r)) = self.dsack.take() {
            o.push_sack(SackBlock {
                left: self.seq(l),
                right: self.seq(r),
            });
        }
        if self.ooo.is_empty() {
            return;
        }
        let max_blocks = if ts_ok { 3 } else { 4 };
        let dsack_n = o.sack_len as usize; // a D-SACK block may equal a held range: not a dup
        for i in 0..self.sack_recent_len {
            let (l, _) = self.sack_recent[i];
            // Map to the current range holding it (ranges merge as data arrives).
            let k = self.ooo.partition_point(|&(_, e)| e <= l);
            if k < self.ooo.len() && self.ooo[k].0 <= l {
                let (rl, rr) = self.ooo[k];
                let b = SackBlock {
                    left: self.seq(rl),
                    right: self.seq(rr),
                };
                if !o.sack_blocks()[dsack_n..].contains(&b) && (o.sack_len as usize) < max_blocks {
                    o.push_sack(b);
                }
            }
        }
        // Fill with other held ranges, highest first.
        for k in (0..self.ooo.len()).rev() {
            if (o.sack_len as usize) >= max_blocks {
                break;
            }
            let (rl, rr) = self.ooo[k];
            let b = SackBlock {
                left: self.seq(rl),
                right: self.seq(rr),
            };
            if !o.sack_blocks()[dsack_n..].contains(&b) {
                o.push_sack(b);
            }
        }
    }

    /// Window to advertise, bytes, applying receiver SWS avoidance (RFC 9293 §3.8.6.2.2): the
    /// right edge moves only by at least min(rcv_buf/2, MSS) and never moves left.
    pub fn advertise(&mut self, cfg: &TcpConfig, rcv_wscale: u8, smss: u32) -> u64 {
        let avail = self.available(cfg, rcv_wscale);
        let cand = self.nxt + avail;
        let cur = self.right_edge.max(self.nxt);
        let thresh = sws_threshold(cfg, smss);
        if cand >= cur + thresh {
            self.right_edge = cand;
        } else {
            self.right_edge = cur;
        }
        self.right_edge - self.nxt
    }

    /// RFC 9293 §3.8.6.2.2 / RFC 1122 §4.2.3.3: after the application read, is a window update
    /// due (a small or zero window opens by at least min(rcv_buf/2, MSS))?
    pub fn window_update_due(&self, cfg: &TcpConfig, rcv_wscale: u8, smss: u32) -> bool {
        let thresh = sws_threshold(cfg, smss);
        let old = self.window();
        let avail = self.available(cfg, rcv_wscale);
        old < thresh && avail >= old + thresh
    }

    /// An ACK carrying RCV.NXT was just built.
    pub fn on_ack_sent(&mut self) {
        if self.ack_sched {
            // Linux tcp_dec_quickack_mode (tcp_event_ack_sent): an ACK for data that asked
            // for one uses up a quick ACK.
            self.quickacks = self.quickacks.saturating_sub(1);
            self.ack_sched = false;
        }
        self.dsack = None; // reported once (or not at all without SACK)
        self.pushed = false; // Linux: icsk_ack.pending cleared with the delayed-ACK timer
        self.compressed = 0; // Linux tcp_event_ack_sent: the held duplicate ACKs went with it
        self.ack_now = false;
        self.delack_deadline = None;
        self.unacked_bytes = 0;
        self.last_ack_sent = self.nxt;
    }

    /// Debug-build check: out-of-order ranges sorted, disjoint, above RCV.NXT, inside the
    /// buffer.
    #[cfg(debug_assertions)]
    pub fn check(&self, rcv_space: u64) {
        if self.ooo.len() > 256 {
            return;
        }
        let mut ooo = 0;
        for (i, &(l, r)) in self.ooo.iter().enumerate() {
            assert!(
                l < r && l > self.nxt,
                "ooo range {l}..{r} vs RCV.NXT {}",
                self.nxt
            );
            if i > 0 {
                assert!(self.ooo[i - 1].1 < l, "ooo ranges not merged");
            }
            ooo += r - l;
        }
        assert_eq!(ooo, self.ooo_bytes);
        if self.nxt > 0 {
            assert!(
                self.readable() + self.ooo_bytes <= rcv_space,
                "receive buffer overrun"
            );
        }
    }
}

/// Receiver SWS avoidance's step (RFC 9293 §3.8.6.2.2, RFC 1122 §4.2.3.3): the window's right
/// edge moves, and a small window counts as opened, only by at least min(buffer/2, MSS).
fn sws_threshold(cfg: &TcpConfig, smss: u32) -> u64 {
    (cfg.rcv_space() / 2).min(smss as u64).max(1)
}

impl Endpoint {
    /// Data of a segment in a synchronized receiving state (seventh step).
    pub(super) fn process_data(&mut self, now: Time, seq_pos: i64, len: u32, psh: bool) {
        let before = self.rcv.nxt;
        let rto = self.rtt.rto();
        let srtt = self.rtt.has_sample().then(|| self.rtt.srtt());
        self.rcv
            .on_data(now, seq_pos, len, psh, &self.cfg, self.smss, rto, srtt);
        self.stats.bytes_received += self.rcv.nxt - before;
    }

    /// RFC 9293 §3.10.7.4 eighth step: the peer's FIN, once everything before it arrived.
    pub(super) fn check_peer_fin(&mut self, now: Time) {
        if let Some(p) = self.rcv.peer_fin {
            if !self.rcv.fin_received && self.rcv.nxt == p {
                self.rcv.nxt += 1;
                self.rcv.fin_received = true;
                self.rcv.ack_now = true;
                match self.state {
                    State::Established => self.state = State::CloseWait,
                    State::FinWait1 => {
                        if self.fin_sent && self.snd_una > self.app_end {
                            self.enter_time_wait(now);
                        } else {
                            self.state = State::Closing;
                        }
                    }
                    State::FinWait2 => self.enter_time_wait(now),
                    _ => {}
                }
            }
        }
    }
}
