//! The typed kernel event model: one enum for the event names of every lttng-modules version
//! (2.1–2.13), resolved once per event class.

use std::collections::HashMap;
use std::sync::Arc;

use ctf::Event;

use crate::payload::{Payload, SlotPlan, WordPlan};

/// What a kernel event means, independent of the tracer version that named it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    /// `sched_switch`.
    SchedSwitch,
    /// `sched_wakeup`.
    SchedWakeup,
    /// `sched_waking` (lttng-modules ≥ 2.8).
    SchedWaking,
    /// `sched_wakeup_new`: a new thread's first wakeup.
    SchedWakeupNew,
    /// `sched_migrate_task`.
    SchedMigrateTask,
    /// `sched_process_fork`.
    SchedProcessFork,
    /// `sched_process_exec`.
    SchedProcessExec,
    /// `sched_process_exit`.
    SchedProcessExit,
    /// `sched_process_free`.
    SchedProcessFree,
    /// `sched_pi_setprio`: a priority change (priority inheritance).
    SchedPiSetprio,
    /// `irq_handler_entry`.
    IrqHandlerEntry,
    /// `irq_handler_exit`.
    IrqHandlerExit,
    /// `softirq_raise` (< 2.7) or `irq_softirq_raise` (≥ 2.7).
    SoftirqRaise,
    /// `softirq_entry` (< 2.7) or `irq_softirq_entry` (≥ 2.7).
    SoftirqEntry,
    /// `softirq_exit` (< 2.7) or `irq_softirq_exit` (≥ 2.7).
    SoftirqExit,
    /// A system call entry; the value indexes the [`Resolver`]'s syscall name table.
    SyscallEntry(u32),
    /// A system call exit: named (`syscall_exit_*`, value = name index) or not (`exit_syscall`
    /// of lttng-modules < 2.6, `None`).
    SyscallExit(Option<u32>),
    /// `mm_page_alloc` / `kmem_mm_page_alloc`.
    PageAlloc,
    /// `mm_page_free` / `kmem_mm_page_free`.
    PageFree,
    /// `block_rq_issue`.
    BlockRqIssue,
    /// `block_rq_complete`.
    BlockRqComplete,
    /// `block_bio_remap`: a request for a partition sent on to its whole disk.
    BlockBioRemap,
    /// `block_bio_backmerge`.
    BlockBioBackmerge,
    /// `net_dev_xmit`: a packet sent on an interface.
    NetDevXmit,
    /// `netif_receive_skb` / `net_if_receive_skb`.
    NetifReceiveSkb,
    /// `hrtimer_expire_entry` (< 2.7) or `timer_hrtimer_expire_entry` (≥ 2.7).
    HrtimerExpireEntry,
    /// `hrtimer_expire_exit` (< 2.7) or `timer_hrtimer_expire_exit` (≥ 2.7).
    HrtimerExpireExit,
    /// `lttng_statedump_start`.
    StatedumpStart,
    /// `lttng_statedump_end`.
    StatedumpEnd,
    /// `lttng_statedump_process_state`: a thread alive when tracing started.
    StatedumpProcessState,
    /// `lttng_statedump_file_descriptor`: a descriptor open when tracing started.
    StatedumpFileDescriptor,
    /// `lttng_statedump_block_device`: a disk's name.
    StatedumpBlockDevice,
    /// `sched_ttwu` (the wake-up event of some older kernels; not read by the state machine).
    SchedTtwu,
    /// `net_dev_queue`: a packet queued for sending (not read by the state machine).
    NetDevQueue,
    /// `inet_sock_local_out` (lttng addons): a TCP segment sent (not read by the state machine).
    InetSockLocalOut,
    /// `inet_sock_local_in` (lttng addons): a TCP segment received (not read by the state
    /// machine).
    InetSockLocalIn,
    /// `ipi_entry` (not read by the state machine).
    IpiEntry,
    /// `ipi_exit` (not read by the state machine).
    IpiExit,
    /// `do_IRQ_entry` (a kprobe-style event; not read by the state machine).
    DoIrqEntry,
    /// `do_IRQ_return` (not read by the state machine).
    DoIrqReturn,
    /// `netif_receive_skb_internal_entry` (not read by the state machine).
    PacketRxEntry,
    /// `netif_receive_skb_internal_return` (not read by the state machine).
    PacketRxReturn,
    /// `x86_irq_vectors_*_entry` of a vector other than the local timer (not read by the state
    /// machine).
    IrqVectorEntry,
    /// `x86_irq_vectors_*_exit` of a vector other than the local timer (not read by the state
    /// machine).
    IrqVectorExit,
    /// `x86_irq_vectors_local_timer_entry` (not read by the state machine).
    LocalTimerEntry,
    /// Any other `x86_irq_vectors_local_timer*` event: its exit (not read by the state
    /// machine).
    LocalTimerExit,
    /// Anything else (ignored by the state machine).
    Other,
}

