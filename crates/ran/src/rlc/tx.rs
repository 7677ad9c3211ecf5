//! Transmitting side of an RLC entity: SDU queue, segmentation/concatenation, retransmission
//! buffer and polling (TS 36.322 §5.1.3.1, §5.2.1, §5.2.2; TS 38.322 §5.2.3.1, §5.3.2, §5.3.3).

use super::{
    pdu_budget, pdu_cost, DataPdu, Field, Fields, RlcConfig, RlcCounters, RlcMode, RlcPdu,
    RlcPduBody, RlcSdu, StatusPdu, LTE_MAX_LI,
};
use crate::mac::sap::BufferStatus;
use rantcp_core::Time;
use std::collections::VecDeque;

#[derive(Clone, Copy, Debug)]
struct QueuedSdu {
    sdu: RlcSdu,
    arrival: Time,
}

/// One SN in the retransmission buffer (AM).
#[derive(Clone, Debug)]
struct TxUnit {
    /// Length of the SN's data field (bytes).
    len: u32,
    /// Bytes of the data field transmitted at least once (NR: an SDU may still be in the middle
    /// of its first segmentation).
    sent_hi: u32,
    fields: Fields,
    acked: bool,
    /// RETX_COUNT; `None` until first considered for retransmission (§5.2.1).
    retx_count: Option<u32>,
    /// Pieces of this SN in the retransmission queue.
    queued_pieces: u32,
}

/// Transmitting side (see module docs of [`super`]).
#[derive(Debug)]
pub struct RlcTx {
    queue: VecDeque<QueuedSdu>,
    /// Bytes of queued SDUs not yet transmitted.
    queue_bytes: u64,
    /// Queued SDUs longer than an LTE length indicator can express (kept with the queue so a
    /// buffer status is O(1) in the queue length).
    long_sdus: usize,
    /// Bytes of the head SDU already segmented into PDUs.
    head_offset: u32,
    /// NR: SN of the head SDU once its first segment has gone.
    head_sn: Option<u64>,
    /// VT(A) / TX_NEXT_ACK: lowest SN not yet acknowledged.
    vt_a: u64,
    /// VT(S) / TX_NEXT: next SN to assign.
    vt_s: u64,
    /// Retransmission buffer, index `sn - vt_a` (AM only).
    units: VecDeque<TxUnit>,
    /// Retransmission queue: `(sn, so_start, so_end)`.
    retx: VecDeque<(u64, u32, u32)>,
    pdu_without_poll: u32,
    byte_without_poll: u64,
    poll_sn: Option<u64>,
    t_poll_retransmit: Option<Time>,
    /// A poll must be set on the next PDU (t-PollRetransmit expired, §5.2.2.3).
    poll_pending: bool,
}

impl RlcTx {
    pub(super) fn new(_cfg: &RlcConfig) -> Self {
        RlcTx {
            queue: VecDeque::new(),
            queue_bytes: 0,
            long_sdus: 0,
            head_offset: 0,
            head_sn: None,
            vt_a: 0,
            vt_s: 0,
            units: VecDeque::new(),
            retx: VecDeque::new(),
            pdu_without_poll: 0,
            byte_without_poll: 0,
            poll_sn: None,
            t_poll_retransmit: None,
            poll_pending: false,
        }
    }

    pub(super) fn queue_bytes(&self) -> u64 {
        self.queue_bytes
    }
    pub(super) fn unacked_sns(&self) -> u64 {
        self.vt_s - self.vt_a
    }

    /// SDUs queued of which no byte has been sent (the head may be partly segmented).
    pub(super) fn unsent_sdus(&self) -> usize {
        self.queue.len() - (self.head_offset > 0) as usize
    }

