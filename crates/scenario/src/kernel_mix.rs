//! `kernel-mix`: one large single-host trace with a realistic event mix, streamed to disk.
//!
//! Each CPU runs a handful of pinned tasks. The generator emits coherent bursts: system calls
//! (entry, optional page allocations, exit — or blocking with the exit emitted when the task
//! runs again), scheduling (waking, wakeup, switch), hard and soft interrupts (network receive,
//! timers, disk completions) and block requests. Roughly: syscalls 50 %, scheduling 30 %,
//! interrupts 12 %, memory 5 %, block 3 %.

use crate::common::*;
use crate::rng::Rng;
use ctf::value::Value;
use ctf::writer::{EventHeaderKind, TraceStats, TraceWriter, WriteError, WriterOptions};
use kernel::lttng::{ev, trace_class, HostInfo, NetLayout};
use std::path::Path;

/// Parameters of `kernel-mix`.
#[derive(Debug, Clone)]
pub struct KernelMixParams {
    /// Seed of everything random: the same seed writes the same trace.
    pub seed: u64,
    /// Events to write.
    pub events: u64,
    /// CPUs (one stream each).
    pub cpus: u32,
    /// `hostname` of the trace environment.
    pub hostname: String,
    /// Layout of the net events' payloads.
    pub net: NetLayout,
    /// Event header of the streams (compact or large).
    pub header: EventHeaderKind,
    /// Bytes per packet.
    pub packet_size: usize,
    /// Make the order of analysis rows matter (off: the trace is unchanged): threads with
    /// mixed-case names that tie when lower-cased, renamed between their runs; priorities
    /// that change between runs and while a thread runs (real-time ones included); times on a
    /// coarse grid, so that durations, latencies and counts often tie; and, first on CPU 0,
    /// three threads that each run once for exactly the same time.
    pub order_mix: bool,
}

impl Default for KernelMixParams {
    fn default() -> Self {
        KernelMixParams {
            seed: 1,
            events: 1_000_000,
            cpus: 4,
            hostname: "mixhost".into(),
            net: NetLayout::NetworkHeader,
            header: EventHeaderKind::Compact,
            packet_size: 256 * 1024,
            order_mix: false,
        }
    }
}

struct TaskState {
    task: Task,
    /// Exit event to write when the task runs again (it blocked inside a system call).
    pending_exit: Option<(u64, Vec<Value>)>,
}

struct CpuState {
    tasks: Vec<TaskState>,
    /// Index of the running task, None for the idle task.
    cur: Option<usize>,
    swapper: Task,
    t: u64,
    /// Block requests in flight: (sector, nr, write).
    inflight: Vec<(u64, u32, bool)>,
}

const NAMES: &[&str] = &[
    "nginx",
    "postgres",
    "java",
    "python3",
    "sshd",
    "bash",
    "chrome",
    "Xorg",
    "redis-server",
    "node",
    "systemd-journal",
    "containerd",
    "dockerd",
    "cc1",
    "make",
    "rustc",
];

/// `order_mix` names: equal when lower-cased in pairs, and ordered differently by bytes, by
/// lower-case text and by thread id.
const ORDER_NAMES: &[&str] = &[
    "Alpha",
    "alpha",
    "BETA",
    "beta",
    "Zed",
    "zed",
    "_init",
    "Mixed.Case",
    "mixed.case",
];

/// `order_mix` priorities (LTTng's: kernel priority − 100): normal ones around the default
/// 20 and real-time ones below 0.
const ORDER_PRIOS: &[i32] = &[20, 20, 0, 39, -2, -51, -100];

/// `order_mix`: the threads that run once each, for the same time, on CPU 0 (names equal when
/// lower-cased).
const TIE_TASKS: &[(i32, &str)] = &[(990, "tie-b"), (991, "Tie-A"), (992, "TIE-b")];

const FILES: &[&str] = &[
    "/etc/ld.so.cache",
    "/usr/lib/x86_64-linux-gnu/libc.so.6",
    "/proc/self/stat",
    "/var/log/syslog",
    "/home/user/data.bin",
    "/tmp/tmp.XyZ12",
];