impl Kind {
    /// Whether the state machine reads events of this kind (the kinds after
    /// [`Kind::StatedumpBlockDevice`] are known names other consumers read: critical path,
    /// synchronization).
    #[inline]
    pub(crate) fn is_modelled(self) -> bool {
        !matches!(
            self,
            Kind::SchedTtwu
                | Kind::NetDevQueue
                | Kind::InetSockLocalOut
                | Kind::InetSockLocalIn
                | Kind::IpiEntry
                | Kind::IpiExit
                | Kind::DoIrqEntry
                | Kind::DoIrqReturn
                | Kind::PacketRxEntry
                | Kind::PacketRxReturn
                | Kind::IrqVectorEntry
                | Kind::IrqVectorExit
                | Kind::LocalTimerEntry
                | Kind::LocalTimerExit
                | Kind::Other
        )
    }

    /// The direction of a network event a packet can be matched by (TCP fields in its
    /// payload): sent (`inet_sock_local_out`, `net_dev_queue`) or received
    /// (`inet_sock_local_in`, `netif_receive_skb`, `net_if_receive_skb`). `net_dev_xmit` is
    /// not one: it is the end of a send the queueing event already gave.
    pub fn packet_direction(self) -> Option<PacketDir> {
        match self {
            Kind::InetSockLocalOut | Kind::NetDevQueue => Some(PacketDir::Send),
            Kind::InetSockLocalIn | Kind::NetifReceiveSkb => Some(PacketDir::Recv),
            _ => None,
        }
    }
}

/// The direction of a network event ([`Kind::packet_direction`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PacketDir {
    /// A packet sent by the host.
    Send,
    /// A packet received by the host.
    Recv,
}

/// The system call named by an event class name (`syscall_entry_NAME`,
/// `compat_syscall_entry_NAME`, `syscall_exit_NAME`, `compat_syscall_exit_NAME`, `sys_NAME`):
/// `NAME`; None for other names (`exit_syscall` names none).
pub fn syscall_name(name: &str) -> Option<&str> {
    name.strip_prefix("syscall_entry_")
        .or_else(|| name.strip_prefix("compat_syscall_entry_"))
        .or_else(|| name.strip_prefix("syscall_exit_"))
        .or_else(|| name.strip_prefix("compat_syscall_exit_"))
        .or_else(|| name.strip_prefix("sys_"))
}

/// How an event class was named, for the version-dependent details of the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Resolved {
    /// What the event means.
    pub kind: Kind,
    /// The name uses the ≥ 2.7 prefixes (`irq_softirq_*`, `timer_hrtimer_*`, `kmem_mm_page_*`).
    pub(crate) prefixed: bool,
    /// A `compat_syscall_*` event (32-bit system call on a 64-bit kernel).
    pub(crate) compat: bool,
    /// Subtract 100 from the `prio` of `sched_wak*` events (lttng-modules < 2.7.1 report the
    /// kernel priority there).
    pub(crate) wakeup_prio_plus_100: bool,
    /// What the system call of an entry or a named exit does to file descriptors (None for
    /// other events).
    pub(crate) fdop: FdOp,
}

