//! A thread per stream, then one merge by time: for consumers whose per-event work (decoding,
//! formatting, extracting) does not depend on the other streams, so that it runs on every core
//! while one thread puts the results in order.
//!
//! Each stream's worker reads its stream and fills [`Batch`]es of time-stamped items; full
//! batches go through a bounded channel to the merging thread, which hands the items to the
//! consumer in the order [`ctf::Merger`] gives events: by time, ties by stream position (the
//! traces' order, then the streams' within each trace). Batches the merge is done with go back
//! to their worker to be refilled, their memory already mapped and sized.
//!
//! The read honours [`ReadOptions`]: the time map puts each trace's times on one time line
//! (the worker maps its items' times with [`StreamTime`]), `begin`/`end` bound what the
//! consumer gets (the streams seek to `begin` first where their indexes allow, without a time
//! map), and the stream intersection unless `no_intersection`.

use std::sync::mpsc::{channel, sync_channel, Receiver, Sender, SyncSender};
use std::sync::Arc;

use ctf::merge::TimeMap;
use ctf::{StreamReader, Trace};

use crate::bounds::{read_range, ReadRange};
use crate::progress::ProgressPoint;
use crate::sink::Flow;
use crate::source::ReadOptions;

/// Items a worker produced, in its stream's order, with their times.
pub trait Batch: Send {
    /// An empty batch, with room for a full one.
    fn new() -> Self
    where
        Self: Sized;
    /// An empty batch that is never filled: what the merge holds for a stream before its
    /// first batch arrives (then dropped, not handed to the worker). A batch that allocates
    /// its room up front should allocate nothing here.
    fn placeholder() -> Self
    where
        Self: Sized,
    {
        Self::new()
    }
    /// The items held.
    fn len(&self) -> usize;
    /// Whether there is no item.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// The time of item `i` on the merged time line; `i64::MIN` for none (the item is given
    /// out where it comes in its stream, whatever the range).
    fn time(&self, i: usize) -> i64;
    /// Whether item `i` is kept only within the time range: an item that is not (a decoding
    /// error) is given out wherever it falls and does not end the read.
    #[inline(always)]
    fn ranged(&self, _i: usize) -> bool {
        true
    }
    /// Whether the batch should go to the merge now.
    fn is_full(&self) -> bool;
    /// Empties the batch, keeping its memory.
    fn clear(&mut self);
}

/// Puts a stream's times on the read's time line: its trace's time map, if any.
pub struct StreamTime {
    trace: usize,
    map: Option<Arc<dyn TimeMap>>,
}

impl StreamTime {
    /// The merged time of a stream time `ns` (ns); `i64::MIN` for none.
    #[inline(always)]
    pub fn of(&self, ns: Option<i64>) -> i64 {
        match (ns, &self.map) {
            (Some(t), Some(m)) => m.map(self.trace, t),
            (Some(t), None) => t,
            (None, _) => i64::MIN,
        }
    }
}

/// A worker's end of its stream's channel. The worker fills a batch of its own (a local, so
/// that its length and pointer stay in registers) and hands it over when full.
pub struct Producer<B> {
    tx: SyncSender<B>,
    free: Receiver<B>,
}

impl<B: Batch> Producer<B> {
    /// An empty batch to fill: one the merge is done with, or a new one.
    pub fn empty(&mut self) -> B {
        match self.free.try_recv() {
            Ok(mut b) => {
                b.clear();
                b
            }
            Err(_) => B::new(),
        }
    }

    /// Sends `batch` to the merge when it is full, leaving an empty one in its place; false
    /// once the merge has stopped (the read reached its end, or the consumer stopped it), when
    /// the worker should return.
    #[inline(always)]
    pub fn flush_if_full(&mut self, batch: &mut B) -> bool {
        !batch.is_full() || self.send(batch)
    }

    #[cold]
    #[inline(never)]
    fn send(&mut self, batch: &mut B) -> bool {
        let next = self.empty();
        self.tx.send(std::mem::replace(batch, next)).is_ok()
    }

