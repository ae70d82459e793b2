//! `tracekit latency`: latency trackers (wakeup, off-CPU, syscall, block, IRQ) over kernel
//! traces, reporting each occurrence over a threshold and each timeout.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, ValueEnum};
use latency::cli::LatencyRequest;
use latency::Tracker;

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

impl From<TrackerArg> for Tracker {
    fn from(t: TrackerArg) -> Self {
        match t {
            TrackerArg::Wakeup => Tracker::Wakeup,
            TrackerArg::Offcpu => Tracker::Offcpu,
            TrackerArg::Syscall => Tracker::Syscall,
            TrackerArg::Block => Tracker::Block,
            TrackerArg::Irq => Tracker::Irq,
            TrackerArg::Function => Tracker::Function,
        }
    }
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
    let req = LatencyRequest {
        trackers: a.tracker.iter().map(|t| (*t).into()).collect(),
        threshold: a.threshold.clone(),
        timeout: a.timeout.clone(),
        max_pending: a.max_pending,
        json: a.json,
        summary_only: a.summary_only,
        folded: a.folded,
    };
    let plan = req.plan()?;
    let mut out = crate::output::stdout();
    if let Some(urls) = crate::live_cmd::urls(&a.paths) {
        let source = crate::live_cmd::source(&urls?, a.sync)?;
        req.run_source(&plan, &source, &mut out)?;
        return Ok(ExitCode::SUCCESS);
    }
    let traces = ctf::open_all(&a.paths)?;
    let time_map = a.sync.then(|| crate::sync_cmd::time_map(&traces));
    req.run_files(&plan, &traces, time_map, &mut out)?;
    Ok(ExitCode::SUCCESS)
}
