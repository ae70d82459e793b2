//! Reading back the ground truth `client-server` writes (`ground-truth.json`): the marked
//! request and its critical path, and the hosts' clocks.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value;

/// The ground truth could not be read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum GroundTruthError {
    /// The file could not be read.
    #[error("ground truth: {0}")]
    Io(#[from] std::io::Error),
    /// The file is not JSON.
    #[error("ground truth: {0}")]
    Json(#[from] serde_json::Error),
    /// A field is missing or malformed.
    #[error("ground truth: {0}")]
    Field(&'static str),
}

/// The request the generator marked, as it happened.
#[derive(Debug, Clone)]
pub struct MarkedRequest {
    /// Its index among the requests.
    pub index: u64,
    /// The client host's name.
    pub client: String,
    /// The client thread that made it.
    pub tid: i64,
    /// When it began and ended (true time, ns since the epoch).
    pub begin: i64,
    /// See `begin`.
    pub end: i64,
    /// Its critical path: (host, thread, state) of each segment.
    pub critical_path: Vec<(String, i64, String)>,
    /// The client's clock.
    pub clock: HostClock,
}

/// A host's clock as the generator made it: `host_ns = floor(slope × true_ns + offset_ns)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HostClock {
    /// The slope ×10^9.
    slope: i128,
    /// The offset (ns) ×10^9.
    offset: i128,
}

impl HostClock {
    /// The clocks of every host of the ground truth at `path`, by host name.
    pub fn read_all(path: &Path) -> Result<BTreeMap<String, HostClock>, GroundTruthError> {
        let gt: Value = serde_json::from_str(&std::fs::read_to_string(path)?)?;
        Self::of_hosts(&gt)
    }

    fn of_hosts(gt: &Value) -> Result<BTreeMap<String, HostClock>, GroundTruthError> {
        let mut out = BTreeMap::new();
        for h in gt["hosts"].as_array().into_iter().flatten() {
            let name = h["name"]
                .as_str()
                .ok_or(GroundTruthError::Field("host name"))?;
            let slope = h["slope"]
                .as_str()
                .and_then(nano_units)
                .ok_or(GroundTruthError::Field("slope"))?;
            let offset = h["offset_ns"]
                .as_str()
                .and_then(nano_units)
                .ok_or(GroundTruthError::Field("offset"))?;
            out.insert(name.to_string(), HostClock { slope, offset });
        }
        Ok(out)
    }

    /// The host's clock reading at true time `t` (ns).
    pub fn at(&self, t: i128) -> i128 {
        (self.slope * t + self.offset).div_euclid(1_000_000_000)
    }

    /// The true time (ns) at which the host's clock read `host_ns` (to within a nanosecond).
    pub fn true_time(&self, host_ns: i128) -> i128 {
        (host_ns * 1_000_000_000 - self.offset).div_euclid(self.slope)
    }
}

impl MarkedRequest {
    /// Compares a computed critical path (its segments' host, thread and state) with this
    /// one, consecutive equal segments taken as one in both: the number of segments of each
    /// (the truth's, the computed path's) and whether they are the same in the same order.
    pub fn compare_path(
        &self,
        path: impl IntoIterator<Item = (String, i64, String)>,
    ) -> (usize, usize, bool) {
        let shape = |v: &mut dyn Iterator<Item = (String, i64, String)>| {
            let mut out: Vec<(String, i64, String)> = Vec::new();
            for x in v {
                if out.last() != Some(&x) {
                    out.push(x);
                }
            }
            out
        };
        let expected = shape(&mut self.critical_path.iter().cloned());
        let got = shape(&mut path.into_iter());
        (expected.len(), got.len(), got == expected)
    }

    /// The marked request of the ground truth at `path`; None when it has none.
    pub fn read(path: &Path) -> Result<Option<MarkedRequest>, GroundTruthError> {
        let gt: Value = serde_json::from_str(&std::fs::read_to_string(path)?)?;
        let m = &gt["marked_request"];
        let (Some(client), Some(tid)) = (m["client"].as_str(), m["tid"].as_i64()) else {
            return Ok(None);
        };
        let num = |v: &Value| v.as_str().and_then(|s| s.parse::<i64>().ok());
        let (Some(begin), Some(end)) = (num(&m["begin"]), num(&m["end"])) else {
            return Ok(None);
        };
        let clock = *HostClock::of_hosts(&gt)?
            .get(client)
            .ok_or(GroundTruthError::Field("no client host"))?;
        let critical_path = m["critical_path"]
            .as_array()
            .map(|a| {
                a.iter()
                    .map(|s| {
                        (
                            s["host"].as_str().unwrap_or("").to_string(),
                            s["tid"].as_i64().unwrap_or(0),
                            s["state"].as_str().unwrap_or("").to_string(),
                        )
                    })
                    .collect()
            })
            .unwrap_or_default();
        Ok(Some(MarkedRequest {
            index: m["index"]
                .as_u64()
                .ok_or(GroundTruthError::Field("index"))?,
            client: client.to_string(),
            tid,
            begin,
            end,
            critical_path,
            clock,
        }))
    }

    /// The client's clock reading at true time `t`.
    pub fn on_client(&self, t: i64) -> i64 {
        self.clock.at(t as i128) as i64
    }
}

/// A decimal string (up to 9 decimals) times 10^9.
fn nano_units(s: &str) -> Option<i128> {
    let neg = s.starts_with('-');
    let s = s.trim_start_matches('-');
    let (i, f) = s.split_once('.').unwrap_or((s, ""));
    let f: String = f.chars().chain(std::iter::repeat('0')).take(9).collect();
    let v = i.parse::<i128>().ok()? * 1_000_000_000 + f.parse::<i128>().ok()?;
    Some(if neg { -v } else { v })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_compare_by_their_segments() {
        let seg = |h: &str, t: i64, s: &str| (h.to_string(), t, s.to_string());
        let m = MarkedRequest {
            index: 0,
            client: "c".into(),
            tid: 1,
            begin: 0,
            end: 1,
            critical_path: vec![seg("c", 1, "running"), seg("s", 2, "running")],
            clock: HostClock {
                slope: 1_000_000_000,
                offset: 0,
            },
        };
        // Consecutive equal segments are one.
        let same = [
            seg("c", 1, "running"),
            seg("c", 1, "running"),
            seg("s", 2, "running"),
        ];
        assert_eq!(m.compare_path(same), (2, 2, true));
        assert_eq!(m.compare_path([seg("c", 1, "running")]), (2, 1, false));
        let swapped = [seg("s", 2, "running"), seg("c", 1, "running")];
        assert_eq!(m.compare_path(swapped), (2, 2, false));
    }
}
