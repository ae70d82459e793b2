//! `tracekit latency`: latency trackers (wakeup, off-CPU, syscall, block, IRQ) over kernel
//! traces, reporting each occurrence over a threshold and each timeout.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, ValueEnum};
use latency::report::{report_text, summary_json, summary_text};
use latency::{run_traces_mapped, Config, Report, Tracker};
use pipeline::time::parse_threshold;

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum TrackerArg {
    Wakeup,
    Offcpu,
    Syscall,
    Block,
    Irq,
    /// Probed functions, entry to return (`record --function`/`--userspace-function`).
    Function,
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
    /// Print, instead of the reports, the stacks of the occurrences reported (recorded with
    /// `tracekit record --stacks`) in the collapsed format of flame graphs (flamegraph.pl,
    /// inferno): `comm;outer;…;inner WEIGHT`, weighted by the latencies in µs.
    #[arg(long, conflicts_with_all = ["json", "summary_only"])]
    pub folded: bool,
}

pub fn run(a: &LatencyArgs) -> Result<ExitCode, Box<dyn std::error::Error>> {
    let threshold = parse_threshold(&a.threshold)?;
    let timeout = match a.timeout.trim() {
        "none" | "0" => None,
        t => Some(parse_threshold(t)?),
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
                TrackerArg::Function => Tracker::Function,
            })
            .collect();
        v.sort();
        v.dedup();
        v
    };
    let config = Config {
        threshold,
        timeout,
        max_pending: a.max_pending,
    };
    if let Some(urls) = crate::live_cmd::urls(&a.paths) {
        return run_live(a, &urls?, &trackers, config);
    }
    let traces = ctf::open_all(&a.paths)?;
    let time_map: Option<std::sync::Arc<dyn ctf::merge::TimeMap>> = if a.sync {
        Some(crate::sync_cmd::time_map(&traces))
    } else {
        None
    };
    let mut out = crate::output::stdout();
    // The stacks of `record --stacks`, shown with the occurrences they were taken for (on
    // the traces' own clocks: not with --sync).
    let stacks = if a.sync {
        latency::stacks::StackIndex::default()
    } else {
        latency::stacks::StackIndex::new(kernel::stacks::read_stacks(&traces)?)
    };
    let mut folded: Vec<kernel::stacks::StackSample> = Vec::new();
    let res = run_traces_mapped(
        &traces,
        time_map,
        &trackers,
        config,
        |r: Report| -> std::io::Result<()> {
            if a.summary_only {
                return Ok(());
            }
            let st = stacks.for_report(&r);
            if a.folded {
                folded.extend(st.into_iter().cloned());
                return Ok(());
            }
            if a.json {
                let mut j = r.to_json();
                if !st.is_empty() {
                    j["stacks"] = stacks.json(&st);
                }
                serde_json::to_writer(&mut out, &j)?;
                out.write_all(b"\n")
            } else {
                out.write_all(report_text(&r).as_bytes())?;
                out.write_all(stacks.text(&st).as_bytes())
            }
        },
    );
    finish(a, res, &mut out, &stacks, &folded)
}

/// Writes the summary after the reports (with `--folded`, the stacks `folded` of the
/// occurrences, symbolized by `stacks`).
fn finish(
    a: &LatencyArgs,
    res: std::io::Result<latency::Summary>,
    out: &mut impl Write,
    stacks: &latency::stacks::StackIndex,
    folded: &[kernel::stacks::StackSample],
) -> Result<ExitCode, Box<dyn std::error::Error>> {
    let r = res.and_then(|s| {
        if a.folded {
            if stacks.is_empty() {
                eprintln!(
                    "tracekit: no stacks in these traces (record them with `tracekit record \
                     --stacks RULE`)"
                );
            }
            let lines =
                kernel::stacks::folded(folded, stacks.symbols(), |s| (s.delay / 1000).max(1));
            for l in lines {
                writeln!(out, "{l}")?;
            }
            Ok(())
        } else if a.json {
            serde_json::to_writer(&mut *out, &summary_json(&s))?;
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

/// `latency net://…`: each occurrence printed (and flushed) as soon as the live session's
/// events show it; the summary when the session is destroyed.
fn run_live(
    a: &LatencyArgs,
    urls: &[live::Url],
    trackers: &[Tracker],
    config: Config,
) -> Result<ExitCode, Box<dyn std::error::Error>> {
    let source = crate::live_cmd::source(urls, a.sync)?;
    let mut out = crate::output::stdout();
    let mut sink =
        latency::LatencySink::new(trackers, config, |r: Report| -> std::io::Result<()> {
            if a.summary_only {
                return Ok(());
            }
            if a.json {
                serde_json::to_writer(&mut out, &r.to_json())?;
                out.write_all(b"\n")?;
            } else {
                out.write_all(report_text(&r).as_bytes())?;
            }
            out.flush()
        });
    ::pipeline::Source::run(&source, &mut sink);
    let res = sink.summary();
    // (A live session's stacks are not read: `--folded` says there are none.)
    let none = latency::stacks::StackIndex::default();
    finish(a, res, &mut crate::output::stdout(), &none, &[])
}
