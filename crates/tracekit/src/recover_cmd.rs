//! `tracekit recover`: a dead flight recorder's kernel buffers to a trace (lttng-crash's job).

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

#[derive(Args, Debug)]
pub struct RecoverArgs {
    /// The output directory of the flight recorder (`record --flight-recorder -o DIR`) that
    /// was killed.
    pub dir: PathBuf,
    /// Trace directory to create.
    #[arg(short = 'o', long = "output")]
    pub output: PathBuf,
    /// Print nothing but errors.
    #[arg(short, long)]
    pub quiet: bool,
}

pub fn run(a: &RecoverArgs) -> Result<ExitCode, Box<dyn std::error::Error>> {
    let s = record::recover(&a.dir, &a.output, !a.quiet)?;
    if !a.quiet {
        print!("{}", record::cli::recover_text(&s));
    }
    Ok(ExitCode::SUCCESS)
}
