//! `schedlog` / `schedtop` / `schedstats` / `schedfreq`: wakeup → switch-in latencies.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap};

use compact_str::CompactString;
use kernel::{Facet, IntMap, Interest, Model, NoteKind, Notification, State};

use crate::driver::{Analysis, Common, Range};
use crate::lami::{cell, col, colu, Cell, Column, Metadata, Table, TableClass};
use crate::stats::{freq_bounds, prio_list, Stats, Uniform};

const RECORD_COLUMNS: &[Column] = &[
    col("Wakeup timestamp", "timestamp"),
    col("Switch timestamp", "timestamp"),
    col("Scheduling latency", "duration"),
    col("Priority", "number"),
    col("Target CPU", "cpu"),
    col("Wakee process", "process"),
    col("Waker process", "process"),
];

const STATS_COLUMNS: &[Column] = &[
    colu("Scheduling count", "number", "schedulings"),
    col("Minimum latency", "duration"),
    col("Average latency", "duration"),
    col("Maximum latency", "duration"),
    col("Scheduling latency standard deviation", "duration"),
];

/// The LAMI metadata of the scheduling analyses (schedlog, schedtop, schedstats, schedfreq).
pub const METADATA: Metadata = Metadata {
    title: "Scheduling latencies analysis",
    description: "Scheduling latencies frequency distribution, statistics, top, and log",
    tags: &[
        "linux-kernel",
        "lttng-analyses",
        "sched",
        "stats",
        "freq",
        "log",
        "top",
    ],
    table_classes: &[
        TableClass {
            name: "log",
            title: "Scheduling log",
            columns: RECORD_COLUMNS,
        },
        TableClass {
            name: "top",
            title: "Scheduling top",
            columns: RECORD_COLUMNS,
        },
        TableClass {
            name: "total_stats",
            title: "Scheduling latency stats (total)",
            columns: STATS_COLUMNS,
        },
        TableClass {
            name: "per_tid_stats",
            title: "Scheduling latency stats (per-TID)",
            columns: &[
                col("Wakee process", "process"),
                colu("Scheduling count", "number", "schedulings"),
                col("Minimum latency", "duration"),
                col("Average latency", "duration"),
                col("Maximum latency", "duration"),
                col("Scheduling latency standard deviation", "duration"),
                col("Chronological priorities", "string"),
            ],
        },
        TableClass {
            name: "per_prio_stats",
            title: "Scheduling latency stats (per-prio)",
            columns: &[
                col("Priority", "number"),
                colu("Scheduling count", "number", "schedulings"),
                col("Minimum latency", "duration"),
                col("Average latency", "duration"),
                col("Maximum latency", "duration"),
                col("Scheduling latency standard deviation", "duration"),
            ],
        },
        TableClass {
            name: "freq",
            title: "Scheduling latency frequency distribution",
            columns: &[
                col("Duration (lower bound)", "duration"),
                col("Duration (upper bound)", "duration"),
                colu("Scheduling count", "number", "schedulings"),
            ],
        },
    ],
};

/// Which tables to produce.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SchedMode {
    Log,
    Top,
    /// Per-thread histograms with this many bins.
    Freq(usize),
    /// Statistics: (total, per-TID, per-priority); none set means per-TID.
    Stats {
        total: bool,
        per_tid: bool,
        per_prio: bool,
    },
}

/// One scheduling (a wakeup followed by the switch-in).
#[derive(Debug, Clone)]
pub(crate) struct SchedRecord {
    pub wakeup: i64,
    pub switch: i64,
    pub prio: Option<i32>,
    pub cpu: u32,
    pub wakee: i32,
    pub waker: Option<i32>,
    /// Names at the time of the switch.
    pub wakee_name: CompactString,
    pub waker_name: CompactString,
}

