//! `tracekit relay` with real LTTng sessions (lttng-tools 2.13, LTTng-UST) and babeltrace2's
//! live viewer, each scenario in namespaces of its own (`testkit::lttng`), concurrently:
//!
//! - `live`: a live session streams into the relay while two babeltrace2 viewers read it and
//!   garbage hits each of the three ports; both viewers print every event, the same as
//!   babeltrace2 and `tracekit print` print the trace the relay wrote;
//! - `kill`: the consumer daemon of one session is killed (SIGKILL) while it streams, while a
//!   second session (another session daemon) streams into the same relay: the second is
//!   whole, live and on disk, and what the relay wrote of the first is readable.
//!
//! Needs what `testkit::lttng` needs; skips with a message without it, except with
//! `TRACEKIT_SHARED` set (CI), where it fails.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;
use std::time::Instant;

use testkit::lttng;

/// Starts the relay in the background and waits for its live port. `attached S N` waits until
/// N viewers are attached to session S (viewers attach from the latest packet on, as they do
/// to lttng-relayd: events before that are not theirs to print), saving the list it saw.
const RELAY: &str = r#"
"$TK" relay -o "$W/out" 2> "$W/relay.log" &
for i in $(seq 100); do (exec 3<>/dev/tcp/127.0.0.1/5344) 2>/dev/null && break; sleep 0.05; done
attached() {
  for i in $(seq 300); do
    babeltrace2 --input-format=lttng-live net://127.0.0.1 > "$W/list-$1.txt" 2>&1 || true
    grep -q "/$1 (timer = .* $2 client(s) connected" "$W/list-$1.txt" && return 0
    sleep 0.05
  done
  echo "viewers of $1 did not attach" >&2; return 1
}
export -f attached
"#;

