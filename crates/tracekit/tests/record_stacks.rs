//! `tracekit record --stacks` on the real kernel, then `tracekit latency` and `critpath` on
//! what it recorded: a child sleeping over the threshold gets its stacks (where it slept, who
//! woke it), children sleeping under it get none (the threshold is checked in the kernel).
//! Needs root, tracefs and the `bpf` feature (`cargo test -p tracekit --features bpf --test
//! record_stacks`); runs when `TRACEKIT_ROOT_TESTS=1`.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const TRACEFS: &str = "/sys/kernel/tracing";

fn enabled(test: &str) -> bool {
    if std::env::var("TRACEKIT_ROOT_TESTS").as_deref() != Ok("1") {
        eprintln!("{test}: skipped (set TRACEKIT_ROOT_TESTS=1 to run the root/tracefs tests)");
        return false;
    }
    if !cfg!(feature = "bpf") {
        eprintln!("{test}: skipped (the stacks need the `bpf` feature: --features bpf)");
        return false;
    }
    let uid = Command::new("id").arg("-u").output().expect("run id -u");
    assert_eq!(
        String::from_utf8_lossy(&uid.stdout).trim(),
        "0",
        "TRACEKIT_ROOT_TESTS=1 but not running as root"
    );
    if !Path::new(TRACEFS).join("instances").is_dir() {
        let _ = Command::new("mount")
            .args(["-t", "tracefs", "nodev", TRACEFS])
            .status();
    }
    assert!(Path::new(TRACEFS).join("instances").is_dir());
    true
}

fn tracekit() -> Command {
    Command::new(env!("CARGO_BIN_EXE_tracekit"))
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
    let t0 = Instant::now();
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("kernel");
    let rec = tracekit()
        .args(["record", "-q", "--events", "sched,syscalls,timer,irq", "-o"])
        .arg(&out)
        .args(["--stacks", "syscall>40ms", "--stacks", "offcpu>40ms"])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // A new instance traces from its creation: tracing is on for the recording once
    // sched_switch is enabled (after tracing was turned off) and tracing is on again.
    let inst = Path::new(TRACEFS).join(format!("instances/tracekit-{}", rec.id()));
    let is_one = |rel: &str| std::fs::read_to_string(inst.join(rel)).is_ok_and(|s| s.trim() == "1");
    while !(is_one("events/sched/sched_switch/enable") && is_one("tracing_on")) {
        assert!(
            t0.elapsed() < Duration::from_secs(20),
            "recorder did not start"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
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
    let st = Command::new("kill")
        .args(["-INT", &rec.id().to_string()])
        .status()
        .unwrap();
    assert!(st.success());
    let o = rec.wait_with_output().unwrap();
    assert!(
        o.status.success(),
        "record --stacks failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );

    let ts = stacks_of(&out);
    let mut kinds = std::collections::BTreeMap::new();
    for s in &ts.samples {
        *kinds.entry(s.kind.as_str()).or_insert(0) += 1;
    }
    eprintln!(
        "stack samples {kinds:?}, {} symbols; recorder: {}",
        ts.symbols.symbols().len(),
        String::from_utf8_lossy(&o.stderr)
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
    for s in &ts.samples {
        assert!(s.delay > 40_000_000, "a stack under the threshold: {s:?}");
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
    assert!(lat.status.success());
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
    assert!(folded.status.success());
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
    if testkit::tool_or_skip(
        "babeltrace2",
        "apt-get install babeltrace2",
        "the babeltrace2 read",
    ) {
        let bt = Command::new("babeltrace2").arg(&out).output().unwrap();
        assert!(
            bt.status.success(),
            "{}",
            String::from_utf8_lossy(&bt.stderr)
        );
        let t = String::from_utf8_lossy(&bt.stdout);
        assert!(t.contains("latency_tracker_syscall_stack:"));
        assert!(t.contains("tracekit_ksym:"));
    }
    eprintln!("stacks test: {:.1} s", t0.elapsed().as_secs_f64());
}
