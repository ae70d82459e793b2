//! `--mi` parity with lttng-analyses 0.6.1, run now on generated traces (`kernel-mix`: four
//! CPUs, scheduling, system calls, IRQs and soft IRQs of lttng-modules 2.13, block and network
//! I/O, page allocations; and its `order_mix` variant, where the order of rows matters:
//! renamed threads with mixed-case names, priority changes, ties): inputs the shared traces do
//! not hold, compared as `tests/parity.rs` compares those (rows in order), with
//! `--lttng-analyses-quirks` (DIFFERENCES.md).
//!
//! The I/O logs and tops are not compared here: the generator's threads open descriptors they
//! hold already, which lttng-analyses does not rename (DIFFERENCES.md, "Reopened
//! descriptors"); `tests/io_parity.rs` compares them on the shared traces.
//!
//! Needs lttng-analyses (`lttng-cputop-mi`…, `apt install python3-lttnganalyses`); skipped with
//! a message without it, except where the shared suites run (`TRACEKIT_SHARED`: CI), which
//! installs it.

mod common;

use std::path::Path;

use analysis::{lami::results_json, Common, Options};
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

/// A generated trace where row order matters (`order_mix`): threads with mixed-case names,
/// some equal once lower-cased, renamed between runs; priority changes, real-time ones
/// included; times on a coarse grid (tied durations, latencies and counts); three threads
/// that run exactly as long as each other.
fn order_trace() -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    let p = scenario::kernel_mix::KernelMixParams {
        events: 20_000,
        cpus: 4,
        seed: 11,
        order_mix: true,
        ..Default::default()
    };
    scenario::kernel_mix::generate(&tmp.path().join("kernel"), &p).expect("trace written");
    tmp
}

fn lttng(name: &str, root: &Path) -> Value {
    lttng_args(name, &[], root)
}

fn lttng_args(name: &str, args: &[&str], root: &Path) -> Value {
    common::lttng_mi(&format!("lttng-{name}-mi"), args, root)
}

fn ours(name: &str, root: &Path) -> Value {
    ours_opts(name, root, &Options::default())
}

fn ours_opts(name: &str, root: &Path, opts: &Options) -> Value {
    let common = Common {
        lttng_analyses_quirks: true,
        ..Common::default()
    };
    let tables = analysis::run_named(name, &[root.join("kernel")], &common, opts).unwrap();
    results_json(&tables)
}

/// The tables of a document, in order: (class and title, rows).
fn tables(doc: &Value) -> Vec<(String, Vec<Value>)> {
    doc["results"]
        .as_array()
        .expect("results")
        .iter()
        .map(|t| {
            let rows = t["data"].as_array().expect("rows").clone();
            (t["class"].to_string(), rows)
        })
        .collect()
}

/// The same tables in the same order, each with the same rows in the same order (every table
/// of these analyses has an order lttng-analyses defines: see [`cpu_irq_and_scheduling_analyses_match_lttng_analyses`]);
/// `fix` normalizes each row of both sides first.
fn same(name: &str, ours: &Value, theirs: &Value, fix: &dyn Fn(&mut Value)) {
    let (a, b) = (tables(ours), tables(theirs));
    assert_eq!(
        a.iter().map(|t| &t.0).collect::<Vec<_>>(),
        b.iter().map(|t| &t.0).collect::<Vec<_>>(),
        "{name}: tables"
    );
    for ((class, rows), (_, reference)) in a.iter().zip(&b) {
        let mut mine = rows.clone();
        let mut reference = reference.clone();
        mine.iter_mut().chain(reference.iter_mut()).for_each(fix);
        common::rows_in_order(&format!("{name}: {class}"), &mine, &reference, tie(name));
    }
}

/// The key under which rows of analysis `name` come from simultaneous events (see
/// [`common::rows_in_order`]): the switch of schedlog, the latency and switch of schedtop, the
/// end of irqlog. Other tables do not depend on the order of simultaneous events here.
fn tie(name: &str) -> Option<&'static dyn Fn(&Value) -> Value> {
    match name
        .split(' ')
        .find(|w| w.starts_with("sched") || w.starts_with("irq"))?
    {
        "schedlog" => Some(&|r: &Value| r[1].clone()),
        "schedtop" => Some(&|r: &Value| Value::Array(vec![r[2].clone(), r[1].clone()])),
        "irqlog" => Some(&|r: &Value| r[0]["end"].clone()),
        _ => None,
    }
}

fn as_is(_: &mut Value) {}

/// Blanks the names of a row's process cells.
fn blank_names(row: &mut Value) {
    for c in row.as_array_mut().into_iter().flatten() {
        if c["class"] == "process" {
            c["name"] = Value::String(String::new());
        }
    }
}

