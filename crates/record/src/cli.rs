//! What `tracekit record` and `tracekit recover` read from their command line and print: sizes
//! and durations as options give them, the line said when recording starts, the summary.

use std::fmt::Write as _;
use std::time::Duration;

use crate::{RecordOptions, RecordSummary};

/// Errors of the options.
#[derive(Debug, thiserror::Error, PartialEq)]
#[non_exhaustive]
pub enum Error {
    /// A duration that is not a positive number of seconds.
    #[error("--duration must be a positive number of seconds, got {0}")]
    Duration(f64),
}

/// Parses a size: `123`, `64K`, `64M`, `1G` (powers of 1024; lower case too), more than 0.
pub fn parse_size(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let (num, mult) = match t.chars().last().map(|c| c.to_ascii_uppercase()) {
        Some('K') => (&t[..t.len() - 1], 1u64 << 10),
        Some('M') => (&t[..t.len() - 1], 1 << 20),
        Some('G') => (&t[..t.len() - 1], 1 << 30),
        _ => (t, 1),
    };
    let n: u64 = num
        .trim()
        .parse()
        .map_err(|_| format!("bad size `{s}` (e.g. 64M)"))?;
    n.checked_mul(mult)
        .filter(|&v| v > 0)
        .ok_or_else(|| format!("bad size `{s}`"))
}

/// `--duration SECONDS`: a positive, finite number of seconds.
pub fn duration(secs: Option<f64>) -> Result<Option<Duration>, Error> {
    match secs {
        Some(d) if !(d.is_finite() && d > 0.0) => Err(Error::Duration(d)),
        d => Ok(d.map(Duration::from_secs_f64)),
    }
}

/// What the recorder says as it starts (on standard error, for the person running it):
/// how it stops, and with a flight recorder how snapshots are asked for.
pub fn banner(opts: &RecordOptions) -> String {
    let mut s = String::new();
    match (opts.flight_recorder, opts.duration) {
        (Some(_), _) => {
            let pid = std::process::id();
            let _ = writeln!(
                s,
                "tracekit: flight recorder on (pid {pid}); `kill -USR1 {pid}` writes a snapshot, \
                 Ctrl-C stops"
            );
            if !opts.snapshot_on.is_empty() {
                let rules: Vec<String> = opts.snapshot_on.iter().map(|r| r.to_string()).collect();
                let _ = writeln!(
                    s,
                    "tracekit: snapshot on {} (at most one per {} ms)",
                    rules.join(", "),
                    opts.snapshot_debounce.as_millis()
                );
            }
        }
        (None, Some(d)) => {
            let _ = writeln!(s, "tracekit: recording for {:.1} s", d.as_secs_f64());
        }
        (None, None) => s.push_str("tracekit: recording until Ctrl-C\n"),
    }
    s
}

