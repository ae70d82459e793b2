#!/usr/bin/env bash
# Perfetto export benchmark: `tracekit export --format perfetto` against `tracekit count` on
# the generated 5 M-event kernel trace of bench/run.sh (release build, feature `perfetto`).
#
#   bench/perfetto.sh
#   BENCH_EVENTS=1000000 BENCH_RUNS=5 bench/perfetto.sh
#
# Environment:
#   BENCH_DIR         where the trace is generated (and reused) and the export written (target/bench-data)
#   BENCH_EVENTS      events of the trace                                        (5000000)
#   BENCH_RUNS        timed runs per command; the median is reported             (3)
#   CARGO_TARGET_DIR  honoured (the binary is $CARGO_TARGET_DIR/release/tracekit)
#
# Prints, per command: median wall seconds, CPU seconds (user+sys) of that run, events/s
# (the trace's events, as `count --json` counts them, per wall second), peak RSS; then the
# export's size: bytes per event read and per event written, and against the trace's size.
# See bench/README.md.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

BENCH_DIR="${BENCH_DIR:-target/bench-data}"
BENCH_EVENTS="${BENCH_EVENTS:-5000000}"
BENCH_RUNS="${BENCH_RUNS:-3}"

die() { echo "perfetto-bench: error: $*" >&2; exit 1; }
log() { echo "perfetto-bench: $*" >&2; }

[[ "$BENCH_EVENTS" =~ ^[0-9]+$ ]] || die "BENCH_EVENTS must be a number"
[[ "$BENCH_RUNS" =~ ^[1-9][0-9]*$ ]] || die "BENCH_RUNS must be a positive number"
[[ -x /usr/bin/time ]] || die "/usr/bin/time (GNU time) not found: apt install time"

log "building tracekit (release, --features perfetto)"
cargo build --release -q -p tracekit --features perfetto
TK="${CARGO_TARGET_DIR:-target}/release/tracekit"

mkdir -p "$BENCH_DIR"
TRACE="$BENCH_DIR/kernel-mix-$BENCH_EVENTS-c4-s1"
if [[ ! -f "$TRACE.done" ]]; then
    log "generating $TRACE"
    rm -rf "$TRACE"
    "$TK" gen kernel-mix --events "$BENCH_EVENTS" --cpus 4 --seed 1 -o "$TRACE" >/dev/null
    touch "$TRACE.done"
fi
OUT="$BENCH_DIR/kernel-mix-$BENCH_EVENTS.pftrace"
EVENTS=$("$TK" count --json "$TRACE" | python3 -c 'import json,sys; print(json.load(sys.stdin)["events"])')

# Median of BENCH_RUNS runs of a command: "wall cpu rss_kib".
timed() {
    local runs=() t
    t=$(mktemp)
    for _ in $(seq "$BENCH_RUNS"); do
        /usr/bin/time -o "$t" -f '%e %U %S %M' "$@" >/dev/null 2>&1
        runs+=("$(tail -1 "$t")")
    done
    rm -f "$t"
    printf '%s\n' "${runs[@]}" | sort -n | awk -v n="$BENCH_RUNS" 'NR == int((n + 1) / 2) { printf "%s %.2f %s\n", $1, $2 + $3, $4 }'
}

printf '%-10s %-58s %8s %8s %10s %8s\n' row command "wall s" "CPU s" events/s "RSS MiB"
row() {
    local name=$1; shift
    read -r wall cpu rss < <(timed "$@")
    printf '%-10s %-58s %8.3f %8.2f %9.2fM %8.1f\n' "$name" "$*" "$wall" "$cpu" \
        "$(python3 -c "print($EVENTS / max($wall, 1e-9) / 1e6)")" "$(python3 -c "print($rss / 1024)")"
    LAST_WALL=$wall
}
row count "$TK" count "$TRACE"
count_wall=$LAST_WALL
row export "$TK" export --format perfetto -o "$OUT" "$TRACE"
export_wall=$LAST_WALL
written=$("$TK" export --format perfetto -o "$OUT" "$TRACE" 2>&1 | sed -n 's/.*(\([0-9]*\) of .*/\1/p')
bytes=$(stat -c %s "$OUT")
trace_bytes=$(du -sbL "$TRACE" | cut -f1)
python3 - "$EVENTS" "$written" "$bytes" "$trace_bytes" "$count_wall" "$export_wall" <<'PY'
import sys
events, written, size, trace, count_wall, export_wall = map(float, sys.argv[1:])
print(f"trace: {int(events)} events, {trace / 2**20:.1f} MiB; export: {int(written)} events written, "
      f"{size / 2**20:.1f} MiB = {size / trace:.2f}x the trace")
print(f"bytes per event: {size / events:.1f} per event read, {size / written:.1f} per event written")
print(f"export speed: {count_wall / export_wall:.3f} of count's (goal: >= 1/3)")
PY
