//! `tracekit export --format FORMAT -o OUT PATH...`: the events of a read written in another
//! format (`perfetto`: Perfetto's protobuf trace, with the `perfetto` cargo feature).

use std::path::PathBuf;
use std::process::ExitCode;

use ::pipeline::{FileSource, ReadOptions};

/// The output formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// Perfetto's protobuf trace (a file): CPU tracks, thread states, IRQs, system calls.
    Perfetto,
}

#[derive(clap::Args)]
pub struct ExportArgs {
    /// Trace directories, or directories holding traces (searched recursively).
    #[arg(required = true)]
    pub paths: Vec<PathBuf>,
    /// The output format.
    #[arg(long, value_enum)]
    pub format: Format,
    /// Output (a file for `perfetto`).
    #[arg(short, long)]
    pub output: PathBuf,
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
    /// times (each host a machine of its own).
    #[arg(long)]
    pub sync: bool,
}

/// The source of a read as `args` ask.
fn source(args: &ExportArgs) -> Result<FileSource, Box<dyn std::error::Error>> {
    let traces = ctf::open_all(&args.paths)?;
    for t in &traces {
        for e in &t.errors {
            eprintln!("tracekit: warning: {e}");
        }
    }
    let mut read = ReadOptions {
        no_intersection: true,
        ..Default::default()
    };
    if args.sync {
        read.time_map = Some(crate::sync_cmd::time_map(&traces));
    }
    (read.begin, read.end) = text::parse_bounds(
        &traces,
        args.begin.as_deref(),
        args.end.as_deref(),
        &text::time_zone(args.clock_gmt),
        read.time_map.as_ref(),
    )?;
    Ok(FileSource::new(traces, read))
}

/// Prints the read's problems; the exit code: 1 when it had errors (what could be read is
/// written).
fn damage(summary: &pipeline::Summary) -> ExitCode {
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

pub fn run(args: &ExportArgs) -> Result<ExitCode, Box<dyn std::error::Error>> {
    match args.format {
        Format::Perfetto => perfetto(args),
    }
}

#[cfg(feature = "perfetto")]
fn perfetto(args: &ExportArgs) -> Result<ExitCode, Box<dyn std::error::Error>> {
    use export::perfetto::{export_files, PerfettoOptions};
    let source = source(args)?;
    let (report, summary) = export_files(
        &source,
        PerfettoOptions {
            file: args.output.clone(),
        },
    )?;
    let code = damage(&summary);
    let machines = if report.machines.len() > 1 {
        format!(", {} machines", report.machines.len())
    } else {
        String::new()
    };
    eprintln!(
        "Created Perfetto trace `{}` ({} of {} events read, {} packets, {} bytes{machines}).",
        report.file.display(),
        report.exported,
        report.events,
        report.packets,
        report.bytes,
    );
    Ok(code)
}

#[cfg(not(feature = "perfetto"))]
fn perfetto(_: &ExportArgs) -> Result<ExitCode, Box<dyn std::error::Error>> {
    let _ = (source, damage);
    Err(
        "this tracekit was built without Perfetto export: build it with \
         `cargo build --release -p tracekit --features perfetto`"
            .into(),
    )
}