    /// Queue `sdu` at the tail, or with `front` ahead of every SDU no byte of which has been
    /// sent (behind a partly sent head SDU, whose remaining segments keep their place).
    pub(super) fn handle_sdu(
        &mut self,
        now: Time,
        sdu: RlcSdu,
        front: bool,
        cfg: &RlcConfig,
        c: &mut RlcCounters,
    ) -> bool {
        if sdu.bytes == 0 {
            return true;
        }
        if self.queue_bytes + sdu.bytes as u64 > cfg.max_tx_buffer_bytes {
            c.sdus_dropped += 1;
            c.sdu_bytes_dropped += sdu.bytes as u64;
            return false;
        }
        c.sdus_in += 1;
        c.sdu_bytes_in += sdu.bytes as u64;
        self.queue_bytes += sdu.bytes as u64;
        self.long_sdus += (sdu.bytes > LTE_MAX_LI) as usize;
        let q = QueuedSdu { sdu, arrival: now };
        if front {
            self.queue.insert(self.queue.len() - self.unsent_sdus(), q);
        } else {
            self.queue.push_back(q);
        }
        true
    }

    fn window_open(&self, cfg: &RlcConfig) -> bool {
        cfg.mode == RlcMode::Um || self.vt_s < self.vt_a + cfg.window_size
    }

    /// Nothing queued, partly sent or waiting for retransmission: [`Self::buffer_status`]
    /// reports no byte.
    #[inline]
    pub(super) fn is_idle(&self) -> bool {
        self.queue.is_empty()
            && self.retx.is_empty()
            && self.queue_bytes == 0
            && self.head_offset == 0
            && self.long_sdus == 0
    }

    pub(super) fn buffer_status(&self, now: Time, cfg: &RlcConfig) -> BufferStatus {
        let mac = if cfg.mac_subheader_per_pdu { 3 } else { 0 };
        let base = cfg.layout.data_header_bytes(cfg.mode, 1, 0, true) as u64 + mac;
        let mut tx = self.queue_bytes + base * self.queue.len() as u64;
        if !cfg.mac_subheader_per_pdu && !cfg.layout.is_nr() {
            // LTE: an SDU longer than an LI can express ends its PDU; the next PDU of the same
            // opportunity needs its own MAC subheader; so does new data after retransmissions.
            debug_assert_eq!(
                self.long_sdus,
                self.queue
                    .iter()
                    .filter(|q| q.sdu.bytes > LTE_MAX_LI)
                    .count()
            );
            tx += 3 * self.long_sdus as u64;
            if !self.retx.is_empty() && !self.queue.is_empty() {
                tx += 3;
            }
        }
        if self.head_offset > 0 {
            // The head SDU continues as a segment (NR: SO field present).
            let seg =
                cfg.layout
                    .data_header_bytes(cfg.mode, 1, self.head_offset, false) as u64
                    + mac;
            tx = tx + seg - base.min(seg);
        }
        let seg_hdr = cfg.layout.data_header_bytes(cfg.mode, 1, 1, false) as u64 + mac;
        let retx: u64 = if cfg.layout.is_nr() {
            self.retx
                .iter()
                .map(|&(_, a, b)| (b - a) as u64 + seg_hdr)
                .sum()
        } else {
            // LTE: exact cost of the pieces (LIs, LI length limit) plus the MAC allowance.
            self.retx
                .iter()
                .filter(|&&(sn, _, _)| {
                    sn >= self.vt_a && !self.units[(sn - self.vt_a) as usize].acked
                })
                .map(|&(sn, a, b)| {
                    let unit = &self.units[(sn - self.vt_a) as usize];
                    let mut cost = 0u64;
                    let mut start = a;
                    while start < b {
                        let (x, hdr) = Self::fit_piece(unit, start, b, u32::MAX / 2, cfg);
                        if x == 0 {
                            break;
                        }
                        // + a MAC subheader: the piece may not be the opportunity's first PDU.
                        cost +=
                            (x + hdr) as u64 + mac + if cfg.mac_subheader_per_pdu { 0 } else { 3 };
                        start += x;
                    }
                    cost
                })
                .sum()
        };
        BufferStatus {
            rnti: cfg.rnti,
            lcid: cfg.lcid,
            tx_queue_bytes: tx.min(u32::MAX as u64) as u32,
            tx_queue_hol_delay: self
                .queue
                .front()
                .map_or(Default::default(), |q| now.saturating_since(q.arrival)),
            retx_queue_bytes: retx.min(u32::MAX as u64) as u32,
            status_pdu_bytes: 0,
        }
    }

