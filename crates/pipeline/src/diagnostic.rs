//! Typed diagnostics: what went wrong or looks wrong while reading, and where.

use std::fmt;
use std::path::PathBuf;

/// What a [`Diagnostic`] is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum DiagnosticKind {
    /// A file or part of a trace could not be opened; the rest is read.
    Open,
    /// Data that could not be decoded; reading goes on after it where it can.
    Decode,
    /// Metadata that could not be read.
    Metadata,
    /// An input/output error.
    Io,
    /// Something read that looks wrong but is used (a timestamp regression, an index left
    /// unused…).
    Warning,
}

/// A problem met while reading: its kind, the file and byte offset when known, and the
/// message a user reads (which names the file and offset itself).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    /// What it is about.
    pub kind: DiagnosticKind,
    /// The file involved, when known.
    pub file: Option<PathBuf>,
    /// The byte offset in `file`, when known.
    pub offset: Option<u64>,
    /// The whole message.
    pub message: String,
}

impl Diagnostic {
    /// A reader's warning (its message names its file).
    pub fn warning(message: String) -> Self {
        Diagnostic {
            kind: DiagnosticKind::Warning,
            file: None,
            offset: None,
            message,
        }
    }

    /// A problem met while opening a trace (the message names the file).
    pub fn open_error(message: String) -> Self {
        Diagnostic {
            kind: DiagnosticKind::Open,
            file: None,
            offset: None,
            message,
        }
    }

    /// The diagnostic of a CTF reading error.
    pub fn from_ctf(e: &ctf::Error) -> Self {
        let (kind, file, offset) = match e {
            ctf::Error::Io { path, .. } => (DiagnosticKind::Io, Some(path.clone()), None),
            ctf::Error::Metadata { path, .. } => {
                (DiagnosticKind::Metadata, Some(path.clone()), None)
            }
            ctf::Error::Decode { path, offset, .. } => {
                (DiagnosticKind::Decode, Some(path.clone()), Some(*offset))
            }
            ctf::Error::NotATrace { path } => (DiagnosticKind::Open, Some(path.clone()), None),
            _ => (DiagnosticKind::Decode, None, None),
        };
        Diagnostic {
            kind,
            file,
            offset,
            message: e.to_string(),
        }
    }

    /// Whether this is a warning rather than an error.
    pub fn is_warning(&self) -> bool {
        self.kind == DiagnosticKind::Warning
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}
