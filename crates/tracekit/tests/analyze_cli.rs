//! `tracekit analyze` end to end on a generated trace: several analyses in one pass,
//! `--refresh`, `--freq-uniform` / `--freq-series`.

use std::path::Path;
use std::process::Output;

use serde_json::Value;

mod common;
use common::ok;

fn tracekit(args: &[&str], dir: &Path) -> Output {
    common::command()
        .arg("analyze")
        .args(args)
        .arg(dir)
        .output()
        .expect("tracekit runs")
}

fn mi(args: &[&str], dir: &Path) -> Vec<Value> {
    let mut a = args.to_vec();
    a.push("--mi");
    let v: Value = serde_json::from_str(&ok(tracekit(&a, dir))).expect("JSON");
    v["results"].as_array().expect("results").clone()
}

/// Generates a kernel trace in `tmp/trace` and returns its path.
fn gen(tmp: &Path) -> std::path::PathBuf {
    let dir = tmp.join("trace");
    let o = common::command()
        .args(["gen", "kernel-mix", "--seed", "3", "--events", "20000"])
        .args(["--cpus", "2", "-o"])
        .arg(&dir)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    dir
}

fn range(t: &Value) -> (i64, i64) {
    (
        t["time-range"]["begin"]["value"].as_i64().unwrap(),
        t["time-range"]["end"]["value"].as_i64().unwrap(),
    )
}

#[test]
fn several_analyses_in_one_run_equal_separate_runs() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = gen(tmp.path());
    let all = mi(&["cputop,irqstats,memtop,schedstats"], &dir);
    let mut separate = Vec::new();
    for n in ["cputop", "irqstats", "memtop", "schedstats"] {
        separate.extend(mi(&[n], &dir));
    }
    assert_eq!(all, separate);
    // A name given twice runs once.
    assert_eq!(mi(&["cputop,cputop"], &dir), mi(&["cputop"], &dir));
    // Text: each analysis under its name.
    let text = ok(tracekit(&["cputop,irqstats"], &dir));
    let (c, i) = (
        text.find("== cputop ==").unwrap(),
        text.find("== irqstats ==").unwrap(),
    );
    assert!(c < i, "{text}");
    // An unknown name is an error naming it.
    let o = tracekit(&["cputop,nosuch"], &dir);
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("nosuch"));
}

#[test]
fn refresh_cuts_the_range_into_periods() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = gen(tmp.path());
    let whole = mi(&["cputop"], &dir);
    let (b, e) = range(&whole[0]);
    let step = (e - b) / 4 + 1;
    let tables = mi(&["cputop", "--refresh", &format!("{step}ns")], &dir);
    // Grouped by class, as lttng-analyses: per-process ×4, per-cpu ×4, total ×4, summary.
    let classes: Vec<&str> = tables
        .iter()
        .map(|t| t["class"].as_str().unwrap())
        .collect();
    assert_eq!(classes.len(), 13, "{classes:?}");
    assert!(classes[..4].iter().all(|c| *c == "per-process"));
    assert!(classes[8..12].iter().all(|c| *c == "total"));
    assert_eq!(classes[12], "summary");
    // The periods tile the range: each starts where the previous one ends, at least `step`
    // after its own start (the first event at or after begin + step).
    let periods: Vec<(i64, i64)> = tables[8..12].iter().map(range).collect();
    assert_eq!(periods[0].0, b);
    assert_eq!(periods[3].1, e);
    for w in periods.windows(2) {
        assert_eq!(w[0].1, w[1].0);
        assert!(w[0].1 - w[0].0 >= step);
    }
    // The summary: one row per period, its total usage.
    let summary = tables[12]["data"].as_array().unwrap();
    assert_eq!(summary.len(), 4);
    for (row, t) in summary.iter().zip(&tables[8..12]) {
        assert_eq!(row[1], t["data"][0][0]);
    }
    // Text: one report per period, with its range.
    let text = ok(tracekit(
        &["cputop", "--refresh", &format!("{}", step as f64 / 1e9)],
        &dir,
    ));
    assert_eq!(text.matches("Timerange: [").count(), 4, "{text}");
    // Bad durations and --refresh with period analyses are errors.
    assert!(!tracekit(&["cputop", "--refresh", "1h"], &dir)
        .status
        .success());
    assert!(!tracekit(&["periodlog", "--refresh", "1"], &dir)
        .status
        .success());
}

