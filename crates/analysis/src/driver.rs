//! The shared single pass: opens the traces, restricts them to the stream intersection and the
//! requested time range, feeds the kernel model and hands its notifications to every analysis.

use std::sync::Arc;

use ctf::merge::TimeMap;
use ctf::{Event, Trace};
use kernel::{Interest, Model, Notification, State, StateOptions};
use pipeline::{FileSource, Flow, ReadOptions, Sink, Source, Summary, Wanted};

use crate::lami::Table;
use crate::Error;

pub use pipeline::{intersection, Progress, ProgressPoint, RangeEvents};

/// Options shared by every analysis.
#[derive(Clone, Default)]
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
    pub time_map: Option<Arc<dyn TimeMap>>,
    /// Read every event, even those no analysis of the pass needs (which are otherwise left
    /// out of the read: see [`events_for_interest`]); the results are the same.
    pub read_every_event: bool,
    /// The process ends right after the run: the state model and the analyses are left to
    /// the operating system instead of being freed piece by piece (a thread, a name, a table
    /// row at a time: a measurable part of a run on a trace with thousands of threads).
    pub exit_after: bool,
    /// Told how far each read has gone (`--output-progress`).
    pub progress: Option<Arc<dyn Progress>>,
}

impl std::fmt::Debug for Common {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Common")
            .field("begin", &self.begin)
            .field("end", &self.end)
            .field("cpus", &self.cpus)
            .field("tids", &self.tids)
            .field("procnames", &self.procnames)
            .field("no_intersection", &self.no_intersection)
            .field("lttng_analyses_quirks", &self.lttng_analyses_quirks)
            .field("time_map", &self.time_map.is_some())
            .field("read_every_event", &self.read_every_event)
            .field("exit_after", &self.exit_after)
            .field("progress", &self.progress.is_some())
            .finish()
    }
}

impl Common {
    /// The options of a read over the analysed range.
    pub(crate) fn read_options(&self) -> ReadOptions {
        ReadOptions {
            begin: self.begin,
            end: self.end,
            no_intersection: self.no_intersection,
            time_map: self.time_map.clone(),
            progress: self.progress.clone(),
        }
    }

    /// Whether `cpu` passes `--cpu`.
    #[inline]
    pub(crate) fn cpu_ok(&self, cpu: u32) -> bool {
        self.cpus.as_ref().is_none_or(|c| c.contains(&cpu))
    }

    /// Whether thread `tid` passes `--tid` / `--procname`.
    #[inline]
    pub(crate) fn thread_ok(&self, state: &State, tid: i32) -> bool {
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
    /// A count this analysis hands on to the same analysis of the next refresh period
    /// ([`Analysis::inherit`]): lttng-analyses keeps some counts in its trace state rather
    /// than its period data (memtop's page balance, with `lttng_analyses_quirks`).
    fn carried(&self) -> u64 {
        0
    }
    /// Takes the [`Analysis::carried`] count of the same analysis in the previous refresh
    /// period, before [`Analysis::start`].
    fn inherit(&mut self, _carried: u64) {}
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

/// The event classes of `trace` a kernel model consumer with `interest` needs (None: every
/// one), without the system calls `interest` does not count when `lossless`
/// ([`kernel::needs::wanted_classes_lossless`]).
fn wanted_for(trace: &Trace, interest: Interest, lossless: bool) -> Wanted {
    if interest == Interest::ALL {
        return None;
    }
    Some(if lossless {
        kernel::needs::wanted_classes_lossless(trace, interest)
    } else {
        kernel::needs::wanted_classes(trace, interest)
    })
}

/// Whether a pass of `interest` can first be made without the system calls it does not count
/// ([`kernel::needs::wanted_classes_lossless`]), which is right while nothing is lost: not
/// where it would read what a full pass reads, nor where it cannot be sure to lose nothing:
/// with `--no-intersection` (a stream that starts late lost its start), with `--sync`, or
/// when a stream file could not be opened.
fn lossless_applies(traces: &[Arc<Trace>], common: &Common, interest: Interest) -> bool {
    kernel::needs::narrower_when_lossless(interest)
        && !common.no_intersection
        && common.time_map.is_none()
        && traces.iter().all(|t| t.errors.is_empty())
}

/// The events of `traces` in the analysed range, without those a kernel model consumer with
/// `interest` does not need (see [`kernel::needs`]): the events a pass of [`run_refresh`]
/// reads, pulled one at a time. The events given out, their order, the range's first event
/// and its last time are those a full read gives; every event is read with `--sync`'s time
/// map.
pub fn events_for_interest(
    traces: &[Arc<Trace>],
    common: &Common,
    interest: Interest,
) -> RangeEvents {
    let options = common.read_options();
    if interest == Interest::ALL {
        return RangeEvents::new(traces, &options);
    }
    RangeEvents::with_wanted(traces, &options, |t| {
        kernel::needs::wanted_classes(t, interest)
    })
}

/// As [`events_for_interest`], also without the system calls `interest` does not count: the
/// read ends at the first discarded event or packet (before giving out anything after it),
/// after which [`RangeEvents::lost`] says so, and the whole pass must be made again with
/// [`events_for_interest`]. None where it would read what [`events_for_interest`] reads, or
/// cannot be sure to lose nothing (see [`run_refresh`]).
pub fn events_for_interest_lossless(
    traces: &[Arc<Trace>],
    common: &Common,
    interest: Interest,
) -> Option<RangeEvents> {
    if !lossless_applies(traces, common, interest) {
        return None;
    }
    let events = RangeEvents::with_wanted(traces, &common.read_options(), |t| {
        kernel::needs::wanted_classes_lossless(t, interest)
    });
    Some(events.lossless())
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
) -> Result<Analysed, Error> {
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
    let source = FileSource::new(traces.to_vec(), common.read_options());
    if let Some(interest) = interest {
        // Fewer events where the trace lost none; where it did, nothing was reported yet and
        // the pass is made again, reading what a lossy trace needs.
        if lossless_applies(traces, common, interest) {
            let lossless = source.clone().lossless();
            let mut pass = Pass::new(common, None, make, report, upfront.take());
            pass.wanted = Some((interest, true));
            if let Some(done) = pass.run(&lossless)? {
                return Ok(done);
            }
            upfront = Some(make());
        }
    }
    let mut pass = Pass::new(common, refresh, make, report, upfront);
    pass.wanted = interest.map(|i| (i, false));
    let done = pass.run(&source)?;
    Ok(done.expect("only a lossless read stops at a loss"))
}

/// The pass of [`run_refresh`] as a sink, for any [`pipeline::Source`] (a trace followed as
/// it is written, a live connection, a paced replay): the kernel model and the analyses
/// `make` builds for each refresh period of `refresh` ns, `report` getting each period as
/// soon as it ends (the next period's first event ends it). Every event is wanted. After
/// the read, [`RefreshSink::end`] reports the last period.
pub struct RefreshSink<'a>(Pass<'a>);

impl<'a> RefreshSink<'a> {
    /// The pass of `common`'s analyses (its range and filters; the source applies the range).
    pub fn new(
        common: &'a Common,
        refresh: Option<i64>,
        make: &'a mut dyn FnMut() -> Vec<Box<dyn Analysis>>,
        report: &'a mut dyn FnMut(Range, Vec<Vec<Table>>),
    ) -> Self {
        RefreshSink(Pass::new(
            common,
            refresh.filter(|r| *r > 0),
            make,
            report,
            None,
        ))
    }

