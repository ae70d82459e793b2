//! `iolatencytop`, `iolog` and `iousagetop`: I/O system calls with the file they used (from
//! the kernel state's descriptor tables), block requests and network traffic.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap};

use kernel::{
    Facet, FdOp, IntMap, Interest, IoDone, Model, NoteKind, Notification, OpenFile, State,
};

use crate::driver::{Analysis, Common, Range};
use crate::io::{disk_name, Category};
use crate::lami::{cell, Cell, Table};
use crate::stats::top_rows;

/// Output of the analysis.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IoTopMode {
    /// `iolatencytop`: the longest calls per category.
    LatencyTop,
    /// `iolog`: every call.
    Log,
    /// `iousagetop`: bytes per process, file, disk and interface.
    Usage,
}

/// Filters and limits.
#[derive(Debug, Clone, Copy, Default)]
pub struct IoFilter {
    /// Duration bounds, ns.
    pub min: Option<i64>,
    pub max: Option<i64>,
    /// Size bounds, bytes (calls without a size pass).
    pub minsize: Option<i64>,
    pub maxsize: Option<i64>,
}

/// What a descriptor refers to, for the disk / network / unknown split.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum FileKind {
    Disk,
    Net,
    Unknown,
}

/// Files opened by name are disks; created or accepted sockets are network; descriptors
/// listed by the statedump and pipes are unknown (as lttng-analyses classes them).
fn kind_of(f: &OpenFile) -> FileKind {
    match f.origin {
        FdOp::Open => FileKind::Disk,
        FdOp::Socket | FdOp::Accept => FileKind::Net,
        _ => FileKind::Unknown,
    }
}

#[derive(Debug, Default, Clone, Copy)]
struct Usage {
    total: u64,
    disk: u64,
    net: u64,
    unknown: u64,
}

impl Usage {
    // Sizes come from the trace: a damaged one can claim 2^63 bytes a call, and a sum must
    // stop at the largest count rather than wrap to a small one.
    fn add(&mut self, kind: FileKind, n: u64) {
        self.total = self.total.saturating_add(n);
        let by_kind = match kind {
            FileKind::Disk => &mut self.disk,
            FileKind::Net => &mut self.net,
            FileKind::Unknown => &mut self.unknown,
        };
        *by_kind = by_kind.saturating_add(n);
    }
}

#[derive(Debug, Default)]
struct FileUsage {
    read: u64,
    write: u64,
    /// (fd, pid, tid) of each process that used it, in first-use order, with the thread that
    /// first did (whose name stands for the process when its main thread's is unknown):
    /// usually one, kept inline (a file per thread of `many-threads` made this a heap list
    /// each).
    owners: smallvec::SmallVec<[(i64, i32, i32); 1]>,
    /// Where the file comes in lttng-analyses' list of files, which orders equal rows: its
    /// processes in the order the I/O tracking met them, each one's descriptor numbers in
    /// the order they were first opened, each number's files in the order they were opened
    /// (the smallest of its uses').
    rank: (u32, u32, u32),
}

#[derive(Debug, Default, Clone, Copy)]
struct DiskUsage {
    /// The position of the disk's first completed request among the disks.
    first: u32,
    sectors: u64,
    requests: u64,
    latency: i64,
}

/// What iousagetop needs of a read or write: calls with the same key add up (their sizes),
/// so it keeps one counter per thread, descriptor and file instead of every call. The file
/// (and the thread's name) are only looked up at the end, as before: a later statedump may
/// tell the file of a descriptor unknown when it was used.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct UsageKey {
    tid: i32,
    pid: i32,
    fd: i64,
    file: Option<u32>,
    read: bool,
}

/// An iolatencytop candidate, ordered best first: longest, then as lttng-analyses lists the
/// calls before its stable sort (by thread in the order its I/O tracking met them
/// ([`IoTop::met`]), each thread's in the order they ended).
#[derive(Debug)]
struct TopCall {
    key: (Reverse<i64>, u32, u64),
    call: IoDone,
}

