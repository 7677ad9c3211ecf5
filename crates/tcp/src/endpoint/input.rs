//! SEGMENT ARRIVES (RFC 9293 §3.10.7): the per-state processing of an incoming segment — CLOSED
//! and LISTEN (§3.10.7.1–2), SYN-SENT (§3.10.7.3) and the synchronized states (§3.10.7.4:
//! sequence acceptability, RST with RFC 5961 challenge ACKs, SYN, the ACK field, text, FIN) —
//! the handshake's option negotiation (RFC 7323 §2.2/§3.2, RFC 2018 §2, RFC 9293 §3.7.1) and the
//! connection's state transitions. The ACK field itself is [`super::ack`]; segment text is
//! [`super::recv`].

use super::{Endpoint, State, DEFAULT_MSS, MSL};
use rantcp_core::Time;
use rantcp_wire::{Ipv4Header, Packet, TcpFlags, TcpHeader, TcpOptions};

impl Endpoint {
    /// Process one incoming segment (its IPv4 and TCP headers and payload length).
    pub fn handle_segment(
        &mut self,
        now: Time,
        ip: &Ipv4Header,
        tcp: &TcpHeader,
        payload_len: u32,
    ) {
        self.segment_arrives(now, ip, tcp, payload_len);
        #[cfg(debug_assertions)]
        self.check_invariants();
    }