/// Writes the trace to `dir` and returns its totals.
pub fn generate(dir: &Path, p: &KernelMixParams) -> Result<TraceStats, WriteError> {
    let mut rng = Rng::new(p.seed ^ 0x6b65_726e_656c);
    let start_epoch_ns: i128 = 1_709_600_000_000_000_000 + rng.range(0, 86_400_000_000_000) as i128;
    let uptime_ns = rng.range(600_000_000_000, 90_000_000_000_000);
    let host = HostInfo {
        hostname: p.hostname.clone(),
        trace_uuid: rng.uuid(),
        clock_uuid: rng.uuid(),
        clock_offset_ns: start_epoch_ns - uptime_ns as i128,
        creation: "20240305T101500+0000".into(),
        trace_name: "kernel-mix".into(),
        kernel_release: "6.1.0-18-amd64".into(),
    };
    let tc = trace_class(&host, p.net, p.header);
    let opts = WriterOptions {
        packet_size: p.packet_size,
        ..Default::default()
    };
    let mut w = TraceWriter::create(dir, &tc, p.cpus, &opts)?;
    w.set_session_start(uptime_ns);
    // The order_mix choices come from a generator of their own: without them the main one
    // draws the same numbers, and the trace is the same as before the option existed.
    let mut order = p.order_mix.then(|| Rng::new(p.seed ^ 0x6f_7264_6572));
    let ties: Vec<Task> = if p.order_mix {
        TIE_TASKS
            .iter()
            .map(|&(tid, name)| Task::new(tid, tid, name))
            .collect()
    } else {
        Vec::new()
    };

    let mut next_tid = 1000;
    let mut cpus: Vec<CpuState> = (0..p.cpus)
        .map(|c| {
            let mut tasks = Vec::new();
            for k in 0..5 {
                let name = if k == 4 {
                    format!("kworker/{c}:1")
                } else {
                    rng.pick(NAMES).to_string()
                };
                let name = match order.as_mut() {
                    Some(o) if k < 4 => o.pick(ORDER_NAMES).to_string(),
                    _ => name,
                };
                next_tid += rng.range(1, 40) as i32;
                tasks.push(TaskState {
                    task: Task::new(next_tid, next_tid - (k % 2), &name),
                    pending_exit: None,
                });
            }
            CpuState {
                tasks,
                cur: None,
                swapper: Task::swapper(c),
                t: uptime_ns + rng.range(0, 10_000),
                inflight: Vec::new(),
            }
        })
        .collect();

    // Statedump on CPU 0.
    {
        let c0 = &mut cpus[0];
        let t = c0.t;
        w.write_event(0, ev::STATEDUMP_START, t, &[])?;
        let all: Vec<(Task, u32)> = (0..p.cpus)
            .flat_map(|c| {
                let mut v = vec![(Task::swapper(c), c)];
                v.extend(cpus[c as usize].tasks.iter().map(|ts| (ts.task.clone(), c)));
                if c == 0 {
                    v.extend(ties.iter().map(|t| (t.clone(), 0)));
                }
                v
            })
            .collect();
        let mut t = t;
        for (task, c) in &all {
            t += 900;
            w.write_event(0, ev::STATEDUMP_PROCESS, t, &statedump_process(task, *c))?;
            // lttng_statedump_file_descriptor is declared but not emitted: its 2.13 layout
            // (file_table_address instead of pid) makes lttng-analyses fail.
        }
        t += 500;
        w.write_event(
            0,
            ev::STATEDUMP_BLOCK,
            t,
            &[Value::U64(8388608), Value::str("nvme0n1")],
        )?;
        t += 500;
        w.write_event(0, ev::STATEDUMP_END, t, &[])?;
        // Each runs 1 µs, woken 500 ns before.
        let swapper = Task::swapper(0);
        for task in &ties {
            t += 500;
            w.write_event(0, ev::SCHED_WAKING, t, &wake(task, 0))?;
            w.write_event(0, ev::SCHED_WAKEUP, t, &wake(task, 0))?;
            t += 500;
            let sw = switch(&swapper, STATE_RUNNING, task);
            w.write_event(0, ev::SCHED_SWITCH, t, &sw)?;
            t += 1000;
            let sw = switch(task, STATE_INTERRUPTIBLE, &swapper);
            w.write_event(0, ev::SCHED_SWITCH, t, &sw)?;
        }
        cpus[0].t = t;
    }
    if p.order_mix {
        // Each CPU's times on a grid of 250 ns of its own (the CPU number is the remainder):
        // events of different CPUs (fewer than 250) are never simultaneous, which readers may
        // order either way.
        for (i, c) in cpus.iter_mut().enumerate() {
            c.t = c.t / 250 * 250 + 250 + i as u64;
        }
    }

    let mut written: u64 = 0;
    let ncpu = p.cpus as usize;
    let mut ci = 0usize;
    let mut pfn = 100_000u64;
    while written < p.events {
        ci = (ci + 1) % ncpu;
        let c = &mut cpus[ci];
        let cpu = ci as u32;
        let coarse = p.order_mix;
        let tick = |c: &mut CpuState, rng: &mut Rng| {
            c.t += if coarse {
                250 * rng.range(1, 3)
            } else {
                rng.range(150, 2500)
            };
            c.t
        };
        let mut emit =
            |w: &mut TraceWriter, c: &mut CpuState, rng: &mut Rng, id: u64, pl: &[Value]| {
                let t = tick(c, rng);
                written += 1;
                w.write_event(cpu, id, t, pl)
            };
        let kind = rng.weighted(&[50, 30, 12, 5, 3]);
        let cur = match c.cur {
            None if kind != 2 => {
                // Idle CPU: schedule a task in.
                let n = rng.range(0, c.tasks.len() as u64 - 1) as usize;
                let next = c.tasks[n].task.clone();
                emit(&mut w, c, &mut rng, ev::SCHED_WAKING, &wake(&next, cpu))?;
                emit(&mut w, c, &mut rng, ev::SCHED_WAKEUP, &wake(&next, cpu))?;
                let sw = switch(&c.swapper, STATE_RUNNING, &next);
                emit(&mut w, c, &mut rng, ev::SCHED_SWITCH, &sw)?;
                c.cur = Some(n);
                if let Some((id, pl)) = c.tasks[n].pending_exit.take() {
                    emit(&mut w, c, &mut rng, id, &pl)?;
                }
                continue;
            }
            x => x,
        };
        match kind {
            0 => {
                // A system call of the running task.
                let cur = cur.unwrap();
                let fd = rng.range(3, 40) as u32;
                let buf = 0x7ffd_0000_0000 + rng.range(0, 1 << 30) * 16;
                let (entry, pl, exit, xpl, can_block): (u64, Vec<Value>, u64, Vec<Value>, bool) =
                    match rng.weighted(&[25, 20, 12, 12, 10, 10, 6, 5]) {
                        0 => {
                            let n = rng.range(1, 65536);
                            (
                                ev::SYS_READ,
                                read_entry(fd, n),
                                ev::SYSX_READ,
                                read_exit(n as i64 / 2, buf),
                                true,
                            )
                        }
                        1 => {
                            let n = rng.range(1, 8192);
                            (
                                ev::SYS_WRITE,
                                write_entry(fd, buf, n),
                                ev::SYSX_WRITE,
                                ret(n as i64),
                                false,
                            )
                        }
                        2 => (
                            ev::SYS_EPOLL_WAIT,
                            epoll_entry(fd as i32, -1),
                            ev::SYSX_EPOLL_WAIT,
                            epoll_exit(&[fd + 1]),
                            true,
                        ),
                        3 => (
                            ev::SYS_FUTEX,
                            futex_entry(buf, 128, 0),
                            ev::SYSX_FUTEX,
                            futex_exit(0, buf),
                            true,
                        ),
                        4 => {
                            let n = rng.range(1, 1500);
                            (
                                ev::SYS_RECVFROM,
                                recvfrom_entry(fd as i32, 65536),
                                ev::SYSX_RECVFROM,
                                recvfrom_exit(n as i64, buf),
                                true,
                            )
                        }
                        5 => {
                            let n = rng.range(1, 1500);
                            (
                                ev::SYS_SENDTO,
                                sendto_entry(fd as i32, buf, n),
                                ev::SYSX_SENDTO,
                                ret(n as i64),
                                false,
                            )
                        }
                        6 => (
                            ev::SYS_OPENAT,
                            openat_entry(FILES[rng.range(0, FILES.len() as u64 - 1) as usize]),
                            ev::SYSX_OPENAT,
                            ret(fd as i64),
                            false,
                        ),
                        _ => (
                            ev::SYS_CLOSE,
                            vec![Value::U64(fd as u64)],
                            ev::SYSX_CLOSE,
                            ret(0),
                            false,
                        ),
                    };
                emit(&mut w, c, &mut rng, entry, &pl)?;
                if rng.chance(0.08) {
                    pfn += rng.range(1, 100);
                    let (id, pl) = page(ev::PAGE_ALLOC, pfn, true);
                    emit(&mut w, c, &mut rng, id, &pl)?;
                }
                if can_block && rng.chance(0.3) {
                    // Block: switch to another task or idle.
                    c.tasks[cur].pending_exit = Some((exit, xpl));
                    let prev = c.tasks[cur].task.clone();
                    if rng.chance(0.5) {
                        let sw = switch(&prev, STATE_INTERRUPTIBLE, &c.swapper);
                        emit(&mut w, c, &mut rng, ev::SCHED_SWITCH, &sw)?;
                        c.cur = None;
                    } else {
                        let n =
                            (cur + rng.range(1, c.tasks.len() as u64 - 1) as usize) % c.tasks.len();
                        let next = c.tasks[n].task.clone();
                        let sw = switch(&prev, STATE_INTERRUPTIBLE, &next);
                        emit(&mut w, c, &mut rng, ev::SCHED_SWITCH, &sw)?;
                        c.cur = Some(n);
                        if let Some((id, pl)) = c.tasks[n].pending_exit.take() {
                            emit(&mut w, c, &mut rng, id, &pl)?;
                        }
                    }
                } else {
                    emit(&mut w, c, &mut rng, exit, &xpl)?;
                }
            }
            1 => {
                // Preemption: wake another task and switch to it.
                let cur = cur.unwrap();
                let n = (cur + rng.range(1, c.tasks.len() as u64 - 1) as usize) % c.tasks.len();
                if let Some(o) = order.as_mut() {
                    // A task neither running nor about to: renamed, or given another
                    // priority, seen at its next wakeup or switch.
                    let other = (0..c.tasks.len()).find(|&k| k != cur && k != n && o.chance(0.5));
                    if let Some(k) = other {
                        if o.chance(0.04) {
                            c.tasks[k].task.comm = o.pick(ORDER_NAMES).to_string();
                        }
                        if o.chance(0.05) {
                            c.tasks[k].task.prio = *o.pick(ORDER_PRIOS);
                        }
                    }
                    // The running task's priority changed while it ran: seen at this
                    // switch-out's `prev_prio` only.
                    if o.chance(0.03) {
                        c.tasks[cur].task.prio = *o.pick(ORDER_PRIOS);
                    }
                }
                let next = c.tasks[n].task.clone();
                let prev = c.tasks[cur].task.clone();
                emit(&mut w, c, &mut rng, ev::SCHED_WAKING, &wake(&next, cpu))?;
                emit(&mut w, c, &mut rng, ev::SCHED_WAKEUP, &wake(&next, cpu))?;
                let sw = switch(&prev, STATE_PREEMPTED, &next);
                emit(&mut w, c, &mut rng, ev::SCHED_SWITCH, &sw)?;
                c.cur = Some(n);
                if let Some((id, pl)) = c.tasks[n].pending_exit.take() {
                    emit(&mut w, c, &mut rng, id, &pl)?;
                }
            }
            2 => {
                // Hard interrupt, then its softirq.
                if let Some((sector, nr, write)) = c.inflight.pop() {
                    emit(
                        &mut w,
                        c,
                        &mut rng,
                        ev::IRQ_ENTRY,
                        &irq_entry(40, "nvme0q1"),
                    )?;
                    emit(
                        &mut w,
                        c,
                        &mut rng,
                        ev::BLOCK_COMPLETE,
                        &block_complete(8388608, sector, nr, write),
                    )?;
                    emit(&mut w, c, &mut rng, ev::IRQ_EXIT, &irq_exit(40))?;
                } else if rng.chance(0.5) {
                    emit(
                        &mut w,
                        c,
                        &mut rng,
                        ev::IRQ_ENTRY,
                        &irq_entry(25, "virtio0-input.0"),
                    )?;
                    emit(
                        &mut w,
                        c,
                        &mut rng,
                        ev::SOFTIRQ_RAISE,
                        &vec1(SOFTIRQ_NET_RX),
                    )?;
                    emit(&mut w, c, &mut rng, ev::IRQ_EXIT, &irq_exit(25))?;
                    emit(
                        &mut w,
                        c,
                        &mut rng,
                        ev::SOFTIRQ_ENTRY,
                        &vec1(SOFTIRQ_NET_RX),
                    )?;
                    let seg = kernel::lttng::TcpSeg {
                        saddr: [10, 0, 0, 2],
                        daddr: [10, 0, 0, 1],
                        sport: 443,
                        dport: 40000 + rng.range(0, 999) as u16,
                        seq: rng.next_u64() as u32,
                        ack: rng.next_u64() as u32,
                        flags: kernel::lttng::TCP_ACK | kernel::lttng::TCP_PSH,
                        len: rng.range(0, 1448) as u32,
                        skbaddr: 0xffff_8881_0000_0000 | (rng.range(0, 1 << 24) << 8),
                        sk: 0xffff_8881_4000_0000,
                        ip_id: rng.next_u64() as u16,
                    };
                    let pl = kernel::lttng::net_payload(p.net, &seg, "eth0");
                    emit(&mut w, c, &mut rng, ev::NET_IN, &pl)?;
                    emit(&mut w, c, &mut rng, ev::SOFTIRQ_EXIT, &vec1(SOFTIRQ_NET_RX))?;
                } else {
                    let now = c.t as i64;
                    emit(
                        &mut w,
                        c,
                        &mut rng,
                        ev::HRTIMER_ENTRY,
                        &hrtimer_entry(0xffff_8880_7fc1_e540, now, 0xffff_ffff_8113_2a40),
                    )?;
                    emit(
                        &mut w,
                        c,
                        &mut rng,
                        ev::HRTIMER_EXIT,
                        &[Value::U64(0xffff_8880_7fc1_e540)],
                    )?;
                    emit(&mut w, c, &mut rng, ev::SOFTIRQ_RAISE, &vec1(SOFTIRQ_TIMER))?;
                    emit(&mut w, c, &mut rng, ev::SOFTIRQ_ENTRY, &vec1(SOFTIRQ_TIMER))?;
                    emit(&mut w, c, &mut rng, ev::SOFTIRQ_EXIT, &vec1(SOFTIRQ_TIMER))?;
                }
            }
            3 => {
                let Some(cur) = cur else { continue };
                let _ = cur;
                pfn += rng.range(1, 100);
                let alloc = rng.chance(0.55);
                let (id, pl) = page(ev::PAGE_ALLOC, pfn, alloc);
                emit(&mut w, c, &mut rng, id, &pl)?;
            }
            _ => {
                let Some(cur) = cur else { continue };
                let write = rng.chance(0.4);
                let sector = rng.range(0, 1 << 30) * 8;
                let nr = 8 * rng.range(1, 32) as u32;
                let task = c.tasks[cur].task.clone();
                let fd = rng.range(3, 20) as u32;
                let buf = 0x7ffd_0000_0000 + rng.range(0, 1 << 30) * 16;
                let (e, pl, x, xpl) = if write {
                    (
                        ev::SYS_WRITE,
                        write_entry(fd, buf, nr as u64 * 512),
                        ev::SYSX_WRITE,
                        ret(nr as i64 * 512),
                    )
                } else {
                    (
                        ev::SYS_READ,
                        read_entry(fd, nr as u64 * 512),
                        ev::SYSX_READ,
                        read_exit(nr as i64 * 512, buf),
                    )
                };
                emit(&mut w, c, &mut rng, e, &pl)?;
                emit(
                    &mut w,
                    c,
                    &mut rng,
                    ev::BLOCK_ISSUE,
                    &block_issue(8388608, sector, nr, write, &task),
                )?;
                c.inflight.push((sector, nr, write));
                emit(&mut w, c, &mut rng, x, &xpl)?;
            }
        }
    }
    w.finish()
}
