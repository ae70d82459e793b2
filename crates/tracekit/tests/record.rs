//! `tracekit record` on the real kernel. These tests need root and tracefs; they run only when
//! `TRACEKIT_ROOT_TESTS=1`, and then fail (with the reason) when either is missing.

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Mutex;
use std::time::Duration;

/// One recorder at a time: they would compete for the two CPUs and the kernel buffers.
static SERIAL: Mutex<()> = Mutex::new(());

use testkit::root::{instance_of, require_tool, root_or_skip as enabled, TRACEFS};

fn tracekit() -> Command {
    Command::new(env!("CARGO_BIN_EXE_tracekit"))
}

fn workload() -> Vec<Child> {
    vec![
        Command::new("sh")
            .args([
                "-c",
                "for i in $(seq 2000); do cat /proc/self/stat > /dev/null; done",
            ])
            .spawn()
            .unwrap(),
        Command::new("dd")
            .args(["if=/dev/zero", "of=/dev/null", "bs=64k", "count=20000"])
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    ]
}

/// Reads a trace with tracekit's own reader: (events per class, decoding errors).
fn read_trace(dir: &Path) -> (BTreeMap<String, u64>, u64, Vec<String>) {
    let traces = ctf::open_all(&[dir]).expect("open the trace");
    let mut counts = BTreeMap::new();
    let mut errors = 0;
    let mut exec = Vec::new();
    for t in &traces {
        for mut r in t.readers() {
            while let Some(m) = r.next() {
                match m {
                    Ok(ctf::Message::Event) => {
                        let ev = r.event();
                        let name = ev.name().to_string();
                        if name == "sched_process_exec" {
                            if let Some(f) = ev.field("filename") {
                                exec.push(f.as_str().unwrap_or_default().into_owned());
                            }
                        }
                        *counts.entry(name).or_insert(0) += 1;
                    }
                    Ok(_) => {}
                    Err(e) => {
                        eprintln!("read error: {e}");
                        errors += 1;
                    }
                }
            }
        }
    }
    (counts, errors, exec)
}

fn mode(p: &Path) -> u32 {
    std::fs::metadata(p).unwrap().permissions().mode() & 0o777
}

fn have(tool: &str) -> bool {
    Command::new("sh")
        .args(["-c", &format!("command -v {tool}")])
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// Runs `tracekit record -o OUT ARGS…` while the test workload runs, and waits for both.
fn record_under_load(out: &Path, args: &[&str]) -> std::process::Output {
    let mut load = workload();
    let rec = tracekit()
        .arg("record")
        .arg("-o")
        .arg(out)
        .args(args)
        .output()
        .unwrap();
    for c in &mut load {
        let _ = c.wait();
    }
    rec
}

#[test]
fn record_with_duration_is_readable_everywhere() {
    if !enabled("record_with_duration_is_readable_everywhere") {
        return;
    }
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("run").join("kernel");
    let rec = record_under_load(&out, &["--duration", "2", "--hostname", "rec-test"]);
    let stdout = String::from_utf8_lossy(&rec.stdout);
    let stderr = String::from_utf8_lossy(&rec.stderr);
    eprintln!("{stdout}\n{stderr}");
    assert!(rec.status.success(), "tracekit record failed: {stderr}");
    assert!(out.join("metadata").is_file());
    assert!(!tmp.path().join("run/.kernel.partial").exists());
    assert_eq!(mode(&out), 0o700, "trace directory mode");
    // Private all the way down: the LTTng index directory and its files too.
    let mut dirs = vec![out.clone()];
    while let Some(d) = dirs.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                assert_eq!(mode(&p), 0o700, "{}: directory mode", p.display());
                dirs.push(p);
            } else {
                assert_eq!(mode(&p), 0o600, "{}: file mode", p.display());
            }
        }
    }
    assert!(out.join("index").is_dir(), "LTTng packet indexes");
    // No tracekit instance of a finished recorder is left.
    assert_no_stale_instances();

    let (counts, errors, exec) = read_trace(&out);
    assert_eq!(errors, 0, "tracekit's reader found errors");
    for name in [
        "lttng_statedump_start",
        "lttng_statedump_process_state",
        "lttng_statedump_file_descriptor",
        "lttng_statedump_end",
        "sched_switch",
        "syscall_entry_openat",
        "syscall_exit_openat",
        "syscall_entry_read",
    ] {
        assert!(
            counts.get(name).copied().unwrap_or(0) > 0,
            "no {name} events: {counts:?}"
        );
    }
    assert!(
        counts["syscall_entry_openat"] >= 100,
        "the workload's openat calls are missing: {counts:?}"
    );
    assert!(
        exec.iter().any(|f| f.contains("cat")),
        "no exec of cat in {exec:?}"
    );

    if have("babeltrace2") {
        let bt = Command::new("babeltrace2")
            .arg(&out)
            .stdout(Stdio::null())
            .output()
            .unwrap();
        assert!(
            bt.status.success(),
            "babeltrace2 failed: {}",
            String::from_utf8_lossy(&bt.stderr)
        );
    } else {
        eprintln!("babeltrace2 not installed: not checked");
    }
    // The recording as made, fd statedump included (with the `pid` lttng-analyses needs).
    assert!(read_trace(&out)
        .0
        .contains_key("lttng_statedump_file_descriptor"));
    if let Some(first) = lttng_analyses_failure(&out) {
        // A live recording differs each time: record once more to tell a rare event sequence
        // (reported here in full, for a fix) from a systematic defect, which fails again.
        eprintln!("lttng-analyses failed on this recording; recording once more.\n{first}");
        let again = tmp.path().join("again").join("kernel");
        let rec = record_under_load(&again, &["--duration", "2", "--hostname", "rec-test"]);
        assert!(rec.status.success(), "second recording failed");
        if let Some(second) = lttng_analyses_failure(&again) {
            panic!("on two recordings in a row:\n{first}\n----\n{second}");
        }
    }
}

