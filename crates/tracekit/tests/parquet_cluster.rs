//! The queries of `sql/` on a Spark standalone cluster on this machine — a master and two
//! workers started from the PySpark distribution (`spark-class …Master` / `…Worker`), the
//! queries sent with `spark-submit` — over 200 exported generated hosts: the same answers as
//! Spark `local[2]`, which equal `tracekit analyze`'s (checked on a few of the hosts).
//!
//! Slow (a minute or two): ignored by default; `.ci/run` runs it as a step of its own
//! (`cargo test -p tracekit --test parquet_cluster -- --ignored`). Needs what
//! `parquet_sql.rs` needs (a Python with `pyspark`, a JRE).
#![cfg(feature = "parquet")]

use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const TRACEKIT: &str = env!("CARGO_BIN_EXE_tracekit");
const HOSTS: usize = 200;
/// The most the cluster's run may take before the test gives up (and stops the cluster).
const DEADLINE: Duration = Duration::from_secs(900);

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn python_with_pyspark() -> Option<PathBuf> {
    let mut candidates = Vec::new();
    if let Some(p) = std::env::var_os("TRACEKIT_SQL_PYTHON") {
        candidates.push(PathBuf::from(p));
    }
    if let Some(home) = std::env::var_os("HOME") {
        candidates.push(Path::new(&home).join(".cache/tracekit/sqlenv/bin/python"));
    }
    candidates.push(PathBuf::from("python3"));
    let found = candidates.into_iter().find(|p| {
        Command::new(p)
            .args(["-c", "import pyspark"])
            .output()
            .is_ok_and(|o| o.status.success())
    });
    if found.is_none() {
        assert!(
            testkit::shared().is_none(),
            "a Python with pyspark must be installed where the shared suites run"
        );
        eprintln!("no Python with pyspark: skipping the Spark cluster test");
    }
    found
}

/// Processes started by the test, stopped when it ends however it ends.
struct Started(Vec<Child>);

