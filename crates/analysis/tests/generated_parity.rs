//! `--mi` parity with lttng-analyses 0.6.1, run now on a generated trace (`kernel-mix`: four
//! CPUs, scheduling, system calls, IRQs and soft IRQs of lttng-modules 2.13, block and network
//! I/O, page allocations): inputs the shared traces do not hold, compared as
//! `tests/parity.rs` compares those, with `--lttng-analyses-quirks` (DIFFERENCES.md).
//!
//! The I/O logs and tops are not compared here: the generator's threads open descriptors they
//! hold already, which lttng-analyses does not rename (DIFFERENCES.md, "Reopened
//! descriptors"); `tests/io_parity.rs` compares them on the shared traces.
//!
//! Needs lttng-analyses (`lttng-cputop-mi`…, `apt install python3-lttnganalyses`); skipped with
//! a message without it, except where the shared suites run (`TRACEKIT_SHARED`: CI), which
//! installs it.

mod common;

use std::collections::BTreeMap;
use std::path::Path;

use analysis::{lami::results_json, Common, Options};
use common::json_eq;
use serde_json::Value;

fn installed() -> bool {
    testkit::tool_or_skip(
        "lttng-cputop-mi",
        "apt install python3-lttnganalyses",
        "the generated-trace parity tests",
    )
}

/// A generated trace in `DIR/kernel` (lttng-analyses wants a path component named so).
fn trace() -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    testkit::kernel_mix(&tmp.path().join("kernel"), 20_000, 4, 5);
    tmp
}

fn lttng(name: &str, root: &Path) -> Value {
    common::lttng_mi(&format!("lttng-{name}-mi"), &[], root)
}

fn ours(name: &str, root: &Path) -> Value {
    let common = Common {
        lttng_analyses_quirks: true,
        ..Common::default()
    };
    let tables =
        analysis::run_named(name, &[root.join("kernel")], &common, &Options::default()).unwrap();
    results_json(&tables)
}

/// The tables of a document by their class (and title), each a list of rows.
fn tables(doc: &Value) -> BTreeMap<String, Vec<Value>> {
    let mut out = BTreeMap::new();
    for t in doc["results"].as_array().expect("results") {
        let rows = t["data"].as_array().expect("rows").clone();
        assert!(
            out.insert(t["class"].to_string(), rows).is_none(),
            "two tables {}",
            t["class"]
        );
    }
    out
}

/// The same tables with the same rows, in any order among rows (lttng-analyses orders ties
/// arbitrarily); `fix` normalizes each row of both sides first.
fn same(name: &str, ours: &Value, theirs: &Value, fix: &dyn Fn(&mut Value)) {
    let (a, b) = (tables(ours), tables(theirs));
    assert_eq!(
        a.keys().collect::<Vec<_>>(),
        b.keys().collect::<Vec<_>>(),
        "{name}: tables"
    );
    for (class, rows) in &a {
        let mut mine = rows.clone();
        let mut reference = b[class].clone();
        mine.iter_mut().chain(reference.iter_mut()).for_each(fix);
        assert_eq!(mine.len(), reference.len(), "{name}: {class}: rows");
        for r in &mine {
            assert!(
                reference.iter().any(|x| json_eq(r, x)),
                "{name}: {class}: our row {r} is not lttng-analyses's"
            );
        }
    }
}

fn as_is(_: &mut Value) {}

#[test]
fn cpu_irq_and_scheduling_analyses_match_lttng_analyses() {
    if !installed() {
        return;
    }
    let tmp = trace();
    for name in [
        "cputop",
        "irqstats",
        "irqfreq",
        "irqlog",
        "schedtop",
        "schedstats",
        "schedlog",
        "iolatencystats",
    ] {
        same(
            name,
            &ours(name, tmp.path()),
            &lttng(name, tmp.path()),
            &as_is,
        );
    }
}

/// syscallstats: the "Return values" cell of lttng-analyses counts one call too many (a
/// documented defect); ours must count every call. Tables are matched by thread.
#[test]
fn syscallstats_matches_lttng_analyses_but_its_return_value_counts() {
    if !installed() {
        return;
    }
    let tmp = trace();
    let (mine, theirs) = (
        ours("syscallstats", tmp.path()),
        lttng("syscallstats", tmp.path()),
    );
    // lttng-analyses may lack a thread's pid: tables are matched by TID.
    let by_tid = |doc: &Value| -> Value {
        let mut v = doc.clone();
        for t in v["results"].as_array_mut().unwrap() {
            if let Some(title) = t["class"]["title"].as_str() {
                let tid = title.rsplit("TID: ").next().unwrap().to_string();
                t["class"]["title"] = Value::String(tid);
            }
        }
        v
    };
    for t in mine["results"].as_array().unwrap() {
        for row in t["data"].as_array().unwrap() {
            let Some(rets) = row.get(6).and_then(|c| c["value"].as_str()) else {
                continue;
            };
            let counted: u64 = rets
                .trim_matches(|c| c == '{' || c == '}')
                .split(", ")
                .map(|kv| kv.rsplit(": ").next().unwrap().parse::<u64>().unwrap())
                .sum();
            assert_eq!(Some(counted), row[1]["value"].as_u64(), "{row}");
        }
    }
    // Return values apart; process cells by tid and name (lttng-analyses leaves out the pid
    // of a thread whose process it has not seen: DIFFERENCES.md).
    let fix = |row: &mut Value| {
        let Some(cells) = row.as_array_mut() else {
            return;
        };
        if cells.first().is_some_and(|c| c["class"] == "syscall") {
            cells.truncate(6);
        }
        for c in cells.iter_mut() {
            if c["class"] == "process" {
                c.as_object_mut().unwrap().remove("pid");
            }
        }
    };
    same("syscallstats", &by_tid(&mine), &by_tid(&theirs), &fix);
}

/// memtop: the allocation tables are equal; lttng-analyses drops some page frees (a documented
/// defect), so ours count at least as many per thread.
#[test]
fn memtop_allocations_match_lttng_analyses() {
    if !installed() {
        return;
    }
    let tmp = trace();
    let (mine, theirs) = (ours("memtop", tmp.path()), lttng("memtop", tmp.path()));
    let (a, b) = (tables(&mine), tables(&theirs));
    let allocd = "\"allocd\"";
    let set = |rows: &[Value]| -> Vec<String> {
        let mut v: Vec<String> = rows.iter().map(|r| r.to_string()).collect();
        v.sort();
        v
    };
    assert_eq!(set(&a[allocd]), set(&b[allocd]));
    let total = |t: &BTreeMap<String, Vec<Value>>| {
        let r = &t["\"total\""][0];
        (
            r[0]["value"].as_u64().unwrap(),
            r[1]["value"].as_u64().unwrap(),
        )
    };
    let ((alloc_a, free_a), (alloc_b, free_b)) = (total(&a), total(&b));
    assert_eq!(alloc_a, alloc_b);
    assert!(
        free_a >= free_b,
        "frees: ours {free_a}, lttng-analyses {free_b}"
    );
}
