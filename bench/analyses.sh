#!/usr/bin/env bash
# Kernel analyses: `tracekit analyze NAME --mi` vs `lttng-NAME-mi` (python3-lttnganalyses).
# See bench/README.md ("bench/analyses.sh").
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
TARGET=${CARGO_TARGET_DIR:-$ROOT/target}
TK=$TARGET/release/tracekit
WORK=${BENCH_DIR:-$(mktemp -d /tmp/tk-anbench.XXXXXX)}
GEN_EVENTS=${BENCH_EVENTS:-1000000}
SCALE_EVENTS=${BENCH_SCALE_EVENTS:-$((2 * GEN_EVENTS))}
PY_TIMEOUT=${BENCH_PY_TIMEOUT:-90}
# Analyses run on the Python side for the generated trace (lttng-analyses: ~28 k events/s).
PY_GEN=${BENCH_PY_GEN:-"cputop syscallstats"}
TK_REPS=${BENCH_TK_REPS:-20}
TARGET_RATIO=1000

SWITCH='switch : $evt.$name == "sched_switch" && $evt.next_tid != 0 : $evt.$name == "sched_switch" && $evt.prev_tid == $begin.$evt.next_tid && $evt.cpu_id == $begin.$evt.cpu_id'
ANALYSES="cputop syscallstats irqstats schedtop memtop iolatencystats iousagetop periodstats"

[[ -x /usr/bin/time ]] || { echo "needs GNU /usr/bin/time (apt install time)" >&2; exit 1; }
command -v lttng-cputop-mi >/dev/null || {
    echo "needs lttng-analyses (apt install python3-lttnganalyses)" >&2
    exit 1
}

echo "== build (release)"
(cd "$ROOT" && cargo build --release -q -p tracekit)
mkdir -p "$WORK"
echo "work dir: $WORK"

# lttng-analyses only reads a trace whose directory is named `kernel`.
TRACES=()
if [[ -n ${TRACEKIT_SHARED:-} && -d $TRACEKIT_SHARED/traces/kernel/many-threads ]]; then
    if [[ ! -d $WORK/many-threads/kernel ]]; then
        mkdir -p "$WORK/many-threads"
        cp -r "$TRACEKIT_SHARED/traces/kernel/many-threads" "$WORK/many-threads/kernel"
    fi
    TRACES+=(many-threads)
else
    echo "TRACEKIT_SHARED is unset (or has no traces/kernel/many-threads): generated trace only"
fi
gen() { # gen NAME EVENTS
    if [[ ! -f $WORK/$1.done ]]; then
        rm -rf "${WORK:?}/$1"
        mkdir -p "$WORK/$1"
        "$TK" gen kernel-mix --events "$2" --seed 1 -o "$WORK/$1/kernel" >/dev/null
        touch "$WORK/$1.done"
    fi
}
echo "== generate kernel-mix ($GEN_EVENTS and $SCALE_EVENTS events)"
gen gen-$GEN_EVENTS "$GEN_EVENTS"
gen gen-$SCALE_EVENTS "$SCALE_EVENTS"
TRACES+=(gen-$GEN_EVENTS)

events() { "$TK" count --json "$1" | sed -n 's/^  "events": \([0-9]*\),$/\1/p'; }

# The traces as a trace read from disk is cached (the copies and generated files are otherwise
# cached as their writes left them).
# shellcheck source=bench/page-cache.sh
source "$ROOT/bench/page-cache.sh"

# measure OUT CMD...: CPU seconds (user+sys), peak RSS (KiB), exit status, into OUT.
measure() {
    local out=$1
    shift
    local rc=0
    /usr/bin/time -f '%U %S %M' -o "$out.time" "$@" >"$out.stdout" 2>"$out.stderr" || rc=$?
    local u s m
    read -r u s m < <(grep -E '^[0-9.]+ [0-9.]+ [0-9]+$' "$out.time" | tail -1)
    echo "$(awk -v u="$u" -v s="$s" 'BEGIN { printf "%.3f", u + s }') $m $rc" >"$out"
}

# measure_tk OUT CMD...: as measure, CMD run TK_REPS times (time reports 10 ms steps), per run.
measure_tk() {
    local out=$1
    shift
    measure "$out.loop" bash -c 'for ((i = 0; i < $0; i++)); do "$@" >/dev/null || exit; done' \
        "$TK_REPS" "$@"
    read -r s m rc <"$out.loop"
    echo "$(awk -v s="$s" -v r="$TK_REPS" 'BEGIN { printf "%.4f", s / r }') $m $rc" >"$out"
}

args_of() { # the analysis' extra arguments
    if [[ $1 == periodstats ]]; then printf '%s\0' --period "$SWITCH"; fi
}

RES=$WORK/results
mkdir -p "$RES"
ROWS=()
for t in "${TRACES[@]}"; do
    dir=$WORK/$t/kernel
    n=$(events "$dir")
    cache_from_disk "$dir"
    for a in $ANALYSES; do
        mapfile -d '' extra < <(args_of "$a")
        echo "== $t $a ($n events)"
        measure_tk "$RES/$t-$a-tk" "$TK" analyze "$a" --mi "${extra[@]}" "$dir"
        py=skip
        if [[ $t != gen-* || " $PY_GEN " == *" $a "* ]]; then
            # The -mi tools have no progress output (and reject --no-progress).
            measure "$RES/$t-$a-py" timeout "$PY_TIMEOUT" "lttng-$a-mi" "${extra[@]}" "$dir"
            py=run
        fi
        ROWS+=("$t $a $n $py")
    done
