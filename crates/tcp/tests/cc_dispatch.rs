//! The enum dispatch builds each controller from its config name and exposes its state in the
//! trace (design.md §6): BBR mode/bandwidth/min RTT and a pacing rate, CUBIC W_max and K.

use rantcp_core::{Duration, Time};
use rantcp_tcp::cc::{AckSample, Cc, CcKind, CcParams, CongestionControl, Feedback, RateSample};

fn build(name: &str) -> Cc {
    let kind = CcKind::from_name(name).expect(name);
    assert_eq!(kind.name(), name);
    Cc::new(&CcParams {
        kind,
        mss: 1448,
        initial_cwnd_segments: 10,
        ..CcParams::default()
    })
}

#[test]
fn test_each_controller_starts_at_the_initial_window_and_traces_its_state() {
    for name in ["newreno", "cubic", "highspeed", "bbr"] {
        let mut cc = build(name);
        assert_eq!(cc.cwnd(), 14_480, "{name}");
        assert_eq!(cc.ssthresh(), u64::MAX, "{name}");
        let ack = AckSample {
            now: Time::from_millis(40),
            bytes_acked: 1448,
            cum_acked: 1448,
            rtt: Some(Duration::from_millis(40)),
            srtt: Duration::from_millis(40),
            min_rtt: Duration::from_millis(40),
            bytes_in_flight: 9 * 1448,
            prior_in_flight: 10 * 1448,
            delivered: 1448,
            rate: Some(RateSample {
                delivered: 1448,
                interval: Duration::from_millis(40),
                prior_delivered: 0,
                is_app_limited: false,
                rtt: Duration::from_millis(40),
            }),
            mss: 1448,
            ..AckSample::default()
        };
        cc.on_ack(&ack);
        assert!(cc.cwnd() > 14_480, "{name} grows in slow start / STARTUP");
        let tr = cc.trace();
        match name {
            "bbr" => {
                assert_eq!(tr.bbr_mode, Some(0));
                assert!(tr.bbr_btl_bw_bps.unwrap() > 0.0);
                assert_eq!(tr.bbr_min_rtt, Some(Duration::from_millis(40)));
                assert!(cc.pacing_rate_bps().unwrap() > 0.0);
            }
            "cubic" => {
                assert!(tr.cubic_k_s.is_some());
                assert_eq!(cc.pacing_rate_bps(), None);
            }
            _ => {
                assert_eq!(tr.bbr_mode, None);
                assert_eq!(cc.pacing_rate_bps(), None);
            }
        }
    }
}

#[test]
fn test_feedback_is_ignored_by_controllers_that_do_not_use_it() {
    // The hook for external path signals (radio-aware TCP, seed 002) is a no-op by default:
    // none of the built-in controllers changes its window or pacing rate on it.
    for name in ["newreno", "cubic", "highspeed", "bbr"] {
        let mut cc = build(name);
        let before = (cc.cwnd(), cc.ssthresh(), cc.pacing_rate_bps());
        cc.on_feedback(
            Time::from_millis(5),
            &Feedback {
                sampled_at: Time::from_millis(4),
                rate_bps: Some(1e9),
                queue_bytes: Some(0),
            },
        );
        assert_eq!(
            (cc.cwnd(), cc.ssthresh(), cc.pacing_rate_bps()),
            before,
            "{name}"
        );
    }
}

#[test]
fn test_slow_start_after_a_timeout_counts_one_segment_per_ack_under_rfc_rules() {
    // RFC 3465 §2.3: L = 1 SMSS while slow starting after a retransmission timeout, L = 2 SMSS
    // otherwise (§2.2); Linux's rules count every byte the ACK covers (`tcp_slow_start`). The ACK
    // here covers 4 segments, as the ACK of a retransmission that fills the hole below data the
    // receiver held does. Every controller that counts bytes in slow start; BBR does not.
    const MSS: u64 = 1448;
    for name in ["newreno", "cubic", "highspeed"] {
        for (abc, in_loss_before, grown) in [
            (Some(2), true, 1),
            (Some(2), false, 2),
            (None, true, 4),
            (None, false, 4),
        ] {
            let mut cc = Cc::new(&CcParams {
                kind: CcKind::from_name(name).unwrap(),
                mss: MSS as u32,
                initial_cwnd_segments: 10,
                abc_limit_segments: abc,
                ..CcParams::default()
            });
            cc.on_rto(Time::from_millis(300), 20 * MSS, MSS as u32, true);
            assert_eq!(cc.cwnd(), MSS, "{name}: one loss window");
            assert!(cc.ssthresh() >= 6 * MSS, "{name}: {}", cc.ssthresh());
            cc.on_ack(&AckSample {
                now: Time::from_millis(400),
                bytes_acked: 4 * MSS,
                cum_acked: 4 * MSS,
                srtt: Duration::from_millis(40),
                min_rtt: Duration::from_millis(40),
                prior_in_flight: 4 * MSS,
                in_loss: in_loss_before,
                in_loss_before,
                mss: MSS as u32,
                ..AckSample::default()
            });
            assert_eq!(
                cc.cwnd(),
                (1 + grown) * MSS,
                "{name} abc {abc:?} after-RTO {in_loss_before}"
            );
        }
    }
}
