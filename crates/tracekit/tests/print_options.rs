//! `tracekit print` with babeltrace2's `text.pretty` options (`--names`, `--fields`,
//! `--no-delta`, `--clock-*`, `--color`, `-o`, `-w`) against `babeltrace2` with the same
//! options, line by line: every option, and some combinations, on every shared trace (the
//! first [`CAP`] lines of each, bounded `--begin`/`--end` windows of the large ones), and on
//! generated UST-like traces for what the shared ones lack (EMF URIs, several per-process
//! traces under one input).
//!
//! babeltrace2 2.0.4 defects tolerated, as in `conformance.rs`: an empty string printed as
//! the previous event's string; times off by a nanosecond or two (deltas) on clocks other
//! than 1 GHz.

mod common;

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// Lines compared per run: enough for every kind of event line of a trace's start, few enough
/// to keep the sweep short on large traces.
const CAP: usize = 1500;

/// What a run printed: its first lines (at most the cap), its standard error, whether it ran
/// to its end (not cut at the cap) and succeeded.
struct Run {
    lines: Vec<String>,
    stderr: String,
    complete: bool,
    ok: bool,
}

/// Runs `cmd` (with `TZ=UTC` unless `env` sets it), reading at most `cap` lines of its
/// output; the process is killed once they are read.
fn run_capped(mut cmd: Command, env: &[(&str, &str)], cap: usize) -> Run {
    cmd.env("TZ", "UTC")
        .env_remove("BABELTRACE_TERM_COLOR")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().expect("command runs");
    let mut err = child.stderr.take().expect("piped stderr");
    let err_reader = std::thread::spawn(move || {
        let mut s = Vec::new();
        let _ = err.read_to_end(&mut s);
        String::from_utf8_lossy(&s).into_owned()
    });
    let mut out = BufReader::new(child.stdout.take().expect("piped stdout"));
    let mut lines = Vec::new();
    let mut complete = true;
    let mut buf = Vec::new();
    loop {
        buf.clear();
        match out.read_until(b'\n', &mut buf) {
            Ok(0) | Err(_) => break,
            Ok(_) => {
                if lines.len() == cap {
                    complete = false;
                    break;
                }
                let l = String::from_utf8_lossy(&buf);
                lines.push(l.strip_suffix('\n').unwrap_or(&l).to_string());
            }
        }
    }
    if !complete {
        let _ = child.kill();
    }
    drop(out);
    let status = child.wait().expect("command ends");
    let stderr = err_reader.join().expect("stderr read");
    Run {
        lines,
        stderr,
        complete,
        ok: complete && status.success(),
    }
}

/// Whether the lines differ only in numbers off by at most 2 (times and deltas of clocks
/// other than 1 GHz, converted with `double` arithmetic by babeltrace2).
fn numbers_near(bt: &str, tk: &str) -> bool {
    fn tokens(s: &str) -> Vec<(bool, &str)> {
        let mut out = Vec::new();
        let mut start = 0;
        let b = s.as_bytes();
        for i in 1..=b.len() {
            if i == b.len() || b[i].is_ascii_digit() != b[start].is_ascii_digit() {
                out.push((b[start].is_ascii_digit(), &s[start..i]));
                start = i;
            }
        }
        out
    }
    let (a, b) = (tokens(bt), tokens(tk));
    a.len() == b.len()
        && a.iter().zip(&b).all(|(&(da, x), &(db, y))| {
            x == y
                || (da
                    && db
                    && x.len() == y.len()
                    && match (x.parse::<u128>(), y.parse::<u128>()) {
                        (Ok(p), Ok(q)) => p.abs_diff(q) <= 2,
                        _ => false,
                    })
        })
}

/// The loss warnings of a standard error.
fn warnings(s: &str) -> Vec<&str> {
    s.lines()
        .filter(|l| l.contains("Tracer discarded"))
        .collect()
}