const SCENARIOS: &[(&str, &str)] = &[
    (
        "live",
        r#"lttng create s --live=200000 --set-url net://127.0.0.1 >/dev/null
lttng enable-event -u 'tk:*' >/dev/null
lttng start >/dev/null
H=$(hostname)
VIEWERS=
for v in 1 2; do
  ( timeout 60 babeltrace2 --input-format=lttng-live net://127.0.0.1/host/$H/s > "$W/live$v.txt" 2> "$W/live$v.err"; echo $? > "$W/live$v.rc" ) &
  VIEWERS="$VIEWERS $!"
done
attached s 2
"$APP" 20 300
# Garbage on every port while the session streams.
for p in 5342 5343 5344; do
  head -c 3000 /dev/zero | tr '\0' 'x' > /dev/tcp/127.0.0.1/$p || true
done
sleep 0.5
"$APP" 0 500
sleep 0.5
lttng stop >/dev/null
lttng destroy >/dev/null
wait $VIEWERS
"#,
    ),
    (
        "kill",
        r#"lttng create s1 --live=200000 --set-url net://127.0.0.1 >/dev/null
lttng enable-event -u 'tk:*' >/dev/null
lttng start >/dev/null
( while :; do "$APP" 0 2000; sleep 0.01; done ) &
LOOP=$!
# Its consumer daemon, once it streams.
for i in $(seq 100); do C1=$(pidof lttng-consumerd) && [ -e "$W/out" ] && break; sleep 0.05; done
sleep 0.5
# A second session daemon, in a mount namespace of its own, streams into the same relay.
unshare --mount --propagation private bash -c '
  set -eu
  mount -t tmpfs tmpfs /run; mkdir -p /run/lttng; mount -t tmpfs tmpfs /dev/shm
  export HOME="$W/home2" LTTNG_HOME="$W/home2"; mkdir -p "$HOME"
  lttng-sessiond --no-kernel --daemonize
  lttng create s2 --live=200000 --set-url net://127.0.0.1 >/dev/null
  lttng enable-event -u "tk:*" >/dev/null
  lttng start >/dev/null
  ( timeout 60 babeltrace2 --input-format=lttng-live net://127.0.0.1/host/$(hostname)/s2 > "$W/live2.txt" 2> "$W/live2.err"; echo $? > "$W/live2.rc" ) &
  V=$!
  attached s2 1
  "$APP" 10 400
  touch "$W/s2-first"
  sleep 1.5
  "$APP" 0 400
  sleep 0.5
  lttng stop >/dev/null
  lttng destroy >/dev/null
  wait $V
' 2> "$W/s2.log" &
S2=$!
for i in $(seq 200); do [ -e "$W/s2-first" ] && break; sleep 0.05; done
kill -9 $C1
kill $LOOP
wait $S2 || { echo "the second session failed:"; cat "$W/s2.log"; exit 1; } >&2
sleep 0.5
"#,
    ),
];

fn recordings() -> &'static BTreeMap<&'static str, Result<PathBuf, String>> {
    static REC: OnceLock<BTreeMap<&'static str, Result<PathBuf, String>>> = OnceLock::new();
    REC.get_or_init(|| {
        let start = Instant::now();
        let dir = lttng::work_dir(Path::new(env!("CARGO_TARGET_TMPDIR")), "relay-real");
        let app = match lttng::build_app(&dir) {
            Ok(app) => app,
            Err(e) => {
                return SCENARIOS
                    .iter()
                    .map(|(n, _)| (*n, Err(e.clone())))
                    .collect()
            }
        };
        let tk = PathBuf::from(env!("CARGO_BIN_EXE_tracekit"));
        let out = std::thread::scope(|s| {
            let handles: Vec<_> = SCENARIOS
                .iter()
                .map(|&(name, script)| {
                    let w = dir.join(name);
                    let (app, tk) = (&app, &tk);
                    let script = format!("{RELAY}{script}");
                    (
                        name,
                        s.spawn(move || {
                            lttng::run(&w, &script, [("APP", app), ("TK", tk)], 120).map(|_| w)
                        }),
                    )
                })
                .collect();
            handles
                .into_iter()
                .map(|(name, h)| (name, h.join().expect("recording thread")))
                .collect()
        });
        eprintln!(
            "recorded {} relay scenarios in {:.1} s",
            SCENARIOS.len(),
            start.elapsed().as_secs_f64()
        );
        out
    })
}

fn scenario(name: &str) -> Option<PathBuf> {
    if !lttng::available("the tracekit relay tests with LTTng") {
        return None;
    }
    match &recordings()[name] {
        Ok(w) => Some(w.clone()),
        Err(e) => panic!("{name}: {e}"),
    }
}

fn run(cmd: &mut Command, cwd: &Path) -> Output {
    cmd.current_dir(cwd)
        .env("TZ", "UTC")
        .output()
        .expect("command runs")
}

fn text(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The session directory the relay wrote for session `name`.
fn session_dir(w: &Path, name: &str) -> PathBuf {
    let host = std::fs::read_dir(w.join("out"))
        .unwrap()
        .flatten()
        .next()
        .expect("a host directory")
        .path();
    std::fs::read_dir(&host)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with(&format!("{name}-"))
        })
        .unwrap_or_else(|| panic!("no session {name} in {}", host.display()))
}

/// babeltrace2 and `tracekit print` on `dir`: same stdout, stderr and exit status; returns
/// babeltrace2's output.
fn same_as_babeltrace2(dir: &Path) -> Output {
    let bt = run(Command::new("babeltrace2").arg(dir), dir);
    let tk = run(
        Command::new(env!("CARGO_BIN_EXE_tracekit"))
            .arg("print")
            .arg(dir),
        dir,
    );
    assert_eq!(
        bt.status.code(),
        tk.status.code(),
        "{}: {}",
        dir.display(),
        String::from_utf8_lossy(&tk.stderr)
    );
    assert!(bt.stdout == tk.stdout, "{}: stdout differs", dir.display());
    assert!(
        bt.stderr == tk.stderr,
        "{}: stderr differs:\n{}\n{}",
        dir.display(),
        String::from_utf8_lossy(&bt.stderr),
        String::from_utf8_lossy(&tk.stderr)
    );
    bt
}

fn lossy(path: &Path) -> String {
    String::from_utf8_lossy(
        &std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display())),
    )
    .into_owned()
}

