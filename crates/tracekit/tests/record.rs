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

const TRACEFS: &str = "/sys/kernel/tracing";

fn enabled(test: &str) -> bool {
    if std::env::var("TRACEKIT_ROOT_TESTS").as_deref() != Ok("1") {
        eprintln!("{test}: skipped (set TRACEKIT_ROOT_TESTS=1 to run the root/tracefs tests)");
        return false;
    }
    let uid = Command::new("id").arg("-u").output().expect("run id -u");
    let uid = String::from_utf8_lossy(&uid.stdout).trim().to_string();
    assert_eq!(
        uid, "0",
        "TRACEKIT_ROOT_TESTS=1 but not running as root (uid {uid})"
    );
    if !Path::new(TRACEFS).join("instances").is_dir() {
        let _ = Command::new("mount")
            .args(["-t", "tracefs", "nodev", TRACEFS])
            .status();
    }
    assert!(
        Path::new(TRACEFS).join("instances").is_dir(),
        "TRACEKIT_ROOT_TESTS=1 but tracefs is not mounted on {TRACEFS} and could not be mounted"
    );
    true
}

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

fn instance_of(pid: u32) -> PathBuf {
    Path::new(TRACEFS).join(format!("instances/tracekit-{pid}"))
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

#[test]
fn record_with_duration_is_readable_everywhere() {
    if !enabled("record_with_duration_is_readable_everywhere") {
        return;
    }
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("run").join("kernel");
    let mut load = workload();
    let rec = tracekit()
        .arg("record")
        .arg("-o")
        .arg(&out)
        .args(["--duration", "2", "--hostname", "rec-test"])
        .output()
        .unwrap();
    for c in &mut load {
        let _ = c.wait();
    }
    let stdout = String::from_utf8_lossy(&rec.stdout);
    let stderr = String::from_utf8_lossy(&rec.stderr);
    eprintln!("{stdout}\n{stderr}");
    assert!(rec.status.success(), "tracekit record failed: {stderr}");
    assert!(out.join("metadata").is_file());
    assert!(!tmp.path().join("run/.kernel.partial").exists());
    assert_eq!(mode(&out), 0o700, "trace directory mode");
    for e in std::fs::read_dir(&out).unwrap() {
        assert_eq!(mode(&e.unwrap().path()), 0o600, "trace file mode");
    }
    // No tracekit instance of a finished recorder is left.
    assert_no_stale_instances();

    let (counts, errors, exec) = read_trace(&out);
    assert_eq!(errors, 0, "tracekit's reader found errors");
    for name in [
        "lttng_statedump_start",
        "lttng_statedump_process_state",
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
        let r = Command::new(tool).arg(&out).output().unwrap();
        let o = String::from_utf8_lossy(&r.stdout);
        assert!(
            r.status.success() && !o.contains("Traceback"),
            "{tool} failed: {o}\n{}",
            String::from_utf8_lossy(&r.stderr)
        );
    }
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
    std::thread::sleep(Duration::from_millis(1000));
    child.kill().unwrap();
    let _ = child.wait();
    assert!(!out.exists(), "a killed recording must not look complete");
    assert!(
        tmp.path().join(".kernel.partial/metadata").is_file(),
        "the killed recording should be left as .kernel.partial"
    );
    // A SIGKILLed recorder cannot remove its instance: the next run removes it.
    assert!(inst.exists());
    let out2 = tmp.path().join("kernel2");
    let r = tracekit()
        .arg("record")
        .arg("-o")
        .arg(&out2)
        .args(["-q", "--events", "sched", "--duration", "0.3"])
        .status()
        .unwrap();
    assert!(r.success());
    assert!(
        !inst.exists(),
        "stale instance of a dead recorder not removed"
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
