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
        cpus[0].t = t;
    }

    let mut written: u64 = 0;
    let ncpu = p.cpus as usize;
    let mut ci = 0usize;
    let mut pfn = 100_000u64;
    while written < p.events {
        ci = (ci + 1) % ncpu;
        let c = &mut cpus[ci];
        let cpu = ci as u32;
        let tick = |c: &mut CpuState, rng: &mut Rng| {
            c.t += rng.range(150, 2500);
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
