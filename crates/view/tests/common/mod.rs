//! What the view's tests share: generated traces, a router and JSON requests through it.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use axum::body::Body;
use axum::http::{Request, StatusCode};
use http_body_util::BodyExt;
use serde_json::{json, Value};
use tower::ServiceExt;

use view::{AppState, Config};

/// A request's reply: status, headers and JSON body (Null when not JSON).
pub struct Reply {
    pub status: StatusCode,
    pub headers: axum::http::HeaderMap,
    pub json: Value,
    pub text: String,
}

/// Sends one request to `state`'s router (no network).
pub async fn call(state: &AppState, method: &str, uri: &str, body: Option<Value>) -> Reply {
    call_raw(state, method, uri, body.map(|b| b.to_string()), &[]).await
}

/// Sends one request with a raw body and extra headers.
pub async fn call_raw(
    state: &AppState,
    method: &str,
    uri: &str,
    body: Option<String>,
    headers: &[(&str, &str)],
) -> Reply {
    let app = view::api::router(state.clone());
    let mut req = Request::builder().method(method).uri(uri);
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    if body.is_some() {
        req = req.header("content-type", "application/json");
    }
    let req = req
        .body(body.map(Body::from).unwrap_or_else(Body::empty))
        .expect("request");
    let resp = app.oneshot(req).await.expect("router answers");
    let status = resp.status();
    let headers = resp.headers().clone();
    let bytes = resp.into_body().collect().await.expect("body").to_bytes();
    let text = String::from_utf8_lossy(&bytes).into_owned();
    let json = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
    Reply {
        status,
        headers,
        json,
        text,
    }
}

/// A server state with no cache and no token.
pub fn state() -> AppState {
    AppState::new(Config::default())
}

/// Opens `paths` as traces and one experiment of them, and waits until it is indexed;
/// returns its UUID and JSON.
pub async fn experiment(state: &AppState, paths: &[&Path]) -> (String, Value) {
    let mut uuids = Vec::new();
    for p in paths {
        let r = call(
            state,
            "POST",
            "/tsp/api/traces",
            Some(json!({"parameters": {"uri": p.display().to_string()}})),
        )
        .await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        uuids.push(r.json["UUID"].as_str().expect("trace UUID").to_string());
    }
    let r = call(
        state,
        "POST",
        "/tsp/api/experiments",
        Some(json!({"parameters": {"name": "test", "traces": uuids}})),
    )
    .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    let uuid = r.json["UUID"]
        .as_str()
        .expect("experiment UUID")
        .to_string();
    let t0 = Instant::now();
    loop {
        let r = call(state, "GET", &format!("/tsp/api/experiments/{uuid}"), None).await;
        match r.json["indexingStatus"].as_str() {
            Some("COMPLETED") => return (uuid, r.json),
            Some("RUNNING") => {}
            other => panic!("indexing status {other:?}: {}", r.text),
        }
        assert!(
            t0.elapsed() < Duration::from_secs(120),
            "indexing takes too long"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// A generated kernel-mix trace of `events` events on `cpus` CPUs, in a directory kept for
/// the test process.
pub fn kernel_mix(name: &str, events: u64, cpus: u32, seed: u64) -> PathBuf {
    let dir = tempfile::Builder::new()
        .prefix(&format!("tracekit-view-{name}-"))
        .tempdir()
        .expect("tempdir")
        .keep()
        .join(name);
    testkit::kernel_mix(&dir, events, cpus, seed);
    dir
}

/// A POST to an output endpoint of experiment `exp`.
pub async fn query(state: &AppState, exp: &str, path: &str, params: Value) -> Reply {
    call(
        state,
        "POST",
        &format!("/tsp/api/experiments/{exp}/outputs/{path}"),
        Some(json!({ "parameters": params })),
    )
    .await
}

/// The output ids.
pub const CONTROL_FLOW: &str =
    "org.eclipse.tracecompass.internal.analysis.os.linux.core.threadstatus.ThreadStatusDataProvider";
pub const RESOURCES: &str =
    "org.eclipse.tracecompass.internal.analysis.os.linux.core.resourcesstatus.ResourcesStatusDataProvider";
pub const CPU_USAGE: &str =
    "org.eclipse.tracecompass.analysis.os.linux.core.cpuusage.CpuUsageDataProvider";
pub const HISTOGRAM: &str =
    "org.eclipse.tracecompass.internal.tmf.core.histogram.HistogramDataProvider";
pub const EVENTS: &str =
    "org.eclipse.tracecompass.internal.provisional.tmf.core.model.events.TmfEventTableDataProvider";
pub const CRITICAL_PATH: &str =
    "org.eclipse.tracecompass.analysis.graph.core.dataprovider.CriticalPathDataProvider";
