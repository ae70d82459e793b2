//! Prints the server-side cost of the viewer's queries on a trace: the model's own state
//! query over every Control Flow row, and the same through the router (parameter parsing,
//! JSON), at 2000 steps over the whole range and zoomed in.
//!
//! `cargo run --release -p tracekit-view --example view_bench -- TRACE_DIR [CACHE_DIR]`

use std::time::Instant;

use axum::body::Body;
use axum::http::Request;
use http_body_util::BodyExt;
use serde_json::{json, Value};
use tower::ServiceExt;

const CF: &str =
    "org.eclipse.tracecompass.internal.analysis.os.linux.core.threadstatus.ThreadStatusDataProvider";

async fn post(state: &view::AppState, path: &str, params: Value) -> (Vec<u8>, usize) {
    let req = Request::builder()
        .method("POST")
        .uri(path)
        .header("content-type", "application/json")
        .body(Body::from(json!({ "parameters": params }).to_string()))
        .unwrap();
    let resp = view::api::router(state.clone()).oneshot(req).await.unwrap();
    let bytes = resp.into_body().collect().await.unwrap().to_bytes();
    (bytes.to_vec(), bytes.len())
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args().collect();
    let Some(trace) = args.get(1) else {
        eprintln!("usage: view_bench TRACE_DIR [CACHE_DIR]");
        std::process::exit(2);
    };
    let state = view::AppState::new(view::Config {
        cache_dir: args.get(2).map(Into::into),
        ..Default::default()
    });
    let t0 = Instant::now();
    let t = state.open_trace(std::path::Path::new(trace), None).unwrap();
    let exp = state.create_experiment("bench", &[t.uuid], None).unwrap();
    let model = loop {
        if let view::state::Indexing::Completed(m, _) = exp.indexing() {
            break m;
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    };
    println!(
        "model ready in {:.2} s: {} events",
        t0.elapsed().as_secs_f64(),
        model.timeline.events
    );
    let tl = &model.timeline;
    let base = format!("/tsp/api/experiments/{}/outputs/timeGraph/{CF}", exp.uuid);
    let (tree, _) = post(&state, &format!("{base}/tree"), json!({})).await;
    let tree: Value = serde_json::from_slice(&tree).unwrap();
    let ids: Vec<u32> = tree["model"]["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["id"].as_u64().unwrap() as u32)
        .collect();
    let span = tl.end - tl.start;
    for (label, a, b) in [
        ("whole trace", tl.start, tl.end),
        ("1/10", tl.start + span / 2, tl.start + span / 2 + span / 10),
        (
            "1/1000",
            tl.start + span / 3,
            tl.start + span / 3 + span / 1000,
        ),
    ] {
        let res = ((b - a) / 2000).max(1);
        let mut model_ms = Vec::new();
        let mut states = 0;
        for _ in 0..7 {
            let t = Instant::now();
            states = ids
                .iter()
                .map(|&r| tl.states(r, a, b, res).len())
                .sum::<usize>();
            model_ms.push(t.elapsed().as_secs_f64() * 1e3);
        }
        let mut api_ms = Vec::new();
        let mut bytes = 0;
        for _ in 0..7 {
            let t = Instant::now();
            let (_, n) = post(
                &state,
                &format!("{base}/states"),
                json!({"requested_timerange": {"start": a, "end": b, "nbTimes": 2000}, "requested_items": ids}),
            )
            .await;
            bytes = n;
            api_ms.push(t.elapsed().as_secs_f64() * 1e3);
        }
        println!(
            "states, {label}, {} rows at 2000 steps: {states} states; model {:.1} ms, API {:.1} ms ({:.2} MB of JSON)",
            ids.len(),
            median(model_ms),
            median(api_ms),
            bytes as f64 / 1e6
        );
    }
}
