//! The shared single pass: opens the traces, restricts them to the stream intersection and the
//! requested time range, feeds the kernel model and hands its notifications to every analysis.

use std::sync::Arc;

use ctf::merge::TimeMap;
use ctf::{Merger, Message, SkipRule, Trace};
use kernel::{Interest, Model, Notification, State, StateOptions};

use crate::lami::Table;

/// Options shared by every analysis.
#[derive(Debug, Clone, Default)]
pub struct Common {
    /// Only events at or after this time (ns since the epoch).
    pub begin: Option<i64>,
    /// Only events at or before this time.
    pub end: Option<i64>,
    /// Only these CPUs.
    pub cpus: Option<Vec<u32>>,
    /// Only these threads.
    pub tids: Option<Vec<i32>>,
    /// Only threads with these command names.
    pub procnames: Option<Vec<String>>,
    /// Do not restrict the analysis to the time range every stream covers.
    pub no_intersection: bool,
    /// Reproduce lttng-analyses 0.6.1's event handling defects (see
    /// [`kernel::StateOptions::lttng_analyses_quirks`]); off by default.
    pub lttng_analyses_quirks: bool,
    /// Clock transformations putting every trace on one time line (`--sync`).
    pub time_map: Option<SharedTimeMap>,
    /// Read every event, even those no analysis of the pass needs (which are otherwise left
    /// out of the read: see [`RangeEvents::for_interest`]); the results are the same.
    pub read_every_event: bool,
    /// The process ends right after the run: the state model and the analyses are left to
    /// the operating system instead of being freed piece by piece (a thread, a name, a table
    /// row at a time: ~3 % of a run on a trace with thousands of threads).
    pub exit_after: bool,
    /// Told how far each read has gone (`--output-progress`).
    pub progress: Option<SharedProgress>,
}

/// Where a read stands, for a progress display.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ProgressPoint {
    /// The time reached (ns, on the analysis' time line).
    pub ts: i64,
    /// The range the read covers: from its first event to its end or, if before, the
    /// streams' last time.
    pub begin: i64,
    pub end: i64,
    /// Events read so far, those no analysis needed included.
    pub events: u64,
}

impl ProgressPoint {
    /// The part of the range read, in `[0, 1]`.
    pub fn fraction(&self) -> f64 {
        if self.end <= self.begin {
            return 1.0;
        }
        let done = (self.ts as i128 - self.begin as i128) as f64;
        (done / (self.end as i128 - self.begin as i128) as f64).clamp(0.0, 1.0)
    }
}

/// Reads report to it about every hundredth of their range ([`RangeEvents`]).
pub trait ProgressSink: Send + Sync {
    /// The read reached `point`.
    fn at(&self, point: ProgressPoint);
    /// The read ended, `events` events read (a read that met a loss in a lossless pass does
    /// not end: the pass is made again).
    fn done(&self, events: u64);
}

/// A [`ProgressSink`] shared by the options of an analysis.
#[derive(Clone)]
pub struct SharedProgress(pub Arc<dyn ProgressSink>);

impl std::fmt::Debug for SharedProgress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SharedProgress")
    }
}

/// A [`TimeMap`] shared by the options of an analysis.
#[derive(Clone)]
pub struct SharedTimeMap(pub Arc<dyn TimeMap>);

impl std::fmt::Debug for SharedTimeMap {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SharedTimeMap")
    }
}

impl Common {
    #[inline]
    pub fn cpu_ok(&self, cpu: u32) -> bool {
        self.cpus.as_ref().is_none_or(|c| c.contains(&cpu))
    }

    /// Whether thread `tid` passes `--tid` / `--procname`.
    #[inline]
    pub fn thread_ok(&self, state: &State, tid: i32) -> bool {
        if self.tids.is_none() && self.procnames.is_none() {
            return true;
        }
        self.thread_filtered(state, tid)
    }

