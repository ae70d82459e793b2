#!/usr/bin/env bash
# Per-event overhead of `tracekit record` against no tracing and `perf record`, the cost of
# `--stacks` per context switch (armed) and per fired rule against `perf record -g`, and the
# highest event rate recorded without loss. Needs root (tracefs, perf -a, BPF).
#
#   bench/record.sh            # N=1000000 getpid calls, M=50000 pipe round trips
#   N=200000 M=20000 REPS=3 bench/record.sh
#
# Workloads (C, compiled here): a getpid loop (2 raw_syscalls events per call) and a pipe
# ping-pong between two processes (per round trip: 2 writes + 2 reads = 8 events, plus the
# context switches), both pinned to the last CPU. Configurations: tracing off;
# `tracekit record --events syscalls`; `perf record -a -e raw_syscalls:*`. Each prints wall
# and CPU (user+sys of the workload) ns per operation, the median of REPS runs.
#
# Stacks: the ping-pong again (both processes on one CPU: per round trip 2 context switches
# and 2 wakeups, all in the workload's own time), recorded with `--events sched` alone, with
# `--stacks 'offcpu>1s'` (armed, never fires: the in-kernel check per switch), with
# `--stacks 'offcpu>1ns'` (fires at every switch and wakeup: 4 stacks per round trip), and
# `perf record -g -a -e sched:sched_switch` (a stack per switch: 2 per round trip).
set -euo pipefail
cd "$(dirname "$0")/.."
N=${N:-1000000}
M=${M:-50000}
REPS=${REPS:-3}
RATE_SECS=${RATE_SECS:-3}
TRACEKIT=${TRACEKIT:-}
[ "$(id -u)" = 0 ] || { echo "bench/record.sh: needs root (tracefs and perf -a)" >&2; exit 1; }

if [ -z "$TRACEKIT" ]; then
  # The `bpf` feature for --stacks (clang, libbpf-dev).
  cargo build --release -q -p tracekit --features bpf
  TRACEKIT=${CARGO_TARGET_DIR:-target}/release/tracekit
fi
if ! command -v perf >/dev/null; then
  apt-get install -y -qq linux-perf >/dev/null 2>&1 || echo "(perf not available: its rows are skipped)"
fi

W=$(mktemp -d)
cleanup() {
  [ -n "${REC:-}" ] && kill -INT "$REC" 2>/dev/null && wait "$REC" 2>/dev/null || true
  rm -rf "$W"
}
trap cleanup EXIT
cat > "$W/load.c" <<'C'
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
static double now(void) {
  struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e9 + t.tv_nsec;
}
static double cpu(int who) {
  struct rusage r; getrusage(who, &r);
  return (r.ru_utime.tv_sec + r.ru_stime.tv_sec) * 1e9 + (r.ru_utime.tv_usec + r.ru_stime.tv_usec) * 1e3;
}
int main(int argc, char **argv) {
  long n = atol(argv[2]);
  double t0 = now();
  if (!strcmp(argv[1], "getpid")) {
    for (long i = 0; i < n; i++) syscall(SYS_getpid);
  } else if (!strcmp(argv[1], "spin")) {
    /* getpid for n seconds; prints the calls made */
    long c = 0; double end = t0 + n * 1e9;
    while (now() < end) { for (int i = 0; i < 1000; i++) syscall(SYS_getpid); c += 1000; }
    printf("%ld\n", c); return 0;
  } else if (!strcmp(argv[1], "paced")) {
    /* getpid at argv[3] calls/s for n seconds, in batches of 100 */
    double rate = atof(argv[3]), end = t0 + n * 1e9, next = t0;
    long c = 0;
    while (next < end) {
      while (now() < next) ;
      for (int i = 0; i < 100; i++) syscall(SYS_getpid);
      c += 100; next += 100 * 1e9 / rate;
    }
    printf("%ld\n", c); return 0;
  } else {
    int a[2], b[2]; char x = 0;
    if (pipe(a) || pipe(b)) return 1;
    pid_t p = fork();
    if (p == 0) {
      for (long i = 0; i < n; i++) { if (read(a[0], &x, 1) != 1 || write(b[1], &x, 1) != 1) _exit(1); }
      _exit(0);
    }
    for (long i = 0; i < n; i++) { if (write(a[1], &x, 1) != 1 || read(b[0], &x, 1) != 1) return 1; }
    waitpid(p, NULL, 0);
  }
  double wall = now() - t0;
  double c = cpu(RUSAGE_SELF) + cpu(RUSAGE_CHILDREN);
  printf("%.1f %.1f\n", wall / n, c / n);
  return 0;
}
C
cc -O2 -o "$W/load" "$W/load.c"
LAST=$(( $(nproc) - 1 ))

