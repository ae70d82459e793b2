//! `tracekit print` against `babeltrace2` on real LTTng traces recorded here, at test time, by
//! LTTng itself (lttng-tools 2.13, LTTng-UST; user space only): a C tracepoint provider with
//! every kind of field, `liblttng-ust-libc-wrapper.so`, the Python agent, per-UID and per-PID
//! buffers, ring buffers small enough to discard events, an overwrite channel that loses
//! packets, snapshot mode, `lttng-crash` on the shared-memory buffers of a killed session,
//! and the trace an `lttng-relayd` writes. For each, stdout, stderr and the exit status of both
//! tools must be identical.
//!
//! Each recording has a session daemon of its own, in namespaces of its own (`testkit::lttng`):
//! it neither sees nor disturbs another session daemon. The recordings run concurrently, once
//! per test process.
//!
//! Needs root (for the namespaces), lttng-tools, liblttng-ust-dev, python3-lttngust, gcc,
//! iproute2 and babeltrace2; a test skips with a message when one is missing, except with
//! `TRACEKIT_SHARED` set (CI), where it fails.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;
use std::time::Instant;

use testkit::lttng;

/// The scenarios: a name (also the output directory's) and the commands recording it. `$W` is
/// the scenario's directory (the trace goes to `$W/trace`), `$APP` the C application
/// (`tk_app VALUES TICKS`), `$AGENT` the Python script.
const SCENARIOS: &[(&str, &str)] = &[
    (
        "values",
        r#"lttng create s --output="$W/trace"
lttng enable-event -u -a
lttng add-context -u -t vpid -t vtid -t procname -t ip -t pthread_id
lttng start
"$APP" 60 500
lttng stop
lttng destroy
"#,
    ),
    (
        "libc",
        r#"lttng create s --output="$W/trace"
lttng enable-event -u 'lttng_ust_libc:*'
lttng enable-event -u 'tk:*'
lttng start
LD_PRELOAD=liblttng-ust-libc-wrapper.so "$APP" 8 0
lttng stop
lttng destroy
"#,
    ),
    (
        "python",
        r#"lttng create s --output="$W/trace"
lttng enable-event --python -a
lttng start
/usr/bin/python3 "$AGENT"
lttng stop
lttng destroy
"#,
    ),
    (
        "per_pid",
        r#"lttng create s --output="$W/trace"
lttng enable-channel -u --buffers-pid chan
lttng enable-event -u -c chan 'tk:*'
lttng add-context -u -c chan -t vpid
lttng start
"$APP" 7 0
"$APP" 3 5
lttng stop
lttng destroy
"#,
    ),
    (
        "discard",
        r#"lttng create s --output="$W/trace"
lttng enable-channel -u --subbuf-size=4096 --num-subbuf=2 tiny
lttng enable-event -u -c tiny 'tk:tick'
lttng start
"$APP" 0 200000
lttng stop
lttng destroy
"#,
    ),
    (
        "overwrite",
        r#"lttng create s --output="$W/trace"
lttng enable-channel -u --overwrite --subbuf-size=4096 --num-subbuf=2 ring
lttng enable-event -u -c ring 'tk:tick'
lttng start
"$APP" 0 200000
lttng stop
lttng destroy
"#,
    ),
    (
        "snapshot",
        r#"lttng create s --snapshot --output="$W/trace"
lttng enable-event -u 'tk:*'
lttng start
"$APP" 10 1000
lttng snapshot record
"$APP" 10 1000
lttng snapshot record
lttng stop
lttng destroy
"#,
    ),
    (
        "snapshot_ring",
        r#"lttng create s --snapshot --output="$W/trace"
lttng enable-channel -u --subbuf-size=4096 --num-subbuf=4 ring
lttng enable-event -u -c ring 'tk:*'
lttng start
"$APP" 10 3000
lttng snapshot record
"$APP" 0 300
lttng snapshot record
"$APP" 0 3000
lttng snapshot record
lttng stop
lttng destroy
"#,
    ),
    (
        "crash",
        r#"lttng create s --shm-path="$W/shm" --output="$W/unused"
lttng enable-event -u 'tk:*'
lttng start
"$APP" 10 1000
# Every process of this namespace but this shell: the session and consumer daemons.
kill -9 -1
sleep 0.2
lttng-crash -x "$W/trace" "$W/shm"
"#,
    ),
    (
        "relayd",
        r#"lttng-relayd -d -o "$W/trace" -C tcp://127.0.0.1:15342 -D tcp://127.0.0.1:15343 -L tcp://127.0.0.1:15344
lttng create s --set-url net://127.0.0.1:15342:15343
lttng enable-event -u 'tk:*'
lttng start
"$APP" 10 100
lttng stop
lttng destroy
"#,
    ),
];

