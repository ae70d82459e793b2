#!/usr/bin/env python3
"""Parquet export and the sql/ queries against `tracekit count` and `tracekit analyze`.

    bench/parquet.py [--events N] [--hosts N] [--host-events N] [--runs N] [--cluster]
                     [--skip-export] [--skip-fleet]

1. Export speed on one generated kernel-mix trace (default 5 M events): `tracekit count`
   (events/s) against `tracekit export --format parquet` (events/s, bytes/event, size
   against the CTF trace), all tables and the derived tables alone (`--tables` without
   `event`). Best of --runs, CPU (user+sys) time beside the wall time.
2. A fleet of --hosts generated hosts (default 200, --host-events each): `tracekit analyze`
   (the five analyses of sql/) trace by trace, then the same runs in parallel (one per
   core), against the sql/ queries over the export of all hosts on DuckDB and on Spark
   local[2]; with --cluster also on a Spark standalone cluster of a master and two workers
   on this machine (what crates/tracekit/tests/parquet_cluster.rs starts), via spark-submit.
   The queries' times and rows/s are run.py's.

Environment: TRACEKIT (the binary, default target/release/tracekit), TRACEKIT_SQL_PYTHON (a
Python with duckdb and pyspark, default ~/.cache/tracekit/sqlenv/bin/python), BENCH_DIR
(default target/bench-data/parquet: traces are generated once and reused).
"""

import argparse
import os
import resource
import shutil
import socket
import subprocess
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TK = os.environ.get("TRACEKIT", os.path.join(REPO, "target/release/tracekit"))
PY = os.environ.get("TRACEKIT_SQL_PYTHON", os.path.expanduser("~/.cache/tracekit/sqlenv/bin/python"))
ANALYSES = ["analyze", "cputop,syscallstats,irqstats,schedstats,iolatencystats", "--mi",
            "--no-intersection", "--limit", "0", "--total", "--per-tid", "--per-prio"]


