//! The options and output of `tracekit analyze periodlog|periodtop|periodstats|periodfreq`.

use std::io::Write;
use std::process::ExitCode;
use std::sync::Arc;

use analysis::period::{PeriodCmd, PeriodOptions};
use analysis::Common;
use clap::Args;

use crate::analyze_cmd::AnalyzeArgs;

/// Options of the period analyses.
#[derive(Args, Debug, Default)]
pub struct PeriodArgs {
    /// Period definition `NAME[(PARENT)] : BEGIN-EXPR [: END-EXPR]` (several allowed), e.g.
    /// `'switch : $evt.$name == "sched_switch" : $evt.$name == "sched_switch" &&
    /// $evt.prev_tid == $begin.$evt.next_tid'`.
    #[arg(long)]
    pub period: Vec<String>,
    /// Captures `NAME : a = $evt.f, ... [: b = $evt.g, ...]` (at begin, then at end).
    #[arg(long)]
    pub period_captures: Vec<String>,
    /// Only report these periods (comma-separated).
    #[arg(long, value_delimiter = ',')]
    pub select: Option<Vec<String>>,
    /// Per-instance statistics of the selected child periods of this period.
    #[arg(long)]
    pub aggregate_by: Option<String>,
    /// Also report per value of `PERIOD.CAPTURE` (comma-separated for several).
    #[arg(long, value_delimiter = ',')]
    pub group_by: Vec<String>,
    /// periodlog order: `time` (default) or `duration`.
    #[arg(long, default_value = "time")]
    pub order_by: String,
    /// Minimum period duration, µs.
    #[arg(long)]
    pub min_duration: Option<f64>,
    /// Maximum period duration, µs.
    #[arg(long)]
    pub max_duration: Option<f64>,
}

/// Runs the period commands `cmds` on one pass of the period engine. Text: prints each
/// command's report; `--mi`: returns the tables.
pub fn run(
    a: &AnalyzeArgs,
    traces: &[Arc<ctf::Trace>],
    common: &Common,
    cmds: &[PeriodCmd],
    headings: bool,
    read_errors: &mut Vec<String>,
) -> Result<Result<Vec<analysis::Table>, ExitCode>, Box<dyn std::error::Error>> {
    let p = &a.period;
    let us = |v: Option<f64>| v.map(|x| (x * 1000.0).round() as i64);
    let opts = PeriodOptions {
        periods: p.period.clone(),
        captures: p.period_captures.clone(),
        select: p.select.clone(),
        aggregate_by: p.aggregate_by.clone(),
        group_by: p.group_by.clone(),
        order_by_duration: p.order_by == "duration",
        min_duration: us(p.min_duration.or(a.min)),
        max_duration: us(p.max_duration.or(a.max)),
        limit: a.limit,
        freq_resolution: a.freq_resolution,
        freq_uniform: a.freq_uniform || a.freq_series,
        freq_series: a.freq_series,
        reports: cmds.to_vec(),
    };
    let res = match analysis::period::run(traces, common, &opts) {
        Ok(r) => r,
        Err(e) => {
            if a.mi {
                println!("{}", analysis::lami::error_json(&e.to_string()));
            } else {
                eprintln!("tracekit analyze: error: {e}");
            }
            return Ok(Err(ExitCode::from(1)));
        }
    };
    read_errors.extend(res.errors.iter().cloned());
    if a.mi {
        return Ok(Ok(cmds.iter().flat_map(|c| res.tables(*c)).collect()));
    }
    let mut out = crate::output::stdout();
    let mut r = Ok(());
    for c in cmds {
        if headings {
            let name = match c {
                PeriodCmd::Log => "periodlog",
                PeriodCmd::Top => "periodtop",
                PeriodCmd::Stats => "periodstats",
                PeriodCmd::Freq => "periodfreq",
            };
            r = r.and_then(|_| writeln!(out, "== {name} =="));
        }
        r = r.and_then(|_| out.write_all(res.text(*c).as_bytes()));
    }
    match r.and_then(|_| out.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(e.into()),
        _ => Ok(Ok(Vec::new())),
    }
}