/// Runs lttng-analyses' cputop, syscallstats, irqstats and schedtop (those installed) on a
/// recording: None when they all read it, else what failed, with the events it failed on.
fn lttng_analyses_failure(trace: &Path) -> Option<String> {
    for tool in [
        "lttng-cputop",
        "lttng-syscallstats",
        "lttng-irqstats",
        "lttng-schedtop",
    ] {
        if !have(tool) {
            eprintln!("{tool} not installed: not checked");
            continue;
        }
        // The debug switch makes a failing lttng-analyses print its Python traceback.
        let r = Command::new(tool)
            .arg(trace)
            .env("LTTNG_ANALYSES_DEBUG", "1")
            .output()
            .unwrap();
        let o = String::from_utf8_lossy(&r.stdout);
        if r.status.success() && !o.contains("Traceback") && !o.contains("Error:") {
            continue;
        }
        // Run it again with the events it failed on printed.
        let script =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/lttng_analyses_last_events.py");
        let diag = Command::new("/usr/bin/python3")
            .arg(script)
            .arg(tool)
            .arg(trace)
            .arg("--no-progress")
            .output()
            .map(|d| String::from_utf8_lossy(&d.stdout).into_owned())
            .unwrap_or_else(|e| format!("(diagnosis did not run: {e})"));
        return Some(format!(
            "{tool} failed: {o}\n{}\nagain, with the events it failed on:\n{diag}",
            String::from_utf8_lossy(&r.stderr)
        ));
    }
    None
}

fn assert_no_stale_instances() {
    for e in std::fs::read_dir(Path::new(TRACEFS).join("instances")).unwrap() {
        let name = e.unwrap().file_name().to_string_lossy().into_owned();
        if let Some(pid) = name.strip_prefix("tracekit-") {
            assert!(
                Path::new("/proc").join(pid).exists(),
                "instance {name} left behind by a finished recorder"
            );
        }
    }
}

fn signal(child: &Child, sig: &str) {
    let st = Command::new("kill")
        .args([sig, &child.id().to_string()])
        .status()
        .unwrap();
    assert!(st.success());
}

