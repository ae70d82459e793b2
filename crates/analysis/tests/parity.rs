//! `--mi` parity with lttng-analyses 0.6.1 on the shared real traces.
//!
//! Needs `TRACEKIT_SHARED` (the `shared` directory with `traces/` and `reference/`); skipped
//! with a message otherwise. Rows are compared in order: lttng-analyses defines the order of
//! every table (its sorts are stable and its dicts keep insertion order, so ties come in the
//! order it first saw the threads, calls or IRQs), except between rows made from events with
//! the same timestamp on different CPUs, which its reader (babeltrace 1) and tracekit's order
//! each their own way: those runs of rows are compared as sets ([`tie`]). Numbers with a
//! relative tolerance of 1e-9 (float summation order). Known lttng-analyses defects are
//! reproduced (`lttng_analyses_quirks`) or corrected in the reference before comparing (see
//! `DIFFERENCES.md`).

mod common;

use std::path::{Path, PathBuf};

use analysis::{lami::results_json, Common, Options};
use common::json_eq;
use serde_json::Value;

fn shared() -> Option<PathBuf> {
    testkit::shared_or_skip("the lttng-analyses parity tests")
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

/// The key under which rows of the analysis `what` names come from simultaneous events, in
/// an order of the reader's (see [`common::rows_in_order`]): the switch of schedlog, the
/// latency and switch of schedtop, the end of irqlog. lttng-analyses defines the order of
/// every other table of these analyses (its sorts are stable, its dicts keep insertion order).
fn tie(what: &str) -> Option<&'static dyn Fn(&Value) -> Value> {
    match what.split(' ').next()? {
        "schedlog" => Some(&|r: &Value| r[1].clone()),
        "schedtop" => Some(&|r: &Value| Value::Array(vec![r[2].clone(), r[1].clone()])),
        "irqlog" => Some(&|r: &Value| r[0]["end"].clone()),
        _ => None,
    }
}

/// Compares result documents; `fix` corrects a reference table (known defects) first.
fn compare(what: &str, ours: &Value, reference: &Value, fix: &dyn Fn(&mut Value, &Value)) {
    let (Some(a), Some(b)) = (ours["results"].as_array(), reference["results"].as_array()) else {
        panic!("{what}: no results (ours: {ours}, reference: {reference})");
    };
    assert_eq!(a.len(), b.len(), "{what}: number of tables");
    for (i, (ta, tb)) in a.iter().zip(b).enumerate() {
        let mut tb = tb.clone();
        fix(&mut tb, ta);
        assert!(
            json_eq(&ta["class"], &tb["class"]),
            "{what}: table {i} class: {} vs {}",
            ta["class"],
            tb["class"]
        );
        assert_eq!(
            ta["time-range"], tb["time-range"],
            "{what}: table {i} range"
        );
        common::rows_in_order(
            &format!("{what}: table {i} {}", ta["class"]),
            ta["data"].as_array().unwrap(),
            tb["data"].as_array().unwrap(),
            tie(what),
        );
    }
}

fn reference(shared: &Path, trace: &str, cmd: &str) -> Option<Value> {
    let p = shared
        .join("reference/lttng-analyses-0.6.1")
        .join(trace)
        .join(format!("{cmd}-mi.json"));
    let text = std::fs::read_to_string(p).ok()?;
    Some(serde_json::from_str(&text).expect("reference JSON"))
}

/// The traces of [`TRACES`] that have a reference for `cmd`, with it. A damaged trace is left
/// out (loudly: [`testkit::intact_trace`]); the test fails when none is left to compare.
fn with_reference(sh: &Path, cmd: &str) -> Vec<(&'static str, &'static str, Value)> {
    let v: Vec<_> = TRACES
        .iter()
        .filter_map(|&(name, path)| {
            let r = reference(sh, name, cmd)?;
            testkit::intact_trace(sh, path)?;
            Some((name, path, r))
        })
        .collect();
    assert!(
        !v.is_empty(),
        "{cmd}: no intact shared trace with a reference to compare with"
    );
    v
}

fn ours(shared: &Path, path: &str, cmd: &str) -> Value {
    ours_q(shared, path, cmd, false)
}

/// Our results, optionally reproducing lttng-analyses's event-handling defects.
fn ours_q(shared: &Path, path: &str, cmd: &str, quirks: bool) -> Value {
    let tables = analysis::run_named(
        cmd,
        &[shared.join(path)],
        &Common {
            lttng_analyses_quirks: quirks,
            ..Default::default()
        },
        &Options::default(),
    )
    .unwrap_or_else(|e| panic!("{cmd} on {path}: {e}"));
    results_json(&tables)
}

fn no_fix(_: &mut Value, _: &Value) {}

