//! Time-ordered k-way merge of many streams (of one or several traces).

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::Arc;

use crate::error::{Error, Result};
use crate::stream::{Event, Message, SkipRule, StreamReader};
use crate::trace::Trace;

/// Maps a trace's timestamps (ns from its clock origin) to the merged time line.
pub trait TimeMap: Send + Sync {
    /// `ns` of trace `trace` (its position among the traces merged) on the merged time line.
    fn map(&self, trace: usize, ns: i64) -> i64;
}

/// A merged sequence of messages from many streams, ordered by time. Ties are broken by trace
/// order, then stream order, so the output is deterministic.
pub struct Merger {
    readers: Vec<StreamReader>,
    /// (time, reader) of every reader with a pending message.
    queue: Queue,
    /// The reader of the current message ([`NO_READER`] before the first and after the
    /// last), the message's merged time and its key (the same unless skipping).
    current: usize,
    current_time: i64,
    current_key: i64,
    /// Readers leave out unwanted events ([`Merger::with_skip`]): keys are their running
    /// maximum times.
    skip: bool,
    /// Each queued reader's next message time (its key unless skipping).
    times: Vec<i64>,
    started: bool,
    time_map: Option<Arc<dyn TimeMap>>,
    /// Each queued reader's next message (events carry nothing: the reader holds them).
    pending_msgs: Vec<Message>,
    /// Errors met so far (each names its file and offset). Reading goes on after them.
    pub errors: Vec<Error>,
}

impl Merger {
    /// A merger over every stream of the given traces.
    pub fn new(traces: &[Arc<Trace>]) -> Self {
        let readers = traces.iter().flat_map(|t| t.readers()).collect();
        Merger {
            readers,
            queue: Queue::Few(Scanned::new(Vec::new())),
            current: NO_READER,
            current_time: i64::MIN,
            current_key: i64::MIN,
            skip: false,
            times: Vec::new(),
            started: false,
            time_map: None,
            pending_msgs: Vec::new(),
            errors: Vec::new(),
        }
    }

    /// Lets every reader pass over the packets its stream's LTTng indexes show to end before
    /// `ns` ([`StreamReader::seek_ns`]): for a consumer that drops what comes before `ns`.
    /// Before the first [`Self::next`] only (later, and with a time map, it does nothing).
    /// Returns the number of packets passed over.
    pub fn seek_ns(&mut self, ns: i64) -> u64 {
        if self.started || self.time_map.is_some() {
            return 0;
        }
        self.readers.iter_mut().map(|r| r.seek_ns(ns)).sum()
    }

    /// Applies a clock transformation to every timestamp before ordering.
    pub fn with_time_map(mut self, map: Arc<dyn TimeMap>) -> Self {
        self.time_map = Some(map);
        self
    }

    /// Lets each reader leave out the events `rule` (given each reader's trace) allows, as
    /// [`crate::stream::SkipRule`] describes: the messages given out come in the order a full
    /// merge gives them. Ignored with a time map (the rules' windows are on each trace's own
    /// time line). To be called before the first [`Merger::next`].
    pub fn with_skip(mut self, rule: impl Fn(&Trace) -> SkipRule) -> Self {
        if self.time_map.is_some() || self.started {
            return self;
        }
        for r in &mut self.readers {
            let rule = rule(r.trace());
            r.set_skip(Some(&rule));
        }
        self.skip = true;
        self
    }

    // Inlined: `fetch` calls it once per event, where the message is known to be one.
    #[inline(always)]
    fn time_of(&self, i: usize, msg: &Message) -> i64 {
        let r = &self.readers[i];
        let ns = match msg {
            Message::Event => r.event_time_ns(),
            other => other.time_ns(),
        }
        .unwrap_or(i64::MIN);
        match &self.time_map {
            Some(m) if ns != i64::MIN => m.map(r.trace().index, ns),
            _ => ns,
        }
    }

    /// Reads the next message of reader `i` into its pending slot, its merged time into
    /// `times`, and returns its key; errors met on the way are kept. None when the reader is
    /// done.
    #[inline(always)]
    fn fetch(&mut self, i: usize) -> Option<i64> {
        // The skipping readers' events (most of an analysis' fetches) on a short path: no
        // time map, the key is the reader's.
        if self.skip && self.time_map.is_none() {
            let r = &mut self.readers[i];
            let first = r.next();
            if let Some(Ok(Message::Event)) = first {
                let t = r.event_time_ns().unwrap_or(i64::MIN);
                let key = r.merge_key();
                self.pending_msgs[i] = Message::Event;
                self.times[i] = t;
                return Some(key);
            }
            return self.fetch_after(i, first);
        }
        self.fetch_general(i, None)
    }

