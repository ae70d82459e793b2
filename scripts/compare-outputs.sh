#!/usr/bin/env bash
# Output-regression net: runs a tracekit binary over the real traces and generated scenarios,
# and saves each command's exit status, stdout and stderr, so two binaries (before/after a
# refactor) can be compared byte for byte.
#
#   scripts/compare-outputs.sh OUT_DIR [TRACEKIT_BIN]   (default: target/release/tracekit)
#   scripts/compare-outputs.sh --diff A B               (exit 1 if any output differs)
#
# OUT_DIR/<group>/<command>.txt holds, for one command: the command line, `--- exit status`,
# `--- stdout (N bytes)` then the stdout, `--- stderr (N bytes)` then the stderr (captured
# separately, not interleaved). OUT_DIR/_meta (binary, timings, per-command durations) is not
# compared. Commands run with TZ=UTC LC_ALL=C, stdin /dev/null (so no progress bar), and paths
# relative to the traces' root (or the generated traces' dir), so outputs do not depend on
# where the traces live.
#
# Environment:
#   TRACEKIT_SHARED     holds traces/ (kernel, ust, ctf, ctf2)         [/work/shared]
#   COMPARE_GEN_DIR     cache of the generated scenarios, shared by runs [/tmp/tracekit-compare-gen]
#   COMPARE_GEN_BIN     binary that creates the cache if it is missing  [TRACEKIT_BIN]
#                       (create it with the "before" binary: both runs must read the same bytes)
#   COMPARE_JOBS        commands run in parallel                        [2]
#   COMPARE_TIMEOUT     seconds per command (exit status 124 if hit)    [120]
#
# Not compared / normalized: `gen` prints its own run time ("in 0.02 s", "M events/s"), replaced
# by X in gen/*.txt; the generated files themselves are compared by their sha256.
# Not run: `critpath --timings` (wall-clock times), `demo` (writes to the temp dir; its parts
# are covered: gen, sync, analyze, critpath), `record` (needs root and a live kernel).
set -uo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)

