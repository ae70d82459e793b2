//! The root-only recorder tests (`tracekit record` on the real kernel): whether they run, what
//! they need, and waiting for a recorder to trace.
//!
//! They run only when `TRACEKIT_ROOT_TESTS=1` (CI sets it); they then require root and tracefs
//! (mounted here when it is not) and fail saying which is missing, instead of skipping.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Where the tests expect tracefs.
pub const TRACEFS: &str = "/sys/kernel/tracing";

/// Whether the root test `test` runs: `false` (said on stderr) unless `TRACEKIT_ROOT_TESTS=1`;
/// then it asserts that the process is root and that tracefs is mounted on [`TRACEFS`]
/// (mounting it when it is not).
pub fn root_or_skip(test: &str) -> bool {
    if std::env::var("TRACEKIT_ROOT_TESTS").as_deref() != Ok("1") {
        eprintln!("{test}: skipped (set TRACEKIT_ROOT_TESTS=1 to run the root/tracefs tests)");
        return false;
    }
    let uid = std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("Uid:"))
                .and_then(|v| v.split_whitespace().nth(1).map(str::to_string))
        })
        .unwrap_or_default();
    assert_eq!(
        uid, "0",
        "{test}: TRACEKIT_ROOT_TESTS=1 but not running as root (effective uid {uid})"
    );
    let root = Path::new(TRACEFS);
    if !root.join("instances").is_dir() {
        let _ = Command::new("mount")
            .args(["-t", "tracefs", "nodev", TRACEFS])
            .status();
    }
    assert!(
        root.join("instances").is_dir(),
        "{test}: TRACEKIT_ROOT_TESTS=1 but tracefs is not mounted on {TRACEFS} and could not \
         be mounted"
    );
    true
}

/// [`root_or_skip`] for a test that also needs a cargo feature of the test crate (`enabled`:
/// `cfg!(feature = "…")`): skipped, saying so, when the feature is off.
pub fn root_with_feature_or_skip(test: &str, feature: &str, enabled: bool) -> bool {
    if !root_or_skip(test) {
        return false;
    }
    if !enabled {
        eprintln!("{test}: skipped (needs the `{feature}` feature: --features {feature})");
    }
    enabled
}

/// Asserts that the root test `test` has the program `tool` (found on `PATH`); `install` says
/// how to get it. Root tests run in CI, where everything they use is installed.
pub fn require_tool(test: &str, tool: &str, install: &str) {
    let found = Command::new("sh")
        .args(["-c", &format!("command -v {tool}")])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    assert!(found, "{test} needs `{tool}` ({install})");
}

/// The tracefs instance of the recorder of process `pid`.
pub fn instance_of(pid: u32) -> PathBuf {
    Path::new(TRACEFS)
        .join("instances")
        .join(format!("tracekit-{pid}"))
}

/// Waits (at most 30 s, then panics) until the recorder of process `pid` traces: its tracefs
/// instance has tracing on and every event enabled. The recorder turns tracing on only once
/// it has set up everything (events, filters, PID tracking, helpers), so tracing on means
/// ready; a new instance starts with tracing on, so `sched_switch` enabled (after tracing was
/// turned off) is checked too.
pub fn wait_tracing(pid: u32) {
    let inst = instance_of(pid);
    let is_one = |rel: &str| std::fs::read_to_string(inst.join(rel)).is_ok_and(|s| s.trim() == "1");
    let t0 = Instant::now();
    while !(is_one("events/sched/sched_switch/enable") && is_one("tracing_on")) {
        assert!(
            t0.elapsed() < Duration::from_secs(30),
            "the recorder {pid} did not start tracing ({} not ready)",
            inst.display()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}