impl Drop for Started {
    fn drop(&mut self) {
        for c in &mut self.0 {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// Runs `cmd` to its end within `DEADLINE`; its stdout.
fn run(cmd: &mut Command) -> String {
    let started = Instant::now();
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("command starts");
    let out_pipe = child.stdout.take().unwrap();
    let err_pipe = child.stderr.take().unwrap();
    let out = std::thread::spawn(move || std::io::read_to_string(out_pipe).unwrap_or_default());
    let err = std::thread::spawn(move || std::io::read_to_string(err_pipe).unwrap_or_default());
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if started.elapsed() > DEADLINE {
            let _ = child.kill();
            panic!("{cmd:?} still running after {DEADLINE:?}");
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let (out, err) = (out.join().unwrap(), err.join().unwrap());
    assert!(status.success(), "{cmd:?} failed:\n{out}\n{err}");
    out
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// The rows of every query of a `run.py` result file, sorted, for comparison.
fn rows(path: &Path) -> Vec<(String, Vec<Vec<serde_json::Value>>)> {
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let mut out: Vec<_> = v
        .as_object()
        .unwrap()
        .iter()
        .map(|(q, r)| {
            let mut rows: Vec<Vec<serde_json::Value>> = r["rows"]
                .as_array()
                .unwrap()
                .iter()
                .map(|row| row.as_array().unwrap().clone())
                .collect();
            rows.sort_by_key(|r| serde_json::to_string(r).unwrap());
            (q.clone(), rows)
        })
        .collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

fn same(a: &serde_json::Value, b: &serde_json::Value) -> bool {
    match (a.as_f64(), b.as_f64()) {
        (Some(x), Some(y)) if a.is_f64() || b.is_f64() => {
            (x - y).abs() <= 1e-9 * x.abs().max(y.abs()).max(1.0)
        }
        _ => a == b,
    }
}

#[test]
#[ignore = "slow: a Spark standalone cluster over 200 hosts (.ci/run runs it on its own)"]
fn standalone_cluster_gives_the_local_answers() {
    let Some(py) = python_with_pyspark() else {
        return;
    };
    let spark_home = run(Command::new(&py).args([
        "-c",
        "import os, pyspark; print(os.path.dirname(pyspark.__file__))",
    ]));
    let spark_home = PathBuf::from(spark_home.trim());
    let tmp = tempfile::tempdir().unwrap();
    let hosts = tmp.path().join("fleet");
    for i in 0..HOSTS {
        let p = scenario::kernel_mix::KernelMixParams {
            events: 3_000,
            cpus: 1 + (i % 4) as u32,
            seed: 1000 + i as u64,
            hostname: format!("host{i:03}"),
            ..Default::default()
        };
        scenario::kernel_mix::generate(&hosts.join(format!("host{i:03}")), &p).unwrap();
    }
    let data = tmp.path().join("parquet");
    run(Command::new(TRACEKIT)
        .args(["export", "--format", "parquet", "-o"])
        .arg(&data)
        .arg(&hosts));

    // Spark local[2]: the reference answers.
    let local = tmp.path().join("local.json");
    run(Command::new(&py)
        .arg(repo().join("sql/run.py"))
        .args(["--engine", "spark", "--master", "local[2]"])
        .arg(&data)
        .arg("--out")
        .arg(&local));

    // ... which are analyze's, on a few of the hosts.
    let mut parts = Vec::new();
    for i in [0, 7, HOSTS - 1] {
        let name = format!("host{i:03}");
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
            .arg(hosts.join(&name)));
        let file = tmp.path().join(format!("{name}.mi.json"));
        std::fs::write(&file, mi).unwrap();
        parts.push(format!("{name}/{name}={}", file.display()));
    }
    run(Command::new(&py)
        .arg(repo().join("sql/check_against_analyze.py"))
        .arg(&local)
        .args(&parts));

    // The cluster: a master and two workers of one core each, on the loopback.
    let port = free_port();
    let master = format!("spark://127.0.0.1:{port}");
    let env = |c: &mut Command| {
        c.env("SPARK_LOCAL_IP", "127.0.0.1")
            .env("SPARK_HOME", &spark_home)
            .env("SPARK_WORKER_DIR", tmp.path().join("work"))
            .env("SPARK_LOG_DIR", tmp.path().join("logs"))
            .env("PYSPARK_PYTHON", &py)
            .env("PYSPARK_DRIVER_PYTHON", &py)
            .stdout(Stdio::null())
            .stderr(Stdio::null());
    };
    let class = spark_home.join("bin/spark-class");
    let mut started = Started(Vec::new());
    let mut c = Command::new(&class);
    c.args([
        "org.apache.spark.deploy.master.Master",
        "--host",
        "127.0.0.1",
    ])
    .args([
        "--port",
        &port.to_string(),
        "--webui-port",
        &free_port().to_string(),
    ]);
    env(&mut c);
    started.0.push(c.spawn().expect("the master starts"));
    let t0 = Instant::now();
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            t0.elapsed() < Duration::from_secs(120),
            "the master never listened"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    for _ in 0..2 {
        let mut c = Command::new(&class);
        c.args([
            "org.apache.spark.deploy.worker.Worker",
            "--host",
            "127.0.0.1",
        ])
        .args(["--cores", "1", "--memory", "1g"])
        .args(["--webui-port", &free_port().to_string()])
        .arg(&master);
        env(&mut c);
        started.0.push(c.spawn().expect("a worker starts"));
    }
    let cluster = tmp.path().join("cluster.json");
    let submitted = Instant::now();
    let mut c = Command::new(spark_home.join("bin/spark-submit"));
    c.args([
        "--master",
        &master,
        "--total-executor-cores",
        "2",
        "--executor-memory",
        "1g",
    ])
    .arg(repo().join("sql/run.py"))
    .args(["--engine", "spark", "--master", &master])
    .arg(&data)
    .arg("--out")
    .arg(&cluster);
    c.env("SPARK_LOCAL_IP", "127.0.0.1")
        .env("PYSPARK_PYTHON", &py)
        .env("PYSPARK_DRIVER_PYTHON", &py);
    run(&mut c);
    eprintln!(
        "cluster: {HOSTS} hosts queried in {:.1} s",
        submitted.elapsed().as_secs_f64()
    );
    drop(started);

    let (a, b) = (rows(&local), rows(&cluster));
    assert_eq!(
        a.iter().map(|q| &q.0).collect::<Vec<_>>(),
        b.iter().map(|q| &q.0).collect::<Vec<_>>()
    );
    let mut compared = 0;
    for ((q, ra), (_, rb)) in a.iter().zip(&b) {
        assert_eq!(ra.len(), rb.len(), "{q}: rows");
        for (x, y) in ra.iter().zip(rb) {
            assert!(
                x.len() == y.len() && x.iter().zip(y).all(|(u, v)| same(u, v)),
                "{q}: local {x:?}, cluster {y:?}"
            );
            compared += 1;
        }
    }
    let hosts_seen = a
        .iter()
        .find(|q| q.0 == "cputop_total")
        .map_or(0, |q| q.1.len());
    assert_eq!(hosts_seen, HOSTS, "every host has its cputop total");
    eprintln!("cluster = local on {compared} rows");
}
