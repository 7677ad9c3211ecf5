//! The built-in radio scenarios (`lte-cell`, `lte-7cell`, `mmwave-blockage`, `mmwave-urban`):
//! one config type, [`RanScenario`], whose defaults are each scenario's TOML file (a user file
//! naming the scenario is merged over the built-in one), and one topology:
//!
//! ```text
//!  server --(server link: rate, delay, errors)-- core (SGW/PGW/UPF) --(S1-U/N3)-- eNB/gNB
//!  10.0.0.1                                       10.0.0.254 / 10.0.1.254          10.0.1.1
//!                                                                   ║ RanDevice (cells, MAC, RLC)
//!                                                          UE 1 … UE N  (10.1.0.1 …)
//! ```
//! Each UE downloads from the server: full-buffer TCP (`traffic = "tcp"`) or a UDP CBR flow
//! above the radio's capacity (`traffic = "udp-saturation"`, the maximum-goodput reference of
//! seed 004).

use crate::common::{name_of, AppKind, FlowConfig};
use crate::config::reads::{concat, FieldUse, Unreads};
use crate::config::{check, ConfigError};
use crate::p2p_bulk::max_packet_bytes;
use crate::scenario::{
    attach_functions, build_env, check_flow_start, check_link, check_mtu, flow_ip_packet, Common,
    Network, Scenario, ScenarioKind,
};
use crate::units::{Bytes, Dur, Rate};
use rantcp_core::{Duration, Rng, Time};
use rantcp_functions::RadioFacts;
use rantcp_net::{ErrorUnit, FlowKind, FlowSpec, LinkParams, M2m, QueueLimit, Sim};
use rantcp_ran::antenna::{beamforming_gain_db, AntennaPattern};
use rantcp_ran::cell::{RanConfig, RanDevice};
use rantcp_ran::frame::{Carrier, Duplex};
use rantcp_ran::geometry::Vec3;
use rantcp_ran::mac::sched::SchedulerKind;
use rantcp_ran::mac::ul::UeMacConfig;
use rantcp_ran::mobility::{seed004_urban_route, Mobility};
use rantcp_ran::obstacles::{seed004_obstacles, BlockageSchedule};
use rantcp_ran::radio::{
    hex_layout, CellConfig, LosSource, O2iConfig, RadioConfig, RadioEnvironment,
};
use rantcp_ran::rlc::RlcMode;
use schemars::{json_schema, JsonSchema, Schema, SchemaGenerator};
use serde::{de, Deserialize, Deserializer, Serialize, Serializer};
use std::borrow::Cow;
use std::net::Ipv4Addr;

/// `radio.duplex`: "FDD", or a TDD slot pattern such as "CCDDUUUU" (TS 38.213 §11.1 slot
/// formats, simplified to whole slots) with at least one slot that carries downlink data (D or
/// F) and one that carries uplink data (U or F).
#[derive(Clone, Debug, PartialEq)]
pub enum DuplexSpec {
    Fdd,
    /// The pattern as written.
    Tdd(String),
}

impl DuplexSpec {
    fn parse(s: &str) -> Result<DuplexSpec, String> {
        if s == "FDD" {
            return Ok(DuplexSpec::Fdd);
        }
        let d =
            Duplex::tdd(s).map_err(|e| format!("\"FDD\" or a TDD pattern of C/D/U/S/F: {e}"))?;
        let n = s.chars().filter(|c| !c.is_whitespace()).count() as u64;
        if !(0..n).any(|i| d.is_dl(i)) || !(0..n).any(|i| d.is_ul(i)) {
            return Err(format!(
                "TDD pattern {s:?} must have a downlink (D or F) and an uplink (U or F) slot"
            ));
        }
        Ok(DuplexSpec::Tdd(s.to_string()))
    }
    pub fn duplex(&self) -> Duplex {
        match self {
            DuplexSpec::Fdd => Duplex::Fdd,
            DuplexSpec::Tdd(p) => Duplex::tdd(p).expect("checked when read"),
        }
    }
}
impl Serialize for DuplexSpec {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            DuplexSpec::Fdd => s.serialize_str("FDD"),
            DuplexSpec::Tdd(p) => s.serialize_str(p),
        }
    }
}
impl<'de> Deserialize<'de> for DuplexSpec {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        DuplexSpec::parse(&s).map_err(de::Error::custom)
    }
}
impl JsonSchema for DuplexSpec {
    fn schema_name() -> Cow<'static, str> {
        "DuplexSpec".into()
    }
    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "description": "\"FDD\" or a TDD slot pattern of C/D/U/S/F with a downlink (D or F) and an uplink (U or F) slot, e.g. \"CCDDUUUU\"",
            "type": "string",
            "pattern": "^(FDD|[CDUSFcdusf ]+)$",
        })
    }
}

/// `radio.o2i`: the buildings of the indoor UEs (`ue.indoor`), TR 38.901 §7.4.3.1 Table
/// 7.4.3-2: "low-loss", "high-loss", or the share of high-loss buildings (0..1). Default 0.5,
/// half and half, as QuaDRiGa's TR 38.901 UMa/UMi layouts.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct O2iSpec(pub f64);

const O2I_ALLOWED: &str =
    "\"low-loss\", \"high-loss\" or the share of indoor UEs in high-loss buildings, 0 to 1";

impl Default for O2iSpec {
    fn default() -> Self {
        O2iSpec(0.5)
    }
}
impl O2iSpec {
    fn is_default(&self) -> bool {
        *self == O2iSpec::default()
    }
}
impl Serialize for O2iSpec {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.0 {
            0.0 => s.serialize_str("low-loss"),
            1.0 => s.serialize_str("high-loss"),
            x => s.serialize_f64(x),
        }
    }
}
impl<'de> Deserialize<'de> for O2iSpec {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Name(String),
            Share(f64),
        }
        let share = match Raw::deserialize(d).map_err(|_| de::Error::custom(O2I_ALLOWED))? {
            Raw::Name(n) if n == "low-loss" => 0.0,
            Raw::Name(n) if n == "high-loss" => 1.0,
            Raw::Share(x) if (0.0..=1.0).contains(&x) => x,
            _ => return Err(de::Error::custom(O2I_ALLOWED)),
        };
        Ok(O2iSpec(share))
    }
}
impl JsonSchema for O2iSpec {
    fn schema_name() -> Cow<'static, str> {
        "O2iSpec".into()
    }
    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "description": "Buildings of the indoor UEs (TR 38.901 Table 7.4.3-2): \"low-loss\", \"high-loss\", or the share of high-loss buildings 0..1 (default 0.5)",
            "oneOf": [
                { "type": "string", "enum": ["low-loss", "high-loss"] },
                { "type": "number", "minimum": 0.0, "maximum": 1.0 },
            ],
        })
    }
}

fn is_zero(x: &f64) -> bool {
    *x == 0.0
}

/// `mac.bsr`: how the base station learns the UEs' uplink buffers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum BsrMode {
    /// TS 36.321 §5.4.4/§5.4.5: SR on PUCCH, regular/periodic/padding BSR, retxBSR-Timer.
    Standard,
    /// ns-3 LENA/mmWave-like: the scheduler sees the UE buffer every slot.
    Ideal,
}

/// `rlc.mode`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum RlcModeName {
    /// Acknowledged mode (TS 36.322 §5.2 ARQ).
    Am,
    /// Unacknowledged mode.
    Um,
}

/// What each UE downloads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Traffic {
    /// Full-buffer TCP download from the server (flow.cc, flow.mss …).
    Tcp,
    /// UDP CBR at `udp_rate` per UE, above what the radio carries: measures the radio's
    /// maximum goodput.
    UdpSaturation,
    /// M2M telemetry transactions over one TCP connection per UE (`[m2m]`; seed 003 §3.4).
    M2m,
}

/// `[m2m]`: the M2M telemetry application of seed 003 §3.4 (`traffic = "m2m"`): each UE opens
/// one TCP connection to the server at `flow.start`; the server writes `down` bytes, the UE
/// answers with an `up`-byte upload, and after the server has read it the next transaction
/// follows a think time (exponential of mean `think`, or fixed). The dissertation gives the
/// sizes (50 B down, 1,000 B up) and the simultaneous start; the think time is rantcp's choice.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct M2mSection {
    pub down: Bytes,
    pub up: Bytes,
    pub think: Dur,
    /// "exponential" (mean `think`) or "fixed".
    pub think_distribution: ThinkDistribution,
    /// Transactions per UE (0 = until the end of the run).
    pub count: u64,
}

/// `m2m.think_distribution`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ThinkDistribution {
    Exponential,
    Fixed,
}

impl Default for M2mSection {
    fn default() -> Self {
        M2mSection {
            down: Bytes(50),
            up: Bytes(1000),
            think: Dur(Duration::from_secs(1)),
            think_distribution: ThinkDistribution::Exponential,
            count: 0,
        }
    }
}

/// TS 36.331 §6.3.2 `MAC-MainConfig`: periodicBSR-Timer ENUMERATED {sf5, sf10, sf16, sf20, sf32,
/// sf40, sf64, sf80, sf128, sf160, sf320, sf640, sf1280, sf2560, infinity} (ms; infinity is
/// written "0s" here) and retxBSR-Timer ENUMERATED {sf320, sf640, sf1280, sf2560, sf5120,
/// sf10240}, the timers of TS 36.321 §5.4.5.
pub const LTE_PERIODIC_BSR_MS: [u64; 15] = [
    0, 5, 10, 16, 20, 32, 40, 64, 80, 128, 160, 320, 640, 1280, 2560,
];
pub const LTE_RETX_BSR_MS: [u64; 6] = [320, 640, 1280, 2560, 5120, 10240];