    /// RFC 9293 §3.10.7 SEGMENT ARRIVES.
    fn segment_arrives(&mut self, now: Time, ip: &Ipv4Header, tcp: &TcpHeader, payload_len: u32) {
        self.stats.segments_received += 1;
        let f = tcp.flags;
        match self.state {
            State::Closed => {
                // RFC 9293 §3.10.7.1: answer anything but a RST with a RST.
                if !f.rst() {
                    self.rst_pending = reset_for(ip, tcp, payload_len);
                }
                return;
            }
            State::Listen => {
                // RFC 9293 §3.10.7.2.
                if f.rst() {
                    return;
                }
                if f.ack() {
                    self.rst_pending = reset_for(ip, tcp, payload_len);
                    return;
                }
                if f.syn() {
                    self.remote = (ip.src, tcp.src_port);
                    self.rcv.start(tcp.seq, &self.cfg);
                    self.negotiate(tcp);
                    // RFC 7323 §2.2: the window in a SYN is never scaled.
                    self.snd_wnd = tcp.window as u64;
                    self.max_snd_wnd = self.snd_wnd;
                    self.snd_wl1 = 0;
                    self.snd_wl2 = 0;
                    self.state = State::SynReceived;
                    self.syn_pending = true;
                }
                return;
            }
            State::SynSent => {
                self.handle_syn_sent(now, ip, tcp, payload_len);
                return;
            }
            _ => {}
        }

        // ---- synchronized states: RFC 9293 §3.10.7.4 ----
        if self.state == State::SynReceived && f.syn() && !f.ack() && tcp.seq == self.rcv.irs {
            // Retransmitted SYN (our SYN-ACK was lost): resend the SYN-ACK.
            self.syn_pending = true;
            return;
        }
        let seg_len = payload_len as u64 + f.syn() as u64 + f.fin() as u64;
        let seq_pos = self.rcv.pos(tcp.seq);
        let wnd = self.rcv.window() as i64;
        let nxt = self.rcv.nxt as i64;
        // First: check sequence number.
        let acceptable = if seg_len == 0 {
            if wnd == 0 {
                seq_pos == nxt
            } else {
                seq_pos >= nxt && seq_pos < nxt + wnd
            }
        } else if wnd == 0 {
            false
        } else {
            let end = seq_pos + seg_len as i64 - 1;
            (seq_pos >= nxt && seq_pos < nxt + wnd)
                || (end >= nxt && end < nxt + wnd)
                || (seq_pos < nxt && end >= nxt + wnd)
        };
        // RFC 9293 §3.10.7.4: with a zero window, still process ACK and RST of in-sequence segments.
        let zero_wnd_inseq = wnd == 0 && seq_pos == nxt;
        if !acceptable && !zero_wnd_inseq {
            if !f.rst() {
                self.rcv.ack_now = true;
                let end = seq_pos + payload_len as i64;
                if payload_len > 0 && (seq_pos < nxt || (wnd > 0 && seq_pos == nxt + wnd)) {
                    // Linux: data wholly below RCV.NXT (a retransmission) enters quick-ACK
                    // mode, via tcp_send_dupack if it ends before rcv_wup (RCV.NXT of our last
                    // ACK), else via tcp_data_queue, whose ACK is scheduled; so is the ACK for
                    // data starting right at the window's edge (tcp_data_queue's
                    // `out_of_window`; tcp_sequence passes it). Beyond that edge
                    // tcp_send_dupack only ACKs.
                    let scheduled = end >= self.rcv.last_ack_sent as i64;
                    self.rcv.enter_quickack(&self.cfg, scheduled);
                }
                if self.cfg.dsack && payload_len > 0 && seq_pos < nxt {
                    // RFC 2883 §4 (1): an old duplicate (Linux tcp_send_dupack → tcp_dsack_set
                    // of the segment up to RCV.NXT).
                    let end = (seq_pos + payload_len as i64).min(nxt);
                    self.rcv.set_dsack(seq_pos.max(1) as u64, end.max(1) as u64);
                }
            }
            // Old duplicates may still carry a retransmitted FIN in TIME-WAIT.
            if self.state == State::TimeWait && f.fin() {
                self.time_wait_deadline = Some(now + MSL.saturating_mul(2));
            }
            return;
        }
        // Second: RST (RFC 5961 §3.2: exact match resets, otherwise challenge ACK).
        if f.rst() {
            if seq_pos == nxt {
                self.reset_by_peer = true;
                self.enter_closed();
            } else {
                self.rcv.ack_now = true;
            }
            return;
        }
        // Fourth: SYN in a synchronized state.
        if f.syn() {
            // RFC 5961 §4.2 challenge ACK.
            self.rcv.ack_now = true;
            return;
        }
        // Fifth: ACK field.
        if !f.ack() {
            return;
        }
        // RFC 7323 §4.3: TS.Recent from segments covering Last.ACK.sent.
        if self.ts_ok {
            if let Some((tsval, _)) = tcp.options.timestamps {
                if seq_pos <= self.rcv.last_ack_sent as i64
                    && (tsval.wrapping_sub(self.ts_recent) as i32) >= 0
                {
                    self.ts_recent = tsval;
                }
            }
        }
        let ack_pos = self.snd_pos(tcp.ack);
        if self.state == State::SynReceived {
            if ack_pos == 1 {
                self.snd_una = 1;
                self.state = State::Established;
                self.on_synchronized(now);
                self.snd_wnd = (tcp.window as u64) << self.snd_wscale;
                self.max_snd_wnd = self.max_snd_wnd.max(self.snd_wnd);
                self.snd_wl1 = seq_pos;
                self.snd_wl2 = 1;
                if self.fin_queued {
                    self.state = State::FinWait1;
                }
            } else {
                self.rst_pending = reset_for(ip, tcp, payload_len);
                return;
            }
        }
        if ack_pos > self.snd_max as i64 {
            // RFC 9293 §3.10.7.4: ACK for something not yet sent.
            self.rcv.ack_now = true;
            return;
        }
        if ack_pos >= self.snd_una as i64 {
            self.process_ack(now, tcp, payload_len, seq_pos, ack_pos as u64);
        }
        if self.state == State::Closed {
            return;
        }
        // Seventh: segment text; eighth: FIN.
        if matches!(
            self.state,
            State::Established | State::FinWait1 | State::FinWait2
        ) {
            if payload_len > 0 {
                self.process_data(now, seq_pos, payload_len, f.psh());
            }
            if f.fin() {
                let fin_pos = seq_pos + payload_len as i64;
                if fin_pos >= self.rcv.nxt as i64 && self.rcv.peer_fin.is_none() {
                    self.rcv.peer_fin = Some(fin_pos as u64);
                }
            }
            self.check_peer_fin(now);
        } else if f.fin() {
            // CLOSE-WAIT, CLOSING, LAST-ACK: FIN already seen; TIME-WAIT: restart 2 MSL.
            self.rcv.ack_now = true;
            if self.state == State::TimeWait {
                self.time_wait_deadline = Some(now + MSL.saturating_mul(2));
            }
        }
    }

    fn handle_syn_sent(&mut self, now: Time, ip: &Ipv4Header, tcp: &TcpHeader, payload_len: u32) {
        // RFC 9293 §3.10.7.3.
        let f = tcp.flags;
        let ack_ok = f.ack() && tcp.ack == self.iss.wrapping_add(1);
        if f.ack() && !ack_ok {
            if !f.rst() {
                self.rst_pending = reset_for(ip, tcp, payload_len);
            }
            return;
        }
        if f.rst() {
            if ack_ok {
                self.reset_by_peer = true;
                self.enter_closed();
            }
            return;
        }
        if !f.syn() {
            return;
        }
        self.rcv.start(tcp.seq, &self.cfg);
        self.negotiate(tcp);
        if self.ts_ok {
            if let Some((tsval, _)) = tcp.options.timestamps {
                self.ts_recent = tsval;
            }
        }
        // RFC 7323 §2.2: the window in a SYN(-ACK) is not scaled.
        self.snd_wnd = tcp.window as u64;
        self.max_snd_wnd = self.snd_wnd;
        self.snd_wl1 = 0;
        self.snd_wl2 = if ack_ok { 1 } else { 0 };
        if ack_ok {
            self.snd_una = 1;
            self.state = State::Established;
            self.on_synchronized(now);
            self.rcv.ack_now = true;
            if self.fin_queued {
                self.state = State::FinWait1;
            }
        } else {
            // Simultaneous open.
            self.state = State::SynReceived;
            self.syn_pending = true;
        }
    }