impl PartialEq for TopCall {
    fn eq(&self, o: &Self) -> bool {
        self.key == o.key
    }
}
impl Eq for TopCall {}
impl PartialOrd for TopCall {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for TopCall {
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        self.key.cmp(&o.key)
    }
}

/// The I/O analysis of calls with their files.
#[derive(Debug)]
pub struct IoTop {
    common: Common,
    pub mode: IoTopMode,
    pub limit: usize,
    pub filter: IoFilter,
    /// iolog: every call (its output lists them all).
    calls: Vec<IoDone>,
    /// iolatencytop: per (system call name, whether a fcntl), the best calls so far, a
    /// max-heap (worst on top) of at most `limit` + 1 (the rows of a table). A category is a
    /// set of such keys, so its best calls are among theirs.
    top: IntMap<u64, BinaryHeap<TopCall>>,
    seq: u64,
    /// iousagetop: bytes per [`UsageKey`].
    usage_calls: IntMap<UsageKey, i64>,
    /// Per thread: (read, written).
    procs: IntMap<i32, (Usage, Usage)>,
    /// Per displayed file name.
    files: IntMap<String, FileUsage>,
    /// Per thread: block bytes (read, written).
    block: IntMap<i32, (u64, u64)>,
    disks: BTreeMap<u64, DiskUsage>,
    /// Per interface: (received, sent).
    netifs: BTreeMap<u32, (u64, u64)>,
    /// The threads and processes the I/O tracking met, by when it first did: the order of
    /// lttng-analyses' `period_data.tids`, which orders the rows of equal value in every
    /// table (its sorts are stable) and lists the threads of the per-process tables.
    met: IntMap<i32, u32>,
}

impl IoTop {
    pub fn new(common: Common, mode: IoTopMode) -> Self {
        IoTop {
            common,
            mode,
            limit: 10,
            filter: IoFilter::default(),
            calls: Vec::new(),
            top: IntMap::default(),
            seq: 0,
            usage_calls: IntMap::default(),
            procs: IntMap::default(),
            files: IntMap::default(),
            block: IntMap::default(),
            disks: BTreeMap::new(),
            netifs: BTreeMap::new(),
            met: IntMap::default(),
        }
    }

    /// Notes that the I/O tracking met thread (or process) `tid`.
    fn meet(&mut self, tid: i32) {
        let next = self.met.len() as u32;
        self.met.entry(tid).or_insert(next);
    }

    /// Where `tid` comes in [`IoTop::met`] (those never met last).
    fn met_index(&self, tid: i32) -> u32 {
        self.met.get(&tid).copied().unwrap_or(u32::MAX)
    }

    /// lttng-analyses' I/O state meeting the threads of a completed call: the process first
    /// when the call made it a descriptor (a new one, or one used but not known), then the
    /// thread and its process.
    fn meet_call(&mut self, d: &IoDone) {
        let io_request = match d.op {
            FdOp::None | FdOp::Accept | FdOp::Pipe | FdOp::Connect | FdOp::Fcntl64 => false,
            FdOp::Fcntl => d.fd.is_some(),
            _ => true,
        };
        if !io_request {
            return;
        }
        let creates =
            matches!(d.op, FdOp::Open | FdOp::Socket | FdOp::Dup | FdOp::Fcntl) || d.file.is_none();
        if d.ret >= 0 && d.fd.is_some() && creates {
            self.meet(d.pid);
        }
        self.meet(d.tid);
        self.meet(d.pid);
    }

    fn passes(&self, d: &IoDone) -> bool {
        let dur = d.exit_ts - d.entry_ts;
        let f = &self.filter;
        f.min.is_none_or(|m| dur >= m)
            && f.max.is_none_or(|m| dur <= m)
            && d.size.is_none_or(|s| f.minsize.is_none_or(|m| s >= m))
            && d.size.is_none_or(|s| f.maxsize.is_none_or(|m| s <= m))
    }

