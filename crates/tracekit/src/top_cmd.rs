//! `tracekit top`: the live dashboard (crates/top) over a local recording, a replayed trace
//! or (with the live source) a relay session.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

use clap::Args;
use latency::Tracker;
use pipeline::time::parse_threshold;
use pipeline::{FileSource, Flow, ReadOptions};
use top::render::View;

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

fn tracker_of(t: TrackerArg) -> Tracker {
    match t {
        TrackerArg::Wakeup => Tracker::Wakeup,
        TrackerArg::Offcpu => Tracker::Offcpu,
        TrackerArg::Syscall => Tracker::Syscall,
        TrackerArg::Block => Tracker::Block,
        TrackerArg::Irq => Tracker::Irq,
        TrackerArg::Function => Tracker::Function,
    }
}

fn config(a: &TopArgs) -> Result<top::Config, Box<dyn std::error::Error>> {
    let mut c = top::Config {
        interval: pipeline::time::parse_duration(&a.interval, None)
            .map_err(|e| format!("--interval: {e}"))?,
        worst: a.worst,
        ..Default::default()
    };
    if !a.tracker.is_empty() {
        c.trackers.clear();
        for t in a.tracker.iter().map(|t| tracker_of(*t)) {
            if !c.trackers.contains(&t) {
                c.trackers.push(t);
            }
        }
    }
    for t in &a.threshold {
        match t.split_once('=') {
            Some((name, d)) => {
                let tracker = Tracker::ALL
                    .into_iter()
                    .find(|k| k.name() == name.trim())
                    .ok_or_else(|| {
                        format!(
                            "--threshold {t}: unknown tracker `{name}` (wakeup, offcpu, \
                             syscall, block, irq)"
                        )
                    })?;
                let ns = parse_threshold(d).map_err(|e| format!("--threshold {t}: {e}"))?;
                c.thresholds.insert(tracker, ns);
            }
            None => {
                c.threshold = parse_threshold(t).map_err(|e| format!("--threshold {t}: {e}"))?
            }
        }
    }
    Ok(c)
}

/// The recording's default directory.
fn default_output() -> PathBuf {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as i64);
    let t = pipeline::time::format_utc(now);
    // `YYYY-MM-DD HH:MM:SS…` → `YYYYMMDD-HHMMSS`
    let stamp: String = t[..19]
        .chars()
        .filter(|c| c.is_ascii_digit() || *c == ' ')
        .map(|c| if c == ' ' { '-' } else { c })
        .collect();
    PathBuf::from(format!("tracekit-top-{stamp}")).join("kernel")
}

pub fn run(a: &TopArgs) -> Result<ExitCode, Box<dyn std::error::Error>> {
    let config = config(a)?;
    let quit = Arc::new(AtomicBool::new(false));
    match &a.path {
        Some(p) if live::Url::is_live(&p.to_string_lossy()) => {
            let urls = crate::live_cmd::urls(std::slice::from_ref(p))
                .expect("a live URL")
                .map_err(|e| format!("{}: {e}", p.display()))?;
            let source = crate::live_cmd::source(&urls, false)?;
            show(
                a,
                &config,
                source,
                p.display().to_string(),
                "live".into(),
                quit,
                || {},
            )?;
            Ok(ExitCode::SUCCESS)
        }
        Some(p) => {
            if !a.replay {
                return Err(
                    "a trace directory is shown with --replay (at its recorded pace, \
                            --speed N times faster)"
                        .into(),
                );
            }
            let source = top::replay::Replay::new(
                FileSource::open(std::slice::from_ref(p), ReadOptions::default())?,
                a.speed,
                quit.clone(),
            );
            let label = p.display().to_string();
            let status = if a.speed > 0.0 {
                format!("replay ×{}", a.speed)
            } else {
                "replay".into()
            };
            show(a, &config, source, label, status, quit, || {})?;
            Ok(ExitCode::SUCCESS)
        }
        None => {
            let output = a.output.clone().unwrap_or_else(default_output);
            let duration = match a.duration {
                Some(d) if !(d.is_finite() && d > 0.0) => {
                    return Err(
                        format!("--duration must be a positive number of seconds, got {d}").into(),
                    )
                }
                d => d.map(Duration::from_secs_f64),
            };
            let events = if a.events.is_empty() {
                vec!["sched,irq,syscalls,block".to_string()]
            } else {
                a.events.clone()
            };
            let opts = record::RecordOptions {
                output: output.clone(),
                duration,
                events,
                buffer_size_kb: a.buffer_size_kb,
                ..Default::default()
            };
            let rec = top::local::Recording::start(opts)?;
            let label = format!("recording to {}", output.display());
            let shown = show(a, &config, &rec.source, label, "live".into(), quit, || {
                rec.stop()
            });
            let summary = rec.finish();
            // The trace is kept whatever the dashboard did.
            println!("trace: {}", output.display());
            let s = summary?;
            eprintln!(
                "tracekit: {} events over {:.1} s, {} lost in the kernel buffers",
                s.events,
                s.elapsed.as_secs_f64(),
                s.discarded
            );
            shown?;
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// The dashboard (or, with --batch, its JSON lines) over `source`.
fn show<S: pipeline::Source + Send>(
    a: &TopArgs,
    config: &top::Config,
    source: S,
    label: String,
    status: String,
    quit: Arc<AtomicBool>,
    on_quit: impl FnOnce(),
) -> Result<(), Box<dyn std::error::Error>> {
    if a.batch {
        let mut out = crate::output::stdout();
        let mut failed = None;
        let r = top::run(&source, config, |s| {
            let line = serde_json::to_string(&s.to_json()).expect("JSON of a snapshot");
            match writeln!(out, "{line}").and_then(|_| out.flush()) {
                Ok(()) => Flow::Continue,
                Err(e) => {
                    failed = Some(e);
                    Flow::Stop
                }
            }
        });
        if let Some(e) = failed.filter(|e| e.kind() != std::io::ErrorKind::BrokenPipe) {
            return Err(e.into());
        }
        r?;
        return Ok(());
    }
    let mut view = View::new(label, config);
    view.status = status;
    top::dash::run(
        view,
        quit,
        move |emit| top::run(&source, config, emit),
        on_quit,
    )?;
    Ok(())
}
