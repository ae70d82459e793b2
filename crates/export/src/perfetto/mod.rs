//! Perfetto's protobuf trace format: what Perfetto's UI opens with CPU tracks, thread states
//! and its critical path (behind the `perfetto` cargo feature).
//!
//! The file is a `Trace`: a sequence of `TracePacket`s, written as the read goes (memory stays
//! bounded: one open bundle per CPU). LTTng's kernel events become the ftrace events Perfetto
//! reads, in one `FtraceEventBundle` per CPU at a time, their kinds told by the kernel crate's
//! event model ([`kernel::Kind`], every lttng-modules version):
//!
//! | LTTng | Perfetto (`FtraceEvent`) |
//! |---|---|
//! | `sched_switch` | `sched_switch` |
//! | `sched_wakeup`, `sched_waking`, `sched_wakeup_new` | the same |
//! | `sched_process_fork` | `sched_process_fork`, and `task_newtask` (what Perfetto reads to start a thread; `CLONE_THREAD` when the child is in its parent's process) |
//! | `sched_process_exec`, `sched_process_exit`, `sched_process_free` | the same |
//! | `irq_handler_entry`/`_exit` | the same |
//! | `(irq_)softirq_raise`/`_entry`/`_exit` | `softirq_raise`/`_entry`/`_exit` |
//! | `syscall_entry_*`, `syscall_exit_*` (`sys_*`, `exit_syscall`) | `sys_enter`, `sys_exit` (x86-64 numbers, which Perfetto names) |
//! | `lttng_statedump_process_state` | `ProcessTree` packets (threads, and processes with their parent) |
//!
//! Field values are LTTng's: thread ids are Perfetto's `pid`s, priorities are lttng-modules'
//! (the kernel's minus 100), `prev_state` is the kernel's task state. Each event's `pid` (the
//! thread running on the CPU) is the last `sched_switch`'s next thread on that CPU (0 before
//! the first). `sys_enter`'s arguments are the entry payload's first six fields as integers (0
//! for a string). Other events have no Perfetto counterpart here and are left out (the
//! [`PerfettoReport`] counts them).
//!
//! Clocks: the events' times are the read's time line (ns since the epoch; with `--sync`, the
//! reference host's clock), written as `BOOTTIME`, the clock of ftrace events; a
//! `ClockSnapshot` says that `REALTIME` is the same, so Perfetto shows wall-clock times.
//! Several hosts (the traces' `hostname`) are separate machines: the first is the host
//! machine, the others have a `machine_id`, each with a `SystemInfo` (`uname`: the trace's
//! kernel release and version). Times before the epoch are written as 0.
//!
//! Losses: a bundle following discarded events on its CPU has `lost_events` set; the read's
//! diagnostics (decoding errors, lost packets) are in the report, and what could be read is
//! written.
//!
//! `sched_switch` and `sched_waking` are written in the bundle's `compact_sched` columns
//! (delta-encoded times, comms interned per bundle), which Perfetto reads as it reads the
//! expanded events, whenever what Perfetto infers of them is what the trace says: a compact
//! `sched_switch` has no `prev_*` fields (Perfetto takes the CPU's previous switch's `next_*`)
//! and a compact `sched_waking` no waker (the thread the previous switch put on the CPU). So
//! an event is compact only when the stream's previous `sched_switch` says exactly that, and
//! when its time comes after the CPU's last switch (Perfetto reads a bundle's compact events
//! before its expanded ones: at one time, the order of the two forms is not kept). The others
//! are written expanded, as are `sched_wakeup` and `sched_wakeup_new`.
//!
//! Two ways to write: [`PerfettoSink`], a [`Sink`] for any source, given the events merged in time
//! order; and [`export_files`], for trace files, which reads and encodes every CPU's stream on its
//! own, a stream at a time on each core (a Perfetto trace needs each CPU's events in order, not a
//! global order: Perfetto's trace processor sorts a file's events, per CPU then merged, when it has
//! read it), each writing its packets in whole chunks where it reserved room in the file. Both
//! write the same events, packets only ordered differently across CPUs.

mod files;
pub mod proto;
mod wire;

use std::fs::File;
use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;

use ::ctf::{Event, Trace};
use kernel::{Kind, Resolver, F};
use pipeline::{classes_where, Diagnostic, Flow, Notice, NoticeKind, Sink, Wanted};
use prost::encoding;

use crate::pair_index::PairIndex;
use crate::{Error, Export};
pub use files::export_files;
use proto::{bundle, ftrace, packet};

/// Bytes of a CPU's bundle (its events and compact columns) after which it is written out.
const BUNDLE_BYTES: usize = 32 * 1024;

/// Statedump threads gathered in one `ProcessTree` packet at most.
const TREE_THREADS: usize = 1024;

/// `CLONE_THREAD`: the new task shares its parent's process.
const CLONE_THREAD: u64 = 0x0001_0000;

/// The kinds of events written, for the report's counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Written {
    /// `sched_switch`.
    SchedSwitch,
    /// `sched_wakeup`.
    SchedWakeup,
    /// `sched_waking`.
    SchedWaking,
    /// `sched_wakeup_new`.
    SchedWakeupNew,
    /// `sched_process_fork`.
    SchedProcessFork,
    /// `task_newtask` (one per `sched_process_fork`).
    TaskNewtask,
    /// `sched_process_exec`.
    SchedProcessExec,
    /// `sched_process_exit`.
    SchedProcessExit,
    /// `sched_process_free`.
    SchedProcessFree,
    /// `irq_handler_entry`.
    IrqHandlerEntry,
    /// `irq_handler_exit`.
    IrqHandlerExit,
    /// `softirq_raise`.
    SoftirqRaise,
    /// `softirq_entry`.
    SoftirqEntry,
    /// `softirq_exit`.
    SoftirqExit,
    /// `sys_enter`.
    SysEnter,
    /// `sys_exit`.
    SysExit,
    /// A thread of a `ProcessTree` (from `lttng_statedump_process_state`).
    ProcessTreeThread,
}

