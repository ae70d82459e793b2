-- Top blocked threads (no critical path needed): per thread, the time spent blocked (switched
-- out not runnable), how often, the longest wait, and the time blocked in system calls.
SELECT host, trace, tid,
       SUM(dur) AS blocked_ns,
       COUNT(*) AS blocks,
       MAX(dur) AS max_ns,
       SUM(CASE WHEN syscall IS NOT NULL THEN dur ELSE 0 END) AS in_syscall_ns,
       SUM(CASE WHEN woken_in_irq THEN 1 ELSE 0 END) AS woken_by_irq
FROM thread_state
WHERE state = 'blocked'
GROUP BY host, trace, tid
ORDER BY host, trace, blocked_ns DESC, tid
