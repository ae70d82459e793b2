//! Errors of the CTF crate.

use std::path::PathBuf;

/// An error in metadata text, with the line it was found on when known.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}{message}", line.map(|l| format!("line {l}: ")).unwrap_or_default())]
pub struct MetadataError {
    /// 1-based line in the (depacketized) metadata text.
    pub line: Option<usize>,
    pub message: String,
}

impl MetadataError {
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
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{}: metadata: {source}", path.display())]
    Metadata {
        path: PathBuf,
        #[source]
        source: MetadataError,
    },
    #[error("{}: at byte {offset}: {message}", path.display())]
    Decode {
        path: PathBuf,
        offset: u64,
        message: String,
    },
    #[error("{}: no CTF trace found (no `metadata` file)", path.display())]
    NotATrace { path: PathBuf },
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
