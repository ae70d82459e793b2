#!/usr/bin/env bash
# Instructions per command (callgrind: repeatable whatever else the machine runs) of two
# tracekit builds on the same inputs, side by side: a refactor's "no slower" check that a
# loaded 2-core machine cannot spoil.
#
#   bench/instructions.sh BEFORE_BIN AFTER_BIN [EVENTS]
#
# Generates a kernel-mix trace of EVENTS events (300000) with BEFORE_BIN and one as large with
# bench/gen_lttng_kernel.py, then measures each command under both binaries. With
# TRACEKIT_SHARED, the many-threads real trace is added.
set -euo pipefail
A=${1:?usage: bench/instructions.sh BEFORE_BIN AFTER_BIN [EVENTS]}
B=${2:?usage: bench/instructions.sh BEFORE_BIN AFTER_BIN [EVENTS]}
EVENTS=${3:-300000}
command -v valgrind >/dev/null || { echo "needs valgrind" >&2; exit 1; }
WORK=$(mktemp -d /tmp/tk-instr.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
"$A" gen kernel-mix --events "$EVENTS" --seed 1 -o "$WORK/km" >/dev/null
TRACES=("$WORK/km")
# A trace tracekit did not write: bench/gen_lttng_kernel.py with small packets and an event
# context (see bench/README.md), when python3 is there.
if command -v python3 >/dev/null; then
    python3 "$(dirname "$0")/gen_lttng_kernel.py" --events "$EVENTS" --seed 1 --packet-kib 16 --contexts \
        -o "$WORK/lks" >/dev/null
    TRACES+=("$WORK/lks")
fi
if [[ -n ${TRACEKIT_SHARED:-} && -d $TRACEKIT_SHARED/traces/kernel/many-threads ]]; then
    TRACES+=("$TRACEKIT_SHARED/traces/kernel/many-threads")
fi
instr() {
    valgrind --tool=callgrind --callgrind-out-file=/dev/null "$@" 2>&1 >/dev/null |
        sed -n 's/.*Collected : \([0-9]*\).*/\1/p'
}
printf '%-48s %14s %14s %8s\n' command before after after/before
for t in "${TRACES[@]}"; do
    name=$(basename "$t")
    while read -r label args; do
        # shellcheck disable=SC2086
        a=$(instr "$A" $args "$t")
        # shellcheck disable=SC2086
        b=$(instr "$B" $args "$t")
        printf '%-48s %14s %14s %8s\n' "$name: $label" "$a" "$b" \
            "$(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.4f", b / a }')"
    done <<'CMDS'
print print
count count
cputop analyze cputop --mi
syscallstats analyze syscallstats --mi
iolatencystats analyze iolatencystats --mi
all-analyses analyze cputop,syscallstats,irqstats,schedtop,memtop,iousagetop --mi
latency latency --json
CMDS
done
