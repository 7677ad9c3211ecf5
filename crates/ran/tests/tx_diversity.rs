//! LTE transmission mode 2 (SFBC over two antenna ports, TS 36.213 §7.1.2) as two independent
//! Rayleigh branches with the power split between them: the mean SNR is unchanged and the
//! fading's diversity order doubles (seed 002's "MIMO TM2").

mod support;

use rantcp_core::Time;
use rantcp_ran::fading::FadingKind;

/// Linear fast-fading gains of one UE over `n` 1-ms slots at 60 km/h.
fn gains(branches: u8, n: u64) -> Vec<f64> {
    let mut r = support::radio(&[300.0], |c| {
        c.fading.kind = FadingKind::Rayleigh;
        c.fading.scatterer_speed_mps = 60.0 / 3.6;
        c.fading.tx_diversity = branches;
    });
    let flat = {
        let mut f = support::radio(&[300.0], |_| {});
        f.sinr_db(1, Time::ZERO)
    };
    (0..n)
        .map(|k| 10f64.powf((r.sinr_db(1, Time::from_millis(k)) - flat) / 10.0))
        .collect()
}

fn stats(g: &[f64]) -> (f64, f64, f64) {
    let n = g.len() as f64;
    let m = g.iter().sum::<f64>() / n;
    let v = g.iter().map(|x| (x - m).powi(2)).sum::<f64>() / n;
    let deep = g.iter().filter(|&&x| x < 0.1).count() as f64 / n;
    (m, v, deep)
}

#[test]
fn tm2_keeps_the_mean_and_halves_the_fading_variance() {
    // 60 s at f_D = 16.7 m/s / 0.15 m = 111 Hz: thousands of coherence times.
    let (m1, v1, d1) = stats(&gains(1, 60_000));
    let (m2, v2, d2) = stats(&gains(2, 60_000));
    // Rayleigh: exponential power, mean 1, variance 1, P(< −10 dB) = 1 − e^−0.1 = 0.095.
    assert!((m1 - 1.0).abs() < 0.1, "mean {m1}");
    assert!((v1 - 1.0).abs() < 0.2, "variance {v1}");
    assert!((d1 - 0.095).abs() < 0.02, "deep fades {d1}");
    // Two branches, half power each: Gamma(2, 1/2), mean 1, variance 1/2,
    // P(< −10 dB) = 1 − e^−0.2·(1 + 0.2) = 0.0175.
    assert!((m2 - 1.0).abs() < 0.1, "mean {m2}");
    assert!((v2 - 0.5).abs() < 0.1, "variance {v2}");
    assert!((d2 - 0.0175).abs() < 0.008, "deep fades {d2}");
}
