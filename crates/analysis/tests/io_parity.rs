//! `--mi` parity of `iolatencytop`, `iolog` and `iousagetop` with lttng-analyses 0.6.1 on the
//! shared real traces.
//!
//! Needs `TRACEKIT_SHARED` (the `shared` directory with `traces/` and `reference/`); skipped
//! with a message otherwise. Ours runs with `lttng_analyses_quirks` (no accept*/pipe*/fcntl64
//! descriptor tracking, as lttng-analyses). Both sides are normalised for the documented
//! differences (`DIFFERENCES.md`, "I/O"): process cells compare by TID only (lttng-analyses
//! keeps the command name a thread had before exec, and omits some PIDs), per-file names
//! with a ` (COMMAND)` suffix are left out, the "File descriptor owners" column is not compared, and an
//! unknown path is `unknown` either way. Rows are compared in order, equal values included:
//! lttng-analyses' sorts are stable over its I/O state, whose threads are in the order its
//! tracking met them, and tracekit keeps that order (the per-process tables list those
//! threads, idle ones with zeros).

use std::path::{Path, PathBuf};

use analysis::{lami::results_json, Common, Options};
use serde_json::{json, Value};

fn shared() -> Option<PathBuf> {
    testkit::shared_or_skip("the lttng-analyses I/O parity tests")
}

const TRACES: &[(&str, &str)] = &[
    ("many-threads", "traces/kernel/many-threads"),
    ("bug446190", "traces/kernel/bug446190"),
    (
        "basic-kernel-analysis",
        "traces/kernel/basic-kernel-analysis",
    ),
    ("flipping-endianness", "traces/kernel/flipping-endianness"),
];

fn normalise_cell(c: &Value, per_file: bool) -> Value {
    match c["class"].as_str() {
        Some("process") => json!({"class": "process", "tid": c["tid"]}),
        Some("unknown") => json!({"class": "path", "path": "unknown"}),
        Some("string") if per_file => Value::Null,
        _ => c.clone(),
    }
}

/// The tables of a result document: (class, normalised rows in order).
fn normalise(doc: &Value) -> Vec<(String, Vec<Value>)> {
    let mut out = Vec::new();
    for t in doc["results"].as_array().expect("results") {
        let class = t["class"].to_string();
        let per_file = class.contains("per-file-top");
        let rows: Vec<Value> = t["data"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| {
                // Per-command aggregates ("socket (COMMAND)", "unknown (COMMAND)") depend on
                // the command names, which differ after exec.
                !(per_file && r[0]["path"].as_str().is_some_and(|p| p.ends_with(')')))
            })
            .map(|r| {
                Value::Array(
                    r.as_array()
                        .unwrap()
                        .iter()
                        .map(|c| normalise_cell(c, per_file))
                        .collect(),
                )
            })
            .collect();
        out.push((class, rows));
    }
    out
}

/// Whether our row `a` stands for the reference row `b`: equal, or equal but for the path of
/// a descriptor lttng-analyses lost (`unknown`: it loses some inherited descriptors at fork,
/// see DIFFERENCES.md).
fn row_matches(a: &Value, b: &Value) -> bool {
    if a == b {
        return true;
    }
    let (Some(x), Some(y)) = (a.as_array(), b.as_array()) else {
        return false;
    };
    y.get(6).is_some_and(|c| c["path"] == "unknown")
        && x.len() == y.len()
        && x.iter()
            .zip(y)
            .enumerate()
            .all(|(i, (p, q))| i == 6 || p == q)
}

/// Compares the rows of a table in order; the error names the first row that differs.
fn same_rows(what: &str, class: &str, ours: &[Value], reference: &[Value]) {
    assert_eq!(
        ours.len(),
        reference.len(),
        "{what} {class}: rows\n ours {ours:#?}\n ref {reference:#?}"
    );
    for (i, (r, x)) in ours.iter().zip(reference).enumerate() {
        assert!(
            row_matches(r, x),
            "{what} {class}: row {i}:\n ours {r:#?}\n ref {x:#?}"
        );
    }
}

