//! An ordered list of functions at one site, with the owner's bookkeeping of the contract.

use crate::{
    BufferEvent, Ctx, FlowKey, NetworkFunction, Output, Point, Points, Purged, RanView, Rnti,
    SampleSink, UlBuffer, Verdict,
};
use rantcp_core::Time;
use rantcp_wire::Packet;

/// The functions attached at one site, in attachment order. An empty chain, or one whose
/// functions do not want a point, costs a bit test per packet at that point.
#[derive(Default)]
pub struct Chain {
    fns: Vec<Box<dyn NetworkFunction>>,
    /// Each function's points (asked once, when attached: a function's points are fixed).
    pts: Vec<Points>,
    /// Union of the functions' points.
    mask: Points,
    /// Verdicts other than `Pass`, per function: (drops, consumed).
    drops: Vec<u64>,
    consumed: Vec<u64>,
    /// Some function may hold an output: set by every call that hands a function an input (a
    /// function's outputs answer its inputs; after a packet, only if the function says it may
    /// have one, [`NetworkFunction::may_have_output`]), cleared when a poll finds none. While
    /// it is clear, the owner's poll after each input and timer phase costs one bit test.
    may_output: bool,
    /// The function whose output was polled last.
    from: usize,
}

impl Chain {
    pub fn new() -> Self {
        Chain::default()
    }

    /// Attach `f` after the functions already attached.
    pub fn push(&mut self, f: Box<dyn NetworkFunction>) {
        self.mask |= f.points();
        self.pts.push(f.points());
        self.fns.push(f);
        self.may_output = true;
        self.drops.push(0);
        self.consumed.push(0);
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.fns.is_empty()
    }
    pub fn len(&self) -> usize {
        self.fns.len()
    }
    /// May a function hold an output (has one been handed an input since a poll found
    /// none)? While not, polling answers `None`.
    #[inline]
    pub fn may_have_output(&self) -> bool {
        self.may_output
    }
    /// Does any function want `p`?
    #[inline]
    pub fn wants(&self, p: Points) -> bool {
        self.mask.intersects(p)
    }

    /// Run the functions that want `cx.point` on `pkt`, stopping at the first `Drop` or
    /// `Consume`.
    #[inline]
    pub fn handle_packet(&mut self, cx: &Ctx, pkt: &mut Packet) -> Verdict {
        let bit = cx.point.bit();
        if !self.mask.intersects(bit) {
            return Verdict::Pass;
        }
        for (k, f) in self.fns.iter_mut().enumerate() {
            if !self.pts[k].intersects(bit) {
                continue;
            }
            let v = f.handle_packet(cx, pkt);
            self.may_output |= f.may_have_output();
            match v {
                Verdict::Pass => {}
                Verdict::Drop(_) => {
                    self.drops[k] += 1;
                    return v;
                }
                Verdict::Consume => {
                    self.consumed[k] += 1;
                    return Verdict::Consume;
                }
            }
        }
        Verdict::Pass
    }

    /// Hand an uplink-buffer event to every function that wants [`Point::UeUlBuffer`].
    #[inline]
    pub fn handle_ul_buffer(&mut self, cx: &Ctx, ev: BufferEvent, q: &mut UlBuffer) {
        if !self.mask.intersects(Points::UE_UL_BUFFER) {
            return;
        }
        self.may_output = true;
        for (k, f) in self.fns.iter_mut().enumerate() {
            if self.pts[k].intersects(Points::UE_UL_BUFFER) {
                f.handle_ul_buffer(cx, ev, q);
            }
        }
    }

    /// Downlink bytes the pulling functions hold for `rnti`.
    #[inline]
    pub fn dl_backlog(&self, rnti: Rnti) -> u64 {
        if !self.mask.intersects(Points::DL_PULL) {
            return 0;
        }
        self.fns
            .iter()
            .zip(&self.pts)
            .filter(|(_, p)| p.intersects(Points::DL_PULL))
            .map(|(f, _)| f.dl_backlog(rnti))
            .sum()
    }

    /// Ask the pulling functions, in order, for up to `bytes` of packets for `cx.rnti`.
    pub fn pull_dl(&mut self, cx: &Ctx, bytes: u64, out: &mut Vec<Packet>) {
        if !self.mask.intersects(Points::DL_PULL) {
            return;
        }
        self.may_output = true;
        for (k, f) in self.fns.iter_mut().enumerate() {
            if !self.pts[k].intersects(Points::DL_PULL) {
                continue;
            }
            let got: u64 = out.iter().map(|p| p.len() as u64).sum();
            if got >= bytes {
                break;
            }
            f.pull_dl(cx, bytes - got, out);
        }
    }

    /// The earliest timer of any function.
    pub fn poll_timeout(&self) -> Option<Time> {
        self.fns.iter().filter_map(|f| f.poll_timeout()).min()
    }

    /// Fire the timers that are due at `now`.
    pub fn handle_timeout(&mut self, now: Time, ran: Option<&dyn RanView>) {
        self.may_output = true;
        for f in &mut self.fns {
            if f.poll_timeout().is_some_and(|t| t <= now) {
                f.handle_timeout(now, ran);
            }
        }
    }

    /// The next output of any function (functions in attachment order);
    /// [`Chain::last_output_from`] then names the function.
    #[inline]
    pub fn poll_output(&mut self) -> Option<Output> {
        if !self.may_output {
            return None;
        }
        for (k, f) in self.fns.iter_mut().enumerate() {
            if let Some(o) = f.poll_output() {
                self.from = k;
                return Some(o);
            }
        }
        self.may_output = false;
        None
    }

    /// The index of the function whose output [`Chain::poll_output`] last returned, for owners
    /// that answer an output ([`Chain::handle_purged`]).
    #[inline]
    pub fn last_output_from(&self) -> usize {
        self.from
    }

    /// The next output of any function with the index of the function that produced it.
    pub fn poll_output_from(&mut self) -> Option<(usize, Output)> {
        self.poll_output().map(|o| (self.from, o))
    }

    /// Tell function `k` (from [`Chain::last_output_from`]) what its purge removed.
    pub fn handle_purged(&mut self, k: usize, now: Time, rnti: Rnti, flow: FlowKey, p: Purged) {
        if let Some(f) = self.fns.get_mut(k) {
            self.may_output = true;
            f.handle_purged(now, rnti, flow, p);
        }
    }

    /// Sample every function.
    pub fn sample(&mut self, now: Time, ran: Option<&dyn RanView>, out: &mut SampleSink) {
        self.may_output = true;
        for f in &mut self.fns {
            f.sample(now, ran, out);
        }
    }

    /// Each function's kind and report. The chain adds `dropped` and `consumed` (packets the
    /// function's verdicts kept out of the data path) to each report object.
    pub fn reports(&self) -> Vec<(&'static str, serde_json::Value)> {
        self.fns
            .iter()
            .enumerate()
            .map(|(k, f)| {
                let mut v = f.report();
                if let serde_json::Value::Object(m) = &mut v {
                    m.entry("dropped").or_insert(self.drops[k].into());
                    m.entry("consumed").or_insert(self.consumed[k].into());
                }
                (f.kind(), v)
            })
            .collect()
    }
}

/// [`Point`] at which a packet handed to [`Chain::handle_packet`] is, for the common cases.
impl Point {
    /// Is this a point of the radio access network?
    pub fn is_radio(self) -> bool {
        matches!(
            self,
            Point::UeUlBuffer | Point::DlIngress | Point::DlEgress | Point::UlEgress
        )
    }
}
