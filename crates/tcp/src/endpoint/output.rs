//! What the endpoint sends next ([`Endpoint::poll_transmit`]): a pending RST, the SYN or
//! SYN-ACK, a retransmission (RFC 6675 §5 (C) NextSeg rule 1, RFC 6582 / RFC 5681 fast
//! retransmit, go-back-N after an RTO), new data within cwnd and the peer's window with sender
//! SWS avoidance (RFC 9293 §3.8.6.2.1), a NextSeg rule 3 rescue retransmission, the FIN, a
//! zero-window probe (RFC 9293 §3.8.6.1) or a pure ACK — and pacing (Linux
//! `tcp_update_pacing_rate`, or the controller's rate), and the building of the segment with its
//! options (RFC 7323, RFC 2018).

use super::scoreboard::{Seg, F_APP_LIMITED, F_SACKED};
use super::{ts_ms, Endpoint, State};
use crate::cc::CongestionControl;
use rantcp_core::{Duration, Time};
use rantcp_wire::{Ipv4Header, Packet, TcpFlags, TcpHeader, TcpOptions};

/// Whether the sender uses its congestion window (RFC 7661 §4.1 "cwnd-limited"), tracked per
/// window of data as Linux `tcp_cwnd_validate` does: remember that cwnd limited the sender at
/// any time during the current window, otherwise the most data outstanding in it.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct CwndUse {
    /// cwnd limited a transmission in the current window.
    limited: bool,
    /// The most data outstanding (SND.NXT − SND.UNA) in the current window, bytes (Linux
    /// `max_packets_out`).
    max_outstanding: u64,
    /// End of the current window: SND.NXT when it began (Linux `cwnd_usage_seq`).
    window_end: u64,
}

impl CwndUse {
    /// A transmission opportunity ended with `outstanding` bytes out; `limited` says cwnd was
    /// what stopped (or just filled up).
    fn validate(&mut self, snd_una: u64, snd_max: u64, limited: bool) {
        let outstanding = snd_max - snd_una;
        if snd_una >= self.window_end
            || limited
            || (!self.limited && outstanding > self.max_outstanding)
        {
            self.limited = limited;
            self.max_outstanding = outstanding;
            self.window_end = snd_max;
        }
    }

    /// Linux `tcp_is_cwnd_limited`: limited in the current window, or, in slow start, cwnd still
    /// below twice the most data outstanding ("ensure cwnd grows to twice what was ACKed").
    pub fn is_limited(&self, cwnd: u64, in_slow_start: bool) -> bool {
        self.limited || (in_slow_start && cwnd < 2 * self.max_outstanding)
    }
}

impl Endpoint {
    /// Congestion window in force: PRR's during a fast recovery that uses it (RFC 6937),
    /// otherwise the controller's plus NewReno inflation (RFC 6582 §3.2).
    #[inline]
    pub(super) fn cwnd(&self) -> u64 {
        if self.prr.is_some() {
            return self.prr_cwnd;
        }
        self.cc.cwnd() + self.inflation
    }

    /// Bytes of new data the peer's window still admits.
    #[inline]
    pub(super) fn usable_window(&self) -> u64 {
        (self.snd_una + self.snd_wnd).saturating_sub(self.snd_max)
    }

    pub(super) fn pacing_rate(&self) -> Option<f64> {
        if let Some(r) = self.cc.pacing_rate_bps() {
            return Some(r);
        }
        if self.cfg.pacing && self.rtt.has_sample() {
            // Linux tcp_update_pacing_rate: 200% of cwnd/srtt in slow start, 120% after.
            let cwnd = self.cwnd() as f64;
            let ratio = if self.cc.cwnd() < self.cc.ssthresh() {
                2.0
            } else {
                1.2
            };
            let srtt = self.rtt.srtt().as_secs_f64().max(1e-9);
            return Some(cwnd * 8.0 / srtt * ratio);
        }
        None
    }

    /// Can a data segment of `len` bytes enter the network under cwnd (RFC 6675 §5 (C):
    /// cwnd − pipe ≥ SMSS; a short last segment needs only its own size)?
    #[inline]
    fn cwnd_allows(&self, len: u32) -> bool {
        let (cwnd, pipe) = (self.cwnd(), self.in_flight());
        pipe + len as u64 <= cwnd || pipe == 0
    }

    fn can_send_data_state(&self) -> bool {
        matches!(
            self.state,
            State::Established
                | State::CloseWait
                | State::FinWait1
                | State::Closing
                | State::LastAck
        )
    }