/// Compares the runs of one case; `what` names it.
fn compare(what: &str, bt: &Run, tk: &Run, non_ghz: bool) -> Result<(), String> {
    if bt.complete && tk.complete && bt.ok && bt.lines.len() != tk.lines.len() {
        return Err(format!(
            "{what}: babeltrace2 printed {} lines, tracekit {}",
            bt.lines.len(),
            tk.lines.len()
        ));
    }
    if !bt.complete && tk.lines.len() < bt.lines.len() {
        return Err(format!(
            "{what}: tracekit printed {} lines, babeltrace2 more than {}",
            tk.lines.len(),
            bt.lines.len()
        ));
    }
    for (i, (b, t)) in bt.lines.iter().zip(&tk.lines).enumerate() {
        if b == t || common::empty_string_reuse(b, t) || (non_ghz && numbers_near(b, t)) {
            continue;
        }
        return Err(format!(
            "{what}: line {}:\n  babeltrace2: {b:?}\n  tracekit:    {t:?}",
            i + 1
        ));
    }
    if bt.complete && tk.complete && bt.ok && warnings(&bt.stderr) != warnings(&tk.stderr) {
        return Err(format!(
            "{what}: loss warnings differ:\n  babeltrace2: {:?}\n  tracekit:    {:?}",
            warnings(&bt.stderr),
            warnings(&tk.stderr)
        ));
    }
    Ok(())
}

/// One comparison: the options, given to both tools, and the environment.
struct Case {
    args: Vec<String>,
    env: Vec<(&'static str, &'static str)>,
}

fn case(args: &[&str]) -> Case {
    Case {
        args: args.iter().map(|s| s.to_string()).collect(),
        env: Vec::new(),
    }
}

fn case_env(args: &[&str], env: &[(&'static str, &'static str)]) -> Case {
    Case {
        env: env.to_vec(),
        ..case(args)
    }
}

/// Every option on its own, and combinations whose parts interact.
fn cases() -> Vec<Case> {
    let always = [("BABELTRACE_TERM_COLOR", "always")];
    let kolkata = [("TZ", "Asia/Kolkata")];
    let mut v: Vec<Case> = [
        "--names=none",
        "--names=payload",
        "--names=context",
        "--names=scope",
        "--names=header",
        "--names=all",
        "--names=payload,scope",
        "--fields=trace",
        "--fields=trace:hostname",
        "--fields=trace:domain",
        "--fields=trace:procname",
        "--fields=trace:vpid",
        "--fields=loglevel",
        "--fields=emf",
        "--fields=callsite",
        "--fields=all",
        "--no-delta",
        "--clock-cycles",
        "--clock-seconds",
        "--clock-date",
        "-o",
    ]
    .iter()
    .map(|a| {
        if *a == "-o" {
            case(&["-o", "text"])
        } else {
            case(&[a])
        }
    })
    .collect();
    v.extend([
        case(&["--clock-offset", "3"]),
        case(&["--clock-offset-ns", "-1500"]),
        case(&["--clock-offset", "-2", "--clock-offset-ns", "2000000001"]),
        case(&["--clock-cycles", "--no-delta"]),
        case(&["--names=header", "--clock-cycles"]),
        case(&["--names=all", "--fields=all", "--clock-seconds"]),
        case(&["--names=none", "--fields=trace,loglevel", "--no-delta"]),
        case_env(&["--clock-date"], &kolkata),
        case_env(&["--clock-date", "--clock-gmt"], &kolkata),
        case_env(&["--color=always"], &always),
        case_env(&["--color=never"], &always),
        case_env(&["--names=all", "--fields=all", "--color=auto"], &always),
        case(&["--color=always"]),
    ]);
    v
}

/// The first event's time of `dir` in seconds (`--clock-seconds`), if it has a clock.
fn first_seconds(dir: &Path) -> Option<(i64, i64)> {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_tracekit"));
    cmd.args(["print", "--clock-seconds", "--no-delta"])
        .arg(dir);
    let r = run_capped(cmd, &[], 1);
    let t = r
        .lines
        .first()?
        .strip_prefix('[')?
        .split_once(']')?
        .0
        .to_string();
    let (s, ns) = t.split_once('.')?;
    Some((s.parse().ok()?, ns.parse().ok()?))
}

