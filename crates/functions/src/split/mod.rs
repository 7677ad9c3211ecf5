//! `split`: a split-TCP host on the path (dissertation ch. 5, §5.4–§5.6), I-TCP, ES-TCP or
//! AS-TCP. The host sits at a node every packet of the connection crosses (the PGW, §5.4:
//! "PGW would be a sufficient candidate") and terminates the connection: it consumes the
//! packets of the flows it splits and runs two TCP endpoints of its own, sans-IO —
//! TCP_WAN towards the far host (FH, the flow's data source), speaking with the mobile host's
//! address, and TCP_RAN towards the mobile host (MH), speaking with the FH's address.
//!
//! * **I-TCP** (Bakre & Badrinath, §5.2): TCP_WAN acknowledges what it receives; the FH may
//!   believe delivered bytes the MH never gets.
//! * **ES-TCP** (§5.4.1): TCP_WAN's acknowledgements pass through [`es::EsGate`] — the last
//!   2 bytes are withheld, freeze/unfreeze by zero window, the estimated RTO, and the final
//!   ACK only once the MH has everything: session-level end-to-end semantics.
//! * **AS-TCP** (§5.5.1): TCP_WAN acknowledges as a plain TCP and carries the MH's
//!   acknowledgement, mapped into TCP_WAN's sequence space, in the AS-TCP option
//!   ([`rantcp_wire::TcpOptions::as_tcp_ack`]); the FH frees its send buffer only up to it
//!   ([`fh::FhAgent`], attached at the FH). The option is negotiated on the SYN (§5.5.2
//!   packets #1, #2); against an FH that does not answer with it the host falls back to
//!   ES-TCP (§5.5: "depending on the capability of the FH, one may enable either").
//!
//! The host has one buffer of `buffer` bytes per connection, shared by both legs as in Figures
//! 35 and 41: a byte occupies it from its arrival from the FH until the MH acknowledges it.
//! TCP_WAN advertises min(`wan_window`, free buffer), where `wan_window` is by default the
//! flow's receive window, what the MH itself would advertise (§5.6.3: the buffer "includes the
//! maximum rwin size for the TCP_WAN connection"). Bytes from the MH (a download request) are
//! relayed to the FH at once.
//!
//! A SYN is held until the other leg is established, so the initiator's handshake completes
//! only when the far end accepted (§5.5.2: "The AH sends a TCP Sync ACK to the MH once it
//! receives the TCP Sync ACK from the FH").
//!
//! **Failure** (the semantics checker, issue 15): at `fail_at` the host loses every connection
//! and its buffered data; afterwards packets of the split flows are dropped (`after_fail =
//! "drop"`) or forwarded untouched, as when the path reroutes around it (`"pass"`).

pub mod check;
pub mod es;
pub mod fh;

use crate::{BuildEnv, FunctionConfig};
use es::EsGate;
use rantcp_config::reads::{FieldUse, Unreads};
use rantcp_config::units::{Bytes, Dur};
use rantcp_config::{check, ConfigError};
use rantcp_core::{Duration, Rng, Time};
use rantcp_nf::{
    Attach, Ctx, FlowKey, NetworkFunction, Outbox, Output, Points, RanView, SampleSink,
    SampleValue, Site, Verdict,
};
use rantcp_tcp::cc::CcKind;
use rantcp_tcp::{Endpoint, State, TcpConfig};
use rantcp_wire::{Ipv4Header, Packet, TcpFlags, TcpHeader, TcpOptions};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::net::Ipv4Addr;

/// Which split-TCP variant the host runs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum SplitMode {
    /// No split host.
    #[default]
    Off,
    /// Indirect TCP: two independent connections (breaks end-to-end semantics).
    ITcp,
    /// Enhanced split TCP (§5.4): withholds the last 2 bytes of acknowledgement.
    EsTcp,
    /// Advanced split TCP (§5.5): the MH's acknowledgement in a TCP option.
    AsTcp,
}

impl SplitMode {
    pub fn name(self) -> &'static str {
        match self {
            SplitMode::Off => "off",
            SplitMode::ITcp => "i-tcp",
            SplitMode::EsTcp => "es-tcp",
            SplitMode::AsTcp => "as-tcp",
        }
    }
}

/// What happens to the split flows' packets after the host failed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum AfterFail {
    /// The host is down and on the path: its packets are lost.
    #[default]
    Drop,
    /// The path reroutes around the host: packets pass untouched (the two ends then talk in
    /// sequence spaces they never agreed on).
    Pass,
}

