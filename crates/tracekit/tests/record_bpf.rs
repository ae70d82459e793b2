//! The eBPF helpers of `tracekit record` on the real kernel:
//! - `--stacks`, then `tracekit latency` and `critpath` on what it recorded: a child sleeping
//!   over the threshold gets its stacks (where it slept, who woke it), children sleeping under
//!   it get none (the threshold is checked in the kernel);
//! - the system calls' string arguments: the I/O analyses name the files a workload read and
//!   wrote, with the sizes it read and wrote, as lttng-analyses does on the same recording.
//!
//! Needs root, tracefs and the `bpf` feature (`cargo test -p tracekit --features bpf --test
//! record_bpf`); runs when `TRACEKIT_ROOT_TESTS=1`.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Whether the test runs: root tests on, and built with the `bpf` feature.
fn enabled(test: &str) -> bool {
    testkit::root::root_with_feature_or_skip(test, "bpf", cfg!(feature = "bpf"))
}

fn tracekit() -> Command {
    Command::new(env!("CARGO_BIN_EXE_tracekit"))
}

/// One recorder at a time: they would compete for the two CPUs and the kernel buffers.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Starts `tracekit record -q -o OUT ARGS…` and waits until it traces.
fn start_recording(out: &Path, args: &[&str]) -> std::process::Child {
    let rec = tracekit()
        .args(["record", "-q", "-o"])
        .arg(out)
        .args(args)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    testkit::root::wait_tracing(rec.id());
    rec
}

/// Stops a recorder with SIGINT; its stderr.
fn stop_recording(rec: std::process::Child) -> String {
    let st = Command::new("kill")
        .args(["-INT", &rec.id().to_string()])
        .status()
        .unwrap();
    assert!(st.success());
    let o = rec.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(o.status.success(), "tracekit record failed: {err}");
    err
}

/// The stack events of a trace, as kernel::stacks reads them, with its symbols.
fn stacks_of(dir: &Path) -> kernel::stacks::TraceStacks {
    let traces = ctf::open_all(&[dir]).expect("open the trace");
    kernel::stacks::read_stacks(&traces).expect("read the stacks")
}

/// `150.138 ms`, as `tracekit latency` writes a duration of milliseconds.
fn fmt_ms(ns: u64) -> String {
    format!("{:.3} ms", ns as f64 / 1e6)
}

