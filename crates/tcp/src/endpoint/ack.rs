//! The ACK field of an incoming segment (RFC 9293 §3.10.7.4 fifth step) on the sending side:
//! the scoreboard update from the cumulative ACK and SACK blocks (RFC 6675 §5), the send window
//! update (SND.WL1/SND.WL2), duplicate ACKs (RFC 5681 §2, RFC 6675 §2), loss marking (RFC 6675
//! §4 IsLost), the fast retransmit / fast recovery state machine (RFC 5681 §3.2, RFC 6582 §3.2
//! with SACK off — under the Linux rules with Linux's SACK emulation, reno.rs — RFC 6675 §5 with
//! SACK on), RTT samples (RFC 6298 §3 Karn, RFC 7323 §4.1
//! RTTM), the delivery-rate sample and the controller's `on_ack`, the FIN's acknowledgement and
//! the retransmission timer's restart (RFC 6298 §5.2–§5.3).

use super::rack::RackScan;
use super::rate::RsBuild;
use super::scoreboard::{Delivered, F_EVER_RETRANS, F_LOST, F_RETRANS, F_SACKED};
use super::{ts_ms, CwndRules, Endpoint, Prr, ReductionBound, SlowStartExit, State, DUP_THRESH};
use crate::cc::{AckSample, CongestionControl, SlowStartCause};
use rantcp_core::{Duration, Time};
use rantcp_wire::TcpHeader;

impl Endpoint {
    /// One RFC 6298 RTT measurement (Karn's rule already applied), also kept in the statistics.
    pub(super) fn rtt_sample(&mut self, r: Duration) {
        self.rtt.sample(r, self.snd_una, self.snd_max);
        self.rack.rtt_sample_since_probe = true;
        let s = &mut self.stats;
        s.rtt_samples += 1;
        s.rtt_sum_ns += r.0 as u128;
        s.rtt_min = Some(s.rtt_min.map_or(r, |m| m.min(r)));
        s.rtt_max = Some(s.rtt_max.map_or(r, |m| m.max(r)));
    }

    /// After a call into the controller that may have set ssthresh (an ACK, a congestion event,
    /// a timeout): note the end of the first slow start ([`super::TcpStats::slow_start_exit`])
    /// when ssthresh has left infinity. `cwnd_before` is cwnd before the call; `cause` is `None`
    /// for an ACK (the controller names its reason).
    pub(super) fn note_slow_start_exit(
        &mut self,
        now: Time,
        cwnd_before: u64,
        cause: Option<SlowStartCause>,
    ) {
        if self.stats.slow_start_exit.is_none() && self.cc.ssthresh() != u64::MAX {
            let cause = cause.unwrap_or_else(|| self.cc.slow_start_cause());
            self.stats.slow_start_exit = Some(SlowStartExit {
                at: now,
                cwnd: cwnd_before,
                mss: self.smss,
                cause,
            });
        }
    }

    /// The controller's response to a loss (RFC 5681 §3.2 step 2, RFC 6675 §5 step 4.2; RFC 8985
    /// §7.4 for a loss a tail-loss probe repaired), from [`Endpoint::reduction_basis`]; the end
    /// of the first slow start if this is it.
    pub(super) fn respond_to_loss(&mut self, now: Time) {
        let basis = self.reduction_basis();
        let cwnd_before = self.cc.cwnd();
        self.cc.on_congestion_event(now, basis, self.smss);
        self.note_slow_start_exit(now, cwnd_before, Some(SlowStartCause::Loss));
    }

