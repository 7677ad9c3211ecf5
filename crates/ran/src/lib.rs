//! rantcp-ran: the radio access network model (design.md §4).
//!
//! Physical side (channel, mobility, PHY abstraction): `geometry`, `mobility`, `pathloss`,
//! `fading`, `antenna`, `frame`, `phy` (CQI/MCS/TBS/BLER), `harq` decode model, `ul_phy`
//! (uplink power control, power headroom, uplink link adaptation and grant limit).
//! Protocol side (layer 2, sans-IO entities talking through 3GPP-named SAP structs):
//! `rlc`, `pdcp`, `mac`.
pub mod mac;
pub mod pdcp;
pub mod rlc;

pub mod antenna;
pub mod cell;
pub mod fading;
pub mod frame;
pub mod geometry;
pub mod mobility;
pub mod obstacles;
pub mod pathloss;
pub mod phy;
pub mod radio;
pub mod shadowing;
pub mod ul_phy;
