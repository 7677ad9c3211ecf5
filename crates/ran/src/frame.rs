//! Frame structure: carriers, numerologies, PRB counts and duplexing.
//!
//! * LTE: 1 ms TTI, 15 kHz subcarriers, 12 subcarriers × 14 symbols per PRB pair; transmission
//!   bandwidth configuration N_RB = 6/15/25/50/75/100 for 1.4/3/5/10/15/20 MHz
//!   (TS 36.101 Table 5.6-1).
//! * NR: numerology μ = 0…3, SCS = 15·2^μ kHz, slot = 1 ms/2^μ, 14 symbols (TS 38.211 §4.2,
//!   §4.3.2); maximum transmission bandwidth N_RB from TS 38.101-1 Table 5.3.2-1 (FR1) and
//!   TS 38.101-2 Table 5.3.2-1 (FR2).
//! * 28 GHz "1 GHz": no single NR carrier is 1 GHz wide (FR2 tops out at 400 MHz = 264 PRBs at
//!   120 kHz). Following the ns-3 mmWave module, which treats the bandwidth as a free parameter,
//!   [`Carrier::mmwave_1ghz`] is a configurable non-standard carrier: μ = 3 (120 kHz, 125 µs
//!   slots, seed 001's slot length) with N_RB = 660, i.e. 2.5 × the 400 MHz allocation (the same
//!   95 % occupancy as 38.101-2). [`Carrier::ns3_mmwave_1ghz`] instead reproduces ns-3 mmWave's
//!   own frame (100 µs subframes of 24 symbols, 72 chunks × 48 subcarriers of ≈ 291.7 kHz in
//!   1008 MHz, modelled as 288 PRBs of 12 subcarriers), seed 004's "100 µs subframes".
//! * Duplexing: FDD (every slot carries DL and UL) or TDD with a repeating slot pattern given as
//!   a string such as "CCDDUUUU" (C = control only, D = downlink data, U = uplink data,
//!   S = special/guard slot without data, F = flexible: both).

use rantcp_core::{Duration, Time};

/// Radio access technology of a carrier (selects the MCS/TBS procedure).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rat {
    Lte,
    Nr,
}

/// LTE N_RB for a channel bandwidth in kHz (1400, 3000, 5000, 10000, 15000, 20000).
pub fn lte_n_prb(bandwidth_khz: u32) -> Option<u16> {
    Some(match bandwidth_khz {
        1400 => 6,
        3000 => 15,
        5000 => 25,
        10_000 => 50,
        15_000 => 75,
        20_000 => 100,
        _ => return None,
    })
}

/// Frequency range of an NR carrier.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FrequencyRange {
    /// 410 MHz – 7.125 GHz (TS 38.101-1).
    Fr1,
    /// 24.25 – 52.6 GHz (TS 38.101-2).
    Fr2,
}

/// NR maximum transmission bandwidth N_RB for a channel bandwidth (MHz) and SCS (kHz):
/// TS 38.101-1 Table 5.3.2-1 (FR1) and TS 38.101-2 Table 5.3.2-1 (FR2). `None` where the
/// table has no entry (e.g. 1000 MHz).
pub fn nr_n_prb(fr: FrequencyRange, scs_khz: u32, bandwidth_mhz: u32) -> Option<u16> {
    const FR1_BW: [u32; 16] = [
        3, 5, 10, 15, 20, 25, 30, 35, 40, 45, 50, 60, 70, 80, 90, 100,
    ];
    const FR1_15: [u16; 16] = [
        15, 25, 52, 79, 106, 133, 160, 188, 216, 242, 270, 0, 0, 0, 0, 0,
    ];
    const FR1_30: [u16; 16] = [
        0, 11, 24, 38, 51, 65, 78, 92, 106, 119, 133, 162, 189, 217, 245, 273,
    ];
    const FR1_60: [u16; 16] = [
        0, 0, 11, 18, 24, 31, 38, 44, 51, 58, 65, 79, 93, 107, 121, 135,
    ];
    let v = match fr {
        FrequencyRange::Fr1 => {
            let i = FR1_BW.iter().position(|&b| b == bandwidth_mhz)?;
            match scs_khz {
                15 => FR1_15[i],
                30 => FR1_30[i],
                60 => FR1_60[i],
                _ => 0,
            }
        }
        FrequencyRange::Fr2 => match (scs_khz, bandwidth_mhz) {
            (60, 50) => 66,
            (60, 100) => 132,
            (60, 200) => 264,
            (120, 50) => 32,
            (120, 100) => 66,
            (120, 200) => 132,
            (120, 400) => 264,
            _ => 0,
        },
    };
    (v > 0).then_some(v)
}

