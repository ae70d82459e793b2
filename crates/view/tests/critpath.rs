//! The Critical Path output on a generated client-server scenario, hosts synchronized: its
//! segments are `tracekit critpath`'s, and follow the generator's ground truth across hosts.

mod common;

use std::sync::Arc;

use common::*;
use serde_json::json;
use view::{AppState, Config};

#[tokio::test]
async fn critical_path_across_hosts() {
    let out = tempfile::tempdir().unwrap();
    let gen = scenario::client_server::generate(
        &out.path().join("cs"),
        &scenario::client_server::ClientServerParams {
            requests: 12,
            ..Default::default()
        },
    )
    .unwrap();
    let m = scenario::ground_truth::MarkedRequest::read(&gen.ground_truth)
        .unwrap()
        .expect("a marked request");
    let st = AppState::new(Config {
        sync: true,
        ..Default::default()
    });
    let dirs: Vec<&std::path::Path> = gen.dirs.iter().map(|d| d.as_path()).collect();
    let (exp, _) = experiment(&st, &dirs).await;

    // The request's span on the synchronized time line, as `tracekit demo` computes it.
    let traces = ctf::open_all(&gen.dirs).unwrap();
    let ci = traces
        .iter()
        .position(|t| t.hostname() == Some(m.client.as_str()))
        .unwrap();
    let maps = sync::synchronize(&traces, &sync::SyncOptions::default()).time_maps();
    let on_line = |t: i64| ctf::merge::TimeMap::map(&maps, ci, m.on_client(t));
    let (begin, end) = (on_line(m.begin), on_line(m.end));
    let thread = json!({"tid": m.tid, "host": m.client, "begin": begin, "end": end});

    let r = query(
        &st,
        &exp,
        &format!("timeGraph/{CRITICAL_PATH}/tree"),
        thread.clone(),
    )
    .await;
    assert_eq!(r.status.as_u16(), 200, "{}", r.text);
    let entries = r.json["model"]["entries"].as_array().unwrap().clone();
    let hosts = entries.iter().filter(|e| e["parentId"] == -1).count();
    let hosts_seen = hosts;
    let mut params = thread.clone();
    params["requested_timerange"] = json!({"start": begin, "end": end, "nbTimes": 2000});
    let r = query(
        &st,
        &exp,
        &format!("timeGraph/{CRITICAL_PATH}/states"),
        params.clone(),
    )
    .await;
    assert_eq!(r.status.as_u16(), 200, "{}", r.text);
    let mut got: Vec<(i64, i64, String, String, i64)> = Vec::new();
    for row in r.json["model"]["rows"].as_array().unwrap() {
        let e = entries.iter().find(|e| e["id"] == row["entryId"]).unwrap();
        let host = e["metadata"]["host"][0].as_str().unwrap().to_string();
        let tid = e["metadata"]["tid"][0].as_i64().unwrap();
        for s in row["states"].as_array().unwrap() {
            got.push((
                s["start"].as_i64().unwrap(),
                s["end"].as_i64().unwrap(),
                s["label"].as_str().unwrap().to_string(),
                host.clone(),
                tid,
            ));
        }
    }
    got.sort();

    // `tracekit critpath --sync --tid … --host … --begin … --end …`'s computation.
    let built = critpath::input::build_graph(
        &traces,
        critpath::input::BuildOptions {
            time_map: Some(Arc::new(maps.clone())),
            matcher: None,
        },
    );
    let report =
        critpath::path_of_thread(&built, m.tid, Some(&m.client), Some(begin), Some(end), true)
            .unwrap();
    let want: Vec<(i64, i64, String, String, i64)> = report
        .path
        .iter()
        .map(|s| (s.start, s.end, s.state.to_string(), s.host.clone(), s.tid))
        .collect();
    assert_eq!(got, want);
    assert!(hosts_seen >= 2, "the path crosses hosts: {got:?}");

    // The generator's truth: the same (host, thread, state) sequence.
    let shape = |v: Vec<(String, i64, String)>| {
        let mut out: Vec<(String, i64, String)> = Vec::new();
        for x in v {
            if out.last() != Some(&x) {
                out.push(x);
            }
        }
        out
    };
    let seq = shape(
        got.iter()
            .map(|g| (g.3.clone(), g.4, g.2.clone()))
            .collect(),
    );
    assert_eq!(seq, shape(m.critical_path.clone()));

    // Arrows where the path changes thread, styles for every state.
    let r = query(
        &st,
        &exp,
        &format!("timeGraph/{CRITICAL_PATH}/arrows"),
        params,
    )
    .await;
    let arrows = r.json["model"].as_array().unwrap();
    let changes = got
        .windows(2)
        .filter(|w| (&w[0].3, w[0].4) != (&w[1].3, w[1].4))
        .count();
    assert_eq!(arrows.len(), changes, "{}", r.text);
    let r = query(&st, &exp, &format!("{CRITICAL_PATH}/style"), thread).await;
    for g in &got {
        assert!(
            r.json["model"]["styles"][&g.2].is_object(),
            "style of {}",
            g.2
        );
    }
}