#[test]
fn cputop_parity() {
    let Some(sh) = shared() else { return };
    for (name, path, r) in with_reference(&sh, "cputop") {
        let legacy = ours_q(&sh, path, "cputop", true);
        compare(&format!("cputop {name}"), &legacy, &r, &no_fix);
        // tracekit does not count a CPU busy before its first switch when the idle task ran:
        // per-thread usage is unchanged, per-CPU usage can only be lower.
        let o = ours(&sh, path, "cputop");
        assert_eq!(o["results"][0], legacy["results"][0], "{name}: per-thread");
        let cpus = |v: &Value| -> Vec<f64> {
            v["results"][1]["data"]
                .as_array()
                .unwrap()
                .iter()
                .map(|r| r[1]["value"].as_f64().unwrap())
                .collect()
        };
        for (a, b) in cpus(&o).iter().zip(cpus(&legacy)) {
            assert!(*a <= b + 1e-12, "{name}: per-CPU {a} > {b}");
        }
    }
}

/// lttng-analyses counts each distinct return value once too often, and names a thread whose
/// pid it did not learn `(?, TID: n)` (and omits the pid of its process cell) where tracekit
/// knows it from the statedump.
fn fix_syscallstats(t: &mut Value, ours: &Value) {
    if let (Some(title), Some(mine)) = (
        t["class"]["title"].as_str(),
        ours["class"]["title"].as_str(),
    ) {
        // The same thread (tables are compared in order).
        let tid = |s: &str| s.rsplit_once("TID: ").map(|(_, t)| t.to_string());
        if title.contains("(?, TID") && tid(title) == tid(mine) {
            t["class"]["title"] = ours["class"]["title"].clone();
        }
    }
    for row in t["data"].as_array_mut().unwrap() {
        if let Some(s) = row
            .get(6)
            .and_then(|c| c["value"].as_str())
            .map(str::to_string)
        {
            let fixed = s
                .trim_matches(|c| c == '{' || c == '}')
                .split(", ")
                .filter(|p| !p.is_empty())
                .map(|p| {
                    let (k, v) = p.rsplit_once(": ").unwrap();
                    // tracekit also names the kernel-internal restart codes.
                    let k = match k {
                        "'-512'" => "'ERESTARTSYS'",
                        "'-513'" => "'ERESTARTNOINTR'",
                        "'-514'" => "'ERESTARTNOHAND'",
                        "'-516'" => "'ERESTART_RESTARTBLOCK'",
                        k => k,
                    };
                    format!("{k}: {}", v.parse::<u64>().unwrap() - 1)
                })
                .collect::<Vec<_>>()
                .join(", ");
            row[6]["value"] = Value::String(format!("{{{fixed}}}"));
        }
    }
    // The total table: fill the pids tracekit knows.
    if t["class"] == "total" {
        let pids: std::collections::HashMap<i64, Value> = ours["data"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|r| Some((r[0]["tid"].as_i64()?, r[0].get("pid")?.clone())))
            .collect();
        for row in t["data"].as_array_mut().unwrap() {
            let tid = row[0]["tid"].as_i64().unwrap();
            if row[0].get("pid").is_none() {
                if let Some(p) = pids.get(&tid) {
                    row[0]["pid"] = p.clone();
                }
            }
        }
    }
}

#[test]
fn syscallstats_parity() {
    let Some(sh) = shared() else { return };
    for (name, path, r) in with_reference(&sh, "syscallstats") {
        // With lttng-analyses's event handling (compat_syscall_exit_* not taken as exits),
        // the results equal the reference once its return-value counts are corrected.
        let legacy = ours_q(&sh, path, "syscallstats", true);
        // Tables in order too: one per thread, in the order of the total table's rows.
        compare(
            &format!("syscallstats {name}"),
            &legacy,
            &r,
            &fix_syscallstats,
        );
        // tracekit's own results differ only where a compat exit closes a system call.
        let o = ours(&sh, path, "syscallstats");
        let calls = |v: &Value, what: &str| -> u64 {
            v["results"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|t| t["class"].is_object())
                .flat_map(|t| t["data"].as_array().unwrap().iter())
                .filter(|r| r[0]["name"] == what)
                .map(|r| r[1]["value"].as_u64().unwrap())
                .sum()
        };
        if name == "basic-kernel-analysis" {
            // 27 compat_syscall_exit_unknown events close syscall_entry_unknown (rt_sigreturn).
            assert_eq!(calls(&o, "unknown"), calls(&legacy, "unknown") + 27);
        } else {
            assert_eq!(o, legacy, "{name}: no compat exits, same results");
        }
    }
}

