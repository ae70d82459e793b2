//! Entry/exit latency trackers (`tracekit latency`, `tracekit record --snapshot-on`) in the
//! spirit of latency_tracker, as sans-io state machines driven only by event timestamps
//! (deterministic, and usable live).
//!
//! # API
//!
//! * Each tracker is a generic entry/exit matcher (internal) with the limits of a [`Config`]:
//!   an entry starts a measurement (an existing entry with the same key is kept unless the
//!   tracker replaces it; when `max_pending` entries are in flight the new one is dropped and
//!   counted in [`Counters::skipped`]); an exit ends it and reports it when
//!   `end − start ≥ threshold`; time passing fires a timeout report for each entry older than
//!   `timeout` (once: the entry stays, so a later exit still reports the whole latency). Time
//!   only comes from the event timestamps, so the same input always gives the same output.
//! * [`Latency`]: the classic trackers over kernel events. Feed it [`Input`]s in time order
//!   with [`Latency::feed`] (it calls [`Latency::advance`] first); it appends [`Report`]s to the given
//!   vector. [`Latency::finish`] returns the [`Summary`] (counts and log2 histograms of every
//!   matched latency, reported or not). [`input_of`] turns a CTF event into an [`Input`];
//!   the recorder can build [`Input`]s from a live session the same way ([`input_of_class`],
//!   event names classified by the [`kernel`] model).
//! * [`LatencySink`]: the trackers as a [`pipeline::Sink`], fed by any source
//!   ([`run_traces`]: trace files).
//! * [`stacks`]: the stacks `tracekit record --stacks` took, matched to the reports.
//!
//! Trackers (key: in → out):
//! * `wakeup` (tid: first `sched_waking`/`sched_wakeup(_new)` → `sched_switch` in), with the
//!   waker (the thread running on the waking CPU);
//! * `offcpu` (tid: `sched_switch` out → `sched_switch` in), with the previous state and the
//!   last waker;
//! * `syscall` (tid: `syscall_entry_*` → `syscall_exit_*` of the thread running on the CPU);
//! * `block` (dev, sector: `block_rq_issue` → `block_rq_complete`; requests without sectors,
//!   such as flushes, are ignored);
//! * `irq` (CPU: `irq_handler_entry` → `irq_handler_exit`; and (CPU, vec): soft IRQ raise →
//!   entry, the raise latency).

#![deny(missing_docs)]

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::hash::Hash;
use std::sync::Arc;

use compact_str::CompactString;
use kernel::{IntMap, Kind};
use pipeline::{FileSource, Flow, ReadOptions, Sink, Source};

pub mod cli;
pub mod report;
pub mod stacks;

/// Limits of a matcher.
#[derive(Debug, Clone, Copy)]
pub struct Config {
    /// Report latencies of at least this (ns).
    pub threshold: i64,
    /// Report entries pending for longer than this (ns); None: never.
    pub timeout: Option<i64>,
    /// At most this many entries in flight.
    pub max_pending: usize,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            threshold: 1_000_000,
            timeout: Some(1_000_000_000),
            max_pending: 65_536,
        }
    }
}

struct Entry<P> {
    start: i64,
    seq: u64,
    timed_out: bool,
    payload: P,
}

/// What a matcher reports.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Outcome<K, P> {
    /// A completed measurement over the threshold.
    Latency {
        /// What was measured.
        key: K,
        /// The time of the entry (ns).
        start: i64,
        /// The time of the exit (ns).
        end: i64,
        /// What the entry recorded.
        payload: P,
        /// It had timed out before.
        timed_out: bool,
    },
    /// A measurement pending for longer than the timeout, at time `now`.
    Timeout {
        /// What is measured.
        key: K,
        /// The time of the entry (ns).
        start: i64,
        /// The deadline that passed (ns).
        now: i64,
        /// What the entry recorded.
        payload: P,
    },
}

impl<K, P> Outcome<K, P> {
    /// `(key, start, end, payload, is_timeout, timed_out_before)`, the end of a timeout being
    /// the time it was noticed.
    pub(crate) fn into_parts(self) -> (K, i64, i64, P, bool, bool) {
        match self {
            Outcome::Latency {
                key,
                start,
                end,
                payload,
                timed_out,
            } => (key, start, end, payload, false, timed_out),
            Outcome::Timeout {
                key,
                start,
                now,
                payload,
            } => (key, start, now, payload, true, false),
        }
    }
}

/// Counters of a matcher.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counters {
    /// Measurements completed (an entry and its exit).
    pub matched: u64,
    /// Completed measurements at or over the threshold.
    pub reported: u64,
    /// Entries pending past the timeout.
    pub timeouts: u64,
    /// `event_in` dropped because `max_pending` entries were in flight.
    pub skipped: u64,
    /// `event_out` without an entry.
    pub unmatched_out: u64,
    /// Entries replaced by a new `event_in` of the same key.
    pub replaced: u64,
}

/// A generic entry/exit matcher.
pub(crate) struct Matcher<K, P> {
    /// Its limits.
    pub config: Config,
    pending: IntMap<K, Entry<P>>,
    deadlines: BinaryHeap<Reverse<(i64, u64)>>,
    keys: IntMap<u64, K>,
    seq: u64,
    /// What happened so far.
    pub counters: Counters,
    /// Every matched latency (ns), as a log2 histogram: bucket i holds [2^i, 2^(i+1)).
    pub hist: [u64; 64],
    /// The sum of the matched latencies (ns).
    pub sum: i128,
    /// The smallest matched latency (ns).
    pub min: Option<i64>,
    /// The largest matched latency (ns).
    pub max: Option<i64>,
}

impl<K: Eq + Hash + Clone, P: Clone> Matcher<K, P> {
    /// An empty matcher with limits `config`.
    pub fn new(config: Config) -> Self {
        Matcher {
            config,
            pending: IntMap::default(),
            deadlines: BinaryHeap::new(),
            keys: IntMap::default(),
            seq: 0,
            counters: Counters::default(),
            hist: [0; 64],
            sum: 0,
            min: None,
            max: None,
        }
    }

    /// Number of entries in flight.
    pub fn pending(&self) -> usize {
        self.pending.len()
    }

    /// The payload of the entry of `key`, if any.
    pub fn get(&self, key: &K) -> Option<&P> {
        self.pending.get(key).map(|e| &e.payload)
    }

