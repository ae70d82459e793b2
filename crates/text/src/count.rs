//! Counting: every event of every stream decoded, streams in parallel, and counted per class.

use std::collections::BTreeMap;
use std::sync::Arc;

use ctf::Message;
use rayon::prelude::*;

/// What counting a set of streams found.
#[derive(Default, Debug, Clone, serde::Serialize)]
pub struct Counts {
    /// Events decoded.
    pub events: u64,
    /// Events the tracer reported discarded.
    pub discarded: u64,
    /// Packets the tracer reported lost.
    pub lost_packets: u64,
    /// Events per class name.
    pub classes: BTreeMap<String, u64>,
    /// The first event's time (ns).
    pub begin_ns: Option<i64>,
    /// The last event's time (ns).
    pub end_ns: Option<i64>,
    /// Problems met opening and decoding (reading went on).
    pub errors: Vec<String>,
    /// The readers' warnings.
    pub warnings: Vec<String>,
}

impl Counts {
    fn merge(mut self, o: Counts) -> Counts {
        self.events += o.events;
        self.discarded += o.discarded;
        self.lost_packets += o.lost_packets;
        for (k, v) in o.classes {
            *self.classes.entry(k).or_default() += v;
        }
        self.begin_ns = min_opt(self.begin_ns, o.begin_ns);
        self.end_ns = max_opt(self.end_ns, o.end_ns);
        self.errors.extend(o.errors);
        self.warnings.extend(o.warnings);
        self
    }
}

fn min_opt(a: Option<i64>, b: Option<i64>) -> Option<i64> {
    match (a, b) {
        (Some(x), Some(y)) => Some(x.min(y)),
        (x, y) => x.or(y),
    }
}

fn max_opt(a: Option<i64>, b: Option<i64>) -> Option<i64> {
    match (a, b) {
        (Some(x), Some(y)) => Some(x.max(y)),
        (x, y) => x.or(y),
    }
}

/// Per-event bookkeeping of one stream, fed by [`ctf::StreamReader::scan`].
/// Told of decoded events, a count at a time (from several threads).
type Progress<'a> = dyn Fn(u64) + Sync + 'a;

struct Tally<'p> {
    /// The stream class of the stream's events (a data stream has one; `usize::MAX` before
    /// the first) and its per-class counts, indexed by class position: one lookup per event,
    /// no hashing.
    sc: usize,
    row: Vec<u64>,
    /// Counts of events of any other stream class, per stream class.
    by_class: Vec<Vec<u64>>,
    checksum: u64,
    /// A stream's clock only maps cycles to ns monotonically: its last time is that of its
    /// largest cycle count, converted once at the end (when there are events).
    max_cycles: u64,
    /// Events not yet reported to `progress`.
    ticks: u64,
    progress: &'p Progress<'p>,
}

impl ctf::ScanSink for Tally<'_> {
    #[inline(always)]
    fn event(&mut self, (sc, ec): (usize, usize), cycles: u64, fold: u64) {
        self.max_cycles = self.max_cycles.max(cycles);
        self.checksum = self.checksum.wrapping_add(fold);
        if let Some(n) = self.row.get_mut(ec).filter(|_| sc == self.sc) {
            *n += 1;
        } else {
            self.grow(sc, ec);
        }
    }

    fn ran(&mut self, n: u64) {
        self.ticks += n;
    }

    fn pause(&mut self) {
        if self.ticks >= 1 << 16 {
            (self.progress)(self.ticks);
            self.ticks = 0;
        }
    }

    fn counts(&mut self, sc: usize, classes: usize) -> Option<ctf::ScanCounts<'_>> {
        if !self.is_own(sc) {
            return None;
        }
        if self.row.len() < classes {
            self.row.resize(classes, 0);
        }
        Some(ctf::ScanCounts {
            counts: &mut self.row,
            checksum: &mut self.checksum,
            max_cycles: &mut self.max_cycles,
        })
    }
}

impl Tally<'_> {
    /// Whether stream class `sc` is the one `row` counts: the first one seen.
    fn is_own(&mut self, sc: usize) -> bool {
        if self.sc == usize::MAX {
            self.sc = sc;
        }
        sc == self.sc
    }

    #[cold]
    fn grow(&mut self, sc: usize, ec: usize) {
        if self.is_own(sc) {
            bump(&mut self.row, ec);
            return;
        }
        if self.by_class.len() <= sc {
            self.by_class.resize(sc + 1, Vec::new());
        }
        bump(&mut self.by_class[sc], ec);
    }
}

/// Adds one to `row[i]`, growing the row as needed.
fn bump(row: &mut Vec<u64>, i: usize) {
    if row.len() <= i {
        row.resize(i + 1, 0);
    }
    row[i] += 1;
}

/// Counts one stream.
fn count_stream(mut r: ctf::StreamReader, progress: &Progress<'_>) -> Counts {
    let mut c = Counts::default();
    let mut t = Tally {
        sc: usize::MAX,
        row: Vec::new(),
        by_class: Vec::new(),
        checksum: 0,
        max_cycles: 0,
        ticks: 0,
        progress,
    };
    loop {
        // Event by event until one gives the stream's begin time, then a scan of the rest.
        let m = if c.begin_ns.is_none() {
            r.next()
        } else {
            r.scan(&mut t)
        };
        match m {
            None => break,
            Some(Ok(Message::Event)) => {
                let ev = r.event();
                c.begin_ns = ev.time_ns();
                let fold = ev.fold_fields();
                ctf::ScanSink::event(&mut t, ev.class_index(), ev.cycles(), fold);
                ctf::ScanSink::ran(&mut t, 1);
                ctf::ScanSink::pause(&mut t);
            }
            Some(Ok(Message::DiscardedEvents { count, .. })) => c.discarded += count,
            Some(Ok(Message::DiscardedPackets { count, .. })) => c.lost_packets += count,
            Some(Err(e)) => c.errors.push(e.to_string()),
        }
    }
    progress(t.ticks);
    std::hint::black_box(t.checksum);
    let layout = &r.trace().layout;
    let own = (t.sc != usize::MAX).then_some((t.sc, &t.row));
    for (sc, row) in own.into_iter().chain(t.by_class.iter().enumerate()) {
        for (ec, n) in row.iter().enumerate().filter(|(_, n)| **n > 0) {
            let name = &layout.streams.at(sc).events.at(ec).name;
            *c.classes.entry(name.to_string()).or_default() += n;
            c.events += n;
        }
    }
    if c.events > 0 {
        c.end_ns = r.cycles_to_ns(t.max_cycles);
    }
    c.warnings = std::mem::take(&mut r.warnings);
    c
}

/// Counts every stream of the given traces, streams in parallel, telling `progress` of the
/// events decoded.
pub fn count_traces(traces: &[Arc<ctf::Trace>], progress: &Progress<'_>) -> Counts {
    let mut opening = Counts::default();
    for t in traces {
        opening.errors.extend(t.errors.iter().cloned());
    }
    let readers: Vec<ctf::StreamReader> = traces.iter().flat_map(|t| t.readers()).collect();
    let total = readers
        .into_par_iter()
        .map(|r| count_stream(r, progress))
        .reduce(Counts::default, Counts::merge);
    opening.merge(total)
}