/// Cases of a window of `dir` from its first event's time on: `--begin`/`--end` with other
/// options.
fn window_cases(dir: &Path) -> Vec<Case> {
    let Some((s, ns)) = first_seconds(dir) else {
        return Vec::new();
    };
    let at = |plus_ms: i64| {
        let t = s as i128 * 1_000_000_000 + ns as i128 + plus_ms as i128 * 1_000_000;
        format!(
            "{}.{:09}",
            t.div_euclid(1_000_000_000),
            t.rem_euclid(1_000_000_000)
        )
    };
    let (b, e) = (at(2), at(40));
    [
        vec!["--names=all", "--fields=all"],
        vec!["--clock-cycles", "--no-delta"],
        vec!["--clock-date", "--clock-gmt", "--names=header"],
        vec!["--clock-offset", "1", "--clock-seconds"],
    ]
    .into_iter()
    .map(|mut a| {
        a.extend(["--begin", &b, "--end", &e]);
        case(&a)
    })
    .collect()
}

/// Runs `jobs` (trace, its name, whether its clocks are other than 1 GHz, a case) on a few
/// threads; the failures.
fn sweep(jobs: Vec<(PathBuf, String, bool, Case)>) -> Vec<String> {
    let next = AtomicUsize::new(0);
    let failures = Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..4 {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some((dir, name, non_ghz, c)) = jobs.get(i) else {
                    break;
                };
                let mut bt = Command::new("babeltrace2");
                bt.args(&c.args).arg(dir);
                let mut tk = Command::new(env!("CARGO_BIN_EXE_tracekit"));
                tk.arg("print").args(&c.args).arg(dir);
                let bt = run_capped(bt, &c.env, CAP);
                if !bt.ok && bt.lines.is_empty() {
                    // babeltrace2 cannot read it (`conformance.rs` checks tracekit there).
                    continue;
                }
                let tk = run_capped(tk, &c.env, CAP);
                let what = format!("{name} {} {:?}", c.args.join(" "), c.env);
                if let Err(e) = compare(&what, &bt, &tk, *non_ghz) {
                    failures.lock().unwrap().push(e);
                }
            });
        }
    });
    failures.into_inner().unwrap()
}

fn non_ghz(dir: &Path) -> bool {
    std::fs::read(dir.join("metadata"))
        .ok()
        .and_then(|m| ctf::metadata::parse(&m).ok())
        .is_some_and(|tc| tc.clocks.iter().any(|c| c.freq != 1_000_000_000))
}

