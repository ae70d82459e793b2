//! `tracekit top`: a live dashboard of per-thread CPU usage, per-CPU load, latency
//! distributions and the worst latencies, from any [`pipeline::Source`] (a recording followed
//! as it is written, a replayed trace, a live relay connection).
//!
//! The numbers come from the machinery the batch commands use, fed by one read: the
//! analyses' refresh pass ([`analysis::RefreshSink`]) runs `cputop` in windows of
//! [`Config::interval`] (the periods of `tracekit analyze cputop --refresh`), and the latency
//! trackers ([`latency::LatencySink`], as `tracekit latency`) run over the whole read. At the
//! end of each window, [`run`] hands a [`Snapshot`] to its caller; [`render`] draws a
//! snapshot with ratatui (any backend), [`dash`] runs the terminal, [`replay`] paces a trace
//! read at its recorded speed, [`local`] follows a kernel recording as it is written.

#![deny(missing_docs)]

pub mod cli;
pub mod dash;
pub mod local;
pub mod render;
pub mod replay;

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;

use analysis::lami::{Cell, Table};
use analysis::{Analysis, Common, Range, RefreshSink};
use ctf::{Event, Trace};
use latency::{Config as LatencyConfig, LatencySink, Report, Tracker, TrackerSummary};
use pipeline::{Diagnostic, Flow, Sink, Source, Summary, Wanted};

/// Errors of the dashboard.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The source gave no event, or the analyses failed.
    #[error(transparent)]
    Analysis(#[from] analysis::Error),
    /// The terminal could not be set up or drawn on.
    #[error("terminal: {0}")]
    Terminal(#[from] std::io::Error),
    /// The thread reading the source panicked.
    #[error("the reading thread failed: {0}")]
    Reader(String),
}

/// What the dashboard measures.
#[derive(Debug, Clone)]
pub struct Config {
    /// Length of a window (ns): a snapshot is made at the first event at or after a window's
    /// begin plus this, as `analyze --refresh` ends its periods.
    pub interval: i64,
    /// The latency trackers shown, in this order.
    pub trackers: Vec<Tracker>,
    /// The threshold over which an occurrence enters the list of the worst (ns), per
    /// tracker; [`Config::threshold`] for the others.
    pub thresholds: BTreeMap<Tracker, i64>,
    /// The threshold of the trackers without one of their own (ns).
    pub threshold: i64,
    /// How many of the worst occurrences are kept.
    pub worst: usize,
    /// At most this many measurements in flight per tracker.
    pub max_pending: usize,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            interval: 1_000_000_000,
            trackers: vec![
                Tracker::Syscall,
                Tracker::Block,
                Tracker::Wakeup,
                Tracker::Irq,
            ],
            thresholds: BTreeMap::new(),
            threshold: 1_000_000,
            worst: 50,
            max_pending: 65_536,
        }
    }
}

impl Config {
    /// The threshold of `tracker` (ns).
    pub fn threshold_of(&self, tracker: Tracker) -> i64 {
        self.thresholds
            .get(&tracker)
            .copied()
            .unwrap_or(self.threshold)
    }

    /// The latency trackers' limits: the smallest threshold (the list keeps each tracker's
    /// own), and no timeout (a dashboard shows completed measurements).
    pub fn latency_config(&self) -> LatencyConfig {
        let threshold = self
            .trackers
            .iter()
            .map(|t| self.threshold_of(*t))
            .min()
            .unwrap_or(self.threshold);
        LatencyConfig {
            threshold,
            timeout: None,
            max_pending: self.max_pending,
        }
    }
}

/// A thread's CPU usage in a window.
#[derive(Debug, Clone, PartialEq)]
pub struct ThreadUsage {
    /// Thread id.
    pub tid: i32,
    /// Command name.
    pub comm: String,
    /// Share of one CPU's time in the window (1.0: one whole CPU).
    pub usage: f64,
}

