//! The viewer in a real browser: Debian's chromium, headless, driven by playwright-core
//! (`tests/browser/view.test.mjs`) over servers started here on generated client-server
//! traces whose ground truth is known. The script checks what the page draws (its
//! `window.tracekit.drawn()` hook and the screenshot's pixels) against the expectations
//! written here from the ground truth: the selected thread's states and the critical path at
//! the generator's times, zoom/pan, a view restored from its URL, and LTTV's demonstration
//! (without `--sync` the client's request ends before the server's handling starts on the
//! shown time axis; with it the server handles the request while the client waits). It also
//! measures the frame rate while panning ~100 k visible states (printed). Screenshots are kept
//! in `$CARGO_TARGET_TMPDIR/view-screenshots/`.
//!
//! Needs `/usr/bin/chromium` (`apt-get install chromium`), node and
//! `npm ci --prefix crates/view/tests/browser`; skipped without them unless `TRACEKIT_SHARED`
//! is set (CI), where they must be there.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::Instant;

use scenario::client_server::{generate, ClientServerParams};
use scenario::ground_truth::HostClock;
use serde_json::{json, Value};
use view::{ServeOptions, Server};

const CHROMIUM: &str = "/usr/bin/chromium";
/// Events of the trace the page opens while it is being indexed (a few seconds' work).
const INDEXING_EVENTS: u64 = 300_000;

/// A progress listener that holds the indexing read at its first progress point until the
/// page has shown the indexing (the browser script creates the `gate` file; two minutes at
/// most), then a little at each point (about a hundred of them): the page sees the indexing
/// and its progress however long the browser takes to start on a loaded machine.
struct Paced {
    gate: PathBuf,
    opened: std::sync::atomic::AtomicBool,
}

impl pipeline::Progress for Paced {
    fn at(&self, _: pipeline::ProgressPoint) {
        use std::sync::atomic::Ordering;
        if !self.opened.load(Ordering::Relaxed) {
            let until = Instant::now() + std::time::Duration::from_secs(120);
            while !self.gate.exists() && Instant::now() < until {
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            self.opened.store(true, Ordering::Relaxed);
        }
        std::thread::sleep(std::time::Duration::from_millis(40));
    }
    fn done(&self, _: u64) {}
}

fn browser_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/browser")
}

/// Whether chromium, node and the script's node_modules are there (else skip, outside CI).
fn tools_or_skip() -> bool {
    if !testkit::tool_or_skip("node", "apt-get install nodejs", "the browser tests") {
        return false;
    }
    let mut missing = Vec::new();
    if !Path::new(CHROMIUM).exists() {
        missing.push(format!("{CHROMIUM} (apt-get install chromium)"));
    }
    if !browser_dir().join("node_modules/playwright-core").is_dir() {
        missing.push("playwright-core (npm ci --prefix crates/view/tests/browser)".to_string());
    }
    if missing.is_empty() {
        return true;
    }
    assert!(
        testkit::shared().is_none(),
        "the browser tests must run where the shared suites run: missing {}",
        missing.join(", ")
    );
    eprintln!("skipping the browser tests: missing {}", missing.join(", "));
    false
}

/// A host's clock from the ground truth at `path`.
fn clock(path: &std::path::Path, host: &str) -> HostClock {
    HostClock::read_all(path)
        .expect("the ground truth reads")
        .remove(host)
        .unwrap_or_else(|| panic!("no host {host} in the ground truth"))
}

fn num(v: &Value) -> i128 {
    v.as_str().unwrap().parse().unwrap()
}

/// The marked request's critical path, adjacent segments of one thread and state merged.
fn critical_path(gt: &Value) -> Vec<Value> {
    let mut out: Vec<Value> = Vec::new();
    for s in gt["marked_request"]["critical_path"].as_array().unwrap() {
        if let Some(l) = out.last_mut() {
            if l["end"] == s["begin"]
                && l["host"] == s["host"]
                && l["tid"] == s["tid"]
                && l["state"] == s["state"]
            {
                l["end"] = s["end"].clone();
                continue;
            }
        }
        out.push(s.clone());
    }
    out
}

