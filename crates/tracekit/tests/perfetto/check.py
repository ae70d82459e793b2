"""Reads a Perfetto trace with Perfetto's own bindings (the `perfetto` package's
perfetto_trace_pb2) and prints what it holds as JSON, for crates/tracekit/tests/perfetto.rs.

Compact sched_switch and sched_waking events (a bundle's compact_sched columns) are read as
Perfetto's trace processor reads them: their times are deltas, their comms indexes in the
bundle's intern table, a switch's prev_* fields and a waking's waker are what the previous
switch on the CPU put there (Perfetto's order: by time, and at one time a bundle's compact
switches, then its compact wakings, then its other events).

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
    # Per (machine, cpu): the thread the last sched_switch put on the CPU (pid, comm,
    # prio), what Perfetto infers the prev_* fields of a compact sched_switch and the waker
    # of a compact sched_waking from.
    running = {}
    compact = 0
    for p in trace.packet:
        m = p.machine_id
        if p.HasField("ftrace_events"):
            b = p.ftrace_events
            if b.lost_events:
                lost_bundles += 1
            key = (m, b.cpu)
            # The bundle's events in the order Perfetto reads them: by time, and at one
            # time its compact switches, then its compact wakings, then its other events.
            items = []
            prev_ts = None
            for i, e in enumerate(b.event):
                if prev_ts is not None and e.timestamp < prev_ts:
                    ordered = False
                prev_ts = e.timestamp
                items.append((e.timestamp, 2, i, e))
            c = b.compact_sched
            strings = list(c.intern_table)
            columns = [len(c.switch_timestamp), len(c.switch_prev_state),
                       len(c.switch_next_pid), len(c.switch_next_prio),
                       len(c.switch_next_comm_index)]
            if len(set(columns)) != 1:
                raise SystemExit("compact sched_switch columns of different lengths")
            columns = [len(c.waking_timestamp), len(c.waking_pid), len(c.waking_target_cpu),
                       len(c.waking_prio), len(c.waking_comm_index)]
            if len(set(columns)) != 1:
                raise SystemExit("compact sched_waking columns of different lengths")
            ts = 0
            for i, d in enumerate(c.switch_timestamp):
                if d >= 1 << 63:
                    ordered = False
                ts = (ts + d) & ((1 << 64) - 1)
                items.append((ts, 0, i, ("switch", c.switch_prev_state[i],
                                         c.switch_next_pid[i], c.switch_next_prio[i],
                                         strings[c.switch_next_comm_index[i]])))
            ts = 0
            for i, d in enumerate(c.waking_timestamp):
                if d >= 1 << 63:
                    ordered = False
                ts = (ts + d) & ((1 << 64) - 1)
                items.append((ts, 1, i, ("waking", c.waking_pid[i], c.waking_target_cpu[i],
                                         c.waking_prio[i], strings[c.waking_comm_index[i]])))
            items.sort(key=lambda x: x[:3])
            if items and items[0][0] < last.get(key, 0):
                ordered = False
            if items:
                last[key] = items[-1][0]
            for ts, group, _, e in items:
                events += 1
                if group == 2:
                    kind = e.WhichOneof("event")
                    if kind is None:
                        raise SystemExit("an ftrace event without a kind")
                    if e.HasField("pid"):
                        pids_set += 1
                    if kind == "sched_switch":
                        s = e.sched_switch
                        switches.append([m, b.cpu, e.timestamp, e.pid, s.prev_comm, s.prev_pid,
                                         s.prev_prio, s.prev_state, s.next_comm, s.next_pid,
                                         s.next_prio])
                        running[key] = (s.next_pid, s.next_comm, s.next_prio)
                else:
                    compact += 1
                    if key not in running:
                        raise SystemExit("a compact event before any sched_switch on its CPU")
                    pid, comm, prio = running[key]
                    # Perfetto infers the thread the event is in.
                    pids_set += 1
                    if e[0] == "switch":
                        kind = "sched_switch"
                        _, state, next_pid, next_prio, next_comm = e
                        switches.append([m, b.cpu, ts, pid, comm, pid, prio, state, next_comm,
                                         next_pid, next_prio])
                        running[key] = (next_pid, next_comm, next_prio)
                    else:
                        kind = "sched_waking"
                counts.setdefault(str(m), {}).setdefault(kind, 0)
                counts[str(m)][kind] += 1
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
        "compact": compact,
        "switches": switches,
    }, sys.stdout)


if __name__ == "__main__":
    main(sys.argv[1])