/// Radio access technology preset.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum RatPreset {
    /// LTE FDD macro (TR 36.814 case 1 style; [`RadioConfig::lte_macro`]).
    Lte,
    /// 28 GHz mmWave NR-like TDD ([`RadioConfig::mmwave_28ghz`]).
    Mmwave,
}

/// The mmWave carrier's frame structure (`radio.frame`; see `rantcp_ran::frame`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum FramePreset {
    /// NR numerology 3 (TS 38.211 §4.2): 120 kHz, 125 µs slots of 14 symbols, 660 PRBs
    /// ([`Carrier::mmwave_1ghz`]). For LTE the only choice (1 ms TTI).
    #[default]
    Nr,
    /// The ns-3 mmWave module's frame (seed 004's platform): 100 µs subframes of 24 symbols,
    /// 288 PRBs of 12 × 291.7 kHz in 1008 MHz ([`Carrier::ns3_mmwave_1ghz`]).
    Ns3Mmwave,
}

/// Where UEs are and how they move.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Placement {
    /// Uniform over the disk `min_distance_m..cell_radius_m` around the (centre) site.
    Random,
    /// All UEs at `distance_m` from the site, spread evenly in angle.
    Fixed,
    /// Seed 004's urban route (design.md §8), one UE.
    UrbanRoute,
}

/// Which cell a UE attaches to (`ue.drop_area`, hexagonal layout).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum DropArea {
    /// Dropped around the centre site, served by the strongest sector of any site.
    #[default]
    Disk,
    /// Dropped around the centre site, served by the strongest of the centre site's three
    /// sectors (seed 000 drops its UEs in the serving site's cells).
    ServingSite,
}

/// Scheduler policy.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum SchedName {
    Rr,
    Pf,
    MaxRate,
}

/// Unit of the server link's random error model.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ErrUnit {
    Packet,
    Byte,
    Bit,
}

/// `[radio]`: carrier, layout, link budget.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RadioSection {
    /// "lte" or "mmwave".
    pub rat: RatPreset,
    /// Carrier frequency (GHz).
    #[schemars(extend("exclusiveMinimum" = 0.0), range(max = 300.0))]
    pub carrier_ghz: f64,
    /// Channel bandwidth (MHz). LTE: 1.4, 3, 5, 10, 15, 20 (TS 36.101 Table 5.6-1). mmWave with
    /// frame "nr": 50, 100, 200, 400 (TS 38.101-2 Table 5.3.2-1 at 120 kHz: 32, 66, 132, 264
    /// PRBs) or 1000, the seeds' non-standard 1 GHz carrier (660 PRBs, the default); with frame
    /// "ns3-mmwave": 1000 only.
    pub bandwidth_mhz: f64,
    /// mmWave frame structure: "nr" (125 µs slots, the default) or "ns3-mmwave" (100 µs
    /// subframes as in the ns-3 mmWave module). LTE: "nr" only (its 1 ms TTI is fixed).
    #[serde(default)]
    pub frame: FramePreset,
    /// "FDD" or a TDD slot pattern such as "CCDDUUUU".
    pub duplex: DuplexSpec,
    /// Base-station transmit power over the carrier (dBm).
    #[schemars(range(min = -50.0, max = 80.0))]
    pub tx_power_dbm: f64,
    /// Base-station antenna height (m).
    #[schemars(extend("exclusiveMinimum" = 0.0), range(max = 1000.0))]
    pub bs_height_m: f64,
    /// UE height (m).
    #[schemars(extend("exclusiveMinimum" = 0.0), range(max = 1000.0))]
    pub ue_height_m: f64,
    /// Beamforming array elements at the base station and the UE (0 = no beamforming gain).
    pub bs_antennas: u32,
    pub ue_antennas: u32,
    /// UE and base-station noise figures (dB).
    #[schemars(range(min = 0.0, max = 30.0))]
    pub ue_noise_figure_db: f64,
    #[schemars(range(min = 0.0, max = 30.0))]
    pub bs_noise_figure_db: f64,
    /// Downlink MIMO layers per UE (1–4).
    #[schemars(range(min = 1, max = 4))]
    pub layers: u8,
    /// Downlink transmit-diversity branches: 1, or 2 for LTE transmission mode 2 (SFBC: two
    /// independent fading branches sharing the power; same mean SINR, diversity order 2).
    #[serde(default = "d_one_u8")]
    #[schemars(range(min = 1, max = 2))]
    pub tx_diversity: u8,
    /// Log-normal shadowing and fast fading.
    pub shadowing: bool,
    pub fading: bool,
    /// 7 sites × 3 sectors (`true`) or a single omni cell.
    pub hex_layout: bool,
    /// Inter-site distance of the hexagonal layout (m).
    pub isd_m: f64,
    /// CQI report period and delay.
    pub cqi_period: Dur,
    pub cqi_delay: Dur,
    /// Fixed downlink MCS (link adaptation off; LTE 0–28, mmWave/NR 0–27). Absent: from CQI.
    #[serde(default)]
    #[schemars(range(min = 0, max = 28))]
    pub fixed_mcs: Option<u8>,
    /// Fixed probability that a downlink transmission attempt fails (HARQ error rate), instead
    /// of the SINR/BLER model. Absent: the model.
    #[serde(default)]
    #[schemars(range(min = 0.0), extend("exclusiveMaximum" = 1.0))]
    pub harq_error_rate: Option<f64>,
    /// Extra attenuation of a blocked (NLOS) link on top of the NLOS path loss, dB (TR 38.901
    /// §7.6.4 blockage; 0 = NLOS path loss only).
    #[serde(default)]
    #[schemars(range(min = 0.0, max = 300.0))]
    pub blockage_loss_db: f64,
    /// Buildings of the indoor UEs (`ue.indoor`; TR 38.901 §7.4.3.1 O2I penetration):
    /// "low-loss" (30 % glass, 70 % concrete), "high-loss" (70 % IRR glass, 30 % concrete) or
    /// the share of high-loss buildings 0..1. Default 0.5 (half and half, as QuaDRiGa's
    /// TR 38.901 UMa/UMi layouts).
    #[serde(default, skip_serializing_if = "O2iSpec::is_default")]
    pub o2i: O2iSpec,
    /// Fraction of PRBs busy in every cell that serves no UE of the run (its interference is
    /// scaled by it; 1 = fully loaded, the TR 36.814 full-buffer default). Cells that serve UEs
    /// stay fully loaded.
    #[serde(default = "d_one")]
    #[schemars(range(min = 0.0, max = 1.0))]
    pub neighbour_load: f64,
}

fn d_one() -> f64 {
    1.0
}

/// `[ue]`: placement and mobility.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UeSection {
    /// "random", "fixed" or "urban-route".
    pub placement: Placement,
    /// Fixed placement: distance from the site (m).
    pub distance_m: f64,
    /// Random placement: annulus radii (m); with `radio.hex_layout` the outer radius is ISD/2.
    pub min_distance_m: f64,
    pub cell_radius_m: f64,
    /// Blockage schedule: LOS then NLOS durations, repeating (both > 0 to enable).
    pub los_duration: Dur,
    pub nlos_duration: Dur,
    /// Urban route: how long the final drive lasts ("15s" the paper's text, "25s" the code).
    pub drive_duration: Dur,
    /// Hexagonal layout: "disk" (default; each UE on its strongest sector of any site) or
    /// "serving-site" (on the strongest of the centre site's sectors, as seed 000 drops UEs).
    #[serde(default)]
    pub drop_area: DropArea,
    /// UE speed for the fast-fading Doppler only (km/h): the UEs keep their drop positions
    /// (path loss and shadowing fixed, as in TR 36.814 system simulations) while their fading
    /// decorrelates at f_D = v/λ. Absent: 3 km/h scatterer motion.
    #[serde(default)]
    pub fading_speed_kmh: Option<f64>,
    /// Share of the UEs indoors (0..1; default 0, all outdoors). Each UE is indoors with this
    /// probability, drawn from its own random stream, and an indoor UE's every link (serving
    /// and interfering cells, downlink and uplink) carries TR 38.901 §7.4.3.1's O2I loss:
    /// wall loss of its building (`radio.o2i`), 0.5 dB/m over d_2D-in = min of two uniform
    /// draws on 0..25 m, and a N(0, σ_P²) deviation. 3GPP's evaluations take 0.8.
    #[serde(default, skip_serializing_if = "is_zero")]
    #[schemars(range(min = 0.0, max = 1.0))]
    pub indoor: f64,
}

