//! Tasks and payload builders shared by the generators.

use ctf::value::Value;
use kernel::lttng::ev;

/// A kernel task (thread).
#[derive(Debug, Clone, PartialEq)]
pub struct Task {
    /// Thread id.
    pub tid: i32,
    /// Process id.
    pub pid: i32,
    /// Parent process id.
    pub ppid: i32,
    /// Command name.
    pub comm: String,
    /// LTTng priority (kernel prio − 100).
    pub prio: i32,
}

impl Task {
    /// A thread of process `pid`, child of init, at the default priority.
    pub fn new(tid: i32, pid: i32, comm: &str) -> Task {
        Task {
            tid,
            pid,
            ppid: 1,
            comm: comm.to_string(),
            prio: 20,
        }
    }

    /// The idle task of a CPU.
    pub fn swapper(cpu: u32) -> Task {
        Task {
            tid: 0,
            pid: 0,
            ppid: 0,
            comm: format!("swapper/{cpu}"),
            prio: 20,
        }
    }
}

// `prev_state` values as lttng-modules 2.13 reports them on recent kernels.
pub(crate) const STATE_RUNNING: i64 = 0;
pub(crate) const STATE_INTERRUPTIBLE: i64 = 1;
pub(crate) const STATE_UNINTERRUPTIBLE: i64 = 2;
/// Preempted while runnable (`TASK_REPORT_MAX`).
pub(crate) const STATE_PREEMPTED: i64 = 0x100;

// Softirq vectors.
pub(crate) const SOFTIRQ_TIMER: u64 = 1;
pub(crate) const SOFTIRQ_NET_RX: u64 = 3;

/// `sched_switch` from `prev` (left in `state`) to `next`.
pub fn switch(prev: &Task, state: i64, next: &Task) -> Vec<Value> {
    vec![
        Value::str(&prev.comm),
        Value::I64(prev.tid as i64),
        Value::I64(prev.prio as i64),
        Value::I64(state),
        Value::str(&next.comm),
        Value::I64(next.tid as i64),
        Value::I64(next.prio as i64),
    ]
}

/// `sched_waking`/`sched_wakeup` of `t`, to run on `target_cpu`.
pub fn wake(t: &Task, target_cpu: u32) -> Vec<Value> {
    vec![
        Value::str(&t.comm),
        Value::I64(t.tid as i64),
        Value::I64(t.prio as i64),
        Value::I64(target_cpu as i64),
    ]
}

/// `irq_handler_entry` of IRQ `irq` (handler `name`).
pub fn irq_entry(irq: i32, name: &str) -> Vec<Value> {
    vec![Value::I64(irq as i64), Value::str(name)]
}

/// `irq_handler_exit` of IRQ `irq`, handled.
pub fn irq_exit(irq: i32) -> Vec<Value> {
    vec![Value::I64(irq as i64), Value::I64(1)]
}

/// A payload of one unsigned value (a softirq's `vec`, a timer's address…).
pub fn vec1(v: u64) -> Vec<Value> {
    vec![Value::U64(v)]
}

/// A system call exit with only its return value.
pub fn ret(r: i64) -> Vec<Value> {
    vec![Value::I64(r)]
}

/// `syscall_exit_epoll_wait` returning `fds` ready file descriptors (EPOLLIN).
pub(crate) fn epoll_exit(fds: &[u32]) -> Vec<Value> {
    vec![
        Value::I64(fds.len() as i64),
        Value::U64(fds.len() as u64),
        Value::U64(0),
        Value::Array(
            fds.iter()
                .map(|&fd| {
                    Value::Struct(vec![
                        Value::Struct(vec![Value::U64(fd as u64), Value::U64(fd as u64)]),
                        Value::U64(1),
                        Value::Struct(vec![
                            Value::U64(1),
                            Value::U64(0),
                            Value::U64(0),
                            Value::U64(0),
                            Value::U64(0),
                        ]),
                    ])
                })
                .collect(),
        ),
    ]
}

/// `hrtimer_expire_entry`.
pub(crate) fn hrtimer_entry(timer: u64, now: i64, func: u64) -> Vec<Value> {
    vec![Value::U64(timer), Value::I64(now), Value::U64(func)]
}

/// `lttng_statedump_process_state` of `t`, last on `cpu` (swapper: kernel thread, idle).
pub fn statedump_process(t: &Task, cpu: u32) -> Vec<Value> {
    vec![
        Value::I64(t.tid as i64),
        Value::I64(t.pid as i64),
        Value::I64(t.ppid as i64),
        Value::str(&t.comm),
        Value::I64(0),
        Value::I64(if t.tid == 0 { 1 } else { 0 }),
        Value::I64(0),
        Value::I64(if t.tid == 0 { 5 } else { 2 }),
        Value::U64(cpu as u64),
        Value::U64(0xffff_8880_0000_0000 | ((t.pid as u64) << 12)),
    ]
}

