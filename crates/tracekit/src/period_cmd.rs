//! The options of `tracekit analyze periodlog|periodtop|periodstats|periodfreq`.

use clap::Args;

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
