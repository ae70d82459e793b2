//! `tracekit analyze NAME[,NAME...] [options] PATH...`: the lttng-analyses equivalents.
//! Several analyses share one pass over the trace.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use analysis::cli::{self, us_to_ns, Env, Request};
use analysis::period::PeriodOptions;
use clap::Args;

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

pub fn run(a: &AnalyzeArgs) -> Result<ExitCode, Box<dyn std::error::Error>> {
    let p = &a.period;
    let req = Request {
        names: a.names.0.clone(),
        modes: a.modes.into(),
        paths: a.paths.clone(),
        mi: a.mi,
        metadata: a.metadata,
        mi_version: a.mi_version,
        test_compatibility: a.test_compatibility,
        output_progress: a.output_progress,
        no_progress: a.no_progress,
        begin: a.begin.clone(),
        end: a.end.clone(),
        timerange: a.timerange.clone(),
        cpus: a.cpu.clone(),
        tids: a.tid.clone(),
        procnames: a.procname.clone(),
        options: analysis::Options {
            limit: a.limit,
            minsize: a.minsize,
            maxsize: a.maxsize,
            irqs: a.irq.clone(),
            softirqs: a.softirq.clone(),
            freq_resolution: a.freq_resolution,
            freq_uniform: a.freq_uniform.then(Default::default),
            freq_series: a.freq_series,
            total: a.total,
            per_tid: a.per_tid,
            per_prio: a.per_prio,
            ..Default::default()
        },
        min_us: a.min,
        max_us: a.max,
        refresh: a.refresh.clone(),
        period: PeriodOptions {
            periods: p.period.clone(),
            captures: p.period_captures.clone(),
            select: p.select.clone(),
            aggregate_by: p.aggregate_by.clone(),
            group_by: p.group_by.clone(),
            order_by_duration: p.order_by == "duration",
            min_duration: us_to_ns(p.min_duration),
            max_duration: us_to_ns(p.max_duration),
            ..Default::default()
        },
        no_intersection: a.no_intersection,
        sync: a.sync,
        lttng_analyses_quirks: a.lttng_analyses_quirks,
        no_charts: a.no_charts,
        width: crate::output::text_width(a.width),
    };
    let mut out = crate::output::stdout();
    let mut env = Env {
        out: &mut out,
        err: &mut std::io::stderr(),
        progress_bar: &|t| text::progress::RangeBar::for_traces(t).map(|b| Arc::new(b) as _),
        time_map: &crate::sync_cmd::time_map,
    };
    let plan = match cli::plan(&req, &mut env)? {
        Ok(plan) => plan,
        Err(code) => return Ok(code),
    };
    Ok(match crate::live_cmd::urls(&a.paths) {
        Some(urls) => {
            let urls = urls?;
            plan.run_live(&mut env, || crate::live_cmd::source(&urls, a.sync))?
        }
        None => plan.run_files(&mut env)?,
    })
}