#[test]
fn freq_series_puts_uniform_histograms_side_by_side() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = gen(tmp.path());
    for name in ["irqfreq", "schedfreq", "iolatencyfreq"] {
        let plain = mi(&[name], &dir);
        let uniform = mi(&[name, "--freq-uniform"], &dir);
        let series = mi(&[name, "--freq-series", "--freq-resolution", "8"], &dir);
        assert!(plain.len() > 1, "{name}: {plain:?}");
        // Uniform: the same histograms (each keeps all its values) with the same bins.
        assert_eq!(uniform.len(), plain.len(), "{name}");
        let bins = |t: &Value| -> Vec<(Value, Value)> {
            t["data"]
                .as_array()
                .unwrap()
                .iter()
                .map(|r| (r[0].clone(), r[1].clone()))
                .collect()
        };
        let count = |t: &Value, col: usize| -> u64 {
            t["data"]
                .as_array()
                .unwrap()
                .iter()
                .map(|r| r[col]["value"].as_u64().unwrap())
                .sum()
        };
        for (p, u) in plain.iter().zip(&uniform) {
            assert_eq!(bins(u), bins(&uniform[0]), "{name}");
            assert_eq!(count(p, 2), count(u, 2), "{name}");
            assert_eq!(p["class"], u["class"], "{name}");
        }
        // Series: one table of an anonymous class, a count column per histogram.
        assert_eq!(series.len(), 1, "{name}");
        let cols = series[0]["class"]["column-descriptions"]
            .as_array()
            .unwrap();
        assert_eq!(cols.len(), 2 + plain.len(), "{name}");
        assert_eq!(series[0]["data"].as_array().unwrap().len(), 8);
        for (i, p) in plain.iter().enumerate() {
            let sub = p["class"]["title"].as_str().unwrap();
            assert!(sub.ends_with(&format!("[{}]", cols[2 + i]["title"].as_str().unwrap())));
            assert_eq!(count(p, 2), count(&series[0], 2 + i), "{name}");
        }
    }
    let text = ok(tracekit(&["irqfreq", "--freq-series"], &dir));
    assert!(text.contains("Interrupt handlers duration frequency distributions"));
}

#[test]
fn bounded_schedtop_and_streaming_schedstats_agree_with_the_log() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = gen(tmp.path());
    let log = mi(&["schedlog"], &dir);
    let log = log[0]["data"].as_array().unwrap().clone();
    assert!(log.len() > 100, "{}", log.len());
    // schedtop keeps only the `limit` longest: the same rows as sorting the whole log
    // (longest first, ties in time order).
    let mut sorted = log.clone();
    sorted.sort_by_key(|r| std::cmp::Reverse(r[2]["value"].as_i64().unwrap()));
    for limit in [1usize, 7, 0] {
        let top = mi(&["schedtop", "--limit", &limit.to_string()], &dir);
        let rows = top[0]["data"].as_array().unwrap();
        let n = if limit == 0 { sorted.len() } else { limit };
        assert_eq!(rows.as_slice(), &sorted[..n], "limit {limit}");
    }
    // Streaming statistics: as many schedulings as the log, the same extremes.
    let stats = mi(&["schedstats", "--total", "--per-tid"], &dir);
    let total = &stats[0]["data"][0];
    assert_eq!(total[0]["value"].as_u64().unwrap() as usize, log.len());
    let lat = |r: &Value| r[2]["value"].as_i64().unwrap();
    assert_eq!(total[1]["value"].as_i64(), log.iter().map(lat).min());
    assert_eq!(total[3]["value"].as_i64(), log.iter().map(lat).max());
    let per_tid: u64 = stats[1]["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r[1]["value"].as_u64().unwrap())
        .sum();
    assert_eq!(per_tid as usize, log.len());
}

