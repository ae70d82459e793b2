//! tracekit's web trace viewer: a Trace Server Protocol back end over the [`timeline`] state
//! model and the analyses, serving the single-page app in `web/` (embedded in the binary).

#![deny(missing_docs)]
