//! Applications over flows: bulk TCP send (iperf-like), bursty TCP send (3GPP FTP model 1 and
//! its periodic and single-burst variants, [`Bursts`]), a file download (request, then the
//! response over the same connection), M2M telemetry transactions ([`M2m`], seed 003 §3.4) and
//! UDP constant bit rate. Each flow's TCP connections
//! are sans-IO endpoints (RFC 9293) owned here; the simulator drains their transmissions and
//! arms their timers after every input (the endpoint's documented calling order).

use crate::host::conn_key;
use crate::metrics::{FlowResult, FlowSeries};
use crate::sim::Ev;
use crate::{NodeId, Sim};
use rantcp_core::{Duration, Rng, Time};
use rantcp_tcp::{Endpoint, State, TcpConfig};
use rantcp_wire::{Ipv4Header, Packet, UdpHeader, IPV4_HEADER_LEN, UDP_HEADER_LEN};

/// Index of a flow.
pub type FlowId = usize;

/// What an application does over a flow.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum FlowKind {
    /// Bulk TCP send from source to destination: `bytes = None` is unlimited. `write = None`
    /// keeps the send buffer full (iperf-like); `Some` paces the application's writes.
    Bulk {
        bytes: Option<u64>,
        write: Option<AppWrite>,
    },
    /// The destination opens a connection to the source, sends a `request_bytes` request, and
    /// the source answers `bytes` then closes.
    Download { request_bytes: u64, bytes: u64 },
    /// UDP constant bit rate from source to destination: `rate_bps` of IP packets of
    /// `packet_bytes` (IP length).
    UdpCbr { rate_bps: u64, packet_bytes: u32 },
    /// Bursty TCP send from source to destination over one connection: the application
    /// writes `size` bytes at each arrival of [`Bursts`]; each burst's latency is measured.
    Bursts(Bursts),
    /// M2M telemetry (seed 003 §3.4): the destination (device) opens one connection to the
    /// source (server); transactions of a small downlink message then an uplink upload repeat
    /// over it ([`M2m`]).
    M2m(M2m),
    /// An adaptive-video client at the destination fetching from the source with HTTP GETs,
    /// some over new connections ([`crate::video`]).
    Video(crate::video::Video),
}

/// The M2M telemetry session of the dissertation (seed 003 §3.4: "one 50 bytes downlink
/// packet and one 1000 bytes uplink packet via TCP connection", all sessions starting at once).
/// The device connects to the server at the flow's start; once the connection is up the
/// server writes `down_bytes` (a poll or command); when the device's application has read all
/// of it, it writes `up_bytes` (the telemetry upload); when the server's application has read
/// the whole upload, the next transaction starts after a think time drawn from `think`.
/// Each transaction's times are kept ([`M2mRecord`]): the *downlink response time* (server
/// write → last byte read by the device) and the *application upload response time* (device
/// write → its last byte acknowledged to the device's TCP). With a think time the upload's ACK
/// waits for the server's delayed-ACK timer (nothing to piggyback it on); back to back, the
/// next downlink message carries it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct M2m {
    pub down_bytes: u64,
    pub up_bytes: u64,
    /// Think time between the end of one transaction (upload read by the server) and the
    /// next server write: exponential of this mean, or fixed (`think_exponential = false`).
    pub think: Duration,
    pub think_exponential: bool,
    /// Stop after this many transactions (`None`: until the end of the run).
    pub count: Option<u64>,
}

/// One transaction of an [`M2m`] session.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct M2mRecord {
    /// The server wrote the downlink message.
    pub down_sent: Time,
    /// Its last byte reached the device's application (= the upload's write).
    pub down_read: Option<Time>,
    /// The upload's last byte was acknowledged to the device.
    pub up_acked: Option<Time>,
}

impl M2mRecord {
    /// Server write → device read of the downlink message.
    pub fn down_response(&self) -> Option<Duration> {
        Some(self.down_read?.saturating_since(self.down_sent))
    }
    /// Upload write → its last byte acknowledged (application upload response time).
    pub fn up_response(&self) -> Option<Duration> {
        Some(self.up_acked?.saturating_since(self.down_read?))
    }
}

