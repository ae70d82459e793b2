//! `tracekit print`: babeltrace2 compatible text output of merged traces.

use std::path::PathBuf;
use std::process::ExitCode;

use text::cli::PrintRequest;

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
    /// Names to show, comma-separated: payload, context, scope, header, all or none (as
    /// babeltrace2: listing some hides the others; default payload,context).
    #[arg(long, short = 'n', value_name = "NAME[,NAME]...")]
    pub names: Option<String>,
    /// Fields to show before the event name, comma-separated: trace, trace:hostname,
    /// trace:domain, trace:procname, trace:vpid, loglevel, emf, callsite or all (listing some
    /// hides the others; default trace:hostname,trace:procname,trace:vpid).
    #[arg(long, short = 'f', value_name = "FIELD[,FIELD]...")]
    pub fields: Option<String>,
    /// Do not print the time since the previous event.
    #[arg(long)]
    pub no_delta: bool,
    /// Print times as the clock's cycle count.
    #[arg(long)]
    pub clock_cycles: bool,
    /// Print times as seconds since the epoch.
    #[arg(long)]
    pub clock_seconds: bool,
    /// Print the date with the time.
    #[arg(long)]
    pub clock_date: bool,
    /// Add SEC seconds to every clock's offset (moves the traces' times, --begin/--end apply
    /// after it).
    #[arg(long, value_name = "SEC", allow_negative_numbers = true)]
    pub clock_offset: Option<i64>,
    /// Add NS nanoseconds to every clock's offset (with --clock-offset too).
    #[arg(long, value_name = "NS", allow_negative_numbers = true)]
    pub clock_offset_ns: Option<i64>,
    /// Terminal colours: auto (a colour terminal, output not to a file), always (a colour
    /// terminal) or never; `BABELTRACE_TERM_COLOR=always|never` decides what a colour
    /// terminal is, as for babeltrace2.
    #[arg(long, value_enum, default_value_t = Color::Auto, value_name = "WHEN")]
    pub color: Color,
    /// Output format: text (the default), dummy (read and decode everything, print
    /// nothing but errors) or ctf-metadata (the metadata text of the one trace PATH names,
    /// as `babeltrace2 -o ctf-metadata` prints it); `tracekit convert` writes CTF.
    #[arg(long, short = 'o', value_enum, default_value_t = Format::Text, value_name = "FORMAT")]
    pub output_format: Format,
    /// Write the text to PATH instead of the standard output (warnings stay on the standard
    /// error).
    #[arg(long, short = 'w', value_name = "PATH")]
    pub output: Option<PathBuf>,
}

/// `--color`'s values.
#[derive(Clone, Copy, clap::ValueEnum)]
pub enum Color {
    Auto,
    Always,
    Never,
}

/// `--output-format`'s values.
#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Text,
    Dummy,
    CtfMetadata,
}

pub fn run(args: &PrintArgs) -> Result<ExitCode, Box<dyn std::error::Error>> {
    let req = PrintRequest {
        paths: args.paths.clone(),
        begin: args.begin.clone(),
        end: args.end.clone(),
        gmt: args.clock_gmt,
        names: args.names.clone(),
        fields: args.fields.clone(),
        no_delta: args.no_delta,
        clock_cycles: args.clock_cycles,
        clock_seconds: args.clock_seconds,
        clock_date: args.clock_date,
        clock_offset: args.clock_offset,
        clock_offset_ns: args.clock_offset_ns,
        color: match args.color {
            Color::Auto => text::ColorChoice::Auto,
            Color::Always => text::ColorChoice::Always,
            Color::Never => text::ColorChoice::Never,
        },
        format: match args.output_format {
            Format::Text => text::cli::Format::Text,
            Format::Dummy => text::cli::Format::Dummy,
            Format::CtfMetadata => text::cli::Format::CtfMetadata,
        },
        output: args.output.clone(),
    };
    match crate::live_cmd::urls(&args.paths) {
        Some(urls) if args.output_format != Format::CtfMetadata => {
            // The style's errors come first, as for trace files.
            req.style(false)?;
            let urls = urls?;
            if urls.iter().all(|u| u.session.is_none()) {
                crate::live_cmd::list(&urls)?;
                return Ok(ExitCode::SUCCESS);
            }
            Ok(req.run_live(|| crate::live_cmd::source(&urls, args.sync))?)
        }
        _ => Ok(req.run_files(args.sync.then_some(&crate::sync_cmd::time_map as _))?),
    }
}
