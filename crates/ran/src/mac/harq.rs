//! HARQ entity bookkeeping (TS 36.321 §5.3.2 downlink, §5.4.2 uplink; TS 38.321 §5.3.2,
//! §5.4.2): N parallel stop-and-wait processes per UE and direction, feedback after a fixed
//! delay, a maximum number of retransmissions, and retransmissions before new data (the
//! schedulers ask [`HarqEntity::pending_retx`] first).
//!
//! Decoding itself (SINR → BLER, chase combining) is the PHY's `harq` decode model; this entity
//! only tracks process state and the payload (`T`, e.g. the RLC PDUs of the transport block),
//! which it returns on ACK or on final failure.

use super::sap::HarqFeedback;
use rantcp_core::{Duration, Time};

/// Configuration.
#[derive(Clone, Copy, Debug)]
pub struct HarqConfig {
    /// Number of processes (8 in LTE FDD, up to 16 in NR; seed 004 uses 20).
    pub n_processes: u8,
    /// Delay from a transmission to its ACK/NACK (e.g. 4 subframes in LTE FDD).
    pub feedback_delay: Duration,
    /// Maximum number of retransmissions after the first transmission (3 in LTE).
    pub max_retx: u8,
}

impl HarqConfig {
    /// `n_processes` processes, feedback `feedback_delay_slots` slots of length `slot` after a
    /// transmission, `max_retx` retransmissions.
    pub fn with_slots(
        n_processes: u8,
        feedback_delay_slots: u32,
        slot: Duration,
        max_retx: u8,
    ) -> Self {
        HarqConfig {
            n_processes,
            feedback_delay: slot.saturating_mul(feedback_delay_slots as u64),
            max_retx,
        }
    }
}

impl Default for HarqConfig {
    fn default() -> Self {
        HarqConfig {
            n_processes: 8,
            feedback_delay: Duration::from_millis(4),
            max_retx: 3,
        }
    }
}

/// State of one process.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HarqState {
    Idle,
    /// Transmitted; feedback expected at `feedback_at`.
    AwaitingFeedback {
        feedback_at: Time,
    },
    /// NACKed and waiting to be rescheduled.
    PendingRetx,
}

/// One HARQ process.
#[derive(Clone, Debug)]
pub struct HarqProcess<T> {
    pub state: HarqState,
    pub tb_bytes: u32,
    pub n_prb: u16,
    /// Transmissions so far (1 after the first).
    pub tx_count: u8,
    pub payload: Option<T>,
}

/// Result of a feedback.
#[derive(Debug, PartialEq, Eq)]
pub enum HarqOutcome<T> {
    /// Decoded: the process is free, here is its payload.
    Acked(T),
    /// Not decoded, a retransmission is pending.
    Retx,
    /// Not decoded after `max_retx` retransmissions: the transport block is lost.
    Failed(T),
    /// Feedback for an idle process (ignored).
    Stale,
}

/// Counters.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HarqCounters {
    pub new_tx: u64,
    pub retx: u64,
    pub acks: u64,
    pub nacks: u64,
    pub failures: u64,
}

/// The HARQ processes of one UE in one direction.
#[derive(Clone, Debug)]
pub struct HarqEntity<T> {
    pub cfg: HarqConfig,
    procs: Vec<HarqProcess<T>>,
    counters: HarqCounters,
}

impl<T> HarqEntity<T> {
    pub fn new(cfg: HarqConfig) -> Self {
        let procs = (0..cfg.n_processes)
            .map(|_| HarqProcess {
                state: HarqState::Idle,
                tb_bytes: 0,
                n_prb: 0,
                tx_count: 0,
                payload: None,
            })
            .collect();
        HarqEntity {
            cfg,
            procs,
            counters: HarqCounters::default(),
        }
    }

    /// Lowest idle process, if any.
    pub fn free_process(&self) -> Option<u8> {
        self.procs
            .iter()
            .position(|p| p.state == HarqState::Idle)
            .map(|i| i as u8)
    }

