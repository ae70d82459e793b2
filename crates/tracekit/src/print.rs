//! `tracekit print`: Babeltrace 2 compatible text output of merged traces.

use std::io::{self, BufWriter, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use ctf::Message;

use crate::progress::Progress;
use crate::text::{Loss, TextPrinter};
use crate::timefmt::{parse_time, TimeFormatter};

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
}

pub fn run(args: &PrintArgs) -> Result<ExitCode, Box<dyn std::error::Error>> {
    let traces = ctf::open_all(&args.paths)?;
    let mut failed = false;
    for t in &traces {
        for e in &t.errors {
            eprintln!("tracekit: warning: {e}");
        }
    }
    let times = TimeFormatter::new(args.clock_gmt);
    let tz = times.tz().clone();
    let mut printer = TextPrinter::new(times);
    let mut merger = ctf::Merger::new(&traces);
    if args.sync {
        let session = crate::sync_cmd::session_for(&traces, None, 60.0)?;
        for m in crate::sync_cmd::verdicts(&session) {
            eprintln!("tracekit: sync: {m}");
        }
        merger = merger.with_time_map(std::sync::Arc::new(session.time_maps()));
    }
    let stdout = io::stdout();
    let mut out = BufWriter::with_capacity(1 << 16, stdout.lock());
    let mut bounds: Option<(i64, i64)> = None;
    let mut progress = Progress::for_traces(&traces);
    let mut reported_errors = 0;
    let mut reported_warnings = 0usize;
    while let Some(msg) = merger.next() {
        let msg = msg.clone();
        let time = merger.current_time();
        if bounds.is_none() && (args.begin.is_some() || args.end.is_some()) {
            let b = match &args.begin {
                Some(s) => parse_time(s, &tz, time)?,
                None => i64::MIN,
            };
            let e = match &args.end {
                Some(s) => parse_time(s, &tz, time)?,
                None => i64::MAX,
            };
            bounds = Some((b, e));
        }
        if let (Some((b, e)), Some(t)) = (bounds, time) {
            if t < b {
                continue;
            }
            if t > e {
                break;
            }
        }
        let res = match msg {
            Message::Event => {
                progress.tick();
                let ev = merger.event().expect("event message");
                printer.event(&mut out, &ev, time)
            }
            Message::DiscardedEvents {
                count,
                begin_ns,
                end_ns,
            }
            | Message::DiscardedPackets {
                count,
                begin_ns,
                end_ns,
            } => {
                let what = if matches!(msg, Message::DiscardedEvents { .. }) {
                    "event"
                } else {
                    "packet"
                };
                let reader = merger
                    .current_reader()
                    .expect("current message has a reader");
                let loss = Loss {
                    what,
                    count,
                    begin_ns,
                    end_ns,
                    reader,
                };
                // Babeltrace writes these warnings to the standard error, between events.
                out.flush()
                    .and_then(|_| printer.discarded(&mut io::stderr(), &loss))
            }
        };
        if let Err(e) = res {
            if e.kind() == io::ErrorKind::BrokenPipe {
                return Ok(ExitCode::SUCCESS);
            }
            return Err(e.into());
        }
        reported_errors = report_new(&merger.errors, reported_errors, &mut failed);
        reported_warnings = report_warnings(&merger, reported_warnings);
    }
    progress.finish();
    if let Err(e) = out.flush() {
        if e.kind() != io::ErrorKind::BrokenPipe {
            return Err(e.into());
        }
    }
    report_new(&merger.errors, reported_errors, &mut failed);
    report_warnings(&merger, reported_warnings);
    Ok(if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

fn report_new(errors: &[ctf::Error], from: usize, failed: &mut bool) -> usize {
    for e in &errors[from..] {
        eprintln!("tracekit: error: {e}");
        *failed = true;
    }
    errors.len()
}

fn report_warnings(merger: &ctf::Merger, already: usize) -> usize {
    let all: usize = merger.readers().iter().map(|r| r.warnings.len()).sum();
    if all > already {
        let mut seen = 0;
        for r in merger.readers() {
            for w in &r.warnings {
                if seen >= already {
                    eprintln!("tracekit: warning: {w}");
                }
                seen += 1;
            }
        }
    }
    all
}
