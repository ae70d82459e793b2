//! The report of a synchronization, as text for people and as JSON: each pair's formula,
//! bounds and quality, each trace's transform to the reference clock, and what went wrong.

use std::fmt::Write;

use serde_json::{json, Value};

use crate::graph::{Bounds, PairReport};
use crate::{Quality, Rational, Session, Transform};

/// Significant digits of the published decimal strings.
const DIGITS: usize = 40;

/// `r` with [`DIGITS`] significant digits.
fn dec(r: &Rational) -> String {
    r.to_decimal(DIGITS)
}

/// Human-readable problems of a session: unconnected hosts, missing network events.
pub fn verdicts(s: &Session) -> Vec<String> {
    let mut v = Vec::new();
    let r = &s.result;
    let name = |h: u32| host_name(s, h);
    if s.stats.events == 0 {
        v.push(
            "no network event with TCP fields (inet_sock_local_in/out, net_dev_queue, \
             net_if_receive_skb/netif_receive_skb) in any trace: nothing to synchronize"
                .to_string(),
        );
    } else if s.stats.matches == 0 {
        v.push("no packet sent by one host was found received by another".to_string());
    }
    for p in &r.pairs {
        match p.quality {
            Quality::Incomplete => v.push(format!(
                "{} and {}: packets went one way only ({} matches): no formula",
                name(p.ref_host),
                name(p.other_host),
                p.matches
            )),
            Quality::Fail => v.push(format!(
                "{} and {}: the clocks are not linearly related over the whole trace (the \
                 hulls cross); {}",
                name(p.ref_host),
                name(p.other_host),
                if matches!(p.transform, Some(Transform::Piecewise(_))) {
                    "using a piecewise-linear transform over time windows"
                } else {
                    "keeping the last good formula"
                }
            )),
            _ => {}
        }
    }
    for (h, hr) in r.hosts.iter().enumerate() {
        if !hr.connected {
            v.push(format!(
                "{} is not connected to the reference {} (quality {}): its times are left \
                 unchanged",
                name(h as u32),
                name(r.reference),
                hr.quality.as_str()
            ));
        }
    }
    v
}

/// The paths of the traces of host `h`.
fn host_name(s: &Session, h: u32) -> String {
    let paths: Vec<String> = s
        .traces
        .iter()
        .filter(|t| t.host == h)
        .map(|t| t.path.display().to_string())
        .collect();
    if paths.is_empty() {
        format!("host {h}")
    } else {
        paths.join(", ")
    }
}

/// A transform's bounds in the JSON report.
fn bounds_json(b: &Option<Bounds>) -> Value {
    match b {
        Some(b) => json!({
            "slope_min": dec(&b.slope.0), "slope_max": dec(&b.slope.1),
            "offset_min": dec(&b.offset.0), "offset_max": dec(&b.offset.1),
        }),
        None => Value::Null,
    }
}

/// A piecewise transform's pieces in the JSON report (null for a linear one).
fn transform_json(t: &Transform) -> Value {
    match t {
        Transform::Linear(_) => Value::Null,
        Transform::Piecewise(p) => p
            .iter()
            .map(|x| {
                json!({
                    "from_ns": if x.start == i64::MIN { Value::Null } else { json!(x.start) },
                    "slope": dec(&x.lin.slope),
                    "offset": dec(&x.lin.offset),
                })
            })
            .collect(),
    }
}

/// One pair of hosts in the JSON report.
fn pair_json(s: &Session, p: &PairReport) -> Value {
    let host_ids = |h: u32| s.result.hosts[h as usize].host_id.clone();
    let f = p.formula.as_ref();
    let fb = f.and_then(|f| f.bounds.as_ref());
    json!({
        "ref": host_name(s, p.ref_host),
        "other": host_name(s, p.other_host),
        "ref_host_id": host_ids(p.ref_host),
        "other_host_id": host_ids(p.other_host),
        "quality": p.quality.as_str(),
        "matches": p.matches,
        "accurate_matches": p.accurate,
        "hull_points": {"upper": p.hull_sizes.0, "lower": p.hull_sizes.1},
        "formula": "T_other = alpha * T_ref + beta",
        "alpha": f.map(|f| dec(&f.alpha)),
        "beta": f.map(|f| dec(&f.beta)),
        "alpha_min": fb.map(|b| dec(&b.alpha_min)),
        "alpha_max": fb.map(|b| dec(&b.alpha_max)),
        "beta_min": fb.map(|b| dec(&b.beta_min)),
        "beta_max": fb.map(|b| dec(&b.beta_max)),
        "accuracy": fb.map(|b| b.accuracy().to_decimal(6)),
        "windows": p.windows.as_ref().map(|w| w.iter().map(|w| json!({
            "start_ns": w.start, "quality": w.quality.as_str(), "matches": w.matches,
        })).collect::<Vec<_>>()),
    })
}

