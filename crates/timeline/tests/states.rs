//! The model of a small hand-written trace, checked state by state against what its events
//! say, as Trace Compass's kernel state provider reads them.

use std::path::Path;

use ctf::value::Value;
use ctf::writer::{EventHeaderKind, TraceWriter, WriterOptions};
use kernel::lttng::{ev, trace_class, HostInfo, NetLayout};
use scenario::common::{
    irq_entry, irq_exit, openat_entry, read_entry, read_exit, ret, statedump_process, switch, vec1,
    wake, Task,
};
use timeline::{
    ArrowKind, BuildOptions, CpuState, IrqState, Origin, RowKind, State, ThreadState, Timeline,
};

/// `sched_process_fork` of `child` by `parent`.
fn fork(parent: &Task, child: &Task) -> Vec<Value> {
    vec![
        Value::str(&parent.comm),
        Value::I64(parent.tid as i64),
        Value::I64(parent.pid as i64),
        Value::U64(0),
        Value::str(&child.comm),
        Value::I64(child.tid as i64),
        Value::U64(1),
        Value::Array(vec![Value::I64(child.tid as i64)]),
        Value::I64(child.pid as i64),
        Value::U64(0),
    ]
}

/// Writes the trace: see the comments for what each event makes.
fn write(dir: &Path) {
    let host = HostInfo {
        hostname: "h".into(),
        trace_uuid: [7; 16],
        clock_uuid: [8; 16],
        clock_offset_ns: 0,
        creation: "20240305T101500+0000".into(),
        trace_name: "t".into(),
        kernel_release: "6.1".into(),
    };
    let tc = trace_class(&host, NetLayout::NetworkHeader, EventHeaderKind::Compact);
    let mut w = TraceWriter::create(dir, &tc, 2, &WriterOptions::default()).unwrap();
    let s0 = Task::swapper(0);
    let s1 = Task::swapper(1);
    let a = Task::new(10, 10, "web");
    let b = Task::new(11, 10, "web-worker");
    let c = Task::new(12, 12, "child");
    let mut e = |cpu: u32, class: u64, ts: u64, v: Vec<Value>| {
        w.write_event(cpu, class, ts, &v).unwrap();
    };
    // Statedump: both wait for a CPU.
    e(0, ev::STATEDUMP_PROCESS, 100, statedump_process(&a, 0));
    e(0, ev::STATEDUMP_PROCESS, 110, statedump_process(&b, 0));
    // Woken on CPU 1, which runs no known thread: the CPU wakes it.
    e(1, ev::SCHED_WAKING, 150, wake(&b, 0));
    e(0, ev::SCHED_SWITCH, 200, switch(&s0, 0, &b));
    e(0, ev::SYS_READ, 300, read_entry(3, 10));
    e(0, ev::IRQ_ENTRY, 350, irq_entry(9, "eth0"));
    e(0, ev::IRQ_EXIT, 380, irq_exit(9));
    e(0, ev::SOFTIRQ_RAISE, 381, vec1(3));
    e(0, ev::SOFTIRQ_ENTRY, 390, vec1(3));
    e(0, ev::SOFTIRQ_EXIT, 395, vec1(3));
    e(0, ev::SYSX_READ, 400, read_exit(7, 0));
    // Blocks (interruptible), woken by `a` running on CPU 1.
    e(0, ev::SCHED_SWITCH, 500, switch(&b, 1, &s0));
    e(1, ev::SCHED_SWITCH, 550, switch(&s1, 0, &a));
    e(1, ev::SCHED_WAKING, 600, wake(&b, 0));
    e(0, ev::SCHED_SWITCH, 700, switch(&s0, 0, &b));
    // `a` forks `c` in a system call, which `c` starts in and leaves; `c` dies, and a second
    // fork takes its id again.
    e(1, ev::SYS_OPENAT, 780, openat_entry("/x"));
    e(1, ev::SCHED_FORK, 800, fork(&a, &c));
    e(1, ev::SYSX_OPENAT, 820, ret(3));
    e(1, ev::SCHED_SWITCH, 850, switch(&a, 0, &c));
    e(1, ev::SYSX_OPENAT, 870, ret(0));
    e(1, ev::SCHED_SWITCH, 900, switch(&c, 0x40, &s1));
    e(1, ev::SCHED_FORK, 950, fork(&a, &c));
    e(0, ev::SCHED_SWITCH, 1000, switch(&b, 0, &s0));
    w.finish().unwrap();
}

