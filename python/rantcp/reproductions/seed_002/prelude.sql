-- Seed 002: views and macros the claims and figures share (DuckDB SQL).

-- The scheme of a run: normal TCP (CUBIC), loose coupling with R(t)·RTT, or with the L2 queue;
-- ' (paced)' when flow.pacing is on (beyond the seed).
CREATE MACRO scheme(cc, variant, paced) AS
    CASE WHEN cc <> 'radio-aware' THEN 'Normal TCP'
         WHEN variant = 'rate' THEN 'R(t)*RTT'
         ELSE 'R(t)*RTT + (Q_th - Q(t))' END
    || CASE WHEN paced THEN ' (paced)' ELSE '' END;

-- Figure 1: each TCP run beside the UDP-saturation run of the same drop and buffer.
CREATE VIEW f1 AS
SELECT t.run, t.repetition, t."rlc.buffer" AS buffer,
    CAST(replace(t."rlc.buffer", 'KB', '') AS DOUBLE) * 1000 AS buffer_bytes,
    t.goodput_mbps AS tcp_mbps, u.goodput_mbps AS link_mbps,
    t.rtt_min_ms, t.rtt_mean_ms,
    t.goodput_mbps / u.goodput_mbps AS norm_goodput,
    t.rtt_mean_ms / t.rtt_min_ms AS norm_rtt,
    CAST(replace(t."rlc.buffer", 'KB', '') AS DOUBLE) * 1000
        / (u.goodput_mbps * 1e6 / 8 * t.rtt_min_ms / 1e3) AS norm_bdp
FROM runs t JOIN runs u
    ON u.sweep = 'fig1' AND u.traffic = 'udp-saturation' AND u.repetition = t.repetition
    AND u."rlc.buffer" = t."rlc.buffer" AND u.status = 'ok'
WHERE t.sweep = 'fig1' AND t.traffic = 'tcp' AND t.status = 'ok';

-- Means over the drops per buffer.
CREATE VIEW f1m AS
SELECT buffer, buffer_bytes, avg(norm_goodput) AS norm_goodput, avg(norm_rtt) AS norm_rtt,
    avg(norm_bdp) AS norm_bdp, count(*) AS n
FROM f1 GROUP BY buffer, buffer_bytes;

-- Table 1 and Figure 5: per run, the scheme and the burst figures (means over the flows).
CREATE VIEW b AS
SELECT run, sweep, repetition, "rlc.buffer" AS buffer,
    scheme("flow.cc", "flow.radio_aware.variant", "flow.pacing") AS scheme,
    burst_tput_mean AS tput_mbps, burst_latency_mean_s AS latency_s,
    bursts_arrived, bursts_delivered, rtt_mean_ms, goodput_mbps
FROM runs WHERE sweep IN ('table1', 'fig5') AND status = 'ok';

-- Table 1: mean burst throughput (Mbit/s) of a scheme at a buffer.
CREATE MACRO t1(buf, sch) AS
    (SELECT avg(tput_mbps) FROM b WHERE sweep = 'table1' AND buffer = buf AND scheme = sch);

-- Figure 5: mean latency (s) of the short flow under a scheme.
CREATE MACRO f5(sch) AS
    (SELECT avg(latency_s) FROM b WHERE sweep = 'fig5' AND scheme = sch);

-- Close coupling's schemes: the seed's (a sender without congestion control at the RAN feeding
-- the eNB's IP buffer) and the IP buffer fed by the end-to-end CUBIC sender.
CREATE MACRO cc_scheme(sw, close) AS
    CASE WHEN sw IN ('fig8co', 'fig9co') THEN 'Close coupled'
         WHEN close THEN 'IP buffer, end-to-end CUBIC' ELSE 'Normal TCP' END;

-- Figure 8: full-buffer TCP goodput (normal or close-coupled) over the air link's rate (the
-- UDP-saturation run of the same drop), %.
CREATE VIEW f8 AS
SELECT t.repetition, cc_scheme(t.sweep, t."functions.close_coupled.enabled") AS scheme,
    t.goodput_mbps AS tcp_mbps, u.goodput_mbps AS link_mbps, 100 * t.goodput_mbps / u.goodput_mbps AS pct_of_link,
    t.rtt_mean_ms
FROM runs t JOIN runs u
    ON u.sweep = 'fig8' AND u.traffic = 'udp-saturation' AND NOT u."functions.close_coupled.enabled"
    AND u.repetition = t.repetition AND u.status = 'ok'
WHERE t.sweep IN ('fig8', 'fig8co') AND coalesce(t.traffic, 'tcp') = 'tcp' AND t.status = 'ok';

-- Figure 9: mean burst latency (s) per run.
CREATE VIEW f9 AS
SELECT repetition, cc_scheme(sweep, "functions.close_coupled.enabled") AS scheme,
    burst_latency_mean_s AS latency_s, burst_tput_mean AS tput_mbps, rtt_mean_ms
FROM runs WHERE sweep IN ('fig9', 'fig9co') AND status = 'ok';

-- Figure 9 per flow: a UE whose link carries the offered 4 Mbit/s delivers all but the last
-- burst ("served"); on one that does not, bursts queue behind each other without end.
CREATE VIEW f9f AS
SELECT repetition, cc_scheme(sweep, "functions.close_coupled.enabled") AS scheme,
    "flow0.burst_latency_mean_s" AS latency_s, "flow0.burst_transfer_mean_s" AS transfer_s,
    "flow0.bursts_delivered" + 1 >= "flow0.bursts_arrived" AS served
FROM runs WHERE sweep IN ('fig9', 'fig9co') AND status = 'ok'
UNION ALL
SELECT repetition, cc_scheme(sweep, "functions.close_coupled.enabled"),
    "flow1.burst_latency_mean_s", "flow1.burst_transfer_mean_s",
    "flow1.bursts_delivered" + 1 >= "flow1.bursts_arrived"
FROM runs WHERE sweep IN ('fig9', 'fig9co') AND status = 'ok';

-- Beyond the seed: loose coupling against BBR (radio-aware cell, mmWave route) and against
-- the feedback delay.
CREATE VIEW bx AS
SELECT sweep, repetition, "flow.cc" AS cc,
    CAST(replace("functions.radio_feedback.feedback_delay", 'ms', '') AS INTEGER) AS delay_ms,
    burst_tput_mean AS tput_mbps, burst_latency_mean_s AS latency_s, goodput_mbps, rtt_mean_ms
FROM runs WHERE sweep IN ('beyond_bbr', 'beyond_delay', 'beyond_mmwave') AND status = 'ok';
CREATE MACRO bx_tput(sw, c) AS (SELECT avg(tput_mbps) FROM bx WHERE sweep = sw AND cc = c);
CREATE MACRO bx_goodput(sw, c) AS (SELECT avg(goodput_mbps) FROM bx WHERE sweep = sw AND cc = c);
CREATE MACRO bx_rtt(sw, c) AS (SELECT avg(rtt_mean_ms) FROM bx WHERE sweep = sw AND cc = c);
CREATE VIEW bxd AS
SELECT delay_ms, avg(tput_mbps) AS tput_mbps, avg(latency_s) AS latency_s, count(*) AS n
FROM bx WHERE sweep = 'beyond_delay' GROUP BY delay_ms;
