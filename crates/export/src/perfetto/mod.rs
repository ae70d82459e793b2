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

pub mod proto;

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::PathBuf;
use std::sync::Arc;

use ::ctf::{Event, Trace};
use kernel::{Kind, Resolver, F};
use pipeline::{classes_where, Diagnostic, Flow, Notice, NoticeKind, Sink, Wanted};
use prost::encoding::{self, encode_key, encode_varint, encoded_len_varint, WireType};
use prost::Message;

use crate::{Error, Export};
use proto::{bundle, packet};

/// Bytes of encoded events after which a CPU's bundle is written out.
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

/// One CPU of one machine: its open bundle.
struct Cpu {
    machine: u32,
    cpu: u32,
    /// Encoded `FtraceEvent`s (bundle field 2, with keys and lengths).
    events: Vec<u8>,
    /// The thread on the CPU, from the last `sched_switch`.
    tid: i32,
    /// The number of the last system call entered on the CPU (for exits that name none).
    syscall: i64,
    /// Events were discarded since the last bundle.
    lost: bool,
}

/// Per event kind, a message reused for every event, so that writing one allocates nothing.
#[derive(Default)]
struct Scratch {
    switch: proto::SchedSwitch,
    wakeup: proto::SchedWakeup,
    fork: proto::SchedProcessFork,
    newtask: proto::TaskNewtask,
    exec: proto::SchedProcessExec,
    exit: proto::SchedProcessExit,
    free: proto::SchedProcessFree,
    irq_entry: proto::IrqHandlerEntry,
    irq_exit: proto::IrqHandlerExit,
    softirq: proto::Softirq,
    sys_enter: proto::SysEnter,
    sys_exit: proto::SysExit,
}

/// Writes the kernel events it is given as a Perfetto trace (see the [module](self)
/// documentation).
pub struct PerfettoSink {
    file: PathBuf,
    out: BufWriter<File>,
    resolver: Resolver,
    /// Per trace, per stream: its [`Cpu`] index (`u32::MAX`: not met yet).
    streams: Vec<Vec<u32>>,
    cpus: Vec<Cpu>,
    /// Per trace: its machine.
    trace_machine: Vec<u32>,
    machines: Vec<String>,
    /// Per system call name index of the resolver: its x86-64 number (-1: none).
    syscall_numbers: Vec<i64>,
    scratch: Scratch,
    /// Statedump threads not written yet, and their machine.
    tree: proto::ProcessTree,
    tree_machine: u32,
    tree_ts: u64,
    counts: [u64; Written::ALL.len()],
    events: u64,
    packets: u64,
    bytes: u64,
    /// The clock snapshot is written.
    clocked: bool,
    error: Option<Error>,
    diagnostics: Vec<String>,
    /// A reused buffer for packets other than bundles.
    buf: Vec<u8>,
}

const UNSET: u32 = u32::MAX;

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

/// The machine id field of machine `m` (none for the host machine).
fn machine_id(m: u32) -> Option<u32> {
    (m != 0).then_some(m)
}

