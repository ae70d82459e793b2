-- iolatencystats, system calls: latency (ns) per I/O category, as lttng-analyses sorts
-- the calls (fcntl only as F_DUPFD / F_DUPFD_CLOEXEC, cmd 0 and 1030).
SELECT host, trace, category,
       COUNT(*) AS count,
       MIN(dur) AS min_ns,
       AVG(CAST(dur AS DOUBLE)) AS avg_ns,
       MAX(dur) AS max_ns,
       STDDEV_SAMP(CAST(dur AS DOUBLE)) AS stdev_ns
FROM (
  SELECT host, trace, dur,
         CASE
           WHEN name IN ('open', 'openat', 'creat', 'socket', 'dup', 'dup2', 'dup3')
             OR (name = 'fcntl' AND cmd IN (0, 1030)) THEN 'Open'
           WHEN name IN ('read', 'readv', 'pread64', 'preadv', 'recvfrom', 'recvmsg') THEN 'Read'
           WHEN name IN ('write', 'writev', 'pwrite64', 'pwritev', 'sendto', 'sendmsg') THEN 'Write'
           WHEN name IN ('sync', 'fsync', 'fdatasync', 'syncfs', 'sync_file_range') THEN 'Sync'
         END AS category
  FROM syscall
) c
WHERE category IS NOT NULL
GROUP BY host, trace, category
ORDER BY host, trace, category
