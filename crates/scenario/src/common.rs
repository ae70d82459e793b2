//! Tasks and payload builders shared by the generators.

use ctf::value::Value;
use kernel::lttng::ev;

/// A kernel task (thread).
#[derive(Debug, Clone, PartialEq)]
pub struct Task {
    pub tid: i32,
    pub pid: i32,
    pub ppid: i32,
    pub comm: String,
    /// LTTng priority (kernel prio − 100).
    pub prio: i32,
}

impl Task {
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

/// `prev_state` values as lttng-modules 2.13 reports them on recent kernels.
pub const STATE_RUNNING: i64 = 0;
pub const STATE_INTERRUPTIBLE: i64 = 1;
pub const STATE_UNINTERRUPTIBLE: i64 = 2;
/// Preempted while runnable (`TASK_REPORT_MAX`).
pub const STATE_PREEMPTED: i64 = 0x100;

/// Softirq vectors.
pub const SOFTIRQ_TIMER: u64 = 1;
pub const SOFTIRQ_NET_TX: u64 = 2;
pub const SOFTIRQ_NET_RX: u64 = 3;
pub const SOFTIRQ_BLOCK: u64 = 4;
pub const SOFTIRQ_RCU: u64 = 9;

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

pub fn wake(t: &Task, target_cpu: u32) -> Vec<Value> {
    vec![
        Value::str(&t.comm),
        Value::I64(t.tid as i64),
        Value::I64(t.prio as i64),
        Value::I64(target_cpu as i64),
    ]
}

pub fn irq_entry(irq: i32, name: &str) -> Vec<Value> {
    vec![Value::I64(irq as i64), Value::str(name)]
}

pub fn irq_exit(irq: i32) -> Vec<Value> {
    vec![Value::I64(irq as i64), Value::I64(1)]
}

pub fn vec1(v: u64) -> Vec<Value> {
    vec![Value::U64(v)]
}

pub fn ret(r: i64) -> Vec<Value> {
    vec![Value::I64(r)]
}

/// `syscall_exit_epoll_wait` returning `fds` ready file descriptors (EPOLLIN).
pub fn epoll_exit(fds: &[u32]) -> Vec<Value> {
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

pub fn hrtimer_entry(timer: u64, now: i64, func: u64) -> Vec<Value> {
    vec![Value::U64(timer), Value::I64(now), Value::U64(func)]
}

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

pub fn block_complete(dev: u32, sector: u64, nr: u32, write: bool) -> Vec<Value> {
    vec![
        Value::U64(dev as u64),
        Value::U64(sector),
        Value::U64(nr as u64),
        Value::I64(0),
        Value::U64(if write { 1 } else { 4 }),
    ]
}

pub fn page(id: u64, pfn: u64, alloc: bool) -> (u64, Vec<Value>) {
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

pub fn read_exit(r: i64, buf: u64) -> Vec<Value> {
    vec![Value::I64(r), Value::U64(buf)]
}

pub fn write_entry(fd: u32, buf: u64, count: u64) -> Vec<Value> {
    vec![Value::U64(fd as u64), Value::U64(buf), Value::U64(count)]
}

pub fn sendto_entry(fd: i32, buf: u64, len: u64) -> Vec<Value> {
    vec![
        Value::I64(fd as i64),
        Value::U64(buf),
        Value::U64(len),
        Value::U64(0x40),
        Value::U64(0),
        Value::I64(0),
    ]
}

pub fn recvfrom_entry(fd: i32, size: u64) -> Vec<Value> {
    vec![
        Value::I64(fd as i64),
        Value::U64(size),
        Value::U64(0),
        Value::U64(0),
    ]
}

pub fn recvfrom_exit(r: i64, buf: u64) -> Vec<Value> {
    vec![Value::I64(r), Value::U64(buf), Value::U64(0), Value::U64(0)]
}

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

pub fn futex_exit(r: i64, uaddr: u64) -> Vec<Value> {
    vec![Value::I64(r), Value::U64(uaddr), Value::U64(0)]
}

pub fn epoll_entry(epfd: i32, timeout: i32) -> Vec<Value> {
    vec![
        Value::I64(epfd as i64),
        Value::I64(64),
        Value::I64(timeout as i64),
    ]
}

pub fn openat_entry(path: &str) -> Vec<Value> {
    vec![
        Value::I64(-100),
        Value::str(path),
        Value::I64(0o2000000),
        Value::U64(0),
    ]
}