fn reference(shared: &Path, trace: &str, cmd: &str, variant: Option<&str>) -> Option<Value> {
    let base = shared.join("reference/lttng-analyses-0.6.1").join(trace);
    let p = match variant {
        Some(v) => base.join("variants").join(v),
        None => base.join(format!("{cmd}-mi.json")),
    };
    let text = std::fs::read_to_string(p).ok()?;
    Some(serde_json::from_str(&text).expect("reference JSON"))
}

fn ours(shared: &Path, path: &str, cmd: &str, opts: &Options) -> Value {
    let tables = analysis::run_named(
        cmd,
        &[shared.join(path)],
        &Common {
            lttng_analyses_quirks: true,
            ..Default::default()
        },
        opts,
    )
    .unwrap_or_else(|e| panic!("{cmd} on {path}: {e}"));
    results_json(&tables)
}

fn check(cmd: &str) {
    let Some(sh) = shared() else { return };
    let mut compared = 0;
    for (name, path) in TRACES {
        let Some(r) = reference(&sh, name, cmd, None) else {
            continue;
        };
        // A damaged trace cannot match references made from the original: skipped loudly.
        if testkit::intact_trace(&sh, path).is_none() {
            continue;
        }
        compared += 1;
        let a = normalise(&ours(&sh, path, cmd, &Options::default()));
        let b = normalise(&r);
        assert_eq!(
            a.iter().map(|t| &t.0).collect::<Vec<_>>(),
            b.iter().map(|t| &t.0).collect::<Vec<_>>(),
            "{cmd} {name}: tables"
        );
        for ((class, ra), (_, rb)) in a.iter().zip(&b) {
            same_rows(&format!("{cmd} {name}"), class, ra, rb);
        }
    }
    assert!(
        compared > 0,
        "{cmd}: no intact shared trace with a reference"
    );
}

#[test]
fn iolatencytop_parity() {
    check("iolatencytop");
}

#[test]
fn iolog_parity() {
    check("iolog");
}

#[test]
fn iousagetop_parity() {
    check("iousagetop");
}

/// `iolog --minsize N` keeps the reference's rows (text variants: one line per row).
#[test]
fn iolog_minsize_variants() {
    let Some(sh) = shared() else { return };
    let mut compared = 0;
    for (trace, path, variant, minsize) in [
        (
            "basic-kernel-analysis",
            "traces/kernel/basic-kernel-analysis",
            "iolog-minsize4096.txt",
            4096,
        ),
        (
            "many-threads",
            "traces/kernel/many-threads",
            "iolog-minsize1.txt",
            1,
        ),
    ] {
        let p = sh
            .join("reference/lttng-analyses-0.6.1")
            .join(trace)
            .join("variants")
            .join(variant);
        let Ok(text) = std::fs::read_to_string(p) else {
            continue;
        };
        if testkit::intact_trace(&sh, path).is_none() {
            continue;
        }
        compared += 1;
        let expected = text.lines().filter(|l| l.starts_with('[')).count();
        let opts = Options {
            minsize: Some(minsize),
            ..Default::default()
        };
        let ours = ours(&sh, path, "iolog", &opts);
        let rows = ours["results"][0]["data"].as_array().unwrap();
        assert_eq!(rows.len(), expected, "{trace} {variant}");
        assert!(rows
            .iter()
            .all(|r| r[4].is_null() || r[4]["value"].as_i64().unwrap() >= minsize));
    }
    assert!(
        compared > 0,
        "no intact shared trace with an iolog --minsize reference"
    );
}

/// `iousagetop --limit 20`: 20 rows per per-process table.
#[test]
fn iousagetop_limit_variant() {
    let Some(sh) = shared() else { return };
    let opts = Options {
        limit: 20,
        ..Default::default()
    };
    let ours = ours(
        &sh,
        "traces/kernel/basic-kernel-analysis",
        "iousagetop",
        &opts,
    );
    for t in ours["results"].as_array().unwrap() {
        if t["class"]["inherit"] == "per-process-top" {
            assert_eq!(t["data"].as_array().unwrap().len(), 20);
        }
    }
}