/// The scheduling latency analysis.
#[derive(Debug)]
pub(crate) struct Sched {
    common: Common,
    pub mode: SchedMode,
    pub limit: usize,
    pub min: Option<i64>,
    pub max: Option<i64>,
    /// `--freq-uniform`: the same bins for every histogram.
    pub uniform: Option<Uniform>,
    /// `--freq-series`: the histograms as one table of series.
    pub series: bool,
    /// Every scheduling: only schedlog keeps them (its output lists them all). schedtop keeps
    /// the `limit` longest in `top`, schedstats streaming statistics, schedfreq the latencies.
    pub records: Vec<SchedRecord>,
    /// schedtop: the longest latencies so far, a min-heap on (latency, reversed arrival) of at
    /// most `limit` records (all of them when `limit` is 0).
    top: BinaryHeap<Reverse<(i64, Reverse<u64>, TopRec)>>,
    seq: u64,
    /// schedfreq: latencies per wakee.
    lats: BTreeMap<i32, Vec<i64>>,
    /// schedstats: all, per thread, per priority.
    total: Stats,
    /// Per thread, its position in `per_tid`.
    per_tid_at: IntMap<i32, u32>,
    /// The wakees and wakers of the schedulings, in first-seen order (lttng-analyses' order
    /// among equal names).
    per_tid: Vec<TidSched>,
    per_prio: BTreeMap<i32, Stats>,
    /// schedstats with `lttng_analyses_quirks`: each thread's name when it last switched in.
    /// lttng-analyses names threads from `next_comm` (not `prev_comm`), so a waker renamed
    /// while running (`prctl`) keeps its old name there until it runs again.
    switched_in: IntMap<i32, CompactString>,
}

/// schedstats' statistics of one thread, kept as lttng-analyses keeps them: from its first
/// scheduling as the wakee or the waker, under the name it had then.
#[derive(Debug)]
struct TidSched {
    tid: i32,
    comm: CompactString,
    /// Its schedulings as the wakee (none for a thread seen only waking others).
    stats: Stats,
    /// Its priority when first seen, then every change.
    prios: Vec<i32>,
}

/// A record in the schedtop heap (ordered by the heap key alone).
#[derive(Debug)]
struct TopRec(SchedRecord);

impl PartialEq for TopRec {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}
impl Eq for TopRec {}
impl PartialOrd for TopRec {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for TopRec {
    fn cmp(&self, _: &Self) -> std::cmp::Ordering {
        std::cmp::Ordering::Equal
    }
}

impl Sched {
    pub fn new(common: Common, mode: SchedMode) -> Self {
        Sched {
            common,
            mode,
            limit: 10,
            min: None,
            max: None,
            uniform: None,
            series: false,
            records: Vec::new(),
            top: BinaryHeap::new(),
            seq: 0,
            lats: BTreeMap::new(),
            total: Stats::default(),
            per_tid_at: IntMap::default(),
            per_tid: Vec::new(),
            per_prio: BTreeMap::new(),
            switched_in: IntMap::default(),
        }
    }

