//! The state model of kernel traces, as Trace Compass's state system: built once per trace
//! from the kernel state machine's status notifications, kept as per-row state intervals
//! (threads, CPUs, IRQ lines, soft IRQ vectors of every host), and queried by time range at a
//! resolution — at most one state per resolution step and row, whatever the trace's size.
//! Also kept from the same read: wake-up arrows, an event-density histogram (lost events
//! marked), per-thread CPU time for usage curves, and checkpoints that let an event table seek
//! to its n-th event. Saved to and loaded from a cache file keyed by the trace.
//!
//! Modules: `build` (the reads, and the state intervals the kernel state machine's status
//! notifications give), `store` (the columns and the queries), `cache` (the model on disk).

#![deny(missing_docs)]

mod build;
mod cache;
mod store;

pub use build::hosts;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use ctf::Trace;
use pipeline::{Diagnostic, ReadOptions};

/// What went wrong building, loading or saving a timeline.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// Reading the traces failed before any event could be read.
    #[error("{0}")]
    Read(#[from] pipeline::Error),
    /// A cache file could not be read or written.
    #[error("cache file {path}: {source}")]
    Cache {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
}

/// A thread's state, with Trace Compass's meanings (and colours, in the viewer).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[repr(u8)]
pub enum ThreadState {
    /// Running in user mode.
    Usermode,
    /// Running in a system call (the interval's label is the call's name).
    Syscall,
    /// Runnable, waiting for a CPU (woken, or preempted).
    WaitCpu,
    /// Blocked (switched out not runnable, until woken).
    WaitBlocked,
    /// Its CPU is handling a hard IRQ.
    Interrupted,
    /// Its CPU is handling a soft IRQ.
    SoftIrq,
    /// Not known yet (before the first event that tells).
    Unknown,
}

/// A CPU's state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[repr(u8)]
pub enum CpuState {
    /// Running the idle thread.
    Idle,
    /// Running a thread in user mode (label: the thread's name).
    Usermode,
    /// Running a thread in a system call (label: the call's name).
    Syscall,
    /// Handling a hard IRQ (label: the handler's name).
    Irq,
    /// Handling a soft IRQ (label: the vector's name).
    SoftIrq,
    /// Not known yet.
    Unknown,
}

/// The state of an IRQ line or soft IRQ vector row.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[repr(u8)]
pub enum IrqState {
    /// Its handler runs (label: the CPU).
    Active,
    /// A soft IRQ raised, its handler not started yet.
    Raised,
}

/// A row's state in one interval.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum State {
    /// A thread row's state.
    Thread(ThreadState),
    /// A CPU row's state.
    Cpu(CpuState),
    /// An IRQ or soft IRQ row's state.
    Irq(IrqState),
}

/// What a row stands for.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum RowKind {
    /// A traced host (its rows are its children).
    Host,
    /// A thread (a row per thread id and birth; a process's threads are children of its
    /// main thread's row, a process's main thread a child of its parent's).
    Thread {
        /// Thread id.
        tid: i32,
        /// Process id, when known.
        pid: Option<i32>,
        /// Parent's process id, when known.
        ppid: Option<i32>,
    },
    /// A CPU.
    Cpu {
        /// Its id.
        cpu: u32,
    },
    /// A hard IRQ line: over every CPU (`cpu` None, a row of the host), or on one CPU (a child
    /// of that CPU's row, as Trace Compass nests them in its Resources view).
    Irq {
        /// Its number.
        irq: i64,
        /// The CPU of a per-CPU row.
        cpu: Option<u32>,
    },
    /// A soft IRQ vector: over every CPU, or on one CPU (as [`RowKind::Irq`]).
    SoftIrq {
        /// Its vector number.
        vec: u64,
        /// The CPU of a per-CPU row.
        cpu: Option<u32>,
    },
}

/// A row of the model.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Row {
    /// Its id: its index in [`Timeline::rows`].
    pub id: u32,
    /// Its parent row (None: a top-level row).
    pub parent: Option<u32>,
    /// The host (index in [`Timeline::hosts`]).
    pub host: u32,
    /// What it stands for.
    pub kind: RowKind,
    /// Its label: a thread's last name, `CPU 3`, `IRQ 19 (eth0)`, `NET_RX`.
    pub label: String,
    /// Every name a thread had, with when it took it (one entry for other rows).
    pub names: Vec<(i64, String)>,
    /// The time span it has states in.
    pub start: i64,
    /// End of that span.
    pub end: i64,
}

/// A state over a time span, as a query returns it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Span {
    /// Start (ns, on the model's time line).
    pub start: i64,
    /// End (exclusive).
    pub end: i64,
    /// The state.
    pub state: State,
    /// Its label, if any (a system call's name, a running thread's name…).
    pub label: Option<Arc<str>>,
    /// When the query's resolution hid shorter states inside this span.
    pub merged: bool,
}

/// An arrow between two rows: a wake-up (from the waker's row to the woken's) or a CPU
/// handing over from one thread to the next.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Arrow {
    /// The row it leaves.
    pub source: u32,
    /// The row it reaches.
    pub target: u32,
    /// When it leaves.
    pub start: i64,
    /// When it arrives.
    pub end: i64,
    /// What it is.
    pub kind: ArrowKind,
}

/// What an arrow shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum ArrowKind {
    /// A thread (or an interrupt on the source CPU's row) woke the target thread.
    Wakeup,
}

/// A traced host.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Host {
    /// Its name (the trace's hostname, else its path).
    pub name: String,
    /// Its row ([`RowKind::Host`]).
    pub row: u32,
}