    fn thread_filtered(&self, state: &State, tid: i32) -> bool {
        if let Some(t) = &self.tids {
            if !t.contains(&tid) {
                return false;
            }
        }
        if let Some(p) = &self.procnames {
            let comm = state.thread(tid).map(|t| t.comm.as_str()).unwrap_or("");
            if !p.iter().any(|n| n == comm) {
                return false;
            }
        }
        true
    }
}

/// The time range actually analysed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Range {
    /// Time of the first analysed event.
    pub begin: i64,
    /// Time of the last analysed event.
    pub end: i64,
}

/// An analysis fed by the kernel model.
pub trait Analysis {
    /// The notifications [`Analysis::notify`] uses: the others are not made for it.
    fn interest(&self) -> Interest {
        Interest::ALL
    }
    /// Called once with the time of the first analysed event (the period start).
    fn start(&mut self, _ts: i64) {}
    /// Called for every notification, after the state applied the event.
    fn notify(&mut self, state: &State, n: &Notification);
    /// Called once at the end; returns the result tables.
    fn finish(&mut self, model: &Model, range: Range) -> Vec<Table>;
}

/// Errors of a run.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error(transparent)]
    Ctf(#[from] ctf::Error),
    #[error("no events in the analysed time range")]
    NoEvents,
    /// No event could be read at all, because of these errors.
    #[error("no readable events: {}", .0.join("; "))]
    Unreadable(Vec<String>),
}

/// What a run read.
#[derive(Debug, Clone)]
pub struct Analysed {
    /// The time range of the analysed events.
    pub range: Range,
    /// Errors met while reading (each names its file and byte offset): the analysis covers
    /// every event that could be read.
    pub errors: Vec<String>,
    /// The readers' warnings (timestamp regressions, indexes not used…).
    pub warnings: Vec<String>,
    /// System call events that did not pair on their thread ([`kernel::State`]'s
    /// `interleaved_syscalls`), among the events read: the whole trace's count when every
    /// system call is read (an analysis counts them, or [`Common::read_every_event`]), when
    /// it is also a warning. A read that leaves out a thread's birth can find a call of the
    /// thread that had its id before still pending.
    pub interleaved_syscalls: u64,
}

/// Time (ns) bounds of every stream, from the packet contexts: (first packet's
/// `timestamp_begin`, last packet's `timestamp_end`); None when the stream has no clock.
fn stream_bounds(trace: &Arc<Trace>) -> Vec<Option<(i64, i64)>> {
    let mut out = Vec::new();
    for (si, mut r) in trace.readers().into_iter().enumerate() {
        if !ctf::StreamReader::new(trace.clone(), si).first_packet_opens() {
            // A stream the metadata does not describe (a file from another trace…) has no
            // events: its index or garbage timestamps must not narrow the intersection.
            out.push(None);
            continue;
        }
        let clock = trace.stream_clock(trace.stream_class_id(trace.streams[si].stream_class_id));
        if let (Some(c), Some((b, e))) = (clock, index_bounds(&trace.streams[si])) {
            out.push(Some((c.cycles_to_ns(b) as i64, c.cycles_to_ns(e) as i64)));
            continue;
        }
        // Without an index, the packet contexts alone give the range: no event is decoded.
        if let Some(range) = ctf::StreamReader::new(trace.clone(), si).packet_time_bounds() {
            out.push(Some(range));
            continue;
        }
        let mut first: Option<i64> = None;
        let mut last: Option<i64> = None;
        let mut key = u64::MAX;
        while let Some(m) = r.next() {
            let Ok(Message::Event) = m else { continue };
            let ev = r.event();
            if ev.packet_key() == key {
                continue;
            }
            key = ev.packet_key();
            let pc = ev.packet_context();
            let get = |n: &str| -> Option<i64> {
                let c = pc?.field(n)?.as_u64()?;
                Some(clock.as_ref()?.cycles_to_ns(c) as i64)
            };
            let b = get("timestamp_begin").or(ev.time_ns());
            let e = get("timestamp_end").or(ev.time_ns());
            if first.is_none() {
                first = b;
            }
            if e.is_some() {
                last = e;
            }
        }
        out.push(first.zip(last));
    }
    out
}

