//! Delivery-rate sampling (draft-cheng-iccrg-delivery-rate-estimation, as Linux
//! `tcp_rate.c`): the connection-level counters of §3.1, the per-packet snapshot taken at
//! transmission (§3.2 OnPacketSent), the per-ACK sample built from the most recently sent packet
//! the ACK delivers (§3.3 UpdateRateSample / GenerateRateSample) and the application-limited
//! mark (§3.4).

use super::scoreboard::{Seg, F_APP_LIMITED};
use crate::cc::RateSample;
use rantcp_core::{Duration, Time};

/// Delivery-rate sample under construction for one ACK (draft §3.3).
#[derive(Clone, Copy, Default)]
pub(super) struct RsBuild {
    has_data: bool,
    prior_delivered: u64,
    prior_time: Time,
    send_elapsed: Duration,
    is_app_limited: bool,
    sent: Time,
}

impl RsBuild {
    /// P.delivered of the most recently sent packet this ACK delivered (the sample's
    /// `prior_delivered`), if it delivered any.
    pub fn prior_delivered(&self) -> Option<u64> {
        self.has_data.then_some(self.prior_delivered)
    }
}

/// Connection-level delivery-rate state (draft §3.1).
#[derive(Debug, Default)]
pub(super) struct RateSampler {
    /// C.delivered: bytes cumulatively ACKed or SACKed.
    pub delivered: u64,
    /// C.delivered_time.
    pub delivered_time: Time,
    /// C.first_sent_time.
    pub first_sent_time: Time,
    /// C.app_limited: `delivered + pipe` when the sender ran out of data, 0 when not
    /// application-limited (§3.4).
    pub app_limited: u64,
    /// The most recent sample handed to the controller.
    pub last_rate: Option<RateSample>,
}

impl RateSampler {
    /// The connection is established at `now`: the first flight starts the clock.
    pub fn start(&mut self, now: Time) {
        self.delivered_time = now;
        self.first_sent_time = now;
    }

    /// Snapshot the connection state into a packet being (re)transmitted (draft §3.2
    /// OnPacketSent). `nothing_outstanding` is Linux's packets_out == 0: nothing outstanding at
    /// all (a retransmission always has something outstanding).
    pub fn stamp(&mut self, now: Time, s: &mut Seg, nothing_outstanding: bool) {
        if nothing_outstanding {
            self.first_sent_time = now;
            self.delivered_time = now;
        }
        s.sent = now;
        s.first_sent = self.first_sent_time;
        s.delivered_time = self.delivered_time;
        s.delivered = self.delivered;
        if self.app_limited != 0 {
            s.flags |= F_APP_LIMITED;
        } else {
            s.flags &= !F_APP_LIMITED;
        }
    }

    /// Bookkeeping for one newly delivered packet (draft §3.3 UpdateRateSample).
    pub fn on_delivered(&mut self, now: Time, p: &Seg, bytes: u64, rs: &mut RsBuild) {
        self.delivered += bytes;
        self.delivered_time = now;
        if !rs.has_data
            || p.delivered > rs.prior_delivered
            || (p.delivered == rs.prior_delivered && p.sent >= rs.sent)
        {
            rs.has_data = true;
            rs.prior_delivered = p.delivered;
            rs.prior_time = p.delivered_time;
            rs.is_app_limited = p.flags & F_APP_LIMITED != 0;
            rs.send_elapsed = p.sent.saturating_since(p.first_sent);
            rs.sent = p.sent;
            self.first_sent_time = p.sent;
        }
    }

    /// The sample of one ACK (draft §3.3 GenerateRateSample), `None` when the ACK delivered
    /// nothing or the interval is unreliable.
    pub fn finish(&self, now: Time, rs: &RsBuild, min_rtt: Duration) -> Option<RateSample> {
        if !rs.has_data {
            return None;
        }
        let ack_elapsed = self.delivered_time.saturating_since(rs.prior_time);
        let interval = rs.send_elapsed.max(ack_elapsed);
        // Linux tcp_rate_gen: intervals shorter than min_rtt are unreliable (ACK compression).
        if interval.0 == 0 || interval < min_rtt {
            return None;
        }
        Some(RateSample {
            delivered: self.delivered - rs.prior_delivered,
            interval,
            prior_delivered: rs.prior_delivered,
            is_app_limited: rs.is_app_limited,
            rtt: now.saturating_since(rs.sent),
        })
    }

    /// Draft §3.4: the sender has no data to send while cwnd has room: the samples of what is
    /// in flight now are application-limited.
    pub fn mark_app_limited(&mut self, pipe: u64) {
        self.app_limited = (self.delivered + pipe).max(1);
    }

    /// Draft §3.4: the application-limited phase ends once what was in flight when it began is
    /// delivered.
    pub fn end_app_limited_if_passed(&mut self) {
        if self.app_limited != 0 && self.delivered > self.app_limited {
            self.app_limited = 0;
        }
    }

    pub fn is_app_limited(&self) -> bool {
        self.app_limited != 0
    }
}