    /// Starts a measurement. Returns false when it was not recorded (an entry exists and
    /// `replace` is false, or the matcher is full).
    pub fn event_in(&mut self, key: K, ts: i64, payload: P, replace: bool) -> bool {
        if let Some(e) = self.pending.get(&key) {
            if !replace {
                return false;
            }
            self.keys.remove(&e.seq);
            self.counters.replaced += 1;
        } else if self.pending.len() >= self.config.max_pending {
            self.counters.skipped += 1;
            return false;
        }
        self.seq += 1;
        if let Some(t) = self.config.timeout {
            self.deadlines
                .push(Reverse((ts.saturating_add(t), self.seq)));
            self.keys.insert(self.seq, key.clone());
        }
        self.pending.insert(
            key,
            Entry {
                start: ts,
                seq: self.seq,
                timed_out: false,
                payload,
            },
        );
        true
    }

    /// Ends the measurement of `key` at `ts`; returns its latency.
    pub fn event_out(&mut self, key: &K, ts: i64, out: &mut Vec<Outcome<K, P>>) -> Option<i64> {
        let Some(e) = self.pending.remove(key) else {
            self.counters.unmatched_out += 1;
            return None;
        };
        self.keys.remove(&e.seq);
        let lat = ts - e.start;
        self.counters.matched += 1;
        let b = if lat <= 0 {
            0
        } else {
            63 - lat.leading_zeros() as usize
        };
        self.hist[b] += 1;
        self.sum += lat as i128;
        self.min = Some(self.min.map_or(lat, |m| m.min(lat)));
        self.max = Some(self.max.map_or(lat, |m| m.max(lat)));
        if lat >= self.config.threshold {
            self.counters.reported += 1;
            out.push(Outcome::Latency {
                key: key.clone(),
                start: e.start,
                end: ts,
                payload: e.payload,
                timed_out: e.timed_out,
            });
        }
        Some(lat)
    }

    /// Drops the entry of `key` without measuring.
    pub fn cancel(&mut self, key: &K) {
        if let Some(e) = self.pending.remove(key) {
            self.keys.remove(&e.seq);
        }
    }

    /// Whether [`Self::advance`] to `now` has anything to do: some entry's deadline has come
    /// (or an entry that ended before it left its deadline behind).
    #[inline]
    pub fn due(&self, now: i64) -> bool {
        self.deadlines
            .peek()
            .is_some_and(|Reverse((d, _))| *d <= now)
    }

    /// Stream time is now `now`: reports the entries past their timeout.
    pub fn advance(&mut self, now: i64, out: &mut Vec<Outcome<K, P>>) {
        while let Some(Reverse((deadline, seq))) = self.deadlines.peek().copied() {
            if deadline > now {
                break;
            }
            self.deadlines.pop();
            let Some(key) = self.keys.remove(&seq) else {
                continue;
            };
            if let Some(e) = self.pending.get_mut(&key) {
                if e.seq == seq && !e.timed_out {
                    e.timed_out = true;
                    self.counters.timeouts += 1;
                    out.push(Outcome::Timeout {
                        key,
                        start: e.start,
                        now: deadline,
                        payload: e.payload.clone(),
                    });
                }
            }
        }
    }
}

/// The trackers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Tracker {
    /// From a thread's wake-up to its running.
    Wakeup,
    /// From a thread's switch out to its switch in.
    Offcpu,
    /// From a system call's entry to its exit.
    Syscall,
    /// From a block request's issue to its completion.
    Block,
    /// Hard IRQ handlers, and soft IRQs from their raise to their entry.
    Irq,
    /// A function of a thread, from its entry probe (`NAME_entry`) to its return probe
    /// (`NAME_exit`): `tracekit record --function` (kernel) or `--userspace-function`. Not
    /// in [`Tracker::ALL`] (asked for by name).
    Function,
}

impl Tracker {
    /// Every tracker.
    pub const ALL: [Tracker; 5] = [
        Tracker::Wakeup,
        Tracker::Offcpu,
        Tracker::Syscall,
        Tracker::Block,
        Tracker::Irq,
    ];

    /// The tracker's name (on the command line and in reports).
    pub fn name(self) -> &'static str {
        match self {
            Tracker::Wakeup => "wakeup",
            Tracker::Offcpu => "offcpu",
            Tracker::Syscall => "syscall",
            Tracker::Block => "block",
            Tracker::Irq => "irq",
            Tracker::Function => "function",
        }
    }
}

/// A waker as reports give it.
fn owned_waker(w: Option<(i32, CompactString)>) -> Option<(i32, String)> {
    w.map(|(tid, comm)| (tid, comm.into()))
}

/// A kernel event, as the trackers need it.
///
/// The fields are the events' payload fields of the same names; `cpu` is the CPU that
/// recorded the event.
#[derive(Debug, Clone, PartialEq)]
#[allow(missing_docs)]
pub enum Input {
    /// `sched_waking`, `sched_wakeup` or `sched_wakeup_new`: thread `tid` woken.
    Waking {
        cpu: u32,
        tid: i32,
        comm: CompactString,
    },
    /// `sched_switch`.
    Switch {
        cpu: u32,
        prev_tid: i32,
        prev_comm: CompactString,
        prev_state: i64,
        next_tid: i32,
        next_comm: CompactString,
    },
    /// A system call entry, `name` the call's.
    SyscallEntry { cpu: u32, name: CompactString },
    /// A system call exit, returning `ret`.
    SyscallExit { cpu: u32, ret: i64 },
    /// A probed function entered by the CPU's thread (`NAME_entry` event).
    FunctionEntry { cpu: u32, name: Arc<str> },
    /// A probed function returned in the CPU's thread (`NAME_exit` event).
    FunctionExit { cpu: u32, name: Arc<str> },
    /// `block_rq_issue`, by thread `tid` when the tracer records it.
    BlockIssue {
        dev: u64,
        sector: u64,
        nr_sector: u64,
        tid: Option<i32>,
    },
    /// `block_rq_complete`.
    BlockComplete { dev: u64, sector: u64 },
    /// `irq_handler_entry`.
    IrqEntry {
        cpu: u32,
        irq: i64,
        name: CompactString,
    },
    /// `irq_handler_exit`.
    IrqExit { cpu: u32, irq: i64 },
    /// A soft IRQ raised (`softirq_raise`, `irq_softirq_raise`).
    SoftIrqRaise { cpu: u32, vec: u64 },
    /// A soft IRQ handler entered (`softirq_entry`, `irq_softirq_entry`).
    SoftIrqEntry { cpu: u32, vec: u64 },
}

