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

-- Figure 8: full-buffer TCP goodput (normal or close-coupled) over the air link's rate (the
-- UDP-saturation run of the same drop), %.
CREATE VIEW f8 AS
SELECT t.repetition, CASE WHEN t."functions.close_coupled.enabled" THEN 'Close coupled' ELSE 'Normal TCP' END AS scheme,
    t.goodput_mbps AS tcp_mbps, u.goodput_mbps AS link_mbps, 100 * t.goodput_mbps / u.goodput_mbps AS pct_of_link,
    t.rtt_mean_ms
FROM runs t JOIN runs u
    ON u.sweep = 'fig8' AND u.traffic = 'udp-saturation' AND NOT u."functions.close_coupled.enabled"
    AND u.repetition = t.repetition AND u.status = 'ok'
WHERE t.sweep = 'fig8' AND t.traffic = 'tcp' AND t.status = 'ok';

-- Figure 9: mean burst latency (s) per run.
CREATE VIEW f9 AS
SELECT repetition, CASE WHEN "functions.close_coupled.enabled" THEN 'Close coupled' ELSE 'Normal TCP' END AS scheme,
    burst_latency_mean_s AS latency_s, burst_tput_mean AS tput_mbps, rtt_mean_ms
FROM runs WHERE sweep = 'fig9' AND status = 'ok';