fn wait_for(p: &Path, secs: u64) {
    for _ in 0..secs * 20 {
        if p.exists() {
            return;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!("{} did not appear", p.display());
}

#[test]
fn sigint_stops_cleanly() {
    if !enabled("sigint_stops_cleanly") {
        return;
    }
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("kernel");
    let child = tracekit()
        .arg("record")
        .arg("-o")
        .arg(&out)
        .args(["--events", "sched,syscalls", "-q"])
        .spawn()
        .unwrap();
    let inst = instance_of(child.id());
    wait_for(&inst, 20);
    std::thread::sleep(Duration::from_millis(1000));
    signal(&child, "-INT");
    let o = child.wait_with_output().unwrap();
    assert!(
        o.status.success(),
        "exit status after SIGINT: {:?}",
        o.status
    );
    assert!(!inst.exists(), "instance not removed after SIGINT");
    let (counts, errors, _) = read_trace(&out);
    assert_eq!(errors, 0);
    assert!(counts.get("sched_switch").copied().unwrap_or(0) > 0);
}

#[test]
fn kill_9_leaves_a_marked_partial_trace() {
    if !enabled("kill_9_leaves_a_marked_partial_trace") {
        return;
    }
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("kernel");
    let mut child = tracekit()
        .arg("record")
        .arg("-o")
        .arg(&out)
        .args(["-q", "--events", "sched"])
        .spawn()
        .unwrap();
    let inst = instance_of(child.id());
    wait_for(&inst, 20);
    // More than the recorder's 1 s packet flush period.
    std::thread::sleep(Duration::from_millis(2500));
    child.kill().unwrap();
    let _ = child.wait();
    assert!(!out.exists(), "a killed recording must not look complete");
    let partial = tmp.path().join(".kernel.partial");
    assert!(
        partial.join("metadata").is_file(),
        "the killed recording should be left as .kernel.partial"
    );
    // What was flushed before the kill is complete packets: readable, without error, with
    // the statedump and scheduling events of the first seconds.
    let traces = ctf::open_all(&[&partial]).unwrap();
    let mut m = ctf::Merger::new(&traces);
    let (mut events, mut switches) = (0, 0);
    while let Some(msg) = m.next() {
        if *msg == ctf::Message::Event {
            events += 1;
            if m.event().unwrap().name() == "sched_switch" {
                switches += 1;
            }
        }
    }
    assert!(m.errors.is_empty(), "{:?}", m.errors);
    assert!(
        events > 0 && switches > 0,
        "nothing flushed before kill -9: {events} events, {switches} sched_switch"
    );
    // A SIGKILLed recorder cannot remove its instance itself: its watchdog does, at once.
    let t0 = std::time::Instant::now();
    while inst.exists() && t0.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(
        !inst.exists(),
        "the instance of a recorder killed with SIGKILL is still there after 10 s"
    );
}

/// An instance left by a dead recorder whose pid another process now has (pids wrap around:
/// 32768 here) is removed by the next recording, and does not disturb it: the stale instance
/// traces what a forgotten `--pid` recorder of the new process would (its own PID list and
/// children followed), and the new recording, of every process, still holds every system
/// call of a workload and the switches into it.
#[test]
fn stale_instance_of_a_reused_pid_is_removed() {
    if !enabled("stale_instance_of_a_reused_pid_is_removed") {
        return;
    }
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let tmp = tempfile::tempdir().unwrap();
    // A process with the pid a dead recorder had: its instance was made before it started.
    let mut squatter = Command::new("sleep").arg("30").spawn().unwrap();
    let stale = instance_of(squatter.id());
    std::fs::create_dir(&stale).unwrap();
    let w = |rel: &str, v: &str| std::fs::write(stale.join(rel), v).unwrap();
    // A streaming recorder's (a flight recorder's, overwriting, is kept for its recovery).
    w("options/overwrite", "0");
    w("set_event_pid", &squatter.id().to_string());
    w("options/event-fork", "1");
    w("events/sched/sched_switch/enable", "1");
    w("events/raw_syscalls/enable", "1");
    w("tracing_on", "1");
    let st = Command::new("touch")
        .args(["-d", "2001-01-01"])
        .arg(&stale)
        .status()
        .unwrap();
    assert!(st.success());
    let out = tmp.path().join("kernel");
    let mut rec = tracekit()
        .arg("record")
        .arg("-o")
        .arg(&out)
        .args(["-q", "--events", "sched_switch,syscalls"])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    testkit::root::wait_tracing(rec.id());
    let removed = !stale.exists();
    // 200 opens of a file by one process.
    let mut work = Command::new("sh")
        .args([
            "-c",
            "i=0; while [ $i -lt 200 ]; do read -r l < /etc/hostname; i=$((i+1)); done",
        ])
        .spawn()
        .unwrap();
    let work_tid = work.id() as i64;
    assert!(work.wait().unwrap().success());
    std::thread::sleep(Duration::from_millis(300));
    signal(&rec, "-INT");
    let st = rec.wait().unwrap();
    let _ = squatter.kill();
    let _ = squatter.wait();
    if stale.exists() {
        let _ = std::fs::write(stale.join("tracing_on"), "0");
        let _ = std::fs::write(stale.join("events/enable"), "0");
        let _ = std::fs::remove_dir(&stale);
    }
    assert!(st.success());
    assert!(removed, "the stale instance of the reused pid was kept");
    // The workload's opens, attributed (by the trace's own switches) to the workload.
    let traces = ctf::open_all(&[&out]).unwrap();
    let mut opens_by_sh = 0;
    let mut discarded = 0;
    for t in &traces {
        for mut r in t.readers() {
            let mut current = None;
            while let Some(m) = r.next() {
                match m.unwrap() {
                    ctf::Message::Event => {
                        let ev = r.event();
                        match ev.name() {
                            "sched_switch" => {
                                current = ev.field("next_tid").and_then(|v| v.as_i64());
                            }
                            "syscall_entry_openat" if current == Some(work_tid) => {
                                let name = ev.field("filename").and_then(|v| v.as_str());
                                // Without the eBPF helper file names are empty.
                                if name.is_none_or(|n| n == "/etc/hostname" || n.is_empty()) {
                                    opens_by_sh += 1;
                                }
                            }
                            _ => {}
                        }
                    }
                    ctf::Message::DiscardedEvents { count, .. } => discarded += count,
                    _ => {}
                }
            }
        }
    }
    assert_eq!(discarded, 0, "the recording lost events");
    assert!(
        opens_by_sh >= 200,
        "{opens_by_sh} opens of /etc/hostname attributed to the workload (200 made)"
    );
}

#[test]
fn flight_recorder_snapshot_on_sigusr1() {
    if !enabled("flight_recorder_snapshot_on_sigusr1") {
        return;
    }
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("fr");
    let child = tracekit()
        .arg("record")
        .arg("-o")
        .arg(&out)
        .args(["-q", "--flight-recorder", "4M", "--events", "sched,irq"])
        .spawn()
        .unwrap();
    let inst = instance_of(child.id());
    wait_for(&inst, 20);
    std::thread::sleep(Duration::from_millis(1000));
    signal(&child, "-USR1");
    let snap = out.join("snapshot-1/kernel");
    wait_for(&snap, 20);
    signal(&child, "-TERM");
    let o = child.wait_with_output().unwrap();
    assert!(o.status.success());
    assert!(!inst.exists());
    let (counts, errors, _) = read_trace(&snap);
    assert_eq!(errors, 0);
    assert!(
        counts.get("sched_switch").copied().unwrap_or(0) > 0,
        "{counts:?}"
    );
    assert!(counts.contains_key("lttng_statedump_end"));
}

/// Each CPU's switches chain (the task a switch puts on a CPU is the one its next switch takes
/// off), switches out of the idle task included: some kernels do not trace those, and the
/// recorder rebuilds them from the next record of the CPU (issue #30).
#[test]
fn every_cpus_switches_chain() {
    if !enabled("every_cpus_switches_chain") {
        return;
    }
    require_tool(
        "every_cpus_switches_chain",
        "taskset",
        "apt-get install util-linux",
    );
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("kernel");
    let rec = tracekit()
        .arg("record")
        .arg("-o")
        .arg(&out)
        .args([
            "-q",
            "--events",
            "sched_switch,syscalls",
            "--duration",
            "1.5",
        ])
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(500));
    // A task that sleeps on the last CPU: that CPU idles between its runs.
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let st = Command::new("taskset")
        .args(["-c", &(cpus - 1).to_string(), "sh", "-c"])
        .arg("for i in 1 2 3 4 5 6 7 8; do sleep 0.02; done")
        .status()
        .unwrap();
    assert!(st.success());
    let o = rec.wait_with_output().unwrap();
    assert!(o.status.success());
    let traces = ctf::open_all(&[&out]).unwrap();
    let (mut switches, mut from_idle, mut breaks) = (0, 0, Vec::new());
    for mut r in traces[0].readers() {
        let mut on_cpu: Option<i64> = None;
        while let Some(m) = r.next() {
            let Ok(ctf::Message::Event) = m else { continue };
            let ev = r.event();
            if ev.name() != "sched_switch" {
                continue;
            }
            let tid = |f: &str| ev.field(f).and_then(|v| v.as_i64()).unwrap();
            let (prev, next) = (tid("prev_tid"), tid("next_tid"));
            switches += 1;
            from_idle += u64::from(prev == 0);
            if on_cpu.is_some_and(|t| t != prev) {
                breaks.push((on_cpu, prev, next, r.event_time_ns()));
            }
            on_cpu = Some(next);
        }
    }
    assert!(switches > 20, "{switches} switches");
    if from_idle == 0 {
        // A machine busy on every CPU never idles: the chain is still checked.
        eprintln!("every_cpus_switches_chain: no switch out of the idle task in {switches}");
    }
    assert!(
        breaks.is_empty(),
        "{} of {switches} switches take off a CPU a task no switch put there: {:?}",
        breaks.len(),
        &breaks[..breaks.len().min(5)]
    );
}

#[test]
fn clock_offset_shifts_timestamps() {
    if !enabled("clock_offset_shifts_timestamps") {
        return;
    }
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("kernel");
    let offset: i64 = 3_600_000_000_000;
    let before = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as i64;
    let r = tracekit()
        .arg("record")
        .arg("-o")
        .arg(&out)
        .args(["-q", "--events", "sched", "--duration", "0.5"])
        .arg(format!("--clock-offset-ns={offset}"))
        .status()
        .unwrap();
    assert!(r.success());
    let traces = ctf::open_all(&[&out]).unwrap();
    let mut r = traces[0].readers().remove(0);
    let mut first = None;
    while let Some(m) = r.next() {
        if let Ok(ctf::Message::Event) = m {
            first = r.event_time_ns();
            break;
        }
    }
    let t = first.expect("an event");
    let shift = t - before;
    assert!(
        (offset - 5_000_000_000..offset + 5_000_000_000).contains(&shift),
        "first event {t} vs start {before}: shift {shift}"
    );
}

#[test]
fn clear_errors() {
    if !enabled("clear_errors") {
        return;
    }
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let tmp = tempfile::tempdir().unwrap();
    let o = tracekit()
        .arg("record")
        .arg("-o")
        .arg(tmp.path().join("k"))
        .args(["--events", "no_such_event", "--duration", "1"])
        .output()
        .unwrap();
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("unknown event"));
    // An existing output directory is refused before anything is recorded.
    let o = tracekit()
        .arg("record")
        .arg("-o")
        .arg(tmp.path())
        .args(["--duration", "1"])
        .output()
        .unwrap();
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("exists"));
    assert_no_stale_instances();
}

