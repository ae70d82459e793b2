//! Errors of the CTF crate.

use std::path::PathBuf;

/// An error in metadata text, with the line it was found on when known.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}{message}", line.map(|l| format!("line {l}: ")).unwrap_or_default())]
pub struct MetadataError {
    /// 1-based line in the (depacketized) metadata text.
    pub line: Option<usize>,
    /// What is wrong.
    pub message: String,
}

impl MetadataError {
    /// An error at `line` (when known) saying `message`.
    pub fn new(line: Option<usize>, message: impl Into<String>) -> Self {
        MetadataError {
            line,
            message: message.into(),
        }
    }
}

/// Every error the CTF crate reports. Each names the file involved, and the byte offset when
/// the problem is in binary data.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A file could not be read.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// A trace's metadata could not be read or parsed.
    #[error("{}: metadata: {source}", path.display())]
    Metadata {
        /// The metadata file.
        path: PathBuf,
        /// What is wrong in it.
        #[source]
        source: MetadataError,
    },
    /// Stream data does not decode as the metadata describes it.
    #[error("{}: at byte {offset}: {message}", path.display())]
    Decode {
        /// The stream file.
        path: PathBuf,
        /// Byte offset in the file where decoding failed.
        offset: u64,
        /// What is wrong.
        message: String,
    },
    /// A directory given as a trace holds none.
    #[error("{}: no CTF trace found (no `metadata` file)", path.display())]
    NotATrace {
        /// The directory.
        path: PathBuf,
    },
}

impl Error {
    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io {
            path: path.into(),
            source,
        }
    }
}

/// Result type of this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;
