//! Common Trace Format (CTF 1.8 and CTF 2): metadata, decoding, merging and writing.
//!
//! Data flow: [`metadata`] turns the metadata stream into the resolved [`ir`] model;
//! [`layout`] compiles it; a [`stream::StreamReader`] walks one data stream's packets and
//! decodes events (sans-io, in [`decode`]) into zero-copy [`field::FieldView`]s; a
//! [`merge::Merger`] orders many streams by time.

pub mod bits;
pub mod ctf2;
pub mod decode;
pub mod error;
pub mod fast;
pub mod field;
pub mod index;
pub mod ir;
pub mod layout;
pub mod merge;
pub mod metadata;
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
