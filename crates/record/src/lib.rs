//! Kernel trace recorder: ftrace (tracefs) on a stock kernel, written as LTTng 2.13 kernel CTF.
//!
//! - Pure parts (sans-io): [`format`](mod@format) parses the tracefs `format` and
//!   `header_page` files, [`page`] decodes ring-buffer pages, [`convert`] maps ftrace records
//!   to lttng-modules event classes, [`statedump`] builds the `lttng_statedump_*` events,
//!   [`netheader`] parses the network headers of the eBPF helper, [`stacks`] the records of
//!   the stacks helper, [`sysargs`] the system calls' string arguments, [`trigger`] checks the
//!   `--snapshot-on` latency rules, [`filter`](mod@filter) compiles `--filter` expressions.
//! - I/O (private): `tracefs` (instance, raw pipes, /proc, signals) and `recorder` (the
//!   loop, [`record`]).

#![deny(missing_docs)]

mod bpf;
pub mod cli;
pub mod convert;
pub mod filter;
pub mod format;
mod missing_switch;
pub mod netheader;
pub mod page;
pub mod probes;
mod recorder;
pub mod relay;
pub mod stacks;
pub mod statedump;
pub mod sysargs;
/// x86-64 system call numbers (kept with the kernel crate's LTTng knowledge).
pub use kernel::lttng::syscall_numbers as syscall_table;
mod tracefs;
pub mod trigger;

pub use recorder::{record, recover, RecordOptions, RecordSummary};

/// Asks a running [`record`] (of this process) to stop as SIGINT does: it writes out what is
/// left and ends, keeping the trace.
pub fn request_stop() {
    tracefs::signals::STOP.store(true, std::sync::atomic::Ordering::SeqCst);
}

use std::path::PathBuf;

/// Errors of the recorder: of a recording ([`record`]), and of what it is asked to record
/// (an `--events` list, a `--snapshot-on` rule). Each says what to do or which file failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// Not running as root.
    #[error("recording needs root (tracefs instances and trace_pipe_raw are root-only)")]
    NotRoot,
    /// tracefs is not mounted, or not where it was said to be.
    #[error("no tracefs: {0}")]
    NoTracefs(String),
    /// An event to record that this kernel does not have (`system:event`).
    #[error("event {0} is not available in this kernel (no tracefs format/enable file)")]
    EventMissing(String),
    /// A tracefs or /proc file, or an output file, that could not be read or written.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// A tracefs description file (`format`, `header_page`) that could not be parsed.
    #[error("bad tracefs description: {0}")]
    Format(String),
    /// Writing the CTF trace failed.
    #[error("writing the trace: {0}")]
    Write(#[from] ctf::writer::WriteError),
    /// Anything else that prevents the recording (bad options, an unexpected kernel reply).
    #[error("{0}")]
    Invalid(String),
    /// An `--events` item that names no known event or group.
    #[error(
        "unknown event or group `{0}` (groups: {groups}; or names such as sched_switch, \
         irq_softirq_entry, sched:sched_switch)",
        groups = convert::GROUPS.join(", ")
    )]
    UnknownEvent(String),
    /// A `syscall:NAME` or `--syscall` item that names no system call.
    #[error("unknown system call `{0}` (no x86-64 system call matches)")]
    UnknownSyscall(String),
    /// A `--filter` expression that does not apply to an event.
    #[error("{0}")]
    Filter(#[from] filter::FilterError),
    /// A `--filter` selection naming events that are not recorded.
    #[error("--filter `{0}`: its selection names no recorded event (add them to --events)")]
    FilterSelection(String),
    /// A `--snapshot-on` rule without `>`.
    #[error("bad rule `{0}` (e.g. syscall>50ms)")]
    BadRule(String),
    /// A `--snapshot-on` rule naming no latency tracker.
    #[error("bad rule `{rule}`: unknown latency `{name}` (wakeup, offcpu, syscall, block, irq)")]
    UnknownLatency {
        /// The rule.
        rule: String,
        /// The latency it names.
        name: String,
    },
    /// A `--snapshot-on` rule whose threshold is not a duration.
    #[error("bad rule `{rule}`: {source}")]
    RuleThreshold {
        /// The rule.
        rule: String,
        /// Why its threshold could not be read.
        #[source]
        source: pipeline::time::TimeError,
    },
}
