//! [`export_files`]: trace files exported a stream at a time on each core.

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

use ::ctf::{Message, SkipRule, Trace};
use pipeline::{Diagnostic, FileSource, Source, Summary};
use rayon::prelude::*;

use super::{
    machines_of, preamble, wanted_classes, Cpu, Encoder, PerfettoOptions, PerfettoReport,
    PerfettoSink, Written,
};
use crate::streams::{Place, Range};
use crate::Error;

/// What the export of a stream did.
#[derive(Default)]
struct Outcome {
    counts: [u64; Written::ALL.len()],
    compact: u64,
    /// Events in the range given by the reader.
    events: u64,
    events_read: u64,
    packets: u64,
    bytes: u64,
    errors: Vec<Diagnostic>,
    warnings: Vec<String>,
    failed: Option<std::io::Error>,
}

/// Where the workers write: each reserves room for a chunk of whole packets, then writes it
/// there.
struct Output<'a> {
    file: &'a File,
    end: AtomicU64,
    /// A write failed: the workers stop.
    failed: AtomicBool,
}

impl Output<'_> {
    /// Writes `buf` (whole packets) and empties it.
    fn write(&self, buf: &mut Vec<u8>) -> std::io::Result<()> {
        if buf.is_empty() {
            return Ok(());
        }
        let at = self.end.fetch_add(buf.len() as u64, Ordering::Relaxed);
        let r = self.file.write_all_at(buf, at);
        buf.clear();
        if r.is_err() {
            self.failed.store(true, Ordering::Relaxed);
        }
        r
    }
}

/// Reads stream `s` of `trace` (machine `machine`) and writes its events' packets to `out`.
fn work(range: &Range, trace: &Arc<Trace>, s: usize, machine: u32, out: &Output) -> Outcome {
    let mut r = range.reader(trace, s);
    let (lo, hi) = range.window();
    r.set_skip(Some(&SkipRule {
        wanted: Arc::new(wanted_classes(trace)),
        lo,
        hi,
    }));
    let mut enc = Encoder::new();
    let mut cpu: Option<Cpu> = None;
    let mut o = Outcome::default();
    // Discarded events before the stream's first event written: its first bundle says so.
    let mut lost = false;
    while let Some(m) = r.next() {
        match m {
            Ok(Message::Event) => {
                let ev = r.event();
                let t = match range.place(trace.index, ev.time_ns()) {
                    Place::In(t) => t,
                    Place::Before => continue,
                    Place::After => break,
                };
                o.events += 1;
                let c = cpu.get_or_insert_with(|| {
                    let mut c = Cpu::new(machine, kernel::recorded_cpu(&ev).unwrap_or(s as u32));
                    c.lost = lost;
                    c
                });
                enc.event(c, &ev, t.max(0) as u64);
                if c.full() {
                    enc.flush_cpu(c);
                    if enc.out.len() >= super::OUT_BYTES {
                        if let Err(e) = out.write(&mut enc.out) {
                            o.failed = Some(e);
                            break;
                        }
                        if out.failed.load(Ordering::Relaxed) {
                            break;
                        }
                    }
                }
            }
            Ok(Message::DiscardedEvents { begin_ns, .. }) => {
                if begin_ns.is_none_or(|ns| range.of(trace.index, ns) <= range.hi) {
                    match &mut cpu {
                        Some(c) => c.lost = true,
                        None => lost = true,
                    }
                }
            }
            Ok(Message::DiscardedPackets { .. }) => {}
            Err(e) => o.errors.push(Diagnostic::from_ctf(&e)),
        }
    }
    if let Some(c) = &mut cpu {
        enc.flush_cpu(c);
    }
    enc.flush_tree();
    if o.failed.is_none() {
        if let Err(e) = out.write(&mut enc.out) {
            o.failed = Some(e);
        }
    }
    o.counts = enc.counts;
    o.compact = enc.compact;
    o.packets = enc.packets;
    o.bytes = enc.bytes;
    o.events_read = r.events_read;
    o.warnings = std::mem::take(&mut r.warnings);
    o
}

