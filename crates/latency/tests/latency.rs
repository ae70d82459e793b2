//! `tracekit latency` trackers on a generated trace with known latencies, and on the shared
//! real traces (no crash, sensible counts; needs `TRACEKIT_SHARED`).

use latency::{run_traces, Config, Report, Tracker};
use scenario::common::{
    block_complete, block_issue, irq_entry, irq_exit, read_entry, read_exit, switch, wake, Task,
};
use scenario::lttng::ev;

use testkit::CLOCK_OFFSET_NS as OFFSET;
const MS: u64 = 1_000_000;

fn write_trace(dir: &std::path::Path) {
    let mut w = testkit::small_kernel_writer(dir, 3, 2);
    let (s0, s1) = (Task::swapper(0), Task::swapper(1));
    let a = Task::new(100, 100, "alpha");
    let b = Task::new(200, 200, "beta");
    let c = Task::new(300, 300, "gamma");
    // CPU 0: alpha runs, blocks at 1 ms (S); beta runs until 4 ms; alpha back at 4 ms.
    w.write_event(0, ev::SCHED_SWITCH, 100, &switch(&s0, 0, &a))
        .unwrap();
    w.write_event(1, ev::SCHED_SWITCH, 200, &switch(&s1, 0, &c))
        .unwrap();
    // alpha: read 0.5 ms (under the threshold).
    w.write_event(0, ev::SYS_READ, 300, &read_entry(3, 10))
        .unwrap();
    w.write_event(0, ev::SYSX_READ, 300 + MS / 2, &read_exit(10, 0))
        .unwrap();
    // alpha: read entered at 0.9 ms, blocks, returns at 4.5 ms: 3.6 ms.
    w.write_event(0, ev::SYS_READ, 900_000, &read_entry(3, 10))
        .unwrap();
    w.write_event(0, ev::SCHED_SWITCH, MS, &switch(&a, 1, &b))
        .unwrap();
    // gamma (CPU 1) wakes alpha at 1.5 ms: wakeup latency 2.5 ms, off-CPU 3 ms.
    w.write_event(1, ev::SCHED_WAKING, 1_500_000, &wake(&a, 0))
        .unwrap();
    // A 2 ms block request, and a 0.2 ms one.
    w.write_event(
        1,
        ev::BLOCK_ISSUE,
        2 * MS,
        &block_issue(8, 1000, 8, false, &c),
    )
    .unwrap();
    w.write_event(
        1,
        ev::BLOCK_ISSUE,
        2 * MS + 10,
        &block_issue(8, 2000, 8, true, &c),
    )
    .unwrap();
    w.write_event(
        1,
        ev::BLOCK_COMPLETE,
        2 * MS + 200_010,
        &block_complete(8, 2000, 8, true),
    )
    .unwrap();
    // A 1.2 ms hard IRQ on CPU 1.
    w.write_event(1, ev::IRQ_ENTRY, 2_500_000, &irq_entry(11, "eth0"))
        .unwrap();
    w.write_event(1, ev::IRQ_EXIT, 3_700_000, &irq_exit(11))
        .unwrap();
    w.write_event(
        1,
        ev::BLOCK_COMPLETE,
        4 * MS,
        &block_complete(8, 1000, 8, false),
    )
    .unwrap();
    w.write_event(0, ev::SCHED_SWITCH, 4 * MS, &switch(&b, 0, &a))
        .unwrap();
    w.write_event(0, ev::SYSX_READ, 4_500_000, &read_exit(10, 0))
        .unwrap();
    // gamma enters a read that never returns: timeout at 5 ms + 1 s.
    w.write_event(1, ev::SYS_READ, 5 * MS, &read_entry(4, 10))
        .unwrap();
    w.write_event(0, ev::SCHED_SWITCH, 1_500 * MS, &switch(&a, 0, &s0))
        .unwrap();
    w.finish().unwrap();
}

fn run(dir: &std::path::Path, trackers: &[Tracker]) -> (Vec<Report>, latency::Summary) {
    let traces = ctf::open_all(&[dir.to_path_buf()]).unwrap();
    let mut v = Vec::new();
    let s = run_traces(&traces, trackers, Config::default(), |r| {
        v.push(r);
        Ok::<(), ()>(())
    })
    .unwrap();
    (v, s)
}

