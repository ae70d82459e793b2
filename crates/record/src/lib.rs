//! Kernel trace recorder: ftrace (tracefs) on a stock kernel, written as LTTng 2.13 kernel CTF.
//!
//! - Pure parts (sans-io): [`format`] parses the tracefs `format` and `header_page` files,
//!   [`page`] decodes ring-buffer pages, [`convert`] maps ftrace records to lttng-modules
//!   event classes, [`statedump`] builds the `lttng_statedump_*` events.
//! - I/O: [`tracefs`] (instance, raw pipes, /proc, signals) and [`recorder`] (the loop).

pub mod bpf;
pub mod convert;
pub mod format;
pub mod netheader;
pub mod page;
pub mod recorder;
pub mod statedump;
pub mod syscall_table;
pub mod tracefs;
pub mod trigger;

pub use recorder::{record, RecordOptions, RecordSummary};

use std::path::PathBuf;

/// Errors of a recording. Each says what to do or which file failed.
#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    #[error("recording needs root (tracefs instances and trace_pipe_raw are root-only)")]
    NotRoot,
    #[error("no tracefs: {0}")]
    NoTracefs(String),
    #[error("event {0} is not available in this kernel (no tracefs format/enable file)")]
    EventMissing(String),
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("bad tracefs description: {0}")]
    Format(String),
    #[error("writing the trace: {0}")]
    Write(#[from] ctf::writer::WriteError),
    #[error("{0}")]
    Invalid(String),
}