/// (first `timestamp_begin`, last `timestamp_end`) in cycles from the LTTng packet index files
/// (`index/NAME.idx`) of a stream's files, which also list the empty packets the reader skips.
fn index_bounds(stream: &ctf::trace::StreamFiles) -> Option<(u64, u64)> {
    let first = stream.index(0)?.first()?;
    let last = stream.index(stream.files.len().checked_sub(1)?)?.last()?;
    Some((first.ts_begin, last.ts_end))
}

/// The time range of every readable stream of every trace, on the time line of `time_map`
/// (each trace's clock otherwise).
fn mapped_stream_bounds(
    traces: &[Arc<Trace>],
    time_map: Option<&SharedTimeMap>,
) -> Vec<(i64, i64)> {
    let mut out = Vec::new();
    for t in traces {
        let map = |ns: i64| time_map.map_or(ns, |m| m.0.map(t.index, ns));
        out.extend(
            stream_bounds(t)
                .into_iter()
                .flatten()
                .map(|(b, e)| (map(b), map(e))),
        );
    }
    out
}

/// The range every one of `bounds` covers (None for no bounds).
fn common_range(bounds: &[(i64, i64)]) -> Option<(i64, i64)> {
    (!bounds.is_empty()).then(|| {
        bounds
            .iter()
            .fold((i64::MIN, i64::MAX), |(b, e), &(sb, se)| {
                (b.max(sb), e.min(se))
            })
    })
}

/// The time range every stream of every trace covers.
pub fn intersection(traces: &[Arc<Trace>]) -> Option<(i64, i64)> {
    intersection_on(traces, None)
}

/// [`intersection`] on the time line of `time_map` (each trace's clock otherwise).
pub fn intersection_on(
    traces: &[Arc<Trace>],
    time_map: Option<&SharedTimeMap>,
) -> Option<(i64, i64)> {
    common_range(&mapped_stream_bounds(traces, time_map))
}

/// Per stream class position, per event class position of a trace: whether a consumer
/// needs the class's events.
type WantedClasses<'a> = dyn Fn(&Trace) -> Vec<Vec<bool>> + 'a;

/// The merged events of some traces within the analysed range (`--begin`/`--end` and, unless
/// `--no-intersection`, the range every readable stream covers), on the time line of
/// `--sync`'s time map when there is one: the read loop every analysis pass shares.
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
    /// The read leaves out what only a lossy trace needs ([`Self::for_interest_lossless`]):
    /// it ends at the first loss.
    lossless: bool,
    /// A lossless read met a loss (and ended there).
    lost: bool,
    /// Where progress is reported, if anywhere.
    progress: Option<SharedProgress>,
    /// The smaller of `hi` and the time after which the next progress report comes: one
    /// comparison per event for both.
    watch: i64,
    /// The range reported ([`ProgressPoint`]), set at the first report, and its hundredth.
    progress_range: Option<(i64, i64, i64)>,
    /// Where progress reports put the end: `hi` or the streams' last time if before.
    streams_end: i64,
}

impl RangeEvents {
    pub fn new(traces: &[Arc<Trace>], common: &Common) -> Self {
        Self::build(traces, common, None)
    }

    /// As [`Self::new`], without the events a kernel model consumer with `interest` does not
    /// need (see [`kernel::needs`]): the events given out, their order, the range's first
    /// event and its last time ([`Self::last_time`]) are those a full read gives. Reads every
    /// event with `--sync`'s time map.
    pub fn for_interest(traces: &[Arc<Trace>], common: &Common, interest: Interest) -> Self {
        if interest == Interest::ALL {
            return Self::new(traces, common);
        }
        Self::with_wanted(traces, common, |t| {
            kernel::needs::wanted_classes(t, interest)
        })
    }

