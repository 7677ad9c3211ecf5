//! Medium access control (TS 36.321 / TS 38.321) as sans-IO entities: HARQ bookkeeping
//! (§5.3.2, §5.4.2), downlink schedulers with PRB allocation and a PDCCH budget, and the
//! uplink request/grant procedure (scheduling request §5.4.4, buffer status reporting §5.4.5,
//! uplink grant sizing from the reported buffer).
//!
//! * [`harq`]: [`harq::HarqEntity`] — processes, feedback delay, max retransmissions.
//! * [`sched`]: [`sched::Scheduler`] (RR / PF / max-rate, PRBs, PDCCH budget) → [`sched::Allocation`].
//! * [`mux`]: splitting a downlink TB among logical channels → [`sap::TxOpportunity`]s.
//! * [`ra`]: the UE's contention-based random access (§5.1), the fallback of SR (§5.4.4).
//! * [`ul`]: UE side [`ul::UeUlMac`] (SR, BSR, multiplexing, BSR enhancement option) and eNB
//!   side [`ul::UlScheduler`] / [`ul::UlBufferTracker`].
//!
//! The MAC never calls the PHY: per-UE achievable bytes per PRB, TBS and CQI come in as plain
//! numbers, and outputs are values ([`sap::TxOpportunity`], [`sched::Allocation`],
//! [`sap::UlGrant`], [`ul::UlTransmission`]).

pub mod harq;
pub mod mux;
pub mod ra;
pub mod sap;
pub mod sched;
pub mod ul;

pub use sap::{BufferStatus, HarqFeedback, Lcid, Rnti, TxOpportunity, UlGrant};