/// `[functions.split]`. Off unless `mode` is set.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SplitConfig {
    /// "off", "i-tcp", "es-tcp" or "as-tcp".
    #[serde(default)]
    pub mode: SplitMode,
    /// The node the host sits at (every packet of the flow must cross it; the built-in radio
    /// scenarios call their PGW "core").
    #[serde(default = "d_at")]
    pub at: String,
    /// Only these flows (names from summary.json); absent: every TCP flow.
    #[serde(default)]
    pub flows: Option<Vec<String>>,
    /// Buffer per connection: TCP_WAN's receive window plus TCP_RAN's send queue (§5.6.3:
    /// 1 Mbyte).
    #[serde(default = "d_buffer")]
    pub buffer: Bytes,
    /// TCP_WAN's largest receive window (within `buffer`); absent: the flow's receive
    /// buffer, what the MH itself would advertise.
    #[serde(default)]
    pub wan_window: Option<Bytes>,
    /// TCP_RAN's congestion control: "newreno", "cubic", "highspeed", "bbr" or "none" (seed
    /// 002's close-coupled sender, paced by the MAC grants of `functions.close_coupled`);
    /// absent: the flow's own.
    #[serde(default)]
    pub ran_cc: Option<String>,
    /// AS-TCP: the far host supports the option (an agent is attached at it); false: the host
    /// falls back to ES-TCP.
    #[serde(default = "d_true")]
    pub far_host_option: bool,
    /// ES-TCP: the estimated RTO is this fraction of TCP_WAN's own RFC 6298 RTO (§5.4.1 rule 3:
    /// "smaller than the actual RTO at FH"). In (0, 1].
    #[serde(default = "d_rto_factor")]
    pub es_rto_factor: f64,
    /// AS-TCP: how long an MH ack waits for a TCP_WAN ACK to ride on before it is sent alone
    /// (§5.5.1 op. 2, "within a specified timer value"; Figure 43 #7 sends at once: 0s).
    #[serde(default = "d_zero")]
    pub mh_ack_wait: Dur,
    /// Kill the host at this time (the semantics checker); absent: never.
    #[serde(default)]
    pub fail_at: Option<Dur>,
    /// After the failure: "drop" the split flows' packets or "pass" them.
    #[serde(default)]
    pub after_fail: AfterFail,
}

/// The controllers TCP_RAN may run (radio-aware TCP needs the flow's own feedback).
const RAN_CC: [&str; 5] = ["newreno", "cubic", "highspeed", "bbr", "none"];

fn d_at() -> String {
    "core".into()
}
fn d_buffer() -> Bytes {
    Bytes(1 << 20)
}
fn d_true() -> bool {
    true
}
fn d_rto_factor() -> f64 {
    0.5
}
fn d_zero() -> Dur {
    Dur::ms(0)
}

impl Default for SplitConfig {
    fn default() -> Self {
        SplitConfig {
            mode: SplitMode::Off,
            at: d_at(),
            flows: None,
            buffer: d_buffer(),
            wan_window: None,
            ran_cc: None,
            far_host_option: true,
            es_rto_factor: d_rto_factor(),
            mh_ack_wait: d_zero(),
            fail_at: None,
            after_fail: AfterFail::Drop,
        }
    }
}

/// `mode` switches the host on; the rest is read when it is, some by one mode only.
impl FieldUse for SplitConfig {
    const ALWAYS: &'static [&'static str] = &["mode"];
    const CONDITIONAL: &'static [&'static str] = &[
        "at",
        "flows",
        "buffer",
        "wan_window",
        "ran_cc",
        "far_host_option",
        "es_rto_factor",
        "mh_ack_wait",
        "fail_at",
        "after_fail",
    ];
}

impl SplitConfig {
    /// The flows named in `flows`, each a TCP flow of the network (indices into `env.flows`).
    fn named_flows(
        &self,
        p: &str,
        env: &BuildEnv,
        names: &[String],
    ) -> Result<Vec<usize>, ConfigError> {
        let mut v = Vec::new();
        for n in names {
            let key = env.flow(&format!("{p}.flows"), n)?;
            check(
                key.proto == rantcp_wire::PROTO_TCP,
                &format!("{p}.flows"),
                format!("flow {n:?} is not TCP (allowed: TCP flows)"),
            )?;
            v.push(env.flows.iter().position(|f| f.0 == *n).expect("found"));
        }
        Ok(v)
    }
    fn check_fail_at(&self, p: &str, env: &BuildEnv) -> Result<Option<Time>, ConfigError> {
        let fail_at = self.fail_at.map(|d| Time::ZERO + d.d());
        if let Some(t) = fail_at {
            check(
                t < env.end,
                &format!("{p}.fail_at"),
                "must be before the end of the run",
            )?;
        }
        Ok(fail_at)
    }
}

impl FunctionConfig for SplitConfig {
    const KIND: &'static str = "split";

    fn enabled(&self) -> bool {
        self.mode != SplitMode::Off
    }

    fn off_because(&self, p: &str) -> String {
        format!("{p}.mode = \"off\"")
    }

    fn unread(&self, p: &str, out: &mut Unreads) {
        out.unless(self.enabled(), p, Self::CONDITIONAL, || self.off_because(p));
        if !self.enabled() {
            return;
        }
        let because = || format!("{p}.mode = {:?}", self.mode.name());
        // `build` attaches the far-host agent for AS-TCP only; the host's ES gate runs for
        // ES-TCP and AS-TCP's fallback, the MH-ack timer for AS-TCP (`SplitHost`).
        out.unless(
            self.mode == SplitMode::AsTcp,
            p,
            &["far_host_option", "mh_ack_wait"],
            because,
        );
        out.unless(self.mode != SplitMode::ITcp, p, &["es_rto_factor"], because);
        out.unless(self.fail_at.is_some(), p, &["after_fail"], || {
            format!("{p}.fail_at is absent (the host never fails)")
        });
    }

    fn off_needs_network(&self) -> bool {
        self.at != d_at() || self.flows.is_some() || self.fail_at.is_some()
    }

