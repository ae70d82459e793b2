//! tracekit's event pipeline: a source opens inputs and pushes one time-ordered event stream
//! into sinks.
//!
//! A [`Source`] stands for what is read: [`FileSource`] for trace files on disk (one trace,
//! a directory of traces, several hosts), [`FollowSource`] for a trace read while it is
//! written, later a live relay connection. It applies what every
//! consumer shares — the time range, the intersection of the streams, a clock transform per
//! trace (`--sync`), index-based seeking, leaving out the event classes no sink needs,
//! progress — and calls a [`Sink`] for each event in merged time order, for each discarded
//! event or packet notice, for each [`Diagnostic`], and once at the end.
//!
//! Consumers are sinks: the text printer, counting, every analysis and the period engine, the
//! latency tracker, the critical-path graph builder, the writer of `tracekit convert`. Several
//! sinks share one read through [`Fanout`] (any number, boxed) or [`Both`] (two, inlined).
//!

#![deny(missing_docs)]

pub mod bounds;
pub mod diagnostic;
pub mod follow;
pub mod glob;
pub mod heap;
pub mod parallel;
pub mod progress;
pub mod range;
pub mod sink;
pub mod source;
pub mod time;

pub use bounds::{intersection, intersection_on};
pub use diagnostic::{Diagnostic, DiagnosticKind};
pub use follow::{FollowSource, Written};
pub use progress::{Progress, ProgressPoint};
pub use range::RangeEvents;
pub use sink::{union_wanted, Both, Fanout, Flow, Notice, NoticeKind, Sink, Wanted};
pub use source::{classes_where, FileSource, ReadOptions, Source, Summary};

/// Errors of the pipeline.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A trace could not be opened (its path is in the message).
    #[error(transparent)]
    Ctf(#[from] ctf::Error),
    /// The inputs hold no event in the requested range.
    #[error("no events in the analysed time range")]
    NoEvents,
    /// No event could be read at all, because of these errors.
    #[error("no readable events: {}", .0.iter().map(|d| d.to_string()).collect::<Vec<_>>().join("; "))]
    Unreadable(Vec<Diagnostic>),
}