/// `[mac]`: schedulers, HARQ, PDCCH, uplink request/grant.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MacSection {
    /// DL scheduler: "rr", "pf" or "max-rate".
    pub scheduler: SchedName,
    /// UL scheduler.
    pub ul_scheduler: SchedName,
    /// PF EWMA time constant.
    pub pf_time_constant: Dur,
    #[schemars(range(min = 1, max = 32))]
    pub harq_processes: u8,
    /// Data-to-HARQ-feedback delay (slots).
    #[schemars(range(min = 1, max = MAX_SCHED_SLOTS))]
    pub harq_feedback_slots: u32,
    pub harq_max_retx: u8,
    /// DL + UL grants per cell per slot.
    #[schemars(range(min = 1))]
    pub pdcch_grants: u16,
    /// Grant-to-PUSCH offset (slots).
    #[schemars(range(min = 1, max = MAX_SCHED_SLOTS))]
    pub k2_slots: u32,
    /// SR periodicity (at least one slot), periodicBSR-Timer, retxBSR-Timer.
    pub sr_period: Dur,
    pub periodic_bsr_timer: Dur,
    pub retx_bsr_timer: Dur,
    /// UE and eNB processing delays.
    pub ue_processing: Dur,
    pub enb_processing: Dur,
    /// Uplink buffer reporting: "standard" (TS 36.321 SR/BSR; reproduces the retxBSR-Timer
    /// stall) or "ideal" (ns-3 LENA/mmWave-like: the eNB sees the UE buffer every slot).
    pub bsr: BsrMode,
    /// Vendor behaviour, not TS 36.321 (0 = off, the default): proactive uplink grants of this
    /// size for the TCP ACKs of downlink data — when the eNB sent a UE new downlink data since
    /// its last uplink grant and no reported uplink data is left, it grants this much on its
    /// own, at most once per `ul_proactive_period`.
    #[serde(default = "d_zero_bytes")]
    pub ul_proactive_grant: Bytes,
    #[serde(default = "d_proactive_period")]
    pub ul_proactive_period: Dur,
    /// The BSR enhancement of seed 003 §3.3 (Figure 8; off by default): a regular BSR as soon
    /// as the grants since the last BSR cover what it reported and data remains, instead of
    /// waiting for retxBSR-Timer. Needs `bsr = "standard"`.
    #[serde(default)]
    pub bsr_enhancement: bool,
    /// Each UE its own SR offset (`(rnti − 1) mod` the SR period in slots, TS 36.213 §10.1.5)
    /// rather than all UEs at offset 0. Default false.
    #[serde(default)]
    pub sr_offset_per_ue: bool,
    /// sr-ProhibitTimer (TS 36.321 §5.4.4): no SR while it runs after one. "0ms" = not
    /// configured (the default). LTE: 0..=7 SR periods (TS 36.331 sr-ProhibitTimer-r9); NR:
    /// 0, 1, 2, 4, 8, 16, 32, 64 or 128 ms (TS 38.331 sr-ProhibitTimer).
    #[serde(default = "d_zero_dur")]
    pub sr_prohibit_timer: Dur,
    /// dsr-TransMax (NR sr-TransMax): SRs before the UE gives up and starts random access
    /// (4, 8, 16, 32 or 64; default 64, srsRAN's eNB); 0 = SRs for ever (no fallback).
    /// Only with `bsr = "standard"` (ideal reporting has no SR to give up).
    #[serde(default = "d_dsr_trans_max")]
    pub dsr_trans_max: u32,
    /// Random access (TS 36.321 §5.1): PRACH occasion period (prach-ConfigIndex), preamble
    /// attempts (preambleTransMax: 3, 4, 5, 6, 7, 8, 10, 20, 50, 100 or 200), power ramping
    /// step (0, 2, 4 or 6 dB), preambleInitialReceivedTargetPower (dBm), RAR window
    /// (ra-ResponseWindowSize), mac-ContentionResolutionTimer, backoff parameter (0 = none;
    /// TS 36.321 Table 7.2-1), and the eNB's preamble detection threshold (SNR over the
    /// preamble's bandwidth, dB). Defaults: srsRAN's eNB (10 ms, 10, 6 dB, −104 dBm, 10 ms,
    /// 64 ms), no backoff, −14 dB (TS 36.104 §8.4.2).
    #[serde(default = "d_ra_prach_period")]
    pub ra_prach_period: Dur,
    #[serde(default = "d_ra_preamble_trans_max")]
    pub ra_preamble_trans_max: u32,
    #[serde(default = "d_ra_power_ramping_step_db")]
    pub ra_power_ramping_step_db: f64,
    #[serde(default = "d_ra_preamble_target_dbm")]
    pub ra_preamble_target_dbm: f64,
    #[serde(default = "d_ra_response_window")]
    pub ra_response_window: Dur,
    #[serde(default = "d_ra_contention_resolution_timer")]
    pub ra_contention_resolution_timer: Dur,
    #[serde(default = "d_zero_dur")]
    pub ra_backoff: Dur,
    #[serde(default = "d_ra_detection_snr_db")]
    pub ra_detection_snr_db: f64,
    /// After a radio link failure (random access problem, TS 36.331 §5.3.11.3): how long the
    /// UE searches before re-establishing on the same cell (T311 running, §5.3.7). Default
    /// 150 ms (TS 36.133 §6.1.2: 50 ms + T_search 100 ms for a known cell).
    #[serde(default = "d_rlf_search_delay")]
    pub rlf_search_delay: Dur,
    /// Radio link monitoring (TS 36.133 §7.6, TS 36.331 §5.3.11; only with
    /// `bsr = "standard"`): the downlink SINR (dB) taken as Qout and Qin (10 % and 2 %
    /// hypothetical PDCCH block error; defaults −8 and −6 dB, see `rantcp_ran::cell::rlm`;
    /// ns-3 LENA's `LteUePhy` uses −5 and −3.9 dB), and
    /// N310 (1, 2, 3, 4, 6, 8, 10 or 20), N311 (1, 2, 3, 4, 5, 6, 8 or 10) and T310 (0, 50,
    /// 100, 200, 500, 1000 or 2000 ms); defaults 1, 1 and 200 ms (srsRAN's eNB SIB2). N310
    /// consecutive out-of-sync indications (every 10 ms) start T310, N311 in-sync ones stop
    /// it, its expiry is a radio link failure. With `bsr = "standard"` the UE's RLC reaching
    /// maxRetxThreshold is one too.
    #[serde(default = "d_rlm_qout_db")]
    pub rlm_qout_db: f64,
    #[serde(default = "d_rlm_qin_db")]
    pub rlm_qin_db: f64,
    #[serde(default = "d_n310")]
    pub n310: u32,
    #[serde(default = "d_n311")]
    pub n311: u32,
    #[serde(default = "d_t310")]
    pub t310: Dur,
}

fn d_zero_dur() -> Dur {
    Dur(Duration::ZERO)
}
// The SR give-up and random access defaults are the MAC's own (srsRAN's eNB values, in
// `UeMacConfig::lte_default` and `RaConfig::lte`), read from there so the two cannot drift.
fn mac_default() -> UeMacConfig {
    UeMacConfig::lte_default(0)
}
fn d_dsr_trans_max() -> u32 {
    mac_default().dsr_trans_max.unwrap_or(0)
}
fn d_ra_prach_period() -> Dur {
    Dur(mac_default().ra.prach_period)
}
fn d_ra_preamble_trans_max() -> u32 {
    mac_default().ra.preamble_trans_max
}
fn d_ra_power_ramping_step_db() -> f64 {
    mac_default().ra.power_ramping_step_db
}
fn d_ra_preamble_target_dbm() -> f64 {
    mac_default().ra.preamble_initial_target_dbm
}
fn d_ra_response_window() -> Dur {
    Dur(mac_default().ra.rar_window)
}
fn d_ra_contention_resolution_timer() -> Dur {
    Dur(mac_default().ra.contention_resolution_timer)
}
fn d_ra_detection_snr_db() -> f64 {
    rantcp_ran::cell::config::PRACH_DETECTION_SNR_DB
}
fn d_rlf_search_delay() -> Dur {
    Dur(rantcp_ran::cell::config::RLF_SEARCH_DELAY)
}
fn d_rlm_qout_db() -> f64 {
    rantcp_ran::cell::rlm::QOUT_DB
}
fn d_rlm_qin_db() -> f64 {
    rantcp_ran::cell::rlm::QIN_DB
}
fn d_n310() -> u32 {
    rantcp_ran::cell::rlm::N310
}
fn d_n311() -> u32 {
    rantcp_ran::cell::rlm::N311
}
fn d_t310() -> Dur {
    Dur(rantcp_ran::cell::rlm::T310)
}

/// TS 36.331 `SchedulingRequestConfig` dsr-TransMax / TS 38.331 sr-TransMax ENUMERATED {n4,
/// n8, n16, n32, n64}; TS 36.331 `RACH-ConfigCommon` preambleTransMax {n3, n4, n5, n6, n7,
/// n8, n10, n20, n50, n100, n200} and powerRampingStep {dB0, dB2, dB4, dB6}, the same in
/// TS 38.331 `RACH-ConfigGeneric`; TS 38.331 sr-ProhibitTimer {ms1 … ms128}; the backoff
/// parameter values of TS 36.321 Table 7.2-1 (ms).
pub const DSR_TRANS_MAX: [u32; 5] = [4, 8, 16, 32, 64];
pub const PREAMBLE_TRANS_MAX: [u32; 11] = [3, 4, 5, 6, 7, 8, 10, 20, 50, 100, 200];
pub const POWER_RAMPING_STEP_DB: [f64; 4] = [0.0, 2.0, 4.0, 6.0];
/// TS 36.331 `RLF-TimersAndConstants` / `UE-TimersAndConstants`: n310 {n1, n2, n3, n4, n6,
/// n8, n10, n20}, n311 {n1, n2, n3, n4, n5, n6, n8, n10}, t310 {ms0, ms50, ms100, ms200,
/// ms500, ms1000, ms2000}.
pub const N310_VALUES: [u32; 8] = [1, 2, 3, 4, 6, 8, 10, 20];
pub const N311_VALUES: [u32; 8] = [1, 2, 3, 4, 5, 6, 8, 10];
pub const T310_MS: [u64; 7] = [0, 50, 100, 200, 500, 1000, 2000];
pub const NR_SR_PROHIBIT_MS: [u64; 9] = [0, 1, 2, 4, 8, 16, 32, 64, 128];
pub const LTE_BACKOFF_MS: [u64; 13] = [0, 10, 20, 30, 40, 60, 80, 120, 160, 240, 320, 480, 960];