    fn check_off(&self, p: &str, env: &BuildEnv) -> Result<(), ConfigError> {
        if self.at != d_at() {
            env.node(&format!("{p}.at"), &self.at)?;
        }
        if let Some(names) = &self.flows {
            self.named_flows(p, env, names)?;
        }
        self.check_fail_at(p, env).map(|_| ())
    }

    fn validate(&self, p: &str) -> Result<(), ConfigError> {
        check(
            (4096..=(1u64 << 30)).contains(&self.buffer.0),
            &format!("{p}.buffer"),
            "must be between 4 KB and 1 GB",
        )?;
        check(
            self.wan_window
                .is_none_or(|w| w.0 >= 1024 && w.0 <= self.buffer.0),
            &format!("{p}.wan_window"),
            "must be between 1 KB and buffer",
        )?;
        check(
            self.ran_cc.as_deref().is_none_or(|n| RAN_CC.contains(&n)),
            &format!("{p}.ran_cc"),
            format!("must be one of {}", RAN_CC.join(", ")),
        )?;
        check(
            self.es_rto_factor > 0.0 && self.es_rto_factor <= 1.0,
            &format!("{p}.es_rto_factor"),
            "must be in (0, 1]",
        )?;
        check(
            self.mh_ack_wait.d() <= Duration::from_secs(1),
            &format!("{p}.mh_ack_wait"),
            "must be between 0s and 1s",
        )?;
        Ok(())
    }

    fn build(&self, p: &str, env: &BuildEnv) -> Result<Vec<Attach>, ConfigError> {
        if !self.enabled() {
            return Ok(vec![]);
        }
        let at = env.node(&format!("{p}.at"), &self.at)?;
        let picked: Vec<usize> = match &self.flows {
            Some(names) => self.named_flows(p, env, names)?,
            None => (0..env.flows.len())
                .filter(|&k| env.flows[k].1.proto == rantcp_wire::PROTO_TCP)
                .collect(),
        };
        check(
            !picked.is_empty(),
            &format!("{p}.flows"),
            "no TCP flow to split (allowed: names of TCP flows)",
        )?;
        let fail_at = self.check_fail_at(p, env)?;
        let mut flows = Vec::new();
        let mut agents: Vec<Attach> = Vec::new();
        for &k in &picked {
            let (name, key) = &env.flows[k];
            let (snd, rcv) = env
                .flow_tcp
                .get(k)
                .cloned()
                .unwrap_or((TcpConfig::default(), TcpConfig::default()));
            // §5.6.3: the buffer "includes the maximum rwin size for the TCP_WAN connection":
            // TCP_WAN advertises up to the flow's receive window (what the MH would), never
            // more than the buffer has free; TCP_RAN's send queue is the whole buffer.
            let wan_window = self
                .wan_window
                .map_or(rcv.rcv_buf_bytes, |b| b.0)
                .min(self.buffer.0);
            flows.push(SplitFlow {
                name: name.clone(),
                key: *key,
                wan_tcp: TcpConfig {
                    rcv_buf_bytes: wan_window,
                    ..rcv
                },
                ran_tcp: TcpConfig {
                    snd_buf_bytes: self.buffer.0,
                    cc: self
                        .ran_cc
                        .as_deref()
                        .and_then(CcKind::from_name)
                        .unwrap_or(snd.cc),
                    ..snd
                },
            });
            if self.mode == SplitMode::AsTcp && self.far_host_option {
                let fh = env.node_of(key.src).ok_or_else(|| {
                    ConfigError::new(
                        format!("{p}.far_host_option"),
                        format!("flow {name:?}'s source is no node of this network"),
                    )
                })?;
                match agents.iter_mut().find(|a| a.site == Site::Node(fh)) {
                    Some(_) => {}
                    None => agents.push(Attach {
                        site: Site::Node(fh),
                        function: Box::new(fh::FhAgent::new()),
                    }),
                }
            }
        }
        let params = SplitParams {
            mode: self.mode,
            es_rto_factor: self.es_rto_factor,
            mh_ack_wait: self.mh_ack_wait.d(),
            fail_at,
            after_fail: self.after_fail,
        };
        let host = SplitHost::new(params, flows, env.rng(Self::KIND, &self.at));
        let mut out = vec![Attach {
            site: Site::Node(at),
            function: Box::new(host),
        }];
        out.extend(agents);
        Ok(out)
    }
}

/// A flow the host splits: its name, 5-tuple in the data direction (source = FH) and the two
/// legs' TCP settings.
#[derive(Clone, Debug)]
pub struct SplitFlow {
    pub name: String,
    pub key: FlowKey,
    /// TCP_WAN (the host receives the FH's data as the MH would).
    pub wan_tcp: TcpConfig,
    /// TCP_RAN (the host sends to the MH as the FH would).
    pub ran_tcp: TcpConfig,
}

/// The host's settings (what [`SplitConfig`] resolves to).
#[derive(Clone, Copy, Debug)]
pub struct SplitParams {
    pub mode: SplitMode,
    pub es_rto_factor: f64,
    pub mh_ack_wait: Duration,
    pub fail_at: Option<Time>,
    pub after_fail: AfterFail,
}

