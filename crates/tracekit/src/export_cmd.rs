//! `tracekit export --format FORMAT -o OUT PATH...`: traces written in another format for
//! other tools: Parquet tables for Spark and DuckDB (cargo feature `parquet`), Perfetto's
//! protobuf trace (cargo feature `perfetto`).

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use ::pipeline::ReadOptions;

/// The output formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// Parquet tables (event, sched_slice, thread_state, syscall, irq, block_io, net_packet,
    /// thread, process, trace), Hive-partitioned by host and trace (a directory).
    Parquet,
    /// Perfetto's protobuf trace (a file): CPU tracks, thread states, IRQs, system calls.
    Perfetto,
}

#[derive(clap::Args)]
pub struct ExportArgs {
    #[command(flatten)]
    pub read: crate::read_args::ReadArgs,
    /// The output format.
    #[arg(long, value_enum)]
    pub format: Format,
    /// Output: a directory for parquet (absent or empty), a file for perfetto.
    #[arg(short, long)]
    pub output: PathBuf,
    /// Parquet: the `event` table keeps only the events whose names match one of these
    /// patterns (`*` any characters, `?` one), comma-separated; the derived tables see every
    /// event.
    #[arg(long, value_delimiter = ',')]
    pub names: Vec<String>,
    /// Parquet: write only these tables, comma-separated (`trace` is always written).
    #[arg(long, value_delimiter = ',')]
    pub tables: Vec<String>,
    /// Parquet: the zstd level of every table (1-22; higher: smaller files, slower). Default 3
    /// for `event`, 1 for the others.
    #[arg(long, value_parser = clap::value_parser!(i32).range(1..=22))]
    pub zstd_level: Option<i32>,
}

pub fn run(args: &ExportArgs) -> Result<ExitCode, Box<dyn std::error::Error>> {
    let (traces, read) = args.read.open()?;
    if traces.is_empty() {
        return Err("no trace found".into());
    }
    match args.format {
        Format::Parquet => parquet(args, &traces, &read),
        Format::Perfetto => perfetto(args, traces, read),
    }
}

#[cfg(not(feature = "parquet"))]
fn parquet(
    _: &ExportArgs,
    _: &[Arc<ctf::Trace>],
    _: &ReadOptions,
) -> Result<ExitCode, Box<dyn std::error::Error>> {
    Err("this tracekit was built without Parquet export (cargo feature `parquet`)".into())
}

#[cfg(feature = "parquet")]
fn parquet(
    args: &ExportArgs,
    traces: &[Arc<ctf::Trace>],
    read: &ReadOptions,
) -> Result<ExitCode, Box<dyn std::error::Error>> {
    use export::parquet::{export_traces, ParquetOptions, Tables};
    let mut options = ParquetOptions::new(&args.output);
    options.names = export::NameFilter::new(&args.names);
    if !args.tables.is_empty() {
        options.tables = Tables::parse(&args.tables)?;
    }
    options.zstd_level = args.zstd_level;
    let started = std::time::Instant::now();
    let report = export_traces(traces, read, &options)?;
    for d in report.diagnostics() {
        eprintln!("tracekit: {d}");
    }
    eprintln!(
        "{}",
        report.summary(&args.output, started.elapsed().as_secs_f64())
    );
    Ok(if report.damaged() {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

#[cfg(not(feature = "perfetto"))]
fn perfetto(
    _: &ExportArgs,
    _: Vec<Arc<ctf::Trace>>,
    _: ReadOptions,
) -> Result<ExitCode, Box<dyn std::error::Error>> {
    Err("this tracekit was built without Perfetto export (cargo feature `perfetto`)".into())
}

#[cfg(feature = "perfetto")]
fn perfetto(
    args: &ExportArgs,
    traces: Vec<Arc<ctf::Trace>>,
    read: ReadOptions,
) -> Result<ExitCode, Box<dyn std::error::Error>> {
    use export::perfetto::{export_files, PerfettoOptions};
    let source = ::pipeline::FileSource::new(traces, read);
    let (report, summary) = export_files(
        &source,
        PerfettoOptions {
            file: args.output.clone(),
        },
    )?;
    let code = crate::read_args::report(&summary);
    eprintln!("{}", report.summary());
    Ok(code)
}