/// Two network namespaces joined by a veth pair ("two hosts" on this kernel), removed (with
/// the veth pair and the processes started in them) on drop, also when the test fails.
struct TwoHosts {
    ns: [String; 2],
    dev: [String; 2],
    addr: [String; 2],
    children: Vec<Child>,
}

impl TwoHosts {
    fn new() -> Self {
        let id = std::process::id();
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .subsec_nanos();
        let tag = format!("{}{}", id % 100_000, nanos % 1000);
        let net = id % 250 + 1;
        let h = TwoHosts {
            ns: [format!("tk_a{tag}"), format!("tk_b{tag}")],
            dev: [format!("tkva{tag}"), format!("tkvb{tag}")],
            addr: [format!("10.200.{net}.1"), format!("10.200.{net}.2")],
            children: Vec::new(),
        };
        let run = |args: &[&str]| {
            let o = Command::new("ip").args(args).output().expect("run ip");
            assert!(
                o.status.success(),
                "ip {}: {}",
                args.join(" "),
                String::from_utf8_lossy(&o.stderr)
            );
        };
        run(&["netns", "add", &h.ns[0]]);
        run(&["netns", "add", &h.ns[1]]);
        run(&[
            "link", "add", &h.dev[0], "type", "veth", "peer", "name", &h.dev[1],
        ]);
        for i in 0..2 {
            run(&["link", "set", &h.dev[i], "netns", &h.ns[i]]);
            run(&[
                "-n",
                &h.ns[i],
                "addr",
                "add",
                &format!("{}/24", h.addr[i]),
                "dev",
                &h.dev[i],
            ]);
            run(&["-n", &h.ns[i], "link", "set", &h.dev[i], "up"]);
            run(&["-n", &h.ns[i], "link", "set", "lo", "up"]);
        }
        h
    }

    /// A command run inside namespace `i`.
    fn exec(&self, i: usize, prog: &str) -> Command {
        let mut c = Command::new("ip");
        c.args(["netns", "exec", &self.ns[i], prog]);
        c
    }
}

impl Drop for TwoHosts {
    fn drop(&mut self) {
        for c in &mut self.children {
            let _ = c.kill();
            let _ = c.wait();
        }
        // Deleting a namespace deletes the veth end in it, and so the pair.
        for ns in &self.ns {
            let _ = Command::new("ip").args(["netns", "del", ns]).status();
        }
    }
}

fn parse_f64(v: &serde_json::Value) -> f64 {
    v.as_str()
        .and_then(|s| s.parse().ok())
        .or_else(|| v.as_f64())
        .unwrap_or_else(|| panic!("not a number: {v}"))
}

/// Two simulated hosts on one kernel: each recorded by its own `tracekit record` (filtered to
/// its veth end, with its own clock: B is one hour ahead); HTTP requests from A to B. The
/// eBPF helper adds the TCP headers, `tracekit sync` must find the hour back and `tracekit
/// critpath` must follow the client into the server on the other host.
#[test]
fn two_hosts_sync_and_critpath() {
    if !testkit::root::root_with_feature_or_skip(
        "two_hosts_sync_and_critpath",
        "bpf",
        cfg!(feature = "bpf"),
    ) {
        return;
    }
    for tool in ["ip", "python3"] {
        require_tool(
            "two_hosts_sync_and_critpath",
            tool,
            "apt-get install iproute2 python3",
        );
    }
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let tmp = tempfile::tempdir().unwrap();
    let mut h = TwoHosts::new();
    let port = "18090";
    let server = h
        .exec(1, "python3")
        .args([
            "-m",
            "http.server",
            port,
            "--bind",
            &h.addr[1],
            "--directory",
        ])
        .arg(tmp.path())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start the server");
    h.children.push(server);
    // Wait for LISTEN (a connection before it gets a RST).
    let listening = (0..100).any(|_| {
        let o = h.exec(1, "ss").args(["-Hltn"]).output().expect("run ss");
        if String::from_utf8_lossy(&o.stdout).contains(&format!(":{port}")) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(100));
        false
    });
    assert!(listening, "the server in {} never listened", h.ns[1]);

    let offset: i64 = 3_600_000_000_000;
    let dirs = [tmp.path().join("a/kernel"), tmp.path().join("b/kernel")];
    let mut recorders = Vec::new();
    for i in 0..2 {
        let c = tracekit()
            .arg("record")
            .arg("-o")
            .arg(&dirs[i])
            .args(["--events", "sched,syscalls,net,irq", "--netdev", &h.dev[i]])
            .args(["--hostname", ["hosta", "hostb"][i]])
            .arg(format!("--clock-offset-ns={}", [0, offset][i]))
            .args(["--duration", "5"])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        recorders.push(c);
    }
    std::thread::sleep(Duration::from_millis(1500));
    let url = format!("http://{}:{port}/", h.addr[1]);
    let client = h
        .exec(0, "python3")
        .args([
            "-c",
            "import os, sys, urllib.request\n\
             print(os.getpid(), flush=True)\n\
             for _ in range(50): urllib.request.urlopen(sys.argv[1], timeout=5).read()\n",
            &url,
        ])
        .output()
        .expect("run the client");
    assert!(
        client.status.success(),
        "client: {}",
        String::from_utf8_lossy(&client.stderr)
    );
    let tid: i32 = String::from_utf8_lossy(&client.stdout)
        .trim()
        .parse()
        .expect("client tid");
    let mid = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as f64;
    for (i, c) in recorders.into_iter().enumerate() {
        let o = c.wait_with_output().unwrap();
        let out = String::from_utf8_lossy(&o.stdout);
        let err = String::from_utf8_lossy(&o.stderr);
        eprintln!("recorder {i}: {out}{err}");
        assert!(o.status.success(), "recorder {i} failed: {err}");
        assert!(
            out.contains("network headers (eBPF)") && !err.contains("unavailable"),
            "recorder {i}: no eBPF headers: {err}"
        );
    }
    drop(h);

    // Every net event of the veth carries its IPv4/TCP header.
    for d in &dirs {
        let (counts, errors, _) = read_trace(d);
        assert_eq!(errors, 0, "{}", d.display());
        let n = counts.get("net_dev_queue").copied().unwrap_or(0);
        assert!(n >= 100, "{}: {counts:?}", d.display());
    }

    let o = tracekit()
        .args(["sync", "--json"])
        .arg(tmp.path())
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "sync: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).expect("sync json");
    let matches = j["matches"].as_u64().unwrap_or(0);
    assert!(matches >= 300, "sync matched only {matches} packets: {j}");
    let traces = j["traces"].as_array().expect("traces");
    assert_eq!(traces.len(), 2);
    // `t_ref = slope·t + offset`; returns `t_ref - t` (computed without adding the large
    // `t`, to keep the f64 precision).
    let shift = |t: &serde_json::Value, x: f64| {
        let s = parse_f64(&t["slope"]);
        let b = parse_f64(&t["offset"]);
        (s - 1.0) * x + b
    };
    let is_a = |t: &serde_json::Value| t["path"].as_str().unwrap_or("").contains("/a/");
    let ta = traces.iter().find(|t| is_a(t)).unwrap();
    let tb = traces.iter().find(|t| !is_a(t)).unwrap();
    // t_ref = conv_a(t_a) = conv_b(t_b), with t_b = t_a + offset (the truth).
    for dt in [-2e9, -1e9, 0.0] {
        let x = mid + dt;
        let err = if tb["reference"].as_bool() == Some(true) {
            // A's time x is B's x + offset.
            shift(ta, x) - offset as f64
        } else {
            // B's time x + offset is A's x.
            shift(tb, x + offset as f64) + offset as f64
        };
        eprintln!("sync error at {dt} ns from the end of the traffic: {err:.0} ns");
        assert!(
            err.abs() < 50_000.0,
            "sync: offset off by {err} ns (more than 50 µs): {j}"
        );
    }

    let o = tracekit()
        .args(["critpath", "--sync", "--json", "--host", "hosta", "--tid"])
        .arg(tid.to_string())
        .arg(tmp.path())
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "critpath: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).expect("critpath json");
    let path = j["path"].as_array().expect("path");
    let on_b = path.iter().filter(|s| s["host"] == "hostb").count();
    let on_a = path.iter().filter(|s| s["host"] == "hosta").count();
    eprintln!(
        "critical path: {} segments, {on_a} on hosta, {on_b} on hostb",
        path.len()
    );
    assert!(
        on_a > 0 && on_b > 0,
        "the critical path does not cross the hosts"
    );
    assert_no_stale_instances();
}

