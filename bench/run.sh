#!/usr/bin/env bash
# tracekit vs babeltrace2 end-to-end benchmark.
#
#   bench/run.sh                      # default: 5 M events, 3 timed runs per command
#   BENCH_EVENTS=1000000 BENCH_RUNS=5 bench/run.sh
#
# Environment:
#   BENCH_DIR            where generated traces and results are cached   (target/bench-data)
#   BENCH_EVENTS         events of the main trace                        (5000000)
#   BENCH_SCALE_EVENTS   events of the second trace for the RSS-scaling check (2 x BENCH_EVENTS)
#   BENCH_RUNS           timed runs per command; the median is reported  (3); also the
#                        rounds of the paired print timing (babeltrace2 then tracekit)
#   BENCH_LTTNG=0        leave out the traces of bench/gen_lttng_kernel.py (an independent
#                        generator) and their print rows
#   BENCH_NO_HYPERFINE=1 use the /usr/bin/time loop even if hyperfine is installed
#   CARGO_TARGET_DIR     honoured (the binary is taken from $CARGO_TARGET_DIR/release)
#
# See bench/README.md for what is measured and the numbers measured so far.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

BENCH_DIR="${BENCH_DIR:-target/bench-data}"
BENCH_EVENTS="${BENCH_EVENTS:-5000000}"
BENCH_SCALE_EVENTS="${BENCH_SCALE_EVENTS:-$((2 * BENCH_EVENTS))}"
BENCH_RUNS="${BENCH_RUNS:-3}"
SEED=1
CPUS=4

die() { echo "bench: error: $*" >&2; exit 1; }
log() { echo "bench: $*" >&2; }

[[ "$BENCH_EVENTS" =~ ^[0-9]+$ ]] || die "BENCH_EVENTS must be a number, got '$BENCH_EVENTS'"
[[ "$BENCH_SCALE_EVENTS" =~ ^[0-9]+$ ]] || die "BENCH_SCALE_EVENTS must be a number"
[[ "$BENCH_RUNS" =~ ^[1-9][0-9]*$ ]] || die "BENCH_RUNS must be a positive number"

# ---------------------------------------------------------------------------------------------
# 0. Prerequisites.
if ! command -v babeltrace2 >/dev/null 2>&1; then
    die "babeltrace2 not found; it is the reference this benchmark compares against: apt install babeltrace2"
fi
[[ -x /usr/bin/time ]] || die "/usr/bin/time (GNU time) not found: apt install time"
BENCH_LTTNG="${BENCH_LTTNG:-1}"
if [[ "$BENCH_LTTNG" == 1 ]] && ! command -v python3 >/dev/null 2>&1; then
    die "python3 not found: it runs bench/gen_lttng_kernel.py (or BENCH_LTTNG=0)"
fi
command -v taskset >/dev/null 2>&1 || die "taskset not found: apt install util-linux"

HAVE_HYPERFINE=0
if [[ "${BENCH_NO_HYPERFINE:-0}" != 1 ]]; then
    if ! command -v hyperfine >/dev/null 2>&1 && [[ "$(id -u)" == 0 ]] && command -v apt-get >/dev/null 2>&1; then
        log "hyperfine missing; installing it (apt-get install -y hyperfine)"
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq hyperfine >/dev/null 2>&1 \
            || log "could not install hyperfine; falling back to a /usr/bin/time loop"
    fi
    command -v hyperfine >/dev/null 2>&1 && HAVE_HYPERFINE=1
fi

# ---------------------------------------------------------------------------------------------
# 1. Build.
log "building tracekit (release)"
cargo build --release -p tracekit >&2
TARGET_DIR="${CARGO_TARGET_DIR:-target}"
TK="$(cd "$TARGET_DIR/release" && pwd)/tracekit"
[[ -x "$TK" ]] || die "built binary not found at $TK"

# ---------------------------------------------------------------------------------------------
# 2. Traces, generated once and cached. The marker file records the generator's summary; it
#    lives next to the trace directory (not inside it, babeltrace2 would try to read it).
mkdir -p "$BENCH_DIR"
BENCH_DIR="$(cd "$BENCH_DIR" && pwd)"