    /// Sends the last batch of the stream.
    pub fn finish(&mut self, batch: B) {
        if !batch.is_empty() {
            // Nobody to tell when the merge has stopped.
            let _ = self.tx.send(batch);
        }
    }
}

/// Takes the merged items.
pub trait Consumer<B> {
    /// Item `i` of `batch`, at `time` on the read's time line; [`Flow::Stop`] ends the read.
    fn item(&mut self, batch: &mut B, i: usize, time: i64) -> Flow;
}

impl<B, F: FnMut(&mut B, usize, i64) -> Flow> Consumer<B> for F {
    #[inline(always)]
    fn item(&mut self, batch: &mut B, i: usize, time: i64) -> Flow {
        self(batch, i, time)
    }
}

/// One stream's items as the merge walks them.
struct Cursor<B> {
    rx: Receiver<B>,
    /// Returns used batches to the worker.
    free: Sender<B>,
    batch: B,
    next: usize,
    /// `batch` is the [`Batch::placeholder`] (dropped rather than returned to the worker).
    placeholder: bool,
}

impl<B: Batch> Cursor<B> {
    /// Makes sure an item is available; false at the end of the stream.
    #[inline(always)]
    fn fill(&mut self) -> bool {
        self.next < self.batch.len() || self.refill()
    }

    #[cold]
    fn refill(&mut self) -> bool {
        while self.next >= self.batch.len() {
            match self.rx.recv() {
                Ok(b) => {
                    let used = std::mem::replace(&mut self.batch, b);
                    // The worker may be gone already: then the batch is just dropped.
                    if !std::mem::take(&mut self.placeholder) {
                        let _ = self.free.send(used);
                    }
                    self.next = 0;
                }
                Err(_) => return false,
            }
        }
        true
    }
}

/// A place of the merge's heads with no stream.
const CLOSED: (i64, usize) = (i64::MAX, usize::MAX);

/// Items between two progress reports.
const PROGRESS_EVERY: u64 = 1 << 16;

/// What the merge gave.
#[derive(Debug, Clone, Default)]
pub struct Merged {
    /// Items given to the consumer.
    pub items: u64,
    /// The consumer stopped the read.
    pub stopped: bool,
}

/// Reads every stream of `traces` on its own thread with `work` (given the stream, its time
/// line and where to send its items) and gives the items to `consumer` merged by (time,
/// stream position), within the range of `options`. Returns each stream's worker result, in
/// stream order, what was merged, and the consumer (its state owned by the merge while it
/// runs: kept in registers rather than behind a pointer).
pub fn run<B, W, R, C>(
    traces: &[Arc<Trace>],
    options: &ReadOptions,
    work: W,
    mut consumer: C,
) -> (Vec<R>, Merged, C)
where
    B: Batch,
    W: Fn(StreamReader, &StreamTime, &mut Producer<B>) -> R + Sync,
    R: Send,
    C: Consumer<B>,
{
    let ReadRange {
        lo,
        hi,
        streams_end,
    } = read_range(traces, options);
    let mut readers: Vec<StreamReader> = traces.iter().flat_map(|t| t.readers()).collect();
    // Packets that end before the range are not read at all where indexes say so.
    if options.time_map.is_none() && lo > i64::MIN {
        for r in &mut readers {
            r.seek_ns(lo);
        }
    }
    let work = &work;
    std::thread::scope(|scope| {
        let mut cursors = Vec::with_capacity(readers.len());
        let mut handles = Vec::with_capacity(readers.len());
        for r in readers {
            let (tx, rx) = sync_channel(2);
            let (free_tx, free_rx) = channel();
            let time = StreamTime {
                trace: r.trace().index,
                map: options.time_map.clone(),
            };
            handles.push(scope.spawn(move || {
                let mut out = Producer { tx, free: free_rx };
                work(r, &time, &mut out)
            }));
            cursors.push(Cursor {
                rx,
                free: free_tx,
                // Swapped for the worker's first batch, then dropped.
                batch: B::placeholder(),
                next: 0,
                placeholder: true,
            });
        }
        let merged = merge(&mut cursors, lo, hi, options, streams_end, &mut consumer);
        // Dropping the receivers stops the workers that are still producing.
        drop(cursors);
        let results = handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
            .collect();
        (results, merged, consumer)
    })
}