/// A bursty application (3GPP TR 36.814 Annex A.2.1.3.1 "FTP traffic model 1": files of
/// `size` bytes arriving as a Poisson process of rate λ per user; the same with a fixed
/// interval; or one burst). Every burst is written whole into the send buffer of one
/// persistent connection when it arrives (a burst arriving while earlier ones are still being
/// sent queues behind them). Its latency is measured from when TCP first sends one of its bytes
/// to when its last byte reaches the receiving application, and from its arrival to then
/// ([`BurstRecord`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Bursts {
    pub size: u64,
    pub arrivals: Arrivals,
    /// Stop after this many bursts (`None`: until the end of the run).
    pub count: Option<u64>,
}

/// When the bursts of [`Bursts`] arrive; the first at the flow's start.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Arrivals {
    /// Exponential inter-arrival times of mean `1/rate_per_s` (TR 36.814 FTP model 1).
    Poisson { rate_per_s: f64 },
    /// One burst every `interval` (the seed 002 "long flows").
    Periodic { interval: Duration },
}

/// One burst of a [`FlowKind::Bursts`] flow: its byte range in the stream and its times.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct BurstRecord {
    pub arrival: Time,
    /// Stream bytes [start, end) of the connection.
    pub start: u64,
    pub end: u64,
    /// TCP first sent a byte of it.
    pub first_sent: Option<Time>,
    /// Its last byte reached the receiving application.
    pub delivered: Option<Time>,
}

impl BurstRecord {
    /// First byte sent → last byte delivered.
    pub fn latency(&self) -> Option<Duration> {
        Some(self.delivered?.saturating_since(self.first_sent?))
    }
    /// Arrival → last byte delivered (the TR 36.814 file transfer time, queueing included).
    pub fn transfer_time(&self) -> Option<Duration> {
        Some(self.delivered?.saturating_since(self.arrival))
    }
}

/// An application that writes `chunk` bytes every `chunk / rate` seconds, as the ns-3 tutorial
/// application `MyApp` (the seeds' scenario code) does with `Socket::Send`: a write that does
/// not fit the send buffer whole fails and is lost to the application (ns-3's `TcpSocketBase::
/// Send` refuses a packet larger than `GetTxAvailable()`); the byte stream stays contiguous
/// because TCP never saw the refused bytes. The offered load is therefore at most `rate`,
/// distinct from the rate of the link the server sits behind.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AppWrite {
    pub rate_bps: u64,
    pub chunk: u32,
}