/// One reported occurrence.
#[derive(Debug, Clone, PartialEq)]
pub struct Report {
    /// The tracker that measured.
    pub tracker: Tracker,
    /// Start of the measurement (ns).
    pub begin: i64,
    /// End of the measurement, or the time of the timeout.
    pub end: i64,
    /// `end - begin` (ns).
    pub latency: i64,
    /// A timeout (the measurement is still pending at `end`).
    pub timeout: bool,
    /// The measurement had timed out before completing.
    pub timed_out: bool,
    /// The thread measured, for the thread trackers and block requests.
    pub tid: Option<i32>,
    /// Its last known command name.
    pub comm: Option<String>,
    /// The CPU, where it is known.
    pub cpu: Option<u32>,
    /// The thread (tid, command name) that woke the one measured.
    pub waker: Option<(i32, String)>,
    /// What was measured: syscall name, IRQ, device and sector, thread state.
    pub detail: String,
}

impl Report {
    /// The JSON object of the report (one line of `--json`).
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({
            "tracker": self.tracker.name(),
            "kind": if self.timeout { "timeout" } else { "latency" },
            "begin": self.begin,
            "end": self.end,
            "latency_ns": self.latency,
            "timed_out_before": self.timed_out,
            "tid": self.tid,
            "comm": self.comm,
            "cpu": self.cpu,
            "waker_tid": self.waker.as_ref().map(|w| w.0),
            "waker_comm": self.waker.as_ref().map(|w| w.1.clone()),
            "detail": self.detail,
        })
    }
}

#[derive(Debug, Clone)]
struct Wake {
    cpu: u32,
    waker: Option<(i32, CompactString)>,
}

#[derive(Debug, Clone)]
struct Off {
    cpu: u32,
    state: i64,
}

#[derive(Debug, Clone)]
struct Sys {
    cpu: u32,
    name: CompactString,
}

#[derive(Debug, Clone)]
struct Blk {
    tid: Option<i32>,
    nr_sector: u64,
}

#[derive(Debug, Clone)]
struct Irq {
    irq: i64,
    name: CompactString,
}

/// Per-tracker summary.
#[derive(Debug, Clone, PartialEq)]
pub struct TrackerSummary {
    /// The tracker.
    pub tracker: Tracker,
    /// What its matchers counted.
    pub counters: Counters,
    /// Still in flight at the end.
    pub pending: usize,
    /// The smallest matched latency (ns).
    pub min: Option<i64>,
    /// The largest matched latency (ns).
    pub max: Option<i64>,
    /// The mean matched latency (ns).
    pub avg: Option<f64>,
    /// log2 histogram of the matched latencies: (lower bound ns, count), non-empty buckets.
    pub hist: Vec<(i64, u64)>,
}

/// The summary of a run.
#[derive(Debug, Clone, PartialEq)]
pub struct Summary {
    /// One per enabled tracker, in the order they were given.
    pub trackers: Vec<TrackerSummary>,
}

/// The trackers together.
pub struct Latency {
    enabled: Vec<Tracker>,
    current: IntMap<u32, i32>,
    comms: IntMap<i32, CompactString>,
    last_waker: IntMap<i32, (i32, CompactString)>,
    wakeup: Matcher<i32, Wake>,
    offcpu: Matcher<i32, Off>,
    syscall: Matcher<i32, Sys>,
    block: Matcher<(u64, u64), Blk>,
    irq: Matcher<u32, Irq>,
    softirq: Matcher<(u32, u64), ()>,
    /// Per (thread, function): the CPU it entered on.
    function: Matcher<(i32, Arc<str>), u32>,
    /// Whether the function tracker runs (checked per event of a function probe).
    function_on: bool,
}

fn on<K: Eq + Hash + Clone, P: Clone>(
    m: &mut Matcher<K, P>,
    now: i64,
    f: impl Fn(Outcome<K, P>) -> Report,
    out: &mut Vec<Report>,
) {
    let mut o = Vec::new();
    m.advance(now, &mut o);
    out.extend(o.into_iter().map(f));
}

impl Latency {
    /// The trackers `trackers`, each with limits `config`.
    pub fn new(trackers: &[Tracker], config: Config) -> Self {
        Latency {
            enabled: trackers.to_vec(),
            current: IntMap::default(),
            comms: IntMap::default(),
            last_waker: IntMap::default(),
            wakeup: Matcher::new(config),
            offcpu: Matcher::new(config),
            syscall: Matcher::new(config),
            block: Matcher::new(config),
            irq: Matcher::new(config),
            softirq: Matcher::new(config),
            function: Matcher::new(config),
            function_on: trackers.contains(&Tracker::Function),
        }
    }

    /// The report of a function's duration (or timeout) in a thread.
    fn function_report(&self, o: Outcome<(i32, Arc<str>), u32>) -> Report {
        let (key, cpu) = match &o {
            Outcome::Latency { key, payload, .. } | Outcome::Timeout { key, payload, .. } => {
                (key.clone(), *payload)
            }
        };
        let o = match o {
            Outcome::Latency {
                start,
                end,
                timed_out,
                payload,
                ..
            } => Outcome::Latency {
                key: key.0,
                start,
                end,
                timed_out,
                payload,
            },
            Outcome::Timeout {
                start,
                now,
                payload,
                ..
            } => Outcome::Timeout {
                key: key.0,
                start,
                now,
                payload,
            },
        };
        let mut r = self.thread_report(Tracker::Function, o);
        r.cpu = Some(cpu);
        r.detail = key.1.to_string();
        r
    }

    fn has(&self, t: Tracker) -> bool {
        self.enabled.contains(&t)
    }

    fn comm(&self, tid: i32) -> Option<String> {
        self.comms.get(&tid).map(|c| c.to_string())
    }

    /// The last known command name of `tid`, replacing its copy only when it changed.
    fn set_comm(&mut self, tid: i32, comm: &CompactString) {
        match self.comms.get_mut(&tid) {
            Some(c) if c == comm => {}
            Some(c) => c.clone_from(comm),
            None => {
                self.comms.insert(tid, comm.clone());
            }
        }
    }

