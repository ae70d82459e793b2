//! The state machine on a generated trace (exact expectations) and on the shared real traces.

use ctf::writer::{EventHeaderKind, TraceWriter, WriterOptions};
use ctf::{Merger, Message};
use kernel::lttng::{ev, trace_class, HostInfo, NetLayout};
use kernel::{Kind, NoteKind, Notification, StateOptions};
use scenario::common::{
    irq_entry, irq_exit, read_entry, read_exit, statedump_fd, statedump_process, switch, vec1,
    wake, Task,
};

mod common;
use common::run;
use testkit::CLOCK_OFFSET_NS;

#[test]
fn generated_trace() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("k");
    let host = HostInfo {
        hostname: "h".into(),
        trace_uuid: [3; 16],
        clock_uuid: [4; 16],
        clock_offset_ns: 0,
        creation: "20240305T101500+0000".into(),
        trace_name: "t".into(),
        kernel_release: "6.1".into(),
    };
    let tc = trace_class(&host, NetLayout::NetworkHeader, EventHeaderKind::Compact);
    let mut w = TraceWriter::create(&dir, &tc, 2, &WriterOptions::default()).unwrap();
    let s0 = Task::swapper(0);
    let a = Task::new(10, 10, "web");
    let b = Task::new(11, 10, "web-worker");
    w.write_event(0, ev::STATEDUMP_PROCESS, 100, &statedump_process(&a, 0))
        .unwrap();
    w.write_event(0, ev::STATEDUMP_PROCESS, 110, &statedump_process(&b, 0))
        .unwrap();
    w.write_event(
        0,
        ev::STATEDUMP_FD,
        120,
        &statedump_fd(&a, 3, "/var/log/web.log"),
    )
    .unwrap();
    w.write_event(1, ev::SCHED_WAKING, 150, &wake(&b, 0))
        .unwrap();
    w.write_event(0, ev::SCHED_SWITCH, 200, &switch(&s0, 0, &b))
        .unwrap();
    w.write_event(0, ev::SYS_READ, 300, &read_entry(3, 10))
        .unwrap();
    w.write_event(0, ev::IRQ_ENTRY, 350, &irq_entry(9, "eth0"))
        .unwrap();
    w.write_event(0, ev::IRQ_EXIT, 380, &irq_exit(9)).unwrap();
    w.write_event(0, ev::SOFTIRQ_RAISE, 381, &vec1(3)).unwrap();
    w.write_event(0, ev::SOFTIRQ_ENTRY, 390, &vec1(3)).unwrap();
    w.write_event(0, ev::SOFTIRQ_EXIT, 395, &vec1(3)).unwrap();
    w.write_event(0, ev::SYSX_READ, 400, &read_exit(7, 0))
        .unwrap();
    w.finish().unwrap();

    let (m, all_notes) = run(&[dir], StateOptions::default());
    // The status notifications of a state model are checked at the end.
    let status_kinds = [
        NoteKind::ThreadStatus,
        NoteKind::CpuStatus,
        NoteKind::IrqStatus,
        NoteKind::Wakeup,
        NoteKind::Lifecycle,
    ];
    // The statedump's descriptor, announced once.
    let known: Vec<Notification> = all_notes
        .iter()
        .filter(|n| matches!(n, Notification::FdKnown { .. }))
        .copied()
        .collect();
    assert_eq!(
        known,
        vec![Notification::FdKnown {
            ts: 120,
            pid: 10,
            fd: 3
        }]
    );
    let notes: Vec<Notification> = all_notes
        .iter()
        .filter(|n| !status_kinds.contains(&n.kind()) && !matches!(n, Notification::FdKnown { .. }))
        .copied()
        .collect();
    let st = &m.state;
    assert_eq!(st.thread(11).unwrap().pid, Some(10));
    assert_eq!(st.thread(11).unwrap().comm, "web-worker");
    assert_eq!(st.current_tid(0), Some(11));
    assert_eq!(
        st.processes[&10].fds[&3].filename,
        "/var/log/web.log".to_string()
    );
    assert_eq!(st.irq_names[&9], "eth0");
    let read = m.resolver.syscalls.clone();
    // The wakeup first tells the priority (the 2.13 statedump has none).
    assert_eq!(
        notes[0],
        Notification::PrioChanged {
            ts: 150,
            tid: 11,
            prio: 20
        }
    );
    let mut it = notes[1..].iter();
    assert!(matches!(
        it.next(),
        Some(Notification::SchedSwitch {
            ts: 200,
            cpu: 0,
            prev_tid: 0,
            next_tid: 11,
            wakeup: Some((150, None)),
            ..
        })
    ));
    let rest: Vec<_> = it.collect();
    assert!(rest.contains(&&Notification::HardIrqDone {
        cpu: 0,
        irq: 9,
        begin: 350,
        end: 380
    }));
    assert!(rest.contains(&&Notification::SoftIrqDone {
        cpu: 0,
        vec: 3,
        raise: Some(381),
        begin: 390,
        end: 395
    }));
    let done = rest
        .iter()
        .find_map(|n| match n {
            Notification::SyscallDone {
                tid,
                name,
                entry_ts,
                exit_ts,
                ret,
                ..
            } => Some((
                *tid,
                read.name(*name).to_string(),
                *entry_ts,
                *exit_ts,
                *ret,
            )),
            _ => None,
        })
        .unwrap();
    assert_eq!(done, (11, "read".to_string(), 300, 400, 7));

    // The status notifications of a state model, in order, as Trace Compass's kernel state
    // provider reads these events: an IRQ interrupts the thread and takes the CPU, the soft
    // IRQ too, and both give them back to the system call.
    let r = rest
        .iter()
        .find_map(|n| match n {
            Notification::SyscallDone { name, .. } => Some(*name),
            _ => None,
        })
        .unwrap();
    let statuses: Vec<Notification> = all_notes
        .iter()
        .filter(|n| status_kinds.contains(&n.kind()))
        .copied()
        .collect();
    use kernel::{CpuStatus as C, SoftIrqStep, ThreadStatus as T};
    let th = |ts, status| Notification::ThreadStatus {
        ts,
        tid: 11,
        status,
    };
    let cpu = |ts, status| Notification::CpuStatus { ts, cpu: 0, status };
    let soft = |ts, step| Notification::SoftIrq {
        ts,
        cpu: 0,
        vec: 3,
        step,
    };
    assert_eq!(
        statuses,
        vec![
            Notification::ThreadKnown {
                ts: 100,
                tid: 10,
                pid: Some(10),
                ppid: Some(1),
                status: T::WaitCpu
            },
            Notification::ThreadKnown {
                ts: 110,
                tid: 11,
                pid: Some(10),
                ppid: Some(1),
                status: T::WaitCpu
            },
            th(150, T::WaitCpu),
            Notification::Wakeup {
                ts: 150,
                tid: 11,
                cpu: 1,
                waker: None,
                in_irq: false
            },
            cpu(200, C::Usermode(11)),
            th(200, T::Usermode),
            cpu(300, C::Syscall(11, r)),
            th(300, T::Syscall(r)),
            Notification::Irq {
                ts: 350,
                cpu: 0,
                irq: 9,
                entry: true
            },
            cpu(350, C::Irq(9)),
            th(350, T::Interrupted),
            Notification::Irq {
                ts: 380,
                cpu: 0,
                irq: 9,
                entry: false
            },
            cpu(380, C::Syscall(11, r)),
            th(380, T::Syscall(r)),
            soft(381, SoftIrqStep::Raise),
            soft(390, SoftIrqStep::Entry),
            cpu(390, C::SoftIrq(3)),
            th(390, T::SoftIrq),
            soft(395, SoftIrqStep::Exit),
            cpu(395, C::Syscall(11, r)),
            th(395, T::Syscall(r)),
            cpu(400, C::Usermode(11)),
            th(400, T::Usermode),
        ]
    );
}

