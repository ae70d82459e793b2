//! Conversion of ftrace records to lttng-modules 2.13 event classes and payloads.
//!
//! The event classes of [`kernel::lttng`] are used as they are (same ids and layouts); the
//! system calls that class set does not cover get generated classes
//! ([`kernel::lttng::syscalls`]), one entry/exit pair per system call of the table, with their
//! arguments typed from the `sys_enter_<name>/format` files. Everything here is pure: format
//! descriptions in, values out.

use crate::format::{EventFormat, FieldDesc, FormatError};
use ctf::ir::TraceClass;
use ctf::value::Value;
use kernel::lttng::ev;
use kernel::lttng::syscalls::{add_syscall_classes, fill, fill_with, SyscallPlan};
pub use kernel::lttng::syscalls::{
    SyscallArg, SyscallDef, SYSCALL_ENTRY_UNKNOWN, SYSCALL_EXIT_UNKNOWN,
};
use std::collections::HashMap;

/// The ftrace events the recorder knows, with their LTTng names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KnownEvent {
    /// lttng-modules event name.
    pub lttng: &'static str,
    /// tracefs system.
    pub system: &'static str,
    /// tracefs event name.
    pub event: &'static str,
    /// Selection group (`--events sched,irq,...`).
    pub group: &'static str,
    kind: Kind,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Switch,
    Wake(u64),
    Fork,
    Exec,
    Exit,
    IrqEntry,
    IrqExit,
    Softirq(u64),
    HrEntry,
    HrExit,
    BlockIssue,
    BlockComplete,
    PageAlloc,
    PageFree,
    SysEnter,
    SysExit,
    Net(u64),
    /// A dynamic probe of class id `.0`; `.1`: a return probe (`ip`, `parent_ip`).
    Probe(u64, bool),
}

impl Kind {
    /// The ftrace fields each kind reads, in the order the conversion uses them.
    fn fields(self) -> &'static [&'static str] {
        match self {
            Kind::Switch => &[
                "prev_comm",
                "prev_pid",
                "prev_prio",
                "prev_state",
                "next_comm",
                "next_pid",
                "next_prio",
            ],
            Kind::Wake(_) => &["comm", "pid", "prio", "target_cpu"],
            Kind::Fork => &["parent_comm", "parent_pid", "child_comm", "child_pid"],
            Kind::Exec => &["filename", "pid", "old_pid"],
            Kind::Exit => &["comm", "pid", "prio"],
            Kind::IrqEntry => &["irq", "name"],
            Kind::IrqExit => &["irq", "ret"],
            Kind::Softirq(_) => &["vec"],
            Kind::HrEntry => &["hrtimer", "now", "function"],
            Kind::HrExit => &["hrtimer"],
            Kind::BlockIssue => &["dev", "sector", "nr_sector", "bytes", "rwbs", "comm"],
            Kind::BlockComplete => &["dev", "sector", "nr_sector", "error", "rwbs"],
            Kind::PageAlloc => &["pfn", "order", "gfp_flags", "migratetype"],
            Kind::PageFree => &["pfn", "order"],
            Kind::SysEnter => &["id", "args"],
            Kind::SysExit => &["id", "ret"],
            Kind::Net(_) => &["skbaddr", "len", "name"],
            Kind::Probe(_, false) => &["__probe_ip"],
            Kind::Probe(_, true) => &["__probe_func", "__probe_ret_ip"],
        }
    }
}

const fn k(
    lttng: &'static str,
    system: &'static str,
    event: &'static str,
    group: &'static str,
    kind: Kind,
) -> KnownEvent {
    KnownEvent {
        lttng,
        system,
        event,
        group,
        kind,
    }
}