    /// The next segment to send at `now`, or `None`. Drain after every input.
    pub fn poll_transmit(&mut self, now: Time) -> Option<Packet> {
        if let Some(p) = self.rst_pending.take() {
            self.stats.segments_sent += 1;
            return Some(p);
        }
        match self.state {
            State::Closed | State::Listen => return None,
            _ => {}
        }
        if self.syn_pending {
            self.syn_pending = false;
            let synack = self.state == State::SynReceived;
            let flags = if synack {
                TcpFlags::SYN | TcpFlags::ACK
            } else {
                TcpFlags::SYN
            };
            if self.syn_sent_at.is_none() && self.stats.rtos == 0 {
                self.syn_sent_at = Some(now);
            }
            self.snd_max = self.snd_max.max(1);
            if self.rto_deadline.is_none() {
                self.rto_deadline = Some(now + self.rtt.rto());
            }
            return Some(self.build(now, 0, flags, 0));
        }
        if matches!(self.state, State::SynSent | State::SynReceived) {
            return None;
        }
        self.pacing_blocked = false;
        if self.can_send_data_state() {
            if let Some(p) = self.try_send_data(now) {
                return Some(p);
            }
            // FIN once all data has been sent (RFC 9293 §3.10.4), or again after an RTO.
            if self.fin_queued && self.snd_max >= self.app_end && !self.pacing_blocked {
                let no_lost_pending = self.sb.next_lost().is_none();
                if (!self.fin_sent || (self.fin_rtx && no_lost_pending))
                    && matches!(
                        self.state,
                        State::FinWait1 | State::LastAck | State::Closing
                    )
                {
                    self.fin_sent = true;
                    self.fin_rtx = false;
                    self.snd_max = self.snd_max.max(self.app_end + 1);
                    if self.rto_deadline.is_none() {
                        self.rto_deadline = Some(now + self.rtt.rto());
                    }
                    let pos = self.app_end;
                    return Some(self.build(now, pos, TcpFlags::FIN | TcpFlags::ACK, 0));
                }
            }
            if self.probe_pending {
                // Zero-window probe, Linux style: SEQ = SND.UNA − 1, no data.
                self.probe_pending = false;
                self.stats.persist_probes += 1;
                let pos = self.snd_una.wrapping_sub(1);
                return Some(self.build(now, pos, TcpFlags::ACK, 0));
            }
        }
        if self.rcv.ack_now && !matches!(self.state, State::SynSent | State::SynReceived) {
            let pos = self.snd_max;
            return Some(self.build(now, pos, TcpFlags::ACK, 0));
        }
        None
    }

    fn try_send_data(&mut self, now: Time) -> Option<Packet> {
        if self.rack.probe_due {
            self.rack.probe_due = false;
            if let Some(p) = self.send_probe(now) {
                return Some(p);
            }
        }
        let paced = self.pacing_rate().is_some();
        // Retransmissions first (RFC 6675 §5 (C) rule 1), except on the F-RTO ACK that lets new
        // data go instead (RFC 5682 §3.1 step 2.b; Linux REXMIT_NEW).
        let next_lost = if self.frto_new_only {
            None
        } else {
            self.sb.next_lost()
        };
        if let Some(idx) = next_lost {
            let len = self.sb.segs[idx].len;
            if !self.force_rtx && !self.cwnd_allows(len) {
                self.cwnd_use.validate(self.snd_una, self.snd_max, true);
                return None;
            }
            if paced && now < self.next_send_time {
                self.pacing_blocked = true;
                return None;
            }
            self.force_rtx = false;
            return Some(self.retransmit(now, idx));
        }
        // New data (RFC 6675 §5 (C) rule 2).
        if self.snd_max < 1 || self.fin_sent && self.snd_max > self.app_end {
            return self.rescue_hole(now, paced);
        }
        let remaining = self.app_end.saturating_sub(self.snd_max);
        if remaining == 0 {
            // Nothing to send: application-limited (draft §3.4) if cwnd has room.
            let pipe = self.in_flight();
            if pipe < self.cwnd() {
                self.rate.mark_app_limited(pipe);
            }
            return self.rescue_hole(now, paced);
        }
        let wnd = self.usable_window();
        let len = (self.smss as u64).min(remaining).min(wnd) as u32;
        // Sender SWS avoidance (RFC 9293 §3.8.6.2.1): a full segment, all remaining data, or at
        // least half the largest window the peer offered; the persist timer forces otherwise.
        let sws_ok = len > 0
            && (len == self.smss
                || len as u64 == remaining
                || len as u64 >= self.max_snd_wnd / 2
                || self.force_send);
        if !sws_ok {
            if self.snd_max == self.snd_una && self.persist_deadline.is_none() {
                // RFC 9293 §3.8.6.1: window closed with nothing in flight: start persisting.
                self.persist_deadline = Some(now + self.persist_timeout());
            }
            return self.rescue_hole(now, paced);
        }
        self.restart_if_idle(now);
        if !self.cwnd_allows(len) {
            self.cwnd_use.validate(self.snd_una, self.snd_max, true);
            return None;
        }
        if paced && now < self.next_send_time {
            self.pacing_blocked = true;
            return None;
        }
        self.force_send = false;
        let p = self.send_new_segment(now, len);
        let full = self.in_flight() >= self.cwnd();
        self.cwnd_use.validate(self.snd_una, self.snd_max, full);
        // RFC 8985 §7.2: (re)start the loss probe timer after new data: once per instant (an
        // ACK at this instant has just re-armed it), unless the flight was one segment then.
        if self.rack.pto_armed_at != Some(now)
            || self.snd_max - self.snd_una <= 2 * self.smss as u64
        {
            self.arm_pto(now);
        }
        Some(p)
    }

