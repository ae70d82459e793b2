//! The HTTP routes: the Trace Server Protocol under `/tsp/api`, `/view/session`, and the
//! embedded app at `/`.

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde_json::{json, Value};

use crate::error::ApiError;
use crate::outputs::Output;
use crate::params::Params;
use crate::state::{AppState, Experiment, Indexing, TraceEntry};
use crate::tsp::{GenericResponse, Status};

/// The application: every route, behind the access-token check when a token is set.
pub fn router(state: AppState) -> Router {
    let tsp = Router::new()
        .route("/health", get(health))
        .route("/identifier", get(identifier))
        .route("/traces", get(list_traces).post(open_trace))
        .route("/traces/{uuid}", get(get_trace).delete(delete_trace))
        .route(
            "/experiments",
            get(list_experiments).post(create_experiment),
        )
        .route(
            "/experiments/{uuid}",
            get(get_experiment).delete(delete_experiment),
        )
        .route("/experiments/{uuid}/outputs", get(list_outputs))
        .route("/experiments/{uuid}/outputs/markerSets", get(marker_sets))
        .route("/experiments/{uuid}/outputs/{a}", get(get_output))
        .route(
            "/experiments/{uuid}/outputs/{a}/{b}",
            post(output_post2).get(output_get2),
        )
        .route(
            "/experiments/{uuid}/outputs/{a}/{b}/{c}",
            post(output_post3),
        );
    Router::new()
        .nest("/tsp/api", tsp)
        .route("/view/session", get(session))
        .fallback(crate::web::static_file)
        .method_not_allowed_fallback(method_not_allowed)
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            crate::auth::check_token,
        ))
        .with_state(state)
}

async fn method_not_allowed(method: axum::http::Method, uri: axum::http::Uri) -> Response {
    let body = json!({ "title": format!("{method} is not an operation of {}", uri.path()) });
    (axum::http::StatusCode::METHOD_NOT_ALLOWED, Json(body)).into_response()
}

async fn health() -> Json<Value> {
    Json(json!({ "status": "UP" }))
}

async fn identifier() -> Json<Value> {
    Json(json!({
        "version": env!("CARGO_PKG_VERSION"),
        "buildTime": "",
        "os": std::env::consts::OS,
        "osArch": std::env::consts::ARCH,
        "osVersion": "",
        "cpuCount": std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1),
        "maxMemory": 0,
        "productId": "tracekit",
        "launcherName": "tracekit view",
    }))
}

/// The session of `tracekit view`: the experiment of the command line's traces (the first
/// one created) and whether clocks are synchronized.
async fn session(State(st): State<AppState>) -> Json<Value> {
    let first = st.experiments().first().map(|e| e.uuid.clone());
    Json(json!({ "experiment": first, "sync": st.config().sync }))
}

fn trace_json(t: &TraceEntry, st: &AppState) -> Value {
    // A trace's range and event count are known once an experiment holding it is indexed;
    // the first completed one alone with it tells them.
    let mut start = 0i64;
    let mut end = 0i64;
    let mut events = 0u64;
    let mut status = "RUNNING";
    let mut message: Vec<String> = t.errors.clone();
    let mut indexed = false;
    for e in st.experiments() {
        if !e.traces.iter().any(|x| x.uuid == t.uuid) {
            continue;
        }
        match e.indexing() {
            Indexing::Completed(m, _) if !indexed => {
                indexed = true;
                start = m.timeline.start;
                end = m.timeline.end;
                if e.traces.len() == 1 {
                    events = m.timeline.events;
                }
                status = if e.is_live() { "RUNNING" } else { "COMPLETED" };
                message = m.diagnostics.clone();
            }
            Indexing::Failed(why) if !indexed => {
                status = "FAILED";
                message.push(why);
            }
            _ => {}
        }
    }
    if st
        .experiments()
        .iter()
        .all(|e| e.traces.iter().all(|x| x.uuid != t.uuid))
    {
        status = "COMPLETED";
    }
    json!({
        "UUID": t.uuid,
        "name": t.name,
        "path": t.path.display().to_string(),
        "start": start,
        "end": end,
        "nbEvents": events,
        "indexingStatus": status,
        "statusMessage": message.join("\n"),
        "properties": {
            "hosts": t.traces.iter().map(|x| x.hostname().unwrap_or("?").to_string()).collect::<Vec<_>>().join(", "),
            "traces": t.traces.len().to_string(),
            "errors": t.errors.join("\n"),
        },
    })
}

/// The status message of a live experiment's model.
fn live_message(m: &crate::model::Model) -> String {
    let mut msg = format!("live: {} events so far", m.timeline.events);
    for d in &m.diagnostics {
        msg.push('\n');
        msg.push_str(d);
    }
    msg
}

