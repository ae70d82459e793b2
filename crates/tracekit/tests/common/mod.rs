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
