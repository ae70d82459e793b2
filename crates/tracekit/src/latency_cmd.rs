//! `tracekit latency`: latency trackers (wakeup, off-CPU, syscall, block, IRQ) over kernel
//! traces, reporting each occurrence over a threshold and each timeout.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, ValueEnum};
use latency::{parse_duration, run_traces_mapped, Config, Report, Summary, Tracker};

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum TrackerArg {
    Wakeup,
    Offcpu,
    Syscall,
    Block,
    Irq,
}

#[derive(Args, Debug)]
pub struct LatencyArgs {
    /// Trace directories (or directories holding traces).
    #[arg(required = true)]
    pub paths: Vec<PathBuf>,
    /// Trackers to run (comma-separated or repeated; default: all).
    #[arg(long, value_enum, value_delimiter = ',')]
    pub tracker: Vec<TrackerArg>,
    /// Report latencies of at least this (`500us`, `1ms`, `2s`; no unit: µs).
    #[arg(long, default_value = "1ms")]
    pub threshold: String,
    /// Report measurements pending for longer than this (`none`: never).
    #[arg(long, default_value = "1s")]
    pub timeout: String,
    /// At most this many measurements in flight per tracker.
    #[arg(long, default_value_t = 65_536)]
    pub max_pending: usize,
    /// One JSON object per line: each report, then a summary.
    #[arg(long)]
    pub json: bool,
    /// Do not list the reports (summary and histograms only).
    #[arg(long)]
    pub summary_only: bool,
    /// Synchronize the hosts' clocks first (`tracekit sync`) and report on the reference's.
    #[arg(long)]
    pub sync: bool,
}

fn fmt_ns(ns: i64) -> String {
    if ns >= 1_000_000_000 {
        format!("{:.3} s", ns as f64 / 1e9)
    } else if ns >= 1_000_000 {
        format!("{:.3} ms", ns as f64 / 1e6)
    } else {
        format!("{:.3} us", ns as f64 / 1e3)
    }
}

fn report_text(r: &Report) -> String {
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
        analysis::text::fmt_ts(r.begin),
        &analysis::text::fmt_ts(r.end)[11..],
        r.tracker.name(),
        fmt_ns(r.latency),
        r.detail
    )
}

fn summary_text(s: &Summary) -> String {
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

fn summary_json(s: &Summary) -> serde_json::Value {
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

pub fn run(a: &LatencyArgs) -> Result<ExitCode, Box<dyn std::error::Error>> {
    let threshold = parse_duration(&a.threshold)?;
    let timeout = match a.timeout.trim() {
        "none" | "0" => None,
        t => Some(parse_duration(t)?),
    };
    let trackers: Vec<Tracker> = if a.tracker.is_empty() {
        Tracker::ALL.to_vec()
    } else {
        let mut v: Vec<Tracker> = a
            .tracker
            .iter()
            .map(|t| match t {
                TrackerArg::Wakeup => Tracker::Wakeup,
                TrackerArg::Offcpu => Tracker::Offcpu,
                TrackerArg::Syscall => Tracker::Syscall,
                TrackerArg::Block => Tracker::Block,
                TrackerArg::Irq => Tracker::Irq,
            })
            .collect();
        v.sort();
        v.dedup();
        v
    };
    let traces = ctf::open_all(&a.paths)?;
    let time_map: Option<std::sync::Arc<dyn ctf::merge::TimeMap>> = if a.sync {
        let session = crate::sync_cmd::session_for(&traces, None, 60.0)?;
        for m in crate::sync_cmd::verdicts(&session) {
            eprintln!("tracekit: sync: {m}");
        }
        Some(std::sync::Arc::new(session.time_maps()))
    } else {
        None
    };
    let mut out = crate::output::stdout();
    let config = Config {
        threshold,
        timeout,
        max_pending: a.max_pending,
    };
    let res = run_traces_mapped(
        &traces,
        time_map,
        &trackers,
        config,
        |r: Report| -> std::io::Result<()> {
            if a.summary_only {
                return Ok(());
            }
            if a.json {
                serde_json::to_writer(&mut out, &r.to_json())?;
                out.write_all(b"\n")
            } else {
                out.write_all(report_text(&r).as_bytes())
            }
        },
    );
    let r = res.and_then(|s| {
        if a.json {
            serde_json::to_writer(&mut out, &summary_json(&s))?;
            out.write_all(b"\n")
        } else {
            out.write_all(summary_text(&s).as_bytes())
        }
    });
    match r.and_then(|_| out.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(e.into()),
        _ => Ok(ExitCode::SUCCESS),
    }
}
