//! `--freq-uniform`, `--freq-series` and `--refresh` against lttng-analyses 0.6.1, run now on
//! a small shared trace (its outputs with these options are not in the shared references).
//!
//! Needs `TRACEKIT_SHARED` and lttng-analyses (`lttng-irqfreq-mi`…); skipped with a message
//! otherwise. lttng-analyses wants a path component ending in `kernel`: the trace is copied
//! into a temporary `kernel` directory.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use analysis::{lami::results_json, Common, Options};
use common::{json_eq, lttng_mi as lttng};
use serde_json::Value;

fn shared() -> Option<PathBuf> {
    let Some(p) = std::env::var_os("TRACEKIT_SHARED") else {
        eprintln!("TRACEKIT_SHARED is not set: skipping the lttng-analyses option tests");
        return None;
    };
    if Command::new("lttng-irqfreq-mi")
        .arg("--help")
        .output()
        .is_err()
    {
        eprintln!("lttng-analyses is not installed: skipping the lttng-analyses option tests");
        return None;
    }
    Some(PathBuf::from(p))
}

/// A copy of the shared trace `name` in a directory named `kernel`.
fn kernel_copy(shared: &Path, name: &str) -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let dst = tmp.path().join("kernel");
    copy_dir(&shared.join("traces/kernel").join(name), &dst);
    (tmp, dst)
}

fn copy_dir(src: &Path, dst: &Path) {
    std::fs::create_dir_all(dst).unwrap();
    for e in std::fs::read_dir(src).unwrap() {
        let e = e.unwrap();
        let to = dst.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &to);
        } else {
            std::fs::copy(e.path(), to).unwrap();
        }
    }
}

/// Our `--mi` results, reproducing lttng-analyses's event-handling defects (as the parity
/// tests do: DIFFERENCES.md).
fn ours(name: &str, trace: &Path, opts: &Options, refresh: Option<i64>) -> Value {
    let traces = ctf::open_all(&[trace.to_path_buf()]).unwrap();
    let mut periods = Vec::new();
    analysis::run_names(
        &traces,
        &[name],
        &Common {
            lttng_analyses_quirks: true,
            ..Common::default()
        },
        opts,
        refresh,
        &mut |r, t| periods.push((r, t)),
    )
    .unwrap();
    results_json(&analysis::mi_tables(&[name], periods))
}

/// Compares whole result documents, table by table, row by row in order.
fn same(what: &str, ours: &Value, reference: &Value) {
    let a = ours["results"].as_array().expect("our results");
    let b = reference["results"].as_array().expect("reference results");
    assert_eq!(a.len(), b.len(), "{what}: number of tables");
    for (i, (ta, tb)) in a.iter().zip(b).enumerate() {
        assert!(
            json_eq(&ta["class"], &tb["class"]),
            "{what}: table {i} class:\n  ours {}\n  ref  {}",
            ta["class"],
            tb["class"]
        );
        assert_eq!(
            ta["time-range"], tb["time-range"],
            "{what}: table {i} range"
        );
        let (ra, rb) = (
            ta["data"].as_array().unwrap(),
            tb["data"].as_array().unwrap(),
        );
        assert_eq!(ra.len(), rb.len(), "{what}: table {i} rows");
        for (j, (x, y)) in ra.iter().zip(rb).enumerate() {
            assert!(
                json_eq(x, y),
                "{what}: table {i} row {j}:\n  ours {x}\n  ref  {y}"
            );
        }
    }
}

fn freq_opts(uniform: bool, series: bool) -> Options {
    Options {
        freq_uniform: (uniform || series).then(analysis::stats::Uniform::default),
        freq_series: series,
        ..Options::default()
    }
}

#[test]
fn irqfreq_uniform_and_series_match_lttng_analyses() {
    let Some(shared) = shared() else { return };
    let (_tmp, trace) = kernel_copy(&shared, "bug446190");
    for (flag, uniform, series) in [
        ("--freq-uniform", true, false),
        ("--freq-series", false, true),
    ] {
        let reference = lttng("lttng-irqfreq-mi", &[flag], &trace);
        let ours = ours("irqfreq", &trace, &freq_opts(uniform, series), None);
        same(&format!("irqfreq {flag}"), &ours, &reference);
        // Every histogram has the same bins.
        let tables = ours["results"].as_array().unwrap();
        let bounds: Vec<&Value> = tables.iter().map(|t| &t["data"][0][0]).collect();
        assert!(bounds.windows(2).all(|w| w[0] == w[1]), "{flag}");
    }
    // Another resolution.
    let reference = lttng(
        "lttng-irqfreq-mi",
        &["--freq-series", "--freq-resolution", "7"],
        &trace,
    );
    let mut o = freq_opts(true, true);
    o.freq_resolution = 7;
    same(
        "irqfreq --freq-series --freq-resolution 7",
        &ours("irqfreq", &trace, &o, None),
        &reference,
    );
}