/// A flow between two hosts. "Source" is where the data comes from.
#[derive(Clone, Debug)]
pub struct FlowSpec {
    pub name: String,
    pub kind: FlowKind,
    pub src: NodeId,
    pub dst: NodeId,
    pub src_port: u16,
    pub dst_port: u16,
    pub start: Time,
    /// TCP configuration of the data sender (source side).
    pub tcp_sender: TcpConfig,
    /// TCP configuration of the data receiver (destination side).
    pub tcp_receiver: TcpConfig,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Role {
    BulkSender,
    BulkReceiver,
    DownloadServer,
    DownloadClient,
    M2mServer,
    M2mDevice,
    VideoServer,
    VideoClient,
}

pub(crate) struct Conn {
    pub(crate) node: NodeId,
    pub(crate) flow: FlowId,
    pub(crate) role: Role,
    pub(crate) ep: Endpoint,
    /// Its 4-tuple key at the host, once it has a remote end.
    pub(crate) key: Option<u64>,
    /// Time of the timer event currently in the queue for this connection, if any.
    timer_at: Option<Time>,
    /// Bytes still to hand to the socket (sender roles); `u64::MAX` for unlimited.
    pub(crate) to_write: u64,
    pub(crate) request_read: u64,
    /// The application has data to send (bulk from the start; download once requested).
    writing: bool,
    closed_by_app: bool,
    /// Paced writes: the next write's index (write `k` happens at `start + k·chunk/rate`), and
    /// whether its tick is in the queue (no tick while the send buffer is full: writes due then
    /// are refused, and the next ACK that frees space re-arms on the write grid).
    paced: Option<Paced>,
    /// Bursty application: arrivals still to come and their random stream.
    bursts: Option<BurstGen>,
    /// M2M: stream bytes read so far, and (server) whether a transaction is outstanding or
    /// its think time is running.
    m2m_read: u64,
    m2m_busy: bool,
    /// A passive open's expected peer: the flow's other end (RFC 9293 §3.10.1, a passive OPEN
    /// with a fully specified foreign socket waits for that socket only), so flows that share a
    /// server port each take their own client's SYN.
    pub(crate) peer: Option<(std::net::Ipv4Addr, u16)>,
    /// Video application ([`crate::video`]): the connection's own state.
    pub(crate) video: Option<Box<crate::video::VideoConn>>,
    /// The application dropped this connection ([`crate::video::Abandon`]): what still arrives
    /// is discarded.
    pub(crate) abandoned: bool,
}

#[derive(Clone, Debug)]
struct BurstGen {
    b: Bursts,
    rng: Rng,
    arrived: u64,
}

#[derive(Clone, Copy, Debug)]
struct Paced {
    w: AppWrite,
    start: Time,
    next: u64,
    armed: bool,
}

impl Paced {
    fn at(&self, k: u64) -> Time {
        self.start + Duration::transmission(k.saturating_mul(self.w.chunk as u64), self.w.rate_bps)
    }
}

pub(crate) struct Flow {
    pub(crate) spec: FlowSpec,
    pub(crate) sender: Option<usize>,
    pub(crate) receiver: Option<usize>,
    pub(crate) result: FlowResult,
    pub(crate) last_sample_delivered: u64,
    pub(crate) series: FlowSeries,
    /// Video application's player ([`crate::video`]).
    pub(crate) video: Option<Box<crate::video::VideoFlow>>,
}

impl Sim {
    /// Add a flow; it starts at `spec.start`.
    pub fn add_flow(&mut self, spec: FlowSpec) -> FlowId {
        let id = self.flows.len();
        self.q
            .schedule(spec.start, Ev::FlowStart { flow: id as u32 });
        self.flows.push(Flow {
            spec,
            sender: None,
            receiver: None,
            result: FlowResult::default(),
            last_sample_delivered: 0,
            series: FlowSeries::default(),
            video: None,
        });
        id
    }

    pub(crate) fn new_conn(
        &mut self,
        node: NodeId,
        flow: FlowId,
        role: Role,
        ep: Endpoint,
        to_write: u64,
    ) -> usize {
        let id = self.conns.len();
        let writing = to_write > 0;
        let passive = ep.state() == State::Listen;
        let key = (!passive).then(|| conn_key(ep.local().1, ep.remote()));
        let peer = passive.then(|| {
            let spec = &self.flows[flow].spec;
            if node == spec.src {
                (self.nodes[spec.dst].addr, spec.dst_port)
            } else {
                (self.nodes[spec.src].addr, spec.src_port)
            }
        });
        self.conns.push(Conn {
            node,
            flow,
            role,
            ep,
            key,
            timer_at: None,
            to_write,
            request_read: 0,
            writing,
            closed_by_app: false,
            paced: None,
            bursts: None,
            m2m_read: 0,
            m2m_busy: false,
            peer,
            video: None,
            abandoned: false,
        });
        self.nodes[node].host.register(id, key, passive);
        id
    }

    pub(crate) fn iss_for(&self, flow: FlowId, side: &str) -> u32 {
        Rng::for_entity(self.seed, &format!("tcp/iss/{flow}/{side}")).next_u64() as u32
    }

