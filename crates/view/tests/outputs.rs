//! The analysis-table and latency outputs against the analyses and trackers run directly on
//! the same generated trace.

mod common;

use std::sync::Arc;

use axum::http::StatusCode;
use common::*;
use serde_json::{json, Value};
use view::outputs::analyses::TABLES;

fn texts(line: &Value) -> Vec<String> {
    line["cells"]
        .as_array()
        .expect("cells")
        .iter()
        .map(|c| c["content"].as_str().expect("content").to_string())
        .collect()
}

/// Every analysis gives, in its default mode, exactly the table classes listed for it (in
/// that order), and each output's lines are the rows of its class's tables, in order.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn analysis_tables_are_the_analyses_results() {
    let trace = kernel_mix("analyses", 40_000, 2, 7);
    let state = state();
    let (exp, _) = experiment(&state, &[&trace]).await;
    let traces: Vec<Arc<ctf::Trace>> = ctf::open_all(&[&trace]).expect("trace opens");
    let common = analysis::Common {
        no_intersection: true,
        ..Default::default()
    };
    let opts = analysis::Options {
        limit: 0,
        ..Default::default()
    };
    let mut names: Vec<&str> = TABLES.iter().map(|t| t.1).collect();
    names.dedup();
    for name in names {
        let mut tables = Vec::new();
        analysis::run_names(&traces, &[name], &common, &opts, None, &mut |_, mut t| {
            tables = t.remove(0)
        })
        .expect("analysis runs");
        let mut classes: Vec<&str> = Vec::new();
        for t in &tables {
            if !classes.contains(&t.class) {
                classes.push(t.class);
            }
        }
        let listed: Vec<&str> = TABLES.iter().filter(|t| t.1 == name).map(|t| t.2).collect();
        assert_eq!(classes, listed, "table classes of {name}");
        for (id, _, class) in TABLES.iter().filter(|t| t.1 == name) {
            let expected: Vec<Vec<String>> = tables
                .iter()
                .filter(|t| t.class == *class)
                .flat_map(|t| t.rows.iter())
                .map(|r| {
                    r.iter()
                        .map(|c| analysis::text::cell_text(c).0)
                        .collect::<Vec<_>>()
                })
                .collect();
            let cols = query(&state, &exp, &format!("table/{id}/columns"), json!({})).await;
            assert_eq!(cols.status, StatusCode::OK, "{}", cols.text);
            let ncols = cols.json["model"].as_array().expect("columns").len();
            let r = query(
                &state,
                &exp,
                &format!("table/{id}/lines"),
                json!({"requested_table_index": 0, "requested_table_count": 100000}),
            )
            .await;
            assert_eq!(r.status, StatusCode::OK, "{}", r.text);
            let m = &r.json["model"];
            assert_eq!(m["size"].as_u64(), Some(expected.len() as u64), "{id}");
            let got: Vec<Vec<String>> = m["lines"]
                .as_array()
                .expect("lines")
                .iter()
                .map(|l| {
                    let t = texts(l);
                    assert_eq!(t.len(), ncols, "{id}: a cell per column");
                    t[1..].to_vec()
                })
                .collect();
            assert_eq!(got, expected, "{id}");
        }
    }

    // A range: the cputop total covers only it.
    let id = "tracekit.analysis.cputop.per-cpu";
    let whole = query(&state, &exp, &format!("table/{id}/lines"), json!({})).await;
    let info = call(&state, "GET", &format!("/tsp/api/experiments/{exp}"), None).await;
    let (start, end) = (
        info.json["start"].as_i64().expect("start"),
        info.json["end"].as_i64().expect("end"),
    );
    let part = query(
        &state,
        &exp,
        &format!("table/{id}/lines"),
        json!({"requested_timerange": {"start": start, "end": start + (end - start) / 10}}),
    )
    .await;
    assert_eq!(part.status, StatusCode::OK, "{}", part.text);
    assert_ne!(
        whole.json["model"]["lines"], part.json["model"]["lines"],
        "a tenth of the trace gives other CPU usage"
    );

    // Bad requests name the parameter.
    let r = query(
        &state,
        &exp,
        &format!("table/{id}/lines"),
        json!({"requested_table_column_ids": [99]}),
    )
    .await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST);
    assert!(r.text.contains("requested_table_column_ids"), "{}", r.text);
}