/// Per-connection figures, kept after the connection (or the host) is gone.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct ConnFigures {
    /// Data bytes received in order from the FH.
    pub from_fh: u64,
    /// Data bytes the MH acknowledged on TCP_RAN.
    pub mh_acked: u64,
    /// Highest data position acknowledged to the FH on TCP_WAN (what the FH may free under
    /// I-TCP and ES-TCP).
    pub acked_to_fh: u64,
    /// Highest MH ack sent to the FH in the AS-TCP option, as data bytes.
    pub mh_ack_to_fh: u64,
    /// Largest buffer occupancy seen, bytes.
    pub max_buffer: u64,
    /// AS-TCP negotiated with the FH (false under AS-TCP: fell back to ES-TCP).
    pub as_negotiated: bool,
    /// Data bytes the host held when it failed: received from the FH, not yet acknowledged
    /// by the MH (some may still reach the MH, already on their way).
    pub unacked_at_failure: u64,
}

/// One split connection: the two legs and the relay between them.
struct Conn {
    flow: usize,
    wan: Endpoint,
    ran: Endpoint,
    wan_timer: Option<Time>,
    ran_timer: Option<Time>,
    /// The initiator's SYN, held until the other leg is established.
    held_syn: Option<Packet>,
    /// The initiator is the MH (a download) rather than the FH (a push).
    mh_initiated: bool,
    /// The FH's initial sequence number (TCP_WAN's IRS).
    wan_irs: Option<u32>,
    /// Bytes read from TCP_WAN (reading opens its window).
    wan_read: u64,
    /// How far TCP_WAN is read beyond the MH's acknowledgement: buffer − wan_window.
    ahead: u64,
    /// Bytes handed from TCP_WAN to TCP_RAN.
    moved: u64,
    /// The FH's FIN was received in order.
    fh_fin: bool,
    ran_close_called: bool,
    wan_close_called: bool,
    /// ES-TCP (or AS-TCP's fallback).
    gate: Option<EsGate>,
    /// AS-TCP negotiated.
    as_on: bool,
    /// AS-TCP: the FH offered the option in its SYN (it initiated).
    fh_offered: bool,
    /// AS-TCP: an MH ack waits to be sent, since this time.
    mh_ack_due: Option<Time>,
    /// TCP_RAN's initial sequence number (the MH's acknowledgements count from it).
    ran_iss: u32,
    /// AS-TCP on TCP_RAN too: the next hop towards the MH is another AS-TCP host (Figure 44),
    /// whose MH ack, not its regular acknowledgement, is what the MH has.
    ran_as: bool,
    /// The MH side offered the option on its SYN.
    mh_offered: bool,
    /// The MH ack the next AS-TCP host reported, data bytes.
    downstream_mh_ack: u64,
    /// The last acknowledgement and window from the MH side (AS-TCP duplicate rule).
    ran_last: (u32, u16),
    fig: ConnFigures,
}

/// The split host. See the module docs.
pub struct SplitHost {
    p: SplitParams,
    flows: Vec<SplitFlow>,
    conns: Vec<Conn>,
    /// Figures of connections whose state was lost or that finished, by flow index.
    done: Vec<(usize, ConnFigures)>,
    rng: Rng,
    out: Outbox,
    failed: bool,
    counters: Counters,
}

#[derive(Clone, Copy, Debug, Default)]
struct Counters {
    split: u64,
    consumed: u64,
    dropped_after_fail: u64,
    es_freezes_window: u64,
    es_freezes_timer: u64,
    es_freezes_retransmit: u64,
    es_suppressed: u64,
    es_releases: u64,
    as_options_sent: u64,
    as_fallbacks: u64,
}

/// Which side a packet of a split flow comes from.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Side {
    Fh,
    Mh,
}

impl SplitHost {
    pub fn new(p: SplitParams, flows: Vec<SplitFlow>, rng: Rng) -> Self {
        SplitHost {
            p,
            flows,
            conns: Vec::new(),
            done: Vec::new(),
            rng,
            out: Outbox::default(),
            failed: false,
            counters: Counters::default(),
        }
    }

    /// The figures of every connection so far (live ones as of now), by flow name.
    pub fn figures(&self) -> Vec<(String, ConnFigures)> {
        let mut v: Vec<(String, ConnFigures)> = self
            .done
            .iter()
            .map(|(f, c)| (self.flows[*f].name.clone(), *c))
            .collect();
        v.extend(
            self.conns
                .iter()
                .map(|c| (self.flows[c.flow].name.clone(), c.fig)),
        );
        v
    }

    /// The split flow and side of a TCP packet, if it belongs to one.
    fn classify(&self, p: &Packet) -> Option<(usize, Side)> {
        let t = p.as_tcp()?;
        self.flows
            .iter()
            .position(|f| {
                let k = f.key;
                (p.ip.src == k.src
                    && t.src_port == k.src_port
                    && p.ip.dst == k.dst
                    && t.dst_port == k.dst_port)
                    || (p.ip.src == k.dst
                        && t.src_port == k.dst_port
                        && p.ip.dst == k.src
                        && t.dst_port == k.src_port)
            })
            .map(|f| {
                let from = if p.ip.src == self.flows[f].key.src {
                    Side::Fh
                } else {
                    Side::Mh
                };
                (f, from)
            })
    }

    fn conn_of(&self, flow: usize) -> Option<usize> {
        self.conns.iter().position(|c| c.flow == flow)
    }