fn d_zero_bytes() -> Bytes {
    Bytes(0)
}

fn d_proactive_period() -> Dur {
    Dur(Duration::from_millis(5))
}

/// `[rlc]`.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RlcSection {
    /// "am" or "um".
    pub mode: RlcModeName,
    /// SDU queue limit per UE bearer at the eNB (drops counted).
    pub buffer: Bytes,
    pub t_poll_retransmit: Dur,
    pub t_status_prohibit: Dur,
    pub t_reassembly: Dur,
}

fn d_one_u8() -> u8 {
    1
}

fn d_mtu() -> Bytes {
    Bytes(1500)
}

/// `[core]`: S1-U/N3 and the server link.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CoreSection {
    pub s1_rate: Rate,
    pub s1_delay: Dur,
    /// Server ↔ core link: rate (caps the server's sending rate), one-way delay.
    pub server_rate: Rate,
    pub server_delay: Dur,
    /// Server link and S1-U/N3 queues (bytes; at least one packet).
    pub server_queue: Bytes,
    /// IP MTU of every hop (server link, S1-U/N3 and the radio bearer), bytes. Above the PDCP
    /// SDU limit (TS 36.323 §4.3.1: 8188 bytes; TS 38.323 §4.3.1: 9000 bytes) a real bearer
    /// cannot carry it; rantcp's PDCP, like the ns-3 mmWave module seed 004 used (MTU 15000 for
    /// MSS 14000), does not refuse larger SDUs.
    #[serde(default = "d_mtu")]
    #[schemars(range(min = 68, max = 65535))]
    pub mtu: Bytes,
    /// Random errors on the server → core direction, per `error_unit` (seed 004: per byte).
    #[schemars(range(min = 0.0), extend("exclusiveMaximum" = 1.0))]
    pub error_rate: f64,
    pub error_unit: ErrUnit,
}

/// A radio scenario. See the module docs; defaults come from the scenario's TOML file.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RanScenario {
    /// Number of UEs.
    #[schemars(range(min = 1, max = 200))]
    pub ues: u32,
    /// "tcp" or "udp-saturation".
    pub traffic: Traffic,
    /// UDP saturation: CBR rate per UE (IP bytes) and packet size.
    pub udp_rate: Rate,
    pub udp_packet: Bytes,
    pub radio: RadioSection,
    pub ue: UeSection,
    pub mac: MacSection,
    pub rlc: RlcSection,
    pub core: CoreSection,
    pub flow: FlowConfig,
    /// `traffic = "m2m"`: the M2M application (seed 003 §3.4).
    #[serde(default)]
    pub m2m: M2mSection,
    /// Also write one row per uplink packet delivered at the base station with its delay
    /// (`ul_delay` table) and one per subframe with its PDCCH DCIs (`pdcch` table).
    #[serde(default)]
    pub packet_series: bool,
}

/// Bound of the scheduling and HARQ delays in slots (TS 38.214 §6.1.2.1: k2 <= 32; HARQ
/// feedback timing, TS 38.213 §9.2.3: at most 15 slots).
pub const MAX_SCHED_SLOTS: u32 = 32;

/// Largest distance in a layout (m): beyond the largest LTE cells (TS 36.331 allows up to
/// ~100 km with extended cyclic prefix and timing advance).
pub const MAX_DISTANCE_M: f64 = 100_000.0;

/// Name and address of UE `k` (0-based).
fn ue_node(k: usize) -> (String, Ipv4Addr) {
    (
        format!("ue{}", k + 1),
        Ipv4Addr::new(10, 1, (k / 250) as u8, (k % 250) as u8 + 1),
    )
}

fn sched(n: SchedName, tc: Duration) -> SchedulerKind {
    match n {
        SchedName::Rr => SchedulerKind::RoundRobin,
        SchedName::Pf => SchedulerKind::ProportionalFair { time_constant: tc },
        SchedName::MaxRate => SchedulerKind::MaxRate,
    }
}

impl ScenarioKind for RanScenario {
    fn from_table(t: toml::Table) -> Result<Self, ConfigError> {
        crate::config::from_table(t)
    }
}

impl FieldUse for RanScenario {
    const ALWAYS: &'static [&'static str] = &[
        "ues",
        "traffic",
        "radio",
        "ue",
        "mac",
        "rlc",
        "core",
        "flow",
        "packet_series",
    ];
    const CONDITIONAL: &'static [&'static str] = &["udp_rate", "udp_packet", "m2m"];
}
impl FieldUse for RadioSection {
    const ALWAYS: &'static [&'static str] = &[
        "rat",
        "carrier_ghz",
        "bandwidth_mhz",
        "frame",
        "duplex",
        "tx_power_dbm",
        "bs_height_m",
        "ue_height_m",
        "bs_antennas",
        "ue_antennas",
        "ue_noise_figure_db",
        "bs_noise_figure_db",
        "layers",
        "tx_diversity",
        "shadowing",
        "fading",
        "hex_layout",
        "cqi_period",
        "cqi_delay",
        "fixed_mcs",
        "harq_error_rate",
        "blockage_loss_db",
        "neighbour_load",
    ];
    const CONDITIONAL: &'static [&'static str] = &["isd_m", "o2i"];
}
impl FieldUse for UeSection {
    const ALWAYS: &'static [&'static str] = &["placement", "indoor"];
    const CONDITIONAL: &'static [&'static str] = &[
        "distance_m",
        "min_distance_m",
        "cell_radius_m",
        "los_duration",
        "nlos_duration",
        "drive_duration",
        "drop_area",
        "fading_speed_kmh",
    ];
}
impl FieldUse for MacSection {
    const ALWAYS: &'static [&'static str] = &[
        "scheduler",
        "ul_scheduler",
        "harq_processes",
        "harq_feedback_slots",
        "harq_max_retx",
        "pdcch_grants",
        "k2_slots",
        "sr_period",
        "periodic_bsr_timer",
        "retx_bsr_timer",
        "ue_processing",
        "enb_processing",
        "bsr",
        "ul_proactive_grant",
        "bsr_enhancement",
        "sr_offset_per_ue",
        "sr_prohibit_timer",
    ];
    const CONDITIONAL: &'static [&'static str] = &concat::<{ 2 + Self::STANDARD_BSR.len() }>(&[
        &["pf_time_constant", "ul_proactive_period"],
        Self::STANDARD_BSR,
    ]);
}
impl MacSection {
    /// What only standard reporting reads: SR and random access (the dsr-TransMax fallback)
    /// and radio link monitoring (`ran_config`, cell/mod.rs); under `bsr = "ideal"` the eNB
    /// ignores SRs, so none goes unanswered.
    pub const STANDARD_BSR: &'static [&'static str] = &[
        "dsr_trans_max",
        "ra_prach_period",
        "ra_preamble_trans_max",
        "ra_power_ramping_step_db",
        "ra_preamble_target_dbm",
        "ra_response_window",
        "ra_contention_resolution_timer",
        "ra_backoff",
        "ra_detection_snr_db",
        "rlf_search_delay",
        "rlm_qout_db",
        "rlm_qin_db",
        "n310",
        "n311",
        "t310",
    ];
}
impl FieldUse for RlcSection {
    const ALWAYS: &'static [&'static str] = &["mode", "buffer", "t_reassembly"];
    const CONDITIONAL: &'static [&'static str] = &["t_poll_retransmit", "t_status_prohibit"];
}
impl FieldUse for CoreSection {
    const ALWAYS: &'static [&'static str] = &[
        "s1_rate",
        "s1_delay",
        "server_rate",
        "server_delay",
        "server_queue",
        "mtu",
        "error_rate",
    ];
    const CONDITIONAL: &'static [&'static str] = &["error_unit"];
}

