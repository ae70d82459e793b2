//! The wire formats of LTTng's relay daemon (lttng-tools 2.13), without any I/O.
//!
//! Three TCP protocols meet at a relay daemon, all big-endian and packed:
//! - [`control`]: a consumer daemon's control connection (port 5342): sessions, streams,
//!   metadata, packet indexes, trace chunks; every command but metadata gets a reply;
//! - [`control::DataHeader`]: its data connection (port 5343): packets, each after a header;
//! - [`viewer`]: live viewers (port 5344): sessions, streams, indexes, packets, metadata.
//!
//! [`index`] is the CTF packet index file format (`index/*.idx`) a relay writes.
//!
//! Decoding reads a byte slice and returns the message with the bytes it took, or
//! [`DecodeError::Incomplete`] (how many more bytes are needed at least) when the slice holds
//! only part of one, or [`DecodeError::Invalid`] naming the message, field and byte offset of
//! what is wrong. Encoding appends to a `Vec<u8>`. Nothing here panics on any input.

#![deny(missing_docs)]

pub mod control;
pub mod index;
pub mod viewer;
mod wire;

/// Why bytes could not be decoded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DecodeError {
    /// The bytes hold only the beginning of a message: at least `needed` more are needed.
    #[error("incomplete message: at least {needed} more bytes needed")]
    Incomplete {
        /// How many bytes are missing at least.
        needed: usize,
    },
    /// The bytes are not a valid message.
    #[error("{message}: bad {field} at byte {offset}: {reason}")]
    Invalid {
        /// The message being decoded.
        message: &'static str,
        /// The field found wrong.
        field: &'static str,
        /// Its offset from the start of the message (its header's first byte).
        offset: usize,
        /// What is wrong with it.
        reason: String,
    },
}

impl DecodeError {
    /// Whether more bytes could complete the message.
    pub fn is_incomplete(&self) -> bool {
        matches!(self, DecodeError::Incomplete { .. })
    }
}

/// The largest payload a message may announce (a metadata chunk, a data packet): larger ones
/// are refused rather than buffered, so that a hostile peer cannot make a relay allocate
/// without bound. Sub-buffers of LTTng channels are far smaller.
pub const MAX_PAYLOAD: u64 = 64 << 20;

/// The result of a decoder: the message and how many bytes it took.
pub type Decoded<T> = Result<(T, usize), DecodeError>;
