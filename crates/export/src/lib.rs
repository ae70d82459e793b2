//! Exporters: sinks that write the events of a read to another format.
//!
//! Each output format is one module holding one [`pipeline::Sink`] that also implements
//! [`Export`]: [`ctf`] writes CTF 1.8 in LTTng's layout (`tracekit convert`); `parquet` (feature
//! `parquet`) writes tables for Spark and DuckDB, `perfetto` (feature `perfetto`) Perfetto's
//! protobuf trace format (`tracekit export --format parquet|perfetto`). A format is a module
//! with its own sink; the source, the time range, the name filter and the time map stay the
//! pipeline's.

#![deny(missing_docs)]

pub mod ctf;
mod glob;
#[cfg(any(feature = "parquet", feature = "perfetto"))]
mod pair_index;
#[cfg(feature = "parquet")]
pub mod parquet;
#[cfg(feature = "perfetto")]
pub mod perfetto;
#[cfg(any(feature = "parquet", feature = "perfetto"))]
mod streams;

use std::path::{Path, PathBuf};

pub use glob::NameFilter;
use pipeline::{Source, Summary};

/// Errors of the exporters.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The output directory exists and holds files: nothing is overwritten.
    #[error("{}: the output directory exists and is not empty", .0.display())]
    OutputNotEmpty(PathBuf),
    /// A file or directory of the output could not be made or written.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The CTF writer failed (the message names the file).
    #[error(transparent)]
    Write(#[from] ::ctf::writer::WriteError),
    /// An input trace cannot be written in this format.
    #[error("{}: {reason}", trace.display())]
    Unsupported {
        /// The input trace directory.
        trace: PathBuf,
        /// What the format cannot hold.
        reason: String,
    },
    /// The read gave events, but none the output keeps (the name patterns left them all
    /// out): nothing was written.
    #[error("no event in the range has a kept name: nothing written")]
    NothingKept,
    /// A table name that is not one of the format's tables.
    #[error("no table named `{name}` (tables: {known})")]
    UnknownTable {
        /// The name given.
        name: String,
        /// The tables there are, comma-separated.
        known: String,
    },
    /// The Parquet writer failed.
    #[error("{}: {message}", path.display())]
    Parquet {
        /// The file written.
        path: PathBuf,
        /// What went wrong.
        message: String,
    },
    /// Reading the inputs failed.
    #[error(transparent)]
    Pipeline(#[from] pipeline::Error),
}

impl Error {
    pub(crate) fn io(path: &Path, source: std::io::Error) -> Self {
        Error::Io {
            path: path.to_path_buf(),
            source,
        }
    }
}

/// An output format: a sink that writes what the read gives it, then completes the output.
pub trait Export: pipeline::Sink {
    /// What the completed output holds.
    type Report;

    /// Writes out what is pending and completes the output (the read is over). The first
    /// error met while writing events, if any, is returned here.
    fn close(self) -> Result<Self::Report, Error>;
}

/// Reads `source` into `sink` and completes the output: the sink's report and the read's
/// summary (its diagnostics were also given to the sink). A read that gave no event at all is
/// an error ([`pipeline::Error::NoEvents`] or the read's errors), after the output is closed;
/// so is an output that kept none ([`Error::NothingKept`]).
pub fn export<S: Source, E: Export>(
    source: &S,
    mut sink: E,
) -> Result<(E::Report, Summary), Error> {
    let mut counted = Counted {
        sink: &mut sink,
        events: 0,
    };
    let summary = source.run(&mut counted);
    let given = counted.events;
    let report = sink.close();
    if given == 0 {
        return Err(summary.nothing_read().into());
    }
    Ok((report?, summary))
}

/// A sink and the number of events it was given (the read itself counts nothing).
struct Counted<'a, S> {
    sink: &'a mut S,
    events: u64,
}

impl<S: pipeline::Sink> pipeline::Sink for Counted<'_, S> {
    fn wanted(&self, trace: &::ctf::Trace) -> pipeline::Wanted {
        self.sink.wanted(trace)
    }
    fn wants_notices(&self) -> bool {
        self.sink.wants_notices()
    }
    fn event(&mut self, ev: &::ctf::Event<'_>, ts: i64) -> pipeline::Flow {
        self.events += 1;
        self.sink.event(ev, ts)
    }
    fn notice(&mut self, notice: &pipeline::Notice) -> pipeline::Flow {
        self.sink.notice(notice)
    }
    fn diagnostic(&mut self, diagnostic: &pipeline::Diagnostic) {
        self.sink.diagnostic(diagnostic)
    }
    fn finish(&mut self, summary: &Summary) {
        self.sink.finish(summary)
    }
}