    fn thread_report(&self, t: Tracker, o: Outcome<i32, impl Clone>) -> Report {
        let (tid, begin, end, timeout, timed_out) = match &o {
            Outcome::Latency {
                key,
                start,
                end,
                timed_out,
                ..
            } => (*key, *start, *end, false, *timed_out),
            Outcome::Timeout {
                key, start, now, ..
            } => (*key, *start, *now, true, false),
        };
        Report {
            tracker: t,
            begin,
            end,
            latency: end - begin,
            timeout,
            timed_out,
            tid: Some(tid),
            comm: self.comm(tid),
            cpu: None,
            waker: None,
            detail: String::new(),
        }
    }

    /// Feeds one event at time `ts` (non-decreasing) and appends the reports to `out`.
    pub fn feed(&mut self, ts: i64, input: &Input, out: &mut Vec<Report>) {
        self.advance(ts, out);
        match input {
            Input::Waking { cpu, tid, comm } => {
                self.set_comm(*tid, comm);
                let waker = self
                    .current
                    .get(cpu)
                    .filter(|&&t| t != 0)
                    .map(|&t| (t, self.comms.get(&t).cloned().unwrap_or_default()));
                if let Some(w) = &waker {
                    self.last_waker.insert(*tid, w.clone());
                }
                let running = self.current.values().any(|t| t == tid);
                if self.has(Tracker::Wakeup) && !running {
                    self.wakeup
                        .event_in(*tid, ts, Wake { cpu: *cpu, waker }, false);
                }
            }
            Input::Switch {
                cpu,
                prev_tid,
                prev_comm,
                prev_state,
                next_tid,
                next_comm,
            } => {
                self.set_comm(*prev_tid, prev_comm);
                self.set_comm(*next_tid, next_comm);
                self.current.insert(*cpu, *next_tid);
                if *next_tid != 0 {
                    let mut o = Vec::new();
                    if self.has(Tracker::Wakeup) {
                        self.wakeup.event_out(next_tid, ts, &mut o);
                        for x in o.drain(..) {
                            let w = match &x {
                                Outcome::Latency { payload, .. }
                                | Outcome::Timeout { payload, .. } => payload.clone(),
                            };
                            let mut r = self.thread_report(Tracker::Wakeup, x);
                            r.cpu = Some(*cpu);
                            r.waker = owned_waker(w.waker);
                            r.detail = format!("woken on CPU {}", w.cpu);
                            out.push(r);
                        }
                    }
                    if self.has(Tracker::Offcpu) {
                        let mut o = Vec::new();
                        self.offcpu.event_out(next_tid, ts, &mut o);
                        for x in o {
                            let p = match &x {
                                Outcome::Latency { payload, .. }
                                | Outcome::Timeout { payload, .. } => payload.clone(),
                            };
                            let mut r = self.thread_report(Tracker::Offcpu, x);
                            r.cpu = Some(*cpu);
                            r.waker = owned_waker(self.last_waker.get(next_tid).cloned());
                            r.detail = format!(
                                "state {} on CPU {}, in on CPU {}",
                                state_name(p.state),
                                p.cpu,
                                cpu
                            );
                            out.push(r);
                        }
                    }
                }
                if *prev_tid != 0 && self.has(Tracker::Offcpu) {
                    self.last_waker.remove(prev_tid);
                    self.offcpu.event_in(
                        *prev_tid,
                        ts,
                        Off {
                            cpu: *cpu,
                            state: *prev_state,
                        },
                        true,
                    );
                }
            }
            Input::SyscallEntry { cpu, name } => {
                if !self.has(Tracker::Syscall) {
                    return;
                }
                if let Some(&tid) = self.current.get(cpu) {
                    self.syscall.event_in(
                        tid,
                        ts,
                        Sys {
                            cpu: *cpu,
                            name: name.clone(),
                        },
                        true,
                    );
                }
            }
            Input::FunctionEntry { cpu, name } => {
                if !self.has(Tracker::Function) {
                    return;
                }
                if let Some(&tid) = self.current.get(cpu) {
                    self.function.event_in((tid, name.clone()), ts, *cpu, true);
                }
            }
            Input::FunctionExit { cpu, name } => {
                if !self.has(Tracker::Function) {
                    return;
                }
                let Some(&tid) = self.current.get(cpu) else {
                    return;
                };
                let mut o = Vec::new();
                self.function.event_out(&(tid, name.clone()), ts, &mut o);
                for x in o {
                    let r = self.function_report(x);
                    out.push(r);
                }
            }
            Input::SyscallExit { cpu, ret } => {
                if !self.has(Tracker::Syscall) {
                    return;
                }
                let Some(&tid) = self.current.get(cpu) else {
                    return;
                };
                let mut o = Vec::new();
                self.syscall.event_out(&tid, ts, &mut o);
                for x in o {
                    let p = match &x {
                        Outcome::Latency { payload, .. } | Outcome::Timeout { payload, .. } => {
                            payload.clone()
                        }
                    };
                    let mut r = self.thread_report(Tracker::Syscall, x);
                    r.cpu = Some(p.cpu);
                    r.detail = format!("{} = {}", p.name, ret);
                    out.push(r);
                }
            }
            Input::BlockIssue {
                dev,
                sector,
                nr_sector,
                tid,
            } => {
                // Requests without sectors (flushes) have no position to match them by.
                if self.has(Tracker::Block) && *nr_sector > 0 {
                    self.block.event_in(
                        (*dev, *sector),
                        ts,
                        Blk {
                            tid: *tid,
                            nr_sector: *nr_sector,
                        },
                        true,
                    );
                }
            }
            Input::BlockComplete { dev, sector } => {
                if self.has(Tracker::Block) && self.block.get(&(*dev, *sector)).is_some() {
                    let mut o = Vec::new();
                    self.block.event_out(&(*dev, *sector), ts, &mut o);
                    for x in o {
                        out.push(self.block_report(x));
                    }
                }
            }
            Input::IrqEntry { cpu, irq, name } => {
                if self.has(Tracker::Irq) {
                    self.irq.event_in(
                        *cpu,
                        ts,
                        Irq {
                            irq: *irq,
                            name: name.clone(),
                        },
                        true,
                    );
                }
            }
            Input::IrqExit { cpu, irq } => {
                if !self.has(Tracker::Irq) {
                    return;
                }
                if self.irq.get(cpu).is_some_and(|p| p.irq != *irq) {
                    self.irq.cancel(cpu);
                    return;
                }
                let mut o = Vec::new();
                self.irq.event_out(cpu, ts, &mut o);
                for x in o {
                    out.push(irq_report(x));
                }
            }
            Input::SoftIrqRaise { cpu, vec } => {
                if self.has(Tracker::Irq) {
                    self.softirq.event_in((*cpu, *vec), ts, (), false);
                }
            }
            Input::SoftIrqEntry { cpu, vec } => {
                if self.has(Tracker::Irq) {
                    let mut o = Vec::new();
                    if self.softirq.get(&(*cpu, *vec)).is_some() {
                        self.softirq.event_out(&(*cpu, *vec), ts, &mut o);
                    }
                    for x in o {
                        out.push(softirq_report(x));
                    }
                }
            }
        }
    }