/// The effect of a system call on file descriptors, and its I/O class.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum FdOp {
    /// No descriptor use (or not a system call).
    #[default]
    None,
    /// open, openat, creat: `filename`, `flags`; the new descriptor is the return value.
    Open,
    /// socket: `type` may carry SOCK_CLOEXEC; returns a descriptor.
    Socket,
    /// accept, accept4: returns a descriptor (a socket).
    Accept,
    /// dup (`fildes`/`oldfd` → return value), dup2, dup3 (`oldfd` → `newfd`).
    Dup,
    /// fcntl: F_DUPFD / F_DUPFD_CLOEXEC duplicate `fd` to the return value.
    Fcntl,
    /// fcntl64 (32-bit architectures): as fcntl.
    Fcntl64,
    /// close: `fd`.
    Close,
    /// pipe, pipe2: the `fildes` array of the exit.
    Pipe,
    /// connect: `fd`, with the peer address when the tracer records it.
    Connect,
    /// A read of `fd` (read, readv, pread64, preadv, recvfrom, recvmsg).
    Read,
    /// A write of `fd` (write, writev, pwrite64, pwritev, sendto, sendmsg).
    Write,
    /// A synchronisation of `fd` (fsync, fdatasync, syncfs, sync_file_range).
    SyncFd,
    /// sync: no descriptor.
    Sync,
}

impl FdOp {
    /// Whether the call may change the descriptor table (or the names of open files).
    pub fn changes_fds(self) -> bool {
        !matches!(
            self,
            FdOp::None | FdOp::Read | FdOp::Write | FdOp::SyncFd | FdOp::Sync
        )
    }

    /// The operation of system call `name` (without prefix).
    pub fn of(name: &str) -> FdOp {
        match name {
            "open" | "openat" | "creat" => FdOp::Open,
            "socket" => FdOp::Socket,
            "accept" | "accept4" => FdOp::Accept,
            "dup" | "dup2" | "dup3" => FdOp::Dup,
            "fcntl" => FdOp::Fcntl,
            "fcntl64" => FdOp::Fcntl64,
            "close" => FdOp::Close,
            "pipe" | "pipe2" => FdOp::Pipe,
            "connect" => FdOp::Connect,
            "read" | "readv" | "pread64" | "preadv" | "recvfrom" | "recvmsg" => FdOp::Read,
            "write" | "writev" | "pwrite64" | "pwritev" | "sendto" | "sendmsg" => FdOp::Write,
            "fsync" | "fdatasync" | "syncfs" | "sync_file_range" => FdOp::SyncFd,
            "sync" => FdOp::Sync,
            _ => FdOp::None,
        }
    }
}

/// Classifies an event class name, numbering system calls in `syscalls`.
pub(crate) fn classify(name: &str, syscalls: &mut SyscallNames) -> Resolved {
    classify_with(name, |s| syscalls.intern(s))
}

/// How the event class `name` was named, where which system call it is does not matter:
/// system calls are all numbered 0. (Deciding which of a kernel trace's ~1,200 classes to read needs no name table, and
/// interning its hundreds of system call names would be paid again by every run.)
pub fn classify_unnumbered(name: &str) -> Resolved {
    classify_with(name, |_| 0)
}