    /// The position in `per_tid` of thread `tid`, added (named as `state` names it now, with
    /// priority `prio`) if new.
    fn tid_at(&mut self, state: &State, tid: i32, prio: Option<i32>) -> usize {
        if let Some(&at) = self.per_tid_at.get(&tid) {
            return at as usize;
        }
        let comm = match self.switched_in.get(&tid) {
            Some(c) => c.clone(),
            None => comm(state, tid),
        };
        self.per_tid.push(TidSched {
            tid,
            comm,
            stats: Stats::default(),
            prios: prio.into_iter().collect(),
        });
        let at = self.per_tid.len() - 1;
        self.per_tid_at.insert(tid, at as u32);
        at
    }
}

fn comm(state: &State, tid: i32) -> CompactString {
    state
        .thread(tid)
        .map(|t| t.comm.clone())
        .unwrap_or_default()
}

/// A process cell: the name at the time of the record, the pid known at the end.
fn process_cell(state: &State, name: &str, tid: i32) -> Cell {
    cell::process(name, tid, state.thread(tid).and_then(|t| t.pid))
}

fn stats_cells(s: &Stats) -> Vec<Cell> {
    vec![
        cell::number(s.count),
        cell::duration_int(s.min),
        cell::duration(s.avg()),
        cell::duration_int(s.max),
        s.stdev().map(cell::duration).unwrap_or_else(cell::unknown),
    ]
}

fn record_row(state: &State, r: &SchedRecord) -> Vec<Cell> {
    vec![
        cell::timestamp(r.wakeup),
        cell::timestamp(r.switch),
        cell::duration_int(r.switch - r.wakeup),
        r.prio.map(cell::number).unwrap_or_else(cell::unknown),
        cell::cpu(r.cpu),
        process_cell(state, &r.wakee_name, r.wakee),
        r.waker
            .map(|w| process_cell(state, &r.waker_name, w))
            .unwrap_or(Cell::Null),
    ]
}

impl Analysis for Sched {
    fn interest(&self) -> Interest {
        // schedstats lists each thread's priority changes.
        let kinds: &[NoteKind] = match self.mode {
            SchedMode::Stats { .. } => &[NoteKind::SchedSwitch, NoteKind::PrioChanged],
            _ => &[NoteKind::SchedSwitch],
        };
        Interest::of(kinds).reading(&[Facet::Threads])
    }

    fn notify(&mut self, state: &State, n: &Notification) {
        if let Notification::SchedSwitch { next_tid, .. } = *n {
            if self.common.lttng_analyses_quirks && matches!(self.mode, SchedMode::Stats { .. }) {
                self.switched_in.insert(next_tid, comm(state, next_tid));
            }
        }
        let (ts, cpu, next_tid, next_prio_known, next_prio, wakeup, waker) = match *n {
            Notification::SchedSwitch {
                ts,
                cpu,
                next_tid,
                next_prio_known,
                next_prio,
                wakeup: Some((wakeup, waker)),
                ..
            } => (ts, cpu, next_tid, next_prio_known, next_prio, wakeup, waker),
            Notification::PrioChanged { tid, prio, .. } => {
                if let Some(&at) = self.per_tid_at.get(&tid) {
                    self.per_tid[at as usize].prios.push(prio);
                }
                return;
            }
            _ => return,
        };
        let lat = ts - wakeup;
        if !self.common.cpu_ok(cpu)
            || !self.common.thread_ok(state, next_tid)
            || self.min.is_some_and(|m| lat < m)
            || self.max.is_some_and(|m| lat > m)
        {
            return;
        }
        match self.mode {
            SchedMode::Freq(_) => {
                self.lats.entry(next_tid).or_default().push(lat);
                return;
            }
            SchedMode::Stats { .. } => {
                self.total.add(lat);
                // As lttng-analyses: the waker is listed from its first wakeup of a
                // scheduling, the wakee from its first scheduling with the priority this
                // switch gives it (the model notified the change before the switch, when it was unknown).
                if let Some(w) = waker.filter(|w| *w != 0 && !self.per_tid_at.contains_key(w)) {
                    let prio = state.thread(w).and_then(|t| t.prio);
                    self.tid_at(state, w, prio);
                }
                let at = self.tid_at(state, next_tid, next_prio.or(next_prio_known));
                self.per_tid[at].stats.add(lat);
                if let Some(p) = next_prio {
                    self.per_prio.entry(p).or_default().add(lat);
                }
                return;
            }
            SchedMode::Log | SchedMode::Top => {}
        }
        let r = SchedRecord {
            wakeup,
            switch: ts,
            prio: next_prio,
            cpu,
            wakee: next_tid,
            waker: waker.filter(|w| *w != 0),
            wakee_name: comm(state, next_tid),
            waker_name: waker.map(|w| comm(state, w)).unwrap_or_default(),
        };
        if self.mode == SchedMode::Log {
            self.records.push(r);
            return;
        }
        // Ties: the earlier record ranks higher (its reversed arrival is larger).
        self.seq += 1;
        let key = (lat, Reverse(self.seq));
        if self.limit > 0 && self.top.len() >= self.limit {
            match self.top.peek() {
                Some(Reverse(min)) if (min.0, min.1) < key => {
                    self.top.pop();
                }
                _ => return,
            }
        }
        self.top.push(Reverse((key.0, key.1, TopRec(r))));
    }