/// The longest `clock_nanosleep` (ns) of a thread named `comm` in a trace: entries and exits
/// are paired per thread, the thread of a CPU being the last `sched_switch`'s next_tid.
fn longest_sleep_of(dir: &Path, comm: &str) -> Option<i64> {
    let traces = ctf::open_all(&[dir]).expect("open the snapshot");
    let mut entries: BTreeMap<i64, Vec<i64>> = BTreeMap::new();
    let mut exits: BTreeMap<i64, Vec<i64>> = BTreeMap::new();
    for t in &traces {
        for mut r in t.readers() {
            let mut current: Option<(i64, String)> = None;
            while let Some(m) = r.next() {
                let Ok(ctf::Message::Event) = m else {
                    assert!(m.is_ok(), "decoding error in {}: {m:?}", dir.display());
                    continue;
                };
                let ev = r.event();
                let ts = r.event_time_ns().unwrap_or(0);
                match ev.name() {
                    "sched_switch" => {
                        let tid = ev.field("next_tid").and_then(|v| v.as_i64());
                        let c = ev.field("next_comm").and_then(|v| v.as_str());
                        current = tid.zip(c.map(|c| c.into_owned()));
                    }
                    "syscall_entry_clock_nanosleep" | "syscall_exit_clock_nanosleep" => {
                        let Some((tid, c)) = &current else { continue };
                        if c != comm {
                            continue;
                        }
                        let m = if ev.name().starts_with("syscall_entry") {
                            &mut entries
                        } else {
                            &mut exits
                        };
                        m.entry(*tid).or_default().push(ts);
                    }
                    _ => {}
                }
            }
        }
    }
    let mut best = None;
    for (tid, ins) in &entries {
        for &a in ins {
            let b = exits
                .get(tid)
                .and_then(|v| v.iter().copied().filter(|&b| b >= a).min());
            if let Some(b) = b {
                best = best.max(Some(b - a));
            }
        }
    }
    best
}

