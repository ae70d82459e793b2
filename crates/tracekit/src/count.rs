//! `tracekit count`: decode everything, in parallel per stream, and count.

use std::path::PathBuf;
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct CountArgs {
    /// Trace directories, or directories holding traces (searched recursively).
    #[arg(required = true)]
    pub paths: Vec<PathBuf>,
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: &CountArgs) -> Result<ExitCode, Box<dyn std::error::Error>> {
    Ok(text::cli::count(&args.paths, args.json)?)
}