    /// Processes waiting for a retransmission, oldest first by id: `(harq_id, n_prb, tb_bytes)`.
    pub fn pending_retx(&self) -> impl Iterator<Item = (u8, u16, u32)> + '_ {
        self.procs
            .iter()
            .enumerate()
            .filter(|(_, p)| p.state == HarqState::PendingRetx)
            .map(|(i, p)| (i as u8, p.n_prb, p.tb_bytes))
    }

    pub fn process(&self, harq_id: u8) -> &HarqProcess<T> {
        &self.procs[harq_id as usize]
    }

    /// First transmission of a new transport block on an idle process.
    pub fn start_new(&mut self, now: Time, harq_id: u8, n_prb: u16, tb_bytes: u32, payload: T) {
        let p = &mut self.procs[harq_id as usize];
        assert_eq!(p.state, HarqState::Idle, "HARQ process {harq_id} busy");
        *p = HarqProcess {
            state: HarqState::AwaitingFeedback {
                feedback_at: now + self.cfg.feedback_delay,
            },
            tb_bytes,
            n_prb,
            tx_count: 1,
            payload: Some(payload),
        };
        self.counters.new_tx += 1;
    }

    /// Retransmission of a NACKed process.
    pub fn start_retx(&mut self, now: Time, harq_id: u8) {
        let p = &mut self.procs[harq_id as usize];
        assert_eq!(
            p.state,
            HarqState::PendingRetx,
            "HARQ process {harq_id} has no pending retransmission"
        );
        p.state = HarqState::AwaitingFeedback {
            feedback_at: now + self.cfg.feedback_delay,
        };
        p.tx_count += 1;
        self.counters.retx += 1;
    }

    /// ACK/NACK for a process.
    pub fn handle_feedback(&mut self, _now: Time, fb: HarqFeedback) -> HarqOutcome<T> {
        let max_tx = 1 + self.cfg.max_retx;
        let p = &mut self.procs[fb.harq_id as usize];
        if !matches!(p.state, HarqState::AwaitingFeedback { .. }) {
            return HarqOutcome::Stale;
        }
        if fb.ack {
            self.counters.acks += 1;
            p.state = HarqState::Idle;
            return HarqOutcome::Acked(p.payload.take().unwrap());
        }
        self.counters.nacks += 1;
        if p.tx_count >= max_tx {
            self.counters.failures += 1;
            p.state = HarqState::Idle;
            HarqOutcome::Failed(p.payload.take().unwrap())
        } else {
            p.state = HarqState::PendingRetx;
            HarqOutcome::Retx
        }
    }

    /// Earliest expected feedback (for the node's event scheduling).
    pub fn poll_timeout(&self) -> Option<Time> {
        self.procs
            .iter()
            .filter_map(|p| match p.state {
                HarqState::AwaitingFeedback { feedback_at } => Some(feedback_at),
                _ => None,
            })
            .min()
    }

    pub fn counters(&self) -> &HarqCounters {
        &self.counters
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_harq_retx_then_failure() {
        let mut h: HarqEntity<u32> = HarqEntity::new(HarqConfig {
            n_processes: 2,
            feedback_delay: Duration::from_millis(4),
            max_retx: 2,
        });
        let t = Time::from_millis(1);
        assert_eq!(h.free_process(), Some(0));
        h.start_new(t, 0, 10, 1000, 7);
        assert_eq!(h.free_process(), Some(1));
        assert_eq!(h.poll_timeout(), Some(Time::from_millis(5)));
        let nack = HarqFeedback {
            rnti: 1,
            harq_id: 0,
            ack: false,
        };
        assert_eq!(h.handle_feedback(t, nack), HarqOutcome::Retx);
        assert_eq!(h.pending_retx().collect::<Vec<_>>(), vec![(0, 10, 1000)]);
        h.start_retx(t, 0);
        assert_eq!(h.handle_feedback(t, nack), HarqOutcome::Retx);
        h.start_retx(t, 0);
        assert_eq!(h.handle_feedback(t, nack), HarqOutcome::Failed(7));
        assert_eq!(h.free_process(), Some(0));
        assert_eq!(h.counters().failures, 1);
        h.start_new(t, 0, 5, 500, 8);
        assert_eq!(
            h.handle_feedback(
                t,
                HarqFeedback {
                    rnti: 1,
                    harq_id: 0,
                    ack: true
                }
            ),
            HarqOutcome::Acked(8)
        );
        assert_eq!(h.handle_feedback(t, nack), HarqOutcome::Stale);
    }
}
