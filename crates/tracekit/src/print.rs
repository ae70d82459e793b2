//! `tracekit print`: babeltrace2 compatible text output of merged traces.

use std::io::{self, BufWriter, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

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

/// The text style the options ask for.
fn style(args: &PrintArgs, colors_supported: bool) -> Result<text::Style, text::StyleError> {
    let choice = match args.color {
        Color::Auto => text::ColorChoice::Auto,
        Color::Always => text::ColorChoice::Always,
        Color::Never => text::ColorChoice::Never,
    };
    let list = |s: &Option<String>| s.as_deref().unwrap_or("").to_string();
    Ok(text::Style {
        names: text::Names::parse(&list(&args.names))?,
        fields: text::Fields::parse(&list(&args.fields))?,
        delta: !args.no_delta,
        cycles: args.clock_cycles,
        seconds: args.clock_seconds,
        date: args.clock_date,
        colors: choice.event_colors(colors_supported, args.output.is_none()),
    })
}

pub fn run(args: &PrintArgs) -> Result<ExitCode, Box<dyn std::error::Error>> {
    if args.output_format == Format::CtfMetadata {
        return ctf_metadata(args);
    }
    let colors_supported = text::colors_supported();
    let style = style(args, colors_supported)?;
    if let Some(urls) = crate::live_cmd::urls(&args.paths) {
        return run_live(args, &urls?, style, colors_supported);
    }
    let mut traces = ctf::open_all(&args.paths)?;
    if args.clock_offset.is_some() || args.clock_offset_ns.is_some() {
        let (s, ns) = (
            args.clock_offset.unwrap_or(0),
            args.clock_offset_ns.unwrap_or(0),
        );
        for t in &mut traces {
            // Just opened: no one else holds the trace.
            if let Some(t) = Arc::get_mut(t) {
                for c in &mut Arc::make_mut(&mut t.class).clocks {
                    c.shift_offset(s, ns);
                }
            }
        }
    }
    for t in &traces {
        for e in &t.errors {
            eprintln!("tracekit: warning: {e}");
        }
    }
    if args.output_format == Format::Dummy {
        return Ok(dummy(traces));
    }
    let progress = std::sync::Arc::new(Progress::for_traces(&traces));
    let mut options = text::PrintOptions {
        gmt: args.clock_gmt,
        begin: args.begin.clone(),
        end: args.end.clone(),
        time_map: None,
        // Only a shown line is told: the read then finds the streams' extent too.
        progress: progress.shown().then(|| progress.clone() as _),
        style,
        warning_colors: colors_supported,
    };
    if args.sync {
        options.time_map = Some(crate::sync_cmd::time_map(&traces));
    }
    let outcome = match &args.output {
        None => write_text(&traces, &options, io::stdout().lock())?,
        Some(path) => {
            let file = std::fs::File::create(path)
                .map_err(|e| format!("cannot create {}: {e}", path.display()))?;
            write_text(&traces, &options, file)?
        }
    };
    progress.finish();
    // babeltrace2 ends by resetting a colour terminal, whatever it printed.
    if colors_supported {
        print!("\x1b[0m");
        let _ = io::stdout().flush();
        eprint!("\x1b[0m");
    }
    // The process ends right after: the layouts need not be freed one by one (see `count`).
    std::mem::forget(traces);
    Ok(if outcome.errors > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// `print net://…`: the sessions' events as they come, or the relay's sessions.
fn run_live(
    args: &PrintArgs,
    urls: &[live::Url],
    style: text::Style,
    colors_supported: bool,
) -> Result<ExitCode, Box<dyn std::error::Error>> {
    if urls.iter().all(|u| u.session.is_none()) {
        crate::live_cmd::list(urls)?;
        return Ok(ExitCode::SUCCESS);
    }
    if args.begin.is_some()
        || args.end.is_some()
        || args.clock_offset.is_some()
        || args.clock_offset_ns.is_some()
        || args.output_format != Format::Text
    {
        return Err(
            "--begin, --end, --clock-offset and --output-format are for trace files, not live inputs"
                .into(),
        );
    }
    let source = crate::live_cmd::source(urls, args.sync)?;
    let options = text::PrintOptions {
        gmt: args.clock_gmt,
        style,
        warning_colors: colors_supported,
        ..Default::default()
    };
    let mut err = io::stderr().lock();
    let outcome = match &args.output {
        None => {
            let mut out = io::stdout().lock();
            let mut sink = text::TextSink::new(
                ::pipeline::Source::traces(&source),
                &options,
                &mut out,
                &mut err,
            );
            ::pipeline::Source::run(&source, &mut sink);
            sink.finish()?
        }
        Some(path) => {
            let mut file = std::fs::File::create(path)
                .map_err(|e| format!("cannot create {}: {e}", path.display()))?;
            let mut sink = text::TextSink::new(
                ::pipeline::Source::traces(&source),
                &options,
                &mut file,
                &mut err,
            );
            ::pipeline::Source::run(&source, &mut sink);
            sink.finish()?
        }
    };
    Ok(if outcome.errors > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// Prints `traces` to `out`; a closed output ends printing quietly.
fn write_text<W: Write>(
    traces: &[Arc<ctf::Trace>],
    options: &text::PrintOptions,
    out: W,
) -> Result<text::Outcome, Box<dyn std::error::Error>> {
    let mut out = BufWriter::with_capacity(1 << 16, out);
    let outcome = text::print(traces, options, &mut out, &mut io::stderr().lock())?;
    if let Err(e) = out.flush() {
        if e.kind() != io::ErrorKind::BrokenPipe {
            return Err(e.into());
        }
    }
    Ok(outcome)
}

/// `--output-format=ctf-metadata`: the metadata text of the trace directory PATH (packets
/// unwrapped), then a new line, as babeltrace2 prints it.
fn ctf_metadata(args: &PrintArgs) -> Result<ExitCode, Box<dyn std::error::Error>> {
    let [dir] = args.paths.as_slice() else {
        return Err("-o ctf-metadata takes exactly one trace directory".into());
    };
    let path = dir.join("metadata");
    let bytes = std::fs::read(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let (_, text) =
        ctf::metadata::metadata_text(&bytes).map_err(|e| format!("{}: {e}", path.display()))?;
    if text.trim().is_empty() {
        return Err(format!("{}: the metadata holds no text", path.display()).into());
    }
    let mut out: Box<dyn Write> = match &args.output {
        Some(p) => Box::new(std::fs::File::create(p).map_err(|e| format!("{}: {e}", p.display()))?),
        None => Box::new(std::io::stdout().lock()),
    };
    writeln!(out, "{text}")?;
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}

/// `--output-format=dummy`: every event decoded, nothing printed but the readers' warnings
/// and decoding errors (babeltrace2's dummy sink prints nothing, loss warnings included).
fn dummy(traces: Vec<Arc<ctf::Trace>>) -> ExitCode {
    let c = text::count_traces(&traces, &|_| {});
    std::mem::forget(traces);
    crate::count::report_diagnostics(&c);
    if c.errors.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}