    /// Adds `size` bytes read or written under `k` to the usage tables.
    fn usage(&mut self, state: &State, k: &UsageKey, size: i64, fd_first: Option<u32>) {
        let fd = k.fd;
        let comm = state.thread(k.tid).map_or("", |t| t.comm.as_str());
        let file = resolve_fd(state, k.file, k.tid, k.pid, Some(fd));
        let rank = (
            self.met_index(k.pid),
            fd_first.unwrap_or(u32::MAX),
            file.unwrap_or(u32::MAX),
        );
        let (kind, name) = match file {
            None => (FileKind::Unknown, format!("unknown ({comm})")),
            Some(f) => {
                let n = state.file_name(f);
                let k = kind_of(&state.files[f as usize]);
                if n.starts_with("socket") || n == "pipe" {
                    (k, format!("{n} ({comm})"))
                } else {
                    (k, n.to_string())
                }
            }
        };
        let read = k.read;
        let p = self.procs.entry(k.tid).or_default();
        if read {
            p.0.add(kind, size as u64);
        } else {
            p.1.add(kind, size as u64);
        }
        let f = self.files.entry(name).or_insert_with(|| FileUsage {
            rank,
            ..Default::default()
        });
        f.rank = f.rank.min(rank);
        if read {
            f.read = f.read.saturating_add(size as u64);
        } else {
            f.write = f.write.saturating_add(size as u64);
        }
        if !f.owners.iter().any(|&(d, p, _)| (d, p) == (fd, k.pid)) {
            f.owners.push((fd, k.pid, k.tid));
        }
    }

    fn row(&self, state: &State, d: &IoDone, names: &kernel::SyscallNames) -> Vec<Cell> {
        let comm = state.thread(d.tid).map_or("", |t| t.comm.as_str());
        let (path, fd) = match d.fd {
            None => (Cell::Null, Cell::Null),
            Some(fd) => (
                cell::path(resolve(state, d).map_or("unknown", |f| state.file_name(f))),
                cell::fd(fd),
            ),
        };
        vec![
            cell::time_range(d.entry_ts, d.exit_ts),
            cell::boolean(None),
            cell::duration_int(d.exit_ts - d.entry_ts),
            cell::syscall(names.name(d.name)),
            d.size.map_or(Cell::Null, cell::size),
            cell::process(comm, d.tid, None),
            path,
            fd,
        ]
    }
}

/// The file of a call: known when it ran, else the one a later statedump lists for its
/// descriptor (the statedump may come after the call, and may tell the thread's process).
/// Descriptors opened after the call are not taken: they are other files.
fn resolve(state: &State, d: &IoDone) -> Option<u32> {
    resolve_fd(state, d.file, d.tid, d.pid, d.fd)
}

/// [`resolve`] of a call's file (if known when it ran), thread, process and descriptor.
fn resolve_fd(
    state: &State,
    file: Option<u32>,
    tid: i32,
    pid: i32,
    fd: Option<i64>,
) -> Option<u32> {
    file.or_else(|| {
        let pid = state.thread(tid).and_then(|t| t.pid).unwrap_or(pid);
        let f = state.processes.get(&pid)?.fds.get(&fd?)?.file;
        (state.files.get(f as usize)?.origin == FdOp::None).then_some(f)
    })
}

/// Whether a call appears in the log: descriptor creation, use and close, and syncs.
fn logged(op: FdOp) -> bool {
    !matches!(op, FdOp::None | FdOp::Accept | FdOp::Pipe | FdOp::Connect)
}

impl Analysis for IoTop {
    fn interest(&self) -> Interest {
        Interest::of(&[
            NoteKind::Io,
            NoteKind::BlockDone,
            NoteKind::Net,
            NoteKind::Lifecycle,
        ])
        .reading(&[Facet::Threads, Facet::Fds, Facet::Disks, Facet::Netifs])
    }