# ---------------------------------------------------------------------------------------- diff
if [[ ${1:-} == --diff ]]; then
    [[ $# == 3 && -d $2 && -d $3 ]] || { echo "usage: $0 --diff DIR_A DIR_B" >&2; exit 2; }
    A=$2 B=$3
    list() { (cd "$1" && find . -path ./_meta -prune -o -type f -print | sed 's|^\./||' | LC_ALL=C sort); }
    same=0 differ=() only_a=() only_b=()
    while IFS=$'\t' read -r where f; do
        case $where in
        both) if cmp -s "$A/$f" "$B/$f"; then same=$((same + 1)); else differ+=("$f"); fi ;;
        a) only_a+=("$f") ;;
        b) only_b+=("$f") ;;
        esac
    done < <(LC_ALL=C join -t $'\1' -a1 -a2 -o 1.1,2.1 <(list "$A") <(list "$B") |
        awk -F'\1' '$1 == "" { print "b\t" $2; next } $2 == "" { print "a\t" $1; next } { print "both\t" $1 }')
    shown=0
    for f in "${differ[@]}"; do
        echo "DIFFERS: $f"
        if ((shown < ${COMPARE_DIFF_SHOW:-10})); then
            shown=$((shown + 1))
            # The first difference, with a few lines of context (the files can be tens of MB).
            line=$(cmp "$A/$f" "$B/$f" 2>/dev/null | sed -n 's/.* line \([0-9]*\).*/\1/p')
            line=${line:-1}
            from=$((line > 3 ? line - 3 : 1))
            echo "    first difference at line $line (excerpt from line $from):"
            diff <(sed -n "${from},$((line + 8))p" "$A/$f") <(sed -n "${from},$((line + 8))p" "$B/$f") |
                head -n 30 | sed 's/^/    /' | cut -c1-220
        fi
    done
    for f in "${only_a[@]}"; do echo "ONLY IN $A: $f"; done
    for f in "${only_b[@]}"; do echo "ONLY IN $B: $f"; done
    total=$((same + ${#differ[@]} + ${#only_a[@]} + ${#only_b[@]}))
    echo "summary: $total outputs: $same identical, ${#differ[@]} differing, ${#only_a[@]} only in $A, ${#only_b[@]} only in $B"
    [[ ${#differ[@]} == 0 && ${#only_a[@]} == 0 && ${#only_b[@]} == 0 ]]
    exit
fi

# ----------------------------------------------------------------------------------------- run
[[ $# -ge 1 && $# -le 2 && $1 != -* ]] || {
    echo "usage: $0 OUT_DIR [TRACEKIT_BIN] | $0 --diff DIR_A DIR_B" >&2
    exit 2
}
OUT=$1
BIN=${2:-$ROOT/target/release/tracekit}
[[ -x $BIN ]] || { echo "no executable $BIN" >&2; exit 2; }
BIN=$(cd "$(dirname "$BIN")" && pwd)/$(basename "$BIN")
SHARED=${TRACEKIT_SHARED:-/work/shared}
TRACES=$SHARED/traces
[[ -d $TRACES ]] || { echo "no $TRACES (set TRACEKIT_SHARED)" >&2; exit 2; }
GEN=${COMPARE_GEN_DIR:-/tmp/tracekit-compare-gen}
GEN_BIN=${COMPARE_GEN_BIN:-$BIN}
JOBS=${COMPARE_JOBS:-2}
TIMEOUT=${COMPARE_TIMEOUT:-120}
if [[ -e $OUT && -n $(ls -A "$OUT" 2>/dev/null) ]]; then
    echo "$OUT exists and is not empty: give a new directory" >&2
    exit 2
fi
mkdir -p "$OUT/_meta"
OUT=$(cd "$OUT" && pwd)
T0=$(date +%s.%N)
export TZ=UTC LC_ALL=C LANG=C RUST_BACKTRACE=0
unset TRACEKIT_LOG RUST_LOG 2>/dev/null || true

# The generated scenarios: NAME then `tracekit gen` arguments (without -o). Changing this list
# regenerates the cache.
GEN_SPECS=(
    "cs1 client-server --seed 1"
    "cs2 client-server --seed 2 --hosts 4 --requests 60"
    "cs3-inet client-server --seed 3 --inet-sock"
    "mix kernel-mix --seed 1 --events 200000"
    "chaos1 chaos --seed 1 --events 20000"
    "chaos2 chaos --seed 2 --events 20000"
    "chaos3 chaos --seed 3 --events 20000"
)
SPEC_TEXT=$(printf '%s\n' "${GEN_SPECS[@]}")

# Creates the cache (atomically: in a temporary dir renamed at the end) if it is missing or
# was made from another list.
if [[ ! -f $GEN/.spec ]] || [[ $(cat "$GEN/.spec") != "$SPEC_TEXT" ]]; then
    echo "generating the scenarios into $GEN with $GEN_BIN"
    tmp=$(mktemp -d "${GEN%/}.tmp.XXXXXX")
    for s in "${GEN_SPECS[@]}"; do
        read -r -a a <<<"$s"
        (cd "$tmp" && "$GEN_BIN" gen "${a[@]:1}" -o "${a[0]}" >/dev/null) ||
            { echo "gen ${a[*]} failed" >&2; rm -rf "$tmp"; exit 2; }
    done
    sha256sum "$GEN_BIN" | cut -d' ' -f1 >"$tmp/.generator"
    printf '%s\n' "$SPEC_TEXT" >"$tmp/.spec"
    rm -rf "$GEN"
    mv "$tmp" "$GEN"
fi

# run GROUP/NAME DIR ARGS...: `tracekit ARGS` in DIR (TRACES or GEN), into OUT/GROUP/NAME.txt,
# COMPARE_JOBS at a time.
NCMD=0
run() {
    local name=$1 dir=$2
    shift 2
    NCMD=$((NCMD + 1))
    while (($(jobs -rp | wc -l) >= JOBS)); do wait -n; done
    run1 "$name" "$dir" "$@" &
}
run1() {
    local name=$1 dir=$2 label
    shift 2
    case $dir in "$TRACES") label=TRACES ;; "$GEN") label=GEN ;; *) label=$dir ;; esac
    local f=$OUT/$name.txt rc=0 t1 t2
    mkdir -p "$(dirname "$f")"
    t1=$(date +%s%N)
    (cd "$dir" && exec timeout "$TIMEOUT" "$BIN" "$@") </dev/null >"$f.out" 2>"$f.err" || rc=$?
    t2=$(date +%s%N)
    {
        printf '$ cd $%s && tracekit' "$label"
        printf ' %q' "$@"
        printf '\n--- exit status: %s\n--- stdout (%s bytes)\n' "$rc" "$(stat -c %s "$f.out")"
        cat "$f.out"
        printf '\n--- stderr (%s bytes)\n' "$(stat -c %s "$f.err")"
        cat "$f.err"
    } >"$f"
    rm -f "$f.out" "$f.err"
    printf '%s\t%d ms\t%s\n' "$name" $(((t2 - t1) / 1000000)) "$rc" >>"$OUT/_meta/durations.tsv"
}
slug() { echo "$1" | sed 's|^\./||; s|/|~|g'; }

# ------------------------------------------------------------------------------ the trace sets
cd "$TRACES" || exit 2
mapfile -t ALL < <(find . -name metadata -type f -printf '%h\n' | sed 's|^\./||' | LC_ALL=C sort -u)
# Groups: directories where traces branch (two or more children hold traces), as multi-trace
# inputs (the root itself excluded).
mapfile -t TGROUPS < <(
    for t in "${ALL[@]}"; do
        d=$t
        while [[ $d == */* ]]; do
            printf '%s\t%s\n' "${d%/*}" "$d"
            d=${d%/*}
        done
    done | LC_ALL=C sort -u | awk -F'\t' '{ n[$1]++ } END { for (d in n) if (n[d] > 1) print d }' | LC_ALL=C sort
)
# Kernel traces (what `analyze` accepts); the list itself is an output.
KERNEL=()
for t in "${ALL[@]}"; do
    "$BIN" analyze cputop --test-compatibility "$t" >/dev/null 2>&1 </dev/null && KERNEL+=("$t")
done
mkdir -p "$OUT/analyze"
printf '%s\n' "${KERNEL[@]}" >"$OUT/analyze/_kernel-traces.txt"
printf '%s\n' "${TGROUPS[@]}" >"$OUT/_meta/groups.txt"

KNAMES=(cputop memtop syscallstats irqstats irqlog irqfreq schedlog schedfreq schedtop schedstats
    iolatencystats iolatencyfreq iolatencytop iolog iousagetop)
PNAMES=(periodlog periodtop periodstats periodfreq)
ALLK=$(IFS=,; echo "${KNAMES[*]}")
SWITCH='switch : $evt.$name == "sched_switch" && $evt.next_tid != 0 : $evt.$name == "sched_switch" && $evt.prev_tid == $begin.$evt.next_tid && $evt.cpu_id == $begin.$evt.cpu_id'
CALL='call : $evt.$name =* "syscall_entry_*" : $evt.$name =* "syscall_exit_*" && $evt.cpu_id == $begin.$evt.cpu_id'
INNER='inner(call) : $evt.$name == "syscall_entry_read" : $evt.$name == "syscall_exit_read"'
IRQ='irq(switch) : $evt.$name == "irq_handler_entry" : $evt.$name == "irq_handler_exit"'
CAPS='switch : tid = $evt.next_tid : out = $evt.prev_state'

# ------------------------------------------------------------------------------------ general
run misc/version "$TRACES" --version
run misc/help "$TRACES" --help
run misc/mi-version "$TRACES" --mi-version
run misc/analyze-mi-version "$TRACES" analyze cputop --mi-version
for c in demo gen print count critpath record sync analyze latency lami-links; do
    run misc/help-$c "$TRACES" "$c" --help
done

# --------------------------------------------------------------------------------------- print
for t in "${ALL[@]}"; do run print/"$(slug "$t")" "$TRACES" print "$t"; done
for g in "${TGROUPS[@]}"; do run print-group/"$(slug "$g")" "$TRACES" print "$g"; done
run print-opt/two-paths-reversed "$TRACES" print kernel/synctraces/scp_src kernel/synctraces/scp_dest
run print-opt/sync-synctraces "$TRACES" print --sync kernel/synctraces
run print-opt/clock-gmt-bug446190 "$TRACES" print --clock-gmt kernel/bug446190
run print-opt/begin-end-bug446190 "$TRACES" print --begin 08:36:05 --end 08:36:06.5 kernel/bug446190
run print-opt/begin-end-date-basic "$TRACES" print --begin '2018-03-19 18:39:21.25' --end '2018-03-19 18:39:21.5' kernel/basic-kernel-analysis
run print-opt/begin-end-seconds-many-threads "$TRACES" print --begin 1457113583.0 --end 1457113583.01 kernel/many-threads
run print-opt/begin-only-ust "$TRACES" print --begin 19:56:52 ust/ros2
run print-opt/begin-after-end "$TRACES" print --begin 08:36:10 --end 08:36:05 kernel/bug446190
run print-opt/bad-time "$TRACES" print --begin 'yesterday' kernel/bug446190
run print-opt/missing-path "$TRACES" print does/not/exist
run print-gen/mix-begin-end "$GEN" print --begin 09:15:45.44 --end 09:15:45.441 mix
run print-gen/mix-begin-seconds "$GEN" print --begin 1709630145.487 mix
run print-gen/cs1-sync "$GEN" print --sync cs1
run print-gen/cs2-sync-begin-end "$GEN" print --sync --begin 19:59:35.4 --end 19:59:35.45 cs2
run print-gen/cs3-inet "$GEN" print cs3-inet
for c in chaos1 chaos2 chaos3; do run print-gen/$c "$GEN" print $c; done

# --------------------------------------------------------------------------------------- count
for t in "${ALL[@]}"; do run count/"$(slug "$t")" "$TRACES" count --json "$t"; done
for g in ctf ctf2 kernel ust kernel/synctraces; do run count-text/"$(slug "$g")" "$TRACES" count "$g"; done
for c in mix cs1 chaos1 chaos2 chaos3; do run count-gen/$c "$GEN" count --json $c; done
run count-gen/mix-text "$GEN" count mix

# ------------------------------------------------------------------------------------- analyze
for t in "${KERNEL[@]}"; do
    s=$(slug "$t")
    for a in "${KNAMES[@]}"; do run analyze-mi/$s/$a "$TRACES" analyze $a --mi "$t"; done
    for a in "${PNAMES[@]}"; do run analyze-mi/$s/$a "$TRACES" analyze $a --mi --period "$SWITCH" "$t"; done
    run analyze-mi/$s/all-in-one-pass "$TRACES" analyze "$ALLK" --mi "$t"
    run analyze-mi/$s/all-no-intersection "$TRACES" analyze "$ALLK" --mi --no-intersection "$t"
done
# Text output: every analysis on a few traces (the tables, bars and histograms).
for t in kernel/basic-kernel-analysis kernel/bug446190 kernel/lttng-analyses-synthetic/io/kernel; do
    s=$(slug "$t")
    for a in "${KNAMES[@]}"; do run analyze-text/$s/$a "$TRACES" analyze $a "$t"; done
    for a in "${PNAMES[@]}"; do run analyze-text/$s/$a "$TRACES" analyze $a --period "$SWITCH" "$t"; done
done
run analyze-text/bug446190-all-no-charts "$TRACES" analyze "$ALLK" --no-charts kernel/bug446190

# Options.
B=kernel/basic-kernel-analysis M=kernel/many-threads U=kernel/bug446190
V=analyze-opt
run $V/basic-begin-end-mi "$TRACES" analyze cputop,syscallstats,schedlog,iolatencystats --mi --begin 18:39:21 --end 18:39:24.5 $B
run $V/basic-begin-end-text "$TRACES" analyze cputop,irqstats,memtop --begin 18:39:21 --end 18:39:24.5 $B
run $V/basic-timerange "$TRACES" analyze "$ALLK" --mi --timerange '[2018-03-19 18:39:20.5,2018-03-19 18:39:23]' $B
run $V/many-threads-begin-end-ns "$TRACES" analyze cputop,schedtop,syscallstats --mi --begin 1457113582900000000 --end 1457113583100000000 $M
run $V/basic-begin-only "$TRACES" analyze cputop,iousagetop --mi --begin 18:39:25 $B
run $V/basic-end-before-begin "$TRACES" analyze cputop --mi --begin 18:39:25 --end 18:39:21 $B
run $V/basic-bad-time "$TRACES" analyze cputop --mi --begin 25:99 $B
run $V/basic-tid-mi "$TRACES" analyze "$ALLK" --mi --tid 13665,13674 $B
run $V/basic-tid-text "$TRACES" analyze cputop,syscallstats,schedlog,iolog --tid 13665 $B
run $V/many-threads-tid "$TRACES" analyze cputop,schedstats,syscallstats,iolatencytop --mi --tid 2673,1382 $M
run $V/basic-procname "$TRACES" analyze "$ALLK" --mi --procname gcc,bash $B
run $V/basic-cpu "$TRACES" analyze "$ALLK" --mi --cpu 1 $B
run $V/many-threads-cpu "$TRACES" analyze cputop,irqstats,schedtop --mi --cpu 0,3,7 $M
run $V/basic-refresh-1s-mi "$TRACES" analyze cputop,irqstats,syscallstats,schedstats --mi --refresh 1 $B
run $V/basic-refresh-1s-text "$TRACES" analyze cputop,irqstats,iolatencyfreq --refresh 1s $B
run $V/many-threads-refresh-100ms "$TRACES" analyze cputop,memtop,schedfreq --mi --refresh 100ms $M
run $V/bug446190-refresh-freq-uniform "$TRACES" analyze irqfreq,schedfreq --mi --refresh 2 --freq-uniform $U
run $V/bug446190-no-intersection "$TRACES" analyze cputop,irqlog --no-intersection $U
run $V/many-threads-limit-3 "$TRACES" analyze cputop,memtop,schedtop,iolatencytop,iousagetop,syscallstats --mi --limit 3 $M
run $V/basic-limit-3-text "$TRACES" analyze cputop,schedtop,iolatencytop,iousagetop --limit 3 $B
run $V/bug446190-min-max "$TRACES" analyze irqlog,irqstats,irqfreq,schedlog,iolatencystats --mi --min 5 --max 500 $U
run $V/bug446190-irq-softirq "$TRACES" analyze irqlog,irqstats,irqfreq --mi --irq 19,41 --softirq 1,7 $U
run $V/basic-minsize-maxsize "$TRACES" analyze iolog,iousagetop,iolatencystats --mi --minsize 100 --maxsize 8192 $B
run $V/bug446190-freq-resolution "$TRACES" analyze irqfreq,schedfreq,iolatencyfreq --mi --freq-resolution 5 $U
run $V/bug446190-freq-uniform-text "$TRACES" analyze irqfreq,schedfreq --freq-uniform $U
run $V/bug446190-freq-series "$TRACES" analyze irqfreq,schedfreq --mi --freq-series $U
run $V/bug446190-freq-series-text "$TRACES" analyze irqfreq --freq-series --no-charts $U
run $V/many-threads-schedstats-total-per-prio "$TRACES" analyze schedstats --mi --total --per-prio --per-tid $M
run $V/basic-schedstats-total-text "$TRACES" analyze schedstats --total $B
run $V/basic-quirks "$TRACES" analyze "$ALLK" --mi --lttng-analyses-quirks $B
run $V/many-threads-quirks "$TRACES" analyze cputop,syscallstats,schedtop,iolatencystats --mi --lttng-analyses-quirks $M
run $V/basic-modes-irq "$TRACES" analyze irqstats --log --freq $B
run $V/basic-modes-io-mi "$TRACES" analyze iolatencytop --stats --usage --log --freq --mi $B
run $V/basic-modes-sched "$TRACES" analyze schedtop --log --stats --freq --mi $B
run $V/basic-mode-missing "$TRACES" analyze cputop --stats --mi $B
run $V/bug446190-output-progress "$TRACES" analyze cputop,irqstats --mi --output-progress $U
run $V/synctraces-sync "$TRACES" analyze cputop,schedtop,syscallstats --mi --sync kernel/synctraces
run $V/synctraces-two-hosts "$TRACES" analyze cputop,irqstats --mi kernel/synctraces
for a in "${KNAMES[@]}" "${PNAMES[@]}"; do run $V/metadata/$a "$TRACES" analyze $a --metadata; done
run $V/metadata-several "$TRACES" analyze cputop,periodlog,iolog --metadata
run $V/compat-ust-mi "$TRACES" analyze cputop --mi --test-compatibility ust/ros2
run $V/compat-ust-text "$TRACES" analyze cputop --test-compatibility ust/ros2
run $V/compat-kernel "$TRACES" analyze cputop --test-compatibility $B
run $V/ust-trace-mi "$TRACES" analyze cputop --mi ust/ros2
run $V/unknown-name "$TRACES" analyze cputopp --mi $B
run $V/refresh-with-period "$TRACES" analyze periodlog --mi --refresh 1 --period "$SWITCH" $B
run $V/bad-refresh "$TRACES" analyze cputop --mi --refresh abc $B
run $V/missing-path-mi "$TRACES" analyze cputop --mi does/not/exist
# Periods: nested definitions, captures, group-by, select, aggregate-by, order, durations.
P=analyze-period
run $P/bug446190-nested-freq "$TRACES" analyze periodfreq --mi --freq-resolution 5 --period "$SWITCH" --period "$IRQ" $U
run $P/bug446190-nested-freq-text "$TRACES" analyze periodfreq --freq-resolution 5 --period "$SWITCH" --period "$IRQ" $U
run $P/basic-calls-all "$TRACES" analyze periodlog,periodtop,periodstats,periodfreq --mi --period "$CALL" --period "$INNER" $B
run $P/basic-calls-aggregate "$TRACES" analyze periodstats,periodtop --mi --period "$CALL" --period "$INNER" --aggregate-by call $B
run $P/many-threads-captures-group-by "$TRACES" analyze periodstats,periodtop --mi --limit 5 --period "$SWITCH" --period-captures "$CAPS" --group-by switch.tid $M
run $P/many-threads-captures-log-text "$TRACES" analyze periodlog --limit 20 --period "$SWITCH" --period-captures "$CAPS" --order-by duration $M
run $P/many-threads-select "$TRACES" analyze periodstats,periodlog --mi --period "$SWITCH" --period "$IRQ" --select irq $M
run $P/basic-min-max-duration "$TRACES" analyze periodlog,periodstats --mi --period "$CALL" --min-duration 10 --max-duration 5000 $B
run $P/basic-begin-end "$TRACES" analyze periodstats,periodlog --mi --period "$SWITCH" --begin 18:39:21 --end 18:39:22 $B
run $P/basic-tid "$TRACES" analyze periodstats --mi --period "$SWITCH" --tid 13665 $B
run $P/bad-definition "$TRACES" analyze periodlog --mi --period 'a : $evt.x == ' $B
run $P/no-definition "$TRACES" analyze periodstats --mi $B
run $P/mixed-with-kernel "$TRACES" analyze cputop,periodstats,irqstats --mi --period "$SWITCH" $U
# Generated traces.
for c in mix chaos1 chaos2 chaos3; do
    run analyze-gen/$c-all "$GEN" analyze "$ALLK" --mi $c
    run analyze-gen/$c-all-no-intersection "$GEN" analyze "$ALLK" --mi --no-intersection $c
    run analyze-gen/$c-periods "$GEN" analyze periodlog,periodstats,periodfreq --mi --period "$SWITCH" --period "$CALL" --period "$INNER" --period-captures "$CAPS" $c
done
for a in "${KNAMES[@]}"; do run analyze-gen/mix/$a "$GEN" analyze $a --mi mix; done
run analyze-gen/mix-text-all "$GEN" analyze "$ALLK" mix
run analyze-gen/mix-refresh-10ms "$GEN" analyze cputop,syscallstats,irqstats --mi --refresh 10ms mix
run analyze-gen/mix-begin-end "$GEN" analyze "$ALLK" --mi --begin 09:15:45.44 --end 09:15:45.45 mix
run analyze-gen/cs1-sync "$GEN" analyze "$ALLK" --mi --sync cs1
run analyze-gen/cs2-sync-text "$GEN" analyze cputop,schedtop,irqstats --sync cs2
run analyze-gen/cs3-inet-sync "$GEN" analyze cputop,syscallstats --mi --sync cs3-inet

# ------------------------------------------------------------------------------------- latency
for t in "${KERNEL[@]}"; do run latency/"$(slug "$t")" "$TRACES" latency --json "$t"; done
for c in mix chaos1 chaos2 chaos3 cs3-inet; do run latency-gen/$c "$GEN" latency --json $c; done
run latency-gen/cs1-sync "$GEN" latency --json --sync cs1
run latency-gen/cs2-sync "$GEN" latency --json --sync cs2
run latency-gen/cs1-nosync "$GEN" latency --json cs1
run latency-gen/mix-text "$GEN" latency mix
run latency-gen/mix-summary-only "$GEN" latency --summary-only mix
run latency-gen/mix-threshold-trackers "$GEN" latency --json --threshold 50us --tracker wakeup,irq --tracker block mix
run latency-gen/mix-timeout-none "$GEN" latency --json --summary-only --timeout none mix
run latency-gen/mix-timeout-1ms-max-pending "$GEN" latency --json --timeout 1ms --max-pending 16 mix
run latency-opt/bug446190-text "$TRACES" latency --threshold 2ms $U
run latency-opt/basic-summary-only "$TRACES" latency --summary-only --threshold 2ms $B
run latency-opt/many-threads-syscall-500us "$TRACES" latency --json --tracker syscall --threshold 500us $M
run latency-opt/synctraces-sync "$TRACES" latency --json --sync kernel/synctraces
run latency-opt/bad-threshold "$TRACES" latency --threshold 3parsecs $B

# ---------------------------------------------------------------------------------------- sync
for c in cs1 cs2 cs3-inet; do
    run sync/$c-json "$GEN" sync --json $c
    run sync/$c-text "$GEN" sync $c
done
run sync/cs1-centre "$GEN" sync --json --formula centre cs1
run sync/cs2-reference "$GEN" sync --json --reference cs2/db cs2
run sync/cs2-window "$GEN" sync --json --window 0.01 cs2
run sync/cs1-cs2-mixed "$GEN" sync --json cs1/client1 cs2/httpd
run sync/synctraces-json "$TRACES" sync --json kernel/synctraces
run sync/synctraces-text "$TRACES" sync kernel/synctraces
run sync/synctraces-centre "$TRACES" sync --json --formula centre kernel/synctraces
run sync/one-trace "$TRACES" sync --json kernel/bug446190
run sync/bad-reference "$GEN" sync --json --reference nowhere cs1

# ------------------------------------------------------------------------------------ critpath
# The generators' marked requests (ground-truth.json: marked_request.client / .tid).
run critpath/cs1-json "$GEN" critpath --json --sync --tid 1937 --host client1 cs1
run critpath/cs1-text "$GEN" critpath --sync --tid 1937 --host client1 --gmt cs1
run critpath/cs1-begin-end "$GEN" critpath --json --sync --tid 1937 --host client1 --begin 01:26:52.78 --end 01:26:52.9 cs1
run critpath/cs1-no-cut "$GEN" critpath --json --sync --no-cut --tid 1937 --host client1 cs1
run critpath/cs1-nosync "$GEN" critpath --json --tid 1937 --host client1 cs1
run critpath/cs2-json "$GEN" critpath --json --sync --tid 3654 --host client1 cs2
run critpath/cs2-text-no-cut "$GEN" critpath --sync --no-cut --tid 3654 --host client1 cs2
run critpath/cs3-inet-json "$GEN" critpath --json --sync --tid 3959 --host client1 cs3-inet
run critpath/mix-json "$GEN" critpath --json --tid 1059 mix
run critpath/many-threads-json "$TRACES" critpath --json --tid 2673 $M
run critpath/basic-text "$TRACES" critpath --tid 13665 $B
run critpath/basic-begin-end "$TRACES" critpath --json --tid 13665 --begin 18:39:24 --end 18:39:25.5 $B
run critpath/bug446190-text "$TRACES" critpath --tid 1 $U
run critpath/synctraces-ambiguous "$TRACES" critpath --json --sync --tid 1 kernel/synctraces
run critpath/unknown-tid "$TRACES" critpath --json --tid 999999 $B
run critpath/end-before-begin "$TRACES" critpath --json --tid 13665 --begin 18:39:22 --end 18:39:21 $B

wait

# ----------------------------------------------------------------------------------------- gen
# The tested binary's generator: its (normalized) report and the sha256 of every file.
tmp=$(mktemp -d /tmp/tracekit-compare-gencheck.XXXXXX)
mkdir -p "$OUT/gen"
for s in "${GEN_SPECS[@]}"; do
    read -r -a a <<<"$s"
    NCMD=$((NCMD + 1))
    rc=0
    (cd "$tmp" && "$BIN" gen "${a[@]:1}" -o "${a[0]}") </dev/null >"$tmp/out" 2>"$tmp/err" || rc=$?
    {
        printf '$ tracekit gen %s -o %s\n--- exit status: %s\n--- stdout (run times replaced by X)\n' "${a[*]:1}" "${a[0]}" "$rc"
        sed -E 's/ in [0-9.]+ s/ in X s/; s/\([0-9.]+ M events\/s\)/(X M events\/s)/' "$tmp/out"
        printf -- '--- stderr\n'
        cat "$tmp/err"
        printf -- '--- sha256 of the files\n'
        (cd "$tmp" && find "${a[0]}" -type f -print0 | LC_ALL=C sort -z | xargs -0r sha256sum)
    } >"$OUT/gen/${a[0]}.txt"
    rm -rf "${tmp:?}/${a[0]}"
done
rm -rf "$tmp"
# The cache the commands above read (the same for both runs to compare, or outputs differ).
(cd "$GEN" && find . -type f ! -name '.*' -print0 | LC_ALL=C sort -z | xargs -0r sha256sum) >"$OUT/gen/_cache-inputs.sha256"

T1=$(date +%s.%N)
{
    echo "binary: $BIN"
    echo "binary sha256: $(sha256sum "$BIN" | cut -d' ' -f1)"
    echo "traces: $TRACES"
    echo "generated traces: $GEN (generator sha256 $(cat "$GEN/.generator" 2>/dev/null))"
    echo "commands: $NCMD"
    echo "outputs: $(find "$OUT" -path "$OUT/_meta" -prune -o -type f -print | wc -l)"
    echo "jobs: $JOBS"
    echo "started: $(date -u -d "@${T0%.*}" '+%F %T') UTC"
    awk -v a="$T0" -v b="$T1" 'BEGIN { printf "runtime: %.1f s\n", b - a }'
    echo "size: $(du -sh "$OUT" | cut -f1)"
} | tee "$OUT/_meta/summary.txt"
LC_ALL=C sort -t$'\t' -k2,2nr "$OUT/_meta/durations.tsv" -o "$OUT/_meta/durations.tsv"
failed=$(awk -F'\t' '$3 == 124' "$OUT/_meta/durations.tsv" | wc -l)
((failed == 0)) || echo "warning: $failed command(s) timed out (exit status 124): see $OUT/_meta/durations.tsv"
