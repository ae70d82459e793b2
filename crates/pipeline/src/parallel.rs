//! Streams read a batch at a time on every core, then one merge by time: for consumers whose
//! per-event work (decoding, formatting, extracting) does not depend on the other streams, so
//! that it runs on every core while the merge puts the results in order.
//!
//! Each stream's work ([`StreamWork`]) reads its stream and fills [`Batch`]es of time-stamped
//! items, one batch at a time, on whichever thread is free: the read's thread, which also
//! merges, and one helper thread per other core. Work is picked by need: the stream the merge
//! waits on first, else the one whose last batch ended earliest in time (the merge reaches it
//! first). There are no more threads than cores, however many streams, so the kernel never
//! has to choose which of them to run; a thread sleeps only when every stream is either being
//! filled by another thread or has all its batches waiting for the merge. The merge hands the
//! items to the consumer in the order [`ctf::Merger`] gives events: by time, ties by stream
//! position (the traces' order, then the streams' within each trace). Batches the merge is
//! done with go back to their stream to be refilled, their memory already mapped and sized; a
//! stream has at most six of them.
//!
//! The read honours [`ReadOptions`]: the time map puts each trace's times on one time line
//! (the work maps its items' times with [`StreamTime`]), `begin`/`end` bound what the
//! consumer gets (the streams seek to `begin` first where their indexes allow, without a time
//! map), and the stream intersection unless `no_intersection`.

use std::collections::VecDeque;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};

use ctf::merge::TimeMap;
use ctf::{StreamReader, Trace};

use crate::bounds::{read_range, ReadRange};
use crate::progress::ProgressPoint;
use crate::sink::Flow;
use crate::source::ReadOptions;

/// Items a stream's work produced, in its stream's order, with their times.
pub trait Batch: Send {
    /// An empty batch, with room for a full one.
    fn new() -> Self
    where
        Self: Sized;
    /// An empty batch that is never filled: what the merge holds for a stream before its
    /// first batch arrives (then dropped, not handed back to the stream). A batch that
    /// allocates its room up front should allocate nothing here.
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

/// One stream's work: its reader and whatever it keeps between batches, moved to the thread
/// that fills its next batch.
pub trait StreamWork<B>: Send + Sized {
    /// What the work gives when its stream is done (or the read stopped).
    type Output: Send;
    /// Reads the stream on into `batch` (empty) until the batch [`Batch::is_full`] or the
    /// stream ends: [`Filled::More`] with the work to go on with, or [`Filled::Done`] with its
    /// output when the stream has ended (the batch then holds its last items, maybe none).
    fn fill(self, batch: &mut B) -> Filled<Self, Self::Output>;
    /// The output of a stream the read stopped before its end.
    fn stop(self) -> Self::Output;
}

/// What [`StreamWork::fill`] left.
pub enum Filled<T, O> {
    /// The stream goes on: the work for its next batch.
    More(T),
    /// The stream has ended: the work's output.
    Done(O),
}

/// Puts a stream's times on the read's time line: its trace's time map, if any.
#[derive(Clone)]
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

/// Batches a stream has at most: the one the merge reads, up to four full ones waiting for
/// it and the one being filled. A stream that has all of them out is not worked on until the
/// merge hands one back: each new batch is memory faulted in and zeroed, which costs more
/// than the wait (the stream is then that far ahead of the merge anyway).
const MAX_BATCHES: usize = 6;

/// Takes the merged items.
pub trait Consumer<B> {
    /// Item `i` of `batch`, at `time` on the read's time line; [`Flow::Stop`] ends the read.
    fn item(&mut self, batch: &mut B, i: usize, time: i64) -> Flow;

    /// The merge is done with `batch`: it goes back to its stream to be refilled (or is
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

/// Where the merge gets each stream's next batch.
trait Feed<B> {
    /// Stream `stream`'s next full batch, taking back `used` (the one the merge is done
    /// with, if it is not a placeholder); None at the end of the stream.
    fn next(&mut self, stream: usize, used: Option<B>) -> Option<B>;
}

/// One stream's items as the merge walks them.
struct Cursor<B> {
    batch: B,
    next: usize,
    /// `batch` is the [`Batch::placeholder`] (dropped rather than returned to the stream).
    placeholder: bool,
}

impl<B: Batch> Cursor<B> {
    fn new() -> Cursor<B> {
        Cursor {
            // Swapped for the stream's first batch, then dropped.
            batch: B::placeholder(),
            next: 0,
            placeholder: true,
        }
    }

