//! The `tracekit` binary end to end, on traces it generates itself (`tracekit gen`) in
//! temporary directories.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

mod common;
use common::{have, ok};

fn tracekit(args: &[&dyn AsRef<std::ffi::OsStr>]) -> Output {
    let mut c = common::command();
    for a in args {
        c.arg(a);
    }
    c.output().expect("tracekit runs")
}

fn gen_client_server(dir: &Path, seed: u64) {
    ok(tracekit(&[
        &"gen",
        &"client-server",
        &"-o",
        &dir,
        &"--seed",
        &seed.to_string(),
        &"--requests",
        &"8",
    ]));
}

fn gen_kernel_mix(dir: &Path, seed: u64, events: u64) {
    ok(tracekit(&[
        &"gen",
        &"kernel-mix",
        &"-o",
        &dir,
        &"--seed",
        &seed.to_string(),
        &"--events",
        &events.to_string(),
        &"--cpus",
        &"2",
    ]));
}

/// Every file below `root` with its bytes, by relative path.
fn files(root: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.insert(
                    p.strip_prefix(root).unwrap().to_path_buf(),
                    std::fs::read(&p).unwrap(),
                );
            }
        }
    }
    out
}

/// Nanoseconds since midnight of a `[HH:MM:SS.nnnnnnnnn] …` line.
fn time_of_day(line: &str) -> i64 {
    let t = line
        .strip_prefix('[')
        .and_then(|l| l.get(..18))
        .unwrap_or_else(|| panic!("no timestamp in {line:?}"));
    let b = t.as_bytes();
    assert_eq!((b[2], b[5], b[8]), (b':', b':', b'.'), "{line:?}");
    let n = |s: &str| s.parse::<i64>().unwrap_or_else(|_| panic!("{line:?}"));
    ((n(&t[0..2]) * 60 + n(&t[3..5])) * 60 + n(&t[6..8])) * 1_000_000_000 + n(&t[9..18])
}

/// The event class name of a printed line: `[time] (+delta) host name: { … }`.
fn class_of(line: &str) -> &str {
    let rest = line.split_once(") ").expect("delta").1;
    let head = rest.split_once(": ").expect("name").0;
    head.rsplit(' ').next().unwrap()
}

/// A line without its `(+delta)`, which depends on the previous line printed.
fn without_delta(line: &str) -> String {
    let (a, rest) = line.split_once(" (").unwrap();
    let (_, b) = rest.split_once(") ").unwrap();
    format!("{a} {b}")
}

fn count_json(path: &Path) -> serde_json::Value {
    let out = ok(tracekit(&[&"count", &"--json", &path]));
    serde_json::from_str(&out).expect("count --json prints JSON")
}

fn check_count_matches_print(path: &Path) {
    let counts = count_json(path);
    let printed = ok(tracekit(&[&"print", &"--clock-gmt", &path]));
    let lines: Vec<&str> = printed.lines().collect();
    assert!(!lines.is_empty());
    assert_eq!(counts["events"].as_u64().unwrap(), lines.len() as u64);
    assert_eq!(counts["errors"].as_array().unwrap().len(), 0);
    let mut by_class: BTreeMap<String, u64> = BTreeMap::new();
    for l in &lines {
        *by_class.entry(class_of(l).to_string()).or_default() += 1;
    }
    let json: BTreeMap<String, u64> = counts["classes"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, v)| (k.clone(), v.as_u64().unwrap()))
        .collect();
    assert_eq!(json, by_class);
    let total: u64 = json.values().sum();
    assert_eq!(total, lines.len() as u64);
}

#[test]
fn count_json_agrees_with_print() {
    let tmp = tempfile::tempdir().unwrap();
    let cs = tmp.path().join("cs");
    gen_client_server(&cs, 11);
    check_count_matches_print(&cs);
    let km = tmp.path().join("km");
    gen_kernel_mix(&km, 5, 3000);
    check_count_matches_print(&km);
}

