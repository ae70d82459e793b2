"""Reads a Perfetto trace with Perfetto's own bindings (the `perfetto` package's
perfetto_trace_pb2) and prints what it holds as JSON, for crates/tracekit/tests/perfetto.rs.

Usage: check.py TRACE
"""
import json
import sys

from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb


def main(path):
    with open(path, "rb") as f:
        data = f.read()
    trace = pb.Trace()
    # Raises on any packet that does not parse.
    trace.ParseFromString(data)
    counts = {}  # machine -> ftrace event kind -> count
    switches = []
    threads = {}  # machine -> count
    processes = 0
    clock_snapshots = 0
    system_infos = []
    lost_bundles = 0
    # Per (machine, cpu), whether the events' times never go back.
    last = {}
    ordered = True
    pids_set = 0
    events = 0
    for p in trace.packet:
        m = p.machine_id
        if p.HasField("ftrace_events"):
            b = p.ftrace_events
            if b.lost_events:
                lost_bundles += 1
            key = (m, b.cpu)
            for e in b.event:
                kind = e.WhichOneof("event")
                if kind is None:
                    raise SystemExit("an ftrace event without a kind")
                events += 1
                counts.setdefault(str(m), {}).setdefault(kind, 0)
                counts[str(m)][kind] += 1
                if e.timestamp < last.get(key, 0):
                    ordered = False
                last[key] = e.timestamp
                if e.HasField("pid"):
                    pids_set += 1
                if kind == "sched_switch":
                    s = e.sched_switch
                    switches.append([m, b.cpu, e.timestamp, e.pid, s.prev_comm, s.prev_pid,
                                     s.prev_prio, s.prev_state, s.next_comm, s.next_pid,
                                     s.next_prio])
        elif p.HasField("process_tree"):
            t = p.process_tree
            threads[str(m)] = threads.get(str(m), 0) + len(t.threads)
            processes += len(t.processes)
        elif p.HasField("clock_snapshot"):
            clock_snapshots += 1
            clocks = {c.clock_id: c.timestamp for c in p.clock_snapshot.clocks}
            if clocks.get(6) != clocks.get(1):
                raise SystemExit("BOOTTIME and REALTIME differ in the clock snapshot")
        elif p.HasField("system_info"):
            system_infos.append([m, p.system_info.utsname.machine,
                                 p.system_info.utsname.release])
    json.dump({
        "packets": len(trace.packet),
        "events": events,
        "counts": counts,
        "threads": threads,
        "processes": processes,
        "clock_snapshots": clock_snapshots,
        "system_infos": system_infos,
        "lost_bundles": lost_bundles,
        "ordered_per_cpu": ordered,
        "pids_set": pids_set,
        "switches": switches,
    }, sys.stdout)


if __name__ == "__main__":
    main(sys.argv[1])
