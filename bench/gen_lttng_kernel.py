#!/usr/bin/env python3
"""Write an LTTng-like kernel trace (CTF 1.8) of a busy machine, independently of tracekit.

    bench/gen_lttng_kernel.py -o DIR [--events N] [--cpus C] [--seed S] [--packet-kib K] [--contexts]

The benchmark's second trace: `tracekit gen kernel-mix` writes its traces with tracekit's own
CTF writer, so a slow path that only other writers' layouts take would go unseen. This script
is written from the CTF 1.8 specification and from the metadata of real lttng-modules kernel
traces (the event layouts below are those lttng-modules declares), with the standard library
only. What it shares with a trace recorded by lttng-modules:

- one stream per CPU (`channel0_N`), 1 MiB packets by default (lttng-tools 2.13's kernel
  sub-buffer; the last one cut to whole pages as the tracer does), each with LTTng's packet header
  (magic, UUID, stream id, stream instance id) and packet context (timestamp_begin/end,
  content/packet size, packet_seq_num, events_discarded, cpu_id), and LTTng's index files;
- metadata split in metadata packets (the CTF metadata packet header), as LTTng writes it;
- LTTng's compact event header: a 5-bit id and a 27-bit timestamp, or id 31 followed by a
  32-bit id and a 64-bit timestamp. Event ids are those of a session with every kernel event
  enabled: syscall entries at their x86-64 number, exits after them, tracepoints above 1000,
  so most events need the extended header, as in real kernel traces; the compact one is used,
  as the tracer does, when the id fits and the time since the previous event fits in 27 bits,
  never for a packet's first event;
- an event mix of a busy machine: scheduling (sched_switch, sched_waking/wakeup,
  sched_stat_runtime, migrations), system calls as entry/exit pairs with their arguments
  (file names of openat/execve as strings, poll/epoll descriptor sequences with bit fields,
  an enumeration), interrupts and softirqs, timers, page and slab allocations, block requests
  (with their empty command sequence) and network packets (device names as strings);
  timestamps advance by sub-microsecond to microsecond steps with occasional idle gaps longer
  than the 27-bit compact timestamp can span.

babeltrace2 reads the result without a warning and prints what `tracekit print` prints
(bench/run.sh checks both). No string is empty: babeltrace2 2.0.4 prints an empty string field
as the previous event's value of that field.
"""

import argparse
import os
import random
import struct
import sys
import uuid as uuidlib

# ----------------------------------------------------------------------------------------------
# TSDL field declarations, as lttng-modules writes them (byte-aligned, little-endian).


def _int(size, signed=False, base=10):
    return (
        f"integer {{ size = {size}; align = 8; signed = {1 if signed else 0}; "
        f"encoding = none; base = {base}; }}"
    )


def u(size, name, base=10):
    return f"{_int(size, False, base)} _{name};"


def s(size, name):
    return f"{_int(size, True)} _{name};"


def x(size, name):
    return u(size, name, 16)


def comm(name):
    return f"integer {{ size = 8; align = 8; signed = 0; encoding = UTF8; base = 10; }} _{name}[16];"


def string(name):
    return f"string _{name};"


def bits(names, pad):
    lines = [
        f"integer {{ size = 1; align = 1; signed = 0; encoding = none; base = 10; }} _{n};" for n in names
    ]
    lines.append(f"integer {{ size = {pad}; align = 1; signed = 0; encoding = none; base = 10; }} _padding;")
    return "struct {\n" + "\n".join(lines) + "\n}_events;"


POLL_FD = "struct {\n" + "\n".join(
    [s(32, "fd"), x(16, "raw_events"), bits(["POLLIN", "POLLPRI", "POLLOUT", "POLLERR", "POLLHUP"], 3)]
) + "\n}"
EPOLL_EVENT = "struct {\n" + "\n".join(
    [
        "struct {\n" + x(64, "u64") + "\n" + u(32, "fd") + "\n}_data_union;",
        x(32, "raw_events"),
        bits(["EPOLLIN", "EPOLLPRI", "EPOLLOUT", "EPOLLERR"], 4),
    ]
) + "\n}"
EPOLL_OP = (
    f"enum : {_int(32, True)} {{\n"
    '"EPOLL_CTL_ADD" = 1,\n"EPOLL_CTL_DEL" = 2,\n"EPOLL_CTL_MOD" = 3,\n} _op_enum;'
)