    /// Sender-side ACK processing (RFC 9293 §3.10.7.4 fifth step; RFC 5681; RFC 6582; RFC 6675).
    pub(super) fn process_ack(
        &mut self,
        now: Time,
        tcp: &TcpHeader,
        payload_len: u32,
        seq_pos: i64,
        ack: u64,
    ) {
        let prior_in_flight = self.in_flight();
        let prior_una = self.snd_una;
        let smss = self.smss as u64;
        // Linux's SACK emulation without SACK (reno.rs): what this ACK delivered, bytes.
        let reno = self.reno_emulation();
        let mut reno_delivered = 0u64;
        let sacked_before = self.sb.sacked_bytes + self.sb.reno.sacked as u64 * smss;
        let mut newly_lost = 0u64;
        let rack = self.rack_on();
        let rack_scan = rack.then(|| {
            let tsecr = tcp.options.timestamps.filter(|_| self.ts_ok);
            RackScan::new(now, tsecr.map(|(_, e)| e), self.rtt.min_rtt())
        });
        // Linux tcp_fastretrans_alert's REXMIT_NEW lasts for one ACK.
        self.frto_new_only = false;
        // The state before this ACK: a timeout's recovery (Linux TCP_CA_Loss).
        let in_loss = self.rto_recovery;
        // RFC 2883 §4 D-SACK, before the scoreboard takes the blocks as SACKs.
        let dsack = self.cfg.dsack
            && self.sack_ok
            && tcp.options.sack_len > 0
            && self.check_dsack(tcp, prior_una, ack);
        let mut d = Delivered {
            now,
            rate: &mut self.rate,
            rs: RsBuild::default(),
            rack: rack_scan,
            orig_min_end: None,
        };

        // RFC 6675 §5 / RFC 2018: update the scoreboard from the SACK blocks.
        let mut newly_sacked = 0u64;
        if self.sack_ok && tcp.options.sack_len > 0 && !self.sb.segs.is_empty() {
            let una_seq = self.iss.wrapping_add(prior_una as u32);
            let pos = |seq: u32| prior_una as i64 + seq.wrapping_sub(una_seq) as i32 as i64;
            for b in tcp.options.sack_blocks() {
                let l = pos(b.left).max(prior_una as i64);
                let r = pos(b.right).min(self.snd_max as i64);
                if r <= l {
                    continue; // D-SACK below SND.UNA or bogus
                }
                newly_sacked += self.sb.sack(l as u64, r as u64, &mut d);
            }
        }

        // Cumulative ACK.
        let mut acked_bytes = 0u64;
        let mut rtt: Option<Duration> = None;
        if ack > self.snd_una {
            let strict_karn = self.cfg.cwnd_rules == CwndRules::Linux;
            let cum = self.sb.on_cumulative_ack(ack, &mut d, strict_karn);
            acked_bytes = cum.acked_bytes;
            newly_sacked += cum.newly_sacked;
            rtt = cum.rtt;
            if reno {
                // Linux tcp_clean_rtx_queue → tcp_remove_reno_sacks: one segment filled a hole,
                // the rest had been counted by duplicate ACKs already.
                let eaten = cum.segs_acked - self.sb.remove_reno_sacks(cum.segs_acked);
                reno_delivered = acked_bytes
                    .saturating_sub(eaten as u64 * smss)
                    .max(acked_bytes.min(smss));
            }
        }
        let (rs, scan, orig_min_end) = (d.rs, d.rack, d.orig_min_end);
        // Linux tcp_process_loss → tcp_try_undo_loss on an ACK that advances SND.UNA: by the
        // timestamp ([`super::TcpConfig::rto_undo`], `tcp_packet_delayed`) or, with D-SACK,
        // once every retransmission was D-SACKed.
        let spurious_rto = ack > prior_una
            && in_loss
            && self.undo_window.is_some()
            && ((self.cfg.rto_undo
                && self.ts_ok
                && self.retrans_stamp.is_some()
                && self.packet_delayed(tcp))
                || (self.cfg.dsack && self.undo_retrans == 0));
        if ack > self.snd_una {
            self.snd_una = ack;
            self.acked_since_rto = true;
            if self.rto_recovery && ack >= self.recover {
                // RFC 6675 §5.1: the timeout's recovery point is reached; the episode is over.
                self.rto_recovery = false;
            }
            // Data bytes acked (SYN/FIN positions excluded).
            let data_hi = ack.min(self.app_end);
            let data_lo = prior_una.max(1).min(data_hi);
            self.stats.bytes_acked += data_hi - data_lo;
        }
        if spurious_rto {
            self.undo_loss(now, false);
        }

        // Window update (RFC 9293 §3.10.7.4: SND.WL1/SND.WL2 rule).
        let new_wnd = (tcp.window as u64) << self.snd_wscale;
        let window_changed = new_wnd != self.snd_wnd;
        if self.snd_wl1 < seq_pos || (self.snd_wl1 == seq_pos && self.snd_wl2 <= ack) {
            self.snd_wnd = new_wnd;
            self.max_snd_wnd = self.max_snd_wnd.max(new_wnd);
            self.snd_wl1 = seq_pos;
            self.snd_wl2 = ack;
        }
        if self.snd_wnd > 0 {
            // A window opened: stop the persist timer (RFC 9293 §3.8.6.1).
            self.persist_deadline = None;
            self.persist_backoff = 0;
            self.probe_pending = false;
        }

        // RFC 5681 §2 duplicate ACK; with SACK, an ACK carrying new SACK information (RFC 6675 §2).
        let outstanding = self.snd_max > prior_una;
        let is_dup = outstanding
            && ack == prior_una
            && payload_len == 0
            && !tcp.flags.syn()
            && !tcp.flags.fin()
            && if self.sack_ok {
                newly_sacked > 0
            } else {
                !window_changed
            };
        if is_dup {
            self.stats.dup_acks_received += 1;
        }
        let mut rto_undone = spurious_rto;
        if in_loss && self.rto_recovery && self.cfg.frto {
            // RFC 5682 §3.1 (Linux tcp_process_loss): FLAG_ORIG_SACK_ACKED is never-resent data
            // at or below the recovery point (Linux high_seq) delivered by this ACK.
            let orig_acked = orig_min_end.is_some_and(|e| e <= self.recover);
            rto_undone |=
                self.frto_on_ack(now, orig_acked, newly_sacked > 0 || is_dup, ack > prior_una);
        }

        // Loss marking: RACK (RFC 8985 §6.2) on every ACK, or RFC 6675 §4 IsLost.
        if let Some(scan) = scan {
            if self.cfg.dsack {
                self.rack
                    .update_reo_wnd(rs.prior_delivered(), self.rate.delivered);
            }
            self.rack.update(&scan);
            newly_lost += self.rack_detect_loss(now);
        } else if newly_sacked > 0 {
            newly_lost += self.sb.mark_lost_by_sack(self.smss);
            if self.detect_lost_rtx {
                newly_lost += self.sb.mark_lost_retransmissions(self.smss);
            }
        }

        // Loss recovery state machine.
        let mut was_in_recovery = self.in_recovery;
        // A fast recovery was undone on this ACK: no window reduction to end.
        let mut undone = false;
        if ack > prior_una {
            // Linux tcp_is_non_sack_preventing_reopen: without SACK, recovery holds until
            // something above the recovery point is acknowledged (RFC 6582 §3.2 step 1's
            // protection against a false fast retransmit), dropping the emulated SACKs.
            let held = reno && self.in_recovery && ack == self.recover;
            if held {
                self.sb.reset_reno_sack();
            } else if self.in_recovery {
                if ack >= self.recover {
                    // Linux tcp_try_undo_recovery: the recovery's end, undone if it proved
                    // unnecessary (timestamps, RFC 3522 §3.2, or every retransmission
                    // D-SACKed).
                    if self.cfg.recovery_undo && self.may_undo(tcp) {
                        self.undo_cwnd_reduction(now, false, super::undo::UndoKind::Full);
                        undone = true;
                    } else {
                        self.rack.on_recovery_end();
                    }
                    // RFC 6582 §3.2 step 6 full ACK / RFC 6675 §5: leave recovery. The ACK
                    // is reported with in_recovery = true, then on_recovery_exit follows.
                    self.in_recovery = false;
                    self.inflation = 0;
                    self.dupacks = 0;
                    self.prr = None;
                    // Linux tcp_fastretrans_alert: tcp_reset_reno_sack at the recovery's end.
                    self.sb.reset_reno_sack();
                } else if self.sack_ok || reno {
                    // Linux tcp_try_undo_partial: the hole was filled by a delayed original,
                    // not by a retransmission (timestamps); undone when no retransmission is
                    // in flight any more.
                    let delayed = self.cfg.recovery_undo
                        && self.undo_window.is_some()
                        && self.packet_delayed(tcp);
                    if delayed && reno {
                        // "Plain luck! Hole is filled with delayed packet": reordering
                        // (tcp_check_sack_reordering), which raises the duplicate-ACK threshold.
                        self.sb
                            .reno_delayed_fill(prior_una, ack, self.snd_max, self.smss);
                    }
                    if delayed && !self.sb.segs.iter().any(|s| s.flags & F_RETRANS != 0) {
                        if self.retrans_stamp.is_some()
                            && !self.sb.segs.iter().any(|s| s.flags & F_EVER_RETRANS != 0)
                        {
                            self.retrans_stamp = None; // !tcp_any_retrans_done
                        }
                        self.undo_cwnd_reduction(now, true, super::undo::UndoKind::Partial);
                        self.leave_recovery_undone();
                        undone = true;
                    } else if reno && !delayed {
                        // tcp_try_undo_partial "Partial ACK arrived" → tcp_identify_packet_loss
                        // → tcp_newreno_mark_lost: the segment now at SND.UNA is lost. Its
                        // retransmission waits for PRR's window (tcp_xmit_retransmit_queue is
                        // cwnd-limited), unlike RFC 6582 step 5's.
                        newly_lost += self.sb.newreno_mark_lost();
                    }
                } else {
                    // RFC 6582 §3.2 step 5 partial ACK: retransmit the first unacked segment,
                    // deflate by the amount acked, add back one SMSS if at least SMSS acked.
                    newly_lost += self.sb.mark_first_lost();
                    self.force_rtx = true;
                    self.inflation = self.inflation.saturating_sub(acked_bytes);
                    if acked_bytes >= smss {
                        self.inflation += smss;
                    }
                    self.partial_acks += 1;
                    // Reset the retransmit timer on the first partial ACK only.
                    if self.partial_acks == 1 {
                        self.rto_deadline = Some(now + self.rtt.rto());
                    }
                }
            } else {
                self.dupacks = 0;
                // Linux tcp_fastretrans_alert (Open/Disorder) and tcp_process_loss: an ACK that
                // advances SND.UNA drops the emulated SACKs.
                self.sb.reset_reno_sack();
            }
        }
        if self.in_recovery && dsack && self.undo_window.is_some() && self.undo_retrans == 0 {
            // Linux tcp_try_undo_dsack in Recovery (then tcp_try_to_open): every
            // retransmission was D-SACKed.
            self.undo_cwnd_reduction(now, false, super::undo::UndoKind::Dsack);
            self.leave_recovery_undone();
            undone = true;
        }
        if undone {
            // The controller sees this ACK in the Open state (Linux tcp_cong_control after
            // tcp_fastretrans_alert).
            was_in_recovery = false;
        }
        if is_dup {
            self.dupacks += 1;
            if reno {
                // Linux tcp_add_reno_sack: in recovery (not once held at its recovery point),
                // in Open/Disorder, and in a timeout's recovery once data beyond its recovery
                // point has gone out (tcp_process_loss).
                let count = if self.in_recovery {
                    self.snd_una < self.recover
                } else if self.rto_recovery {
                    self.snd_max > self.recover
                } else {
                    true
                };
                if count {
                    reno_delivered += self.sb.add_reno_sack(1) as u64 * smss;
                }
            } else if self.in_recovery && !self.sack_ok {
                // RFC 6582 §3.2 step 4 / RFC 5681 §3.2 step 4: inflate by one SMSS.
                self.inflation += self.smss as u64;
            }
        }
        if !self.in_recovery && !was_in_recovery && !self.sb.segs.is_empty() {
            // RFC 6582 §3.2 step 1 / RFC 6675 §5 step 4: enter only past the last recovery
            // point (RFC 6675 §5.1 after an RTO). With RACK, when it has marked a loss (RFC 8985
            // §6.2; Linux tcp_time_to_recover "the loss is proven"), not on DupThresh.
            let loss_detected = if rack {
                self.sb.next_lost().is_some()
            } else if reno {
                // Linux tcp_newreno_mark_lost → tcp_time_to_recover ("the loss is proven"):
                // `reordering` duplicate ACKs counted.
                self.sb.reno.sacked >= self.sb.reno.reordering
            } else {
                let first_lost =
                    self.sack_ok && self.sb.segs[0].flags & (F_LOST | F_SACKED) == F_LOST;
                self.dupacks >= DUP_THRESH || first_lost
            };
            if loss_detected && ack >= self.recover {
                // RFC 9937 §6.1 RecoverFS: outstanding data less what was SACKed before this
                // ACK (this ACK's deliveries count in prr_delivered).
                let recover_fs = self.snd_max - prior_una - sacked_before;
                self.enter_recovery(now, recover_fs);
                if !rack {
                    newly_lost += self.sb.mark_first_lost();
                }
                self.force_rtx = true;
                was_in_recovery = true;
            }
        }
        // DeliveredData (RFC 6937 §3; Linux `tcp_newly_delivered`, which counts the emulated
        // SACKs without SACK).
        let delivered = if reno {
            reno_delivered
        } else {
            acked_bytes + newly_sacked
        };
        if self.in_recovery {
            self.prr_on_ack(delivered, ack > prior_una && newly_lost == 0);
        }

        // Delivery-rate sample (draft §3.3) and the controller.
        self.rate.end_app_limited_if_passed();
        if let Some(r) = rtt {
            self.rtt_sample(r);
        } else if ack > prior_una && self.ts_ok {
            // RFC 7323 §4.1 RTTM: an ACK that advances SND.UNA echoes the TSval of the segment
            // (retransmission included) that advanced it, so timestamps give a sample where
            // Karn's rule gives none — as Linux does. The ms clock is coarse: it feeds the RTO
            // estimator (and ends the backoff) but not min RTT, the RTT statistics or the
            // controller.
            if let Some((_, tsecr)) = tcp.options.timestamps {
                let d_ms = ts_ms(now).wrapping_sub(tsecr);
                if (d_ms as i32) >= 0 && d_ms < (1 << 24) {
                    self.rtt.sample_coarse(
                        Duration::from_millis(d_ms as u64),
                        self.snd_una,
                        self.snd_max,
                    );
                    self.rack.rtt_sample_since_probe = true;
                }
            }
        }
        if delivered > 0 {
            // RFC 7661 / Linux tcp_is_cwnd_limited, judged on the window before this ACK grows it.
            let in_slow_start = self.cc.cwnd() < self.cc.ssthresh();
            let rate_limited = !self.cwnd_use.is_limited(self.cc.cwnd(), in_slow_start);
            let rate = self.rate.finish(now, &rs, self.rtt.min_rtt());
            if rate.is_some() {
                self.rate.last_rate = rate;
            }
            let sample = AckSample {
                now,
                bytes_acked: delivered,
                cum_acked: acked_bytes,
                rtt,
                srtt: self.rtt.srtt(),
                min_rtt: self.rtt.min_rtt(),
                bytes_in_flight: self.in_flight(),
                prior_in_flight,
                newly_lost,
                in_recovery: was_in_recovery,
                in_loss: self.rto_recovery,
                in_loss_before: in_loss && !rto_undone,
                delivered: self.rate.delivered,
                rate,
                mss: self.smss,
                rate_limited,
                snd_una: self.snd_una,
                snd_nxt: self.snd_max,
            };
            let cwnd_before = self.cc.cwnd();
            self.cc.on_ack(&sample);
            self.note_slow_start_exit(now, cwnd_before, None);
        }
        if was_in_recovery && !self.in_recovery {
            self.cc.on_recovery_exit(now, self.smss);
        }
        if !self.in_recovery && !self.rto_recovery {
            // Back in the Open state (Linux clears retrans_stamp in TCP_CA_Open,
            // tcp_fastretrans_alert). With D-SACK the episode may still be undone by late
            // D-SACKs (Linux keeps undo_marker; tcp_try_undo_dsack in Open/Disorder);
            // otherwise it can no longer be.
            self.retrans_stamp = None;
            if self.cfg.dsack && self.cfg.recovery_undo {
                if dsack && self.undo_window.is_some() && self.undo_retrans == 0 {
                    self.undo_cwnd_reduction(now, false, super::undo::UndoKind::Dsack);
                }
            } else {
                self.undo_window = None;
            }
        }

        // Our FIN acknowledged?
        if self.fin_sent && ack > self.app_end {
            self.fin_rtx = false;
            match self.state {
                State::FinWait1 => self.state = State::FinWait2,
                State::Closing => self.enter_time_wait(now),
                State::LastAck => {
                    self.enter_closed();
                    return;
                }
                _ => {}
            }
        }

        // RFC 6298 §5.2/§5.3: stop the timer when all is acked, restart it on new data acked.
        if self.snd_una >= self.snd_max {
            self.rto_deadline = None;
        } else if ack > prior_una && !(self.in_recovery && !self.sack_ok && self.partial_acks > 0) {
            self.rto_deadline = Some(now + self.rtt.rto());
        }

        if rack {
            // RFC 8985 §7.4 and §7.2: the probe's fate; re-arm the PTO on new data acknowledged,
            // drop it once SACKed data or recovery hand over to RACK's timer and the RTO.
            let pure_dup =
                ack == prior_una && newly_sacked == 0 && payload_len == 0 && !window_changed;
            self.tlp_process_ack(now, ack, ack > prior_una, pure_dup);
            if ack > prior_una || self.sb.sacked_segs > 0 || self.in_recovery {
                self.arm_pto(now);
            }
        }
    }