/// How to build a model.
#[derive(Debug, Clone, Default)]
pub struct BuildOptions {
    /// The read: clock transform per trace (`--sync`), progress.
    pub read: ReadOptions,
    /// Where cache files live (None: no cache).
    pub cache_dir: Option<PathBuf>,
}

/// Where an event table can seek from: the `index`-th event (0-based, in the model's time
/// order) is the first at time `ts`, or is `skip` events after it when events tie.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Checkpoint {
    /// The event's index.
    pub index: u64,
    /// Its time.
    pub ts: i64,
    /// How many events before it have the same time.
    pub skip: u64,
}

/// The model of a set of traces.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Timeline {
    /// Hosts, in the order of their first trace.
    pub hosts: Vec<Host>,
    /// Every row.
    pub rows: Vec<Row>,
    /// First event time.
    pub start: i64,
    /// Last event time.
    pub end: i64,
    /// Events read.
    pub events: u64,
    /// Event seek points, at most a few thousand events apart.
    pub checkpoints: Vec<Checkpoint>,
    /// The intervals and what the queries read besides the rows.
    #[serde(skip)]
    store: Arc<store::Store>,
}

/// Whether a model came from the cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// Built by reading the traces (and saved, when a cache directory was given).
    Built,
    /// Loaded from the cache.
    Cached,
}

impl Timeline {
    /// Builds the model of `traces` (several hosts: one kernel state per host, read in
    /// parallel) or loads it from the cache. Read errors are returned with what could be read;
    /// a cache file that cannot be written is a warning among them.
    ///
    /// The model reads every event of every stream (`no_intersection`) on the time line of
    /// `opts.read.time_map`; its [`Checkpoint`]s count the events of such a read.
    pub fn open(
        traces: &[Arc<Trace>],
        opts: &BuildOptions,
    ) -> Result<(Timeline, Origin, Vec<Diagnostic>), Error> {
        if traces.is_empty() {
            return Err(Error::Read(pipeline::Error::NoEvents));
        }
        let cached = opts.cache_dir.as_deref().map(|dir| {
            (
                cache::key(traces, &opts.read),
                Self::cache_path(traces, dir),
            )
        });
        if let Some((key, path)) = &cached {
            if let Some(tl) = cache::load(path, key) {
                return Ok((tl, Origin::Cached, Vec::new()));
            }
        }
        let (tl, mut diagnostics) = build::build(traces, &opts.read);
        if tl.events == 0 {
            return Err(Error::Read(if diagnostics.is_empty() {
                pipeline::Error::NoEvents
            } else {
                pipeline::Error::Unreadable(diagnostics)
            }));
        }
        if let Some((key, path)) = &cached {
            // A model that cannot be cached is still the model: the failure is a warning.
            if let Err(e) = cache::save(path, key, &tl) {
                diagnostics.push(Diagnostic::warning(e.to_string()));
            }
        }
        Ok((tl, Origin::Built, diagnostics))
    }

    /// The states of row `row` overlapping `[start, end]`, at most one per `resolution`
    /// nanoseconds (a span standing for shorter ones is `merged`), in time order.
    pub fn states(&self, row: u32, start: i64, end: i64, resolution: i64) -> Vec<Span> {
        self.store.states(row, start, end, resolution)
    }

    /// The state of row `row` at time `ts`.
    pub fn state_at(&self, row: u32, ts: i64) -> Option<Span> {
        self.store.state_at(row, ts)
    }

    /// Arrows that overlap `[start, end]` and touch one of `rows` (all when empty), thinned
    /// to at most one per `resolution` per row pair.
    pub fn arrows(&self, rows: &[u32], start: i64, end: i64, resolution: i64) -> Vec<Arrow> {
        self.store.arrows(rows, start, end, resolution)
    }

    /// CPU usage in `[start, end]` sampled at `n` points: per sample, the share (0–100 %) of
    /// all CPUs of `host` running non-idle threads, or only thread rows `threads` when given.
    pub fn cpu_usage(
        &self,
        host: u32,
        threads: &[u32],
        start: i64,
        end: i64,
        n: usize,
    ) -> Vec<f64> {
        self.store.cpu_usage(host, threads, start, end, n)
    }

    /// Per-thread CPU time in `[start, end]` (row id, ns), most first.
    pub fn cpu_time(&self, host: u32, start: i64, end: i64) -> Vec<(u32, i64)> {
        self.store.cpu_time(host, start, end)
    }

    /// Events per bucket of `n` equal buckets over `[start, end]`, and the events lost
    /// (discarded by the tracer) per bucket.
    pub fn event_density(&self, start: i64, end: i64, n: usize) -> (Vec<u64>, Vec<u64>) {
        self.store.event_density(start, end, n)
    }

    /// The row of thread `tid` of `host` alive at `ts` (the latest born before it).
    pub fn thread_row(&self, host: u32, tid: i32, ts: i64) -> Option<u32> {
        self.store.thread_row(host, tid, ts, &self.rows)
    }

    /// Intervals stored, over all rows.
    pub fn intervals(&self) -> usize {
        self.store.cols.iter().map(|c| c.starts.len()).sum()
    }

    /// Bytes the model's intervals, arrows and density samples take in memory.
    pub fn memory(&self) -> usize {
        self.store.memory()
    }

    /// The cache file of `traces` in `dir`.
    pub fn cache_path(traces: &[Arc<Trace>], dir: &Path) -> PathBuf {
        dir.join(format!("timeline-{:016x}.cache", cache::path_hash(traces)))
    }
}
