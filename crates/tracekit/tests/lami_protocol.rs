//! The LAMI 1.0 protocol as Trace Compass drives an external analysis (its `LamiAnalysis`):
//! `EXE --mi-version` of the executable alone, `CMD --metadata`, `CMD --test-compatibility
//! TRACE` (compatible when nothing, or no `error-message`, is printed), then `CMD
//! --output-progress --begin NS --end NS TRACE`, whose lines before the first one starting
//! with `{` are progress (`FRACTION MESSAGE`). CMD is a link made by `tracekit lami-links`
//! (`lttng-NAME-mi`), as Trace Compass's LTTng analyses name them. Also the lttng-analyses
//! command-line flags tracekit accepts (`--top`, `--stats`…), and, where lttng-analyses is
//! installed (CI), its answers to the same questions.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

mod common;
use common::ok;

/// A generated kernel trace in `tmp/kernel`.
fn trace(tmp: &Path) -> PathBuf {
    let dir = tmp.join("kernel");
    ok(common::command()
        .args(["gen", "kernel-mix", "--seed", "7", "--events", "20000"])
        .args(["--cpus", "2", "-o"])
        .arg(&dir)
        .output()
        .unwrap());
    dir
}

/// `tracekit lami-links tmp/bin`: the directory of the links.
fn links(tmp: &Path) -> PathBuf {
    let dir = tmp.join("bin");
    let out = ok(common::command()
        .arg("lami-links")
        .arg(&dir)
        .output()
        .unwrap());
    assert!(out.contains("38 links"), "{out}");
    dir
}

/// Runs the link `name` of `bin` with `args`, in UTC.
fn run_link(bin: &Path, name: &str, args: &[&str], trace: Option<&Path>) -> Output {
    let mut c = Command::new(bin.join(name));
    c.env("TZ", "UTC").args(args);
    if let Some(t) = trace {
        c.arg(t);
    }
    c.output().unwrap()
}

/// What Trace Compass reads of a run's output: the progress lines before the first line that
/// starts with `{` (their leading fractions), and the JSON text from there.
fn split_progress(out: &str) -> (Vec<f64>, Vec<String>, String) {
    let mut lines = out.lines();
    let (mut fractions, mut messages) = (Vec::new(), Vec::new());
    let mut json = String::new();
    for line in lines.by_ref() {
        if line.trim_start().starts_with('{') {
            json.push_str(line);
            break;
        }
        let (number, message) = line.trim().split_once(' ').unwrap_or((line, ""));
        fractions.push(
            number
                .parse::<f64>()
                .unwrap_or_else(|_| panic!("not a progress line: {line:?}")),
        );
        messages.push(message.to_string());
    }
    for line in lines {
        json.push_str(line);
    }
    (fractions, messages, json)
}

fn time_range(results: &Value) -> (i64, i64) {
    let r = &results["results"][0]["time-range"];
    (
        r["begin"]["value"].as_i64().unwrap(),
        r["end"]["value"].as_i64().unwrap(),
    )
}

#[test]
fn mi_version_is_answered_by_the_executable_alone_and_by_every_link() {
    let tmp = tempfile::tempdir().unwrap();
    let bin = links(tmp.path());
    let out = ok(common::command().arg("--mi-version").output().unwrap());
    assert_eq!(out, "1.0\n");
    for name in [
        "lttng-cputop-mi",
        "lttng-iolatencystats-mi",
        "lttng-periodlog-mi",
    ] {
        assert_eq!(ok(run_link(&bin, name, &["--mi-version"], None)), "1.0\n");
    }
    // The form Trace Compass matches: \d{1,3}\.\d{1,3}.
    let (major, minor) = out.trim().split_once('.').unwrap();
    assert!(major.parse::<u32>().is_ok() && minor.parse::<u32>().is_ok());
}

