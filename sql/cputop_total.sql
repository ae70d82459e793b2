-- cputop, total: the busy share of every CPU the kernel model saw.
SELECT s.host, s.trace,
       CAST(SUM(CASE WHEN s.tid <> 0 THEN s.dur ELSE 0 END) AS DOUBLE)
         / (t.end_ns - t.begin_ns) / t.cpus AS usage
FROM sched_slice s
JOIN trace t ON t.host = s.host AND t.trace = s.trace
GROUP BY s.host, s.trace, t.begin_ns, t.end_ns, t.cpus
ORDER BY s.host, s.trace