done

echo
echo "== results (CPU seconds = user + sys; Python capped at ${PY_TIMEOUT}s, '>' = lower bound)"
printf '%-14s %-15s %9s %9s %12s %9s %12s %10s %9s\n' \
    trace analysis events tk_s tk_ev/s py_s py_ev/s speedup tk_RSS_MB
for r in "${ROWS[@]}"; do
    read -r t a n py <<<"$r"
    read -r ts tm trc <"$RES/$t-$a-tk"
    [[ $trc == 0 ]] || echo "  (tracekit exited $trc: $(head -c 200 "$RES/$t-$a-tk.stderr"))"
    if [[ $py == run ]]; then
        read -r ps _ prc <"$RES/$t-$a-py"
        # timeout(1) exits 124 when it stopped the analysis: the speedup is a lower bound.
        awk -v t="$t" -v a="$a" -v n="$n" -v ts="$ts" -v tm="$tm" -v ps="$ps" -v prc="$prc" 'BEGIN {
            lb = (prc == 124 ? ">" : (prc == 0 ? "" : "err"))
            if (ts < 0.001) ts = 0.001
            printf "%-14s %-15s %9d %9.4f %12.0f %9s %12s %10s %9.1f\n", t, a, n, ts, n / ts,
                lb sprintf("%.1f", ps), (lb == "" ? sprintf("%.0f", n / ps) : "<" sprintf("%.0f", n / ps)),
                lb sprintf("%.0fx", ps / ts), tm / 1024 }'
    else
        awk -v t="$t" -v a="$a" -v n="$n" -v ts="$ts" -v tm="$tm" 'BEGIN {
            if (ts < 0.001) ts = 0.001
            printf "%-14s %-15s %9d %9.4f %12.0f %9s %12s %10s %9.1f\n", t, a, n, ts, n / ts,
                "-", "-", "-", tm / 1024 }'
    fi
done | tee "$RES/table.txt"

echo
# What no speed of reading events can go below: starting, opening the trace (its metadata,
# indexes) and reading its last packet, against lttng-analyses' whole cputop run.
echo "== floor: tracekit analyze cputop --mi --begin <last event time> (start, open, one packet)"
printf '%-14s %9s %9s %12s\n' trace floor_s py_s max_speedup
for t in "${TRACES[@]}"; do
    dir=$WORK/$t/kernel
    [[ -f $RES/$t-cputop-py ]] || continue
    end=$("$TK" count --json "$dir" | sed -n 's/^  "end_ns": \([0-9]*\),*$/\1/p')
    measure_tk "$RES/$t-floor" "$TK" analyze cputop --mi --begin "$end" "$dir"
    read -r fs _ frc <"$RES/$t-floor"
    read -r ps _ _ <"$RES/$t-cputop-py"
    [[ $frc == 0 ]] || echo "  (tracekit exited $frc: $(head -c 200 "$RES/$t-floor.stderr"))"
    awk -v t="$t" -v fs="$fs" -v ps="$ps" 'BEGIN {
        if (fs < 0.0001) fs = 0.0001
        printf "%-14s %9.4f %9.1f %11.0fx\n", t, fs, ps, ps / fs }'
done | tee "$RES/floor.txt"

echo
echo "== tracekit peak RSS vs trace size (MB)"
cache_from_disk "$WORK/gen-$SCALE_EVENTS/kernel"
printf '%-15s %12s %12s\n' analysis "$GEN_EVENTS" "$SCALE_EVENTS"
for a in $ANALYSES; do
    mapfile -d '' extra < <(args_of "$a")
    measure_tk "$RES/scale-$a" "$TK" analyze "$a" --mi "${extra[@]}" "$WORK/gen-$SCALE_EVENTS/kernel"
    read -r _ m1 _ <"$RES/gen-$GEN_EVENTS-$a-tk"
    read -r _ m2 _ <"$RES/scale-$a"
    awk -v a="$a" -v m1="$m1" -v m2="$m2" 'BEGIN { printf "%-15s %12.1f %12.1f\n", a, m1 / 1024, m2 / 1024 }'
done | tee "$RES/rss.txt"

echo
awk -v target=$TARGET_RATIO '
    $8 ~ /x$/ { v = $8; lb = (v ~ /^>/); gsub(/[>x]/, "", v); n++
                if (n == 1 || v + 0 < min) { min = v + 0; minlb = lb; which = $1 " " $2 } }
    END {
        if (!n) { print "no Python run to compare with"; exit }
        verdict = (min >= target ? "met" : (minlb ? "not shown (lower bound below target)" : "NOT met"))
        printf "target: >= %dx speedup on every analysis; lowest: %s%.0fx (%s): %s\n",
            target, (minlb ? ">" : ""), min, which, verdict
    }' "$RES/table.txt"
echo "results in $RES"
