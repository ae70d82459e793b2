#!/usr/bin/env python3
"""Event-to-live-reader latency: `tracekit print net://…` against babeltrace2's lttng-live.

Root (namespaces). In a private mount, PID and network namespace: lttng-sessiond, an
lttng-relayd, and two twin live sessions (`tk`, `bt`) with the same live timer recording the
same `tk:tick` events (one every PERIOD ms, `tk_app 0 1` from crates/testkit/data/lttng). One
session is read by tracekit, the other by babeltrace2 (lttng-relayd takes one viewer per
session), both printing `--clock-seconds` times, line-buffered. For each event line a reader
prints, the latency is the time the line reached this script minus the event's own time stamp
(both CLOCK_REALTIME on this machine). Goal: at most the live timer + 100 ms.

    sudo bench/live_latency.py [--live-timer-us 100000] [--events 60] [--period-ms 50]

Needs lttng-tools, liblttng-ust-dev, gcc, babeltrace2, and a built tracekit
(`CARGO_TARGET_DIR`/release/tracekit, or TRACEKIT=path).
"""

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Runs as the first process of the new namespaces; prints "READER<TAB>ARRIVAL_NS<TAB>LINE"
# for each line of each reader (the arrival stamped by a tiny Python relay per reader).
SCRIPT = r'''
set -eu
mount -t tmpfs tmpfs /run; mkdir -p /run/lttng; mount -t tmpfs tmpfs /dev/shm
ip link set lo up
export HOME="$W" LTTNG_HOME="$W"; cd "$W"
lttng-sessiond --no-kernel --daemonize
lttng-relayd -d -o "$W/trace" -C tcp://127.0.0.1:15342 -D tcp://127.0.0.1:15343 -L tcp://127.0.0.1:15344
for s in tk bt; do
    lttng create $s --live=$TIMER --set-url net://127.0.0.1:15342:15343 >/dev/null
    lttng enable-event -u tk:tick >/dev/null
    lttng start >/dev/null
done
"$APP" 0 1  # registers the application's buffers
H=$(hostname); R=net://127.0.0.1:15344/host/$H
STAMP='import sys, time
tag = sys.argv[1]
for line in sys.stdin:
    sys.stdout.write(f"{tag}\t{time.time_ns()}\t{line}")
    sys.stdout.flush()'
"$TK" print --clock-seconds $R/tk | python3 -u -c "$STAMP" tk &
stdbuf -oL babeltrace2 --input-format=lttng-live --clock-seconds $R/bt | python3 -u -c "$STAMP" bt &
sleep 1
date +%s%N > "$W/t0"  # events before this (the registration's) are not measured
for i in $(seq $EVENTS); do "$APP" 0 1; sleep $PERIOD; done
sleep 1
for s in tk bt; do lttng stop $s >/dev/null; lttng destroy --no-wait $s >/dev/null; done
wait
'''


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--live-timer-us", type=int, default=100_000)
    ap.add_argument("--events", type=int, default=60)
    ap.add_argument("--period-ms", type=int, default=50)
    a = ap.parse_args()
    tk = os.environ.get("TRACEKIT") or os.path.join(
        os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target")), "release", "tracekit")
    if not os.access(tk, os.X_OK):
        sys.exit(f"no tracekit at {tk} (cargo build --release -p tracekit, or TRACEKIT=path)")
    w = tempfile.mkdtemp(prefix="tk-live-latency-")
    try:
        src = os.path.join(ROOT, "crates/testkit/data/lttng")
        app = os.path.join(w, "tk_app")
        subprocess.run(["gcc", "-O1", "-I", src, "-o", app, f"{src}/tk_app.c", f"{src}/tk_tp.c",
                        "-llttng-ust", "-ldl"], check=True)
        env = dict(os.environ, W=w, APP=app, TK=tk, TIMER=str(a.live_timer_us),
                   EVENTS=str(a.events), PERIOD=str(a.period_ms / 1000))
        out = subprocess.run(
            ["timeout", "-s", "KILL", "120", "unshare", "--mount", "--propagation", "private",
             "--pid", "--fork", "--kill-child", "--mount-proc", "--net", "bash", "-c", SCRIPT],
            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, errors="replace")
        with open(os.path.join(w, "t0")) as f:
            t0 = int(f.read())
        lat = {"tk": [], "bt": []}
        for line in out.stdout.splitlines():
            tag, arrival, text = line.split("\t", 2)
            if "tk:tick" not in text or not text.startswith("["):
                continue
            ts = text[1:text.index("]")]
            secs, frac = ts.split(".")
            event_ns = int(secs) * 1_000_000_000 + int(frac.ljust(9, "0"))
            if event_ns >= t0:
                lat[tag].append((int(arrival) - event_ns) / 1e6)
        if not lat["tk"] or not lat["bt"]:
            sys.exit(f"a reader printed nothing:\n{out.stderr[-2000:]}")
        goal = a.live_timer_us / 1000 + 100
        print(f"live timer {a.live_timer_us / 1000:.0f} ms, one event every {a.period_ms} ms, "
              f"goal <= {goal:.0f} ms")
        print("| reader | events | median ms | p90 ms | max ms |")
        print("|---|---|---|---|---|")
        for tag, name in (("tk", "tracekit print net://"), ("bt", "babeltrace2 lttng-live")):
            v = sorted(lat[tag])
            p90 = v[min(len(v) - 1, int(len(v) * 0.9))]
            print(f"| {name} | {len(v)} | {statistics.median(v):.1f} | {p90:.1f} | {v[-1]:.1f} |")
    finally:
        shutil.rmtree(w, ignore_errors=True)


if __name__ == "__main__":
    main()
