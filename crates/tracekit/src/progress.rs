//! Progress display for long reads: shown on a terminal, silent when stderr is piped.

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
        let bytes: u64 = traces
            .iter()
            .flat_map(|t| t.streams.iter().flat_map(|s| s.files.iter()))
            .filter_map(|f| std::fs::metadata(f).ok())
            .map(|m| m.len())
            .sum();
        // Small traces finish before a bar would be useful.
        if !std::io::stderr().is_terminal() || bytes < 32 << 20 {
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

    /// Removes the progress line.
    pub fn finish(&self) {
        if let Some(b) = &self.bar {
            b.finish_and_clear();
        }
    }
}