    /// A SYN of flow `flow` from `from` and no connection: open both legs.
    fn open(&mut self, now: Time, flow: usize, from: Side, syn: &Packet) -> usize {
        let f = &self.flows[flow];
        let fh = (f.key.src, f.key.src_port);
        let mh = (f.key.dst, f.key.dst_port);
        let wan_iss = self.rng.next_u64() as u32;
        let ran_iss = self.rng.next_u64() as u32;
        let (wan, ran) = match from {
            // The MH opens (download): TCP_WAN opens towards the FH, TCP_RAN answers the MH.
            Side::Mh => (
                Endpoint::connect(now, mh, fh, wan_iss, f.wan_tcp.clone()),
                Endpoint::listen(fh, ran_iss, f.ran_tcp.clone()),
            ),
            // The FH opens (push): TCP_RAN opens towards the MH, TCP_WAN answers the FH.
            Side::Fh => (
                Endpoint::listen(mh, wan_iss, f.wan_tcp.clone()),
                Endpoint::connect(now, fh, mh, ran_iss, f.ran_tcp.clone()),
            ),
        };
        let gate = match self.p.mode {
            SplitMode::EsTcp | SplitMode::AsTcp => Some(EsGate::new(Duration::from_millis(500))),
            _ => None,
        };
        let offered = syn.as_tcp().is_some_and(|t| t.options.as_tcp_ack.is_some());
        let fh_offered = from == Side::Fh && offered;
        let mh_offered = from == Side::Mh && offered;
        self.conns.push(Conn {
            flow,
            wan,
            ran,
            wan_timer: None,
            ran_timer: None,
            held_syn: Some(*syn),
            mh_initiated: from == Side::Mh,
            wan_irs: None,
            wan_read: 0,
            ahead: f
                .ran_tcp
                .snd_buf_bytes
                .saturating_sub(f.wan_tcp.rcv_buf_bytes),
            moved: 0,
            fh_fin: false,
            ran_close_called: false,
            wan_close_called: false,
            gate,
            as_on: false,
            fh_offered,
            mh_ack_due: None,
            ran_iss,
            ran_as: false,
            mh_offered,
            downstream_mh_ack: 0,
            ran_last: (0, 0),
            fig: ConnFigures::default(),
        });
        self.counters.split += 1;
        self.conns.len() - 1
    }

    /// Lose every connection and its data (the semantics checker's failure).
    fn fail(&mut self) {
        self.failed = true;
        for c in self.conns.drain(..) {
            let mut fig = c.fig;
            fig.unacked_at_failure = fig.from_fh.saturating_sub(fig.mh_acked);
            self.done.push((c.flow, fig));
        }
        self.out = Outbox::default();
    }

    fn check_fail(&mut self, now: Time) {
        if !self.failed && self.p.fail_at.is_some_and(|t| now >= t) {
            self.fail();
        }
    }
}

impl Conn {
    /// In-order data bytes TCP_WAN has received.
    fn wan_in_order(&self) -> u64 {
        self.wan_read + self.wan.readable()
    }
    /// Data bytes the MH acknowledged.
    fn mh_acked(&self) -> u64 {
        self.ran.bytes_queued() - self.ran.send_backlog()
    }
    /// Data bytes the MH itself is known to have: its acknowledgement, or, behind another
    /// AS-TCP host, that host's MH ack.
    fn mh_confirmed(&self) -> u64 {
        if self.ran_as {
            self.downstream_mh_ack.min(self.mh_acked())
        } else {
            self.mh_acked()
        }
    }
    /// TCP_WAN sequence number of data position `pos` (0 = the FH's first data byte).
    fn wan_seq(&self, pos: u64) -> u32 {
        self.wan_irs
            .unwrap_or(0)
            .wrapping_add(1)
            .wrapping_add(pos as u32)
    }
    fn wan_pos(&self, seq: u32) -> i64 {
        seq.wrapping_sub(self.wan_irs.unwrap_or(0).wrapping_add(1)) as i32 as i64
    }
    fn established(ep: &Endpoint) -> bool {
        !matches!(
            ep.state(),
            State::Listen | State::SynSent | State::SynReceived | State::Closed
        )
    }
}