    fn notify(&mut self, state: &State, n: &Notification) {
        if let Notification::BlockDone { tid: Some(tid), .. } = *n {
            self.meet(tid);
        }
        match *n {
            Notification::FdKnown { pid, .. } => self.meet(pid),
            Notification::ThreadKnown {
                tid,
                pid: Some(pid),
                ..
            } if pid != tid => {
                self.meet(tid);
                self.meet(pid);
            }
            // A fork copies the parent's descriptors to the child, one at a time.
            Notification::ThreadBirth {
                tid, parent_pid, ..
            } if state
                .processes
                .get(&parent_pid)
                .is_some_and(|p| !p.fds.is_empty()) =>
            {
                self.meet(tid)
            }
            Notification::Io(d) => {
                self.meet_call(&d);
                if !logged(d.op) || !self.common.thread_ok(state, d.tid) || !self.passes(&d) {
                    return;
                }
                match self.mode {
                    IoTopMode::Log => self.calls.push(d),
                    IoTopMode::LatencyTop => {
                        self.seq += 1;
                        let k = u64::from(d.name) << 1 | u64::from(d.op == FdOp::Fcntl);
                        let met = self.met_index(d.tid);
                        let heap = self.top.entry(k).or_default();
                        heap.push(TopCall {
                            key: (Reverse(d.exit_ts - d.entry_ts), met, self.seq),
                            call: d,
                        });
                        // `limit` 0: no limit (every call is a row).
                        if self.limit > 0 && heap.len() > self.limit.saturating_add(1) {
                            heap.pop();
                        }
                    }
                    IoTopMode::Usage => {
                        // Calls without a descriptor count nowhere.
                        if let (FdOp::Read | FdOp::Write, Some(fd)) = (d.op, d.fd) {
                            let k = UsageKey {
                                tid: d.tid,
                                pid: d.pid,
                                fd,
                                file: d.file,
                                read: d.op == FdOp::Read,
                            };
                            // Sizes add up modulo 2^64 as the u64 counters they go to.
                            let n = self.usage_calls.entry(k).or_default();
                            *n = n.wrapping_add(d.size.unwrap_or(0));
                        }
                    }
                }
            }
            Notification::BlockDone {
                disk,
                issue,
                complete,
                nr_sector,
                write,
                tid,
            } if self.mode == IoTopMode::Usage => {
                let first = self.disks.len() as u32;
                let e = self.disks.entry(disk).or_insert(DiskUsage {
                    first,
                    ..Default::default()
                });
                e.sectors += nr_sector;
                e.requests += 1;
                e.latency += complete - issue;
                if let Some(tid) = tid {
                    let b = self.block.entry(tid).or_default();
                    if write {
                        b.1 += nr_sector * 512;
                    } else {
                        b.0 += nr_sector * 512;
                    }
                }
            }
            Notification::Net {
                iface, len, sent, ..
            } if self.mode == IoTopMode::Usage => {
                let e = self.netifs.entry(iface).or_default();
                if sent {
                    e.1 += len;
                } else {
                    e.0 += len;
                }
            }
            _ => {}
        }
    }