/// A carrier: what the PHY needs to turn PRBs into time, bandwidth and noise.
#[derive(Clone, Debug, PartialEq)]
pub struct Carrier {
    pub rat: Rat,
    /// Carrier frequency (Hz).
    pub fc_hz: f64,
    /// Subcarrier spacing (Hz).
    pub scs_hz: f64,
    /// PRBs in the carrier.
    pub n_prb: u16,
    /// Slot (TTI) length.
    pub slot: Duration,
    /// OFDM symbols per slot.
    pub symbols_per_slot: u8,
    /// Subcarriers per PRB (12 in LTE and NR).
    pub subcarriers_per_prb: u16,
}

impl Carrier {
    /// LTE carrier at `fc_hz` with `bandwidth_khz` (1400…20000).
    pub fn lte(fc_hz: f64, bandwidth_khz: u32) -> Option<Self> {
        Some(Carrier {
            rat: Rat::Lte,
            fc_hz,
            scs_hz: 15e3,
            n_prb: lte_n_prb(bandwidth_khz)?,
            slot: Duration::from_millis(1),
            symbols_per_slot: 14,
            subcarriers_per_prb: 12,
        })
    }
    /// NR carrier with numerology `mu` (0…3) and a 38.101 channel bandwidth (MHz); the
    /// frequency range follows from `fc_hz` (FR2 above 24.25 GHz).
    pub fn nr(fc_hz: f64, mu: u8, bandwidth_mhz: u32) -> Option<Self> {
        if mu > 3 {
            return None;
        }
        let fr = if fc_hz >= 24.25e9 {
            FrequencyRange::Fr2
        } else {
            FrequencyRange::Fr1
        };
        let scs_khz = 15u32 << mu;
        Some(Carrier {
            rat: Rat::Nr,
            fc_hz,
            scs_hz: scs_khz as f64 * 1e3,
            n_prb: nr_n_prb(fr, scs_khz, bandwidth_mhz)?,
            slot: nr_slot(mu),
            symbols_per_slot: 14,
            subcarriers_per_prb: 12,
        })
    }
    /// A non-standard NR-like carrier: numerology `mu`, explicit PRB count.
    pub fn nr_custom(fc_hz: f64, mu: u8, n_prb: u16) -> Self {
        Carrier {
            rat: Rat::Nr,
            fc_hz,
            scs_hz: (15e3) * (1u32 << mu.min(6)) as f64,
            n_prb,
            slot: nr_slot(mu),
            symbols_per_slot: 14,
            subcarriers_per_prb: 12,
        }
    }
    /// Seeds 001/004's "28 GHz, 1 GHz" carrier as rantcp models it by default: μ = 3,
    /// 660 PRBs (see the module docs).
    pub fn mmwave_1ghz() -> Self {
        Self::nr_custom(28e9, 3, 660)
    }
    /// The ns-3 mmWave module's default frame: 100 µs subframes of 24 symbols, 288 PRBs of 12
    /// subcarriers at 1008 MHz / 3456 ≈ 291.67 kHz.
    pub fn ns3_mmwave_1ghz() -> Self {
        Carrier {
            rat: Rat::Nr,
            fc_hz: 28e9,
            scs_hz: 14e6 / 48.0,
            n_prb: 288,
            slot: Duration::from_micros(100),
            symbols_per_slot: 24,
            subcarriers_per_prb: 12,
        }
    }
    /// Occupied bandwidth N_RB · 12 · SCS (Hz): the thermal-noise bandwidth.
    pub fn occupied_bandwidth_hz(&self) -> f64 {
        self.n_prb as f64 * self.subcarriers_per_prb as f64 * self.scs_hz
    }
    /// Index of the slot containing `t`.
    pub fn slot_index(&self, t: Time) -> u64 {
        t.as_nanos() / self.slot.as_nanos().max(1)
    }
    /// Start time of slot `index`.
    pub fn slot_start(&self, index: u64) -> Time {
        Time::from_nanos(index * self.slot.as_nanos())
    }
}

/// NR slot length for numerology μ: 1 ms / 2^μ.
pub fn nr_slot(mu: u8) -> Duration {
    Duration::from_nanos(1_000_000 >> mu.min(6))
}

