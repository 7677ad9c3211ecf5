//! Splitting a capture into TCP sessions and summarising each one.
//!
//! A session is one TCP connection (RFC 9293 §3.5): packets are grouped by their 4-tuple and IP
//! version, and a group is *split* — the dissertation's "duplicate TCP port numbers … tangling
//! multiple TCP test sessions into a single TCP session" (§5.3.1) — when a packet cannot belong
//! to the running connection:
//!
//! - a SYN without ACK after the running session saw a FIN or RST (`syn_after_close`);
//! - a SYN without ACK whose sequence number differs from the running session's initial sequence
//!   number, or when the running session never saw a SYN (`syn_new_isn`; RFC 9293 §3.4.1: a new
//!   connection picks a new ISN, a retransmitted SYN keeps it);
//! - any packet after an idle gap longer than [`Options::idle_split_ns`] (`idle_gap`).
//!
//! A session whose first packet is not a SYN is marked `mid_connection` (the capture started
//! after the handshake). The client is the sender of the SYN; without one, the receiver of the
//! SYN-ACK; without either, the endpoint with the higher port (the ephemeral one, RFC 6056 §2).

use std::net::{Ipv4Addr, Ipv6Addr};

use rustc_hash::FxHashMap;

use crate::analysis::{flag, Analyzer, WinScale};
use crate::decode::{tcp_flags::*, Segment};

/// Session splitting options.
#[derive(Clone, Copy, Debug)]
pub struct Options {
    /// A packet after this much silence on its 4-tuple starts a new session, ns.
    pub idle_split_ns: i64,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            idle_split_ns: 300 * 1_000_000_000,
        }
    }
}

/// Why a session started.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StartReason {
    /// First packets of this 4-tuple in the capture.
    New,
    SynAfterClose,
    SynNewIsn,
    IdleGap,
}

impl StartReason {
    pub fn name(self) -> &'static str {
        match self {
            StartReason::New => "new",
            StartReason::SynAfterClose => "syn_after_close",
            StartReason::SynNewIsn => "syn_new_isn",
            StartReason::IdleGap => "idle_gap",
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Hash)]
struct FlowKey {
    a: [u8; 16],
    b: [u8; 16],
    pa: u16,
    pb: u16,
    v: u8,
}

fn flow_key(s: &Segment) -> FlowKey {
    if (s.src, s.sport) <= (s.dst, s.dport) {
        FlowKey {
            a: s.src,
            b: s.dst,
            pa: s.sport,
            pb: s.dport,
            v: s.ip_version,
        }
    } else {
        FlowKey {
            a: s.dst,
            b: s.src,
            pa: s.dport,
            pb: s.sport,
            v: s.ip_version,
        }
    }
}

/// Per-direction counters of a session (direction 0: client→server).
#[derive(Clone, Debug, Default)]
pub struct DirStats {
    pub packets: u64,
    pub ip_bytes: u64,
    pub payload_bytes: u64,
    /// Payload bytes that advanced the sequence space (each byte once).
    pub unique_bytes: u64,
    pub retx_packets: u64,
    pub retx_bytes: u64,
    pub fast_retx: u64,
    pub spurious_retx: u64,
    pub out_of_order: u64,
    pub dup_acks: u64,
    /// Segments without payload and without SYN/FIN/RST.
    pub pure_acks: u64,
    pub window_full: u64,
    pub zero_window: u64,
    pub lost_segments: u64,
    pub acked_unseen: u64,
    pub keep_alives: u64,
    pub fins: u64,
    pub rsts: u64,
    pub first_data_ts: Option<i64>,
    /// Time of the last segment that carried new data.
    pub last_new_data_ts: Option<i64>,
    /// Highest sequence number of data + 1 (absolute).
    pub data_end: Option<u32>,
    /// First ACK from the other side covering `data_end` after the last new data.
    pub data_acked_ts: Option<i64>,
    /// RTT samples of this direction's data (Karn), ns.
    pub rtt_ns: Vec<i64>,
    /// RTT samples from timestamps echoed for this direction's data, ns.
    pub ts_rtt_ns: Vec<i64>,
    pub max_in_flight: u32,
    /// Receive window advertised by this direction, bytes (min, max), SYNs excluded.
    pub rwin_min: Option<u32>,
    pub rwin_max: u32,
    /// Some window of `rwin_min`/`rwin_max` was advertised while this direction's window
    /// scale was unknown (no handshake seen, or its options cut by the snapshot length): they
    /// are raw window fields, not bytes.
    pub rwin_unscaled: bool,
    pub mss: Option<u16>,
    /// The window scale option of this direction's SYN (RFC 7323 §2.2).
    pub wscale: Option<u8>,
    /// Whether this direction sent a window scale option is known: a SYN of it was seen with
    /// the option, or with its options captured whole.
    pub wscale_known: bool,
    pub sack_permitted: bool,
    pub timestamps: bool,
}

