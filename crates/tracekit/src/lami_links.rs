//! `tracekit lami-links DIR`: links named as lttng-analyses' commands (`lttng-cputop`,
//! `lttng-cputop-mi`, …) to the tracekit executable. Run by such a name, tracekit is
//! `tracekit analyze NAME [--mi]` (see `analysis::commands::lttng_command`): with DIR early in
//! `PATH`, scripts and Trace Compass's LTTng analyses run tracekit unchanged.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

#[derive(Args, Debug)]
pub struct LamiLinksArgs {
    /// Directory to make the links in (created if missing).
    pub dir: PathBuf,
    /// Replace links (and only links) of these names that point elsewhere.
    #[arg(long)]
    pub force: bool,
}

pub fn run(a: &LamiLinksArgs) -> Result<ExitCode, Box<dyn std::error::Error>> {
    let exe = std::env::current_exe()
        .and_then(|p| p.canonicalize())
        .map_err(|e| format!("cannot find the tracekit executable: {e}"))?;
    let l = analysis::cli::make_links(&exe, &a.dir, a.force)?;
    println!(
        "{}: {} links to {} made, {} replaced, {} already there",
        a.dir.display(),
        l.made,
        exe.display(),
        l.replaced,
        l.kept
    );
    for m in &l.failed {
        eprintln!("tracekit lami-links: error: {m}");
    }
    Ok(if l.failed.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}
