//! Receiving side of an RLC entity: reordering with t-Reordering / t-Reassembly, reassembly,
//! in-order delivery, and (AM) STATUS reporting with polling and t-StatusProhibit
//! (TS 36.322 §5.1.2.2, §5.1.3.2, §5.2.3, §5.3.3.3, §5.4; TS 38.322 §5.2.2.2, §5.2.3.2,
//! §5.3.4).

use super::{
    DataPdu, Few, Field, Fields, Nack, RlcConfig, RlcCounters, RlcMode, RlcPdu, RlcPduBody,
    StatusPdu,
};
use rantcp_core::Time;
use std::collections::VecDeque;

/// Reception state of one SN.
#[derive(Clone, Debug, Default)]
struct RxUnit {
    /// Received byte ranges of the data field, sorted and disjoint.
    ranges: Few<(u32, u32), 2>,
    /// Data field length, known once the last piece arrived.
    total: Option<u32>,
    /// SDU pieces carried by the received PDUs.
    frags: Fields,
    /// NR UM: the SDU was delivered as soon as it was complete.
    delivered: bool,
}

impl RxUnit {
    fn complete(&self) -> bool {
        matches!(self.total, Some(t) if self.ranges.len() == 1 && self.ranges[0] == (0, t))
    }
    /// A byte is missing before the highest byte received (NR t-Reassembly condition).
    fn has_gap(&self) -> bool {
        self.ranges.len() > 1 || self.ranges.first().is_some_and(|r| r.0 > 0)
    }
    /// Inserts `[a, b)`; returns whether any byte was new.
    fn insert(&mut self, a: u32, b: u32) -> bool {
        // Fast paths: first piece, or a piece continuing the last range.
        match self.ranges.last_mut() {
            None => {
                self.ranges.push((a, b));
                return true;
            }
            Some(l) if a == l.1 => {
                l.1 = b;
                return true;
            }
            _ => {}
        }
        let covered: u32 = self
            .ranges
            .iter()
            .map(|&(s, e)| e.min(b).saturating_sub(s.max(a)))
            .sum();
        if covered == b - a {
            return false;
        }
        self.ranges.push((a, b));
        self.ranges.sort_unstable();
        let mut merged: Few<(u32, u32), 2> = Few::new();
        for &(s, e) in &self.ranges {
            match merged.last_mut() {
                Some(l) if s <= l.1 => l.1 = l.1.max(e),
                _ => merged.push((s, e)),
            }
        }
        self.ranges = merged;
        true
    }
    /// Missing byte ranges (`u32::MAX` end = "to the end of the SN").
    fn gaps(&self, mut f: impl FnMut(Option<(u32, u32)>)) {
        if self.ranges.is_empty() {
            f(None);
            return;
        }
        let mut cur = 0;
        for &(a, b) in &self.ranges {
            if a > cur {
                f(Some((cur, a)));
            }
            cur = b;
        }
        match self.total {
            Some(t) if cur >= t => {}
            Some(t) => f(Some((cur, t))),
            None => f(Some((cur, u32::MAX))),
        }
    }
}

/// Receiving side (see module docs of [`super`]).
#[derive(Debug)]
pub struct RlcRx {
    /// VR(R) / RX_Next (VR(UR) in UM): lowest SN not yet delivered/skipped.
    vr_r: u64,
    /// VR(H) / RX_Next_Highest: highest SN received + 1.
    vr_h: u64,
    /// VR(MS) / RX_Highest_Status (AM): highest SN the ACK_SN may indicate.
    vr_ms: u64,
    /// VR(X) / RX_Timer_Trigger and the t-Reordering expiry while running.
    vr_x: u64,
    t_reassembly: Option<Time>,
    /// Buffer of SNs `vr_r..vr_h`.
    units: VecDeque<Option<RxUnit>>,
    status_triggered: bool,
    t_status_prohibit: Option<Time>,
    /// A poll with this SN waits for VR(MS) to pass it (§5.2.3).
    poll_wait: Option<u64>,
    pub(super) delivered: VecDeque<u64>,
    /// UM: ids of SDUs given up (incomplete when the window or t-Reassembly moved past them,
    /// or a piece arrived after that), for the upper layer to free what it keeps beside them.
    pub(super) lost: VecDeque<u64>,
    /// SDU being reassembled: id and bytes contiguous from its start.
    cur_sdu: Option<(u64, u32)>,
    last_delivered: Option<u64>,
}

