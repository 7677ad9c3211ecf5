//! rantcp-trace: TCP packet-trace analysis (the dissertation's §5.3 "TCP Packet Trace Analysis
//! Process", Figure 28): read a pcap/pcapng capture ([`reader`]), decode each frame to a TCP
//! segment ([`decode`]), split the segments into sessions with the repairs field captures need
//! ([`session`]), flag each packet as Wireshark's TCP analysis would ([`analysis`]) and summarise
//! each session. One streaming pass; packets leave in fixed-size column chunks
//! ([`PacketColumns`]) so a caller can store them while the pass goes on.
//!
//! ```
//! let capture = rantcp_trace::testing::handshake_and_data();
//! let mut rows = 0;
//! let out = rantcp_trace::analyze(&capture[..], Default::default(), 1 << 16, |c| rows += c.len()).unwrap();
//! assert_eq!(rows, 5);
//! assert_eq!(out.sessions.len(), 1);
//! assert_eq!(out.sessions[0].dirs[1].unique_bytes, 1000);
//! ```

#![forbid(unsafe_code)]

pub mod analysis;
pub mod decode;
pub mod reader;
pub mod session;
pub mod testing;

use std::io::Read;

pub use analysis::flag;
pub use reader::{Format, ReadError, ReadSummary};
pub use session::{Options, PacketRow, Session, StartReason};

/// Packet rows in columns (one vector per `packets` table column).
#[derive(Clone, Debug, Default)]
pub struct PacketColumns {
    pub session: Vec<u32>,
    pub frame: Vec<u32>,
    pub ts_ns: Vec<i64>,
    pub dir: Vec<u8>,
    pub tcp_flags: Vec<u8>,
    pub seq: Vec<u32>,
    pub ack: Vec<u32>,
    pub win: Vec<u32>,
    pub payload_len: Vec<u32>,
    pub ip_len: Vec<u32>,
    pub analysis: Vec<u16>,
    pub rtt_us: Vec<u32>,
    pub in_flight: Vec<u32>,
}

impl PacketColumns {
    pub fn with_capacity(n: usize) -> Self {
        PacketColumns {
            session: Vec::with_capacity(n),
            frame: Vec::with_capacity(n),
            ts_ns: Vec::with_capacity(n),
            dir: Vec::with_capacity(n),
            tcp_flags: Vec::with_capacity(n),
            seq: Vec::with_capacity(n),
            ack: Vec::with_capacity(n),
            win: Vec::with_capacity(n),
            payload_len: Vec::with_capacity(n),
            ip_len: Vec::with_capacity(n),
            analysis: Vec::with_capacity(n),
            rtt_us: Vec::with_capacity(n),
            in_flight: Vec::with_capacity(n),
        }
    }

    pub fn len(&self) -> usize {
        self.ts_ns.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ts_ns.is_empty()
    }

    #[inline]
    pub fn push(&mut self, r: &PacketRow) {
        self.session.push(r.session);
        self.frame.push(r.frame.min(u32::MAX as u64) as u32);
        self.ts_ns.push(r.ts_ns);
        self.dir.push(r.dir);
        self.tcp_flags.push(r.tcp_flags);
        self.seq.push(r.seq);
        self.ack.push(r.ack);
        self.win.push(r.win);
        self.payload_len.push(r.payload_len);
        self.ip_len.push(r.ip_len);
        self.analysis.push(r.analysis);
        self.rtt_us.push(r.rtt_us);
        self.in_flight.push(r.in_flight);
    }
}

/// Frame counts of one capture.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FrameStats {
    pub frames: u64,
    /// Frames that were TCP segments (rows of `packets`).
    pub tcp: u64,
    /// Well-formed frames that are not TCP (ARP, UDP, other link types…).
    pub not_tcp: u64,
    /// Frames whose headers could not be parsed.
    pub malformed: u64,
    /// TCP segments whose IP length was repaired.
    pub repaired: u64,
    /// Link types seen, in order of first appearance.
    pub linktypes: Vec<u32>,
    /// Frames of a link type [`decode`] does not read (also counted in `not_tcp`).
    pub unsupported: u64,
    pub first_ts_ns: Option<i64>,
    pub last_ts_ns: Option<i64>,
    /// Frames whose timestamp is earlier than the frame before (a clock step, an unsorted
    /// merge): analysed in file order, as tshark does.
    pub ts_backwards: u64,
}

/// Everything one pass over a capture produced, besides the packet chunks.
pub struct Analysis {
    pub read: ReadSummary,
    pub frames: FrameStats,
    pub sessions: Vec<Session>,
}

impl Analysis {
    /// Link types seen that [`decode`] does not read, in order of first appearance.
    pub fn unsupported_linktypes(&self) -> Vec<u32> {
        self.frames
            .linktypes
            .iter()
            .copied()
            .filter(|&l| !decode::linktype_supported(l))
            .collect()
    }
}

/// Analyse one capture: packets go to `on_chunk` in chunks of `chunk_rows` (the last one
/// shorter); sessions and counts are returned at the end. Fails only when the input is not a
/// capture or cannot be read; damage inside the file is counted, not fatal.
pub fn analyze<R: Read + Send>(
    input: R,
    opts: Options,
    chunk_rows: usize,
    mut on_chunk: impl FnMut(PacketColumns),
) -> Result<Analysis, ReadError> {
    let chunk_rows = chunk_rows.max(1);
    let mut sessions = session::Sessions::new(opts);
    let mut stats = FrameStats::default();
    let mut cols = PacketColumns::with_capacity(chunk_rows);
    let read = reader::read_frames(input, |f| {
        stats.frames += 1;
        if stats.first_ts_ns.is_none() {
            stats.first_ts_ns = Some(f.ts_ns);
        }
        if stats.last_ts_ns.is_some_and(|t| f.ts_ns < t) {
            stats.ts_backwards += 1;
        }
        stats.last_ts_ns = Some(f.ts_ns);
        if !stats.linktypes.contains(&f.linktype) {
            stats.linktypes.push(f.linktype);
        }
        if !decode::linktype_supported(f.linktype) {
            stats.unsupported += 1;
            stats.not_tcp += 1;
            return;
        }
        match decode::decode(f.linktype, f.data, f.orig_len) {
            Ok(seg) => {
                stats.tcp += 1;
                stats.repaired += u64::from(seg.repaired);
                let row = sessions.push(f.number, f.ts_ns, &seg);
                cols.push(&row);
                if cols.len() >= chunk_rows {
                    on_chunk(std::mem::replace(
                        &mut cols,
                        PacketColumns::with_capacity(chunk_rows),
                    ));
                }
            }
            Err(decode::Skip::NotTcp) => stats.not_tcp += 1,
            Err(decode::Skip::Malformed) => stats.malformed += 1,
        }
    })?;
    if !cols.is_empty() {
        on_chunk(cols);
    }
    Ok(Analysis {
        read,
        frames: stats,
        sessions: sessions.sessions,
    })
}
