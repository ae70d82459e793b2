//! A thread per stream, then one merge by time: for consumers whose per-event work (decoding,
//! formatting, extracting) does not depend on the other streams, so that it runs on every core
//! while one thread puts the results in order.
//!
//! Each stream's worker reads its stream and fills [`Batch`]es of time-stamped items; full
//! batches go through a bounded channel to the merging thread, which hands the items to the
//! consumer in the order [`ctf::Merger`] gives events: by time, ties by stream position (the
//! traces' order, then the streams' within each trace). Batches the merge is done with go back
//! to their worker to be refilled, their memory already mapped and sized; a worker has at
//! most six of them, and waits for one back rather than allocate more.
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
    /// Batches this worker allocated so far (at most [`MAX_BATCHES`]).
    made: usize,
}

/// Batches a stream has at most: the one the merge reads, the [`QUEUED`] ones waiting for it
/// and the one the worker fills. A worker that has all of them waits for the merge to return
/// one rather than allocate another: each new batch is memory faulted in and zeroed, which
/// costs more than the wait (the worker is then that far ahead of the merge anyway).
const MAX_BATCHES: usize = QUEUED + 2;

/// Full batches a stream's channel holds before its worker waits. Enough that a stream whose
/// events come in a burst (the merge takes many of its items in a row) does not leave the
/// other workers idle at their cap while the merge waits on it; each one more costs a batch of
/// memory per stream (bench/README.md).
const QUEUED: usize = 4;

impl<B: Batch> Producer<B> {
    /// A batch to fill without waiting: one the merge is done with, or a new one while the
    /// worker has made fewer than [`MAX_BATCHES`].
    fn ready(&mut self) -> Option<B> {
        match self.free.try_recv() {
            Ok(mut b) => {
                b.clear();
                Some(b)
            }
            Err(_) if self.made < MAX_BATCHES => {
                self.made += 1;
                Some(B::new())
            }
            Err(_) => None,
        }
    }

    /// An empty batch to fill: one the merge is done with, or a new one (waiting for one
    /// when the worker has [`MAX_BATCHES`] already; a placeholder when the merge has stopped,
    /// to which [`Self::flush_if_full`] then says so).
    pub fn empty(&mut self) -> B {
        match self.ready() {
            Some(b) => b,
            None => self.wait().unwrap_or_else(B::placeholder),
        }
    }