/// Every event the recorder can record.
pub(crate) const KNOWN: &[KnownEvent] = &[
    k(
        "sched_switch",
        "sched",
        "sched_switch",
        "sched",
        Kind::Switch,
    ),
    k(
        "sched_waking",
        "sched",
        "sched_waking",
        "sched",
        Kind::Wake(ev::SCHED_WAKING),
    ),
    k(
        "sched_wakeup",
        "sched",
        "sched_wakeup",
        "sched",
        Kind::Wake(ev::SCHED_WAKEUP),
    ),
    k(
        "sched_wakeup_new",
        "sched",
        "sched_wakeup_new",
        "sched",
        Kind::Wake(ev::SCHED_WAKEUP_NEW),
    ),
    k(
        "sched_process_fork",
        "sched",
        "sched_process_fork",
        "sched",
        Kind::Fork,
    ),
    k(
        "sched_process_exec",
        "sched",
        "sched_process_exec",
        "sched",
        Kind::Exec,
    ),
    k(
        "sched_process_exit",
        "sched",
        "sched_process_exit",
        "sched",
        Kind::Exit,
    ),
    k(
        "irq_handler_entry",
        "irq",
        "irq_handler_entry",
        "irq",
        Kind::IrqEntry,
    ),
    k(
        "irq_handler_exit",
        "irq",
        "irq_handler_exit",
        "irq",
        Kind::IrqExit,
    ),
    k(
        "irq_softirq_entry",
        "irq",
        "softirq_entry",
        "irq",
        Kind::Softirq(ev::SOFTIRQ_ENTRY),
    ),
    k(
        "irq_softirq_exit",
        "irq",
        "softirq_exit",
        "irq",
        Kind::Softirq(ev::SOFTIRQ_EXIT),
    ),
    k(
        "irq_softirq_raise",
        "irq",
        "softirq_raise",
        "irq",
        Kind::Softirq(ev::SOFTIRQ_RAISE),
    ),
    k(
        "timer_hrtimer_expire_entry",
        "timer",
        "hrtimer_expire_entry",
        "timer",
        Kind::HrEntry,
    ),
    k(
        "timer_hrtimer_expire_exit",
        "timer",
        "hrtimer_expire_exit",
        "timer",
        Kind::HrExit,
    ),
    k(
        "block_rq_issue",
        "block",
        "block_rq_issue",
        "block",
        Kind::BlockIssue,
    ),
    k(
        "block_rq_complete",
        "block",
        "block_rq_complete",
        "block",
        Kind::BlockComplete,
    ),
    k(
        "kmem_mm_page_alloc",
        "kmem",
        "mm_page_alloc",
        "kmem",
        Kind::PageAlloc,
    ),
    k(
        "kmem_mm_page_free",
        "kmem",
        "mm_page_free",
        "kmem",
        Kind::PageFree,
    ),
    k(
        "syscall_entry",
        "raw_syscalls",
        "sys_enter",
        "syscalls",
        Kind::SysEnter,
    ),
    k(
        "syscall_exit",
        "raw_syscalls",
        "sys_exit",
        "syscalls",
        Kind::SysExit,
    ),
    k(
        "net_dev_queue",
        "net",
        "net_dev_queue",
        "net",
        Kind::Net(ev::NET_OUT),
    ),
    k(
        "net_if_receive_skb",
        "net",
        "netif_receive_skb",
        "net",
        Kind::Net(ev::NET_IN),
    ),
];

/// The groups of `--events`.
pub(crate) const GROUPS: &[&str] = &["sched", "irq", "timer", "syscalls", "block", "kmem", "net"];

/// Groups recorded when `--events` is not given (kmem is left out: it is very frequent).
pub(crate) const DEFAULT_GROUPS: &[&str] = &["sched", "irq", "timer", "syscalls", "block", "net"];

/// Resolves an `--events` list (groups, LTTng names, ftrace `system:event` or event names) to
/// known events, without duplicates and in table order.
pub fn select_events(spec: &[String]) -> Result<Vec<KnownEvent>, crate::Error> {
    Ok(select(spec)?.events)
}

/// What an `--events` list selects.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Selection {
    /// The known events, in table order.
    pub events: Vec<KnownEvent>,
    /// When only some system calls are selected (`syscall:open*`): their numbers, sorted.
    /// `None`: all of them (when the syscall events are selected).
    pub syscalls: Option<Vec<u32>>,
}

/// Resolves an `--events` list: groups, LTTng names, ftrace `system:event` or event names,
/// each possibly a star-glob (`sched_*`, `sched:*wake*`), and `syscall:NAME` items selecting
/// system calls by name (globs too: `syscall:open*`).
pub fn select(spec: &[String]) -> Result<Selection, crate::Error> {
    let mut want = vec![false; KNOWN.len()];
    let mut all_syscalls = false;
    let mut named: Vec<u32> = Vec::new();
    for item in spec.iter().flat_map(|s| s.split(',')) {
        let item = item.trim();
        if item.is_empty() {
            continue;
        }
        if let Some(pat) = item.strip_prefix("syscall:") {
            named.extend(syscall_numbers(pat)?);
            continue;
        }
        let mut hit = false;
        for (i, e) in known_matching(item) {
            want[i] = true;
            hit = true;
            all_syscalls |= e.group == "syscalls";
        }
        if !hit {
            return Err(crate::Error::UnknownEvent(item.to_string()));
        }
    }
    if !named.is_empty() {
        for (i, e) in KNOWN.iter().enumerate() {
            want[i] |= e.group == "syscalls";
        }
    }
    named.sort_unstable();
    named.dedup();
    Ok(Selection {
        events: KNOWN
            .iter()
            .zip(want)
            .filter(|(_, w)| *w)
            .map(|(e, _)| *e)
            .collect(),
        syscalls: (!all_syscalls && !named.is_empty()).then_some(named),
    })
}

