//! Common Trace Format (CTF 1.8 and CTF 2): metadata, decoding, merging and writing.
//!
//! Data flow: [`metadata`] turns the metadata stream into the resolved [`ir`] model; the
//! decoder walks data-stream packets with that model and hands events to consumers.

pub mod ctf2;
pub mod error;
pub mod ir;
pub mod metadata;
pub mod tsdl;
pub mod value;
pub mod writer;

pub use error::{Error, MetadataError, Result};
