//! Sources: what is read, and the loop that pushes it into a sink.

use std::path::Path;
use std::sync::Arc;

use ctf::merge::TimeMap;
use ctf::{Message, Trace};

use crate::diagnostic::Diagnostic;
use crate::progress::Progress;
use crate::range::{Next, RangeEvents};
use crate::sink::{Flow, Notice, NoticeKind, Sink};
use crate::Error;

/// What every consumer's read shares: the time range, the stream intersection, a clock
/// transform per trace and progress.
#[derive(Clone, Default)]
pub struct ReadOptions {
    /// Only events at or after this time (ns, on the read's time line).
    pub begin: Option<i64>,
    /// Only events at or before this time.
    pub end: Option<i64>,
    /// Do not restrict the read to the time range every stream covers.
    pub no_intersection: bool,
    /// Puts each trace's times on one time line (`--sync`).
    pub time_map: Option<Arc<dyn TimeMap>>,
    /// Told how far the read has gone.
    pub progress: Option<Arc<dyn Progress>>,
}

impl std::fmt::Debug for ReadOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReadOptions")
            .field("begin", &self.begin)
            .field("end", &self.end)
            .field("no_intersection", &self.no_intersection)
            .field("time_map", &self.time_map.is_some())
            .field("progress", &self.progress.is_some())
            .finish()
    }
}

/// What a read gave.
#[derive(Debug, Clone, Default)]
pub struct Summary {
    /// When classes were left out of the read ([`Sink::wanted`]): the time of the last event
    /// in the range a full read would have given, which may be one left out. (What a sink
    /// was given it knows itself: the read loop keeps nothing per event but the event.)
    pub last_in_range: Option<i64>,
    /// Events decoded, those left out of the range included.
    pub events_read: u64,
    /// The sink stopped the read.
    pub stopped: bool,
    /// A lossless read ([`FileSource::lossless`]) met a loss and ended there: nothing after
    /// it was given, and the read must be made again without leaving out what only a lossy
    /// trace needs.
    pub lost: bool,
    /// Problems met while opening and reading (each names its file and byte offset): the
    /// read covers every event that could be read.
    pub errors: Vec<Diagnostic>,
    /// The readers' warnings (timestamp regressions, indexes not used…).
    pub warnings: Vec<Diagnostic>,
}

impl Summary {
    /// Why a read gave no event: its errors if there were any.
    pub fn nothing_read(&self) -> Error {
        if self.errors.is_empty() {
            Error::NoEvents
        } else {
            Error::Unreadable(self.errors.clone())
        }
    }

    /// The read's errors as text, one per problem.
    pub fn error_strings(&self) -> Vec<String> {
        self.errors.iter().map(|d| d.to_string()).collect()
    }

    /// The read's warnings as text, one per warning.
    pub fn warning_strings(&self) -> Vec<String> {
        self.warnings.iter().map(|d| d.to_string()).collect()
    }
}

/// Something that pushes a time-ordered event stream into a sink: trace files
/// ([`FileSource`]) or, in the same place, a live connection.
pub trait Source {
    /// The traces read (their metadata, hosts and streams), by input index.
    fn traces(&self) -> &[Arc<Trace>];

    /// Reads everything in range into `sink`, then calls its [`Sink::diagnostic`] for each
    /// problem met and [`Sink::finish`].
    fn run<S: Sink + ?Sized>(&self, sink: &mut S) -> Summary;
}

/// A borrowed source reads as the source (a consumer may take its source by value).
impl<T: Source> Source for &T {
    fn traces(&self) -> &[Arc<Trace>] {
        (**self).traces()
    }

    fn run<S: Sink + ?Sized>(&self, sink: &mut S) -> Summary {
        (**self).run(sink)
    }
}

/// Trace files on disk: one trace, directories of traces, several hosts' traces.
#[derive(Clone, Debug)]
pub struct FileSource {
    traces: Vec<Arc<Trace>>,
    options: ReadOptions,
    lossless: bool,
}

impl FileSource {
    /// Opens every trace found at or under `paths` (a trace directory, or a directory tree
    /// of traces); the traces' indexes follow the order of `paths`.
    pub fn open<P: AsRef<Path>>(paths: &[P], options: ReadOptions) -> Result<Self, Error> {
        Ok(Self::new(ctf::open_all(paths)?, options))
    }

