//! `tracekit latency`'s runs, from the parsed command line to its output: the trackers and
//! limits its options give, each occurrence as text or a JSON line (with the stacks
//! `record --stacks` took for it), the summary, or the occurrences' stacks folded for flame
//! graphs.

use std::io::{self, Write};
use std::sync::Arc;

use ctf::merge::TimeMap;
use ctf::Trace;
use pipeline::time::{parse_threshold, TimeError};
use pipeline::Source;

use crate::report::{report_text, summary_json, summary_text};
use crate::stacks::StackIndex;
use crate::{Config, LatencySink, Report, Summary, Tracker};

/// Errors of a `latency` run.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// `--threshold` or `--timeout` does not parse.
    #[error(transparent)]
    Time(#[from] TimeError),
    /// The stacks of the traces could not be read.
    #[error(transparent)]
    Stacks(#[from] ctf::Error),
    /// Writing the output failed.
    #[error(transparent)]
    Io(#[from] io::Error),
}

/// What `tracekit latency` was asked (its options, parsed; see its `--help`).
#[derive(Debug, Clone, Default)]
pub struct LatencyRequest {
    /// `--tracker` (empty: all).
    pub trackers: Vec<Tracker>,
    /// `--threshold` as given.
    pub threshold: String,
    /// `--timeout` as given (`none` or `0`: never).
    pub timeout: String,
    /// `--max-pending`.
    pub max_pending: usize,
    /// `--json`: JSON lines.
    pub json: bool,
    /// `--summary-only`.
    pub summary_only: bool,
    /// `--folded`: the occurrences' stacks, folded.
    pub folded: bool,
}

/// A request's trackers (sorted, each once) and limits.
#[derive(Debug, Clone)]
pub struct Plan {
    /// The trackers to run.
    pub trackers: Vec<Tracker>,
    /// Their limits.
    pub config: Config,
}

impl LatencyRequest {
    /// The trackers and limits the options give.
    pub fn plan(&self) -> Result<Plan, Error> {
        let threshold = parse_threshold(&self.threshold)?;
        let timeout = match self.timeout.trim() {
            "none" | "0" => None,
            t => Some(parse_threshold(t)?),
        };
        let trackers = if self.trackers.is_empty() {
            Tracker::ALL.to_vec()
        } else {
            let mut v = self.trackers.clone();
            v.sort();
            v.dedup();
            v
        };
        Ok(Plan {
            trackers,
            config: Config {
                threshold,
                timeout,
                max_pending: self.max_pending,
            },
        })
    }

    /// Tracks latencies over `traces` (on `time_map`'s time line if given), writing to `out`.
    pub fn run_files(
        &self,
        plan: &Plan,
        traces: &[Arc<Trace>],
        time_map: Option<Arc<dyn TimeMap>>,
        out: &mut dyn Write,
    ) -> Result<(), Error> {
        // The stacks of `record --stacks`, shown with the occurrences they were taken for (on
        // the traces' own clocks: not with --sync).
        let stacks = if time_map.is_some() {
            StackIndex::default()
        } else {
            StackIndex::new(kernel::stacks::read_stacks(traces)?)
        };
        let mut folded: Vec<kernel::stacks::StackSample> = Vec::new();
        let res = crate::run_traces_mapped(
            traces,
            time_map,
            &plan.trackers,
            plan.config,
            |r: Report| -> io::Result<()> {
                if self.summary_only {
                    return Ok(());
                }
                let st = stacks.for_report(&r);
                if self.folded {
                    folded.extend(st.into_iter().cloned());
                    return Ok(());
                }
                if self.json {
                    let mut j = r.to_json();
                    if !st.is_empty() {
                        j["stacks"] = stacks.json(&st);
                    }
                    serde_json::to_writer(&mut *out, &j)?;
                    out.write_all(b"\n")
                } else {
                    out.write_all(report_text(&r).as_bytes())?;
                    out.write_all(stacks.text(&st).as_bytes())
                }
            },
        );
        self.finish(res, out, &stacks, &folded)
    }

    /// Tracks latencies over `source` (a live session), each occurrence written (and
    /// flushed) as soon as its events show it; the summary at the end of the read.
    pub fn run_source<S: Source>(
        &self,
        plan: &Plan,
        source: &S,
        out: &mut dyn Write,
    ) -> Result<(), Error> {
        let mut sink =
            LatencySink::new(&plan.trackers, plan.config, |r: Report| -> io::Result<()> {
                if self.summary_only {
                    return Ok(());
                }
                if self.json {
                    serde_json::to_writer(&mut *out, &r.to_json())?;
                    out.write_all(b"\n")?;
                } else {
                    out.write_all(report_text(&r).as_bytes())?;
                }
                out.flush()
            });
        source.run(&mut sink);
        let res = sink.summary();
        // (A live session's stacks are not read: `--folded` says there are none.)
        self.finish(res, out, &StackIndex::default(), &[])
    }

    /// Writes the summary after the reports (with `--folded`, the stacks `folded` of the
    /// occurrences, symbolized by `stacks`); a closed output is no error.
    fn finish(
        &self,
        res: io::Result<Summary>,
        out: &mut dyn Write,
        stacks: &StackIndex,
        folded: &[kernel::stacks::StackSample],
    ) -> Result<(), Error> {
        let r = res.and_then(|s| {
            if self.folded {
                if stacks.is_empty() {
                    eprintln!(
                        "tracekit: no stacks in these traces (record them with `tracekit \
                         record --stacks RULE`)"
                    );
                }
                let lines =
                    kernel::stacks::folded(folded, stacks.symbols(), |s| (s.delay / 1000).max(1));
                for l in lines {
                    writeln!(out, "{l}")?;
                }
                Ok(())
            } else if self.json {
                serde_json::to_writer(&mut *out, &summary_json(&s))?;
                out.write_all(b"\n")
            } else {
                out.write_all(summary_text(&s).as_bytes())
            }
        });
        match r.and_then(|_| out.flush()) {
            Err(e) if e.kind() != io::ErrorKind::BrokenPipe => Err(e.into()),
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plan_of_the_options() {
        let req = LatencyRequest {
            trackers: vec![Tracker::Irq, Tracker::Wakeup, Tracker::Irq],
            threshold: "500us".into(),
            timeout: "none".into(),
            max_pending: 9,
            ..Default::default()
        };
        let p = req.plan().unwrap();
        assert_eq!(p.trackers, [Tracker::Wakeup, Tracker::Irq]);
        assert_eq!(
            (p.config.threshold, p.config.timeout, p.config.max_pending),
            (500_000, None, 9)
        );
        let all = LatencyRequest {
            trackers: Vec::new(),
            timeout: "2s".into(),
            ..req.clone()
        }
        .plan()
        .unwrap();
        assert_eq!(all.trackers, Tracker::ALL);
        assert_eq!(all.config.timeout, Some(2_000_000_000));
        let bad = LatencyRequest {
            threshold: "fast".into(),
            ..req
        };
        assert!(bad.plan().is_err());
    }
}
