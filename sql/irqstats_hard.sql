-- irqstats, hard IRQs: per line, handler count and durations (ns).
SELECT host, trace, irq, MIN(name) AS name,
       COUNT(*) AS count,
       MIN(dur) AS min_ns,
       AVG(CAST(dur AS DOUBLE)) AS avg_ns,
       MAX(dur) AS max_ns,
       STDDEV_SAMP(CAST(dur AS DOUBLE)) AS stdev_ns
FROM irq
WHERE hard
GROUP BY host, trace, irq
ORDER BY host, trace, irq
