//! rantcp-core: the simulation substrate shared by every layer.
//!
//! * [`Time`] / [`Duration`]: integer nanoseconds since the run started. No floats and no
//!   `std::time` anywhere in the model; seconds appear only at the Python boundary.
//! * [`EventQueue`]: events ordered by `(time, insertion sequence)`, so events scheduled for the
//!   same instant run in the order they were scheduled. One run is single-threaded.
//! * [`Rng`]: a small, fast, portable generator (xoshiro256**), one stream per entity derived
//!   from `(run seed, entity id)` so that adding an entity never perturbs another's draws.

mod queue;
mod rng;
mod time;

pub use queue::EventQueue;
pub use rng::{entity_id, Rng};
pub use time::{Duration, Time};
