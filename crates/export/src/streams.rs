//! Reading a trace stream by stream, each on a thread of its own (no merge): what the
//! exporters whose output needs no global time order use (Perfetto's per-CPU bundles, the
//! Parquet `event` table's files per stream). The read's range, intersection and time map are
//! the pipeline's.

use std::sync::Arc;

use ::ctf::merge::TimeMap;
use ::ctf::{Message, StreamReader, Trace};
use pipeline::ReadOptions;

/// Where an event stands in a read's range ([`Range::place`]).
pub(crate) enum Place {
    /// Before the range, or without a time: skipped.
    Before,
    /// In the range, at this time on the read's time line.
    In(i64),
    /// After the range: the stream's read ends.
    After,
}

/// What a read covers: its time line and range.
pub(crate) struct Range {
    /// First time in the range (on the read's time line).
    pub(crate) lo: i64,
    /// Last time in the range.
    pub(crate) hi: i64,
    /// The time map (`--sync`), if any.
    pub(crate) map: Option<Arc<dyn TimeMap>>,
}

impl Range {
    /// The range `read` gives `traces`: its begin and end, within the traces' intersection
    /// unless it is turned off.
    pub(crate) fn of_read(traces: &[Arc<Trace>], read: &ReadOptions) -> Range {
        let (mut lo, mut hi) = (read.begin.unwrap_or(i64::MIN), read.end.unwrap_or(i64::MAX));
        if !read.no_intersection {
            if let Some((b, e)) = pipeline::intersection_on(traces, read.time_map.as_ref()) {
                lo = lo.max(b);
                hi = hi.min(e);
            }
        }
        Range {
            lo,
            hi,
            map: read.time_map.clone(),
        }
    }

    /// Time `ns` of trace `t` on the read's time line.
    #[inline(always)]
    pub(crate) fn of(&self, t: usize, ns: i64) -> i64 {
        match &self.map {
            Some(m) => m.map(t, ns),
            None => ns,
        }
    }

    /// Where an event of trace `t` stamped `ns` (its own clock) stands: before the range (no
    /// time counts as before), in it at its time on the read's line, or after it.
    #[inline(always)]
    pub(crate) fn place(&self, t: usize, ns: Option<i64>) -> Place {
        match ns.map(|ns| self.of(t, ns)) {
            Some(t) if t > self.hi => Place::After,
            Some(t) if t >= self.lo => Place::In(t),
            _ => Place::Before,
        }
    }

    /// The skipping window on the stream's own clock: the whole stream under a time map.
    pub(crate) fn window(&self) -> (i64, i64) {
        match self.map {
            Some(_) => (i64::MIN, i64::MAX),
            None => (self.lo, self.hi),
        }
    }

    /// A reader of stream `s` of `trace`, past the packets that end before the range where
    /// its indexes say so.
    pub(crate) fn reader(&self, trace: &Arc<Trace>, s: usize) -> StreamReader {
        let mut r = StreamReader::new(trace.clone(), s);
        if self.map.is_none() && self.lo > i64::MIN {
            r.seek_ns(self.lo);
        }
        r
    }

    /// The time and CPU of the first event of stream `s` of `trace` in the range, if any.
    pub(crate) fn first_event(&self, trace: &Arc<Trace>, s: usize) -> Option<(i64, u32)> {
        let mut r = self.reader(trace, s);
        while let Some(m) = r.next() {
            let Ok(Message::Event) = m else { continue };
            let ev = r.event();
            let t = match self.place(trace.index, ev.time_ns()) {
                Place::In(t) => t,
                Place::Before => continue,
                Place::After => return None,
            };
            return Some((t, kernel::recorded_cpu(&ev).unwrap_or(s as u32)));
        }
        None
    }
}