    pub(super) fn poll_timeout(&self) -> Option<Time> {
        self.t_poll_retransmit
    }

    /// Fills `room` bytes with retransmissions then new data.
    pub(super) fn fill(
        &mut self,
        now: Time,
        mut room: u32,
        mut first: bool,
        cfg: &RlcConfig,
        c: &mut RlcCounters,
        out: &mut Vec<RlcPdu>,
    ) {
        if cfg.mode == RlcMode::Am {
            while room > 0 {
                let Some(pdu) = self.next_retx(pdu_budget(room, cfg, first), cfg) else {
                    break;
                };
                room -= pdu_cost(pdu.bytes, cfg, first);
                first = false;
                self.emit(now, pdu, cfg, c, out);
            }
        }
        while room > 0
            && !self.queue.is_empty()
            && (self.head_sn.is_some() || self.window_open(cfg))
        {
            let budget = pdu_budget(room, cfg, first);
            let pdu = if cfg.layout.is_nr() {
                self.new_nr_pdu(budget, cfg)
            } else {
                self.new_lte_pdu(budget, cfg)
            };
            let Some(pdu) = pdu else { break };
            room -= pdu_cost(pdu.bytes, cfg, first);
            first = false;
            self.emit(now, pdu, cfg, c, out);
        }
    }

    /// Sets the poll bit (§5.2.2.1), counts and pushes.
    fn emit(
        &mut self,
        now: Time,
        mut pdu: RlcPdu,
        cfg: &RlcConfig,
        c: &mut RlcCounters,
        out: &mut Vec<RlcPdu>,
    ) {
        let RlcPduBody::Data(d) = &mut pdu.body else {
            unreachable!()
        };
        c.data_pdus_tx += 1;
        c.data_bytes_tx += d.len as u64;
        if d.is_retx {
            c.retx_pdus += 1;
            c.retx_bytes += d.len as u64;
        }
        if cfg.mode == RlcMode::Am {
            if !d.is_retx {
                self.pdu_without_poll += 1;
                self.byte_without_poll += d.len as u64;
            }
            // §5.2.2.1: poll when a threshold is reached, when both the transmission and the
            // retransmission buffer become empty, or when the window stalls.
            let buffers_empty = self.queue.is_empty() && self.retx.is_empty();
            let stalled =
                self.head_sn.is_none() && !self.queue.is_empty() && !self.window_open(cfg);
            if self.poll_pending
                || self.pdu_without_poll >= cfg.poll_pdu
                || self.byte_without_poll >= cfg.poll_byte
                || buffers_empty
                || stalled
            {
                d.poll = true;
                self.poll_pending = false;
                self.pdu_without_poll = 0;
                self.byte_without_poll = 0;
                self.poll_sn = Some(self.vt_s.saturating_sub(1));
                self.t_poll_retransmit = Some(now + cfg.t_poll_retransmit);
                c.polls_tx += 1;
            }
        }
        out.push(pdu);
    }

    fn unit_fields(unit: &TxUnit, a: u32, b: u32) -> Fields {
        let mut v = Fields::new();
        for f in &unit.fields {
            let fs = f.unit_offset;
            let fe = fs + f.len;
            let s = fs.max(a);
            let e = fe.min(b);
            if s < e {
                v.push(Field {
                    sdu_offset: f.sdu_offset + (s - fs),
                    len: e - s,
                    unit_offset: s,
                    ..*f
                });
            }
        }
        v
    }

