//! The per-host kernel state machine: threads, CPUs (current thread, IRQ and soft IRQ
//! context), per-process file descriptor tables, disks and pending block requests. It is fed
//! time-ordered events and emits [`Notification`]s that analyses consume.

use std::collections::VecDeque;

use compact_str::CompactString;
use ctf::Event;

use crate::cpu_map::CpuMap;
use crate::hash::{IntMap, IntSet};
use crate::model::{Class, FdOp, Kind, F};
use crate::payload::{Payload, Read};
use crate::threads::Threads;

/// A thread as the state knows it.
#[derive(Debug, Clone, Default)]
pub struct Thread {
    /// The thread id.
    pub tid: i32,
    /// Its process id (thread group), once an event told it.
    pub pid: Option<i32>,
    /// The command name, from the events' stored names (see `comm_key`). Inline (no heap
    /// allocation up to 24 bytes): Linux names are at most 15, and analyses copy one per thread.
    pub comm: CompactString,
    /// Its priority, once an event told it.
    pub prio: Option<i32>,
    /// The system call in progress: (name index, entry time, `cmd` argument if any, whether
    /// it works on file descriptors).
    pub(crate) current_syscall: Option<(u32, i64, Option<i64>, bool)>,
    /// The first wakeup since the thread last ran.
    pub(crate) last_wakeup: Option<i64>,
    /// The thread that made that wakeup (None: an interrupt or an unknown thread).
    pub(crate) last_waker: Option<i32>,
    /// The descriptor arguments of the system call in progress, when it touches descriptors
    /// (for reads and writes, only when the state makes [`NoteKind::Io`] notifications).
    pub io_entry: Option<IoEntry>,
    /// How many CPUs have it as their current thread (a woken thread that is running is not
    /// waiting): kept by `sched_switch` so wakeups need not scan the CPUs.
    pub(crate) on_cpus: u32,
    /// The 16 stored bytes `comm` was last set from, if it was from 16 (a `comm` array): the
    /// same bytes again, the usual case, are then one comparison.
    pub(crate) comm_key: Option<u128>,
}

impl Thread {
    /// Sets `comm` from the stored bytes `raw` of an event's string field (see [`set_comm`]).
    /// Inlined: the usual case, the same 16 bytes again, is one comparison, and a call for it
    /// at every switch costs measurably in every analysis that follows threads.
    #[inline(always)]
    fn set_comm(&mut self, raw: &[u8]) {
        match <[u8; 16]>::try_from(raw) {
            Ok(b) => {
                // Little-endian whatever the host: `set_comm_array` finds byte `i` at bits
                // `8 * i..`.
                let key = u128::from_le_bytes(b);
                if self.comm_key != Some(key) {
                    set_comm_array(&mut self.comm, key, &b);
                    self.comm_key = Some(key);
                }
            }
            Err(_) => {
                set_comm(&mut self.comm, raw);
                self.comm_key = None;
            }
        }
    }
}

/// The descriptor-related arguments of a system call entry.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct IoEntry {
    /// What the call does to descriptors.
    pub op: FdOp,
    /// `fd` / `oldfd` / `fildes`.
    pub fd: Option<i64>,
    /// `newfd` (dup2, dup3); `arg` (fcntl).
    pub fd2: Option<i64>,
    /// `filename` (open*).
    pub filename: Option<String>,
    /// Whether the new descriptor is close-on-exec (O_CLOEXEC, SOCK_CLOEXEC, F_DUPFD_CLOEXEC).
    pub cloexec: bool,
    /// `cmd` (fcntl).
    pub cmd: Option<i64>,
    /// The peer `ADDRESS:PORT` (connect, when the tracer records it).
    pub peer: Option<String>,
}

/// A completed system call that uses or creates a file descriptor (or `sync`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IoDone {
    /// The thread that made the call.
    pub tid: i32,
    /// The process whose descriptor table it used.
    pub pid: i32,
    /// System call name index.
    pub name: u32,
    /// What the call does to descriptors.
    pub op: FdOp,
    /// The time of the entry.
    pub entry_ts: i64,
    /// The time of the exit.
    pub exit_ts: i64,
    /// The return value.
    pub ret: i64,
    /// The descriptor used or created (None for sync, failed opens).
    pub fd: Option<i64>,
    /// The file behind `fd` ([`State::files`] index), None when the descriptor is unknown.
    pub file: Option<u32>,
    /// Bytes transferred (reads and writes that succeeded).
    pub size: Option<i64>,
}

/// A file descriptor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fd {
    /// The name the descriptor was opened with (a path, `socket`, `pipe`, or a connected
    /// socket's peer `ADDRESS:PORT`).
    pub filename: String,
    /// Whether it is closed on exec.
    pub cloexec: bool,
    /// The open file ([`State::files`] index): shared by duplicated and inherited descriptors.
    pub file: u32,
}

/// An open file (what descriptors refer to).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpenFile {
    /// Its name (see [`Fd::filename`]).
    pub name: String,
    /// The system call that created it ([`FdOp::None`]: the statedump).
    pub origin: FdOp,
}

/// A process (thread group): its file descriptor table.
#[derive(Debug, Clone, Default)]
pub struct Process {
    /// The process id.
    pub pid: i32,
    /// Its open descriptors, by number.
    pub fds: IntMap<i64, Fd>,
}

/// A CPU.
#[derive(Debug, Clone, Default)]
pub struct Cpu {
    /// The CPU id.
    pub id: u32,
    /// The running thread (None before the CPU's first `sched_switch`). Set by the state only:
    /// it goes with the thread's slot below.
    pub current_tid: Option<i32>,
    /// The [`Threads`] slot of `current_tid`, so that events of the running thread (system
    /// calls, switches out) reach it without a lookup.
    slot: Option<u32>,
    /// The hard IRQ being handled: (irq, entry time).
    pub current_hard_irq: Option<(i64, i64)>,
    /// Per soft IRQ vector: pending raise times and the running handler.
    pub(crate) softirqs: SoftIrqs,
}

/// Linux's soft IRQ vectors (`HI` to `RCU`).
const SOFTIRQ_VECTORS: usize = 10;

/// The soft IRQs of a CPU, per vector: pending raise times (first in, first out) and the
/// running handler's (entry time, raise time). Linux's vectors are held in arrays (a map
/// look-up was most of the cost of a soft IRQ event), any other number in maps.
#[derive(Debug, Clone, Default)]
pub(crate) struct SoftIrqs {
    raises: [VecDeque<i64>; SOFTIRQ_VECTORS],
    running: [Option<(i64, Option<i64>)>; SOFTIRQ_VECTORS],
    other_raises: IntMap<u64, VecDeque<i64>>,
    other_running: IntMap<u64, (i64, Option<i64>)>,
}

impl SoftIrqs {
    /// Vector `vec` was raised at `ts`.
    pub(crate) fn raise(&mut self, vec: u64, ts: i64) {
        match self.raises.get_mut(vec as usize) {
            Some(q) => q.push_back(ts),
            None => self.other_raises.entry(vec).or_default().push_back(ts),
        }
    }

    /// The handler of `vec` started at `ts`: it takes the oldest pending raise.
    pub(crate) fn enter(&mut self, vec: u64, ts: i64) {
        let i = vec as usize;
        if i < SOFTIRQ_VECTORS {
            self.running[i] = Some((ts, self.raises[i].pop_front()));
        } else {
            let raise = self.other_raises.get_mut(&vec).and_then(|q| q.pop_front());
            self.other_running.insert(vec, (ts, raise));
        }
    }

    /// The vector whose handler runs, if any (the lowest, should there be several).
    pub(crate) fn running_vec(&self) -> Option<u64> {
        match self.running.iter().position(Option::is_some) {
            Some(i) => Some(i as u64),
            None => self.other_running.keys().min().copied(),
        }
    }

    /// The handler of `vec` ended: its (entry time, raise time), if its entry was seen.
    pub(crate) fn exit(&mut self, vec: u64) -> Option<(i64, Option<i64>)> {
        match self.running.get_mut(vec as usize) {
            Some(r) => r.take(),
            None => self.other_running.remove(&vec),
        }
    }
}

/// A disk (block device).
#[derive(Debug, Clone, Default)]
pub struct Disk {
    /// The device number.
    pub dev: u64,
    /// Its name, from the statedump (None when the trace has none).
    pub name: Option<String>,
    /// Issued requests by sector: (issue time, nr_sector, tid, write, device issued for).
    pub pending: IntMap<u64, (i64, u64, Option<i32>, bool, u64)>,
}

/// A thread's status, with Trace Compass's meanings, as [`Notification::ThreadStatus`] gives
/// it to a state model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ThreadStatus {
    /// Running in user mode.
    Usermode,
    /// Running in a system call (its name index, [`crate::Resolver::syscalls`]).
    Syscall(u32),
    /// Runnable, waiting for a CPU: woken, preempted, or just forked.
    WaitCpu,
    /// Blocked: switched out not runnable (`prev_state` interruptible or uninterruptible).
    WaitBlocked,
    /// Its CPU handles a hard IRQ.
    Interrupted,
    /// Its CPU handles a soft IRQ.
    SoftIrq,
    /// Not known (switched out in a state that tells neither).
    Unknown,
    /// Switched out dead: it runs no more (its end comes with [`Notification::ThreadExit`]).
    Dead,
}

