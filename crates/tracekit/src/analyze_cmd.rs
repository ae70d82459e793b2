//! `tracekit analyze NAME[,NAME...] [options] PATH...`: the lttng-analyses equivalents.
//! Several analyses share one pass over the trace.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use analysis::lami::{error_json, metadata_json};
use analysis::{Common, Metadata};
use clap::{Args, ValueEnum};
use pipeline::time::{parse_analyses_duration, parse_analyses_time};

/// The analyses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Name {
    Cputop,
    Memtop,
    Syscallstats,
    Irqstats,
    Irqlog,
    Irqfreq,
    Schedlog,
    Schedfreq,
    Schedtop,
    Schedstats,
    Iolatencystats,
    Iolatencyfreq,
    Periodlog,
    Periodtop,
    Periodstats,
    Periodfreq,
    Iolatencytop,
    Iolog,
    Iousagetop,
}

/// The analyses named on the command line.
#[derive(Debug, Clone)]
pub struct Names(pub Vec<Name>);

fn parse_names(s: &str) -> Result<Names, String> {
    s.split(',')
        .map(|n| {
            Name::from_str(n.trim(), true).map_err(|_| {
                let all: Vec<String> = Name::value_variants().iter().map(|v| name_of(*v)).collect();
                format!(
                    "unknown analysis '{}' (one of: {})",
                    n.trim(),
                    all.join(", ")
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

/// lttng-analyses' command families: the analysis of each mode (log, top, stats, freq,
/// usage), which are also the family's members.
const FAMILIES: &[[Option<Name>; 5]] = {
    use Name::*;
    &[
        [None, Some(Cputop), None, None, None],
        [None, Some(Memtop), None, None, None],
        [Some(Irqlog), None, Some(Irqstats), Some(Irqfreq), None],
        [
            Some(Schedlog),
            Some(Schedtop),
            Some(Schedstats),
            Some(Schedfreq),
            None,
        ],
        [
            Some(Iolog),
            Some(Iolatencytop),
            Some(Iolatencystats),
            Some(Iolatencyfreq),
            Some(Iousagetop),
        ],
        [
            Some(Periodlog),
            Some(Periodtop),
            Some(Periodstats),
            Some(Periodfreq),
            None,
        ],
    ]
};

/// `names` and, after them, the analyses `modes` add; an error names a mode that no named
/// analysis has (as lttng-analyses rejects `lttng-cputop --stats`).
fn with_modes(names: &[Name], modes: Modes) -> Result<Vec<Name>, String> {
    let flags = [
        ("--log", modes.log),
        ("--top", modes.top),
        ("--stats", modes.stats),
        ("--freq", modes.freq),
        ("--usage", modes.usage),
    ];
    let mut out: Vec<Name> = Vec::new();
    for n in names {
        if !out.contains(n) {
            out.push(*n);
        }
    }
    for (mode, (flag, set)) in flags.into_iter().enumerate() {
        if !set {
            continue;
        }
        let added: Vec<Name> = FAMILIES
            .iter()
            .filter(|family| names.iter().any(|n| family.contains(&Some(*n))))
            .filter_map(|family| family[mode])
            .collect();
        if added.is_empty() {
            let named: Vec<String> = names.iter().map(|n| name_of(*n)).collect();
            return Err(format!(
                "{flag}: not an output mode of {}",
                named.join(", ")
            ));
        }
        for n in added {
            if !out.contains(&n) {
                out.push(n);
            }
        }
    }
    Ok(out)
}

/// The arguments of `tracekit analyze` for a run under one of lttng-analyses' command names
/// (`lttng-NAME` or `lttng-NAME-mi`, as `tracekit lami-links` makes them): `args` (the
/// process's, program first) with `analyze NAME [--mi]` in place of the program. None for
/// any other program name.
pub fn lttng_command_args(args: &[std::ffi::OsString]) -> Option<Vec<std::ffi::OsString>> {
    let program = std::path::Path::new(args.first()?).file_name()?.to_str()?;
    let command = program.strip_prefix("lttng-")?;
    let (name, mi) = match command.strip_suffix("-mi") {
        Some(n) => (n, true),
        None => (command, false),
    };
    let name = Name::from_str(name, false).ok()?;
    let mut out: Vec<std::ffi::OsString> = vec!["tracekit".into(), "analyze".into()];
    out.push(name_of(name).into());
    if mi {
        out.push("--mi".into());
    }
    out.extend(args[1..].iter().cloned());
    Some(out)
}

/// Every analysis name, as `tracekit analyze` takes it.
pub fn all_names() -> Vec<String> {
    Name::value_variants().iter().map(|n| name_of(*n)).collect()
}

/// `--test-compatibility`: whether `paths` can be analysed (they open, and one of them is a
/// kernel trace); the reason when not.
fn compatibility(paths: &[PathBuf]) -> Result<(), String> {
    let traces = ctf::open_all(paths).map_err(|e| e.to_string())?;
    let kernel = traces.iter().any(|t| {
        t.class.env_str("domain") == Some("kernel")
            || t.class
                .streams
                .values()
                .any(|s| s.events.values().any(|e| e.name == "sched_switch"))
    });
    if kernel {
        Ok(())
    } else {
        let shown: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
        Err(format!(
            "{}: no kernel trace (the analyses read LTTng kernel events)",
            shown.join(", ")
        ))
    }
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

fn metadata_of(n: Name) -> &'static Metadata {
    match n {
        Name::Cputop => &analysis::cputop::METADATA,
        Name::Memtop => &analysis::memtop::METADATA,
        Name::Syscallstats => &analysis::syscallstats::METADATA,
        Name::Irqstats | Name::Irqlog | Name::Irqfreq => &analysis::irq::METADATA,
        Name::Iolatencystats
        | Name::Iolatencyfreq
        | Name::Iolatencytop
        | Name::Iolog
        | Name::Iousagetop => &analysis::io::METADATA,
        Name::Schedlog | Name::Schedtop | Name::Schedstats | Name::Schedfreq => {
            &analysis::sched::METADATA
        }
        Name::Periodlog | Name::Periodtop | Name::Periodstats | Name::Periodfreq => {
            &analysis::period::METADATA
        }
    }
}

fn fail(mi: bool, msg: &str) -> ExitCode {
    if mi {
        println!("{}", error_json(msg));
    } else {
        eprintln!("tracekit analyze: error: {msg}");
    }
    ExitCode::from(1)
}

fn name_of(n: Name) -> String {
    n.to_possible_value().expect("named").get_name().to_string()
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
    let names = match with_modes(&a.names.0, a.modes) {
        Ok(n) => n,
        Err(m) => return Ok(fail(a.mi, &m)),
    };
    if a.test_compatibility {
        return Ok(match compatibility(&a.paths) {
            Ok(()) => ExitCode::SUCCESS,
            Err(m) => fail(a.mi, &m),
        });
    }
    if a.metadata {
        // One LAMI metadata document per analysis, one per line.
        for n in &names {
            println!("{}", metadata_json(metadata_of(*n)));
        }
        return Ok(ExitCode::SUCCESS);
    }
    let refresh = match a.refresh.as_deref().map(parse_analyses_duration) {
        None => None,
        Some(Ok(r)) => Some(r),
        Some(Err(m)) => return Ok(fail(a.mi, &format!("--refresh: {m}"))),
    };
    let (period_names, kernel_names): (Vec<Name>, Vec<Name>) = names
        .iter()
        .partition(|n| crate::period_cmd::cmd_of(**n).is_some());
    if refresh.is_some() && !period_names.is_empty() {
        // As lttng-analyses: the refresh periods and user-defined periods are exclusive.
        return Ok(fail(a.mi, "cannot use --refresh with the period* analyses"));
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
            &traces,
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
            .filter_map(|n| crate::period_cmd::cmd_of(*n))
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
    // The process ends right after: freeing every cell one by one (~150 k of them for a large
    // trace's syscallstats, ~3 % of the run) would be wasted work.
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

/// Runs the (non-period) analyses `names` in one pass. Text: prints each period's results as
/// the period ends. `--mi`: returns the tables (of each analysis in turn; with several refresh
/// periods grouped by class as lttng-analyses does, then the summary table).
fn run_kernel(
    a: &AnalyzeArgs,
    traces: &[std::sync::Arc<ctf::Trace>],
    common: &Common,
    names: &[Name],
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
    let strs: Vec<String> = names.iter().map(|n| name_of(*n)).collect();
    let strs: Vec<&str> = strs.iter().map(|s| s.as_str()).collect();
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
                text.push_str(&analysis::text::render_with(
                    metadata_of(names[i]),
                    t,
                    !a.no_charts,
                ));
            }
            text.push('\n');
        }
        if let Err(e) = emit(|w| w.write_all(text.as_bytes())) {
            io_err = Some(e);
        }
    };
    match analysis::run_names(traces, &strs, common, &opts, refresh, &mut report) {
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
    Ok(Ok(analysis::mi_tables(&strs, periods)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lttng_command_names() {
        let args = |v: &[&str]| -> Vec<std::ffi::OsString> { v.iter().map(|s| s.into()).collect() };
        assert_eq!(
            lttng_command_args(&args(&[
                "/usr/bin/lttng-iolatencystats-mi",
                "--limit",
                "3",
                "t"
            ])),
            Some(args(&[
                "tracekit",
                "analyze",
                "iolatencystats",
                "--mi",
                "--limit",
                "3",
                "t"
            ]))
        );
        assert_eq!(
            lttng_command_args(&args(&["lttng-periodlog", "t"])),
            Some(args(&["tracekit", "analyze", "periodlog", "t"]))
        );
        for other in [
            "tracekit",
            "lttng-analyses-record",
            "lttng-track-process",
            "lttng-",
            "lttng--mi",
            "lttng-CPUTOP",
            "my-lttng-cputop",
        ] {
            assert_eq!(lttng_command_args(&args(&[other, "t"])), None, "{other}");
        }
    }
}
