//! Deterministic generators of LTTng-like kernel traces, with ground truth.
//!
//! - [`kernel_mix`]: one large single-host trace, streamed in constant memory.
//! - [`client_server`]: several hosts with drifting clocks exchanging TCP traffic, with the
//!   true clock formulas and the critical path of a marked request in `ground-truth.json`.
//! - [`chaos`]: arbitrary traces (any event, any value, any order) that decoders and analyses
//!   must survive.

#![deny(missing_docs)]

pub mod chaos;
pub mod cli;
pub mod client_server;
pub mod common;
pub mod ground_truth;
pub mod kernel_mix;
pub mod rng;

/// The trace classes and payload layouts the generators write, from their one home in
/// `kernel`; re-exported so that users of the generators need no other import.
pub use kernel::lttng;
