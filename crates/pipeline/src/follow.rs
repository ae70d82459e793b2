//! A trace followed while it is written: [`FollowSource`] reads the packets as a writer
//! completes them.
//!
//! The writer says how far its files are complete ([`Written`]): every event up to that time
//! is in packets written out (and listed in the stream indexes). Each time that bound moves,
//! the source opens the trace again (a fresh map of each stream file, which grew) and reads
//! the events after the previous bound up to the new one, seeking by the indexes; the sink
//! sees one time-ordered stream, as from a [`FileSource`] over the finished trace. Events
//! past the bound are never given out, so a packet still being written is never read as
//! truncated data. When the writer is done, the rest is read from the finished trace and the
//! sink gets the last read's diagnostics and its end.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use ctf::{Event, Trace};

use crate::diagnostic::Diagnostic;
use crate::sink::{Flow, Notice, Sink, Wanted};
use crate::source::{FileSource, ReadOptions, Source, Summary};
use crate::Error;

/// How far the trace being followed is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Written {
    /// Every event at or before this time (ns, the trace's time line) is in the files.
    Until(i64),
    /// The writer is done (the trace is complete, or its writer failed): read to the end.
    Done,
}

/// Says how far the trace is written; asked about every poll interval.
pub type WrittenFn = Arc<dyn Fn() -> Written + Send + Sync>;

/// A trace directory read while a writer writes it (see the [module](self)).
pub struct FollowSource {
    dir: PathBuf,
    written: WrittenFn,
    options: ReadOptions,
    poll: Duration,
    traces: Vec<Arc<Trace>>,
}

impl std::fmt::Debug for FollowSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FollowSource")
            .field("dir", &self.dir)
            .field("options", &self.options)
            .field("poll", &self.poll)
            .finish()
    }
}

/// The directory holding trace `dir` now: `dir` once it is complete, its writer's
/// `.NAME.partial` ([`ctf::writer::partial_dir`]) while it is written.
pub fn current_dir(dir: &Path) -> PathBuf {
    let partial = ctf::writer::partial_dir(dir);
    if !dir.exists() && partial.exists() {
        partial
    } else {
        dir.to_path_buf()
    }
}

impl FollowSource {
    /// Follows the trace at `dir` (its final name: the writer's partial directory is read
    /// while it exists), as far as `written` says, polling every `poll`. The trace must be
    /// openable now (its metadata written): a writer creates it before its first event.
    /// `options`' range applies (the stream intersection is not: streams of a trace being
    /// written end at different times; progress is not reported).
    pub fn open(
        dir: &Path,
        written: WrittenFn,
        options: ReadOptions,
        poll: Duration,
    ) -> Result<Self, Error> {
        let traces = ctf::open_all(&[current_dir(dir)])?;
        Ok(FollowSource {
            dir: dir.to_path_buf(),
            written,
            options,
            poll,
            traces,
        })
    }

    /// The options of one read from just after `after` to `until` (None: to the end).
    fn read_options(&self, after: Option<i64>, until: Option<i64>) -> ReadOptions {
        let begin = match (after, self.options.begin) {
            (Some(a), Some(b)) => Some(b.max(a.saturating_add(1))),
            (Some(a), None) => Some(a.saturating_add(1)),
            (None, b) => b,
        };
        let end = match (until, self.options.end) {
            (Some(u), Some(e)) => Some(u.min(e)),
            (u, e) => u.or(e),
        };
        ReadOptions {
            begin,
            end,
            no_intersection: true,
            time_map: self.options.time_map.clone(),
            progress: None,
        }
    }
}

/// The sink of one read: events and notices go through, the end of the read does not (the
/// follow goes on).
struct Leg<'s, S: ?Sized> {
    sink: &'s mut S,
}

impl<S: Sink + ?Sized> Sink for Leg<'_, S> {
    fn wanted(&self, trace: &Trace) -> Wanted {
        self.sink.wanted(trace)
    }
    fn wants_notices(&self) -> bool {
        self.sink.wants_notices()
    }
    #[inline(always)]
    fn event(&mut self, ev: &Event<'_>, ts: i64) -> Flow {
        self.sink.event(ev, ts)
    }
    fn notice(&mut self, notice: &Notice) -> Flow {
        self.sink.notice(notice)
    }
}

impl Source for FollowSource {
    fn traces(&self) -> &[Arc<Trace>] {
        &self.traces
    }

    fn run<S: Sink + ?Sized>(&self, sink: &mut S) -> Summary {
        let mut total = Summary::default();
        // The bound of the reads made so far: every event at or before it was given.
        let mut after: Option<i64> = None;
        let past_end = |t: i64| self.options.end.is_some_and(|e| t >= e);
        loop {
            let written = (self.written)();
            let until = match written {
                Written::Until(t) if after.is_some_and(|a| t <= a) => {
                    std::thread::sleep(self.poll);
                    continue;
                }
                Written::Until(t) => Some(t),
                Written::Done => None,
            };
            // The writer renames the directory when it is done: between the bound and the
            // open, it may have done so.
            let traces = match ctf::open_all(&[current_dir(&self.dir)]) {
                Ok(t) => t,
                Err(_) if until.is_some() => {
                    std::thread::sleep(self.poll);
                    continue;
                }
                Err(e) => {
                    total.errors.push(Diagnostic::from_ctf(&e));
                    break;
                }
            };
            let source = FileSource::new(traces, self.read_options(after, until));
            let summary = source.run(&mut Leg { sink: &mut *sink });
            total.events_read += summary.events_read;
            if summary.last_in_range.is_some() {
                total.last_in_range = summary.last_in_range;
            }
            if summary.stopped {
                total.stopped = true;
            }
            // A partial read's errors and warnings concern packets past the bound, still
            // being written; the last read's are those of the finished trace.
            if summary.stopped || until.is_none() {
                total.errors = summary.errors;
                total.warnings = summary.warnings;
                break;
            }
            after = until;
            if until.is_some_and(past_end) {
                break;
            }
        }
        for d in total.errors.iter().chain(&total.warnings) {
            sink.diagnostic(d);
        }
        sink.finish(&total);
        total
    }
}