    fn finish(&mut self, model: &Model, range: Range) -> Vec<Table> {
        let state = &model.state;
        let names = &model.resolver.syscalls;
        let (b, e) = (range.begin, range.end);
        let limit = if self.limit == 0 {
            usize::MAX
        } else {
            self.limit
        };
        let mut out = Vec::new();
        match self.mode {
            IoTopMode::Log => {
                // By start, then (a stable sort) as lttng-analyses lists the calls: by thread
                // in the order it met them, each thread's in the order they ended.
                let met = &self.met;
                let at = |tid: i32| met.get(&tid).copied().unwrap_or(u32::MAX);
                self.calls.sort_by_key(|d| (d.entry_ts, at(d.tid)));
                let mut t = Table::new("log", b, e);
                t.rows = self
                    .calls
                    .iter()
                    .map(|d| self.row(state, d, names))
                    .collect();
                if !t.rows.is_empty() {
                    out.push(t);
                }
            }
            IoTopMode::LatencyTop => {
                for c in Category::ALL {
                    let mut v: Vec<&TopCall> = self
                        .top
                        .values()
                        .flatten()
                        .filter(|t| {
                            let d = &t.call;
                            let cmd = (d.op == FdOp::Fcntl).then_some(0);
                            Category::of(names.name(d.name), cmd) == Some(c)
                        })
                        .collect();
                    if v.is_empty() {
                        continue;
                    }
                    v.sort_unstable_by_key(|t| t.key);
                    let mut t = Table::new("top-syscall", b, e);
                    t.title = Some(format!(
                        "Top system call latencies [{}]",
                        c.title().to_lowercase()
                    ));
                    // lttng-analyses shows one row more than the limit.
                    t.rows = v
                        .iter()
                        .take(limit.saturating_add(1))
                        .map(|t| self.row(state, &t.call, names))
                        .collect();
                    out.push(t);
                }
            }
            IoTopMode::Usage => {
                // At most one process and one file per call: no regrowth on the way.
                self.procs.reserve(self.usage_calls.len());
                self.files.reserve(self.usage_calls.len());
                let calls = std::mem::take(&mut self.usage_calls);
                // The first file each descriptor number of a process had (files are numbered
                // as they are opened).
                let mut fd_first: IntMap<(i32, i64), u32> = IntMap::default();
                for k in calls.keys() {
                    if let Some(f) = resolve_fd(state, k.file, k.tid, k.pid, Some(k.fd)) {
                        let e = fd_first.entry((k.pid, k.fd)).or_insert(f);
                        *e = (*e).min(f);
                    }
                }
                for (k, size) in calls {
                    let first = fd_first.get(&(k.pid, k.fd)).copied();
                    self.usage(state, &k, size, first);
                }
                self.usage_tables(state, b, e, limit, &mut out)
            }
        }
        out
    }
}

