#!/usr/bin/env python3
"""`tracekit view` benchmark: first view cold and from the cache, zoom/pan queries over every
row, server memory, on a generated kernel trace; babeltrace2 reading the same trace (its
dummy output: a full read and nothing else) is measured in the same run as the peer.

    bench/view.py                       # 10 M events
    BENCH_EVENTS=2000000 bench/view.py
    BENCH_PEER=0 bench/view.py          # leave babeltrace2 out (it takes minutes at 10 M)

Environment: BENCH_DIR (target/bench-data), BENCH_EVENTS (10000000), CARGO_TARGET_DIR (the
release binary is taken from there), BENCH_QUERIES (20 zoom/pan queries per view).
See bench/README.md for what is measured and the figures measured so far.
"""

import json
import os
import random
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BENCH_DIR = os.environ.get("BENCH_DIR", os.path.join(ROOT, "target", "bench-data"))
EVENTS = int(os.environ.get("BENCH_EVENTS", "10000000"))
QUERIES = int(os.environ.get("BENCH_QUERIES", "20"))
PEER = os.environ.get("BENCH_PEER", "1") != "0"
TARGET = os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target"))
BIN = os.path.join(TARGET, "release", "tracekit")
WIDTH = 2000

CONTROL_FLOW = ("org.eclipse.tracecompass.internal.analysis.os.linux.core."
                "threadstatus.ThreadStatusDataProvider")
RESOURCES = ("org.eclipse.tracecompass.internal.analysis.os.linux.core."
             "resourcesstatus.ResourcesStatusDataProvider")


def log(*a):
    print("bench:", *a, file=sys.stderr, flush=True)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def post(base, path, params):
    body = json.dumps({"parameters": params}).encode()
    req = urllib.request.Request(base + path, data=body,
                                 headers={"content-type": "application/json"})
    t0 = time.perf_counter()
    with urllib.request.urlopen(req, timeout=600) as r:
        data = r.read()
    return time.perf_counter() - t0, json.loads(data)


def get(base, path):
    with urllib.request.urlopen(base + path, timeout=600) as r:
        return json.loads(r.read())


def rss_peak_mib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def du_mib(path):
    total = 0
    for d, _, files in os.walk(path):
        for f in files:
            total += os.path.getsize(os.path.join(d, f))
    return total / (1 << 20)