/// Each scenario's directory (its trace in `trace/`), or why it could not be recorded; the
/// recordings are made once, all at the same time, by the first test asking.
fn recordings() -> &'static BTreeMap<&'static str, Result<PathBuf, String>> {
    static REC: OnceLock<BTreeMap<&'static str, Result<PathBuf, String>>> = OnceLock::new();
    REC.get_or_init(|| {
        let start = Instant::now();
        let dir = lttng::work_dir(Path::new(env!("CARGO_TARGET_TMPDIR")), "lttng-real");
        let app = match lttng::build_app(&dir) {
            Ok(app) => app,
            Err(e) => {
                return SCENARIOS
                    .iter()
                    .map(|(n, _)| (*n, Err(e.clone())))
                    .collect()
            }
        };
        let agent = lttng::data_dir().join("tk_agent.py");
        let out = std::thread::scope(|s| {
            let handles: Vec<_> = SCENARIOS
                .iter()
                .map(|&(name, script)| {
                    let w = dir.join(name);
                    let (app, agent) = (&app, &agent);
                    (
                        name,
                        s.spawn(move || record(&w, script, app, agent).map(|()| w)),
                    )
                })
                .collect();
            handles
                .into_iter()
                .map(|(name, h)| (name, h.join().expect("recording thread")))
                .collect()
        });
        eprintln!(
            "recorded {} LTTng scenarios in {:.1} s",
            SCENARIOS.len(),
            start.elapsed().as_secs_f64()
        );
        out
    })
}

/// Runs one scenario's commands in namespaces of their own (see `testkit::lttng`).
fn record(w: &Path, script: &str, app: &Path, agent: &Path) -> Result<(), String> {
    lttng::run(w, script, [("APP", app), ("AGENT", agent)], 120)?;
    if w.join("trace").is_dir() {
        return Ok(());
    }
    Err(format!("recording in {} wrote no trace", w.display()))
}

/// The directory of scenario `name` (None: skipped); a failed recording fails the test.
fn scenario(name: &str) -> Option<PathBuf> {
    if !lttng::available("the real LTTng trace tests") {
        return None;
    }
    match &recordings()[name] {
        Ok(w) => Some(w.clone()),
        Err(e) => panic!("{name}: {e}"),
    }
}

fn tracekit() -> Command {
    Command::new(env!("CARGO_BIN_EXE_tracekit"))
}

fn run(cmd: &mut Command, cwd: &Path) -> Output {
    cmd.current_dir(cwd)
        .env("TZ", "UTC")
        .output()
        .expect("command runs")
}

/// The first line where `a` and `b` differ, for messages.
fn first_difference(a: &[u8], b: &[u8]) -> String {
    let (a, b) = (String::from_utf8_lossy(a), String::from_utf8_lossy(b));
    let (mut la, mut lb) = (a.lines(), b.lines());
    for n in 1.. {
        match (la.next(), lb.next()) {
            (Some(x), Some(y)) if x == y => {}
            (None, None) => break,
            (x, y) => {
                return format!("line {n}:\n  babeltrace2: {x:?}\n  tracekit:    {y:?}");
            }
        }
    }
    "same lines, different bytes (line ends?)".to_owned()
}

