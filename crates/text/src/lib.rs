//! babeltrace2's default text output of CTF traces, byte for byte, and the per-stream
//! parallel reads behind `tracekit print` and `tracekit count`.
//!
//! - [`print()`]: every stream decoded and formatted a chunk at a time on every core, merged by time
//!   ([`pipeline::parallel`]), the output of `babeltrace2 PATH...`.
//! - [`TextPrinter`]: one event or loss message as babeltrace2 writes it, through a print
//!   plan per event class where the class allows (`plan`), the general field walk otherwise.
//! - [`count_traces`]: every event decoded and counted per class, streams in parallel.
//!
//! Inside, each module does one job, lower ones never using higher ones: `put` writes numbers
//! and escaped strings into byte buffers; `value` writes one field value; `timefmt` formats
//! time stamps and deltas; `style` writes babeltrace2's non-default `text.pretty` styles
//! (names, fields, time formats, colours); `plan` compiles and runs per-class print plans; `printer` writes
//! whole events; `print` runs the parallel read.

#![deny(missing_docs)]

pub mod cli;
mod count;
mod plan;
mod print;
mod printer;
pub mod progress;
mod put;
mod style;
mod timefmt;
mod value;

pub use count::{count_traces, Counts};
pub use print::{parse_bounds, print, Error, Outcome, PrintOptions, TextSink};
pub use printer::{Loss, TextBuf, TextPrinter};
pub use style::{colors_supported, ColorChoice, Fields, Names, Style, StyleError, Styled};
pub use timefmt::{time_zone, TimeFormatter};
