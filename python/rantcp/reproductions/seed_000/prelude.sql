-- Seed 000: views and macros the claims and figures share (DuckDB SQL).
-- Tables given by the machinery: runs (one row per run, config paths as columns), flows,
-- radio and ack_filter_ue (time series; join on run).

-- Every run with its scheme as the seed names it, its uplink reporting model and RLC buffer
-- (the seed's own study: sweeps schemes and hybrid094; the beyond-the-seed sweeps have theirs).
CREATE VIEW r_all AS
SELECT *,
    CASE "functions.ack_filter.mode" WHEN 'none' THEN 'Basic' WHEN 'granted' THEN 'Granted ACK'
        WHEN 'hybrid' THEN 'Hybrid 0.94' WHEN 'hybrid-opt' THEN 'Hybrid(opt)' END AS scheme,
    "mac.bsr" AS bsr,
    "rlc.buffer" AS rlcbuf,
    "functions.ack_filter.acks_sent" AS acks,
    "functions.ack_filter.ack_ip_bytes_sent" AS ack_ip_bytes
FROM runs WHERE status = 'ok';
CREATE VIEW r AS SELECT * FROM r_all WHERE sweep IN ('schemes', 'hybrid094');

-- One row per (scheme, UEs, BSR model, RLC buffer): means over the drops. tput: total DL TCP
-- goodput (Mbit/s); acks: UL ACKs sent per run; jain: Jain's index of the UEs' goodput;
-- sgw: ACK IP bit rate of the site × 1000 eNBs (Mbit/s).
CREATE VIEW pts AS
SELECT scheme, ues, bsr, rlcbuf,
    avg(goodput_mbps) AS tput,
    avg(acks) AS acks,
    avg(jain_goodput) AS jain,
    avg(ack_ip_bytes * 8.0 / duration_s / 1e6 * 1000) AS sgw,
    count(*) AS n
FROM r GROUP BY ALL;

CREATE MACRO tput(s, u, b, q) AS (SELECT tput FROM pts WHERE scheme = s AND ues = u AND bsr = b AND rlcbuf = q);
CREATE MACRO acks(s, u, b, q) AS (SELECT acks FROM pts WHERE scheme = s AND ues = u AND bsr = b AND rlcbuf = q);
CREATE MACRO jain(s, u, b, q) AS (SELECT jain FROM pts WHERE scheme = s AND ues = u AND bsr = b AND rlcbuf = q);
CREATE MACRO sgw(s, u, b, q) AS (SELECT sgw FROM pts WHERE scheme = s AND ues = u AND bsr = b AND rlcbuf = q);
-- Change of x over y, %.
CREATE MACRO pct(x, y) AS 100.0 * (x - y) / nullif(y, 0);
-- The largest number of UEs at which the cell's total goodput is at least t Mbit/s.
CREATE MACRO capacity(s, b, q, t) AS (SELECT max(ues) FROM pts WHERE scheme = s AND bsr = b AND rlcbuf = q AND tput >= t);

-- One row per UE of every run (every sweep): its goodput (Mbit/s), UL ACKs sent, the filter's S_TBS and
-- T_opt at the end, mean DL MCS and TBS of the samples it was scheduled in, position, cell.
CREATE VIEW ue_all AS
WITH last AS (
    SELECT run, rnti, arg_max(acks_sent, time_s) AS acks, arg_max(t_opt, time_s) AS t_opt,
           arg_max(s_tbs_bytes, time_s) AS s_tbs
    FROM ack_filter_ue GROUP BY run, rnti),
tp AS (
    SELECT run, CAST(regexp_extract(flow, '([0-9]+)$', 1) AS BIGINT) AS rnti,
           max(delivered_bytes) * 8.0 / max(time_s) / 1e6 AS tput
    FROM flows GROUP BY run, flow),
rad AS (
    SELECT run, rnti, avg(mcs) FILTER (WHERE tbs_bytes > 0) AS mcs,
           avg(tbs_bytes) FILTER (WHERE tbs_bytes > 0) AS tbs,
           first(x_m ORDER BY time_s) AS x, first(y_m ORDER BY time_s) AS y, first(cell ORDER BY time_s) AS cell
    FROM radio GROUP BY run, rnti)
SELECT r.run, r.sweep, r.scheme, r.ues, r.bsr, r.rlcbuf, r.repetition, last.rnti, last.acks, last.t_opt, last.s_tbs,
       tp.tput, rad.mcs, rad.tbs, rad.x, rad.y, rad.cell
FROM r_all r JOIN last USING (run) JOIN tp USING (run, rnti) JOIN rad USING (run, rnti);
CREATE VIEW ue_pts AS SELECT * FROM ue_all WHERE sweep IN ('schemes', 'hybrid094');

-- Per-UE reduction of ACKs, %, of scheme s against scheme base (same drop, same UE).
CREATE MACRO ack_cut(s, base, u, b, q) AS TABLE
SELECT a.repetition, a.rnti, 100.0 * (1 - a.acks / nullif(o.acks, 0)) AS cut
FROM ue_pts a JOIN ue_pts o ON o.repetition = a.repetition AND o.rnti = a.rnti
    AND o.ues = a.ues AND o.bsr = a.bsr AND o.rlcbuf = a.rlcbuf
WHERE a.scheme = s AND o.scheme = base AND a.ues = u AND a.bsr = b AND a.rlcbuf = q;

-- Beyond the seed (§III.C future work). Receiver ACK policies of real phones (sweeps ackpolicy, ackpolicy-quickack):
-- one row per (policy, scheme, UEs), means over the drops; the same columns as pts.
CREATE VIEW pol AS
SELECT CASE WHEN "flow.ack_every" = 1 THEN 'every segment' WHEN "flow.ack_every" = 4 THEN 'every 4th'
            WHEN "flow.quickack" THEN 'every 2nd + quick-ACK' ELSE 'every 2nd' END AS policy,
       scheme, ues,
       avg(goodput_mbps) AS tput, avg(acks) AS acks, avg(jain_goodput) AS jain, count(*) AS n
FROM r_all WHERE sweep IN ('ackpolicy', 'ackpolicy-quickack') GROUP BY ALL;
CREATE MACRO ptput(p, s, u) AS (SELECT tput FROM pol WHERE policy = p AND scheme = s AND ues = u);
CREATE MACRO packs(p, s, u) AS (SELECT acks FROM pol WHERE policy = p AND scheme = s AND ues = u);

-- mmWave (sweep mmwave, builtin:mmwave-urban, one UE): means over the fading seeds.
CREATE VIEW mmw AS
SELECT scheme, avg(goodput_mbps) AS tput, avg(acks) AS acks, avg(ack_ip_bytes) AS ack_ip_bytes, count(*) AS n
FROM r_all WHERE sweep = 'mmwave' GROUP BY ALL;
CREATE MACRO mtput(s) AS (SELECT tput FROM mmw WHERE scheme = s);
CREATE MACRO macks(s) AS (SELECT acks FROM mmw WHERE scheme = s);