fn experiment_json(e: &Experiment, st: &AppState) -> Value {
    let (status, start, end, events, message) = match e.indexing() {
        Indexing::Running => (
            "RUNNING",
            0,
            0,
            e.progress.events(),
            format!(
                "indexing: {:.1} % ({} events read)",
                e.progress.permille() as f64 / 10.0,
                e.progress.events()
            ),
        ),
        // A live session: what has arrived so far, and more to come.
        Indexing::Completed(m, _) if e.is_live() => (
            "RUNNING",
            m.timeline.start,
            m.timeline.end,
            m.timeline.events,
            live_message(&m),
        ),
        Indexing::Completed(m, _) => (
            "COMPLETED",
            m.timeline.start,
            m.timeline.end,
            m.timeline.events,
            m.diagnostics.join("\n"),
        ),
        Indexing::Failed(why) => ("FAILED", 0, 0, 0, why),
    };
    json!({
        "UUID": e.uuid,
        "name": e.name,
        "start": start,
        "end": end,
        "nbEvents": events,
        "indexingStatus": status,
        "statusMessage": message,
        "progress": e.progress.permille() as f64 / 1000.0,
        "traces": e.traces.iter().map(|t| trace_json(t, st)).collect::<Vec<_>>(),
    })
}

async fn list_traces(State(st): State<AppState>) -> Json<Value> {
    Json(Value::Array(
        st.read_traces()
            .iter()
            .map(|t| trace_json(t, &st))
            .collect(),
    ))
}

async fn open_trace(State(st): State<AppState>, body: Bytes) -> Result<Json<Value>, ApiError> {
    let p = Params::from_body(&body)?;
    let uri = match p.string("uri")? {
        Some(u) => u,
        None => p
            .required_string("URI")
            .map_err(|_| ApiError::param("uri", "missing"))?,
    };
    let path = uri.strip_prefix("file://").unwrap_or(uri).to_string();
    let name = p.string("name")?.map(str::to_string);
    let st2 = st.clone();
    let t = tokio::task::spawn_blocking(move || {
        st2.open_trace(std::path::Path::new(&path), name.as_deref())
    })
    .await
    .map_err(|e| ApiError::Internal(e.to_string()))??;
    Ok(Json(trace_json(&t, &st)))
}

async fn get_trace(
    State(st): State<AppState>,
    Path(uuid): Path<String>,
) -> Result<Json<Value>, ApiError> {
    Ok(Json(trace_json(&st.trace(&uuid)?, &st)))
}

async fn delete_trace(
    State(st): State<AppState>,
    Path(uuid): Path<String>,
) -> Result<Json<Value>, ApiError> {
    let t = st.trace(&uuid)?;
    let v = trace_json(&t, &st);
    st.remove_trace(&uuid)?;
    Ok(Json(v))
}

async fn list_experiments(State(st): State<AppState>) -> Json<Value> {
    Json(Value::Array(
        st.experiments()
            .iter()
            .map(|e| experiment_json(e, &st))
            .collect(),
    ))
}

async fn create_experiment(
    State(st): State<AppState>,
    body: Bytes,
) -> Result<Json<Value>, ApiError> {
    let p = Params::from_body(&body)?;
    let name = p.string("name")?.unwrap_or("experiment").to_string();
    let traces = p
        .string_list("traces")?
        .ok_or_else(|| ApiError::param("traces", "missing: the UUIDs of opened traces"))?;
    let e = st.create_experiment(&name, &traces, None)?;
    Ok(Json(experiment_json(&e, &st)))
}

async fn get_experiment(
    State(st): State<AppState>,
    Path(uuid): Path<String>,
) -> Result<Json<Value>, ApiError> {
    Ok(Json(experiment_json(&*st.experiment(&uuid)?, &st)))
}

async fn delete_experiment(
    State(st): State<AppState>,
    Path(uuid): Path<String>,
) -> Result<Json<Value>, ApiError> {
    let e = st.experiment(&uuid)?;
    let v = experiment_json(&e, &st);
    st.remove_experiment(&uuid)?;
    Ok(Json(v))
}

async fn list_outputs(
    State(st): State<AppState>,
    Path(uuid): Path<String>,
) -> Result<Json<Value>, ApiError> {
    st.experiment(&uuid)?;
    Ok(Json(json!(st
        .0
        .registry
        .iter()
        .map(|r| r.descriptor())
        .collect::<Vec<_>>())))
}

async fn get_output(
    State(st): State<AppState>,
    Path((uuid, id)): Path<(String, String)>,
) -> Result<Json<Value>, ApiError> {
    st.experiment(&uuid)?;
    let r =
        st.0.registry
            .iter()
            .find(|r| r.id == id)
            .ok_or(ApiError::NoOutput(id))?;
    Ok(Json(json!(r.descriptor())))
}

async fn marker_sets(
    State(st): State<AppState>,
    Path(uuid): Path<String>,
) -> Result<Json<Value>, ApiError> {
    st.experiment(&uuid)?;
    Ok(Json(json!(GenericResponse::completed(Vec::<Value>::new()))))
}

