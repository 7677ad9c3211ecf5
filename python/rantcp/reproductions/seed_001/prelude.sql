-- Seed 001: views and macros the claims and figures share (DuckDB SQL).
-- Tables given by the machinery: runs (one row per run), flows, radio and proxy (time series).

-- One row per run: the scheme as the seed names it, LOS and NLOS durations (s), rate (Mbit/s)
-- and delivery ratio. Rate is the mean goodput over whole NLOS + LOS cycles, from the first
-- NLOS period's start to the end of the last LOS period the run completes: every NLOS period
-- with the LOS period after it, in which a proxy delivers what it kept (a run that ended in
-- NLOS would count the data cached for the next LOS as never delivered). goodput_mbps (the
-- whole run) stays in the runs table.
CREATE VIEW r0 AS
SELECT run, sweep, repetition,
    CASE "functions.proxy.mode" WHEN 'none' THEN 'TCP' WHEN 'pep' THEN 'PEP' WHEN 'mmpep' THEN 'mmPEP' END AS scheme,
    CAST(replace("ue.los_duration", 's', '') AS DOUBLE) AS los,
    CAST(replace("ue.nlos_duration", 's', '') AS DOUBLE) AS nlos,
    CAST(replace(duration, 's', '') AS DOUBLE) AS dur,
    goodput_mbps,
    "functions.proxy.delivery_ratio" AS dr,
    "functions.proxy.retx_packets" AS retx,
    "functions.proxy.batches" AS batches,
    "functions.proxy.batch_packets" AS batch_packets,
    "functions.proxy.timer_deferred" AS timer_deferred,
    "functions.proxy.held_packets" AS held,
    "functions.proxy.dup_acks" AS dup_acks,
    "functions.proxy.timer_retx_rlc_busy" AS rlc_busy,
    "functions.proxy.gamma" AS gamma,
    "functions.proxy.batch_size" AS n
FROM runs WHERE status = 'ok';

CREATE VIEW r AS
SELECT r0.*,
    los + (los + nlos) * floor((dur - los) / (los + nlos)) AS cycles_end,
    (SELECT avg(f.goodput_bps) / 1e6 FROM flows f
     WHERE f.run = r0.run AND f.time_s > r0.los
       AND f.time_s <= r0.los + (r0.los + r0.nlos) * floor((r0.dur - r0.los) / (r0.los + r0.nlos)) + 1e-9) AS rate
FROM r0;

-- Means over repetitions, per (sweep, scheme, LOS, NLOS).
CREATE VIEW pts AS
SELECT sweep, scheme, los, nlos, avg(rate) AS rate, avg(dr) AS dr, count(*) AS n
FROM r GROUP BY sweep, scheme, los, nlos;

-- Figure 5 (by LOS = NLOS) and Figure 6 (by NLOS) points of one scheme.
CREATE MACRO rate5(s, d) AS (SELECT rate FROM pts WHERE sweep = 'fig5' AND scheme = s AND los = d);
CREATE MACRO dr5(s, d) AS (SELECT dr FROM pts WHERE sweep = 'fig5' AND scheme = s AND los = d);
CREATE MACRO rate6(s, d) AS (SELECT rate FROM pts WHERE sweep = 'fig6' AND scheme = s AND nlos = d);
CREATE MACRO dr6(s, d) AS (SELECT dr FROM pts WHERE sweep = 'fig6' AND scheme = s AND nlos = d);

-- Figure 1's run, sample by sample, with the link state.
CREATE VIEW fig1 AS
SELECT f.time_s, f.goodput_bps / 1e6 AS rate, f.srtt_ms, f.cwnd_bytes, g.los
FROM flows f JOIN radio g ON g.run = f.run AND g.time_s = f.time_s
WHERE f.run = (SELECT min(run) FROM runs WHERE sweep = 'fig1');

-- Beyond the paper (sweep urban): one row per run on seed 004's urban route: scheme, the
-- server's congestion control, repetition (every point of a repetition has the same seed, so
-- differences between points are paired), goodput over the whole run and the server's mean RTT.
CREATE VIEW urban AS
SELECT run, repetition,
    CASE "functions.proxy.mode" WHEN 'none' THEN 'TCP' WHEN 'pep' THEN 'PEP' WHEN 'mmpep' THEN 'mmPEP' END AS scheme,
    "flow.cc" AS cc, goodput_mbps AS rate, rtt_mean_ms AS rtt
FROM runs WHERE status = 'ok' AND sweep = 'urban';

-- Two-sided 95 % Student t quantile t_{0.975, dof} for dof 1-30 (rantcp.sweeps.stats.t975's
-- table; DuckDB lists count from 1).
CREATE MACRO t975(dof) AS [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
    2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069,
    2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042][dof];
-- Half-width of the 95 % interval of a mean over n repetitions with sample standard deviation
-- s; NULL below 5 repetitions (rantcp.sweeps.stats.MIN_REPETITIONS_FOR_INTERVAL).
CREATE MACRO ci95(s, n) AS CASE WHEN n >= 5 THEN t975(n - 1) * s / sqrt(n) END;

-- Per scheme and server CC: mean goodput, its gain over plain TCP with the same CC and over
-- plain TCP with BBR ("against BBR alone"), each paired by repetition, and the server's RTT.
CREATE VIEW urban_pts AS
WITH d AS (
    SELECT u.*, u.rate - t.rate AS gain, u.rate - b.rate AS gain_bbr
    FROM urban u
    JOIN urban t ON t.scheme = 'TCP' AND t.cc = u.cc AND t.repetition = u.repetition
    JOIN urban b ON b.scheme = 'TCP' AND b.cc = 'bbr' AND b.repetition = u.repetition)
SELECT scheme, cc, count(*) AS n,
    avg(rate) AS rate, ci95(stddev_samp(rate), count(*)) AS rate_ci95,
    avg(gain) AS gain, ci95(stddev_samp(gain), count(*)) AS gain_ci95,
    avg(gain_bbr) AS gain_bbr, ci95(stddev_samp(gain_bbr), count(*)) AS gain_bbr_ci95,
    avg(rtt) AS rtt_ms
FROM d GROUP BY scheme, cc;