    /// Makes sure an item is available; false at the end of the stream. `consumer` is told
    /// of each batch before it goes back to the stream.
    #[inline(always)]
    fn fill<C: Consumer<B>, F: Feed<B>>(
        &mut self,
        stream: usize,
        feed: &mut F,
        consumer: &mut C,
    ) -> bool {
        self.next < self.batch.len() || self.refill(stream, feed, consumer)
    }

    #[cold]
    fn refill<C: Consumer<B>, F: Feed<B>>(
        &mut self,
        stream: usize,
        feed: &mut F,
        consumer: &mut C,
    ) -> bool {
        while self.next >= self.batch.len() {
            let used = if std::mem::take(&mut self.placeholder) {
                None
            } else {
                consumer.release(&mut self.batch);
                Some(std::mem::replace(&mut self.batch, B::placeholder()))
            };
            match feed.next(stream, used) {
                Some(b) => {
                    self.batch = b;
                    self.next = 0;
                }
                None => {
                    // Nothing left to give back: the placeholder just put in is dropped.
                    self.placeholder = true;
                    return false;
                }
            }
        }
        true
    }
}

/// A stream as the threads share it.
struct Slot<B, T: StreamWork<B>> {
    /// The stream's work while no thread fills a batch of it; None while one does, and once
    /// the stream is done.
    work: Option<T>,
    /// The stream has ended (or its work panicked): no batch comes after `ready`.
    done: bool,
    output: Option<T::Output>,
    /// Full batches, in the stream's order, for the merge.
    ready: VecDeque<B>,
    /// Batches the merge gave back.
    free: Vec<B>,
    /// Batches made for this stream so far (at most [`MAX_BATCHES`]).
    made: usize,
    /// Time of the last item of the stream's last full batch: the stream the merge reaches
    /// first is the one whose batches end earliest.
    last_time: i64,
}

impl<B: Batch, T: StreamWork<B>> Slot<B, T> {
    /// Whether a thread can fill a batch of this stream now.
    fn can_fill(&self) -> bool {
        self.work.is_some() && (!self.free.is_empty() || self.made < MAX_BATCHES)
    }
}

/// What the threads share, behind one lock (taken once per batch).
struct Sched<B, T: StreamWork<B>> {
    slots: Vec<Slot<B, T>>,
    /// The merge has ended (the read's end, or the consumer stopped it), or a thread
    /// panicked: nothing more is filled.
    stopped: bool,
    /// Threads waiting on [`Shared::wake`].
    sleeping: usize,
}

struct Shared<B, T: StreamWork<B>> {
    sched: Mutex<Sched<B, T>>,
    /// Signalled when a batch is full or a stream can be filled again.
    wake: Condvar,
}

/// A batch of stream `i` to fill: taken from its free ones, or None to make a new one (outside
/// the lock: making one faults its memory in).
struct Job<B, T> {
    stream: usize,
    work: T,
    batch: Option<B>,
}

impl<B: Batch, T: StreamWork<B>> Shared<B, T> {
    fn lock(&self) -> MutexGuard<'_, Sched<B, T>> {
        self.sched.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Takes the work of stream `i` and a batch for it.
    fn take(sched: &mut Sched<B, T>, i: usize) -> Option<Job<B, T>> {
        let slot = &mut sched.slots[i];
        if !slot.can_fill() {
            return None;
        }
        let batch = slot.free.pop();
        if batch.is_none() {
            slot.made += 1;
        }
        Some(Job {
            stream: i,
            work: slot.work.take()?,
            batch,
        })
    }

    /// The stream the merge reaches first among those a thread can fill now.
    fn pick(sched: &mut Sched<B, T>) -> Option<Job<B, T>> {
        let i = (0..sched.slots.len())
            .filter(|&i| sched.slots[i].can_fill())
            .min_by_key(|&i| (sched.slots[i].last_time, sched.slots[i].ready.len()))?;
        Self::take(sched, i)
    }