    /// Largest `x` such that the piece `[a, a + x)` of `unit` with its header fits `room`.
    fn fit_piece(unit: &TxUnit, a: u32, b: u32, room: u32, cfg: &RlcConfig) -> (u32, u32) {
        if !cfg.layout.is_nr() {
            // LTE: header depends on how many fields the piece spans (§6.2.1.5).
            let whole = a == 0 && b == unit.len;
            let mut full_k = 0;
            let mut li_ok = true;
            let mut prev_len = 0;
            for f in unit
                .fields
                .iter()
                .filter(|f| f.unit_offset + f.len > a && f.unit_offset < b)
            {
                if full_k > 0 && prev_len > LTE_MAX_LI {
                    li_ok = false;
                }
                full_k += 1;
                prev_len = (f.unit_offset + f.len).min(b) - f.unit_offset.max(a);
            }
            let full_hdr = cfg.layout.data_header_bytes(cfg.mode, full_k, a, whole);
            if li_ok && full_hdr + (b - a) <= room {
                return (b - a, full_hdr);
            }
            let mut best = (0, 0);
            let mut k = 0;
            let mut prev_len = 0;
            for f in unit
                .fields
                .iter()
                .filter(|f| f.unit_offset + f.len > a && f.unit_offset < b)
            {
                k += 1;
                let start = f.unit_offset.max(a) - a;
                let end = (f.unit_offset + f.len).min(b) - a;
                // A field followed by another needs an 11-bit LI.
                if k > 1 && prev_len > LTE_MAX_LI {
                    break;
                }
                let hdr = cfg.layout.data_header_bytes(cfg.mode, k, a, false);
                if room <= hdr + start {
                    break;
                }
                let x = (room - hdr).min(end);
                best = (x, hdr);
                prev_len = end - start;
                if x < end {
                    break;
                }
            }
            best
        } else {
            let hdr = cfg
                .layout
                .data_header_bytes(cfg.mode, 1, a, a == 0 && b == unit.len);
            if room <= hdr {
                return (0, 0);
            }
            ((room - hdr).min(b - a), hdr)
        }
    }

    fn next_retx(&mut self, room: u32, cfg: &RlcConfig) -> Option<RlcPdu> {
        loop {
            let &(sn, a, b) = self.retx.front()?;
            if sn < self.vt_a || self.units[(sn - self.vt_a) as usize].acked {
                self.retx.pop_front();
                if sn >= self.vt_a {
                    self.units[(sn - self.vt_a) as usize].queued_pieces -= 1;
                }
                continue;
            }
            let unit = &self.units[(sn - self.vt_a) as usize];
            let (x, hdr) = Self::fit_piece(unit, a, b, room, cfg);
            if x == 0 {
                return None;
            }
            let fields = Self::unit_fields(unit, a, a + x);
            let last = a + x == unit.len;
            let whole = a == 0 && last;
            if a + x == b {
                self.retx.pop_front();
                self.units[(sn - self.vt_a) as usize].queued_pieces -= 1;
            } else {
                self.retx.front_mut().unwrap().1 = a + x;
            }
            let has_so = if cfg.layout.is_nr() { a > 0 } else { !whole };
            let d = DataPdu {
                sn,
                so: a,
                len: x,
                last,
                has_so,
                poll: false,
                is_retx: true,
                fields,
            };
            return Some(RlcPdu {
                bytes: hdr + x,
                header_bytes: hdr,
                body: RlcPduBody::Data(d),
            });
        }
    }

    /// Removes `n` bytes from the head of the SDU queue.
    fn consume(&mut self, mut n: u32) {
        while n > 0 {
            let head = self.queue.front().unwrap().sdu;
            let left = head.bytes - self.head_offset;
            let t = n.min(left);
            n -= t;
            self.head_offset += t;
            self.queue_bytes -= t as u64;
            if self.head_offset == head.bytes {
                self.queue.pop_front();
                self.long_sdus -= (head.bytes > LTE_MAX_LI) as usize;
                self.head_offset = 0;
                self.head_sn = None;
            }
        }
    }