/// A CPU's status, as [`Notification::CpuStatus`] gives it to a state model. An IRQ during a
/// soft IRQ is the IRQ; at its exit the CPU is back in the soft IRQ.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CpuStatus {
    /// Running its idle thread.
    Idle,
    /// Running thread `.0` in user mode.
    Usermode(i32),
    /// Running thread `.0` in system call `.1` (name index).
    Syscall(i32, u32),
    /// Handling hard IRQ `.0` (its name: [`State::irq_names`]).
    Irq(i64),
    /// Handling soft IRQ vector `.0`.
    SoftIrq(u64),
    /// Not known (no `sched_switch` seen on it yet).
    Unknown,
}

/// A step of a soft IRQ vector ([`Notification::SoftIrq`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SoftIrqStep {
    /// Raised (pending).
    Raise,
    /// Its handler started.
    Entry,
    /// Its handler ended.
    Exit,
}

/// What the state machine reports to analyses. Plain data; look details up in the [`State`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Notification {
    /// A context switch. `next_prio_known` is the state's priority of `next_tid` before this
    /// event updated it. `wakeup` is the pending wakeup of `next_tid` (time, waker).
    SchedSwitch {
        /// Event time.
        ts: i64,
        /// The CPU switching.
        cpu: u32,
        /// The thread switched out.
        prev_tid: i32,
        /// The thread switched in.
        next_tid: i32,
        /// The priority of `next_tid` the state knew before this event.
        next_prio_known: Option<i32>,
        /// `next_prio` of the event.
        next_prio: Option<i32>,
        /// The first wakeup of `next_tid` since it last ran: (time, waking thread).
        wakeup: Option<(i64, Option<i32>)>,
    },
    /// The priority of a thread changed. Made before the notification of the event that
    /// shows it (a switch, a migration), as lttng-analyses notifies it.
    PrioChanged {
        /// Event time.
        ts: i64,
        /// The thread.
        tid: i32,
        /// Its new priority.
        prio: i32,
    },
    /// A thread moved to another CPU.
    Migrate {
        /// Event time.
        ts: i64,
        /// The thread.
        tid: i32,
    },
    /// A completed system call of thread `tid` (name index of the entry).
    SyscallDone {
        /// The thread that made the call.
        tid: i32,
        /// The call's name index ([`crate::Resolver::syscalls`]).
        name: u32,
        /// The time of the entry.
        entry_ts: i64,
        /// The time of the exit.
        exit_ts: i64,
        /// The return value.
        ret: i64,
        /// The `cmd` argument of the entry (fcntl, ioctl…).
        cmd: Option<i64>,
        /// The call works on file descriptors (reads, writes, opens…: see
        /// [`NoteKind::FdSyscallDone`]).
        on_fds: bool,
    },
    /// A completed system call that uses or creates a file descriptor.
    Io(IoDone),
    /// The statedump listed a descriptor the state did not know yet ([`NoteKind::Io`]).
    FdKnown {
        /// Event time.
        ts: i64,
        /// Its process.
        pid: i32,
        /// The descriptor.
        fd: i64,
    },
    /// A packet sent (`net_dev_xmit`) or received (`netif_receive_skb`) on interface
    /// `iface` ([`State::netifs`] index).
    Net {
        /// Event time.
        ts: i64,
        /// The interface ([`State::netifs`] index).
        iface: u32,
        /// The packet's `len` (0 when the event has none).
        len: u64,
        /// Sent (else received).
        sent: bool,
    },
    /// A completed hard IRQ handler.
    HardIrqDone {
        /// The CPU that ran it.
        cpu: u32,
        /// The IRQ number.
        irq: i64,
        /// Handler entry time.
        begin: i64,
        /// Handler exit time.
        end: i64,
    },
    /// A soft IRQ was raised.
    SoftIrqRaise {
        /// Event time.
        ts: i64,
        /// The CPU it was raised on.
        cpu: u32,
        /// The soft IRQ vector.
        vec: u64,
    },
    /// A completed soft IRQ handler, with the raise that led to it (if seen).
    SoftIrqDone {
        /// The CPU that ran it.
        cpu: u32,
        /// The soft IRQ vector.
        vec: u64,
        /// The time of the raise the handler served, if seen.
        raise: Option<i64>,
        /// Handler entry time.
        begin: i64,
        /// Handler exit time.
        end: i64,
    },
    /// A completed block request (issue → complete with the same sector count). `disk` is the
    /// device it was issued for (the partition, through `block_bio_remap`).
    BlockDone {
        /// The device number it was issued for.
        disk: u64,
        /// Issue time.
        issue: i64,
        /// Completion time.
        complete: i64,
        /// Its size in sectors.
        nr_sector: u64,
        /// A write (else a read).
        write: bool,
        /// The thread that issued it, if known.
        tid: Option<i32>,
    },
    /// A thread's status changed ([`NoteKind::ThreadStatus`]).
    ThreadStatus {
        /// Event time.
        ts: i64,
        /// The thread.
        tid: i32,
        /// Its new status.
        status: ThreadStatus,
    },
    /// A CPU's status changed ([`NoteKind::CpuStatus`]).
    CpuStatus {
        /// Event time.
        ts: i64,
        /// The CPU.
        cpu: u32,
        /// Its new status.
        status: CpuStatus,
    },
    /// A hard IRQ handler started or ended on a CPU ([`NoteKind::IrqStatus`]).
    Irq {
        /// Event time.
        ts: i64,
        /// The CPU.
        cpu: u32,
        /// The IRQ line.
        irq: i64,
        /// Started (else ended).
        entry: bool,
    },
    /// A soft IRQ vector was raised, or its handler started or ended, on a CPU
    /// ([`NoteKind::IrqStatus`]).
    SoftIrq {
        /// Event time.
        ts: i64,
        /// The CPU.
        cpu: u32,
        /// The vector.
        vec: u64,
        /// What happened.
        step: SoftIrqStep,
    },
    /// A thread not running was woken ([`NoteKind::Wakeup`]; the first wakeup since it last
    /// ran only).
    Wakeup {
        /// Event time.
        ts: i64,
        /// The thread woken.
        tid: i32,
        /// The CPU the wakeup happened on.
        cpu: u32,
        /// The thread running there (None: not known yet).
        waker: Option<i32>,
        /// The CPU was handling an IRQ or soft IRQ: the interrupt woke the thread.
        in_irq: bool,
    },
    /// A thread was born (`sched_process_fork`; [`NoteKind::Lifecycle`]).
    ThreadBirth {
        /// Event time.
        ts: i64,
        /// The new thread.
        tid: i32,
        /// Its process.
        pid: i32,
        /// The thread that forked it.
        parent_tid: i32,
        /// That thread's process.
        parent_pid: i32,
    },
    /// A thread alive when tracing started (the statedump; [`NoteKind::Lifecycle`]).
    ThreadKnown {
        /// Event time.
        ts: i64,
        /// The thread.
        tid: i32,
        /// Its process, when told.
        pid: Option<i32>,
        /// Its parent process, when told.
        ppid: Option<i32>,
        /// Its status then.
        status: ThreadStatus,
    },
    /// A thread executed a new program (`sched_process_exec`; [`NoteKind::Lifecycle`]); its
    /// new name is [`Thread::comm`] from its next switch.
    ThreadExec {
        /// Event time.
        ts: i64,
        /// The thread.
        tid: i32,
    },
    /// A thread's resources were freed (`sched_process_free`; [`NoteKind::Lifecycle`]): it is
    /// gone, and a later thread with its id is another.
    ThreadExit {
        /// Event time.
        ts: i64,
        /// The thread.
        tid: i32,
    },
    /// A page allocation / free on `cpu` while `tid` ran.
    Page {
        /// Event time.
        ts: i64,
        /// The CPU.
        cpu: u32,
        /// The thread running on it, if known.
        tid: Option<i32>,
        /// An allocation (else a free).
        alloc: bool,
    },
}

/// The kinds of [`Notification`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum NoteKind {
    /// [`Notification::SchedSwitch`].
    SchedSwitch,
    /// [`Notification::PrioChanged`].
    PrioChanged,
    /// [`Notification::Migrate`].
    Migrate,
    /// [`Notification::SyscallDone`].
    SyscallDone,
    /// [`Notification::Io`] and [`Notification::FdKnown`].
    Io,
    /// [`Notification::Net`].
    Net,
    /// [`Notification::HardIrqDone`].
    HardIrqDone,
    /// [`Notification::SoftIrqRaise`].
    SoftIrqRaise,
    /// [`Notification::SoftIrqDone`].
    SoftIrqDone,
    /// [`Notification::BlockDone`].
    BlockDone,
    /// [`Notification::Page`].
    Page,
    /// [`Notification::SyscallDone`] of the system calls that work on file descriptors only
    /// (those [`crate::model::FdOp`] names): for consumers that count no other call, such as
    /// the I/O latency analyses. A reader of a trace known to have lost nothing may then leave
    /// the other calls out (see [`crate::needs`]). Not the kind of any notification: a
    /// consumer that wants it takes the `SyscallDone` notifications with `on_fds` set
    /// ([`Interest::takes`]).
    FdSyscallDone,
    /// [`Notification::ThreadStatus`].
    ThreadStatus,
    /// [`Notification::CpuStatus`].
    CpuStatus,
    /// [`Notification::Irq`] and [`Notification::SoftIrq`].
    IrqStatus,
    /// [`Notification::Wakeup`].
    Wakeup,
    /// [`Notification::ThreadBirth`], [`Notification::ThreadKnown`],
    /// [`Notification::ThreadExec`] and [`Notification::ThreadExit`].
    Lifecycle,
}