median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

# run_load KIND COUNT → "wall cpu" (medians)
run_load() {
  local out walls cpus
  out=$(for _ in $(seq "$REPS"); do taskset -c "$LAST" "$W/load" "$1" "$2"; done)
  walls=$(echo "$out" | awk '{print $1}' | median)
  cpus=$(echo "$out" | awk '{print $2}' | median)
  echo "$walls $cpus"
}

start_tracekit() { # extra arguments replace `--events syscalls`
  rm -rf "$W/tk"
  local args=("$@")
  [ ${#args[@]} -gt 0 ] || args=(--events syscalls)
  "$TRACEKIT" record -o "$W/tk" "${args[@]}" >"$W/tk.out" 2>"$W/tk.err" &
  REC=$!
  # Tracing is on once the instance exists and the statedump is written.
  for _ in $(seq 100); do grep -q recording "$W/tk.err" 2>/dev/null && break; sleep 0.05; done
  sleep 0.5
}
stop_tracekit() {
  kill -INT "$REC"; wait "$REC" || true; REC=
}

declare -A R
for kind in getpid pingpong; do
  n=$N; [ $kind = pingpong ] && n=$M
  R[off,$kind]=$(run_load $kind $n)
  start_tracekit
  R[tk,$kind]=$(run_load $kind $n)
  stop_tracekit
  R[tk_lost,$kind]=$(sed -n 's/^lost in the kernel buffers: \([0-9]*\).*/\1/p' "$W/tk.out")
  if command -v perf >/dev/null; then
    perf record -q -a -e 'raw_syscalls:*' -o "$W/perf.data" -- sleep 3600 >/dev/null 2>"$W/perf.err" &
    PERF=$!
    sleep 1.5
    R[perf,$kind]=$(run_load $kind $n)
    kill -INT $PERF; wait $PERF 2>/dev/null || true
    R[perf_lost,$kind]=$(grep -o 'lost [0-9]* chunks' "$W/perf.err" | head -1 || true)
  fi
done

printf '\n%-10s %-28s %14s %14s %10s %10s\n' workload config "wall ns/op" "CPU ns/op" "wall ×off" "CPU ×off"
for kind in getpid pingpong; do
  read -r w0 c0 <<<"${R[off,$kind]}"
  for cfg in off tk perf; do
    [ -n "${R[$cfg,$kind]:-}" ] || continue
    read -r w c <<<"${R[$cfg,$kind]}"
    name=$cfg; [ $cfg = off ] && name="tracing off"; [ $cfg = tk ] && name="tracekit record syscalls"
    [ $cfg = perf ] && name="perf record raw_syscalls:*"
    printf '%-10s %-28s %14.1f %14.1f %10.2f %10.2f\n' $kind "$name" "$w" "$c" \
      "$(echo "$w / $w0" | bc -l)" "$(echo "$c / $c0" | bc -l)"
  done
done
echo
for kind in getpid pingpong; do
  read -r _ c0 <<<"${R[off,$kind]}"
  per=2; [ $kind = pingpong ] && per=8
  for cfg in tk perf; do
    [ -n "${R[$cfg,$kind]:-}" ] || continue
    read -r _ c <<<"${R[$cfg,$kind]}"
    printf '%-10s %-6s ≈ %.0f ns CPU per syscall event (%d events/op)\n' $kind $cfg \
      "$(echo "($c - $c0) / $per" | bc -l)" $per
  done
  echo "$kind: tracekit lost ${R[tk_lost,$kind]:-?} events; perf: ${R[perf_lost,$kind]:-no loss reported}"
done

# --stacks: per switch armed, per stack fired, against perf record -g.
echo
declare -A S
S[off]=$(run_load pingpong "$M")
for cfg in sched armed fired; do
  case $cfg in
    sched) start_tracekit --events sched ;;
    armed) start_tracekit --events sched --stacks 'offcpu>1s' ;;
    fired) start_tracekit --events sched --stacks 'offcpu>1ns' ;;
  esac
  S[$cfg]=$(run_load pingpong "$M")
  stop_tracekit
  S[${cfg}_stacks]=$(sed -n 's/^stacks (eBPF): \([0-9]*\) stack events.*/\1/p' "$W/tk.out")
  S[${cfg}_slost]=$(sed -n 's/^stacks (eBPF): [0-9]* stack events, \([0-9]*\) lost.*/\1/p' "$W/tk.out")
  S[${cfg}_lost]=$(sed -n 's/^lost in the kernel buffers: \([0-9]*\).*/\1/p' "$W/tk.out")
