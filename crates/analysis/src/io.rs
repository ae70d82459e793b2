//! `iolatencystats` / `iolatencyfreq`: latencies of I/O system calls by category, and of disk
//! (partition) requests.

use std::collections::BTreeMap;

use kernel::{Facet, Interest, Model, NoteKind, Notification, State};

use crate::driver::{Analysis, Common, Range};
use crate::lami::{cell, col, colu, Metadata, Table, TableClass};
use crate::stats::{freq_bounds, Stats, Uniform};

/// The LAMI metadata of the I/O analyses (iolatencystats, iolatencyfreq, iolatencytop, iolog,
/// iousagetop).
pub const METADATA: Metadata = Metadata {
    title: "I/O analysis",
    description: "System call/disk latency statistics, system call latency distribution, \
                  system call top latencies, I/O usage top, and I/O operations log",
    tags: &[
        "linux-kernel",
        "lttng-analyses",
        "io",
        "syscall",
        "stats",
        "freq",
        "log",
        "top",
    ],
    table_classes: &[
        TableClass {
            name: "syscall-latency-stats",
            title: "System call latency statistics",
            columns: &[
                col("System call category", "string"),
                colu("Call count", "number", "calls"),
                col("Minimum call latency", "duration"),
                col("Average call latency", "duration"),
                col("Maximum call latency", "duration"),
                col("System call latency standard deviation", "duration"),
            ],
        },
        TableClass {
            name: "disk-latency-stats",
            title: "Partition latency statistics",
            columns: &[
                col("Partition", "disk"),
                colu("Access count", "number", "accesses"),
                col("Minimum access latency", "duration"),
                col("Average access latency", "duration"),
                col("Maximum access latency", "duration"),
                col("System access latency standard deviation", "duration"),
            ],
        },
        TableClass {
            name: "freq",
            title: "I/O request latency distribution",
            columns: &[
                col("Latency (lower bound)", "duration"),
                col("Latency (upper bound)", "duration"),
                colu("Request count", "number", "requests"),
            ],
        },
        TableClass {
            name: "top-syscall",
            title: "Top system call latencies",
            columns: SYSCALL_COLUMNS,
        },
        TableClass {
            name: "log",
            title: "I/O operations log",
            columns: SYSCALL_COLUMNS,
        },
        TableClass {
            name: "per-process-top",
            title: "Per-process top I/O operations",
            columns: &[
                col("Process", "process"),
                col("Total operations size", "size"),
                col("Disk operations size", "size"),
                col("Network operations size", "size"),
                col("Unknown operations size", "size"),
            ],
        },
        TableClass {
            name: "per-file-top",
            title: "Per-file top I/O operations",
            columns: &[
                col("File path", "path"),
                col("Operations size", "size"),
                col("File descriptor owners", "string"),
            ],
        },
        TableClass {
            name: "per-process-top-block",
            title: "Per-process top block I/O operations",
            columns: &[col("Process", "process"), col("Operations size", "size")],
        },
        TableClass {
            name: "per-disk-top-sector",
            title: "Per-disk top sector I/O operations",
            columns: &[
                col("Disk", "disk"),
                colu("Sector count", "number", "sectors"),
            ],
        },
        TableClass {
            name: "per-disk-top-request",
            title: "Per-disk top I/O operations",
            columns: &[
                col("Disk", "disk"),
                colu("Request count", "number", "I/O operations"),
            ],
        },
        TableClass {
            name: "per-disk-top-rps",
            title: "Per-disk top I/O request time",
            columns: &[col("Disk", "disk"), col("Request time", "duration")],
        },
        TableClass {
            name: "per-netif-top",
            title: "Per-network interface top I/O operations",
            columns: &[col("Network interface", "netif"), col("Total size", "size")],
        },
    ],
};

const SYSCALL_COLUMNS: &[crate::lami::Column] = &[
    col("Call time range", "time-range"),
    col("System call out of range", "bool"),
    col("Call duration", "duration"),
    col("System call", "syscall"),
    col("Read/write size", "size"),
    col("Process", "process"),
    col("File path", "path"),
    col("File descriptor", "fd"),
];

