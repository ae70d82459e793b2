-- iolatencystats, disks: block request latency (issue to completion, ns) per device.
SELECT host, trace, dev, MIN(disk) AS disk,
       COUNT(*) AS count,
       MIN(dur) AS min_ns,
       AVG(CAST(dur AS DOUBLE)) AS avg_ns,
       MAX(dur) AS max_ns,
       STDDEV_SAMP(CAST(dur AS DOUBLE)) AS stdev_ns
FROM block_io
GROUP BY host, trace, dev
ORDER BY host, trace, dev