/// One tracker's latencies.
#[derive(Debug, Clone, PartialEq)]
pub struct LatencyView {
    /// Everything it measured since the start of the read (as `tracekit latency`'s summary
    /// over the same events).
    pub total: TrackerSummary,
    /// Measurements completed in the window.
    pub window_matched: u64,
    /// The log2 histogram of the window's measurements: (lower bound ns, count), non-empty
    /// buckets.
    pub window_hist: Vec<(i64, u64)>,
}

/// The dashboard's numbers at the end of a window.
#[derive(Debug, Clone, PartialEq)]
pub struct Snapshot {
    /// The window: the time of its first event and that of the first event after it (ns,
    /// the trace's time line), the range of the matching `analyze cputop --refresh` period.
    pub range: Range,
    /// The time of the first event read.
    pub first: i64,
    /// The read ended with this window.
    pub last: bool,
    /// Per thread, most used first (`cputop`'s per-process table, every thread).
    pub threads: Vec<ThreadUsage>,
    /// Per CPU: its id and its busy share of the window.
    pub cpus: Vec<(u32, f64)>,
    /// Busy share of all the CPUs together.
    pub total: f64,
    /// Per tracker of [`Config::trackers`], in that order.
    pub latencies: Vec<LatencyView>,
    /// The worst occurrences since the start over their tracker's threshold, worst first.
    pub worst: Vec<Report>,
    /// Occurrences over their threshold in the window.
    pub window_over: u64,
    /// Occurrences over their threshold since the start.
    pub total_over: u64,
}

impl Snapshot {
    /// The snapshot as one JSON object (a line of `tracekit top --batch`).
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({
            "begin": self.range.begin,
            "end": self.range.end,
            "first": self.first,
            "last": self.last,
            "threads": self.threads.iter().map(|t| serde_json::json!({
                "tid": t.tid, "comm": t.comm, "usage": t.usage,
            })).collect::<Vec<_>>(),
            "cpus": self.cpus.iter().map(|(c, u)| serde_json::json!({
                "cpu": c, "usage": u,
            })).collect::<Vec<_>>(),
            "total": self.total,
            "latencies": self.latencies.iter().map(|l| serde_json::json!({
                "tracker": l.total.tracker.name(),
                "matched": l.total.counters.matched,
                "min_ns": l.total.min,
                "avg_ns": l.total.avg,
                "max_ns": l.total.max,
                "log2_histogram": l.total.hist.iter()
                    .map(|(lo, n)| serde_json::json!({"ge_ns": lo, "count": n}))
                    .collect::<Vec<_>>(),
                "window_matched": l.window_matched,
                "window_log2_histogram": l.window_hist.iter()
                    .map(|(lo, n)| serde_json::json!({"ge_ns": lo, "count": n}))
                    .collect::<Vec<_>>(),
            })).collect::<Vec<_>>(),
            "worst": self.worst.iter().map(|r| r.to_json()).collect::<Vec<_>>(),
            "window_over": self.window_over,
            "total_over": self.total_over,
        })
    }

    /// The snapshot's view of `cputop`'s tables (per-process, per-cpu, total).
    fn cputop(&mut self, tables: &[Table]) {
        for t in tables {
            match t.class {
                "per-process" => {
                    self.threads = t
                        .rows
                        .iter()
                        .filter_map(|r| match (r.first(), r.get(3)) {
                            (Some(Cell::Process { name, tid, .. }), Some(Cell::Ratio(u))) => {
                                Some(ThreadUsage {
                                    tid: *tid,
                                    comm: name.to_string(),
                                    usage: *u,
                                })
                            }
                            _ => None,
                        })
                        .collect()
                }
                "per-cpu" => {
                    self.cpus = t
                        .rows
                        .iter()
                        .filter_map(|r| match (r.first(), r.get(1)) {
                            (Some(Cell::Cpu(c)), Some(Cell::Ratio(u))) => Some((*c, *u)),
                            _ => None,
                        })
                        .collect();
                    self.cpus.sort_by_key(|c| c.0);
                }
                "total" => {
                    if let Some(Cell::Ratio(u)) = t.rows.first().and_then(|r| r.first()) {
                        self.total = *u;
                    }
                }
                _ => {}
            }
        }
    }
}

