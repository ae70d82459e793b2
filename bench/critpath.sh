#!/usr/bin/env bash
# Critical-path benchmark: graph build + critical path of one busy thread on large generated
# kernel traces (release build).
#
#   bench/critpath.sh                              # 10 M and 50 M events
#   CRITPATH_EVENTS="1000000 5000000" bench/critpath.sh
#   KEEP=1 bench/critpath.sh                       # keep the 50 M trace (~1.5 GB)
#
# Environment:
#   BENCH_DIR         where traces are generated (and reused) and results written (target/bench-data)
#   CRITPATH_EVENTS   space-separated trace sizes, events                      ("10000000 50000000")
#   CRITPATH_RUNS     timed runs per size (the fastest is reported)             (1)
#   KEEP=1            keep traces of 50 M events or more (deleted at the end by default)
#   CARGO_TARGET_DIR  honoured (the binary is $CARGO_TARGET_DIR/release/tracekit)
#
# See bench/README.md.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

BENCH_DIR="${BENCH_DIR:-target/bench-data}"
CRITPATH_EVENTS="${CRITPATH_EVENTS:-10000000 50000000}"
CRITPATH_RUNS="${CRITPATH_RUNS:-1}"
KEEP="${KEEP:-0}"
SEED=1
CPUS=4
BIG=50000000

die() { echo "critpath-bench: error: $*" >&2; exit 1; }
log() { echo "critpath-bench: $*" >&2; }

for n in $CRITPATH_EVENTS; do
    [[ "$n" =~ ^[0-9]+$ ]] || die "CRITPATH_EVENTS must be numbers, got '$n'"
done
[[ "$CRITPATH_RUNS" =~ ^[1-9][0-9]*$ ]] || die "CRITPATH_RUNS must be a positive number"
[[ -x /usr/bin/time ]] || die "/usr/bin/time (GNU time) not found: apt install time"
command -v python3 >/dev/null 2>&1 || die "python3 not found (used to read JSON)"

log "building tracekit (release)"
cargo build --release -p tracekit >&2
TARGET_DIR="${CARGO_TARGET_DIR:-target}"
TK="$(cd "$TARGET_DIR/release" && pwd)/tracekit"
[[ -x "$TK" ]] || die "built binary not found at $TK"

mkdir -p "$BENCH_DIR"
BENCH_DIR="$(cd "$BENCH_DIR" && pwd)"
RESULTS="$BENCH_DIR/critpath-results-$(date +%Y%m%d-%H%M%S).txt"
TO_DELETE=()
cleanup() {
    for d in "${TO_DELETE[@]+"${TO_DELETE[@]}"}"; do
        log "deleting $d (KEEP=1 keeps it)"
        rm -rf "$d" "$d.done"
    done
}
trap cleanup EXIT

# Generates the trace of $1 events once (a `.done` file next to it marks a complete trace).
trace_of() {
    local n="$1" dir="$BENCH_DIR/kernel-mix-$1-c$CPUS-s$SEED"
    if [[ ! -f "$dir.done" || ! -f "$dir/metadata" ]]; then
        log "generating $n events into $dir"
        rm -rf "$dir" "$dir.done"
        "$TK" gen kernel-mix --events "$n" --cpus "$CPUS" -o "$dir" --seed "$SEED" >"$dir.gen.tmp"
        mv "$dir.gen.tmp" "$dir.done"
    fi
    echo "$dir"
}

# The thread switched in most often in the first 2 M events (a busy thread).
busy_tid() (
    set +o pipefail # `head` closes the pipe early
    "$TK" print "$1" 2>/dev/null | head -n 2000000 | awk '
        /sched_switch/ {
            if (match($0, /next_tid = [0-9]+/)) {
                t = substr($0, RSTART + 11, RLENGTH - 11)
                if (t != "0") c[t]++
            }
        }
        END { best = ""; for (t in c) if (best == "" || c[t] > c[best]) best = t; print best }'
)

printf '%-10s %-8s %9s %9s %9s %9s %12s %9s %12s %12s %10s %9s\n' \
    events tid wall_s cpu_s build_s path_s events/s rss_MiB vertices vedges graph_MiB path_segs \
    | tee "$RESULTS"

for n in $CRITPATH_EVENTS; do
    dir="$(trace_of "$n")"
    if (( n >= BIG )) && [[ "$KEEP" != 1 ]]; then
        TO_DELETE+=("$dir")
    fi
    log "warming the page cache and counting events ($dir)"
    events="$("$TK" count --json "$dir" | python3 -c 'import json,sys; print(json.load(sys.stdin)["events"])')"
    tid="$(busy_tid "$dir")"
    [[ -n "$tid" ]] || die "no busy thread found in $dir"
    best=""
    for ((r = 1; r <= CRITPATH_RUNS; r++)); do
        log "run $r/$CRITPATH_RUNS: tracekit critpath $dir --tid $tid --json --timings"
        out="$BENCH_DIR/critpath-$n.json"
        err="$BENCH_DIR/critpath-$n.err"
        /usr/bin/time -f 'TIME %e %U %S %M' -o "$BENCH_DIR/critpath-$n.time" \
            "$TK" critpath "$dir" --tid "$tid" --json --timings >"$out" 2>"$err" \
            || { cat "$err" >&2; die "critpath failed on $dir"; }
        line="$(python3 - "$out" "$err" "$BENCH_DIR/critpath-$n.time" "$events" "$tid" <<'EOF'
import json, re, sys
out, err, timef, events, tid = sys.argv[1:6]
d = json.load(open(out))
t = open(timef).read().split("TIME ")[-1].split()
wall, user, sys_, rss_kib = float(t[0]), float(t[1]), float(t[2]), int(t[3])
m = re.search(r"build ([0-9.]+) s, path ([0-9.]+) s", open(err).read())
build, path = (float(m.group(1)), float(m.group(2))) if m else (float("nan"), float("nan"))
g = d["graph"]
events = int(events)
print("%-10d %-8s %9.2f %9.2f %9.2f %9.3f %12.0f %9.0f %12d %12d %10.1f %9d" % (
    events, tid, wall, user + sys_, build, path, events / wall, rss_kib / 1024,
    g["vertices"], g["vertical_edges"], g["heap_bytes"] / 2**20, len(d["path"])))
EOF
)"
        wall="$(awk '{print $3}' <<<"$line")"
        if [[ -z "$best" ]] || awk -v a="$wall" -v b="$(awk '{print $3}' <<<"$best")" 'BEGIN{exit !(a < b)}'; then
            best="$line"
        fi
    done
    echo "$best" | tee -a "$RESULTS"
done

log "results saved to $RESULTS"
