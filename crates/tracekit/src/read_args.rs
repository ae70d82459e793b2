//! The inputs and read range that `convert` and `export` share, and how they report a read.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use ::pipeline::{ReadOptions, Summary};

/// Opened traces and how to read them.
pub type Opened = (Vec<Arc<ctf::Trace>>, ReadOptions);

/// Inputs, time range, clock options.
#[derive(clap::Args)]
pub struct ReadArgs {
    /// Trace directories, or directories holding traces (searched recursively).
    #[arg(required = true)]
    pub paths: Vec<PathBuf>,
    /// Drop events before this time: `[YYYY-MM-DD ]HH:MM[:SS[.NNNNNNNNN]]` or `SECONDS[.NNN]`.
    #[arg(long)]
    pub begin: Option<String>,
    /// Drop events after this time (same syntax as --begin).
    #[arg(long)]
    pub end: Option<String>,
    /// Read times without a time zone as UTC instead of local time.
    #[arg(long)]
    pub clock_gmt: bool,
    /// Synchronize the traces' clocks first (`tracekit sync`) and write the synchronized
    /// times (perfetto: each host a machine of its own).
    #[arg(long)]
    pub sync: bool,
    /// Keep only the time range every stream covers (babeltrace2's --stream-intersection).
    #[arg(long)]
    pub stream_intersection: bool,
}

impl ReadArgs {
    /// Opens the traces (printing their warnings) and the read options asked for; a time
    /// without a date takes the first message's, as `print` reads it.
    pub fn open(&self) -> Result<Opened, Box<dyn std::error::Error>> {
        let traces = ctf::open_all(&self.paths)?;
        for t in &traces {
            for e in &t.errors {
                eprintln!("tracekit: warning: {e}");
            }
        }
        let mut read = ReadOptions {
            no_intersection: !self.stream_intersection,
            ..Default::default()
        };
        if self.sync {
            read.time_map = Some(crate::sync_cmd::time_map(&traces));
        }
        (read.begin, read.end) = text::parse_bounds(
            &traces,
            self.begin.as_deref(),
            self.end.as_deref(),
            &text::time_zone(self.clock_gmt),
            read.time_map.as_ref(),
        )?;
        Ok((traces, read))
    }
}

/// Prints a read's warnings and errors; the exit status: 1 when it had errors (what could be
/// read was written).
pub fn report(summary: &Summary) -> ExitCode {
    for w in summary.warning_strings() {
        eprintln!("tracekit: warning: {w}");
    }
    for e in summary.error_strings() {
        eprintln!("tracekit: error: {e}");
    }
    if summary.errors.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}