/// The known events an `--events` item names (`all`, a group, a name, `system:event`; globs
/// allowed), with their index in the table.
pub(crate) fn known_matching(
    item: &str,
) -> impl Iterator<Item = (usize, &'static KnownEvent)> + '_ {
    KNOWN.iter().enumerate().filter(move |(_, e)| {
        let sys_ev = format!("{}:{}", e.system, e.event);
        let m = |name: &str| crate::filter::star_glob(item, name);
        item == "all"
            || m(e.group)
            || m(e.lttng)
            || m(e.event)
            || m(&sys_ev)
            || (item.starts_with("syscall_") && e.group == "syscalls")
    })
}

/// The numbers of the system calls whose name (x86-64 table) matches a star-glob.
pub fn syscall_numbers(pattern: &str) -> Result<Vec<u32>, crate::Error> {
    let v: Vec<u32> = crate::syscall_table::X86_64
        .iter()
        .filter(|(_, name)| crate::filter::star_glob(pattern, name))
        .map(|(nr, _)| *nr)
        .collect();
    if v.is_empty() {
        return Err(crate::Error::UnknownSyscall(pattern.to_string()));
    }
    Ok(v)
}

/// Converts the `rwbs` text of the block events to the LTTng flag bits.
pub(crate) fn rwbs_flags(s: &[u8]) -> u64 {
    const W: u64 = 1;
    const D: u64 = 2;
    const R: u64 = 4;
    const RA: u64 = 8;
    const S: u64 = 32;
    const M: u64 = 64;
    const SECURE: u64 = 128;
    const FLUSH: u64 = 256;
    const FUA: u64 = 512;
    const PREFLUSH: u64 = 1024;
    let mut i = 0;
    let mut flags = 0;
    // A leading F followed by an operation letter is the pre-flush flag.
    if s.len() > 1 && s[0] == b'F' {
        flags |= PREFLUSH;
        i = 1;
    }
    match s.get(i) {
        Some(b'W') => flags |= W,
        Some(b'R') => flags |= R,
        Some(b'D') => {
            flags |= D;
            if s.get(i + 1) == Some(&b'E') {
                flags |= SECURE;
                i += 1;
            }
        }
        Some(b'F') => flags |= FLUSH,
        _ => {}
    }
    for c in s.iter().skip(i + 1) {
        match c {
            b'F' => flags |= FUA,
            b'A' => flags |= RA,
            b'S' => flags |= S,
            b'M' => flags |= M,
            _ => {}
        }
    }
    flags
}

/// The system call `name` numbered `nr`, its arguments from its `sys_enter_<name>` format.
pub fn syscall_def(nr: u32, name: &str, f: &EventFormat) -> SyscallDef {
    SyscallDef {
        nr,
        name: name.to_string(),
        args: f
            .own_fields()
            .map(|fd| SyscallArg {
                name: fd.name.clone(),
                ctype: fd.ctype.clone(),
            })
            .collect(),
    }
}

/// The tracefs names to try for a syscall of the numbering table (the kernel names some
/// `new*`, and `umount2` is `umount`).
pub(crate) fn tracefs_names(table_name: &str) -> Vec<String> {
    let mut v = vec![table_name.to_string(), format!("new{table_name}")];
    if table_name == "umount2" {
        v.push("umount".into());
    }
    v
}

/// Looks up the thread-group id of a thread the converter has not seen (e.g. in /proc).
pub(crate) type TgidLookup = Box<dyn FnMut(i32) -> Option<i32> + Send>;

/// Gives the user-space string of argument `arg` of the system call `nr` thread `tid` entered
/// at raw time `ts` (e.g. from the eBPF helper).
pub(crate) type UserStrings = Box<dyn FnMut(i32, i64, usize, u64) -> Option<Vec<u8>> + Send>;

struct Handler {
    kind: Kind,
    f: Vec<FieldDesc>,
}

/// Counters of a conversion.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ConvertStats {
    /// Records whose `common_type` is not an enabled event (e.g. from another instance user).
    pub unknown_type: u64,
    /// Records too short for their format.
    pub malformed: u64,
    /// System calls with no name in the table, recorded as `syscall_*_unknown`.
    pub unknown_syscalls: u64,
}

/// Converts ftrace records to LTTng event payloads.
pub struct Converter {
    handlers: Vec<Option<Handler>>,
    common_pid: FieldDesc,
    plans: HashMap<u32, SyscallPlan>,
    /// Entry arguments of syscalls in progress, per thread (for out-arguments at exit).
    pending: HashMap<i32, (i64, [u64; 6])>,
    tgids: HashMap<i32, i32>,
    lookup: Option<TgidLookup>,
    user: Option<UserStrings>,
    /// Raw time of the record being converted (for `user`).
    now: u64,
    ns_inum: u64,
    /// What the conversion met so far.
    pub stats: ConvertStats,
}

