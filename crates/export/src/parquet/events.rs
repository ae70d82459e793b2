//! The `event` table of one trace, written a stream at a time on each core: each stream is
//! read on its own (no merge, which only the derived tables' kernel state needs) and writes
//! its own file, `event/host=…/trace=…/part-N.parquet` for stream N: in each row group, the
//! rows of one class after another ([`EventFile`]).

use std::path::Path;
use std::sync::Arc;

use ::ctf::{Message, SkipRule, Trace};
use pipeline::classes_where;
use rayon::prelude::*;

use super::fields::{self, EventFile};
use super::tables::{self, FileProps, TableOut};
use crate::streams::{Place, Range};
use crate::{Error, NameFilter};

/// What the export of one trace's streams wrote.
#[derive(Debug, Default)]
pub(crate) struct Events {
    /// Events in the range (kept by the name filter or not).
    pub(crate) events: u64,
    /// The first and last of their times.
    pub(crate) first: Option<i64>,
    pub(crate) last: Option<i64>,
    /// Rows written, and bytes of the files.
    pub(crate) rows: u64,
    pub(crate) bytes: u64,
}

/// The time of the first event of `trace` in `range`: the range's begin for the derived
/// tables (a CPU's thread before its first switch ran since then).
pub(crate) fn first_time(range: &Range, trace: &Arc<Trace>) -> Option<i64> {
    (0..trace.streams.len())
        .filter_map(|s| range.first_event(trace, s).map(|(t, _)| t))
        .min()
}

/// Writes the `event` table of `trace` (the events of `range` whose names `names` keeps)
/// under `dir`, the partition's directory, a stream at a time on each core. The read's
/// errors are not reported here: the ordered read of the derived tables meets the same ones
/// and reports them.
pub(crate) fn write(
    range: &Range,
    trace: &Arc<Trace>,
    dir: &Path,
    names: &NameFilter,
    props: FileProps,
) -> Result<Events, Error> {
    let kept = Arc::new(classes_where(trace, |n| names.keeps(n)));
    // A stream at a time on each core: a thread per stream would hold a row group per stream
    // at once (a trace of many CPUs) and share the cores no better.
    let results: Vec<Result<Events, Error>> = (0..trace.streams.len())
        .into_par_iter()
        .map(|s| stream(range, trace, s, &kept, dir, props))
        .collect();
    let mut all = Events::default();
    for r in results {
        let e = r?;
        all.events += e.events;
        all.rows += e.rows;
        all.bytes += e.bytes;
        all.first = match (all.first, e.first) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        all.last = all.last.max(e.last);
    }
    Ok(all)
}

/// Stream `s` of `trace` into its own file of the `event` table (none when it has no event
/// to write).
fn stream(
    range: &Range,
    trace: &Arc<Trace>,
    s: usize,
    kept: &Arc<Vec<Vec<bool>>>,
    dir: &Path,
    props: FileProps,
) -> Result<Events, Error> {
    let mut r = range.reader(trace, s);
    let (lo, hi) = range.window();
    // Every class is decoded (the range's events are all counted); only the time window
    // skips.
    r.set_skip(Some(&SkipRule {
        wanted: Arc::new(classes_where(trace, |_| true)),
        lo,
        hi,
    }));
    let mut out: Option<EventFile> = None;
    let mut cpu = None;
    let mut done = Events::default();
    let file = format!("part-{s}.parquet");
    while let Some(m) = r.next() {
        let Ok(Message::Event) = m else { continue };
        let ev = r.event();
        let t = match range.place(trace.index, ev.time_ns()) {
            Place::In(t) => t,
            Place::Before => continue,
            Place::After => break,
        };
        done.events += 1;
        done.first.get_or_insert(t);
        done.last = Some(t);
        let (sc, ec) = ev.class_index();
        if !kept
            .get(sc)
            .and_then(|v| v.get(ec))
            .copied()
            .unwrap_or(true)
        {
            continue;
        }
        let cpu = *cpu.get_or_insert_with(|| kernel::recorded_cpu(&ev).unwrap_or(s as u32));
        let o = match &mut out {
            Some(o) => o,
            None => out.insert(event_file(dir, &file, props, false)?),
        };
        o.row(&ev, t, cpu as i32)?;
    }
    if let Some(o) = out {
        done.rows = o.written_rows();
        let (_, bytes) = o.close()?;
        done.bytes = bytes;
    }
    Ok(done)
}

/// Creates file `name` of the `event` table under `dir`, written by a thread of its own when
/// `thread`.
pub(crate) fn event_file(
    dir: &Path,
    name: &str,
    props: FileProps,
    thread: bool,
) -> Result<EventFile, Error> {
    let group = props.row_group_rows.clamp(1, fields::EVENT_GROUP_ROWS);
    let props = FileProps {
        row_group_rows: group,
        ..props
    };
    let out = TableOut::create_file(&tables::EVENT, dir, name, props, thread)?;
    Ok(EventFile::new(out, group))
}
