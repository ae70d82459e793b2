//! A query's `{"parameters": {...}}` and its typed, checked readers: a missing or invalid
//! parameter is an [`ApiError::Param`] naming it, never a panic.

use serde_json::{Map, Value};

use crate::error::ApiError;

/// The largest `nbTimes` accepted (the protocol's bound).
pub const MAX_NB_TIMES: u64 = 65_536;
/// The most table lines one request may ask for.
pub const MAX_TABLE_COUNT: u64 = 100_000;

/// A query's parameters.
#[derive(Debug, Clone, Default)]
pub struct Params(pub Map<String, Value>);

/// A requested time range with its resolution.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TimeRange {
    /// Start (ns).
    pub start: i64,
    /// End (ns, ≥ start).
    pub end: i64,
    /// Number of sample times (1–65536); None when the request gave none.
    pub nb_times: Option<u64>,
}

impl TimeRange {
    /// The length of one resolution step (ns, at least 1), `default_n` steps without
    /// `nbTimes`.
    pub fn resolution(&self, default_n: u64) -> i64 {
        let n = self.nb_times.unwrap_or(default_n).max(1) as i128;
        let span = (self.end as i128 - self.start as i128).max(0);
        ((span / n) as i64).max(1)
    }

    /// `n` sample times spread evenly from start to end (both included when n > 1).
    pub fn samples(&self, n: usize) -> Vec<i64> {
        if n <= 1 {
            return vec![self.start];
        }
        let span = self.end as i128 - self.start as i128;
        (0..n)
            .map(|i| (self.start as i128 + span * i as i128 / (n as i128 - 1)) as i64)
            .collect()
    }
}

impl Params {
    /// Parses a request body: `{"parameters": {...}}` (an empty body or `{}` gives no
    /// parameters).
    pub fn from_body(body: &[u8]) -> Result<Params, ApiError> {
        if body.iter().all(|b| b.is_ascii_whitespace()) {
            return Ok(Params::default());
        }
        let v: Value = serde_json::from_slice(body).map_err(|e| ApiError::Body(e.to_string()))?;
        let Value::Object(mut top) = v else {
            return Err(ApiError::Body(
                "expected a JSON object {\"parameters\": {...}}".into(),
            ));
        };
        match top.remove("parameters") {
            None | Some(Value::Null) => Ok(Params::default()),
            Some(Value::Object(m)) => Ok(Params(m)),
            Some(_) => Err(ApiError::param("parameters", "expected an object")),
        }
    }

    /// A raw parameter.
    pub fn get(&self, name: &str) -> Option<&Value> {
        self.0.get(name).filter(|v| !v.is_null())
    }

    /// A string parameter.
    pub fn string(&self, name: &str) -> Result<Option<&str>, ApiError> {
        match self.get(name) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(_) => Err(ApiError::param(name, "expected a string")),
        }
    }

    /// A required string parameter.
    pub fn required_string(&self, name: &str) -> Result<&str, ApiError> {
        self.string(name)?
            .ok_or_else(|| ApiError::param(name, "missing"))
    }

    /// An integer parameter (a JSON integer, or a string of one).
    pub fn int(&self, name: &str) -> Result<Option<i64>, ApiError> {
        self.get(name).map(|v| as_i64(v, name)).transpose()
    }

    /// A non-negative integer parameter.
    pub fn uint(&self, name: &str) -> Result<Option<u64>, ApiError> {
        match self.int(name)? {
            Some(n) if n < 0 => Err(ApiError::param(name, format!("{n} is negative"))),
            n => Ok(n.map(|n| n as u64)),
        }
    }

    /// A list of integers (`requested_items`, `requested_times`…); None when absent.
    pub fn int_list(&self, name: &str) -> Result<Option<Vec<i64>>, ApiError> {
        match self.get(name) {
            None => Ok(None),
            Some(Value::Array(a)) => a
                .iter()
                .enumerate()
                .map(|(i, v)| as_i64(v, &format!("{name}[{i}]")))
                .collect::<Result<Vec<_>, _>>()
                .map(Some),
            Some(_) => Err(ApiError::param(name, "expected an array of integers")),
        }
    }

    /// A list of strings; None when absent.
    pub fn string_list(&self, name: &str) -> Result<Option<Vec<String>>, ApiError> {
        match self.get(name) {
            None => Ok(None),
            Some(Value::Array(a)) => a
                .iter()
                .enumerate()
                .map(|(i, v)| match v {
                    Value::String(s) => Ok(s.clone()),
                    _ => Err(ApiError::param(format!("{name}[{i}]"), "expected a string")),
                })
                .collect::<Result<Vec<_>, _>>()
                .map(Some),
            Some(_) => Err(ApiError::param(name, "expected an array of strings")),
        }
    }

    /// `requested_table_count`, at most [`MAX_TABLE_COUNT`].
    pub fn table_count(&self) -> Result<Option<u64>, ApiError> {
        const P: &str = "requested_table_count";
        match self.uint(P)? {
            Some(n) if n > MAX_TABLE_COUNT => Err(ApiError::param(
                P,
                format!("{n} is over the limit of {MAX_TABLE_COUNT}"),
            )),
            n => Ok(n),
        }
    }

    /// `requested_table_column_ids`, each one of `all` (absent or empty: all of them).
    pub fn column_ids(&self, all: &[i64]) -> Result<Vec<i64>, ApiError> {
        const P: &str = "requested_table_column_ids";
        match self.int_list(P)? {
            None => Ok(all.to_vec()),
            Some(v) if v.is_empty() => Ok(all.to_vec()),
            Some(v) => match v.iter().find(|c| !all.contains(c)) {
                Some(bad) => Err(ApiError::param(
                    P,
                    format!(
                        "no column {bad} (columns are {})",
                        all.iter()
                            .map(i64::to_string)
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                )),
                None => Ok(v),
            },
        }
    }

    /// `requested_timerange {start, end, nbTimes}` (`nbSamples` taken as `nbTimes`), else
    /// the older `requested_times` array (its first and last times, its length as
    /// `nbTimes`); None when neither is given.
    pub fn time_range(&self) -> Result<Option<TimeRange>, ApiError> {
        const P: &str = "requested_timerange";
        if let Some(v) = self.get(P) {
            let Value::Object(m) = v else {
                return Err(ApiError::param(
                    P,
                    "expected an object {start, end, nbTimes}",
                ));
            };
            let field = |k: &str| -> Result<Option<i64>, ApiError> {
                m.get(k)
                    .filter(|v| !v.is_null())
                    .map(|v| as_i64(v, &format!("{P}.{k}")))
                    .transpose()
            };
            let start =
                field("start")?.ok_or_else(|| ApiError::param(format!("{P}.start"), "missing"))?;
            let end =
                field("end")?.ok_or_else(|| ApiError::param(format!("{P}.end"), "missing"))?;
            let (key, n) = match field("nbTimes")? {
                Some(n) => ("nbTimes", Some(n)),
                None => ("nbSamples", field("nbSamples")?),
            };
            return check_range(start, end, n, &format!("{P}.{key}")).map(Some);
        }
        match self.int_list("requested_times")? {
            None => Ok(None),
            Some(t) if t.is_empty() => Err(ApiError::param("requested_times", "empty")),
            Some(t) => {
                let start = *t.iter().min().unwrap_or(&0);
                let end = *t.iter().max().unwrap_or(&0);
                check_range(start, end, Some(t.len() as i64), "requested_times").map(Some)
            }
        }
    }

    /// [`Params::time_range`], required.
    pub fn required_time_range(&self) -> Result<TimeRange, ApiError> {
        self.time_range()?.ok_or_else(|| {
            ApiError::param(
                "requested_timerange",
                "missing (give {\"start\": ns, \"end\": ns, \"nbTimes\": n})",
            )
        })
    }
}

