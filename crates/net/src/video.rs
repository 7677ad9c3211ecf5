//! An HTTP adaptive-video client and its server (dissertation §4.2–§4.4, Figures 14, 22–25,
//! Table 3): the player sends HTTP GETs for the video, some over new TCP connections; when it
//! moves to a new connection it drops the old one ([`Abandon`]), and whatever of the old
//! response still arrives is thrown away by the client, which answers every such segment with
//! a RST (RFC 9293 §3.10.7.1). Those bytes crossed the air for nothing: the waste the RST
//! tracker (`rantcp_functions::rst_tracker`) cuts.
//!
//! The model, per flow:
//! * GETs arrive at the flow's start, then after each gap of [`Video::gets`] (exponential or
//!   fixed). A GET asks for `bytes_per_get` bytes from where the request stream stands, or
//!   (`None`) for the rest of the video (§4.2: "the client ... requests the entire video at
//!   once" and re-requests the rest on each new connection). The request itself is
//!   `request_bytes` of TCP payload.
//! * The first GET, and each later one with probability `new_connection`, opens a new TCP
//!   connection (a new client port: the flow's port + k for the k-th connection). The old
//!   connection is dropped ([`Abandon`]): what it held unread is discarded
//!   (`unread_discarded_bytes`) and every later segment of it is discarded on arrival
//!   (`late_discarded_bytes`). A GET on a new connection asks again from the player's position
//!   (the bytes it has read). Other GETs go on the current connection (HTTP/1.1 persistent,
//!   responses in order); an open-ended GET there is skipped when the rest is already asked.
//! * The client reads from TCP as fast as data comes, or with [`Player`] application flow
//!   control (§4.3.1, Figures 15, 18, 20: the Android client keeps its receive window closed
//!   while its buffer is full): it reads only while `read ≤ buffer_bytes + rate × (now −
//!   start)`, so its receive buffer fills and TCP's window closes; a tick every
//!   [`PLAYER_TICK`] resumes reading.
//! * The server answers each complete request with the bytes it asked for, as fast as TCP
//!   lets it, and never closes (keep-alive); a RST from the client ends its connection.
//!
//! Discard ratio (Table 3) = (unread + late discarded bytes) / (bytes read + both).
//!
//! At the end of the run ([`Sim::finish`]) each client connection becomes a row of table
//! `video_gets` (`video_gets.parquet`): the flow, the connection's index in it, when it opened,
//! its GETs, the bytes it received (read, unread at the switch, late) and discarded — the
//! per-transaction data of Figures 24–25 (with the iOS-like client one GET per connection).

use crate::app::{Arrivals, FlowId, Role};
use crate::host::conn_key;
use crate::sim::Ev;
use crate::Sim;
use rantcp_core::{Duration, Rng, Time};
use rantcp_tcp::{Endpoint, State};
use std::collections::VecDeque;

/// How often a player blocked by its buffer looks again.
pub const PLAYER_TICK: Duration = Duration::from_millis(100);

/// The video application of a flow (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Video {
    /// Size of the video; the player stops asking once it has read it all.
    pub video_bytes: u64,
    /// When GETs arrive after the first: exponential gaps (`Poisson`) or fixed ones.
    pub gets: Arrivals,
    /// Bytes each GET asks for; `None`: the rest of the video.
    pub bytes_per_get: Option<u64>,
    /// Probability that a GET after the first goes over a new TCP connection.
    pub new_connection: f64,
    /// HTTP GET size, TCP payload bytes.
    pub request_bytes: u64,
    /// Application flow control; `None`: read everything at once.
    pub player: Option<Player>,
    /// How the client drops a connection it leaves.
    pub abandon: Abandon,
    /// The client's TCP receive buffer (`None`: the flow's `tcp_receiver` setting).
    pub rcv_buf: Option<u64>,
}

/// The player's read limit: it holds at most `buffer_bytes` ahead of playback at `rate_bps`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Player {
    pub rate_bps: u64,
    pub buffer_bytes: u64,
}

