//! `tracekit convert`: the events kept by a time range, event-name patterns and `--sync`,
//! written as CTF in LTTng's layout (babeltrace2's `--begin … --end … -o ctf -w DIR`).

use std::path::PathBuf;
use std::process::ExitCode;

use ::pipeline::{FileSource, Source};
use export::ctf::{CtfOptions, CtfSink, DEFAULT_PACKET_SIZE};
use export::NameFilter;

#[derive(clap::Args)]
pub struct ConvertArgs {
    #[command(flatten)]
    pub read: crate::read_args::ReadArgs,
    /// Output directory (absent or empty). One input trace is written in it; several are
    /// written in subdirectories named by their paths relative to the deepest directory
    /// holding them all.
    #[arg(short, long)]
    pub output: PathBuf,
    /// Keep only the events whose names match one of these patterns (`*` any characters,
    /// `?` one), comma-separated.
    #[arg(long, value_delimiter = ',')]
    pub names: Vec<String>,
    /// Data packet size of the output streams, in bytes.
    #[arg(long, default_value_t = DEFAULT_PACKET_SIZE)]
    pub packet_size: usize,
}

pub fn run(args: &ConvertArgs) -> Result<ExitCode, Box<dyn std::error::Error>> {
    let (traces, read) = args.read.open()?;
    let source = FileSource::new(traces, read);
    let options = CtfOptions {
        dir: args.output.clone(),
        names: NameFilter::new(&args.names),
        packet_size: args.packet_size,
    };
    let sink = CtfSink::new(source.traces(), source.options(), options)?;
    let (report, summary) = export::export(&source, sink)?;
    let code = crate::read_args::report(&summary);
    for (dir, events) in &report.traces {
        eprintln!("Created CTF trace `{}` ({events} events).", dir.display());
    }
    Ok(code)
}
