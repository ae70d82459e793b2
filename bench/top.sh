#!/usr/bin/env bash
# The dashboard's overhead: CPU time of `tracekit top` (recording, following its trace as it
# is written, the dashboard's analyses) against a plain `tracekit record` of the same events,
# under the same workload. Needs root (tracefs).
#
#   bench/top.sh               # SECS=10 REPS=3
#   SECS=5 REPS=1 bench/top.sh
#
# Workload, for SECS seconds: a shell loop reading /proc (fork, exec and system calls) and a
# dd copying /dev/zero to /dev/null in 64 KiB blocks (system calls). Configurations:
# `tracekit record --events sched,irq,syscalls,block` (top's default events); `tracekit top
# --batch` (the numbers, as JSON lines, no terminal); `tracekit top` in a pseudo-terminal
# (`script`), the dashboard drawn every 100 ms, `q` sent after the recording ended. For
# each: the tracekit process tree's CPU time (user + sys, /usr/bin/time), its peak RSS, the
# events recorded and lost; the median of REPS runs.
set -euo pipefail
cd "$(dirname "$0")/.."
SECS=${SECS:-10}
REPS=${REPS:-3}
TRACEKIT=${TRACEKIT:-}
[ "$(id -u)" = 0 ] || { echo "bench/top.sh: needs root (tracefs)" >&2; exit 1; }
if [ -z "$TRACEKIT" ]; then
  cargo build --release -q -p tracekit
  TRACEKIT=${CARGO_TARGET_DIR:-target}/release/tracekit
fi
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT

workload() {
  sh -c "end=\$((\$(date +%s)+$SECS)); while [ \$(date +%s) -lt \$end ]; do cat /proc/self/stat > /dev/null; done" &
  timeout "$SECS" dd if=/dev/zero of=/dev/null bs=64k 2>/dev/null &
}

# run NAME CMD...: one measured run; prints "cpu_s rss_kib events lost".
run() {
  local name=$1; shift
  local out="$W/$name"
  rm -rf "$out" "$W/.$name.partial"
  workload
  /usr/bin/time -f "%U %S %M" -o "$W/time" "$@" "$out/kernel" > "$W/stdout" 2> "$W/stderr" || {
    cat "$W/stderr" >&2; exit 1; }
  wait
  read -r u s m < "$W/time"
  local events lost
  events=$("$TRACEKIT" count "$out/kernel" | awk '/^total/ {print $2}')
  lost=$("$TRACEKIT" count "$out/kernel" | awk '/^discarded/ {print $2}')
  echo "$(echo "$u + $s" | bc) $m ${events:-0} ${lost:-0}"
  rm -rf "$out"
}

median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

# One script per configuration (run under /usr/bin/time), taking the trace directory.
cat > "$W/record_cmd" <<SH
#!/bin/sh
exec "$TRACEKIT" record -q --events sched,irq,syscalls,block --duration "$SECS" -o "\$1"
SH
cat > "$W/batch_cmd" <<SH
#!/bin/sh
exec "$TRACEKIT" top --batch --duration "$SECS" -o "\$1" > /dev/null
SH
# The dashboard in a terminal of 120x40; \`q\` once the recording ended.
cat > "$W/tui_cmd" <<SH
#!/bin/sh
(sleep $((SECS + 2)); printf q) | script -qfec "stty cols 120 rows 40; $TRACEKIT top --duration $SECS -o \$1" /dev/null > /dev/null
SH
chmod +x "$W/record_cmd" "$W/batch_cmd" "$W/tui_cmd"

printf '%-22s %10s %12s %12s %10s %14s\n' config "CPU s" "CPU/rec s" "peak RSS MiB" "events" "CPU us/kevent"
for cfg in record batch tui; do
  : > "$W/runs"
  for _ in $(seq "$REPS"); do
    run "$cfg" "$W/${cfg}_cmd" >> "$W/runs"
  done
  cpu=$(awk '{print $1}' "$W/runs" | median)
  rss=$(awk '{print $2}' "$W/runs" | median)
  ev=$(awk '{print $3}' "$W/runs" | median)
  printf '%-22s %10.2f %12.3f %12.1f %10d %14.2f\n' "$cfg" "$cpu" "$(echo "$cpu / $SECS" | bc -l)" \
    "$(echo "$rss / 1024" | bc -l)" "$ev" "$(echo "$cpu * 1000000000 / $ev / 1000" | bc -l)"
done
