//! `syscallstats`: per-thread system call counts, durations and return values.

use compact_str::CompactString;
use kernel::{Facet, IntMap, Interest, Model, NoteKind, Notification, State};
use smallvec::SmallVec;

use crate::driver::{Analysis, Common, Range};
use crate::lami::{cell, col, colu, Metadata, Table, TableClass};
use crate::stats::Stats;

/// The LAMI metadata of syscallstats.
pub const METADATA: Metadata = Metadata {
    title: "System call statistics",
    description: "Per-TID and global system call statistics",
    tags: &["linux-kernel", "lttng-analyses", "syscall", "stats"],
    table_classes: &[
        TableClass {
            name: "per-tid",
            title: "System call statistics",
            columns: &[
                col("System call", "syscall"),
                colu("Call count", "number", "calls"),
                col("Minimum call duration", "duration"),
                col("Average call duration", "duration"),
                col("Maximum call duration", "duration"),
                col("Call duration standard deviation", "duration"),
                col("Return values count", "string"),
            ],
        },
        TableClass {
            name: "total",
            title: "Per-TID system call statistics",
            columns: &[
                col("Process", "process"),
                colu("Total system call count", "number", "calls"),
            ],
        },
        TableClass {
            name: "summary",
            title: "System call statistics - summary",
            columns: &[
                col("Time range", "time-range"),
                col("Process", "process"),
                colu("Total system call count", "number", "calls"),
            ],
        },
    ],
};

#[derive(Debug, Default)]
struct CallStats {
    /// The position of the call's first exit among the thread's calls (lttng-analyses' order
    /// among equal counts).
    first: u32,
    stats: Stats,
    /// Return value counts by [`ret_key`], in order of first appearance: usually success and
    /// at most one error, kept inline (a heap vector would be an allocation per thread and call).
    rets: SmallVec<[(i64, u64); 2]>,
}

#[derive(Debug, Default)]
struct TidCalls {
    /// The position of the thread's first system call among the threads (lttng-analyses'
    /// order among equal totals).
    first: u32,
    /// The command name at the thread's first system call.
    comm: CompactString,
    total: u64,
    calls: IntMap<u32, CallStats>,
}

/// The syscallstats analysis.
#[derive(Debug)]
pub(crate) struct SyscallStats {
    common: Common,
    tids: IntMap<i32, TidCalls>,
}

/// The class of a return value counted apart: 0 for every success (`ret >= 0`), else the
/// (negative) error. Named only in the output ([`push_ret_name`]), so that counting a call
/// allocates nothing.
fn ret_key(ret: i64) -> i64 {
    ret.min(0)
}

/// Appends the name of a [`ret_key`] to `out`: `success`, the errno name, or the number.
fn push_ret_name(out: &mut String, key: i64) {
    match (key, crate::errno_name(key.wrapping_neg())) {
        (0.., _) => out.push_str("success"),
        (_, Some(name)) => out.push_str(name),
        (_, None) => out.push_str(itoa::Buffer::new().format(key)),
    }
}

impl SyscallStats {
    pub fn new(common: Common) -> Self {
        SyscallStats {
            common,
            tids: IntMap::default(),
        }
    }
}

impl Analysis for SyscallStats {
    fn interest(&self) -> Interest {
        Interest::of(&[NoteKind::SyscallDone]).reading(&[Facet::Threads])
    }

    fn notify(&mut self, state: &State, n: &Notification) {
        let Notification::SyscallDone {
            tid,
            name,
            entry_ts,
            exit_ts,
            ret,
            ..
        } = *n
        else {
            return;
        };
        if !self.common.thread_ok(state, tid) {
            return;
        }
        let first = self.tids.len() as u32;
        let t = self.tids.entry(tid).or_insert_with(|| TidCalls {
            first,
            comm: state
                .thread(tid)
                .map(|t| t.comm.clone())
                .unwrap_or_default(),
            ..Default::default()
        });
        t.total += 1;
        let first = t.calls.len() as u32;
        let c = t.calls.entry(name).or_insert_with(|| CallStats {
            first,
            ..Default::default()
        });
        c.stats.add(exit_ts - entry_ts);
        let k = ret_key(ret);
        match c.rets.iter_mut().find(|(n, _)| *n == k) {
            Some((_, v)) => *v += 1,
            None => c.rets.push((k, 1)),
        }
    }

    fn finish(&mut self, model: &Model, range: Range) -> Vec<Table> {
        let state = &model.state;
        if self.tids.is_empty() {
            return Vec::new();
        }
        let mut tids: Vec<(&i32, &TidCalls)> = self.tids.iter().collect();
        // lttng-analyses' order: most calls first, equal totals in first-call order (unique:
        // an unstable sort orders alike).
        tids.sort_unstable_by_key(|(_, tc)| (std::cmp::Reverse(tc.total), tc.first));
        let mut out = Vec::new();
        let mut total = Table::new("total", range.begin, range.end);
        // Each row's return-value counts are written here, then copied into a cell of their
        // exact size (a string of its own per row would be sized by a guess, then shrunk).
        let mut rets = String::with_capacity(64);
        for (&tid, tc) in tids {
            let th = state.thread(tid);
            let comm = tc.comm.as_str();
            let pid = th.and_then(|t| t.pid);
            let mut t = Table::new("per-tid", range.begin, range.end);
            // Built by hand: `format!`'s machinery costs far more, once per thread of the trace.
            let mut title = String::with_capacity(64 + comm.len());
            let mut num = itoa::Buffer::new();
            title.push_str("System call statistics [");
            title.push_str(comm);
            title.push_str(" (");
            title.push_str(pid.map_or("?", |p| num.format(p)));
            title.push_str(", TID: ");
            title.push_str(num.format(tid));
            title.push_str(")]");
            t.title = Some(title);
            let mut calls: Vec<(std::sync::Arc<str>, &CallStats)> = tc
                .calls
                .iter()
                .map(|(n, c)| (model.resolver.syscalls.shared(*n), c))
                .collect();
            // Most frequent first, equal counts in the order of their first exit.
            calls.sort_unstable_by_key(|(_, c)| (std::cmp::Reverse(c.stats.count), c.first));
            for (name, c) in calls {
                // `{'success': 3, 'ENOENT': 1}`.
                rets.clear();
                rets.push('{');
                for (i, (k, v)) in c.rets.iter().enumerate() {
                    if i > 0 {
                        rets.push_str(", ");
                    }
                    rets.push('\'');
                    push_ret_name(&mut rets, *k);
                    rets.push_str("': ");
                    rets.push_str(itoa::Buffer::new().format(*v));
                }
                rets.push('}');
                t.rows.push(vec![
                    cell::syscall_shared(name),
                    cell::number(c.stats.count),
                    cell::duration_int(c.stats.min),
                    cell::duration(c.stats.avg()),
                    cell::duration_int(c.stats.max),
                    // As lttng-analyses: no deviation below three calls.
                    match c.stats.stdev() {
                        Some(sd) if c.stats.count > 2 => cell::duration(sd),
                        _ => cell::unknown(),
                    },
                    cell::string(rets.as_str()),
                ]);
            }
            out.push(t);
            total
                .rows
                .push(vec![cell::process(comm, tid, pid), cell::number(tc.total)]);
        }
        out.push(total);
        out
    }
}