impl Written {
    /// Every kind, in the report's order.
    pub const ALL: [Written; 17] = [
        Written::SchedSwitch,
        Written::SchedWakeup,
        Written::SchedWaking,
        Written::SchedWakeupNew,
        Written::SchedProcessFork,
        Written::TaskNewtask,
        Written::SchedProcessExec,
        Written::SchedProcessExit,
        Written::SchedProcessFree,
        Written::IrqHandlerEntry,
        Written::IrqHandlerExit,
        Written::SoftirqRaise,
        Written::SoftirqEntry,
        Written::SoftirqExit,
        Written::SysEnter,
        Written::SysExit,
        Written::ProcessTreeThread,
    ];

    /// Perfetto's name of the kind (the `FtraceEvent` field; `process_tree.threads`).
    pub fn name(self) -> &'static str {
        match self {
            Written::SchedSwitch => "sched_switch",
            Written::SchedWakeup => "sched_wakeup",
            Written::SchedWaking => "sched_waking",
            Written::SchedWakeupNew => "sched_wakeup_new",
            Written::SchedProcessFork => "sched_process_fork",
            Written::TaskNewtask => "task_newtask",
            Written::SchedProcessExec => "sched_process_exec",
            Written::SchedProcessExit => "sched_process_exit",
            Written::SchedProcessFree => "sched_process_free",
            Written::IrqHandlerEntry => "irq_handler_entry",
            Written::IrqHandlerExit => "irq_handler_exit",
            Written::SoftirqRaise => "softirq_raise",
            Written::SoftirqEntry => "softirq_entry",
            Written::SoftirqExit => "softirq_exit",
            Written::SysEnter => "sys_enter",
            Written::SysExit => "sys_exit",
            Written::ProcessTreeThread => "process_tree.threads",
        }
    }

    /// What LTTng's events of kind `kind` are written as (the first of two for a fork).
    pub fn of(kind: Kind) -> Option<Written> {
        Some(match kind {
            Kind::SchedSwitch => Written::SchedSwitch,
            Kind::SchedWakeup => Written::SchedWakeup,
            Kind::SchedWaking => Written::SchedWaking,
            Kind::SchedWakeupNew => Written::SchedWakeupNew,
            Kind::SchedProcessFork => Written::SchedProcessFork,
            Kind::SchedProcessExec => Written::SchedProcessExec,
            Kind::SchedProcessExit => Written::SchedProcessExit,
            Kind::SchedProcessFree => Written::SchedProcessFree,
            Kind::IrqHandlerEntry => Written::IrqHandlerEntry,
            Kind::IrqHandlerExit => Written::IrqHandlerExit,
            Kind::SoftirqRaise => Written::SoftirqRaise,
            Kind::SoftirqEntry => Written::SoftirqEntry,
            Kind::SoftirqExit => Written::SoftirqExit,
            Kind::SyscallEntry(_) => Written::SysEnter,
            Kind::SyscallExit(_) => Written::SysExit,
            Kind::StatedumpProcessState => Written::ProcessTreeThread,
            _ => return None,
        })
    }
}

/// Options of a [`PerfettoSink`].
#[derive(Debug, Clone)]
pub struct PerfettoOptions {
    /// The output file (created, or truncated).
    pub file: PathBuf,
}

/// What a [`PerfettoSink`] wrote.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PerfettoReport {
    /// The output file.
    pub file: PathBuf,
    /// Events given by the read.
    pub events: u64,
    /// Of them, events written (a fork counts once, a statedump thread too).
    pub exported: u64,
    /// Of the events written, those in `compact_sched` columns.
    pub compact: u64,
    /// Per kind written ([`Written::ALL`]'s order), how many.
    pub counts: Vec<(Written, u64)>,
    /// Packets written.
    pub packets: u64,
    /// Bytes written.
    pub bytes: u64,
    /// The machines (host names), the first the host machine, the others numbered from 1.
    pub machines: Vec<String>,
    /// The read's diagnostics (errors and warnings), as the sink was given them.
    pub diagnostics: Vec<String>,
}

impl PerfettoReport {
    /// One line on what was written: the file, events read and written, packets, bytes, and
    /// the machines when there are several.
    pub fn summary(&self) -> String {
        let machines = if self.machines.len() > 1 {
            format!(", {} machines", self.machines.len())
        } else {
            String::new()
        };
        format!(
            "Created Perfetto trace `{}` ({} of {} events read, {} packets, {} bytes{machines}).",
            self.file.display(),
            self.exported,
            self.events,
            self.packets,
            self.bytes,
        )
    }
}

/// The comms of a bundle's intern table, by their bytes packed in a key ([`comm_key`]).
type InternIndex = foldhash::HashMap<u128, u32>;

/// A comm of up to 15 bytes as a key: its bytes and its length. Longer ones (never an LTTng
/// comm, whose array holds 16 bytes with the NUL) have none and are written expanded.
#[inline(always)]
fn comm_key(b: &[u8]) -> Option<u128> {
    if b.len() > 15 {
        return None;
    }
    let mut k = [0u8; 16];
    k[..b.len()].copy_from_slice(b);
    k[15] = b.len() as u8;
    Some(u128::from_le_bytes(k))
}

/// A bundle's `CompactSched` being filled: its intern table and its packed columns (each a
/// run of varints).
#[derive(Default)]
struct Compact {
    /// The intern table's entries, encoded (one `intern_table` field per comm).
    intern: Vec<u8>,
    index: InternIndex,
    /// `switch_timestamp` (deltas), `switch_prev_state`, `switch_next_pid`,
    /// `switch_next_prio`, `switch_next_comm_index`.
    switch: [Vec<u8>; 5],
    /// The time of the last compact switch of the bundle (deltas are from it).
    switch_ts: u64,
    /// `waking_timestamp` (deltas), `waking_pid`, `waking_target_cpu`, `waking_prio`,
    /// `waking_comm_index`.
    waking: [Vec<u8>; 5],
    waking_ts: u64,
}