#[test]
fn a_trace_compass_session_through_a_link() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = trace(tmp.path());
    let bin = links(tmp.path());
    for name in ["iolatencystats", "cputop", "schedfreq"] {
        let link = format!("lttng-{name}-mi");
        // 2. The metadata: its table classes are what results may name.
        let meta: Value =
            serde_json::from_str(&ok(run_link(&bin, &link, &["--metadata"], None))).unwrap();
        assert!(meta["title"].is_string(), "{meta}");
        let v = &meta["version"];
        assert_eq!(
            format!("{}.{}.{}", v["major"], v["minor"], v["patch"]),
            env!("CARGO_PKG_VERSION"),
            "the metadata gives this build's version"
        );
        let classes = meta["table-classes"].as_object().expect("table classes");
        let direct: Value = serde_json::from_str(&ok(common::command()
            .args(["analyze", name, "--metadata"])
            .output()
            .unwrap()))
        .unwrap();
        assert_eq!(meta, direct);
        // 3. Compatible: nothing printed, success.
        let o = run_link(&bin, &link, &["--test-compatibility"], Some(&dir));
        assert_eq!(ok(o), "", "{link}");
        // 4. The run, on the middle half of the trace.
        let whole: Value = serde_json::from_str(&ok(common::command()
            .args(["analyze", name, "--mi"])
            .arg(&dir)
            .output()
            .unwrap()))
        .unwrap();
        let (b, e) = time_range(&whole);
        let (b, e) = (b + (e - b) / 4, e - (e - b) / 4);
        let (b, e) = (b.to_string(), e.to_string());
        let args = ["--output-progress", "--begin", &b, "--end", &e];
        let out = ok(run_link(&bin, &link, &args, Some(&dir)));
        let (fractions, messages, json) = split_progress(&out);
        assert!(fractions.len() >= 3, "{link}: {fractions:?}");
        assert!(
            fractions.windows(2).all(|w| w[0] <= w[1]),
            "{link}: progress goes back: {fractions:?}"
        );
        assert!(fractions.iter().all(|f| (0.0..=1.0).contains(f)));
        assert_eq!(fractions[0], 0.0);
        assert_eq!(*fractions.last().unwrap(), 1.0);
        assert!(messages.last().unwrap().starts_with("Done"), "{messages:?}");
        let results: Value = serde_json::from_str(&json).expect("results after the progress");
        let expected: Value = serde_json::from_str(&ok(common::command()
            .args(["analyze", name, "--mi", "--begin", &b, "--end", &e])
            .arg(&dir)
            .output()
            .unwrap()))
        .unwrap();
        assert_eq!(results, expected, "{link}");
        let tables = results["results"].as_array().unwrap();
        assert!(!tables.is_empty());
        for t in tables {
            let class = match &t["class"] {
                Value::String(s) => s.clone(),
                // A dynamic title: `{"inherit": CLASS, "title": …}`.
                c => c["inherit"].as_str().unwrap_or_default().to_string(),
            };
            assert!(
                class.is_empty() || classes.contains_key(&class),
                "{link}: table class {class} not in the metadata"
            );
        }
        let (rb, re) = time_range(&results);
        assert!(rb >= b.parse::<i64>().unwrap() && re <= e.parse::<i64>().unwrap());
    }
}

/// A one-event CTF trace of another domain: its metadata (plain TSDL) and one stream file.
fn user_space_trace(dir: &Path) {
    std::fs::create_dir_all(dir).unwrap();
    let tsdl = r#"/* CTF 1.8 */
typealias integer { size = 32; align = 8; signed = false; } := uint32_t;
typealias integer { size = 64; align = 8; signed = false; } := uint64_t;
trace {
    major = 1; minor = 8; byte_order = le;
    packet.header := struct { uint32_t magic; uint32_t stream_id; };
};
env { domain = "ust"; };
stream { id = 0; event.header := struct { uint32_t id; uint64_t timestamp; }; };
event { name = "app:hello"; id = 0; stream_id = 0; fields := struct { uint32_t x; }; };
"#;
    std::fs::write(dir.join("metadata"), tsdl).unwrap();
    let mut stream = Vec::new();
    stream.extend_from_slice(&0xC1FC_1FC1u32.to_le_bytes());
    stream.extend_from_slice(&0u32.to_le_bytes());
    stream.extend_from_slice(&0u32.to_le_bytes());
    stream.extend_from_slice(&1000u64.to_le_bytes());
    stream.extend_from_slice(&42u32.to_le_bytes());
    std::fs::write(dir.join("stream_0"), stream).unwrap();
}

#[test]
fn incompatible_inputs_say_why_as_lami_errors() {
    let tmp = tempfile::tempdir().unwrap();
    let bin = links(tmp.path());
    let ust = tmp.path().join("ust");
    user_space_trace(&ust);
    // The hand-made trace reads.
    ok(common::command().arg("count").arg(&ust).output().unwrap());
    let empty = tmp.path().join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    let missing = tmp.path().join("missing");
    for (input, says) in [
        (&missing, "missing"),
        (&empty, "empty"),
        (&ust, "no kernel trace"),
    ] {
        let o = run_link(
            &bin,
            "lttng-cputop-mi",
            &["--test-compatibility"],
            Some(input),
        );
        assert!(!o.status.success(), "{}", input.display());
        let v: Value = serde_json::from_slice(&o.stdout).expect("a LAMI error document");
        let msg = v["error-message"].as_str().expect("error-message");
        assert!(msg.contains(says), "{msg}");
    }
    // Without --mi the reason goes to the standard error.
    let o = common::command()
        .args(["analyze", "cputop", "--test-compatibility"])
        .arg(&ust)
        .output()
        .unwrap();
    assert!(!o.status.success() && o.stdout.is_empty());
    assert!(String::from_utf8_lossy(&o.stderr).contains("no kernel trace"));
}