/// Every table compared in order. lttng-analyses' orders, all defined (Python's sorts are
/// stable, its dicts keep insertion order): cputop per-thread by usage (ties: first seen),
/// per-CPU by id; irqstats and irqfreq by IRQ number; irqlog and schedlog in completion
/// order; schedtop by latency (ties: chronological); schedstats per thread by lower-case
/// name (ties: first seen), per priority by priority; iolatencystats by category.
#[test]
fn cpu_irq_and_scheduling_analyses_match_lttng_analyses() {
    if !installed() {
        return;
    }
    for (which, tmp) in [("kernel-mix", trace()), ("order-mix", order_trace())] {
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
            // The log and top name threads as they were at the scheduling, lttng-analyses
            // as at the end of the trace (DIFFERENCES.md).
            let fix: &dyn Fn(&mut Value) = match name {
                "schedlog" | "schedtop" => &blank_names,
                _ => &as_is,
            };
            same(
                &format!("{which} {name}"),
                &ours(name, tmp.path()),
                &lttng(name, tmp.path()),
                fix,
            );
        }
    }
}

/// Rows past the default top 10 (`--limit 0`: every thread), where the ties are: cputop's
/// threads that ran exactly as long (`order_mix`'s three one-run threads), memtop's equal page
/// counts; and schedstats' other tables (total, per priority).
#[test]
fn whole_tables_keep_lttng_analyses_order_of_ties() {
    if !installed() {
        return;
    }
    let tmp = order_trace();
    let all = Options {
        limit: 0,
        ..Options::default()
    };
    let mine = ours_opts("cputop", tmp.path(), &all);
    let theirs = lttng_args("cputop", &["--limit", "0"], tmp.path());
    same("cputop --limit 0", &mine, &theirs, &as_is);
    // The three one-run threads tie, in the order they first ran.
    let rows = mine["results"][0]["data"].as_array().unwrap();
    let tied: Vec<i64> = rows
        .iter()
        .filter_map(|r| r[0]["tid"].as_i64().filter(|t| (990..993).contains(t)))
        .collect();
    assert_eq!(tied, [990, 991, 992]);
    same(
        "memtop --limit 0",
        &ours_opts("memtop", tmp.path(), &all),
        &lttng_args("memtop", &["--limit", "0"], tmp.path()),
        &as_is,
    );
    let opts = Options {
        total: true,
        per_tid: true,
        per_prio: true,
        ..Options::default()
    };
    same(
        "schedstats --total --per-tid --per-prio",
        &ours_opts("schedstats", tmp.path(), &opts),
        &lttng_args(
            "schedstats",
            &["--total", "--per-tid", "--per-prio"],
            tmp.path(),
        ),
        &as_is,
    );
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

/// memtop: with lttng-analyses' dropped frees reproduced (`--lttng-analyses-quirks`,
/// DIFFERENCES.md) every table is equal, rows in order (most pages first, ties in the order
/// lttng-analyses first saw the threads); without, allocations are unchanged and ours count
/// at least as many frees.
#[test]
fn memtop_matches_lttng_analyses() {
    if !installed() {
        return;
    }
    let tmp = trace();
    let (legacy, theirs) = (ours("memtop", tmp.path()), lttng("memtop", tmp.path()));
    same("memtop", &legacy, &theirs, &as_is);
    let tables = analysis::run_named(
        "memtop",
        &[tmp.path().join("kernel")],
        &Common::default(),
        &Options::default(),
    )
    .unwrap();
    let mine = results_json(&tables);
    // The same rows; equal counts can come in another order: a thread first seen freeing a
    // page lttng-analyses does not count comes earlier among them.
    let sorted = |doc: &Value| {
        let mut v: Vec<String> = doc["results"][0]["data"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r.to_string())
            .collect();
        v.sort();
        v
    };
    assert_eq!(mine["results"][0]["class"], "allocd");
    assert_eq!(sorted(&mine), sorted(&legacy), "allocations");
    let total = |doc: &Value| {
        let t = doc["results"].as_array().unwrap().last().unwrap();
        assert_eq!(t["class"], "total");
        (
            t["data"][0][0]["value"].as_u64().unwrap(),
            t["data"][0][1]["value"].as_u64().unwrap(),
        )
    };
    let ((alloc_a, free_a), (alloc_b, free_b)) = (total(&mine), total(&theirs));
    assert_eq!(alloc_a, alloc_b);
    assert!(
        free_a >= free_b,
        "frees: ours {free_a}, lttng-analyses {free_b}"
    );
}