impl Converter {
    /// Builds the converter from the formats of the enabled events (`(known, format)`) and
    /// the syscall definitions, and adds the syscall classes to `tc`.
    pub fn new(
        tc: &mut TraceClass,
        events: &[(KnownEvent, EventFormat)],
        syscalls: &[SyscallDef],
    ) -> Result<Self, FormatError> {
        let mut handlers: Vec<Option<Handler>> = Vec::new();
        let mut common_pid = None;
        for (known, fmt) in events {
            let f = known
                .kind
                .fields()
                .iter()
                .map(|n| fmt.need(n).cloned())
                .collect::<Result<Vec<_>, _>>()?;
            common_pid = Some(fmt.need("common_pid")?.clone());
            let id = fmt.id as usize;
            if handlers.len() <= id {
                handlers.resize_with(id + 1, || None);
            }
            handlers[id] = Some(Handler {
                kind: known.kind,
                f,
            });
        }
        let plans = add_syscall_classes(tc, syscalls);
        Ok(Converter {
            handlers,
            common_pid: common_pid.unwrap_or(FieldDesc {
                name: "common_pid".into(),
                ctype: "int".into(),
                offset: 4,
                size: 4,
                signed: true,
                data_loc: false,
                array_len: None,
            }),
            plans,
            pending: HashMap::new(),
            tgids: HashMap::new(),
            lookup: None,
            user: None,
            now: 0,
            ns_inum: 0,
            stats: ConvertStats::default(),
        })
    }

    /// Sets how unknown thread-group ids are looked up.
    pub(crate) fn set_tgid_lookup(&mut self, f: TgidLookup) {
        self.lookup = Some(f);
    }

    /// Adds the event class of a dynamic probe (`--probe`, `--function`,
    /// `--userspace-probe`) to `tc`, in lttng-modules' kprobe layout (`ip`, and `parent_ip`
    /// for a return probe), with id `id`, converting the records of tracefs format `fmt`.
    pub fn add_probe(
        &mut self,
        tc: &mut TraceClass,
        fmt: &EventFormat,
        name: &str,
        id: u64,
        ret: bool,
    ) -> Result<(), FormatError> {
        let kind = Kind::Probe(id, ret);
        let f = kind
            .fields()
            .iter()
            .map(|n| fmt.need(n).cloned())
            .collect::<Result<Vec<_>, _>>()?;
        let slot = fmt.id as usize;
        if self.handlers.len() <= slot {
            self.handlers.resize_with(slot + 1, || None);
        }
        self.handlers[slot] = Some(Handler { kind, f });
        kernel::lttng::add_probe_class(tc, id, name, ret);
        Ok(())
    }

    /// Sets the raw time of the next record to convert (used to match the user-space strings
    /// of its system call).
    #[inline]
    pub(crate) fn set_time(&mut self, ts: u64) {
        self.now = ts;
    }

    /// Sets where the system calls' user-space string arguments come from.
    pub(crate) fn set_user_strings(&mut self, f: UserStrings) {
        self.user = Some(f);
    }

    /// Records a known thread → thread-group mapping (e.g. from the statedump).
    pub(crate) fn add_tgid(&mut self, tid: i32, tgid: i32) {
        self.tgids.insert(tid, tgid);
    }

    /// Sets the PID namespace inode number written in `sched_process_fork`.
    pub(crate) fn set_ns_inum(&mut self, inum: u64) {
        self.ns_inum = inum;
    }

    fn tgid(&mut self, tid: i32) -> i32 {
        if let Some(&t) = self.tgids.get(&tid) {
            return t;
        }
        let t = self.lookup.as_mut().and_then(|f| f(tid)).unwrap_or(tid);
        self.tgids.insert(tid, t);
        t
    }

    /// Converts one record: returns the event class id and fills `out` with the payload, or
    /// `None` when the record is not an enabled event (counted in [`ConvertStats`]).
    pub fn convert(&mut self, rec: &[u8], out: &mut Vec<Value>) -> Option<u64> {
        out.clear();
        let ty = u16::from_le_bytes([*rec.first()?, *rec.get(1)?]) as usize;
        let Some(Some(h)) = self.handlers.get(ty) else {
            self.stats.unknown_type += 1;
            return None;
        };
        let r = convert_with(h, rec, out);
        match r {
            Some(Conv::Done(id)) => Some(id),
            Some(Conv::Fork) => {
                // [parent_comm, parent_tid, parent_pid, ns, child_comm, child_tid, n, vtids,
                //  child_pid, ns]
                let ptid = out[1].as_int().unwrap_or(0) as i32;
                let ctid = out[5].as_int().unwrap_or(0) as i32;
                let ppid = self.tgid(ptid);
                // A new thread of an existing process is found by the lookup; otherwise the
                // child leads its own thread group.
                let cpid = self.tgid(ctid);
                out[2] = Value::I64(ppid as i64);
                out[3] = Value::U64(self.ns_inum);
                out[8] = Value::I64(cpid as i64);
                out[9] = Value::U64(self.ns_inum);
                Some(ev::SCHED_FORK)
            }
            Some(Conv::SysEnter(nr, args)) => {
                let tid = self.common_pid.int(rec).unwrap_or(0) as i32;
                Some(self.sys_enter(tid, nr, args, out))
            }
            Some(Conv::SysExit(nr, ret)) => {
                let tid = self.common_pid.int(rec).unwrap_or(0) as i32;
                Some(self.sys_exit(tid, nr, ret, out))
            }
            None => {
                self.stats.malformed += 1;
                None
            }
        }
    }