/// The server thread that handles the request: the longest running segment off the client.
fn server_segment(path: &[Value], client: &str) -> Value {
    path.iter()
        .filter(|s| s["host"] != client && s["state"] == "running")
        .max_by_key(|s| num(&s["end"]) - num(&s["begin"]))
        .expect("the critical path runs on the server")
        .clone()
}

fn serve(dirs: &[PathBuf], sync: bool, periods: view::PeriodDefs) -> Server {
    let server = Server::start(ServeOptions {
        paths: dirs.to_vec(),
        sync,
        listen: "127.0.0.1:0".parse().unwrap(),
        cache_dir: None,
        progress: None,
        periods,
        ..Default::default()
    })
    .expect("the server starts");
    let problems = server.wait_indexed().expect("the traces are indexed");
    assert!(problems.is_empty(), "problems indexing: {problems:?}");
    server
}

#[test]
fn views_in_chromium() {
    if !tools_or_skip() {
        return;
    }
    let t0 = Instant::now();
    let tmp = tempfile::tempdir().unwrap();

    // A trace big enough that the page opens while the server still indexes it: the page
    // shows the progress and then the views.
    let big = tmp.path().join("kernel-mix");
    testkit::kernel_mix(&big, INDEXING_EVENTS, 4, 3);
    let indexing_started = Instant::now();
    let gate = tmp.path().join("indexing-page-open");
    let indexing = Server::start(ServeOptions {
        paths: vec![big],
        listen: "127.0.0.1:0".parse().unwrap(),
        progress: Some(Arc::new(Paced {
            gate: gate.clone(),
            opened: Default::default(),
        })),
        ..Default::default()
    })
    .expect("the server starts");
    let indexing_expect = json!({ "url": indexing.url(), "gate": gate });
    // The other servers are prepared meanwhile; the page is opened on this one first.

    // Aligned clocks: trace time is true time, the ground truth's times apply as they are.
    let aligned = generate(
        &tmp.path().join("aligned"),
        &ClientServerParams {
            seed: 7,
            hosts: 2,
            max_offset_s: 0,
            max_drift_ppm: 0,
            requests: 12,
            ..Default::default()
        },
    )
    .unwrap();
    let gt: Value =
        serde_json::from_str(&std::fs::read_to_string(&aligned.ground_truth).unwrap()).unwrap();
    let m = &gt["marked_request"];
    let client = m["client"].as_str().unwrap().to_string();
    let path = critical_path(&gt);
    let srv = server_segment(&path, &client);
    // A user-defined period (a thread's time on a CPU) for the latency views.
    let oncpu = view::PeriodDefs {
        periods: vec![
            "oncpu : $evt.$name == \"sched_switch\" : $evt.$name == \"sched_switch\" \
                       && $evt.prev_tid == $begin.$evt.next_tid"
                .into(),
        ],
        captures: Vec::new(),
    };
    let aligned_server = serve(&aligned.dirs, false, oncpu);
    let aligned_expect = json!({
        "url": aligned_server.url(),
        "period": "oncpu",
        "client": {"host": client, "tid": m["tid"], "begin": m["begin"], "end": m["end"]},
        "server": {"host": srv["host"], "tid": srv["tid"]},
        "critical_path": path,
    });

    // Skewed clocks: the server's clock runs ahead of the client's by more than the request
    // lasts, so that without synchronization its handling shows after the request's end.
    let (skewed, sgt) = (1..40)
        .find_map(|seed| {
            let dir = tmp.path().join(format!("skewed-{seed}"));
            let out = generate(
                &dir,
                &ClientServerParams {
                    seed,
                    hosts: 2,
                    max_offset_s: 2,
                    max_drift_ppm: 20,
                    requests: 12,
                    ..Default::default()
                },
            )
            .unwrap();
            let gt: Value =
                serde_json::from_str(&std::fs::read_to_string(&out.ground_truth).unwrap()).unwrap();
            let m = &gt["marked_request"];
            let c = m["client"].as_str()?;
            let s = server_segment(&critical_path(&gt), c);
            let on_c = clock(&out.ground_truth, c);
            let on_s = clock(&out.ground_truth, s["host"].as_str().unwrap());
            let end_c = on_c.at(num(&m["end"]));
            let begin_s = on_s.at(num(&s["begin"]));
            (begin_s > end_c + 1_000_000).then_some((out, gt))
        })
        .expect("a seed whose server clock runs ahead of the client's");
    let m = &sgt["marked_request"];
    let client = m["client"].as_str().unwrap().to_string();
    let path = critical_path(&sgt);
    let srv = server_segment(&path, &client);
    let srv_host = srv["host"].as_str().unwrap().to_string();
    let on_client = clock(&skewed.ground_truth, &client);
    let on_server = clock(&skewed.ground_truth, &srv_host);
    let client_json = json!({
        "host": client, "tid": m["tid"],
        "begin": on_client.at(num(&m["begin"])).to_string(), "end": on_client.at(num(&m["end"])).to_string(),
    });
    // With --sync the common time line is the first trace's host's (the client's) clock.
    let synced = serve(&skewed.dirs, true, Default::default());
    let unsynced = serve(&skewed.dirs, false, Default::default());
    // The synchronization is exact to within the network's smallest one-way delay.
    let tolerance = sgt["min_one_way_delay_ns"].as_u64().unwrap();
    let sync_expect = json!({
        "url": synced.url(),
        "tolerance": tolerance,
        "client": client_json,
        "server": {"host": srv_host, "tid": srv["tid"],
            "begin": on_client.at(num(&srv["begin"])).to_string(), "end": on_client.at(num(&srv["end"])).to_string()},
    });
    let nosync_expect = json!({
        "url": unsynced.url(),
        "client": client_json,
        "server": {"host": srv_host, "tid": srv["tid"],
            "begin": on_server.at(num(&srv["begin"])).to_string(), "end": on_server.at(num(&srv["end"])).to_string()},
    });
    let setup = t0.elapsed();
    println!(
        "indexing {INDEXING_EVENTS} events: {:?} so far",
        indexing_started.elapsed()
    );

    if std::env::var_os("TRACEKIT_VIEW_PAUSE").is_some() {
        // For working on the page: the servers stay up a while.
        println!(
            "aligned {}\nsync {}\nnosync {}\n{}",
            aligned_server.url(),
            synced.url(),
            unsynced.url(),
            serde_json::to_string_pretty(
                &json!({"aligned": aligned_expect, "sync": sync_expect, "nosync": nosync_expect})
            )
            .unwrap()
        );
        std::thread::sleep(std::time::Duration::from_secs(900));
    }
    let shots = Path::new(env!("CARGO_TARGET_TMPDIR")).join("view-screenshots");
    let expect_file = tmp.path().join("expect.json");
    std::fs::write(
        &expect_file,
        serde_json::to_string_pretty(&json!({
            "shots": shots,
            "aligned": aligned_expect,
            "sync": sync_expect,
            "nosync": nosync_expect,
            "indexing": indexing_expect,
        }))
        .unwrap(),
    )
    .unwrap();
    let out = Command::new("node")
        .arg("view.test.mjs")
        .arg(&expect_file)
        .current_dir(browser_dir())
        .env("CHROMIUM", CHROMIUM)
        .output()
        .expect("node runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    println!("{stdout}");
    eprintln!("{}", String::from_utf8_lossy(&out.stderr));
    println!(
        "setup (generate, index) {:.1} s, browser {:.1} s; screenshots in {}",
        setup.as_secs_f64(),
        (t0.elapsed() - setup).as_secs_f64(),
        shots.display()
    );
    let failed: Vec<&str> = stdout.lines().filter(|l| l.starts_with("not ok")).collect();
    assert!(
        out.status.success() && failed.is_empty(),
        "the browser checks failed:\n{}",
        failed.join("\n")
    );
    assert!(
        stdout.lines().any(|l| l.starts_with("RESULT ")),
        "the script did not finish"
    );
}