    /// Fills the job's batch outside the lock, then hands the batch and the work back (the
    /// guard again held).
    fn run<'s>(
        &'s self,
        mut guard: MutexGuard<'s, Sched<B, T>>,
        job: Job<B, T>,
    ) -> MutexGuard<'s, Sched<B, T>> {
        drop(guard);
        let Job {
            stream,
            work,
            batch,
        } = job;
        let mut batch = match batch {
            Some(mut b) => {
                b.clear();
                b
            }
            None => B::new(),
        };
        let panicked = PanicGuard(self, stream);
        let filled = work.fill(&mut batch);
        std::mem::forget(panicked);
        guard = self.lock();
        let slot = &mut guard.slots[stream];
        if batch.is_empty() {
            slot.free.push(batch);
        } else {
            slot.last_time = batch.time(batch.len() - 1);
            slot.ready.push_back(batch);
        }
        match filled {
            Filled::More(work) => slot.work = Some(work),
            Filled::Done(output) => {
                slot.done = true;
                slot.output = Some(output);
            }
        }
        if guard.sleeping > 0 {
            self.wake.notify_all();
        }
        guard
    }

    /// A helper thread: fills batches of whichever stream is needed first until every
    /// stream is done or the read stopped.
    fn help(&self) {
        let mut guard = self.lock();
        loop {
            if guard.stopped {
                return;
            }
            if let Some(job) = Self::pick(&mut guard) {
                guard = self.run(guard, job);
                continue;
            }
            if guard.slots.iter().all(|s| s.done) {
                return;
            }
            guard = self.sleep(guard);
        }
    }

    /// Waits until another thread hands a batch or a stream back.
    fn sleep<'s>(&'s self, mut guard: MutexGuard<'s, Sched<B, T>>) -> MutexGuard<'s, Sched<B, T>> {
        guard.sleeping += 1;
        guard = self
            .wake
            .wait(guard)
            .unwrap_or_else(PoisonError::into_inner);
        guard.sleeping -= 1;
        guard
    }
}

/// Marks the read stopped if the stream's work panics, so that no thread waits for its
/// batches; the panic goes on to the read's caller when the threads are joined.
struct PanicGuard<'s, B: Batch, T: StreamWork<B>>(&'s Shared<B, T>, usize);

impl<B: Batch, T: StreamWork<B>> Drop for PanicGuard<'_, B, T> {
    fn drop(&mut self) {
        let mut guard = self.0.lock();
        guard.stopped = true;
        guard.slots[self.1].done = true;
        self.0.wake.notify_all();
    }
}