# System calls: (x86-64 number, name, entry fields, exit fields).
SYSCALLS = [
    (0, "read", [u(32, "fd"), u(64, "count")], [s(64, "ret"), u(64, "buf")]),
    (1, "write", [u(32, "fd"), u(64, "buf"), u(64, "count")], [s(64, "ret")]),
    (3, "close", [u(32, "fd")], [s(64, "ret")]),
    (5, "newfstat", [u(32, "fd")], [s(64, "ret"), u(64, "statbuf")]),
    (7, "poll", [s(32, "timeout_msecs"), u(32, "nfds"), u(32, "fds_length"), u(8, "overflow"),
                 f"{POLL_FD} _fds[ _fds_length ];"],
     [s(64, "ret"), u(32, "nfds"), u(32, "fds_length"), f"{POLL_FD} _fds[ _fds_length ];"]),
    (8, "lseek", [u(32, "fd"), s(64, "offset"), u(32, "whence")], [s(64, "ret")]),
    (9, "mmap", [x(64, "addr"), u(64, "len"), s(32, "prot"), s(32, "flags"), s(32, "fd"), s(64, "offset")],
     [x(64, "ret")]),
    (11, "munmap", [x(64, "addr"), u(64, "len")], [s(64, "ret")]),
    (16, "ioctl", [u(32, "fd"), u(32, "cmd"), u(64, "arg")], [s(64, "ret")]),
    (17, "pread64", [u(32, "fd"), u(64, "count"), s(64, "pos")], [s(64, "ret"), u(64, "buf")]),
    (20, "writev", [u(64, "fd"), u(64, "vec"), u(64, "vlen")], [s(64, "ret")]),
    (44, "sendto", [s(32, "fd"), u(64, "buff"), u(64, "len"), u(32, "flags"), u(64, "addr"), s(32, "addr_len")],
     [s(64, "ret")]),
    (45, "recvfrom", [s(32, "fd"), u(64, "size"), u(32, "flags"), u(64, "addr_len")],
     [s(64, "ret"), u(64, "ubuf"), u(64, "addr"), u(64, "addr_len")]),
    (59, "execve", [string("filename"), x(64, "argv"), x(64, "envp")], [s(64, "ret")]),
    (202, "futex", [u(64, "uaddr"), s(32, "op"), u(32, "val"), u(64, "utime"), u(64, "uaddr2"), u(32, "val3")],
     [s(64, "ret"), u(64, "uaddr"), u(64, "uaddr2")]),
    (228, "clock_gettime", [s(32, "which_clock")], [s(64, "ret"), u(64, "tp")]),
    (232, "epoll_wait", [s(32, "epfd"), s(32, "maxevents"), s(32, "timeout")],
     [s(64, "ret"), u(32, "fds_length"), u(8, "overflow"), f"{EPOLL_EVENT} _fds[ _fds_length ];"]),
    (233, "epoll_ctl", [s(32, "epfd"), EPOLL_OP, s(32, "fd"), f"{EPOLL_EVENT}_event;"], [s(64, "ret")]),
    (257, "openat", [s(32, "dfd"), string("filename"), s(32, "flags"), u(16, "mode")], [s(64, "ret")]),
    (262, "newfstatat", [s(32, "dfd"), string("filename"), s(32, "flag")], [s(64, "ret"), u(64, "statbuf")]),
]
EXIT_BASE = 335