/// The worst occurrences over their thresholds, and the counts of those over them.
#[derive(Default)]
struct Worst {
    keep: usize,
    thresholds: Vec<(Tracker, i64)>,
    list: Vec<Report>,
    window_over: u64,
    total_over: u64,
}

impl Worst {
    fn offer(&mut self, r: Report) {
        // Only completed measurements (no timeout is asked for).
        let over = self
            .thresholds
            .iter()
            .any(|&(t, th)| t == r.tracker && r.latency >= th);
        if !over {
            return;
        }
        self.window_over += 1;
        self.total_over += 1;
        if self.keep == 0 {
            return;
        }
        if self.list.len() == self.keep {
            match self.list.last() {
                Some(l) if l.latency >= r.latency => return,
                _ => {
                    self.list.pop();
                }
            }
        }
        // Worst first; equal latencies in the order they came.
        let at = self.list.partition_point(|x| x.latency >= r.latency);
        self.list.insert(at, r);
    }
}

/// The period the refresh pass ended (its range and cputop's tables), left for the sink.
type Ended = Rc<RefCell<Option<(Range, Vec<Table>)>>>;

type OnReport = Box<dyn FnMut(Report) -> Result<(), std::convert::Infallible>>;

/// The dashboard's sink: the refresh pass of `cputop` and the latency trackers, fed each
/// event, and a snapshot at the end of each window.
pub struct TopSink<'a, F> {
    config: &'a Config,
    refresh: RefreshSink<'a>,
    latency: LatencySink<OnReport, std::convert::Infallible>,
    /// The period the refresh pass ended, when it ended one at the last event.
    ended: Ended,
    worst: Rc<RefCell<Worst>>,
    /// The time at or after which an event ends the window (the refresh pass's own rule).
    cut: i64,
    first: Option<i64>,
    /// The cumulative latency summaries at the end of the previous window.
    previous: Vec<TrackerSummary>,
    on_snapshot: F,
    stopped: bool,
    analysed: Option<Result<analysis::Analysed, analysis::Error>>,
}

/// What the refresh pass borrows: made before the sink, alive as long as it.
pub struct Parts {
    common: Common,
    make: Box<dyn FnMut() -> Vec<Box<dyn Analysis>>>,
    report: Box<dyn FnMut(Range, Vec<Vec<Table>>)>,
    ended: Ended,
}

impl Parts {
    /// The analyses' options and callbacks of a dashboard.
    pub fn new() -> Self {
        let common = Common::default();
        let c = common.clone();
        let ended: Ended = Rc::default();
        let e = ended.clone();
        Parts {
            common,
            make: Box::new(move || {
                vec![Box::new(analysis::cputop::CpuTop::new(c.clone(), 0)) as Box<dyn Analysis>]
            }),
            report: Box::new(move |range, mut tables| {
                *e.borrow_mut() = Some((range, tables.pop().unwrap_or_default()));
            }),
            ended,
        }
    }
}

impl Default for Parts {
    fn default() -> Self {
        Self::new()
    }
}

impl<'a, F: FnMut(Snapshot) -> Flow> TopSink<'a, F> {
    /// The dashboard's sink with `parts` (see [`Parts::new`]), handing each window's
    /// snapshot to `on_snapshot` (which stops the read by returning [`Flow::Stop`]).
    pub fn new(config: &'a Config, parts: &'a mut Parts, on_snapshot: F) -> Self {
        let worst = Rc::new(RefCell::new(Worst {
            keep: config.worst,
            thresholds: config
                .trackers
                .iter()
                .map(|t| (*t, config.threshold_of(*t)))
                .collect(),
            ..Default::default()
        }));
        let w = worst.clone();
        let on_report: OnReport = Box::new(move |r| {
            w.borrow_mut().offer(r);
            Ok(())
        });
        TopSink {
            config,
            refresh: RefreshSink::new(
                &parts.common,
                Some(config.interval),
                &mut *parts.make,
                &mut *parts.report,
            ),
            latency: LatencySink::new(&config.trackers, config.latency_config(), on_report),
            ended: parts.ended.clone(),
            worst,
            cut: i64::MIN,
            first: None,
            previous: Vec::new(),
            on_snapshot,
            stopped: false,
            analysed: None,
        }
    }