/// What a slot may carry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SlotType {
    /// 'C': control only, no data.
    Control,
    /// 'D': downlink data.
    Downlink,
    /// 'U': uplink data.
    Uplink,
    /// 'S': special (switching/guard) slot, no data.
    Special,
    /// 'F' (or every slot of an FDD carrier): downlink and uplink.
    Flexible,
}

/// FDD, or TDD with a repeating slot pattern.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Duplex {
    Fdd,
    Tdd(Vec<SlotType>),
}

impl Duplex {
    /// Parse a TDD pattern such as "CCDDUUUU" (case-insensitive; C, D, U, S, F).
    pub fn tdd(pattern: &str) -> Result<Self, String> {
        let v: Result<Vec<_>, _> = pattern
            .chars()
            .filter(|c| !c.is_whitespace())
            .map(|c| match c.to_ascii_uppercase() {
                'C' => Ok(SlotType::Control),
                'D' => Ok(SlotType::Downlink),
                'U' => Ok(SlotType::Uplink),
                'S' => Ok(SlotType::Special),
                'F' => Ok(SlotType::Flexible),
                other => Err(format!(
                    "TDD pattern {pattern:?}: unknown slot type {other:?}"
                )),
            })
            .collect();
        let v = v?;
        if v.is_empty() {
            return Err("empty TDD pattern".into());
        }
        Ok(Duplex::Tdd(v))
    }
    /// Type of slot `index`.
    pub fn slot_type(&self, index: u64) -> SlotType {
        match self {
            Duplex::Fdd => SlotType::Flexible,
            Duplex::Tdd(p) => p[(index % p.len() as u64) as usize],
        }
    }
    /// Can slot `index` carry downlink data?
    pub fn is_dl(&self, index: u64) -> bool {
        matches!(
            self.slot_type(index),
            SlotType::Downlink | SlotType::Flexible
        )
    }
    /// Can slot `index` carry uplink data?
    pub fn is_ul(&self, index: u64) -> bool {
        matches!(self.slot_type(index), SlotType::Uplink | SlotType::Flexible)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lte_and_nr_prb_tables() {
        let lte: Vec<_> = [1400, 3000, 5000, 10_000, 15_000, 20_000]
            .iter()
            .map(|&b| lte_n_prb(b).unwrap())
            .collect();
        assert_eq!(lte, vec![6, 15, 25, 50, 75, 100]);
        assert_eq!(nr_n_prb(FrequencyRange::Fr1, 30, 100), Some(273));
        assert_eq!(nr_n_prb(FrequencyRange::Fr1, 15, 20), Some(106));
        assert_eq!(nr_n_prb(FrequencyRange::Fr1, 15, 100), None);
        assert_eq!(nr_n_prb(FrequencyRange::Fr2, 120, 400), Some(264));
        assert_eq!(nr_n_prb(FrequencyRange::Fr2, 120, 1000), None);
        let c = Carrier::nr(28e9, 3, 400).unwrap();
        assert_eq!((c.n_prb, c.slot), (264, Duration::from_micros(125)));
        assert_eq!(
            Carrier::nr(3.5e9, 1, 100).unwrap().slot,
            Duration::from_micros(500)
        );
        assert_eq!(nr_slot(0), Duration::from_millis(1));
        assert_eq!(nr_slot(2), Duration::from_micros(250));
        let m = Carrier::mmwave_1ghz();
        assert!((m.occupied_bandwidth_hz() - 950.4e6).abs() < 1.0);
        assert!((Carrier::ns3_mmwave_1ghz().occupied_bandwidth_hz() - 1008e6).abs() < 1.0);
        assert_eq!(
            Carrier::lte(2e9, 20_000)
                .unwrap()
                .slot_index(Time::from_micros(3500)),
            3
        );
    }

    #[test]
    fn tdd_pattern() {
        let d = Duplex::tdd("CCDDUUUU").unwrap();
        let types: Vec<_> = (0..10).map(|i| d.slot_type(i)).collect();
        use SlotType::*;
        assert_eq!(
            types,
            vec![
                Control, Control, Downlink, Downlink, Uplink, Uplink, Uplink, Uplink, Control,
                Control
            ]
        );
        assert!(d.is_dl(10) && !d.is_ul(10));
        assert!(!d.is_dl(4) && d.is_ul(4));
        assert!(Duplex::Fdd.is_dl(7) && Duplex::Fdd.is_ul(7));
        assert!(Duplex::tdd("DDX").is_err());
    }
}