    /// The kernel model the analyses are fed by.
    pub fn model(&self) -> &Model {
        &self.0.model
    }

    /// After the read of `summary`: reports the last period and returns what was analysed.
    pub fn end(&mut self, summary: &Summary) -> Result<Analysed, Error> {
        Ok(self
            .0
            .end(summary)?
            .expect("a refresh sink's read is never lossless"))
    }
}

impl Sink for RefreshSink<'_> {
    #[inline(always)]
    fn event(&mut self, ev: &Event<'_>, ts: i64) -> Flow {
        self.0.event(ev, ts)
    }
}

/// [`run_refresh`] over any source, such as a live relay's sessions, through a
/// [`RefreshSink`]: every event is read (a live source cannot read again what a lossless
/// first pass would leave out), and with refresh periods each period's report comes as soon
/// as an event past its end is read.
pub fn run_refresh_on<S: Source>(
    source: &S,
    common: &Common,
    refresh: Option<i64>,
    make: &mut dyn FnMut() -> Vec<Box<dyn Analysis>>,
    report: &mut dyn FnMut(Range, Vec<Vec<Table>>),
) -> Result<Analysed, Error> {
    let mut sink = RefreshSink::new(common, refresh, make, report);
    let summary = source.run(&mut sink);
    let done = sink.end(&summary);
    if common.exit_after && done.is_ok() {
        std::mem::forget(sink);
    }
    done
}

/// One pass of [`run_refresh`]: the kernel model and the analyses of each refresh period,
/// fed by a source.
struct Pass<'a> {
    common: &'a Common,
    refresh: Option<i64>,
    make: &'a mut dyn FnMut() -> Vec<Box<dyn Analysis>>,
    report: &'a mut dyn FnMut(Range, Vec<Vec<Table>>),
    /// The analyses of the first period when they are built already.
    upfront: Option<Vec<Box<dyn Analysis>>>,
    /// What the analyses need, and whether the read is lossless (the system calls they do
    /// not count left out); None: every event.
    wanted: Option<(Interest, bool)>,
    model: Model,
    analyses: Vec<Box<dyn Analysis>>,
    interests: Vec<Interest>,
    notes: Vec<Notification>,
    first: Option<i64>,
    period_begin: i64,
    last: i64,
    /// The time at which the current period ends: one comparison per event. The first event
    /// starts the first period.
    cut: i64,
}

