-- Seed 004: views and macros the claims and figures share (DuckDB SQL).
-- Tables given by the machinery: runs (one row per run, config paths as columns), flows and
-- radio (time series, joined on run; radio has speed_mps).

-- The paper's five TCP settings. Every TCP run of the 25 s-drive route belongs to one.
-- (COLUMNS(...) leaves out summary columns of the same names: UDP runs carry a per-flow "cc".)
CREATE VIEW tcp_runs AS
SELECT COLUMNS(lambda c: c NOT IN ('setting', 'cc', 'per')),
    CASE WHEN "core.server_delay" = '40ms' THEN 'remote'
         WHEN "flow.mss" = 14000 THEN 'MSS14000'
         WHEN "rlc.buffer" = '20MiB' THEN '20MB'
         WHEN "rlc.buffer" = '2.5MiB' THEN '2.5MB'
         WHEN "rlc.buffer" = '0.25MiB' THEN '0.25MB' END AS setting,
    "flow.cc" AS cc,
    "core.error_rate" AS per
FROM runs
WHERE traffic = 'tcp' AND status = 'ok' AND "ue.drive_duration" = '25s';

-- UDP saturation runs, by the setting whose reference line they give.
CREATE VIEW udp_runs AS
SELECT COLUMNS(lambda c: c <> 'setting'),
    CASE WHEN "ue.drive_duration" = '15s' THEN 'route15'
         WHEN "udp_packet" = '14028B' THEN 'MSS14000'
         WHEN "rlc.buffer" = '20MiB' THEN '20MB'
         WHEN "rlc.buffer" = '2.5MiB' THEN '2.5MB'
         WHEN "rlc.buffer" = '0.25MiB' THEN '0.25MB' END AS setting
FROM runs
WHERE traffic = 'udp-saturation' AND status = 'ok';

-- One row per (setting, controller, PER): means over the repetitions.
CREATE VIEW pts AS
SELECT setting, cc, per,
    avg(goodput_mbps) AS tput,
    avg(rtt_mean_ms) AS rtt,
    min(rtt_min_ms) AS rtt_min,
    avg(rtos) AS rtos,
    avg(data_segments_sent) AS segs,
    count(*) AS n
FROM tcp_runs GROUP BY setting, cc, per;

-- Throughput (Mbit/s), mean RTT (ms), RTOs and data segments sent per run, of one point.
CREATE MACRO tput(s, c, p) AS (SELECT tput FROM pts WHERE setting = s AND cc = c AND per = p);
CREATE MACRO rtt(s, c, p) AS (SELECT rtt FROM pts WHERE setting = s AND cc = c AND per = p);
CREATE MACRO rtos(s, c, p) AS (SELECT rtos FROM pts WHERE setting = s AND cc = c AND per = p);
CREATE MACRO segs(s, c, p) AS (SELECT segs FROM pts WHERE setting = s AND cc = c AND per = p);
-- The same averaged over the four PERs (the setting's overall level for a controller).
CREATE MACRO tput_avg(s, c) AS (SELECT avg(tput) FROM pts WHERE setting = s AND cc = c);
CREATE MACRO rtt_avg(s, c) AS (SELECT avg(rtt) FROM pts WHERE setting = s AND cc = c);
CREATE MACRO rtos_avg(s, c) AS (SELECT avg(rtos) FROM pts WHERE setting = s AND cc = c);
-- The smallest RTT sample of any run of a setting (the path's minimum RTT as measured).
CREATE MACRO min_rtt(s) AS (SELECT min(rtt_min) FROM pts WHERE setting = s);
-- UDP saturation goodput (Mbit/s), mean over repetitions.
CREATE MACRO udp(s) AS (SELECT avg(goodput_mbps) FROM udp_runs WHERE setting = s);

-- Labels as the paper writes them.
CREATE MACRO cc_label(c) AS CASE c WHEN 'newreno' THEN 'NewReno' WHEN 'cubic' THEN 'CUBIC'
    WHEN 'highspeed' THEN 'HighSpeed' WHEN 'bbr' THEN 'BBR' ELSE c END;
CREATE MACRO per_label(p) AS CASE WHEN p = 0 THEN '0' ELSE '1e-' || CAST(round(-log10(p)) AS INTEGER) END;

-- The route as the first 20 MB TCP run saw it (all runs share it), and the text's 15 s route.
CREATE VIEW route AS
SELECT * FROM radio WHERE run = (SELECT min(run) FROM tcp_runs WHERE setting = '20MB' AND repetition = 0);
CREATE VIEW route15 AS
SELECT * FROM radio WHERE run = (SELECT min(run) FROM udp_runs WHERE setting = 'route15');

-- The stops of the route (speed below 0.1 m/s between samples), numbered from the start:
-- start (s), end (s), duration (s), the share of their samples in NLOS, where they are (m).
CREATE VIEW stops AS
WITH s AS (
    SELECT time_s, los, x_m, y_m, speed_mps < 0.1 AS stopped,
           lag(time_s) OVER (ORDER BY time_s) AS prev
    FROM route),
g AS (SELECT *, sum(CASE WHEN stopped THEN 0 ELSE 1 END) OVER (ORDER BY time_s) AS grp FROM s)
SELECT row_number() OVER (ORDER BY min(coalesce(prev, 0))) AS n,
       min(coalesce(prev, 0)) AS t0, max(time_s) AS t1, max(time_s) - min(coalesce(prev, 0)) AS duration,
       avg(CASE WHEN los = 0 THEN 1.0 ELSE 0.0 END) AS nlos_share, avg(x_m) AS x_m, avg(y_m) AS y_m
FROM g WHERE stopped GROUP BY grp;

-- Per-sample view of the TCP runs: throughput (Mbit/s), smoothed RTT (ms), cwnd (bytes), and
-- the route's state at that sample: LOS (1/0), phase ('stop', 'walk', 'drive').
CREATE VIEW tcp_ts AS
SELECT r.run, r.setting, r.cc, r.per, r.repetition, f.time_s,
       f.goodput_bps / 1e6 AS tput, f.srtt_ms AS rtt, f.cwnd_bytes AS cwnd,
       g.los, g.sinr_db, g.rlc_drops, g.rlc_queue_bytes,
       CASE WHEN g.speed_mps < 0.1 THEN 'stop' WHEN g.speed_mps < 5 THEN 'walk' ELSE 'drive' END AS phase
FROM tcp_runs r
JOIN flows f USING (run)
JOIN radio g ON g.run = f.run AND g.time_s = f.time_s;
