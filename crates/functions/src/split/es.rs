//! ES-TCP's acknowledgement gate (dissertation §5.4.1, Figures 34–38): what the ES-TCP host
//! (EH) acknowledges to the far host (FH) on TCP_WAN, given what it received and what the mobile
//! host (MH) has acknowledged on TCP_RAN.
//!
//! The EH's own TCP receiver computes ordinary ACKs; the gate rewrites each one's acknowledgement
//! number and window, or suppresses it, by the five rules of §5.4.1 with K = 2:
//! 1. new data that leaves fewer than 3 bytes beyond what the FH has been acknowledged is not
//!    acknowledged (the MH's ACK will do it);
//! 2. otherwise acknowledge all but the last 2 received bytes (`ack = received − 2`);
//! 3. with `rwin > 0`, run an estimated RTO (shorter than the FH's); if it expires with no new
//!    data from the FH and no final MH acknowledgement, freeze the FH: acknowledge 1 of the 2
//!    reserved bytes with `rwin = 0` (Figure 37 #8);
//! 4. with `rwin = 0` the ACK itself freezes the FH; when the window opens, the window update
//!    acknowledges 1 of the 2 reserved bytes (Figure 36 #5); a retransmission of the reserved
//!    bytes from the FH freezes it at once (Figure 38 #9). A timer or retransmission freeze
//!    also ends when the window opens beyond what it was (the FH was window-limited rather
//!    than done: §5.4.1 is silent here, and staying frozen until the MH has the whole buffer
//!    stalls the FH into RTOs);
//! 5. once the MH has acknowledged every byte the EH received and nothing is pending, the last
//!    reserved byte (and a received FIN) is acknowledged (Figure 36 #8).
//!
//! Positions count sequence space after the FH's SYN: data byte `n` is position `n`, an
//! acknowledgement of position `a` says "everything before `a`"; a FIN occupies the position
//! after the last data byte. The gate is pure state: its caller (the split host) feeds it the
//! events and puts its answers on the wire.

use rantcp_core::{Duration, Time};

/// Bytes the EH withholds (§5.4.1: "K = 2 is assumed throughout").
pub const RESERVED: u64 = 2;

/// Why the FH is frozen (zero window advertised while bytes stay reserved).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Freeze {
    /// The EH's receive buffer is full (rule 4, Figure 36 #4).
    Window,
    /// The estimated RTO expired (rule 3, Figure 37 #8).
    Timer,
    /// The FH retransmitted reserved bytes (Figure 38 #9).
    Retransmit,
}

/// The acknowledgement and window the gate puts on one ACK to the FH.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GateAck {
    /// Acknowledged position (see the module docs).
    pub ack: u64,
    /// Window in bytes (0 freezes the FH).
    pub window: u64,
}

/// ES-TCP's acknowledgement gate for one TCP_WAN connection.
#[derive(Clone, Debug)]
pub struct EsGate {
    /// Highest position acknowledged to the FH so far (acknowledgements never go back).
    acked: u64,
    /// In-order data bytes received from the FH.
    received: u64,
    /// The FH's FIN was received in order.
    fin: bool,
    freeze: Option<Freeze>,
    /// Rule 1: the next ACK is for fewer than 3 new + reserved bytes.
    suppress_next: bool,
    /// The MH acknowledged everything received and nothing is pending (rule 5).
    released: bool,
    est_rto: Duration,
    timer: Option<Time>,
    /// The window of the last ACK rewritten, and the one when a timer or retransmission
    /// freeze began: a larger window later means buffer space became available (rule 4).
    last_window: u64,
    frozen_window: u64,
    /// Counters for the report.
    pub freezes_window: u64,
    pub freezes_timer: u64,
    pub freezes_retransmit: u64,
    pub suppressed: u64,
    pub releases: u64,
}