impl NoteKind {
    /// The kind of every notification, in declaration order (all but
    /// [`NoteKind::FdSyscallDone`], a narrower `SyscallDone`).
    pub const EVERY: [NoteKind; 16] = [
        NoteKind::SchedSwitch,
        NoteKind::PrioChanged,
        NoteKind::Migrate,
        NoteKind::SyscallDone,
        NoteKind::Io,
        NoteKind::Net,
        NoteKind::HardIrqDone,
        NoteKind::SoftIrqRaise,
        NoteKind::SoftIrqDone,
        NoteKind::BlockDone,
        NoteKind::Page,
        NoteKind::ThreadStatus,
        NoteKind::CpuStatus,
        NoteKind::IrqStatus,
        NoteKind::Wakeup,
        NoteKind::Lifecycle,
    ];
}

/// A set of [`NoteKind`]s and [`Facet`]s: the notifications some consumers want and the parts
/// of the state they read. The state machine skips making the other notifications (its own
/// state is kept the same); a reader may leave out the events none of them needs (see
/// [`crate::needs`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Interest(u32);

/// Parts of the [`State`] a consumer reads, besides what notifications carry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Facet {
    /// Threads (command name, pid, priority), the thread running on each CPU, the CPUs.
    Threads = 24,
    /// Processes' descriptor tables and the open files.
    Fds,
    /// Disks: names, partitions, pending requests.
    Disks,
    /// Network interface names.
    Netifs,
    /// IRQ handler names.
    IrqNames,
}

impl Interest {
    /// Every notification and facet.
    pub const ALL: Interest = Interest(u32::MAX);
    /// No notification.
    pub const NONE: Interest = Interest(0);

    /// The set of `kinds`.
    pub const fn of(kinds: &[NoteKind]) -> Interest {
        let mut bits = 0u32;
        let mut i = 0;
        while i < kinds.len() {
            bits |= 1 << kinds[i] as u32;
            i += 1;
        }
        Interest(bits)
    }

    /// This set, reading `facets` too.
    pub const fn reading(self, facets: &[Facet]) -> Interest {
        let mut bits = self.0;
        let mut i = 0;
        while i < facets.len() {
            bits |= 1 << facets[i] as u32;
            i += 1;
        }
        Interest(bits)
    }

    /// Both sets.
    pub const fn union(self, other: Interest) -> Interest {
        Interest(self.0 | other.0)
    }

    /// Whether notifications of kind `k` are in the set.
    #[inline(always)]
    pub const fn has(self, k: NoteKind) -> bool {
        self.0 & (1 << k as u32) != 0
    }

    /// Whether a consumer with this interest takes notification `n`.
    #[inline(always)]
    pub fn takes(self, n: &Notification) -> bool {
        self.has(n.kind())
            || matches!(n, Notification::SyscallDone { on_fds: true, .. })
                && self.has(NoteKind::FdSyscallDone)
    }

    /// Whether some notification or facet is in both sets.
    #[inline(always)]
    pub const fn meets(self, other: Interest) -> bool {
        self.0 & other.0 != 0
    }

    /// Whether facet `f` is read.
    #[inline(always)]
    pub const fn reads(self, f: Facet) -> bool {
        self.0 & (1 << f as u32) != 0
    }
}

/// Everything: a consumer that does not say what it wants gets it all.
impl Default for Interest {
    fn default() -> Self {
        Interest::ALL
    }
}

impl Notification {
    /// The kind of this notification.
    pub fn kind(&self) -> NoteKind {
        match self {
            Notification::SchedSwitch { .. } => NoteKind::SchedSwitch,
            Notification::PrioChanged { .. } => NoteKind::PrioChanged,
            Notification::Migrate { .. } => NoteKind::Migrate,
            Notification::SyscallDone { .. } => NoteKind::SyscallDone,
            Notification::Io(_) | Notification::FdKnown { .. } => NoteKind::Io,
            Notification::Net { .. } => NoteKind::Net,
            Notification::HardIrqDone { .. } => NoteKind::HardIrqDone,
            Notification::SoftIrqRaise { .. } => NoteKind::SoftIrqRaise,
            Notification::SoftIrqDone { .. } => NoteKind::SoftIrqDone,
            Notification::BlockDone { .. } => NoteKind::BlockDone,
            Notification::Page { .. } => NoteKind::Page,
            Notification::ThreadStatus { .. } => NoteKind::ThreadStatus,
            Notification::CpuStatus { .. } => NoteKind::CpuStatus,
            Notification::Irq { .. } | Notification::SoftIrq { .. } => NoteKind::IrqStatus,
            Notification::Wakeup { .. } => NoteKind::Wakeup,
            Notification::ThreadBirth { .. }
            | Notification::ThreadKnown { .. }
            | Notification::ThreadExec { .. }
            | Notification::ThreadExit { .. } => NoteKind::Lifecycle,
        }
    }
}

/// Options of the state machine.
#[derive(Debug, Clone, Copy, Default)]
pub struct StateOptions {
    /// Reproduce lttng-analyses 0.6.1's event handling defects (for comparisons): ignore the
    /// ≥ 2.7 `irq_softirq_*` names, do not take `compat_syscall_exit_*` as system
    /// call exits, and do not track descriptors created by accept*, pipe* and fcntl64.
    pub lttng_analyses_quirks: bool,
}

/// The state of one traced host.
#[derive(Debug, Default)]
pub struct State {
    /// How events are handled.
    pub options: StateOptions,
    /// Every thread seen.
    pub threads: Threads,
    /// Processes (their descriptor tables), by pid.
    pub processes: IntMap<i32, Process>,
    /// CPUs by id (any id a trace gives: see [`CpuMap`]).
    cpus: CpuMap<Cpu>,
    /// Disks seen, by device number.
    pub disks: IntMap<u64, Disk>,
    /// Names of hard IRQs, from their handler entries.
    pub irq_names: IntMap<i64, String>,
    /// Statedump file table addresses → pid.
    pub(crate) file_tables: IntMap<i64, i32>,
    /// Remapped bios: (device, sector) → original device (partition).
    pub(crate) remaps: IntMap<(u64, u64), u64>,
    /// Devices that partitions are remapped to (whole disks).
    pub whole_disks: IntSet<u64>,
    /// Names of the open files descriptors refer to (see [`Fd::file`]); a connected socket is
    /// renamed to its peer `ADDRESS:PORT`.
    pub files: Vec<OpenFile>,
    /// Network interface names, by first appearance.
    pub netifs: Vec<String>,
    /// System call events that did not pair on their thread: an entry while the thread was
    /// still in a call, or the exit of another call than the one it was in. Linux never
    /// interleaves a thread's calls, so each is a sign of events lost without being counted.
    pub interleaved_syscalls: u64,
    /// The notifications to make.
    interest: Interest,
    /// For the status notifications only: the system call each forked thread starts in (its
    /// parent's, `clone`), until its first system call exit, as Trace Compass shows it. (Its
    /// `current_syscall` stays empty: the analyses count no call they did not see enter.)
    forked_in_call: IntMap<i32, u32>,
}

/// The notifications [`State::note_wakeup`] makes.
const WAKEUP: Interest = Interest::of(&[NoteKind::ThreadStatus, NoteKind::Wakeup]);

/// The notifications [`State::note_irq`] and [`State::note_softirq`] make.
const IRQS: Interest = Interest::of(&[
    NoteKind::ThreadStatus,
    NoteKind::CpuStatus,
    NoteKind::IrqStatus,
]);

/// The notifications [`State::note_cpu`] makes.
const STATUS: Interest = Interest::of(&[NoteKind::ThreadStatus, NoteKind::CpuStatus]);

/// The status of a thread switched out in `prev_state`, as Trace Compass reads it: runnable
/// (preempted) when no state bit is set but the "preempted" / `TASK_STATE_MAX` markers
/// kernels add, blocked when interruptible or uninterruptible, dead when exiting.
fn switched_out_status(prev_state: i64) -> ThreadStatus {
    const MARKERS: i64 = 0x100 | 0x400 | 0x800;
    const BLOCKED: i64 = 0x1 | 0x2;
    const DEAD: i64 = 0x10 | 0x20 | 0x40;
    let s = prev_state & !MARKERS;
    if s == 0 {
        ThreadStatus::WaitCpu
    } else if s & BLOCKED != 0 {
        ThreadStatus::WaitBlocked
    } else if s & DEAD != 0 {
        ThreadStatus::Dead
    } else {
        ThreadStatus::Unknown
    }
}