#[test]
fn text_command_names_run_the_text_analyses() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = trace(tmp.path());
    let bin = links(tmp.path());
    for name in ["cputop", "irqstats"] {
        let via_link = ok(run_link(&bin, &format!("lttng-{name}"), &[], Some(&dir)));
        let direct = ok(common::command()
            .args(["analyze", name])
            .arg(&dir)
            .output()
            .unwrap());
        assert_eq!(via_link, direct);
        assert!(via_link.contains("Timerange"), "{via_link}");
    }
}

#[test]
fn mode_flags_add_the_analyses_of_their_family() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = trace(tmp.path());
    let mi = |args: &[&str]| -> Value {
        serde_json::from_str(&ok(common::command()
            .arg("analyze")
            .args(args)
            .arg("--mi")
            .arg(&dir)
            .output()
            .unwrap()))
        .unwrap()
    };
    assert_eq!(
        mi(&["iolatencytop", "--stats", "--usage"]),
        mi(&["iolatencytop,iolatencystats,iousagetop"])
    );
    assert_eq!(mi(&["schedlog", "--top"]), mi(&["schedlog,schedtop"]));
    // A mode of the analysis itself changes nothing.
    assert_eq!(mi(&["cputop", "--top"]), mi(&["cputop"]));
    // cputop has no statistics mode (lttng-cputop rejects --stats too).
    let o = common::command()
        .args(["analyze", "cputop", "--stats", "--mi"])
        .arg(&dir)
        .output()
        .unwrap();
    assert!(!o.status.success());
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(v["error-message"].as_str().unwrap().contains("--stats"));
}

#[test]
fn links_keep_what_is_there() {
    let tmp = tempfile::tempdir().unwrap();
    let bin = links(tmp.path());
    // Again: every link is there already.
    let out = ok(common::command()
        .arg("lami-links")
        .arg(&bin)
        .output()
        .unwrap());
    assert!(
        out.contains("0 links") && out.contains("38 already"),
        "{out}"
    );
    // A file of one of the names is never replaced; a link elsewhere only with --force.
    std::fs::remove_file(bin.join("lttng-memtop")).unwrap();
    std::fs::write(bin.join("lttng-memtop"), "#!/bin/sh\n").unwrap();
    std::fs::remove_file(bin.join("lttng-memtop-mi")).unwrap();
    std::os::unix::fs::symlink("/bin/true", bin.join("lttng-memtop-mi")).unwrap();
    let o = common::command()
        .arg("lami-links")
        .arg(&bin)
        .output()
        .unwrap();
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("lttng-memtop: exists and is not a link"),
        "{err}"
    );
    assert!(err.contains("--force"), "{err}");
    let o = common::command()
        .args(["lami-links", "--force"])
        .arg(&bin)
        .output()
        .unwrap();
    assert!(!o.status.success(), "the file still is not replaced");
    assert!(String::from_utf8_lossy(&o.stdout).contains("1 replaced"));
    assert_eq!(
        std::fs::read_to_string(bin.join("lttng-memtop")).unwrap(),
        "#!/bin/sh\n"
    );
    assert_eq!(
        ok(run_link(&bin, "lttng-memtop-mi", &["--mi-version"], None)),
        "1.0\n"
    );
}

/// Where lttng-analyses is installed: it answers the protocol's questions as tracekit does.
#[test]
fn lttng_analyses_answers_alike() {
    if !testkit::tool_or_skip(
        "lttng-cputop-mi",
        "apt install python3-lttnganalyses",
        "the protocol comparison",
    ) {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = trace(tmp.path());
    let bin = links(tmp.path());
    let theirs = |args: &[&str], t: Option<&Path>| {
        let mut c = Command::new("lttng-cputop-mi");
        c.args(args);
        if let Some(t) = t {
            c.arg(t);
        }
        c.output().unwrap()
    };
    let ours = |args: &[&str], t: Option<&Path>| run_link(&bin, "lttng-cputop-mi", args, t);
    assert_eq!(
        theirs(&["--mi-version"], None).stdout,
        ours(&["--mi-version"], None).stdout
    );
    let (t, o) = (
        theirs(&["--test-compatibility"], Some(&dir)),
        ours(&["--test-compatibility"], Some(&dir)),
    );
    assert!(t.status.success() && o.status.success());
    assert_eq!(t.stdout, o.stdout);
    let missing = tmp.path().join("missing");
    for out in [
        theirs(&["--test-compatibility"], Some(&missing)),
        ours(&["--test-compatibility"], Some(&missing)),
    ] {
        assert!(!out.status.success());
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert!(v["error-message"].is_string());
    }
    // Their progress lines have the form ours have: a fraction, then a message.
    let out = theirs(&["--output-progress"], Some(&dir));
    let (fractions, _, json) = split_progress(&String::from_utf8(out.stdout).unwrap());
    assert!(!fractions.is_empty() && serde_json::from_str::<Value>(&json).is_ok());
}