impl SplitHost {
    /// A packet of connection `ci` from `from`: into its leg, then move data and answer.
    fn input(&mut self, now: Time, ci: usize, from: Side, p: &Packet) {
        let c = &mut self.conns[ci];
        let t = *p.as_tcp().expect("split flows are TCP");
        match from {
            Side::Fh => {
                if t.flags.syn() {
                    c.wan_irs = Some(t.seq);
                    if self.p.mode == SplitMode::AsTcp && t.flags.ack() {
                        // §5.5.2 #2: the FH answers the request with the option, or cannot.
                        c.as_on = t.options.as_tcp_ack.is_some();
                        if c.as_on {
                            c.gate = None;
                            c.fig.as_negotiated = true;
                        } else {
                            self.counters.as_fallbacks += 1;
                        }
                    }
                }
                let before = c.wan_in_order();
                let state_before = c.wan.state();
                c.wan.handle_segment(now, &p.ip, &t, p.payload_len);
                let new_bytes = c.wan_in_order() - before;
                let fin_now = t.flags.fin()
                    && !c.fh_fin
                    && state_before != c.wan.state()
                    && matches!(
                        c.wan.state(),
                        State::CloseWait | State::Closing | State::TimeWait | State::LastAck
                    );
                c.fh_fin |= fin_now;
                let end = c.wan_pos(t.seq) + p.payload_len as i64;
                let rtx = p.payload_len > 0 && new_bytes == 0 && end <= before as i64
                    || (t.flags.fin() && !fin_now && c.fh_fin);
                if let Some(g) = c.gate.as_mut() {
                    if !t.flags.syn() {
                        g.on_fh_segment(new_bytes, fin_now, rtx);
                    }
                }
                c.fig.from_fh = c.wan_in_order();
            }
            Side::Mh => {
                let confirmed_before = c.mh_confirmed();
                let mut feed = true;
                if self.p.mode == SplitMode::AsTcp {
                    if t.flags.syn() && t.flags.ack() {
                        // Figure 44: the next hop is an AS-TCP host that answered our request.
                        c.ran_as = t.options.as_tcp_ack.is_some();
                    } else if c.ran_as && t.flags.ack() {
                        let repeat = (t.ack, t.window) == c.ran_last;
                        c.ran_last = (t.ack, t.window);
                        if let Some(v) = t.options.as_tcp_ack {
                            let d = v.wrapping_sub(c.ran_iss.wrapping_add(1)) as i32;
                            let d = d.max(0) as u64;
                            let new = d > c.downstream_mh_ack;
                            c.downstream_mh_ack = c.downstream_mh_ack.max(d);
                            // §5.5.1 FH op. 2, as the FH agent: only the MH ack is new, so it is
                            // not a duplicate ACK for TCP_RAN.
                            feed = !(repeat && new && p.payload_len == 0 && !t.flags.fin());
                        }
                    }
                }
                if feed {
                    c.ran.handle_segment(now, &p.ip, &t, p.payload_len);
                }
                if c.mh_confirmed() > confirmed_before && self.p.mode == SplitMode::AsTcp {
                    // §5.5.1: a non-duplicate MH ack goes to the FH.
                    c.mh_ack_due.get_or_insert(now);
                }
            }
        }
        // A held SYN goes in once the other leg is established.
        if let Some(syn) = c.held_syn {
            let other_up = if c.mh_initiated {
                Conn::established(&c.wan)
            } else {
                Conn::established(&c.ran)
            };
            if other_up {
                c.held_syn = None;
                let st = syn.as_tcp().expect("tcp");
                if c.mh_initiated {
                    c.ran.handle_segment(now, &syn.ip, st, syn.payload_len);
                } else {
                    c.wan_irs = Some(st.seq);
                    c.wan.handle_segment(now, &syn.ip, st, syn.payload_len);
                }
            }
        }
        self.pump(now, ci);
    }

    /// Relay data between the legs, apply the mode to TCP_WAN's ACKs, emit both legs' output.
    fn pump(&mut self, now: Time, ci: usize) {
        let factor = self.p.es_rto_factor;
        let wait = self.p.mh_ack_wait;
        let c = &mut self.conns[ci];
        let acked = c.mh_acked();
        c.fig.mh_acked = acked;
        // AS-TCP (§5.5.1 op. 2): an MH ack with no TCP_WAN ACK to ride on within the wait goes
        // on an ACK of its own, with TCP_WAN's acknowledgement and window as they stand
        // (Figure 43 #7), before the window opens (#8).
        if c.as_on && c.mh_ack_due.is_some_and(|t| now >= t + wait) {
            c.wan.ack_now();
            self.drain_wan(now, ci);
        }
        let c = &mut self.conns[ci];
        // Downstream (Figures 35, 41): every byte TCP_WAN received is in TCP_RAN's send queue
        // (the buffer is one); TCP_WAN is read, which opens its window, up to `buffer −
        // wan_window` bytes beyond what the MH acknowledged, so that it advertises
        // min(wan_window, buffer − occupancy).
        let avail = c.wan_in_order() - c.moved;
        if avail > 0 && Conn::established(&c.ran) {
            c.moved += c.ran.send(avail);
        }
        let target = c.wan_in_order().min(acked + c.ahead);
        if target > c.wan_read {
            let n = c.wan.recv(target - c.wan_read);
            c.wan_read += n;
        }
        // Upstream (a request from the MH): relayed at once.
        let up = c.ran.readable();
        if up > 0 && Conn::established(&c.wan) {
            let n = c.wan.send(up);
            c.ran.recv(n);
        }
        let all_delivered = acked == c.wan_in_order() && c.moved == acked;
        // Closing follows the data: TCP_RAN closes once it holds every byte of the FH's (FIN
        // after the data); TCP_WAN once the MH has them all (§5.5.2 #13, #9"–#11"). The MH's
        // FIN closes TCP_WAN after its data.
        if c.wan.peer_closed() && !c.ran_close_called {
            c.ran_close_called = true;
            c.ran.close();
        }
        if c.wan.peer_closed() && all_delivered && c.ran.readable() == 0 && !c.wan_close_called {
            c.wan_close_called = true;
            c.wan.close();
        }
        if c.ran.peer_closed() && c.ran.readable() == 0 && !c.wan_close_called {
            c.wan_close_called = true;
            c.wan.close();
        }
        let occupancy = c.wan_in_order() - acked;
        c.fig.max_buffer = c.fig.max_buffer.max(occupancy);
        if let Some(g) = c.gate.as_mut() {
            // Estimated RTO (rule 3): a fraction of TCP_WAN's RFC 6298 RTO.
            let rto = c.wan.info().rto;
            g.set_est_rto(Duration::from_nanos(
                (rto.as_nanos() as f64 * factor) as u64,
            ));
            if g.on_mh_progress(all_delivered) {
                // Rule 5: release the reserved bytes now.
                c.wan.ack_now();
            }
        }
        self.drain_wan(now, ci);
        let as_mode = self.p.mode == SplitMode::AsTcp;
        let c = &mut self.conns[ci];
        while let Some(mut p) = c.ran.poll_transmit(now) {
            let t = p.as_tcp_mut().expect("tcp");
            if as_mode && t.flags.syn() && (!t.flags.ack() || c.mh_offered) {
                // Towards the MH too: a further AS-TCP host on the way answers (Figure 44);
                // a plain MH ignores the option (RFC 9293 §3.2).
                t.options.as_tcp_ack = Some(0);
                c.ran_as |= t.flags.ack();
            }
            self.out.emit(p);
        }
        c.wan_timer = c.wan.poll_timeout();
        c.ran_timer = c.ran.poll_timeout();
    }