/// `babeltrace2 ARGS` and `tracekit print ARGS`, run in `cwd`, give the same stdout, stderr
/// and exit status; returns babeltrace2's output.
fn same_as_babeltrace2(cwd: &Path, args: &[&str]) -> Output {
    let bt = run(Command::new("babeltrace2").args(args), cwd);
    let tk = run(tracekit().arg("print").args(args), cwd);
    let what = format!("{args:?} in {}", cwd.display());
    assert_eq!(
        bt.status.code(),
        tk.status.code(),
        "{what}: exit status differs; tracekit's stderr: {}",
        String::from_utf8_lossy(&tk.stderr)
    );
    assert!(
        bt.stdout == tk.stdout,
        "{what}: stdout differs at {}",
        first_difference(&bt.stdout, &tk.stdout)
    );
    assert!(
        bt.stderr == tk.stderr,
        "{what}: stderr differs at {}",
        first_difference(&bt.stderr, &tk.stderr)
    );
    bt
}

/// Lines of `out` holding `needle`.
fn lines_with(out: &[u8], needle: &str) -> usize {
    String::from_utf8_lossy(out)
        .lines()
        .filter(|l| l.contains(needle))
        .count()
}

/// The trace directories (holding `metadata`) below `dir`.
fn trace_dirs(dir: &Path) -> Vec<PathBuf> {
    testkit::trace_dirs(dir)
}

#[test]
fn c_provider_every_field_kind_per_uid_buffers() {
    let Some(w) = scenario("values") else { return };
    let bt = same_as_babeltrace2(&w, &["trace"]);
    // The application's events are all there, with the fields the provider declares.
    assert_eq!(lines_with(&bt.stdout, " tk:values: "), 60);
    assert_eq!(lines_with(&bt.stdout, " tk:tick: "), 500);
    let text = String::from_utf8_lossy(&bt.stdout);
    for field in [
        "hex = 0x",
        "d = ",
        "f = ",
        "_seq_length = ",
        "seqtext = \"",
        "arr = [ [0] = ",
        "arrtext = \"",
        "st = ( \"busy\" : container = ",
        "st = ( \"next\" : container = 10 )",
        "st = ( <unknown> : container = 11 )",
        "s = \"quote\\\"back\\\\slash-",
        "procname = \"tk_app\"",
    ] {
        assert!(text.contains(field), "no `{field}` in the printed trace");
    }
    // The trace directory itself, and an absolute path, name the trace differently.
    let dir = &trace_dirs(&w.join("trace"))[0];
    same_as_babeltrace2(&w, &[dir.to_str().unwrap()]);
    same_as_babeltrace2(&w, &[w.join("trace/ust").to_str().unwrap()]);
}

#[test]
fn libc_wrapper_events() {
    let Some(w) = scenario("libc") else { return };
    let bt = same_as_babeltrace2(&w, &["trace"]);
    assert!(lines_with(&bt.stdout, " lttng_ust_libc:malloc: ") >= 8);
    assert!(lines_with(&bt.stdout, " lttng_ust_libc:free: ") >= 8);
}

#[test]
fn python_agent_events() {
    let Some(w) = scenario("python") else { return };
    let bt = same_as_babeltrace2(&w, &["trace"]);
    assert_eq!(lines_with(&bt.stdout, " lttng_python:event: "), 17);
    assert!(lines_with(&bt.stdout, "logger_name = \"tk.other\"") == 1);
}

#[test]
fn per_pid_buffers_two_processes() {
    let Some(w) = scenario("per_pid") else { return };
    assert_eq!(
        trace_dirs(&w.join("trace")).len(),
        2,
        "one trace per process"
    );
    let bt = same_as_babeltrace2(&w, &["trace"]);
    assert_eq!(lines_with(&bt.stdout, " tk:values: "), 10);
    assert_eq!(lines_with(&bt.stdout, " tk:tick: "), 5);
}