#[test]
fn schedfreq_uniform_and_series_match_lttng_analyses() {
    let Some(shared) = shared() else { return };
    let (_tmp, trace) = kernel_copy(&shared, "bug446190");
    for (flag, uniform, series) in [
        ("--freq-uniform", true, false),
        ("--freq-series", false, true),
    ] {
        let reference = lttng("lttng-schedfreq-mi", &[flag], &trace);
        let ours = ours("schedfreq", &trace, &freq_opts(uniform, series), None);
        same(&format!("schedfreq {flag}"), &ours, &reference);
    }
}

#[test]
fn refresh_matches_lttng_analyses() {
    let Some(shared) = shared() else { return };
    let (_tmp, trace) = kernel_copy(&shared, "bug446190");
    // lttng-analyses prints only the summary of several refresh periods: compare it with our
    // last table (we print every period's tables before it).
    for name in ["cputop", "memtop", "syscallstats", "irqstats"] {
        let reference = lttng(&format!("lttng-{name}-mi"), &["--refresh", "1"], &trace);
        let ours = ours(name, &trace, &Options::default(), Some(1_000_000_000));
        let last = ours["results"].as_array().unwrap().last().unwrap().clone();
        let r = reference.clone();
        assert_eq!(last["class"], "summary", "{name}");
        // Rows in order: a period's rows are in its tables' order (lttng-analyses': most
        // first, ties in first-seen order).
        let o = serde_json::json!({"results": [last]});
        if name == "syscallstats" || name == "irqstats" {
            // lttng-analyses's summary counts are its per-period tables' counts, which differ
            // from ours by its known defects (DIFFERENCES.md): compare the periods only.
            let periods = |v: &Value| -> Vec<Value> {
                let mut p: Vec<Value> = v["results"][0]["data"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|r| r[0].clone())
                    .collect();
                p.sort_by_key(|v| v.to_string());
                p.dedup();
                p
            };
            let (a, b) = (periods(&o), periods(&r));
            assert!(a.len() > 1, "{name}: periods");
            assert_eq!(a, b, "{name}: periods");
            continue;
        }
        same(&format!("{name} --refresh 1"), &o, &r);
    }
}

/// lttng-analyses 0.6.1 with nested periods: its parser rejects `NAME(PARENT)` (a pyparsing
/// incompatibility), `lttng_nested_periods.py` works around that.
fn lttng_nested(args: &[&str], trace: &Path) -> Vec<u8> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/lttng_nested_periods.py");
    let out = Command::new("/usr/bin/python3")
        .arg(script)
        .args(args)
        .arg("--gmt")
        .args(if args.contains(&"--mi") {
            &[][..]
        } else {
            &["--no-progress", "--no-color"][..]
        })
        .arg(trace)
        .env("TZ", "UTC")
        .output()
        .expect("python3");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

#[test]
fn periodfreq_child_histograms_match_lttng_analyses() {
    use analysis::period::{PeriodCmd, PeriodOptions};
    let Some(shared) = shared() else { return };
    let (_tmp, trace) = kernel_copy(&shared, "bug446190");
    let periods = [
        r#"switch : $evt.$name == "sched_switch" : $evt.$name == "sched_switch""#,
        r#"irq(switch) : $evt.$name == "irq_handler_entry" : $evt.$name == "irq_handler_exit""#,
    ];
    let traces = ctf::open_all(std::slice::from_ref(&trace)).unwrap();
    for uniform in [false, true] {
        let mut args = vec!["freq"];
        for p in &periods {
            args.extend(["--period", p]);
        }
        if uniform {
            args.push("--freq-uniform");
        }
        let opts = PeriodOptions {
            periods: periods.iter().map(|s| s.to_string()).collect(),
            freq_uniform: uniform,
            ..PeriodOptions::default()
        };
        let res = analysis::period::run(&traces, &Common::default(), &opts).unwrap();
        // Text: identical but for lttng-analyses's "Checking the trace…" line.
        let text = String::from_utf8(lttng_nested(&args, &trace)).unwrap();
        let text = text.split_once('\n').unwrap().1;
        assert_eq!(res.text(PeriodCmd::Freq), text, "uniform: {uniform}");
        // --mi: 2 period histograms, then per (switch, irq): duration, global duration,
        // number, global number, usage ratio, global usage ratio.
        args.push("--mi");
        let mut reference: Value = serde_json::from_slice(&lttng_nested(&args, &trace)).unwrap();
        // lttng-analyses writes the bounds of the count and ratio histograms as durations
        // (×1000, DIFFERENCES.md): ours are numbers.
        for t in reference["results"].as_array_mut().unwrap() {
            if t["class"]["inherit"] == "freq_duration" {
                continue;
            }
            for r in t["data"].as_array_mut().unwrap() {
                for c in &mut r.as_array_mut().unwrap()[..2] {
                    let v = c["value"].as_f64().unwrap() / 1000.0;
                    *c = serde_json::json!({"class": "number", "value": v});
                }
            }
        }
        let ours = results_json(&res.tables(PeriodCmd::Freq));
        assert_eq!(ours["results"].as_array().unwrap().len(), 8);
        same(&format!("periodfreq uniform: {uniform}"), &ours, &reference);
    }
}