/// Field numbers of the columns of [`Compact::switch`] and [`Compact::waking`].
const SWITCH_FIELDS: [u32; 5] = [1, 2, 3, 4, 6];
const WAKING_FIELDS: [u32; 5] = [7, 8, 9, 10, 11];
/// `CompactSched.intern_table`.
const INTERN_TABLE: u32 = 5;
/// `FtraceEventBundle.compact_sched`.
const COMPACT_SCHED: u32 = 4;

impl Compact {
    /// The index of comm `b` (of key `key`) in the intern table, added if new; None for a
    /// comm that is not UTF-8 (its expanded form writes it lossily).
    #[inline(always)]
    fn intern(&mut self, key: u128, b: &[u8]) -> Option<u32> {
        if let Some(&i) = self.index.get(&key) {
            return Some(i);
        }
        self.add(key, b)
    }

    #[cold]
    fn add(&mut self, key: u128, b: &[u8]) -> Option<u32> {
        std::str::from_utf8(b).ok()?;
        let i = self.index.len() as u32;
        wire::bytes(&mut self.intern, INTERN_TABLE, b);
        self.index.insert(key, i);
        Some(i)
    }

    /// Bytes of the message's fields (none when no event is held).
    fn len(&self) -> usize {
        if self.index.is_empty() {
            return 0;
        }
        let col = |c: &Vec<u8>, f: u32| {
            if c.is_empty() {
                0
            } else {
                wire::varint_len(u64::from(f << 3)) + wire::varint_len(c.len() as u64) + c.len()
            }
        };
        self.intern.len()
            + self
                .switch
                .iter()
                .zip(SWITCH_FIELDS)
                .map(|(c, f)| col(c, f))
                .sum::<usize>()
            + self
                .waking
                .iter()
                .zip(WAKING_FIELDS)
                .map(|(c, f)| col(c, f))
                .sum::<usize>()
    }

    /// A cheap bound of [`Self::len`] for the bundle's size check.
    #[inline(always)]
    fn size(&self) -> usize {
        self.intern.len() + self.switch[0].len() * 6 + self.waking[0].len() * 6
    }

    /// Appends the message's fields (of [`Self::len`] bytes) and empties it.
    fn write_into(&mut self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.intern);
        for (c, f) in self
            .switch
            .iter_mut()
            .zip(SWITCH_FIELDS)
            .chain(self.waking.iter_mut().zip(WAKING_FIELDS))
        {
            if !c.is_empty() {
                wire::bytes(out, f, c);
                c.clear();
            }
        }
        self.intern.clear();
        self.index.clear();
        self.switch_ts = 0;
        self.waking_ts = 0;
    }
}

/// One CPU of one machine: its open bundle and what the exporter knows of the CPU.
struct Cpu {
    machine: u32,
    cpu: u32,
    /// Encoded `FtraceEvent`s (bundle field 2, with keys and lengths).
    events: Vec<u8>,
    compact: Compact,
    /// The thread on the CPU, from the last `sched_switch`.
    tid: i32,
    /// The number of the last system call entered on the CPU (for exits that name none).
    syscall: i64,
    /// Events were discarded since the last bundle.
    lost: bool,
    /// The thread the last `sched_switch` put on the CPU (tid, prio; comm in `next_comm`),
    /// when it said all three: what Perfetto takes as the `prev_*` of a compact switch.
    next: Option<(i64, i64)>,
    next_comm: Vec<u8>,
    /// The latest time of a `sched_switch` (either form) and of a compact `sched_waking`.
    switch_ts: u64,
    waking_ts: u64,
}

impl Cpu {
    fn new(machine: u32, cpu: u32) -> Cpu {
        Cpu {
            machine,
            cpu,
            events: Vec::with_capacity(BUNDLE_BYTES + 1024),
            compact: Compact::default(),
            tid: 0,
            syscall: -1,
            lost: false,
            next: None,
            next_comm: Vec::with_capacity(16),
            switch_ts: 0,
            waking_ts: 0,
        }
    }

    /// Whether the bundle is due to be written out.
    #[inline(always)]
    fn full(&self) -> bool {
        self.events.len() + self.compact.size() >= BUNDLE_BYTES
    }
}

/// Encodes events into packets: what [`PerfettoSink`] and [`export_files`]'s workers share.
/// Packets are appended to `out`, which the owner writes to the file.
struct Encoder {
    resolver: Resolver,
    /// Per system call name index of the resolver: its x86-64 number (-1: none).
    syscall_numbers: Vec<i64>,
    /// What is read of each class's payload besides the kernel model's fields.
    infos: ClassInfos,
    /// Statedump threads not written yet, and their machine.
    tree: proto::ProcessTree,
    tree_machine: u32,
    tree_ts: u64,
    counts: [u64; Written::ALL.len()],
    /// Of the events written, those in `compact_sched`.
    compact: u64,
    packets: u64,
    /// Bytes of the packets encoded so far.
    bytes: u64,
    /// Encoded packets not written yet.
    out: Vec<u8>,
}

/// Bytes of encoded packets gathered before they are written out (per stream with
/// [`export_files`]: memory grows with the streams, by this much each).
const OUT_BYTES: usize = 256 << 10;

impl Encoder {
    fn new() -> Encoder {
        Encoder {
            resolver: Resolver::new(),
            syscall_numbers: Vec::new(),
            infos: Vec::new(),
            tree: proto::ProcessTree::default(),
            tree_machine: 0,
            tree_ts: 0,
            counts: [0; Written::ALL.len()],
            compact: 0,
            packets: 0,
            bytes: 0,
            out: Vec::with_capacity(OUT_BYTES + BUNDLE_BYTES * 2),
        }
    }

