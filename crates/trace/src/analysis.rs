//! Per-packet TCP sequence analysis of one connection as seen at the capture point: the flags
//! Wireshark's `tcp.analysis.*` fields define, computed with the same rules so that counts can be
//! compared packet by packet (Wireshark User's Guide §7.5 "TCP Analysis"; the rules below are
//! stated in our own words and each one cites the TCP behaviour it detects):
//!
//! - *retransmission*: a segment with data (or SYN/FIN) that does not advance the highest
//!   sequence number seen in its direction (`seq < next_seq`), and is not a keep-alive
//!   (RFC 9293 §3.8.3 retransmission timeout; RFC 5681 §3.2 fast retransmit).
//!   - *fast retransmission*: additionally the other side sent ≥ 2 duplicate ACKs for exactly this
//!     `seq`, the last one less than 20 ms before (RFC 5681 §3.2).
//!   - *spurious retransmission*: the data was already acknowledged by the other side
//!     (`seq + len <= last ack`), so the retransmission was not needed (RFC 3522 §1).
//! - *out-of-order*: a segment that does not advance `next_seq` but arrived less than the
//!   handshake RTT (last SYN → first ACK; 3 ms when unknown) after the segment that set `next_seq`, and
//!   does not end exactly at `next_seq` — reordering rather than loss recovery. This is a timing
//!   heuristic; a retransmission that closes a hole quickly is counted out-of-order (README).
//! - *duplicate ACK*: a pure ACK (no data, no SYN/FIN/RST, window ≠ 0) repeating the previous
//!   segment's ACK number and window with `seq = next_seq` (RFC 5681 §2 "DUPLICATE
//!   ACKNOWLEDGMENT").
//! - *window full*: a data segment that reaches exactly the right edge of the window the other
//!   side advertised (RFC 9293 §3.8.6), when the window scale is known.
//! - *zero window* (RFC 9293 §3.8.6.1), *zero-window probe*, *keep-alive* (RFC 9293 §3.8.4),
//!   *window update*, *previous segment not captured*, *ACKed unseen segment*.
//!
//! On top of the flags: RTT samples from data→ACK pairs that skip every retransmitted segment
//! (Karn's rule, RFC 6298 §3), RTT samples from echoed timestamps (RFC 7323 §4.1), and the bytes
//! in flight at the capture point after each data segment (`next_seq − last ACK` of the other
//! side).

use std::collections::VecDeque;

use crate::decode::{tcp_flags::*, Segment};

/// Per-packet analysis bits (the `analysis` column; SQL views expose them as booleans).
pub mod flag {
    pub const RETRANSMISSION: u16 = 1 << 0;
    pub const FAST_RETRANSMISSION: u16 = 1 << 1;
    pub const SPURIOUS_RETRANSMISSION: u16 = 1 << 2;
    pub const OUT_OF_ORDER: u16 = 1 << 3;
    pub const DUP_ACK: u16 = 1 << 4;
    pub const WINDOW_FULL: u16 = 1 << 5;
    pub const ZERO_WINDOW: u16 = 1 << 6;
    pub const ZERO_WINDOW_PROBE: u16 = 1 << 7;
    pub const KEEP_ALIVE: u16 = 1 << 8;
    pub const WINDOW_UPDATE: u16 = 1 << 9;
    pub const LOST_SEGMENT: u16 = 1 << 10;
    pub const ACKED_UNSEEN: u16 = 1 << 11;
    /// The IP length was repaired (decode.rs).
    pub const REPAIRED: u16 = 1 << 12;
    pub const KEEP_ALIVE_ACK: u16 = 1 << 13;
    pub const ZERO_WINDOW_PROBE_ACK: u16 = 1 << 14;

