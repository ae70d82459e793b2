//! `tracekit export --format parquet` and the queries of `sql/`: on DuckDB and on Spark
//! (`local[2]`), every row of cputop, syscallstats, irqstats, schedstats and iolatencystats
//! equals `tracekit analyze --mi`'s on the same traces (generated ones; a shared real one
//! with `TRACEKIT_SHARED`).
//!
//! Needs a Python with `duckdb` and `pyspark` (and a JRE for Spark): `TRACEKIT_SQL_PYTHON`,
//! else the virtual environment `.ci/run` makes (`~/.cache/tracekit/sqlenv`), else
//! `python3`. Skipped with a message without them, except where the shared suites run
//! (`TRACEKIT_SHARED`: CI), which must have them.
#![cfg(feature = "parquet")]

use std::path::{Path, PathBuf};
use std::process::Command;

const TRACEKIT: &str = env!("CARGO_BIN_EXE_tracekit");

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The Python that has `module`, if any (a test skips without it, outside CI).
pub fn python_with(module: &str, what: &str) -> Option<PathBuf> {
    let mut candidates = Vec::new();
    if let Some(p) = std::env::var_os("TRACEKIT_SQL_PYTHON") {
        candidates.push(PathBuf::from(p));
    }
    if let Some(home) = std::env::var_os("HOME") {
        candidates.push(Path::new(&home).join(".cache/tracekit/sqlenv/bin/python"));
    }
    candidates.push(PathBuf::from("python3"));
    for p in candidates {
        let ok = Command::new(&p)
            .args(["-c", &format!("import {module}")])
            .output()
            .is_ok_and(|o| o.status.success());
        if ok {
            return Some(p);
        }
    }
    assert!(
        testkit::shared().is_none(),
        "a Python with `{module}` must be installed where the shared suites run (.ci/run makes ~/.cache/tracekit/sqlenv)"
    );
    eprintln!("no Python with `{module}` (TRACEKIT_SQL_PYTHON, ~/.cache/tracekit/sqlenv): skipping {what}");
    None
}

