-- Seed 003 ch. 3: views and macros the claims and figures share (DuckDB SQL).

-- One row per run: its point and the run's figures. Timers in ms; enh = the BSR enhancement.
CREATE VIEW r AS
SELECT run, sweep, ues,
    CAST(replace("mac.periodic_bsr_timer", 'ms', '') AS INTEGER) AS periodic_ms,
    CAST(replace("mac.retx_bsr_timer", 'ms', '') AS INTEGER) AS retx_ms,
    CAST("mac.bsr_enhancement" AS BOOLEAN) AS enh,
    CASE WHEN CAST("mac.bsr_enhancement" AS BOOLEAN) THEN 'enhanced' ELSE 'standard' END AS bsr,
    m2m_completed AS transactions,
    upload_response_max_s AS up_max,
    down_response_mean_s AS down_mean_flows,
    100.0 * "radio.pdcch.idle_share" AS idle_pct,
    100.0 * "radio.pdcch.full_share" AS full_pct,
    "radio.uplink.bsr_sent" AS bsrs,
    "radio.uplink.sr_sent" AS srs,
    "radio.uplink.retx_bsr_expiries" AS retx_expiries,
    "radio.uplink.bsr_enhanced" AS bsr_enhanced,
    duration_s
FROM runs
WHERE status = 'ok';

-- Every completed transaction with its run's point.
CREATE VIEW tx AS
SELECT r.*, m.flow, m.down_sent_s, m.down_response_s, m.upload_response_s
FROM m2m m JOIN r USING (run);

-- Every uplink packet's delay with its run's point.
CREATE VIEW uld AS
SELECT r.*, d.delay_s FROM ul_delay d JOIN r USING (run);

-- Per run: transaction statistics over all UEs, the uplink delay tail, BSRs per second and per
-- transaction.
CREATE VIEW pt AS
SELECT r.*,
    (SELECT avg(upload_response_s) FROM tx WHERE tx.run = r.run) AS up_mean,
    (SELECT quantile_cont(upload_response_s, 0.95) FROM tx WHERE tx.run = r.run) AS up_p95,
    (SELECT avg(CASE WHEN upload_response_s > retx_ms / 1000.0 THEN 1.0 ELSE 0.0 END) FROM tx WHERE tx.run = r.run) AS up_beyond_retx,
    (SELECT avg(down_response_s) FROM tx WHERE tx.run = r.run) AS down_mean,
    (SELECT quantile_cont(down_response_s, 0.95) FROM tx WHERE tx.run = r.run) AS down_p95,
    (SELECT max(delay_s) FROM uld WHERE uld.run = r.run) AS ul_max,
    (SELECT quantile_cont(delay_s, 0.999) FROM uld WHERE uld.run = r.run) AS ul_p999,
    bsrs / duration_s AS bsr_per_s,
    bsrs / greatest(transactions, 1) AS bsr_per_tx
FROM r;


-- Per point: the mean over its repetitions (drops) of the per-run figures the load claims use.
-- With one repetition this is pt itself; the claims' per-repetition intervals evaluate it on
-- each repetition alone.
CREATE VIEW pm AS
SELECT sweep, ues, periodic_ms, retx_ms, enh, bsr, count(*) AS runs,
    avg(full_pct) AS full_pct, avg(idle_pct) AS idle_pct,
    avg(up_mean) AS up_mean, avg(up_p95) AS up_p95, avg(down_mean) AS down_mean, avg(down_p95) AS down_p95
FROM pt
GROUP BY sweep, ues, periodic_ms, retx_ms, enh, bsr;