impl EsGate {
    /// A gate whose estimated RTO for the FH is `est_rto` (rule 3).
    pub fn new(est_rto: Duration) -> Self {
        EsGate {
            acked: 0,
            received: 0,
            fin: false,
            freeze: None,
            suppress_next: false,
            released: false,
            est_rto,
            timer: None,
            last_window: 0,
            frozen_window: 0,
            freezes_window: 0,
            freezes_timer: 0,
            freezes_retransmit: 0,
            suppressed: 0,
            releases: 0,
        }
    }

    /// Change the estimated RTO (the caller refines it from TCP_WAN's RTT estimate).
    pub fn set_est_rto(&mut self, d: Duration) {
        self.est_rto = d;
    }
    pub fn est_rto(&self) -> Duration {
        self.est_rto
    }
    /// Highest position acknowledged to the FH.
    pub fn acked(&self) -> u64 {
        self.acked
    }
    pub fn freeze(&self) -> Option<Freeze> {
        self.freeze
    }
    /// Bytes received from the FH that the FH has not been told about.
    pub fn withheld(&self) -> u64 {
        (self.received + self.fin as u64).saturating_sub(self.acked)
    }

    /// A segment from the FH: `new_bytes` in-order data bytes it added (0 for a pure ACK or an
    /// out-of-order segment), whether it completed the FIN in order, and whether it carried only
    /// sequence space already received (a retransmission).
    pub fn on_fh_segment(&mut self, new_bytes: u64, fin: bool, retransmission: bool) {
        if new_bytes > 0 || (fin && !self.fin) {
            self.received += new_bytes;
            self.fin |= fin;
            self.released = false;
            // New data from the FH ends a timer or retransmission freeze (rule 3: "if there is
            // not a new packet from FH").
            if matches!(self.freeze, Some(Freeze::Timer | Freeze::Retransmit)) {
                self.freeze = None;
            }
            // Rule 1: new + reserved bytes < 3 are not acknowledged.
            self.suppress_next = self.received.saturating_sub(self.acked) < RESERVED + 1;
        } else if retransmission && self.withheld() > 0 && self.freeze.is_none() {
            // Figure 38: the FH retransmits reserved bytes; the ACK it triggers freezes it.
            self.freeze = Some(Freeze::Retransmit);
            self.frozen_window = self.last_window;
            self.freezes_retransmit += 1;
            self.timer = None;
        }
    }

    /// The MH has acknowledged every byte received so far and nothing is waiting to be sent to
    /// it (`all_delivered`), or no longer so. Returns true when an ACK must be sent to the FH now
    /// to release the reserved bytes (rule 5).
    pub fn on_mh_progress(&mut self, all_delivered: bool) -> bool {
        self.released = all_delivered;
        all_delivered && self.received + self.fin as u64 > self.acked
    }

    /// The acknowledgement for an ACK the EH's receiver wants to send to the FH, advertising
    /// `window` bytes; `None` suppresses it (rule 1).
    pub fn rewrite(&mut self, now: Time, window: u64) -> Option<GateAck> {
        let frozen_window = self.frozen_window;
        self.last_window = window;
        let full = self.received + self.fin as u64;
        if self.released {
            // Rule 5: the MH has everything; acknowledge all, unfreeze.
            if full > self.acked {
                self.releases += 1;
            }
            self.freeze = None;
            self.timer = None;
            self.suppress_next = false;
            return Some(self.send(full, window));
        }
        if std::mem::take(&mut self.suppress_next) && window > 0 && self.freeze.is_none() {
            self.suppressed += 1;
            return None;
        }
        // Position after the second-last received byte: 1 of the 2 reserved bytes.
        let one = self.received.saturating_sub(RESERVED - 1);
        let two = self.received.saturating_sub(RESERVED);
        match self.freeze {
            Some(Freeze::Timer | Freeze::Retransmit) if window <= frozen_window => {
                Some(self.send(one, 0))
            }
            // The buffer opened while the FH was frozen (it may have been window-limited, not
            // idle): unfreeze as rule 4 does, 1 reserved byte acknowledged.
            Some(Freeze::Timer | Freeze::Retransmit) => {
                self.freeze = None;
                self.arm(now);
                Some(self.send(one, window))
            }
            Some(Freeze::Window) if window > 0 => {
                // Rule 4: the window update unfreezes with 1 reserved byte acknowledged.
                self.freeze = None;
                self.arm(now);
                Some(self.send(one, window))
            }
            _ if window == 0 => {
                if self.freeze.is_none() {
                    self.freezes_window += 1;
                }
                self.freeze = Some(Freeze::Window);
                self.timer = None;
                Some(self.send(two, 0))
            }
            _ => {
                // Rules 2 and 3.
                self.arm(now);
                Some(self.send(two, window))
            }
        }
    }