    /// Encodes one packet.
    fn packet(&mut self, p: &proto::TracePacket) {
        let start = self.out.len();
        encoding::message::encode(packet::TRACE_PACKET, p, &mut self.out);
        self.packets += 1;
        self.bytes += (self.out.len() - start) as u64;
    }

    /// A `SystemInfo` for machine `m` of trace `t` (without a time: it bounds nothing).
    fn system_info(&mut self, m: u32, t: &Trace) {
        let env = |n: &str| t.class.env_str(n).map(str::to_owned);
        self.packet(&proto::TracePacket {
            machine_id: machine_id(m),
            data: Some(proto::Data::SystemInfo(proto::SystemInfo {
                utsname: Some(proto::Utsname {
                    sysname: Some(env("sysname").unwrap_or_else(|| "Linux".into())),
                    version: env("kernel_version"),
                    release: env("kernel_release"),
                    // The system call numbers written are x86-64's.
                    machine: Some("x86_64".into()),
                }),
            })),
            ..Default::default()
        });
    }

    /// The clock snapshot, at the first event's time `ts`: every clock the same.
    fn clock_snapshot(&mut self, ts: u64) {
        let clocks = [
            proto::clock::BOOTTIME,
            proto::clock::REALTIME,
            proto::clock::MONOTONIC,
        ]
        .into_iter()
        .map(|c| proto::Clock {
            clock_id: Some(c),
            timestamp: Some(ts),
        })
        .collect();
        self.packet(&proto::TracePacket {
            timestamp: Some(ts),
            data: Some(proto::Data::ClockSnapshot(proto::ClockSnapshot {
                clocks,
                primary_trace_clock: Some(proto::clock::BOOTTIME as i32),
            })),
            ..Default::default()
        });
    }

    /// Encodes `c`'s bundle, if it holds events: the packet's head (its key and length, the
    /// bundle's key, length and CPU), the events as they were encoded, the compact columns,
    /// and its tail (the loss flag, the machine).
    fn flush_cpu(&mut self, c: &mut Cpu) {
        let compact_len = c.compact.len();
        if c.events.is_empty() && compact_len == 0 {
            return;
        }
        let start = self.out.len();
        let compact_field = if compact_len > 0 {
            1 + wire::varint_len(compact_len as u64) + compact_len
        } else {
            0
        };
        let cpu_len = 1 + wire::varint_len(u64::from(c.cpu));
        let lost_len = if c.lost { 2 } else { 0 };
        let bundle_len = cpu_len + c.events.len() + compact_field + lost_len;
        let machine = machine_id(c.machine);
        let machine_len = machine.map_or(0, |m| {
            wire::varint_len(u64::from(packet::MACHINE_ID << 3)) + wire::varint_len(u64::from(m))
        });
        let packet_len = wire::varint_len(u64::from(packet::FTRACE_EVENTS << 3))
            + wire::varint_len(bundle_len as u64)
            + bundle_len
            + machine_len;
        let o = &mut self.out;
        wire::key(o, packet::TRACE_PACKET, wire::LEN);
        wire::varint(o, packet_len as u64);
        wire::key(o, packet::FTRACE_EVENTS, wire::LEN);
        wire::varint(o, bundle_len as u64);
        wire::uint(o, bundle::CPU, u64::from(c.cpu));
        o.extend_from_slice(&c.events);
        if compact_len > 0 {
            wire::key(o, COMPACT_SCHED, wire::LEN);
            wire::varint(o, compact_len as u64);
            c.compact.write_into(o);
        }
        if c.lost {
            wire::uint(o, bundle::LOST_EVENTS, 1);
        }
        if let Some(m) = machine {
            wire::uint(o, packet::MACHINE_ID, u64::from(m));
        }
        debug_assert_eq!(
            self.out.len() - start,
            wire::varint_len(u64::from(packet::TRACE_PACKET << 3))
                + wire::varint_len(packet_len as u64)
                + packet_len
        );
        self.bytes += (self.out.len() - start) as u64;
        self.packets += 1;
        c.events.clear();
        c.lost = false;
    }

    /// Encodes the statedump threads gathered.
    fn flush_tree(&mut self) {
        if self.tree.threads.is_empty() {
            return;
        }
        let mut tree = std::mem::take(&mut self.tree);
        tree.collection_end_timestamp = Some(self.tree_ts);
        let p = proto::TracePacket {
            timestamp: Some(self.tree_ts),
            machine_id: machine_id(self.tree_machine),
            data: Some(proto::Data::ProcessTree(tree)),
            ..Default::default()
        };
        self.packet(&p)
    }