#[test]
fn print_of_many_hosts_is_time_ordered() {
    let tmp = tempfile::tempdir().unwrap();
    let cs = tmp.path().join("cs");
    gen_client_server(&cs, 12);
    let hosts = testkit::trace_dirs(&cs);
    assert!(hosts.len() >= 2, "{hosts:?}");
    let printed = ok(tracekit(&[&"print", &"--clock-gmt", &cs]));
    let times: Vec<i64> = printed.lines().map(time_of_day).collect();
    assert!(times.len() > 100);
    for (i, w) in times.windows(2).enumerate() {
        assert!(w[0] <= w[1], "line {} goes back in time", i + 2);
    }
    // Every host is in the merged output.
    for h in &hosts {
        let name = h.file_name().unwrap().to_str().unwrap();
        assert!(
            printed.lines().any(|l| l.contains(&format!(" {name} "))),
            "host {name} missing"
        );
    }
}

#[test]
fn print_begin_end_keeps_exactly_the_range() {
    let tmp = tempfile::tempdir().unwrap();
    let cs = tmp.path().join("cs");
    gen_client_server(&cs, 13);
    let all = ok(tracekit(&[&"print", &"--clock-gmt", &cs]));
    let lines: Vec<&str> = all.lines().collect();
    let n = lines.len();
    assert!(n > 100);
    let begin_ns = count_json(&cs)["begin_ns"].as_i64().unwrap();
    let day = begin_ns - begin_ns.rem_euclid(86_400_000_000_000);
    let (lo, hi) = (time_of_day(lines[n / 4]), time_of_day(lines[3 * n / 4]));
    assert!(
        time_of_day(lines[0]) < lo && lo < hi,
        "day wrap in the trace"
    );
    let want: Vec<String> = lines
        .iter()
        .filter(|l| (lo..=hi).contains(&time_of_day(l)))
        .map(|l| without_delta(l))
        .collect();
    assert!(want.len() >= n / 2);

    let hms = |t: i64| {
        let s = t / 1_000_000_000;
        format!(
            "{:02}:{:02}:{:02}.{:09}",
            s / 3600,
            s / 60 % 60,
            s % 60,
            t % 1_000_000_000
        )
    };
    let epoch = |t: i64| {
        let e = day + t;
        format!("{}.{:09}", e / 1_000_000_000, e % 1_000_000_000)
    };
    for (b, e) in [(hms(lo), hms(hi)), (epoch(lo), epoch(hi))] {
        let got = ok(tracekit(&[
            &"print",
            &"--clock-gmt",
            &"--begin",
            &b,
            &"--end",
            &e,
            &cs,
        ]));
        let got: Vec<String> = got.lines().map(without_delta).collect();
        assert_eq!(got.len(), want.len(), "--begin {b} --end {e}");
        assert_eq!(got.first(), want.first(), "first line, --begin {b}");
        assert_eq!(got.last(), want.last(), "last line, --end {e}");
        assert_eq!(got, want, "--begin {b} --end {e}");
    }
}

/// Copies trace `from` to `to`, leaving out its `index/` directory.
fn copy_without_index(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        if e.file_type().unwrap().is_file() {
            std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
        }
    }
}

/// With the LTTng indexes `gen` writes, `print --begin` starts each stream at the first packet
/// that reaches the time: what it prints is what it prints reading every packet.
#[test]
fn print_begin_with_indexes_is_print_begin_without() {
    let tmp = tempfile::tempdir().unwrap();
    let km = tmp.path().join("km");
    gen_kernel_mix(&km, 5, 120_000);
    assert!(km.join("index").is_dir());
    let bare = tmp.path().join("bare");
    copy_without_index(&km, &bare);
    let json = count_json(&km);
    let (b, e) = (
        json["begin_ns"].as_i64().unwrap(),
        json["end_ns"].as_i64().unwrap(),
    );
    for pct in [30, 75, 99] {
        let at = b + (e - b) / 100 * pct;
        let epoch = format!("{}.{:09}", at / 1_000_000_000, at % 1_000_000_000);
        // A time of day takes the first event's date (GMT here).
        let s = at.rem_euclid(86_400_000_000_000) / 1_000_000_000;
        let hms = format!(
            "{:02}:{:02}:{:02}.{:09}",
            s / 3600,
            s / 60 % 60,
            s % 60,
            at % 1_000_000_000
        );
        for begin in [&epoch, &hms] {
            let args = |t: &Path| -> Output {
                tracekit(&[&"print", &"--clock-gmt", &"--begin", begin, &t])
            };
            let (with, without) = (ok(args(&km)), ok(args(&bare)));
            assert!(with.lines().count() > 10, "--begin {begin}");
            assert!(with == without, "--begin {begin}: the outputs differ");
        }
    }
}