    /// Transmit `len` bytes of new data from SND.NXT, recording the segment.
    fn send_new_segment(&mut self, now: Time, len: u32) -> Packet {
        let start = self.snd_max;
        let mut seg = Seg {
            start,
            len,
            flags: if self.rate.is_app_limited() {
                F_APP_LIMITED
            } else {
                0
            },
            sent: now,
            first_sent: now,
            delivered_time: now,
            delivered: 0,
        };
        let nothing_outstanding = self.snd_una >= start;
        self.rate.stamp(now, &mut seg, nothing_outstanding);
        self.sb.push(seg);
        self.snd_max = start + len as u64;
        self.finish_data(now, start, len)
    }

    /// RFC 8985 §7.3: the loss probe. A new segment if there is new data and the peer's window
    /// admits it (cwnd notwithstanding: FlightSize may exceed cwnd by one segment until the next
    /// ACK), otherwise the highest-sequence segment again.
    fn send_probe(&mut self, now: Time) -> Option<Packet> {
        let new_data_ok = self.snd_max >= 1 && !(self.fin_sent && self.snd_max > self.app_end);
        let remaining = self.app_end.saturating_sub(self.snd_max);
        let len = (self.smss as u64).min(remaining).min(self.usable_window()) as u32;
        if new_data_ok && len > 0 && (len == self.smss || len as u64 == remaining) {
            let p = self.send_new_segment(now, len);
            self.on_probe_sent(now, false);
            return Some(p);
        }
        let idx = self.sb.segs.len().checked_sub(1)?;
        if self.sb.segs[idx].flags & F_SACKED != 0 {
            return None;
        }
        // Linux sends the probe with __tcp_retransmit_skb, which leaves retrans_stamp and
        // undo_retrans alone.
        let (stamp, undo_retrans) = (self.retrans_stamp, self.undo_retrans);
        let p = self.retransmit(now, idx);
        self.retrans_stamp = stamp;
        self.undo_retrans = undo_retrans;
        self.on_probe_sent(now, true);
        Some(p)
    }

    /// Retransmit the segment at `idx` (rules 1 and 3 of RFC 6675 NextSeg, RTO go-back-N).
    fn retransmit(&mut self, now: Time, idx: usize) -> Packet {
        let len = self.sb.segs[idx].len;
        self.rate.stamp(now, &mut self.sb.segs[idx], false);
        let track = self.detect_lost_rtx && self.sack_ok;
        self.sb.on_retransmit(idx, now, self.snd_max, track);
        self.stats.retrans_segments += 1;
        self.stats.retrans_bytes += len as u64;
        // Linux tcp_retransmit_skb: the stamp of the episode's first retransmission.
        if self.retrans_stamp.is_none() {
            self.retrans_stamp = Some(ts_ms(now));
        }
        // tcp_retransmit_skb: one more retransmission a D-SACK must show unnecessary before
        // the episode can be undone (`undo_retrans`, -1 = none yet).
        self.undo_retrans = self.undo_retrans.max(0) + 1;
        let start = self.sb.segs[idx].start;
        self.high_rxt = self.high_rxt.max(start + len as u64);
        if self.rack_on() {
            self.rack.on_retransmit(now, start + len as u64);
        }
        self.finish_data(now, start, len)
    }

    /// RFC 6675 §4 NextSeg rule 3: in SACK recovery, when there is no lost segment to resend
    /// and no new data may go, resend the first un-SACKed, never-resent segment above HighRxt
    /// and below HighSACK (cwnd permitting).
    fn rescue_hole(&mut self, now: Time, paced: bool) -> Option<Packet> {
        // With RACK the reordering timer finds tail losses instead (as in Linux).
        if !(self.in_recovery && self.sack_ok) || self.rack_on() {
            return None;
        }
        let idx = self.sb.rescue_candidate(self.high_rxt.max(self.snd_una))?;
        if !self.cwnd_allows(self.sb.segs[idx].len) {
            return None;
        }
        if paced && now < self.next_send_time {
            self.pacing_blocked = true;
            return None;
        }
        Some(self.retransmit(now, idx))
    }