#[test]
fn stacks_where_a_sleeping_child_waits() {
    if !enabled("stacks_where_a_sleeping_child_waits") {
        return;
    }
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let t0 = Instant::now();
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("kernel");
    let rec = start_recording(
        &out,
        &[
            "--events",
            "sched,syscalls,timer,irq",
            "--stacks",
            "syscall>40ms",
            "--stacks",
            "offcpu>40ms",
        ],
    );
    std::thread::sleep(Duration::from_millis(200));
    // Sleepers under the threshold first, then one over it.
    let mut short = Vec::new();
    for _ in 0..5 {
        let mut c = Command::new("sleep").arg("0.005").spawn().unwrap();
        short.push(c.id() as i32);
        assert!(c.wait().unwrap().success());
    }
    let mut long = Command::new("sleep").arg("0.15").spawn().unwrap();
    let long_tid = long.id() as i32;
    assert!(long.wait().unwrap().success());
    std::thread::sleep(Duration::from_millis(200));
    let rec_err = stop_recording(rec);

    let ts = stacks_of(&out);
    let mut kinds = std::collections::BTreeMap::new();
    for s in &ts.samples {
        *kinds.entry(s.kind.as_str()).or_insert(0) += 1;
    }
    eprintln!(
        "stack samples {kinds:?}, {} symbols; recorder: {}",
        ts.symbols.symbols().len(),
        rec_err
    );
    assert!(
        !ts.symbols.is_empty(),
        "no tracekit_ksym symbol table in the trace"
    );
    use kernel::stacks::StackKind;
    let of = |kind: StackKind| -> Vec<&kernel::stacks::StackSample> {
        ts.samples
            .iter()
            .filter(|s| s.kind == kind && s.tid == long_tid)
            .collect()
    };
    let names = |s: &kernel::stacks::StackSample| -> Vec<String> {
        s.kstack.iter().map(|a| ts.symbols.name(*a)).collect()
    };
    // The slow system call: clock_nanosleep (230 on x86-64), blocked in do_nanosleep.
    let sys = of(StackKind::Syscall);
    assert_eq!(sys.len(), 1, "one stack per slow call: {sys:?}");
    assert_eq!(sys[0].syscall, Some(230));
    assert!(sys[0].delay >= 40_000_000 && sys[0].delay < 1_000_000_000);
    let sys_frames = names(sys[0]);
    // do_nanosleep may be inlined into hrtimer_nanosleep.
    let nanosleep = |f: &String| f == "do_nanosleep" || f == "hrtimer_nanosleep";
    assert!(sys_frames.iter().any(nanosleep), "{sys_frames:?}");
    assert!(
        sys_frames.iter().any(|f| f.contains("sys_clock_nanosleep")),
        "the stack goes down to the system call: {sys_frames:?}"
    );
    // Off the CPU: its own stack as it stopped, and its waker's, which ran the timer.
    let off = of(StackKind::OffCpu);
    assert!(!off.is_empty(), "no off-CPU stack of the sleeper");
    assert!(names(off[0]).iter().any(nanosleep));
    let waker: Vec<_> = ts
        .samples
        .iter()
        .filter(|s| s.kind == StackKind::Waker && s.wakee.as_ref().is_some_and(|w| w.0 == long_tid))
        .collect();
    assert!(!waker.is_empty(), "no waker stack for the sleeper");
    let wf = names(waker[0]);
    assert!(
        wf.iter().any(|f| f == "hrtimer_wakeup"),
        "the waker ran the sleeper's timer: {wf:?}"
    );
    assert!(
        !wf[0].starts_with("bpf_prog_"),
        "the helper's own frames are trimmed: {wf:?}"
    );
    // The threshold is checked in the kernel: nothing under it was written...
    // (and none of a wait that ended before it began: a thread woken while still switching
    // out once made a 2^64 - 320 ns "delay").
    for s in &ts.samples {
        assert!(s.delay > 40_000_000, "a stack under the threshold: {s:?}");
        assert!(
            s.delay < 600_000_000_000,
            "a stack of an impossible delay: {s:?}"
        );
    }
    // ...so the short sleeps left no system-call stack (their other waits, e.g. for a CPU
    // while the machine is busy, may pass the off-CPU threshold).
    let short_sys: Vec<_> = ts
        .samples
        .iter()
        .filter(|s| {
            s.kind == StackKind::Syscall && short.contains(&s.tid) && s.syscall == Some(230)
        })
        .collect();
    assert!(short_sys.is_empty(), "stacks of 5 ms sleeps: {short_sys:?}");

    // tracekit latency lists the occurrence with its stacks...
    let lat = tracekit()
        .args(["latency", "--tracker", "syscall", "--threshold", "40ms"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(
        lat.status.success(),
        "tracekit latency failed: {}",
        String::from_utf8_lossy(&lat.stderr)
    );
    let text = String::from_utf8_lossy(&lat.stdout);
    let mut lines = text.lines();
    let report = lines
        .find(|l| l.contains(&format!("sleep ({long_tid})")) && l.contains("clock_nanosleep"))
        .unwrap_or_else(|| panic!("no report of the long sleep:\n{text}"));
    assert!(report.contains("syscall"), "{report}");
    assert_eq!(
        lines.next().map(str::trim),
        Some(
            format!(
                "syscall stack of sleep ({long_tid}), {}:",
                fmt_ms(sys[0].delay)
            )
            .as_str()
        ),
        "{text}"
    );
    let first = lines.next().unwrap_or_default().trim();
    assert!(
        first.starts_with("do_nanosleep+0x") || first.starts_with("hrtimer_nanosleep+0x"),
        "{text}"
    );
    // ...folded for flame graphs, weighted in µs...
    let folded = tracekit()
        .args([
            "latency",
            "--tracker",
            "syscall,offcpu",
            "--threshold",
            "40ms",
            "--folded",
        ])
        .arg(&out)
        .output()
        .unwrap();
    assert!(
        folded.status.success(),
        "tracekit latency --folded failed: {}",
        String::from_utf8_lossy(&folded.stderr)
    );
    let ftext = String::from_utf8_lossy(&folded.stdout);
    let line = ftext
        .lines()
        .find(|l| l.starts_with("sleep;") && l.contains("_nanosleep;"))
        .unwrap_or_else(|| panic!("no folded sleep stack:\n{ftext}"));
    let (frames, weight) = line.rsplit_once(' ').unwrap();
    assert!(weight.parse::<u64>().unwrap() >= 40_000, "{line}");
    assert!(
        frames.find("sys_clock_nanosleep") < frames.find("hrtimer_nanosleep"),
        "outermost frame first: {line}"
    );
    // ...critpath names the function the sleeper's wait (on its timer: the timer and IRQ
    // events say so) was spent in...
    let cp = tracekit()
        .args(["critpath", "--json", "--tid", &long_tid.to_string()])
        .arg(&out)
        .output()
        .unwrap();
    assert!(
        cp.status.success(),
        "{}",
        String::from_utf8_lossy(&cp.stderr)
    );
    let j: serde_json::Value = serde_json::from_slice(&cp.stdout).unwrap();
    let waits: Vec<(String, String, i64)> = j["path"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["tid"].as_i64() == Some(long_tid as i64))
        .filter_map(|s| {
            Some((
                s["state"].as_str()?.to_string(),
                s["blocked_function"].as_str()?.to_string(),
                s["end"].as_i64()? - s["start"].as_i64()?,
            ))
        })
        .collect();
    assert!(
        waits.iter().any(
            |(_, f, d)| (f == "hrtimer_nanosleep" || f == "do_nanosleep") && *d >= 100_000_000
        ),
        "no wait of the sleeper named after its function: {waits:?}\n{}",
        String::from_utf8_lossy(&cp.stdout)
    );
    // ...and babeltrace2 reads the trace with its stack events.
    if let Some(t) = testkit::babeltrace2_text(&out) {
        assert!(t.contains("latency_tracker_syscall_stack:"));
        assert!(t.contains("tracekit_ksym:"));
    }
    eprintln!("stacks test: {:.1} s", t0.elapsed().as_secs_f64());
}

/// The rows of a LAMI table of a class (`per-file-top`…), in order.
fn lami_tables<'a>(j: &'a serde_json::Value, class: &str) -> Vec<&'a Vec<serde_json::Value>> {
    j["results"]
        .as_array()
        .unwrap_or_else(|| panic!("no results in {j}"))
        .iter()
        .filter(|t| match &t["class"] {
            serde_json::Value::String(s) => s == class,
            c => c["inherit"].as_str() == Some(class),
        })
        .map(|t| t["data"].as_array().unwrap())
        .collect()
}

