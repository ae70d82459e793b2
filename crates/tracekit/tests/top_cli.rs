//! `tracekit top`: its numbers against `tracekit analyze cputop --refresh` and `tracekit
//! latency` over the same windows of a generated trace, the terminal dashboard driven through
//! a pseudo-terminal, and (root, `TRACEKIT_ROOT_TESTS=1`) a local recording followed as it is
//! written, and a recording streamed to `tracekit relay` shown live from the relay.

mod common;

use std::io::{Read, Write};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::{command, ok};
use serde_json::Value;

/// A generated kernel trace (4 CPUs, system calls, block I/O, wakeups, IRQs) in `dir/mix`.
fn generated(dir: &Path, events: u64) -> std::path::PathBuf {
    let out = dir.join("mix");
    ok(command()
        .args(["gen", "kernel-mix", "--events", &events.to_string(), "-o"])
        .arg(&out)
        .output()
        .unwrap());
    out
}

fn json_lines(s: &str) -> Vec<Value> {
    s.lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect()
}

/// `analyze --mi`'s table rows of class `class`, per refresh period.
fn tables<'a>(results: &'a [Value], class: &str) -> Vec<&'a Value> {
    results.iter().filter(|t| t["class"] == class).collect()
}

fn ts(v: &Value) -> i64 {
    v["value"].as_i64().unwrap()
}

/// A tracker's summary: (matched, min, max, log2 histogram).
type Latencies = (u64, Option<i64>, Option<i64>, Vec<(i64, u64)>);

/// A latency summary entry as (matched, min, max, histogram).
fn summary_of(s: &Value) -> Latencies {
    let hist = s["log2_histogram"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| (b["ge_ns"].as_i64().unwrap(), b["count"].as_u64().unwrap()))
        .collect();
    (
        s["matched"].as_u64().unwrap(),
        s["min_ns"].as_i64(),
        s["max_ns"].as_i64(),
        hist,
    )
}

fn latency_summaries(v: &Value) -> Vec<(String, Latencies)> {
    let mut s: Vec<_> = v
        .as_array()
        .unwrap()
        .iter()
        .map(|t| (t["tracker"].as_str().unwrap().to_string(), summary_of(t)))
        .collect();
    s.sort_by(|a, b| a.0.cmp(&b.0));
    s
}

const TRACKERS: &str = "syscall,block,wakeup,irq";

/// `tracekit latency`'s JSON lines over `trace`: (reports, summary per tracker).
fn latency_run(trace: &Path) -> (Vec<Value>, Value) {
    let out = ok(command()
        .args([
            "latency",
            "--json",
            "--tracker",
            TRACKERS,
            "--timeout",
            "none",
            "--threshold",
            "20us",
        ])
        .arg(trace)
        .output()
        .unwrap());
    let mut lines = json_lines(&out);
    let summary = lines.pop().unwrap()["summary"].clone();
    (lines, summary)
}

