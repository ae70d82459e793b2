//! Distributed trace synchronization.
//!
//! - [`matching`]: pairs the TCP packets that hosts sent with those other hosts received
//!   (sans-io: fed with [`matching::NetEvent`]s).
//! - [`extract`]: turns `ctf::Event`s of every LTTng network layout into `NetEvent`s.
//! - [`hull`]: the fully incremental convex-hull algorithm for one pair of hosts.
//! - [`transform`]: exact clock transforms, their composition and [`TimeMaps`].
//! - [`graph`]: N hosts: reference choice, spanning tree, per-trace transforms.
//! - [`session`]: one pass over opened traces, through [`pipeline::parallel`].
//! - [`live`]: the same fed as events arrive (live inputs), transforms updated as they match.
//! - [`report`]: the text and JSON reports of a session.

#![deny(missing_docs)]

pub mod bigint;
pub mod extract;
pub mod graph;
pub mod hull;
pub mod live;
pub mod matching;
pub mod rational;
pub mod report;
pub mod session;
pub mod transform;

pub use graph::{SyncResult, Synchronizer};
pub use hull::{FormulaKind, Quality};
pub use rational::Rational;
pub use session::{synchronize, Session, SyncOptions};
pub use transform::{Linear, TimeMaps, Transform};

use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Errors of the sync crate.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The reference trace's path could not be resolved.
    #[error("--reference {}: {source}", path.display())]
    Reference {
        /// The path given.
        path: PathBuf,
        /// Why it could not be resolved.
        #[source]
        source: std::io::Error,
    },
    /// The reference trace is not among the traces synchronized.
    #[error("--reference {}: not one of the traces given", path.display())]
    NotATrace {
        /// The path given.
        path: PathBuf,
    },
}

/// The index of the trace at `path` (or under it) among `traces`, for
/// [`SyncOptions::reference`].
pub fn reference_index(traces: &[Arc<ctf::Trace>], path: &Path) -> Result<usize, Error> {
    let want = std::fs::canonicalize(path).map_err(|source| Error::Reference {
        path: path.to_path_buf(),
        source,
    })?;
    traces
        .iter()
        .position(|t| {
            std::fs::canonicalize(&t.path)
                .map(|c| c == want || c.starts_with(&want))
                .unwrap_or(false)
        })
        .ok_or_else(|| Error::NotATrace {
            path: path.to_path_buf(),
        })
}
