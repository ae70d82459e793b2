//! `tracekit print`: Babeltrace 2 compatible text output of merged traces.

use std::io::{self, BufWriter, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use crate::pipeline::{print_parallel, PrintSetup};
use crate::progress::Progress;
use crate::timefmt::{has_date, parse_time, TimeFormatter};

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
    for t in &traces {
        for e in &t.errors {
            eprintln!("tracekit: warning: {e}");
        }
    }
    let tz = TimeFormatter::new(args.clock_gmt).tz().clone();
    let mut readers: Vec<ctf::StreamReader> = traces.iter().flat_map(|t| t.readers()).collect();
    // Where the streams' LTTng indexes allow, the packets that end before `--begin` are not
    // read, as Babeltrace 2 seeks. A time without a date takes the first message's date:
    // found first, the way `print_parallel` would find it reading every packet.
    let mut reference: Option<Option<i64>> = None;
    if let (Some(b), false) = (&args.begin, args.sync) {
        if !has_date(b) || args.end.as_deref().is_some_and(|e| !has_date(e)) {
            reference = Some(first_message_time(&traces));
        }
        if let Ok(ns) = parse_time(b, &tz, reference.flatten()) {
            for r in &mut readers {
                r.seek_ns(ns);
            }
        }
    }
    let mut setup = PrintSetup {
        gmt: args.clock_gmt,
        tz: Some(tz.clone()),
        time_map: None,
    };
    if args.sync {
        let session = crate::sync_cmd::session_for(&traces, None, 60.0)?;
        for m in crate::sync_cmd::verdicts(&session) {
            eprintln!("tracekit: sync: {m}");
        }
        setup.time_map = Some(std::sync::Arc::new(session.time_maps()));
    }
    let stdout = io::stdout();
    let mut out = BufWriter::with_capacity(1 << 16, stdout.lock());
    let progress = Progress::for_traces(&traces);
    let bounds = |first: Option<i64>| -> Result<Option<(i64, i64)>, String> {
        if args.begin.is_none() && args.end.is_none() {
            return Ok(None);
        }
        // After a seek, the first message read is not the trace's first.
        let first = reference.unwrap_or(first);
        let b = match &args.begin {
            Some(s) => parse_time(s, &tz, first)?,
            None => i64::MIN,
        };
        let e = match &args.end {
            Some(s) => parse_time(s, &tz, first)?,
            None => i64::MAX,
        };
        Ok(Some((b, e)))
    };
    let outcome = print_parallel(readers, setup, &mut out, bounds, &progress)?;
    progress.finish();
    // The process ends right after: the layouts need not be freed one by one (see `count`).
    std::mem::forget(traces);
    if let Err(e) = out.flush() {
        if e.kind() != io::ErrorKind::BrokenPipe {
            return Err(e.into());
        }
    }
    Ok(if outcome.errors > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// The time `print_parallel` takes as the first of `traces` when it reads every packet: the
/// smallest time of the streams' first messages (an event's, a loss report's beginning), None
/// when one of them has none (an error, no clock) or no stream has a message.
pub(crate) fn first_message_time(traces: &[std::sync::Arc<ctf::Trace>]) -> Option<i64> {
    let mut first = i64::MAX;
    for mut r in traces.iter().flat_map(|t| t.readers()) {
        let time = match r.next() {
            Some(Ok(ctf::Message::Event)) => r.event().time_ns(),
            Some(Ok(m)) => m.time_ns(),
            Some(Err(_)) => None,
            None => continue,
        };
        first = first.min(time.unwrap_or(i64::MIN));
    }
    (first != i64::MAX && first != i64::MIN).then_some(first)
}
