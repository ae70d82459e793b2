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

/// Rows equal in order ([`json_eq`]), except that a run of consecutive reference rows with
/// the same `tie` key may come in any order: rows made from events with the same timestamp on
/// different CPUs, which babeltrace 1 (lttng-analyses' reader) and tracekit's reader deliver
/// in their own orders. The error names `what` and the first row that differs.
pub fn rows_in_order(
    what: &str,
    ours: &[Value],
    reference: &[Value],
    tie: Option<&dyn Fn(&Value) -> Value>,
) {
    assert_eq!(ours.len(), reference.len(), "{what}: rows");
    let mut i = 0;
    while i < reference.len() {
        let Some(key) = tie else {
            assert!(
                json_eq(&ours[i], &reference[i]),
                "{what}: row {i}:\n  ours {}\n  ref  {}",
                ours[i],
                reference[i]
            );
            i += 1;
            continue;
        };
        let k = key(&reference[i]);
        let end = (i..reference.len())
            .find(|&j| key(&reference[j]) != k)
            .unwrap_or(reference.len());
        let mut left: Vec<&Value> = reference[i..end].iter().collect();
        for (j, r) in ours[i..end].iter().enumerate() {
            let at = left.iter().position(|x| json_eq(r, x));
            assert!(
                at.is_some(),
                "{what}: row {}:\n  ours {r}\n  ref  {}",
                i + j,
                reference[i + j]
            );
            left.swap_remove(at.unwrap());
        }
        i = end;
    }
}