impl RanScenario {
    /// What [`Scenario::unread`] says of a radio network (`build_sim`, `radio_config`,
    /// `ran_config`, `ue_mobility`).
    pub fn unread_fields(&self, out: &mut Unreads) {
        let traffic = || format!("traffic = {:?}", name_of(self.traffic));
        out.unless(
            self.traffic == Traffic::UdpSaturation,
            "",
            &["udp_rate", "udp_packet"],
            traffic,
        );
        out.unless(self.traffic == Traffic::M2m, "", &["m2m"], traffic);
        match self.traffic {
            // The UDP flows take their start only.
            Traffic::UdpSaturation => {
                out.unless(false, "flow", FlowConfig::CONDITIONAL, traffic);
                out.unless(false, "flow", &["app"], traffic);
            }
            // M2M runs its own application over the flow's TCP settings.
            Traffic::M2m => {
                self.flow.unread("flow", true, out);
                out.unless(false, "flow", FlowConfig::APP, traffic);
                out.unless(false, "flow", &["app"], traffic);
            }
            // `build_sim`: a download runs as a bulk send from the server (`tcp_source`).
            Traffic::Tcp => self.flow.unread("flow", true, out),
        }
        out.unless(false, "flow", &["count"], || {
            "the radio scenarios run one flow per UE (`ues`)".into()
        });
        let r = &self.radio;
        let u = &self.ue;
        let hex = || format!("radio.hex_layout = {}", r.hex_layout);
        out.unless(r.hex_layout, "radio", &["isd_m"], hex);
        out.unless(r.hex_layout, "ue", &["drop_area"], hex);
        out.unless(u.indoor > 0.0, "radio", &["o2i"], || {
            "ue.indoor = 0 (every UE is outdoors)".into()
        });
        let placement = || format!("ue.placement = {:?}", name_of(u.placement));
        out.unless(
            u.placement == Placement::Fixed,
            "ue",
            &["distance_m"],
            placement,
        );
        out.unless(
            u.placement == Placement::Random,
            "ue",
            &["min_distance_m"],
            placement,
        );
        if u.placement == Placement::Random {
            out.unless(!r.hex_layout, "ue", &["cell_radius_m"], || {
                "radio.hex_layout = true (UEs are dropped within ISD/2)".into()
            });
        } else {
            out.unless(false, "ue", &["cell_radius_m"], placement);
        }
        out.unless(
            u.placement == Placement::UrbanRoute,
            "ue",
            &["drive_duration"],
            placement,
        );
        if u.placement == Placement::UrbanRoute {
            out.unless(false, "ue", &["los_duration", "nlos_duration"], placement);
        } else {
            // `radio_config`: the schedule runs when both are > 0; a 0s one is its switch (read),
            // the other is then unread.
            let (los, nlos) = (u.los_duration.0 .0 > 0, u.nlos_duration.0 .0 > 0);
            out.unless(!los || nlos, "ue", &["los_duration"], || {
                "ue.nlos_duration = 0s (the blockage schedule is off)".into()
            });
            out.unless(!nlos || los, "ue", &["nlos_duration"], || {
                "ue.los_duration = 0s (the blockage schedule is off)".into()
            });
        }
        out.unless(r.fading, "ue", &["fading_speed_kmh"], || {
            "radio.fading = false".into()
        });
        let m = &self.mac;
        out.unless(
            m.scheduler == SchedName::Pf || m.ul_scheduler == SchedName::Pf,
            "mac",
            &["pf_time_constant"],
            || "neither mac.scheduler nor mac.ul_scheduler is \"pf\"".into(),
        );
        out.unless(
            m.ul_proactive_grant.0 > 0,
            "mac",
            &["ul_proactive_period"],
            || "mac.ul_proactive_grant = 0 (no proactive grants)".into(),
        );
        // Ideal reporting: the eNB ignores SRs, so no SR goes unanswered (no dsr-TransMax
        // fallback to random access) and there is no radio link monitoring (`ran_config`,
        // cell/mod.rs). (`bsr_enhancement` with it is refused in `validate`.)
        out.unless(
            m.bsr == BsrMode::Standard,
            "mac",
            MacSection::STANDARD_BSR,
            || "mac.bsr = \"ideal\"".into(),
        );
        out.unless(
            self.rlc.mode == RlcModeName::Am,
            "rlc",
            &["t_poll_retransmit", "t_status_prohibit"],
            || "rlc.mode = \"um\" (no ARQ)".into(),
        );
        out.unless(self.core.error_rate > 0.0, "core", &["error_unit"], || {
            "core.error_rate = 0".into()
        });
    }
}

impl Scenario for RanScenario {
    fn max_duration(&self) -> Duration {
        Duration::from_secs(3600)
    }

    fn unread(&self, _common: &Common, out: &mut Unreads) {
        self.unread_fields(out);
    }