/// I/O system call categories.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Category {
    /// Calls that create file descriptors (`open`, `socket`, `dup`…).
    Open,
    /// Calls that read (`read`, `pread64`, `recvmsg`…).
    Read,
    /// Calls that write (`write`, `pwrite64`, `sendmsg`…).
    Write,
    /// Calls that flush to storage (`sync`, `fsync`…).
    Sync,
}

impl Category {
    pub(crate) const ALL: [Category; 4] = [
        Category::Open,
        Category::Read,
        Category::Write,
        Category::Sync,
    ];

    pub(crate) fn title(self) -> &'static str {
        match self {
            Category::Open => "Open",
            Category::Read => "Read",
            Category::Write => "Write",
            Category::Sync => "Sync",
        }
    }

    fn key(self) -> &'static str {
        match self {
            Category::Open => "open",
            Category::Read => "read",
            Category::Write => "write",
            Category::Sync => "sync",
        }
    }

    /// The category of system call `name` (with its `cmd` argument for fcntl). The sets are
    /// lttng-analyses's: `accept*`, `splice`, `sendmmsg`, `sendfile*`, `fcntl64` and
    /// `sync_file_range2` are not counted.
    pub fn of(name: &str, cmd: Option<i64>) -> Option<Category> {
        Some(match name {
            "open" | "openat" | "creat" | "socket" | "dup" | "dup2" | "dup3" => Category::Open,
            // F_DUPFD and F_DUPFD_CLOEXEC create descriptors.
            "fcntl" if matches!(cmd, Some(0) | Some(1030)) => Category::Open,
            "read" | "readv" | "pread64" | "preadv" | "recvfrom" | "recvmsg" => Category::Read,
            "write" | "writev" | "pwrite64" | "pwritev" | "sendto" | "sendmsg" => Category::Write,
            "sync" | "fsync" | "fdatasync" | "syncfs" | "sync_file_range" => Category::Sync,
            _ => return None,
        })
    }
}

/// Output of the I/O latency analysis.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum IoMode {
    Stats,
    Freq(usize),
}

/// The I/O latency analysis.
#[derive(Debug)]
pub(crate) struct IoLatency {
    common: Common,
    pub mode: IoMode,
    pub min: Option<i64>,
    pub max: Option<i64>,
    /// `--freq-uniform`: the same bins for every histogram.
    pub uniform: Option<Uniform>,
    /// `--freq-series`: the histograms as one table of series.
    pub series: bool,
    /// Per (system call name index, fcntl duplicating a descriptor).
    /// Ordered: categories merge their statistics in a fixed order, so that floating-point
    /// results do not depend on hashing.
    raw: BTreeMap<(u32, bool), (Stats, Vec<i64>)>,
    calls: BTreeMap<Category, (Stats, Vec<i64>)>,
    disks: BTreeMap<u64, (Stats, Vec<i64>)>,
    /// The disks in the order of their first request (lttng-analyses' order of the disk
    /// tables).
    disk_order: Vec<u64>,
}

impl IoLatency {
    pub fn new(common: Common, mode: IoMode) -> Self {
        IoLatency {
            common,
            mode,
            min: None,
            max: None,
            uniform: None,
            series: false,
            raw: BTreeMap::new(),
            calls: BTreeMap::new(),
            disks: BTreeMap::new(),
            disk_order: Vec::new(),
        }
    }

    fn ok(&self, d: i64) -> bool {
        self.min.is_none_or(|m| d >= m) && self.max.is_none_or(|m| d <= m)
    }
}

/// The name of a block device: from the statedump, else `MAJOR,MINOR`.
pub(crate) fn disk_name(state: &State, dev: u64) -> String {
    state
        .disks
        .get(&dev)
        .and_then(|d| d.name.clone())
        .unwrap_or_else(|| format!("{},{}", dev >> 20, dev & 0xfffff))
}

impl Analysis for IoLatency {
    fn interest(&self) -> Interest {
        // Only the calls `Category::of` counts, which all work on descriptors.
        Interest::of(&[NoteKind::FdSyscallDone, NoteKind::BlockDone])
            .reading(&[Facet::Threads, Facet::Disks])
    }