/// One TCP session and its running analysis.
#[derive(Clone, Debug)]
pub struct Session {
    /// Index in the capture, from 0, in order of first packet.
    pub index: u32,
    pub ip_version: u8,
    pub client: ([u8; 16], u16),
    pub server: ([u8; 16], u16),
    pub start: StartReason,
    /// Earliest and latest packet time, ns (the first and last packet unless the capture's
    /// timestamps run backwards somewhere).
    pub first_ts: i64,
    pub last_ts: i64,
    pub first_frame: u64,
    pub syn_ts: Option<i64>,
    pub synack_ts: Option<i64>,
    /// First ACK of the client after the SYN-ACK.
    pub ack3_ts: Option<i64>,
    pub client_isn: Option<u32>,
    pub mid_connection: bool,
    pub closed: bool,
    pub repaired: u64,
    pub dirs: [DirStats; 2],
    pub analyzer: Analyzer,
}

/// One packet as it goes to the `packets` table.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PacketRow {
    pub session: u32,
    pub frame: u64,
    pub ts_ns: i64,
    pub dir: u8,
    pub tcp_flags: u8,
    /// Sequence and ACK numbers relative to each direction's ISN.
    pub seq: u32,
    pub ack: u32,
    /// Advertised receive window, bytes (scaled when the scale is known).
    pub win: u32,
    pub payload_len: u32,
    pub ip_len: u32,
    pub analysis: u16,
    /// Karn RTT sample this ACK produced, µs (0: none).
    pub rtt_us: u32,
    /// Bytes in flight after this data segment (0: not a data segment).
    pub in_flight: u32,
}

/// The session table of one capture.
#[derive(Default)]
pub struct Sessions {
    opts: Options,
    table: FxHashMap<FlowKey, u32>,
    pub sessions: Vec<Session>,
}

impl Sessions {
    pub fn new(opts: Options) -> Self {
        Sessions {
            opts,
            table: FxHashMap::default(),
            sessions: Vec::new(),
        }
    }

    /// Add one segment (frame number `frame`, time `ts_ns`); returns its packet row.
    pub fn push(&mut self, frame: u64, ts_ns: i64, s: &Segment) -> PacketRow {
        let key = flow_key(s);
        let syn_only = s.flags & (SYN | ACK) == SYN;
        let idx = match self.table.get(&key) {
            Some(&i) => {
                let cur = &self.sessions[i as usize];
                let reason = if ts_ns - cur.last_ts > self.opts.idle_split_ns {
                    Some(StartReason::IdleGap)
                } else if syn_only && cur.closed {
                    Some(StartReason::SynAfterClose)
                } else if syn_only && cur.client_isn != Some(s.seq) {
                    Some(StartReason::SynNewIsn)
                } else {
                    None
                };
                match reason {
                    Some(r) => {
                        let n = self.new_session(frame, ts_ns, s, r);
                        self.table.insert(key, n);
                        n
                    }
                    None => i,
                }
            }
            None => {
                let n = self.new_session(frame, ts_ns, s, StartReason::New);
                self.table.insert(key, n);
                n
            }
        };
        self.sessions[idx as usize].on_segment(frame, ts_ns, s)
    }

