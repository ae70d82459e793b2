-- iolatencystats, disks: block request latency (issue to completion, ns) per partition (whole
-- disks that partitions are remapped to are left out: their requests are the partitions').
SELECT b.host, b.trace, b.dev, d.name AS disk,
       COUNT(*) AS count,
       MIN(b.dur) AS min_ns,
       AVG(CAST(b.dur AS DOUBLE)) AS avg_ns,
       MAX(b.dur) AS max_ns,
       STDDEV_SAMP(CAST(b.dur AS DOUBLE)) AS stdev_ns
FROM block_io b
JOIN disk d ON d.host = b.host AND d.trace = b.trace AND d.dev = b.dev
WHERE NOT d.whole
GROUP BY b.host, b.trace, b.dev, d.name
ORDER BY b.host, b.trace, b.dev
