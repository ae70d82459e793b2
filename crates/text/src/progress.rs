//! Progress displays for long reads (`tracekit print`, `count`, `analyze`, `view`): shown on a
//! terminal, silent when stderr is piped.

use std::io::IsTerminal;
use std::sync::Arc;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// Counts decoded events on a spinner line (thread-safe).
pub struct Progress {
    bar: Option<ProgressBar>,
}

impl Progress {
    /// A progress line for reading `traces`, or a silent one when stderr is not a terminal.
    pub fn for_traces(traces: &[Arc<ctf::Trace>]) -> Self {
        if !worth_showing(traces) {
            return Progress { bar: None };
        }
        let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
        bar.set_style(
            ProgressStyle::with_template(
                "{spinner} {human_pos} events decoded ({per_sec}, {elapsed})",
            )
            .unwrap_or_else(|_| ProgressStyle::default_spinner()),
        );
        bar.enable_steady_tick(Duration::from_millis(200));
        Progress { bar: Some(bar) }
    }

    /// Adds `n` decoded events.
    pub fn add(&self, n: u64) {
        if let Some(b) = &self.bar {
            b.inc(n);
        }
    }

    /// Whether the line is shown (stderr is a terminal and the traces are large).
    pub fn shown(&self) -> bool {
        self.bar.is_some()
    }

    /// Removes the progress line.
    pub fn finish(&self) {
        if let Some(b) = &self.bar {
            b.finish_and_clear();
        }
    }
}

impl pipeline::Progress for Progress {
    fn at(&self, p: pipeline::ProgressPoint) {
        if let Some(b) = &self.bar {
            b.set_position(p.events);
        }
    }

    fn done(&self, _events: u64) {}
}

/// Whether a progress display is wanted for reading `traces`: stderr is a terminal and the
/// traces are large (small ones finish before a bar would be useful).
fn worth_showing(traces: &[Arc<ctf::Trace>]) -> bool {
    if !std::io::stderr().is_terminal() {
        return false;
    }
    let bytes: u64 = traces
        .iter()
        .flat_map(|t| t.streams.iter().flat_map(|s| s.files.iter()))
        .filter_map(|f| std::fs::metadata(f).ok())
        .map(|m| m.len())
        .sum();
    bytes >= 32 << 20
}

/// A bar over an analysis' time range (`tracekit analyze` on a terminal), fed by its reads.
pub struct RangeBar {
    bar: ProgressBar,
}

impl RangeBar {
    /// A bar for analysing `traces`; None when stderr is not a terminal or they are small.
    pub fn for_traces(traces: &[Arc<ctf::Trace>]) -> Option<Self> {
        if !worth_showing(traces) {
            return None;
        }
        let bar = ProgressBar::with_draw_target(Some(1000), ProgressDrawTarget::stderr());
        bar.set_style(
            ProgressStyle::with_template("{bar:40} {percent:>3}% {msg} ({elapsed})")
                .unwrap_or_else(|_| ProgressStyle::default_bar()),
        );
        Some(RangeBar { bar })
    }
}

impl pipeline::Progress for RangeBar {
    fn at(&self, p: pipeline::ProgressPoint) {
        // The message first: setting the position may draw the bar.
        self.bar.set_message(format!("{} events read", p.events));
        self.bar.set_position((p.fraction() * 1000.0) as u64);
    }

    fn done(&self, _events: u64) {
        self.bar.finish_and_clear();
    }
}