/// [`classify`], numbering system calls with `intern`.
fn classify_with(name: &str, mut intern: impl FnMut(&str) -> u32) -> Resolved {
    use Kind::*;
    let mut prefixed = false;
    let mut fdop = FdOp::None;
    let kind = match name {
        "sched_switch" => SchedSwitch,
        "sched_wakeup" => SchedWakeup,
        "sched_waking" => SchedWaking,
        "sched_wakeup_new" => SchedWakeupNew,
        "sched_migrate_task" => SchedMigrateTask,
        "sched_process_fork" => SchedProcessFork,
        "sched_process_exec" => SchedProcessExec,
        "sched_process_exit" => SchedProcessExit,
        "sched_process_free" => SchedProcessFree,
        "sched_pi_setprio" => SchedPiSetprio,
        "irq_handler_entry" => IrqHandlerEntry,
        "irq_handler_exit" => IrqHandlerExit,
        "softirq_raise" => SoftirqRaise,
        "softirq_entry" => SoftirqEntry,
        "softirq_exit" => SoftirqExit,
        "irq_softirq_raise" => {
            prefixed = true;
            SoftirqRaise
        }
        "irq_softirq_entry" => {
            prefixed = true;
            SoftirqEntry
        }
        "irq_softirq_exit" => {
            prefixed = true;
            SoftirqExit
        }
        "mm_page_alloc" => PageAlloc,
        "mm_page_free" => PageFree,
        "kmem_mm_page_alloc" => {
            prefixed = true;
            PageAlloc
        }
        "kmem_mm_page_free" => {
            prefixed = true;
            PageFree
        }
        "block_rq_issue" => BlockRqIssue,
        "block_rq_complete" => BlockRqComplete,
        "block_bio_remap" => BlockBioRemap,
        "block_bio_backmerge" => BlockBioBackmerge,
        "net_dev_xmit" => NetDevXmit,
        "netif_receive_skb" | "net_if_receive_skb" => NetifReceiveSkb,
        "hrtimer_expire_entry" => HrtimerExpireEntry,
        "hrtimer_expire_exit" => HrtimerExpireExit,
        "timer_hrtimer_expire_entry" => {
            prefixed = true;
            HrtimerExpireEntry
        }
        "timer_hrtimer_expire_exit" => {
            prefixed = true;
            HrtimerExpireExit
        }
        "lttng_statedump_start" => StatedumpStart,
        "lttng_statedump_end" => StatedumpEnd,
        "lttng_statedump_process_state" => StatedumpProcessState,
        "lttng_statedump_file_descriptor" => StatedumpFileDescriptor,
        "lttng_statedump_block_device" => StatedumpBlockDevice,
        "exit_syscall" => SyscallExit(None),
        "sched_ttwu" => SchedTtwu,
        "net_dev_queue" => NetDevQueue,
        "inet_sock_local_out" => InetSockLocalOut,
        "inet_sock_local_in" => InetSockLocalIn,
        "ipi_entry" => IpiEntry,
        "ipi_exit" => IpiExit,
        "do_IRQ_entry" => DoIrqEntry,
        "do_IRQ_return" => DoIrqReturn,
        "netif_receive_skb_internal_entry" => PacketRxEntry,
        "netif_receive_skb_internal_return" => PacketRxReturn,
        _ => {
            if let Some(s) = name
                .strip_prefix("syscall_entry_")
                .or_else(|| name.strip_prefix("compat_syscall_entry_"))
            {
                fdop = FdOp::of(s);
                SyscallEntry(intern(s))
            } else if let Some(s) = name
                .strip_prefix("syscall_exit_")
                .or_else(|| name.strip_prefix("compat_syscall_exit_"))
            {
                fdop = FdOp::of(s);
                SyscallExit(Some(intern(s)))
            } else if let Some(s) = name.strip_prefix("sys_") {
                fdop = FdOp::of(s);
                SyscallEntry(intern(s))
            } else if let Some(v) = name.strip_prefix("x86_irq_vectors_") {
                irq_vector(v)
            } else {
                Other
            }
        }
    };
    Resolved {
        kind,
        prefixed,
        compat: name.starts_with("compat_syscall_"),
        wakeup_prio_plus_100: false,
        fdop,
    }
}

/// The kind of `x86_irq_vectors_{v}`.
fn irq_vector(v: &str) -> Kind {
    if v.starts_with("local_timer") {
        if v.ends_with("_entry") {
            Kind::LocalTimerEntry
        } else {
            Kind::LocalTimerExit
        }
    } else if v.contains("local_timer") {
        Kind::Other
    } else if v.ends_with("_entry") {
        Kind::IrqVectorEntry
    } else if v.ends_with("_exit") {
        Kind::IrqVectorExit
    } else {
        Kind::Other
    }
}

/// The lttng-modules version of a trace, from its environment.
pub(crate) fn tracer_version(trace: &ctf::Trace) -> Option<(i64, i64, i64)> {
    use ctf::ir::EnvValue;
    if trace.class.env_str("tracer_name")? != "lttng-modules" {
        return None;
    }
    let get = |n: &str| match trace.class.env(n) {
        Some(EnvValue::Int(v)) => Some(*v),
        Some(EnvValue::Str(s)) => s.parse().ok(),
        None => None,
    };
    Some((
        get("tracer_major")?,
        get("tracer_minor")?,
        get("tracer_patchlevel").unwrap_or(0),
    ))
}

/// Interned system call names.
#[derive(Debug, Default, Clone)]
pub struct SyscallNames {
    /// One shared copy of each name (a kernel trace's metadata names ~850 system calls).
    names: Vec<Arc<str>>,
    index: HashMap<Arc<str>, u32>,
}

impl SyscallNames {
    /// The index of `name`, added if new.
    pub(crate) fn intern(&mut self, name: &str) -> u32 {
        if let Some(&i) = self.index.get(name) {
            return i;
        }
        let i = self.names.len() as u32;
        let name: Arc<str> = Arc::from(name);
        self.names.push(name.clone());
        self.index.insert(name, i);
        i
    }

