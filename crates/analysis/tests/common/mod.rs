//! Comparing `--mi` documents with lttng-analyses's.

#![allow(dead_code)]

use serde_json::Value;

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