    fn finish(&mut self, model: &Model, range: Range) -> Vec<Table> {
        let state = &model.state;
        let (b, e) = (range.begin, range.end);
        let empty = match self.mode {
            SchedMode::Log => self.records.is_empty(),
            SchedMode::Top => self.top.is_empty(),
            SchedMode::Freq(_) => self.lats.is_empty(),
            SchedMode::Stats { .. } => self.total.count == 0,
        };
        if empty {
            return Vec::new();
        }

        match self.mode {
            SchedMode::Log => {
                let mut t = Table::new("log", b, e);
                t.rows = self.records.iter().map(|r| record_row(state, r)).collect();
                vec![t]
            }
            SchedMode::Freq(bins) => {
                let m = &self.lats;
                let all: Vec<&[i64]> = m.values().map(|v| v.as_slice()).collect();
                let (lo, hi) = freq_bounds(&all, self.min, self.max, self.uniform.as_ref());
                let mut out = Vec::new();
                for (tid, lats) in m {
                    let t = crate::lami::duration_freq_table(
                        format!("Scheduling latency frequency distribution [TID: {tid}]"),
                        lats,
                        bins,
                        (lo, hi),
                        (b, e),
                    );
                    if !t.rows.is_empty() || self.series {
                        out.push(t);
                    }
                }
                if self.series {
                    return crate::lami::series_table(
                        "Scheduling latencies frequency distributions",
                        crate::irq::FREQ_BOUNDS,
                        "schedulings",
                        &out,
                    )
                    .into_iter()
                    .collect();
                }
                out
            }
            SchedMode::Top => {
                let mut v: Vec<(i64, Reverse<u64>, &SchedRecord)> = self
                    .top
                    .iter()
                    .map(|Reverse((l, s, r))| (*l, *s, &r.0))
                    .collect();
                v.sort_by_key(|x| Reverse((x.0, x.1)));
                let v: Vec<&SchedRecord> = v.into_iter().map(|x| x.2).collect();
                let mut t = Table::new("top", b, e);
                t.rows = v.into_iter().map(|r| record_row(state, r)).collect();
                vec![t]
            }
            SchedMode::Stats {
                total,
                per_tid,
                per_prio,
            } => {
                let per_tid = per_tid || !(total || per_prio);
                let mut out = Vec::new();
                if total {
                    let mut t = Table::new("total_stats", b, e);
                    t.rows.push(stats_cells(&self.total));
                    out.push(t);
                }
                if per_tid {
                    let mut t = Table::new("per_tid_stats", b, e);
                    // lttng-analyses' order: by lower-case name, a stable sort (equal names
                    // in first-seen order).
                    let mut v: Vec<&TidSched> =
                        self.per_tid.iter().filter(|x| x.stats.count > 0).collect();
                    v.sort_by_cached_key(|x| x.comm.to_lowercase());
                    for x in v {
                        let mut row = vec![cell::process(&x.comm, x.tid, None)];
                        row.extend(stats_cells(&x.stats));
                        row.push(cell::string(prio_list(&x.prios)));
                        t.rows.push(row);
                    }
                    out.push(t);
                }
                if per_prio {
                    let mut t = Table::new("per_prio_stats", b, e);
                    for (p, s) in &self.per_prio {
                        let mut row = vec![cell::number(*p)];
                        row.extend(stats_cells(s));
                        t.rows.push(row);
                    }
                    out.push(t);
                }
                out
            }
        }
    }
}