fn check_range(start: i64, end: i64, n: Option<i64>, n_name: &str) -> Result<TimeRange, ApiError> {
    if start > end {
        return Err(ApiError::param(
            "requested_timerange",
            format!("start {start} is after end {end}"),
        ));
    }
    let nb_times = match n {
        None => None,
        Some(n) if n < 1 || n as u64 > MAX_NB_TIMES => {
            return Err(ApiError::param(
                n_name,
                format!("{n} is out of 1–{MAX_NB_TIMES}"),
            ))
        }
        Some(n) => Some(n as u64),
    };
    Ok(TimeRange {
        start,
        end,
        nb_times,
    })
}

/// An integer: a JSON integer (a float with no fraction too, as JavaScript numbers are) or
/// a string of one.
fn as_i64(v: &Value, name: &str) -> Result<i64, ApiError> {
    match v {
        Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                Ok(i)
            } else if let Some(f) = n.as_f64().filter(|f| f.fract() == 0.0 && f.abs() < 9.2e18) {
                Ok(f as i64)
            } else {
                Err(ApiError::param(
                    name,
                    format!("{n} is not a 64-bit integer"),
                ))
            }
        }
        Value::String(s) => s
            .trim()
            .parse::<i64>()
            .map_err(|_| ApiError::param(name, format!("{s:?} is not an integer"))),
        _ => Err(ApiError::param(name, "expected an integer")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> Result<Params, ApiError> {
        Params::from_body(s.as_bytes())
    }

    #[test]
    fn time_range_checks() {
        let r = p(r#"{"parameters":{"requested_timerange":{"start":10,"end":30,"nbTimes":2}}}"#)
            .unwrap()
            .required_time_range()
            .unwrap();
        assert_eq!(
            (r.start, r.end, r.nb_times, r.resolution(1)),
            (10, 30, Some(2), 10)
        );
        assert_eq!(r.samples(3), vec![10, 20, 30]);
        for bad in [
            r#"{"parameters":{"requested_timerange":{"start":40,"end":30}}}"#,
            r#"{"parameters":{"requested_timerange":{"start":1,"end":30,"nbTimes":0}}}"#,
            r#"{"parameters":{"requested_timerange":{"start":1,"end":30,"nbTimes":65537}}}"#,
            r#"{"parameters":{"requested_timerange":{"end":30}}}"#,
            r#"{"parameters":{"requested_timerange":[1,2]}}"#,
            r#"{"parameters":{"requested_timerange":{"start":1.5,"end":30}}}"#,
            r#"{"parameters":{}}"#,
        ] {
            let e = p(bad).unwrap().required_time_range().unwrap_err();
            assert!(matches!(e, ApiError::Param { .. }), "{bad}: {e}");
        }
        let old = p(r#"{"parameters":{"requested_times":[5,1,9]}}"#).unwrap();
        let r = old.required_time_range().unwrap();
        assert_eq!((r.start, r.end, r.nb_times), (1, 9, Some(3)));
        assert!(matches!(p("[1]"), Err(ApiError::Body(_))));
        assert!(matches!(p("{"), Err(ApiError::Body(_))));
        assert!(matches!(
            p(r#"{"parameters":3}"#),
            Err(ApiError::Param { .. })
        ));
    }
}