/// The output `id` of experiment `uuid`: None while it is indexing (the reply then says
/// RUNNING).
fn output_of(st: &AppState, uuid: &str, id: &str) -> Result<Option<Arc<dyn Output>>, ApiError> {
    let e = st.experiment(uuid)?;
    let i =
        st.0.registry
            .iter()
            .position(|r| r.id == id)
            .ok_or_else(|| ApiError::NoOutput(id.to_string()))?;
    match e.indexing() {
        Indexing::Running => Ok(None),
        Indexing::Completed(_, outputs) => Ok(outputs.get(i).cloned()),
        Indexing::Failed(why) => Err(ApiError::NotFound(format!(
            "experiment {uuid} could not be read: {why}"
        ))),
    }
}

fn running(st: &AppState, uuid: &str) -> Response {
    let msg = st
        .experiment(uuid)
        .map(|e| format!("indexing: {:.1} %", e.progress.permille() as f64 / 10.0))
        .unwrap_or_default();
    Json(GenericResponse::<Value> {
        model: None,
        status: Status::Running,
        status_message: msg,
    })
    .into_response()
}

/// Runs `f` on output `id` off the async threads; the reply wraps its model.
async fn query<T, F>(
    st: &AppState,
    uuid: &str,
    id: &str,
    body: &[u8],
    f: F,
) -> Result<Response, ApiError>
where
    T: serde::Serialize + Send + 'static,
    F: FnOnce(&dyn Output, &Params) -> Result<T, ApiError> + Send + 'static,
{
    let p = Params::from_body(body)?;
    let Some(out) = output_of(st, uuid, id)? else {
        return Ok(running(st, uuid));
    };
    let live = st.experiment(uuid)?.is_live();
    let model = tokio::task::spawn_blocking(move || f(out.as_ref(), &p))
        .await
        .map_err(|e| ApiError::Internal(format!("the query failed: {e}")))??;
    if live {
        // The model covers what has arrived: an answer, and more to come.
        return Ok(Json(GenericResponse {
            model: Some(model),
            status: Status::Running,
            status_message: "live: the session is running".into(),
        })
        .into_response());
    }
    Ok(Json(GenericResponse::completed(model)).into_response())
}

/// `outputs/{id}/style`, `outputs/{id}/annotations`.
async fn output_post2(
    State(st): State<AppState>,
    Path((uuid, id, what)): Path<(String, String, String)>,
    body: Bytes,
) -> Result<Response, ApiError> {
    match what.as_str() {
        "style" => query(&st, &uuid, &id, &body, |o, p| o.styles(p)).await,
        "annotations" => query(&st, &uuid, &id, &body, |o, p| o.annotations(p)).await,
        _ => Err(ApiError::NotFound(format!(
            "no endpoint outputs/{id}/{what}"
        ))),
    }
}

/// `GET outputs/{id}/annotations`: the annotation categories.
async fn output_get2(
    State(st): State<AppState>,
    Path((uuid, id, what)): Path<(String, String, String)>,
) -> Result<Response, ApiError> {
    match what.as_str() {
        "annotations" => {
            output_of(&st, &uuid, &id)?;
            Ok(Json(GenericResponse::completed(json!({
                "annotationCategories": [crate::outputs::histogram::LOST_CATEGORY]
            })))
            .into_response())
        }
        _ => Err(ApiError::NotFound(format!(
            "no endpoint GET outputs/{id}/{what}"
        ))),
    }
}

/// `outputs/{timeGraph|XY|table|data}/{id}/{endpoint}`.
async fn output_post3(
    State(st): State<AppState>,
    Path((uuid, kind, id, what)): Path<(String, String, String, String)>,
    body: Bytes,
) -> Result<Response, ApiError> {
    match (kind.as_str(), what.as_str()) {
        ("timeGraph" | "XY" | "data", "tree") => {
            query(&st, &uuid, &id, &body, |o, p| o.tree(p)).await
        }
        ("timeGraph", "states") => query(&st, &uuid, &id, &body, |o, p| o.states(p)).await,
        ("timeGraph", "arrows") => query(&st, &uuid, &id, &body, |o, p| o.arrows(p)).await,
        ("timeGraph", "tooltip") => query(&st, &uuid, &id, &body, |o, p| o.tooltip(p)).await,
        ("XY", "xy") => query(&st, &uuid, &id, &body, |o, p| o.xy(p)).await,
        ("table", "columns") => query(&st, &uuid, &id, &body, |o, p| o.columns(p)).await,
        ("table", "lines") => query(&st, &uuid, &id, &body, |o, p| o.lines(p)).await,
        _ => Err(ApiError::NotFound(format!(
            "no endpoint outputs/{kind}/{id}/{what}"
        ))),
    }
}