    fn new_session(&mut self, frame: u64, ts_ns: i64, s: &Segment, start: StartReason) -> u32 {
        let index = self.sessions.len() as u32;
        let src = (s.src, s.sport);
        let dst = (s.dst, s.dport);
        let (client, server) = if s.flags & SYN != 0 {
            if s.flags & ACK != 0 {
                (dst, src)
            } else {
                (src, dst)
            }
        } else if s.sport < s.dport {
            (dst, src)
        } else {
            (src, dst)
        };
        self.sessions.push(Session {
            index,
            ip_version: s.ip_version,
            client,
            server,
            start,
            first_ts: ts_ns,
            last_ts: ts_ns,
            first_frame: frame,
            syn_ts: None,
            synack_ts: None,
            ack3_ts: None,
            client_isn: None,
            mid_connection: s.flags & SYN == 0,
            closed: false,
            repaired: 0,
            dirs: Default::default(),
            analyzer: Analyzer::default(),
        });
        index
    }
}

impl Session {
    fn on_segment(&mut self, frame: u64, ts_ns: i64, s: &Segment) -> PacketRow {
        let d = if (s.src, s.sport) == self.client {
            0
        } else {
            1
        };
        self.first_ts = self.first_ts.min(ts_ns);
        self.last_ts = self.last_ts.max(ts_ns);
        let f = s.flags;
        if f & SYN != 0 {
            if f & ACK == 0 {
                self.syn_ts.get_or_insert(ts_ns);
                self.client_isn = Some(s.seq);
            } else if self.synack_ts.is_none() {
                self.synack_ts = Some(ts_ns);
            }
        } else if d == 0 && f & ACK != 0 && self.synack_ts.is_some() && self.ack3_ts.is_none() {
            self.ack3_ts = Some(ts_ns);
        }
        if f & (FIN | RST) != 0 {
            self.closed = true;
        }
        let prev_next = self.analyzer.dirs[d].next_seq;
        let r = self.analyzer.on_segment(d, s, ts_ns);
        let mut analysis = r.flags;
        if s.repaired {
            analysis |= flag::REPAIRED;
            self.repaired += 1;
        }

        let st = &mut self.dirs[d];
        st.packets += 1;
        st.ip_bytes += s.ip_len as u64;
        st.payload_bytes += s.payload_len as u64;
        if f & SYN != 0 {
            st.mss = s.opts.mss.or(st.mss);
            st.wscale = s.opts.wscale.or(st.wscale);
            st.wscale_known |= s.opts.wscale.is_some() || !s.opts.cut;
            st.sack_permitted |= s.opts.sack_permitted;
        }
        st.timestamps |= s.opts.timestamps.is_some();
        if s.payload_len == 0 && f & (SYN | FIN | RST) == 0 {
            st.pure_acks += 1;
        }
        if f & FIN != 0 {
            st.fins += 1;
        }
        if f & RST != 0 {
            st.rsts += 1;
        }
        let count = |bit: u16| u64::from(analysis & bit != 0);
        st.retx_packets += count(flag::RETRANSMISSION);
        if analysis & flag::RETRANSMISSION != 0 {
            st.retx_bytes += s.payload_len as u64;
        }
        st.fast_retx += count(flag::FAST_RETRANSMISSION);
        st.spurious_retx += count(flag::SPURIOUS_RETRANSMISSION);
        st.out_of_order += count(flag::OUT_OF_ORDER);
        st.dup_acks += count(flag::DUP_ACK);
        st.window_full += count(flag::WINDOW_FULL);
        st.zero_window += count(flag::ZERO_WINDOW);
        st.lost_segments += count(flag::LOST_SEGMENT);
        st.acked_unseen += count(flag::ACKED_UNSEEN);
        st.keep_alives += count(flag::KEEP_ALIVE);
        if s.payload_len > 0 {
            let start = if f & SYN != 0 {
                s.seq.wrapping_add(1)
            } else {
                s.seq
            };
            let end = start.wrapping_add(s.payload_len);
            let from = match prev_next {
                Some(n) if ((n.wrapping_sub(start)) as i32) > 0 => n,
                _ => start,
            };
            let new = end.wrapping_sub(from) as i32;
            if new > 0 {
                st.unique_bytes += new as u64;
                st.last_new_data_ts = Some(ts_ns);
                st.first_data_ts.get_or_insert(ts_ns);
                if st
                    .data_end
                    .is_none_or(|e| ((end.wrapping_sub(e)) as i32) > 0)
                {
                    st.data_end = Some(end);
                }
            }
            if let Some(b) = r.in_flight {
                st.max_in_flight = st.max_in_flight.max(b);
            }
        }
        if f & SYN == 0 {
            st.rwin_unscaled |= self.analyzer.dirs[d].win_scale == WinScale::Unknown;
            let w = self.analyzer.dirs[d].window_bytes();
            st.rwin_min = Some(st.rwin_min.map_or(w, |m| m.min(w)));
            st.rwin_max = st.rwin_max.max(w);
        }
        // This packet's ACK covers data of the other direction.
        let o = &mut self.dirs[1 - d];
        if let Some(rtt) = r.rtt_ns {
            o.rtt_ns.push(rtt);
        }
        if let Some(rtt) = r.ts_rtt_ns {
            o.ts_rtt_ns.push(rtt);
        }
        if let (Some(a), Some(end)) = (r.acked_to, o.data_end) {
            if ((a.wrapping_sub(end)) as i32) >= 0
                && o.data_acked_ts
                    .is_none_or(|t| o.last_new_data_ts.is_some_and(|l| t < l))
            {
                o.data_acked_ts = Some(ts_ns);
            }
        }

        let a = &self.analyzer.dirs;
        let rel = |v: u32, base: Option<u32>| base.map_or(v, |b| v.wrapping_sub(b));
        PacketRow {
            session: self.index,
            frame,
            ts_ns,
            dir: d as u8,
            tcp_flags: f,
            seq: rel(s.seq, a[d].base_seq),
            ack: if f & ACK != 0 {
                rel(s.ack, a[1 - d].base_seq)
            } else {
                0
            },
            win: a[d].window_bytes(),
            payload_len: s.payload_len,
            ip_len: s.ip_len,
            analysis,
            rtt_us: r.rtt_ns.map_or(0, |v| {
                ((v.max(0) + 999) / 1000).clamp(1, u32::MAX as i64) as u32
            }),
            in_flight: r.in_flight.unwrap_or(0),
        }
    }