TRACEPOINTS = [
    ("sched_switch", [comm("prev_comm"), s(32, "prev_tid"), s(32, "prev_prio"), s(64, "prev_state"),
                      comm("next_comm"), s(32, "next_tid"), s(32, "next_prio")]),
    ("sched_waking", [comm("comm"), s(32, "tid"), s(32, "prio"), s(32, "target_cpu")]),
    ("sched_wakeup", [comm("comm"), s(32, "tid"), s(32, "prio"), s(32, "target_cpu")]),
    ("sched_stat_runtime", [comm("comm"), s(32, "tid"), u(64, "runtime"), u(64, "vruntime")]),
    ("sched_migrate_task", [comm("comm"), s(32, "tid"), s(32, "prio"), s(32, "orig_cpu"), s(32, "dest_cpu")]),
    ("irq_handler_entry", [s(32, "irq"), string("name")]),
    ("irq_handler_exit", [s(32, "irq"), s(32, "ret")]),
    ("irq_softirq_raise", [u(32, "vec")]),
    ("irq_softirq_entry", [u(32, "vec")]),
    ("irq_softirq_exit", [u(32, "vec")]),
    ("timer_hrtimer_start", [x(64, "hrtimer"), x(64, "function"), s(64, "expires"), s(64, "softexpires")]),
    ("timer_hrtimer_cancel", [x(64, "hrtimer")]),
    ("timer_hrtimer_expire_entry", [x(64, "hrtimer"), s(64, "now"), x(64, "function")]),
    ("timer_hrtimer_expire_exit", [x(64, "hrtimer")]),
    ("kmem_kmalloc", [x(64, "call_site"), x(64, "ptr"), u(64, "bytes_req"), u(64, "bytes_alloc"),
                      u(32, "gfp_flags")]),
    ("kmem_kfree", [x(64, "call_site"), x(64, "ptr")]),
    ("kmem_mm_page_alloc", [x(64, "page"), u(64, "pfn"), u(32, "order"), u(32, "gfp_flags"), s(32, "migratetype")]),
    ("kmem_mm_page_free", [x(64, "page"), u(64, "pfn"), u(32, "order")]),
    ("block_rq_issue", [u(32, "dev"), u(64, "sector"), u(32, "nr_sector"), u(32, "bytes"), s(32, "tid"),
                        u(32, "rwbs"), u(64, "_cmd_length"),
                        "integer { size = 8; align = 8; signed = 0; encoding = none; base = 16; } _cmd[ __cmd_length ];",
                        comm("comm")]),
    ("block_rq_complete", [u(32, "dev"), u(64, "sector"), u(32, "nr_sector"), s(32, "errors"), u(32, "rwbs"),
                           u(64, "_cmd_length"),
                           "integer { size = 8; align = 8; signed = 0; encoding = none; base = 16; } _cmd[ __cmd_length ];"]),
    ("net_dev_xmit", [x(64, "skbaddr"), s(32, "rc"), u(32, "len"), string("name")]),
    ("netif_receive_skb", [x(64, "skbaddr"), u(32, "len"), string("name")]),
    ("power_cpu_idle", [u(32, "state"), u(32, "cpu_id")]),
    ("rcu_utilization", [string("s")]),
]
TRACEPOINT_BASE = 1100


def metadata_text(trace_uuid, clock_uuid, hostname, clock_offset, contexts):
    ids = {}
    events = []
    for nr, name, entry, exit_ in SYSCALLS:
        events.append((f"syscall_entry_{name}", nr, entry))
        events.append((f"syscall_exit_{name}", EXIT_BASE + nr, exit_))
    for i, (name, fields) in enumerate(TRACEPOINTS):
        events.append((name, TRACEPOINT_BASE + i, fields))
    out = [
        "/* CTF 1.8 */",
        "",
        "typealias integer { size = 8; align = 8; signed = false; } := uint8_t;",
        "typealias integer { size = 16; align = 8; signed = false; } := uint16_t;",
        "typealias integer { size = 32; align = 8; signed = false; } := uint32_t;",
        "typealias integer { size = 64; align = 8; signed = false; } := uint64_t;",
        "typealias integer { size = 64; align = 8; signed = false; } := unsigned long;",
        "typealias integer { size = 5; align = 1; signed = false; } := uint5_t;",
        "typealias integer { size = 27; align = 1; signed = false; } := uint27_t;",
        "",
        "trace {",
        "\tmajor = 1;",
        "\tminor = 8;",
        f'\tuuid = "{trace_uuid}";',
        "\tbyte_order = le;",
        "\tpacket.header := struct {",
        "\t\tuint32_t magic;",
        "\t\tuint8_t  uuid[16];",
        "\t\tuint32_t stream_id;",
        "\t\tuint64_t stream_instance_id;",
        "\t};",
        "};",
        "",
        "env {",
        f'\thostname = "{hostname}";',
        '\tdomain = "kernel";',
        '\tsysname = "Linux";',
        '\tkernel_release = "6.1.0-27-amd64";',
        '\tkernel_version = "#1 SMP PREEMPT_DYNAMIC Debian 6.1.115-1 (2024-11-01)";',
        '\ttracer_name = "lttng-modules";',
        "\ttracer_major = 2;",
        "\ttracer_minor = 13;",
        "\ttracer_patchlevel = 9;",
        '\ttrace_buffering_scheme = "global";',
        '\ttrace_name = "busy";',
        '\ttrace_creation_datetime = "20261128T101500+0000";',
        "};",
        "",
        "clock {",
        '\tname = "monotonic";',
        f'\tuuid = "{clock_uuid}";',
        '\tdescription = "Monotonic Clock";',
        "\tfreq = 1000000000; /* Frequency, in Hz */",
        "\t/* clock value offset from Epoch is: offset * (1/freq) */",
        f"\toffset = {clock_offset};",
        "};",
        "",
        "typealias integer {",
        "\tsize = 27; align = 1; signed = false;",
        "\tmap = clock.monotonic.value;",
        "} := uint27_clock_monotonic_t;",
        "",
        "typealias integer {",
        "\tsize = 64; align = 8; signed = false;",
        "\tmap = clock.monotonic.value;",
        "} := uint64_clock_monotonic_t;",
        "",
        "struct packet_context {",
        "\tuint64_clock_monotonic_t timestamp_begin;",
        "\tuint64_clock_monotonic_t timestamp_end;",
        "\tuint64_t content_size;",
        "\tuint64_t packet_size;",
        "\tuint64_t packet_seq_num;",
        "\tunsigned long events_discarded;",
        "\tuint32_t cpu_id;",
        "};",
        "",
        "struct event_header_compact {",
        "\tenum : uint5_t { compact = 0 ... 30, extended = 31 } id;",
        "\tvariant <id> {",
        "\t\tstruct {",
        "\t\t\tuint27_clock_monotonic_t timestamp;",
        "\t\t} compact;",
        "\t\tstruct {",
        "\t\t\tuint32_t id;",
        "\t\t\tuint64_clock_monotonic_t timestamp;",
        "\t\t} extended;",
        "\t} v;",
        "} align(8);",
        "",
        "stream {",
        "\tid = 0;",
        "\tevent.header := struct event_header_compact;",
        "\tpacket.context := struct packet_context;",
    ]
    if contexts:
        # `lttng add-context -k -t procname -t pid -t tid -t prio`, in LTTng's order.
        out += [
            "\tevent.context := struct {",
            "\t\t" + comm("procname"),
            "\t\t" + s(32, "pid"),
            "\t\t" + s(32, "tid"),
            "\t\t" + s(32, "prio"),
            "\t};",
        ]
    out += [
        "};",
        "",
    ]
    for name, eid, fields in events:
        ids[name] = eid
        out += ["event {", f'\tname = "{name}";', f"\tid = {eid};", "\tstream_id = 0;", "\tfields := struct {"]
        out += ["\t\t" + line for f in fields for line in f.split("\n")]
        out += ["\t};", "};", ""]
    return "\n".join(out), ids


