-- Seed 003 ch. 4: views and macros the claims and figures share (DuckDB SQL). Every point runs
-- with the RST tracker off and on on the same seed; flows 0-4 are the video UEs, 5-9 the bulk
-- downloads of the other UEs.

-- One row per run: preset, mean GET gap, tracker, the video counters summed over the video UEs,
-- and the other UEs' total goodput.
CREATE VIEW r AS
SELECT run, repetition,
    "flow.video.preset" AS preset,
    "flow.video.get_interval" AS gap,
    CAST(replace("flow.video.get_interval", 's', '') AS DOUBLE) AS gap_s,
    CAST("functions.rst_tracker.enabled" AS BOOLEAN) AS tracker,
    video_gets AS gets,
    video_connections AS conns,
    video_received_bytes AS received,
    video_read_bytes AS read,
    video_discarded_bytes AS wasted,
    video_rsts_sent AS rsts,
    100.0 * video_discarded_bytes / nullif(video_received_bytes, 0) AS discard_pct,
    "flow5.goodput_mbps" + "flow6.goodput_mbps" + "flow7.goodput_mbps" + "flow8.goodput_mbps"
        + "flow9.goodput_mbps" AS others_mbps,
    "flow0.goodput_mbps" + "flow1.goodput_mbps" + "flow2.goodput_mbps" + "flow3.goodput_mbps"
        + "flow4.goodput_mbps" AS video_mbps,
    "functions.rst_tracker.purged_payload_bytes" AS purged,
    "functions.rst_tracker.dropped_payload_bytes" AS dropped
FROM runs WHERE status = 'ok' AND sweep = 'rst';

-- Sweep hold: the saving (%) at each hold time against the same drop's tracker-off run of
-- sweep rst (iOS-like, 10 s gap).
CREATE VIEW hold AS
SELECT h.repetition,
    CAST(regexp_extract(h."functions.rst_tracker.hold", '^([0-9.]+)', 1) AS DOUBLE)
        * CASE WHEN h."functions.rst_tracker.hold" LIKE '%ms' THEN 0.001 ELSE 1 END AS hold_s,
    100.0 * (o.wasted - h.video_discarded_bytes) / nullif(o.received, 0) AS saving_pct,
    h."functions.rst_tracker.purged_payload_bytes" AS purged,
    h."functions.rst_tracker.dropped_payload_bytes" AS dropped
FROM runs h JOIN r o ON o.repetition = h.repetition AND o.preset = 'ios' AND o.gap = '10s' AND NOT o.tracker
WHERE h.status = 'ok' AND h.sweep = 'hold';

-- The same drop without (o) and with (t) the tracker: the waste it removed over the video bytes
-- delivered without it (the air-link saving, %), the change of the UEs' RSTs (%), of the video
-- bytes read and of the other UEs' goodput (%).
CREATE VIEW pair AS
SELECT o.preset, o.gap, o.gap_s, o.repetition,
    o.discard_pct AS discard_off, t.discard_pct AS discard_on,
    o.wasted AS wasted_off, t.wasted AS wasted_on,
    100.0 * (o.wasted - t.wasted) / nullif(o.received, 0) AS saving_pct,
    100.0 * (1 - t.rsts / nullif(o.rsts, 0)) AS rst_cut_pct,
    100.0 * (t.read / nullif(o.read, 0) - 1) AS read_change_pct,
    100.0 * (t.others_mbps / nullif(o.others_mbps, 0) - 1) AS others_change_pct,
    o.received / nullif(o.gets, 0) AS bytes_per_get,
    o.wasted / nullif(o.gets, 0) AS wasted_per_get,
    o.others_mbps AS others_off, t.others_mbps AS others_on
FROM r o JOIN r t USING (preset, gap, repetition)
WHERE NOT o.tracker AND t.tracker;

-- Means over the drops.
CREATE VIEW pts AS
SELECT preset, gap, gap_s,
    avg(discard_off) AS discard_off, avg(discard_on) AS discard_on,
    avg(saving_pct) AS saving, avg(rst_cut_pct) AS rst_cut,
    avg(read_change_pct) AS read_change, avg(others_change_pct) AS others_change,
    avg(bytes_per_get) AS bytes_per_get, avg(wasted_per_get) AS wasted_per_get, count(*) AS n
FROM pair GROUP BY preset, gap, gap_s;

CREATE MACRO pt(p, g) AS TABLE SELECT * FROM pts WHERE preset = p AND gap = g;