/// The merge's side: the read's thread takes full batches and, while the one it needs is not
/// there yet, fills batches itself.
impl<B: Batch, T: StreamWork<B>> Feed<B> for &Shared<B, T> {
    fn next(&mut self, stream: usize, used: Option<B>) -> Option<B> {
        let mut guard = self.lock();
        if let Some(b) = used {
            let slot = &mut guard.slots[stream];
            slot.free.push(b);
            // The stream may have waited for a batch back.
            if slot.work.is_some() && slot.free.len() == 1 && guard.sleeping > 0 {
                self.wake.notify_all();
            }
        }
        loop {
            if guard.stopped {
                return None;
            }
            let slot = &mut guard.slots[stream];
            if let Some(b) = slot.ready.pop_front() {
                return Some(b);
            }
            if slot.done {
                return None;
            }
            // The stream needed first is this one, if no other thread is filling it.
            let job = Shared::take(&mut guard, stream).or_else(|| Shared::pick(&mut guard));
            match job {
                Some(job) => guard = self.run(guard, job),
                None => guard = self.sleep(guard),
            }
        }
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

/// The threads that fill batches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Threads {
    /// One per core (the calling thread and a helper per other core), at most one per stream.
    #[default]
    Cores,
    /// The calling thread and this many helpers (none: the calling thread does everything, in
    /// turns).
    Helpers(usize),
}

impl Threads {
    /// Helper threads for `streams` streams.
    fn helpers(self, streams: usize) -> usize {
        match self {
            Threads::Cores => {
                let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
                (cores - 1).min(streams.saturating_sub(1))
            }
            Threads::Helpers(n) => n,
        }
    }
}

/// Reads every stream of `traces` with the work `make` gives it (from its reader and time
/// line), on `threads`, and gives the items to `consumer` merged by (time, stream position),
/// within the range of `options`. Returns each stream's work output, in stream order, what
/// was merged, and the consumer (its state owned by the merge while it runs: kept in
/// registers rather than behind a pointer). The merge runs on the calling thread.
pub fn run<B, T, M, C>(
    threads: Threads,
    traces: &[Arc<Trace>],
    options: &ReadOptions,
    make: M,
    mut consumer: C,
) -> (Vec<T::Output>, Merged, C)
where
    B: Batch,
    T: StreamWork<B>,
    M: Fn(StreamReader, StreamTime) -> T,
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
    let slots: Vec<Slot<B, T>> = readers
        .into_iter()
        .map(|r| {
            let time = StreamTime {
                trace: r.trace().index,
                map: options.time_map.clone(),
            };
            Slot {
                work: Some(make(r, time)),
                done: false,
                output: None,
                ready: VecDeque::new(),
                free: Vec::new(),
                made: 0,
                last_time: i64::MIN,
            }
        })
        .collect();
    let streams = slots.len();
    let shared = Shared {
        sched: Mutex::new(Sched {
            slots,
            stopped: false,
            sleeping: 0,
        }),
        wake: Condvar::new(),
    };
    let merged = std::thread::scope(|scope| {
        let shared = &shared;
        let handles: Vec<_> = (0..threads.helpers(streams))
            .map(|_| scope.spawn(move || shared.help()))
            .collect();
        let mut cursors: Vec<Cursor<B>> = (0..streams).map(|_| Cursor::new()).collect();
        let mut feed = shared;
        let merged = merge(
            &mut cursors,
            &mut feed,
            lo,
            hi,
            options,
            streams_end,
            &mut consumer,
        );
        // The helpers stop after the batch they are filling.
        {
            let mut guard = shared.lock();
            guard.stopped = true;
            shared.wake.notify_all();
        }
        drop(cursors);
        for h in handles {
            h.join().unwrap_or_else(|p| std::panic::resume_unwind(p));
        }
        merged
    });
    let sched = shared
        .sched
        .into_inner()
        .unwrap_or_else(PoisonError::into_inner);
    let outputs = sched
        .slots
        .into_iter()
        .map(|s| match (s.output, s.work) {
            (Some(o), _) => o,
            (None, Some(w)) => w.stop(),
            // Only a work that panicked has neither; its panic was resumed above.
            (None, None) => unreachable!("a stream's work was lost"),
        })
        .collect();
    (outputs, merged, consumer)
}

/// Gives the cursors' items to `consume` by (time, stream position) within `lo..=hi`.
#[inline(always)]
fn merge<B: Batch, F: Feed<B>, C: Consumer<B>>(
    cursors: &mut [Cursor<B>],
    feed: &mut F,
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
        if c.fill(i, feed, consumer) {
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
            if !c.fill(stream, feed, consumer) {
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

    /// Each stream's batches, queued up front.
    struct Queued(Vec<VecDeque<Times>>);

    impl Feed<Times> for Queued {
        fn next(&mut self, stream: usize, _used: Option<Times>) -> Option<Times> {
            self.0[stream].pop_front()
        }
    }

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
            let mut feed = Queued(
                streams
                    .iter()
                    .enumerate()
                    .map(|(s, v)| {
                        let mut q = VecDeque::new();
                        let mut rest = &v[..];
                        while !rest.is_empty() {
                            let n = (1 + rnd(5) as usize).min(rest.len());
                            q.push_back(Times(rest[..n].to_vec(), s));
                            rest = &rest[n..];
                        }
                        q
                    })
                    .collect(),
            );
            let mut cursors: Vec<Cursor<Times>> = streams.iter().map(|_| Cursor::new()).collect();
            let mut got = Vec::new();
            let mut consumer = |b: &mut Times, i: usize, t: i64| {
                assert_eq!(b.0[i], t);
                got.push((t, b.1));
                Flow::Continue
            };
            let options = ReadOptions::default();
            let merged = merge(
                &mut cursors,
                &mut feed,
                i64::MIN,
                i64::MAX,
                &options,
                0,
                &mut consumer,
            );
            assert_eq!(merged.items, want.len() as u64);
            assert_eq!(got, want);
        }
    }
}