    fn block_report(&self, x: Outcome<(u64, u64), Blk>) -> Report {
        let (key, begin, end, p, timeout, timed_out) = x.into_parts();
        Report {
            tracker: Tracker::Block,
            begin,
            end,
            latency: end - begin,
            timeout,
            timed_out,
            tid: p.tid,
            comm: p.tid.and_then(|t| self.comm(t)),
            cpu: None,
            waker: None,
            detail: format!(
                "dev {}:{} sector {} ({} sectors)",
                key.0 >> 20,
                key.0 & 0xfffff,
                key.1,
                p.nr_sector
            ),
        }
    }

    /// Stream time is now `now`: reports the timeouts due.
    pub fn advance(&mut self, now: i64, out: &mut Vec<Report>) {
        // Called for every event: most of the time no deadline has come.
        if !(self.wakeup.due(now)
            || self.offcpu.due(now)
            || self.syscall.due(now)
            || self.block.due(now)
            || self.irq.due(now)
            || self.softirq.due(now)
            || self.function.due(now))
        {
            return;
        }
        let mut o = Vec::new();
        self.wakeup.advance(now, &mut o);
        for x in o {
            let mut r = self.thread_report(Tracker::Wakeup, x.clone());
            if let Outcome::Timeout { payload, .. } = x {
                r.waker = owned_waker(payload.waker);
                r.detail = format!("woken on CPU {}", payload.cpu);
            }
            out.push(r);
        }
        let mut o = Vec::new();
        self.offcpu.advance(now, &mut o);
        for x in o {
            let mut r = self.thread_report(Tracker::Offcpu, x.clone());
            if let Outcome::Timeout { payload, key, .. } = x {
                r.waker = owned_waker(self.last_waker.get(&key).cloned());
                r.detail = format!("state {} on CPU {}", state_name(payload.state), payload.cpu);
            }
            out.push(r);
        }
        let mut o = Vec::new();
        self.syscall.advance(now, &mut o);
        for x in o {
            let mut r = self.thread_report(Tracker::Syscall, x.clone());
            if let Outcome::Timeout { payload, .. } = x {
                r.cpu = Some(payload.cpu);
                r.detail = payload.name.into();
            }
            out.push(r);
        }
        let mut o = Vec::new();
        self.block.advance(now, &mut o);
        for x in o {
            out.push(self.block_report(x));
        }
        on(&mut self.irq, now, irq_report, out);
        on(&mut self.softirq, now, softirq_report, out);
        let mut o = Vec::new();
        self.function.advance(now, &mut o);
        for x in o {
            out.push(self.function_report(x));
        }
    }

    /// The counters and histograms.
    pub fn finish(&self) -> Summary {
        fn s<K: Eq + Hash + Clone, P: Clone>(t: Tracker, m: &Matcher<K, P>) -> TrackerSummary {
            TrackerSummary {
                tracker: t,
                counters: m.counters,
                pending: m.pending(),
                min: m.min,
                max: m.max,
                avg: (m.counters.matched > 0).then(|| m.sum as f64 / m.counters.matched as f64),
                hist: m
                    .hist
                    .iter()
                    .enumerate()
                    .filter(|(_, &c)| c > 0)
                    .map(|(i, &c)| (if i == 0 { 0 } else { 1i64 << i }, c))
                    .collect(),
            }
        }
        let mut v = Vec::new();
        for &t in &self.enabled {
            match t {
                Tracker::Wakeup => v.push(s(t, &self.wakeup)),
                Tracker::Offcpu => v.push(s(t, &self.offcpu)),
                Tracker::Syscall => v.push(s(t, &self.syscall)),
                Tracker::Block => v.push(s(t, &self.block)),
                Tracker::Function => v.push(s(t, &self.function)),
                Tracker::Irq => {
                    let mut a = s(t, &self.irq);
                    let b = s(t, &self.softirq);
                    // Soft IRQ raise latencies are folded into the irq tracker's counters;
                    // the histogram is that of the hard IRQ handlers.
                    a.counters.matched += b.counters.matched;
                    a.counters.reported += b.counters.reported;
                    a.counters.timeouts += b.counters.timeouts;
                    a.counters.skipped += b.counters.skipped;
                    a.pending += b.pending;
                    v.push(a)
                }
            }
        }
        Summary { trackers: v }
    }
}

fn irq_report(x: Outcome<u32, Irq>) -> Report {
    let (cpu, begin, end, p, timeout, timed_out) = x.into_parts();
    Report {
        tracker: Tracker::Irq,
        begin,
        end,
        latency: end - begin,
        timeout,
        timed_out,
        tid: None,
        comm: None,
        cpu: Some(cpu),
        waker: None,
        detail: format!("hard IRQ {} ({})", p.irq, p.name),
    }
}

fn softirq_report(x: Outcome<(u32, u64), ()>) -> Report {
    let (key, begin, end, timeout, timed_out) = match x {
        Outcome::Latency {
            key,
            start,
            end,
            timed_out,
            ..
        } => (key, start, end, false, timed_out),
        Outcome::Timeout {
            key, start, now, ..
        } => (key, start, now, true, false),
    };
    Report {
        tracker: Tracker::Irq,
        begin,
        end,
        latency: end - begin,
        timeout,
        timed_out,
        tid: None,
        comm: None,
        cpu: Some(key.0),
        waker: None,
        detail: format!("soft IRQ {} raise latency", key.1),
    }
}

/// The name of a `prev_state` value.
pub(crate) fn state_name(s: i64) -> String {
    match s {
        0 => "R".into(),
        1 => "S".into(),
        2 => "D".into(),
        _ if s & 1024 != 0 || s & 2048 != 0 => "R+".into(),
        _ => format!("{s:#x}"),
    }
}

