//! The TSP back end through its router (no network) on generated traces: replies checked
//! against the trace's own events, `tracekit print`'s output and the state model; bad
//! requests; a broken trace; the access token.

mod common;

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::OnceLock;

use axum::http::StatusCode;
use common::*;
use serde_json::{json, Value};
use view::{AppState, Config};

struct Fixture {
    state: AppState,
    exp: String,
    info: Value,
    dir: PathBuf,
}

/// One indexed experiment of a generated kernel trace, shared by the tests.
fn mix() -> &'static Fixture {
    static F: OnceLock<Fixture> = OnceLock::new();
    F.get_or_init(|| {
        // Made on a thread of its own: the tests' runtimes cannot block on another.
        std::thread::spawn(|| {
            let dir = kernel_mix("api", 30_000, 4, 7);
            let state = state();
            let rt = tokio::runtime::Runtime::new().expect("runtime");
            let (exp, info) = rt.block_on(experiment(&state, &[&dir]));
            Fixture {
                state,
                exp,
                info,
                dir,
            }
        })
        .join()
        .expect("fixture")
    })
}

fn range(f: &Fixture) -> (i64, i64) {
    (
        f.info["start"].as_i64().expect("start"),
        f.info["end"].as_i64().expect("end"),
    )
}

#[tokio::test]
async fn health_outputs_and_experiment() {
    let f = mix();
    let r = call(&f.state, "GET", "/tsp/api/health", None).await;
    assert_eq!(r.json, json!({"status": "UP"}));
    assert_eq!(f.info["indexingStatus"], "COMPLETED");
    let traces = ctf::open_all(&[&f.dir]).unwrap();
    let events: u64 = {
        let mut n = 0;
        let mut ev = pipeline::RangeEvents::new(
            &traces,
            &pipeline::ReadOptions {
                no_intersection: true,
                ..Default::default()
            },
        );
        while ev.next().is_some() {
            n += 1;
        }
        n
    };
    assert_eq!(f.info["nbEvents"].as_u64(), Some(events));
    let r = call(
        &f.state,
        "GET",
        &format!("/tsp/api/experiments/{}/outputs", f.exp),
        None,
    )
    .await;
    let ids: Vec<&str> = r
        .json
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["id"].as_str().unwrap())
        .collect();
    for id in [
        CONTROL_FLOW,
        RESOURCES,
        CPU_USAGE,
        HISTOGRAM,
        EVENTS,
        CRITICAL_PATH,
    ] {
        assert!(ids.contains(&id), "{id} listed");
    }
    let r = call(&f.state, "GET", "/view/session", None).await;
    assert_eq!(r.json["experiment"].as_str(), Some(f.exp.as_str()));
    let r = call(&f.state, "GET", "/", None).await;
    assert_eq!(r.status, StatusCode::OK);
    assert!(r.headers["content-type"]
        .to_str()
        .unwrap()
        .starts_with("text/html"));
}