    fn send(&mut self, ack: u64, window: u64) -> GateAck {
        self.acked = self.acked.max(ack);
        GateAck {
            ack: self.acked,
            window,
        }
    }

    fn arm(&mut self, now: Time) {
        self.timer = (self.withheld() > 0).then(|| now + self.est_rto);
    }

    /// When the estimated RTO expires.
    pub fn poll_timeout(&self) -> Option<Time> {
        self.timer
    }

    /// The estimated RTO expired: true when the FH must be frozen now (send the ACK
    /// [`EsGate::rewrite`] gives).
    pub fn handle_timeout(&mut self, now: Time) -> bool {
        match self.timer {
            Some(t) if t <= now => {
                self.timer = None;
                if self.freeze.is_none() && !self.released && self.withheld() > 0 {
                    self.freeze = Some(Freeze::Timer);
                    self.frozen_window = self.last_window;
                    self.freezes_timer += 1;
                    return true;
                }
                false
            }
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(x: u64) -> Duration {
        Duration::from_millis(x)
    }
    fn at(x: u64) -> Time {
        Time::ZERO + ms(x)
    }
    fn ack(a: u64, w: u64) -> Option<GateAck> {
        Some(GateAck { ack: a, window: w })
    }

    /// Figure 36, the FH side: 998, 1998 with rwin 0, window update 1999, 2998, 3000.
    #[test]
    fn test_figure_36_states() {
        let mut g = EsGate::new(ms(300));
        g.on_fh_segment(1000, false, false);
        assert_eq!(g.rewrite(at(10), 1000), ack(998, 1000));
        assert_eq!(g.poll_timeout(), Some(at(310)));
        g.on_fh_segment(1000, false, false);
        assert_eq!(g.rewrite(at(20), 0), ack(1998, 0));
        assert_eq!((g.freeze(), g.poll_timeout()), (Some(Freeze::Window), None));
        assert_eq!(g.rewrite(at(30), 1000), ack(1999, 1000));
        assert_eq!(g.freeze(), None);
        g.on_fh_segment(1000, false, false);
        assert_eq!(g.rewrite(at(40), 1000), ack(2998, 1000));
        assert_eq!(g.withheld(), 2);
        assert!(!g.on_mh_progress(false));
        assert!(g.on_mh_progress(true));
        assert_eq!(g.rewrite(at(50), 3000), ack(3000, 3000));
        assert_eq!((g.withheld(), g.poll_timeout(), g.releases), (0, None, 1));
        // The FH's FIN is acknowledged at once: the MH has everything.
        g.on_fh_segment(0, true, false);
        assert!(g.on_mh_progress(true));
        assert_eq!(g.rewrite(at(60), 3000), ack(3001, 3000));
    }

    /// Figure 37: the estimated RTO expires after #7; #8 acknowledges 2999 with rwin 0, #9 3000.
    #[test]
    fn test_figure_37_timer_freeze() {
        let mut g = EsGate::new(ms(300));
        g.on_fh_segment(3000, false, false);
        assert_eq!(g.rewrite(at(40), 5000), ack(2998, 5000));
        assert!(!g.handle_timeout(at(339)), "early call is harmless");
        assert!(g.handle_timeout(at(340)));
        assert_eq!(g.rewrite(at(340), 5000), ack(2999, 0));
        assert_eq!((g.freeze(), g.freezes_timer), (Some(Freeze::Timer), 1));
        // A probe ACK while frozen stays frozen.
        assert_eq!(g.rewrite(at(400), 5000), ack(2999, 0));
        assert!(g.on_mh_progress(true));
        assert_eq!(g.rewrite(at(500), 5000), ack(3000, 5000));
        assert_eq!(g.freeze(), None);
    }

    /// Figure 38: the FH retransmits the reserved bytes before the timer; the EH freezes it.
    #[test]
    fn test_figure_38_retransmission_freeze() {
        let mut g = EsGate::new(ms(300));
        g.on_fh_segment(3000, false, false);
        assert_eq!(g.rewrite(at(40), 5000), ack(2998, 5000));
        g.on_fh_segment(0, false, true);
        assert_eq!(g.poll_timeout(), None);
        assert_eq!(g.rewrite(at(250), 5000), ack(2999, 0));
        assert_eq!(g.freezes_retransmit, 1);
        assert!(!g.handle_timeout(at(340)));
        assert!(g.on_mh_progress(true));
        assert_eq!(g.rewrite(at(500), 5000), ack(3000, 5000));
    }

    /// A timer freeze ends when the buffer opens further, not on a repeated window.
    #[test]
    fn test_timer_freeze_ends_when_the_window_grows() {
        let mut g = EsGate::new(ms(100));
        g.on_fh_segment(5000, false, false);
        assert_eq!(g.rewrite(at(0), 500), ack(4998, 500));
        assert!(g.handle_timeout(at(100)));
        assert_eq!(g.rewrite(at(100), 500), ack(4999, 0));
        assert_eq!(
            g.rewrite(at(150), 500),
            ack(4999, 0),
            "same window: still frozen"
        );
        assert_eq!(
            g.rewrite(at(200), 3000),
            ack(4999, 3000),
            "the buffer opened"
        );
        assert_eq!((g.freeze(), g.poll_timeout()), (None, Some(at(300))));
    }

    /// Rule 1: 1 or 2 bytes beyond what the FH knows are left for the MH's ACK; a third is not.
    #[test]
    fn test_rule_1_small_segments() {
        let mut g = EsGate::new(ms(300));
        g.on_fh_segment(1, false, false);
        assert_eq!(g.rewrite(at(1), 1000), None);
        g.on_fh_segment(1, false, false);
        assert_eq!(g.rewrite(at(2), 1000), None);
        g.on_fh_segment(1, false, false);
        assert_eq!(g.rewrite(at(3), 1000), ack(1, 1000));
        assert_eq!(g.suppressed, 2);
        // The MH acknowledges all three: released without a timer.
        assert!(g.on_mh_progress(true));
        assert_eq!(g.rewrite(at(4), 1000), ack(3, 1000));
    }

    /// New data ends a timer freeze; the acknowledgement never goes back.
    #[test]
    fn test_new_data_unfreezes_and_ack_is_monotonic() {
        let mut g = EsGate::new(ms(100));
        g.on_fh_segment(1000, false, false);
        assert_eq!(g.rewrite(at(0), 8000), ack(998, 8000));
        assert!(g.handle_timeout(at(100)));
        assert_eq!(g.rewrite(at(100), 8000), ack(999, 0));
        g.on_fh_segment(1000, false, false);
        assert_eq!(g.freeze(), None);
        assert_eq!(g.rewrite(at(150), 8000), ack(1998, 8000));
        // A duplicate ACK (out-of-order arrival) repeats the same acknowledgement.
        g.on_fh_segment(0, false, false);
        assert_eq!(g.rewrite(at(151), 8000), ack(1998, 8000));
        // A FIN before the MH has everything: the FIN plus 2 reserved bytes count as fewer
        // than 3 new bytes (rule 1), so its ACK is not sent; a repeated FIN freezes the FH.
        g.on_fh_segment(0, true, false);
        assert_eq!(g.rewrite(at(152), 8000), None);
        assert_eq!(g.withheld(), 3);
        g.on_fh_segment(0, false, true);
        assert_eq!(g.rewrite(at(400), 8000), ack(1999, 0));
        assert!(g.on_mh_progress(true));
        assert_eq!(g.rewrite(at(500), 8000), ack(2001, 8000));
    }
}
