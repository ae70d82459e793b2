//! Comparing `--mi` documents with lttng-analyses's.

#![allow(dead_code)]

use std::path::Path;
use std::process::Command;

use serde_json::Value;

/// The `--mi` document of lttng-analyses's command `cmd` (`lttng-irqfreq-mi`…) with `args` on
/// the trace at `trace` (a path with a component named `kernel`), in UTC.
pub fn lttng_mi(cmd: &str, args: &[&str], trace: &Path) -> Value {
    let out = Command::new(cmd)
        .args(["--gmt"])
        .args(args)
        .arg(trace)
        .env("TZ", "UTC")
        .output()
        .unwrap_or_else(|e| panic!("{cmd}: {e}"));
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{cmd} {args:?}: {e}: {}",
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

/// Numbers equal up to a relative 1e-9 (float summation order differs); anything else exactly.
pub fn num_eq(a: &Value, b: &Value) -> bool {
    match (a.as_f64(), b.as_f64()) {
        (Some(x), Some(y)) => x == y || (x - y).abs() <= 1e-9 * x.abs().max(y.abs()),
        _ => a == b,
    }
}

/// JSON values equal with numbers compared by [`num_eq`].
pub fn json_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| json_eq(v, w)))
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(v, w)| json_eq(v, w))
        }
        (Value::Number(_), Value::Number(_)) => num_eq(a, b),
        _ => a == b,
    }
}
