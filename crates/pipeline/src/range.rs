//! The merged events of some traces within a time range: the read loop every source drives.

use std::sync::Arc;

use ctf::{Merger, Message, SkipRule, Trace};

use crate::bounds::{read_range, ReadRange};
use crate::diagnostic::Diagnostic;
use crate::progress::ProgressPoint;
use crate::source::{classes_where, ReadOptions};

/// Per stream class position, per event class position of a trace: whether a consumer
/// needs the class's events.
pub type WantedOf<'a> = dyn Fn(&Trace) -> Vec<Vec<bool>> + 'a;

/// The merged events of some traces within the read range (`begin`/`end` and, unless
/// `no_intersection`, the range every readable stream covers), on the time line of the time
/// map when there is one.
pub struct RangeEvents {
    merger: Merger,
    lo: i64,
    hi: i64,
    done: bool,
    /// The readers leave out the events the consumer does not need.
    skipping: bool,
    /// When skipping: the last event given out in the range, its place in the merge order
    /// ([`Merger::current_order`]) and its time.
    last: Option<((i64, usize, u64), i64)>,
    /// The read ends at the first loss ([`Self::lossless`]).
    lossless: bool,
    /// A lossless read met a loss (and ended there).
    lost: bool,
    /// Where progress is reported, if anywhere.
    progress: Option<Arc<dyn crate::Progress>>,
    /// The smaller of `hi` and the time after which the next progress report comes: one
    /// comparison per event for both.
    watch: i64,
    /// The range reported ([`ProgressPoint`]), set at the first report, and its hundredth.
    progress_range: Option<(i64, i64, i64)>,
    /// Where progress reports put the end: `hi` or the streams' last time if before.
    streams_end: i64,
    /// A message that is not an event, kept for [`Self::next_message`].
    notice: Option<Message>,
}