/// How a client drops the connection it leaves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Abandon {
    /// Delete it without sending anything ([`Endpoint::forget`]); the first late segment draws
    /// the first RST (dissertation Figure 14, flows #11–#12).
    Silent,
    /// ABORT: a RST at once (RFC 9293 §3.10.5), and a RST per late segment.
    Abort,
}

/// What a video flow measured.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct VideoStats {
    /// GETs sent, TCP connections opened, connections left with a response still outstanding.
    pub gets: u64,
    pub connections: u64,
    pub abandoned: u64,
    /// Payload bytes the player read.
    pub read_bytes: u64,
    /// Payload bytes in the receive buffer of a connection when it was dropped.
    pub unread_discarded_bytes: u64,
    /// Payload bytes (segments) that arrived on dropped connections.
    pub late_discarded_bytes: u64,
    pub late_segments: u64,
    /// RSTs the client sent.
    pub rsts_sent: u64,
}

impl VideoStats {
    /// Payload bytes that reached the client: read or discarded.
    pub fn received_bytes(&self) -> u64 {
        self.read_bytes + self.unread_discarded_bytes + self.late_discarded_bytes
    }
    /// Discarded payload bytes.
    pub fn discarded_bytes(&self) -> u64 {
        self.unread_discarded_bytes + self.late_discarded_bytes
    }
    /// Discarded over received (Table 3's discard ratio); 0 before anything arrived.
    pub fn discard_ratio(&self) -> f64 {
        let r = self.received_bytes();
        if r == 0 {
            0.0
        } else {
            self.discarded_bytes() as f64 / r as f64
        }
    }
}

/// A video connection's own state (client or server side).
#[derive(Clone, Debug, Default)]
pub(crate) struct VideoConn {
    /// Server: response sizes of the requests not yet read whole, in order.
    responses: VecDeque<u64>,
    /// Client: GETs waiting for the handshake to complete.
    pending_gets: u64,
    /// Client: bytes asked for on this connection, and bytes read from it.
    asked: u64,
    read: u64,
    /// Client: the other end, at the server.
    server: usize,
    /// Client: its index in the flow, when it opened, GETs sent on it, bytes unread when the
    /// player left it and bytes that arrived after.
    index: u32,
    opened_at: Time,
    gets: u64,
    unread: u64,
    late: u64,
}

/// A video flow's player.
#[derive(Clone, Debug)]
pub(crate) struct VideoFlow {
    v: Video,
    rng: Rng,
    /// The client's current connection.
    client: Option<usize>,
    /// Connections opened so far.
    opened: u32,
    /// Video bytes the GETs so far cover (from the player's position on the current connection).
    asked_to: u64,
    start: Time,
    tick_armed: bool,
}

impl Sim {
    /// A video flow starts: its first GET.
    pub(crate) fn start_video(&mut self, now: Time, f: FlowId, v: Video) {
        self.flows[f].video = Some(Box::new(VideoFlow {
            v,
            rng: Rng::for_entity(self.seed, &format!("app/video/{f}")),
            client: None,
            opened: 0,
            asked_to: 0,
            start: now,
            tick_armed: false,
        }));
        self.on_video_get(now, f);
    }

    /// The player's next GET is due.
    pub(crate) fn on_video_get(&mut self, now: Time, f: FlowId) {
        let read = self.flows[f].result.video.read_bytes;
        let Some(vf) = self.flows[f].video.as_mut() else {
            return;
        };
        let v = vf.v;
        if read >= v.video_bytes {
            return; // the whole video is in the player
        }
        let gap = match v.gets {
            Arrivals::Periodic { interval } => interval,
            Arrivals::Poisson { rate_per_s } => {
                Duration::from_secs_f64(vf.rng.exponential(1.0 / rate_per_s))
            }
        };
        let fresh = vf.client.is_none()
            || v.new_connection >= 1.0
            || (v.new_connection > 0.0 && vf.rng.bernoulli(v.new_connection));
        self.q.schedule(now + gap, Ev::VideoGet { flow: f as u32 });
        if fresh {
            if let Some(old) = self.flows[f].video.as_ref().and_then(|x| x.client) {
                self.abandon_video_conn(now, old);
            }
            let vf = self.flows[f].video.as_mut().expect("video");
            vf.asked_to = read;
            self.open_video_conn(now, f);
        }
        let vf = self.flows[f].video.as_mut().expect("video");
        let want = match v.bytes_per_get {
            Some(b) => b.min(v.video_bytes - vf.asked_to.min(v.video_bytes)),
            None => v.video_bytes.saturating_sub(vf.asked_to),
        };
        if want == 0 {
            return; // everything is already asked on this connection
        }
        vf.asked_to += want;
        let c = vf.client.expect("a client connection");
        let vc = self.conns[c].video.as_mut().expect("video conn");
        vc.pending_gets += 1;
        vc.gets += 1;
        vc.asked += want;
        let srv = vc.server;
        self.conns[srv]
            .video
            .as_mut()
            .expect("video conn")
            .responses
            .push_back(want);
        self.flows[f].result.video.gets += 1;
        self.service(now, c);
    }

