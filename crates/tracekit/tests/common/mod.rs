//! Helpers of the CLI integration tests.

#![allow(dead_code)]

use std::process::{Command, Output};

/// The `tracekit` binary under test, with `TZ=UTC` (times print alike on every machine).
pub fn command() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_tracekit"));
    c.env("TZ", "UTC");
    c
}

/// The standard output of a run that must have succeeded (else its status and stderr).
pub fn ok(o: Output) -> String {
    assert!(
        o.status.success(),
        "tracekit failed ({}): {}",
        o.status,
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout).expect("UTF-8 output")
}

/// Whether `tool` is on the `PATH`.
pub fn have(tool: &str) -> bool {
    Command::new("which")
        .arg(tool)
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false)
}

/// Splits a line into its parts outside and inside double-quoted strings.
pub fn split_strings(line: &str) -> (Vec<String>, Vec<String>) {
    let (mut outside, mut inside) = (vec![String::new()], Vec::new());
    let (mut in_str, mut escaped) = (false, false);
    let mut cur = String::new();
    for c in line.chars() {
        if in_str {
            if escaped {
                escaped = false;
                cur.push(c);
            } else if c == '\\' {
                escaped = true;
                cur.push(c);
            } else if c == '"' {
                in_str = false;
                inside.push(std::mem::take(&mut cur));
                outside.push(String::new());
            } else {
                cur.push(c);
            }
        } else if c == '"' {
            in_str = true;
        } else {
            outside.last_mut().unwrap().push(c);
        }
    }
    (outside, inside)
}

/// babeltrace2's reuse of the previous event's string where ours is empty.
pub fn empty_string_reuse(bt: &str, tk: &str) -> bool {
    let (bo, bi) = split_strings(bt);
    let (to, ti) = split_strings(tk);
    bo == to && bi.len() == ti.len() && bi.iter().zip(&ti).all(|(b, t)| b == t || t.is_empty())
}

/// The shared real traces (kernel, UST and CTF test traces) under `shared`.
pub fn shared_trace_dirs(shared: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut dirs = Vec::new();
    for sub in ["kernel", "ust", "ctf"] {
        dirs.extend(testkit::trace_dirs(&shared.join("traces").join(sub)));
    }
    assert!(
        dirs.len() > 40,
        "expected the shared traces, found {}",
        dirs.len()
    );
    dirs
}
