//! The adaptive-video client (`FlowKind::Video`, dissertation §4.2–§4.4) over one wired link:
//! GETs over new connections leave data in flight that the client discards and answers with
//! RSTs; responses that complete before the next GET waste nothing; application flow control
//! bounds what the player reads; the same seed gives the same run.
//!
//! ```text
//!  server --(10 Mbit/s, 20 ms)-- client
//! ```

use rantcp_core::{Duration, Time};
use rantcp_net::{Abandon, Arrivals, FlowKind, FlowSpec, Player, Video, VideoStats};
use rantcp_tcp::TcpConfig;
use std::net::Ipv4Addr;

mod support;

const RATE: u64 = 10_000_000;

fn video(per_get: Option<u64>, new_connection: f64) -> Video {
    Video {
        video_bytes: 1 << 30,
        gets: Arrivals::Periodic {
            interval: Duration::from_secs(1),
        },
        bytes_per_get: per_get,
        new_connection,
        request_bytes: 400,
        player: None,
        abandon: Abandon::Silent,
        rcv_buf: Some(130_000),
    }
}

fn run(seed: u64, v: Video, millis: u64) -> (VideoStats, u64) {
    let (mut sim, s, c) = support::pair(
        seed,
        ("server", "client"),
        Ipv4Addr::new(10, 1, 0, 1),
        support::link(RATE, 20),
    );
    let f = sim.add_flow(FlowSpec {
        name: "video".into(),
        kind: FlowKind::Video(v),
        src: s,
        dst: c,
        src_port: 80,
        dst_port: 49152,
        start: Time::ZERO,
        tcp_sender: TcpConfig::default(),
        tcp_receiver: TcpConfig::default(),
    });
    sim.run_until(Time::from_millis(millis)).expect("run");
    (sim.flow_result(f).video, sim.resets_sent())
}

#[test]
fn ios_like_new_connection_per_get_discards_what_is_in_flight_and_answers_it_with_rsts() {
    let (st, host_resets) = run(1, video(None, 1.0), 5500);
    // GETs at 0, 1, …, 5 s, each on its own connection; the five left behind were all still
    // sending the rest of the video.
    assert_eq!((st.gets, st.connections, st.abandoned), (6, 6, 5));
    assert!(
        st.late_segments > 0 && st.late_discarded_bytes > 0,
        "{st:?}"
    );
    // Each late data segment draws a RST from the client's closed connection (RFC 9293
    // §3.10.7.1); none of them comes from the host's no-connection path.
    assert_eq!(st.rsts_sent, st.late_segments);
    assert_eq!(host_resets, 0);
    // What was in flight is at most one receive window (130 kB) per abandoned connection, and
    // at least a little of the 100 kB path BDP.
    let late_per_conn = st.late_discarded_bytes / st.abandoned;
    assert!(
        late_per_conn > 10_000 && late_per_conn <= 130_000,
        "{late_per_conn}"
    );
    // Reading at once, nothing is left unread; the link carried ~5.5 s × 10 Mbit/s at most.
    assert_eq!(st.unread_discarded_bytes, 0);
    assert!(st.received_bytes() <= RATE / 8 * 55 / 10, "{st:?}");
    assert!(
        st.discard_ratio() > 0.0 && st.discard_ratio() < 0.2,
        "{}",
        st.discard_ratio()
    );
}

#[test]
fn responses_that_finish_before_the_next_get_waste_nothing() {
    // 200 kB per GET takes ~0.2 s of the 1 s between GETs.
    let (st, _) = run(2, video(Some(200_000), 1.0), 5500);
    assert_eq!((st.gets, st.connections, st.abandoned), (6, 6, 0));
    assert_eq!((st.discarded_bytes(), st.rsts_sent), (0, 0));
    assert_eq!(st.read_bytes, 6 * 200_000);
}

#[test]
fn one_persistent_connection_with_flow_control_reads_no_more_than_the_player_allows() {
    let mut v = video(None, 0.0);
    v.player = Some(Player {
        rate_bps: 1_000_000,
        buffer_bytes: 500_000,
    });
    v.rcv_buf = Some(82_000);
    let (st, _) = run(3, v, 5500);
    // One connection; an open-ended GET covers the video, so later GETs are not sent.
    assert_eq!((st.gets, st.connections, st.abandoned), (1, 1, 0));
    assert_eq!(st.discarded_bytes(), 0);
    // The player's allowance at 5.5 s: 500 kB + 5.5 s × 125 kB/s = 1187.5 kB; its last look
    // was at most one tick (100 ms, 12.5 kB) earlier.
    assert!(st.read_bytes <= 1_187_500, "{}", st.read_bytes);
    assert!(
        st.read_bytes >= 1_187_500 - 12_500 - 82_000,
        "{}",
        st.read_bytes
    );
}

#[test]
fn abort_resets_at_once_and_poisson_gets_are_deterministic() {
    let mut v = video(None, 1.0);
    v.abandon = Abandon::Abort;
    v.gets = Arrivals::Poisson { rate_per_s: 2.0 };
    let a = run(4, v, 4000);
    let b = run(4, v, 4000);
    assert_eq!(a, b);
    let (st, _) = a;
    // An abort sends one RST per abandoned connection besides those for late segments.
    assert!(st.abandoned > 0);
    assert_eq!(st.rsts_sent, st.abandoned + st.late_segments);
    let c = run(5, v, 4000).0;
    assert_ne!(c.gets, 0);
}

#[test]
fn each_connection_is_one_video_gets_row_at_the_end() {
    use rantcp_nf::SeriesColumn;
    let (mut sim, s, c) = support::pair(
        1,
        ("server", "client"),
        Ipv4Addr::new(10, 1, 0, 1),
        support::link(RATE, 20),
    );
    let f = sim.add_flow(FlowSpec {
        name: "video".into(),
        kind: FlowKind::Video(video(None, 1.0)),
        src: s,
        dst: c,
        src_port: 80,
        dst_port: 49152,
        start: Time::ZERO,
        tcp_sender: TcpConfig::default(),
        tcp_receiver: TcpConfig::default(),
    });
    sim.run_until(Time::from_millis(3500)).expect("run");
    sim.finish().expect("finish");
    let st = sim.flow_result(f).video;
    let t = sim
        .take_function_series()
        .into_iter()
        .find(|t| t.name == "video_gets")
        .expect("video_gets");
    let col = |n: &str| match &t.columns.iter().find(|c| c.0 == n).unwrap().1 {
        SeriesColumn::I64(v) => v.clone(),
        SeriesColumn::F64(v) => v.iter().map(|x| *x as i64).collect(),
    };
    assert_eq!(col("conn"), vec![0, 1, 2, 3]);
    assert_eq!(col("opened_s"), vec![0, 1, 2, 3]);
    assert_eq!(col("gets"), vec![1, 1, 1, 1]);
    assert_eq!(col("abandoned"), vec![1, 1, 1, 0]);
    let sum = |n: &str| col(n).iter().sum::<i64>() as u64;
    assert_eq!(sum("discarded_bytes"), st.discarded_bytes());
    assert_eq!(sum("received_bytes"), st.received_bytes());
    assert_eq!(sum("read_bytes"), st.read_bytes);
}