    /// [`Self::fetch`] for a skipping reader `i` that gave `first`, not an event.
    #[cold]
    #[inline(never)]
    fn fetch_after(&mut self, i: usize, first: Option<Result<Message>>) -> Option<i64> {
        self.fetch_general(i, Some(first))
    }

    /// [`Self::fetch`], starting with `first` when reader `i` gave it already.
    #[inline(always)]
    fn fetch_general(
        &mut self,
        i: usize,
        mut first: Option<Option<Result<Message>>>,
    ) -> Option<i64> {
        let t = loop {
            let got = match first.take() {
                Some(m) => m,
                None => self.readers[i].next(),
            };
            match got {
                None => return None,
                // Events apart: storing a known variant costs less than moving the message, on
                // every event of every pass.
                Some(Ok(Message::Event)) => {
                    self.pending_msgs[i] = Message::Event;
                    break self.time_of(i, &Message::Event);
                }
                Some(Ok(msg)) => {
                    let t = self.time_of(i, &msg);
                    self.pending_msgs[i] = msg;
                    break t;
                }
                Some(Err(e)) => self.errors.push(e),
            }
        };
        self.times[i] = t;
        Some(if self.skip {
            self.readers[i].merge_key()
        } else {
            t
        })
    }

    /// Moves to the next message in time order.
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> Option<&Message> {
        if !self.started {
            self.started = true;
            self.pending_msgs = vec![Message::Event; self.readers.len()];
            self.times = vec![i64::MIN; self.readers.len()];
            let mut keys = Vec::with_capacity(self.readers.len());
            for i in 0..self.readers.len() {
                if let Some(t) = self.fetch(i) {
                    keys.push((t, i));
                }
            }
            self.queue = Queue::new(keys);
        } else if self.current != NO_READER {
            // The current reader holds the smallest key.
            let i = self.current;
            let key = self.fetch(i).map(|t| (t, i));
            self.queue.replace_first(key);
        }
        match self.queue.first() {
            Some((key, i)) => {
                self.current = i;
                self.current_time = self.times[i];
                self.current_key = key;
                Some(&self.pending_msgs[i])
            }
            None => {
                self.current = NO_READER;
                None
            }
        }
    }

    /// The current event (after `next` returned `Message::Event`).
    pub fn event(&self) -> Option<Event<'_>> {
        match self.pending_msgs.get(self.current) {
            Some(Message::Event) => Some(self.readers[self.current].event()),
            _ => None,
        }
    }

    /// The time of the current message on the merged time line.
    pub fn current_time(&self) -> Option<i64> {
        (self.current != NO_READER && self.current_time != i64::MIN).then_some(self.current_time)
    }

    /// Where the current message stands in the merge order: (key, reader position,
    /// [`StreamReader::events_read`] of its reader). With [`Merger::with_skip`], compare with
    /// [`Merger::last_left_out`].
    pub fn current_order(&self) -> Option<(i64, usize, u64)> {
        let r = self.readers.get(self.current)?;
        Some((self.current_key, self.current, r.events_read))
    }

    /// The last event the readers left out (at or after their rules' `lo`), in merge order:
    /// (its place as [`Merger::current_order`] gives it, its time in ns).
    pub fn last_left_out(&self) -> Option<((i64, usize, u64), i64)> {
        self.readers
            .iter()
            .enumerate()
            .filter_map(|(i, r)| {
                let (key, seq, t) = r.last_left_out()?;
                Some(((key, i, seq), t))
            })
            .max_by_key(|(order, _)| *order)
    }

    /// The stream reader that produced the current message.
    pub fn current_reader(&self) -> Option<&StreamReader> {
        self.readers.get(self.current)
    }

    /// Every reader (for warnings and counters).
    pub fn readers(&self) -> &[StreamReader] {
        &self.readers
    }
}

/// [`Merger::current`] when there is no current message.
const NO_READER: usize = usize::MAX;

/// The readers' keys, smallest (time, reader index) first.
enum Queue {
    /// Few readers (the usual one trace of a few per-CPU streams): an unordered list, found
    /// by a scan, which costs less than heap sifts.
    Few(Scanned),
    /// Many readers: a heap whose top is replaced in place (one sift instead of pop + push).
    Many(BinaryHeap<Reverse<(i64, usize)>>),
}

/// Up to this many readers are scanned.
const SCANNED_READERS: usize = 8;

impl Queue {
    fn new(keys: Vec<(i64, usize)>) -> Queue {
        if keys.len() <= SCANNED_READERS {
            Queue::Few(Scanned::new(keys))
        } else {
            Queue::Many(keys.into_iter().map(Reverse).collect())
        }
    }

    fn first(&self) -> Option<(i64, usize)> {
        match self {
            Queue::Few(q) => q.first(),
            Queue::Many(heap) => heap.peek().map(|r| r.0),
        }
    }