/// What [`RangeEvents::next_message`] found.
pub enum Next<'a> {
    /// An event in the range and its time (ns).
    Event(ctf::Event<'a>, i64),
    /// Discarded events or packets, with the time of their range's start on the read's time
    /// line when known, the trace's index and the stream's index in it.
    Notice(&'a Message, Option<i64>, usize, usize),
}

impl RangeEvents {
    /// Every event of `traces` in the range `options` gives.
    pub fn new(traces: &[Arc<Trace>], options: &ReadOptions) -> Self {
        Self::build(traces, options, None)
    }

    /// As [`Self::new`], without the events of the classes `wanted` says (per stream class
    /// position, per event class position of a trace) no consumer needs: the events given
    /// out, their order, the range's first event and its last time ([`Self::last_time`]) are
    /// those a full read gives. Reads every event with a time map.
    pub fn with_wanted(
        traces: &[Arc<Trace>],
        options: &ReadOptions,
        wanted: impl Fn(&Trace) -> Vec<Vec<bool>>,
    ) -> Self {
        // A time map reads every event: no table is made for it.
        let tables = options
            .time_map
            .is_none()
            .then(|| traces.iter().map(|t| wanted(t)).collect());
        Self::build(traces, options, tables)
    }

    /// [`Self::with_wanted`] with the table of each of `traces` made already (`tables[i]` for
    /// `traces[i]`).
    pub fn with_tables(
        traces: &[Arc<Trace>],
        options: &ReadOptions,
        tables: Vec<Vec<Vec<bool>>>,
    ) -> Self {
        Self::build(traces, options, Some(tables))
    }

    /// Makes the read end at the first discarded event or packet (before giving out anything
    /// after it), after which [`Self::lost`] says so: for a consumer that left out what only
    /// a lossy trace needs, and reads again when the trace lost something.
    pub fn lossless(mut self) -> Self {
        self.lossless = true;
        self
    }

    /// Whether a [`Self::lossless`] read met a loss: a discarded event or packet, or data it
    /// could not read.
    pub fn lost(&self) -> bool {
        self.lost || self.lossless && !self.merger.errors.is_empty()
    }

    fn build(
        traces: &[Arc<Trace>],
        options: &ReadOptions,
        tables: Option<Vec<Vec<Vec<bool>>>>,
    ) -> Self {
        let ReadRange {
            lo,
            hi,
            streams_end,
        } = read_range(traces, options);
        let mut merger = Merger::new(traces);
        // Packets that end before the range are not read at all where indexes say so.
        if options.time_map.is_none() && lo > i64::MIN {
            merger.seek_ns(lo);
        }
        let mut skipping = false;
        if let Some(m) = &options.time_map {
            merger = merger.with_time_map(m.clone());
        } else if let Some(tables) = tables {
            // One table per trace, shared by its streams' readers.
            let tables: Vec<_> = tables.into_iter().map(Arc::new).collect();
            merger = merger.with_skip(|t| SkipRule {
                // (Every reader's trace is one of `traces`; another would be read whole.)
                wanted: traces
                    .iter()
                    .position(|x| std::ptr::eq(&**x, t))
                    .and_then(|i| tables.get(i).cloned())
                    .unwrap_or_else(|| Arc::new(classes_where(t, |_| true))),
                lo,
                hi,
            });
            skipping = true;
        }
        RangeEvents {
            merger,
            lo,
            hi,
            done: false,
            skipping,
            last: None,
            lossless: false,
            lost: false,
            watch: if options.progress.is_some() {
                i64::MIN
            } else {
                hi
            },
            progress: options.progress.clone(),
            progress_range: None,
            streams_end,
            notice: None,
        }
    }

    /// The range read: (begin, end) in ns, after the intersection.
    pub fn range(&self) -> (i64, i64) {
        (self.lo, self.hi)
    }

    /// Reports the read at `ts` and sets the next report a hundredth of the range later.
    #[cold]
    #[inline(never)]
    fn report_progress(&mut self, ts: i64) {
        let Some(sink) = &self.progress else {
            self.watch = self.hi;
            return;
        };
        let (begin, end, step) = *self.progress_range.get_or_insert_with(|| {
            // From the first event: a trace's packets can begin well before it.
            let begin = ts;
            let end = self.streams_end.max(begin);
            let step = ((end as i128 - begin as i128) / 100).clamp(1, i64::MAX as i128) as i64;
            (begin, end, step)
        });
        let events = self.events_read();
        sink.at(ProgressPoint {
            ts,
            begin,
            end,
            events,
        });
        self.watch = self.hi.min(ts.saturating_add(step - 1));
    }

    /// Events decoded so far, those left out of the range included.
    pub fn events_read(&self) -> u64 {
        self.merger.readers().iter().map(|r| r.events_read).sum()
    }

    /// Tells the progress sink the read is over.
    #[cold]
    fn end_progress(&mut self) {
        if let Some(sink) = &self.progress {
            sink.done(self.events_read());
        }
    }

    /// The time of the last event in the range a full read would have given out (so far),
    /// whether or not it was left out; None when nothing is left out.
    pub fn last_time(&self) -> Option<i64> {
        if !self.skipping {
            return None;
        }
        [self.last, self.merger.last_left_out()]
            .into_iter()
            .flatten()
            .max_by_key(|(order, _)| *order)
            .map(|(_, t)| t)
    }

    /// The next event in the range and its time (ns); None past the range or at the end.
    /// Notices of discarded events and packets are passed over.
    // Inlined: the per-event loop of every pass.
    #[allow(clippy::should_implement_trait)]
    #[inline(always)]
    pub fn next(&mut self) -> Option<(ctf::Event<'_>, i64)> {
        // Without notices, every step that does not end the read is an event.
        let ts = self.step::<false>()?.unwrap_or(i64::MIN);
        self.event_at(ts)
    }

    /// The next event in the range, or notice of discarded events or packets before the
    /// range's end; None past the range or at the end.
    #[inline(always)]
    pub fn next_message(&mut self) -> Option<Next<'_>> {
        match self.step::<true>()? {
            Some(ts) => self.event_at(ts).map(|(e, t)| Next::Event(e, t)),
            None => {
                let msg = self.notice.as_ref()?;
                let ts = self.merger.current_time();
                let r = self.merger.current_reader()?;
                Some(Next::Notice(msg, ts, r.trace().index, r.stream_index()))
            }
        }
    }

    /// The current event, at `ts` in the range.
    #[inline(always)]
    fn event_at(&mut self, ts: i64) -> Option<(ctf::Event<'_>, i64)> {
        if self.skipping {
            self.last = self.merger.current_order().map(|o| (o, ts));
        }
        self.merger.event().map(|ev| (ev, ts))
    }

    /// Moves to the next event in the range (Some(Some(its time))) or, with `NOTICES`, notice
    /// before the range's end (Some(None)); None at the end.
    #[inline(always)]
    fn step<const NOTICES: bool>(&mut self) -> Option<Option<i64>> {
        if self.done {
            return None;
        }
        loop {
            match self.merger.next() {
                None => {
                    self.done = true;
                    self.end_progress();
                    return None;
                }
                Some(Message::Event) => {}
                // Every other message reports a loss.
                Some(_) if self.lossless => {
                    self.lost = true;
                    self.done = true;
                    return None;
                }
                Some(m) if NOTICES => {
                    let m = m.clone();
                    if self.merger.current_time().is_some_and(|t| t > self.hi) {
                        continue;
                    }
                    self.notice = Some(m);
                    return Some(None);
                }
                Some(_) => continue,
            }
            let Some(ts) = self.merger.current_time() else {
                continue;
            };
            if ts < self.lo {
                continue;
            }
            if ts > self.watch {
                if ts > self.hi {
                    self.done = true;
                    self.end_progress();
                    return None;
                }
                self.report_progress(ts);
            }
            return Some(Some(ts));
        }
    }

    /// The readers' warnings so far (each names its file).
    pub fn warnings(&self) -> Vec<Diagnostic> {
        self.merger
            .readers()
            .iter()
            .flat_map(|r| r.warnings.iter().map(|w| Diagnostic::warning(w.clone())))
            .collect()
    }

    /// Problems met while opening `traces` and reading them (each names its file and offset).
    pub fn errors(&self, traces: &[Arc<Trace>]) -> Vec<Diagnostic> {
        let mut errors: Vec<Diagnostic> = traces
            .iter()
            .flat_map(|t| t.errors.iter().map(|e| Diagnostic::open_error(e.clone())))
            .collect();
        errors.extend(self.merger.errors.iter().map(Diagnostic::from_ctf));
        errors
    }

    /// Why a read gave no event: the read errors if there were any.
    pub fn nothing_read(&self, traces: &[Arc<Trace>]) -> crate::Error {
        let errors = self.errors(traces);
        if errors.is_empty() {
            crate::Error::NoEvents
        } else {
            crate::Error::Unreadable(errors)
        }
    }
}
