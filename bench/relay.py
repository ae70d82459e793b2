#!/usr/bin/env python3
"""`tracekit relay` against `lttng-relayd` (run as root): the same flood of LTTng-UST events
streamed by a real live session into each relay in turn, in one run, in private namespaces;
then event-to-live-reader latency with babeltrace2 as the viewer of each.

    bench/relay.py                      # 4 M events per flood, 3 floods per relay
    BENCH_EVENTS=10000000 BENCH_RUNS=5 bench/relay.py

Environment: BENCH_EVENTS (4000000), BENCH_RUNS (3), BENCH_LATENCY (20 samples),
BENCH_REPLAY (20 replays of the packets),
CARGO_TARGET_DIR (the release binary is taken from there; built if missing).
See bench/README.md for what is measured and the figures measured so far.

Flood: `tk_app 0 N` (crates/testkit/data/lttng) emits N `tk:tick` events into a per-UID live
channel (`--live=200000`, 4 sub-buffers of 1 MiB per CPU) in blocking mode
(`--blocking-timeout=inf`): no event is discarded, the application waits for the consumer
daemon, which waits for the relay, so the flood's wall time (start to the end of
`lttng destroy`) is what the slower of consumerd and the relay allows. For each relay: MB/s
(trace bytes it wrote / that time), its CPU time (user + system, from /proc), its peak RSS
(VmHWM), and the events babeltrace2 reads back from what it wrote.

Replay: the packets (and indexes, and metadata) of the first flood's trace as lttng-relayd
wrote it, sent BENCH_REPLAY (20) times over by this script playing a consumer daemon (protocol
2.13, 64 index replies in flight), as fast as each relay takes them: the relay alone, without
consumerd's pace. Done when the relay says no data is pending for any stream.

Latency: babeltrace2 (`--clock-seconds`, line-buffered by `stdbuf`) reads the live session
while one `tk:values` event is emitted every 300 ms; the latency of an event is the wall
time its line reached us minus its own timestamp (both CLOCK_REALTIME-based).
"""

import os
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EVENTS = int(os.environ.get("BENCH_EVENTS", "4000000"))
RUNS = int(os.environ.get("BENCH_RUNS", "3"))
SAMPLES = int(os.environ.get("BENCH_LATENCY", "20"))
REPLAY = int(os.environ.get("BENCH_REPLAY", "20"))
TARGET = os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target"))
TK = os.path.join(TARGET, "release", "tracekit")
DATA = os.path.join(ROOT, "crates", "testkit", "data", "lttng")

PRELUDE = """set -eu
mount -t tmpfs tmpfs /run
mkdir -p /run/lttng
mount -t tmpfs tmpfs /dev/shm
ip link set lo up
export HOME="$W/home" LTTNG_HOME="$W/home"
mkdir -p "$HOME"
lttng-sessiond --no-kernel --daemonize
"""


def sh(cmd, **kw):
    return subprocess.run(cmd, shell=True, check=True, **kw)


