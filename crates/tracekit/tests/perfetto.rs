//! `tracekit export --format perfetto`, checked with Perfetto's own protobuf bindings (the
//! `perfetto` Python package's `perfetto_trace_pb2`, through `tests/perfetto/check.py`): every
//! packet parses, the counts per event kind are `tracekit count`'s, `sched_switch` fields and
//! times are the trace's, hosts are machines, and a damaged trace gives its readable part.

#![cfg(feature = "perfetto")]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::Value;

mod common;
use common::ok;

fn tracekit(args: &[&dyn AsRef<std::ffi::OsStr>]) -> Output {
    let mut c = common::command();
    for a in args {
        c.arg(a);
    }
    c.output().expect("tracekit runs")
}

/// The checker script's interpreter when Perfetto's bindings can be imported there; else
/// None (the test skips), except where the shared suites run (CI), where they must be.
fn python_with_perfetto(what: &str) -> Option<&'static str> {
    let runs = std::process::Command::new("python3")
        .args([
            "-c",
            "import perfetto.protos.perfetto.trace.perfetto_trace_pb2",
        ])
        .output()
        .is_ok_and(|o| o.status.success());
    if !runs {
        assert!(
            testkit::shared().is_none(),
            "Perfetto's Python bindings must be installed where the shared suites run \
             (python3 -m pip install perfetto)"
        );
        eprintln!("python3 cannot import perfetto: skipping {what}");
        return None;
    }
    Some("python3")
}

/// What `check.py` read in `file`.
fn check(python: &str, file: &Path) -> Value {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/perfetto/check.py");
    let o = std::process::Command::new(python)
        .arg(script)
        .arg(file)
        .output()
        .expect("python3 runs");
    assert!(
        o.status.success(),
        "Perfetto's bindings failed on {}: {}",
        file.display(),
        String::from_utf8_lossy(&o.stderr)
    );
    serde_json::from_slice(&o.stdout).expect("check.py prints JSON")
}

/// The Perfetto ftrace event an LTTng event class becomes, written down here from the two
/// tools' event names (not from the exporter's mapping), with how many per LTTng event.
fn perfetto_kinds(lttng: &str) -> &'static [&'static str] {
    match lttng {
        "sched_switch" => &["sched_switch"],
        "sched_wakeup" => &["sched_wakeup"],
        "sched_waking" => &["sched_waking"],
        "sched_wakeup_new" => &["sched_wakeup_new"],
        "sched_process_fork" => &["sched_process_fork", "task_newtask"],
        "sched_process_exec" => &["sched_process_exec"],
        "sched_process_exit" => &["sched_process_exit"],
        "sched_process_free" => &["sched_process_free"],
        "irq_handler_entry" => &["irq_handler_entry"],
        "irq_handler_exit" => &["irq_handler_exit"],
        "irq_softirq_raise" | "softirq_raise" => &["softirq_raise"],
        "irq_softirq_entry" | "softirq_entry" => &["softirq_entry"],
        "irq_softirq_exit" | "softirq_exit" => &["softirq_exit"],
        "exit_syscall" => &["sys_exit"],
        n if n.starts_with("syscall_entry_")
            || n.starts_with("compat_syscall_entry_")
            || n.starts_with("sys_") =>
        {
            &["sys_enter"]
        }
        n if n.starts_with("syscall_exit_") || n.starts_with("compat_syscall_exit_") => {
            &["sys_exit"]
        }
        _ => &[],
    }
}

/// `tracekit count --json` of `paths`: events per class name, and the number of
/// `lttng_statedump_process_state` events.
fn counts(paths: &[&Path]) -> BTreeMap<String, u64> {
    let mut args: Vec<&dyn AsRef<std::ffi::OsStr>> = vec![&"count", &"--json"];
    for p in paths {
        args.push(p);
    }
    let o = tracekit(&args);
    let v: Value = serde_json::from_str(&String::from_utf8_lossy(&o.stdout)).expect("JSON");
    v["classes"]
        .as_object()
        .expect("classes")
        .iter()
        .map(|(k, n)| (k.clone(), n.as_u64().unwrap()))
        .collect()
}

/// The Perfetto event counts `tracekit count`'s per-class counts make.
fn expected(classes: &BTreeMap<String, u64>) -> BTreeMap<String, u64> {
    let mut out = BTreeMap::new();
    for (name, n) in classes {
        for k in perfetto_kinds(name) {
            *out.entry(k.to_string()).or_default() += n;
        }
    }
    out
}