fn count(out: &str, needle: &str) -> usize {
    out.lines().filter(|l| l.contains(needle)).count()
}

#[test]
fn live_session_two_viewers_and_garbage() {
    let Some(w) = scenario("live") else { return };
    let log = text(&w.join("relay.log"));
    let dir = session_dir(&w, "s");
    let bt = same_as_babeltrace2(&dir);
    assert!(
        bt.status.success(),
        "{}",
        String::from_utf8_lossy(&bt.stderr)
    );
    let written = String::from_utf8_lossy(&bt.stdout).into_owned();
    assert_eq!(count(&written, " tk:values: "), 20);
    assert_eq!(count(&written, " tk:tick: "), 800);
    // Both viewers, at once, printed every event as they came, and ended with the session.
    for v in [1, 2] {
        assert_eq!(
            text(&w.join(format!("live{v}.rc"))).trim(),
            "0",
            "viewer {v}: {}",
            text(&w.join(format!("live{v}.err")))
        );
        assert!(
            lossy(&w.join(format!("live{v}.txt"))) == written,
            "viewer {v} printed something else than the trace on disk"
        );
    }
    let list = text(&w.join("list-s.txt"));
    assert!(
        list.contains("/s (timer = 200000, ") && list.contains("2 client(s) connected"),
        "{list}"
    );
    // Each port's garbage closed its connection, saying why.
    for what in ["control connection", "data connection", "viewer connection"] {
        assert!(
            log.lines()
                .any(|l| l.contains(what) && l.contains("closed: ")),
            "no {what} closed in:\n{log}"
        );
    }
    // Files 0600 in 0700 directories, as the recorder writes them.
    use std::os::unix::fs::PermissionsExt;
    for e in walk(&dir) {
        let mode = std::fs::metadata(&e).unwrap().permissions().mode() & 0o777;
        assert_eq!(
            mode,
            if e.is_dir() { 0o700 } else { 0o600 },
            "{}",
            e.display()
        );
    }
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = vec![dir.to_path_buf()];
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        if e.path().is_dir() {
            out.extend(walk(&e.path()));
        } else {
            out.push(e.path());
        }
    }
    out
}

#[test]
fn consumer_killed_mid_stream_other_session_unharmed() {
    let Some(w) = scenario("kill") else { return };
    let log = text(&w.join("relay.log"));
    // The other session: whole, live and on disk.
    let s2 = same_as_babeltrace2(&session_dir(&w, "s2"));
    assert!(s2.status.success());
    let written = String::from_utf8_lossy(&s2.stdout).into_owned();
    assert_eq!(count(&written, " tk:values: "), 10, "{log}");
    assert_eq!(count(&written, " tk:tick: "), 800);
    assert_eq!(
        text(&w.join("live2.rc")).trim(),
        "0",
        "{}",
        text(&w.join("live2.err"))
    );
    assert!(lossy(&w.join("live2.txt")) == written);
    // The killed session's trace reads the same with both tools: no torn packet in it.
    let s1 = same_as_babeltrace2(&session_dir(&w, "s1"));
    assert!(
        s1.status.success(),
        "{}\n{log}",
        String::from_utf8_lossy(&s1.stderr)
    );
    assert!(count(&String::from_utf8_lossy(&s1.stdout), " tk:tick: ") > 0);
    assert!(log.contains("/s1: its producer is gone with "), "{log}");
    assert!(log.lines().any(|l| l.ends_with("/s2 ended")), "{log}");
}