    /// A source over traces already open.
    pub fn new(traces: Vec<Arc<Trace>>, options: ReadOptions) -> Self {
        FileSource {
            traces,
            options,
            lossless: false,
        }
    }

    /// The read ends at the first discarded event or packet or unreadable data, before giving
    /// out anything after it ([`Summary::lost`]): for sinks whose [`Sink::wanted`] left out
    /// what only a lossy trace needs.
    pub fn lossless(mut self) -> Self {
        self.lossless = true;
        self
    }

    /// The options of the read.
    pub fn options(&self) -> &ReadOptions {
        &self.options
    }

    /// The options, to change.
    pub fn options_mut(&mut self) -> &mut ReadOptions {
        &mut self.options
    }

    /// The events in range, pulled one at a time, without the classes no sink of `wanted`
    /// needs: for a consumer that drives the read itself (tests, a viewer paging through).
    pub fn events(&self, wanted: Option<&crate::range::WantedOf<'_>>) -> RangeEvents {
        self.finish(match wanted {
            Some(w) => RangeEvents::with_wanted(&self.traces, &self.options, w),
            None => RangeEvents::new(&self.traces, &self.options),
        })
    }

    /// The reader for `sink`: without the classes it does not want, when it says for every
    /// trace (a time map reads every event). Kept out of the read loop's function.
    #[inline(never)]
    fn events_for<S: Sink + ?Sized>(&self, sink: &S) -> RangeEvents {
        let tables: Option<Vec<Vec<Vec<bool>>>> = match self.options.time_map {
            Some(_) => None,
            None => self.traces.iter().map(|t| sink.wanted(t)).collect(),
        };
        self.finish(match tables {
            Some(tables) => RangeEvents::with_tables(&self.traces, &self.options, tables),
            None => RangeEvents::new(&self.traces, &self.options),
        })
    }

    /// `events` made lossless if the source is.
    fn finish(&self, events: RangeEvents) -> RangeEvents {
        if self.lossless {
            events.lossless()
        } else {
            events
        }
    }
}

/// Per stream class position, per event class position of `trace`: whether `wanted` holds
/// for the class's name; the table of [`crate::Sink::wanted`].
pub fn classes_where(trace: &Trace, wanted: impl Fn(&str) -> bool) -> Vec<Vec<bool>> {
    let streams = &trace.layout.streams;
    (0..streams.len())
        .map(|sc| {
            let events = &streams.at(sc).events;
            (0..events.len())
                .map(|ev| wanted(&events.at(ev).name))
                .collect()
        })
        .collect()
}

impl Source for FileSource {
    fn traces(&self) -> &[Arc<Trace>] {
        &self.traces
    }

    fn run<S: Sink + ?Sized>(&self, sink: &mut S) -> Summary {
        let mut events = self.events_for(sink);
        let mut summary = Summary::default();
        if sink.wants_notices() {
            while let Some(next) = events.next_message() {
                let flow = match next {
                    Next::Event(ev, ts) => sink.event(&ev, ts),
                    Next::Notice(msg, ts, trace, stream) => match notice_of(msg, ts, trace, stream)
                    {
                        Some(n) => sink.notice(&n),
                        None => Flow::Continue,
                    },
                };
                if flow == Flow::Stop {
                    summary.stopped = true;
                    break;
                }
            }
        } else {
            while let Some((ev, ts)) = events.next() {
                if sink.event(&ev, ts) == Flow::Stop {
                    summary.stopped = true;
                    break;
                }
            }
        }
        summary.last_in_range = events.last_time();
        summary.events_read = events.events_read();
        summary.lost = events.lost();
        summary.errors = events.errors(&self.traces);
        summary.warnings = events.warnings();
        for d in summary.errors.iter().chain(&summary.warnings) {
            sink.diagnostic(d);
        }
        sink.finish(&summary);
        summary
    }
}

/// The notice of a loss message (None for an event).
fn notice_of(msg: &Message, ts: Option<i64>, trace: usize, stream: usize) -> Option<Notice> {
    let (kind, count) = match msg {
        Message::DiscardedEvents { count, .. } => (NoticeKind::DiscardedEvents, *count),
        Message::DiscardedPackets { count, .. } => (NoticeKind::DiscardedPackets, *count),
        Message::Event => return None,
    };
    Some(Notice {
        kind,
        count,
        ts,
        trace,
        stream,
    })
}