done
if command -v perf >/dev/null; then
  perf record -q -g -a -e sched:sched_switch -o "$W/perf.data" -- sleep 3600 >/dev/null 2>"$W/perf.err" &
  PERF=$!
  sleep 1.5
  S[perf]=$(run_load pingpong "$M")
  kill -INT $PERF; wait $PERF 2>/dev/null || true
fi
printf '%-44s %14s %14s\n' "pingpong (2 switches, 2 wakeups per op)" "wall ns/op" "CPU ns/op"
for cfg in off sched armed fired perf; do
  [ -n "${S[$cfg]:-}" ] || continue
  read -r w c <<<"${S[$cfg]}"
  case $cfg in
    off) name="tracing off" ;;
    sched) name="tracekit record --events sched" ;;
    armed) name="  + --stacks offcpu>1s (armed)" ;;
    fired) name="  + --stacks offcpu>1ns (fires 4/op)" ;;
    perf) name="perf record -g -e sched:sched_switch" ;;
  esac
  printf '%-44s %14.1f %14.1f\n' "$name" "$w" "$c"
done
read -r _ cs <<<"${S[sched]}"
read -r _ ca <<<"${S[armed]}"
read -r _ cf <<<"${S[fired]}"
read -r _ c0 <<<"${S[off]}"
printf 'stacks: armed ≈ %.0f ns CPU per switch; fired ≈ %.0f ns CPU per stack (%s stacks written, %s lost by the helper, %s events lost)\n' \
  "$(echo "($ca - $cs) / 2" | bc -l)" "$(echo "($cf - $cs) / 4" | bc -l)" "${S[fired_stacks]:-?}" "${S[fired_slost]:-?}" "${S[fired_lost]:-?}"
if [ -n "${S[perf]:-}" ]; then
  read -r _ cp <<<"${S[perf]}"
  printf 'stacks: perf record -g ≈ %.0f ns CPU per stack (one per switch, over tracing off)\n' \
    "$(echo "($cp - $c0) / 2" | bc -l)"
fi

# Highest rate without loss: getpid paced at a target rate (2 events per call) on one CPU while
# tracekit records; the rate doubles until events are lost. Then unpaced loops on every CPU.
echo
rec_rate() { # $1 = description, then the load commands run in the background
  rm -rf "$W/tk"
  "$TRACEKIT" record -o "$W/tk" --events syscalls --duration $((RATE_SECS + 2)) >"$W/tk.out" 2>"$W/tk.err" &
  REC=$!
  sleep 1
  eval "$2"
  wait "$REC" || true; REC=
  wait
  EV=$(sed -n 's/^events: \([0-9]*\).*/\1/p' "$W/tk.out")
  LOST=$(sed -n 's/^lost in the kernel buffers: \([0-9]*\).*/\1/p' "$W/tk.out")
  echo "rate: $1: $EV events recorded, $LOST lost"
}
best=0
for ev_rate in 250000 500000 1000000 2000000 4000000; do
  rec_rate "getpid paced at $ev_rate events/s for ${RATE_SECS} s" \
    "taskset -c $LAST $W/load paced $RATE_SECS $((ev_rate / 2)) >/dev/null &"
  [ "${LOST:-1}" = 0 ] || break
  best=$ev_rate
done
echo "rate: highest paced rate without loss: $best events/s (of the doubling steps tried)"
for loops in 1 $(nproc); do
  rec_rate "$loops unpaced getpid loop(s) for ${RATE_SECS} s" \
    "for i in \$(seq 0 $((loops - 1))); do taskset -c \$i $W/load spin $RATE_SECS >/dev/null & done"
  echo "rate: ≈ $(echo "$EV / $RATE_SECS" | bc) events/s recorded over the spin time"
done