#[test]
fn small_ring_buffers_discard_events() {
    let Some(w) = scenario("discard") else { return };
    let bt = same_as_babeltrace2(&w, &["trace"]);
    let warnings = lines_with(&bt.stderr, "WARNING: Tracer discarded ");
    assert!(
        // (babeltrace2 says "1 event between", "N events between")
        warnings > 0 && lines_with(&bt.stderr, " between [") == warnings,
        "a producer this fast must overrun 2 pages of buffer: {}",
        String::from_utf8_lossy(&bt.stderr)
    );
    // The warnings name the trace by its path below the argument, and the stream file by
    // its absolute path, whatever the argument looks like.
    let abs = w.join("trace");
    same_as_babeltrace2(&w, &[abs.to_str().unwrap()]);
    same_as_babeltrace2(&w.join("trace/ust"), &["../../trace/./ust/uid"]);
    same_as_babeltrace2(&w, &[trace_dirs(&abs)[0].to_str().unwrap()]);
    same_as_babeltrace2(&w, &["trace", "trace"]);
    // Two copies of the trace are one trace, each packet read once, whose streams are named
    // after the copy first by path (byte by byte), whatever the order of the arguments.
    let copies = w.join("copies");
    let _ = std::fs::remove_dir_all(&copies);
    for name in ["z", "a"] {
        copy_dir(&trace_dirs(&abs)[0], &copies.join(name));
    }
    let one = same_as_babeltrace2(&copies, &["z", "a"]);
    assert_eq!(one.stdout.len(), bt.stdout.len());
    same_as_babeltrace2(&copies, &["./z", "a"]);
    same_as_babeltrace2(&copies, &["."]);
}

/// Copies the files of directory `from` (not its subdirectories) to `to`, created.
fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap().flatten() {
        if e.path().is_file() {
            std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
        }
    }
}

#[test]
fn overwrite_channel_loses_packets() {
    let Some(w) = scenario("overwrite") else {
        return;
    };
    let bt = same_as_babeltrace2(&w, &["trace"]);
    assert!(
        lines_with(&bt.stderr, " packets between [") + lines_with(&bt.stderr, " packet between [")
            > 0,
        "an overwrite channel of 2 pages must lose packets: {}",
        String::from_utf8_lossy(&bt.stderr)
    );
}

/// `tracekit count`'s table: every count ends in the same column, whatever the length of the
/// event names (here shorter than the row labels).
#[test]
fn count_table_is_aligned() {
    let Some(w) = scenario("overwrite") else {
        return;
    };
    let o = run(tracekit().args(["count", "trace"]), &w);
    assert!(o.status.success());
    let text = String::from_utf8_lossy(&o.stdout);
    let rows: Vec<&str> = text
        .lines()
        .filter(|l| !l.starts_with('-') && !l.starts_with("time range"))
        .collect();
    assert!(rows.iter().any(|r| r.starts_with("tk:tick ")), "{text}");
    assert!(
        rows.iter().any(|r| r.starts_with("lost packets ")),
        "{text}"
    );
    let width = rows[0].chars().count();
    for r in &rows {
        assert_eq!(r.chars().count(), width, "misaligned row {r:?} in\n{text}");
    }
    let total: u64 = rows
        .iter()
        .find_map(|r| r.strip_prefix("total"))
        .and_then(|n| n.trim().parse().ok())
        .expect("a total row");
    let printed = run(tracekit().args(["print", "trace"]), &w);
    assert_eq!(
        total,
        String::from_utf8_lossy(&printed.stdout).lines().count() as u64
    );
}