    fn sys_enter(&mut self, tid: i32, nr: i64, args: [u64; 6], out: &mut Vec<Value>) -> u64 {
        let Some(plan) = u32::try_from(nr).ok().and_then(|n| self.plans.get(&n)) else {
            self.stats.unknown_syscalls += 1;
            self.pending.insert(tid, (nr, args));
            out.push(Value::I64(nr));
            out.push(Value::Array(args.iter().map(|&a| Value::U64(a)).collect()));
            return SYSCALL_ENTRY_UNKNOWN;
        };
        match &mut self.user {
            Some(user) => {
                let now = self.now;
                fill_with(&plan.entry, 0, &args, &mut |i| user(tid, nr, i, now), out);
                if plan.entry_id == ev::SYS_CONNECT {
                    let arg = crate::sysargs::SOCKADDR_ARG | 1;
                    if let Some(a) = user(tid, nr, arg, now)
                        .as_deref()
                        .and_then(crate::sysargs::SockAddr::parse)
                    {
                        set_sockaddr(out, &a);
                    }
                }
            }
            None => fill(&plan.entry, 0, &args, out),
        }
        if plan.exit_needs_args {
            self.pending.insert(tid, (nr, args));
        }
        plan.entry_id
    }

    fn sys_exit(&mut self, tid: i32, nr: i64, ret: i64, out: &mut Vec<Value>) -> u64 {
        let saved = self
            .pending
            .remove(&tid)
            .filter(|(n, _)| *n == nr)
            .map(|(_, a)| a)
            .unwrap_or([0; 6]);
        let Some(plan) = u32::try_from(nr).ok().and_then(|n| self.plans.get(&n)) else {
            out.push(Value::I64(nr));
            out.push(Value::I64(ret));
            out.push(Value::Array(saved.iter().map(|&a| Value::U64(a)).collect()));
            return SYSCALL_EXIT_UNKNOWN;
        };
        fill(&plan.exit, ret, &saved, out);
        plan.exit_id
    }
}

/// Puts a socket address in a `syscall_entry_connect` payload, lttng-modules 2.13's layout
/// (kernel::lttng's class): `fd, uservaddr, addrlen, family, dport, _v4addr_length, v4addr,
/// _v6addr_length, v6addr`.
fn set_sockaddr(out: &mut [Value], a: &crate::sysargs::SockAddr) {
    let [_, _, _, family, dport, v4len, v4, v6len, v6] = out else {
        return;
    };
    *family = Value::U64(a.family as u64);
    *dport = Value::U64(a.port as u64);
    *v4len = Value::U64(a.v4.len() as u64);
    *v4 = Value::Array(a.v4.iter().map(|&b| Value::U64(b as u64)).collect());
    *v6len = Value::U64(a.v6.len() as u64);
    *v6 = Value::Array(a.v6.iter().map(|&g| Value::U64(g as u64)).collect());
}

enum Conv {
    Done(u64),
    Fork,
    SysEnter(i64, [u64; 6]),
    SysExit(i64, i64),
}

fn s(f: &FieldDesc, rec: &[u8]) -> Option<Value> {
    Some(Value::Str(f.str(rec)?.to_vec()))
}

fn i(f: &FieldDesc, rec: &[u8]) -> Option<Value> {
    Some(Value::I64(f.int(rec)?))
}

fn u(f: &FieldDesc, rec: &[u8]) -> Option<Value> {
    Some(Value::U64(f.uint(rec)?))
}

/// LTTng priorities are `prio - MAX_RT_PRIO`.
fn prio(f: &FieldDesc, rec: &[u8]) -> Option<Value> {
    Some(Value::I64(f.int(rec)? - 100))
}