/// The size a per-file table gives a path, if it lists it.
fn file_size(rows: &[serde_json::Value], path: &str) -> Option<i64> {
    rows.iter().find_map(|r| {
        let r = r.as_array()?;
        (r.first()?["path"].as_str()? == path).then(|| r.get(1)?["value"].as_i64())?
    })
}

#[test]
fn io_analyses_name_the_files_a_workload_used() {
    if !enabled("io_analyses_name_the_files_a_workload_used") {
        return;
    }
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let t0 = Instant::now();
    let tmp = tempfile::tempdir().unwrap();
    // Sizes no other file of the machine is likely to read or write in the same seconds.
    let input = tmp.path().join("tracekit-known-input.dat");
    std::fs::write(&input, vec![b'x'; 12_345]).unwrap();
    let output = tmp.path().join("tracekit-known-output.dat");
    // lttng-analyses wants the trace under a path component ending in `kernel`; it cannot
    // read the 2.13 fd statedump.
    let out = tmp.path().join("run").join("kernel");
    let rec = start_recording(&out, &["--events", "sched,syscalls", "--no-statedump-fds"]);
    let script = format!(
        "cat {i} > /dev/null; cat {i} > /dev/null; head -c 7000 /dev/zero > {o}",
        i = input.display(),
        o = output.display()
    );
    assert!(Command::new("sh")
        .args(["-c", &script])
        .status()
        .unwrap()
        .success());
    std::thread::sleep(Duration::from_millis(300));
    stop_recording(rec);

    let input = input.to_str().unwrap();
    let output = output.to_str().unwrap();
    let check = |who: &str, j: &serde_json::Value| {
        let tables = lami_tables(j, "per-file-top");
        assert_eq!(
            tables.len(),
            2,
            "{who}: read and written per-file tables: {j}"
        );
        assert_eq!(
            file_size(tables[0], input),
            Some(2 * 12_345),
            "{who}: bytes read from {input}: {j}"
        );
        assert_eq!(
            file_size(tables[1], output),
            Some(7_000),
            "{who}: bytes written to {output}: {j}"
        );
    };
    let ours = tracekit()
        .args(["analyze", "iousagetop", "--mi", "--limit", "100000"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(
        ours.status.success(),
        "{}",
        String::from_utf8_lossy(&ours.stderr)
    );
    check(
        "tracekit",
        &serde_json::from_slice(&ours.stdout).expect("tracekit's LAMI JSON"),
    );
    if testkit::tool_or_skip(
        "lttng-iousagetop-mi",
        "apt-get install python3-lttnganalyses",
        "the lttng-analyses comparison",
    ) {
        let theirs = Command::new("lttng-iousagetop-mi")
            .args(["--limit", "100000"])
            .arg(&out)
            .output()
            .unwrap();
        let j: serde_json::Value = serde_json::from_slice(&theirs.stdout).unwrap_or_else(|e| {
            panic!(
                "lttng-iousagetop-mi: bad JSON ({e}): {}",
                String::from_utf8_lossy(&theirs.stderr)
            )
        });
        check("lttng-analyses", &j);
    }
    eprintln!("io test: {:.1} s", t0.elapsed().as_secs_f64());
}

/// The string arguments and the stacks in flight-recorder mode: a snapshot (SIGUSR1) holds
/// the file names of the calls in its kernel buffers and the stacks of its span.
#[test]
fn flight_recorder_snapshot_has_strings_and_stacks() {
    if !enabled("flight_recorder_snapshot_has_strings_and_stacks") {
        return;
    }
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let t0 = Instant::now();
    let tmp = tempfile::tempdir().unwrap();
    let input = tmp.path().join("tracekit-flight-input.dat");
    std::fs::write(&input, b"flight").unwrap();
    let out = tmp.path().join("fr");
    let rec = tracekit()
        .args(["record", "-q", "--flight-recorder", "16M", "-o"])
        .arg(&out)
        .args(["--events", "sched,syscalls", "--stacks", "offcpu>40ms"])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    testkit::root::wait_tracing(rec.id());
    let mut sleeper = Command::new("sleep").arg("0.15").spawn().unwrap();
    let sleeper_tid = sleeper.id() as i32;
    assert!(sleeper.wait().unwrap().success());
    let cat = Command::new("cat").arg(&input).output().unwrap();
    assert_eq!(cat.stdout, b"flight");
    std::thread::sleep(Duration::from_millis(200));
    let st = Command::new("kill")
        .args(["-USR1", &rec.id().to_string()])
        .status()
        .unwrap();
    assert!(st.success());
    let snap = out.join("snapshot-1").join("kernel");
    let t = Instant::now();
    while !snap.join("metadata").is_file() && t.elapsed() < Duration::from_secs(20) {
        std::thread::sleep(Duration::from_millis(50));
    }
    stop_recording(rec);
    // The file name, in the snapshot's openat of it.
    let traces = ctf::open_all(&[&snap]).expect("open the snapshot");
    let want = input.to_str().unwrap();
    let mut named = 0;
    for t in &traces {
        for mut r in t.readers() {
            while let Some(m) = r.next() {
                if m.expect("decode") == ctf::Message::Event {
                    let ev = r.event();
                    if ev.name() == "syscall_entry_openat"
                        && ev.field("filename").and_then(|v| v.as_str()).as_deref() == Some(want)
                    {
                        named += 1;
                    }
                }
            }
        }
    }
    assert!(named >= 1, "no openat of {want} named in the snapshot");
    // The sleeper's off-CPU stack, where it slept.
    let ts = stacks_of(&snap);
    let off: Vec<_> = ts
        .samples
        .iter()
        .filter(|s| s.kind == kernel::stacks::StackKind::OffCpu && s.tid == sleeper_tid)
        .collect();
    assert!(
        !off.is_empty(),
        "no off-CPU stack of the sleeper in the snapshot"
    );
    let frames: Vec<String> = off[0].kstack.iter().map(|a| ts.symbols.name(*a)).collect();
    assert!(
        frames
            .iter()
            .any(|f| f == "do_nanosleep" || f == "hrtimer_nanosleep"),
        "{frames:?}"
    );
    eprintln!("flight test: {:.1} s", t0.elapsed().as_secs_f64());
}

/// `connect`'s socket address, in lttng-modules 2.13's `syscall_entry_connect` fields
/// (`family`, `dport`, `v4addr`, `v6addr`), for an IPv4 and an IPv6 connection of a client.
#[test]
fn connect_records_the_socket_address() {
    if !enabled("connect_records_the_socket_address") {
        return;
    }
    testkit::root::require_tool(
        "connect_records_the_socket_address",
        "python3",
        "apt-get install python3",
    );
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let t0 = Instant::now();
    let l4 = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let l6 = std::net::TcpListener::bind("[::1]:0").ok();
    let p4 = l4.local_addr().unwrap().port();
    let p6 = l6.as_ref().map(|l| l.local_addr().unwrap().port());
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("kernel");
    let rec = start_recording(&out, &["--events", "sched,syscalls"]);
    let script = format!(
        "import socket, sys\n\
         socket.create_connection(('127.0.0.1', {p4})).close()\n\
         if {p6} > 0: socket.create_connection(('::1', {p6})).close()\n",
        p6 = p6.unwrap_or(0)
    );
    let py = Command::new("python3")
        .args(["-c", &script])
        .output()
        .unwrap();
    assert!(
        py.status.success(),
        "{}",
        String::from_utf8_lossy(&py.stderr)
    );
    std::thread::sleep(Duration::from_millis(200));
    stop_recording(rec);
    let mut seen: Vec<(i64, i64, Vec<i64>, Vec<i64>)> = Vec::new();
    for t in ctf::open_all(&[&out]).expect("open the trace") {
        for mut r in t.readers() {
            while let Some(m) = r.next() {
                if m.expect("decode") != ctf::Message::Event {
                    continue;
                }
                let ev = r.event();
                if ev.name() != "syscall_entry_connect" {
                    continue;
                }
                let int = |f: &str| ev.field(f).and_then(|v| v.as_i64()).unwrap_or(-1);
                let seq = |f: &str| -> Vec<i64> {
                    match ev.field(f).map(|v| v.to_value()) {
                        Some(ctf::value::Value::Array(a)) => a
                            .iter()
                            .filter_map(|e| e.as_int())
                            .map(|e| e as i64)
                            .collect(),
                        _ => Vec::new(),
                    }
                };
                seen.push((int("family"), int("dport"), seq("v4addr"), seq("v6addr")));
            }
        }
    }
    assert!(
        seen.contains(&(2, p4 as i64, vec![127, 0, 0, 1], vec![])),
        "no connect to 127.0.0.1:{p4} in {seen:?}"
    );
    if let Some(p6) = p6 {
        assert!(
            seen.contains(&(10, p6 as i64, vec![], vec![0, 0, 0, 0, 0, 0, 0, 1])),
            "no connect to [::1]:{p6} in {seen:?}"
        );
    }
    eprintln!("connect test: {:.1} s", t0.elapsed().as_secs_f64());
}