/// Sets a string field to `bytes` (lossy for invalid UTF-8), reusing its memory.
#[inline]
fn set_str(slot: &mut Option<String>, bytes: Option<&[u8]>) {
    let Some(b) = bytes else {
        *slot = None;
        return;
    };
    let s = slot.get_or_insert_with(String::new);
    s.clear();
    match std::str::from_utf8(b) {
        Ok(t) => s.push_str(t),
        Err(_) => s.push_str(&String::from_utf8_lossy(b)),
    }
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

/// Appends one `FtraceEvent` (bundle field 2) holding `m` as its field `tag`.
#[inline]
fn put_event<M: Message>(buf: &mut Vec<u8>, ts: u64, pid: u32, tag: u32, m: &M) {
    let body = m.encoded_len();
    let len = encoding::uint64::encoded_len(1, &ts)
        + encoding::uint32::encoded_len(2, &pid)
        + encoding::key_len(tag)
        + encoded_len_varint(body as u64)
        + body;
    encode_key(bundle::EVENT, WireType::LengthDelimited, buf);
    encode_varint(len as u64, buf);
    encoding::uint64::encode(1, &ts, buf);
    encoding::uint32::encode(2, &pid, buf);
    encode_key(tag, WireType::LengthDelimited, buf);
    encode_varint(body as u64, buf);
    m.encode_raw(buf);
}

impl PerfettoSink {
    /// A sink writing the events of `traces` (the source's, in its order) to `options.file`,
    /// created here (so that an unwritable output fails before the read), with the clock
    /// snapshot and each machine's system information.
    pub fn new(traces: &[Arc<Trace>], options: PerfettoOptions) -> Result<Self, Error> {
        let file = options.file;
        let f = File::create(&file).map_err(|e| Error::io(&file, e))?;
        let (machines, trace_machine) = machines_of(traces);
        let mut sink = PerfettoSink {
            out: BufWriter::with_capacity(1 << 20, f),
            file,
            resolver: Resolver::new(),
            streams: traces
                .iter()
                .map(|t| vec![UNSET; t.streams.len()])
                .collect(),
            cpus: Vec::new(),
            trace_machine,
            machines,
            syscall_numbers: Vec::new(),
            scratch: Scratch::default(),
            tree: proto::ProcessTree::default(),
            tree_machine: 0,
            tree_ts: 0,
            counts: [0; Written::ALL.len()],
            events: 0,
            packets: 0,
            bytes: 0,
            clocked: false,
            error: None,
            diagnostics: Vec::new(),
            buf: Vec::new(),
        };
        sink.preamble(traces)?;
        Ok(sink)
    }

    /// A `SystemInfo` per machine (first, without a time: it bounds nothing).
    fn preamble(&mut self, traces: &[Arc<Trace>]) -> Result<(), Error> {
        for m in 0..self.machines.len() as u32 {
            let Some(t) = traces
                .iter()
                .zip(&self.trace_machine)
                .find(|(_, &tm)| tm == m)
                .map(|(t, _)| t)
            else {
                continue;
            };
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
            })?;
        }
        Ok(())
    }

    /// The clock snapshot, at the first event's time `ts`: every clock the same.
    #[cold]
    fn clock_snapshot(&mut self, ts: u64) -> Result<(), Error> {
        self.clocked = true;
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
        })
    }

    /// Writes one packet.
    fn packet(&mut self, p: &proto::TracePacket) -> Result<(), Error> {
        self.buf.clear();
        encoding::message::encode(packet::TRACE_PACKET, p, &mut self.buf);
        self.out
            .write_all(&self.buf)
            .map_err(|e| Error::io(&self.file, e))?;
        self.packets += 1;
        self.bytes += self.buf.len() as u64;
        Ok(())
    }

    /// The [`Cpu`] of `ev`'s stream.
    #[inline]
    fn cpu_of(&mut self, ev: &Event<'_>) -> usize {
        let (t, s) = (ev.trace().index, ev.stream_index());
        match self.streams.get(t).and_then(|v| v.get(s)) {
            Some(&i) if i != UNSET => i as usize,
            _ => self.new_stream(ev, t, s),
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
                self.cpus.push(Cpu {
                    machine,
                    cpu,
                    events: Vec::with_capacity(BUNDLE_BYTES + 1024),
                    tid: 0,
                    syscall: -1,
                    lost: false,
                });
                self.cpus.len() - 1
            }
        };
        if self.streams.len() <= t {
            self.streams.resize_with(t + 1, Vec::new);
        }
        let v = &mut self.streams[t];
        if v.len() <= s {
            v.resize(s + 1, UNSET);
        }
        v[s] = i as u32;
        i
    }

    /// Writes CPU `i`'s bundle, if it holds events.
    fn flush_cpu(&mut self, i: usize) -> Result<(), Error> {
        let c = &mut self.cpus[i];
        if c.events.is_empty() {
            return Ok(());
        }
        let cpu_len = encoding::uint32::encoded_len(bundle::CPU, &c.cpu);
        let lost_len = if c.lost {
            encoding::bool::encoded_len(bundle::LOST_EVENTS, &true)
        } else {
            0
        };
        let bundle_len = cpu_len + c.events.len() + lost_len;
        let machine = machine_id(c.machine);
        let machine_len =
            machine.map_or(0, |m| encoding::uint32::encoded_len(packet::MACHINE_ID, &m));
        let packet_len = encoding::key_len(packet::FTRACE_EVENTS)
            + encoded_len_varint(bundle_len as u64)
            + bundle_len
            + machine_len;
        let head = &mut self.buf;
        head.clear();
        encode_key(packet::TRACE_PACKET, WireType::LengthDelimited, head);
        encode_varint(packet_len as u64, head);
        encode_key(packet::FTRACE_EVENTS, WireType::LengthDelimited, head);
        encode_varint(bundle_len as u64, head);
        encoding::uint32::encode(bundle::CPU, &c.cpu, head);
        let head_len = head.len();
        let mut tail = [0u8; 16];
        let mut t = &mut tail[..];
        if c.lost {
            encoding::bool::encode(bundle::LOST_EVENTS, &true, &mut t);
        }
        if let Some(m) = machine {
            encoding::uint32::encode(packet::MACHINE_ID, &m, &mut t);
        }
        let tail_len = 16 - t.len();
        let w = &mut self.out;
        let r = w
            .write_all(head)
            .and_then(|_| w.write_all(&c.events))
            .and_then(|_| w.write_all(&tail[..tail_len]));
        self.bytes += (head_len + c.events.len() + tail_len) as u64;
        self.packets += 1;
        c.events.clear();
        c.lost = false;
        r.map_err(|e| Error::io(&self.file, e))
    }

    /// Writes the statedump threads gathered.
    fn flush_tree(&mut self) -> Result<(), Error> {
        if self.tree.threads.is_empty() {
            return Ok(());
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

    fn write(&mut self, ev: &Event<'_>, ts: i64) -> Result<(), Error> {
        let ts = ts.max(0) as u64;
        if !self.clocked {
            self.clock_snapshot(ts)?;
        }
        let ci = self.cpu_of(ev);
        let mut class = self.resolver.class(ev);
        let kind = class.resolved().kind;
        let Some(written) = Written::of(kind) else {
            return Ok(());
        };
        if let Kind::SyscallEntry(n) | Kind::SyscallExit(Some(n)) = kind {
            if n as usize >= self.syscall_numbers.len() {
                number_names(&mut self.syscall_numbers, &self.resolver.syscalls, n);
                class = self.resolver.class(ev);
            }
        }
        let p = class.payload(ev);
        let s = &mut self.scratch;
        let cpu = &mut self.cpus[ci];
        let pid = cpu.tid as u32;
        let buf = &mut cpu.events;
        match kind {
            Kind::SchedSwitch => {
                let m = &mut s.switch;
                set_str(&mut m.prev_comm, p.bytes(F::PrevComm));
                m.prev_pid = int32(p.int(F::PrevTid));
                m.prev_prio = int32(p.int(F::PrevPrio));
                m.prev_state = p.int(F::PrevState);
                set_str(&mut m.next_comm, p.bytes(F::NextComm));
                m.next_pid = int32(p.int(F::NextTid));
                m.next_prio = int32(p.int(F::NextPrio));
                let pid = m.prev_pid.map_or(pid, |t| t as u32);
                put_event(buf, ts, pid, 4, m);
                if let Some(next) = m.next_pid {
                    cpu.tid = next;
                }
            }
            Kind::SchedWakeup | Kind::SchedWaking | Kind::SchedWakeupNew => {
                let m = &mut s.wakeup;
                set_str(&mut m.comm, p.bytes(F::Comm));
                m.pid = int32(p.int(F::Tid));
                m.prio = int32(p.int(F::Prio));
                m.target_cpu = int32(p.int(F::TargetCpu));
                m.success = Some(1);
                let tag = match kind {
                    Kind::SchedWakeup => 17,
                    Kind::SchedWaking => 20,
                    _ => 114,
                };
                put_event(buf, ts, pid, tag, m);
            }
            Kind::SchedProcessFork => {
                let m = &mut s.fork;
                set_str(&mut m.parent_comm, p.bytes(F::ParentComm));
                m.parent_pid = int32(p.int(F::ParentTid));
                set_str(&mut m.child_comm, p.bytes(F::ChildComm));
                m.child_pid = int32(p.int(F::ChildTid));
                put_event(buf, ts, pid, 239, m);
                let n = &mut s.newtask;
                n.pid = m.child_pid;
                n.comm.clone_from(&m.child_comm);
                let same_process = matches!(
                    (p.int(F::ParentPid), p.int(F::ChildPid)),
                    (Some(a), Some(b)) if a == b
                );
                n.clone_flags = Some(if same_process { CLONE_THREAD } else { 0 });
                // Perfetto takes the creating thread from the event's pid.
                let creator = m.parent_pid.map_or(pid, |t| t as u32);
                put_event(buf, ts, creator, 235, n);
                self.counts[Written::TaskNewtask as usize] += 1;
            }
            Kind::SchedProcessExec => {
                let m = &mut s.exec;
                set_str(&mut m.filename, p.bytes(F::Filename));
                m.pid = int32(p.int(F::Tid));
                m.old_pid = int32(p.int(F::OldTid));
                put_event(buf, ts, pid, 237, m);
            }
            Kind::SchedProcessExit => {
                let m = &mut s.exit;
                set_str(&mut m.comm, p.bytes(F::Comm));
                m.pid = int32(p.int(F::Tid));
                m.tgid = int32(p.int(F::Pid));
                m.prio = int32(p.int(F::Prio));
                put_event(buf, ts, pid, 238, m);
            }
            Kind::SchedProcessFree => {
                let m = &mut s.free;
                set_str(&mut m.comm, p.bytes(F::Comm));
                m.pid = int32(p.int(F::Tid));
                m.prio = int32(p.int(F::Prio));
                put_event(buf, ts, pid, 240, m);
            }
            Kind::IrqHandlerEntry => {
                let m = &mut s.irq_entry;
                m.irq = int32(p.int(F::Irq));
                set_str(&mut m.name, p.bytes(F::Name));
                put_event(buf, ts, pid, 36, m);
            }
            Kind::IrqHandlerExit => {
                let m = &mut s.irq_exit;
                m.irq = int32(p.int(F::Irq));
                m.ret = int32(p.int(F::Ret));
                put_event(buf, ts, pid, 37, m);
            }
            Kind::SoftirqRaise | Kind::SoftirqEntry | Kind::SoftirqExit => {
                let m = &mut s.softirq;
                m.vec = p.int(F::Vec).map(|v| v as u32);
                let tag = match kind {
                    Kind::SoftirqEntry => 24,
                    Kind::SoftirqExit => 25,
                    _ => 26,
                };
                put_event(buf, ts, pid, tag, m);
            }
            Kind::SyscallEntry(name) => {
                let m = &mut s.sys_enter;
                m.args.clear();
                if let Some(payload) = ev.payload() {
                    for i in 0..6 {
                        let Some(f) = payload.member_at(i) else {
                            break;
                        };
                        let v = f.as_u64().or_else(|| f.as_i64().map(|v| v as u64));
                        m.args.push(v.unwrap_or(0));
                    }
                }
                let id = self.syscall_numbers[name as usize];
                cpu.syscall = id;
                m.id = Some(id);
                put_event(buf, ts, pid, 329, m);
            }
            Kind::SyscallExit(name) => {
                let m = &mut s.sys_exit;
                m.id = Some(name.map_or(cpu.syscall, |n| self.syscall_numbers[n as usize]));
                m.ret = p.int(F::Ret);
                put_event(buf, ts, pid, 330, m);
            }
            Kind::StatedumpProcessState => {
                self.statedump_thread(ev, ts)?;
            }
            _ => return Ok(()),
        }
        self.counts[written as usize] += 1;
        if self.cpus[ci].events.len() >= BUNDLE_BYTES {
            self.flush_cpu(ci)?;
        }
        Ok(())
    }

    /// Adds a statedump thread to the pending `ProcessTree` (a process too when it leads
    /// one).
    fn statedump_thread(&mut self, ev: &Event<'_>, ts: u64) -> Result<(), Error> {
        let machine = self
            .trace_machine
            .get(ev.trace().index)
            .copied()
            .unwrap_or(0);
        if machine != self.tree_machine || self.tree.threads.len() >= TREE_THREADS {
            self.flush_tree()?;
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
        Ok(())
    }
}

impl Sink for PerfettoSink {
    fn wanted(&self, trace: &Trace) -> Wanted {
        Some(classes_where(trace, |name| {
            let kind = kernel::classify_unnumbered(name).kind;
            Written::of(kind).is_some() || kind == Kind::StatedumpEnd
        }))
    }

    fn wants_notices(&self) -> bool {
        true
    }

    #[inline]
    fn event(&mut self, ev: &Event<'_>, ts: i64) -> Flow {
        self.events += 1;
        let r = if self.resolver.resolve(ev).kind == Kind::StatedumpEnd {
            self.flush_tree()
        } else {
            self.write(ev, ts)
        };
        match r {
            Ok(()) => Flow::Continue,
            Err(e) => {
                self.error = Some(e);
                Flow::Stop
            }
        }
    }

    fn notice(&mut self, notice: &Notice) -> Flow {
        if notice.kind == NoticeKind::DiscardedEvents {
            if let Some(&i) = self
                .streams
                .get(notice.trace)
                .and_then(|v| v.get(notice.stream))
            {
                if i != UNSET {
                    self.cpus[i as usize].lost = true;
                }
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
        for i in 0..self.cpus.len() {
            if let Err(e) = self.flush_cpu(i) {
                first_error.get_or_insert(e);
            }
        }
        if let Err(e) = self.flush_tree() {
            first_error.get_or_insert(e);
        }
        if let Err(e) = self.out.flush() {
            first_error.get_or_insert(Error::io(&self.file, e));
        }
        if let Some(e) = first_error {
            return Err(e);
        }
        let counts: Vec<(Written, u64)> = Written::ALL
            .iter()
            .map(|&w| (w, self.counts[w as usize]))
            .collect();
        let exported = counts
            .iter()
            .filter(|(w, _)| *w != Written::TaskNewtask)
            .map(|(_, n)| n)
            .sum();
        if exported == 0 {
            return Err(Error::NothingKept);
        }
        Ok(PerfettoReport {
            file: self.file,
            events: self.events,
            exported,
            counts,
            packets: self.packets,
            bytes: self.bytes,
            machines: self.machines,
            diagnostics: self.diagnostics,
        })
    }
}
