//! Restarting after an idle period (RFC 5681 §4.1): a sender that has sent no data for longer
//! than the RTO no longer has a valid estimate of the path's state (its ACK clock has stopped),
//! so before it transmits again it sets cwnd to no more than the restart window RW =
//! min(IW, cwnd).
//!
//! The two stack profiles ([`CwndRules`]) differ in how:
//! * `Rfc`: cwnd = RW, ssthresh unchanged (RFC 5681 §4.1 as written).
//! * `Linux`: `tcp_cwnd_restart` (net/ipv4/tcp_output.c, run from
//!   `tcp_slow_start_after_idle_check` when the application queues data with nothing in
//!   flight, `net.ipv4.tcp_slow_start_after_idle = 1`, the default): ssthresh is first raised to
//!   at least ¾ cwnd (`tcp_current_ssthresh`), then cwnd is halved once for every full RTO of
//!   the idle time after the first, but not below RW. Linux skips this for controllers with
//!   their own `cong_control` (BBR), and so does rantcp (the controller declines).
//!
//! "Idle" is measured from the last data segment sent (Linux `lsndtime`: any data segment,
//! retransmissions included) to the moment new data is about to go with nothing outstanding.

use super::Endpoint;
use crate::cc::CongestionControl;
use crate::CwndRules;
use rantcp_core::{Duration, Time};

/// The window after `idle` without sending (already known to exceed `rto`): (cwnd, ssthresh).
/// `iw` is the initial window in bytes.
pub fn restart_window(
    rules: CwndRules,
    cwnd: u64,
    ssthresh: u64,
    iw: u64,
    idle: Duration,
    rto: Duration,
) -> (u64, u64) {
    let rw = iw.min(cwnd); // RFC 5681 §4.1: RW = min(IW, cwnd)
    match rules {
        CwndRules::Rfc => (rw, ssthresh),
        CwndRules::Linux => {
            // tcp_current_ssthresh (not in a cwnd reduction: nothing is outstanding).
            let ss = ssthresh.max((cwnd >> 1) + (cwnd >> 2));
            // while ((delta -= rto) > 0 && cwnd > restart_cwnd) cwnd >>= 1;
            let mut w = cwnd;
            let mut left = idle.0 as i128;
            let step = rto.0.max(1) as i128;
            loop {
                left -= step;
                if left <= 0 || w <= rw {
                    break;
                }
                w >>= 1;
            }
            (w.max(rw), ss)
        }
    }
}

impl Endpoint {
    /// Before new data goes out: restart the window if the sender has been idle (nothing
    /// outstanding, no data sent) for longer than the RTO (RFC 5681 §4.1).
    pub(super) fn restart_if_idle(&mut self, now: Time) {
        if !self.cfg.slow_start_after_idle || self.snd_max > self.snd_una {
            return;
        }
        let Some(last) = self.last_data_sent else {
            return; // the first data of the connection: IW applies anyway
        };
        let idle = now.saturating_since(last);
        let rto = self.rtt.rto();
        if idle <= rto {
            return;
        }
        let iw = self.cfg.initial_cwnd_segments as u64 * self.smss as u64;
        let (cwnd, ssthresh) = restart_window(
            self.cfg.cwnd_rules,
            self.cc.cwnd(),
            self.cc.ssthresh(),
            iw,
            idle,
            rto,
        );
        if self.cc.on_idle_restart(now, cwnd, ssthresh) {
            self.stats.idle_restarts += 1;
        }
        // The idle period is over whether or not the controller took the restart.
        self.last_data_sent = Some(now);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1448;
    const IW: u64 = 10 * MSS;
    const INF: u64 = u64::MAX;

    fn ms(v: u64) -> Duration {
        Duration::from_millis(v)
    }

    #[test]
    fn rfc_restart_is_min_of_iw_and_cwnd_and_keeps_ssthresh() {
        // A large window comes back to IW whatever the idle time.
        assert_eq!(
            restart_window(CwndRules::Rfc, 100 * MSS, 70 * MSS, IW, ms(250), ms(200)),
            (IW, 70 * MSS)
        );
        assert_eq!(
            restart_window(CwndRules::Rfc, 100 * MSS, INF, IW, ms(10_000), ms(200)),
            (IW, INF)
        );
        // A window already below IW stays where it is (RW = min(IW, cwnd)).
        assert_eq!(
            restart_window(CwndRules::Rfc, 4 * MSS, 2 * MSS, IW, ms(300), ms(200)),
            (4 * MSS, 2 * MSS)
        );
    }

    #[test]
    fn linux_halves_per_rto_of_idle_not_below_rw_and_raises_ssthresh() {
        let cwnd = 160 * MSS;
        // Idle 1.5 RTO: delta − rto > 0 once, one halving; ssthresh ← max(40, 120) segments.
        assert_eq!(
            restart_window(CwndRules::Linux, cwnd, 40 * MSS, IW, ms(300), ms(200)),
            (80 * MSS, 120 * MSS)
        );
        // Idle exactly 2 RTO: after the first subtraction 200 ms > 0 → halve; then 0, stop.
        assert_eq!(
            restart_window(CwndRules::Linux, cwnd, 40 * MSS, IW, ms(400), ms(200)),
            (80 * MSS, 120 * MSS)
        );
        // Idle 3.5 RTO: three halvings, 160 → 20 segments; ssthresh above ¾ cwnd is kept.
        assert_eq!(
            restart_window(CwndRules::Linux, cwnd, 150 * MSS, IW, ms(700), ms(200)),
            (20 * MSS, 150 * MSS)
        );
        // Long idle: the halvings stop at RW = IW.
        assert_eq!(
            restart_window(CwndRules::Linux, cwnd, INF, IW, ms(60_000), ms(200)),
            (IW, INF)
        );
        // A halving that lands below RW is lifted back to RW.
        assert_eq!(
            restart_window(CwndRules::Linux, 25_000, 10_000, IW, ms(5_000), ms(200)),
            (IW, 18_750)
        );
        // cwnd below IW: RW = cwnd, no halving.
        assert_eq!(
            restart_window(CwndRules::Linux, 4 * MSS, 2 * MSS, IW, ms(5_000), ms(200)),
            (4 * MSS, 3 * MSS)
        );
    }
}
