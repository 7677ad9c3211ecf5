//! The real-time loop. Simulated time is wall time since [`Emulator::run`] started; each turn:
//!
//! 1. run every model event due by now (their lateness is recorded: now − the earliest
//!    event's time);
//! 2. read every packet waiting on the TUN devices (a bounded batch per device), keep its
//!    payload in the side-table and inject it at its host's node at now
//!    ([`rantcp_net::Sim::inject`]);
//! 3. run the events those injections made due, then write every packet the model handed out
//!    to an external node to that host's TUN device, rebuilt from the model's header fields
//!    with the kept payload and fresh checksums;
//! 4. sleep in `ppoll(2)` until the next event is due or a TUN device has a packet (no polling
//!    per tick; the thread's timer slack is set to 1 ns). The timer still wakes an idle CPU
//!    late, so a sleep of 1 ms or more ends early by the lateness such wake-ups have shown
//!    ([`WakeMargin`]) and the rest, at most 300 µs, is spent watching the devices.
//!
//! With interrupt moderation ([`Emulator::set_moderation`], as a NIC's `rx-usecs`), a turn that
//! would follow the last one by less than the moderation interval waits until that interval has
//! passed, not watching the devices meanwhile: packets and events of the interval are handled
//! together, up to that much late, so that receive offload has whole batches to merge and the
//! loop's cost per packet falls. Off (0) by default; its cost shows in the lateness figures.
//!
//! One thread does all of it, so the model stays single-threaded as in a simulated run.

use crate::health::Lateness;
use crate::offload::{self, Coalescer, VnetHdr, VNET_HDR_LEN, WRITE_HDR};
use crate::payload::PayloadStore;
use crate::tun::Tun;
use rantcp_core::Time;
use rantcp_net::{NodeId, Sim};
use rantcp_scenario::{Run, RunOutput};
use rantcp_wire::{Packet, ParseError};
use std::io;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Instant;

/// Packets read from one device per turn before the model runs again.
const READ_BATCH: usize = 64;
/// Longest sleep, so a stop request is seen promptly.
const MAX_SLEEP_NS: u64 = 50_000_000;
/// Payloads kept (see [`PayloadStore`]): more than any scenario's queues hold at once.
const PAYLOAD_SLOTS: usize = 1 << 16;
/// Largest packet read from a device (the largest IPv4 datagram).
const MAX_PACKET: usize = 65_535;

/// A host to emulate: a node of the scenario and the network namespace it lives in.
#[derive(Clone, Debug)]
pub struct HostSpec {
    pub node: String,
    /// The namespace's handle, e.g. `/run/netns/rantcp-ue1`.
    pub netns: PathBuf,
}

#[derive(Clone, Copy, Debug, Default)]
struct Counters {
    /// Reads from the device (one per super-segment with offload).
    from_host_reads: u64,
    /// Packets and IP bytes the host sent into the model.
    from_host_packets: u64,
    from_host_bytes: u64,
    /// Packets and IP bytes the model delivered to the host (as the model carried them:
    /// one per segment).
    to_host_packets: u64,
    to_host_bytes: u64,
    /// Writes to the device (fewer than packets when receive offload merged segments).
    to_host_writes: u64,
    /// Packets from the host the model cannot carry (not IPv4, or malformed), dropped.
    unparsed: u64,
    /// Packets the device refused to take (write error), dropped.
    write_errors: u64,
}

struct Endpoint {
    node: NodeId,
    name: String,
    tun: Tun,
    c: Counters,
}

/// A scenario running against the wall clock with real hosts.
pub struct Emulator {
    run: Run,
    endpoints: Vec<Endpoint>,
    /// Node → index in `endpoints`.
    by_node: Vec<Option<usize>>,
    store: PayloadStore,
    model_lateness: Lateness,
    delivery_lateness: Lateness,
    turns: u64,
    /// Simulated time reached.
    reached: Time,
    payload_missing: u64,
    wall_s: f64,
    cpu_s: f64,
    /// The loop ran under SCHED_FIFO.
    realtime: bool,
    /// Interrupt moderation interval, ns (0: off).
    moderation_ns: u64,
    /// How early to wake before a timed event.
    wake: WakeMargin,
}