/// lttng-analyses 0.6.1 ignores `irq_softirq_*` (lttng-modules ≥ 2.7): it has no soft-IRQ
/// table on such traces where tracekit has one. With that defect reproduced the results are
/// equal; without, the hard-IRQ table is unchanged and the soft-IRQ table appears.
#[test]
fn irqstats_parity() {
    let Some(sh) = shared() else { return };
    for (name, path, r) in with_reference(&sh, "irqstats") {
        let legacy = ours_q(&sh, path, "irqstats", true);
        compare(&format!("irqstats {name}"), &legacy, &r, &no_fix);
        // The log and the histograms follow the same rules.
        for cmd in ["irqlog", "irqfreq"] {
            let Some(r) = reference(&sh, name, cmd) else {
                continue;
            };
            let legacy = ours_q(&sh, path, cmd, true);
            compare(&format!("{cmd} {name}"), &legacy, &r, &no_fix);
            let o = ours(&sh, path, cmd);
            if matches!(name, "many-threads" | "basic-kernel-analysis") {
                // Soft IRQs are added (log rows, histogram tables).
                let n = |v: &Value| -> usize {
                    v["results"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|t| t["data"].as_array().unwrap().len())
                        .sum()
                };
                assert!(n(&o) > n(&legacy), "{cmd} {name}: soft IRQs");
            } else {
                assert_eq!(o, legacy, "{cmd} {name}");
            }
        }
        let o = ours(&sh, path, "irqstats");
        assert_eq!(o["results"][0], legacy["results"][0], "{name}: hard IRQs");
        let soft = o["results"][1]["data"].as_array().map_or(0, |d| d.len());
        match name {
            "many-threads" | "basic-kernel-analysis" => assert!(soft > 0, "{name}: soft IRQs"),
            _ => assert_eq!(o, legacy),
        }
    }
}

/// Blanks the names of process cells: lttng-analyses and tracekit follow thread renames
/// (exec, prctl) at different points, see DIFFERENCES.md.
fn strip_names(v: &mut Value) {
    match v {
        Value::Object(o) => {
            if o.get("class").and_then(|c| c.as_str()) == Some("process") {
                o.insert("name".into(), Value::String(String::new()));
            }
            for x in o.values_mut() {
                strip_names(x);
            }
        }
        Value::Array(a) => a.iter_mut().for_each(strip_names),
        _ => {}
    }
}

/// The log and top name a thread as it was at the scheduling, lttng-analyses as at the end
/// of the trace: their names are not compared. schedstats' per-thread table is ordered by
/// name: with lttng-analyses' naming (`--lttng-analyses-quirks`: a thread renamed while it
/// runs keeps its old name until it runs again) its names and order are the reference's.
#[test]
fn sched_parity() {
    let Some(sh) = shared() else { return };
    for cmd in ["schedlog", "schedtop", "schedstats", "schedfreq"] {
        for (name, path, mut r) in with_reference(&sh, cmd) {
            let mut o = ours_q(&sh, path, cmd, true);
            if cmd != "schedstats" {
                strip_names(&mut o);
                strip_names(&mut r);
            }
            compare(&format!("{cmd} {name}"), &o, &r, &no_fix);
            // Without the quirks only names (and the order they give) can differ.
            let mut plain = ours(&sh, path, cmd);
            strip_names(&mut plain);
            strip_names(&mut o);
            let rows = |v: &Value| -> Vec<String> {
                let mut rows: Vec<String> = v["results"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .flat_map(|t| t["data"].as_array().unwrap().iter().map(|r| r.to_string()))
                    .collect();
                rows.sort();
                rows
            };
            assert_eq!(rows(&plain), rows(&o), "{cmd} {name}: without the quirks");
        }
    }
}

/// With lttng-analyses' dropped frees reproduced (`--lttng-analyses-quirks`) every table is
/// the reference, rows in order (ties in the order lttng-analyses first saw the threads).
/// Without, allocations are the same and ours count at least as many frees.
#[test]
fn memtop_parity() {
    let Some(sh) = shared() else { return };
    for (name, path, r) in with_reference(&sh, "memtop") {
        let legacy = ours_q(&sh, path, "memtop", true);
        compare(&format!("memtop {name}"), &legacy, &r, &no_fix);
        let o = ours(&sh, path, "memtop");
        let total = |v: &Value| -> (u64, u64) {
            let t = v["results"].as_array().unwrap().last().unwrap();
            assert_eq!(t["class"], "total");
            let n = |i: usize| t["data"][0][i]["value"].as_u64().unwrap();
            (n(0), n(1))
        };
        let ((alloc_a, free_a), (alloc_b, free_b)) = (total(&o), total(&legacy));
        assert_eq!(alloc_a, alloc_b, "memtop {name}: total allocated");
        assert!(free_a >= free_b, "memtop {name}: frees {free_a} < {free_b}");
    }
}

#[test]
fn iolatency_parity() {
    let Some(sh) = shared() else { return };
    for cmd in ["iolatencystats", "iolatencyfreq"] {
        for (name, path, r) in with_reference(&sh, cmd) {
            compare(&format!("{cmd} {name}"), &ours(&sh, path, cmd), &r, &no_fix);
        }
    }
}
