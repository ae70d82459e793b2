//! `tracekit relay` with real LTTng sessions (lttng-tools 2.13, LTTng-UST) and babeltrace2's
//! live viewer, each scenario in namespaces of its own (`testkit::lttng`), concurrently:
//!
//! - `live`: a live session streams into the relay while two babeltrace2 viewers read it and
//!   garbage hits each of the three ports; both viewers print every event, the same as
//!   babeltrace2 and `tracekit print` print the trace the relay wrote;
//! - `kill`: the consumer daemon of one session is killed (SIGKILL) while it streams, while a
//!   second session (another session daemon) streams into the same relay: the second is
//!   whole, live and on disk, and what the relay wrote of the first is readable;
//! - `rotate`: a network session rotated twice (once while an application traces) and
//!   cleared once: the relay archives each chunk as lttng-relayd does, each archive reads the
//!   same with both tools, and together they hold every event emitted but the cleared ones;
//! - `clear`: a live session cleared while babeltrace2 and `tracekit print` read it live:
//!   both print every event, across the clear;
//! - `tracefile`: a live session whose channel splits its streams into files of 16 KiB, 3
//!   kept (`--tracefile-size`, `--tracefile-count`), wrapping several times while
//!   babeltrace2 and `tracekit print` read it live: both print every event, across the file
//!   rotations; the kept files are laid out and indexed as lttng-relayd writes them, and
//!   read the same with both tools.
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
# babeltrace2 and `tracekit print` reading session s live (live-bt.*, live-tk.*: output,
# errors, exit status), attached before it returns; `wait_viewers` waits for their ends.
two_viewers() {
  H=$(hostname)
  ( timeout 60 babeltrace2 --input-format=lttng-live net://127.0.0.1/host/$H/s > "$W/live-bt.txt" 2> "$W/live-bt.err"; echo $? > "$W/live-bt.rc" ) &
  V1=$!
  ( timeout 60 "$TK" print net://127.0.0.1/host/$H/s > "$W/live-tk.txt" 2> "$W/live-tk.err"; echo $? > "$W/live-tk.rc" ) &
  V2=$!
  attached s 2
}
wait_viewers() { wait $V1 $V2; }
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
    (
        "rotate",
        r#"lttng create n --set-url net://127.0.0.1 >/dev/null
lttng enable-event -u 'tk:*' >/dev/null
lttng start >/dev/null
( for r in $(seq 40); do "$APP" 0 50; [ $r != 5 ] || touch "$W/five"; done ) &
L=$!
# Rotated while the application loop runs, after five runs.
for i in $(seq 200); do [ -e "$W/five" ] && break; sleep 0.05; done
lttng rotate n > "$W/rotate1.txt"
wait $L
lttng rotate n > "$W/rotate2.txt"
# Emitted, then cleared: in no chunk.
"$APP" 7 0
lttng clear n >/dev/null
for r in $(seq 20); do "$APP" 0 50; done
lttng stop >/dev/null
lttng destroy > "$W/destroy.txt"
"#,
    ),
    (
        "clear",
        r#"lttng create s --live=200000 --set-url net://127.0.0.1 >/dev/null
lttng enable-event -u 'tk:*' >/dev/null
lttng start >/dev/null
two_viewers
for r in $(seq 20); do "$APP" 0 50; done
sleep 0.3
lttng clear s >/dev/null
for r in $(seq 20); do "$APP" 0 50; done
sleep 0.3
lttng stop >/dev/null
lttng destroy >/dev/null
wait_viewers
"#,
    ),
    (
        "tracefile",
        r#"lttng create s --live=200000 --set-url net://127.0.0.1 >/dev/null
lttng enable-channel -u --subbuf-size 8K --num-subbuf 4 --tracefile-size 16K --tracefile-count 3 c >/dev/null
lttng enable-event -u 'tk:*' -c c >/dev/null
lttng start >/dev/null
two_viewers
# Paced so that the viewers keep up: a file is deleted once the stream wraps past it.
for r in $(seq 20); do "$APP" 0 500; sleep 0.1; done
sleep 0.5
lttng stop >/dev/null
lttng destroy >/dev/null
wait_viewers
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

/// How many times each counter value of the `tk:tick` events in `out` appears.
fn ticks(out: &str) -> BTreeMap<u64, usize> {
    let mut m = BTreeMap::new();
    for l in out.lines().filter(|l| l.contains(" tk:tick: ")) {
        let n = l
            .rsplit("{ n = ")
            .next()
            .and_then(|r| r.trim_end_matches(" }").parse().ok())
            .unwrap_or_else(|| panic!("no counter in {l:?}"));
        *m.entry(n).or_insert(0) += 1;
    }
    m
}

/// Counter values 0 to 49, each `times` times: `times` runs of `tk_app 0 50`, whole.
fn runs(times: usize) -> BTreeMap<u64, usize> {
    (0..50).map(|n| (n, times)).collect()
}

/// The path `lttng` reports an archived chunk at on the relay.
fn reported_archive(w: &Path, file: &str) -> PathBuf {
    let t = text(&w.join(file));
    let path = t
        .split("is now readable on relay tcp://127.0.0.1/")
        .nth(1)
        .and_then(|r| r.split(" [").next())
        .unwrap_or_else(|| panic!("no archive path in {t:?}"));
    w.join("out").join(path)
}

#[test]
fn rotated_twice_and_cleared_archives_as_lttng_relayd() {
    let Some(w) = scenario("rotate") else { return };
    let log = text(&w.join("relay.log"));
    let dir = session_dir(&w, "n");
    // Once rotated, the session directory holds the archives only (lttng-relayd's layout).
    let top: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(top, ["archives"], "{log}");
    let mut archives: Vec<(u64, PathBuf)> = std::fs::read_dir(dir.join("archives"))
        .unwrap()
        .flatten()
        .map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            // BEGIN-END-ID, times as 20261129T112332+0000.
            let parts: Vec<&str> = name.split('-').collect();
            let stamp = |s: &str| {
                s.len() == 20
                    && s.as_bytes()[8] == b'T'
                    && matches!(s.as_bytes()[15], b'+' | b'-')
                    && s.bytes()
                        .enumerate()
                        .all(|(i, b)| i == 8 || i == 15 || b.is_ascii_digit())
            };
            // The offset's sign may be a dash: rejoin around it.
            let (begin, end, id) = match parts.as_slice() {
                [b, e, id] => (b.to_string(), e.to_string(), *id),
                [b, bo, e, eo, id] => (format!("{b}-{bo}"), format!("{e}-{eo}"), *id),
                _ => panic!("archive name {name}"),
            };
            assert!(stamp(&begin) && stamp(&end) && begin <= end, "{name}");
            (id.parse().expect("chunk id"), e.path())
        })
        .collect();
    archives.sort();
    let ids: Vec<u64> = archives.iter().map(|(id, _)| *id).collect();
    // Chunk 2 was cleared.
    assert_eq!(ids, [0, 1, 3], "{log}");
    let mut all = BTreeMap::new();
    let mut per_chunk = Vec::new();
    for (_, a) in &archives {
        let out = same_as_babeltrace2(a);
        assert!(out.status.success(), "{}", a.display());
        let out = String::from_utf8_lossy(&out.stdout).into_owned();
        assert_eq!(
            count(&out, " tk:values: "),
            0,
            "cleared events in {}",
            a.display()
        );
        let t = ticks(&out);
        per_chunk.push(t.values().sum::<usize>());
        for (n, c) in t {
            *all.entry(n).or_insert(0) += c;
        }
    }
    // Rotated while the application traced: both first chunks hold some of its events.
    assert!(per_chunk[0] >= 250 && per_chunk[1] > 0, "{per_chunk:?}");
    assert_eq!(per_chunk[2], 1000);
    assert_eq!(all, runs(60), "every event emitted but the cleared ones");
    // Where lttng says the second rotation's and the last chunk's archives are.
    assert_eq!(reported_archive(&w, "rotate2.txt"), archives[1].1);
    assert_eq!(reported_archive(&w, "destroy.txt"), archives[2].1);
}

/// Both live viewers of a scenario (babeltrace2 `bt`, tracekit `tk`) exited with status 0.
fn live_viewers_ended_well(w: &Path, log: &str) {
    for v in ["bt", "tk"] {
        assert_eq!(
            text(&w.join(format!("live-{v}.rc"))).trim(),
            "0",
            "{v}: {}\n{log}",
            text(&w.join(format!("live-{v}.err")))
        );
    }
}

#[test]
fn live_viewers_read_across_a_clear() {
    let Some(w) = scenario("clear") else { return };
    let log = text(&w.join("relay.log"));
    live_viewers_ended_well(&w, &log);
    let bt = lossy(&w.join("live-bt.txt"));
    let tk = lossy(&w.join("live-tk.txt"));
    // Every event, before and after the clear.
    assert_eq!(ticks(&bt), runs(40), "{log}");
    assert!(tk == bt, "tracekit's live print differs from babeltrace2's");
    // On disk: what came after the clear, in the session directory as before.
    let dir = session_dir(&w, "s");
    assert!(!dir.join("archives").exists());
    let written = same_as_babeltrace2(&dir);
    assert!(written.status.success());
    assert_eq!(
        ticks(&String::from_utf8_lossy(&written.stdout)),
        runs(20),
        "{log}"
    );
}

/// Index entries of `idx` (CTF index 1.1): (offset, packet size in bytes).
fn index_entries(idx: &Path) -> Vec<(u64, u64)> {
    let b = std::fs::read(idx).unwrap_or_else(|e| panic!("{}: {e}", idx.display()));
    assert!(b.len() >= 16, "{}: no header", idx.display());
    let be = |o: usize| u64::from_be_bytes(b[o..o + 8].try_into().unwrap());
    let entry = u32::from_be_bytes(b[12..16].try_into().unwrap()) as usize;
    assert!(entry >= 24, "{}: entry size {entry}", idx.display());
    assert_eq!(
        (b.len() - 16) % entry,
        0,
        "{}: partial entry",
        idx.display()
    );
    (16..b.len())
        .step_by(entry)
        .map(|o| (be(o), be(o + 8) / 8))
        .collect()
}

#[test]
fn tracefile_rotation_as_lttng_relayd_and_live_across_it() {
    let Some(w) = scenario("tracefile") else {
        return;
    };
    let log = text(&w.join("relay.log"));
    live_viewers_ended_well(&w, &log);
    let emitted: BTreeMap<u64, usize> = (0..500).map(|n| (n, 20)).collect();
    let bt = lossy(&w.join("live-bt.txt"));
    let tk = lossy(&w.join("live-tk.txt"));
    // Every event, though the files holding the first ones were deleted since.
    assert_eq!(ticks(&bt), emitted, "{log}");
    assert!(tk == bt, "tracekit's live print differs from babeltrace2's");

    // lttng-relayd's layout: per stream `c_CPU_K`, K < 3, each with `index/c_CPU_K.idx`;
    // the metadata in one file.
    let dir = session_dir(&w, "s");
    // Files only: `walk` lists directories too.
    let files = walk(&dir);
    let names: Vec<String> = files
        .iter()
        .filter(|p| p.is_file())
        .map(|p| p.strip_prefix(&dir).unwrap().to_string_lossy().into_owned())
        .collect();
    let data: Vec<&String> = names
        .iter()
        .filter(|n| !n.contains("/index/") && !n.ends_with("/metadata"))
        .collect();
    assert!(
        names.iter().filter(|n| n.ends_with("/metadata")).count() == 1,
        "{names:?}"
    );
    let mut per_stream: BTreeMap<String, Vec<u64>> = BTreeMap::new();
    for n in &data {
        let (stream, k) = n.rsplit_once('_').unwrap_or_else(|| panic!("{n}"));
        let k: u64 = k.parse().unwrap_or_else(|_| panic!("{n}: no file number"));
        assert!(k < 3, "{n}: more files than the count");
        per_stream.entry(stream.to_owned()).or_default().push(k);
        let (parent, file) = n.rsplit_once('/').unwrap();
        let idx = dir.join(parent).join("index").join(format!("{file}.idx"));
        let entries = index_entries(&idx);
        let size = std::fs::metadata(dir.join(n)).unwrap().len();
        assert!(!entries.is_empty(), "{n}: empty");
        assert!(
            size <= 16 << 10 || entries.len() == 1,
            "{n}: {size} bytes over the trace-file size"
        );
        // The file's own packets, one after the other from its start.
        let mut at = 0;
        for (offset, len) in entries {
            assert_eq!(offset, at, "{n}: index offsets");
            at += len;
        }
        assert_eq!(at, size, "{n}: indexed bytes");
    }
    assert_eq!(
        names.iter().filter(|n| n.contains("/index/")).count(),
        data.len(),
        "an index per data file and no other: {names:?}"
    );
    assert!(!per_stream.is_empty(), "{names:?}");

    // The kept files read the same with both tools: the last events, not the first ones.
    let written = same_as_babeltrace2(&dir);
    assert!(written.status.success());
    let out = String::from_utf8_lossy(&written.stdout);
    let kept: usize = ticks(&out).values().sum();
    assert!(
        kept > 0 && kept < 10_000,
        "{kept} events kept: the files did not wrap"
    );
    assert!(
        per_stream.values().any(|k| k.len() == 3),
        "no stream wrapped: {names:?}"
    );
    let last = out.lines().rev().find(|l| l.contains(" tk:tick: "));
    assert!(
        last.is_some_and(|l| l.ends_with("{ n = 499 }")),
        "the last event emitted is not the last kept: {last:?}"
    );
}