gen_trace() { # events -> prints the trace directory
    local n="$1" dir="$BENCH_DIR/kernel-mix-$1-c$CPUS-s$SEED"
    # Traces of generators older than the LTTng indexes are made again.
    if [[ ! -f "$dir.done" || ! -f "$dir/metadata" || ! -d "$dir/index" ]]; then
        log "generating $n-event kernel-mix trace in $dir"
        rm -rf "$dir" "$dir.done"
        "$TK" gen kernel-mix --events "$n" --cpus "$CPUS" -o "$dir" --seed "$SEED" >"$dir.gen.tmp"
        cat "$dir.gen.tmp" >&2
        mv "$dir.gen.tmp" "$dir.done"
    else
        log "using cached trace $dir"
    fi
    echo "$dir"
}

TRACE="$(gen_trace "$BENCH_EVENTS")"

# The same number of events written by bench/gen_lttng_kernel.py, which does not share
# tracekit's writer: lk with lttng-tools 2.13's kernel defaults (1 MiB packets, no context),
# lks with 16 KiB packets and an event context (procname, pid, tid, prio) on every event.
gen_lttng() { # name events args... -> prints the trace directory
    local name="$1" n="$2"
    shift 2
    local dir="$BENCH_DIR/$name-$n-c$CPUS-s$SEED"
    if [[ ! -f "$dir.done" || ! -f "$dir/metadata" ]]; then
        log "generating $n-event $name trace with bench/gen_lttng_kernel.py in $dir"
        rm -rf "$dir" "$dir.done"
        python3 "$ROOT/bench/gen_lttng_kernel.py" --events "$n" --cpus "$CPUS" --seed "$SEED" -o "$dir" "$@" \
            >"$dir.gen.tmp"
        cat "$dir.gen.tmp" >&2
        mv "$dir.gen.tmp" "$dir.done"
    else
        log "using cached trace $dir"
    fi
    echo "$dir"
}
declare -A LTRACE
LKEYS=()
if [[ "$BENCH_LTTNG" == 1 ]]; then
    LKEYS=(lk lks)
    LTRACE[lk]="$(gen_lttng lttng-kernel "$BENCH_EVENTS")"
    LTRACE[lks]="$(gen_lttng lttng-kernel-small "$BENCH_EVENTS" --packet-kib 16 --contexts)"
fi

# The timed rows read the trace as a trace read from disk is cached (bench/page-cache.sh); the
# row count-1c-wr reads a copy just written with `cat`, its pages cached as the writes left
# them (as a trace just recorded).
# shellcheck source=bench/page-cache.sh
source "$ROOT/bench/page-cache.sh"
WRITTEN="$BENCH_DIR/written-copy"
rm -rf "$WRITTEN"
mkdir -p "$WRITTEN/index"
for f in "$TRACE"/* "$TRACE"/index/*; do
    [[ -f "$f" ]] && cat "$f" >"$WRITTEN/${f#"$TRACE"/}"
done
trap 'rm -rf "$WRITTEN"' EXIT

# Event count as tracekit counts it (JSON: `  "events": N,`).
events_of() {
    "$TK" count --json "$1" 2>/dev/null | sed -n 's/^ *"events": *\([0-9][0-9]*\),\{0,1\}$/\1/p'
}

# `--begin` at 90 % of the trace's time range (seconds since the epoch, which both tools read).
begin_at_90() {
    local json b e v
    json="$("$TK" count --json "$1" 2>/dev/null)"
    b="$(sed -n 's/^ *"begin_ns": *\([0-9]*\).*/\1/p' <<<"$json")"
    e="$(sed -n 's/^ *"end_ns": *\([0-9]*\).*/\1/p' <<<"$json")"
    # Exact in 64-bit integers (awk's doubles are not, at 1.7e18 ns).
    v=$((b + (e - b) / 10 * 9))
    printf '%d.%09d' $((v / 1000000000)) $((v % 1000000000))
}

