//! Quantities with units written in config values: rates (`"50Mbps"`), durations (`"20ms"`),
//! byte sizes (`"2.5MB"`, `"6MiB"`) and queue limits (`"1bdp"`, `"100packets"`, `"250kB"`).
//! Decimal prefixes are powers of 1000 (k, M, G, T); binary ones (KiB, MiB, GiB) powers of 1024.

use rantcp_core::Duration;
use schemars::{json_schema, JsonSchema, Schema, SchemaGenerator};
use serde::{de, Deserialize, Deserializer, Serialize, Serializer};
use std::borrow::Cow;
use std::fmt;

/// Split "2.5MB" into (2.5, "MB"), rejecting signs and empty numbers.
fn split_number(s: &str) -> Option<(f64, &str)> {
    let s = s.trim();
    let end = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == 'e' || c == 'E' || c == '_'))
        .unwrap_or(s.len());
    // "1e3" is fine but a unit starting with 'e'/'E' ("...Ebps") is not supported anyway.
    let (num, unit) = s.split_at(end);
    let v: f64 = num.replace('_', "").parse().ok()?;
    if !v.is_finite() {
        return None;
    }
    Some((v, unit.trim()))
}

macro_rules! string_quantity {
    ($t:ident, $what:literal, $example:literal, $pattern:literal) => {
        impl<'de> Deserialize<'de> for $t {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                struct V;
                impl<'de> de::Visitor<'de> for V {
                    type Value = $t;
                    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                        write!(f, "{} such as {}", $what, $example)
                    }
                    fn visit_str<E: de::Error>(self, s: &str) -> Result<$t, E> {
                        $t::parse(s).ok_or_else(|| {
                            E::custom(format!("{:?} is not {} (e.g. {})", s, $what, $example))
                        })
                    }
                }
                d.deserialize_str(V)
            }
        }
        impl Serialize for $t {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(&self.to_string())
            }
        }
        impl JsonSchema for $t {
            fn schema_name() -> Cow<'static, str> {
                stringify!($t).into()
            }
            fn json_schema(_: &mut SchemaGenerator) -> Schema {
                json_schema!({
                    "type": "string",
                    "description": concat!($what, ", e.g. ", $example),
                    "pattern": $pattern,
                })
            }
        }
    };
}

/// A data rate in bit/s, written `"50Mbps"`, `"1Gbps"`, `"64kbps"` or `"2.5Gbit/s"`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Rate(pub u64);

impl Rate {
    pub fn parse(s: &str) -> Option<Rate> {
        let (v, unit) = split_number(s)?;
        let mult = match unit {
            "bps" | "bit/s" => 1e0,
            "kbps" | "Kbps" | "kbit/s" => 1e3,
            "Mbps" | "Mbit/s" => 1e6,
            "Gbps" | "Gbit/s" => 1e9,
            "Tbps" | "Tbit/s" => 1e12,
            _ => return None,
        };
        let bps = (v * mult).round();
        (1.0..1.8e19).contains(&bps).then_some(Rate(bps as u64))
    }
    pub fn bps(self) -> u64 {
        self.0
    }
}
impl fmt::Display for Rate {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        for (m, u) in [
            (1_000_000_000_000u64, "Tbps"),
            (1_000_000_000, "Gbps"),
            (1_000_000, "Mbps"),
            (1_000, "kbps"),
        ] {
            if self.0 >= m && self.0.is_multiple_of((m / 1000).max(1)) {
                return write!(f, "{}{}", fmt_trim(self.0 as f64 / m as f64), u);
            }
        }
        write!(f, "{}bps", self.0)
    }
}
string_quantity!(
    Rate,
    "a positive data rate",
    "\"50Mbps\"",
    "^[0-9._eE]+ *(bps|bit/s|[kKMGT](bps|bit/s))$"
);

/// A span of time, written `"20ms"`, `"1.5s"`, `"250us"`, `"100ns"` or `"2min"`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct Dur(pub Duration);

impl Dur {
    pub fn parse(s: &str) -> Option<Dur> {
        let (v, unit) = split_number(s)?;
        let ns_per = match unit {
            "ns" => 1.0,
            "us" | "µs" => 1e3,
            "ms" => 1e6,
            "s" => 1e9,
            "min" => 60e9,
            "h" => 3600e9,
            _ => return None,
        };
        let ns = (v * ns_per).round();
        (ns < 1.8e19).then_some(Dur(Duration(ns as u64)))
    }
    pub fn d(self) -> Duration {
        self.0
    }
    pub fn ms(ms: u64) -> Dur {
        Dur(Duration::from_millis(ms))
    }
}
impl fmt::Display for Dur {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        let ns = self.0 .0;
        if ns == 0 {
            return write!(f, "0s");
        }
        for (m, u) in [(1_000_000_000u64, "s"), (1_000_000, "ms"), (1_000, "us")] {
            if ns >= m && ns.is_multiple_of(m / 1000) {
                return write!(f, "{}{}", fmt_trim(ns as f64 / m as f64), u);
            }
        }
        write!(f, "{ns}ns")
    }
}
string_quantity!(
    Dur,
    "a duration",
    "\"20ms\"",
    "^[0-9._eE]+ *(ns|us|µs|ms|s|min|h)$"
);

/// A size in bytes, written `"2.5MB"`, `"64kB"`, `"6MiB"`, `"1500B"`, or a bare integer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Bytes(pub u64);