#[test]
fn flight_recorder_snapshot_on_latency_rule() {
    if !enabled("flight_recorder_snapshot_on_latency_rule") {
        return;
    }
    require_tool(
        "flight_recorder_snapshot_on_latency_rule",
        "python3",
        "apt-get install python3",
    );
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("fr");
    let child = tracekit()
        .arg("record")
        .arg("-o")
        .arg(&out)
        .args(["--flight-recorder", "16M", "--snapshot-on", "syscall>20ms"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let inst = instance_of(child.id());
    wait_for(&inst, 20);
    std::thread::sleep(Duration::from_millis(1000));
    let st = Command::new("python3")
        .args(["-c", "import time; time.sleep(0.05)"])
        .status()
        .unwrap();
    assert!(st.success());
    // Other processes may fire the rule too (and the debounce delays a snapshot by up to
    // 1 s): look for the snapshot holding the python3 sleep.
    // Each snapshot is read until a later one exists: on a busy machine the rule fires every
    // second, and reading every snapshot again on each round took minutes in a debug build.
    let mut found = None;
    let mut next = 1;
    for _ in 0..100 {
        std::thread::sleep(Duration::from_millis(100));
        let first = next;
        for n in first..50 {
            let snap = out.join(format!("snapshot-{n}/kernel"));
            if !snap.exists() {
                break;
            }
            if let Some(ns) = longest_sleep_of(&snap, "python3") {
                if ns >= 50_000_000 {
                    found = Some((snap, ns));
                }
            }
            // Complete once a later one exists: not read again.
            if out.join(format!("snapshot-{}", n + 1)).exists() {
                next = n + 1;
            }
        }
        if found.is_some() || next >= 49 {
            break;
        }
    }
    signal(&child, "-TERM");
    let o = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    eprintln!("{}\n{stderr}", String::from_utf8_lossy(&o.stdout));
    assert!(o.status.success(), "{stderr}");
    assert!(!inst.exists());
    assert!(
        stderr.contains("rule syscall>20ms fired: syscall latency"),
        "{stderr}"
    );
    // The snapshot holding the python3 sleep when one does; on a busy machine another slow
    // system call may fire first and the sleep fall out of the window, so then any
    // rule-triggered snapshot is checked instead.
    let snap = match found {
        Some((snap, ns)) => {
            assert!(ns < 2_000_000_000, "{ns}");
            snap
        }
        None => {
            eprintln!("no snapshot holds the python3 sleep: checking the first one");
            out.join("snapshot-1/kernel")
        }
    };
    assert!(
        stderr.contains("rule syscall>20ms fired: syscall latency"),
        "{stderr}"
    );
    let (counts, errors, _) = read_trace(&snap);
    assert_eq!(errors, 0);
    assert!(counts.contains_key("lttng_statedump_end"), "{counts:?}");
}

/// The `--mi` tables of an analysis: (class name or `inherit`, rows).
fn mi_tables(j: &serde_json::Value) -> Vec<(String, Vec<Vec<serde_json::Value>>)> {
    j["results"]
        .as_array()
        .unwrap_or_else(|| panic!("no results in {j}"))
        .iter()
        .map(|t| {
            let class = match &t["class"] {
                serde_json::Value::String(s) => s.clone(),
                c => c["inherit"].as_str().unwrap_or_default().to_string(),
            };
            let rows = t["data"]
                .as_array()
                .unwrap()
                .iter()
                .map(|r| r.as_array().unwrap().clone())
                .collect();
            (class, rows)
        })
        .collect()
}

fn mi_table(j: &serde_json::Value, class: &str, who: &str) -> Vec<Vec<serde_json::Value>> {
    mi_tables(j)
        .into_iter()
        .find(|(c, _)| c == class)
        .unwrap_or_else(|| panic!("{who}: no `{class}` table in {j}"))
        .1
}

/// Interrupt counts by IRQ number in an irqstats LAMI document's `hard-stats` table (none
/// when it has no such table: both tools leave out a table without rows).
fn hard_irqs(j: &serde_json::Value) -> BTreeMap<i64, i64> {
    mi_tables(j)
        .into_iter()
        .filter(|(c, _)| c == "hard-stats")
        .flat_map(|(_, rows)| rows)
        .map(|r| {
            (
                r[0]["nr"].as_i64().unwrap(),
                r[1]["value"].as_i64().unwrap(),
            )
        })
        .collect()
}

/// LAMI documents by analysis name.
type Lami<'a> = BTreeMap<&'a str, serde_json::Value>;

/// Records under load into `out` and runs `analyses` there with tracekit (checked) and, when
/// it is installed, with lttng-analyses: both tools' LAMI documents by analysis.
fn record_and_analyse<'a>(out: &Path, analyses: &[&'a str]) -> (Lami<'a>, Option<Lami<'a>>) {
    // Synchronous writes for a disk's hard IRQs, which a quiet machine may not have in 2 s.
    let dir = out.parent().unwrap();
    std::fs::create_dir_all(dir).unwrap();
    let mut disk = Command::new("sh")
        .arg("-c")
        .arg(
            "for i in $(seq 25); do dd if=/dev/zero of=\"$1/disk\" bs=4k count=4 oflag=dsync \
             2>/dev/null; sleep 0.1; done",
        )
        .arg("sh")
        .arg(dir)
        .spawn()
        .unwrap();
    let rec = record_under_load(out, &["-q", "--duration", "2"]);
    let _ = disk.wait();
    assert!(
        rec.status.success(),
        "tracekit record failed: {}",
        String::from_utf8_lossy(&rec.stderr)
    );
    let mut ours = BTreeMap::new();
    for &a in analyses {
        let o = tracekit()
            .args(["analyze", a, "--mi"])
            .arg(out)
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "tracekit analyze {a} --mi failed: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let j: serde_json::Value = serde_json::from_slice(&o.stdout)
            .unwrap_or_else(|e| panic!("tracekit analyze {a} --mi: bad JSON: {e}"));
        assert!(!mi_tables(&j).is_empty(), "{a}: no tables");
        ours.insert(a, j);
    }
    let missing: Vec<String> = analyses
        .iter()
        .map(|a| format!("lttng-{a}-mi"))
        .filter(|t| !have(t))
        .collect();
    if !missing.is_empty() {
        eprintln!(
            "analyses_agree_with_lttng_analyses: {} not installed: the lttng-analyses side is \
             skipped (CI installs lttng-analyses)",
            missing.join(", ")
        );
        return (ours, None);
    }
    let mut theirs = BTreeMap::new();
    for &a in analyses {
        let o = Command::new(format!("lttng-{a}-mi"))
            .arg(out)
            .output()
            .unwrap();
        let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap_or_else(|e| {
            panic!(
                "lttng-{a}-mi: bad JSON ({e}): {}\n{}",
                String::from_utf8_lossy(&o.stdout),
                String::from_utf8_lossy(&o.stderr)
            )
        });
        assert!(
            o.status.success() && j.get("error-message").is_none(),
            "lttng-{a}-mi failed: {j}\n{}",
            String::from_utf8_lossy(&o.stderr)
        );
        theirs.insert(a, j);
    }
    (ours, Some(theirs))
}