/// Gives the cursors' items to `consume` by (time, stream position) within `lo..=hi`.
#[inline(always)]
fn merge<B: Batch, C: Consumer<B>>(
    cursors: &mut [Cursor<B>],
    lo: i64,
    hi: i64,
    options: &ReadOptions,
    streams_end: i64,
    consumer: &mut C,
) -> Merged {
    // The streams still open, in index order, each as the time of its next item and its
    // index: a linear scan for the minimum (few streams) with ties to the lowest index, as a
    // merge by (time, index). Times and indexes side by side: the scan reads one array.
    let mut heads: Vec<(i64, usize)> = Vec::with_capacity(cursors.len() + 3);
    for (i, c) in cursors.iter_mut().enumerate() {
        if c.fill() {
            heads.push((c.batch.time(c.next), i));
        }
    }
    // Padded to whole groups of four by closed places after the open streams: the scan
    // compares a group without a loop or a count, and a closed place never wins (it comes
    // after every open one, and only a lower time displaces the lowest so far).
    while !heads.len().is_multiple_of(4) {
        heads.push(CLOSED);
    }
    let mut merged = Merged::default();
    let mut first: Option<i64> = None;
    let mut next_report = if options.progress.is_some() {
        PROGRESS_EVERY
    } else {
        u64::MAX
    };
    while let Some(&(mut time, head)) = heads.first() {
        if head == CLOSED.1 {
            break;
        }
        let mut at = 0;
        for (q, g) in heads.chunks_exact(4).enumerate() {
            for (r, &(t, _)) in g.iter().enumerate() {
                if t < time {
                    (time, at) = (t, 4 * q + r);
                }
            }
        }
        let c = &mut cursors[heads[at].1];
        let n = c.next;
        let batch = &mut c.batch;
        // Within the range (an item without a time too when there is no begin): given out;
        // the other cases, rare, are sorted out of line.
        let keep = (time >= lo && time <= hi) || {
            match outside(time, hi, batch.ranged(n)) {
                Some(keep) => keep,
                None => break,
            }
        };
        if keep {
            merged.items += 1;
            if consumer.item(batch, n, time) == Flow::Stop {
                merged.stopped = true;
                break;
            }
            if merged.items == next_report {
                report(options, &mut first, time, streams_end, merged.items);
                next_report += PROGRESS_EVERY;
            }
        }
        c.next += 1;
        if c.fill() {
            heads[at].0 = c.batch.time(c.next);
        } else {
            heads.remove(at);
            heads.push(CLOSED);
        }
    }
    if let Some(p) = &options.progress {
        p.done(merged.items);
    }
    merged
}

/// Whether an item at `time` outside `lo..=hi` is given out (Some(true): it has no time or
/// is not `ranged`), passed over (Some(false): before the range) or ends the read (None).
#[cold]
#[inline(never)]
fn outside(time: i64, hi: i64, ranged: bool) -> Option<bool> {
    if time == i64::MIN || !ranged {
        Some(true)
    } else if time > hi {
        None
    } else {
        Some(false)
    }
}

/// Tells the read's progress sink, if any, it is at `ts`.
#[cold]
#[inline(never)]
fn report(options: &ReadOptions, first: &mut Option<i64>, ts: i64, end: i64, items: u64) {
    if let Some(p) = options.progress.as_ref().filter(|_| ts != i64::MIN) {
        let begin = *first.get_or_insert(ts);
        p.at(ProgressPoint {
            ts,
            begin,
            end: end.max(begin),
            events: items,
        });
    }
}