    /// What the read analysed (after it), or why it failed.
    pub fn analysed(&mut self) -> Option<Result<analysis::Analysed, analysis::Error>> {
        self.analysed.take()
    }

    /// The window that the refresh pass ended, made into a snapshot for `on_snapshot`.
    #[cold]
    #[inline(never)]
    fn window_ended(&mut self, last: bool) -> Flow {
        let Some((range, tables)) = self.ended.borrow_mut().take() else {
            return Flow::Continue;
        };
        let now = self.latency.summary_now();
        let latencies = now
            .trackers
            .iter()
            .map(|t| {
                let before = self.previous.iter().find(|p| p.tracker == t.tracker);
                LatencyView {
                    total: t.clone(),
                    window_matched: t.counters.matched - before.map_or(0, |b| b.counters.matched),
                    window_hist: hist_minus(&t.hist, before.map_or(&[][..], |b| &b.hist)),
                }
            })
            .collect();
        self.previous = now.trackers;
        let mut worst = self.worst.borrow_mut();
        let mut snap = Snapshot {
            range,
            first: self.first.unwrap_or(range.begin),
            last,
            threads: Vec::new(),
            cpus: Vec::new(),
            total: 0.0,
            latencies,
            worst: worst.list.clone(),
            window_over: std::mem::take(&mut worst.window_over),
            total_over: worst.total_over,
        };
        drop(worst);
        snap.cputop(&tables);
        (self.on_snapshot)(snap)
    }
}

/// `a - b` for two log2 histograms as [`TrackerSummary::hist`] gives them.
fn hist_minus(a: &[(i64, u64)], b: &[(i64, u64)]) -> Vec<(i64, u64)> {
    a.iter()
        .filter_map(|&(lo, n)| {
            let before = b.iter().find(|x| x.0 == lo).map_or(0, |x| x.1);
            (n > before).then_some((lo, n - before))
        })
        .collect()
}

impl<F: FnMut(Snapshot) -> Flow> Sink for TopSink<'_, F> {
    fn wanted(&self, _trace: &Trace) -> Wanted {
        // A window ends at any event, and every event advances the trackers' clock.
        None
    }

    #[inline(always)]
    fn event(&mut self, ev: &Event<'_>, ts: i64) -> Flow {
        self.refresh.event(ev, ts);
        if ts >= self.cut {
            // The refresh pass began a period at this event (the first, or one at or after
            // the cut): the one before it ended, before this event.
            self.first.get_or_insert(ts);
            self.cut = ts.saturating_add(self.config.interval);
            if self.window_ended(false) == Flow::Stop {
                self.stopped = true;
                return Flow::Stop;
            }
        }
        self.latency.event(ev, ts)
    }

    fn diagnostic(&mut self, d: &Diagnostic) {
        self.refresh.diagnostic(d);
    }

    fn finish(&mut self, summary: &Summary) {
        self.analysed = Some(self.refresh.end(summary));
        if !self.stopped {
            self.window_ended(true);
        }
    }
}

/// Reads `source` into the dashboard's numbers, handing a [`Snapshot`] to `on_snapshot` at
/// the end of each window (the last one with [`Snapshot::last`] set) until the source ends
/// or `on_snapshot` returns [`Flow::Stop`]. Returns what the read analysed.
pub fn run<S: Source>(
    source: &S,
    config: &Config,
    on_snapshot: impl FnMut(Snapshot) -> Flow,
) -> Result<analysis::Analysed, Error> {
    let mut parts = Parts::new();
    let mut sink = TopSink::new(config, &mut parts, on_snapshot);
    source.run(&mut sink);
    match sink.analysed() {
        Some(r) => Ok(r?),
        None => Err(Error::Reader("the source did not end its read".into())),
    }
}
