//! The application's side of the connection (RFC 9293 §3.10.1–§3.10.5, as byte counts): the send
//! buffer (what is queued and not yet acknowledged), the receive buffer (what arrived in order
//! and is not yet read, with the window update reading triggers), CLOSE, ABORT, and forgetting a
//! connection without a word (what a video client that moved on does).

use super::{Endpoint, State};
use rantcp_wire::{Ipv4Header, Packet, TcpFlags, TcpHeader, TcpOptions};

impl Endpoint {
    /// Queue up to `bytes` for sending; returns how many fit in the send buffer.
    pub fn send(&mut self, bytes: u64) -> u64 {
        if self.fin_queued
            || !matches!(
                self.state,
                State::Listen
                    | State::SynSent
                    | State::SynReceived
                    | State::Established
                    | State::CloseWait
            )
        {
            return 0;
        }
        let n = bytes.min(self.send_buffer_free());
        self.app_end += n;
        n
    }
    /// Free space in the send buffer, bytes.
    pub fn send_buffer_free(&self) -> u64 {
        self.cfg.snd_buf_bytes.saturating_sub(self.send_backlog())
    }
    /// Bytes the application has queued that the peer has not yet acknowledged.
    pub fn send_backlog(&self) -> u64 {
        self.app_end - self.snd_una.clamp(1, self.app_end)
    }
    /// In-order bytes waiting to be read.
    pub fn readable(&self) -> u64 {
        self.rcv.readable()
    }
    /// Read up to `max` bytes; returns how many were read. Reading opens the receive window.
    pub fn recv(&mut self, max: u64) -> u64 {
        let n = max.min(self.readable());
        if n == 0 {
            return 0;
        }
        self.rcv.read += n;
        if matches!(
            self.state,
            State::Established | State::FinWait1 | State::FinWait2
        ) && !self.rcv.fin_received
            && self
                .rcv
                .window_update_due(&self.cfg, self.rcv_wscale, self.smss)
        {
            // RFC 9293 §3.8.6.2.2 / RFC 1122 §4.2.3.3: send a window update once reading
            // opens a small or zero window by at least min(rcv_buf/2, MSS).
            self.rcv.ack_now = true;
        }
        n
    }
    /// The peer's FIN has been received and all data before it read.
    pub fn peer_closed(&self) -> bool {
        self.rcv.fin_received && self.readable() == 0
    }
    /// Data bytes sent at least once (the highest sequence sent, as a byte count).
    pub fn data_bytes_sent(&self) -> u64 {
        self.snd_max.min(self.app_end).saturating_sub(1)
    }
    /// Total bytes the application has queued since the connection opened.
    pub fn bytes_queued(&self) -> u64 {
        self.app_end - 1
    }
    /// All queued data (and the FIN, if closing) has been acknowledged.
    pub fn all_acked(&self) -> bool {
        self.snd_una >= self.app_end && (!self.fin_queued || self.snd_una > self.app_end)
    }
    /// Acknowledge now: the next [`Endpoint::poll_transmit`] sends an ACK (with the current
    /// window and options) even if the delayed-ACK rules would wait, and the pending delayed
    /// ACK is thereby sent. For a network function that terminates connections (the split
    /// host's ES-TCP freeze and release, AS-TCP's MH ack, dissertation §5.4.1 and §5.5.1).
    /// Ignored before the connection is synchronized.
    pub fn ack_now(&mut self) {
        if !matches!(
            self.state,
            State::Listen | State::SynSent | State::SynReceived | State::Closed
        ) {
            self.rcv.ack_now = true;
        }
    }
    /// Close after queued data (FIN).
    pub fn close(&mut self) {
        match self.state {
            State::Listen | State::SynSent => self.enter_closed(),
            State::SynReceived => self.fin_queued = true,
            State::Established => {
                self.fin_queued = true;
                self.state = State::FinWait1;
            }
            State::CloseWait => {
                self.fin_queued = true;
                self.state = State::LastAck;
            }
            _ => {}
        }
    }
    /// The application deletes the connection without a word to the peer, as a video player
    /// that moved on to a new connection does (dissertation §4.2, Figure 14): the TCB goes to
    /// CLOSED and nothing is sent now; every segment that still arrives for it is answered with
    /// a RST (RFC 9293 §3.10.7.1), as for a connection the host never had.
    pub fn forget(&mut self) {
        self.enter_closed();
    }
    /// Abort with RST (RFC 9293 §3.10.5: <SEQ=SND.NXT><CTL=RST> in synchronized states).
    pub fn abort(&mut self) {
        let send_rst = matches!(
            self.state,
            State::SynReceived
                | State::Established
                | State::FinWait1
                | State::FinWait2
                | State::CloseWait
        );
        if send_rst {
            let pos = self.snd_max;
            let mut tcp = TcpHeader {
                src_port: self.local.1,
                dst_port: self.remote.1,
                seq: self.snd_seq(pos),
                ack: 0,
                flags: TcpFlags::RST,
                window: 0,
                urgent: 0,
                options: TcpOptions::default(),
            };
            if self.state == State::SynReceived {
                tcp.flags = TcpFlags::RST | TcpFlags::ACK;
                tcp.ack = self.rcv.seq(self.rcv.nxt);
            }
            let ip = Ipv4Header::new(self.local.0, self.remote.0);
            self.enter_closed();
            self.rst_pending = Some(Packet::tcp(ip, tcp, 0));
        } else {
            self.enter_closed();
        }
    }
}
