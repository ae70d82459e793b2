//! `tracekit top`'s runs, from the parsed command line: the configuration its options give,
//! the dashboard (or `--batch`'s JSON lines) over a replayed trace, a live session or a
//! recording made for it.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use latency::Tracker;
use pipeline::time::{parse_duration, parse_threshold};
use pipeline::{FileSource, Flow, ReadOptions, Source};

use crate::render::View;
use crate::Config;

/// Errors of a `top` run.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// An option's value is wrong (the message names the option).
    #[error("{0}")]
    Option(String),
    /// The dashboard failed.
    #[error(transparent)]
    Top(#[from] crate::Error),
    /// The recording failed.
    #[error(transparent)]
    Record(#[from] crate::local::StartError),
    /// The replayed trace could not be opened.
    #[error(transparent)]
    Open(#[from] pipeline::Error),
    /// `--batch`'s output could not be written.
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

/// What `tracekit top` was asked (its options, parsed; see its `--help`).
#[derive(Debug, Clone, Default)]
pub struct TopRequest {
    /// `--interval` as given.
    pub interval: String,
    /// `--worst`.
    pub worst: usize,
    /// `--tracker` (empty: the default ones).
    pub trackers: Vec<Tracker>,
    /// `--threshold`s as given: `DURATION` or `TRACKER=DURATION`.
    pub thresholds: Vec<String>,
    /// `--batch`: JSON lines instead of the terminal.
    pub batch: bool,
}

impl TopRequest {
    /// The dashboard's configuration.
    pub fn config(&self) -> Result<Config, Error> {
        let mut c = Config {
            interval: parse_duration(&self.interval, None)
                .map_err(|e| Error::Option(format!("--interval: {e}")))?,
            worst: self.worst,
            ..Default::default()
        };
        if !self.trackers.is_empty() {
            c.trackers.clear();
            for t in &self.trackers {
                if !c.trackers.contains(t) {
                    c.trackers.push(*t);
                }
            }
        }
        for t in &self.thresholds {
            let bad = |e: &dyn std::fmt::Display| Error::Option(format!("--threshold {t}: {e}"));
            match t.split_once('=') {
                Some((name, d)) => {
                    let tracker = Tracker::ALL
                        .into_iter()
                        .find(|k| k.name() == name.trim())
                        .ok_or_else(|| {
                            bad(&format!(
                                "unknown tracker `{name}` (wakeup, offcpu, syscall, block, irq)"
                            ))
                        })?;
                    c.thresholds
                        .insert(tracker, parse_threshold(d).map_err(|e| bad(&e))?);
                }
                None => c.threshold = parse_threshold(t).map_err(|e| bad(&e))?,
            }
        }
        Ok(c)
    }

    /// The dashboard (or, with `--batch`, its JSON lines on standard output) over `source`,
    /// titled `label`, its status line `status`; on quit, `quit` is set and `on_quit` called.
    pub fn show<S: Source + Send>(
        &self,
        config: &Config,
        source: S,
        label: String,
        status: String,
        quit: Arc<AtomicBool>,
        on_quit: impl FnOnce(),
    ) -> Result<(), Error> {
        if self.batch {
            let mut out = std::io::stdout();
            let mut failed = None;
            let r = crate::run(&source, config, |s| {
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
        crate::dash::run(
            view,
            quit,
            move |emit| crate::run(&source, config, emit),
            on_quit,
        )?;
        Ok(())
    }

    /// Replays the trace at `path` at its recorded pace, `speed` times faster (0: as fast as
    /// it reads).
    pub fn replay(&self, config: &Config, path: &Path, speed: f64) -> Result<(), Error> {
        let quit = Arc::new(AtomicBool::new(false));
        let source = crate::replay::Replay::new(
            FileSource::open(std::slice::from_ref(&path), ReadOptions::default())?,
            speed,
            quit.clone(),
        );
        let status = if speed > 0.0 {
            format!("replay ×{speed}")
        } else {
            "replay".into()
        };
        let label = path.display().to_string();
        self.show(config, source, label, status, quit, || {})
    }

    /// Records a kernel trace with `opts` (its events by default those the dashboard shows)
    /// to `output` (by default [`default_output`]) and shows it as it is written; the trace
    /// is kept.
    pub fn record(
        &self,
        config: &Config,
        output: Option<PathBuf>,
        mut opts: record::RecordOptions,
    ) -> Result<(), Error> {
        if opts.events.is_empty() {
            opts.events = vec!["sched,irq,syscalls,block".to_string()];
        }
        let output = output.unwrap_or_else(default_output);
        opts.output = output.clone();
        let rec = crate::local::Recording::start(opts)?;
        let label = format!("recording to {}", output.display());
        let quit = Arc::new(AtomicBool::new(false));
        let shown = self.show(config, &rec.source, label, "live".into(), quit, || {
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
        shown
    }
}

/// The recording's default directory: `tracekit-top-YYYYMMDD-HHMMSS/kernel` (UTC).
pub fn default_output() -> PathBuf {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as i64);
    output_at(now)
}

/// [`default_output`] at `ns` since the epoch.
fn output_at(ns: i64) -> PathBuf {
    let t = pipeline::time::format_utc(ns);
    // `YYYY-MM-DD HH:MM:SS…` → `YYYYMMDD-HHMMSS`
    let stamp: String = t[..19]
        .chars()
        .filter(|c| c.is_ascii_digit() || *c == ' ')
        .map(|c| if c == ' ' { '-' } else { c })
        .collect();
    PathBuf::from(format!("tracekit-top-{stamp}")).join("kernel")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_named_by_the_time() {
        assert_eq!(
            output_at(1_700_000_000_123_456_789),
            PathBuf::from("tracekit-top-20231114-221320/kernel")
        );
    }

    #[test]
    fn config_of_the_options() {
        let req = TopRequest {
            interval: "500ms".into(),
            worst: 7,
            trackers: vec![Tracker::Irq, Tracker::Block, Tracker::Irq],
            thresholds: vec!["2ms".into(), "irq=50".into()],
            batch: true,
        };
        let c = req.config().unwrap();
        assert_eq!((c.interval, c.worst), (500_000_000, 7));
        assert_eq!(c.trackers, [Tracker::Irq, Tracker::Block]);
        assert_eq!(c.threshold, 2_000_000);
        assert_eq!(c.threshold_of(Tracker::Irq), 50_000);
        let bad = |t: &str| {
            TopRequest {
                thresholds: vec![t.into()],
                ..req.clone()
            }
            .config()
            .unwrap_err()
            .to_string()
        };
        assert!(bad("disk=1ms").contains("unknown tracker `disk`"));
        assert!(bad("soon").starts_with("--threshold soon: "));
        let e = TopRequest {
            interval: "x".into(),
            ..req.clone()
        };
        assert!(e
            .config()
            .unwrap_err()
            .to_string()
            .starts_with("--interval: "));
    }
}