impl RlcRx {
    pub(super) fn new(_cfg: &RlcConfig) -> Self {
        RlcRx {
            vr_r: 0,
            vr_h: 0,
            vr_ms: 0,
            vr_x: 0,
            t_reassembly: None,
            units: VecDeque::new(),
            status_triggered: false,
            t_status_prohibit: None,
            poll_wait: None,
            delivered: VecDeque::new(),
            lost: VecDeque::new(),
            cur_sdu: None,
            last_delivered: None,
        }
    }

    fn unit(&self, sn: u64) -> Option<&RxUnit> {
        if sn < self.vr_r {
            return None;
        }
        self.units
            .get((sn - self.vr_r) as usize)
            .and_then(|u| u.as_ref())
    }
    fn is_complete(&self, sn: u64) -> bool {
        self.unit(sn).is_some_and(|u| u.complete())
    }

    pub(super) fn handle_data(
        &mut self,
        now: Time,
        d: &DataPdu,
        cfg: &RlcConfig,
        c: &mut RlcCounters,
    ) {
        c.data_pdus_rx += 1;
        let x = d.sn;
        let am = cfg.mode == RlcMode::Am;
        if !am && cfg.layout.is_nr() && d.so == 0 && d.last {
            // NR UMD PDU with a complete SDU and no SN: straight to the upper layer
            // (38.322 §5.2.2.2.1).
            for f in &d.fields {
                self.delivered.push_back(f.sdu_id);
                c.sdus_delivered += 1;
                c.sdu_bytes_delivered += f.sdu_bytes as u64;
            }
            return;
        }
        let in_window = x >= self.vr_r && (!am || x < self.vr_r + cfg.window_size);
        if !am && x < self.vr_r {
            // UM: the window has passed this SN, its SDU pieces are discarded.
            self.lost.extend(d.fields.iter().map(|f| f.sdu_id));
        }
        let mut new = false;
        if in_window && !self.is_complete(x) {
            let idx = (x - self.vr_r) as usize;
            while self.units.len() <= idx {
                self.units.push_back(None);
            }
            let u = self.units[idx].get_or_insert_with(RxUnit::default);
            if d.len > 0 && u.insert(d.so, d.so + d.len) {
                new = true;
                u.frags.extend_from_slice(&d.fields);
            }
            if d.last {
                u.total = Some(d.so + d.len);
            }
            if !am && cfg.layout.is_nr() && !u.delivered && u.complete() {
                // 38.322 §5.2.2.2.2: a complete SDU is delivered at once (out of order);
                // reordering, if wanted, is PDCP's.
                u.delivered = true;
                if let Some(f) = u.frags.first() {
                    self.delivered.push_back(f.sdu_id);
                    c.sdus_delivered += 1;
                    c.sdu_bytes_delivered += f.sdu_bytes as u64;
                }
            }
        }
        if !new {
            c.duplicate_pdus_rx += 1;
            // §5.2.3: a discarded PDU with the poll bit set still triggers a STATUS report.
            if am && d.poll {
                self.status_triggered = true;
            }
            return;
        }
        if x >= self.vr_h {
            self.vr_h = x + 1;
        }
        if !am && self.vr_h > self.vr_r + cfg.window_size {
            // UM window moved past VR(UR) (36.322 §5.1.2.2.2): flush what falls out.
            let new_r = self.vr_h - cfg.window_size;
            self.advance_to(new_r, c);
        }
        if am && x == self.vr_ms {
            self.vr_ms = self.first_incomplete_from(self.vr_ms);
        }
        if x == self.vr_r {
            let new_r = self.first_incomplete_from(self.vr_r);
            self.advance_to(new_r, c);
        }
        if am {
            self.vr_ms = self.vr_ms.max(self.vr_r);
            if d.poll {
                if x < self.vr_ms || x >= self.vr_r + cfg.window_size {
                    self.status_triggered = true;
                } else {
                    self.poll_wait = Some(self.poll_wait.map_or(x, |p| p.max(x)));
                }
            }
            self.check_poll_wait();
        }
        self.update_timer(now, cfg);
    }

