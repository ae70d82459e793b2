//! `cputop`: per-thread, per-CPU and total CPU usage, from `sched_switch`.

use std::collections::{BTreeMap, HashMap};

use kernel::{IntMap, Interest, Model, NoteKind, Notification, State};

use crate::driver::{Analysis, Common, Range};
use crate::lami::{cell, col, colu, Metadata, Table, TableClass};

pub const METADATA: Metadata = Metadata {
    title: "Top CPU usage",
    description: "Per-TID, per-CPU, and total top CPU usage",
    tags: &["linux-kernel", "lttng-analyses", "cpu", "top"],
    table_classes: &[
        TableClass {
            name: "per-process",
            title: "Per-TID top CPU usage",
            columns: &[
                col("Process", "process"),
                colu("Migration count", "number", "migrations"),
                col("Chronological priorities", "string"),
                col("CPU usage", "ratio"),
            ],
        },
        TableClass {
            name: "per-cpu",
            title: "Per-CPU top CPU usage",
            columns: &[col("CPU", "cpu"), col("CPU usage", "ratio")],
        },
        TableClass {
            name: "total",
            title: "Total CPU usage",
            columns: &[col("CPU usage", "ratio")],
        },
        TableClass {
            name: "summary",
            title: "CPU usage - summary",
            columns: &[
                col("Time range", "time-range"),
                col("Total CPU usage", "ratio"),
            ],
        },
    ],
};

#[derive(Debug, Default)]
struct CpuStat {
    busy: i64,
    since: Option<i64>,
}

#[derive(Debug, Default)]
struct TidStat {
    /// The command name when the thread was first seen.
    comm: String,
    busy: i64,
    since: Option<i64>,
    migrations: u64,
    prios: Vec<i32>,
}

fn comm_of(state: &State, tid: i32) -> String {
    state
        .thread(tid)
        .map(|t| t.comm.clone())
        .unwrap_or_default()
}

/// The cputop analysis.
#[derive(Debug)]
pub struct CpuTop {
    common: Common,
    /// Rows of the per-thread table (0: all).
    pub limit: usize,
    start: Option<i64>,
    cpus: BTreeMap<u32, CpuStat>,
    tids: IntMap<i32, TidStat>,
}

impl CpuTop {
    pub fn new(common: Common, limit: usize) -> Self {
        CpuTop {
            common,
            limit,
            start: None,
            cpus: BTreeMap::new(),
            tids: IntMap::default(),
        }
    }

    /// CPU time (ns) of each thread, idle excluded, over the analysed range.
    pub fn busy_ns(&self) -> HashMap<i32, i64> {
        self.tids.iter().map(|(t, s)| (*t, s.busy)).collect()
    }
}

impl Analysis for CpuTop {
    fn interest(&self) -> Interest {
        Interest::of(&[
            NoteKind::SchedSwitch,
            NoteKind::PrioChanged,
            NoteKind::Migrate,
        ])
    }

    fn start(&mut self, ts: i64) {
        self.start = Some(ts);
    }

    fn notify(&mut self, state: &State, n: &Notification) {
        match *n {
            Notification::SchedSwitch {
                ts,
                cpu,
                prev_tid,
                next_tid,
                next_prio_known,
                ..
            } => {
                let start = *self.start.get_or_insert(ts);
                if !self.common.cpu_ok(cpu) {
                    return;
                }
                let c = self.cpus.entry(cpu).or_insert_with(|| CpuStat {
                    // The task running before the CPU's first switch ran since the start
                    // (lttng-analyses credits it even when it is the idle task).
                    since: (prev_tid != 0 || self.common.lttng_analyses_quirks).then_some(start),
                    ..Default::default()
                });
                if let Some(s) = c.since {
                    c.busy += ts - s;
                }
                c.since = (next_tid != 0).then_some(ts);

                match self.tids.get_mut(&prev_tid) {
                    Some(p) => {
                        if let Some(s) = p.since.take() {
                            p.busy += ts - s;
                        }
                    }
                    // First seen switching out: it ran since the start.
                    None if self.common.thread_ok(state, prev_tid) => {
                        self.tids.insert(
                            prev_tid,
                            TidStat {
                                comm: comm_of(state, prev_tid),
                                busy: ts - start,
                                ..Default::default()
                            },
                        );
                    }
                    None => {}
                }
                if !self.common.thread_ok(state, next_tid) {
                    return;
                }
                let nx = self.tids.entry(next_tid).or_insert_with(|| TidStat {
                    comm: comm_of(state, next_tid),
                    prios: next_prio_known.into_iter().collect(),
                    ..Default::default()
                });
                nx.since = Some(ts);
            }
            Notification::PrioChanged { tid, prio, .. } => {
                if let Some(t) = self.tids.get_mut(&tid) {
                    t.prios.push(prio);
                }
            }
            Notification::Migrate { tid, .. } => {
                if !self.tids.contains_key(&tid) && self.common.thread_ok(state, tid) {
                    let comm = comm_of(state, tid);
                    let prios = state.thread(tid).and_then(|t| t.prio).into_iter().collect();
                    self.tids.insert(
                        tid,
                        TidStat {
                            comm,
                            prios,
                            ..Default::default()
                        },
                    );
                }
                if let Some(t) = self.tids.get_mut(&tid) {
                    t.migrations += 1;
                }
            }
            _ => {}
        }
    }

    fn finish(&mut self, model: &Model, range: Range) -> Vec<Table> {
        let state = &model.state;
        let start = self.start.unwrap_or(range.begin);
        let end = range.end;
        let dur = (end - start) as f64;
        let ratio = |busy: i64| if dur > 0.0 { busy as f64 / dur } else { 0.0 };
        let mut per_tid: Vec<(i32, f64, &TidStat)> = self
            .tids
            .iter_mut()
            .map(|(tid, s)| {
                if let Some(b) = s.since.take() {
                    s.busy += end - b;
                }
                (*tid, s)
            })
            .filter(|(tid, _)| *tid != 0)
            .map(|(tid, s)| (tid, ratio(s.busy), &*s))
            .collect();
        per_tid.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        if self.limit > 0 {
            per_tid.truncate(self.limit);
        }
        let mut t1 = Table::new("per-process", start, end);
        for (tid, r, s) in per_tid {
            let comm = &s.comm;
            let prios = s
                .prios
                .iter()
                .map(|p| p.to_string())
                .collect::<Vec<_>>()
                .join(", ");
            t1.rows.push(vec![
                cell::process(comm, tid, None),
                cell::number(s.migrations),
                cell::string(format!("[{prios}]")),
                cell::ratio(r),
            ]);
        }
        let mut t2 = Table::new("per-cpu", start, end);
        let mut sum = 0.0;
        for (cpu, c) in self.cpus.iter_mut() {
            if let Some(b) = c.since.take() {
                c.busy += end - b;
            }
            let r = ratio(c.busy);
            sum += r;
            t2.rows.push(vec![cell::cpu(*cpu), cell::ratio(r)]);
        }
        let ncpus = state
            .known_cpus()
            .filter(|c| self.common.cpu_ok(c.id))
            .count()
            .max(1);
        let mut t3 = Table::new("total", start, end);
        t3.rows.push(vec![cell::ratio(sum / ncpus as f64)]);
        vec![t1, t2, t3]
    }
}