    /// As [`Self::for_interest`], also without the system calls `interest` does not count
    /// ([`kernel::needs::wanted_classes_lossless`]), which is right while nothing is lost: the
    /// read ends at the first discarded event or packet (before giving out anything after
    /// it), after which [`Self::lost`] says so, and the whole pass must be made again with
    /// [`Self::for_interest`]. None where it would read what [`Self::for_interest`] reads, or
    /// cannot be sure to lose nothing: with `--no-intersection` (a stream that starts late
    /// lost its start), with `--sync`, or when a stream file could not be opened.
    pub fn for_interest_lossless(
        traces: &[Arc<Trace>],
        common: &Common,
        interest: Interest,
    ) -> Option<Self> {
        if !kernel::needs::narrower_when_lossless(interest)
            || common.no_intersection
            || common.time_map.is_some()
            || traces.iter().any(|t| !t.errors.is_empty())
        {
            return None;
        }
        let mut events = Self::with_wanted(traces, common, |t| {
            kernel::needs::wanted_classes_lossless(t, interest)
        });
        events.lossless = true;
        Some(events)
    }

    /// Whether a read made by [`Self::for_interest_lossless`] met a loss: a discarded event
    /// or packet, or data it could not read.
    pub fn lost(&self) -> bool {
        self.lost || self.lossless && !self.merger.errors.is_empty()
    }

    /// As [`Self::new`], without the events of the classes `wanted` says (per stream class
    /// position, per event class position of a trace) no consumer needs; see
    /// [`Self::for_interest`].
    pub fn with_wanted(
        traces: &[Arc<Trace>],
        common: &Common,
        wanted: impl Fn(&Trace) -> Vec<Vec<bool>>,
    ) -> Self {
        Self::build(traces, common, Some(&wanted))
    }

    fn build(traces: &[Arc<Trace>], common: &Common, wanted: Option<&WantedClasses<'_>>) -> Self {
        let (mut lo, mut hi) = (
            common.begin.unwrap_or(i64::MIN),
            common.end.unwrap_or(i64::MAX),
        );
        // The streams' bounds (read from indexes or packet contexts: read once) for the
        // intersection and the end of progress reports.
        let bounds = if !common.no_intersection || common.progress.is_some() {
            mapped_stream_bounds(traces, common.time_map.as_ref())
        } else {
            Vec::new()
        };
        if !common.no_intersection {
            if let Some((b, e)) = common_range(&bounds) {
                lo = lo.max(b);
                hi = hi.min(e);
            }
        }
        let mut merger = Merger::new(traces);
        // Packets that end before the range are not read at all where indexes say so.
        if common.time_map.is_none() && lo > i64::MIN {
            merger.seek_ns(lo);
        }
        let mut skipping = false;
        if let Some(m) = &common.time_map {
            merger = merger.with_time_map(m.0.clone());
        } else if let Some(wanted_of) = wanted {
            // One table per trace, shared by its streams' readers.
            let tables: Vec<_> = traces.iter().map(|t| Arc::new(wanted_of(t))).collect();
            merger = merger.with_skip(|t| SkipRule {
                wanted: traces
                    .iter()
                    .position(|x| std::ptr::eq(&**x, t))
                    .map(|i| tables[i].clone())
                    .unwrap_or_else(|| Arc::new(wanted_of(t))),
                lo,
                hi,
            });
            skipping = true;
        }
        // Progress reports end where the streams do, if before the range's end.
        let streams_end = bounds
            .iter()
            .map(|&(_, e)| e)
            .max()
            .map_or(hi, |e| e.min(hi));
        RangeEvents {
            merger,
            lo,
            hi,
            done: false,
            skipping,
            last: None,
            lossless: false,
            lost: false,
            watch: if common.progress.is_some() {
                i64::MIN
            } else {
                hi
            },
            progress: common.progress.clone(),
            progress_range: None,
            streams_end,
        }
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
        let events = self.merger.readers().iter().map(|r| r.events_read).sum();
        sink.0.at(ProgressPoint {
            ts,
            begin,
            end,
            events,
        });
        self.watch = self.hi.min(ts.saturating_add(step - 1));
    }