#[test]
fn gen_is_deterministic() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    gen_client_server(&t.join("a"), 21);
    gen_client_server(&t.join("b"), 21);
    gen_client_server(&t.join("c"), 22);
    let (a, b, c) = (
        files(&t.join("a")),
        files(&t.join("b")),
        files(&t.join("c")),
    );
    assert!(a.len() > 3);
    assert_eq!(a.keys().collect::<Vec<_>>(), b.keys().collect::<Vec<_>>());
    for (k, v) in &a {
        assert!(b[k] == *v, "{} differs with the same seed", k.display());
    }
    assert_ne!(a, c, "a different seed gives the same client-server trace");

    gen_kernel_mix(&t.join("ka"), 21, 2000);
    gen_kernel_mix(&t.join("kb"), 21, 2000);
    gen_kernel_mix(&t.join("kc"), 22, 2000);
    let (a, b, c) = (
        files(&t.join("ka")),
        files(&t.join("kb")),
        files(&t.join("kc")),
    );
    assert_eq!(a, b, "kernel-mix differs with the same seed");
    assert_ne!(a, c, "a different seed gives the same kernel-mix trace");
}

#[test]
fn gen_into_an_unwritable_path_fails_naming_it() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("a-regular-file");
    std::fs::write(&file, b"not a directory").unwrap();
    let target = file.join("trace");
    for scenario in ["client-server", "kernel-mix"] {
        let o = tracekit(&[&"gen", &scenario, &"-o", &target, &"--events", &"100"]);
        assert!(!o.status.success(), "{scenario}: gen succeeded");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            err.contains(file.to_str().unwrap()),
            "{scenario}: the error does not name the path: {err}"
        );
    }
}

#[test]
fn print_of_a_missing_path_fails_naming_it() {
    let tmp = tempfile::tempdir().unwrap();
    let missing = tmp.path().join("no-such-trace");
    let o = tracekit(&[&"print", &missing]);
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains(missing.to_str().unwrap()), "{err}");
    assert!(o.stdout.is_empty());
}

#[test]
fn demo_mentions_every_host() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("demo");
    let out = ok(tracekit(&[&"demo", &"--dir", &dir]));
    let hosts = testkit::trace_dirs(&dir);
    assert!(hosts.len() >= 2, "{hosts:?}");
    for h in hosts {
        let name = h.file_name().unwrap().to_str().unwrap();
        assert!(
            out.contains(name),
            "demo output does not mention {name}:\n{out}"
        );
    }
    // The clocks it recovers are closer to the truth than the smallest network delay.
    let line = out
        .lines()
        .find(|l| l.starts_with("worst error"))
        .unwrap_or_else(|| panic!("no sync summary in:\n{out}"));
    let nums: Vec<f64> = line
        .split_whitespace()
        .filter_map(|w| w.parse().ok())
        .collect();
    assert_eq!(nums.len(), 2, "{line}");
    assert!(
        nums[0] < nums[1],
        "sync error above the min one-way delay: {line}"
    );
}