fn sim_mut(run: &mut Run) -> &mut Sim {
    &mut run.sims_mut()[0].1
}

impl Emulator {
    /// Make `hosts` external and open their TUN devices (named `tun_name` in every namespace).
    /// Without `keep_traffic` the scenario's own flows are removed, so only real traffic flows.
    pub fn new(
        mut run: Run,
        hosts: &[HostSpec],
        tun_name: &str,
        keep_traffic: bool,
        offload: bool,
    ) -> Result<Emulator, String> {
        if run.sims().len() != 1 {
            return Err(format!(
                "scenario {:?} runs {} networks side by side; emulation needs a scenario with one network",
                run.config().name(),
                run.sims().len()
            ));
        }
        let sim = sim_mut(&mut run);
        let mut endpoints = Vec::new();
        let mut by_node = vec![None; sim.node_count()];
        for h in hosts {
            let node = sim.node_id(&h.node).ok_or_else(|| {
                format!("emulated host {:?} is not a node of the scenario", h.node)
            })?;
            if by_node[node].is_some() {
                return Err(format!("host {:?} given twice", h.node));
            }
            let tun = Tun::open_in(&h.netns, tun_name, offload).map_err(|e| e.to_string())?;
            sim.set_external(node);
            by_node[node] = Some(endpoints.len());
            endpoints.push(Endpoint {
                node,
                name: h.node.clone(),
                tun,
                c: Counters::default(),
            });
        }
        if !keep_traffic {
            sim.remove_flows();
        }
        Ok(Emulator {
            run,
            endpoints,
            by_node,
            store: PayloadStore::new(PAYLOAD_SLOTS),
            model_lateness: Lateness::default(),
            delivery_lateness: Lateness::default(),
            turns: 0,
            reached: Time::ZERO,
            payload_missing: 0,
            wall_s: 0.0,
            cpu_s: 0.0,
            realtime: false,
            moderation_ns: 0,
            wake: WakeMargin::default(),
        })
    }

    /// Interrupt moderation (see the module docs): turns at least `ns` apart while busy.
    pub fn set_moderation(&mut self, ns: u64) {
        self.moderation_ns = ns;
    }

    /// The simulated end (the scenario's duration).
    pub fn end(&self) -> Time {
        self.run.end()
    }