    fn validate(&self, common: &Common) -> Result<(), ConfigError> {
        check(
            (1..=200).contains(&self.ues),
            "ues",
            "must be between 1 and 200",
        )?;
        check(self.udp_rate.0 > 0, "udp_rate", "must be > 0")?;
        check(
            (28..=65535).contains(&self.udp_packet.0),
            "udp_packet",
            "must be between 28 and 65535 bytes",
        )?;
        let r = &self.radio;
        check(
            r.carrier_ghz.is_finite() && r.carrier_ghz > 0.0 && r.carrier_ghz <= 300.0,
            "radio.carrier_ghz",
            "must be > 0 and <= 300 GHz",
        )?;
        check(
            r.tx_power_dbm.is_finite() && (-50.0..=80.0).contains(&r.tx_power_dbm),
            "radio.tx_power_dbm",
            "must be between -50 and 80 dBm",
        )?;
        for (v, path) in [
            (r.bs_height_m, "radio.bs_height_m"),
            (r.ue_height_m, "radio.ue_height_m"),
        ] {
            check(
                v.is_finite() && v > 0.0 && v <= 1000.0,
                path,
                "must be > 0 and <= 1000 m",
            )?;
        }
        for (v, path) in [
            (r.ue_noise_figure_db, "radio.ue_noise_figure_db"),
            (r.bs_noise_figure_db, "radio.bs_noise_figure_db"),
        ] {
            check(
                (0.0..=30.0).contains(&v),
                path,
                "must be between 0 and 30 dB",
            )?;
        }
        check((1..=4).contains(&r.layers), "radio.layers", "must be 1..=4")?;
        check(
            (0.0..=1.0).contains(&r.neighbour_load),
            "radio.neighbour_load",
            "must be a fraction between 0 and 1",
        )?;
        check(
            (1..=2).contains(&r.tx_diversity),
            "radio.tx_diversity",
            "must be 1 or 2 (LTE TM2)",
        )?;
        check(
            self.ue
                .fading_speed_kmh
                .is_none_or(|v| v.is_finite() && (0.0..=500.0).contains(&v)),
            "ue.fading_speed_kmh",
            "must be between 0 and 500 km/h",
        )?;
        let max_mcs = match r.rat {
            RatPreset::Lte => 28,
            RatPreset::Mmwave => 27,
        };
        check(
            r.fixed_mcs.is_none_or(|m| m <= max_mcs),
            "radio.fixed_mcs",
            format!("must be 0..={max_mcs} for this rat"),
        )?;
        check(
            r.harq_error_rate.is_none_or(|p| (0.0..1.0).contains(&p)),
            "radio.harq_error_rate",
            "must be a probability in [0, 1)",
        )?;
        check(
            r.rat == RatPreset::Mmwave || r.frame == FramePreset::Nr,
            "radio.frame",
            "\"ns3-mmwave\" needs radio.rat = \"mmwave\" (LTE's frame is fixed: \"nr\")",
        )?;
        check(
            r.blockage_loss_db.is_finite() && (0.0..=300.0).contains(&r.blockage_loss_db),
            "radio.blockage_loss_db",
            "must be between 0 and 300 dB",
        )?;
        check(
            (0.0..=1.0).contains(&self.ue.indoor),
            "ue.indoor",
            "must be the share of indoor UEs, between 0 and 1",
        )?;
        match (r.rat, r.frame) {
            (RatPreset::Lte, _) => check(
                r.bandwidth_mhz.is_finite()
                    && rantcp_ran::frame::lte_n_prb((r.bandwidth_mhz * 1000.0).round() as u32)
                        .is_some(),
                "radio.bandwidth_mhz",
                "1.4, 3, 5, 10, 15 or 20",
            )?,
            (RatPreset::Mmwave, FramePreset::Nr) => check(
                r.bandwidth_mhz == MMWAVE_1GHZ_MHZ || mmwave_n_prb(r.bandwidth_mhz).is_some(),
                "radio.bandwidth_mhz",
                "50, 100, 200 or 400 (TS 38.101-2 Table 5.3.2-1 at 120 kHz), or 1000 (the \
                 seeds' 1 GHz carrier, 660 PRBs)",
            )?,
            (RatPreset::Mmwave, FramePreset::Ns3Mmwave) => check(
                r.bandwidth_mhz == MMWAVE_1GHZ_MHZ,
                "radio.bandwidth_mhz",
                "1000 with radio.frame = \"ns3-mmwave\" (the ns-3 mmWave module's 1008 MHz \
                 frame); other bandwidths need radio.frame = \"nr\"",
            )?,
        }
        check(
            r.isd_m > 10.0 && r.isd_m <= MAX_DISTANCE_M,
            "radio.isd_m",
            "must be > 10 m and <= 100 km",
        )?;
        let slot = self.radio_config().carrier.slot;
        let run = common.duration.d();
        check(
            r.cqi_period.0 >= slot && r.cqi_period.0 < run,
            "radio.cqi_period",
            format!(
                "must be at least one slot ({}) and shorter than the run",
                Dur(slot)
            ),
        )?;
        // Under TDD the UE measures CSI only in slots with downlink symbols (TS 38.214
        // §5.2.2.5): some CQI grid instant must fall in one.
        let rc = self.radio_config();
        if let Duplex::Tdd(pattern) = &rc.duplex {
            let p = r.cqi_period.0.as_nanos().max(1);
            let measures = (0..4 * pattern.len() as u64 + 64).any(|k| {
                let s = rc.carrier.slot_index(Time::from_nanos(k * p));
                rc.duplex.slot_type(s) != rantcp_ran::frame::SlotType::Uplink
            });
            check(
                measures,
                "radio.cqi_period",
                "every CQI instant falls in an uplink-only slot of the TDD pattern, where the UE \
                 measures nothing (TS 38.214 §5.2.2.5): pick a period that reaches a slot with \
                 downlink symbols (e.g. one slot)",
            )?;
        }
        check(
            r.cqi_delay.0 + r.cqi_period.0 < run,
            "radio.cqi_delay",
            "the first CQI report must arrive within the run: cqi_period + cqi_delay < duration",
        )?;
        check(
            self.ue.cell_radius_m > self.ue.min_distance_m
                && self.ue.min_distance_m >= 1.0
                && self.ue.cell_radius_m <= MAX_DISTANCE_M,
            "ue.cell_radius_m",
            "must exceed ue.min_distance_m (>= 1 m) and be <= 100 km",
        )?;
        check(
            self.ue.distance_m >= 1.0 && self.ue.distance_m <= MAX_DISTANCE_M,
            "ue.distance_m",
            "must be >= 1 m and <= 100 km",
        )?;
        check(
            self.ue.placement != Placement::UrbanRoute || self.ues == 1,
            "ues",
            "the urban route carries exactly one UE",
        )?;
        let m = &self.mac;
        check(
            (1..=32).contains(&m.harq_processes),
            "mac.harq_processes",
            "must be 1..=32",
        )?;
        check(
            (1..=MAX_SCHED_SLOTS).contains(&m.harq_feedback_slots),
            "mac.harq_feedback_slots",
            format!("must be 1..={MAX_SCHED_SLOTS} slots"),
        )?;
        check(m.pdcch_grants >= 1, "mac.pdcch_grants", "must be >= 1")?;
        check(
            (1..=MAX_SCHED_SLOTS).contains(&m.k2_slots),
            "mac.k2_slots",
            format!("must be 1..={MAX_SCHED_SLOTS} slots (TS 38.214 §6.1.2.1)"),
        )?;
        // TS 36.331 SchedulingRequestConfig: the shortest SR period is one slot (1 ms in LTE).
        check(
            m.sr_period.0 >= slot,
            "mac.sr_period",
            format!("must be at least one slot ({})", Dur(slot)),
        )?;
        // A duration as whole milliseconds (None if it is not one): the RRC fields below are
        // enumerations of milliseconds.
        let ms_of = |d: Duration| {
            d.as_nanos()
                .is_multiple_of(1_000_000)
                .then(|| d.as_nanos() / 1_000_000)
        };
        if self.radio.rat == RatPreset::Lte {
            let list = |v: &[u64]| {
                v.iter()
                    .map(|x| {
                        if *x == 0 {
                            "0s (infinity)".to_string()
                        } else {
                            format!("{x}ms")
                        }
                    })
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            check(
                ms_of(m.periodic_bsr_timer.d()).is_some_and(|x| LTE_PERIODIC_BSR_MS.contains(&x)),
                "mac.periodic_bsr_timer",
                format!(
                    "must be a TS 36.331 periodicBSR-Timer value: {}",
                    list(&LTE_PERIODIC_BSR_MS)
                ),
            )?;
            check(
                ms_of(m.retx_bsr_timer.d()).is_some_and(|x| LTE_RETX_BSR_MS.contains(&x)),
                "mac.retx_bsr_timer",
                format!(
                    "must be a TS 36.331 retxBSR-Timer value: {}",
                    list(&LTE_RETX_BSR_MS)
                ),
            )?;
        }
        let join = |v: &[u64]| {
            v.iter()
                .map(|x| format!("{x}ms"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        check(
            m.dsr_trans_max == 0 || DSR_TRANS_MAX.contains(&m.dsr_trans_max),
            "mac.dsr_trans_max",
            "must be 4, 8, 16, 32 or 64 (TS 36.331 dsr-TransMax), or 0 (SRs for ever)",
        )?;
        if self.radio.rat == RatPreset::Lte {
            let p = m.sr_period.0.as_nanos().max(1);
            let k = m.sr_prohibit_timer.0.as_nanos() / p;
            check(
                m.sr_prohibit_timer.0.as_nanos().is_multiple_of(p) && k <= 7,
                "mac.sr_prohibit_timer",
                format!(
                    "must be 0 to 7 SR periods of mac.sr_period ({}) (TS 36.331 sr-ProhibitTimer-r9)",
                    m.sr_period
                ),
            )?;
            check(
                ms_of(m.ra_response_window.d())
                    .is_some_and(|x| [2, 3, 4, 5, 6, 7, 8, 10].contains(&x)),
                "mac.ra_response_window",
                "must be 2, 3, 4, 5, 6, 7, 8 or 10 ms (TS 36.331 ra-ResponseWindowSize)",
            )?;
            check(
                ms_of(m.ra_contention_resolution_timer.d())
                    .is_some_and(|x| x % 8 == 0 && (8..=64).contains(&x)),
                "mac.ra_contention_resolution_timer",
                "must be 8, 16, 24, 32, 40, 48, 56 or 64 ms (TS 36.331 mac-ContentionResolutionTimer)",
            )?;
            check(
                (-120.0..=-90.0).contains(&m.ra_preamble_target_dbm)
                    && m.ra_preamble_target_dbm % 2.0 == 0.0,
                "mac.ra_preamble_target_dbm",
                "must be -120 to -90 dBm in steps of 2 (TS 36.331 preambleInitialReceivedTargetPower)",
            )?;
            check(
                ms_of(m.ra_backoff.d()).is_some_and(|x| LTE_BACKOFF_MS.contains(&x)),
                "mac.ra_backoff",
                format!(
                    "must be a TS 36.321 Table 7.2-1 backoff parameter value: {}",
                    join(&LTE_BACKOFF_MS)
                ),
            )?;
        } else {
            check(
                ms_of(m.sr_prohibit_timer.d()).is_some_and(|x| NR_SR_PROHIBIT_MS.contains(&x)),
                "mac.sr_prohibit_timer",
                format!(
                    "must be a TS 38.331 sr-ProhibitTimer value: {}",
                    join(&NR_SR_PROHIBIT_MS)
                ),
            )?;
            check(
                m.ra_response_window.0 >= slot
                    && m.ra_response_window.0 <= Duration::from_millis(10),
                "mac.ra_response_window",
                format!(
                    "must be one slot ({}) to 10ms (TS 38.331 ra-ResponseWindow)",
                    Dur(slot)
                ),
            )?;
            check(
                ms_of(m.ra_contention_resolution_timer.d())
                    .is_some_and(|x| x % 8 == 0 && (8..=64).contains(&x)),
                "mac.ra_contention_resolution_timer",
                "must be 8, 16, 24, 32, 40, 48, 56 or 64 ms (TS 38.331 ra-ContentionResolutionTimer)",
            )?;
            check(
                (-202.0..=-60.0).contains(&m.ra_preamble_target_dbm)
                    && m.ra_preamble_target_dbm % 2.0 == 0.0,
                "mac.ra_preamble_target_dbm",
                "must be -202 to -60 dBm in steps of 2 (TS 38.331 preambleReceivedTargetPower)",
            )?;
            check(
                m.ra_backoff.0 <= Duration::from_millis(1920),
                "mac.ra_backoff",
                "must be 0 to 1920ms (TS 38.321 Table 7.2-1)",
            )?;
        }
        check(
            PREAMBLE_TRANS_MAX.contains(&m.ra_preamble_trans_max),
            "mac.ra_preamble_trans_max",
            "must be 3, 4, 5, 6, 7, 8, 10, 20, 50, 100 or 200 (TS 36.331 preambleTransMax)",
        )?;
        check(
            POWER_RAMPING_STEP_DB.contains(&m.ra_power_ramping_step_db),
            "mac.ra_power_ramping_step_db",
            "must be 0, 2, 4 or 6 (dB; TS 36.331 powerRampingStep)",
        )?;
        check(
            m.ra_prach_period.0 >= slot
                && m.ra_prach_period.0.as_nanos().is_multiple_of(slot.as_nanos().max(1))
                && m.ra_prach_period.0 <= Duration::from_millis(160),
            "mac.ra_prach_period",
            format!(
                "must be a whole number of slots ({}) up to 160ms (TS 36.211 Table 5.7.1-2, TS 38.211 Table 6.3.3.2-2)",
                Dur(slot)
            ),
        )?;
        check(
            m.ra_detection_snr_db.is_finite() && (-40.0..=20.0).contains(&m.ra_detection_snr_db),
            "mac.ra_detection_snr_db",
            "must be -40 to 20 (dB)",
        )?;
        check(
            m.rlf_search_delay.0 <= Duration::from_secs(30),
            "mac.rlf_search_delay",
            "must be <= 30s (TS 36.331 T311 is at most 30 s)",
        )?;
        check(
            m.rlm_qout_db.is_finite() && (-30.0..=10.0).contains(&m.rlm_qout_db),
            "mac.rlm_qout_db",
            "must be -30 to 10 (dB)",
        )?;
        check(
            m.rlm_qin_db.is_finite()
                && m.rlm_qin_db <= 10.0
                && (!m.rlm_qout_db.is_finite() || m.rlm_qin_db > m.rlm_qout_db),
            "mac.rlm_qin_db",
            "must be above mac.rlm_qout_db and at most 10 (dB; Qin is the better quality)",
        )?;
        check(
            N310_VALUES.contains(&m.n310),
            "mac.n310",
            "must be 1, 2, 3, 4, 6, 8, 10 or 20 (TS 36.331 n310)",
        )?;
        check(
            N311_VALUES.contains(&m.n311),
            "mac.n311",
            "must be 1, 2, 3, 4, 5, 6, 8 or 10 (TS 36.331 n311)",
        )?;
        check(
            T310_MS
                .iter()
                .any(|&t| m.t310.0 == Duration::from_millis(t)),
            "mac.t310",
            "must be 0, 50, 100, 200, 500, 1000 or 2000 ms (TS 36.331 t310)",
        )?;
        check(
            !m.bsr_enhancement || m.bsr == BsrMode::Standard,
            "mac.bsr_enhancement",
            "needs mac.bsr = \"standard\" (under ideal reporting the eNB ignores BSRs)",
        )?;
        check(self.m2m.down.0 >= 1, "m2m.down", "must be >= 1 byte")?;
        check(self.m2m.up.0 >= 1, "m2m.up", "must be >= 1 byte")?;
        check(
            m.ul_proactive_period.0 >= slot,
            "mac.ul_proactive_period",
            format!("must be at least one slot ({})", Dur(slot)),
        )?;
        for (v, path) in [
            (m.ue_processing, "mac.ue_processing"),
            (m.enb_processing, "mac.enb_processing"),
        ] {
            check(v.0 <= Duration::from_millis(100), path, "must be <= 100ms")?;
        }
        check(
            self.rlc.buffer.0 >= 1500,
            "rlc.buffer",
            "must be >= 1500 bytes",
        )?;
        let pkt = match self.traffic {
            Traffic::Tcp | Traffic::M2m => max_packet_bytes(&self.flow),
            Traffic::UdpSaturation => self.udp_packet.0,
        };
        check(
            (68..=65535).contains(&self.core.mtu.0),
            "core.mtu",
            "must be between 68 and 65535 bytes",
        )?;
        match self.traffic {
            Traffic::Tcp | Traffic::M2m => check_mtu(
                self.core.mtu.0,
                "core.mtu",
                flow_ip_packet(&self.flow, None),
                "flow.mss",
            )?,
            Traffic::UdpSaturation => {
                check_mtu(self.core.mtu.0, "core.mtu", self.udp_packet.0, "udp_packet")?
            }
        }
        check(
            self.core.server_queue.0 >= pkt,
            "core.server_queue",
            format!("must hold at least one packet: >= {pkt} bytes with these flow settings"),
        )?;
        check(
            (0.0..1.0).contains(&self.core.error_rate),
            "core.error_rate",
            "must be in [0, 1)",
        )?;
        let c = &self.core;
        check_link(c.s1_rate.bps(), c.s1_delay.d(), "core.s1_", pkt, common)?;
        check_link(
            c.server_rate.bps(),
            c.server_delay.d(),
            "core.server_",
            pkt,
            common,
        )?;
        check(
            c.s1_delay.0 + c.server_delay.0 < run,
            "core.server_delay",
            "a packet from the server must reach the base station within the run: server_delay + s1_delay < duration",
        )?;
        self.flow.validate("flow")?;
        check(
            self.traffic != Traffic::Tcp || self.flow.app != AppKind::UdpCbr,
            "flow.app",
            "\"udp-cbr\" is not an app of the radio scenarios (allowed: bulk, download, ftp1, bursts, video); their UDP is traffic = \"udp-saturation\"",
        )?;
        check_flow_start(&self.flow, common)
    }

    fn build(&self, common: &Common) -> Result<Vec<Network>, ConfigError> {
        Ok(Network::single(self.build_sim(common)?))
    }

    fn to_json(&self) -> serde_json::Value {
        serde_json::to_value(self).expect("config serialises")
    }
}

/// `radio.bandwidth_mhz` of the mmWave preset's non-standard 1 GHz carrier
/// ([`Carrier::mmwave_1ghz`], 660 PRBs; seeds 001 and 004).
const MMWAVE_1GHZ_MHZ: f64 = 1000.0;

/// N_RB of a standard FR2 channel of `bandwidth_mhz` at 120 kHz (μ = 3, the mmWave frame's
/// numerology): TS 38.101-2 Table 5.3.2-1 (50, 100, 200, 400 MHz).
fn mmwave_n_prb(bandwidth_mhz: f64) -> Option<u16> {
    if !(bandwidth_mhz.is_finite() && bandwidth_mhz.fract() == 0.0 && bandwidth_mhz > 0.0) {
        return None;
    }
    rantcp_ran::frame::nr_n_prb(
        rantcp_ran::frame::FrequencyRange::Fr2,
        120,
        bandwidth_mhz as u32,
    )
}

impl RanScenario {
    fn radio_config(&self) -> RadioConfig {
        let r = &self.radio;
        let mut cfg = match r.rat {
            RatPreset::Lte => {
                let mut c = RadioConfig::lte_macro();
                c.carrier = Carrier::lte(
                    r.carrier_ghz * 1e9,
                    (r.bandwidth_mhz * 1000.0).round() as u32,
                )
                .expect("validated");
                c
            }
            RatPreset::Mmwave => {
                let mut c = RadioConfig::mmwave_28ghz();
                if r.frame == FramePreset::Ns3Mmwave {
                    c.carrier = Carrier::ns3_mmwave_1ghz();
                    c.nr_alloc = rantcp_ran::phy::NrAllocation::ns3_mmwave();
                } else if r.bandwidth_mhz != MMWAVE_1GHZ_MHZ {
                    // A standard FR2 channel: μ = 3 as the 1 GHz carrier, N_RB from TS 38.101-2
                    // Table 5.3.2-1; power and noise follow the occupied bandwidth.
                    c.carrier = Carrier::nr_custom(
                        c.carrier.fc_hz,
                        3,
                        mmwave_n_prb(r.bandwidth_mhz).expect("validated"),
                    );
                }
                c.carrier.fc_hz = r.carrier_ghz * 1e9;
                c
            }
        };
        cfg.duplex = r.duplex.duplex();
        cfg.ue_noise_figure_db = r.ue_noise_figure_db;
        cfg.bs_noise_figure_db = r.bs_noise_figure_db;
        cfg.bf_gain_db = if r.bs_antennas > 0 && r.ue_antennas > 0 {
            beamforming_gain_db(r.bs_antennas, r.ue_antennas)
        } else {
            0.0
        };
        cfg.shadowing = r.shadowing;
        if !r.fading {
            cfg.fading.kind = rantcp_ran::fading::FadingKind::None;
        }
        cfg.fading.tx_diversity = r.tx_diversity;
        if let Some(v) = self.ue.fading_speed_kmh {
            cfg.fading.scatterer_speed_mps = v / 3.6;
        }
        cfg.harq_processes = self.mac.harq_processes as usize;
        cfg.fixed_mcs = r.fixed_mcs;
        cfg.fixed_bler = r.harq_error_rate;
        cfg.cqi_period = r.cqi_period.d();
        cfg.cqi_delay = r.cqi_delay.d();
        cfg.blockage_loss_db = r.blockage_loss_db;
        if self.ue.indoor > 0.0 {
            cfg.o2i = Some(O2iConfig {
                indoor_share: self.ue.indoor,
                high_loss_share: r.o2i.0,
            });
        }
        if self.ue.los_duration.0 .0 > 0 && self.ue.nlos_duration.0 .0 > 0 {
            cfg.los = LosSource::Schedule(BlockageSchedule::alternating(
                self.ue.los_duration.d(),
                self.ue.nlos_duration.d(),
            ));
        }
        if self.ue.placement == Placement::UrbanRoute {
            cfg.los = LosSource::Geometry2d(seed004_obstacles());
        }
        cfg
    }

    fn ran_config(&self, slot: Duration) -> RanConfig {
        let m = &self.mac;
        let mut c = match self.radio.rat {
            RatPreset::Lte => RanConfig::lte(slot),
            RatPreset::Mmwave => RanConfig::nr(slot),
        };
        let tc = m.pf_time_constant.d();
        c.dl_scheduler = sched(m.scheduler, tc);
        c.ul_scheduler = sched(m.ul_scheduler, tc);
        c.harq.n_processes = m.harq_processes;
        c.harq.feedback_delay = slot.saturating_mul(m.harq_feedback_slots as u64);
        c.harq.max_retx = m.harq_max_retx;
        c.ul_harq_processes = m.harq_processes;
        c.ul_harq_max_retx = m.harq_max_retx;
        c.ul_harq_feedback = slot.saturating_mul(m.harq_feedback_slots as u64);
        c.pdcch_grants_per_slot = m.pdcch_grants;
        c.k2_slots = m.k2_slots;
        c.ue_mac.sr_period = m.sr_period.d();
        c.ue_mac.periodic_bsr_timer = if m.periodic_bsr_timer.0 .0 == 0 {
            None
        } else {
            Some(m.periodic_bsr_timer.d())
        };
        c.ue_mac.retx_bsr_timer = m.retx_bsr_timer.d();
        c.ue_processing = m.ue_processing.d();
        c.enb_processing = m.enb_processing.d();
        c.ideal_bsr = m.bsr == BsrMode::Ideal;
        c.ue_mac.bsr_enhancement = m.bsr_enhancement;
        c.sr_offset_per_ue = m.sr_offset_per_ue;
        c.ue_mac.sr_prohibit_timer = m.sr_prohibit_timer.d();
        c.ue_mac.dsr_trans_max = (m.dsr_trans_max > 0).then_some(m.dsr_trans_max);
        let ra = &mut c.ue_mac.ra;
        ra.prach_period = m.ra_prach_period.d();
        ra.prach_offset =
            Duration::from_nanos(ra.prach_offset.as_nanos() % ra.prach_period.as_nanos().max(1));
        ra.preamble_trans_max = m.ra_preamble_trans_max;
        ra.power_ramping_step_db = m.ra_power_ramping_step_db;
        ra.preamble_initial_target_dbm = m.ra_preamble_target_dbm;
        ra.rar_window = m.ra_response_window.d();
        ra.contention_resolution_timer = m.ra_contention_resolution_timer.d();
        ra.backoff = m.ra_backoff.d();
        ra.msg3_delay = slot.saturating_mul(
            m.k2_slots as u64
                + if self.radio.rat == RatPreset::Lte {
                    2
                } else {
                    6
                },
        );
        ra.msg4_delay = slot.saturating_mul(m.harq_feedback_slots as u64);
        c.prach_detection_snr_db = m.ra_detection_snr_db;
        c.rlf_search_delay = m.rlf_search_delay.d();
        // Radio link monitoring and RLC's maxRetxThreshold indication declare radio link
        // failures only where the standard request procedure (and its random access fallback)
        // runs: ideal reporting abstracts the control plane away.
        if !c.ideal_bsr {
            c.rlm = Some(rantcp_ran::cell::rlm::RlmConfig {
                q_out_db: m.rlm_qout_db,
                q_in_db: m.rlm_qin_db,
                n310: m.n310,
                n311: m.n311,
                t310: m.t310.d(),
            });
            c.rlf_on_rlc_max_retx = true;
        }
        c.record_packet_series = self.packet_series;
        c.ul_proactive_grant_bytes = m.ul_proactive_grant.0.min(u32::MAX as u64) as u32;
        c.ul_proactive_period = m.ul_proactive_period.d();
        let r = &self.rlc;
        c.rlc.mode = match r.mode {
            RlcModeName::Um => RlcMode::Um,
            RlcModeName::Am => RlcMode::Am,
        };
        if c.rlc.mode == RlcMode::Um && c.rlc.layout == rantcp_ran::rlc::RlcLayout::Nr18 {
            c.rlc.layout = rantcp_ran::rlc::RlcLayout::Nr12;
            c.rlc.window_size = 2048;
        }
        c.rlc.max_tx_buffer_bytes = r.buffer.0;
        c.rlc.t_poll_retransmit = r.t_poll_retransmit.d();
        c.rlc.t_status_prohibit = r.t_status_prohibit.d();
        c.rlc.t_reassembly = r.t_reassembly.d();
        c
    }

    /// UE mobility models.
    fn ue_mobility(&self, site: Vec3, seed: u64) -> Vec<Mobility> {
        let h = self.radio.ue_height_m;
        let n = self.ues as usize;
        match self.ue.placement {
            Placement::UrbanRoute => vec![seed004_urban_route(self.ue.drive_duration.d())],
            Placement::Fixed => (0..n)
                .map(|k| {
                    let a = std::f64::consts::TAU * k as f64 / n as f64 + 0.1;
                    let d = self.ue.distance_m;
                    Mobility::fixed(Vec3::new(site.x + d * a.cos(), site.y + d * a.sin(), h))
                })
                .collect(),
            Placement::Random => {
                let mut rng = Rng::for_entity(seed, "scenario/ue-drop");
                // The hexagonal layout drops UEs in the centre site's area: the disk inscribed
                // in its hexagon (radius ISD/2).
                let r1 = if self.radio.hex_layout {
                    self.radio.isd_m / 2.0
                } else {
                    self.ue.cell_radius_m
                };
                let r0 = self.ue.min_distance_m.min(r1 * 0.5);
                (0..n)
                    .map(|_| {
                        // Uniform over the annulus area.
                        let u = rng.uniform();
                        let r = (r0 * r0 + u * (r1 * r1 - r0 * r0)).sqrt();
                        let a = std::f64::consts::TAU * rng.uniform();
                        Mobility::fixed(Vec3::new(site.x + r * a.cos(), site.y + r * a.sin(), h))
                    })
                    .collect()
            }
        }
    }

    /// Build the network, its flows and functions.
    pub fn build_sim(&self, common: &Common) -> Result<Sim, ConfigError> {
        let seed = common.seed;
        let mut sim = Sim::new(seed);
        let server = sim.add_node("server", Ipv4Addr::new(10, 0, 0, 1));
        let core = sim.add_node("core", Ipv4Addr::new(10, 0, 0, 254));
        let enb = sim.add_node("enb", Ipv4Addr::new(10, 0, 1, 1));
        let c = &self.core;
        let unit = match c.error_unit {
            ErrUnit::Packet => ErrorUnit::Packet,
            ErrUnit::Byte => ErrorUnit::Byte,
            ErrUnit::Bit => ErrorUnit::Bit,
        };
        // UDP saturation measures the radio: the server link must not be the bottleneck.
        let srv_rate = match self.traffic {
            Traffic::Tcp | Traffic::M2m => c.server_rate.bps(),
            Traffic::UdpSaturation => c
                .server_rate
                .bps()
                .max(self.udp_rate.bps().saturating_mul(self.ues as u64) / 100 * 105),
        };
        let srv_dn = LinkParams {
            rate_bps: srv_rate,
            delay: c.server_delay.d(),
            queue: QueueLimit::Bytes(c.server_queue.0),
            error_rate: c.error_rate,
            error_unit: unit,
        };
        let srv_up = LinkParams {
            error_rate: 0.0,
            ..srv_dn
        };
        let s1 = LinkParams {
            rate_bps: c.s1_rate.bps(),
            delay: c.s1_delay.d(),
            queue: QueueLimit::Bytes(c.server_queue.0),
            error_rate: 0.0,
            error_unit: ErrorUnit::Packet,
        };
        let (s0, c0) = sim.connect(server, core, srv_dn, srv_up);
        let (c1, e0) = sim.connect(core, enb, s1, s1);
        sim.add_route(server, Ipv4Addr::UNSPECIFIED, 0, s0);
        sim.add_route(core, Ipv4Addr::new(10, 0, 0, 0), 24, c0);
        sim.add_route(core, Ipv4Addr::UNSPECIFIED, 0, c1);
        sim.add_route(enb, Ipv4Addr::UNSPECIFIED, 0, e0);

        // Radio.
        let rcfg = self.radio_config();
        let r = &self.radio;
        let site = Vec3::new(0.0, 0.0, r.bs_height_m);
        let mut radio = if r.hex_layout {
            RadioEnvironment::new(
                rcfg,
                hex_layout(1, r.isd_m, r.bs_height_m, r.tx_power_dbm),
                seed,
            )
        } else {
            let cells = vec![CellConfig {
                position: site,
                antenna: AntennaPattern::ISOTROPIC,
                tx_power_dbm: r.tx_power_dbm,
                site: 0,
            }];
            RadioEnvironment::new(rcfg, cells, seed)
        };
        let mobs = self.ue_mobility(site, seed);
        let attach = match (r.hex_layout, self.ue.drop_area) {
            (true, DropArea::ServingSite) => Some(0),
            _ => None,
        };
        for (k, m) in mobs.iter().enumerate() {
            radio.add_ue_on(k as u16 + 1, m.clone(), r.layers, attach);
        }
        // Neighbour-cell load: the cells no UE attached to interfere on this fraction of PRBs.
        let serving: Vec<usize> = radio
            .rntis()
            .map(|x| radio.large_scale(x).serving_cell)
            .collect();
        for c in 0..radio.cells().len() {
            if !serving.contains(&c) {
                radio.set_cell_load(c, r.neighbour_load);
            }
        }
        let slot = radio.carrier().slot;
        let mut dev = RanDevice::new(self.ran_config(slot), radio, enb);
        let mut ue_nodes = Vec::new();
        for k in 0..mobs.len() {
            let (name, addr) = ue_node(k);
            let n = sim.add_node(&name, addr);
            dev.add_ue(k as u16 + 1, n, addr);
            ue_nodes.push(n);
        }
        // Flows: one download per UE (added to the network after the device, as always).
        let f = &self.flow;
        let specs: Vec<FlowSpec> = ue_nodes
            .iter()
            .enumerate()
            .map(|(k, &n)| FlowSpec {
                name: ue_node(k).0,
                kind: match self.traffic {
                    // `flow.video.ues`: the UEs past the first N download in bulk.
                    Traffic::Tcp
                        if f.app == AppKind::Video
                            && f.video.ues.is_some_and(|n| k as u32 >= n) =>
                    {
                        FlowKind::Bulk {
                            bytes: None,
                            write: None,
                        }
                    }
                    Traffic::Tcp => f.tcp_source().unwrap_or(FlowKind::Bulk {
                        bytes: f.bytes.map(|b| b.0),
                        write: f.app_write(),
                    }),
                    Traffic::UdpSaturation => FlowKind::UdpCbr {
                        rate_bps: self.udp_rate.bps(),
                        packet_bytes: self.udp_packet.0 as u32,
                    },
                    Traffic::M2m => FlowKind::M2m(M2m {
                        down_bytes: self.m2m.down.0,
                        up_bytes: self.m2m.up.0,
                        think: self.m2m.think.d(),
                        think_exponential: self.m2m.think_distribution
                            == ThinkDistribution::Exponential,
                        count: (self.m2m.count > 0).then_some(self.m2m.count),
                    }),
                },
                src: server,
                dst: n,
                // M2M: the server side listens (the device connects); one server port per
                // device, as separate servers would have (a listener takes only its own flow's
                // SYN in any case, host.rs).
                src_port: if self.traffic == Traffic::M2m {
                    5201 + k as u16
                } else {
                    5201
                },
                dst_port: 49152 + k as u16,
                start: Time::ZERO + f.start.d(),
                tcp_sender: f.tcp_sender(),
                tcp_receiver: f.tcp_receiver(),
            })
            .collect();
        let facts = RadioFacts {
            slot,
            harq_feedback_slots: self.mac.harq_feedback_slots,
            rlc_buffer_bytes: self.rlc.buffer.0,
        };
        let env = build_env(&sim, common, &specs, Some(facts));
        for f in attach_functions(&mut sim, common, &env)? {
            dev.add_function(f);
        }
        let d = sim.add_device(Box::new(dev));
        let e_radio = sim.attach(enb, d, "radio");
        sim.add_route(enb, Ipv4Addr::new(10, 1, 0, 0), 16, e_radio);
        for &n in &ue_nodes {
            let i = sim.attach(n, d, "radio");
            sim.add_route(n, Ipv4Addr::UNSPECIFIED, 0, i);
        }

        for spec in specs {
            sim.add_flow(spec);
        }
        Ok(sim)
    }
}