    /// Open the flow's next connection pair: the server's end waits for its SYN under the
    /// exact 4-tuple, the client connects.
    fn open_video_conn(&mut self, now: Time, f: FlowId) {
        let spec = self.flows[f].spec.clone();
        let vf = self.flows[f].video.as_mut().expect("video");
        let k = vf.opened;
        vf.opened += 1;
        let v = vf.v;
        // Connection k of the flow uses the client port + k (wrapping in the ephemeral range).
        let port = if k == 0 {
            spec.dst_port
        } else {
            (49152 + (spec.dst_port as u32 + k).wrapping_sub(49152) % 16384) as u16
        };
        let srv_addr = (self.nodes[spec.src].addr, spec.src_port);
        let cl_addr = (self.nodes[spec.dst].addr, port);
        let srv_ep = Endpoint::listen(
            srv_addr,
            self.iss_for(f, &format!("video/srv/{k}")),
            spec.tcp_sender.clone(),
        );
        let srv = self.new_conn(spec.src, f, Role::VideoServer, srv_ep, 0);
        // Found by its exact 4-tuple before the listeners (RFC 9293 §3.10.7.2).
        let key = conn_key(spec.src_port, cl_addr);
        self.conns[srv].key = Some(key);
        self.conns[srv].peer = Some(cl_addr);
        self.nodes[spec.src].host.register(srv, Some(key), false);
        self.conns[srv].video = Some(Box::default());
        let mut rcfg = spec.tcp_receiver.clone();
        if let Some(b) = v.rcv_buf {
            // The presets' figures are the phones' maximum advertised windows (dissertation
            // Fig. 15), so all of the buffer is window, whatever the stack profile's share.
            rcfg.rcv_buf_bytes = b;
            rcfg.rcv_win_ratio = 1.0;
        }
        let cl_ep = Endpoint::connect(
            now,
            cl_addr,
            srv_addr,
            self.iss_for(f, &format!("video/cl/{k}")),
            rcfg,
        );
        let cl = self.new_conn(spec.dst, f, Role::VideoClient, cl_ep, 0);
        self.conns[cl].video = Some(Box::new(VideoConn {
            server: srv,
            index: k,
            opened_at: now,
            ..Default::default()
        }));
        let flow = &mut self.flows[f];
        flow.sender = Some(srv);
        flow.receiver = Some(cl);
        flow.result.video.connections += 1;
        flow.video.as_mut().expect("video").client = Some(cl);
        self.service(now, cl);
    }

    /// The player leaves client connection `c`.
    fn abandon_video_conn(&mut self, now: Time, c: usize) {
        let f = self.conns[c].flow;
        let abandon = self.flows[f].video.as_ref().expect("video").v.abandon;
        let conn = &mut self.conns[c];
        let unread = conn.ep.readable();
        let vc = conn.video.as_mut().expect("video conn");
        let outstanding = vc.asked > vc.read + unread;
        vc.unread = unread;
        conn.abandoned = true;
        match abandon {
            Abandon::Silent => conn.ep.forget(),
            Abandon::Abort => conn.ep.abort(),
        }
        let st = &mut self.flows[f].result.video;
        st.unread_discarded_bytes += unread;
        st.abandoned += outstanding as u64;
        self.service(now, c);
    }