    /// Encodes `ev`, at `ts`, an event of CPU `c`.
    #[inline]
    fn event(&mut self, c: &mut Cpu, ev: &Event<'_>, ts: u64) {
        let mut class = self.resolver.class(ev);
        let kind = class.resolved().kind;
        let Some(written) = Written::of(kind) else {
            if kind == Kind::StatedumpEnd {
                self.flush_tree();
            }
            return;
        };
        if let Kind::SyscallEntry(n) | Kind::SyscallExit(Some(n)) = kind {
            if n as usize >= self.syscall_numbers.len() {
                number_names(&mut self.syscall_numbers, &self.resolver.syscalls, n);
                class = self.resolver.class(ev);
            }
        }
        let p = class.payload(ev);
        let e = &mut c.events;
        let pid = c.tid as u32;
        self.counts[written as usize] += 1;
        match kind {
            Kind::SchedSwitch => {
                let prev = p.int(F::PrevTid);
                let next = p.int(F::NextTid);
                let [pc, nc] = class_info(&mut self.infos, ev).comms;
                let fixed = ev.payload().and_then(|p| p.fixed_struct());
                let prev_comm = fixed_text(fixed, pc).or_else(|| p.bytes(F::PrevComm));
                let prev_prio = p.int(F::PrevPrio);
                let state = p.int(F::PrevState);
                let next_comm = fixed_text(fixed, nc).or_else(|| p.bytes(F::NextComm));
                let next_prio = p.int(F::NextPrio);
                let after = ts > c.switch_ts && ts > c.waking_ts;
                c.switch_ts = c.switch_ts.max(ts);
                if let Some(next) = next {
                    c.tid = next as i32;
                }
                // Compact when Perfetto's inference of the prev_* fields is what they are.
                if let (true, Some((last_tid, last_prio)), Some(prev), Some(pp), Some(pc)) =
                    (after, c.next, prev, prev_prio, prev_comm)
                {
                    if (last_tid, last_prio) == (prev, pp) && c.next_comm == pc {
                        if let (Some(state), Some(next), Some(np), Some(nc)) =
                            (state, next, next_prio, next_comm)
                        {
                            if let Some(i) = comm_key(nc).and_then(|k| c.compact.intern(k, nc)) {
                                let s = &mut c.compact.switch;
                                wire::varint(&mut s[0], ts - c.compact.switch_ts);
                                wire::varint(&mut s[1], state as u64);
                                wire::varint(&mut s[2], next as i32 as i64 as u64);
                                wire::varint(&mut s[3], np as i32 as i64 as u64);
                                wire::varint(&mut s[4], u64::from(i));
                                c.compact.switch_ts = ts;
                                c.next = Some((next, np));
                                c.next_comm.clear();
                                c.next_comm.extend_from_slice(nc);
                                self.compact += 1;
                                return;
                            }
                        }
                    }
                }
                c.next = match (next, next_prio, next_comm) {
                    (Some(n), Some(np), Some(nc)) => {
                        c.next_comm.clear();
                        c.next_comm.extend_from_slice(nc);
                        Some((n, np))
                    }
                    _ => None,
                };
                ftrace_event(
                    e,
                    ts,
                    prev.map_or(pid, |p| p as u32),
                    ftrace::SCHED_SWITCH,
                    |e| {
                        wire::string(e, 1, prev_comm);
                        wire::int32(e, 2, prev);
                        wire::int32(e, 3, prev_prio);
                        wire::int64(e, 4, state);
                        wire::string(e, 5, next_comm);
                        wire::int32(e, 6, next);
                        wire::int32(e, 7, next_prio);
                    },
                );
            }
            Kind::SchedWakeup | Kind::SchedWaking | Kind::SchedWakeupNew => {
                let [c0, _] = class_info(&mut self.infos, ev).comms;
                let fixed = ev.payload().and_then(|p| p.fixed_struct());
                let comm = fixed_text(fixed, c0).or_else(|| p.bytes(F::Comm));
                let tid = p.int(F::Tid);
                let prio = p.int(F::Prio);
                let target = p.int(F::TargetCpu);
                // Compact when Perfetto's waker (the thread the last switch put on the CPU)
                // is the one running, and Perfetto reads it after that switch.
                if let (
                    Kind::SchedWaking,
                    Some(_),
                    true,
                    Some(tid),
                    Some(prio),
                    Some(target),
                    Some(cm),
                ) = (
                    kind,
                    c.next,
                    ts > c.switch_ts && ts >= c.compact.waking_ts,
                    tid,
                    prio,
                    target,
                    comm,
                ) {
                    if let Some(i) = comm_key(cm).and_then(|k| c.compact.intern(k, cm)) {
                        let w = &mut c.compact.waking;
                        wire::varint(&mut w[0], ts - c.compact.waking_ts);
                        wire::varint(&mut w[1], tid as i32 as i64 as u64);
                        wire::varint(&mut w[2], target as i32 as i64 as u64);
                        wire::varint(&mut w[3], prio as i32 as i64 as u64);
                        wire::varint(&mut w[4], u64::from(i));
                        c.compact.waking_ts = ts;
                        c.waking_ts = c.waking_ts.max(ts);
                        self.compact += 1;
                        return;
                    }
                }
                let tag = match kind {
                    Kind::SchedWakeup => ftrace::SCHED_WAKEUP,
                    Kind::SchedWaking => ftrace::SCHED_WAKING,
                    _ => ftrace::SCHED_WAKEUP_NEW,
                };
                ftrace_event(e, ts, pid, tag, |e| {
                    wire::string(e, 1, comm);
                    wire::int32(e, 2, tid);
                    wire::int32(e, 3, prio);
                    wire::int32(e, 4, Some(1));
                    wire::int32(e, 5, target);
                });
            }
            Kind::SchedProcessFork => {
                let parent = p.int(F::ParentTid);
                let child = p.int(F::ChildTid);
                let child_comm = p.bytes(F::ChildComm);
                ftrace_event(e, ts, pid, ftrace::SCHED_PROCESS_FORK, |e| {
                    wire::string(e, 1, p.bytes(F::ParentComm));
                    wire::int32(e, 2, parent);
                    wire::string(e, 3, child_comm);
                    wire::int32(e, 4, child);
                });
                // task_newtask, in the creating thread (the event's pid to Perfetto).
                ftrace_event(
                    e,
                    ts,
                    parent.map_or(pid, |p| p as u32),
                    ftrace::TASK_NEWTASK,
                    |e| {
                        wire::int32(e, 1, child);
                        wire::string(e, 2, child_comm);
                        let same_process = matches!(
                            (p.int(F::ParentPid), p.int(F::ChildPid)),
                            (Some(a), Some(b)) if a == b
                        );
                        wire::uint(e, 3, if same_process { CLONE_THREAD } else { 0 });
                    },
                );
                self.counts[Written::TaskNewtask as usize] += 1;
            }
            Kind::SchedProcessExec => {
                ftrace_event(e, ts, pid, ftrace::SCHED_PROCESS_EXEC, |e| {
                    wire::string(e, 1, p.bytes(F::Filename));
                    wire::int32(e, 2, p.int(F::Tid));
                    wire::int32(e, 3, p.int(F::OldTid));
                });
            }
            Kind::SchedProcessExit => {
                ftrace_event(e, ts, pid, ftrace::SCHED_PROCESS_EXIT, |e| {
                    wire::string(e, 1, p.bytes(F::Comm));
                    wire::int32(e, 2, p.int(F::Tid));
                    wire::int32(e, 3, p.int(F::Pid));
                    wire::int32(e, 4, p.int(F::Prio));
                });
            }
            Kind::SchedProcessFree => {
                ftrace_event(e, ts, pid, ftrace::SCHED_PROCESS_FREE, |e| {
                    wire::string(e, 1, p.bytes(F::Comm));
                    wire::int32(e, 2, p.int(F::Tid));
                    wire::int32(e, 3, p.int(F::Prio));
                });
            }
            Kind::IrqHandlerEntry => {
                ftrace_event(e, ts, pid, ftrace::IRQ_HANDLER_ENTRY, |e| {
                    wire::int32(e, 1, p.int(F::Irq));
                    wire::string(e, 2, p.bytes(F::Name));
                });
            }
            Kind::IrqHandlerExit => {
                ftrace_event(e, ts, pid, ftrace::IRQ_HANDLER_EXIT, |e| {
                    wire::int32(e, 1, p.int(F::Irq));
                    wire::int32(e, 2, p.int(F::Ret));
                });
            }
            Kind::SoftirqRaise | Kind::SoftirqEntry | Kind::SoftirqExit => {
                let tag = match kind {
                    Kind::SoftirqEntry => ftrace::SOFTIRQ_ENTRY,
                    Kind::SoftirqExit => ftrace::SOFTIRQ_EXIT,
                    _ => ftrace::SOFTIRQ_RAISE,
                };
                ftrace_event(e, ts, pid, tag, |e| {
                    wire::uint32(e, 1, p.int(F::Vec));
                });
            }
            Kind::SyscallEntry(name) => {
                let id = self.syscall_numbers[name as usize];
                c.syscall = id;
                let args = usize::from(class_info(&mut self.infos, ev).args);
                ftrace_event(e, ts, pid, ftrace::SYS_ENTER, |e| {
                    wire::int64(e, 1, Some(id));
                    // A string (a pointer to the kernel) is 0.
                    if let Some(payload) = ev.payload() {
                        match payload.fixed_struct() {
                            Some((data, base, plan)) => {
                                for r in plan.reads.iter().take(args) {
                                    wire::uint(e, 2, r.int(data, base).map_or(0, |v| v as u64));
                                }
                            }
                            None => {
                                for i in 0..args {
                                    let v = payload.int_member(i).map_or(0, |v| v as u64);
                                    wire::uint(e, 2, v);
                                }
                            }
                        }
                    }
                });
            }
            Kind::SyscallExit(name) => {
                let id = name.map_or(c.syscall, |n| self.syscall_numbers[n as usize]);
                ftrace_event(e, ts, pid, ftrace::SYS_EXIT, |e| {
                    wire::int64(e, 1, Some(id));
                    wire::int64(e, 2, p.int(F::Ret));
                });
            }
            Kind::StatedumpProcessState => self.statedump_thread(ev, ts, c.machine),
            _ => {}
        }
    }