impl<'a> Pass<'a> {
    fn new(
        common: &'a Common,
        refresh: Option<i64>,
        make: &'a mut dyn FnMut() -> Vec<Box<dyn Analysis>>,
        report: &'a mut dyn FnMut(Range, Vec<Vec<Table>>),
        upfront: Option<Vec<Box<dyn Analysis>>>,
    ) -> Self {
        Pass {
            common,
            refresh,
            make,
            report,
            upfront,
            wanted: None,
            model: Model::new(StateOptions {
                lttng_analyses_quirks: common.lttng_analyses_quirks,
            }),
            analyses: Vec::new(),
            interests: Vec::new(),
            notes: Vec::with_capacity(8),
            first: None,
            period_begin: 0,
            last: 0,
            cut: i64::MIN,
        }
    }

    /// Reads `source` into the pass. None when it is a lossless read that met a loss: nothing
    /// was reported then.
    fn run<S: Source>(mut self, source: &S) -> Result<Option<Analysed>, Error> {
        let summary = source.run(&mut self);
        let done = self.end(&summary);
        if self.common.exit_after && matches!(done, Ok(Some(_))) {
            std::mem::forget(self);
        }
        done
    }

    /// Starts a period at `ts` with new analyses (those built already for the first).
    #[cold]
    #[inline(never)]
    fn start_period(&mut self, ts: i64) {
        if self.first.is_none() {
            self.first = Some(ts);
        } else {
            self.finish_period(ts);
        }
        self.period_begin = ts;
        self.cut = self.refresh.map_or(i64::MAX, |r| ts.saturating_add(r));
        let carried: Vec<u64> = self.analyses.iter().map(|a| a.carried()).collect();
        self.analyses = self.upfront.take().unwrap_or_else(&mut *self.make);
        for (a, c) in self.analyses.iter_mut().zip(carried) {
            a.inherit(c);
        }
        self.interests = self.analyses.iter().map(|a| a.interest()).collect();
        self.model.state.set_interest(
            self.interests
                .iter()
                .fold(Interest::NONE, |all, i| all.union(*i)),
        );
        for a in self.analyses.iter_mut() {
            a.start(ts);
        }
    }

    /// Ends the current period at `end`: `report` gets its range and each analysis' tables.
    fn finish_period(&mut self, end: i64) {
        let range = Range {
            begin: self.period_begin,
            end,
        };
        let model = &self.model;
        (self.report)(
            range,
            self.analyses
                .iter_mut()
                .map(|a| a.finish(model, range))
                .collect(),
        );
    }

    /// After the read: the last period's report and what the pass read.
    fn end(&mut self, summary: &Summary) -> Result<Option<Analysed>, Error> {
        if summary.lost {
            return Ok(None);
        }
        let Some(first) = self.first else {
            return Err(summary.nothing_read().into());
        };
        let errors = summary.error_strings();
        let mut warnings = summary.warning_strings();
        let interleaved_syscalls = self.model.state.interleaved_syscalls;
        // Only a read of every system call counts them all (others see the first event of
        // each class, whatever they leave out).
        let every_call = self.common.read_every_event
            || self
                .interests
                .iter()
                .any(|i| i.has(kernel::NoteKind::SyscallDone));
        if interleaved_syscalls > 0 && every_call {
            warnings.push(format!(
                "{interleaved_syscalls} system call events did not pair on their thread (an \
                 entry while the thread was in another call, or the exit of another call): \
                 events were lost, counted as discarded or not, or the trace is damaged; the \
                 durations of the calls around them are not reliable"
            ));
        }
        let last = summary.last_in_range.unwrap_or(self.last);
        self.finish_period(last);
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
}

impl Sink for Pass<'_> {
    fn wanted(&self, trace: &Trace) -> Wanted {
        let (interest, lossless) = self.wanted?;
        wanted_for(trace, interest, lossless)
    }

    #[inline(always)]
    fn event(&mut self, ev: &Event<'_>, ts: i64) -> Flow {
        // (Times clamped to the largest i64 reach `cut` without refresh periods, or with a
        // saturated one: a new period begins only after a first one, and later in time.)
        if ts >= self.cut
            && (self.first.is_none() || self.refresh.is_some() && ts > self.period_begin)
        {
            self.start_period(ts);
        }
        // The fields the per-event work uses, borrowed apart once.
        let Pass {
            model,
            analyses,
            interests,
            notes,
            last,
            ..
        } = self;
        model.process(ev, ts, notes);
        *last = ts;
        // Most events notify nothing; the others are handed over in place, not moved out.
        if !notes.is_empty() {
            if let [a] = &mut analyses[..] {
                // The state made only what this one wants.
                for n in notes.iter() {
                    a.notify(&model.state, n);
                }
            } else {
                for n in notes.iter() {
                    for (a, i) in analyses.iter_mut().zip(interests.iter()) {
                        if i.takes(n) {
                            a.notify(&model.state, n);
                        }
                    }
                }
            }
            notes.clear();
        }
        Flow::Continue
    }
}