#[test]
fn options_match_babeltrace2_on_shared_traces() {
    let Some(shared) = testkit::shared_or_skip("the print options' babeltrace2 comparison") else {
        return;
    };
    assert!(testkit::tool_or_skip(
        "babeltrace2",
        "apt install babeltrace2",
        "the print options' comparison"
    ));
    let started = std::time::Instant::now();
    let dirs = common::shared_trace_dirs(&shared);
    let mut jobs = Vec::new();
    let mut windows = 0;
    for d in &dirs {
        let name = d.strip_prefix(&shared).unwrap_or(d).display().to_string();
        let ghz = non_ghz(d);
        for c in cases() {
            jobs.push((d.clone(), name.clone(), ghz, c));
        }
        // Large traces (what the cap cuts) also in windows, whole.
        let size: u64 = std::fs::read_dir(d)
            .map(|rd| {
                rd.flatten()
                    .filter_map(|e| e.metadata().ok())
                    .map(|m| m.len())
                    .sum()
            })
            .unwrap_or(0);
        if size > 1 << 20 {
            for c in window_cases(d) {
                windows += 1;
                jobs.push((d.clone(), name.clone(), ghz, c));
            }
        }
    }
    assert!(
        windows >= 8,
        "expected windows of the large traces, made {windows}"
    );
    let n = jobs.len();
    let failures = sweep(jobs);
    eprintln!(
        "compared {n} runs ({} traces, {windows} windows) in {:.1} s",
        dirs.len(),
        started.elapsed().as_secs_f64()
    );
    assert!(
        failures.is_empty(),
        "{} of {n} runs differ:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// A small UST-like per-process trace of process `vpid` (`procname`): log levels and EMF URIs
/// on its event classes, the `ust` domain.
fn write_ust_like(dir: &Path, vpid: i32, procname: &str, uuid_byte: u8) {
    use ctf::ir::EnvValue;
    use ctf::writer::{EventHeaderKind, TraceWriter, WriterOptions};
    use kernel::lttng::{ev, trace_class, HostInfo, NetLayout};
    use scenario::common::{read_entry, read_exit, switch, Task};
    let host = HostInfo {
        hostname: "box".into(),
        trace_uuid: [uuid_byte; 16],
        clock_uuid: [7; 16],
        clock_offset_ns: 1_700_000_000_123_456_789,
        creation: "20240305T101500+0000".into(),
        trace_name: "app".into(),
        kernel_release: "6.1.0".into(),
    };
    let mut tc = trace_class(&host, NetLayout::NetworkHeader, EventHeaderKind::Compact);
    for (k, v) in tc.env.iter_mut() {
        if k == "domain" {
            *v = EnvValue::Str("ust".into());
        }
    }
    tc.env
        .push(("procname".into(), EnvValue::Str(procname.into())));
    tc.env.push(("vpid".into(), EnvValue::Int(vpid.into())));
    for (k, e) in tc
        .streams
        .get_mut(&0)
        .unwrap()
        .events
        .values_mut()
        .enumerate()
    {
        e.loglevel = (k % 3 != 2).then_some((k % 15) as i64);
        if k % 2 == 0 {
            e.model_emf_uri = Some(format!("http://example.com/{}", e.name));
        }
    }
    let mut w = TraceWriter::create(dir, &tc, 2, &WriterOptions::default()).unwrap();
    let (s0, s1) = (Task::swapper(0), Task::swapper(1));
    let a = Task::new(vpid, vpid, procname);
    let base = vpid as u64 * 10;
    let evs = [
        (0, ev::SCHED_SWITCH, base + 1000, switch(&s0, 0, &a)),
        (0, ev::SYS_READ, base + 1500, read_entry(3, 100)),
        (1, ev::SCHED_SWITCH, base + 2000, switch(&s1, 0, &a)),
        (0, ev::SYSX_READ, base + 2500, read_exit(10, 0)),
        (1, ev::SYS_READ, base + 4000, read_entry(5, 100)),
        (1, ev::SYSX_READ, base + 7000, read_exit(2, 0)),
    ];
    for (cpu, id, ts, p) in &evs {
        w.write_event(*cpu, *id, *ts, p).unwrap();
    }
    w.finish().unwrap();
}

/// Two per-process traces under one input: trace names with their paths, log levels and EMF
/// URIs (which no shared trace has), each option and combination; `-w` writes the same text
/// to a file; `-o dummy` prints nothing.
#[test]
fn options_match_babeltrace2_on_generated_ust_like_traces() {
    if !testkit::tool_or_skip(
        "babeltrace2",
        "apt install babeltrace2",
        "the print options' comparison on generated traces",
    ) {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("session");
    write_ust_like(&root.join("ust/pid/app-12"), 12, "app", 1);
    write_ust_like(&root.join("ust/pid/other-34"), 34, "other", 2);
    let jobs: Vec<_> = cases()
        .into_iter()
        .map(|c| (root.clone(), "generated".to_string(), false, c))
        .collect();
    let failures = sweep(jobs);
    assert!(failures.is_empty(), "{}", failures.join("\n"));

    // The fields these traces were made for are there.
    let mut tk = Command::new(env!("CARGO_BIN_EXE_tracekit"));
    tk.args(["print", "--fields=all"]).arg(&root);
    let all = run_capped(tk, &[], CAP);
    assert!(all.ok && all.lines.len() == 12, "{}", all.stderr);
    let first = &all.lines[0];
    assert!(
        first.contains("box/ust/pid/app-12box:ust:app:(12):")
            && first.contains("http://example.com/"),
        "{first}"
    );

    // `-w FILE` writes what babeltrace2 writes there.
    let (bt_file, tk_file) = (tmp.path().join("bt.txt"), tmp.path().join("tk.txt"));
    let bt = Command::new("babeltrace2")
        .env("TZ", "UTC")
        .args(["--names=all", "-w"])
        .arg(&bt_file)
        .arg(&root)
        .output()
        .unwrap();
    let tk = Command::new(env!("CARGO_BIN_EXE_tracekit"))
        .env("TZ", "UTC")
        .args(["print", "--names=all", "-w"])
        .arg(&tk_file)
        .arg(&root)
        .output()
        .unwrap();
    assert!(bt.status.success() && tk.status.success());
    assert!(tk.stdout.is_empty(), "the text went to the file");
    let written = std::fs::read_to_string(&tk_file).unwrap();
    assert_eq!(written.lines().count(), 12);
    assert_eq!(written, std::fs::read_to_string(&bt_file).unwrap());

    // `-o dummy`: nothing printed, as babeltrace2.
    for tool in ["babeltrace2", env!("CARGO_BIN_EXE_tracekit")] {
        let mut c = Command::new(tool);
        if tool != "babeltrace2" {
            c.arg("print");
        }
        let o = c.args(["-o", "dummy"]).arg(&root).output().unwrap();
        assert!(o.status.success() && o.stdout.is_empty(), "{tool}");
    }
}

/// Option values babeltrace2 refuses are refused, naming the value.
#[test]
fn bad_option_values_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("t");
    write_ust_like(&dir, 5, "p", 3);
    for (args, says) in [
        (&["--names=foo"][..], "foo"),
        (&["--names=all,none"], "all"),
        (&["--fields=none"], "none"),
        (&["--color=sometimes"], "sometimes"),
        (&["--clock-offset=1.5"], "1.5"),
        (&["-o", "ctf"], "ctf"),
    ] {
        let o = Command::new(env!("CARGO_BIN_EXE_tracekit"))
            .arg("print")
            .args(args)
            .arg(&dir)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success() && o.stdout.is_empty(), "{args:?}");
        assert!(err.contains(says), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
}

#[test]
fn tolerances_are_narrow() {
    assert!(numbers_near(
        "[1.000000001] (+0.1) a",
        "[1.000000002] (+0.1) a"
    ));
    assert!(!numbers_near(
        "[1.000000001] (+0.1) a",
        "[1.000000004] (+0.1) a"
    ));
    assert!(!numbers_near(
        "[1.000000001] (+0.1) a",
        "[1.000000001] (+0.1) b"
    ));
    assert!(!numbers_near("x = 10", "x = 9"));
    assert!(common::empty_string_reuse(
        r#"a: { f = "x" }"#,
        r#"a: { f = "" }"#
    ));
    assert!(!common::empty_string_reuse(
        r#"a: { f = "" }"#,
        r#"a: { f = "x" }"#
    ));
}

/// On a real colour terminal (a pseudo-terminal from `script`, `TERM=xterm`), with no
/// `BABELTRACE_TERM_COLOR`: the default `--color=auto` colours as babeltrace2 does, closing
/// resets included; piped, `--color=always` writes no codes, as babeltrace2's are empty then.
#[test]
fn colors_on_a_terminal_as_babeltrace2() {
    if !testkit::tool_or_skip(
        "babeltrace2",
        "apt install babeltrace2",
        "the terminal colours",
    ) || !testkit::tool_or_skip("script", "apt install bsdutils", "the terminal colours")
    {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("t");
    write_ust_like(&dir, 7, "tty", 4);
    let on_tty = |cmd: &str| {
        let o = Command::new("script")
            .args(["-qc", cmd, "/dev/null"])
            .env("TERM", "xterm")
            .env("TZ", "UTC")
            .env_remove("BABELTRACE_TERM_COLOR")
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert!(o.status.success(), "{cmd}");
        o.stdout
    };
    let tk = env!("CARGO_BIN_EXE_tracekit");
    let d = dir.display();
    for opts in ["", "--names=all --fields=all", "--color=never"] {
        let bt = on_tty(&format!("babeltrace2 {opts} {d}"));
        let ours = on_tty(&format!("{tk} print {opts} {d}"));
        assert!(bt.len() > 500, "{opts}: {}", String::from_utf8_lossy(&bt));
        assert_eq!(
            String::from_utf8_lossy(&ours),
            String::from_utf8_lossy(&bt),
            "{opts}"
        );
        assert_eq!(
            opts != "--color=never",
            bt.windows(5).any(|w| w == b"\x1b[36m")
        );
    }
    let piped = Command::new(tk)
        .args(["print", "--color=always"])
        .arg(&dir)
        .env_remove("BABELTRACE_TERM_COLOR")
        .output()
        .unwrap();
    assert!(piped.status.success() && !piped.stdout.contains(&0x1b));
}

/// `-o ctf-metadata`: the metadata text babeltrace2 prints, byte for byte (packetized and
/// plain-text metadata), on generated traces and every shared trace; where babeltrace2
/// refuses a trace's metadata, tracekit's exit status is checked only to be a clean one
/// (no crash); a path holding no metadata is an error naming it; `-w` writes the same bytes.
#[test]
fn ctf_metadata_matches_babeltrace2() {
    if !testkit::tool_or_skip(
        "babeltrace2",
        "apt install babeltrace2",
        "the -o ctf-metadata comparison",
    ) {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let generated = tmp.path().join("ust/pid/app-12");
    write_ust_like(&generated, 12, "app", 1);
    let mut dirs = vec![generated.clone()];
    if let Some(shared) = testkit::shared() {
        dirs.extend(common::shared_trace_dirs(&shared));
    }
    let mut compared = 0;
    for dir in &dirs {
        let bt = Command::new("babeltrace2")
            .args(["-o", "ctf-metadata"])
            .arg(dir)
            .output()
            .unwrap();
        let tk = Command::new(env!("CARGO_BIN_EXE_tracekit"))
            .args(["print", "-o", "ctf-metadata"])
            .arg(dir)
            .output()
            .unwrap();
        assert!(
            tk.status.code().is_some(),
            "{}: {:?}",
            dir.display(),
            tk.status
        );
        if !bt.status.success() {
            continue;
        }
        assert!(
            tk.status.success(),
            "{}: {}",
            dir.display(),
            String::from_utf8_lossy(&tk.stderr)
        );
        assert!(
            bt.stdout == tk.stdout,
            "{}: the metadata text differs",
            dir.display()
        );
        compared += 1;
    }
    assert!(
        compared * 10 >= dirs.len() * 8,
        "{compared} of {} compared",
        dirs.len()
    );

    // -w FILE.
    let out = tmp.path().join("metadata.txt");
    let tk = Command::new(env!("CARGO_BIN_EXE_tracekit"))
        .args(["print", "-o", "ctf-metadata", "-w"])
        .arg(&out)
        .arg(&generated)
        .output()
        .unwrap();
    assert!(tk.status.success());
    let bt = Command::new("babeltrace2")
        .args(["-o", "ctf-metadata"])
        .arg(&generated)
        .output()
        .unwrap();
    assert_eq!(std::fs::read(&out).unwrap(), bt.stdout);

    // No metadata there: an error naming the file.
    let tk = Command::new(env!("CARGO_BIN_EXE_tracekit"))
        .args(["print", "-o", "ctf-metadata"])
        .arg(tmp.path())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&tk.stderr);
    assert!(!tk.status.success() && err.contains("metadata"), "{err}");
}