# ---------------------------------------------------------------------------------------------
# 3. Commands. Each: label | tool | shell command (stdout goes to /dev/null when timed).
TKQ="$(printf '%q' "$TK")"
TRQ="$(printf '%q' "$TRACE")"
BEGIN90="$(begin_at_90 "$TRACE")"
LABELS=(count count-1core count-1c-wr count-rayon1 bt2-dummy print bt2-print print-begin bt2-begin)
declare -A TOOL CMD PAIR NEV
TOOL[count]=tracekit;       CMD[count]="$TKQ count $TRQ"
TOOL[count-1core]=tracekit; CMD[count-1core]="taskset -c 0 $TKQ count $TRQ"
TOOL[count-1c-wr]=tracekit; CMD[count-1c-wr]="taskset -c 0 $TKQ count $(printf '%q' "$WRITTEN")"
TOOL[count-rayon1]=tracekit; CMD[count-rayon1]="env RAYON_NUM_THREADS=1 $TKQ count $TRQ"
TOOL[bt2-dummy]=babeltrace2; CMD[bt2-dummy]="babeltrace2 --output-format=dummy $TRQ"
TOOL[print]=tracekit;       CMD[print]="env TZ=UTC $TKQ print $TRQ"
TOOL[bt2-print]=babeltrace2; CMD[bt2-print]="env TZ=UTC babeltrace2 $TRQ"
# The last tenth of the trace: tracekit passes over the packets before it with the LTTng
# indexes the generator writes.
TOOL[print-begin]=tracekit; CMD[print-begin]="env TZ=UTC $TKQ print --begin $BEGIN90 $TRQ"
TOOL[bt2-begin]=babeltrace2; CMD[bt2-begin]="env TZ=UTC babeltrace2 --begin $BEGIN90 $TRQ"
# Which babeltrace2 row each tracekit row is compared with.
PAIR[count]=bt2-dummy; PAIR[count-1core]=bt2-dummy; PAIR[count-1c-wr]=bt2-dummy; PAIR[count-rayon1]=bt2-dummy
PAIR[print]=bt2-print; PAIR[print-begin]=bt2-begin
# print on the independent generator's traces.
for k in "${LKEYS[@]}"; do
    q="$(printf '%q' "${LTRACE[$k]}")"
    LABELS+=("print-$k" "bt2-print-$k")
    TOOL[print-$k]=tracekit;     CMD[print-$k]="env TZ=UTC $TKQ print $q"
    TOOL[bt2-print-$k]=babeltrace2; CMD[bt2-print-$k]="env TZ=UTC babeltrace2 $q"
    PAIR[print-$k]=bt2-print-$k
done

WORK="$(mktemp -d)"
trap 'rm -rf "$WORK" "$WRITTEN"' EXIT

# Peak RSS in KiB of one run of a shell command (stdout to /dev/null).
peak_rss_kib() {
    /usr/bin/time -f %M -o "$WORK/rss" bash -c "$1 >/dev/null" || die "command failed: $1"
    tail -n 1 "$WORK/rss"
}

# Same, but also samples /proc/PID/status every 10 ms for the peak of anonymous (heap) and
# file-backed (mapped trace files) resident memory. Prints: total_kib anon_kib file_kib.
# Sampling can miss a short final peak; the total comes from the kernel (getrusage).
rss_breakdown() {
    local cmd="$1" pid anon=0 file=0 k v rest
    /usr/bin/time -f %M -o "$WORK/rss" bash -c "exec $cmd >/dev/null" &
    local tpid=$!
    # The child of /usr/bin/time is the measured process (bash execs it).
    for _ in $(seq 100); do
        pid="$(pgrep -P "$tpid" | head -n 1)" || true
        [[ -n "$pid" ]] && break
        sleep 0.005
    done
    while [[ -n "$pid" && -r /proc/$pid/status ]]; do
        while read -r k v rest; do
            case "$k" in
                RssAnon:) if ((v > anon)); then anon=$v; fi ;;
                RssFile:) if ((v > file)); then file=$v; fi ;;
            esac
        done </proc/$pid/status 2>/dev/null || true
        sleep 0.01
    done
    wait "$tpid" || die "command failed: $cmd"
    echo "$(tail -n 1 "$WORK/rss") $anon $file"
}