#[test]
fn windows_equal_analyze_cputop_refresh_and_latency() {
    let tmp = tempfile::tempdir().unwrap();
    let trace = generated(tmp.path(), 120_000);
    let top = json_lines(&ok(command()
        .args([
            "top",
            "--replay",
            "--speed",
            "0",
            "--batch",
            "--interval",
            "10ms",
        ])
        .args(["--tracker", TRACKERS, "--threshold", "20us"])
        .args(["--threshold", "block=100us", "--worst", "30"])
        .arg(&trace)
        .output()
        .unwrap()));
    assert!(top.len() >= 3, "several windows: {}", top.len());
    assert!(top.last().unwrap()["last"].as_bool().unwrap());

    // cputop: each window is the matching --refresh period, its tables those of the period.
    let mi: Value = serde_json::from_str(&ok(command()
        .args([
            "analyze",
            "cputop",
            "--mi",
            "--limit",
            "0",
            "--refresh",
            "0.01",
        ])
        .arg(&trace)
        .output()
        .unwrap()))
    .unwrap();
    let results = mi["results"].as_array().unwrap();
    let (procs, cpus, totals) = (
        tables(results, "per-process"),
        tables(results, "per-cpu"),
        tables(results, "total"),
    );
    assert_eq!(procs.len(), top.len(), "one window per refresh period");
    for (i, w) in top.iter().enumerate() {
        let range = &procs[i]["time-range"];
        assert_eq!(
            w["begin"].as_i64().unwrap(),
            ts(&range["begin"]),
            "window {i}"
        );
        assert_eq!(w["end"].as_i64().unwrap(), ts(&range["end"]), "window {i}");
        let expected: Vec<(i64, String, f64)> = procs[i]["data"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                (
                    r[0]["tid"].as_i64().unwrap(),
                    r[0]["name"].as_str().unwrap().to_string(),
                    r[3]["value"].as_f64().unwrap(),
                )
            })
            .collect();
        let got: Vec<(i64, String, f64)> = w["threads"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| {
                (
                    t["tid"].as_i64().unwrap(),
                    t["comm"].as_str().unwrap().to_string(),
                    t["usage"].as_f64().unwrap(),
                )
            })
            .collect();
        assert!(!got.is_empty());
        assert_eq!(got, expected, "threads of window {i}");
        let expected: Vec<(u64, f64)> = cpus[i]["data"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                (
                    r[0]["id"].as_u64().unwrap(),
                    r[1]["value"].as_f64().unwrap(),
                )
            })
            .collect();
        let got: Vec<(u64, f64)> = w["cpus"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| (c["cpu"].as_u64().unwrap(), c["usage"].as_f64().unwrap()))
            .collect();
        assert_eq!(got, expected, "CPUs of window {i}");
        assert_eq!(
            w["total"].as_f64().unwrap(),
            totals[i]["data"][0][0]["value"].as_f64().unwrap()
        );
    }

    // Latencies: at the end, `tracekit latency`'s summary over the whole trace; the windows'
    // counts add up to it.
    let (reports, summary) = latency_run(&trace);
    let last = top.last().unwrap();
    let by_tracker = |w: &Value| latency_summaries(&w["latencies"]);
    assert_eq!(by_tracker(last), latency_summaries(&summary));
    for (k, name) in TRACKERS.split(',').enumerate() {
        let sum: u64 = top
            .iter()
            .map(|w| w["latencies"][k]["window_matched"].as_u64().unwrap())
            .sum();
        assert_eq!(last["latencies"][k]["tracker"], name);
        assert_eq!(
            sum,
            last["latencies"][k]["matched"].as_u64().unwrap(),
            "{name}"
        );
    }
    // The worst: the reports over their tracker's threshold, worst first, the first 30.
    let over: Vec<&Value> = reports
        .iter()
        .filter(|r| {
            let th = if r["tracker"] == "block" {
                100_000
            } else {
                20_000
            };
            r["kind"] == "latency" && r["latency_ns"].as_i64().unwrap() >= th
        })
        .collect();
    let mut worst = over.clone();
    worst.sort_by_key(|r| std::cmp::Reverse(r["latency_ns"].as_i64().unwrap()));
    worst.truncate(30);
    assert!(worst.len() >= 10, "enough occurrences over the thresholds");
    let got: Vec<&Value> = last["worst"].as_array().unwrap().iter().collect();
    assert_eq!(got, worst);
    assert_eq!(last["total_over"].as_u64().unwrap(), over.len() as u64);

    // A window in the middle: `tracekit latency` over the events before its end (the trace
    // cut there by `tracekit convert`).
    let mid = &top[top.len() / 2];
    let cut = tmp.path().join("cut");
    let end = mid["end"].as_i64().unwrap() - 1;
    ok(command()
        .args(["convert", "--end"])
        .arg(format!(
            "{}.{:09}",
            end / 1_000_000_000,
            end % 1_000_000_000
        ))
        .arg("-o")
        .arg(&cut)
        .arg(&trace)
        .output()
        .unwrap());
    let (_, summary) = latency_run(&cut);
    assert_eq!(by_tracker(mid), latency_summaries(&summary));
}

/// Output read from a pseudo-terminal, shared with the thread reading it.
#[derive(Clone, Default)]
struct Screen(Arc<Mutex<Vec<u8>>>);

impl Screen {
    fn text(&self) -> String {
        String::from_utf8_lossy(&self.0.lock().unwrap()).into_owned()
    }