/// The payload fields the trackers read (each variant is the field [`Field::name`] gives).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Field {
    /// `prev_tid` (`sched_switch`).
    PrevTid,
    /// `prev_comm` (`sched_switch`).
    PrevComm,
    /// `prev_state` (`sched_switch`).
    PrevState,
    /// `next_tid` (`sched_switch`).
    NextTid,
    /// `next_comm` (`sched_switch`).
    NextComm,
    /// `tid` (wakeups, `block_rq_issue`).
    Tid,
    /// `comm` (wakeups).
    Comm,
    /// `dev` (block requests).
    Dev,
    /// `sector` (block requests).
    Sector,
    /// `nr_sector` (`block_rq_issue`).
    NrSector,
    /// `irq` (IRQ handlers).
    Irq,
    /// `name` (`irq_handler_entry`).
    Name,
    /// `vec` (soft IRQs).
    Vec,
    /// `ret` (system call exits).
    Ret,
}

impl Field {
    /// Every field, in the order of their discriminants.
    pub const ALL: [Field; 14] = [
        Field::PrevTid,
        Field::PrevComm,
        Field::PrevState,
        Field::NextTid,
        Field::NextComm,
        Field::Tid,
        Field::Comm,
        Field::Dev,
        Field::Sector,
        Field::NrSector,
        Field::Irq,
        Field::Name,
        Field::Vec,
        Field::Ret,
    ];

    /// The field's name in the events' payloads.
    pub fn name(self) -> &'static str {
        match self {
            Field::PrevTid => "prev_tid",
            Field::PrevComm => "prev_comm",
            Field::PrevState => "prev_state",
            Field::NextTid => "next_tid",
            Field::NextComm => "next_comm",
            Field::Tid => "tid",
            Field::Comm => "comm",
            Field::Dev => "dev",
            Field::Sector => "sector",
            Field::NrSector => "nr_sector",
            Field::Irq => "irq",
            Field::Name => "name",
            Field::Vec => "vec",
            Field::Ret => "ret",
        }
    }
}

/// The tracker input of event `ev` on `cpu`, its fields looked up by name.
pub fn input_of(ev: &ctf::Event<'_>, cpu: u32) -> Option<Input> {
    input_of_class(
        &ClassKind::of(ev.name()),
        cpu,
        |f| ev.field(f.name()).and_then(|v| v.as_i64()),
        |f| text_of(ev.field(f.name())),
    )
}

/// A text field's value (empty when absent or not text).
fn text_of(v: Option<ctf::FieldView<'_>>) -> CompactString {
    v.and_then(|v| v.as_bytes())
        .map_or_else(CompactString::default, CompactString::from_utf8_lossy)
}

/// What the trackers make of an event class, from its name (any lttng-modules naming,
/// classified by the [`kernel`] model): found once per class.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClassKind {
    kind: Kind,
    /// The system call of a system call entry (empty otherwise).
    syscall: CompactString,
    /// A tracker reads events of the class.
    read: bool,
    /// Of a probed function's entry or return event (`NAME_entry`, `NAME_exit`, of no other
    /// kind): its name and whether it is the return.
    function: Option<(Arc<str>, bool)>,
}

impl ClassKind {
    /// The class named `name`.
    pub fn of(name: &str) -> Self {
        let kind = kernel::classify_unnumbered(name).kind;
        let syscall = match kind {
            Kind::SyscallEntry(_) => kernel::syscall_name(name).unwrap_or_default().into(),
            _ => CompactString::default(),
        };
        let function = match kind {
            Kind::Other => name
                .strip_suffix("_entry")
                .map(|f| (f, false))
                .or_else(|| name.strip_suffix("_exit").map(|f| (f, true)))
                .filter(|(f, _)| !f.is_empty())
                .map(|(f, ret)| (Arc::from(f), ret)),
            _ => None,
        };
        let mut class = ClassKind {
            kind,
            syscall,
            read: false,
            function,
        };
        // Read when `input_of_class` makes an input of it, given every field.
        class.read = input_of_class(&class, 0, |_| Some(0), |_| CompactString::default()).is_some();
        class
    }

    /// Whether a tracker reads events of the class.
    pub(crate) fn is_read(&self) -> bool {
        self.read
    }
}

/// Per event class: the payload position of each [`Field`] (by discriminant), found once.
type ClassFields = [Option<u16>; Field::ALL.len()];

fn class_fields(ev: &ctf::Event<'_>) -> ClassFields {
    let layout = &ev.trace().layout;
    let class = ev.class_layout();
    Field::ALL.map(|f| {
        class
            .payload_index(layout, f.name())
            .and_then(|i| u16::try_from(i).ok())
    })
}

/// The tracker input of an event of `class` on `cpu`, its payload fields read through `int`
/// and `text`: shared by the offline reader and by live sources.
#[inline]
pub fn input_of_class(
    class: &ClassKind,
    cpu: u32,
    int: impl Fn(Field) -> Option<i64>,
    text: impl Fn(Field) -> CompactString,
) -> Option<Input> {
    use Field as F;
    let i = &int;
    let u = |f| int(f).map(|v| v as u64);
    let s = &text;
    Some(match class.kind {
        Kind::SchedSwitch => Input::Switch {
            cpu,
            prev_tid: i(F::PrevTid)? as i32,
            prev_comm: s(F::PrevComm),
            prev_state: i(F::PrevState).unwrap_or(0),
            next_tid: i(F::NextTid)? as i32,
            next_comm: s(F::NextComm),
        },
        Kind::SchedWaking | Kind::SchedWakeup | Kind::SchedWakeupNew => Input::Waking {
            cpu,
            tid: i(F::Tid)? as i32,
            comm: s(F::Comm),
        },
        Kind::BlockRqIssue => Input::BlockIssue {
            dev: u(F::Dev)?,
            sector: u(F::Sector)?,
            nr_sector: u(F::NrSector).unwrap_or(0),
            tid: i(F::Tid).map(|t| t as i32),
        },
        Kind::BlockRqComplete => Input::BlockComplete {
            dev: u(F::Dev)?,
            sector: u(F::Sector)?,
        },
        Kind::IrqHandlerEntry => Input::IrqEntry {
            cpu,
            irq: i(F::Irq)?,
            name: s(F::Name),
        },
        Kind::IrqHandlerExit => Input::IrqExit {
            cpu,
            irq: i(F::Irq)?,
        },
        Kind::SoftirqRaise => Input::SoftIrqRaise {
            cpu,
            vec: u(F::Vec)?,
        },
        Kind::SoftirqEntry => Input::SoftIrqEntry {
            cpu,
            vec: u(F::Vec)?,
        },
        Kind::SyscallEntry(_) => Input::SyscallEntry {
            cpu,
            name: class.syscall.clone(),
        },
        // Named (`syscall_exit_*`) or not (`exit_syscall`).
        Kind::SyscallExit(_) => Input::SyscallExit {
            cpu,
            ret: i(F::Ret).unwrap_or(0),
        },
        _ => match &class.function {
            Some((name, false)) => Input::FunctionEntry {
                cpu,
                name: name.clone(),
            },
            Some((name, true)) => Input::FunctionExit {
                cpu,
                name: name.clone(),
            },
            None => return None,
        },
    })
}

