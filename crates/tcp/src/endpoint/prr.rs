//! Proportional Rate Reduction (RFC 6937; RFC 9937, which obsoletes it, and Linux
//! `tcp_cwnd_reduction`): how much the sender may send on each ACK during fast recovery.
//!
//! While pipe is above ssthresh, PRR spreads the window reduction over the recovery round:
//! sndcnt = ⌈prr_delivered · ssthresh / RecoverFS⌉ − prr_out. Once pipe has fallen to ssthresh
//! or below (burst losses), a reduction bound lets pipe grow back towards ssthresh: PRR-CRB
//! sends no more than was delivered (prr_delivered − prr_out); PRR-SSRB one segment more per
//! ACK; RFC 9937 and Linux take max(prr_delivered − prr_out, DeliveredData) and add the segment
//! only on a "safe" ACK (one that advances SND.UNA and reveals no new loss). The first ACK of
//! recovery always lets the fast retransmission out. Sizes are bytes; the endpoint lets a whole
//! segment out whenever sndcnt is positive (Linux and the RFC's examples count whole segments).

/// Which reduction bound applies when pipe ≤ ssthresh.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReductionBound {
    /// RFC 6937 PRR-CRB: limit = prr_delivered − prr_out (strict packet conservation).
    Conservative,
    /// RFC 6937 PRR-SSRB: limit = max(prr_delivered − prr_out, DeliveredData) + MSS.
    SlowStart,
    /// RFC 9937 §6 and Linux: limit = max(prr_delivered − prr_out, DeliveredData), + MSS on a
    /// safe ACK.
    SafeAck,
}

/// PRR state of one recovery episode.
#[derive(Clone, Copy, Debug)]
pub struct Prr {
    /// Reduction bound used when pipe ≤ ssthresh.
    pub bound: ReductionBound,
    /// Target window after recovery, bytes (the controller's ssthresh).
    ssthresh: u64,
    /// RecoverFS: the flight to be recovered, bytes.
    recover_fs: u64,
    /// Bytes delivered to the receiver during recovery (prr_delivered).
    delivered: u64,
    /// Bytes sent during recovery (prr_out).
    out: u64,
}

impl Prr {
    /// Initialisation at the start of recovery (RFC 6937 §3): `ssthresh` from the controller,
    /// `recover_fs` the data outstanding and not yet delivered (RFC 9937 §6.1: SND.NXT − SND.UNA
    /// less what was SACKed before the ACK that starts recovery).
    pub fn new(bound: ReductionBound, ssthresh: u64, recover_fs: u64) -> Self {
        Prr {
            bound,
            ssthresh,
            recover_fs: recover_fs.max(1),
            delivered: 0,
            out: 0,
        }
    }

    /// On every ACK during recovery (RFC 6937 §3): `delivered` = DeliveredData of this ACK
    /// (change in SND.UNA plus change in SACKed bytes), `pipe` after processing it (RFC 6675),
    /// `safe_ack` as RFC 9937 defines it. Returns sndcnt, the bytes that may be sent now.
    pub fn on_ack(&mut self, delivered: u64, pipe: u64, safe_ack: bool, mss: u64) -> u64 {
        self.delivered += delivered;
        let sndcnt = if pipe > self.ssthresh {
            // Proportional Rate Reduction.
            (self.delivered * self.ssthresh)
                .div_ceil(self.recover_fs)
                .saturating_sub(self.out)
        } else {
            let banked = self.delivered.saturating_sub(self.out);
            let limit = match self.bound {
                ReductionBound::Conservative => banked,
                ReductionBound::SlowStart => banked.max(delivered) + mss,
                ReductionBound::SafeAck => banked.max(delivered) + if safe_ack { mss } else { 0 },
            };
            (self.ssthresh - pipe).min(limit)
        };
        // RFC 9937 §6.3 / Linux: force the fast retransmission on entering recovery.
        if self.out == 0 {
            sndcnt.max(mss)
        } else {
            sndcnt
        }
    }

    /// Data (new or retransmitted) sent during recovery (prr_out += data sent).
    pub fn on_sent(&mut self, bytes: u64) {
        self.out += bytes;
    }

    /// prr_delivered, bytes.
    pub fn delivered(&self) -> u64 {
        self.delivered
    }
    /// prr_out, bytes.
    pub fn out(&self) -> u64 {
        self.out
    }
}