/// Exports the events of `source` to `options.file` as [`PerfettoSink`] does, every stream read and
/// encoded on its own, a stream at a time on each core (see the [module](super) documentation): the
/// sink's report and the read's summary. Packets are written in whole chunks, each stream's in its
/// order; a CPU's events are in a stream of their own, so its bundles are in time order. When
/// several streams of a machine hold one CPU's events (several channels), what Perfetto needs of a
/// CPU (its events in order, the thread running) spans streams: the read is then
/// [`PerfettoSink`]'s, merged.
///
/// The time range, stream intersection and time map of the source's options are honoured;
/// progress is not reported. Errors are those of [`crate::export`].
pub fn export_files(
    source: &FileSource,
    options: PerfettoOptions,
) -> Result<(PerfettoReport, Summary), Error> {
    let traces = source.traces();
    let read = source.options();
    let range = Range::of_read(traces, read);
    let (machines, trace_machine) = machines_of(traces);
    let streams: Vec<(usize, usize)> = traces
        .iter()
        .enumerate()
        .flat_map(|(t, tr)| (0..tr.streams.len()).map(move |s| (t, s)))
        .collect();
    // Each stream's first event: the first of all is the clock snapshot's time, and each
    // CPU of a machine that has events written must be in one stream.
    let mut first: Option<i64> = None;
    let mut cpus: Vec<(u32, u32)> = Vec::new();
    for &(t, s) in &streams {
        let trace = &traces[t];
        let Some((ts, cpu)) = range.first_event(trace, s) else {
            continue;
        };
        first = Some(first.map_or(ts, |f| f.min(ts)));
        if wanted_classes(trace).iter().flatten().any(|&w| w) {
            let key = (trace_machine[t], cpu);
            if cpus.contains(&key) {
                let sink = PerfettoSink::new(traces, options)?;
                return crate::export(source, sink);
            }
            cpus.push(key);
        }
    }
    let path = options.file;
    let file = ::ctf::private_files::create_file(&path).map_err(|e| Error::io(&path, e))?;
    let mut enc = Encoder::new();
    preamble(&mut enc, traces, machines.len(), &trace_machine);
    if let Some(ts) = first {
        enc.clock_snapshot(ts.max(0) as u64);
    }
    let out = Output {
        file: &file,
        end: AtomicU64::new(0),
        failed: AtomicBool::new(false),
    };
    out.write(&mut enc.out).map_err(|e| Error::io(&path, e))?;
    // A stream at a time on each core: a thread per stream would share the cores no better.
    let outcomes: Vec<Outcome> = streams
        .par_iter()
        .map(|&(t, s)| work(&range, &traces[t], s, trace_machine[t], &out))
        .collect();
    let mut summary = Summary::default();
    summary.errors.extend(
        traces
            .iter()
            .flat_map(|t| t.errors.iter().map(|e| Diagnostic::open_error(e.clone()))),
    );
    let mut counts = enc.counts;
    let (mut compact, mut events) = (0, 0);
    let (mut packets, mut bytes) = (enc.packets, enc.bytes);
    let mut failed = None;
    for o in outcomes {
        for (n, m) in counts.iter_mut().zip(o.counts) {
            *n += m;
        }
        compact += o.compact;
        events += o.events;
        packets += o.packets;
        bytes += o.bytes;
        summary.events_read += o.events_read;
        summary.errors.extend(o.errors);
        summary
            .warnings
            .extend(o.warnings.into_iter().map(Diagnostic::warning));
        if failed.is_none() {
            failed = o.failed;
        }
    }
    if let Some(e) = failed {
        return Err(Error::io(&path, e));
    }
    if events == 0 {
        return Err(summary.nothing_read().into());
    }
    let (counts, exported) = Encoder::report_counts(&counts);
    if exported == 0 {
        return Err(Error::NothingKept);
    }
    let diagnostics = summary
        .errors
        .iter()
        .chain(&summary.warnings)
        .map(|d| d.to_string())
        .collect();
    Ok((
        PerfettoReport {
            file: path,
            events,
            exported,
            compact,
            counts,
            packets,
            bytes,
            machines,
            diagnostics,
        },
        summary,
    ))
}