    fn finish_data(&mut self, now: Time, start: u64, len: u32) -> Packet {
        let mut flags = TcpFlags::ACK;
        if start + len as u64 >= self.app_end {
            flags |= TcpFlags::PSH;
            // The FIN rides on the last data segment (and on its retransmissions), as in
            // Linux and ns-3.
            if self.fin_queued
                && matches!(
                    self.state,
                    State::FinWait1 | State::LastAck | State::Closing
                )
            {
                flags |= TcpFlags::FIN;
                self.fin_sent = true;
                self.fin_rtx = false;
                self.snd_max = self.snd_max.max(self.app_end + 1);
            }
        }
        let pkt = self.build(now, start, flags, len);
        self.last_data_sent = Some(now);
        self.stats.data_segments_sent += 1;
        self.stats.bytes_sent += len as u64;
        if let Some(prr) = &mut self.prr {
            prr.on_sent(len as u64); // RFC 6937: prr_out += data sent
        }

        // RFC 6298 §5.1: start the timer if it is not running.
        if self.rto_deadline.is_none() {
            self.rto_deadline = Some(now + self.rtt.rto());
        }
        self.persist_deadline = None;
        let pipe = self.in_flight();
        self.cc
            .on_packet_sent(now, len as u64, pipe, self.rate.is_app_limited());
        if let Some(rate) = self.pacing_rate() {
            let rate = rate.max(1.0) as u64;
            // Paced on payload bytes, as Linux tcp_update_skb_after_send does (the original skb
            // carries no headers) and as BBR's rate (delivered payload per second) is defined.
            self.next_send_time =
                self.next_send_time.max(now) + Duration::transmission(len as u64, rate);
        }
        pkt
    }

    /// A complete segment: IPv4 + TCP header with the options in force, `payload_len` bytes
    /// of data from send-side position `pos`.
    fn build(&mut self, now: Time, pos: u64, flags: TcpFlags, payload_len: u32) -> Packet {
        let syn = flags.syn();
        let mut o = TcpOptions::default();
        let window;
        if syn {
            // RFC 9293 §3.7.1, RFC 7323 §2.2/§3.2, RFC 2018 §2: offer what is configured; a
            // SYN-ACK only echoes what the peer offered.
            let synack = flags.ack();
            o.mss = Some(self.cfg.mss.min(65535) as u16);
            if self.cfg.window_scaling && (!synack || self.ws_ok) {
                o.window_scale = Some(self.rcv_wscale);
            }
            o.sack_permitted = self.cfg.sack && (!synack || self.sack_ok);
            if self.cfg.timestamps && (!synack || self.ts_ok) {
                o.timestamps = Some((ts_ms(now), if synack { self.ts_recent } else { 0 }));
            }
            // RFC 7323 §2.2: the SYN window is not scaled.
            let w = self.cfg.rcv_space().min(65535);
            window = w as u16;
            if synack {
                self.rcv.right_edge = self.rcv.nxt + w;
            }
        } else {
            if self.ts_ok {
                o.timestamps = Some((ts_ms(now), self.ts_recent));
            }
            if self.sack_ok && flags.ack() && (!self.rcv.ooo.is_empty() || self.rcv.dsack.is_some())
            {
                // RFC 2018 §4, RFC 2883 §4.
                self.stats.dsacks_sent += self.rcv.dsack.is_some() as u64;
                self.rcv.fill_sack(&mut o, self.ts_ok);
            }
            let w = self.rcv.advertise(&self.cfg, self.rcv_wscale, self.smss);
            window = (w >> self.rcv_wscale).min(65535) as u16;
        }
        if flags.ack() {
            self.rcv.on_ack_sent();
        }
        let tcp = TcpHeader {
            src_port: self.local.1,
            dst_port: self.remote.1,
            seq: self.snd_seq(pos),
            ack: if flags.ack() {
                self.rcv.seq(self.rcv.nxt)
            } else {
                0
            },
            flags,
            window,
            urgent: 0,
            options: o,
        };
        let mut ip = Ipv4Header::new(self.local.0, self.remote.0);
        ip.identification = self.ip_id;
        self.ip_id = self.ip_id.wrapping_add(1);
        self.stats.segments_sent += 1;
        Packet::tcp(ip, tcp, payload_len)
    }
}
