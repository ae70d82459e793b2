//! The time range of each stream, from LTTng's packet indexes or the packet contexts, and the
//! range every stream covers (the stream intersection).

use std::sync::Arc;

use ctf::merge::TimeMap;
use ctf::{Message, Trace};

/// Time (ns) bounds of every stream of `trace`, from its indexes or packet contexts: (first packet's
/// `timestamp_begin`, last packet's `timestamp_end`); None when the stream has no clock.
pub fn stream_bounds(trace: &Arc<Trace>) -> Vec<Option<(i64, i64)>> {
    let mut out = Vec::new();
    for (si, mut r) in trace.readers().into_iter().enumerate() {
        if !ctf::StreamReader::new(trace.clone(), si).first_packet_opens() {
            // A stream the metadata does not describe (a file from another trace…) has no
            // events: its index or garbage timestamps must not narrow the intersection.
            out.push(None);
            continue;
        }
        let clock = trace.stream_clock(trace.stream_class_id(trace.streams[si].stream_class_id));
        if let (Some(c), Some((b, e))) = (clock, index_bounds(&trace.streams[si])) {
            out.push(Some((c.cycles_to_ns(b) as i64, c.cycles_to_ns(e) as i64)));
            continue;
        }
        // Without an index, the packet contexts alone give the range: no event is decoded.
        if let Some(range) = ctf::StreamReader::new(trace.clone(), si).packet_time_bounds() {
            out.push(Some(range));
            continue;
        }
        let mut first: Option<i64> = None;
        let mut last: Option<i64> = None;
        let mut key = u64::MAX;
        while let Some(m) = r.next() {
            let Ok(Message::Event) = m else { continue };
            let ev = r.event();
            if ev.packet_key() == key {
                continue;
            }
            key = ev.packet_key();
            let pc = ev.packet_context();
            let get = |n: &str| -> Option<i64> {
                let c = pc?.field(n)?.as_u64()?;
                Some(clock.as_ref()?.cycles_to_ns(c) as i64)
            };
            let b = get("timestamp_begin").or(ev.time_ns());
            let e = get("timestamp_end").or(ev.time_ns());
            if first.is_none() {
                first = b;
            }
            if e.is_some() {
                last = e;
            }
        }
        out.push(first.zip(last));
    }
    out
}

/// (first `timestamp_begin`, last `timestamp_end`) in cycles from the LTTng packet index files
/// (`index/NAME.idx`) of a stream's files, which also list the empty packets the reader skips.
fn index_bounds(stream: &ctf::trace::StreamFiles) -> Option<(u64, u64)> {
    let first = stream.index(0)?.first()?;
    let last = stream.index(stream.files.len().checked_sub(1)?)?.last()?;
    Some((first.ts_begin, last.ts_end))
}

/// The time range of every readable stream of every trace, on the time line of `time_map`
/// (each trace's clock otherwise).
pub(crate) fn mapped_stream_bounds(
    traces: &[Arc<Trace>],
    time_map: Option<&Arc<dyn TimeMap>>,
) -> Vec<(i64, i64)> {
    let mut out = Vec::new();
    for t in traces {
        let map = |ns: i64| time_map.map_or(ns, |m| m.map(t.index, ns));
        out.extend(
            stream_bounds(t)
                .into_iter()
                .flatten()
                .map(|(b, e)| (map(b), map(e))),
        );
    }
    out
}

/// The range every one of `bounds` covers (None for no bounds).
pub(crate) fn common_range(bounds: &[(i64, i64)]) -> Option<(i64, i64)> {
    (!bounds.is_empty()).then(|| {
        bounds
            .iter()
            .fold((i64::MIN, i64::MAX), |(b, e), &(sb, se)| {
                (b.max(sb), e.min(se))
            })
    })
}

/// The time range every stream of every trace covers.
pub fn intersection(traces: &[Arc<Trace>]) -> Option<(i64, i64)> {
    intersection_on(traces, None)
}

/// [`intersection`] on the time line of `time_map` (each trace's clock otherwise).
pub fn intersection_on(
    traces: &[Arc<Trace>],
    time_map: Option<&Arc<dyn TimeMap>>,
) -> Option<(i64, i64)> {
    common_range(&mapped_stream_bounds(traces, time_map))
}

/// The range a read covers and where its progress reports end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ReadRange {
    /// The first time read (ns, on the read's time line).
    pub lo: i64,
    /// The last time read.
    pub hi: i64,
    /// Where progress reports put the end: `hi` or the streams' last time if before.
    pub streams_end: i64,
}

/// The range `options` asks of `traces`: `begin`/`end` and, unless `no_intersection`, the
/// range every readable stream covers. The streams' bounds (from indexes or packet contexts)
/// are read once, for the intersection and the end of progress reports.
pub(crate) fn read_range(traces: &[Arc<Trace>], options: &crate::ReadOptions) -> ReadRange {
    let (mut lo, mut hi) = (
        options.begin.unwrap_or(i64::MIN),
        options.end.unwrap_or(i64::MAX),
    );
    let bounds = if !options.no_intersection || options.progress.is_some() {
        mapped_stream_bounds(traces, options.time_map.as_ref())
    } else {
        Vec::new()
    };
    if !options.no_intersection {
        if let Some((b, e)) = common_range(&bounds) {
            lo = lo.max(b);
            hi = hi.min(e);
        }
    }
    let streams_end = bounds
        .iter()
        .map(|&(_, e)| e)
        .max()
        .map_or(hi, |e| e.min(hi));
    ReadRange {
        lo,
        hi,
        streams_end,
    }
}
