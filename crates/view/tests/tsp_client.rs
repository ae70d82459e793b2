//! The real TSP client: `tsp-typescript-client` (npm) drives the server over HTTP
//! (`tests/tsp_client/client.mjs`): opens a generated trace, creates an experiment, polls
//! until it is indexed, and checks the outputs' replies through the client's own methods.
//! Needs node and `npm ci --prefix crates/view/tests/tsp_client`.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

mod common;

#[test]
fn tsp_typescript_client() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/tsp_client");
    if !testkit::tool_or_skip("node", "apt-get install nodejs npm", "the TSP client test") {
        return;
    }
    if !dir.join("node_modules/tsp-typescript-client").exists() {
        assert!(
            testkit::shared().is_none(),
            "tsp-typescript-client must be installed where the shared suites run \
             (npm ci --prefix crates/view/tests/tsp_client)"
        );
        eprintln!(
            "tsp-typescript-client is not installed (npm ci --prefix crates/view/tests/tsp_client): \
             skipping the TSP client test"
        );
        return;
    }
    let trace = common::kernel_mix("client", 20_000, 2, 11);

    // What the client must find, from the trace itself and tracekit print.
    let traces = ctf::open_all(&[&trace]).unwrap();
    let mut tids = std::collections::BTreeSet::new();
    let mut events = 0u64;
    let mut ev = pipeline::RangeEvents::new(
        &traces,
        &pipeline::ReadOptions {
            no_intersection: true,
            ..Default::default()
        },
    );
    while let Some((e, _)) = ev.next() {
        events += 1;
        if e.name() == "sched_switch" {
            let tid = e
                .payload()
                .unwrap()
                .field("next_tid")
                .unwrap()
                .as_i64()
                .unwrap();
            if tid != 0 {
                tids.insert(tid);
            }
        }
    }
    let mut out = Vec::new();
    text::print(
        &traces,
        &text::PrintOptions::default(),
        &mut out,
        &mut Vec::new(),
    )
    .unwrap();
    let first_lines: Vec<serde_json::Value> = String::from_utf8(out)
        .unwrap()
        .lines()
        .take(5)
        .map(|l| {
            // `[time] (+delta) host NAME: CONTENTS`
            let after_host = l.splitn(4, ' ').nth(3).unwrap();
            let (name, contents) = after_host.split_once(": ").unwrap();
            serde_json::json!({"name": name, "contents": contents})
        })
        .collect();
    let expected = serde_json::json!({
        "events": events,
        "tids": tids.iter().take(8).collect::<Vec<_>>(),
        "cpus": 2,
        "firstLines": first_lines,
    });
    let exp_file = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(exp_file.path(), expected.to_string()).unwrap();

    let server = view::Server::start(view::ServeOptions {
        listen: "127.0.0.1:0".parse().unwrap(),
        ..Default::default()
    })
    .unwrap();
    let base = format!("http://{}", server.addr());
    let t0 = Instant::now();
    let mut child = Command::new("node")
        .arg(dir.join("client.mjs"))
        .arg(&base)
        .arg(&trace)
        .arg(exp_file.path())
        .current_dir(&dir)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Bounded: a hung client fails the test instead of hanging it.
    loop {
        if child.try_wait().unwrap().is_some() {
            break;
        }
        if t0.elapsed() > Duration::from_secs(120) {
            let _ = child.kill();
            panic!("the TSP client did not finish in 120 s");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    eprintln!("{stdout}{stderr}");
    assert!(
        out.status.success(),
        "client.mjs failed:\n{stdout}\n{stderr}"
    );
    assert!(stdout.contains("all checks passed"));
}