#[test]
fn print_is_byte_identical_to_babeltrace2() {
    if !have("babeltrace2") {
        println!("babeltrace2 is not installed: comparison skipped");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let cs = tmp.path().join("cs");
    gen_client_server(&cs, 14);
    let km = tmp.path().join("km");
    gen_kernel_mix(&km, 14, 3000);
    let mut dirs = testkit::trace_dirs(&cs);
    dirs.truncate(1);
    dirs.push(km);
    for d in dirs {
        let bt = Command::new("babeltrace2")
            .arg(&d)
            .env("TZ", "UTC")
            .output()
            .unwrap();
        assert!(
            bt.status.success(),
            "babeltrace2: {}",
            String::from_utf8_lossy(&bt.stderr)
        );
        let tk = ok(tracekit(&[&"print", &d]));
        let bt = String::from_utf8(bt.stdout).unwrap();
        if tk != bt {
            let first = tk
                .lines()
                .zip(bt.lines())
                .position(|(a, b)| a != b)
                .unwrap_or(tk.lines().count().min(bt.lines().count()));
            panic!(
                "{}: outputs differ from line {}:\ntracekit:   {:?}\nbabeltrace: {:?}",
                d.display(),
                first + 1,
                tk.lines().nth(first),
                bt.lines().nth(first)
            );
        }
    }
}

#[test]
fn print_snapshot_of_a_small_trace() {
    let tmp = tempfile::tempdir().unwrap();
    let km = tmp.path().join("km");
    gen_kernel_mix(&km, 9, 40);
    let out = ok(tracekit(&[&"print", &"--clock-gmt", &km]));
    insta::assert_snapshot!("kernel_mix_seed9_40_events", out);
}

/// A trace directory holding trace A's metadata and streams plus the stream files of a trace B
/// of the other byte order (the way the shared `many-threads` was once damaged): `print` and
/// `count` deliver every event of A, name each of B's files with a byte offset and the byte
/// order problem, and fail.
#[test]
fn foreign_streams_are_reported_and_the_rest_is_read() {
    // Foreign files sorting after the trace's own, then before them (their garbage stream ids
    // must not chain them in front of a sound file of the same ids).
    foreign_streams("other_");
    foreign_streams("0_other_");
}

fn foreign_streams(prefix: &str) {
    use ctf::ir::ByteOrder;
    let tmp = tempfile::tempdir().unwrap();
    let (a, b, mixed) = (
        tmp.path().join("a"),
        tmp.path().join("b"),
        tmp.path().join("mixed"),
    );
    let events = testkit::write_small_trace(&a, ByteOrder::Big, 1);
    testkit::write_small_trace(&b, ByteOrder::Little, 2);
    testkit::mix_traces_with_prefix(&a, &b, &mixed, prefix);
    let alone = ok(tracekit(&[&"print", &a]));
    assert_eq!(alone.lines().count() as u64, events);
    let foreign: Vec<PathBuf> = (0..2)
        .map(|cpu| mixed.join(format!("{prefix}chan_{cpu}")))
        .collect();

    let o = tracekit(&[&"print", &mixed]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success(), "print succeeded: {err}");
    assert_eq!(String::from_utf8_lossy(&o.stdout), alone, "{err}");
    for f in &foreign {
        let want = format!(
            "{}: at byte 0: bad packet magic number 0xc11ffcc1 (the CTF magic byte-swapped: the \
             stream's byte order differs from the metadata's",
            f.display()
        );
        assert!(err.contains(&want), "no `{want}` in:\n{err}");
    }

    // The analyses (the kernel-model pass and the period engine's) cover what is readable,
    // say what is not, and fail.
    let switch = "switch : $evt.$name == \"sched_switch\" : $evt.$name == \"sched_switch\"";
    for args in [
        vec!["analyze", "cputop", "--mi"],
        vec!["analyze", "periodlog", "--period", switch, "--mi"],
    ] {
        let run = |dir: &PathBuf| {
            let mut v: Vec<&dyn AsRef<std::ffi::OsStr>> = args
                .iter()
                .map(|a| a as &dyn AsRef<std::ffi::OsStr>)
                .collect();
            v.push(dir);
            tracekit(&v)
        };
        let alone = ok(run(&a));
        let o = run(&mixed);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success(), "{args:?} succeeded: {err}");
        assert_eq!(String::from_utf8_lossy(&o.stdout), alone, "{args:?}: {err}");
        for f in &foreign {
            let at = format!("tracekit analyze: error: {}: at byte 0: ", f.display());
            assert!(err.contains(&at), "{args:?}: no `{at}` in:\n{err}");
        }
    }

    let o = tracekit(&[&"count", &"--json", &mixed]);
    assert!(!o.status.success(), "count succeeded");
    let counts: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON counts");
    assert_eq!(counts["events"], events, "{counts}");
    let errors: Vec<&str> = counts["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e.as_str().unwrap())
        .collect();
    assert_eq!(errors.len(), foreign.len(), "{errors:?}");
    for f in &foreign {
        let at = format!("{}: at byte 0: ", f.display());
        assert!(errors.iter().any(|e| e.starts_with(&at)), "{errors:?}");
    }
}

/// The heap set-up (`pipeline::heap`): where the kernel offers transparent huge pages, a running
/// `tracekit` has a `[heap]` mapping advised for them (`hg` in its smaps flags) and its
/// allocations are there. Linux with glibc only; says so and checks nothing when huge pages
/// are off.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[test]
fn the_heap_is_advised_for_huge_pages_where_the_kernel_offers_them() {
    let thp =
        std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/enabled").unwrap_or_default();
    if !thp.contains("[always]") && !thp.contains("[madvise]") {
        eprintln!("transparent huge pages are off here ({thp:?}): nothing to check");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("t");
    gen_kernel_mix(&trace, 3, 100_000);
    // `print` into a pipe nobody reads: once the pipe is full it waits, with its heap built.
    let mut child = common::command()
        .arg("print")
        .arg(&trace)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("tracekit runs");
    let smaps = format!("/proc/{}/smaps", child.id());
    // (flags, resident KiB) of each `[heap]` mapping.
    let heaps = || -> Vec<(String, u64)> {
        let text = std::fs::read_to_string(&smaps).unwrap_or_default();
        let mut out = Vec::new();
        let mut in_heap = false;
        let mut rss = 0;
        for line in text.lines() {
            let first = line.split_whitespace().next().unwrap_or("");
            if first.contains('-') && !first.ends_with(':') {
                in_heap = line.ends_with("[heap]");
            } else if in_heap && first == "Rss:" {
                rss = line.split_whitespace().nth(1).unwrap().parse().unwrap();
            } else if in_heap && first == "VmFlags:" {
                out.push((line.to_string(), rss));
            }
        }
        out
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    let mut seen = heaps();
    while !seen
        .iter()
        .any(|(flags, rss)| flags.contains(" hg") && *rss > 1024)
        && std::time::Instant::now() < deadline
    {
        std::thread::sleep(std::time::Duration::from_millis(20));
        seen = heaps();
    }
    let _ = child.kill();
    let _ = child.wait();
    assert!(
        seen.iter()
            .any(|(flags, rss)| flags.contains(" hg") && *rss > 1024),
        "no [heap] mapping advised for huge pages and holding over 1 MiB: {seen:?}"
    );
}

/// Runs tracekit with the umask most users have (022), which would leave its outputs
/// readable by every user.
fn tracekit_umask_022(args: &[&dyn AsRef<std::ffi::OsStr>]) -> Output {
    let mut c = Command::new("sh");
    c.env("TZ", "UTC")
        .args(["-c", "umask 022; exec \"$0\" \"$@\""])
        .arg(env!("CARGO_BIN_EXE_tracekit"));
    for a in args {
        c.arg(a);
    }
    c.output().expect("tracekit runs")
}

/// Every file under `root` (and `root` itself) with its permission bits.
fn modes_under(root: &Path) -> Vec<(PathBuf, u32)> {
    use std::os::unix::fs::PermissionsExt;
    let mut out = Vec::new();
    let mut todo = vec![root.to_path_buf()];
    while let Some(p) = todo.pop() {
        let m = std::fs::metadata(&p).unwrap();
        if m.is_dir() {
            todo.extend(std::fs::read_dir(&p).unwrap().map(|e| e.unwrap().path()));
        }
        out.push((p, m.permissions().mode() & 0o777));
    }
    out
}

/// What tracekit writes from a trace (a generated trace, a conversion, the exports, a
/// printed text) is its owner's alone, whatever the umask: 0600 files in 0700 directories,
/// new parent directories included.
#[test]
fn outputs_are_private_whatever_the_umask() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("new/parents");
    let trace = out.join("gen");
    ok(tracekit_umask_022(&[
        &"gen",
        &"kernel-mix",
        &"-o",
        &trace,
        &"--events",
        &"2000",
        &"--seed",
        &"3",
    ]));
    ok(tracekit_umask_022(&[
        &"convert",
        &"-o",
        &out.join("converted"),
        &trace,
    ]));
    ok(tracekit_umask_022(&[
        &"print",
        &"-w",
        &out.join("printed.txt"),
        &trace,
    ]));
    let mut formats = Vec::new();
    if cfg!(feature = "parquet") {
        formats.push("parquet");
    }
    if cfg!(feature = "perfetto") {
        formats.push("perfetto");
    }
    for f in formats {
        ok(tracekit_umask_022(&[
            &"export",
            &"--format",
            &f,
            &"-o",
            &out.join(f),
            &trace,
        ]));
    }
    let all = modes_under(&tmp.path().join("new"));
    assert!(all.len() > 20, "{all:?}");
    for (p, mode) in all {
        let want = if p.is_dir() { 0o700 } else { 0o600 };
        assert_eq!(mode, want, "{}: mode {mode:o}", p.display());
    }
}