impl IoTop {
    fn usage_tables(&self, state: &State, b: i64, e: i64, limit: usize, out: &mut Vec<Table>) {
        let proc_cell = |tid: i32| {
            let t = state.thread(tid);
            let comm = t.map_or("", |t| t.comm.as_str());
            cell::process(comm, tid, t.and_then(|t| t.pid))
        };
        // The per-process tables list the threads the I/O tracking met (idle ones with
        // zeros), most first, equal ones in the order it met them.
        let mut tids: Vec<i32> = self.met.keys().copied().collect();
        tids.sort_by_key(|t| self.met_index(*t));
        for (write, title) in [(false, "read"), (true, "written")] {
            let get = |tid: &i32| {
                let u = self.procs.get(tid).copied().unwrap_or_default();
                if write {
                    u.1
                } else {
                    u.0
                }
            };
            let mut v: Vec<(i32, Usage)> = tids.iter().map(|t| (*t, get(t))).collect();
            top_rows(&mut v, self.limit, |x, y| {
                y.1.total
                    .cmp(&x.1.total)
                    .then(self.met_index(x.0).cmp(&self.met_index(y.0)))
            });
            let mut t = Table::new("per-process-top", b, e);
            t.title = Some(format!("Per-process top I/O operations [{title}]"));
            for (tid, u) in v {
                t.rows.push(vec![
                    proc_cell(tid),
                    cell::size(u.total as i64),
                    cell::size(u.disk as i64),
                    cell::size(u.net as i64),
                    cell::size(u.unknown as i64),
                ]);
            }
            if !t.rows.is_empty() {
                out.push(t);
            }
        }
        for (write, title) in [(false, "read"), (true, "written")] {
            let mut v: Vec<(&String, &FileUsage, u64)> = self
                .files
                .iter()
                .map(|(n, f)| (n, f, if write { f.write } else { f.read }))
                .filter(|x| x.2 > 0)
                .collect();
            top_rows(&mut v, self.limit, |x, y| {
                y.2.cmp(&x.2)
                    .then(x.1.rank.cmp(&y.1.rank))
                    .then(x.0.cmp(y.0))
            });
            let mut t = Table::new("per-file-top", b, e);
            t.title = Some(format!("Per-file top I/O operations [{title}]"));
            for (name, f, n) in v {
                let mut owners = String::new();
                let mut list = f.owners.clone();
                list.sort_by_key(|&(fd, pid, _)| (pid, fd));
                for &(fd, pid, tid) in &list {
                    // The process's name is its main thread's, else the user's.
                    let name = |t: i32| state.thread(t).map_or("", |t| t.comm.as_str());
                    let comm = match name(pid) {
                        "" => name(tid),
                        known => known,
                    };
                    owners.push_str(&format!("fd {fd} in {comm} ({pid}) "));
                }
                t.rows.push(vec![
                    cell::path(name),
                    cell::size(n as i64),
                    cell::string(owners),
                ]);
            }
            if !t.rows.is_empty() {
                out.push(t);
            }
        }
        for (write, title) in [(false, "read"), (true, "written")] {
            let mut v: Vec<(i32, u64)> = self
                .block
                .iter()
                .map(|(t, x)| (*t, if write { x.1 } else { x.0 }))
                .filter(|x| x.1 > 0)
                .collect();
            top_rows(&mut v, self.limit, |x, y| {
                y.1.cmp(&x.1)
                    .then(self.met_index(x.0).cmp(&self.met_index(y.0)))
            });
            let mut t = Table::new("per-process-top-block", b, e);
            t.title = Some(format!("Per-process top block I/O operations [{title}]"));
            for (tid, n) in v {
                t.rows.push(vec![proc_cell(tid), cell::size(n as i64)]);
            }
            if !t.rows.is_empty() {
                out.push(t);
            }
        }
        let disks: Vec<(&u64, &DiskUsage)> = self
            .disks
            .iter()
            .filter(|(d, _)| !state.whole_disks.contains(d))
            .collect();
        let avg = |d: &DiskUsage| d.latency as f64 / d.requests.max(1) as f64;
        for class in [
            "per-disk-top-sector",
            "per-disk-top-request",
            "per-disk-top-rps",
        ] {
            let key = |d: &DiskUsage| match class {
                "per-disk-top-sector" => d.sectors as f64,
                "per-disk-top-request" => d.requests as f64,
                _ => avg(d),
            };
            let mut v = disks.clone();
            // lttng-analyses sorts the sector and request tables, most first, and lists
            // request times in the order it first saw the disks (equal values too).
            if class == "per-disk-top-rps" {
                v.sort_by_key(|(_, d)| d.first);
            } else {
                v.sort_by(|x, y| {
                    key(y.1)
                        .total_cmp(&key(x.1))
                        .then(x.1.first.cmp(&y.1.first))
                });
            }
            let mut t = Table::new(class, b, e);
            for (dev, d) in v.into_iter().take(limit) {
                let v = match class {
                    "per-disk-top-sector" => cell::number(d.sectors),
                    "per-disk-top-request" => cell::number(d.requests),
                    _ => cell::duration(avg(d)),
                };
                t.rows.push(vec![cell::disk(&disk_name(state, *dev)), v]);
            }
            if !t.rows.is_empty() {
                out.push(t);
            }
        }
        for (sent, title) in [(false, "received"), (true, "sent")] {
            let mut v: Vec<(u32, u64)> = self
                .netifs
                .iter()
                .map(|(i, x)| (*i, if sent { x.1 } else { x.0 }))
                .collect();
            v.sort_by_key(|(i, n)| (std::cmp::Reverse(*n), *i));
            let mut t = Table::new("per-netif-top", b, e);
            t.title = Some(format!(
                "Per-network interface top I/O operations [{title}]"
            ));
            for (i, n) in v.into_iter().take(limit) {
                let name = state.netifs.get(i as usize).map_or("", |s| s.as_str());
                t.rows.push(vec![cell::netif(name), cell::size(n as i64)]);
            }
            if !t.rows.is_empty() {
                out.push(t);
            }
        }
    }
}