    /// Adds a statedump thread of machine `machine` to the pending `ProcessTree` (a process
    /// too when it leads one).
    fn statedump_thread(&mut self, ev: &Event<'_>, ts: u64, machine: u32) {
        if machine != self.tree_machine || self.tree.threads.len() >= TREE_THREADS {
            self.flush_tree();
            self.tree_machine = machine;
        }
        let p = self.resolver.class(ev).payload(ev);
        let tid = int32(p.int(F::Tid));
        let pid = int32(p.int(F::Pid));
        let name = p
            .bytes(F::Name)
            .map(|b| String::from_utf8_lossy(b).into_owned());
        if tid.is_some() && tid == pid {
            self.tree.processes.push(proto::Process {
                pid,
                ppid: int32(p.int(F::Ppid)),
                cmdline: name.iter().cloned().collect(),
                cmdline_is_comm: Some(true),
                // lttng-modules' `type`: 1 for a kernel thread.
                is_kthread: p.int(F::Type).map(|t| t == 1),
            });
        }
        self.tree.threads.push(proto::Thread {
            tid,
            name,
            tgid: pid,
        });
        self.tree_ts = ts;
    }

    /// The counts per kind, in the report's form, and the number of events written.
    fn report_counts(counts: &[u64; Written::ALL.len()]) -> (Vec<(Written, u64)>, u64) {
        let counts: Vec<(Written, u64)> = Written::ALL
            .iter()
            .map(|&w| (w, counts[w as usize]))
            .collect();
        let exported = counts
            .iter()
            .filter(|(w, _)| *w != Written::TaskNewtask)
            .map(|(_, n)| n)
            .sum();
        (counts, exported)
    }
}

/// Writes the kernel events it is given as a Perfetto trace (see the [module](self)
/// documentation).
pub struct PerfettoSink {
    file: PathBuf,
    out: File,
    enc: Encoder,
    /// Per trace, per stream: its [`Cpu`] index, once met.
    streams: PairIndex,
    cpus: Vec<Cpu>,
    /// Per trace: its machine.
    trace_machine: Vec<u32>,
    machines: Vec<String>,
    events: u64,
    /// The clock snapshot is written.
    clocked: bool,
    error: Option<Error>,
    diagnostics: Vec<String>,
}

/// The machine names of `traces` (their `hostname`, else their path), in first-met order, and
/// each trace's machine.
fn machines_of(traces: &[Arc<Trace>]) -> (Vec<String>, Vec<u32>) {
    let mut names: Vec<String> = Vec::new();
    let per_trace = traces
        .iter()
        .map(|t| {
            let name = t
                .hostname()
                .map(str::to_owned)
                .unwrap_or_else(|| t.path.display().to_string());
            match names.iter().position(|n| *n == name) {
                Some(i) => i as u32,
                None => {
                    names.push(name);
                    (names.len() - 1) as u32
                }
            }
        })
        .collect();
    (names, per_trace)
}