    fn check_poll_wait(&mut self) {
        if self.poll_wait.is_some_and(|p| p < self.vr_ms) {
            self.poll_wait = None;
            self.status_triggered = true;
        }
    }

    /// Lower edge of the timer logic: for AM the reference is VR(R) on (re)start checks and
    /// VR(MS) on expiry; NR additionally requires a byte gap when only one SN is pending.
    fn timer_needed(&self, lower: u64, cfg: &RlcConfig) -> bool {
        if cfg.layout.is_nr() {
            self.vr_h > lower + 1
                || (self.vr_h == lower + 1 && self.unit(lower).is_some_and(|u| u.has_gap()))
        } else {
            self.vr_h > lower
        }
    }

    fn update_timer(&mut self, now: Time, cfg: &RlcConfig) {
        if self.t_reassembly.is_some() {
            let stop = self.vr_x <= self.vr_r
                || (cfg.layout.is_nr()
                    && self.vr_x == self.vr_r + 1
                    && !self.unit(self.vr_r).is_some_and(|u| u.has_gap()));
            if stop {
                self.t_reassembly = None;
            }
        }
        if self.t_reassembly.is_none() && self.timer_needed(self.vr_r, cfg) {
            self.t_reassembly = Some(now + cfg.t_reassembly);
            self.vr_x = self.vr_h;
        }
    }

    fn first_incomplete_from(&self, mut sn: u64) -> u64 {
        while sn < self.vr_h && self.is_complete(sn) {
            sn += 1;
        }
        sn
    }

    /// Moves VR(R) to `new_r`, delivering complete SNs in order and discarding incomplete ones
    /// (UM only; AM never skips).
    fn advance_to(&mut self, new_r: u64, c: &mut RlcCounters) {
        while self.vr_r < new_r {
            let u = self.units.pop_front().flatten();
            self.vr_r += 1;
            match u {
                Some(u) if u.delivered => {}
                Some(mut u) if u.complete() => {
                    u.frags.sort_by_key(|f| f.unit_offset);
                    for f in &u.frags {
                        self.feed(f, c);
                    }
                }
                Some(u) => {
                    let mut last = None;
                    for f in &u.frags {
                        if Some(f.sdu_id) != last && Some(f.sdu_id) != self.cur_sdu.map(|s| s.0) {
                            c.sdus_lost_um += 1;
                            self.lost.push_back(f.sdu_id);
                            last = Some(f.sdu_id);
                        }
                    }
                    self.break_partial(c);
                }
                None => self.break_partial(c),
            }
        }
        if self.vr_h < self.vr_r {
            self.vr_h = self.vr_r;
        }
    }

    fn break_partial(&mut self, c: &mut RlcCounters) {
        if let Some((id, _)) = self.cur_sdu.take() {
            c.sdus_lost_um += 1;
            self.lost.push_back(id);
        }
    }

    /// Reassembly: one SDU piece, in SN/offset order.
    fn feed(&mut self, f: &Field, c: &mut RlcCounters) {
        if self.last_delivered == Some(f.sdu_id) {
            return;
        }
        match &mut self.cur_sdu {
            Some((id, exp)) if *id == f.sdu_id && f.sdu_offset <= *exp => {
                *exp = (*exp).max(f.sdu_offset + f.len);
            }
            _ => {
                if self.cur_sdu.is_some() {
                    self.break_partial(c);
                }
                if f.sdu_offset == 0 {
                    self.cur_sdu = Some((f.sdu_id, f.len));
                } else {
                    return;
                }
            }
        }
        let (id, exp) = self.cur_sdu.unwrap();
        if exp >= f.sdu_bytes {
            self.cur_sdu = None;
            self.last_delivered = Some(id);
            self.delivered.push_back(id);
            c.sdus_delivered += 1;
            c.sdu_bytes_delivered += f.sdu_bytes as u64;
        }
    }

