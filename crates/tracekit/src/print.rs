//! `tracekit print`: babeltrace2 compatible text output of merged traces.

use std::io::{self, BufWriter, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use crate::progress::Progress;

#[derive(clap::Args)]
pub struct PrintArgs {
    /// Trace directories, or directories holding traces (searched recursively).
    #[arg(required = true)]
    pub paths: Vec<PathBuf>,
    /// Drop events before this time: `[YYYY-MM-DD ]HH:MM[:SS[.NNNNNNNNN]]` or `SECONDS[.NNN]`.
    #[arg(long)]
    pub begin: Option<String>,
    /// Drop events after this time (same syntax as --begin).
    #[arg(long)]
    pub end: Option<String>,
    /// Print times in UTC instead of the local time zone.
    #[arg(long)]
    pub clock_gmt: bool,
    /// Synchronize the traces' clocks first (`tracekit sync`) and merge on the reference's.
    #[arg(long)]
    pub sync: bool,
}

pub fn run(args: &PrintArgs) -> Result<ExitCode, Box<dyn std::error::Error>> {
    let traces = ctf::open_all(&args.paths)?;
    for t in &traces {
        for e in &t.errors {
            eprintln!("tracekit: warning: {e}");
        }
    }
    let progress = std::sync::Arc::new(Progress::for_traces(&traces));
    let mut options = text::PrintOptions {
        gmt: args.clock_gmt,
        begin: args.begin.clone(),
        end: args.end.clone(),
        time_map: None,
        // Only a shown line is told: the read then finds the streams' extent too.
        progress: progress.shown().then(|| progress.clone() as _),
    };
    if args.sync {
        options.time_map = Some(crate::sync_cmd::time_map(&traces));
    }
    let mut out = BufWriter::with_capacity(1 << 16, io::stdout().lock());
    let outcome = text::print(&traces, &options, &mut out, &mut io::stderr().lock())?;
    progress.finish();
    // The process ends right after: the layouts need not be freed one by one (see `count`).
    std::mem::forget(traces);
    if let Err(e) = out.flush() {
        if e.kind() != io::ErrorKind::BrokenPipe {
            return Err(e.into());
        }
    }
    Ok(if outcome.errors > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}
