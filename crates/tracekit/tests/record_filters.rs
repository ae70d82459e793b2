//! `tracekit record --filter/--syscall/--events GLOB` on the real kernel: a filtered recording
//! holds exactly the events its filter admits, checked against an unfiltered recording of
//! the same workload made at the same time; `--userspace-probe` fires once per call of a test
//! binary (`tests/data/probe_target.c`). Root and tracefs only: these tests run when
//! `TRACEKIT_ROOT_TESTS=1`, and then fail (with the reason) when either is missing.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// One test at a time: their recorders would compete for the two CPUs.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

use testkit::root::{root_or_skip as enabled, TRACEFS};

fn start_recorder(out: &Path, args: &[&str]) -> Child {
    Command::new(env!("CARGO_BIN_EXE_tracekit"))
        .arg("record")
        .arg("-o")
        .arg(out)
        .args(args)
        .arg("-q")
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Waits until the recorder traces (every event, filter and PID set up).
fn wait_tracing(rec: &Child) {
    testkit::root::wait_tracing(rec.id());
}

fn stop(rec: Child) {
    let st = Command::new("kill")
        .args(["-INT", &rec.id().to_string()])
        .status()
        .unwrap();
    assert!(st.success());
    let o = rec.wait_with_output().unwrap();
    assert!(
        o.status.success(),
        "recorder failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
}

/// What the test compares: events per name, and the `(prev_tid, next_tid)` of the switches.
#[derive(Debug, Default, PartialEq, Eq)]
struct Seen {
    counts: BTreeMap<String, u64>,
    switches: Vec<(i64, i64)>,
    discarded: u64,
    /// Events (other than switches) of a thread that the switch before them on their CPU
    /// does not name: the trace's switches do not agree with its records.
    misattributed: u64,
}

/// Reads a trace, keeping the events for which `keep(name, running tid, event)` holds.
///
/// The running thread of an event is the `prev_tid` of the next `sched_switch` on its CPU
/// (`None` after the last one), not the `next_tid` of the switch before it: this kernel does
/// not trace a switch out of the idle task, so with a PID list or a filter on the switches
/// (where the recorder cannot rebuild it) a task woken on an idle CPU has no switch in, while
/// its switch out is always traced.
fn read(dir: &Path, keep: &dyn Fn(&str, Option<i64>, &ctf::Event<'_>) -> bool) -> Seen {
    let mut seen = Seen::default();
    for t in ctf::open_all(&[dir]).expect("open the trace") {
        let running: Vec<Vec<Option<i64>>> = t
            .readers()
            .into_iter()
            .map(|mut r| {
                let mut tids = Vec::new();
                let mut since_switch = 0;
                while let Some(m) = r.next() {
                    if let ctf::Message::Event = m.expect("decode") {
                        let ev = r.event();
                        tids.push(None);
                        since_switch += 1;
                        if ev.name() == "sched_switch" {
                            let prev = ev.field("prev_tid").and_then(|v| v.as_i64());
                            let n = tids.len();
                            tids[n - since_switch..].fill(prev);
                            since_switch = 0;
                        }
                    }
                }
                tids
            })
            .collect();
        for (mut r, tids) in t.readers().into_iter().zip(running) {
            let mut tids = tids.into_iter();
            let mut switched_to = None;
            while let Some(m) = r.next() {
                match m.expect("decode") {
                    ctf::Message::Event => {
                        let ev = r.event();
                        let tid = tids.next().expect("the same events on the second read");
                        let name = ev.name().to_string();
                        if name.starts_with("lttng_statedump") {
                            continue;
                        }
                        let int = |f: &str| ev.field(f).and_then(|v| v.as_i64());
                        if name == "sched_switch" {
                            switched_to = int("next_tid");
                        } else if tid.is_some() && tid != switched_to {
                            seen.misattributed += 1;
                        }
                        if keep(&name, tid, &ev) {
                            if name == "sched_switch" {
                                seen.switches
                                    .push((int("prev_tid").unwrap(), int("next_tid").unwrap()));
                            }
                            *seen.counts.entry(name).or_insert(0) += 1;
                        }
                    }
                    ctf::Message::DiscardedEvents { count, .. } => seen.discarded += count,
                    _ => {}
                }
            }
        }
    }
    seen.switches.sort_unstable();
    seen
}

#[test]
fn filtered_recording_holds_exactly_what_the_filter_admits() {
    if !enabled("filtered_recording_holds_exactly_what_the_filter_admits") {
        return;
    }
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let tmp = tempfile::tempdir().unwrap();
    // The workload waits for a line on stdin, so that its pid can go into the filter before
    // it does anything; it then opens and reads files and sleeps (switches).
    let mut work = Command::new("sh")
        .args([
            "-c",
            "read go; i=0; while [ $i -lt 150 ]; do read -r l < /etc/hostname; \
             i=$((i+1)); done; for j in 1 2 3; do sleep 0.02; done",
        ])
        .stdin(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = work.id() as i64;
    let full = tmp.path().join("full");
    let filtered = tmp.path().join("filtered");
    // The reference: every event of the workload (PID tracking, not a filter), which keeps
    // it small enough not to lose events on a busy machine.
    let pid_s = pid.to_string();
    let all = start_recorder(
        &full,
        &["--events", "sched_switch,syscalls", "--pid", &pid_s],
    );
    let sysf = format!("syscall_*=$ctx.tid == {pid} && $ctx.procname == \"s*\"");
    let swf = format!("sched_sw*=prev_tid == {pid} || next_tid == {pid}");
    let some = start_recorder(
        &filtered,
        &[
            "--events",
            "sched_switch",
            "--syscall",
            "read,open*",
            "--filter",
            &sysf,
            "--filter",
            &swf,
        ],
    );
    wait_tracing(&all);
    wait_tracing(&some);
    std::thread::sleep(Duration::from_millis(300));
    work.stdin.take().unwrap().write_all(b"go\n").unwrap();
    assert!(work.wait().unwrap().success());
    std::thread::sleep(Duration::from_millis(300));
    stop(all);
    stop(some);

    let got = read(&filtered, &|_, _, _| true);
    let want = read(&full, &|name, cur, ev| {
        let int = |f: &str| ev.field(f).and_then(|v| v.as_i64());
        match name {
            "sched_switch" => int("prev_tid") == Some(pid) || int("next_tid") == Some(pid),
            _ => {
                let call = name
                    .strip_prefix("syscall_entry_")
                    .or_else(|| name.strip_prefix("syscall_exit_"));
                cur == Some(pid) && call.is_some_and(|c| c == "read" || c.starts_with("open"))
            }
        }
    });
    eprintln!("filtered: {got:?}");
    assert_eq!(want.discarded, 0, "the unfiltered recording lost events");
    assert_eq!(got.discarded, 0, "the filtered recording lost events");
    // The workload did what the filter looks for: about 150 opens and reads, a few switches.
    assert!(
        want.counts
            .get("syscall_entry_openat")
            .copied()
            .unwrap_or(0)
            >= 100,
        "{want:?}"
    );
    assert!(want.switches.len() >= 3, "{want:?}");
    // The PID-tracked recording's switches agree with its records: the switches into the
    // workload the kernel did not trace (out of the idle task) were rebuilt.
    assert_eq!(want.misattributed, 0, "{want:?}");
    // The filter admits what the kernel traces; the reference has the rebuilt switches into
    // the workload besides.
    let mut extra = want.switches.clone();
    for sw in &got.switches {
        let at = extra.iter().position(|w| w == sw);
        assert!(at.is_some(), "switch {sw:?} not in the reference {want:?}");
        extra.remove(at.unwrap());
    }
    assert!(
        extra.iter().all(|&(_, next)| next == pid),
        "switches of the reference missing from the filtered recording: {extra:?}"
    );
    let mut admitted = want.counts.clone();
    if let Some(n) = admitted.get_mut("sched_switch") {
        *n -= extra.len() as u64;
    }
    assert_eq!(got.counts, admitted);
}

#[test]
fn filter_errors_name_what_and_where() {
    // Parsing happens before anything touches the kernel: no root needed.
    let run = |args: &[&str]| {
        let o = Command::new(env!("CARGO_BIN_EXE_tracekit"))
            .args(["record", "-o", "/nonexistent/x"])
            .args(args)
            .output()
            .unwrap();
        assert!(!o.status.success());
        String::from_utf8_lossy(&o.stderr).into_owned()
    };
    let e = run(&["--filter", "prev_tid == 1 &&"]);
    assert!(e.contains("position 16"), "{e}");
    let e = run(&["--filter", "len * 2 > 3"]);
    assert!(
        e.contains("`*` at position 4") && e.contains("not supported"),
        "{e}"
    );
    let e = run(&["--filter", "a = 1"]);
    assert!(e.contains("position 1"), "{e}");
}

/// Counts the events of each name in a trace.
fn counts(dir: &Path) -> BTreeMap<String, u64> {
    read(dir, &|_, _, _| true).counts
}

#[test]
fn userspace_probes_fire_once_per_call() {
    if !enabled("userspace_probes_fire_once_per_call") {
        return;
    }
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    if !testkit::tool_or_skip("gcc", "apt-get install gcc", "the uprobe test") {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    // A function and a USDT probe site (its ELF note written by hand in the source).
    let bin = compile_probe_target(tmp.path());
    let out = tmp.path().join("kernel");
    let elf = format!("elf:{}:tk_probe_target", bin.display());
    let sdt = format!("sdt:{}:tkprov:tick", bin.display());
    let rec = start_recorder(
        &out,
        &[
            "--events",
            "sched_switch",
            "--userspace-probe",
            &elf,
            "--userspace-probe",
            &sdt,
        ],
    );
    wait_tracing(&rec);
    // Two processes of the binary: 37 and 11 calls.
    for n in ["37", "11"] {
        assert!(Command::new(&bin).arg(n).status().unwrap().success());
    }
    std::thread::sleep(Duration::from_millis(200));
    stop(rec);
    let c = counts(&out);
    assert_eq!(c.get("tk_probe_target"), Some(&48), "{c:?}");
    assert_eq!(c.get("tkprov_tick"), Some(&48), "{c:?}");
    // The probes went with the recorder.
    let defined = std::fs::read_to_string(Path::new(TRACEFS).join("uprobe_events")).unwrap();
    assert!(
        !defined.contains("tkprobe_"),
        "probes left behind: {defined}"
    );

    // Kernel probes: where this kernel has kprobe events, a kretprobe pair fires in pairs;
    // elsewhere the recorder says what is missing.
    let kout = tmp.path().join("kprobes");
    if Path::new(TRACEFS).join("kprobe_events").exists() {
        let rec = start_recorder(
            &kout,
            &["--events", "sched_switch", "--function", "do_sys_openat2"],
        );
        wait_tracing(&rec);
        let _ = std::fs::read_to_string("/etc/hostname");
        std::thread::sleep(Duration::from_millis(200));
        stop(rec);
        let c = counts(&kout);
        let entries = c.get("do_sys_openat2_entry").copied().unwrap_or(0);
        assert!(entries >= 1, "{c:?}");
        let exits = c.get("do_sys_openat2_exit").copied().unwrap_or(0);
        assert!(entries.abs_diff(exits) <= 2, "{c:?}");
    } else {
        let o = Command::new(env!("CARGO_BIN_EXE_tracekit"))
            .args([
                "record",
                "-q",
                "--duration",
                "1",
                "--function",
                "do_sys_openat2",
                "-o",
            ])
            .arg(&kout)
            .output()
            .unwrap();
        assert!(!o.status.success());
        let e = String::from_utf8_lossy(&o.stderr);
        assert!(
            e.contains("kprobe_events") && e.contains("CONFIG_KPROBE_EVENTS"),
            "{e}"
        );
        assert!(!kout.exists());
    }
}

/// Events lost per the per-CPU `stats` files of a tracefs instance (overwritten, dropped).
fn instance_lost(inst: &Path) -> u64 {
    let mut lost = 0;
    for e in std::fs::read_dir(inst.join("per_cpu")).unwrap() {
        let t = std::fs::read_to_string(e.unwrap().path().join("stats")).unwrap();
        for l in t.lines() {
            let Some((k, v)) = l.split_once(':') else {
                continue;
            };
            if matches!(k.trim(), "overrun" | "commit overrun" | "dropped events") {
                lost += v.trim().parse::<u64>().unwrap_or(0);
            }
        }
    }
    lost
}

/// Runs a flight recorder with `args`, the workload `load`, kills the recorder with SIGKILL
/// and recovers its buffers: (the recovered trace's executions of /bin/true, its discarded
/// count (checked against the losses the kernel counted), all its events).
fn kill_and_recover(tmp: &Path, args: &[&str], load: impl FnOnce()) -> (Seen, u64, Seen) {
    let dir = tmp.join("fr");
    let rec = start_recorder(&dir, args);
    wait_tracing(&rec);
    let inst = Path::new(TRACEFS).join(format!("instances/tracekit-{}", rec.id()));
    load();
    std::thread::sleep(Duration::from_millis(300));
    let mut rec = rec;
    rec.kill().unwrap();
    rec.wait().unwrap();
    assert!(inst.is_dir(), "the killed recorder's buffers are gone");
    assert!(dir.join(".tracekit-flight").is_file());
    // The instance goes on tracing (overwriting) until recovered: stop it to read final
    // counts, as `recover` does first.
    std::fs::write(inst.join("tracing_on"), "0").unwrap();
    let kernel_lost = instance_lost(&inst);
    let out = tmp.join("recovered").join("kernel");
    let o = Command::new(env!("CARGO_BIN_EXE_tracekit"))
        .arg("recover")
        .arg(&dir)
        .arg("-o")
        .arg(&out)
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "tracekit recover failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(!inst.exists(), "recover leaves the instance behind");
    assert!(!dir.join(".tracekit-flight").exists());
    // babeltrace2 reads the recovered trace without an error.
    testkit::babeltrace2_text(&out);
    let all = read(&out, &|_, _, _| true);
    let execs = read(&out, &|name, _, ev| {
        name == "sched_process_exec"
            && ev
                .field("filename")
                .and_then(|f| f.as_str().map(|s| s == "/bin/true"))
                .unwrap_or(false)
    });
    assert_eq!(
        all.discarded, kernel_lost,
        "the recovered trace's discarded count is what the kernel lost"
    );
    let lost = all.discarded;
    (execs, lost, all)
}

#[test]
fn killed_flight_recorder_is_recovered() {
    if !enabled("killed_flight_recorder_is_recovered") {
        return;
    }
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    // Buffers large enough for everything: the 20 executions of /bin/true are all there.
    let tmp = tempfile::tempdir().unwrap();
    let (execs, lost, _) = kill_and_recover(
        tmp.path(),
        &["--flight-recorder", "32M", "--events", "sched,syscalls"],
        || {
            for _ in 0..20 {
                assert!(Command::new("/bin/true").status().unwrap().success());
            }
        },
    );
    assert_eq!(lost, 0);
    assert_eq!(execs.counts.get("sched_process_exec"), Some(&20));
    // Small buffers overwritten many times: the trace counts exactly what was overwritten.
    let tmp = tempfile::tempdir().unwrap();
    let (_, lost, all) = kill_and_recover(
        tmp.path(),
        &["--flight-recorder", "256K", "--events", "sched,syscalls"],
        || {
            let st = Command::new("dd")
                .args(["if=/dev/zero", "of=/dev/null", "bs=1", "count=200000"])
                .stderr(Stdio::null())
                .status()
                .unwrap();
            assert!(st.success());
        },
    );
    assert!(lost > 0, "256 KiB of buffers did not overflow");
    assert!(all.counts.values().sum::<u64>() > 0);
}

/// `--userspace-function`: a uprobe and uretprobe pair on functions of a test binary, paired
/// by `tracekit latency --tracker function` into the durations of the calls, per thread.
#[test]
fn userspace_function_durations_in_latency() {
    if !enabled("userspace_function_durations_in_latency") {
        return;
    }
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    if !testkit::tool_or_skip("gcc", "apt-get install gcc", "the uretprobe test") {
        return;
    }
    let t0 = std::time::Instant::now();
    let tmp = tempfile::tempdir().unwrap();
    let bin = compile_probe_target(tmp.path());
    let out = tmp.path().join("kernel");
    let fast = format!("elf:{}:tk_probe_target", bin.display());
    let slow = format!("elf:{}:tk_slow", bin.display());
    let rec = start_recorder(
        &out,
        &[
            "--events",
            "sched_switch",
            "--userspace-function",
            &fast,
            "--userspace-function",
            &slow,
        ],
    );
    wait_tracing(&rec);
    // 7 quick calls, then one of 60 ms.
    let mut run = Command::new(&bin).args(["7", "60"]).spawn().unwrap();
    let tid = run.id() as i64;
    assert!(run.wait().unwrap().success());
    std::thread::sleep(Duration::from_millis(200));
    stop(rec);
    let c = counts(&out);
    assert_eq!(c.get("tk_probe_target_entry"), Some(&7), "{c:?}");
    assert_eq!(c.get("tk_probe_target_exit"), Some(&7), "{c:?}");
    assert_eq!(c.get("tk_slow_exit"), Some(&1), "{c:?}");
    let o = Command::new(env!("CARGO_BIN_EXE_tracekit"))
        .args([
            "latency",
            "--tracker",
            "function",
            "--threshold",
            "0",
            "--json",
        ])
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let reports: Vec<serde_json::Value> = String::from_utf8_lossy(&o.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|j| j["tracker"] == "function" && j["tid"].as_i64() == Some(tid))
        .collect();
    let of = |f: &str| -> Vec<i64> {
        reports
            .iter()
            .filter(|j| j["detail"] == f)
            .filter_map(|j| j["latency_ns"].as_i64())
            .collect()
    };
    assert_eq!(of("tk_probe_target").len(), 7, "{reports:?}");
    let s = of("tk_slow");
    assert_eq!(
        s.len(),
        1,
        "tk_slow in thread {tid}: {}",
        String::from_utf8_lossy(&o.stdout)
    );
    assert!(
        (60_000_000..1_000_000_000).contains(&s[0]),
        "tk_slow took {} ns",
        s[0]
    );
    eprintln!("uretprobe test: {:.1} s", t0.elapsed().as_secs_f64());
}

/// The probe test binary (`tests/data/probe_target.c`) compiled into `dir`.
fn compile_probe_target(dir: &Path) -> std::path::PathBuf {
    let bin = dir.join("probe_target");
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/probe_target.c");
    let cc = Command::new("gcc")
        .args(["-O1", "-o"])
        .arg(&bin)
        .arg(&src)
        .output()
        .unwrap();
    assert!(
        cc.status.success(),
        "{}",
        String::from_utf8_lossy(&cc.stderr)
    );
    bin
}