#[test]
fn analyses_agree_with_lttng_analyses() {
    if !enabled("analyses_agree_with_lttng_analyses") {
        return;
    }
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let tmp = tempfile::tempdir().unwrap();
    let analyses = ["cputop", "syscallstats", "irqstats", "schedtop"];
    let mut attempt = 0;
    let (ours, theirs) = loop {
        attempt += 1;
        // lttng-analyses wants the trace under a path component ending in `kernel`.
        let out = tmp.path().join(format!("run{attempt}")).join("kernel");
        let (ours, Some(theirs)) = record_and_analyse(&out, &analyses) else {
            return;
        };
        // lttng-analyses has once reported nothing at all (`{"results":[]}`, lttng-irqstats-mi,
        // in a CI run; not reproduced here in three runs) for a live recording on which it ran
        // without an error: there is then nothing to compare. Record once more, as for its
        // failures in `record_with_duration_is_readable_everywhere`; twice in a row fails.
        // A recording without a hard IRQ (a quiet machine: this kernel's timer interrupts are
        // not `irq_handler_entry`) is the exception: lttng-analyses, which ignores the
        // softirqs, then rightly has nothing for irqstats.
        let empty: Vec<&str> = analyses
            .iter()
            .copied()
            .filter(|a| mi_tables(&theirs[a]).is_empty())
            .filter(|&a| a != "irqstats" || !hard_irqs(&ours[a]).is_empty())
            .collect();
        if empty.is_empty() {
            break (ours, theirs);
        }
        let what = format!(
            "lttng-analyses gave no tables for {empty:?} on {}; tracekit gave {}",
            out.display(),
            empty
                .iter()
                .map(|a| format!("{a}: {}", ours[a]))
                .collect::<Vec<_>>()
                .join("\n")
        );
        assert!(attempt < 2, "on two recordings in a row: {what}");
        eprintln!("{what}\nrecording once more");
    };

    // cputop: per-thread usage of lttng-analyses's top threads, within 0.1 %.
    let usage = |rows: &[Vec<serde_json::Value>]| -> BTreeMap<i64, f64> {
        rows.iter()
            .map(|r| (r[0]["tid"].as_i64().unwrap(), parse_f64(&r[3]["value"])))
            .collect()
    };
    let t_cpu = usage(&mi_table(
        &theirs["cputop"],
        "per-process",
        "lttng-cputop-mi",
    ));
    let o_cpu = usage(&mi_table(&ours["cputop"], "per-process", "tracekit cputop"));
    assert!(!t_cpu.is_empty());
    let o_min = o_cpu.values().copied().fold(f64::INFINITY, f64::min);
    // lttng-analyses lists the idle task (tid 0, the per-CPU swappers merged) as a process when
    // the recording's statedump names it; tracekit never counts idle time as a thread's usage.
    for (tid, t) in t_cpu.iter().filter(|(tid, _)| **tid != 0) {
        match o_cpu.get(tid) {
            Some(o) => assert!(
                (o - t).abs() <= 0.001,
                "cputop tid {tid}: tracekit {o} vs lttng-analyses {t}\nours {o_cpu:?}\ntheirs {t_cpu:?}"
            ),
            // Not in our top list: a tie at the bottom.
            None => assert!(
                *t <= o_min + 0.001,
                "cputop tid {tid} ({t}) missing from tracekit's top threads {o_cpu:?}"
            ),
        }
    }

    // syscallstats: calls per thread (total table) and per system call name (summed over the
    // per-thread tables). Process names may differ (DIFFERENCES.md), so threads go by tid.
    let per_tid = |j: &serde_json::Value, who: &str| -> BTreeMap<i64, i64> {
        mi_table(j, "total", who)
            .iter()
            .map(|r| {
                (
                    r[0]["tid"].as_i64().unwrap(),
                    r[1]["value"].as_i64().unwrap(),
                )
            })
            .collect()
    };
    let per_name = |j: &serde_json::Value| -> BTreeMap<String, i64> {
        let mut m = BTreeMap::new();
        for (class, rows) in mi_tables(j) {
            if class != "per-tid" {
                continue;
            }
            for r in rows {
                *m.entry(r[0]["name"].as_str().unwrap().to_string())
                    .or_default() += r[1]["value"].as_i64().unwrap();
            }
        }
        m
    };
    let t_tid = per_tid(&theirs["syscallstats"], "lttng-syscallstats-mi");
    let o_tid = per_tid(&ours["syscallstats"], "tracekit syscallstats");
    assert!(!t_tid.is_empty());
    assert_eq!(
        o_tid, t_tid,
        "system calls per tid (tracekit, lttng-analyses)"
    );
    let t_sys = per_name(&theirs["syscallstats"]);
    let o_sys = per_name(&ours["syscallstats"]);
    assert!(!t_sys.is_empty());
    assert_eq!(
        o_sys, t_sys,
        "system calls per name (tracekit, lttng-analyses)"
    );

    // irqstats: hard IRQ counts (lttng-analyses ignores the irq_softirq_* events).
    let t_irq = hard_irqs(&theirs["irqstats"]);
    let o_irq = hard_irqs(&ours["irqstats"]);
    assert_eq!(o_irq, t_irq, "hard IRQ counts (tracekit, lttng-analyses)");

    // schedtop: the same top wakeup latencies (wakeup, switch, latency, tid).
    let lat = |rows: &[Vec<serde_json::Value>]| -> Vec<(i64, i64, i64, i64)> {
        let mut v: Vec<_> = rows
            .iter()
            .map(|r| {
                (
                    r[0]["value"].as_i64().unwrap(),
                    r[1]["value"].as_i64().unwrap(),
                    r[2]["value"].as_i64().unwrap(),
                    r[5]["tid"].as_i64().unwrap(),
                )
            })
            .collect();
        v.sort();
        v
    };
    let t_sched = lat(&mi_table(&theirs["schedtop"], "top", "lttng-schedtop-mi"));
    let o_sched = lat(&mi_table(&ours["schedtop"], "top", "tracekit schedtop"));
    assert!(!t_sched.is_empty());
    assert_eq!(o_sched, t_sched, "schedtop rows (tracekit, lttng-analyses)");
    eprintln!(
        "agree: {} cputop threads, {} system calls, {} IRQs, {} schedtop rows",
        t_cpu.len(),
        t_sys.len(),
        t_irq.len(),
        t_sched.len()
    );
}