    /// Tells the progress sink the read is over.
    #[cold]
    fn end_progress(&mut self) {
        if let Some(sink) = &self.progress {
            let events = self.merger.readers().iter().map(|r| r.events_read).sum();
            sink.0.done(events);
        }
    }

    /// The time of the last event in the range a full read would have given out (so far),
    /// whether or not it was left out.
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
    // Inlined: the per-event loop of every pass (a call per event is ~2 % of an analysis).
    #[allow(clippy::should_implement_trait)]
    #[inline(always)]
    pub fn next(&mut self) -> Option<(ctf::Event<'_>, i64)> {
        if self.done {
            return None;
        }
        let ts = loop {
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
            break ts;
        };
        if self.skipping {
            self.last = self.merger.current_order().map(|o| (o, ts));
        }
        self.merger.event().map(|ev| (ev, ts))
    }

    /// Why a pass analysed no event: the read errors if there were any.
    pub fn nothing_read(&self, traces: &[Arc<Trace>]) -> RunError {
        let errors = self.errors(traces);
        if errors.is_empty() {
            RunError::NoEvents
        } else {
            RunError::Unreadable(errors)
        }
    }

    /// The readers' warnings so far (each names its file).
    pub fn warnings(&self) -> Vec<String> {
        self.merger
            .readers()
            .iter()
            .flat_map(|r| r.warnings.iter().cloned())
            .collect()
    }

    /// Problems met while opening `traces` and reading them (each names its file and offset).
    pub fn errors(&self, traces: &[Arc<Trace>]) -> Vec<String> {
        let mut errors: Vec<String> = traces.iter().flat_map(|t| t.errors.clone()).collect();
        errors.extend(self.merger.errors.iter().map(|e| e.to_string()));
        errors
    }
}

/// Ends a refresh period: `report` gets its range and each analysis' tables.
fn finish_period(
    analyses: &mut [Box<dyn Analysis>],
    model: &Model,
    begin: i64,
    end: i64,
    report: &mut dyn FnMut(Range, Vec<Vec<Table>>),
) {
    let range = Range { begin, end };
    report(
        range,
        analyses
            .iter_mut()
            .map(|a| a.finish(model, range))
            .collect(),
    );
}

/// Runs analyses over `traces` in one pass, cut into refresh periods of `refresh` ns
/// (lttng-analyses's `--refresh`; None: one period). As in lttng-analyses, a period ends at
/// the first event at or after its begin + `refresh`, and that event begins the next period
/// (and is analysed in it); the kernel model goes on across periods, the analyses start
/// afresh: `make` builds them for each period, `report` gets each period's range and the
/// tables of each analysis (in `make`'s order) as soon as the period ends. Returns the whole
/// analysed range.
pub fn run_refresh(
    traces: &[Arc<Trace>],
    common: &Common,
    refresh: Option<i64>,
    make: &mut dyn FnMut() -> Vec<Box<dyn Analysis>>,
    report: &mut dyn FnMut(Range, Vec<Vec<Table>>),
) -> Result<Analysed, RunError> {
    let refresh = refresh.filter(|r| *r > 0);
    // Without refresh periods the analyses are known before the read, and so are the events
    // they need; a refresh period ends at any event, so all are read then.
    let mut upfront = refresh.is_none().then(&mut *make);
    let interest = match &upfront {
        Some(analyses) if !common.read_every_event => Some(
            analyses
                .iter()
                .fold(Interest::NONE, |all, a| all.union(a.interest())),
        ),
        _ => None,
    };
    if let Some(interest) = interest {
        // Fewer events where the trace lost none; where it did, nothing was reported yet and
        // the pass is made again, reading what a lossy trace needs.
        if let Some(events) = RangeEvents::for_interest_lossless(traces, common, interest) {
            if let Some(done) = pass(traces, common, None, make, report, upfront.take(), events)? {
                return Ok(done);
            }
            upfront = Some(make());
        }
    }
    let events = match interest {
        Some(interest) => RangeEvents::for_interest(traces, common, interest),
        None => RangeEvents::new(traces, common),
    };
    let done = pass(traces, common, refresh, make, report, upfront, events)?;
    Ok(done.expect("only a lossless read stops at a loss"))
}

