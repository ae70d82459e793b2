-- syscallstats, per thread and system call: count and durations (ns). As lttng-analyses,
-- no standard deviation below three calls.
SELECT host, trace, tid, name,
       COUNT(*) AS calls,
       MIN(dur) AS min_ns,
       AVG(CAST(dur AS DOUBLE)) AS avg_ns,
       MAX(dur) AS max_ns,
       CASE WHEN COUNT(*) > 2 THEN STDDEV_SAMP(CAST(dur AS DOUBLE)) END AS stdev_ns,
       SUM(CASE WHEN ret >= 0 THEN 1 ELSE 0 END) AS successes
FROM syscall
GROUP BY host, trace, tid, name
ORDER BY host, trace, tid, calls DESC, name