/// What [`LatencySink`] knows of an event class.
#[derive(Debug, Clone)]
struct SinkClass {
    kind: ClassKind,
    fields: ClassFields,
}

/// The trackers as a [`Sink`]: fed time-ordered events by a [`pipeline::Source`], they call
/// `on_report` for each report; [`LatencySink::summary`] gives the summary at the end. The
/// CPU of an event is its stream's `cpu_id` (else the stream index). The first error of
/// `on_report` stops the read.
pub struct LatencySink<F, E> {
    lat: Latency,
    on_report: F,
    error: Option<E>,
    /// The CPU of each stream.
    cpus: kernel::StreamCpus,
    /// Per trace, per stream class, per event class ([`ctf::Event::class_index`]).
    classes: Vec<Vec<Vec<Option<SinkClass>>>>,
    reports: Vec<Report>,
}

impl<F: FnMut(Report) -> Result<(), E>, E> LatencySink<F, E> {
    /// The trackers `trackers` with limits `config`, reporting to `on_report`.
    pub fn new(trackers: &[Tracker], config: Config, on_report: F) -> Self {
        LatencySink {
            lat: Latency::new(trackers, config),
            on_report,
            error: None,
            cpus: kernel::StreamCpus::default(),
            classes: Vec::new(),
            reports: Vec::new(),
        }
    }

    /// The summary of the events read so far (the read going on: a live display's).
    pub fn summary_now(&self) -> Summary {
        self.lat.finish()
    }

    /// The summary of the events read, or the error of `on_report` that stopped the read.
    pub fn summary(self) -> Result<Summary, E> {
        match self.error {
            Some(e) => Err(e),
            None => Ok(self.lat.finish()),
        }
    }

    /// The CPU of `ev`'s stream.
    #[inline]
    fn class_of(&mut self, ev: &ctf::Event<'_>) -> &SinkClass {
        let t = ev.trace().index;
        let (sc, ec) = ev.class_index();
        if self.classes.len() <= t {
            self.classes.resize_with(t + 1, Vec::new);
        }
        let v = &mut self.classes[t];
        if v.len() <= sc {
            v.resize_with(sc + 1, Vec::new);
        }
        let v = &mut v[sc];
        if v.len() <= ec {
            v.resize(ec + 1, None);
        }
        v[ec].get_or_insert_with(|| SinkClass {
            kind: ClassKind::of(ev.name()),
            fields: class_fields(ev),
        })
    }
}

// Every event is wanted (the default): each one advances the trackers' clock, which fires
// timeouts in the order of the events read.
impl<F: FnMut(Report) -> Result<(), E>, E> Sink for LatencySink<F, E> {
    #[inline]
    fn event(&mut self, ev: &ctf::Event<'_>, ts: i64) -> Flow {
        let cpu = self.cpus.of(ev);
        let function_on = self.lat.function_on;
        let class = self.class_of(ev);
        // Function probes cost nothing unless their tracker runs (names such as
        // x86_irq_vectors_*_entry are frequent in LTTng traces).
        let wanted = function_on || class.kind.function.is_none();
        let input = if wanted && class.kind.is_read() {
            let at = &class.fields;
            let payload = ev.payload();
            let pos = |f: Field| Some((payload.as_ref()?, at[f as usize]? as usize));
            input_of_class(
                &class.kind,
                cpu,
                // Straight from the layout for fixed-layout payloads (most kernel events).
                |f| pos(f).and_then(|(p, i)| p.int_member(i)).map(|v| v as i64),
                |f| text_of(pos(f).and_then(|(p, i)| p.member_at(i))),
            )
        } else {
            None
        };
        match input {
            Some(i) => self.lat.feed(ts, &i, &mut self.reports),
            None => self.lat.advance(ts, &mut self.reports),
        }
        for r in self.reports.drain(..) {
            if let Err(e) = (self.on_report)(r) {
                self.error = Some(e);
                return Flow::Stop;
            }
        }
        Flow::Continue
    }
}

/// Runs the trackers over time-ordered traces, calling `on_report` for each report; returns
/// the summary. The CPU of an event is its stream's `cpu_id` (else the stream index).
pub fn run_traces<E>(
    traces: &[Arc<ctf::Trace>],
    trackers: &[Tracker],
    config: Config,
    on_report: impl FnMut(Report) -> Result<(), E>,
) -> Result<Summary, E> {
    run_traces_mapped(traces, None, trackers, config, on_report)
}

