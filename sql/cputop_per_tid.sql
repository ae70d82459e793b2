-- cputop, per thread: the share of the trace's time range each thread ran
-- (`tracekit analyze cputop`'s "Per-TID top CPU usage"; lttng-analyses' cputop).
SELECT s.host, s.trace, s.tid,
       SUM(s.dur) AS busy_ns,
       CAST(SUM(s.dur) AS DOUBLE) / (t.end_ns - t.begin_ns) AS usage
FROM sched_slice s
JOIN trace t ON t.host = s.host AND t.trace = s.trace
WHERE s.tid <> 0
GROUP BY s.host, s.trace, s.tid, t.begin_ns, t.end_ns
ORDER BY s.host, s.trace, usage DESC, s.tid