/// The status of a thread as the statedump gives it (lttng-modules' `lttng_process_status`:
/// 2 waiting for a CPU, 5 waiting, 6 running).
fn statedump_status(status: Option<i64>) -> ThreadStatus {
    match status {
        Some(2) => ThreadStatus::WaitCpu,
        Some(5) => ThreadStatus::WaitBlocked,
        Some(6) => ThreadStatus::Usermode,
        _ => ThreadStatus::Unknown,
    }
}

const O_CLOEXEC: i64 = 0o2000000;
const F_DUPFD: i64 = 0;
const F_DUPFD_CLOEXEC: i64 = 1030;
const F_SETFD: i64 = 2;

/// The descriptor arguments of a system call entry of kind `op`. Every field is optional:
/// lttng-modules versions name and record them differently.
fn io_entry<'a>(op: FdOp, p: impl Read<'a>) -> IoEntry {
    let mut e = IoEntry {
        op,
        ..Default::default()
    };
    let cloexec = |f: F| p.int(f).unwrap_or(0) & O_CLOEXEC != 0;
    match op {
        FdOp::Open => {
            e.filename = p.text(F::Filename);
            e.cloexec = cloexec(F::Flags);
        }
        FdOp::Socket => e.cloexec = cloexec(F::Type),
        FdOp::Accept => e.cloexec = cloexec(F::Flags),
        FdOp::Dup => {
            e.fd = p.int(F::Oldfd).or_else(|| p.int(F::Fildes));
            e.fd2 = p.int(F::Newfd);
            e.cloexec = cloexec(F::Flags);
        }
        FdOp::Fcntl | FdOp::Fcntl64 => {
            e.fd = p.int(F::Fd);
            e.cmd = p.int(F::Cmd);
            e.cloexec = e.cmd == Some(F_DUPFD_CLOEXEC);
            // F_SETFD: FD_CLOEXEC in `arg`.
            e.fd2 = p.int(F::Arg);
        }
        FdOp::Connect => {
            e.fd = p.int(F::Fd);
            e.peer = peer(p);
        }
        FdOp::Close | FdOp::Read | FdOp::Write | FdOp::SyncFd => e.fd = p.int(F::Fd),
        // pipe2: O_CLOEXEC in `flags` (the descriptors come with the exit).
        FdOp::Pipe => e.cloexec = cloexec(F::Flags),
        FdOp::Sync | FdOp::None => {}
    }
    e
}

/// `A.B.C.D:PORT` of a connect entry with an IPv4 peer (lttng-modules ≥ 2.6 record
/// `family`, `v4addr` and `dport`).
fn peer<'a>(p: impl Read<'a>) -> Option<String> {
    const AF_INET: i64 = 2;
    if p.int(F::Family)? != AF_INET {
        return None;
    }
    let port = p.int(F::Dport)?;
    let b = p.ints(F::V4addr);
    if b.len() != 4 {
        return None;
    }
    Some(format!("{}.{}.{}.{}:{port}", b[0], b[1], b[2], b[3]))
}

/// Whether `s` is the (lossy UTF-8) text of `bytes`, without converting valid UTF-8.
#[inline]
fn text_is(s: &str, bytes: &[u8]) -> bool {
    s.as_bytes() == bytes
        || (std::str::from_utf8(bytes).is_err() && *s == *String::from_utf8_lossy(bytes))
}

/// Sets `comm` to the (lossy UTF-8) text of `raw` up to its first NUL, allocating only when
/// it changes to a name longer than the inline capacity of [`CompactString`].
#[inline(never)]
fn set_comm(comm: &mut CompactString, raw: &[u8]) {
    // Names rarely change: `raw` holding `comm` then a NUL (or nothing) is the same name, found
    // without looking for the NUL first (`comm` has none).
    let c = comm.as_bytes();
    if raw.get(..c.len()) == Some(c) && raw.get(c.len()).is_none_or(|&b| b == 0) {
        return;
    }
    let bytes = raw.split(|&b| b == 0).next().unwrap_or(raw);
    // Here `bytes` differs from `comm` (the test above): valid UTF-8 is the new name as it is.
    // The common case, and a frequent one: the idle threads of all CPUs share tid 0 and
    // switch between names ("swapper/0", "swapper/1", ...) all the time. Names are nearly
    // always ASCII, checked in a few instructions where `from_utf8` costs a call and a
    // byte-by-byte scan.
    let text = if bytes.is_ascii() {
        // SAFETY: ASCII bytes are valid UTF-8.
        Some(unsafe { std::str::from_utf8_unchecked(bytes) })
    } else {
        std::str::from_utf8(bytes).ok()
    };
    if let Some(text) = text {
        comm.clear();
        comm.push_str(text);
    } else if !text_is(comm, bytes) {
        *comm = CompactString::from_utf8_lossy(bytes);
    }
}

/// [`set_comm`] for a 16-byte array `b` (`word`: its bytes as a little-endian integer). The
/// idle threads' names change at nearly every switch (see [`set_comm`]): the NUL and the ASCII
/// test are then a few word operations instead of byte loops.
#[inline(never)]
fn set_comm_array(comm: &mut CompactString, word: u128, b: &[u8; 16]) {
    const ONES: u128 = u128::MAX / 0xff;
    const HIGH_BITS: u128 = ONES << 7;
    // Flags the high bit of each NUL byte; a borrow can wrongly flag only bytes above the
    // first NUL, so the lowest flag is exact.
    let nuls = word.wrapping_sub(ONES) & !word & HIGH_BITS;
    let len = if nuls == 0 {
        16
    } else {
        nuls.trailing_zeros() as usize / 8
    };
    let name_bits = u128::MAX.checked_shr(128 - 8 * len as u32).unwrap_or(0);
    if word & name_bits & HIGH_BITS != 0 {
        return set_comm(comm, b);
    }
    let name = &b[..len];
    if comm.as_bytes() != name {
        // SAFETY: the bytes are ASCII (no high bit, tested above), so valid UTF-8.
        *comm = CompactString::new(unsafe { std::str::from_utf8_unchecked(name) });
    }
}

impl State {
    /// An empty state (no thread, CPU or disk known), making every notification.
    pub fn new(options: StateOptions) -> Self {
        State {
            options,
            ..Default::default()
        }
    }

    /// Makes only the notifications in `interest` (all by default). The state is the same
    /// whatever the interest, but for the [`Thread::io_entry`] of reads and writes, kept only
    /// for [`NoteKind::Io`].
    pub fn set_interest(&mut self, interest: Interest) {
        self.interest = interest;
    }

    /// The notifications the state makes.
    pub fn interest(&self) -> Interest {
        self.interest
    }

    #[inline(always)]
    fn wants(&self, k: NoteKind) -> bool {
        self.interest.has(k)
    }

    /// Adds descriptor `fd` of process `pid` on a new open file named `filename`.
    pub(crate) fn new_fd(
        &mut self,
        pid: i32,
        fd: i64,
        filename: String,
        cloexec: bool,
        origin: FdOp,
    ) -> u32 {
        let file = self.files.len() as u32;
        self.files.push(OpenFile {
            name: filename.clone(),
            origin,
        });
        self.process_mut(pid).fds.insert(
            fd,
            Fd {
                filename,
                cloexec,
                file,
            },
        );
        file
    }

    /// The process `pid`, created if unknown.
    pub(crate) fn process_mut(&mut self, pid: i32) -> &mut Process {
        self.processes.entry(pid).or_insert_with(|| Process {
            pid,
            ..Default::default()
        })
    }

    /// The name of open file `file` (see [`Fd::file`]).
    pub fn file_name(&self, file: u32) -> &str {
        self.files
            .get(file as usize)
            .map_or("", |f| f.name.as_str())
    }