/// The JSON report.
pub fn to_json(s: &Session) -> Value {
    let r = &s.result;
    let traces: Vec<Value> = s
        .traces
        .iter()
        .map(|t| {
            let h = &r.hosts[t.host as usize];
            let l = h.transform.main_linear();
            json!({
                "path": t.path.display().to_string(),
                "host_id": h.host_id,
                "slope": dec(&l.slope),
                "offset": dec(&l.offset),
                "quality": h.quality.as_str(),
                "connected": h.connected,
                "reference": t.host == r.reference,
                "network_events": t.net_events,
                "bounds": bounds_json(&h.bounds),
                "piecewise": transform_json(&h.transform),
                "path_to_reference": h.path.iter().map(|x| host_name(s, *x)).collect::<Vec<_>>(),
            })
        })
        .collect();
    json!({
        "reference": s.traces[s.reference_trace()].path.display().to_string(),
        "matches": s.stats.matches,
        "pairs": r.pairs.iter().map(|p| pair_json(s, p)).collect::<Vec<_>>(),
        "traces": traces,
        "stats": {
            "network_events": s.stats.events,
            "local_matches": s.stats.local_matches,
            "duplicates": s.stats.duplicates,
            "evicted_unmatched": s.stats.evicted,
            "keys_include_flow": s.uses_flows,
        },
        "messages": verdicts(s),
    })
}

/// The text report.
pub fn to_text(s: &Session) -> String {
    let r = &s.result;
    let mut o = String::new();
    let nhosts = r.hosts.len();
    let _ = writeln!(
        o,
        "Reference: {} (host {})",
        s.traces[s.reference_trace()].path.display(),
        r.hosts[r.reference as usize].host_id
    );
    let _ = writeln!(
        o,
        "{} traces, {} hosts; {} network events, {} packets matched between hosts ({} local, \
         {} duplicates dropped, {} unmatched dropped); keys: seq, ack_seq, flags{}",
        s.traces.len(),
        nhosts,
        s.stats.events,
        s.stats.matches,
        s.stats.local_matches,
        s.stats.duplicates,
        s.stats.evicted,
        if s.uses_flows {
            " and the address/port 4-tuple"
        } else {
            ""
        }
    );
    for p in &r.pairs {
        let _ = writeln!(o);
        let _ = writeln!(
            o,
            "Pair {}  ->  {}",
            host_name(s, p.ref_host),
            host_name(s, p.other_host)
        );
        let _ = writeln!(
            o,
            "  quality {}, {} matches, {} accurate, hull points {} upper / {} lower",
            p.quality.as_str(),
            p.matches,
            p.accurate,
            p.hull_sizes.0,
            p.hull_sizes.1
        );
        if let Some(f) = &p.formula {
            let _ = writeln!(
                o,
                "  T_other = α·T_ref + β{}:",
                if p.quality == Quality::Fail {
                    " (last good formula)"
                } else {
                    ""
                }
            );
            let _ = writeln!(o, "    α = {}", dec(&f.alpha));
            let _ = writeln!(o, "    β = {} ns", dec(&f.beta));
            if let Some(b) = &f.bounds {
                let _ = writeln!(
                    o,
                    "    α ∈ [{}, {}]  (accuracy {})",
                    b.alpha_min.to_decimal(20),
                    b.alpha_max.to_decimal(20),
                    b.accuracy().to_decimal(3)
                );
                let _ = writeln!(
                    o,
                    "    β ∈ [{}, {}] ns",
                    b.beta_min.to_decimal(25),
                    b.beta_max.to_decimal(25)
                );
            }
        }
        if let Some(w) = &p.windows {
            let good = w
                .iter()
                .filter(|w| matches!(w.quality, Quality::Accurate | Quality::Approximate))
                .count();
            let _ = writeln!(
                o,
                "  piecewise fallback: {} windows, {} usable",
                w.len(),
                good
            );
        }
    }
    let _ = writeln!(o);
    let _ = writeln!(
        o,
        "Transforms (t_ref = slope × t + offset, ns since the epoch):"
    );
    for t in &s.traces {
        let h = &r.hosts[t.host as usize];
        if t.host == r.reference {
            let _ = writeln!(o, "  {}: reference", t.path.display());
            continue;
        }
        let l = h.transform.main_linear();
        let _ = writeln!(
            o,
            "  {}: {}{}",
            t.path.display(),
            h.quality.as_str(),
            if h.connected {
                ""
            } else {
                ", not connected (unchanged)"
            }
        );
        match &h.transform {
            Transform::Linear(_) => {
                let _ = writeln!(o, "    slope  {}", dec(&l.slope));
                let _ = writeln!(o, "    offset {} ns", dec(&l.offset));
            }
            Transform::Piecewise(p) => {
                let _ = writeln!(o, "    piecewise linear, {} pieces", p.len());
            }
        }
        if let Some(b) = &h.bounds {
            let _ = writeln!(
                o,
                "    slope  ∈ [{}, {}]",
                b.slope.0.to_decimal(20),
                b.slope.1.to_decimal(20)
            );
            let _ = writeln!(
                o,
                "    offset ∈ [{}, {}] ns",
                b.offset.0.to_decimal(25),
                b.offset.1.to_decimal(25)
            );
        }
        if h.connected && h.path.len() > 2 {
            let names: Vec<String> = h.path.iter().map(|x| host_name(s, *x)).collect();
            let _ = writeln!(o, "    via {}", names.join(" -> "));
        }
    }
    let v = verdicts(s);
    if !v.is_empty() {
        let _ = writeln!(o);
        for m in v {
            let _ = writeln!(o, "note: {m}");
        }
    }
    o
}
