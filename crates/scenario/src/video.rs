//! `[flow.video]`: the adaptive-video client of `flow.app = "video"` (dissertation §4.2–§4.4;
//! the model is `rantcp_net::video`), with the two behaviours the chapter measured as presets.
//! Every field a preset sets can be set on its own.
//!
//! | field | "ios" | "android" | from |
//! |---|---|---|---|
//! | `new_connection` | 1.0 | 0.1 | §4.3.1, Fig. 22: iOS opens a new connection per GET; Android "tends to use only one TCP connection" (no count given: one GET in ten is our choice) |
//! | `get_interval` | 10 s, exponential | 10 s, exponential | Fig. 23: average GET inter-arrival 2.5–30 s per title (10 s is our mid-range choice) |
//! | `bytes_per_get` | rest of the video | rest of the video | §4.2: "the client ... requests the entire video at once" and asks again on each new connection |
//! | `flow_control` (`player_rate`, `player_buffer`) | false (reads at once) | true (720 kbit/s, 4.5 MB) | §4.3.1, Figs. 17–20: iOS is pushed as fast as the network allows; Android takes ~4.5 MB about every 50 s (4.5 MB / 50 s = 720 kbit/s) and holds its window at zero meanwhile |
//! | `rcv_buf` | 130 kB | 82 kB | Fig. 15: maximum receive windows of the iPhone and the Android phone |
//! | `abandon` | "silent" | "silent" | Fig. 14: the RST answers the first late packet |
//!
//! The request is `flow.request` bytes (an HTTP GET); the video is `video_bytes` long (100 MB
//! by default: longer than any run, so the player never runs out).

use crate::config::{check, ConfigError};
use crate::units::{Bytes, Dur, Rate};
use rantcp_core::Duration;
use rantcp_net::{Abandon, Arrivals, Player, Video};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// `flow.video.preset`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum VideoPreset {
    /// iOS-like: a new TCP connection per GET, no application flow control.
    Ios,
    /// Android-like: mostly one connection, application flow control.
    Android,
}

/// `flow.video.abandon`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum AbandonName {
    /// Drop the old connection without sending anything; the first late segment draws a RST.
    Silent,
    /// Abort it with a RST at once (RFC 9293 §3.10.5).
    Abort,
}

/// `flow.video.gets`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum GetGaps {
    /// Exponential gaps of mean `get_interval`.
    Exponential,
    /// Every `get_interval`.
    Fixed,
}

fn d_preset() -> VideoPreset {
    VideoPreset::Ios
}
fn d_video_bytes() -> Bytes {
    Bytes(100_000_000)
}
fn d_gets() -> GetGaps {
    GetGaps::Exponential
}

/// `[flow.video]` (used when `flow.app = "video"`).
#[derive(Clone, Copy, Debug, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct VideoFlowConfig {
    /// "ios" or "android": the defaults of the fields below (see the table in the docs).
    #[serde(default = "d_preset")]
    pub preset: VideoPreset,
    /// Only the first this many UEs run the video client; the others run a bulk download
    /// (absent: all). Radio scenarios only.
    #[serde(default)]
    pub ues: Option<u32>,
    /// Size of the video.
    #[serde(default = "d_video_bytes")]
    pub video_bytes: Bytes,
    /// Mean time between GETs (both presets: 10s).
    #[serde(default)]
    pub get_interval: Option<Dur>,
    /// "exponential" or "fixed" gaps between GETs.
    #[serde(default = "d_gets")]
    pub gets: GetGaps,
    /// Bytes each GET asks for (absent: the rest of the video).
    #[serde(default)]
    pub bytes_per_get: Option<Bytes>,
    /// Probability that a GET after the first opens a new TCP connection (ios: 1, android: 0.1).
    #[serde(default)]
    pub new_connection: Option<f64>,
    /// Application flow control: the player reads only what its buffer has room for (ios:
    /// false, android: true).
    #[serde(default)]
    pub flow_control: Option<bool>,
    /// Playback rate of the flow control (720kbit/s).
    #[serde(default)]
    pub player_rate: Option<Rate>,
    /// Bytes the player holds ahead of playback (4.5MB).
    #[serde(default)]
    pub player_buffer: Option<Bytes>,
    /// The client's TCP receive buffer, all of it offered as window whatever the stack's
    /// `rcv_win_ratio` (ios: 130kB, android: 82kB: the phones' maximum windows, Fig. 15).
    #[serde(default)]
    pub rcv_buf: Option<Bytes>,
    /// How the client drops a connection it leaves: "silent" or "abort".
    #[serde(default)]
    pub abandon: Option<AbandonName>,
}

