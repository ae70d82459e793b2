-- schedstats, total: wakeup latency (wakeup to switch in, ns) of every scheduling that ended
-- a wakeup.
SELECT host, trace,
       COUNT(*) AS count,
       MIN(ts - wakeup_ts) AS min_ns,
       AVG(CAST(ts - wakeup_ts AS DOUBLE)) AS avg_ns,
       MAX(ts - wakeup_ts) AS max_ns,
       STDDEV_SAMP(CAST(ts - wakeup_ts AS DOUBLE)) AS stdev_ns
FROM sched_slice
WHERE wakeup_ts IS NOT NULL
GROUP BY host, trace
ORDER BY host, trace