    /// A data segment of `payload` bytes arrived on connection `c`, which the player left.
    pub(crate) fn note_late(&mut self, c: usize, payload: u32) {
        let conn = &mut self.conns[c];
        if let Some(vc) = conn.video.as_mut() {
            vc.late += payload as u64;
        }
        let v = &mut self.flows[conn.flow].result.video;
        v.late_discarded_bytes += payload as u64;
        v.late_segments += 1;
    }

    /// One `video_gets` row per client connection of the video flows (see the module docs).
    pub(crate) fn flush_video_records(&mut self) {
        use rantcp_nf::SampleValue::{F64, I64};
        for conn in &self.conns {
            let (Role::VideoClient, Some(vc)) = (conn.role, conn.video.as_ref()) else {
                continue;
            };
            let received = vc.read + vc.unread + vc.late;
            self.fn_samples.push(
                "video_gets",
                &[
                    ("flow", I64(conn.flow as i64)),
                    ("conn", I64(vc.index as i64)),
                    ("opened_s", F64(vc.opened_at.as_secs_f64())),
                    ("gets", I64(vc.gets as i64)),
                    ("received_bytes", I64(received as i64)),
                    ("read_bytes", I64(vc.read as i64)),
                    ("discarded_bytes", I64((vc.unread + vc.late) as i64)),
                    ("abandoned", I64(conn.abandoned as i64)),
                ],
            );
        }
    }

    /// A blocked player looks at its buffer again.
    pub(crate) fn on_video_tick(&mut self, now: Time, f: FlowId) {
        let Some(vf) = self.flows[f].video.as_mut() else {
            return;
        };
        vf.tick_armed = false;
        if let Some(c) = vf.client {
            self.service(now, c);
        }
    }

    /// The application side of video connection `c` (called from `Sim::service`).
    pub(crate) fn video_app(&mut self, now: Time, c: usize) {
        let f = self.conns[c].flow;
        let conn = &mut self.conns[c];
        match conn.role {
            Role::VideoServer => {
                let vc = conn.video.as_mut().expect("video conn");
                conn.request_read += conn.ep.recv(u64::MAX);
                let req = self.flows[f]
                    .video
                    .as_ref()
                    .map_or(1, |v| v.v.request_bytes.max(1));
                while conn.request_read >= req {
                    let Some(n) = vc.responses.pop_front() else {
                        break;
                    };
                    conn.request_read -= req;
                    conn.to_write += n;
                }
                if conn.to_write > 0 && conn.ep.state() != State::Closed {
                    let n = conn.ep.send(conn.ep.send_buffer_free().min(conn.to_write));
                    conn.to_write -= n;
                }
            }
            Role::VideoClient => {
                if conn.abandoned {
                    return;
                }
                let vc = conn.video.as_mut().expect("video conn");
                let flow = &mut self.flows[f];
                let vf = flow.video.as_mut().expect("video");
                if vc.pending_gets > 0 && conn.ep.state() == State::Established {
                    conn.ep.send(vc.pending_gets * vf.v.request_bytes);
                    vc.pending_gets = 0;
                }
                let r = &mut flow.result;
                let limit = match vf.v.player {
                    None => u64::MAX,
                    Some(p) => {
                        let secs = now.saturating_since(vf.start).as_secs_f64();
                        let allowed = p.buffer_bytes + (p.rate_bps as f64 / 8.0 * secs) as u64;
                        allowed.saturating_sub(r.video.read_bytes)
                    }
                };
                let got = conn.ep.recv(limit);
                if got > 0 {
                    vc.read += got;
                    r.video.read_bytes += got;
                    r.delivered_bytes += got;
                    r.first_delivery.get_or_insert(now);
                    r.last_delivery = Some(now);
                }
                if conn.ep.readable() > 0 && vf.v.player.is_some() && !vf.tick_armed {
                    vf.tick_armed = true;
                    self.q
                        .schedule(now + PLAYER_TICK, Ev::VideoTick { flow: f as u32 });
                }
            }
            _ => {}
        }
    }
}
