//! The execution graph built from kernel events, and critical paths on it: Trace Compass's
//! execution-graph and distributed critical-path test scenarios, re-expressed as event
//! sequences fed to the builder (their XML stubs use custom packet events matched by
//! message id; here the matching is given directly).

use std::collections::HashMap;

use critpath::builder::{Builder, Ctx, KEvent};
use critpath::graph::{Graph, VId};
use critpath::report::{segments, Segment};
use critpath::{critical_path, PathOptions};

/// One scripted event: time, host, CPU, event, and the message id of a packet event.
type Ev = (i64, u32, u32, KEvent<'static>, Option<u32>);

fn sw(prev: i64, state: i64, next: i64) -> KEvent<'static> {
    KEvent::Switch {
        prev_tid: prev,
        prev_state: state,
        prev_comm: "",
        next_tid: next,
        next_comm: "",
    }
}

fn wake(tid: i64) -> KEvent<'static> {
    KEvent::Wakeup { tid, comm: "" }
}

fn run(hosts: &[&str], evs: &mut [Ev], comms: &[(u32, i64, &'static str)]) -> Graph {
    let mut b = Builder::new();
    for h in hosts {
        b.add_host(h);
    }
    for &(h, tid, comm) in comms {
        b.event(
            h,
            0,
            0,
            &KEvent::Statedump {
                tid,
                comm,
                status: 0,
            },
        );
    }
    evs.sort_by_key(|e| e.0);
    let mut sent: HashMap<u32, VId> = HashMap::new();
    let mut recvd: HashMap<u32, VId> = HashMap::new();
    for (ts, h, cpu, ev, msg) in evs.iter() {
        let v = b.event(*h, *cpu, *ts, ev);
        if let (Some(v), Some(m)) = (v, msg) {
            match ev {
                KEvent::NetSend => {
                    sent.insert(*m, v);
                    if let Some(r) = recvd.remove(m) {
                        b.link_packet(v, r);
                    }
                }
                _ => {
                    recvd.insert(*m, v);
                    if let Some(s) = sent.remove(m) {
                        b.link_packet(s, v);
                    }
                }
            }
        }
    }
    b.finish(i64::MIN).0
}

fn lines(s: &str) -> String {
    s.lines()
        .map(|l| l.trim())
        .filter(|l| !l.is_empty())
        .map(|l| format!("{l}\n"))
        .collect()
}

fn path_of(g: &Graph, host: u32, tid: i64, cut: bool) -> Graph {
    let w = g.find_thread(host, tid).unwrap();
    critical_path(
        g,
        g.head(w).unwrap(),
        &PathOptions {
            end: i64::MAX,
            cut_at_departure: cut,
        },
    )
}

#[test]
fn sched_only() {
    // Trace Compass `LttngExecutionGraphTest` (sched_only.xml): CPU 0 switches between 1 and
    // 2; expected tid1: 10-P-20-R-30-P-40, tid2: 10-R-20-B-30-R-40.
    let mut evs = vec![
        (10, 0, 0, sw(1, 0, 2), None),
        (20, 0, 0, sw(2, 3, 1), None),
        (30, 0, 0, sw(1, 0, 2), None),
        (40, 0, 0, sw(2, 0, 1), None),
    ];
    let g = run(&["h"], &mut evs, &[(0, 1, "one"), (0, 2, "two")]);
    assert_eq!(
        g.dump(),
        lines(
            "one/1: [10]-P-20-R-30-P-40
             two/2: [10]-R-20-B-30-R-40"
        )
    );
}

const SERVER: u32 = 0;
const CLIENT: u32 = 1;

/// `simple_network_server.xml` (with do_IRQ and packet-reception context when `eth`).
fn server(eth: bool) -> Vec<Ev> {
    let mut v: Vec<Ev> = vec![
        (5, SERVER, 1, sw(100, 1, 101), None),
        (20, SERVER, 1, KEvent::Enter(Ctx::Irq(Some(15))), None),
        (25, SERVER, 1, KEvent::Leave(Ctx::Irq(Some(15))), None),
        (30, SERVER, 1, KEvent::Enter(Ctx::Softirq(Some(3))), None),
        (33, SERVER, 1, KEvent::NetRecv, Some(1)),
        (35, SERVER, 1, wake(100), None),
        (38, SERVER, 1, KEvent::Leave(Ctx::Softirq(Some(3))), None),
        (40, SERVER, 1, sw(101, 0, 100), None),
        (45, SERVER, 1, KEvent::NetSend, Some(2)),
        (55, SERVER, 1, sw(100, 1, 101), None),
    ];
    if eth {
        v.extend([
            (18, SERVER, 1, KEvent::Enter(Ctx::CompleteIrq), None),
            (39, SERVER, 1, KEvent::Leave(Ctx::CompleteIrq), None),
            (31, SERVER, 1, KEvent::Enter(Ctx::PacketReception), None),
            (36, SERVER, 1, KEvent::Leave(Ctx::PacketReception), None),
        ]);
    }
    v
}

/// `simple_network_client.xml`.
fn client() -> Vec<Ev> {
    vec![
        (7, CLIENT, 0, sw(202, 1, 201), None),
        (10, CLIENT, 0, sw(201, 0, 200), None),
        (13, CLIENT, 0, KEvent::NetSend, Some(1)),
        (15, CLIENT, 0, sw(200, 1, 201), None),
        (50, CLIENT, 0, KEvent::Enter(Ctx::Irq(Some(5))), None),
        (53, CLIENT, 0, KEvent::Leave(Ctx::Irq(Some(5))), None),
        (60, CLIENT, 0, KEvent::Enter(Ctx::Softirq(Some(3))), None),
        (65, CLIENT, 0, KEvent::NetRecv, Some(2)),
        (70, CLIENT, 0, wake(200), None),
        (72, CLIENT, 0, KEvent::Leave(Ctx::Softirq(Some(3))), None),
        (75, CLIENT, 0, sw(201, 0, 200), None),
        (90, CLIENT, 0, wake(202), None),
        (95, CLIENT, 0, sw(200, 0, 202), None),
    ]
}

/// `network_exchange_wifi.xml`: the reply is received by a threaded IRQ handler.
fn wifi() -> Vec<Ev> {
    vec![
        (10, CLIENT, 0, sw(201, 0, 200), None),
        (13, CLIENT, 0, KEvent::NetSend, Some(1)),
        (15, CLIENT, 0, sw(200, 1, 201), None),
        (48, CLIENT, 0, KEvent::Enter(Ctx::CompleteIrq), None),
        (50, CLIENT, 0, KEvent::Enter(Ctx::Irq(Some(5))), None),
        (53, CLIENT, 0, KEvent::Leave(Ctx::Irq(Some(5))), None),
        (
            55,
            CLIENT,
            0,
            KEvent::Wakeup {
                tid: 50,
                comm: "irq/30-handler",
            },
            None,
        ),
        (58, CLIENT, 0, KEvent::Leave(Ctx::CompleteIrq), None),
        (60, CLIENT, 0, sw(201, 0, 50), None),
        (62, CLIENT, 0, KEvent::Enter(Ctx::PacketReception), None),
        (65, CLIENT, 0, KEvent::NetRecv, Some(2)),
        (70, CLIENT, 0, wake(200), None),
        (72, CLIENT, 0, KEvent::Leave(Ctx::PacketReception), None),
        (75, CLIENT, 0, sw(50, 1, 200), None),
    ]
}

fn seg_lines(p: &Graph) -> String {
    segments(p, i64::MIN, i64::MAX)
        .iter()
        .map(|s: &Segment| {
            format!(
                "{}-{} {} {}/{} {}{}\n",
                s.start,
                s.end,
                s.host,
                s.comm,
                s.tid,
                s.state,
                s.cpu.map(|c| format!(" cpu{c}")).unwrap_or_default()
            )
        })
        .collect()
}

#[test]
fn network_exchange() {
    let mut evs = server(false);
    evs.extend(client());
    let g = run(
        &["server", "client"],
        &mut evs,
        &[
            (SERVER, 100, "srv"),
            (SERVER, 101, "other"),
            (CLIENT, 200, "cli"),
            (CLIENT, 201, "other"),
            (CLIENT, 202, "waiter"),
        ],
    );
    // Thread histories are Trace Compass's; interrupt context is a kernel worker per CPU with
    // one episode per interrupt, and packets arrive where the interrupt began.
    assert_eq!(
        g.dump(),
        lines(
            "srv/100: [5]-N-35-P-40-R-45-R-55
             other/101: [5]-R-40-P-55
             cli/200: [10]-R-13-R-15-N-70-P-75-R-90-R-95
             other/201: [7]-R-10-P-15-R-75
             waiter/202: [7]-B-90-P-95
             kernel/1: [20]-I-25, [30]-I-35-I-38
             kernel/0: [50]-I-53, [60]-I-70-I-72
             cli/200@13 => kernel/1@30 N
             cli/200@90 => waiter/202@90
             kernel/0@70 => cli/200@70
             kernel/1@35 => srv/100@35
             srv/100@45 => kernel/0@60 N"
        )
    );
    // Trace Compass: 200: 10-R-13-R-15,[70]-P-75-R-90-R-95; 100: [35]-P-40-R-45;
    // 200@15⇒100@35 N; 100@45⇒200@70 N. Same path, with the interrupt handling shown.
    assert_eq!(
        path_of(&g, CLIENT, 200, false).dump(),
        lines(
            "srv/100: [35]-P-40-R-45
             cli/200: [10]-R-13-R-15, [70]-P-75-R-90-R-95
             kernel/1: [30]-I-35
             kernel/0: [60]-I-70
             cli/200@15 => kernel/1@30 N
             kernel/0@70 => cli/200@70
             kernel/1@35 => srv/100@35
             srv/100@45 => kernel/0@60 N"
        )
    );
    // Cut at departure: the request left at 13.
    let p = path_of(&g, CLIENT, 200, true);
    assert_eq!(
        seg_lines(&p),
        lines(
            "10-13 client cli/200 running
             13-30 server srv/100 network
             30-35 server srv/100 interrupted cpu1
             35-40 server srv/100 preempted
             40-45 server srv/100 running
             45-60 client cli/200 network
             60-70 client cli/200 interrupted cpu0
             70-75 client cli/200 preempted
             75-95 client cli/200 running"
        )
    );
}

#[test]
fn network_exchange_with_wifi() {
    let mut evs = server(true);
    evs.extend(wifi());
    let g = run(
        &["server", "client"],
        &mut evs,
        &[
            (SERVER, 100, "srv"),
            (SERVER, 101, "other"),
            (CLIENT, 200, "cli"),
            (CLIENT, 201, "other"),
        ],
    );
    assert_eq!(
        g.dump(),
        lines(
            "srv/100: [5]-N-35-P-40-R-45-R-55
             other/101: [5]-R-40-P-55
             cli/200: [10]-R-13-R-15-N(irq/30-handler)-70-P-75
             other/201: [10]-P-15-R-60
             kernel/1: [18]-I-35-I-39
             kernel/0: [48]-I-55-I-58
             irq/30-handler/50: [55]-P-60-R-65-R-70-R-75
             cli/200@13 => kernel/1@18 N
             irq/30-handler/50@70 => cli/200@70
             kernel/0@55 => irq/30-handler/50@55
             kernel/1@35 => srv/100@35
             srv/100@45 => irq/30-handler/50@65 N"
        )
    );
    // Trace Compass: 200: 10-R-13-R-15,[70]-P-75; 100: [35]-P-40-R-45; 200@15⇒100@35 N;
    // 100@45⇒200@70 N. Here the reply reaches 200 through the IRQ thread that received it.
    let p = path_of(&g, CLIENT, 200, true);
    assert_eq!(
        seg_lines(&p),
        lines(
            "10-13 client cli/200 running
             13-18 server srv/100 network
             18-35 server srv/100 interrupted cpu1
             35-40 server srv/100 preempted
             40-45 server srv/100 running
             45-65 client irq/30-handler/50 network
             65-70 client irq/30-handler/50 running
             70-75 client cli/200 preempted"
        )
    );
}

#[test]
fn network_exchange_one_trace_wifi() {
    let mut evs = wifi();
    for e in evs.iter_mut() {
        e.1 = 0;
    }
    let g = run(&["client"], &mut evs, &[(0, 200, "cli"), (0, 201, "other")]);
    // Trace Compass: 200 only, 10-R-13-R-15-N(q)-70-P-75 (no explanation of the wait). Here
    // the wait is followed to the IRQ thread and the interrupt that woke it; before that
    // interrupt it is network time.
    let p = path_of(&g, 0, 200, true);
    assert_eq!(
        seg_lines(&p),
        lines(
            "10-15 client cli/200 running
             15-48 client irq/30-handler/50 network cpu0
             48-55 client irq/30-handler/50 interrupted cpu0
             55-60 client irq/30-handler/50 preempted
             60-70 client irq/30-handler/50 running
             70-75 client cli/200 preempted"
        )
    );
}

#[test]
fn network_exchange_one_trace_softirq() {
    let mut evs = client();
    for e in evs.iter_mut() {
        e.1 = 0;
    }
    let g = run(
        &["client"],
        &mut evs,
        &[(0, 200, "cli"), (0, 201, "other"), (0, 202, "waiter")],
    );
    // Trace Compass: 10-R-13-R-15-N-70-P-75-R-90-R-95.
    let p = path_of(&g, 0, 200, true);
    assert_eq!(
        seg_lines(&p),
        lines(
            "10-15 client cli/200 running
             15-60 client cli/200 network cpu0
             60-70 client cli/200 interrupted cpu0
             70-75 client cli/200 preempted
             75-95 client cli/200 running"
        )
    );
}

/// What a wake-up's context makes of the woken thread's wait, and the vertical edges it
/// adds: hrtimer → timer; softirq by vector (timer, block, network, other); IPI (its exit
/// closes it, unlike Trace Compass); hard IRQ through the kernel worker; task → blocked with
/// an edge from the waker.
#[test]
fn wakeup_contexts() {
    let ctxs: [(Ctx, &str); 8] = [
        (Ctx::Hrtimer, "T"),
        (Ctx::Softirq(Some(1)), "T"),
        (Ctx::Softirq(Some(4)), "BD"),
        (Ctx::Softirq(Some(3)), "N"),
        (Ctx::Softirq(Some(9)), "B"),
        (Ctx::Ipi, "IPI"),
        (Ctx::Irq(Some(40)), "B"),
        (Ctx::Softirq(Some(7)), "I"),
    ];
    for (ctx, ty) in ctxs {
        let mut evs = vec![
            (10, 0, 0, sw(0, 0, 5), None),
            (20, 0, 0, sw(5, 1, 0), None),
            (30, 0, 0, KEvent::Enter(ctx), None),
            (31, 0, 0, wake(5), None),
            (32, 0, 0, KEvent::Leave(ctx), None),
            // A second wake-up while runnable changes nothing.
            (33, 0, 0, wake(5), None),
            (40, 0, 0, sw(0, 0, 5), None),
        ];
        let g = run(&["h"], &mut evs, &[(0, 5, "t")]);
        let d = g.dump();
        let first = d.lines().next().unwrap();
        assert_eq!(
            first,
            format!("t/5: [10]-R-20-{ty}-31-P-40"),
            "{ctx:?}\n{d}"
        );
        let linked = d.contains("kernel/0@31 => t/5@31");
        let expect_link = matches!(ty, "N" | "B");
        assert_eq!(linked, expect_link, "{ctx:?}\n{d}");
        // The context was left: the kernel worker's episode is closed at 32.
        assert!(d.contains("kernel/0: [30]"), "{d}");
        assert!(d.contains("-32"), "{ctx:?}\n{d}");
    }
    // Woken by a task: blocked, with an edge from the waker.
    let mut evs = vec![
        (10, 0, 0, sw(0, 0, 5), None),
        (20, 0, 0, sw(5, 1, 6), None),
        (25, 0, 0, wake(5), None),
        (30, 0, 0, sw(6, 1, 5), None),
    ];
    let g = run(&["h"], &mut evs, &[(0, 5, "t"), (0, 6, "w")]);
    assert_eq!(
        g.dump(),
        lines(
            "t/5: [10]-R-20-B-25-P-30
             w/6: [20]-R-25-R-30
             w/6@25 => t/5@25"
        )
    );
}

/// Fork: the child's first wake-up links the parent to it.
#[test]
fn fork_links_parent_to_child() {
    let mut evs = vec![
        (10, 0, 0, sw(0, 0, 5), None),
        (
            12,
            0,
            0,
            KEvent::Fork {
                parent_tid: 5,
                child_tid: 7,
                child_comm: "child",
            },
            None,
        ),
        (
            13,
            0,
            0,
            KEvent::WakeupNew {
                tid: 7,
                comm: "child",
            },
            None,
        ),
        (20, 0, 0, sw(5, 1, 7), None),
    ];
    let g = run(&["h"], &mut evs, &[(0, 5, "parent")]);
    assert_eq!(
        g.dump(),
        lines(
            "parent/5: [10]-R-13-R-20
             child/7: [13]-P-20
             parent/5@13 => child/7@13"
        )
    );
}

/// A hard IRQ that raises a softirq run right after it is one interrupt episode: a packet
/// received in the softirq arrives at the IRQ's entry.
#[test]
fn raised_softirq_continues_the_episode() {
    let mut evs = vec![
        (10, 0, 0, KEvent::Enter(Ctx::Irq(Some(25))), None),
        (11, 0, 0, KEvent::SoftirqRaise { vec: Some(3) }, None),
        (12, 0, 0, KEvent::Leave(Ctx::Irq(Some(25))), None),
        (14, 0, 0, KEvent::Enter(Ctx::Softirq(Some(3))), None),
        (15, 0, 0, KEvent::NetRecv, Some(1)),
        (16, 0, 0, KEvent::Leave(Ctx::Softirq(Some(3))), None),
        (5, 1, 0, KEvent::NetSend, Some(1)),
    ];
    let g = run(&["a", "b"], &mut evs, &[]);
    let d = g.dump();
    assert!(d.contains("kernel/0: [10]-I-16"), "{d}");
}

/// A thread that exited has no history after its last switch-out; a live one's last state
/// goes on until the end of the trace.
#[test]
fn exited_threads_end() {
    let mut b = Builder::new();
    b.add_host("h");
    b.event(0, 0, 10, &sw(0, 0, 5));
    b.event(0, 0, 20, &KEvent::Exit { tid: 5 });
    b.event(0, 0, 21, &sw(5, 64, 6));
    let (g, _) = b.finish(100);
    assert_eq!(g.dump(), lines("/5: [10]-R-21\n/6: [21]-R-100"));
}
