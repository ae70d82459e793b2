//! `tracekit critpath` end to end on generated client-server traces.

use std::path::Path;
use std::process::Output;

mod common;
use common::ok;

fn tracekit(args: &[&str]) -> Output {
    common::command()
        .args(args)
        .output()
        .expect("tracekit runs")
}

fn gen(dir: &Path, aligned: bool) -> serde_json::Value {
    let d = dir.to_str().unwrap();
    let mut args = vec!["gen", "client-server", "-o", d, "--requests", "10"];
    if aligned {
        args.extend(["--max-offset", "0", "--max-drift-ppm", "0"]);
    }
    ok(tracekit(&args));
    serde_json::from_str(&std::fs::read_to_string(dir.join("ground-truth.json")).unwrap()).unwrap()
}

fn secs(ns: &str) -> String {
    let (a, b) = ns.split_at(ns.len() - 9);
    format!("{a}.{b}")
}

#[test]
fn json_path_of_the_marked_request() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("cs");
    let gt = gen(&dir, true);
    let m = &gt["marked_request"];
    let tid = m["tid"].as_i64().unwrap().to_string();
    let (b, e) = (m["begin"].as_str().unwrap(), m["end"].as_str().unwrap());
    let out = ok(tracekit(&[
        "critpath",
        dir.to_str().unwrap(),
        "--tid",
        &tid,
        "--host",
        m["client"].as_str().unwrap(),
        "--begin",
        &secs(b),
        "--end",
        &secs(e),
        "--json",
    ]));
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let path = v["path"].as_array().unwrap();
    let gt_path = m["critical_path"].as_array().unwrap();
    assert_eq!(
        path[0]["start"].as_i64().unwrap(),
        b.parse::<i64>().unwrap()
    );
    assert_eq!(
        path.last().unwrap()["end"].as_i64().unwrap(),
        e.parse::<i64>().unwrap()
    );
    // Every ground-truth boundary is a boundary of the computed path.
    let bounds: std::collections::BTreeSet<i64> = path
        .iter()
        .flat_map(|s| [s["start"].as_i64().unwrap(), s["end"].as_i64().unwrap()])
        .collect();
    let key = |s: &serde_json::Value| (s["host"].clone(), s["tid"].clone(), s["state"].clone());
    for w in gt_path.windows(2) {
        if key(&w[0]) != key(&w[1]) {
            let t: i64 = w[1]["begin"].as_str().unwrap().parse().unwrap();
            assert!(bounds.contains(&t), "ground-truth boundary {t} missing");
        }
    }
    let total: i64 = path
        .iter()
        .map(|s| s["end"].as_i64().unwrap() - s["start"].as_i64().unwrap())
        .sum();
    assert_eq!(v["summary"]["total_ns"].as_i64().unwrap(), total);
    for s in path {
        assert!(matches!(
            s["state"].as_str().unwrap(),
            "running"
                | "preempted"
                | "blocked"
                | "timer"
                | "network"
                | "block_device"
                | "interrupted"
                | "ipi"
                | "unknown"
        ));
    }
}

#[test]
fn text_path_with_sync() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("cs");
    let gt = gen(&dir, false);
    let m = &gt["marked_request"];
    let tid = m["tid"].as_i64().unwrap().to_string();
    let out = ok(tracekit(&[
        "critpath",
        dir.to_str().unwrap(),
        "--sync",
        "--tid",
        &tid,
        "--host",
        m["client"].as_str().unwrap(),
    ]));
    assert!(out.starts_with("Critical path of wrk/"), "{out}");
    assert!(out.contains("Total per state:"));
    assert!(out.contains(" on db spent ") || out.contains(" spent "));
    // Without --host the tid may be ambiguous or unknown, never a crash.
    let o = tracekit(&["critpath", dir.to_str().unwrap(), "--tid", "999999"]);
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("no thread 999999"));
}
