//! `tracekit convert`: the events kept by a time range, event-name patterns and `--sync`,
//! written as CTF in LTTng's layout (babeltrace2's `--begin … --end … -o ctf -w DIR`).

use std::path::PathBuf;
use std::process::ExitCode;

use ::pipeline::{FileSource, ReadOptions, Source};
use export::ctf::{CtfOptions, CtfSink, DEFAULT_PACKET_SIZE};
use export::NameFilter;

#[derive(clap::Args)]
pub struct ConvertArgs {
    /// Trace directories, or directories holding traces (searched recursively).
    #[arg(required = true)]
    pub paths: Vec<PathBuf>,
    /// Output directory (absent or empty). One input trace is written in it; several are
    /// written in subdirectories named by their paths relative to the deepest directory
    /// holding them all.
    #[arg(short, long)]
    pub output: PathBuf,
    /// Drop events before this time: `[YYYY-MM-DD ]HH:MM[:SS[.NNNNNNNNN]]` or `SECONDS[.NNN]`.
    #[arg(long)]
    pub begin: Option<String>,
    /// Drop events after this time (same syntax as --begin).
    #[arg(long)]
    pub end: Option<String>,
    /// Keep only the events whose names match one of these patterns (`*` any characters,
    /// `?` one), comma-separated.
    #[arg(long, value_delimiter = ',')]
    pub names: Vec<String>,
    /// Read times without a time zone as UTC instead of local time.
    #[arg(long)]
    pub clock_gmt: bool,
    /// Synchronize the traces' clocks first (`tracekit sync`) and write the synchronized
    /// times.
    #[arg(long)]
    pub sync: bool,
    /// Keep only the time range every stream covers (babeltrace2's --stream-intersection).
    #[arg(long)]
    pub stream_intersection: bool,
    /// Data packet size of the output streams, in bytes.
    #[arg(long, default_value_t = DEFAULT_PACKET_SIZE)]
    pub packet_size: usize,
}

pub fn run(args: &ConvertArgs) -> Result<ExitCode, Box<dyn std::error::Error>> {
    let traces = ctf::open_all(&args.paths)?;
    for t in &traces {
        for e in &t.errors {
            eprintln!("tracekit: warning: {e}");
        }
    }
    let mut read = ReadOptions {
        no_intersection: !args.stream_intersection,
        ..Default::default()
    };
    if args.sync {
        read.time_map = Some(crate::sync_cmd::time_map(&traces));
    }
    // As `print` reads them: a time without a date takes the first message's.
    (read.begin, read.end) = text::parse_bounds(
        &traces,
        args.begin.as_deref(),
        args.end.as_deref(),
        &text::time_zone(args.clock_gmt),
        read.time_map.as_ref(),
    )?;
    let source = FileSource::new(traces, read);
    let options = CtfOptions {
        dir: args.output.clone(),
        names: NameFilter::new(&args.names),
        packet_size: args.packet_size,
    };
    let sink = CtfSink::new(source.traces(), source.options(), options)?;
    let (report, summary) = export::export(&source, sink)?;
    for w in summary.warning_strings() {
        eprintln!("tracekit: warning: {w}");
    }
    for e in summary.error_strings() {
        eprintln!("tracekit: error: {e}");
    }
    for (dir, events) in &report.traces {
        eprintln!("Created CTF trace `{}` ({events} events).", dir.display());
    }
    Ok(if summary.errors.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