impl Bytes {
    pub fn parse(s: &str) -> Option<Bytes> {
        let (v, unit) = split_number(s)?;
        let mult = match unit {
            "" | "B" => 1.0,
            "kB" | "KB" => 1e3,
            "MB" => 1e6,
            "GB" => 1e9,
            "KiB" => 1024.0,
            "MiB" => 1048576.0,
            "GiB" => 1073741824.0,
            _ => return None,
        };
        let b = (v * mult).round();
        (b < 1.8e19).then_some(Bytes(b as u64))
    }
}
impl fmt::Display for Bytes {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        let b = self.0;
        for (m, u) in [(1_073_741_824u64, "GiB"), (1_048_576, "MiB")] {
            if b >= m && b.is_multiple_of(m) {
                return write!(f, "{}{}", b / m, u);
            }
        }
        for (m, u) in [(1_000_000_000u64, "GB"), (1_000_000, "MB"), (1_000, "kB")] {
            if b >= m && b.is_multiple_of(m / 1000) {
                return write!(f, "{}{}", fmt_trim(b as f64 / m as f64), u);
            }
        }
        write!(f, "{b}B")
    }
}
impl<'de> Deserialize<'de> for Bytes {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> de::Visitor<'de> for V {
            type Value = Bytes;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                write!(f, "a size in bytes such as \"2.5MB\" or 1500")
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<Bytes, E> {
                Bytes::parse(s).ok_or_else(|| {
                    E::custom(format!(
                        "{s:?} is not a size in bytes (e.g. \"2.5MB\", \"6MiB\", 1500)"
                    ))
                })
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Bytes, E> {
                u64::try_from(v)
                    .map(Bytes)
                    .map_err(|_| E::custom(format!("{v} is negative; a size must be >= 0")))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Bytes, E> {
                Ok(Bytes(v))
            }
        }
        d.deserialize_any(V)
    }
}
impl Serialize for Bytes {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_string())
    }
}
impl JsonSchema for Bytes {
    fn schema_name() -> Cow<'static, str> {
        "Bytes".into()
    }
    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "description": "a size in bytes, e.g. \"2.5MB\", \"6MiB\" or 1500",
            "anyOf": [
                {"type": "integer", "minimum": 0},
                {"type": "string", "pattern": "^[0-9._eE]+ *(B|kB|KB|MB|GB|KiB|MiB|GiB)?$"}
            ]
        })
    }
}

/// A queue limit: `"1bdp"` (multiples of the path's bandwidth-delay product), `"100packets"`,
/// or a byte size such as `"250kB"`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Queue {
    Bdp(f64),
    Packets(u64),
    Bytes(u64),
}

impl Queue {
    pub fn parse(s: &str) -> Option<Queue> {
        let (v, unit) = split_number(s)?;
        match unit {
            "bdp" | "BDP" => (v > 0.0).then_some(Queue::Bdp(v)),
            "p" | "packets" | "pkts" | "packet" => {
                (v >= 1.0 && v.fract() == 0.0).then_some(Queue::Packets(v as u64))
            }
            _ => Bytes::parse(s)
                .filter(|b| b.0 > 0)
                .map(|b| Queue::Bytes(b.0)),
        }
    }
}
impl fmt::Display for Queue {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self {
            Queue::Bdp(v) => write!(f, "{}bdp", fmt_trim(*v)),
            Queue::Packets(p) => write!(f, "{p}packets"),
            Queue::Bytes(b) => write!(f, "{}", Bytes(*b)),
        }
    }
}
string_quantity!(
    Queue,
    "a queue limit",
    "\"1bdp\", \"100packets\" or \"250kB\"",
    "^[0-9._eE]+ *(bdp|BDP|p|packets|pkts|B|kB|KB|MB|GB|KiB|MiB|GiB)$"
);

fn fmt_trim(v: f64) -> String {
    let s = format!("{v:.6}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    s.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn parse_and_print_round_trip() {
        assert_eq!(Rate::parse("50Mbps"), Some(Rate(50_000_000)));
        assert_eq!(Rate::parse("2.5Gbit/s"), Some(Rate(2_500_000_000)));
        assert_eq!(Rate::parse("-50Mbps"), None);
        assert_eq!(Rate::parse("0Mbps"), None);
        assert_eq!(Rate::parse("50"), None);
        assert_eq!(Rate(50_000_000).to_string(), "50Mbps");
        assert_eq!(Rate(1_500_000).to_string(), "1.5Mbps");
        assert_eq!(Dur::parse("20ms"), Some(Dur::ms(20)));
        assert_eq!(Dur::parse("1us").unwrap().0, Duration(1000));
        assert_eq!(Dur::ms(1500).to_string(), "1.5s");
        assert_eq!(Dur(Duration(1000)).to_string(), "1us");
        assert_eq!(Bytes::parse("2.5MB"), Some(Bytes(2_500_000)));
        assert_eq!(Bytes::parse("6MiB"), Some(Bytes(6 << 20)));
        assert_eq!(Bytes(6 << 20).to_string(), "6MiB");
        assert_eq!(Bytes(250_000).to_string(), "250kB");
        assert_eq!(Queue::parse("1bdp"), Some(Queue::Bdp(1.0)));
        assert_eq!(Queue::parse("100packets"), Some(Queue::Packets(100)));
        assert_eq!(Queue::parse("250kB"), Some(Queue::Bytes(250_000)));
        assert_eq!(Queue::parse("0packets"), None);
        for s in ["50Mbps", "1Gbps", "64kbps", "1.5Mbps"] {
            assert_eq!(
                Rate::parse(&Rate::parse(s).unwrap().to_string()),
                Rate::parse(s)
            );
        }
    }
}