/// A `SystemInfo` per machine of `traces`, that of its first trace.
fn preamble(enc: &mut Encoder, traces: &[Arc<Trace>], machines: usize, trace_machine: &[u32]) {
    for m in 0..machines as u32 {
        if let Some(t) = traces
            .iter()
            .zip(trace_machine)
            .find(|(_, &tm)| tm == m)
            .map(|(t, _)| t)
        {
            enc.system_info(m, t);
        }
    }
}

/// The event classes written (and `lttng_statedump_end`, which ends a `ProcessTree`).
fn wanted_classes(trace: &Trace) -> Vec<Vec<bool>> {
    classes_where(trace, |name| {
        let kind = kernel::classify_unnumbered(name).kind;
        Written::of(kind).is_some() || kind == Kind::StatedumpEnd
    })
}

/// The machine id field of machine `m` (none for the host machine).
fn machine_id(m: u32) -> Option<u32> {
    (m != 0).then_some(m)
}

/// An integer field as an `i32` (values beyond it, which LTTng's fields of these events
/// never hold, wrap as the kernel's C casts do).
#[inline]
fn int32(v: Option<i64>) -> Option<i32> {
    v.map(|v| v as i32)
}

/// Numbers the system call names of `names` up to index `i` in `numbers` (their x86-64
/// numbers, -1 for none).
#[cold]
fn number_names(numbers: &mut Vec<i64>, names: &kernel::SyscallNames, i: u32) {
    while numbers.len() <= i as usize {
        let name = names.name(numbers.len() as u32);
        let n = kernel::lttng::syscall_numbers::x86_64_number(name).map_or(-1, i64::from);
        numbers.push(n);
    }
}

/// Appends an `FtraceEvent` (bundle field 2) at `ts` in thread `pid` holding a message as its
/// field `tag`, whose fields `fields` appends.
#[inline(always)]
fn ftrace_event(buf: &mut Vec<u8>, ts: u64, pid: u32, tag: u32, fields: impl FnOnce(&mut Vec<u8>)) {
    let at = begin_event(buf, ts, pid, tag);
    fields(buf);
    end_event(buf, at);
}

/// Starts an `FtraceEvent` (bundle field 2) at `ts` in thread `pid` holding a message as its
/// field `tag`, whose fields the caller then appends: where its two lengths go, for
/// [`end_event`]. Each length is given one byte here, which most events need (no copy of the
/// message then).
#[inline(always)]
fn begin_event(buf: &mut Vec<u8>, ts: u64, pid: u32, tag: u32) -> (usize, usize) {
    wire::key(buf, bundle::EVENT, wire::LEN);
    let event = buf.len();
    buf.push(0);
    wire::key(buf, 1, wire::VARINT);
    wire::varint_time(buf, ts);
    wire::uint(buf, 2, u64::from(pid));
    wire::key(buf, tag, wire::LEN);
    let body = buf.len();
    buf.push(0);
    (event, body)
}

/// Ends the event [`begin_event`] started: writes its lengths.
#[inline(always)]
fn end_event(buf: &mut Vec<u8>, (event, body): (usize, usize)) {
    let event_len = buf.len() - event - 1;
    if event_len < 0x80 {
        buf[event] = event_len as u8;
        buf[body] = (buf.len() - body - 1) as u8;
    } else {
        long_event(buf, event, body);
    }
}

/// Writes the lengths of an event of 128 bytes or more, which take more than a byte.
#[cold]
#[inline(never)]
fn long_event(buf: &mut Vec<u8>, event: usize, body: usize) {
    let message = buf.split_off(body + 1);
    let mut inner = buf.split_off(event + 1);
    buf.truncate(event);
    inner.truncate(inner.len() - 1);
    wire::varint(&mut inner, message.len() as u64);
    inner.extend_from_slice(&message);
    wire::varint(buf, inner.len() as u64);
    buf.extend_from_slice(&inner);
}

/// What the encoder reads of an event class's payload that the kernel model does not give
/// fast: how many of its first six members a `sys_enter` writes as its arguments, and the
/// member positions of its comms (`prev_comm`, `next_comm`; `comm`), [`NONE`] for none.
#[derive(Debug, Clone, Copy)]
struct ClassInfo {
    args: u8,
    comms: [u8; 2],
}

const NONE: u8 = u8::MAX;

/// [`ClassInfo`]s per trace, stream class and event class position (None: not met yet).
type ClassInfos = Vec<Vec<Vec<Option<ClassInfo>>>>;

/// The [`ClassInfo`] of `ev`'s class, worked out once per class.
#[inline]
fn class_info(infos: &mut ClassInfos, ev: &Event<'_>) -> ClassInfo {
    let t = ev.trace().index;
    let (sc, ec) = ev.class_index();
    match infos.get(t).and_then(|v| v.get(sc)).and_then(|v| v.get(ec)) {
        Some(&Some(info)) => info,
        _ => new_class_info(infos, ev, t, sc, ec),
    }
}

#[cold]
fn new_class_info(
    infos: &mut ClassInfos,
    ev: &Event<'_>,
    t: usize,
    sc: usize,
    ec: usize,
) -> ClassInfo {
    let args = ev.payload().map_or(0, |p| {
        (0..6).take_while(|&i| p.member_at(i).is_some()).count()
    });
    let layout = &ev.trace().layout;
    let members = ev
        .class_layout()
        .payload
        .map_or(&[][..], |n| layout.members_of(n));
    let position = |name: &str| {
        members
            .iter()
            .position(|m| &*m.name == name)
            .and_then(|i| u8::try_from(i).ok())
            .filter(|&i| i != NONE)
            .unwrap_or(NONE)
    };
    let info = ClassInfo {
        args: args as u8,
        comms: match position("comm") {
            NONE => [position("prev_comm"), position("next_comm")],
            c => [c, NONE],
        },
    };
    if infos.len() <= t {
        infos.resize_with(t + 1, Vec::new);
    }
    let v = &mut infos[t];
    if v.len() <= sc {
        v.resize_with(sc + 1, Vec::new);
    }
    let v = &mut v[sc];
    if v.len() <= ec {
        v.resize(ec + 1, None);
    }
    v[ec] = Some(info);
    info
}

