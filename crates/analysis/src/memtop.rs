//! `memtop`: pages allocated and freed per thread.

use compact_str::CompactString;
use kernel::{Facet, IntMap, Interest, Model, NoteKind, Notification, State};

use crate::driver::{Analysis, Common, Range};
use crate::lami::{cell, col, colu, Metadata, Table, TableClass};
use crate::stats::top_rows;

/// The LAMI metadata of memtop.
pub const METADATA: Metadata = Metadata {
    title: "Top memory usage",
    description: "Per-TID top allocated/freed memory",
    tags: &["linux-kernel", "lttng-analyses", "memory", "top"],
    table_classes: &[
        TableClass {
            name: "allocd",
            title: "Per-TID top allocated memory",
            columns: &[
                col("Process", "process"),
                colu("Allocated pages", "number", "pages"),
            ],
        },
        TableClass {
            name: "freed",
            title: "Per-TID top freed memory",
            columns: &[
                col("Process", "process"),
                colu("Freed pages", "number", "pages"),
            ],
        },
        TableClass {
            name: "total",
            title: "Total allocated/freed memory",
            columns: &[
                colu("Total allocated pages", "number", "pages"),
                colu("Total freed pages", "number", "pages"),
            ],
        },
        TableClass {
            name: "summary",
            title: "Memory usage - summary",
            columns: &[
                col("Time range", "time-range"),
                colu("Total allocated pages", "number", "pages"),
                colu("Total freed pages", "number", "pages"),
            ],
        },
    ],
};

#[derive(Debug, Default)]
struct TidMem {
    comm: CompactString,
    allocd: u64,
    freed: u64,
}

/// The memtop analysis.
#[derive(Debug)]
pub(crate) struct MemTop {
    common: Common,
    pub limit: usize,
    /// Per thread, its position in `threads`.
    tids: IntMap<i32, u32>,
    /// The threads that allocated or freed pages, in first-seen order (lttng-analyses' order
    /// among equal counts).
    threads: Vec<(i32, TidMem)>,
    /// With `lttng_analyses_quirks`: allocations less frees of the whole system, as
    /// lttng-analyses counts them, to drop the frees it drops (those made when it is 0).
    balance: u64,
    allocd: u64,
    freed: u64,
}

impl MemTop {
    pub fn new(common: Common, limit: usize) -> Self {
        MemTop {
            common,
            limit,
            tids: IntMap::default(),
            threads: Vec::new(),
            balance: 0,
            allocd: 0,
            freed: 0,
        }
    }
}

impl Analysis for MemTop {
    fn interest(&self) -> Interest {
        Interest::of(&[NoteKind::Page]).reading(&[Facet::Threads])
    }

    fn notify(&mut self, state: &State, n: &Notification) {
        let Notification::Page {
            cpu, tid, alloc, ..
        } = *n
        else {
            return;
        };
        if self.common.lttng_analyses_quirks {
            if alloc {
                self.balance += 1;
            } else if self.balance == 0 {
                return;
            } else {
                self.balance -= 1;
            }
        }
        if !self.common.cpu_ok(cpu) {
            return;
        }
        // Pages are counted when a thread (not the idle task) is known to run, as
        // lttng-analyses does.
        let Some(tid) = tid.filter(|t| *t != 0) else {
            return;
        };
        if !self.common.thread_ok(state, tid) {
            return;
        }
        let threads = &mut self.threads;
        let at = *self.tids.entry(tid).or_insert_with(|| {
            threads.push((
                tid,
                TidMem {
                    comm: state
                        .thread(tid)
                        .map(|t| t.comm.clone())
                        .unwrap_or_default(),
                    ..Default::default()
                },
            ));
            threads.len() as u32 - 1
        });
        let t = &mut self.threads[at as usize].1;
        if alloc {
            t.allocd += 1;
            self.allocd += 1;
        } else {
            t.freed += 1;
            self.freed += 1;
        }
    }

    fn carried(&self) -> u64 {
        self.balance
    }

    fn inherit(&mut self, carried: u64) {
        self.balance = carried;
    }

    fn finish(&mut self, _model: &Model, range: Range) -> Vec<Table> {
        let mut out = Vec::new();
        for (class, alloc) in [("allocd", true), ("freed", false)] {
            // lttng-analyses' order: a stable sort of every thread that allocated or freed
            // pages (those with none of this kind included), most first.
            let mut v: Vec<(usize, i32, &TidMem, u64)> = self
                .threads
                .iter()
                .enumerate()
                .map(|(i, (tid, t))| (i, *tid, t, if alloc { t.allocd } else { t.freed }))
                .collect();
            top_rows(&mut v, self.limit, |a, b| b.3.cmp(&a.3).then(a.0.cmp(&b.0)));
            if v.is_empty() {
                continue;
            }
            let mut t = Table::new(class, range.begin, range.end);
            for (_, tid, m, n) in v {
                t.rows
                    .push(vec![cell::process(&m.comm, tid, None), cell::number(n)]);
            }
            out.push(t);
        }
        let mut t = Table::new("total", range.begin, range.end);
        t.rows
            .push(vec![cell::number(self.allocd), cell::number(self.freed)]);
        out.push(t);
        out
    }
}