    /// Emit TCP_WAN's output through the mode.
    fn drain_wan(&mut self, now: Time, ci: usize) {
        let mode = self.p.mode;
        let c = &mut self.conns[ci];
        while let Some(mut p) = c.wan.poll_transmit(now) {
            if Self::wan_out(now, c, &mut p, mode, &mut self.counters) {
                self.out.emit(p);
            }
        }
        c.wan_timer = c.wan.poll_timeout();
    }

    /// Apply the mode to a TCP_WAN packet; false: do not send it.
    fn wan_out(now: Time, c: &mut Conn, p: &mut Packet, mode: SplitMode, k: &mut Counters) -> bool {
        let irs_known = c.wan_irs.is_some();
        let plen = p.payload_len;
        let t = p.as_tcp_mut().expect("tcp");
        if t.flags.syn() {
            // §5.5.2 #1: the request (TCP_WAN opens) or the answer to an FH's offer.
            if mode == SplitMode::AsTcp && (!t.flags.ack() || c.fh_offered) {
                t.options.as_tcp_ack = Some(0);
                if t.flags.ack() {
                    c.as_on = true;
                    c.gate = None;
                    c.fig.as_negotiated = true;
                }
            }
            return true;
        }
        if !t.flags.ack() || !irs_known {
            return true;
        }
        let irs1 = c.wan_irs.expect("known").wrapping_add(1);
        if let Some(g) = c.gate.as_mut() {
            match g.rewrite(now, t.window as u64) {
                Some(a) => {
                    t.ack = irs1.wrapping_add(a.ack as u32);
                    t.window = a.window as u16;
                }
                None if plen == 0 && !t.flags.fin() => {
                    k.es_suppressed += 1;
                    return false;
                }
                None => t.ack = irs1.wrapping_add(g.acked() as u32),
            }
        }
        let pos = c.wan_pos(t.ack).max(0) as u64;
        c.fig.acked_to_fh = c.fig.acked_to_fh.max(pos.min(c.wan_in_order()));
        if c.as_on && c.mh_ack_due.is_some() {
            let acked = c.mh_confirmed();
            // The MH's acknowledgement of the FIN TCP_RAN relayed covers the FH's FIN.
            let fin_acked =
                c.fh_fin && c.ran_close_called && c.ran.all_acked() && acked == c.mh_acked();
            t.options.as_tcp_ack = Some(c.wan_seq(acked).wrapping_add(fin_acked as u32));
            c.fig.mh_ack_to_fh = c.fig.mh_ack_to_fh.max(acked);
            c.mh_ack_due = None;
            k.as_options_sent += 1;
        }
        true
    }

    fn timers(&self) -> Option<Time> {
        let mut t: Option<Time> = None;
        let mut take = |x: Option<Time>| {
            if let Some(x) = x {
                t = Some(t.map_or(x, |t| t.min(x)));
            }
        };
        for c in &self.conns {
            take(c.wan_timer);
            take(c.ran_timer);
            take(c.gate.as_ref().and_then(|g| g.poll_timeout()));
            take(c.mh_ack_due.map(|d| d + self.p.mh_ack_wait));
        }
        if !self.failed {
            take(self.p.fail_at);
        }
        t
    }
}

