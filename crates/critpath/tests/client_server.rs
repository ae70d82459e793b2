//! The generated client-server scenario: the critical path of the marked request, computed
//! from the traces, equals the generator's ground truth (hosts, threads, states, times).

use std::sync::Arc;

use critpath::input::{build_graph, BuildOptions};
use critpath::report::{critical_path_of, find_thread};
use scenario::client_server::{generate, ClientServerParams};
use serde_json::Value;

#[derive(Debug, Clone, PartialEq, Eq)]
struct Seg {
    host: String,
    tid: i64,
    state: String,
    begin: i64,
    end: i64,
}

/// Adjacent segments of one thread in one state are one.
fn merge(v: Vec<Seg>) -> Vec<Seg> {
    let mut out: Vec<Seg> = Vec::new();
    for s in v {
        if let Some(l) = out.last_mut() {
            if l.end == s.begin && l.host == s.host && l.tid == s.tid && l.state == s.state {
                l.end = s.end;
                continue;
            }
        }
        out.push(s);
    }
    out
}

fn num(v: &Value) -> i64 {
    v.as_str().unwrap().parse().unwrap()
}

/// Generates with aligned clocks (no offset, no drift) so that no synchronization is
/// needed, computes the marked request's path and compares it with the ground truth.
fn check(seed: u64, hosts: u32) {
    let dir = tempfile::tempdir().unwrap();
    let p = ClientServerParams {
        seed,
        hosts,
        max_offset_s: 0,
        max_drift_ppm: 0,
        requests: 12,
        ..Default::default()
    };
    let out = generate(dir.path(), &p).unwrap();
    let gt: Value =
        serde_json::from_str(&std::fs::read_to_string(&out.ground_truth).unwrap()).unwrap();
    let m = &gt["marked_request"];
    let expected = merge(
        m["critical_path"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| Seg {
                host: s["host"].as_str().unwrap().to_string(),
                tid: s["tid"].as_i64().unwrap(),
                state: s["state"].as_str().unwrap().to_string(),
                begin: num(&s["begin"]),
                end: num(&s["end"]),
            })
            .collect(),
    );
    let traces = ctf::open_all(&out.dirs).unwrap();
    let built = build_graph(&traces, BuildOptions::default());
    let g = &built.graph;
    let w = find_thread(g, m["tid"].as_i64().unwrap(), m["client"].as_str()).unwrap();
    let r = critical_path_of(g, w, num(&m["begin"]), num(&m["end"]), true);
    let got = merge(
        r.path
            .iter()
            .map(|s| Seg {
                host: s.host.clone(),
                tid: s.tid,
                state: s.state.to_string(),
                begin: s.start,
                end: s.end,
            })
            .collect(),
    );
    if got != expected {
        let show = |v: &[Seg]| {
            v.iter()
                .map(|s| format!("{} {} {} {} {}", s.begin, s.end, s.host, s.tid, s.state))
                .collect::<Vec<_>>()
                .join("\n")
        };
        panic!(
            "seed {seed}, {hosts} hosts\ngot:\n{}\nexpected:\n{}",
            show(&got),
            show(&expected)
        );
    }
    assert_eq!(built.stats.packet_links_refused, 0);
}

#[test]
fn marked_request_three_hosts() {
    for seed in 1..=4 {
        check(seed, 3);
    }
}

#[test]
fn marked_request_two_and_five_hosts() {
    check(7, 2);
    check(11, 5);
}

/// Drifting, offset clocks: the hosts are synchronized first (the synchronization crate's
/// time maps), then the path, taken back to true time through the reference host's clock
/// formula, equals the ground truth within the synchronization's accuracy.
fn check_synced(seed: u64, hosts: u32) -> i64 {
    let dir = tempfile::tempdir().unwrap();
    let p = ClientServerParams {
        seed,
        hosts,
        requests: 30,
        ..Default::default()
    };
    let out = generate(dir.path(), &p).unwrap();
    let gt: Value =
        serde_json::from_str(&std::fs::read_to_string(&out.ground_truth).unwrap()).unwrap();
    let m = &gt["marked_request"];
    // The clock formulas are known to within the packets' one-way delays.
    let tolerance_ns = 2 * gt["min_one_way_delay_ns"].as_i64().unwrap();
    let traces = ctf::open_all(&out.dirs).unwrap();
    let session = sync::synchronize(&traces, &sync::SyncOptions::default());
    let reference = traces[session.reference_trace()]
        .hostname()
        .unwrap()
        .to_string();
    let clocks = scenario::ground_truth::HostClock::read_all(&out.ground_truth).unwrap();
    let to_true = |r: i64| clocks[&reference].true_time(r as i128) as i64;
    let built = build_graph(
        &traces,
        BuildOptions {
            time_map: Some(Arc::new(session.time_maps())),
            matcher: None,
        },
    );
    assert_eq!(
        built.stats.packet_links_refused, 0,
        "a packet went back in time"
    );
    let g = &built.graph;
    let w = find_thread(g, m["tid"].as_i64().unwrap(), m["client"].as_str()).unwrap();
    // The request's begin and end are times of the client: its clock, then the time map.
    let client = m["client"].as_str().unwrap();
    let ci = traces
        .iter()
        .position(|t| t.hostname() == Some(client))
        .unwrap();
    let maps = session.time_maps();
    let on_client = |t: i64| {
        let host_ns = clocks[client].at(t as i128) as i64;
        ctf::merge::TimeMap::map(&maps, ci, host_ns)
    };
    let r = critical_path_of(
        g,
        w,
        on_client(num(&m["begin"])),
        on_client(num(&m["end"])),
        true,
    );
    let got = merge(
        r.path
            .iter()
            .map(|s| Seg {
                host: s.host.clone(),
                tid: s.tid,
                state: s.state.to_string(),
                begin: to_true(s.start),
                end: to_true(s.end),
            })
            .collect(),
    );
    let expected = merge(
        m["critical_path"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| Seg {
                host: s["host"].as_str().unwrap().to_string(),
                tid: s["tid"].as_i64().unwrap(),
                state: s["state"].as_str().unwrap().to_string(),
                begin: num(&s["begin"]),
                end: num(&s["end"]),
            })
            .collect(),
    );
    let show = |v: &[Seg]| {
        v.iter()
            .map(|s| format!("{} {} {} {} {}", s.begin, s.end, s.host, s.tid, s.state))
            .collect::<Vec<_>>()
            .join("\n")
    };
    let same_shape = got.len() == expected.len()
        && got
            .iter()
            .zip(&expected)
            .all(|(a, b)| a.host == b.host && a.tid == b.tid && a.state == b.state);
    let worst = got
        .iter()
        .zip(&expected)
        .map(|(a, b)| (a.begin - b.begin).abs().max((a.end - b.end).abs()))
        .max()
        .unwrap_or(0);
    assert!(
        same_shape && worst <= tolerance_ns,
        "seed {seed}, {hosts} hosts (reference {reference}), worst boundary error {worst} ns\ngot:\n{}\nexpected:\n{}",
        show(&got),
        show(&expected)
    );
    worst
}

#[test]
fn marked_request_synchronized_hosts() {
    let mut worst = 0;
    for (seed, hosts) in [(1, 3), (2, 3), (3, 2), (4, 4)] {
        worst = worst.max(check_synced(seed, hosts));
    }
    eprintln!("worst boundary error after synchronization: {worst} ns");
}