/// `lttng_statedump_file_descriptor`: `t`'s process has `fd` open on `name`.
pub fn statedump_fd(t: &Task, fd: i32, name: &str) -> Vec<Value> {
    vec![
        Value::U64(0xffff_8880_0000_0000 | ((t.pid as u64) << 12)),
        Value::I64(fd as i64),
        Value::U64(0o2),
        Value::U64(0x1f),
        Value::str(name),
        Value::I64(t.pid as i64),
    ]
}

/// `block_rq_issue` of `nr` sectors at `sector` of `dev`, by `t`.
pub fn block_issue(dev: u32, sector: u64, nr: u32, write: bool, t: &Task) -> Vec<Value> {
    vec![
        Value::U64(dev as u64),
        Value::U64(sector),
        Value::U64(nr as u64),
        Value::U64(nr as u64 * 512),
        Value::I64(t.tid as i64),
        Value::U64(if write { 1 } else { 4 }),
        Value::str(&t.comm),
    ]
}

/// `block_rq_complete` of the request with the same device and sector.
pub fn block_complete(dev: u32, sector: u64, nr: u32, write: bool) -> Vec<Value> {
    vec![
        Value::U64(dev as u64),
        Value::U64(sector),
        Value::U64(nr as u64),
        Value::I64(0),
        Value::U64(if write { 1 } else { 4 }),
    ]
}

/// A page allocation (event `id`, `mm_page_alloc`) or free (`mm_page_free`) of `pfn`: the event
/// id and payload.
pub(crate) fn page(id: u64, pfn: u64, alloc: bool) -> (u64, Vec<Value>) {
    let pageaddr = 0xffff_ea00_0000_0000 | (pfn << 6);
    if alloc {
        (
            id,
            vec![
                Value::U64(pageaddr),
                Value::U64(pfn),
                Value::U64(0),
                Value::U64(0x100cca),
                Value::I64(1),
            ],
        )
    } else {
        (
            ev::PAGE_FREE,
            vec![Value::U64(pageaddr), Value::U64(pfn), Value::U64(0)],
        )
    }
}

/// `syscall_entry_read`.
pub fn read_entry(fd: u32, count: u64) -> Vec<Value> {
    vec![Value::U64(fd as u64), Value::U64(count)]
}

/// `syscall_exit_read`.
pub fn read_exit(r: i64, buf: u64) -> Vec<Value> {
    vec![Value::I64(r), Value::U64(buf)]
}

/// `syscall_entry_write`.
pub fn write_entry(fd: u32, buf: u64, count: u64) -> Vec<Value> {
    vec![Value::U64(fd as u64), Value::U64(buf), Value::U64(count)]
}

/// `syscall_entry_sendto` (`MSG_DONTWAIT`, no address).
pub(crate) fn sendto_entry(fd: i32, buf: u64, len: u64) -> Vec<Value> {
    vec![
        Value::I64(fd as i64),
        Value::U64(buf),
        Value::U64(len),
        Value::U64(0x40),
        Value::U64(0),
        Value::I64(0),
    ]
}

/// `syscall_entry_recvfrom`, no address.
pub(crate) fn recvfrom_entry(fd: i32, size: u64) -> Vec<Value> {
    vec![
        Value::I64(fd as i64),
        Value::U64(size),
        Value::U64(0),
        Value::U64(0),
    ]
}

/// `syscall_exit_recvfrom`.
pub(crate) fn recvfrom_exit(r: i64, buf: u64) -> Vec<Value> {
    vec![Value::I64(r), Value::U64(buf), Value::U64(0), Value::U64(0)]
}

/// `syscall_entry_futex`.
pub fn futex_entry(uaddr: u64, op: i32, val: u32) -> Vec<Value> {
    vec![
        Value::U64(uaddr),
        Value::I64(op as i64),
        Value::U64(val as u64),
        Value::U64(0),
        Value::U64(0),
        Value::U64(0),
    ]
}

/// `syscall_exit_futex`.
pub fn futex_exit(r: i64, uaddr: u64) -> Vec<Value> {
    vec![Value::I64(r), Value::U64(uaddr), Value::U64(0)]
}

/// `syscall_entry_epoll_wait` (64 events at most).
pub(crate) fn epoll_entry(epfd: i32, timeout: i32) -> Vec<Value> {
    vec![
        Value::I64(epfd as i64),
        Value::I64(64),
        Value::I64(timeout as i64),
    ]
}

/// `syscall_entry_openat` of `path` relative to the working directory (`O_CLOEXEC`).
pub fn openat_entry(path: &str) -> Vec<Value> {
    vec![
        Value::I64(-100),
        Value::str(path),
        Value::I64(0o2000000),
        Value::U64(0),
    ]
}