/// [`run_traces`] with the events' times mapped by `time_map` (e.g. synchronized clocks):
/// a [`LatencySink`] fed every event of every stream by a [`FileSource`].
pub fn run_traces_mapped<E>(
    traces: &[Arc<ctf::Trace>],
    time_map: Option<Arc<dyn ctf::merge::TimeMap>>,
    trackers: &[Tracker],
    config: Config,
    on_report: impl FnMut(Report) -> Result<(), E>,
) -> Result<Summary, E> {
    let mut sink = LatencySink::new(trackers, config, on_report);
    let source = FileSource::new(
        traces.to_vec(),
        ReadOptions {
            // Every event of every stream.
            no_intersection: true,
            time_map,
            ..ReadOptions::default()
        },
    );
    source.run(&mut sink);
    sink.summary()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matcher_threshold_timeout_and_bound() {
        let mut m: Matcher<u32, &str> = Matcher::new(Config {
            threshold: 100,
            timeout: Some(1000),
            max_pending: 2,
        });
        let mut o = Vec::new();
        assert!(m.event_in(1, 0, "a", false));
        assert!(!m.event_in(1, 10, "b", false));
        assert!(m.event_in(2, 20, "c", false));
        assert!(!m.event_in(3, 30, "d", false));
        assert_eq!(m.counters.skipped, 1);
        assert_eq!(m.event_out(&2, 70, &mut o), Some(50));
        assert!(o.is_empty(), "under the threshold");
        m.advance(999, &mut o);
        assert!(o.is_empty());
        m.advance(1000, &mut o);
        assert_eq!(
            o,
            vec![Outcome::Timeout {
                key: 1,
                start: 0,
                now: 1000,
                payload: "a"
            }]
        );
        o.clear();
        m.advance(5000, &mut o);
        assert!(o.is_empty(), "a timeout fires once");
        assert_eq!(m.event_out(&1, 1500, &mut o), Some(1500));
        assert_eq!(
            o,
            vec![Outcome::Latency {
                key: 1,
                start: 0,
                end: 1500,
                payload: "a",
                timed_out: true
            }]
        );
        assert_eq!(m.event_out(&1, 1600, &mut o), None);
        assert_eq!(m.counters.unmatched_out, 1);
        assert_eq!(m.counters.matched, 2);
        assert_eq!(m.hist[5] + m.hist[10], 2);
    }

    #[test]
    fn replaced_entries_do_not_time_out_twice() {
        let mut m: Matcher<u32, ()> = Matcher::new(Config {
            threshold: 0,
            timeout: Some(100),
            max_pending: 10,
        });
        let mut o = Vec::new();
        m.event_in(1, 0, (), true);
        m.event_in(1, 50, (), true);
        m.advance(120, &mut o);
        assert!(o.is_empty(), "the first entry was replaced");
        m.advance(150, &mut o);
        assert_eq!(o.len(), 1);
    }

    #[test]
    fn function_entries_and_returns_pair_per_thread() {
        let mut l = Latency::new(
            &[Tracker::Function],
            Config {
                threshold: 0,
                timeout: None,
                max_pending: 100,
            },
        );
        let f = |n: &str| Arc::<str>::from(n);
        let sw = |cpu, p: i32, n: i32| Input::Switch {
            cpu,
            prev_tid: p,
            prev_comm: format!("t{p}").into(),
            prev_state: 1,
            next_tid: n,
            next_comm: format!("t{n}").into(),
        };
        let mut out = Vec::new();
        l.feed(0, &sw(0, 0, 5), &mut out);
        l.feed(
            100,
            &Input::FunctionEntry {
                cpu: 0,
                name: f("outer"),
            },
            &mut out,
        );
        l.feed(
            150,
            &Input::FunctionEntry {
                cpu: 0,
                name: f("inner"),
            },
            &mut out,
        );
        l.feed(
            180,
            &Input::FunctionExit {
                cpu: 0,
                name: f("inner"),
            },
            &mut out,
        );
        // Sleeps, and returns on the other CPU.
        l.feed(200, &sw(0, 5, 0), &mut out);
        l.feed(1_000, &sw(1, 0, 5), &mut out);
        l.feed(
            1_100,
            &Input::FunctionExit {
                cpu: 1,
                name: f("outer"),
            },
            &mut out,
        );
        // A return of a thread that did not enter: not a duration.
        l.feed(1_200, &sw(0, 0, 6), &mut out);
        l.feed(
            1_300,
            &Input::FunctionExit {
                cpu: 0,
                name: f("outer"),
            },
            &mut out,
        );
        let got: Vec<(Option<i32>, &str, i64)> = out
            .iter()
            .map(|r| (r.tid, r.detail.as_str(), r.latency))
            .collect();
        assert_eq!(got, vec![(Some(5), "inner", 30), (Some(5), "outer", 1_000)]);
        // Only events of no other kind named *_entry/*_exit are function probes.
        assert!(ClassKind::of("tk_slow_entry").is_read());
        assert!(ClassKind::of("tk_slow_exit").is_read());
        assert!(ClassKind::of("irq_handler_entry").function.is_none());
        assert!(ClassKind::of("syscall_exit_read").function.is_none());
    }

    #[test]
    fn classes_read_are_those_made_into_inputs() {
        for name in [
            "sched_switch",
            "sched_waking",
            "sched_wakeup",
            "sched_wakeup_new",
            "block_rq_issue",
            "block_rq_complete",
            "irq_handler_entry",
            "irq_handler_exit",
            "irq_softirq_raise",
            "irq_softirq_entry",
            "syscall_entry_read",
            "syscall_exit_read",
            "exit_syscall",
        ] {
            assert!(ClassKind::of(name).is_read(), "{name}");
        }
        for name in [
            "sched_process_fork",
            "irq_softirq_exit",
            "kmem_mm_page_alloc",
            "x",
        ] {
            assert!(!ClassKind::of(name).is_read(), "{name}");
        }
    }

    #[test]
    fn wakeup_and_offcpu() {
        let mut l = Latency::new(
            &[Tracker::Wakeup, Tracker::Offcpu],
            Config {
                threshold: 0,
                timeout: None,
                max_pending: 100,
            },
        );
        let mut out = Vec::new();
        let sw = |cpu, p: i32, st, n: i32| Input::Switch {
            cpu,
            prev_tid: p,
            prev_comm: format!("t{p}").into(),
            prev_state: st,
            next_tid: n,
            next_comm: format!("t{n}").into(),
        };
        l.feed(0, &sw(0, 0, 0, 10), &mut out);
        l.feed(100, &sw(0, 10, 1, 20), &mut out);
        l.feed(
            300,
            &Input::Waking {
                cpu: 0,
                tid: 10,
                comm: "t10".into(),
            },
            &mut out,
        );
        l.feed(800, &sw(0, 20, 0, 10), &mut out);
        let w: Vec<_> = out
            .iter()
            .filter(|r| r.tracker == Tracker::Wakeup)
            .collect();
        assert_eq!(w.len(), 1);
        assert_eq!(w[0].latency, 500);
        assert_eq!(w[0].waker, Some((20, "t20".into())));
        let off: Vec<_> = out
            .iter()
            .filter(|r| r.tracker == Tracker::Offcpu)
            .collect();
        assert_eq!(off.len(), 1);
        assert_eq!((off[0].tid, off[0].latency), (Some(10), 700));
        assert_eq!(off[0].waker, Some((20, "t20".into())));
    }
}
