//! `tracekit top`: the live dashboard (crates/top) over a local recording, a replayed trace
//! or (with the live source) a relay session.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use clap::Args;
use top::cli::TopRequest;

use crate::latency_cmd::TrackerArg;

#[derive(Args, Debug)]
pub struct TopArgs {
    /// A trace directory to replay (with --replay). Without it, a kernel recording is made
    /// (root) and shown as it is written; the trace is kept.
    pub path: Option<PathBuf>,
    /// Replay PATH at its recorded pace (see --speed).
    #[arg(long, requires = "path")]
    pub replay: bool,
    /// Replay this many times faster than recorded (0: as fast as it reads).
    #[arg(long, default_value_t = 1.0, requires = "replay")]
    pub speed: f64,
    /// The trace directory of the recording (default: `tracekit-top-DATE-TIME/kernel`).
    #[arg(short = 'o', long = "output", conflicts_with = "path")]
    pub output: Option<PathBuf>,
    /// Events to record (as `tracekit record --events`; default: sched, irq, syscalls,
    /// block, what the dashboard shows).
    #[arg(long, value_delimiter = ',', conflicts_with = "path")]
    pub events: Vec<String>,
    /// Per-CPU buffer size of the recording in KiB.
    #[arg(long, default_value_t = 8192, conflicts_with = "path")]
    pub buffer_size_kb: u64,
    /// Stop the recording after this many seconds (default: on `q`).
    #[arg(long, conflicts_with = "path")]
    pub duration: Option<f64>,
    /// Latency trackers shown (comma-separated; default: syscall, block, wakeup, irq).
    #[arg(long, value_enum, value_delimiter = ',')]
    pub tracker: Vec<TrackerArg>,
    /// Occurrences at least this long enter the list of the worst: `1ms` for every tracker,
    /// or `TRACKER=DURATION` for one (repeat; no unit: µs).
    #[arg(long, default_value = "1ms")]
    pub threshold: Vec<String>,
    /// Length of a window (the dashboard's update period, in trace time).
    #[arg(long, default_value = "1s")]
    pub interval: String,
    /// How many of the worst occurrences are kept.
    #[arg(long, default_value_t = 50)]
    pub worst: usize,
    /// No terminal: print each window's numbers as one JSON object per line.
    #[arg(long)]
    pub batch: bool,
}

pub fn run(a: &TopArgs) -> Result<ExitCode, Box<dyn std::error::Error>> {
    let req = TopRequest {
        interval: a.interval.clone(),
        worst: a.worst,
        trackers: a.tracker.iter().map(|t| (*t).into()).collect(),
        thresholds: a.threshold.clone(),
        batch: a.batch,
    };
    let config = req.config()?;
    match &a.path {
        Some(p) if live::Url::is_live(&p.to_string_lossy()) => {
            let urls = crate::live_cmd::urls(std::slice::from_ref(p))
                .expect("a live URL")
                .map_err(|e| format!("{}: {e}", p.display()))?;
            let source = crate::live_cmd::source(&urls, false)?;
            let quit = Arc::new(AtomicBool::new(false));
            let label = p.display().to_string();
            req.show(&config, source, label, "live".into(), quit, || {})?;
        }
        Some(_) if !a.replay => {
            return Err(
                "a trace directory is shown with --replay (at its recorded pace, \
                        --speed N times faster)"
                    .into(),
            )
        }
        Some(p) => req.replay(&config, p, a.speed)?,
        None => {
            let opts = record::RecordOptions {
                duration: record::cli::duration(a.duration)?,
                events: a.events.clone(),
                buffer_size_kb: a.buffer_size_kb,
                ..Default::default()
            };
            req.record(&config, a.output.clone(), opts)?;
        }
    }
    Ok(ExitCode::SUCCESS)
}