    /// The two ends of a push from source to destination (bulk or bursts): the destination
    /// listens, the source connects with `to_write` bytes to send. Returns the sender.
    fn open_push(&mut self, now: Time, f: FlowId, spec: &FlowSpec, to_write: u64) -> usize {
        let src = (self.nodes[spec.src].addr, spec.src_port);
        let dst = (self.nodes[spec.dst].addr, spec.dst_port);
        let rx_ep = Endpoint::listen(dst, self.iss_for(f, "rx"), spec.tcp_receiver.clone());
        let rx = self.new_conn(spec.dst, f, Role::BulkReceiver, rx_ep, 0);
        let tx_ep = Endpoint::connect(
            now,
            src,
            dst,
            self.iss_for(f, "tx"),
            spec.tcp_sender.clone(),
        );
        let tx = self.new_conn(spec.src, f, Role::BulkSender, tx_ep, to_write);
        self.flows[f].sender = Some(tx);
        self.flows[f].receiver = Some(rx);
        tx
    }

    pub(crate) fn on_flow_start(&mut self, now: Time, f: FlowId) {
        let Some(flow) = self.flows.get(f) else {
            return; // removed before the run ([`Sim::remove_flows`])
        };
        let spec = flow.spec.clone();
        let src = (self.nodes[spec.src].addr, spec.src_port);
        let dst = (self.nodes[spec.dst].addr, spec.dst_port);
        match spec.kind {
            FlowKind::Bulk { bytes, write } => {
                let tx = self.open_push(now, f, &spec, bytes.unwrap_or(u64::MAX));
                if let Some(w) = write {
                    self.conns[tx].paced = Some(Paced {
                        w,
                        start: now,
                        next: 0,
                        armed: false,
                    });
                    self.on_app_write(now, tx);
                } else {
                    self.service(now, tx);
                }
            }
            FlowKind::Bursts(b) => {
                let tx = self.open_push(now, f, &spec, 0);
                self.conns[tx].bursts = Some(BurstGen {
                    b,
                    rng: Rng::for_entity(self.seed, &format!("app/bursts/{f}")),
                    arrived: 0,
                });
                self.on_burst(now, tx);
            }
            FlowKind::Download { .. } => {
                let srv_ep = Endpoint::listen(src, self.iss_for(f, "tx"), spec.tcp_sender.clone());
                let srv = self.new_conn(spec.src, f, Role::DownloadServer, srv_ep, 0);
                let cl_ep = Endpoint::connect(
                    now,
                    dst,
                    src,
                    self.iss_for(f, "rx"),
                    spec.tcp_receiver.clone(),
                );
                let cl = self.new_conn(spec.dst, f, Role::DownloadClient, cl_ep, 0);
                self.flows[f].sender = Some(srv);
                self.flows[f].receiver = Some(cl);
                self.service(now, cl);
            }
            FlowKind::M2m(_) => {
                let srv_ep = Endpoint::listen(src, self.iss_for(f, "tx"), spec.tcp_sender.clone());
                let srv = self.new_conn(spec.src, f, Role::M2mServer, srv_ep, 0);
                let dev_ep = Endpoint::connect(
                    now,
                    dst,
                    src,
                    self.iss_for(f, "rx"),
                    spec.tcp_receiver.clone(),
                );
                let dev = self.new_conn(spec.dst, f, Role::M2mDevice, dev_ep, 0);
                self.flows[f].sender = Some(srv);
                self.flows[f].receiver = Some(dev);
                self.service(now, dev);
            }
            FlowKind::Video(v) => self.start_video(now, f, v),
            FlowKind::UdpCbr { .. } => {
                self.nodes[spec.dst].host.add_udp_sink(spec.dst_port, f);
                self.on_cbr_tick(now, f);
            }
        }
    }