    /// What a congestion response reduces from: FlightSize (RFC 5681 §3.1 eq. 4, §3.2 step 2;
    /// RFC 6675 §5 step 4.2) or cwnd (Linux `ca_ops->ssthresh`). FlightSize is the data sent and
    /// not yet acknowledged, SND.NXT − SND.UNA; during the go-back-N of a timeout's recovery
    /// SND.NXT is where the retransmissions have got to (BSD pulls snd_nxt back to snd_una at a
    /// timeout), which here is the data retransmitted since the timeout and still outstanding:
    /// pipe. SND.MAX − SND.UNA would count everything sent before the timeout again and put
    /// ssthresh far above the path.
    pub(super) fn reduction_basis(&self) -> u64 {
        match self.cfg.cwnd_rules {
            CwndRules::Rfc if self.rto_recovery => self.sb.pipe,
            CwndRules::Rfc => self.snd_max - self.snd_una,
            CwndRules::Linux => self.cc.cwnd(),
        }
    }

    /// Enter fast recovery (RFC 5681 §3.2 step 2, RFC 6582 §3.2 step 2–3, RFC 6675 §5 step 4),
    /// with PRR (RFC 6937) when configured, SACK or Linux's emulation of it (reno.rs) is in use
    /// and the controller does not manage the recovery window itself.
    pub(super) fn enter_recovery(&mut self, now: Time, recover_fs: u64) {
        self.rack.tlp_end = None;
        self.rack.pto_deadline = None;
        if self.cfg.recovery_undo {
            // Linux tcp_enter_recovery: tcp_init_undo, prior_ssthresh = tcp_current_ssthresh
            // (max(ssthresh, ¾ cwnd) outside a window reduction), prior_cwnd = cwnd.
            let (cwnd, ss) = (self.cc.cwnd(), self.cc.ssthresh());
            self.init_undo(cwnd, ss.max(cwnd / 2 + cwnd / 4));
        }
        self.respond_to_loss(now);
        // Linux runs PRR (tcp_cwnd_reduction) without SACK too, from the emulated SACKs.
        let sack_or_emulated = self.sack_ok || self.reno_emulation();
        if self.cfg.prr && sack_or_emulated && !self.cc.controls_recovery_window() {
            let ssthresh = self.cc.ssthresh();
            self.prr = Some(Prr::new(ReductionBound::SafeAck, ssthresh, recover_fs));
        }
        self.in_recovery = true;
        self.recover = self.snd_max;
        self.high_rxt = self.snd_una;
        self.partial_acks = 0;
        self.stats.fast_retransmits += 1;
        // RFC 6582 §3.2 step 3: cwnd = ssthresh + 3·SMSS (SACK uses pipe instead, RFC 6675;
        // Linux without SACK, pipe less the emulated SACKs).
        self.inflation = if sack_or_emulated {
            0
        } else {
            DUP_THRESH as u64 * self.smss as u64
        };
    }

    /// RFC 6937 §3 on every ACK in recovery: the window is pipe + sndcnt, sndcnt rounded up to
    /// whole segments. An ACK that delivers nothing leaves it as it was (Linux; RFC 9937 §6.2).
    pub(super) fn prr_on_ack(&mut self, delivered: u64, safe_ack: bool) {
        let pipe = self.in_flight();
        let mss = self.smss as u64;
        if let Some(prr) = &mut self.prr {
            if delivered == 0 && prr.out() > 0 {
                return;
            }
            let sndcnt = prr.on_ack(delivered, pipe, safe_ack, mss);
            self.prr_cwnd = pipe + sndcnt.div_ceil(mss) * mss;
        }
    }
}