#[cfg(test)]
mod tests {
    //! RFC 6937 §3.1's examples, in segments (MSS = 1): cwnd = FlightSize = pipe = 20,
    //! ssthresh = 10, Limited Transmit sends 2 new segments on the first 2 duplicate ACKs, the
    //! third starts recovery. Each ACK below acknowledges one segment by SACK (DeliveredData = 1).
    use super::*;

    /// Drive one ACK: pipe falls by one (the SACKed segment) and by `newly_lost`, PRR says how
    /// much may go, and that is sent. Returns the number sent.
    fn step(p: &mut Prr, pipe: &mut u64, newly_lost: u64) -> u64 {
        *pipe -= 1 + newly_lost;
        let sndcnt = p.on_ack(1, *pipe, false, 1);
        p.on_sent(sndcnt);
        *pipe += sndcnt;
        sndcnt
    }

    #[test]
    fn single_loss_spreads_the_reduction_over_the_round() {
        // Segment 0 lost; ACKs for segments 1..19. ACKs 1-2: Limited Transmit (N N); ACK 3:
        // IsLost(0), recovery: RecoverFS = SND.NXT − SND.UNA − SACKed-before = 22 − 2 = 20.
        let mut pipe = 20 - 1 + 1 - 1 + 1; // after ACKs 1 and 2 with their new segments
        let mut p = Prr::new(ReductionBound::SafeAck, 10, 20);
        let sent: Vec<u64> = (3..=19)
            .map(|ack| step(&mut p, &mut pipe, if ack == 3 { 1 } else { 0 }))
            .collect();
        // R at ACK 3, then one new segment per two ACKs while pipe > ssthresh, as RFC 6937's
        // figure shows for ACKs 3-15 (R _ N _ N _ N _ N _ N _ N); ACK 17 sends the last one
        // (⌈15·10/20⌉ − 7 = 1) and recovery ends with pipe = ssthresh = 10. (RFC 6937's figure
        // instead shows sends at ACKs 18 and 19 and a final pipe of 11, which its own formula
        // and §4's "converges exactly to ssthresh" do not give.)
        assert_eq!(
            sent,
            vec![1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 0]
        );
        assert_eq!(pipe, 10);
        assert_eq!((p.delivered(), p.out()), (17, 8));
    }

    #[test]
    fn burst_of_fifteen_losses_each_reduction_bound() {
        // Segments 0-14 lost; only ACKs 15-19 return. ACKs 15-16: Limited Transmit; ACK 17:
        // IsLost marks all 15, pipe = 22 − 3 SACKed − 15 lost = 4 ≤ ssthresh.
        for (bound, want, pipes) in [
            // RFC 6937 figure, PRR-CRB: "R R R", pipe 4 4 4 (RB: b).
            (ReductionBound::Conservative, vec![1, 1, 1], vec![4, 4, 4]),
            // PRR-SSRB: "2R 2R 2R", pipe before sending 4 5 6 (RB: bd, d, d).
            (ReductionBound::SlowStart, vec![2, 2, 2], vec![4, 5, 6]),
            // RFC 9937 / Linux: duplicate ACKs are not safe ACKs, so one per ACK.
            (ReductionBound::SafeAck, vec![1, 1, 1], vec![4, 4, 4]),
        ] {
            let mut pipe = 20 - 1 + 1 - 1 + 1;
            let mut p = Prr::new(bound, 10, 20);
            let mut sent = Vec::new();
            let mut seen = Vec::new();
            for ack in 17..=19 {
                pipe -= 1 + if ack == 17 { 15 } else { 0 };
                seen.push(pipe);
                let s = p.on_ack(1, pipe, false, 1);
                p.on_sent(s);
                pipe += s;
                sent.push(s);
            }
            assert_eq!(sent, want, "{bound:?}");
            assert_eq!(seen, pipes, "{bound:?}");
        }
    }

    #[test]
    fn safe_ack_adds_one_segment_below_ssthresh() {
        let mut p = Prr::new(ReductionBound::SafeAck, 10, 20);
        p.on_sent(1); // the fast retransmission
        assert_eq!(p.on_ack(2, 5, false, 1), 2, "min(10 − 5, max(2 − 1, 2))");
        let mut p = Prr::new(ReductionBound::SafeAck, 10, 20);
        p.on_sent(1);
        assert_eq!(p.on_ack(2, 5, true, 1), 3, "max(1, 2) + 1");
        assert_eq!(p.on_ack(1, 9, true, 1), 1, "capped at ssthresh − pipe");
    }
}
