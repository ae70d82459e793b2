//! `tracekit count`: decode everything, in parallel per stream, and count.

use std::path::PathBuf;
use std::process::ExitCode;

use crate::progress::Progress;

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
    let traces = ctf::open_all(&args.paths)?;
    let progress = Progress::for_traces(&traces);
    let c = text::count_traces(&traces, &|n| progress.add(n));
    progress.finish();
    // The process ends right after: freeing the layouts of a kernel trace's event
    // classes one by one is a sizeable part of a count (as `analyze` does).
    std::mem::forget(traces);
    report_diagnostics(&c);
    if args.json {
        let v = serde_json::json!({
            "events": c.events,
            "discarded": c.discarded,
            "lost_packets": c.lost_packets,
            "classes": c.classes,
            "begin_ns": c.begin_ns,
            "end_ns": c.end_ns,
            "errors": c.errors,
        });
        println!("{}", serde_json::to_string_pretty(&v)?);
    } else {
        // The widest of the class names and the row labels below them.
        let labels = ["total", "discarded", "lost packets"];
        let width = c
            .classes
            .keys()
            .map(|k| k.chars().count())
            .chain(labels.iter().map(|l| l.len()))
            .max()
            .unwrap_or(0);
        for (name, n) in &c.classes {
            println!("{name:<width$}  {n:>12}");
        }
        println!("{:-<w$}", "", w = width + 14);
        for (label, n) in labels.iter().zip([c.events, c.discarded, c.lost_packets]) {
            println!("{label:<width$}  {n:>12}");
        }
        if let (Some(b), Some(e)) = (c.begin_ns, c.end_ns) {
            println!(
                "time range: {b} .. {e} ns ({}.{:09} s)",
                (e - b) / 1_000_000_000,
                (e - b) % 1_000_000_000
            );
        }
    }
    Ok(if c.errors.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// Writes a count's warnings and decoding errors to the standard error.
pub fn report_diagnostics(c: &text::Counts) {
    for w in &c.warnings {
        eprintln!("tracekit: warning: {w}");
    }
    for e in &c.errors {
        eprintln!("tracekit: error: {e}");
    }
}