    pub(crate) fn on_cbr_tick(&mut self, now: Time, f: FlowId) {
        let spec = &self.flows[f].spec;
        let FlowKind::UdpCbr {
            rate_bps,
            packet_bytes,
        } = spec.kind
        else {
            return;
        };
        let (src, dst, sp, dp) = (spec.src, spec.dst, spec.src_port, spec.dst_port);
        let payload = packet_bytes.saturating_sub(IPV4_HEADER_LEN + UDP_HEADER_LEN);
        let mut ip = Ipv4Header::new(self.nodes[src].addr, self.nodes[dst].addr);
        ip.identification = self.nodes[src].ip_id;
        self.nodes[src].ip_id = self.nodes[src].ip_id.wrapping_add(1);
        let p = Packet::udp(
            ip,
            UdpHeader {
                src_port: sp,
                dst_port: dp,
            },
            payload,
        );
        let r = &mut self.flows[f].result;
        r.udp_sent_packets += 1;
        r.udp_sent_bytes += payload as u64;
        self.host_send(now, src, p);
        let gap = Duration::transmission(packet_bytes as u64, rate_bps);
        self.q.schedule(now + gap, Ev::CbrTick { flow: f as u32 });
    }

    /// A burst arrives on connection `c` (see [`Bursts`]): queue it whole and draw the next.
    pub(crate) fn on_burst(&mut self, now: Time, c: usize) {
        let conn = &mut self.conns[c];
        let Some(g) = conn.bursts.as_mut() else {
            return;
        };
        if conn.closed_by_app {
            return;
        }
        g.arrived += 1;
        let last = g.b.count.is_some_and(|n| g.arrived >= n);
        let next = if last {
            None
        } else {
            Some(match g.b.arrivals {
                Arrivals::Periodic { interval } => interval,
                Arrivals::Poisson { rate_per_s } => {
                    Duration::from_secs_f64(g.rng.exponential(1.0 / rate_per_s))
                }
            })
        };
        let res = &mut self.flows[conn.flow].result;
        let start = res.bursts.last().map_or(0, |b| b.end);
        res.bursts.push(BurstRecord {
            arrival: now,
            start,
            end: start + g.b.size,
            first_sent: None,
            delivered: None,
        });
        conn.to_write += g.b.size;
        // Close once the last burst is written (`writing` gates `close_when_written`).
        conn.writing = last;
        if let Some(gap) = next {
            self.q.schedule(now + gap, Ev::Burst { conn: c as u32 });
        }
        self.service(now, c);
    }

    /// The M2M transactions of flow `f` completed since the last call (upload acknowledged).
    pub fn take_m2m_completed(&mut self, f: FlowId) -> &[M2mRecord] {
        let r = &mut self.flows[f].result;
        let from = r.m2m_reported.min(r.m2m_acked);
        r.m2m_reported = r.m2m_acked;
        &r.m2m[from..r.m2m_acked]
    }

    /// An M2M server's think time is over (see [`M2m`]): the next transaction's downlink write.
    pub(crate) fn on_m2m_next(&mut self, now: Time, c: usize) {
        let conn = &mut self.conns[c];
        let f = conn.flow;
        let FlowKind::M2m(m) = self.flows[f].spec.kind else {
            return;
        };
        let res = &mut self.flows[f].result;
        res.m2m_thinking = false;
        if matches!(conn.ep.state(), State::Established | State::CloseWait) {
            conn.ep.send(m.down_bytes);
            res.m2m.push(M2mRecord {
                down_sent: now,
                ..Default::default()
            });
        }
        self.service(now, c);
    }

    /// A paced application write is due on connection `c` (see [`AppWrite`]).
    pub(crate) fn on_app_write(&mut self, now: Time, c: usize) {
        let conn = &mut self.conns[c];
        let res = &mut self.flows[conn.flow].result;
        let Some(mut p) = conn.paced else { return };
        p.armed = false;
        while p.at(p.next) <= now && conn.to_write > 0 {
            p.next += 1;
            res.app_writes += 1;
            let chunk = (p.w.chunk as u64).min(conn.to_write);
            if conn.ep.send_buffer_free() < chunk || conn.ep.state() == State::Closed {
                // Refused: the application loses this write (ns-3 `Send` returns -1).
                res.app_writes_refused += 1;
                continue;
            }
            conn.ep.send(chunk);
            if conn.to_write != u64::MAX {
                conn.to_write -= chunk;
            }
        }
        conn.paced = Some(p);
        self.service(now, c);
    }