    /// The name `i` (from a [`Kind::SyscallEntry`] or [`Kind::SyscallExit`]).
    pub fn name(&self, i: u32) -> &str {
        &self.names[i as usize]
    }

    /// The name `i`, shared.
    pub fn shared(&self, i: u32) -> Arc<str> {
        self.names[i as usize].clone()
    }
}

/// The payload fields the state machine reads, resolved once per event class into member
/// positions (see [`Fields`]).
macro_rules! fields {
    ($($(#[$m:meta])* $v:ident = $n:literal,)*) => {
        /// A payload field the state machine reads, by its member name in lttng-modules'
        /// payloads (read through [`Class::payload`]).
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        #[repr(u8)]
        pub enum F {
            $($(#[$m])* #[doc = concat!("`", $n, "`.")] $v,)*
        }

        impl F {
            /// Every field, in declaration order.
            pub const ALL: &'static [F] = &[$(F::$v,)*];

            /// The payload member name (the inverse of [`F::of_name`], for tests).
            #[cfg(test)]
            fn name(self) -> &'static str {
                match self {
                    $(F::$v => $n,)*
                }
            }

            /// The field of payload member name `name`, if the state machine reads one.
            pub(crate) fn of_name(name: &str) -> Option<F> {
                match name {
                    $($n => Some(F::$v),)*
                    _ => None,
                }
            }
        }
    };
}

fields! {
    Tid = "tid",
    Pid = "pid",
    Prio = "prio",
    Comm = "comm",
    TargetCpu = "target_cpu",
    NewPrio = "newprio",
    PrevTid = "prev_tid",
    NextTid = "next_tid",
    PrevComm = "prev_comm",
    NextComm = "next_comm",
    PrevPrio = "prev_prio",
    NextPrio = "next_prio",
    ParentTid = "parent_tid",
    ChildTid = "child_tid",
    ParentPid = "parent_pid",
    ChildPid = "child_pid",
    ChildComm = "child_comm",
    Name = "name",
    FileTableAddress = "file_table_address",
    Fd = "fd",
    Filename = "filename",
    Flags = "flags",
    Dev = "dev",
    Diskname = "diskname",
    Cmd = "cmd",
    Type = "type",
    Oldfd = "oldfd",
    Fildes = "fildes",
    Newfd = "newfd",
    Arg = "arg",
    Family = "family",
    Dport = "dport",
    V4addr = "v4addr",
    Sector = "sector",
    OldDev = "old_dev",
    NrSector = "nr_sector",
    Rwbs = "rwbs",
    Ret = "ret",
    Irq = "irq",
    Vec = "vec",
    Len = "len",
    PrevState = "prev_state",
    Ppid = "ppid",
    Status = "status",
    ParentComm = "parent_comm",
    OldTid = "old_tid",
}

const NO_FIELD: u16 = u16::MAX;

/// Positions of the [`F`] fields in one event class's payload (None: the class has no such
/// member), so that events are read by position instead of by name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Fields([u16; F::ALL.len()]);

impl Fields {
    /// No field.
    pub const NONE: Fields = Fields([NO_FIELD; F::ALL.len()]);

    /// The positions of the fields in the payload of `ev`'s class (of the first member of
    /// each name).
    pub fn of(ev: &Event<'_>) -> Fields {
        let tl = &ev.trace().layout;
        let members = ev
            .class_layout()
            .payload
            .map_or(&[][..], |p| tl.members_of(p));
        let mut f = Fields::NONE;
        // One name match per member, not one member scan per field. A position too large to
        // keep stays NO_FIELD, as every later one would.
        for (i, m) in members.iter().enumerate() {
            if let Some(x) = F::of_name(&m.name) {
                if f.0[x as usize] == NO_FIELD {
                    f.0[x as usize] = u16::try_from(i).unwrap_or(NO_FIELD);
                }
            }
        }
        f
    }

    /// The payload member position of `f`.
    #[inline]
    pub fn get(&self, f: F) -> Option<usize> {
        let i = self.0[f as usize];
        (i != NO_FIELD).then_some(i as usize)
    }
}

/// What the model knows about an event class: its kind and field positions.
#[derive(Debug, Clone)]
pub struct Class {
    pub(crate) resolved: Resolved,
    pub(crate) fields: Fields,
    /// The fields as word reads, when the payload has a fixed layout that allows them.
    pub words: Option<WordPlan>,
    /// The fields as slot reads, when the payload has no fixed layout but allows them.
    pub slots: Option<SlotPlan>,
}

impl Class {
    /// What the class's events mean.
    #[inline]
    pub fn resolved(&self) -> Resolved {
        self.resolved
    }

    /// The payload of `ev`, an event of this class, read by the field positions resolved
    /// for it (the classes the state machine reads have them; others have no field).
    #[inline]
    pub fn payload<'a>(&self, ev: &Event<'a>) -> Payload<'a, '_> {
        Payload::new(ev, &self.fields)
    }
}

const UNRESOLVED: u32 = u32::MAX;

/// Resolves events to [`Class`]es through a dense per-(trace, stream class, event class)
/// table, so names are compared once per class, not once per event.
#[derive(Debug, Default)]
pub struct Resolver {
    /// Indexed by trace, then [`Event::class_index`]: a [`Resolver::classes`] index.
    tables: Vec<Vec<Vec<u32>>>,
    classes: Vec<Class>,
    /// The names of the system calls the [`Kind`]s number.
    pub syscalls: SyscallNames,
    /// Read every payload through the CTF field views (no [`WordPlan`]s).
    generic: bool,
}

impl Resolver {
    /// A resolver that has met no class yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// A resolver whose classes have no [`WordPlan`]: payloads are read the general way, which
    /// the word reads must agree with.
    pub(crate) fn generic() -> Self {
        Resolver {
            generic: true,
            ..Self::default()
        }
    }

    /// The kind of `ev`.
    #[inline]
    pub fn resolve(&mut self, ev: &Event<'_>) -> Resolved {
        self.class(ev).resolved
    }

    /// The class of `ev`: its kind and field positions.
    #[inline]
    pub fn class(&mut self, ev: &Event<'_>) -> &Class {
        let i = self.index(ev);
        &self.classes[i as usize]
    }

    /// The index of the class of `ev`, for [`Resolver::at`].
    #[inline]
    pub(crate) fn index(&mut self, ev: &Event<'_>) -> u32 {
        let t = ev.trace().index;
        let (sc, ec) = ev.class_index();
        if let Some(&i) = self
            .tables
            .get(t)
            .and_then(|s| s.get(sc))
            .and_then(|e| e.get(ec))
        {
            if i != UNRESOLVED {
                return i;
            }
        }
        self.add(ev, t, sc, ec)
    }

    /// The class of index `i` (from [`Resolver::index`]).
    #[inline]
    pub(crate) fn at(&self, i: u32) -> &Class {
        &self.classes[i as usize]
    }

    /// Every class resolved so far.
    pub fn classes(&self) -> &[Class] {
        &self.classes
    }

    #[cold]
    fn add(&mut self, ev: &Event<'_>, t: usize, sc: usize, ec: usize) -> u32 {
        let mut r = classify(ev.name(), &mut self.syscalls);
        if matches!(
            r.kind,
            Kind::SchedWakeup | Kind::SchedWaking | Kind::SchedWakeupNew
        ) {
            r.wakeup_prio_plus_100 = tracer_version(ev.trace()).is_some_and(|v| v < (2, 7, 1));
        }
        let modelled = r.kind.is_modelled();
        let fields = if modelled {
            Fields::of(ev)
        } else {
            Fields::NONE
        };
        let words = if !modelled || self.generic {
            None
        } else {
            WordPlan::of(ev, &fields)
        };
        let slots = if words.is_some() || !modelled || self.generic {
            None
        } else {
            SlotPlan::of(ev, &fields)
        };
        let i = self.classes.len();
        if self.classes.capacity() == 0 {
            // Classes are large and met one by one: room for the usual number met (a kernel
            // trace's metadata has ~1,200, an analysis meets a hundred or two).
            self.classes.reserve(256);
        }
        self.classes.push(Class {
            resolved: r,
            fields,
            words,
            slots,
        });
        if self.tables.len() <= t {
            self.tables.resize_with(t + 1, Vec::new);
        }
        let s = &mut self.tables[t];
        if s.len() <= sc {
            s.resize_with(sc + 1, Vec::new);
        }
        let e = &mut s[sc];
        if e.len() <= ec {
            e.resize(ec + 1, UNRESOLVED);
        }
        e[ec] = i as u32;
        i as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_across_versions() {
        let mut s = SyscallNames::default();
        assert_eq!(classify("softirq_entry", &mut s).kind, Kind::SoftirqEntry);
        let r = classify("irq_softirq_entry", &mut s);
        assert_eq!(r.kind, Kind::SoftirqEntry);
        assert!(r.prefixed);
        assert_eq!(classify("kmem_mm_page_alloc", &mut s).kind, Kind::PageAlloc);
        assert_eq!(
            classify("timer_hrtimer_expire_exit", &mut s).kind,
            Kind::HrtimerExpireExit
        );
        assert_eq!(
            classify("net_if_receive_skb", &mut s).kind,
            Kind::NetifReceiveSkb
        );
        let Kind::SyscallEntry(a) = classify("sys_open", &mut s).kind else {
            panic!()
        };
        let Kind::SyscallEntry(b) = classify("syscall_entry_open", &mut s).kind else {
            panic!()
        };
        assert_eq!(a, b);
        assert_eq!(s.name(a), "open");
        assert_eq!(
            classify("exit_syscall", &mut s).kind,
            Kind::SyscallExit(None)
        );
        let Kind::SyscallExit(Some(c)) = classify("compat_syscall_exit_open", &mut s).kind else {
            panic!()
        };
        assert_eq!(c, a);
        assert_eq!(classify("sched_stat_runtime", &mut s).kind, Kind::Other);
    }

    #[test]
    fn fields_by_name() {
        for &x in F::ALL {
            assert_eq!(F::of_name(x.name()), Some(x), "{x:?}");
        }
        assert_eq!(F::of_name("_prev_tid"), None);
        assert_eq!(F::of_name(""), None);
    }

    /// `classify_unnumbered` gives `classify`'s kinds, system calls numbered 0, and names
    /// nothing.
    #[test]
    fn kinds_without_a_name_table() {
        let mut s = SyscallNames::default();
        let names = [
            "sched_switch",
            "irq_softirq_raise",
            "syscall_entry_openat",
            "compat_syscall_exit_read",
            "sys_close",
            "exit_syscall",
            "lttng_statedump_file_descriptor",
            "sched_stat_runtime",
        ];
        for name in names {
            let kind = match classify(name, &mut s).kind {
                Kind::SyscallEntry(_) => Kind::SyscallEntry(0),
                Kind::SyscallExit(Some(_)) => Kind::SyscallExit(Some(0)),
                k => k,
            };
            assert_eq!(classify_unnumbered(name).kind, kind, "{name}");
        }
        assert_eq!(s.names.len(), 3, "classify named openat, read and close");
    }

    /// The names other consumers than the state machine read have kinds of their own, which
    /// the state machine leaves alone.
    #[test]
    fn kinds_outside_the_state_machine() {
        let cases = [
            ("sched_ttwu", Kind::SchedTtwu),
            ("net_dev_queue", Kind::NetDevQueue),
            ("inet_sock_local_out", Kind::InetSockLocalOut),
            ("inet_sock_local_in", Kind::InetSockLocalIn),
            ("ipi_entry", Kind::IpiEntry),
            ("do_IRQ_return", Kind::DoIrqReturn),
            ("netif_receive_skb_internal_entry", Kind::PacketRxEntry),
            ("x86_irq_vectors_reschedule_entry", Kind::IrqVectorEntry),
            ("x86_irq_vectors_call_function_exit", Kind::IrqVectorExit),
            ("x86_irq_vectors_vector_raise", Kind::Other),
            ("x86_irq_vectors_not_local_timer_entry", Kind::Other),
            ("x86_irq_vectors_local_timer_entry", Kind::LocalTimerEntry),
            ("x86_irq_vectors_local_timer_exit", Kind::LocalTimerExit),
        ];
        for (name, kind) in cases {
            let k = classify_unnumbered(name).kind;
            assert_eq!(k, kind, "{name}");
            assert!(!k.is_modelled(), "{name}");
        }
        assert!(Kind::NetDevXmit.is_modelled());
        assert_eq!(Kind::NetDevXmit.packet_direction(), None);
        assert_eq!(
            classify_unnumbered("net_if_receive_skb")
                .kind
                .packet_direction(),
            Some(PacketDir::Recv)
        );
        assert_eq!(syscall_name("compat_syscall_exit_read"), Some("read"));
        assert_eq!(syscall_name("sys_open"), Some("open"));
        assert_eq!(syscall_name("exit_syscall"), None);
    }
}