    /// (bit, SQL column name) for every flag, in bit order.
    pub const NAMES: &[(u16, &str)] = &[
        (RETRANSMISSION, "retransmission"),
        (FAST_RETRANSMISSION, "fast_retransmission"),
        (SPURIOUS_RETRANSMISSION, "spurious_retransmission"),
        (OUT_OF_ORDER, "out_of_order"),
        (DUP_ACK, "dup_ack"),
        (WINDOW_FULL, "window_full"),
        (ZERO_WINDOW, "zero_window"),
        (ZERO_WINDOW_PROBE, "zero_window_probe"),
        (KEEP_ALIVE, "keep_alive"),
        (WINDOW_UPDATE, "window_update"),
        (LOST_SEGMENT, "lost_segment"),
        (ACKED_UNSEEN, "acked_unseen"),
        (REPAIRED, "repaired"),
        (KEEP_ALIVE_ACK, "keep_alive_ack"),
        (ZERO_WINDOW_PROBE_ACK, "zero_window_probe_ack"),
    ];
}

/// Reordering threshold when no handshake RTT is known, ns.
pub const OOO_THRESHOLD_DEFAULT_NS: i64 = 3_000_000;
/// Fast retransmission: the last duplicate ACK at most this long before, ns.
pub const FAST_RETX_WINDOW_NS: i64 = 20_000_000;
/// Most unacknowledged segments remembered per direction for RTT samples.
const MAX_UNACKED: usize = 1 << 16;

#[inline]
fn lt(a: u32, b: u32) -> bool {
    (a.wrapping_sub(b) as i32) < 0
}
#[inline]
fn le(a: u32, b: u32) -> bool {
    (a.wrapping_sub(b) as i32) <= 0
}
#[inline]
fn gt(a: u32, b: u32) -> bool {
    (a.wrapping_sub(b) as i32) > 0
}

/// Window scale of a direction (RFC 7323 §2.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WinScale {
    /// No handshake seen: unknown.
    Unknown,
    /// Negotiated off.
    None,
    Shift(u8),
}

#[derive(Clone, Copy, Debug)]
struct Unacked {
    end: u32,
    ts_ns: i64,
    /// Some byte of it was sent again (Karn: never an RTT sample).
    ambiguous: bool,
}

/// Sequence state of one direction (the sender of the segments it describes).
#[derive(Clone, Debug)]
pub struct DirState {
    /// Initial sequence number (seq of the SYN, or first seq − 1).
    pub base_seq: Option<u32>,
    pub win_scale: WinScale,
    /// Raw window field of the last segment, and whether that segment was a SYN (unscaled).
    window: u16,
    window_was_syn: bool,
    /// Highest sequence number sent + 1 (SYN/FIN count one).
    pub next_seq: Option<u32>,
    next_seq_ts: i64,
    /// ACK number of the last segment sent in this direction.
    pub last_ack: Option<u32>,
    last_ack_ts: i64,
    dup_ack_num: i32,
    max_seq_to_be_acked: Option<u32>,
    last_flags: u16,
    unacked: VecDeque<Unacked>,
    /// Highest ACK number sent (to see when an ACK advances).
    high_ack: Option<u32>,
    /// Pending timestamp values: (TSval, first time seen).
    tsvals: VecDeque<(u32, i64)>,
    last_tsval: Option<u32>,
}

impl Default for DirState {
    fn default() -> Self {
        DirState {
            base_seq: None,
            win_scale: WinScale::Unknown,
            window: 0,
            window_was_syn: false,
            next_seq: None,
            next_seq_ts: 0,
            last_ack: None,
            last_ack_ts: 0,
            dup_ack_num: 0,
            max_seq_to_be_acked: None,
            last_flags: 0,
            unacked: VecDeque::new(),
            high_ack: None,
            tsvals: VecDeque::new(),
            last_tsval: None,
        }
    }
}

impl DirState {
    /// The last advertised receive window in bytes, scaled when the scale is known
    /// (RFC 7323 §2.3: the window of a SYN is never scaled).
    pub fn window_bytes(&self) -> u32 {
        match self.win_scale {
            WinScale::Shift(s) if !self.window_was_syn => (self.window as u32) << s.min(14),
            _ => self.window as u32,
        }
    }
}

