-- syscallstats, per thread: total system calls.
SELECT host, trace, tid, COUNT(*) AS calls
FROM syscall
GROUP BY host, trace, tid
ORDER BY host, trace, calls DESC, tid
