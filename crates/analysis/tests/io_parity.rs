//! `--mi` parity of `iolatencytop`, `iolog` and `iousagetop` with lttng-analyses 0.6.1 on the
//! shared real traces.
//!
//! Needs `TRACEKIT_SHARED` (the `shared` directory with `traces/` and `reference/`); skipped
//! with a message otherwise. Ours runs with `lttng_analyses_quirks` (no accept*/pipe*/fcntl64
//! descriptor tracking, as lttng-analyses). Both sides are normalised for the documented
//! differences (`DIFFERENCES.md`, "I/O"): process cells compare by TID only (lttng-analyses
//! keeps the command name a thread had before exec, and omits some PIDs), per-file names
//! with a ` (COMMAND)` suffix are left out, the "File descriptor owners" column is not compared, an
//! unknown path is `unknown` either way, and all-zero per-process rows (arbitrary ties) are
//! left out. Rows are compared as multisets.

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

/// The tables of a result document: (class, sorted normalised rows).
fn normalise(doc: &Value) -> Vec<(String, Vec<String>)> {
    let mut out = Vec::new();
    for t in doc["results"].as_array().expect("results") {
        let class = t["class"].to_string();
        let per_file = class.contains("per-file-top");
        let per_process = class.contains("\"per-process-top\"");
        let mut rows: Vec<String> = t["data"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| {
                // All-zero per-process rows are ties in an arbitrary order.
                (!per_process || r[1]["value"].as_i64() != Some(0))
                    // Per-command aggregates ("socket (COMMAND)", "unknown (COMMAND)") depend
                    // on the command names, which differ after exec.
                    && !(per_file && r[0]["path"].as_str().is_some_and(|p| p.ends_with(')')))
            })
            .map(|r| {
                let cells: Vec<Value> = r
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|c| normalise_cell(c, per_file))
                    .collect();
                Value::Array(cells).to_string()
            })
            .collect();
        // Ties at the cut of a top table: keep their value only.
        if class.contains("per-") && t["data"].as_array().unwrap().len() >= 10 {
            if let Some(min) = t["data"].as_array().unwrap().last().map(|r| r[1].clone()) {
                for r in rows.iter_mut() {
                    let v: Value = serde_json::from_str(r).unwrap();
                    if v[1] == min {
                        *r = format!("tie at {min}");
                    }
                }
            }
        }
        rows.sort();
        out.push((class, rows));
    }
    out
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
            let (only_a, only_b) = unmatched(ra, rb);
            assert!(
                only_a.is_empty() && only_b.is_empty() && ra.len() == rb.len(),
                "{cmd} {name} {class}: {} vs {} rows\n ours only: {only_a:#?}\n ref only: {only_b:#?}",
                ra.len(),
                rb.len()
            );
        }
    }
    assert!(
        compared > 0,
        "{cmd}: no intact shared trace with a reference"
    );
}

/// Rows of `a` and `b` without a counterpart. A reference row whose path is `unknown` matches
/// our row with a known path (lttng-analyses loses some inherited descriptors at fork, see
/// DIFFERENCES.md). In "per-…" top tables, rows tied at the smallest value (cut arbitrarily)
/// are compared by number only.
fn unmatched(a: &[String], b: &[String]) -> (Vec<String>, Vec<String>) {
    let mut rest_a: Vec<String> = a.to_vec();
    let mut rest_b = Vec::new();
    for r in b {
        if let Some(i) = rest_a.iter().position(|x| x == r) {
            rest_a.swap_remove(i);
        } else {
            rest_b.push(r.clone());
        }
    }
    let strip = |r: &str| -> Option<(Value, bool)> {
        let mut v: Value = serde_json::from_str(r).ok()?;
        let cells = v.as_array_mut()?;
        let unknown = cells.get(6)?["path"] == "unknown";
        cells[6] = Value::Null;
        Some((v, unknown))
    };
    rest_b.retain(|r| {
        let Some((sb, true)) = strip(r) else {
            return true;
        };
        match rest_a
            .iter()
            .position(|x| strip(x).is_some_and(|(sa, _)| sa == sb))
        {
            Some(i) => {
                rest_a.swap_remove(i);
                false
            }
            None => true,
        }
    });
    (rest_a, rest_b)
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