/// What the analysis says about one packet.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PacketResult {
    pub flags: u16,
    /// RTT sample this ACK produced (Karn), ns.
    pub rtt_ns: Option<i64>,
    /// RTT sample from an echoed timestamp, ns.
    pub ts_rtt_ns: Option<i64>,
    /// Bytes in flight after this data segment, as seen at the capture point.
    pub in_flight: Option<u32>,
    /// The ACK advanced and now covers sequence number `acked_to` of the other direction.
    pub acked_to: Option<u32>,
}

/// Both directions of one connection; `dir` 0 is client→server.
#[derive(Clone, Debug, Default)]
pub struct Analyzer {
    pub dirs: [DirState; 2],
    /// Reordering threshold learnt from the handshake: the time from the last SYN to the first
    /// segment with ACK and without SYN (either direction), ns.
    pub first_rtt_ns: Option<i64>,
    last_syn_ts: Option<i64>,
}

impl Analyzer {
    /// Analyse a segment sent in direction `d` at `ts_ns`.
    pub fn on_segment(&mut self, d: usize, s: &Segment, ts_ns: i64) -> PacketResult {
        let (fwd, rev) = if d == 0 {
            let (a, b) = self.dirs.split_at_mut(1);
            (&mut a[0], &mut b[0])
        } else {
            let (a, b) = self.dirs.split_at_mut(1);
            (&mut b[0], &mut a[0])
        };
        let f = s.flags;
        let syn = f & SYN != 0;
        let has_ack = f & ACK != 0;
        let sfr = f & (SYN | FIN | RST) != 0;
        let seq = s.seq;
        let ack = s.ack;
        let len = s.payload_len;
        let window = s.window;
        let mut out = PacketResult::default();
        let mut fl = 0u16;

        // Window scale negotiation (RFC 7323 §2.2, §1.3: both SYNs must carry the option). A
        // SYN whose options the snapshot length cut may have carried it: its scale is unknown,
        // not off (tshark: "window size scaling factor: -1 (unknown)").
        if syn {
            let offered = match s.opts.wscale {
                Some(w) => WinScale::Shift(w),
                None if s.opts.cut => WinScale::Unknown,
                None => WinScale::None,
            };
            if has_ack {
                match offered {
                    // A SYN-ACK carries the option only if the SYN did (§1.3).
                    WinScale::Shift(w) if rev.win_scale != WinScale::None => {
                        fwd.win_scale = WinScale::Shift(w)
                    }
                    WinScale::Unknown if rev.win_scale != WinScale::None => {
                        fwd.win_scale = WinScale::Unknown;
                        rev.win_scale = WinScale::Unknown;
                    }
                    _ => {
                        fwd.win_scale = WinScale::None;
                        rev.win_scale = WinScale::None;
                    }
                }
            } else {
                // A SYN stamped exactly at the epoch counts as no time (Wireshark keeps zero for
                // "unset"; simulated captures start at 0), so the 3 ms default applies.
                if ts_ns != 0 {
                    self.last_syn_ts = Some(ts_ns);
                }
                fwd.win_scale = offered;
                if offered == WinScale::None {
                    rev.win_scale = WinScale::None;
                }
            }
        } else if has_ack && self.first_rtt_ns.is_none() {
            if let Some(t0) = self.last_syn_ts {
                // A negative time (timestamps running backwards) is no sample.
                self.first_rtt_ns = Some(ts_ns - t0).filter(|&t| t >= 0);
            }
        }

        if fwd.base_seq.is_none() {
            fwd.base_seq = Some(if syn { seq } else { seq.wrapping_sub(1) });
        }
        if rev.base_seq.is_none() && has_ack {
            rev.base_seq = Some(ack.wrapping_sub(1));
        }

        let next = fwd.next_seq;
        // Zero-window probe: one byte at next_seq while the other side's window is zero; it skips
        // the checks up to the retransmission ones.
        if len == 1 && Some(seq) == next && rev.window == 0 {
            fl |= flag::ZERO_WINDOW_PROBE;
        } else {
            if window == 0 && !sfr {
                fl |= flag::ZERO_WINDOW;
            }
            if let Some(n) = next {
                if gt(seq, n) && f & RST == 0 {
                    fl |= flag::LOST_SEGMENT;
                }
                if len <= 1 && seq == n.wrapping_sub(1) && !sfr {
                    fl |= flag::KEEP_ALIVE;
                }
            }
            let same_seq_ack = Some(seq) == next && Some(ack) == fwd.last_ack;
            if len == 0 && window != 0 && window != fwd.window && same_seq_ack && !sfr {
                fl |= flag::WINDOW_UPDATE;
            }
            if len > 0 && rev.win_scale != WinScale::Unknown && !sfr {
                if let Some(ra) = rev.last_ack {
                    if seq.wrapping_add(len) == ra.wrapping_add(rev.window_bytes()) {
                        fl |= flag::WINDOW_FULL;
                    }
                }
            }
            if len == 0
                && window != 0
                && window == fwd.window
                && same_seq_ack
                && !sfr
                && rev.last_flags & flag::KEEP_ALIVE != 0
            {
                fl |= flag::KEEP_ALIVE_ACK;
            } else if len == 0
                && window == 0
                && fwd.window == 0
                && same_seq_ack
                && !sfr
                && rev.last_flags & flag::ZERO_WINDOW_PROBE != 0
            {
                fl |= flag::ZERO_WINDOW_PROBE_ACK;
            } else if len == 0 && window != 0 && window == fwd.window && same_seq_ack && !sfr {
                fwd.dup_ack_num = if fwd.dup_ack_num < 0 {
                    1
                } else {
                    fwd.dup_ack_num + 1
                };
                fl |= flag::DUP_ACK;
            }
        }

        // finished_fwd: a new ACK number resets the duplicate count.
        if Some(ack) != fwd.last_ack {
            fwd.dup_ack_num = 0;
        }
        // ACKed unseen segment: the ACK covers data of the other side never captured.
        if has_ack {
            if let Some(m) = rev.max_seq_to_be_acked {
                if gt(ack, m) {
                    if let Some(rn) = rev.next_seq {
                        if gt(m, rn) {
                            // Move the boundary back so one unseen segment is reported once.
                            rev.max_seq_to_be_acked = Some(rn);
                            fl |= flag::ACKED_UNSEEN;
                        } else {
                            if rev.dup_ack_num == 0 {
                                fl |= flag::ACKED_UNSEEN;
                            }
                            rev.dup_ack_num = -1;
                        }
                    }
                }
            }
        }

        // Retransmission / fast retransmission / spurious / out-of-order.
        if (len > 0 || f & (SYN | FIN) != 0) && fl & flag::KEEP_ALIVE == 0 {
            let mut not_advanced = next.is_some_and(|n| lt(seq, n));
            if len > 1 && next.is_some_and(|n| n.wrapping_sub(1) == seq) {
                not_advanced = false;
            }
            let spurious = len > 0 && rev.last_ack.is_some_and(|ra| le(seq.wrapping_add(len), ra));
            if spurious {
                fl |= flag::SPURIOUS_RETRANSMISSION | flag::RETRANSMISSION;
            } else if not_advanced
                && rev.dup_ack_num >= 2
                && rev.last_ack == Some(seq)
                && ts_ns - rev.last_ack_ts < FAST_RETX_WINDOW_NS
            {
                fl |= flag::FAST_RETRANSMISSION | flag::RETRANSMISSION;
            } else {
                let thres = self
                    .first_rtt_ns
                    .filter(|&r| r != 0)
                    .unwrap_or(OOO_THRESHOLD_DEFAULT_NS);
                let syn_fin = u32::from(f & (SYN | FIN) != 0);
                if not_advanced
                    && ts_ns - fwd.next_seq_ts < thres
                    && next != Some(seq.wrapping_add(len).wrapping_add(syn_fin))
                {
                    fl |= flag::OUT_OF_ORDER;
                } else if not_advanced {
                    fl |= flag::RETRANSMISSION;
                }
            }
        }

        // finished_checking_retransmission_type: advance next_seq.
        let seg_end = seq
            .wrapping_add(len)
            .wrapping_add(u32::from(f & (SYN | FIN) != 0));
        let zwp = fl & flag::ZERO_WINDOW_PROBE != 0;
        let advanced = next.is_none_or(|n| gt(seg_end, n));
        if advanced && !zwp {
            fwd.next_seq = Some(seg_end);
            fwd.next_seq_ts = ts_ns;
        }
        if (fwd.max_seq_to_be_acked.is_none() || fwd.max_seq_to_be_acked == Some(seq)) && !zwp {
            fwd.max_seq_to_be_acked = fwd.next_seq;
        }

        // Karn bookkeeping: remember new data. A resent (or hole-filling) segment makes every
        // remembered segment after its start ambiguous: their ACK waits for the repair.
        if len > 0 || f & (SYN | FIN) != 0 {
            if fl & (flag::RETRANSMISSION | flag::OUT_OF_ORDER) != 0 || !advanced {
                for u in fwd.unacked.iter_mut() {
                    if gt(u.end, seq) {
                        u.ambiguous = true;
                    }
                }
            } else if fwd.unacked.len() < MAX_UNACKED {
                fwd.unacked.push_back(Unacked {
                    end: seg_end,
                    ts_ns,
                    ambiguous: false,
                });
            }
        }
        // Timestamps: remember when each new TSval was first sent (RFC 7323 §4.1).
        if let Some((tsval, tsecr)) = s.opts.timestamps {
            if len > 0 && fwd.last_tsval.is_none_or(|v| gt(tsval, v)) {
                fwd.last_tsval = Some(tsval);
                if fwd.tsvals.len() < MAX_UNACKED {
                    fwd.tsvals.push_back((tsval, ts_ns));
                }
            }
            // The echo of a TSval the other side sent: one sample per TSval.
            if has_ack && tsecr != 0 {
                let mut sample = None;
                while let Some(&(v, t)) = rev.tsvals.front() {
                    if le(v, tsecr) {
                        if v == tsecr {
                            sample = Some(ts_ns - t).filter(|&t| t >= 0);
                        }
                        rev.tsvals.pop_front();
                    } else {
                        break;
                    }
                }
                out.ts_rtt_ns = sample;
            }
        }

        // An ACK that advances: RTT sample from the newest fully covered, never-resent segment.
        if has_ack {
            let advances = rev.next_seq.is_some() && fwd.high_ack.is_none_or(|h| gt(ack, h));
            if advances {
                fwd.high_ack = Some(ack);
                out.acked_to = Some(ack);
                let mut newest: Option<Unacked> = None;
                while let Some(u) = rev.unacked.front() {
                    if le(u.end, ack) {
                        newest = Some(*u);
                        rev.unacked.pop_front();
                    } else {
                        break;
                    }
                }
                if let Some(u) = newest {
                    if !u.ambiguous {
                        out.rtt_ns = Some(ts_ns - u.ts_ns).filter(|&t| t >= 0);
                    }
                }
            } else if fwd.high_ack.is_none() {
                fwd.high_ack = Some(ack);
            }
        }

        fwd.window = window;
        fwd.window_was_syn = syn;
        fwd.last_ack = if has_ack { Some(ack) } else { None };
        fwd.last_ack_ts = ts_ns;
        fwd.last_flags = fl;

        if len > 0 && fl & flag::LOST_SEGMENT == 0 {
            if let (Some(n), Some(ra)) = (fwd.next_seq, rev.last_ack) {
                let b = n.wrapping_sub(ra);
                if (b as i32) > 0 {
                    out.in_flight = Some(b);
                }
            }
        }
        out.flags = fl;
        out
    }
}