/// The summary `tracekit record` prints after recording: the traces, the events and their
/// rate, the losses, what the eBPF helpers added (stacks when `stacks` were asked for), the
/// size and the most frequent event classes.
pub fn summary_text(s: &RecordSummary, stacks: bool) -> String {
    let mut o = String::new();
    for t in &s.traces {
        let _ = writeln!(o, "trace: {}", t.display());
    }
    let secs = s.elapsed.as_secs_f64();
    let _ = writeln!(
        o,
        "events: {} ({:.0}/s over {:.2} s), statedump {}, per CPU {:?}",
        s.events,
        s.events as f64 / secs.max(1e-9),
        secs,
        s.statedump_events,
        s.per_cpu
    );
    let _ = writeln!(
        o,
        "lost in the kernel buffers: {} (pages flagged: {}, counts stored: {})",
        s.discarded, s.missed_pages, s.missed_stored
    );
    if s.unknown_syscalls > 0 || s.malformed > 0 {
        let _ = writeln!(
            o,
            "unknown syscalls: {}, malformed records: {}",
            s.unknown_syscalls, s.malformed
        );
    }
    if s.rebuilt_switches > 0 {
        let _ = writeln!(
            o,
            "context switches rebuilt: {} (the kernel did not trace them)",
            s.rebuilt_switches
        );
    }
    if let Some(n) = &s.net_headers {
        let _ = writeln!(
            o,
            "network headers (eBPF): {} records, {} net events with headers, {} without",
            n.records, n.matched, n.unmatched
        );
    }
    if let Some(n) = s.syscall_strings {
        let _ = writeln!(o, "system-call strings (eBPF): {n} in events");
    }
    if stacks {
        let _ = writeln!(
            o,
            "stacks (eBPF): {} stack events, {} lost (helper buffer full), {} kernel symbols{}",
            s.stacks,
            s.stacks_lost,
            s.stack_symbols,
            s.stack_symbols_off
                .as_ref()
                .map(|w| format!(" ({w})"))
                .unwrap_or_default()
        );
    }
    let _ = writeln!(o, "size: {:.1} MiB", s.bytes as f64 / (1 << 20) as f64);
    for (name, n) in s.per_class.iter().take(15) {
        let _ = writeln!(o, "  {n:>10}  {name}");
    }
    if s.per_class.len() > 15 {
        let _ = writeln!(o, "  ... {} more event classes", s.per_class.len() - 15);
    }
    o
}

/// The summary `tracekit recover` prints: the traces, the events and what was overwritten.
pub fn recover_text(s: &RecordSummary) -> String {
    let mut o = String::new();
    for t in &s.traces {
        let _ = writeln!(o, "trace: {}", t.display());
    }
    let _ = writeln!(
        o,
        "events: {} (statedump {}), per CPU {:?}",
        s.events, s.statedump_events, s.per_cpu
    );
    let _ = writeln!(
        o,
        "lost (overwritten in the kernel buffers since the last snapshot): {}",
        s.discarded
    );
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        assert_eq!(parse_size("64M"), Ok(64 << 20));
        assert_eq!(parse_size("4k"), Ok(4096));
        assert_eq!(parse_size("100"), Ok(100));
        assert_eq!(parse_size(" 1G "), Ok(1 << 30));
        assert!(parse_size("0").is_err());
        assert!(parse_size("abc").is_err());
        assert!(parse_size("99999999999G").is_err());
    }

    #[test]
    fn durations() {
        assert_eq!(duration(None), Ok(None));
        assert_eq!(duration(Some(0.5)), Ok(Some(Duration::from_millis(500))));
        for bad in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            assert!(duration(Some(bad)).is_err(), "{bad}");
        }
    }

    #[test]
    fn banner_says_how_it_stops() {
        let mut o = RecordOptions {
            duration: Some(Duration::from_secs(2)),
            ..Default::default()
        };
        assert_eq!(banner(&o), "tracekit: recording for 2.0 s\n");
        o.duration = None;
        assert_eq!(banner(&o), "tracekit: recording until Ctrl-C\n");
        o.flight_recorder = Some(1 << 20);
        o.snapshot_on = vec!["syscall>50ms".parse().unwrap()];
        o.snapshot_debounce = Duration::from_millis(250);
        let b = banner(&o);
        assert!(b.contains("kill -USR1"), "{b}");
        assert!(b.ends_with("(at most one per 250 ms)\n"), "{b}");
    }

    #[test]
    fn summary_lists_the_top_classes() {
        let s = RecordSummary {
            events: 20,
            per_class: (0..20).map(|i| (format!("c{i}"), 1)).collect(),
            elapsed: Duration::from_secs(2),
            ..Default::default()
        };
        let t = summary_text(&s, false);
        assert!(t.contains("events: 20 (10/s over 2.00 s)"), "{t}");
        assert!(t.ends_with("  ... 5 more event classes\n"), "{t}");
        assert!(!t.contains("stacks"));
        assert!(summary_text(&s, true).contains("stacks (eBPF): 0 stack events"));
    }
}
