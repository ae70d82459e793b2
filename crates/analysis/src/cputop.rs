//! `cputop`: per-thread, per-CPU and total CPU usage, from `sched_switch`.

use compact_str::CompactString;
use kernel::{CpuMap, Facet, IntMap, Interest, Model, NoteKind, Notification, State};
use smallvec::SmallVec;

use crate::driver::{Analysis, Common, Range};
use crate::lami::{cell, col, colu, Metadata, Table, TableClass};
use crate::stats::{prio_list, top_rows};

/// The LAMI metadata of cputop.
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
    /// The thread switched in last and its position in `CpuTop::threads`: the thread the next
    /// switch on this CPU usually switches out, found then without a hash lookup.
    running: Option<(i32, u32)>,
}

#[derive(Debug, Default)]
struct TidStat {
    /// The command name when the thread was first seen.
    comm: CompactString,
    busy: i64,
    since: Option<i64>,
    migrations: u64,
    /// Priorities seen, in order: usually one or two, so kept inline (a heap vector would be
    /// one allocation per thread).
    prios: SmallVec<[i32; 4]>,
}

fn comm_of(state: &State, tid: i32) -> CompactString {
    state
        .thread(tid)
        .map(|t| t.comm.clone())
        .unwrap_or_default()
}

/// The priorities of a thread first seen with priority `prio`. A push, not a collect: the
/// latter goes through `SmallVec`'s generic `extend`, several times the work.
fn prios_of(prio: Option<i32>) -> SmallVec<[i32; 4]> {
    let mut v = SmallVec::new();
    if let Some(p) = prio {
        v.push(p);
    }
    v
}

/// The cputop analysis.
#[derive(Debug)]
pub struct CpuTop {
    common: Common,
    /// Rows of the per-thread table (0: all).
    pub(crate) limit: usize,
    start: Option<i64>,
    /// By CPU id, the CPUs seen.
    cpus: CpuMap<CpuStat>,
    /// Per thread: its position in `threads`.
    tids: IntMap<i32, u32>,
    /// In first-seen order (lttng-analyses' order among equal usages).
    threads: Vec<(i32, TidStat)>,
}

impl CpuTop {
    /// A cputop analysis of the threads and CPUs `common` selects, its per-thread table
    /// limited to `limit` rows (0: all).
    pub fn new(common: Common, limit: usize) -> Self {
        CpuTop {
            common,
            limit,
            start: None,
            cpus: CpuMap::default(),
            tids: IntMap::default(),
            threads: Vec::new(),
        }
    }

    /// The position in `threads` of thread `tid`'s statistics, made by `make` if new.
    fn thread_at(&mut self, tid: i32, make: impl FnOnce() -> TidStat) -> u32 {
        let threads = &mut self.threads;
        *self.tids.entry(tid).or_insert_with(|| {
            threads.push((tid, make()));
            threads.len() as u32 - 1
        })
    }
}

impl Analysis for CpuTop {
    fn interest(&self) -> Interest {
        Interest::of(&[
            NoteKind::SchedSwitch,
            NoteKind::PrioChanged,
            NoteKind::Migrate,
        ])
        .reading(&[Facet::Threads])
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
                next_prio,
                ..
            } => {
                let start = *self.start.get_or_insert(ts);
                if !self.common.cpu_ok(cpu) {
                    return;
                }
                let new = || CpuStat {
                    // The task running before the CPU's first switch ran since the start
                    // (lttng-analyses credits it even when it is the idle task).
                    since: (prev_tid != 0 || self.common.lttng_analyses_quirks).then_some(start),
                    ..Default::default()
                };
                let c = self.cpus.get_or_insert_with(cpu, new);
                if let Some(s) = c.since {
                    c.busy += ts - s;
                }
                c.since = (next_tid != 0).then_some(ts);
                let ran = c.running.take();

                let prev_at = match ran {
                    Some((t, at)) if t == prev_tid => Some(at),
                    _ => self.tids.get(&prev_tid).copied(),
                };
                match prev_at {
                    Some(at) => {
                        let p = &mut self.threads[at as usize].1;
                        if let Some(s) = p.since.take() {
                            p.busy += ts - s;
                        }
                    }
                    // First seen switching out: it ran since the start.
                    None if self.common.thread_ok(state, prev_tid) => {
                        self.thread_at(prev_tid, || TidStat {
                            comm: comm_of(state, prev_tid),
                            busy: ts - start,
                            ..Default::default()
                        });
                    }
                    None => {}
                }
                // The idle task's time is no thread's usage.
                if next_tid == 0 || !self.common.thread_ok(state, next_tid) {
                    return;
                }
                // A thread first seen switching in starts with the priority this switch gives
                // it (the model notified the change before the switch, when it was unknown).
                let at = self.thread_at(next_tid, || TidStat {
                    comm: comm_of(state, next_tid),
                    prios: prios_of(next_prio.or(next_prio_known)),
                    ..Default::default()
                });
                self.threads[at as usize].1.since = Some(ts);
                // The CPU was found above; found again (no borrow is kept across the
                // thread lookups) only to note who runs.
                if let Some(c) = self.cpus.get_mut(cpu) {
                    c.running = Some((next_tid, at));
                }
            }
            Notification::PrioChanged { tid, prio, .. } => {
                if let Some(&at) = self.tids.get(&tid) {
                    self.threads[at as usize].1.prios.push(prio);
                }
            }
            Notification::Migrate { tid, .. } => {
                if !self.tids.contains_key(&tid) && self.common.thread_ok(state, tid) {
                    let comm = comm_of(state, tid);
                    let prios = prios_of(state.thread(tid).and_then(|t| t.prio));
                    self.thread_at(tid, || TidStat {
                        comm,
                        prios,
                        ..Default::default()
                    });
                }
                if let Some(&at) = self.tids.get(&tid) {
                    self.threads[at as usize].1.migrations += 1;
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
        // Ordered as lttng-analyses' stable sort on usage: most first, equal usages in the
        // order the threads were first seen (their position in `threads`).
        let mut per_tid: Vec<(usize, i32, f64, &TidStat)> = self
            .threads
            .iter_mut()
            .map(|(tid, s)| {
                if let Some(b) = s.since.take() {
                    s.busy += end - b;
                }
                (*tid, s)
            })
            .enumerate()
            // lttng-analyses lists the idle task (tid 0) with the time from the start to its
            // first switch out, on the CPU where that comes first.
            .filter(|(_, (tid, _))| *tid != 0 || self.common.lttng_analyses_quirks)
            .map(|(i, (tid, s))| (i, tid, ratio(s.busy), &*s))
            .collect();
        top_rows(&mut per_tid, self.limit, |a, b| {
            b.2.total_cmp(&a.2).then(a.0.cmp(&b.0))
        });
        let mut t1 = Table::new("per-process", start, end);
        for (_, tid, r, s) in per_tid {
            t1.rows.push(vec![
                cell::process(&s.comm, tid, None),
                cell::number(s.migrations),
                cell::string(prio_list(&s.prios)),
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
            t2.rows.push(vec![cell::cpu(cpu), cell::ratio(r)]);
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