    fn wait_for(&self, what: &str, timeout: Duration) -> bool {
        let start = Instant::now();
        while start.elapsed() < timeout {
            if self.text().contains(what) {
                return true;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        false
    }
}

#[test]
fn terminal_dashboard_shows_a_frame_and_q_quits() {
    use portable_pty::{native_pty_system, CommandBuilder, PtySize};
    let tmp = tempfile::tempdir().unwrap();
    let trace = generated(tmp.path(), 60_000);
    let pty = native_pty_system()
        .openpty(PtySize {
            rows: 40,
            cols: 120,
            pixel_width: 0,
            pixel_height: 0,
        })
        .unwrap();
    let mut cmd = CommandBuilder::new(env!("CARGO_BIN_EXE_tracekit"));
    // Windows of 10 ms of trace time, replayed 20 times slower: one every 0.2 s.
    cmd.args(["top", "--replay", "--speed", "0.05", "--interval", "10ms"]);
    cmd.arg(&trace);
    cmd.env("TERM", "xterm-256color");
    let mut child = pty.slave.spawn_command(cmd).unwrap();
    drop(pty.slave);
    let screen = Screen::default();
    let mut reader = pty.master.try_clone_reader().unwrap();
    let s = screen.clone();
    std::thread::spawn(move || {
        let mut buf = [0u8; 4096];
        while let Ok(n) = reader.read(&mut buf) {
            if n == 0 {
                break;
            }
            s.0.lock().unwrap().extend_from_slice(&buf[..n]);
        }
    });
    let shown = screen.wait_for("Per-thread CPU", Duration::from_secs(30))
        && screen.wait_for("syscall latency", Duration::from_secs(5));
    let mut writer = pty.master.take_writer().unwrap();
    writer.write_all(b"q").unwrap();
    writer.flush().unwrap();
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break Some(s);
        }
        if start.elapsed() > Duration::from_secs(15) {
            let _ = child.kill();
            break None;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let text = screen.text();
    assert!(shown, "no dashboard frame: {text:?}");
    for what in ["Per-CPU load", "cpu0", "Worst occurrences", "×0.05"] {
        assert!(text.contains(what), "{what} not shown");
    }
    let status = status.expect("q did not end tracekit top");
    assert!(status.success(), "{status:?}");
    // The terminal is given back: the alternate screen is left.
    assert!(text.contains("\x1b[?1049l"), "alternate screen not left");
}

/// The root tests record the whole machine: one at a time, so that one's recorder (and its
/// load) does not crowd the other's windows.
static RECORDING: Mutex<()> = Mutex::new(());

/// Root: a local recording shown as it is made, kept readable.
#[test]
fn local_recording_followed_and_kept() {
    if !testkit::root::root_or_skip("local_recording_followed_and_kept") {
        return;
    }
    let _one = RECORDING.lock().unwrap_or_else(|e| e.into_inner());
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("rec").join("kernel");
    let load = std::process::Command::new("sh")
        .args([
            "-c",
            "end=$(($(date +%s)+4)); while [ $(date +%s) -lt $end ]; do cat /proc/self/stat > /dev/null; done",
        ])
        .spawn()
        .unwrap();
    let started = Instant::now();
    let out = ok(command()
        .args([
            "top",
            "--batch",
            "--duration",
            "3.5",
            "--interval",
            "500ms",
            "-o",
        ])
        .arg(&dir)
        .output()
        .unwrap());
    let mut load = load;
    let _ = load.wait();
    let lines: Vec<&str> = out.lines().collect();
    let trace_line = format!("trace: {}", dir.display());
    assert_eq!(lines.last(), Some(&trace_line.as_str()), "{out}");
    let windows = json_lines(&lines[..lines.len() - 1].join("\n"));
    assert!(
        windows.len() >= 4,
        "windows as the recording went: {}",
        windows.len()
    );
    assert!(windows
        .iter()
        .any(|w| !w["threads"].as_array().unwrap().is_empty()));
    assert!(started.elapsed() < Duration::from_secs(30));
    // Kept and readable.
    // (Bytes: the system calls' string arguments it recorded need not be UTF-8.)
    let printed = command().arg("print").arg(&dir).output().unwrap();
    assert!(
        printed.status.success(),
        "{}",
        String::from_utf8_lossy(&printed.stderr)
    );
    assert!(printed.stdout.iter().filter(|&&b| b == b'\n').count() > 1000);
    // What was shown while it was written is what the finished trace shows.
    let replayed = json_lines(&ok(command()
        .args([
            "top",
            "--replay",
            "--speed",
            "0",
            "--batch",
            "--interval",
            "500ms",
        ])
        .arg(&dir)
        .output()
        .unwrap()));
    assert_eq!(windows.len(), replayed.len());
    for (a, b) in windows.iter().zip(&replayed) {
        assert_eq!(a["begin"], b["begin"]);
        assert_eq!(a["threads"], b["threads"]);
        assert_eq!(a["latencies"], b["latencies"]);
    }
}

/// Free TCP ports on the loopback (bound then released: the relay takes them right after).
fn free_ports<const N: usize>() -> [u16; N] {
    let listeners: Vec<std::net::TcpListener> = (0..N)
        .map(|_| std::net::TcpListener::bind("127.0.0.1:0").unwrap())
        .collect();
    std::array::from_fn(|i| listeners[i].local_addr().unwrap().port())
}

/// Root: a recording streamed to `tracekit relay` (`record --url`) is shown live from the relay
/// (`top net://…`), and the windows shown are those of the recording's own copy replayed.
#[test]
fn relay_session_shown_live() {
    if !testkit::root::root_or_skip("relay_session_shown_live") {
        return;
    }
    let _one = RECORDING.lock().unwrap_or_else(|e| e.into_inner());
    let tmp = tempfile::tempdir().unwrap();
    let [ctrl, data, live] = free_ports::<3>();
    let mut relay = command()
        .args(["relay", "--control-port", &ctrl.to_string()])
        .args([
            "--data-port",
            &data.to_string(),
            "--live-port",
            &live.to_string(),
            "-o",
        ])
        .arg(tmp.path().join("relay"))
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .unwrap()
        .trim()
        .to_string();
    let local = tmp.path().join("rec").join("kernel");
    let mut rec = command()
        .args([
            "record",
            "--duration",
            "3",
            "--live-timer",
            "200000",
            "--session",
            "topsess",
        ])
        .arg("--url")
        .arg(format!("net://127.0.0.1:{ctrl}:{data}"))
        .arg("-o")
        .arg(&local)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // The session is listed once the recorder has created it.
    let relay_url = format!("net://127.0.0.1:{live}");
    let listed = (0..100).any(|_| {
        std::thread::sleep(Duration::from_millis(100));
        command()
            .args(["print", &relay_url])
            .output()
            .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).contains("topsess"))
    });
    assert!(listed, "the relay never listed the session");
    let shown = command()
        .args(["top", "--batch", "--interval", "500ms"])
        .arg(format!("{relay_url}/host/{host}/topsess"))
        .output()
        .unwrap();
    let recorded = rec.wait().unwrap();
    let _ = relay.kill();
    let _ = relay.wait();
    assert!(recorded.success(), "record --url failed");
    let windows = json_lines(&ok(shown));
    assert!(windows.len() >= 3, "windows shown live: {}", windows.len());
    let replayed = json_lines(&ok(command()
        .args([
            "top",
            "--replay",
            "--speed",
            "0",
            "--batch",
            "--interval",
            "500ms",
        ])
        .arg(&local)
        .output()
        .unwrap()));
    assert_eq!(windows.len(), replayed.len());
    for (a, b) in windows.iter().zip(&replayed) {
        assert_eq!(a["begin"], b["begin"]);
        assert_eq!(a["threads"], b["threads"]);
    }
}

#[test]
fn bad_options_are_named() {
    let tmp = tempfile::tempdir().unwrap();
    let run = |args: &[&str]| {
        let o = command().arg("top").args(args).output().unwrap();
        assert!(!o.status.success(), "{args:?} succeeded");
        String::from_utf8_lossy(&o.stderr).into_owned()
    };
    let p = tmp.path().to_str().unwrap();
    assert!(run(&[p, "--replay", "--threshold", "disk=1ms"]).contains("unknown tracker `disk`"));
    assert!(
        run(&[p, "--replay", "--threshold", "syscall=fast"]).contains("--threshold syscall=fast")
    );
    assert!(run(&[p, "--replay", "--interval", "0"]).contains("--interval"));
    assert!(run(&[p]).contains("--replay"));
    // A relay that is not there: the error names it.
    let [port] = free_ports::<1>();
    let url = format!("net://127.0.0.1:{port}/host/h/s");
    assert!(run(&[&url]).contains(&format!("relay at 127.0.0.1:{port}")));
    // A directory without a trace: the error names it.
    assert!(run(&[p, "--replay", "--batch"]).contains(p));
}