/// The exported counts of machine `m`.
fn exported(v: &Value, m: u64) -> BTreeMap<String, u64> {
    v["counts"][m.to_string()]
        .as_object()
        .map(|o| {
            o.iter()
                .map(|(k, n)| (k.clone(), n.as_u64().unwrap()))
                .collect()
        })
        .unwrap_or_default()
}

fn export(paths: &[&Path], out: &Path, extra: &[&str]) -> Output {
    let mut args: Vec<&dyn AsRef<std::ffi::OsStr>> =
        vec![&"export", &"--format", &"perfetto", &"-o", &out];
    for p in paths {
        args.push(p);
    }
    for e in extra {
        args.push(e);
    }
    tracekit(&args)
}

/// Every `sched_switch` of `dir` as the CTF reader gives it: (time, cpu, prev_comm,
/// prev_tid, prev_prio, prev_state, next_comm, next_tid, next_prio).
type Switch = (u64, u64, String, i64, i64, i64, String, i64, i64);

fn switches_of_ctf(dir: &Path) -> Vec<Switch> {
    let source = pipeline::FileSource::open(
        &[dir],
        pipeline::ReadOptions {
            no_intersection: true,
            ..Default::default()
        },
    )
    .expect("trace opens");
    let mut out = Vec::new();
    let mut events = source.events(None);
    while let Some((e, ts)) = events.next() {
        if e.name() != "sched_switch" {
            continue;
        }
        let p = e.payload().expect("payload");
        let int = |n: &str| p.field(n).and_then(|f| f.as_i64()).expect(n);
        let text = |n: &str| {
            let b = p.field(n).and_then(|f| f.as_bytes()).expect(n);
            String::from_utf8_lossy(b.split(|&c| c == 0).next().unwrap()).into_owned()
        };
        let cpu = e
            .packet_context()
            .and_then(|c| c.field("cpu_id"))
            .and_then(|f| f.as_u64())
            .expect("cpu_id");
        out.push((
            ts as u64,
            cpu,
            text("prev_comm"),
            int("prev_tid"),
            int("prev_prio"),
            int("prev_state"),
            text("next_comm"),
            int("next_tid"),
            int("next_prio"),
        ));
    }
    out.sort();
    out
}

fn switches_of_perfetto(v: &Value) -> Vec<Switch> {
    let mut out: Vec<Switch> = v["switches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            let i = |k: usize| s[k].as_i64().unwrap();
            let t = |k: usize| s[k].as_str().unwrap().to_string();
            (
                s[2].as_u64().unwrap(),
                s[1].as_u64().unwrap(),
                t(4),
                i(5),
                i(6),
                i(7),
                t(8),
                i(9),
                i(10),
            )
        })
        .collect();
    out.sort();
    out
}

fn gen(args: &[&dyn AsRef<std::ffi::OsStr>]) {
    let mut a: Vec<&dyn AsRef<std::ffi::OsStr>> = vec![&"gen"];
    a.extend_from_slice(args);
    ok(tracekit(&a));
}

/// One host: the counts per kind are `count`'s, every `sched_switch` round-trips with its time
/// and CPU, each CPU's events are in time order, every event names the running thread.
#[test]
fn kernel_mix_counts_and_switches() {
    let Some(py) = python_with_perfetto("the Perfetto export check") else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("km");
    gen(&[
        &"kernel-mix",
        &"--events",
        &"30000",
        &"-o",
        &dir,
        &"--seed",
        &"3",
    ]);
    let out = tmp.path().join("km.pftrace");
    let o = export(&[&dir], &out, &[]);
    ok(o);
    let v = check(py, &out);
    let classes = counts(&[&dir]);
    assert_eq!(exported(&v, 0), expected(&classes));
    assert_eq!(
        v["threads"]["0"].as_u64(),
        classes.get("lttng_statedump_process_state").copied()
    );
    assert_eq!(v["clock_snapshots"], 1);
    assert_eq!(v["ordered_per_cpu"], true);
    assert_eq!(v["pids_set"], v["events"]);
    // Most switches and wakings are in compact_sched columns (checked like the others).
    let compact = v["compact"].as_u64().unwrap();
    let sched = classes.get("sched_switch").copied().unwrap_or(0)
        + classes.get("sched_waking").copied().unwrap_or(0);
    assert!(compact > sched / 2, "{compact} of {sched} compact");
    let ctf = switches_of_ctf(&dir);
    assert!(ctf.len() > 1000, "{} switches", ctf.len());
    assert_eq!(switches_of_perfetto(&v), ctf);

    // A time range keeps the switches within it (times given as seconds since the epoch).
    let (first, last) = (ctf[0].0, ctf[ctf.len() - 1].0);
    let (lo, hi) = (first + (last - first) / 3, first + 2 * (last - first) / 3);
    let secs = |ns: u64| format!("{}.{:09}", ns / 1_000_000_000, ns % 1_000_000_000);
    let ranged = tmp.path().join("ranged.pftrace");
    ok(export(
        &[&dir],
        &ranged,
        &["--begin", &secs(lo), "--end", &secs(hi)],
    ));
    let kept: Vec<Switch> = ctf.into_iter().filter(|s| s.0 >= lo && s.0 <= hi).collect();
    assert!(!kept.is_empty());
    assert_eq!(switches_of_perfetto(&check(py, &ranged)), kept);
}