    /// LTE: one new AMD/UMD PDU concatenating as many SDU pieces as fit (§5.1.3.1.1).
    fn new_lte_pdu(&mut self, room: u32, cfg: &RlcConfig) -> Option<RlcPdu> {
        let mut fields = Fields::new();
        let mut data = 0u32;
        for (i, q) in self.queue.iter().enumerate() {
            let off = if i == 0 { self.head_offset } else { 0 };
            let left = q.sdu.bytes - off;
            let k = fields.len() + 1;
            let hdr = cfg.layout.data_header_bytes(cfg.mode, k, 0, true);
            if hdr + data >= room {
                break;
            }
            if let Some(prev) = fields.last() {
                if prev.len > LTE_MAX_LI {
                    break;
                }
            }
            let take = left.min(room - hdr - data);
            fields.push(Field {
                sdu_id: q.sdu.sdu_id,
                sdu_bytes: q.sdu.bytes,
                sdu_offset: off,
                len: take,
                unit_offset: data,
            });
            data += take;
            if take < left {
                break;
            }
        }
        if fields.is_empty() {
            return None;
        }
        let hdr = cfg
            .layout
            .data_header_bytes(cfg.mode, fields.len(), 0, true);
        self.consume(data);
        let sn = self.vt_s;
        self.vt_s += 1;
        if cfg.mode == RlcMode::Am {
            self.units.push_back(TxUnit {
                len: data,
                sent_hi: data,
                fields: fields.clone(),
                acked: false,
                retx_count: None,
                queued_pieces: 0,
            });
        }
        let d = DataPdu {
            sn,
            so: 0,
            len: data,
            last: true,
            has_so: false,
            poll: false,
            is_retx: false,
            fields,
        };
        Some(RlcPdu {
            bytes: hdr + data,
            header_bytes: hdr,
            body: RlcPduBody::Data(d),
        })
    }

    /// NR: one new PDU carrying the head SDU or its next segment (TS 38.322 §5.2.3.1.1).
    fn new_nr_pdu(&mut self, room: u32, cfg: &RlcConfig) -> Option<RlcPdu> {
        let q = *self.queue.front()?;
        let off = self.head_offset;
        let left = q.sdu.bytes - off;
        let whole_fits =
            off == 0 && cfg.layout.data_header_bytes(cfg.mode, 1, 0, true) + left <= room;
        let hdr = cfg.layout.data_header_bytes(cfg.mode, 1, off, whole_fits);
        if room <= hdr {
            return None;
        }
        let take = left.min(room - hdr);
        let sn = match self.head_sn {
            Some(sn) => sn,
            // NR UM: a complete SDU carries no SN (SI = 00, 38.322 §6.2.2.3); `sn` is then
            // just the next SN, not consumed.
            None if cfg.mode == RlcMode::Um && take == q.sdu.bytes => self.vt_s,
            None => {
                let sn = self.vt_s;
                self.vt_s += 1;
                if cfg.mode == RlcMode::Am {
                    let f = Field {
                        sdu_id: q.sdu.sdu_id,
                        sdu_bytes: q.sdu.bytes,
                        sdu_offset: 0,
                        len: q.sdu.bytes,
                        unit_offset: 0,
                    };
                    self.units.push_back(TxUnit {
                        len: q.sdu.bytes,
                        sent_hi: 0,
                        fields: Fields::one(f),
                        acked: false,
                        retx_count: None,
                        queued_pieces: 0,
                    });
                }
                sn
            }
        };
        if cfg.mode == RlcMode::Am {
            self.units[(sn - self.vt_a) as usize].sent_hi = off + take;
        }
        let last = off + take == q.sdu.bytes;
        if !last {
            self.head_sn = Some(sn);
        }
        self.consume(take);
        let f = Field {
            sdu_id: q.sdu.sdu_id,
            sdu_bytes: q.sdu.bytes,
            sdu_offset: off,
            len: take,
            unit_offset: off,
        };
        let d = DataPdu {
            sn,
            so: off,
            len: take,
            last,
            has_so: off > 0,
            poll: false,
            is_retx: false,
            fields: Fields::one(f),
        };
        Some(RlcPdu {
            bytes: hdr + take,
            header_bytes: hdr,
            body: RlcPduBody::Data(d),
        })
    }

    /// Queues `[a, b)` of `sn` for retransmission, counting RETX_COUNT (§5.2.1).
    fn consider_retx(
        &mut self,
        sn: u64,
        a: u32,
        b: u32,
        cfg: &RlcConfig,
        c: &mut RlcCounters,
        fresh: bool,
    ) {
        let i = (sn - self.vt_a) as usize;
        let unit = &mut self.units[i];
        let b = b.min(unit.sent_hi);
        if a >= b || unit.acked {
            return;
        }
        if fresh {
            if unit.queued_pieces > 0 {
                // Already pending: replace its pieces by the new report's.
                let mut removed = 0;
                self.retx.retain(|&(s, _, _)| {
                    let keep = s != sn;
                    removed += (!keep) as u32;
                    keep
                });
                unit.queued_pieces -= removed;
            } else {
                let n = match unit.retx_count {
                    None => 0,
                    Some(n) => n + 1,
                };
                unit.retx_count = Some(n);
                if n == cfg.max_retx_threshold {
                    c.max_retx_reached += 1;
                }
            }
        }
        unit.queued_pieces += 1;
        self.retx.push_back((sn, a, b));
    }