def proc_stats(pid):
    """CPU seconds (user + system) and peak RSS (MiB) of a live process."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    tick = os.sysconf("SC_CLK_TCK")
    cpu = (int(fields[11]) + int(fields[12])) / tick
    hwm = 0
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                hwm = int(line.split()[1]) / 1024
    return cpu, hwm


def start_relay(kind, out):
    os.makedirs(out, exist_ok=True)
    if kind == "lttng-relayd":
        cmd = ["lttng-relayd", "-o", out] + (["-vvv"] if os.environ.get("BENCH_DEBUG") else [])
    else:
        cmd = [TK, "relay", "-o", out]
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=open(out + ".log", "w"))
    for _ in range(200):
        r = subprocess.run("exec 3<>/dev/tcp/127.0.0.1/5344", shell=True, executable="/bin/bash",
                           stderr=subprocess.DEVNULL)
        if r.returncode == 0:
            break
        time.sleep(0.02)
    return p


def du(path):
    total = 0
    for d, _, files in os.walk(path):
        for f in files:
            total += os.path.getsize(os.path.join(d, f))
    return total


def slug(kind):
    return kind.replace(" ", "-")


def flood(kind, app, w, n):
    out = os.path.join(w, f"out-{slug(kind)}-{n}")
    relay = start_relay(kind, out)
    sh(f"lttng create f{n} --live=200000 --set-url net://127.0.0.1 >/dev/null && "
       "lttng enable-channel -u --subbuf-size=1M --num-subbuf=4 --blocking-timeout=inf c >/dev/null && "
       "lttng enable-event -u -c c 'tk:tick' >/dev/null && lttng start >/dev/null")
    t0 = time.monotonic()
    sh(f"LTTNG_UST_ALLOW_BLOCKING=1 {app} 0 {EVENTS}")
    sh("lttng stop >/dev/null && lttng destroy >/dev/null")
    wall = time.monotonic() - t0
    cpu, hwm = proc_stats(relay.pid)
    relay.kill()
    relay.wait()
    size = du(out)
    count = subprocess.run(f"babeltrace2 '{out}' | wc -l", shell=True, capture_output=True,
                           text=True).stdout.strip()
    return {"wall": wall, "cpu": cpu, "rss": hwm, "bytes": size, "events": int(count),
            "out": out}


def latency(kind, app, w):
    out = os.path.join(w, f"out-{slug(kind)}-latency")
    relay = start_relay(kind, out)
    sh("lttng create lat --live=200000 --set-url net://127.0.0.1 >/dev/null && "
       "lttng enable-event -u 'tk:values' >/dev/null && lttng start >/dev/null")
    host = subprocess.run(["hostname"], capture_output=True, text=True).stdout.strip()
    sh(f"{app} 1 0")  # the streams exist before the viewer attaches
    time.sleep(0.5)
    viewer = subprocess.Popen(["stdbuf", "-oL", "babeltrace2", "--input-format=lttng-live",
                               "--clock-seconds", f"net://127.0.0.1/host/{host}/lat"],
                              stdout=subprocess.PIPE, text=True)
    import threading
    seen = []

    def reader():
        for line in viewer.stdout:
            now = time.time()
            if line.startswith("[") and "tk:values" in line:
                seen.append(now - float(line[1:line.index("]")]))

    t = threading.Thread(target=reader, daemon=True)
    t.start()
    time.sleep(1.0)
    first = len(seen)
    for _ in range(SAMPLES):
        sh(f"{app} 1 0")
        time.sleep(0.3)
    time.sleep(1.0)
    sh("lttng stop >/dev/null && lttng destroy >/dev/null")
    try:
        viewer.wait(timeout=10)
    except subprocess.TimeoutExpired:
        viewer.kill()
    t.join(timeout=2)
    relay.kill()
    relay.wait()
    lat = sorted(seen[first:])
    return lat


def trace_dir(out):
    for d, _, files in os.walk(out):
        if "metadata" in files:
            return d
    raise SystemExit(f"no trace in {out}")


def recv_exact(sock, n):
    b = b""
    while len(b) < n:
        c = sock.recv(n - len(b))
        if not c:
            raise SystemExit("the relay closed the connection")
        b += c
    return b


def replay(kind, source, w):
    """Plays a consumer daemon sending the packets of `source` (a trace lttng-relayd wrote)
    REPLAY times, as fast as the relay takes them; returns MB/s, CPU s and peak RSS."""
    import mmap
    import socket
    import struct
    out = os.path.join(w, f"out-{slug(kind)}-replay")
    relay = start_relay(kind, out)
    ctrl = socket.create_connection(("127.0.0.1", 5342))
    data = socket.create_connection(("127.0.0.1", 5343))
    ctrl.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def cmd(num, payload, reply):
        ctrl.sendall(struct.pack(">QQII", 0, len(payload), num, 0) + payload)
        return recv_exact(ctrl, reply) if reply else b""

    cmd(5, struct.pack(">II", 2, 13), 8)
    names = b"replay\0host\0"
    base = struct.pack(">IIII", 7, 5, 0, 200000) + bytes([0, 0]) + bytes(range(1, 17)) + \
        struct.pack(">QQ", 0, int(time.time())) + bytes([0]) + struct.pack(">Q", 0)
    r = cmd(2, base + names, 16)
    plen = struct.unpack(">I", r[12:16])[0]
    recv_exact(ctrl, plen)
    cmd(19, struct.pack(">QQI", 0, int(time.time()), 0), 4)
    src = trace_dir(source)
    chans = sorted(f for f in os.listdir(src) if f != "metadata" and os.path.isfile(os.path.join(src, f)))
    handles = {}
    for name in chans + ["metadata"]:
        n, p = name.encode() + b"\0", b"ust/uid/0/64-bit\0"
        r = cmd(1, struct.pack(">IIQQQ", len(n), len(p), 0, 0, 0) + n + p, 12)
        handles[name] = struct.unpack(">Q", r[:8])[0]
    cmd(16, b"", 4)
    meta = open(os.path.join(src, "metadata"), "rb").read()
    ctrl.sendall(struct.pack(">QQII", 0, 12 + len(meta), 6, 0) +
                 struct.pack(">QI", handles["metadata"], 0) + meta)
    packets = []
    for name in chans:
        idx = open(os.path.join(src, "index", name + ".idx"), "rb").read()
        f = open(os.path.join(src, name), "rb")
        mm = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) if os.path.getsize(f.name) else None
        for at in range(16, len(idx), 72):
            e = struct.unpack(">9Q", idx[at:at + 72])
            packets.append((name, mm, e))
    total = 0
    seqs = {name: 0 for name in chans}
    t0 = time.monotonic()
    replies = 0
    for _ in range(REPLAY):
        for name, mm, (off, psize, csize, tb, te, disc, sid, inst, pseq) in packets:
            size, content = psize // 8, (csize + 7) // 8
            seq = seqs[name]
            seqs[name] += 1
            data.sendall(struct.pack(">QQQII", 0, handles[name], seq, content, size - content))
            data.sendall(memoryview(mm)[off:off + content])
            ctrl.sendall(struct.pack(">QQII", 0, 80, 13, 0) + struct.pack(
                ">10Q", handles[name], seq, psize, csize, tb, te, disc, sid, inst, pseq))
            replies += 1
            total += size
            if replies >= 64:
                recv_exact(ctrl, 4 * replies)
                replies = 0
    recv_exact(ctrl, 4 * replies)
    # Done when the relay says every stream's data is in.
    for name in chans:
        last = seqs[name] - 1
        while cmd(8, struct.pack(">QQ", handles[name], last), 4) != struct.pack(">I", 0):
            time.sleep(0.001)
    wall = time.monotonic() - t0
    cpu, hwm = proc_stats(relay.pid)
    ctrl.close()
    data.close()
    relay.kill()
    relay.wait()
    subprocess.run(["rm", "-rf", out])
    return {"wall": wall, "cpu": cpu, "rss": hwm, "bytes": total}


def inner():
    w = os.environ["W"]
    app = os.path.join(w, "tk_app")
    results = {"lttng-relayd": [], "tracekit relay": []}
    for n in range(RUNS):
        # Alternate which relay goes first: neither always gets the warmer cache.
        kinds = list(results) if n % 2 == 0 else list(reversed(results))
        for kind in kinds:
            r = flood(kind, app, w, f"{n}{'a' if kind == 'lttng-relayd' else 'b'}")
            results[kind].append(r)
            print(f"  {kind}: {r}", file=sys.stderr, flush=True)
    source = results["lttng-relayd"][0]["out"]
    replays = {kind: [] for kind in results}
    for n in range(RUNS):
        kinds = list(replays) if n % 2 == 0 else list(reversed(replays))
        for kind in kinds:
            r = replay(kind, source, w)
            replays[kind].append(r)
            print(f"  replay {kind}: {r}", file=sys.stderr, flush=True)
    lats = {kind: latency(kind, app, w) for kind in results}
    print("| relay | MB written | events read back | flood wall (s) | MB/s | relay CPU (s) | "
          "MB per CPU-s | relay peak RSS (MiB) |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    med = {}
    for kind, rs in results.items():
        wall = statistics.median(r["wall"] for r in rs)
        cpu = statistics.median(r["cpu"] for r in rs)
        rss = max(r["rss"] for r in rs)
        mb = statistics.median(r["bytes"] for r in rs) / 1e6
        ev = min(r["events"] for r in rs)
        med[kind] = (mb / wall, cpu, rss)
        print(f"| {kind} | {mb:.1f} | {ev} | {wall:.2f} | {mb / wall:.1f} | {cpu:.2f} | "
              f"{mb / cpu if cpu else float('inf'):.0f} | {rss:.1f} |")
    a, b = med["tracekit relay"], med["lttng-relayd"]
    print(f"\ntracekit relay / lttng-relayd: throughput {a[0] / b[0]:.2f}x, CPU {a[1] / b[1]:.2f}x, "
          f"peak RSS {a[2] / b[2]:.2f}x (medians of {RUNS} floods of {EVENTS} events)\n")
    print("| relay (replayed packets, no consumerd) | GB | wall (s) | MB/s | relay CPU (s) | "
          "MB per CPU-s | relay peak RSS (MiB) |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    rmed = {}
    for kind, rs in replays.items():
        wall = statistics.median(r["wall"] for r in rs)
        cpu = statistics.median(r["cpu"] for r in rs)
        rss = max(r["rss"] for r in rs)
        gb = rs[0]["bytes"] / 1e9
        rmed[kind] = (gb * 1e3 / wall, cpu, rss)
        print(f"| {kind} | {gb:.2f} | {wall:.2f} | {gb * 1e3 / wall:.0f} | {cpu:.2f} | "
              f"{gb * 1e3 / cpu if cpu else float('inf'):.0f} | {rss:.1f} |")
    a, b = rmed["tracekit relay"], rmed["lttng-relayd"]
    print(f"\ntracekit relay / lttng-relayd on replayed packets: throughput {a[0] / b[0]:.2f}x, "
          f"CPU {a[1] / b[1]:.2f}x, peak RSS {a[2] / b[2]:.2f}x\n")
    print("| relay (babeltrace2 viewer, live timer 200 ms) | samples | median (ms) | p90 (ms) | max (ms) |")
    print("|---|---:|---:|---:|---:|")
    for kind, lat in lats.items():
        if not lat:
            print(f"| {kind} | 0 | - | - | - |")
            continue
        p90 = lat[min(len(lat) - 1, int(0.9 * len(lat)))]
        print(f"| {kind} | {len(lat)} | {statistics.median(lat) * 1e3:.0f} | {p90 * 1e3:.0f} | "
              f"{lat[-1] * 1e3:.0f} |")


def main():
    if os.environ.get("BENCH_INNER"):
        return inner()
    if os.geteuid() != 0:
        sys.exit("bench/relay.py needs root (namespaces, a session daemon of its own)")
    if not os.path.exists(TK):
        sh(f"cargo build --release -p tracekit", cwd=ROOT)
    w = os.path.join(TARGET, "bench-relay")
    sh(f"rm -rf {w} && mkdir -p {w}")
    sh(f"gcc -O2 -I {DATA} -o {w}/tk_app {DATA}/tk_app.c {DATA}/tk_tp.c -llttng-ust -ldl")
    env = dict(os.environ, W=w, BENCH_INNER="1")
    script = PRELUDE + f'exec python3 {os.path.abspath(__file__)}\n'
    subprocess.run(["unshare", "--mount", "--propagation", "private", "--pid", "--fork",
                    "--kill-child", "--mount-proc", "--net", "bash", "-c", script],
                   env=env, check=True)


if __name__ == "__main__":
    main()