/// Every shared kernel trace goes through the state machine, including the lttng-modules 2.1
/// synctraces on which lttng-analyses fails ("Cannot run analysis: 'tid'").
#[test]
fn shared_traces() {
    let Some(sh) = testkit::shared_or_skip("the shared-trace state tests") else {
        return;
    };
    let mut compared = 0;
    for (t, min_threads) in [
        ("synctraces/scp_src", 50),
        ("synctraces/scp_dest", 20),
        ("bug446190", 100),
        ("many-threads", 500),
    ] {
        // The thread counts are those of the original traces: a damaged one is skipped loudly.
        let Some(dir) = testkit::intact_trace(&sh, &format!("traces/kernel/{t}")) else {
            continue;
        };
        compared += 1;
        let (m, notes) = run(&[dir], StateOptions::default());
        assert!(
            m.state.threads.len() >= min_threads,
            "{t}: {} threads",
            m.state.threads.len()
        );
        assert!(notes
            .iter()
            .any(|n| matches!(n, Notification::SchedSwitch { .. })));
    }
    assert!(compared > 0, "no intact shared kernel trace");
    // The 2.5 names (`sys_*`, `exit_syscall`) and the 2.8 ones resolve to the same kinds.
    let Some(dir) = testkit::intact_trace(&sh, "traces/kernel/bug446190") else {
        return;
    };
    let mut r = kernel::Resolver::new();
    let traces = ctf::open_all(&[dir]).unwrap();
    let mut merger = Merger::new(&traces);
    let mut entries = 0;
    while let Some(msg) = merger.next() {
        if *msg == Message::Event {
            if let Kind::SyscallEntry(_) = r.resolve(&merger.event().unwrap()).kind {
                entries += 1;
            }
        }
    }
    assert!(entries > 1000, "{entries} syscall entries");
}