/// The Control Flow tree holds the threads the trace's scheduler events name; its states
/// are the state model's, at most about one per resolution step.
#[tokio::test]
async fn control_flow_tree_and_states() {
    let f = mix();
    let (start, end) = range(f);
    let r = query(
        &f.state,
        &f.exp,
        &format!("timeGraph/{CONTROL_FLOW}/tree"),
        json!({"requested_timerange": {"start": start, "end": end}}),
    )
    .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    assert_eq!(r.json["status"], "COMPLETED");
    let entries = r.json["model"]["entries"].as_array().unwrap().clone();
    let headers: Vec<&str> = r.json["model"]["headers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["name"].as_str().unwrap())
        .collect();
    assert_eq!(headers, ["Process", "TID", "PTID", "Birth time"]);
    let tree_tids: BTreeSet<i64> = entries
        .iter()
        .filter_map(|e| e["labels"][1].as_str().and_then(|t| t.parse().ok()))
        .collect();
    // Every thread switched in or out is a row (the idle threads, tid 0, aside).
    let traces = ctf::open_all(&[&f.dir]).unwrap();
    let mut seen = BTreeSet::new();
    let mut ev = pipeline::RangeEvents::new(
        &traces,
        &pipeline::ReadOptions {
            no_intersection: true,
            ..Default::default()
        },
    );
    while let Some((e, _)) = ev.next() {
        if e.name() == "sched_switch" {
            let p = e.payload().unwrap();
            for k in ["prev_tid", "next_tid"] {
                let tid = p.field(k).unwrap().as_i64().unwrap();
                if tid != 0 {
                    seen.insert(tid);
                }
            }
        }
    }
    assert!(!seen.is_empty());
    let missing: Vec<_> = seen.difference(&tree_tids).collect();
    assert!(missing.is_empty(), "threads without a row: {missing:?}");
    // Parents come before their children.
    let mut listed = BTreeSet::new();
    for e in &entries {
        let p = e["parentId"].as_i64().unwrap();
        assert!(
            p == -1 || listed.contains(&p),
            "parent {p} of {} listed before",
            e["id"]
        );
        listed.insert(e["id"].as_i64().unwrap());
    }

    // States of every row at 2000 steps: the model's own answer, in order, within range.
    let nb = 2000;
    let r = query(
        &f.state,
        &f.exp,
        &format!("timeGraph/{CONTROL_FLOW}/states"),
        json!({"requested_timerange": {"start": start, "end": end, "nbTimes": nb}}),
    )
    .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    let rows = r.json["model"]["rows"].as_array().unwrap();
    assert!(!rows.is_empty());
    let tl = timeline::Timeline::open(
        &traces,
        &timeline::BuildOptions {
            read: pipeline::ReadOptions {
                no_intersection: true,
                ..Default::default()
            },
            cache_dir: None,
        },
    )
    .unwrap()
    .0;
    let res = ((end - start) / nb).max(1);
    let mut syscall_labels = 0;
    for row in rows {
        let id = row["entryId"].as_u64().unwrap() as u32;
        let want = tl.states(id, start, end, res);
        let got = row["states"].as_array().unwrap();
        assert_eq!(got.len(), want.len(), "row {id}");
        for (g, w) in got.iter().zip(&want) {
            assert_eq!(g["start"].as_i64(), Some(w.start));
            assert_eq!(g["end"].as_i64(), Some(w.end));
            assert_eq!(g["label"].as_str(), w.label.as_deref());
            let key = g["style"]["parentKey"].as_str().unwrap();
            if key == "SYSCALL" && g["label"].is_string() {
                syscall_labels += 1;
            }
        }
        assert!(
            got.len() as i64 <= 2 * nb + 2,
            "row {id}: {} states",
            got.len()
        );
        assert!(got
            .windows(2)
            .all(|w| w[0]["end"].as_i64() <= w[1]["start"].as_i64()));
    }
    assert!(
        syscall_labels > 0,
        "system calls are labelled with their names"
    );

    // Styles: every key the states use is defined.
    let r = query(
        &f.state,
        &f.exp,
        &format!("{CONTROL_FLOW}/style"),
        json!({}),
    )
    .await;
    let styles = r.json["model"]["styles"].as_object().unwrap();
    assert_eq!(styles["USERMODE"]["values"]["background-color"], "#00c800");
    assert_eq!(styles["SYSCALL"]["values"]["background-color"], "#0000c8");

    // Tooltip of a state.
    let row = rows
        .iter()
        .find(|r| !r["states"].as_array().unwrap().is_empty())
        .unwrap();
    let s = &row["states"][0];
    let r = query(
        &f.state,
        &f.exp,
        &format!("timeGraph/{CONTROL_FLOW}/tooltip"),
        json!({"requested_items": [row["entryId"]], "requested_times": [s["start"]]}),
    )
    .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    assert!(r.json["model"]["State"].is_string(), "{}", r.text);

    // Arrows: wake-ups between listed rows, in range.
    let r = query(
        &f.state,
        &f.exp,
        &format!("timeGraph/{CONTROL_FLOW}/arrows"),
        json!({"requested_timerange": {"start": start, "end": end, "nbTimes": nb}}),
    )
    .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    for a in r.json["model"].as_array().unwrap() {
        assert!(listed.contains(&a["sourceId"].as_i64().unwrap()));
        assert!(listed.contains(&a["targetId"].as_i64().unwrap()));
        assert!(a["start"].as_i64() <= a["end"].as_i64());
    }

    // Resources: a row per CPU of the trace.
    let r = query(
        &f.state,
        &f.exp,
        &format!("timeGraph/{RESOURCES}/tree"),
        json!({}),
    )
    .await;
    let cpus = r.json["model"]["entries"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["labels"][0].as_str().unwrap().starts_with("CPU"))
        .count();
    assert_eq!(cpus, 4, "{}", r.text);
}

/// Table lines are `tracekit print`'s lines, in its order.
#[tokio::test]
async fn events_table_is_print_order() {
    let f = mix();
    let traces = ctf::open_all(&[&f.dir]).unwrap();
    let mut out = Vec::new();
    let mut err = Vec::new();
    text::print(&traces, &text::PrintOptions::default(), &mut out, &mut err).unwrap();
    let printed: Vec<&str> = std::str::from_utf8(&out).unwrap().lines().collect();
    let n = printed.len() as u64;
    assert_eq!(f.info["nbEvents"].as_u64(), Some(n));
    let r = query(
        &f.state,
        &f.exp,
        &format!("table/{EVENTS}/columns"),
        json!({}),
    )
    .await;
    let names: Vec<&str> = r.json["model"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        &names[..5],
        ["Timestamp", "Host", "CPU", "Event type", "Contents"]
    );
    for at in [0, 1, 4321, n / 2, n - 2] {
        let r = query(
            &f.state,
            &f.exp,
            &format!("table/{EVENTS}/lines"),
            json!({"requested_table_index": at, "requested_table_count": 2}),
        )
        .await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        let m = &r.json["model"];
        assert_eq!(m["size"].as_u64(), Some(n));
        assert_eq!(m["lowIndex"].as_u64(), Some(at));
        let lines = m["lines"].as_array().unwrap();
        assert_eq!(lines.len(), 2);
        for (k, l) in lines.iter().enumerate() {
            let i = at as usize + k;
            assert_eq!(l["index"].as_u64(), Some(i as u64));
            let cell = |c: usize| l["cells"][c]["content"].as_str().unwrap().to_string();
            let p = printed[i];
            assert!(
                p.starts_with(&format!("[{}]", cell(0))),
                "line {i}: {p} / {}",
                cell(0)
            );
            let name = cell(3);
            let contents = cell(4);
            assert!(
                p.ends_with(&format!(" {name}: {contents}")),
                "line {i}:\n{p}\n{name}: {contents}"
            );
            assert!(
                p.contains(&format!("cpu_id = {}", cell(2))),
                "line {i}: {p}"
            );
        }
    }
    // By time: the first event at or after a line's time.
    let r = query(&f.state, &f.exp, &format!("table/{EVENTS}/lines"), json!({"requested_table_index": 7000, "requested_table_count": 1, "requested_table_column_ids": [5]})).await;
    let t: i64 = r.json["model"]["lines"][0]["cells"][0]["content"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    let r = query(&f.state, &f.exp, &format!("table/{EVENTS}/lines"), json!({"requested_times": [t], "requested_table_count": 1, "requested_table_column_ids": [5]})).await;
    let low = r.json["model"]["lowIndex"].as_u64().unwrap();
    assert!(low <= 7000);
    assert_eq!(
        r.json["model"]["lines"][0]["cells"][0]["content"]
            .as_str()
            .unwrap()
            .parse::<i64>()
            .unwrap(),
        t
    );

    // Search: the first sched_switch from index 100 on, tagged.
    let first = printed
        .iter()
        .enumerate()
        .skip(100)
        .find(|(_, l)| l.contains(" sched_switch: "))
        .unwrap()
        .0;
    let r = query(&f.state, &f.exp, &format!("table/{EVENTS}/lines"), json!({"requested_table_index": 100, "requested_table_count": 3, "table_search_expressions": {"3": "^sched_switch$"}, "table_search_direction": "NEXT"})).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    let l = &r.json["model"]["lines"][0];
    assert_eq!(l["index"].as_u64(), Some(first as u64));
    assert_eq!(l["tags"].as_u64(), Some(4));
    let prev = printed[..=first - 1]
        .iter()
        .rposition(|l| l.contains(" sched_switch: "));
    let r = query(&f.state, &f.exp, &format!("table/{EVENTS}/lines"), json!({"requested_table_index": first - 1, "requested_table_count": 1, "table_search_expressions": {"3": "^sched_switch$"}, "table_search_direction": "PREVIOUS"})).await;
    assert_eq!(
        r.json["model"]["lines"][0]["index"].as_u64(),
        prev.map(|p| p as u64),
        "{}",
        r.text
    );
}

/// The histogram counts every event once; CPU usage stays in 0–100 %.
#[tokio::test]
async fn xy_outputs() {
    let f = mix();
    let (start, end) = range(f);
    let r = query(
        &f.state,
        &f.exp,
        &format!("XY/{HISTOGRAM}/xy"),
        json!({"requested_timerange": {"start": start, "end": end, "nbTimes": 97}}),
    )
    .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    let series = r.json["model"]["series"].as_array().unwrap();
    let events: f64 = series[0]["yValues"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().unwrap())
        .sum();
    assert_eq!(events as u64, f.info["nbEvents"].as_u64().unwrap());
    assert_eq!(series[0]["xValues"].as_array().unwrap().len(), 97);
    assert_eq!(series[0]["xValues"][0].as_i64(), Some(start));

    let r = query(
        &f.state,
        &f.exp,
        &format!("XY/{CPU_USAGE}/tree"),
        json!({"requested_timerange": {"start": start, "end": end}}),
    )
    .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    let entries = r.json["model"]["entries"].as_array().unwrap();
    let host = entries.iter().find(|e| e["parentId"] == -1).unwrap();
    let thread = entries
        .iter()
        .find(|e| e["parentId"] != -1)
        .expect("a thread ran");
    let total_ns: i64 = host["labels"][3].as_str().unwrap().parse().unwrap();
    let sum_ns: i64 = entries
        .iter()
        .filter(|e| e["parentId"] != -1)
        .map(|e| e["labels"][3].as_str().unwrap().parse::<i64>().unwrap())
        .sum();
    assert_eq!(total_ns, sum_ns);
    assert!(total_ns > 0 && total_ns <= 4 * (end - start));
    let r = query(&f.state, &f.exp, &format!("XY/{CPU_USAGE}/xy"), json!({"requested_timerange": {"start": start, "end": end, "nbTimes": 50}, "requested_items": [host["id"], thread["id"]]})).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    let series = r.json["model"]["series"].as_array().unwrap();
    assert_eq!(series.len(), 2);
    let total: Vec<f64> = series[0]["yValues"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().unwrap())
        .collect();
    let one: Vec<f64> = series[1]["yValues"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().unwrap())
        .collect();
    assert_eq!(total.len(), 50);
    assert!(
        total.iter().all(|v| (0.0..=100.0001).contains(v)),
        "{total:?}"
    );
    assert!(total.iter().any(|v| *v > 0.0));
    assert!(one.iter().zip(&total).all(|(o, t)| o <= &(t + 1e-6)));
}

/// Every bad request gets a 4xx and a JSON message naming what is wrong.
#[tokio::test]
async fn bad_requests() {
    let f = mix();
    let (start, end) = range(f);
    let e = &f.exp;
    let states = format!("/tsp/api/experiments/{e}/outputs/timeGraph/{CONTROL_FLOW}/states");
    let cases: Vec<(&str, String, Option<String>, u16, &str)> = vec![
        ("GET", "/tsp/api/experiments/nope".into(), None, 404, "nope"),
        ("GET", "/tsp/api/traces/nope".into(), None, 404, "nope"),
        ("POST", "/tsp/api/experiments/nope/outputs/timeGraph/x/states".into(), Some("{}".into()), 404, "nope"),
        ("POST", format!("/tsp/api/experiments/{e}/outputs/timeGraph/nope/states"), Some("{}".into()), 404, "nope"),
        ("POST", format!("/tsp/api/experiments/{e}/outputs/timeGraph/{CONTROL_FLOW}/nope"), Some("{}".into()), 404, "nope"),
        ("POST", states.clone(), Some("{".into()), 400, "malformed"),
        ("POST", states.clone(), Some("[]".into()), 400, "object"),
        ("POST", states.clone(), Some(r#"{"parameters": 1}"#.into()), 400, "parameters"),
        ("POST", states.clone(), Some(r#"{"parameters": {}}"#.into()), 400, "requested_timerange"),
        ("POST", states.clone(), Some(format!(r#"{{"parameters": {{"requested_timerange": {{"start": {end}, "end": {start}}}}}}}"#)), 400, "after"),
        ("POST", states.clone(), Some(format!(r#"{{"parameters": {{"requested_timerange": {{"start": {start}, "end": {end}, "nbTimes": 0}}}}}}"#)), 400, "nbTimes"),
        ("POST", states.clone(), Some(format!(r#"{{"parameters": {{"requested_timerange": {{"start": {start}, "end": {end}, "nbTimes": 65537}}}}}}"#)), 400, "nbTimes"),
        ("POST", states.clone(), Some(format!(r#"{{"parameters": {{"requested_timerange": {{"start": "x", "end": {end}}}}}}}"#)), 400, "requested_timerange.start"),
        ("POST", states.clone(), Some(format!(r#"{{"parameters": {{"requested_timerange": {{"start": {start}, "end": {end}}}, "requested_items": [99999999]}}}}"#)), 400, "requested_items"),
        ("POST", format!("/tsp/api/experiments/{e}/outputs/XY/{CONTROL_FLOW}/xy"), Some("{}".into()), 400, "xy"),
        ("POST", format!("/tsp/api/experiments/{e}/outputs/table/{EVENTS}/lines"), Some(r#"{"parameters": {"requested_table_index": 0}}"#.into()), 400, "requested_table_count"),
        ("POST", format!("/tsp/api/experiments/{e}/outputs/table/{EVENTS}/lines"), Some(r#"{"parameters": {"requested_table_index": -1, "requested_table_count": 1}}"#.into()), 400, "requested_table_index"),
        ("POST", format!("/tsp/api/experiments/{e}/outputs/table/{EVENTS}/lines"), Some(r#"{"parameters": {"requested_table_index": 0, "requested_table_count": 1, "table_search_expressions": {"3": "("}}}"#.into()), 400, "table_search_expressions.3"),
        ("POST", format!("/tsp/api/experiments/{e}/outputs/table/{EVENTS}/lines"), Some(r#"{"parameters": {"requested_table_index": 0, "requested_table_count": 1, "requested_table_column_ids": [42]}}"#.into()), 400, "column"),
        ("POST", format!("/tsp/api/experiments/{e}/outputs/timeGraph/{CRITICAL_PATH}/tree"), Some("{}".into()), 400, "tid"),
        ("POST", format!("/tsp/api/experiments/{e}/outputs/timeGraph/{CRITICAL_PATH}/tree"), Some(r#"{"parameters": {"tid": 999999}}"#.into()), 400, "999999"),
        ("POST", "/tsp/api/traces".into(), Some(r#"{"parameters": {"uri": "/no/such/trace"}}"#.into()), 404, "/no/such/trace"),
        ("POST", "/tsp/api/traces".into(), Some(r#"{"parameters": {}}"#.into()), 400, "uri"),
        ("POST", "/tsp/api/experiments".into(), Some(r#"{"parameters": {"name": "x", "traces": ["nope"]}}"#.into()), 404, "nope"),
        ("POST", "/tsp/api/experiments".into(), Some(r#"{"parameters": {"name": "x", "traces": 3}}"#.into()), 400, "traces"),
        ("GET", "/no-such-file.js".into(), None, 404, "no-such-file.js"),
        ("PATCH", "/tsp/api/health".into(), None, 405, "PATCH"),
        ("GET", states.clone(), None, 405, "GET"),
    ];
    for (method, uri, body, status, needle) in cases {
        let r = call_raw(&f.state, method, &uri, body.clone(), &[]).await;
        assert_eq!(
            r.status.as_u16(),
            status,
            "{method} {uri} {body:?}: {}",
            r.text
        );
        let title = r.json["title"]
            .as_str()
            .unwrap_or_else(|| panic!("{method} {uri}: no JSON title: {}", r.text));
        assert!(
            title.contains(needle),
            "{method} {uri} {body:?}: {title:?} lacks {needle:?}"
        );
    }
}

mod fuzz {
    use super::*;
    use proptest::prelude::*;

    fn json_value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::from),
            any::<i64>().prop_map(Value::from),
            any::<f64>()
                .prop_filter("finite", |f| f.is_finite())
                .prop_map(Value::from),
            (0i64..100).prop_map(Value::from),
            "[a-zA-Z_0-9()*.]{0,8}".prop_map(Value::from),
        ];
        leaf.prop_recursive(3, 24, 4, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(Value::from),
                prop::collection::btree_map(
                    prop_oneof![
                        Just("start".to_string()),
                        Just("end".to_string()),
                        Just("nbTimes".to_string()),
                        Just("3".to_string()),
                        "[a-z]{1,4}",
                    ],
                    inner,
                    0..4
                )
                .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    fn params() -> impl Strategy<Value = Value> {
        prop::collection::btree_map(
            prop_oneof![
                Just("requested_timerange".to_string()),
                Just("requested_items".to_string()),
                Just("requested_times".to_string()),
                Just("requested_table_index".to_string()),
                Just("requested_table_count".to_string()),
                Just("requested_table_column_ids".to_string()),
                Just("table_search_expressions".to_string()),
                Just("table_search_direction".to_string()),
                Just("tid".to_string()),
                Just("thread_row".to_string()),
            ],
            json_value(),
            0..5,
        )
        .prop_map(|m| json!({ "parameters": Value::Object(m.into_iter().collect()) }))
    }

    const ENDPOINTS: &[(&str, &str)] = &[
        ("timeGraph", "tree"),
        ("timeGraph", "states"),
        ("timeGraph", "arrows"),
        ("timeGraph", "tooltip"),
        ("XY", "xy"),
        ("XY", "tree"),
        ("table", "lines"),
    ];
    const OUTPUTS: &[&str] = &[
        CONTROL_FLOW,
        RESOURCES,
        CPU_USAGE,
        HISTOGRAM,
        EVENTS,
        CRITICAL_PATH,
    ];

    proptest! {
        #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]
        /// Whatever the parameters, a reply (2xx or 4xx with a message), never a failure.
        #[test]
        fn parameters_never_fail(body in params(), ep in 0..ENDPOINTS.len(), out in 0..OUTPUTS.len()) {
            let f = mix();
            let (kind, what) = ENDPOINTS[ep];
            // Bounded counts keep each case quick.
            let mut body = body;
            if let Some(c) = body["parameters"].get_mut("requested_table_count") {
                if c.as_u64().is_some_and(|c| c > 50) { *c = json!(50); }
            }
            let uri = format!("/tsp/api/experiments/{}/outputs/{kind}/{}/{what}", f.exp, OUTPUTS[out]);
            let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
            let r = rt.block_on(call_raw(&f.state, "POST", &uri, Some(body.to_string()), &[]));
            prop_assert!(r.status.is_success() || r.status.is_client_error(), "{} {}: {}", uri, body, r.text);
            if r.status.is_client_error() {
                prop_assert!(r.json["title"].is_string(), "{}", r.text);
            }
        }

        /// Arbitrary bytes as a body.
        #[test]
        fn bodies_never_fail(body in prop::collection::vec(any::<u8>(), 0..64)) {
            let f = mix();
            let uri = format!("/tsp/api/experiments/{}/outputs/timeGraph/{CONTROL_FLOW}/states", f.exp);
            let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
            let r = rt.block_on(call_raw(&f.state, "POST", &uri, Some(String::from_utf8_lossy(&body).into_owned()), &[]));
            prop_assert!(r.status.is_client_error(), "{}", r.text);
        }
    }

    /// Ranges spanning more than an i64 (times at both ends of the type, in either order) on
    /// every output: answered, not failed (the CPU usage's bucket width once overflowed).
    #[test]
    fn ranges_wider_than_an_i64_never_fail() {
        let f = mix();
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let (lo, hi) = (i64::MIN, i64::MAX);
        let bodies = [
            json!({"parameters": {"requested_times": [5_837_152_369_914_416_897_i64, -3_386_219_666_940_358_911_i64]}}),
            json!({"parameters": {"requested_times": [hi, lo]}}),
            json!({"parameters": {"requested_times": [lo, 0, hi]}}),
            json!({"parameters": {"requested_timerange": {"start": lo, "end": hi, "nbTimes": 3}}}),
        ];
        for out in OUTPUTS {
            for (kind, what) in ENDPOINTS {
                for body in &bodies {
                    let uri = format!("/tsp/api/experiments/{}/outputs/{kind}/{out}/{what}", f.exp);
                    let r = rt.block_on(call_raw(
                        &f.state,
                        "POST",
                        &uri,
                        Some(body.to_string()),
                        &[],
                    ));
                    assert!(
                        r.status.is_success() || r.status.is_client_error(),
                        "{uri} {body}: {}",
                        r.text
                    );
                }
            }
        }
    }
}

/// A trace cut short opens with what can be read; the status names the file and offset.
#[tokio::test]
async fn broken_trace() {
    let src = kernel_mix("broken", 20_000, 2, 3);
    let dir = tempfile::tempdir().unwrap().keep();
    let mut biggest: Option<(u64, PathBuf)> = None;
    for e in std::fs::read_dir(&src).unwrap() {
        let e = e.unwrap();
        let m = e.metadata().unwrap();
        if !m.is_file() {
            // The index directory: left out (the reader does without).
            continue;
        }
        std::fs::copy(e.path(), dir.join(e.file_name())).unwrap();
        if e.file_name() != "metadata" && biggest.as_ref().is_none_or(|b| m.len() > b.0) {
            biggest = Some((m.len(), dir.join(e.file_name())));
        }
    }
    let (len, file) = biggest.unwrap();
    // Cut in the middle of a packet, and garbage after a good part.
    let mut bytes = std::fs::read(&file).unwrap();
    bytes.truncate((len / 2) as usize + 13);
    std::fs::write(&file, &bytes).unwrap();
    let st = state();
    let (exp, info) = experiment(&st, &[&dir]).await;
    let msg = info["statusMessage"].as_str().unwrap();
    let fname = file.file_name().unwrap().to_string_lossy().into_owned();
    assert!(msg.contains(&fname), "status names the file: {msg:?}");
    assert!(msg.contains("byte"), "status names the offset: {msg:?}");
    assert!(
        info["nbEvents"].as_u64().unwrap() > 0,
        "the readable part is shown"
    );
    let (start, end) = (
        info["start"].as_i64().unwrap(),
        info["end"].as_i64().unwrap(),
    );
    let r = query(
        &st,
        &exp,
        &format!("timeGraph/{CONTROL_FLOW}/states"),
        json!({"requested_timerange": {"start": start, "end": end, "nbTimes": 100}}),
    )
    .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
}

/// With a token, every request needs it (query, bearer header or the cookie set).
#[tokio::test]
async fn token() {
    let st = AppState::new(Config {
        token: Some("s3cret".into()),
        ..Default::default()
    });
    let r = call(&st, "GET", "/tsp/api/health", None).await;
    assert_eq!(r.status, StatusCode::UNAUTHORIZED);
    assert!(r.json["title"].as_str().unwrap().contains("token"));
    let r = call(&st, "GET", "/", None).await;
    assert_eq!(r.status, StatusCode::UNAUTHORIZED);
    let r = call(&st, "GET", "/tsp/api/health?token=wrong", None).await;
    assert_eq!(r.status, StatusCode::UNAUTHORIZED);
    let r = call(&st, "GET", "/?token=s3cret", None).await;
    assert_eq!(r.status, StatusCode::OK);
    let cookie = r.headers["set-cookie"]
        .to_str()
        .unwrap()
        .split(';')
        .next()
        .unwrap()
        .to_string();
    assert_eq!(cookie, "tracekit_token=s3cret");
    let r = call_raw(&st, "GET", "/tsp/api/health", None, &[("cookie", &cookie)]).await;
    assert_eq!(r.status, StatusCode::OK);
    let r = call_raw(
        &st,
        "GET",
        "/tsp/api/health",
        None,
        &[("authorization", "Bearer s3cret")],
    )
    .await;
    assert_eq!(r.status, StatusCode::OK);
    let r = call_raw(
        &st,
        "GET",
        "/tsp/api/health",
        None,
        &[("authorization", "Bearer s3cre")],
    )
    .await;
    assert_eq!(r.status, StatusCode::UNAUTHORIZED);
}

/// The server binds loopback without a token, and any other address with one in the URL;
/// the cache directory is private.
#[test]
fn server_token_and_cache_dir() {
    let dir = kernel_mix("server", 2_000, 2, 5);
    let cache = tempfile::tempdir().unwrap();
    let cache_dir = cache.path().join("a/b");
    let s = view::Server::start(view::ServeOptions {
        paths: vec![dir.clone()],
        listen: "127.0.0.1:0".parse().unwrap(),
        cache_dir: Some(cache_dir.clone()),
        ..Default::default()
    })
    .unwrap();
    assert!(!s.url().contains("token"), "{}", s.url());
    s.wait_indexed().unwrap();
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(&cache_dir).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o700);
    for e in std::fs::read_dir(&cache_dir).unwrap() {
        let m = e.unwrap().metadata().unwrap().permissions().mode() & 0o777;
        assert_eq!(m & 0o077, 0, "cache files are private");
    }
    drop(s);
    let s = view::Server::start(view::ServeOptions {
        paths: vec![dir],
        listen: "0.0.0.0:0".parse().unwrap(),
        cache_dir: None,
        ..Default::default()
    })
    .unwrap();
    assert!(s.url().contains("?token="), "{}", s.url());
    assert_eq!(s.url().split("token=").nth(1).unwrap().len(), 32);
}