METADATA_PACKET = 4096
METADATA_HEADER = struct.Struct("<I16sIIIBBBBB")  # CTF 1.8 metadata packet header: 37 bytes


def write_metadata(path, text, trace_uuid_bytes):
    data = text.encode()
    room = METADATA_PACKET - METADATA_HEADER.size
    with open(path, "wb") as f:
        for off in range(0, len(data), room):
            chunk = data[off:off + room]
            content = METADATA_HEADER.size + len(chunk)
            f.write(METADATA_HEADER.pack(0x75D11D57, trace_uuid_bytes, 0, content * 8, METADATA_PACKET * 8,
                                         0, 0, 0, 1, 8))
            f.write(chunk)
            f.write(bytes(METADATA_PACKET - content))


# ----------------------------------------------------------------------------------------------
# Streams.

PACKET_HEADER = struct.Struct("<I16sIQ")
PACKET_CONTEXT = struct.Struct("<QQQQQQI")
PREFIX = PACKET_HEADER.size + PACKET_CONTEXT.size
COMPACT = struct.Struct("<I")
EXTENDED = struct.Struct("<BIQ")
INDEX_HEADER = struct.Struct(">IIII")
INDEX_ENTRY = struct.Struct(">QQQQQQQQQ")
TS27 = (1 << 27) - 1


class Stream:
    """One CPU's stream file and its LTTng index, packet after packet."""

    def __init__(self, directory, cpu, packet_bytes, uuid_bytes):
        self.f = open(os.path.join(directory, f"channel0_{cpu}"), "wb")
        self.idx = open(os.path.join(directory, "index", f"channel0_{cpu}.idx"), "wb")
        self.idx.write(INDEX_HEADER.pack(0xC1F1DCC1, 1, 1, INDEX_ENTRY.size))
        self.cpu = cpu
        self.packet_bytes = packet_bytes
        self.uuid = uuid_bytes
        self.seq = 0
        self.offset = 0
        self.parts = []
        self.used = PREFIX
        self.begin = None
        self.last = 0

    def event(self, ts, eid, payload):
        if self.begin is not None and (eid < 31 and ts - self.last <= TS27):
            head = COMPACT.pack(eid | ((ts & TS27) << 5))
        else:
            head = EXTENDED.pack(31, eid, ts)
        size = len(head) + len(payload)
        if self.used + size > self.packet_bytes:
            self.flush()
            head = EXTENDED.pack(31, eid, ts)
            size = len(head) + len(payload)
        if self.begin is None:
            self.begin = ts
        self.parts.append(head)
        self.parts.append(payload)
        self.used += size
        self.last = ts

    def flush(self, last=False):
        if self.begin is None:
            return
        content = self.used * 8
        # The tracer cuts the last packet (flushed when tracing stops) to whole pages.
        packet_bytes = (self.used + 4095) // 4096 * 4096 if last else self.packet_bytes
        size = packet_bytes * 8
        self.f.write(PACKET_HEADER.pack(0xC1FC1FC1, self.uuid, 0, self.cpu))
        self.f.write(PACKET_CONTEXT.pack(self.begin, self.last, content, size, self.seq, 0, self.cpu))
        self.f.write(b"".join(self.parts))
        self.f.write(bytes(packet_bytes - self.used))
        self.idx.write(INDEX_ENTRY.pack(self.offset, size, content, self.begin, self.last, 0, 0, self.cpu, self.seq))
        self.offset += packet_bytes
        self.seq += 1
        self.parts = []
        self.used = PREFIX
        self.begin = None

    def close(self):
        self.flush(last=True)
        self.f.close()
        self.idx.close()