median() { sort -g | awk '{a[NR]=$1} END {if (NR%2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }

# ---------------------------------------------------------------------------------------------
# Warm-up: read every file once so the page cache is warm for every tool, check that
# tracekit and babeltrace2 see the same number of events, and measure peak RSS.
log "warm-up: the trace cached as read from disk (dropped from the page cache, read back with cat)"
cache_from_disk "$TRACE"
EVENTS="$(events_of "$TRACE")"
[[ -n "$EVENTS" ]] || die "could not read the event count from 'tracekit count --json'"
log "tracekit count: $EVENTS events"
log "warm-up + sanity: babeltrace2 text output line count (this takes a while)"
BT_LINES="$(TZ=UTC babeltrace2 "$TRACE" 2>/dev/null | wc -l)"
TK_LINES="$(TZ=UTC "$TK" print "$TRACE" 2>/dev/null | wc -l)"
log "text lines: tracekit print $TK_LINES, babeltrace2 $BT_LINES"
[[ "$BT_LINES" == "$TK_LINES" ]] || log "WARNING: tracekit print and babeltrace2 print a different number of lines"
for l in "${LABELS[@]}"; do NEV[$l]="$EVENTS"; done
for k in "${LKEYS[@]}"; do
    t="${LTRACE[$k]}"
    cache_from_disk "$t"
    NEV[print-$k]="$(events_of "$t")"
    NEV[bt2-print-$k]="${NEV[print-$k]}"
    log "warm-up + check: $k (${NEV[print-$k]} events): tracekit print and babeltrace2 output bytes, babeltrace2's stderr"
    bt_sum="$(TZ=UTC babeltrace2 "$t" 2>"$WORK/bt2-$k.err" | md5sum)"
    tk_sum="$(TZ=UTC "$TK" print "$t" 2>/dev/null | md5sum)"
    [[ -s "$WORK/bt2-$k.err" ]] && log "WARNING: babeltrace2 warns on $t: $(head -c 300 "$WORK/bt2-$k.err")"
    if [[ "$bt_sum" == "$tk_sum" ]]; then
        log "$k: tracekit print and babeltrace2 print the same bytes"
    else
        log "WARNING: $k: tracekit print and babeltrace2 outputs differ"
    fi
done
if [[ "$(bash -c "${CMD[print-begin]}" 2>/dev/null | md5sum)" == "$(bash -c "${CMD[bt2-begin]}" 2>/dev/null | md5sum)" ]]; then
    log "print --begin $BEGIN90: tracekit and babeltrace2 print the same bytes"
else
    log "WARNING: print --begin $BEGIN90: tracekit and babeltrace2 outputs differ"
fi

declare -A RSS SECS SMIN SMAX CPU
for l in "${LABELS[@]}"; do
    log "peak RSS: $l"
    RSS[$l]="$(peak_rss_kib "${CMD[$l]}")"
done

# ---------------------------------------------------------------------------------------------
# Timing.
if ((HAVE_HYPERFINE)); then
    METHOD="hyperfine $(hyperfine --version | awk '{print $2}'), $BENCH_RUNS runs, warm cache; CPU s = mean user+sys"
    for l in "${LABELS[@]}"; do
        log "timing $l (hyperfine, $BENCH_RUNS runs): ${CMD[$l]}"
        hyperfine --style basic --runs "$BENCH_RUNS" --warmup 0 \
            --export-csv "$WORK/$l.csv" --command-name "$l" "${CMD[$l]}" >&2
        # CSV: command,mean,stddev,median,user,system,min,max
        IFS=, read -r _ _ _ SECS[$l] u s SMIN[$l] SMAX[$l] < <(tail -n 1 "$WORK/$l.csv")
        CPU[$l]="$(awk -v u="$u" -v s="$s" 'BEGIN {printf "%.3f", u + s}')"
    done
else
    METHOD="/usr/bin/time loop, median of $BENCH_RUNS runs, warm cache; CPU s = median user+sys"
    for l in "${LABELS[@]}"; do
        log "timing $l ($BENCH_RUNS runs): ${CMD[$l]}"
        : >"$WORK/$l.times"
        : >"$WORK/$l.cpu"
        for ((i = 0; i < BENCH_RUNS; i++)); do
            t0=$EPOCHREALTIME
            /usr/bin/time -f '%U %S %M' -o "$WORK/rss" bash -c "${CMD[$l]} >/dev/null" || die "command failed: ${CMD[$l]}"
            t1=$EPOCHREALTIME
            awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.6f\n", b - a}' >>"$WORK/$l.times"
            read -r u s r < <(tail -n 1 "$WORK/rss")
            awk -v u="$u" -v s="$s" 'BEGIN {printf "%.3f\n", u + s}' >>"$WORK/$l.cpu"
            if ((r > RSS[$l])); then RSS[$l]=$r; fi
        done
        SECS[$l]="$(median <"$WORK/$l.times")"
        CPU[$l]="$(median <"$WORK/$l.cpu")"
        SMIN[$l]="$(sort -g "$WORK/$l.times" | head -n 1)"
        SMAX[$l]="$(sort -g "$WORK/$l.times" | tail -n 1)"
    done
fi

# ---------------------------------------------------------------------------------------------
# Paired print timing. The host's speed drifts by up to a third over tens of seconds, and each
# command above is timed in a block of its own, so a drift between two blocks moves a speedup.
# Here each round times babeltrace2 once and then tracekit three times (their median) on the
# same trace, one right after the other; the speedup is the median of the rounds' ratios.
declare -A PAIRED PAIRED_RANGE
wall() { # command -> seconds
    local t0 t1
    t0=$EPOCHREALTIME
    bash -c "$1 >/dev/null 2>&1" || die "command failed: $1"
    t1=$EPOCHREALTIME
    awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.6f\n", b - a}'
}
PRINT_ROWS=(print)
for k in "${LKEYS[@]}"; do PRINT_ROWS+=("print-$k"); done
for l in "${PRINT_ROWS[@]}"; do
    log "paired timing $l against ${PAIR[$l]} ($BENCH_RUNS rounds)"
    : >"$WORK/$l.paired"
    for ((i = 0; i < BENCH_RUNS; i++)); do
        b="$(wall "${CMD[${PAIR[$l]}]}")"
        t="$( { wall "${CMD[$l]}"; wall "${CMD[$l]}"; wall "${CMD[$l]}"; } | median)"
        awk -v a="$b" -v b="$t" 'BEGIN {printf "%.3f\n", a / b}' >>"$WORK/$l.paired"
    done
    PAIRED[$l]="$(median <"$WORK/$l.paired")"
    PAIRED_RANGE[$l]="$(printf '%.1f-%.1f' "$(sort -g "$WORK/$l.paired" | head -n 1)" "$(sort -g "$WORK/$l.paired" | tail -n 1)")"
done

# ---------------------------------------------------------------------------------------------
# 4. Does tracekit's peak memory grow with the trace? count on a second trace of another size.
SCALE_TRACE="$(gen_trace "$BENCH_SCALE_EVENTS")"
cache_from_disk "$SCALE_TRACE"
SCALE_EVENTS="$(events_of "$SCALE_TRACE")"
log "RSS scaling: tracekit count on $EVENTS and $SCALE_EVENTS events"
read -r S1_TOT S1_ANON S1_FILE < <(rss_breakdown "$TKQ count $TRQ")
read -r S2_TOT S2_ANON S2_FILE < <(rss_breakdown "$TKQ count $(printf '%q' "$SCALE_TRACE")")
B1_TOT="${RSS[bt2-dummy]}"
B2_TOT="$(peak_rss_kib "babeltrace2 --output-format=dummy $(printf '%q' "$SCALE_TRACE")")"
S1_BYTES="$(du -sk "$TRACE" | awk '{print $1}')"
S2_BYTES="$(du -sk "$SCALE_TRACE" | awk '{print $1}')"

# ---------------------------------------------------------------------------------------------
# 5. Report.
mib() { awk -v k="$1" 'BEGIN {printf "%.1f", k / 1024}'; }
{
    echo
    echo "tracekit benchmark  $(date -u +%Y-%m-%dT%H:%MZ)"
    echo "commit:    $(git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)$(git diff --quiet HEAD -- crates 2>/dev/null || echo ' (crates/ modified)')"
    echo "machine:   $(nproc) CPUs available, $(awk -F': ' '/model name/ {print $2; exit}' /proc/cpuinfo), load avg $(cut -d' ' -f1-3 /proc/loadavg)"
    echo "tools:     $("$TK" --version), $(babeltrace2 --version 2>/dev/null | head -n 1)"
    echo "trace:     $TRACE ($(mib "$S1_BYTES") MiB, $CPUS streams)"
    echo "events:    $EVENTS (tracekit count --json)"
    echo "timing:    $METHOD"
    echo
    printf '%-12s %-13s %-50s %9s %15s %8s %10s %8s %9s\n' \
        tool row command "median s" "min-max s" "CPU s" "events/s" speedup "RSS MiB"
    for l in "${LABELS[@]}"; do
        cmd="${CMD[$l]//$TKQ/tracekit}"
        cmd="${cmd//$TRQ/DIR}"
        for k in "${LKEYS[@]}"; do cmd="${cmd//$(printf '%q' "${LTRACE[$k]}")/${k^^}}"; done
        cmd="${cmd//$(printf '%q' "$WRITTEN")/DIR-COPY}"
        cmd="${cmd//env /}"
        [[ "$l" == *print* || "$l" == *begin* ]] && cmd="$cmd >/dev/null"
        cmd="${cmd//$BEGIN90/T90}"
        eps="$(awk -v n="${NEV[$l]}" -v s="${SECS[$l]}" 'BEGIN {printf "%.2fM", n / s / 1e6}')"
        # A tenth of the events is printed there: no events/s of the whole trace.
        [[ "$l" == *begin* ]] && eps="-"
        if [[ -n "${PAIR[$l]:-}" ]]; then
            ratio="$(awk -v a="${SECS[${PAIR[$l]}]}" -v b="${SECS[$l]}" 'BEGIN {printf "%.1fx", a / b}')"
        else
            ratio="1.0x"
        fi
        printf '%-12s %-13s %-50s %9.3f %15s %8.3f %10s %8s %9s\n' "${TOOL[$l]}" "$l" "$cmd" "${SECS[$l]}" \
            "$(printf '%.3f-%.3f' "${SMIN[$l]}" "${SMAX[$l]}")" "${CPU[$l]}" "$eps" "$ratio" "$(mib "${RSS[$l]}")"
    done
    echo
    echo "speedup = babeltrace2 median / tracekit median (count rows vs bt2-dummy, print vs bt2-print, print-begin vs bt2-begin)"
    echo "page cache: DIR cached as read from disk (dropped, read back with cat); DIR-COPY: a copy just written with cat, cached as written"
    echo "T90 = $BEGIN90: 90 % of the trace's time range (print-begin and bt2-begin print its last tenth)"
    for k in "${LKEYS[@]}"; do
        echo "${k^^} = ${LTRACE[$k]} (bench/gen_lttng_kernel.py $(tr '\n' ' ' <"${LTRACE[$k]}.done" | sed 's/ *$//'); ${NEV[print-$k]} events)"
    done
    echo "CPU speedup (user+sys): count $(awk -v a="${CPU[bt2-dummy]}" -v b="${CPU[count]}" 'BEGIN {printf "%.1fx", a / b}')," \
         "count-1core $(awk -v a="${CPU[bt2-dummy]}" -v b="${CPU[count-1core]}" 'BEGIN {printf "%.1fx", a / b}')," \
         "print $(awk -v a="${CPU[bt2-print]}" -v b="${CPU[print]}" 'BEGIN {printf "%.1fx", a / b}')"
    # The count target is one core's (#2: "count >= 50x babeltrace2 on one core and scaling
    # with cores").
    echo "targets: count on one core >= 50x -> $(awk -v a="${SECS[bt2-dummy]}" -v b="${SECS[count-1core]}" 'BEGIN {r = a / b; printf "%.1fx %s", r, (r >= 50 ? "MET" : "NOT MET")}')" \
         "(all cores: $(awk -v a="${SECS[bt2-dummy]}" -v b="${SECS[count]}" 'BEGIN {printf "%.1fx", a / b}'))," \
         "print >= 20x -> $(awk -v a="${SECS[bt2-print]}" -v b="${SECS[print]}" 'BEGIN {r = a / b; printf "%.1fx %s", r, (r >= 20 ? "MET" : "NOT MET")}')"
    for k in "${LKEYS[@]}"; do
        echo "targets: print-$k >= 20x -> $(awk -v a="${SECS[bt2-print-$k]}" -v b="${SECS[print-$k]}" 'BEGIN {r = a / b; printf "%.1fx %s", r, (r >= 20 ? "MET" : "NOT MET")}')" \
             "(CPU: $(awk -v a="${CPU[bt2-print-$k]}" -v b="${CPU[print-$k]}" 'BEGIN {printf "%.1fx", a / b}'))"
    done
    echo "paired (each round: babeltrace2 once, then tracekit 3 times; median of $BENCH_RUNS rounds' ratios; goal 30x):"
    for l in "${PRINT_ROWS[@]}"; do
        printf '  %-10s %6.1fx (rounds %s) %s\n' "$l" "${PAIRED[$l]}" "${PAIRED_RANGE[$l]}" \
            "$(awk -v r="${PAIRED[$l]}" 'BEGIN {print (r >= 30 ? "MET" : "NOT MET")}')"
    done
    echo
    echo "peak memory of 'tracekit count' vs trace size (total from getrusage; anon/file sampled every 10 ms):"
    printf '  %10s events  %8s MiB on disk: peak RSS %7s MiB (anon %6s MiB, file-backed %7s MiB)\n' \
        "$EVENTS" "$(mib "$S1_BYTES")" "$(mib "$S1_TOT")" "$(mib "$S1_ANON")" "$(mib "$S1_FILE")" \
        "$SCALE_EVENTS" "$(mib "$S2_BYTES")" "$(mib "$S2_TOT")" "$(mib "$S2_ANON")" "$(mib "$S2_FILE")"
    echo "  for comparison, babeltrace2 --output-format=dummy: peak RSS $(mib "$B1_TOT") MiB and $(mib "$B2_TOT") MiB"
    awk -v a="$S1_TOT" -v b="$S2_TOT" -v ea="$EVENTS" -v eb="$SCALE_EVENTS" 'BEGIN {
        r = b / a; s = eb / ea;
        # Relative growth of memory per relative growth of the trace: 0 = flat, 1 = linear.
        g = (s == 1) ? 0 : (r - 1) / (s - 1);
        printf "  peak RSS ratio %.2f for an events ratio of %.2f: %s\n", r, s,
            (g < 0.1) ? "flat (does not grow with trace size)" : sprintf("GROWS with trace size (%.0f%% of linear)", 100 * g)
    }'
    awk -v a="$S1_ANON" -v b="$S2_ANON" -v ea="$EVENTS" -v eb="$SCALE_EVENTS" 'BEGIN {
        r = (a > 0) ? b / a : 1; s = eb / ea; g = (s == 1) ? 0 : (r - 1) / (s - 1);
        printf "  anonymous (heap) peak ratio %.2f: %s\n", r,
            (g < 0.1) ? "flat; any growth of the total is file-backed pages of the mapped trace files" : sprintf("GROWS (%.0f%% of linear)", 100 * g)
    }'
} | tee "$BENCH_DIR/results-$(date -u +%Y%m%dT%H%M%SZ).txt"
