//! `tracekit print` against `babeltrace2` on the shared real traces, line by line.
//!
//! Runs when `TRACEKIT_SHARED` points at the shared data; then `babeltrace2` must be installed
//! (CI installs it). Known babeltrace2 2.0.4 defects are tolerated, each narrowly:
//! - an empty string field prints the previous event's string (field reuse): our line must then
//!   equal babeltrace's except for strings that are empty on our side;
//! - clocks other than 1 GHz convert cycles with `double` arithmetic: timestamps may differ by
//!   1 ns (we convert exactly);
//! - babeltrace2 aborts on a timestamp regression (`synctraces`): we compare what it printed.
//!
//! A shared trace damaged outside the project (streams its metadata cannot decode) is not
//! compared: there tracekit must fail the tracekit way (see [`damaged_trace_handled`]).

mod common;

use std::path::Path;
use std::process::Command;

use testkit::shared;

struct Output {
    ok: bool,
    /// The exit code (`None` when killed by a signal).
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

fn run(cmd: &mut Command) -> Output {
    let o = cmd.env("TZ", "UTC").output().expect("command runs");
    Output {
        ok: o.status.success(),
        code: o.status.code(),
        stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
    }
}

/// tracekit failing on a trace babeltrace2 cannot read at all is right only when the trace is
/// damaged (some stream cannot be decoded with its metadata: [`testkit::check_trace`]), and
/// only if tracekit failed cleanly: no panic, every error naming a file of the trace and a byte
/// offset, and every event of the sound stream files printed. Returns what was found.
fn damaged_trace_handled(name: &str, dir: &Path, tk: &Output) -> Result<String, String> {
    let check = testkit::check_trace(dir);
    let Some(damage) = check.damage() else {
        return Err(format!(
            "{name}: babeltrace2 fails and so does tracekit: {}",
            tk.stderr
        ));
    };
    // A Rust panic exits with 101.
    if tk.code == Some(101) || tk.code.is_none() || tk.stderr.contains("panicked") {
        return Err(format!("{name}: tracekit crashed: {}", tk.stderr));
    }
    let errors: Vec<&str> = tk
        .stderr
        .lines()
        .filter_map(|l| l.strip_prefix("tracekit: error: "))
        .collect();
    if errors.is_empty() {
        return Err(format!(
            "{name}: tracekit failed without an error message (damage: {damage})"
        ));
    }
    for e in &errors {
        let located = e.split_once(": at byte ").is_some_and(|(file, rest)| {
            Path::new(file).starts_with(dir)
                && Path::new(file).is_file()
                && rest
                    .split_once(": ")
                    .is_some_and(|(n, _)| n.parse::<u64>().is_ok())
        });
        if !located {
            return Err(format!(
                "{name}: a tracekit error names no file of the trace and byte offset: {e}"
            ));
        }
    }
    let printed = tk.stdout.lines().count() as u64;
    if printed < check.sound_events {
        return Err(format!(
            "{name}: tracekit printed {printed} events, the {} sound stream files hold {}",
            check.sound_files, check.sound_events
        ));
    }
    Ok(format!(
        "{name}: damaged ({damage}): tracekit printed {printed} events and {} errors",
        errors.len()
    ))
}

fn parse_ts(line: &str) -> Option<(i64, &str)> {
    // "[HH:MM:SS.nnnnnnnnn] (+S.nnnnnnnnn) rest"
    let l = line.strip_prefix('[')?;
    let (t, rest) = l.split_once("] ")?;
    let (hms, ns) = t.split_once('.')?;
    let mut s = 0i64;
    for p in hms.split(':') {
        s = s * 60 + p.parse::<i64>().ok()?;
    }
    let v = s * 1_000_000_000 + ns.parse::<i64>().ok()?;
    let rest = rest.split_once(") ").map_or(rest, |(_, r)| r);
    Some((v, rest))
}

fn one_ns_apart(bt: &str, tk: &str) -> bool {
    match (parse_ts(bt), parse_ts(tk)) {
        (Some((a, ra)), Some((b, rb))) => (a - b).abs() <= 1 && ra == rb,
        _ => false,
    }
}

fn compare(name: &str, bt: &Output, tk: &Output, non_ghz: bool) -> Result<(), String> {
    let bl: Vec<&str> = bt.stdout.lines().collect();
    let tl: Vec<&str> = tk.stdout.lines().collect();
    if bt.ok && bl.len() != tl.len() {
        return Err(format!(
            "{name}: babeltrace2 printed {} lines, tracekit {}",
            bl.len(),
            tl.len()
        ));
    }
    if !bt.ok && tl.len() < bl.len() {
        return Err(format!(
            "{name}: tracekit printed fewer lines than babeltrace2 before it failed"
        ));
    }
    for (i, (b, t)) in bl.iter().zip(&tl).enumerate() {
        if b == t || common::empty_string_reuse(b, t) || (non_ghz && one_ns_apart(b, t)) {
            continue;
        }
        return Err(format!(
            "{name}: line {}:\n  babeltrace2: {b}\n  tracekit:    {t}",
            i + 1
        ));
    }
    let warnings = |s: &str| -> Vec<String> {
        s.lines()
            .filter(|l| l.starts_with("WARNING: Tracer"))
            .map(String::from)
            .collect()
    };
    if bt.ok && warnings(&bt.stderr) != warnings(&tk.stderr) {
        return Err(format!(
            "{name}: loss warnings differ:\n  babeltrace2: {:?}\n  tracekit: {:?}",
            warnings(&bt.stderr),
            warnings(&tk.stderr)
        ));
    }
    Ok(())
}

#[test]
fn print_matches_babeltrace2_on_shared_traces() {
    let Some(shared) = shared() else {
        eprintln!("TRACEKIT_SHARED unset: skipping the babeltrace2 conformance test");
        return;
    };
    let have_bt = Command::new("babeltrace2")
        .arg("--version")
        .output()
        .is_ok();
    assert!(
        have_bt,
        "TRACEKIT_SHARED is set but babeltrace2 is not installed (apt install babeltrace2)"
    );
    let dirs = common::shared_trace_dirs(&shared);
    let mut failures = Vec::new();
    let mut compared = 0;
    for d in &dirs {
        let name = d.strip_prefix(&shared).unwrap_or(d).display().to_string();
        let bt = run(Command::new("babeltrace2").arg(d));
        let tk = run(Command::new(env!("CARGO_BIN_EXE_tracekit"))
            .arg("print")
            .arg(d));
        if !bt.ok && bt.stdout.is_empty() {
            // babeltrace2 cannot read it at all (an assertion in its metadata code): we must not
            // fail, unless the trace itself is damaged.
            if !tk.ok {
                match damaged_trace_handled(&name, d, &tk) {
                    Ok(found) => testkit::loud(&format!("SKIPPED: {found}")),
                    Err(e) => failures.push(e),
                }
            }
            continue;
        }
        let meta = std::fs::read(d.join("metadata")).unwrap();
        let tc = ctf::metadata::parse(&meta).unwrap();
        let non_ghz = tc.clocks.iter().any(|c| c.freq != 1_000_000_000);
        compared += 1;
        if let Err(e) = compare(&name, &bt, &tk, non_ghz) {
            failures.push(e);
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {compared} traces differ:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn string_tolerance_is_narrow() {
    assert!(common::empty_string_reuse(
        r#"a: { f = "x", m = 4 }"#,
        r#"a: { f = "", m = 4 }"#
    ));
    assert!(!common::empty_string_reuse(
        r#"a: { f = "x", m = 4 }"#,
        r#"a: { f = "", m = 5 }"#
    ));
    assert!(!common::empty_string_reuse(
        r#"a: { f = "", m = 4 }"#,
        r#"a: { f = "x", m = 4 }"#
    ));
    assert!(one_ns_apart(
        "[1:00:00.000000001] (+0.1) a",
        "[1:00:00.000000002] (+0.1) a"
    ));
    assert!(!one_ns_apart(
        "[1:00:00.000000001] (+0.1) a",
        "[1:00:00.000000003] (+0.1) a"
    ));
}

/// CTF 2 versions of CTF 1.8 conformance traces hold the same events: `tracekit print` of the
/// CTF 2 trace must equal `babeltrace2` (2.0, which cannot read CTF 2) of the CTF 1.8 one.
#[test]
fn ctf2_traces_print_like_their_ctf18_twins() {
    let Some(shared) = shared() else {
        eprintln!("TRACEKIT_SHARED unset: skipping the CTF 2 twin test");
        return;
    };
    let t = shared.join("traces");
    let pairs = [
        (
            "ctf2/final-spec/bt-traces_succeed_succeed1",
            "ctf/succeed/succeed1",
        ),
        (
            "ctf2/final-spec/bt-traces_succeed_sequence",
            "ctf/succeed/sequence",
        ),
        ("ctf2/tc-draft/CTF2-7.0-succeed1", "ctf/succeed/succeed1"),
        (
            "ctf2/tc-draft/CTF2-7.0-lttng-crash",
            "ctf/succeed/lttng-crash",
        ),
        (
            "ctf2/tc-draft/CTF2-7.0-smalltrace",
            "ctf/succeed/smalltrace",
        ),
        (
            "ctf2/tc-draft/CTF2-7.0-trace-with-index",
            "ctf/succeed/trace-with-index",
        ),
    ];
    for (ctf2, ctf18) in pairs {
        let bt = run(Command::new("babeltrace2").arg(t.join(ctf18)));
        let tk = run(Command::new(env!("CARGO_BIN_EXE_tracekit"))
            .arg("print")
            .arg(t.join(ctf2)));
        assert!(bt.ok && tk.ok, "{ctf2}: {} {}", bt.stderr, tk.stderr);
        assert!(!tk.stdout.is_empty(), "{ctf2}: no events");
        assert_eq!(
            tk.stdout, bt.stdout,
            "{ctf2} differs from babeltrace2 on {ctf18}"
        );
    }
}

/// [`damaged_trace_handled`] accepts tracekit's failure on a damaged trace only when it is
/// clean, and never on an intact trace (generated traces: runs without the shared data).
#[test]
fn damaged_trace_tolerance_is_narrow() {
    use ctf::ir::ByteOrder;
    let tmp = tempfile::tempdir().unwrap();
    let (a, b, mixed) = (
        tmp.path().join("a"),
        tmp.path().join("b"),
        tmp.path().join("mixed"),
    );
    testkit::write_small_trace(&a, ByteOrder::Big, 1);
    testkit::write_small_trace(&b, ByteOrder::Little, 2);
    testkit::mix_traces(&a, &b, &mixed);
    let print = |dir: &Path| {
        run(Command::new(env!("CARGO_BIN_EXE_tracekit"))
            .arg("print")
            .arg(dir))
    };
    let tk = print(&mixed);
    assert!(!tk.ok);
    let found = damaged_trace_handled("mixed", &mixed, &tk).unwrap();
    assert!(found.contains("printed 7 events and 2 errors"), "{found}");

    // The same failure on an intact trace is not accepted.
    let mut on_intact = print(&mixed);
    on_intact.stdout = print(&a).stdout;
    assert!(damaged_trace_handled("a", &a, &on_intact).is_err());
    // Nor a panic, an error without a byte offset, or missing events of sound streams.
    let mut panicked = print(&mixed);
    panicked.code = Some(101);
    assert!(damaged_trace_handled("mixed", &mixed, &panicked).is_err());
    let mut unlocated = print(&mixed);
    unlocated.stderr = unlocated.stderr.replace(": at byte 0:", ":");
    assert!(damaged_trace_handled("mixed", &mixed, &unlocated).is_err());
    let mut short = print(&mixed);
    short.stdout = short
        .stdout
        .lines()
        .skip(1)
        .map(|l| format!("{l}\n"))
        .collect();
    assert!(damaged_trace_handled("mixed", &mixed, &short).is_err());
}

/// `print` against babeltrace2, byte for byte, on traces that `bench/gen_lttng_kernel.py`
/// writes: a generator sharing no code with tracekit's writer (LTTng's compact and extended
/// event headers with kernel event ids, strings, sequences of structures with bit fields, an
/// enumeration, packetized metadata), with small packets and with an event context, so that
/// the printer's per-packet and multi-scope paths meet a layout it did not write.
#[test]
fn print_matches_babeltrace2_on_an_independent_generators_traces() {
    if !testkit::tool_or_skip(
        "babeltrace2",
        "apt install babeltrace2",
        "print against babeltrace2 on gen_lttng_kernel.py's traces",
    ) || !testkit::tool_or_skip(
        "python3",
        "apt install python3",
        "print against babeltrace2 on gen_lttng_kernel.py's traces",
    ) {
        return;
    }
    let gen = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../bench/gen_lttng_kernel.py");
    let tmp = tempfile::tempdir().unwrap();
    for (name, args) in [
        ("default", &[][..]),
        ("small", &["--packet-kib", "4", "--contexts"][..]),
    ] {
        let dir = tmp.path().join(name);
        let g = Command::new("python3")
            .arg(&gen)
            .args(["--events", "20000", "--cpus", "3", "--seed", "7", "-o"])
            .arg(&dir)
            .args(args)
            .output()
            .expect("python3 runs");
        assert!(
            g.status.success(),
            "{name}: {}",
            String::from_utf8_lossy(&g.stderr)
        );
        let bt = run(Command::new("babeltrace2").arg(&dir));
        let tk = run(Command::new(env!("CARGO_BIN_EXE_tracekit"))
            .arg("print")
            .arg(&dir));
        assert!(
            bt.ok && bt.stderr.is_empty(),
            "{name}: babeltrace2: {}",
            bt.stderr
        );
        assert!(
            tk.ok && tk.stderr.is_empty(),
            "{name}: tracekit: {}",
            tk.stderr
        );
        assert_eq!(bt.stdout.lines().count(), 20_000, "{name}");
        if let Some((i, (b, t))) = bt
            .stdout
            .lines()
            .zip(tk.stdout.lines())
            .enumerate()
            .find(|(_, (b, t))| b != t)
        {
            panic!(
                "{name}: line {}:\n  babeltrace2: {b}\n  tracekit:    {t}",
                i + 1
            );
        }
        assert_eq!(bt.stdout, tk.stdout, "{name}");
    }
}