# ----------------------------------------------------------------------------------------------
# A busy machine, one CPU at a time.

TASKS = [
    ("swapper/{cpu}", 0, 20), ("firefox", 3120, 20), ("Web Content", 3388, 20), ("Isolated Web Co", 3561, 20),
    ("gnome-shell", 1874, 20), ("Xwayland", 2011, 20), ("pipewire", 1650, 9), ("pulseaudio", 1662, 9),
    ("postgres", 5120, 20), ("postgres: walwr", 5127, 20), ("nginx", 4410, 20), ("java", 6001, 20),
    ("C2 CompilerThre", 6019, 20), ("GC Thread#0", 6005, 20), ("kworker/{cpu}:1H", 212, 0),
    ("ksoftirqd/{cpu}", 14, 20), ("rcu_preempt", 15, 20), ("systemd-journal", 402, 19), ("dockerd", 1201, 20),
    ("containerd-shim", 2301, 20), ("sshd", 7701, 20), ("bash", 7760, 20), ("make", 8100, 20), ("cc1", 8123, 20),
    ("ld.bfd", 8150, 20), ("python3", 9001, 20), ("node", 9210, 20), ("chrome", 9900, 20),
    ("irq/128-nvme0q1", 480, -51), ("migration/{cpu}", 20, -100),
]
FILES = [
    "/usr/lib/x86_64-linux-gnu/libc.so.6", "/etc/ld.so.cache", "/proc/self/stat", "/proc/meminfo",
    "/sys/fs/cgroup/user.slice/user-1000.slice/session-2.scope/memory.current",
    "/home/user/.cache/mozilla/firefox/abcd1234.default-release/cache2/entries/5F3A9C0D1E2B7A44",
    "/var/lib/postgresql/15/main/base/16384/2619", "/var/lib/postgresql/15/main/pg_wal/000000010000000000000042",
    "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf", "/tmp/ccXq7Ab2.s", "/usr/include/stdio.h",
    "/usr/lib/gcc/x86_64-linux-gnu/12/include/stddef.h", "src/main.c", "build/obj/parser.o",
    "/dev/shm/org.chromium.Chromium.shmem.x8Rk2", "/run/user/1000/pipewire-0", "/etc/nginx/nginx.conf",
    "/var/log/nginx/access.log", "/home/user/My Documents/report final.odt", ".", "/",
]
EXECS = ["/usr/bin/cc", "/usr/lib/gcc/x86_64-linux-gnu/12/cc1", "/usr/bin/as", "/usr/bin/ld.bfd", "/bin/sh",
         "/usr/bin/git", "/usr/bin/python3.11"]
IRQS = [(128, "nvme0q1"), (129, "nvme0q2"), (131, "enp3s0-rx-0"), (132, "enp3s0-tx-0"), (16, "i915"),
        (9, "acpi"), (1, "i8042"), (24, "xhci_hcd")]
NETDEVS = ["enp3s0", "lo", "wlp2s0", "docker0", "veth3f2a1b0"]
RCU = ["Start scheduler-tick", "End scheduler-tick", "Start context switch", "End context switch"]
SOFTIRQS = [1, 2, 3, 6, 7, 9]  # TIMER, NET_TX, NET_RX, TASKLET, SCHED, RCU


def cstr(text):
    return text.encode() + b"\0"


def comm16(text):
    b = text.encode()[:15]
    return b + bytes(16 - len(b))