/// The two hosts of [`two_hosts_sync_and_critpath`], each recorder now inside its host's
/// network namespace with its own host name (a UTS namespace), streaming its trace live
/// (`record --url`, 200 ms live timer) to one `lttng-relayd` running on host A; then `sync`
/// and `critpath` across the traces the relay wrote, and each of them prints as the
/// recorder's local copy does.
#[test]
fn two_hosts_streamed_to_one_relayd() {
    if !testkit::root::root_with_feature_or_skip(
        "two_hosts_streamed_to_one_relayd",
        "bpf",
        cfg!(feature = "bpf"),
    ) {
        return;
    }
    for tool in ["ip", "python3", "lttng-relayd", "nsenter", "unshare"] {
        require_tool(
            "two_hosts_streamed_to_one_relayd",
            tool,
            "apt-get install iproute2 python3 lttng-tools util-linux",
        );
    }
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let start = std::time::Instant::now();
    let tmp = tempfile::tempdir().unwrap();
    let mut h = TwoHosts::new();
    let relayd_out = tmp.path().join("relayd");
    let relayd = h
        .exec(0, "lttng-relayd")
        .arg("-o")
        .arg(&relayd_out)
        .args([
            "-C",
            "tcp://0.0.0.0:15342",
            "-D",
            "tcp://0.0.0.0:15343",
            "-L",
            "tcp://127.0.0.1:15344",
        ])
        .env("LTTNG_HOME", tmp.path())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start lttng-relayd");
    h.children.push(relayd);
    let port = "18091";
    let server = h
        .exec(1, "python3")
        .args([
            "-m",
            "http.server",
            port,
            "--bind",
            &h.addr[1],
            "--directory",
        ])
        .arg(tmp.path())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start the server");
    h.children.push(server);
    let listening = |ns: usize, port: &str| {
        (0..100).any(|_| {
            let o = h.exec(ns, "ss").args(["-Hltn"]).output().expect("run ss");
            if String::from_utf8_lossy(&o.stdout).contains(&format!(":{port}")) {
                return true;
            }
            std::thread::sleep(Duration::from_millis(100));
            false
        })
    };
    assert!(listening(1, port), "the server never listened");
    assert!(listening(0, "15342"), "lttng-relayd never listened");

    let offset: i64 = 3_600_000_000_000;
    let local = [tmp.path().join("a/kernel"), tmp.path().join("b/kernel")];
    let mut recorders = Vec::new();
    for i in 0..2 {
        let host = ["hosta", "hostb"][i];
        let url = format!("net://{}:15342:15343", h.addr[0]);
        // nsenter, not `ip netns exec`: the recorder keeps this mount namespace's /sys (and
        // so tracefs).
        let script = format!(
            "hostname {host} && exec nsenter --net=/run/netns/{} \"$TK\" record -o \"$OUT\" \
             --events sched,syscalls,net,irq --netdev {} --clock-offset-ns={} --duration 5 \
             --url {url} --session two --live-timer 200000",
            h.ns[i],
            h.dev[i],
            [0, offset][i]
        );
        let c = Command::new("unshare")
            .args(["--uts", "sh", "-c", &script])
            .env("TK", env!("CARGO_BIN_EXE_tracekit"))
            .env("OUT", &local[i])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        recorders.push(c);
    }
    std::thread::sleep(Duration::from_millis(1500));
    // Host A's session read live (on host A: the live port listens on its loopback).
    let live = std::fs::File::create(tmp.path().join("live_a.txt")).unwrap();
    let reader = h
        .exec(0, env!("CARGO_BIN_EXE_tracekit"))
        .args(["print", "net://127.0.0.1:15344/host/hosta/two"])
        .stdout(live)
        .stderr(Stdio::piped())
        .spawn()
        .expect("start the live reader");
    let url = format!("http://{}:{port}/", h.addr[1]);
    let client = h
        .exec(0, "python3")
        .args([
            "-c",
            "import os, sys, urllib.request\n\
             print(os.getpid(), flush=True)\n\
             for _ in range(50): urllib.request.urlopen(sys.argv[1], timeout=5).read()\n",
            &url,
        ])
        .output()
        .expect("run the client");
    assert!(
        client.status.success(),
        "client: {}",
        String::from_utf8_lossy(&client.stderr)
    );
    let tid: i32 = String::from_utf8_lossy(&client.stdout)
        .trim()
        .parse()
        .expect("client tid");
    for (i, c) in recorders.into_iter().enumerate() {
        let o = c.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(o.status.success(), "recorder {i} failed: {err}");
    }
    let o = reader.wait_with_output().unwrap();
    assert!(
        o.status.success(),
        "live reader: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    // The relay wrote HOST/two-DATE/kernel per host, as lttng-relayd does.
    let written: Vec<PathBuf> = ["hosta", "hostb"]
        .iter()
        .map(|host| {
            let dir = relayd_out.join(host);
            let session = std::fs::read_dir(&dir)
                .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
                .flatten()
                .find(|e| e.file_name().to_string_lossy().starts_with("two-"))
                .unwrap_or_else(|| panic!("no session directory in {}", dir.display()));
            session.path().join("kernel")
        })
        .collect();
    drop(h);
    // The live reader printed the written trace's events, in time order (a reader far behind
    // the recorder when it stops may miss the last packets: lttng-relayd hangs its streams
    // up; events of one time on two CPUs may come in either order, so lines are compared
    // without their deltas, as sets of the same times).
    let live = std::fs::read(tmp.path().join("live_a.txt")).unwrap();
    let full = tracekit()
        .arg("print")
        .arg(&written[0])
        .output()
        .unwrap()
        .stdout;
    let lines = |b: &[u8]| -> Vec<String> {
        String::from_utf8_lossy(b)
            .lines()
            .map(|l| match (l.find(" (+"), l.find(") ")) {
                (Some(a), Some(z)) if a < z => format!("{}{}", &l[..a], &l[z + 1..]),
                _ => l.to_owned(),
            })
            .collect()
    };
    let (live, full) = (lines(&live), lines(&full));
    assert!(
        live.len() > 1000,
        "the live reader printed {} lines",
        live.len()
    );
    assert!(live.len() <= full.len());
    let stamp = |l: &String| l.get(..20).unwrap_or_default().to_owned();
    assert!(
        live.windows(2).all(|w| stamp(&w[0]) <= stamp(&w[1])),
        "the live output is not in time order"
    );
    let last = stamp(live.last().unwrap());
    let mut a: Vec<&String> = live.iter().filter(|l| stamp(l) < last).collect();
    let mut b: Vec<&String> = full.iter().filter(|l| stamp(l) < last).collect();
    a.sort();
    b.sort();
    assert!(a == b, "the live output is not the written trace's");
    eprintln!(
        "live reader on hosta: {} of the written trace's {} lines",
        live.len(),
        full.len()
    );
    for (w, l) in written.iter().zip(&local) {
        let print = |d: &Path| tracekit().arg("print").arg(d).output().unwrap();
        let (pw, pl) = (print(w), print(l));
        assert!(pw.status.success() && pl.status.success());
        assert!(pw.stdout.len() > 10_000, "{}: too little", w.display());
        assert!(
            pw.stdout == pl.stdout,
            "{} does not print as the recorder's local copy {}",
            w.display(),
            l.display()
        );
    }
    let o = tracekit()
        .args(["sync", "--json"])
        .arg(&relayd_out)
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "sync: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).expect("sync json");
    let matches = j["matches"].as_u64().unwrap_or(0);
    assert!(matches >= 300, "sync matched only {matches} packets: {j}");
    let o = tracekit()
        .args(["critpath", "--sync", "--json", "--host", "hosta", "--tid"])
        .arg(tid.to_string())
        .arg(&relayd_out)
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "critpath: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).expect("critpath json");
    let path = j["path"].as_array().expect("path");
    let on_b = path.iter().filter(|s| s["host"] == "hostb").count();
    let on_a = path.iter().filter(|s| s["host"] == "hosta").count();
    assert!(
        on_a > 0 && on_b > 0,
        "the critical path does not cross the hosts ({on_a} on hosta, {on_b} on hostb)"
    );
    eprintln!(
        "two hosts streamed to lttng-relayd: {matches} packets matched, critical path {on_a}+{on_b} \
         segments, {:.1} s",
        start.elapsed().as_secs_f64()
    );
    assert_no_stale_instances();
}
