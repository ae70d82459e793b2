//! `tracekit analyze NAME[,NAME...] [options] PATH...`: the lttng-analyses equivalents.
//! Several analyses share one pass over the trace.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use analysis::lami::{error_json, metadata_json};
use analysis::{Common, Metadata};
use clap::{Args, ValueEnum};

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
    #[arg(required_unless_present = "metadata")]
    pub paths: Vec<PathBuf>,
    /// Print LAMI 1.0 JSON (as `lttng-NAME-mi`).
    #[arg(long)]
    pub mi: bool,
    /// Print the LAMI metadata (table classes) of the analysis and exit.
    #[arg(long)]
    pub metadata: bool,
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
    #[arg(long, alias = "top", default_value_t = 10)]
    pub limit: usize,
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
    /// Accepted for lttng-analyses compatibility.
    #[arg(long, hide = true)]
    pub no_progress: bool,
    /// Accepted for lttng-analyses compatibility.
    #[arg(long, hide = true)]
    pub no_color: bool,
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

/// Parses a time: ns since the epoch, `YYYY-MM-DD HH:MM:SS[.ns]`, or `HH:MM:SS[.ns]` on the
/// day of `day_of` (ns since the epoch).
pub fn parse_time(s: &str, day_of: i64) -> Result<i64, String> {
    let s = s.trim();
    if let Ok(v) = s.parse::<i64>() {
        return Ok(v);
    }
    let bad = || format!("invalid time '{s}' (expected [YYYY-MM-DD ]HH:MM:SS[.ns])");
    let (date, time) = match s.split_once(' ') {
        Some((d, t)) => (Some(d), t),
        None => (None, s),
    };
    let (hms, frac) = match time.split_once('.') {
        Some((a, b)) => (a, Some(b)),
        None => (time, None),
    };
    let parts: Vec<i64> = hms
        .split(':')
        .map(|p| p.parse::<i64>())
        .collect::<Result<_, _>>()
        .map_err(|_| bad())?;
    if parts.len() != 3 {
        return Err(bad());
    }
    let mut ns = (parts[0] * 3600 + parts[1] * 60 + parts[2]) * 1_000_000_000;
    if let Some(f) = frac {
        if f.is_empty() || f.len() > 9 || !f.bytes().all(|b| b.is_ascii_digit()) {
            return Err(bad());
        }
        ns += f.parse::<i64>().map_err(|_| bad())? * 10i64.pow(9 - f.len() as u32);
    }
    let day_ns = match date {
        None => day_of.div_euclid(86_400 * 1_000_000_000) * 86_400 * 1_000_000_000,
        Some(d) => {
            let p: Vec<i64> = d
                .split('-')
                .map(|x| x.parse::<i64>())
                .collect::<Result<_, _>>()
                .map_err(|_| bad())?;
            if p.len() != 3 {
                return Err(bad());
            }
            days_from_civil(p[0], p[1], p[2]) * 86_400 * 1_000_000_000
        }
    };
    Ok(day_ns + ns)
}

fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
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
    let mut names: Vec<Name> = Vec::new();
    for n in &a.names.0 {
        if !names.contains(n) {
            names.push(*n);
        }
    }
    if a.metadata {
        // One LAMI metadata document per analysis, one per line.
        for n in &names {
            println!("{}", metadata_json(metadata_of(*n)));
        }
        return Ok(ExitCode::SUCCESS);
    }
    let refresh = match a.refresh.as_deref().map(analysis::parse_duration) {
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
        ..Default::default()
    };
    if a.sync {
        let session = crate::sync_cmd::session_for(&traces, None, 60.0)?;
        for m in crate::sync_cmd::verdicts(&session) {
            eprintln!("tracekit: sync: {m}");
        }
        common.time_map = Some(analysis::driver::SharedTimeMap(std::sync::Arc::new(
            session.time_maps(),
        )));
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
                match parse_time(&s, day) {
                    Ok(v) => *dst = Some(v),
                    Err(m) => return Ok(fail(a.mi, &m)),
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
    fn times() {
        let day = 1_457_113_582_794_565_804;
        assert_eq!(
            parse_time("17:46:22.794565804", day).unwrap(),
            1_457_113_582_794_565_804
        );
        assert_eq!(
            parse_time("2016-03-04 17:46:22.5", 0).unwrap(),
            1_457_113_582_500_000_000
        );
        assert_eq!(parse_time("12", 0).unwrap(), 12);
        assert!(parse_time("1:2", 0).is_err());
    }
}