    pub(crate) fn on_timer(&mut self, now: Time, c: usize) {
        let conn = &mut self.conns[c];
        if conn.timer_at != Some(now) {
            return; // superseded by an earlier re-arm
        }
        conn.timer_at = None;
        if conn.ep.poll_timeout().is_some_and(|t| t <= now) {
            conn.ep.handle_timeout(now);
        }
        self.service(now, c);
    }

    /// Run the application on connection `c`, drain its transmissions and re-arm its timer.
    pub(crate) fn service(&mut self, now: Time, c: usize) {
        let f = self.conns[c].flow;
        let conn = &mut self.conns[c];
        match conn.role {
            Role::BulkSender if conn.paced.is_some() => {
                close_when_written(conn);
                let p = conn.paced.as_mut().expect("paced");
                if !p.armed && conn.to_write > 0 && conn.ep.state() != State::Closed {
                    // Writes due while the buffer had no room for one were refused; the next
                    // happens on the grid at or after `now`, once it has room again.
                    if p.at(p.next) < now {
                        let gap = Duration::transmission(p.w.chunk as u64, p.w.rate_bps)
                            .0
                            .max(1);
                        let skipped = (now - p.at(p.next)).0 / gap;
                        p.next += skipped;
                        let res = &mut self.flows[f].result;
                        res.app_writes += skipped;
                        res.app_writes_refused += skipped;
                        while p.at(p.next) < now {
                            p.next += 1;
                            res.app_writes += 1;
                            res.app_writes_refused += 1;
                        }
                    }
                    if conn.ep.send_buffer_free() >= (p.w.chunk as u64).min(conn.to_write) {
                        p.armed = true;
                        self.q
                            .schedule(p.at(p.next), Ev::AppWrite { conn: c as u32 });
                    }
                }
            }
            Role::BulkSender => {
                write_pending(conn);
                if conn.bursts.is_some() {
                    close_when_written(conn);
                }
            }
            Role::DownloadServer => {
                let FlowKind::Download {
                    request_bytes,
                    bytes,
                } = self.flows[f].spec.kind
                else {
                    unreachable!()
                };
                conn.request_read += conn.ep.recv(u64::MAX);
                if conn.request_read >= request_bytes && !conn.writing {
                    conn.to_write = bytes;
                    conn.writing = true;
                }
                write_pending(conn);
            }
            Role::M2mServer => {
                let FlowKind::M2m(m) = self.flows[f].spec.kind else {
                    unreachable!()
                };
                conn.m2m_read += conn.ep.recv(u64::MAX);
                let res = &mut self.flows[f].result;
                let done = res.m2m.len() as u64;
                if conn.m2m_busy && conn.m2m_read >= done * m.up_bytes && done > 0 {
                    // The upload of the outstanding transaction is read: think, then the next.
                    let last = m.count.is_some_and(|n| done >= n);
                    if !last && !res.m2m_thinking {
                        let t = if m.think_exponential {
                            let mean = m.think.as_secs_f64();
                            let g = res.m2m_rng.get_or_insert_with(|| {
                                Rng::for_entity(self.seed, &format!("app/m2m/{f}"))
                            });
                            Duration::from_secs_f64(g.exponential(mean))
                        } else {
                            m.think
                        };
                        res.m2m_thinking = true;
                        self.q.schedule(now + t, Ev::M2mNext { conn: c as u32 });
                    }
                } else if !conn.m2m_busy && conn.ep.state() == State::Established {
                    // The connection is up: the first transaction.
                    conn.m2m_busy = true;
                    conn.ep.send(m.down_bytes);
                    res.m2m.push(M2mRecord {
                        down_sent: now,
                        ..Default::default()
                    });
                }
            }
            Role::M2mDevice => {
                let FlowKind::M2m(m) = self.flows[f].spec.kind else {
                    unreachable!()
                };
                let got = conn.ep.recv(u64::MAX);
                conn.m2m_read += got;
                let res = &mut self.flows[f].result;
                if got > 0 {
                    res.delivered_bytes += got;
                    res.first_delivery.get_or_insert(now);
                    res.last_delivery = Some(now);
                }
                // Every downlink message read in full is answered by one upload.
                let answered = res
                    .m2m
                    .iter()
                    .rev()
                    .take_while(|r| r.down_read.is_none())
                    .count();
                let first_open = res.m2m.len() - answered;
                for k in first_open..res.m2m.len() {
                    if conn.m2m_read >= (k as u64 + 1) * m.down_bytes {
                        res.m2m[k].down_read = Some(now);
                        conn.ep.send(m.up_bytes);
                    }
                }
                let acked = conn.ep.stats().bytes_acked;
                while let Some(r) = res.m2m.get_mut(res.m2m_acked) {
                    if r.down_read.is_none() || acked < (res.m2m_acked as u64 + 1) * m.up_bytes {
                        break;
                    }
                    r.up_acked = Some(now);
                    res.m2m_acked += 1;
                }
            }
            Role::BulkReceiver | Role::DownloadClient => {
                let flow = &mut self.flows[f];
                if conn.role == Role::DownloadClient
                    && flow.result.request_at.is_none()
                    && conn.ep.state() == State::Established
                {
                    let FlowKind::Download { request_bytes, .. } = flow.spec.kind else {
                        unreachable!()
                    };
                    conn.ep.send(request_bytes);
                    flow.result.request_at = Some(now);
                }
                let got = conn.ep.recv(u64::MAX);
                if got > 0 {
                    let r = &mut flow.result;
                    r.delivered_bytes += got;
                    r.first_delivery.get_or_insert(now);
                    r.last_delivery = Some(now);
                    if !r.bursts.is_empty() {
                        r.note_bursts_delivered(now);
                    }
                    if let FlowKind::Download { bytes, .. } = flow.spec.kind {
                        if r.delivered_bytes >= bytes && r.completed_at.is_none() {
                            r.completed_at = Some(now);
                        }
                    }
                }
                if conn.ep.peer_closed() && !conn.closed_by_app {
                    conn.ep.close();
                    conn.closed_by_app = true;
                }
            }
            Role::VideoServer | Role::VideoClient => self.video_app(now, c),
        }
        let node = self.conns[c].node;
        while let Some(p) = self.conns[c].ep.poll_transmit(now) {
            if self.conns[c].abandoned && p.as_tcp().is_some_and(|t| t.flags.rst()) {
                self.flows[f].result.video.rsts_sent += 1;
            }
            self.host_send(now, node, p);
        }
        let conn = &mut self.conns[c];
        if conn.bursts.is_some() {
            self.flows[f]
                .result
                .note_bursts_sent(now, conn.ep.data_bytes_sent());
        }
        if let Some(t) = conn.ep.poll_timeout() {
            let t = t.max(now);
            if conn.timer_at.is_none_or(|at| t < at) {
                conn.timer_at = Some(t);
                self.q.schedule(t, Ev::Timer { conn: c as u32 });
            }
        }
    }
}

/// Hand the socket as much of the application's remaining data as the send buffer takes, and
/// close once everything was handed over (limited transfers only).
#[inline]
fn write_pending(conn: &mut Conn) {
    if conn.to_write > 0 && conn.ep.state() != State::Closed {
        let free = conn.ep.send_buffer_free();
        if free > 0 {
            let n = conn.ep.send(free.min(conn.to_write));
            if conn.to_write != u64::MAX {
                conn.to_write -= n;
            }
        }
    }
    close_when_written(conn);
}

/// Close once everything was handed over, but not before the handshake completed: a CLOSE in
/// SYN-SENT deletes the connection (RFC 9293 §3.10.4).
#[inline]
fn close_when_written(conn: &mut Conn) {
    if conn.writing
        && conn.to_write == 0
        && !conn.closed_by_app
        && matches!(conn.ep.state(), State::Established | State::CloseWait)
    {
        conn.ep.close();
        conn.closed_by_app = true;
    }
}