#[test]
fn known_latencies() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("kernel");
    write_trace(&dir);
    let (r, s) = run(&dir, &Tracker::ALL);
    let of = |t: Tracker| -> Vec<&Report> { r.iter().filter(|x| x.tracker == t).collect() };

    let w = of(Tracker::Wakeup);
    assert_eq!(w.len(), 1, "{w:?}");
    assert_eq!(w[0].latency, 2_500_000);
    assert_eq!(w[0].tid, Some(100));
    assert_eq!(w[0].comm.as_deref(), Some("alpha"));
    assert_eq!(w[0].waker, Some((300, "gamma".to_string())));
    assert_eq!(w[0].begin, OFFSET + 1_500_000);

    let off = of(Tracker::Offcpu);
    // alpha 3 ms (woken by gamma); beta, switched out (preempted) at 4 ms, never comes back:
    // a timeout 1 s later.
    assert_eq!(off.len(), 2, "{off:?}");
    assert!(off[1].timeout);
    assert_eq!(
        (off[1].tid, off[1].end),
        (Some(200), OFFSET + 1_004_000_000)
    );
    assert_eq!((off[0].tid, off[0].latency), (Some(100), 3 * MS as i64));
    assert_eq!(off[0].waker, Some((300, "gamma".to_string())));
    assert!(off[0].detail.starts_with("state S"), "{}", off[0].detail);

    let sys = of(Tracker::Syscall);
    let lat: Vec<(i64, bool)> = sys.iter().map(|x| (x.latency, x.timeout)).collect();
    // The 3.6 ms read, then gamma's pending read timing out after 1 s.
    assert_eq!(lat, vec![(3_600_000, false), (1_000_000_000, true)]);
    assert_eq!(sys[0].detail, "read = 10");
    assert_eq!(sys[1].tid, Some(300));
    assert_eq!(sys[1].end, OFFSET + 5_000_000 + 1_000_000_000);

    let blk = of(Tracker::Block);
    assert_eq!(blk.len(), 1);
    assert_eq!(blk[0].latency, 2 * MS as i64);
    assert_eq!(blk[0].tid, Some(300));

    let irq = of(Tracker::Irq);
    assert_eq!(irq.len(), 1);
    assert_eq!((irq[0].latency, irq[0].cpu), (1_200_000, Some(1)));

    // Reports come out in time order of detection.
    let ends: Vec<i64> = r.iter().map(|x| x.end).collect();
    assert!(ends.windows(2).all(|p| p[0] <= p[1]), "{ends:?}");

    let sc = s
        .trackers
        .iter()
        .find(|t| t.tracker == Tracker::Syscall)
        .unwrap();
    assert_eq!(sc.counters.matched, 2);
    assert_eq!(sc.counters.reported, 1);
    assert_eq!(sc.counters.timeouts, 1);
    assert_eq!(sc.pending, 1);
    assert_eq!((sc.min, sc.max), (Some(500_000), Some(3_600_000)));
    // log2 buckets: 500 µs in [2^18, 2^19), 3.6 ms in [2^21, 2^22).
    assert_eq!(sc.hist, vec![(1 << 18, 1), (1 << 21, 1)]);
    let bk = s
        .trackers
        .iter()
        .find(|t| t.tracker == Tracker::Block)
        .unwrap();
    assert_eq!(bk.counters.matched, 2);

    // Only the selected trackers run; a lower threshold reports more.
    let traces = ctf::open_all(std::slice::from_ref(&dir)).unwrap();
    let mut v = Vec::new();
    run_traces(
        &traces,
        &[Tracker::Syscall],
        Config {
            threshold: 100_000,
            timeout: None,
            max_pending: 16,
        },
        |r| {
            v.push(r);
            Ok::<(), ()>(())
        },
    )
    .unwrap();
    let lat: Vec<i64> = v.iter().map(|x| x.latency).collect();
    assert_eq!(lat, vec![500_000, 3_600_000]);
}

#[test]
fn shared_traces() {
    let Some(shared) = std::env::var_os("TRACEKIT_SHARED") else {
        eprintln!("TRACEKIT_SHARED is not set: skipping the latency tests on shared traces");
        return;
    };
    let shared = std::path::PathBuf::from(shared);
    for t in [
        "bug446190",
        "flipping-endianness",
        "basic-kernel-analysis",
        "synctraces/scp_src",
    ] {
        let dir = shared.join("traces/kernel").join(t);
        let (r, s) = run(&dir, &Tracker::ALL);
        for x in &r {
            assert!(x.latency >= 0 && x.end >= x.begin, "{t}: {x:?}");
            assert!(x.timeout || x.latency >= 1_000_000, "{t}: {x:?}");
        }
        let get = |k: Tracker| s.trackers.iter().find(|x| x.tracker == k).unwrap();
        // Every trace has context switches and IRQs.
        assert!(get(Tracker::Offcpu).counters.matched > 100, "{t}");
        assert!(get(Tracker::Irq).counters.matched > 100, "{t}");
        if t != "flipping-endianness" {
            // It has no wakeup events.
            assert!(get(Tracker::Wakeup).counters.matched > 100, "{t}");
        }
        if t == "basic-kernel-analysis" {
            assert!(get(Tracker::Syscall).counters.matched > 10_000);
            assert!(get(Tracker::Block).counters.matched > 50);
        }
    }
}

/// `run_traces` reads each event class's fields by positions found once per class; the same
/// events fed one by one through `input_of` (fields by name, the reference) give the same
/// reports and summary, on a generated kernel mix with a threshold low enough to report often.
#[test]
fn fields_by_position_read_what_fields_by_name_read() {
    use latency::{input_of, Latency};
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("mix");
    testkit::kernel_mix(&dir, 60_000, 3, 11);
    let config = Config {
        threshold: 10_000,
        timeout: Some(50_000_000),
        max_pending: 1 << 16,
    };
    let traces = ctf::open_all(std::slice::from_ref(&dir)).unwrap();
    let mut fast = Vec::new();
    let fast_summary = run_traces(&traces, &Tracker::ALL, config, |r| {
        fast.push(r);
        Ok::<(), ()>(())
    })
    .unwrap();

    let mut lat = Latency::new(&Tracker::ALL, config);
    let mut by_name = Vec::new();
    let mut merger = ctf::Merger::new(&traces);
    let mut fed = 0;
    while let Some(m) = merger.next() {
        if *m != ctf::Message::Event {
            continue;
        }
        let (Some(ts), Some(ev)) = (merger.current_time(), merger.event()) else {
            continue;
        };
        let cpu = ev
            .packet_context()
            .and_then(|p| p.field("cpu_id"))
            .and_then(|f| f.as_u64())
            .map_or(ev.stream_index() as u32, |c| c as u32);
        match input_of(&ev, cpu) {
            Some(i) => {
                fed += 1;
                lat.feed(ts, &i, &mut by_name)
            }
            None => lat.advance(ts, &mut by_name),
        }
    }
    assert!(fed > 40_000, "{fed} events fed");
    assert!(by_name.len() > 100, "{} reports", by_name.len());
    assert_eq!(fast, by_name);
    assert_eq!(fast_summary, lat.finish());
}