    /// Run against the wall clock until `stop` is set or the scenario's end. `now_ns` is kept
    /// at the simulated time reached (for progress reports from other threads).
    pub fn run(&mut self, stop: &AtomicBool, now_ns: &AtomicU64) -> Result<(), String> {
        // SAFETY: prctl(PR_SET_TIMERSLACK) on the calling thread; 1 ns: wake-ups on time.
        unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong) };
        self.realtime = set_realtime();
        let cpu0 = thread_cpu_s();
        let t0 = Instant::now();
        let clock = || Time(t0.elapsed().as_nanos() as u64);
        let end = self.run.end();
        let mut buf = vec![0u8; MAX_PACKET];
        let mut wbuf: Vec<u8> = Vec::with_capacity(MAX_PACKET);
        let zeros = vec![0u8; MAX_PACKET];
        let mut out: Vec<(Time, NodeId, Packet)> = Vec::with_capacity(1024);
        let mut coalescer = Coalescer::default();
        let mut hbuf: Vec<u8> = Vec::with_capacity(VNET_HDR_LEN + rantcp_wire::MAX_HEADER_LEN);
        let mut fds: Vec<libc::pollfd> = self
            .endpoints
            .iter()
            .map(|e| libc::pollfd {
                fd: e.tun.raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            })
            .collect();
        let result = 'turn: loop {
            if stop.load(Ordering::Relaxed) {
                break Ok(());
            }
            let now = clock().min(end);
            let turn_start = now;
            self.turns += 1;
            let sim = sim_mut(&mut self.run);
            if let Some(e) = sim.next_event_time() {
                if e <= now {
                    self.model_lateness.record(now.0 - e.0);
                }
            }
            if let Err(e) = sim.run_until(now) {
                break Err(e);
            }
            now_ns.store(now.0, Ordering::Relaxed);
            self.reached = now;
            if now >= end {
                break Ok(());
            }
            // Packets from the hosts.
            let mut more = false;
            for ep in &mut self.endpoints {
                let mut k = 0;
                while k < READ_BATCH {
                    match ep.tun.read(&mut buf) {
                        Ok(n) => {
                            k += 1;
                            ep.c.from_host_reads += 1;
                            let (h, bytes) = if ep.tun.vnet() && n >= VNET_HDR_LEN {
                                (VnetHdr::parse(&buf[..n]), &buf[VNET_HDR_LEN..n])
                            } else {
                                (None, &buf[..n])
                            };
                            let store = &mut self.store;
                            let c = &mut ep.c;
                            let node = ep.node;
                            let mut inject = |mut p: Packet, payload: &[u8]| {
                                c.from_host_packets += 1;
                                c.from_host_bytes += p.len() as u64;
                                if !payload.is_empty() {
                                    p.payload_id = store.put(payload);
                                }
                                sim.inject(now, node, p);
                            };
                            let r = match h {
                                Some(h) => offload::segment(h, bytes, &mut inject),
                                None => parse(bytes).map(|p| {
                                    let hl = p.header_len() as usize;
                                    inject(p, &bytes[hl..hl + p.payload_len as usize])
                                }),
                            };
                            if r.is_err() {
                                ep.c.unparsed += 1;
                            }
                        }
                        Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                        Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                        Err(e) => break 'turn Err(format!("reading TUN of {}: {e}", ep.name)),
                    }
                }
                more |= k == READ_BATCH;
            }
            if let Err(e) = sim.run_until(now) {
                break Err(e);
            }
            // Packets to the hosts.
            sim.drain_external(&mut out);
            if !out.is_empty() {
                let wall = clock();
                for (at, node, p) in out.drain(..) {
                    let Some(i) = self.by_node[node] else {
                        continue;
                    };
                    let len = p.payload_len as usize;
                    let payload = match self.store.get(p.payload_id) {
                        Some(b) if b.len() == len => b,
                        _ => {
                            if len > 0 {
                                // Made by the model (zeros on the wire, as in its pcap), or
                                // kept too long: counted.
                                if p.payload_id != 0 {
                                    self.payload_missing += 1;
                                }
                            }
                            &zeros[..len]
                        }
                    };
                    self.delivery_lateness.record(wall.0.saturating_sub(at.0));
                    if self.endpoints[i].tun.vnet() && p.as_tcp().is_some() {
                        // Receive offload: in-order segments go out as one super-segment.
                        if !coalescer.add(i, &p, payload) {
                            write_batch(&mut self.endpoints, &mut coalescer, &mut hbuf);
                            coalescer.add(i, &p, payload);
                        }
                        continue;
                    }
                    write_batch(&mut self.endpoints, &mut coalescer, &mut hbuf);
                    let ep = &mut self.endpoints[i];
                    wbuf.clear();
                    if ep.tun.vnet() {
                        wbuf.extend_from_slice(&WRITE_HDR);
                    }
                    p.write_bytes_with_payload(payload, &mut wbuf);
                    match ep.tun.write(&wbuf) {
                        Ok(_) => {
                            ep.c.to_host_packets += 1;
                            ep.c.to_host_bytes += p.len() as u64;
                            ep.c.to_host_writes += 1;
                        }
                        Err(_) => ep.c.write_errors += 1,
                    }
                }
                write_batch(&mut self.endpoints, &mut coalescer, &mut hbuf);
            }
            if more {
                continue;
            }
            // Sleep until the next event, a packet, or MAX_SLEEP_NS.
            let now = clock();
            let next = sim.next_event_time().unwrap_or(Time::MAX).min(end);
            let wait = next.0.saturating_sub(now.0).min(MAX_SLEEP_NS);
            let hold_until = turn_start.0 + self.moderation_ns;
            if self.moderation_ns > 0 && next.0 < hold_until {
                // Busy: the next turn comes a moderation interval after this one began.
                if now.0 < hold_until {
                    sleep_ns(hold_until - now.0);
                }
                continue;
            }
            if wait == 0 {
                continue;
            }
            // Wake early by the wake-up delay the timer has shown, then watch the devices
            // without sleeping until the event is due: an idle CPU's wake-up (tens to hundreds
            // of µs on a virtual machine) would otherwise make every isolated event that late.
            // Only after a long sleep: a busy loop's short sleeps wake on time, and spinning
            // there under SCHED_FIFO would starve the host's own stacks on this CPU.
            let early = if wait >= IDLE_SLEEP_NS {
                self.wake.margin_ns()
            } else {
                0
            };
            let sleep = wait - early;
            let mut ready = 0;
            if sleep > 0 {
                match poll_devices(&mut fds, sleep) {
                    Ok(r) => ready = r,
                    Err(e) => break Err(e),
                }
                if ready == 0 && wait >= IDLE_SLEEP_NS {
                    let woke = clock();
                    self.wake.record(woke.0.saturating_sub(now.0 + sleep));
                }
            }
            while ready == 0 && clock().0 < now.0 + wait {
                match poll_devices(&mut fds, 0) {
                    Ok(r) => ready = r,
                    Err(e) => break 'turn Err(e),
                }
            }
        };
        self.wall_s += t0.elapsed().as_secs_f64();
        self.cpu_s += thread_cpu_s() - cpu0;
        result
    }

    /// Health figures (the `emulation` key of summary.json).
    pub fn health(&self) -> serde_json::Value {
        let hosts: serde_json::Map<String, serde_json::Value> = self
            .endpoints
            .iter()
            .map(|e| {
                (
                    e.name.clone(),
                    serde_json::json!({
                        "from_host_reads": e.c.from_host_reads,
                        "from_host_packets": e.c.from_host_packets,
                        "from_host_bytes": e.c.from_host_bytes,
                        "to_host_packets": e.c.to_host_packets,
                        "to_host_bytes": e.c.to_host_bytes,
                        "to_host_writes": e.c.to_host_writes,
                        "unparsed": e.c.unparsed,
                        "write_errors": e.c.write_errors,
                    }),
                )
            })
            .collect();
        let write_errors: u64 = self.endpoints.iter().map(|e| e.c.write_errors).sum();
        serde_json::json!({
            "wall_s": self.wall_s,
            "cpu_s": self.cpu_s,
            "cpu_fraction": if self.wall_s > 0.0 { self.cpu_s / self.wall_s } else { 0.0 },
            "turns": self.turns,
            "realtime_priority": self.realtime,
            "moderation_us": self.moderation_ns as f64 / 1000.0,
            "wake_margin_us": self.wake.margin_ns() as f64 / 1000.0,
            "model_lateness": self.model_lateness.to_json(),
            "delivery_lateness": self.delivery_lateness.to_json(),
            "payload_missing": self.payload_missing,
            "emulator_drops": write_errors + self.payload_missing,
            "hosts": hosts,
        })
    }

    /// Close captures and compute the outputs of the time run, the health figures under
    /// `emulation` in the summary.
    pub fn finish(mut self) -> Result<RunOutput, String> {
        self.run.set_end(self.reached);
        let health = self.health();
        let wall = self.wall_s;
        let mut out = self.run.finish(wall)?;
        if let Some(o) = out.summary.as_object_mut() {
            o.insert("emulation".into(), health);
        }
        Ok(out)
    }
}