    /// Option negotiation from the peer's SYN or SYN-ACK: each feature is on only when both
    /// sides offer it (RFC 7323 §2.2, §3.2; RFC 2018 §2).
    fn negotiate(&mut self, tcp: &TcpHeader) {
        let o = &tcp.options;
        self.sack_ok = self.cfg.sack && o.sack_permitted;
        self.ts_ok = self.cfg.timestamps && o.timestamps.is_some();
        if let Some((tsval, _)) = o.timestamps {
            self.ts_recent = tsval;
        }
        match (self.cfg.window_scaling, o.window_scale) {
            (true, Some(s)) => {
                self.ws_ok = true;
                // RFC 7323 §2.3: shifts above 14 are treated as 14.
                self.snd_wscale = s.min(14);
            }
            _ => {
                self.ws_ok = false;
                self.snd_wscale = 0;
                self.rcv_wscale = 0;
            }
        }
        // RFC 9293 §3.7.1: effective send MSS.
        let peer_mss = o.mss.map(|m| m as u32).unwrap_or(DEFAULT_MSS);
        self.smss = self.cfg.mss.min(peer_mss).max(1);
    }

    /// SYN acknowledged: take the handshake RTT sample (Karn: only if the SYN was not resent).
    fn on_synchronized(&mut self, now: Time) {
        if let Some(t) = self.syn_sent_at.take() {
            self.rtt_sample(now.saturating_since(t));
        } else {
            self.rtt.reset_after_syn_timeout();
        }
        self.rto_deadline = None;
        self.rate.start(now);
        self.sb.lost_mark = 1;
        self.sb.rxt_hint = 1;
        self.recover = 1;
        self.snd_max = self.snd_max.max(1);
    }

    /// TIME-WAIT for 2·MSL (RFC 9293 §3.10.7.4).
    pub(super) fn enter_time_wait(&mut self, now: Time) {
        self.state = State::TimeWait;
        self.rto_deadline = None;
        self.persist_deadline = None;
        self.time_wait_deadline = Some(now + MSL.saturating_mul(2));
    }

    /// CLOSED: every timer stops and nothing more is sent (a pending RST aside).
    pub(super) fn enter_closed(&mut self) {
        self.state = State::Closed;
        self.rto_deadline = None;
        self.persist_deadline = None;
        self.rcv.delack_deadline = None;
        self.time_wait_deadline = None;
        self.rcv.ack_now = false;
        self.syn_pending = false;
        self.probe_pending = false;
        self.pacing_blocked = false;
        self.prr = None;
        self.rack.reo_deadline = None;
        self.rack.pto_deadline = None;
        self.rack.probe_due = false;
        self.sb.clear();
    }
}

/// The RST a host with no matching connection answers to `tcp` (RFC 9293 §3.10.7.1, CLOSED
/// state): `None` if `tcp` itself is a RST.
pub fn reset_for(ip: &Ipv4Header, tcp: &TcpHeader, payload_len: u32) -> Option<Packet> {
    if tcp.flags.rst() {
        return None;
    }
    let (seq, ack, flags) = if tcp.flags.ack() {
        // <SEQ=SEG.ACK><CTL=RST>
        (tcp.ack, 0, TcpFlags::RST)
    } else {
        // <SEQ=0><ACK=SEG.SEQ+SEG.LEN><CTL=RST,ACK>
        let seg_len = payload_len + tcp.flags.syn() as u32 + tcp.flags.fin() as u32;
        (
            0,
            tcp.seq.wrapping_add(seg_len),
            TcpFlags::RST | TcpFlags::ACK,
        )
    };
    let h = TcpHeader {
        src_port: tcp.dst_port,
        dst_port: tcp.src_port,
        seq,
        ack,
        flags,
        window: 0,
        urgent: 0,
        options: TcpOptions::default(),
    };
    Some(Packet::tcp(Ipv4Header::new(ip.dst, ip.src), h, 0))
}