    pub(super) fn handle_timeout(&mut self, now: Time, cfg: &RlcConfig, c: &mut RlcCounters) {
        if self.t_status_prohibit.is_some_and(|t| t <= now) {
            self.t_status_prohibit = None;
        }
        let Some(t) = self.t_reassembly else { return };
        if t > now {
            return;
        }
        self.t_reassembly = None;
        c.reassembly_expiries += 1;
        if cfg.mode == RlcMode::Am {
            // 36.322 §5.1.3.2.4 / 38.322 §5.2.3.2.4.
            self.vr_ms = self.first_incomplete_from(self.vr_x.max(self.vr_ms));
            self.status_triggered = true;
            self.check_poll_wait();
            if self.timer_needed(self.vr_ms, cfg) {
                self.t_reassembly = Some(now + cfg.t_reassembly);
                self.vr_x = self.vr_h;
            }
        } else {
            // 36.322 §5.1.2.2.4 / 38.322 §5.2.2.2.4.
            let new_r = self.first_incomplete_from(self.vr_x.max(self.vr_r));
            self.advance_to(new_r, c);
            if self.timer_needed(self.vr_r, cfg) {
                self.t_reassembly = Some(now + cfg.t_reassembly);
                self.vr_x = self.vr_h;
            }
        }
    }

    pub(super) fn poll_timeout(&self) -> Option<Time> {
        let p = if self.status_triggered {
            self.t_status_prohibit
        } else {
            None
        };
        match (self.t_reassembly, p) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// A STATUS PDU is triggered (without one, [`Self::pending_status_bytes`] is 0).
    #[inline]
    pub(super) fn status_triggered(&self) -> bool {
        self.status_triggered
    }

    fn status_ready(&self, now: Time) -> bool {
        self.status_triggered && !matches!(self.t_status_prohibit, Some(t) if t > now)
    }

    fn count_nacks(&self) -> (usize, usize) {
        let (mut n, mut so) = (0, 0);
        for sn in self.vr_r..self.vr_ms {
            match self.unit(sn) {
                Some(u) if u.complete() => {}
                Some(u) => u.gaps(|g| {
                    n += 1;
                    so += g.is_some() as usize;
                }),
                None => n += 1,
            }
        }
        (n, so)
    }

    pub(super) fn pending_status_bytes(&self, now: Time, cfg: &RlcConfig) -> u32 {
        if !self.status_ready(now) {
            return 0;
        }
        let (n, so) = self.count_nacks();
        cfg.layout.status_bytes(n, so)
    }

    /// Builds the STATUS PDU if one is triggered and t-StatusProhibit is not running, truncated
    /// to `room` bytes (36.322 §5.2.3 / 38.322 §5.3.4: ACK_SN then becomes the first SN not
    /// reported).
    pub(super) fn build_status(&mut self, now: Time, room: u32, cfg: &RlcConfig) -> Option<RlcPdu> {
        if !self.status_ready(now) || room < cfg.layout.status_bytes(0, 0) {
            return None;
        }
        let mut nacks: Vec<Nack> = Vec::new();
        let mut ack_sn = self.vr_ms;
        let (mut n, mut n_so) = (0usize, 0usize);
        'outer: for sn in self.vr_r..self.vr_ms {
            let mut list: Vec<Option<(u32, u32)>> = Vec::new();
            match self.unit(sn) {
                Some(u) if u.complete() => continue,
                Some(u) => u.gaps(|g| list.push(g)),
                None => list.push(None),
            }
            for g in list {
                let (n2, s2) = (n + 1, n_so + g.is_some() as usize);
                if cfg.layout.status_bytes(n2, s2) > room {
                    ack_sn = sn;
                    // Drop the partial entries of this SN: it is reported from ACK_SN on.
                    while nacks.last().is_some_and(|l| l.sn == sn) {
                        let l = nacks.pop().unwrap();
                        n -= 1;
                        n_so -= l.so.is_some() as usize;
                    }
                    break 'outer;
                }
                n = n2;
                n_so = s2;
                nacks.push(Nack { sn, so: g });
            }
        }
        let bytes = cfg.layout.status_bytes(n, n_so);
        self.status_triggered = false;
        self.t_status_prohibit = Some(now + cfg.t_status_prohibit);
        Some(RlcPdu {
            bytes,
            header_bytes: bytes,
            body: RlcPduBody::Status(StatusPdu { ack_sn, nacks }),
        })
    }
}