/// The latency outputs hold every latency the trackers measure, and the scatter keeps each
/// bucket's longest.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn latency_outputs_hold_every_latency() {
    let trace = kernel_mix("latency", 30_000, 2, 3);
    let state = state();
    let (exp, info) = experiment(&state, &[&trace]).await;
    let traces: Vec<Arc<ctf::Trace>> = ctf::open_all(&[&trace]).expect("trace opens");
    let config = latency::Config {
        threshold: 0,
        timeout: None,
        max_pending: usize::MAX,
    };
    let mut reports = Vec::new();
    latency::run_traces(&traces, &latency::Tracker::ALL, config, |r| {
        reports.push(r);
        Ok::<(), ()>(())
    })
    .expect("trackers run");
    assert!(reports.len() > 1000, "the trace has latencies");

    // Table: every latency, by start time.
    let r = query(
        &state,
        &exp,
        "table/tracekit.latency.table/lines",
        json!({"requested_table_index": 0, "requested_table_count": 100000}),
    )
    .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    let lines = r.json["model"]["lines"].as_array().expect("lines");
    assert_eq!(lines.len(), reports.len());
    let mut got: Vec<(i64, i64, String)> = lines
        .iter()
        .map(|l| {
            let t = texts(l);
            (t[0].parse().unwrap(), t[1].parse().unwrap(), t[2].clone())
        })
        .collect();
    assert!(got.windows(2).all(|w| w[0].0 <= w[1].0), "by start time");
    let mut want: Vec<(i64, i64, String)> = reports
        .iter()
        .map(|r| (r.begin, r.latency, r.tracker.name().to_string()))
        .collect();
    got.sort();
    want.sort();
    assert_eq!(got, want);

    // One tracker only.
    let r = query(
        &state,
        &exp,
        "table/tracekit.latency.table/lines",
        json!({"tracker": "syscall", "requested_table_count": 1}),
    )
    .await;
    let syscalls: Vec<&latency::Report> = reports
        .iter()
        .filter(|r| r.tracker == latency::Tracker::Syscall)
        .collect();
    assert_eq!(
        r.json["model"]["size"].as_u64(),
        Some(syscalls.len() as u64)
    );

    // Scatter: the longest system call of the trace is a point, and no point is longer.
    let (start, end) = (
        info["start"].as_i64().unwrap(),
        info["end"].as_i64().unwrap(),
    );
    let syscall_entry = 1 + 2; // host 0, tracker Syscall (third of Tracker::ALL)
    let r = query(
        &state,
        &exp,
        "XY/tracekit.latency.scatter/xy",
        json!({"requested_timerange": {"start": start, "end": end, "nbTimes": 200},
               "requested_items": [syscall_entry]}),
    )
    .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    let series = &r.json["model"]["series"][0];
    let ys: Vec<f64> = series["yValues"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().unwrap())
        .collect();
    assert!(ys.len() <= 200);
    let longest = syscalls.iter().map(|r| r.latency).max().unwrap() as f64;
    assert_eq!(ys.iter().cloned().fold(0.0, f64::max), longest);

    // Density: the counts add up to the tracker's latencies.
    let r = query(
        &state,
        &exp,
        "XY/tracekit.latency.density/xy",
        json!({"requested_items": [syscall_entry]}),
    )
    .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    let total: f64 = r.json["model"]["series"][0]["yValues"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().unwrap())
        .sum();
    assert_eq!(total as usize, syscalls.len());

    // Bad requests.
    let r = query(
        &state,
        &exp,
        "table/tracekit.latency.table/lines",
        json!({"tracker": "nope"}),
    )
    .await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST);
    assert!(r.text.contains("tracker"), "{}", r.text);
    let r = query(
        &state,
        &exp,
        "XY/tracekit.latency.scatter/xy",
        json!({"requested_timerange": {"start": start, "end": end, "nbTimes": 10},
               "requested_items": [9999]}),
    )
    .await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST);
}

/// With user-defined periods (`tracekit view --period`), the latency outputs also hold every
/// completed period, as `analysis::period::run` (`tracekit analyze periodlog`) finds them, as
/// a series of their own.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn latency_outputs_hold_user_defined_periods() {
    let trace = kernel_mix("periods", 20_000, 2, 5);
    let defs = view::PeriodDefs {
        periods: vec![
            "oncpu : $evt.$name == \"sched_switch\" : $evt.$name == \"sched_switch\" && \
             $evt.prev_tid == $begin.$evt.next_tid"
                .to_string(),
        ],
        captures: vec!["oncpu : tid = $evt.next_tid".to_string()],
    };
    let state = view::AppState::new(view::Config {
        periods: defs.clone(),
        ..Default::default()
    });
    let (exp, info) = experiment(&state, &[&trace]).await;
    let traces: Vec<Arc<ctf::Trace>> = ctf::open_all(&[&trace]).expect("trace opens");
    let common = analysis::Common {
        no_intersection: true,
        ..Default::default()
    };
    let opts = analysis::period::PeriodOptions {
        periods: defs.periods.clone(),
        captures: defs.captures.clone(),
        ..Default::default()
    };
    let res = analysis::period::run(&traces, &common, &opts).expect("periods run");
    let mut want: Vec<(i64, i64, String)> = res
        .done
        .iter()
        .map(|p| (p.begin, p.end - p.begin, p.begin_caps[0].1.to_string()))
        .collect();
    assert!(want.len() > 100, "the trace has periods: {}", want.len());

    // The tree: the trackers, then the period.
    let r = query(&state, &exp, "XY/tracekit.latency.scatter/tree", json!({})).await;
    let labels: Vec<String> = r.json["model"]["entries"]
        .as_array()
        .expect("entries")
        .iter()
        .map(|e| e["labels"][0].as_str().unwrap().to_string())
        .collect();
    assert_eq!(labels.last().map(String::as_str), Some("period:oncpu"));

    // The table: every period, its TID from the capture.
    let r = query(
        &state,
        &exp,
        "table/tracekit.latency.table/lines",
        json!({"tracker": "period:oncpu", "requested_table_count": 100000}),
    )
    .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    let mut got: Vec<(i64, i64, String)> = r.json["model"]["lines"]
        .as_array()
        .expect("lines")
        .iter()
        .map(|l| {
            let t = texts(l);
            assert_eq!(t[2], "period:oncpu");
            assert_eq!(t[7], format!("tid = {}", t[4]));
            (t[0].parse().unwrap(), t[1].parse().unwrap(), t[4].clone())
        })
        .collect();
    got.sort();
    want.sort();
    assert_eq!(got, want);

    // The scatter's longest point is the longest period.
    let entry = 1 + latency::Tracker::ALL.len() as i64;
    let r = query(
        &state,
        &exp,
        "XY/tracekit.latency.scatter/xy",
        json!({"requested_timerange": {"start": info["start"], "end": info["end"], "nbTimes": 100},
               "requested_items": [entry]}),
    )
    .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    let series = &r.json["model"]["series"][0];
    assert_eq!(series["seriesName"], "period:oncpu");
    let top = series["yValues"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().unwrap())
        .fold(0.0, f64::max);
    assert_eq!(top, want.iter().map(|w| w.1).max().unwrap() as f64);
}