    /// Updates the descriptor table for a completed system call and fills in `d`.
    fn apply_io<'a>(&mut self, mut d: IoDone, io: &IoEntry, p: impl Read<'a>) -> Option<IoDone> {
        let pid = d.pid;
        let ret = d.ret;
        let lookup = |st: &Self, fd: i64| st.processes.get(&pid)?.fds.get(&fd).cloned();
        let file_of = |st: &Self, fd: i64| Some(st.processes.get(&pid)?.fds.get(&fd)?.file);
        match io.op {
            FdOp::None => return None,
            FdOp::Open | FdOp::Socket | FdOp::Accept => {
                if ret >= 0 {
                    let name = match io.op {
                        FdOp::Open => io.filename.clone().unwrap_or_default(),
                        _ => "socket".to_string(),
                    };
                    d.fd = Some(ret);
                    d.file = Some(self.new_fd(pid, ret, name, io.cloexec, io.op));
                }
            }
            FdOp::Dup | FdOp::Fcntl | FdOp::Fcntl64 => {
                // Other fcntl commands do not create descriptors: not an I/O call.
                if io.op != FdOp::Dup && !matches!(io.cmd, Some(F_DUPFD | F_DUPFD_CLOEXEC)) {
                    if io.cmd == Some(F_SETFD) && ret == 0 {
                        let (fd, arg) = (io.fd.unwrap_or(-1), io.fd2.unwrap_or(0));
                        if let Some(f) = self
                            .processes
                            .get_mut(&pid)
                            .and_then(|p| p.fds.get_mut(&fd))
                        {
                            f.cloexec = arg & 1 != 0;
                        }
                    }
                    return None;
                }
                if ret >= 0 {
                    d.fd = Some(ret);
                    if let Some(old) = io.fd.and_then(|fd| lookup(self, fd)) {
                        d.file = Some(old.file);
                        self.process_mut(pid).fds.insert(
                            ret,
                            Fd {
                                cloexec: io.cloexec,
                                ..old
                            },
                        );
                    } else {
                        // Unknown source: the target no longer refers to what it did.
                        self.process_mut(pid).fds.remove(&ret);
                    }
                }
            }
            FdOp::Close => {
                d.fd = io.fd;
                if let Some(fd) = io.fd {
                    d.file = file_of(self, fd);
                    if ret == 0 {
                        if let Some(p) = self.processes.get_mut(&pid) {
                            p.fds.remove(&fd);
                        }
                    }
                }
            }
            FdOp::Pipe => {
                if ret == 0 {
                    for fd in p.ints(F::Fildes).into_iter().take(2) {
                        self.new_fd(pid, fd, "pipe".into(), io.cloexec, FdOp::Pipe);
                    }
                }
            }
            FdOp::Connect => {
                d.fd = io.fd;
                if let Some(file) = io.fd.and_then(|fd| file_of(self, fd)) {
                    d.file = Some(file);
                    // Connected, or connecting (EINPROGRESS).
                    if let (Some(peer), true) = (&io.peer, ret == 0 || ret == -115) {
                        self.files[file as usize].name = peer.clone();
                        if let Some(x) = self
                            .processes
                            .get_mut(&pid)
                            .and_then(|p| p.fds.get_mut(&io.fd.unwrap_or(-1)))
                        {
                            x.filename = peer.clone();
                        }
                    }
                }
            }
            FdOp::Read | FdOp::Write | FdOp::SyncFd => {
                d.fd = io.fd;
                d.file = io.fd.and_then(|fd| file_of(self, fd));
                if io.op != FdOp::SyncFd && ret >= 0 {
                    d.size = Some(ret);
                }
            }
            FdOp::Sync => {}
        }
        Some(d)
    }

    /// The CPU `id`, created if unknown.
    // Always inlined: with a CPU's soft IRQ arrays, LLVM stopped inlining it into `apply`,
    // leaving a call on most events.
    #[inline(always)]
    pub(crate) fn cpu_mut(&mut self, id: u32) -> &mut Cpu {
        self.cpus.get_or_insert_with(id, || Cpu {
            id,
            ..Default::default()
        })
    }

    /// The CPUs known so far (seen in events or as wakeup targets), by id.
    pub fn known_cpus(&self) -> impl Iterator<Item = &Cpu> {
        self.cpus.values()
    }

    /// The thread running on `cpu` (None before the CPU's first `sched_switch`).
    pub fn current_tid(&self, cpu: u32) -> Option<i32> {
        self.cpus.get(cpu)?.current_tid
    }

    /// The thread `tid`, if seen.
    pub fn thread(&self, tid: i32) -> Option<&Thread> {
        self.threads.get(tid)
    }

    /// The [`Threads`] slot of the thread running on `cpu`.
    #[inline]
    fn current_slot(&self, cpu: u32) -> Option<u32> {
        self.cpus.get(cpu)?.slot
    }

    /// The thread `tid`, created if unknown, with its command name updated from `comm` (the
    /// stored bytes of an event's string field, see [`set_comm`]) if given.
    #[inline]
    fn thread_mut(&mut self, tid: i32, comm: Option<&[u8]>) -> &mut Thread {
        let s = self.threads.slot_or_insert(tid);
        let t = self.threads.at_mut(s);
        if let Some(c) = comm {
            t.set_comm(c);
        }
        t
    }

    fn check_prio(&mut self, ts: i64, tid: i32, prio: Option<i64>, out: &mut Vec<Notification>) {
        let Some(prio) = prio else { return };
        let prio = prio as i32;
        if let Some(t) = self.threads.get_mut(tid) {
            if t.prio != Some(prio) {
                t.prio = Some(prio);
                if self.interest.has(NoteKind::PrioChanged) {
                    out.push(Notification::PrioChanged { ts, tid, prio });
                }
            }
        }
    }

    /// Notes a wakeup of `tid` (not running) on `cpu`: its status, and the wakeup itself when
    /// it is the `first` since the thread last ran.
    #[inline(never)]
    fn note_wakeup(
        &self,
        ts: i64,
        cpu: u32,
        tid: i32,
        waker: Option<i32>,
        first: bool,
        out: &mut Vec<Notification>,
    ) {
        if self.wants(NoteKind::ThreadStatus) {
            out.push(Notification::ThreadStatus {
                ts,
                tid,
                status: ThreadStatus::WaitCpu,
            });
        }
        if first && self.wants(NoteKind::Wakeup) {
            let in_irq = self.cpus.get(cpu).is_some_and(|c| {
                c.current_hard_irq.is_some() || c.softirqs.running_vec().is_some()
            });
            out.push(Notification::Wakeup {
                ts,
                tid,
                cpu,
                waker,
                in_irq,
            });
        }
    }

    /// Notes a hard IRQ entry or exit, and the status it gives its CPU and thread.
    #[inline(never)]
    fn note_irq(&self, ts: i64, cpu: u32, irq: i64, entry: bool, out: &mut Vec<Notification>) {
        if self.wants(NoteKind::IrqStatus) {
            out.push(Notification::Irq {
                ts,
                cpu,
                irq,
                entry,
            });
        }
        if self.interest.meets(STATUS) {
            self.note_cpu(ts, cpu, out);
        }
    }

    /// Notes a soft IRQ entry or exit, and the status it gives its CPU and thread.
    #[inline(never)]
    fn note_softirq(
        &self,
        ts: i64,
        cpu: u32,
        vec: u64,
        step: SoftIrqStep,
        out: &mut Vec<Notification>,
    ) {
        if self.wants(NoteKind::IrqStatus) {
            out.push(Notification::SoftIrq { ts, cpu, vec, step });
        }
        if self.interest.meets(STATUS) {
            self.note_cpu(ts, cpu, out);
        }
    }

    /// Notes the status of `cpu` and of the thread it runs, as they are now: an IRQ first,
    /// then a soft IRQ, then the thread (idle, user mode or in a system call). Called after
    /// each event that may change them, when [`STATUS`] notifications are wanted.
    #[inline(never)]
    fn note_cpu(&self, ts: i64, cpu: u32, out: &mut Vec<Notification>) {
        let Some(c) = self.cpus.get(cpu) else { return };
        let t = c.slot.map(|s| self.threads.at(s));
        let running = |t: &Thread| match t.current_syscall {
            Some((name, ..)) => ThreadStatus::Syscall(name),
            None => self
                .forked_in_call
                .get(&t.tid)
                .map_or(ThreadStatus::Usermode, |&c| ThreadStatus::Syscall(c)),
        };
        let (cs, status) = if let Some((irq, _)) = c.current_hard_irq {
            (CpuStatus::Irq(irq), ThreadStatus::Interrupted)
        } else if let Some(vec) = c.softirqs.running_vec() {
            (CpuStatus::SoftIrq(vec), ThreadStatus::SoftIrq)
        } else {
            match t {
                None => (CpuStatus::Unknown, ThreadStatus::Unknown),
                Some(t) if t.tid == 0 => (CpuStatus::Idle, ThreadStatus::Usermode),
                Some(t) => {
                    let s = running(t);
                    let cs = match s {
                        ThreadStatus::Syscall(name) => CpuStatus::Syscall(t.tid, name),
                        _ => CpuStatus::Usermode(t.tid),
                    };
                    (cs, s)
                }
            }
        };
        if self.wants(NoteKind::CpuStatus) {
            out.push(Notification::CpuStatus {
                ts,
                cpu,
                status: cs,
            });
        }
        if let Some(t) = t.filter(|t| t.tid != 0 && self.wants(NoteKind::ThreadStatus)) {
            out.push(Notification::ThreadStatus {
                ts,
                tid: t.tid,
                status,
            });
        }
    }

    /// Applies one event (of kind `r`, at `ts`, on `cpu`) and appends what happened to `out`.
    /// Inlined into the caller's event loop: one call (to the state machine proper) per event.
    #[inline(always)]
    pub(crate) fn handle(
        &mut self,
        class: &Class,
        ts: i64,
        cpu: u32,
        ev: &Event<'_>,
        out: &mut Vec<Notification>,
    ) {
        if let Some(p) = class.words.as_ref().and_then(|w| w.payload(ev)) {
            self.apply(class, ts, cpu, p, out)
        } else {
            self.apply_unfixed(class, ts, cpu, ev, out)
        }
    }

    /// [`State::handle`] for an event whose payload is not read by words: by its slots when
    /// the class allows, else through the field views.
    #[inline(never)]
    fn apply_unfixed(
        &mut self,
        class: &Class,
        ts: i64,
        cpu: u32,
        ev: &Event<'_>,
        out: &mut Vec<Notification>,
    ) {
        match class.slots.as_ref().and_then(|s| s.payload(ev)) {
            Some(p) => self.apply(class, ts, cpu, p, out),
            None => self.apply(class, ts, cpu, Payload::new(ev, &class.fields), out),
        }
    }

    /// [`State::handle`] with the payload read by `p`.
    fn apply<'a>(
        &mut self,
        class: &Class,
        ts: i64,
        cpu: u32,
        p: impl Read<'a>,
        out: &mut Vec<Notification>,
    ) {
        let r = class.resolved;
        match r.kind {
            Kind::SchedSwitch => self.sched_switch(ts, cpu, p, out),
            Kind::SchedWakeup | Kind::SchedWaking | Kind::SchedWakeupNew => {
                let waker = self.cpu_mut(cpu).current_tid;
                let Some(tid) = p.int(F::Tid).map(|v| v as i32) else {
                    return;
                };
                if let Some(target) = p.int(F::TargetCpu) {
                    self.cpu_mut(target as u32);
                }
                let fix = if r.wakeup_prio_plus_100 { 100 } else { 0 };
                let prio = p.int(F::Prio).map(|p| p - fix);
                let known = self.threads.slot(tid);
                // A running thread is not waiting to run: ignore its wakeups.
                if let Some(s) = known.filter(|&s| self.threads.at(s).on_cpus > 0) {
                    // As check_prio, on the thread at hand.
                    let t = self.threads.at_mut(s);
                    if let Some(prio) = prio.map(|p| p as i32) {
                        if t.prio != Some(prio) {
                            t.prio = Some(prio);
                            if self.interest.has(NoteKind::PrioChanged) {
                                out.push(Notification::PrioChanged { ts, tid, prio });
                            }
                        }
                    }
                    return;
                }
                let s = known.unwrap_or_else(|| self.threads.slot_or_insert(tid));
                let t = self.threads.at_mut(s);
                if let Some(c) = p.raw_bytes(F::Comm) {
                    t.set_comm(c);
                }
                let first = t.last_wakeup.is_none();
                if first {
                    t.last_wakeup = Some(ts);
                    t.last_waker = waker;
                }
                // As check_prio, on the thread at hand.
                if let Some(prio) = prio.map(|p| p as i32) {
                    if t.prio != Some(prio) {
                        t.prio = Some(prio);
                        if self.interest.has(NoteKind::PrioChanged) {
                            out.push(Notification::PrioChanged { ts, tid, prio });
                        }
                    }
                }
                if self.interest.meets(WAKEUP) {
                    self.note_wakeup(ts, cpu, tid, waker, first, out);
                }
            }
            Kind::SchedPiSetprio => {
                if let Some(tid) = p.int(F::Tid) {
                    self.check_prio(ts, tid as i32, p.int(F::NewPrio), out);
                }
            }
            Kind::SchedMigrateTask => {
                self.cpu_mut(cpu);
                if let Some(tid) = p.int(F::Tid) {
                    let tid = tid as i32;
                    self.thread_mut(tid, p.raw_bytes(F::Comm));
                    // The task migrates with its current priority: a change shows here first
                    // when it happened while the task was runnable, as lttng-analyses notes
                    // it. Noted before the migration: a consumer meeting the thread at its
                    // migration reads the priority it has after this event.
                    self.check_prio(ts, tid, p.int(F::Prio), out);
                    if self.wants(NoteKind::Migrate) {
                        out.push(Notification::Migrate { ts, tid });
                    }
                }
            }
            Kind::SchedProcessFork => self.fork(ts, p, out),
            Kind::SchedProcessFree if self.wants(NoteKind::Lifecycle) => {
                if let Some(tid) = p.int(F::Tid) {
                    out.push(Notification::ThreadExit {
                        ts,
                        tid: tid as i32,
                    });
                }
            }
            Kind::SchedProcessExec => {
                // The new command name comes with the thread's next sched_switch.
                if let Some(tid) = p.int(F::Tid) {
                    let tid = tid as i32;
                    if self.wants(NoteKind::Lifecycle) {
                        out.push(Notification::ThreadExec { ts, tid });
                    }
                    let t = self.thread_mut(tid, None);
                    let pid = t.pid.unwrap_or(tid);
                    if let Some(p) = self.processes.get_mut(&pid) {
                        p.fds.retain(|_, fd| !fd.cloexec);
                    }
                }
            }
            Kind::StatedumpProcessState => self.statedump_process(ts, p, out),
            Kind::StatedumpFileDescriptor => {
                // lttng-modules < 2.11 give the pid; later ones the file table address of a
                // process, announced by its process_state event.
                let pid = p.int(F::Pid).or_else(|| {
                    let addr = p.int(F::FileTableAddress)?;
                    self.file_tables.get(&addr).map(|p| *p as i64)
                });
                let (Some(pid), Some(fd)) = (pid, p.int(F::Fd)) else {
                    return;
                };
                let filename = p.text(F::Filename).unwrap_or_default();
                let flags = p.int(F::Flags).unwrap_or(0);
                let pid = pid as i32;
                if self.wants(NoteKind::Io)
                    && !self
                        .processes
                        .get(&pid)
                        .is_some_and(|p| p.fds.contains_key(&fd))
                {
                    out.push(Notification::FdKnown { ts, pid, fd });
                }
                self.new_fd(pid, fd, filename, flags & O_CLOEXEC != 0, FdOp::None);
            }
            Kind::StatedumpBlockDevice => {
                if let Some(dev) = p.int(F::Dev) {
                    let d = self.disks.entry(dev as u64).or_insert_with(|| Disk {
                        dev: dev as u64,
                        ..Default::default()
                    });
                    d.name = p.text(F::Diskname);
                }
            }
            Kind::SyscallEntry(name) => {
                // The idle task makes no system call: "tid 0" current means the CPU's real
                // thread is not known yet (before its first sched_switch), so the call is not
                // attributed, as lttng-analyses does.
                let Some(slot) = self.current_slot(cpu) else {
                    return;
                };
                if self.threads.at(slot).tid != 0 {
                    let cmd = p.int(F::Cmd);
                    // lttng-analyses 0.6.1 ignores accept*, pipe* and fcntl64.
                    let ignored = self.options.lttng_analyses_quirks
                        && matches!(r.fdop, FdOp::Accept | FdOp::Pipe | FdOp::Fcntl64);
                    // Reads and writes leave the descriptors as they are: only their
                    // notification needs their arguments.
                    let io = (r.fdop != FdOp::None
                        && !ignored
                        && (r.fdop.changes_fds() || self.wants(NoteKind::Io)))
                    .then(|| io_entry(r.fdop, p));
                    let t = self.threads.at_mut(slot);
                    let interleaved = t.current_syscall.is_some();
                    t.current_syscall = Some((name, ts, cmd, r.fdop != FdOp::None));
                    self.interleaved_syscalls += interleaved as u64;
                    t.io_entry = io;
                    if self.interest.meets(STATUS) {
                        let tid = t.tid;
                        if !self.forked_in_call.is_empty() {
                            self.forked_in_call.remove(&tid);
                        }
                        self.note_cpu(ts, cpu, out);
                    }
                }
            }
            Kind::BlockBioRemap => {
                if let (Some(dev), Some(sector), Some(old)) =
                    (p.int(F::Dev), p.int(F::Sector), p.int(F::OldDev))
                {
                    self.remaps.insert((dev as u64, sector as u64), old as u64);
                    if old != dev {
                        self.whole_disks.insert(dev as u64);
                    }
                }
            }
            Kind::BlockRqIssue => {
                let (Some(dev), Some(sector), Some(nr)) =
                    (p.int(F::Dev), p.int(F::Sector), p.int(F::NrSector))
                else {
                    return;
                };
                let (dev, sector) = (dev as u64, sector as u64);
                let disk = self.remaps.remove(&(dev, sector)).unwrap_or(dev);
                let write = p.int(F::Rwbs).unwrap_or(0) & 1 == 1;
                let tid = p.int(F::Tid).map(|t| t as i32);
                let d = self.disks.entry(dev).or_insert_with(|| Disk {
                    dev,
                    ..Default::default()
                });
                d.pending.insert(sector, (ts, nr as u64, tid, write, disk));
            }
            Kind::BlockRqComplete => {
                let (Some(dev), Some(sector), Some(nr)) =
                    (p.int(F::Dev), p.int(F::Sector), p.int(F::NrSector))
                else {
                    return;
                };
                let Some(d) = self.disks.get_mut(&(dev as u64)) else {
                    return;
                };
                if let Some(&(issue, n, tid, write, disk)) = d.pending.get(&(sector as u64)) {
                    if n == nr as u64 {
                        d.pending.remove(&(sector as u64));
                        if !self.interest.has(NoteKind::BlockDone) {
                            return;
                        }
                        out.push(Notification::BlockDone {
                            disk,
                            issue,
                            complete: ts,
                            nr_sector: n,
                            write,
                            tid,
                        });
                    }
                }
            }
            Kind::SyscallExit(_) => {
                if r.compat && self.options.lttng_analyses_quirks {
                    return;
                }
                let Some(slot) = self.current_slot(cpu) else {
                    return;
                };
                let t = self.threads.at_mut(slot);
                let tid = t.tid;
                let io = t.io_entry.take();
                if let Some((name, entry_ts, cmd, on_fds)) = t.current_syscall.take() {
                    // (Exits without a name, of tracers before 2.7, pair with any call.)
                    if matches!(r.kind, Kind::SyscallExit(Some(exit)) if exit != name) {
                        self.interleaved_syscalls += 1;
                    }
                    let ret = p.int(F::Ret).unwrap_or(0);
                    let pid = t.pid.unwrap_or(tid);
                    if self.interest.has(NoteKind::SyscallDone)
                        || on_fds && self.interest.has(NoteKind::FdSyscallDone)
                    {
                        out.push(Notification::SyscallDone {
                            tid,
                            name,
                            entry_ts,
                            exit_ts: ts,
                            ret,
                            cmd,
                            on_fds,
                        });
                    }
                    if let Some(io) = io {
                        let done = IoDone {
                            tid,
                            pid,
                            name,
                            op: io.op,
                            entry_ts,
                            exit_ts: ts,
                            ret,
                            fd: None,
                            file: None,
                            size: None,
                        };
                        if let Some(d) = self.apply_io(done, &io, p) {
                            if self.wants(NoteKind::Io) {
                                out.push(Notification::Io(d));
                            }
                        }
                    }
                    if self.interest.meets(STATUS) {
                        self.note_cpu(ts, cpu, out);
                    }
                } else if self.interest.meets(STATUS) && self.forked_in_call.remove(&tid).is_some()
                {
                    // A forked thread leaving the call it was born in.
                    self.note_cpu(ts, cpu, out);
                }
            }
            Kind::IrqHandlerEntry => {
                let Some(irq) = p.int(F::Irq) else { return };
                if let Some(name) = p.bytes(F::Name) {
                    if !self.irq_names.get(&irq).is_some_and(|s| text_is(s, name)) {
                        self.irq_names
                            .insert(irq, String::from_utf8_lossy(name).into_owned());
                    }
                }
                self.cpu_mut(cpu).current_hard_irq = Some((irq, ts));
                if self.interest.meets(IRQS) {
                    self.note_irq(ts, cpu, irq, true, out);
                }
            }
            Kind::IrqHandlerExit => {
                let Some(irq) = p.int(F::Irq) else { return };
                let c = self.cpu_mut(cpu);
                match c.current_hard_irq {
                    Some((cur, begin)) if cur == irq => {
                        c.current_hard_irq = None;
                        if self.interest.meets(IRQS) {
                            self.note_irq(ts, cpu, irq, false, out);
                        }
                        if !self.interest.has(NoteKind::HardIrqDone) {
                            return;
                        }
                        out.push(Notification::HardIrqDone {
                            cpu,
                            irq,
                            begin,
                            end: ts,
                        });
                    }
                    _ => {}
                }
            }
            Kind::SoftirqRaise | Kind::SoftirqEntry | Kind::SoftirqExit => {
                if r.prefixed && self.options.lttng_analyses_quirks {
                    return;
                }
                let Some(vec) = p.int(F::Vec).map(|v| v as u64) else {
                    return;
                };
                let c = self.cpu_mut(cpu);
                match r.kind {
                    Kind::SoftirqRaise => {
                        c.softirqs.raise(vec, ts);
                        if self.interest.has(NoteKind::SoftIrqRaise) {
                            out.push(Notification::SoftIrqRaise { ts, cpu, vec });
                        }
                        if self.interest.has(NoteKind::IrqStatus) {
                            out.push(Notification::SoftIrq {
                                ts,
                                cpu,
                                vec,
                                step: SoftIrqStep::Raise,
                            });
                        }
                    }
                    Kind::SoftirqEntry => {
                        c.softirqs.enter(vec, ts);
                        if self.interest.meets(IRQS) {
                            self.note_softirq(ts, cpu, vec, SoftIrqStep::Entry, out);
                        }
                    }
                    _ => {
                        let done = c.softirqs.exit(vec);
                        if self.interest.meets(IRQS) {
                            self.note_softirq(ts, cpu, vec, SoftIrqStep::Exit, out);
                        }
                        if let Some((begin, raise)) = done {
                            if !self.interest.has(NoteKind::SoftIrqDone) {
                                return;
                            }
                            out.push(Notification::SoftIrqDone {
                                cpu,
                                vec,
                                raise,
                                begin,
                                end: ts,
                            });
                        }
                    }
                }
            }
            Kind::NetDevXmit | Kind::NetifReceiveSkb => {
                let Some(name) = p.bytes(F::Name) else {
                    return;
                };
                let iface = match self.netifs.iter().position(|n| text_is(n, name)) {
                    Some(i) => i as u32,
                    None => {
                        self.netifs.push(String::from_utf8_lossy(name).into_owned());
                        self.netifs.len() as u32 - 1
                    }
                };
                if !self.wants(NoteKind::Net) {
                    return;
                }
                out.push(Notification::Net {
                    ts,
                    iface,
                    len: p.int(F::Len).unwrap_or(0).max(0) as u64,
                    sent: r.kind == Kind::NetDevXmit,
                });
            }
            Kind::PageAlloc | Kind::PageFree => {
                if !self.wants(NoteKind::Page) {
                    return;
                }
                let tid = self.current_tid(cpu);
                out.push(Notification::Page {
                    ts,
                    cpu,
                    tid,
                    alloc: r.kind == Kind::PageAlloc,
                });
            }
            _ => {}
        }
    }

    fn sched_switch<'a>(
        &mut self,
        ts: i64,
        cpu: u32,
        p: impl Read<'a>,
        out: &mut Vec<Notification>,
    ) {
        let (Some(prev_tid), Some(next_tid)) = (p.int(F::PrevTid), p.int(F::NextTid)) else {
            return;
        };
        let (prev_tid, next_tid) = (prev_tid as i32, next_tid as i32);
        let prev_comm = p.raw_bytes(F::PrevComm);
        let next_comm = p.raw_bytes(F::NextComm);
        // The thread switched out is normally the CPU's current one: no lookup then.
        let old = self.cpu_mut(cpu).slot;
        let prev_slot = match old {
            Some(s) if self.threads.at(s).tid == prev_tid => s,
            _ => self.threads.slot_or_insert(prev_tid),
        };
        let next_slot = self.threads.slot_or_insert(next_tid);
        let c = self.cpu_mut(cpu);
        c.current_tid = Some(next_tid);
        c.slot = Some(next_slot);
        if let Some(o) = old {
            self.threads.at_mut(o).on_cpus -= 1;
        }
        self.threads.at_mut(next_slot).on_cpus += 1;
        let prev = self.threads.at_mut(prev_slot);
        if let Some(c) = prev_comm {
            prev.set_comm(c);
        }
        // A priority changed while the task ran shows first at its switch-out; noted before
        // the switch, as a consumer reads the switch with the priorities already current. The
        // idle task's priority is not followed (it has no threads' priority to report).
        if let Some(p) = p.int(F::PrevPrio).map(|p| p as i32) {
            if prev.prio != Some(p) {
                prev.prio = Some(p);
                if prev_tid != 0 && self.interest.has(NoteKind::PrioChanged) {
                    out.push(Notification::PrioChanged {
                        ts,
                        tid: prev_tid,
                        prio: p,
                    });
                }
            }
        }
        let next_prio = p.int(F::NextPrio).map(|p| p as i32);
        let next = self.threads.at_mut(next_slot);
        if let Some(c) = next_comm {
            next.set_comm(c);
        }
        let next_prio_known = next.prio;
        let wakeup = next.last_wakeup.take().map(|w| (w, next.last_waker.take()));
        // As check_prio, on the thread at hand.
        let changed = next_prio.filter(|&p| next_prio_known != Some(p));
        if changed.is_some() {
            next.prio = changed;
        }
        // Noted before the switch, as the previous task's: a consumer meeting the thread at
        // this switch reads the priority it gives.
        if let Some(prio) = changed.filter(|_| self.wants(NoteKind::PrioChanged)) {
            out.push(Notification::PrioChanged {
                ts,
                tid: next_tid,
                prio,
            });
        }
        if self.wants(NoteKind::SchedSwitch) {
            out.push(Notification::SchedSwitch {
                ts,
                cpu,
                prev_tid,
                next_tid,
                next_prio_known,
                next_prio,
                wakeup,
            });
        }
        if self.interest.meets(STATUS) {
            self.note_switch(ts, cpu, prev_tid, p.int(F::PrevState), out);
        }
    }

    /// Notes the status of the thread switched out in `prev_state`, then those of `cpu` and
    /// the thread switched in.
    #[inline(never)]
    fn note_switch(
        &self,
        ts: i64,
        cpu: u32,
        prev_tid: i32,
        prev_state: Option<i64>,
        out: &mut Vec<Notification>,
    ) {
        if prev_tid != 0 && self.wants(NoteKind::ThreadStatus) {
            out.push(Notification::ThreadStatus {
                ts,
                tid: prev_tid,
                status: prev_state.map_or(ThreadStatus::Unknown, switched_out_status),
            });
        }
        self.note_cpu(ts, cpu, out);
    }

    fn fork<'a>(&mut self, ts: i64, p: impl Read<'a>, out: &mut Vec<Notification>) {
        let (Some(ptid), Some(ctid)) = (p.int(F::ParentTid), p.int(F::ChildTid)) else {
            return;
        };
        let (ptid, ctid) = (ptid as i32, ctid as i32);
        let ppid = p.int(F::ParentPid).map(|v| v as i32);
        let cpid = p.int(F::ChildPid).map(|v| v as i32);
        let ccomm = p.raw_bytes(F::ChildComm);
        let parent = self.thread_mut(ptid, None);
        if parent.pid.is_none() {
            parent.pid = ppid;
        }
        let parent_prio = parent.prio;
        let parent_pid = parent.pid.unwrap_or(ptid);
        let parent_call = parent
            .current_syscall
            .filter(|_| self.interest.meets(STATUS))
            .map(|c| c.0);
        let child = self.thread_mut(ctid, ccomm);
        child.pid = cpid.or(child.pid);
        if child.prio.is_none() {
            child.prio = parent_prio;
        }
        let child_pid = child.pid.unwrap_or(ctid);
        if let Some(call) = parent_call {
            self.forked_in_call.insert(ctid, call);
        }
        if self.wants(NoteKind::Lifecycle) {
            out.push(Notification::ThreadBirth {
                ts,
                tid: ctid,
                pid: child_pid,
                parent_tid: ptid,
                parent_pid,
            });
        }
        if self.wants(NoteKind::ThreadStatus) {
            out.push(Notification::ThreadStatus {
                ts,
                tid: ctid,
                status: ThreadStatus::WaitCpu,
            });
        }
        if child_pid != parent_pid && !self.processes.contains_key(&child_pid) {
            let fds = self
                .processes
                .get(&parent_pid)
                .map(|p| p.fds.clone())
                .unwrap_or_default();
            self.processes.insert(
                child_pid,
                Process {
                    pid: child_pid,
                    fds,
                },
            );
        }
    }

    fn statedump_process<'a>(&mut self, ts: i64, p: impl Read<'a>, out: &mut Vec<Notification>) {
        let Some(tid) = p.int(F::Tid) else { return };
        let tid = tid as i32;
        let pid = p.int(F::Pid).map(|v| v as i32);
        // (The idle task, tid 0, is no thread a model follows: its CPU's status tells.)
        if tid != 0 && self.wants(NoteKind::Lifecycle) {
            out.push(Notification::ThreadKnown {
                ts,
                tid,
                pid,
                ppid: p.int(F::Ppid).map(|v| v as i32),
                status: statedump_status(p.int(F::Status)),
            });
        }
        let name = p.raw_bytes(F::Name);
        let prio = p.int(F::Prio);
        let t = self.thread_mut(tid, name);
        if pid.is_some() {
            t.pid = pid;
        }
        if t.prio.is_none() {
            t.prio = prio.map(|p| p as i32);
        }
        if let (Some(pid), Some(addr)) = (pid, p.int(F::FileTableAddress)) {
            self.file_tables.insert(addr, pid);
        }
        if let Some(pid) = pid {
            self.processes.entry(pid).or_insert_with(|| Process {
                pid,
                ..Default::default()
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{set_comm, SoftIrqs, Thread};
    use compact_str::CompactString;

    /// Linux's vectors (arrays) and any other number (maps) behave alike: raises are taken
    /// oldest first, an exit gives its entry and raise once.
    #[test]
    fn soft_irqs_pair_raises_entries_and_exits() {
        for vec in [0, 9, 10, 1 << 40] {
            let mut s = SoftIrqs::default();
            assert_eq!(s.exit(vec), None, "{vec}");
            s.raise(vec, 10);
            s.raise(vec, 20);
            s.enter(vec, 30);
            assert_eq!(s.exit(vec), Some((30, Some(10))), "{vec}");
            assert_eq!(s.exit(vec), None, "{vec}");
            s.enter(vec, 40);
            assert_eq!(s.exit(vec), Some((40, Some(20))), "{vec}");
            s.enter(vec, 50);
            assert_eq!(s.exit(vec), Some((50, None)), "{vec}");
            // Another vector is apart.
            s.raise(vec, 60);
            s.enter(vec ^ 1, 70);
            assert_eq!(s.exit(vec ^ 1), Some((70, None)), "{vec}");
        }
    }

    #[test]
    fn thread_comm_from_arrays_and_strings() {
        // In order: each name is set on the same thread, after the ones before it.
        let steps: [(&[u8], &str); 14] = [
            (b"bash\0\0\0\0\0\0\0\0\0\0\0\0", "bash"),
            // The same array again, then another one.
            (b"bash\0\0\0\0\0\0\0\0\0\0\0\0", "bash"),
            (b"bash\0\0\0\0\0\0\0\0\0\0\0x", "bash"),
            (b"exactly16bytes!!", "exactly16bytes!!"),
            // A string (not 16 bytes) forgets the array: the first one again is applied.
            (b"sh", "sh"),
            (b"exactly16bytes!!", "exactly16bytes!!"),
            (b"x\xffy\0\0\0\0\0\0\0\0\0\0\0\0\0", "x\u{fffd}y"),
            // Valid UTF-8 beyond ASCII, bytes that are not ASCII after the NUL, no name at all.
            (b"caf\xc3\xa9\0\0\0\0\0\0\0\0\0\0\0", "caf\u{e9}"),
            (b"kworker/0:1\0\xff\xfe\x80\x01", "kworker/0:1"),
            (b"kworker/0:1H\0\0\0\x01", "kworker/0:1H"),
            (&[0; 16], ""),
            (
                b"\x01\x7f\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01",
                "\u{1}\u{7f}\u{1}\u{1}\u{1}\u{1}\u{1}\u{1}\u{1}\u{1}\u{1}\u{1}\u{1}\u{1}\u{1}\u{1}",
            ),
            (b"0123456789abcde\xff", "0123456789abcde\u{fffd}"),
            (
                b"a name longer than the 24 inline bytes",
                "a name longer than the 24 inline bytes",
            ),
        ];
        let mut t = Thread::default();
        for (raw, name) in steps {
            t.set_comm(raw);
            assert_eq!(t.comm, name, "{raw:?}");
        }
    }

    #[test]
    fn comm_arrays_as_strings() {
        // The word-wise path agrees with the byte-wise one on arrays mixing NULs, ASCII and
        // high bytes at every position (a fixed pseudo-random sequence).
        let mut x = 0x9e37_79b9_7f4a_7c15_u64;
        for _ in 0..20_000 {
            let mut b = [0u8; 16];
            for v in &mut b {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                *v = [0, 1, b'a', 0x7f, 0x80, 0xc3, 0xa9, 0xff][(x % 8) as usize];
            }
            let mut t = Thread::default();
            t.set_comm(&b);
            let mut c = CompactString::default();
            set_comm(&mut c, &b);
            assert_eq!(t.comm, c, "{b:?}");
        }
    }

    #[test]
    fn comm_from_stored_string_bytes() {
        // Applied in turn to one name: each step starts from the name the one before left.
        let steps: [(&[u8], &str); 13] = [
            (b"\0\0\0\0", ""),
            (b"bash\0\0\0\0", "bash"),
            // A longer name that starts with the current one.
            (b"bash2\0\0\0", "bash2"),
            // The same name, without a NUL (a full array or a string without its terminator).
            (b"bash2", "bash2"),
            // A shorter one, and bytes after the first NUL do not count.
            (b"ba\0sh2\0", "ba"),
            (b"", ""),
            // Invalid UTF-8 is kept as its lossy text.
            (b"x\xffy\0", "x\u{fffd}y"),
            (b"x\xffy\0\0", "x\u{fffd}y"),
            // Valid non-ASCII UTF-8, and a name too long to be stored inline (a string field).
            (b"caf\xc3\xa9\0", "caf\u{e9}"),
            (
                b"a-name-longer-than-twenty-four-bytes\0",
                "a-name-longer-than-twenty-four-bytes",
            ),
            (
                b"a-name-longer-than-twenty-four-bytes-\xff\0",
                "a-name-longer-than-twenty-four-bytes-\u{fffd}",
            ),
            (b"sh\0", "sh"),
            (b"\0", ""),
        ];
        let mut c = CompactString::default();
        for (raw, name) in steps {
            set_comm(&mut c, raw);
            assert_eq!(c, name, "{raw:?}");
        }
        // The same invalid bytes again leave the name as it is, not rebuilt.
        set_comm(&mut c, b"x\xffy\0");
        let before = c.as_ptr();
        set_comm(&mut c, b"x\xffy\0\0");
        assert_eq!((c.as_str(), c.as_ptr()), ("x\u{fffd}y", before));
    }
}
