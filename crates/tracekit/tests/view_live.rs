//! `tracekit view` on a live session: a real LTTng-UST session streams into `tracekit relay`
//! (in namespaces of their own, `testkit::lttng`) while `tracekit view net://…` serves it and
//! the real `tsp-typescript-client` (`crates/view/tests/tsp_client/live.mjs`) watches the
//! experiment: RUNNING with a growing event count and range while the application runs, the
//! providers answering over what arrived (status RUNNING), then COMPLETED once the session is
//! destroyed, with the same state as `tracekit view` on the trace the relay wrote.

use std::path::Path;

use serde_json::Value;
use testkit::lttng;

/// The relay, the session (100 ms live timer), the live viewer and its watcher; the
/// application run three times 1.3 s apart (the model is remade at most every second); then
/// the viewer of the written trace.
const SCRIPT: &str = r#"
"$TK" relay -o "$W/trace" --control-port 15342 --data-port 15343 --live-port 15344 > relay.log 2>&1 &
for i in $(seq 100); do (exec 3<>/dev/tcp/127.0.0.1/15344) 2>/dev/null && break; sleep 0.05; done
lttng create tk --live=100000 --set-url net://127.0.0.1:15342:15343 >/dev/null
lttng enable-event -u 'tk:*' >/dev/null
lttng start >/dev/null
"$APP" 0 1
H=$(hostname)
"$TK" view --no-cache --listen 127.0.0.1:18080 net://127.0.0.1:15344/host/$H/tk > view.out 2> view.err &
node "$LIVE" watch http://127.0.0.1:18080 "$W/watch.json" > watch.log 2>&1 & C=$!
sleep 1
for i in 1 2 3; do "$APP" 10 100; sleep 1.3; done
lttng stop tk >/dev/null
lttng destroy tk >/dev/null
wait $C
"$TK" view --no-cache --listen 127.0.0.1:18081 "$W/trace/$H"/tk-* > files.out 2>&1 &
node "$LIVE" summary http://127.0.0.1:18081 "$W/files.json" > files.log 2>&1
"#;

fn json(w: &Path, name: &str) -> Value {
    let text = std::fs::read_to_string(w.join(name)).unwrap_or_else(|e| panic!("{name}: {e}"));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{name}: {e}"))
}

#[test]
fn live_view_grows_then_equals_the_written_trace() {
    if !lttng::available("the live view test") {
        return;
    }
    if !testkit::tool_or_skip("node", "apt-get install nodejs npm", "the live view test") {
        return;
    }
    let client = Path::new(env!("CARGO_MANIFEST_DIR")).join("../view/tests/tsp_client");
    if !client.join("node_modules/tsp-typescript-client").exists() {
        assert!(
            testkit::shared().is_none(),
            "tsp-typescript-client must be installed where the shared suites run \
             (npm ci --prefix crates/view/tests/tsp_client)"
        );
        eprintln!("tsp-typescript-client is not installed: skipping the live view test");
        return;
    }
    let start = std::time::Instant::now();
    let dir = lttng::work_dir(Path::new(env!("CARGO_TARGET_TMPDIR")), "view-live");
    let app = lttng::build_app(&dir).expect("the C application builds");
    let w = dir.join("ns");
    let live = client.join("live.mjs");
    let out = lttng::run(
        &w,
        SCRIPT,
        [
            ("TK", Path::new(env!("CARGO_BIN_EXE_tracekit"))),
            ("APP", app.as_path()),
            ("LIVE", live.as_path()),
        ],
        120,
    );
    if let Err(e) = &out {
        let log = |n: &str| std::fs::read_to_string(w.join(n)).unwrap_or_default();
        panic!(
            "{e}\nview.err: {}\nwatch.log: {}\nfiles.log: {}\nrelay.log: {}",
            log("view.err"),
            log("watch.log"),
            log("files.log"),
            log("relay.log")
        );
    }
    let watch = json(&w, "watch.json");
    let files = json(&w, "files.json");
    let seen = watch["seen"].as_array().expect("seen");
    // The application emitted 1 + 3 × (10 + 100) events.
    let total = 331;
    let live_final = &watch["final"];
    assert_eq!(live_final["nbEvents"], total);
    assert_eq!(live_final["status"], "COMPLETED");

    // While the session ran: RUNNING, the count and the end growing, never past the total.
    let running: Vec<&Value> = seen
        .iter()
        .filter(|s| s["status"] == "RUNNING" && s["nbEvents"].as_u64() > Some(0))
        .collect();
    let counts: Vec<u64> = running
        .iter()
        .map(|s| s["nbEvents"].as_u64().unwrap())
        .collect();
    assert!(
        counts.windows(2).all(|c| c[0] <= c[1]) && counts.iter().all(|&c| c <= total),
        "{counts:?}"
    );
    let mut distinct = counts.clone();
    distinct.dedup();
    assert!(
        distinct.len() >= 2 && distinct[0] < total,
        "the event count did not grow while the session ran: {counts:?}"
    );
    let ends: Vec<i128> = running
        .iter()
        .map(|s| s["end"].as_str().unwrap().parse().unwrap())
        .collect();
    assert!(ends.windows(2).all(|e| e[0] <= e[1]), "{ends:?}");
    assert!(
        ends.first() < ends.last(),
        "the range did not grow: {ends:?}"
    );
    for s in &running {
        // Models read from the copy while it is written: no packet read half-written.
        assert_eq!(
            s["message"],
            format!("live: {} events so far", s["nbEvents"]),
            "{s}"
        );
        // The providers answer over what has arrived, saying more is coming.
        let p = &s["provider"];
        assert_eq!(p["status"], "RUNNING", "{p}");
        assert!(p["tableSize"].as_u64().unwrap() >= s["nbEvents"].as_u64().unwrap());
        assert!(p["tableSize"].as_u64().unwrap() <= total);
    }

    // After the session: what `tracekit view` shows of the trace the relay wrote.
    let fin = &files["final"];
    for key in [
        "nbEvents",
        "start",
        "end",
        "histogram",
        "tableSize",
        "lines",
    ] {
        assert_eq!(live_final[key], fin[key], "{key} differs");
    }
    eprintln!(
        "live view: {} states seen while running, {:.1} s",
        running.len(),
        start.elapsed().as_secs_f64()
    );
}