/// An index that does not match its stream file is named in a warning and left aside: the
/// results are those of the trace without it, and the run succeeds.
#[test]
fn an_unusable_index_is_a_warning() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = gen(tmp.path());
    let want = mi(&["cputop"], &dir);
    let idx = dir.join("index").join("chan_1.idx");
    assert!(idx.is_file());
    std::fs::write(&idx, b"garbage").unwrap();
    let o = tracekit(&["cputop", "--mi"], &dir);
    assert!(o.status.success());
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(
        stderr.contains(&format!("warning: {}", idx.display()))
            && stderr.contains("index not used"),
        "{stderr}"
    );
    let got: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(got["results"].as_array().unwrap(), &want);
}

/// Text tables fit `COLUMNS`: on a trace whose files have dozens of descriptor owners, no
/// line of iousagetop's text is wider than 80 columns, and each owners cell shows whole
/// owners and counts the others (`… and N more`): as many in all as `--mi` lists, which the
/// width does not change.
#[test]
fn text_tables_fit_columns_and_count_what_they_leave_out() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = gen(tmp.path());
    let run = |columns: &str, args: &[&str]| {
        ok(common::command()
            .env("COLUMNS", columns)
            .arg("analyze")
            .args(args)
            .arg(&dir)
            .output()
            .unwrap())
    };
    let text = run("80", &["iousagetop"]);
    for l in text.lines() {
        assert!(
            l.chars().count() <= 80,
            "{} columns: {l}",
            l.chars().count()
        );
    }
    let mi_text = run("80", &["iousagetop", "--mi"]);
    assert_eq!(mi_text, run("80", &["iousagetop", "--mi", "--width", "0"]));
    let mi: Value = serde_json::from_str(&mi_text).unwrap();
    let (mut tables, mut cut) = (0, 0);
    for t in mi["results"].as_array().unwrap() {
        if t["class"]["inherit"] != "per-file-top" {
            continue;
        }
        let title = t["class"]["title"].as_str().unwrap();
        let owners: Vec<usize> = t["data"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                let s = r[2]["value"].as_str().unwrap();
                if s.trim().is_empty() {
                    0
                } else {
                    s.matches(") fd ").count() + 1
                }
            })
            .collect();
        // The table under its title: a row starts at a line whose size cell is not empty.
        let table = text
            .split(&format!("\n{title}\n"))
            .nth(1)
            .unwrap_or_else(|| panic!("no {title} in {text}"));
        let body = table.split('╡').nth(1).unwrap().split('└').next().unwrap();
        let mut rows: Vec<String> = Vec::new();
        for line in body.lines().filter(|l| l.starts_with('│')) {
            let cells: Vec<&str> = line.split('┆').collect();
            if !cells[1].trim().is_empty() {
                rows.push(String::new());
            }
            let row = rows.last_mut().unwrap();
            row.push_str(cells[2].trim_end_matches('│').trim());
            row.push(' ');
        }
        assert_eq!(rows.len(), owners.len(), "{title}: {table}");
        tables += 1;
        for (row, &n) in rows.iter().zip(&owners) {
            let shown = row.matches("fd ").count();
            let more = match row.split_once("… and ") {
                Some((_, r)) => r.split(' ').next().unwrap().parse::<usize>().unwrap(),
                None => 0,
            };
            assert_eq!(shown + more, n, "{title}: {row}");
            cut += usize::from(more > 0);
        }
    }
    assert!(
        tables == 2 && cut > 0,
        "{tables} tables, {cut} cut cells: {text}"
    );
    // Without a limit, every owner is in the text.
    let whole = run("80", &["iousagetop", "--width", "0"]);
    assert!(whole.lines().any(|l| l.chars().count() > 1000));
}