    /// Replaces the smallest key with `key`, or removes it (its reader is done).
    fn replace_first(&mut self, key: Option<(i64, usize)>) {
        match self {
            Queue::Few(q) => q.replace_first(key),
            Queue::Many(heap) => match key {
                Some(k) => {
                    if let Some(mut top) = heap.peek_mut() {
                        *top = Reverse(k);
                    }
                }
                None => {
                    heap.pop();
                }
            },
        }
    }
}

/// The keys of [`Queue::Few`], the position of the smallest and the smallest of the others.
/// A stream's events come in runs (3.2 on average in `many-threads`' merge): while the
/// current reader's next key stays below every other one, it is still the first, and the
/// list is not scanned. Keys are kept as one integer each ([`packed`]): a scan then makes one
/// comparison per key and per candidate, not two.
#[derive(Debug)]
struct Scanned {
    keys: Vec<u128>,
    first: usize,
    /// The smallest key but `keys[first]` (`u128::MAX` when there is none; 0 when not kept,
    /// see [`PLAIN_SCAN`]).
    second: u128,
}

/// Up to this many keys, [`Scanned`] does not keep the second smallest: a plain scan then
/// costs no more than keeping it where runs are short (a few CPUs' streams); with more
/// streams, keeping it pays (see `bench/README.md`).
const PLAIN_SCAN: usize = 4;

/// `(time, reader)` as an integer in the same order.
#[inline(always)]
fn packed((t, i): (i64, usize)) -> u128 {
    (((t as u64) ^ (1 << 63)) as u128) << 64 | i as u128
}

/// The key [`packed`] packed.
#[inline(always)]
fn unpacked(k: u128) -> (i64, usize) {
    ((((k >> 64) as u64) ^ (1 << 63)) as i64, k as u64 as usize)
}

impl Scanned {
    fn new(keys: Vec<(i64, usize)>) -> Scanned {
        let mut q = Scanned {
            keys: keys.into_iter().map(packed).collect(),
            first: 0,
            second: u128::MAX,
        };
        q.scan();
        q
    }

    fn first(&self) -> Option<(i64, usize)> {
        self.keys.get(self.first).copied().map(unpacked)
    }

    /// Finds `first` and `second` (`first` 0 when there is no key).
    #[inline]
    fn scan(&mut self) {
        let Some(&k0) = self.keys.first() else {
            self.first = 0;
            return;
        };
        if self.keys.len() <= PLAIN_SCAN {
            let (mut best, mut best_key) = (0, k0);
            for (j, &k) in self.keys.iter().enumerate().skip(1) {
                if k < best_key {
                    (best, best_key) = (j, k);
                }
            }
            self.first = best;
            // No key is below it: every replacement scans.
            self.second = 0;
            return;
        }
        let (mut best, mut best_key, mut second) = (0, k0, u128::MAX);
        for (j, &k) in self.keys.iter().enumerate().skip(1) {
            if k < best_key {
                second = best_key;
                (best, best_key) = (j, k);
            } else {
                second = second.min(k);
            }
        }
        self.first = best;
        self.second = second;
    }

    /// Replaces the smallest key with `key`, or removes it.
    #[inline]
    fn replace_first(&mut self, key: Option<(i64, usize)>) {
        match key {
            Some(k) => {
                let k = packed(k);
                self.keys[self.first] = k;
                if k < self.second {
                    return;
                }
            }
            None => {
                self.keys.swap_remove(self.first);
            }
        }
        self.scan();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Packed keys order as the tuples they pack.
        #[test]
        fn packed_keys_keep_the_order(a in any::<(i64, u32)>(), b in any::<(i64, u32)>()) {
            let (a, b) = ((a.0, a.1 as usize), (b.0, b.1 as usize));
            prop_assert_eq!(packed(a).cmp(&packed(b)), a.cmp(&b));
            prop_assert_eq!(unpacked(packed(a)), a);
        }

        /// The scanned list and the heap give keys in the same order, whatever is replaced
        /// or removed on the way.
        #[test]
        fn few_and_many_agree(
            keys in proptest::collection::vec((0i64..20, 0usize..1000), 1..12),
            steps in proptest::collection::vec(proptest::option::of(0i64..40), 0..40),
        ) {
            let mut keys = keys;
            keys.sort_by_key(|k| k.1);
            keys.dedup_by_key(|k| k.1);
            let few = Queue::Few(Scanned::new(keys.clone()));
            let many = Queue::Many(keys.into_iter().map(Reverse).collect());
            let (mut few, mut many) = (few, many);
            for step in steps {
                let (a, b) = (few.first(), many.first());
                prop_assert_eq!(a, b);
                let Some((_, reader)) = a else { break };
                let key = step.map(|t| (t, reader));
                few.replace_first(key);
                many.replace_first(key);
            }
        }
    }
}