    fn notify(&mut self, state: &State, n: &Notification) {
        let keep = matches!(self.mode, IoMode::Freq(_));
        match *n {
            Notification::SyscallDone {
                tid,
                name,
                entry_ts,
                exit_ts,
                cmd,
                ..
            } => {
                let d = exit_ts - entry_ts;
                if !self.ok(d) || !self.common.thread_ok(state, tid) {
                    return;
                }
                let dupfd = matches!(cmd, Some(0) | Some(1030));
                let e = self.raw.entry((name, dupfd)).or_default();
                e.0.add(d);
                if keep {
                    e.1.push(d);
                }
            }
            Notification::BlockDone {
                disk,
                issue,
                complete,
                ..
            } => {
                let d = complete - issue;
                if !self.ok(d) {
                    return;
                }
                let order = &mut self.disk_order;
                let e = self.disks.entry(disk).or_insert_with(|| {
                    order.push(disk);
                    Default::default()
                });
                e.0.add(d);
                if keep {
                    e.1.push(d);
                }
            }
            _ => {}
        }
    }

    fn finish(&mut self, model: &Model, range: Range) -> Vec<Table> {
        let state = &model.state;
        for ((name, dupfd), (s, v)) in std::mem::take(&mut self.raw) {
            let cmd = dupfd.then_some(0);
            if let Some(c) = Category::of(model.resolver.syscalls.name(name), cmd) {
                let e = self.calls.entry(c).or_default();
                e.0.merge(&s);
                e.1.extend(v);
            }
        }
        let (b, e) = (range.begin, range.end);
        let sd = |s: &Stats| s.stdev().map(cell::duration).unwrap_or_else(cell::unknown);
        match self.mode {
            IoMode::Stats => {
                let mut t = Table::new("syscall-latency-stats", b, e);
                for c in Category::ALL {
                    let s = self.calls.get(&c).map(|x| x.0).unwrap_or_default();
                    t.rows.push(vec![
                        cell::string(c.title()),
                        cell::number(s.count),
                        cell::duration_int(s.min),
                        cell::duration(s.avg()),
                        cell::duration_int(s.max),
                        sd(&s),
                    ]);
                }
                let mut out = vec![t];
                // Partitions: whole disks that partitions are remapped to are left out.
                let parts: Vec<_> = self
                    .disk_order
                    .iter()
                    .filter(|d| !state.whole_disks.contains(d))
                    .map(|d| (d, &self.disks[d]))
                    .collect();
                if !parts.is_empty() {
                    let mut t = Table::new("disk-latency-stats", b, e);
                    for (dev, (s, _)) in parts {
                        t.rows.push(vec![
                            cell::disk(&disk_name(state, *dev)),
                            cell::number(s.count),
                            cell::duration_int(s.min),
                            cell::duration(s.avg()),
                            cell::duration_int(s.max),
                            sd(s),
                        ]);
                    }
                    out.push(t);
                }
                out
            }
            IoMode::Freq(bins) => {
                let mut groups: Vec<(String, &[i64])> = Vec::new();
                for (c, (_, v)) in &self.calls {
                    groups.push((c.key().to_string(), v));
                }
                for dev in &self.disk_order {
                    let v = &self.disks[dev].1;
                    if state.whole_disks.contains(dev) {
                        continue;
                    }
                    groups.push((format!("disk: {}", disk_name(state, *dev)), v));
                }
                let all: Vec<&[i64]> = groups.iter().map(|g| g.1).collect();
                let (lo, hi) = freq_bounds(&all, self.min, self.max, self.uniform.as_ref());
                let mut out = Vec::new();
                for (title, v) in groups {
                    let t = crate::lami::duration_freq_table(
                        format!("I/O request latency distribution [{title}]"),
                        v,
                        bins,
                        (lo, hi),
                        (b, e),
                    );
                    if !t.rows.is_empty() || self.series {
                        out.push(t);
                    }
                }
                if self.series {
                    // lttng-analyses accepts --freq-series here but ignores it: the table
                    // follows the other commands' (DIFFERENCES.md).
                    return crate::lami::series_table(
                        "I/O request latency distributions",
                        ("Latency (lower bound)", "Latency (upper bound)", "duration"),
                        "requests",
                        &out,
                    )
                    .into_iter()
                    .collect();
                }
                out
            }
        }
    }
}
