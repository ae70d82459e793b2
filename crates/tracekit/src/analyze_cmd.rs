//! `tracekit analyze NAME[,NAME...] [options] PATH...`: the lttng-analyses equivalents.
//! Several analyses share one pass over the trace.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use analysis::lami::{error_json, metadata_json};
use analysis::Common;
use clap::Args;
use pipeline::time::{parse_analyses_duration, parse_analyses_time};

/// The analyses named on the command line.
#[derive(Debug, Clone)]
pub struct Names(pub Vec<&'static str>);

fn parse_names(s: &str) -> Result<Names, String> {
    s.split(',')
        .map(|n| {
            analysis::commands::name(n.trim()).ok_or_else(|| {
                format!(
                    "unknown analysis '{}' (one of: {})",
                    n.trim(),
                    analysis::commands::analyses()
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            })
        })
        .collect::<Result<Vec<_>, _>>()
        .map(Names)
}

#[derive(Args, Debug)]
pub struct AnalyzeArgs {
    /// The analysis to run, or several, comma-separated (`cputop,irqstats,memtop`): they
    /// share one pass over the trace (the period* analyses share another one).
    /// Analyses: cputop, memtop, syscallstats, irqstats, irqlog, irqfreq, schedlog, schedfreq,
    /// schedtop, schedstats, iolatencystats, iolatencyfreq, iolatencytop, iolog, iousagetop,
    /// periodlog, periodtop, periodstats, periodfreq.
    #[arg(value_name = "NAME[,NAME...]", value_parser = parse_names)]
    pub names: Names,
    /// Trace directories (or directories holding traces).
    #[arg(required_unless_present_any = ["metadata", "mi_version"])]
    pub paths: Vec<PathBuf>,
    /// Print LAMI 1.0 JSON (as `lttng-NAME-mi`).
    #[arg(long)]
    pub mi: bool,
    /// Print the LAMI metadata (table classes) of the analysis and exit.
    #[arg(long)]
    pub metadata: bool,
    /// Print the LAMI version (1.0) and exit.
    #[arg(long)]
    pub mi_version: bool,
    /// Only check that the traces can be analysed (they open, and one is a kernel trace):
    /// nothing printed if so, else the reason (a LAMI error with --mi) and exit status 1.
    #[arg(long)]
    pub test_compatibility: bool,
    /// With --mi: print progress lines before the results (`FRACTION MESSAGE`, LAMI 1.0),
    /// about every hundredth of the analysed range. (Otherwise a bar shows on a terminal for
    /// large traces.)
    #[arg(long, requires = "mi")]
    pub output_progress: bool,
    /// Start of the analysed range: `[YYYY-MM-DD ]HH:MM:SS[.ns]` (UTC) or ns since the epoch.
    #[arg(long)]
    pub begin: Option<String>,
    /// End of the analysed range (same forms as --begin).
    #[arg(long)]
    pub end: Option<String>,
    /// `[BEGIN,END]` (same forms as --begin).
    #[arg(long)]
    pub timerange: Option<String>,
    /// Only these CPUs (comma-separated).
    #[arg(long, value_delimiter = ',')]
    pub cpu: Option<Vec<u32>>,
    /// Only these thread ids (comma-separated).
    #[arg(long, value_delimiter = ',')]
    pub tid: Option<Vec<i32>>,
    /// Only these command names (comma-separated).
    #[arg(long, value_delimiter = ',')]
    pub procname: Option<Vec<String>>,
    /// Rows of top tables.
    #[arg(long, default_value_t = 10)]
    pub limit: usize,
    /// lttng-analyses' output modes: each adds the analysis of that mode of the same family
    /// (`iolatencytop --stats` is `iolatencytop,iolatencystats`; `--top` of cputop, cputop).
    #[command(flatten)]
    pub modes: Modes,
    /// Minimum duration or latency, µs.
    #[arg(long)]
    pub min: Option<f64>,
    /// Maximum duration or latency, µs.
    #[arg(long)]
    pub max: Option<f64>,
    /// I/O analyses: minimum read/write size, bytes.
    #[arg(long)]
    pub minsize: Option<i64>,
    /// I/O analyses: maximum read/write size, bytes.
    #[arg(long)]
    pub maxsize: Option<i64>,
    /// Only these hard IRQs (comma-separated).
    #[arg(long, value_delimiter = ',')]
    pub irq: Option<Vec<i64>>,
    /// Only these soft IRQ vectors (comma-separated).
    #[arg(long, value_delimiter = ',')]
    pub softirq: Option<Vec<u64>>,
    /// Histogram bins (*freq).
    #[arg(long, default_value_t = 20)]
    pub freq_resolution: usize,
    /// *freq: the same bins (bounds and width) for every histogram: from the smallest to the
    /// largest value of all of them (or --min/--max), kept across --refresh periods.
    #[arg(long)]
    pub freq_uniform: bool,
    /// *freq: the histograms as one table, a column of counts per histogram (implies
    /// --freq-uniform).
    #[arg(long)]
    pub freq_series: bool,
    /// One result per refresh period of this duration: a number with an optional unit (s, ms,
    /// us, ns; default s), e.g. `1`, `0.5s`, `100ms` (not with the period* analyses).
    #[arg(short = 'r', long)]
    pub refresh: Option<String>,
    /// schedstats: total statistics.
    #[arg(long)]
    pub total: bool,
    /// schedstats: per-thread statistics (the default).
    #[arg(long)]
    pub per_tid: bool,
    /// schedstats: per-priority statistics.
    #[arg(long)]
    pub per_prio: bool,
    /// period* options.
    #[command(flatten)]
    pub period: Box<crate::period_cmd::PeriodArgs>,
    /// Analyse every event, not only the range every stream covers.
    #[arg(long)]
    pub no_intersection: bool,
    /// Synchronize the hosts' clocks first (`tracekit sync`) and analyse on the reference's.
    #[arg(long)]
    pub sync: bool,
    /// Reproduce lttng-analyses 0.6.1's event-handling defects (see
    /// crates/analysis/DIFFERENCES.md), to compare with its output.
    #[arg(long)]
    pub lttng_analyses_quirks: bool,
    /// Text output: plain tables, without the bar column of top tables and without histograms
    /// (the `*freq` analyses print their bins as a table).
    #[arg(long)]
    pub no_charts: bool,
    /// Text output: fit tables to this many columns (long lists end with "… and N more",
    /// other long cells wrap; numbers are never cut); 0 for no limit. Default: the `COLUMNS`
    /// environment variable, else the terminal's width, else 100.
    #[arg(long, value_name = "COLUMNS")]
    pub width: Option<usize>,
    /// Times are always UTC (accepted for lttng-analyses compatibility).
    #[arg(long)]
    pub gmt: bool,
    /// No progress bar.
    #[arg(long)]
    pub no_progress: bool,
    /// Accepted for lttng-analyses compatibility.
    #[arg(long, hide = true)]
    pub no_color: bool,
    /// Accepted for lttng-analyses compatibility (tracekit reads no trace twice to validate it).
    #[arg(long, hide = true)]
    pub skip_validation: bool,
    /// Accepted for lttng-analyses compatibility.
    #[arg(long, hide = true)]
    pub progress_use_size: bool,
    /// Accepted for lttng-analyses compatibility.
    #[arg(long, hide = true)]
    pub debug: bool,
}

/// lttng-analyses' mode flags (see [`AnalyzeArgs::modes`]).
#[derive(Args, Debug, Default, Clone, Copy)]
pub struct Modes {
    /// Also the log of the family (irqlog, schedlog, iolog, periodlog).
    #[arg(long)]
    pub log: bool,
    /// Also the top of the family (cputop, memtop, schedtop, iolatencytop, periodtop).
    #[arg(long)]
    pub top: bool,
    /// Also the statistics of the family (irqstats, schedstats, iolatencystats, periodstats).
    #[arg(long)]
    pub stats: bool,
    /// Also the frequency distribution of the family (irqfreq, schedfreq, iolatencyfreq,
    /// periodfreq).
    #[arg(long)]
    pub freq: bool,
    /// Also iousagetop (I/O analyses).
    #[arg(long)]
    pub usage: bool,
}

impl From<Modes> for analysis::commands::Modes {
    fn from(m: Modes) -> Self {
        analysis::commands::Modes {
            log: m.log,
            top: m.top,
            stats: m.stats,
            freq: m.freq,
            usage: m.usage,
        }
    }
}

/// The arguments of `tracekit analyze` for a run under one of lttng-analyses' command names
/// (`lttng-NAME` or `lttng-NAME-mi`, as `tracekit lami-links` makes them): `args` (the
/// process's, program first) with `analyze NAME [--mi]` in place of the program. None for
/// any other program name.
pub fn lttng_command_args(args: &[std::ffi::OsString]) -> Option<Vec<std::ffi::OsString>> {
    let program = std::path::Path::new(args.first()?).file_name()?.to_str()?;
    let (name, mi) = analysis::commands::lttng_command(program)?;
    let mut out: Vec<std::ffi::OsString> = vec!["tracekit".into(), "analyze".into(), name.into()];
    if mi {
        out.push("--mi".into());
    }
    out.extend(args[1..].iter().cloned());
    Some(out)
}

/// `--output-progress`: LAMI progress lines on standard output.
struct ProgressLines;

impl analysis::Progress for ProgressLines {
    fn at(&self, p: analysis::ProgressPoint) {
        let line = format!(
            "{:.4} {}/{}; {} events read\n",
            p.fraction(),
            analysis::text::fmt_ts(p.ts),
            analysis::text::fmt_ts(p.end),
            p.events
        );
        progress_line(&line);
    }

    fn done(&self, events: u64) {
        progress_line(&format!("1 Done: {events} events read\n"));
    }
}

/// Writes a progress line at once (a consumer that went away stops the analysis at its next
/// write of results).
fn progress_line(line: &str) {
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(line.as_bytes()).and_then(|_| out.flush());
}

fn fail(mi: bool, msg: &str) -> ExitCode {
    if mi {
        println!("{}", error_json(msg));
    } else {
        eprintln!("tracekit analyze: error: {msg}");
    }
    ExitCode::from(1)
}

/// Writes `w`'s output, a closed pipe (`| head`) not being an error.
fn emit(
    f: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> Result<(), Box<dyn std::error::Error>> {
    let mut out = crate::output::stdout();
    match f(&mut out).and_then(|_| out.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(e.into()),
        _ => Ok(()),
    }
}

pub fn run(a: &AnalyzeArgs) -> Result<ExitCode, Box<dyn std::error::Error>> {
    if a.mi_version {
        println!("{}", analysis::lami::mi_version_string());
        return Ok(ExitCode::SUCCESS);
    }
    let names = match analysis::commands::with_modes(&a.names.0, a.modes.into()) {
        Ok(n) => n,
        Err(m) => return Ok(fail(a.mi, &m.to_string())),
    };
    if a.test_compatibility {
        return Ok(match analysis::commands::check_compatibility(&a.paths) {
            Ok(()) => ExitCode::SUCCESS,
            Err(m) => fail(a.mi, &m.to_string()),
        });
    }
    if a.metadata {
        // One LAMI metadata document per analysis, one per line.
        for n in &names {
            if let Some(m) = analysis::commands::metadata(n) {
                println!("{}", metadata_json(m));
            }
        }
        return Ok(ExitCode::SUCCESS);
    }
    let refresh = match a.refresh.as_deref().map(parse_analyses_duration) {
        None => None,
        Some(Ok(r)) => Some(r),
        Some(Err(m)) => return Ok(fail(a.mi, &format!("--refresh: {m}"))),
    };
    let (period_names, kernel_names): (Vec<&str>, Vec<&str>) = names
        .iter()
        .partition(|n| analysis::commands::period_cmd(n).is_some());
    if refresh.is_some() && !period_names.is_empty() {
        // As lttng-analyses: the refresh periods and user-defined periods are exclusive.
        return Ok(fail(a.mi, "cannot use --refresh with the period* analyses"));
    }
    if let Some(urls) = crate::live_cmd::urls(&a.paths) {
        return run_live(a, &urls?, &kernel_names, &period_names, refresh);
    }
    let traces = match ctf::open_all(&a.paths) {
        Ok(t) => t,
        Err(e) => return Ok(fail(a.mi, &e.to_string())),
    };
    let mut common = Common {
        cpus: a.cpu.clone(),
        tids: a.tid.clone(),
        procnames: a.procname.clone(),
        no_intersection: a.no_intersection,
        lttng_analyses_quirks: a.lttng_analyses_quirks,
        exit_after: true,
        progress: if a.output_progress {
            Some(std::sync::Arc::new(ProgressLines))
        } else if a.no_progress || refresh.is_some() && !a.mi {
            // (Text results printed during the read would break into the bar's line.)
            None
        } else {
            crate::progress::RangeBar::for_traces(&traces)
                .map(|b| std::sync::Arc::new(b) as std::sync::Arc<dyn analysis::Progress>)
        },
        ..Default::default()
    };
    if a.sync {
        common.time_map = Some(crate::sync_cmd::time_map(&traces));
    }
    if a.begin.is_some() || a.end.is_some() || a.timerange.is_some() {
        let day = analysis::driver::intersection(&traces)
            .map(|r| r.0)
            .unwrap_or(0);
        let (b, e) = match &a.timerange {
            Some(r) => {
                let r = r.trim().trim_start_matches('[').trim_end_matches(']');
                let Some((b, e)) = r.split_once(',') else {
                    return Ok(fail(a.mi, "--timerange: expected [BEGIN,END]"));
                };
                (Some(b.to_string()), Some(e.to_string()))
            }
            None => (a.begin.clone(), a.end.clone()),
        };
        for (src, dst) in [(b, &mut common.begin), (e, &mut common.end)] {
            if let Some(s) = src {
                match parse_analyses_time(&s, day) {
                    Ok(v) => *dst = Some(v),
                    Err(m) => return Ok(fail(a.mi, &m.to_string())),
                }
            }
        }
    }
    // The kernel analyses (one pass), then the period ones (another pass, the period engine
    // reading the events themselves); with --mi, all tables in one document.
    let mut mi_tables: Vec<analysis::Table> = Vec::new();
    let mut read_errors = Vec::new();
    if !kernel_names.is_empty() {
        let several = names.len() > 1;
        match run_kernel(
            a,
            Input::Files(&traces),
            &common,
            &kernel_names,
            refresh,
            several,
            &mut read_errors,
        )? {
            Ok(t) => mi_tables.extend(t),
            Err(code) => return Ok(code),
        }
    }
    if !period_names.is_empty() {
        let cmds: Vec<_> = period_names
            .iter()
            .filter_map(|n| analysis::commands::period_cmd(n))
            .collect();
        let several = names.len() > 1;
        match crate::period_cmd::run(a, &traces, &common, &cmds, several, &mut read_errors)? {
            Ok(t) => mi_tables.extend(t),
            Err(code) => return Ok(code),
        }
    }
    if a.mi {
        emit(|mut w| analysis::lami::write_results(&mut w, &mi_tables))?;
    }
    // The process ends right after: freeing every cell one by one (a large trace's
    // syscallstats has hundreds of thousands) would be wasted work.
    std::mem::forget(mi_tables);
    // Likewise the traces' layouts (one per event class: thousands for a kernel trace).
    std::mem::forget(traces);
    // The results cover every readable event; what could not be read is said, and the exit
    // status says the input was damaged.
    for e in &read_errors {
        eprintln!("tracekit analyze: error: {e}");
    }
    Ok(if read_errors.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// What the analyses read.
#[derive(Clone, Copy)]
enum Input<'a> {
    /// Trace files, opened.
    Files(&'a [std::sync::Arc<ctf::Trace>]),
    /// A live relay's sessions.
    Live(&'a live::LiveSource),
}

/// `analyze NAMES net://…`: the analyses of a live session, each refresh period's results
/// printed as the period ends (without --refresh, once the session is destroyed).
fn run_live(
    a: &AnalyzeArgs,
    urls: &[live::Url],
    kernel_names: &[&str],
    period_names: &[&str],
    refresh: Option<i64>,
) -> Result<ExitCode, Box<dyn std::error::Error>> {
    if !period_names.is_empty() {
        return Ok(fail(
            a.mi,
            "the period* analyses are for trace files, not live inputs",
        ));
    }
    if a.begin.is_some() || a.end.is_some() || a.timerange.is_some() {
        return Ok(fail(
            a.mi,
            "--begin, --end and --timerange are for trace files, not live inputs",
        ));
    }
    let source = match crate::live_cmd::source(urls, a.sync) {
        Ok(s) => s,
        Err(e) => return Ok(fail(a.mi, &e.to_string())),
    };
    let common = Common {
        cpus: a.cpu.clone(),
        tids: a.tid.clone(),
        procnames: a.procname.clone(),
        no_intersection: true,
        lttng_analyses_quirks: a.lttng_analyses_quirks,
        exit_after: true,
        ..Default::default()
    };
    let mut read_errors = Vec::new();
    let several = kernel_names.len() > 1;
    let tables = match run_kernel(
        a,
        Input::Live(&source),
        &common,
        kernel_names,
        refresh,
        several,
        &mut read_errors,
    )? {
        Ok(t) => t,
        Err(code) => return Ok(code),
    };
    if a.mi {
        emit(|mut w| analysis::lami::write_results(&mut w, &tables))?;
    }
    for e in &read_errors {
        eprintln!("tracekit analyze: error: {e}");
    }
    Ok(if read_errors.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// Runs the (non-period) analyses `names` in one pass. Text: prints each period's results as
/// the period ends. `--mi`: returns the tables (of each analysis in turn; with several refresh
/// periods grouped by class as lttng-analyses does, then the summary table).
fn run_kernel(
    a: &AnalyzeArgs,
    input: Input<'_>,
    common: &Common,
    names: &[&str],
    refresh: Option<i64>,
    headings: bool,
    read_errors: &mut Vec<String>,
) -> Result<Result<Vec<analysis::Table>, ExitCode>, Box<dyn std::error::Error>> {
    let us = |v: Option<f64>| v.map(|x| (x * 1000.0).round() as i64);
    let opts = analysis::Options {
        limit: a.limit,
        min: us(a.min),
        max: us(a.max),
        irqs: a.irq.clone(),
        softirqs: a.softirq.clone(),
        freq_resolution: a.freq_resolution,
        freq_uniform: (a.freq_uniform || a.freq_series).then(analysis::stats::Uniform::default),
        freq_series: a.freq_series,
        total: a.total,
        per_tid: a.per_tid,
        per_prio: a.per_prio,
        minsize: a.minsize,
        maxsize: a.maxsize,
    };
    let strs = names;
    let text_opts = analysis::text::TextOptions {
        charts: !a.no_charts,
        width: crate::output::text_width(a.width),
    };
    // --mi: per analysis, each period's tables.
    let mut periods: Vec<(analysis::Range, Vec<Vec<analysis::Table>>)> = Vec::new();
    let mut io_err: Option<Box<dyn std::error::Error>> = None;
    let mut report = |range: analysis::Range, tables: Vec<Vec<analysis::Table>>| {
        if a.mi {
            periods.push((range, tables));
            return;
        }
        if io_err.is_some() {
            return;
        }
        let mut text = String::new();
        for (i, t) in tables.iter().enumerate() {
            if headings {
                text.push_str(&format!("== {} ==\n", strs[i]));
            }
            if t.is_empty() {
                text.push_str(&format!(
                    "Timerange: [{}, {}]\nNo results in the analysed range.\n",
                    analysis::text::fmt_ts(range.begin),
                    analysis::text::fmt_ts(range.end)
                ));
            } else {
                let Some(m) = analysis::commands::metadata(names[i]) else {
                    continue;
                };
                text.push_str(&analysis::text::render_text(m, t, &text_opts));
            }
            text.push('\n');
        }
        if let Err(e) = emit(|w| w.write_all(text.as_bytes())) {
            io_err = Some(e);
        }
    };
    let done = match input {
        Input::Live(source) => {
            analysis::run_names_on(source, strs, common, &opts, refresh, &mut report)
        }
        Input::Files(traces) => {
            analysis::run_names(traces, strs, common, &opts, refresh, &mut report)
        }
    };
    match done {
        Ok(done) => {
            for w in &done.warnings {
                eprintln!("tracekit analyze: warning: {w}");
            }
            read_errors.extend(done.errors);
        }
        Err(e) => return Ok(Err(fail(a.mi, &e.to_string()))),
    }
    if let Some(e) = io_err {
        return Err(e);
    }
    Ok(Ok(analysis::mi_tables(strs, periods)))
}
