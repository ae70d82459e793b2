//! The builder on CTF traces: Trace Compass's sched-only execution-graph scenario written as
//! an LTTng 2.13 trace, and the real `bug446190` trace (when `TRACEKIT_SHARED` points at the
//! shared data).

use std::path::PathBuf;

use critpath::input::{build_graph, BuildOptions};
use critpath::report::{critical_path_of, find_thread};
use ctf::writer::{EventHeaderKind, TraceWriter, WriterOptions};
use scenario::common::{switch, Task};
use scenario::lttng::{ev, trace_class, HostInfo, NetLayout};

fn host() -> HostInfo {
    HostInfo {
        hostname: "sched-only".into(),
        trace_uuid: [1; 16],
        clock_uuid: [2; 16],
        clock_offset_ns: 0,
        creation: "20240305T101500+0000".into(),
        trace_name: "sched-only".into(),
        kernel_release: "6.1.0".into(),
    }
}

#[test]
fn sched_only_trace() {
    // `LttngExecutionGraphTest` (sched_only.xml): CPU 0 switches 1→2 (runnable) at 10,
    // 2→1 (blocked, state 3) at 20, 1→2 at 30, 2→1 at 40.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("trace");
    let tc = trace_class(&host(), NetLayout::NetworkHeader, EventHeaderKind::Compact);
    let mut w = TraceWriter::create(&path, &tc, 1, &WriterOptions::default()).unwrap();
    let (t1, t2) = (Task::new(1, 1, "one"), Task::new(2, 2, "two"));
    for (ts, prev, state, next) in [
        (10, &t1, 0, &t2),
        (20, &t2, 3, &t1),
        (30, &t1, 0, &t2),
        (40, &t2, 0, &t1),
    ] {
        w.write_event(0, ev::SCHED_SWITCH, ts, &switch(prev, state, next))
            .unwrap();
    }
    w.finish().unwrap();
    let traces = ctf::open_all(&[&path]).unwrap();
    let built = build_graph(&traces, BuildOptions::default());
    assert_eq!(
        built.graph.dump(),
        "one/1: [10]-P-20-R-30-P-40\ntwo/2: [10]-R-20-B-30-R-40\n"
    );
    let r = critical_path_of(
        &built.graph,
        find_thread(&built.graph, 2, None).unwrap(),
        10,
        40,
        true,
    );
    let got: Vec<(i64, i64, &str)> = r.path.iter().map(|s| (s.start, s.end, s.state)).collect();
    // Thread 2's wait (20-30) was not explained by a wake-up: it stays blocked.
    assert_eq!(
        got,
        vec![
            (10, 20, "running"),
            (20, 30, "blocked"),
            (30, 40, "running")
        ]
    );
}

fn shared() -> Option<PathBuf> {
    std::env::var_os("TRACEKIT_SHARED").map(PathBuf::from)
}

/// Trace Compass's `CriticalPathTest` (SWTBot) follows weston/338 in bug446190: with the
/// selection at 1412670963.793647239 the current path segment of weston ends at
/// 1412670963.793673139, and the next one is kworker/u16:0 (tid 6).
#[test]
fn bug446190_weston_hands_off_to_kworker() {
    let Some(root) = shared() else {
        eprintln!("TRACEKIT_SHARED unset: skipping the bug446190 critical path test");
        return;
    };
    let traces = ctf::open_all(&[root.join("traces/kernel/bug446190")]).unwrap();
    let built = build_graph(&traces, BuildOptions::default());
    let g = &built.graph;
    let w = find_thread(g, 338, None).unwrap();
    assert_eq!(g.worker(w).comm, "weston");
    let r = critical_path_of(g, w, built.first_ts, built.last_ts, true);
    let t0 = 1_412_670_963_793_647_239;
    let t1 = 1_412_670_963_793_673_139;
    let i = r
        .path
        .iter()
        .position(|s| s.start <= t0 && t0 < s.end)
        .expect("a segment at the selection");
    let cur = &r.path[i];
    assert_eq!((cur.tid, cur.comm.as_str()), (338, "weston"));
    assert_eq!(cur.end, t1);
    let next = &r.path[i + 1];
    assert_eq!((next.tid, next.comm.as_str()), (6, "kworker/u16:0"));
    assert_eq!(next.start, t1);
}
