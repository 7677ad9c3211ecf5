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