    /// The data direction: the one that carried more new payload (ties: server→client).
    pub fn data_dir(&self) -> usize {
        if self.dirs[0].unique_bytes > self.dirs[1].unique_bytes {
            0
        } else {
            1
        }
    }

    /// Address as text (IPv4 dotted quad or IPv6).
    pub fn addr_text(&self, a: &[u8; 16]) -> String {
        if self.ip_version == 4 {
            Ipv4Addr::new(a[0], a[1], a[2], a[3]).to_string()
        } else {
            Ipv6Addr::from(*a).to_string()
        }
    }

    /// Download time: first data segment to the first ACK covering the last data byte, ns
    /// (to the last data segment when that ACK was not captured).
    pub fn download_time_ns(&self) -> Option<i64> {
        let st = &self.dirs[self.data_dir()];
        let first = st.first_data_ts?;
        let last = st.last_new_data_ts?;
        let end = match st.data_acked_ts {
            Some(t) if t >= last => t,
            _ => last,
        };
        // Negative only when the timestamps run backwards: no download time then.
        Some(end - first).filter(|&t| t >= 0)
    }

    /// Whether the last data byte's ACK was captured.
    pub fn download_acked(&self) -> bool {
        let st = &self.dirs[self.data_dir()];
        matches!((st.data_acked_ts, st.last_new_data_ts), (Some(t), Some(l)) if t >= l)
    }
}

/// Quantile (0..=1) of sorted samples, nearest-rank.
pub fn quantile(sorted: &[i64], q: f64) -> Option<i64> {
    if sorted.is_empty() {
        return None;
    }
    let rank = (q * sorted.len() as f64).ceil() as usize;
    Some(sorted[rank.clamp(1, sorted.len()) - 1])
}