impl Default for VideoFlowConfig {
    fn default() -> Self {
        VideoFlowConfig {
            preset: d_preset(),
            ues: None,
            video_bytes: d_video_bytes(),
            get_interval: None,
            gets: d_gets(),
            flow_control: None,
            bytes_per_get: None,
            new_connection: None,
            player_rate: None,
            player_buffer: None,
            rcv_buf: None,
            abandon: None,
        }
    }
}

impl VideoFlowConfig {
    pub fn validate(&self, p: &str) -> Result<(), ConfigError> {
        let v = self.resolve(400);
        check(
            self.video_bytes.0 >= 1 && self.video_bytes.0 <= 1 << 40,
            &format!("{p}.video_bytes"),
            "must be between 1 byte and 1TiB",
        )?;
        check(
            self.get_interval.is_none_or(|d| {
                d.0 >= Duration::from_millis(10) && d.0 <= Duration::from_secs(3600)
            }),
            &format!("{p}.get_interval"),
            "must be between 10ms and 3600s",
        )?;
        check(
            self.bytes_per_get.is_none_or(|b| b.0 >= 1),
            &format!("{p}.bytes_per_get"),
            "must be at least 1 byte (leave it out for the rest of the video)",
        )?;
        check(
            v.new_connection.is_finite() && (0.0..=1.0).contains(&v.new_connection),
            &format!("{p}.new_connection"),
            "must be between 0 and 1",
        )?;
        check(
            self.player_buffer.is_none_or(|b| b.0 >= 1500),
            &format!("{p}.player_buffer"),
            "must be at least 1500B",
        )?;
        check(
            self.rcv_buf.is_none_or(|b| b.0 >= 1500 && b.0 <= 1 << 30),
            &format!("{p}.rcv_buf"),
            "must be between 1500B and 1GiB",
        )?;
        check(
            self.ues.is_none_or(|n| n >= 1),
            &format!("{p}.ues"),
            "must be at least 1 (leave it out for all UEs)",
        )
    }

    /// The application, with the preset's values where a field is absent.
    pub fn resolve(&self, request_bytes: u64) -> Video {
        let ios = self.preset == VideoPreset::Ios;
        let interval = self.get_interval.map_or(Duration::from_secs(10), |d| d.0);
        let rate = self.player_rate.map_or(720_000, |r| r.bps());
        let flow_control = self.flow_control.unwrap_or(!ios);
        let buffer = self.player_buffer.map(|b| b.0).unwrap_or(4_500_000);
        Video {
            video_bytes: self.video_bytes.0,
            gets: match self.gets {
                GetGaps::Exponential => Arrivals::Poisson {
                    rate_per_s: 1.0 / interval.as_secs_f64(),
                },
                GetGaps::Fixed => Arrivals::Periodic { interval },
            },
            bytes_per_get: self.bytes_per_get.map(|b| b.0),
            new_connection: self.new_connection.unwrap_or(if ios { 1.0 } else { 0.1 }),
            request_bytes,
            player: flow_control.then_some(Player {
                rate_bps: rate,
                buffer_bytes: buffer,
            }),
            abandon: match self.abandon.unwrap_or(AbandonName::Silent) {
                AbandonName::Silent => Abandon::Silent,
                AbandonName::Abort => Abandon::Abort,
            },
            rcv_buf: Some(
                self.rcv_buf
                    .map_or(if ios { 130_000 } else { 82_000 }, |b| b.0),
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn presets_give_the_chapters_values() {
        let ios = VideoFlowConfig::default().resolve(400);
        assert_eq!(ios.new_connection, 1.0);
        assert_eq!(
            (ios.player, ios.rcv_buf, ios.bytes_per_get),
            (None, Some(130_000), None)
        );
        assert_eq!(ios.gets, Arrivals::Poisson { rate_per_s: 0.1 });
        let a = VideoFlowConfig {
            preset: VideoPreset::Android,
            ..Default::default()
        }
        .resolve(400);
        assert_eq!(a.new_connection, 0.1);
        assert_eq!(
            a.player,
            Some(Player {
                rate_bps: 720_000,
                buffer_bytes: 4_500_000
            })
        );
        assert_eq!(a.rcv_buf, Some(82_000));
        let b = VideoFlowConfig {
            preset: VideoPreset::Android,
            flow_control: Some(false),
            ..Default::default()
        };
        assert_eq!(b.resolve(400).player, None);
    }

    #[test]
    fn bad_values_name_the_field() {
        let c = VideoFlowConfig {
            new_connection: Some(1.5),
            ..Default::default()
        };
        let e = c.validate("flow.video").unwrap_err().to_string();
        assert!(e.contains("flow.video.new_connection"), "{e}");
    }
}