/// Write the coalescer's waiting batch, if any, to its device.
fn write_batch(endpoints: &mut [Endpoint], c: &mut Coalescer, hbuf: &mut Vec<u8>) {
    let Some(b) = c.flush(hbuf) else {
        return;
    };
    let ep = &mut endpoints[b.dest];
    let hdr_ip = b.header.len() - VNET_HDR_LEN;
    match ep.tun.write_parts(&[b.header, b.payload]) {
        Ok(_) => {
            ep.c.to_host_packets += b.segs as u64;
            // IP bytes as the model carried them: one header per segment.
            ep.c.to_host_bytes += (b.payload.len() + hdr_ip * b.segs as usize) as u64;
            ep.c.to_host_writes += 1;
        }
        Err(_) => ep.c.write_errors += b.segs as u64,
    }
}

/// Parse a packet from a local stack. With no offload features on the device the kernel
/// computes every checksum before the packet reaches us, so they are verified.
#[inline]
fn parse(bytes: &[u8]) -> Result<Packet, ParseError> {
    Packet::parse(bytes)
}

/// Run the calling thread under SCHED_FIFO (sched(7)), below the kernel's own real-time
/// threads: the loop sleeps between events, and a runnable thread of the shared machine must
/// not delay its wake-up by a time slice. Best effort (needs CAP_SYS_NICE); whether it took is
/// reported in the health figures. The kernel's real-time throttling (95 % of each second by
/// default) bounds what a runaway loop could take.
fn set_realtime() -> bool {
    let p = libc::sched_param { sched_priority: 10 };
    // SAFETY: sched_setscheduler on the calling thread (pid 0) with a valid sched_param.
    unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO, &p) == 0 }
}

