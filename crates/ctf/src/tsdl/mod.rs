//! TSDL (CTF 1.8 metadata language) front end.

use crate::error::MetadataError;
use crate::ir::TraceClass;

/// Parses depacketized TSDL text into a resolved trace class.
pub fn parse(text: &str) -> Result<TraceClass, MetadataError> {
    let _ = text;
    Err(MetadataError::new(None, "TSDL parser not implemented yet"))
}