    /// A batch back from the merge, waited for; None when the merge has stopped.
    fn wait(&mut self) -> Option<B> {
        let mut b = self.free.recv().ok()?;
        b.clear();
        Some(b)
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
        if let Some(next) = self.ready() {
            return self.tx.send(std::mem::replace(batch, next)).is_ok();
        }
        // Every batch is out: this one goes first, so that the merge, taking it, returns one.
        let full = std::mem::replace(batch, B::placeholder());
        if self.tx.send(full).is_err() {
            return false;
        }
        match self.wait() {
            Some(b) => {
                *batch = b;
                true
            }
            None => false,
        }
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

    /// The merge is done with `batch`: it goes back to its worker to be refilled (or is
    /// dropped at the end of the read) right after this returns. A consumer that kept
    /// pointers into batches it was given (to write their bytes out later without copying
    /// them) must be done with them here.
    #[inline(always)]
    fn release(&mut self, _batch: &mut B) {}
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
    /// Makes sure an item is available; false at the end of the stream. `consumer` is told
    /// of each batch before it goes back to the worker.
    #[inline(always)]
    fn fill<C: Consumer<B>>(&mut self, consumer: &mut C) -> bool {
        self.next < self.batch.len() || self.refill(consumer)
    }

    #[cold]
    fn refill<C: Consumer<B>>(&mut self, consumer: &mut C) -> bool {
        while self.next >= self.batch.len() {
            match self.rx.recv() {
                Ok(b) => {
                    if !self.placeholder {
                        consumer.release(&mut self.batch);
                    }
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
            let (tx, rx) = sync_channel(QUEUED);
            let (free_tx, free_rx) = channel();
            let time = StreamTime {
                trace: r.trace().index,
                map: options.time_map.clone(),
            };
            handles.push(scope.spawn(move || {
                let mut out = Producer {
                    tx,
                    free: free_rx,
                    made: 0,
                };
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
    let mut heads: Vec<(i64, usize)> = Vec::with_capacity(cursors.len());
    for (i, c) in cursors.iter_mut().enumerate() {
        if c.fill(consumer) {
            heads.push((c.batch.time(c.next), i));
        }
    }
    let mut merged = Merged::default();
    let mut first: Option<i64> = None;
    let mut next_report = if options.progress.is_some() {
        PROGRESS_EVERY
    } else {
        u64::MAX
    };
    'merge: while let Some(&(mut time, _)) = heads.first() {
        // The lowest head, and the last time at which the lowest stream's next items still
        // come before the runner-up's: they go out one after the other, without a scan each
        // (a stream's items often follow each other closely in time). The heads are in index
        // order, so among equal times the first seen is the lower index: a head after the
        // lowest lets its own time through, one before it the time before (never below
        // `i64::MIN`: that head's time is above the lowest).
        let mut at = 0;
        let mut limit = i64::MAX;
        // A count alongside a plain slice loop (an enumerated, skipped iterator costs more).
        let mut k = 0;
        for &(t, _) in &heads[1..] {
            k += 1;
            if t < time {
                limit = time - 1;
                (time, at) = (t, k);
            } else if t < limit {
                limit = t;
            }
        }
        let stream = heads[at].1;
        let c = &mut cursors[stream];
        loop {
            let n = c.next;
            let batch = &mut c.batch;
            // Within the range (an item without a time too when there is no begin): given
            // out; the other cases, rare, are sorted out of line.
            let keep = (time >= lo && time <= hi) || {
                match outside(time, hi, batch.ranged(n)) {
                    Some(keep) => keep,
                    None => break 'merge,
                }
            };
            if keep {
                merged.items += 1;
                if consumer.item(batch, n, time) == Flow::Stop {
                    merged.stopped = true;
                    break 'merge;
                }
                if merged.items == next_report {
                    report(options, &mut first, time, streams_end, merged.items);
                    next_report += PROGRESS_EVERY;
                }
            }
            c.next += 1;
            if !c.fill(consumer) {
                heads.remove(at);
                break;
            }
            time = c.batch.time(c.next);
            if time > limit {
                heads[at].0 = time;
                break;
            }
        }
    }
    // The batches still held are dropped (or returned) after the merge: the consumer is
    // done with them first.
    for c in cursors.iter_mut().filter(|c| !c.placeholder) {
        consumer.release(&mut c.batch);
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc::channel;

    /// Times of one stream's items, and the stream.
    struct Times(Vec<i64>, usize);

    impl Batch for Times {
        fn new() -> Times {
            Times(Vec::new(), usize::MAX)
        }
        fn len(&self) -> usize {
            self.0.len()
        }
        fn time(&self, i: usize) -> i64 {
            self.0[i]
        }
        fn is_full(&self) -> bool {
            false
        }
        fn clear(&mut self) {
            self.0.clear();
        }
    }

    /// Streams with runs, ties between streams and items without a time, in batches of any
    /// size: the merge gives every item by (time, stream), each stream's in its order.
    #[test]
    fn merges_by_time_then_stream() {
        let mut x = testkit::XorShift::new(0x9e37_79b9_7f4a_7c15);
        let mut rnd = move |n: u64| x.below(n);
        for _ in 0..300 {
            let streams: Vec<Vec<i64>> = (0..1 + rnd(7))
                .map(|_| {
                    let mut t = if rnd(4) == 0 { i64::MIN } else { rnd(5) as i64 };
                    (0..rnd(40))
                        .map(|_| {
                            let now = t;
                            t = match t {
                                i64::MIN if rnd(3) == 0 => rnd(3) as i64,
                                i64::MIN => t,
                                _ => t + rnd(3) as i64,
                            };
                            now
                        })
                        .collect()
                })
                .collect();
            let mut want: Vec<(i64, usize)> = streams
                .iter()
                .enumerate()
                .flat_map(|(s, v)| v.iter().map(move |&t| (t, s)))
                .collect();
            // Stable: a stream's items keep their order.
            want.sort_by_key(|&(t, s)| (t, s));
            let mut cursors: Vec<Cursor<Times>> = streams
                .iter()
                .enumerate()
                .map(|(s, v)| {
                    let (tx, rx) = channel();
                    let mut rest = &v[..];
                    while !rest.is_empty() {
                        let n = (1 + rnd(5) as usize).min(rest.len());
                        tx.send(Times(rest[..n].to_vec(), s)).unwrap();
                        rest = &rest[n..];
                    }
                    let (free, _) = channel();
                    Cursor {
                        rx,
                        free,
                        batch: Times::placeholder(),
                        next: 0,
                        placeholder: true,
                    }
                })
                .collect();
            let mut got = Vec::new();
            let mut consumer = |b: &mut Times, i: usize, t: i64| {
                assert_eq!(b.0[i], t);
                got.push((t, b.1));
                Flow::Continue
            };
            let options = ReadOptions::default();
            let merged = merge(&mut cursors, i64::MIN, i64::MAX, &options, 0, &mut consumer);
            assert_eq!(merged.items, want.len() as u64);
            assert_eq!(got, want);
        }
    }
}
