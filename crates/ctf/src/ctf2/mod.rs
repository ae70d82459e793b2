//! CTF 2 (JSON text sequence) metadata front end.

use crate::error::MetadataError;
use crate::ir::TraceClass;

/// Parses a CTF 2 metadata stream (RFC 7464 JSON text sequence) into a resolved trace class.
pub fn parse(text: &str) -> Result<TraceClass, MetadataError> {
    let _ = text;
    Err(MetadataError::new(None, "CTF 2 metadata not implemented yet"))
}