def timed(cmd, **kw):
    """(wall s, cpu s) of one run of cmd."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.time()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, **kw)
    wall = time.time() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def best(runs, cmd, before=None):
    out = []
    for _ in range(runs):
        if before:
            before()
        out.append(timed(cmd))
    return min(out, key=lambda x: x[0]), min(x[1] for x in out)


def du(path):
    total = 0
    for root, _, files in os.walk(path):
        total += sum(os.path.getsize(os.path.join(root, f)) for f in files)
    return total


def export_bench(a, data):
    trace = os.path.join(data, f"km{a.events}")
    if not os.path.isdir(trace):
        subprocess.run([TK, "gen", "kernel-mix", "--events", str(a.events), "-o", trace], check=True)
    events = a.events
    ctf = du(trace)
    print(f"## Export: kernel-mix, {events} events, CTF {ctf / 1e6:.1f} MB\n")
    print("| command | wall s | CPU s | M events/s (wall) | bytes/event | size / CTF |")
    print("|---|---|---|---|---|---|")
    (w, _), c = best(a.runs, [TK, "count", trace])
    print(f"| `tracekit count` | {w:.3f} | {c:.3f} | {events / w / 1e6:.1f} | | |")
    out = os.path.join(data, "export-out")
    for label, extra in (("all tables", []),
                         ("derived tables (no `event`)",
                          ["--tables", "sched_slice,thread_state,syscall,irq,block_io,net_packet,thread,process"])):
        (w, _), c = best(a.runs, [TK, "export", "--format", "parquet", "-o", out, trace] + extra,
                         before=lambda: shutil.rmtree(out, ignore_errors=True))
        size = du(out)
        print(f"| `tracekit export --format parquet`, {label} | {w:.3f} | {c:.3f} | {events / w / 1e6:.2f} | "
              f"{size / events:.1f} | {size / ctf:.2f} |")
    print()


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def fleet_bench(a, data):
    fleet = os.path.join(data, f"fleet-{a.hosts}x{a.host_events}")
    if not os.path.isdir(fleet):
        for i in range(a.hosts):
            subprocess.run([TK, "gen", "kernel-mix", "--events", str(a.host_events), "--cpus", str(1 + i % 4),
                            "--seed", str(1000 + i), "-o", os.path.join(fleet, f"host{i:03}")],
                           check=True, stdout=subprocess.DEVNULL)
    hosts = sorted(os.path.join(fleet, h) for h in os.listdir(fleet))
    events = a.hosts * a.host_events
    print(f"## Fleet: {a.hosts} hosts of {a.host_events} events ({events} events)\n")
    t0 = time.time()
    for h in hosts:
        subprocess.run([TK] + ANALYSES + [h], check=True, stdout=subprocess.DEVNULL)
    seq = time.time() - t0
    t0 = time.time()
    procs = os.cpu_count() or 1
    subprocess.run(["xargs", "-P", str(procs), "-n", "1", TK] + ANALYSES, input="\n".join(hosts), text=True,
                   check=True, stdout=subprocess.DEVNULL)
    par = time.time() - t0
    out = os.path.join(data, "fleet-parquet")
    shutil.rmtree(out, ignore_errors=True)
    t0 = time.time()
    subprocess.run([TK, "export", "--format", "parquet", "-o", out, fleet], check=True, stderr=subprocess.DEVNULL)
    exp = time.time() - t0
    print("| what | wall s |")
    print("|---|---|")
    print(f"| `tracekit analyze` (5 analyses), trace by trace | {seq:.2f} |")
    print(f"| the same, {procs} in parallel | {par:.2f} |")
    print(f"| `tracekit export --format parquet` of all hosts (once) | {exp:.2f} |")
    runs = [("DuckDB", [PY, os.path.join(REPO, "sql/run.py"), "--engine", "duckdb", out]),
            ("Spark local[2]", [PY, os.path.join(REPO, "sql/run.py"), "--engine", "spark", "--master", "local[2]", out])]
    started = []
    if a.cluster:
        spark_home = subprocess.run([PY, "-c", "import os, pyspark; print(os.path.dirname(pyspark.__file__))"],
                                    check=True, capture_output=True, text=True).stdout.strip()
        port = free_port()
        master = f"spark://127.0.0.1:{port}"
        env = dict(os.environ, SPARK_LOCAL_IP="127.0.0.1", PYSPARK_PYTHON=PY, PYSPARK_DRIVER_PYTHON=PY,
                   SPARK_WORKER_DIR=os.path.join(data, "spark-work"), SPARK_LOG_DIR=os.path.join(data, "spark-logs"))
        cls = os.path.join(spark_home, "bin/spark-class")
        started.append(subprocess.Popen([cls, "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
                                         "--port", str(port), "--webui-port", str(free_port())], env=env,
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        for _ in range(2):
            started.append(subprocess.Popen([cls, "org.apache.spark.deploy.worker.Worker", "--host", "127.0.0.1",
                                             "--cores", "1", "--memory", "1g", "--webui-port", str(free_port()),
                                             master], env=env, stdout=subprocess.DEVNULL,
                                            stderr=subprocess.DEVNULL))
        runs.append(("Spark standalone (2 workers)",
                     [os.path.join(spark_home, "bin/spark-submit"), "--master", master,
                      "--total-executor-cores", "2", os.path.join(REPO, "sql/run.py"), "--engine", "spark",
                      "--master", master, out]))
    try:
        for name, cmd in runs:
            t0 = time.time()
            r = subprocess.run(cmd + ["--repeat", "3"], check=True, capture_output=True, text=True,
                               env=dict(os.environ, SPARK_LOCAL_IP="127.0.0.1", PYSPARK_PYTHON=PY))
            total = time.time() - t0
            print(f"| sql/ queries on {name}, with start-up (best of 3 per query) | {total:.2f} |")
            print(f"\n{name} per query (run.py):\n```\n{r.stderr.strip()}\n```\n", file=sys.stderr)
    finally:
        for p in started:
            p.kill()
            p.wait()
    print()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--events", type=int, default=5_000_000)
    ap.add_argument("--hosts", type=int, default=200)
    ap.add_argument("--host-events", type=int, default=20_000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--cluster", action="store_true")
    ap.add_argument("--skip-export", action="store_true")
    ap.add_argument("--skip-fleet", action="store_true", help="the export benchmark only")
    a = ap.parse_args()
    data = os.environ.get("BENCH_DIR", os.path.join(REPO, "target/bench-data/parquet"))
    os.makedirs(data, exist_ok=True)
    if not a.skip_export:
        export_bench(a, data)
    if not a.skip_fleet:
        fleet_bench(a, data)


if __name__ == "__main__":
    main()
