-- cputop, per CPU: the share of the time range each CPU ran a thread other than idle.
SELECT s.host, s.trace, s.cpu,
       CAST(SUM(CASE WHEN s.tid <> 0 THEN s.dur ELSE 0 END) AS DOUBLE)
         / (t.end_ns - t.begin_ns) AS usage
FROM sched_slice s
JOIN trace t ON t.host = s.host AND t.trace = s.trace
GROUP BY s.host, s.trace, s.cpu, t.begin_ns, t.end_ns
ORDER BY s.host, s.trace, s.cpu
