//! TSDL (CTF 1.8 metadata language) front end.
//!
//! Three passes: `lexer` splits the text into tokens, `parser` builds top-level blocks whose
//! types are expanded (aliases substituted) but not yet resolved, and `resolve` produces the
//! [`TraceClass`]: byte orders (`native` is the trace's byte order, wherever the `trace` block
//! is), absolute field paths, variant option ranges, roles and clocks.

mod lexer;
mod parser;
mod resolve;
#[cfg(test)]
mod tests;

use crate::error::MetadataError;
use crate::ir::TraceClass;

/// Parses depacketized TSDL text into a resolved trace class.
pub fn parse(text: &str) -> Result<TraceClass, MetadataError> {
    let lexed = lexer::tokenize(text)?;
    let mut p = parser::Parser::new(lexed);
    let blocks = p.parse_all()?;
    // The tokens (a megabyte for a kernel trace's metadata) go back to the heap before the
    // trace class is built in it.
    drop(p);
    resolve::build(blocks)
}