fn open(dir: &Path) -> Timeline {
    let traces = ctf::open_all(&[dir]).unwrap();
    let (tl, origin, diags) = Timeline::open(&traces, &BuildOptions::default()).unwrap();
    assert_eq!(origin, Origin::Built);
    assert!(diags.is_empty(), "{diags:?}");
    tl
}

/// (start, end, state, label) of every interval of `row`.
fn spans(tl: &Timeline, row: u32) -> Vec<(i64, i64, State, Option<String>)> {
    tl.states(row, tl.start, tl.end, 1)
        .into_iter()
        .map(|s| {
            assert!(!s.merged);
            (s.start, s.end, s.state, s.label.map(|l| l.to_string()))
        })
        .collect()
}

fn row_of(tl: &Timeline, kind: &RowKind) -> u32 {
    tl.rows
        .iter()
        .find(|r| r.kind == *kind)
        .unwrap_or_else(|| panic!("no row {kind:?}"))
        .id
}

#[test]
fn states_follow_the_events() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("k");
    write(&dir);
    let tl = open(&dir);
    assert_eq!((tl.start, tl.end, tl.events), (100, 1000, 23));
    let th = |s| State::Thread(s);
    let read = Some("read".to_string());
    let b = tl.thread_row(0, 11, 500).unwrap();
    use ThreadState::*;
    assert_eq!(
        spans(&tl, b),
        vec![
            (110, 200, th(WaitCpu), None),
            (200, 300, th(Usermode), None),
            (300, 350, th(Syscall), read.clone()),
            (350, 380, th(Interrupted), None),
            (380, 390, th(Syscall), read.clone()),
            (390, 395, th(SoftIrq), None),
            (395, 400, th(Syscall), read.clone()),
            (400, 500, th(Usermode), None),
            (500, 600, th(WaitBlocked), None),
            (600, 700, th(WaitCpu), None),
            (700, 1000, th(Usermode), None),
            (1000, 1000, th(WaitCpu), None),
        ]
    );
    let cpu0 = row_of(&tl, &RowKind::Cpu { cpu: 0 });
    let cpu = |s| State::Cpu(s);
    let name = |s: &str| Some(s.to_string());
    assert_eq!(
        spans(&tl, cpu0),
        vec![
            (200, 300, cpu(CpuState::Usermode), name("web-worker")),
            (300, 350, cpu(CpuState::Syscall), read.clone()),
            (350, 380, cpu(CpuState::Irq), name("eth0")),
            (380, 390, cpu(CpuState::Syscall), read.clone()),
            (390, 395, cpu(CpuState::SoftIrq), name("NET_RX")),
            (395, 400, cpu(CpuState::Syscall), read.clone()),
            (400, 500, cpu(CpuState::Usermode), name("web-worker")),
            (500, 700, cpu(CpuState::Idle), None),
            (700, 1000, cpu(CpuState::Usermode), name("web-worker")),
            (1000, 1000, cpu(CpuState::Idle), None),
        ]
    );
    let irq = row_of(&tl, &RowKind::Irq { irq: 9, cpu: None });
    assert_eq!(tl.rows[irq as usize].label, "IRQ 9 (eth0)");
    assert_eq!(
        spans(&tl, irq),
        vec![(350, 380, State::Irq(IrqState::Active), name("CPU 0"))]
    );
    let net_rx = row_of(&tl, &RowKind::SoftIrq { vec: 3, cpu: None });
    assert_eq!(
        spans(&tl, net_rx),
        vec![
            (381, 390, State::Irq(IrqState::Raised), None),
            (390, 395, State::Irq(IrqState::Active), name("CPU 0")),
        ]
    );
    // The same on CPU 0's own rows, children of its row (Trace Compass's Resources nesting).
    let cpu0 = row_of(&tl, &RowKind::Cpu { cpu: 0 });
    for (all, kind) in [
        (
            irq,
            RowKind::Irq {
                irq: 9,
                cpu: Some(0),
            },
        ),
        (
            net_rx,
            RowKind::SoftIrq {
                vec: 3,
                cpu: Some(0),
            },
        ),
    ] {
        let on0 = row_of(&tl, &kind);
        assert_eq!(tl.rows[on0 as usize].parent, Some(cpu0), "{kind:?}");
        assert_eq!(spans(&tl, on0), spans(&tl, all), "{kind:?}");
    }
    // Point queries agree with the intervals.
    assert_eq!(tl.state_at(b, 520).unwrap().state, th(WaitBlocked));
    assert_eq!(tl.state_at(b, 300).unwrap().label.as_deref(), Some("read"));
    assert_eq!(tl.state_at(irq, 400), None);

    // The tree: the worker under its process's main thread, the child under its parent.
    let a = tl.thread_row(0, 10, 500).unwrap();
    assert_eq!(tl.rows[b as usize].parent, Some(a));
    assert_eq!(tl.rows[a as usize].parent, Some(tl.hosts[0].row));
    assert_eq!(
        tl.rows[b as usize].kind,
        RowKind::Thread {
            tid: 11,
            pid: Some(10),
            ppid: Some(1)
        }
    );
    assert_eq!(tl.rows[b as usize].label, "web-worker");

    // A thread id taken again is a new row; each has its own life.
    let c1 = tl.thread_row(0, 12, 870).unwrap();
    let c2 = tl.thread_row(0, 12, 960).unwrap();
    assert_ne!(c1, c2);
    for c in [c1, c2] {
        assert_eq!(tl.rows[c as usize].parent, Some(a));
    }
    assert_eq!(
        spans(&tl, c1),
        vec![
            (800, 850, th(WaitCpu), None),
            (850, 870, th(Syscall), Some("openat".to_string())),
            (870, 900, th(Usermode), None),
        ]
    );
    assert_eq!(tl.rows[c1 as usize].end, 950);
    assert_eq!(spans(&tl, c2), vec![(950, 1000, th(WaitCpu), None)]);

    // Wake-ups: from CPU 1 (no thread known there), then from `a`; each ends when the thread
    // runs.
    let cpu1 = row_of(&tl, &RowKind::Cpu { cpu: 1 });
    let arrows: Vec<_> = tl
        .arrows(&[], tl.start, tl.end, 1)
        .into_iter()
        .map(|x| (x.source, x.target, x.start, x.end, x.kind))
        .collect();
    assert_eq!(
        arrows,
        vec![
            (cpu1, b, 150, 200, ArrowKind::Wakeup),
            (a, b, 600, 700, ArrowKind::Wakeup),
        ]
    );
    // Only those touching the rows asked for, and none outside the range.
    assert_eq!(tl.arrows(&[cpu1], tl.start, tl.end, 1).len(), 1);
    assert_eq!(tl.arrows(&[], 300, 500, 1).len(), 0);

    // CPU time: the worker ran 200–500 and 700–1000 on CPU 0.
    let times = tl.cpu_time(0, tl.start, tl.end);
    assert_eq!(times[0], (b, 600));
    let usage = tl.cpu_usage(0, &[], 200, 1000, 4);
    // Two CPUs: 200–400 CPU 0 busy (50 %), 400–600 CPU 0 until 500 and CPU 1 from 550 (37.5 %).
    assert_eq!(usage[0], 50.0);
    assert_eq!(usage[1], 37.5);
    let (density, lost) = tl.event_density(tl.start, tl.end, 9);
    assert_eq!(density.iter().sum::<u64>(), 23);
    assert_eq!(lost.iter().sum::<u64>(), 0);
}

#[test]
fn resolution_bounds_the_spans() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("k");
    write(&dir);
    let tl = open(&dir);
    let b = tl.thread_row(0, 11, 500).unwrap();
    for res in [1, 7, 50, 100, 333, 1000, 5000] {
        for (start, end) in [(tl.start, tl.end), (320, 620), (0, 2000)] {
            let s = tl.states(b, start, end, res);
            let bound = ((end - start) as u64).div_ceil(res as u64) + 1;
            assert!(s.len() as u64 <= bound, "{res} {start} {end}: {s:?}");
            // In order, without overlaps, and covering the range asked.
            for w in s.windows(2) {
                assert!(w[0].end <= w[1].start, "{w:?}");
            }
            assert!(s.iter().all(|x| x.end >= start && x.start <= end));
        }
    }
    // Merged spans stand for the states hidden in them.
    let s = tl.states(b, tl.start, tl.end, 100);
    assert!(s.iter().any(|x| x.merged));
}