/// `ppoll(2)` on the devices for at most `ns` (0: just look); the number ready.
fn poll_devices(fds: &mut [libc::pollfd], ns: u64) -> Result<i32, String> {
    let ts = libc::timespec {
        tv_sec: (ns / 1_000_000_000) as libc::time_t,
        tv_nsec: (ns % 1_000_000_000) as libc::c_long,
    };
    // SAFETY: ppoll over our own pollfd array with a valid timespec and no sigmask.
    let r = unsafe {
        libc::ppoll(
            fds.as_mut_ptr(),
            fds.len() as libc::nfds_t,
            &ts,
            std::ptr::null(),
        )
    };
    if r < 0 {
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::Interrupted {
            return Err(format!("ppoll: {e}"));
        }
        return Ok(0);
    }
    Ok(r)
}

/// How late the timer wakes the loop, learnt from its own sleeps: up at once when a wake-up is
/// later than the estimate, down slowly (1/16 of the gap per sleep) when earlier, so the loop
/// wakes early enough for nearly every event and spins only about the variation. Bounded by
/// [`MAX_WAKE_MARGIN_NS`], so a stalled machine cannot turn the loop into a spin.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct WakeMargin {
    ns: u64,
}

/// Longest early wake-up (and so longest spin before an event).
const MAX_WAKE_MARGIN_NS: u64 = 300_000;
/// Sleeps at least this long let the CPU go idle, and only they wake early (so the spin
/// takes at most 30 % of an otherwise idle loop's time).
const IDLE_SLEEP_NS: u64 = 1_000_000;

impl WakeMargin {
    pub(crate) fn margin_ns(&self) -> u64 {
        self.ns
    }

    /// A timed sleep ended `late_ns` after its deadline.
    pub(crate) fn record(&mut self, late_ns: u64) {
        let late = late_ns.min(MAX_WAKE_MARGIN_NS);
        if late > self.ns {
            self.ns = late;
        } else {
            self.ns -= (self.ns - late) / 16;
        }
    }
}

/// Sleep `ns` nanoseconds (the thread's timer slack applies).
fn sleep_ns(ns: u64) {
    let ts = libc::timespec {
        tv_sec: (ns / 1_000_000_000) as libc::time_t,
        tv_nsec: (ns % 1_000_000_000) as libc::c_long,
    };
    // SAFETY: clock_nanosleep with a valid relative timespec and no remainder wanted.
    unsafe { libc::clock_nanosleep(libc::CLOCK_MONOTONIC, 0, &ts, std::ptr::null_mut()) };
}

fn thread_cpu_s() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime into a local timespec.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wake_margin_rises_at_once_and_falls_slowly() {
        let mut w = WakeMargin::default();
        assert_eq!(w.margin_ns(), 0);
        w.record(80_000);
        assert_eq!(w.margin_ns(), 80_000);
        w.record(16_000);
        assert_eq!(w.margin_ns(), 76_000); // 80 000 - 64 000 / 16
        w.record(100_000);
        assert_eq!(w.margin_ns(), 100_000);
        // A stall never makes the loop spin longer than the bound.
        w.record(5_000_000);
        assert_eq!(w.margin_ns(), MAX_WAKE_MARGIN_NS);
    }
}