def simulate(stream, cpu, ncpus, budget, rng, ids, start, contexts):
    """Writes `budget` events of one CPU's activity to `stream`."""
    E = ids
    pk = struct.pack
    tasks = [(n.format(cpu=cpu), tid + (cpu if "{cpu}" in n else 0), prio) for n, tid, prio in TASKS]
    comms = {t[1]: comm16(t[0]) for t in tasks}
    cur = tasks[0]
    ts = start
    n = 0
    rand = rng.random
    randrange = rng.randrange
    choice = rng.choice

    # The event context, per task: procname, pid (the thread group's first thread), tid, prio.
    ctxs = {tid: comm16(name) + pk("<iii", tid - tid % 4 if tid > 100 else tid, tid, prio + 100 if prio > -100 else 0)
            for name, tid, prio in tasks} if contexts else None

    def emit(eid, payload, step=800):
        nonlocal ts, n
        ts += 40 + int(rand() * step)
        stream.event(ts, eid, ctxs[cur[1]] + payload if ctxs else payload)
        n += 1

    def addr():
        return 0xFFFF888000000000 + randrange(1 << 30) * 64

    def user_addr():
        return 0x7F0000000000 + randrange(1 << 36) * 8

    def syscall(name, entry, exit_, inner=None, step=800):
        emit(E["syscall_entry_" + name], entry, step)
        if inner:
            inner()
        if n < budget:
            emit(E["syscall_exit_" + name], exit_, step)

    def kmalloc():
        size = choice((32, 64, 96, 128, 192, 256, 512, 1024, 4096))
        emit(E["kmem_kmalloc"], pk("<QQQQI", 0xFFFFFFFF81000000 + randrange(1 << 24), addr(),
                                    size - randrange(size // 2 + 1), size, 0xCC0), 300)

    def pages():
        for _ in range(1 + randrange(3)):
            pfn = 0x100000 + randrange(1 << 22)
            order = choice((0, 0, 0, 1, 2, 3))
            if rand() < 0.5:
                emit(E["kmem_mm_page_alloc"], pk("<QQIIi", 0xFFFFEA0000000000 + pfn * 64, pfn, order, 0x100CCA,
                                                  choice((0, 1, 2))), 200)
            else:
                emit(E["kmem_mm_page_free"], pk("<QQI", 0xFFFFEA0000000000 + pfn * 64, pfn, order), 200)
            if n >= budget:
                return

    def wake():
        t = choice(tasks[1:])
        target = randrange(ncpus)
        p = comms[t[1]] + pk("<iii", t[1], t[2] + 100 if t[2] > -100 else 0, target)
        emit(E["sched_waking"], p, 500)
        if n < budget:
            emit(E["sched_wakeup"], p, 500)

    def block_issue():
        emit(E["block_rq_issue"], pk("<IQIIiIQ", 0x10300001, randrange(1 << 30), 8 * (1 + randrange(32)),
                                     0, cur[1], choice((0, 1, 8, 9)), 0) + comms[cur[1]], 600)

    def irq():
        nonlocal ts
        num, name = choice(IRQS)
        emit(E["irq_handler_entry"], pk("<i", num) + cstr(name), 3000)
        if n < budget:
            emit(E["irq_handler_exit"], pk("<ii", num, 1), 2000)
        vec = choice(SOFTIRQS)
        for ev in ("irq_softirq_raise", "irq_softirq_entry"):
            if n < budget:
                emit(E[ev], pk("<I", vec), 300)
        if n < budget and vec == 3:
            for _ in range(1 + randrange(4)):
                if n < budget:
                    emit(E["netif_receive_skb"], pk("<QI", addr(), 60 + randrange(1450)) + cstr(choice(NETDEVS)), 700)
        elif n < budget and vec == 1:
            timer = addr()
            emit(E["timer_hrtimer_expire_entry"], pk("<QqQ", timer, ts, 0xFFFFFFFF81100000 + randrange(1 << 20)), 400)
            if n < budget:
                emit(E["timer_hrtimer_expire_exit"], pk("<Q", timer), 1500)
        elif n < budget and num in (128, 129):
            emit(E["block_rq_complete"], pk("<IQIiIQ", 0x10300001, randrange(1 << 30), 8 * (1 + randrange(32)),
                                            0, choice((0, 1)), 0), 900)
        elif n < budget and vec == 9:
            emit(E["rcu_utilization"], cstr(choice(RCU)), 400)
        if n < budget:
            emit(E["irq_softirq_exit"], pk("<I", vec), 4000)

    def switch():
        nonlocal cur, ts
        nxt = choice(tasks) if rand() < 0.9 else tasks[0]
        if nxt is cur:
            nxt = tasks[1 + randrange(len(tasks) - 1)]
        emit(E["sched_stat_runtime"], comms[cur[1]] + pk("<iQQ", cur[1], randrange(4_000_000),
                                                          10**9 + randrange(10**12)), 600)
        if n >= budget:
            return
        if rand() < 0.1:
            emit(E["rcu_utilization"], cstr("Start context switch"), 100)
            if n >= budget:
                return
        emit(E["sched_switch"], comms[cur[1]] + pk("<iiq", cur[1], cur[2] + 100 if cur[2] > -100 else 0,
                                                    choice((0, 0, 1, 1, 2, 256)))
             + comms[nxt[1]] + pk("<ii", nxt[1], nxt[2] + 100 if nxt[2] > -100 else 0), 900)
        cur = nxt
        if cur is tasks[0] and n < budget:
            emit(E["power_cpu_idle"], pk("<II", 1 + randrange(3), cpu), 200)
            # Idle: now and then longer than a 27-bit timestamp spans (134 ms).
            ts += int(rng.expovariate(1 / 2e6)) + (randrange(400_000_000) if rand() < 0.01 else 0)
            if n < budget:
                emit(E["power_cpu_idle"], pk("<II", 0xFFFFFFFF, cpu), 200)

    def poll_fds(k, out):
        parts = []
        for _ in range(k):
            ev = choice((1, 1, 4, 5, 0x19))
            bitsb = (ev & 1) | ((ev >> 1 & 1) << 1) | ((ev >> 2 & 1) << 2) | ((ev >> 3 & 1) << 3) | ((ev >> 4 & 1) << 4)
            parts.append(pk("<ihB", 3 + randrange(60), ev if not out else ev & 5, bitsb if not out else bitsb & 5))
        return b"".join(parts)

    def epoll_event(fd):
        ev = choice((1, 4, 5, 0x2019 & 0xF))
        return pk("<QIIB", (fd << 32) | fd, fd, ev, ev & 0xF)

    def a_syscall():
        r = rand()
        fd = 3 + randrange(40)
        if r < 0.16:
            cnt = choice((8, 16, 4096, 65536, 131072))
            syscall("read", pk("<IQ", fd, cnt), pk("<qQ", randrange(cnt + 1), user_addr()),
                    (lambda: block_issue()) if rand() < 0.03 else None)
        elif r < 0.28:
            cnt = 1 + randrange(8192)
            syscall("write", pk("<IQQ", fd, user_addr(), cnt), pk("<q", cnt),
                    (lambda: wake()) if rand() < 0.1 else None)
        elif r < 0.36:
            syscall("futex", pk("<QiIQQI", user_addr(), choice((128, 129, 137, 393)), 1, 0, 0, 0xFFFFFFFF),
                    pk("<qQQ", choice((0, 0, 1, -110, -11)), user_addr(), 0),
                    (lambda: wake()) if rand() < 0.4 else None)
        elif r < 0.44:
            name = choice(FILES)
            syscall("openat", pk("<i", -100) + cstr(name) + pk("<iH", choice((0, 0x80000, 0x80241, 0x90800)),
                                                               choice((0, 0o644, 0o666))),
                    pk("<q", fd if rand() < 0.85 else -2), kmalloc)
        elif r < 0.50:
            syscall("close", pk("<I", fd), pk("<q", 0))
        elif r < 0.55:
            syscall("newfstatat", pk("<i", -100) + cstr(choice(FILES)) + pk("<i", 0x100),
                    pk("<qQ", 0 if rand() < 0.9 else -2, user_addr()))
        elif r < 0.59:
            syscall("newfstat", pk("<I", fd), pk("<qQ", 0, user_addr()))
        elif r < 0.63:
            k = randrange(5)
            fds = poll_fds(k, False)
            syscall("poll", pk("<iIIB", choice((-1, 0, 100, 5000)), k, k, 0) + fds,
                    pk("<qII", min(k, 1), k, k) + poll_fds(k, True))
        elif r < 0.68:
            k = randrange(4)
            evs = b"".join(epoll_event(3 + randrange(60)) for _ in range(k))
            syscall("epoll_wait", pk("<iii", 5, 64, choice((-1, 0, 1000))), pk("<qIB", k, k, 0) + evs)
        elif r < 0.70:
            syscall("epoll_ctl", pk("<iii", 5, choice((1, 2, 3)), fd) + epoll_event(fd), pk("<q", 0))
        elif r < 0.75:
            syscall("clock_gettime", pk("<i", choice((0, 1, 7))), pk("<qQ", 0, user_addr()))
        elif r < 0.79:
            syscall("ioctl", pk("<IIQ", fd, choice((0x5401, 0x541B, 0xC0186444)), user_addr()), pk("<q", 0))
        elif r < 0.83:
            ln = 4096 * (1 + randrange(256))
            syscall("mmap", pk("<QQiiiq", 0, ln, 3, 0x22, -1, 0), pk("<Q", user_addr() & ~0xFFF), pages)
        elif r < 0.85:
            syscall("munmap", pk("<QQ", user_addr() & ~0xFFF, 4096 * (1 + randrange(64))), pk("<q", 0), pages)
        elif r < 0.88:
            ln = 40 + randrange(1400)

            def xmit():
                kmalloc()
                if n < budget:
                    emit(E["net_dev_xmit"], pk("<QiI", addr(), 0, ln + 54) + cstr(choice(NETDEVS)), 900)
            syscall("sendto", pk("<iQQIQi", fd, user_addr(), ln, 0x40, 0, 0), pk("<q", ln), xmit)
        elif r < 0.91:
            sz = choice((1500, 65536))
            syscall("recvfrom", pk("<iQIQ", fd, sz, 0x40, 0), pk("<qQQQ", choice((-11, 60, 1448)), user_addr(), 0, 0))
        elif r < 0.93:
            syscall("lseek", pk("<Iqi", fd, randrange(1 << 20), choice((0, 1, 2))), pk("<q", randrange(1 << 20)))
        elif r < 0.95:
            syscall("pread64", pk("<IQq", fd, 8192, randrange(1 << 30) * 8192), pk("<qQ", 8192, user_addr()))
        elif r < 0.97:
            syscall("writev", pk("<QQQ", fd, user_addr(), 1 + randrange(4)), pk("<q", 1 + randrange(20000)))
        elif r < 0.995:
            syscall("close", pk("<I", fd), pk("<q", -9))
        else:
            syscall("execve", cstr(choice(EXECS)) + pk("<QQ", user_addr(), user_addr()), pk("<q", 0), pages)

    def a_timer():
        timer = addr()
        exp = ts + randrange(10**7)
        emit(E["timer_hrtimer_start"], pk("<QQqq", timer, 0xFFFFFFFF81100000 + randrange(1 << 20), exp, exp), 500)
        if n < budget and rand() < 0.3:
            emit(E["timer_hrtimer_cancel"], pk("<Q", timer), 500)

    def a_migrate():
        t = choice(tasks[1:])
        emit(E["sched_migrate_task"], comms[t[1]] + pk("<iiii", t[1], 120, cpu, randrange(ncpus)), 500)

    def a_kmem():
        if rand() < 0.5:
            kmalloc()
        else:
            emit(E["kmem_kfree"], pk("<QQ", 0xFFFFFFFF81000000 + randrange(1 << 24), addr()), 300)

    acts = [(0.60, a_syscall), (0.70, irq), (0.82, switch), (0.86, wake), (0.90, a_timer), (0.92, a_migrate),
            (0.97, a_kmem), (1.0, pages)]
    while n < budget:
        r = rand()
        for limit, act in acts:
            if r < limit:
                act()
                break
    stream.close()
    return n


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-o", "--output", required=True, help="trace directory to create (must not exist)")
    ap.add_argument("--events", type=int, default=3_000_000)
    ap.add_argument("--cpus", type=int, default=4)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--packet-kib", type=int, default=1024, help="packet (sub-buffer) size in KiB")
    ap.add_argument("--contexts", action="store_true",
                    help="an event context per event: procname, pid, tid, prio (lttng add-context -k)")
    a = ap.parse_args()
    if a.events < 0 or a.cpus < 1 or a.packet_kib < 4:
        ap.error("--events >= 0, --cpus >= 1 and --packet-kib >= 4")
    if os.path.exists(a.output):
        ap.error(f"{a.output} already exists")
    rng = random.Random(a.seed)
    trace_uuid = uuidlib.UUID(int=rng.getrandbits(128), version=4)
    clock_uuid = uuidlib.UUID(int=rng.getrandbits(128), version=4)
    os.makedirs(os.path.join(a.output, "index"))
    # Booted some hours before the trace starts, at a clock offset of a date in 2026.
    text, ids = metadata_text(trace_uuid, clock_uuid, "busybox-host", 1_795_000_000_123_456_789, a.contexts)
    write_metadata(os.path.join(a.output, "metadata"), text, trace_uuid.bytes)
    # CPUs are not equally busy.
    weights = [1.0 + 0.6 * rng.random() for _ in range(a.cpus)]
    budgets = [int(a.events * w / sum(weights)) for w in weights]
    budgets[0] += a.events - sum(budgets)
    total = 0
    for cpu in range(a.cpus):
        stream = Stream(a.output, cpu, a.packet_kib * 1024, trace_uuid.bytes)
        start = 14_400_000_000_000 + rng.randrange(50_000)
        total += simulate(stream, cpu, a.cpus, budgets[cpu], random.Random(rng.getrandbits(64)), ids, start,
                          a.contexts)
    print(f"events: {total}\ncpus: {a.cpus}\nseed: {a.seed}\npacket size: {a.packet_kib} KiB\n"
          f"contexts: {'procname, pid, tid, prio' if a.contexts else 'none'}")


if __name__ == "__main__":
    sys.exit(main())