fn run(cmd: &mut Command) -> String {
    let out = cmd.output().expect("command runs");
    assert!(
        out.status.success(),
        "{cmd:?} failed: {}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Exports `traces` (trace directories of distinct names) into `out` and writes each one's
/// `analyze --mi` beside it: the `HOST/TRACE=MI.json` arguments of the checker.
fn export_and_analyze(traces: &[PathBuf], out: &Path) -> Vec<String> {
    let mut cmd = Command::new(TRACEKIT);
    cmd.args(["export", "--format", "parquet", "-o"]).arg(out);
    cmd.args(traces);
    run(&mut cmd);
    let mut parts = Vec::new();
    for t in traces {
        let mi = run(Command::new(TRACEKIT)
            .args([
                "analyze",
                "cputop,syscallstats,irqstats,schedstats,iolatencystats",
                "--mi",
                "--no-intersection",
                "--limit",
                "0",
                "--total",
                "--per-tid",
                "--per-prio",
            ])
            .arg(t));
        let name = t.file_name().unwrap().to_string_lossy().into_owned();
        // The partition the export chose: `trace/host=H/trace=NAME`.
        let host = std::fs::read_dir(out.join("trace"))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .find(|h| {
                out.join("trace")
                    .join(h)
                    .join(format!("trace={name}"))
                    .is_dir()
            })
            .unwrap_or_else(|| panic!("no partition for {name}"));
        let host = host.trim_start_matches("host=").to_string();
        let file = out.with_file_name(format!("{host}-{name}.mi.json"));
        std::fs::write(&file, mi).unwrap();
        parts.push(format!("{host}/{name}={}", file.display()));
    }
    parts
}

/// Runs the queries with `engine` and checks every row against `analyze`.
fn check(python: &Path, engine: &str, data: &Path, parts: &[String]) {
    let results = data.with_file_name(format!("{engine}.json"));
    run(Command::new(python)
        .arg(repo().join("sql/run.py"))
        .args(["--engine", engine])
        .arg(data)
        .arg("--out")
        .arg(&results));
    let said = run(Command::new(python)
        .arg(repo().join("sql/check_against_analyze.py"))
        .arg(&results)
        .args(parts));
    eprintln!("{engine}: {}", said.trim());
}

/// Two generated hosts of different shapes, exported in one run.
fn generated(tmp: &Path) -> (PathBuf, Vec<String>) {
    let a = tmp.join("hosts/web1");
    let b = tmp.join("hosts/db2");
    testkit::kernel_mix(&a, 40_000, 2, 11);
    testkit::kernel_mix(&b, 60_000, 4, 12);
    let out = tmp.join("parquet");
    let parts = export_and_analyze(&[a, b], &out);
    (out, parts)
}

#[test]
fn duckdb_gives_the_analyses_numbers() {
    let Some(py) = python_with("duckdb", "the DuckDB parity test") else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let (out, parts) = generated(tmp.path());
    check(&py, "duckdb", &out, &parts);
}

/// Spark `local[2]` gives analyze's numbers, and every query (`top_blocked` too, which no
/// analysis has) gives DuckDB's rows.
#[test]
fn spark_gives_the_analyses_numbers() {
    let Some(py) = python_with("pyspark", "the Spark parity test") else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let (out, parts) = generated(tmp.path());
    check(&py, "spark", &out, &parts);
    if python_with("duckdb", "the DuckDB/Spark comparison").is_some() {
        check(&py, "duckdb", &out, &parts);
        let said = run(Command::new(&py)
            .arg(repo().join("sql/compare_results.py"))
            .arg(out.with_file_name("duckdb.json"))
            .arg(out.with_file_name("spark.json")));
        eprintln!("duckdb = spark: {}", said.trim());
    }
}

/// Real traces (lttng-modules, with their statedump), on DuckDB.
#[test]
fn duckdb_on_shared_traces() {
    let Some(shared) = testkit::shared_or_skip("the Parquet parity test on shared traces") else {
        return;
    };
    let Some(py) = python_with("duckdb", "the DuckDB parity test on shared traces") else {
        return;
    };
    let traces: Vec<PathBuf> = ["many-threads", "basic-kernel-analysis"]
        .iter()
        .filter_map(|t| testkit::intact_trace(&shared, &format!("traces/kernel/{t}")))
        .collect();
    assert!(!traces.is_empty(), "no intact shared trace to compare");
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("parquet");
    let parts = export_and_analyze(&traces, &out);
    check(&py, "duckdb", &out, &parts);
}

/// Two hosts exchanging TCP traffic, exported with `--sync`: a `net_packet` row per packet
/// event with its 4-tuple, sequence and acknowledgment numbers, and the second host's clock
/// transform in `trace`.
#[test]
fn net_packets_and_the_clock_transform() {
    let Some(py) = python_with("duckdb", "the net_packet test") else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let cs = tmp.path().join("cs");
    run(Command::new(TRACEKIT)
        .args(["gen", "client-server", "--hosts", "2", "-o"])
        .arg(&cs));
    let out = tmp.path().join("parquet");
    run(Command::new(TRACEKIT)
        .args(["export", "--format", "parquet", "--sync", "-o"])
        .arg(&out)
        .arg(&cs));
    let mut expected = Vec::new();
    for host in ["client1", "httpd"] {
        let counts: serde_json::Value = serde_json::from_str(&run(Command::new(TRACEKIT)
            .args(["count", "--json"])
            .arg(cs.join(host))))
        .unwrap();
        let c = &counts["classes"];
        let n = c["net_dev_queue"].as_u64().unwrap_or(0)
            + c["net_if_receive_skb"].as_u64().unwrap_or(0);
        assert!(n > 0, "{host} has packets");
        expected.push(format!("{host}:{n}"));
    }
    let script = format!(
        r#"
import duckdb
c = duckdb.connect()
d = {data:?}
rows = c.execute(f"""SELECT trace, COUNT(*), COUNT(sport), COUNT(dport), COUNT(seq), COUNT(ack),
    COUNT(saddr), MIN(CASE WHEN sent THEN saddr END) FROM read_parquet('{{d}}/net_packet/*/*/*.parquet',
    hive_partitioning = true) GROUP BY trace ORDER BY trace""").fetchall()
for r in rows:
    assert len(set(r[1:7])) == 1, r
print(" ".join(f"{{r[0]}}:{{r[1]}}" for r in rows))
sync = c.execute(f"""SELECT COUNT(*), SUM(CASE WHEN clock_offset_ns <> 0 THEN 1 ELSE 0 END), BOOL_AND(synced)
    FROM read_parquet('{{d}}/trace/*/*/*.parquet', hive_partitioning = true)""").fetchone()
assert sync == (2, 1, True), sync
"#,
        data = out.display().to_string()
    );
    let said = run(Command::new(&py).args(["-c", &script]));
    assert_eq!(said.trim(), expected.join(" "));
}