/// Several hosts: one machine each, with their own counts; with `--sync` the times are the
/// synchronized ones `tracekit print --sync` shows.
#[test]
fn hosts_are_machines_on_the_synchronized_clock() {
    let Some(py) = python_with_perfetto("the Perfetto multi-host check") else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("cs");
    gen(&[
        &"client-server",
        &"-o",
        &dir,
        &"--seed",
        &"5",
        &"--requests",
        &"20",
    ]);
    let out = tmp.path().join("cs.pftrace");
    ok(export(&[&dir], &out, &["--sync"]));
    let v = check(py, &out);
    let infos = v["system_infos"].as_array().unwrap();
    assert_eq!(infos.len(), 3, "{infos:?}");
    // Machines are numbered in the order of the traces: their directories' names.
    let hosts: Vec<PathBuf> = ["client1", "db", "httpd"]
        .iter()
        .map(|h| dir.join(h))
        .collect();
    for (m, host) in hosts.iter().enumerate() {
        assert_eq!(
            exported(&v, m as u64),
            expected(&counts(&[host])),
            "{}",
            host.display()
        );
    }
    // The synchronized times of every sched_switch, as `print --sync` gives them.
    let o = tracekit(&[&"print", &"--sync", &"--clock-seconds", &dir]);
    let text = ok(o);
    let mut printed: Vec<u64> = text
        .lines()
        .filter(|l| l.contains(" sched_switch: "))
        .map(|l| {
            let t = &l[1..l.find(']').unwrap()];
            let (s, ns) = t.split_once('.').unwrap();
            s.parse::<u64>().unwrap() * 1_000_000_000 + ns.parse::<u64>().unwrap()
        })
        .collect();
    printed.sort();
    let mut written: Vec<u64> = switches_of_perfetto(&v).iter().map(|s| s.0).collect();
    written.sort();
    assert!(printed.len() > 100);
    assert_eq!(written, printed);
}

/// A trace with a damaged stream: what can be read is written (the same counts as `count`
/// reads), the damage is reported naming the file, and the exit status says so.
#[test]
fn damaged_trace_exports_its_readable_part() {
    let Some(py) = python_with_perfetto("the Perfetto damaged-trace check") else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("km");
    gen(&[
        &"kernel-mix",
        &"--events",
        &"30000",
        &"-o",
        &dir,
        &"--seed",
        &"4",
    ]);
    let whole = tmp.path().join("whole.pftrace");
    ok(export(&[&dir], &whole, &[]));
    let whole = check(py, &whole);
    // Cut a stream in the middle of a packet.
    let stream = dir.join("chan_1");
    let len = std::fs::metadata(&stream).unwrap().len();
    let f = std::fs::OpenOptions::new()
        .write(true)
        .open(&stream)
        .unwrap();
    f.set_len(len / 2 + 13).unwrap();
    let out = tmp.path().join("cut.pftrace");
    let o = export(&[&dir], &out, &[]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("chan_1"), "{stderr}");
    let v = check(py, &out);
    let events = v["events"].as_u64().unwrap();
    assert!(
        events > 1000 && events < whole["events"].as_u64().unwrap(),
        "{events} events"
    );
    assert_eq!(exported(&v, 0), expected(&counts(&[&dir])));
}

/// A real LTTng kernel trace of the shared data: counts and `sched_switch`es round-trip.
#[test]
fn shared_kernel_trace() {
    let Some(shared) = testkit::shared_or_skip("the Perfetto export of a real trace") else {
        return;
    };
    let Some(dir) = testkit::intact_trace(&shared, "traces/kernel/many-threads") else {
        return;
    };
    let py = python_with_perfetto("the Perfetto export of a real trace").expect("checked");
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("real.pftrace");
    ok(export(&[&dir], &out, &[]));
    let v = check(py, &out);
    assert_eq!(exported(&v, 0), expected(&counts(&[&dir])));
    assert_eq!(switches_of_perfetto(&v), switches_of_ctf(&dir));
}
