//! The text and JSON renderings of the latency trackers' reports and summary.

use pipeline::time::format_utc;

use crate::{Report, Summary};

/// A latency with three decimals in the largest unit under it (`1.500 ms`).
pub(crate) fn fmt_ns(ns: i64) -> String {
    if ns >= 1_000_000_000 {
        format!("{:.3} s", ns as f64 / 1e9)
    } else if ns >= 1_000_000 {
        format!("{:.3} ms", ns as f64 / 1e6)
    } else {
        format!("{:.3} us", ns as f64 / 1e3)
    }
}

/// One report as a text line: its range, tracker, kind, latency, thread, CPU, waker and
/// detail.
pub fn report_text(r: &Report) -> String {
    let who = match (&r.comm, r.tid) {
        (Some(c), Some(t)) => format!("{c} ({t})"),
        (None, Some(t)) => format!("? ({t})"),
        _ => "-".into(),
    };
    let cpu = r.cpu.map_or(String::new(), |c| format!(" cpu {c}"));
    let waker = r
        .waker
        .as_ref()
        .map_or(String::new(), |(t, c)| format!(" waker {c} ({t})"));
    let kind = if r.timeout {
        "TIMEOUT "
    } else if r.timed_out {
        "late    "
    } else {
        ""
    };
    format!(
        "[{}, {}] {:<8} {kind}{:>12}  {who}{cpu}{waker}  {}\n",
        format_utc(r.begin),
        &format_utc(r.end)[11..],
        r.tracker.name(),
        fmt_ns(r.latency),
        r.detail
    )
}

/// The summary as text: each tracker's counters, its extremes and a log2 histogram.
pub fn summary_text(s: &Summary) -> String {
    let mut o = String::new();
    for t in &s.trackers {
        let c = &t.counters;
        o.push_str(&format!(
            "\n{}: {} matched, {} over the threshold, {} timeouts, {} still pending, {} skipped (full), {} unmatched ends\n",
            t.tracker.name(),
            c.matched,
            c.reported,
            c.timeouts,
            t.pending,
            c.skipped,
            c.unmatched_out
        ));
        if let (Some(min), Some(max), Some(avg)) = (t.min, t.max, t.avg) {
            o.push_str(&format!(
                "  min {}  avg {}  max {}\n",
                fmt_ns(min),
                fmt_ns(avg as i64),
                fmt_ns(max)
            ));
            let m = t.hist.iter().map(|h| h.1).max().unwrap_or(1);
            for &(lo, n) in &t.hist {
                let bar = "#".repeat(((n as f64 * 50.0 / m as f64).ceil()) as usize);
                o.push_str(&format!("  >= {:>12} {:>9} {bar}\n", fmt_ns(lo), n));
            }
        }
    }
    o
}

/// The summary as one JSON object (`{"summary": [per tracker]}`).
pub fn summary_json(s: &Summary) -> serde_json::Value {
    serde_json::json!({"summary": s.trackers.iter().map(|t| serde_json::json!({
        "tracker": t.tracker.name(),
        "matched": t.counters.matched,
        "reported": t.counters.reported,
        "timeouts": t.counters.timeouts,
        "pending": t.pending,
        "skipped": t.counters.skipped,
        "unmatched_out": t.counters.unmatched_out,
        "min_ns": t.min,
        "avg_ns": t.avg,
        "max_ns": t.max,
        "log2_histogram": t.hist.iter().map(|(lo, n)| serde_json::json!({"ge_ns": lo, "count": n})).collect::<Vec<_>>(),
    })).collect::<Vec<_>>()})
}