/// One pass of [`run_refresh`] over `events`, with the analyses `upfront` for the first
/// period when they are built already. None when `events` is a lossless read that met a loss
/// (see [`RangeEvents::for_interest_lossless`]): nothing was reported then.
fn pass(
    traces: &[Arc<Trace>],
    common: &Common,
    refresh: Option<i64>,
    make: &mut dyn FnMut() -> Vec<Box<dyn Analysis>>,
    report: &mut dyn FnMut(Range, Vec<Vec<Table>>),
    mut upfront: Option<Vec<Box<dyn Analysis>>>,
    mut events: RangeEvents,
) -> Result<Option<Analysed>, RunError> {
    let mut model = Model::new(StateOptions {
        lttng_analyses_quirks: common.lttng_analyses_quirks,
    });
    let mut analyses: Vec<Box<dyn Analysis>> = Vec::new();
    let mut interests: Vec<Interest> = Vec::new();
    let mut notes = Vec::with_capacity(8);
    let mut first: Option<i64> = None;
    let mut period_begin = 0i64;
    let mut last = 0i64;
    // The time at which the current period ends: one comparison per event. The first event
    // starts the first period.
    let mut cut = i64::MIN;
    while let Some((ev, ts)) = events.next() {
        // (Times clamped to the largest i64 reach `cut` without refresh periods, or with a
        // saturated one: a new period begins only after a first one, and later in time.)
        if ts >= cut && (first.is_none() || refresh.is_some() && ts > period_begin) {
            if first.is_none() {
                first = Some(ts);
            } else {
                finish_period(&mut analyses, &model, period_begin, ts, report);
            }
            period_begin = ts;
            cut = refresh.map_or(i64::MAX, |r| ts.saturating_add(r));
            analyses = upfront.take().unwrap_or_else(&mut *make);
            interests = analyses.iter().map(|a| a.interest()).collect();
            model.state.set_interest(
                interests
                    .iter()
                    .fold(Interest::NONE, |all, i| all.union(*i)),
            );
            for a in analyses.iter_mut() {
                a.start(ts);
            }
        }
        model.process(&ev, ts, &mut notes);
        last = ts;
        // Most events notify nothing; the others are handed over in place, not moved out.
        if !notes.is_empty() {
            if let [a] = &mut analyses[..] {
                // The state made only what this one wants.
                for n in &notes {
                    a.notify(&model.state, n);
                }
            } else {
                for n in &notes {
                    for (a, i) in analyses.iter_mut().zip(&interests) {
                        if i.takes(n) {
                            a.notify(&model.state, n);
                        }
                    }
                }
            }
            notes.clear();
        }
    }
    if events.lost() {
        return Ok(None);
    }
    let Some(first) = first else {
        return Err(events.nothing_read(traces));
    };
    let errors = events.errors(traces);
    let mut warnings = events.warnings();
    let interleaved_syscalls = model.state.interleaved_syscalls;
    // Only a read of every system call counts them all (others see the first event of each
    // class, whatever they leave out).
    let every_call = common.read_every_event
        || interests
            .iter()
            .any(|i| i.has(kernel::NoteKind::SyscallDone));
    if interleaved_syscalls > 0 && every_call {
        warnings.push(format!(
            "{interleaved_syscalls} system call events did not pair on their thread (an entry \
             while the thread was in another call, or the exit of another call): events were \
             lost, counted as discarded or not, or the trace is damaged; the durations of the \
             calls around them are not reliable"
        ));
    }
    let last = events.last_time().unwrap_or(last);
    finish_period(&mut analyses, &model, period_begin, last, report);
    if common.exit_after {
        std::mem::forget(model);
        std::mem::forget(analyses);
    }
    Ok(Some(Analysed {
        range: Range {
            begin: first,
            end: last,
        },
        errors,
        warnings,
        interleaved_syscalls,
    }))
}