/// A fixed-layout payload: its bytes, its start (bits) and its plan.
type Fixed<'a> = Option<(&'a [u8], u64, &'a ::ctf::access::FixedPlan)>;

/// The text of member `i` of a fixed-layout payload, up to its first NUL, read in place
/// (None when it is no byte-aligned text: the field views read it then). What the kernel
/// model's `bytes` gives, without a field view.
#[inline(always)]
fn fixed_text<'a>(fixed: Fixed<'a>, i: u8) -> Option<&'a [u8]> {
    let (data, base, plan) = fixed?;
    let r = plan.reads.get(usize::from(i))?;
    let bit = base + r.bits.off;
    if r.kind != ::ctf::access::ReadKind::Text || bit % 8 != 0 {
        return None;
    }
    let start = (bit / 8) as usize;
    let b = data.get(start..start + r.text_len as usize)?;
    Some(b.split(|&c| c == 0).next().unwrap_or(b))
}

impl PerfettoSink {
    /// A sink writing the events of `traces` (the source's, in its order) to `options.file`,
    /// created here (so that an unwritable output fails before the read), with each machine's
    /// system information (the clock snapshot follows at the first event).
    pub fn new(traces: &[Arc<Trace>], options: PerfettoOptions) -> Result<Self, Error> {
        let file = options.file;
        let out = ::ctf::private_files::create_file(&file).map_err(|e| Error::io(&file, e))?;
        let (machines, trace_machine) = machines_of(traces);
        let mut enc = Encoder::new();
        preamble(&mut enc, traces, machines.len(), &trace_machine);
        Ok(PerfettoSink {
            out,
            file,
            enc,
            streams: PairIndex::default(),
            cpus: Vec::new(),
            trace_machine,
            machines,
            events: 0,
            clocked: false,
            error: None,
            diagnostics: Vec::new(),
        })
    }

    /// Writes the packets encoded so far.
    fn drain(&mut self) -> Result<(), Error> {
        let r = self.out.write_all(&self.enc.out);
        self.enc.out.clear();
        r.map_err(|e| Error::io(&self.file, e))
    }

    /// The [`Cpu`] of `ev`'s stream.
    #[inline]
    fn cpu_of(&mut self, ev: &Event<'_>) -> usize {
        let (t, s) = (ev.trace().index, ev.stream_index());
        match self.streams.get(t, s) {
            Some(i) => i,
            None => self.new_stream(ev, t, s),
        }
    }

    #[cold]
    fn new_stream(&mut self, ev: &Event<'_>, t: usize, s: usize) -> usize {
        let cpu = kernel::recorded_cpu(ev).unwrap_or(s as u32);
        let machine = self.trace_machine.get(t).copied().unwrap_or(0);
        let i = match self
            .cpus
            .iter()
            .position(|c| c.machine == machine && c.cpu == cpu)
        {
            Some(i) => i,
            None => {
                self.cpus.push(Cpu::new(machine, cpu));
                self.cpus.len() - 1
            }
        };
        self.streams.set(t, s, i);
        i
    }

    fn write(&mut self, ev: &Event<'_>, ts: i64) -> Result<(), Error> {
        let ts = ts.max(0) as u64;
        if !self.clocked {
            self.clocked = true;
            self.enc.clock_snapshot(ts);
        }
        let ci = self.cpu_of(ev);
        let c = &mut self.cpus[ci];
        self.enc.event(c, ev, ts);
        if c.full() {
            self.enc.flush_cpu(c);
            if self.enc.out.len() >= OUT_BYTES {
                self.drain()?;
            }
        }
        Ok(())
    }
}

impl Sink for PerfettoSink {
    fn wanted(&self, trace: &Trace) -> Wanted {
        Some(wanted_classes(trace))
    }

    fn wants_notices(&self) -> bool {
        true
    }

    #[inline]
    fn event(&mut self, ev: &Event<'_>, ts: i64) -> Flow {
        self.events += 1;
        match self.write(ev, ts) {
            Ok(()) => Flow::Continue,
            Err(e) => {
                self.error = Some(e);
                Flow::Stop
            }
        }
    }

    fn notice(&mut self, notice: &Notice) -> Flow {
        if notice.kind == NoticeKind::DiscardedEvents {
            if let Some(i) = self.streams.get(notice.trace, notice.stream) {
                self.cpus[i].lost = true;
            }
        }
        Flow::Continue
    }

    fn diagnostic(&mut self, diagnostic: &Diagnostic) {
        self.diagnostics.push(diagnostic.to_string());
    }
}

impl Export for PerfettoSink {
    type Report = PerfettoReport;

    fn close(mut self) -> Result<PerfettoReport, Error> {
        let mut first_error = self.error.take();
        for c in &mut self.cpus {
            self.enc.flush_cpu(c);
        }
        self.enc.flush_tree();
        if let Err(e) = self.drain() {
            first_error.get_or_insert(e);
        }
        if let Some(e) = first_error {
            return Err(e);
        }
        let (counts, exported) = Encoder::report_counts(&self.enc.counts);
        if exported == 0 {
            return Err(Error::NothingKept);
        }
        Ok(PerfettoReport {
            file: self.file,
            events: self.events,
            exported,
            compact: self.enc.compact,
            counts,
            packets: self.enc.packets,
            bytes: self.enc.bytes,
            machines: self.machines,
            diagnostics: self.diagnostics,
        })
    }
}