fn convert_with(h: &Handler, rec: &[u8], out: &mut Vec<Value>) -> Option<Conv> {
    let f = &h.f;
    match h.kind {
        Kind::Switch => {
            out.extend([
                s(&f[0], rec)?,
                i(&f[1], rec)?,
                prio(&f[2], rec)?,
                i(&f[3], rec)?,
                s(&f[4], rec)?,
                i(&f[5], rec)?,
                prio(&f[6], rec)?,
            ]);
            Some(Conv::Done(ev::SCHED_SWITCH))
        }
        Kind::Wake(id) => {
            out.extend([
                s(&f[0], rec)?,
                i(&f[1], rec)?,
                prio(&f[2], rec)?,
                i(&f[3], rec)?,
            ]);
            Some(Conv::Done(id))
        }
        Kind::Fork => {
            let ctid = f[3].int(rec)?;
            out.extend([
                s(&f[0], rec)?,
                i(&f[1], rec)?,
                Value::I64(0),
                Value::U64(0),
                s(&f[2], rec)?,
                Value::I64(ctid),
                Value::U64(1),
                Value::Array(vec![Value::I64(ctid)]),
                Value::I64(0),
                Value::U64(0),
            ]);
            Some(Conv::Fork)
        }
        Kind::Exec => {
            out.extend([s(&f[0], rec)?, i(&f[1], rec)?, i(&f[2], rec)?]);
            Some(Conv::Done(ev::SCHED_EXEC))
        }
        Kind::Exit => {
            out.extend([s(&f[0], rec)?, i(&f[1], rec)?, prio(&f[2], rec)?]);
            Some(Conv::Done(ev::SCHED_EXIT))
        }
        Kind::IrqEntry => {
            out.extend([i(&f[0], rec)?, s(&f[1], rec)?]);
            Some(Conv::Done(ev::IRQ_ENTRY))
        }
        Kind::IrqExit => {
            out.extend([i(&f[0], rec)?, i(&f[1], rec)?]);
            Some(Conv::Done(ev::IRQ_EXIT))
        }
        Kind::Softirq(id) => {
            out.push(u(&f[0], rec)?);
            Some(Conv::Done(id))
        }
        Kind::HrEntry => {
            out.extend([u(&f[0], rec)?, i(&f[1], rec)?, u(&f[2], rec)?]);
            Some(Conv::Done(ev::HRTIMER_ENTRY))
        }
        Kind::HrExit => {
            out.push(u(&f[0], rec)?);
            Some(Conv::Done(ev::HRTIMER_EXIT))
        }
        Kind::BlockIssue => {
            let tid = crate::format::read_int(rec, 4, 4, true)?;
            out.extend([
                u(&f[0], rec)?,
                u(&f[1], rec)?,
                u(&f[2], rec)?,
                u(&f[3], rec)?,
                Value::I64(tid),
                Value::U64(rwbs_flags(f[4].str(rec)?)),
                s(&f[5], rec)?,
            ]);
            Some(Conv::Done(ev::BLOCK_ISSUE))
        }
        Kind::BlockComplete => {
            out.extend([
                u(&f[0], rec)?,
                u(&f[1], rec)?,
                u(&f[2], rec)?,
                i(&f[3], rec)?,
                Value::U64(rwbs_flags(f[4].str(rec)?)),
            ]);
            Some(Conv::Done(ev::BLOCK_COMPLETE))
        }
        Kind::PageAlloc => {
            // ftrace gives the pfn, not the `struct page` address: page is 0.
            out.extend([
                Value::U64(0),
                u(&f[0], rec)?,
                u(&f[1], rec)?,
                u(&f[2], rec)?,
                i(&f[3], rec)?,
            ]);
            Some(Conv::Done(ev::PAGE_ALLOC))
        }
        Kind::PageFree => {
            out.extend([Value::U64(0), u(&f[0], rec)?, u(&f[1], rec)?]);
            Some(Conv::Done(ev::PAGE_FREE))
        }
        Kind::SysEnter => {
            let nr = f[0].int(rec)?;
            let a = &f[1];
            let mut args = [0u64; 6];
            for (j, v) in args.iter_mut().enumerate() {
                *v = crate::format::read_int(rec, a.offset + 8 * j, 8, false)? as u64;
            }
            Some(Conv::SysEnter(nr, args))
        }
        Kind::SysExit => Some(Conv::SysExit(f[0].int(rec)?, f[1].int(rec)?)),
        Kind::Probe(id, false) => {
            out.push(u(&f[0], rec)?);
            Some(Conv::Done(id))
        }
        Kind::Probe(id, true) => {
            out.extend([u(&f[0], rec)?, u(&f[1], rec)?]);
            Some(Conv::Done(id))
        }
        Kind::Net(id) => {
            // The header is filled in by the recorder from the eBPF records, if any.
            let (t, h) = crate::netheader::unknown_header();
            out.extend([u(&f[0], rec)?, u(&f[1], rec)?, s(&f[2], rec)?, t, h]);
            Some(Conv::Done(id))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::parse_format;

    #[test]
    fn rwbs() {
        assert_eq!(rwbs_flags(b"W"), 1);
        assert_eq!(rwbs_flags(b"WS"), 1 | 32);
        assert_eq!(rwbs_flags(b"RA"), 4 | 8);
        assert_eq!(rwbs_flags(b"FWFS"), 1024 | 1 | 512 | 32);
        assert_eq!(rwbs_flags(b"F"), 256);
        assert_eq!(rwbs_flags(b"DE"), 2 | 128);
        assert_eq!(rwbs_flags(b"N"), 0);
        assert_eq!(rwbs_flags(b"RM"), 4 | 64);
    }

    #[test]
    fn selection() {
        let all = select_events(&["sched,irq".into()]).unwrap();
        assert!(all.iter().any(|e| e.lttng == "sched_switch"));
        assert!(all.iter().any(|e| e.lttng == "irq_softirq_raise"));
        assert!(!all.iter().any(|e| e.group == "syscalls"));
        let one = select_events(&[
            "sched:sched_waking".into(),
            "timer_hrtimer_expire_exit".into(),
        ])
        .unwrap();
        assert_eq!(one.len(), 2);
        assert!(select_events(&["nonsense".into()]).is_err());
        let sys = select_events(&["syscalls".into()]).unwrap();
        assert_eq!(sys.len(), 2);
    }

    pub fn fmt(name: &str, id: u16, fields: &[(&str, &str, usize, usize, bool)]) -> EventFormat {
        let mut t = format!(
            "name: {name}\nID: {id}\nformat:\n\
\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\
\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n\
\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n\
\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n"
        );
        for (ty, n, off, size, signed) in fields {
            t.push_str(&format!(
                "\tfield:{ty} {n};\toffset:{off};\tsize:{size};\tsigned:{};\n",
                *signed as u8
            ));
        }
        t.push_str("\nprint fmt: \"\"\n");
        parse_format(&t).unwrap()
    }

    fn known(lttng: &str) -> KnownEvent {
        *KNOWN.iter().find(|e| e.lttng == lttng).unwrap()
    }

    fn tc() -> TraceClass {
        let h = kernel::lttng::HostInfo {
            hostname: "h".into(),
            trace_uuid: [1; 16],
            clock_uuid: [2; 16],
            clock_offset_ns: 0,
            creation: "x".into(),
            trace_name: "t".into(),
            kernel_release: "6".into(),
        };
        kernel::lttng::trace_class(
            &h,
            kernel::lttng::NetLayout::NetworkHeader,
            ctf::writer::EventHeaderKind::Compact,
        )
    }

    fn rec(ty: u16, pid: i32, body: &[u8]) -> Vec<u8> {
        let mut r = ty.to_le_bytes().to_vec();
        r.extend_from_slice(&[0, 0]);
        r.extend_from_slice(&pid.to_le_bytes());
        r.extend_from_slice(body);
        r
    }

    #[test]
    fn converts_switch_and_syscalls() {
        let switch = fmt(
            "sched_switch",
            10,
            &[
                ("char", "prev_comm[16]", 8, 16, false),
                ("pid_t", "prev_pid", 24, 4, true),
                ("int", "prev_prio", 28, 4, true),
                ("long", "prev_state", 32, 8, true),
                ("char", "next_comm[16]", 40, 16, false),
                ("pid_t", "next_pid", 56, 4, true),
                ("int", "next_prio", 60, 4, true),
            ],
        );
        let enter = fmt(
            "sys_enter",
            11,
            &[
                ("long", "id", 8, 8, true),
                ("unsigned long", "args[6]", 16, 48, false),
            ],
        );
        let exit = fmt(
            "sys_exit",
            12,
            &[("long", "id", 8, 8, true), ("long", "ret", 16, 8, true)],
        );
        let read_fmt = fmt(
            "sys_enter_read",
            99,
            &[
                ("unsigned int", "fd", 16, 8, false),
                ("char *", "buf", 24, 8, false),
                ("size_t", "count", 32, 8, false),
            ],
        );
        let getpid_fmt = fmt("sys_enter_getpid", 98, &[]);
        let defs = vec![
            syscall_def(0, "read", &read_fmt),
            syscall_def(39, "getpid", &getpid_fmt),
        ];
        let mut class = tc();
        let mut c = Converter::new(
            &mut class,
            &[
                (known("sched_switch"), switch),
                (known("syscall_entry"), enter),
                (known("syscall_exit"), exit),
            ],
            &defs,
        )
        .unwrap();
        let names: HashMap<u64, String> = class.streams[&0]
            .events
            .values()
            .map(|e| (e.id, e.name.clone()))
            .collect();
        let mut out = Vec::new();

        let mut body = vec![0u8; 56];
        body[0..4].copy_from_slice(b"bash");
        body[16..20].copy_from_slice(&42i32.to_le_bytes());
        body[20..24].copy_from_slice(&120i32.to_le_bytes());
        body[24..32].copy_from_slice(&1i64.to_le_bytes());
        body[32..39].copy_from_slice(b"swapper");
        body[48..52].copy_from_slice(&0i32.to_le_bytes());
        body[52..56].copy_from_slice(&120i32.to_le_bytes());
        let id = c.convert(&rec(10, 42, &body), &mut out).unwrap();
        assert_eq!(id, ev::SCHED_SWITCH);
        assert_eq!(out[0], Value::str("bash"));
        assert_eq!(out[1], Value::I64(42));
        assert_eq!(out[2], Value::I64(20));
        assert_eq!(out[4], Value::str("swapper"));

        // read(3, 0x1000, 64) → entry {fd, count}, exit {ret, buf}.
        let mut body = vec![0u8; 56];
        body[0..8].copy_from_slice(&0i64.to_le_bytes());
        body[8..16].copy_from_slice(&3u64.to_le_bytes());
        body[16..24].copy_from_slice(&0x1000u64.to_le_bytes());
        body[24..32].copy_from_slice(&64u64.to_le_bytes());
        let id = c.convert(&rec(11, 7, &body), &mut out).unwrap();
        assert_eq!(names[&id], "syscall_entry_read");
        assert_eq!(out, vec![Value::U64(3), Value::U64(64)]);
        let mut body = vec![0u8; 16];
        body[8..16].copy_from_slice(&12i64.to_le_bytes());
        let id = c.convert(&rec(12, 7, &body), &mut out).unwrap();
        assert_eq!(names[&id], "syscall_exit_read");
        assert_eq!(out, vec![Value::I64(12), Value::U64(0x1000)]);

        // getpid (generated class) and an unknown number.
        let mut body = vec![0u8; 56];
        body[0..8].copy_from_slice(&39i64.to_le_bytes());
        let id = c.convert(&rec(11, 7, &body), &mut out).unwrap();
        assert_eq!(names[&id], "syscall_entry_getpid");
        assert!(out.is_empty());
        body[0..8].copy_from_slice(&999i64.to_le_bytes());
        let id = c.convert(&rec(11, 7, &body), &mut out).unwrap();
        assert_eq!(id, SYSCALL_ENTRY_UNKNOWN);
        assert_eq!(out[0], Value::I64(999));
        assert_eq!(c.stats.unknown_syscalls, 1);

        // Not an enabled event; a truncated record.
        assert_eq!(c.convert(&rec(500, 1, &[]), &mut out), None);
        assert_eq!(c.convert(&rec(10, 1, &[0; 10]), &mut out), None);
        assert_eq!(c.stats.unknown_type, 1);
        assert_eq!(c.stats.malformed, 1);
    }

    #[test]
    fn converts_fork_with_tgids() {
        let fork = fmt(
            "sched_process_fork",
            20,
            &[
                ("__data_loc char[]", "parent_comm", 8, 4, false),
                ("pid_t", "parent_pid", 12, 4, true),
                ("__data_loc char[]", "child_comm", 16, 4, false),
                ("pid_t", "child_pid", 20, 4, true),
            ],
        );
        let mut class = tc();
        let mut c =
            Converter::new(&mut class, &[(known("sched_process_fork"), fork)], &[]).unwrap();
        c.add_tgid(100, 90);
        c.set_tgid_lookup(Box::new(|tid| (tid == 101).then_some(90)));
        c.set_ns_inum(4026531836);
        let mut body = vec![0u8; 24];
        // Record offsets count from the record start (8 bytes of common fields before body).
        body[0..4].copy_from_slice(&((3u32 << 16) | 24).to_le_bytes());
        body[4..8].copy_from_slice(&100i32.to_le_bytes());
        body[8..12].copy_from_slice(&((3u32 << 16) | 28).to_le_bytes());
        body[12..16].copy_from_slice(&101i32.to_le_bytes());
        body[16..19].copy_from_slice(b"sh\0");
        body[20..23].copy_from_slice(b"sh\0");
        let mut out = Vec::new();
        let id = c.convert(&rec(20, 100, &body), &mut out).unwrap();
        assert_eq!(id, ev::SCHED_FORK);
        assert_eq!(out[0], Value::str("sh"));
        assert_eq!(out[1], Value::I64(100));
        assert_eq!(out[2], Value::I64(90));
        assert_eq!(out[5], Value::I64(101));
        assert_eq!(out[8], Value::I64(90));
        assert_eq!(out[9], Value::U64(4026531836));
    }

    #[test]
    fn converts_net_events_without_header() {
        let f = |name: &str, id| {
            fmt(
                name,
                id,
                &[
                    ("void *", "skbaddr", 8, 8, false),
                    ("unsigned int", "len", 16, 4, false),
                    ("__data_loc char[]", "name", 20, 4, false),
                ],
            )
        };
        let mut class = tc();
        let mut c = Converter::new(
            &mut class,
            &[
                (known("net_dev_queue"), f("net_dev_queue", 30)),
                (known("net_if_receive_skb"), f("netif_receive_skb", 31)),
            ],
            &[],
        )
        .unwrap();
        let mut body = vec![0u8; 24];
        body[0..8].copy_from_slice(&0xffff_8881_0000_1000u64.to_le_bytes());
        body[8..12].copy_from_slice(&74u32.to_le_bytes());
        body[12..16].copy_from_slice(&((4u32 << 16) | 24).to_le_bytes());
        body[16..19].copy_from_slice(b"lo\0");
        let mut out = Vec::new();
        assert_eq!(c.convert(&rec(31, 0, &body), &mut out), Some(ev::NET_IN));
        assert_eq!(c.convert(&rec(30, 0, &body), &mut out), Some(ev::NET_OUT));
        assert_eq!(out[0], Value::U64(0xffff_8881_0000_1000));
        assert_eq!(out[1], Value::U64(74));
        assert_eq!(out[2], Value::str("lo"));
        let (t, h) = crate::netheader::unknown_header();
        assert_eq!((&out[3], &out[4]), (&t, &h));
        assert!(select_events(&["net".into()]).unwrap().len() == 2);
    }
}