/// A wakeup of a thread that runs on some CPU is ignored; the thread each CPU runs follows
/// the switches, even one whose `prev_tid` is not the thread the CPU was running.
#[test]
fn wakeups_of_running_threads() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("k");
    let mut w = testkit::small_kernel_writer(&dir, 5, 2);
    let (s0, s1) = (Task::swapper(0), Task::swapper(1));
    let a = Task::new(10, 10, "a");
    let b = Task::new(11, 11, "b");
    let c = Task::new(12, 12, "c");
    let events: &[(u32, u64, u64, Vec<ctf::value::Value>)] = &[
        (0, ev::SCHED_SWITCH, 100, switch(&s0, 0, &b)),
        // b runs on CPU 0.
        (1, ev::SCHED_WAKING, 110, wake(&b, 0)),
        (0, ev::SCHED_SWITCH, 200, switch(&b, 1, &a)),
        (0, ev::SCHED_WAKING, 250, wake(&b, 1)),
        (1, ev::SCHED_SWITCH, 300, switch(&s1, 0, &b)),
        // b runs on CPU 1.
        (0, ev::SCHED_WAKING, 310, wake(&b, 1)),
        (1, ev::SCHED_SWITCH, 400, switch(&b, 1, &s1)),
        (1, ev::SCHED_SWITCH, 500, switch(&s1, 0, &b)),
        // CPU 0 runs a, but the switch names c as the previous thread: a no longer runs.
        (0, ev::SCHED_SWITCH, 600, switch(&c, 1, &s0)),
        (1, ev::SCHED_WAKING, 610, wake(&a, 1)),
        (1, ev::SCHED_SWITCH, 700, switch(&b, 1, &a)),
    ];
    for (cpu, id, ts, v) in events {
        w.write_event(*cpu, *id, *ts, v).unwrap();
    }
    w.finish().unwrap();
    let (m, notes) = run(&[dir], StateOptions::default());
    // (time, pending wakeup: (time, waker)) of each switch.
    type Switch = (i64, Option<(i64, Option<i32>)>);
    let switches: Vec<Switch> = notes
        .iter()
        .filter_map(|n| match n {
            // Times from the trace's clock origin.
            Notification::SchedSwitch { ts, wakeup, .. } => Some((
                ts - CLOCK_OFFSET_NS,
                wakeup.map(|(t, waker)| (t - CLOCK_OFFSET_NS, waker)),
            )),
            _ => None,
        })
        .collect();
    assert_eq!(
        switches,
        [
            (100, None),
            (200, None),
            (300, Some((250, Some(10)))),
            (400, None),
            (500, None),
            (600, None),
            (700, Some((610, Some(11)))),
        ]
    );
    assert_eq!(m.state.current_tid(0), Some(0));
    assert_eq!(m.state.current_tid(1), Some(10));
    // Both idle tasks are tid 0.
    assert_eq!(m.state.threads.len(), 4);
}