impl NetworkFunction for SplitHost {
    fn kind(&self) -> &'static str {
        SplitConfig::KIND
    }
    fn points(&self) -> Points {
        Points::FORWARD
    }
    fn handle_packet(&mut self, cx: &Ctx, p: &mut Packet) -> Verdict {
        self.check_fail(cx.now);
        let Some((flow, from)) = self.classify(p) else {
            return Verdict::Pass;
        };
        if self.failed {
            return match self.p.after_fail {
                AfterFail::Drop => {
                    self.counters.dropped_after_fail += 1;
                    Verdict::Drop("split host down")
                }
                AfterFail::Pass => Verdict::Pass,
            };
        }
        let t = p.as_tcp().expect("classified TCP");
        let ci = match self.conn_of(flow) {
            Some(ci) => ci,
            None if t.flags.syn() && !t.flags.ack() => self.open(cx.now, flow, from, p),
            // Not a connection the host knows (it started before the host): leave it alone.
            None => return Verdict::Pass,
        };
        self.counters.consumed += 1;
        if self.conns[ci].held_syn.is_some() && t.flags.syn() && !t.flags.ack() {
            // The initiator repeats its SYN while the other leg opens: keep the latest.
            if (from == Side::Mh) == self.conns[ci].mh_initiated {
                self.conns[ci].held_syn = Some(*p);
                self.pump(cx.now, ci);
                return Verdict::Consume;
            }
        }
        self.input(cx.now, ci, from, p);
        Verdict::Consume
    }
    fn poll_timeout(&self) -> Option<Time> {
        self.timers()
    }
    fn handle_timeout(&mut self, now: Time, _ran: Option<&dyn RanView>) {
        self.check_fail(now);
        for ci in 0..self.conns.len() {
            let c = &mut self.conns[ci];
            let mut fire = false;
            if c.wan_timer.is_some_and(|t| t <= now) {
                c.wan.handle_timeout(now);
                fire = true;
            }
            if c.ran_timer.is_some_and(|t| t <= now) {
                c.ran.handle_timeout(now);
                fire = true;
            }
            if let Some(g) = c.gate.as_mut() {
                if g.poll_timeout().is_some_and(|t| t <= now) && g.handle_timeout(now) {
                    // Rule 3: freeze the FH with an ACK of 1 reserved byte and rwin 0.
                    c.wan.ack_now();
                    fire = true;
                }
            }
            if fire || c.mh_ack_due.is_some_and(|d| d + self.p.mh_ack_wait <= now) {
                self.pump(now, ci);
            }
        }
    }
    fn poll_output(&mut self) -> Option<Output> {
        self.out.pop()
    }
    fn sample(&mut self, now: Time, _ran: Option<&dyn RanView>, out: &mut SampleSink) {
        for c in &self.conns {
            let ri = c.ran.info();
            out.push(
                "split",
                &[
                    ("time_s", SampleValue::F64(now.as_secs_f64())),
                    ("flow_index", SampleValue::I64(c.flow as i64)),
                    (
                        "wan_received_bytes",
                        SampleValue::I64(c.wan_in_order() as i64),
                    ),
                    (
                        "wan_acked_to_fh_bytes",
                        SampleValue::I64(c.fig.acked_to_fh as i64),
                    ),
                    (
                        "mh_ack_to_fh_bytes",
                        SampleValue::I64(c.fig.mh_ack_to_fh as i64),
                    ),
                    ("ran_sent_bytes", SampleValue::I64(c.moved as i64)),
                    ("ran_acked_bytes", SampleValue::I64(c.mh_acked() as i64)),
                    ("ran_cwnd_bytes", SampleValue::I64(ri.cwnd as i64)),
                    (
                        "ran_in_flight_bytes",
                        SampleValue::I64(ri.bytes_in_flight as i64),
                    ),
                    (
                        "buffer_bytes",
                        SampleValue::I64((c.wan_in_order() - c.mh_acked()) as i64),
                    ),
                    ("wan_rwin_bytes", SampleValue::I64(c.wan.info().rwin as i64)),
                ],
            );
        }
    }
    fn report(&self) -> serde_json::Value {
        let k = &self.counters;
        let (mut fw, mut ft, mut fr, mut su, mut re) = (
            k.es_freezes_window,
            k.es_freezes_timer,
            k.es_freezes_retransmit,
            k.es_suppressed,
            k.es_releases,
        );
        for c in &self.conns {
            if let Some(g) = &c.gate {
                fw += g.freezes_window;
                ft += g.freezes_timer;
                fr += g.freezes_retransmit;
                su += g.suppressed;
                re += g.releases;
            }
        }
        let conns: Vec<serde_json::Value> = self
            .figures()
            .into_iter()
            .map(|(name, f)| {
                let mut v = serde_json::to_value(f).expect("plain struct");
                v["flow"] = name.into();
                v
            })
            .collect();
        serde_json::json!({
            "mode": self.p.mode.name(),
            "connections_split": k.split,
            "packets_consumed": k.consumed,
            "failed": self.failed,
            "dropped_after_fail": k.dropped_after_fail,
            "es_freezes_window": fw,
            "es_freezes_timer": ft,
            "es_freezes_retransmit": fr,
            "es_acks_suppressed": su,
            "es_releases": re,
            "as_options_sent": k.as_options_sent,
            "as_fallbacks": k.as_fallbacks,
            "connections": conns,
        })
    }
}

/// A TCP segment from `src` to `dst` without options (the stub hosts of the split tests write
/// theirs with it).
pub fn tcp_packet(
    src: (Ipv4Addr, u16),
    dst: (Ipv4Addr, u16),
    seq: u32,
    ack: u32,
    flags: TcpFlags,
    window: u16,
    len: u32,
) -> Packet {
    Packet::tcp(
        Ipv4Header::new(src.0, dst.0),
        TcpHeader {
            src_port: src.1,
            dst_port: dst.1,
            seq,
            ack,
            flags,
            window,
            urgent: 0,
            options: TcpOptions::default(),
        },
        len,
    )
}
