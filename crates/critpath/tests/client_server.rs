//! The generated client-server scenario: the critical path of the marked request, computed
//! from the traces, equals the generator's ground truth (hosts, threads, states, times).

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