    pub(super) fn handle_status(
        &mut self,
        _now: Time,
        st: &StatusPdu,
        cfg: &RlcConfig,
        c: &mut RlcCounters,
    ) {
        if cfg.mode != RlcMode::Am {
            return;
        }
        let ack_sn = st.ack_sn.min(self.vt_s);
        // §5.2.2.2: STATUS acknowledging or NACKing POLL_SN stops t-PollRetransmit.
        if let Some(p) = self.poll_sn {
            if p < ack_sn {
                self.t_poll_retransmit = None;
                self.poll_sn = None;
            }
        }
        let mut last_sn = None;
        for n in &st.nacks {
            if n.sn < self.vt_a || n.sn >= ack_sn {
                continue;
            }
            let (a, b) = n.so.unwrap_or((0, u32::MAX));
            let fresh = last_sn != Some(n.sn);
            last_sn = Some(n.sn);
            self.consider_retx(n.sn, a, b, cfg, c, fresh);
        }
        // Positive acknowledgements: everything below ACK_SN that is not NACKed (§5.2.1).
        let mut ni = st.nacks.iter().peekable();
        for sn in self.vt_a..ack_sn {
            while ni.peek().is_some_and(|n| n.sn < sn) {
                ni.next();
            }
            if ni.peek().is_some_and(|n| n.sn == sn) {
                continue;
            }
            self.units[(sn - self.vt_a) as usize].acked = true;
        }
        while self.units.front().is_some_and(|u| u.acked) {
            let u = self.units.pop_front().unwrap();
            if u.queued_pieces > 0 {
                // stale entries are skipped in next_retx; drop them now to keep indices valid
                let sn = self.vt_a;
                self.retx.retain(|&(s, _, _)| s != sn);
            }
            self.vt_a += 1;
        }
    }

    pub(super) fn handle_timeout(&mut self, now: Time, cfg: &RlcConfig, c: &mut RlcCounters) {
        let Some(t) = self.t_poll_retransmit else {
            return;
        };
        if t > now {
            return;
        }
        // §5.2.2.3: t-PollRetransmit expiry.
        self.t_poll_retransmit = None;
        c.poll_retransmit_expiries += 1;
        self.poll_pending = true;
        let stalled = !self.queue.is_empty() && self.head_sn.is_none() && !self.window_open(cfg);
        if (self.queue.is_empty() && self.retx.is_empty()) || stalled {
            // Retransmit the highest SN sent, or else any SN not yet acknowledged.
            let top = self.vt_s.checked_sub(1).filter(|&s| s >= self.vt_a);
            let cand = top
                .filter(|&s| !self.units[(s - self.vt_a) as usize].acked)
                .or_else(|| {
                    (self.vt_a..self.vt_s).find(|&s| !self.units[(s - self.vt_a) as usize].acked)
                });
            if let Some(sn) = cand {
                self.consider_retx(sn, 0, u32::MAX, cfg, c, true);
            }
        }
    }

    pub(super) fn purge(&mut self, mut pred: impl FnMut(u64) -> bool) -> u64 {
        let mut removed = 0u64;
        let skip_head = self.head_offset > 0;
        let mut i = 0usize;
        let mut long_removed = 0usize;
        self.queue.retain(|q| {
            let keep = (i == 0 && skip_head) || !pred(q.sdu.sdu_id);
            i += 1;
            if !keep {
                removed += q.sdu.bytes as u64;
                long_removed += (q.sdu.bytes > LTE_MAX_LI) as usize;
            }
            keep
        });
        self.long_sdus -= long_removed;
        self.queue_bytes -= removed;
        removed
    }
}
