//! Common Trace Format (CTF 1.8 and CTF 2): metadata, decoding, merging and writing.
//!
//! Data flow: [`metadata`] turns the metadata stream into the resolved [`ir`] model;
//! it is compiled into an [`access::Layout`]; a [`stream::StreamReader`] walks one data
//! stream's packets and decodes events (sans-io) into zero-copy [`field::FieldView`]s; a
//! [`merge::Merger`] orders many streams by time.
//!
//! Reading: [`open_all`] opens every trace under some paths as [`Trace`]s, a [`Merger`] (or one
//! [`StreamReader`] per stream) yields [`Message`]s, and the current [`Event`]'s scopes are read
//! as [`FieldView`]s. Writing: [`writer::TraceWriter`]. Hot loops that read payloads straight
//! from the stream bytes use [`access`].

#![deny(missing_docs)]

pub mod access;
// The decoder's internals; what other crates read of them is in `access`.
mod bits;
pub mod ctf2;
mod decode;
pub mod error;
mod fast;
pub mod field;
mod flat;
pub mod index;
pub mod ir;
mod layout;
pub mod merge;
pub mod metadata;
pub mod private_files;
mod program;
pub mod stream;
pub mod trace;
pub mod tsdl;
pub mod value;
pub mod writer;

pub use error::{Error, MetadataError, Result};
pub use field::{FieldValue, FieldView};
pub use merge::Merger;
pub use stream::{Event, Message, ScanCounts, ScanSink, SkipRule, StreamReader};
pub use trace::{open_all, Trace};