/// Two `lttng snapshot record` outputs of one session hold the same packets: babeltrace2 reads
/// them as one trace, each packet once, and so must every tracekit command.
#[test]
fn snapshots_of_one_session_are_one_trace() {
    let Some(w) = scenario("snapshot") else {
        return;
    };
    assert_eq!(
        trace_dirs(&w.join("trace")).len(),
        2,
        "two snapshot outputs"
    );
    let bt = same_as_babeltrace2(&w, &["trace"]);
    // Every event the application emitted, once: the buffers were large enough to keep all.
    assert_eq!(lines_with(&bt.stdout, " tk:values: "), 20);
    assert_eq!(lines_with(&bt.stdout, " tk:tick: "), 2000);
    let count = run(tracekit().args(["count", "--json", "trace"]), &w);
    let v: serde_json::Value = serde_json::from_slice(&count.stdout).expect("count's JSON");
    assert_eq!(v["events"], 2020, "{v}");
    // `convert` writes the merged trace: read back, it prints the same events.
    let conv = w.join("converted");
    let _ = std::fs::remove_dir_all(&conv);
    let o = run(tracekit().args(["convert", "trace", "-o"]).arg(&conv), &w);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let again = run(tracekit().arg("print").arg(&conv), &w);
    assert_eq!(
        String::from_utf8_lossy(&again.stdout).lines().count(),
        2020,
        "{}",
        String::from_utf8_lossy(&again.stderr)
    );
    // Either snapshot alone is a trace of its own.
    for dir in trace_dirs(&w.join("trace")) {
        same_as_babeltrace2(&w, &[dir.to_str().unwrap()]);
    }
}

/// Snapshots of small overwrite buffers: each holds the last packets only; the first two
/// overlap in part (the ring was not overwritten in full between them), the last one lost
/// packets after the second.
#[test]
fn snapshots_of_a_small_ring_overlap_in_part() {
    let Some(w) = scenario("snapshot_ring") else {
        return;
    };
    let bt = same_as_babeltrace2(&w, &["trace"]);
    assert!(
        lines_with(&bt.stderr, " packets between [") + lines_with(&bt.stderr, " packet between [")
            > 0,
        "packets lost between the last two snapshots: {}",
        String::from_utf8_lossy(&bt.stderr)
    );
    let dirs = trace_dirs(&w.join("trace"));
    assert_eq!(dirs.len(), 3);
    let mut each = 0;
    for d in &dirs {
        each += lines_with(
            &same_as_babeltrace2(&w, &[d.to_str().unwrap()]).stdout,
            " tk:",
        );
    }
    let merged = lines_with(&bt.stdout, " tk:");
    assert!(
        merged < each,
        "the snapshots share packets: {merged} events, {each} in the snapshots read apart"
    );
    // The same copies named in another order.
    let args: Vec<&str> = dirs.iter().rev().map(|d| d.to_str().unwrap()).collect();
    same_as_babeltrace2(&w, &args);
}

#[test]
fn lttng_crash_of_a_killed_session() {
    let Some(w) = scenario("crash") else { return };
    let bt = same_as_babeltrace2(&w, &["trace"]);
    assert_eq!(lines_with(&bt.stdout, " tk:values: "), 10);
}

#[test]
fn trace_written_by_relayd() {
    let Some(w) = scenario("relayd") else { return };
    let bt = same_as_babeltrace2(&w, &["trace"]);
    assert_eq!(lines_with(&bt.stdout, " tk:tick: "), 100);
}

/// A trace whose `metadata` file is empty (its consumer daemon was killed before writing it):
/// babeltrace2 fails, alone or next to a readable trace, and so does tracekit, saying which
/// file holds no trace class.
#[test]
fn empty_metadata_is_an_error() {
    let Some(w) = scenario("values") else { return };
    let dir = w.join("empty-metadata");
    let _ = std::fs::remove_dir_all(&dir);
    for (name, empty) in [("good", false), ("bad", true)] {
        let to = dir.join(name);
        copy_dir(&trace_dirs(&w.join("trace"))[0], &to);
        if empty {
            std::fs::write(to.join("metadata"), b"").unwrap();
        }
    }
    for arg in ["bad", "."] {
        let bt = run(Command::new("babeltrace2").arg(arg), &dir);
        let tk = run(tracekit().args(["print", arg]), &dir);
        assert!(!bt.status.success() && !tk.status.success(), "{arg}");
        assert!(bt.stdout.is_empty() && tk.stdout.is_empty(), "{arg}");
        let err = String::from_utf8_lossy(&tk.stderr);
        assert!(
            err.contains("bad/metadata: metadata: no trace class: the file is empty"),
            "{arg}: {err}"
        );
    }
}
