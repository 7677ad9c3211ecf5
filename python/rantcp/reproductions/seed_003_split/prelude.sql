-- Seed 003 ch. 5: views and macros the claims and figures share (DuckDB SQL). Every run holds
-- two networks on the same seed: flow0 is the unsplit "e2e" download, flow1 the split one.

-- One row per run with the split configuration, the two download times and the gain (%).
CREATE VIEW g AS
SELECT run, sweep, repetition,
    "functions.split.mode" AS mode,
    CAST(replace(ran_rtt, 'ms', '') AS INTEGER) AS ran_ms,
    CAST(replace(wan_rtt, 'ms', '') AS INTEGER) AS wan_ms,
    replace(ran_rtt, 'ms', '') || ':' || replace(wan_rtt, 'ms', '') AS split,
    "radio.fixed_mcs" AS mcs,
    "flow.bytes" AS file,
    CAST(replace("flow.bytes", 'MB', '') AS DOUBLE) AS file_mb,
    "flow.rcv_buf" AS rwin,
    "functions.impair.loss" AS per,
    "flow0.download_time_s" AS t_e2e,
    "flow1.download_time_s" AS t_split,
    100.0 * ("flow0.download_time_s" / "flow1.download_time_s" - 1.0) AS gain
FROM runs
WHERE status = 'ok';

-- Means over the repetitions that finished both downloads.
CREATE VIEW pts AS
SELECT sweep, mode, split, ran_ms, mcs, file, file_mb, rwin, per,
    avg(gain) AS gain, avg(t_e2e) AS t_e2e, avg(t_split) AS t_split, count(*) AS n
FROM g WHERE gain IS NOT NULL
GROUP BY sweep, mode, split, ran_ms, mcs, file, file_mb, rwin, per;

-- The gain (%) of one point of the gain sweep, and of the loss sweep.
CREATE MACRO gain_at(m, s, c, f) AS
    (SELECT gain FROM pts WHERE sweep = 'gain' AND mode = m AND split = s AND mcs = c AND file = f);
CREATE MACRO loss_gain(s, c, p) AS
    (SELECT gain FROM pts WHERE sweep = 'loss' AND split = s AND mcs = c AND per = p);

-- Per-sample in-flight bytes of the three connections of the fig48 runs: TCP_e2e (the e2e
-- network's sender), TCP_WAN (the split network's sender, the far host) and TCP_RAN (the split
-- host's own sender), and the split host's buffer.
CREATE VIEW inflight AS
SELECT f.run, r."functions.split.mode" AS mode, f.time_s,
    CASE WHEN f.flow = 'e2e' THEN 'TCP_e2e' ELSE 'TCP_WAN' END AS conn,
    f.in_flight_bytes AS bytes, f.cwnd_bytes AS cwnd
FROM flows f JOIN runs r USING (run)
WHERE r.sweep = 'fig48' AND r.repetition = 0 AND f.in_flight_bytes > 0
UNION ALL
SELECT s.run, r."functions.split.mode", s.time_s, 'TCP_RAN', s.ran_in_flight_bytes, s.ran_cwnd_bytes
FROM split s JOIN runs r USING (run)
WHERE r.sweep = 'fig48' AND r.repetition = 0 AND s.ran_in_flight_bytes > 0;

-- The split host's buffer while the transfer lasts (until the MH has acknowledged the file).
CREATE VIEW buffer AS
SELECT s.run, r."functions.split.mode" AS mode, s.time_s, s.buffer_bytes
FROM split s JOIN runs r USING (run)
WHERE r.sweep = 'fig48' AND r.repetition = 0 AND s.ran_acked_bytes < 10000000;

-- Mean over the transfer of each connection's in-flight bytes (fig48, ES-TCP).
CREATE MACRO inflight_mean(c) AS
    (SELECT avg(bytes) FROM inflight WHERE mode = 'es-tcp' AND conn = c);
