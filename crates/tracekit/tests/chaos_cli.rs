//! Every command on arbitrary traces (`tracekit gen chaos`: events of every class with any
//! values in any order, packets cut anywhere, discarded events counted anywhere): a command
//! ends with its results or with an error message, never with a panic; its machine outputs
//! are valid JSON; and `print` writes what `babeltrace2` writes.

mod common;

use std::path::Path;
use std::process::{Command, Output};

use common::command;

/// Traces per test, and events per trace.
const SEEDS: u64 = 10;
const EVENTS: &str = "1500";

fn gen_chaos(dir: &Path, seed: u64, extra: &[&str]) {
    let o = command()
        .args([
            "gen",
            "chaos",
            "--events",
            EVENTS,
            "--seed",
            &seed.to_string(),
            "-o",
        ])
        .arg(dir)
        .args(extra)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

/// What a run on an arbitrary trace may do: succeed, or fail with exit code 1 and a
/// `tracekit` error message. Returns its standard output.
fn survived(what: &str, o: Output) -> String {
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(
        matches!(o.status.code(), Some(0 | 1)) && !stderr.contains("panicked"),
        "{what}: {} {stderr}",
        o.status
    );
    if !o.status.success() {
        assert!(stderr.contains("tracekit"), "{what}: no message: {stderr}");
    }
    String::from_utf8_lossy(&o.stdout).into_owned()
}

const ANALYSES: &str = "cputop,memtop,syscallstats,irqstats,irqlog,irqfreq,schedlog,schedfreq,\
                        schedtop,schedstats,iolatencystats,iolatencyfreq,iolatencytop,iolog,\
                        iousagetop";
const PERIOD: &str = "switch : $evt.$name == \"sched_switch\" && $evt.next_tid != 0 : \
                      $evt.$name == \"sched_switch\" && $evt.prev_tid == $begin.$evt.next_tid";

#[test]
fn every_command_survives_arbitrary_traces() {
    let tmp = tempfile::tempdir().unwrap();
    for seed in 0..SEEDS {
        let dir = tmp.path().join(format!("chaos-{seed}"));
        gen_chaos(&dir, seed, &[]);
        let other = tmp.path().join(format!("chaos-{seed}-b"));
        gen_chaos(&other, seed + 1000, &[]);
        let d = dir.to_str().unwrap();
        let runs: Vec<Vec<&str>> = vec![
            vec!["print", d],
            vec!["count", "--json", d],
            vec!["analyze", ANALYSES, d],
            vec![
                "analyze",
                ANALYSES,
                "--no-intersection",
                "--refresh",
                "2s",
                d,
            ],
            vec![
                "analyze",
                "periodlog,periodtop,periodstats,periodfreq",
                "--period",
                PERIOD,
                "--no-intersection",
                d,
            ],
            vec!["latency", d],
            vec!["critpath", "--tid", "7", d],
        ];
        for args in runs {
            let out = command().args(&args).output().unwrap();
            survived(&format!("seed {seed}: {args:?}"), out);
        }
        // Machine outputs: JSON documents, JSON lines.
        let mi = survived(
            &format!("seed {seed}: --mi"),
            command()
                .args(["analyze", ANALYSES, "--mi", "--no-intersection", d])
                .output()
                .unwrap(),
        );
        serde_json::from_str::<serde_json::Value>(&mi)
            .unwrap_or_else(|e| panic!("seed {seed}: --mi: {e}"));
        let lines = survived(
            &format!("seed {seed}: latency --json"),
            command().args(["latency", "--json", d]).output().unwrap(),
        );
        for l in lines.lines() {
            serde_json::from_str::<serde_json::Value>(l)
                .unwrap_or_else(|e| panic!("seed {seed}: latency --json: {e}: {l}"));
        }
        let critpath = survived(
            &format!("seed {seed}: critpath --json"),
            command()
                .args(["critpath", "--json", "--tid", "1"])
                .arg(&dir)
                .output()
                .unwrap(),
        );
        if !critpath.is_empty() {
            serde_json::from_str::<serde_json::Value>(&critpath)
                .unwrap_or_else(|e| panic!("seed {seed}: critpath --json: {e}"));
        }
        // Two hosts that exchanged nothing that matches.
        for args in [&["sync"][..], &["critpath", "--sync", "--tid", "7"]] {
            survived(
                &format!("seed {seed}: {args:?} of two traces"),
                command().args(args).arg(&dir).arg(&other).output().unwrap(),
            );
        }
    }
}

/// Babeltrace 2.0.4 prints an empty string as the value the same field had before (see
/// tests/conformance.rs): the traces compared have none.
#[test]
fn print_matches_babeltrace2_on_arbitrary_traces() {
    if !testkit::tool_or_skip("babeltrace2", "apt install babeltrace2", "the comparison") {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let mut compared = 0;
    for seed in 0..SEEDS {
        let dir = tmp.path().join(format!("chaos-{seed}"));
        gen_chaos(&dir, seed, &["--no-empty-texts"]);
        let ours = command().arg("print").arg(&dir).output().unwrap();
        let theirs = Command::new("babeltrace2")
            .env("TZ", "UTC")
            .arg(&dir)
            .output()
            .unwrap();
        assert!(!ours.stdout.is_empty());
        if !theirs.status.success() {
            // Babeltrace 2 stops at times past 64-bit nanoseconds; tracekit clamps them and
            // says so.
            let (why, warning) = (
                String::from_utf8_lossy(&theirs.stderr),
                String::from_utf8_lossy(&ours.stderr),
            );
            assert!(
                why.contains("Cannot convert clock cycles to nanoseconds")
                    && warning.contains("past what 64-bit nanoseconds hold")
                    && ours.stdout.starts_with(&theirs.stdout),
                "seed {seed}: babeltrace2 failed: {why}"
            );
            continue;
        }
        compared += 1;
        if ours.stdout != theirs.stdout {
            let (a, b) = (
                String::from_utf8_lossy(&ours.stdout),
                String::from_utf8_lossy(&theirs.stdout),
            );
            let first = a.lines().zip(b.lines()).position(|(x, y)| x != y);
            panic!(
                "seed {seed}: tracekit print differs from babeltrace2 at line {first:?}: {:?} / {:?}",
                first.and_then(|i| a.lines().nth(i)),
                first.and_then(|i| b.lines().nth(i)),
            );
        }
    }
    assert!(compared > SEEDS / 2, "{compared} traces compared");
}
