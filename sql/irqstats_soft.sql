-- irqstats, soft IRQs: per vector, handler count and durations, and raise latencies (ns).
SELECT host, trace, irq AS vec, MIN(name) AS name,
       COUNT(*) AS count,
       MIN(dur) AS min_ns,
       AVG(CAST(dur AS DOUBLE)) AS avg_ns,
       MAX(dur) AS max_ns,
       STDDEV_SAMP(CAST(dur AS DOUBLE)) AS stdev_ns,
       COUNT(raise_latency) AS raises,
       MIN(raise_latency) AS raise_min_ns,
       AVG(CAST(raise_latency AS DOUBLE)) AS raise_avg_ns,
       MAX(raise_latency) AS raise_max_ns,
       STDDEV_SAMP(CAST(raise_latency AS DOUBLE)) AS raise_stdev_ns
FROM irq
WHERE NOT hard
GROUP BY host, trace, irq
ORDER BY host, trace, irq