def serve(trace, cache_dir):
    """Starts the server; returns (process, base URL, seconds until it printed its URL,
    which it does once the model is built or loaded)."""
    port = free_port()
    t0 = time.perf_counter()
    p = subprocess.Popen([BIN, "view", trace, "--listen", f"127.0.0.1:{port}",
                          "--cache-dir", cache_dir],
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    for line in p.stdout:
        m = re.search(r"(http://\S+)", line)
        if m:
            return p, f"http://127.0.0.1:{port}", time.perf_counter() - t0
    raise SystemExit("bench: the server ended without printing its URL")


def first_view(base):
    """What the page does first: the experiment, the Control Flow tree, and every row's
    states over the whole range at the page width. Returns (seconds, rows, states, exp)."""
    t0 = time.perf_counter()
    exp = get(base, "/view/session")["experiment"]
    while True:
        e = get(base, f"/tsp/api/experiments/{exp}")
        if e["indexingStatus"] == "COMPLETED":
            break
        time.sleep(0.01)
    _, tree = post(base, f"/tsp/api/experiments/{exp}/outputs/timeGraph/{CONTROL_FLOW}/tree",
                   {"requested_timerange": {"start": e["start"], "end": e["end"]}})
    ids = [x["id"] for x in tree["model"]["entries"]]
    _, st = post(base, f"/tsp/api/experiments/{exp}/outputs/timeGraph/{CONTROL_FLOW}/states",
                 {"requested_timerange": {"start": e["start"], "end": e["end"], "nbTimes": WIDTH},
                  "requested_items": ids})
    n = sum(len(r["states"]) for r in st["model"]["rows"])
    return time.perf_counter() - t0, ids, n, e


def queries(base, exp, output, e, ids):
    """Zoom/pan queries over every row at the page width: (median s, max s, states per reply)."""
    rng = random.Random(1)
    span = e["end"] - e["start"]
    times, counts = [], []
    for i in range(QUERIES):
        width = span if i == 0 else max(1000, int(span / (2 ** rng.uniform(0, 12))))
        start = e["start"] + rng.randint(0, span - width)
        dt, st = post(base, f"/tsp/api/experiments/{exp}/outputs/timeGraph/{output}/states",
                      {"requested_timerange": {"start": start, "end": start + width,
                                               "nbTimes": WIDTH},
                       "requested_items": ids})
        times.append(dt)
        counts.append(sum(len(r["states"]) for r in st["model"]["rows"]))
    times.sort()
    return times[len(times) // 2], times[-1], max(counts)


def main():
    if not os.access(BIN, os.X_OK):
        raise SystemExit(f"bench: {BIN} missing: cargo build --release -p tracekit")
    trace = os.path.join(BENCH_DIR, f"view-kernel-mix-{EVENTS}-c4-s1")
    if not os.path.isdir(trace):
        os.makedirs(BENCH_DIR, exist_ok=True)
        log(f"generating {EVENTS} events in {trace}")
        subprocess.run([BIN, "gen", "kernel-mix", "--events", str(EVENTS), "--cpus", "4",
                        "-o", trace], check=True, stdout=subprocess.DEVNULL)
    size = du_mib(trace)
    # The page cache holds the trace for both (a first read from disk is the disk's speed).
    subprocess.run([BIN, "count", trace], check=True, stdout=subprocess.DEVNULL)
    cache = tempfile.mkdtemp(prefix="tracekit-view-bench-")
    try:
        p, base, ready = serve(trace, cache)
        view_s, ids, nstates, e = first_view(base)
        cold = ready + view_s
        exp = get(base, "/view/session")["experiment"]
        cf = queries(base, exp, CONTROL_FLOW, e, ids)
        _, rtree = post(base, f"/tsp/api/experiments/{exp}/outputs/timeGraph/{RESOURCES}/tree",
                        {"requested_timerange": {"start": e["start"], "end": e["end"]}})
        res = queries(base, exp, RESOURCES, e, [x["id"] for x in rtree["model"]["entries"]])
        rss = rss_peak_mib(p.pid)
        p.send_signal(signal.SIGINT)
        p.wait(timeout=30)
        p, base, ready = serve(trace, cache)
        view_s, _, _, _ = first_view(base)
        warm = ready + view_s
        rss_warm = rss_peak_mib(p.pid)
        p.send_signal(signal.SIGINT)
        p.wait(timeout=30)
    finally:
        shutil.rmtree(cache, ignore_errors=True)

    peer = None
    if PEER and shutil.which("babeltrace2"):
        log("babeltrace2 reading the same trace (output dummy)")
        t0 = time.perf_counter()
        subprocess.run(["babeltrace2", trace, "-o", "dummy"], check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        peer = time.perf_counter() - t0

    print(f"trace: {e['nbEvents']} events, {size:.0f} MiB, {len(ids)} Control Flow rows")
    print(f"{'measure':<52} {'value':>12}  goal")
    print(f"{'first view, cold (index + tree + all rows at 2000 px)':<52} {cold:>10.2f} s  <= 3 s")
    print(f"{'first view, from the cache':<52} {warm:>10.2f} s  <= 0.5 s")
    print(f"{'Control Flow query, all rows, 2000 px: median':<52} {cf[0]*1e3:>9.1f} ms  <= 100 ms")
    print(f"{'Control Flow query, all rows, 2000 px: slowest':<52} {cf[1]*1e3:>9.1f} ms")
    print(f"{'  states in the largest reply':<52} {cf[2]:>12}")
    print(f"{'Resources query, all rows, 2000 px: median':<52} {res[0]*1e3:>9.1f} ms  <= 100 ms")
    print(f"{'Resources query, all rows, 2000 px: slowest':<52} {res[1]*1e3:>9.1f} ms")
    print(f"{'server peak memory (indexing run)':<52} {rss:>8.0f} MiB  <= trace size "
          f"({size:.0f} MiB): {rss / size:.2f}x")
    print(f"{'server peak memory (from the cache)':<52} {rss_warm:>8.0f} MiB")
    print(f"{'states in the first view':<52} {nstates:>12}")
    if peer is not None:
        print(f"{'babeltrace2 -o dummy (a read, nothing shown)':<52} {peer:>10.2f} s  "
              f"tracekit's cold first view is {peer / cold:.1f}x faster")
    print("anchors (Theia trace viewer's own notes): 7.5 s for one 116 k-state reply; "
          "5 s to redraw 8 k states")


if __name__ == "__main__":
    main()
